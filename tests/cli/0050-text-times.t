#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# 0050-text-times.t - text inputs and times taken as written: folded text
# whose first line is 79 KB (past the 64 KiB first read) is read, from a
# file and from a pipe; counts whose sum passes 2^64-1 are refused with the
# line named (never a wrapped total or a share past 100%); invalid dates
# and times (2026-13-45, 2026-02-30, -1:30, 06:-5, --time 0x1-0x3) are
# usage errors (exit 2) that show the accepted forms.
. "$(dirname "$0")/lib.sh"

require_report
command -v python3 >/dev/null || skip_all "python3 not installed (writes the long line)"
tmpdir
T=$tap_tmp
R=$SA_REPORT

plan 13

python3 -c "print(';'.join('frame_%05d' % i for i in range(7200)) + ' 5'); print('main;leaf 3')" \
	>"$T/long.folded"
first=$(head -n 1 "$T/long.folded" | wc -c)
"$R" "$T/long.folded" >"$T/long.out" 2>"$T/long.err"; rc=$?
ok $([ $rc = 0 ] && [ "$(awk '{ s += $NF } END { print s }' "$T/long.out")" = 8 ]; echo $?) \
	"a $first-byte first line: read, 8 samples (exit $rc) $(head -c 100 "$T/long.err")"
"$R" - <"$T/long.folded" >"$T/pipe.out" 2>/dev/null
cmp -s "$T/long.out" "$T/pipe.out"; ok $? "the same from a pipe"

printf 'main;a 18446744073709551615\nmain;b 2\n' >"$T/ovf.folded"
for m in "" --top --svg; do
	"$R" $m "$T/ovf.folded" >"$T/ovf.out" 2>"$T/ovf.err"; rc=$?
	ok $([ $rc = 1 ] && grep -q 'line 2: count 2 takes the total past 2^64-1' "$T/ovf.err" &&
		! grep -q '[0-9]\{4,\}\.[0-9]*%' "$T/ovf.out"; echo $?) \
		"overflowing counts ${m:-folded}: refused, exit $rc: $(head -c 90 "$T/ovf.err")"
done
printf 'main;a 18446744073709551614\nmain;b 1\n' >"$T/max.folded"
"$R" -q "$T/max.folded" >/dev/null; ok $? "counts summing to 2^64-1 exactly: read"

printf 'main;a 1\n' >"$T/one.folded"
for a in "--since 2026-13-45T10:00" "--since 2026-02-30T10:00" "--since 2026-13-45" \
	"--since -1:30" "--since 06:-5" "--until 24:00" "--time 0x1-0x3"; do
	"$R" $a "$T/one.folded" >/dev/null 2>"$T/t.err"; rc=$?
	ok $([ $rc = 2 ] && grep -q 'expected' "$T/t.err"; echo $?) \
		"$a: usage error (exit $rc): $(head -c 100 "$T/t.err")"
done
done_testing
