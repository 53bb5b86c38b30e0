#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# compare.py - one case of `make accuracy`: sa's folded stacks against perf's
# (stackcollapse-perf.pl) of the same process and window. Normalizes naming
# that is not attribution, then tests every function's self and total share
# for equality within the binomial error of both sample counts.
"""Usage: compare.py [options] SA.folded PERF.folded

Prints '#' diagnostics, one 'fail ...' line per failed comparison and a last
line 'result pass|fail key=value ...' that run.sh parses.
"""
import argparse
import math
import os
import re
import subprocess
import sys
from statistics import NormalDist

# ---- naming that is not attribution ---------------------------------------
# Compiler clones and local aliases: foo.isra.0, foo.constprop.0.isra.0,
# foo.part.0, foo.cold, foo.localalias, foo.lto_priv.0. A sample in a clone is
# the function's own time whatever the clone is called.
SUFFIX = re.compile(r'(\.(isra|constprop|part|cold|localalias|lto_priv|llvm)(\.[0-9]+)?)+$')
# glibc's ifunc variants: which one runs depends on the CPU (AVX2 on this AMD
# EPYC, EVEX/AVX-512 on an Intel Xeon), so they are one function here.
IFUNC = re.compile(r'^_*([a-z0-9]+?)_(sse2|ssse3|sse4_1|sse4_2|sse42|avx2|avx512[a-z0-9]*|avx|'
                   r'evex[a-z0-9]*|erms|unaligned)(_[a-z0-9_]+)?$')
# memcpy's variants are memmove's entry points. __GI_ names are glibc's hidden
# aliases, which perf 6.1 prefers (it ranks any non-weak symbol over a weak
# one: __GI___writev, __GI___libc_open); sa-report shows the name a program
# calls (docs/sa-report.1, SYMBOL NAMES). Where perf's choice is the one a
# user knows (__libc_start_main over __libc_start_main_impl and its
# _alias_N twins, sendfile over sendfile64, clone3, start_thread) sa-report
# now makes the same choice, and no mapping is needed here.
ALIAS = {'memcpy': 'memmove', '__memcpy': 'memmove'}
ALIAS_RE = [(re.compile(r'^__GI_'), '')]


# Other names one address has (free, __libc_free, cfree; malloc and
# __libc_malloc; ____strtol_l_internal and ____strtoll_l_internal): which one
# a tool prints is its choice. Read from the symbol tables of the binaries the
# samples are in (and their debug files, found by build id): every name of a
# function's address maps to the first of them in sorted order.
SAME_ADDR = {}
KEEP_INLINE = False
SKIP = None  # --skip-frames: frames one tool is known not to reach


