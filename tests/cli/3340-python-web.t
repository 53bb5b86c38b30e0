#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# CPython frames of code nobody here wrote (issue 33, docs/python.md):
# samples/pyweb/app.py, a small web app on Python's http.server
# (ThreadingHTTPServer, a thread per connection), under load from its
# client (four threads of keep-alive GETs). Its three routes time
# themselves with time.thread_time(). The server's stacks read as Python
# does: threading's bootstrap, socketserver's and http.server's request
# handling, the app's Handler.do_GET, then the route; each route's share
# of the samples under the three is within 5 points of its own clock; the
# client's stacks name its own loop and none of the server's handlers.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
tmpdir
T=$tap_tmp
PY=/usr/bin/python3.11

plan 8

[ -x "$PY" ] || { skip 8 "$PY not installed (Debian 12's python3)"; done_testing; }

# until the three routes used 3 s of CPU in all (their own thread clocks)
"$SA_RECORD" -q -F 999 -o "$T/web.sa" -- "$PY" "$SA_SRC/samples/pyweb/app.py" 3 "$T/clocks" \
	2>"$T/rec.err"
rc=$?
read -r _ okn failed <<<"$(grep '^client ' "$T/clocks" 2>/dev/null)"
[ "$rc" -eq 0 ] && [ "${okn:-0}" -ge 100 ] && [ "${failed:-1}" -eq 0 ]
ok $? "sa-record -- python3.11 app.py 3: exit $rc, the client got ${okn:-?} answers, ${failed:-?} failed (want >= 100, 0)"
diag_file "$T/rec.err" 5
diag_file "$T/clocks" 5

"$SA_REPORT" -o "$T/web.folded" "$T/web.sa" 2>"$T/rep.err"
ok $? "sa-report exits 0"

# under FOLDED FUNC: samples whose stack holds the Python frame FUNC_[p]
under() { folded_with "$1" "" "$2_[p]"; }
p=$(under "$T/web.folded" route_primes)
j=$(under "$T/web.folded" route_json)
g=$(under "$T/web.folded" route_page)
tot=$((p + j + g))
# 3 s of their CPU at 999 Hz: about 3,000 samples (a few of them lose
# their Python frames: madvise's TLB flushes, docs/python.md)
ge "$tot" 2000
ok $? "$tot samples under the three routes (want >= 2000)"

# Binomial sd of a share near 1/2 at n >= 2,000: 1.1 points, so 5 points
# is 4.5 sd: P = 7e-6 ... (route_primes read +1.5..+2.3 points high
# before frame-pointer walks were cut at their first zero word: 9% of the
# server's samples had lost their Python frames).
clk() { awk -v f="$1" '$1 == "route" { t += $3; if ($2 == f) v = $3 } END { printf "%.2f", t ? 100 * v / t : 0 }' "$T/clocks"; }
bad=0 msg=""
for f in route_primes route_json route_page; do
	got=$(pct "$(under "$T/web.folded" $f)" "$tot")
	want=$(clk $f)
	within "$got" "$want" 5 || bad=1
	msg="$msg $f $got% (clock $want%)"
done
[ $bad -eq 0 ]
ok $? "routes' shares within 5 points of their clocks:$msg"

# the server's request path: every route sample runs through http.server's
# handler into the app's do_GET, under a thread of socketserver's
path=$(awk '{ n = $NF; st = $0; sub(/ [0-9]+$/, "", st)
	if (index(st, ";ThreadingMixIn.process_request_thread_[p];") &&
	    index(st, ";BaseHTTPRequestHandler.handle_one_request_[p];Handler.do_GET_[p];route_")) t += n
	} END { print t + 0 }' "$T/web.folded")
ge "$(pct "$path" "$tot")" 95
ok $? "$(pct "$path" "$tot")% of the routes' samples read ...;process_request_thread;...;handle_one_request;Handler.do_GET;route_... (want >= 95)"

# json's route reaches json's own Python frames (dumps -> JSONEncoder.encode)
jj=$(awk '{ n = $NF; if (index($0, ";route_json_[p];dumps_[p];JSONEncoder.encode_[p];")) t += n } END { print t + 0 }' "$T/web.folded")
[ "$jj" -gt 0 ]
ok $? "route_json: $jj samples run json.dumps;JSONEncoder.encode (want > 0)"

# Python frames in nearly every sample of the two processes: those
# without are the interpreters' start-up (before the recorder answers
# their wake-up) and exit, 3.4% here; 7-9% when a zero word in a native
# frame-pointer walk hid the Python frames after it (before py_cut_step())
all=$(folded_total "$T/web.folded")
withpy=$(awk '/_\[p\]/ { t += $NF } END { print t + 0 }' "$T/web.folded")
ge "$(pct "$withpy" "$all")" 95
ok $? "$withpy of $all samples ($(pct "$withpy" "$all")%) with Python frames (want >= 95%)"

# the client: its own loop named, never a handler of the server's
cl=$(under "$T/web.folded" client_loop)
mixed=$(awk '{ if (index($0, "client_loop_[p]") && index($0, "Handler.do_GET_[p]")) t += $NF } END { print t + 0 }' "$T/web.folded")
[ "$cl" -gt 0 ] && [ "$mixed" -eq 0 ]
ok $? "client: $cl samples under client_loop, $mixed of them with the server's do_GET (want > 0, 0)"

done_testing
