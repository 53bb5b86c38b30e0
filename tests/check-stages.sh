#!/bin/bash
# SPDX-License-Identifier: MIT
# check-stages.sh - make check: each stage in turn, as its own make, timed;
# the first failing stage ends the run. A closing summary gives each stage's
# wall time and result (tests/README.md). usage: check-stages.sh MAKE
make=${1:-make}
# The build stages compile with one job per CPU; the test stages run their
# scripts one at a time, as each script's timing and load assume.
jobs=$(nproc 2>/dev/null || echo 2)
stages=(
	"packages|deps-test"
	"build|-j$jobs all unit-bins check-extra fuzz-bins"
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
	# shellcheck disable=SC2086
	$make --no-print-directory ${s#*|}
	rc=$?
	names+=("$name")
	times+=("$((($(date +%s%N) - t0) / 1000000))")
	results+=("$([ $rc = 0 ] && echo ok || echo "FAILED (rc $rc)")")
	[ $rc = 0 ] || break
done
names+=(total)
times+=("$((($(date +%s%N) - t_all) / 1000000))")
results+=("$([ $rc = 0 ] && echo passed || echo failed)")
echo "== make check: stage times (wall clock)"
for i in "${!names[@]}"; do
	printf '   %-36s %8s s  %s\n' "${names[$i]}" \
		"$((times[i] / 1000)).$((times[i] % 1000 / 100))" "${results[$i]}"
done
exit $rc
