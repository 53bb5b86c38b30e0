#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-report --svg: a synthetic recording (tests/bench/gen-synthetic) gives a
# well-formed SVG honouring --width, --inverted, --title (escaped) and
# --min-width; a folded 60/30/10 split gives leaf boxes in that ratio within
# 2 points, and hostile names (<script>, &, quotes, control bytes, invalid
# UTF-8) stay valid XML. Folded input goes through sa-report when it takes
# folded text for --svg, else through build/tests/bench/folded-driver.
. "$(dirname "$0")/lib.sh"

require_report
command -v xmllint >/dev/null || skip_all "xmllint not installed (libxml2-utils)"
tmpdir
T=$tap_tmp
GEN=$SA_BUILD/tests/bench/gen-synthetic
DRIVER=$SA_BUILD/tests/bench/folded-driver

plan 15

# width NAME FILE / y NAME FILE: attributes of NAME's box
width() { grep -o "<title>$1&#10;[^<]*</title><rect [^>]*" "$2" | sed -n 's/.* width="\([0-9.]*\)".*/\1/p' | head -n1; }
ypos() { grep -o "<title>$1&#10;[^<]*</title><rect [^>]*" "$2" | sed -n 's/.* y="\([0-9.]*\)".*/\1/p' | head -n1; }
boxes() { grep -c '</title><rect' "$1"; }

if [ -x "$GEN" ] && "$GEN" -p 3 -s 2000 -d 12 -n 200000 -H 'web<01>&' -o "$T/s.sa" >/dev/null 2>&1; then
	"$SA_REPORT" --svg -o "$T/s.svg" "$T/s.sa" 2>"$T/err"
	ok $? "--svg on a synthetic recording exits 0"
	check "SVG is well-formed (xmllint)" xmllint --noout "$T/s.svg"
	check "root box spans the default width (1180 px inside 10 px margins)" \
		within "$(width all "$T/s.svg")" 1180 0.01
	check "subtitle names the host (escaped) and the samples" \
		grep -q 'id="subtitle"[^>]*>host web&lt;01&gt;&amp;.*samples' "$T/s.svg"
	"$SA_REPORT" --svg --width 800 --inverted --title 'A <b> & "c"' -o "$T/i.svg" "$T/s.sa"
	check "--width 800 --inverted --title is well-formed" xmllint --noout "$T/i.svg"
	check "--width 800: root box 780 px" within "$(width all "$T/i.svg")" 780 0.01
	check "--inverted: the root is the top row" \
		test "$(ypos all "$T/i.svg")" -le "$(grep -o '</title><rect x="[0-9.]*" y="[0-9]*"' "$T/i.svg" | sed 's/.*y="//;s/"//' | sort -n | head -n1)"
	check "--title is escaped" grep -q '>A &lt;b&gt; &amp; &quot;c&quot;' "$T/i.svg"
	"$SA_REPORT" --svg --min-width 20 -o "$T/m.svg" "$T/s.sa"
	diag "boxes: default $(boxes "$T/s.svg"), --min-width 20: $(boxes "$T/m.svg")"
	check "--min-width 20 merges away narrow frames" test "$(boxes "$T/m.svg")" -lt "$(boxes "$T/s.svg")"
else
	skip 9 "gen-synthetic not built ($GEN)"
fi

cat >"$T/split.folded" <<'EOT'
workload;main;sa_run;sa_leaf_a 600
workload;main;sa_run;sa_leaf_b 300
workload;main;sa_run;sa_leaf_c 100
EOT
{
	printf 'workload;main;<script>alert(1)</script> 5\n'
	printf 'workload;main;a & b "q" '"'"'s'"'"' 5\n'
	printf 'work\001load;main;ctl\033[1m\177 5\n'
	printf 'workload;main;bad\377\376utf8\300\257 \355\240\200 5\n'
} >"$T/hostile.folded"

if "$SA_REPORT" --svg -o "$T/f.svg" "$T/split.folded" 2>/dev/null; then
	svg() { "$SA_REPORT" --svg -o "$2" "$1"; }
	diag "folded input through sa-report --svg"
elif [ -x "$DRIVER" ]; then
	svg() { "$DRIVER" --svg "$1" >"$2"; }
	diag "sa-report --svg takes no folded text; folded input through $DRIVER"
else
	svg() { return 1; }
fi
if svg "$T/split.folded" "$T/f.svg"; then
	all=$(width all "$T/f.svg")
	a=$(width sa_leaf_a "$T/f.svg") b=$(width sa_leaf_b "$T/f.svg") c=$(width sa_leaf_c "$T/f.svg")
	diag "widths: all $all, a $a, b $b, c $c"
	check "folded 60/30/10: SVG is well-formed" xmllint --noout "$T/f.svg"
	check "sa_leaf_a box is 60% of the root (within 2 points)" within "$(pct "$a" "$all")" 60 2
	check "sa_leaf_b box is 30% of the root (within 2 points)" within "$(pct "$b" "$all")" 30 2
	check "sa_leaf_c box is 10% of the root (within 2 points)" within "$(pct "$c" "$all")" 10 2
	svg "$T/hostile.folded" "$T/h.svg"
	check "hostile names: well-formed and escaped" \
		eval 'xmllint --noout "$T/h.svg" && ! grep -q "<script>alert" "$T/h.svg" && grep -q "&lt;script&gt;alert" "$T/h.svg"'
	check "hostile names: invalid UTF-8 replaced by U+FFFD" grep -q $'bad\xef\xbf\xbd\xef\xbf\xbdutf8' "$T/h.svg"
else
	skip 6 "no way to draw folded text (sa-report takes no folded --svg input; folded-driver not built)"
fi
done_testing
