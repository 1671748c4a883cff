/* The Perfetto protobuf sink (FORMATS.md, tools/perfetto_trace.proto): TrackEvent
 * packets encoded by hand. One packet sequence per thread whose defaults name the
 * thread's track and the CLOCK_MONOTONIC clock; event names and source locations
 * interned once per sequence; SLICE_BEGIN / SLICE_END in time order; instants;
 * counters on a counter track per process and name; flows as instants with flow_ids
 * (out) or terminating_flow_ids (in); one clock snapshot that lines the trace up with
 * any other trace of the machine.
 *
 * Perfetto nests a thread's protobuf events in their order, but JSON events at one
 * time by its own rule: slices end there first, then slices that begin there (the
 * longest first), then instants and zero-length slices, which stack on one another,
 * in file order. So that an instant at a slice's start or end has the same parent
 * in both formats, this writer holds a thread's instants at its latest time until
 * its time moves on, with the slices begun then that may end then too, and writes
 * them in that order (zero-length slices as instants). An instant alone, the common
 * case, is written at once and taken back into the held ones only when something at
 * its time, or on another thread, comes before it is known to stay (tt_pf_settle). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "protobuf_internal.h"

/* Field numbers (Perfetto's). */
enum {
	PKT_TIMESTAMP = 8, PKT_SEQUENCE_ID = 10, PKT_TRACK_EVENT = 11, PKT_INTERNED_DATA = 12,
	PKT_SEQUENCE_FLAGS = 13, PKT_CLOCK_SNAPSHOT = 6, PKT_DEFAULTS = 59, PKT_TRACK_DESCRIPTOR = 60,
	PKT_FIRST_ON_SEQUENCE = 87, PKT_SYSTEM_INFO = 45, SI_MACHINE_NAME = 17,
	PKT_TRACE_STATS = 35, TS_BUFFER_STATS = 1, BS_WRITER_PACKET_LOSS = 19,
	TE_TYPE = 9, TE_TRACK_UUID = 11, TE_NAME_IID = 10, TE_NAME = 23, TE_CATEGORY_IIDS = 3,
	TE_COUNTER_VALUE = 30, TE_FLOW_IDS = 47, TE_TERMINATING_FLOW_IDS = 48,
	TE_DEBUG_ANNOTATIONS = 4, TE_SOURCE_LOCATION_IID = 34,
	DA_NAME = 10, DA_BOOL = 2, DA_UINT = 3, DA_INT = 4, DA_STRING = 6,
	DEF_CLOCK_ID = 58, DEF_TRACK_EVENT = 11, TED_TRACK_UUID = 11,
	ID_CATEGORIES = 1, ID_EVENT_NAMES = 2, ID_SOURCE_LOCATIONS = 4,
	IID = 1, IID_NAME = 2, SL_FILE = 2, SL_FUNCTION = 3, SL_LINE = 4,
	CS_CLOCKS = 1, CLK_ID = 1, CLK_TIMESTAMP = 2, CLK_INCREMENTAL = 3,
	TD_UUID = 1, TD_PARENT = 5, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_COUNTER = 8,
	PD_PID = 1, PD_NAME = 6, THD_PID = 1, THD_TID = 2, THD_NAME = 5,
};
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
enum { CLOCK_REALTIME_ID = 1, CLOCK_MONOTONIC_ID = 3, CLOCK_BOOTTIME_ID = 6 };
/* A sequence-scoped clock: each packet's timestamp is the delta from the one before
 * on its sequence, a byte or two instead of seven or eight. */
#define TT_PF_DELTA_CLOCK 64
/* sequence_flags: only a sequence's first packet says it (cleared). The events that use
 * its interned names and clock could say that they need it (2: trace_processor then
 * skips them if the sequence lost its state), at two bytes each: nothing here loses
 * it, as no packet of the file is lost without the rest of it. */
enum { SEQ_CLEARED = 1 };
#define TT_PB_CATEGORY_IID 1

/* A thread sequence's tail (struct tt_pf_seq): its id and its machine's */
#define TT_PF_TAIL_ROOM 16 /* two fields of 32-bit values: 2 * (PB_TAG_ROOM + 5) bytes */

/* A site's named event as tt_pf_plain writes it, encoded once: the TrackEvent's tag
 * and length, its type (TT_PF_NAMED_TYPE_AT), the interned name and location, the
 * category. */
#define TT_PF_NAMED_ROOM 24 /* 2 + 2 + 2 * (PB_TAG_ROOM + 5) + 2 bytes at most */
#define TT_PF_NAMED_TYPE_AT 3
struct tt_pf_named {
	uint8_t b[TT_PF_NAMED_ROOM];
	uint8_t len;
};

/* An event held back until its thread's time moves on. */
enum tt_pf_hold_kind { TT_HELD_BEGIN, TT_HELD_POINT, TT_HELD_GONE };
struct tt_pf_held {
	struct tt_event e; /* e.text: a copy, for a mark's name */
	enum tt_pf_hold_kind kind; /* POINT: an instant, or a zero-length slice's end */
};

/* A packet sequence: one per thread, its events in time order with delta-encoded
 * timestamps; and one for flows, which the decoder delivers late, with absolute ones. */
struct tt_pf_seq {
	uint64_t track; /* the thread's track */
	uint32_t id;
	uint32_t machine; /* its Perfetto machine: tt_file.machine_index (0: the first) */
	bool delta;     /* timestamps on TT_PF_DELTA_CLOCK */
	int64_t last;   /* the last timestamp (CLOCK_MONOTONIC ns) */
	uint8_t *interned; /* a bit per site: its name and location sent on this sequence */
	struct tt_pf_held *held; /* the thread's events at held_ts, in order */
	size_t nheld, held_cap;
	size_t held_points; /* of them TT_HELD_POINT: none, the usual case, saves a pass */
	size_t held_names;  /* of them with a function's name copied (func_name) */
	int64_t end_ts;     /* of the thread's last record: what begins then is held */
	int64_t held_ts;
	/* What each packet written in place (tt_pf_direct) says after its timestamp: the
	 * sequence id and a machine's but the first's id, encoded once */
	uint8_t tail[TT_PF_TAIL_ROOM];
	uint8_t tail_len;
};

/* An instant written before its time was over (tt_pf_instant's fast lane): what it
 * takes to hold it as before, when an event of its time comes after it or anything
 * else is written (tt_pf_settle). sq NULL: none. */
