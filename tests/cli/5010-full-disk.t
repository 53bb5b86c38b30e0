#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (records -a into a full disk)
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
# How long the disk takes to fill depends on the host (from about 4 s to
# 30.2 s here on 2026-12-03): what is bounded is the time
# from the moment it is full (no free block left, polled every 50 ms) to
# the recorder's exit.
(
	while [ "$(stat -f -c %a "$T/mnt")" -gt 0 ]; do sleep 0.05; done
	date +%s%N >"$T/full_at"
) &
poller=$!
timeout -s INT 60 "$SA_RECORD" -F 999 --interval 0.25 -o "$out" >"$T/out" 2>"$T/err"
rc=$?
end=$(date +%s%N)
# the last write may have filled the disk within the poller's last 50 ms
# (a san run in CI: "? ms", the file 48 KiB): a full disk now counts as
# full at the exit
[ -s "$T/full_at" ] || [ "$(stat -f -c %a "$T/mnt")" -gt 0 ] || echo "$end" >"$T/full_at"
kill "$busy" "$poller" 2>/dev/null
wait "$busy" "$poller" 2>/dev/null
ms=$(((end - start) / 1000000))
full_ms=$([ -s "$T/full_at" ] && echo $(((end - $(cat "$T/full_at")) / 1000000)))
[ $rc = 1 ]
ok $? "sa-record exits 1 (got $rc after $ms ms; 124 means it ran until the guard)"
# 5 s: the stop path's own bound (the END record within 1.3 s of a stop,
# docs/reliability.md) with room for ASan and a loaded host
[ $rc -lt 124 ] && [ -n "$full_ms" ] && [ "$full_ms" -lt 5000 ]
ok $? "no crash, no hang: status $rc < 124, ${full_ms:-?} ms after the disk was full (< 5000)"
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
