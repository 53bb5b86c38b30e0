#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (records -a)
# The symbol cache (issue 18, docs/symcache.md): on a whole-system capture,
# sa-report's folded, --top, --svg and --lines output of the workload's
# process (a whole-system report changes as a shared host's binaries do) is
# byte-identical with
# --no-cache, cold, warm, with every cache file damaged, with four reports
# filling one empty cache at once, and with a cache directory that is a
# symlink (not used). A name edited in a cache file, checksum fixed, shows
# up in a warm report (so the cache is read) but not with --no-cache; the
# same edit with a stale checksum is ignored and the file written again.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples workload
tmpdir
T=$tap_tmp

plan 16

command -v python3 >/dev/null || { skip 16 "python3 not installed (edits cache files)"; done_testing; }

export XDG_CACHE_HOME=$T/xdg
C=$XDG_CACHE_HOME/sa
MODES=("" "--top" "--svg" "--lines")

# the workload outlives the recording however long sa-record takes to start
"$SA_SAMPLES/workload" -d 60 -t 2 >/dev/null 2>&1 &
wl=$!
# No longer assumed: that the workload runs its leaves by the time a loaded
# host starts the recorder (once it had no sample in the capture, so the
# name edits below had nothing to edit): its own CPU clock says it does.
for _ in $(seq 300); do
	[ "$(cut -d' ' -f1 "/proc/$wl/schedstat" 2>/dev/null || echo 0)" -gt 300000000 ] && break
	sleep 0.1
done
"$SA_RECORD" -q -F 999 -a --duration 3 -o "$T/cap.sa" 2>"$T/rec.err"
ok $? "sa-record -a --duration 3 with the workload running exits 0"
diag_file "$T/rec.err" 5
kill $wl 2>/dev/null
wait $wl 2>/dev/null

# No longer assumed: that a whole-system capture reports the same twice.
# Other users of a shared host rebuild and delete the binaries it sampled
# between two reports (once every report after the tenth differed from
# the first, the cache not even used); the workload's own binaries do not
# change, so its process is what the reports compare.
PID=(--pid "$wl")

# report TAG [ARGS...]: each mode of MODES into $T/TAG.N; 0 when all exit 0
report()
{
	local tag=$1 i rc=0
	shift
	for i in "${!MODES[@]}"; do
		# shellcheck disable=SC2086 # an empty mode is no argument
		"$SA_REPORT" -q ${MODES[$i]} "${PID[@]}" "$@" -o "$T/$tag.$i" "$T/cap.sa" \
			2>>"$T/$tag.err" || rc=1
	done
	return $rc
}

# same TAG: every mode's output of TAG equals --no-cache's
same()
{
	local i
	for i in "${!MODES[@]}"; do
		cmp -s "$T/ref.$i" "$T/$1.$i" || { diag "${MODES[$i]:-folded} differs"; return 1; }
	done
}

sac_count() { find "$C" -name '*.sac' 2>/dev/null | wc -l; }

report ref --no-cache
ok $? "sa-report --no-cache, folded/--top/--svg/--lines, exits 0"
[ "$(sac_count)" -eq 0 ]
ok $? "--no-cache writes no cache file"
grep -q 'sa_leaf_a' "$T/ref.0"
ok $? "the workload's functions are named"
[ -s "$T/ref.0" ] || diag "no stack of the workload (pid $wl) in the capture"

report cold && same cold
ok $? "cold cache: byte-identical to --no-cache"
n=$(sac_count)
[ "$n" -gt 0 ]
ok $? "the cold reports wrote $n cache files"
report warm && same warm
ok $? "warm cache: byte-identical to --no-cache"

