#!/bin/bash
# SPDX-License-Identifier: MIT
# 5090-damaged.t - damaged recordings (docs/sa-report.1, "DAMAGED
# RECORDINGS"; docs/format.md, "Reading a damaged or truncated file"): a
# real recording cut at every chunk boundary, one byte past each and 24
# offsets spread evenly makes every mode warn on stderr in the same words
# and exit as documented (0 when an interval was read, else 1); one corrupt
# middle SAMPLES chunk loses only its own interval's samples; a --time range
# outside the recording is an error naming its duration; filters show
# "N of M" samples in the --top header and the SVG subtitle.
. "$(dirname "$0")/lib.sh"
require_report
require_root_bpf
require_samples workload
command -v python3 >/dev/null || skip_all "python3 not installed (chunk walker)"
DUMP=$SA_BUILD/tests/tools/sa-dump
[ -x "$DUMP" ] || skip_all "$DUMP not built (make check builds it)"
tmpdir
T=$tap_tmp
plan 14

"$SA_RECORD" -q -F 499 --interval 0.1 -o "$T/full.sa" -- "$SA_SAMPLES/workload" -d 1.2 \
	>/dev/null 2>&1
rc=$?
size=$(stat -c %s "$T/full.sa" 2>/dev/null || echo 0)
ok $rc "recorded $size bytes (exit $rc)"

# chunk_list FILE: "offset type size seq" per chunk (docs/format.md, "Chunk header")
chunk_list()
{
	python3 - "$1" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
off = struct.unpack_from('<H', d, 12)[0]
while off + 24 <= len(d):
    t, hs, fl, ps, cs, seq, crc = struct.unpack_from('<IHHIIII', d, off)
    print(off, t, hs + ps, seq)
    off += hs + ps
EOF
}
chunk_list "$T/full.sa" >"$T/chunks"
nchunks=$(wc -l <"$T/chunks")

modes="folded --top --info --svg --pprof --speedscope --diff"
# run_mode MODE FILE OUT ERR: sa-report in MODE on FILE; prints the exit status
run_mode()
{
	local m=$1
	case $m in
	folded) "$SA_REPORT" "$2" >"$3" 2>"$4" ;;
	--diff) "$SA_REPORT" --diff "$2" "$T/full.sa" >"$3" 2>"$4" ;;
	--svg | --pprof | --speedscope) "$SA_REPORT" "$m" -o "$3" "$2" 2>"$4" ;;
	*) "$SA_REPORT" "$m" "$2" >"$3" 2>"$4" ;;
	esac
	echo $?
}

# Offsets: every chunk boundary, one byte past each, and 24 spread evenly.
{
	awk '{ print $1; print $1 + 1 }' "$T/chunks"
	for i in $(seq 1 24); do echo $((size * i / 25)); done
} | sort -n -u | awk -v s="$size" '$1 < s' >"$T/offsets"
ncuts=$(wc -l <"$T/offsets")
silent=0 differ=0 badrc=0 signals=0 shown=0 none=0
while read -r cut; do
	head -c "$cut" "$T/full.sa" >"$T/cut.sa"
	# the rule: 0 when the file gives an interval, 1 when it gives none
	if "$DUMP" "$T/cut.sa" 2>/dev/null | grep -q '^INTERVAL'; then
		want=0 shown=$((shown + 1))
	else
		want=1 none=$((none + 1))
	fi
	first=
	for m in $modes; do
		rc=$(run_mode "$m" "$T/cut.sa" "$T/out" "$T/err")
		[ "$rc" -gt 128 ] && { signals=$((signals + 1)); diag "cut $cut $m: signal $rc"; }
		[ "$rc" = "$want" ] || { badrc=$((badrc + 1)); diag "cut $cut $m: exit $rc, want $want"; }
		line=$(grep -F "sa-report: $T/cut.sa: " "$T/err")
		[ -n "$line" ] || { silent=$((silent + 1)); diag "cut $cut $m: nothing on stderr"; }
		[ -z "$first" ] && first=$line
		[ "$line" = "$first" ] || { differ=$((differ + 1)); diag "cut $cut $m: $line"; }
	done
done <"$T/offsets"
nm=$(echo $modes | wc -w)
ok $silent "$ncuts cuts of a $size-byte recording ($nchunks chunks) x $nm modes: every run warned on stderr"
ok $differ "and in the same words in every mode (e.g. $(echo "$first" | cut -c1-160))"
[ $badrc = 0 ] && [ $signals = 0 ] && [ $shown -gt 0 ] && [ $none -gt 0 ]
ok $? "exit 0 when an interval was read ($shown cuts), 1 when none ($none cuts): $badrc wrong, $signals signals"

