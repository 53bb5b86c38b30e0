#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (bounds the time from a stop to the exit, as 5220 does)
# 5221-startup-holds.t - a stop signal ends sa-record's start-up at each of
# its steps (issue 50; docs/reliability.md, "Signals"). SA_RECORD_TEST_HOLD
# =STEP holds start-up at STEP for 5 s and says "sa-record: test hold: STEP"
# on stderr; once that is said, SIGINT, SIGTERM or SIGHUP is sent, with the
# signal's default handling at the exec and again with it blocked through
# the exec (env --block-signal: a parent that blocked it passes the block
# on; 5220 failed so under such a parent, status 137 after 19.7 s). Each
# must end sa-record within 1 s by that signal (128 + N), say so on
# stderr, and leave FILE and FILE.old byte-identical, no FILE.tmp-PID, no
# FILE.lock and no `-- CMD` child. The steps, in start-up's order: spawn
# (the child forked), lock (FILE.lock held), output (FILE.tmp-PID and its
# header), sideband (its events open), load (on the BPF load's thread,
# which no signal ends, as the verifier does not), prebuild (--call-graph
# auto: the program's unwind table built before CMD), setup (the drain
# made), preload (-G: the cgroup's first process's mappings), capture (-p:
# before the first target's). On 10d6d12 all 27 blocked runs fail (the
# block was never lifted: each recorded until killed), and spawn's 3 plain
# runs too (no handler yet: killed, nothing said). Last, SIGHUP ignored at
# the exec (nohup) stays ignored.
. "$(dirname "$0")/lib.sh"
require_root_bpf
tmpdir
T=$tap_tmp
mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$mnt" ] || skip_all "no cgroup2 mount"
cg=$mnt/sa-test-5221-$$
mkdir "$cg" || skip_all "cannot create a cgroup under $mnt"
plan 111

# From the signal to the exit: the stop wakes the main thread's wait, and
# abandon() kills the unstarted child, removes two files and raises the
# signal; the exit closes the BPF objects and ends every thread. 1-151 ms
# here alone, 1.1-1.7 s in 4 of 200 runs beside other engineers' work
# (load 11, a recorder at nice -20): a thread pinned to a CPU (dither.c)
# waited that long for it to exit, hence alone. A hold missed lasts 5 s,
# so the docs' 1 s bound (5220) also tells the two apart.
BOUND=1000
# now: microseconds on the script's own clock, without a fork
now() { echo "${EPOCHREALTIME/./}"; }
# a name no other process has: the `-- CMD` child, and the -G and -p targets
tag=1000.$$
sleep "${tag}1" &
member=$!
sleep "${tag}2" &
target=$!
# signals go to sa-record once it says its hold: a shell forked for it and
# signalled before its exec would run this trap there
trap 'kill $member $target; rmdir "$cg"; [ -n "${SA_TEST_KEEP-}" ] || rm -rf "$T"' EXIT
echo $member >"$cg/cgroup.procs"
ok $? "moved $member into $cg"

printf 'not a recording: FILE\n' >"$T/want"
printf 'not a recording: FILE.old\n' >"$T/want.old"
# fresh: FILE and FILE.old as wanted, nothing of an earlier run (each run its own point)
fresh()
{
	rm -f "$T"/r.sa*
	cp "$T/want" "$T/r.sa" && cp "$T/want.old" "$T/r.sa.old"
}

