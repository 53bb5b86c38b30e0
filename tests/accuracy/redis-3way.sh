#!/bin/bash
# SPDX-License-Identifier: MIT
# redis-3way.sh - one redis-server under redis-benchmark, recorded at once
# by perf -p (per-task cpu-clock events), perf -a (one cpu-clock event per
# CPU, the kind sa uses) and sa-record -p, all at 999 Hz with frame
# pointers; prints each one's self shares of the user leaves over 2% (issue
# 36: which sampler puts how much in epoll_wait, the call the server blocks
# in). perf -a's samples are kept to the server by perf script --pid.
# perf starts first (perf 6.1 aborts beside a BPF program), so run it
# alone: flock -x /tmp/bpf.lock tests/accuracy/redis-3way.sh [BUILD]
set -u
B=$(cd "${1:-build}" && pwd) || exit 2
D=$(cd "$(dirname "$0")" && pwd)
COLLAPSE=$(dirname "$(cd "$D/../.." && pwd)")/shared/oracles/FlameGraph/stackcollapse-perf.pl
[ -f "$COLLAPSE" ] || { echo "no $COLLAPSE" >&2; exit 1; }
T=$(mktemp -d /tmp/sa-3way.XXXXXX)
export PERF_BUILDID_DIR=$T/bid
mkdir -p "$PERF_BUILDID_DIR"
PORT=$((17000 + $$ % 1000))
redis-server --port $PORT --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
	--dir "$T" >"$T/redis.log" 2>&1 &
R=$!
trap 'kill $R 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 50); do redis-cli -p $PORT ping >/dev/null 2>&1 && break; sleep 0.1; done
timeout -s KILL 20 redis-benchmark -p $PORT -c 2 -n 100000000 -q -t get,set >/dev/null 2>&1 &
sleep 1
perf record -q -B -e cpu-clock -F 999 -g -p $R -o "$T/p.data" -- sleep 8 >/dev/null 2>&1 &
P1=$!
perf record -q -B --no-bpf-event -e cpu-clock -F 999 -g -a -o "$T/a.data" -- sleep 8 >/dev/null 2>&1 &
P2=$!
sleep 1.5
"$B/bin/sa-record" -q -F 999 --call-graph fp -p $R --duration 5 -o "$T/s.sa" 2>"$T/s.err" ||
	echo "sa-record failed: $(tail -1 "$T/s.err")" >&2
wait $P1 $P2
"$B/bin/sa-report" --annotate-frames "$T/s.sa" >"$T/s.folded" 2>/dev/null
# perf script 6.1 aborts partway through some whole-host recordings here
# (util/build-id.c): said, and the samples before the abort are used
for x in p a; do
	perf script -i "$T/$x.data" --pid $R -F comm,pid,tid,time,event,ip,sym,dso 2>/dev/null |
		perl "$COLLAPSE" --kernel >"$T/$x.folded" 2>/dev/null
	rc=${PIPESTATUS[0]}
	[ "$rc" = 0 ] || echo "# perf script of perf -$x exited $rc: its samples up to there"
done
echo "# $(date -u +%H:%MZ), self shares of user leaves (kernel frames dropped)"
for x in s:sa p:perf-p a:perf-a; do
	awk -v who="${x#*:}" '{ n = $NF; $NF = ""; k = split($0, fr, ";"); leaf = ""
		for (i = 2; i <= k; i++) { f = fr[i]; sub(/ +$/, "", f)
			if (f !~ /_\[k\]$/ && f != "[unknown]") leaf = f }
		sub(/_\[[ij]\]$/, "", leaf); sub(/^__GI_/, "", leaf); sub(/^__libc_/, "", leaf)
		sub(/^__/, "", leaf); if (leaf == "") leaf = "[no user frame]"
		c[leaf] += n; t += n }
	END { for (l in c) if (c[l] / t > 0.02) printf "%-7s %5.1f%% %s (of %d)\n", who, 100 * c[l] / t, l, t }' \
		"$T/${x%%:*}.folded" | sort -k2 -rn
done
