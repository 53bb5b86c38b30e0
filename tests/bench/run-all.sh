#!/bin/bash
# SPDX-License-Identifier: MIT
# run-all.sh - `make bench`: sa against perf, side by side, and the scale of
# sa-report on synthetic recordings. Prints a table of ratios and writes
# docs/performance.md (the machine, the commands, the tables). Every figure
# is a median of alternating runs with its min..max spread. Not a test: no
# figure is asserted. Needs root and perf for parts 1-3 (skipped otherwise).
#   BENCH_QUICK=1: fewer and shorter runs (a few minutes instead of ~20).
# Usage: tests/bench/run-all.sh [BUILD_DIR] [OUT.md]
set -u
B=${1:-build}
OUT=${2:-docs/performance.md}
D=$(cd "$(dirname "$0")" && pwd)
REC=$B/bin/sa-record
REP=$B/bin/sa-report
GEN=$B/tests/bench/gen-synthetic
WORK=$B/samples/workload
if [ -n "${BENCH_QUICK:-}" ]; then
	RROUNDS=2 RSECS=5 CAP=10 ART=2 RUNS=1 BIG=50000000 CROUNDS=2
else
	# ART: part 3 alternates sa-report and perf 11 times; a 45 ms answer needs
	# many runs for a median the host's noise does not decide
	RROUNDS=5 RSECS=10 CAP=60 ART=11 RUNS=3 BIG=100000000 CROUNDS=5
