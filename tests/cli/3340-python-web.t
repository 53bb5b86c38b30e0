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
# On Debian's python3.11 and on pyenv's 3.10 and 3.13 (issue 47; 3.10 has
# no co_qualname: its frames are named without their class).
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
tmpdir
T=$tap_tmp
PYROOT=${PYENV_ROOT:-$HOME/.pyenv}
list=("debian:/usr/bin/python3.11")
for v in 3.10 3.13; do
	py=$(ls -d "$PYROOT"/versions/"$v".*/bin/python"$v" 2>/dev/null | sort -V | tail -n 1)
	list+=("$v:${py:-$PYROOT/versions/$v.x/bin/python$v}")
done

plan $((8 * ${#list[@]}))

# under FOLDED FUNC: samples whose stack holds the Python frame FUNC_[p]
under() { folded_with "$1" "" "$2_[p]"; }

# web LABEL PY: eight test points
web()
{
	local lab=$1 PY=$2
	# q CLASS.NAME: the frame's name as this version gives it
	if "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
		q() { echo "$1"; }
	else
		q() { echo "${1#*.}"; }
	fi

	# until the three routes used 3 s of CPU in all (their own thread clocks)
	"$SA_RECORD" -q -F 999 -o "$T/$lab.sa" -- "$PY" "$SA_SRC/samples/pyweb/app.py" 3 "$T/$lab.clocks" \
		2>"$T/$lab.rec.err"
	rc=$?
	read -r _ okn failed <<<"$(grep '^client ' "$T/$lab.clocks" 2>/dev/null)"
	[ "$rc" -eq 0 ] && [ "${okn:-0}" -ge 100 ] && [ "${failed:-1}" -eq 0 ]
	ok $? "$lab: sa-record -- $PY app.py 3: exit $rc, the client got ${okn:-?} answers, ${failed:-?} failed (want >= 100, 0)"
	diag_file "$T/$lab.rec.err" 5
	diag_file "$T/$lab.clocks" 5

	"$SA_REPORT" -o "$T/$lab.folded" "$T/$lab.sa" 2>"$T/$lab.rep.err"
	ok $? "$lab: sa-report exits 0"

	p=$(under "$T/$lab.folded" route_primes)
	j=$(under "$T/$lab.folded" route_json)
	g=$(under "$T/$lab.folded" route_page)
	tot=$((p + j + g))
	# 3 s of their CPU at 999 Hz: about 3,000 samples (a few of them lose
	# their Python frames: madvise's TLB flushes, docs/python.md)
	ge "$tot" 2000
	ok $? "$lab: $tot samples under the three routes (want >= 2000)"

	# Binomial sd of a share near 1/2 at n >= 2,000: 1.1 points, so 5 points
	# is 4.5 sd: P = 7e-6 a route, 6e-5 for the three on three versions (route_primes read +1.5..+2.3 points high
	# before frame-pointer walks were cut at their first zero word: 9% of the
	# server's samples had lost their Python frames).
	clk() { awk -v f="$1" '$1 == "route" { t += $3; if ($2 == f) v = $3 } END { printf "%.2f", t ? 100 * v / t : 0 }' "$T/$lab.clocks"; }
	bad=0 msg=""
	for f in route_primes route_json route_page; do
		got=$(pct "$(under "$T/$lab.folded" $f)" "$tot")
		want=$(clk $f)
		within "$got" "$want" 5 || bad=1
		msg="$msg $f $got% (clock $want%)"
	done
	[ $bad -eq 0 ]
	ok $? "$lab: routes' shares within 5 points of their clocks:$msg"

	# the server's request path: every route sample runs through http.server's
	# handler into the app's do_GET, under a thread of socketserver's
	path=$(awk '{ n = $NF; st = $0; sub(/ [0-9]+$/, "", st)
		if (index(st, ";'"$(q ThreadingMixIn.process_request_thread)"'_[p];") &&
		    index(st, ";'"$(q BaseHTTPRequestHandler.handle_one_request)"'_[p];'"$(q Handler.do_GET)"'_[p];route_")) t += n
		} END { print t + 0 }' "$T/$lab.folded")
	ge "$(pct "$path" "$tot")" 95
	ok $? "$lab: $(pct "$path" "$tot")% of the routes' samples read ...;process_request_thread;...;handle_one_request;Handler.do_GET;route_... (want >= 95)"

	# json's route reaches json's own Python frames (dumps -> JSONEncoder.encode)
	jj=$(awk '{ n = $NF; if (index($0, ";route_json_[p];dumps_[p];'"$(q JSONEncoder.encode)"'_[p];")) t += n } END { print t + 0 }' "$T/$lab.folded")
	[ "$jj" -gt 0 ]
	ok $? "$lab: route_json: $jj samples run json.dumps;JSONEncoder.encode (want > 0)"

	# Python frames in nearly every sample of the two processes: those
	# without are the interpreters' start-up (before the recorder answers
	# their wake-up) and exit, 3.4% here; 7-9% when a zero word in a native
	# frame-pointer walk hid the Python frames after it (before py_cut_step())
	all=$(folded_total "$T/$lab.folded")
	withpy=$(awk '/_\[p\]/ { t += $NF } END { print t + 0 }' "$T/$lab.folded")
	ge "$(pct "$withpy" "$all")" 95
	ok $? "$lab: $withpy of $all samples ($(pct "$withpy" "$all")%) with Python frames (want >= 95%)"

	# the client: its own loop named, never a handler of the server's
	cl=$(under "$T/$lab.folded" client_loop)
	mixed=$(awk '{ if (index($0, "client_loop_[p]") && index($0, "'"$(q Handler.do_GET)"'_[p]")) t += $NF } END { print t + 0 }' "$T/$lab.folded")
	[ "$cl" -gt 0 ] && [ "$mixed" -eq 0 ]
	ok $? "$lab: client: $cl samples under client_loop, $mixed of them with the server's do_GET (want > 0, 0)"
}

for e in "${list[@]}"; do
	lab=${e%%:*} py=${e#*:}
	if [ -x "$py" ]; then
		web "$lab" "$py"
	else
		skip 8 "$lab: $py not installed"
	fi
done

done_testing
