// SPDX-License-Identifier: MIT
/*
 * cfifeed.c - --call-graph auto: executable files classified by cfimap.c,
 * their blocks without frame pointers written to the BPF cfipages map.
 *
 * A file is known by the (device, inode) the kernel sees through the vma
 * (inode->i_sb->s_dev, i_ino), which is what fstat() of the mapped file
 * gives here (st_dev re-encoded as the kernel's (major << 20) | minor).
 * For each file the page entries go in first and the SA_CFI_FILE entry
 * last: until it is there the BPF program copies the stack of every sample
 * in that file, so a half-written or refused file is never unwound wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cfifeed.h"
#include "cfimap.h"
#include "grow.h"
#include "htab.h"
#include "safeopen.h"
#include "sa_shared.h"

struct devino {
	uint64_t dev, ino;
};

/* A file classified before attach, written then. */
struct pending {
	struct devino di;
	struct rec_cfimap m;
};

struct rec_cfifeed {
	struct rec_htab *seen; /* struct devino -> nothing */
	struct pending *pend;
	size_t npend, cap;
	int map_fd;
	struct rec_cfifeed_stats st;
};

struct rec_cfifeed *rec_cfifeed__new(void)
{
	struct rec_cfifeed *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->map_fd = -1;
	f->seen = rec_htab__new(sizeof(struct devino), 1);
	if (!f->seen) {
		free(f);
		return NULL;
	}
	return f;
}

/* Pages, then the file entry; a refused update leaves the file unmarked. */
static void write_file(struct rec_cfifeed *f, const struct devino *di, const struct rec_cfimap *m)
{
	struct sa_cfi_key k = {.dev = di->dev, .ino = di->ino};
	uint64_t zero = 0;
	size_t i;

	for (i = 0; m && i < m->npages; i++) {
		k.page = m->pages[i].page;
		if (bpf_map_update_elem(f->map_fd, &k, &m->pages[i].bits, BPF_ANY)) {
			f->st.full++;
			return;
		}
		f->st.pages++;
	}
	k.page = SA_CFI_FILE;
	if (bpf_map_update_elem(f->map_fd, &k, &zero, BPF_ANY))
		f->st.full++;
}

static void keep(struct rec_cfifeed *f, const struct devino *di, struct rec_cfimap *m)
{
	if (SAC_GROW(f->pend, f->cap, f->npend + 1, 16)) {
		rec_cfimap__release(m); /* unclassified: its samples are copied */
		return;
	}
	f->pend[f->npend].di = *di;
	f->pend[f->npend++].m = *m;
}

void rec_cfifeed__file(void *arg, int fd, const char *path)
{
	struct rec_cfifeed *f = arg;
	struct rec_cfimap m = {0};
	struct devino di;
	struct stat st;
	int own = -1, err;
	bool is_new;

	if (fd < 0)
		fd = own = rec_safe_open(
			path,
			&(struct rec_safeopen_opts){.sz = sizeof(struct rec_safeopen_opts),
						    .max_size = REC_BIN_MAX_SIZE},
			NULL, 0);
	if (fd < 0 || fstat(fd, &st))
		goto out; /* unclassified: copied, which is never wrong */
	di = (struct devino){((uint64_t)major(st.st_dev) << 20) | minor(st.st_dev), st.st_ino};
	if (!rec_htab__put(f->seen, &di, &is_new) || !is_new)
		goto out;
	f->st.files++;
	err = rec_cfimap__classify(fd, &m);
	if (err == -ENOMEM)
		goto out;
	if (err)
		f->st.failed++; /* no CFI to unwind with: frame pointers it is */
	else if (m.whole)
		f->st.whole++;
	if (f->map_fd >= 0) {
		write_file(f, &di, err ? NULL : &m);
		rec_cfimap__release(&m);
	} else {
		keep(f, &di, &m);
	}
out:
	if (own >= 0)
		close(own);
}

int rec_cfifeed__attach(struct rec_cfifeed *f, int map_fd)
{
	size_t i;

	f->map_fd = map_fd;
	for (i = 0; i < f->npend; i++) {
		write_file(f, &f->pend[i].di, &f->pend[i].m);
		rec_cfimap__release(&f->pend[i].m);
	}
	free(f->pend);
	f->pend = NULL;
	f->npend = f->cap = 0;
	return 0;
}

const struct rec_cfifeed_stats *rec_cfifeed__stats(const struct rec_cfifeed *f)
{
	return &f->st;
}

void rec_cfifeed__free(struct rec_cfifeed *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->npend; i++)
		rec_cfimap__release(&f->pend[i].m);
	free(f->pend);
	rec_htab__free(f->seen);
	free(f);
}
