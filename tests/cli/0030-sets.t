#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# 0030-sets.t - sets of recordings (docs/format.md, "Concatenated
# recordings"): a file that holds no interval (a recorder killed during a
# rotation leaves header and META, ~260 bytes; a live --rotate set's
# newest file is in its first interval, cut inside a chunk) is named on
# stderr and skipped, the others are read (exit 0); `cat` of a set reads
# as the set given file by file; a file with nothing readable alone is
# still exit 1.
. "$(dirname "$0")/lib.sh"

require_report
GEN=$SA_BUILD/tests/bench/gen-synthetic
[ -x "$GEN" ] || skip_all "gen-synthetic not built"
command -v python3 >/dev/null || skip_all "python3 not installed (cuts the files)"
tmpdir
T=$tap_tmp
R=$SA_REPORT

plan 19

sum() { awk '{ s += $NF } END { print s + 0 }' "$@"; }

# an 8-file set of different sizes (each file a recording of its own)
for i in 1 2 3 4 5 6 7 8; do
	"$GEN" -s $((20 * i)) -d 5 -p 2 -k 4 -i 4 -n $((1000 * i)) -o "$T/set-$i.sa"
done
# cut FILE OUT N: OUT holds the file header and the first N chunks of FILE,
# and with a 4th argument that many bytes of the next chunk
cut()
{
	python3 - "$@" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
off = struct.unpack_from('<H', d, 12)[0]
for _ in range(int(sys.argv[3])):
    hs, ps = struct.unpack_from('<HxxI', d, off + 4)
    off += hs + ps
extra = int(sys.argv[4]) if len(sys.argv) > 4 else 0
open(sys.argv[2], 'wb').write(d[:off + extra])
EOF
}
cut "$T/set-3.sa" "$T/short.sa" 1          # header and META: a killed rotation
cut "$T/set-5.sa" "$T/live.sa" 2 40        # first interval still being written
ok $([ "$(stat -c %s "$T/short.sa")" -lt 400 ]; echo $?) "the short file is header and META ($(stat -c %s "$T/short.sa") bytes)"

"$R" -q "$T"/set-?.sa >"$T/set.folded"
ok $([ "$(sum "$T/set.folded")" = 36000 ]; echo $?) "the set alone: 36000 samples"

# a set with the short file: the others are read, the short one is named
"$R" "$T"/set-?.sa "$T/short.sa" >"$T/ws.folded" 2>"$T/ws.err"; rc=$?
ok $rc "set + short file: exit $rc"
cmp -s "$T/set.folded" "$T/ws.folded"; ok $? "set + short file: the set's stacks, all of them"
grep -q "short.sa: holds no samples" "$T/ws.err"; ok $? "the short file is named: $(grep short.sa "$T/ws.err" | head -c 160)"
for m in --top --svg --info; do
	"$R" -q $m "$T"/set-?.sa "$T/short.sa" >"$T/m.out" 2>/dev/null; rc=$?
	ok $([ $rc = 0 ] && [ -s "$T/m.out" ]; echo $?) "set + short file with $m: exit $rc, output"
done
"$R" --info "$T"/set-1.sa "$T/short.sa" 2>/dev/null | grep -q "skipped: *holds no samples"
ok $? "--info says the short file was skipped"

# a live set whose newest file is in its first interval
"$R" "$T"/set-?.sa "$T/live.sa" >"$T/live.folded" 2>"$T/live.err"; rc=$?
cmp -s "$T/set.folded" "$T/live.folded" && [ $rc = 0 ]
ok $? "set + file in its first interval: exit $rc, the set's stacks"
grep -q "live.sa: holds no samples" "$T/live.err"; ok $? "the live file is named"

# alone, a file with no interval is still a failure
"$R" "$T/short.sa" >/dev/null 2>&1; ok $([ $? = 1 ]; echo $?) "short file alone: exit 1"

# cat of the set reads as the set; with the short and live files inside too
cat "$T"/set-?.sa >"$T/cat.sa"
"$R" "$T/cat.sa" >"$T/cat.folded" 2>"$T/cat.err"; rc=$?
cmp -s "$T/set.folded" "$T/cat.folded" && [ $rc = 0 ]
ok $? "cat of 8 files: the same stacks and counts ($(sum "$T/cat.folded") of 36000), exit $rc"
ok $([ ! -s "$T/cat.err" ] || ! grep -qv 'lost samples' "$T/cat.err"; echo $?) "cat of 8 clean files: nothing said but losses"
cat "$T/set-1.sa" "$T/short.sa" "$T/set-2.sa" "$T/live.sa" "$T"/set-[3-8].sa >"$T/cat2.sa"
"$R" "$T/cat2.sa" >"$T/cat2.folded" 2>"$T/cat2.err"
cmp -s "$T/set.folded" "$T/cat2.folded"
ok $? "cat with a short and a cut file inside: the set's stacks ($(sum "$T/cat2.folded"))"
ok $([ "$(grep -c 'holds no samples' "$T/cat2.err")" = 2 ]; echo $?) "both named: $(grep -o 'cat2.sa[^:]*: holds no samples' "$T/cat2.err" | tr '\n' ' ')"
ok $([ "$("$R" --info "$T/cat.sa" 2>/dev/null | grep -c '^file: ')" = 8 ]; echo $?) "--info lists the 8 recordings of the stream"

# standard input: spilled to a temporary file, named "-" in messages
cat "$T/set-1.sa" "$T/short.sa" | "$R" - >/dev/null 2>"$T/stdin.err"
grep -q '^sa-report: - (recording 2 at offset [0-9]*): holds no samples' "$T/stdin.err" &&
	! grep -q /proc/self "$T/stdin.err"
ok $? "a recording on standard input is named -: $(head -c 100 "$T/stdin.err")"
{ cat "$T/set-1.sa"; head -c 1000 /dev/zero; } | "$R" - >/dev/null 2>"$T/junk.err"
grep -q '^sa-report: -: offset [0-9]*: 1000 bytes after the end chunk ignored' "$T/junk.err"
ok $? "bytes after END that are no recording are said: $(head -n 1 "$T/junk.err")"
done_testing
