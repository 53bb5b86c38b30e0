#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (records -a)
# 5150-long-strings.t - what a user controls never ends the recording
# (docs/reliability.md, "Long names"): a function name of 5,000 bytes, a
# binary run from a path of over 4,600 bytes (20 nested directories) and a
# `-- CMD` command line of 5,000 bytes are each recorded (-- CMD, -p, -a as
# they apply), the file reads, and the string is clipped to the format's
# 4,096 bytes (ending in "...") and counted in the summary. Before, each
# ended the recorder with "Invalid argument" and no interval kept.
. "$(dirname "$0")/lib.sh"
require_report
require_root_bpf
command -v cc >/dev/null || skip_all "no C compiler for the fixtures"
tmpdir
T=$tap_tmp
trap 'jobs -p | xargs -r kill 2>/dev/null; rm -rf "$T"' EXIT

# tests/tools/wl-spin.c: a program whose own function (named by -DSPIN_FN)
# spins for argv[1] seconds; hostile-soak.sh builds the same.
long=f$(printf 'x%.0s' $(seq 1 4999))
cc -O1 -fno-omit-frame-pointer -DSPIN_FN="$long" -o "$T/longfn" "$SA_SRC/tests/tools/wl-spin.c" &&
	cc -O1 -fno-omit-frame-pointer -o "$T/spin" "$SA_SRC/tests/tools/wl-spin.c" ||
	skip_all "fixtures do not compile"
[ "$(nm "$T/longfn" | awk '$3 ~ /^fxx/ { print length($3) }')" = 5000 ] ||
	skip_all "the fixture lacks its 5,000-byte symbol"
# 20 directories of 231-232 bytes: a path past PATH_MAX, reached by cd one
# level at a time (no single system call takes it whole).
deep=$T/deep
mkdir "$deep"
(
	cd "$deep" || exit 1
	for i in $(seq 10 29); do
		d=$(printf 'd%.0s' $(seq 1 230))$i
		mkdir "$d" && cd "$d" || exit 1
	done
	cp "$T/spin" prog
) || skip_all "cannot make the nested directories"
plan 17

# clipped FILE.err KIND: the count of KIND in the summary's clipped line.
clipped()
{
	sed -n "s/^sa-record: clipped to 4096 bytes:.* \([0-9]*\) $2.*/\1/p" "$1"
}
# readable FILE: --info exits 0 and says the recording finished cleanly.
readable()
{
	"$SA_REPORT" --info "$1" >"$1.info" 2>&1 && grep -q '^  finished: *cleanly$' "$1.info"
}

# 1. A function name of 5,000 bytes, -- CMD and -p.
"$SA_RECORD" -F 999 --interval 0.5 -o "$T/f.sa" -- "$T/longfn" 2 2>"$T/f.err"
rc=$?
n=$(clipped "$T/f.err" "symbol names")
[ $rc = 0 ] && [ "${n:-0}" -ge 1 ]
ok $? "-- CMD, 5,000-byte function name: exit $rc, clipped names counted: ${n:-none} ($(tail -n 1 "$T/f.err"))"
readable "$T/f.sa"
ok $? "the recording reads: $(grep '^  finished:' "$T/f.sa.info" | sed 's/^ *//')"
"$T/longfn" 60 & # outlives a slow start (a loaded host, a sanitized build)
pid=$!
"$SA_RECORD" -F 999 --interval 0.5 --duration 1.5 -p $pid -o "$T/fp.sa" 2>"$T/fp.err"
rc=$?
kill $pid
wait $pid 2>/dev/null
n=$(clipped "$T/fp.err" "symbol names")
[ $rc = 0 ] && [ "${n:-0}" -ge 1 ] && readable "$T/fp.sa"
ok $? "-p, the same: exit $rc, clipped names counted: ${n:-none}, the file reads"
# Off the box (the binary gone), the name comes from the recording alone.
mv "$T/longfn" "$T/longfn.gone"
"$SA_REPORT" "$T/f.sa" >"$T/f.folded" 2>/dev/null
ok $? "sa-report reads it without the binary"
kept=$(awk '/^  samples:/ { print $2; exit }' "$T/f.sa.info")
[ "$(folded_total "$T/f.folded")" = "$kept" ] && [ "$(folded_bad_lines "$T/f.folded")" = 0 ]
ok $? "folded: every line parses, $kept samples as --info says"
got=$(tr ';' '\n' <"$T/f.folded" | sed 's/ [0-9]*$//' | grep '^fxx' | sort -u |
	awk '{ print length($0) (substr($0, length($0) - 2) == "..." ? " ..." : "") }' | sort -u)
