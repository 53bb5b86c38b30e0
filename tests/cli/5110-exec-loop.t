#!/bin/bash
# SPDX-License-Identifier: MIT
# 5110-exec-loop.t - a process that execs itself again and again keeps its
# pid: the recorder drops its old images once their samples are written
# (docs/reliability.md, "Rates and the stop path"), so its RSS stays flat.
# Four loops of a non-PIE program (the same stacks in every image: what
# grows is the images, not the stacks) run beside `sa-record -a` for 46 s;
# the recorder's RSS at 46 s is within 20% of its RSS at 20 s.
. "$(dirname "$0")/lib.sh"
require_root_bpf
tmpdir
T=$tap_tmp
plan 2

cat >"$T/selfexec.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
/* its own function spinning 0.1 ms, then exec itself until argv[1] (epoch s) */
__attribute__((noinline)) static void spin(void)
{
	struct timespec t0, t;
	volatile unsigned long x = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++)
			x++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 100000);
}
int main(int argc, char **argv)
{
	char n[32];
	long k = argc > 2 ? atol(argv[2]) : 0;
	if (argc < 2 || time(NULL) >= atol(argv[1])) {
		printf("%ld\n", k);
		return 0;
	}
	spin();
	snprintf(n, sizeof(n), "%ld", k + 1);
	execl("/proc/self/exe", argv[0], argv[1], n, (char *)NULL);
	return 1;
}
C
cc -O2 -fno-omit-frame-pointer -no-pie -o "$T/selfexec" "$T/selfexec.c" || skip_all "no C compiler"

end=$(($(date +%s) + 50))
for i in 1 2 3 4; do "$T/selfexec" $end >"$T/n.$i" & done
timeout -s KILL 60 "$SA_RECORD" -q -a --duration 48 -o "$T/x.sa" 2>"$T/err" &
rec=$!
sleep 0.5
p=$(pgrep -P $rec -x sa-record)
sleep 19.5
r1=$(awk '/VmRSS/ { print $2 }' /proc/$p/status)
sleep 26
r2=$(awk '/VmRSS/ { print $2 }' /proc/$p/status)
wait $rec
rc=$?
wait
n=$(cat "$T"/n.* | awk '{ s += $1 } END { print s + 0 }')
[ $rc = 0 ] && [ "$n" -ge 1000 ]
ok $? "sa-record exit $rc beside $n execs of 4 pids"
[ -n "$r1" ] && [ -n "$r2" ] && [ $((r2 * 100)) -le $((r1 * 120)) ]
ok $? "RSS at 20 s ${r1:-?} KiB, at 46 s ${r2:-?} KiB (<= +20%)"
done_testing
