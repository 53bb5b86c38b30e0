/* SPDX-License-Identifier: MIT */
/*
 * saf.h - the .sa file format library: a streaming writer and a validating
 * reader for sa recordings. This is the only header other modules include.
 * The byte layout is specified in docs/format.md; section names cited below
 * refer to that document.
 */
#ifndef SAF_H
#define SAF_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "File header": 8 magic bytes, then version, then the header's own size. */
#define SAF_MAGIC	      "SAF\0\r\n\032\n"
#define SAF_MAGIC_LEN	      8
#define SAF_VERSION_MAJOR     1
#define SAF_VERSION_MINOR     11
#define SAF_FILE_HEADER_SIZE  24
#define SAF_CHUNK_HEADER_SIZE 24

/* "Limits": a reader refuses anything larger. */
#define SAF_CHUNK_MAX_CONTENT (64u << 20) /* uncompressed bytes in one chunk */
#define SAF_MAX_FRAMES	      4096	  /* frames in one stack */
#define SAF_MAX_STRING	      4096	  /* bytes in one string field */
#define SAF_MAX_BUILD_ID      64	  /* bytes in one build id */
#define SAF_MAX_COUNTERS      64	  /* counters in one interval's loss record */
#define SAF_MAX_UREGS	      16	  /* registers in one USTACK record */
#define SAF_MAX_USTACK_BYTES  (64u << 10) /* stack bytes in one USTACK record */

/* "Chunk types". A reader skips a type it does not know. */
enum saf_chunk_type {
	SAF_CHUNK_META = 1,    /* one SAF_REC_META */
	SAF_CHUNK_PROCS = 2,   /* PROC, MAP, COMM, EXIT, CPUGAP records */
	SAF_CHUNK_STACKS = 3,  /* STACK records */
	SAF_CHUNK_SAMPLES = 4, /* INTERVAL, then COUNT records, then LOSS */
	SAF_CHUNK_KSYMS = 5,   /* KSYM records */
	SAF_CHUNK_USYMS = 6,   /* SYMTAB, then USYM and ULINE records */
	SAF_CHUNK_JIT = 7,     /* JITSYM and PYCODE records */
	SAF_CHUNK_END = 15,    /* one SAF_REC_END; marks a clean finish */
};

/* "Record kinds". Every record in a chunk payload starts with its kind. */
enum saf_rec_kind {
	SAF_REC_META = 1,
	SAF_REC_PROC = 2,
	SAF_REC_MAP = 3,
	SAF_REC_COMM = 4,
	SAF_REC_EXIT = 5,
	SAF_REC_STACK = 6,
	SAF_REC_INTERVAL = 7,
	SAF_REC_COUNT = 8,
	SAF_REC_LOSS = 9,
	SAF_REC_KSYM = 10,
	SAF_REC_SYMTAB = 11,
	SAF_REC_USYM = 12,
	SAF_REC_JITSYM = 13,
	SAF_REC_END = 14,
	SAF_REC_USTACK = 15,	    /* 1.1: registers and a raw user stack copy */
	SAF_REC_USTACK_SPARSE = 16, /* 1.2: the words of the copy an unwind reads */
	SAF_REC_OFFCPU = 17,	    /* 1.4: time off the CPU by stacks (--off-cpu) */
	SAF_REC_PYCODE = 18,	    /* 1.8: a CPython code object's names, or an interpreter */
	SAF_REC_ULINE = 19,	    /* 1.10: a source position of an embedded binary's range */
	SAF_REC_CPUGAP = 20,	    /* 1.11: a CPU not sampled for a while (it went offline) */
};

/* "Stack kinds" */
enum saf_stack_kind {
	SAF_STACK_USER = 0,
	SAF_STACK_KERNEL = 1,
};

/*
 * "Loss counters": ids of the (id, value) pairs of a LOSS record. Every
 * BPF program run ends in exactly one of KEPT, FILTERED or a LOST_* cause,
 * so RUNS == KEPT + FILTERED + sum(LOST_*). TRUNCATED counts kept samples
 * whose stack hit the depth limit; COLLISIONS and MAPFULL_RECOVERED count
 * kept samples whose stack-map clash or full map was recovered (not lost);
 * SIDEBAND_LOST counts process records (not samples) the kernel dropped.
 */
