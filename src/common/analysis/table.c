/* The flat profile's table (analysis.h): the threads' rows merged by name, sorted,
 * and printed as aligned text or CSV. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "analysis_internal.h"

static const char *const tt_an_sorts[] = {
	[TT_AN_SORT_SELF] = "self",   [TT_AN_SORT_TOTAL] = "total", [TT_AN_SORT_CHILDREN] = "children",
	[TT_AN_SORT_CALLS] = "calls", [TT_AN_SORT_MIN] = "min",     [TT_AN_SORT_MAX] = "max",
	[TT_AN_SORT_MEAN] = "mean",   [TT_AN_SORT_P50] = "p50",     [TT_AN_SORT_P95] = "p95",
	[TT_AN_SORT_P99] = "p99",     [TT_AN_SORT_NAME] = "name",
};

const char tt_an_sort_names[] = "self, total, children, calls, min, max, mean, p50, p95, p99, name";

const char *tt_an_sort_name(enum tt_an_sort sort)
{
	return tt_an_sorts[sort];
}

int tt_an_sort_named(const char *name)
{
	for (size_t i = 0; i < sizeof(tt_an_sorts) / sizeof(tt_an_sorts[0]); i++)
		if (strcmp(name, tt_an_sorts[i]) == 0)
			return (int)i;
	return -1;
}

/* A row with its name and its thread's place in the list. */
struct tt_an_item {
	char *name;
	size_t thread;
	const struct tt_an_thread *th;
	const struct tt_an_row *row;
};

static int tt_an_item_cmp(const void *a, const void *b)
{
	const struct tt_an_item *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The sort's value of an entry, biggest first (calls and times). */
static int64_t tt_an_sort_value(const struct tt_an_entry *e, enum tt_an_sort sort)
{
	switch (sort) {
	case TT_AN_SORT_TOTAL: return e->total;
	case TT_AN_SORT_CHILDREN: return e->children;
	case TT_AN_SORT_CALLS: return e->calls > INT64_MAX ? INT64_MAX : (int64_t)e->calls;
	case TT_AN_SORT_MIN: return e->min;
	case TT_AN_SORT_MAX: return e->max;
	case TT_AN_SORT_MEAN: return e->mean;
	case TT_AN_SORT_P50: return e->p50;
	case TT_AN_SORT_P95: return e->p95;
	case TT_AN_SORT_P99: return e->p99;
	default: return e->self;
	}
}

static int tt_an_entry_cmp(const void *a, const void *b, void *sort_by)
{
	const struct tt_an_entry *x = a, *y = b;
	enum tt_an_sort sort = *(const enum tt_an_sort *)sort_by;
	if (x->thread != y->thread) /* groups keep the threads' order: pointers into one array */
		return x->thread < y->thread ? -1 : 1;
	if (sort != TT_AN_SORT_NAME) {
		int64_t u = tt_an_sort_value(x, sort), v = tt_an_sort_value(y, sort);
		if (u != v)
			return u > v ? -1 : 1;
	}
	return strcmp(x->name, y->name);
}

static void tt_an_sum_sat(int64_t *acc, int64_t v)
{
	if (__builtin_add_overflow(*acc, v, acc))
		*acc = INT64_MAX;
}

/* One entry from the items [first, last) that share a name (and thread). */
static int tt_an_entry_merge(struct tt_an_entry *e, struct tt_an_item *first, struct tt_an_item *last,
			     bool by_thread)
{
	*e = (struct tt_an_entry){.name = first->name, .thread = by_thread ? first->th : NULL,
				.min = INT64_MAX, .max = 0};
	first->name = NULL; /* the entry owns it now */
	for (struct tt_an_item *it = first; it < last; it++) {
		const struct tt_an_row *r = it->row;
		e->calls += r->calls;
		e->filtered += r->filtered;
		tt_an_sum_sat(&e->filtered_ns, r->filtered_ns);
		e->dropped += r->dropped;
		if (__builtin_add_overflow(e->total, r->total, &e->total))
			e->total = INT64_MAX;
		if (__builtin_add_overflow(e->self, r->self, &e->self))
			e->self = INT64_MAX;
		if (__builtin_add_overflow(e->calls_total, r->calls_total, &e->calls_total))
			e->calls_total = INT64_MAX;
		e->min = r->min < e->min ? r->min : e->min;
		e->max = r->max > e->max ? r->max : e->max;
		e->over += r->over;
		e->is_func |= (r->key & TT_KEY_FUNC) != 0;
		if (r->split) {
			e->split = true;
			e->approximate |= r->approximate;
			tt_an_sum_sat(&e->on_cpu, r->split_total - r->preempted - r->blocked - r->unknown);
			tt_an_sum_sat(&e->preempted, r->preempted);
			tt_an_sum_sat(&e->blocked, r->blocked);
		}
		if (tt_an_hist_merge(&e->hist, &r->hist) < 0)
			return -1;
	}
	e->children = e->total - e->self;
	tt_an_sum_sat(&e->off_cpu, e->preempted);
	tt_an_sum_sat(&e->off_cpu, e->blocked);
	e->unknown = e->split ? e->total - e->on_cpu - e->off_cpu : 0;
	e->mean = e->calls ? e->calls_total / (int64_t)e->calls : 0;
	const uint64_t measured = e->calls - e->filtered; /* erased calls are in no histogram */
	if (!measured)
		e->min = 0;
	e->p50 = tt_an_hist_percentile(&e->hist, measured, 500, e->min, e->max);
	e->p95 = tt_an_hist_percentile(&e->hist, measured, 950, e->min, e->max);
	e->p99 = tt_an_hist_percentile(&e->hist, measured, 990, e->min, e->max);
	return 0;
}

static int64_t tt_an_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int tt_an_i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int64_t tt_an_call_overhead_ns(void)
{
	enum { ROUNDS = 15, READS = 2000 };
	int64_t ps[ROUNDS]; /* picoseconds per read */
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t sink = 0;
		int64_t t0 = tt_an_now_ns();
		for (int i = 0; i < READS; i++)
			sink += __rdtsc();
		ps[r] = (tt_an_now_ns() - t0) * 1000 / READS;
		__asm__ volatile("" : : "r"(sink));
	}
	qsort(ps, ROUNDS, sizeof ps[0], tt_an_i64_cmp);
	int64_t ns = (2 * ps[ROUNDS / 2] + 500) / 1000; /* a begin and an end */
	return ns > 0 ? ns : 1;
}