# edit NAME NEW FIXSUM: replace NAME by NEW (same length) in every folded-
# variant cache file holding it, recomputing the checksum when FIXSUM is 1
# (the layout and checksum of docs/symcache.md); prints how many were edited
edit()
{
	python3 - "$C" "$1" "$2" "$3" <<'EOF'
import glob, struct, sys
d, old, new, fix = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode(), sys.argv[4] == "1"
M = (1 << 64) - 1
def mix(x):
    x ^= x >> 33; x = (x * 0xff51afd7ed558ccd) & M
    x ^= x >> 33; x = (x * 0xc4ceb9fe1a85ec53) & M
    return x ^ (x >> 33)
def fnv(b):
    h = 0xcbf29ce484222325 ^ len(b)
    n = len(b) // 8 * 8
    for i in range(0, n, 8):
        h = ((h ^ int.from_bytes(b[i:i + 8], "little")) * 0x100000001b3) & M
        h ^= h >> 29
    for c in b[n:]:
        h = ((h ^ c) * 0x100000001b3) & M
    return mix(h)
n = 0
for f in glob.glob(d + "/*-0.sac"):
    b = bytearray(open(f, "rb").read())
    if b"\0" + old + b"\0" not in b:
        continue
    b = b.replace(b"\0" + old + b"\0", b"\0" + new + b"\0")
    if fix:
        b[24:32] = struct.pack("<Q", fnv(bytes(b[32:])))
    open(f, "wb").write(b)
    n += 1
print(n)
EOF
}

n=$(edit sa_leaf_a sa_LEAF_a 1)
"$SA_REPORT" -q "${PID[@]}" -o "$T/edited" "$T/cap.sa" 2>/dev/null
[ "$n" -ge 1 ] && grep -q 'sa_LEAF_a' "$T/edited" && ! grep -q 'sa_leaf_a' "$T/edited"
rc=$?
ok $rc "a name edited in $n cache file(s) (checksum fixed) is what a warm report shows"
[ $rc = 0 ] || grep 'sa_leaf_a' "$T/edited" | head -3 | while read -r l; do diag "still: $l"; done
"$SA_REPORT" -q "${PID[@]}" --no-cache -o "$T/bypass" "$T/cap.sa" 2>/dev/null
cmp -s "$T/ref.0" "$T/bypass"
ok $? "--no-cache does not read the edited cache"

n=$(edit sa_LEAF_a sa_leaf_X 0)
report stale && same stale
ok $? "an edit with a stale checksum ($n file(s)) is ignored: byte-identical"
"$SA_REPORT" -q "${PID[@]}" -o "$T/rewritten" "$T/cap.sa" 2>/dev/null
! grep -q 'sa_leaf_X' "$T/rewritten" && [ "$(edit sa_leaf_a sa_LEAF_a 1)" -ge 1 ]
ok $? "the ignored file was written again, valid"
edit sa_LEAF_a sa_leaf_a 1 >/dev/null

# damage every file: bytes of the payload overwritten, or the file cut
i=0
for f in "$C"/*.sac; do
	sz=$(stat -c %s "$f")
	if [ $((i % 2)) -eq 0 ]; then
		printf '\x5a\x5a\x5a\x5a' | dd of="$f" bs=1 seek=$((sz / 2)) conv=notrunc 2>/dev/null
	else
		truncate -s $((sz * 2 / 3)) "$f"
	fi
	i=$((i + 1))
done
report damaged && same damaged
ok $? "every cache file damaged ($i): byte-identical"
report healed && same healed
ok $? "after the damaged files were rewritten: byte-identical"

rm -rf "$C"
pids=()
for k in 1 2 3 4; do
	"$SA_REPORT" -q --svg "${PID[@]}" -o "$T/par.$k" "$T/cap.sa" 2>"$T/par.$k.err" &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
for k in 1 2 3 4; do cmp -s "$T/ref.2" "$T/par.$k" || rc=1; done
ok $rc "four reports at once on an empty cache: each --svg byte-identical"
left=$(find "$C" -name '.tmp-*' | wc -l)
report after && same after && [ "$left" -eq 0 ]
ok $? "then a warm report is byte-identical ($left temporary files left)"

# a cache directory that is a symlink is never used
mkdir -p "$T/xdg2" "$T/elsewhere"
ln -s "$T/elsewhere" "$T/xdg2/sa"
XDG_CACHE_HOME=$T/xdg2 report link && same link &&
	[ "$(find "$T/elsewhere" -type f | wc -l)" -eq 0 ]
ok $? "with \$XDG_CACHE_HOME/sa a symlink: byte-identical, nothing written through it"

done_testing
