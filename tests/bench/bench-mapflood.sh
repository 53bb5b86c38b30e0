#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-mapflood.sh - the always-on rate (`sa-record -a -F 19`) beside
# another user's side-band flood (issue 49): user nobody runs a loop of
# short processes, each mapping NLIB distinct ELF files once
# (tests/tools/wl-mapflood.c), against the same recording without it. The
# recorder's CPU (user + system, bash's time) and its file's growth; the
# flood's processes and mappings made. Not a test: nothing is asserted
# (tests/cli/5212-sideband-budget.t asserts the bounds).
# Prints one line per case:
#   "mapflood CASE: cpu_s C cpu_pct P file_bytes F bytes_per_s R procs N mappings M".
# usage: tests/bench/bench-mapflood.sh [BUILD_DIR] [SECONDS] [NLIB]
set -u
B=${1:-build}
SECS=${2:-20}
NLIB=${3:-5000}
REC=$B/bin/sa-record
DUMP=$B/tests/tools/sa-dump
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d /tmp/sa-bench-mapflood.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
[ "$(id -u)" = 0 ] || { echo "bench-mapflood: needs root" >&2; exit 1; }
[ -x "$REC" ] || { echo "bench-mapflood: $REC not built" >&2; exit 1; }
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
chmod 755 "$T"
cc -O2 -o "$T/mapflood" "$SRC/tests/tools/wl-mapflood.c" &&
	echo 'int sa_flood_lib(int x) { return x * 3; }' >"$T/lib.c" &&
	cc -shared -fPIC -Wl,--build-id -o "$T/lib.so" "$T/lib.c" && mkdir "$T/libs" &&
	"$T/mapflood" gen "$T/lib.so" "$T/libs" "$NLIB" && chmod -R a+rX "$T" ||
	{ echo "bench-mapflood: cannot build the flood" >&2; exit 1; }
if [ ! -x "$DUMP" ]; then
	DUMP=$T/sa-dump
	cc -O2 -I"$SRC/format/include" -o "$DUMP" "$SRC/tests/tools/sa-dump.c" "$B/lib/libsaf.a" \
		-lzstd -lz 2>/dev/null
fi

# run CASE FLOOD: one recording; FLOOD=1 with the flood beside it
run() {
	local flood= procs=0 t u s
	if [ "$2" = 1 ]; then
		"${NOBODY[@]}" bash -c "while :; do '$T/mapflood' map '$T/libs' $NLIB || exit; done" &
		flood=$!
		sleep 0.5
	fi
	TIMEFORMAT='%U %S'
	{ time "$REC" -q -a -F 19 --duration "$SECS" -o "$T/$1.sa" 2>"$T/$1.err"; } 2>"$T/$1.cpu"
	[ -n "$flood" ] && kill "$flood" 2>/dev/null && wait "$flood" 2>/dev/null
	read -r u s <"$T/$1.cpu"
	[ -x "$DUMP" ] && procs=$("$DUMP" "$T/$1.sa" 2>/dev/null | grep -c '^PROC.* comm=mapflood ')
	awk -v c="$1" -v u="$u" -v s="$s" -v d="$SECS" -v f="$(stat -c %s "$T/$1.sa")" \
		-v p="$procs" -v n="$NLIB" 'BEGIN {
		printf "mapflood %s: cpu_s %.2f cpu_pct %.2f file_bytes %d bytes_per_s %d procs %d mappings %d\n",
			c, u + s, 100 * (u + s) / d, f, f / d, p, p * n }'
}
run base 0
run flood 1
