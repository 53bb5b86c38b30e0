#!/bin/bash
# SPDX-License-Identifier: MIT
# Symbol names (issue 16): a C++ workload whose functions GCC cloned
# (.isra.0, .constprop.0) and whose global functions also have a local
# ".localalias" twin at the same address (tests/data/sym_clone.cc) is
# recorded. Its frames read as c++filt writes them, "[clone .isra.0]"
# kept, and never by a ".localalias" name, both from the binary and, once
# it is deleted, from the symbols sa-record embedded. --top keeps the
# process name (the root of every stack) out of its function rows and
# shows it in a "# processes:" line; --top --comm still works.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
FIX=$SA_BUILD/tests/data/cxx_clone
[ -x "$FIX" ] || skip_all "$FIX not built; run make check-extra"
tmpdir
T=$tap_tmp

plan 10

cp "$FIX" "$T/sa_names"
"$SA_RECORD" -q -F 999 -o "$T/n.sa" -- "$T/sa_names" 2 >/dev/null 2>"$T/rec.err"
ok $? "sa-record -- sa_names 2 exits 0"
"$SA_REPORT" -o "$T/bin.folded" "$T/n.sa" 2>"$T/rep.err"
ok $? "sa-report exits 0 (names from the binary)"
rm -f "$T/sa_names"
"$SA_REPORT" -o "$T/emb.folded" "$T/n.sa" 2>>"$T/rep.err"
ok $? "sa-report exits 0 with the binary deleted (embedded names)"
diag_file "$T/rep.err" 5

# shared_entry's stacks are about a quarter of the n samples (stride runs
# n/3 iterations to spin's n). Under 5% would be 0.2 n below the mean, which
# for n >= 100 is over 4.6 standard deviations (sqrt(n x .25 x .75)): a
# chance under 3e-6 that the share check fails by luck.
names()
{
	local f=$1 tot se
	tot=$(folded_total "$f" sa_names)
	se=$(folded_with "$f" sa_names "outer::inner::shared_entry(long)")
	diag "$2: $se of $tot samples through outer::inner::shared_entry(long)"
	[ "$tot" -ge 100 ] && [ "$((se * 100))" -ge "$((tot * 5))" ] &&
		grep -qF ';outer::inner::work(int);' "$f" &&
		grep -qF ';outer::inner::Box<long>::spin(long) [clone .isra.0] ' "$f" &&
		grep -qF ';outer::inner::stride(long, long) [clone .constprop.0] ' "$f"
	ok $? "$2: global names, clones shown as c++filt does"
	! grep -q 'localalias' "$f"
	ok $? "$2: no .localalias name ($(grep -c localalias "$f") lines have one)"
}
names "$T/bin.folded" "from the binary"
names "$T/emb.folded" "embedded"

"$SA_REPORT" --top -o "$T/n.top" "$T/n.sa" 2>/dev/null
ok $? "sa-report --top exits 0"
diag_file "$T/n.top" 8
# (sa-record's child is sampled before its exec too, under comm sa-record)
[ -z "$(top_field "$T/n.top" sa_names total)" ] && grep -q '^# processes: sa_names [0-9.]*%' "$T/n.top"
ok $? "--top: the process is a header line, not a function row"
"$SA_REPORT" --top --comm sa_names -o "$T/c.top" "$T/n.sa" 2>/dev/null &&
	[ -n "$(top_field "$T/c.top" "outer::inner::work(int)" total)" ]
ok $? "--top --comm sa_names lists its functions"
done_testing