enum saf_counter {
	SAF_CTR_RUNS = 1,
	SAF_CTR_KEPT = 2,
	SAF_CTR_FILTERED = 3,
	SAF_CTR_LOST_USTACK = 4,  /* user stack unreadable */
	SAF_CTR_LOST_KSTACK = 5,  /* kernel stack unreadable (not user-mode samples) */
	SAF_CTR_LOST_RINGBUF = 6, /* collision recovery buffer full */
	SAF_CTR_LOST_MAPFULL = 7, /* counts or stack map full */
	SAF_CTR_LOST_OTHER = 8,
	SAF_CTR_TRUNCATED = 9,
	SAF_CTR_COLLISIONS = 10,
	SAF_CTR_LOST_USERSPACE = 11,	/* dropped by sa-record itself */
	SAF_CTR_MAPFULL_RECOVERED = 12, /* kept samples recovered after a full map */
	SAF_CTR_SIDEBAND_LOST = 13,	/* side-band records (mappings) the kernel dropped */
	/*
	 * 1.4, --off-cpu: off-CPU periods of target threads. Every period
	 * that ends (or fails at its start) is one OFF_RUNS and exactly one
	 * of OFF_KEPT, OFF_SHORT or an OFF_LOST_* cause. Named "off_..." so
	 * that readers summing "lost..." counters keep counting samples.
	 */
	SAF_CTR_OFF_RUNS = 14,
	SAF_CTR_OFF_KEPT = 15,
	SAF_CTR_OFF_SHORT = 16,		 /* shorter than --off-cpu-min, skipped */
	SAF_CTR_OFF_LOST_USTACK = 17,	 /* user stack unreadable at switch-out */
	SAF_CTR_OFF_LOST_KSTACK = 18,	 /* kernel stack unreadable at switch-out */
	SAF_CTR_OFF_LOST_COLLISION = 19, /* stack-map bucket held another stack */
	SAF_CTR_OFF_LOST_MAPFULL = 20,	 /* stack, start or off-CPU counts map full */
	SAF_CTR_OFF_LOST_OTHER = 21,
	SAF_CTR_OFF_LOST_USERSPACE = 22, /* dropped by sa-record itself */
	SAF_CTR_OFF_LOST_RINGBUF = 23,	 /* recovery ring buffer full */
	SAF_CTR_OFF_RECOVERED = 24,	 /* of OFF_KEPT: stacks recovered through the ring buffer */
	/*
	 * 1.5, user stacks walked in the kernel from CFI tables: of the runs
	 * above, walks made (UW_WALKED), sent as a stack copy instead
	 * (UW_COPIED, --call-graph auto), off-CPU walks made, those by frame
	 * pointers for want of tables (OFF_UW_FP) and those stopped early at
	 * a rule the tables do not keep (OFF_UW_CUT). Informational.
	 */
	SAF_CTR_UW_WALKED = 25,
	SAF_CTR_UW_COPIED = 26,
	SAF_CTR_OFF_UW_WALKED = 27,
	SAF_CTR_OFF_UW_FP = 28,
	SAF_CTR_OFF_UW_CUT = 29,
	/*
	 * 1.6: files of sampled processes (binaries, perf maps) sa-record did
	 * not read because their file system did not answer in time (a stopped
	 * FUSE server, a hung NFS mount). Processes, not samples: informational.
	 */
	SAF_CTR_FILES_SKIPPED = 30,
	/*
	 * 1.9: samples the kernel did not take because it throttled the
	 * sampling events (more interrupts in a tick than
	 * kernel.perf_event_max_sample_rate allows): they never ran, so they
	 * are outside RUNS. Informational.
	 */
	SAF_CTR_THROTTLED = 31,
	/*
	 * Since 2026-12-07 (files say 1.9 still: a reader before shows it by
	 * number): mappings the side band saw that sa-record -a did not write,
	 * since no sample of the interval's files hit them, counted when their
	 * process image was dropped. Mappings, not samples: informational.
	 */
	SAF_CTR_MAPS_UNWRITTEN = 32,
	SAF_CTR__MAX_KNOWN = 32,
};

