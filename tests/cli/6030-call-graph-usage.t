#!/bin/bash
# SPDX-License-Identifier: MIT
# --call-graph and --stack-size refuse what they do not support with a
# usage error (exit 2), before anything is loaded.
. "$(dirname "$0")/lib.sh"

[ -x "$SA_RECORD" ] || skip_all "sa-record not built ($SA_RECORD); run make"
tmpdir
T=$tap_tmp

plan 5

"$SA_RECORD" --call-graph lbr -o "$T/x.sa" -- true 2>"$T/err"
[ $? -eq 2 ] && grep -q "unknown call graph mode" "$T/err"
ok $? "--call-graph lbr: usage error"

"$SA_RECORD" --help | grep -q "auto: user stacks walked in the kernel from each"
ok $? "--help documents --call-graph auto"

"$SA_RECORD" --stack-size 1 --call-graph dwarf -o "$T/x.sa" -- true 2>"$T/err"
[ $? -eq 2 ] && grep -q "bad stack size" "$T/err"
ok $? "--stack-size 1: usage error"

"$SA_RECORD" --stack-size 1M --call-graph dwarf -o "$T/x.sa" -- true 2>"$T/err"
[ $? -eq 2 ]
ok $? "--stack-size 1M (over 32k): usage error"

"$SA_RECORD" --help | grep -q -- "--call-graph MODE"
ok $? "--help documents --call-graph"

done_testing
