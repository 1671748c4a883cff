/* `ticktrace report`, `ticktrace spikes` and convert's spike marks: one sink turns
 * the decoder's events into the calls of the analysis library that the runtime
 * shares (src/common/analysis/analysis.h), one per thread. */
#include "report.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>


/* ---- thresholds ---- */

bool tt_thresholds_given(const struct tt_thresholds *th)
{
	return th->global != TT_AN_NO_THRESHOLD || th->file;
}

void tt_thresholds_free(struct tt_thresholds *th)
{
	struct tt_an_thresholds table = {th->rules, th->nrules, th->text};
	tt_an_thresholds_free(&table);
	th->rules = NULL;
	th->nrules = 0;
	th->text = NULL;
}

int tt_thresholds_load(struct tt_thresholds *th)
{
	if (!th->file)
		return 0;
	struct tt_an_thresholds table;
	struct tt_an_thresholds_problem problem;
	if (tt_an_thresholds_load(&table, th->file, &problem) < 0) {
		char why[512];
		tt_error("%s: %s", th->file, tt_an_thresholds_problem_text(&problem, why, sizeof why));
		tt_an_thresholds_free(&table);
		return -1;
	}
	th->rules = table.rules;
	th->nrules = table.nrules;
	th->text = table.text;
	return 0;
}

/* ---- the sink ---- */

struct tt_ps_sink {
	struct tt_sink sink;
	struct tt_sink *inner; /* convert: the writer, which gets every event and the marks */
	const struct tt_trace *trace;
	const struct tt_filter *filter; /* NULL: every thread's */
	struct tt_an an;
	struct tt_an_thread *threads; /* by thread id */
	struct tt_an_thread **list;   /* the same, for tt_an_table_build */
	size_t nthreads;
	FILE *out;                           /* spikes, as they come */
	enum tt_report_format format;
	uint64_t threshold_notes;            /* TT_THRESHOLD_NS and TT_CHILDREN_THRESHOLD_NS */
	struct tt_summary sum;
	struct tt_frame_stats *frames;       /* report --frames */
	/* Functions no FUNCS section lists: address -> offset of the name the decoder
	 * gave their slices, in names (NUL-terminated), for the table printed after. */
	struct tt_map func_names;
	struct tt_buf names;
	/* spikes of snapshots: each file's snapshot spike, by file (NULL: not a spike's) */
	struct tt_snap_spike *snaps;
	struct tt_sink_ops snap_ops; /* spikes of a trace with snapshots: tt_ps_ops but one */
	struct tt_spike_args *mark_args; /* convert's marks': valid until the decoding ends */
};

/* A spike mark's arguments (convert --threshold), as a snapshot's mark has them. */
#define TT_SPIKE_ARGS (10 + TT_AN_CAUSES_ARGS)
struct tt_spike_args {
	struct tt_spike_args *next;
	struct tt_an_arg args[TT_SPIKE_ARGS + 1]; /* (the last with no key) */
	/* without a split: why; with one leaving time unknown, why (an argument's text) */
	char no_split[TT_AN_NO_SPLIT_TEXT];
};

/* A snapshot's spike (the one its runtime wrote it for): `spikes` reports it as the
 * snapshot's, whatever thresholds are given; its scope is given the snapshot's
 * threshold when it opens, so that the analysis finds it with its stack and split. */
struct tt_snap_spike {
	const struct tt_snapshot *snapshot;
	const struct tt_file *file;
	int64_t begin, end; /* ns since the trace start */
	bool reported;
};

/* A function that a FUNCS section lists is keyed by its site (one per library that
 * held its address: two may share it, one unloaded before the other was loaded);
 * one that none lists, by its address. */
#define TT_KEY_FUNC_SITE (UINT64_C(1) << 62)

static size_t tt_ps_name(void *ctx, const struct tt_an_thread *th, uint64_t key, char *buf,
			 size_t cap)
{
	struct tt_ps_sink *a = ctx;
	(void)th;
	uint32_t at;
	if ((key & TT_KEY_FUNC) && !(key & TT_KEY_FUNC_SITE)) {
		int n = snprintf(buf, cap, "%s", tt_map_get(&a->func_names, key & ~TT_KEY_FUNC, &at) ?
							 a->names.p + at : "?");
		return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
	}
	const struct tt_site *s = (const struct tt_site *)(uintptr_t)(key & ~(TT_KEY_FUNC | TT_KEY_FUNC_SITE));
	size_t n = s->name.len < cap - 1 ? s->name.len : cap - 1;
	memcpy(buf, s->name.ptr, n);
	buf[n] = 0;
	return n;
}

static uint64_t tt_ps_key(const struct tt_event *e)
{
	if (!(e->flags & TT_EV_FUNC))
		return (uint64_t)(uintptr_t)e->site;
	return TT_KEY_FUNC | (e->site ? TT_KEY_FUNC_SITE | (uint64_t)(uintptr_t)e->site : e->func);
}

#define TT_FORWARD(a, op, ...)                                                     \
	((a)->inner && (a)->inner->ops->op ? (a)->inner->ops->op((a)->inner, __VA_ARGS__) : 0)

static int tt_ps_failed(struct tt_ps_sink *a);