struct tt_pf_early {
	struct tt_pf_seq *sq;
	const struct tt_thread *thread;
	const struct tt_site *site;
	int64_t ts, last; /* its time; its sequence's time before it */
	uint64_t value;
	uint32_t depth, flags;
	size_t at; /* where its packet begins in the output's buffer */
};

struct tt_perfetto {
	struct tt_sink sink;
	struct tt_out *out;
	const struct tt_trace *trace;
	struct tt_pf_seq *threads; /* by thread id */
	struct tt_pf_seq *flows;   /* by machine */
	uint64_t *counter_uuid;       /* by site id: its counter track, once described */
	struct tt_pf_named *named;    /* by site id */
	uint64_t frame_tracks;        /* frames' threads described: those numbered below it */
	struct tt_buf scratch;         /* packets with strings or of any length */
	struct tt_folded folded;      /* left out: nested deeper than Perfetto shows */
	int64_t boot_offset;          /* BOOTTIME less CLOCK_MONOTONIC, for the states */
	/* The trace's ts 0 as written: its CLOCK_MONOTONIC moved up, where a machine placed
	 * before the first's boot would have negative times (trace_processor drops them),
	 * by shift_ns, and every clock snapshot's MONOTONIC and BOOTTIME with it (REALTIME
	 * kept: the wall time of each event stays what it was). */
	int64_t base_ns, shift_ns;
	struct tt_pf_early early;
};

static uint64_t tt_pf_process_uuid(size_t file)
{
	return (uint64_t)(file + 1) << 40;
}

/* Writes the scratch packet, on `machine`: every packet of a machine but the first
 * says which (TracePacket.machine_id), as trace_processor keeps each machine's
 * processes, tracks, sequences and clocks apart by it. */
static int tt_pf_write(struct tt_perfetto *p, uint32_t machine)
{
	if (machine)
		tt_pb_uint(&p->scratch, PB_PACKET_MACHINE_ID, machine);
	return tt_pb_write_packet(p->out, &p->scratch);
}

/* A TrackDescriptor packet for a process, a thread or a counter. */
static int tt_pf_descriptor(struct tt_perfetto *p, uint32_t machine, uint64_t uuid, uint64_t parent,
			    unsigned kind, uint32_t pid, uint32_t tid, struct tt_str name)
{
	struct tt_buf *w = &p->scratch;
	tt_pb_reset(w);
	size_t td = tt_pb_open(w);
	tt_pb_uint(w, TD_UUID, uuid);
	if (parent)
		tt_pb_uint(w, TD_PARENT, parent);
	size_t sub = tt_pb_open(w);
	switch (kind) {
	case TD_PROCESS:
		tt_pb_uint(w, PD_PID, pid);
		tt_pb_text(w, PD_NAME, name);
		break;
	case TD_THREAD:
		tt_pb_uint(w, THD_PID, pid);
		tt_pb_uint(w, THD_TID, tid);
		tt_pb_text(w, THD_NAME, name);
		break;
	default: /* a counter: its name on the track, nothing inside */
		break;
	}
	tt_pb_close(w, sub, kind);
	if (kind == TD_COUNTER)
		tt_pb_text(w, TD_NAME, name);
	tt_pb_close(w, td, PKT_TRACK_DESCRIPTOR);
	return tt_pf_write(p, machine);
}

/* trace_processor gives each process its main thread (tid = pid), unnamed unless a
 * descriptor names it: one that recorded nothing is named after the process, as the
 * system names it. Its track's uuid is past every recording thread's. */
static int tt_pf_main_thread(struct tt_perfetto *p, const struct tt_file *f, uint64_t puuid)
{
	for (size_t k = 0; k < f->nthreads; k++)
		if (f->threads[k].tid == f->process.pid)
			return 0;
	return tt_pf_descriptor(p, f->machine_index, puuid | ((UINT64_C(1) << 40) - 1), puuid,
				TD_THREAD, f->process.pid, f->process.pid, f->process.name);
}

/* The trace's one clock snapshot: CLOCK_MONOTONIC (our timestamps) against BOOTTIME
 * (Perfetto's trace clock) and REALTIME, from one anchor. One, because Perfetto drops
 * every event of a trace whose snapshots make a clock go backwards (merged runs that
 * overlap, files given later-first), and because anchors taken at different moments
 * differ by a few ns in their offsets, which would shift slices between them. */
static int tt_pf_clocks(struct tt_perfetto *p, uint32_t machine, const struct tt_anchor *a)
{
	int64_t monotonic = a->monotonic_ns + p->shift_ns;
	struct tt_buf *w = &p->scratch;
	tt_pb_reset(w);
	size_t cs = tt_pb_open(w);
	/* (taken: read from the anchor, whose 0 is a clock not read; a time moved to 0 by
	 * shift_ns, a run placed before its clock's zero, is one) */
	const struct {
		unsigned id;
		int64_t ns;
		bool taken;
	} clocks[] = {
		{CLOCK_MONOTONIC_ID, monotonic, a->monotonic_ns != 0},
		/* a file without BOOTTIME: assume no suspend since boot */
		{CLOCK_BOOTTIME_ID, a->boottime_ns ? a->boottime_ns + p->shift_ns : monotonic,
		 a->boottime_ns != 0 || a->monotonic_ns != 0},
		{CLOCK_REALTIME_ID, a->realtime_ns, a->realtime_ns != 0},
	};
	for (size_t i = 0; i < 3; i++) {
		if (!clocks[i].taken)
			continue;
		size_t c = tt_pb_open(w);
		tt_pb_uint(w, CLK_ID, clocks[i].id);
		tt_pb_uint(w, CLK_TIMESTAMP, (uint64_t)clocks[i].ns);
		tt_pb_close(w, c, CS_CLOCKS);
	}
	tt_pb_close(w, cs, PKT_CLOCK_SNAPSHOT);
	tt_pb_uint(w, PKT_TIMESTAMP, (uint64_t)clocks[1].ns);
	return tt_pf_write(p, machine);
}

/* Each machine's clock snapshot and, where the trace has several, its name (its host's;
 * SystemInfo.machine_name). Every machine's snapshot is the same: the trace's times
 * are the first machine's CLOCK_MONOTONIC, the others placed on it (tt_machine), and
 * trace_processor relates a machine to the first through its REALTIME, as it is
 * written here: so they stay where the converter placed them. */
