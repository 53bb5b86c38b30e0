#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (floods the host with mappings: every other recorder's side band would carry them)
# sa-test: statistical
# 5212-sideband-budget.t - the side band's cost is bounded by samples, not
# by what another user maps (issue 49). User nobody runs a loop of short
# processes, each mapping NLIB distinct ELF files (tests/tools/wl-mapflood.c),
# beside `sa-record -a -F 19` (the always-on unit's rate) and a workload of
# another user's short processes (samples/shortlived). At 10d6d12 every
# mapping seen was written: 2,000 MAP records per flood process, the file
# growing per process started (points 3 and 4 fail). Now a mapping is
# written when a sampled user stack falls in it (record/meta/maptab_defer.c),
# the rest counted as sideband_unwritten in the summary.
. "$(dirname "$0")/2000-record-lib.sh"
need_bpf
require_report
require_samples shortlived
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
"${NOBODY[@]}" true 2>/dev/null || skip_all "cannot run as nobody (setpriv)"
echo "1..8"

NLIB=2000 DUR=12
cc -O2 -o "$T/mapflood" "$SRC_ROOT/tests/tools/wl-mapflood.c" &&
	echo 'int sa_flood_lib(int x) { return x * 3; }' >"$T/lib.c" &&
	cc -shared -fPIC -Wl,--build-id -o "$T/lib.so" "$T/lib.c" && mkdir "$T/libs" &&
	"$T/mapflood" gen "$T/lib.so" "$T/libs" $NLIB && chmod -R a+rX "$T"
ok $? "$NLIB ELF files with distinct build ids"

# rec NAME FLOOD: `-a -F 19 --duration DUR` beside shortlived (and the flood
# as nobody when FLOOD is 1); $T/NAME.cpu: the recorder's user and system s
rec()
{
	local flood= victim
	if [ "$2" = 1 ]; then
		"${NOBODY[@]}" bash -c "while :; do '$T/mapflood' map '$T/libs' $NLIB || exit; done" &
		flood=$!
	fi
	# nice -10: its share of a host loaded by others, not its sample count, is not the point
	nice -n -10 "$SA_SAMPLES/shortlived" -n 100000 -m 10 >/dev/null &
	victim=$!
	sleep 0.5
	TIMEFORMAT='%U %S'
	{ time "$REC" -a -F 19 --duration $DUR -o "$T/$1.sa" 2>"$T/$1.err"; } 2>"$T/$1.cpu"
	local rc=$?
	kill $victim $flood 2>/dev/null
	wait $victim $flood 2>/dev/null
	return $rc
}
rec base 0
ok $? "-a -F 19 --duration $DUR beside shortlived"
rec flood 1
ok $? "the same beside a nobody loop mapping $NLIB files a process"
diag_file "$T/flood.err" 12

