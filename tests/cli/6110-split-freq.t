#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# Periodic code and a periodic sampler (issue 16): cpu-clock fires on a
# fixed grid of 1e9/F ns, so a loop whose round divides that period was
# sampled at one phase again and again and its split came out wrong (issue:
# 53.5-56.4% for a 60% caller at 999 Hz with --call-graph dwarf). sa-record
# now draws each CPU's period at random around 1/F every few ms (docs/
# recording.md "Sampling period"). workload-leaf -p paces its rounds (one
# call of each frameless leaf, 80% of the round, then a wait outside every
# leaf) to exactly a tenth of the period: without the dithering every sample
# fell in one leaf. At 999, 997 and 1009 Hz, dwarf and auto must give the
# leaves' split by construction within 2 points, the mean rate must stay F
# and the recording must still say F. Each frequency runs once and each
# mode at least once (the dithering is the sampler's, the same in both).
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples workload-leaf
tmpdir
T=$tap_tmp
W=$SA_SAMPLES/workload-leaf
RUNS="999:dwarf 997:auto 1009:auto"

plan 23

# Chance of a false failure: the leaves' shares are binomial in n >= 10000
# leaf samples (two workloads of 11 CPU-seconds each: 21,978 samples at
# 999 Hz, of which the leaves hold 61-75% depending on the CPU and the
# load, so n >= 10,000 holds wherever they hold 46% or more; with 8 s,
# 61% gave 9,760 on a loaded host). sd = sqrt(p(1-p)/n): 60%: 0.49 points, 2 points = 4.08 sd,
# two-sided 4.5e-5; 30%: 0.46, 4.36 sd, 1.3e-5; 10%: 0.30, 6.7 sd, 2e-11;
# helper 15%: 0.36, 5.6 sd, 2e-8. Per recording 5.8e-5, three recordings
# 1.7e-4 < 0.1%. Samples within one dither window are not independent
# (phases a fixed step apart), but that step is a fresh random one in each
# window, which spreads them at least as evenly as independent draws.
MIN_LEAF=10000
CPU_S=11

# leaf_shares FOLDED: "LEAF_SAMPLES ALL_SAMPLES A B C HELPER" (shares in % of leaf samples)
leaf_shares()
{
	awk -v comm=workload-leaf '
	{
		n = $NF; st = $0; sub(/ [0-9]+$/, "", st)
		split(st, f, ";")
		if (f[1] != comm) next
		all += n; s = ";" st ";"
		if (index(s, ";sa_leaf_a;")) a += n
		if (index(s, ";sa_leaf_b;")) b += n
		if (index(s, ";sa_leaf_c;")) c += n
		if (index(s, ";sa_shared_helper;")) h += n
	}
	END {
		l = a + b + c; d = l ? l : 1
		printf "%d %d %.2f %.2f %.2f %.2f\n", l, all, 100 * a / d, 100 * b / d,
		       100 * c / d, 100 * h / d
	}' "$1"
}

expect_n=0 got_n=0
for run in $RUNS; do
	F=${run%%:*} CG=${run#*:}
	# the kernel's period for F (perf_swevent_init_hrtimer: NSEC_PER_SEC / F)
	round=$(awk -v f="$F" 'BEGIN { printf "%.1f", int(1e9 / f) / 10 }')
	{
		R=$T/$F-$CG
		"$SA_RECORD" -F "$F" --call-graph "$CG" -o "$R.sa" -- sh -c \
			"'$W' -c $CPU_S -p $round >'$R.w1' & '$W' -c $CPU_S -p $round >'$R.w2'; wait" \
			2>"$R.err"
		rc=$?
		ok $rc "$F Hz $CG: sa-record -- two workload-leaf -p $round exits 0 (got $rc)"
		[ $rc -eq 0 ] || diag_file "$R.err"
		# losses are not even (a full copy ring buffer drops only samples
		# in frameless code): at most 0.1% of kept moves a share 0.1 point
		read -r kept lost < <(sed -n 's/.*: \([0-9]*\) samples kept of .* \([0-9]*\) lost,.*/\1 \2/p' \
			"$R.err")
		[ -n "$lost" ] && [ $((lost * 1000)) -le "$kept" ]
		ok $? "$F Hz $CG: ${lost:-?} samples lost of ${kept:-?} kept (want <= 0.1%)"
		"$SA_REPORT" -o "$R.folded" "$R.sa" 2>"$R.rerr" || diag_file "$R.rerr"
		read -r nl nall a b c h < <(leaf_shares "$R.folded")
		ge "$nl" $MIN_LEAF
		ok $? "$F Hz $CG: $nl leaf samples of $nall (want >= $MIN_LEAF)"
		# shares by construction: leaves 60/30/10 units, the helper 10 units
		# of sa_leaf_b and 5 of sa_leaf_c
		set -- sa_leaf_a "$a" 60 sa_leaf_b "$b" 30 sa_leaf_c "$c" 10 \
			sa_shared_helper "$h" 15
		while [ $# -gt 0 ]; do
			within "$2" "$3" 2
			ok $? "$F Hz $CG: $1 $2% of leaf samples (want $3 +- 2)"
			shift 3
		done
		cpu=$(cat "$R.w1" "$R.w2" | awk '/thread cpu/ { s += $4 } END { print s + 0 }')
		expect_n=$(awk -v e="$expect_n" -v f="$F" -v c="$cpu" 'BEGIN { print e + f * c }')
		got_n=$((got_n + nall + ${lost:-0}))
	}
done

# The mean rate: samples of the workloads (kept or lost) per CPU-second,
# pooled over the three recordings (~48 CPU-seconds). The dithered count per
# window varies (sd ~3.2 samples per ~10 ms window), 0.47% over the pool;
# start-up outside the workloads' own clocks adds <= 0.7%. 3% is 4.9 sd
# from either. Without the correction for the restarts a busy workload got
# 91-93% of -F (two runs).
r=$(awk -v g="$got_n" -v e="$expect_n" 'BEGIN { printf "%.2f", e ? 100 * g / e : 0 }')
within "$r" 100 3
ok $? "samples per CPU-second are $r% of -F over the three recordings (want 100 +- 3)"

"$SA_REPORT" --info "$T/1009-auto.sa" >"$T/info" 2>&1
grep -q "cpu-clock at 1009 Hz" "$T/info"
rc=$?
ok $rc "sa-report --info still states -F 1009 (cpu-clock at 1009 Hz)"
[ $rc -eq 0 ] || diag_file "$T/info"

done_testing