/* The spikes the trace's snapshots were written for. */
static int tt_ps_snapshots(struct tt_ps_sink *a, const struct tt_trace *t)
{
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tt_file *f = &t->files[i];
		const struct tt_snapshot *snap = f->snapshot;
		if (!snap || snap->info.kind != TT_SNAPSHOT_SPIKE)
			continue;
		if (!a->snaps && !(a->snaps = calloc(t->nfiles, sizeof(*a->snaps))))
			return tt_error("out of memory");
		a->snaps[i] = (struct tt_snap_spike){
			.snapshot = snap, .file = f,
			.begin = tt_rebase(tt_clock_ns(&f->clock, snap->info.begin_tsc), t->base_ns),
			.end = tt_rebase(tt_clock_ns(&f->clock, snap->info.end_tsc), t->base_ns),
		};
	}
	return 0;
}

/* The snapshot spike `s` is, or NULL: a spike of its thread that began and ended
 * where it did (decode.h: TT_MARK_SLACK_NS). */
static struct tt_snap_spike *tt_ps_snap_of(const struct tt_ps_sink *a, const struct tt_an_spike *s)
{
	const struct tt_thread *t = s->thread->ctx;
	struct tt_snap_spike *snap = a->snaps ? &a->snaps[t->file - a->trace->files] : NULL;
	return snap && snap->snapshot && snap->snapshot->thread == t && !snap->reported &&
			       tt_mark_near(snap->begin, s->start) && tt_mark_near(snap->end, s->start + s->dur) ?
		       snap : NULL;
}

/* A scope opens where a snapshot's spike began, on its thread, with its name (a
 * function's: any): it takes the snapshot's threshold. Short scopes of its name may
 * begin as near: they take it too, and are no spike. */
static int tt_ps_snap_open(struct tt_ps_sink *a, const struct tt_event *e)
{
	struct tt_snap_spike *snap = &a->snaps[e->thread->file - a->trace->files];
	const struct tt_snapshot *ss = snap->snapshot;
	if (!ss || ss->thread != e->thread || !tt_mark_near(snap->begin, e->ts) ||
	    (e->site && !e->site->is_func &&
	     (e->site->name.len != ss->name.len || memcmp(e->site->name.ptr, ss->name.ptr, ss->name.len))))
		return 0;
	return tt_an_scope_note(&a->threads[e->thread->id], TT_REC_THRESHOLD,
			      (uint64_t)ss->info.threshold_ns, NULL, 0) < 0 ? tt_ps_failed(a) : 0;
}

static int tt_ps_start(struct tt_sink *s, const struct tt_trace *t)
{
	struct tt_ps_sink *a = (struct tt_ps_sink *)s;
	a->trace = t;
	a->threads = calloc(t->nthreads ? t->nthreads : 1, sizeof(*a->threads));
	a->list = calloc(t->nthreads ? t->nthreads : 1, sizeof(*a->list));
	if (!a->threads || !a->list)
		return tt_error("out of memory for %zu threads", t->nthreads);
	a->nthreads = t->nthreads;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tt_file *f = &t->files[i];
		for (size_t k = 0; k < f->nthreads; k++) {
			const struct tt_thread *th = &f->threads[k];
			struct tt_an_thread *ta = &a->threads[th->id];
			tt_an_thread_init(ta, &a->an, (void *)th);
			ta->pid = f->process.pid;
			ta->tid = th->tid;
			ta->name = th->name.ptr;
			ta->name_len = th->name.len;
			ta->no_states = th->flags;
			a->list[th->id] = ta;
			/* (the reader marks lost states: TT_SCHED_UNKNOWN) */
			if ((th->flags & TT_THREAD_SCHED) &&
			    tt_an_thread_states(ta, th->states, th->nstates, t->base_ns) < 0)
				return tt_ps_failed(a);
			/* (a file's states hold every switch until the thread's exit) */
			if (th->exited_ns)
				ta->states.complete_ns = th->exited_ns - t->base_ns;
			if (th->has_counters && tt_an_thread_counters(ta, th->counters, th->ncounters,
								      th->counters_flags, t->base_ns) < 0)
				return tt_ps_failed(a);
			tt_an_thread_tick(ta, &f->machine);
		}
	}
	if (a->an.find_spikes && tt_ps_snapshots(a, t) < 0)
		return -1;
	return TT_FORWARD(a, start, t);
}

static int tt_ps_failed(struct tt_ps_sink *a)
{
	return a->an.oom ? tt_error("out of memory for the analysis") : -1;
}

/* Keeps the name of a function no FUNCS section lists, the first time it opens. */
static int tt_ps_keep_func_name(struct tt_ps_sink *a, const struct tt_event *e)
{
	uint32_t at;
	if (tt_map_get(&a->func_names, e->func, &at))
		return 0;
	at = (uint32_t)a->names.len;
	struct tt_str name = tt_event_name(e);
	tt_buf_add(&a->names, name.ptr, name.len);
	tt_buf_add(&a->names, "", 1);
	return a->names.oom || tt_map_put(&a->func_names, e->func, at) < 0 ? tt_error("out of memory") : 0;
}

static int tt_ps_slice_begin(struct tt_sink *s, const struct tt_event *e)
{
	struct tt_ps_sink *a = (struct tt_ps_sink *)s;
	if (tt_event_naming(e) == TT_NAMED_BY_FUNC && tt_ps_keep_func_name(a, e) < 0)
		return -1;
	struct tt_an_thread *th = &a->threads[e->thread->id];
	th->start_early = e->flags & TT_EV_UNBEGUN ? e->early : 0;
	int rc = tt_an_scope_open(th, tt_ps_key(e), e->ts);
	th->start_early = 0;
	if (rc < 0)
		return tt_ps_failed(a);
	return TT_FORWARD(a, slice_begin, e);
}

