#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (records -a and bounds the recorder's memory)
# 2012-rotate-rss.t - the memory of a rotating recorder stays bounded while
# the host keeps making new binaries and processes (docs/deploy.md, "Always
# on"): `sa-record -a --rotate 1s --keep 3` runs 60 s beside a loop that
# copies a program of 12,000 functions under a new build id (written into
# its note), runs it for 100 ms of CPU and deletes it, and starts dash and
# gzip. The RSS of the
# last 20 s may grow by at most half of what keeping each of those
# binaries' symbol tables would add (the tables the recorder embeds, sized
# from the binary's own symbols): the bound is a fraction of the churn's
# own leak, counted in this run, not a figure of this machine. The power
# check asks that leak to be at least 8 MiB, else the test says so.
# Under make check-san the plain build's recorder is measured: ASan holds
# freed memory in its quarantine (256 MiB), so its RSS says nothing here.
. "$(dirname "$0")/2000-record-lib.sh"
need_bpf
if [ "${SA_SANITIZED:-0}" = 1 ]; then
	REC=$(dirname "$SA_BUILD")/bin/sa-record
	[ -x "$REC" ] || skip_all "$REC (the plain build) not built"
fi
echo "1..5"
command -v gcc >/dev/null 2>&1 || skip_all "gcc missing"

# the churn's program: 12,000 functions, main spins 100 ms of CPU over them
src=$T/big.c
{
	echo '#include <time.h>'
	echo 'static volatile unsigned long sink;'
	for i in $(seq 0 11999); do
		printf '__attribute__((noinline)) void sa_churn_fn_%05d(void) { sink += %d; }\n' "$i" "$i"
	done
	echo 'static void (*const fns[])(void) = {'
	for i in $(seq 0 11999); do printf 'sa_churn_fn_%05d,' "$i"; done
	echo '};'
	cat <<'C'
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
int main(void)
{
	double end = cpu_s() + 0.1;
	unsigned long i = 0;

	while (cpu_s() < end)
		for (int k = 0; k < 1000; k++)
			fns[i++ % 12000]();
	return 0;
}
C
} >"$src"
gcc -O1 -o "$T/probe" "$src" -Wl,--build-id=0x5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a ||
	skip_all "cannot build the churn program"
# where its build id is: each copy gets a new one written there
boff=$(LC_ALL=C grep -obUaP '\x5a{16}' "$T/probe" | head -1 | cut -d: -f1)
[ -n "$boff" ] || skip_all "cannot find the build id in the churn program"
# one table as elfsyms.c holds it: 24 bytes and a flag per symbol, the names
read -r nsyms namebytes < <(nm --defined-only "$T/probe" | awk '$2 ~ /^[Tt]$/ { n++; b += length($3) + 1 }
	END { print n, b }')
tab=$((nsyms * 25 + namebytes))
diag "one churn binary: $nsyms function symbols, a table of $((tab / 1024)) KiB"

churn() {
	local i=0 id
	while :; do
		i=$((i + 1))
		id=$(printf '%08x%024x' $$ $i | sed 's/../\\x&/g')
		cp "$T/probe" "$T/c/p$i" &&
			printf "$id" | dd of="$T/c/p$i" bs=1 seek="$boff" conv=notrunc status=none &&
			echo "$(date +%s.%N)" >>"$T/started" && "$T/c/p$i"
		rm -f "$T/c/p$i"
		dash -c 'i=0; while [ $i -lt 500 ]; do i=$((i+1)); done'
		echo x | gzip -c >/dev/null
	done
}
mkdir "$T/c" "$T/r"
: >"$T/started"
churn &
cpid=$!
"$REC" -q -a -F 499 --rotate 1s --keep 3 --duration 60 -o "$T/r/host.sa" 2>"$T/rec.err" &
rpid=$!
t0=$(date +%s.%N)
: >"$T/rss"
while kill -0 $rpid 2>/dev/null; do
	r=$(awk '/^VmRSS/ { print $2 }' /proc/$rpid/status 2>/dev/null)
	[ -n "$r" ] && echo "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') $r" >>"$T/rss"
	sleep 2
done
wait $rpid
rc=$?
kill $cpid 2>/dev/null
wait $cpid 2>/dev/null
ok $rc "sa-record -a -F 499 --rotate 1s --keep 3 --duration 60 beside the churn exits 0"
[ $rc -eq 0 ] || diag "$(head -3 "$T/rec.err")"
diag "RSS (s KiB): $(tr '\n' ' ' <"$T/rss")"

# the window: from the first RSS sample at or after 40 s to the end
read -r w0 r40 < <(awk '$1 >= 40 { print; exit }' "$T/rss")
rmax=$(awk -v w="$w0" '$1 >= w && $2 > m { m = $2 } END { print m + 0 }' "$T/rss")
wend=$(tail -n 1 "$T/rss" | cut -d' ' -f1)
nwin=$(awk -v a="$t0" -v w0="$w0" -v w1="$wend" '$1 - a >= w0 && $1 - a <= w1' "$T/started" | wc -l)
leak=$((nwin * tab / 1024))
diag "window $w0-$wend s: $nwin churn binaries ran, their tables $leak KiB"
[ -n "$r40" ] && [ "$leak" -ge 8192 ]
ok $? "power: the window's binaries would add >= 8 MiB if kept ($leak KiB)"
grow=$((rmax - ${r40:-0}))
[ -n "$r40" ] && [ "$grow" -le $((leak / 2)) ]
ok $? "RSS grows $grow KiB in the last 20 s ($r40 -> max $rmax KiB), bound $((leak / 2)) KiB"

mapfile -t files < <(find "$T/r" -maxdepth 1 -type f -name 'host-*.sa' | sort)
bad=0
for f in "${files[@]}"; do
	"$SA_BUILD/bin/sa-report" --info "$f" 2>/dev/null | grep -q '^  finished: *cleanly$' ||
		{ bad=1; diag "not clean: $f"; }
done
[ ${#files[@]} -ge 3 ] && [ $bad = 0 ]
ok $? "${#files[@]} files kept, each finished cleanly"
# the churn's binaries are gone: their names come from the tables embedded
# while other tables were being dropped
named=$("$SA_BUILD/bin/sa-report" "${files[@]}" 2>/dev/null | grep -c '^p[0-9]*;.*sa_churn_fn_')
[ "$named" -ge 1 ]
ok $? "$named stacks of the deleted churn binaries are named from the files"
finish
