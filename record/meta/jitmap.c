// SPDX-License-Identifier: MIT
/*
 * jitmap.c - incremental copies of /tmp/perf-PID.map. Each tracked pid keeps
 * the fd of its map file once it exists and the offset read so far; only
 * complete lines are consumed, so a line being written is read next time.
 * The file is the target user's: it is opened through rec_safe_open() and
 * read within a budget of bytes and time per drain (docs/security.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "clock.h"
#include "grow.h"
#include "jitbudget.h"
#include "jitmap.h"
#include "lowerbound.h"
#include "safeopen.h"

/* A perf map is a few MiB after hours of node; past this it is not read. */
#define JIT_MAX_FILE (256ull << 20)
/*
 * What maps may cost over the run, rotations included (each new file reads
 * every map again from its start, and a rewritten map is read again): token
 * buckets that refill in JIT_REFILL_S, per process, per file (device and
 * inode: hard links and bind mounts share it) and per owner uid. A 5 MiB
 * map fits about 50 readings at once, then 50 an hour; a user who links
 * one 200 MiB file into many short-lived processes' maps gets 256 MiB an
 * hour for it, and 512 MiB an hour over all of that user's maps.
 */
#define JIT_PROC_BURST (256ull << 20)
#define JIT_FILE_BURST (256ull << 20)
#define JIT_USER_BURST (512ull << 20)
#define JIT_REFILL_S   3600
#define JIT_BUD_KEYS   4096
/* Bytes before the offset read that must still be there: else the map was rewritten. */
#define JIT_TAIL 32
/* What one drain may spend on all map files together. */
#define JIT_POLL_BYTES (8u << 20)
#define JIT_POLL_NS    (50 * 1000000ull)

struct jproc {
	uint32_t pid;
	int fd;	      /* -1 until the map file exists */
	uint64_t off; /* bytes consumed */
	int gone;     /* the process had exited when the file was looked for */
	int refused;  /* the file was refused (and said so): never read */
	int nuids;    /* uids[]: real and effective uid; -1 unknown */
	uid_t uids[2];
	uint64_t dev, ino; /* the open file's */
	uint32_t owner;	   /* its owner uid */
	uint64_t size;	   /* its size at the last look */
	int64_t mtime_ns;  /* its mtime at the last look */
	uint8_t ntail;	   /* tail[]: the last bytes read, ending at off */
	char tail[JIT_TAIL];
	unsigned int starved; /* 1 << enum bud: budgets that stopped its reading */
};

enum bud { BUD_PROC, BUD_FILE, BUD_USER, BUD__N };

struct rec_jitmap {
	char proc[256];
	struct jproc *ps; /* sorted by pid */
	size_t n, cap;
	struct rec_jitbud bud[BUD__N];
	struct rec_jitmap_stats st;
	uint64_t poll_end_ns; /* the current drain's deadline */
	uint32_t poll_bytes;  /* bytes left in the current drain's budget */
	bool first_read;      /* no read yet in this drain (or exit) */
	char buf[65536];
};

/* SA_RECORD_TEST_JIT_BUDGETS=PROC,FILE,USER: smaller bursts, for tests. */
static void budgets_init(struct rec_jitmap *jm)
{
	uint64_t burst[BUD__N] = {JIT_PROC_BURST, JIT_FILE_BURST, JIT_USER_BURST};
	const char *env = getenv("SA_RECORD_TEST_JIT_BUDGETS");
	unsigned long long v[BUD__N];
	int i;

	if (env && sscanf(env, "%llu,%llu,%llu", &v[0], &v[1], &v[2]) == BUD__N)
		for (i = 0; i < BUD__N; i++)
			burst[i] = v[i];
	for (i = 0; i < BUD__N; i++)
		rec_jitbud__init(&jm->bud[i], burst[i], JIT_REFILL_S, JIT_BUD_KEYS);
}

struct rec_jitmap *rec_jitmap__new(const char *proc)
{
	struct rec_jitmap *jm = calloc(1, sizeof(*jm));

	if (!jm)
		return NULL;
	snprintf(jm->proc, sizeof(jm->proc), "%s", proc ? proc : "/proc");
	budgets_init(jm);
	return jm;
}

