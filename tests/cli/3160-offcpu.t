#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# sa-record --off-cpu on samples/offcpu, whose thread sa-off-worker burns
# (sa_off_burn), sleeps (do_nanosleep) and waits on a pipe (pipe_read) in
# rounds of 20/10/15 ms, each phase timed by the workload itself with
# CLOCK_MONOTONIC: sa-report --off-cpu gives the sleep and wait phases' split,
# preempted time in sa_off_burn, and sa-report --wall the three phases'
# shares of the thread's wall time, each within 3 points of that clock. No
# period is lost, and every output carries off-CPU time in its own units.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples offcpu
tmpdir
T=$tap_tmp

plan 24

# share FILE RE [TOTAL_RE]: % of the time of FILE's stacks matching TOTAL_RE
# (all when empty) held by those matching the extended regex RE.
share()
{
	awk -v re="$2" -v all="${3-}" '
	{
		n = $NF; st = $0; sub(/ [0-9]+$/, "", st)
		if (all == "" || st ~ all) { t += n; if (st ~ re) m += n }
	}
	END { printf "%.2f", t ? 100 * m / t : 0 }' "$1"
}

# workload FIELD: a number the workload printed ("burn_ns", "cpu_ns", ...).
workload()
{
	awk -v f="$1" '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' "$T/w.out"
}

"$SA_RECORD" -F 999 --off-cpu -o "$T/o.sa" -- "$SA_SAMPLES/offcpu" -d 10 \
	>"$T/w.out" 2>"$T/record.err"
rc=$?
ok $rc "sa-record -F 999 --off-cpu -- offcpu -d 10 exits 0 (got $rc)"
[ $rc -eq 0 ] || diag_file "$T/record.err"
burn=$(workload burn_ns) cpu=$(workload cpu_ns) slp=$(workload sleep_ns)
wait=$(workload wait_ns) tot=$(workload total_ns)
ge "$(workload rounds)" 100
ok $? "the workload ran $(workload rounds) rounds (want >= 100)"
diag "workload: burn $burn ns ($cpu on CPU), sleep $slp ns, wait $wait ns, total $tot ns"

# Off-CPU time is measured, not sampled: each period is switch-in minus
# switch-out time. What could move a share is a lost period, so none may be.
line=$(grep 'off-CPU:' "$T/record.err")
echo "$line" | grep -q ' 0 lost,'
ok $? "no off-CPU period lost ($line)"

"$SA_REPORT" --off-cpu --state blocked --comm sa-off-worker -o "$T/blocked.folded" "$T/o.sa" \
	2>"$T/report.err"
ok $? "sa-report --off-cpu --state blocked exits 0"
[ -s "$T/blocked.folded" ] && [ "$(folded_bad_lines "$T/blocked.folded")" -eq 0 ]
ok $? "folded off-CPU output is 'stack microseconds' lines"

# The phases, against the workload's clock. Its sleep phase is the time in
# sa_off_sleep and its wait phase the time in sa_off_pipe_wait: blocked,
# and also runnable where the host is loaded (woken, then preempted on the
# way out of the syscall, or in the write that wakes the writer). So each
# phase's off-CPU time is both states' stays whose stack holds its function.
# The clock also counts the few microseconds each phase runs (syscall entry
# and exit, about 10 us of a 10-15 ms phase: 0.1 points): 3 points is 30
# times that. Nothing is sampled here, so no chance enters the bound.
"$SA_REPORT" --off-cpu --comm sa-off-worker -o "$T/all.folded" "$T/o.sa" 2>>"$T/report.err"
phases=';sa_off_(sleep|pipe_wait);'
want=$(awk -v s="$slp" -v w="$wait" 'BEGIN { printf "%.2f", 100 * s / (s + w) }')
got=$(share "$T/all.folded" ';sa_off_sleep;' "$phases")
kern=$(share "$T/blocked.folded" ';do_nanosleep;' ';sa_off_sleep;')
within "$got" "$want" 3 && ge "$kern" 99
ok $? "sleeping holds $got% of the phases' off-CPU time (want $want +- 3), $kern% of it blocked in do_nanosleep"
want=$(awk -v s="$slp" -v w="$wait" 'BEGIN { printf "%.2f", 100 * w / (s + w) }')
got=$(share "$T/all.folded" ';sa_off_pipe_wait;' "$phases")
kern=$(share "$T/blocked.folded" ';[a-z_]*pipe_read;' ';sa_off_pipe_wait;')
within "$got" "$want" 3 && ge "$kern" 99
ok $? "waiting on the pipe holds $got% (want $want +- 3), $kern% of it blocked in pipe_read"
# folded values are microseconds: their sum is the phases' time
got=$(grep -E "$phases" "$T/all.folded" | folded_total /dev/stdin)
want=$(awk -v s="$slp" -v w="$wait" 'BEGIN { printf "%.0f", (s + w) / 1000 }')
within "$got" "$want" "$(awk -v w="$want" 'BEGIN { print w * 0.03 }')"
ok $? "the phases' off-CPU time is $got us (want $want us +- 3%)"

