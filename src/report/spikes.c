/* Live spikes: TICKTRACE_SPIKES=PATH (or stderr) runs the spike detector of the tools
 * (analysis.h) on every record, off the recording threads, and logs each spike soon
 * after the record that ends it: in mode stream, the drain thread as it writes them
 * (at least every 0.2 s); in modes stop and ring, which keep their records in
 * memory, the thread tt-spikes, which reads each thread's new records from its
 * chunks every TT__SPIKES_POLL_NS (tt__spikes_poll). Records a ring overwrote before
 * they were read are counted, and said in the log. The log is text, the lines `ticktrace spikes`
 * prints, or with PATH ending in .jsonl or .json one JSON object a line (PATH as set:
 * a child's PATH.PID is JSON as its parent's), with the keys
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

#include "report/report.h"

/* Where tt-spikes stopped in a thread's chunks: the chunk, its place in the list
 * (tt__chunks_front) and its first record (a ring recycles chunks, and reuses them for
 * any thread; a thread's last chunk moves when it exits), how many of its records
 * were read, and whether they are all it holds, its successor (at place + 1) begun. */
struct tt__spikes_place {
	struct tt_record first;
	uint32_t read;
	const struct tt__chunk *chunk;
	uint64_t at;
	bool whole;
};

struct tt__spikes_thread {
	struct tt_an_thread th;
	struct tt_an_feed feed;
	struct tt__slot *slot;
	/* tt-spikes' (modes stop and ring) */
	struct tt__spikes_place at;   /* at.read 0: from the thread's first chunk */
	uint64_t recycled;            /* its slot's when it was last read */
	uint64_t kept;                /* events read that its chunks still hold */
	uint64_t overwritten;         /* its TT_DROP_OVERWRITTEN when last read */
	struct tt__sched_cursor states;
	uint64_t counters;            /* its counters' readings read */
	bool read_due;                /* a spike among the records read now takes a reading */
	/* The record that opened its first scope or function, looked for in its first
	 * records as they are read (opener_left of them still to look at), and the name
	 * the tools give the thread by it ("lbzip2: worker_thread_proc"; empty: none) */
	struct tt_record opener;
	size_t opener_left;
	char made_name[TT__COMM_MAX + TT__NAME_MAX];
	bool name_kept; /* its name kept: not the process's at its start, or its first scope nameless */
	bool retired;                 /* it exited, and all it recorded was read */
	/* Its part of tt-spikes' share (tt__spikes_share): the chunks it had taken at
	 * rate_at, its rate since (records a ns); held to the share: not read before
	 * held_until (held: since it was last read, ever_held: in the run) */
	uint64_t chunks_then;
	int64_t rate_at, held_until;
	double rate;
	bool held, ever_held;
};

/* tt-spikes held to its share (tt__spikes_share): the process's CPU time as last read,
 * and when (and as last read within a look); since and until when a thread is held (0:
 * none), how long one was in all, the longest hold, the threads held in the run; what its reading cost (CPU time and
 * records read, snapshots left out); the events the rings overwrote before it read
 * them, and those it passed over, in all and of the threads that lost most (said at
 * exit: their spikes were not found). */
#define TT__SPIKES_UNREAD_SAID 4
struct tt__spikes_held {
	int64_t process_ns, process_at_ns, process_seen_ns, since_ns, until_ns, held_ns, longest_ns;
	uint64_t threads_held;
	double read_ns, read_records;
	uint64_t unread, skipped;
	struct { uint32_t tid; uint64_t events; } threads[TT__SPIKES_UNREAD_SAID];
};

#define TT__SPIKES_CLOCK_NS 200000000
#define TT__SPIKES_POLL_NS 20000000 /* tt-spikes reads what threads recorded: 20 ms */
#define TT__SPIKES_IDLE_NS 100000000 /* and up to 100 ms apart while they record nothing */
#define TT__SPIKES_END_WAIT_NS 200000 /* and 0.2 ms at least, where a snapshot's window is to end */

static struct tt__spikes {
	bool on;   /* the detector runs: for the log, or for snapshots */
	FILE *out; /* the log, or NULL */
	struct tt__fd log; /* its descriptor, checked before each write (the program may close it) */
	int json;
	char path[4096];           /* the log's, for what is said of it */
	uint64_t entries, lost;    /* spikes and notes given to the log; those it lost */
	int64_t whole;             /* a file's log: where its last whole entry ends */
	int lost_errno;            /* why the first was lost */
	struct tt__spikes_bound bound; /* TICKTRACE_SPIKES_LOG_MAX (spikes_log.c) */
	struct tt_an an;
	struct tt_clock clock; /* ns since the start anchor */
	int64_t measured_ns; /* CLOCK_MONOTONIC when the clock's rate was measured */
	struct tt_an_thresholds table; /* TICKTRACE_SPIKE_THRESHOLDS; a child after fork keeps it */
	bool table_read;             /* or found bad, and said so: once per run */
	struct tt__lock poll_lock;  /* tt__spikes_poll: tt-spikes', or the last at exit */
	bool snapshots; /* it runs for them (too) */
	int64_t cpu_ns; /* tt-spikes' CPU time after its last look */
	int64_t written_ns; /* of it, what copying and writing snapshots took (the share holds the rest) */
	struct tt__spikes_held held; /* its share (tt__spikes_share) */
	int64_t end_ns; /* after its last look, the ns until a snapshot's window waiting ends */
} tt__spikes = {.poll_lock = TT__LOCK_INIT(TT__LOCK_SPIKES_POLL)};

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

static void tt__spikes_json_name(FILE *out, const char *key, const struct tt_an_spike *s, uint64_t name_key)
{
	char name[512];
	size_t n = tt__report_name(NULL, s->thread, name_key, name, sizeof name);
	fprintf(out, "\"%s\":", key);
	tt__spikes_json_str(out, name, n);
}

/* One spike as `ticktrace spikes --json` writes it. */
static void tt__spikes_json(FILE *out, const struct tt_an_spike *s)
{
	const struct tt_an_thread *th = s->thread;
	fputc('{', out);
	tt__spikes_json_name(out, "name", s, s->key);
	fprintf(out, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"thread\":", th->pid, th->tid);
	tt__spikes_json_str(out, th->name, th->name_len);
	fprintf(out, ",\"start_ns\":%" PRId64 ",\"dur_ns\":%" PRId64 ",\"threshold_ns\":%" PRId64
		",\"threshold_from\":\"%s\",\"explained_ns\":%" PRId64,
		s->start, s->dur, s->threshold, tt_an_spike_threshold_from(s), s->explained);
	if (s->end_late_ns)
		fprintf(out, ",\"end_late_ns\":%" PRId64, s->end_late_ns);
	if (s->has_split)
		fprintf(out, ",\"on_cpu_ns\":%" PRId64 ",\"preempted_ns\":%" PRId64
			",\"blocked_ns\":%" PRId64 ",\"unknown_ns\":%" PRId64, s->split.on_cpu,
			s->split.preempted, s->split.blocked, s->split.unknown);
	/* (the keys and values `spikes --json` and the marks give) */
	struct tt_an_arg args[TT_AN_CAUSES_ARGS];
	size_t n = tt_an_causes_args(args, &s->causes);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, ",\"%s\":", args[i].key);
		if (args[i].text)
			tt__spikes_json_str(out, args[i].text, strlen(args[i].text));
		else
			fprintf(out, "%" PRId64, args[i].number);
	}
	char why[TT_AN_NO_SPLIT_TEXT];
	if (s->has_split && tt_an_unknown_text(&s->causes, why, sizeof why)) {
		fputs(",\"unknown_why\":", out);
		tt__spikes_json_str(out, why, strlen(why));
	}
	if (!s->has_split) {
		fputs(",\"no_split\":", out);
		tt_an_no_split_text(&s->causes, th->no_states, why, sizeof why);
		tt__spikes_json_str(out, why, strlen(why));
	}
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

/* The entry just printed (a spike `s`, or a note of `events` overwritten, or passed over:
 * `skipped`), out to the log: one the log could not take whole (a full disk, the file
 * size limit, a FIFO whose reader takes nothing) is counted, and said at exit; one it
 * took, held to its bound. */
