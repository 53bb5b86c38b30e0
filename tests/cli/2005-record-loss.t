#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (records -a and checks its loss counts)
# Loss accounting: runs == kept + filtered + sum(lost_*) exactly, in every
# interval, in a normal run and in a run forced to lose with tiny maps and
# a one-page ring buffer (losses non-zero, by cause); the COUNT records of
# an interval add up to its kept samples; collisions are recovered.
. "$(dirname "$0")/2000-record-lib.sh"
need_bpf
build_busy
echo "1..8"

# kept == sum of COUNT in every interval
counts_match() {
	"$DUMP" "$1" | awk '
	/^INTERVAL/ { sum = 0 }
	/^COUNT/ { split($7, a, "="); sum += a[2] }
	/^LOSS/ { for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "kept" && kv[2] != sum) bad++ } }
	END { exit bad > 0 }'
}

"$T/busy" 2 & busy=$!
"$REC" -q -a -F 999 --duration 3 -o "$T/n.sa"; ok $? "normal run"
read -r runs kept filtered lost < <(loss_sums "$T/n.sa"); rc=$?
ok $rc "normal: runs $runs == kept $kept + filtered $filtered + lost $lost"
counts_match "$T/n.sa"; ok $? "normal: COUNT records add up to kept"
awk -v l=$lost -v r=$runs 'BEGIN { exit !(l * 1000 < r) }'
ok $? "normal: lost $lost < 0.1% of $runs"

"$REC" -q -a -F 999 --duration 3 --stack-map-size 8 --counts-map-size 8 \
	--ringbuf-size 4096 -o "$T/f.sa"; ok $? "forced-loss run"
read -r runs kept filtered lost < <(loss_sums "$T/f.sa"); rc=$?
ok $rc "forced: runs $runs == kept $kept + filtered $filtered + lost $lost"
causes=$("$DUMP" "$T/f.sa" | tr ' ' '\n' | awk -F= '/^(lost_|collisions)/ { s[$1] += $2 } END { for (k in s) if (s[k]) printf "%s=%d ", k, s[k] }')
[ "$lost" -gt 0 ] && echo "$causes" | grep -q 'lost_ringbuf=[1-9]' && echo "$causes" | grep -q 'collisions=[1-9]'
ok $? "forced: losses counted by cause: $causes"
counts_match "$T/f.sa"; ok $? "forced: COUNT records add up to kept"
kill $busy
finish
