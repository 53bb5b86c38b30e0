#!/bin/bash
# SPDX-License-Identifier: MIT
# Process metadata from one source each (issue 19): a process running
# before the recording (-p), renamed to a comm with spaces and parens,
# gets one PROC record with /proc's comm, ppid and exe, and one MAP record
# per executable mapping of /proc/PID/maps, file-backed ones with the build
# id readelf reads; a process started by `-- CMD` gets each of its
# mappings once (the side-band's), not a second time from /proc (as
# before: 2 of 7 written twice).
. "$(dirname "$0")/2000-record-lib.sh"
need_bpf
DUMP=${SA_BUILD:-build}/tests/tools/sa-dump
[ -x "$DUMP" ] || skip_all "sa-dump not built ($DUMP)"
[ -x /usr/bin/python3 ] || skip_all "/usr/bin/python3 not installed"
command -v readelf >/dev/null || skip_all "readelf not installed"
echo "1..7"

# python3 renames itself, then spins (exec: $! is python3 itself)
/usr/bin/python3 -c '
import ctypes, time
ctypes.CDLL(None).prctl(15, b"we) ir (d", 0, 0, 0)
t = time.time()
while time.time() - t < 20: pass
' &
py=$!
sleep 0.5
ppid=$(sed 's/.*) . \([0-9]*\) .*/\1/' /proc/$py/stat)
exe=$(readlink /proc/$py/exe)
awk '$2 ~ /x/ { print $1 }' /proc/$py/maps | sed 's/^0*//; s/-0*/-/' | sort >"$T/want.ranges"
"$REC" -q -p $py --duration 1 -o "$T/p.sa" 2>"$T/p.err"
ok $? "sa-record -p (a process renamed 'we) ir (d') exits 0"
kill $py
wait $py 2>/dev/null
"$DUMP" "$T/p.sa" >"$T/p.dump"

grep "^PROC pid=$py gen=0 " "$T/p.dump" >"$T/proc"
[ "$(wc -l <"$T/proc")" -eq 1 ] &&
	grep -qxF "PROC pid=$py gen=0 ppid=$ppid comm=we) ir (d exe=$exe" "$T/proc"
ok $? "one PROC record with /proc's ppid $ppid, comm and exe: $(head -c 200 "$T/proc")"

grep "^MAP pid=$py " "$T/p.dump" >"$T/maps"
sed 's/.* start=\([0-9a-f]*\) end=\([0-9a-f]*\) .*/\1-\2/' "$T/maps" | sort >"$T/got.ranges"
cmp -s "$T/want.ranges" "$T/got.ranges" || diff "$T/want.ranges" "$T/got.ranges" | sed "s/^/# /"; cmp -s "$T/want.ranges" "$T/got.ranges"
ok $? "one MAP record per executable mapping ($(wc -l <"$T/want.ranges") in /proc, $(wc -l <"$T/got.ranges") recorded)"

# build ids against readelf's, for each file-backed mapping
bad=0 nf=0
while read -r path bid; do
	[ -r "$path" ] || continue
	nf=$((nf + 1))
	want=$(readelf -n "$path" 2>/dev/null | sed -n 's/.*Build ID: *//p' | head -1)
	[ "$bid" = "${want:--}" ] || { bad=$((bad + 1)); diag "$path: $bid, readelf $want"; }
done < <(sed -n 's/.* flags=[0-9]* path=\(\/[^ ]*\) buildid=\([0-9a-f-]*\)$/\1 \2/p' "$T/maps")
[ $nf -gt 2 ] && [ $bad -eq 0 ]
ok $? "build ids of $nf mapped files as readelf reads them ($bad differ)"

# -- CMD: its mappings come from the side-band, each once
# (alive over two drains: its first samples are seen while /proc has it)
"$REC" -q -F 99 -o "$T/c.sa" -- /usr/bin/python3 -c '
import time
t = time.time()
while time.time() - t < 2.5: pass
' 2>"$T/c.err"
ok $? "sa-record -- python3 exits 0"
"$DUMP" "$T/c.sa" >"$T/c.dump"
cpid=$(sed -n 's/^PROC pid=\([0-9]*\) gen=0 .*comm=sa-record .*/\1/p' "$T/c.dump" | head -1)
grep "^MAP pid=${cpid:-x} gen=1 " "$T/c.dump" | sed 's/ time=[0-9]*//' | sort >"$T/cmaps"
dups=$(uniq -d "$T/cmaps" | wc -l)
[ -n "$cpid" ] && [ -s "$T/cmaps" ] && [ "$dups" -eq 0 ]
ok $? "-- CMD: $(wc -l <"$T/cmaps") MAP records of python3 (pid ${cpid:-?}), $dups written twice"
grep "^MAP pid=${cpid:-x} gen=1 .*libc.so" "$T/cmaps" | grep -vq "buildid=-"
ok $? "-- CMD: libc's mapping carries its build id"