static void tt__spikes_flush(struct tt__spikes *sp, const struct tt_an_spike *s, uint64_t events, bool skipped)
{
	/* (stderr is the program's: its error state is left alone, and a loss there could
	 * be said nowhere) */
	if (sp->out == tt__err) {
		fflush(tt__err);
		return;
	}
	sp->entries++;
	/* A program that closed it (closefrom, close_range, as daemons do): the same file
	 * again, by its name, on from its last whole entry. */
	if (!tt__fd_ours(&sp->log) && tt__fd_reopen(&sp->log, sp->path) == 0 && sp->whole >= 0)
		tt_os_file_seek(&sp->log.file, (uint64_t)sp->whole);
	errno = 0;
	int64_t from = sp->whole;
	if (fflush(sp->out) == 0 && !ferror(sp->out)) {
		if (tt__fd_ours(&sp->log))
			sp->whole = tt_os_file_offset(&sp->log.file);
		tt__spikes_bound_add(&sp->bound, &sp->log, sp->path, sp->json, from, &sp->whole, s, events, skipped);
		return;
	}
	if (!sp->lost++)
		sp->lost_errno = errno ? errno : EIO;
	tt__stdio_drop(sp->out); /* (nothing of it left to go out with the next) */
	/* A file keeps whole entries only, as a reader of lines expects: what the disk
	 * took of this one is cut off (a FIFO's or device's cannot be, and its offset is
	 * -1). */
	if (sp->whole >= 0 && tt__fd_ours(&sp->log) && tt_os_file_resize(&sp->log.file, (uint64_t)sp->whole) == 0)
		tt_os_file_seek(&sp->log.file, (uint64_t)sp->whole);
}

/* The thread's states since the last look to its detector, and up to when they hold
 * all its switches (as a file's do up to its exit). */
static void tt__spikes_read_states(struct tt__spikes_thread *t)
{
	int64_t known = tt__sched_read_new(t->slot, &t->states, tt__spikes_states, NULL);
	if (t->feed.th && known != INT64_MIN) /* (on the detector's clock) */
		t->th.states.complete_ns = known - tt__start_anchor.monotonic_ns;
}

/* A spike found among the records a look copied: its thread's counters read now, once
 * for those records (after all of them: after the spike's end), so that its split has
 * the reading after it where tt-sched read none yet. A look that finds none reads no
 * /proc file. */
static void tt__spikes_before_split(void *ctx, struct tt_an_thread *th)
{
	(void)ctx;
	struct tt__spikes_thread *t = th->ctx;
	if (!t->read_due)
		return;
	t->read_due = false;
	tt__counters_read_new(t->slot, 1, &t->counters, tt__spikes_counters, NULL);
	/* (and its switches up to after that reading: the file's split has them, its
	 * stretch under way at the reading known, and the waits after wake-ups that reading
	 * bounds; without them the live log said all of a 16 ms sleep "may hold" such waits
	 * where the file's split moved 9.98 ms of them, within 59 us: outside test r48 F2) */
	tt__spikes_read_states(t);
}

/* The thread's name as the files of the run give it (tools/read/thread_names.c): one
 * nobody named, not the main thread, bears the process's name, which Linux gave it,
 * and is named after what it ran first ("lbzip2: worker_thread_proc"), the record
 * its slot kept as it left its first chunk (a ring may have taken it since), else
 * that of those read; made once. */
static void tt__spikes_name(struct tt__spikes_thread *t)
{
	struct tt__slot *slot = t->slot;
	if (slot->named || slot->tid == tt_os_process_id()) {
		t->th.name = slot->name;
		t->th.name_len = (uint32_t)strnlen(slot->name, sizeof slot->name);
		return;
	}
	const struct tt_record *opener =
		__atomic_load_n(&slot->opener_looked, __ATOMIC_ACQUIRE) ? &slot->opener : &t->opener;
	if (!t->made_name[0] && opener->word && !t->name_kept) {
		char process[TT__COMM_MAX], scope[TT__NAME_MAX];
		size_t len = tt__process_name(process);
		uint64_t payload = TT_RECORD_PAYLOAD(opener->word);
		t->name_kept = len != strnlen(slot->name, sizeof slot->name) || memcmp(process, slot->name, len) != 0;
		if (t->name_kept)
			return;
		uint64_t key = tt__record_key(payload, opener->tsc) |
			       (TT_RECORD_KIND(opener->word) == TT_REC_FUNC_ENTER ? TT_KEY_FUNC : 0);
		size_t n = tt__report_name(NULL, &t->th, key, scope, sizeof scope);
		t->name_kept = !n;
		if (t->name_kept)
			return;
		snprintf(t->made_name, sizeof t->made_name, "%.*s: %.*s", (int)len, process, (int)n, scope);
	}
	if (!t->made_name[0])
		return;
	t->th.name = t->made_name;
	t->th.name_len = (uint32_t)strlen(t->made_name);
}

/* A spike: logged, and its snapshot taken. */
static int tt__spikes_found(void *ctx, const struct tt_an_spike *spike)
{
	struct tt__spikes *sp = ctx;
	struct tt__spikes_thread *t = spike->thread->ctx;
	t->th.no_states = tt__sched_no_states(t->slot); /* (said as it is now) */
	tt__spikes_name(t);
	tt__snapshot_spike(spike, &sp->clock, t->slot->index);
	if (!sp->out)
		return 0;
	if (sp->json)
		tt__spikes_json(sp->out, spike);
	else
		tt_an_spike_print(sp->out, spike);
	tt__spikes_flush(sp, spike, 0, false);
	return 0;
}

/* TICKTRACE_SPIKE_THRESHOLDS=FILE, read once at start: a bad file is said, and the
 * log goes on without it rather than the program stopping. */
static void tt__spikes_read_thresholds(struct tt_an_thresholds *table)
{
	const char *path = getenv("TICKTRACE_SPIKE_THRESHOLDS");
	if (!path || !*path)
		return;
	struct tt_an_thresholds_problem problem;
	if (tt_an_thresholds_load(table, path, &problem) == 0)
		return;
	char why[512];
	fprintf(tt__err, "ticktrace: TICKTRACE_SPIKE_THRESHOLDS=%s: %s; spikes are logged without "
		"it\n", path, tt_an_thresholds_problem_text(&problem, why, sizeof why));
	tt_an_thresholds_free(table);
}

static void *tt__spikes_main(void *unused);

/* The log at the path made from TICKTRACE_SPIKES=dest (sp->path); 0 or -errno. */
static int tt__spikes_open_log(struct tt__spikes *sp, const char *dest)
{
	char *path = sp->path;
	int err = tt__expand_path(dest, path, sizeof sp->path);
	if (err) {
		*path = 0; /* (not a path: cut short) */
		return err;
	}
	/* A new file put in place as the trace at a name given: a link or a file from
	 * before the run at PATH is replaced, not written through; another process's
	 * there (another run's of the same name, still logging) is kept, this one's beside
	 * it, said; a device or FIFO is written. (None made below a small limit, where
	 * none is kept.) */
	int in_place;
	err = tt__fd_room();
	if (!err)
		err = tt__fd_keep(&sp->log, (struct tt_os_file){tt__open_output(dest, path, sizeof sp->path, "spike log",
										 "TICKTRACE_SPIKES", &in_place)});
	if (err)
		return err;
	sp->out = tt__fd_stdio(&sp->log);
	if (!sp->out) {
		err = -errno;
		tt__fd_close(&sp->log);
		return err;
	}
	sp->json = tt__format_is(dest, ".jsonl") || tt__format_is(dest, ".json");
	tt__spikes_bound_start(&sp->bound, !in_place);
	return 0;
}

