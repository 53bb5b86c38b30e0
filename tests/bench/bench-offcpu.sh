#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-offcpu.sh - the cost of sa-record --off-cpu on a context-switch-heavy
# load: `perf bench sched pipe -T` (two threads passing a token through two
# pipes, two switches per op), both threads pinned to CPU 1 with taskset so
# that every op is two context switches there whatever the scheduler does
# (unpinned, its throughput varied 3x between runs), with no tool, with `sa-record -a` (on-CPU
# samples only), with `sa-record --off-cpu -a`, and with an equivalent
# bpftrace program keyed by stacks (at switch-out: time and both stack ids
# by tid; at switch-in: a stats() of the elapsed time by tid and stacks).
# Prints each mode's throughput, its loss against the same round's run with
# no tool (pairing cancels the shared host's drifts), the per-event cost of the switch program from bpf_stats
# (run_time_ns / run_cnt, kernel.bpf_stats_enabled turned on for the run
# and restored), and the off-CPU periods sa-record lost. bpftrace 0.17 has
# no raw or BTF tracepoints: its program is on the perf tracepoint
# sched:sched_switch, which needs tracefs; it is mounted in a private mount
# namespace (unshare -m) for bpftrace alone. Medians with min..max of
# alternating rounds. Needs root, perf and bpftrace.
# Usage: tests/bench/bench-offcpu.sh [ROUNDS [LOOPS]]   (default 5 300000)
set -u
ROUNDS=${1:-5}
LOOPS=${2:-300000}
SA_BUILD=${SA_BUILD:-build}
REC=$SA_BUILD/bin/sa-record
MODES=${MODES:-none sa sa-off bpftrace}
CPU=${CPU:-1}
T=$(mktemp -d /tmp/sa-bench-off.XXXXXX)
STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
trap 'sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"; kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
command -v perf >/dev/null || { echo "perf not found"; exit 1; }
[ -x "$REC" ] || { echo "$REC not built"; exit 1; }
case " $MODES " in *" bpftrace "*)
	command -v bpftrace >/dev/null || { echo "bpftrace not found (apt-get install bpftrace)"; exit 1; } ;;
esac
sysctl -qw kernel.bpf_stats_enabled=1

cat >"$T/off.bt" <<'EOF'
tracepoint:sched:sched_switch
{
	if (args->prev_pid != 0) {
		@start[args->prev_pid] = nsecs;
		@ks[args->prev_pid] = kstack;
		@us[args->prev_pid] = ustack;
	}
	$s = @start[args->next_pid];
	if ($s != 0) {
		@off[args->next_pid, @us[args->next_pid], @ks[args->next_pid]] = stats(nsecs - $s);
		delete(@start[args->next_pid]);
	}
}
END { clear(@start); clear(@ks); clear(@us); }
EOF

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
range() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s..%s", lo, hi }'; }
col() { awk -v m="$1" -v c="$2" '$1 == m { print $c }' "$T/res"; }

# prog_ids: ids of the loaded BPF programs, one per line
prog_ids() { bpftool prog show -j | python3 -c 'import json, sys; [print(p["id"]) for p in json.load(sys.stdin)]'; }

# switch_cost IDS_BEFORE: "run_cnt run_time_ns" of the new program on sched_switch
switch_cost() {
	bpftool prog show -j | python3 -c '
import json, sys
old = set(int(x) for x in open(sys.argv[1]).read().split())
for p in json.load(sys.stdin):
    if p["id"] in old: continue
    if p.get("name") in ("sa_on_switch", "sched_switch"):
        print(p.get("run_cnt", 0), p.get("run_time_ns", 0)); break
else:
    print(0, 0)' "$1"
}

