#!/bin/bash
# SPDX-License-Identifier: MIT
# 5070-privilege.t - least privilege (docs/reliability.md, "Least
# privilege"): the recording is mode 0600 whatever the umask; an output
# path that is a symbolic link is never followed (the link is moved aside
# to FILE.old and a new file is created with O_EXCL | O_NOFOLLOW); sa-report
# runs as user nobody on a copied file, executes nothing and opens nothing
# for writing but its -o file. sa-record run without privileges fails
# before it touches an existing recording (twice in a row: the second run
# must not move a stub of the first over FILE.old) and says what it needs.
. "$(dirname "$0")/lib.sh"
require_report
require_root_bpf
tmpdir
T=$tap_tmp
plan 17

asnobody()
{
	if command -v setpriv >/dev/null; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups --no-new-privs \
			--inh-caps=-all --bounding-set=-all -- "$@"
	else
		runuser -u nobody -- "$@"
	fi
}

# umask 0 would make a plain creat(0666) world-writable.
(umask 000 && "$SA_RECORD" -q -F 99 --duration 0.3 -o "$T/m.sa")
mode=$(stat -c %a "$T/m.sa")
[ "$mode" = 600 ]
ok $? "the recording is mode 0600 under umask 000 (got $mode)"

echo precious >"$T/target"
ln -s "$T/target" "$T/link.sa"
"$SA_RECORD" -q -F 99 --duration 0.3 -o "$T/link.sa" 2>"$T/link.err"
rc=$?
[ "$(cat "$T/target")" = precious ] && [ "$(stat -c %s "$T/target")" = 9 ]
ok $? "a symlink at the output path: its target is untouched (exit $rc)"
if [ $rc = 0 ]; then
	[ -f "$T/link.sa" ] && [ ! -L "$T/link.sa" ] && [ "$(stat -c %a "$T/link.sa")" = 600 ]
	ok $? "the recording replaced the link: a regular file, mode $(stat -c %a "$T/link.sa")"
	[ -L "$T/link.sa.old" ] && [ "$(readlink "$T/link.sa.old")" = "$T/target" ]
	ok $? "the link itself was moved aside, not followed: link.sa.old -> $(readlink "$T/link.sa.old")"
else
	grep -q 'link.sa' "$T/link.err"
	ok $? "refused with a message naming the path: $(head -n 1 "$T/link.err")"
	skip 1 "refused: nothing moved aside"
fi

# A dangling link must not create its target either.
ln -s "$T/created-through-link" "$T/dangling.sa"
"$SA_RECORD" -q -F 99 --duration 0.3 -o "$T/dangling.sa" 2>/dev/null
[ ! -e "$T/created-through-link" ]
ok $? "a dangling symlink: its target is not created"
# A link to a directory's file where the recorder cannot move it aside.
mkdir "$T/ro" && ln -s "$T/target" "$T/ro/x.sa" && chattr +i "$T/ro" 2>/dev/null
if lsattr -d "$T/ro" 2>/dev/null | grep -q -- '-i-'; then
	"$SA_RECORD" -q -F 99 --duration 0.3 -o "$T/ro/x.sa" 2>"$T/ro.err"
	rc=$?
	chattr -i "$T/ro"
	[ $rc != 0 ] && [ "$(cat "$T/target")" = precious ] && grep -q 'x.sa' "$T/ro.err"
	ok $? "link that cannot be moved aside: refused (exit $rc), target intact: $(head -n 1 "$T/ro.err")"
else
	chattr -i "$T/ro" 2>/dev/null
	skip 1 "chattr +i unsupported on $T"
fi

# sa-record as nobody, twice, over a real recording in a directory nobody
# may write: both fail, and the recording is byte for byte what it was.
mkdir "$T/unpriv"
cp "$SA_RECORD" "$T/unpriv/sa-record"
cp "$T/m.sa" "$T/unpriv/x.sa"
cp "$T/m.sa" "$T/orig.sa"
# a second recording with an older one beside it as FILE.old
cp "$T/m.sa" "$T/unpriv/y.sa"
cp "$T/link.sa" "$T/unpriv/y.sa.old" 2>/dev/null || echo older >"$T/unpriv/y.sa.old"
cp "$T/unpriv/y.sa.old" "$T/orig.old"
chown -R nobody "$T/unpriv"
rcs=
for out in x y; do
	for try in 1 2; do
		asnobody "$T/unpriv/sa-record" -q -F 99 --duration 0.3 -o "$T/unpriv/$out.sa" \
			2>"$T/unpriv.err$try"
		rcs="$rcs $?"
	done
