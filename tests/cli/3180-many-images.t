#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-report on a recording of many short-lived process images of a few
# binaries (gen-synthetic -I: 3,000 images of 30 of this host's libraries,
# one stack copy each, as a fork loop recorded with --call-graph dwarf):
# each binary is opened once, not once per image, so memory and mappings
# stay bounded, and --pid, --comm and --time spare the unwinding of what
# they leave out (docs/unwinding.md).
. "$(dirname "$0")/lib.sh"

require_report
GEN=$SA_BUILD/tests/bench/gen-synthetic
[ -x "$GEN" ] || skip_all "gen-synthetic not built"
[ -x /usr/bin/time ] || skip_all "/usr/bin/time not installed"
tmpdir
T=$tap_tmp
R=$SA_REPORT
N=3000

"$GEN" -I $N -b 30 -i 10 -l -o "$T/img.sa" >"$T/bins" 2>"$T/gen.err" ||
	skip_all "gen-synthetic -I: $(head -1 "$T/gen.err")"
plan 9

# peak RSS and the most libc mappings seen while it runs (polled every 10 ms:
# a poll can miss a peak, never invent one)
/usr/bin/time -f %M -o "$T/rss" "$R" -q -o "$T/img.folded" "$T/img.sa" 2>"$T/err" &
tp=$!
libc=0
while kill -0 $tp 2>/dev/null; do
	for c in $(cat /proc/$tp/task/*/children 2>/dev/null); do
		l=$({ grep -c '/libc\.so' "/proc/$c/maps"; } 2>/dev/null) || l=0
		[ "${l:-0}" -gt $libc ] && libc=$l
	done
	sleep 0.01
done
wait $tp
ok $? "sa-report exits 0"
ok $([ "$(folded_total "$T/img.folded")" = $N ]; echo $?) "every image's sample reported"
# the walks go through the binaries: more than the leaf on average
frames=$(awk '{ c = $NF; f += (split($0, a, ";") - 1) * c; n += c }
	END { printf "%d", n ? 100 * f / n : 0 }' "$T/img.folded")
diag "frames per stack x100: $frames; peak RSS $(cat "$T/rss") KiB; libc mappings $libc"
ok $([ "$frames" -ge 200 ]; echo $?) "stacks unwound through the binaries (>= 2 frames on average)"
# A Dwfl per image mapped libc once per image (~3,000 here, 20,075 mappings in
# all at 10,000 images, past which mmap fails) and peaked at 8 GB for 10,000
# images. Once per binary: one mapping of libc and its debug file, and the
# last four images' Dwfls kept for libdwfl's walk.
ok $([ "$libc" -le 16 ]; echo $?) "libc mapped at most 16 times at once ($libc)"
# measured 71 MiB for these 3,000 images; before: 4.9 GB. ASan's shadow
# memory and quarantine (256 MiB by default) add their own.
lim=256
[ "${SA_SANITIZED:-0}" = 1 ] && lim=1024
ok $([ "$(cat "$T/rss")" -lt $((lim * 1024)) ]; echo $?) "peak RSS under $lim MiB ($(cat "$T/rss") KiB)"

# Filters cut the unwinding, not only the output: with every binary replaced
# by one of another build id, each walk stops at its leaf and sa-report
# counts the walks that stopped there, once per binary on stderr.
while read -r p; do
	mkdir -p "$T/fs$(dirname "$p")"
	cp /bin/true "$T/fs$p"
done <"$T/bins"
walks() {
	"$R" --symfs "$T/fs" -o /dev/null "$@" "$T/img.sa" 2>&1 |
		sed -n 's/.*not found: \([0-9]*\) stack walks stop in it.*/\1/p' | awk '{ s += $1 } END { print s + 0 }'
}
ok $([ "$(walks)" = $N ]; echo $?) "without filters: every image walked"
# image i is pid 2000 + i, comm img(i % 97), in interval i / 300
ok $([ "$(walks --pid 2000)" = 1 ]; echo $?) "--pid: only that image walked"
ok $([ "$(walks --comm img5)" = 31 ]; echo $?) "--comm: only its 31 images walked"
ok $([ "$(walks --time 0-1)" = 300 ]; echo $?) "--time: only the first interval's 300 images walked"
done_testing
