#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (records -a)
# 5151-never-lose.t - a recording already on disk is never lost
# (docs/reliability.md, "Never lose a recording"): a disk that is full when
# the recording starts leaves FILE and FILE.old byte-identical; a directory
# or a FIFO at FILE.old is refused before sampling, naming that rename; a
# second and a third recorder on the same -o (or the same --rotate set,
# however the path is spelled) are refused while the first runs, which
# keeps its file; a symbolic link at FILE.lock is not followed.
. "$(dirname "$0")/lib.sh"
require_report
require_root_bpf
require_samples workload
tmpdir
T=$tap_tmp
mkdir "$T/mnt"
mount -t tmpfs -o size=64k,mode=0700 sa-test "$T/mnt" 2>"$T/mount.err" ||
	skip_all "cannot mount a tmpfs: $(head -n 1 "$T/mount.err")"
trap 'jobs -p | xargs -r kill 2>/dev/null; umount "$T/mnt" 2>/dev/null; rm -rf "$T"' EXIT
plan 16

# 1. The disk is full when the recording starts. Two 16,000-byte files
# stand for FILE and FILE.old and the rest of the 64 KiB is filled: not
# even the file header can be written. (Leaving one page free tested a
# first interval that does not fit, but whether a first interval fits in
# 4 KiB depends on what the host runs; this case does not.)
M=$T/mnt
head -c 16000 /dev/urandom >"$T/prev"
head -c 16000 /dev/urandom >"$T/prev.old"
cp "$T/prev" "$M/f.sa"
cp "$T/prev.old" "$M/f.sa.old"
dd if=/dev/zero of="$M/fill" bs=4096 2>/dev/null
"$SA_SAMPLES/workload" -t 2 -d 60 >/dev/null 2>&1 &
busy=$!
timeout -s KILL 60 "$SA_RECORD" -a -F 999 --interval 0.25 --duration 5 -o "$M/f.sa" 2>"$T/full.err"
rc=$?
kill $busy
wait $busy 2>/dev/null
[ $rc = 1 ] && grep -q "writing $M/f.sa.*: No space left on device" "$T/full.err"
ok $? "a full disk: exit $rc, the file and the cause named: $(head -n 1 "$T/full.err")"
cmp -s "$M/f.sa" "$T/prev" && cmp -s "$M/f.sa.old" "$T/prev.old"
ok $? "FILE and FILE.old byte-identical"
[ -z "$(ls "$M" | grep -v -x -e f.sa -e f.sa.old -e fill)" ]
ok $? "no temporary or lock file left: $(ls "$M" | tr '\n' ' ')"
grep -q "no interval was written: $M/f.sa left as it was" "$T/full.err"
ok $? "and it says so: $(tail -n 1 "$T/full.err")"
rm -f "$M/fill"

# 2. A directory, then a FIFO, at FILE.old: refused before sampling.
cp "$T/prev" "$T/d.sa"
mkdir "$T/d.sa.old"
start=$(date +%s%N)
"$SA_RECORD" -a --duration 2 -o "$T/d.sa" 2>"$T/dir.err"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
grep -q "cannot keep $T/d.sa as $T/d.sa.old: $T/d.sa.old is a directory" "$T/dir.err"
ok $((rc != 1 || $?)) "a directory at FILE.old: exit $rc, the rename named: $(head -n 1 "$T/dir.err")"
cmp -s "$T/d.sa" "$T/prev" && [ -d "$T/d.sa.old" ] && ! ls "$T" | grep -q 'd\.sa\.\(tmp\|lock\)' &&
	! grep -q 'samples kept' "$T/dir.err"
ok $? "refused before sampling ($ms ms): FILE as it was, nothing written, no summary"
rmdir "$T/d.sa.old"
mkfifo "$T/d.sa.old"
"$SA_RECORD" -a --duration 2 -o "$T/d.sa" 2>"$T/fifo.err"
rc=$?
grep -q "$T/d.sa.old is a FIFO" "$T/fifo.err" && cmp -s "$T/d.sa" "$T/prev" && [ -p "$T/d.sa.old" ]
ok $((rc != 1 || $?)) "a FIFO at FILE.old: exit $rc, refused: $(head -n 1 "$T/fifo.err")"

