#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-compile.sh - what recording costs the box: the CPU time (user + sys,
# /usr/bin/time) of `sa-record -a --call-graph dwarf -F 999` and of
# `perf record -N --no-bpf-event -e cpu-clock -F 999 -a --call-graph dwarf` (its file
# written to /tmp, its build-id pass at exit included), each for SECONDS of a
# compile loop (gcc -O2 on four small C files, over and over: short
# processes, a large binary without frame pointers, new images every few
# milliseconds). Runs alternate, so the host's drifts fall on both; prints
# each round, then the medians (min..max) and the ratio sa / perf.
# CG=fp compares `sa-record --call-graph fp` with `perf record -g` instead.
# BASE=OTHER_BUILD_DIR also runs that build's sa-record in each round (before
# / after a change, same host, same rounds).
# Needs root, perf and gcc.
# Usage: tests/bench/bench-compile.sh [BUILD_DIR [ROUNDS [SECONDS]]]  (build 5 10)
set -u
B=${1:-build}
ROUNDS=${2:-5}
SECS=${3:-10}
CG=${CG:-dwarf}
REC=$B/bin/sa-record
BASE=${BASE:-}
die() { echo "bench-compile: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
command -v perf >/dev/null || die "perf not installed"
command -v gcc >/dev/null || die "gcc not installed"
[ -x "$REC" ] || die "build $REC first"
[ -z "$BASE" ] || [ -x "$BASE/bin/sa-record" ] || die "build $BASE/bin/sa-record first"
case $CG in
dwarf) PCG="--call-graph dwarf" ;;
fp) PCG="-g" ;;
*) die "CG is dwarf or fp" ;;
esac
T=$(mktemp -d /tmp/sa-bench-compile.XXXXXX)
LOOP=
trap '[ -n "$LOOP" ] && kill "$LOOP" 2>/dev/null; wait; rm -rf "$T"' EXIT
# perf 6.1 aborts in its build-id code on a shared ~/.debug it cannot parse
export PERF_BUILDID_DIR=$T/perf-buildids
mkdir -p "$PERF_BUILDID_DIR"

for i in 1 2 3 4; do
	cat >"$T/f$i.c" <<EOF
#include <stdio.h>
#include <stdlib.h>
struct node { struct node *l, *r; int k; char name[32]; };
static struct node *ins(struct node *t, int k)
{
	if (!t) {
		t = calloc(1, sizeof(*t));
		t->k = k;
		snprintf(t->name, sizeof(t->name), "n%d", k);
		return t;
	}
	if (k < t->k)
		t->l = ins(t->l, k);
	else
		t->r = ins(t->r, k);
	return t;
}
static int depth(const struct node *t)
{
	int a, b;

	if (!t)
		return 0;
	a = depth(t->l);
	b = depth(t->r);
	return 1 + (a > b ? a : b);
}
int main(int argc, char **argv)
{
	struct node *t = 0;
	unsigned x = argc;

	for (int i = 0; i < 1000 * $i; i++) {
		x = x * 1103515245u + 12345u;
		t = ins(t, (int)(x >> 8));
	}
	printf("%d %s\n", depth(t), argv[0]);
	return 0;
}
EOF
done
cat >"$T/loop.sh" <<EOF
#!/bin/sh
trap 'exit 0' TERM
while :; do
	for i in 1 2 3 4; do gcc -O2 -c -o "$T/f\$i.o" "$T/f\$i.c" || exit 1; done
done
EOF
chmod +x "$T/loop.sh"
"$T/loop.sh" &
LOOP=$!

# cpu NAME CMD...: "user+sys" of CMD into $T/NAME.cpu (one line a run). A
# perf killed by a signal (its aborts at exit) is counted with what it used
# until then, less than a whole run; any other failure gives no figure.
cpu()
{
	local name=$1
	shift
	if /usr/bin/time -f '%U %S' -o "$T/time" "$@" >/dev/null 2>"$T/err"; then
		awk '{ print $1 + $2 }' "$T/time" >>"$T/$name.cpu"
	elif [ "$name" = perf ] && grep -q 'terminated by signal' "$T/time"; then
		tail -1 "$T/time" | awk '{ print $1 + $2 }' >>"$T/$name.cpu"
		echo "  perf aborted ($(grep -o '\*\*\* .* \*\*\*' "$T/err" | tail -1)): counted as is"
	else
		echo "  $name failed, no figure taken: $(tail -1 "$T/err")"
	fi
}

med() { sort -g "$T/$1.cpu" | awk '{ a[NR] = $1 } END { if (NR) printf "%s (%s..%s)", a[int((NR + 1) / 2)], a[1], a[NR] }'; }
medv() { sort -g "$T/$1.cpu" | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }

sleep 1
echo "== compile loop (gcc -O2, 4 files), ${SECS} s whole-system at 999 Hz, --call-graph $CG;" \
     "recorder CPU (user + sys) in seconds"
: >"$T/sa.cpu"
: >"$T/perf.cpu"
: >"$T/base.cpu"
for r in $(seq "$ROUNDS"); do
	if [ -n "$BASE" ]; then
		cpu base "$BASE/bin/sa-record" -q -a --call-graph "$CG" -F 999 --duration "$SECS" \
			-o "$T/r.sa"
		rm -f "$T/r.sa"
	fi
	cpu sa "$REC" -q -a --call-graph "$CG" -F 999 --duration "$SECS" -o "$T/r.sa"
	rm -f "$T/r.sa"
	# perf 6.1 aborts here now and then ("stack smashing detected", in
	# util/build-id.c) after BPF programs came and went (sa-record's, just
	# before): -N (no build-id cache update) and --no-bpf-event make it
	# rarer and only spare perf work
	# shellcheck disable=SC2086
	cpu perf perf record -N --no-bpf-event -q -e cpu-clock -F 999 -a $PCG -o "$T/perf.data" -- sleep "$SECS"
	rm -f "$T/perf.data"
	echo "  round $r:${BASE:+ base $(tail -1 "$T/base.cpu")} sa $(tail -1 "$T/sa.cpu")" \
	     " perf $(tail -1 "$T/perf.cpu")  (load $(cut -d' ' -f1 /proc/loadavg))"
done
[ -z "$BASE" ] || echo "== base ($BASE) median (min..max): $(med base)"
s=$(medv sa) p=$(medv perf)
echo "== median (min..max) of $ROUNDS: sa $(med sa)  perf $(med perf);" \
     "sa / perf = $(awk -v s="$s" -v p="$p" 'BEGIN { printf "%.2f", (p > 0 ? s / p : 0) }')" \
     "(target <= 1)"
