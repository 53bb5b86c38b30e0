#!/bin/bash
# SPDX-License-Identifier: MIT
# debuginfod (issue 4): a workload recorded without embedded symbols whose
# binary is then deleted is named by sa-report from a debug file that a
# local debuginfod server (Debian's, on 127.0.0.1) serves, only when
# DEBUGINFOD_URLS is set; without it the frames stay [binary-name].
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
tmpdir
T=$tap_tmp

plan 6

for c in gcc objcopy debuginfod; do
	command -v $c >/dev/null || { skip 6 "$c not installed"; done_testing; }
done
trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null; rm -rf "$T"' EXIT

id=$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')
mkdir -p "$T/bin" "$T/served"
gcc -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread -Wl,--build-id=0x"$id" \
	-o "$T/bin/sa_dbgd_wl" "$SA_SRC/samples/workload.c" -lm &&
	objcopy --only-keep-debug "$T/bin/sa_dbgd_wl" "$T/served/sa_dbgd_wl.debug"
ok $? "a workload with build id ${id:0:8}... and its debug file"
"$SA_RECORD" -q -F 999 --no-embed-symbols -o "$T/w.sa" -- "$T/bin/sa_dbgd_wl" -d 2 \
	>/dev/null 2>"$T/rec.err"
ok $? "sa-record --no-embed-symbols -- sa_dbgd_wl -d 2 exits 0"
rm -rf "$T/bin"

DEBUGINFOD_URLS= "$SA_REPORT" -q "$T/w.sa" >"$T/plain.folded" 2>/dev/null
grep -q '^sa_dbgd_wl;.*\[sa_dbgd_wl\]' "$T/plain.folded" && ! grep -q 'sa_leaf_a' "$T/plain.folded"
ok $? "without DEBUGINFOD_URLS: [sa_dbgd_wl], no names"

port=$((20000 + RANDOM % 20000))
debuginfod -p "$port" -d "$T/dbgd.sqlite" -F "$T/served" >"$T/srv.log" 2>&1 &
srv=$!
export DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$T/cache DEBUGINFOD_TIMEOUT=5
for _ in $(seq 60); do # the server scans its directory after it starts
	curl -sf "$DEBUGINFOD_URLS/buildid/$id/debuginfo" -o /dev/null 2>/dev/null && break
	sleep 0.5
done
"$SA_REPORT" -q "$T/w.sa" >"$T/dbgd.folded" 2>"$T/rep.err"
ok $? "sa-report with DEBUGINFOD_URLS exits 0"
total=$(awk '$1 ~ /^sa_dbgd_wl;/ { n += $NF } END { print n + 0 }' "$T/dbgd.folded")
leaf_a=$(awk '$1 ~ /^sa_dbgd_wl;.*;sa_leaf_a$/ { n += $NF } END { print n + 0 }' "$T/dbgd.folded")
[ "$total" -gt 0 ] && [ $((leaf_a * 100 / total)) -ge 50 ]
ok $? "the debug file from debuginfod names sa_leaf_a ($leaf_a of $total samples)"
"$SA_REPORT" --info -o "$T/w.info" "$T/w.sa" 2>/dev/null; rc=$?
[ $rc = 0 ] && grep -A1 'sa_dbgd_wl$' "$T/w.info" | grep -q 'debuginfod'
ok $? "--info says the symbols came from debuginfod (exit $rc)"
done_testing
