#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Calls enough to judge a scope by its distribution; fewer, and every one over the
 * threshold, it is a container (main, a thread's loop). */
#define TT_SUGGEST_MIN_CALLS 10
/* A function is worth leaving out when it makes at least this share of the events
 * (per mille), and all those left out make most of them. */
#define TT_SUGGEST_MIN_SHARE 1

/* `ns` rounded up to two significant digits: a threshold a person would write. */
static int64_t tt_round_up(int64_t ns)
{
	int64_t unit = 1;
	while (ns / unit >= 100)
		unit *= 10;
	return (ns + unit - 1) / unit * unit;
}

/* A function's calls over the whole run: those the trace kept, those TICKTRACE_MIN_DUR
 * erased (in `calls`) and those dropped with the buffer used up. */
static uint64_t tt_run_calls(const struct tt_an_entry *e)
{
	return e->calls + e->dropped;
}

static int tt_calls_cmp(const void *a, const void *b)
{
	uint64_t x = tt_run_calls(*(const struct tt_an_entry *const *)a);
	uint64_t y = tt_run_calls(*(const struct tt_an_entry *const *)b);
	return (x < y) - (x > y);
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

/* An exclude list (TICKTRACE_EXCLUDE): the lines it had, and the names the new ones. */
struct tt_exclude_list {
	char *had;    /* the file's text, as it was; NULL: none */
	const struct tt_an_entry **added;
	size_t nadded;
};

/* Whether the list's text names `name` (`len` bytes) on a line of its own, a comment
 * and blanks around it aside. */
static bool tt_exclude_listed(const char *text, const char *name, size_t len)
{
	for (const char *line = text; line && *line;) {
		const char *end = line + strcspn(line, "\n");
		const char *stop = line + strcspn(line, "#\n");
		while (line < stop && (*line == ' ' || *line == '\t'))
			line++;
		while (stop > line && (stop[-1] == ' ' || stop[-1] == '\t' || stop[-1] == '\r'))
			stop--;
		if ((size_t)(stop - line) == len && memcmp(line, name, len) == 0)
			return true;
		line = *end ? end + 1 : end;
	}
	return false;
}

static int tt_exclude_write(void *ctx, FILE *out)
{
	const struct tt_exclude_list *l = ctx;
	if (l->had && *l->had)
		fprintf(out, "%s%s", l->had, l->had[strlen(l->had) - 1] == '\n' ? "" : "\n");
	else
		fputs("# functions the zero-markup build leaves unpatched (TICKTRACE_EXCLUDE=this file),\n"
		      "# one name or shell pattern a line: ticktrace spikes --suggest --exclude-list\n", out);
	for (size_t i = 0; i < l->nadded; i++)
		fprintf(out, "%.*s\n", (int)tt_exclude_name(l->added[i]->name), l->added[i]->name);
	return 0;
}

/* `funcs` merged into the exclude list at `path`: the user's lines kept as they were,
 * the functions it does not name yet added at its end, and said. 0, or -1 after
 * saying why (the file as it was). */
static int tt_exclude_merge(const char *path, const struct tt_an_entry **funcs, size_t n, FILE *out)
{
	struct tt_exclude_list l = {.added = calloc(n ? n : 1, sizeof *l.added)};
	const char *why = NULL;
	int fd = tt_open_regular(path, &why);
	int rc = l.added ? 0 : tt_error("out of memory");
	if (fd >= 0) {
		FILE *f = fdopen(fd, "r");
		size_t cap = 0;
		if (!f || getdelim(&l.had, &cap, '\0', f) < 0 || ferror(f))
			rc = tt_error("%s: %s", path, strerror(errno ? errno : EIO));
		if (f)
			fclose(f);
		else
			close(fd);
	} else if (errno != ENOENT) {
		rc = tt_error("%s: %s", path, why);
	}
	size_t kept = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		size_t len = tt_exclude_name(funcs[i]->name);
		if (l.had && tt_exclude_listed(l.had, funcs[i]->name, len))
			kept++;
		else
			l.added[l.nadded++] = funcs[i];
	}
	struct tt_out o;
	if (rc == 0 && (rc = tt_out_open(&o, path, true)) == 0)
		rc = tt_out_finish(&o, tt_out_text(&o, tt_exclude_write, &l));
	if (rc == 0) {
		fprintf(out, "  %s: added %zu of them", path, l.nadded);
		for (size_t i = 0; i < l.nadded; i++)
			fprintf(out, "%s%.*s", i ? ", " : " (", (int)tt_exclude_name(l.added[i]->name),
				l.added[i]->name);
		fprintf(out, "%s%s; %zu it named already, the rest of it kept; run with "
			"TICKTRACE_EXCLUDE=%s\n", l.nadded ? ")" : "", l.had ? "" : " (a new list)", kept, path);
	}
	free(l.had);
	free(l.added);
	return rc;
}

/* The functions to leave out of -finstrument-functions, and the flag, and with
 * `exclude_list` merged into that file; how many, or -1 after saying why. */
static int64_t tt_suggest_exclude(const struct tt_an_table *t, const char *exclude_list, FILE *out)
{
	const struct tt_an_entry **funcs = calloc(t->n ? t->n : 1, sizeof *funcs);
	if (!funcs)
		return tt_error("out of memory");
	size_t n = 0;
	uint64_t calls = 0, left_out = 0, dropped = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_an_entry *e = &t->entries[i];
		calls += tt_run_calls(e);
		dropped += e->dropped;
		/* Short: its median call within what recording costs, or most of its calls
		 * erased as shorter than TICKTRACE_MIN_DUR (the median is the kept calls').
		 * (A function with dropped calls alone: how long they take is not known.) */
		bool is_short = e->near_overhead || 2 * e->filtered > e->calls;
		if (e->is_func && e->calls && is_short && tt_exclude_name(e->name))
			funcs[n++] = e;
	}
	qsort(funcs, n, sizeof *funcs, tt_calls_cmp);
	while (n > 0 && tt_run_calls(funcs[n - 1]) * 1000 < calls * TT_SUGGEST_MIN_SHARE)
		n--;
	for (size_t i = 0; i < n; i++)
		left_out += tt_run_calls(funcs[i]);
	if (!n || 2 * left_out <= calls)
		n = 0;
	int rc = 0;
	if (n) {
		char a[32];
		fprintf(out, "leave out of -finstrument-functions (median within %d x what recording "
			"a call costs here, %" PRId64 " ns, or most calls erased as shorter than "
			"TICKTRACE_MIN_DUR; %.1f%% of the run's calls%s):\n", TT_AN_NEAR_OVERHEAD,
			t->overhead_ns, 100.0 * (double)left_out / (double)calls,
			dropped ? ", those dropped with the buffer full counted too" : "");
		for (size_t i = 0; i < n; i++) {
			fprintf(out, "  %s: %" PRIu64 " calls", funcs[i]->name, tt_run_calls(funcs[i]));
			if (funcs[i]->dropped)
				fprintf(out, " (%" PRIu64 " dropped)", funcs[i]->dropped);
			if (2 * funcs[i]->filtered > funcs[i]->calls)
				fprintf(out, ", %" PRIu64 " erased as they returned\n", funcs[i]->filtered);
			else
				fprintf(out, ", median %s\n", tt_an_fmt_ns(a, funcs[i]->p50));
		}
		fputs("  -finstrument-functions-exclude-function-list=", out);
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%s%.*s", i ? "," : "", (int)tt_exclude_name(funcs[i]->name),
				funcs[i]->name);
		fputc('\n', out);
		if (exclude_list)
			rc = tt_exclude_merge(exclude_list, funcs, n, out);
	} else if (exclude_list) {
		fprintf(out, "  %s: nothing to add, left as it was\n", exclude_list);
	}
	free(funcs);
	return rc < 0 ? -1 : (int64_t)n;
}

int tt_suggest_print(const struct tt_an_table *t, int64_t threshold, const char *exclude_list, FILE *out)
{
	char a[32];
	if (threshold == TT_AN_NO_THRESHOLD)
		fputs("suggested markup (no --threshold: no thresholds to suggest):\n", out);
	else
		fprintf(out, "suggested markup (global threshold %s):\n", tt_an_fmt_ns(a, threshold));
	size_t count = threshold != TT_AN_NO_THRESHOLD ? tt_suggest_thresholds(t, out) : 0;
	int64_t left_out = tt_suggest_exclude(t, exclude_list, out);
	if (left_out < 0)
		return -1;
	if (count + (size_t)left_out == 0)
		fputs("  none\n", out);
	return 0;
}
