#!/bin/bash
# SPDX-License-Identifier: MIT
# fuzz-all.sh - open-ended fuzzing (make fuzz): each target in $FUZZ_TARGETS
# for $FUZZ_SECONDS under libFuzzer, from its corpus plus the inputs earlier
# runs kept in $SA_BUILD/fuzz/corpus-TARGET. An input that fails is written
# into tests/fuzz/corpus/TARGET/ as found-crash-SHA1 (or found-leak-,
# found-timeout-, found-oom-): commit it with the fix, and make check-fuzz
# replays it from then on. Every target runs even after one fails.

cd "$(dirname "$0")/../.." || exit 1
: "${SA_BUILD:=$PWD/build}"
: "${FUZZ_SECONDS:=60}"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export XDG_CACHE_HOME=$SA_BUILD/fuzz/xdg
rm -rf "$XDG_CACHE_HOME" && mkdir -p "$XDG_CACHE_HOME"
failed=""
for t in $FUZZ_TARGETS; do
	work=$SA_BUILD/fuzz/corpus-$t
	mkdir -p "$work"
	echo "== $t: ${FUZZ_SECONDS}s of libFuzzer (log $SA_BUILD/fuzz/fuzz-$t.log)"
	if "$SA_BUILD/fuzz/libfuzzer_$t" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 \
		-artifact_prefix="tests/fuzz/corpus/$t/found-" "$work" "tests/fuzz/corpus/$t" \
		>"$SA_BUILD/fuzz/fuzz-$t.log" 2>&1; then
		grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$SA_BUILD/fuzz/fuzz-$t.log" |
			tail -n 2 | sed 's/^/   /'
	else
		tail -n 30 "$SA_BUILD/fuzz/fuzz-$t.log" | sed 's/^/   /'
		failed="$failed $t"
	fi
done
if [ -n "$failed" ]; then
	echo "== failed:$failed; the inputs are in tests/fuzz/corpus/*/found-*:"
	git status --short --untracked-files=all tests/fuzz/corpus | sed 's/^/   /'
	exit 1
fi
echo "== no failure in $FUZZ_SECONDS s per target"
