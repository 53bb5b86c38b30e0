#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-thread CPU time over exact windows, for the threads oracle (issue 36).

  cpuclock.py trace PIDS OUT SECONDS   every 20 ms: CLOCK_MONOTONIC ns and
                                       each thread's schedstat run time
  cpuclock.py sa TRACE DUMP FREQ       sa-dump of a recording: per thread,
                                       samples in its full intervals against
                                       CPU time over the same intervals
  cpuclock.py perf TRACE SCRIPT FREQ   `perf script -F tid,time` of a
                                       recording made with -k CLOCK_MONOTONIC
Prints "tid samples expected ratio" per thread with >= 100 expected samples.
"""
import bisect
import os
import sys
import time


def trace(pids, out, seconds):
    end = time.monotonic() + seconds
    with open(out, 'w') as f:
        while time.monotonic() < end:
            t = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            row = []
            for p in pids.split(','):
                try:
                    tids = os.listdir('/proc/%s/task' % p)
                except OSError:
                    continue
                for tid in tids:
                    try:
                        with open('/proc/%s/task/%s/schedstat' % (p, tid)) as s:
                            row.append('%s:%s' % (tid, s.read().split()[0]))
                    except OSError:
                        pass
            f.write('%d %s\n' % (t, ' '.join(row)))
            time.sleep(0.02)


def load_trace(path):
    """tid -> (times, cpu ns), sorted by time"""
    th = {}
    for line in open(path):
        f = line.split()
        t = int(f[0])
        for kv in f[1:]:
            tid, ns = kv.split(':')
            ts, cs = th.setdefault(int(tid), ([], []))
            ts.append(t)
            cs.append(int(ns))
    return th


def cpu_at(series, t):
    """a thread's CPU ns at monotonic t, linear between snapshots; None outside"""
    ts, cs = series
    i = bisect.bisect_left(ts, t)
    if i == 0 or i >= len(ts):
        return None
    a, b = ts[i - 1], ts[i]
    return cs[i - 1] + (cs[i] - cs[i - 1]) * (t - a) / (b - a)


def report(th, windows, counts, freq):
    """windows: [(start, end)]; counts: tid -> samples in those windows"""
    for tid, series in sorted(th.items()):
        e = 0.0
        for a, b in windows:
            ca, cb = cpu_at(series, a), cpu_at(series, b)
            if ca is None or cb is None:
                continue
            e += (cb - ca) * freq / 1e9
        if e >= 100:
            n = counts.get(tid, 0)
            print('%d %d %.0f %.3f' % (tid, n, e, n / e))


def sa(tr, dump, freq):
    th = load_trace(tr)
    lo = min(ts[0] for ts, _ in th.values())
    hi = max(ts[-1] for ts, _ in th.values())
    windows, counts, cur = [], {}, None
    for line in open(dump):
        f = line.split()
        if f[0] == 'INTERVAL':
            kv = dict(x.split('=', 1) for x in f[1:])
            a, b = int(kv['start']), int(kv['end'])
            # full intervals inside the trace, the first one left out
            cur = (a, b) if a > lo and b < hi and kv['seq'] != '0' else None
            if cur:
                windows.append(cur)
        elif f[0] == 'COUNT' and cur:
            kv = dict(x.split('=', 1) for x in f[1:] if '=' in x)
            tid = int(kv['tid'])
            counts[tid] = counts.get(tid, 0) + int(kv['count'])
    report(th, windows, counts, freq)


def perf(tr, script, freq):
    th = load_trace(tr)
    lo = min(ts[0] for ts, _ in th.values()) + 500000000
    hi = max(ts[-1] for ts, _ in th.values()) - 500000000
    counts = {}
    for line in open(script):
        f = line.split()
        if len(f) < 2:
            continue
        t = int(float(f[1].rstrip(':')) * 1e9)
        if lo <= t < hi:
            counts[int(f[0])] = counts.get(int(f[0]), 0) + 1
    report(th, [(lo, hi)], counts, freq)


if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'trace':
        trace(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    elif cmd == 'sa':
        sa(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    elif cmd == 'perf':
        perf(sys.argv[2], sys.argv[3], float(sys.argv[4]))