# Preempted time: the burn phase's wall time minus its thread CPU time, as a
# share of the thread's life (0 on an idle host, up to 60 points on a busy one).
"$SA_REPORT" --off-cpu --state runnable --comm sa-off-worker -o "$T/runnable.folded" "$T/o.sa" \
	2>>"$T/report.err"
want=$(awk -v b="$burn" -v c="$cpu" -v t="$tot" 'BEGIN { printf "%.2f", 100 * (b - c) / t }')
got=$(awk -v t="$tot" '/;sa_off_burn;/ { m += $NF } END { printf "%.2f", 100 * m * 1000 / t }' \
	"$T/runnable.folded")
within "$got" "$want" 3
ok $? "preempted in sa_off_burn: $got% of the thread's time (want $want +- 3)"

# Wall time: on-CPU samples at 1/999 s each plus off-CPU time. The burn
# phase's on-CPU part is sampled: its count, at most Poisson, has sd
# sqrt(n) samples for n = CPU s x 999; as a share of the W s the thread
# lived that is sqrt(CPU / 999) / W, at most sqrt(4.5 / 999) / 10 = 0.67
# points (4.4 s of CPU in 10 s on an idle host). 3 points is 4.5 sd: P =
# 7e-6 (both sides); the sleep and wait shares are measured time (a few
# samples of their syscalls). Each phase is its function's time, both
# states (see above). The three checks: under 1e-4 per run.
"$SA_REPORT" --wall --comm sa-off-worker -o "$T/wall.folded" "$T/o.sa" 2>>"$T/report.err"
ok $? "sa-report --wall exits 0"
i=0
for phase in burn sleep wait; do
	re=$(echo ';sa_off_burn(;|$) ;sa_off_sleep(;|$) ;sa_off_pipe_wait(;|$)' | cut -d' ' -f$((i + 1)))
	ns=$(echo "$burn $slp $wait" | cut -d' ' -f$((i + 1)))
	want=$(awk -v n="$ns" -v t="$tot" 'BEGIN { printf "%.2f", 100 * n / t }')
	got=$(share "$T/wall.folded" "$re")
	within "$got" "$want" 3
	ok $? "--wall: $phase holds $got% of sa-off-worker's time (want $want +- 3)"
	i=$((i + 1))
done

# the other outputs say what they count
"$SA_REPORT" --off-cpu --svg -o "$T/o.svg" "$T/o.sa" 2>>"$T/report.err" &&
	grep -q '>Off-CPU Time Flame Graph<' "$T/o.svg" && grep -q '[0-9] ms, [0-9.]*%' "$T/o.svg"
ok $? "--off-cpu --svg: titled Off-CPU Time Flame Graph, times in the tooltips"
"$SA_REPORT" --off-cpu --top -o "$T/o.top" "$T/o.sa" 2>>"$T/report.err" &&
	grep -q '^# off-CPU time: ' "$T/o.top" && grep -q 'SELF_MS' "$T/o.top"
ok $? "--off-cpu --top: off-CPU time header and milliseconds"
"$SA_REPORT" --off-cpu --speedscope -o "$T/o.json" "$T/o.sa" 2>>"$T/report.err" &&
	python3 - "$T/o.json" "$(folded_total "$T/blocked.folded")" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ps = [p for p in d["profiles"] if p["name"].startswith("sa-off-worker")]
ok = all(p["unit"] == "nanoseconds" for p in d["profiles"]) and ps
ok = ok and sum(ps[0]["weights"]) >= int(sys.argv[2]) * 1000
sys.exit(0 if ok else 1)
EOF
ok $? "--off-cpu --speedscope: weights in nanoseconds (the worker's >= its blocked time)"
"$SA_REPORT" --off-cpu --pprof -o "$T/o.pb.gz" "$T/o.sa" 2>>"$T/report.err" &&
	python3 -c 'import gzip, sys; b = gzip.open(sys.argv[1]).read(); sys.exit(not (b"off_cpu" in b and b"microseconds" in b))' "$T/o.pb.gz"
ok $? "--off-cpu --pprof: sample type off_cpu in microseconds"
"$SA_REPORT" --off-cpu --diff "$T/o.sa" "$T/o.sa" >"$T/d.folded" 2>>"$T/report.err" &&
	[ -s "$T/d.folded" ] && awk '$(NF-1) != $NF { bad = 1 } END { exit bad }' "$T/d.folded" &&
	"$SA_REPORT" --off-cpu --diff --top "$T/o.sa" "$T/o.sa" | grep -q "^# before: [0-9]* us"