/* Metadata flags (saf_meta.flags) */
#define SAF_META_USER_ONLY   (1u << 0)
#define SAF_META_KERNEL_ONLY (1u << 1)
#define SAF_META_IDLE	     (1u << 2)
#define SAF_META_OFF_CPU     (1u << 3) /* 1.4: OFFCPU records were recorded */
/* 1.5: user STACKs may be CFI walks made in the kernel: their end says nothing of frame pointers */
#define SAF_META_UW_KERNEL (1u << 4)

/* Mapping flags (saf_map.flags) */
#define SAF_MAP_EXEC	(1u << 0)
#define SAF_MAP_ANON	(1u << 1) /* no backing file ([anon], JIT) */
#define SAF_MAP_DELETED (1u << 2) /* file was deleted when captured */

/* "MAP record" id_kind (1.7): what a build_id field holds. */
enum saf_id_kind {
	SAF_ID_GNU = 0,	    /* the file's GNU build id (or nothing, when empty) */
	SAF_ID_CONTENT = 1, /* sa's content hash of a file without one (core/contentid.h) */
};

/*
 * Strings and byte arrays in records are borrowed: {ptr, len}, not NUL
 * terminated in the file. The reader NUL-terminates its copies, so .str is
 * also a C string (a name holding a NUL byte is cut there in C use).
 */
struct saf_str {
	const char *str;
	uint32_t len;
};

struct saf_bytes {
	const uint8_t *data;
	uint32_t len;
};

/* "META record": written once, first. */
struct saf_meta {
	struct saf_str writer; /* e.g. "sa-record 0.1" */
	struct saf_str hostname;
	struct saf_str kernel_release; /* uname -r */
	struct saf_str boot_id;
	struct saf_str arch;	/* uname -m */
	struct saf_str cmdline; /* sa-record's own argv, space-joined */
	struct saf_str target;	/* human description: "-a", "-p 42", "-- make" */
	struct saf_str event;	/* "cpu-clock", "cycles" */
	uint64_t freq_hz;
	uint64_t ncpus;
	uint64_t start_realtime_ns; /* CLOCK_REALTIME at start */
	uint64_t start_mono_ns;	    /* CLOCK_MONOTONIC at start; sample times use it */
	uint64_t flags;		    /* SAF_META_* */
	uint64_t page_size;
	uint64_t off_cpu_min_ns; /* 1.4: --off-cpu-min; written only with SAF_META_OFF_CPU */
};

/* "PROC record": a process image begins (first sighting or exec). */
struct saf_proc {
	uint32_t pid; /* tgid */
	uint32_t gen; /* exec generation this image has */
	uint32_t ppid;
	uint64_t time_ns; /* CLOCK_MONOTONIC */
	struct saf_str comm;
	struct saf_str exe;
};

/* "MAP record": an executable mapping of (pid, gen). */
struct saf_map {
	uint32_t pid;
	uint32_t gen;
	uint64_t time_ns;
	uint64_t start; /* virtual address, inclusive */
	uint64_t end;	/* exclusive */
	uint64_t pgoff; /* file offset of start */
	uint64_t flags; /* SAF_MAP_* */
	uint64_t dev;	/* makedev(major, minor), 0 if unknown */
	uint64_t inode;
	struct saf_str path;
	struct saf_bytes build_id; /* len 0 when unknown */
	uint32_t id_kind;	   /* 1.7: enum saf_id_kind of build_id */
};

/* "COMM record": a thread's name from time_ns on. */
struct saf_comm {
	uint32_t pid;
	uint32_t tid;
	uint64_t time_ns;
	struct saf_str comm;
};

/* "EXIT record" */
struct saf_exit {
	uint32_t pid;
	uint64_t time_ns;
};

