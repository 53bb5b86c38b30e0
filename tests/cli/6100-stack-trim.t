#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# USTACK_SPARSE (record/drain/uwtrim.c): sa-record keeps of each stack copy only
# the words sa-report's unwind reads. A recording made with --whole-stack
# and rewritten by the same trimmer (tests/tools/sa-trim) folds to the same
# bytes as the whole one (with sa-report's walk and with libdwfl's), for
# zstd -19 (Debian's binary and libc), workload-nofp,
# workload-leaf, a shell loop, and a binary whose CFI is only in
# .debug_frame (kept whole: the recorder reads .eh_frame).
# A default recording holds USTACK_SPARSE records and says how much it kept.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples workload-nofp workload-leaf
TRIM=$SA_BUILD/tests/tools/sa-trim
DUMP=$SA_BUILD/tests/tools/sa-dump
DF=$SA_BUILD/tests/data/cfi_debug_frame
[ -x "$TRIM" ] && [ -x "$DUMP" ] && [ -x "$DF" ] || skip_all "test tools not built (make check builds them)"
tmpdir
T=$tap_tmp

plan 25

# same NAME MIN_PCT CG CMD...: record CMD whole, trim it; the folded stacks
# are identical (deterministic: the same samples, twice), and at least
# MIN_PCT% of the captures were trimmed. A capture is left whole where the
# trimmer cannot follow the unwind (a leaf without an FDE, a broken walk):
# a rate, not a known share, 0-0.5% here (1 of 741 zstd, 0 of 504 sh-loop,
# 0 of about 500 each workload). A sample in a PLT entry is trimmed (its
# CFA is evaluated at the pc): dash's loop put 7% of its samples there
# beside two busy loops, 0.4% idle. Assumed <= 1%, failing 95% takes >= 21 of
# >= 400 captures at a mean of <= 4: P = 1.4e-9 (90%: >= 41, 5e-28). The
# script's five such checks: < 1e-8 per run. The workloads run for CPU
# time, or for zstd's fixed work of about 1 s here (4 MB of base64).
same()
{
	local name=$1 min=$2 cg=$3 st
	shift 3
	"$SA_RECORD" -q -F 999 --call-graph "$cg" --whole-stack -o "$T/$name.sa" -- "$@" \
		>/dev/null 2>"$T/$name.err" || diag_file "$T/$name.err"
	"$TRIM" "$T/$name.sa" "$T/$name.trim.sa" >"$T/$name.st" 2>>"$T/$name.err"
	ok $? "$name: sa-trim rewrites the --whole-stack recording"
	"$SA_REPORT" -o "$T/$name.whole" "$T/$name.sa" 2>>"$T/$name.err" &&
		"$SA_REPORT" -o "$T/$name.trimmed" "$T/$name.trim.sa" 2>>"$T/$name.err" &&
		[ -s "$T/$name.whole" ] && cmp "$T/$name.whole" "$T/$name.trimmed" >"$T/$name.cmp" 2>&1
	ok $? "$name: the trimmed recording folds to the same bytes as the whole one"
	[ -s "$T/$name.cmp" ] && diag_file "$T/$name.cmp"
	SA_UNWIND=libdwfl "$SA_REPORT" -o "$T/$name.dwfl" "$T/$name.trim.sa" 2>>"$T/$name.err" &&
		cmp "$T/$name.whole" "$T/$name.dwfl" >"$T/$name.cmp" 2>&1
	ok $? "$name: libdwfl's walk of the trimmed recording gives the same bytes too"
	[ -s "$T/$name.cmp" ] && diag_file "$T/$name.cmp"
	read -r st <"$T/$name.st"
	set -- $st
	got=$(pct "$2" "$1")
	ge "$got" "$min"
	ok $? "$name: $2 of $1 captures trimmed, $got% (want >= $min); bytes kept $5 of $4"
}

if command -v zstd >/dev/null 2>&1; then
	head -c 3000000 /dev/urandom | base64 >"$T/in.txt"
	same zstd 95 dwarf zstd -19 --single-thread -q -f "$T/in.txt" -o "$T/in.zst"
	set -- $(cat "$T/zstd.st")
	[ "$4" -gt 0 ] && [ $(($5 * 20)) -lt "$4" ]
	ok $? "zstd: trimmed copies keep under 5% of the bytes ($5 of $4)"
else
	skip 5 "zstd not installed"
fi
# auto walks workload-nofp in the kernel and copies only the few stacks its
# tables do not cover (6 of ~1,000 here): its copies are trimmed as dwarf's are
same nofp-dwarf 95 dwarf "$SA_SAMPLES/workload-nofp" -c 1
same leaf-dwarf 95 dwarf "$SA_SAMPLES/workload-leaf" -c 1
# dash's loop runs until dash has 0.6 s of user time (its `times`), not a
# count of turns: the turns per second vary with the CPU and the load (449
# captures here idle, 173 in a CI run beside another script)
same sh-loop 90 dwarf sh -c 'i=0; while :; do i=$((i + 1)); [ $((i % 5000)) = 0 ] || continue
	times >"$0"; read -r u s <"$0"; case $u in 0m0.[0-5]*) ;; *) break ;; esac; done' "$T/times"
same debug-frame 0 dwarf "$DF" -c 1
# trimmed there are only the leaves in libc (which has .eh_frame): a rate
# of the fixture, 1 of 497 here; assumed <= 1%, failing takes >= 26 of
# about 500 at a mean of <= 5: P = 2e-11 per run
set -- $(cat "$T/debug-frame.st")
[ "$1" -gt 0 ] && [ $(($2 * 20)) -le "$1" ]
ok $? "debug-frame: at most 5% trimmed where .eh_frame has no FDE ($2 of $1: leaves in libc)"

# the default: sparse records, and the recorder's account of them
"$SA_RECORD" -F 999 --call-graph dwarf -o "$T/d.sa" -- "$SA_SAMPLES/workload-nofp" -c 1 \
	>/dev/null 2>"$T/d.err"
ok $? "sa-record --call-graph dwarf (default trimming) exits 0"
"$DUMP" "$T/d.sa" >"$T/d.dump"
# whole records are the copies the recorder could not trim (51 sparse
# against 1 whole here): the same rate as above, so >= 4x + 10 fails only
# when trimming breaks, not by luck
sparse=$(grep -c '^USTACK_SPARSE ' "$T/d.dump")
whole=$(grep -c '^USTACK ' "$T/d.dump")
ge "$sparse" $((4 * whole + 10))
ok $? "$sparse USTACK_SPARSE records against $whole whole USTACK ones (want >= 4x + 10)"
grep -q 'stack copies: [0-9]* of [0-9]* kept only the words an unwind reads' "$T/d.err"
ok $? "sa-record says how many copies it trimmed"
[ $? -eq 0 ] || diag_file "$T/d.err"

done_testing
