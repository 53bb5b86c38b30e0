# SPDX-License-Identifier: MIT
# threads.sh - sourced by run.sh: the per-thread CPU-time oracle (issue 36).
# Cases PROG:threads: each busy thread's sa samples x period against its CPU
# time from /proc/PID/task/TID/schedstat (PostgreSQL's backends, redis's
# threads; cpuclock.py), and the ping-pong's threads against their own CPU
# clocks (pingpong.py). perf's ratios are printed beside, not checked.

REDIS_PORT=$((16379 + $$ % 1000))
REDIS_PID=
start_redis()
{
	redis-server --port $REDIS_PORT --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no --dir "$T" >"$T/redis.log" 2>&1 &
	REDIS_PID=$!
	for _ in $(seq 50); do
		redis-cli -p $REDIS_PORT ping >/dev/null 2>&1 && break
		sleep 0.1
	done
	timeout -s KILL $((DUR + 8)) redis-benchmark -p $REDIS_PORT -c 2 -n 100000000 -q \
		-t get,set >/dev/null 2>&1 &
	WPIDS="$! $REDIS_PID"
	PG_PIDS=$REDIS_PID
}

# threads_sa PROG DIR: perf record -p (per-task events, started first: see
# record_both) and sa-record -p on PROG's server pids, while cpuclock.py
# traces each thread's schedstat run time every 20 ms; each thread's sa
# samples in the recording's full intervals against its CPU time over
# exactly those intervals (perf's: over its samples' CLOCK_MONOTONIC times).
threads_sa()
{
	local prog=$1 dir=$2 z rec perfpid
	mkdir -p "$dir"
	WPIDS=
	"start_$prog" || { echo "the workload did not start" >>"$dir/why"; return; }
	sleep 1
	perf record -q -e cpu-clock -F $FREQ -k CLOCK_MONOTONIC -p "$PG_PIDS" \
		-o "$dir/perf.data" >/dev/null 2>"$dir/perf.err" &
	perfpid=$!
	sleep 1
	"$REC" -q -F $FREQ -p "$PG_PIDS" -o "$dir/sa.sa" 2>"$dir/sa.err" &
	rec=$!
	"$PY" "$D/cpuclock.py" trace "$PG_PIDS" "$dir/trace" "$((DUR + 2))"
	kill -INT $rec $perfpid
	wait $rec || echo "sa-record failed: $(tail -1 "$dir/sa.err")" >>"$dir/why"
	wait $perfpid
	stop_prog "$prog"
	"$B/tests/tools/sa-dump" "$dir/sa.sa" >"$dir/dump" 2>"$dir/report.err"
	"$PY" "$D/cpuclock.py" sa "$dir/trace" "$dir/dump" $FREQ >"$dir/sa.ratios"
	perf script -i "$dir/perf.data" -F tid,time >"$dir/perf.txt" 2>/dev/null &&
		"$PY" "$D/cpuclock.py" perf "$dir/trace" "$dir/perf.txt" $FREQ >"$dir/perf.ratios"
	# 1% plus z sqrt(E), ALPHA shared by up to 20 threads
	z=$("$PY" -c "import statistics; print(statistics.NormalDist().inv_cdf(1 - $ALPHA / 40))")
	awk -v z="$z" '{
		tol = 0.01 * $3 + z * sqrt($3)
		if ($2 < $3 - tol || $2 > $3 + tol)
			printf "thread %s: %d samples for %.0f expected (+-%.0f)\n", $1, $2, $3, tol
	}' "$dir/sa.ratios" >>"$dir/why"
	[ -s "$dir/sa.ratios" ] || echo "no thread with 100 expected samples" >>"$dir/why"
	{
		awk '{ s = s sprintf(" %s %.3f", $1, $4) } END { print "sa" s }' "$dir/sa.ratios"
		awk '{ s = s sprintf(" %s %.3f", $1, $4) } END { print "perf -p" s }' \
			"$dir/perf.ratios" 2>/dev/null || echo "perf -p: no recording"
	} >"$dir/ratios"
}

# threads_case PROG: one TAP point
threads_case()
{
	local prog=$1 dir=$T/$1-threads res
	if [ "$prog" = pingpong ]; then
		mkdir -p "$dir"
		"$PY" "$D/pingpong.py" "$B" --freqs $FREQ --work 400,40,5 --cpu 2 \
			--samplers sa-cmd,sa-p,sa-a,perf-task,perf-a --tap "$ALPHA" >"$dir/tap" 2>&1
		sed -n 's/^not ok [0-9]* - /fail /p' "$dir/tap" >>"$dir/why"
		sed -n 's/^\(ok\|not ok\) [0-9]* - /# /p; /^# perf/p' "$dir/tap" >"$dir/ratios"
	else
		threads_sa "$prog" "$dir"
	fi
	if [ -s "$dir/why" ]; then res="fail $(head -1 "$dir/why")"; else res="pass $(tr '\n' ' ' <"$dir/ratios")"; fi
	report_case "$prog" threads "$dir" "$res"
	sed 's/^/# /' "$dir/ratios"
}
