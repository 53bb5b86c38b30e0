// SPDX-License-Identifier: MIT
/*
 * output.c - the output file (an existing FILE is kept as FILE.old, as perf
 * does; the new one is created 0600, never through a symbolic link) and
 * the META record (docs/format.md "META record").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include "record.h"

/** rec_now_ns() - the time of @clock in nanoseconds. */
uint64_t rec_now_ns(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/**
 * rec_output_open() - rename an existing @path to @path.old, then create
 * @path with O_EXCL | O_NOFOLLOW, mode 0600.
 * @return a writable fd the caller closes, or a negative errno.
 */
int rec_output_open(const char *path)
{
	struct stat st;
	char *old = NULL;
	int fd;

	if (!lstat(path, &st)) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		if (asprintf(&old, "%s.old", path) < 0)
			return -ENOMEM;
		if (rename(path, old)) {
			fd = -errno;
			free(old);
			return fd;
		}
		free(old);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

/**
 * rec_write_meta() - write the META record: host, kernel, boot id, the
 * options of @o, and the start times (@mono_ns is CLOCK_MONOTONIC, the
 * clock of bpf_ktime_get_ns() and of every time in the file).
 * @return 0 or a negative errno from the writer.
 */
int rec_write_meta(struct saf_writer *w, const struct rec_opts *o, uint64_t real_ns,
		   uint64_t mono_ns, int ncpus)
{
	struct saf_meta m = {0};
	char host[256] = "", boot[64] = "";
	struct utsname u;
	FILE *f;

	uname(&u);
	gethostname(host, sizeof(host) - 1);
	f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (f) {
		if (!fgets(boot, sizeof(boot), f))
			boot[0] = 0;
		boot[strcspn(boot, "\n")] = 0;
		fclose(f);
	}
	m.writer = saf_str__from("sa-record " SA_VERSION);
	m.hostname = saf_str__from(host);
	m.kernel_release = saf_str__from(u.release);
	m.boot_id = saf_str__from(boot);
	m.arch = saf_str__from(u.machine);
	m.cmdline = saf_str__from(o->cmdline);
	m.target = saf_str__from(o->target_desc);
	m.event = saf_str__from(o->cycles ? "cycles" : "cpu-clock");
	m.freq_hz = o->freq;
	m.ncpus = ncpus;
	m.start_realtime_ns = real_ns;
	m.start_mono_ns = mono_ns;
	m.flags = (o->user_only ? SAF_META_USER_ONLY : 0) |
		  (o->kernel_only ? SAF_META_KERNEL_ONLY : 0) | (o->idle ? SAF_META_IDLE : 0);
	m.page_size = sysconf(_SC_PAGESIZE);
	return saf_writer__meta(w, &m);
}
