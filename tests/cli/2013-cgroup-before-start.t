#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-record -G names the frames of a process that was in the cgroup before
# the recording began and exited before its first interval ended. Such a
# process ran no exec the recorder saw, so its mappings come from /proc;
# they were read when its first sample was written, at the interval's end,
# and by then it had gone: every frame of it unnamed ([unknown]). The
# compile loop of make accuracy lost its first cc1 that way (2.2% of the
# loop's samples, docs/accuracy.md). The recorder now reads the cgroup's
# processes' mappings as it starts (record/loop.c, capture_targets()).
# Here a busy process in a fresh cgroup runs 0.6 s into a recording whose
# interval is 5 s: all of its samples but the few in its exit must reach
# sa_busy_loop and main. The recorder before (3b18d53) gave 0 of 625.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples busy
tmpdir
T=$tap_tmp
mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$mnt" ] || skip_all "no cgroup2 mount"
cg=$mnt/sa-test-2013-$$
mkdir "$cg" || skip_all "cannot create a cgroup under $mnt"
plan 4

"$SA_SAMPLES/busy" -d 60 &
busy=$!
echo $busy >"$cg/cgroup.procs"
ok $? "busy ($busy) moved into $cg"
"$SA_RECORD" -q -G "$cg" -F 999 --interval 5 --duration 10 -o "$T/g.sa" 2>"$T/err" &
rec=$!
(sleep 60 && kill -KILL $rec 2>/dev/null) &
dog=$!
# sampling runs once the recorder holds its BPF links (the file gets its
# name only at the first interval's end)
for _ in $(seq 600); do
	ls -l /proc/$rec/fd 2>/dev/null | grep -q bpf_link && break
	sleep 0.05
done
sleep 0.6
kill $busy
wait $busy 2>/dev/null
kill -INT $rec
wait $rec
ok $? "sa-record -G ended cleanly" || diag_file "$T/err"
pkill -P $dog 2>/dev/null; kill $dog 2>/dev/null
rmdir "$cg"
"$SA_REPORT" -o "$T/g.folded" "$T/g.sa" 2>>"$T/err"
all=$(folded_total "$T/g.folded" busy)
named=$(folded_with "$T/g.folded" busy sa_busy_loop)
main=$(folded_with "$T/g.folded" busy main)
# 0.6 s at 999 Hz: about 600 samples; the exit's few have no user frame
[ "$all" -ge 200 ]
ok $? "busy has $all samples (>= 200)" || diag_file "$T/err"
ge "$(pct "$named" "$all")" 95 && [ "$main" -ge "$named" ]
ok $? "$named of them reach sa_busy_loop ($(pct "$named" "$all")%, want >= 95), $main main" ||
	head -5 "$T/g.folded" | sed 's/^/# /'

done_testing
