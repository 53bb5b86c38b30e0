// SPDX-License-Identifier: MIT
/*
 * strclip.c - cutting host strings to the format's string limit, at a
 * character boundary, with a visible mark (strclip.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "strclip.h"

/* How many bytes of @s to keep before the mark: no UTF-8 character split. */
static size_t head_len(const char *s)
{
	size_t n = SAF_MAX_STRING - (sizeof(REC_CLIP_MARK) - 1);
	size_t back = 0;

	/* at most 3 continuation bytes follow a lead byte */
	while (back < 3 && n > back && ((unsigned char)s[n - back] & 0xc0) == 0x80)
		back++;
	return ((unsigned char)s[n - back] & 0xc0) == 0x80 ? n : n - back;
}

struct saf_str rec_strclip(const char *s, size_t len, char *buf, uint64_t *clipped)
{
	size_t n;

	if (!s)
		return (struct saf_str){"", 0};
	if (len <= SAF_MAX_STRING)
		return (struct saf_str){s, (uint32_t)len};
	n = head_len(s);
	memcpy(buf, s, n);
	memcpy(buf + n, REC_CLIP_MARK, sizeof(REC_CLIP_MARK));
	if (clipped)
		(*clipped)++;
	return (struct saf_str){buf, (uint32_t)(n + sizeof(REC_CLIP_MARK) - 1)};
}

char *rec_strclip_dup(const char *s, size_t len, uint64_t *clipped)
{
	rec_clipbuf buf;
	struct saf_str v = rec_strclip(s, len, buf, clipped);
	char *d = malloc(v.len + 1);

	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(d, v.str, v.len);
	d[v.len] = '\0';
	return d;
}
