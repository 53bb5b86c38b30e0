#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (records -a)
# sa-test: statistical
# `make static`'s sa-record needs nothing from the host but the kernel: ldd
# finds no dynamic section, and in an empty root (a chroot holding only the
# binary, a fresh /proc and a fresh sysfs) it records the whole system with
# --call-graph fp and dwarf while samples/workload runs outside; the files,
# reported outside, finished cleanly and show the workload's known split.
# `make static`'s sa-report, also without a dynamic section, reads each file
# in a root of its own and writes the same folded stacks, byte for byte, as
# the plain build's sa-report given only what the file holds.
# Under make check-san the plain build's binaries are tested (ASan cannot
# link statically).
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples workload
B=$SA_BUILD
[ "${SA_SANITIZED:-0}" = 1 ] && B=$(dirname "$SA_BUILD")
STATIC=$B/static/sa-record
STATIC_REPORT=$B/static/sa-report
PLAIN_REPORT=$B/bin/sa-report # not the sanitized one: ASan needs /proc
[ -x "$STATIC" ] || skip_all "$STATIC not built; run make static"
[ -x "$STATIC_REPORT" ] || skip_all "$STATIC_REPORT not built; run make static"
command -v chroot >/dev/null 2>&1 || skip_all "chroot missing (coreutils)"
T=$(mktemp -d /tmp/sa-cli.XXXXXX)
R=$T/root
cleanup()
{
	umount "$R/proc" "$R/sys" 2>/dev/null
	# never remove a tree that still has something mounted in it
	grep -q " $R/" /proc/mounts || rm -rf "$T"
}
trap cleanup EXIT

plan 14

out=$(ldd "$STATIC" 2>&1)
echo "$out" | grep -q "not a dynamic executable"
rc=$?
ok $rc "ldd $STATIC: not a dynamic executable"
[ $rc -eq 0 ] || diag "$out"

out=$(ldd "$STATIC_REPORT" 2>&1)
echo "$out" | grep -q "not a dynamic executable"
rc=$?
ok $rc "ldd $STATIC_REPORT: not a dynamic executable"
[ $rc -eq 0 ] || diag "$out"

mkdir -p "$R/proc" "$R/sys" "$R/out" "$T/empty" && cp "$STATIC" "$R/sa-record" &&
	mount -t proc proc "$R/proc" && mount -t sysfs sysfs "$R/sys"
ok $? "an empty root with only the binary, /proc and /sys"
diag "the root holds: $(cd "$R" && find . -maxdepth 1 | sort | tr '\n' ' ')"

# record_in_root MODE: 4 test points. The workload runs -c 3 (3 s of its
# own CPU, about 3,000 samples at 999 Hz); the recorder stops when it ends.
record_in_root()
{
	local mode=$1 rc tot got main
	"$SA_SAMPLES/workload" -c 3 >"$T/w-$mode.out" &
	local w=$!
	chroot "$R" /sa-record -q -a -F 999 --call-graph "$mode" -o "/out/$mode.sa" \
		--duration 60 2>"$T/rec-$mode.err" &
	local r=$!
	wait $w
	kill -INT $r
	wait $r
	rc=$?
	ok $rc "sa-record -a --call-graph $mode in the empty root exits 0 (got $rc)"
	[ $rc -eq 0 ] || diag_file "$T/rec-$mode.err"

	"$SA_REPORT" --info "$R/out/$mode.sa" 2>&1 | grep -q "finished: *cleanly"
	ok $? "$mode: the file, read outside the root, finished cleanly"

	"$SA_REPORT" -o "$T/$mode.folded" "$R/out/$mode.sa" 2>"$T/rep-$mode.err"
	tot=$(folded_total "$T/$mode.folded" workload)
	got=$(pct "$(folded_with "$T/$mode.folded" workload sa_leaf_a)" "$tot")
	main=$(pct "$(folded_with "$T/$mode.folded" workload main)" "$tot")
	# about 3,000 samples (>= 1,500 below fails first): the binomial sd of
	# a 60% share is 0.89 points at 3,000 and 1.26 at 1,500; the leaf sits
	# up to 0.3 points low (samples/README.md), so +-5 is 3.7 sd on that
	# side at 1,500: P = 1.1e-4 per mode, 2.2e-4 for both
	ge "$tot" 1500 && within "$got" 60 5
	ok $? "$mode: sa_leaf_a holds $got% of $tot workload samples (want 60 +- 5, >= 1500)"
	# a failure rate, not a share: <= 0.1% miss main normally (test 3000)
	ge "$main" 99
	ok $? "$mode: $main% of workload stacks reach main (want >= 99)"
}

