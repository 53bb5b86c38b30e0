#!/bin/bash
# SPDX-License-Identifier: MIT
# cache.sh - the kernel matrix's cache: the guests' root as an ext4 image
# (root.list) and each kernel of kernels.list with its initramfs, all from
# Debian's archive through apt (mmdebstrap, the host's own apt sources'
# archive; the suites go to mmdebstrap's roots only, never to the host's
# sources). Built once, then reused: prints the cache directory.
#
# Where: outside the tree, ${SA_KERNEL_CACHE:-/var/cache/sa-kernels}/KEY,
# KEY a hash of the two lists and this script. A build/ cache would be
# fetched again (about 300 MB, minutes) after each `make clean` and once per
# worktree; a key from the lists builds a new cache when they change, so a
# stale one is never used. The directory is root's and no one else may
# write it; a symbolic link or a directory someone else owns is refused, so
# that no user can plant one under it (a shared SA_KERNEL_CACHE like /tmp).
# usage: cache.sh (as root; prints DIR; DIR/versions lists NAME PACKAGE VERSION)
set -u
here=$(cd "$(dirname "$0")" && pwd)
base=${SA_KERNEL_CACHE:-/var/cache/sa-kernels}
key=$(cat "$here/kernels.list" "$here/root.list" "$here/cache.sh" "$here/kernel-hook.sh" "$here/guest-init" | sha256sum | cut -c1-16)
dir=$base/$key

die()
{
	echo "check-kernels: $*" >&2
	[ -n "${tmp:-}" ] && [ -f "$tmp/build.log" ] && tail -n 20 "$tmp/build.log" >&2
	exit 1
}

# safe_dir DIR: DIR is a directory of ours that no one else may write,
# created (0755) if missing; a symbolic link is refused, never followed.
safe_dir()
{
	local owner mode
	[ -L "$1" ] && die "$1 is a symbolic link: not using it as the kernel cache"
	[ -d "$1" ] || mkdir -m 0755 "$1" || die "cannot create $1"
	[ -L "$1" ] || [ ! -d "$1" ] && die "$1 is not a directory"
	read -r owner mode < <(stat -c '%u %a' "$1")
	[ "$owner" = "$(id -u)" ] || die "$1 belongs to uid $owner: not using it"
	((8#$mode & 8#022)) && die "$1 may be written by others (mode $mode): not using it"
	return 0
}

# uri SUITE: the archive the host's apt takes Debian from (its security
# archive for a -security suite)
uri()
{
	local label=Debian
	case $1 in *-security) label=Debian-Security ;; esac
	apt-get indextargets --format '$(REPO_URI)' 'Created-By: Packages' "Label: $label" |
		sort -u | head -n 1
}

# sources SUITE,SUITE...: mmdebstrap's source lines for those suites
sources()
{
	local s u
	for s in ${1//,/ }; do
		u=$(uri "$s")
		[ -n "$u" ] || die "the host's apt has no Debian archive for $s"
		echo "deb $u $s main"
	done
}

# mmdeb SUITES OUT INCLUDES [MMDEBSTRAP OPTIONS]: a minbase root of SUITES
# with INCLUDES into OUT
mmdeb()
{
	local suites=$1 out=$2 inc=$3 src
	shift 3
	src=$(sources "$suites") || exit 1
	nice -n 10 mmdebstrap --quiet --variant=minbase --include="$inc" "$@" \
		--aptopt='Acquire::Retries "3"' "${suites%%,*}" "$out" - <<<"$src" \
		>>"$tmp/build.log" 2>&1
}

# kernel NAME SUITES PACKAGE: NAME's vmlinuz and initrd, from a root that
# has initramfs-tools; its exact package and version into versions
kernel()
{
	local name=$1 r=$tmp/k-$1 img ver
	mmdeb "$2" "$r" initramfs-tools --customize-hook="'$here/kernel-hook.sh' \"\$1\" '$3'" || die "mmdebstrap of kernel $name failed"
	img=$(cd "$r/boot" && ls vmlinuz-* 2>/dev/null)
	[ "$(echo "$img" | wc -w)" = 1 ] || die "kernel $name: not one /boot/vmlinuz-* but '$img'"
	ver=${img#vmlinuz-}
	img="linux-image-$ver $(dpkg-query --admindir="$r/var/lib/dpkg" -W -f '${Version}' "linux-image-$ver")"
	cp "$r/boot/vmlinuz-$ver" "$tmp/vmlinuz-$name" && cp "$r/boot/initrd.img-$ver" "$tmp/initrd-$name" ||
		die "kernel $name: no /boot/vmlinuz-$ver or initrd.img-$ver"
	echo "$name $img" >>"$tmp/versions"
	rm -rf "$r"
}

[ "$(id -u)" = 0 ] || die "building the kernel cache needs root (mmdebstrap, mke2fs of a root)"
safe_dir "$base"
[ -f "$dir/versions" ] && [ ! -L "$dir" ] && {
	echo "$dir"
	exit 0
}
exec 9>"$base/.lock"
flock 9
[ -f "$dir/versions" ] && [ ! -L "$dir" ] && {
	echo "$dir"
	exit 0
}
# what a build that was killed left (builds hold the lock)
rm -rf "$base"/.build.*
tmp=$(mktemp -d "$base/.build.XXXXXX") || die "cannot create a directory in $base"
trap 'rm -rf "$tmp"' EXIT
echo "  CACHE    $dir (cold: mmdebstrap of the root and $(grep -vc '^#' "$here/kernels.list") kernels)" >&2
while read -r name suites pkg; do
	case $name in '#'* | '') continue ;; esac
	kernel "$name" "$suites" "$pkg"
done <"$here/kernels.list"
{
	read -r suite
	read -r pkgs
} < <(grep -v '^#' "$here/root.list")
mmdeb "$suite" "$tmp/root" "${pkgs// /,}" || die "mmdebstrap of the root failed "
rm -rf "$tmp/root/var/cache/apt/"* "$tmp/root/var/lib/apt/lists/"*
install -m 0755 "$here/guest-init" "$tmp/root/sbin/sa-guest-init"
echo "root $(dpkg-query --admindir="$tmp/root/var/lib/dpkg" -W -f '${Package} ${Version}' python3.11)" \
	>>"$tmp/versions"
mke2fs -q -t ext4 -L sa-root -d "$tmp/root" "$tmp/root.img" 1G >>"$tmp/build.log" 2>&1 ||
	die "mke2fs of the root failed "
rm -rf "$tmp/root" "$tmp/build.log"
chmod 0755 "$tmp"
mv -T "$tmp" "$dir" || die "cannot move the cache into place at $dir"
trap - EXIT
echo "$dir"