int tt_an_table_build(struct tt_an_table *t, struct tt_an_thread *const *threads, size_t n,
		      bool by_thread, enum tt_an_sort sort)
{
	*t = (struct tt_an_table){.threads = n, .overhead_ns = tt_an_call_overhead_ns()};
	size_t nitems = 0, k = 0;
	for (size_t i = 0; i < n; i++)
		nitems += threads[i]->nrows;
	struct tt_an_item *items = calloc(nitems ? nitems : 1, sizeof(*items));
	int rc = items ? 0 : -1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct tt_an_thread *th = threads[i];
		tt_an_counts_flush(th);
		if (!th->states.known && th->nrows && !t->no_states)
			t->no_states = th;
		for (uint32_t r = 0; r < th->nrows && rc == 0; r++) {
			if (!th->rows[r].calls)
				continue;
			char name[512];
			size_t len = th->an->name(th->an->ctx, th, th->rows[r].key, name, sizeof(name));
			items[k] = (struct tt_an_item){.name = strndup(name, len), .thread = by_thread ? i : 0,
						       .th = th, .row = &th->rows[r]};
			rc = items[k++].name ? 0 : -1;
		}
	}
	if (rc == 0) {
		qsort(items, k, sizeof(*items), tt_an_item_cmp);
		t->entries = calloc(k ? k : 1, sizeof(*t->entries));
		rc = t->entries ? 0 : -1;
	}
	for (size_t i = 0; i < k && rc == 0;) {
		size_t j = i + 1;
		while (j < k && tt_an_item_cmp(&items[i], &items[j]) == 0)
			j++;
		rc = tt_an_entry_merge(&t->entries[t->n++], &items[i], &items[j], by_thread);
		struct tt_an_entry *e = &t->entries[t->n - 1];
		t->calls += e->calls;
		t->filtered += e->filtered;
		/* the median, not the mean: a few calls preempted on a busy machine would take
		 * the mean of a million short ones far above what they cost */
		e->near_overhead = e->p50 < TT_AN_NEAR_OVERHEAD * t->overhead_ns;
		t->near_overhead += e->near_overhead;
		t->split |= e->split;
		t->unknown |= e->unknown > 0;
		t->approximate |= e->approximate;
		i = j;
	}
	for (size_t i = 0; i < k; i++)
		free(items[i].name);
	free(items);
	if (rc < 0) {
		tt_an_table_free(t);
		return -1;
	}
	qsort_r(t->entries, t->n, sizeof(*t->entries), tt_an_entry_cmp, &sort);
	return 0;
}

void tt_an_table_free(struct tt_an_table *t)
{
	for (size_t i = 0; t->entries && i < t->n; i++) {
		free(t->entries[i].name);
		free(t->entries[i].hist.counts);
	}
	free(t->entries);
	*t = (struct tt_an_table){0};
}

