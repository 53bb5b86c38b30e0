/* SPDX-License-Identifier: MIT */
/*
 * hash.h - the hashes of sa's tables, one copy for record/ and report/: a
 * word-at-a-time hash (and a four-lane one for kilobytes) where speed
 * matters, and seeded FNV-1a where a table's order decides output order
 * (report/common/strpool.c, session/load.c, session/ustack.c): its values must not change.
 */
#ifndef SAC_HASH_H
#define SAC_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SAC_FNV1A_BASIS 0xcbf29ce484222325ULL /* FNV-1a 64's offset basis */

/** sac_hash_mix64() - a well-mixed hash of a 64-bit value (MurmurHash3's fmix64). */
static inline uint64_t sac_hash_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/**
 * sac_hash_fnv1a() - FNV-1a 64 of @len bytes at @p, from state @h
 * (SAC_FNV1A_BASIS to start; a previous result to go on). Unmixed: its low
 * bits are poor, so index a table by sac_hash_fnv() instead. Thread-safe.
 */
static inline uint64_t sac_hash_fnv1a(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/**
 * sac_hash_fnv() - FNV-1a of @len bytes at @p varied by @seed, then mixed.
 * The report's tables index by it, and some of them decide output order.
 * Inline, as the string pool's lookups had it.
 * @return the hash. Thread-safe.
 */
static inline uint64_t sac_hash_fnv(const void *p, size_t len, uint64_t seed)
{
	return sac_hash_mix64(sac_hash_fnv1a(SAC_FNV1A_BASIS ^ seed, p, len));
}

/**
 * sac_hash_bytes() - 64-bit hash of @len bytes at @p, varied by @seed: a
 * multiply per 8 bytes, for sa-record's keys. Inline, as the tables' lookups
 * had it. Thread-safe.
 */
static inline uint64_t sac_hash_bytes(const void *p, size_t len, uint64_t seed)
{
	const unsigned char *b = p;
	uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ull);
	uint64_t w;

	while (len >= 8) {
		memcpy(&w, b, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
		b += 8;
		len -= 8;
	}
	w = 0;
	memcpy(&w, b, len);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

/**
 * sac_hash_bulk() - 64-bit hash of @len bytes at @p, varied by @seed, about
 * eight times faster than sac_hash_bytes() on kilobytes (four independent
 * multiply chains instead of one). Weaker: for keys that are compared byte
 * for byte on a match, never for identity by hash alone. Thread-safe.
 */
uint64_t sac_hash_bulk(const void *p, size_t len, uint64_t seed);

#endif /* SAC_HASH_H */
