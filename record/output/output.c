// SPDX-License-Identifier: MIT
/*
 * output.c - the output file (written as FILE.tmp-PID, 0600, never through a
 * symbolic link; renamed to FILE once the recording really started, an
 * existing FILE then kept as FILE.old, as perf does), the META record
 * (docs/format.md "META record") and the hint when privileges are missing.
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
#include "rec_output.h"
#include "record.h"

int rec_output_open(const char *path, char **tmp)
{
	struct stat st;
	int fd;

	*tmp = NULL;
	if (!lstat(path, &st) && S_ISDIR(st.st_mode))
		return -EISDIR;
	if (asprintf(tmp, "%s.tmp-%d", path, (int)getpid()) < 0) {
		*tmp = NULL;
		return -ENOMEM;
	}
	fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	fd = -errno;
	free(*tmp);
	*tmp = NULL;
	return fd;
}

int rec_output_commit(const char *path, const char *tmp)
{
	struct stat st;
	char *old = NULL;
	int err = 0;

	if (!lstat(path, &st)) {
		if (asprintf(&old, "%s.old", path) < 0)
			return -ENOMEM;
		if (rename(path, old))
			err = -errno;
		free(old);
	}
	if (!err && rename(tmp, path))
		err = -errno;
	return err;
}

static int read_sysctl(const char *path)
{
	FILE *f = fopen(path, "re");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

void rec_privilege_hint(void)
{
	int paranoid = read_sysctl("/proc/sys/kernel/perf_event_paranoid");
	int nobpf = read_sysctl("/proc/sys/kernel/unprivileged_bpf_disabled");

	fprintf(stderr,
		"sa-record: needs root, or CAP_BPF and CAP_PERFMON (CAP_SYS_PTRACE too for other "
		"users' mappings, CAP_SYSLOG for kernel symbols)\n"
		"sa-record: this host: kernel.perf_event_paranoid = %d, "
		"kernel.unprivileged_bpf_disabled = %d\n",
		paranoid, nobpf);
}

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
		  (o->kernel_only ? SAF_META_KERNEL_ONLY : 0) | (o->idle ? SAF_META_IDLE : 0) |
		  (o->off_cpu ? SAF_META_OFF_CPU : 0) |
		  (o->off_cpu || o->call_graph == SA_CG_AUTO ? SAF_META_UW_KERNEL : 0);
	m.off_cpu_min_ns = o->off_cpu_min_ns;
	m.page_size = sysconf(_SC_PAGESIZE);
	return saf_writer__meta(w, &m);
}