/* "CPUGAP record": CPU @cpu was not sampled from @from_ns to @to_ns. */
struct saf_cpugap {
	uint32_t cpu;
	uint64_t from_ns;
	uint64_t to_ns;
};

/*
 * "STACK record": file-level stack id (>= 1, never reused in a file) ->
 * addresses, leaf first. ips is borrowed: valid until the next
 * saf_reader__next().
 */
struct saf_stack {
	uint32_t id;
	uint32_t kind; /* SAF_STACK_* */
	uint32_t nframes;
	const uint64_t *ips;
};

/* "INTERVAL record": opens the counts of one drain interval. */
struct saf_interval {
	uint64_t seq;	   /* interval number, from 0 */
	uint64_t start_ns; /* CLOCK_MONOTONIC */
	uint64_t end_ns;
};

/* "COUNT record": samples of one (tgid, tid, gen, ustack, kstack). */
struct saf_count {
	uint32_t pid;
	uint32_t tid;
	uint32_t gen;
	uint32_t ustack; /* file stack id, 0 = none */
	uint32_t kstack; /* file stack id, 0 = none */
	uint64_t count;
	struct saf_str comm; /* thread name */
};

/*
 * "OFFCPU record" (1.4): @count off-CPU periods of one thread, @time_ns
 * long in all, that began at one pair of stacks (those at switch-out)
 * and ended in the open interval.
 */
struct saf_offcpu {
	uint32_t pid;
	uint32_t tid;
	uint32_t gen;
	uint32_t ustack; /* file stack id, 0 = none */
	uint32_t kstack; /* file stack id, 0 = none */
	uint64_t count;	 /* off-CPU periods */
	uint64_t time_ns;
	struct saf_str comm;
	uint32_t flags; /* SAF_OFFCPU_* */
};

/* "OFFCPU record", field flags */
#define SAF_OFFCPU_PREEMPTED (1u << 0) /* runnable at switch-out (preempted or yielded) */

/*
 * "USTACK record" (1.1): one user stack captured raw, to be unwound offline
 * with the binaries' call-frame information. It belongs to the open
 * interval like a COUNT. regs[] is indexed by enum saf_ureg; stack holds
 * the bytes at [regs[SAF_UREG_SP], + stack.len). Both pointers are
 * borrowed: valid until the next saf_reader__next().
 */
struct saf_ustack {
	uint32_t pid;
	uint32_t tid;
	uint32_t gen;
	uint64_t time_ns;
	uint32_t kstack; /* file stack id of the kernel stack, 0 = none */
	uint64_t count;	 /* identical captures merged by the writer, >= 1 */
	struct saf_str comm;
	uint32_t nregs; /* <= SAF_MAX_UREGS */
	uint64_t regs[SAF_MAX_UREGS];
	struct saf_bytes stack; /* len <= SAF_MAX_USTACK_BYTES */
	/* SAF_REC_USTACK_SPARSE instead of stack: the runs (saf_urun__next()) */
	struct saf_bytes runs; /* len <= SAF_MAX_USTACK_BYTES */
	/* 1.3: the recorder's own walk of the capture (enum saf_walk) */
	uint32_t walk;
	uint32_t nwalked;	/* <= SAF_MAX_FRAMES; 0 when walk is SAF_WALK_NONE */
	const uint64_t *walked; /* pcs, leaf first, callers not adjusted by -1 */
};

/* "USTACK record", field walk: how the recorder's walk of the capture ended. */
enum saf_walk {
	SAF_WALK_NONE = 0,     /* not walked (older writer, --whole-stack) */
	SAF_WALK_COMPLETE = 1, /* to the outermost frame or the end of the copy */
	SAF_WALK_CUT = 2,      /* at a frame it could not follow (no file, no FDE, expression) */
};

/*
 * One run of a captured stack: the bytes at [regs[SAF_UREG_SP] + off, +
 * len). A USTACK is one run (none when empty); a USTACK_SPARSE keeps only
 * the parts its recorder's own unwind read, and leaves out the rest.
 */
struct saf_urun {
	uint32_t off, len;
	const uint8_t *data;
};

