#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# 0031-sets-unreadable.t - a set of recordings (`sa-report web*.sa`) with
# inputs that cannot be read at all: one of a newer major version of the
# format, junk, one that does not exist. Each is named on stderr
# ("cannot be read, skipped") and in --info, the rest of the set is shown
# whole, and the exit status is 3 (docs/sa-report.1, EXIT STATUS), never 0;
# alone, or with nothing readable beside it, such a file is still exit 1.
. "$(dirname "$0")/lib.sh"

require_report
GEN=$SA_BUILD/tests/bench/gen-synthetic
[ -x "$GEN" ] || skip_all "gen-synthetic not built"
[ -x /usr/bin/python3 ] || skip_all "python3 not installed (writes the newer file)"
tmpdir
T=$tap_tmp
R=$SA_REPORT

plan 12

sum() { awk '{ s += $NF } END { print s + 0 }' "$@"; }

for i in 1 2 3; do
	"$GEN" -s $((20 * i)) -d 5 -p 2 -k 4 -i 4 -n $((1000 * i)) -o "$T/web$i.sa"
done
# web4: a recording whose header says format 9.0 (crc32 of bytes 0..19 redone)
cp "$T/web1.sa" "$T/web4.sa"
/usr/bin/python3 - "$T/web4.sa" <<'PYEOF'
import struct, sys, zlib
d = bytearray(open(sys.argv[1], 'rb').read())
struct.pack_into('<HH', d, 8, 9, 0)
struct.pack_into('<I', d, 20, zlib.crc32(bytes(d[:20])))
open(sys.argv[1], 'wb').write(d)
PYEOF
# web5: junk; web6: the magic, then junk
head -c 6000 /dev/urandom | tr '\0' x >"$T/web5.sa"
{ printf 'SAF\0\r\n\032\n'; head -c 6000 /dev/urandom; } >"$T/web6.sa"

"$R" -q "$T"/web[123].sa >"$T/good.folded"
ok $([ "$(sum "$T/good.folded")" = 6000 ]; echo $?) "the readable files alone: 6000 samples, exit 0"

"$R" "$T"/web[1-6].sa "$T/web7.sa" >"$T/set.folded" 2>"$T/set.err"
rc=$?
ok $([ $rc = 3 ]; echo $?) "set with a newer, two junk and a missing file: exit 3 ($rc)"
cmp -s "$T/good.folded" "$T/set.folded"
ok $? "the readable files' stacks, all of them ($(sum "$T/set.folded") of 6000)"
for f in web4 web5 web6 web7; do
	grep -q "^sa-report: $T/$f.sa: cannot be read, skipped: " "$T/set.err"
	ok $? "$f named: $(grep "$f.sa" "$T/set.err" | head -n 1 | cut -c 1-150)"
done
grep -q "web4.sa: cannot be read, skipped: .*newer" "$T/set.err"
ok $? "the newer one says it is newer"

"$R" --info "$T"/web[14].sa >"$T/info" 2>/dev/null
rc=$?
grep -A1 "^file: $T/web4.sa" "$T/info" | grep -q "skipped: *cannot be read: .*newer" &&
	grep -q "^file: $T/web1.sa" "$T/info" && [ $rc = 3 ]
ok $? "--info names the skipped file and why, exit 3 ($rc)"

"$R" --top "$T"/web[15].sa >"$T/top" 2>/dev/null
rc=$?
ok $([ $rc = 3 ] && [ -s "$T/top" ]; echo $?) "--top of a set with junk: the table, exit 3 ($rc)"

"$R" "$T/web4.sa" >/dev/null 2>"$T/alone.err"
rc=$?
ok $([ $rc = 1 ] && grep -q newer "$T/alone.err"; echo $?) "the newer file alone: exit 1 ($rc)"
"$R" "$T"/web[456].sa >"$T/none.out" 2>/dev/null
rc=$?
ok $([ $rc = 1 ] && [ ! -s "$T/none.out" ]; echo $?) "a set where nothing can be read: exit 1 ($rc), no output"
done_testing
