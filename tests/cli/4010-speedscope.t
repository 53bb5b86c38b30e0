#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# sa-report --speedscope output validated against the JSON schema that the
# speedscope npm package ships (tests/speedscope: ajv; npm ci installs both
# from the committed lockfile when missing): on samples/demo.sa without
# root, and on a recording of two workload processes with --show-pid (one
# sampled profile per process, weights = samples x 1001001 ns).
. "$(dirname "$0")/lib.sh"

require_report
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 ||
	skip_all "node and npm not installed"
SS=$SA_SRC/tests/speedscope
if [ ! -f "$SS/node_modules/speedscope/dist/release/file-format-schema.json" ] ||
	[ ! -d "$SS/node_modules/ajv" ]; then
	echo "# installing speedscope and ajv (npm ci in tests/speedscope)"
	(cd "$SS" && npm ci --no-audit --no-fund --loglevel=error) 2>&1 | sed 's/^/# /'
	[ -d "$SS/node_modules/ajv" ] || skip_all "npm ci in $SS failed (no registry?)"
fi
tmpdir
T=$tap_tmp

plan 9

DEMO=$SA_SRC/samples/demo.sa
if [ -f "$DEMO" ]; then
	"$SA_REPORT" --speedscope -o "$T/demo.json" "$DEMO" 2>/dev/null
	ok $? "sa-report --speedscope samples/demo.sa exits 0"
	node "$SS/validate.js" "$T/demo.json" >"$T/demo.val" 2>&1
	ok $? "samples/demo.sa export is valid against speedscope's schema"
	diag_file "$T/demo.val" 4
	awk -F'\t' '$1 == "profile" && ($6 != "true" || $4 != $5) { bad = 1 } END { exit bad }' "$T/demo.val"
	ok $? "every profile's weights sum to its endValue and index existing frames"
else
	skip 3 "samples/demo.sa not present"
fi

if [ "$(id -u)" != 0 ] || ! bpftool prog list >/dev/null 2>&1 || ! require_samples workload 2>/dev/null; then
	skip 6 "needs root and BPF to record"
	done_testing
fi
W=$SA_SAMPLES/workload
"$SA_RECORD" -q -F 999 -o "$T/w.sa" -- sh -c "'$W' -c 1 >/dev/null & '$W' -c 1 >/dev/null; wait" \
	2>"$T/rec.err"
ok $? "sa-record -F 999 -- two workloads exits 0"
"$SA_REPORT" --show-pid --speedscope -o "$T/w.json" "$T/w.sa" 2>/dev/null
ok $? "sa-report --show-pid --speedscope exits 0"
node "$SS/validate.js" "$T/w.json" >"$T/w.val" 2>&1
ok $? "the export is valid against speedscope's schema"
diag_file "$T/w.val" 6
n=$(awk -F'\t' '$1 == "profile" && $2 ~ /^workload-[0-9]+$/' "$T/w.val" | wc -l)
[ "$n" -eq 2 ]
ok $? "one sampled profile per workload process ($n named workload-PID)"
awk -F'\t' '$1 == "profile" && ($3 != "nanoseconds" || $4 != $5 || $6 != "true") { bad = 1 } END { exit bad }' "$T/w.val"
ok $? "unit nanoseconds; weights sum to endValue; samples index shared frames"
# weights: samples x 1001001 ns (1e9/999 in whole ns, as pprof's period), per process
"$SA_REPORT" --show-pid -o "$T/w.folded" "$T/w.sa" 2>/dev/null; rc=$?
awk -F'\t' '$1 == "profile" { print $2, $4 }' "$T/w.val" | sort >"$T/got"
awk '{ st = $0; sub(/ [0-9]+$/, "", st); split(st, f, ";"); n[f[1]] += $NF }
	END { for (k in n) printf "%s %d\n", k, n[k] * 1001001 }' "$T/w.folded" | sort >"$T/want"
diff -u "$T/want" "$T/got" | sed 's/^/# /'
[ $rc = 0 ] && cmp -s "$T/want" "$T/got"
ok $? "each profile's weight is its folded sample count x 1001001 ns (folded: exit $rc)"

done_testing