static int tt_pf_machines(struct tt_perfetto *p, const struct tt_anchor *anchor)
{
	const struct tt_trace *t = p->trace;
	for (uint32_t k = 0; k < (t->nmachines ? t->nmachines : 1); k++) {
		if (tt_pf_clocks(p, k, anchor) < 0)
			return -1;
		if (t->nmachines < 2 || !t->machines[k].file->machine.host_name_len)
			continue;
		const struct tt_machine_info *m = &t->machines[k].file->machine;
		/* (another machine of its host name: told apart by its id, as convert says it) */
		char name[TT_MACHINE_LABEL_MAX];
		size_t len = tt_machine_label(t, k, (struct tt_str){m->host_name, m->host_name_len},
					      name, sizeof name);
		tt_pb_reset(&p->scratch);
		size_t si = tt_pb_open(&p->scratch);
		tt_pb_text(&p->scratch, SI_MACHINE_NAME, (struct tt_str){name, (uint32_t)len});
		tt_pb_close(&p->scratch, si, PKT_SYSTEM_INFO);
		if (tt_pf_write(p, k) < 0)
			return -1;
	}
	return 0;
}

/* The events the rings overwrote in snapshots' windows (their windows cut: the
 * decoder's warning, JSON's "dropped"), each machine's: a loss of data trace_processor
 * shows (its stat traced_buf_trace_writer_packet_loss, from TraceStats), where the
 * slices alone show nothing missing. */
static int tt_pf_window_cuts(struct tt_perfetto *p)
{
	const struct tt_trace *t = p->trace;
	for (uint32_t k = 0; k < (t->nmachines ? t->nmachines : 1); k++) {
		uint64_t lost = 0;
		for (size_t i = 0; i < t->nfiles; i++)
			for (size_t n = 0; t->files[i].snapshot && t->files[i].machine_index == k &&
					   n < t->files[i].nthreads; n++)
				lost += t->files[i].threads[n].dropped[TT_DROP_OVERWRITTEN];
		if (!lost)
			continue;
		struct tt_buf *w = &p->scratch;
		tt_pb_reset(w);
		size_t ts = tt_pb_open(w), bs = tt_pb_open(w);
		tt_pb_uint(w, BS_WRITER_PACKET_LOSS, lost);
		tt_pb_close(w, bs, TS_BUFFER_STATS);
		tt_pb_close(w, ts, PKT_TRACE_STATS);
		if (tt_pf_write(p, k) < 0)
			return -1;
	}
	return 0;
}

/* The first packet of a sequence: clears incremental state, sets the defaults (the
 * track and the clock; for a thread's sequence, the delta clock that starts at the
 * trace start) and interns the one category. */
static int tt_pf_sequence_start(struct tt_perfetto *p, const struct tt_pf_seq *sq)
{
	static const char cat[] = "ticktrace";
	struct tt_buf *w = &p->scratch;
	tt_pb_reset(w);
	tt_pb_uint(w, PKT_SEQUENCE_ID, sq->id);
	tt_pb_uint(w, PKT_SEQUENCE_FLAGS, SEQ_CLEARED);
	tt_pb_uint(w, PKT_FIRST_ON_SEQUENCE, 1);
	if (sq->delta) {
		size_t cs = tt_pb_open(w), c = tt_pb_open(w);
		tt_pb_uint(w, CLK_ID, TT_PF_DELTA_CLOCK);
		tt_pb_uint(w, CLK_TIMESTAMP, (uint64_t)sq->last);
		tt_pb_uint(w, CLK_INCREMENTAL, 1);
		tt_pb_close(w, c, CS_CLOCKS);
		c = tt_pb_open(w);
		tt_pb_uint(w, CLK_ID, CLOCK_MONOTONIC_ID);
		tt_pb_uint(w, CLK_TIMESTAMP, (uint64_t)sq->last);
		tt_pb_close(w, c, CS_CLOCKS);
		tt_pb_close(w, cs, PKT_CLOCK_SNAPSHOT);
	}
	size_t def = tt_pb_open(w);
	tt_pb_uint(w, DEF_CLOCK_ID, sq->delta ? TT_PF_DELTA_CLOCK : CLOCK_MONOTONIC_ID);
	if (sq->track) {
		size_t ted = tt_pb_open(w);
		tt_pb_uint(w, TED_TRACK_UUID, sq->track);
		tt_pb_close(w, ted, DEF_TRACK_EVENT);
	}
	tt_pb_close(w, def, PKT_DEFAULTS);
	size_t id = tt_pb_open(w), c = tt_pb_open(w);
	tt_pb_uint(w, IID, TT_PB_CATEGORY_IID);
	tt_pb_bytes(w, IID_NAME, cat, sizeof(cat) - 1);
	tt_pb_close(w, c, ID_CATEGORIES);
	tt_pb_close(w, id, PKT_INTERNED_DATA);
	return tt_pf_write(p, sq->machine);
}

/* What tt_pf_direct writes after the timestamp of each packet of a thread's sequence. */
static void tt_pf_seq_tail(struct tt_pf_seq *sq)
{
	uint8_t *q = pb_uint(sq->tail, PKT_SEQUENCE_ID, sq->id);
	if (sq->machine)
		q = pb_uint(q, PB_PACKET_MACHINE_ID, sq->machine);
	sq->tail_len = (uint8_t)(q - sq->tail);
}

/* The TrackEvent tt_pf_plain writes for a slice begin of the site numbered `id` */
static void tt_pf_named_init(struct tt_pf_named *n, uint32_t id)
{
	uint8_t *q = pb_open(n->b);
	q = pb_uint(q, TE_TYPE, TYPE_SLICE_BEGIN);
	q = pb_uint(q, TE_NAME_IID, (uint64_t)id + 1);
	q = pb_uint(q, TE_SOURCE_LOCATION_IID, (uint64_t)id + 1);
	q = pb_uint(q, TE_CATEGORY_IIDS, TT_PB_CATEGORY_IID);
	n->len = (uint8_t)(pb_close(n->b, q, PKT_TRACK_EVENT) - n->b);
}

