#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# 0071-symcache-home.t - where sa-report keeps its symbol cache, said by -v
# (docs/symcache.md, "Where, and who may write it"): as root with a HOME or
# an XDG_CACHE_HOME of another user (a sudo that keeps HOME), no cache and
# nothing made under it; a ~/.cache that is a symlink is not followed and
# nothing is written where it points; root's own HOME gets HOME/.cache/sa,
# 0700. Every report prints what --no-cache prints.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_report
require_samples workload
tmpdir
T=$tap_tmp
plan 12

timeout -s KILL 60 "$SA_RECORD" -q -F 499 -o "$T/w.sa" -- "$SA_SAMPLES/workload" -d 1 \
	>/dev/null 2>"$T/rec.err"
ok $? "sa-record -- workload -d 1"
"$SA_REPORT" -q --no-cache "$T/w.sa" >"$T/ref" 2>/dev/null

# rep NAME VAR=VALUE...: sa-report -v with that environment (XDG_CACHE_HOME
# unset unless given); 0 when it exits 0 with --no-cache's stacks
rep()
{
	local name=$1
	shift
	env -u XDG_CACHE_HOME "$@" "$SA_REPORT" -v "$T/w.sa" >"$T/$name.out" 2>"$T/$name.err" &&
		cmp -s "$T/ref" "$T/$name.out"
}
said() { grep -o 'symbol cache: .*' "$T/$1.err"; }

mkdir -p "$T/other" && chown 65534:65534 "$T/other" && chmod 755 "$T/other"
rep other HOME="$T/other"
ok $? "HOME of uid 65534: exit 0, the same stacks"
said other | grep -q "none: \$HOME ($T/other) is not the effective user's"
ok $? "-v says: $(said other)"
[ -z "$(find "$T/other" -mindepth 1)" ]
ok $? "nothing made under that HOME"

rep xdg HOME="$T/other" XDG_CACHE_HOME="$T/other"
said xdg | grep -q "none: \$XDG_CACHE_HOME ($T/other) is not the effective user's" &&
	[ -z "$(find "$T/other" -mindepth 1)" ]
ok $? "XDG_CACHE_HOME of uid 65534: $(said xdg), nothing made"

mkdir -p "$T/linked" "$T/elsewhere"
ln -s "$T/elsewhere" "$T/linked/.cache"
rep linked HOME="$T/linked"
ok $? "~/.cache a symlink: exit 0, the same stacks"
said linked | grep -q "none: $T/linked/.cache: a symbolic link, not followed"
ok $? "-v says: $(said linked)"
[ -z "$(find "$T/elsewhere" -mindepth 1)" ]
ok $? "nothing written where the symlink points"

mkdir -p "$T/mine"
rep mine HOME="$T/mine"
ok $? "root's own HOME: exit 0, the same stacks"
[ "$(said mine)" = "symbol cache: $T/mine/.cache/sa" ]
ok $? "-v says: $(said mine)"
[ "$(stat -c %a "$T/mine/.cache/sa")" = 700 ] &&
	[ "$(find "$T/mine/.cache/sa" -name '*.sac' | wc -l)" -gt 0 ]
ok $? "$T/mine/.cache/sa is 0700 and holds the entries"

env -u XDG_CACHE_HOME HOME="$T/mine" "$SA_REPORT" -v --no-cache "$T/w.sa" >/dev/null 2>"$T/nc.err"
said nc | grep -qx 'symbol cache: none: --no-cache'
ok $? "with --no-cache -v says: $(said nc)"
done_testing
