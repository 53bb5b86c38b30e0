#!/bin/bash
# SPDX-License-Identifier: MIT
# run-fuzz.t - TAP: for each target in $FUZZ_TARGETS, replay its corpus under
# gcc ASan+UBSan, then fuzz with libFuzzer for $FUZZ_SECONDS / targets seconds
# in a scratch copy of the corpus under $SA_BUILD (git files never change).
# The known-bad files of tests/data/bad are replayed too; their expected
# messages are checked by build/tests/unit/format/test_saf_reader.

cd "$(dirname "$0")/../.." || exit 1
: "${SA_BUILD:=$PWD/build}"
: "${FUZZ_SECONDS:=30}"
: "${FUZZ_TARGETS:=fuzz_reader fuzz_roundtrip fuzz_report}"
# A UBSan report is a failure, in the replay and in the fuzzer alike.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# sa-report's symbol cache: an empty one each run, never the user's (a
# failure then does not hang on what earlier runs or reports left there)
export XDG_CACHE_HOME=$SA_BUILD/fuzz/xdg
rm -rf "$XDG_CACHE_HOME" && mkdir -p "$XDG_CACHE_HOME"

read -r -a targets <<<"$FUZZ_TARGETS"
n=${#targets[@]}
echo "1..$((2 * n + 2))"
per=$((FUZZ_SECONDS / (n > 0 ? n : 1)))
[ "$per" -ge 1 ] || per=1
i=0

ok() { i=$((i + 1)); echo "ok $i - $*"; }
not_ok() { i=$((i + 1)); echo "not ok $i - $*"; }

for t in "${targets[@]}"; do
	replay=$SA_BUILD/fuzz/replay_$t
	fuzzer=$SA_BUILD/fuzz/libfuzzer_$t
	if out=$("$replay" "tests/fuzz/corpus/$t" 2>&1); then
		ok "$t: corpus replay ($(echo "$out" | tail -n 1))"
	else
		echo "$out" | sed 's/^/# /'
		not_ok "$t: corpus replay"
	fi
	work=$SA_BUILD/fuzz/run-$t
	rm -rf "$work" && mkdir -p "$work/corpus" "$work/artifacts"
	cp "tests/fuzz/corpus/$t/"* "$work/corpus/" 2>/dev/null
	if "$fuzzer" -max_total_time="$per" -print_final_stats=1 \
		-artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/log" 2>&1; then
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
		ok "$t: ${per}s of libFuzzer, ${execs:-?} executions"
	else
		tail -n 30 "$work/log" | sed 's/^/# /'
		not_ok "$t: libFuzzer found a failure; inputs in $work/artifacts"
	fi
done

if out=$("$SA_BUILD/fuzz/replay_fuzz_reader" tests/data/bad 2>&1); then
	ok "tests/data/bad: replayed through fuzz_reader ($(echo "$out" | tail -n 1))"
else
	echo "$out" | sed 's/^/# /'
	not_ok "tests/data/bad: replayed through fuzz_reader"
fi

missing=""
for f in tests/data/bad/*.sa; do
	[ -f "${f%.sa}.expect" ] || missing="$missing $f"
done
if [ -z "$missing" ]; then
	ok "tests/data/bad: every .sa has its .expect"
else
	not_ok "tests/data/bad: no .expect for$missing"
fi