# wait_new_prog IDS_BEFORE NAME: until a new program NAME is loaded (30 s at most)
wait_new_prog() {
	for _ in $(seq 300); do
		bpftool prog show -j | python3 -c '
import json, sys
old = set(int(x) for x in open(sys.argv[1]).read().split())
sys.exit(0 if any(p["id"] not in old and p.get("name") == sys.argv[2]
                  for p in json.load(sys.stdin)) else 1)' "$1" "$2" && return 0
		sleep 0.1
	done
	return 1
}

# one MODE ROUND: run the load under MODE; appends "MODE ops_s cnt ns lost" to res
one() {
	local mode=$1 pid= prog= ops cost lost=-
	prog_ids >"$T/ids"
	case $mode in
	sa) "$REC" -q -a -o "$T/r.sa" 2>"$T/tool.err" & pid=$! prog=sa_on_cpu_sample ;;
	sa-off) "$REC" -a --off-cpu -o "$T/r.sa" 2>"$T/tool.err" & pid=$! prog=sa_on_switch ;;
	bpftrace)
		unshare -m sh -c 'mount -t tracefs nodev /sys/kernel/tracing &&
			exec bpftrace "$0"' "$T/off.bt" >/dev/null 2>"$T/tool.err" &
		pid=$! prog=sched_switch ;;
	esac
	if [ -n "$prog" ] && ! wait_new_prog "$T/ids" "$prog"; then
		echo "bench-offcpu: $mode did not start" >&2
		cat "$T/tool.err" >&2
		kill -INT "$pid" 2>/dev/null
		wait
		return
	fi
	ops=$(taskset -c "$CPU" perf bench sched pipe -T -l "$LOOPS" 2>/dev/null |
		awk '/ops\/sec/ { print $1 }')
	cost=$(switch_cost "$T/ids")
	if [ -n "$pid" ]; then
		kill -INT "$pid"
		wait "$pid" 2>/dev/null
	fi
	[ "$mode" = sa-off ] &&
		lost=$(sed -n 's/.*off-CPU: .* (\([0-9]*\) shorter .*, \([0-9]*\) lost,.*/\2/p' "$T/tool.err")
	[ "$mode" = sa-off ] && grep 'off-CPU' "$T/tool.err" >"$T/last-off"
	[ "$mode" = sa ] && cost="0 0"
	echo "$mode $ops $cost ${lost:--} $2" >>"$T/res"
}

: >"$T/res"
for r in $(seq "$ROUNDS"); do
	for m in $MODES; do
		one "$m" "$r"
	done
done

echo "taskset -c $CPU perf bench sched pipe -T -l $LOOPS, $ROUNDS alternating rounds; medians (min..max)"
echo ""
echo "| mode | ops/s | loss vs none | switch program runs | ns per run | periods lost |"
echo "|---|---|---|---:|---|---|"
# paired_loss MODE: the round-by-round % throughput loss against "none"
paired_loss() {
	awk -v m="$1" '$1 == "none" { b[$6] = $2 } $1 == m { o[$6] = $2 }
		END { for (r in o) if (b[r] > 0) printf "%.1f\n", 100 * (b[r] - o[r]) / b[r] }' "$T/res"
}
for m in $MODES; do
	ops=$(col "$m" 2 | median)
	loss="$(paired_loss "$m" | median)% ($(paired_loss "$m" | range))"
	runs=$(col "$m" 3 | median)
	per=$(awk -v m="$m" '$1 == m && $3 > 0 { print $4 / $3 }' "$T/res" | median)
	perr=$(awk -v m="$m" '$1 == m && $3 > 0 { printf "%.0f\n", $4 / $3 }' "$T/res" | range)
	lost=$(col "$m" 5 | sort -g | tail -1)
	case $m in none) loss=- runs=- ;; esac
	[ -n "$per" ] && per="$(printf '%.0f' "$per") ($perr)" || per=-
	echo "| $m | $ops ($(col "$m" 2 | range)) | $loss | ${runs:--} | $per | ${lost:--} |"
done
echo ""
[ -f "$T/last-off" ] && sed 's/^/last sa-record --off-cpu run: /' "$T/last-off"
