// SPDX-License-Identifier: MIT
/*
 * fuzz_reader.c - libFuzzer harness: any bytes go to saf_reader__open_mem()
 * and are read to the end, touching every field of every record, so the
 * sanitizers see any read the reader's validation let through; and to
 * saf_reader__open_stream() in small pieces, which must read the same.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "saf.h"
#include "saf_internal.h"

static volatile uint64_t sink;

static void touch_str(struct saf_str s)
{
	assert(s.str && s.len <= SAF_MAX_STRING && s.str[s.len] == '\0');
	sink += s.len ? (uint8_t)s.str[0] + (uint8_t)s.str[s.len - 1] : 0;
}

static void touch_bytes(struct saf_bytes b)
{
	uint32_t i;

	assert(b.len <= SAF_MAX_BUILD_ID);
	for (i = 0; i < b.len; i++)
		sink += b.data[i];
}

static void touch(const struct saf_record *r)
{
	uint32_t i;

	switch (r->kind) {
	case SAF_REC_META:
		touch_str(r->meta.writer), touch_str(r->meta.hostname);
		touch_str(r->meta.kernel_release), touch_str(r->meta.boot_id);
		touch_str(r->meta.arch), touch_str(r->meta.cmdline);
		touch_str(r->meta.target), touch_str(r->meta.event);
		sink += r->meta.freq_hz + r->meta.ncpus + r->meta.start_realtime_ns +
			r->meta.start_mono_ns + r->meta.flags + r->meta.page_size +
			r->meta.off_cpu_min_ns;
		break;
	case SAF_REC_PROC:
		touch_str(r->proc.comm), touch_str(r->proc.exe);
		sink += r->proc.pid + r->proc.gen + r->proc.ppid + r->proc.time_ns;
		break;
	case SAF_REC_MAP:
		touch_str(r->map.path), touch_bytes(r->map.build_id);
		sink += r->map.pid + r->map.gen + r->map.time_ns + r->map.start + r->map.end +
			r->map.pgoff + r->map.flags + r->map.dev + r->map.inode;
		break;
	case SAF_REC_COMM:
		touch_str(r->comm.comm);
		sink += r->comm.pid + r->comm.tid + r->comm.time_ns;
		break;
	case SAF_REC_EXIT: sink += r->exit.pid + r->exit.time_ns; break;
	case SAF_REC_STACK:
		assert(r->stack.nframes <= SAF_MAX_FRAMES);
		for (i = 0; i < r->stack.nframes; i++)
			sink += r->stack.ips[i];
		sink += r->stack.id + r->stack.kind;
		break;
	case SAF_REC_INTERVAL:
		sink += r->interval.seq + r->interval.start_ns + r->interval.end_ns;
		break;
	case SAF_REC_COUNT:
		touch_str(r->count.comm);
		sink += r->count.pid + r->count.tid + r->count.gen + r->count.ustack +
			r->count.kstack + r->count.count;
		break;
	case SAF_REC_OFFCPU:
		touch_str(r->offcpu.comm);
		sink += r->offcpu.pid + r->offcpu.tid + r->offcpu.gen + r->offcpu.ustack +
			r->offcpu.kstack + r->offcpu.count + r->offcpu.time_ns + r->offcpu.flags;
		break;
	case SAF_REC_LOSS:
		assert(r->loss.ncounters <= SAF_MAX_COUNTERS);
		for (i = 0; i < r->loss.ncounters; i++)
			sink += r->loss.ids[i] + r->loss.values[i];
		sink += r->loss.seq + (saf_counter__name(r->loss.ids[0]) != NULL);
		break;
	case SAF_REC_KSYM:
		touch_str(r->ksym.name), touch_str(r->ksym.module);
		sink += r->ksym.addr;
		break;
	case SAF_REC_SYMTAB: touch_bytes(r->symtab.build_id), touch_str(r->symtab.path); break;
	case SAF_REC_USYM:
		touch_str(r->usym.name);
		sink += r->usym.offset + r->usym.size;
		break;
	case SAF_REC_CPUGAP: sink += r->cpugap.cpu + r->cpugap.from_ns + r->cpugap.to_ns; break;
	case SAF_REC_ULINE:
		touch_str(r->uline.file), touch_str(r->uline.name);
		sink += r->uline.offset + r->uline.size + r->uline.depth + r->uline.line;
		break;
	case SAF_REC_JITSYM:
		touch_str(r->jitsym.name);
		sink += r->jitsym.pid + r->jitsym.start + r->jitsym.size;
		break;
	case SAF_REC_USTACK:
	case SAF_REC_USTACK_SPARSE: {
		struct saf_urun run = { 0, 0, NULL };
		size_t pos = 0;
		uint64_t end = 0;

		assert(r->ustack.nregs <= SAF_MAX_UREGS);
		assert(r->ustack.stack.len <= SAF_MAX_USTACK_BYTES);
		assert(r->kind == SAF_REC_USTACK_SPARSE || !r->ustack.runs.len);
		touch_str(r->ustack.comm), touch_bytes(r->ustack.stack);
		while (saf_urun__next(&r->ustack, &pos, &run)) { /* checked at decode */
			assert(run.len && run.off >= end &&
			       (uint64_t)run.off + run.len <= SAF_MAX_USTACK_BYTES);
			end = (uint64_t)run.off + run.len;
			for (i = 0; i < run.len; i++)
				sink += run.data[i];
		}
		assert(pos == (r->ustack.runs.len ? r->ustack.runs.len : r->ustack.stack.len != 0));
		for (i = 0; i < r->ustack.nregs; i++)
			sink += r->ustack.regs[i];
		sink += r->ustack.pid + r->ustack.tid + r->ustack.gen + r->ustack.time_ns +
			r->ustack.kstack + r->ustack.count;
		break;
	}
	case SAF_REC_END:
		sink += r->end.end_mono_ns + r->end.samples + r->end.lost + r->end.intervals +
			r->end.chunks;
		break;
	default:
		assert(!"unknown kind returned");
	}
}

