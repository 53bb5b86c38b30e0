#!/bin/bash
# SPDX-License-Identifier: MIT
# write-doc.sh - docs/accuracy.md from one run of tests/accuracy/run.sh
# (its --results file and RESULTS.fails): per program and mode, the largest
# self-share difference against perf and each tool's share of samples
# reaching main, with the run's date and commit. `make accuracy` calls it;
# nobody edits the tables by hand.
# Usage: tests/accuracy/write-doc.sh RESULTS OUT.md
set -eu
RES=$1
OUT=$2
[ -s "$RES" ] || { echo "write-doc: $RES is empty (run.sh did not get to a case)" >&2; exit 1; }
SRC=$(cd "$(dirname "$0")/../.." && pwd)
meta=$(sed -n 's/^#meta //p' "$RES")
get() { echo "$meta" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
commit=$(git -C "$SRC" describe --always --dirty 2>/dev/null || echo unknown)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
# sections measured by other scripts (each names its own) follow this line
# in OUT and are carried over
KEEP='<!-- written by hand from the scripts named below; write-doc.sh keeps it -->'
kept=$( [ -f "$OUT" ] && awk -v k="$KEEP" '$0 == k { on = 1 } on' "$OUT" || true)

{
	cat <<EOF
<!-- SPDX-License-Identifier: MIT -->
# Accuracy: sa against perf on the same processes

Written by \`make accuracy\` (tests/accuracy/run.sh, then tests/accuracy/write-doc.sh)
from one run on $(get date), commit \`$commit\`; regenerate it, do not edit it.
Machine: $cpu, $(nproc) CPUs, kernel $(uname -r), perf $(get perf).

## What is compared

Each case runs one program, then records it with \`sa-record\` and with
\`perf record -e cpu-clock\` at the same time, both at $(get freq) Hz for $(get dur) s
(\`-p\` on the process; the gcc loop's processes are short-lived, so it runs in a cgroup
of its own, recorded with \`sa-record -G\` and \`perf record -a -G\` one after the other,
perf first: perf 6.1 cannot read back what it recorded while sa-record's side band asked
the kernel for build ids in mapping records, and the loop compiles one file again and
again; the servers with
\`sa-record -p\` and \`perf record -a\`, perf's per-CPU events as sa's, kept to the
server's processes by \`perf script --pid\`): each tool samples
with its own events, at its own phase. perf's phase is redrawn every 5-15 ms
(tests/accuracy/perf-phase.py, through \`perf record --control\`), as sa-record
dithers its period: with one phase for a whole run, perf's samples of a server
see one instant of its request cycle ("perf's phase" below). PostgreSQL: the server's processes under
\`pgbench -S -c 2\`; redis-server under \`redis-benchmark -c 2 -t get,set\`; nginx
(master and one worker) serving a 4 KiB file to \`ab -k -c 2\`; workload:
samples/workload (with frame pointers for fp, without for dwarf and auto), whose own
measurement of its split is the truth for both tools.
Modes: sa's \`--call-graph fp\` against \`perf record -g\`, sa's \`dwarf\` and \`auto\`
against \`perf record --call-graph dwarf,16384\` (sa's stack copy size). sa-report's
folded stacks and perf script's, folded by FlameGraph's stackcollapse-perf.pl, are
compared function by function: the self share (samples whose leaf it is) and the total
share (samples whose stack holds it), for every function at 1% or more in either tool.

Not attribution, so normalized first (tests/accuracy/compare.py): the comm root; kernel
frames (user attribution is compared; a sample in a system call stays with its user
leaf); perf's \`[unknown]\` frames; compiler clone suffixes (\`.isra.0\`, \`.constprop.0\`,
\`.part.0\`, \`.cold\`, \`.localalias\`); names that share an address in the binaries'
symbol tables (\`malloc\`/\`__libc_malloc\`, \`__GI_\` names); glibc's ifunc variants
(\`__strcmp_avx2\`, \`__memmove_evex_unaligned_erms\`: which runs depends on the CPU).
Inline frames are dropped on both sides, and in dwarf and auto, where perf shows them,
compared again kept.

Tolerance: the difference of two binomial shares p over n_sa and n_perf samples has
sd = sqrt(p(1-p)(1/n_sa + 1/n_perf)); each test fails beyond z sd, with z chosen so the
chance of any false failure in the whole run is under 0.1% (Bonferroni: the run's 0.1%
split equally among its comparisons, each comparison's part among its functions).
Where the two are expected to differ the totals are not compared (the reason is in the
table's notes); the \`workload\` rows check both against the split the workload measures.

"Reaching main": samples whose stack holds \`main\` or \`__libc_start_call_main\` (main's
caller in glibc: a stripped binary's main has no name).

## Results

| program | mode | samples sa / perf | largest self-share difference, sa - perf (points) | in | z limit | reaching main, sa / perf | result |
|---|---|---|---|---|---|---|---|
EOF
	awk -F'\t' '!/^#/ && NF >= 3 && $2 != "threads" && $2 != "offcpu" {
		delete kv
		n = split($3, f, " ")
		for (i = 2; i <= n; i++) { split(f[i], p, "="); kv[p[1]] = p[2] }
		fn = kv["maxfn"]; gsub(/\|/, "\\|", fn)
		printf "| %s | %s | %s / %s | %s | `%s` | %s | %s%% / %s%% | %s |\n", $1, $2,
			kv["n_sa"], kv["n_perf"], kv["maxself"], fn, kv["z"], kv["main_sa"],
			kv["main_perf"], f[1] == "pass" ? "pass" : "**fail** (" kv["fails"] ")"
	}' "$RES"
	if grep -q "	threads	" "$RES"; then
		echo
		echo "## Per-thread counts against CPU time"
		echo
		echo "Each thread's samples x period / its CPU time (schedstat over the"
		echo "recording's full intervals, or the ping-pong's own thread CPU clocks;"
		echo "tests/accuracy/threads.sh): sa is checked (1% plus the sampling error),"
		echo "perf's per-task and per-CPU ratios are shown beside. docs/recording.md,"
		echo '"Counts at the context switch", says why they differ.'
		echo
		echo "| program | result: ratios per thread |"
		echo "|---|---|"
		awk -F'\t' '!/^#/ && $2 == "threads" { r = $3; gsub(/\|/, "\\|", r); printf "| %s | %s |\n", $1, r }' "$RES"
	fi
	if grep -q "	offcpu	" "$RES"; then
		echo
		echo "## Off-CPU stacks of servers"
		echo
		echo "Blocked time of a server under load, \`sa-record --off-cpu -p\` with the"
		echo "default call graph (tests/accuracy/offcpu.sh): at least 95% must reach"
		echo "\`main\` or \`start_thread\`."
		echo
		echo "| program | result |"
		echo "|---|---|"
		awk -F'\t' '!/^#/ && $2 == "offcpu" { r = $3; gsub(/\|/, "\\|", r); printf "| %s | %s |\n", $1, r }' "$RES"
	fi
	echo
	echo "## Failed comparisons"
	echo
	if [ -s "$RES.fails" ]; then
		# a failure seen again with inline frames kept is listed once
		awk -F'\t' '{ k = $1 " " $2 " " $3; sub(/with inline frames: /, "", k); sub(/, z .*/, "", k)
			if (!(k in seen)) printf "- %s %s: %s\n", $1, $2, $3; seen[k] = 1 }' "$RES.fails"
	else
		echo "None."
	fi
	echo
	echo "## Totals not compared"
	echo
	sed -n 's/^#nototals //p' "$RES" | awk -F'\t' '{ printf "- %s %s: %s\n", $1, $2, $3 }'
	if grep -q '^#skipped ' "$RES"; then
		echo
		echo "## Frames not compared"
		echo
		sed -n 's/^#skipped //p' "$RES" | awk -F'\t' '{ printf "- %s %s: %s\n", $1, $2, $3 }'
	fi
	if [ -n "$kept" ]; then
		echo
		echo "$kept"
	fi
} >"$OUT.new"
mv "$OUT.new" "$OUT"