# hold STEP SIG ENV... -- ARGS...: start sa-record ARGS under env ENV held
# at STEP, send SIG once it says so; set rc (its status), ms (from the
# signal to its exit, or -1 when the hold was never said)
hold()
{
	local step=$1 sig=$2 rec guard s i envs=()
	shift 2
	while [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	fresh
	rm -f "$T/err"
	env "${envs[@]}" SA_DIAG=1 SA_RECORD_TEST_HOLD="$step" "$SA_RECORD" -q -o "$T/r.sa" "$@" \
		2>"$T/err" &
	rec=$!
	ms=-1
	for ((i = 0; i < 1000; i++)); do # 20 s for the start-up's steps before STEP
		grep -q "^sa-record: test hold: $step\$" "$T/err" 2>/dev/null && break
		kill -0 $rec 2>/dev/null || i=1000 # ended before it: failed
		sleep 0.02
	done
	# a missed stop: the hold ends after 5 s and sa-record records on
	(sleep 7 && kill -KILL $rec) >/dev/null 2>&1 &
	guard=$!
	if [ $i -lt 1000 ]; then
		s=$(now)
		kill -"$sig" $rec
	else
		kill -KILL $rec
	fi
	wait $rec 2>/dev/null
	rc=$?
	[ $i -lt 1000 ] && ms=$((($(now) - s) / 1000))
	kill -KILL $guard 2>/dev/null
	wait $guard 2>/dev/null
}
# untouched: FILE and FILE.old as they were, nothing of the recorder left
untouched()
{
	cmp -s "$T/r.sa" "$T/want" && cmp -s "$T/r.sa.old" "$T/want.old" &&
		[ -z "$(ls "$T" | grep -e 'tmp-' -e '\.lock$')" ] &&
		! pgrep -fx "sleep ${tag}3" >/dev/null
}
# points STEP SIG HOW ENV... -- ARGS...: hold, then the two points
points()
{
	local step=$1 sig=$2 how=$3 n
	shift 3
	hold "$step" "$sig" "$@"
	n=$(kill -l "$sig")
	[ $rc = $((128 + n)) ] && [ $ms -ge 0 ] && [ $ms -le $BOUND ]
	ok $? "$step, SIG$sig $how: status $rc (want $((128 + n))) after $ms ms (<= $BOUND)"
	[ $ms -ge 0 ] && [ $ms -le $BOUND ] || diag "$(head -c 600 "$T/err")"
	untouched &&
		grep -q "^sa-record: SIG$sig during start-up: nothing was recorded; $T/r.sa left as it was\$" \
			"$T/err"
	ok $? "$step, SIG$sig $how: FILE, FILE.old as they were, no FILE.tmp-PID, FILE.lock, CMD; said ($(grep -v 'test hold' "$T/err" | head -c 200 | tr '\n' ' '))"
	pgrep -fx "sleep ${tag}3" | xargs -r kill -KILL # a child a failing run left
}

# env resets the handling a shell passes on: `&` ignores SIGINT, nohup SIGHUP
dfl=--default-signal=HUP,INT,TERM
for step in spawn lock output sideband load prebuild setup preload capture; do
	args=(-G "$cg" --call-graph auto -- sleep "${tag}3")
	[ $step = capture ] && args=(-p $target)
	for sig in INT TERM HUP; do
		points $step $sig "(default)" $dfl -- "${args[@]}"
		points $step $sig "(blocked at the exec)" $dfl --block-signal=$sig -- "${args[@]}"
	done
done

# nohup: a hangup ignored at the exec stays ignored; SIGTERM still ends it
fresh
env --ignore-signal=HUP SA_RECORD_TEST_HOLD=load "$SA_RECORD" -q -a -o "$T/r.sa" 2>"$T/err" &
rec=$!
for ((i = 0; i < 1000; i++)); do
	grep -q "^sa-record: test hold: load\$" "$T/err" 2>/dev/null && break
	sleep 0.02
done
kill -HUP $rec
sleep 0.3
kill -0 $rec 2>/dev/null && ! grep -q "during start-up" "$T/err"
ok $? "SIGHUP ignored at the exec (nohup): still starting 300 ms after a SIGHUP"
s=$(now)
kill -TERM $rec
(sleep 7 && kill -KILL $rec) >/dev/null 2>&1 &
guard=$!
wait $rec 2>/dev/null
rc=$?
ms=$((($(now) - s) / 1000))
kill -KILL $guard 2>/dev/null
wait $guard 2>/dev/null
[ $rc = 143 ] && [ $ms -le $BOUND ] && untouched
ok $? "... then SIGTERM: status $rc (want 143) after $ms ms (<= $BOUND), FILE as it was"

kill $member $target
wait $member $target 2>/dev/null
done_testing
