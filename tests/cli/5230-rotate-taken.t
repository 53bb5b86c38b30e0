#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (records -a)
# sa-test: san
# 5230-rotate-taken.t - --rotate in a world-writable directory where user
# nobody planted every name the set would take in the next 12 s (one per
# millisecond: links to a root-owned file). Each file gets its name with a
# random suffix instead (docs/deploy.md, "Names"), the recording lasts its
# --duration and exits 0, and no planted link is followed, moved or removed.
. "$(dirname "$0")/2000-record-lib.sh"
need_bpf
command -v setpriv >/dev/null 2>&1 || skip_all "setpriv not installed"
[ -x /usr/bin/python3 ] || skip_all "/usr/bin/python3 not installed"
RPT=$SA_BUILD/bin/sa-report
echo "1..6"

chmod 711 "$T"
mkdir "$T/w"
chmod 1777 "$T/w"
echo "root's" >"$T/target"
chmod 600 "$T/target"
sum0=$(md5sum <"$T/target")
# the names of 12 s from now, one per millisecond: every start the
# recorder's files can have, from its start (BPF load included) to past
# its --duration 8
setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 - "$T/w" "$T/target" <<'PYEOF'
import os, sys, time
d, target = sys.argv[1], sys.argv[2]
t0 = int(time.time() * 1000)
for ms in range(t0, t0 + 12000):
    s = time.strftime("%Y%m%dT%H%M%S", time.gmtime(ms // 1000))
    os.symlink(target, "%s/h-%s.%03dZ.sa" % (d, s, ms % 1000))
PYEOF
planted=$(find "$T/w" -maxdepth 1 -type l -user nobody | wc -l)
[ "$planted" = 12000 ]
ok $? "nobody planted 12000 links: $planted"

build_busy
"$T/busy" 1 & busy=$!
t0=$(date +%s.%N)
"$REC" -q -a --rotate 2s --duration 8 -o "$T/w/h.sa" 2>"$T/rec.err"
rc=$?
t1=$(date +%s.%N)
kill $busy
ok $rc "sa-record --rotate 2s --duration 8 exits 0 beside them (took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s)"
[ $rc = 0 ] || diag_file "$T/rec.err"

mapfile -t files < <(find "$T/w" -maxdepth 1 -type f -user root -name 'h-*.sa' | sort)
bad=0
for f in "${files[@]}"; do
	basename "$f" | grep -qE '^h-[0-9]{8}T[0-9]{6}\.[0-9]{3}Z-[0-9a-f]{8}\.sa$' || bad=1
done
# a file rotates after the first interval that began 2 s or more after it
# did (record/output/rotate.c): 2 or 3 intervals of 1 s a file, so 8 or 9
# intervals make 3 to 5 files, by where the intervals fall
[ ${#files[@]} -ge 3 ] && [ $bad = 0 ]
ok $? "${#files[@]} files, each under its name with a random suffix"

# 8 s recorded: the set's intervals (1 s each) follow each other, 8 or 9 of them
mapfile -t seqs < <(for f in "${files[@]}"; do "$DUMP" "$f" | awk '/^INTERVAL/ { print $2 }' | uniq; done)
s="${seqs[*]}"
echo "$s" | tr -d 'seq=' | awk '{ if (NF < 8) exit 1; for (i = 2; i <= NF; i++) if ($i != $(i - 1) + 1) exit 1 }'
ok $? "8 s of intervals, one after another across the files: $s"

bad=0
for f in "${files[@]}"; do
	"$RPT" --info "$f" 2>/dev/null | grep -q '^  finished: *cleanly$' || { bad=1; diag "not clean: $f"; }
done
ok $bad "--info says each finished cleanly"

links=$(find "$T/w" -maxdepth 1 -type l -user nobody -lname "$T/target" | wc -l)
[ "$links" = 12000 ] && [ "$(md5sum <"$T/target")" = "$sum0" ] &&
	[ "$(stat -c %U:%a "$T/target")" = root:600 ] && ! ls "$T/w" | grep -q -e tmp -e '\.old'
ok $? "the 12000 links and their target untouched ($links links), no .old, no temporary file"
finish
