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
cd "$(dirname "$0")/../.." || exit 1
rm -f .prove
scripts=()
for t in tests/cli/*.t; do
	if [ "${SA_SANITIZED:-0}" != 1 ] || head -n 20 "$t" | grep -q '^# sa-test: san'; then
		scripts+=("$t")
	fi
done
prove --timer --state=save "${scripts[@]}" && exit 0
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
echo "== statistical scripts failed once; running them again: ${rerun[*]}"
prove "${rerun[@]}"
rc=$?
echo "== reruns: ${rerun[*]}: $([ $rc = 0 ] && echo "passed the second time" || echo "failed twice")"
exit $rc
