// SPDX-License-Identifier: MIT
/*
 * test_saf_writer.c - the writer: every record kind round-trips field by
 * field, a re-write of what was read is byte-identical, chunks split at the
 * target with the INTERVAL repeated, limits give -EINVAL, write errors
 * (ENOSPC, EPIPE) surface and every allocation failure is clean.
 */
#include <fcntl.h>
#include <signal.h>

#include "saf_test.h"
#include "sa_cmocka.h"

/* The sample in file order: META, PROCS, KSYMS, USYMS, JIT, STACKS, 2x SAMPLES, END. */
static void test_roundtrip_fields(void **state)
{
	struct saf_record want[32], rec;
	uint32_t types[32], type;
	size_t len, n = 0, i, nrec;
	uint8_t *buf = tst_sample(0, &len);
	struct saf_reader *r = saf_reader__open_mem(buf, len, NULL);
	struct saf_end end = { 3000, 17, 2, 2, 8 };
	int ret;

	(void)state;
	want[n] = (struct saf_record){ .kind = SAF_REC_META, .meta = tst_meta() };
	types[n++] = SAF_CHUNK_META;
	nrec = tst_records(want + n, 32 - n);
	for (i = 0; i < nrec; i++, n++)
		types[n] = saf_rec_chunk_type(want[n].kind);
	want[n] = (struct saf_record){ .kind = SAF_REC_INTERVAL, .interval = { 0, 1000, 2000 } };
	types[n++] = SAF_CHUNK_SAMPLES;
	for (i = 0; i < 6; i++, n++) {
		want[n] = (struct saf_record){ .kind = SAF_REC_COUNT };
		want[n].count = (struct saf_count){ 42, 43 + (uint32_t)i % 2, 1, 1, i % 3 ? 2 : 0,
						    i + 1, saf_str__from(i % 2 ? "bash" : "worker") };
		types[n] = SAF_CHUNK_SAMPLES;
	}
	want[n] = (struct saf_record){ .kind = SAF_REC_LOSS, .loss = { .seq = 0, .ncounters = 3,
		.ids = { 1, 2, 4 }, .values = { 12, 10, 2 } } };
	types[n++] = SAF_CHUNK_SAMPLES;
	want[n] = (struct saf_record){ .kind = SAF_REC_INTERVAL, .interval = { 1, 2000, 3000 } };
	types[n++] = SAF_CHUNK_SAMPLES;
	want[n] = (struct saf_record){ .kind = SAF_REC_COUNT,
				       .count = { 7, 7, 0, 3, 0, UINT64_MAX, saf_str__from("") } };
	types[n++] = SAF_CHUNK_SAMPLES;
	want[n] = (struct saf_record){ .kind = SAF_REC_END, .end = end };
	types[n++] = SAF_CHUNK_END;

	assert_non_null(r);
	for (i = 0; (ret = saf_reader__next(r, &rec)) == 1; i++) {
		assert_true(i < n);
		saf_reader__chunk(r, &type, NULL);
		assert_int_equal(type, types[i]);
		if (!tst_rec_eq(&rec, &want[i]))
			fail_msg("record %zu (kind %d) differs", i, rec.kind);
	}
	assert_int_equal(ret, 0);
	assert_int_equal(i, n);
	assert_true(saf_reader__info(r)->finished);
	assert_false(saf_reader__info(r)->damaged);
	assert_int_equal(saf_reader__info(r)->chunks, 9);
	assert_string_equal(saf_reader__errmsg(r), "");
	saf_reader__free(r);
	free(buf);
}

/* Strings come back NUL-terminated even though the file does not store the NUL. */
static void test_strings_terminated(void **state)
{
	size_t len;
	uint8_t *buf = tst_sample(0, &len);
	struct saf_reader *r = saf_reader__open_mem(buf, len, NULL);
	struct saf_record rec;

	(void)state;
	assert_int_equal(saf_reader__next(r, &rec), 1);
	assert_string_equal(rec.meta.hostname.str, "web01");
	assert_string_equal(rec.meta.event.str, "cpu-clock");
	assert_int_equal(saf_reader__next(r, &rec), 1);
	assert_string_equal(rec.proc.exe.str, "/usr/bin/bash");
	saf_reader__free(r);
	free(buf);
}

