#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-warm.sh - time to answer with the symbol cache (issue 18): one
# whole-system capture taken by sa-record and by `perf record -e cpu-clock
# -a -g` at once (samples/workload -t 2 plus the host's own load), then
# ROUNDS alternating runs of `perf script`, sa-report --svg warm (a cache
# filled by one earlier report), cold (an empty cache) and --no-cache.
# Prints each median (min..max) in ms and the ratios; a table goes to
# $BENCH_MD when set (run-all.sh). Target: warm >= 20x faster than perf script.
# BASE_REPORT=PATH: another sa-report (say main's) timed warm in the same
# rounds, on its own filled cache, for a before/after on one capture.
# Not a test: nothing is asserted. Needs root, perf and the samples.
# Usage: [BASE_REPORT=PATH] bench-warm.sh [BUILD_DIR] [SECS=20] [ROUNDS=11]
set -u
B=${1:-${SA_BUILD:-build}}
SECS=${2:-20}
ROUNDS=${3:-11}
REC=$B/bin/sa-record
REP=$B/bin/sa-report
WORK=$B/samples/workload
T=$(mktemp -d /tmp/sa-bench-warm.XXXXXX)
# perf 6.1 aborts in its shared ~/.debug build-id cache on this kernel
export PERF_BUILDID_DIR=$T/perf-buildid
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
for f in "$REC" "$REP" "$WORK"; do [ -x "$f" ] || { echo "bench-warm: $f not built" >&2; exit 1; }; done
[ "$(id -u)" = 0 ] && command -v perf >/dev/null || { echo "bench-warm: needs root and perf" >&2; exit 1; }

# sa-record's window starts 1 s before perf's and ends 1 s after: perf
# script 6.1 fails on the KSYMBOL records of a BPF program loaded while
# perf records (2 s more samples in the .sa file, which counts against sa)
capture() {
	export PERF_BUILDID_DIR=$T/perf-buildid.$RANDOM # empty each time
	"$WORK" -d $((SECS + 3)) -t 2 >/dev/null 2>&1 &
	"$REC" -q -F 999 -a --duration $((SECS + 2)) -o "$T/cap.sa" &
	sleep 1
	perf record -q $1 --no-bpf-event -e cpu-clock -g -F 999 -a -o "$T/perf.data" \
		-- sleep "$SECS" >/dev/null 2>&1
	wait
	# it may also abort in perf script after printing part of the samples
	perf script $PSARGS -i "$T/perf.data" >/dev/null 2>&1
}
# perf record sometimes aborts ("stack smashing detected") while it writes
# build ids, and perf script fails on the KSYMBOL record of a BPF program
# another process loaded meanwhile, or overflows its buffer on a binary
# with an oversized build id (other sessions' tests make them): capture
# again, then without build ids; last, time perf script without user
# symbols (--symfs an empty directory: less work for perf, so the ratio
# printed is a lower bound of sa's advantage), and say so.
PSARGS= ok= note=
for opt in "" "" --no-buildid --no-buildid --no-buildid symfs; do
	if [ "$opt" = symfs ]; then
		mkdir -p "$T/empty"
		PSARGS="--symfs $T/empty" opt=--no-buildid
		note="perf script ran with --symfs EMPTY (no user symbols; perf 6.1 aborted on this host's binaries): its time is a lower bound."
	fi
	capture "$opt" && ok=1 && break
	echo "bench-warm: perf.data unreadable; capturing again${opt:+ with $opt}" >&2
done
[ -n "$ok" ] || { echo "bench-warm: no readable perf.data" >&2; exit 1; }

# timed TAG CMD...: "TAG wall_ms cpu_ms" appended to $T/times
timed() {
	local tag=$1 t0 t1
	shift
	t0=$(date +%s%N)
	/usr/bin/time -f "%U %S" -o "$T/cpu" "$@" >/dev/null 2>"$T/err" || {
		echo "bench-warm: failed: $*" >&2
		tail -3 "$T/err" >&2
		return
	}
	t1=$(date +%s%N)
	echo "$tag $(((t1 - t0) / 1000000)) $(awk '{ printf "%d", ($1 + $2) * 1000 }' "$T/cpu")" >>"$T/times"
}
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
col() { awk -v t="$1" -v c="${2:-2}" '$1 == t { print $c }' "$T/times"; }
cell() { printf '%s (%s..%s)' "$(col "$1" "${2:-2}" | median)" "$(col "$1" "${2:-2}" | sort -g | head -1)" "$(col "$1" "${2:-2}" | sort -g | tail -1)"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }'; }

