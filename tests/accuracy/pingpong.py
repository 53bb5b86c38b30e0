#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Samples x period against each thread's own CPU time (issue 36).

Runs build/samples/pingpong (two threads handing a turn over pipes, a known
work split on each side, each thread timing itself with
CLOCK_THREAD_CPUTIME_ID) under a sampler and prints, per thread, samples x
period / CPU time and each work function's share of the thread's samples
next to the workload's own split.

Samplers: sa-cmd (sa-record -- CMD), sa-p (-p PID), sa-a (-a -- CMD),
sa-G (-G a cgroup holding the workload), perf-task (perf record -- CMD:
per-task events), perf-a (perf record -a). perf is started before any
sa-record of this script and retried when it fails at start (perf 6.1
aborts while any BPF program is loaded: docs/accuracy.md).

usage: pingpong.py BUILD [--freqs 999,4999] [--work 400,40,5] [--cpu S]
                         [--samplers sa-cmd,perf-a,...] [--runs N] [--json OUT]
                         [--tap ALPHA]
--tap: TAP, one point per sa-record run: each thread's count within 1% plus
z sqrt(E) of E = CPU time x F (z for ALPHA shared by the threads of all
runs), each work function's share of the thread's work samples within 2
points of the split by construction; perf's runs are "# perf" lines.
Environment given to sa-record is passed through (SA_NO_DITHER=1 turns the
period dithering off, for experiments).
"""
import argparse
import json
import math
import statistics
import os
import re
import subprocess
import sys
import tempfile
import time

FUNCS = {'sa-ping': ['sa_ping_a', 'sa_ping_b', 'sa_ping_c'], 'sa-pong': ['sa_pong_a', 'sa_pong_b']}
KILL = ['timeout', '-s', 'KILL', '120']


def parse_workload(text):
    """pingpong's own lines -> {thread: {'cpu_ns', 'tid', 'funcs': {fn: share}}}, rate"""
    th, rate = {}, 0.0
    for line in text.splitlines():
        f = line.split()
        if line.startswith('pingpong: thread sa-'):
            th[f[2]] = {'tid': int(f[4]), 'cpu_ns': int(f[8]), 'funcs': {}}
        elif line.startswith('pingpong: func '):
            th[f[2]]['funcs'][f[3]] = float(f[7])
        elif line.startswith('pingpong: work_us'):
            rate = float(f[-1])
    return th, rate


def count_folded(lines, tids=None):
    """folded 'comm;f1;f2 N' lines -> {comm: [total, {fn: inclusive}]}; with
    tids ({comm: tid}), only roots 'comm.../tid' (sa-report --show-tid,
    perf_folded): pingpong's calibration runs threads named sa-pong first"""
    out = {}
    for line in lines:
        stack, _, n = line.rstrip('\n').rpartition(' ')
        if not stack or not n.isdigit():
            continue
        frames = stack.split(';')
        comm = frames[0]
        if tids is not None:
            comm = next((c for c, t in tids.items()
                         if comm.startswith(c) and comm.endswith('/%d' % t)), None)
        if comm not in FUNCS:
            continue
        c = out.setdefault(comm, [0, {}])
        c[0] += int(n)
        for fn in FUNCS[comm]:
            if fn in frames:
                c[1][fn] = c[1].get(fn, 0) + int(n)
    return out


def perf_folded(data):
    """perf script of a -g recording -> folded lines ('comm/tid' first, leaf last)"""
    env = dict(os.environ, PAGER='cat')
    p = subprocess.run(KILL + ['perf', 'script', '-i', data, '-F', 'comm,tid,ip,sym'],
                       capture_output=True, text=True, env=env)
    lines, comm, frames = [], None, []
    for line in p.stdout.splitlines() + ['']:
        if not line.strip():
            if comm is not None:
                lines.append(';'.join([comm] + frames[::-1]) + ' 1')
            comm, frames = None, []
        elif not line.startswith('\t'):
            f = line.split()
            comm = '%s/%s' % (' '.join(f[:-1]), f[-1]) if len(f) > 1 else line.strip()
        else:
            frames.append(line.split()[1] if len(line.split()) > 1 else '?')
    return lines


def run_perf(mode, freq, cmd, tmp):
    data = os.path.join(tmp, 'perf.data')
    args = ['perf', 'record', '-q', '-e', 'cpu-clock', '-F', str(freq), '-g', '-o', data]
    if mode == 'perf-a':
        args.append('-a')
    for _ in range(20):
        p = subprocess.run(KILL + args + ['--'] + cmd, capture_output=True, text=True)
        if p.returncode == 0:
            folded = perf_folded(data)
            if folded:
                return p.stdout, folded
        time.sleep(3)
    print('# %s: perf failed 20 times: %s' % (mode, p.stderr[-200:].replace('\n', ' ')),
          file=sys.stderr)
    return '', []