struct pid_key {
	const struct rec_jitmap *jm;
	uint32_t pid;
};

static bool pid_below(const void *ctx, size_t i)
{
	const struct pid_key *k = ctx;

	return k->jm->ps[i].pid < k->pid;
}

static size_t lower_bound(const struct rec_jitmap *jm, uint32_t pid)
{
	return sac_lower_bound(jm->n, pid_below, &(struct pid_key){jm, pid});
}

int rec_jitmap__note(struct rec_jitmap *jm, uint32_t pid)
{
	size_t i = lower_bound(jm, pid);

	if (i < jm->n && jm->ps[i].pid == pid)
		return 0;
	if (SAC_GROW(jm->ps, jm->cap, jm->n + 1, 64))
		return -ENOMEM;
	memmove(&jm->ps[i + 1], &jm->ps[i], (jm->n - i) * sizeof(*jm->ps));
	jm->ps[i] = (struct jproc){.pid = pid, .fd = -1, .nuids = -1};
	jm->n++;
	return 0;
}

/* The pid in the process's own namespace (the last field of NSpid), and the
 * real and effective uid the map file may be owned by. */
static uint32_t read_status(const struct rec_jitmap *jm, struct jproc *jp)
{
	char path[300], line[256], *p;
	uint32_t ns = jp->pid;
	unsigned int r, e;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/status", jm->proc, jp->pid);
	f = fopen(path, "re");
	if (!f)
		return jp->pid;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Uid:", 4) && sscanf(line + 4, "%u %u", &r, &e) == 2) {
			jp->uids[0] = r;
			jp->uids[1] = e;
			jp->nuids = 2;
		}
		if (strncmp(line, "NSpid:", 6))
			continue;
		p = strrchr(line, '\t');
		if (p)
			ns = (uint32_t)strtoul(p + 1, NULL, 10);
		break;
	}
	fclose(f);
	return ns ? ns : jp->pid;
}

/* A refusal is said once per file, on stderr, from here rather than from
 * main(): it names the pid and the reason, which only this module knows, and
 * the operator must learn why a process's JIT frames have no names. */
static void refuse(struct jproc *jp, const char *path, int err, const char *why)
{
	jp->refused = 1;
	fprintf(stderr, "sa-record: not reading %s of pid %u: %s\n", path, jp->pid,
		why[0] ? why : strerror(-err));
}

static bool missing(int err)
{
	/* -EAGAIN: a local disk slower than the open's deadline; tried again */
	return err == -ENOENT || err == -ENOTDIR || err == -ESRCH || err == -EACCES ||
	       err == -EAGAIN;
}

/*
 * A perf map is one process's: the same inode already read for another
 * tracked pid (a hard link, or a bind mount) is refused, or 20 processes
 * linking one 200 MiB file made the recording grow 3.7 MB/s.
 */
static bool shared(const struct rec_jitmap *jm, struct jproc *jp, int fd, char *why, size_t sz)
{
	struct stat st;
	size_t i;

	if (rec_safe_fstat(fd, &st))
		return false;
	jp->dev = st.st_dev;
	jp->ino = st.st_ino;
	for (i = 0; i < jm->n; i++) {
		const struct jproc *o = &jm->ps[i];

		if (o != jp && o->fd >= 0 && o->dev == jp->dev && o->ino == jp->ino) {
			snprintf(why, sz, "the same file as pid %u's perf map (a hard link)",
				 o->pid);
			return true;
		}
	}
	return false;
}

