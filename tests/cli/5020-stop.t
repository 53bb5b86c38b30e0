#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (records -a)
# sa-test: san
# 5020-stop.t - every ordinary way a recording ends (docs/reliability.md,
# "Ordinary stops"): SIGINT, SIGTERM, --duration and --max-size each leave a
# complete file (END chunk present, sa-report --info says "cleanly") and
# exit 0, with what was sampled readable.
. "$(dirname "$0")/lib.sh"
require_report
require_root_bpf
require_samples workload
tmpdir
T=$tap_tmp
plan 12

# complete NAME FILE: END chunk present and every interval readable.
complete()
{
	local info fin kept total

	info=$("$SA_REPORT" --info "$2" 2>&1)
	fin=$(echo "$info" | sed -n 's/^  finished: *//p')
	[ "$fin" = cleanly ]
	ok $? "$1: sa-report --info: finished: $fin"
	kept=$(echo "$info" | awk '/^  samples:/ { print $2; exit }')
	total=$(folded_total <("$SA_REPORT" -q "$2" 2>/dev/null))
	[ "${kept:-0}" -gt 0 ] && [ "$total" = "$kept" ]
	ok $? "$1: $total samples in folded output, $kept kept"
}

"$SA_SAMPLES/workload" -d 30 >/dev/null 2>&1 &
wl=$!
for sig in INT TERM; do
	"$SA_RECORD" -q -F 999 --interval 0.25 -p $wl -o "$T/$sig.sa" &
	rec=$!
	sleep 1.2
	kill -$sig $rec
	wait $rec
	ok $? "SIG$sig: sa-record exits 0"
	complete "SIG$sig" "$T/$sig.sa"
done

start=$(date +%s%N)
"$SA_RECORD" -q -F 999 --interval 0.25 --duration 1 -p $wl -o "$T/d.sa"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
[ $rc = 0 ] && [ $ms -lt 3000 ]
ok $? "--duration 1: exit $rc after $ms ms (< 3000)"
complete "--duration" "$T/d.sa"

# -a so the file grows fast; the guard turns a missed limit into a failure.
timeout -s KILL 30 "$SA_RECORD" -q -F 999 --interval 0.2 --max-size 16k -o "$T/m.sa"
rc=$?
size=$(stat -c %s "$T/m.sa")
[ $rc = 0 ]
ok $? "--max-size 16k: stops by itself, exit $rc, $size bytes"
complete "--max-size" "$T/m.sa"
kill $wl 2>/dev/null
wait $wl 2>/dev/null
done_testing