static void check_rewrite(size_t target)
{
	size_t len, len2;
	uint8_t *buf = tst_sample(target, &len);
	uint8_t *again = tst_rewrite(buf, len, target, &len2);

	assert_int_equal(len, len2);
	assert_memory_equal(buf, again, len);
	free(again);
	free(buf);
}

static void test_rewrite_identical(void **state)
{
	(void)state;
	check_rewrite(0);
	check_rewrite(1);
	check_rewrite(40);
	check_rewrite(100);
}

/* A tiny target splits every buffer; each SAMPLES chunk starts with INTERVAL. */
static void test_split_repeats_interval(void **state)
{
	size_t len;
	uint8_t *buf = tst_sample(30, &len);
	struct saf_reader *r = saf_reader__open_mem(buf, len, NULL);
	struct saf_record rec;
	uint64_t off, last_off = 0, chunks_with_records = 0;
	uint32_t type;
	bool seen_stack = false;
	int ret;

	(void)state;
	while ((ret = saf_reader__next(r, &rec)) == 1) {
		saf_reader__chunk(r, &type, &off);
		if (off != last_off) {
			chunks_with_records++;
			if (type == SAF_CHUNK_SAMPLES)
				assert_int_equal(rec.kind, SAF_REC_INTERVAL);
		}
		last_off = off;
		if (rec.kind == SAF_REC_STACK)
			seen_stack = true;
		if (rec.kind == SAF_REC_COUNT)
			assert_true(seen_stack); /* stacks are written before samples */
	}
	assert_int_equal(ret, 0);
	assert_true(chunks_with_records > 12);
	assert_int_equal(chunks_with_records, saf_reader__info(r)->chunks);
	saf_reader__free(r);
	free(buf);
}

/* A split USYMS chunk starts with the SYMTAB its USYM records belong to. */
static void test_split_repeats_symtab(void **state)
{
	static const uint8_t bid[] = { 0xab, 0xcd, 0xef, 0x01 };
	struct saf_writer_opts o = { .sz = sizeof(o), .chunk_target = 64 };
	struct saf_record rec = { .kind = SAF_REC_SYMTAB };
	int fd = memfd_create("s", 0);
	struct saf_writer *w = saf_writer__open_fd(fd, &o);
	struct saf_reader *r = NULL;
	uint64_t off, last_off = 0, usyms = 0, chunks = 0;
	uint32_t type, i;
	char name[32];
	int ret;

	(void)state;
	assert_non_null(w);
	rec.symtab.build_id = (struct saf_bytes){ bid, sizeof(bid) };
	rec.symtab.path = saf_str__from("/usr/bin/x");
	assert_int_equal(saf_writer__add(w, &rec), 0);
	rec.kind = SAF_REC_USYM;
	for (i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "function_number_%u", i);
		rec.usym = (struct saf_usym){ 0x1000 + 16 * i, 16, saf_str__from(name) };
		assert_int_equal(saf_writer__add(w, &rec), 0);
	}
	assert_int_equal(saf_writer__finish(w, &(struct saf_end){ 0 }), 0);
	saf_writer__free(w);
	snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	r = saf_reader__open(name, NULL);
	assert_non_null(r);
	while ((ret = saf_reader__next(r, &rec)) == 1) {
		saf_reader__chunk(r, &type, &off);
		if (type != SAF_CHUNK_USYMS)
			continue;
		if (off != last_off) {
			chunks++;
			assert_int_equal(rec.kind, SAF_REC_SYMTAB);
			assert_memory_equal(rec.symtab.build_id.data, bid, sizeof(bid));
		}
		last_off = off;
		usyms += rec.kind == SAF_REC_USYM;
	}
	assert_int_equal(ret, 0);
	assert_true(chunks > 5);
	assert_int_equal(usyms, 40);
	saf_reader__free(r);
	close(fd);
}

