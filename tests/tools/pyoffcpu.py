#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""pyoffcpu.py SECONDS OUT - a Python program that blocks in three
functions of its own, for tests/cli/3320-python-offcpu.t: in rounds,
py_sleep sleeps 10 ms (time.sleep), py_pipe reads a pipe a forked child
answers 20 ms after each request (os.read), py_cond waits 30 ms on a
threading.Event another thread sets (Condition.wait: a futex), until the
rounds took SECONDS of wall time. Each function times its own time off
the CPU: its wall time (time.monotonic()) less its thread's CPU time
(time.thread_time()). OUT gets "pid PID" (the main thread's id is the
process's) and one line per function: "func NAME SECONDS"."""
import os
import sys
import threading
import time

SLEEP_S, PIPE_S, COND_S = 0.010, 0.020, 0.030


def py_sleep():
    time.sleep(SLEEP_S)


def py_pipe(req_w, rep_r):
    os.write(req_w, b"q")
    if os.read(rep_r, 1) != b"a":
        sys.exit("pyoffcpu: the writer is gone")


def py_cond(go, done):
    done.clear()
    go.set()
    done.wait()


def writer(req_r, rep_w):
    """The child: one byte back PIPE_S after each byte read, until EOF."""
    while os.read(req_r, 1):
        time.sleep(PIPE_S)
        os.write(rep_w, b"a")
    os._exit(0)


def setter(go, done, stop):
    """The thread: sets done COND_S after each go, until stop."""
    while True:
        go.wait()
        go.clear()
        if stop.is_set():
            return
        time.sleep(COND_S)
        done.set()


def main():
    total, out = float(sys.argv[1]), sys.argv[2]
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    child = os.fork()  # before any thread starts
    if child == 0:
        os.close(req_w)
        os.close(rep_r)
        writer(req_r, rep_w)
    os.close(req_r)
    os.close(rep_w)
    go, done, stop = threading.Event(), threading.Event(), threading.Event()
    th = threading.Thread(target=setter, args=(go, done, stop))
    th.start()
    calls = [(py_sleep, ()), (py_pipe, (req_w, rep_r)), (py_cond, (go, done))]
    clocks = {f.__name__: 0.0 for f, _ in calls}
    t_end = time.monotonic() + total
    while time.monotonic() < t_end:
        for f, args in calls:
            w0, c0 = time.monotonic(), time.thread_time()
            f(*args)
            clocks[f.__name__] += (time.monotonic() - w0) - (time.thread_time() - c0)
    stop.set()
    go.set()
    th.join()
    os.close(req_w)
    os.waitpid(child, 0)
    with open(out, "w") as fh:
        fh.write("pid %d\n" % os.getpid())
        for name, secs in clocks.items():
            fh.write("func %s %.6f\n" % (name, secs))


if __name__ == "__main__":
    main()
