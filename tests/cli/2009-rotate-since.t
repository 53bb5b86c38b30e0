#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (records -a)
# 2009-rotate-since.t - sa-report --since/--until over a rotated set: the
# intervals selected are those whose wall-clock midpoint (META's realtime
# start plus the interval's monotonic offset, read here with sa-dump) is in
# the range, whichever file holds them; ISO 8601 with Z, with an offset and
# local time (TZ set to +05:30 so the zone arithmetic shows) agree.
. "$(dirname "$0")/2000-record-lib.sh"
need_bpf
build_busy
echo "1..7"
RPT=$SA_BUILD/bin/sa-report

mkdir "$T/r"
"$T/busy" 2 & busy=$!
"$REC" -q -a --rotate 1s --duration 6 -o "$T/r/host.sa"
ok $? "sa-record -a --rotate 1s --duration 6"
kill $busy
mapfile -t files < <(ls "$T/r"/host-*.sa)
# "seq midpoint_ns kept" of every interval of the set, by time
for f in "${files[@]}"; do
	"$DUMP" "$f" | awk '
	function val(s, a) { split(s, a, "="); return a[2] }
	/^META/ { for (i = 2; i <= NF; i++) { if ($i ~ /^start_mono=/) m0 = val($i); if ($i ~ /^start_real=/) r0 = val($i) } }
	/^INTERVAL/ { mid[val($2)] = r0 + ((val($3) + val($4)) / 2 - m0) }
	/^LOSS/ { printf "%d %.0f %d\n", val($2), mid[val($2)], val($4) }'
done | sort -k2,2n >"$T/ivs"
nivs=$(wc -l <"$T/ivs")
[ "$nivs" -ge 5 ]
ok $? "$nivs intervals over ${#files[@]} files"

# The window: from between the 2nd and 3rd midpoints to between the 4th and
# 5th, so it holds the 3rd and 4th intervals, which usually lie in different files.
read -r since until want < <(awk '{ m[NR] = $2; k[NR] = $3 }
	END { printf "%.0f %.0f %d\n", (m[2] + m[3]) / 2, (m[4] + m[5]) / 2, k[3] + k[4] }' "$T/ivs")
# iso NS [FORMAT-SUFFIX]: nanoseconds of the epoch as date(1) prints them
iso() { TZ=${2:-UTC} date -d "@$(($1 / 1000000000)).$(printf %09d $(($1 % 1000000000)))" "+${3:-%Y-%m-%dT%H:%M:%S.%N}"; }
got() { "$RPT" "$@" "${files[@]}" 2>/dev/null | awk '{ s += $NF } END { print s + 0 }'; }

z=$(got --since "$(iso "$since")Z" --until "$(iso "$until")Z")
[ "$z" = "$want" ] && [ "$want" -gt 0 ]
ok $? "ISO 8601 with Z: $z samples == the 3rd and 4th intervals' kept $want"
o=$(got --since "$(iso "$since" Asia/Kolkata)+05:30" --until "$(iso "$until" Asia/Kolkata)+0530")
[ "$o" = "$want" ]
ok $? "ISO 8601 with +05:30: $o == $want"
l=$(TZ=Asia/Kolkata got --since "$(iso "$since" Asia/Kolkata '%Y-%m-%d %H:%M:%S.%N')" \
	--until "$(iso "$until" Asia/Kolkata '%Y-%m-%d %H:%M:%S.%N')")
[ "$l" = "$want" ]
ok $? "local date and time (TZ=Asia/Kolkata): $l == $want"
if [ "$(iso "$since" Asia/Kolkata %F)" = "$(TZ=Asia/Kolkata date +%F)" ]; then
	h=$(TZ=Asia/Kolkata got --since "$(iso "$since" Asia/Kolkata %H:%M:%S.%N)" \
		--until "$(iso "$until" Asia/Kolkata %H:%M:%S.%N)")
	[ "$h" = "$want" ]
	ok $? "HH:MM:SS today, local time: $h == $want"
else
	skip "the recording's day is not today in Asia/Kolkata (midnight passed)"
fi
"$RPT" --since "$(iso "$((until + 600000000000))")Z" "${files[@]}" >/dev/null 2>"$T/err"
[ $? = 2 ] && grep -q 'selects no interval' "$T/err"
ok $? "a range after the recording is a usage error: $(head -n 1 "$T/err")"
finish
