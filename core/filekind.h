/* SPDX-License-Identifier: MIT */
/*
 * filekind.h - what a file that is not a regular one is, in the words both
 * programs use when they refuse to read it.
 */
#ifndef SAC_FILEKIND_H
#define SAC_FILEKIND_H

#include <sys/stat.h>

/**
 * sac_file_kind() - "a symbolic link", "a FIFO", "a character device", "a
 * block device", "a socket" or "a directory" by the type bits of @mode.
 * @return a static string, or NULL for a regular file or another type.
 * Thread-safe.
 */
const char *sac_file_kind(mode_t mode);

#endif /* SAC_FILEKIND_H */
