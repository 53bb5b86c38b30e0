#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (takes cpu1 offline for 3 s: every recorder on the host loses it)
# sa-test: statistical
# 2014-cpu-hotplug.t - a CPU that goes offline and comes back during -a
# (record/sampler/hotplug.c): the kernel stops a per-CPU cpu-clock event
# for good when its CPU goes away, so sa-record opens a new one when the
# CPU is back. Threads pinned to that CPU are sampled again within one
# interval of its return, at their CPU time's rate, and the gap is in the
# file (CPUGAP, docs/format.md) and in --info ("cpu gaps: ... CPU 1
# FROM-TO s"). cpu1 is offline 3 s, once, and always brought back (trap).
. "$(dirname "$0")/2000-record-lib.sh"
need_bpf
RPT=$SA_BUILD/bin/sa-report
ONLINE=/sys/devices/system/cpu/cpu1/online
[ -w "$ONLINE" ] || skip_all "cpu1 cannot be taken offline here ($ONLINE)"
[ "$(cat "$ONLINE")" = 1 ] || skip_all "cpu1 is offline"
echo "1..6"

# hp spin LOG: two threads spinning 10 ms in every 20, each logging every
# 100 ms "CLOCK_MONOTONIC ns, its CLOCK_THREAD_CPUTIME_ID ns"; hp now: the
# CLOCK_MONOTONIC of this moment
cat >"$T/hp.c" <<'CEOF'
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static unsigned long long ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}
static FILE *log_f;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
volatile unsigned long sink;
__attribute__((noinline)) void hp_spin(unsigned long long until)
{
	while (ns(CLOCK_MONOTONIC) < until)
		sink++;
}
static void *run(void *a)
{
	unsigned long long next = ns(CLOCK_MONOTONIC);
	struct timespec z = {0, 10000000};
	(void)a;
	for (int i = 0;; i++) {
		hp_spin(ns(CLOCK_MONOTONIC) + 10000000);
		nanosleep(&z, NULL);
		if (ns(CLOCK_MONOTONIC) >= next) {
			pthread_mutex_lock(&mu);
			fprintf(log_f, "%llu %llu %p\n", ns(CLOCK_MONOTONIC),
				ns(CLOCK_THREAD_CPUTIME_ID), (void *)pthread_self());
			fflush(log_f);
			pthread_mutex_unlock(&mu);
			next += 100000000;
		}
		sink += i;
	}
	return NULL;
}
int main(int c, char **v)
{
	pthread_t t;
	if (c > 1 && !strcmp(v[1], "now"))
		return printf("%llu\n", ns(CLOCK_MONOTONIC)) < 0;
	log_f = fopen(v[2], "w");
	pthread_create(&t, NULL, run, NULL);
	run(NULL);
}
CEOF
cc -O2 -fno-omit-frame-pointer -pthread -o "$T/hp" "$T/hp.c" || skip_all "cannot build the workload"
trap 'echo 1 >"$ONLINE"; jobs -p | xargs -r kill 2>/dev/null; rm -rf "$T"' EXIT

taskset -c 1 "$T/hp" spin "$T/hp.log" &
hp=$!
"$REC" -q -a -o "$T/h.sa" 2>"$T/rec.err" &
rec=$!
sleep 3
# the CPU leaves (and comes back) between these two times each
t_off0=$("$T/hp" now)
echo 0 >"$ONLINE"
t_off=$("$T/hp" now)
sleep 3
t_on=$("$T/hp" now)
echo 1 >"$ONLINE"
t_on1=$("$T/hp" now)
# the kernel broke the threads' affinity when cpu1 left: pinned again
taskset -a -p -c 1 $hp >/dev/null
# stopped once the workload had 2 s of CPU on cpu1 after its return (and
# 3 s of wall time): its CPU time, not the wall's, sets the samples
# (tests/README.md; a loaded host gave it 0.2 s of CPU in 7 s)
c0=$(cpu_ticks $hp)
for i in $(seq 600); do
	[ $(($(cpu_ticks $hp) - c0)) -ge 200 ] && [ "$i" -ge 30 ] && break
	sleep 0.1
done
kill -TERM $rec
wait $rec
rc=$?
kill $hp
ok $rc "sa-record -a with cpu1 offline for 3 s, stopped by SIGTERM: exit $rc"
diag_file "$T/rec.err" 5

