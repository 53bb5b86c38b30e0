#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (records -a beside a process with 60,000 mappings)
# sa-test: san
# 5250-many-mappings.t - one unprivileged process must not make every
# -a recording unreadable or the recorder slow and large: user nobody maps
# one file at a 3,996-byte path 15,000 (then 60,000) times PROT_EXEC and
# spins. `sa-record -a --duration 3` beside it and a busy workload: exit 0,
# under 1.5 s of its own CPU time, RSS under 60 MB; the file reads with
# every interval and the workload's samples (never "holds no samples");
# SIGTERM ends a recorder within 2 s. The mappings of one file share one
# path in the recorder (meta/maptab.c), which reads /proc/PID/maps for at
# most 100 ms (python/pyfind.c too) and keeps at most 4,096 exec mappings
# a process image. On 10d6d12: 80 MB and "holds no samples" at 15,000.
. "$(dirname "$0")/2000-record-lib.sh"
need_bpf
command -v setpriv >/dev/null 2>&1 || skip_all "setpriv not installed"
[ -x /usr/bin/time ] || skip_all "/usr/bin/time (GNU time) not installed"
[ "$(cat /proc/sys/vm/max_map_count)" -gt 61000 ] || skip_all "vm.max_map_count under 61000"
RPT=$SA_BUILD/bin/sa-report
echo "1..10"

cat >"$T/manymaps.c" <<'CEOF'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
/* manymaps DIR N READY: a file at a 3,996-byte path under DIR mapped N times, then spin */
int main(int c, char **v)
{
	char path[4300], comp[201];
	int n = atoi(v[2]), fd, i;
	FILE *f;
	(void)c;
	memset(comp, 'd', 200);
	comp[200] = 0;
	snprintf(path, sizeof(path), "%s", v[1]);
	for (i = 0; i < 19; i++) {
		comp[0] = 'a' + i;
		strcat(path, "/");
		strcat(path, comp);
		if (mkdir(path, 0755) && access(path, F_OK))
			return 1;
	}
	memset(comp, 'f', 150);
	comp[150] = 0;
	strcat(path, "/lib");
	strcat(path, comp);
	strcat(path, ".so");
	fd = open(path, O_RDWR | O_CREAT, 0755);
	if (fd < 0 || ftruncate(fd, 4096))
		return 1;
	for (i = 0; i < n; i++)
		if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED)
			return 1;
	f = fopen(v[3], "w");
	fprintf(f, "%zu\n", strlen(path));
	fclose(f);
	for (volatile unsigned long k = 0;; k++)
		if (!(k & 0xffffff))
			usleep(100000);
}
CEOF
cc -O2 -o "$T/manymaps" "$T/manymaps.c" || skip_all "cannot build the workload"
build_busy
chmod 711 "$T"
"$T/busy" 1 &
busy=$!

for n in 15000 60000; do
	mkdir "$T/m$n"
	chmod 1777 "$T/m$n"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$T/manymaps" "$T/m$n" $n "$T/m$n/ready" &
	mm=$!
	for _ in $(seq 100); do [ -s "$T/m$n/ready" ] && break; sleep 0.1; done
	have=$(grep -c 'libfff' "/proc/$mm/maps" 2>/dev/null)
	/usr/bin/time -f "%e %M %U %S" -o "$T/time$n" "$REC" -q -a --duration 3 -o "$T/h$n.sa" \
		2>"$T/rec$n.err"
	rc=$?
	read -r secs rss usr sys <"$T/time$n"
	# its own CPU time, not the wall's: the host may be loaded (tests/README.md)
	cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { print u + s }')
	ok $([ $rc = 0 ] && [ "${have:-0}" = $n ] && awk -v c="$cpu" 'BEGIN { exit !(c < 1.5) }'; echo $?) \
		"$n mappings ($have seen, path $(cat "$T/m$n/ready") bytes): --duration 3 exits $rc, CPU $cpu s (< 1.5; wall $secs s)"
	[ $rc = 0 ] || diag_file "$T/rec$n.err" 5
	ok $([ "${rss:-999999}" -lt 61440 ]; echo $?) "$n mappings: recorder RSS $((rss / 1024)) MiB < 60"
	"$RPT" "$T/h$n.sa" >"$T/h$n.folded" 2>"$T/h$n.err"
	rc=$?
	ivs=$("$DUMP" "$T/h$n.sa" | awk '/^INTERVAL/ { print $2 }' | sort -u | wc -l)
	info_ivs=$("$RPT" --info "$T/h$n.sa" 2>/dev/null | sed -n 's/^  duration: .*(\([0-9]*\) intervals)/\1/p')
	ok $([ $rc = 0 ] && ! grep -q 'holds no samples' "$T/h$n.err" && [ "$ivs" -ge 3 ] &&
		[ "$info_ivs" = "$ivs" ]; echo $?) \
		"$n mappings: sa-report exit $rc, every interval read ($info_ivs of $ivs; 3 or 4 in 3 s)"
	got=$(folded_total "$T/h$n.folded" busy)
	ok $([ "$got" -gt 0 ]; echo $?) "$n mappings: the busy workload's samples are there ($got)"
	"$REC" -q -a -o "$T/t$n.sa" 2>/dev/null &
	rec=$!
	sleep 3
	t0=$(date +%s%N)
	kill -TERM $rec
	wait $rec
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	ok $([ $rc = 0 ] && [ $ms -lt 2000 ]; echo $?) \
		"$n mappings: SIGTERM ends the recorder in $ms ms (< 2000), exit $rc"
	kill $mm
	wait $mm 2>/dev/null
done
kill $busy
finish
