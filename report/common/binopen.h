/* SPDX-License-Identifier: MIT */
/*
 * binopen.h - opening a binary or debug file that a recording names: the
 * recording comes from another host, so its paths may name a FIFO, a device
 * or a file of any size here (docs/security.md, "sa-report").
 */
#ifndef RPT_BINOPEN_H
#define RPT_BINOPEN_H

/* Past this a file is not read: the largest debug files seen are ~4 GiB. */
#define RPT_BIN_MAX_SIZE (32ull << 30)

/**
 * rpt_bin_open() - open @path read-only if it is a regular file of at most
 * RPT_BIN_MAX_SIZE bytes. It is first opened O_PATH (which opens no FIFO and
 * no device), checked with fstat(), then reopened through /proc/self/fd, so
 * the checked file is the one read. A refused file is named on stderr once
 * per path (a FIFO would otherwise block the report forever).
 * @return an fd the caller closes, or -errno: -ENOENT and the like when
 * there is no file; -EPERM not a regular file; -EFBIG too large.
 * Thread-safe (the prefetch threads open debug files).
 */
int rpt_bin_open(const char *path);

#endif /* RPT_BINOPEN_H */
