/* A thread's analysis, the flat profile and the spike detector (analysis.h): the times
 * of the scopes it is told open and close, rows and histograms, thresholds, spikes. */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

/* ---- saturating time arithmetic: a hostile file may hold any times ---- */

static void tt_an_add_sat(int64_t *acc, int64_t v)
{
	*acc = tt_an_plus_sat(*acc, v);
}

/* ---- the histogram ---- */

/* 32 buckets per power of two: bucket b < 64 holds the value b; above, the top six
 * bits of the value (a one and five more) and its exponent. */
#define TT_AN_SUB_BITS 5
#define TT_AN_SUB (1u << TT_AN_SUB_BITS)
#define TT_AN_BUCKETS ((64u - TT_AN_SUB_BITS) * TT_AN_SUB)

static uint32_t tt_an_bucket(int64_t ns)
{
	uint64_t v = ns < 0 ? 0 : (uint64_t)ns;
	if (v < 2 * TT_AN_SUB)
		return (uint32_t)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v); /* >= 6 */
	unsigned shift = e - TT_AN_SUB_BITS;
	return (shift + 1) * TT_AN_SUB + (uint32_t)((v >> shift) - TT_AN_SUB);
}

/* The values of bucket b: [low, low + width). */
static void tt_an_bucket_range(uint32_t b, int64_t *low, int64_t *width)
{
	if (b < 2 * TT_AN_SUB) {
		*low = b;
		*width = 1;
		return;
	}
	unsigned shift = b / TT_AN_SUB - 1;
	*low = (int64_t)((uint64_t)(b % TT_AN_SUB + TT_AN_SUB) << shift);
	*width = INT64_C(1) << shift;
}

/* Makes room for buckets [lo, hi); 0 or -1. */
static int tt_an_hist_cover(struct tt_an_hist *h, uint32_t lo, uint32_t hi)
{
	if (h->counts && lo >= h->lo && hi <= h->hi)
		return 0;
	if (h->counts) {
		lo = lo < h->lo ? lo : h->lo;
		hi = hi > h->hi ? hi : h->hi;
	}
	uint64_t *counts = calloc(hi - lo, sizeof(*counts));
	if (!counts)
		return -1;
	if (h->counts)
		memcpy(counts + (h->lo - lo), h->counts, (h->hi - h->lo) * sizeof(*counts));
	free(h->counts);
	h->counts = counts;
	h->lo = lo;
	h->hi = hi;
	return 0;
}

/* The bucket of `ns`, with room made for it in h; -1 when out of memory. */
static int64_t tt_an_hist_room(struct tt_an_hist *h, int64_t ns)
{
	uint32_t b = tt_an_bucket(ns);
	if (!h->counts || b < h->lo || b >= h->hi) {
		/* grow by octaves, so that a row's histogram is reallocated a few times */
		uint32_t lo = b / TT_AN_SUB * TT_AN_SUB, hi = lo + TT_AN_SUB;
		if (tt_an_hist_cover(h, lo, hi) < 0)
			return -1;
	}
	return b;
}

int tt_an_hist_add(struct tt_an_hist *h, int64_t ns)
{
	int64_t b = tt_an_hist_room(h, ns);
	if (b < 0)
		return -1;
	h->counts[b - h->lo]++;
	return 0;
}

int tt_an_hist_merge(struct tt_an_hist *into, const struct tt_an_hist *from)
{
	if (!from->counts)
		return 0;
	if (tt_an_hist_cover(into, from->lo, from->hi) < 0)
		return -1;
	for (uint32_t b = from->lo; b < from->hi; b++)
		into->counts[b - into->lo] += from->counts[b - from->lo];
	return 0;
}

/* The nearest-rank value at `permille` of `calls` values: the middle of its bucket,
 * within [min, max]. */
int64_t tt_an_hist_percentile(const struct tt_an_hist *h, uint64_t calls, unsigned permille,
			      int64_t min, int64_t max)
{
	if (!calls || !h->counts)
		return 0;
	uint64_t rank = (calls * permille + 999) / 1000, seen = 0;
	if (rank <= 1)
		return min; /* the ends are known exactly */
	if (rank >= calls)
		return max;
	for (uint32_t b = h->lo; b < h->hi; b++) {
		seen += h->counts[b - h->lo];
		if (seen >= rank) {
			int64_t low, width;
			tt_an_bucket_range(b, &low, &width);
			int64_t v = low + (width - 1) / 2;
			return v < min ? min : v > max ? max : v;
		}
	}
	return max;
}

/* ---- rows by key ---- */

