#!/bin/bash
# SPDX-License-Identifier: MIT
# The whole cost of recording user stacks, side by side: the recorder's CPU
# time plus the run time of its BPF programs (bpf_stats, which the sampled
# tasks pay), for `--call-graph auto` (stacks walked in the kernel from CFI
# tables) on samples/workload-nofp against `--call-graph fp` on
# samples/workload (the same code with frame pointers), both -t 2 at FREQ
# Hz, attached with -p for SECONDS; then the per-switch cost of --off-cpu
# (frame-pointer walks before, CFI walks now: the same program) on the same
# pair. Prints each mode's recorder CPU, BPF ns per run, runs, total and the
# ratio auto/fp, each round, then their medians and spread. Alternating rounds.
# Needs root. docs/unwinding.md "Cost" has the numbers.
# usage: tests/bench/bench-uwcost.sh [BUILD_DIR]   env: FREQ (999), SECONDS_REC (10), ROUNDS (3),
#        OFFCPU (1; 0 leaves the --off-cpu pair out)
set -u
B=${1:-build}
FREQ=${FREQ:-999}
D=${SECONDS_REC:-10}
ROUNDS=${ROUNDS:-3}
REC=$B/bin/sa-record
die() { echo "bench-uwcost: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$REC" ] && [ -x "$B/samples/workload" ] && [ -x "$B/samples/workload-nofp" ] ||
	die "build $REC and $B/samples/workload{,-nofp} first"
tmp=$(mktemp -d)
STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
trap 'sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"; kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' \
	EXIT INT TERM
sysctl -qw kernel.bpf_stats_enabled=1

# bpf_ns PID: "runs ns" of the BPF programs PID (a sa-record) holds open,
# from their fds' fdinfo (bpftool cannot tell whose programs are whose)
bpf_ns() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '
		$1 == "prog_id:" { id = $2 }
		$1 == "run_time_ns:" && !(id in seen) { ns += $2 }
		$1 == "run_cnt:" && !(id in seen) { runs += $2; seen[id] = 1 }
		END { print runs + 0, ns + 0 }'
}

# one NAME WORKLOAD ARGS...: record WORKLOAD -t 2 with sa-record ARGS for D s;
# prints and keeps in $tmp/NAME.cost "recorder_cpu_ms bpf_ms"
one() {
	local name=$1 w=$2 wp tp rp runs=0 ns=0 cpu
	shift 2
	"$B/samples/$w" -t 2 -d $((D + 3)) >/dev/null &
	wp=$!
	sleep 0.5
	/usr/bin/time -f '%U %S' -o "$tmp/$name.time" \
		"$REC" -q -F "$FREQ" "$@" -p "$wp" -o "$tmp/$name.sa" --duration "$D" 2>"$tmp/$name.err" &
	tp=$!
	sleep 1
	rp=$(pgrep -P "$tp" sa-record)
	sleep $((D - 2))
	[ -n "$rp" ] && read -r runs ns < <(bpf_ns "$rp")
	wait "$tp"
	wait "$wp" 2>/dev/null
	cpu=$(awk '{print ($1 + $2) * 1000}' "$tmp/$name.time")
	printf '%-5s %-14s recorder %6.0f ms  bpf %7.1f ms (%6d runs, %5.0f ns/run)  total %7.1f ms  file %d B\n' \
		"$name" "$w" "$cpu" "$(awk -v n="$ns" 'BEGIN { print n / 1e6 }')" "$runs" \
		"$(awk -v n="$ns" -v r="$runs" 'BEGIN { print r ? n / r : 0 }')" \
		"$(awk -v c="$cpu" -v n="$ns" 'BEGIN { print c + n / 1e6 }')" "$(stat -c %s "$tmp/$name.sa")"
	echo "$cpu $(awk -v n="$ns" 'BEGIN { print n / 1e6 }')" >"$tmp/$name.cost"
}

# median (min..max) of the numbers on stdin
med() {
	sort -g | awk '{ a[NR] = $1 } END { if (!NR) exit
		m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%.2f (%.2f..%.2f)", m, a[1], a[NR] }'
}

# BPF run time is read 1 s before the end (D - 1 s of D): the ratio is unaffected.
# The order of the two alternates from round to round, so that neither always
# runs after the other (a build of the other's files in the page cache, a
# neighbour's load that comes and goes).
: >"$tmp/ratios"
: >"$tmp/sizes"
for r in $(seq "$ROUNDS"); do
	echo "== round $r: samples/workload{,-nofp} -t 2, $D s at $FREQ Hz"
	if [ $((r % 2)) = 1 ]; then
		one fp workload --call-graph fp
		one auto workload-nofp --call-graph auto
	else
		one auto workload-nofp --call-graph auto
		one fp workload --call-graph fp
	fi
	paste "$tmp/fp.cost" "$tmp/auto.cost" | awk '$2 > 0 && $4 > 0 {
		printf "auto/fp: recorder %.2fx, bpf %.2fx, total %.2fx\n", $3 / $1, $4 / $2, ($3 + $4) / ($1 + $2)
		print $3 / $1, ($3 + $4) / ($1 + $2) >> "'"$tmp/ratios"'" }'
	echo "$(stat -c %s "$tmp/auto.sa") $(stat -c %s "$tmp/fp.sa")" |
		awk '{ print $1 / $2 }' >>"$tmp/sizes"
	[ "${OFFCPU:-1}" = 0 ] && continue
	one fp-off workload --call-graph fp --off-cpu
	one auto-off workload-nofp --off-cpu
done
# a round whose BPF time could not be read (a recorder that ended early)
# gives no ratio rather than a recorder-only one
echo "summary: $(wc -l <"$tmp/ratios") rounds; auto/fp whole cost $(cut -d' ' -f2 "$tmp/ratios" | med)," \
	"recorder alone $(cut -d' ' -f1 "$tmp/ratios" | med); file size auto/fp $(med <"$tmp/sizes")" \
	"(median (min..max); targets: whole cost <= 1.25, file <= 2)"
