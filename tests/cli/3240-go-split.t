#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# A Go program (issue 31). samples/gosplit's three functions of its own,
# main.spinA, spinB and spinC, take 1:2:3 of its CPU time, each call timed
# by the thread's CPU clock (its output is the oracle). Recorded with
# --call-graph fp and auto:
# - each function's share of the samples is within 2 points of its own
#   measured share, in both modes;
# - its stacks reach runtime.goexit in auto as in fp (Go keeps frame
#   pointers on x86-64 and has no .eh_frame: the in-kernel walk steps its
#   text by frame pointers and copies no stack), and auto's file is within
#   2x of fp's;
# - with the binary moved away before sa-report, >= 99% of its samples
#   are named: a Go binary has no GNU build id, so sa-record names it by a
#   content hash and embeds its symbols as it does a build id's.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples gosplit
tmpdir
T=$tap_tmp

plan 14

# measured SPLIT.out FN: FN's share (percent) of the three by the program's own clock
measured()
{
	awk -v fn="$2" '$1 ~ /^spin[ABC]$/ { t += $2; if ($1 == fn) v = $2 }
	END { printf "%.2f\n", t ? 100 * v / t : -1 }' "$1"
}

# sampled FOLDED FN: FN's share (percent) of the samples holding one of the three,
# and that number of samples
sampled()
{
	awk -v fn="main.$2" '$0 ~ /^gosplit;/ {
		n = $NF; st = ";" $0; sub(/ [0-9]+$/, ";", st)
		if (st ~ /;main\.spin[ABC];/) t += n
		if (index(st, ";" fn ";")) v += n }
	END { printf "%.2f %d\n", t ? 100 * v / t : -1, t }' "$1"
}

# goexit FOLDED: percent of the three functions' samples whose stack reaches runtime.goexit
goexit()
{
	awk '$0 ~ /^gosplit;/ && /;main\.spin[ABC];|;main\.spin[ABC] / {
		t += $NF; if (index($0, ";runtime.goexit")) g += $NF }
	END { printf "%.2f\n", t ? 100 * g / t : -1 }' "$1"
}

# named FOLDED: percent of gosplit's samples without a frame left as [gosplit]
named()
{
	awk '$0 ~ /^gosplit;/ { t += $NF; if (index($0, "[gosplit]")) u += $NF }
	END { printf "%.2f %d\n", t ? 100 * (t - u) / t : -1, t }' "$1"
}

# A copy of the program, so that it can be moved away before the report.
cp "$SA_SAMPLES/gosplit" "$T/gosplit"
for cg in fp auto; do
	# 4.5 s of CPU at 2999 Hz: about 13,500 samples (at least 9,000 checked below)
	timeout -s KILL 120 "$SA_RECORD" -q -F 2999 --call-graph $cg -o "$T/$cg.sa" -- \
		"$T/gosplit" -cpu 4.5 >"$T/$cg.out" 2>"$T/$cg.err"
	ok $? "sa-record --call-graph $cg -- gosplit exits 0"
	"$SA_REPORT" -U -o "$T/$cg.folded" "$T/$cg.sa" 2>>"$T/rep.err"
	ok $? "sa-report -U of the $cg recording exits 0"
done

# Share tolerance: n >= 9,000 samples of the three; the binomial sd of a
# share p is sqrt(p (1 - p) / n): at p = 1/2, 0.53 points, so 2 points are
# 3.8 sd (P = 1.5e-4 two-sided); at 1/3, 4.0 sd (6e-5); at 1/6, 5.4 sd
# (7e-8). Six checks: P < 5e-4 per run.
for cg in fp auto; do
	bad="" line=""
	for fn in spinA spinB spinC; do
		want=$(measured "$T/$cg.out" $fn)
		read -r got n < <(sampled "$T/$cg.folded" $fn)
		line="$line $fn $got% (own clock $want%)"
		within "$got" "$want" 2 || bad="$bad $fn"
	done
	diag "$cg: $n samples of the three:$line"
	[ "${n:-0}" -ge 9000 ] && [ -z "$bad" ]
	ok $? "$cg: each function's share within 2 points of its own clock's (n $n >= 9000)${bad:+; off:$bad}"
done

gfp=$(goexit "$T/fp.folded")
gauto=$(goexit "$T/auto.folded")
diag "stacks of the three reaching runtime.goexit: fp $gfp%, auto $gauto%"
# Go's frame pointers give every such stack whole: 100.00% in both here
ge "$gfp" 99
ok $? "fp: $gfp% of the functions' stacks reach runtime.goexit (want >= 99%)"
ge "$gauto" 99 && ge "$gauto" "$(awk -v f="$gfp" 'BEGIN { print f - 1 }')"
ok $? "auto: $gauto% reach runtime.goexit (want >= 99% and fp's - 1)"

sfp=$(stat -c %s "$T/fp.sa")
sauto=$(stat -c %s "$T/auto.sa")
diag "files: fp $sfp bytes, auto $sauto bytes"
[ "$sauto" -le $((2 * sfp)) ]
ok $? "auto's file ($sauto bytes) within 2x of fp's ($sfp)"

"$SA_REPORT" --info "$T/auto.sa" >"$T/auto.info" 2>&1
grep -A1 "/gosplit\$" "$T/auto.info" | grep -q "content hash [0-9a-f]\{32\}; binary"
ok $? "--info: the program is named by a content hash, its symbols from the binary"
diag_file "$T/auto.info"

# Off the box: the binary gone, its embedded symbols name it.
mv "$T/gosplit" "$T/gosplit.away"
for cg in fp auto; do
	"$SA_REPORT" -U -o "$T/$cg.off.folded" "$T/$cg.sa" 2>>"$T/rep.err"
	read -r pn n < <(named "$T/$cg.off.folded")
	diag "$cg, binary gone: $pn% of $n samples named"
	# measured 100.00%; the rest would be [gosplit], an address no symbol covers
	[ "${n:-0}" -ge 9000 ] && ge "$pn" 99
	ok $? "$cg, binary gone: $pn% of gosplit's $n samples named (want >= 99%)"
done
"$SA_REPORT" --info "$T/auto.sa" >"$T/off.info" 2>&1
grep -A1 "/gosplit\$" "$T/off.info" | grep -q "content hash [0-9a-f]\{32\}; embedded symbols"
ok $? "--info, binary gone: named by its content hash from embedded symbols"
read -r got n < <(sampled "$T/auto.off.folded" spinC)
within "$got" "$(measured "$T/auto.out" spinC)" 2
ok $? "auto, binary gone: spinC's share $got% as with the binary"
done_testing