void tt__spikes_start(void)
{
	struct tt__spikes *sp = &tt__spikes;
	const char *dest = getenv("TICKTRACE_SPIKES");
	bool snapshots = tt__snapshots_start();
	if ((!dest || !*dest) && !snapshots)
		return;
	int64_t threshold = TT_AN_NO_THRESHOLD;
	const char *text = getenv("TICKTRACE_SPIKE_THRESHOLD");
	/* (what a bad one leaves: the default) */
	char then[200];
	snprintf(then, sizeof then, "using the default, none: only the thresholds in the code "
		 "(TT_THRESHOLD_NS) and TICKTRACE_SPIKE_THRESHOLDS' file find spikes to log%s",
		 snapshots ? " and snapshots to take" : "");
	if (text && *text && tt_an_parse_duration(text, &threshold) == -1) {
		fprintf(tt__err, "ticktrace: TICKTRACE_SPIKE_THRESHOLD=%s is not a time (1.5ms, 200us, "
			"2s: a number and its unit); %s\n", text, then);
		threshold = TT_AN_NO_THRESHOLD;
	} else if (text && *text &&
		   !tt_time_in_range("TICKTRACE_SPIKE_THRESHOLD", text, threshold, tt__err, then)) {
		threshold = TT_AN_NO_THRESHOLD;
	}
	if (!dest || !*dest) {
		sp->out = NULL; /* snapshots only */
	} else if (strcmp(dest, "stderr") == 0) {
		sp->out = tt__err;
		snprintf(sp->path, sizeof sp->path, "stderr");
	} else {
		int err = tt__spikes_open_log(sp, dest);
		if (err) {
			/* (the path as made from DEST: %p, an exec'd image's or a child's name) */
			/* (another user's file in /tmp said as every output's is: r49 F8) */
			char why[160];
			if (!((err == -EPERM || err == -EACCES) && *sp->path &&
			      tt__output_theirs(sp->path, why, sizeof why)))
				tt__fd_why(err, why, sizeof why);
			fprintf(tt__err, "ticktrace: cannot log spikes to %s (TICKTRACE_SPIKES=%s): %s%s\n",
				*sp->path ? sp->path : dest, dest, why, snapshots ? "; snapshots are taken still" : "");
			if (!snapshots)
				return;
			sp->out = NULL; /* (tt-spikes writes the snapshots, the triggers' too) */
		}
	}
	if (!sp->table_read)
		tt__spikes_read_thresholds(&sp->table);
	sp->table_read = true;
	sp->an = (struct tt_an){
		.find_spikes = true, .threshold = threshold,
		.global_from = "TICKTRACE_SPIKE_THRESHOLD", .rules = sp->table.rules,
		.nrules = sp->table.nrules, .name = tt__report_name, .before_split = tt__spikes_before_split,
		.spike = tt__spikes_found, .ctx = sp,
	};
	sp->on = true;
	sp->snapshots = snapshots;
	/* A draining mode feeds the detector as it writes (stream.c); the others keep
	 * their records, which tt-spikes reads. Running (its tid known) before start-up
	 * goes on: the zero-markup build's patcher, next, counts any thread not known as
	 * ticktrace's as the program's and patches nothing. */
	int err = tt__mode->drains ? 0 : tt__start_thread(NULL, tt__spikes_main, NULL, !tt__forked);
	if (err)
		fprintf(tt__err, "ticktrace: no thread for the spike detector (tt-spikes): %s: no spike "
			"is logged nor snapshot taken\n", strerror(-err));
}

struct tt__fd *tt__spikes_log(void)
{
	struct tt__spikes *sp = &tt__spikes;
	return sp->out && sp->out != tt__err ? &sp->log : NULL; /* (stderr: the program's) */
}

static void tt__spikes_forget(struct tt__slot *slot);
static void tt__spikes_restart(struct tt__spikes_thread *t);

/* TSC ticks to ns at the rate measured since start, measured again every
 * TT__SPIKES_CLOCK_NS. */
static void tt__spikes_clock(struct tt__spikes *sp)
{
	struct tt_anchor now;
	tt_os_anchor(&now);
	if (sp->clock.hz && now.monotonic_ns - sp->measured_ns < TT__SPIKES_CLOCK_NS)
		return;
	uint64_t hz = tt_os_anchor_hz(&tt__start_anchor, &now);
	if (!hz)
		hz = sp->clock.hz ? sp->clock.hz : 1000000000;
	tt_clock_set(&sp->clock, tt__start_anchor.tsc, 0, hz);
	sp->measured_ns = now.monotonic_ns;
}

/* A thread's detector, made on its first records. */
static struct tt__spikes_thread *tt__spikes_thread(struct tt__slot *slot)
{
	if (slot->spikes)
		return slot->spikes;
	struct tt__spikes_thread *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	tt__arena_holds(t); /* (its slot's) */
	t->slot = slot;
	t->opener_left = TT_FIRST_OPENER_RECORDS;
	t->rate_at = tt_os_monotonic_ns();
	tt__spikes_restart(t);
	slot->spikes = t;
	return t;
}

/* A thread's detector from scratch: which scopes were open is not known (after a
 * gap). Its states and counters' readings are kept: facts about the thread, not
 * about the records lost, and those of the records after the gap were read already
 * (tt-spikes reads them up to now, the records a few chunks at a time). */
static void tt__spikes_restart(struct tt__spikes_thread *t)
{
	struct tt__spikes *sp = &tt__spikes;
	struct tt_an_states states = {.last_ns = INT64_MIN};
	struct tt_an_counters counters = {0};
	if (t->feed.th) {
		states = t->th.states;
		counters = t->th.counters;
		t->th.states = (struct tt_an_states){0};
		t->th.counters = (struct tt_an_counters){0};
		tt_an_thread_free(&t->th);
		tt_an_feed_free(&t->feed);
	}
	tt_an_thread_init(&t->th, &sp->an, t);
	t->th.states = states;
	t->th.counters = counters;
	t->th.pid = tt_os_process_id();
	t->th.tid = t->slot->tid;
	t->th.name = t->slot->name;
	t->th.name_len = (uint32_t)strnlen(t->slot->name, sizeof t->slot->name);
	t->feed = (struct tt_an_feed){.th = &t->th, .clock = &sp->clock,
				    .key = tt__record_key};
}

/* A thread's records to its detector; `gaps`: a run of dropped events may be among them. */
static void tt__spikes_feed_gaps(struct tt__slot *slot, const struct tt_record *begin,
				 const struct tt_record *end, bool gaps)
{
	struct tt__spikes *sp = &tt__spikes;
	if (!sp->on || sp->an.oom)
		return;
	tt__spikes_clock(sp);
	struct tt__spikes_thread *t = tt__spikes_thread(slot);
	const struct tt_record *opener = t && t->opener_left ? tt_first_opener(begin, end, &t->opener_left) : NULL;
	if (opener) {
		t->opener = *opener;
		t->opener_left = 0;
	}
	while (begin < end) {
		const struct tt_record *gap = gaps ? begin : end;
		while (gap < end && TT_RECORD_KIND(gap->word) != TT_REC_DROPPED)
			gap++;
		if (!t || tt_an_feed_records(&t->feed, begin, (size_t)(gap - begin)) < 0)
			return;
		if (gap == end)
			return;
		/* Events were lost: start again after the gap's two records. */
		tt__spikes_restart(t);
		begin = gap + 2 < end ? gap + 2 : end;
	}
}

void tt__spikes_feed(struct tt__slot *slot, const struct tt_record *begin, const struct tt_record *end)
{
	tt__spikes_feed_gaps(slot, begin, end, true);
}

/* The detector of a slot whose states or counters come, while it runs (NULL: not). */
static struct tt__spikes_thread *tt__spikes_running(struct tt__slot *slot)
{
	struct tt__spikes *sp = &tt__spikes;
	if (!sp->on || sp->an.oom)
		return NULL;
	tt__spikes_clock(sp);
	return tt__spikes_thread(slot);
}

void tt__spikes_states(void *ctx, struct tt__slot *slot, uint64_t lost, int64_t since_ns,
		       const struct tt_sched_state *states, size_t n)
{
	(void)ctx;
	struct tt__spikes_thread *t = tt__spikes_running(slot);
	/* On the detector's clock: ns since the start anchor. */
	if (t)
		tt_an_thread_sched_section(&t->th, lost, since_ns, states, n, tt__start_anchor.monotonic_ns);
}

