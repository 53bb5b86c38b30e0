#!/bin/bash
# SPDX-License-Identifier: MIT
# 3201-jit-budgets.t - perf maps cost bounded bytes over the run (issue 29,
# docs/security.md "JIT maps"): each file (device, inode), each owner uid
# and each process reads within a budget kept across --rotate, and a budget
# spent is counted in the summary. Smaller budgets here (the test knob
# SA_RECORD_TEST_JIT_BUDGETS=PROC,FILE,USER bytes) stand for the real ones
# (256 MiB, 256 MiB, 512 MiB an hour): 20 processes of user nobody whose
# maps are hard links to one 20 MiB file, recorded with --rotate 1s, read
# at most the file's 2 MiB; 20 processes with 20 files of their own read at
# most the user's 2 MiB. Without the budgets (offsets reset at each
# rotation) the first read 3.7 MB/s for as long as it ran (issue 29).
. "$(dirname "$0")/lib.sh"
require_root_bpf
tmpdir
T=$tap_tmp
id nobody >/dev/null 2>&1 || skip_all "no user nobody"
plan 7

PIDS=()
LINKS=()
cleanup()
{
	local p
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in "${LINKS[@]}"; do rm -f "$p"; done
	rm -rf "$T"
}
trap cleanup EXIT

# niced: 20 spinners at the recorder's priority starved its drain on 2 CPUs
NOBODY=(nice -n 10 setpriv --reuid=nobody --regid=nogroup --clear-groups --no-new-privs --)
MIB=1048576

# spinners N MAPCMD: N CPU-bound dash of user nobody; for each, MAPCMD PID
# makes /tmp/perf-PID.map. Their pids in $SPINS (comma-separated).
spinners()
{
	local i p list=()
	for i in $(seq "$1"); do
		"${NOBODY[@]}" sh -c 'while :; do :; done' &
		p=$!
		disown "$p"
		PIDS+=("$p")
		list+=("$p")
		LINKS+=("/tmp/perf-$p.map")
		$2 "$p"
	done
	SPINS=$(IFS=,; echo "${list[*]}")
}

# record NAME BUDGETS: sa-record the spinners for 6 s with --rotate 1s into
# $T/NAME/, with the given budgets; sets REC_RC, READ (JIT bytes read) and
# the budget stops BY_PROC, BY_FILE, BY_USER from the summary.
record()
{
	mkdir "$T/$1"
	SA_RECORD_TEST_JIT_BUDGETS=$2 timeout -s KILL 60 "$SA_RECORD" -F 99 --interval 0.25 \
		--rotate 1s --duration 6 -p "$SPINS" -o "$T/$1/host.sa" 2>"$T/$1.err"
	REC_RC=$?
	read -r READ BY_PROC BY_FILE BY_USER <<<"$(awk '/JIT maps:/ {
		for (i = 1; i <= NF; i++) {
			if ($i == "bytes" && $(i + 1) == "read,") r = $(i - 1)
			if ($i == "by" && $(i + 1) ~ /^process/) p = $(i - 1)
			if ($i == "by" && $(i + 1) ~ /^file/) f = $(i - 1)
			if ($i == "by" && $(i + 1) ~ /^user/) u = $(i - 1)
		} } END { print r + 0, p + 0, f + 0, u + 0 }' "$T/$1.err")"
}

# ---- one file, hard-linked into 20 processes' maps -----------------------------
# 20 MiB of lines of 31 bytes; 1 KiB as a line takes about a microsecond
awk 'BEGIN { for (i = 0; i < 676500; i++) printf "%012x 10 sa_flood_%09d\n", 0x7f0000000000 + i * 16, i }' \
	>"$T/flood.map"
chown nobody "$T/flood.map"
link_flood() { ln "$T/flood.map" "/tmp/perf-$1.map"; }
spinners 20 link_flood
record link "$((1024 * MIB)),$((2 * MIB)),$((1024 * MIB))"
[ "$REC_RC" = 0 ] || diag_file "$T/link.err"
[ "$REC_RC" = 0 ]
ok $? "hard links: sa-record -p (20 processes) --rotate 1s --duration 6 exits 0"
diag "$(grep 'JIT maps' "$T/link.err")"
# Unbounded, the reading pid re-reads the file at every rotation: up to
# 8 MiB a drain (4 a second), 20 MiB a rotation. The bucket refills 2 MiB
# an hour: 3.5 KiB in 6 s; 16 KiB of slack.
[ "$READ" -ge $((MIB)) ] && [ "$READ" -le $((2 * MIB + 16384)) ]
ok $? "hard links: $READ bytes read (want 1 MiB to 2 MiB + 16 KiB: the file's budget)"
[ "$BY_FILE" -ge 1 ] && [ "$BY_PROC" = 0 ] && [ "$BY_USER" = 0 ]
ok $? "hard links: the file's budget stopped it (by file $BY_FILE, process $BY_PROC, user $BY_USER)"
for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
PIDS=()

# ---- 20 files of one user --------------------------------------------------------
# sparse: read as 20 MiB of NULs each (no lines), costs no disk
own_file()
{
	truncate -s 20M "/tmp/perf-$1.map"
	chown nobody "/tmp/perf-$1.map"
}
spinners 20 own_file
record user "$((1024 * MIB)),$((1024 * MIB)),$((2 * MIB))"
[ "$REC_RC" = 0 ] || diag_file "$T/user.err"
[ "$REC_RC" = 0 ]
ok $? "one user's 20 maps: sa-record exits 0"
diag "$(grep 'JIT maps' "$T/user.err")"
[ "$READ" -ge $((MIB)) ] && [ "$READ" -le $((2 * MIB + 16384)) ]
ok $? "one user's 20 maps: $READ bytes read (want 1 MiB to 2 MiB + 16 KiB: the user's budget)"
[ "$BY_USER" -ge 1 ] && [ "$BY_FILE" = 0 ] && [ "$BY_PROC" = 0 ]
ok $? "one user's 20 maps: the user's budget stopped them (by user $BY_USER, file $BY_FILE, process $BY_PROC)"
n=$(grep -c "budget of .* is spent" "$T/user.err")
[ "$n" = 1 ]
ok $? "one user's 20 maps: said once on stderr ($n)"

done_testing