static void try_open(const struct rec_jitmap *jm, struct jproc *jp)
{
	struct rec_safeopen_opts o = {.sz = sizeof(o), .max_size = JIT_MAX_FILE};
	char path[400], buf[64], *name = buf + 1, why[160];
	int root, fd;

	snprintf(buf, sizeof(buf), "/tmp/perf-%u.map", read_status(jm, jp));
	o.nowners = jp->nuids;
	memcpy(o.owners, jp->uids, sizeof(o.owners));
	snprintf(path, sizeof(path), "%s/%u/root", jm->proc, jp->pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root >= 0) {
		o.dirfd = root;
		o.in_root = true;
		fd = rec_safe_open(name, &o, why, sizeof(why));
		close(root);
		if (fd >= 0 || !missing(fd))
			goto out;
		snprintf(path, sizeof(path), "%s/%u", jm->proc, jp->pid);
		if (!access(path, F_OK))
			return;
	}
	/* Gone before its map was opened: the file outlives the process, and
	 * in our own mount namespace it is found under the same pid. */
	jp->gone = 1;
	snprintf(buf, sizeof(buf), "/tmp/perf-%u.map", jp->pid);
	name = buf;
	o = (struct rec_safeopen_opts){.sz = sizeof(o), .max_size = JIT_MAX_FILE};
	o.nowners = jp->nuids;
	memcpy(o.owners, jp->uids, sizeof(o.owners));
	fd = rec_safe_open(name, &o, why, sizeof(why));
out:
	if (fd >= 0 && shared(jm, jp, fd, why, sizeof(why))) {
		close(fd);
		fd = -EPERM;
	}
	if (fd >= 0)
		jp->fd = fd;
	else if (!missing(fd))
		refuse(jp, buf, fd, why);
}

/* "START SIZE NAME\n", START and SIZE in hex, optionally with 0x. */
static int emit_line(uint32_t pid, char *line, const struct rec_sink *sink)
{
	struct saf_record rec = {.kind = SAF_REC_JITSYM};
	char *end, *name;
	uint64_t start, size;

	start = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return 0;
	size = strtoull(end + 1, &name, 16);
	if (name == end + 1 || *name != ' ' || !name[1])
		return 0;
	name++;
	rec.jitsym = (struct saf_jitsym){
		.pid = pid, .start = start, .size = size, .name = rec_str(name)};
	if (rec.jitsym.name.len > SAF_MAX_STRING)
		rec.jitsym.name.len = SAF_MAX_STRING;
	return rec_sink__emit(sink, &rec) ?: 1;
}

/* Each drain (@force), and an exit seen JIT_POLL_NS after the last budget
 * ran out, gets JIT_POLL_BYTES and JIT_POLL_NS for all map files together,
 * however many there are and however they grow. */
static void refill(struct rec_jitmap *jm, bool force)
{
	uint64_t t = sac_now_ns(CLOCK_MONOTONIC);

	if (!force && t < jm->poll_end_ns + JIT_POLL_NS)
		return;
	jm->poll_end_ns = t + JIT_POLL_NS;
	jm->poll_bytes = JIT_POLL_BYTES;
	jm->first_read = true;
}

/* The first read of a drain or an exit is made past the deadline too: a
 * recorder preempted for 50 ms (a loaded host) still reads 64 KiB. */
static bool budget_left(struct rec_jitmap *jm)
{
	return jm->poll_bytes && (jm->first_read || sac_now_ns(CLOCK_MONOTONIC) < jm->poll_end_ns);
}

/* Remember the last bytes of jm->buf[0, n), read at jp->off, as the tail
 * that ends at the new offset. */
static void keep_tail(struct jproc *jp, const char *p, size_t n)
{
	size_t keep;

	if (n >= JIT_TAIL) {
		memcpy(jp->tail, p + n - JIT_TAIL, JIT_TAIL);
		jp->ntail = JIT_TAIL;
		return;
	}
	keep = jp->ntail + n > JIT_TAIL ? JIT_TAIL - n : jp->ntail;
	memmove(jp->tail, jp->tail + jp->ntail - keep, keep);
	memcpy(jp->tail + keep, p, n);
	jp->ntail = (uint8_t)(keep + n);
}

/* Emit the complete lines of jm->buf[0, n), read at jp->off; *more is
 * cleared when the rest is an incomplete line to read next time. */