export XDG_CACHE_HOME=$T/warm
load0=$(cut -d' ' -f1-3 /proc/loadavg)
"$REP" -q --svg -o "$T/ref.svg" "$T/cap.sa" 2>/dev/null # fills the warm cache
BASE=${BASE_REPORT:-}
[ -n "$BASE" ] && XDG_CACHE_HOME=$T/base "$BASE" -q --svg -o /dev/null "$T/cap.sa" 2>/dev/null
: >"$T/times"
for r in $(seq "$ROUNDS"); do
	timed perf_script perf script $PSARGS -i "$T/perf.data"
	timed warm "$REP" -q --svg -o "$T/warm.svg" "$T/cap.sa"
	[ -n "$BASE" ] && XDG_CACHE_HOME=$T/base timed base "$BASE" -q --svg -o "$T/base.svg" "$T/cap.sa"
	XDG_CACHE_HOME=$T/cold.$r timed cold "$REP" -q --svg -o "$T/cold.svg" "$T/cap.sa"
	timed nocache "$REP" -q --svg --no-cache -o "$T/nc.svg" "$T/cap.sa"
done
cmp -s "$T/ref.svg" "$T/warm.svg" && cmp -s "$T/ref.svg" "$T/cold.svg" &&
	cmp -s "$T/ref.svg" "$T/nc.svg" || echo "bench-warm: the SVGs differ between runs!" >&2
[ -z "$BASE" ] || cmp -s "$T/ref.svg" "$T/base.svg" || echo "bench-warm: BASE_REPORT's SVG differs" >&2

ps=$(col perf_script | median) w=$(col warm | median) c=$(col cold | median) n=$(col nocache | median)
samples=$("$REP" --info "$T/cap.sa" 2>/dev/null | awk '/samples:/ { print $2; exit }')
images=$("$REP" --info "$T/cap.sa" 2>/dev/null | sed -n 's/.*contents: *\([0-9]*\) process images.*/\1/p')
cache=$(du -sk "$T/warm/sa" | cut -f1)
{
	echo "Capture: $SECS s whole system at 999 Hz, $samples samples, $images process images;"
	echo ".sa $(stat -c %s "$T/cap.sa") bytes, perf.data $(stat -c %s "$T/perf.data") bytes; cache $cache KiB."
	echo "$ROUNDS alternating rounds; median (min..max), ms; load average $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after.${note:+ $note}"
	echo ""
	echo "| command | wall ms | CPU ms | perf script / it |"
	echo "|---|---|---|---:|"
	echo "| \`perf script${PSARGS:+ --symfs EMPTY} -i perf.data\` | $(cell perf_script) | $(cell perf_script 3) | 1.0 |"
	echo "| \`sa-report --svg\`, warm cache | $(cell warm) | $(cell warm 3) | $(ratio "$ps" "$w") |"
	[ -n "$BASE" ] && echo "| \`$BASE --svg\`, warm (BASE_REPORT) | $(cell base) | $(cell base 3) | $(ratio "$ps" "$(col base | median)") |"
	echo "| \`sa-report --svg\`, cold (empty cache) | $(cell cold) | $(cell cold 3) | $(ratio "$ps" "$c") |"
	echo "| \`sa-report --svg --no-cache\` | $(cell nocache) | $(cell nocache 3) | $(ratio "$ps" "$n") |"
	echo ""
	echo "Warm: $(ratio "$ps" "$w")x faster than perf script (target >= 20x$(awk -v r="$(ratio "$ps" "$w")" 'BEGIN { print (r >= 20) ? ", met" : ", MISSED" }'));"
	echo "cold / --no-cache: $(ratio "$c" "$n") (the first report must not get slower); --no-cache / warm: $(ratio "$n" "$w")."
} | tee "$T/md"
[ -n "${BENCH_MD:-}" ] && cat "$T/md" >>"$BENCH_MD"
exit 0