/*
 * Random bytes rarely carry a right CRC, which would keep the fuzzer at the
 * checksum. When the last input byte is odd, a copy with every checksum
 * recomputed is read as well, so record decoding and zstd get explored.
 */
static uint8_t *fix_crcs(const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size ? size : 1);
	size_t off;

	if (!p || size < SAF_FILE_HEADER_SIZE)
		return p ? memcpy(p, data, size) : NULL;
	memcpy(p, data, size);
	saf_put_le32(p + 20, saf_crc32(p, NULL, 0));
	off = saf_get_le16(p + 12);
	while (off >= SAF_FILE_HEADER_SIZE && off <= size && size - off >= SAF_CHUNK_HEADER_SIZE) {
		uint8_t *h = p + off;
		uint64_t rest = saf_get_le16(h + 4) - (uint64_t)SAF_CHUNK_HEADER_SIZE +
				saf_get_le32(h + 8);

		if (saf_get_le16(h + 4) < SAF_CHUNK_HEADER_SIZE ||
		    rest > size - off - SAF_CHUNK_HEADER_SIZE)
			break;
		saf_put_le32(h + 20, saf_crc32(h, h + SAF_CHUNK_HEADER_SIZE, rest));
		off += SAF_CHUNK_HEADER_SIZE + rest;
	}
	return p;
}

static void read_all(const uint8_t *data, size_t size);
static void read_resync(const uint8_t *data, size_t size, uint64_t strict_chunks);
static void read_stream(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed;

	read_all(data, size);
	read_stream(data, size);
	if (!size || !(data[size - 1] & 1))
		return 0;
	fixed = fix_crcs(data, size);
	if (fixed)
		read_all(fixed, size);
	free(fixed);
	return 0;
}

static void read_all(const uint8_t *data, size_t size)
{
	char eb[128];
	struct saf_reader_opts o = { .sz = sizeof(o), .errbuf = eb, .errbuf_sz = sizeof(eb) };
	struct saf_reader *r = saf_reader__open_mem(data, size, &o);
	const struct saf_file_info *info;
	struct saf_record rec;
	uint64_t off, strict_chunks;
	uint32_t type;
	int ret;

	if (!r) {
		assert(errno == EBADMSG || errno == ENOTSUP);
		assert(!strncmp(eb, "offset ", 7));
		return;
	}
	while ((ret = saf_reader__next(r, &rec)) == 1) {
		touch(&rec);
		saf_reader__chunk(r, &type, &off);
		assert(off < size && saf_chunk_type__name(type));
	}
	info = saf_reader__info(r);
	assert(ret == 0 || ret == -EBADMSG || ret == -EOVERFLOW);
	assert(saf_reader__next(r, &rec) == ret);
	assert(info->good_bytes <= size && info->file_size == size);
	assert(ret == 0 ? !info->damaged : info->damaged);
	assert(info->finished || !strncmp(saf_reader__errmsg(r), "offset ", 7));
	strict_chunks = info->chunks;
	saf_reader__free(r);
	read_resync(data, size, strict_chunks);
}

