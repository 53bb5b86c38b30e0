#!/bin/bash
# SPDX-License-Identifier: MIT
# The build only builds: a non-root user builds a copy of the tree with
# `make` while a test package is missing (TEST_PKGS names one that does not
# exist), and make runs no dpkg, dpkg-query or apt-get (each is a wrapper
# that logs its call); `make deps-test` then says which package is missing
# and that root installs it, `make deps` says it of a missing build
# package, and `make demo` and `make check` run those first.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (to build as another user)"
command -v runuser >/dev/null 2>&1 || skip_all "runuser missing (util-linux)"
id nobody >/dev/null 2>&1 || skip_all "no user nobody"
tmpdir
T=$tap_tmp

plan 8

mkdir "$T/tree"
(cd "$SA_SRC" && git ls-files -z 2>/dev/null | xargs -0 cp --parents -t "$T/tree") ||
	(cd "$SA_SRC" && tar --exclude=./build --exclude=./.git -cf - . | tar -C "$T/tree" -xf -)
chown -R nobody "$T/tree"
# a fresh make: not the variables of the make that runs this script (make
# check-san passes B=build/san and SA_SANITIZED=1 in MAKEFLAGS and in the
# environment, where B ?= build takes it), and a user's PATH, without the
# sbin directories (Debian's bpftool is in /usr/sbin)
USER_PATH=/usr/local/bin:/usr/bin:/bin
as_nobody()
{
	(cd "$T/tree" && runuser -u nobody -- env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u B \
		-u SA_SANITIZED -u CFLAGS -u EXTRA_CFLAGS -u EXTRA_LDFLAGS PATH=$USER_PATH "$@")
}
NOPKG=sa-no-such-test-package
# dpkg and apt as wrappers that log each call, first on the PATH
mkdir "$T/fakebin"
for c in dpkg dpkg-query apt-get apt; do
	printf '#!/bin/sh\necho "%s $*" >>%s/calls\nexit 1\n' "$c" "$T" >"$T/fakebin/$c"
	chmod 755 "$T/fakebin/$c"
done
: >"$T/calls"
chmod 666 "$T/calls"
chmod 755 "$T"

as_nobody PATH="$T/fakebin:$USER_PATH" make -j2 TEST_PKGS=$NOPKG >"$T/make.out" 2>&1
rc=$?
ok $rc "non-root make with a test package missing: exit 0"
[ $rc -eq 0 ] || tail -n 15 "$T/make.out" | sed "s/^/#   /"
ok $([ -x "$T/tree/build/bin/sa-record" ] && [ -x "$T/tree/build/bin/sa-report" ] &&
	[ -x "$T/tree/build/samples/workload" ]; echo $?) "it built sa-record, sa-report and the samples"
ok $([ ! -s "$T/calls" ] && ! grep -q 'APT\|apt-get' "$T/make.out"; echo $?) \
	"make ran no dpkg, dpkg-query or apt-get"
diag_file "$T/calls" 5

as_nobody make deps-test TEST_PKGS=$NOPKG >"$T/dt.out" 2>&1
rc=$?
ok $([ $rc -ne 0 ] && grep -q "missing Debian packages: *$NOPKG.*run as root" "$T/dt.out"; echo $?) \
	"make deps-test as non-root names the missing test package"
diag_file "$T/dt.out" 3

as_nobody make deps EXTRA_BUILD_PKGS=sa-no-such-build-package >"$T/bp.out" 2>&1
rc=$?
ok $([ $rc -ne 0 ] && grep -q "make deps: missing Debian packages: *sa-no-such-build-package" \
	"$T/bp.out"; echo $?) "make deps names a missing build package"
ok $(! grep -q "$NOPKG" "$T/bp.out"; echo $?) "make deps checks no test package"

as_nobody make demo EXTRA_BUILD_PKGS=sa-no-such-build-package >"$T/demo.out" 2>&1
rc=$?
ok $([ $rc -ne 0 ] && grep -q "make deps: missing Debian packages: *sa-no-such-build-package" \
	"$T/demo.out"; echo $?) "make demo runs make deps first"
diag_file "$T/demo.out" 5

as_nobody make check TEST_PKGS=$NOPKG >"$T/check.out" 2>&1
rc=$?
ok $([ $rc -ne 0 ] && grep -q "make deps-test: missing Debian packages: *$NOPKG" \
	"$T/check.out"; echo $?) "make check runs make deps-test first"
diag_file "$T/check.out" 5

done_testing
