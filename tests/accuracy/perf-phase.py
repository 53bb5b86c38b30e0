#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Redraw the phase of perf record's sampling timers while it runs.

usage: perf-phase.py CTL_FIFO ACK_FIFO FREQ [EVENT]

perf record -F F -e cpu-clock arms one hrtimer per CPU at a fixed period
for the whole run, so which instant of a server's request cycle its samples
see is fixed by the phase the run began with; two perf records of one
redis-server at the same time gave ksys_write 72.1% and 50.6% of its
samples (tests/accuracy/perf-phase.sh, docs/accuracy.md). sa-record dithers
its period for that reason. This helper gives perf the same: every 5-15 ms
it disables perf's sampling event (EVENT, default cpu-clock) through `perf
record --control fifo:CTL_FIFO,ACK_FIFO` and enables it again after a
random part of one period; a cpu-clock event keeps the rest of its period
while disabled, so its timers resume shifted by that much. Only that event:
disabling all would stop perf's tracking event too, and programs started
meanwhile would have no mappings (the gcc loop: 10% of perf's samples
unnamed). It ends when perf does (or when
perf has not opened the fifo within 30 s).
"""
import errno
import os
import random
import select
import sys
import time


def open_ctl(path, deadline):
    """the control fifo for writing, once perf has opened it for reading"""
    while True:
        try:
            return os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            if e.errno != errno.ENXIO or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def main():
    ctl_path, ack_path, freq = sys.argv[1], sys.argv[2], float(sys.argv[3])
    event = sys.argv[4] if len(sys.argv) > 4 else 'cpu-clock'
    period = 1.0 / freq
    ack = os.open(ack_path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        ctl = open_ctl(ctl_path, time.monotonic() + 30)
    except OSError:
        return 0
    redrawn = 0

    def command(word):
        os.write(ctl, word.encode() + b'\n')
        # perf answers "ack\n" once done; a perf that has gone answers nothing
        if not select.select([ack], [], [], 2.0)[0]:
            raise BrokenPipeError
        if not os.read(ack, 64):
            raise BrokenPipeError

    try:
        while True:
            time.sleep(random.uniform(0.005, 0.015))
            command('disable ' + event)
            time.sleep(random.uniform(0, period))
            command('enable ' + event)
            redrawn += 1
    except OSError:
        pass
    print('perf-phase: %d redraws' % redrawn, file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
