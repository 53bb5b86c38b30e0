#!/bin/bash
# SPDX-License-Identifier: MIT
# 5050-bomb.t - files that declare huge sizes (docs/reliability.md,
# "Decompression bombs"): sa-report refuses them with a clear error and
# never allocates what they declare; peak RSS comes from /usr/bin/time -v.
# Each file is a valid header and META chunk (from a seed of the reader's
# corpus) followed by one forged chunk with a correct CRC, so only the
# sizes are hostile.
. "$(dirname "$0")/lib.sh"
require_report
[ -x /usr/bin/time ] || skip_all "/usr/bin/time (GNU time) not installed"
command -v python3 >/dev/null || skip_all "python3 not installed (forges the files)"
command -v zstd >/dev/null || skip_all "zstd not installed (compresses the bombs)"
tmpdir
T=$tap_tmp
SEED=$SA_SRC/tests/fuzz/corpus/fuzz_reader/clean.sa
[ -f "$SEED" ] || skip_all "no seed $SEED"
plan 11

# A frame that really expands to 1 GiB (zeros, 33 KB of RLE blocks) without
# a declared size, one that declares 1 GiB, and a small honest one.
head -c 1G /dev/zero | zstd -q -19 --no-content-size -c >"$T/gib-nosize.zst"
head -c 1G /dev/zero | zstd -q -19 -c >"$T/gib.zst"
head -c 100 /dev/zero | zstd -q -c >"$T/small.zst"

# forge NAME TYPE FLAGS PAYLOAD_SIZE CONTENT_SIZE PAYLOAD_FILE
forge()
{
	python3 - "$SEED" "$T/$1.sa" "$2" "$3" "$4" "$5" "$6" <<'EOF'
import struct, sys, zlib
seed, out, typ, flags, psize, csize, pfile = sys.argv[1:]
b = open(seed, 'rb').read()
hs = struct.unpack_from('<H', b, 12)[0]
ch, cp = struct.unpack_from('<HxxI', b, hs + 4)  # META chunk: header_size, payload_size
head = b[:hs + ch + cp]
payload = open(pfile, 'rb').read() if pfile != '-' else b''
h = struct.pack('<IHHIII', int(typ), 24, int(flags), int(psize, 0), int(csize, 0), 1)
crc = zlib.crc32(h + payload) & 0xffffffff
open(out, 'wb').write(head + h + struct.pack('<I', crc) + payload)
EOF
}

# bomb NAME LIMIT_KB WHAT: sa-report (folded, then --info) on T/NAME.sa
# fails with a message naming the file, by exit 1, under LIMIT_KB of RSS.
bomb()
{
	local rc rss msg

	/usr/bin/time -v -o "$T/$1.time" "$SA_REPORT" "$T/$1.sa" >"$T/$1.out" 2>"$T/$1.err"
	rc=$?
	rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$T/$1.time")
	msg=$(grep -v '^	' "$T/$1.err" | grep -v 'Command exited' | head -n 1)
	[ $rc = 0 -o $rc = 1 ] && echo "$msg" | grep -q "$1.sa"
	ok $? "$3: refused or dropped with a message (exit $rc): $msg"
	[ "${rss:-999999}" -lt "$2" ]
	ok $? "$3: peak RSS ${rss:-?} KiB < $2 KiB"
}

# ASan's shadow memory and quarantine add their own tens of MiB.
base=40000
[ "${SA_SANITIZED:-0}" = 1 ] && base=160000

forge over 4 1 "$(stat -c %s "$T/small.zst")" 0xfffffff0 "$T/small.zst"
bomb over $base "content_size 4 GiB (over the 64 MiB limit)"
grep -q 'over the .*limit' "$T/over.err"
ok $? "the message says which limit: $(grep -o 'content size.*limit' "$T/over.err")"

forge lying 4 1 "$(stat -c %s "$T/small.zst")" 0x4000000 "$T/small.zst"
bomb lying $base "content_size 64 MiB, a 9-byte frame of 100 bytes"

forge nosize 4 1 "$(stat -c %s "$T/gib-nosize.zst")" 0x4000000 "$T/gib-nosize.zst"
bomb nosize $((base + 70000)) "a 33 KB frame expanding to 1 GiB, no declared size"

forge gib 4 1 "$(stat -c %s "$T/gib.zst")" 0x4000000 "$T/gib.zst"
bomb gib $((base + 70000)) "a frame declaring 1 GiB in a 64 MiB chunk"

forge payload 4 1 0xfffffff0 0x1000 -
bomb payload $base "payload_size 4 GiB in a file of $(stat -c %s "$T/payload.sa") bytes"
done_testing
