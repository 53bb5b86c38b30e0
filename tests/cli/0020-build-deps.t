#!/bin/bash
# SPDX-License-Identifier: MIT
# The build needs only its build packages: a non-root user builds a copy of
# the tree with `make` while a test package is missing (TEST_PKGS names one
# that does not exist), with no apt step; `make deps-test` then says which
# package is missing and that root installs it, and a missing build package
# stops `make` with the same sentence instead of a compiler error.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (to build as another user)"
command -v runuser >/dev/null 2>&1 || skip_all "runuser missing (util-linux)"
id nobody >/dev/null 2>&1 || skip_all "no user nobody"
tmpdir
T=$tap_tmp

plan 6

mkdir "$T/tree"
(cd "$SA_SRC" && git ls-files -z 2>/dev/null | xargs -0 cp --parents -t "$T/tree") ||
	(cd "$SA_SRC" && tar --exclude=./build --exclude=./.git -cf - . | tar -C "$T/tree" -xf -)
chown -R nobody "$T/tree"
# a fresh make: not the variables of the make that runs this script (make
# check-san passes B=build/san and SA_SANITIZED=1 in MAKEFLAGS and in the
# environment, where B ?= build takes it)
as_nobody()
{
	(cd "$T/tree" && runuser -u nobody -- env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u B \
		-u SA_SANITIZED -u CFLAGS -u EXTRA_CFLAGS -u EXTRA_LDFLAGS "$@")
}
NOPKG=sa-no-such-test-package

as_nobody make -j2 TEST_PKGS=$NOPKG >"$T/make.out" 2>&1
rc=$?
ok $rc "non-root make with a test package missing: exit 0"
[ $rc -eq 0 ] || diag_file "$T/make.out" 40
ok $([ -x "$T/tree/build/bin/sa-record" ] && [ -x "$T/tree/build/bin/sa-report" ] &&
	[ -x "$T/tree/build/samples/workload" ]; echo $?) "it built sa-record, sa-report and the samples"
ok $(! grep -q 'APT\|apt-get' "$T/make.out"; echo $?) "no apt step"

as_nobody make deps-test TEST_PKGS=$NOPKG >"$T/dt.out" 2>&1
rc=$?
ok $([ $rc -ne 0 ] && grep -q "missing Debian packages: *$NOPKG.*run as root" "$T/dt.out"; echo $?) \
	"make deps-test as non-root names the missing test package"
diag_file "$T/dt.out" 3

as_nobody make EXTRA_BUILD_PKGS=sa-no-such-build-package >"$T/bp.out" 2>&1
rc=$?
ok $([ $rc -ne 0 ] && grep -q "make deps: missing Debian packages: *sa-no-such-build-package" \
	"$T/bp.out"; echo $?) "a missing build package stops make with its name"
ok $(! grep -q "$NOPKG" "$T/bp.out"; echo $?) "make checks no test package"

done_testing