static int tt_ps_slice_end(struct tt_sink *s, const struct tt_event *e)
{
	struct tt_ps_sink *a = (struct tt_ps_sink *)s;
	if (TT_FORWARD(a, slice_end, e) < 0)
		return -1;
	struct tt_an_thread *th = &a->threads[e->thread->id];
	th->end_late = e->flags & TT_EV_UNTERMINATED ? e->late : 0;
	int rc = tt_an_scope_close(th, e->ts + e->dur);
	th->end_late = 0;
	return rc < 0 ? tt_ps_failed(a) : 0;
}

static int tt_ps_note(struct tt_sink *s, const struct tt_event *e)
{
	struct tt_ps_sink *a = (struct tt_ps_sink *)s;
	static const unsigned kinds[][2] = {
		{TT_EV_THRESHOLD, TT_REC_THRESHOLD}, {TT_EV_CHILDREN_THRESHOLD, TT_REC_CHILDREN_THRESHOLD},
		{TT_EV_IGNORE, TT_REC_IGNORE},       {TT_EV_IGNORE_CHILDREN, TT_REC_IGNORE_CHILDREN},
		{TT_EV_DESCRIBE, TT_REC_DESCRIBE}, {TT_EV_PARENTS_THRESHOLD, TT_REC_PARENTS_THRESHOLD},
	};
	unsigned kind = 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (e->flags & kinds[i][0])
			kind = kinds[i][1];
	a->threshold_notes += kind == TT_REC_THRESHOLD || kind == TT_REC_CHILDREN_THRESHOLD ||
			      kind == TT_REC_PARENTS_THRESHOLD;
	size_t len = kind == TT_REC_DESCRIBE ? (size_t)e->value : 0;
	if (tt_an_scope_note(&a->threads[e->thread->id], kind, e->value, e->text, len) < 0)
		return tt_ps_failed(a);
	return TT_FORWARD(a, note, e);
}

static int tt_ps_frame(struct tt_sink *s, const struct tt_event *e)
{
	struct tt_ps_sink *a = (struct tt_ps_sink *)s;
	tt_an_frame_mark(&a->an, e->func, e->ts);
	if (a->frames)
		tt_frames_mark(a->frames, e);
	return TT_FORWARD(a, frame, e);
}

static int tt_ps_instant(struct tt_sink *s, const struct tt_event *e)
{
	return TT_FORWARD((struct tt_ps_sink *)s, instant, e);
}

static int tt_ps_counter(struct tt_sink *s, const struct tt_event *e)
{
	return TT_FORWARD((struct tt_ps_sink *)s, counter, e);
}

static int tt_ps_flow(struct tt_sink *s, const struct tt_event *e)
{
	return TT_FORWARD((struct tt_ps_sink *)s, flow, e);
}

static int tt_ps_thread_end(struct tt_sink *s, const struct tt_thread *t,
			    const struct tt_thread_summary *sum)
{
	return TT_FORWARD((struct tt_ps_sink *)s, thread_end, t, sum);
}

static int tt_ps_advance(struct tt_sink *s, int64_t ts, const struct tt_summary *so_far)
{
	return TT_FORWARD((struct tt_ps_sink *)s, advance, ts, so_far);
}

static void tt_ps_warning(struct tt_sink *s, const char *message)
{
	struct tt_ps_sink *a = (struct tt_ps_sink *)s;
	/* (alone, for report and spikes: the pipeline prints them) */
	if (a->inner && a->inner->ops->warning)
		a->inner->ops->warning(a->inner, message);
}

static int tt_ps_finish(struct tt_sink *s, const struct tt_summary *sum)
{
	struct tt_ps_sink *a = (struct tt_ps_sink *)s;
	a->sum = *sum;
	return TT_FORWARD(a, finish, sum);
}

static void tt_ps_destroy(struct tt_sink *s)
{
	struct tt_ps_sink *a = (struct tt_ps_sink *)s;
	for (size_t i = 0; i < a->nthreads; i++) /* the trace may be closed by now */
		tt_an_thread_free(&a->threads[i]);
	free(a->threads);
	free(a->list);
	tt_map_free(&a->func_names);
	tt_buf_free(&a->names);
	free(a->snaps);
	for (struct tt_spike_args *m = a->mark_args, *next; m; m = next) {
		next = m->next;
		free(m);
	}
	free(a);
}

/* spikes of a trace with snapshots: a snapshot's spike takes its threshold as it opens */
static int tt_ps_slice_begin_snap(struct tt_sink *s, const struct tt_event *e)
{
	return tt_ps_slice_begin(s, e) < 0 ? -1 : tt_ps_snap_open((struct tt_ps_sink *)s, e);
}

/* report and spikes: no sink inside, so only what the analysis takes */
static const struct tt_sink_ops tt_ps_ops = {
	.start = tt_ps_start,
	.slice_begin = tt_ps_slice_begin,
	.slice_end = tt_ps_slice_end,
	.note = tt_ps_note,
	.frame = tt_ps_frame,
	.warning = tt_ps_warning,
	.finish = tt_ps_finish,
	.destroy = tt_ps_destroy,
};

/* convert: everything, passed on */
static const struct tt_sink_ops tt_ps_wrap_ops = {
	.start = tt_ps_start,
	.slice_begin = tt_ps_slice_begin,
	.slice_end = tt_ps_slice_end,
	.instant = tt_ps_instant,
	.counter = tt_ps_counter,
	.flow = tt_ps_flow,
	.note = tt_ps_note,
	.frame = tt_ps_frame,
	.thread_end = tt_ps_thread_end,
	.advance = tt_ps_advance,
	.warning = tt_ps_warning,
	.finish = tt_ps_finish,
	.destroy = tt_ps_destroy,
};

