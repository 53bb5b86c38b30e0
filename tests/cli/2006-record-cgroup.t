#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-record -G: a busy process moved into a fresh cgroup v2 directory is the
# only one sampled, with the path given relative to the cgroup2 mount
# (found in /proc/mounts: /sys/fs/cgroup on pure v2 hosts,
# /sys/fs/cgroup/unified on hybrid ones) and absolute.
. "$(dirname "$0")/2000-record-lib.sh"
need_bpf
mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$mnt" ] || { echo "1..0 # SKIP no cgroup2 mount"; exit 0; }
name=sa-test-$$
mkdir "$mnt/$name" 2>/dev/null || { echo "1..0 # SKIP cannot create a cgroup under $mnt"; exit 0; }
build_busy
echo "1..5"

"$T/busy" 1 & in=$!
"$T/busy" 1 & out=$!
echo $in >"$mnt/$name/cgroup.procs"; ok $? "moved $in into $mnt/$name"
for path in "$name" "$mnt/$name"; do
	"$REC" -q -G "$path" -F 999 --duration 1.5 -o "$T/g.sa"; rc=$?
	"$DUMP" "$T/g.sa" >"$T/g.txt" || rc=1
	pids=$(awk '/^COUNT/ { split($2, a, "="); print a[2] }' "$T/g.txt" | sort -u | tr '\n' ' ')
	[ $rc = 0 ] && [ "$pids" = "$in " ]; ok $? "-G $path: samples only from $in (got: $pids)"
done
"$REC" -q -G no-such-cgroup-$$ --duration 0.2 -o "$T/x.sa" 2>"$T/err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$T/err")" = 1 ]; ok $? "missing cgroup: one line, exit 1 ($(cat "$T/err"))"
kill $in $out; wait $in $out 2>/dev/null
rmdir "$mnt/$name"; ok $? "cgroup removed"
finish