# report_in_root MODE: the static sa-report alone in a root ($S) against the
# plain one in a root ($D) holding it and, under /ld, the libraries ldd names,
# run through the loader: neither root has a file at a path the recording
# names (outside, sa-report would still find the host's binaries, e.g. by
# build id under /usr/lib/debug). No symbol cache, no debuginfod.
report_in_root()
{
	local mode=$1
	cp "$R/out/$mode.sa" "$S/$mode.sa" && cp "$R/out/$mode.sa" "$D/$mode.sa"
	env -u DEBUGINFOD_URLS chroot "$S" /sa-report --no-cache -o "/$mode.folded" \
		"/$mode.sa" 2>"$T/srep-$mode.err" &&
		env -u DEBUGINFOD_URLS chroot "$D" /ld/$(basename "$LDSO") --library-path /ld \
			/sa-report --no-cache -o "/$mode.folded" "/$mode.sa" 2>"$T/prep-$mode.err" &&
		[ -s "$D/$mode.folded" ] && cmp -s "$S/$mode.folded" "$D/$mode.folded"
	ok $? "$mode: the static sa-report in a root folds the file as the plain one does"
	diag "$(wc -l <"$D/$mode.folded") folded lines"
	diag_file "$T/srep-$mode.err" 3
	diag_file "$T/prep-$mode.err" 3
	diff "$S/$mode.folded" "$D/$mode.folded" | head -5 | sed "s/^/#   /"
}

S=$T/sroot
D=$T/droot
LDSO=$(ldd "$PLAIN_REPORT" | grep -o '/[^ ]*ld-linux[^ ]*' | head -1)
mkdir -p "$S" "$D/ld" && cp "$STATIC_REPORT" "$S/sa-report" && cp "$PLAIN_REPORT" "$D/sa-report" &&
	for lib in $(ldd "$PLAIN_REPORT" | grep -o '/[^ ]*'); do cp -L "$lib" "$D/ld/"; done

record_in_root fp
record_in_root dwarf
report_in_root fp
report_in_root dwarf

# Outside, --lines reads debug files: Debian's libc6-dbg compresses its
# sections, which the static sa-report inflates with zlib, the plain one
# with ISA-L. A pipe of coreutils spends its time in glibc (read, write,
# memcmp); coreutils ship no debug info, so each line is glibc's. Same
# stacks, byte for byte, and at least 10 with a glibc line (about 50 here).
"$SA_RECORD" -q -F 999 -o "$T/sort.sa" -- sh -c 'seq 1500000 | sort -r >/dev/null' 2>"$T/sort.err"
for r in "$STATIC_REPORT" "$PLAIN_REPORT"; do
	env -u DEBUGINFOD_URLS "$r" --no-cache --lines -o "$T/$(basename "$(dirname "$r")").folded" \
		"$T/sort.sa" 2>/dev/null
done
libc=$(grep -E '^(seq|sort);' "$T/bin.folded" | grep -cE '\.[cS]:[0-9]+')
cmp -s "$T/static.folded" "$T/bin.folded" && ge "$libc" 10
ok $? "--lines: the static and the plain sa-report agree ($libc stacks with glibc lines)"
diff "$T/static.folded" "$T/bin.folded" | head -5 | sed "s/^/#   /"

done_testing
