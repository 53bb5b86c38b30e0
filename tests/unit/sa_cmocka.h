/* SPDX-License-Identifier: MIT */
/*
 * sa_cmocka.h - the main() every cmocka test file here had: SA_TEST_MAIN()
 * runs the named tests as one group without setup or teardown. A file with
 * a group setup, or per-test ones, writes its own main(). SA_SKIP() is the
 * one way a test here skips (it fails under CI=true). Include it after
 * <cmocka.h>.
 */
#ifndef SA_CMOCKA_H
#define SA_CMOCKA_H

#include <stdlib.h>
#include <string.h>

/**
 * SA_SKIP() - end the running test as skipped: it cannot run here, for the
 * reason @why (a string). With CI=true in the environment it fails instead,
 * as the .t scripts' skips do (tests/cli/lib.sh): make check installs every
 * package and runs as root, so a skip there is a missing install step or a
 * broken probe (tests/README.md).
 */
#define SA_SKIP(why)                                                                               \
	do {                                                                                       \
		const char *ci_ = getenv("CI");                                                    \
                                                                                                   \
		if (ci_ && !strcmp(ci_, "true"))                                                   \
			fail_msg("cannot run: %s (CI=true: a skip is a failure)", (why));          \
		skip();                                                                            \
	} while (0)

/* cmocka_unit_test() of each argument, up to 20. */
#define SA_T1_(t)      cmocka_unit_test(t)
#define SA_T1(t)       SA_T1_(t)
#define SA_T2(t, ...)  SA_T1_(t), SA_T1(__VA_ARGS__)
#define SA_T3(t, ...)  SA_T1_(t), SA_T2(__VA_ARGS__)
#define SA_T4(t, ...)  SA_T1_(t), SA_T3(__VA_ARGS__)
#define SA_T5(t, ...)  SA_T1_(t), SA_T4(__VA_ARGS__)
#define SA_T6(t, ...)  SA_T1_(t), SA_T5(__VA_ARGS__)
#define SA_T7(t, ...)  SA_T1_(t), SA_T6(__VA_ARGS__)
#define SA_T8(t, ...)  SA_T1_(t), SA_T7(__VA_ARGS__)
#define SA_T9(t, ...)  SA_T1_(t), SA_T8(__VA_ARGS__)
#define SA_T10(t, ...) SA_T1_(t), SA_T9(__VA_ARGS__)
#define SA_T11(t, ...) SA_T1_(t), SA_T10(__VA_ARGS__)
#define SA_T12(t, ...) SA_T1_(t), SA_T11(__VA_ARGS__)
#define SA_T13(t, ...) SA_T1_(t), SA_T12(__VA_ARGS__)
#define SA_T14(t, ...) SA_T1_(t), SA_T13(__VA_ARGS__)
#define SA_T15(t, ...) SA_T1_(t), SA_T14(__VA_ARGS__)
#define SA_T16(t, ...) SA_T1_(t), SA_T15(__VA_ARGS__)
#define SA_T17(t, ...) SA_T1_(t), SA_T16(__VA_ARGS__)
#define SA_T18(t, ...) SA_T1_(t), SA_T17(__VA_ARGS__)
#define SA_T19(t, ...) SA_T1_(t), SA_T18(__VA_ARGS__)
#define SA_T20(t, ...) SA_T1_(t), SA_T19(__VA_ARGS__)
#define SA_TN_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18,    \
	       _19, _20, n, ...)                                                                   \
	SA_T##n
#define SA_TN(...)                                                                                 \
	SA_TN_(__VA_ARGS__, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)

/**
 * SA_TEST_MAIN() - define main(): run the tests named, each a
 * void (void **state) function, in order; exit with the number that failed.
 */
#define SA_TEST_MAIN(...)                                                                          \
	int main(void)                                                                             \
	{                                                                                          \
		const struct CMUnitTest tests[] = {SA_TN(__VA_ARGS__)(__VA_ARGS__)};               \
		return cmocka_run_group_tests(tests, NULL, NULL);                                  \
	}

#endif /* SA_CMOCKA_H */