static uint32_t tt_an_hash(uint64_t key, uint32_t cap)
{
	return (uint32_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (cap - 1);
}

static int tt_an_index_grow(struct tt_an_thread *th)
{
	uint32_t cap = th->index_cap ? 2 * th->index_cap : 64;
	uint32_t *index = calloc(cap, sizeof(*index));
	if (!index)
		return -1;
	for (uint32_t r = 0; r < th->nrows; r++) {
		uint32_t h = tt_an_hash(th->rows[r].key, cap);
		while (index[h])
			h = (h + 1) & (cap - 1);
		index[h] = r + 1;
	}
	free(th->index);
	th->index = index;
	th->index_cap = cap;
	return 0;
}

static int tt_an_group_row(struct tt_an_thread *th, uint32_t row);

/* The row of `key`, made if new; -1 when out of memory. */
static int64_t tt_an_row_for(struct tt_an_thread *th, uint64_t key)
{
	if (2 * (th->nrows + 1) > th->index_cap && tt_an_index_grow(th) < 0)
		return -1;
	uint32_t h = tt_an_hash(key, th->index_cap);
	for (; th->index[h]; h = (h + 1) & (th->index_cap - 1))
		if (th->rows[th->index[h] - 1].key == key)
			return th->index[h] - 1;
	if (th->nrows == th->rows_cap) {
		uint32_t cap = th->rows_cap ? 2 * th->rows_cap : 32;
		struct tt_an_row *rows = realloc(th->rows, cap * sizeof(*rows));
		if (!rows)
			return -1;
		th->rows = rows;
		th->rows_cap = cap;
	}
	th->rows[th->nrows] = (struct tt_an_row){.key = key, .min = INT64_MAX};
	th->index[h] = ++th->nrows;
	return tt_an_group_row(th, th->nrows - 1) < 0 ? -1 : (int64_t)th->nrows - 1;
}

int tt_an_add_filtered(struct tt_an_thread *th, uint64_t key, uint64_t calls, int64_t ns)
{
	int64_t at = tt_an_row_for(th, key);
	if (at < 0)
		return -1;
	struct tt_an_row *r = &th->rows[at];
	r->calls += calls;
	r->filtered += calls;
	if (__builtin_add_overflow(r->filtered_ns, ns, &r->filtered_ns))
		r->filtered_ns = INT64_MAX;
	if (__builtin_add_overflow(r->calls_total, ns, &r->calls_total))
		r->calls_total = INT64_MAX;
	return 0;
}

int tt_an_add_dropped(struct tt_an_thread *th, uint64_t key, uint64_t calls)
{
	int64_t at = tt_an_row_for(th, key);
	if (at < 0)
		return -1;
	th->rows[at].dropped += calls;
	return 0;
}

/* Rows of keys with one name share the first one's open count: a name nested in
 * itself, by one key or another (a function, and the TT_FUNC inside it), counts in
 * its total once. 0, or -1 when out of memory. */
static int tt_an_group_row(struct tt_an_thread *th, uint32_t row)
{
	th->rows[row].same_name = row;
	if (!th->an->profile)
		return 0;
	if (2 * (th->ngroups + 1) > th->groups_cap) {
		uint32_t cap = th->groups_cap ? 2 * th->groups_cap : 64;
		struct tt_an_name_group *groups = calloc(cap, sizeof(*groups));
		if (!groups)
			return -1;
		for (uint32_t i = 0; i < th->groups_cap; i++) {
			if (!th->groups[i].row)
				continue;
			uint32_t h = tt_an_hash(th->groups[i].hash, cap);
			while (groups[h].row)
				h = (h + 1) & (cap - 1);
			groups[h] = th->groups[i];
		}
		free(th->groups);
		th->groups = groups;
		th->groups_cap = cap;
	}
	char name[512];
	size_t len = th->an->name(th->an->ctx, th, th->rows[row].key, name, sizeof(name));
	uint64_t hash = UINT64_C(14695981039346656037);
	for (size_t i = 0; i < len; i++)
		hash = (hash ^ (unsigned char)name[i]) * UINT64_C(1099511628211);
	uint32_t h = tt_an_hash(hash, th->groups_cap);
	for (; th->groups[h].row; h = (h + 1) & (th->groups_cap - 1)) {
		if (th->groups[h].hash == hash && strcmp(th->groups[h].name, name) == 0) {
			th->rows[row].same_name = th->groups[h].row - 1;
			return 0;
		}
	}
	th->groups[h] = (struct tt_an_name_group){.hash = hash, .name = strdup(name), .row = row + 1};
	th->ngroups++;
	return th->groups[h].name ? 0 : -1;
}

/* ---- a thread's scopes ---- */

void tt_an_counts_flush(struct tt_an_thread *th)
{
	for (uint32_t i = 0; i < th->npending; i++) {
		const struct tt_an_hist *h = &th->rows[th->pending[i].row].hist;
		__builtin_prefetch(&h->counts[th->pending[i].bucket - h->lo], 1);
	}
	for (uint32_t i = 0; i < th->npending; i++) {
		struct tt_an_hist *h = &th->rows[th->pending[i].row].hist;
		h->counts[th->pending[i].bucket - h->lo]++;
	}
	th->npending = 0;
}

void tt_an_thread_init(struct tt_an_thread *th, struct tt_an *an, void *ctx)
{
	*th = (struct tt_an_thread){.an = an, .ctx = ctx, .states.last_ns = INT64_MIN,
				    .states.complete_ns = INT64_MIN};
}

void tt_an_thread_free(struct tt_an_thread *th)
{
	for (uint32_t r = 0; r < th->nrows; r++)
		free(th->rows[r].hist.counts);
	free(th->rows);
	free(th->index);
	for (uint32_t i = 0; i < th->groups_cap; i++)
		free(th->groups[i].name);
	free(th->groups);
	th->groups = NULL;
	th->ngroups = th->groups_cap = 0;
	free(th->stack);
	free(th->text);
	th->rows = NULL;
	th->index = NULL;
	th->stack = NULL;
	th->text = NULL;
	th->nrows = th->depth = th->text_len = 0;
	tt_an_states_free(th);
}

static int tt_an_oom(struct tt_an_thread *th)
{
	th->an->oom = true;
	return -1;
}

int tt_an_scope_open(struct tt_an_thread *th, uint64_t key, int64_t ts)
{
	if (th->depth == th->cap) {
		uint32_t cap = th->cap ? 2 * th->cap : 64;
		struct tt_an_frame *stack = realloc(th->stack, cap * sizeof(*stack));
		if (!stack)
			return tt_an_oom(th);
		th->stack = stack;
		th->cap = cap;
	}
	int64_t row = tt_an_row_for(th, key);
	if (row < 0)
		return tt_an_oom(th);
	th->rows[th->rows[row].same_name].open++;
	const struct tt_an_frame *parent = th->depth ? &th->stack[th->depth - 1] : NULL;
	uint32_t below = parent && (parent->flags & TT_AN_IGNORE_BELOW) ? TT_AN_IGNORED | TT_AN_IGNORE_BELOW : 0;
	th->stack[th->depth++] = (struct tt_an_frame){
		.key = key, .start = ts, .threshold = TT_AN_NO_THRESHOLD,
		.inherited = parent ? parent->inherited : TT_AN_NO_THRESHOLD,
		.row = (uint32_t)row, .flags = below, .text_at = th->text_len, .start_early = th->start_early,
	};
	return 0;
}

/* The first rule whose pattern matches the row's name, looked up once per row. */
static int64_t tt_an_table_threshold(struct tt_an_thread *th, struct tt_an_row *row)
{
	struct tt_an *an = th->an;
	if (!row->looked_up) {
		char name[512];
		an->name(an->ctx, th, row->key, name, sizeof(name));
		row->name_threshold = TT_AN_NO_THRESHOLD;
		for (size_t i = 0; i < an->nrules; i++) {
			if (fnmatch(an->rules[i].pattern, name, 0) == 0) {
				row->name_threshold = an->rules[i].ns;
				break;
			}
		}
		row->looked_up = true;
	}
	return row->name_threshold;
}

static int64_t tt_an_threshold_of(struct tt_an_thread *th, const struct tt_an_frame *f,
				enum tt_an_threshold_source *source)
{
	int64_t by_name;
	if (f->threshold != TT_AN_NO_THRESHOLD) {
		*source = TT_AN_FROM_CODE;
		return f->threshold;
	}
	if (th->an->nrules && (by_name = tt_an_table_threshold(th, &th->rows[f->row])) != TT_AN_NO_THRESHOLD) {
		*source = TT_AN_FROM_TABLE;
		return by_name;
	}
	const struct tt_an_frame *parent = f > th->stack ? f - 1 : NULL;
	if (parent && parent->inherited != TT_AN_NO_THRESHOLD) {
		*source = TT_AN_FROM_CHILDREN;
		return parent->inherited;
	}
	*source = TT_AN_FROM_GLOBAL;
	return th->an->threshold;
}

void tt_an_frame_mark(struct tt_an *an, uint64_t key, int64_t ts)
{
	struct tt_an_frames *f = &an->frames;
	if (f->count == 0) {
		f->key = key;
		f->first = ts;
	} else if (key != f->key || ts < f->last) {
		return;
	}
	f->last = ts;
	f->at[f->count++ % TT_AN_FRAME_MARKS] = ts;
}

/* The frame `ts` is in (0: before the first mark), and the mean frame length. */
static uint64_t tt_an_frame_at(const struct tt_an_frames *f, int64_t ts, int64_t *mean)
{
	*mean = f->count > 1 ? (f->last - f->first) / (int64_t)(f->count - 1) : 0;
	uint64_t n = f->count;
	uint64_t oldest = n > TT_AN_FRAME_MARKS ? n - TT_AN_FRAME_MARKS : 0;
	while (n > oldest && f->at[(n - 1) % TT_AN_FRAME_MARKS] > ts)
		n--;
	return n;
}

/* Whether the scope just closed (stack[depth], its parent below it) spiked: reports
 * it, and passes the explained time up. */
static int tt_an_check_spike(struct tt_an_thread *th, const struct tt_an_frame *f, int64_t dur)
{
	struct tt_an_frame *parent = th->depth ? &th->stack[th->depth - 1] : NULL;
	enum tt_an_threshold_source source;
	int64_t threshold = f->flags & TT_AN_IGNORED ? TT_AN_NO_THRESHOLD : tt_an_threshold_of(th, f, &source);
	if (threshold == TT_AN_NO_THRESHOLD || dur - f->explained <= threshold) {
		if (parent)
			tt_an_add_sat(&parent->explained, f->explained);
		return 0;
	}
	if (parent)
		tt_an_add_sat(&parent->explained, dur);
	th->spikes++;
	th->an->spikes_found++;
	struct tt_an_spike s = {
		.thread = th, .key = f->key, .start = f->start, .dur = dur, .threshold = threshold,
		.source = source, .explained = f->explained,
		.text = f->text_len ? th->text + f->text_at : NULL, .text_len = f->text_len,
		.stack = th->stack, .depth = th->depth, .end_late_ns = th->end_late,
		.start_early_ns = f->start_early,
	};
	s.frame = tt_an_frame_at(&th->an->frames, f->start, &s.frame_ns);
	if (th->an->before_split)
		th->an->before_split(th->an->ctx, th);
	s.has_split = tt_an_split(th, f->start, f->start + dur, &s.split);
	tt_an_causes(th, f->start, f->start + dur, &s.has_split, &s.split, &s.causes);
	return th->an->spike ? th->an->spike(th->an->ctx, &s) : 0;
}

int tt_an_scope_close(struct tt_an_thread *th, int64_t end)
{
	if (th->depth == 0)
		return 0;
	const struct tt_an_frame *f = &th->stack[--th->depth];
	int64_t dur;
	if (__builtin_sub_overflow(end, f->start, &dur) || dur < 0)
		dur = dur < 0 ? 0 : INT64_MAX;
	struct tt_an_row *row = &th->rows[f->row];
	uint32_t *open = &th->rows[row->same_name].open;
	--*open;
	if (th->an->profile) {
		row->calls++;
		/* recursion: the total is the outermost activation's, which holds the others;
		 * the per-call figures take every call */
		if (*open == 0)
			tt_an_add_sat(&row->total, dur);
		tt_an_add_sat(&row->calls_total, dur);
		row->over += th->an->threshold != TT_AN_NO_THRESHOLD && dur > th->an->threshold;
		tt_an_add_sat(&row->self, dur - (f->children < dur ? f->children : dur));
		if (dur < row->min)
			row->min = dur;
		if (dur > row->max)
			row->max = dur;
		int64_t bucket = tt_an_hist_room(&row->hist, dur);
		if (bucket < 0)
			return tt_an_oom(th);
		if (th->npending == TT_AN_PENDING_COUNTS)
			tt_an_counts_flush(th);
		th->pending[th->npending++] = (struct tt_an_pending_count){f->row, (uint32_t)bucket};
		struct tt_an_split split;
		bool approximate;
		if (*open == 0 && tt_an_call_split(th, f->start, end, &split, &approximate)) {
			tt_an_add_sat(&row->split_total, dur);
			tt_an_add_sat(&row->preempted, split.preempted);
			tt_an_add_sat(&row->blocked, split.blocked);
			tt_an_add_sat(&row->unknown, split.unknown);
			row->split = true;
			if (approximate)
				row->approximate |= th->counters.run_only ? TT_AN_APPROX_THREAD_TIMES
									  : TT_AN_APPROX_SCHEDSTAT;
		}
	}
	if (th->an->closed)
		th->an->closed(th->an->ctx, th, f->key, dur - (f->children < dur ? f->children : dur));
	if (th->depth)
		tt_an_add_sat(&th->stack[th->depth - 1].children, dur);
	int rc = th->an->find_spikes ? tt_an_check_spike(th, f, dur) : 0;
	th->text_len = f->text_at; /* its description, and its children's, are done */
	if (th->depth == 0)
		tt_an_states_forget_before(th, end);
	return rc;
}

int tt_an_scope_note(struct tt_an_thread *th, unsigned kind, uint64_t value,
		     const char *text, size_t len)
{
	if (th->depth == 0)
		return 0;
	struct tt_an_frame *f = &th->stack[th->depth - 1];
	int64_t ns = value > INT64_MAX ? INT64_MAX : (int64_t)value;
	switch (kind) {
	case TT_REC_THRESHOLD: f->threshold = ns; break;
	case TT_REC_CHILDREN_THRESHOLD: f->inherited = ns; break;
	case TT_REC_IGNORE: f->flags |= TT_AN_IGNORED; break;
	case TT_REC_IGNORE_CHILDREN: f->flags |= TT_AN_IGNORE_BELOW; break;
	case TT_REC_PARENTS_THRESHOLD:
		for (uint32_t i = 0; i < th->depth; i++)
			th->stack[i].threshold = ns;
		break;
	case TT_REC_DESCRIBE:
		/* the latest description replaces the one before: it is the last text kept */
		if (len > TT_DESCRIBE_MAX)
			len = TT_DESCRIBE_MAX;
		th->text_len = f->text_at;
		if (th->text_len + len > th->text_cap) {
			uint32_t cap = th->text_cap ? 2 * th->text_cap : 1024;
			while (cap < th->text_len + len)
				cap *= 2;
			char *grown = realloc(th->text, cap);
			if (!grown)
				return tt_an_oom(th);
			th->text = grown;
			th->text_cap = cap;
		}
		if (len) /* an empty one, TT_DESCRIBE("%s", ""), may come before any buffer */
			memcpy(th->text + th->text_len, text, len);
		f->text_len = (uint32_t)len;
		th->text_len += (uint32_t)len;
		break;
	default: break;
	}
	return 0;
}

/* ---- printing ---- */

char *tt_an_fmt_ns(char buf[32], int64_t ns)
{
	static const struct {
		int64_t ns;
		const char *unit;
	} units[] = {{1000000000, "s"}, {1000000, "ms"}, {1000, "us"}};
	uint64_t v = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	const char *sign = ns < 0 ? "-" : "";
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		uint64_t u = (uint64_t)units[i].ns, step = u / 1000;
		if (v >= u) {
			/* three decimals, rounded to the nearest */
			uint64_t milli = v / step + (v % step >= (step + 1) / 2 && step > 1);
			snprintf(buf, 32, "%s%" PRIu64 ".%03" PRIu64 " %s", sign, milli / 1000, milli % 1000,
				 units[i].unit);
			return buf;
		}
	}
	snprintf(buf, 32, "%s%" PRIu64 " ns", sign, v);
	return buf;
}

