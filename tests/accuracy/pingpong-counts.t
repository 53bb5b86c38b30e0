#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# Counts right at the context switch: two threads that hand a
# turn over pipes thousands of times a second (samples/pingpong), each
# timing its own CPU (CLOCK_THREAD_CPUTIME_ID, so a loaded host changes
# nothing). For every target kind (-- CMD, -p, -a -- CMD, -G), each
# thread's samples x period must be its CPU time within 1% plus the
# sampling error, and each of its work functions must hold its share of the
# samples in the thread's work within 2 points of the split by construction
# (50/30/20 and 70/30 of the same loop; sa_ping_a runs right after the
# switch in, sa_ping_c right before the switch out).
. "$(dirname "$0")/../cli/lib.sh"

require_root_bpf
require_report
require_samples pingpong
tmpdir
T=$tap_tmp
PP=$SA_SAMPLES/pingpong
F=4999
# 3 CPU-seconds a thread: ~15,000 samples, >= 11,000 in its work at 20 us
# a side (75% of its CPU here), the fewest that hold a 50% share within 2
# points at the z below (sd 0.47 points)
CPU_S=3
WORK_US=${SA_PINGPONG_WORK_US:-20}

# Chance of a false failure. Counts: a periodic sampler's count over a
# thread's runs varies less than a Poisson count (each run of length L gets
# floor or ceil of L/P samples); the bound uses the Poisson sd sqrt(E)
# anyway. Shares: binomial, sd = sqrt(p(1-p)/n) <= 0.5/sqrt(n). 4 targets
# x (2 counts + 5 shares) = 28 checks at z = 4.2 (two-sided 2.7e-5 each):
# 7.5e-4 per run < 0.1%.
Z=4.2

mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
TARGETS="cmd pid all cgroup"
plan 32

# run_target KIND: records one pingpong; leaves $T/KIND.{sa,out,err}
run_target()
{
	local kind=$1 R=$T/$1 pid rec cg
	local pp=("$PP" -c "$CPU_S" -w "$WORK_US")

	case $kind in
	cmd) "$SA_RECORD" -q -F $F -o "$R.sa" -- "${pp[@]}" >"$R.out" 2>"$R.err" ;;
	all) "$SA_RECORD" -q -a -F $F -o "$R.sa" -- "${pp[@]}" >"$R.out" 2>"$R.err" ;;
	pid | cgroup)
		"${pp[@]}" -g "$R.go" >"$R.out" &
		pid=$!
		if [ $kind = pid ]; then
			"$SA_RECORD" -q -p $pid -F $F -o "$R.sa" 2>"$R.err" &
		else
			cg=$mnt/sa-test-pp-$$
			mkdir "$cg" && echo $pid >"$cg/cgroup.procs"
			"$SA_RECORD" -q -G "$cg" -F $F -o "$R.sa" 2>"$R.err" &
		fi
		rec=$!
		# the file gets its name once sampling runs
		for _ in $(seq 300); do [ -e "$R.sa" ] && break; sleep 0.1; done
		touch "$R.go"
		wait $pid
		[ $kind = cgroup ] && kill -INT $rec
		wait $rec
		[ -n "$cg" ] && rmdir "$cg"
		;;
	esac
	# by tid: pingpong's calibration runs threads named sa-pong first
	"$SA_REPORT" --show-tid -o "$R.folded" "$R.sa" 2>>"$R.err"
}

# check_thread KIND NAME: count and shares of one thread of $T/KIND
check_thread()
{
	local kind=$1 name=$2 R=$T/$1 cpu n e lo hi fn own got nw tid root
	read -r tid cpu < <(awk -v t="$name" '$2 == "thread" && $3 == t { print $5, $9 }' "$R.out")
	# --show-tid roots: NAME-PID/TID
	root=$(awk -v t="$name" -v id="/${tid:-x}" '{ split($0, f, ";")
		if (index(f[1], t "-") == 1 && substr(f[1], length(f[1]) - length(id) + 1) == id) {
			print f[1]; exit } }' "$R.folded")
	n=$(awk -v t="${root:-x}" '{ split($0, f, ";"); if (f[1] == t) s += $NF } END { print s + 0 }' \
		"$R.folded")
	read -r e lo hi < <(awk -v c="${cpu:-0}" -v f=$F -v z=$Z 'BEGIN {
		e = c * f / 1e9; d = 0.01 * e + z * sqrt(e)
		printf "%.0f %.0f %.0f\n", e, e - d, e + d }')
	[ "${cpu:-0}" -gt 0 ] && [ "$n" -ge "$lo" ] && [ "$n" -le "$hi" ]
	ok $? "$kind: $name has $n samples for ${cpu:-?} ns of CPU: ratio $(
		awk -v n="$n" -v e="$e" 'BEGIN { printf "%.3f", e ? n / e : 0 }') (want $e, $lo..$hi)"
	# each function's share of the samples in the thread's work functions
	nw=0
	while read -r fn own; do
		got=$(in_fn "$R.folded" "${root:-x}" "$fn")
		nw=$((nw + got))
		echo "$fn $own $got"
	done < <(awk -v t="$name" '$2 == "func" && $3 == t { print $4, $10 }' "$R.out") >"$R.fns"
	while read -r fn own got; do
		got=$(awk -v k="$got" -v n="$nw" 'BEGIN { printf "%.2f", n ? 100 * k / n : 0 }')
		within "$got" "$own" 2
		ok $? "$kind: $fn $got% of $name's $nw samples in its work (split $own% +- 2)"
	done <"$R.fns"
}

# in_fn FOLDED THREAD FN: samples of THREAD whose stack holds FN
in_fn()
{
	awk -v t="$2" -v fn="$3" '{
		s = $0; sub(/ [0-9]+$/, "", s); split(s, f, ";")
		if (f[1] == t && index(";" s ";", ";" fn ";")) k += $NF
	} END { print k + 0 }' "$1"
}

for kind in $TARGETS; do
	if [ $kind = cgroup ] && { [ -z "$mnt" ] || ! mkdir "$mnt/sa-test-pp-probe-$$" 2>/dev/null; }; then
		skip 8 "$kind: no cgroup2 directory can be made here"
		continue
	fi
	[ $kind = cgroup ] && rmdir "$mnt/sa-test-pp-probe-$$"
	run_target $kind
	rate=$(awk '$2 == "work_us" { print $NF }' "$T/$kind.out")
	grep -q "thread sa-pong" "$T/$kind.out"
	ok $? "$kind: pingpong ran, ${rate:-?} round trips/s" || diag_file "$T/$kind.err"
	for name in sa-ping sa-pong; do
		check_thread $kind $name
	done
	[ -s "$T/$kind.folded" ] || diag_file "$T/$kind.err"
done

done_testing
