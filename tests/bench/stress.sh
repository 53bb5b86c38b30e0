#!/bin/bash
# SPDX-License-Identifier: MIT
# stress.sh - sa-record under stress (docs/reliability.md, "Stress"): 999 Hz
# on every CPU for DURATION seconds (default 60) while a fork loop starts
# short processes (NCPU loops of fork + exec, each child burning ~0.3 ms of
# CPU in its own functions) and
# a CPU-bound program with one thread per CPU walks 4096 distinct stacks.
# Prints lost samples (% of all), every loss by cause, whether
# kept + lost + filtered == runs in every interval, the recorder's peak RSS
# and CPU time, and whether each interval was drained before the next ended.
# Needs root. Usage: tests/bench/stress.sh [DURATION] (SA_BUILD as in tests/cli).
set -u
cd "$(dirname "$0")/../.." || exit 1
SA_BUILD=${SA_BUILD:-$PWD/build}
REC=$SA_BUILD/bin/sa-record
REPORT=$SA_BUILD/bin/sa-report
DUMP=$SA_BUILD/tests/tools/sa-dump
DURATION=${1:-60}
INTERVAL=${SA_STRESS_INTERVAL:-1}
T=$(mktemp -d /tmp/sa-stress.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT

[ "$(id -u)" = 0 ] || { echo "stress.sh: needs root" >&2; exit 2; }
for f in "$REC" "$REPORT" "$DUMP"; do
	[ -x "$f" ] || { echo "stress.sh: $f not built" >&2; exit 2; }
done

cat >"$T/stress.c" <<'EOF'
/* "fork": fork + exec "short" forever; "short": ~0.3 ms of CPU, exit;
 * "spin N": N threads walking 8^4 = 4096 distinct call paths. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned long sink;
#define NI __attribute__((noinline))
NI static void burn(unsigned n) { for (volatile unsigned i = 0; i < n; i++) sink += i; }
typedef void (*fn)(unsigned, int);
static fn tab[8];
#define F(k) NI static void f##k(unsigned path, int depth) \
	{ if (depth) tab[path & 7](path >> 3, depth - 1); else burn(2000); sink++; }
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7)
static fn tab[8] = { f0, f1, f2, f3, f4, f5, f6, f7 };
static void *spin(void *a)
{
	unsigned path = (unsigned)(unsigned long)a;
	for (;;)
		tab[path & 7](path++ >> 3, 3);
	return NULL;
}
NI static void short_child(void)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		burn(1000);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + b.tv_nsec - a.tv_nsec < 300000);
}
int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "short")) {
		short_child();
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "spin")) {
		pthread_t t;
		for (long i = 1; i < atoi(argv[2]); i++)
			pthread_create(&t, NULL, spin, (void *)(i * 977));
		spin(NULL);
	}
	for (unsigned long n = 0;; n++) {
		pid_t p = fork();
		if (p == 0) {
			execl("/proc/self/exe", "stress-short", "short", (char *)NULL);
			_exit(127);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
}
EOF
cc -O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread -o "$T/stress" "$T/stress.c" ||
	exit 1

ncpu=$(nproc)
"$T/stress" spin "$ncpu" & pids+=($!)
for ((i = 0; i < ncpu; i++)); do
	"$T/stress" fork & pids+=($!)
done
sleep 0.5
forks0=$(awk '/^processes/ { print $2 }' /proc/stat)
/usr/bin/time -v -o "$T/time" "$REC" -F 999 -a --interval "$INTERVAL" --duration "$DURATION" \
	-o "$T/s.sa" >"$T/rec.out" 2>"$T/rec.err"
rc=$?
forks=$(($(awk '/^processes/ { print $2 }' /proc/stat) - forks0))
for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done

echo "== sa-record -F 999 -a --interval $INTERVAL --duration $DURATION on $ncpu CPUs (exit $rc)"
echo "   load: $ncpu spinning threads over 4096 stacks + $ncpu fork loops ($forks processes started, $((forks / DURATION))/s)"
tail -n 2 "$T/rec.err" | sed 's/^/   /'
"$DUMP" "$T/s.sa" >"$T/dump" || { echo "sa-dump failed" >&2; exit 1; }
awk -v iv="$INTERVAL" '
/^INTERVAL/ {
	for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	d = (v["end"] - v["start"]) / 1e9
	nint++; sumd += d
	if (d > maxd) maxd = d
	if (d > 1.5 * iv) late++
}
/^LOSS/ {
	delete l
	for (i = 3; i <= NF; i++) { split($i, kv, "="); l[kv[1]] = kv[2] }
	lost = 0
	for (k in l) if (k ~ /^lost_/) { lost += l[k]; cause[k] += l[k] }
	if (l["runs"] != l["kept"] + l["filtered"] + lost) bad++
	R += l["runs"]; K += l["kept"]; F += l["filtered"]; L += lost
	C += l["collisions"]; TR += l["truncated"]
}
END {
	printf "   samples: runs %d = kept %d + filtered %d + lost %d: %s in %d of %d intervals\n",
		R, K, F, L, bad ? "BROKEN" : "holds", nint - bad, nint
	printf "   lost: %.4f%% of all samples (target < 0.1%%)\n", R ? 100 * L / R : 0
	printf "   by cause:"
	for (k in cause) printf " %s=%d", k, cause[k]
	printf "\n   recovered hash collisions: %d; truncated stacks (> 127 frames): %d\n", C, TR
	printf "   intervals: %d, mean %.3f s, longest %.3f s (nominal %s s); %d longer than 1.5x: %s\n",
		nint, nint ? sumd / nint : 0, maxd, iv, late,
		late ? "a drain fell behind" : "each drained before the next ended"
	exit (bad > 0) || (R && 1000 * L >= R) || late > 0
}' "$T/dump"
ok=$?
rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$T/time")
cpu=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { print u + s }' "$T/time")
echo "   recorder: peak RSS $((rss / 1024)) MiB ($rss KiB), CPU $cpu s for $DURATION s"
echo "   file: $(stat -c %s "$T/s.sa") bytes, $(grep -c '^STACK' "$T/dump") stacks, $(grep -c '^PROC' "$T/dump") processes"
"$REPORT" --info "$T/s.sa" | grep -E '^  (samples|lost|finished):' | sed 's/^ */   report: /'
[ $rc = 0 ] && [ $ok = 0 ] && echo "PASS" || echo "FAIL"
[ $rc = 0 ] && [ $ok = 0 ]
