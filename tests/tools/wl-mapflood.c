// SPDX-License-Identifier: MIT
/*
 * wl-mapflood.c - a hostile user's side-band flood (tests/cli/5212, tests/bench/
 * bench-mapflood.sh). `gen TEMPLATE DIR N` writes N copies of the ELF file
 * TEMPLATE, each with its own build id (the first 4 bytes of the note set
 * to its number); `map DIR N` maps each copy once, PROT_EXEC, then exits:
 * N MMAP2 records of N distinct files per process.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
static int gen(const char *tpl, const char *dir, int n)
{
	static char buf[1 << 20];
	char path[4096];
	ssize_t len;
	char *note = NULL;
	int fd = open(tpl, O_RDONLY);

	if (fd < 0 || (len = read(fd, buf, sizeof(buf))) <= 0)
		return 1;
	close(fd);
	for (ssize_t i = 0; i + 16 < len; i++) /* namesz 4, type 3 (NT_GNU_BUILD_ID), "GNU" */
		if (!memcmp(buf + i, "\4\0\0\0", 4) && !memcmp(buf + i + 8, "\3\0\0\0GNU", 8)) {
			note = buf + i + 16;
			break;
		}
	if (!note)
		return 2;
	for (int k = 0; k < n; k++) {
		memcpy(note, &k, sizeof(k));
		snprintf(path, sizeof(path), "%s/l%05d.so", dir, k);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, buf, len) != len)
			return 3;
		close(fd);
	}
	return 0;
}
static int map(const char *dir, int n)
{
	char path[4096];

	for (int k = 0; k < n; k++) {
		snprintf(path, sizeof(path), "%s/l%05d.so", dir, k);
		int fd = open(path, O_RDONLY);
		if (fd < 0 ||
		    mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED)
			return 1;
		close(fd);
	}
	return 0;
}
int main(int c, char **v)
{
	if (c == 5 && !strcmp(v[1], "gen"))
		return gen(v[2], v[3], atoi(v[4]));
	if (c == 4 && !strcmp(v[1], "map"))
		return map(v[2], atoi(v[3]));
	return 64;
}
