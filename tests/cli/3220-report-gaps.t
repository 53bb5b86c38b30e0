#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# Small gaps of sa-report (issue 31): a 0-byte file and a filter that
# matches nothing say so and exit 1 (they exited 0 with no output); --top
# marks kernel functions "[k]" as perf report does; --info counts the
# processes with samples apart from every process image the side band saw
# (a one-command recording said "522 process images"); --addrs gives an
# address to frames in anonymous code (node's JIT without a perf map).
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples zero_reader
tmpdir
T=$tap_tmp

plan 12

: >"$T/empty.sa"
"$SA_REPORT" "$T/empty.sa" >"$T/e.out" 2>"$T/e.err"
rc=$?
[ "$rc" = 1 ] && grep -q 'empty file' "$T/e.err" && [ ! -s "$T/e.out" ]
ok $? "a 0-byte file: exit 1 (got $rc) and a message: $(head -1 "$T/e.err")"

"$SA_RECORD" -q -F 999 -o "$T/z.sa" -- "$SA_SAMPLES/zero_reader" -d 1 >/dev/null 2>"$T/rec.err"
ok $? "sa-record -- zero_reader -d 1 exits 0"
for f in "--comm no_such_comm" "--pid 999999999" "--tid 999999999"; do
	# shellcheck disable=SC2086
	"$SA_REPORT" $f "$T/z.sa" >"$T/f.out" 2>"$T/f.err"
	rc=$?
	[ "$rc" = 1 ] && grep -q "no sample of the [0-9]* recorded matches ${f%% *}" "$T/f.err"
	ok $? "$f matches nothing: exit 1 (got $rc): $(head -1 "$T/f.err")"
done
"$SA_REPORT" --top --comm no_such_comm "$T/z.sa" >/dev/null 2>&1
rc=$?
[ "$rc" = 1 ]
ok $? "--top --comm no_such_comm: exit 1 too (got $rc)"

"$SA_REPORT" --top -o "$T/z.top" "$T/z.sa" 2>/dev/null
ok $? "sa-report --top exits 0"
diag_file "$T/z.top" 10
# zero_reader spends most of its time in read(2): the kernel's read_zero,
# under libc's read (the user leaf of nearly every sample: 92% here)
grep -qE '%  \[k\] read_zero$' "$T/z.top" && grep -qE '%  read$' "$T/z.top" &&
	! grep -qE '%  \[k\] (read|main|sa_zero_reader_loop)$' "$T/z.top"
ok $? "--top marks kernel functions [k] (read_zero), not user ones (read)"

"$SA_REPORT" --info "$T/z.sa" >"$T/z.info" 2>/dev/null
grep -E '^  (processes|contents):' "$T/z.info" | while read -r l; do diag "$l"; done
grep -qE '^  processes:  1 with samples \([12] images\), of [0-9]+ images seen$' "$T/z.info"
ok $? "--info: one process with samples, apart from the images seen"

command -v node >/dev/null || { skip 3 "node not installed"; done_testing; exit; }
cat >"$T/hot.js" <<'JS'
function saJitHotLoop(n) {
	let x = 0;
	for (let i = 0; i < n; i++)
		x = (x * 31 + i) % 1000003;
	return x;
}
const end = Date.now() + 1500;
let r = 0;
while (Date.now() < end)
	r += saJitHotLoop(1000000);
console.log(r);
JS
(cd "$T" && "$SA_RECORD" -q -F 999 -o "$T/j.sa" -- node "$T/hot.js" >/dev/null 2>"$T/rec2.err")
ok $? "sa-record -- node hot.js (no perf map) exits 0"
"$SA_REPORT" -o "$T/j.folded" "$T/j.sa" 2>/dev/null &&
	"$SA_REPORT" --addrs -o "$T/ja.folded" "$T/j.sa" 2>/dev/null
ok $? "sa-report and sa-report --addrs exit 0"
# JIT code is anonymous memory: [anon] frames, each with its address under --addrs
anon=$(grep -c '\[anon\]' "$T/j.folded")
bare=$(grep -c '\[anon\]' "$T/ja.folded")
addr=$(grep -cE '\[anon\+0x[0-9a-f]+\]' "$T/ja.folded")
[ "$anon" -gt 0 ] && [ "$bare" = 0 ] && [ "$addr" -gt 0 ]
ok $? "--addrs: [anon+0xADDR] frames ($addr lines), no bare [anon] ($bare; $anon lines without)"
done_testing
