#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# Off the box (issue 5): a workload built into a temporary directory is
# recorded, the binary and its directory are deleted, and sa-report still
# names its functions from the symbols embedded in the recording; recorded
# with --no-embed-symbols, its frames come out as [binary-name], never as a
# wrong name.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
tmpdir
T=$tap_tmp

plan 8

command -v gcc >/dev/null || { skip 8 "gcc not installed (the test builds its own binary)"; done_testing; }

# build DIR: the workload as DIR/sa_offbox_wl with a build id of its own, so
# that no copy elsewhere (build/samples/workload) can stand in for it
build()
{
	local id

	id=$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')
	mkdir -p "$1"
	gcc -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread \
		-Wl,--build-id=0x"$id" \
		-o "$1/sa_offbox_wl" "$SA_SRC/samples/workload.c" -lm
}

build "$T/bin1"
ok $? "gcc builds the workload into a temporary directory"
# two processes of 3 s of CPU: about 6,000 samples (one was 3,000)
"$SA_RECORD" -q -F 999 -o "$T/emb.sa" -- sh -c \
	"'$T/bin1/sa_offbox_wl' -c 3 >'$T/w1.out' & '$T/bin1/sa_offbox_wl' -c 3 >'$T/w2.out'; wait" \
	2>"$T/rec.err"
ok $? "sa-record -- two sa_offbox_wl -c 3 exits 0"
rm -rf "$T/bin1"
"$SA_REPORT" -o "$T/emb.folded" "$T/emb.sa" 2>"$T/rep.err"
ok $? "sa-report exits 0 with the binary deleted"
diag_file "$T/rep.err" 5
# sa_leaf_a's share against the workload's own measurement of it: at
# n >= 5,400 the binomial sd of 60% is 0.67 points; with up to 0.6 points
# of drift (calibration in the total) +-3 is >= 3.6 sd: P = 1.6e-4 per run.
# With one process (3,000 samples, sd 0.89) it was 1.4e-3 at 0.3 points.
tot=$(folded_total "$T/emb.folded" sa_offbox_wl)
a=$(folded_path "$T/emb.folded" sa_offbox_wl "main;sa_run;sa_leaf_a")
want=$(workload_measured sa_leaf_a "$T/w1.out" "$T/w2.out")
got=$(pct "$a" "$tot")
[ "$tot" -ge 5400 ] && within "$got" "${want:-999}" 3
ok $? "main;sa_run;sa_leaf_a named from embedded symbols: $got% of $tot (want ${want:-?} +- 3)"

build "$T/bin2"
"$SA_RECORD" -q -F 999 --no-embed-symbols -o "$T/noemb.sa" -- "$T/bin2/sa_offbox_wl" -d 2 \
	>/dev/null 2>"$T/rec2.err"
ok $? "sa-record --no-embed-symbols -- sa_offbox_wl -d 2 exits 0"
rm -rf "$T/bin2"
"$SA_REPORT" -o "$T/noemb.folded" "$T/noemb.sa" 2>"$T/rep2.err"
ok $? "sa-report exits 0 with the binary deleted and no embedded symbols"
diag_file "$T/rep2.err" 5
tot=$(folded_total "$T/noemb.folded" sa_offbox_wl)
named=$(grep -c 'sa_leaf_\|sa_run\|sa_shared_helper' "$T/noemb.folded")
[ "$tot" -gt 0 ] && [ "$named" -eq 0 ]
ok $? "no function of the deleted binary is named ($named lines name one)"
bare=$(awk '{ n = $NF; st = $0; sub(/ [0-9]+$/, "", st); split(st, f, ";")
	if (f[1] == "sa_offbox_wl" && st ~ /;\[sa_offbox_wl(\+0x[0-9a-f]+)?\]/) t += n }
	END { print t + 0 }' "$T/noemb.folded")
# every stack holds main, in the binary: a frame-pointer walk that stops
# in libc first is a rate assumed <= 1% (0.13% here, 3 of about 2,000);
# failing 95% needs 5% of about 2,000 samples: P < 1e-20
ge "$(pct "$bare" "$tot")" 95
ok $? "$(pct "$bare" "$tot")% of its samples show [sa_offbox_wl] frames (want >= 95)"

done_testing