def sa_report(build, rec):
    p = subprocess.run(KILL + [os.path.join(build, 'bin/sa-report'), '--show-tid', rec],
                       capture_output=True, text=True)
    return p.stdout.splitlines()


def run_sa(mode, freq, cmd, tmp, build):
    """mode sa-cmd, sa-p, sa-a or sa-G; a suffix +nd turns the dithering off,
    +runs counts every sample one (SA_COUNT_RUNS=1, sa-record before issue 36)"""
    env = dict(os.environ)
    for suffix, var in (('+runs', 'SA_COUNT_RUNS'), ('+nd', 'SA_NO_DITHER')):
        if mode.endswith(suffix):
            env[var] = '1'
            mode = mode[:-len(suffix)]
    rec = os.path.join(tmp, 'r.sa')
    sa = KILL + [os.path.join(build, 'bin/sa-record'), '-F', str(freq), '-o', rec]
    if not os.environ.get('SA_DIAG'):
        sa.insert(len(KILL) + 1, '-q')
    if mode == 'sa-cmd':
        p = subprocess.run(sa + ['--'] + cmd, capture_output=True, text=True, env=env)
        diag(p.stderr)
        return p.stdout, sa_report(build, rec)
    if mode == 'sa-a':
        p = subprocess.run(sa + ['-a', '--'] + cmd, capture_output=True, text=True, env=env)
        diag(p.stderr)
        return p.stdout, sa_report(build, rec)
    # -p and -G attach to a workload that waits before starting its threads
    cg = None
    w = subprocess.Popen(cmd[:1] + ['-W', '1.5'] + cmd[1:], stdout=subprocess.PIPE, text=True)
    first = w.stdout.readline()
    pid = int(first.split()[-1])
    if mode == 'sa-G':
        cg = make_cgroup(pid)
        target = ['-G', cg]
    else:
        target = ['-p', str(pid)]
    r = subprocess.Popen(sa + target, stderr=subprocess.PIPE, text=True, env=env)
    out = first + w.stdout.read()
    w.wait()
    if mode == 'sa-G':
        r.terminate()
    diag(r.communicate()[1])
    if cg:
        os.rmdir(cg)
    return out, sa_report(build, rec)


DIAG = ['target samples', 'weights', 'w0', 'w1', 'w2', 'w3+', 'late<10us', '<20', '<50',
        '<100', '<200', '>=200', 'due before switch-in', 'runs', 'runs after a skip',
        'periods skipped', 'runs on idle']


def diag(stderr):
    """SA_DIAG=1: sa-record's counters (bpf/sa_clock.bpf.h), and the load they ran under"""
    for line in (stderr or '').splitlines():
        if 'samples kept of' in line:
            print('# ' + line.split(': ', 2)[-1], flush=True)
        if line.startswith('sa-record: diag'):
            v = [int(x) for x in line.split()[2:]]
            print('# diag: ' + ', '.join('%s %d' % (k, x) for k, x in zip(DIAG, v)) +
                  '; load %s' % open('/proc/loadavg').read().split()[0], flush=True)


def make_cgroup(pid):
    root = None
    with open('/proc/mounts') as m:
        for line in m:
            f = line.split()
            if f[2] == 'cgroup2':
                root = f[1]
    path = os.path.join(root, 'sa-pingpong-%d' % pid)
    os.mkdir(path)
    with open(os.path.join(path, 'cgroup.procs'), 'w') as f:
        f.write(str(pid))
    return path


def cpu_ticks():
    """(idle, total) jiffies of all CPUs, /proc/stat"""
    with open('/proc/stat') as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return v[3] + v[4], sum(v)


def one(args, mode, freq, work):
    cmd = [os.path.join(args.build, 'samples/pingpong'), '-c', str(args.cpu), '-w', str(work)]
    i0, t0 = cpu_ticks()
    with tempfile.TemporaryDirectory(prefix='sa-pp-') as tmp:
        if mode.startswith('perf'):
            out, folded = run_perf(mode, freq, cmd, tmp)
        else:
            out, folded = run_sa(mode, freq, cmd, tmp, args.build)
    i1, t1 = cpu_ticks()
    th, rate = parse_workload(out)
    if not th:
        return None
    got = count_folded(folded, {name: t['tid'] for name, t in th.items()})
    res = {'sampler': mode, 'freq': freq, 'work_us': work, 'rate': rate, 'threads': {},
           'idle': 100.0 * (i1 - i0) / max(t1 - t0, 1)}
    for name, t in th.items():
        n, fns = got.get(name, [0, {}])
        expect = t['cpu_ns'] * freq / 1e9
        res['threads'][name] = {
            'samples': n, 'expect': expect, 'ratio': n / expect if expect else 0,
            'funcs': {fn: [100.0 * fns.get(fn, 0) / n if n else 0, own]
                      for fn, own in t['funcs'].items()}}
    return res