void tt__spikes_counters(void *ctx, struct tt__slot *slot, uint64_t lost,
			 const struct tt_schedstat_sample *readings, size_t n)
{
	(void)ctx;
	(void)lost; /* (a missing reading only makes a split coarser, which it says) */
	struct tt__spikes_thread *t = tt__spikes_running(slot);
	/* (under the sched lock, as its sections are written: their flags) */
	if (t)
		tt_an_thread_counters(&t->th, readings, n, tt__counters_flags(slot, readings, n),
				      tt__start_anchor.monotonic_ns);
}

static void tt__spikes_forget(struct tt__slot *slot)
{
	struct tt__spikes_thread *t = slot->spikes;
	if (!t)
		return;
	if (t->feed.th) {
		tt_an_thread_free(&t->th);
		tt_an_feed_free(&t->feed);
	}
	free(t);
	slot->spikes = NULL;
}

/* What a thread left open is closed at its exit where its states say when (pthread_exit,
 * cancelled: it was in them until then), else at its last event, as `ticktrace spikes`
 * does; where its buffer was used up, at its last event, each spike saying it may have
 * ended up to its exit, or now (the recording's end: before, a stop-mode main's scope
 * ended at its last kept record, 500 ms before the program left it, nothing said).
 * `exit_ns`: tt__thread_exit_ns's. */
static void tt__spikes_close_open(struct tt__spikes_thread *t, int64_t exit_ns)
{
	/* (on the detector's clock: ns since the start anchor) */
	int64_t exit_at = exit_ns > 0 ? exit_ns - tt__start_anchor.monotonic_ns : INT64_MIN;
	bool dropped = __atomic_load_n(&t->slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_EXHAUSTED;
	tt_an_feed_finish(&t->feed, exit_at, !dropped ? INT64_MIN : exit_ns > 0 ? exit_at
						 : tt_os_monotonic_ns() - tt__start_anchor.monotonic_ns);
}

/* A thread's records are all written (and its exit's time set). */
void tt__spikes_retire(struct tt__slot *slot)
{
	if (slot->spikes)
		tt__spikes_close_open(slot->spikes, tt__thread_exit_ns(slot));
	tt__spikes_forget(slot);
}

/* Events of thread `tid` tt-spikes did not read (a ring overwrote them first, or it
 * passed over them: `skipped`), counted for exit: in all, and by thread for the
 * TT__SPIKES_UNREAD_SAID that lost most. */
static void tt__spikes_count_unread(struct tt__spikes_held *h, uint32_t tid, uint64_t events, bool skipped)
{
	*(skipped ? &h->skipped : &h->unread) += events;
	unsigned least = 0;
	for (unsigned i = 0; i < TT__SPIKES_UNREAD_SAID; i++) {
		if (h->threads[i].tid == tid && h->threads[i].events) {
			h->threads[i].events += events;
			return;
		}
		least = h->threads[i].events < h->threads[least].events ? i : least;
	}
	if (h->threads[least].events < events)
		h->threads[least].tid = tid, h->threads[least].events = events;
}

/* tt-spikes' share (tt__spikes_share): 5 % of the process's CPU time, */
#define TT__SPIKES_SHARE_PCT 5.0
/* past its first 20 ms (a short run's first reading and snapshots), */
#define TT__SPIKES_SHARE_FREE_NS 20000000
/* or one CPU's 2 % since the run began where more: a program that mostly sleeps has its
 * idle time's part */
#define TT__SPIKES_SHARE_WALL_PCT 2.0
#define TT__SPIKES_HELD_MAX_NS 5000000000 /* a thread held is read 5 s apart at most */

/* The log's line for events of a thread that tt-spikes did not read: a ring overwrote
 * them first, or it passed over them (`skipped`: held to its share, it read the newest
 * first, for the snapshots' windows: tt__spikes_pass_over); spikes among them are not
 * found; and whether it was held to its share then. A note, not a spike: no "name" nor
 * "dur_ns" (a reader of spikes takes the lines with them; ticktrace(7)), and in text no
 * "spike: " at its start. */
static void tt__spikes_say_unread(struct tt__spikes *sp, struct tt__spikes_thread *t, uint64_t events,
				  bool skipped)
{
	const struct tt__slot *slot = t->slot;
	tt__spikes_count_unread(&sp->held, slot->tid, events, skipped);
	if (!sp->out)
		return;
	tt__spikes_name(t);
	int name_len = (int)t->th.name_len;
	if (sp->json) {
		fprintf(sp->out, "{\"%s\":%" PRIu64 ",\"pid\":%d,\"tid\":%" PRIu32 ",\"thread\":",
			skipped ? "skipped_events" : "overwritten_events", events, (int)tt_os_process_id(), slot->tid);
		tt__spikes_json_str(sp->out, t->th.name, (size_t)name_len);
		if (t->held)
			fprintf(sp->out, ",\"detector_share_pct\":%.0f", TT__SPIKES_SHARE_PCT);
		fputs("}\n", sp->out);
	} else {
		fprintf(sp->out, "thread %" PRIu32 " (%.*s): %" PRIu64 " events %s", slot->tid, name_len, t->th.name,
			events, skipped ? "passed over by the spike detector, which read its newest first for the "
					  "snapshots" : "overwritten by the ring before the spike detector read them");
		if (t->held)
			fprintf(sp->out, " (it held this thread to its share of the program's CPU time, "
				"%.0f%%)", TT__SPIKES_SHARE_PCT);
		fputs(": spikes among them are not reported\n", sp->out);
	}
	tt__spikes_flush(sp, NULL, events, skipped);
}

/* Whether chunk c holds, at its start, the records where tt-spikes stopped. */
static bool tt__spikes_there(const struct tt__chunk *c, const struct tt__spikes_place *at)
{
	const struct tt_record *first = (const struct tt_record *)(c + 1);
	return c->size > sizeof *c && first->tsc == at->first.tsc && first->word == at->first.word;
}

/* The chunk where tt-spikes stopped, or NULL: recycled by a ring. Its place is kept,
 * not looked for (a ring's list is hundreds of chunks long, and a look read a few
 * chunks each time from its front: a tenth of tt-spikes' time); a thread's last chunk
 * moved at its exit is found from the front. `*at` then says where it is. */
static const struct tt__chunk *tt__spikes_find(const struct tt__slot *slot, struct tt__spikes_place *at)
{
	if (__atomic_load_n(&slot->recycled, __ATOMIC_SEQ_CST) > at->at)
		return NULL;
	if (tt__spikes_there(at->chunk, at))
		return at->chunk;
	uint64_t place;
	for (const struct tt__chunk *c = tt__chunks_front(slot, &place); c;
	     c = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE), place++) {
		if (tt__spikes_there(c, at)) {
			at->chunk = c;
			at->at = place;
			return c;
		}
	}
	return NULL;
}

/* tt-spikes copies a thread's new records, as a reader (tt__reading: a chunk it
 * found keeps its records until it is done, while the ring goes on recycling), and
 * feeds them to the detector once it let go: at most
 * TT__SPIKES_COPY_RECORDS at a time, so that a thread recording faster than the
 * detector reads never grows for long, and at most TT__SPIKES_COPIES times a look
 * (the rest, if a ring overwrites it, is counted and said). */
#define TT__SPIKES_COPY_RECORDS (4 * TT__CHUNK_RECORDS)
#define TT__SPIKES_COPIES 64
static struct tt_record tt__spikes_copy[TT__SPIKES_COPY_RECORDS];

/* Snapshots copied and written since tt-spikes' CPU time was `from_ns`: what that
 * took, counted apart (poll lock; the exit's account reads it). */
static int64_t tt__spikes_wrote(struct tt__spikes *sp, int64_t from_ns)
{
	int64_t took = tt_os_thread_cpu_ns() - from_ns;
	__atomic_store_n(&sp->written_ns, sp->written_ns + took, __ATOMIC_RELAXED);
	return took;
}

/* What the floor of tt-spikes' share leaves it now (ns; below 0: past it), its CPU time
 * `cpu_ns`, its reading alone counted (not its snapshots' writing, sp->written_ns): one
 * CPU's TT__SPIKES_SHARE_WALL_PCT since the run began, or its first
 * TT__SPIKES_SHARE_FREE_NS, whichever is more. */
