#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# 0060-hidden-chars.t - names that hide or disguise themselves: a bidi
# override (U+202E), a zero-width space (U+200B), a C1 control (U+0085) and
# a BOM (U+FEFF) in function names are shown as \uXXXX in the tables and
# the SVG, so "evil<RLO>eman" cannot read as another function; folded text
# and speedscope keep the raw name for the programs that read them.
. "$(dirname "$0")/lib.sh"

require_report
command -v python3 >/dev/null || skip_all "python3 not installed (reads the JSON)"
tmpdir
T=$tap_tmp
R=$SA_REPORT

plan 8

printf 'main;evil\xe2\x80\xaeeman;leaf\xe2\x80\x8b 10\nmain;c1\xc2\x85x;\xef\xbb\xbfbom 4\nmain;ok 5\n' \
	>"$T/h.folded"
# raw FILE: how many lines hold a hidden character's bytes as they are
raw()
{
	LC_ALL=C grep -c $'\xe2\x80\xae\\|\xe2\x80\x8b\\|\xc2\x85\\|\xef\xbb\xbf' "$1"
}

"$R" --top "$T/h.folded" >"$T/top" 2>"$T/top.err"
ok $? "--top reads the names (exit $?) $(head -c 80 "$T/top.err")"
grep -q 'evil\\u202eeman' "$T/top" && grep -q 'leaf\\u200b' "$T/top" &&
	grep -q 'c1\\u0085x' "$T/top" && grep -q '\\ufeffbom' "$T/top"
ok $? "--top: each hidden character shown as \\uXXXX: $(grep -m1 evil "$T/top")"
n=$(raw "$T/top"); ok "$n" "--top: none raw ($n lines)"

"$R" --svg -o "$T/h.svg" "$T/h.folded" 2>/dev/null
grep -q 'evil\\u202eeman' "$T/h.svg" && grep -q 'leaf\\u200b' "$T/h.svg"
ok $? "--svg: hidden characters shown as \\uXXXX"
n=$(raw "$T/h.svg"); ok "$n" "--svg: none raw ($n lines)"

"$R" --diff --top "$T/h.folded" "$T/h.folded" >"$T/diff" 2>/dev/null
n=$(raw "$T/diff"); grep -q 'evil\\u202eeman' "$T/diff"
ok $(($? || n)) "--diff --top: shown as \\uXXXX, none raw ($n lines)"

"$R" "$T/h.folded" >"$T/folded" 2>/dev/null
cmp -s <(sort "$T/h.folded") <(sort "$T/folded")
ok $? "folded output keeps the raw names"

"$R" --speedscope -o "$T/h.json" "$T/h.folded" 2>/dev/null
python3 -c 'import json, sys
names = [f["name"] for f in json.load(open(sys.argv[1], encoding="utf-8"))["shared"]["frames"]]
sys.exit(0 if "evil\u202eeman" in names and "leaf\u200b" in names else 1)' "$T/h.json"
ok $? "--speedscope keeps the raw names"
done_testing
