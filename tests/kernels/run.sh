#!/bin/bash
# SPDX-License-Identifier: MIT
# run.sh BUILD - make check-kernels (tests/kernels/README.md): the smoke set
# (smoke.sh) on the host's own kernel, then in a qemu guest (TCG) of each
# Debian kernel of the cache (cache.sh), one after another (two at once
# are no faster: the workloads run for an amount of CPU time and the guests
# share the same CPUs); prints a line
# per kernel and one table, kernel by feature, writes it to
# BUILD/kernels/table.md and into docs/deploy.md between its markers (when
# a result changed), and fails if any feature did not come out as
# expect.list declares. Console logs: BUILD/kernels/NAME.console.
# SA_KERNELS=NAME... limits the guests (host: the host alone).
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
B=$(cd "${1:-$src/build}" && pwd)
K=$B/kernels
features="cmd pid all dwarf auto offcpu python rotate"
# A guest's limit: the smoke set takes 1-3 minutes under TCG on a loaded
# 2-CPU host; past 15 it has hung (qemu is killed, the row fails).
guest_limit=${SA_GUEST_LIMIT:-900}

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

# row NAME PACKAGE LOG SECONDS: the table's row from LOG's result lines
row()
{
	local f r line="| $1 | $2 |"
	for f in $features; do
		r=$(awk -v f="$f" '$1 == "result" && $2 == f { print $3 }' "$3")
		line="$line ${r:-FAIL} |"
	done
	echo "$line"
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
if [ "${SA_KERNELS:-}" != none ]; then
	mkdir -p "$K/host"
	t0=$(date +%s)
	nice -n 10 bash "$K/payload/smoke.sh" "$K/payload" "$K/host" >"$K/host.log" 2>&1
	rows+=("$(row "host" "$(uname -r) (this machine)" "$K/host.log" $(($(date +%s) - t0)))")
fi
while read -r name pkg ver; do
	[ "$name" = root ] && continue
	[ -n "${SA_KERNELS:-}" ] && [[ " $SA_KERNELS " != *" $name "* ]] && continue
	t0=$(date +%s)
	timeout -k 10 "$guest_limit" nice -n 10 qemu-system-x86_64 -accel tcg,thread=multi -smp 2 -m 2G \
		-nographic -no-reboot -monitor none -serial "file:$K/$name.console" \
		-kernel "$cache/vmlinuz-$name" -initrd "$cache/initrd-$name" \
		-append "root=/dev/vda rw console=ttyS0 init=/sbin/sa-guest-init quiet panic=-1" \
		-drive "file=$cache/root.img,if=virtio,format=raw,snapshot=on" \
		-drive "file=$K/payload.img,if=virtio,format=raw,readonly=on" \
		</dev/null >"$K/$name.qemu.log" 2>&1
	rc=$?
	tr -d '\r' <"$K/$name.console" | sed -n 's/^SA-SMOKE //p' >"$K/$name.log"
	[ $rc = 0 ] || echo "qemu exit $rc$([ $rc = 124 ] && echo ": killed after $guest_limit s")" >>"$K/$name.log"
	grep -q '^end$' "$K/$name.log" || echo "the guest did not finish the smoke set" >>"$K/$name.log"
	rows+=("$(row "$name" "$pkg $ver" "$K/$name.log" $(($(date +%s) - t0)))")
done <"$cache/versions"

{
	echo "| kernel | package | ${features// / | } |"
	echo "|---|---|$(echo "$features" | sed 's/[a-z]*/---|/g; s/ //g')"
	printf '%s\n' "${rows[@]}"
} >"$K/table.md"
sed 's/^/   /' "$K/table.md" >&2
[ "${SA_KERNELS:-}" = "" ] && bash "$here/docs-table.sh" "$K/table.md" "$src/docs/deploy.md"
[ $fails = 0 ]
