/* Live spikes (mode stream): TICKTRACE_SPIKES=PATH (or stderr) has the drain thread
 * run the spike detector of the tools (analysis.h) on every record it writes, and
 * log each spike as soon as the record that ends it is written (the drain writes
 * what threads recorded at least every 0.2 s): as text, the lines `ticktrace spikes`
 * prints, or with PATH ending in .jsonl or .json one JSON object a line, with the keys
 * of `ticktrace spikes --json`. TICKTRACE_SPIKE_THRESHOLD=TIME is the threshold of
 * every scope with no other; TICKTRACE_SPIKE_THRESHOLDS=FILE is a thresholds file as
 * `ticktrace spikes --thresholds` reads it (the same parser, analysis/thresholds.c),
 * read once here at start, before the drain thread runs. The precedence is the tools':
 * TT_THRESHOLD_NS, the file, TT_CHILDREN_THRESHOLD_NS, the global one. A bad file is
 * said on stderr and the log goes on without it. %p in PATH is the process id. Times
 * are nanoseconds since the process started.
 *
 * After a run of dropped events a thread's detector starts again: which scopes were
 * open is not known, so a scope around the gap is not reported. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"

struct tt__spikes_thread {
	struct tt__thread_analysis th;
	struct tt__feed feed;
	struct tt__slot *slot;
};

#define TT__SPIKES_CLOCK_NS 200000000

static struct tt__spikes {
	FILE *out;
	int json;
	struct tt__analysis an;
	struct tt__report_clock clock;
	int64_t measured_ns; /* CLOCK_MONOTONIC when the clock's rate was measured */
	struct tt__thresholds table; /* TICKTRACE_SPIKE_THRESHOLDS; a child after fork keeps it */
	bool table_read;             /* or found bad, and said so: once per run */
} tt__spikes;

