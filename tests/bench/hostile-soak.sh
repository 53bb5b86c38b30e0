#!/bin/bash
# SPDX-License-Identifier: MIT
# hostile-soak.sh - the always-on recorder under every hostile load of
# issue 29 at once (docs/reliability.md, "Hostile soak"): `sa-record -q -a
# -F 19 --rotate R --keep K` (docs/systemd's form, with short files) while,
# all the time, a process execs itself in a loop (5110's), programs run
# with a 5,000-byte function name, from a 4,600-byte path and with a
# 5,000-byte command line (5150's), 20 processes have perf maps that are
# hard links to one big file, SIGUSR1, SIGUSR2 and SIGPIPE reach the
# recorder every few seconds, and every STORM_EVERY seconds 1,000 busy
# threads spin for STORM_SECS. With SOAK_FULL=1 its tmpfs is filled for a
# while half way (a full-disk episode). At the end: the recorder is alive,
# SIGTERM ends it with exit 0 within 2 s, every file kept reads with `sa-report
# --info` and finished cleanly, and its RSS stays flat: its floor over
# the second half within 20% of its floor over the first (after its
# first sample), its RSS at the end within 20% of its peak over the first
# half. Not in `make check`.
# Prints the numbers and exits 0 when every check holds, else 1. Root.
#   SOAK_SECONDS (default 600), ROTATE (30s), KEEP (8), STORM_EVERY (60),
#   STORM_SECS (5), STORM_THREADS (1000), SOAK_FULL (0), SOAK_MIB (256),
#   EXEC_NICE (0: the self-exec loop's nice value; at -20 a loop stalled
#   the shared 2-CPU VM for seconds).
# Usage: tests/bench/hostile-soak.sh [BUILD_DIR]
set -u
B=$(cd "${1:-build}" && pwd)
COMMIT=$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null)
REC=$B/bin/sa-record
REP=$B/bin/sa-report
SOAK_SECONDS=${SOAK_SECONDS:-600} ROTATE=${ROTATE:-30s} KEEP=${KEEP:-8}
STORM_EVERY=${STORM_EVERY:-60} STORM_SECS=${STORM_SECS:-5} STORM_THREADS=${STORM_THREADS:-1000}
SOAK_FULL=${SOAK_FULL:-0} SOAK_MIB=${SOAK_MIB:-256} EXEC_NICE=${EXEC_NICE:-0}
[ -x "$REC" ] && [ -x "$REP" ] || { echo "hostile-soak: $B/bin not built" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "hostile-soak: needs root" >&2; exit 1; }
T=$(mktemp -d /tmp/sa-soak.XXXXXX)
OUT=$T/out
mkdir "$OUT" "$T/deep"
mount -t tmpfs -o size=${SOAK_MIB}m sa-soak "$OUT" || { echo "hostile-soak: no tmpfs" >&2; exit 1; }
MAPS=()
cleanup()
{
	kill $(jobs -p) 2>/dev/null
	pkill -KILL -P $$ 2>/dev/null
	sleep 0.5
	rm -f "${MAPS[@]}"
	umount "$OUT" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
end=$(($(date +%s) + SOAK_SECONDS))

# --- the workloads: tests/tools/wl-*.c, as 5110, 5150 and 5200 build them ---
TOOLS=$(cd "$(dirname "$0")/../tools" && pwd)
long=f$(printf 'x%.0s' $(seq 1 4999))
cc -O2 -fno-omit-frame-pointer -static -o "$T/selfexec" "$TOOLS/wl-selfexec.c" &&
	cc -O1 -fno-omit-frame-pointer -DSPIN_FN="$long" -o "$T/longfn" "$TOOLS/wl-spin.c" &&
	cc -O1 -fno-omit-frame-pointer -DSPIN_FN=soak_leaf -o "$T/spin" "$TOOLS/wl-spin.c" &&
	cc -O2 -fno-omit-frame-pointer -pthread -o "$T/storm" "$TOOLS/wl-storm.c" ||
	{ echo "hostile-soak: the workloads do not compile" >&2; exit 1; }
(
	cd "$T/deep" || exit 1
	for i in $(seq 10 29); do
		d=$(printf 'd%.0s' $(seq 1 230))$i
		mkdir "$d" && cd "$d" || exit 1
	done
	cp "$T/spin" prog
) || { echo "hostile-soak: no nested directories" >&2; exit 1; }
arg=$(printf 'y%.0s' $(seq 1 5000))
# one big perf map (200,000 symbols, ~9 MB), hard-linked as 20 processes' maps
awk 'BEGIN { for (i = 0; i < 200000; i++) printf "%x 10 soak_jit_symbol_number_%d\n", 0x7f0000000000 + i * 16, i }' >"$T/big.map"

# This shell and its loops run at nice -20 so that the watch is not late;
# what they start runs at nice 0 (at0: the recorder, the storm) or 10 (at10:
# the user's steady loads; the host is shared).
renice -n -20 $$ >/dev/null || { echo "hostile-soak: cannot renice" >&2; exit 1; }
at0() { nice -n 20 "$@"; }
at10() { nice -n 30 "$@"; }

# --- the recorder, as docs/systemd runs it but with short files ---
cd "$OUT" || exit 1
nice -n 20 "$REC" -q -a -F 19 --rotate "$ROTATE" --keep "$KEEP" -o "$OUT/host.sa" 2>"$T/rec.err" &
rec=$!
cd "$T" || exit 1
for i in $(seq 100); do ls "$OUT"/host*.sa >/dev/null 2>&1 && break; sleep 0.2; done

# each loop runs until $end
until_end() { [ "$(date +%s)" -lt $end ]; }
selfexec_loop() { nice -n $((EXEC_NICE + 20)) "$T/selfexec" $end >"$T/execs"; }
longfn_loop() { while until_end; do at10 "$T/longfn" 2; done; }
deep_loop()
{
	cd "$T/deep" || return
	for i in $(seq 10 29); do cd "$(printf 'd%.0s' $(seq 1 230))$i" || return; done
	while until_end; do at10 env ./prog 2; done
}
cmdline_loop() { while until_end; do at10 "$T/spin" 2 "$arg"; done; }
signal_loop() { while until_end && kill -0 $rec; do for s in USR1 USR2 PIPE; do kill -$s $rec; sleep 1; done; done; }
storm_loop()
{
	local n=0
	while until_end; do
		sleep "$STORM_EVERY"
		until_end || break
		echo $(($(date +%s) - end + SOAK_SECONDS)) >>"$T/storm_times"
		at0 timeout -s KILL $((STORM_SECS + 30)) "$T/storm" "$STORM_THREADS" "$STORM_SECS" >/dev/null
		n=$((n + 1))
		echo $n >"$T/storms"
	done
}
maps_loop()
{
	local pids=() p
	for i in $(seq 20); do
		nice -n 39 "$T/spin" $((end - $(date +%s))) &
		p=$!
		pids+=($p)
		ln -f "$T/big.map" "/tmp/perf-$p.map" && echo "/tmp/perf-$p.map" >>"$T/maps"
	done
	wait "${pids[@]}"
}
selfexec_loop &
longfn_loop &
deep_loop &
cmdline_loop &
signal_loop &
storm_loop &
maps_loop &
for i in $(seq 100); do [ "$({ wc -l <"$T/maps"; } 2>/dev/null)" = 20 ] && break; sleep 0.1; done
mapfile -t MAPS <"$T/maps"
echo "hostile-soak: recorder $rec; ${#MAPS[@]} perf maps linked to one $(stat -c %s "$T/big.map")-byte file; until $(date -u -d @$end +%T) UTC"

# --- watch: RSS every 10 s; a full disk half way with SOAK_FULL=1 ---
t0=$(date +%s)
half=$((t0 + SOAK_SECONDS / 2))
full_done=0
: >"$T/rss"
while until_end && kill -0 $rec 2>/dev/null; do
	now=$(date +%s)
	# RSS, then its anonymous, file and shared-memory parts (KiB), and the
	# host's processes and tasks (the host is shared: -a describes them all)
	echo "$((now - t0)) $(awk '/^(VmRSS|RssAnon|RssFile|RssShmem)/ { printf "%s ", $2 }' /proc/$rec/status)" \
		"$(find /proc -maxdepth 1 -name '[0-9]*' 2>/dev/null | wc -l) $(cut -d' ' -f4 /proc/loadavg | cut -d/ -f2)" >>"$T/rss"
	if [ "$SOAK_FULL" = 1 ] && [ $full_done = 0 ] && [ $now -ge $half ]; then
		fallocate -l $((SOAK_MIB * 1024 * 1024)) "$OUT/filler" 2>/dev/null ||
			dd if=/dev/zero of="$OUT/filler" bs=1M 2>/dev/null
		echo "hostile-soak: disk full at $((now - t0)) s: $(df -k "$OUT" | awk 'NR == 2 { print $4 }') KiB free"
		sleep 20
		rm -f "$OUT/filler"
		full_done=1
	fi
	sleep 10
done
alive=0
kill -0 $rec 2>/dev/null && alive=1
s=${EPOCHREALTIME/./}
kill -TERM $rec 2>/dev/null
wait $rec
rc=$?
term_ms=$(((${EPOCHREALTIME/./} - s) / 1000))
wait
fail=0
echo "== $REC -q -a -F 19 --rotate $ROTATE --keep $KEEP, $SOAK_SECONDS s ($(date -u +%FT%TZ), commit ${COMMIT:-?})"
echo "   alive at the end: $alive; exit after SIGTERM: $rc, in $term_ms ms (bound: 2000)"
[ $alive = 1 ] && [ $rc = 0 ] && [ $term_ms -le 2000 ] || fail=1
echo "   loads: $(cat "$T/execs" 2>/dev/null || echo ?) self-execs of one pid ($(($(cat "$T/execs" 2>/dev/null || echo 0) / SOAK_SECONDS))/s), $(cat "$T/storms" 2>/dev/null || echo 0) storms of $STORM_THREADS threads, ${#MAPS[@]} hard-linked perf maps"
n=0 bad=0
for f in "$OUT"/host*.sa; do
	[ -e "$f" ] || continue
	n=$((n + 1))
	if ! "$REP" --info "$f" >"$T/info" 2>&1 || ! grep -q '^  finished: *cleanly$' "$T/info"; then
		bad=$((bad + 1))
		echo "   NOT CLEAN: $(basename "$f"): $(grep -m1 -E 'finished|sa-report' "$T/info")"
	fi
done
echo "   files kept: $n, read and finished cleanly: $((n - bad)); sizes: $(du -sh "$OUT" | cut -f1)"
[ $n -gt 0 ] && [ $bad = 0 ] || fail=1
echo "   stderr: $(grep -c . "$T/rec.err") lines; $(sort "$T/rec.err" | uniq -c | sort -rn | head -3 | tr -s ' ' | tr '\n' '|')"
read -r first_max second_max last first_min second_min < <(awk -v h=$((SOAK_SECONDS / 2)) '
	$1 < h && $2 > a { a = $2 } $1 >= h && $2 > b { b = $2 } { l = $2 }
	NR > 1 && $1 < h && (c == "" || $2 < c) { c = $2 } $1 >= h && (d == "" || $2 < d) { d = $2 }
	END { print a + 0, b + 0, l + 0, c + 0, d + 0 }' "$T/rss")
echo "   RSS (s: KiB anon file shmem; host processes tasks, every 10 s): $(awk '{ printf "%s: %s %s %s %s; %s %s, ", $1, $2, $3, $4, $5, $6, $7 }' "$T/rss")"
echo "   storms began at (s): $(tr '\n' ' ' <"$T/storm_times" 2>/dev/null)"
echo "   RSS: peak $first_max KiB over the first half, $second_max KiB over the second, $last KiB at the end ($(wc -l <"$T/rss") samples)"
echo "   RSS floor (lowest sample): $first_min KiB over the first half, $second_min KiB over the second"
# Flat: what stays (the floor) and the end within 20% of the first half.
# The first half's floor leaves out the first sample, taken as the
# recorder starts, before it has met the host's processes: 13,772 KiB at
# 0 s, then 17.9-20.0 MB (a 10-minute run of 2026-12-03 that failed on it
# with a second-half peak below the first half's).
# Single samples 5-14 MB over the rest come and go (a rotated file reads
# its perf maps again into one interval's chunk; a binary mapped while its
# symbols are read): peak against peak compares two of those.
[ "$second_min" -gt 0 ] && [ $((second_min * 100)) -le $((first_min * 120)) ] &&
	[ $((last * 100)) -le $((first_max * 120)) ] || fail=1
echo "   result: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
