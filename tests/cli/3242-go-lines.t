#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# sa-test: statistical
# Go's frames off the box, with their file:line and inline frames (issue
# 31; format 1.10, docs/format.md "ULINE record"). samples/gosplit -inline
# runs main.spinA and main.spinI, whose loop calls main.mix, inlined by the
# compiler. sa-record reads .gopclntab's line tables and inline tree for
# the addresses sampled and writes them as ULINE records, so that:
# - with the binary moved away, `sa-report --lines` gives Go frames their
#   file:line, and the same stacks (inline frames included) as the
#   binary's DWARF gives with it there;
# - every leaf's file:line is one `go tool objdump` shows for that
#   function;
# - a stripped build (no .symtab, no DWARF) gets the same off the box:
#   its inline tree is found through moduledata.
# And `--info` does not call Go's stacks truncated: a goroutine's stack
# ends at runtime.goexit, a thread's at runtime.mstart, and these are
# roots as main and start_thread are.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples gosplit gosplit-stripped
[ -x "$SA_BUILD/tests/tools/sa-dump" ] || skip_all "sa-dump not built (make check-extra)"
command -v go >/dev/null || skip_all "go not installed (golang-go)"
tmpdir
T=$tap_tmp

plan 14

# lined FOLDED COMM: percent of COMM's samples whose leaf has a file:line, and
# their number; leaves in the vDSO (runtime.nanotime's clock_gettime) are not Go's
lined()
{
	awk -v c="$2" '$0 ~ "^" c ";" { st = $0; sub(/ [0-9]+$/, "", st)
		if (st ~ /;(__vdso_[^;]*|\[[^;]*\])$/) next
		t += $NF; if (st ~ / [^ ;]+:[0-9]+$/) l += $NF }
	END { printf "%.2f %d\n", t ? 100 * l / t : -1, t }' "$1"
}

# same FOLDED1 FOLDED2 COMM: percent of COMM's samples in FOLDED1 whose stack
# FOLDED2 has as well, with at least as many samples (one recording read twice)
same()
{
	awk -v c="$3" 'NR == FNR { n = $NF; sub(/ [0-9]+$/, ""); b[$0] = n; next }
	$0 ~ "^" c ";" { n = $NF; sub(/ [0-9]+$/, ""); t += n; s += (b[$0] < n ? b[$0] : n) }
	END { printf "%.2f %d\n", t ? 100 * s / t : -1, t }' "$2" "$1"
}

# inlined FOLDED COMM: percent of COMM's main.spinI samples that end in main.mix inlined there
inlined()
{
	awk -v c="$2" '$0 ~ "^" c ";" && /;main\.spinI( [^;]*)?(;|[ ][0-9]+$)/ { t += $NF
		if ($0 ~ /;main\.spinI [^;]*;main\.mix [^ ;]+:[0-9]+ [0-9]+$/) m += $NF }
	END { printf "%.2f %d\n", t ? 100 * m / t : -1, t }' "$1"
}

# objdump_ok FOLDED COMM BIN: leaves "F FILE:N" of main.* whose FILE:N `go tool
# objdump` shows neither in F nor in its caller (where F may be inlined)
objdump_ok()
{
	go tool objdump -s '^main\.' "$3" | awk '/^TEXT / { fn = $2; sub(/\(SB\)$/, "", fn); next }
		{ print fn, $1 }' | sort -u >"$T/objdump.pos"
	[ -s "$T/objdump.pos" ] || echo "(go tool objdump gave nothing)"
	awk -v c="$2" '$0 ~ "^" c ";" { st = $0; sub(/ [0-9]+$/, "", st); k = split(st, f, ";")
		if (f[k] !~ /^main\./) next
		split(f[k - 1], o, " "); split(f[k], l, " "); print l[1], o[1], l[2] }' "$1" |
		sort -u | awk 'NR == FNR { have[$0] = 1; next } { n++ }
		$3 == "" || (!(($1 " " $3) in have) && !(($2 " " $3) in have)) { print $1 ":" $3 }
		END { if (!n) print "(no leaf)" }' "$T/objdump.pos" -
}

cp "$SA_SAMPLES/gosplit" "$T/gosplit"
timeout -s KILL 60 "$SA_RECORD" -q -F 999 -o "$T/g.sa" -- "$T/gosplit" -cpu 1.5 -inline \
	>"$T/g.out" 2>"$T/rec.err"
ok $? "sa-record -- gosplit -inline exits 0"

"$SA_BUILD/tests/tools/sa-dump" "$T/g.sa" >"$T/g.dump"
grep -c "^ULINE " "$T/g.dump" >"$T/nuline"
grep -q "^ULINE .* depth=1 line=[0-9]* file=.*/main\.go name=main\.mix\$" "$T/g.dump"
ok $? "ULINE records ($(cat "$T/nuline")), main.mix among the inlined frames"

