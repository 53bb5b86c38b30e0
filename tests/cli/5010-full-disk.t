#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# 5010-full-disk.t - recording into a 48 KiB tmpfs until it is full
# (docs/reliability.md, "Full disk"): a clear error naming the file and the
# cause, a non-zero exit within seconds, no crash, no recorder left running,
# and the file readable up to its last complete chunk.
. "$(dirname "$0")/lib.sh"
require_report
require_root_bpf
tmpdir
T=$tap_tmp
mkdir "$T/mnt"
mount -t tmpfs -o size=48k,mode=0700 sa-test "$T/mnt" 2>"$T/mount.err" ||
	skip_all "cannot mount a tmpfs: $(head -n 1 "$T/mount.err")"
trap 'umount "$T/mnt" 2>/dev/null; rm -rf "$T"' EXIT
plan 8

out=$T/mnt/full.sa
# A busy workload keeps samples (and so bytes) coming even on an idle host,
# where idle CPUs give none and 48 KiB could take minutes.
"$SA_SAMPLES/workload" -t 2 -d 90 >/dev/null 2>&1 &
busy=$!
start=$(date +%s%N)
# -a at 999 Hz fills 48 KiB in about 20 s: the first chunk of a busy -a
# recording (mappings, embedded symbols) can need 32 KiB alone, so 32 KiB
# held no interval; after it a steady workload adds only about 2 KiB/s (a
# 128 KiB disk once took more than 60 s, 64 KiB 28 s); the guard stops a recorder
# that would not notice the full disk.
timeout -s INT 60 "$SA_RECORD" -F 999 --interval 0.25 -o "$out" >"$T/out" 2>"$T/err"
rc=$?
kill "$busy" 2>/dev/null
wait "$busy" 2>/dev/null
ms=$((($(date +%s%N) - start) / 1000000))
[ $rc = 1 ]
ok $? "sa-record exits 1 (got $rc after $ms ms; 124 means it ran until the guard)"
[ $rc -lt 124 ] && [ $ms -lt 30000 ]
ok $? "no crash, no hang: status $rc < 124 after $ms ms"
grep -q "$out" "$T/err" && grep -qi 'no space left on device' "$T/err"
ok $? "the error names the file and the cause: $(tail -n 1 "$T/err")"
pgrep -f "sa-record -F 999 --interval 0.25 -o $out" >/dev/null
ok $((!$?)) "no recorder left running"

size=$(stat -c %s "$out")
[ "$size" -ge 49152 ]
ok $? "the file holds what fitted: $size bytes"
"$SA_REPORT" --info "$out" >"$T/info" 2>&1
rc=$?
grep -q '^  finished: *no:' "$T/info"
ok $((rc || $?)) "sa-report --info reads it (exit $rc) and says: $(grep '^  finished:' "$T/info" | sed 's/^ *//')"
kept=$(awk '/^  samples:/ { print $2; exit }' "$T/info")
ivs=$(sed -n 's/^  duration:.*(\([0-9]*\) intervals).*/\1/p' "$T/info")
"$SA_REPORT" "$out" >"$T/folded" 2>/dev/null
rc=$?
total=$(folded_total "$T/folded")
[ $rc = 0 ] && [ "${ivs:-0}" -ge 1 ] && [ "$total" = "$kept" ] && [ "$total" -gt 0 ]
ok $? "complete chunks kept: $ivs intervals, $total samples in folded output (--info: $kept)"
[ "$(folded_bad_lines "$T/folded")" = 0 ]
ok $? "and every folded line parses"
done_testing