"$DUMP" "$T/h.sa" >"$T/dump"
# the intervals that start one interval (1 s) after cpu1's return, and
# the workload's samples in them
read -r from to n < <(awk -v on="$t_on1" -v pid=$hp '
	/^INTERVAL/ { split($3, a, "="); split($4, b, "="); s = a[2]; use = s >= on + 1e9
		if (use && !from) from = s; if (use) to = b[2] }
	/^COUNT/ && use { split($2, p, "="); split($7, c, "="); if (p[2] == pid) n += c[2] }
	END { printf "%.0f %.0f %d\n", from, to, n }' "$T/dump")
# the workload's CPU time over [from, to], from each thread's log (a line
# every 100 ms: interpolated at both ends, to 0.1 s of wall time x 50%)
cpu=$(awk -v from="$from" -v to="$to" '
	function at(th, t,   i, k) {
		for (i = 2; i <= cnt[th]; i++)
			if (T[th, i] >= t) {
				k = (t - T[th, i - 1]) / (T[th, i] - T[th, i - 1])
				return C[th, i - 1] + k * (C[th, i] - C[th, i - 1])
			}
		return C[th, cnt[th]]
	}
	{ th = $3; cnt[th]++; T[th, cnt[th]] = $1; C[th, cnt[th]] = $2 }
	END { for (th in cnt) s += at(th, to) - at(th, from); printf "%.3f\n", s / 1e9 }' "$T/hp.log")
want=$(awk -v c="$cpu" 'BEGIN { printf "%.0f", c * 99 }')
lo=$(awk -v w="$want" 'BEGIN { printf "%.0f", w - 5 * sqrt(w) }')
hi=$(awk -v w="$want" 'BEGIN { printf "%.0f", w + 5 * sqrt(w) }')
diag "cpu1 offline at $t_off, back at $t_on1; intervals $from-$to; workload CPU ${cpu} s"
# Samples of a thread with C s of CPU at 99 Hz: about Poisson of mean
# 99 C (100-200 here: the first interval after the return is left out).
# Outside 5 standard deviations by luck: < 6e-7 per run.
[ "$want" -ge 50 ] && [ "$n" -ge "$lo" ] && [ "$n" -le "$hi" ]
ok $? "threads pinned to cpu1, from one interval after its return: $n samples, want $want ($lo-$hi) for ${cpu} s of CPU"

# before cpu1 left, the same (a check of the check)
read -r n0 c0 < <(awk -v off="$t_off" -v pid=$hp '
	/^INTERVAL/ { split($3, a, "="); split($4, b, "="); use = b[2] <= off; if (use) e = b[2]; if (use && !s) s = a[2] }
	/^COUNT/ && use { split($2, p, "="); split($7, c, "="); if (p[2] == pid) n += c[2] }
	END { printf "%d %.0f\n", n, (e - s) }' "$T/dump")
ok $([ "$n0" -gt 0 ]; echo $?) "before: $n0 samples in $(awk -v c="$c0" 'BEGIN { printf "%.1f", c / 1e9 }') s of intervals"

gap=$(awk '/^CPUGAP/ { print $2, $3, $4 }' "$T/dump")
read -r gcpu gfrom gto < <(echo "$gap" | sed 's/[a-z]*=//g')
# from: the event's clock stopped while the CPU left (its count is read
# once an interval: 50 ms of slack for the read); to: the new event, at
# the first interval's end after the CPU came back (1 s, and 0.3 s late)
[ "$(echo "$gap" | grep -c .)" = 1 ] && [ "$gcpu" = 1 ] &&
	[ "$gfrom" -ge $((t_off0 - 50000000)) ] && [ "$gfrom" -le $((t_off + 50000000)) ] &&
	[ "$gto" -ge "$t_on" ] && [ "$gto" -le $((t_on1 + 1300000000)) ]
ok $? "one CPUGAP: cpu 1 from its offline to its return (within 1.3 s): $gap; offline $t_off0-$t_off, back $t_on-$t_on1"

"$RPT" --info "$T/h.sa" >"$T/info" 2>/dev/null
line=$(grep '^  cpu gaps:' "$T/info")
echo "$line" | grep -qE 'cpu gaps: +1, [0-9.]+ s in all .* CPU 1 [0-9.]+-[0-9.]+ s$'
ok $? "--info names the gap: ${line# }"

[ "$(cat "$ONLINE")" = 1 ]
ok $? "cpu1 is online again"
finish
