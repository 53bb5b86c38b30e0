#!/bin/bash
# SPDX-License-Identifier: MIT
# The in-kernel unwinder's tables for a whole host: `sa-record -a
# --call-graph auto` for SECONDS while a compile loop runs (`gcc -O2 -c`
# of a small C file, again and again: new processes of cc1, as, collect2
# every few hundred ms). Prints sa-record's tables line (files met,
# tables and rows in the kernel at the end, freed, build time in all and
# the longest), its unwinding line, the losses by cause (sa-report
# --info: lost_ringbuf is the drain falling behind), and its CPU and peak
# RSS. Needs root.
# docs/unwinding.md "Cost" has the numbers.
# usage: tests/bench/bench-uwtables.sh [BUILD_DIR]   env: SECONDS_REC (30), FREQ (99),
#        KEEP (a path to keep the recording at)
set -u
B=${1:-build}
D=${SECONDS_REC:-30}
FREQ=${FREQ:-99}
REC=$B/bin/sa-record
die() { echo "bench-uwtables: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$REC" ] || die "build $REC first"
command -v gcc >/dev/null || die "needs gcc"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM

cat >"$tmp/some.c" <<'C'
#include <stdio.h>
#include <string.h>
struct s { int a[64]; char name[32]; };
static int f(struct s *p, int n) { int t = 0; for (int i = 0; i < n && i < 64; i++) t += p->a[i]; return t; }
int g(const char *x) { struct s v; memset(&v, 0, sizeof(v)); strncpy(v.name, x, 31); return f(&v, (int)strlen(x)); }
int main(int argc, char **argv) { printf("%d\n", g(argc > 1 ? argv[1] : "")); return 0; }
C
(cd "$tmp" && while :; do gcc -O2 -c some.c -o some.o; done) &
loop=$!
sleep 1
/usr/bin/time -f '%U %S %M' -o "$tmp/time" \
	"$REC" -a -F "$FREQ" --call-graph auto --duration "$D" -o "$tmp/a.sa" 2>"$tmp/err"
rc=$?
kill "$loop" 2>/dev/null
wait "$loop" 2>/dev/null
echo "== sa-record -a -F $FREQ --call-graph auto --duration $D, compile loop running (exit $rc)"
grep -E 'unwind tables|in-kernel unwinding|samples kept' "$tmp/err"
[ -x "$B/bin/sa-report" ] && "$B/bin/sa-report" --info "$tmp/a.sa" 2>&1 | grep -iE '^ *(lost|loss)'
[ -n "${KEEP:-}" ] && cp "$tmp/a.sa" "$KEEP"
awk '{ printf "recorder CPU %.0f ms, peak RSS %.1f MiB\n", ($1 + $2) * 1000, $3 / 1024 }' "$tmp/time"