static int read_lines(struct rec_jitmap *jm, struct jproc *jp, size_t n,
		      const struct rec_sink *sink, bool *more)
{
	char *line = jm->buf, *nl;
	int total = 0, ret = 0;
	size_t done;

	jm->buf[n] = '\0';
	while ((nl = memchr(line, '\n', jm->buf + n - line))) {
		*nl = '\0';
		ret = emit_line(jp->pid, line, sink);
		*nl = '\n';
		if (ret < 0)
			break;
		total += ret;
		line = nl + 1;
	}
	done = (size_t)(line - jm->buf);
	if (!done && ret >= 0 && n >= sizeof(jm->buf) - 1)
		done = n; /* an absurd line: skip it */
	else if (!done)
		*more = false; /* an incomplete last line: next time */
	keep_tail(jp, jm->buf, done);
	jp->off += done;
	jm->st.bytes += done;
	return ret < 0 ? ret : total;
}

/* Bytes @jp may read now: the least of its process's, file's and owner's
 * budgets. A budget that stops it is counted once until it reads again. */
static uint64_t room(struct rec_jitmap *jm, struct jproc *jp, uint64_t now)
{
	const uint64_t k[BUD__N][2] = {{jp->pid, 0}, {jp->dev, jp->ino}, {jp->owner, 0}};
	uint64_t *over[BUD__N] = {&jm->st.over_proc, &jm->st.over_file, &jm->st.over_user};
	static const char *const what[BUD__N] = {"process", "file", "user"};
	uint64_t r = jm->poll_bytes, a;
	int i;

	for (i = 0; i < BUD__N; i++) {
		a = rec_jitbud__avail(&jm->bud[i], k[i][0], k[i][1], now);
		/* a spent budget waits for a read's worth: one stop, not one per refill */
		if (a < sizeof(jm->buf) && (jp->starved & 1u << i))
			a = 0;
		if (!a && !(jp->starved & 1u << i)) {
			if (!*over[i]) /* said once a run per budget; counted always */
				fprintf(stderr,
					"sa-record: pid %u's perf map: its %s's budget of %.1f MiB "
					"is spent; read again as it refills (in %d s); further "
					"stops counted in the summary\n",
					jp->pid, what[i], jm->bud[i].burst / 1048576.0,
					JIT_REFILL_S);
			jp->starved |= 1u << i;
			(*over[i])++;
		}
		if (a < r)
			r = a;
	}
	if (r)
		jp->starved = 0;
	return r;
}

static int spend(struct rec_jitmap *jm, const struct jproc *jp, uint64_t n, uint64_t now)
{
	const uint64_t k[BUD__N][2] = {{jp->pid, 0}, {jp->dev, jp->ino}, {jp->owner, 0}};
	int i, ret = 0;

	for (i = 0; i < BUD__N; i++)
		ret = rec_jitbud__spend(&jm->bud[i], k[i][0], k[i][1], n, now) ?: ret;
	return ret;
}

/* Read complete lines from jp->off on, within the budgets; a longer line
 * than buf is skipped. */
static int read_new(struct rec_jitmap *jm, struct jproc *jp, const struct rec_sink *sink)
{
	bool more = true;
	int total = 0, ret;
	uint64_t now, want;
	ssize_t n;

	while (more && budget_left(jm) && jp->off < jp->size) {
		if (jp->off >= JIT_MAX_FILE) {
			if (!jp->refused)
				refuse(jp, "its perf map", 0, "grew past the cap of 256 MiB");
			break;
		}
		now = sac_now_ns(CLOCK_MONOTONIC);
		want = room(jm, jp, now);
		if (!want)
			break;
		if (want > sizeof(jm->buf) - 1)
			want = sizeof(jm->buf) - 1;
		n = pread(jp->fd, jm->buf, want, (off_t)jp->off);
		jm->first_read = false;
		if (n <= 0)
			break;
		jm->poll_bytes -= (uint32_t)n;
		if (spend(jm, jp, (uint64_t)n, now))
			return -ENOMEM;
		ret = read_lines(jm, jp, (size_t)n, sink, &more);
		if (ret < 0)
			return ret;
		total += ret;
	}
	return total;
}

/* The map file was unlinked (replaced by a rename, or deleted): open what
 * its path names now, or keep the old file if nothing is there. */
static void reopen(struct rec_jitmap *jm, struct jproc *jp)
{
	int old = jp->fd;
	uint64_t dev = jp->dev, ino = jp->ino;

	jp->fd = -1;
	try_open(jm, jp);
	if (jp->fd >= 0 || jp->refused) {
		close(old);
		if (jp->fd >= 0)
			jm->st.replaced++;
		jp->off = 0;
		jp->ntail = 0;
		return;
	}
	jp->fd = old;
	jp->dev = dev;
	jp->ino = ino;
}

