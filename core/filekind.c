// SPDX-License-Identifier: MIT
/*
 * filekind.c - names of the file types sa-record and sa-report refuse.
 */
#include <stddef.h>

#include "filekind.h"

const char *sac_file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFLNK:
		return "a symbolic link";
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	case S_IFDIR:
		return "a directory";
	}
	return NULL;
}