void tt_an_split_print(FILE *out, const char *indent, const struct tt_an_split *split,
		       const struct tt_an_causes *causes)
{
	char a[32], b[32], c[32], d[32];
	/* "~": approximate, from the counters read around it (beside the switches, where
	 * waits after wake-ups moved or may: preempted and blocked alone) */
	bool counters = causes->from == TT_AN_CAUSES_SCHEDSTAT;
	const char *near = counters || causes->moved_known || causes->moved_most_ns || causes->cpu_ahead_most_ns ? "~" : "";
	const char *off = counters || causes->error_ns ? "~" : "";
	fprintf(out, "%son CPU %s%s, preempted %s%s, blocked %s%s, unknown %s\n", indent, near,
		tt_an_fmt_ns(a, split->on_cpu), off, tt_an_fmt_ns(b, split->preempted), off,
		tt_an_fmt_ns(c, split->blocked), tt_an_fmt_ns(d, split->unknown));
}

/* Text as it may go on one line of a terminal: control characters become '?'. */
static void tt_an_print_clean(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fputc((unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i], out);
}

static void tt_an_print_name(FILE *out, const struct tt_an_thread *th, uint64_t key)
{
	char name[512];
	size_t n = th->an->name(th->an->ctx, th, key, name, sizeof(name));
	tt_an_print_clean(out, name, n);
}