/* ---- text ---- */

#define TT_AN_COLUMNS 15 /* the three before the last two with states only (the third,
			  * where some time is neither on nor off CPU); the last two where
			  * TICKTRACE_MIN_DUR erased calls */
#define TT_AN_SPLIT_COLUMNS 3
#define TT_AN_ERASED_COLUMNS 2
#define TT_AN_SPLIT_FIRST (TT_AN_COLUMNS - TT_AN_ERASED_COLUMNS - TT_AN_SPLIT_COLUMNS)
#define TT_AN_NAME_MAX 60 /* wider names are cut in the text table (whole in CSV, JSON) */

static const char *const tt_an_headings[TT_AN_COLUMNS] = {
	"calls", "total", "self", "children", "min", "max", "mean", "p50", "p95", "p99",
	"on cpu", "off cpu", "unknown", "erased", "erased time",
};

static void tt_an_cells(const struct tt_an_entry *e, char cells[TT_AN_COLUMNS][32])
{
	static const int unmeasured[] = {4, 5, 7, 8, 9}; /* min, max, p50, p95, p99 */
	const int64_t times[TT_AN_COLUMNS - 2] = {e->total, e->self, e->children, e->min, e->max,
						 e->mean, e->p50, e->p95, e->p99, e->on_cpu, e->off_cpu,
						 e->unknown};
	snprintf(cells[0], 32, "%" PRIu64, e->calls);
	for (int i = 0; i < TT_AN_COLUMNS - 3; i++)
		tt_an_fmt_ns(cells[i + 1], times[i]);
	snprintf(cells[TT_AN_COLUMNS - 2], 32, "%" PRIu64, e->filtered);
	tt_an_fmt_ns(cells[TT_AN_COLUMNS - 1], e->filtered_ns);
	if (e->calls == e->filtered) /* every call erased: no min, max or percentile measured */
		for (size_t i = 0; i < sizeof unmeasured / sizeof unmeasured[0]; i++)
			snprintf(cells[unmeasured[i]], 32, "-");
	if (!e->split) /* its thread's states are not known */
		for (int i = TT_AN_SPLIT_FIRST; i < TT_AN_SPLIT_FIRST + TT_AN_SPLIT_COLUMNS; i++)
			snprintf(cells[i], 32, "-");
	else if (e->approximate) /* on cpu and off cpu, from the counters */
		for (int i = TT_AN_SPLIT_FIRST; i < TT_AN_SPLIT_FIRST + 2; i++) {
			char time[32];
			memcpy(time, cells[i], sizeof time);
			snprintf(cells[i], 32, "~%.30s", time);
		}
}

/* Bytes of the name shown: control characters become '?', long names are cut. */
static int tt_an_name_width(const char *name)
{
	size_t n = strlen(name);
	return (int)(n > TT_AN_NAME_MAX ? TT_AN_NAME_MAX : n);
}

static void tt_an_print_thread(FILE *out, const struct tt_an_thread *th)
{
	fprintf(out, "\nthread %.*s (tid %" PRIu32 ", pid %" PRIu32 ")\n", (int)th->name_len,
		th->name, th->tid, th->pid);
}

/* The table's columns, in order: those every table has, on and off CPU (and
 * unknown) where states are known, the erased calls where there are some. */
static int tt_an_columns(const struct tt_an_table *t, int shown[TT_AN_COLUMNS])
{
	int n = 0;
	for (int c = 0; c < TT_AN_SPLIT_FIRST; c++)
		shown[n++] = c;
	for (int c = 0; t->split && c < TT_AN_SPLIT_COLUMNS - !t->unknown; c++)
		shown[n++] = TT_AN_SPLIT_FIRST + c;
	for (int c = 0; t->filtered && c < TT_AN_ERASED_COLUMNS; c++)
		shown[n++] = TT_AN_COLUMNS - TT_AN_ERASED_COLUMNS + c;
	return n;
}

