#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (forks and execs trees of processes that every other recorder's side band would carry)
# sa-record -- CMD follows the command's process tree: samples/forker starts
# 2 children that start 2 grandchildren each (fork + exec of itself), each
# burning 0.5 s of CPU in its own function. Every one of the 7 processes has
# its samples, named, and sa-record exits with the command's status (3).
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples forker
tmpdir
T=$tap_tmp

plan 6

"$SA_RECORD" -q -F 999 -o "$T/f.sa" -- "$SA_SAMPLES/forker" -c 2 -g 2 -m 500 -x 3 \
	>"$T/f.out" 2>"$T/rec.err"
rc=$?
[ $rc -eq 3 ]
ok $? "sa-record exits with the command's status 3 (got $rc)"
[ "$(grep -c '^forker: pid' "$T/f.out")" -eq 7 ]
ok $? "the workload ran 7 processes"

"$SA_REPORT" --show-pid -o "$T/f.folded" "$T/f.sa" 2>"$T/rep.err"
ok $? "sa-report --show-pid exits 0"

# per_pid FUNCTION: "pid samples" for each process with FUNCTION on its stacks;
# the root frame is comm-pid with --show-pid
per_pid()
{
	awk -v fn="$1" '{
		n = $NF; st = $0; sub(/ [0-9]+$/, "", st)
		split(st, f, ";")
		pid = f[1]; sub(/^.*-/, "", pid)
		if (index(";" st ";", ";" fn ";")) c[pid] += n
	} END { for (p in c) print p, c[p] }' "$T/f.folded"
}

# each process burns 0.5 s of its own CPU time: about 500 samples at 999 Hz
for spec in sa_forker_parent:1 sa_forker_child:2 sa_forker_grandchild:4; do
	fn=${spec%:*} want=${spec#*:}
	per_pid "$fn" >"$T/$fn.pids"
	got=$(awk '$2 >= 400' "$T/$fn.pids" | wc -l)
	[ "$got" -eq "$want" ]
	ok $? "$fn: $want process(es) with >= 400 samples each (got $got: $(tr '\n' ' ' <"$T/$fn.pids"))"
done

done_testing
