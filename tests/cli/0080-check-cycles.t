#!/bin/bash
# SPDX-License-Identifier: MIT
# make check-deps's circle check (tests/check-cycles.sh): files of a
# planted module that call each other in a circle, two or three long, fail
# it with the circle and the symbols on its edges named; a file that only
# calls into the circle is not in it; the same files without the call back
# pass; an object whose source is gone is left out; the tree as built
# has no circle; and --edges lists the edges without judging them.
. "$(dirname "$0")/lib.sh"

command -v gcc >/dev/null 2>&1 || skip_all "gcc missing"
command -v nm >/dev/null 2>&1 || skip_all "nm missing (binutils)"
[ -d "$SA_BUILD/obj" ] || skip_all "not built ($SA_BUILD/obj); run make"
tmpdir
T=$tap_tmp
CHECK=$SA_SRC/tests/check-cycles.sh

plan 10

# put FILE CODE: a source file of the planted tree, compiled to obj/.
put()
{
	mkdir -p "$T/tree/$(dirname "$1")" "$T/tree/obj/$(dirname "$1")"
	printf '%s\n' "$2" >"$T/tree/$1"
	gcc -c -O0 -o "$T/tree/obj/${1%.c}.o" "$T/tree/$1"
}
run()
{
	(cd "$T/tree" && bash "$CHECK" obj) >"$T/out" 2>&1
}

put mod/a.c 'int b_fn(void); int a_fn(void) { return b_fn() + 1; }'
put mod/b.c 'int a_fn(void); int b_fn(void) { return a_fn() - 1; }'
put mod/c.c 'int a_fn(void); int c_fn(void) { return a_fn(); }'
put mod/d.c 'int (*d_ptr)(void); int d_fn(void) { return d_ptr ? d_ptr() : 0; }'
put mod/e.c 'int d_fn(void); extern int (*d_ptr)(void); static int e_cb(void) { return 1; }
int e_fn(void) { d_ptr = e_cb; return d_fn(); }'
run
rc=$?
ok $([ $rc -eq 1 ]; echo $?) "a.c <-> b.c: exit 1 (got $rc)"
ok $(grep -q '^check-deps: a circle of files: mod/[ab].c mod/[ab].c$' "$T/out"; echo $?) \
	"the circle is named: a.c and b.c"
ok $(grep -q 'mod/a.c -> mod/b.c (b_fn)' "$T/out" && grep -q 'mod/b.c -> mod/a.c (a_fn)' "$T/out"
	echo $?) "each edge with the symbol it uses"
ok $(! grep -q 'mod/[cde].c' "$T/out"; echo $?) \
	"c.c (calls into the circle) and d.c <- e.c (a callback up) are in none"
diag_file "$T/out" 10

# --edges: every edge of the folder, the circle's too, and exit 0
(cd "$T/tree" && bash "$CHECK" --edges mod obj) >"$T/edges" 2>&1
rc=$?
ok $([ $rc -eq 0 ] && grep -qx 'mod/a.c -> mod/b.c: b_fn' "$T/edges" &&
	grep -qx 'mod/b.c -> mod/a.c: a_fn' "$T/edges" && grep -qx 'mod/e.c -> mod/d.c: d_fn d_ptr' "$T/edges" &&
	[ "$(wc -l <"$T/edges")" = 4 ]; echo $?) "--edges lists the 4 edges, a circle's too, and exits 0 ($rc)"
diag_file "$T/edges" 10

put mod/x.c 'int y_fn(void); int x_fn(void) { return y_fn(); }'
put mod/y.c 'int z_fn(void); int y_fn(void) { return z_fn(); }'
put mod/z.c 'int x_fn(void); int zv; int z_fn(void) { return zv ? x_fn() : 0; }'
run
ok $(grep -q '^check-deps: a circle of files: mod/[xyz].c mod/[xyz].c mod/[xyz].c$' "$T/out"
	echo $?) "a circle of three: x.c -> y.c -> z.c -> x.c"
diag_file "$T/out" 10

put mod/b.c 'int b_fn(void) { return 1; }'
put mod/z.c 'int zv; int z_fn(void) { return zv; }'
run
rc=$?
ok $rc "without the calls back: exit 0"
diag_file "$T/out" 10

# a stale object: its source was removed, the object was left in obj/
put mod/gone.c 'int a_fn(void); int gone_fn(void) { return a_fn(); }
int b_fn(void); int c_fn(void); int a_back(void) { return b_fn() + c_fn(); }'
rm "$T/tree/mod/gone.c"
put mod/b.c 'int gone_fn(void); int b_fn(void) { return gone_fn(); }'
run
ok $? "an object without its source is left out"
diag_file "$T/out" 10

(cd "$SA_SRC" && bash "$CHECK" "$SA_BUILD/obj") >"$T/tree.out" 2>&1
ok $? "the tree as built: no circle of files"
diag_file "$T/tree.out" 20

rm -rf "$T/empty" && mkdir "$T/empty"
(cd "$T/tree" && bash "$CHECK" "$T/empty") >"$T/out" 2>&1
rc=$?
ok $([ $rc -eq 1 ] && grep -q 'no objects' "$T/out"; echo $?) "no objects: a failure, not a pass"

done_testing
