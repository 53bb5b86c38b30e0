#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# sa-record -- CMD: CMD forks and execs a child that forks and execs a
# grandchild; each burns CPU under its own name and every one of them has
# samples; sa-record exits with CMD's status; 127 when CMD is not found,
# 126 when it cannot be run.
. "$(dirname "$0")/2000-record-lib.sh"
need_bpf
echo "1..7"

cat >"$T/tree.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
volatile unsigned long sink;
static void burn(double s)
{
	struct timespec a, b;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 100000; i++) sink += i;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < s);
}
/* tree LEVEL: run tree-(LEVEL-1) as a child, burn 0.4 s, wait, exit */
int main(int argc, char **argv)
{
	int level = argc > 1 ? atoi(argv[1]) : 2, st = 0;
	char next[4096], arg[8];
	pid_t p = -1;
	if (level > 0) {
		snprintf(next, sizeof(next), "%s/tree%d", getenv("TREE_DIR"), level - 1);
		snprintf(arg, sizeof(arg), "%d", level - 1);
		p = fork();
		if (p == 0) { execl(next, next, arg, (char *)0); _exit(99); }
	}
	burn(0.4);
	if (p > 0) waitpid(p, &st, 0);
	return level == 2 ? 7 : WEXITSTATUS(st);
}
CEOF
cc -O2 -fno-omit-frame-pointer -o "$T/tree" "$T/tree.c"
for l in 0 1 2; do ln -s "$T/tree" "$T/tree$l"; done

TREE_DIR=$T "$REC" -q -F 999 -o "$T/c.sa" -- "$T/tree2" 2; rc=$?
ok $([ $rc = 7 ]; echo $?) "exit status of CMD returned ($rc)"
"$DUMP" "$T/c.sa" >"$T/c.txt"; ok $? "file complete"
for l in 2 1 0; do
	c=$(awk -v n="comm=tree$l" '/^COUNT/ && $NF == n { split($7, a, "="); s += a[2] } END { print s + 0 }' "$T/c.txt")
	[ "$c" -ge 100 ]; ok $? "tree$l (level $l) has $c samples"
done

"$REC" -q -o "$T/nf.sa" -- "$T/does-not-exist" 2>"$T/err"; rc=$?
[ $rc = 127 ]; ok $? "CMD not found: exit 127 ($rc: $(head -1 "$T/err"))"
"$REC" -q -o "$T/nx.sa" -- "$T/tree.c" 2>"$T/err"; rc=$?
[ $rc = 126 ]; ok $? "CMD not executable: exit 126 ($rc)"
finish
