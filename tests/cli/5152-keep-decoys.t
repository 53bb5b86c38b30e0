#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (records -a)
# 5152-keep-decoys.t - --keep deletes only this recorder's own files, the
# oldest first (docs/reliability.md, "Never lose a recording"). In a shared
# (sticky, world-writable) output directory another user plants files
# named like the set, dated 2099: empty, with foreign content; root leaves
# a real recording renamed to a 2099 name. None is counted or deleted, and
# the real files are kept. Then the recorder's own clock is stepped back an
# hour (SA_RECORD_TEST_CLOCK_OFFSET, never the system's): its new files,
# named an hour earlier, are the ones kept, and the older ones go.
# Before, the decoys made --keep 2 delete every real file but the current
# one, and the step deleted each new file as the next began.
. "$(dirname "$0")/lib.sh"
require_report
require_root_bpf
require_samples workload
command -v setpriv >/dev/null || skip_all "setpriv not installed (plants files as nobody)"
tmpdir
T=$tap_tmp
trap 'jobs -p | xargs -r kill 2>/dev/null; rm -rf "$T"' EXIT
plan 8

K=$T/k
mkdir "$K"
chmod 1777 "$K"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
as_nobody touch "$K/host-20991231T235959.000Z.sa" &&
	as_nobody sh -c "echo not a recording >'$K/host-20991231T235958.000Z.sa'" ||
	skip_all "cannot plant files as nobody"
"$SA_RECORD" -q -a --duration 0.3 -o "$T/real.sa" || skip_all "cannot record"
cp "$T/real.sa" "$K/host-20991231T235957.000Z.sa" # root's, but its start is not its name
decoys="host-20991231T235957.000Z.sa host-20991231T235958.000Z.sa host-20991231T235959.000Z.sa"

# set: the recorder's files (by name) in K, decoys left out, oldest name first
set_files() { ls "$K" | grep -E '^host-[0-9]{8}T[0-9]{6}\.[0-9]{3}Z\.sa$' | grep -v '^host-2099'; }
clean() {
	local f bad=0
	for f in "$@"; do
		"$SA_REPORT" --info "$K/$f" 2>/dev/null | grep -q '^  finished: *cleanly$' || bad=1
	done
	return $bad
}

"$SA_SAMPLES/workload" -t 1 -d 60 >/dev/null 2>&1 &
"$SA_RECORD" -q -a -F 499 --interval 0.25 --rotate 1s --keep 2 --duration 5 -o "$K/host.sa"
rc=$?
mapfile -t run1 < <(set_files)
ok $rc "sa-record -a --rotate 1s --keep 2 --duration 5 beside the decoys: exit $rc"
[ ${#run1[@]} -ge 2 ] && [ ${#run1[@]} -le 3 ] && clean "${run1[@]}"
ok $? "2 or 3 real files kept (--keep 2 and the last), each finished cleanly: ${run1[*]}"
left=0
for d in $decoys; do [ -e "$K/$d" ] && left=$((left + 1)); done
[ $left = 3 ] && [ ! -s "$K/host-20991231T235959.000Z.sa" ] &&
	cmp -s "$K/host-20991231T235957.000Z.sa" "$T/real.sa"
ok $? "the 3 decoys are neither counted nor deleted: $left left, unchanged"

# The recorder's clock an hour back: its files are named before run 1's.
SA_RECORD_TEST_CLOCK_OFFSET=-3600 "$SA_RECORD" -q -a -F 499 --interval 0.25 --rotate 1s \
	--keep 2 --duration 5 -o "$K/host.sa"
rc=$?
ok $rc "again with the recorder's clock an hour back: exit $rc"
mapfile -t all < <(set_files)
first1=${run1[0]}
new=0 old=0
for f in "${all[@]}"; do
	if [[ $f < $first1 ]]; then new=$((new + 1)); else old=$((old + 1)); fi
done
[ $old = 0 ]
ok $? "run 1's files, older though named later, are the ones deleted: $old of them left"
[ $new -ge 2 ] && [ $new -le 3 ] && clean "${all[@]}"
ok $? "the newest files, named an hour earlier, are kept: $new (${all[*]})"
stamp=$(date -u -d '-3500 seconds' +%Y%m%dT%H%M%S)
bad=0
for f in "${all[@]}"; do [[ ${f:5:15} < $stamp ]] || bad=1; done
ok $bad "their names carry the stepped clock (before $stamp)"
left=0
for d in $decoys; do [ -e "$K/$d" ] && left=$((left + 1)); done
[ $left = 3 ]
ok $? "the decoys are still there: $left"
done_testing
