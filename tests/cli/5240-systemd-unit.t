#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (records -a)
# 5240-systemd-unit.t - the always-on unit (docs/systemd/sa-record.service,
# docs/deploy.md "systemd") bounds what the recorder may take: MemoryHigh,
# MemoryMax, TasksMax, LimitNOFILE, --keep-size in ExecStart, a system call
# allow list that lets bpf and perf_event_open through. With no systemd as
# PID 1 here, its ExecStart is run as the unit would run it: user nobody
# with only the unit's ambient capabilities and bounding set, no_new_privs,
# RLIMIT_MEMLOCK 64 KiB, RLIMIT_NOFILE the unit's, under strace: it records
# cleanly, every system call it makes is one the filter allows, its memory
# (cgroup v1: BPF maps included) stays under MemoryHigh and its threads
# under TasksMax; docs/security.md and deploy.md name the unit's
# capabilities, and not CAP_SYS_RESOURCE.
. "$(dirname "$0")/lib.sh"
require_report
require_root_bpf
command -v systemd-analyze >/dev/null 2>&1 || skip_all "systemd-analyze not installed"
command -v strace >/dev/null 2>&1 || skip_all "strace not installed"
command -v setpriv >/dev/null 2>&1 || skip_all "setpriv not installed"
tmpdir
T=$tap_tmp
U=$SA_SRC/docs/systemd/sa-record.service
plan 10

key() { sed -n "s/^$1=//p" "$U" | tr '\n' ' ' | sed 's/ $//'; }

# the unit with ExecStart at this build (the installed path and the man
# page do not exist here)
sed "s|/usr/local/bin/sa-record|$SA_RECORD|; /^Documentation=/d" "$U" >"$T/sa-record.service"
systemd-analyze verify "$T/sa-record.service" >"$T/verify" 2>&1
ok $? "systemd-analyze verify: no unknown or bad setting"
diag_file "$T/verify" 5
exposure=$(systemd-analyze security --offline=yes "$T/sa-record.service" 2>/dev/null |
	sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
[ -n "$exposure" ] && awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }'
ok $? "systemd-analyze security --offline: exposure ${exposure:-?} <= 2.0"

mh=$(key MemoryHigh) mm=$(key MemoryMax) tm=$(key TasksMax) nf=$(key LimitNOFILE)
exec_start=$(key ExecStart)
[ -n "$mh" ] && [ -n "$mm" ] && [ -n "$tm" ] && [ -n "$nf" ] &&
	[[ " $exec_start " == *" --keep-size "* ]]
ok $? "MemoryHigh=$mh MemoryMax=$mm TasksMax=$tm LimitNOFILE=$nf, --keep-size in ExecStart"

# the allow list, expanded: @groups of systemd-analyze syscall-filter, less
# the ~ lines' groups
systemd-analyze syscall-filter >"$T/groups" 2>/dev/null
expand()
{
	awk -v want="$1" '
	/^@/ { g = $1; next }
	/^ +#/ || NF == 0 { next }
	{ m[g] = m[g] " " $1 }
	function ex(x, i, n, a) {
		if (x !~ /^@/) { out[x] = 1; return }
		n = split(m[x], a, " ")
		for (i = 1; i <= n; i++) ex(a[i])
	}
	END { n = split(want, w, " "); for (i = 1; i <= n; i++) ex(w[i]); for (s in out) print s }' "$T/groups" | sort -u
}
expand "$(sed -n 's/^SystemCallFilter=\([^~]\)/\1/p' "$U" | tr '\n' ' ')" >"$T/allow"
expand "$(sed -n 's/^SystemCallFilter=~//p' "$U" | tr '\n' ' ')" >"$T/deny"
comm -23 "$T/allow" "$T/deny" >"$T/allowed"
grep -qx bpf "$T/allowed" && grep -qx perf_event_open "$T/allowed"
ok $? "the filter lets bpf and perf_event_open through ($(wc -l <"$T/allowed") calls allowed)"

