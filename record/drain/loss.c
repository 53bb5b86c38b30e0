// SPDX-License-Identifier: MIT
/*
 * loss.c - an interval's LOSS record from the BPF counters and what
 * sa-record dropped itself, and the totals of the whole recording
 * (docs/format.md "LOSS").
 */
#include <string.h>
#include "bpf_session.h"
#include "fguard.h"
#include "drain.h"
#include "loss.h"
#include "offcpu.h"
#include "record.h"

void rec_loss__fill(struct saf_loss *l, const struct rec_ctrs *c, __u64 truncated, __u64 lost_us,
		    __u64 sb_lost)
{
	static const struct {
		__u32 id;
		int idx;
	} map[] = {
		{SAF_CTR_RUNS, SA_CTR_RUNS},
		{SAF_CTR_KEPT, SA_CTR_KEPT},
		{SAF_CTR_FILTERED, SA_CTR_FILTERED},
		{SAF_CTR_LOST_USTACK, SA_CTR_LOST_USTACK},
		{SAF_CTR_LOST_KSTACK, SA_CTR_LOST_KSTACK},
		{SAF_CTR_LOST_RINGBUF, SA_CTR_LOST_RINGBUF},
		{SAF_CTR_LOST_MAPFULL, SA_CTR_LOST_MAPFULL},
		{SAF_CTR_LOST_OTHER, SA_CTR_LOST_OTHER},
		{SAF_CTR_COLLISIONS, SA_CTR_COLLISIONS},
		{SAF_CTR_MAPFULL_RECOVERED, SA_CTR_MAPFULL_RECOVERED},
		{SAF_CTR_UW_WALKED, SA_CTR_UW},
		{SAF_CTR_UW_COPIED, SA_CTR_UW_COPY},
	};
	size_t i;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		l->ids[i] = map[i].id;
		l->values[i] = c->v[map[i].idx];
	}
	/* samples sa-record dropped move from kept to their own cause */
	l->values[1] -= lost_us < l->values[1] ? lost_us : l->values[1];
	l->ids[i] = SAF_CTR_TRUNCATED;
	l->values[i++] = truncated;
	l->ids[i] = SAF_CTR_LOST_USERSPACE;
	l->values[i++] = lost_us;
	l->ids[i] = SAF_CTR_SIDEBAND_LOST;
	l->values[i++] = sb_lost;
	l->ncounters = i;
}

void rec_loss__add_files(struct saf_loss *l)
{
	static uint64_t seen;
	struct rec_fguard_stats st;
	uint64_t n;

	rec_fguard_stats(&st);
	n = st.timeouts + st.skipped;
	if (n == seen || l->ncounters >= SAF_MAX_COUNTERS)
		return;
	l->ids[l->ncounters] = SAF_CTR_FILES_SKIPPED;
	l->values[l->ncounters++] = n - seen;
	seen = n;
}

void rec_loss__add_throttled(struct saf_loss *l, uint64_t n)
{
	if (!n || l->ncounters >= SAF_MAX_COUNTERS)
		return;
	l->ids[l->ncounters] = SAF_CTR_THROTTLED;
	l->values[l->ncounters++] = n;
}

void rec_loss__add_unwritten(struct saf_loss *l, uint64_t n)
{
	if (!n || l->ncounters >= SAF_MAX_COUNTERS)
		return;
	l->ids[l->ncounters] = SAF_CTR_MAPS_UNWRITTEN;
	l->values[l->ncounters++] = n;
}

void rec_totals__add(struct rec_totals *t, const struct saf_loss *l)
{
	__u32 i;

	t->intervals++;
	for (i = 0; i < l->ncounters; i++) {
		switch (l->ids[i]) {
		case SAF_CTR_RUNS:
			t->runs += l->values[i];
			break;
		case SAF_CTR_KEPT:
			t->kept += l->values[i];
			break;
		case SAF_CTR_FILTERED:
			t->filtered += l->values[i];
			break;
		case SAF_CTR_TRUNCATED:
			t->truncated += l->values[i];
			break;
		case SAF_CTR_COLLISIONS:
			t->collisions += l->values[i];
			break;
		case SAF_CTR_FILES_SKIPPED:
			t->files_skipped += l->values[i];
			break;
		case SAF_CTR_THROTTLED: /* never ran: outside runs (docs/format.md, LOSS) */
			t->throttled += l->values[i];
			break;
		case SAF_CTR_MAPFULL_RECOVERED: /* kept samples (docs/format.md, LOSS) */
		case SAF_CTR_SIDEBAND_LOST:	/* process records, not samples */
		case SAF_CTR_MAPS_UNWRITTEN:	/* mappings, not samples */
			break;
		case SAF_CTR_OFF_RUNS ... SAF_CTR_OFF_RECOVERED:
			rec_offcpu__add_total(t, l->ids[i], l->values[i]);
			break;
		case SAF_CTR_UW_WALKED ... SAF_CTR_OFF_UW_CUT:
			break; /* informational; rec_drain totals them from the counters */
		default:
			t->lost += l->values[i];
			break;
		}
	}
}
