# SPDX-License-Identifier: MIT
# offcpu.sh - sourced by run.sh: PROG:offcpu, the blocked time of a server
# nobody here wrote, under load, recorded with `sa-record --off-cpu -p`
# and the default call graph, whose off-CPU stacks the in-kernel unwinder
# walks from the binaries' CFI (docs/unwinding.md). At least 95% of the
# blocked time (`sa-report --off-cpu --state blocked`) must reach `main` or
# `start_thread` (a thread's start routine): a stack that stops in the
# libc wrapper (epoll_wait, sigsuspend) reaches neither. Every stay is
# counted, none sampled, so the share has no sampling error to allow for:
# what varies between runs is how many switch-outs come between the
# attach and the capture of -p's targets, whose ranges reach the kernel
# only then: those are walked by frame pointers (docs/unwinding.md).

# offcpu_case PROG: one TAP point.
offcpu_case()
{
	local prog=$1 dir=$T/$1-offcpu res share
	mkdir -p "$dir"
	WPIDS=
	if ! "start_$prog" offcpu; then
		echo "the workload did not start" >>"$dir/why"
	else
		sleep 1 # the load runs before the recorder attaches, as on a host in use
		timeout -s KILL $((DUR + 30)) "$REC" --off-cpu -p "$PG_PIDS" --duration "$DUR" \
			-o "$dir/sa.sa" 2>"$dir/sa.err" ||
			echo "sa-record exited $?: $(tail -1 "$dir/sa.err")" >>"$dir/why"
	fi
	stop_prog "$prog"
	"$REP" --off-cpu --state blocked -o "$dir/blocked.folded" "$dir/sa.sa" 2>"$dir/report.err" ||
		echo "sa-report failed: $(tail -1 "$dir/report.err")" >>"$dir/why"
	# per process name: blocked time and the part reaching main or start_thread
	awk '{ n = $NF; st = $0; sub(/ [0-9]+$/, "", st); split(st, f, ";"); t[f[1]] += n; T += n
		if (st ~ /;(main|start_thread)(;|$)/) { m[f[1]] += n; M += n } }
		END { for (c in t) printf "# %s: %.3f s blocked, %.2f%% reaching main or start_thread\n",
			c, t[c] / 1e6, 100 * m[c] / t[c]
			printf "share %.2f %.3f\n", T ? 100 * M / T : 0, T / 1e6 }' \
		"$dir/blocked.folded" >"$dir/share" 2>/dev/null
	share=$(awk '/^share/ { print $2 }' "$dir/share")
	[ -s "$dir/blocked.folded" ] || echo "no blocked time recorded" >>"$dir/why"
	if [ ! -s "$dir/why" ] && awk -v s="${share:-0}" 'BEGIN { exit !(s >= 95) }'; then
		res="pass: ${share}% of $(awk '/^share/ { print $3 }' "$dir/share") s blocked reaches main or start_thread (>= 95%)"
	else
		res="fail: ${share:-no}% of the blocked time reaches main or start_thread (< 95%)"
	fi
	grep '^#' "$dir/share"
	grep -E 'in-kernel unwinding|off-CPU:' "$dir/sa.err" | sed 's/^/# /'
	report_case "$prog" offcpu "$dir" "$res"
}