# 3. Three recorders on one -o: the second and third are refused while the
# first runs, and the first's recording stays whole.
"$SA_RECORD" -a --interval 0.5 --duration 5 -o "$T/l.sa" 2>"$T/l1.err" &
first=$!
for i in $(seq 1 100); do [ -f "$T/l.sa" ] && break; sleep 0.1; done
bad=0
for k in 2 3; do
	"$SA_RECORD" -a --duration 1 -o "$T/l.sa" 2>"$T/l$k.err"
	rc=$?
	grep -q "$T/l.sa is being written by another sa-record (pid $first holds $T/l.sa.lock)" \
		"$T/l$k.err" && [ $rc = 1 ] || bad=1
done
ok $bad "recorders 2 and 3 refused while the first runs: $(head -n 1 "$T/l2.err")"
wait $first
rc=$?
dur=$("$SA_REPORT" --info "$T/l.sa" 2>/dev/null | sed -n 's/^  duration: *\([0-9]*\)\..*/\1/p')
"$SA_REPORT" --info "$T/l.sa" 2>/dev/null | grep -q '^  finished: *cleanly$' && [ "${dur:-0}" -ge 4 ]
ok $((rc || $?)) "the first exits $rc and its file is whole: ${dur:-?} s of 5, finished cleanly"
[ ! -e "$T/l.sa.old" ] && ! ls "$T" | grep -q 'l\.sa\.\(tmp\|lock\)'
ok $? "no FILE.old made, no temporary or lock file left: $(ls "$T" | grep '^l\.sa' | tr '\n' ' ')"

# 4. A --rotate set: the same set however -o is spelled.
mkdir "$T/r"
"$SA_RECORD" -a --interval 0.25 --rotate 1s --duration 4 -o "$T/r/host.sa" 2>"$T/r1.err" &
first=$!
for i in $(seq 1 100); do ls "$T/r" | grep -q '^host-' && break; sleep 0.1; done
"$SA_RECORD" -a --rotate 1s --duration 1 -o "$T/r/./host.sa" 2>"$T/r2.err"
rc=$?
grep -q "is being written by another sa-record (pid $first" "$T/r2.err"
ok $((rc != 1 || $?)) "a second recorder of the same --rotate set: exit $rc: $(head -n 1 "$T/r2.err")"
wait $first
ok $? "the first one ends normally"
bad=0 n=0
for f in "$T"/r/host-*.sa; do
	n=$((n + 1))
	"$SA_REPORT" --info "$f" 2>/dev/null | grep -q '^  finished: *cleanly$' || bad=1
done
ok $((bad || n < 3)) "its $n files all read and finished cleanly"

# 5. A symbolic link at FILE.lock is not followed.
echo keep >"$T/victim"
ln -s "$T/victim" "$T/s.sa.lock"
"$SA_RECORD" -a --duration 1 -o "$T/s.sa" 2>"$T/s.err"
rc=$?
[ $rc = 1 ] && [ "$(cat "$T/victim")" = keep ] && [ ! -e "$T/s.sa" ]
ok $? "a link at FILE.lock: exit $rc, its target untouched: $(head -n 1 "$T/s.err")"
rm "$T/s.sa.lock"
"$SA_RECORD" -a --duration 0.5 -o "$T/s.sa" 2>"$T/s2.err"
rc=$?
"$SA_REPORT" --info "$T/s.sa" 2>/dev/null | grep -q '^  finished: *cleanly$'
ok $((rc || $?)) "once it is gone the recording works: exit $rc"
ok "$([ -e "$T/s.sa.lock" ] && echo 1 || echo 0)" "and its lock is removed at the end"
done_testing