static double tt__spikes_floor_left(const struct tt__spikes *sp, double cpu_ns)
{
	double floor = (double)(tt_os_monotonic_ns() - tt__start_anchor.monotonic_ns) * TT__SPIKES_SHARE_WALL_PCT / 100;
	floor = floor > TT__SPIKES_SHARE_FREE_NS ? floor : TT__SPIKES_SHARE_FREE_NS;
	return floor - (cpu_ns - (double)sp->written_ns);
}

/* What tt-spikes' share leaves it now (ns; below 0: past it), its CPU time `cpu_ns`,
 * the process's `process_ns`: TT__SPIKES_SHARE_PCT of the process's, all of its own
 * counted (its snapshots' writing too, each done whatever it costs), or the floor, its
 * reading alone counted. The writing, counted against the floor too, held the reading
 * of a program that mostly sleeps (190 ms of writing against a floor of 46): the
 * spikes the snapshots were for went unfound (23 of 200; CI, s29: 83, the 16 worst). */
static double tt__spikes_left(const struct tt__spikes *sp, int64_t cpu_ns, int64_t process_ns)
{
	double by_process = TT__SPIKES_SHARE_PCT / 100 * (double)process_ns - (double)cpu_ns;
	double by_floor = tt__spikes_floor_left(sp, (double)cpu_ns);
	return by_process > by_floor ? by_process : by_floor;
}

/* The records tt-spikes' share affords it to read now: what is left of it at what a
 * record cost so far, one copy at least, a look's at most (tt__spikes_within's rule). */
static size_t tt__spikes_affordable(struct tt__spikes *sp)
{
	const struct tt__spikes_held *h = &sp->held;
	double look = (double)TT__SPIKES_COPIES * TT__SPIKES_COPY_RECORDS;
	if (h->read_records <= 0 || h->read_ns <= 0)
		return (size_t)look;
	double left = tt__spikes_left(sp, tt_os_thread_cpu_ns(), tt_os_process_cpu_ns());
	double records = left / (h->read_ns / h->read_records);
	return records < TT__SPIKES_COPY_RECORDS ? TT__SPIKES_COPY_RECORDS : records > look ? (size_t)look
										   : (size_t)records;
}

/* A thread held to the share, read again, with snapshots: the oldest of what it has
 * not read passed over, from `from` at *place (`read` of its records read already),
 * the newest records the share affords now kept (chunks held); the detector begins
 * again there. Read from where it stopped, or from its ring's front where the ring
 * overwrote that, the look took the oldest records, and found spikes whose windows
 * had gone, in its own ring or in the others' (a worker's spike found late, the
 * main thread's ring recycling its part), before they were copied; the larger the
 * ring, the older (sqlite3 under record -f, its threads held 5 s: 4 of 8 snapshots
 * cut, each run's TICKTRACE_BUFFER advice the next run's cut: outside test r49, F5).
 * A look reads as many records either way: those passed over are said now, as passed
 * over (still in the ring: not overwritten, as a sanitizer build's log had them, whose
 * detector passed over most), and not again as the ring recycles them; counted by their chunks'
 * sizes, not read (reading them cost the share what reading them all did): a
 * two-record event counts twice there. */
static const struct tt__chunk *tt__spikes_pass_over(struct tt__spikes *sp, struct tt__spikes_thread *t,
						    const struct tt__chunk *from, uint64_t *place, uint32_t read)
{
	if (!sp->snapshots || !t->held || !from)
		return from;
	size_t chunks = 0;
	for (const struct tt__chunk *c = from; c; c = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE))
		chunks++;
	size_t keep = tt__spikes_affordable(sp) / TT__CHUNK_RECORDS + 1;
	uint64_t records = 0;
	for (const struct tt__chunk *next; chunks > keep && (next = __atomic_load_n(&from->next, __ATOMIC_ACQUIRE));
	     chunks--, from = next, ++*place, read = 0)
		records += (from->size - sizeof *from) / sizeof(struct tt_record) - read;
	if (!records)
		return from;
	tt__spikes_say_unread(sp, t, records, true);
	tt__spikes_restart(t);
	t->kept += records;
	t->at.read = 0;
	return from;
}

/* Chunks held: where the last look stopped, or the first chunk after records a ring
 * overwrote before they were read (counted and said: the detector starts again). */
static const struct tt__chunk *tt__spikes_resume(struct tt__spikes *sp, struct tt__spikes_thread *t,
						 const struct tt__chunk **found, uint64_t *place)
{
	const struct tt__slot *slot = t->slot;
	*found = t->at.read ? tt__spikes_find(slot, &t->at) : NULL;
	/* (its chunks recycled are counted as tt-clean cleans them: where one held what
	 * it had not read, all of them now, before what was lost is said) */
	if (!*found)
		tt__recycled_count();
	uint64_t overwritten = __atomic_load_n(&slot->dropped[TT_DROP_OVERWRITTEN], __ATOMIC_RELAXED);
	uint64_t gone = overwritten - t->overwritten; /* events of chunks recycled since */
	t->overwritten = overwritten;
	if (*found) {
		t->kept -= gone < t->kept ? gone : t->kept; /* what was recycled had been read */
		*place = t->at.at;
		const struct tt__chunk *from = tt__spikes_pass_over(sp, t, *found, place, t->at.read);
		*found = from == *found ? from : NULL;
		return from;
	}
	/* Recycled read whole, and nothing after it: its successor the front, read on
	 * without a restart (a scope open across it ends there: liveflake's, s15) */
	const struct tt__chunk *front =
		t->at.read && t->at.whole && gone <= t->kept ? tt__chunks_front(slot, place) : NULL;
	if (front && *place == t->at.at + 1) {
		t->kept -= gone;
		t->at.read = 0; /* (from the front) */
		return tt__spikes_pass_over(sp, t, front, place, 0);
	}
	/* The ring recycled it too, or what it took before a first look: all of it but
	 * what was read is lost. */
	if (gone > t->kept)
		tt__spikes_say_unread(sp, t, gone - t->kept, false);
	if (gone > t->kept || t->at.read)
		tt__spikes_restart(t);
	t->at.read = 0;
	t->kept = 0;
	return tt__spikes_pass_over(sp, t, tt__chunks_front(slot, place), place, 0);
}

/* Copies the thread's next records (up to one not written yet, or the copy's room)
 * into tt__spikes_copy, chunks held; returns how many, *whole when they are all it
 * wrote, *gaps when a run of dropped events is among them. A thread that is `done`
 * records no more; one that goes on may still erase the calls it entered last
 * (TICKTRACE_MIN_DUR): those are read at a later look. */
static size_t tt__spikes_take(struct tt__spikes *sp, struct tt__spikes_thread *t, bool done,
			      bool *whole, bool *gaps)
{
	const struct tt__slot *slot = t->slot;
	size_t n = 0;
	uint64_t events = 0;
	bool dropped = false;
	*whole = true;
	tt__reading(TT__READING_UNCOUNTED);
	uint64_t place;
	const struct tt__chunk *found, *next, *chunk = tt__spikes_resume(sp, t, &found, &place);
	/* Each chunk up to the end found with its successor (tt__chunk_extent): one its
	 * thread left while it was read (none then) read on from there before the next,
	 * never skipped past what the thread wrote meanwhile */
	while (chunk) {
		const struct tt_record *begin, *end;
		next = tt__chunk_extent(slot, chunk, &begin, &end);
		if (!done)
			end = tt__settled_end(slot, chunk, begin, end);
		if (begin == end || n == TT__SPIKES_COPY_RECORDS) {
			*whole = begin == end; /* its first record is not written yet */
			break;
		}
		const struct tt_record *from = begin;
		if (chunk == found) /* (a thread's last chunk compacted at exit ends no later) */
			from = begin + t->at.read < end ? begin + t->at.read : end;
		const struct tt_record *to = from;
		struct tt_record *copy = tt__spikes_copy + n;
		/* (copied and counted as each record is found written: one pass over what
		 * another core just wrote) */
		for (; to < end && n < TT__SPIKES_COPY_RECORDS; to++, n++) {
			uint64_t word = __atomic_load_n(&to->word, __ATOMIC_ACQUIRE);
			if (!word)
				break;
			unsigned kind = TT_RECORD_KIND(word);
			events += TT_RECORD_IS_EVENT(kind);
			dropped |= kind == TT_REC_DROPPED;
			*copy++ = (struct tt_record){to->tsc, word};
		}
		if (to > begin) /* (at.read 0 says: from the first chunk) */
			t->at = (struct tt__spikes_place){*begin, (uint32_t)(to - begin), chunk, place, false};
		if (to != end) {
			/* the copy full, or a record not written yet (a signal handler's) */
			*whole = false;
			break;
		}
		if (!next && __atomic_load_n(&chunk->next, __ATOMIC_ACQUIRE)) {
			found = chunk; /* (the rest of it, from `at` just set) */
			continue;
		}
		t->at.whole = next && t->at.chunk == chunk && t->at.read; /* (its successor next) */
		chunk = next;
		place++;
	}
	t->recycled = __atomic_load_n(&slot->recycled, __ATOMIC_ACQUIRE);
	tt__reading(0);
	t->kept += events;
	*gaps = dropped;
	return n;
}

