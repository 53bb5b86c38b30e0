#!/bin/bash
# SPDX-License-Identifier: MIT
# check-stages.sh - make check: each stage in turn, as its own make, timed;
# the first failing stage ends the run. A closing summary gives each stage's
# wall time and result (tests/README.md). usage: check-stages.sh MAKE
make=${1:-make}
# The build stages compile with one job per CPU. Once the build stage has
# passed, the sanitizer builds of the san and tsan stages start behind the
# next stages at nice 19: the CPU the end-to-end scripts leave idle (they
# wait on workloads and recordings about half the time) compiles them, and
# the san stage first waits for that build and shows its log if it failed.
jobs=$(nproc 2>/dev/null || echo 2)
bg_pid=
bg_log=${TMPDIR:-/tmp}/sa-check-san-build.$$.log
bg_t0=
# its own process group (setsid), so that a run that ends early ends it too
trap '[ -n "$bg_pid" ] && kill -- "-$bg_pid" 2>/dev/null; rm -f "$bg_log" "$bg_log.end"' EXIT
stages=(
	"packages|deps-test"
	"build|-j$jobs all unit-bins check-extra fuzz-bins"
	"fresh root|check-fresh"
	"style|check-style"
	"deps|check-deps"
	"unit|check-unit"
	"fuzz replay|check-fuzz"
	"cli|check-cli"
	"san (ASan+UBSan build, unit, cli)|check-san"
	"tsan|check-tsan"
)
names=()
times=()
results=()
rc=0
t_all=$(date +%s%N)
for s in "${stages[@]}"; do
	name=${s%%|*}
	t0=$(date +%s%N)
	rc=0
	if [ "${s#*|}" = check-san ] && [ -n "$bg_pid" ]; then
		wait "$bg_pid" || rc=$?
		bg_pid=
		[ $rc = 0 ] || { echo "== the sanitizer builds failed:"; tail -n 40 "$bg_log"; }
	fi
	# shellcheck disable=SC2086
	[ $rc = 0 ] && $make --no-print-directory ${s#*|}
	rc=$((rc ? rc : $?))
	if [ "$name" = build ] && [ $rc = 0 ]; then
		bg_t0=$(date +%s%N)
		setsid bash -c 'nice -n 19 $0 --no-print-directory san-build tsan-build
			rc=$?; echo "$(date +%s%N) $rc" >"$1.end"; exit $rc' "$make" "$bg_log" >"$bg_log" 2>&1 &
		bg_pid=$!
	fi
	names+=("$name")
	times+=("$((($(date +%s%N) - t0) / 1000000))")
	results+=("$([ $rc = 0 ] && echo ok || echo "FAILED (rc $rc)")")
	[ $rc = 0 ] || break
done
if [ -n "$bg_t0" ] && [ -s "$bg_log.end" ]; then
	names+=("(sanitizer builds, behind, nice 19)")
	read -r bg_end bg_rc <"$bg_log.end"
	times+=("$(((bg_end - bg_t0) / 1000000))")
	results+=("$([ "$bg_rc" = 0 ] && echo ok || echo "FAILED (rc $bg_rc)")")
fi
names+=(total)
times+=("$((($(date +%s%N) - t_all) / 1000000))")
results+=("$([ $rc = 0 ] && echo passed || echo failed)")
echo "== make check: stage times (wall clock)"
for i in "${!names[@]}"; do
	printf '   %-36s %8s s  %s\n' "${names[$i]}" \
		"$((times[i] / 1000)).$((times[i] % 1000 / 100))" "${results[$i]}"
done
exit $rc