static int tt_pf_start(struct tt_sink *sink, const struct tt_trace *t)
{
	struct tt_perfetto *p = (struct tt_perfetto *)sink;
	p->trace = t;
	p->threads = calloc(t->nthreads ? t->nthreads : 1, sizeof(*p->threads));
	p->counter_uuid = calloc(t->nsites ? t->nsites : 1, sizeof(*p->counter_uuid));
	p->named = malloc((t->nsites ? t->nsites : 1) * sizeof(*p->named));
	if (!p->threads || !p->counter_uuid || !p->named)
		return tt_error("out of memory for %zu threads and %zu call sites", t->nthreads,
				t->nsites);
	for (size_t i = 0; i < t->nsites; i++)
		tt_pf_named_init(&p->named[i], (uint32_t)i);
	/* the earliest of the first machine's: its REALTIME is the first machine's wall clock */
	const struct tt_anchor *anchor = &t->files[0].header.start;
	for (size_t i = 1; i < t->nfiles; i++)
		if (t->files[i].header.start.monotonic_ns < anchor->monotonic_ns &&
		    t->files[i].machine_index == 0)
			anchor = &t->files[i].header.start;
	p->shift_ns = t->base_ns < 0 ? -t->base_ns : 0;
	p->base_ns = t->base_ns + p->shift_ns;
	/* trace_processor holds times below 2^61 ns (73 years): later ones it clamps there,
	 * their slices piled on one instant; a trace spans less (tt_trace_check_span), but
	 * from the first machine's boot, which a .pftrace's times count from, it may not */
	int64_t latest = tt_trace_latest(t);
	if (latest - t->base_ns >= TT_TIME_LIMIT - p->base_ns)
		return tt_error("the trace spans %.0f s from its earliest time to its latest (its "
				"machines' clocks placed that far apart, or --offset), and its first "
				"machine had been up %.0f s at its start: more than a .pftrace's times "
				"hold (below 2^61 ns, 73 years, from that boot); -o OUT.json holds it",
				(double)(latest - t->base_ns) / 1e9, (double)p->base_ns / 1e9);
	p->flows = calloc(t->nmachines ? t->nmachines : 1, sizeof(*p->flows));
	if (!p->flows)
		return tt_error("out of memory for %zu machines", t->nmachines);
	if (t->nfiles && (tt_pf_machines(p, anchor) < 0 || tt_pf_window_cuts(p) < 0))
		return -1;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tt_file *f = &t->files[i];
		uint64_t puuid = tt_pf_process_uuid(i);
		if (tt_pf_descriptor(p, f->machine_index, puuid, 0, TD_PROCESS, f->process.pid, 0,
				     f->process.name) < 0 ||
		    tt_pf_main_thread(p, f, puuid) < 0)
			return -1;
		for (size_t k = 0; k < f->nthreads; k++) {
			const struct tt_thread *th = &f->threads[k];
			struct tt_pf_seq *sq = &p->threads[th->id];
			/* sequence ids: one per thread, trace-wide; 0 is invalid */
			*sq = (struct tt_pf_seq){.track = puuid | (th->id + 1), .id = th->id + 1,
						 .machine = f->machine_index, .delta = true,
						 .last = p->base_ns, .end_ts = INT64_MIN};
			tt_pf_seq_tail(sq);
			uint64_t end_tsc;
			if (tt_thread_last_tsc(th, &end_tsc))
				sq->end_ts = tt_rebase(tt_clock_ns(&f->clock, end_tsc), t->base_ns);
			sq->interned = calloc((t->nsites + 7) / 8 + 1, 1);
			if (!sq->interned)
				return tt_error("out of memory for %zu threads", t->nthreads);
			if (tt_pf_descriptor(p, sq->machine, sq->track, puuid, TD_THREAD, f->process.pid,
					     th->tid, th->name) < 0 ||
			    tt_pf_sequence_start(p, sq) < 0)
				return -1;
		}
	}
	p->boot_offset = t->nfiles && anchor->boottime_ns ? anchor->boottime_ns - anchor->monotonic_ns : 0;
	if (!t->states_at_finish && tt_pf_states(p->out, &p->scratch, t, p->boot_offset + p->shift_ns) < 0)
		return -1;
	/* flows and frames: a sequence per machine, as their tracks are the machine's */
	int rc = 0;
	for (uint32_t k = 0; k < (t->nmachines ? t->nmachines : 1) && rc == 0; k++) {
		p->flows[k] = (struct tt_pf_seq){.id = (uint32_t)t->nthreads + 1 + k, .machine = k};
		rc = tt_pf_sequence_start(p, &p->flows[k]);
	}
	return rc;
}

/* The common part of an event packet: timestamp and sequence. */
static void tt_pf_head(struct tt_buf *w, int64_t base_ns, const struct tt_event *e,
		       struct tt_pf_seq *sq)
{
	int64_t ts = (int64_t)((uint64_t)base_ns + (uint64_t)e->ts); /* wraps only for a hostile clock */
	tt_pb_uint(w, PKT_TIMESTAMP, sq->delta ? (uint64_t)ts - (uint64_t)sq->last : (uint64_t)ts);
	sq->last = ts;
	tt_pb_uint(w, PKT_SEQUENCE_ID, sq->id);
}

/* Interns a site's name and source location on the thread's sequence at its first
 * use there. */
static void tt_pf_intern(struct tt_pf_seq *sq, const struct tt_site *s, struct tt_buf *w)
{
	sq->interned[s->id / 8] |= (uint8_t)(1u << (s->id % 8));
	size_t id = tt_pb_open(w), m = tt_pb_open(w);
	tt_pb_uint(w, IID, s->id + 1);
	tt_pb_text(w, IID_NAME, s->name);
	tt_pb_close(w, m, ID_EVENT_NAMES);
	m = tt_pb_open(w);
	tt_pb_uint(w, IID, s->id + 1);
	tt_pb_text(w, SL_FILE, s->file);
	tt_pb_text(w, SL_FUNCTION, s->func);
	tt_pb_uint(w, SL_LINE, s->line);
	tt_pb_close(w, m, ID_SOURCE_LOCATIONS);
	tt_pb_close(w, id, PKT_INTERNED_DATA);
}

/* A debug annotation NAME = true. */
static void tt_pf_flag(struct tt_buf *w, const char *name, size_t len)
{
	size_t da = tt_pb_open(w);
	tt_pb_bytes(w, DA_NAME, name, len);
	tt_pb_uint(w, DA_BOOL, 1);
	tt_pb_close(w, da, TE_DEBUG_ANNOTATIONS);
}

