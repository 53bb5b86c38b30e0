#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# Kernel symbols (issue 5): samples/zero_reader spends its time reading
# /dev/zero; the report, run as the unprivileged user nobody (who reads only
# zeros from /proc/kallsyms), names read_zero and vfs_read from the symbols
# carried in the recording, with the frame-pointer walk and with
# --call-graph dwarf (whose kernel stacks come with the stack copies).
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples zero_reader
tmpdir
T=$tap_tmp

plan 10

id nobody >/dev/null 2>&1 || { skip 10 "no user nobody"; done_testing; }
setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null ||
	{ skip 10 "cannot run as nobody (setpriv)"; done_testing; }
setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$SA_REPORT" ||
	{ skip 10 "nobody cannot run $SA_REPORT (directory permissions)"; done_testing; }

# kernel_names CG: 5 tests on a zero_reader recording made with --call-graph CG
kernel_names()
{
	local cg=$1 tot rz vr cpu

	"$SA_RECORD" -q -F 999 --call-graph "$cg" -o "$T/z.sa" -- \
		"$SA_SAMPLES/zero_reader" -d 3 >"$T/z.out" 2>"$T/rec.err"
	ok $? "sa-record --call-graph $cg -- zero_reader -d 3 exits 0"
	chmod 0644 "$T/z.sa"
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$SA_REPORT" -K "$T/z.sa" >"$T/z.folded" 2>"$T/rep.err"
	ok $? "$cg: sa-report -K run as nobody exits 0"
	diag_file "$T/rep.err" 5

	tot=$(folded_total "$T/z.folded" zero_reader)
	rz=$(folded_with "$T/z.folded" zero_reader read_zero)
	vr=$(folded_with "$T/z.folded" zero_reader vfs_read)
	cpu=$(awk '{ for (i = 1; i < NF; i++) if ($i == "cpu") print $(i + 1) }' "$T/z.out")
	# -d 3 of wall time: 1,700-1,850 samples here (its CPU time x 999 Hz,
	# what a loaded host leaves it); a timer's count is at most Poisson
	# (sd 2.4% of 1,700), so 80% is > 8 sd: it fails when samples are lost.
	# read_zero and vfs_read are in the stack whenever the sample is in the
	# read path: 98.2-99.5% here, not a known share. Assumed >= 90%: at
	# n >= 300 the sd is 1.7 points, 50% is 23 sd off: P < 1e-100. Per run
	# (four share checks) far below 0.1%.
	ge "$tot" "$(awk -v c="${cpu:-1}" 'BEGIN { print 0.8 * c * 999 }')"
	ok $? "$cg: $tot kernel samples of zero_reader for ${cpu:-?} s of its CPU (want >= 80% of 999 Hz)"
	ge "$(pct "$rz" "$tot")" 50
	ok $? "$cg: read_zero in $(pct "$rz" "$tot")% of them (want >= 50)"
	ge "$(pct "$vr" "$tot")" 50
	ok $? "$cg: vfs_read in $(pct "$vr" "$tot")% of them (want >= 50)"
}

kernel_names fp
if [ "$(uname -m)" = x86_64 ]; then
	kernel_names dwarf
else
	skip 5 "no --call-graph dwarf on $(uname -m)"
fi

done_testing