void tt_an_table_print(FILE *out, const struct tt_an_table *t)
{
	int shown[TT_AN_COLUMNS];
	const int columns = tt_an_columns(t, shown);
	int width[TT_AN_COLUMNS + 1] = {4};
	char cells[TT_AN_COLUMNS][32];
	for (int c = 0; c < columns; c++)
		width[c + 1] = (int)strlen(tt_an_headings[shown[c]]);
	for (size_t i = 0; i < t->n; i++) {
		int w = tt_an_name_width(t->entries[i].name);
		width[0] = w > width[0] ? w : width[0];
		tt_an_cells(&t->entries[i], cells);
		for (int c = 0; c < columns; c++) {
			int cw = (int)strlen(cells[shown[c]]);
			width[c + 1] = cw > width[c + 1] ? cw : width[c + 1];
		}
	}
	fprintf(out, "flat profile: %zu names, %" PRIu64 " calls, %zu threads\n", t->n, t->calls,
		t->threads);
	const struct tt_an_thread *group = NULL;
	for (size_t i = 0; i <= t->n; i++) {
		const struct tt_an_entry *e = i < t->n ? &t->entries[i] : NULL;
		if (i == 0 || (e && e->thread != group)) {
			if (e && e->thread)
				tt_an_print_thread(out, e->thread);
			fprintf(out, "%-*s", width[0], "name");
			for (int c = 0; c < columns; c++)
				fprintf(out, "  %*s", width[c + 1], tt_an_headings[shown[c]]);
			fputc('\n', out);
			group = e ? e->thread : NULL;
		}
		if (!e)
			break;
		int w = tt_an_name_width(e->name);
		for (int k = 0; k < w; k++)
			fputc((unsigned char)e->name[k] < 0x20 || e->name[k] == 0x7f ? '?' : e->name[k], out);
		fprintf(out, "%*s", width[0] - w, "");
		tt_an_cells(e, cells);
		for (int c = 0; c < columns; c++)
			fprintf(out, "  %*s", width[c + 1], cells[shown[c]]);
		fputs(e->near_overhead ? "  ~\n" : "\n", out);
	}
	if (t->filtered)
		fprintf(out, "(%" PRIu64 " of the calls returned within TICKTRACE_MIN_DUR and were "
			"erased as they did: counted in calls, the mean and erased; their time is their "
			"callers' self, where the trace has it, not their own total or self; not in min, "
			"max and the percentiles)\n", t->filtered);
	char why[TT_SCHED_NONE_TEXT];
	if (!t->split && t->no_states)
		fprintf(out, "(no on cpu and off cpu: no thread has states; thread %.*s (tid %" PRIu32
			"): %s)\n", (int)t->no_states->name_len, t->no_states->name, t->no_states->tid,
			tt_sched_none_text(t->no_states->no_states, why, sizeof why));
	if (t->unknown)
		fputs("(on cpu and off cpu: the time their threads' states cover; unknown: the rest, "
		      "before a thread's states were asked for, in switches the kernel lost, or on a "
		      "thread without states)\n", out);
	if (t->approximate)
		fprintf(out, "(~on cpu, ~off cpu: from the threads' counters read around the calls, "
			"where %s: each call's split within their resolution; the calls they were "
			"not read near enough to tell are unknown)\n",
			t->approximate == TT_AN_APPROX_THREAD_TIMES ? "a Windows run had its threads' "
			"CPU time alone (no switches)" : t->approximate == TT_AN_APPROX_SCHEDSTAT ?
			"perf_event_open was refused or the kernel lost switches" : "perf_event_open was "
			"refused or the kernel lost switches, or (Windows) the threads' CPU time alone was read");
	if (t->near_overhead)
		fprintf(out, "~ median within %d x what recording a call costs here (%" PRId64
			" ns, measured now): mostly the recorder's own time\n", TT_AN_NEAR_OVERHEAD,
			t->overhead_ns);
}

/* ---- CSV ---- */

static void tt_an_csv_field(FILE *out, const char *s, size_t n)
{
	fputc('"', out);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			fputc('"', out);
		fputc(s[i], out);
	}
	fputc('"', out);
}

void tt_an_table_csv(FILE *out, const struct tt_an_table *t)
{
	bool by_thread = t->n && t->entries[0].thread;
	if (by_thread)
		fputs("pid,tid,thread,", out);
	fputs("name,calls,total_ns,self_ns,children_ns,min_ns,max_ns,mean_ns,p50_ns,p95_ns,p99_ns", out);
	fputs(t->filtered ? ",erased_calls,erased_ns\r\n" : "\r\n", out); /* (as the text's columns) */
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_an_entry *e = &t->entries[i];
		if (by_thread) {
			fprintf(out, "%" PRIu32 ",%" PRIu32 ",", e->thread->pid, e->thread->tid);
			tt_an_csv_field(out, e->thread->name, e->thread->name_len);
			fputc(',', out);
		}
		tt_an_csv_field(out, e->name, strlen(e->name));
		fprintf(out, ",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
			",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64, e->calls, e->total, e->self,
			e->children, e->min, e->max, e->mean, e->p50, e->p95, e->p99);
		if (t->filtered)
			fprintf(out, ",%" PRIu64 ",%" PRId64, e->filtered, e->filtered_ns);
		fputs("\r\n", out);
	}
}
