// SPDX-License-Identifier: MIT
/*
 * contentid.c - sac_contentid__fd(): a file's bytes hashed in 1 MiB blocks
 * by two chains of sac_hash_bulk() with distinct seeds. The blocks are cut
 * at fixed offsets, so the value does not depend on how reads return.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "contentid.h"
#include "hash.h"

#define BLOCK (1u << 20)
#define SEED1 0x5341484153483031ull /* "SAHASH01" */
#define SEED2 0x9e3779b97f4a7c15ull

struct chains {
	uint64_t h1, h2;
};

/* Bytes [@off, @off + @len) of @fd into the chains, a block at a time. */
static int hash_range(int fd, uint8_t *buf, uint64_t off, uint64_t len, struct chains *c)
{
	while (len) {
		size_t want = len < BLOCK ? (size_t)len : BLOCK, got = 0;

		while (got < want) {
			ssize_t n = pread(fd, buf + got, want - got, (off_t)(off + got));

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -errno;
			if (!n)
				return -EIO; /* the file shrank */
			got += (size_t)n;
		}
		c->h1 = sac_hash_bulk(buf, want, c->h1 ^ SEED1);
		c->h2 = sac_hash_bulk(buf, want, c->h2 ^ SEED2);
		off += want;
		len -= want;
	}
	return 0;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int sac_contentid__fd(int fd, uint8_t out[SAC_CONTENTID_LEN])
{
	struct chains c = {SEED1, SEED2};
	uint64_t size;
	struct stat st;
	uint8_t *buf;
	int err;

	if (fstat(fd, &st))
		return -errno;
	size = (uint64_t)st.st_size;
	buf = malloc(BLOCK);
	if (!buf)
		return -ENOMEM;
	if (size <= SAC_CONTENTID_WHOLE) {
		err = hash_range(fd, buf, 0, size, &c);
	} else {
		err = hash_range(fd, buf, 0, SAC_CONTENTID_PART, &c);
		if (!err)
			err = hash_range(fd, buf, size - SAC_CONTENTID_PART, SAC_CONTENTID_PART,
					 &c);
	}
	free(buf);
	if (err)
		return err;
	put_le64(out, sac_hash_mix64(c.h1 ^ size));
	put_le64(out + 8, sac_hash_mix64(c.h2 + size));
	return 0;
}
