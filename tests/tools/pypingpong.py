#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""pypingpong.py DEPTH SECONDS - two threads of one Python process pass a
byte back and forth over two pipes for SECONDS, each blocking in os.read
DEPTH Python frames deep: a thread switch-out every few microseconds, each
with DEPTH + 2 Python frames to walk, for tests/bench/bench-pycost.sh
(OFFCPU=1: what reading CPython frames costs per switch-out)."""
import os
import sys
import threading
import time


def bounce(depth, r, w, until):
    if depth > 0:
        return bounce(depth - 1, r, w, until)
    n = 0
    while time.monotonic() < until:
        if not os.read(r, 1):
            break
        os.write(w, b"x")
        n += 1
    os.close(w)
    return n


def main():
    depth, until = int(sys.argv[1]), time.monotonic() + float(sys.argv[2])
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    th = threading.Thread(target=bounce, args=(depth, b_r, a_w, until))
    th.start()
    os.write(b_w, b"x")
    bounce(depth, a_r, b_w, until)
    th.join()


if __name__ == "__main__":
    main()
