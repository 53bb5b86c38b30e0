#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# PLT stubs (issue 16): a loop whose libc call spends a large share of its
# samples in `abs@plt`, in each PLT layout (lazy binding; IBT's .plt.sec).
# Every mode names the stub `abs@plt`, never `_init` (the nearest symbol
# before .plt), also with the binary gone (the name is embedded); dwarf and
# auto unwind through it to main (its CFA is a DWARF expression of rip).
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
FIX=${SA_BUILD:-build}/tests/data
for f in plt_lazy plt_ibt; do
	[ -x "$FIX/$f" ] || skip_all "$FIX/$f not built; run make check"
done
tmpdir
T=$tap_tmp

plan 24

for f in plt_lazy plt_ibt; do
	cp "$FIX/$f" "$T/$f"
	for cg in fp dwarf auto; do
		"$SA_RECORD" -q -F 999 --call-graph "$cg" -o "$T/$f-$cg.sa" -- "$T/$f" 1.5 \
			>/dev/null 2>"$T/record.err"
		ok $? "sa-record --call-graph $cg -- $f exits 0"
		"$SA_REPORT" -o "$T/$f-$cg.folded" "$T/$f-$cg.sa" 2>"$T/report.err"
		ok $? "sa-report of $f ($cg) exits 0"
		plt=$(folded_leaf "$T/$f-$cg.folded" "$f" abs@plt)
		init=$(folded_with "$T/$f-$cg.folded" "$f" _init)
		# a precondition, not a share claim: the stub holds about a sixth
		# of the loop's time here; 20 of about 1,400 samples is far below
		[ "$plt" -ge 20 ] && [ "$init" -eq 0 ]
		ok $? "$f ($cg): $plt samples at abs@plt, $init named _init"
		[ "$cg" = fp ] && continue
		# counted below, over both layouts: stacks through the stub, not
		# only those where it is the leaf (a page fault or interrupt in
		# it puts kernel frames below it)
		through=$(folded_with "$T/$f-$cg.folded" "$f" abs@plt)
		full=$(folded_with "$T/$f-$cg.folded" "$f" "main;plt_loop_run;abs@plt")
		echo "$through $full" >>"$T/$cg.counts"
	done
done

# dwarf and auto: every stub sample's stack should reach main through its
# caller. A walk that stops early for another reason is rare (about 1 in
# 500 samples: 1 of 458 in a dash loop), so over the >= 200 stub samples of
# both layouts, failing 98% by luck takes >= 5 of 200 at p = 0.002:
# P = 6e-5 per run. Before the fix none of them reached main.
for cg in dwarf auto; do
	read -r plt full < <(awk '{ p += $1; f += $2 } END { print p, f }' "$T/$cg.counts")
	got=$(pct "$full" "$plt")
	[ "$plt" -ge 200 ] && ge "$got" 98
	ok $? "$cg: $got% of $plt abs@plt samples unwind to main;plt_loop_run (want >= 98)"
done

# off the box: the binary gone, the stub keeps its name (embedded symbols)
rm -f "$T/plt_lazy" "$T/plt_ibt"
for f in plt_lazy plt_ibt; do
	"$SA_REPORT" -o "$T/$f-gone.folded" "$T/$f-fp.sa" 2>"$T/report.err"
	ok $? "sa-report of $f (fp) with the binary gone exits 0"
	plt=$(folded_leaf "$T/$f-gone.folded" "$f" abs@plt)
	was=$(folded_leaf "$T/$f-fp.folded" "$f" abs@plt)
	[ "$plt" -eq "$was" ]
	ok $? "$f with the binary gone: $plt of $was samples still named abs@plt"
done

done_testing