static void test_bytes_counter(void **state)
{
	int fd = memfd_create("b", 0);
	struct saf_writer *w = NULL;

	(void)state;
	assert_int_equal(tst_write_sample(fd, 0, &w), 0);
	assert_int_equal(saf_writer__bytes(w), (uint64_t)lseek(fd, 0, SEEK_END));
	saf_writer__free(w);
	close(fd);
}

/* --rotate: after finish(), the same writer starts a second complete file. */
static void test_next_file(void **state)
{
	int fd1 = memfd_create("one", 0), fd2 = memfd_create("two", 0);
	struct saf_writer *w = NULL;
	struct saf_meta m = tst_meta();
	struct saf_interval iv = {7, 5000, 6000};
	struct saf_loss loss = {.ncounters = 2, .ids = {SAF_CTR_RUNS, SAF_CTR_KEPT}, .values = {3, 3}};
	struct saf_end end = {6000, 3, 0, 1, 0};
	struct saf_record st = {.kind = SAF_REC_STACK}, c = {.kind = SAF_REC_COUNT};
	struct tst_read r1, r2;
	size_t len1, len2;
	uint8_t *b1, *b2;
	uint64_t bytes1;

	(void)state;
	assert_int_equal(tst_write_sample(fd1, 0, &w), 0);
	bytes1 = saf_writer__bytes(w);
	st.stack = (struct saf_stack){.id = 9, .kind = SAF_STACK_USER, .nframes = 5, .ips = tst_uips};
	c.count = (struct saf_count){42, 42, 1, 9, 0, 3, saf_str__from("worker")};
	assert_int_equal(saf_writer__next_file(w, fd2), 0);
	assert_int_equal(saf_writer__bytes(w), SAF_FILE_HEADER_SIZE);
	assert_int_equal(saf_writer__next_file(w, fd2), -EINVAL); /* not finished */
	assert_int_equal(saf_writer__meta(w, &m), 0);
	assert_int_equal(saf_writer__add(w, &st), 0);
	assert_int_equal(saf_writer__interval(w, &iv), 0);
	assert_int_equal(saf_writer__add(w, &c), 0);
	assert_int_equal(saf_writer__interval_end(w, &loss), 0);
	assert_int_equal(saf_writer__finish(w, &end), 0);
	b1 = tst_slurp(fd1, &len1);
	b2 = tst_slurp(fd2, &len2);
	assert_int_equal(len1, bytes1);
	assert_int_equal(len2, saf_writer__bytes(w));
	tst_read_mem(b1, len1, &r1);
	tst_read_mem(b2, len2, &r2);
	assert_int_equal(r1.ret, 0);
	assert_int_equal(r2.ret, 0);
	assert_true(r1.info.finished && !r1.info.damaged);
	assert_true(r2.info.finished && !r2.info.damaged);
	/* META, STACK, INTERVAL, COUNT, LOSS, END; chunk seqs from 0 again */
	assert_int_equal(r2.nrecs, 6);
	tst_read_free(&r1);
	tst_read_free(&r2);
	free(b1);
	free(b2);
	saf_writer__free(w);
	close(fd1);
	close(fd2);
}

