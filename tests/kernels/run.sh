#!/bin/bash
# SPDX-License-Identifier: MIT
# run.sh BUILD - make check-kernels (tests/kernels/README.md): the smoke set
# (smoke.sh) on the host's own kernel, then in a qemu guest (TCG) of each
# Debian kernel of the cache (cache.sh), all at once; prints a line
# per kernel and one table, kernel by feature, writes it to
# BUILD/kernels/table.md and into docs/deploy.md between its markers (when
# a result changed), and fails if any feature did not come out as
# expect.list declares. Console logs: BUILD/kernels/NAME.console.
# SA_KERNELS="host 6.12" runs only those (host: this kernel); the docs
# are written only by a run of all.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
B=$(cd "${1:-$src/build}" && pwd)
K=$B/kernels
features="cmd pid all dwarf auto offcpu python rotate"
# A guest's limit: the smoke set took up to 17 minutes in a guest on this
# 2-CPU host at load 13-36; past 30 it has hung (qemu is killed, the row
# fails).
guest_limit=${SA_GUEST_LIMIT:-1800}

die()
{
	echo "check-kernels: $*" >&2
	exit 1
}

for f in "$B/static/sa-record" "$B/static/sa-report" "$B/samples/workload" \
	"$B/samples/workload-nofp" "$B/samples/offcpu"; do
	[ -x "$f" ] || die "missing $f (make static all)"
done
for c in qemu-system-x86_64 mmdebstrap mke2fs; do
	command -v $c >/dev/null || die "missing $c (make deps-test installs it)"
done
cache=$(bash "$here/cache.sh") || exit 1

# the second disk: binaries, workloads and scripts, the same for every guest
rm -rf "$K"
mkdir -p "$K/payload/bin" "$K/payload/samples" || die "cannot create $K"
cp "$B/static/sa-record" "$B/static/sa-report" "$K/payload/bin/" &&
	cp "$B/samples/workload" "$B/samples/workload-nofp" "$B/samples/offcpu" "$K/payload/samples/" &&
	cp "$src/tests/cli/lib.sh" "$src/tests/tools/pysplit.py" "$here/smoke.sh" "$here/expect.list" \
		"$here/init.sh" "$K/payload/" || die "cannot fill $K/payload"
mke2fs -q -t ext4 -L sa-payload -d "$K/payload" "$K/payload.img" 64M >"$K/mke2fs.log" 2>&1 ||
	die "mke2fs of the payload failed: $(cat "$K/mke2fs.log")"

# row NAME PACKAGE LOG SECONDS: the table's row from LOG's result lines,
# appended to rows; fails counts the kernels with a failed feature
row()
{
	local f r line="| $1 | $2 |"
	for f in $features; do
		r=$(awk -v f="$f" '$1 == "result" && $2 == f { print $3 }' "$3")
		line="$line ${r:-FAIL} |"
	done
	rows+=("$line")
	bad=$(awk -v n="$features" 'BEGIN { k = split(n, a, " ") }
		$1 == "result" { seen++; if ($3 == "FAIL") f++ }
		END { print f + (k - seen) }' "$3")
	printf '  KERNEL   %-6s %-52s %3s s  %s\n' "$1" "$2" "$4" \
		"$([ "$bad" = 0 ] && echo ok || echo "FAILED ($bad of 8)")" >&2
	[ "$bad" = 0 ] || {
		local show=$3
		[ -f "${3%.log}.console" ] && show=${3%.log}.console
		echo "== $1: the tail of $show:" >&2
		tail -n 30 "$show" | tr -d '\r' >&2
		fails=$((fails + 1))
	}
}

rows=()
fails=0
if [ -z "${SA_KERNELS:-}" ] || [[ " $SA_KERNELS " == *" host "* ]]; then
	mkdir -p "$K/host"
	t0=$(date +%s)
	nice -n 10 bash "$K/payload/smoke.sh" "$K/payload" "$K/host" >"$K/host.log" 2>&1
	row "host" "$(uname -r) (this machine)" "$K/host.log" $(($(date +%s) - t0))
fi
# boot NAME: the smoke set in a guest of kernel NAME; its console in
# $K/NAME.console, qemu's exit status in $K/NAME.rc. The guest's clocks
# follow the instructions it executes (-icount, so one TCG thread), not the
# host's time: with thread=multi a vCPU thread the host's other work
# descheduled (load 9 here) showed as CPU time of whatever guest thread ran,
# and the workloads' own measure of their split was off by up to 20 points.
# So the same shares come out however loaded the host is; sleep=off skips
# idle time. -smp 1: with -icount (one TCG thread for all vCPUs) 5.10
# and 6.1 hang bringing up a second CPU (4 boots of 4; 6.12 boots). tsc=reliable: a TSC marked unstable left the thread CPU clock
# with jiffy resolution. -cpu qemu64,-cx16: this qemu's TCG (Debian 12's
# 7.2) broke 6.12 at its first cmpxchg16b (a double fault with garbage in
# EFLAGS, 3 boots of 3); without CX16 the kernel does without.
boot()
{
	local name=$1
	date +%s >"$K/$name.t0"
	timeout -k 10 "$guest_limit" nice -n 10 qemu-system-x86_64 \
		-accel tcg,thread=single -icount shift=3,sleep=off,align=off -smp 1 -m 2G \
		-cpu qemu64,-cx16 -nographic -no-reboot -monitor none -serial "file:$K/$name.console" \
		-kernel "$cache/vmlinuz-$name" -initrd "$cache/initrd-$name" \
		-append "root=/dev/vda rw console=ttyS0 init=/sbin/sa-guest-init quiet panic=-1 tsc=reliable" \
		-drive "file=$cache/root.img,if=virtio,format=raw,snapshot=on" \
		-drive "file=$K/payload.img,if=virtio,format=raw,readonly=on" \
		</dev/null >"$K/$name.qemu.log" 2>&1
	echo $? >"$K/$name.rc"
	date +%s >"$K/$name.t1"
}

# every guest at once: each is one host thread, its results independent of
# the host's load
while read -r name pkg ver; do
	[ "$name" = root ] && continue
	[ -n "${SA_KERNELS:-}" ] && [[ " $SA_KERNELS " != *" $name "* ]] && continue
	boot "$name" &
done <"$cache/versions"
wait
while read -r name pkg ver; do
	[ "$name" = root ] && continue
	[ -n "${SA_KERNELS:-}" ] && [[ " $SA_KERNELS " != *" $name "* ]] && continue
	rc=$(cat "$K/$name.rc")
	t0=$(cat "$K/$name.t0")
	tr -d '\r' <"$K/$name.console" | sed -n 's/^SA-SMOKE //p' >"$K/$name.log"
	[ $rc = 0 ] || echo "qemu exit $rc$([ $rc = 124 ] && echo ": killed after $guest_limit s")" >>"$K/$name.log"
	grep -q '^end$' "$K/$name.log" || echo "the guest did not finish the smoke set" >>"$K/$name.log"
	row "$name" "$pkg $ver" "$K/$name.log" $(($(cat "$K/$name.t1") - t0))
done <"$cache/versions"

{
	echo "| kernel | package | ${features// / | } |"
	echo "|---|---|$(echo "$features" | sed 's/[a-z]*/---|/g; s/ //g')"
	printf '%s\n' "${rows[@]}"
} >"$K/table.md"
sed 's/^/   /' "$K/table.md" >&2
[ "${SA_KERNELS:-}" = "" ] && bash "$here/docs-table.sh" "$K/table.md" "$src/docs/deploy.md"
[ $fails = 0 ]
