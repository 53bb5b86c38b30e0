#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# 5060-hostile-names.t - names that try to break the outputs
# (docs/reliability.md, "Hostile names"). A fixture whose comm (set with
# prctl(PR_SET_NAME)), function names and path hold markup, ';', newlines,
# control characters and invalid UTF-8 is recorded; every output must show
# them escaped or replaced, never raw. The function names are written into
# the ELF's .strtab after linking (same length, so nothing moves): an
# assembler cannot take a newline in a label.
. "$(dirname "$0")/lib.sh"
require_report
require_root_bpf
command -v python3 >/dev/null || skip_all "python3 not installed (patches the fixture)"
command -v cc >/dev/null || skip_all "no C compiler for the fixture"
tmpdir
T=$tap_tmp

cat >"$T/evil.c" <<'EOF'
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
volatile unsigned long sink;
__attribute__((noinline)) void SAEVIL_LEAF_PLACEHOLDER_(void)
{
	for (volatile int i = 0; i < 200000; i++)
		sink += i;
}
__attribute__((noinline)) void SAEVIL_MID_PLACEHOLDER__(void)
{
	SAEVIL_LEAF_PLACEHOLDER_();
	sink++;
}
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	struct timespec a, b;

	/* 15 bytes: markup, ';', newline, control, invalid UTF-8 */
	prctl(PR_SET_NAME, "<b>;\n\x01\xff\x1b[1m&\"x", 0, 0, 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		SAEVIL_MID_PLACEHOLDER__();
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while (b.tv_sec - a.tv_sec + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return 0;
}
EOF
# A directory name with markup, ';' and a newline in the binary's path.
dir="$T/d<i>;&"$'\n'"x"
mkdir "$dir"
bin="$dir/evil"
cc -O1 -fno-omit-frame-pointer -o "$bin" "$T/evil.c" || skip_all "fixture does not compile"
python3 - "$bin" <<'EOF' || skip_all "cannot patch the fixture's symbol names"
import sys
p = sys.argv[1]
b = open(p, 'rb').read()
new = {b'SAEVIL_LEAF_PLACEHOLDER_': b'<script>alert(1)\n;\x01\xff\xfe"&x',
       b'SAEVIL_MID_PLACEHOLDER__': b'</text>]]>&amp;\r\t\x7f\xc3(\x1b[<a',
}
for old, rep in new.items():
    assert len(old) == len(rep) and b.count(old) >= 1, old
    b = b.replace(old, rep)
open(p, 'wb').write(b)
EOF
plan 14

"$SA_RECORD" -q -F 999 --interval 0.5 -o "$T/e.sa" -- "$bin" 2 >"$T/rec.out" 2>"$T/rec.err"
ok $? "recording the fixture: exit 0 $(head -n 1 "$T/rec.err")"

# clean FILE WHAT: no control character but newline (and tab where allowed),
# and valid UTF-8.
clean()
{
	local cntrl

	cntrl=$(LC_ALL=C tr -d '\n' <"$1" | LC_ALL=C tr -d "${3:-}" | LC_ALL=C grep -c '[[:cntrl:]]')
	iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1
	ok $((cntrl || $?)) "$2: no raw control characters ($cntrl lines), valid UTF-8"
}

"$SA_REPORT" "$T/e.sa" >"$T/folded" 2>/dev/null; rc1=$?
"$SA_REPORT" --info -o "$T/e.info" "$T/e.sa"; rc2=$?
kept=$(awk '/^  samples:/ { print $2; exit }' "$T/e.info")
total=$(folded_total "$T/folded")
nbad=$(folded_bad_lines "$T/folded")
[ $rc1 = 0 ] && [ $rc2 = 0 ] && [ "$nbad" = 0 ] && [ "$total" = "$kept" ] && [ "$total" -gt 100 ]
ok $? "folded: one parseable line per stack ($nbad bad lines), $total of $kept samples (exits $rc1, $rc2)"
evil=$(awk '/script/ { n += $NF } END { print n + 0 }' "$T/folded")
ge "$evil" $((total / 2))
ok $? "folded: the hostile leaf is there, replaced: $evil samples; e.g. $(grep -m1 script "$T/folded" | cut -c1-120)"
clean "$T/folded" "folded"
# The leaf holds ';' and a newline: it must stay one frame, from "<script>" to '"&x'.
awk '/script/ {
	sub(/ [0-9]+$/, ""); n = split($0, f, ";"); one = 0
	for (i = 1; i <= n; i++) if (f[i] ~ /^<script>alert\(1\).*"&x$/) one = 1
	if (!one) bad++
} END { exit bad > 0 }' "$T/folded"
ok $? "folded: the ';' inside the leaf's name does not split it into frames"

"$SA_REPORT" --top "$T/e.sa" >"$T/top" 2>&1
rows=$(grep -c script "$T/top")
ok $(($? || rows != 1)) "--top: the hostile leaf is one row: $(grep -m1 script "$T/top")"
clean "$T/top" "--top"

"$SA_REPORT" --svg -o "$T/e.svg" "$T/e.sa" 2>/dev/null
xmllint --noout "$T/e.svg" 2>"$T/xml.err"
ok $? "--svg: xmllint --noout passes $(head -n 1 "$T/xml.err")"
grep -q '<script>alert\|</text>]]>' "$T/e.svg"
ok $((!$?)) "--svg: no name's markup appears raw"
clean "$T/e.svg" "--svg" '\t'

"$SA_REPORT" --info -v "$T/e.sa" >"$T/info" 2>&1
clean "$T/info" "--info (comm, path)"

"$SA_REPORT" --speedscope -o "$T/e.json" "$T/e.sa" 2>/dev/null
python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))' \
	"$T/e.json" 2>"$T/json.err"
ok $? "--speedscope: strict JSON, valid UTF-8 $(tail -n 1 "$T/json.err")"

"$SA_REPORT" --diff "$T/e.sa" "$T/e.sa" >"$T/diff" 2>/dev/null
nbad=$(grep -cvE '^[^ ].* [0-9]+ [0-9]+$' "$T/diff")
ok "$nbad" "--diff: every line is 'stack before after' ($nbad bad)"
clean "$T/diff" "--diff"
done_testing
