#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (records -a, file by file)
# 2008-rotate.t - sa-record --rotate/--keep (docs/deploy.md, "Always on"):
# every file of the set is a complete recording of its own (END, the STACK
# and PROC records its samples name), names sort by time, --keep deletes
# only the oldest of our own names, and no interval is lost or counted twice
# across a rotation: the set's LOSS records add up to the recorder's totals.
# A rotation that meets a full disk stops with exit 1 and keeps the files.
. "$(dirname "$0")/2000-record-lib.sh"
need_bpf
build_busy
echo "1..16"
RPT=$SA_BUILD/bin/sa-report
NAME='host-[0-9]{8}T[0-9]{6}\.[0-9]{3}Z\.sa'

# self_contained FILE: every stack id a COUNT or USTACK names has its STACK
# in FILE, every sampled (pid, gen) its PROC.
self_contained() {
	"$DUMP" "$1" | awk '
	function val(s, a) { split(s, a, "="); return a[2] }
	/^STACK/ { st[val($2)] = 1 }
	/^PROC/ { pr[val($2) "/" val($3)] = 1 }
	/^COUNT/ { if ((val($5) && !(val($5) in st)) || (val($6) && !(val($6) in st))) bad++
		if (val($2) && !((val($2) "/" val($4)) in pr)) bad++ }
	/^USTACK/ { for (i = 2; i <= NF; i++) if ($i ~ /^kstack=/ && val($i) && !(val($i) in st)) bad++ }
	END { exit bad > 0 }'
}
# seqs FILE...: the interval sequence numbers of the files, in order
seqs() { for f in "$@"; do "$DUMP" "$f" | awk '/^INTERVAL/ { print $2 }' | uniq; done; }

