#!/bin/bash
# SPDX-License-Identifier: MIT
# check-cycles.sh - no circle of files inside a module: file A depends on
# file B of the same module (format/, core/, record/, report/) when A's
# object uses a symbol B's object defines (nm). Those edges must form no
# cycle, so each file calls downward only (docs/style.md, "Calls go one
# way"); a call through a function pointer (a callback) is no edge. Prints
# each circle with the symbols on its edges; exit 1 when there is one.
# Objects whose source is gone (a stale build) are left out.
# usage: check-cycles.sh [--edges [FOLDER]] [OBJDIR]  (default build/obj;
# run from the top of the tree, where OBJDIR/DIR/FILE.o was built from
# DIR/FILE.c). --edges prints every edge instead, "A -> B: SYMBOLS", of the
# files under FOLDER (e.g. report/session) when given: docs/design.md's
# drawing of the calls is read off it. It checks nothing and exits 0.
set -u
edges=0 only=
if [ "${1:-}" = --edges ]; then
	edges=1
	shift
	# FOLDER, unless the one argument left is a folder of objects
	if [ $# -ge 2 ] || { [ $# = 1 ] && [ -z "$(find "$1" -name '*.o' -print -quit 2>/dev/null)" ]; }; then
		only=${1%/}/
		shift
	fi
fi
dir=${1:-build/obj}
dir=${dir%/}
mapfile -t objs < <(find "$dir" -name '*.o' 2>/dev/null | LC_ALL=C sort)
[ ${#objs[@]} -gt 0 ] || {
	echo "check-cycles: no objects under $dir/ (build first)"
	exit 1
}

# "D FILE SYMBOL" for each global symbol defined, "U FILE SYMBOL" for each
# used: one nm over every object that still has its source.
syms()
{
	local o src have=()
	for o in "${objs[@]}"; do
		src=${o#"$dir"/}
		[ -f "${src%.o}.c" ] && have+=("$o")
	done
	[ ${#have[@]} -gt 0 ] || return 0
	nm -A "${have[@]}" | awk -v dir="$dir/" '
		{
			f = $1
			sub(/:[^:]*$/, "", f)
			f = substr(f, length(dir) + 1)
			sub(/\.o$/, ".c", f)
		}
		NF == 3 && $2 == "U" { print "U", f, $3 }
		NF == 3 && $2 ~ /^[A-TV-Z]$/ { print "D", f, $3 }'
}

# "FROM TO SYMBOL" for each use of a symbol that another file of FROM's
# module defines: the edges, one line a symbol, in nm's order.
uses()
{
	syms | LC_ALL=C awk '
	function module(f) { sub(/\/.*/, "", f); return f }
	$1 == "D" { def[module($2) SUBSEP $3] = $2; next }
	{ use[++nuse] = $2 SUBSEP $3 }
	END {
		for (i = 1; i <= nuse; i++) {
			split(use[i], u, SUBSEP)
			k = module(u[1]) SUBSEP u[2]
			if ((k in def) && def[k] != u[1])
				print u[1], def[k], u[2]
		}
	}'
}

if [ $edges = 1 ]; then
	uses | LC_ALL=C awk -v only="$only" '
	only != "" && (index($1, only) != 1 || index($2, only) != 1) { next }
	{
		e = $1 " -> " $2
		if (!((e SUBSEP $3) in seen)) {
			seen[e SUBSEP $3]
			why[e] = why[e] " " $3
		}
	}
	END {
		for (e in why)
			print e ":" why[e]
	}' | LC_ALL=C sort
	exit 0
fi

uses | LC_ALL=C awk '
{
	e = $1 SUBSEP $2
	if (!(e in why)) {
		adj[$1] = adj[$1] " " $2
		why[e] = $3
	} else if (length(why[e]) < 80)
		why[e] = why[e] ", " $3
	if (!($1 in seen)) { seen[$1]; order[++n] = $1 }
}
END {
	for (i = 1; i <= n; i++)
		if (!(order[i] in idx))
			strong(order[i])
	exit bad
}
# Tarjan: one strongly connected component of more than one file is a circle.
function strong(v,   ws, nw, i, j, w, m, list) {
	idx[v] = low[v] = ++counter
	stk[++sp] = v
	on[v] = 1
	nw = split(adj[v], ws, " ")
	for (i = 1; i <= nw; i++) {
		w = ws[i]
		if (!(w in idx)) {
			strong(w)
			if (low[w] < low[v])
				low[v] = low[w]
		} else if (on[w] && idx[w] < low[v])
			low[v] = idx[w]
	}
	if (low[v] != idx[v])
		return
	m = 0
	do {
		w = stk[sp--]
		on[w] = 0
		comp[++m] = w
	} while (w != v)
	if (m < 2)
		return
	bad = 1
	list = ""
	for (i = m; i >= 1; i--)
		list = list " " comp[i]
	print "check-deps: a circle of files:" list
	for (i = m; i >= 1; i--)
		incomp[comp[i]] = 1
	for (i = m; i >= 1; i--) {
		nw = split(adj[comp[i]], ws, " ")
		for (j = 1; j <= nw; j++)
			if (incomp[ws[j]])
				print "check-deps:   " comp[i] " -> " ws[j] " (" why[comp[i] SUBSEP ws[j]] ")"
	}
	for (i = m; i >= 1; i--)
		delete incomp[comp[i]]
}'
