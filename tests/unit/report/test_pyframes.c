// SPDX-License-Identifier: MIT
/*
 * test_pyframes.c - CPython frames in off-CPU stacks (report/session/
 * pyframes.c, docs/python.md): an OFFCPU record whose user stack carries
 * Python frame words gets them named from the PYCODE records, marked
 * RPT_FRAME_PYTHON, in the --off-cpu profile and in --state blocked alone;
 * words only look like Python frames (a frame-pointer walk through garbage
 * reads any 8 bytes) where they are not the stack's last run of such words,
 * or where the recording holds no interpreter read for the process
 * (--no-python): native, dropped as in no mapping. A process whose
 * interpreter was refused has its stacks marked "[python: frames not
 * read]" at their root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "saf.h"
#include "session.h"

#define PID	    42
#define PID_NOPY    43		      /* no interpreter record: --no-python, or not Python */
#define PID_REFUSED 44		      /* its interpreter's layout refused */
#define CODE_SLP    0x7f0000001000ull /* py_sleep */
#define CODE_MAIN   0x7f0000002000ull /* main */
#define CODE_CND    0x7f0000003000ull /* py_cond */
#define CODE_BAD    0x7f0000009000ull /* no PYCODE: [python:unknown] */
#define KADDR	    0xffffffff81001000ull

static void add(struct saf_writer *w, const struct saf_record *r)
{
	assert_int_equal(saf_writer__add(w, r), 0);
}

static void pycode(struct saf_writer *w, uint64_t code, const char *name)
{
	struct saf_record r = {.kind = SAF_REC_PYCODE};

	r.pycode = (struct saf_pycode){PID, code, 1, saf_str__from(name), saf_str__from("t.py")};
	add(w, &r);
}

/* The interpreter record of @pid (code 0): its frames were read, or not. */
static void interp(struct saf_writer *w, uint32_t pid, uint32_t state)
{
	struct saf_record r = {.kind = SAF_REC_PYCODE};

	r.pycode = (struct saf_pycode){pid, 0, state, saf_str__from("3.11.2"),
				       saf_str__from("/usr/bin/python3.11")};
	add(w, &r);
}

static void stack(struct saf_writer *w, uint32_t id, uint32_t kind, const uint64_t *ips, uint32_t n)
{
	struct saf_record r = {.kind = SAF_REC_STACK};

	r.stack = (struct saf_stack){id, kind, n, ips};
	add(w, &r);
}

static void offcpu_of(struct saf_writer *w, uint32_t pid, uint32_t ustack, uint64_t ns,
		      uint32_t flags)
{
	struct saf_record r = {.kind = SAF_REC_OFFCPU};

	r.offcpu =
		(struct saf_offcpu){pid, pid, 0, ustack, 4, 1, ns, saf_str__from("python3"), flags};
	add(w, &r);
}

static void offcpu(struct saf_writer *w, uint32_t ustack, uint64_t ns, uint32_t flags)
{
	offcpu_of(w, PID, ustack, ns, flags);
}

/*
 * Three stays of one thread: blocked at py_sleep (called by main), blocked
 * at a code object never named, preempted at py_cond. The leaf is in no
 * mapping ([unknown]), so the Python frames go at the root side.
 */
static void write_recording(int fd)
{
	struct saf_meta m = {.writer = saf_str__from("test_pyframes"),
			     .freq_hz = 99,
			     .ncpus = 1,
			     .flags = SAF_META_OFF_CPU};
	struct saf_interval iv = {0, 1, 2};
	struct saf_end end = {2, 0, 0, 1, 0};
	struct saf_writer *w = saf_writer__open_fd(fd, NULL);
	const uint64_t slp[] = {0x1234, SAF_PY_TAG | CODE_SLP,
				SAF_PY_TAG | SAF_PY_ENTRY | CODE_MAIN};
	const uint64_t bad[] = {0x1234, SAF_PY_TAG | SAF_PY_ENTRY | CODE_BAD};
	const uint64_t cnd[] = {0x1234, SAF_PY_TAG | CODE_CND,
				SAF_PY_TAG | SAF_PY_ENTRY | CODE_MAIN};
	/* garbage that looks like a Python frame amid native words; a --no-python process's */
	const uint64_t mid[] = {0x1234, SAF_PY_TAG | 0x4141414141ull, 0x2345,
				SAF_PY_TAG | SAF_PY_ENTRY | CODE_MAIN};
	const uint64_t nopy[] = {0x1234, SAF_PY_TAG | CODE_MAIN};
	const uint64_t k[] = {KADDR};
	struct saf_record r = {.kind = SAF_REC_KSYM};

	assert_non_null(w);
	assert_int_equal(saf_writer__meta(w, &m), 0);
	r.ksym = (struct saf_ksym){KADDR, saf_str__from("do_nanosleep"), saf_str__from("")};
	add(w, &r);
	assert_int_equal(saf_writer__interval(w, &iv), 0);
	interp(w, PID, SAF_PY_READ);
	interp(w, PID_REFUSED, SAF_PY_REFUSED);
	pycode(w, CODE_SLP, "py_sleep");
	pycode(w, CODE_MAIN, "main");
	pycode(w, CODE_CND, "py_cond");
	stack(w, 1, SAF_STACK_USER, slp, 3);
	stack(w, 2, SAF_STACK_USER, bad, 2);
	stack(w, 3, SAF_STACK_USER, cnd, 3);
	stack(w, 4, SAF_STACK_KERNEL, k, 1);
	stack(w, 5, SAF_STACK_USER, mid, 4);
	stack(w, 6, SAF_STACK_USER, nopy, 2);
	offcpu(w, 1, 3000000, 0);
	offcpu(w, 2, 1000000, 0);
	offcpu(w, 3, 2000000, SAF_OFFCPU_PREEMPTED);
	offcpu(w, 5, 4000000, 0);
	offcpu_of(w, PID_NOPY, 6, 5000000, 0);
	offcpu_of(w, PID_REFUSED, 6, 6000000, 0);
	assert_int_equal(saf_writer__interval_end(w, NULL), 0);
	assert_int_equal(saf_writer__finish(w, &end), 0);
	saf_writer__free(w);
}

