#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# dlopen (issue 5): samples/dlopen_host loads a copy of libsa_plugin.so after
# the recording has started, runs in it, dlcloses it, and the test deletes the
# .so before the recording ends: the library's functions are still named.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples dlopen_host libsa_plugin.so
tmpdir
T=$tap_tmp

plan 5


mkdir "$T/lib" && cp "$SA_SAMPLES/libsa_plugin.so" "$T/lib/"
"$SA_RECORD" -q -F 999 -o "$T/d.sa" -- "$SA_SAMPLES/dlopen_host" -w 1 -r 2 -a 2 \
	-l "$T/lib/libsa_plugin.so" >"$T/d.out" 2>"$T/rec.err" &
rec=$!
# -r 2 -a 2 is 4 s of CPU: up to 60 s on a loaded host (a timeout, not a
# measurement: it ends as soon as the host is done)
for _ in $(seq 600); do
	grep -q '^dlclosed' "$T/d.out" 2>/dev/null && break
	sleep 0.1
done
grep -q '^dlclosed' "$T/d.out"
ok $? "dlopen_host ran in the library and dlclosed it"
rm -rf "${T:?}/lib"
wait $rec
ok $? "sa-record -- dlopen_host exits 0 (the .so was deleted while recording)"

"$SA_REPORT" -o "$T/d.folded" "$T/d.sa" 2>"$T/rep.err"
ok $? "sa-report exits 0"
# -r 2 is 2 s of CPU in the library: about 2,000 samples (2,017 here) on
# any machine; 1,000 is 22 Poisson sd below. Unnamed library frames are a
# rate that should be 0 (0 here); assumed <= 0.1%, failing 1% takes >= 20
# of 2,000 at a mean of <= 2: P < 1e-12 per run.
hot=$(folded_path "$T/d.folded" dlopen_host "sa_plugin_run;sa_plugin_hot")
ge "$hot" 1000
ok $? "sa_plugin_run;sa_plugin_hot named in $hot samples (want >= 1000 of about 2000)"
bare=$(awk '{ n = $NF; st = $0; sub(/ [0-9]+$/, "", st); split(st, f, ";")
	if (f[1] == "dlopen_host" && st ~ /\[libsa_plugin\.so/) t += n } END { print t + 0 }' "$T/d.folded")
ge 1 "$(pct "$bare" $((hot + bare)))"
ok $? "unnamed [libsa_plugin.so] frames in $bare samples (want <= 1% of the library's)"

done_testing
