#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-record --call-graph dwarf side by side with
# `perf record -e cpu-clock --call-graph dwarf` at the same frequency, on the
# same workloads (samples/workload-nofp with 2 threads; zstd -19 compressing
# a file): file size, the workload's throughput loss against an unrecorded
# run, the recorder's own CPU time and peak RSS, and the time from file to
# folded stacks (sa-report, inline frames included, against `perf script`
# alone with its default inline handling). docs/unwinding.md has the numbers.
#
# The recorders attach to the running workload (-p) for SECONDS, so their
# CPU time and RSS are their own (a `-- CMD` child's would be counted too).
#
# usage: tests/bench/bench-dwarf.sh [BUILD_DIR]
#   env: FREQ (default 999), SECONDS_REC (default 10), ROUNDS (default 1),
#   RUNS (runs of each file-to-folded command, median taken; default 7),
#   CG (sa's --call-graph: dwarf, the default, or auto), WORKLOAD (a sample
#   of BUILD_DIR/samples: workload-nofp, the default, workload-leaf, workload)
set -u

B=${1:-build}
FREQ=${FREQ:-999}
D=${SECONDS_REC:-10}
ROUNDS=${ROUNDS:-1}
REC=$B/bin/sa-record
REP=$B/bin/sa-report
CG=${CG:-dwarf}
W=$B/samples/${WORKLOAD:-workload-nofp}

die() { echo "bench-dwarf: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
command -v perf >/dev/null || die "perf not installed"
[ -x "$REC" ] && [ -x "$REP" ] && [ -x "$W" ] || die "build $REC, $REP and $W first"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
# perf 6.1 aborts in its build-id code ("assertion failed at
# util/build-id.c:1010", "stack smashing detected") when the shared build-id
# cache (~/.debug) holds an entry it cannot parse; measured here: with an
# empty cache of its own, record and script both work.
export PERF_BUILDID_DIR=$tmp/perf-buildids
mkdir -p "$PERF_BUILDID_DIR"

# throughput OUTFILE: iterations/s printed by the workload
throughput() { awk '/throughput/ { print $3 }' "$1"; }

# run_workload NAME [sa|perf]: the workload for D+2 s, the recorder attached
# for D s from 1 s in; leaves $tmp/NAME.{out,time,err}
run_workload()
{
	local name=$1 pid
	"$W" -t 2 -d $((D + 2)) >"$tmp/$name.out" &
	pid=$!
	sleep 1
	case ${2-} in
	sa)
		/usr/bin/time -f '%U %S %M' -o "$tmp/$name.time" "$REC" -q -F "$FREQ" \
			--call-graph "$CG" --duration "$D" -o "$tmp/w.sa" -p "$pid" 2>"$tmp/$name.err"
		;;
	perf)
		/usr/bin/time -f '%U %S %M' -o "$tmp/$name.time" perf record -q -e cpu-clock \
			-F "$FREQ" --call-graph dwarf -o "$tmp/perf.data" -p "$pid" -- sleep "$D" \
			2>"$tmp/$name.err"
		;;
	esac
	wait "$pid"
}

# A perf.data that perf script cannot read is retried, and said so.
perf_ok() { perf script -i "$tmp/perf.data" -F comm 2>/dev/null | head -1 | grep -q .; }

# secs CMD...: the median wall time of RUNS (default 7) runs, to the ms
secs()
{
	local i t0
	for i in $(seq "${RUNS:-7}"); do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1
		echo $(($(date +%s%N) - t0))
	done | sort -n | awk '{ a[NR] = $1 } END { printf "%.3f", a[int((NR + 1) / 2)] / 1e9 }'
}