static struct rpt_profile *load(enum rpt_off_state state, struct rpt_session **sp)
{
	struct rpt_session_opts o = {
		.sym = {.no_system_debug = true}, .value = RPT_VALUE_OFF_CPU, .off_state = state};
	struct rpt_profile *prof = rpt_profile__new();
	char path[] = "/tmp/test_pyframes.XXXXXX";
	int fd = mkstemp(path);

	*sp = rpt_session__new(&o);
	assert_non_null(prof);
	assert_non_null(*sp);
	assert_true(fd >= 0);
	write_recording(fd);
	close(fd);
	assert_int_equal(rpt_session__add_file(*sp, path, path, prof), 0);
	unlink(path);
	return prof;
}

/* "name/kind;..." of @st, root first, into @buf. */
static const char *chain(const struct rpt_profile *p, const struct rpt_stack *st, char *buf,
			 size_t sz)
{
	const struct rpt_frame *f = rpt_profile__stack_frames(p, st);
	size_t n = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < st->nframes && n < sz; i++)
		n += snprintf(buf + n, sz - n, "%s%s/%u", i ? ";" : "",
			      rpt_profile__name(p, f[i].name), f[i].kind);
	return buf;
}

/* The microseconds of @prof's stack that reads @want, or 0. */
static uint64_t of(const struct rpt_profile *prof, const char *want)
{
	char buf[512];

	for (size_t k = 0; k < prof->nstacks; k++)
		if (!strcmp(chain(prof, &prof->stacks[k], buf, sizeof(buf)), want))
			return prof->stacks[k].count;
	return 0;
}

#define SLP	"python3/4;main/6;py_sleep/6;[unknown]/5;do_nanosleep/1"
#define BAD	"python3/4;[python:unknown]/6;[unknown]/5;do_nanosleep/1"
#define CND	"python3/4;main/6;py_cond/6;[unknown]/5;do_nanosleep/1"
#define MID	"python3/4;main/6;[unknown]/5;do_nanosleep/1"
#define NOPY	"python3/4;[unknown]/5;do_nanosleep/1"
#define REFUSED "python3/4;[python: frames not read]/5;[unknown]/5;do_nanosleep/1"

static void test_offcpu_all(void **state)
{
	struct rpt_session *s;
	struct rpt_profile *prof = load(RPT_OFF_ALL, &s);

	(void)state;
	assert_int_equal(prof->nstacks, 6);
	assert_int_equal(of(prof, SLP), 3000);
	assert_int_equal(of(prof, BAD), 1000);
	assert_int_equal(of(prof, CND), 2000);
	assert_int_equal(of(prof, MID), 4000);
	assert_int_equal(of(prof, NOPY), 5000);	   /* 43's: no Python frames */
	assert_int_equal(of(prof, REFUSED), 6000); /* 44's: none, and marked */
	rpt_session__free(s);
	rpt_profile__free(prof);
}

static void test_offcpu_blocked(void **state)
{
	struct rpt_session *s;
	struct rpt_profile *prof = load(RPT_OFF_BLOCKED, &s);

	(void)state;
	assert_int_equal(prof->nstacks, 5);
	assert_int_equal(of(prof, SLP), 3000);
	assert_int_equal(of(prof, BAD), 1000);
	assert_int_equal(of(prof, CND), 0);
	rpt_session__free(s);
	rpt_profile__free(prof);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offcpu_all),
		cmocka_unit_test(test_offcpu_blocked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
