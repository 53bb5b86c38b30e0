// SPDX-License-Identifier: MIT
/*
 * test_in_perfscript.c - report/input/in_perfscript.c: frames root first with
 * their kinds (kernel, JIT, unknown, perf's inline chains), one count per
 * sample, a second event skipped and counted, lines of no known form
 * counted, the binary of each frame in the module table.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sa_cmocka.h"

#include "input.h"
#include "output.h"

static struct rpt_profile *read_str(const char *text, struct rpt_perfscript_stats *st)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct rpt_profile *p = rpt_profile__new();
	char err[128];

	assert_non_null(f);
	assert_int_equal(rpt_perfscript__read(p, f, NULL, st, err, sizeof(err)), 0);
	fclose(f);
	rpt_profile__sort(p);
	return p;
}

static const char text[] = "app 7/8 1.000001:     250000 cpu-clock: \n"
			   "\tffffffff81000e06 irq_exit+0x16 ([kernel.kallsyms])\n"
			   "\t    7f0000001800 inl_b (/usr/bin/app)\n"
			   "\t    7f0000001800 inl_a (/usr/bin/app)\n"
			   "\t    7f0000001900 jitted (/tmp/perf-7.map)\n"
			   "\t    7f0000001a00 [unknown] ([unknown])\n"
			   "\t    7f0000001b00 main+0x3 (/usr/bin/app)\n"
			   "\n"
			   "app 7/8 1.000002:     250000 cpu-clock: \n"
			   "\t    7f0000001b00 main+0x3 (/usr/bin/app)\n"
			   "\n"
			   "app 7/8 1.000003:     250000 cpu-clock: \n"
			   "\t    7f0000001b00 main+0x7 (/usr/bin/app)\n"
			   "\n"
			   "app 7/8 1.000004:     1 page-faults: \n"
			   "\t    7f0000001b00 main+0x7 (/usr/bin/app)\n"
			   "\n"
			   "garbage line\n";

static void test_frames_and_kinds(void **state)
{
	static const char *const names[] = {"app",   "main",  "[unknown]", "jitted",
					    "inl_a", "inl_b", "irq_exit"};
	static const uint32_t kinds[] = {RPT_FRAME_ROOT,  RPT_FRAME_USER, RPT_FRAME_UNKNOWN,
					 RPT_FRAME_JIT,	  RPT_FRAME_USER, RPT_FRAME_INLINE,
					 RPT_FRAME_KERNEL};
	struct rpt_perfscript_stats st;
	struct rpt_profile *p = read_str(text, &st);
	const struct rpt_stack *s;
	const struct rpt_frame *f;

	(void)state;
	assert_int_equal(p->nstacks, 2);
	assert_int_equal(p->total, 3);
	s = &p->stacks[0];
	assert_int_equal(s->count, 2); /* "app;main": offsets differ, the name not */
	s = &p->stacks[1];
	f = rpt_profile__stack_frames(p, s);
	assert_int_equal(s->nframes, 7);
	for (uint32_t i = 0; i < s->nframes; i++) {
		assert_string_equal(rpt_profile__name(p, f[i].name), names[i]);
		assert_int_equal(f[i].kind, kinds[i]);
	}
	assert_string_equal(rpt_profile__name(p, f[1].module), "/usr/bin/app");
	assert_int_equal(f[6].module, 0);
	assert_int_equal(st.samples, 3);
	assert_int_equal(st.other_event, 1);
	assert_string_equal(st.event, "cpu-clock");
	assert_int_equal(st.bad_lines, 1);
	assert_int_equal(st.first_bad, 18);
	rpt_profile__free(p);
}

static void test_pid_tid_roots(void **state)
{
	const char *t = "Web Content 12/13 1.0: cpu-clock: \n\tf00 f (/b)\n\n"
			"swapper 0 1.0: cpu-clock: \n\tf00 g (/b)\n";
	struct rpt_perfscript_opts o = {.show_tid = true};
	struct rpt_perfscript_stats st;
	FILE *f = fmemopen((void *)t, strlen(t), "r");
	struct rpt_profile *p = rpt_profile__new();
	char err[64];

	(void)state;
	assert_int_equal(rpt_perfscript__read(p, f, &o, &st, err, sizeof(err)), 0);
	fclose(f);
	rpt_profile__sort(p);
	assert_int_equal(p->nstacks, 2);
	assert_string_equal(rpt_profile__name(p, rpt_profile__stack_frames(p, &p->stacks[0])->name),
			    "Web_Content-12/13");
	assert_string_equal(rpt_profile__name(p, rpt_profile__stack_frames(p, &p->stacks[1])->name),
			    "swapper-0/0");
	rpt_profile__free(p);
}

SA_TEST_MAIN(test_frames_and_kinds, test_pid_tid_roots)