/* A JSON string: quotes, backslashes and control bytes escaped. */
static void tt__spikes_json_str(FILE *out, const char *s, size_t n)
{
	fputc('"', out);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void tt__spikes_json_name(FILE *out, const char *key, const struct tt__spike *s, uint64_t name_key)
{
	char name[512];
	size_t n = tt__report_name(NULL, s->thread, name_key, name, sizeof name);
	fprintf(out, "\"%s\":", key);
	tt__spikes_json_str(out, name, n);
}

/* One spike as `ticktrace spikes --json` writes it. */
static void tt__spikes_json(FILE *out, const struct tt__spike *s)
{
	const struct tt__thread_analysis *th = s->thread;
	fputc('{', out);
	tt__spikes_json_name(out, "name", s, s->key);
	fprintf(out, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"thread\":", th->pid, th->tid);
	tt__spikes_json_str(out, th->name, th->name_len);
	fprintf(out, ",\"start_ns\":%" PRId64 ",\"dur_ns\":%" PRId64 ",\"threshold_ns\":%" PRId64
		",\"threshold_from\":\"%s\",\"explained_ns\":%" PRId64,
		s->start, s->dur, s->threshold, tt__spike_threshold_from(s), s->explained);
	if (s->has_split)
		fprintf(out, ",\"on_cpu_ns\":%" PRId64 ",\"preempted_ns\":%" PRId64
			",\"blocked_ns\":%" PRId64, s->split.on_cpu, s->split.preempted, s->split.blocked);
	if (s->text) {
		fputs(",\"description\":", out);
		tt__spikes_json_str(out, s->text, s->text_len);
	}
	fputs(",\"stack\":[", out);
	for (uint32_t i = 0; i < s->depth; i++) {
		fputs(i ? ",{" : "{", out);
		tt__spikes_json_name(out, "name", s, s->stack[i].key);
		fprintf(out, ",\"start_ns\":%" PRId64 ",\"open_ns\":%" PRId64 "}", s->stack[i].start,
			s->start + s->dur - s->stack[i].start);
	}
	fputs("]}\n", out);
}

static int tt__spikes_log(void *ctx, const struct tt__spike *spike)
{
	struct tt__spikes *sp = ctx;
	if (sp->json)
		tt__spikes_json(sp->out, spike);
	else
		tt__spike_print(sp->out, spike);
	fflush(sp->out);
	return 0;
}

static int tt__ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* TICKTRACE_SPIKE_THRESHOLDS=FILE, read once at start: a bad file is said, and the
 * log goes on without it rather than the program stopping. */
static void tt__spikes_read_thresholds(struct tt__thresholds *table)
{
	const char *path = getenv("TICKTRACE_SPIKE_THRESHOLDS");
	if (!path || !*path)
		return;
	struct tt__thresholds_problem problem;
	if (tt__thresholds_load(table, path, &problem) == 0)
		return;
	char why[512];
	fprintf(stderr, "ticktrace: TICKTRACE_SPIKE_THRESHOLDS=%s: %s; spikes are logged without "
		"it\n", path, tt__thresholds_problem_text(&problem, why, sizeof why));
	tt__thresholds_free(table);
}

int tt__spikes_start(void)
{
	struct tt__spikes *sp = &tt__spikes;
	const char *dest = getenv("TICKTRACE_SPIKES");
	if (!dest || !*dest)
		return 0;
	if (!tt__mode->drains) { /* (fed by the drain: stream.c) */
		fprintf(stderr, "ticktrace: TICKTRACE_SPIKES needs TICKTRACE_MODE=stream; "
			"`ticktrace spikes` finds them in the file\n");
		return 0;
	}
	int64_t threshold = TT__NO_THRESHOLD;
	const char *text = getenv("TICKTRACE_SPIKE_THRESHOLD");
	if (text && *text && tt__parse_duration(text, &threshold) < 0) {
		fprintf(stderr, "ticktrace: TICKTRACE_SPIKE_THRESHOLD=%s is not a time (1.5ms, 200us, "
			"2s)\n", text);
		threshold = TT__NO_THRESHOLD;
	}
	if (strcmp(dest, "stderr") == 0) {
		sp->out = stderr;
	} else {
		char path[4096];
		int err = tt__expand_path(dest, path, sizeof path);
		if (err)
			return err;
		/* A new file renamed into place, as the trace: a link or a file planted
		 * at PATH is replaced, not written through; a device or FIFO is written. */
		int in_place;
		int fd = tt__open_output(path, &in_place);
		if (fd < 0)
			return fd;
		sp->out = fdopen(fd, "w");
		if (!sp->out) {
			close(fd);
			return -errno;
		}
		sp->json = tt__ends_with(path, ".jsonl") || tt__ends_with(path, ".json");
	}
	if (!sp->table_read)
		tt__spikes_read_thresholds(&sp->table);
	sp->table_read = true;
	sp->an = (struct tt__analysis){
		.find_spikes = true, .threshold = threshold,
		.global_from = "TICKTRACE_SPIKE_THRESHOLD", .rules = sp->table.rules,
		.nrules = sp->table.nrules, .name = tt__report_name, .spike = tt__spikes_log, .ctx = sp,
	};
	return 0;
}

static void tt__spikes_forget(struct tt__slot *slot);

/* TSC ticks to ns at the rate measured since start, measured again every
 * TT__SPIKES_CLOCK_NS. */
static void tt__spikes_clock(struct tt__spikes *sp)
{
	struct tt_anchor now;
	tt__anchor_now(&now);
	if (sp->clock.hz && now.monotonic_ns - sp->measured_ns < TT__SPIKES_CLOCK_NS)
		return;
	int64_t ns = now.monotonic_ns - tt__start_anchor.monotonic_ns;
	uint64_t ticks = now.tsc - tt__start_anchor.tsc;
	sp->clock.tsc0 = tt__start_anchor.tsc;
	if (ns > 0)
		sp->clock.hz = (uint64_t)((unsigned __int128)ticks * 1000000000 / (uint64_t)ns);
	if (!sp->clock.hz)
		sp->clock.hz = 1000000000;
	sp->measured_ns = now.monotonic_ns;
}

/* A thread's detector, made on its first records. */
static struct tt__spikes_thread *tt__spikes_thread(struct tt__slot *slot)
{
	struct tt__spikes *sp = &tt__spikes;
	if (slot->spikes)
		return slot->spikes;
	struct tt__spikes_thread *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->slot = slot;
	tt__thread_analysis_init(&t->th, &sp->an, t);
	t->th.pid = (uint32_t)getpid();
	t->th.tid = slot->tid;
	t->th.name = slot->name;
	t->th.name_len = (uint32_t)strnlen(slot->name, sizeof slot->name);
	t->feed = (struct tt__feed){.th = &t->th, .ns = tt__report_ns, .clock = &sp->clock,
				    .key = tt__record_key};
	slot->spikes = t;
	return t;
}

void tt__spikes_feed(struct tt__slot *slot, const struct tt_record *begin, const struct tt_record *end)
{
	struct tt__spikes *sp = &tt__spikes;
	if (!sp->out || sp->an.oom)
		return;
	tt__spikes_clock(sp);
	while (begin < end) {
		const struct tt_record *gap = begin;
		while (gap < end && TT_RECORD_KIND(gap->word) != TT_REC_DROPPED)
			gap++;
		struct tt__spikes_thread *t = tt__spikes_thread(slot);
		if (!t || tt__feed_records(&t->feed, begin, (size_t)(gap - begin)) < 0)
			return;
		if (gap == end)
			return;
		/* Events were lost: start again after the gap's two records. */
		tt__spikes_forget(slot);
		begin = gap + 2 < end ? gap + 2 : end;
	}
}

void tt__spikes_states(void *ctx, struct tt__slot *slot, uint64_t lost, int64_t since_ns,
		       const struct tt_sched_state *states, size_t n)
{
	(void)ctx;
	struct tt__spikes *sp = &tt__spikes;
	if (!sp->out || sp->an.oom)
		return;
	tt__spikes_clock(sp);
	struct tt__spikes_thread *t = tt__spikes_thread(slot);
	/* On the detector's clock: ns since the start anchor (tt__report_ns). */
	if (t)
		tt__thread_sched_section(&t->th, lost, since_ns, states, n, tt__start_anchor.monotonic_ns);
}

static void tt__spikes_forget(struct tt__slot *slot)
{
	struct tt__spikes_thread *t = slot->spikes;
	if (!t)
		return;
	tt__thread_analysis_free(&t->th);
	free(t);
	slot->spikes = NULL;
}

/* A thread's records are all written: what it left open is closed at its last event,
 * as `ticktrace spikes` does. */
void tt__spikes_retire(struct tt__slot *slot)
{
	if (slot->spikes)
		tt__feed_finish(&slot->spikes->feed);
	tt__spikes_forget(slot);
}

void tt__spikes_finish(void)
{
	struct tt__spikes *sp = &tt__spikes;
	if (sp->out && sp->out != stderr)
		fclose(sp->out);
	sp->out = NULL;
	sp->an.rules = NULL;
	sp->an.nrules = 0;
	tt__thresholds_free(&sp->table);
}

/* In the child after fork: its spikes go to a file of its own. */
void tt__spikes_after_fork(void)
{
	struct tt__spikes *sp = &tt__spikes;
	if (!sp->out)
		return;
	if (sp->out != stderr)
		fclose(sp->out);
	struct tt__thresholds table = sp->table;
	*sp = (struct tt__spikes){.table = table, .table_read = true};
	if (tt__spikes_start() < 0)
		fprintf(stderr, "ticktrace: the child process %d cannot log its spikes\n", (int)getpid());
}
