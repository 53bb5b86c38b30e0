#!/bin/bash
# SPDX-License-Identifier: MIT
# in-root.sh - runs COMMAND as root chrooted into ROOT, with /proc, /sys,
# /sys/fs/bpf (sa-record's BPF) and /dev mounted, and apt's .debs and lists
# bound to CACHE/debs/SUITE and CACHE/lists/SUITE (mkroot.sh). The mounts
# live in a mount namespace of this script's own (unshare, private): the host
# never sees one, each is undone on the way out, and the kernel drops any
# left when the namespace ends, on failure and Ctrl-C alike. Processes still
# running in ROOT when COMMAND returns are killed, by pid.
#
# usage: in-root.sh ROOT CACHE SUITE COMMAND [ARG...]   exits with COMMAND's status
set -u

if [ "${SA_IN_ROOT_NS:-}" != 1 ]; then
	exec unshare --mount --propagation private -- env SA_IN_ROOT_NS=1 bash "$0" "$@"
fi
unset SA_IN_ROOT_NS
root=$(realpath -e "$1") || exit 125
cache=$2 suite=$3
shift 3
mounted=()

# kill_left: what COMMAND left running in the root (a daemon an install started)
kill_left()
{
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill -KILL "${p#/proc/}" 2>/dev/null
	done
}

undo()
{
	local i
	kill_left
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -R "${mounted[i]}" 2>/dev/null || umount -R -l "${mounted[i]}"
	done
	mounted=()
}
trap undo EXIT
# undo, then die of the same signal: a caller (bash) that sees its child
# killed by SIGINT stops too, where an exit status would let it go on
for sig in INT TERM HUP; do
	trap "undo; trap - $sig; kill -$sig \$\$" $sig
done

# mnt ARGS... TARGET: mount, and remember TARGET for undo
mnt()
{
	mount "$@" || exit 125
	mounted+=("${*: -1}")
}

mnt -t proc proc "$root/proc"
mnt -t sysfs sysfs "$root/sys"
mnt -t bpf bpf "$root/sys/fs/bpf"
mnt --rbind /dev "$root/dev"
mkdir -p "$cache/debs/$suite" "$cache/lists/$suite" || exit 125
mnt --bind "$cache/debs/$suite" "$root/var/cache/apt/archives"
mnt --bind "$cache/lists/$suite" "$root/var/lib/apt/lists"
# nothing of the caller's environment (make's MAKEFLAGS, CI, B) reaches COMMAND
chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/root LANG=C.UTF-8 TERM=dumb "$@"
rc=$?
undo
exit $rc
