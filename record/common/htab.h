/* SPDX-License-Identifier: MIT */
/*
 * htab.h - fixed-size key/value hash table for sa-record's user-space
 * tables. Not thread-safe; sa-record is single-threaded.
 */
#ifndef REC_HTAB_H
#define REC_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rec_htab;

/**
 * rec_htab__new() - an empty table of @key_sz-byte keys (compared bytewise:
 * zero any padding) and @val_sz-byte values.
 * @return a table released with rec_htab__free(), or NULL with errno set.
 */
struct rec_htab *rec_htab__new(size_t key_sz, size_t val_sz);

/**
 * rec_htab__get() - the value stored under @key, or NULL. The pointer is
 * borrowed and valid until the next rec_htab__put() or rec_htab__clear().
 */
void *rec_htab__get(const struct rec_htab *h, const void *key);

/**
 * rec_htab__put() - the value under @key, inserted zero-filled if absent
 * (then *@is_new is true; @is_new may be NULL). Borrowed as for get().
 * @return the value, or NULL with errno ENOMEM.
 */
void *rec_htab__put(struct rec_htab *h, const void *key, bool *is_new);

/** rec_htab__len() - number of keys. */
size_t rec_htab__len(const struct rec_htab *h);

/**
 * rec_htab__next() - iterate: start with *@iter = 0; returns each key once
 * (and its value in *@val if @val is set), then NULL. Do not put() while
 * iterating.
 */
const void *rec_htab__next(const struct rec_htab *h, size_t *iter, void **val);

/** rec_htab__clear() - drop every key, keep the capacity. */
void rec_htab__clear(struct rec_htab *h);

/** rec_htab__free() - release the table. Accepts NULL. */
void rec_htab__free(struct rec_htab *h);

#endif /* REC_HTAB_H */
