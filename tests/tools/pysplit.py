#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""pysplit.py SECONDS OUT - a Python program with a known CPU split, for
tests/cli/3300-python-split.t: three functions of its own take turns in
the ratio 1:2:3 (slices of 2, 4 and 6 ms of thread CPU time) until they
used SECONDS of it in all. Each times itself with time.thread_time();
py_json parses a JSON document (json.loads, whose scanner is C). OUT gets
one line per function: "func NAME SECONDS"."""
import json
import sys
import time

DOC = json.dumps({"k%d" % i: [i, str(i), {"x": i * 0.5, "y": [1, 2, 3]}] for i in range(40)})


def py_alpha(until):
    n = 0
    while time.thread_time() < until:
        for i in range(300):
            n += i * i
    return n


def py_beta(until):
    s = 0
    while time.thread_time() < until:
        for i in range(100):
            s += len(str(i) + "x")
    return s


def py_json(until):
    n = 0
    while time.thread_time() < until:
        n += len(json.loads(DOC))
    return n


def main():
    total, out = float(sys.argv[1]), sys.argv[2]
    funcs = [(py_alpha, 0.002), (py_beta, 0.004), (py_json, 0.006)]
    clocks = {f.__name__: 0.0 for f, _ in funcs}
    spent = 0.0
    while spent < total:
        for f, slice_s in funcs:
            t0 = time.thread_time()
            f(t0 + slice_s)
            d = time.thread_time() - t0
            clocks[f.__name__] += d
            spent += d
    with open(out, "w") as fh:
        for name, secs in clocks.items():
            fh.write("func %s %.6f\n" % (name, secs))


if __name__ == "__main__":
    main()