/* A debug annotation NAME = an integer: `kind` DA_INT or DA_UINT. */
static void tt_pf_number(struct tt_buf *w, struct tt_str name, unsigned kind, uint64_t v)
{
	size_t da = tt_pb_open(w);
	tt_pb_text(w, DA_NAME, name);
	tt_pb_uint(w, kind, v);
	tt_pb_close(w, da, TE_DEBUG_ANNOTATIONS);
}

/* A mark's argument (decode.h): an integer, or a string. */
static void tt_pf_mark_arg(struct tt_buf *w, const struct tt_an_arg *a)
{
	size_t da = tt_pb_open(w);
	tt_pb_bytes(w, DA_NAME, a->key, strlen(a->key));
	if (a->text)
		tt_pb_text(w, DA_STRING, (struct tt_str){a->text, (uint32_t)strlen(a->text)});
	else
		tt_pb_uint(w, DA_INT, (uint64_t)a->number);
	tt_pb_close(w, da, TE_DEBUG_ANNOTATIONS);
}

/* Starts a packet written straight into the output buffer, on a thread's sequence:
 * the gap for its tag and length, the timestamp's delta, the sequence id and a
 * machine's but the first's id, in
 * `room` bytes reserved: the rooms of the packet's fields, summed at compile time. */
#define TT_PF_DIRECT_ROOM (PB_MESSAGE_ROOM + 3 * PB_UINT_ROOM)
_Static_assert(TT_PF_TAIL_ROOM <= 2 * PB_UINT_ROOM, "the tail's copy within the room");
static inline uint8_t *tt_pf_direct(struct tt_perfetto *p, struct tt_pf_seq *sq, int64_t rel_ts,
				    size_t room)
{
	int64_t ts = (int64_t)((uint64_t)p->base_ns + (uint64_t)rel_ts);
	tt_out_reserve(p->out, room);
	tt_out_unit(p->out);
	uint8_t *q = pb_open((uint8_t *)p->out->buf + p->out->len);
	q = pb_uint(q, PKT_TIMESTAMP, (uint64_t)ts - (uint64_t)sq->last);
	sq->last = ts;
	memcpy(q, sq->tail, TT_PF_TAIL_ROOM);
	return q + sq->tail_len;
}

/* Ends a packet begun by tt_pf_direct. */
static inline void tt_pf_direct_end(struct tt_perfetto *p, uint8_t *q)
{
	uint8_t *pk = (uint8_t *)p->out->buf + p->out->len;
	p->out->len += (size_t)(pb_close(pk, q, PB_TRACE_PACKET) - pk);
}

/* Whether tt_pf_plain can write the event: a site's slice begin or instant, its name
 * and location interned on the sequence already, no flag but an unnamed argument. */
static inline bool tt_pf_is_plain(const struct tt_pf_seq *sq, const struct tt_event *e)
{
	const struct tt_site *s = e->site;
	return s && (e->flags & ~(uint32_t)TT_EV_ARG) == 0 &&
	       (sq->interned[s->id / 8] >> (s->id % 8) & 1) &&
	       !((e->flags & TT_EV_ARG) && s->arg_name.len);
}

/* Most events (the same bytes tt_pf_event writes for them, in fewer instructions):
 * interned name and location, the category, the argument if any. */
#define TT_PF_PLAIN_ROOM                                                                   \
	(TT_PF_DIRECT_ROOM + PB_MESSAGE_ROOM + 4 * PB_UINT_ROOM +                            \
	 PB_MESSAGE_ROOM + PB_BYTES_ROOM(3) + PB_UINT_ROOM)
_Static_assert(TT_PF_NAMED_ROOM <= PB_MESSAGE_ROOM + 4 * PB_UINT_ROOM,
	       "the named event's copy within the room");
static inline __attribute__((always_inline)) void tt_pf_plain(struct tt_perfetto *p, struct tt_pf_seq *sq,
			       const struct tt_event *e, unsigned type)
{
	const struct tt_pf_named *n = &p->named[e->site->id];
	uint8_t *q = tt_pf_direct(p, sq, e->ts, TT_PF_PLAIN_ROOM);
	uint8_t *te = q;
	memcpy(q, n->b, TT_PF_NAMED_ROOM);
	q[TT_PF_NAMED_TYPE_AT] = (uint8_t)type;
	q += n->len;
	if (e->flags & TT_EV_ARG) {
		uint8_t *da = q;
		q = pb_open(q);
		q = pb_bytes(q, DA_NAME, "arg", 3);
		q = pb_uint(q, e->site->signed_arg ? DA_INT : DA_UINT, e->value);
		q = pb_close(da, q, TE_DEBUG_ANNOTATIONS);
		te[1] = (uint8_t)(q - (te + PB_GAP)); /* (below 128: one byte, as the template's) */
	}
	tt_pf_direct_end(p, q);
}

/* Builds and writes one event packet: type, then what the event carries; on the
 * event's thread's sequence unless `sq` is given (flows, frames), on its track unless
 * `track` is given (flows, frames). */
