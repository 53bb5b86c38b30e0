#!/bin/sh
# SPDX-License-Identifier: MIT
# kernel-hook.sh ROOT META[/RELEASE] - mmdebstrap's customize hook of
# cache.sh: installs in ROOT the kernel image package that apt's candidate
# of the metapackage META (from RELEASE when given) depends on, by its own
# name. Not the metapackage itself: an archive mirror may lack it (a 404 for
# bullseye-security's linux-image-cloud-amd64 seen here) while serving the
# image it names.
set -eu
root=$1 meta=${2%%/*} rel=
case $2 in */*) rel=${2#*/} ;; esac
img=$(chroot "$root" apt-cache ${rel:+-t "$rel"} depends "$meta" |
	awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
[ -n "$img" ] || { echo "kernel-hook: $2 names no linux-image package" >&2; exit 1; }
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get -q -y ${rel:+-t "$rel"} \
	install --no-install-recommends "$img"