static void test_invalid(void **state)
{
	int fd = memfd_create("inv", 0);
	struct saf_writer_opts bad_level = { .sz = sizeof(bad_level), .zstd_level = 99 };
	struct saf_writer_opts bad_target = { .sz = sizeof(bad_target), .chunk_target = 1u << 30 };
	struct saf_writer *w;
	struct saf_meta m = tst_meta();
	char big[SAF_MAX_STRING + 1];
	uint8_t bid[SAF_MAX_BUILD_ID + 1] = { 0 };
	uint64_t ips[SAF_MAX_FRAMES + 1] = { 0 };
	struct saf_record r = { .kind = SAF_REC_COMM };
	struct saf_loss loss = { .ncounters = SAF_MAX_COUNTERS + 1 };
	struct saf_interval iv = { 0, 1, 2 };

	(void)state;
	memset(big, 'x', sizeof(big));
	errno = 0;
	assert_null(saf_writer__open_fd(fd, &bad_level));
	assert_int_equal(errno, EINVAL);
	assert_null(saf_writer__open_fd(fd, &bad_target));
	assert_int_equal(errno, EINVAL);
	w = saf_writer__open_fd(fd, NULL);
	assert_non_null(w);
	r.comm.comm = (struct saf_str){ big, SAF_MAX_STRING + 1 };
	assert_int_equal(saf_writer__add(w, &r), -EINVAL);
	r.comm.comm = (struct saf_str){ NULL, 3 };
	assert_int_equal(saf_writer__add(w, &r), -EINVAL);
	r = (struct saf_record){ .kind = SAF_REC_MAP, .map.build_id = { bid, sizeof(bid) } };
	assert_int_equal(saf_writer__add(w, &r), -EINVAL);
	r = (struct saf_record){ .kind = SAF_REC_STACK, .stack = { 1, 0, SAF_MAX_FRAMES + 1, ips } };
	assert_int_equal(saf_writer__add(w, &r), -EINVAL);
	r.stack = (struct saf_stack){ 0, 0, 1, ips }; /* id 0 means "none" */
	assert_int_equal(saf_writer__add(w, &r), -EINVAL);
	r = (struct saf_record){ .kind = SAF_REC_COUNT };
	assert_int_equal(saf_writer__add(w, &r), -EINVAL); /* no interval open */
	r.kind = SAF_REC_META;
	assert_int_equal(saf_writer__add(w, &r), -EINVAL);
	r.kind = SAF_REC_END;
	assert_int_equal(saf_writer__add(w, &r), -EINVAL);
	r.kind = 99;
	assert_int_equal(saf_writer__add(w, &r), -EINVAL);
	assert_int_equal(saf_writer__interval_end(w, NULL), -EINVAL);
	assert_int_equal(saf_writer__meta(w, &m), 0);
	assert_int_equal(saf_writer__meta(w, &m), -EINVAL); /* only once, first */
	assert_int_equal(saf_writer__interval(w, &iv), 0);
	assert_int_equal(saf_writer__interval_end(w, &loss), -EINVAL);
	assert_int_equal(saf_writer__finish(w, NULL), 0);
	r = (struct saf_record){ .kind = SAF_REC_EXIT };
	assert_int_equal(saf_writer__add(w, &r), -EINVAL); /* finished */
	assert_int_equal(saf_writer__finish(w, NULL), -EINVAL);
	saf_writer__free(w);
	saf_writer__free(NULL);
	close(fd);
}

static void test_enospc(void **state)
{
	int fd = open("/dev/full", O_WRONLY);

	(void)state;
	if (fd < 0)
		SA_SKIP("no /dev/full");
	errno = 0;
	assert_null(saf_writer__open_fd(fd, NULL));
	assert_int_equal(errno, ENOSPC);
	close(fd);
}

/* The header fits in the pipe; the first chunk meets a closed reader. */
static void test_epipe_sticks(void **state)
{
	struct saf_record r = { .kind = SAF_REC_EXIT, .exit = { 1, 2 } };
	struct saf_meta m = tst_meta();
	struct saf_writer *w;
	int p[2];

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(pipe(p), 0);
	w = saf_writer__open_fd(p[1], NULL);
	assert_non_null(w);
	close(p[0]);
	assert_int_equal(saf_writer__meta(w, &m), -EPIPE);
	assert_int_equal(saf_writer__add(w, &r), -EPIPE);
	assert_int_equal(saf_writer__flush(w), -EPIPE);
	assert_int_equal(saf_writer__finish(w, NULL), -EPIPE);
	saf_writer__free(w);
	close(p[1]);
}