# ExecStart as the unit runs it, for 4 s, into $T/out
caps=$(key AmbientCapabilities | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
bound=$(key CapabilityBoundingSet | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
mkdir "$T/out"
chown nobody "$T/out"
chmod 711 "$T"
args=$(echo "$exec_start" | sed "s|^[^ ]*||; s|-o /var/lib/sa/|-o $T/out/|")
CG=
if [ -d /sys/fs/cgroup/memory ] && mkdir "/sys/fs/cgroup/memory/sa-5240-$$" 2>/dev/null; then
	CG=/sys/fs/cgroup/memory/sa-5240-$$
fi
(
	[ -n "$CG" ] && echo $BASHPID >"$CG/cgroup.procs"
	# shellcheck disable=SC2086 # ExecStart's words
	exec prlimit --memlock=65536 --nofile="$nf" setpriv --reuid=65534 --regid=65534 \
		--clear-groups --no-new-privs --inh-caps="$caps" --ambient-caps="$caps" \
		--bounding-set=-all,"$bound" -- \
		strace -f -qq -c -o "$T/out/strace" "$SA_RECORD" $args --duration 4
) 2>"$T/rec.err" &
pid=$!
threads=0
for _ in $(seq 30); do
	sleep 0.1
	r=$(pgrep -f -n "^$SA_RECORD .*-o $T/out/")
	[ -n "$r" ] || continue
	n=$(awk '/^Threads:/ { print $2 }' "/proc/$r/status" 2>/dev/null)
	[ -n "$n" ] && [ "$n" -gt "$threads" ] && threads=$n
done
wait $pid
rc=$?
mapfile -t files < <(find "$T/out" -name 'host-*.sa')
info=$("$SA_REPORT" --info "${files[@]}" 2>/dev/null)
[ $rc = 0 ] && [ ${#files[@]} = 1 ] && echo "$info" | grep -q '^  finished: *cleanly$' &&
	echo "$info" | grep -qE 'contents: .* [1-9][0-9]* kernel symbols'
ok $? "ExecStart as user nobody with $(key AmbientCapabilities), memlock 64 KiB: exit $rc, a clean file with kernel symbols"
diag_file "$T/rec.err" 5

awk 'NF >= 4 && $NF ~ /^[a-z_0-9]+$/ && $NF != "total" && $NF != "syscall" { print $NF }' \
	"$T/out/strace" | sort -u >"$T/used"
comm -23 "$T/used" "$T/allowed" >"$T/refused"
[ -s "$T/used" ] && [ ! -s "$T/refused" ]
ok $? "each of the $(wc -l <"$T/used") system calls it made is allowed: refused: $(tr '\n' ' ' <"$T/refused")"

[ "$threads" -gt 0 ] && [ "$threads" -lt "$tm" ]
ok $? "threads: at most $threads seen, under TasksMax=$tm"

if [ -n "$CG" ]; then
	peak=$(($(cat "$CG/memory.max_usage_in_bytes") >> 20))
	rmdir "$CG"
	[ "$peak" -lt "${mh%M}" ]
	ok $? "memory of its cgroup (BPF maps included): peak $peak MiB, under MemoryHigh=$mh"
else
	skip "no cgroup v1 memory controller to measure the peak"
fi

sec=$(grep -m1 '^| sa-record |' "$SA_SRC/docs/security.md")
bad=0
for c in $(key AmbientCapabilities); do
	echo "$sec" | grep -q "$c" || bad=1
	grep -q "$c" "$SA_SRC/docs/deploy.md" || bad=1
done
ok $bad "docs/security.md's row and docs/deploy.md name each of $(key AmbientCapabilities)"
echo "$sec" | grep -q CAP_SYS_RESOURCE
ok $([ $? = 1 ]; echo $?) "docs/security.md does not ask for CAP_SYS_RESOURCE: $(echo "$sec" | cut -d'|' -f3)"
done_testing
