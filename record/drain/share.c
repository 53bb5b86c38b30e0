// SPDX-License-Identifier: MIT
/*
 * share.c - a thread's periods given to its stacks by their samples
 * (share.h says why).
 */
#include <errno.h>
#include <stdlib.h>
#include "htab.h"
#include "share.h"

struct share_key {
	__u32 tgid, tid;
};

struct share_val {
	__u64 periods, samples; /* the thread's, from the first pass */
	__u64 taken, given;	/* samples taken and periods given so far */
};

struct rec_share {
	struct rec_htab *threads; /* share_key -> share_val */
	bool failed;		  /* a first pass ran out of memory: counts stay */
};

struct rec_share *rec_share__new(void)
{
	struct rec_share *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->threads = rec_htab__new(sizeof(struct share_key), sizeof(struct share_val));
	if (!s->threads) {
		free(s);
		return NULL;
	}
	return s;
}

int rec_share__add(struct rec_share *s, __u32 tgid, __u32 tid, __u64 count, __u64 samples)
{
	struct share_key k = {tgid, tid};
	struct share_val *v = s->failed ? NULL : rec_htab__put(s->threads, &k, NULL);

	if (!v) {
		s->failed = true;
		return -ENOMEM;
	}
	v->periods += count;
	v->samples += samples;
	return 0;
}

__u64 rec_share__take(struct rec_share *s, __u32 tgid, __u32 tid, __u64 count, __u64 samples)
{
	struct share_key k = {tgid, tid};
	struct share_val *v = s->failed ? NULL : rec_htab__get(s->threads, &k);
	unsigned __int128 due;
	__u64 n;

	if (!v || !v->samples || samples > v->samples - v->taken)
		return count; /* not seen in the first pass: as it was */
	v->taken += samples;
	due = ((unsigned __int128)v->periods * v->taken + v->samples / 2) / v->samples;
	n = (__u64)due - v->given;
	v->given = (__u64)due;
	return n;
}

void rec_share__clear(struct rec_share *s)
{
	rec_htab__clear(s->threads);
	s->failed = false;
}

void rec_share__free(struct rec_share *s)
{
	if (!s)
		return;
	rec_htab__free(s->threads);
	free(s);
}