mkdir "$T/r"
# decoys: none of these is ours to delete
echo keep >"$T/outside.sa"
ln -s "$T/outside.sa" "$T/r/host-20000101T000000.000Z.sa"
echo keep >"$T/r/other-20000101T000000.000Z.sa"
echo keep >"$T/r/host-20000101T000000Z.sa"
mkdir "$T/r/host-20000101T000001.000Z.sa"
"$T/busy" 2 & busy=$!
"$REC" -q -a --rotate 1s --keep 3 --duration 6 -o "$T/r/host.sa"
ok $? "sa-record -a --rotate 1s --keep 3 --duration 6"
mapfile -t files < <(find "$T/r" -maxdepth 1 -type f | grep -E "/$NAME\$" | sort)
[ ${#files[@]} -ge 3 ] && [ ${#files[@]} -le 4 ]
ok $? "3 or 4 files left: ${#files[@]}"
[ -L "$T/r/host-20000101T000000.000Z.sa" ] && [ -d "$T/r/host-20000101T000001.000Z.sa" ] &&
	[ -f "$T/r/other-20000101T000000.000Z.sa" ] && [ -f "$T/r/host-20000101T000000Z.sa" ] &&
	[ "$(cat "$T/outside.sa")" = keep ] && ! ls "$T/r" | grep -q tmp
ok $? "a link, a directory and other names are left alone; no temporary file"
bad=0
for f in "${files[@]}"; do
	"$RPT" --info "$f" 2>/dev/null | grep -q '^  finished: *cleanly$' || { bad=1; diag "not clean: $f"; }
done
ok $bad "--info says each finished cleanly"
bad=0
for f in "${files[@]}"; do self_contained "$f" || { bad=1; diag "refers to what it lacks: $f"; }; done
ok $bad "each names only stacks and processes it holds"
s=$(seqs "${files[@]}" | cut -d= -f2 | tr '\n' ' ')
echo "$s" | awk '{ for (i = 2; i <= NF; i++) if ($i != $(i - 1) + 1) exit 1 }'
ok $? "intervals follow each other across the files: $s"
R=0 K=0 F=0 L=0 bad=0
for f in "${files[@]}"; do
	read -r r k f2 l < <(loss_sums "$f") || bad=1
	R=$((R + r)) K=$((K + k)) F=$((F + f2)) L=$((L + l))
done
[ $bad = 0 ] && [ "$R" = $((K + F + L)) ] && [ "$K" -gt 0 ]
ok $? "over the set runs $R == kept $K + filtered $F + lost $L"
sum=$("$RPT" "${files[@]}" 2>/dev/null | awk '{ s += $NF } END { print s + 0 }')
[ "$sum" = "$K" ]
ok $? "sa-report merges the set: $sum samples == kept $K"

# Many rotations with the recovery ring buffer busy (tiny maps): samples
# taken after an interval's flip are counted in the next file, which must
# then hold their stacks again. No --keep: the set is the whole recording.
mkdir "$T/c"
"$REC" -a -F 999 --interval 0.25 --rotate 0.25s --duration 4 --stack-map-size 64 \
	--counts-map-size 64 -o "$T/c/host.sa" 2>"$T/c.err"
ok $? "sa-record --rotate 0.25s with tiny maps"
kill $busy
mapfile -t files < <(find "$T/c" -maxdepth 1 -type f | grep -E "/$NAME\$" | sort)
bad=0
for f in "${files[@]}"; do self_contained "$f" || { bad=1; diag "refers to what it lacks: $f"; }; done
ok $bad "${#files[@]} files, each names only stacks and processes it holds"
R=0 K=0 F=0 L=0
for f in "${files[@]}"; do
	read -r r k f2 l < <(loss_sums "$f")
	R=$((R + r)) K=$((K + k)) F=$((F + f2)) L=$((L + l))
done
read -r k2 r2 f3 l3 < <(sed -n 's/.*: \([0-9]*\) samples kept of \([0-9]*\) runs (\([0-9]*\) filtered, \([0-9]*\) lost.*/\1 \2 \3 \4/p' "$T/c.err")
[ "$R $K $F $L" = "$r2 $k2 $f3 $l3" ] && [ "$R" = $((K + F + L)) ]
ok $? "the set's LOSS records ($R $K $F $L) == the recorder's totals ($r2 $k2 $f3 $l3)"
s=$(seqs "${files[@]}" | cut -d= -f2 | tr '\n' ' ')
echo "$s" | awk '{ if ($1 != 0) exit 1; for (i = 2; i <= NF; i++) if ($i != $(i - 1) + 1) exit 1 }'
ok $? "every interval from 0 in exactly one file: $s"

# --call-graph dwarf: a capture's kernel stack is interned when the ring
# buffer delivers it, which can be before the rotation its interval follows.
mkdir "$T/d"
"$T/busy" 2 & busy=$!
"$REC" -q -a -F 499 --call-graph dwarf --interval 0.25 --rotate 0.25s --duration 4 \
	-o "$T/d/host.sa" 2>"$T/d.err"
rc=$?
kill $busy
mapfile -t files < <(find "$T/d" -maxdepth 1 -type f | grep -E "/$NAME\$" | sort)
bad=$rc
for f in "${files[@]}"; do self_contained "$f" || { bad=1; diag "refers to what it lacks: $f"; }; done
ok $bad "dwarf: ${#files[@]} files, each holds the kernel stacks its captures name"

# A full disk: a 160 KiB tmpfs fills within seconds at 999 Hz with a file
# every 0.5 s; the guard stops a recorder that would not notice.
mkdir "$T/full"
if mount -t tmpfs -o size=160k,mode=0700 sa-rot-test "$T/full" 2>"$T/mount.err"; then
	trap 'umount "$T/full" 2>/dev/null; jobs -p | xargs -r kill 2>/dev/null; rm -rf "$T"' EXIT
	"$T/busy" 2 & busy=$!
	timeout -s INT 60 "$REC" -F 999 --interval 0.25 --rotate 0.5s -o "$T/full/host.sa" 2>"$T/full.err"
	rc=$?
	kill $busy
	[ $rc = 1 ] && grep -q "writing $T/full/host-.*: No space left on device" "$T/full.err"
	ok $? "a full disk ends it with exit 1 ($rc) naming the file: $(tail -n 1 "$T/full.err")"
	mapfile -t files < <(ls "$T/full"/host-*.sa)
	bad=0 clean=0
	for f in "${files[@]}"; do
		i=$("$RPT" --info "$f" 2>/dev/null) || { bad=1; diag "unreadable: $f"; }
		echo "$i" | grep -q '^  finished: *cleanly$' && clean=$((clean + 1))
	done
	[ $bad = 0 ] && [ $clean -ge $((${#files[@]} - 1)) ] && [ $clean -ge 1 ]
	ok $? "every file left reads ($clean of ${#files[@]} finished cleanly, at most the last not)"
	"$RPT" "${files[@]}" >/dev/null 2>&1
	ok $? "sa-report reads the set"
	umount "$T/full"
else
	skip "cannot mount a tmpfs: $(head -n 1 "$T/mount.err")"
	skip "(no full disk)"
	skip "(no full disk)"
fi
finish
