#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""jvm-perfdata.py PERF.DATA PID MAP: perf's side of jvm-perfmap.sh, read
from perf.data here, as perf report names JIT code: a sample of PID's
threads named "java" whose ip lies in no file mapping (anonymous memory:
the code cache) is named when the perf map perf would read at report time
(MAP, the last version) covers it, else [unknown]. A thread without a
COMM record of its own has the name it was cloned with, java's. perf 6.1's own perf
script and perf report abort on these files on a host where other sessions
load BPF programs ("assertion failed at util/build-id.c:1010").
Prints "named unnamed"."""
import struct
import sys

PERF_RECORD_MMAP, PERF_RECORD_COMM, PERF_RECORD_SAMPLE, PERF_RECORD_MMAP2 = 1, 3, 9, 10


def jit_ranges(path):
    out = []
    with open(path, errors='replace') as f:
        for line in f:
            p = line.split(None, 2)
            if len(p) >= 2:
                out.append((int(p[0], 16), int(p[0], 16) + int(p[1], 16)))
    return out


def main():
    data, pid, mp = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(data, 'rb') as f:
        buf = f.read()
    magic, _, attr_size, a_off, a_size, d_off, d_size = struct.unpack_from('<8sQQQQQQ', buf)
    if magic != b'PERFILE2' or a_size < attr_size:
        sys.exit('not a perf.data file')
    st = struct.unpack_from('<Q', buf, a_off + 24)[0]
    files, comm, ips = [], {}, []
    pos, end = d_off, d_off + d_size
    while pos + 8 <= end:
        typ, _, size = struct.unpack_from('<IHH', buf, pos)
        if size == 0:
            break
        body = pos + 8
        if typ in (PERF_RECORD_MMAP, PERF_RECORD_MMAP2):
            p, _, start, ln = struct.unpack_from('<IIQQ', buf, body)
            name_at = body + (24 + 8 if typ == PERF_RECORD_MMAP else 24 + 8 + 24 + 8)
            name = buf[name_at:pos + size].split(b'\0')[0].decode(errors='replace')
            if p == pid and name.startswith('/') and not name.startswith('//'):
                files.append((start, start + ln))
        elif typ == PERF_RECORD_COMM:
            p, t = struct.unpack_from('<II', buf, body)
            comm[t] = buf[body + 8:pos + size].split(b'\0')[0].decode(errors='replace')
        elif typ == PERF_RECORD_SAMPLE:
            q, ip, p, t = body, None, None, None
            if st & (1 << 16):  # IDENTIFIER
                q += 8
            if st & (1 << 0):  # IP
                ip = struct.unpack_from('<Q', buf, q)[0]
                q += 8
            if st & (1 << 1):  # TID
                p, t = struct.unpack_from('<II', buf, q)
            if p == pid and ip is not None:
                ips.append((t, ip))
        pos += size
    jit = jit_ranges(mp)
    named = unnamed = 0
    for t, ip in ips:
        if comm.get(t, 'java') != 'java' or ip >= 1 << 63:  # a new thread keeps java's
            continue
        if any(a <= ip < b for a, b in files):
            continue
        if any(a <= ip < b for a, b in jit):
            named += 1
        else:
            unnamed += 1
    print(named, unnamed)


main()