def elf_symbols(path):
    """{address: set of names} of path's FUNC symbols (readelf, binutils)."""
    out = {}
    try:
        text = subprocess.run(['readelf', '-Ws', '--wide', path], capture_output=True,
                              text=True, errors='replace', timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return out
    for line in text.splitlines():
        f = line.split()
        if len(f) < 8 or f[3] not in ('FUNC', 'IFUNC') or f[6] == 'UND':
            continue
        out.setdefault(int(f[1], 16), set()).add(f[7].split('@')[0])
    return out


def debug_file(path):
    try:
        text = subprocess.run(['readelf', '-n', path], capture_output=True, text=True,
                              errors='replace', timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r'Build ID: ([0-9a-f]{2})([0-9a-f]+)', text)
    d = m and f'/usr/lib/debug/.build-id/{m.group(1)}/{m.group(2)}.debug'
    return d if d and os.path.exists(d) else None


def load_aliases(dsos):
    for path in dsos:
        if not os.path.isfile(path):
            continue
        syms = elf_symbols(path)
        dbg = debug_file(path)
        for addr, names in (elf_symbols(dbg) if dbg else {}).items():
            syms.setdefault(addr, set()).update(names)
        for names in syms.values():
            names = {re.sub(r'^__GI_', '', nm) for nm in names}
            if len(names) > 1:
                first = sorted(names)[0]
                for nm in names:
                    SAME_ADDR.setdefault(nm, first)


# stackcollapse-perf.pl cuts a C++ name's parameter list (keeping
# "(anonymous namespace)"); sa-report keeps it. Cut it on both sides.
PARAMS = re.compile(r'\((?!anonymous namespace\)).*$')
# The demangled form of a clone suffix (" [clone .isra.0]") and a member
# function's qualifiers (") const"): cut before the return type is looked for.
CLONE = re.compile(r'( \[clone [^]]*\])+$')
QUALS = re.compile(r'\)( (const|volatile|&|&&))+$')
# A symbol version perf prints (clock_gettime@@GLIBC_2.17); sa-report drops it.
VERSION = re.compile(r'@@?[A-Z][A-Za-z0-9_.]*$')


def drop_return_type(name):
    """A C++ template function's demangled name without its return type
    (sa-report prints "Handle<Object> ns::Helper<false>", perf "ns::Helper<false>")."""
    if '<' not in name:  # only template functions' names carry one
        return name
    depth, cut = 0, -1
    for i, ch in enumerate(name):
        if ch in '<(':
            depth += 1
        elif ch in '>)':
            depth -= 1
        elif ch == ' ' and depth == 0 and not name[:i].endswith('operator'):
            cut = i
    return name[cut + 1:] if re.match(r'[A-Za-z_(~]', name[cut + 1:]) else name


def canon(name):
    """One frame's name with the naming choices above folded away."""
    name = QUALS.sub(')', CLONE.sub('', VERSION.sub('', name)))
    name = PARAMS.sub('', drop_return_type(name))
    name = SUFFIX.sub('', name)
    for rx, rep in ALIAS_RE:
        name = rx.sub(rep, name)
    name = SAME_ADDR.get(name, name)
    m = IFUNC.match(name)
    if m:
        name = m.group(1)
    return ALIAS.get(name, name)


# The native function one call of which runs a group of Python frames.
PY_EVAL = '_PyEval_EvalFrameDefault'


def frames(stack, tool):
    """The user frames of one folded stack (root first), normalized.

    Dropped on both sides: the comm root; kernel frames (_[k]: the comparison
    is of user attribution; a sample in a system call stays with its user
    leaf); perf's [unknown] frames (an address it could not name, or a frame
    pointer walk gone astray in code built without them, where sa drops the
    frame). Inline frames (_[i]; run.sh marks perf's "(inlined)" ones so)
    are dropped unless --keep-inline: perf 6.1 shows them only for a dwarf
    unwind, and without them a sample belongs to the function they were
    inlined into. _[j] and _[i] suffixes of frames kept are dropped.
    sa's Python frames (_[p]: sa-report puts them in place of the native
    eval-loop call that ran them, docs/python.md) are that call again, one
    _PyEval_EvalFrameDefault for each run of them: perf shows the call.
    """
    out = []
    for f in stack.split(';')[1:]:
        if f.endswith('_[p]'):
            if out and out[-1] == PY_EVAL:
                continue
            f = PY_EVAL
        if f.startswith('[inl]'):  # perf's, marked by run.sh
            f = f[5:] + '_[i]'
        if f.endswith('_[k]') or (f.endswith('_[i]') and not KEEP_INLINE):
            continue
        if f.endswith('_[j]') or f.endswith('_[i]'):
            f = f[:-4]
        if f == '[unknown]':
            continue
        f = canon(f)
        if not (SKIP and SKIP.fullmatch(f)):
            out.append(f)
    return out


def load(path, tool, comm_re, exclude_re):
    """(self counts, total counts, reaching-main count, samples, stacks) of a
    folded file; stacks is a list of (set of frames, count)."""
    selfc, total, reach, n, stacks = {}, {}, 0, 0, []
    with open(path, errors='replace') as fh:
        for line in fh:
            line = line.rstrip('\n')
            stack, _, cnt = line.rpartition(' ')
            if not stack or not cnt.isdigit():
                continue
            comm = stack.split(';', 1)[0]
            if comm_re and not re.fullmatch(comm_re, comm):
                continue
            if exclude_re and re.fullmatch(exclude_re, comm):
                continue
            c = int(cnt)
            fr = frames(stack, tool) or ['[no user frame]']
            n += c
            selfc[fr[-1]] = selfc.get(fr[-1], 0) + c
            stacks.append((set(fr), c))
            for f in stacks[-1][0]:
                total[f] = total.get(f, 0) + c
            # main's caller counts too: a stripped binary's main has no name
            if 'main' in fr or '__libc_start_call_main' in fr:
                reach += c
    return selfc, total, reach, n, stacks


def zscore(a, na, b, nb):
    """|a/na - b/nb| over the sd of that difference under one pooled share."""
    p = (a + b) / (na + nb)
    sd = math.sqrt(p * (1 - p) * (1 / na + 1 / nb))
    return abs(a / na - b / nb) / sd if sd > 0 else 0.0


def parse_truth(spec):
    out = {}
    for kv in spec.split(',') if spec else []:
        k, _, v = kv.partition('=')
        out[k] = float(v) / 100
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('sa')
    ap.add_argument('perf')
    ap.add_argument('--alpha', type=float, default=0.001,
                    help='chance of any false failure allowed in this case')
    ap.add_argument('--min-share', type=float, default=1.0, help='percent')
    ap.add_argument('--no-totals', metavar='WHY', default='',
                    help='compare self shares only, and say why')
    ap.add_argument('--comm', default='', help='keep only comms matching this regex')
    ap.add_argument('--exclude-comm', default='')
    ap.add_argument('--truth', default='', help='fn=percent,...: known total shares')
    ap.add_argument('--min-samples', type=int, default=500)
    ap.add_argument('--skip-frames', metavar='RE', default='',
                    help='drop frames matching RE on both sides (run.sh says why)')
    ap.add_argument('--dsos', help='file of binary paths whose symbols name aliases')
    ap.add_argument('--keep-inline', action='store_true',
                    help='keep inline frames (perf script shows them in dwarf mode)')
    a = ap.parse_args()
    global KEEP_INLINE, SKIP
    KEEP_INLINE = a.keep_inline
    if a.skip_frames:
        SKIP = re.compile(a.skip_frames)
        print(f'# frames not compared: {a.skip_frames}')
    if a.dsos:
        with open(a.dsos) as fh:
            load_aliases(line.strip() for line in fh if line.strip())

    ss, st, sr, sn, sstacks = load(a.sa, 'sa', a.comm, a.exclude_comm)
    ps, pt, pr, pn, pstacks = load(a.perf, 'perf', a.comm, a.exclude_comm)
    truth = parse_truth(a.truth)
    print(f'# samples: sa {sn}, perf {pn}')
    fails = []
    if sn < a.min_samples or pn < a.min_samples:
        fails.append(f'too few samples (sa {sn}, perf {pn}; want >= {a.min_samples} each)')
        sn, pn = max(sn, 1), max(pn, 1)

    # The functions compared: at least min-share of either tool's samples.
    lim = a.min_share / 100
    kinds = [('self', ss, ps)] + ([] if a.no_totals else [('total', st, pt)])
    tests = []
    for kind, sd_, pd_ in kinds:
        for f in sorted(set(sd_) | set(pd_)):
            x, y = sd_.get(f, 0), pd_.get(f, 0)
            if x / sn >= lim or y / pn >= lim:
                tests.append((kind, f, x, y))
    m = len(tests) + 2 * len(truth)
    # Bonferroni: each of the m two-sided tests may fail by luck with chance
    # alpha/m, so any of them does with chance at most alpha (0.1% per run
    # once run.sh divides its 0.1% among the cases). z is the normal quantile
    # for alpha/(2m) in each tail; the binomial counts here are hundreds of
    # samples or more, where the normal approximation holds.
    z = NormalDist().inv_cdf(1 - a.alpha / (2 * max(m, 1)))
    print(f'# {m} tests, alpha {a.alpha:.2g} per case -> z {z:.2f} '
          f'(chance of any false failure <= {a.alpha:.2g})')
    if a.no_totals:
        print(f'# totals not compared: {a.no_totals}')

    maxd, maxf = 0.0, ''
    for kind, f, x, y in tests:
        d = 100 * (x / sn - y / pn)
        zz = zscore(x, sn, y, pn)
        if kind == 'self' and abs(d) > abs(maxd):
            maxd, maxf = d, f
        tag = 'FAIL' if zz > z else 'ok'
        print(f'# {tag:4} {kind:5} sa {100 * x / sn:6.2f}% perf {100 * y / pn:6.2f}% '
              f'diff {d:+6.2f} z {zz:5.2f}  {f}')
        if zz > z:
            fails.append(f'{kind} share of {f}: sa {100 * x / sn:.2f}% perf '
                         f'{100 * y / pn:.2f}% (diff {d:+.2f} points, z {zz:.1f} > {z:.2f})')

    # Known splits: sa's (and perf's) total share of a function against the
    # workload's own measurement, which is a share of the time in the measured
    # functions: so is the tools' (out of the samples holding any of them).
    # sd is the binomial sd of that share over the tool's sample count.
    for f, p in sorted(truth.items()):
        for tool, stacks in (('sa', sstacks), ('perf', pstacks)):
            n = sum(c for fs, c in stacks if not fs.isdisjoint(truth)) or 1
            got = sum(c for fs, c in stacks if f in fs) / n
            zz = abs(got - p) / math.sqrt(p * (1 - p) / n)
            print(f'# truth {tool:4} {f}: {100 * got:.2f}% want {100 * p:.2f}% z {zz:.2f}')
            if zz > z and tool == 'sa':  # perf off the truth is said, not failed
                fails.append(f'{tool} total share of {f} {100 * got:.2f}% against the '
                             f'workload\'s {100 * p:.2f}% (z {zz:.1f} > {z:.2f})')

    for fl in fails:
        print('fail ' + fl)
    print(f'result {"fail" if fails else "pass"} n_sa={sn} n_perf={pn} tests={m} z={z:.2f} '
          f'maxself={maxd:+.2f} maxfn={maxf.replace(" ", "_") or "-"} '
          f'main_sa={100 * sr / sn:.1f} main_perf={100 * pr / pn:.1f} fails={len(fails)}')
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
