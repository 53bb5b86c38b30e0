#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# The in-kernel unwinder's tables of binaries no process maps any more are
# freed when their rows are needed (or after 10 s idle), and the gone
# processes' ranges with them: 20 distinct copies of zstd (distinct inodes:
# 20 tables) run one after the other under a budget of rows that holds the
# shared tables (libc, ld.so, sh) and one zstd table, not two. Before, the
# first copy's table stayed and the 19 others were "over budget" (stack
# copies instead of walks). SA_RECORD_TEST_UW_ROWS lowers the budget;
# SA_RECORD_TEST_UW_SYNC builds the tables on the main thread, so that the
# counts at the end do not depend on when the worker ran (6190 tests it).
# A table is built for a live process whose mappings the recorder has
# read: a copy that exits before that (a loaded host delays the recorder,
# 100 ms apart at best) gets none. So the test does not assume the
# recorder keeps up with a 5 ms zstd: each copy waits 0.5 s for its input
# on a pipe, mapped and alive, before it compresses.
. "$(dirname "$0")/lib.sh"

require_root_bpf
command -v zstd >/dev/null 2>&1 || skip_all "zstd not installed"
tmpdir
T=$tap_tmp

plan 6

N=20
for i in $(seq 1 $N); do cp "$(command -v zstd)" "$T/zstd$i"; done
head -c 200000 /dev/urandom | base64 >"$T/in.txt"

# run FROM TO [ENV...]: record sh running copies FROM..TO one after the other
run()
{
	local from=$1 to=$2
	shift 2
	env SA_RECORD_TEST_UW_SYNC=1 "$@" "$SA_RECORD" -F 499 --call-graph auto -o "$T/r.sa" -- sh -c \
		'i=$1; while [ $i -le $2 ]; do
			(sleep 0.5; cat "$3/in.txt") | "$3/zstd$i" -q -3 -c >/dev/null; i=$((i + 1))
		done' \
		sh "$from" "$to" "$T" >/dev/null 2>"$T/r.err"
}

# field NAME: the number before NAME in the summary's tables line
field()
{
	sed -n "s/.*unwind tables:.* \([0-9]*\) $1.*/\1/p" "$T/r.err"
}

# the rows of the shared tables and one zstd table, then of two
run 1 1
r1=$(field rows)
run 1 2
r2=$(field rows)
z=$((r2 - r1))
[ "${r1:-0}" -gt 0 ] && [ "$z" -gt 1000 ]
ok $? "a zstd table has $z rows, the shared ones and one zstd's $r1"
budget=$((r1 + z / 2))

run 1 $N SA_RECORD_TEST_UW_ROWS=$budget
ok $? "sa-record of $N distinct zstd copies under a budget of $budget rows exits 0"
[ $? -eq 0 ] || diag_file "$T/r.err"
over=$(field "over budget")
[ "${over:-1}" -eq 0 ]
ok $? "no table over budget ($over; each copy's table takes the rows of the last)"
freed=$(field freed)
# every copy but the last is gone when the next one's table is built (the
# libraries only zstd maps, idle between copies, may be freed and built
# again too)
[ "${freed:-0}" -ge $((N - 1)) ]
ok $? "$freed tables freed (want >= $((N - 1)))"
rows=$(field rows)
[ -n "$rows" ] && [ "$rows" -le "$budget" ]
ok $? "at the end $rows rows in $(field tables) tables (budget $budget)"
files=$(field files)
[ "${files:-0}" -ge $N ]
ok $? "$files tables built (want >= $N: one per copy)"
[ -n "$files" ] || diag_file "$T/r.err"

done_testing