/**
 * saf_urun__next() - the run of @u after the one at *@pos (0 to start),
 * in increasing offset; a decoded record's runs were all checked. @r must
 * hold the run the previous call returned (offsets are relative to it).
 * @return true with @r filled and *@pos moved on, false after the last.
 */
bool saf_urun__next(const struct saf_ustack *u, size_t *pos, struct saf_urun *r);

/**
 * saf_urun__put() - encode one run of a USTACK_SPARSE (@gap bytes after
 * the end of the previous run, or after the stack pointer for the first;
 * @len >= 1 bytes at @data) into @dst, which has room for @len + 20 bytes.
 * @return the bytes written.
 */
size_t saf_urun__put(uint8_t *dst, uint32_t gap, const void *data, uint32_t len);

/* "USTACK record": register slots; arm64 adds the link register. */
enum saf_ureg {
	SAF_UREG_IP = 0,
	SAF_UREG_SP = 1,
	SAF_UREG_FP = 2, /* rbp on x86-64, x29 on arm64 */
	SAF_UREG_LR = 3, /* arm64 x30 */
};

/* "LOSS record": counters of the interval (see enum saf_counter). */
struct saf_loss {
	uint64_t seq; /* interval number */
	uint32_t ncounters;
	uint32_t ids[SAF_MAX_COUNTERS];
	uint64_t values[SAF_MAX_COUNTERS];
};

/* "KSYM record": a kernel symbol. */
struct saf_ksym {
	uint64_t addr;
	struct saf_str name;
	struct saf_str module; /* empty for vmlinux */
};

/* "SYMTAB record": the USYM records after it belong to this build id. */
struct saf_symtab {
	struct saf_bytes build_id;
	struct saf_str path;
	uint32_t id_kind; /* 1.7: enum saf_id_kind of build_id, as in its MAP records */
};

/* "USYM record": an ELF symbol, by file offset of its first byte. */
struct saf_usym {
	uint64_t offset;
	uint64_t size;
	struct saf_str name;
};

/*
 * "ULINE record" (1.10): the source position of a range of file offsets
 * of the SYMTAB's binary, one record per frame: @depth 0 the function the
 * range is in, k a function inlined k calls deep into it.
 */
struct saf_uline {
	uint64_t offset; /* file offset of the range's first byte */
	uint64_t size;
	uint32_t depth;
	uint32_t line;
	struct saf_str file;
	struct saf_str name;
};

/* "JITSYM record": one line of /tmp/perf-PID.map. */
struct saf_jitsym {
	uint32_t pid;
	uint64_t start;
	uint64_t size;
	struct saf_str name;
};

/*
 * "PYCODE record" (1.8): the names of code object @code of process @pid,
 * whose address a Python frame word of a user stack carries. @code 0
 * describes the process's interpreter instead: @name its version, @file
 * its binary, @line an enum saf_py_status.
 */
struct saf_pycode {
	uint32_t pid;
	uint64_t code;
	uint32_t line;	     /* co_firstlineno */
	struct saf_str name; /* co_qualname */
	struct saf_str file; /* co_filename */
};

/* "PYCODE record": a Python frame's word in a USER stack, and its fields. */
#define SAF_PY_TAG	 (0x50ull << 56)
#define SAF_PY_TAG_MASK	 (0xffull << 56)
#define SAF_PY_ENTRY	 (1ull << 55) /* the first frame an eval-loop call ran */
#define SAF_PY_ADDR_MASK ((1ull << 48) - 1)

enum saf_py_status {
	SAF_PY_READ = 0,    /* frames were read */
	SAF_PY_REFUSED = 1, /* a layout the recorder could not confirm: native frames only */
};

/* "END record" */
struct saf_end {
	uint64_t end_mono_ns;
	uint64_t samples; /* kept samples, whole file */
	uint64_t lost;	  /* lost samples, whole file */
	uint64_t intervals;
	uint64_t chunks; /* chunks before the END chunk */
};