SPLIT = {'sa_ping_a': 50, 'sa_ping_b': 30, 'sa_ping_c': 20, 'sa_pong_a': 70, 'sa_pong_b': 30}


def verdict(r, z):
    """why a run fails the oracle, '' when it passes; and its summary"""
    why, summary = [], []
    for name, t in sorted(r['threads'].items()):
        e, n = t['expect'], t['samples']
        tol = 0.01 * e + z * math.sqrt(e)
        summary.append('%s %.3f' % (name, t['ratio']))
        if abs(n - e) > tol:
            why.append('%s: %d samples for %.0f expected (+-%.0f)' % (name, n, e, tol))
        # work samples: the shares of the thread's samples times its samples
        nwork = sum(a for a, _ in t['funcs'].values()) * n / 100.0
        work = sum(a for a, _ in t['funcs'].values()) or 1
        for fn, (a, _) in sorted(t['funcs'].items()):
            share, p = 100 * a / work, SPLIT[fn] / 100.0
            # 2 points, or the binomial bound where the work got too few samples
            lim = max(2.0, 100 * z * math.sqrt(p * (1 - p) / max(nwork, 1)))
            if abs(share - SPLIT[fn]) > lim:
                why.append('%s %.1f%% of %.0f work samples (split %d +- %.1f)' % (
                    fn, share, nwork, SPLIT[fn], lim))
    return '; '.join(why), ', '.join(summary)


def tap(args):
    runs = [(w, f, m) for w in args.work.split(',') for f in args.freqs.split(',')
            for m in args.samplers.split(',')]
    nsa = sum(1 for _, _, m in runs if m.startswith('sa'))
    # two counts and five shares per run
    z = statistics.NormalDist().inv_cdf(1 - args.tap / (2 * 7 * max(nsa, 1)))
    print('1..%d' % nsa)
    k, failed = 0, 0
    for w, f, m in runs:
        r = one(args, m, int(f), float(w))
        label = '%s %s Hz, %s us a side' % (m, f, w)
        if r:
            label += ', %.0f round trips/s' % r['rate']
        if not m.startswith('sa'):
            if r:
                print('# %s: %s' % (label, verdict(r, z)[1]))
            continue
        k += 1
        why, summary = verdict(r, z) if r else ('the workload gave no result', '')
        failed += bool(why)
        print('%sok %d - %s: %s%s' % ('not ' if why else '', k, label, summary,
                                     ' (' + why + ')' if why else ''), flush=True)
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('build')
    ap.add_argument('--freqs', default='999,4999')
    ap.add_argument('--work', default='400,40,5')
    ap.add_argument('--cpu', type=float, default=3)
    ap.add_argument('--samplers', default='sa-cmd,sa-p,sa-a,perf-task,perf-a')
    ap.add_argument('--runs', type=int, default=1)
    ap.add_argument('--json')
    ap.add_argument('--tap', type=float)
    args = ap.parse_args()
    if args.tap:
        return tap(args)
    results = []
    print('%-9s %5s %5s %6s %-7s %7s %8s %6s  %s' % (
        'sampler', 'Hz', 'w_us', 'rate', 'thread', 'samples', 'expect', 'ratio',
        'function: samples% / own%'))
    for work in args.work.split(','):
        for freq in args.freqs.split(','):
            for mode in args.samplers.split(','):
                for _ in range(args.runs):
                    r = one(args, mode, int(freq), float(work))
                    if not r:
                        continue
                    results.append(r)
                    for name, t in sorted(r['threads'].items()):
                        fs = ' '.join('%s %.1f/%.1f' % (fn[3:], a, b)
                                      for fn, (a, b) in sorted(t['funcs'].items()))
                        print('%-9s %5s %5s %6.0f %-7s %7d %8.0f %6.3f  %s  idle %.0f%%' % (
                            mode, freq, work, r['rate'], name, t['samples'], t['expect'],
                            t['ratio'], fs, r['idle']), flush=True)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(results, f, indent=1)


if __name__ == '__main__':
    sys.exit(main())