for round in $(seq "$ROUNDS"); do
	echo "== round $round: $(basename "$W") -t 2, ${D} s recorded at $FREQ Hz, sa --call-graph $CG"
	# each recorded run paired with an unrecorded one just before it
	run_workload base
	run_workload sa sa
	mv "$tmp/base.out" "$tmp/base-sa.out"
	for try in 1 2 3; do
		run_workload base
		run_workload perf perf
		perf_ok && break
		echo "  perf record gave an unreadable perf.data (try $try): $(tail -1 "$tmp/perf.err")"
	done
	ls=$(awk -v b="$(throughput "$tmp/base-sa.out")" -v s="$(throughput "$tmp/sa.out")" \
		'BEGIN { printf "%.2f", 100 * (b - s) / b }')
	lp=$(awk -v b="$(throughput "$tmp/base.out")" -v p="$(throughput "$tmp/perf.out")" \
		'BEGIN { printf "%.2f", 100 * (b - p) / b }')
	echo "  throughput loss over the run (${D} s recorded of $((D + 2))), each against the" \
	     "unrecorded run before it: sa $ls%  perf $lp%"
	read -r su ss sm <"$tmp/sa.time"
	read -r pu ps pm <"$tmp/perf.time"
	cs=$(awk -v a="$su" -v b="$ss" 'BEGIN { print a + b }')
	cp=$(awk -v a="$pu" -v b="$ps" 'BEGIN { print a + b }')
	echo "  recorder CPU: sa $cs s  perf $cp s;  peak RSS: sa $((sm / 1024)) MB  perf $((pm / 1024)) MB"
	echo "$ls $lp $cs $cp $((sm / 1024)) $((pm / 1024))" >>"$tmp/rounds"
	sb=$(stat -c %s "$tmp/w.sa")
	pb=$(stat -c %s "$tmp/perf.data")
	echo "  file: sa $((sb / 1024)) KiB  perf $((pb / 1024)) KiB  (sa/perf = $(awk -v a="$sb" -v b="$pb" 'BEGIN { printf "%.3f", a / b }'))"
	ts=$(secs "$REP" -o "$tmp/sa.folded" "$tmp/w.sa")
	tp=$(secs timeout 900 perf script -i "$tmp/perf.data")
	echo "  file to folded: sa-report $ts s  perf script alone $tp s  (perf/sa = $(awk -v a="$tp" -v b="$ts" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }'))"
	awk '{ n = $NF; t += n; if ($0 ~ /;(main|start_thread);/) m += n } END {
		printf "  sa: %d samples, %.1f%% of stacks reach main or start_thread\n", t, t ? 100 * m / t : 0 }' \
		"$tmp/sa.folded"
done
if [ "$ROUNDS" -gt 1 ]; then
	# med COLUMN: "median (min..max)" of a column of $tmp/rounds
	med() { cut -d' ' -f"$1" "$tmp/rounds" | sort -g | awk '{ a[NR] = $1 } END {
		printf "%s (%s..%s)", a[int((NR + 1) / 2)], a[1], a[NR] }'; }
	echo "== $ROUNDS rounds, median (range): throughput loss sa $(med 1)%  perf $(med 2)%;" \
	     "recorder CPU sa $(med 3) s  perf $(med 4) s; RSS sa $(med 5) MB  perf $(med 6) MB"
fi

if command -v zstd >/dev/null; then
	echo "== zstd -19 --single-thread on 8 MB of base64, whole run recorded at $FREQ Hz"
	head -c 6000000 /dev/urandom | base64 >"$tmp/in.txt"
	Z="zstd -19 --single-thread -q -f $tmp/in.txt -o $tmp/o.zst"
	# zstd's own wall time, timed inside the recorder's command
	zt() { /usr/bin/time -f '%e' -o "$tmp/zt" "$@" >/dev/null 2>&1; cat "$tmp/zt"; }
	t0=$(zt $Z)
	"$REC" -q -F "$FREQ" --call-graph "$CG" -o "$tmp/z.sa" -- /usr/bin/time -f '%e' \
		-o "$tmp/zt" $Z >/dev/null 2>&1
	t1=$(cat "$tmp/zt")
	pok=false
	for try in 1 2 3; do
		perf record -q -e cpu-clock -F "$FREQ" --call-graph dwarf -o "$tmp/perf.data" \
			-- /usr/bin/time -f '%e' -o "$tmp/zt" $Z >/dev/null 2>&1
		t2=$(cat "$tmp/zt")
		perf_ok && pok=true && break
		echo "  perf record gave an unreadable perf.data (try $try)"
	done
	echo "  zstd wall time: alone $t0 s  under sa $t1 s  under perf $t2 s"
	sb=$(stat -c %s "$tmp/z.sa")
	pb=$(stat -c %s "$tmp/perf.data")
	echo "  file: sa $((sb / 1024)) KiB  perf $((pb / 1024)) KiB  (sa/perf = $(awk -v a="$sb" -v b="$pb" 'BEGIN { printf "%.3f", a / b }'))"
	ts=$(secs "$REP" -o "$tmp/z.folded" "$tmp/z.sa")
	if $pok; then
		tp=$(secs timeout 900 perf script -i "$tmp/perf.data")
		echo "  file to folded: sa-report $ts s  perf script alone $tp s  (perf/sa = $(awk -v a="$tp" -v b="$ts" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }'))"
	else
		echo "  file to folded: sa-report $ts s  perf script: no readable perf.data, no ratio"
	fi
	awk '{ n = $NF; t += n; if ($0 ~ /__libc_start_call_main/) m += n } END {
		printf "  sa: %d samples, %.1f%% of stacks reach __libc_start_call_main\n", t, t ? 100 * m / t : 0 }' \
		"$tmp/z.folded"
fi
