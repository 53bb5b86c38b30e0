/* SPDX-License-Identifier: MIT */
/*
 * rpt_test.h - helpers shared by report/'s writer tests: a profile parsed
 * from folded text in a string, and a writer's output captured as a string.
 * Include after <cmocka.h> and "output.h".
 */
#ifndef RPT_TEST_H
#define RPT_TEST_H

#include <stdio.h>
#include <string.h>

/* A profile from folded @text; the test frees it with rpt_profile__free(). */
static inline struct rpt_profile *parse_str(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	char err[128];
	struct rpt_profile *p;

	assert_non_null(f);
	p = rpt_folded__parse(f, err, sizeof(err));
	fclose(f);
	assert_non_null(p);
	return p;
}

/*
 * What @write_fn(@p, f, @o) writes, as a malloc()ed string the test frees.
 * The writer must succeed.
 */
#define RPT_TEST_CAPTURE(write_fn, p, o)                                                         \
	({                                                                                       \
		char *buf_ = NULL;                                                               \
		size_t len_ = 0;                                                                 \
		FILE *f_ = open_memstream(&buf_, &len_);                                         \
		assert_non_null(f_);                                                             \
		assert_int_equal(write_fn(p, f_, o), 0);                                         \
		fclose(f_);                                                                      \
		buf_;                                                                            \
	})

#endif /* RPT_TEST_H */
