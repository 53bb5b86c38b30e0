#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-record.sh - sa-record against perf record at 999 Hz, whole system,
# on a CPU-bound 2-thread workload: the workload's throughput with no
# recorder, with sa-record and with `perf record -e cpu-clock -g -F 999 -a`;
# each recorder's CPU time and peak RSS (/usr/bin/time), its start-up +
# shut-down time on an idle 10 ms recording, and its output size. The floor
# is `perf record -e cpu-clock -F 999 -a` without -g: the same timer events
# with no call chains (KERNEL-NOTES: it loses what a count-only BPF program
# loses). Runs alternate; medians are printed with their min..max spread,
# and ratios to perf. Needs root. FREQ=99 measures at 99 Hz.
# Usage: tests/bench/bench-record.sh [ROUNDS [SECONDS]]   (default 5 10)
set -u
ROUNDS=${1:-5}
SECS=${2:-10}
FREQ=${FREQ:-999}
SA_BUILD=${SA_BUILD:-build}
REC=$SA_BUILD/bin/sa-record
T=$(mktemp -d /tmp/sa-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
command -v perf >/dev/null || { echo "perf not found"; exit 1; }
[ -x "$REC" ] || { echo "$REC not built"; exit 1; }

cat >"$T/work.c" <<'CEOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double secs;
static unsigned long ops[2];
__attribute__((noinline)) static unsigned long unit(unsigned long x)
{
	volatile unsigned long v = x;
	for (int i = 0; i < 2000; i++) v = v * 6364136223846793005ul + 1442695040888963407ul;
	return v;
}
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
static void *run(void *a)
{
	unsigned long *n = a, x = 1;
	double end = now() + secs;
	while (now() < end)
		for (int i = 0; i < 100; i++, (*n)++) x = unit(x);
	return (void *)x;
}
int main(int argc, char **argv)
{
	pthread_t t;
	secs = argc > 1 ? atof(argv[1]) : 10;
	pthread_create(&t, 0, run, &ops[1]);
	run(&ops[0]);
	pthread_join(t, 0);
	printf("%.0f\n", (ops[0] + ops[1]) / secs);
	return 0;
}
CEOF
cc -O2 -fno-omit-frame-pointer -pthread -o "$T/work" "$T/work.c" || exit 1

# one_run MODE: prints "throughput cpu_s rss_kb bytes"
one_run() {
	local mode=$1 tp rec tpid out
	case $mode in
	none) "$T/work" "$SECS"; echo "0 0 0" >"$T/time"; echo 0 >"$T/size"; return ;;
	sa) out=$T/r.sa; /usr/bin/time -f "%U %S %M" -o "$T/time" "$REC" -q -F "$FREQ" -a -o "$out" & ;;
	perf) out=$T/perf.data
		/usr/bin/time -f "%U %S %M" -o "$T/time" perf record -q -e cpu-clock -g -F "$FREQ" -a \
			-o "$out" >/dev/null 2>&1 & ;;
	floor) out=$T/floor.data
		/usr/bin/time -f "%U %S %M" -o "$T/time" perf record -q -e cpu-clock -F "$FREQ" -a \
			-o "$out" >/dev/null 2>&1 & ;;
	esac
	tpid=$!
	sleep 1
	tp=$("$T/work" "$SECS")
	rec=$(pgrep -P $tpid | head -1)
	kill -TERM "$rec"
	wait $tpid
	stat -c %s "$out" >"$T/size"
	rm -f "$out" "$out.old"
	echo "$tp"
}

startup() {
	local s e
	s=$(date +%s%N)
	case $1 in
	sa) "$REC" -q -F "$FREQ" -a --duration 0.01 -o "$T/s.sa" ;;
	perf) perf record -q -e cpu-clock -g -F "$FREQ" -a -o "$T/s.data" -- sleep 0.01 >/dev/null 2>&1 ;;
	esac
	e=$(date +%s%N)
	echo $(( (e - s) / 1000000 ))
}

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

for r in $(seq "$ROUNDS"); do
	for m in none sa perf floor; do
		tp=$(one_run $m)
		read -r u s rss < <(tail -1 "$T/time")
		echo "$m $tp $(echo "$u + $s" | bc) $rss $(cat "$T/size")" >>"$T/results"
	done
	for m in sa perf; do echo "$m $(startup $m)" >>"$T/startup"; done
	echo "round $r done" >&2
done

col() { awk -v m="$1" -v c="$2" '$1 == m { print $c }' "$T/results" | median; }
# min..max of column c for tool m
spread() { awk -v m="$1" -v c="$2" '$1 == m { print $c }' "$T/results" | sort -n |
	awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s..%s", lo, hi }'; }
su() { awk -v m="$1" '$1 == m { print $2 }' "$T/startup" | median; }
base=$(col none 2)
echo "at $FREQ Hz, whole system (-a), $ROUNDS alternating rounds of $SECS s; floor = perf without -g"
printf "%-6s %12s %-25s %8s %9s %8s %11s %11s\n" tool "ops/s" "(min..max)" "loss %" "cpu s" "rss MB" \
	"bytes/s" "startup ms"
for m in none sa perf floor; do
	tp=$(col $m 2)
	printf "%-6s %12.0f %-25s %8.2f %9.2f %8.1f %11.0f %11s\n" $m "$tp" "($(spread $m 2))" \
		"$(echo "100 * ($base - $tp) / $base" | bc -l)" "$(col $m 3)" \
		"$(echo "$(col $m 4) / 1024" | bc -l)" "$(echo "$(col $m 5) / ($SECS + 1)" | bc -l)" \
		"$(case $m in sa|perf) su $m ;; *) echo - ;; esac)"
done
ratio() { echo "$1 $2" | awk '{ printf "%.2f", ($2 > 0 ? $1 / $2 : 0) }'; }
echo "loss points: sa $(echo "100 * ($base - $(col sa 2)) / $base" | bc -l | cut -c1-5)" \
	"perf $(echo "100 * ($base - $(col perf 2)) / $base" | bc -l | cut -c1-5)" \
	"floor $(echo "100 * ($base - $(col floor 2)) / $base" | bc -l | cut -c1-5)"
echo "ratios sa/perf: cpu $(ratio "$(col sa 3)" "$(col perf 3)")" \
	"rss $(ratio "$(col sa 4)" "$(col perf 4)")" \
	"startup $(ratio "$(su sa)" "$(su perf)")" \
	"bytes $(ratio "$(col sa 5)" "$(col perf 5)")"
echo "($ROUNDS alternating rounds of $SECS s, medians; $(nproc) CPUs; load avg $(cut -d' ' -f1-3 /proc/loadavg))"