/* One decoded record. Every pointer in it is borrowed from the reader. */
struct saf_record {
	enum saf_rec_kind kind;
	union {
		struct saf_meta meta;
		struct saf_proc proc;
		struct saf_map map;
		struct saf_comm comm;
		struct saf_exit exit;
		struct saf_cpugap cpugap;
		struct saf_stack stack;
		struct saf_interval interval;
		struct saf_count count;
		struct saf_loss loss;
		struct saf_ksym ksym;
		struct saf_symtab symtab;
		struct saf_usym usym;
		struct saf_jitsym jitsym;
		struct saf_end end;
		struct saf_ustack ustack;
		struct saf_offcpu offcpu;
		struct saf_pycode pycode;
		struct saf_uline uline;
	};
};

/* ---- allocation hook ---------------------------------------------------- */

/**
 * saf_set_allocator() - route every allocation of format/ (zstd contexts
 * included) through these functions; NULL restores malloc/realloc/free.
 * @malloc_fn, @realloc_fn, @free_fn: libc-compatible; free_fn accepts NULL.
 *
 * Not thread-safe: call before any reader or writer exists. Used by tests
 * to fail the Nth allocation.
 */
void saf_set_allocator(void *(*malloc_fn)(size_t), void *(*realloc_fn)(void *, size_t),
		       void (*free_fn)(void *));

/* ---- writer ------------------------------------------------------------- */

struct saf_writer;

struct saf_writer_opts {
	size_t sz;	     /* sizeof(struct saf_writer_opts), for growth */
	int zstd_level;	     /* 0 means 3 */
	size_t chunk_target; /* flush a chunk past this many bytes; 0 = 1 MiB */
};

/**
 * saf_writer__open_fd() - start a recording on an open, writable fd.
 * @fd: written with write(2) from its current offset; not closed by the
 *      writer (the caller owns it).
 * @opts: NULL for defaults.
 *
 * Writes the file header at once.
 * @return a writer the caller releases with saf_writer__free(), or NULL
 * with errno set (ENOMEM, or the write error).
 */
struct saf_writer *saf_writer__open_fd(int fd, const struct saf_writer_opts *opts);

/**
 * saf_writer__add() - append one record to the buffer of its chunk type.
 * @rec: copied; the caller keeps ownership of every pointer in it.
 *
 * META and END records cannot be added here (use saf_writer__meta() and
 * saf_writer__finish()). COUNT records must follow saf_writer__interval().
 * A buffer past chunk_target is written out as a chunk at once.
 * @return 0, -EINVAL for a record that breaks a limit in docs/format.md,
 * -ENOMEM, or the negative errno of a failed write (-ENOSPC ...).
 */
int saf_writer__add(struct saf_writer *w, const struct saf_record *rec);

/**
 * saf_writer__meta() - write the META chunk; call once, before anything else.
 * @return 0 or a negative errno.
 */
int saf_writer__meta(struct saf_writer *w, const struct saf_meta *meta);

/**
 * saf_writer__interval() - open the counts of an interval. Every COUNT added
 * until saf_writer__interval_end() belongs to it; when its chunk is split,
 * the INTERVAL record is repeated at the head of each continuation chunk.
 * @return 0 or a negative errno.
 */
int saf_writer__interval(struct saf_writer *w, const struct saf_interval *iv);

/**
 * saf_writer__interval_end() - close the interval with its loss counters
 * and write all buffered chunks (see saf_writer__flush()).
 * @loss: copied; loss->seq is set from the open interval.
 * @return 0 or a negative errno.
 */
int saf_writer__interval_end(struct saf_writer *w, const struct saf_loss *loss);

/**
 * saf_writer__flush() - write every non-empty chunk buffer, in the order
 * PROCS, KSYMS, USYMS, JIT, STACKS, SAMPLES, so that a chunk's references
 * are defined by earlier chunks. Each chunk reaches the fd before return.
 * @return 0 or a negative errno.
 */
int saf_writer__flush(struct saf_writer *w);

/**
 * saf_writer__finish() - flush, then write the END chunk. The writer can
 * only be freed afterwards. @end: copied; end->chunks is filled in.
 * @return 0 or a negative errno.
 */
int saf_writer__finish(struct saf_writer *w, const struct saf_end *end);