static struct tt_ps_sink *tt_ps_new(struct tt_sink *inner, const struct tt_thresholds *th)
{
	struct tt_ps_sink *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->sink.ops = inner ? &tt_ps_wrap_ops : &tt_ps_ops;
	a->inner = inner;
	a->an = (struct tt_an){
		.threshold = th ? th->global : TT_AN_NO_THRESHOLD,
		.rules = th ? th->rules : NULL,
		.nrules = th ? th->nrules : 0,
		.name = tt_ps_name,
		.ctx = a,
	};
	return a;
}

/* ---- output ---- */

/* ---- report ---- */

void tt_json_add_text(cJSON *obj, const char *key, const char *text, size_t n)
{
	char *clean = malloc(3 * n + 1);
	if (!clean)
		return;
	clean[tt_utf8_clean(text, strnlen(text, n), clean)] = 0;
	cJSON_AddStringToObject(obj, key, clean);
	free(clean);
}

static void tt_json_thread_fields(cJSON *obj, const struct tt_an_thread *th)
{
	cJSON_AddNumberToObject(obj, "pid", th->pid);
	cJSON_AddNumberToObject(obj, "tid", th->tid);
	tt_json_add_text(obj, "thread", th->name ? th->name : "", th->name ? th->name_len : 0);
}

static cJSON *tt_table_json(const struct tt_an_table *t, const struct tt_ps_sink *a,
			    const struct tt_report_opts *o)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddNumberToObject(root, "threads", (double)t->threads);
	cJSON_AddNumberToObject(root, "events", (double)a->sum.events);
	cJSON_AddNumberToObject(root, "dropped", (double)a->sum.dropped);
	cJSON_AddNumberToObject(root, "unterminated", (double)a->sum.unterminated);
	cJSON_AddStringToObject(root, "sort", tt_an_sort_name(o->sort));
	char why[TT_SCHED_NONE_TEXT];
	if (!t->split && t->no_states) /* (the table's line under it) */
		cJSON_AddStringToObject(root, "no_split", tt_sched_none_text(t->no_states->no_states, why,
									    sizeof why));
	cJSON_AddBoolToObject(root, "by_thread", o->by_thread);
	cJSON_AddStringToObject(root, "percentiles", "nearest rank, from a log-linear histogram: "
				"within 1/64 of the exact value");
	cJSON_AddNumberToObject(root, "call_overhead_ns", (double)t->overhead_ns);
	cJSON *rows = cJSON_AddArrayToObject(root, "rows");
	for (size_t i = 0; rows && i < t->n; i++) {
		const struct tt_an_entry *e = &t->entries[i];
		cJSON *row = cJSON_CreateObject();
		if (e->thread)
			tt_json_thread_fields(row, e->thread);
		tt_json_add_text(row, "name", e->name, strlen(e->name));
		const struct {
			const char *key;
			double v;
		} fields[] = {
			{"calls", (double)e->calls}, {"total_ns", (double)e->total},
			{"self_ns", (double)e->self}, {"children_ns", (double)e->children},
			{"min_ns", (double)e->min}, {"max_ns", (double)e->max}, {"mean_ns", (double)e->mean},
			{"p50_ns", (double)e->p50}, {"p95_ns", (double)e->p95}, {"p99_ns", (double)e->p99},
			{"erased_calls", (double)e->filtered}, {"erased_ns", (double)e->filtered_ns},
		};
		for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
			cJSON_AddNumberToObject(row, fields[f].key, fields[f].v);
		if (e->near_overhead)
			cJSON_AddBoolToObject(row, "near_overhead", true);
		if (e->split) { /* of total_ns, where its threads' states tell; the rest unknown */
			cJSON_AddNumberToObject(row, "on_cpu_ns", (double)e->on_cpu);
			cJSON_AddNumberToObject(row, "off_cpu_ns", (double)e->off_cpu);
			cJSON_AddNumberToObject(row, "preempted_ns", (double)e->preempted);
			cJSON_AddNumberToObject(row, "blocked_ns", (double)e->blocked);
			cJSON_AddNumberToObject(row, "unknown_ns", (double)e->unknown);
			if (e->approximate)
				cJSON_AddStringToObject(row, "causes_from", e->approximate ==
					TT_AN_APPROX_THREAD_TIMES ? "thread-times" : "schedstat");
		}
		cJSON_AddItemToArray(rows, row);
	}
	return root;
}

/* cJSON's text on its own line; -1 when cJSON ran out of memory. */
static int tt_print_json(FILE *out, cJSON *root)
{
	char *text = root ? cJSON_PrintUnformatted(root) : NULL;
	cJSON_Delete(root);
	if (!text)
		return tt_error("out of memory");
	fputs(text, out);
	fputc('\n', out);
	free(text);
	return 0;
}

static void tt_ps_closed(void *ctx, const struct tt_an_thread *th, uint64_t key, int64_t self)
{
	struct tt_ps_sink *a = ctx;
	tt_frames_scope(a->frames, th, key, self);
}

/* The calls TICKTRACE_MIN_DUR erased as they returned (FILTERED sections), into their
 * functions' rows: the profile adds up. With `dropped`, the calls dropped with a
 * buffer used up (DROPPED_CALLS sections) too, counted apart (`spikes --suggest`
 * ranks the whole run's calls). */
