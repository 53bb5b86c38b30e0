#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# glibc's names off the box (issue 31): a program calling libc wrappers from
# main and from a thread (samples/libcalls) is recorded with a private copy
# of libc.so.6 (same build id as the system's, whose debug file libc6-dbg
# installs). With that copy deleted and /usr/lib/debug hidden, the report
# still names the local functions only the debug file has
# (__libc_start_call_main, start_thread), shows no symbol version
# ("@@GLIBC_2.17"), and picks for one address the name a program calls
# (writev, close, clock_gettime, pthread_mutex_trylock; not __writev,
# __GI___writev, __close, pthread_mutex_trylock@@GLIBC_2.34),
# as it does on the box.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples libcalls
tmpdir
T=$tap_tmp
LIBC=$(ldd "$SA_SAMPLES/libcalls" | awk '$1 == "libc.so.6" { print $3 }')
BID=$(readelf -n "$LIBC" 2>/dev/null | sed -n 's/.*Build ID: *//p')
DBG=/usr/lib/debug/.build-id/${BID:0:2}/${BID:2}.debug
[ -n "$BID" ] && [ -f "$DBG" ] || skip_all "no debug file for $LIBC ($DBG): install libc6-dbg"
command -v unshare >/dev/null || skip_all "unshare (util-linux) not installed"

plan 9

mkdir "$T/lib" && cp "$LIBC" "$T/lib/libc.so.6"
"$SA_RECORD" -q -F 999 -o "$T/n.sa" -- env LD_LIBRARY_PATH="$T/lib" \
	"$SA_SAMPLES/libcalls" -c 2 >"$T/wl.out" 2>"$T/rec.err"
ok $? "sa-record -- libcalls -c 2 (with a private libc.so.6) exits 0"
diag_file "$T/rec.err" 5
"$SA_REPORT" --no-cache -o "$T/box.folded" "$T/n.sa" 2>"$T/rep.err"
ok $? "sa-report exits 0 on the box"
rm -rf "$T/lib"
# off the box: no libc copy at the recorded path, no debug files
unshare -m sh -c 'mount -t tmpfs none /usr/lib/debug && exec "$0" --no-cache -o "$1" "$2"' \
	"$SA_REPORT" "$T/off.folded" "$T/n.sa" 2>>"$T/rep.err"
ok $? "sa-report exits 0 off the box (libc and its debug file gone)"
diag_file "$T/rep.err" 5

# about 2,000 samples, half of them main's clock_gettime loop; names are
# checked for presence (any sample), not for a share
tot=$(folded_total "$T/off.folded" libcalls)
main=$(folded_path "$T/off.folded" libcalls "__libc_start_call_main;main")
thr=$(folded_path "$T/off.folded" libcalls "start_thread;io_main")
unk=$(folded_with "$T/off.folded" libcalls "[libc.so.6]")
diag "off the box: $tot samples, __libc_start_call_main;main $main, start_thread;io_main $thr, [libc.so.6] $unk"
[ "$tot" -ge 500 ] && [ "$main" -gt 0 ]
ok $? "off the box: __libc_start_call_main named ($main of $tot samples)"
[ "$thr" -gt 0 ]
ok $? "off the box: start_thread named ($thr samples)"
# every libc address a sample has is in a function its debug file names
[ "$((unk * 100))" -le "$tot" ]
ok $? "off the box: at most 1% of samples pass through [libc.so.6] ($unk)"
# (open@plt is a PLT entry's name, not a version)
vers=$(grep -ohE '[^;]*@@?[A-Z][^; ]*' "$T/off.folded" "$T/box.folded" | sort -u | head -3)
[ -z "$vers" ]
ok $? "no symbol version in a name${vers:+ (}$(echo $vers)${vers:+)}"

# names: what each wrapper is called, on and off the box
# (on the box, libc's DWARF adds an inline frame under writev that it
# names by its linkage name, __GI___writev: not a symbol's name)
aliases()
{
	local f=$1 bad
	bad=$(grep -oE ';(__writev|__close|__GI___close|__clock_gettime|__libc_open64|__GI___libc_open|sendfile64);' "$f" | sort -u | tr '\n' ' ')
	grep -q ';io_main;writev;' "$f" && grep -q ';close;' "$f" && grep -q ';clock_gettime;' "$f" &&
		grep -q ';sendfile;' "$f" && grep -qE ';pthread_mutex_trylock( |$)' "$f" && [ -z "$bad" ]
	ok $? "$2: writev, close, clock_gettime, sendfile, pthread_mutex_trylock named as called${bad:+ (also: $bad)}"
}
aliases "$T/off.folded" "off the box"
aliases "$T/box.folded" "on the box"
done_testing
