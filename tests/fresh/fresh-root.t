#!/bin/bash
# SPDX-License-Identifier: MIT
# fresh-root.t - README's first command on a fresh Debian 12: in a minbase
# bookworm root with make and git added (mkroot.sh), a clone of this tree's
# HEAD (what is committed, not the work tree) runs `make demo` as root,
# which installs BUILD_PKGS itself; it passes only if the demo recorded the
# workload live and wrote the folded stacks, the table and the SVG
# (tests/demo.sh). In the same root a user who is not root then runs
# `make deps`, which must name nothing missing, `make` and `make static`.
# A package missing from BUILD_PKGS fails one of these.
#
# The root is unpacked fresh for each run; the minbase tarball and apt's
# .debs and lists stay in SA_FRESH_CACHE (default /var/cache/sa-fresh), so a
# second run downloads nothing (it says how many .debs it fetched: 191
# cold, 0 warm). On 2 CPUs at load 10 to 16 (2026-12-07): cold 3.7 to 5.3
# min (mmdebstrap 47-107 s), warm 3.3 min.
. "$(dirname "$0")/../cli/lib.sh"

FRESH=$SA_SRC/tests/fresh
SUITE=bookworm
CACHE=${SA_FRESH_CACHE:-/var/cache/sa-fresh}
USER_NAME=sa-fresh

[ "$(id -u)" = 0 ] || skip_all "needs root (chroot, mounts)"
for c in mmdebstrap unshare chroot git flock; do
	command -v $c >/dev/null 2>&1 || skip_all "$c missing (make deps-test installs it)"
done
rev=$(git -C "$SA_SRC" rev-parse --verify -q HEAD) || skip_all "$SA_SRC is not a git clone"
# The root lives on a tmpfs in this script's own mount namespace: unpacking
# it, dpkg and removing it cost no disk I/O (removing 1.5 GB of files took
# 50 s), and the caller never sees the mount, which goes with the script.
# SA_TEST_KEEP=1 keeps the root on disk instead, to read it after.
caller_mounts=/proc/$PPID/mountinfo
if [ -z "${SA_TEST_KEEP-}" ] && [ "${SA_FRESH_NS:-}" != 1 ]; then
	exec unshare --mount --propagation private -- env SA_FRESH_NS=1 bash "$0" "$@"
fi
tmpdir
T=$tap_tmp
R=$T/root
mkdir "$R" || exit 1
if [ -z "${SA_TEST_KEEP-}" ]; then
	mount -t tmpfs -o size=8g,mode=755 sa-fresh "$R" || exit 1
	# no rm -rf across a mount, should one have been left after all
	trap 'umount -l "$R"; rm -rf --one-file-system "$T"' EXIT
fi
plan 11

# step NAME COMMAND...: runs COMMAND with its output in $T/NAME.log, and
# says how long it took
step()
{
	local name=$1 t0=$SECONDS rc
	shift
	"$@" >"$T/$name.log" 2>&1
	rc=$?
	diag "$name: $((SECONDS - t0)) s, exit $rc"
	return $rc
}

# diag_tail FILE [LINES]: the end of a log, where make says what failed
diag_tail()
{
	[ -f "$1" ] && tail -n "${2:-20}" "$1" | sed 's/^/#   /'
}

# in_root COMMAND...: COMMAND as root in the fresh root (in-root.sh)
in_root()
{
	bash "$FRESH/in-root.sh" "$R" "$CACHE" "$SUITE" "$@"
}

mkdir -p "$CACHE"
# one run at a time: two apt runs on the same .debs would fight for its lock
exec 8>"$CACHE/.run.lock"
flock 8
debs_before=$(find "$CACHE/debs/$SUITE" -name '*.deb' 2>/dev/null | wc -l)

step mkroot bash "$FRESH/mkroot.sh" "$CACHE" "$SUITE" make git
rc=$?
tar=$(tail -n 1 "$T/mkroot.log")
ok $rc "a minbase $SUITE root with make and git ($tar)"
[ $rc = 0 ] || diag_tail "$T/mkroot.log" 30