ok $? "--off-cpu --diff of a recording with itself: equal microseconds on every line"
diag_file "$T/report.err" 5

# --off-cpu-min 12000: the 10 ms sleeps are skipped in the kernel (counted
# as off_short), the 15 ms pipe waits kept. A sleep whose wake-up comes late
# (a loaded host) may last 12 ms or more and be kept, so the oracle is the
# workload's count of sleeps that took under 12 ms by its own clock: their
# stays are shorter still (switch-out to switch-in is inside the call), so
# each one is skipped. A pipe wait blocks for the writer's 15 ms less the
# time the worker was preempted between its request and its read (on a
# loaded host: 926 ms kept of 64 rounds, under 64 x 15 ms), so the oracle
# is the workload's own time in read() of the reads that took 13 ms or
# more: each one's stay, inside the call, is over 12 ms and kept; the rest
# of the call is the system call's entry and exit, microseconds of each
# 13 ms, hence 98% (no luck involved).
"$SA_RECORD" --off-cpu --off-cpu-min 12000 -o "$T/m.sa" -- "$SA_SAMPLES/offcpu" -d 3 -m 12 \
	>"$T/m.out" 2>"$T/m.err"
ok $? "sa-record --off-cpu --off-cpu-min 12000 exits 0"
rounds=$(awk '/rounds/ { print $NF }' "$T/m.out")
under=$(awk '/sleeps_under 12 ms/ { print $NF }' "$T/m.out")
short=$(sed -n 's/.*(\([0-9]*\) shorter than.*/\1/p' "$T/m.err")
ge "${short:-0}" "${under:-1}" && ge "${under:-0}" 1
ok $? "$short stays shorter than 12 ms skipped; $under of $rounds sleeps took under 12 ms"
"$SA_REPORT" --off-cpu --comm sa-off-worker -o "$T/m.folded" "$T/m.sa" 2>>"$T/report.err"
n=$(awk '/;do_nanosleep;/ { n++ } END { print n + 0 }' "$T/m.folded")
w=$(awk '/pipe_read;/ { t += $NF } END { print t + 0 }' "$T/m.folded")
reads=$(awk '/reads_over 13 ms ns/ { printf "%d\n", $NF / 1000 }' "$T/m.out")
[ "${reads:-0}" -ge $((rounds * 5000)) ] && [ "$w" -ge $((reads * 98 / 100)) ]
ok $? "the pipe waits are kept ($w us; the reads over 13 ms took ${reads:-?} us by the workload's clock, >= $rounds rounds x 5 ms; $n sleep stacks)"

# Recovery: with 2 stack-map slots per set nearly every switch-out clashes,
# and its stacks and time go through the ring buffer; and with 50 ms
# intervals a quarter of the 10-15 ms stays (and the main thread's, the
# whole run) span a flip, their stacks read from a map before it was
# cleared. The split is the same, measured, and nothing is lost.
"$SA_RECORD" --off-cpu --stack-map-size 2 --interval 0.05 -o "$T/r.sa" -- \
	"$SA_SAMPLES/offcpu" -d 3 \
	>"$T/r.out" 2>"$T/r.err"
line=$(grep 'off-CPU:' "$T/r.err")
rec=$(echo "$line" | sed -n 's/.*, \([0-9]*\) stack clashes recovered.*/\1/p')
echo "$line" | grep -q ' 0 lost,' && ge "${rec:-0}" 100
ok $? "--stack-map-size 2: clashes recovered, none lost ($line)"
"$SA_REPORT" --off-cpu --comm sa-off-worker -o "$T/r.folded" "$T/r.sa" 2>>"$T/report.err"
slp=$(awk '/sleep_ns/ { print $NF }' "$T/r.out") wait=$(awk '/wait_ns/ { print $NF }' "$T/r.out")
want=$(awk -v s="$slp" -v w="$wait" 'BEGIN { printf "%.2f", 100 * s / (s + w) }')
got=$(share "$T/r.folded" ';sa_off_sleep;' "$phases")
within "$got" "$want" 3
ok $? "recovered: sleeping holds $got% of the phases' off-CPU time (want $want +- 3)"
got=$(grep -E "$phases" "$T/r.folded" | folded_total /dev/stdin)
want=$(awk -v s="$slp" -v w="$wait" 'BEGIN { printf "%.0f", (s + w) / 1000 }')
within "$got" "$want" "$(awk -v w="$want" 'BEGIN { print w * 0.03 }')"
ok $? "recovered: the phases' off-CPU time is $got us (want $want us +- 3%)"

done_testing
