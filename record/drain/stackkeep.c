// SPDX-License-Identifier: MIT
/*
 * stackkeep.c - frames of the stacks of the current and the previous file
 * of a rotated recording. Samples taken after an interval's flip are
 * interned before the rotation but counted in the next file; their STACK
 * records are written there again from here. Memory: two files' stacks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "grow.h"
#include "htab.h"
#include "stackkeep.h"

struct kept {
	__u32 kind, n;
	size_t off; /* into ips */
};

struct file_stacks {
	struct rec_htab *ids; /* __u32 id -> struct kept */
	__u64 *ips;
	size_t nips, cap;
};

struct stack_frames {
	struct file_stacks cur, prev;
};

static int fs_init(struct file_stacks *fs)
{
	memset(fs, 0, sizeof(*fs));
	fs->ids = rec_htab__new(sizeof(__u32), sizeof(struct kept));
	return fs->ids ? 0 : -ENOMEM;
}

static void fs_release(struct file_stacks *fs)
{
	rec_htab__free(fs->ids);
	free(fs->ips);
	memset(fs, 0, sizeof(*fs));
}

struct stack_frames *rec_stack_frames__new(void)
{
	struct stack_frames *sf = calloc(1, sizeof(*sf));

	if (!sf || fs_init(&sf->cur) || fs_init(&sf->prev)) {
		rec_stack_frames__free(sf);
		errno = ENOMEM;
		return NULL;
	}
	return sf;
}

int rec_stack_frames__add(struct stack_frames *sf, __u32 id, __u32 kind, const __u64 *ips, __u32 n)
{
	struct file_stacks *fs = &sf->cur;
	struct kept *k;
	bool is_new;

	if (SAC_GROW(fs->ips, fs->cap, fs->nips + n, 4096))
		return -ENOMEM;
	k = rec_htab__put(fs->ids, &id, &is_new);
	if (!k)
		return -ENOMEM;
	if (!is_new)
		return 0;
	memcpy(fs->ips + fs->nips, ips, n * sizeof(*ips));
	*k = (struct kept){.kind = kind, .n = n, .off = fs->nips};
	fs->nips += n;
	return 0;
}

int rec_stack_frames__carry(struct stack_frames *sf, __u32 id, __u32 *kind, const __u64 **ips,
			    __u32 *n)
{
	const struct kept *k;
	int err;

	if (rec_htab__get(sf->cur.ids, &id))
		return 0;
	k = rec_htab__get(sf->prev.ids, &id);
	if (!k)
		return 0;
	err = rec_stack_frames__add(sf, id, k->kind, sf->prev.ips + k->off, k->n);
	if (err)
		return err;
	k = rec_htab__get(sf->cur.ids, &id);
	*kind = k->kind;
	*n = k->n;
	*ips = sf->cur.ips + k->off;
	return 1;
}

void rec_stack_frames__new_file(struct stack_frames *sf)
{
	struct file_stacks t = sf->prev;

	sf->prev = sf->cur;
	sf->cur = t;
	rec_htab__clear(sf->cur.ids);
	sf->cur.nips = 0;
}

void rec_stack_frames__free(struct stack_frames *sf)
{
	if (!sf)
		return;
	fs_release(&sf->cur);
	fs_release(&sf->prev);
	free(sf);
}
