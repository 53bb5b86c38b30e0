# SPDX-License-Identifier: MIT
# The one TAP library of tests/cli (sourced, bash; 2000-record-lib.sh adds
# the sa-record tests' helpers on top of it):
# the plan, ok / not ok, counted skips, skip-all with a reason when not root or
# BPF is unavailable, and awk helpers over folded stacks and the --top table.
# Paths come from SA_BUILD (default: $(pwd)/build).

SA_BUILD=${SA_BUILD:-$(pwd)/build}
SA_RECORD=$SA_BUILD/bin/sa-record
SA_REPORT=$SA_BUILD/bin/sa-report
SA_SAMPLES=$SA_BUILD/samples
SA_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# sa-report's symbol cache (docs/symcache.md): one for the test run, beside
# the build, never the user's own (a script that tests the cache sets its own)
export XDG_CACHE_HOME=${SA_TEST_CACHE:-$SA_BUILD/test-cache}

tap_n=0
tap_failed=0
tap_tmp=

# Under ASan/UBSan (make check-san), every report goes to a log of this
# script's own, and done_testing fails on any: a sanitizer abort after a
# program wrote its output fails the script even where a test ignores the
# exit status (a pipe, a command substitution).
if [ "${SA_SANITIZED:-0}" = 1 ]; then
	SA_SAN_LOGS=$(mktemp -d /tmp/sa-san-logs.XXXXXX)
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$SA_SAN_LOGS/asan"
	export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$SA_SAN_LOGS/ubsan"
fi

# san_logs_check: one test point failing on any sanitizer report (see above).
san_logs_check()
{
	local logs
	[ -n "${SA_SAN_LOGS:-}" ] || return 0
	logs=$(find "$SA_SAN_LOGS" -type f 2>/dev/null)
	if [ -n "$logs" ]; then
		tap_n=$((tap_n + 1))
		tap_failed=$((tap_failed + 1))
		echo "not ok $tap_n - sanitizer reports: $(echo "$logs" | wc -l)"
		for f in $logs; do head -n 30 "$f" | sed 's/^/#   /'; done
	fi
	rm -rf "$SA_SAN_LOGS"
}

# plan N: the number of tests this script runs, skips included.
plan()
{
	echo "1..$1"
}

# skip_all REASON: nothing can run here; prove counts the script as skipped.
# With CI=true a skip is a failure: make check installs everything the tests
# need, so a skip there is a missing install step or a broken probe.
skip_all()
{
	if [ "${CI:-}" = true ]; then
		echo "1..1"
		echo "not ok 1 - cannot run: $* (CI=true: a skip is a failure)"
		exit 1
	fi
	echo "1..0 # SKIP $*"
	exit 0
}

# ok STATUS DESCRIPTION: one test point; STATUS 0 passes.
ok()
{
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $tap_n - $2"
	else
		tap_failed=$((tap_failed + 1))
		echo "not ok $tap_n - $2"
		# prove shows stderr without -v: a CI log names the failed point
		echo "# $(basename "$0") failed point $tap_n: $2" >&2
	fi
}

# check DESCRIPTION COMMAND...: runs COMMAND and reports it as one test point.
check()
{
	local desc=$1
	shift
	"$@"
	ok $? "$desc"
}

