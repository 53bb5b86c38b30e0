#!/bin/bash
# SPDX-License-Identifier: MIT
# How a recording ends: --duration D exits by D + interval + 0.5 s; SIGINT
# and SIGTERM finish the file (END chunk present) and exit 0; --max-size
# finishes it cleanly too.
. "$(dirname "$0")/2000-record-lib.sh"
need_bpf
build_busy
echo "1..8"

"$T/busy" 1 & busy=$!
start=$(date +%s%N)
"$REC" -q -F 999 --duration 2 --interval 1 -o "$T/d.sa"; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc = 0 ] && [ $ms -le 3500 ]; ok $? "--duration 2 --interval 1 exits 0 after $ms ms (<= 3500)"
"$DUMP" "$T/d.sa" >/dev/null; ok $? "file complete"

for sig in INT TERM; do
	"$REC" -q -F 999 -o "$T/$sig.sa" & rec=$!
	sleep 1.5
	kill -$sig $rec
	wait $rec; rc=$?
	ok $rc "SIG$sig: exit 0"
	"$DUMP" "$T/$sig.sa" | grep -q '^END'; ok $? "SIG$sig: END chunk present"
done

# The guard's SIGTERM would also end the recording cleanly (exit 0): it
# leaves a mark, so a recorder that ignores --max-size fails here.
"$REC" -q -F 999 --interval 0.2 --max-size 2k -o "$T/m.sa" & rec=$!
( sleep 10; kill $rec 2>/dev/null && touch "$T/guard-fired" ) & guard=$!
wait $rec; rc=$?
kill $guard 2>/dev/null
size=$(stat -c %s "$T/m.sa")
[ $rc = 0 ] && [ ! -e "$T/guard-fired" ] && [ "$size" -ge 2048 ]
ok $? "--max-size 2k stops by itself (exit $rc, $size bytes >= 2048, not the 10 s guard)"
"$DUMP" "$T/m.sa" >/dev/null; ok $? "and the file is complete"
kill $busy
finish
