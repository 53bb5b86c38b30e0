#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# docs/sa-record.1 and docs/sa-report.1: groff -man -ww renders each without
# a warning, and the set of options defined in each page's OPTIONS section
# (its tag lines) equals the set `--help` lists, so the two cannot drift;
# the bash completions offer the same set.
. "$(dirname "$0")/lib.sh"

command -v groff >/dev/null 2>&1 || skip_all "groff not installed"
[ -x "$SA_RECORD" ] && [ -x "$SA_REPORT" ] || skip_all "sa-record or sa-report not built; run make"
tmpdir
T=$tap_tmp

plan 10

# tokens that look like options: -x or --long-name, after a blank, ',', '|', '[' or '('
opts_of()
{
	grep -oE '(^|[ ,|[(])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[ ,|[(]*//' | sort -u
}

# options defined in a man page: the tag lines of its OPTIONS section
man_opts()
{
	groff -man -Tascii -P-c -P-b -P-u "$1" 2>/dev/null |
		sed -n '/^OPTIONS/,/^[A-Z]/p' | grep -E '^       -' | opts_of
}

# options listed by --help: its indented lines starting with '-', and "modes:"
help_opts()
{
	"$1" --help 2>&1 | grep -E '^ +-|^modes:' | opts_of
}

# options a completion script offers: its opts="..." list
completion_opts()
{
	sed -n '/local opts="/,/"$/p' "$1" | tr -s ' \t' '\n' | sed 's/^opts="//; s/"$//' |
		grep -E '^--?[A-Za-z]' | sort -u
}

for tool in sa-record sa-report; do
	page=$SA_SRC/docs/$tool.1
	bin=$SA_BUILD/bin/$tool
	groff -man -ww -Tutf8 "$page" >/dev/null 2>"$T/$tool.warn"
	[ $? -eq 0 ] && [ ! -s "$T/$tool.warn" ]
	ok $? "groff -man -ww renders $tool.1 without warnings"
	diag_file "$T/$tool.warn" 5
	man_opts "$page" >"$T/$tool.man"
	help_opts "$bin" >"$T/$tool.help"
	[ "$(wc -l <"$T/$tool.help")" -ge 10 ]
	ok $? "$tool --help lists $(wc -l <"$T/$tool.help") options"
	diff -u "$T/$tool.help" "$T/$tool.man" | sed 's/^/# /'
	cmp -s "$T/$tool.help" "$T/$tool.man"
	ok $? "$tool.1 defines exactly the options of $tool --help (diff: - help, + man)"
	completion_opts "$SA_SRC/docs/completion/$tool.bash" >"$T/$tool.comp"
	diff -u "$T/$tool.help" "$T/$tool.comp" | sed 's/^/# /'
	cmp -s "$T/$tool.help" "$T/$tool.comp"
	ok $? "docs/completion/$tool.bash offers exactly those options"
	bash -n "$SA_SRC/docs/completion/$tool.bash"
	ok $? "docs/completion/$tool.bash is valid bash"
done

done_testing
