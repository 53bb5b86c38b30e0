#!/bin/bash
# SPDX-License-Identifier: MIT
# switch-delay.sh - an experiment, not a test (issue 36): how late the
# sampling interrupt arrives after its hrtimer's expiry, and how many
# samples were due before the CPU's last context switch (so were taken on
# the next task). Needs a build with switch-delay.patch applied:
#   git apply tests/accuracy/switch-delay.patch && make
#   tests/accuracy/switch-delay.sh build [RUNS]
#   git apply -R tests/accuracy/switch-delay.patch && make
# Per run: redis-server under redis-benchmark (2 clients, loopback) recorded
# with sa-record -p --off-cpu (the patch hooks sa_on_switch) at 999 Hz; the
# SA_X lines give the delay histogram and the flows across one switch
# (prev_target: due while redis ran, taken on another task; cur_target: the
# reverse), then "tid samples expected ratio" by cpuclock.py. SA_OPTS
# replaces --off-cpu (SA_OPTS= without the patch: the ratios alone).
set -u
B=$(cd "${1:-build}" && pwd) RUNS=${2:-2}
D=$(cd "$(dirname "$0")" && pwd)
for _ in $(seq "$RUNS"); do
	O=$(mktemp -d /tmp/sa-swdelay.XXXXXX)
	P=$((17000 + RANDOM % 1000))
	redis-server --port $P --bind 127.0.0.1 --save '' --appendonly no --dir "$O" \
		>"$O/redis.log" 2>&1 &
	R=$!
	for _ in $(seq 50); do redis-cli -p $P ping >/dev/null 2>&1 && break; sleep 0.1; done
	timeout -s KILL 20 redis-benchmark -p $P -c 2 -n 100000000 -q -t get,set \
		>/dev/null 2>&1 &
	W=$!
	sleep 1
	# shellcheck disable=SC2086 # SA_OPTS is an option list
	SA_X=1 timeout -s KILL 30 "$B/bin/sa-record" -q -F 999 ${SA_OPTS---off-cpu} -p $R -o "$O/sa.sa" \
		2>"$O/sa.err" &
	S=$!
	python3 "$D/cpuclock.py" trace $R "$O/trace" 6
	kill -INT $S
	wait $S
	kill $W $R
	wait $W $R 2>/dev/null
	grep SA_X "$O/sa.err"
	"$B/tests/tools/sa-dump" "$O/sa.sa" >"$O/dump"
	python3 "$D/cpuclock.py" sa "$O/trace" "$O/dump" 999
	rm -rf "$O"
done
