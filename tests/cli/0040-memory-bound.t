#!/bin/bash
# SPDX-License-Identifier: MIT
# 0040-memory-bound.t - a small valid file cannot take the host's memory
# (docs/format.md, "Limits"): ~200 KB files whose chunks hold millions of
# well-compressing MAP, KSYM, USYM, JITSYM or STACK records (each
# chunk valid, each record valid) are read up to a bound proportional to
# the file's size (mappings and symbols past half of it are counted, not
# kept, and the interval after them is read), said on stderr naming the file, in under 100 MiB of RSS
# in folded and --info modes, and for two kinds in every mode (--top,
# --svg, --pprof, --speedscope, --diff too). Before the bound, such files took 0.9 to
# 1.5 GB and up to 70 s. The files are made here by a python generator.
. "$(dirname "$0")/lib.sh"
require_report
[ -x /usr/bin/time ] || skip_all "/usr/bin/time (GNU time) not installed"
command -v python3 >/dev/null || skip_all "python3 not installed (makes the files)"
command -v zstd >/dev/null || skip_all "zstd not installed (compresses the chunks)"
tmpdir
T=$tap_tmp
SEED=$SA_SRC/tests/fuzz/corpus/fuzz_reader/clean.sa
[ -f "$SEED" ] || skip_all "no seed $SEED"
plan 11

# make KIND OUT: the seed's header and META, 4 chunks of 4 MiB of KIND
# records, a skipped chunk of padding to 200 KB, one interval with a count.
make_file()
{
	python3 - "$SEED" "$2" "$1" <<'EOF'
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
def chunk(typ, content, z=True):
    global seq
    p = subprocess.run(['zstd', '-q', '-3', '-c', '--stream-size=%d' % len(content)],
                       input=content, capture_output=True, check=True).stdout if z else content
    h = struct.pack('<IHHIII', typ, 24, 1 if z else 0, len(p), len(content), seq)
    out.extend(h + struct.pack('<I', zlib.crc32(h + p) & 0xffffffff) + p); seq += 1
LIM = 4 << 20
for c in range(4):
    if what == 'map':
        r = rec(3, uv(1) + uv(0) * 2 + uv(0x1000) + uv(0x2000) + uv(0) + uv(1) + uv(0) * 2 + s(b'/a') + s(b''))
        typ, body = 2, r * (LIM // len(r))
    elif what == 'ksym':
        r = rec(10, uv(0xffffffff81000000) + s(b'k') + s(b'')); typ, body = 5, r * (LIM // len(r))
    elif what == 'usym':
        st = rec(11, s(bytes(20)) + s(b'/x')); r = rec(12, uv(0x100) + uv(16) + s(b'f'))
        typ, body = 6, st + r * ((LIM - len(st)) // len(r))
    elif what == 'jit':
        r = rec(13, uv(1) + uv(0x1000) + uv(16) + s(b'j')); typ, body = 7, r * (LIM // len(r))
    elif what in ('stack', 'proc'):
        b = bytearray(); i = c * 10000000 + 1
        while len(b) < LIM - 5000:
            b += rec(6, uv(i) + uv(0) + uv(4096) + uv(1) * 4096) if what == 'stack' else \
                 rec(2, uv(i) + uv(0) + uv(1) + uv(0) + s(b'c') + s(b''))
            i += 1
        typ, body = (3 if what == 'stack' else 2), bytes(b)
    chunk(typ, body)
chunk(99, bytes(max(0, 200000 - len(out))), z=False)  # a chunk type no reader knows
chunk(4, rec(7, uv(0) + uv(1) + uv(2)) + rec(8, uv(1) * 2 + uv(0) * 3 + uv(5) + s(b'c')))
open(out_path, 'wb').write(out)
EOF
}

# ASan's shadow memory and quarantine add their own tens of MiB.
limit=102400
[ "${SA_SANITIZED:-0}" = 1 ] && limit=262144

for kind in map ksym usym jit stack; do
	make_file $kind "$T/$kind.sa"
	# every mode reads through the same bounds: all of them on two kinds
	worst=0 modes=
	all=("" --info)
	[ $kind = stack ] || [ $kind = ksym ] && all=("" --info --top --svg --pprof --speedscope --diff)
	for mode in "${all[@]}"; do
		# shellcheck disable=SC2086 # an empty mode is no argument
		/usr/bin/time -v -o "$T/time" timeout -s KILL 60 "$SA_REPORT" $mode -o "$T/out" \
			"$T/$kind.sa" $([ "$mode" = --diff ] && echo "$T/$kind.sa") \
			>/dev/null 2>"$T/err"
		rc=$?
		rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$T/time")
		if [ "${rss:-999999999}" -ge $limit ] || [ $rc -gt 1 ]; then
			modes="$modes ${mode:-folded}:${rss:-?}KiB/exit$rc"
		fi
		[ "${rss:-999999999}" -gt $worst ] && worst=${rss:-999999999}
		[ -z "$mode" ] && cp "$T/err" "$T/err.folded" && cp "$T/out" "$T/out.folded"
	done
	ok $([ -z "$modes" ]; echo $?) \
		"$kind ($(stat -c %s "$T/$kind.sa") bytes), ${#all[@]} modes: peak RSS at most $worst KiB < $limit${modes:+; over:$modes}"
	cp "$T/err.folded" "$T/err"
	if [ $kind = stack ]; then
		grep -q "$kind.sa.*the records keep more than .* MiB, the bound for a .*-byte file" "$T/err"
		ok $? "$kind: the bound is said, naming the file: $(grep -o 'the records keep.*file' "$T/err")"
	else
		# mappings and symbols past half the bound are counted, not kept,
		# and the interval after them is read
		grep -qE "$kind.sa: [0-9]+ mappings and [0-9]+ symbol or process records not kept" "$T/err" &&
			[ "$(awk '{ s += $NF } END { print s + 0 }' "$T/out.folded")" = 5 ]
		ok $? "$kind: what was not kept is said, naming the file, and the interval read: $(grep -o '[0-9]* mappings and [0-9]* symbol.*not kept' "$T/err")"
	fi
done

# a real recording is far below the bound: read whole, nothing said
"$SA_REPORT" "$SEED" >/dev/null 2>"$T/err"
ok $? "the seed itself reads"
done_testing