# One corrupt byte in a middle SAMPLES chunk: only its interval is lost.
# A LOSS record's kept= is its interval's samples (docs/format.md, "LOSS").
full_total=$(folded_total <("$SA_REPORT" "$T/full.sa" 2>/dev/null))
full_ivs=$("$DUMP" "$T/full.sa" | grep -c '^LOSS')
awk '$2 == 4 { print }' "$T/chunks" >"$T/samples_chunks"
ns=$(wc -l <"$T/samples_chunks")
read -r coff ctype csize cseq < <(sed -n "$((ns / 2 + 1))p" "$T/samples_chunks")
damage_check() # WHAT BYTE-OFFSET
{
	local what=$1 at=$2 m rc bad=0 first= line iv want total
	python3 -c "import sys; d = bytearray(open(sys.argv[1], 'rb').read()); \
d[int(sys.argv[2])] ^= 0x20; open(sys.argv[3], 'wb').write(d)" "$T/full.sa" "$at" "$T/bad.sa"
	for m in $modes; do
		rc=$(run_mode "$m" "$T/bad.sa" "$T/out.$m" "$T/err")
		line=$(grep -F "sa-report: $T/bad.sa: recording damaged" "$T/err")
		[ $rc = 0 ] && [ -n "$line" ] && [ "$line" = "${first:-$line}" ] ||
			{ bad=$((bad + 1)); diag "$what, $m: exit $rc: $(cat "$T/err")"; }
		first=${first:-$line}
	done
	ok $bad "$what (chunk $cseq at $coff): every mode exits 0 and warns: $(echo "$first" | cut -c1-200)"
	iv=$(echo "$first" | sed -n 's/.*; interval \([0-9]*\) lost (.*/\1/p')
	want=$("$DUMP" "$T/full.sa" | sed -n "s/^LOSS seq=$iv .* kept=\([0-9]*\) .*/\1/p")
	total=$(folded_total "$T/out.folded")
	[ -n "$iv" ] && [ -n "$want" ] && [ "$total" = $((full_total - want)) ] &&
		echo "$first" | grep -q "($((full_ivs - 1)) of $full_ivs intervals)"
	ok $? "$what: only interval ${iv:-?} is lost: $total = $full_total - ${want:-?} samples, $((full_ivs - 1)) of $full_ivs intervals kept"
}
[ "$ns" -ge 3 ]
ok $? "the recording has $ns SAMPLES chunks; damaging number $((ns / 2 + 1))"
damage_check "a payload byte" $((coff + csize - 3))
damage_check "the chunk type" $((coff + 1))

# --time outside the recording: an error naming the duration, exit 2.
dur=$("$SA_REPORT" --info "$T/full.sa" | sed -n 's/^  duration: *\([0-9.]*\) s.*/\1/p')
"$SA_REPORT" --top --time 20-30 "$T/full.sa" >"$T/out" 2>"$T/err"
rc=$?
# the error rounds the duration to 2 places, --info to 3: within 0.005 s of
# each other (rounding --info's figure again could differ in the last place)
edur=$(sed -n 's/.*outside the recording.* lasts \([0-9.]*\) s.*/\1/p' "$T/err")
[ $rc = 2 ] && [ ! -s "$T/out" ] && [ -n "$edur" ] && [ -n "$dur" ] &&
	awk -v a="$edur" -v b="$dur" 'BEGIN { exit !(a - b <= 0.0051 && b - a <= 0.0051) }'
ok $? "--time 20-30 on a ${dur} s recording: exit $rc: $(cat "$T/err")"
"$SA_REPORT" --time 0-0.5 "$T/full.sa" >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 0 ] && [ "$(folded_total "$T/out")" -gt 0 ]
ok $? "--time 0-0.5 inside it: exit $rc, $(folded_total "$T/out") samples"

# Filters: "N of M samples" in the --top header and the SVG subtitle.
kept=$("$SA_REPORT" --info "$T/full.sa" | awk '/^  samples:/ { print $2; exit }')
n=$(folded_total <("$SA_REPORT" --focus sa_leaf_a "$T/full.sa" 2>/dev/null))
"$SA_REPORT" --top --focus sa_leaf_a "$T/full.sa" >"$T/top" 2>/dev/null
grep -q "^# samples: $n of $kept, lost" "$T/top" && [ "$n" -gt 0 ] && [ "$n" -lt "$kept" ]
ok $? "--top --focus header: $(grep '^# samples' "$T/top") ($n of $kept)"
"$SA_REPORT" --svg --focus sa_leaf_a -o "$T/f.svg" "$T/full.sa" 2>/dev/null
grep -q ">[^<]*$n of $kept samples, [0-9]* lost" "$T/f.svg"
ok $? "SVG subtitle with --focus: $(grep -o "[0-9]* of [0-9]* samples" "$T/f.svg" | head -n 1)"
"$SA_REPORT" --top "$T/full.sa" >"$T/top" 2>/dev/null
grep -q "^# samples: $kept, lost" "$T/top"
ok $? "no filter: the header has the total only: $(grep '^# samples' "$T/top")"
done_testing
