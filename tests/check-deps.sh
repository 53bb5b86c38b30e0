#!/bin/bash
# SPDX-License-Identifier: MIT
# check-deps.sh - which folder of record/ and report/ may include which
# (docs/style.md, "What each folder may include"). Files include headers by
# bare name (every folder is on the module's -I list), so each quoted
# include is found in the module's folders and its folder checked against
# ALLOW below. Also: a header name is unique in its module, a *_int.h is
# included only from its own folder, record/ and report/ never include each
# other's headers, core/ includes only its own. One line per violation;
# exit 1 when there is one. Run from the top of the tree (`make check-deps`).
set -u
shopt -s nullglob

# FOLDER -> the other folders of its module it may include ("." is the
# module's top: main.c, cli.h, record.h). A folder not listed may include
# nothing but itself.
declare -A ALLOW=(
	[record]="common sampler drain meta cfi output python"
	[record/common]=""
	[record/cfi]="common"
	[record/meta]="common cfi ."
	[record/sampler]="common ."
	[record/output]="common ."
	[record/drain]="common cfi meta sampler python ."
	[record/python]="common"
	[report]="common input output session symbols unwind"
	[report/common]=""
	[report/symbols]="common"
	[report/unwind]="common"
	[report/output]="common"
	[report/input]="common output"
	[report/session]="common input output symbols unwind"
)

bad=0
fail()
{
	echo "check-deps: $*"
	bad=1
}

# where MODULE HEADER: the folder of MODULE that holds HEADER, if any.
where()
{
	local f
	for f in "$1/$2" "$1"/*/"$2"; do
		[ -f "$f" ] && { dirname "$f"; return; }
	done
}

# allowed FOLDER: what FOLDER may include besides itself, in words.
allowed()
{
	local a w=""
	for a in ${ALLOW[$1]:-}; do
		[ "$a" = . ] && a="${1%%/*}/*.h" || a="${1%%/*}/$a/"
		w="$w${w:+, }$a"
	done
	echo "${w:-its own folder}"
}

# Every folder of a module must have a rule, so a new one is decided on.
for d in record report record/*/ report/*/; do
	d=${d%/}
	[ -v "ALLOW[$d]" ] || fail "$d/ has no rule in tests/check-deps.sh (ALLOW)"
done

for m in record report; do
	other=record
	[ $m = record ] && other=report
	# One header per name: a bare #include must not depend on -I order.
	dups=$(for h in $m/*.h $m/*/*.h; do basename "$h"; done | sort | uniq -d)
	for h in $dups; do
		fail "$h is in more than one folder of $m/: $(ls $m/$h $m/*/$h 2>/dev/null | tr '\n' ' ')"
	done
	for f in $m/*.[ch] $m/*/*.[ch]; do
		fd=$(dirname "$f")
		while IFS=: read -r ln h; do
			h=${h#*\"}
			h=${h%%\"*}
			case $h in
			*/*) continue ;; # a path: the grep in the Makefile checks these
			esac
			td=$(where $m "$h")
			if [ -z "$td" ]; then
				[ -n "$(where $other "$h")" ] &&
					fail "$f:$ln includes $h, a header of $other/: $m/ never includes $other/"
				continue # bpf/, format/, core/ or the build's skeleton
			fi
			[ "$td" = "$fd" ] && continue
			case $h in
			*_int.h)
				fail "$f:$ln includes $h: internal to $td/, which alone may include it"
				continue
				;;
			esac
			rel=${td#$m}
			rel=${rel#/}
			[ -z "$rel" ] && rel=.
			case " ${ALLOW[$fd]:-} " in
			*" $rel "*) ;;
			*) fail "$f:$ln includes $h ($td/): $fd/ may include only $(allowed "$fd")" ;;
			esac
		done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
	done
done

# core/ is shared by record/ and report/: libc and libelf, and its own headers.
for f in core/*.[ch]; do
	while IFS=: read -r ln h; do
		h=${h#*\"}
		h=${h%%\"*}
		[ -f "core/$h" ] || fail "$f:$ln includes $h: core/ includes only libc, libelf and core/"
	done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
done

exit $bad
