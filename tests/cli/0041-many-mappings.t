#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# 0041-many-mappings.t - a recording whose mapping records are over what
# the reader keeps (docs/format.md, "Limits"; 64 x the file's size + 16
# MiB) still shows every interval it holds, never "holds no samples".
# As one hostile process makes them: 15,000 executable mappings of one
# file at a 3,990-byte path (60 MB of records in ~250 KB of file) cost
# one path, not 15,000, and are all kept; 15,000 of distinct 3,990-byte
# paths (hard links) are kept up to half the bound, the rest counted and
# named ("N mappings ... not kept ...: pid P: N, the first PATH"), and the
# samples after them read. On 10d6d12 both files were "holds no samples".
. "$(dirname "$0")/lib.sh"
require_report
[ -x /usr/bin/python3 ] || skip_all "python3 not installed (makes the files)"
command -v zstd >/dev/null || skip_all "zstd not installed (compresses the chunks)"
tmpdir
T=$tap_tmp
SEED=$SA_SRC/tests/fuzz/corpus/fuzz_reader/clean.sa
[ -f "$SEED" ] || skip_all "no seed $SEED"
plan 8

# make same|distinct OUT: the seed's header and META, 15,000 MAP records
# of pid 100 (in chunks of 1 MiB, as the recorder writes them), then 3
# intervals each with 5 samples of pid 100 and 5 of pid 200, and END
make_file()
{
	/usr/bin/python3 - "$SEED" "$2" "$1" <<'PYEOF'
import struct, subprocess, sys, zlib
def uv(v):
    o = b''
    while True:
        b = v & 0x7f; v >>= 7
        if not v: return o + bytes([b])
        o += bytes([b | 0x80])
def s(x): return uv(len(x)) + x
def rec(kind, body): b = uv(kind) + body; return uv(len(b)) + b
seed, out_path, what = sys.argv[1:]
d = open(seed, 'rb').read()
hs = struct.unpack_from('<H', d, 12)[0]
ch, cp = struct.unpack_from('<HxxI', d, hs + 4)
out = bytearray(d[:hs + ch + cp]); seq = 1
def chunk(typ, content):
    global seq
    p = subprocess.run(['zstd', '-q', '-3', '-c', '--stream-size=%d' % len(content)],
                       input=content, capture_output=True, check=True).stdout
    h = struct.pack('<IHHIII', typ, 24, 1, len(p), len(content), seq)
    out.extend(h + struct.pack('<I', zlib.crc32(h + p) & 0xffffffff) + p); seq += 1
path = b'/tmp/' + b'/'.join(bytes([97 + i]) + b'd' * 199 for i in range(19)) + b'/lib' + b'f' * 140
chunk(2, rec(2, uv(100) + uv(0) + uv(1) + uv(1000) + s(b'hostile') + s(b'/bin/hostile')) +
         rec(2, uv(200) + uv(0) + uv(1) + uv(1000) + s(b'victim') + s(b'/bin/victim')))
b = bytearray()
for i in range(15000):
    p = path + (b'%d' % i if what == 'distinct' else b'') + b'.so'
    b += rec(3, uv(100) + uv(0) + uv(1001) + uv(0x10000000 + i * 0x2000) +
             uv(0x10001000 + i * 0x2000) + uv(0) + uv(1) + uv(0x801) + uv(1234 + i) + s(p) + s(b''))
    if len(b) > (1 << 20):
        chunk(2, bytes(b)); b = bytearray()
chunk(2, bytes(b))
for iv in range(3):
    t = 2000 + iv * 1000000000
    body = rec(7, uv(iv) + uv(t) + uv(t + 1000000000))
    body += rec(8, uv(100) + uv(100) + uv(0) * 3 + uv(5) + s(b'hostile'))
    body += rec(8, uv(200) + uv(200) + uv(0) * 3 + uv(5) + s(b'victim'))
    body += rec(9, uv(iv) + uv(2) + uv(1) + uv(10) + uv(2) + uv(10))
    chunk(4, body)
h = struct.pack('<IHHIII', 15, 24, 0, 0, 0, seq)
end = rec(14, uv(2000 + 3 * 1000000000) + uv(30) + uv(0) + uv(3) + uv(seq - 1))
h = struct.pack('<IHHIII', 15, 24, 0, len(end), len(end), seq)
out.extend(h + struct.pack('<I', zlib.crc32(h + end) & 0xffffffff) + end)
open(out_path, 'wb').write(out)
PYEOF
}

for kind in same distinct; do
	make_file $kind "$T/$kind.sa"
	size=$(stat -c %s "$T/$kind.sa")
	"$SA_REPORT" --show-pid "$T/$kind.sa" >"$T/$kind.folded" 2>"$T/$kind.err"
	rc=$?
	total=$(folded_total "$T/$kind.folded")
	ok $([ $rc = 0 ] && [ "$total" = 30 ] && ! grep -q 'holds no samples' "$T/$kind.err"; echo $?) \
		"$kind paths ($size bytes): exit $rc, $total of 30 samples$(grep -q 'holds no samples' "$T/$kind.err" && echo ': holds no samples')"
	"$SA_REPORT" --info "$T/$kind.sa" >"$T/$kind.info" 2>/dev/null
	grep -qE '^  duration: .*\(3 intervals\)' "$T/$kind.info" &&
		grep -q '^  finished: *cleanly' "$T/$kind.info"
	ok $? "$kind paths: --info reads its 3 intervals, finished cleanly: $(grep -E '^  (duration|finished):' "$T/$kind.info" | tr -s ' ' | tr '\n' ' ')"
done
! grep -q 'not kept' "$T/same.err"
ok $? "15,000 mappings of one path: all kept, nothing said"
grep -qE "distinct.sa: [0-9]+ mappings and 0 symbol or process records not kept .*: pid 100: [0-9]+, the first /tmp/add" "$T/distinct.err"
ok $? "distinct paths: the mappings not kept are said, with their process: $(grep -o '[0-9]* mappings.*' "$T/distinct.err" | cut -c 1-160)"
n=$(grep -o '[0-9]* mappings and' "$T/distinct.err" | cut -d' ' -f1)
[ "${n:-0}" -gt 0 ] && [ "${n:-0}" -lt 15000 ] && grep -q "^  dropped: *$n mappings" "$T/distinct.info"
ok $? "distinct paths: some kept, $n not, --info says it too"
# samples of the victim, whose mappings are all there
[ "$(folded_total "$T/distinct.folded" victim-200)" = 15 ]
ok $? "distinct paths: the other process's 15 samples are all shown"
done_testing
