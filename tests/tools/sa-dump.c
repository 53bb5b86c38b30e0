// SPDX-License-Identifier: MIT
/*
 * sa-dump.c - print every record of an .sa file as one line of text, for
 * the sa-record tests (tests/cli/2xxx) that must read a recording without
 * sa-report. Test tool only: nothing in the product depends on it.
 * Exit 0 when the file ended with END, 3 when it did not, 1 on an error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "saf.h"

static void hex(const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		printf("%02x", p[i]);
	if (!n)
		printf("-");
}

static void print_loss(const struct saf_loss *l)
{
	printf("LOSS seq=%" PRIu64, l->seq);
	for (uint32_t i = 0; i < l->ncounters; i++) {
		const char *n = saf_counter__name(l->ids[i]);

		if (n)
			printf(" %s=%" PRIu64, n, l->values[i]);
		else
			printf(" ctr%u=%" PRIu64, l->ids[i], l->values[i]);
	}
	printf("\n");
}

static void print_rec(const struct saf_record *r)
{
	switch (r->kind) {
	case SAF_REC_META:
		printf("META freq=%" PRIu64 " ncpus=%" PRIu64 " event=%s target=%s flags=%" PRIu64
		       " start_mono=%" PRIu64 " host=%s kernel=%s start_real=%" PRIu64 "\n",
		       r->meta.freq_hz, r->meta.ncpus, r->meta.event.str, r->meta.target.str,
		       r->meta.flags, r->meta.start_mono_ns, r->meta.hostname.str,
		       r->meta.kernel_release.str, r->meta.start_realtime_ns);
		break;
	case SAF_REC_PROC:
		printf("PROC pid=%u gen=%u ppid=%u comm=%s exe=%s\n", r->proc.pid, r->proc.gen,
		       r->proc.ppid, r->proc.comm.str, r->proc.exe.str);
		break;
	case SAF_REC_MAP:
		printf("MAP pid=%u gen=%u start=%" PRIx64 " end=%" PRIx64 " pgoff=%" PRIx64
		       " flags=%" PRIu64 " path=%s buildid=", r->map.pid, r->map.gen, r->map.start,
		       r->map.end, r->map.pgoff, r->map.flags, r->map.path.str);
		hex(r->map.build_id.data, r->map.build_id.len);
		if (r->map.id_kind) /* 1.7: a content hash, or a kind to come */
			printf(" id_kind=%u", r->map.id_kind);
		printf("\n");
		break;
	case SAF_REC_COMM:
		printf("COMM pid=%u tid=%u comm=%s\n", r->comm.pid, r->comm.tid, r->comm.comm.str);
		break;
	case SAF_REC_EXIT:
		printf("EXIT pid=%u\n", r->exit.pid);
		break;
	case SAF_REC_CPUGAP:
		printf("CPUGAP cpu=%u from=%" PRIu64 " to=%" PRIu64 "\n", r->cpugap.cpu,
		       r->cpugap.from_ns, r->cpugap.to_ns);
		break;
	case SAF_REC_STACK:
		printf("STACK id=%u kind=%u n=%u", r->stack.id, r->stack.kind, r->stack.nframes);
		for (uint32_t i = 0; i < r->stack.nframes; i++)
			printf(" %" PRIx64, r->stack.ips[i]);
		printf("\n");
		break;
	case SAF_REC_INTERVAL:
		printf("INTERVAL seq=%" PRIu64 " start=%" PRIu64 " end=%" PRIu64 "\n",
		       r->interval.seq, r->interval.start_ns, r->interval.end_ns);
		break;
	case SAF_REC_COUNT:
		printf("COUNT pid=%u tid=%u gen=%u ustack=%u kstack=%u count=%" PRIu64 " comm=%s\n",
		       r->count.pid, r->count.tid, r->count.gen, r->count.ustack, r->count.kstack,
		       r->count.count, r->count.comm.str);
		break;
	case SAF_REC_OFFCPU:
		printf("OFFCPU pid=%u tid=%u gen=%u ustack=%u kstack=%u count=%" PRIu64
		       " time_ns=%" PRIu64 " comm=%s flags=%u\n",
		       r->offcpu.pid, r->offcpu.tid, r->offcpu.gen, r->offcpu.ustack,
		       r->offcpu.kstack, r->offcpu.count, r->offcpu.time_ns, r->offcpu.comm.str,
		       r->offcpu.flags);
		break;
	case SAF_REC_LOSS:
		print_loss(&r->loss);
		break;
	case SAF_REC_USTACK:
		printf("USTACK pid=%u tid=%u gen=%u kstack=%u count=%" PRIu64 " ip=%" PRIx64
		       " sp=%" PRIx64 " bytes=%u\n", r->ustack.pid, r->ustack.tid, r->ustack.gen,
		       r->ustack.kstack, r->ustack.count, r->ustack.regs[0], r->ustack.regs[1],
		       r->ustack.stack.len);
		break;
	case SAF_REC_USTACK_SPARSE: {
		struct saf_urun run;
		uint32_t nruns = 0, bytes = 0, span = 0;
		size_t pos = 0;

		while (saf_urun__next(&r->ustack, &pos, &run)) {
			nruns++;
			bytes += run.len;
			span = run.off + run.len;
		}
		printf("USTACK_SPARSE pid=%u tid=%u gen=%u kstack=%u count=%" PRIu64 " ip=%" PRIx64
		       " sp=%" PRIx64 " runs=%u bytes=%u span=%u\n", r->ustack.pid, r->ustack.tid,
		       r->ustack.gen, r->ustack.kstack, r->ustack.count, r->ustack.regs[0],
		       r->ustack.regs[1], nruns, bytes, span);
		break;
	}
	case SAF_REC_JITSYM:
		printf("JITSYM pid=%u start=%" PRIx64 " size=%" PRIx64 " name=%.*s\n", r->jitsym.pid,
		       r->jitsym.start, r->jitsym.size, (int)r->jitsym.name.len, r->jitsym.name.str);
		break;
	case SAF_REC_PYCODE:
		printf("PYCODE pid=%u code=%" PRIx64 " line=%u name=%.*s file=%.*s\n", r->pycode.pid,
		       r->pycode.code, r->pycode.line, (int)r->pycode.name.len, r->pycode.name.str,
		       (int)r->pycode.file.len, r->pycode.file.str);
		break;
	case SAF_REC_ULINE:
		printf("ULINE offset=%" PRIx64 " size=%" PRIx64 " depth=%u line=%u file=%.*s name=%.*s\n",
		       r->uline.offset, r->uline.size, r->uline.depth, r->uline.line,
		       (int)r->uline.file.len, r->uline.file.str, (int)r->uline.name.len,
		       r->uline.name.str);
		break;
	case SAF_REC_END:
		printf("END samples=%" PRIu64 " lost=%" PRIu64 " intervals=%" PRIu64
		       " chunks=%" PRIu64 "\n", r->end.samples, r->end.lost, r->end.intervals,
		       r->end.chunks);
		break;
	default:
		printf("REC kind=%d\n", r->kind);
		break;
	}
}

int main(int argc, char **argv)
{
	char err[256] = "";
	struct saf_reader_opts o = { .sz = sizeof(o), .errbuf = err, .errbuf_sz = sizeof(err) };
	struct saf_reader *rd;
	struct saf_record rec;
	int n;

	if (argc != 2) {
		fprintf(stderr, "usage: sa-dump FILE.sa\n");
		return 2;
	}
	rd = saf_reader__open(argv[1], &o);
	if (!rd) {
		fprintf(stderr, "sa-dump: %s: %s\n", argv[1], err);
		return 1;
	}
	while ((n = saf_reader__next(rd, &rec)) > 0)
		print_rec(&rec);
	printf("FILE finished=%d damaged=%d\n", saf_reader__info(rd)->finished,
	       saf_reader__info(rd)->damaged);
	if (n < 0)
		fprintf(stderr, "sa-dump: %s: %s\n", argv[1], saf_reader__errmsg(rd));
	n = n < 0 ? 1 : saf_reader__info(rd)->finished ? 0 : 3;
	saf_reader__free(rd);
	return n;
}
