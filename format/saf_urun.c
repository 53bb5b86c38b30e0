// SPDX-License-Identifier: MIT
/*
 * saf_urun.c - the runs of a USTACK_SPARSE record ("USTACK_SPARSE record"
 * in docs/format.md): (gap, length, bytes) after one another, in
 * increasing offset from the stack pointer, with one encoding each.
 */
#include <errno.h>
#include <string.h>

#include "saf_internal.h"

/* The run at *@p of [@p, @end) after one ending at @prev_end (first: @first). */
static int urun_get(const uint8_t **p, const uint8_t *end, uint64_t prev_end, bool first,
		    struct saf_urun *r)
{
	uint64_t gap, len;

	if (end - *p >= 2 && (*p)[0] < 0x80 && (*p)[1] < 0x80) { /* both one byte: most runs */
		gap = (*p)[0];
		len = (*p)[1];
		*p += 2;
	} else if (saf_varint_get(p, end, &gap) || saf_varint_get(p, end, &len)) {
		return -EBADMSG;
	}
	if (!len || (!first && !gap)) /* an empty run, or two that should be one */
		return -EBADMSG;
	if (gap > SAF_MAX_USTACK_BYTES || len > SAF_MAX_USTACK_BYTES ||
	    prev_end + gap + len > SAF_MAX_USTACK_BYTES)
		return -EOVERFLOW;
	if (len > (uint64_t)(end - *p))
		return -EBADMSG;
	r->off = (uint32_t)(prev_end + gap);
	r->len = (uint32_t)len;
	r->data = *p;
	*p += len;
	return 0;
}

int saf_urun_check(const struct saf_bytes *runs)
{
	const uint8_t *p = runs->data, *end;
	struct saf_urun r = {0, 0, NULL};
	int err = 0;

	if (!runs->len)
		return 0;
	end = p + runs->len;
	for (bool first = true; !err && p < end; first = false)
		err = urun_get(&p, end, (uint64_t)r.off + r.len, first, &r);
	return err;
}

bool saf_urun__next(const struct saf_ustack *u, size_t *pos, struct saf_urun *r)
{
	const uint8_t *p;

	if (!u->runs.len) { /* a whole copy is one run */
		if (*pos || !u->stack.len)
			return false;
		*r = (struct saf_urun){0, u->stack.len, u->stack.data};
		*pos = 1;
		return true;
	}
	if (*pos >= u->runs.len)
		return false;
	p = u->runs.data + *pos;
	if (urun_get(&p, u->runs.data + u->runs.len, *pos ? (uint64_t)r->off + r->len : 0, !*pos,
		     r))
		return false;
	*pos = (size_t)(p - u->runs.data);
	return true;
}

size_t saf_urun__put(uint8_t *dst, uint32_t gap, const void *data, uint32_t len)
{
	size_t n = saf_varint_put(dst, gap);

	n += saf_varint_put(dst + n, len);
	memcpy(dst + n, data, len);
	return n + len;
}
