#include "report.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Calls enough to judge a scope by its distribution; fewer, and every one over the
 * threshold, it is a container (main, a thread's loop). */
#define TT_SUGGEST_MIN_CALLS 10
/* A function is worth leaving out when it makes at least this share of the events
 * (per mille), and all those left out make most of them. */
#define TT_SUGGEST_MIN_SHARE 10

/* `ns` rounded up to two significant digits: a threshold a person would write. */
static int64_t tt_round_up(int64_t ns)
{
	int64_t unit = 1;
	while (ns / unit >= 100)
		unit *= 10;
	return (ns + unit - 1) / unit * unit;
}

static int tt_calls_cmp(const void *a, const void *b)
{
	const struct tt_an_entry *x = *(const struct tt_an_entry *const *)a;
	const struct tt_an_entry *y = *(const struct tt_an_entry *const *)b;
	return (x->calls < y->calls) - (x->calls > y->calls);
}

/* A function's name as GCC's exclude list matches it (a substring of the name as
 * written, without its parameters), or 0 when it cannot be given (a comma in it
 * would split the list). */
static size_t tt_exclude_name(const char *name)
{
	size_t n = strcspn(name, "(");
	return memchr(name, ',', n) || n == 0 ? 0 : n;
}

/* The suggestions of thresholds and of TT_IGNORE; how many. */
static size_t tt_suggest_thresholds(const struct tt_an_table *t, FILE *out)
{
	char a[32], b[32];
	size_t count = 0;
	bool any = false;
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_an_entry *e = &t->entries[i];
		if (e->calls < TT_SUGGEST_MIN_CALLS || 2 * e->over <= e->calls)
			continue;
		if (!any)
			fputs("thresholds of their own (over the global threshold on most calls):\n", out);
		any = true;
		count++;
		int64_t ns = tt_round_up(e->p99);
		fprintf(out, "  %s: %" PRIu64 " of %" PRIu64 " calls over, p50 %s: TT_THRESHOLD_NS(%" PRId64
			") in it (its p99), or the line \"%s %s\" in a --thresholds file\n", e->name, e->over,
			e->calls, tt_an_fmt_ns(a, e->p50), ns, e->name, tt_an_fmt_ns(b, ns));
	}
	any = false;
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_an_entry *e = &t->entries[i];
		if (e->calls >= TT_SUGGEST_MIN_CALLS || e->over < e->calls || 2 * e->children <= e->total)
			continue;
		if (!any)
			fputs("TT_IGNORE() candidates (every call over, mostly time in others):\n", out);
		any = true;
		count++;
		fprintf(out, "  %s: %" PRIu64 " calls, %s in all, %s of it in scopes inside\n", e->name,
			e->calls, tt_an_fmt_ns(a, e->total), tt_an_fmt_ns(b, e->children));
	}
	return count;
}

/* The functions to leave out of -finstrument-functions, and the flag; how many. */
static size_t tt_suggest_exclude(const struct tt_an_table *t, FILE *out)
{
	const struct tt_an_entry **funcs = calloc(t->n ? t->n : 1, sizeof *funcs);
	if (!funcs)
		return 0;
	size_t n = 0;
	uint64_t calls = 0, left_out = 0;
	for (size_t i = 0; i < t->n; i++) {
		calls += t->entries[i].calls;
		if (t->entries[i].is_func && t->entries[i].near_overhead &&
		    tt_exclude_name(t->entries[i].name))
			funcs[n++] = &t->entries[i];
	}
	qsort(funcs, n, sizeof *funcs, tt_calls_cmp);
	while (n > 0 && funcs[n - 1]->calls * 1000 < calls * TT_SUGGEST_MIN_SHARE)
		n--;
	for (size_t i = 0; i < n; i++)
		left_out += funcs[i]->calls;
	if (!n || 2 * left_out <= calls)
		n = 0;
	if (n) {
		char a[32];
		fprintf(out, "leave out of -finstrument-functions (median within %d x what recording "
			"a call costs here, %" PRId64 " ns; %.1f%% of the calls):\n", TT_AN_NEAR_OVERHEAD,
			t->overhead_ns, 100.0 * (double)left_out / (double)calls);
		for (size_t i = 0; i < n; i++)
			fprintf(out, "  %s: %" PRIu64 " calls, median %s\n", funcs[i]->name, funcs[i]->calls,
				tt_an_fmt_ns(a, funcs[i]->p50));
		fputs("  -finstrument-functions-exclude-function-list=", out);
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%s%.*s", i ? "," : "", (int)tt_exclude_name(funcs[i]->name),
				funcs[i]->name);
		fputc('\n', out);
	}
	free(funcs);
	return n;
}

void tt_suggest_print(const struct tt_an_table *t, int64_t threshold, FILE *out)
{
	char a[32];
	if (threshold == TT_AN_NO_THRESHOLD)
		fputs("suggested markup (no --threshold: no thresholds to suggest):\n", out);
	else
		fprintf(out, "suggested markup (global threshold %s):\n", tt_an_fmt_ns(a, threshold));
	size_t count = threshold != TT_AN_NO_THRESHOLD ? tt_suggest_thresholds(t, out) : 0;
	if (count + tt_suggest_exclude(t, out) == 0)
		fputs("  none\n", out);
}
