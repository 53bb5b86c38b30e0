#!/bin/bash
# SPDX-License-Identifier: MIT
# init.sh - the guest's side of the kernel matrix, run by the root's
# /sbin/sa-guest-init from the second disk (/sa, read-only): mounts what
# sa-record and the workloads use, runs the smoke set, writes every line of
# it to the console prefixed "SA-SMOKE " (run.sh reads them there) and
# powers the guest off. Both disks are qemu snapshots: nothing is kept.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp LANG=C.UTF-8
mount -t tmpfs -o size=1200m tmpfs /tmp
mount -t tmpfs tmpfs /run 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
ulimit -l unlimited
echo "SA-SMOKE kernel $(uname -r)"
mkdir -p /tmp/out
bash /sa/smoke.sh /sa /tmp/out 2>&1 | sed -u 's/^/SA-SMOKE /'
echo "SA-SMOKE end"
sync
echo o >/proc/sysrq-trigger
sleep 10
