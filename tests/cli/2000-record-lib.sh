# SPDX-License-Identifier: MIT
# 2000-record-lib.sh - what the sa-record tests (2xxx) add to lib.sh, the one
# TAP library of tests/cli (ok, skip, skip_all, diag, the sanitizer logs):
# the root/BPF prerequisite, a private sa-dump, busy workloads compiled on
# the spot, and LOSS-record arithmetic. Not a test itself.

# a relative SA_BUILD is the caller's, before lib.sh reads it
SA_BUILD=${SA_BUILD:-build}
case $SA_BUILD in /*) ;; *) SA_BUILD=$PWD/$SA_BUILD ;; esac
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SRC_ROOT=$SA_SRC
REC=$SA_RECORD
T=$(mktemp -d /tmp/sa-rec-test.XXXXXX)
trap 'jobs -p | xargs -r kill 2>/dev/null; rm -rf "$T"' EXIT

# finish: the exit status for prove, as lib.sh's done_testing gives it.
finish() { done_testing; }

# Skip the whole script unless this machine can load BPF programs: root,
# and bpftool can list them. The probe is the machine, never sa-record:
# a recorder whose own BPF load fails must fail these tests, not skip them.
need_bpf() {
	[ "$(id -u)" = 0 ] || skip_all "needs root"
	[ -x "$REC" ] || skip_all "$REC not built"
	command -v bpftool >/dev/null 2>&1 || skip_all "bpftool not installed (BPF probe)"
	bpftool prog list >/dev/null 2>&1 || skip_all "BPF unavailable (bpftool prog list fails)"
	build_dump
}

# sa-dump: from the build tree, else compiled here against libsaf.a.
build_dump() {
	DUMP=$SA_BUILD/tests/tools/sa-dump
	[ -x "$DUMP" ] && return
	DUMP=$T/sa-dump
	cc -O2 -I"$SRC_ROOT/format/include" -o "$DUMP" "$SRC_ROOT/tests/tools/sa-dump.c" \
		"$SA_BUILD/lib/libsaf.a" -lzstd -lz ||
		skip_all "cannot build sa-dump"
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
