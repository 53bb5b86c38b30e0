#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# 0070-stdin-stream.t - a recording on standard input is read as a stream
# (docs/format.md, "Reading a stream"; docs/input.md): with writes to any
# file limited to 1 MiB (ulimit -f: the old copy of the pipe to a
# temporary file fails), a 64 MiB recording reads in a few MiB of RSS, with
# the file's output in every mode; damage, bytes after END and a crafted
# file past the whole-file bound are said as for a file, naming "-"; a pipe
# given by name (<(cmd)) reads the same way.
. "$(dirname "$0")/lib.sh"
require_report
[ -x /usr/bin/time ] || skip_all "/usr/bin/time (GNU time) not installed"
command -v python3 >/dev/null || skip_all "python3 not installed (makes the streams)"
command -v zstd >/dev/null || skip_all "zstd not installed (compresses a crafted chunk)"
tmpdir
T=$tap_tmp
SEED=$SA_SRC/samples/demo.sa
[ -f "$SEED" ] || skip_all "no seed $SEED"
plan 13

# gen [MIB [DAMAGE]]: the seed's chunks on stdout with MIB chunks of 1 MiB of
# a type no reader knows (skipped) after its first half, chunk numbers
# renumbered; DAMAGE=1 flips the checksum of the middle one of them.
gen()
{
	python3 - "$SEED" "${1:-0}" "${2:-0}" <<'EOF'
import struct, sys, zlib
seed, mib, damage = sys.argv[1], int(sys.argv[2]), sys.argv[3] == '1'
d = open(seed, 'rb').read()
hs = struct.unpack_from('<H', d, 12)[0]
chunks, off = [], hs
while off < len(d):
    t, h, f, p, c, s = struct.unpack_from('<IHHIII', d, off)
    chunks.append((t, f, c, d[off + h:off + h + p])); off += h + p
out = sys.stdout.buffer
out.write(d[:hs])
seq, pad = 0, bytes(1 << 20)
def put(t, f, c, p, bad=False):
    global seq
    h = struct.pack('<IHHIII', t, 24, f, len(p), c, seq)
    out.write(h + struct.pack('<I', (zlib.crc32(h + p) & 0xffffffff) ^ bad) + p); seq += 1
for i, (t, f, c, p) in enumerate(chunks):
    if i == len(chunks) // 2:
        for k in range(mib):
            put(99, 0, len(pad), pad, damage and k == mib // 2)
    put(t, f, c, p)
EOF
}

# rss FILE: the peak RSS in KiB that /usr/bin/time -v wrote to FILE
rss() { awk -F': ' '/Maximum resident set size/ { print $2 }' "$1"; }

# ASan's shadow memory and quarantine add their own tens of MiB.
limit=32768
[ "${SA_SANITIZED:-0}" = 1 ] && limit=262144

"$SA_REPORT" "$SEED" >"$T/ref" 2>/dev/null
(
	ulimit -f 1024
	gen 64 | /usr/bin/time -v -o "$T/time" "$SA_REPORT" - >"$T/out" 2>"$T/err"
)
rc=$?
r=$(rss "$T/time")
ok $rc "64 MiB of recording on stdin, file writes limited to 1 MiB: exit $rc"
diag_file "$T/err" 3
cmp -s "$T/ref" "$T/out"
ok $? "its stacks are the recording's"
[ "${r:-999999999}" -lt $limit ]
ok $? "peak RSS ${r:-?} KiB < $limit KiB for 65 MiB of input"

for mode in --top --svg --pprof --speedscope --info; do
	"$SA_REPORT" $mode -o "$T/file$mode" "$SEED" 2>/dev/null
	gen 4 | "$SA_REPORT" $mode -o "$T/pipe$mode" - 2>/dev/null
	rc=$?
	[ $mode = --info ] && sed -i "s|^file: .*|file: -|" "$T/file$mode"
	[ $mode = --info ] && sed -i "/chunks\|bytes/d" "$T/file$mode" "$T/pipe$mode"
	[ $rc = 0 ] && cmp -s "$T/file$mode" "$T/pipe$mode"
	ok $? "$mode through stdin: the file's output"
done

# damage in the middle of the stream: skipped, said naming -, as for the file
gen 8 1 >"$T/damaged.sa"
"$SA_REPORT" "$T/damaged.sa" >"$T/d.file" 2>"$T/d.file.err"
gen 8 1 | "$SA_REPORT" - >"$T/d.pipe" 2>"$T/d.pipe.err"
rc=$?
sed -i "s|$T/damaged.sa|-|" "$T/d.file.err"
[ $rc = 0 ] && cmp -s "$T/d.file" "$T/d.pipe" && cmp -s "$T/d.file.err" "$T/d.pipe.err" &&
	grep -q '^sa-report: -: recording damaged: .*checksum mismatch.*resumed at offset' \
		"$T/d.pipe.err"
ok $? "a damaged chunk on stdin is skipped, said as for the file: $(head -c 120 "$T/d.pipe.err")"

# 64 MiB of zeros after END: read to the end, counted, in bounded memory
{ cat "$SEED"; head -c 64M /dev/zero; } |
	/usr/bin/time -v -o "$T/time" "$SA_REPORT" - >"$T/z.out" 2>"$T/z.err"
rc=$?
r=$(rss "$T/time")
grep -q '^sa-report: -: .*67108864 bytes after the end chunk ignored' "$T/z.err" &&
	[ $rc = 0 ] && cmp -s "$T/ref" "$T/z.out" && [ "${r:-999999999}" -lt $limit ]
ok $? "64 MiB of zeros after END: counted, exit $rc, peak RSS ${r:-?} KiB"
diag_file "$T/z.err" 2

# a pipe given by name reads as a stream too (it used to lose its first 64 KiB)
"$SA_REPORT" <(gen 2) >"$T/named" 2>"$T/named.err"
ok $? "<(cmd): exit 0"
cmp -s "$T/ref" "$T/named"
ok $? "<(cmd): the recording's stacks"

# a crafted recording past the whole-file bound: the bound of the bytes read
python3 - "$SEED" "$T/bomb.sa" <<'EOF'
import struct, subprocess, sys, zlib
def uv(v):
    o = b''
    while True:
        b = v & 0x7f; v >>= 7
        if not v: return o + bytes([b])
        o += bytes([b | 0x80])
def rec(kind, body): b = uv(kind) + body; return uv(len(b)) + b
d = open(sys.argv[1], 'rb').read()
hs = struct.unpack_from('<H', d, 12)[0]
ch, cp = struct.unpack_from('<HxxI', d, hs + 4)
out = bytearray(d[:hs + ch + cp])
r = rec(10, uv(0xffffffff81000000) + uv(1) + b'k' + uv(0))  # KSYM records
body = r * ((4 << 20) // len(r))
p = subprocess.run(['zstd', '-q', '-3', '-c', '--stream-size=%d' % len(body)],
                   input=body, capture_output=True, check=True).stdout
for seq in range(1, 5):
    h = struct.pack('<IHHIII', 5, 24, 1, len(p), len(body), seq)
    out += h + struct.pack('<I', zlib.crc32(h + p) & 0xffffffff) + p
open(sys.argv[2], 'wb').write(out)
EOF
/usr/bin/time -v -o "$T/time" "$SA_REPORT" - <"$T/bomb.sa" >/dev/null 2>"$T/b.err"
rc=$?
# 100 MiB; under ASan its shadow and quarantine take 150 MiB here, as above
blimit=102400
[ "${SA_SANITIZED:-0}" = 1 ] && blimit=262144
r=$(rss "$T/time")
grep -q '^sa-report: -: .*the bound for the first [0-9]* bytes of a stream' "$T/b.err" &&
	[ $rc -le 1 ] && [ "${r:-999999999}" -lt $blimit ]
ok $? "a crafted recording on stdin: the stream's bound said naming -, exit $rc, ${r:-?} KiB"
diag_file "$T/b.err" 2
done_testing
