#!/bin/bash
# SPDX-License-Identifier: MIT
# run-tsan.t - sa-report's DWARF worker thread (report/symbols/dwprefetch.c) under
# ThreadSanitizer (make check-tsan builds $SA_BUILD/tsan/bin/sa-report with
# -fsanitize=thread): real dwarf and fp recordings whose libc debug file
# (libc6-dbg) the worker loads, in four modes each. A pass needs no TSan
# report, exit 0, the output of the plain build byte for byte, and the
# worker started (strace sees a thread created).
. "$(dirname "$0")/../cli/lib.sh"

TSAN=${SA_TSAN_REPORT:-$SA_BUILD/tsan/bin/sa-report}
CORPUS=$SA_SRC/tests/fuzz/corpus/fuzz_report
MODES=("" "--lines" "--svg" "--top")
require_report
[ -x "$TSAN" ] || skip_all "no ThreadSanitizer build ($TSAN): make check-tsan"
command -v strace >/dev/null || skip_all "strace not installed"
tmpdir
T=$tap_tmp
# exitcode 66: a report fails the run even where the output was written.
export TSAN_OPTIONS="exitcode=66:halt_on_error=0:second_deadlock_stack=1"

recs=("$SA_SRC/samples/demo.sa" "$CORPUS/real_dwarf.sa" "$CORPUS/real_dwarf_sparse.sa")
plan $(((${#recs[@]} + 2) * (${#MODES[@]} + 1)))

# run_rec FILE: each mode under TSan against the plain build, then the
# worker's start seen by strace (TSan's own helper thread starts only with it).
run_rec()
{
	local f=$1 name=${1##*/} m out
	for m in "${MODES[@]}"; do
		out=$T/$name${m:-.folded}
		"$SA_REPORT" --no-cache $m -o "$out.plain" "$f" 2>/dev/null
		# an empty symbol cache: its entries are written on the worker thread
		XDG_CACHE_HOME=$T/cache$m.$name "$TSAN" $m -o "$out.tsan" "$f" 2>"$out.err"
		local st=$?
		if [ $st -eq 0 ] && ! grep -q ThreadSanitizer "$out.err" && cmp -s "$out.plain" "$out.tsan"; then
			ok 0 "$name ${m:-(folded)}: no TSan report, exit 0, same output"
		else
			ok 1 "$name ${m:-(folded)}: exit $st"
			diag_file "$out.err" 40
		fi
	done
	# --no-cache: a warm symbol cache leaves no debug file to inflate ahead
	strace -f -qq -e trace=clone,clone3 -o "$T/$name.strace" "$TSAN" --no-cache -o /dev/null "$f" 2>/dev/null
	check "$name: the worker thread ran" grep -q CLONE_THREAD "$T/$name.strace"
}

for f in "${recs[@]}"; do
	run_rec "$f"
done

# Fresh recordings of this machine's binaries, dwarf and fp, as root.
if [ "$(id -u)" != 0 ] || ! command -v bpftool >/dev/null || ! bpftool prog list >/dev/null 2>&1; then
	skip $((2 * (${#MODES[@]} + 1))) "needs root and BPF to record"
else
	"$SA_RECORD" -q --call-graph dwarf -F 499 -o "$T/fresh_dwarf.sa" -- \
		"$SA_SAMPLES/workload-nofp" -d 1 -t 2 >/dev/null 2>"$T/rec.err"
	diag "sa-record --call-graph dwarf: exit $?"
	"$SA_RECORD" -q -F 499 -o "$T/fresh_fp.sa" -- "$SA_SAMPLES/workload" -d 1 -t 2 \
		>/dev/null 2>>"$T/rec.err"
	diag "sa-record --call-graph fp: exit $?"
	run_rec "$T/fresh_dwarf.sa"
	run_rec "$T/fresh_fp.sa"
fi
done_testing