/* Whether a thread wrote nothing since tt-spikes read it: in the chunk where it
 * stopped, its cursor where the records read end, none of its chunks recycled (read
 * without holding them: what it writes meanwhile is for the next look). A program's
 * idle threads cost each look no reading of them (as a reader, each was a look at
 * every slot: 200 idle threads, 11 % of a CPU). */
static bool tt__spikes_unchanged(const struct tt__slot *slot, const struct tt__spikes_thread *t)
{
	if (!t->at.read || __atomic_load_n(&slot->current, __ATOMIC_ACQUIRE) != t->at.chunk)
		return false;
	const struct tt__hot *hot = __atomic_load_n(&slot->hot, __ATOMIC_ACQUIRE);
	const struct tt_record *read = (const struct tt_record *)(t->at.chunk + 1) + t->at.read;
	return (const struct tt_record *)__atomic_load_n(&hot->cursor, __ATOMIC_ACQUIRE) == read &&
	       __atomic_load_n(&slot->recycled, __ATOMIC_ACQUIRE) == t->recycled;
}

/* A thread's states, then the records it wrote since the last look, to its detector;
 * whether there is more to read now. A thread held to tt-spikes' share (`now` before
 * its hold's end) is left for later, unless it exited, or this is the last look. */
static bool tt__spikes_poll_slot(struct tt__spikes *sp, struct tt__slot *slot, bool last, int64_t now,
				 size_t *read)
{
	struct tt__spikes_thread *t = tt__spikes_thread(slot);
	if (!t || t->retired)
		return false;
	/* Read first: once it says the thread exited, its records are all there; once it
	 * says when, its states up to its exit too. */
	bool exited = __atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_EXITED, whole = true;
	if (!exited && !last && now < t->held_until)
		return false; /* (its states and counters too: kept for its records, or counted lost) */
	bool gaps = false;
	int64_t exit_ns = tt__thread_exit_ns(slot);
	size_t n = exited || last || !tt__spikes_unchanged(slot, t) ? tt__spikes_take(sp, t, exited || last, &whole, &gaps)
								     : 0;
	t->held = false; /* (what it overwrote meanwhile said as held: tt__spikes_resume) */
	*read += n;
	/* (before the records they cover; a reading of its own only for a spike among them:
	 * tt__spikes_before_split) */
	tt__spikes_read_states(t);
	tt__counters_read_new(slot, 0, &t->counters, tt__spikes_counters, NULL);
	t->read_due = true;
	if (n)
		tt__spikes_feed_gaps(slot, tt__spikes_copy, tt__spikes_copy + n, gaps);
	/* (an exiting thread whose exit's time is not set yet: the next look) */
	if (whole && ((exited && exit_ns >= 0) || last)) {
		tt__spikes_close_open(t, exit_ns);
		/* Kept, retired, so that it is not read again; its analysis is done. */
		tt_an_thread_free(&t->th);
		tt_an_feed_free(&t->feed);
		t->feed.th = NULL;
		t->retired = true;
	}
	t->read_due = false; /* (a spike fed elsewhere, at the thread's exit: as it was) */
	return n == TT__SPIKES_COPY_RECORDS;
}

/* Whether tt-spikes is within its share (tt__spikes_share) now, to read on in a look:
 * a look at a thread writing flat out copied 64 times 16,380 records, 250 ms of a
 * sanitizer build's CPU time, before the share was first found past (poll lock). */
static bool tt__spikes_within(struct tt__spikes *sp)
{
	struct tt__spikes_held *h = &sp->held;
	int64_t own = tt_os_thread_cpu_ns();
	if (tt__spikes_left(sp, own, h->process_seen_ns) >= 0)
		return true;
	/* (the process's CPU time only grows: read again only past its last reading's share) */
	h->process_seen_ns = tt_os_process_cpu_ns();
	return tt__spikes_left(sp, own, h->process_seen_ns) >= 0;
}

/* tt-spikes, every TT__SPIKES_POLL_NS, and once at exit (last: what threads left
 * open is closed at their last event, as `ticktrace spikes` does). Whether it found
 * anything to do: a record, or a snapshot whose window has not ended. */
static bool tt__spikes_poll(bool last)
{
	size_t read = 0;
	bool waiting = false;
	struct tt__spikes *sp = &tt__spikes;
	struct tt_os_signals old;
	tt_os_signals_block(&old);
	struct tt_os_writing writing; /* (the log's lines, the snapshots) */
	tt_os_writing_begin(&writing);
	tt__lock(&sp->poll_lock);
	int64_t now = tt_os_monotonic_ns(), writing_ns = 0;
	for (struct tt__slot *slot = tt__registry_head(); slot && sp->on && !sp->an.oom;
	     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_RUNTIME)
			continue;
		/* (a copy at least of each thread: one whose reading the share affords is
		 * never left for another's) */
		for (int i = 0; i < TT__SPIKES_COPIES; i++) {
			bool more = tt__spikes_poll_slot(sp, slot, last, now, &read);
			/* A spike's window that ended copied as soon as it is found, not after the
			 * look: its ring recycles meanwhile (outside test r49, F5). */
			if (sp->snapshots && !last && tt__snapshots_ended()) {
				int64_t from = tt_os_thread_cpu_ns();
				tt__snapshots_copy_ended();
				writing_ns += tt__spikes_wrote(sp, from);
			}
			if (!more || (!last && !tt__spikes_within(sp)))
				break;
		}
		if (last)
			tt__spikes_forget(slot);
	}
	if (read && !last) { /* (what reading a record costs it, the snapshots' writing left out) */
		sp->held.read_ns += (double)(tt_os_thread_cpu_ns() - sp->cpu_ns - writing_ns);
		sp->held.read_records += (double)read;
	}
	/* (after the spikes of what was read: the windows that ended are written) */
	if (sp->on) {
		int64_t from = tt_os_thread_cpu_ns();
		waiting = tt__snapshots_take(&sp->clock, last);
		tt__spikes_wrote(sp, from);
	}
	__atomic_store_n(&sp->end_ns, last ? INT64_MAX : tt__snapshots_next_end_ns(&sp->clock), __ATOMIC_RELAXED);
	/* The last look: tt-spikes, which may look again before the log is closed, finds
	 * nothing more to do (its detectors would be made again, and never freed). */
	if (last)
		tt__spikes_finish(); /* (under the lock: tt-spikes may be about to look) */
	else /* (tt-spikes' CPU time so far, said at exit: under the lock, where the exit's
	      * last look finds it, that look's wait for this one counted) */
		__atomic_store_n(&sp->cpu_ns, tt_os_thread_cpu_ns(), __ATOMIC_RELAXED);
	tt__unlock(&sp->poll_lock);
	tt_os_writing_end(&writing);
	tt_os_signals_restore(&old);
	return read || waiting;
}