done
[ "$rcs" = " 1 1 1 1" ]
ok $? "sa-record without privileges fails, twice over each of two recordings (exit$rcs)"
cmp -s "$T/orig.sa" "$T/unpriv/x.sa" && cmp -s "$T/orig.sa" "$T/unpriv/y.sa" &&
	cmp -s "$T/orig.old" "$T/unpriv/y.sa.old"
ok $? "the recordings are intact after two failed runs each: $(stat -c %s "$T/unpriv/x.sa") bytes, identical, and y.sa.old too"
left=$(cd "$T/unpriv" && ls -A | grep -v -x -e sa-record -e x.sa -e y.sa -e y.sa.old | tr '\n' ' ')
[ -z "$left" ]
ok $? "no x.sa.old and no temporary file left behind${left:+: $left}"
grep -q 'needs root, or CAP_BPF and CAP_PERFMON' "$T/unpriv.err1"
ok $? "the error names what is needed: $(grep needs "$T/unpriv.err1")"
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
nobpf=$(cat /proc/sys/kernel/unprivileged_bpf_disabled)
grep -q "kernel.perf_event_paranoid = $paranoid, kernel.unprivileged_bpf_disabled = $nobpf\$" \
	"$T/unpriv.err2" && [ "$(wc -l <"$T/unpriv.err2")" -le 3 ]
ok $? "and this host's sysctls ($paranoid, $nobpf), in at most 3 lines: $(tail -n 1 "$T/unpriv.err2")"

# sa-report as nobody, on a copy, from a copy of the binary (the build tree
# may not be readable by nobody).
mkdir "$T/nobody"
cp "$SA_REPORT" "$T/nobody/sa-report"
cp "$T/m.sa" "$T/nobody/copy.sa"
chmod 644 "$T/nobody/copy.sa"
chown nobody "$T/nobody"
asnobody "$T/nobody/sa-report" "$T/nobody/copy.sa" >"$T/nobody.folded" 2>"$T/nobody.err"
rc=$?
n=$(folded_total "$T/nobody.folded")
ok $rc "sa-report as nobody (no capabilities): exit $rc, $n samples $(head -n 1 "$T/nobody.err")"
asnobody "$T/nobody/sa-report" --svg -o "$T/nobody/out.svg" "$T/nobody/copy.sa" 2>"$T/nobody.err"
rc=$?
[ $rc = 0 ] && [ -s "$T/nobody/out.svg" ]
ok $? "sa-report --svg -o as nobody: exit $rc"
asnobody "$T/nobody/sa-report" --info "$T/nobody/copy.sa" >/dev/null 2>&1
ok $? "sa-report --info as nobody"

if command -v strace >/dev/null; then
	# LeakSanitizer cannot run under ptrace; the other ASan checks can.
	# -y names each fd's file, so writes into the symbol cache's directory
	# (docs/symcache.md) are told apart from writes anywhere else.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 XDG_CACHE_HOME=$T/xdg \
		strace -f -qq -y -o "$T/strace" -e trace=execve,execveat,openat,open,creat \
		"$SA_REPORT" --svg -o "$T/s.svg" "$T/m.sa" 2>"$T/strace.err"
	rc=$?
	execs=$(grep -cE 'execve(at)?\(' "$T/strace")
	[ $rc = 0 ] && [ "$execs" = 1 ]
	ok $? "sa-report executes nothing: $execs execve (its own), exit $rc $(head -n 1 "$T/strace.err")"
	writes=$(grep -E 'O_WRONLY|O_RDWR|O_CREAT|creat\(' "$T/strace" | grep -v 's.svg' |
		grep -v "<$T/xdg/sa>" | grep -v '= -1 ')
	[ -z "$writes" ]
	ok $? "sa-report opens nothing for writing but its -o file and its cache ${writes:+: $writes}"
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 XDG_CACHE_HOME=$T/xdg2 \
		strace -f -qq -y -o "$T/strace2" -e trace=openat,open,creat,mkdir,mkdirat \
		"$SA_REPORT" --no-cache --svg -o "$T/s2.svg" "$T/m.sa" 2>/dev/null
	writes=$(grep -E 'O_WRONLY|O_RDWR|O_CREAT|creat\(|mkdir' "$T/strace2" | grep -v 's2.svg' |
		grep -v '= -1 ')
	[ -z "$writes" ] && [ ! -e "$T/xdg2" ]
	ok $? "with --no-cache, nothing but its -o file ${writes:+: $writes}"
else
	skip 3 "strace not installed"
fi
done_testing