static int tt_pf_event(struct tt_perfetto *p, const struct tt_event *e, unsigned type,
		       uint64_t track, struct tt_pf_seq *sq)
{
	struct tt_pf_seq *th = sq ? sq : &p->threads[e->thread->id];
	const struct tt_site *s = e->site;
	enum tt_naming naming = tt_event_naming(e);
	struct tt_buf *w = &p->scratch;
	tt_pb_reset(w);
	tt_pf_head(w, p->base_ns, e, th);
	if (type != TYPE_SLICE_END && naming == TT_NAMED_BY_SITE &&
	    !(th->interned[s->id / 8] & (1u << (s->id % 8))))
		tt_pf_intern(th, s, w);
	size_t te = tt_pb_open(w);
	tt_pb_uint(w, TE_TYPE, type);
	if (track)
		tt_pb_uint(w, TE_TRACK_UUID, track);
	if (type != TYPE_SLICE_END) { /* named: an end closes the innermost slice */
		if (naming == TT_NAMED_BY_SITE) {
			tt_pb_uint(w, TE_NAME_IID, s->id + 1);
			tt_pb_uint(w, TE_SOURCE_LOCATION_IID, s->id + 1);
		} else {
			tt_pb_text(w, TE_NAME, tt_event_name(e));
		}
		tt_pb_uint(w, TE_CATEGORY_IIDS, TT_PB_CATEGORY_IID);
	}
	if (naming == TT_NAMED_FLOW) {
		tt_pb_fixed64(w, e->flags & TT_EV_FLOW_OUT ? TE_FLOW_IDS : TE_TERMINATING_FLOW_IDS,
			      e->link);
	} else if (type != TYPE_SLICE_END) {
		bool gap = e->flags & TT_EV_GAP; /* its argument: how many were lost */
		if (e->flags & TT_EV_ARG)
			tt_pf_number(w, gap ? (struct tt_str){"dropped", 7} :
					s && s->arg_name.len ? s->arg_name : (struct tt_str){"arg", 3},
				     s && s->signed_arg && !gap ? DA_INT : DA_UINT, e->value);
		if (naming == TT_NAMED_BY_TEXT)
			for (const struct tt_an_arg *a = e->args; a && a->key; a++)
				tt_pf_mark_arg(w, a);
		if (e->flags & TT_EV_UNBEGUN)
			tt_pf_flag(w, "unbegun", 7);
		if (e->flags & TT_EV_CLIPPED_BEGIN)
			tt_pf_flag(w, "clipped_begin", 13);
	}
	if (type != TYPE_SLICE_BEGIN) {
		/* end arguments are merged into the slice */
		if (e->flags & TT_EV_UNTERMINATED)
			tt_pf_flag(w, "unterminated", 12);
		if (e->flags & TT_EV_CLIPPED_END)
			tt_pf_flag(w, "clipped_end", 11);
		if (e->flags & TT_EV_SCOPE_VALUE)
			tt_pf_number(w, (struct tt_str){"value", 5}, DA_INT, (uint64_t)e->scope_value);
		if (e->flags & TT_EV_DESCRIBED) {
			size_t da = tt_pb_open(w);
			tt_pb_bytes(w, DA_NAME, "description", 11);
			tt_pb_bytes(w, DA_STRING, e->text, e->text_len);
			tt_pb_close(w, da, TE_DEBUG_ANNOTATIONS);
		}
	}
	tt_pb_close(w, te, PKT_TRACK_EVENT);
	return tt_pf_write(p, th->machine);
}

/* A slice begin or an instant on its thread's sequence. Inline: the plain case is
 * written in the caller, without a call's saves and restores. */
static inline __attribute__((always_inline)) int
tt_pf_site_event(struct tt_perfetto *p, struct tt_pf_seq *sq, const struct tt_event *e, unsigned type)
{
	if (__builtin_expect(tt_pf_is_plain(sq, e), 1)) {
		tt_pf_plain(p, sq, e, type);
		return 0;
	}
	return tt_pf_event(p, e, type, 0, NULL);
}

/* Writes what the thread holds: the slices begun at held_ts that are still open,
 * then the instants and zero-length slices in the order they ended. */
static int tt_pf_release(struct tt_perfetto *p, struct tt_pf_seq *sq)
{
	size_t n = sq->nheld;
	sq->nheld = 0;
	int rc = 0;
	if (sq->held_points < n) /* begins: none when it holds only instants, the usual case */
		for (size_t i = 0; i < n && rc == 0; i++)
			if (sq->held[i].kind == TT_HELD_BEGIN)
				rc = tt_pf_site_event(p, sq, &sq->held[i].e, TYPE_SLICE_BEGIN);
	if (sq->held_points) {
		sq->held_points = 0;
		for (size_t i = 0; i < n; i++)
			if (sq->held[i].kind == TT_HELD_POINT) {
				if (rc == 0)
					rc = tt_pf_site_event(p, sq, &sq->held[i].e, TYPE_INSTANT);
				free((char *)sq->held[i].e.text);
			}
	}
	if (sq->held_names) { /* rarely: only in old or damaged files */
		sq->held_names = 0;
		for (size_t i = 0; i < n; i++)
			if (tt_event_naming(&sq->held[i].e) == TT_NAMED_BY_FUNC)
				free((char *)sq->held[i].e.func_name.ptr);
	}
	return rc;
}

/* Before an event at `ts` on the thread: what it holds from an earlier time goes. */
static int tt_pf_advance(struct tt_perfetto *p, struct tt_pf_seq *sq, int64_t ts)
{
	return sq->nheld && ts > sq->held_ts ? tt_pf_release(p, sq) : 0;
}

static char *tt_memdup(const char *text, size_t n)
{
	char *copy = malloc(n ? n : 1);
	return copy ? memcpy(copy, text, n) : NULL;
}

static int tt_pf_hold(struct tt_pf_seq *sq, const struct tt_event *e, enum tt_pf_hold_kind kind)
{
	if (sq->nheld == sq->held_cap) {
		size_t cap = sq->held_cap ? 2 * sq->held_cap : 8;
		struct tt_pf_held *h = realloc(sq->held, cap * sizeof(*h));
		if (!h)
			return tt_error("out of memory");
		sq->held = h;
		sq->held_cap = cap;
	}
	struct tt_pf_held *h = &sq->held[sq->nheld];
	/* field by field: the decoder has just stored them, and a wide copy would stall
	 * on loads wider than those stores */
	h->e.thread = e->thread;
	h->e.site = e->site;
	h->e.func = e->func;
	h->e.ts = e->ts;
	h->e.dur = e->dur;
	h->e.value = e->value;
	h->e.depth = e->depth;
	h->e.flags = e->flags;
	h->e.text = NULL;
	h->e.text_len = e->text_len;
	h->e.scope_value = e->scope_value;
	h->e.func_name = (struct tt_str){0};
	h->kind = kind;
	/* a function no FUNCS section lists: its name is the decoder's only during the call */
	enum tt_naming naming = tt_event_naming(e);
	if (naming == TT_NAMED_BY_FUNC) {
		char *name = tt_memdup(e->func_name.ptr, e->func_name.len);
		if (!name)
			return tt_error("out of memory");
		h->e.func_name = (struct tt_str){name, e->func_name.len};
		sq->held_names++;
	} else if (naming == TT_NAMED_BY_TEXT) {
		h->e.args = e->args; /* (valid until the decoding ends) */
	}
	if (kind == TT_HELD_POINT) {
		sq->held_points++;
		if (naming == TT_NAMED_BY_TEXT && !(h->e.text = strdup(e->text)))
			return tt_error("out of memory");
		/* a zero-length slice's description, written with it as an instant */
		if ((e->flags & TT_EV_DESCRIBED) && !(h->e.text = tt_memdup(e->text, e->text_len)))
			return tt_error("out of memory");
	}
	sq->nheld++;
	sq->held_ts = e->ts;
	return 0;
}

/* The early instant taken back out of the output and held, as it would have been:
 * nothing was written after it (every callback settles it first). */