fi
T=$(mktemp -d /tmp/sa-bench-all.XXXXXX)
# perf 6.1 aborts ("stack smashing detected", util/build-id.c:1010) while it
# uses a shared ~/.debug build-id cache on this kernel; give it an empty one.
export PERF_BUILDID_DIR=$T/perf-buildid
# sa-report's symbol cache: never the user's; part 3 measures without it
export XDG_CACHE_HOME=$T/xdg
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
for f in "$REP" "$GEN"; do [ -x "$f" ] || { echo "run-all: $f not built" >&2; exit 1; }; done
: >"$T/md"
md() { printf '%s\n' "$*" >>"$T/md"; }
say() { printf '%s\n' "$*"; md "$*"; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
range() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s..%s", lo, hi }'; }
ratio() { echo "$1 $2" | awk '{ printf "%.1f", ($2 > 0 ? $1 / $2 : 0) }'; }
# timed TAG CMD...: appends "TAG wall_s maxrss_kb" to $T/times, the wall
# time to the millisecond (time's %e has 10 ms steps, a fifth of sa-report's
# answer); a run that fails is reported and gives no figure
timed() {
	local tag=$1 t0 t1
	shift
	t0=$(date +%s%N)
	if /usr/bin/time -f "%M" -o "$T/time1" "$@" >/dev/null 2>"$T/err" &&
		! grep -q 'failed to process' "$T/err"; then
		t1=$(date +%s%N)
		echo "$tag $(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e9 }') $(cat "$T/time1")" \
			>>"$T/times"
	else
		echo "run-all: failed, no figure taken: $*" >&2
		tail -3 "$T/err" >&2
	fi
}
col() { awk -v t="$1" -v c="$2" '$1 == t { print $c }' "$T/times"; }
cell() { printf '%s (%s)' "$(col "$1" "${2:-2}" | median)" "$(col "$1" "${2:-2}" | range)"; }
can_perf() { [ "$(id -u)" = 0 ] && command -v perf >/dev/null && [ -x "$REC" ]; }

machine() {
	md "# sa performance"
	md ""
	md "Written by \`make bench\` (tests/bench/run-all.sh${BENCH_QUICK:+, BENCH_QUICK=1}) on $(date -u '+%Y-%m-%d %H:%M UTC'),"
	md "at commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')."
	md "Do not edit the tables by hand: rerun \`make bench\`. The notes below them are kept in"
	md "tests/bench/performance-notes.md and appended as they are."
	md ""
	md "Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
	md "$(free -g | awk '/Mem:/ { print $2 }') GiB RAM, kernel $(uname -r), $(perf --version 2>/dev/null || echo 'no perf'),"
	md "load average at start $(cut -d' ' -f1-3 /proc/loadavg) (a shared, noisy VM: read ratios, not absolutes)."
	md "Figures: median (min..max) of alternating runs; times are wall seconds, memory is peak RSS."
	md ""
}

part_record() {
	say "## 1. Recording overhead (whole system, CPU-bound 2-thread workload)"
	md ""
	md "Command: \`FREQ=999 tests/bench/bench-record.sh $RROUNDS $RSECS\`, then FREQ=99."
	md "sa = \`sa-record -F 999 -a\`; perf = \`perf record -e cpu-clock -g -F 999 -a\`;"
	md "floor = \`perf record -e cpu-clock -F 999 -a\` (no call chains: the timer interrupt's own cost);"
	md "bpffloor = \`sa-record -F 999 -p 1\`: the same events and program, every sample counted and"
	md "filtered out (a BPF program that only counts). Loss is paired with each round's run without"
	md "a recorder; \"cpu %\" is per second of the workload's own CPU time, which excludes steal time"
	md "and preemption by the host's other work (the noise of this shared VM) but includes the timer"
	md "interrupt and the BPF program (no IRQ time accounting in this kernel)."
	md ""
	for f in 999 99; do
		md '```'
		FREQ=$f SA_BUILD=$B "$D/bench-record.sh" "$RROUNDS" "$RSECS" 2>/dev/null | tee -a "$T/md"
		md '```'
	done
	md ""
}

# capture SECS: sa-record, perf record -g and perf record -g -z, at once, on
# the sample workload (2 threads) plus whatever else the host runs.
capture() {
	local secs=$1 opt
	"$WORK" -d $((secs + 3)) -t 2 >/dev/null 2>&1 &
	# perf script 6.1 fails on the KSYMBOL records of a BPF program loaded
	# or unloaded while perf records, --no-bpf-event or not: sa-record's
	# window starts 1 s before perf's and ends 1 s after (2 s more samples
	# in its file, which only counts against it)
	"$REC" -q -F 999 -a --duration $((secs + 2)) -o "$T/cap.sa" &
	sleep 1
	perf record -q -z --no-bpf-event -e cpu-clock -g -F 999 -a -o "$T/perfz.data" -- sleep "$secs" >/dev/null 2>&1 &
	perf record -q --no-bpf-event -e cpu-clock -g -F 999 -a -o "$T/perf.data" -- sleep "$secs" >/dev/null 2>&1
	wait
	# perf record sometimes aborts ("stack smashing detected") while it
	# writes build ids; a broken file is retried, then taken without them.
	for opt in "" "--no-buildid"; do
		[ -n "$(perf script -i "$T/perf.data" 2>/dev/null | head -c 1)" ] && return 0
		echo "run-all: perf.data unreadable (perf record aborted); again ${opt:-as is}" >&2
		md "Note: perf record aborted and left an unreadable perf.data; captured again ${opt:+with $opt }(sa and perf -z files from the first capture)."
		"$WORK" -d $((secs + 3)) -t 2 >/dev/null 2>&1 &
		perf record -q --no-bpf-event -e cpu-clock -g -F 999 -a $opt -o "$T/perf.data" -- sleep "$secs" >/dev/null 2>&1
		wait
	done
	[ -n "$(perf script -i "$T/perf.data" 2>/dev/null | head -c 1)" ]
}

part_file() {
	local sa pd pz
	say "## 2. File size of one ${CAP} s whole-system capture at 999 Hz"
	md ""
	md "The three recorders ran at the same time on the same host (samples/workload -t 2 plus the host's own load);"
	md "sa-record for 2 s more (1 s on each side), so that perf records no BPF load or unload."
	md ""
	capture "$CAP" || { say "perf.data unreadable after retries: parts 2-3 skipped"; return 1; }
	sa=$(stat -c %s "$T/cap.sa") pd=$(stat -c %s "$T/perf.data") pz=$(stat -c %s "$T/perfz.data")
	md "| file | bytes | perf.data / file |"
	md "|---|---:|---:|"
	md "| .sa | $sa | $(ratio "$pd" "$sa") |"
	md "| perf.data | $pd | 1.0 |"
	md "| perf.data (-z) | $pz | $(ratio "$pd" "$pz") |"
	md ""
	echo "file size: .sa $sa, perf.data $pd ($(ratio "$pd" "$sa")x), perf -z $pz ($(ratio "$pz" "$sa")x) (target >= 20x)"
	md "Target: .sa at least 20x smaller than perf.data: $(ratio "$pd" "$sa")x$(awk -v r="$(ratio "$pd" "$sa")" 'BEGIN { print (r >= 20) ? " (met)" : " (MISSED)" }')."
	md ""
}

part_answer() {
	local ps ss
	say "## 3. Time to answer, on the capture of part 2"
	md ""
	for r in $(seq "$ART"); do
		timed sa_folded "$REP" -q --no-cache -o "$T/a.folded" "$T/cap.sa"
		timed perf_script perf script -i "$T/perf.data"
		timed sa_svg "$REP" -q --no-cache --svg -o "$T/a.svg" "$T/cap.sa"
		timed perf_report perf report --stdio -i "$T/perf.data"
	done
	ps=$(col perf_script 2 | median) ss=$(col sa_folded 2 | median)
	md "| command | wall s | RSS KB | perf script / it |"
	md "|---|---|---|---:|"
	md "| \`sa-report --no-cache FILE.sa\` (folded) | $(cell sa_folded) | $(cell sa_folded 3) | $(ratio "$ps" "$ss") |"
	md "| \`sa-report --no-cache --svg FILE.sa\` | $(cell sa_svg) | $(cell sa_svg 3) | $(ratio "$ps" "$(col sa_svg 2 | median)") |"
	md "| \`perf script -i perf.data\` | $(cell perf_script) | $(cell perf_script 3) | 1.0 |"
	md "| \`perf report --stdio -i perf.data\` | $(cell perf_report) | $(cell perf_report 3) | $(ratio "$ps" "$(col perf_report 2 | median)") |"
	md ""
	echo "file -> folded: sa $ss s, perf script $ps s: $(ratio "$ps" "$ss")x (target >= 20x)"
	md "Target: file to folded at least 20x faster than perf script alone: $(ratio "$ps" "$ss")x$(awk -v r="$(ratio "$ps" "$ss")" 'BEGIN { print (r >= 20) ? " (met)" : " (MISSED)" }')."
	md ""
}

# part_warm: a capture of its own (20 s, the issue's size), then perf script
# against sa-report --svg warm, cold and --no-cache (bench-warm.sh)
part_warm() {
	local secs=20
	[ -n "${BENCH_QUICK:-}" ] && secs=5
	say "## 3b. Time to answer with a warm symbol cache (${secs} s whole-system capture)"
	md ""
	md "Command: \`tests/bench/bench-warm.sh $B $secs $ART\` (docs/symcache.md): sa-record and"
	md "perf record -e cpu-clock -a -g of the same run, then alternating runs of each command."
	md ""
	BENCH_MD=$T/md "$D/bench-warm.sh" "$B" "$secs" "$ART" | tail -2
	md ""
}

# scale_case TAG GEN-ARGS...: sa-report folded, --top, --svg on one file
scale_case() {
	local tag=$1
	shift
	"$GEN" "$@" -o "$T/g.sa" || return
	for r in $(seq "$RUNS"); do
		timed "${tag}_f" "$REP" -q -o "$T/g.out" "$T/g.sa"
		timed "${tag}_t" "$REP" -q --top -o "$T/g.out" "$T/g.sa"
		timed "${tag}_s" "$REP" -q --svg -o "$T/g.out" "$T/g.sa"
	done
	md "| $tag | $(stat -c %s "$T/g.sa") | $(cell "${tag}_f") | $(cell "${tag}_t") | $(cell "${tag}_s") | $(col "${tag}_f" 3 | median) / $(col "${tag}_s" 3 | median) |"
	echo "scale $tag: folded $(col "${tag}_f" 2 | median) s, top $(col "${tag}_t" 2 | median) s, svg $(col "${tag}_s" 2 | median) s"
	rm -f "$T/g.sa"
}

part_scale() {
	local a b
	say "## 4. Scale (synthetic recordings, tests/bench/gen-synthetic, depth 24, 64 kernel stacks)"
	md ""
	md "Case names: unique stacks / samples / processes, one interval unless said."
	md ""
	md "| case | .sa bytes | folded s | --top s | --svg s | RSS KB folded / svg |"
	md "|---|---:|---|---|---|---|"
	scale_case "10k/10M/100" -s 10000 -d 24 -p 100 -k 64 -i 1 -n 10000000
	scale_case "100k/10M/100" -s 100000 -d 24 -p 100 -k 64 -i 1 -n 10000000
	scale_case "1M/10M/100" -s 1000000 -d 24 -p 100 -k 64 -i 1 -n 10000000
	scale_case "100k/1M/100" -s 100000 -d 24 -p 100 -k 64 -i 1 -n 1000000
	scale_case "100k/$((BIG / 1000000))M/100" -s 100000 -d 24 -p 100 -k 64 -i 1 -n "$BIG"
	scale_case "100k/10M/10" -s 100000 -d 24 -p 10 -k 64 -i 1 -n 10000000
	scale_case "100k/10M/1000" -s 100000 -d 24 -p 1000 -k 64 -i 1 -n 10000000
	md ""
	md "Same unique (stack, interval) keys at 1M and 100M samples (20k stacks x 10 intervals = 200k"
	md "cells, fewer than 1M samples, so both files hold every cell; with 60 intervals the 1M file"
	md "would lack cells and the comparison would measure record counts): alternating runs."
	"$GEN" -s 20000 -d 24 -p 16 -k 64 -i 10 -n 1000000 -o "$T/1m.sa"
	"$GEN" -s 20000 -d 24 -p 16 -k 64 -i 10 -n 100000000 -o "$T/100m.sa"
	for r in $(seq $((RUNS + 2))); do
		timed s1m "$REP" -q -o "$T/g.out" "$T/1m.sa"
		timed s100m "$REP" -q -o "$T/g.out" "$T/100m.sa"
	done
	a=$(col s1m 2 | median) b=$(col s100m 2 | median)
	md ""
	md "| samples | .sa bytes | folded s |"
	md "|---|---:|---|"
	md "| 1M | $(stat -c %s "$T/1m.sa") | $(cell s1m) |"
	md "| 100M | $(stat -c %s "$T/100m.sa") | $(cell s100m) |"
	md ""
	md "Ratio 100M / 1M: $(echo "$b $a" | awk '{ printf "%.2f", ($2 > 0 ? $1 / $2 : 0) }') (target <= 1.2)."
	echo "scale: same keys, 100M/1M samples time ratio $(echo "$b $a" | awk '{ printf "%.2f", ($2 > 0 ? $1 / $2 : 0) }') (target <= 1.2)"
	md ""
}

part_compile() {
	say "## 1b. Recorder CPU on a compile loop (whole system, 999 Hz)"
	md ""
	md "Command: \`tests/bench/bench-compile.sh $B $CROUNDS $RSECS\`, then with \`CG=fp\`."
	md "sa = \`sa-record -a --call-graph dwarf -F 999 --duration $RSECS\`; perf = \`perf record -N --no-bpf-event"
	md "-e cpu-clock -F 999 -a --call-graph dwarf -- sleep $RSECS\` (fp: \`--call-graph fp\` against \`-g\`), alternating, on"
	md "gcc -O2 compiling four small files over and over. CPU = user + sys of the recorder process"
	md "(/usr/bin/time): what recording costs the box, perf's writing of perf.data and its build-id"
	md "pass at exit included (-N, --no-bpf-event: perf 6.1 aborts at times here in its build-id code"
	md "after BPF programs came and went; both only spare perf work, and a perf that still aborts at"
	md "exit is counted with the CPU it used until then). Target: sa / perf <= 1 in dwarf mode."
	md ""
	md '```'
	"$D/bench-compile.sh" "$B" "$CROUNDS" "$RSECS" 2>&1 | tee -a "$T/md"
	CG=fp "$D/bench-compile.sh" "$B" "$CROUNDS" "$RSECS" 2>&1 | tee -a "$T/md"
	md '```'
	md ""
}

part_images() {
	local n=100000
	[ -n "${BENCH_QUICK:-}" ] && n=20000
	say "## 5. Memory with many process images of a few binaries"
	md ""
	md "Command: \`tests/bench/bench-images.sh $B $n\` (COMPILE=1 adds a 10 s whole-system"
	md "\`--call-graph dwarf\` recording of a gcc compile loop when run as root). Synthetic:"
	md "\`gen-synthetic -I $n -b 30 -i 100\`, $n process images of 30 of this host's binaries, one"
	md "stack copy each. Peak RSS from /usr/bin/time; mappings polled from /proc/PID/maps every"
	md "20 ms (the kernel's limit is vm.max_map_count, $(cat /proc/sys/vm/max_map_count 2>/dev/null))."
	md "Target: under 1 GiB, mappings far below the limit (compile loop: at most 200 MiB)."
	md ""
	md "| case | peak RSS KiB | wall s | peak mappings | of libc |"
	md "|---|---:|---:|---:|---:|"
	COMPILE=$(can_perf && echo 1) bash "$D/bench-images.sh" "$B" "$n" 2>/dev/null | tee "$T/images" |
		awk '{ sub(":", "", $2); printf "| %s | %s | %s | %s | %s |\n", $2, $4, $6, $8, $10 }' >>"$T/md"
	cat "$T/images"
	md ""
}

part_offcpu() {
	say "## 6. Off-CPU recording on a context-switch-heavy load"
	md ""
	md "Command: \`tests/bench/bench-offcpu.sh $RROUNDS\` (perf bench sched pipe -T pinned to"
	md "one CPU: no tool, sa-record -a, sa-record --off-cpu -a, an equivalent bpftrace"
	md "program; per-switch cost from bpf_stats; docs/off-cpu.md)."
	md ""
	if ! command -v bpftrace >/dev/null; then
		say "Skipped: bpftrace not installed (make deps installs it)."
		return
	fi
	SA_BUILD=$B "$D/bench-offcpu.sh" "$RROUNDS" 2>/dev/null | tee -a "$T/md"
	md ""
}

# part_uwcost: the in-kernel unwinder's whole cost, auto against fp (issue 35)
part_uwcost() {
	say "## 8. Stacks without frame pointers walked in the kernel: auto against fp"
	md ""
	md "Command: \`ROUNDS=$RROUNDS SECONDS_REC=$RSECS tests/bench/bench-uwcost.sh $B\` (docs/unwinding.md"
	md "\"Cost\"): the recorder's CPU plus its BPF programs' run time (bpf_stats) of"
	md "\`--call-graph auto\` on samples/workload-nofp against \`--call-graph fp\` on samples/workload"
	md "(the same code with frame pointers), -t 2 attached with -p at 999 Hz, alternating;"
	md "then \`--off-cpu\` on the same pair (per-switch cost). Targets: whole cost <= 1.25x, file <= 2x."
	md ""
	if [ ! -x "$B/samples/workload-nofp" ]; then
		say "Skipped: $B/samples/workload-nofp not built."
		return
	fi
	md '```'
	ROUNDS=$RROUNDS SECONDS_REC=$RSECS bash "$D/bench-uwcost.sh" "$B" 2>&1 | tee -a "$T/md"
	md '```'
	md ""
}

part_input() {
	local fn=1000000 pn=10000000
	[ -n "${BENCH_QUICK:-}" ] && fn=100000 pn=1000000
	say "## 7. Other tools' stacks to an SVG: sa-report against FlameGraph"
	md ""
	md "Command: \`FOLDED_N=$fn PERF_N=$pn tests/bench/bench-input.sh $B\`."
	md ""
	FOLDED_N=$fn PERF_N=$pn bash "$D/bench-input.sh" "$B" >"$T/input.md" 2>&1
	cat "$T/input.md" >>"$T/md"
	cat "$T/input.md"
	md ""
}

part_mapflood() {
	local secs=20
	[ -n "${BENCH_QUICK:-}" ] && secs=10
	say "## 9. The side band beside another user's mapping flood, at the always-on rate"
	md ""
	md "Command: \`tests/bench/bench-mapflood.sh $B $secs 5000\` (issue 49): \`sa-record -a -F 19"
	md "--duration $secs\` alone, then beside user nobody's loop of short processes each mapping"
	md "5,000 distinct ELF files once. Recorder CPU (user + system) and file size. Target: the"
	md "flood's file growth bounded by its samples, not by the mappings it makes."
	md ""
	md "| case | recorder CPU s | % of a CPU | file bytes | bytes/s | flood processes | mappings |"
	md "|---|---:|---:|---:|---:|---:|---:|"
	bash "$D/bench-mapflood.sh" "$B" "$secs" 5000 2>/dev/null | tee "$T/mapflood" |
		awk '{ sub(":", "", $2); printf "| %s | %s | %s | %s | %s | %s | %s |\n", $2, $4, $6, $8, $10, $12, $14 }' >>"$T/md"
	cat "$T/mapflood"
	md ""
}

# PARTS picks what to measure (default all): record compile file warm scale images offcpu input
# uwcost mapflood
PARTS=" ${PARTS:-record compile file warm scale images offcpu input uwcost mapflood} "
machine
if can_perf; then
	case $PARTS in *" record "*) part_record ;; esac
	case $PARTS in *" file "*) [ -x "$WORK" ] && part_file && part_answer ;; esac
	case $PARTS in *" warm "*) [ -x "$WORK" ] && part_warm ;; esac
else
	say "Parts 1-3 skipped: they need root, perf and $REC."
fi
case $PARTS in *" scale "*) part_scale ;; esac
case $PARTS in *" images "*) part_images ;; esac
can_perf && case $PARTS in *" offcpu "*) part_offcpu ;; esac
can_perf && case $PARTS in *" uwcost "*) part_uwcost ;; esac
case $PARTS in *" input "*) part_input ;; esac
[ "$(id -u)" = 0 ] && [ -x "$REC" ] && case $PARTS in *" mapflood "*) part_mapflood ;; esac
if can_perf; then
	case $PARTS in *" compile "*) command -v gcc >/dev/null && part_compile ;; esac
fi
[ -f "$D/performance-notes.md" ] && cat "$D/performance-notes.md" >>"$T/md"
mkdir -p "$(dirname "$OUT")"
cp "$T/md" "$OUT"
echo "wrote $OUT"
