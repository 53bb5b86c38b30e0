#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# sa-test: statistical
# dwarf and auto recordings analyzed off the box (issue 18): sa-record writes
# the frames its own walk found (format 1.3) and embeds every frame's name,
# so with the sampled binary deleted and /usr/lib/debug hidden the report
# gives the same stacks as with the binary. Without recorded frames
# (--whole-stack) the report names the missing binary and its build id once.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples workload-nofp
tmpdir
T=$tap_tmp

# the analysis machine: /usr/lib/debug hidden under an empty tmpfs
unshare -m true 2>/dev/null || skip_all "unshare -m not available"
offbox()
{
	unshare -m sh -c 'mount -t tmpfs none /usr/lib/debug && exec "$@"' sh "$SA_REPORT" "$@"
}

plan 16

# same_but_plt WITH GONE: the folded stacks are equal but for samples in a
# PLT stub (an expression row sa-record's walk does not follow,
# docs/unwinding.md): without the binary those show the stub alone under the
# process, and under it the kernel frames of a sample taken while the kernel
# ran for the process (an interrupt's tail: 6130 sees them under abs@plt
# on a loaded host). The old check wanted the stub as the last frame, and
# failed on such a sample: one cause of test 3 failing now and then.
# Prints how many samples differ; fails on any other difference.
same_but_plt()
{
	awk 'FNR == 1 { f++ }
	{
		n = $NF; st = $0; sub(/ [0-9]+$/, "", st)
		c[st] += (f == 1 ? n : -n)
	}
	END {
		for (st in c) {
			if (!c[st])
				continue
			k = split(st, fr, ";")
			for (j = 2; j <= k && fr[j] !~ /@plt$/; j++)
				;
			if (j > k || (c[st] < 0 && j != 2)) {
				bad++
				printf "# differs (%+d, not a PLT sample): %s\n", c[st], st > "/dev/stderr"
			}
			diff = diff sprintf("# %+d %s\n", c[st], st)
			if (c[st] > 0)
				a += c[st]
			else
				b -= c[st]
		}
		print a + 0
		if (a != b)
			printf "# %d samples more with the binary, %d without:\n%s", a, b, diff > "/dev/stderr"
		exit (bad || a != b)
	}' "$1" "$2"
}

bid()
{
	readelf -n "$1" | awk '/Build ID/ { print $3; exit }'
}

# 1. Debian's python3 running a CPU loop: a copy, recorded, reported, deleted.
# The loop runs for 2 s of its own CPU time (read every 20,000 turns, ~1 ms:
# the clock is a system call, which must not take the samples). No longer
# assumed (issue 30):
# an idle host. A loop of 2 s of wall time got 139-253 samples instead of
# ~1,000 beside an ASan recorder on a loaded host, and start-up (a fixed
# ~20-40 ms of CPU) then held over 10% of them, under Py_RunMain's 90%.
py=$(readlink -f /usr/bin/python3)
cp "$py" "$T/py"
"$SA_RECORD" -q -F 499 --call-graph dwarf -o "$T/py.sa" -- "$T/py" -c '
import time
t = time.process_time() + 2
while time.process_time() < t:
    for i in range(20000):
        pass' >/dev/null 2>"$T/rec.err"
