#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-record.sh - sa-record against perf record at 999 Hz, whole system,
# on a CPU-bound 2-thread workload: the workload's throughput with no
# recorder, with sa-record and with `perf record -e cpu-clock -g -F 999 -a`;
# each recorder's CPU time and peak RSS (/usr/bin/time), its start-up +
# shut-down time on an idle 10 ms recording, and its output size. Two
# floors: `perf record -e cpu-clock -F 999 -a` without -g (the same timer
# events with no call chains), and bpffloor, sa-record's own program on the
# same events filtering every sample out after counting it (-p 1), i.e. a
# BPF program that only counts. Runs alternate; each round's loss is taken
# against the same round's run without a recorder (pairing cancels the
# shared host's slow drifts), per wall second and per second of the
# workload's own CPU time (steal time and preemption by other tasks
# excluded; the timer interrupt and BPF program are charged to the task they
# interrupt, as this kernel has no IRQ time accounting). Medians with their
# min..max. Needs root. FREQ=99 measures at 99 Hz; MODES picks the runs.
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
	/* per wall second, and per second of the process's own CPU time: the
	 * timer interrupt and the BPF program are charged to the task they
	 * interrupt (no IRQ time accounting here), while time the host or other
	 * tasks took (steal, preemption) is not */
	struct timespec c;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
	printf("%.0f %.0f\n", (ops[0] + ops[1]) / secs, (ops[0] + ops[1]) / (c.tv_sec + c.tv_nsec / 1e9));
	return 0;
}
CEOF
cc -O2 -fno-omit-frame-pointer -pthread -o "$T/work" "$T/work.c" || exit 1

# one_run MODE: prints "ops_per_wall_s ops_per_cpu_s"; $T/time gets the
# recorder's "user sys maxrss", $T/size its output size
one_run() {
	local mode=$1 tp rec tpid out bin=$REC
	case $mode in
	sa:*) bin=${mode#*:}; mode=sa ;;
	esac
	case $mode in
	none) echo "0 0 0" >"$T/time"; echo 0 >"$T/size"; "$T/work" "$SECS"; return ;;
	sa) out=$T/r.sa; /usr/bin/time -f "%U %S %M" -o "$T/time" "$bin" -q -F "$FREQ" -a -o "$out" & ;;
	# the same events and the same BPF program, but every sample filtered
	# out after counting it (-p 1: init, idle here): a count-only program
	bpffloor) out=$T/f.sa
		/usr/bin/time -f "%U %S %M" -o "$T/time" "$REC" -q -F "$FREQ" -p 1 -o "$out" & ;;
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

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# Modes: none, sa, perf, floor, bpffloor, and sa:PATH for another sa-record build.
MODES=${MODES:-none sa perf floor bpffloor}
for r in $(seq "$ROUNDS"); do
	for m in $MODES; do
		read -r tw tc < <(one_run "$m")
		read -r u s rss < <(tail -1 "$T/time")
		echo "$m $r $tw $tc $(echo "$u + $s" | bc) $rss $(cat "$T/size")" >>"$T/results"
	done
	for m in sa perf; do echo "$m $(startup $m)" >>"$T/startup"; done
	echo "round $r done" >&2
done

# Columns of results: mode round ops/wall-s ops/cpu-s cpu_s rss_kb bytes.
col() { awk -v m="$1" -v c="$2" '$1 == m { print $c }' "$T/results" | median; }
# min..max of column c for tool m
spread() { awk -v m="$1" -v c="$2" '$1 == m { print $c }' "$T/results" | sort -g |
	awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s..%s", lo, hi }'; }
# Paired loss: each round's figure against the same round's no-recorder run,
# so that slow drifts of the shared host cancel; median and min..max.
loss() { awk -v m="$1" -v c="$2" '$1 == "none" { b[$2] = $c } $1 == m { l[$2] = $c }
	END { for (r in l) if (b[r] > 0) print 100 * (b[r] - l[r]) / b[r] }' "$T/results"; }
lossmed() { loss "$1" "$2" | median; }
lossspread() { loss "$1" "$2" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 }
	END { printf "%.2f..%.2f", lo, hi }'; }
su() { awk -v m="$1" '$1 == m { print $2 }' "$T/startup" | median; }
echo "at $FREQ Hz, whole system (-a), $ROUNDS alternating rounds of $SECS s; floor = perf without -g"
echo "loss: paired with each round's run without a recorder; wall = ops per wall second,"
echo "cpu = ops per second of the workload's own CPU time (steal and preemption excluded)"
printf "%-8s %10s %8s %-14s %8s %-14s %7s %7s %9s %8s\n" tool "ops/s" "wall %" "(min..max)" \
	"cpu %" "(min..max)" "cpu s" "rss MB" "bytes/s" "start ms"
# sa:build/x/bin/sa-record shows as sa:x
label() { case $1 in sa:*) local d=${1#sa:}; echo "sa:$(basename "$(dirname "$(dirname "$d")")")" ;; *) echo "$1" ;; esac; }
for m in $MODES; do
	printf "%-8s %10.0f %8.2f %-14s %8.2f %-14s %7.2f %7.1f %9.0f %8s\n" "$(label "$m")" "$(col "$m" 3)" \
		"$(lossmed "$m" 3)" "($(lossspread "$m" 3))" "$(lossmed "$m" 4)" "($(lossspread "$m" 4))" \
		"$(col "$m" 5)" "$(echo "$(col "$m" 6) / 1024" | bc -l)" \
		"$(echo "$(col "$m" 7) / ($SECS + 1)" | bc -l)" \
		"$(case $m in sa|perf) su "$m" ;; *) echo - ;; esac)"
done
ratio() { echo "$1 $2" | awk '{ printf "%.2f", ($2 > 0 ? $1 / $2 : 0) }'; }
case " $MODES " in *" sa "*" perf "*)
	echo "ratios sa/perf: cpu $(ratio "$(col sa 5)" "$(col perf 5)")" \
		"rss $(ratio "$(col sa 6)" "$(col perf 6)")" \
		"startup $(ratio "$(su sa)" "$(su perf)")" \
		"bytes $(ratio "$(col sa 7)" "$(col perf 7)")" ;;
esac
echo "($ROUNDS alternating rounds of $SECS s, medians; $(nproc) CPUs; load avg $(cut -d' ' -f1-3 /proc/loadavg))"
