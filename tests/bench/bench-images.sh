#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-images.sh - sa-report's memory on recordings of many short-lived
# process images of a few binaries (issue 18): peak RSS (/usr/bin/time),
# and the peak count of its mappings and of libc's among them, polled from
# /proc/PID/maps every 20 ms while it runs (the kernel refuses more than
# vm.max_map_count, 65,530 here). Not a test: nothing is asserted.
#   the synthetic case: gen-synthetic -I IMAGES (default 100,000 images of
#   30 binaries, one stack copy each, in 100 intervals);
#   with root and sa-record, and COMPILE=1: a 10 s whole-system
#   --call-graph dwarf recording of a gcc compile loop, recorded here.
# Prints one line per case: "images CASE: rss_kib N wall_s S maps M libc_maps L".
# usage: tests/bench/bench-images.sh [BUILD_DIR] [IMAGES]
set -u
B=${1:-build}
N=${2:-100000}
REP=$B/bin/sa-report
GEN=$B/tests/bench/gen-synthetic
T=$(mktemp -d /tmp/sa-bench-images.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
for f in "$REP" "$GEN"; do [ -x "$f" ] || { echo "bench-images: $f not built" >&2; exit 1; }; done

# measure TAG ARGS...: sa-report ARGS, its peaks polled while it runs
measure() {
	local tag=$1 pid maps=0 libc=0 m l rss wall
	shift
	/usr/bin/time -f '%M %e' -o "$T/time" "$REP" "$@" >/dev/null 2>"$T/err" &
	pid=$!
	# the time process's child is sa-report
	while kill -0 "$pid" 2>/dev/null; do
		for c in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
			m=$({ wc -l <"/proc/$c/maps"; } 2>/dev/null) || continue
			l=$(grep -c '/libc\.so' "/proc/$c/maps" 2>/dev/null) || l=0
			[ "${m:-0}" -gt "$maps" ] && maps=$m
			[ "${l:-0}" -gt "$libc" ] && libc=$l
		done
		sleep 0.02
	done
	wait "$pid" || { echo "bench-images: $tag: sa-report failed" >&2; tail -3 "$T/err" >&2; }
	read -r rss wall <"$T/time"
	echo "images $tag: rss_kib $rss wall_s $wall maps $maps libc_maps $libc"
}

"$GEN" -I "$N" -b 30 -i 100 -o "$T/images.sa" || exit 1
measure "synthetic-$N" -q "$T/images.sa"
measure "synthetic-$N-pid" -q --pid 2000 "$T/images.sa"
rm -f "$T/images.sa"
if [ -n "${COMPILE:-}" ] && [ "$(id -u)" = 0 ] && [ -x "$B/bin/sa-record" ] && command -v gcc >/dev/null; then
	mkdir -p "$T/cc"
	for i in $(seq 20); do
		printf 'int f%d(int x) { return x * %d; }\nint main(void) { return f%d(3); }\n' \
			"$i" "$i" "$i" >"$T/cc/t$i.c"
	done
	(cd "$T/cc" && end=$(($(date +%s) + 13)) &&
		while [ "$(date +%s)" -lt "$end" ]; do
			for f in t*.c; do gcc -O1 -c "$f" -o /dev/null; done
		done) &
	sleep 1
	"$B/bin/sa-record" -q -a --call-graph dwarf -F 999 --duration 10 -o "$T/cc.sa"
	wait
	measure "compile-loop-$("$REP" --info "$T/cc.sa" | sed -n 's/.*contents: *\([0-9]*\) process images.*/\1/p')" \
		-q "$T/cc.sa"
fi
