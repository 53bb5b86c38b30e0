#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# 5190-lost-stacks.t - a stack the drain cannot read is counted lost at
# every use, never kept empty. SA_RECORD_TEST_LOSE_STACKS=N makes every Nth
# stack read fail, as a stack gone from its map would. A stack id is used
# by several counts (threads, kernel stacks) and pinned for off-CPU stays
# that span intervals: before the fix the first use was counted lost, the
# later ones found the memoized (or pinned) id 0 and were kept with no
# stack (4-5 off-CPU lines of samples/offcpu's threads at N = 2, 3, 5, 7).
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_report
require_samples offcpu
tmpdir
T=$tap_tmp
plan 8

# broken FILE: off-CPU lines of the workload's threads lacking a user or a
# kernel part. A blocked or preempted thread of offcpu has both: frames of
# its own (the first frame after the name is not a kernel entry) and the
# scheduler's.
broken()
{
	awk '{
		n = split($1, f, ";")
		if (n < 2 || f[2] ~ /^(entry_SYSCALL|asm_|ret_from_fork)/ || $1 !~ /;(__)?schedule(;|$)/)
			bad++
	} END { print bad + 0 }' "$1"
}

off_lost=0 on_lost=0
for n in 2 5; do
	SA_RECORD_TEST_LOSE_STACKS=$n "$SA_RECORD" -F 999 --off-cpu -o "$T/l$n.sa" -- \
		"$SA_SAMPLES/offcpu" -d 3 >/dev/null 2>"$T/l$n.err"
	ok $? "every ${n}th stack read fails: sa-record exits 0"
	"$SA_REPORT" --off-cpu --comm sa-off-worker,sa-off-writer -o "$T/l$n.folded" "$T/l$n.sa" \
		2>/dev/null
	bad=$(broken "$T/l$n.folded")
	lost=$(sed -n 's/.*off-CPU: .* \([0-9]*\) lost,.*/\1/p' "$T/l$n.err")
	off_lost=$((off_lost + ${lost:-0}))
	[ "$bad" -eq 0 ]
	ok $? "off-CPU: $bad lines without a user or a kernel stack; ${lost:-?} stays counted lost"
	"$SA_REPORT" --comm sa-off-worker -o "$T/on$n.folded" "$T/l$n.sa" 2>/dev/null
	# a lost user stack leaves the name alone or kernel frames only (a
	# sample through the vDSO may skip sa_off_worker: issue of its own)
	bad=$(awk '{ n = split($1, f, ";"); if (n < 2 || f[2] ~ /^(entry_SYSCALL|asm_|ret_from_fork)/) bad++ }
		END { print bad + 0 }' "$T/on$n.folded")
	lost=$(sed -n 's/.* samples kept of .* \([0-9]*\) lost,.*/\1/p' "$T/l$n.err")
	on_lost=$((on_lost + ${lost:-0}))
	[ "$bad" -eq 0 ]
	ok $? "on-CPU: $bad sa-off-worker lines without a user stack; ${lost:-?} samples counted lost"
done
# Which reads fail depends on their order (one count over on- and off-CPU
# reads): a busy CI run at N = 5 failed none of the on-CPU ones. Over the
# two runs both kinds lose some, or the counting broke.
[ "$off_lost" -gt 0 ] && [ "$on_lost" -gt 0 ]
ok $? "losses counted over both runs: $off_lost stays, $on_lost samples"
# Not vacuous: some stays and samples were kept. (At N = 2 a loaded host
# can lose every stay of a run: which reads fail depends on their order.)
[ -s "$T/l2.folded" ] || [ -s "$T/l5.folded" ]
ok $? "off-CPU stays kept in at least one run: $(cat "$T"/l?.folded | wc -l) lines"
done_testing