static int tt_ps_filtered(struct tt_ps_sink *a, bool dropped)
{
	const struct tt_trace *trace = a->trace;
	for (size_t f = 0; f < trace->nfiles; f++)
		for (size_t i = 0; i < trace->files[f].nthreads; i++) {
			const struct tt_thread *t = &trace->files[f].threads[i];
			/* (--thread: the chosen threads' alone, as their events) */
			struct tt_an_thread *th = !a->filter || tt_filter_keeps_thread(a->filter, t) ?
							  a->list[t->id] : NULL;
			size_t nfiltered = t->nfiltered, n = nfiltered + (dropped ? t->ndropped_calls : 0);
			for (size_t k = 0; th && k < n; k++) {
				const struct tt_filtered_fn *fn =
					k < nfiltered ? &t->filtered[k] : &t->dropped_calls[k - nfiltered];
				const struct tt_site *s = tt_file_site_last(t->file, fn->address);
				uint64_t key = TT_KEY_FUNC | (s && s->is_func ? TT_KEY_FUNC_SITE |
							      (uint64_t)(uintptr_t)s : fn->address);
				if ((k < nfiltered ? tt_an_add_filtered(th, key, fn->calls,
									tt_clock_span(&t->file->clock, fn->ticks))
						   : tt_an_add_dropped(th, key, fn->calls)) < 0)
					return tt_error("out of memory for the filtered calls");
			}
		}
	return 0;
}

/* The functions the run turned off (TURNED_OFF sections), each with the calls its
 * threads erased before and when: what the table cannot count is said. */
static void tt_ps_turned_off(const struct tt_ps_sink *a)
{
	const struct tt_trace *trace = a->trace;
	for (size_t f = 0; f < trace->nfiles; f++) {
		const struct tt_file *file = &trace->files[f];
		size_t n = file->nturned_off + file->turned_off_info.not_written;
		if (!n)
			continue;
		fprintf(a->out, "%s: %zu function%s turned off as the run went, each once a thread's "
			"TICKTRACE_MIN_DUR had erased %" PRIu64 " of its calls; their later calls were not "
			"recorded nor counted (TICKTRACE_TURN_OFF=0: never)%s\n", file->path, n, n == 1 ? "" : "s",
			file->turned_off_info.after_calls, file->nturned_off ? ":" : "");
		for (size_t k = 0; k < file->nturned_off; k++) {
			const struct tt_turned_off_fn *fn = &file->turned_off[k];
			uint64_t erased = 0;
			for (size_t i = 0; i < file->nthreads; i++)
				for (size_t j = 0; j < file->threads[i].nfiltered; j++)
					if (file->threads[i].filtered[j].address == fn->address)
						erased += file->threads[i].filtered[j].calls;
			const struct tt_site *s = tt_file_site(file, fn->address, UINT64_MAX - 1);
			/* (before the file's anchor: a forked child's parent turned it off) */
			char at[48] = "before this process began";
			if (fn->tsc >= file->clock.tsc0) {
				memcpy(at, "at ", 3);
				tt_an_fmt_ns(at + 3, tt_clock_ns(&file->clock, fn->tsc) - trace->base_ns);
			}
			if (s)
				fprintf(a->out, "  %.*s", (int)s->name.len, s->name.ptr);
			else
				fprintf(a->out, "  0x%" PRIx64, fn->address);
			fprintf(a->out, ": filtered %" PRIu64 " calls before it was turned off %s\n", erased, at);
		}
		if (file->turned_off_info.not_written)
			fprintf(a->out, "  (%" PRIu32 " more, which the run did not keep)\n",
				file->turned_off_info.not_written);
	}
}

static int tt_report_done(struct tt_ps_sink *a, struct tt_report_opts *o)
{
	if (a->frames)
		return tt_frames_print(a->frames, &a->an, a->out) < 0 ? tt_error("out of memory") : 0;
	if (tt_ps_filtered(a, false) < 0)
		return -1;
	struct tt_an_table t;
	if (tt_an_table_build(&t, a->list, a->trace->nthreads, o->by_thread, o->sort) < 0)
		return tt_error("out of memory for the table");
	int rc = 0;
	switch (o->format) {
	case TT_REPORT_CSV: tt_an_table_csv(a->out, &t); break;
	case TT_REPORT_JSON: rc = tt_print_json(a->out, tt_table_json(&t, a, o)); break;
	case TT_REPORT_SVG: {
		char title[512];
		snprintf(title, sizeof(title), "ticktrace report: %s%s, %zu names, %" PRIu64 " calls, sorted by %s",
			 o->inputs[0], o->ninputs > 1 ? " ..." : "", t.n, t.calls, tt_an_sort_name(o->sort));
		tt_table_svg(a->out, &t, title);
		break;
	}
	default:
		tt_an_table_print(a->out, &t);
		if (a->sum.dropped)
			fprintf(a->out, "(%" PRIu64 " events were dropped while recording: not counted)\n",
				a->sum.dropped);
		tt_ps_turned_off(a);
		break;
	}
	tt_an_table_free(&t);
	return rc;
}

/* ---- spikes ---- */

/* A split's source and what else it says, under the keys its marks have. */
static void tt_json_causes(cJSON *root, const struct tt_an_causes *c)
{
	struct tt_an_arg args[TT_AN_CAUSES_ARGS];
	size_t n = tt_an_causes_args(args, c);
	for (size_t i = 0; i < n; i++) {
		if (args[i].text)
			cJSON_AddStringToObject(root, args[i].key, args[i].text);
		else
			cJSON_AddNumberToObject(root, args[i].key, (double)args[i].number);
	}
}