/* The file holds what was read up to jp->off: the same tail ends there. */
static bool tail_same(const struct jproc *jp)
{
	char b[JIT_TAIL];

	if (!jp->ntail || jp->off < jp->ntail)
		return jp->off == 0;
	return pread(jp->fd, b, jp->ntail, (off_t)(jp->off - jp->ntail)) == jp->ntail &&
	       !memcmp(b, jp->tail, jp->ntail);
}

/*
 * Look at the map file before reading it: one replaced by another file
 * (rename) is reopened, one truncated or rewritten in place (fopen "w",
 * the JVM's Compiler.perfmap) is read again from its start. Lines read
 * before stay in the recording: samples taken then keep their names.
 */
static void look(struct rec_jitmap *jm, struct jproc *jp)
{
	struct stat st;
	bool changed;
	int64_t mt;

	if (fstat(jp->fd, &st))
		return;
	if (!st.st_nlink && !jp->gone) {
		reopen(jm, jp);
		if (jp->fd < 0 || fstat(jp->fd, &st))
			return;
	}
	mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	changed = (uint64_t)st.st_size != jp->size || mt != jp->mtime_ns;
	if (jp->off && ((uint64_t)st.st_size < jp->off || (changed && !tail_same(jp)))) {
		jm->st.rewritten++;
		jp->off = 0;
		jp->ntail = 0;
	}
	jp->size = (uint64_t)st.st_size;
	jp->mtime_ns = mt;
	jp->owner = st.st_uid;
}

int rec_jitmap__poll(struct rec_jitmap *jm, const struct rec_sink *sink)
{
	int total = 0, ret;
	size_t i;

	refill(jm, true);
	for (i = 0; i < jm->n; i++) {
		struct jproc *jp = &jm->ps[i];

		if (jp->fd < 0 && !jp->refused)
			try_open(jm, jp);
		if (jp->fd >= 0)
			look(jm, jp);
		if (jp->fd < 0 && jp->gone) {
			memmove(jp, jp + 1, (jm->n - i - 1) * sizeof(*jp));
			jm->n--;
			i--;
			continue;
		}
		if (jp->fd < 0)
			continue;
		ret = read_new(jm, jp, sink);
		if (ret < 0)
			return ret;
		total += ret;
	}
	return total;
}

int rec_jitmap__exit(struct rec_jitmap *jm, uint32_t pid, const struct rec_sink *sink)
{
	size_t i = lower_bound(jm, pid);
	struct jproc *jp;
	int ret = 0;

	if (i >= jm->n || jm->ps[i].pid != pid)
		return 0;
	jp = &jm->ps[i];
	refill(jm, false);
	jm->first_read = true;
	if (jp->fd < 0 && !jp->refused)
		try_open(jm, jp); /* the process is gone: works only if it was read before */
	if (jp->fd >= 0) {
		jp->gone = 1; /* its path may name another process's file now */
		look(jm, jp);
		ret = read_new(jm, jp, sink);
		close(jp->fd);
	}
	memmove(&jm->ps[i], &jm->ps[i + 1], (jm->n - i - 1) * sizeof(*jm->ps));
	jm->n--;
	return ret;
}

void rec_jitmap__new_file(struct rec_jitmap *jm)
{
	size_t i;

	for (i = 0; i < jm->n; i++) {
		jm->ps[i].off = 0;
		jm->ps[i].ntail = 0;
	}
}

void rec_jitmap__stats(const struct rec_jitmap *jm, struct rec_jitmap_stats *st)
{
	*st = jm->st;
}

void rec_jitmap__free(struct rec_jitmap *jm)
{
	size_t i;

	if (!jm)
		return;
	for (i = 0; i < jm->n; i++)
		if (jm->ps[i].fd >= 0)
			close(jm->ps[i].fd);
	for (i = 0; i < BUD__N; i++)
		rec_jitbud__fini(&jm->bud[i]);
	free(jm->ps);
	free(jm);
}
