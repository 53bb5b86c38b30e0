# SPDX-License-Identifier: MIT
# 2000-record-lib.sh - helpers sourced by the sa-record tests (2xxx): TAP
# output, the root/BPF prerequisite, a private sa-dump, busy workloads
# compiled on the spot, and LOSS-record arithmetic. Not a test itself.

SA_BUILD=${SA_BUILD:-build}
case $SA_BUILD in /*) ;; *) SA_BUILD=$PWD/$SA_BUILD ;; esac
SRC_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REC=$SA_BUILD/bin/sa-record
T=$(mktemp -d /tmp/sa-rec-test.XXXXXX)
trap 'jobs -p | xargs -r kill 2>/dev/null; rm -rf "$T"' EXIT
n=0
fails=0

ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi
}
skip() { n=$((n + 1)); echo "ok $n # skip $1"; }
diag() { echo "# $*"; }
finish() { exit $((fails > 0)); }

# Skip the whole script unless root, sa-record and a BPF load all work.
need_bpf() {
	[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 0; }
	[ -x "$REC" ] || { echo "1..0 # SKIP $REC not built"; exit 0; }
	"$REC" -q --duration 0.2 -o "$T/probe.sa" >"$T/probe.err" 2>&1 ||
		{ echo "1..0 # SKIP BPF unavailable: $(head -1 "$T/probe.err")"; exit 0; }
	build_dump
}

# sa-dump: from the build tree, else compiled here against libsaf.a.
build_dump() {
	DUMP=$SA_BUILD/tests/tools/sa-dump
	[ -x "$DUMP" ] && return
	DUMP=$T/sa-dump
	cc -O2 -I"$SRC_ROOT/format/include" -o "$DUMP" "$SRC_ROOT/tests/tools/sa-dump.c" \
		"$SA_BUILD/lib/libsaf.a" -lzstd -lz ||
		{ echo "1..0 # SKIP cannot build sa-dump"; exit 0; }
}

# busy N: a CPU-bound program with N threads and frame pointers, in $T/busy.
build_busy() {
	cat >"$T/busy.c" <<'CEOF'
#include <pthread.h>
#include <stdlib.h>
volatile unsigned long sink;
__attribute__((noinline)) void leaf(void) { volatile int x = 0; for (int i = 0; i < 1000; i++) x += i; sink += x; }
__attribute__((noinline)) void mid(void) { leaf(); }
void *run(void *a) { (void)a; for (;;) mid(); return 0; }
int main(int c, char **v) { int n = c > 1 ? atoi(v[1]) : 1; pthread_t t;
	for (int i = 1; i < n; i++) pthread_create(&t, 0, run, 0); run(0); }
CEOF
	cc -O2 -fno-omit-frame-pointer -pthread -o "$T/busy" "$T/busy.c"
}

# loss_check FILE: prints "runs kept filtered lost" summed over LOSS
# records; exits 1 if any interval breaks runs == kept + filtered + lost_*.
loss_sums() {
	"$DUMP" "$1" | awk '
	/^LOSS/ {
		delete v
		for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		lost = 0
		for (k in v) if (k ~ /^lost_/) lost += v[k]
		if (v["runs"] != v["kept"] + v["filtered"] + lost) bad++
		R += v["runs"]; K += v["kept"]; F += v["filtered"]; L += lost
	}
	END { print R + 0, K + 0, F + 0, L + 0; exit bad > 0 }'
}

# cpu_ticks PID: utime + stime of a process, in clock ticks.
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