/* SQLite-style: fail allocation N for N = 1, 2, ... until the write succeeds. */
static void test_oom_loop(void **state)
{
	long n;
	int fd, err;

	(void)state;
	for (n = 1;; n++) {
		struct saf_writer *w = NULL;

		fd = memfd_create("oom", 0);
		tst_alloc_start(n);
		err = tst_write_sample(fd, 64, &w);
		saf_writer__free(w);
		tst_alloc_stop();
		close(fd);
		assert_int_equal(ta.live, 0);
		if (!ta.failed) {
			assert_int_equal(err, 0);
			break;
		}
		assert_int_equal(err, -ENOMEM);
	}
	print_message("# writer: %ld allocation points failed cleanly\n", n - 1);
	assert_true(n > 5);
}

/* "USTACK record" (1.1): registers and the raw stack bytes come back exactly. */
static void test_ustack_roundtrip(void **state)
{
	static uint8_t stack[3000];
	struct saf_record u = { .kind = SAF_REC_USTACK }, rec;
	struct saf_interval iv = { 0, 10, 20 };
	struct saf_end end = { 20, 5, 0, 1, 0 };
	struct saf_writer *w;
	struct saf_reader *r;
	int fd = memfd_create("ustack", 0), ret, seen = 0;
	size_t len;
	uint8_t *buf;

	(void)state;
	for (size_t i = 0; i < sizeof(stack); i++)
		stack[i] = (uint8_t)(i * 7);
	u.ustack = (struct saf_ustack){ .pid = 42, .tid = 43, .gen = 1, .time_ns = 15,
					.kstack = 0, .count = 5, .comm = saf_str__from("w"),
					.nregs = 3, .regs = { 0x401234, 0x7ffd0000f000, 0 },
					.stack = { stack, sizeof(stack) } };
	assert_true(fd >= 0);
	w = saf_writer__open_fd(fd, NULL);
	assert_non_null(w);
	assert_int_equal(saf_writer__interval(w, &iv), 0);
	assert_int_equal(saf_writer__add(w, &u), 0);
	u.ustack.nregs = SAF_MAX_UREGS + 1;
	assert_int_equal(saf_writer__add(w, &u), -EINVAL);
	u.ustack.nregs = 3;
	u.ustack.stack.len = SAF_MAX_USTACK_BYTES + 1;
	assert_int_equal(saf_writer__add(w, &u), -EINVAL);
	u.ustack.stack.len = sizeof(stack);
	assert_int_equal(saf_writer__interval_end(w, NULL), 0);
	assert_int_equal(saf_writer__finish(w, &end), 0);
	saf_writer__free(w);
	buf = tst_slurp(fd, &len);
	close(fd);
	r = saf_reader__open_mem(buf, len, NULL);
	assert_non_null(r);
	assert_int_equal(saf_reader__info(r)->version_minor, SAF_VERSION_MINOR);
	while ((ret = saf_reader__next(r, &rec)) == 1) {
		if (rec.kind != SAF_REC_USTACK)
			continue;
		seen++;
		assert_int_equal(rec.ustack.pid, 42);
		assert_int_equal(rec.ustack.tid, 43);
		assert_int_equal(rec.ustack.count, 5);
		assert_int_equal(rec.ustack.nregs, 3);
		assert_int_equal(rec.ustack.regs[1], 0x7ffd0000f000);
		assert_string_equal(rec.ustack.comm.str, "w");
		assert_int_equal(rec.ustack.stack.len, sizeof(stack));
		assert_memory_equal(rec.ustack.stack.data, stack, sizeof(stack));
	}
	assert_int_equal(ret, 0);
	assert_int_equal(seen, 1);
	saf_reader__free(r);
	free(buf);
}

/*
 * "USTACK_SPARSE record" (1.2): runs written with saf_urun__put() come back
 * from saf_urun__next() at the same offsets with the same bytes; runs no
 * writer may write (touching, past the limit, cut short) are refused.
 */