/* tt-spikes' share of the program's CPU time: a flight recorder left running for hours
 * stays bounded. A thread writing millions of records a second (every function a scope,
 * a -finstrument-functions build) cost it 26 % of gzip's CPU time, at some 7 ns a record;
 * at 5 % it reads all of a program's records up to some 7 million a second (xz -T2 at a
 * 10 s threshold, 48 M records, cost it 5.5 %). Past its share, and past
 * TT__SPIKES_SHARE_FREE_NS (a short run's first reading and snapshots), it holds the
 * threads whose records it cannot afford to read, the fastest first, and reads the others
 * as always: a ring that recycles slowly is read before it recycles what was not read, so
 * that a mostly idle program keeps its worst spikes whatever another thread, or the
 * writing of its snapshots (done whatever it costs, and never holding the reading below
 * the share's floor: tt__spikes_left), cost. A held thread is read
 * again once the process's CPU time at its rate since the last find (or the time since
 * the run began) makes tt-spikes' own the share again, that reading and the others' paid,
 * TT__SPIKES_HELD_MAX_NS at most. The program's threads are never waited for: what a ring
 * overwrote meanwhile is counted and said, in the log and at exit, its spikes not found
 * (the detector begins again after it: no spike is made of records around the gap).
 * Mode stop keeps every record: they are read later. */

/* A thread's rate, from the chunks it took (a ring's recycled ones too: read or not,
 * held or not), measured again where TT__SPIKES_RATE_NS passed since it was and it took
 * TT__SPIKES_RATE_CHUNKS, or 10 times as long passed (a chunk or two in 100 ms, a
 * thread writing 50,000 records a second, read as twice that: held in a sanitizer
 * build, where reading it all cost 1.2 % of one CPU). */
#define TT__SPIKES_RATE_NS 100000000
#define TT__SPIKES_RATE_CHUNKS 4
static void tt__spikes_rate(struct tt__spikes_thread *t, int64_t now)
{
	const struct tt__slot *slot = t->slot;
	uint64_t chunks = __atomic_load_n(&slot->chunks, __ATOMIC_RELAXED) +
			  __atomic_load_n(&slot->recycled, __ATOMIC_RELAXED);
	if (now - t->rate_at < TT__SPIKES_RATE_NS ||
	    (chunks - t->chunks_then < TT__SPIKES_RATE_CHUNKS && now - t->rate_at < 10 * TT__SPIKES_RATE_NS))
		return;
	t->rate = (double)(chunks - t->chunks_then) * TT__CHUNK_RECORDS / (double)(now - t->rate_at);
	t->chunks_then = chunks;
	t->rate_at = now;
}

static int tt__spikes_by_rate(const void *a, const void *b)
{
	double x = (*(struct tt__spikes_thread *const *)a)->rate;
	double y = (*(struct tt__spikes_thread *const *)b)->rate;
	return (x > y) - (x < y);
}

/* The threads held now until `until` at most (0: none held): how long one was, said at
 * exit, is the union of their holds. */
static void tt__spikes_held_until(struct tt__spikes_held *h, int64_t now, int64_t until)
{
	if (h->since_ns && (!until || h->until_ns <= now)) {
		int64_t end = h->until_ns < now ? h->until_ns : now;
		h->held_ns += end - h->since_ns;
		h->since_ns = 0;
	}
	if (until && !h->since_ns)
		h->since_ns = now;
	h->until_ns = until;
}

/* How long `ns` of tt-spikes' CPU time past what is allowed now takes to be allowed,
 * the allowance growing `room` ns a ns. */
static double tt__spikes_wait(double ns, double room)
{
	return ns <= 0 ? 0 : room > 0 ? ns / room : (double)TT__SPIKES_HELD_MAX_NS;
}

/* Past its share (`own` its CPU time; `process`, the process's, growing `rate` ns a ns;
 * tt__spikes_left's rules): the threads it
 * cannot afford to read at their rates, after the slower ones, held, each until what it
 * read and will read (a held one's reading: its ring, or what a look copies at most) is
 * within the share again; a held thread it can afford now let go (poll lock). */
static void tt__spikes_hold(struct tt__spikes *sp, int64_t now, double own, double process, double rate)
{
	struct tt__spikes_held *h = &sp->held;
	double share = TT__SPIKES_SHARE_PCT / 100, wall = TT__SPIKES_SHARE_WALL_PCT / 100;
	double record_ns = h->read_records > 0 ? h->read_ns / h->read_records : 0;
	size_t n = 0, cap = 0;
	for (struct tt__slot *slot = tt__registry_head(); slot; slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE))
		cap += slot->spikes != NULL;
	struct tt__spikes_thread **all = cap ? malloc(cap * sizeof *all) : NULL;
	for (struct tt__slot *slot = tt__registry_head(); slot && all && n < cap;
	     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE)) {
		struct tt__spikes_thread *t = slot->spikes;
		if (t && !t->retired) {
			tt__spikes_rate(t, now);
			all[n++] = t;
		}
	}
	/* The slower first, as long as reading them all fits the share's rate. */
	if (n)
		qsort(all, n, sizeof *all, tt__spikes_by_rate);
	double allowed = share * rate > wall ? share * rate : wall, reading = 0;
	size_t fit = 0;
	for (; fit < n && reading + all[fit]->rate * record_ns <= allowed; fit++) {
		reading += all[fit]->rate * record_ns;
		all[fit]->held_until = 0;
	}
	double ring = (double)tt__config.chunk_budget * TT__CHUNK_RECORDS;
	double look = (double)TT__SPIKES_COPIES * TT__SPIKES_COPY_RECORDS;
	double due = own + (double)(n - fit) * (ring < look ? ring : look) * record_ns;
	double wait = tt__spikes_wait(due - share * process, share * rate - reading);
	/* (the floor's: its reading alone) */
	double floor_wait = tt__spikes_wait(-tt__spikes_floor_left(sp, due), wall - reading);
	wait = floor_wait < wait ? floor_wait : wait;
	int64_t hold = wait > (double)TT__SPIKES_HELD_MAX_NS ? TT__SPIKES_HELD_MAX_NS
		     : wait > (double)TT__SPIKES_POLL_NS ? (int64_t)wait : TT__SPIKES_POLL_NS;
	int64_t until = 0;
	for (size_t i = fit; i < n; i++) {
		struct tt__spikes_thread *t = all[i];
		if (now >= t->held_until) { /* (one held already is read as that hold ends) */
			h->threads_held += !t->ever_held;
			t->ever_held = t->held = true;
			t->held_until = now + hold;
			h->longest_ns = hold > h->longest_ns ? hold : h->longest_ns;
		}
		until = t->held_until > until ? t->held_until : until;
	}
	free(all);
	tt__spikes_held_until(h, now, until);
}

/* After each look: the threads tt-spikes cannot afford to read held to its share (poll lock). */
static void tt__spikes_share_locked(struct tt__spikes *sp)
{
	struct tt__spikes_held *h = &sp->held;
	if (!sp->on) /* (the exit's last look was: what it held back is said) */
		return;
	int64_t now = tt_os_monotonic_ns();
	/* (the process's CPU time only grows: within the share of its last reading, within it now) */
	if (tt__spikes_left(sp, sp->cpu_ns, h->process_ns) >= 0) {
		if (h->since_ns) /* (within it: no thread held) */
			for (struct tt__slot *slot = tt__registry_head(); slot;
			     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE))
				if (slot->spikes)
					slot->spikes->held_until = 0;
		tt__spikes_held_until(h, now, 0);
		return;
	}
	int64_t process = tt_os_process_cpu_ns();
	/* (its rate since the last find, or first since the run began) */
	int64_t from = h->process_at_ns ? h->process_at_ns : tt__start_anchor.monotonic_ns;
	double rate = now > from ? (double)(process - h->process_ns) / (double)(now - from) : 0;
	h->process_ns = process;
	h->process_at_ns = now;
	if (tt__spikes_left(sp, sp->cpu_ns, process) < 0)
		tt__spikes_hold(sp, now, (double)sp->cpu_ns, (double)process, rate);
}

/* (under the poll lock: the exit's last look, after which it is left alone, says what
 * it held back) */
static void tt__spikes_share(struct tt__spikes *sp)
{
	struct tt_os_signals old;
	tt_os_signals_block(&old);
	tt__lock(&sp->poll_lock);
	tt__spikes_share_locked(sp);
	tt__unlock(&sp->poll_lock);
	tt_os_signals_restore(&old);
}

