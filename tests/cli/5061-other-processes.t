#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (records -a and counts other processes' records)
# sa-test: san
# 5061-other-processes.t - a recording of some processes holds nothing of
# the others (docs/security.md, "What a recording holds"). sa-record's side
# band sees every fork, exec and mapping of the host; with -p, -t and
# `-- CMD` only the targets' (and with `-- CMD` their children's) PROC, MAP,
# COMM and EXIT records may be written, so the names and paths of other
# users' programs never leave the host in a file. Before the fix a
# `-- sleep 1` beside a busy host held 199 PROC and 1,140 MAP records of
# other processes. Not statistical: a name is in the file or not.
. "$(dirname "$0")/2000-record-lib.sh"
need_bpf
echo "1..10"

# the decoy: another program, started again and again while each recording
# runs, with a name and a path found nowhere else
cp /bin/sleep "$T/sadecoyprog"
cp /bin/sleep "$T/sakidprog"
cp /bin/sleep "$T/satargetprog"
(while :; do "$T/sadecoyprog" 0.02; done) &
decoy=$!

# mentions FILE WORD: records of the dump of FILE that name WORD
mentions() { "$DUMP" "$1" | grep -c "$2"; }

# 1-3. -- CMD: the shell and the children it forks are recorded, not the decoy
"$REC" -q -o "$T/cmd.sa" -- sh -c "\"$T/sakidprog\" 0.3; \"$T/sakidprog\" 0.3" 2>"$T/cmd.err"
ok $? "sa-record -- sh -c 'sakidprog; sakidprog' exits 0"
n=$(mentions "$T/cmd.sa" sadecoyprog)
[ "$n" = 0 ]
ok $? "-- CMD: no record names the other program ($n)"
k=$("$DUMP" "$T/cmd.sa" | grep -c '^PROC.*comm=sakidprog')
[ "$k" -ge 2 ]
ok $? "-- CMD: the children the command forked are there ($k PROC records of sakidprog)"

# 4-5. -p: a running process
"$T/satargetprog" 30 &
tpid=$!
"$REC" -q -p $tpid --duration 1 -o "$T/pid.sa" 2>"$T/pid.err"
ok $? "sa-record -p PID --duration 1 exits 0"
n=$(mentions "$T/pid.sa" sadecoyprog)
t=$("$DUMP" "$T/pid.sa" | grep -c "^PROC pid=$tpid .*comm=satargetprog")
[ "$n" = 0 ] && [ "$t" -ge 1 ]
ok $? "-p: no record names the other program ($n), the target's PROC is there ($t)"

# 6-7. -t: the target's thread; its process is the target
"$REC" -q -t $tpid --duration 1 -o "$T/tid.sa" 2>"$T/tid.err"
ok $? "sa-record -t TID --duration 1 exits 0"
n=$(mentions "$T/tid.sa" sadecoyprog)
[ "$n" = 0 ]
ok $? "-t: no record names the other program ($n)"

# 8-10. -a: the whole host, the decoy included (else the checks above
# could pass because the decoy never ran). With symbols embedded, -a
# writes only the mappings samples fall in (record/meta/maptab_defer.c),
# and the decoy, asleep, is seldom sampled; without them it writes every
# mapping the side band saw, the decoy's included.
"$REC" -q -a --no-embed-symbols --duration 1 -o "$T/all.sa" 2>"$T/all.err"
ok $? "sa-record -a --no-embed-symbols --duration 1 exits 0"
n=$("$DUMP" "$T/all.sa" | grep -c '^PROC.*comm=sadecoyprog')
[ "$n" -ge 2 ]
ok $? "-a: the other program is recorded ($n PROC records), as it should be"
kill $tpid $decoy 2>/dev/null
wait $tpid $decoy 2>/dev/null
n=$("$DUMP" "$T/all.sa" | grep -c "^MAP.*sadecoyprog")
[ "$n" -ge 1 ]
ok $? "-a: and its mappings ($n MAP records)"
finish