# skip [N] REASON: N counted skips, one without N (tests that exist but
# cannot run here); with CI=true, N failures (see skip_all).
skip()
{
	local i k=1
	if [ $# -ge 2 ] && [[ $1 =~ ^[0-9]+$ ]]; then
		k=$1
		shift
	fi
	for ((i = 0; i < k; i++)); do
		if [ "${CI:-}" = true ]; then
			ok 1 "cannot run: $1 (CI=true: a skip is a failure)"
			continue
		fi
		tap_n=$((tap_n + 1))
		echo "ok $tap_n # SKIP $1"
	done
}

diag()
{
	echo "$*" | sed 's/^/# /'
}

# diag_file FILE [LINES]: the head of a file as TAP comments.
diag_file()
{
	[ -f "$1" ] && head -n "${2:-20}" "$1" | sed 's/^/#   /'
}

# done_testing: exit status for prove (failures are also in the TAP stream).
done_testing()
{
	san_logs_check
	[ "$tap_failed" -eq 0 ]
	exit
}

# require_root_bpf: skip the whole script unless sa-record can run here.
require_root_bpf()
{
	[ "$(id -u)" = 0 ] || skip_all "needs root (sa-record loads BPF programs)"
	[ -x "$SA_RECORD" ] || skip_all "sa-record not built ($SA_RECORD); run make"
	"$SA_RECORD" --help >/dev/null 2>&1 || skip_all "$SA_RECORD --help fails"
	command -v bpftool >/dev/null 2>&1 || skip_all "bpftool not installed (BPF probe)"
	bpftool prog list >/dev/null 2>&1 || skip_all "BPF unavailable (bpftool prog list fails)"
}

# require_report: skip the whole script unless sa-report is built.
require_report()
{
	[ -x "$SA_REPORT" ] || skip_all "sa-report not built ($SA_REPORT); run make"
	"$SA_REPORT" --help >/dev/null 2>&1 || skip_all "$SA_REPORT --help fails"
}

# require_samples NAME...: skip the whole script unless the samples are built.
require_samples()
{
	local s
	for s in "$@"; do
		[ -e "$SA_SAMPLES/$s" ] || skip_all "$SA_SAMPLES/$s not built; run make"
	done
}

# tmpdir: a fresh directory, removed at exit; prints its path into $tap_tmp.
tmpdir()
{
	tap_tmp=$(mktemp -d /tmp/sa-cli.XXXXXX)
	chmod 755 "$tap_tmp"
	# SA_TEST_KEEP=1: leave it, to read what a failing run wrote
	[ -n "${SA_TEST_KEEP-}" ] && echo "# kept: $tap_tmp" ||
		trap 'rm -rf "$tap_tmp"' EXIT
}

# ---- folded stacks: "comm;frame;...;leaf COUNT" ----------------------------

# folded_total FILE [COMM]: samples in FILE (of COMM's stacks when given).
folded_total()
{
	awk -v comm="${2-}" '
	{
		n = $NF; st = $0; sub(/ [0-9]+$/, "", st)
		split(st, f, ";")
		if (comm == "" || f[1] == comm) t += n
	}
	END { print t + 0 }' "$1"
}

# folded_with FILE COMM FRAME: samples of COMM (any, when empty) whose stack
# holds FRAME.
folded_with()
{
	awk -v comm="$2" -v fr="$3" '
	{
		n = $NF; st = $0; sub(/ [0-9]+$/, "", st)
		split(st, f, ";")
		if ((comm == "" || f[1] == comm) && index(";" st ";", ";" fr ";")) t += n
	}
	END { print t + 0 }' "$1"
}

# folded_path FILE COMM PATH: samples of COMM whose stack holds the frames
# PATH (";"-separated) consecutively, in that order.
folded_path()
{
	folded_with "$1" "$2" "$3"
}

# folded_leaf FILE COMM FRAME: samples of COMM whose leaf (last frame) is FRAME.
folded_leaf()
{
	awk -v comm="$2" -v fr="$3" '
	{
		n = $NF; st = $0; sub(/ [0-9]+$/, "", st)
		k = split(st, f, ";")
		if (f[1] == comm && f[k] == fr) t += n
	}
	END { print t + 0 }' "$1"
}

# folded_bad_lines FILE: lines that are not "stack COUNT".
folded_bad_lines()
{
	grep -cvE '^[^ ].* [0-9]+$' "$1"
}

# workload_measured WHAT FILE...: samples/workload's own measurement of its
# split, the mean over the outputs FILE... of its processes: WHAT is a leaf
# (sa_leaf_a, sa_leaf_b, sa_leaf_c: its measured share), helper
# (sa_shared_helper's total) or inner (sa_helper_inner's: the helper's
# total less its self). Empty when no FILE has it.
workload_measured()
{
	local what=$1
	shift
	awk -v w="$what" '
	$1 == "workload:" && $2 == "leaf" && $3 == w { t += $(NF - 2); n++ }
	$1 == "workload:" && $3 == "sa_shared_helper" && w == "helper" { t += $5; n++ }
	$1 == "workload:" && $3 == "sa_shared_helper" && w == "inner" { t += $5 - $8; n++ }
	END { if (n) printf "%.2f\n", t / n }' "$@"
}

# pct PART WHOLE: PART as a percentage of WHOLE, two decimals.
pct()
{
	awk -v p="$1" -v w="$2" 'BEGIN { printf "%.2f", w ? 100 * p / w : 0 }'
}

# within A B TOL: |A - B| <= TOL (decimals allowed).
within()
{
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'
}

# ge A B: A >= B (decimals allowed).
ge()
{
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'
}

# ---- sa-report --top: "SELF SELF% TOTAL TOTAL% FUNCTION" --------------------

# top_field FILE FUNCTION COLUMN: COLUMN (self, self%, total, total%) of
# FUNCTION's row; empty when the function has no row.
top_field()
{
	awk -v fn="$2" -v col="$3" '
	/^#/ || $1 == "SELF" { next }
	{
		name = $0
		sub(/^ *[0-9.]+ +[0-9.]+% +[0-9.]+ +[0-9.]+% +/, "", name)
		sub(/^\[k\] /, "", name) # a kernel function
		if (name != fn) next
		v = col == "self" ? $1 : col == "self%" ? $2 : col == "total" ? $3 : $4
		sub(/%$/, "", v)
		print v
		exit
	}' "$1"
}

# ---- perf beside BPF programs -------------------------------------------------

# perf_no_bpf [SECONDS]: wait (at most SECONDS, default 30) until no BPF
# program is loaded, then return 0; else print the loaded ones and return 1.
# Debian's perf 6.1 aborts on this kernel ("assertion failed at
# util/build-id.c:1010", "stack smashing detected") in every `perf record`
# or `perf script` started while any BPF program is loaded, sa-record's or
# another tool's; a perf record started before keeps working when one loads
# later. A script calls this before starting perf, so a recorder an earlier
# script left behind, or another user's, gives this message and not perf's
# abort.
perf_no_bpf()
{
	local t=$((${1:-30} * 10)) progs
	while :; do
		progs=$(bpftool prog show 2>/dev/null | awk '/^[0-9]+:/ { print $2, $4 }')
		[ -z "$progs" ] && return 0
		[ "$t" -le 0 ] && break
		sleep 0.1
		t=$((t - 1))
	done
	echo "BPF programs loaded (perf 6.1 aborts beside them):" $progs
	return 1
}
