#!/bin/bash
# SPDX-License-Identifier: MIT
# Off-CPU stacks of a server nobody here wrote: Debian's redis-server under
# redis-benchmark, recorded with `sa-record --off-cpu -p` (the default call
# graph: walks from the in-kernel unwinder's CFI tables). Prints, per
# thread, the blocked time and the share of it whose stack reaches `main`
# or `start_thread` (a thread's start routine), in all and for the first
# second apart, and sa-record's unwinding line. Needs root, redis-server and redis-tools. docs/unwinding.md
# "Off-CPU on a server" has the numbers.
# usage: tests/bench/bench-offcpu-redis.sh [BUILD_DIR]   env: SECONDS_REC (10), ROUNDS (1)
set -u
B=${1:-build}
D=${SECONDS_REC:-10}
ROUNDS=${ROUNDS:-1}
REC=$B/bin/sa-record
REP=$B/bin/sa-report
PORT=${PORT:-16379}
die() { echo "bench-offcpu-redis: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$REC" ] && [ -x "$REP" ] || die "build $REC and $REP first"
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null ||
	die "needs redis-server and redis-tools (make deps-test)"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM

for r in $(seq "$ROUNDS"); do
	redis-server --port "$PORT" --save '' --appendonly no --dir "$tmp" >"$tmp/redis.log" 2>&1 &
	rp=$!
	for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
	timeout -s KILL $((D + 50)) "$REC" --off-cpu -p "$rp" --duration "$D" -o "$tmp/r.sa" \
		2>"$tmp/rec.err" &
	sp=$!
	sleep 1
	timeout $((D + 10)) redis-benchmark -p "$PORT" -q -c 20 -n 10000000 -t set,get,lpush,incr \
		>/dev/null 2>&1 &
	bp=$!
	wait "$sp"
	rc=$?
	kill "$bp" "$rp" 2>/dev/null
	wait "$bp" "$rp" 2>/dev/null
	echo "== round $r: sa-record --off-cpu -p redis-server --duration $D under redis-benchmark (exit $rc)"
	grep -E 'in-kernel unwinding|off-CPU:' "$tmp/rec.err"
	"$REP" --off-cpu --state blocked -o "$tmp/r.folded" "$tmp/r.sa" 2>/dev/null
	# per thread (comm): blocked time, and the share reaching main or start_thread
	awk '{ n = $NF; st = $0; sub(/ [0-9]+$/, "", st); split(st, f, ";"); t[f[1]] += n; T += n
		if (st ~ /;main;/ || st ~ /;start_thread;/ || st ~ /;main$/) { m[f[1]] += n; M += n } }
		END { for (c in t) printf "  %-16s blocked %8.3f s  reaching main or start_thread %6.2f%%\n", c, t[c] / 1e6, 100 * m[c] / t[c]
			printf "  all              blocked %8.3f s  reaching main or start_thread %6.2f%%\n", T / 1e6, T ? 100 * M / T : 0 }' \
		"$tmp/r.folded"
	# the first second (the tables of redis-server and libc still being
	# built: those switch-outs are walked by frame pointers, counted) and the rest
	for w in 0-1 1-1000; do
		"$REP" --off-cpu --state blocked --time "$w" "$tmp/r.sa" 2>/dev/null | awk -v w="$w" '
			{ n = $NF; T += n; if ($0 ~ /;main;/ || $0 ~ /;start_thread;/) M += n }
			END { printf "  seconds %-7s blocked %8.3f s  reaching main or start_thread %6.2f%%\n", w, T / 1e6, T ? 100 * M / T : 0 }'
	done
	[ -n "${KEEP:-}" ] && cp "$tmp/r.sa" "$KEEP.$r.sa"
done
