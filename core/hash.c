// SPDX-License-Identifier: MIT
/*
 * hash.c - sac_hash_bulk(), the hash of sa-record's stack copies.
 */
#include <string.h>

#include "hash.h"

/*
 * sac_hash_bytes() runs one chain of dependent multiplies, 8 bytes per
 * multiply's latency; on the 4-32 KiB stack copies of --call-graph dwarf that
 * was the recorder's largest cost. Four chains over 32-byte blocks keep the
 * multiplier busy; the tail and the lanes go through sac_hash_bytes().
 */
uint64_t sac_hash_bulk(const void *p, size_t len, uint64_t seed)
{
	const unsigned char *b = p;
	uint64_t a = seed ^ len, c = seed ^ 0x243f6a8885a308d3ull, d = seed ^ 0x13198a2e03707344ull,
		 e = seed ^ 0xa4093822299f31d0ull, w[4];

	for (; len >= 32; b += 32, len -= 32) {
		memcpy(w, b, 32);
		a = (a ^ w[0]) * 0xff51afd7ed558ccdull;
		c = (c ^ w[1]) * 0xff51afd7ed558ccdull;
		d = (d ^ w[2]) * 0xff51afd7ed558ccdull;
		e = (e ^ w[3]) * 0xff51afd7ed558ccdull;
		a ^= a >> 32;
		c ^= c >> 32;
		d ^= d >> 32;
		e ^= e >> 32;
	}
	w[0] = a;
	w[1] = c;
	w[2] = d;
	w[3] = e;
	return sac_hash_bytes(b, len, sac_hash_bytes(w, sizeof(w), seed));
}
