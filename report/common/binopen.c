// SPDX-License-Identifier: MIT
/*
 * binopen.c - the one way report/ opens a file a recording names: O_PATH,
 * fstat, regular and bounded, then the same inode reopened for reading.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "binopen.h"
#include "filekind.h"
#include "hash.h"

#define WARNED_MAX 64

static pthread_mutex_t warned_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t warned[WARNED_MAX];
static size_t nwarned;

/* Once per path (a binary is tried by build id, then symbols, then DWARF). */
static void warn_once(const char *path, const char *why)
{
	uint64_t h = sac_hash_fnv1a(SAC_FNV1A_BASIS, path, strlen(path));
	bool seen = false;
	size_t i;

	pthread_mutex_lock(&warned_lock);
	for (i = 0; i < nwarned && !seen; i++)
		seen = warned[i] == h;
	if (!seen && nwarned < WARNED_MAX)
		warned[nwarned++] = h;
	pthread_mutex_unlock(&warned_lock);
	if (!seen)
		fprintf(stderr, "sa-report: skipping %s: %s\n", path, why);
}

int rpt_bin_open(const char *path)
{
	struct stat st, st2;
	char self[64], why[96];
	int pfd, fd, err;

	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	err = fstat(pfd, &st) ? -errno : 0;
	if (!err && S_ISDIR(st.st_mode)) {
		err = -EISDIR; /* a directory: just not there, as before */
	} else if (!err && !S_ISREG(st.st_mode)) {
		const char *k = sac_file_kind(st.st_mode);

		snprintf(why, sizeof(why), "%s%snot a regular file", k ? k : "", k ? ", " : "");
		warn_once(path, why);
		err = -EPERM;
	} else if (!err && (uint64_t)st.st_size > RPT_BIN_MAX_SIZE) {
		snprintf(why, sizeof(why), "%lld bytes, over the cap of %llu",
			 (long long)st.st_size, (unsigned long long)RPT_BIN_MAX_SIZE);
		warn_once(path, why);
		err = -EFBIG;
	}
	if (err)
		goto cleanup;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
	} else if (fstat(fd, &st2) || st2.st_ino != st.st_ino || st2.st_dev != st.st_dev) {
		close(fd);
		err = -ESTALE;
	} else {
		err = fd;
	}
cleanup:
	close(pfd);
	return err;
}