static __attribute__((noinline)) int tt_pf_unwrite(struct tt_perfetto *p)
{
	struct tt_pf_seq *sq = p->early.sq;
	p->early.sq = NULL;
	p->out->len = p->early.at;
	sq->last = p->early.last;
	struct tt_event e = {.thread = p->early.thread, .site = p->early.site, .ts = p->early.ts,
			     .value = p->early.value, .depth = p->early.depth,
			     .flags = p->early.flags};
	return tt_pf_hold(sq, &e, TT_HELD_POINT);
}

/* First in every callback: an early instant stays written when the callback is one
 * that would have released it, held alone, before writing anything (`releases`: an
 * event of its sequence after its time, or its thread's flow or end); else it is
 * held, and the callback goes on as if it never was written. */
static inline int tt_pf_settle(struct tt_perfetto *p, const struct tt_pf_seq *sq, bool releases)
{
	if (__builtin_expect(p->early.sq == NULL, 1))
		return 0;
	if (p->early.sq == sq && releases) {
		p->early.sq = NULL;
		return 0;
	}
	return tt_pf_unwrite(p);
}

static int tt_pf_slice_begin(struct tt_sink *sink, const struct tt_event *e)
{
	struct tt_perfetto *p = (struct tt_perfetto *)sink;
	struct tt_pf_seq *sq = &p->threads[e->thread->id];
	if (tt_pf_settle(p, sq, e->depth < TT_MAX_SHOWN_DEPTH && e->ts > p->early.ts) < 0)
		return -1;
	if (e->depth >= TT_MAX_SHOWN_DEPTH) /* counted at its end */
		return 0;
	if (tt_pf_advance(p, sq, e->ts) < 0)
		return -1;
	/* Held when it may end where it begins, before a slice that begins there too:
	 * with something else at its time, or begun or ended by the decoder (a ring's
	 * first record, a run of lost events, the thread's last time, where the decoder
	 * closes what is open: a snapshot's window ends inside scopes). Two scopes begun
	 * and one ended within one ns of the clock otherwise are not, which real timings
	 * do not produce. */
	if (sq->nheld || (e->flags & (TT_EV_UNBEGUN | TT_EV_GAP)) || e->ts == sq->end_ts)
		return tt_pf_hold(sq, e, TT_HELD_BEGIN);
	return tt_pf_site_event(p, sq, e, TYPE_SLICE_BEGIN);
}

/* A slice's end while the thread holds events: held as an instant when it ends
 * where its held begin is (1), or written after what is held when its time is
 * later (0); -1 on error. Apart: the thread usually holds nothing. */
static int tt_pf_end_held(struct tt_perfetto *p, struct tt_pf_seq *sq, const struct tt_event *e)
{
	if (e->dur == 0 && e->ts == sq->held_ts) {
		/* its begin is held: the innermost one still open */
		size_t i = sq->nheld;
		while (i > 0 && sq->held[i - 1].kind != TT_HELD_BEGIN)
			i--;
		if (i > 0) {
			sq->held[i - 1].kind = TT_HELD_GONE;
			return tt_pf_hold(sq, e, TT_HELD_POINT) < 0 ? -1 : 1;
		}
	}
	return tt_pf_advance(p, sq, e->ts + e->dur);
}

/* SLICE_END needs no name and no interned data: it closes the innermost slice of
 * the thread's track. The common one is five fields, written directly. A slice that
 * ends when it began is held as an instant instead. */
static int tt_pf_slice_end(struct tt_sink *sink, const struct tt_event *e)
{
	struct tt_perfetto *p = (struct tt_perfetto *)sink;
	struct tt_pf_seq *sq = &p->threads[e->thread->id];
	bool too_deep = tt_too_deep(e, &p->folded.slices);
	if (tt_pf_settle(p, sq, !too_deep && e->ts + e->dur > p->early.ts) < 0)
		return -1;
	if (too_deep)
		return 0;
	if (__builtin_expect(sq->nheld != 0, 0)) {
		int rc = tt_pf_end_held(p, sq, e);
		if (rc != 0)
			return rc < 0 ? -1 : 0;
	}
	if (e->flags & (TT_EV_UNTERMINATED | TT_EV_DESCRIBED | TT_EV_SCOPE_VALUE |
			TT_EV_CLIPPED_END)) {
		struct tt_event end = *e;
		end.ts = e->ts + e->dur;
		return tt_pf_event(p, &end, TYPE_SLICE_END, 0, NULL);
	}
	uint8_t *q = tt_pf_direct(p, sq, e->ts + e->dur, TT_PF_DIRECT_ROOM + 4);
	*q++ = PKT_TRACK_EVENT << 3 | WT_LEN;
	*q++ = 2;
	*q++ = TE_TYPE << 3 | WT_VARINT;
	*q++ = TYPE_SLICE_END;
	tt_pf_direct_end(p, q);
	return 0;
}

static int tt_pf_instant(struct tt_sink *sink, const struct tt_event *e)
{
	struct tt_perfetto *p = (struct tt_perfetto *)sink;
	struct tt_pf_seq *sq = &p->threads[e->thread->id];
	bool too_deep = tt_too_deep(e, &p->folded.instants);
	if (tt_pf_settle(p, sq, !too_deep && e->ts > p->early.ts) < 0)
		return -1;
	if (too_deep)
		return 0;
	if (tt_pf_advance(p, sq, e->ts) < 0)
		return -1;
	if (sq->nheld || !tt_pf_is_plain(sq, e))
		return tt_pf_hold(sq, e, TT_HELD_POINT);
	/* Held, it would be written first thing at the thread's next event, if that is
	 * later (nearly always): written now, early, and taken back otherwise. */
	tt_out_reserve(p->out, TT_PF_PLAIN_ROOM);
	p->early = (struct tt_pf_early){
		.sq = sq, .thread = e->thread, .site = e->site, .ts = e->ts, .last = sq->last,
		.value = e->value, .depth = e->depth, .flags = e->flags, .at = p->out->len,
	};
	tt_pf_plain(p, sq, e, TYPE_INSTANT);
	return 0;
}

/* Flows come late (at the end of the decoder's window, when the thread has no more
 * events at their time): on their own sequence, with absolute timestamps, on the
 * thread's track, after what the thread holds. */
