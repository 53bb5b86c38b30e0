#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# sa-report's names for perf script text, frame by frame, against
# stackcollapse-perf.pl's on hand-written samples that hold every rule of the
# script: "+0x" offsets, C++ parameter lists cut at '(' but "(anonymous
# namespace)" kept, Go's pkg.(*T).M kept, ';' to ':', quotes dropped,
# [unknown] named by its binary, "(...)" frames skipped, comms with spaces,
# kernel (_[k]) and JIT (_[j]) frames, Java's L prefix, samples of a second
# event skipped. Then the conventions where the two differ (docs/input.md),
# each asserted as sa's: one count per sample, not perf's period; "a->b"
# frames and perf's inline chains marked inline, suffixed only with
# --annotate-frames; --show-tid with one number or pid 0; text with no
# blank line after the last sample.
. "$(dirname "$0")/lib.sh"

COLLAPSE=$(dirname "$SA_SRC")/shared/oracles/FlameGraph/stackcollapse-perf.pl
command -v perl >/dev/null 2>&1 || skip_all "perl not installed"
[ -f "$COLLAPSE" ] || skip_all "the oracle $COLLAPSE is missing (shared/oracles beside the clone)"
require_report
tmpdir
T=$tap_tmp

plan 9

# -F comm,pid,tid,time,event,ip,sym,dso: no period, 1 per sample for both
cat >"$T/agree.txt" <<'TXT'
# ========
# cmdline : /usr/bin/perf record -g
# ========
#
Web Content 1234/1240 100.000001: cpu-clock:pppH: 
	ffffffff81000e06 asm_sysvec_apic_timer_interrupt+0x16 ([kernel.kallsyms])
	    7f0000001234 std::vector<int, std::allocator<int> >::push_back(int const&)+0x24 (/usr/lib/libxul.so)
	    7f0000001300 (anonymous namespace)::Worker::run(int) const+0x10 (/usr/lib/libxul.so)
	    7f0000001400 [unknown] (/usr/lib/libxul.so)
	    7f0000001500 main.(*Server).Serve+0x5 (/usr/bin/goserver)
	    7f0000001600 a;b "quoted" 'x'+0x1 (/usr/bin/app)
	    7f0000001700 [unknown] ([unknown])
	    7f0000001900 jitted_fn (/tmp/perf-1234.map)
	    7f0000001a00 (some process) (/usr/bin/app)
	    7f0000001b00 operator new(unsigned long)+0x1c (/usr/lib/libstdc++.so.6)
	    7f0000001c00 start_thread+0xd0 (/usr/lib/x86_64-linux-gnu/libc.so.6)

java 99/100 100.000002: cpu-clock:pppH: 
	    7f0000002000 Ljava/lang/Thread;::run+0x1 (/tmp/perf-99.map)
	    7f0000002100 Interpreter (/usr/lib/jvm/libjvm.so)

swapper 1/1 100.000003: cpu-clock:pppH: 
	ffffffff82000000 default_idle+0x5 ([kernel.kallsyms])
	ffffffff82000100 [unknown] ([kernel.kallsyms])

kworker/0:1-ev 17/17 100.000004: cpu-clock:pppH: 
	ffffffff82000200 worker_thread+0x10 (/lib/modules/6.18/build/vmlinux)

other 5/5 100.000005: page-faults: 
	    7f0000003000 fault_here+0x1 (/usr/bin/app)

app 7/7 100.000006: cpu-clock:pppH: 

java 99/100 100.000007: cpu-clock:pppH: 
	    7f0000002000 Ljava/lang/Thread;::run+0x1 (/tmp/perf-99.map)
	    7f0000002100 Interpreter (/usr/lib/jvm/libjvm.so)

TXT

# same_as DESC SA_OPTS -- SCRIPT_OPTS: both outputs, sorted, byte for byte
same_as()
{
	local desc=$1 sa=$2 pl=$3
	# shellcheck disable=SC2086 # option lists
	"$SA_REPORT" $sa "$T/agree.txt" 2>"$T/sa.err" | LC_ALL=C sort >"$T/sa"
	# shellcheck disable=SC2086
	perl "$COLLAPSE" $pl "$T/agree.txt" 2>/dev/null | LC_ALL=C sort >"$T/pl"
	cmp -s "$T/sa" "$T/pl" && [ -s "$T/sa" ]
	ok $? "$desc"
	diff "$T/sa" "$T/pl" | head -n 8 | sed 's/^/#   /'
}
same_as "folded names equal stackcollapse-perf.pl's byte for byte" "" ""
same_as "--annotate-frames equals its --all (_[k] kernel, _[j] JIT)" --annotate-frames --all
same_as "--show-pid equals its --pid" --show-pid --pid
same_as "--show-tid equals its --tid" --show-tid --tid
grep -q "kept the 6 samples of event cpu-clock:pppH; skipped 1 of other events" "$T/sa.err"
ok $? "the sample of a second event is skipped and said so"

# where they differ: sa's conventions
cat >"$T/differ.txt" <<'TXT'
app 7/8 100.000007:     250000 cpu-clock: 
	    7f0000001800 inner->outer+0x3 (/usr/bin/app)
	    7f0000001810 caller+0x3 (/usr/bin/app)

app 7/8 100.000008:     250000 cpu-clock: 
	    7f0000001800 inl_b (/usr/bin/app)
	    7f0000001800 inl_a (/usr/bin/app)
	    7f0000001810 caller+0x3 (/usr/bin/app)

swapper 0/0 100.000009:     250000 cpu-clock: 
	ffffffff82000000 default_idle+0x5 ([kernel.kallsyms])

app 9 100.000009:     250000 cpu-clock: 
	    7f0000001810 caller+0x3 (/usr/bin/app)
TXT
"$SA_REPORT" "$T/differ.txt" >"$T/d" 2>/dev/null
printf '%s\n' "app;caller 1" "app;caller;inl_a;inl_b 1" "app;caller;inner;outer 1" \
	"swapper;default_idle 1" | cmp -s - "$T/d"
ok $? "one count per sample (not perf's period), 'a->b' unsuffixed, last sample without a blank line counted"
"$SA_REPORT" --annotate-frames "$T/differ.txt" 2>/dev/null | grep -qx "app;caller;inl_a;inl_b_\[i\] 1"
ok $? "--annotate-frames marks perf's inline chain (lines of one address): inl_b_[i]"
"$SA_REPORT" --annotate-frames "$T/differ.txt" 2>/dev/null | grep -qx "app;caller;inner;outer_\[i\] 1"
ok $? "--annotate-frames marks the inlined part of 'inner->outer': outer_[i]"
"$SA_REPORT" --show-tid "$T/differ.txt" 2>/dev/null >"$T/tid"
grep -qx "app-9/9;caller 1" "$T/tid" && grep -qx "swapper-0/0;default_idle 1" "$T/tid"
ok $? "--show-tid: app-9/9 for a header with one number (perf's tid), swapper-0/0 for pid 0"

done_testing
