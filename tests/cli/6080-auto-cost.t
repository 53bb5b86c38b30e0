#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# --call-graph auto copies the user stack only where the sampled code has no
# frame pointer (issue 10): on samples/workload (frame pointers, leaves given
# a frame) no sample of the workload is a copy; on workload-leaf (frameless
# leaves) the copies are the samples in sa_leaf_a and sa_helper_inner, about
# 67% of its time (60% + half of the helper's 13.3%), and no others; on
# workload-nofp every sample is a copy. Counted with sa-dump: COUNT records
# are in-kernel frame-pointer aggregates, USTACK and USTACK_SPARSE records
# stack copies.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples workload workload-leaf workload-nofp
[ -x "$SA_BUILD/tests/tools/sa-dump" ] || skip_all "sa-dump not built"
tmpdir
T=$tap_tmp
S=$SA_SAMPLES

plan 7

"$SA_RECORD" -q -F 999 --call-graph auto -o "$T/a.sa" -- sh -c \
	"'$S/workload' -c 3 >/dev/null & '$S/workload-leaf' -c 3 >/dev/null & '$S/workload-nofp' -c 3 >/dev/null; wait" \
	2>"$T/record.err"
rc=$?
ok $rc "sa-record --call-graph auto -- three workloads exits 0 (got $rc)"
[ $rc -eq 0 ] || diag_file "$T/record.err"

"$SA_BUILD/tests/tools/sa-dump" "$T/a.sa" >"$T/dump" 2>"$T/dump.err"
ok $? "sa-dump reads the recording"

# samples of the process named $1 (by its PROC records): "copied total"
share() {
	awk -v c="comm=$1" '
		$1 == "PROC" { for (i = 2; i <= NF; i++) if ($i == c) pid[$2] = 1; next }
		($1 == "COUNT" || $1 ~ /^USTACK/) && ($2 in pid) {
			for (i = 3; i <= NF; i++)
				if ($i ~ /^count=/) n = substr($i, 7)
			if ($1 ~ /^USTACK/) u += n
			t += n
		}
		END { printf "%d %d\n", u, t }' "$T/dump"
}

read -r u t < <(share workload)
p=$(pct "$u" "$t")
[ "$t" -ge 1000 ] && ge 5 "$p"
ok $? "workload (frame pointers): $p% of $t samples copied (want <= 5)"

read -r u t < <(share workload-leaf)
p=$(pct "$u" "$t")
[ "$t" -ge 1000 ] && within "$p" 67 6
ok $? "workload-leaf (frameless leaves): $p% of $t samples copied (want 67 +- 6)"

read -r u t < <(share workload-nofp)
p=$(pct "$u" "$t")
[ "$t" -ge 1000 ] && ge "$p" 99
ok $? "workload-nofp (no frame pointers): $p% of $t samples copied (want >= 99)"

"$SA_REPORT" -o "$T/a.folded" "$T/a.sa" 2>"$T/report.err"
ok $? "sa-report reads the mixed recording"

tot=$(folded_total "$T/a.folded" workload-leaf)
got=$(pct "$(folded_with "$T/a.folded" workload-leaf sa_leaf_b)" "$tot")
within "$got" 30 3
ok $? "workload-leaf: sa_leaf_b (copied and frame-pointer samples mixed) totals $got% (want 30 +- 3)"

done_testing
