#!/bin/bash
# SPDX-License-Identifier: MIT
# run-fuzz.t - TAP (make check-fuzz): replay every fuzz corpus, and nothing
# random, so one commit gives one result. For each target in $FUZZ_TARGETS:
#  - its corpus through the harness built by gcc with ASan + UBSan (replay.c);
#  - the same files through the libFuzzer binary (clang, ASan + UBSan), each
#    input run once and no mutation: clang's UBSan has checks gcc's lacks
#    ("applying zero offset to null pointer", f177167), and they run here on
#    every input, every time.
# The known-bad files of tests/data/bad go through fuzz_reader both ways too;
# their expected messages are checked by build/tests/unit/format/test_saf_reader.
# Open-ended fuzzing, which finds new inputs by luck, is `make fuzz`.

cd "$(dirname "$0")/../.." || exit 1
: "${SA_BUILD:=$PWD/build}"
if [ -z "${FUZZ_TARGETS:-}" ]; then
	FUZZ_TARGETS=$(cd tests/fuzz && ls fuzz_*.c | sed 's/\.c$//' | tr '\n' ' ')
fi
# A UBSan report is a failure, in the replay and in the libFuzzer binary alike.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# sa-report's symbol cache: an empty one each run, never the user's (a
# failure then does not hang on what earlier runs or reports left there)
export XDG_CACHE_HOME=$SA_BUILD/fuzz/xdg
rm -rf "$XDG_CACHE_HOME" && mkdir -p "$XDG_CACHE_HOME"

read -r -a targets <<<"$FUZZ_TARGETS"
n=${#targets[@]}
echo "1..$((2 * n + 4))"
i=0

ok() { i=$((i + 1)); echo "ok $i - $*"; }
not_ok() { i=$((i + 1)); echo "not ok $i - $*"; }

# gcc_replay NAME TARGET DIR: the gcc ASan + UBSan build over every file of DIR.
gcc_replay()
{
	local out
	if out=$("$SA_BUILD/fuzz/replay_$2" "$3" 2>&1); then
		ok "$1: gcc ASan+UBSan replay ($(echo "$out" | tail -n 1))"
	else
		echo "$out" | tail -n 40 | sed 's/^/# /'
		not_ok "$1: gcc ASan+UBSan replay"
	fi
}

# clang_replay NAME TARGET DIR: the libFuzzer binary over every file of DIR,
# named one by one (libFuzzer then runs each input once and mutates nothing).
clang_replay()
{
	local files log=$SA_BUILD/fuzz/replay-$2.log
	mapfile -t files < <(find "$3" -maxdepth 1 -type f | LC_ALL=C sort)
	if "$SA_BUILD/fuzz/libfuzzer_$2" -artifact_prefix="$SA_BUILD/fuzz/replay-$2-" \
		"${files[@]}" >"$log" 2>&1; then
		ok "$1: libFuzzer (clang ASan+UBSan) ran ${#files[@]} inputs once each"
	else
		tail -n 40 "$log" | sed 's/^/# /'
		not_ok "$1: libFuzzer (clang ASan+UBSan) replay; log in $log"
	fi
}

for t in "${targets[@]}"; do
	gcc_replay "$t" "$t" "tests/fuzz/corpus/$t"
	clang_replay "$t" "$t" "tests/fuzz/corpus/$t"
done
gcc_replay tests/data/bad fuzz_reader tests/data/bad
clang_replay tests/data/bad fuzz_reader tests/data/bad

# every harness has a corpus, every corpus a harness
stray=""
for d in tests/fuzz/corpus/*/; do
	d=$(basename "$d")
	[ -f "tests/fuzz/$d.c" ] && [ -n "$(ls -A "tests/fuzz/corpus/$d")" ] || stray="$stray $d"
done
for t in tests/fuzz/fuzz_*.c; do
	t=$(basename "$t" .c)
	[ -n "$(ls -A "tests/fuzz/corpus/$t" 2>/dev/null)" ] || stray="$stray $t"
done
if [ -z "$stray" ]; then
	ok "every harness has a non-empty corpus and every corpus a harness"
else
	not_ok "harness without corpus or corpus without harness:$stray"
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
