#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""perf -a and sa-record -a on the same ping-pong run (issue 36).

One build/samples/pingpong waits on a go file; perf record -a -e cpu-clock
starts first (perf 6.1 aborts while any BPF program is loaded, so it is
retried until it stays up), then sa-record -a; the go file starts the
threads, and both recorders stop after the workload exits. Each thread's
samples x period is printed against its own CPU time
(CLOCK_THREAD_CPUTIME_ID), for both samplers from the same run, with the
work functions' shares of the work against the split by construction, and
of the thread's samples against the workload's own share of its CPU ("of
thread: a 45.2/45.0", sampled/own); and the share of
each CPU's perf samples that went to the idle task.

usage: same-run.py BUILD [--freq 999] [--work 20] [--cpu 3] [--runs 1]
                   [--kind a|p] [--busy] [--sa-env K=V,...] [--sa-opts '...'] [--no-perf]
                   [--quiet PCT [--quiet-wait S]] [--sa2-env K=V,...] [--keep DIR]
--kind p: both tools -p PID (perf's per-task events) instead of -a; ap:
perf -a and sa-record -p PID (both per-CPU events; sa's counts map then
holds the workload only, so a whole host's stacks cannot fill it).
--sa2-env: a second sa-record beside the first, e.g. SA_NO_DITHER=1.
--busy: a busy loop (samples/busy) pinned to the last CPU during the run.
--quiet: start each run after a second with PCT% of the CPUs idle (the
idle share during the run is printed: the late-interrupt loss needs idle).
"""
import argparse
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pingpong import count_folded, parse_workload, sa_report  # noqa: E402

KILL = ['timeout', '-s', 'KILL', '120']


def wait_file(path, secs):
    for _ in range(int(secs * 10)):
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return True
        time.sleep(0.1)
    return False


def start_perf(freq, data, target):
    # not under timeout(1): perf must get the SIGINT itself to finish its file
    # -m: 8 MiB a CPU, so a reader starved by a loaded host loses nothing
    args = ['perf', 'record', '-q', '-B', '-m', '2048', '-e', 'cpu-clock', '-F', str(freq), '-g', '-o',
            data] + target
    for _ in range(30):
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(1.5)
        if p.poll() is None:
            return p
        time.sleep(2)
    return None


def perf_samples(data):
    """(tid, cpu) of each sample in a perf.data file, read here: perf 6.1's
    perf script aborts (util/build-id.c) on some of the other processes a
    whole-system recording holds on this host"""
    with open(data, 'rb') as f:
        buf = f.read()
    magic, _, attr_size, a_off, a_size, d_off, d_size = struct.unpack_from('<8sQQQQQQ', buf)
    if magic != b'PERFILE2' or a_size < attr_size:
        return []
    sample_type = struct.unpack_from('<Q', buf, a_off + 24)[0]
    # fields before TID and CPU in a sample record, in the kernel's order
    bits = [(1 << 16, 8), (1 << 0, 8), (1 << 1, 8), (1 << 2, 8), (1 << 3, 8), (1 << 6, 8),
            (1 << 9, 8)]  # IDENTIFIER IP TID TIME ADDR ID STREAM_ID
    out, pos, end = [], d_off, d_off + d_size
    while pos + 8 <= end:
        typ, _, size = struct.unpack_from('<IHH', buf, pos)
        if size == 0:
            break
        if typ in (5, 6):  # PERF_RECORD_THROTTLE, UNTHROTTLE
            out.append((-typ, None))
        elif typ == 2:  # PERF_RECORD_LOST: id, lost
            out.extend([(-2, None)] * struct.unpack_from('<Q', buf, pos + 16)[0])
        elif typ == 9:  # PERF_RECORD_SAMPLE
            q, tid, cpu = pos + 8, None, None
            for bit, n in bits:
                if sample_type & bit:
                    if bit == 1 << 1:
                        tid = struct.unpack_from('<I', buf, q + 4)[0]
                    q += n
            if sample_type & (1 << 7):  # CPU
                cpu = struct.unpack_from('<I', buf, q)[0]
            out.append((tid, cpu))
        pos += size
    return out


def perf_threads(data):
    """-> ({tid: samples}, {cpu: [all, idle]})"""
    per, cpus = {}, {}
    for tid, cpu in perf_samples(data):
        if tid < 0:
            per[tid] = per.get(tid, 0) + 1
            continue
        c = cpus.setdefault(cpu, [0, 0])
        c[0] += 1
        c[1] += tid == 0
        per[tid] = per.get(tid, 0) + 1
    return per, cpus


def cpu_idle():
    """(idle, total) jiffies of all CPUs so far (/proc/stat)"""
    with open('/proc/stat') as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return v[3] + v[4], sum(v[:8])


def idle_since(t0):
    i1, a1 = cpu_idle()
    return 100.0 * (i1 - t0[0]) / max(a1 - t0[1], 1)


def wait_quiet(pct, secs):
    """until a second with at least pct% of the CPUs idle, at most secs"""
    end = time.time() + secs
    while time.time() < end:
        t0 = cpu_idle()
        time.sleep(1)
        if idle_since(t0) >= pct:
            return True
    return False


def perf_funcs(data, tid):
    """{comm: [n, {fn: samples}]} of one thread from perf script; {} when it
    aborts (perf 6.1 on some of the other processes of an -a recording)"""
    env = dict(os.environ, PAGER='cat')
    p = subprocess.run(KILL + ['perf', 'script', '-i', data, '--tid', str(tid), '-F',
                               'comm,ip,sym'], capture_output=True, text=True, env=env)
    if p.returncode:
        return {}
    lines, comm, frames = [], None, []
    for line in p.stdout.splitlines() + ['']:
        if not line.strip():
            if comm is not None:
                lines.append(';'.join([comm] + frames[::-1]) + ' 1')
            comm, frames = None, []
        elif not line.startswith((' ', '\t')):
            comm = line.strip()
        else:
            f = line.split()
            frames.append(f[1] if len(f) > 1 else '?')
    return count_folded(lines)


def sa_by_tid(build, rec, th):
    """{name: [n, {fn: samples}]} of the workload's threads, by tid"""
    return count_folded(sa_report(build, rec), {name: t['tid'] for name, t in th.items()})


def start_sa(args, env_list, rec, target):
    env = dict(os.environ)
    for kv in filter(None, env_list.split(',')):
        k, _, v = kv.partition('=')
        env[k] = v
    return subprocess.Popen(KILL + [os.path.join(args.build, 'bin/sa-record'), '-F',
                                    str(args.freq), '-o', rec] + target + args.sa_opts.split(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=env)


def one(args, tmp):
    go, data, rec = (os.path.join(tmp, n) for n in ('go', 'perf.data', 'r.sa'))
    for f in (go, data, rec, rec + '2'):
        if os.path.exists(f):
            os.unlink(f)
    busy = None
    if args.busy:
        last = os.cpu_count() - 1
        busy = subprocess.Popen(['taskset', '-c', str(last),
                                 os.path.join(args.build, 'samples/busy'), '-d', '0'],
                                stdout=subprocess.DEVNULL)
    w = subprocess.Popen(KILL + [os.path.join(args.build, 'samples/pingpong'), '-c',
                                 str(args.cpu), '-w', str(args.work), '-g', go],
                         stdout=subprocess.PIPE, text=True)
    first = w.stdout.readline()
    pid = ['-p', first.split()[-1]]
    target = ['-a'] if args.kind in ('a', 'ap') else pid
    perf = None if args.no_perf else start_perf(args.freq, data, target)
    if args.kind == 'ap':
        target = pid
    t_perf = time.monotonic()
    sa = start_sa(args, args.sa_env, rec, target)
    wait_file(rec, 30)
    sa2 = None
    if args.sa2_env is not None:
        sa2 = start_sa(args, args.sa2_env, rec + '2', target)
        wait_file(rec + '2', 30)
    time.sleep(0.3)
    t0 = cpu_idle()
    with open(go, 'w'):
        pass
    out = first + w.stdout.read()
    w.wait()
    idle = idle_since(t0)
    sa.send_signal(signal.SIGINT)
    sa_err = sa.communicate()[1]
    if sa2:
        sa2.send_signal(signal.SIGINT)
        sa_err += sa2.communicate()[1]
    if perf:
        perf.send_signal(signal.SIGINT)
        t_perf = time.monotonic() - t_perf
        try:
            perf.wait(60)
        except subprocess.TimeoutExpired:
            perf.kill()
            perf.wait()
    if busy:
        busy.kill()
        busy.wait()
    th, rate = parse_workload(out)
    res = {'idle': idle, 'rate': rate, 'sa': sa_by_tid(args.build, rec, th), 'th': th,
           'sa2': sa_by_tid(args.build, rec + '2', th) if sa2 else None,
           'sa_err': sa_err}
    if perf:
        per, cpus = perf_threads(data)
        # shares from perf script for -p only: on a whole host's recording it
        # takes minutes here
        res['perf'] = {name: [per.get(t['tid'], 0), perf_funcs(data, t['tid']).get(name, [0, {}])[1]
                              if args.kind == 'p' else {}] for name, t in th.items()}
        res['cpus'] = cpus
        res['throttles'] = per.get(-5, 0)
        res['perf_lost'] = per.get(-2, 0)
        res['perf_s'] = t_perf
    return res


def line(who, name, t, got, freq):
    n, fns = got
    e = t['cpu_ns'] * freq / 1e9
    work = sum(fns.values()) or 1
    fs = ' '.join('%s %.1f' % (fn[3:], 100.0 * k / work) for fn, k in sorted(fns.items()))
    # of the thread's whole CPU: the samples' share against the workload's
    # own (CLOCK_THREAD_CPUTIME_ID around each function), sampled/own
    th = ' '.join('%s %.1f/%.1f' % (fn[3:], 100.0 * fns.get(fn, 0) / max(n, 1), own)
                  for fn, own in sorted(t['funcs'].items()))
    return '%-5s %-7s %6d %8.0f %6.3f  %s | of thread: %s' % (who, name, n, e, n / e if e else 0,
                                                            fs, th)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('build')
    ap.add_argument('--freq', type=int, default=999)
    ap.add_argument('--work', type=float, default=20)
    ap.add_argument('--cpu', type=float, default=3)
    ap.add_argument('--runs', type=int, default=1)
    ap.add_argument('--busy', action='store_true')
    ap.add_argument('--kind', choices=['a', 'p', 'ap'], default='a',
                    help='a: both tools -a; p: both -p PID; ap: perf -a, sa-record -p PID')
    ap.add_argument('--no-perf', action='store_true')
    ap.add_argument('--sa-env', default='')
    ap.add_argument('--quiet', type=float, help='wait for a second with this %% of CPU idle')
    ap.add_argument('--quiet-wait', type=float, default=300)
    ap.add_argument('--sa-opts', default='')
    ap.add_argument('--sa2-env', help='a second sa-record on the same run, this environment')
    ap.add_argument('--keep', help="copy each run's perf.data and sa recordings to KEEP/N.*")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix='sa-same-') as tmp:
        # perf 6.1 aborts in util/build-id.c on this kernel while it reads
        # build ids: -B, and an empty cache of its own (tests/accuracy/run.sh)
        os.environ['PERF_BUILDID_DIR'] = os.path.join(tmp, 'buildid')
        os.makedirs(os.environ['PERF_BUILDID_DIR'])
        for i in range(args.runs):
            if args.quiet and not wait_quiet(args.quiet, args.quiet_wait):
                print('# run %d: no second with %.0f%% idle in %.0f s' % (
                    i, args.quiet, args.quiet_wait), flush=True)
                continue
            r = one(args, tmp)
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                for f in ('perf.data', 'r.sa', 'r.sa2'):
                    if os.path.exists(os.path.join(tmp, f)):
                        shutil.copy(os.path.join(tmp, f), os.path.join(args.keep, '%d.%s' % (i, f)))
            print('# run %d %s: -%s, %d Hz, %.0f us a side, %.0f round trips/s, CPUs %.0f%% idle%s' % (
                i, time.strftime('%H:%M:%SZ', time.gmtime()), args.kind, args.freq, args.work, r['rate'],
                r['idle'], ', busy loop' if args.busy else ''))
            for name, t in sorted(r['th'].items()):
                print(line('sa', name, t, r['sa'].get(name, [0, {}]), args.freq))
                if r['sa2'] is not None:
                    print(line('sa2', name, t, r['sa2'].get(name, [0, {}]), args.freq))
                if 'perf' in r:
                    print(line('perf', name, t, r['perf'][name], args.freq))
            for cpu, (n, idle) in sorted(r.get('cpus', {}).items()):
                print('# perf cpu %s: %d samples (%.3f of F x %.1f s), %.1f%% idle' % (
                    cpu, n, n / (args.freq * r['perf_s']), r['perf_s'], 100.0 * idle / n))
            if 'perf' in r:
                print('# perf throttled %d times, lost %d samples' % (r['throttles'],
                                                                  r['perf_lost']))
            for ln in r['sa_err'].splitlines()[-3:]:
                print('# sa: ' + ln.strip())
            sys.stdout.flush()


if __name__ == '__main__':
    sys.exit(main())
