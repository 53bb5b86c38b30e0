# SPDX-License-Identifier: MIT
# Shared helpers for the end-to-end TAP scripts in tests/cli (sourced, bash):
# the plan, ok / not ok, counted skips, skip-all with a reason when not root or
# BPF is unavailable, and awk helpers over folded stacks and the --top table.
# Paths come from SA_BUILD (default: $(pwd)/build).

SA_BUILD=${SA_BUILD:-$(pwd)/build}
SA_RECORD=$SA_BUILD/bin/sa-record
SA_REPORT=$SA_BUILD/bin/sa-report
SA_SAMPLES=$SA_BUILD/samples
SA_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

tap_n=0
tap_failed=0
tap_tmp=

# plan N: the number of tests this script runs, skips included.
plan()
{
	echo "1..$1"
}

# skip_all REASON: nothing can run here; prove counts the script as skipped.
skip_all()
{
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

# skip N REASON: N counted skips (tests that exist but cannot run here).
skip()
{
	local i
	for ((i = 0; i < $1; i++)); do
		tap_n=$((tap_n + 1))
		echo "ok $tap_n # SKIP $2"
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

# has_option TOOL OPTION: TOOL's --help mentions OPTION (a feature probe).
has_option()
{
	"$1" --help 2>&1 | grep -q -e "$2"
}

# tmpdir: a fresh directory, removed at exit; prints its path into $tap_tmp.
tmpdir()
{
	tap_tmp=$(mktemp -d /tmp/sa-cli.XXXXXX)
	chmod 755 "$tap_tmp"
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

# folded_with FILE COMM FRAME: samples of COMM whose stack holds FRAME.
folded_with()
{
	awk -v comm="$2" -v fr="$3" '
	{
		n = $NF; st = $0; sub(/ [0-9]+$/, "", st)
		split(st, f, ";")
		if (f[1] == comm && index(";" st ";", ";" fr ";")) t += n
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
		if (name != fn) next
		v = col == "self" ? $1 : col == "self%" ? $2 : col == "total" ? $3 : $4
		sub(/%$/, "", v)
		print v
		exit
	}' "$1"
}

# feature OPTION: sa-record knows OPTION (its --help lists it, or it accepts
# "OPTION --help" where an unknown option is a usage error), or SA_CLI_FORCE=1
# asks to run the tests of a feature anyway (to try a work in progress).
feature()
{
	[ "${SA_CLI_FORCE:-0}" = 1 ] || has_option "$SA_RECORD" "$1" ||
		"$SA_RECORD" "$1" --help >/dev/null 2>&1
}
