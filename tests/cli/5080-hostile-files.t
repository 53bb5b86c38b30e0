#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# 5080-hostile-files.t - files that other users control (docs/security.md):
# perf maps planted for processes of user nobody (a FIFO, links to /dev/zero
# and to a root-only file, another user's file, a huge file) are refused and
# reported, and the recording ends on time; a crafted ELF with huge sections
# costs bounded time and memory; sa-report skips a FIFO and a device named
# as binaries.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_report
require_samples busy
tmpdir
T=$tap_tmp
DUMP=${SA_BUILD:-build}/tests/tools/sa-dump
[ -x "$DUMP" ] || skip_all "sa-dump not built ($DUMP)"
id nobody >/dev/null 2>&1 || skip_all "no user nobody"
plan 16

PIDS=()
PLANTS=()
cleanup()
{
	local p
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in "${PLANTS[@]}"; do rm -f "$p"; done
	rm -rf "$T"
}
trap cleanup EXIT

NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups --no-new-privs --)
# spin: a CPU-bound dash of user nobody; its pid in $SPIN.
spin()
{
	"${NOBODY[@]}" sh -c 'while :; do :; done' &
	SPIN=$!
	disown "$SPIN"
	PIDS+=("$SPIN")
}
now() { date +%s.%N; }
# elapsed START: seconds since START, 2 decimals.
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# Bounds: the stop (SIGINT to exit) within 20 s, the recorder's CPU time
# under 10 s (0.7-0.8 s on an idle host, 1.2-1.4 s at a load average of
# 195; a recorder that first burns 12 s of CPU fails it). Wall time to
# start sampling is the host's load, not checked (38 s at a load average
# of 60). Under ASan (make check-san), which reads tables and maps 3-5x
# slower: 45 s and 30 s. The failures they catch never end (a FIFO blocks
# open(), /dev/zero is read forever, 2 GiB sections parsed) and are killed
# at 120 s.
lim=20
cpulim=10
[ "${SA_SANITIZED:-0}" = 1 ] && { lim=45; cpulim=30; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# record_until_cpu OUT ERR ARGS...: sa-record ARGS -o OUT in the background
# until each of PIDS has run 0.3 s of CPU since sampling began (>= 29
# samples due at 99 Hz, none with chance e^-29), however loaded the host;
# then SIGINT. Sets rc, short (1: a process never got its 0.3 s), el_start
# (seconds to the file's name: sampling runs), el (SIGINT to exit), cpu
# (its CPU seconds) and rss (peak KiB).
record_until_cpu()
{
	local out=$1 err=$2 t0 w p
	shift 2
	declare -A tk0
	t0=$(now)
	python3 -c '
import resource, signal, subprocess, sys
p = subprocess.Popen(sys.argv[2:])
signal.signal(signal.SIGINT, lambda s, f: p.send_signal(signal.SIGINT))
rc = p.wait()
u = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%d %.2f %d\n" % (rc, u.ru_utime + u.ru_stime, u.ru_maxrss))' \
		"$T/rc" timeout -s KILL 120 "$SA_RECORD" "$@" -o "$out" 2>"$err" &
	w=$!
	for _ in $(seq 1200); do [ -e "$out" ] && break; sleep 0.1; done
	el_start=$(elapsed "$t0")
	for p in "${PIDS[@]}"; do tk0[$p]=$(ticks "$p"); done
	for _ in $(seq 600); do
		short=0
		for p in "${PIDS[@]}"; do
			[ $(($(ticks "$p") - tk0[$p])) -ge 30 ] || short=1
		done
		[ $short = 0 ] && break
		sleep 0.1
	done
	t0=$(now)
	kill -INT $w
	wait $w
	el=$(elapsed "$t0")
	read -r rc cpu rss <"$T/rc" || { rc=255; cpu=999; rss=; }
}

# ---- perf maps --------------------------------------------------------------
for k in fifo zero secret other huge good; do
	spin
	eval "pid_$k=$SPIN"
	PLANTS+=("/tmp/perf-$SPIN.map")
done
mkfifo "/tmp/perf-$pid_fifo.map" && chown nobody "/tmp/perf-$pid_fifo.map"
ln -s /dev/zero "/tmp/perf-$pid_zero.map"
printf '7f0000001000 100 SA_SECRET_SYM\n' >"$T/secret.map"
chmod 600 "$T/secret.map"
cp -p "$T/secret.map" "$T/control.map"
# relatime updates an atime older than the mtime: both files start there.
touch -a -d '2001-01-01' "$T/secret.map" "$T/control.map"
ln -s "$T/secret.map" "/tmp/perf-$pid_secret.map"
printf '7f0000002000 100 SA_OTHER_SYM\n' >"/tmp/perf-$pid_other.map"
chown 54321 "/tmp/perf-$pid_other.map"
truncate -s 1G "/tmp/perf-$pid_huge.map"
chown nobody "/tmp/perf-$pid_huge.map"
printf '7f0000003000 100 SA_GOOD_SYM\n' >"/tmp/perf-$pid_good.map"
chown nobody "/tmp/perf-$pid_good.map"

atime0=$(stat -c %X "$T/secret.map")
pids=$(IFS=,; echo "${PIDS[*]}")
# a map is read once its process is sampled: the recording runs until each
# of the six has run 0.3 s of CPU, however loaded the host (record_until_cpu)
record_until_cpu "$T/maps.sa" "$T/maps.err" -q -F 99 -p "$pids" --call-graph fp
[ $rc = 0 ] && [ $short = 0 ] && awk -v c="$cpu" -v e="$el" -v l=$lim -v cl=$cpulim \
	'BEGIN { exit !(e < l && c < cl) }'
ok $? "sa-record -p (6 processes with planted maps, each run 0.3 s): exit $rc ${el}s after SIGINT (< $lim), ${cpu}s of CPU (< $cpulim); sampling after ${el_start}s"
diag_file "$T/maps.err"
"$DUMP" "$T/maps.sa" >"$T/maps.dump" 2>&1
grep -q 'name=SA_GOOD_SYM' "$T/maps.dump"
ok $? "control: nobody's own perf map is read (JITSYM SA_GOOD_SYM)"
! grep -q 'SA_SECRET_SYM\|SA_OTHER_SYM' "$T/maps.dump"
ok $? "neither the root-only file nor another user's file is in the recording"
[ "$(stat -c %X "$T/secret.map")" = "$atime0" ]
ok $? "the root-only file was not read: atime still $(stat -c %x "$T/secret.map")"
cat "$T/control.map" >/dev/null
[ "$(stat -c %X "$T/control.map")" != "$atime0" ]
ok $? "control: reading a file of the same age moves its atime (so the check can fail)"
for k in fifo:FIFO zero:'symbolic link' secret:'symbolic link' other:'owned by uid 54321' \
	huge:'over the cap'; do
	p=$(eval echo "\$pid_${k%%:*}")
	n=$(grep -c "perf-$p.map of pid $p: .*${k#*:}" "$T/maps.err")
	[ "$n" = 1 ]
	ok $? "${k%%:*}: reported once on stderr ($n): $(grep "perf-$p.map" "$T/maps.err" | head -n 1)"
done
for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
PIDS=()

# ---- a crafted ELF ----------------------------------------------------------
mkdir "$T/elf" && chmod 755 "$T/elf"
printf 'int main(void){ for (;;) __asm__ volatile(""); }\n' >"$T/elf/spin.c"
cc -O1 -o "$T/elf/spin" "$T/elf/spin.c" || skip_all "no C compiler"
# Section sizes and offsets point into a sparse 6 GiB tail: .symtab and
# .strtab of 2 GiB each, .eh_frame of 2 GiB, .eh_frame_hdr claiming 2^28
# FDEs. The loader reads none of them; the recorder must not either.
python3 - "$T/elf/spin" <<'PY' || skip_all "crafting the ELF failed"
import struct, sys
path = sys.argv[1]
b = bytearray(open(path, 'rb').read())
shoff, = struct.unpack_from('<Q', b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
def shdr(i):
	return shoff + i * shentsize
so = struct.unpack_from('<Q', b, shdr(shstrndx) + 0x18)[0]
def name(i):
	n = struct.unpack_from('<I', b, shdr(i))[0]
	return bytes(b[so + n:b.index(0, so + n)]).decode()
big, base = 2 << 30, 1 << 30
for i in range(shnum):
	nm, o = name(i), shdr(i)
	if nm in ('.symtab', '.strtab', '.eh_frame', '.dynsym', '.dynstr'):
		struct.pack_into('<QQ', b, o + 0x18, base, big)
		if nm in ('.symtab', '.dynsym'):
			struct.pack_into('<Q', b, o + 0x38, 24)
	if nm == '.eh_frame_hdr':
		off = struct.unpack_from('<Q', b, o + 0x18)[0]
		struct.pack_into('<BBBBII', b, off, 1, 0x1b, 0x03, 0x3b, 0, 1 << 28)
open(path, 'wb').write(b)
PY
# a sparse tail of symbols (st_value 1, type FUNC) for the .symtab region
python3 - "$T/elf/spin" <<'PY'
import sys
f = open(sys.argv[1], 'r+b')
f.seek(1 << 30)
f.write(b'\x01\x00\x00\x00\x12\x00\x01\x00' + b'\x01' + b'\x00' * 15)
f.truncate(6 << 30)
PY
chmod 755 "$T/elf/spin"
"${NOBODY[@]}" "$T/elf/spin" &
PIDS+=($!)
disown $!
sleep 0.2
record_until_cpu "$T/elf.sa" "$T/elf.err" -q -F 99 -p "${PIDS[0]}" --call-graph auto
# Unbounded, it read 2 GiB sections and was killed (2.1 GiB RSS).
[ $rc = 0 ] && [ $short = 0 ] && awk -v c="$cpu" -v e="$el" -v l=$lim -v cl=$cpulim \
	'BEGIN { exit !(e < l && c < cl) }'
ok $? "sa-record -p --call-graph auto of the crafted ELF: exit $rc ${el}s after SIGINT (< $lim), ${cpu}s of CPU (< $cpulim); sampling after ${el_start}s"
diag_file "$T/elf.err"
# sa-record peaks at 14-60 MiB here; 400 MiB means a section was loaded.
[ -n "$rss" ] && [ "$rss" -lt 409600 ]
ok $? "its peak RSS is ${rss} KiB (< 400 MiB)"
"$DUMP" "$T/elf.sa" >"$T/elf.dump"
# its samples: counted by stack id (COUNT), or sent as stack copies where
# the crafted binary gives the in-kernel unwinder no table (USTACK*)
grep -q '^END' "$T/elf.dump" && grep -qE "^(COUNT|USTACK|USTACK_SPARSE) pid=${PIDS[0]} " "$T/elf.dump"
ok $? "the recording is complete (END record) and has samples of the crafted binary's process"
for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
PIDS=()

# ---- sa-report on binaries that are a FIFO and a device ---------------------
mkdir "$T/rep"
cp "$SA_SAMPLES/busy" "$T/rep/busy"
"$SA_RECORD" -q -F 199 --no-embed-symbols -o "$T/rep/r.sa" -- "$T/rep/busy" -d 0.5 >/dev/null
grep -q "$T/rep/busy" <("$DUMP" "$T/rep/r.sa")
ok $? "the recording names $T/rep/busy as a mapped binary"
for kind in fifo dev; do
	rm -f "$T/rep/busy"
	if [ $kind = fifo ]; then mkfifo "$T/rep/busy"; else mknod "$T/rep/busy" c 1 5; fi
	t0=$(now)
	timeout -s KILL 30 "$SA_REPORT" "$T/rep/r.sa" >"$T/rep/$kind.folded" 2>"$T/rep/$kind.err"
	rc=$?
	el=$(elapsed "$t0")
	[ $rc = 0 ] && grep -q "busy.*\(FIFO\|device\)" "$T/rep/$kind.err"
	ok $? "sa-report with the binary replaced by a $kind: exit $rc in ${el}s, warns: $(head -n 1 "$T/rep/$kind.err")"
done

done_testing