static const char *const tt_an_source_names[] = {
	[TT_AN_FROM_CODE] = "TT_THRESHOLD_NS", [TT_AN_FROM_TABLE] = "thresholds file",
	[TT_AN_FROM_CHILDREN] = "TT_CHILDREN_THRESHOLD_NS", [TT_AN_FROM_GLOBAL] = "--threshold",
};

const char *tt_an_spike_threshold_from(const struct tt_an_spike *s)
{
	const char *global = s->thread->an->global_from;
	return s->source == TT_AN_FROM_GLOBAL && global ? global : tt_an_source_names[s->source];
}

/* snprintf at buf + *n, as far as cap allows: *n grows by what it wrote. */
static void tt_an_add_text(char *buf, size_t cap, int *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void tt_an_add_text(char *buf, size_t cap, int *n, const char *fmt, ...)
{
	if (*n < 0 || (size_t)*n >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int more = vsnprintf(buf + *n, cap - (size_t)*n, fmt, ap);
	va_end(ap);
	*n = more < 0 ? more : *n + more;
}

/* How its thread's CPU time moves in steps of the system's tick (causes->tick_ns). */
static void tt_an_tick_text(const struct tt_an_causes *c, char *buf, size_t cap, int *n)
{
	char t[32], b[32];
	tt_an_add_text(buf, cap, n, "moves in steps of the system's tick");
	if (c->tick_said)
		tt_an_add_text(buf, cap, n, ", %s as its run found it", tt_an_fmt_ns(t, c->tick_ns));
	tt_an_add_text(buf, cap, n, " (each value up to %s behind%s)", tt_an_fmt_ns(b, c->tick_behind_ns),
		       c->tick_behind_ns > c->tick_ns ? ": its user and kernel times each cut to a step" : "");
}

/* The readings inside it too far from the edges that none bounds (TT_AN_MISS_TOO_FAR),
 * each with the one on its far side where said: what is missing is a reading near
 * those edges. */
static void tt_an_too_far_text(const struct tt_an_causes *c, char *buf, size_t cap, int *n)
{
	const struct tt_an_miss_detail *d = &c->miss_detail;
	char a[32], b[32];
	tt_an_add_text(buf, cap, n, "no counters reading near its %s: ",
		       d->edges == TT_AN_EDGE_START ? "start" : d->edges == TT_AN_EDGE_END ? "end" : "start or its end");
	if (d->edges & TT_AN_EDGE_START) {
		/* (one within a reading's span of its start may have read its values before it) */
		tt_an_add_text(buf, cap, n, "the first inside it %s after its start%s", tt_an_fmt_ns(a, c->miss_start_ns),
			       c->miss_start_ns < TT_SCHEDSTAT_SPAN_NS ? ", its values maybe read before it" : "");
		if (d->before_ns)
			tt_an_add_text(buf, cap, n, d->before_ns < 0 ? " (none before it)" : " (the one before, %s before it)",
				       tt_an_fmt_ns(b, d->before_ns));
	}
	if (d->edges & TT_AN_EDGE_END) {
		tt_an_add_text(buf, cap, n, "%sthe last inside it %s before its end", d->edges & TT_AN_EDGE_START ? ", " : "",
			       tt_an_fmt_ns(a, c->miss_end_ns));
		if (d->after_ns)
			tt_an_add_text(buf, cap, n, d->after_ns < 0 ? " (none after it: a wait under way at the "
				       "last is counted only as it ends)" : " (the next, %s after it)",
				       tt_an_fmt_ns(b, d->after_ns));
	}
}

/* Why the counters read for it say nothing of a span (c->miss), into buf: how many
 * bytes, or -1 where none were read for it (TT_AN_MISS_NONE). */
static int tt_an_miss_text(const struct tt_an_causes *c, char *buf, size_t cap)
{
	const struct tt_an_miss_detail *d = &c->miss_detail;
	char a[32], b[32], t[32];
	int n = 0;
	switch (c->miss) {
	case TT_AN_MISS_NOT_AFTER:
		tt_an_add_text(buf, cap, &n, "no counters reading after its start");
		break;
	case TT_AN_MISS_NOT_BEFORE:
		tt_an_add_text(buf, cap, &n, "no counters reading before its end");
		break;
	case TT_AN_MISS_NOT_INSIDE:
	case TT_AN_MISS_TOO_FAR:
		if (d->tick) { /* (the readings bound its edges: the CPU time's steps do not) */
			tt_an_add_text(buf, cap, &n, "its thread's CPU time ");
			tt_an_tick_text(c, buf, cap, &n);
			tt_an_add_text(buf, cap, &n, ": the readings nearest its edges (%s from its start, "
				       "%s from its end) bound its time on CPU no closer than that, half its length "
				       "or more", tt_an_fmt_ns(a, c->miss_start_ns), tt_an_fmt_ns(b, c->miss_end_ns));
		} else if (c->miss == TT_AN_MISS_TOO_FAR && d->edges)
			tt_an_too_far_text(c, buf, cap, &n);
		else if (c->miss == TT_AN_MISS_TOO_FAR) /* (an earlier snapshot's: which edge not said) */
			tt_an_add_text(buf, cap, &n, "its counters were read too far inside it (%s after its start, "
				       "%s before its end)", tt_an_fmt_ns(a, c->miss_start_ns),
				       tt_an_fmt_ns(b, c->miss_end_ns));
		else
			tt_an_add_text(buf, cap, &n, "no counters reading inside it (the nearest %s before it, %s "
				       "after it)", tt_an_fmt_ns(a, c->miss_start_ns), tt_an_fmt_ns(b, c->miss_end_ns));
		/* How late tt-sched came to its start, where none bounds it, and the load the
		 * thread itself waited in (tt-sched, at the program's priority, waits too). */
		if (d->late_ns && !d->tick && (c->miss == TT_AN_MISS_NOT_INSIDE || (d->edges & TT_AN_EDGE_START)))
			tt_an_add_text(buf, cap, &n, "; the first reading came %s after its start, %s past "
				       "the %s tt-sched reads a scope open at",
				       tt_an_fmt_ns(a, d->late_ns + TT_COUNTERS_AFTER_NS), tt_an_fmt_ns(b, d->late_ns),
				       tt_an_fmt_ns(t, TT_COUNTERS_AFTER_NS));
		/* (a wait is counted whole as it ends: one begun before the first reading can
		 * make them longer than the time between the two: outside recheck r47 F5) */
		if (d->over_ns > 0 && !d->tick && (c->miss == TT_AN_MISS_NOT_INSIDE || (d->edges & TT_AN_EDGE_START))) {
			const char *loaded = 4 * d->waited_ns >= d->over_ns ? "a loaded machine: tt-sched, in the same "
									 "process, waits for one too" : NULL;
			if (d->waited_ns > d->over_ns)
				tt_an_add_text(buf, cap, &n, "; its thread's waits for a CPU that ended in the %s between "
					       "the readings around its start came to %s (a wait is counted whole as it "
					       "ends: some began before the first; %s)", tt_an_fmt_ns(b, d->over_ns),
					       tt_an_fmt_ns(a, d->waited_ns), loaded);
			else
				tt_an_add_text(buf, cap, &n, "; its thread waited %s for a CPU in the %s between the "
					       "readings around its start%s%s%s", tt_an_fmt_ns(a, d->waited_ns),
					       tt_an_fmt_ns(b, d->over_ns), loaded ? " (" : "", loaded ? loaded : "",
					       loaded ? ")" : "");
		}
		break;
	case TT_AN_MISS_NEVER_READ:
		return snprintf(buf, cap, "its thread's counters were never read (tt-sched reads them inside a "
				"scope open 2 ms, while within its CPU budget: info says what it left unread)");
	default:
		return -1;
	}
	/* Unread for want of a reading: past its CPU budget tt-sched reads no new scope. */
	if (c->miss_budget)
		tt_an_add_text(buf, cap, &n, "; tt-sched's CPU budget left scopes of its thread unread, this one "
			       "maybe (info says how many)");
	/* Read blind: its records recorded faster than tt-sched's share let it follow. */
	if (c->miss_blind)
		tt_an_add_text(buf, cap, &n, "; its thread recorded more than tt-sched's share let it follow, its "
			       "scopes not known from then on: it was read blind, each 2 to 80 ms (info says which "
			       "threads)");
	return n;
}

const char *tt_an_no_split_text(const struct tt_an_causes *c, uint32_t no_states, char *buf, size_t cap)
{
	/* (no counters read for it: its thread's flags say why it has no switches) */
	return tt_an_miss_text(c, buf, cap) < 0 ? tt_sched_none_text(no_states, buf, cap) : buf;
}

const char *tt_an_unknown_text(const struct tt_an_causes *c, char *buf, size_t cap)
{
	if (c->lost_ns <= c->covered_ns)
		return NULL;
	char a[32];
	int n = snprintf(buf, cap, "%s of it without switches", tt_an_fmt_ns(a, c->lost_ns - c->covered_ns));
	if (n > 0 && (size_t)n < cap)
		n += c->lost ? snprintf(buf + n, cap - (size_t)n, " (the kernel lost %" PRIu64 " of them in "
					"a stretch that reaches into it: its buffer for the thread full)", c->lost)
			     : snprintf(buf + n, cap - (size_t)n, " (before they were asked for)");
	if (n > 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, ", not covered: ");
	if (n > 0 && (size_t)n < cap && tt_an_miss_text(c, buf + n, cap - (size_t)n) < 0)
		snprintf(buf + n, cap - (size_t)n, "none read");
	return buf;
}

const char *tt_an_stolen_unknown_text(const struct tt_an_causes *c)
{
	switch (c->stolen_miss) {
	case TT_AN_STOLEN_NEVER_READ: return "its thread's CPU time was never read";
	case TT_AN_STOLEN_NOT_AFTER:
		return "its thread's CPU time was not read after it began (the thread ended, or was killed, "
		       "before a reading)";
	case TT_AN_STOLEN_NOT_BEFORE: return "its thread's CPU time was not read before it ended";
	case TT_AN_STOLEN_NOT_BOUNDED:
		return "the readings of its thread's CPU time around it bound it no closer than all its "
		       "time on CPU";
	default: return NULL;
	}
}

size_t tt_an_causes_args(struct tt_an_arg *args, const struct tt_an_causes *c)
{
	size_t n = 0;
	if (c->from != TT_AN_CAUSES_NONE) {
		args[n++] = (struct tt_an_arg){.key = "causes_from", .text = tt_an_causes_from_name(c->from)};
		args[n++] = (struct tt_an_arg){.key = "causes_error_ns", .number = c->error_ns};
		if (c->tick_ns) { /* (what error_ns holds of the CPU time's steps) */
			args[n++] = (struct tt_an_arg){.key = "tick_ns", .number = c->tick_ns};
			args[n++] = (struct tt_an_arg){.key = "tick_behind_ns", .number = c->tick_behind_ns};
		}
	}
	if (c->wakeups_known)
		args[n++] = (struct tt_an_arg){.key = "wakeup_waits_ns", .number = c->wakeups_ns};
	else if (c->wakeups_unbounded)
		args[n++] = (struct tt_an_arg){.key = "blocked_may_hold_wakeup_waits", .number = 1};
	if (c->moved_known)
		args[n++] = (struct tt_an_arg){.key = "kernel_moved_ns", .number = c->moved_ns};
	if (c->moved_most_ns)
		args[n++] = (struct tt_an_arg){.key = "kernel_moved_at_most_ns", .number = c->moved_most_ns};
	if (c->cpu_ahead_most_ns)
		args[n++] = (struct tt_an_arg){.key = "kernel_cpu_ahead_at_most_ns", .number = c->cpu_ahead_most_ns};
	if (c->stolen_known) {
		args[n++] = (struct tt_an_arg){.key = "stolen_ns", .number = c->stolen_ns};
		args[n++] = (struct tt_an_arg){.key = "stolen_error_ns", .number = c->stolen_error_ns};
	} else if (tt_an_stolen_unknown_text(c)) { /* (and how much of on CPU may be) */
		args[n++] = (struct tt_an_arg){.key = "stolen_unknown", .text = tt_an_stolen_unknown_text(c)};
		args[n++] = (struct tt_an_arg){.key = "stolen_error_ns", .number = c->stolen_error_ns};
	}
	if (c->lost_ns) {
		args[n++] = (struct tt_an_arg){.key = "without_switches_ns", .number = c->lost_ns};
		args[n++] = (struct tt_an_arg){.key = "switches_lost", .number = (int64_t)c->lost};
	}
	if (c->faults) {
		args[n++] = (struct tt_an_arg){.key = "minor_faults", .number = (int64_t)c->minor_faults};
		args[n++] = (struct tt_an_arg){.key = "major_faults", .number = (int64_t)c->major_faults};
		if (c->faults_at_least)
			args[n++] = (struct tt_an_arg){.key = "faults_at_least", .number = 1};
		else if (c->faults_at_most)
			args[n++] = (struct tt_an_arg){.key = "faults_at_most", .number = 1};
		if (c->faults_read_ns) /* (not known in a snapshot) */
			args[n++] = (struct tt_an_arg){.key = "faults_read_ns", .number = c->faults_read_ns};
	}
	return n;
}

/* A clause: the kernel's own `figure` may count up to `most` more than the split's
 * `part` (why), each part within `error`; the next separator. */
static const char *tt_an_print_beyond(FILE *out, const char *sep, const char *figure, int64_t most,
				      const char *part, const char *why, int64_t error)
{
	char a[32], b[32];
	fprintf(out, "%sthe kernel's own %s may count up to %s more than %s (%s): each part within %s of its "
		"figures", sep, figure, tt_an_fmt_ns(a, most), part, why, tt_an_fmt_ns(b, error));
	return "; ";
}

void tt_an_causes_print(FILE *out, const char *indent, const struct tt_an_causes *c)
{
	/* (stolen time where it is more than its error: zero within it, none told; outside
	 * recheck r40, F3) */
	bool stolen = c->stolen_known && c->stolen_ns > c->stolen_error_ns;
	/* (a count read around it, 0 too; at least 0 says nothing) */
	bool faults = c->faults && (!c->faults_at_least || c->minor_faults || c->major_faults);
	bool wakeups = c->wakeups_unbounded || (c->wakeups_known && c->wakeups_ns + c->error_ns > 0);
	if (c->from != TT_AN_CAUSES_SCHEDSTAT && c->from != TT_AN_CAUSES_THREAD_TIMES && !stolen && !faults &&
	    !wakeups && !c->moved_known && !c->moved_most_ns && !c->cpu_ahead_most_ns && !c->lost_ns &&
	    !tt_an_stolen_unknown_text(c))
		return;
	char a[32], b[32], why[TT_AN_UNKNOWN_TEXT];
	const char *sep = indent;
	/* Spans without switches: from the counters (within the error said after), or why not. */
	if (c->covered_ns) {
		fprintf(out, "%s(%s of it without switches", sep, tt_an_fmt_ns(a, c->covered_ns));
		if (c->lost)
			fprintf(out, " (the kernel lost %" PRIu64 " of them in a stretch that reaches into "
				"it: its buffer for the thread full)", c->lost);
		fprintf(out, ": split from the thread's counters, each part within %s)", tt_an_fmt_ns(b, c->error_ns));
		sep = "; ";
	}
	if (tt_an_unknown_text(c, why, sizeof why)) {
		fprintf(out, "%sunknown: %s", sep, why);
		sep = "; ";
	}
	if (c->wakeups_unbounded) {
		fprintf(out, "%s(blocked may hold waits for a CPU after wake-ups, which the switches "
			"count as blocked: no counters reading bounds them)", sep);
		sep = "; ";
	} else if (wakeups) {
		fprintf(out, "%s(of it preempted, waits for a CPU after wake-ups ~%s, which the switches "
			"count as blocked: from the thread's counters, preempted and blocked each within %s)",
			sep, tt_an_fmt_ns(a, c->wakeups_ns), tt_an_fmt_ns(b, c->error_ns));
		sep = "; ";
	} else if (c->from == TT_AN_CAUSES_SCHEDSTAT && !c->covered_ns) {
		fprintf(out, "%s(from the thread's counters, each within %s)", sep, tt_an_fmt_ns(a, c->error_ns));
		sep = "; ";
	} else if (c->from == TT_AN_CAUSES_THREAD_TIMES && c->switches_counted && !c->switches_max) {
		fprintf(out, "%s(on CPU throughout: the thread's switch count did not move from before it "
			"to after it)", sep);
		sep = "; ";
	} else if (c->from == TT_AN_CAUSES_THREAD_TIMES) {
		char tick[TT_AN_NO_SPLIT_TEXT] = "";
		int n = 0;
		if (c->tick_ns) {
			tt_an_add_text(tick, sizeof tick, &n, ", which ");
			tt_an_tick_text(c, tick, sizeof tick, &n);
		}
		fprintf(out, "%s(on CPU from the thread's CPU time, within %s%s; the rest off CPU, ", sep,
			tt_an_fmt_ns(a, c->error_ns), tick);
		if (c->switches_counted)
			fprintf(out, "switched out %" PRIu64 " to %" PRIu64 " times, preempted or blocked not "
				"told apart: Windows gives the switches' reasons to an administrator alone)",
				c->switches_min, c->switches_max);
		else
			fprintf(out, "preempted or blocked not told apart: no switches were read, which "
				"Windows gives an administrator alone)");
		sep = "; ";
	}
	if (c->moved_known) {
		fprintf(out, "%sthe kernel's own CPU time and run-queue wait count ~%s of it %s (at a "
			"preemption its accounting keeps the moment of the wake-up, or of its run-queue "
			"clock, not the switch's): each part within %s of them", sep,
			tt_an_fmt_ns(a, c->moved_ns < 0 ? -c->moved_ns : c->moved_ns),
			c->moved_ns < 0 ? "on CPU that the switches have preempted"
					: "waiting for a CPU that the switches have on CPU",
			tt_an_fmt_ns(b, c->error_ns));
		sep = "; ";
	}
	if (c->moved_most_ns)
		sep = tt_an_print_beyond(out, sep, "run-queue wait", c->moved_most_ns, "preempted",
					 "its accounting at preemptions, and waits after wake-ups, which no two "
					 "readings measured; one after it bounds them", c->error_ns);
	if (c->cpu_ahead_most_ns)
		sep = tt_an_print_beyond(out, sep, "CPU time", c->cpu_ahead_most_ns, "on CPU",
					 "it charges a thread from when it picks it, before the switch in its "
					 "record comes after, at switches in that no two readings measured",
					 c->error_ns);
	if (stolen) {
		fprintf(out, "%sof it on CPU, stolen by the hypervisor ~%s (within %s)", sep,
			tt_an_fmt_ns(a, c->stolen_ns), tt_an_fmt_ns(b, c->stolen_error_ns));
		sep = "; ";
	}
	if (tt_an_stolen_unknown_text(c)) {
		fprintf(out, "%sstolen time not told apart (on CPU may hold the hypervisor's, up to all of "
			"it): %s", sep, tt_an_stolen_unknown_text(c));
		sep = "; ";
	}
	if (faults && c->faults_at_most) {
		fprintf(out, "%spage faults: at most %" PRIu64 " minor, %" PRIu64 " major (read ", sep,
			c->minor_faults, c->major_faults);
		if (c->faults_read_ns)
			fprintf(out, "%s apart ", tt_an_fmt_ns(a, c->faults_read_ns));
		fprintf(out, "around it: some may lie outside it)%s",
			c->major_faults ? ": it may have waited on the disk" : "");
	} else if (faults)
		fprintf(out, "%spage faults: %s%" PRIu64 " minor, %" PRIu64 " major%s%s", sep,
			c->faults_at_least ? "at least " : "", c->minor_faults, c->major_faults,
			c->faults_at_least ? " (read inside it alone)" : "",
			c->major_faults ? ": it waited on the disk" : "");
	fputc('\n', out);
}

const char *tt_an_end_late_text(const struct tt_an_spike *s, char *buf, size_t cap)
{
	char a[32];
	if (!s->end_late_ns)
		return NULL;
	if (s->end_late_ns < 0)
		snprintf(buf, cap, "its end was among dropped events: it ended later, how much not known");
	else
		snprintf(buf, cap, "its end was among dropped events: it ended up to %s later (its split "
			 "covers the time before)", tt_an_fmt_ns(a, s->end_late_ns));
	return buf;
}

const char *tt_an_start_early_text(const struct tt_an_spike *s, char *buf, size_t cap)
{
	char a[32];
	if (!s->start_early_ns)
		return NULL;
	if (s->start_early_ns < 0)
		snprintf(buf, cap, "its beginning was not recorded (before the oldest record its thread "
			 "kept: a ring overwrote it, or a fork's parent began it): it began earlier, how much "
			 "not known");
	else
		snprintf(buf, cap, "its beginning was among dropped events: it began up to %s earlier (its "
			 "split covers the time after)", tt_an_fmt_ns(a, s->start_early_ns));
	return buf;
}

const char *tt_an_fmt_dur(char *buf, int64_t ns, int64_t start_early)
{
	char d[32];
	snprintf(buf, 48, "%s%s", start_early ? "at least " : "", tt_an_fmt_ns(d, ns));
	return buf;
}

void tt_an_spike_print(FILE *out, const struct tt_an_spike *s)
{
	const struct tt_an_thread *th = s->thread;
	char a[32], b[32], c[32];
	fputs("spike: ", out);
	tt_an_print_name(out, th, s->key);
	/* PET's words: "@ frame 2323 takes 16.576 ms (0.995 frames)" */
	if (s->frame)
		fprintf(out, " @ frame %" PRIu64, s->frame);
	char took[48];
	fprintf(out, " took %s", tt_an_fmt_dur(took, s->dur, s->start_early_ns));
	if (s->frame_ns)
		fprintf(out, " (%.3f frames)", (double)s->dur / (double)s->frame_ns);
	fprintf(out, " (threshold %s, %s) thread ", tt_an_fmt_ns(b, s->threshold),
		tt_an_spike_threshold_from(s));
	if (th->name_len)
		tt_an_print_clean(out, th->name, th->name_len);
	fprintf(out, " (tid %" PRIu32 ") at %s", th->tid, tt_an_fmt_ns(c, s->start));
	if (s->explained)
		fprintf(out, "; %s of it in spikes above", tt_an_fmt_ns(a, s->explained));
	char late[128], early[TT_AN_START_EARLY_TEXT];
	if (tt_an_start_early_text(s, early, sizeof early))
		fprintf(out, "; %s", early);
	if (tt_an_end_late_text(s, late, sizeof late))
		fprintf(out, "; %s", late);
	fputc('\n', out);
	char why[TT_AN_NO_SPLIT_TEXT];
	if (s->has_split && s->causes.from == TT_AN_CAUSES_THREAD_TIMES) /* (its CPU time alone) */
		fprintf(out, "  on CPU ~%s, off CPU or unknown %s\n", tt_an_fmt_ns(a, s->split.on_cpu),
			tt_an_fmt_ns(b, s->split.unknown));
	else if (s->has_split)
		tt_an_split_print(out, "  ", &s->split, &s->causes);
	else
		fprintf(out, "  no split: %s\n",
			tt_an_no_split_text(&s->causes, th->no_states, why, sizeof why));
	tt_an_causes_print(out, "  ", &s->causes);
	/* one scope a line, the innermost print_depth of them (the spike's own included) */
	int64_t end = s->start + s->dur;
	uint32_t limit = th->an->print_depth, first = 0;
	if (limit && s->depth + 1 > limit) {
		first = s->depth + 1 - limit;
		fprintf(out, "  ... %" PRIu32 " scopes around them\n", first);
	}
	for (uint32_t i = first; i < s->depth; i++) {
		fprintf(out, "  %" PRIu32 ") ", i);
		tt_an_print_name(out, th, s->stack[i].key);
		fprintf(out, " %s\n", tt_an_fmt_dur(took, end - s->stack[i].start, s->stack[i].start_early));
	}
	fprintf(out, "  %" PRIu32 ") ", s->depth);
	tt_an_print_name(out, th, s->key);
	fprintf(out, " %s\n", tt_an_fmt_dur(took, s->dur, s->start_early_ns));
	if (s->text) {
		fputs("  description: ", out);
		tt_an_print_clean(out, s->text, s->text_len);
		fputc('\n', out);
	}
}

int tt_an_parse_duration(const char *text, int64_t *ns)
{
	return tt_parse_duration(text, ns);
}