# dpkg need not sync what it unpacks in a root thrown away after the run
# (mmdebstrap does the same while it builds one)
tar -C "$R" -xf "$tar" && cp /etc/resolv.conf "$R/etc/resolv.conf" &&
	echo force-unsafe-io >"$R/etc/dpkg/dpkg.cfg.d/sa-fresh-unsafe-io" &&
	git clone -q --no-checkout "$SA_SRC" "$R/src/sa" &&
	git -C "$R/src/sa" fetch -q "$SA_SRC" "$rev" &&
	git -C "$R/src/sa" checkout -q --detach FETCH_HEAD
ok $([ "$(git -C "$R/src/sa" rev-parse HEAD 2>/dev/null)" = "$rev" ]; echo $?) \
	"unpacked fresh, with a clone of HEAD ($rev) in /src/sa"

# README's first command, as root
step demo in_root sh -c 'cd /src/sa && make demo'
rc=$?
ok $rc "make demo as root in the fresh root: exit 0"
[ $rc = 0 ] || diag_tail "$T/demo.log" 25
D=$R/src/sa/build/demo
ok $([ -s "$D/workload.sa" ] && grep -q '^demo: recording' "$T/demo.log"; echo $?) \
	"it recorded the workload live (not the recording shipped in the tree)"
grep '^demo: no live' "$T/demo.log" | sed 's/^/# /'
ok $(grep -q 'sa_leaf_a.* [0-9][0-9]*$' "$D/workload.folded" 2>/dev/null; echo $?) \
	"it wrote the folded stacks ($(cat "$D/workload.folded" 2>/dev/null | wc -l) lines)"
ok $(grep -q 'sa_leaf_a' "$D/workload.top" 2>/dev/null; echo $?) "it wrote the --top table"
ok $(grep -q '<svg' "$D/workload.svg" 2>/dev/null && grep -q 'sa_leaf_a' "$D/workload.svg"; echo $?) \
	"it wrote the SVG flame graph"

# the same committed tree, built by a user who is not root
in_root useradd -m -s /bin/sh "$USER_NAME" >"$T/useradd.log" 2>&1 &&
	git clone -q "$R/src/sa" "$R/home/$USER_NAME/sa" &&
	in_root chown -R "$USER_NAME:" "/home/$USER_NAME/sa" ||
	diag_file "$T/useradd.log"
step deps in_root runuser -l "$USER_NAME" -c 'cd sa && make deps'
rc=$?
ok $([ $rc = 0 ] && ! grep -qi 'missing' "$T/deps.log"; echo $?) \
	"make deps as $USER_NAME names nothing missing"
[ $rc = 0 ] || diag_tail "$T/deps.log" 10
# (one job per CPU: what it needs is the question, not how fast)
step make in_root runuser -l "$USER_NAME" -c 'cd sa && make -j$(nproc)'
rc=$?
B=$R/home/$USER_NAME/sa/build
ok $([ $rc = 0 ] && [ -x "$B/bin/sa-record" ] && [ -x "$B/bin/sa-report" ] &&
	[ -x "$B/samples/workload" ]; echo $?) "make as $USER_NAME builds sa-record, sa-report, the samples"
[ $rc = 0 ] || diag_tail "$T/make.log" 25
# README says BUILD_PKGS holds what `make static` needs too (static libraries)
step static in_root runuser -l "$USER_NAME" -c 'cd sa && make static'
rc=$?
ok $([ $rc = 0 ] && [ -x "$B/static/sa-record" ] && [ -x "$B/static/sa-report" ]; echo $?) \
	"make static as $USER_NAME links both static binaries"
[ $rc = 0 ] || diag_tail "$T/static.log" 25

ok $(! grep -qF " $R/" /proc/self/mountinfo && ! grep -qF " $R" "$caller_mounts"; echo $?) \
	"no mount left under the root, none ever seen by the caller"
diag "$(($(find "$CACHE/debs/$SUITE" -name '*.deb' | wc -l) - debs_before)) .debs downloaded into $CACHE"
diag "$SECONDS s so far (removing the root follows)"
done_testing
