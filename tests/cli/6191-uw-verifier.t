#!/bin/bash
# SPDX-License-Identifier: MIT
# The in-kernel unwinder's share of the BPF verifier's work at start
# (docs/unwinding.md "The verifier, and the builds, cut"): the sampling
# program of --call-graph auto may make the verifier check at most 3 times
# the instructions fp's does (verified_insns in the recorder's fdinfo).
# It was 7.4 times (67,328 against 9,099) while uw_find_range()'s bound
# was a constant the verifier followed through every halving (that bound
# put back: 60,957 against 7,840, 7.78x, and this fails); 2.39 times
# after (18,703 against 7,840; kernel 6.18, clang 14). The count depends on
# the kernel and the compiler, not on the CPU or the host's load: no
# chance enters the bound.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_samples workload workload-nofp
tmpdir
T=$tap_tmp
S=$SA_SAMPLES

plan 4

"$S/workload-nofp" -t 1 -d 30 >/dev/null &
wp=$!

# verified MODE: the instructions the verifier checked in MODE's sampling
# (perf_event, prog_type 7) program, read while the recorder runs
verified() {
	local tp rp n=
	timeout -s KILL 25 "$SA_RECORD" -q -F 99 --call-graph "$1" -p "$wp" --duration 4 \
		-o "$T/$1.sa" 2>"$T/$1.err" &
	tp=$!
	for _ in $(seq 40); do
		sleep 0.25
		rp=$(pgrep -P "$tp" -x sa-record || echo "$tp")
		n=$(cat /proc/"$rp"/fdinfo/* 2>/dev/null | awk '$1 == "prog_type:" { t = $2 }
			$1 == "verified_insns:" && t == 7 { print $2; exit }')
		[ -n "$n" ] && break
	done
	wait "$tp"
	echo "${n:-0}"
}

fp=$(verified fp)
auto=$(verified auto)
kill "$wp" 2>/dev/null
[ "$fp" -gt 0 ]
ok $? "fp's sampling program: $fp instructions verified (want > 0)"
[ "$auto" -gt 0 ]
ok $? "auto's sampling program: $auto instructions verified (want > 0)"
[ "$auto" -gt "$fp" ]
ok $? "auto's ($auto) checks more than fp's ($fp): its unwinder is in it"
[ "$auto" -le $((3 * fp)) ]
ok $? "auto's verifier work is $auto, at most 3 x fp's $fp ($(awk -v a="$auto" -v f="$fp" 'BEGIN { printf "%.2f", f ? a / f : 0 }')x)"

done_testing
