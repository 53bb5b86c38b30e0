#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# CPython frames per thread (issue 33): two threads of one Python program
# run different functions, one of them mostly without the GIL (zlib
# compresses with the GIL released); each thread's samples (--show-tid)
# name its own function and never the other's.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
tmpdir
T=$tap_tmp
PY=/usr/bin/python3.11

plan 4

[ -x "$PY" ] || { skip 4 "$PY not installed (Debian 12's python3)"; done_testing; }
cat >"$T/threads.py" <<'PY'
import sys, threading, time, zlib

DATA = bytes(range(256)) * 4096

def th_spin(out):
    t0 = time.thread_time()
    n = 0
    while time.thread_time() - t0 < 2.0:
        for i in range(200):
            n += i
    out.append(threading.get_native_id())

def th_zlib(out):
    t0 = time.thread_time()
    while time.thread_time() - t0 < 2.0:
        zlib.compress(DATA, 6)
    out.append(threading.get_native_id())

spin, z = [], []
a = threading.Thread(target=th_spin, args=(spin,))
b = threading.Thread(target=th_zlib, args=(z,))
a.start(); b.start(); a.join(); b.join()
with open(sys.argv[1], "w") as f:
    f.write("%d %d\n" % (spin[0], z[0]))
PY
"$SA_RECORD" -q -F 999 -o "$T/t.sa" -- "$PY" "$T/threads.py" "$T/tids" 2>"$T/rec.err"
ok $? "sa-record -- python3.11 with two threads exits 0"
read -r ts tz <"$T/tids"
"$SA_REPORT" --show-tid -o "$T/t.folded" "$T/t.sa" 2>"$T/rep.err"
ok $? "sa-report --show-tid exits 0"
# of_tid TID FUNC: samples of thread TID whose stack holds FUNC_[p]
of_tid() { awk -v t="/$1;" -v fr=";$2_[p];" '{ n = $NF; st = $0; sub(/ [0-9]+$/, "", st); if (index(st, t) && index(st ";", fr)) s += n } END { print s + 0 }' "$T/t.folded"; }
own=$(of_tid "$ts" th_spin); other=$(of_tid "$ts" th_zlib)
# 2 s of each thread's CPU at 999 Hz: about 2,000 samples each (2,021 and
# 1,506 here: the zlib thread's samples in madvise have no Python frames,
# docs/python.md); a wrong thread state would show as the other name
[ "$own" -ge 1000 ] && [ "$other" -eq 0 ]
ok $? "thread $ts: $own samples under th_spin, $other under th_zlib (want >= 1000 and 0)"
own=$(of_tid "$tz" th_zlib); other=$(of_tid "$tz" th_spin)
[ "$own" -ge 1000 ] && [ "$other" -eq 0 ]
ok $? "thread $tz (GIL released in zlib): $own samples under th_zlib, $other under th_spin"

done_testing
