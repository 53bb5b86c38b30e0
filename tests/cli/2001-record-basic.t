#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (records -a: another script's processes would be in its recording)
# sa-test: san
# sa-record basics: --version, --help, one-line usage and runtime errors,
# a whole-system recording that ends with END, mode 0600, FILE.old, no
# symlink following, and runs == kept + filtered + lost in every interval.
. "$(dirname "$0")/2000-record-lib.sh"
need_bpf
echo "1..13"

"$REC" --version | grep -q '^sa-record '; ok $? "--version"
"$REC" --help | grep -qi 'frame pointer'; ok $? "--help explains frame-pointer stacks"

"$REC" -F 0 -o "$T/x.sa" 2>"$T/err"; rc=$?
[ $rc = 2 ] && grep -q 'bad frequency' "$T/err"; ok $? "bad frequency: exit 2 ($rc)"

timeout 20 "$REC" -p 999999999 -o "$T/x.sa" 2>"$T/err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q 'no such process' "$T/err"
ok $? "no such PID: one line, exit 1 ($rc)"

if "$REC" -q -e cycles --duration 0.2 -o "$T/cyc.sa" 2>"$T/err"; then
	"$DUMP" "$T/cyc.sa" >/dev/null
	ok $? "-e cycles on a machine with a PMU: a complete recording"
else
	[ "$(wc -l <"$T/err")" = 1 ] && grep -q "cycles' is not supported" "$T/err"
	ok $? "-e cycles without a PMU: one clear line"
fi

"$REC" -q --duration 0.2 -o /nonexistent/dir/x.sa 2>"$T/err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q 'cannot create' "$T/err"
ok $? "unwritable output: one line, exit 1 ($rc)"

# a busy loop beside it: an idle host gives no sample to keep (idle CPUs'
# ticks are filtered), and a busy CPU for 1.5 s at 199 Hz gives about 300
timeout 3 sh -c 'while :; do :; done' &
busy=$!
"$REC" -q -a -F 199 --duration 1.5 --interval 0.5 -o "$T/a.sa"; rc=$?
kill "$busy" 2>/dev/null
wait "$busy" 2>/dev/null
ok $rc "whole-system recording exits 0"
[ "$(stat -c %a "$T/a.sa")" = 600 ]; ok $? "file mode 0600"
"$DUMP" "$T/a.sa" >"$T/a.txt"; ok $? "file ends with END"
grep -q '^META freq=199 ncpus=2\|^META freq=199' "$T/a.txt" && grep -q '^COUNT' "$T/a.txt"
ok $? "META and COUNT records present"
sums=$(loss_sums "$T/a.sa"); ok $? "runs == kept + filtered + lost per interval ($sums)"

"$REC" -q --duration 0.2 -o "$T/a.sa" && [ -f "$T/a.sa.old" ] && "$DUMP" "$T/a.sa.old" >/dev/null
ok $? "existing file kept as FILE.old"

echo keep >"$T/victim"
ln -s "$T/victim" "$T/link.sa"
"$REC" -q --duration 0.2 -o "$T/link.sa" && [ "$(cat "$T/victim")" = keep ] &&
	[ ! -L "$T/link.sa" ] && [ -L "$T/link.sa.old" ]
ok $? "an output symlink is moved aside, never written through"
finish