/**
 * saf_writer__next_file() - after saf_writer__finish(): start a new file on
 * @fd (borrowed, as in saf_writer__open_fd()) with its file header, keeping
 * the compression context and buffers. The caller then writes its META.
 * @return 0, -EINVAL when the current file is not finished, or a negative
 * errno from writing the header (then sticky, as any write error).
 */
int saf_writer__next_file(struct saf_writer *w, int fd);

/** saf_writer__bytes() - bytes written to the fd so far (header included). */
uint64_t saf_writer__bytes(const struct saf_writer *w);

/**
 * saf_writer__free() - release the writer without writing anything more
 * (a file without END reads as "did not finish cleanly"). Accepts NULL.
 */
void saf_writer__free(struct saf_writer *w);

/* ---- reader ------------------------------------------------------------- */

struct saf_reader;

struct saf_reader_opts {
	size_t sz;    /* sizeof(struct saf_reader_opts) */
	char *errbuf; /* if set, constructors write their error here */
	size_t errbuf_sz;
	/*
	 * After a damaged chunk, read on from the next chunk that validates
	 * (docs/format.md, "Reading a damaged or truncated file"); false:
	 * stop at the first damage.
	 */
	bool resync;
	/*
	 * Check the next chunk (read, checksum, decompress, validate) on a
	 * second thread while this one's records are handed out. Records,
	 * errors and messages are the same as without it.
	 */
	bool prefetch;
	/*
	 * A second file header after a recording (after its END chunk, at a
	 * chunk boundary, or where a damaged tail gives way to it) starts a
	 * new recording, as `cat a.sa b.sa` makes: saf_reader__next() returns
	 * SAF_READER_NEW_RECORDING there ("Concatenated recordings" in
	 * docs/format.md). false: bytes after END are ignored (and said).
	 */
	bool concat;
	/*
	 * Whole-file bound on decompressed content: at most max_expand times
	 * the file's size, and at least expand_floor bytes (0, 0: no bound).
	 * Past it reading stops with -EFBIG ("Limits" in docs/format.md).
	 */
	uint32_t max_expand;
	uint64_t expand_floor;
};

/* saf_reader__next() with opts.concat: a new recording starts (no record). */
#define SAF_READER_NEW_RECORDING 2

/** Per-file facts the reader learned, valid for the reader's life. */
struct saf_file_info {
	uint16_t version_major;
	uint16_t version_minor;
	uint64_t file_size;
	uint64_t chunks;	  /* valid chunks read so far */
	uint64_t skipped_chunks;  /* chunks of unknown type, skipped */
	uint64_t skipped_records; /* records of unknown kind, skipped */
	bool finished;		  /* END chunk seen */
	bool damaged;		  /* met a bad or truncated chunk */
	uint64_t good_bytes;	  /* bytes up to the end of the last valid chunk */
	uint64_t damage_count;	  /* places where damage was met */
	uint64_t dropped_bytes;	  /* bytes skipped from those places on */
	uint64_t dropped_chunks;  /* chunks lost: sequence gaps, 1 per damaged tail */
	/* opts.concat: recordings started so far (1 for a plain file), and
	 * the file offset of the current one's header */
	uint64_t recordings;
	uint64_t recording_offset;
	uint64_t content_bytes; /* decompressed content of the chunks read */
	/* saf_reader__open_stream(): file_size is UINT64_MAX until the end of
	 * the stream is read, then its length */
	bool stream;
};

/**
 * saf_reader__open() - open a recording for reading.
 * @path: file to read; it is read with pread(2) chunk by chunk.
 * @opts: NULL or options; on failure opts->errbuf gets "offset N: reason".
 *
 * Checks the file header (magic, major version).
 * @return a reader released with saf_reader__free(), or NULL with errno:
 * EBADMSG (not an .sa file, bad header), ENOTSUP (newer major version),
 * ENOMEM, or the open/read error.
 */
struct saf_reader *saf_reader__open(const char *path, const struct saf_reader_opts *opts);

