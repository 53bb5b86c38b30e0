#!/bin/bash
# SPDX-License-Identifier: MIT
# 5040-corpus.t - sa-report on every file of the fuzz corpora and of
# tests/data/bad, in every output mode (docs/reliability.md, "Hostile
# files"): exit 0 with valid output or exit 1 with a message naming the
# file, never a signal (status >= 128), never a hang, never a usage error.
. "$(dirname "$0")/lib.sh"
require_report
tmpdir
T=$tap_tmp
files=()
for d in tests/fuzz/corpus/fuzz_reader tests/fuzz/corpus/fuzz_roundtrip \
	tests/fuzz/corpus/fuzz_report tests/data/bad; do
	for f in "$SA_SRC/$d"/*; do
		case $f in *.expect) continue ;; esac
		[ -f "$f" ] && files+=("$f")
	done
done
[ ${#files[@]} -gt 0 ] || skip_all "no corpus files"
modes=(folded --top --info --svg --pprof --speedscope --diff "--diff --svg" "--diff --top")
plan $((${#modes[@]} + 3))

# run MODE FILE: one sa-report run; prints "status" and keeps the outputs.
run()
{
	local m=$1 f=$2 args=()

	[ "$m" = folded ] || read -r -a args <<<"$m"
	if [ "${args[0]}" = --diff ]; then
		timeout -s KILL 60 "$SA_REPORT" "${args[@]}" -o "$T/out" "$f" "$f" 2>"$T/err"
	else
		timeout -s KILL 60 "$SA_REPORT" "${args[@]}" -o "$T/out" "$f" 2>"$T/err"
	fi
}

svg_ok=0 svg_n=0 folded_bad=0
for m in "${modes[@]}"; do
	bad=0 n0=0 n1=0
	for f in "${files[@]}"; do
		rm -f "$T/out"
		run "$m" "$f"
		rc=$?
		case $rc in
		0) n0=$((n0 + 1)) ;;
		1)
			n1=$((n1 + 1))
			if ! grep -q "sa-report: .*$(basename "$f")" "$T/err"; then
				bad=$((bad + 1))
				diag "$m $f: exit 1 without naming the file: $(head -n 1 "$T/err")"
			fi
			;;
		*)
			bad=$((bad + 1))
			diag "$m $f: exit $rc: $(head -n 3 "$T/err")"
			;;
		esac
		if [ $rc = 0 ] && [ "$m" = --svg ]; then
			svg_n=$((svg_n + 1))
			xmllint --noout "$T/out" 2>/dev/null && svg_ok=$((svg_ok + 1))
		fi
		if [ $rc = 0 ] && [ "$m" = folded ] && [ -s "$T/out" ]; then
			[ "$(folded_bad_lines "$T/out")" = 0 ] || folded_bad=$((folded_bad + 1))
		fi
	done
	ok $bad "sa-report $m on ${#files[@]} files: $n0 outputs, $n1 clear errors, $bad other"
done
if command -v xmllint >/dev/null; then
	[ $svg_ok = $svg_n ] && [ $svg_n -gt 0 ]
	ok $? "every SVG written is well-formed XML ($svg_ok of $svg_n)"
else
	skip 1 "xmllint not installed"
fi
ok $folded_bad "every folded output parses as 'stack count' lines ($folded_bad bad)"
# Not a recording at all, and a file that cannot be read.
printf 'not a recording\n' >"$T/text"
"$SA_REPORT" "$T/text" >/dev/null 2>"$T/err"
rc1=$?
"$SA_REPORT" "$T/missing.sa" >/dev/null 2>"$T/err2"
rc2=$?
[ $rc1 = 1 ] && [ $rc2 = 1 ] && grep -q text "$T/err" && grep -q 'missing.sa' "$T/err2"
ok $? "text and a missing file: exit $rc1/$rc2: $(head -n 1 "$T/err"); $(head -n 1 "$T/err2")"
done_testing
