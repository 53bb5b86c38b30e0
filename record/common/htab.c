// SPDX-License-Identifier: MIT
/*
 * htab.c - a small open-addressing hash table with fixed-size keys and
 * values, used for sa-record's user-space tables (file stack ids, per
 * interval aggregation, processes and build ids seen). Linear probing,
 * power-of-two capacity, grows at 70% load; no deletion but clear().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hash.h"
#include "htab.h"

struct rec_htab {
	size_t key_sz;
	size_t val_sz;
	size_t val_off; /* key_sz rounded up so the value is 8-byte aligned */
	size_t slot_sz; /* 1 used byte, padding, key, padding, value */
	size_t cap;	/* power of two */
	size_t len;
	unsigned char *slots;
};

#define KEY_OFF 8

static inline unsigned char *slot_at(const struct rec_htab *h, size_t i)
{
	return h->slots + i * h->slot_sz;
}

struct rec_htab *rec_htab__new(size_t key_sz, size_t val_sz)
{
	struct rec_htab *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->key_sz = key_sz;
	h->val_sz = val_sz;
	h->val_off = (KEY_OFF + key_sz + 7) & ~(size_t)7;
	h->slot_sz = (h->val_off + val_sz + 7) & ~(size_t)7;
	h->cap = 64;
	h->slots = calloc(h->cap, h->slot_sz);
	if (!h->slots) {
		free(h);
		errno = ENOMEM;
		return NULL;
	}
	return h;
}

static size_t find(const struct rec_htab *h, const void *key, bool *found)
{
	size_t mask = h->cap - 1;
	size_t i = sac_hash_bytes(key, h->key_sz, 0) & mask;
	unsigned char *s;

	for (;; i = (i + 1) & mask) {
		s = slot_at(h, i);
		if (!s[0]) {
			*found = false;
			return i;
		}
		if (!memcmp(s + KEY_OFF, key, h->key_sz)) {
			*found = true;
			return i;
		}
	}
}

static int grow(struct rec_htab *h)
{
	struct rec_htab n = *h;
	unsigned char *s;
	bool found;
	size_t i;

	n.cap = h->cap * 2;
	n.slots = calloc(n.cap, n.slot_sz);
	if (!n.slots)
		return -ENOMEM;
	for (i = 0; i < h->cap; i++) {
		s = slot_at(h, i);
		if (s[0])
			memcpy(slot_at(&n, find(&n, s + KEY_OFF, &found)), s, h->slot_sz);
	}
	free(h->slots);
	*h = n;
	return 0;
}

void *rec_htab__get(const struct rec_htab *h, const void *key)
{
	bool found;
	size_t i = find(h, key, &found);

	return found ? slot_at(h, i) + h->val_off : NULL;
}

void *rec_htab__put(struct rec_htab *h, const void *key, bool *is_new)
{
	unsigned char *s;
	bool found;
	size_t i;

	if ((h->len + 1) * 10 > h->cap * 7 && grow(h)) {
		errno = ENOMEM;
		return NULL;
	}
	i = find(h, key, &found);
	s = slot_at(h, i);
	if (!found) {
		s[0] = 1;
		memcpy(s + KEY_OFF, key, h->key_sz);
		memset(s + h->val_off, 0, h->val_sz);
		h->len++;
	}
	if (is_new)
		*is_new = !found;
	return s + h->val_off;
}

size_t rec_htab__len(const struct rec_htab *h)
{
	return h->len;
}

const void *rec_htab__next(const struct rec_htab *h, size_t *iter, void **val)
{
	unsigned char *s;

	for (; *iter < h->cap; (*iter)++) {
		s = slot_at(h, *iter);
		if (s[0]) {
			(*iter)++;
			if (val)
				*val = s + h->val_off;
			return s + KEY_OFF;
		}
	}
	return NULL;
}

void rec_htab__clear(struct rec_htab *h)
{
	memset(h->slots, 0, h->cap * h->slot_sz);
	h->len = 0;
}

void rec_htab__free(struct rec_htab *h)
{
	if (!h)
		return;
	free(h->slots);
	free(h);
}