ok $? "sa-record --call-graph dwarf -- a copy of python3 exits 0"
offbox -o "$T/py.with.folded" "$T/py.sa" 2>"$T/py.with.err"
rm -f "$T/py"
offbox -o "$T/py.gone.folded" "$T/py.sa" 2>"$T/py.gone.err"
ok $? "sa-report exits 0 with the interpreter deleted and /usr/lib/debug hidden"
tot=$(folded_total "$T/py.with.folded" py)
with=$(pct "$(folded_with "$T/py.with.folded" py Py_RunMain)" "$tot")
gone=$(pct "$(folded_with "$T/py.gone.folded" py Py_RunMain)" "$(folded_total "$T/py.gone.folded" py)")
plt=$(same_but_plt "$T/py.with.folded" "$T/py.gone.folded")
ok $? "python3: the same stacks without the binary but $plt in a PLT stub ($gone% reach Py_RunMain, $with% with it)"
# The loop calls clock_gettime through the PLT: 0-1 samples in ~900 land on
# the stub here (p ~ 0.001). At most 3% of >= 200 samples is >= 7 allowed
# at n = 200; even at p = 0.005 (mean 1) P(X >= 7) = 8e-5, and at n = 900
# (mean 4.5, 27 allowed) far less: under 0.1% per run.
ptot=$(folded_total "$T/py.with.folded" py)
ge 3 "$(pct "${plt:-999}" "$ptot")"
ok $? "python3: ${plt:-?} PLT-stub samples of $ptot (want <= 3%)"
# All but start-up (about 20 ms of 2 s, 1%) is under Py_RunMain: with
# p = 0.98 and n >= 200 samples, a share under 90% is 8 standard deviations
# (sd = sqrt(.98 * .02 / 200) = 1 point) below: chance far under 0.1%.
ge "$with" 90 && [ "$tot" -ge 200 ]
ok $? "python3: $with% of $tot samples reach Py_RunMain (want >= 90)"
# What sa-report says with the interpreter gone is what it says with it: no
# "not found". (Not "nothing": a loaded host makes an ASan recorder lose
# samples, which the report rightly says; seen once in 14 runs.)
cmp -s "$T/py.with.err" "$T/py.gone.err"
ok $? "python3: the same stderr when the recorded frames stand in: $(head -n 1 "$T/py.gone.err")"