static cJSON *tt_spike_json(struct tt_ps_sink *a, const struct tt_an_spike *s)
{
	char name[512];
	cJSON *root = cJSON_CreateObject();
	tt_json_add_text(root, "name", name, a->an.name(a, s->thread, s->key, name, sizeof(name)));
	tt_json_thread_fields(root, s->thread);
	cJSON_AddNumberToObject(root, "start_ns", (double)s->start);
	cJSON_AddNumberToObject(root, "dur_ns", (double)s->dur);
	cJSON_AddNumberToObject(root, "threshold_ns", (double)s->threshold);
	cJSON_AddStringToObject(root, "threshold_from", tt_an_spike_threshold_from(s));
	cJSON_AddNumberToObject(root, "explained_ns", (double)s->explained);
	if (s->start_early_ns)
		cJSON_AddNumberToObject(root, "start_early_ns", (double)s->start_early_ns);
	if (s->end_late_ns)
		cJSON_AddNumberToObject(root, "end_late_ns", (double)s->end_late_ns);
	if (s->has_split) {
		cJSON_AddNumberToObject(root, "on_cpu_ns", (double)s->split.on_cpu);
		cJSON_AddNumberToObject(root, "preempted_ns", (double)s->split.preempted);
		cJSON_AddNumberToObject(root, "blocked_ns", (double)s->split.blocked);
		cJSON_AddNumberToObject(root, "unknown_ns", (double)s->split.unknown);
		char why[TT_AN_UNKNOWN_TEXT];
		if (tt_an_unknown_text(&s->causes, why, sizeof why))
			cJSON_AddStringToObject(root, "unknown_why", why);
	} else {
		char why[TT_AN_NO_SPLIT_TEXT];
		cJSON_AddStringToObject(root, "no_split", tt_an_no_split_text(&s->causes, s->thread->no_states,
									       why, sizeof why));
	}
	tt_json_causes(root, &s->causes);
	if (s->frame)
		cJSON_AddNumberToObject(root, "frame", (double)s->frame);
	if (s->frame_ns)
		cJSON_AddNumberToObject(root, "frames", (double)s->dur / (double)s->frame_ns);
	if (s->text)
		tt_json_add_text(root, "description", s->text, s->text_len);
	cJSON *stack = cJSON_AddArrayToObject(root, "stack");
	for (uint32_t i = 0; stack && i < s->depth; i++) {
		cJSON *frame = cJSON_CreateObject();
		tt_json_add_text(frame, "name", name,
				 a->an.name(a, s->thread, s->stack[i].key, name, sizeof(name)));
		cJSON_AddNumberToObject(frame, "start_ns", (double)s->stack[i].start);
		cJSON_AddNumberToObject(frame, "open_ns", (double)(s->start + s->dur - s->stack[i].start));
		if (s->stack[i].start_early)
			cJSON_AddNumberToObject(frame, "start_early_ns", (double)s->stack[i].start_early);
		cJSON_AddItemToArray(stack, frame);
	}
	return root;
}

/* The line that says which snapshot a spike is the spike of. */
static void tt_snap_said(struct tt_ps_sink *a, const struct tt_snap_spike *snap)
{
	fprintf(a->out, "  the spike snapshot %" PRIu64 " was written for (", snap->snapshot->info.number);
	tt_put_escaped(a->out, snap->file->path, strlen(snap->file->path));
	fputs(")\n", a->out);
}

static int tt_spike_print(void *ctx, const struct tt_an_spike *s)
{
	struct tt_ps_sink *a = ctx;
	struct tt_snap_spike *snap = tt_ps_snap_of(a, s);
	if (!snap) {
		if (a->format == TT_REPORT_JSON)
			return tt_print_json(a->out, tt_spike_json(a, s));
		tt_an_spike_print(a->out, s);
		return 0;
	}
	/* the snapshot's: its threshold and its split (or why it has none) as the runtime
	 * had them, said in its words, as `info` says them: the window may hold too few of
	 * the readings it went by to split alike (outside recheck r47 F1: 10 of 16 split
	 * otherwise, one within the whole spike); from a section that does not say them (a
	 * split without its source, or none without why), the window's */
	snap->reported = true;
	const struct tt_snapshot *ss = snap->snapshot;
	struct tt_an_spike own = *s;
	if (!own.end_late_ns && (ss->causes.flags & TT_CAUSES_END_DROPPED))
		own.end_late_ns = -1; /* (its end among dropped events, as the runtime knew it) */
	own.threshold = ss->info.threshold_ns;
	own.source = TT_AN_FROM_GLOBAL;
	if (ss->info.has_split ? ss->causes.from != TT_CAUSES_NONE : ss->unsplit.why != TT_UNSPLIT_THREAD) {
		own.has_split = ss->info.has_split;
		if (own.has_split) /* (which its split makes up: the runtime's ns, not the window's) */
			own.dur = ss->split.dur_ns;
		own.split = tt_snapshot_an_split(ss);
		own.causes = tt_snapshot_an_causes(ss);
	}
	const char *global_from = a->an.global_from;
	a->an.global_from = tt_snapshot_threshold_from(ss);
	int rc = 0;
	if (a->format == TT_REPORT_JSON) {
		cJSON *json = tt_spike_json(a, &own);
		cJSON_AddNumberToObject(json, "snapshot", (double)ss->info.number);
		rc = tt_print_json(a->out, json);
	} else {
		tt_an_spike_print(a->out, &own);
		tt_snap_said(a, snap);
	}
	a->an.global_from = global_from;
	return rc;
}

