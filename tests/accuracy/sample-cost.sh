#!/bin/bash
# SPDX-License-Identifier: MIT
# The cost of one run of sa_on_cpu_sample (kernel.bpf_stats_enabled:
# run_time_ns / run_cnt of the recorder's own program), for sa-record builds
# taken in turn on the same workload: issue 36's bound is 10% over main's.
# usage: tests/accuracy/sample-cost.sh RUNS BUILD... [-- WORKLOAD...]
# default workload: BUILD1's samples/pingpong -c 2 -w 20 (4999 Hz, -- CMD)
set -eu
runs=$1
shift
builds=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	builds+=("$1")
	shift
done
[ "${1:-}" = -- ] && shift
wl=("$@")
[ ${#wl[@]} -gt 0 ] || wl=("${builds[0]}/samples/pingpong" -c 2 -w 20)
was=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q kernel.bpf_stats_enabled=1
trap 'sysctl -q kernel.bpf_stats_enabled=$was' EXIT
tmp=$(mktemp -d /tmp/sa-cost.XXXXXX)
trap 'sysctl -q kernel.bpf_stats_enabled=$was; rm -rf "$tmp"' EXIT

# progs: "id run_time_ns run_cnt" of every sa_on_cpu_sample loaded now
progs()
{
	bpftool -j prog show 2>/dev/null | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("name", "").startswith("sa_on_cpu_sam"):
        print(p["id"], p.get("run_time_ns", 0), p.get("run_cnt", 0))'
}

# cost BUILD: "id ns runs" of the recorder's sa_on_cpu_sample, read just
# before it stops; its program is the one new since it started (bpftool
# here shows no pids), the newest if another recorder started meanwhile
cost()
{
	local rec before last=
	before=$(progs | cut -d' ' -f1 | tr '\n' ' ')
	timeout -s KILL 60 "$1/bin/sa-record" -q -F 4999 -o "$tmp/c.sa" -- "${wl[@]}" \
		>/dev/null 2>&1 &
	rec=$!
	while kill -0 $rec 2>/dev/null; do
		sleep 0.1
		cur=$(progs | awk -v b=" $before" 'index(b, " " $1 " ") == 0' | sort -n | tail -1)
		[ -n "$cur" ] && last=$cur
	done
	wait $rec || true
	echo "${last:-none}"
}

for r in $(seq "$runs"); do
	for b in "${builds[@]}"; do
		set -- $(cost "$b")
		if [ $# -ge 3 ] && [ "$3" -gt 0 ]; then
			echo "run $r $b: $(awk -v t="$2" -v n="$3" 'BEGIN { printf "%.0f ns/run over %d runs", t / n, n }') load $(cut -d' ' -f1 /proc/loadavg)"
		else
			echo "run $r $b: no reading"
		fi
	done
done