/*
 * With resync: the records of the strict read come first, every damaged
 * place is returned once as EBADMSG or EOVERFLOW, and the read ends.
 */
static void read_resync(const uint8_t *data, size_t size, uint64_t strict_chunks)
{
	struct saf_reader_opts o = { .sz = sizeof(o), .resync = true };
	struct saf_reader *r = saf_reader__open_mem(data, size, &o);
	const struct saf_file_info *info;
	struct saf_record rec;
	uint64_t errors = 0, calls = 0;
	int ret;

	if (!r)
		return;
	while ((ret = saf_reader__next(r, &rec)) != 0) {
		assert(++calls <= 2 * size + 2);
		if (ret < 0) {
			assert(ret == -EBADMSG || ret == -EOVERFLOW);
			assert(!strncmp(saf_reader__errmsg(r), "offset ", 7));
			errors++;
			continue;
		}
		touch(&rec);
	}
	info = saf_reader__info(r);
	assert(info->damage_count == errors && info->damaged == (errors > 0));
	assert(info->dropped_bytes <= size && info->chunks >= strict_chunks);
	saf_reader__free(r);
}

struct pieces {
	const uint8_t *p;
	size_t len, pos, k;
};

/* A stream of the input in pieces of 1 to 4099 bytes. */
static ssize_t piece_read(void *cookie, void *buf, size_t len)
{
	struct pieces *pc = cookie;
	size_t n = 1 + (pc->k++ * 7919) % 4099;

	n = n < len ? n : len;
	n = n < pc->len - pc->pos ? n : pc->len - pc->pos;
	memcpy(buf, pc->p + pc->pos, n);
	pc->pos += n;
	return (ssize_t)n;
}

/* Every return and message of one read, hashed; its facts. */
static uint64_t trace(struct saf_reader *r, struct saf_file_info *info)
{
	struct saf_record rec;
	uint64_t h = 0, calls = 0;
	int ret;

	while ((ret = saf_reader__next(r, &rec)) != 0) {
		const char *m = ret == 1 ? "" : saf_reader__errmsg(r);

		assert(++calls <= 1u << 22);
		h = (h ^ (uint64_t)(ret + 8)) * 0x100000001b3ull;
		for (; *m; m++)
			h = (h ^ (uint8_t)*m) * 0x100000001b3ull;
		if (ret == -EFBIG)
			break;
	}
	*info = *saf_reader__info(r);
	info->stream = false;
	return h;
}

/* The same bytes from memory and as a stream: the same returns, messages and facts. */
static void read_stream(const uint8_t *data, size_t size)
{
	bool concat = size && (data[0] & 2), prefetch = size > 1 && (data[1] & 4);
	struct saf_reader_opts o = {.sz = sizeof(o), .resync = true, .concat = concat,
				    .prefetch = prefetch, .max_expand = 64, .expand_floor = 4096};
	struct pieces pc = {.p = data, .len = size};
	struct saf_reader *a = saf_reader__open_mem(data, size, &o);
	struct saf_reader *b = saf_reader__open_stream(piece_read, &pc, &o);
	struct saf_file_info ia, ib;
	uint64_t ha, hb;

	assert(!a == !b);
	if (!a)
		return;
	ha = trace(a, &ia);
	hb = trace(b, &ib);
	/* the whole-file bound is the one place they may differ (on purpose) */
	if (!strstr(saf_reader__errmsg(a), "the bound for") &&
	    !strstr(saf_reader__errmsg(b), "the bound for")) {
		assert(ha == hb);
		assert(!memcmp(&ia, &ib, sizeof(ia)));
	}
	saf_reader__free(a);
	saf_reader__free(b);
}