/* A snapshot's spike the analysis did not find (its scope began before the window
 * the snapshot kept, the ring cut it): as its SNAPSHOT section says it. */
static int tt_snap_print(struct tt_ps_sink *a, struct tt_snap_spike *snap)
{
	const struct tt_snapshot *ss = snap->snapshot;
	const struct tt_snapshot_info *si = &ss->info;
	const struct tt_thread *t = ss->thread;
	int64_t dur = ss->split.dur_ns;
	a->an.spikes_found++;
	if (a->format == TT_REPORT_JSON) {
		cJSON *root = cJSON_CreateObject();
		tt_json_add_text(root, "name", ss->name.ptr, ss->name.len);
		tt_json_thread_fields(root, &a->threads[t->id]);
		const struct {
			const char *key;
			int64_t v;
		} fields[] = {
			{"start_ns", snap->begin}, {"dur_ns", dur}, {"threshold_ns", si->threshold_ns},
			{"explained_ns", 0}, {"on_cpu_ns", si->on_cpu_ns}, {"preempted_ns", si->preempted_ns},
			{"blocked_ns", si->blocked_ns}, {"unknown_ns", ss->split.unknown_ns},
		};
		for (size_t i = 0; i < (si->has_split ? 8 : 4); i++)
			cJSON_AddNumberToObject(root, fields[i].key, (double)fields[i].v);
		if (ss->causes.flags & TT_CAUSES_END_DROPPED) /* (how much later not kept) */
			cJSON_AddNumberToObject(root, "end_late_ns", -1);
		char why[TT_AN_NO_SPLIT_TEXT];
		struct tt_an_causes causes = tt_snapshot_an_causes(ss);
		if (!si->has_split)
			cJSON_AddStringToObject(root, "no_split",
						tt_an_no_split_text(&causes, t->flags, why, sizeof why));
		char unknown[TT_AN_UNKNOWN_TEXT];
		if (si->has_split && tt_an_unknown_text(&causes, unknown, sizeof unknown))
			cJSON_AddStringToObject(root, "unknown_why", unknown);
		tt_json_causes(root, &causes);
		cJSON_AddStringToObject(root, "threshold_from", tt_snapshot_threshold_from(ss));
		cJSON_AddNumberToObject(root, "snapshot", (double)si->number);
		cJSON_AddArrayToObject(root, "stack");
		return tt_print_json(a->out, root);
	}
	char d[32], th[32], at[32];
	fputs("spike: ", a->out);
	tt_put_escaped(a->out, ss->name.ptr, ss->name.len);
	fprintf(a->out, " took %s (threshold %s, %s) thread ", tt_an_fmt_ns(d, dur),
		tt_an_fmt_ns(th, si->threshold_ns), tt_snapshot_threshold_from(ss));
	tt_put_escaped(a->out, t->name.ptr, t->name.len);
	fprintf(a->out, " (tid %" PRIu32 ") at %s", t->tid, tt_an_fmt_ns(at, snap->begin));
	char late[128];
	struct tt_an_spike dropped = {.end_late_ns = -1}; /* (how much later not kept) */
	if (ss->causes.flags & TT_CAUSES_END_DROPPED)
		fprintf(a->out, "; %s", tt_an_end_late_text(&dropped, late, sizeof late));
	fputc('\n', a->out);
	struct tt_an_causes causes = tt_snapshot_an_causes(ss);
	if (si->has_split) {
		struct tt_an_split split = tt_snapshot_an_split(ss);
		tt_an_split_print(a->out, "  ", &split, &causes);
	} else {
		char why[TT_AN_NO_SPLIT_TEXT];
		fprintf(a->out, "  no split: %s\n", tt_an_no_split_text(&causes, t->flags, why, sizeof why));
	}
	tt_an_causes_print(a->out, "  ", &causes);
	tt_snap_said(a, snap);
	fputs("  (its scope is not whole in the snapshot: as the snapshot says it)\n", a->out);
	return 0;
}

static int tt_spikes_done(struct tt_ps_sink *a, struct tt_report_opts *o)
{
	if (o->suggest) {
		struct tt_an_table t;
		if (tt_ps_filtered(a, true) < 0)
			return -1;
		if (tt_an_table_build(&t, a->list, a->trace->nthreads, false, TT_AN_SORT_SELF) < 0)
			return tt_error("out of memory for the table");
		int rc = tt_suggest_print(&t, a->trace, o->thresholds.global, o->exclude_list, a->out);
		tt_an_table_free(&t);
		return rc;
	}
	bool snapshots = false;
	for (size_t i = 0; a->snaps && i < a->trace->nfiles; i++) {
		struct tt_snap_spike *snap = &a->snaps[i];
		snapshots |= snap->snapshot != NULL;
		if (snap->snapshot && !snap->reported && tt_snap_print(a, snap) < 0)
			return -1;
	}
	if (!tt_thresholds_given(&o->thresholds) && !a->threshold_notes && !snapshots)
		tt_warn("no thresholds: none in the trace (TT_THRESHOLD_NS), and no --threshold or "
			"--thresholds");
	if (a->format != TT_REPORT_JSON)
		fprintf(a->out, "%" PRIu64 " spikes\n", a->an.spikes_found);
	return 0;
}