/**
 * saf_reader__open_mem() - as saf_reader__open(), on a buffer.
 * @buf, @len: borrowed; must stay valid and unchanged until saf_reader__free().
 */
struct saf_reader *saf_reader__open_mem(const void *buf, size_t len,
					const struct saf_reader_opts *opts);

/*
 * A stream's bytes: up to @len into @buf, as read(2) does. @return the
 * count, 0 at the end, or -1 with errno (EINTR: asked again).
 */
typedef ssize_t (*saf_read_fn)(void *cookie, void *buf, size_t len);

/**
 * saf_reader__open_stream() - as saf_reader__open(), on bytes read once,
 * in order, from @read (a pipe): nothing is read twice and nothing needs
 * the stream's length ("Reading a stream" in docs/format.md). The reader
 * keeps the bytes of one chunk at most (a resync: one chunk past a 64 KiB
 * block) and 64 KiB read ahead; the whole-file bound of opts.max_expand is
 * taken on the bytes up to the end of the chunk being read.
 * @read, @cookie: borrowed until saf_reader__free(); with opts.prefetch,
 * @read is called on the reader's second thread too, never on two at once.
 */
struct saf_reader *saf_reader__open_stream(saf_read_fn read, void *cookie,
					   const struct saf_reader_opts *opts);

/**
 * saf_reader__next() - decode the next record.
 * @rec: filled in; its pointers are borrowed and valid until the next call
 *       to saf_reader__next() or saf_reader__free().
 *
 * A chunk is validated whole (lengths, checksum, decompression) before any
 * of its records is returned, so a damaged chunk yields no record.
 * @return 1 when a record was decoded; 0 at the end of the file (check
 * saf_reader__info()->finished: a file without END did not finish
 * cleanly, and saf_reader__errmsg() then says so); a negative errno on a
 * damaged or truncated chunk (-EBADMSG, -EOVERFLOW for a length past a
 * limit, -ENOMEM, or a read error); saf_reader__errmsg() then says where
 * and what was dropped. Every record before it stays valid data. Without
 * opts.resync every later call returns the same error. With it, -EBADMSG
 * and -EOVERFLOW are returned once per damaged place and the next call
 * reads on from the next valid chunk (0 when there is none); -ENOMEM and
 * read errors still stop reading for good. -EFBIG: the chunks expand past
 * opts.max_expand; reading stops there for good. With opts.concat, it
 * returns SAF_READER_NEW_RECORDING where a second recording starts; the
 * records after it are that recording's (its own chunk sequence, stack
 * ids and intervals), and info->finished restarts as false.
 */
int saf_reader__next(struct saf_reader *r, struct saf_record *rec);

/**
 * saf_reader__info() - what the reader learned so far. Borrowed; valid
 * until saf_reader__free().
 */
const struct saf_file_info *saf_reader__info(const struct saf_reader *r);

/**
 * saf_reader__chunk() - type and file offset of the chunk the last record
 * came from. @type, @offset: out, either may be NULL.
 */
void saf_reader__chunk(const struct saf_reader *r, uint32_t *type, uint64_t *offset);

/**
 * saf_reader__errmsg() - the last failure or warning as "offset N: reason"
 * (for example "offset 4120: chunk 7 checksum mismatch; 812 bytes and 1
 * chunks dropped, resumed at offset 4932"), or "" when there is none.
 * Borrowed; valid until the next call on the reader.
 */
const char *saf_reader__errmsg(const struct saf_reader *r);

/** saf_reader__free() - release the reader. Accepts NULL. */
void saf_reader__free(struct saf_reader *r);

/* ---- helpers ------------------------------------------------------------ */

/** saf_counter__name() - short name of a counter id ("lost_ustack"), or NULL. */
const char *saf_counter__name(uint32_t id);

/** saf_chunk_type__name() - name of a chunk type ("samples"), or NULL. */
const char *saf_chunk_type__name(uint32_t type);

/** saf_str__from() - a saf_str viewing a C string (NULL gives len 0). */
struct saf_str saf_str__from(const char *s);

#ifdef __cplusplus
}
#endif

#endif /* SAF_H */