# --info: Go's stacks reach their roots (before: 100.0% "look truncated",
# and gosplit among the binaries that "appear to lack frame pointers")
truncated()
{
	grep -A1 "$T/gosplit\$" "$1" | sed -n 's/.*; \([0-9.]*\)% of its stacks look truncated.*/\1/p'
}
"$SA_REPORT" --info "$T/g.sa" >"$T/info" 2>&1
tr=$(truncated "$T/info")
diag "--info: ${tr:-0}% of gosplit's stacks look truncated"
# measured 0-0.3% (a walk or two of the runtime's that ends elsewhere): at
# p = 0.3% of n >= 1,000 samples, 2% is 20 or more, P < 1e-9 (Poisson 3)
ge 2 "${tr:-0}" && ! sed -n '/appear to lack frame pointers/,$p' "$T/info" | grep -q "gosplit"
ok $? "--info: ${tr:-0}% of gosplit's stacks look truncated (want <= 2%: runtime.goexit, runtime.mstart are roots)"
"$SA_REPORT" --info --lines "$T/g.sa" >"$T/info.lines" 2>&1
tr=$(truncated "$T/info.lines")
ge 2 "${tr:-0}"
ok $? "--info --lines: ${tr:-0}% (a root is known with its file:line)"

"$SA_REPORT" -U --lines --no-cache -o "$T/with.folded" "$T/g.sa" 2>>"$T/rep.err"
ok $? "sa-report --lines with the binary exits 0"
mv "$T/gosplit" "$T/gosplit.away"
"$SA_REPORT" -U --lines --no-cache -o "$T/off.folded" "$T/g.sa" 2>>"$T/rep.err"
ok $? "sa-report --lines with the binary gone exits 0"

read -r pl n < <(lined "$T/off.folded" gosplit)
diag "binary gone: $pl% of $n samples' leaves have a file:line"
# measured 100.00% (before ULINE: 0%): every Go function is in .gopclntab
[ "${n:-0}" -ge 500 ] && ge "$pl" 99
ok $? "binary gone: $pl% of gosplit's $n samples' leaves carry file:line (want >= 99%)"

read -r ps n < <(same "$T/off.folded" "$T/with.folded" gosplit)
diag "binary gone: $ps% of $n samples have the stack the binary's DWARF gives"
[ "${n:-0}" -ge 500 ] && ge "$ps" 99
ok $? "binary gone: $ps% of the samples' stacks as with the binary (want >= 99%)"
awk 'NR == FNR { w[$0] = 1; next } !($0 in w) { print $NF, $0 }' "$T/with.folded" \
	"$T/off.folded" | sort -nr | head -5 >"$T/differ"
diag_file "$T/differ"

# inline frames: mix holds the loop's chain of multiplies, so most of
# spinI's samples are in it on any CPU (measured 69-71%); 20% of n >= 300
# is 18 sd below (binomial sd at p = 0.7: 2.6 points), P < 1e-60
read -r pi n < <(inlined "$T/off.folded" gosplit)
diag "binary gone: $pi% of $n main.spinI samples end in main.mix inlined into it"
[ "${n:-0}" -ge 300 ] && ge "$pi" 20
ok $? "binary gone: main.mix shows inlined into main.spinI ($pi% of $n)"

bad=$(objdump_ok "$T/off.folded" gosplit "$T/gosplit.away")
ok "$([ -z "$bad" ]; echo $?)" "every main.* leaf's file:line is one go tool objdump shows (off:${bad:- none})"

# --lines off: the inline frames stay, the lines go
"$SA_REPORT" -U --no-cache -o "$T/nolines.folded" "$T/g.sa" 2>>"$T/rep.err"
grep -q ";main\.spinI;main\.mix [0-9]*$" "$T/nolines.folded" &&
	! grep -q "\.go:[0-9]" "$T/nolines.folded"
ok $? "binary gone, without --lines: main.spinI;main.mix, no file:line"

# Stripped: no .symtab, no DWARF; names, lines and inline tree from .gopclntab
cp "$SA_SAMPLES/gosplit-stripped" "$T/gostrip"
timeout -s KILL 60 "$SA_RECORD" -q -F 999 -o "$T/s.sa" -- "$T/gostrip" -cpu 1.5 -inline \
	>/dev/null 2>"$T/rec2.err"
ok $? "sa-record -- gosplit-stripped -inline exits 0"
mv "$T/gostrip" "$T/gostrip.away"
"$SA_REPORT" -U --lines --no-cache -o "$T/s.folded" "$T/s.sa" 2>>"$T/rep.err"
read -r pl n < <(lined "$T/s.folded" gostrip)
read -r pi ni < <(inlined "$T/s.folded" gostrip)
diag "stripped, binary gone: $pl% of $n leaves with file:line; $pi% of $ni spinI samples in mix"
[ "${n:-0}" -ge 500 ] && ge "$pl" 99 && [ "${ni:-0}" -ge 300 ] && ge "$pi" 20
ok $? "stripped, binary gone: file:line ($pl%) and inline frames ($pi%) from .gopclntab"
# go tool objdump needs a .symtab: the unstripped build of the same source
bad=$(objdump_ok "$T/s.folded" gostrip "$T/gosplit.away")
ok "$([ -z "$bad" ]; echo $?)" "stripped: every main.* leaf's file:line is one go tool objdump shows (off:${bad:- none})"
done_testing
