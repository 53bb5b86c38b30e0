#!/bin/bash
# SPDX-License-Identifier: MIT
# mkroot.sh - a minbase Debian root as a tarball, made once by mmdebstrap
# from Debian's archive and kept in CACHE: a test unpacks a fresh copy of it
# for each run (fresh-root.t). The .debs mmdebstrap fetched and apt's lists
# are kept too (CACHE/debs/SUITE, CACHE/lists/SUITE), which in-root.sh binds
# into the root, so that a second run downloads nothing. The host's apt
# sources are never touched. The tarball's name holds the suite and the
# packages added; remove CACHE/roots to make it again.
#
# usage: mkroot.sh CACHE SUITE [PACKAGE...]   prints the tarball's path
set -eu

cache=$1 suite=$2
shift 2
pkgs=$(printf '%s\n' "$@" | sort -u | paste -sd, -)
tar=$cache/roots/$suite-minbase${pkgs:+-${pkgs//,/-}}.tar
debs=$cache/debs/$suite
lists=$cache/lists/$suite
mkdir -p "$cache/roots" "$debs" "$lists"
# one maker at a time; a second waits, then finds the tarball made
exec 9>"$cache/roots/.lock"
flock 9
if [ ! -s "$tar" ]; then
	part=$cache/roots/.part-$$.tar
	trap 'rm -f "$part"' EXIT
	# essential/unlink kept: the Essential packages' .debs stay for sync-out
	mmdebstrap --quiet --variant=minbase ${pkgs:+--include="$pkgs"} --skip=essential/unlink \
		--setup-hook='mkdir -p "$1"/var/cache/apt/archives' \
		--setup-hook="sync-in $debs /var/cache/apt/archives/" \
		--customize-hook="sync-out /var/cache/apt/archives $debs" \
		--customize-hook="sync-out /var/lib/apt/lists $lists" \
		"$suite" "$part" </dev/null >&2
	mv "$part" "$tar"
fi
echo "$tar"
