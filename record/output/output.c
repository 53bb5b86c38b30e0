// SPDX-License-Identifier: MIT
/*
 * output.c - the output file (written as FILE.tmp-PID, 0600, never through a
 * symbolic link; renamed to FILE once its first interval is on disk, an
 * existing FILE then kept as FILE.old, as perf does), the lock that keeps a
 * second recorder off the same FILE, the META record (docs/format.md "META
 * record") and the hint when privileges are missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include "clock.h"
#include "filekind.h"
#include "rec_output.h"
#include "record.h"
#include "strclip.h"

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

int rec_output_commit(const char *path, const char *tmp, int fd, bool sync, char *err, size_t errsz)
{
	struct stat st;
	char *old = NULL;
	int e = 0;

	/*
	 * On disk before it replaces anything: a full disk shows here, not
	 * after (on a local file system write() itself says ENOSPC). Without
	 * @sync the write-back is left to the kernel: a crash in the next
	 * seconds could leave FILE short, but the previous FILE, long on
	 * disk, is FILE.old either way.
	 */
	if (fd >= 0 && sync && fdatasync(fd) && errno != EINVAL) {
		e = -errno;
		snprintf(err, errsz, "writing %s: %s", tmp, strerror(-e));
		return e;
	}
	if (!lstat(path, &st)) {
		if (asprintf(&old, "%s.old", path) < 0)
			return -ENOMEM;
		if (rename(path, old)) {
			e = -errno;
			snprintf(err, errsz, "cannot rename %s to %s: %s", path, old, strerror(-e));
		}
		free(old);
	}
	if (!e && rename(tmp, path)) {
		e = -errno;
		snprintf(err, errsz, "cannot rename %s to %s: %s", tmp, path, strerror(-e));
	}
	return e;
}

/* FILE will become FILE.old: what is there now must be a file a rename may replace. */
static int check_old(const char *path, char *err, size_t errsz)
{
	struct stat st;
	const char *kind;
	char *old = NULL;
	int e = 0;

	if (lstat(path, &st))
		return 0; /* no FILE: nothing is renamed */
	if (asprintf(&old, "%s.old", path) < 0)
		return -ENOMEM;
	if (!lstat(old, &st) && (kind = sac_file_kind(st.st_mode)) && !S_ISLNK(st.st_mode)) {
		e = S_ISDIR(st.st_mode) ? -EISDIR : -EEXIST;
		snprintf(err, errsz,
			 "cannot keep %s as %s: %s is %s (move it away or choose another -o)", path,
			 old, old, kind);
	}
	free(old);
	return e;
}

/*
 * The pid holding a flock on @fd's file, from /proc/locks ("1: FLOCK
 * ADVISORY WRITE PID MAJ:MIN:INODE 0 EOF"), or 0. Nothing is written in
 * the lock file: on a full disk its one page could be the last one.
 */
static int holder_pid(int fd)
{
	unsigned int maj, min;
	unsigned long ino;
	char line[256];
	struct stat st;
	int pid, found = 0;
	FILE *f;

	if (fstat(fd, &st) || !(f = fopen("/proc/locks", "re")))
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*d: FLOCK %*s %*s %d %x:%x:%lu", &pid, &maj, &min, &ino) == 4 &&
		    ino == st.st_ino && maj == major(st.st_dev) && min == minor(st.st_dev))
			found = pid;
	fclose(f);
	return found;
}

/*
 * One try: 0 with *fd locked, 1 to try again (the name was removed or
 * replaced between open and flock), or a negative errno with @err set.
 */
static int lock_once(const char *lock, int *fd, char *err, size_t errsz)
{
	struct stat st, now;
	const char *kind;
	int e;

	*fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (*fd < 0) {
		e = -errno;
		snprintf(err, errsz, "cannot create %s: %s", lock, strerror(-e));
		return e;
	}
	if (fstat(*fd, &st) || (kind = sac_file_kind(st.st_mode)) || st.st_uid != geteuid()) {
		snprintf(err, errsz, "%s is %s, not a lock of sa-record's: remove it", lock,
			 kind ? kind : "owned by another user");
		return -EPERM;
	}
	if (flock(*fd, LOCK_EX | LOCK_NB)) {
		e = errno == EWOULDBLOCK ? -EBUSY : -errno;
		snprintf(err, errsz, "%.*s is being written by another sa-record (pid %d holds %s)",
			 (int)(strlen(lock) - 5), lock, holder_pid(*fd), lock);
		return e;
	}
	if (lstat(lock, &now) || now.st_ino != st.st_ino || now.st_dev != st.st_dev)
		return 1;
	return 0;
}

int rec_output_lock(const char *path, bool keep_old, char *err, size_t errsz)
{
	char *lock = NULL;
	int fd = -1, e = 1, i;

	if (asprintf(&lock, "%s.lock", path) < 0)
		return -ENOMEM;
	for (i = 0; i < 8 && e > 0; i++) {
		if (fd >= 0)
			close(fd);
		e = lock_once(lock, &fd, err, errsz);
	}
	if (e > 0) {
		snprintf(err, errsz, "cannot lock %s: it keeps being replaced", lock);
		e = -EAGAIN;
	}
	free(lock);
	if (!e && keep_old && (e = check_old(path, err, errsz))) {
		rec_output_unlock(path, fd); /* held: its name goes too */
		return e;
	}
	if (e && fd >= 0)
		close(fd);
	return e ? e : fd;
}

char *rec_output_lock_name(const char *path)
{
	char *lock = NULL;

	return asprintf(&lock, "%s.lock", path) < 0 ? NULL : lock;
}

void rec_output_unlink_lock(const char *lock, int fd)
{
	struct stat a, b;

	/* removed while still held, and only if the name is still this lock */
	if (lock && fd >= 0 && !fstat(fd, &a) && !lstat(lock, &b) && a.st_ino == b.st_ino &&
	    a.st_dev == b.st_dev)
		unlink(lock);
}

void rec_output_unlock(const char *path, int fd)
{
	char *lock;

	if (fd < 0)
		return;
	lock = rec_output_lock_name(path);
	rec_output_unlink_lock(lock, fd);
	free(lock);
	close(fd);
}

uint64_t rec_output_realtime_ns(void)
{
	const char *off = getenv("SA_RECORD_TEST_CLOCK_OFFSET");
	uint64_t now = sac_now_ns(CLOCK_REALTIME);

	/* tests only (docs/sa-record.1, ENVIRONMENT): the recorder's own clock, seconds */
	return off && *off ? now + (uint64_t)(int64_t)(strtod(off, NULL) * 1e9) : now;
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
		   uint64_t mono_ns, int ncpus, uint64_t *clipped)
{
	struct saf_meta m = {0};
	char host[256] = "", boot[64] = "";
	rec_clipbuf cmd, target;
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
	/* `-- CMD` and --cgroup PATH put what a user wrote here: no limit */
	m.cmdline = rec_strclip(o->cmdline, o->cmdline ? strlen(o->cmdline) : 0, cmd, clipped);
	m.target = rec_strclip(o->target_desc, o->target_desc ? strlen(o->target_desc) : 0, target,
			       clipped);
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