[ "$got" = "4096 ..." ]
ok $? "the name is clipped to 4096 bytes ending in '...': ${got:-not there}"
n=$(awk '/^fxx|;fxx/ { s += $NF } END { print s + 0 }' "$T/f.folded")
[ "$n" -gt 0 ]
ok $? "and its samples are there: $n of $kept"

# 2. A binary run from a path of over 4,600 bytes, -p and -a.
(
	cd "$deep" || exit 1
	for i in $(seq 10 29); do cd "$(printf 'd%.0s' $(seq 1 230))$i" || exit 1; done
	exec env ./prog 60 # relative: bash would exec the whole path, too long
) &
pid=$!
for i in $(seq 1 50); do # until the subshell has become the program
	len=$(awk 'NR == 1 { print length($6) }' /proc/$pid/maps 2>/dev/null)
	[ "${len:-0}" -gt 4500 ] && break
	sleep 0.1
done
[ "${len:-0}" -gt 4500 ]
ok $? "the program runs from a path of ${len:-?} bytes"
"$SA_RECORD" -F 999 --interval 0.5 --duration 1.5 -p $pid -o "$T/p.sa" 2>"$T/p.err"
rc=$?
n=$(clipped "$T/p.err" "mapping paths")
[ $rc = 0 ] && [ "${n:-0}" -ge 1 ] && readable "$T/p.sa"
ok $? "-p: exit $rc, clipped paths counted: ${n:-none}, the file reads ($(tail -n 1 "$T/p.err"))"
"$SA_REPORT" "$T/p.sa" >"$T/p.folded" 2>/dev/null
n=$(awk '/;spin_leaf( |;)/ { s += $NF } END { print s + 0 }' "$T/p.folded")
[ "$n" -gt 0 ]
ok $? "-p: its function is named (the path's binary found by build id): $n samples"
"$SA_REPORT" --info -v "$T/p.sa" >"$T/p.infov" 2>&1
got=$(grep -o '/tmp/[^ ]*' "$T/p.infov" | grep 'ddddd' | awk '{ print length($0) (substr($0, length($0) - 2) == "..." ? " ..." : "") }' | sort -u)
[ "$got" = "4096 ..." ]
ok $? "--info -v: the path is clipped to 4096 bytes ending in '...': ${got:-not shown}"
"$SA_RECORD" -a -F 999 --interval 0.5 --duration 1.5 -o "$T/a.sa" 2>"$T/a.err"
rc=$?
n=$(clipped "$T/a.err" "mapping paths")
[ $rc = 0 ] && [ "${n:-0}" -ge 1 ] && readable "$T/a.sa"
ok $? "-a: exit $rc, clipped paths counted: ${n:-none}, the file reads ($(tail -n 1 "$T/a.err"))"
"$SA_REPORT" "$T/a.sa" >"$T/a.folded" 2>/dev/null
n=$(awk '/;spin_leaf( |;)/ { s += $NF } END { print s + 0 }' "$T/a.folded")
[ "$n" -gt 0 ]
ok $? "-a: the program's samples are there and named: $n"
kill $pid 2>/dev/null
wait $pid 2>/dev/null

# 3. -- CMD with a command line of 5,000 bytes.
arg=$(printf 'y%.0s' $(seq 1 5000))
"$SA_RECORD" -F 999 --interval 0.5 -o "$T/c.sa" -- "$T/spin" 1 "$arg" 2>"$T/c.err"
rc=$?
n=$(clipped "$T/c.err" "command lines")
[ $rc = 0 ] && [ "${n:-0}" = 2 ]
ok $? "-- CMD, 5,000-byte command line: exit $rc, clipped: ${n:-none} (sa-record's and the target's)"
readable "$T/c.sa"
ok $? "the recording reads: $(grep '^  finished:' "$T/c.sa.info" | sed 's/^ *//')"
got=$(grep -E '^  (recorder|target):' "$T/c.sa.info" | sed 's/^  [a-z]*: *//' |
	awk '{ print substr($0, length($0) - 5) }' | sort -u)
[ "$got" = "yyy..." ]
ok $? "--info shows both lines clipped, ending in '...': ${got:-nothing}"
"$SA_REPORT" "$T/c.sa" >"$T/c.folded" 2>/dev/null
n=$(awk '/;spin_leaf( |;)/ { s += $NF } END { print s + 0 }' "$T/c.folded")
[ "$n" -gt 0 ]
ok $? "its samples are there: $n"
done_testing