# 2. workload-nofp (built with -fomit-frame-pointer) under auto, deleted; its
# DWARF stripped as a production binary's is (inline frames come from DWARF)
strip --strip-debug -o "$T/wl" "$SA_SAMPLES/workload-nofp"
"$SA_RECORD" -q -F 499 --call-graph auto -o "$T/wl.sa" -- "$T/wl" -c 2 >/dev/null 2>"$T/rec.err"
ok $? "sa-record --call-graph auto -- a copy of workload-nofp exits 0"
offbox -o "$T/wl.with.folded" "$T/wl.sa" 2>"$T/with.err"
cp "$T/wl" "$T/wl.keep"
rm -f "$T/wl"
offbox -o "$T/wl.gone.folded" "$T/wl.sa" 2>"$T/gone.err"
# the run: all samples but those of exec, ld.so's start-up and exit, whose
# count is a fixed cost that varies with the CPU (cpuid traps in ld.so) and
# the host (page faults): 7 of 520 under ASan on a loaded host
tot=$(awk '{ n = $NF; st = $0; sub(/ [0-9]+$/, "", st) }
	st ~ /^wl;/ && st !~ /;(execve|_dl_start|exit|__x64_sys_exit_group)(;|$)/ { t += n }
	END { print t + 0 }' "$T/wl.gone.folded")
main=$(pct "$(folded_with "$T/wl.gone.folded" wl main)" "$tot")
cmp -s "$T/wl.with.folded" "$T/wl.gone.folded"
ok $? "workload-nofp (auto): the same stacks without the binary ($main% reach main; no PLT in its loop)"
# as 6040: every sample of the run (2 s of its CPU: ~1,000) is under main
# but a rare walk that stops early (a vdso sample: about 1 in 500); more
# than 1% of >= 600 at p = 0.002 (mean 1.2) is P(X >= 7) = 1e-4 per run.
# No longer assumed (issue 30): start-up and exit taking 0 or 1 sample.
ge "$main" 99 && [ "$tot" -ge 600 ]
ok $? "workload-nofp (auto): $main% of $tot samples of its run reach main without the binary (want >= 99)"

# 3. no recorded frames (--whole-stack): the missing binary is named once
cp "$T/wl.keep" "$T/wl"
want=$(bid "$T/wl")
"$SA_RECORD" -q -F 499 --call-graph dwarf --whole-stack -o "$T/ws.sa" -- "$T/wl" -c 1 \
	>/dev/null 2>"$T/rec.err"
ok $? "sa-record --whole-stack -- workload-nofp exits 0"
rm -f "$T/wl"
offbox -o "$T/ws.folded" "$T/ws.sa" 2>"$T/ws.err"
n=$(grep -c "sa-report: $T/wl (build id $want) not found" "$T/ws.err")
[ "$n" -eq 1 ] && [ "$(wc -l <"$T/ws.err")" -eq 1 ]
ok $? "without recorded frames: one line names $T/wl and build id $want (got $n)"
diag_file "$T/ws.err"
offbox -q -o "$T/ws.q.folded" "$T/ws.sa" 2>"$T/ws.q.err"
[ ! -s "$T/ws.q.err" ]
ok $? "sa-report -q: no line"
[ "$(folded_with "$T/ws.folded" wl main)" -eq 0 ]
ok $? "without recorded frames: no invented callers"

# 4. A hot function with no FDE (built without unwind tables, with a frame
# pointer; a binary's _init and _fini are such code) called from code that
# has CFI and no frame pointers. sa-report with the binary walks on from
# it by libdwfl's frame-pointer fallback; the frames sa-record recorded
# must be the same, or the report without the binary stops at the leaf.
# (Seen as 6150 point 3 failing about 1 run in 20: one sample of python3's
# exit in _fini, `py;[py]` without the binary.) Not statistical: nearly
# every sample is in the loop of nocfi_spin.
cat >"$T/nocfi.c" <<'C'
unsigned long nocfi_spin(unsigned long n)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < n; i++)
		x += i;
	return x;
}
C
cat >"$T/cfimain.c" <<'C'
#include <time.h>
unsigned long nocfi_spin(unsigned long n);
__attribute__((noinline)) unsigned long with_cfi(void)
{
	return nocfi_spin(1000000) + 1;
}
int main(void)
{
	struct timespec t;
	unsigned long r = 0;

	do {
		r += with_cfi();
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while (t.tv_sec < 1);
	return (int)(r & 1);
}
C
cc -O1 -fno-asynchronous-unwind-tables -fno-unwind-tables -fno-omit-frame-pointer \
	-c -o "$T/nocfi.o" "$T/nocfi.c" &&
	cc -O1 -fomit-frame-pointer -o "$T/nc" "$T/cfimain.c" "$T/nocfi.o"
ok $? "a program whose hot function has no FDE builds"
# covered: FDEs (pc=LO..HI, hex) whose range holds nocfi_spin's address
at=$((16#$(nm "$T/nc" | awk '$3 == "nocfi_spin" { print $1 }')))
covered=0
while read -r lo hi; do
	[ $((16#$lo)) -le "$at" ] && [ "$at" -lt $((16#$hi)) ] && covered=$((covered + 1))
done < <(readelf -wf "$T/nc" | sed -n 's/.* FDE .*pc=\([0-9a-f]*\)\.\.\([0-9a-f]*\).*/\1 \2/p')
[ "$at" -gt 0 ] && [ "$covered" = 0 ] && [ "$(readelf -wf "$T/nc" | grep -c ' FDE ')" -gt 2 ]
ok $? "nocfi_spin ($(printf %x "$at")) has no FDE of $(readelf -wf "$T/nc" | grep -c ' FDE ') in .eh_frame"
"$SA_RECORD" -q -F 499 --call-graph dwarf -o "$T/nc.sa" -- "$T/nc" >/dev/null 2>"$T/rec.err"
offbox -o "$T/nc.with.folded" "$T/nc.sa" 2>/dev/null
rm -f "$T/nc"
offbox -o "$T/nc.gone.folded" "$T/nc.sa" 2>/dev/null
spin=$(awk '/;nocfi_spin( |;)/ { t += $NF } END { print t + 0 }' "$T/nc.gone.folded")
main=$(pct "$(awk '/;main;with_cfi;nocfi_spin( |;)/ { t += $NF } END { print t + 0 }' \
	"$T/nc.gone.folded")" "$spin")
cmp -s "$T/nc.with.folded" "$T/nc.gone.folded" && ge "$main" 99 && [ "$spin" -ge 200 ]
rc=$?
ok $rc "no FDE: the same stacks without the binary; $main% of $spin samples in nocfi_spin reach main (want >= 99)"
[ $rc = 0 ] || diff "$T/nc.with.folded" "$T/nc.gone.folded" | head -5 | sed 's/^/# /' >&2

done_testing
