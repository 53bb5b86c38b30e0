#!/bin/bash
# SPDX-License-Identifier: MIT
# perf-phase.sh [RUNS]: is perf record, as make accuracy runs it, a sound
# reference for a server? Two perf records of one redis-server under
# redis-benchmark at the same time (999 Hz cpu-clock, -a -g, the second
# started 0.37 s after the first), once plainly and once with their timers'
# phase redrawn by perf-phase.py, RUNS pairs of each (default 4). Prints per
# recording the server's samples and the shares of them whose stacks hold
# ksys_write, ksys_read and do_epoll_wait (docs/accuracy.md, "perf's phase").
# Needs root, perf, redis-server and redis-tools; nothing else recording.
set -u
D=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
RUNS=${1:-4}
FREQ=999
DUR=5
# The oracle lives beside the clone (../shared/oracles), never in it.
COLLAPSE=$(dirname "$(cd "$D/../.." && pwd)")/shared/oracles/FlameGraph/stackcollapse-perf.pl
[ -f "$COLLAPSE" ] || { echo "perf-phase.sh: $COLLAPSE is missing" >&2; exit 2; }
T=$(mktemp -d /tmp/sa-perf-phase.XXXXXX)
trap 'rm -rf "$T"' EXIT
# shellcheck source=tests/accuracy/threads.sh
. "$D/threads.sh"

# one DIR: perf record into DIR/perf.data for DUR s, its phase redrawn with REDRAW=1
one_perf()
{
	local dir=$1 p
	mkdir -p "$dir"
	if [ "$REDRAW" = 1 ]; then
		mkfifo "$dir/ctl" "$dir/ack"
		perf record -q -B -e cpu-clock -F $FREQ -a -g --control "fifo:$dir/ctl,$dir/ack" \
			-o "$dir/perf.data" -- sleep $DUR >/dev/null 2>"$dir/err" &
		p=$!
		"$PY" "$D/perf-phase.py" "$dir/ctl" "$dir/ack" $FREQ 2>/dev/null &
		wait $p
		wait $!
	else
		perf record -q -B -e cpu-clock -F $FREQ -a -g -o "$dir/perf.data" -- sleep $DUR \
			>/dev/null 2>"$dir/err"
	fi
}

shares()
{
	perf script -i "$1/perf.data" --pid "$REDIS_PID" -F comm,pid,tid,time,event,ip,sym,dso \
		2>/dev/null | perl "$COLLAPSE" 2>/dev/null |
		awk -v name="$2" '{
			n = $NF; t += n
			if (/ksys_write/) w += n
			if (/ksys_read/) r += n
			if (/do_epoll_wait/) e += n
		} END {
			if (!t) t = 1
			printf "  %s: %d samples, ksys_write %.1f%%, ksys_read %.1f%%, do_epoll_wait %.1f%%\n",
				name, t, 100 * w / t, 100 * r / t, 100 * e / t
		}'
}

for REDRAW in 0 1; do
	for i in $(seq "$RUNS"); do
		start_redis
		sleep 1
		one_perf "$T/a" &
		a=$!
		sleep 0.37
		one_perf "$T/b"
		wait $a
		echo "redraw=$REDRAW run $i ($(date -u +%H:%M:%S)):"
		shares "$T/a" "first "
		shares "$T/b" "second"
		# shellcheck disable=SC2086
		kill $WPIDS 2>/dev/null
		wait 2>/dev/null
		rm -rf "$T/a" "$T/b"
	done
done