int tt_analyse(const struct tt_trace *t, struct tt_report_opts *o, bool spikes, FILE *out,
	       struct tt_summary *sum)
{
	struct tt_ps_sink *a = tt_ps_new(NULL, spikes ? &o->thresholds : NULL);
	if (!a)
		return tt_error("out of memory");
	a->out = out;
	if (spikes && o->suggest) {
		a->an.profile = true; /* the table's rows, with their calls over the threshold */
	} else if (spikes) {
		for (size_t i = 0; i < t->nfiles; i++)
			if (t->files[i].snapshot && t->files[i].snapshot->info.kind == TT_SNAPSHOT_SPIKE) {
				a->snap_ops = tt_ps_ops;
				a->snap_ops.slice_begin = tt_ps_slice_begin_snap;
				a->sink.ops = &a->snap_ops;
			}
		a->an.find_spikes = true;
		a->an.spike = tt_spike_print;
		a->an.print_depth = o->depth;
		a->format = o->format;
	} else {
		a->an.profile = true;
	}
	struct tt_frame_stats frames;
	if (!spikes && o->frames) {
		tt_frames_init(&frames, o->budget);
		a->frames = &frames;
		a->an.closed = tt_ps_closed;
	}
	struct tt_sink *filter = NULL;
	a->filter = &o->filter;
	if (tt_filter_active(&o->filter) && !(filter = tt_filter_sink_new(&a->sink, &o->filter))) {
		tt_sink_free(&a->sink);
		return tt_error("out of memory");
	}
	struct tt_sink *sinks[] = {filter ? filter : &a->sink};
	int rc = tt_decode_reported(t, sinks, 1, sum);
	tt_sink_free(filter);
	if (rc == 0)
		rc = spikes ? tt_spikes_done(a, o) : tt_report_done(a, o);
	if (a->frames)
		tt_frames_free(&frames);
	tt_sink_free(&a->sink);
	return rc;
}

int tt_profile_table(struct tt_session *r, const struct tt_filter *filter, bool by_thread,
		     int (*use)(void *ctx, struct tt_an_table *t, const struct tt_summary *sum), void *ctx)
{
	struct tt_ps_sink *a = tt_ps_new(NULL, NULL);
	struct tt_sink *filtered = NULL;
	int rc = a ? 0 : tt_error("out of memory");
	if (rc == 0 && filter && tt_filter_active(filter) && !(filtered = tt_filter_sink_new(&a->sink, filter)))
		rc = tt_error("out of memory");
	if (rc == 0) {
		a->filter = filter;
		a->an.profile = true;
		struct tt_sink *first = filtered ? filtered : &a->sink;
		rc = tt_session_decode(r, &first, 1);
	}
	struct tt_an_table t;
	if (rc == 0 && tt_an_table_build(&t, a->list, a->trace->nthreads, by_thread, TT_AN_SORT_NAME) < 0)
		rc = tt_error("out of memory for the table");
	else if (rc == 0) {
		rc = use(ctx, &t, &r->sum);
		tt_an_table_free(&t);
	}
	tt_sink_free(filtered);
	if (a)
		tt_sink_free(&a->sink);
	return rc;
}

/* ---- convert's marks ---- */

static int tt_spike_mark(void *ctx, const struct tt_an_spike *s)
{
	struct tt_ps_sink *a = ctx;
	if (tt_ps_snap_of(a, s)) /* marked by the decoder, with its arguments */
		return 0;
	char name[512], text[600], dur[48];
	a->an.name(a, s->thread, s->key, name, sizeof(name));
	snprintf(text, sizeof(text), "spike: %s took %s", name, tt_an_fmt_dur(dur, s->dur, s->start_early_ns));
	struct tt_spike_args *m = calloc(1, sizeof *m);
	if (!m)
		return tt_error("out of memory");
	m->next = a->mark_args;
	a->mark_args = m;
	const struct tt_an_arg args[] = {
		{"dur_ns", NULL, s->dur}, {"threshold_ns", NULL, s->threshold},
		{"threshold_from", tt_an_spike_threshold_from(s), 0}, {"on_cpu_ns", NULL, s->split.on_cpu}, {"preempted_ns", NULL, s->split.preempted},
		{"blocked_ns", NULL, s->split.blocked}, {"unknown_ns", NULL, s->split.unknown},
	};
	size_t n = s->has_split ? sizeof args / sizeof *args : 3;
	memcpy(m->args, args, n * sizeof *args);
	if (s->start_early_ns)
		m->args[n++] = (struct tt_an_arg){"start_early_ns", NULL, s->start_early_ns};
	if (s->end_late_ns)
		m->args[n++] = (struct tt_an_arg){"end_late_ns", NULL, s->end_late_ns};
	if (!s->has_split)
		m->args[n++] = (struct tt_an_arg){
			"no_split", tt_an_no_split_text(&s->causes, s->thread->no_states, m->no_split,
							 sizeof m->no_split), 0};
	else if (tt_an_unknown_text(&s->causes, m->no_split, sizeof m->no_split))
		m->args[n++] = (struct tt_an_arg){"unknown_why", m->no_split, 0};
	tt_an_causes_args(m->args + n, &s->causes);
	struct tt_event e = {
		.thread = s->thread->ctx, .ts = s->start + s->dur, .depth = s->depth, .flags = TT_EV_NAMED,
		.text = text, .args = m->args,
	};
	return TT_FORWARD(a, instant, &e);
}

struct tt_sink *tt_spike_mark_sink_new(struct tt_sink *inner, const struct tt_thresholds *thresholds)
{
	struct tt_ps_sink *a = tt_ps_new(inner, thresholds);
	if (!a)
		return NULL;
	a->an.find_spikes = true;
	a->an.spike = tt_spike_mark;
	return &a->sink;
}