static void test_ustack_sparse(void **state)
{
	static const uint8_t w1[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, w2[16] = { 9 };
	struct saf_record u = { .kind = SAF_REC_USTACK_SPARSE }, rec;
	struct saf_arena a = { 0 };
	struct saf_buf b = { 0 };
	struct saf_urun r;
	uint8_t runs[64];
	size_t n = 0, pos = 0;

	(void)state;
	n += saf_urun__put(runs + n, 24, w1, sizeof(w1)); /* [24, 32) */
	n += saf_urun__put(runs + n, 200, w2, sizeof(w2)); /* [232, 248) */
	u.ustack = (struct saf_ustack){ .pid = 7, .tid = 8, .count = 2, .nregs = 3,
					.regs = { 0x401000, 0x7ffd00001000, 0x7ffd00001100 },
					.runs = { runs, (uint32_t)n } };
	assert_int_equal(saf_rec_encode(&b, &u), 0);
	assert_int_equal(saf_rec_decode(b.p + 1, b.len - 1, &rec, &a), 1); /* past body_len */
	assert_int_equal(rec.kind, SAF_REC_USTACK_SPARSE);
	assert_true(tst_rec_eq(&u, &rec));
	assert_true(saf_urun__next(&rec.ustack, &pos, &r));
	assert_int_equal(r.off, 24);
	assert_int_equal(r.len, 8);
	assert_memory_equal(r.data, w1, 8);
	assert_true(saf_urun__next(&rec.ustack, &pos, &r));
	assert_int_equal(r.off, 232);
	assert_int_equal(r.len, 16);
	assert_memory_equal(r.data, w2, 16);
	assert_false(saf_urun__next(&rec.ustack, &pos, &r));

	/* a second run touching the first (gap 0) has another encoding: refused */
	n = saf_urun__put(runs, 24, w1, sizeof(w1));
	n += saf_urun__put(runs + n, 0, w2, sizeof(w2));
	u.ustack.runs.len = (uint32_t)n;
	assert_int_equal(saf_rec_check(&u), -EINVAL);
	/* past 64 KiB from the stack pointer */
	n = saf_urun__put(runs, SAF_MAX_USTACK_BYTES - 4, w1, sizeof(w1));
	u.ustack.runs.len = (uint32_t)n;
	assert_int_equal(saf_rec_check(&u), -EINVAL);
	/* a run shorter than it says, decoded from a hand-made body */
	n = saf_urun__put(runs, 24, w1, sizeof(w1));
	u.ustack.runs.len = (uint32_t)n;
	b.len = 0;
	assert_int_equal(saf_rec_encode(&b, &u), 0);
	b.p[b.len - 9] = 9; /* the run's length: 9 bytes, 8 present */
	assert_int_equal(saf_rec_decode(b.p + 1, b.len - 1, &rec, &a), -EBADMSG);
	saf_buf_release(&b);
}

/*
 * "USTACK record" walk and walked frames (1.3): the recorder's frames come
 * back exactly, after the runs; a capture not walked has a 1.2 body byte
 * for byte (a 1.2 reader sees nothing new); frames of a capture "not
 * walked", or more than 4096 of them, are refused.
 */
static void test_ustack_walked(void **state)
{
	static const uint8_t w1[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static const uint64_t pcs[3] = { 0x7f0000401234, 0x401000, 0x7f0000029d90 };
	struct saf_record u = { .kind = SAF_REC_USTACK_SPARSE }, rec;
	uint64_t ips[8] = { 0 };
	struct saf_arena a = { .ips = ips, .max_frames = 8 };
	struct saf_buf b = { 0 };
	uint8_t runs[32];
	size_t n = saf_urun__put(runs, 24, w1, sizeof(w1)), len12;

	(void)state;
	u.ustack = (struct saf_ustack){ .pid = 7, .tid = 8, .count = 2, .nregs = 3,
					.regs = { 0x7f0000401234, 0x7ffd00001000, 0 },
					.runs = { runs, (uint32_t)n } };
	assert_int_equal(saf_rec_encode(&b, &u), 0);
	len12 = b.len;
	u.ustack.walk = SAF_WALK_CUT;
	u.ustack.nwalked = 3;
	u.ustack.walked = pcs;
	b.len = 0;
	assert_int_equal(saf_rec_encode(&b, &u), 0);
	assert_true(b.len > len12); /* appended after the runs */
	assert_int_equal(saf_rec_decode(b.p + 1, b.len - 1, &rec, &a), 1);
	assert_true(tst_rec_eq(&u, &rec));
	assert_int_equal(rec.ustack.walk, SAF_WALK_CUT);
	assert_int_equal(rec.ustack.walked[2], 0x7f0000029d90);

	u.ustack.walk = SAF_WALK_NONE;
	assert_int_equal(saf_rec_check(&u), -EINVAL);
	u.ustack.walk = SAF_WALK_COMPLETE;
	u.ustack.nwalked = SAF_MAX_FRAMES + 1;
	assert_int_equal(saf_rec_check(&u), -EINVAL);
	/* frames cut short: the last delta is missing */
	u.ustack.nwalked = 3;
	b.len = 0;
	assert_int_equal(saf_rec_encode(&b, &u), 0);
	assert_int_equal(saf_rec_decode(b.p + 1, b.len - 2, &rec, &a), -EBADMSG);
	saf_buf_release(&b);
}

/* A USTACK claiming more than 16 registers is refused with EOVERFLOW. */
static void test_ustack_too_many_regs(void **state)
{
	uint8_t body[] = { SAF_REC_USTACK, 1, 1, 0, 0, 0, 1, 0, 17 };
	struct saf_arena a = { 0 };
	struct saf_record rec;

	(void)state;
	assert_int_equal(saf_rec_decode(body, sizeof(body), &rec, &a), -EOVERFLOW);
}

/*
 * "OFFCPU record" (1.4) and META's off_cpu_min_ns come back as written; a
 * META without SAF_META_OFF_CPU stays a 1.3 body (no trailing field), and
 * an OFFCPU body cut after time_ns reads comm "" and flags 0.
 */
static void test_offcpu_roundtrip(void **state)
{
	struct saf_record o = { .kind = SAF_REC_OFFCPU }, rec;
	struct saf_meta m = { .writer = saf_str__from("t"), .flags = SAF_META_OFF_CPU,
			      .off_cpu_min_ns = 250000 };
	uint8_t body[] = { SAF_REC_OFFCPU, 1, 2, 0, 3, 4, 5, 0x80, 0x01 };
	struct saf_interval iv = { 0, 10, 20 };
	struct saf_end end = { 20, 0, 0, 1, 0 };
	struct saf_arena a = { 0 };
	struct saf_writer *w;
	struct saf_reader *r;
	int fd = memfd_create("offcpu", 0), ret, seen = 0;
	size_t len;
	uint8_t *buf;

	(void)state;
	o.offcpu = (struct saf_offcpu){ .pid = 42, .tid = 43, .gen = 1, .ustack = 7, .kstack = 8,
					.count = 3, .time_ns = 5000000000ull,
					.comm = saf_str__from("w"), .flags = SAF_OFFCPU_PREEMPTED };
	assert_true(fd >= 0);
	w = saf_writer__open_fd(fd, NULL);
	assert_non_null(w);
	assert_int_equal(saf_writer__meta(w, &m), 0);
	assert_int_equal(saf_writer__add(w, &o), -EINVAL); /* no interval open */
	assert_int_equal(saf_writer__interval(w, &iv), 0);
	assert_int_equal(saf_writer__add(w, &o), 0);
	assert_int_equal(saf_writer__interval_end(w, NULL), 0);
	assert_int_equal(saf_writer__finish(w, &end), 0);
	saf_writer__free(w);
	buf = tst_slurp(fd, &len);
	close(fd);
	r = saf_reader__open_mem(buf, len, NULL);
	assert_non_null(r);
	while ((ret = saf_reader__next(r, &rec)) == 1) {
		if (rec.kind == SAF_REC_META) {
			assert_int_equal(rec.meta.flags, SAF_META_OFF_CPU);
			assert_int_equal(rec.meta.off_cpu_min_ns, 250000);
		}
		if (rec.kind != SAF_REC_OFFCPU)
			continue;
		seen++;
		assert_int_equal(rec.offcpu.pid, 42);
		assert_int_equal(rec.offcpu.tid, 43);
		assert_int_equal(rec.offcpu.ustack, 7);
		assert_int_equal(rec.offcpu.kstack, 8);
		assert_int_equal(rec.offcpu.count, 3);
		assert_int_equal(rec.offcpu.time_ns, 5000000000ull);
		assert_string_equal(rec.offcpu.comm.str, "w");
		assert_int_equal(rec.offcpu.flags, SAF_OFFCPU_PREEMPTED);
	}
	assert_int_equal(ret, 0);
	assert_int_equal(seen, 1);
	assert_int_equal(saf_reader__info(r)->skipped_records, 0);
	saf_reader__free(r);
	free(buf);
	assert_int_equal(saf_rec_decode(body, sizeof(body), &rec, &a), 1);
	assert_int_equal(rec.offcpu.time_ns, 128);
	assert_int_equal(rec.offcpu.comm.len, 0);
	assert_int_equal(rec.offcpu.flags, 0);
	free(a.ips);
}

/* One record encoded, then its body (after the length) decoded into @out. */
static size_t id_kind_trip(const struct saf_record *in, struct saf_record *out)
{
	struct saf_buf b = { 0 };
	struct saf_arena a = { 0 };
	size_t len;

	assert_int_equal(saf_rec_encode(&b, in), 0);
	assert_true(b.len > 1 && b.p[0] < 0x80); /* a one-byte length */
	assert_int_equal(saf_rec_decode(b.p + 1, b.len - 1, out, &a), 1);
	len = b.len;
	saf_buf_release(&b);
	return len;
}

/*
 * "MAP record" and "SYMTAB" id_kind (1.7): a content hash comes back as
 * one; kind 0 is not written, so such a body is a 1.6 body byte for byte.
 */
static void test_id_kind(void **state)
{
	static const uint8_t bid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	struct saf_record m = { .kind = SAF_REC_MAP }, s = { .kind = SAF_REC_SYMTAB }, out;
	size_t len0, len1;

	(void)state;
	m.map = (struct saf_map){ .pid = 1, .path = saf_str__from("/usr/bin/hot"),
				  .build_id = { bid, sizeof(bid) } };
	len0 = id_kind_trip(&m, &out);
	assert_int_equal(out.map.id_kind, SAF_ID_GNU);
	m.map.id_kind = SAF_ID_CONTENT;
	len1 = id_kind_trip(&m, &out);
	assert_int_equal(out.map.id_kind, SAF_ID_CONTENT);
	assert_int_equal(out.map.build_id.len, sizeof(bid));
	assert_int_equal(len1, len0 + 1);
	s.symtab = (struct saf_symtab){ { bid, sizeof(bid) }, saf_str__from("/usr/bin/hot"), 0 };
	len0 = id_kind_trip(&s, &out);
	assert_int_equal(out.symtab.id_kind, SAF_ID_GNU);
	s.symtab.id_kind = SAF_ID_CONTENT;
	len1 = id_kind_trip(&s, &out);
	assert_int_equal(out.symtab.id_kind, SAF_ID_CONTENT);
	assert_int_equal(len1, len0 + 1);
}

SA_TEST_MAIN(test_roundtrip_fields, test_strings_terminated, test_rewrite_identical, test_split_repeats_interval, test_split_repeats_symtab, test_bytes_counter, test_next_file, test_invalid, test_enospc, test_epipe_sticks, test_oom_loop, test_ustack_roundtrip, test_ustack_too_many_regs, test_ustack_sparse, test_ustack_walked, test_offcpu_roundtrip, test_id_kind)