static void *tt__spikes_main(void *unused)
{
	(void)unused;
	/* The log written from a table of its own, as tt-drain's and the live file's are: a
	 * daemon that closes every number and dup2s its file over them (outside test r49,
	 * F2) left it no number to find the log again at, and lost every entry. */
	struct tt__fd *log = tt__spikes_log();
	tt__fd_private_table(&log, log ? 1 : 0);
	tt__thread_running("tt-spikes");
	tt__thread_optional(TT__OPTIONAL_SPIKES, NULL);
	int64_t sleep_ns = TT__SPIKES_POLL_NS, nap_ns = sleep_ns;
	for (;;) {
		tt_os_sleep_ns(nap_ns);
		if (tt__thread_end_asked())
			return NULL;
		/* (twice as long after each look that found nothing: a program idle for hours
		 * costs it a wake-up each TT__SPIKES_IDLE_NS, not 50 a second) */
		bool busy = tt__spikes_poll(false);
		sleep_ns = busy ? TT__SPIKES_POLL_NS : 2 * sleep_ns < TT__SPIKES_IDLE_NS ? 2 * sleep_ns
			 : TT__SPIKES_IDLE_NS;
		/* (shorter where a spike's window ends sooner: copied as it ends, not a look
		 * later, a held thread's ring recycling meanwhile: outside test r49 F5) */
		int64_t end_ns = __atomic_load_n(&tt__spikes.end_ns, __ATOMIC_RELAXED);
		nap_ns = end_ns >= sleep_ns ? sleep_ns : end_ns > TT__SPIKES_END_WAIT_NS ? end_ns : TT__SPIKES_END_WAIT_NS;
		tt__spikes_share(&tt__spikes);
	}
	return NULL;
}

/* tt-spikes' cost is said at exit where it reached this share of the program's CPU time
 * and at least a millisecond, or this long in all: below, the line was every process's
 * noise (each of a test suite's commands under record said its 0.0 ms, or 1.3 % of a
 * 4 ms run, and Debian xz's test_scripts.sh, comparing xzgrep's 2>&1, failed: outside
 * recheck r36 F1), while a cost worth knowing (a
 * tester's 4 %, unsaid: r35 finding 9) is said */
#define TT__SPIKES_COST_SAID_PCT 1.0
#define TT__SPIKES_COST_SAID_NS 1e9
#define TT__SPIKES_COST_SAID_MIN_NS 1e6

/* At exit: what tt-spikes' share held back, where it did (its cost is said above it,
 * `last_ns` of it the exit's last look's, which read what the rings held, past the share). */
static void tt__spikes_say_skipped(struct tt__spikes_held *h, int64_t last_ns)
{
	tt__spikes_held_until(h, tt_os_monotonic_ns(), 0);
	if (!h->threads_held)
		return;
	fprintf(tt__err, "ticktrace: the live spike detector was held to its share (%.0f%% of the "
		"program's CPU time, or one CPU's %.0f%% of the run's): it held %" PRIu64 " thread%s whose "
		"records it could not afford to read (the others read as always) for %.3f s in all, "
		"reading them up to %.3f s apart, not every %d ms (its last look, at exit, read what the "
		"rings held then: %.1f ms); %" PRIu64 " events the rings overwrote before it read them",
		TT__SPIKES_SHARE_PCT, TT__SPIKES_SHARE_WALL_PCT, h->threads_held, h->threads_held == 1 ? "" : "s",
		(double)h->held_ns / 1e9, (double)h->longest_ns / 1e9, TT__SPIKES_POLL_NS / 1000000,
		(double)last_ns / 1e6, h->unread);
	if (h->skipped)
		fprintf(tt__err, ", and %" PRIu64 " it passed over to read the newest first for the snapshots,",
			h->skipped);
	fputs(" were not read, and spikes among them not found", tt__err);
	for (unsigned i = 0, said = 0; i < TT__SPIKES_UNREAD_SAID; i++)
		if (h->threads[i].events)
			fprintf(tt__err, "%sthread %" PRIu32 ": %" PRIu64, said++ ? ", " : " (", h->threads[i].tid,
				h->threads[i].events);
	fputs(h->threads[0].events ? ")\n" : "\n", tt__err);
}

/* At exit: what tt-spikes' reading cost where it matters (a flight recorder left running
 * for hours pays it all along), `last_ns` the exit's last look's. Its CPU time against
 * the process's (its own in it), both read now. */
static void tt__spikes_say_cost(int64_t last_ns)
{
	struct tt__spikes *sp = &tt__spikes;
	if (tt__mode->drains) /* (mode stream's drain feeds the detector as it writes: no tt-spikes) */
		return;
	double spent = (double)__atomic_load_n(&sp->cpu_ns, __ATOMIC_RELAXED) + (double)last_ns;
	double process = (double)tt_os_process_cpu_ns();
	bool snapshots = sp->snapshots, log = *sp->path != 0;
	if (spent < TT__SPIKES_COST_SAID_NS &&
	    (spent < TT__SPIKES_COST_SAID_MIN_NS || spent < process * TT__SPIKES_COST_SAID_PCT / 100))
		return;
	fprintf(tt__err, "ticktrace: the live spike detector (tt-spikes, for %s%s%s) took %.1f ms of CPU "
		"time: %.2f%% of the program's %.1f ms", snapshots ? "snapshots" : "", snapshots && log ? " and " : "",
		log ? "the spike log" : "", spent / 1e6, process > 0 ? 100 * spent / process : 0, process / 1e6);
	/* (its share holds what reading costs, not the snapshots' windows copied and written
	 * after each look: outside recheck r47 F3, 17.4 % said beside a share of 5 %) */
	double written = (double)__atomic_load_n(&sp->written_ns, __ATOMIC_RELAXED);
	if (snapshots && written > 0)
		fprintf(tt__err, ", %.1f ms of it reading the threads' records (its share holds that) and %.1f ms "
			"writing snapshots (which it does not: each is written whatever it costs)",
			(spent - written) / 1e6, written / 1e6);
	fputc('\n', tt__err);
}

void tt__spikes_last(void)
{
	/* Not on a crash: tt-spikes may be what crashed, its lock held. */
	int crash = __atomic_load_n(&tt__crash_signal, __ATOMIC_ACQUIRE);
	bool on = __atomic_load_n(&tt__spikes.on, __ATOMIC_ACQUIRE); /* (tt-spikes may look) */
	if (on && crash) {
		tt__snapshots_crashed(crash);
	} else if (on) {
		int64_t own_ns = tt_os_thread_cpu_ns();
		tt__spikes_poll(true);
		int64_t last_ns = tt_os_thread_cpu_ns() - own_ns;
		tt__spikes_say_cost(last_ns);
		tt__spikes_say_skipped(&tt__spikes.held, last_ns); /* (tt-spikes, finished, leaves it alone) */
	}
}

void tt__spikes_finish(void)
{
	struct tt__spikes *sp = &tt__spikes;
	if (sp->out && sp->out != tt__err)
		fclose(sp->out);
	if (sp->lost)
		fprintf(tt__err, "ticktrace: spike log %s: %" PRIu64 " of %" PRIu64 " entries lost (%s)\n",
			sp->path, sp->lost, sp->entries, strerror(sp->lost_errno));
	tt__spikes_bound_said(&sp->bound, sp->path);
	tt__spikes_bound_free(&sp->bound);
	sp->bound = (struct tt__spikes_bound){0};
	sp->out = NULL;
	sp->lost = sp->entries = 0;
	__atomic_store_n(&sp->on, false, __ATOMIC_RELEASE);
	sp->an.rules = NULL;
	sp->an.nrules = 0;
	tt_an_thresholds_free(&sp->table);
}

/* In the child after fork: its spikes go to a file of its own. */
void tt__spikes_after_fork(void)
{
	struct tt__spikes *sp = &tt__spikes;
	if (!sp->on)
		return;
	if (sp->out && sp->out != tt__err)
		fclose(sp->out);
	tt__spikes_bound_free(&sp->bound); /* (the parent's log's) */
	tt__snapshots_after_fork();
	struct tt_an_thresholds table = sp->table;
	*sp = (struct tt__spikes){.table = table, .table_read = true,
				  .poll_lock = TT__LOCK_INIT(TT__LOCK_SPIKES_POLL)};
	tt__spikes_start(); /* (a failure said, with the child's path) */
}