# MAP records of the flood's processes against its samples. A sample adds at
# most the mappings its user frames lie in; the flood's stacks (main, then
# libc's open or mmap, or the loader at start) lie in at most 4 files: at
# most 4 records a sample, whatever the flood maps. Not statistical.
"$DUMP" "$T/flood.sa" >"$T/flood.dump"
read -r procs maps < <(awk '
	/^PROC/ && / comm=mapflood / { split($2, a, "="); f[a[2]] = 1; np++ }
	/^MAP/ { split($2, a, "="); m[a[2]]++ }
	END { for (p in f) n += m[p]; print np + 0, n + 0 }' "$T/flood.dump")
"$SA_REPORT" -o "$T/flood.folded" "$T/flood.sa" 2>/dev/null
fs=$(folded_total "$T/flood.folded" mapflood)
[ "$procs" -ge 5 ] && [ "$maps" -le $((4 * fs)) ]
ok $? "$maps MAP records of $procs flood processes, <= 4 x its $fs samples"

# File growth: the flood adds its own samples (at most 19 a second a CPU,
# as any workload), their stacks, and a PROC, COMM and EXIT record a process
# (< 256 bytes each before compression). Bound: the run without the flood
# + 2 KiB a flood sample + 1 KiB a flood process + 64 KiB (kernel symbols of
# the flood's stacks). At 10d6d12 each process added ~12 KiB of MAP records.
b=$(stat -c %s "$T/base.sa") f=$(stat -c %s "$T/flood.sa")
lim=$((b + 2048 * fs + 1024 * procs + 65536))
[ "$f" -le "$lim" ]
ok $? "file: $f bytes with the flood, <= $lim ($b without it, $fs samples, $procs processes)"

# Recorder CPU: the flood's mappings still have to be read and tracked (a
# process's mappings must be caught while it lives, before any sample says
# whether they are needed): a copy out of the ring, a sort, a hash look-up
# and an insert with its path, ~2 us a record here (bench-mapflood.sh).
# Bound: the CPU the flood adds, <= 10 us a mapping record it made (so a
# flood twice as fast costs at most twice as much), + 0.1 s for the spread
# of the start-up's own cost between two runs (0.18-0.21 s here); writing them, which
# grew with every record, is gone (points 4 and 5). 10d6d12 also passes
# this point at this rate: its cost was the file, not the CPU.
read -r u s <"$T/flood.cpu"
cf=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
read -r u s <"$T/base.cpu"
cb=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
n=$((procs * NLIB))
lim=$(awk -v b="$cb" -v n=$n 'BEGIN { printf "%.3f", b + 0.1 + 10e-6 * n }')
awk -v f="$cf" -v l="$lim" 'BEGIN { exit !(f <= l) }'
ok $? "recorder CPU: $cf s with the flood <= $lim ($cb s without it + 0.1 s + 10 us x $n mappings)"

# The other user's short processes stay named. [unknown] leaves of
# shortlived: 0 of 1,601 without a flood in the issue, 30 of 1,029 (3%)
# beside it at 10d6d12. At an assumed rate <= 0.1% of <= 230 samples (12 s
# at 19 Hz; mean <= 0.23), 4 or more happen with P < 1e-4 per run. On a
# host loaded by others it gets few samples (6 to 23 at load 16 here): a
# guard, not a measurement; the mapping bound (point 4) is the measure.
read -r vb ub < <(awk '{ n = $NF; st = $0; sub(/ [0-9]+$/, "", st); k = split(st, f, ";")
	if (f[1] == "shortlived") { t += n; if (f[k] == "[unknown]") u += n } }
	END { print t + 0, u + 0 }' <("$SA_REPORT" -U "$T/base.sa" 2>/dev/null))
"$SA_REPORT" -U -o "$T/flood.u" "$T/flood.sa" 2>/dev/null
vs=$(folded_total "$T/flood.u" shortlived)
unknown=$(awk '{ n = $NF; st = $0; sub(/ [0-9]+$/, "", st); k = split(st, f, ";")
	if (f[1] == "shortlived" && f[k] == "[unknown]") t += n } END { print t + 0 }' "$T/flood.u")
named=$(folded_leaf "$T/flood.u" shortlived sa_shortlived_work)
[ "$vs" -ge 5 ] && [ "$unknown" -le 3 ]
ok $? "shortlived beside the flood: $unknown of $vs samples [unknown] (<= 3; $ub of $vb without it), $named named sa_shortlived_work"
n=$(sed -n 's/^sa-record: sideband_unwritten \([0-9]*\) mappings.*/\1/p' "$T/flood.err")
# the file's LOSS records count those dropped during the run (maps_unwritten)
m=$("$SA_REPORT" --info "$T/flood.sa" 2>/dev/null | sed -n 's/.* maps_unwritten=\([0-9]*\).*/\1/p')
[ "${n:-0}" -ge $((procs * NLIB / 2)) ] && [ "${m:-0}" -gt 0 ]
ok $? "sideband_unwritten ${n:-none} in the summary (>= half of $procs x $NLIB), maps_unwritten=${m:-none} in --info"
finish