static int tt_pf_flow(struct tt_sink *sink, const struct tt_event *e)
{
	struct tt_perfetto *p = (struct tt_perfetto *)sink;
	struct tt_pf_seq *sq = &p->threads[e->thread->id];
	bool too_deep = tt_too_deep(e, &p->folded.flows);
	if (tt_pf_settle(p, sq, !too_deep) < 0)
		return -1;
	if (too_deep)
		return 0;
	if (sq->nheld && tt_pf_release(p, sq) < 0)
		return -1;
	return tt_pf_event(p, e, TYPE_INSTANT, sq->track, &p->flows[sq->machine]);
}

static int tt_pf_thread_end(struct tt_sink *sink, const struct tt_thread *t,
			    const struct tt_thread_summary *sum)
{
	(void)sum;
	struct tt_perfetto *p = (struct tt_perfetto *)sink;
	if (tt_pf_settle(p, &p->threads[t->id], true) < 0)
		return -1;
	return tt_pf_release(p, &p->threads[t->id]);
}

static int tt_pf_finish(struct tt_sink *sink, const struct tt_summary *sum)
{
	(void)sum;
	struct tt_perfetto *p = (struct tt_perfetto *)sink;
	if (tt_pf_settle(p, NULL, false) < 0)
		return -1;
	char folded[256];
	if (tt_folded_message(&p->folded, folded, sizeof(folded)))
		tt_warn("%s", folded);
	return p->trace->states_at_finish ? tt_pf_states(p->out, &p->scratch, p->trace, p->boot_offset + p->shift_ns) : 0;
}

/* Counters go on a track per process and name, described at first use. Its uuid is
 * the site's number (+ 1), a byte or two in every counter event: below 2^40, where
 * the processes' and threads' begin. */
static int tt_pf_counter(struct tt_sink *sink, const struct tt_event *e)
{
	struct tt_perfetto *p = (struct tt_perfetto *)sink;
	const struct tt_site *s = e->site;
	/* (a new counter's track is described before what the thread holds is written) */
	if (tt_pf_settle(p, &p->threads[e->thread->id],
			 p->counter_uuid[s->id] && e->ts > p->early.ts) < 0)
		return -1;
	if (!p->counter_uuid[s->id]) {
		p->counter_uuid[s->id] = (uint64_t)s->id + 1;
		if (tt_pf_descriptor(p, e->thread->file->machine_index, p->counter_uuid[s->id],
				     tt_pf_process_uuid(e->thread->file->index), TD_COUNTER, 0, 0, s->name) < 0)
			return -1;
	}
	/* on the thread's sequence, whose timestamps only go forward */
	struct tt_pf_seq *sq = &p->threads[e->thread->id];
	if (tt_pf_advance(p, sq, e->ts) < 0)
		return -1;
	uint8_t *q = tt_pf_direct(p, sq, e->ts,
				  TT_PF_DIRECT_ROOM + PB_MESSAGE_ROOM + 3 * PB_UINT_ROOM);
	uint8_t *te = q;
	q = pb_open(q);
	q = pb_uint(q, TE_TYPE, TYPE_COUNTER);
	q = pb_uint(q, TE_TRACK_UUID, p->counter_uuid[s->id]);
	q = pb_uint(q, TE_COUNTER_VALUE, e->value);
	tt_pf_direct_end(p, pb_close(te, q, PKT_TRACK_EVENT));
	return 0;
}

/* A frame boundary: the frame that ended is a slice "NAME N" on a thread of the
 * process's own (TT_FRAMES_TID, as in JSON), described at its first frame; on the
 * flows' sequence, whose timestamps are absolute. */
static int tt_pf_frame(struct tt_sink *sink, const struct tt_event *e)
{
	struct tt_perfetto *p = (struct tt_perfetto *)sink;
	if (tt_pf_settle(p, NULL, false) < 0)
		return -1;
	if (e->value < 2)
		return 0;
	uint64_t uuid = UINT64_C(3) << 62 | e->func;
	if (e->func >= p->frame_tracks) {
		if (tt_pf_descriptor(p, e->thread->file->machine_index, uuid,
				     tt_pf_process_uuid(e->thread->file->index), TD_THREAD,
				     e->thread->file->process.pid, TT_FRAMES_TID(e->func), e->site->name) < 0)
			return -1;
		p->frame_tracks = e->func + 1;
	}
	char name[128];
	snprintf(name, sizeof name, "%.*s %" PRIu64, (int)(e->site->name.len > 96 ? 96 : e->site->name.len),
			 e->site->name.ptr, e->value - 1);
	struct tt_event begin = {.thread = e->thread, .ts = e->ts - e->dur, .flags = TT_EV_NAMED,
				 .text = name};
	struct tt_event end = {.thread = e->thread, .ts = e->ts};
	struct tt_pf_seq *flows = &p->flows[e->thread->file->machine_index];
	if (tt_pf_event(p, &begin, TYPE_SLICE_BEGIN, uuid, flows) < 0)
		return -1;
	return tt_pf_event(p, &end, TYPE_SLICE_END, uuid, flows);
}

static void tt_pf_destroy(struct tt_sink *sink)
{
	struct tt_perfetto *p = (struct tt_perfetto *)sink;
	if (p->threads && p->trace)
		for (size_t i = 0; i < p->trace->nthreads; i++) {
			struct tt_pf_seq *sq = &p->threads[i];
			for (size_t k = 0; k < sq->nheld; k++) {
				free((char *)sq->held[k].e.text);
				if (tt_event_naming(&sq->held[k].e) == TT_NAMED_BY_FUNC)
					free((char *)sq->held[k].e.func_name.ptr);
			}
			free(sq->held);
			free(sq->interned);
		}
	free(p->threads);
	free(p->flows);
	free(p->counter_uuid);
	free(p->named);
	free(p->scratch.p);
	free(p);
}

static const struct tt_sink_ops tt_perfetto_ops = {
	.start = tt_pf_start,
	.slice_begin = tt_pf_slice_begin,
	.slice_end = tt_pf_slice_end,
	.instant = tt_pf_instant,
	.counter = tt_pf_counter,
	.flow = tt_pf_flow,
	.thread_end = tt_pf_thread_end,
	.finish = tt_pf_finish,
	.frame = tt_pf_frame,
	.destroy = tt_pf_destroy,
};

struct tt_sink *tt_perfetto_sink_new(struct tt_out *out)
{
	struct tt_perfetto *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->sink.ops = &tt_perfetto_ops;
	p->out = out;
	return &p->sink;
}
