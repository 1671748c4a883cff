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

/* A library call (TICKTRACE_LIBCALLS' FUNCTION@LIBRARY): the patcher's, which only
 * TICKTRACE_EXCLUDE leaves out; no compiler flag names it. */
static bool tt_library_call(const char *name)
{
	return strchr(name, '@') != NULL;
}

/* Whether the run's functions were patched (the zero-markup build's
 * -fpatchable-function-entry, record -f): its processes loaded libticktrace-detour,
 * whose TICKTRACE_EXCLUDE leaves them unpatched. Otherwise -finstrument-functions'
 * hooks recorded them, which only the compiler's exclude list leaves out. */
static bool tt_run_patched(const struct tt_trace *trace)
{
	static const char detour[] = "libticktrace-detour";
	for (size_t f = 0; f < trace->nfiles; f++)
		for (size_t m = 0; m < trace->files[f].nmodules; m++) {
			const struct tt_str *path = &trace->files[f].modules[m].path;
			if (path->len >= sizeof detour - 1 &&
			    memmem(path->ptr, path->len, detour, sizeof detour - 1))
				return true;
		}
	return false;
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

/* A function to leave out: ranked short over the run, or turned off as it went. */
struct tt_left_out {
	const char *name;            /* the table's name for it, or the trace's */
	const struct tt_an_entry *e; /* its row of the table; NULL: the trace kept none */
	bool ranked;                 /* short, and among those that make most of the calls */
	bool turned_off;             /* the run turned it off (TURNED_OFF) */
};

/* An exclude list (TICKTRACE_EXCLUDE): the lines it had, and the names the new ones. */
struct tt_exclude_list {
	char *had;    /* the file's text, as it was; NULL: none */
	const struct tt_left_out **added;
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
static int tt_exclude_merge(const char *path, const struct tt_left_out *funcs, size_t n, FILE *out)
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
		size_t len = tt_exclude_name(funcs[i].name);
		if (l.had && tt_exclude_listed(l.had, funcs[i].name, len))
			kept++;
		else
			l.added[l.nadded++] = &funcs[i];
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

/* The functions the run turned off (its files' TURNED_OFF sections), added to `funcs`
 * (`n` there, room for `cap`) or marked there, each once: a function turned off pays
 * for its patch until then, in every process, and was short on most of a thread's
 * calls, whatever its share of the calls counted. Their names are the trace's, which
 * live as long as it; one with none (an address alone) cannot be left out by name.
 * The new count. */
static size_t tt_suggest_turned_off(const struct tt_an_table *t, const struct tt_trace *trace,
				    struct tt_left_out *funcs, size_t n, size_t cap, char **names)
{
	for (size_t f = 0; f < trace->nfiles; f++) {
		const struct tt_file *file = &trace->files[f];
		for (size_t k = 0; k < file->nturned_off; k++) {
			const struct tt_site *site = tt_file_site(file, file->turned_off[k].address, UINT64_MAX - 1);
			if (!site || !site->name.len)
				continue;
			size_t len = site->name.len;
			size_t at = 0;
			while (at < n && (strncmp(funcs[at].name, site->name.ptr, len) != 0 || funcs[at].name[len]))
				at++;
			const struct tt_an_entry *e = NULL;
			for (size_t i = 0; at == n && !e && i < t->n; i++)
				if (t->entries[i].is_func && strncmp(t->entries[i].name, site->name.ptr, len) == 0 &&
				    !t->entries[i].name[len])
					e = &t->entries[i];
			if (at == n && n < cap) {
				char *name = e ? NULL : strndup(site->name.ptr, len);
				if (!e && !name)
					continue; /* (out of memory: one said less) */
				names[n] = name;
				funcs[n++] = (struct tt_left_out){.name = e ? e->name : name, .e = e};
			}
			if (at < n)
				funcs[at].turned_off = true;
		}
	}
	return n;
}

/* The functions to leave out, and how for the build the run came from (patched:
 * TICKTRACE_EXCLUDE's list; hooks: -finstrument-functions' exclude flag, library calls
 * in the list alone), and with `exclude_list` merged into that file; how many, or -1
 * after saying why. */
static int64_t tt_suggest_exclude(const struct tt_an_table *t, const struct tt_trace *trace,
				  const char *exclude_list, FILE *out)
{
	size_t turned = 0;
	for (size_t f = 0; f < trace->nfiles; f++)
		turned += trace->files[f].nturned_off;
	size_t cap = t->n + turned + 1;
	const struct tt_an_entry **ranked = calloc(t->n + 1, sizeof *ranked);
	struct tt_left_out *funcs = calloc(cap, sizeof *funcs);
	char **names = calloc(cap, sizeof *names); /* those the trace alone names, copied */
	if (!ranked || !funcs || !names) {
		free(ranked);
		free(funcs);
		free(names);
		return tt_error("out of memory");
	}
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
			ranked[n++] = e;
	}
	qsort(ranked, n, sizeof *ranked, tt_calls_cmp);
	while (n > 0 && tt_run_calls(ranked[n - 1]) * 1000 < calls * TT_SUGGEST_MIN_SHARE)
		n--;
	for (size_t i = 0; i < n; i++)
		left_out += tt_run_calls(ranked[i]);
	if (!n || 2 * left_out <= calls)
		n = 0;
	for (size_t i = 0; i < n; i++)
		funcs[i] = (struct tt_left_out){.name = ranked[i]->name, .e = ranked[i], .ranked = true};
	size_t nranked = n;
	n = tt_suggest_turned_off(t, trace, funcs, n, cap, names);
	size_t listed = 0; /* (those GCC's list can name) */
	for (size_t i = 0; i < n; i++)
		if (tt_exclude_name(funcs[i].name))
			funcs[listed++] = funcs[i];
	n = listed;
	int rc = 0;
	char a[32];
	if (nranked)
		fprintf(out, "leave out (median within %d x what recording "
			"a call costs here, %" PRId64 " ns, or most calls erased as shorter than "
			"TICKTRACE_MIN_DUR; %.1f%% of the run's calls%s):\n", TT_AN_NEAR_OVERHEAD,
			t->overhead_ns, 100.0 * (double)left_out / (double)calls,
			dropped ? ", those dropped with the buffer full counted too" : "");
	for (size_t i = 0; i < n; i++) {
		const struct tt_an_entry *e = funcs[i].e;
		if (!funcs[i].ranked && (i == 0 || funcs[i - 1].ranked))
			fprintf(out, "%s, as the run turned them off (TICKTRACE_TURN_OFF: most of a thread's "
				"calls erased as shorter than TICKTRACE_MIN_DUR; each patch costs until then):\n",
				nranked ? "and" : "leave out");
		fprintf(out, "  %s", funcs[i].name);
		if (!e) {
			fputs(": turned off, no calls kept\n", out);
			continue;
		}
		fprintf(out, ": %" PRIu64 " calls", tt_run_calls(e));
		if (e->dropped)
			fprintf(out, " (%" PRIu64 " dropped)", e->dropped);
		if (2 * e->filtered > e->calls)
			fprintf(out, ", %" PRIu64 " erased as they returned", e->filtered);
		else
			fprintf(out, ", median %s", tt_an_fmt_ns(a, e->p50));
		fputs(funcs[i].turned_off ? (funcs[i].ranked ? ", turned off\n" : " before it was turned off\n") :
					    "\n", out);
	}
	bool patched = tt_run_patched(trace);
	size_t library_calls = 0;
	for (size_t i = 0; i < n; i++)
		library_calls += tt_library_call(funcs[i].name);
	if (n && (patched || library_calls) && !exclude_list)
		fprintf(out, "  %s with TICKTRACE_EXCLUDE=FILE, FILE naming one a line (--exclude-list "
			"FILE writes it)%s\n", patched ? "leave them unpatched" : "leave the library calls out",
			patched ? "" : ": no compiler flag leaves a library call out");
	if (!patched && n > library_calls) {
		fputs("  -finstrument-functions-exclude-function-list=", out);
		for (size_t i = 0, k = 0; i < n; i++)
			if (!tt_library_call(funcs[i].name))
				fprintf(out, "%s%.*s", k++ ? "," : "", (int)tt_exclude_name(funcs[i].name),
					funcs[i].name);
		fputc('\n', out);
	}
	/* (hooks: the list leaves out their library calls alone, the flag the rest) */
	size_t to_list = patched ? n : 0;
	for (size_t i = 0; !patched && i < n; i++)
		if (tt_library_call(funcs[i].name))
			funcs[to_list++] = funcs[i];
	if (to_list && exclude_list)
		rc = tt_exclude_merge(exclude_list, funcs, to_list, out);
	else if (exclude_list)
		fprintf(out, "  %s: nothing to add, left as it was\n", exclude_list);
	for (size_t i = 0; i < cap; i++)
		free(names[i]);
	free(names);
	free(ranked);
	free(funcs);
	return rc < 0 ? -1 : (int64_t)n;
}

int tt_suggest_print(const struct tt_an_table *t, const struct tt_trace *trace, int64_t threshold,
		     const char *exclude_list, FILE *out)
{
	char a[32];
	if (threshold == TT_AN_NO_THRESHOLD)
		fputs("suggested markup (no --threshold: no thresholds to suggest):\n", out);
	else
		fprintf(out, "suggested markup (global threshold %s):\n", tt_an_fmt_ns(a, threshold));
	size_t count = threshold != TT_AN_NO_THRESHOLD ? tt_suggest_thresholds(t, out) : 0;
	int64_t left_out = tt_suggest_exclude(t, trace, exclude_list, out);
	if (left_out < 0)
		return -1;
	if (count + (size_t)left_out == 0)
		fputs("  none\n", out);
	return 0;
}
