#!/bin/bash
# SPDX-License-Identifier: MIT
# run-all.sh - the end-to-end scripts (make check-cli). A failed script is
# run again only when it declares itself statistical (a line
# "# sa-test: statistical" near its top: it checks shares of samples, with
# the chance of failing by luck written beside each tolerance); any other
# failure fails at once. Every rerun is named in the closing summary.
# Under ASan and UBSan (make check-san, SA_SANITIZED=1) only the scripts
# that declare "# sa-test: san" near their top run: the ones whose programs
# read what others control (damaged, crafted and hostile input, other
# users' files and processes) and the unwinders' memory paths; the rest
# checks numbers, not memory, and under ASan would take CI past its time.
#
# The scripts run SA_CLI_JOBS at a time (default: one per CPU), as any
# script must hold on a host with other work running; those that declare
# "# sa-test: alone (why)" run afterwards, one at a time with nothing
# beside them: they record the whole host (-a), start perf (which aborts
# beside another script's BPF program), move host-wide state, or flood
# every recorder's side band with new processes (tests/README.md).
cd "$(dirname "$0")/../.." || exit 1
rm -f .prove
jobs=${SA_CLI_JOBS:-$(nproc 2>/dev/null || echo 1)}
together=()
alone=()
for t in tests/cli/*.t; do
	head=$(head -n 20 "$t")
	if [ "${SA_SANITIZED:-0}" = 1 ] && ! grep -q '^# sa-test: san' <<<"$head"; then
		continue
	fi
	if grep -q '^# sa-test: alone' <<<"$head"; then
		alone+=("$t")
	else
		together+=("$t")
	fi
done
rc=0
echo "== ${#together[@]} scripts, $jobs at a time"
prove --timer --state=save -j"$jobs" "${together[@]}" || rc=1
echo "== ${#alone[@]} scripts one at a time, nothing beside them (# sa-test: alone)"
prove --timer --state=save "${alone[@]}" || rc=1
[ $rc = 0 ] && exit 0
mapfile -t failed < <(prove --state=failed --dry 2>/dev/null)
rerun=()
hard=()
for t in "${failed[@]}"; do
	if head -n 20 "$t" | grep -q '^# sa-test: statistical'; then
		rerun+=("$t")
	else
		hard+=("$t")
	fi
done
if [ ${#hard[@]} -gt 0 ] || [ ${#rerun[@]} -eq 0 ]; then
	echo "== failed (not statistical, not run again): ${hard[*]:-see above}"
	exit 1
fi
# a rerun is alone: a share that failed once is measured again on a host
# as quiet as this run can make it
echo "== statistical scripts failed once; running them again, one at a time: ${rerun[*]}"
prove "${rerun[@]}"
rc=$?
echo "== reruns: ${rerun[*]}: $([ $rc = 0 ] && echo "passed the second time" || echo "failed twice")"
exit $rc
