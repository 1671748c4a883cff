/* `ticktrace info`: what a raw file holds, from its header and sections and from one
 * pass of the decoder (per-thread events, unmatched ends, clamped times; uses of
 * each call site). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cmd.h"

struct tt_info_sink {
	struct tt_sink sink;
	int64_t base_ns; /* the trace's start, which times are shown from */
	struct tt_thread_summary *threads; /* by thread id */
	uint64_t *site_uses;               /* by site id */
};

static int tt_info_start(struct tt_sink *s, const struct tt_trace *t)
{
	struct tt_info_sink *in = (struct tt_info_sink *)s;
	in->base_ns = t->base_ns;
	in->threads = calloc(t->nthreads ? t->nthreads : 1, sizeof(*in->threads));
	in->site_uses = calloc(t->nsites ? t->nsites : 1, sizeof(*in->site_uses));
	return in->threads && in->site_uses ? 0 : tt_error("out of memory");
}

/* Counts a use of the event's call site. */
static int tt_info_use(struct tt_sink *s, const struct tt_event *e)
{
	if (e->site)
		((struct tt_info_sink *)s)->site_uses[e->site->id]++;
	return 0;
}

static int tt_info_thread_end(struct tt_sink *s, const struct tt_thread *t,
			      const struct tt_thread_summary *sum)
{
	((struct tt_info_sink *)s)->threads[t->id] = *sum;
	return 0;
}

static const struct tt_sink_ops tt_info_ops = {
	.start = tt_info_start,
	.slice_begin = tt_info_use,
	.instant = tt_info_use,
	.counter = tt_info_use,
	.frame = tt_info_use,
	.thread_end = tt_info_thread_end,
};

/* A string from the file, control bytes escaped, padded to `width`. */
static void tt_print_str(FILE *out, struct tt_str s, int width)
{
	for (size_t n = tt_put_escaped(out, s.ptr, s.len); n < (size_t)width; n++)
		fputc(' ', out);
}

void tt_print_seconds(FILE *out, int64_t ns)
{
	uint64_t mag = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	fprintf(out, "%s%" PRIu64 ".%09" PRIu64 " s", ns < 0 ? "-" : "", mag / 1000000000,
		mag % 1000000000);
}

void tt_print_offset(FILE *out, int64_t ns)
{
	if (ns >= 0)
		fputc('+', out);
	tt_print_seconds(out, ns);
}

/* The command line: NUL-separated arguments, printed with spaces (UTF-8 as it is: a
 * byte past 0x7f read as a signed char was taken for a control character). */
static void tt_print_cmdline(FILE *out, struct tt_str c)
{
	for (uint32_t i = 0; i < c.len; i++) {
		unsigned char ch = (unsigned char)c.ptr[i];
		fputc(ch ? (ch < 0x20 ? '?' : ch) : (i + 1 < c.len ? ' ' : '\n'), out);
	}
	if (c.len == 0 || c.ptr[c.len - 1] != 0)
		fputc('\n', out);
}

/* "tid 101 (producer)" */
static void tt_print_thread(FILE *out, const struct tt_thread *t)
{
	fprintf(out, "tid %" PRIu32 " (", t->tid);
	tt_print_str(out, t->name, 0);
	fputc(')', out);
}

/* A TSC of the file as seconds since the trace start. */
static void tt_print_tsc(FILE *out, const struct tt_file *f, const struct tt_info_sink *in,
			 uint64_t tsc)
{
	tt_print_seconds(out, tt_clock_ns(&f->clock, tsc) - in->base_ns);
}

/* The threads' counters (SCHEDSTAT): how many readings, of how many threads, and
 * whether the run could tell stolen time (its kernel accounts it, and the switches
 * say the time on CPU it is a part of). */
static void tt_print_counters(FILE *out, const struct tt_file *f, bool switches)
{
	size_t threads = 0, readings = 0;
	uint64_t lost = 0, unread = 0;
	size_t blind = 0; /* threads read blind a while (TT_SCHEDSTAT_BLIND) */
	bool steal = false, source = false;
	uint32_t run_only = 0; /* (Windows': the flags of one thread's tell the run's) */
	for (size_t i = 0; i < f->nthreads; i++) {
		const struct tt_thread *th = &f->threads[i];
		threads += th->ncounters > 0;
		source |= th->has_counters;
		readings += th->ncounters;
		lost += th->counters_lost;
		unread += th->counters_unread;
		blind += (th->counters_flags & TT_SCHEDSTAT_BLIND) != 0;
		steal |= (th->counters_flags & TT_SCHEDSTAT_STEAL) != 0;
		if (th->counters_flags & TT_SCHEDSTAT_RUN_ONLY)
			run_only = th->counters_flags;
	}
	if (threads)
		fprintf(out, "  thread counters (%s): %zu readings of %zu thread%s, %" PRIu64 " lost\n",
			!run_only ? "schedstat, read in long scopes"
			: run_only & TT_SCHEDSTAT_SWITCH_COUNT ? "Windows: CPU time and the count of switches"
			: run_only & TT_SCHEDSTAT_TICK_STEPS ? "Windows: CPU time alone, its thread times, "
							       "in steps of the system's tick"
							     : "Windows: CPU time alone, its cycle time",
			readings, threads, threads == 1 ? "" : "s", lost);
	if (threads && (run_only & TT_SCHEDSTAT_TICK_STEPS) && (f->machine.flags & TT_MACHINE_TICK))
		fprintf(out, "  thread counters' tick: %.3f ms as the run found its thread times' steps%s\n",
			f->machine.tick_ns / 1e6, f->machine.flags & TT_MACHINE_TICK_EACH
				? " (user and kernel time each cut to one: a value up to two behind)" : "");
	if (unread)
		fprintf(out, "  thread counters' budget: reached (tt-sched's CPU time against the "
			"program's, and the time its cores left idle): at least %" PRIu64 " scope%s open long enough to be read went unread "
			"(past it, its looks are far apart: those between are not seen); their spikes have "
			"no split unless other readings bound them (each spike without one says why)\n", unread, unread == 1 ? "" : "s");
	if (blind)
		fprintf(out, "  thread counters' records share: reached (tt-sched's CPU time reading the "
			"threads' records, to follow their scopes): %zu thread%s recorded more than it let it "
			"follow, %s scopes not known from then on, read blind (each 2 ms while not followed, "
			"8 ms after): %s spikes may be read too far inside for a split\n",
			blind, blind == 1 ? "" : "s", blind == 1 ? "its" : "their", blind == 1 ? "its" : "their");
	fprintf(out, "  stolen time: %s\n",
		f->machine.flags & TT_MACHINE_WINDOWS ? "not known (Windows does not account it)"
		: !threads && (f->header.flags & TT_FILE_LIVE) ? "not known (a live file: the counters "
								 "the run read were in its memory only)"
		/* (counters the states' source, perf refused: read in long scopes alone) */
		: !threads && unread ? "not known (no counters read: tt-sched's budget, above)"
		: !threads && source ? "not known (no counters read: no scope was open long enough to be read)"
		: !threads ? "not known (no counters read: TICKTRACE_SCHED=switches, or a kernel that "
			   "accounts no steal)"
		: !steal ? "none to tell (the kernel accounted no steal when the run began)"
		: switches ? "told apart (the kernel accounts steal; switches and CPU time)"
			   : "not told apart (the kernel accounts steal, but no switches: it counts as blocked)");
}

/* Each thread's states (TT_THREAD_SCHED): how many switches, known from when, and
 * how many were lost; and how many threads have none. A thread with the flag and no
 * SCHED section (asked for, it never switched before the file was written) has
 * states, none of them, as spikes and report read it. */
static void tt_print_states(FILE *out, const struct tt_file *f, const struct tt_info_sink *in)
{
	size_t with = 0;
	for (size_t i = 0; i < f->nthreads; i++) {
		const struct tt_thread *th = &f->threads[i];
		if (!(th->flags & TT_THREAD_SCHED))
			continue;
		if (!with++)
			fprintf(out, "  thread states (their switches, from the kernel):\n  %8s  %-20s %12s "
				"%10s  %s\n", "tid", "name", "switches", "lost", "known from (since the trace start)");
		/* (known from its first state, the kernel's or the one its first section's
		 * since_ns says, tt_sched_head: from when every switch is there, as spikes
		 * read it) */
		uint64_t switches = 0;
		int64_t from = INT64_MIN;
		for (size_t k = 0; k < th->nstates; k++) {
			const struct tt_sched_state *st = &th->states[k];
			if (st->what == TT_SCHED_UNKNOWN)
				continue;
			if (from == INT64_MIN)
				from = st->ns;
			switches += st->cpu != TT_NO_CPU;
		}
		fprintf(out, "  %8" PRIu32 "  ", th->tid);
		tt_print_str(out, th->name, 20);
		fprintf(out, " %12" PRIu64 " %10" PRIu64 "  ", switches, th->states_lost);
		if (from != INT64_MIN) {
			tt_print_seconds(out, from - in->base_ns);
			fputc('\n', out);
		} else {
			fprintf(out, "none\n");
		}
	}
	/* those without, by why: each reason once, with how many threads (a few reasons
	 * at most: refusals by errno) */
	enum { TT_WHYS = 16 };
	uint32_t whys[TT_WHYS];
	size_t counts[TT_WHYS] = {0}, nwhys = 0, others = 0;
	for (size_t i = 0; i < f->nthreads; i++) {
		const struct tt_thread *th = &f->threads[i];
		if (th->flags & (TT_THREAD_SCHED | TT_THREAD_RUNTIME))
			continue;
		uint32_t why = th->flags & (TT_THREAD_NO_STATES_MASK | TT_THREAD_NO_STATES_ERRNO_MASK);
		size_t k = 0;
		while (k < nwhys && whys[k] != why)
			k++;
		if (k == nwhys && nwhys < TT_WHYS)
			whys[nwhys++] = why;
		others += k == nwhys;
		if (k < nwhys)
			counts[k]++;
	}
	for (size_t k = 0; k < nwhys; k++) {
		char text[TT_SCHED_NONE_TEXT];
		fprintf(out, "  %zu thread%s without states: %s\n", counts[k], counts[k] == 1 ? "" : "s",
			tt_sched_none_text(whys[k], text, sizeof text));
	}
	if (others)
		fprintf(out, "  %zu threads without states for other reasons\n", others);
	tt_print_counters(out, f, with > 0);
}

/* What a snapshot is: why it was written, its window, the threads it cut. */
static void tt_print_snapshot(FILE *out, const struct tt_file *f, const struct tt_info_sink *in)
{
	const struct tt_snapshot *s = f->snapshot;
	const struct tt_snapshot_info *si = &s->info;
	char a[32], b[32];
	fprintf(out, "  snapshot: number %" PRIu64 ", of a %s: \"", si->number, tt_snapshot_kind_name(s));
	tt_print_str(out, s->name, 0);
	fputs("\" on ", out);
	if (s->thread)
		tt_print_thread(out, s->thread);
	else
		fputs("a thread that never recorded", out);
	int64_t dur = s->split.dur_ns;
	if (si->kind == TT_SNAPSHOT_TRIGGER) {
		fputs(", tt_trigger called at ", out);
		tt_print_tsc(out, f, in, si->begin_tsc);
		fputc('\n', out);
	} else {
		fprintf(out, "\n    spike:  began at ");
		tt_print_tsc(out, f, in, si->begin_tsc);
		fprintf(out, ", took %s, threshold %s (%s)\n", tt_an_fmt_ns(a, dur),
			tt_an_fmt_ns(b, si->threshold_ns), tt_snapshot_threshold_from(s));
	}
	struct tt_an_causes causes = tt_snapshot_an_causes(s);
	if (si->has_split) {
		struct tt_an_split split = tt_snapshot_an_split(s);
		tt_an_split_print(out, "            ", &split, &causes);
		tt_an_causes_print(out, "            ", &causes);
	} else if (si->kind == TT_SNAPSHOT_SPIKE) {
		char why[TT_AN_NO_SPLIT_TEXT];
		fprintf(out, "            no split: %s\n", tt_an_no_split_text(&causes, s->thread->flags, why,
										 sizeof why));
	}
	/* The window as the run could record it: one asked to reach back before the run
	 * began (TICKTRACE_SNAPSHOT_BEFORE) or past its end (the exit before the window
	 * ended) from its start or to its end, the rest said (r43 R8: a 57 ms process's
	 * window began at -0.05 s). */
	uint64_t start = f->header.start.tsc, end = f->header.end.tsc;
	bool early = start && si->from_tsc < start, late = end && si->to_tsc > end;
	uint64_t from = early ? start : si->from_tsc, to = late ? end : si->to_tsc;
	fputs("    window: ", out);
	tt_print_tsc(out, f, in, from);
	fputs(" .. ", out);
	tt_print_tsc(out, f, in, to);
	fprintf(out, " (%s", tt_an_fmt_ns(a, tt_clock_ns(&f->clock, to) - tt_clock_ns(&f->clock, from)));
	if (early)
		fprintf(out, "; from the run's start: the window asked began %s before it",
			tt_an_fmt_ns(b, tt_clock_ns(&f->clock, start) - tt_clock_ns(&f->clock, si->from_tsc)));
	if (late)
		fprintf(out, "; to the run's end: the window asked ended %s after it",
			tt_an_fmt_ns(b, tt_clock_ns(&f->clock, si->to_tsc) - tt_clock_ns(&f->clock, end)));
	fputs(")\n", out);
	for (uint32_t i = 0; i < si->cuts; i++) {
		const struct tt_snapshot_thread_cut *cut = &s->cuts[i];
		fputs("    window cut: ", out);
		tt_print_thread(out, cut->thread);
		/* (no record of it in the window: the ring overwrote it all before the copy) */
		fprintf(out, ": %s%s%" PRIu64 " events overwritten from ",
			cut->thread->has_first ? "" : "its whole window lost: ",
			cut->cut.lost_from_tsc ? "" : "at least ", cut->cut.events);
		if (cut->cut.lost_from_tsc)
			tt_print_tsc(out, f, in, cut->cut.lost_from_tsc);
		else
			fputs("before the ring remembers", out);
		fputs(" to ", out);
		tt_print_tsc(out, f, in, cut->cut.lost_to_tsc);
		fputc('\n', out);
	}
}

/* Sites by uses, most used first, then by name. */
static const uint64_t *tt_sort_uses;
static int tt_site_order(const void *a, const void *b)
{
	const struct tt_site *x = *(const struct tt_site *const *)a, *y = *(const struct tt_site *const *)b;
	uint64_t ux = tt_sort_uses[x->id], uy = tt_sort_uses[y->id];
	if (ux != uy)
		return ux > uy ? -1 : 1;
	int c = memcmp(x->name.ptr, y->name.ptr, x->name.len < y->name.len ? x->name.len : y->name.len);
	return c ? c : (x->name.len > y->name.len) - (x->name.len < y->name.len);
}

/* The call sites and functions, most used first, at most max_sites (0: all). */
static void tt_print_sites(FILE *out, const struct tt_file *f, const struct tt_info_sink *in,
			   size_t max_sites)
{
	const struct tt_site **order = malloc((f->nsites ? f->nsites : 1) * sizeof(*order));
	size_t n = 0;
	for (size_t i = 0; order && i < f->nsites; i++) {
		const struct tt_site *s = &f->sites[i];
		bool made = s == f->gap_site || s == f->unbegun_site; /* by the decoder */
		if (!made || in->site_uses[s->id])
			order[n++] = s;
	}
	tt_sort_uses = in->site_uses;
	if (order)
		qsort(order, n, sizeof(*order), tt_site_order);
	fprintf(out, "  %18s  %10s  %-24s %s\n", "site", "uses", "name (function())", "where (in function)");
	size_t shown = max_sites && max_sites < n ? max_sites : n;
	for (size_t i = 0; i < shown; i++) {
		const struct tt_site *s = order[i];
		fprintf(out, "  %#18" PRIx64 "  %10" PRIu64 "  ", s->address, in->site_uses[s->id]);
		if (s == f->gap_site || s == f->unbegun_site) {
			tt_print_str(out, s->name, 24);
			fputs(" (shown by the converter)\n", out);
			continue;
		}
		if (s->is_func) { /* named by its symbols */
			/* (a C++ name has its parameters: "run(int)", not "run(int)()") */
			bool has_params = memchr(s->name.ptr, '(', s->name.len) != NULL;
			tt_print_str(out, s->name, 0);
			if (!has_params)
				fputs("()", out);
			for (int pad = (int)s->name.len + (has_params ? 0 : 2); pad < 24; pad++)
				fputc(' ', out);
			fputc(' ', out);
			tt_print_str(out, s->file, 0);
			fprintf(out, s->file.len ? ":%" PRIu32 "\n" : "\n", s->line);
			continue;
		}
		tt_print_str(out, s->name, 24);
		fputc(' ', out);
		tt_print_str(out, s->file, 0);
		fprintf(out, ":%" PRIu32 " (", s->line);
		tt_print_str(out, s->func, 0);
		fputs(")\n", out);
	}
	if (shown < n)
		fprintf(out, "  ... %zu more, used less (--sites 0 lists them all)\n", n - shown);
	free(order);
}

static void tt_print_id(FILE *out, const char *what, const uint8_t id[16])
{
	static const uint8_t none[16];
	fprintf(out, ", %s ", what);
	if (!memcmp(id, none, sizeof none))
		fprintf(out, "not known");
	for (int i = 0; memcmp(id, none, sizeof none) && i < 16; i++)
		fprintf(out, "%02x", id[i]);
}

/* A wall clock reading: UTC, TAI's lead, and what the kernel says of its error (a
 * Windows run's: its system time alone). */
static void tt_print_clock_reading(FILE *out, const char *when, const struct tt_clock_reading *r,
				   bool windows)
{
	time_t sec = (time_t)(r->realtime_ns / 1000000000);
	struct tm tm;
	char date[32] = "?";
	if (gmtime_r(&sec, &tm))
		strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", &tm);
	if (windows) {
		fprintf(out, "  wall clock %s: %s.%09" PRId64 " UTC (the system time; Windows gives "
			"no TAI and no estimate of its error)\n", when, date, r->realtime_ns % 1000000000);
		return;
	}
	/* (TAI's lead is whole seconds: what is left is the two clocks' reads apart) */
	int64_t tai_lead_s = (r->tai_ns - r->realtime_ns + 500000000) / 1000000000;
	fprintf(out, "  wall clock %s: %s.%09" PRId64 " UTC (CLOCK_REALTIME), CLOCK_TAI %+" PRId64
		" s%s", when, date, r->realtime_ns % 1000000000, tai_lead_s,
		tai_lead_s ? "" : " (the kernel's TAI offset not set)");
	if (r->state < 0) {
		fprintf(out, "; the kernel's estimate of its error not known (adjtimex failed)\n");
		return;
	}
	fprintf(out, "; error ");
	tt_print_seconds(out, r->esterror_ns);
	fprintf(out, " (the kernel's estimate), at most ");
	tt_print_seconds(out, r->maxerror_ns);
	fprintf(out, "; %s\n", tt_clock_unsynchronized(r) ?
		"UNSYNCHRONIZED (the kernel says so: its wall clock may be off by any amount)" :
		"synchronized");
}

/* The machine the run ran on, and its wall clocks. */
static void tt_print_machine(FILE *out, const struct tt_file *f)
{
	const struct tt_machine_info *m = &f->machine;
	if (!f->machine_known) {
		fprintf(out, "  machine:  not known (a file written before runs said it)\n");
		return;
	}
	bool windows = m->flags & TT_MACHINE_WINDOWS;
	fprintf(out, "  machine:  host ");
	tt_print_str(out, (struct tt_str){m->host_name, m->host_name_len}, 0);
	if (windows) {
		fprintf(out, ", Windows (no machine or boot id)");
	} else {
		tt_print_id(out, "machine id", m->machine_id);
		tt_print_id(out, "boot id", m->boot_id);
	}
	fputc('\n', out);
	if (m->flags & TT_MACHINE_START_CLOCK)
		tt_print_clock_reading(out, "at start", &m->start, windows);
	/* (a live file's and a stream's, written as the file began: seconds before its
	 * records end, and a run killed later wrote no other: outside testers r50 #6, r51) */
	if (m->flags & TT_MACHINE_WRITTEN_CLOCK)
		tt_print_clock_reading(out, f->header.flags & (TT_FILE_LIVE | TT_FILE_STREAMED) ? "as the file began"
												: "as written",
				       &m->written, windows);
}

/* The runtime's lines beside the trace (TICKTRACE_LOG's default in the zero-markup
 * build: TRACE.log), written as this run ran or after: not one an earlier run left. */
static void tt_print_log(FILE *out, const struct tt_file *f)
{
	char log[4096];
	struct stat st;
	if (snprintf(log, sizeof log, "%s.log", f->path) >= (int)sizeof log || stat(log, &st) < 0 ||
	    !S_ISREG(st.st_mode))
		return;
	/* (in seconds: Windows' stat has no finer time) */
	if ((f->machine.flags & TT_MACHINE_START_CLOCK) &&
	    (int64_t)st.st_mtime < f->machine.start.realtime_ns / 1000000000)
		return;
	fprintf(out, "  log:      %s: ticktrace's own lines (TICKTRACE_LOG), %jd %s\n", log,
		(intmax_t)st.st_size, TT_BYTES(st.st_size));
}

static void tt_print_file(FILE *out, const struct tt_file *f, const struct tt_info_sink *in,
			  size_t max_sites)
{
	const struct tt_file_header *h = &f->header;
	fprintf(out, "%s: ticktrace raw file, format version %" PRIu32 ", %zu %s%s\n", f->path,
		h->version, f->size, TT_BYTES(f->size),
		h->flags & TT_FILE_SNAPSHOT ? ", a snapshot: a window of the run around a spike or a "
					      "trigger (TICKTRACE_SNAPSHOTS)" :
		h->flags & TT_FILE_STREAMED ? ", written as the program ran (mode stream)" :
		h->flags & TT_FILE_RING ? ", the latest events of each thread (mode ring)" : "");
	fprintf(out, "  process:  %" PRIu32 " (", f->process.pid);
	tt_print_str(out, f->process.name, 0);
	if (f->process.ppid)
		fprintf(out, "), parent %" PRIu32 ", command line: ", f->process.ppid);
	else /* (Windows: a program Wine started from Linux, or a file from before it was kept) */
		fprintf(out, "), parent not known, command line: ");
	tt_print_cmdline(out, f->process.cmdline);
	fprintf(out, "  clock:    TSC at %" PRIu64 " Hz, from the start and end anchors; %s%s\n",
		h->tsc_hz,
		h->flags & TT_FILE_INVARIANT_TSC ? "invariant" : "NOT invariant (times may drift)",
		f->machine.flags & TT_MACHINE_WINDOWS ? "" :
		h->flags & TT_FILE_TSC_RELIABLE ? ", the kernel's clocksource" :
						  ", not the kernel's clocksource");
	fprintf(out, "  started:  CLOCK_MONOTONIC ");
	tt_print_seconds(out, h->start.monotonic_ns);
	fprintf(out, ", recorded for ");
	tt_print_seconds(out, tt_clock_ns(&f->clock, h->end.tsc) - h->start.monotonic_ns);
	fprintf(out, " (start to end anchor)\n");
	const struct tt_machine_info *m = &f->machine;
	if (m->timens_monotonic_ns || m->timens_boottime_ns) {
		fprintf(out, "  time namespace: CLOCK_MONOTONIC ");
		tt_print_offset(out, m->timens_monotonic_ns);
		fprintf(out, ", CLOCK_BOOTTIME ");
		tt_print_offset(out, m->timens_boottime_ns);
		fprintf(out, " ahead of the machine's (taken out: every time here is the machine's)\n");
	}
	tt_print_machine(out, f);
	fprintf(out, "  records:  %" PRIu64 ", dropped %" PRIu64 ", %zu threads, %zu call sites, "
		"%zu functions, %zu modules\n", f->records, f->dropped + h->unregistered_dropped,
		f->nthreads, f->nsites - f->nfuncs - (f->gap_site != NULL) - (f->unbegun_site != NULL), f->nfuncs, f->nmodules);
	tt_print_log(out, f);
	char crash[TT_CRASH_TEXT];
	if ((h->flags & TT_FILE_CRASHED) && tt_file_stopped_by_signal(f))
		fprintf(out, "  ended:    by %s; ticktrace's handler wrote this file\n",
			tt_crash_text(h->crash_signal, crash, sizeof crash));
	else if (h->flags & TT_FILE_CRASHED)
		fprintf(out, "  ended:    the run crashed (%s); its crash handler wrote this file\n",
			tt_crash_text(h->crash_signal, crash, sizeof crash));
	if (f->cut_short && tt_file_writer_running(f))
		fprintf(out, "  ended:    not yet: process %" PRIu32 " is still writing it (read up "
			"to offset %" PRIu64 ")\n", f->process.pid, f->cut_at);
	else if (f->cut_short && (h->flags & TT_FILE_LIVE_EXITED))
		fprintf(out, "  ended:    the run exited, but its trace could not be written at exit: "
			"this live file holds its events (read up to offset %" PRIu64 ")\n", f->cut_at);
	else if (f->cut_short)
		fprintf(out, "  ended:    NO: the run crashed or was killed (no END section; read up to "
			"offset %" PRIu64 ")\n", f->cut_at);
	char gave[TT_GAVE_BACK_TEXT];
	if (tt_gave_back_text(h->flags, gave, sizeof gave))
		fprintf(out, "  gave way: the program's pthread_create met the limit on the user's "
			"processes (RLIMIT_NPROC or a cgroup's pids.max): ticktrace ended %s\n", gave);
	if (h->flags & TT_FILE_GAVE_ROOM)
		fprintf(out, "  gave way: the address-space limit (ulimit -v, RLIMIT_AS): the trace buffers "
			"stopped growing where the program's own use of its room left them no more (a "
			"quarter of what was free at most); the events past them were dropped, counted "
			"(no memory)\n");
	const char *erased = tt_file_erased_missing(f);
	if (erased)
		fprintf(out, "  erased:   %s\n", erased);
	if (f->snapshot)
		tt_print_snapshot(out, f, in);
	if (h->unregistered_dropped)
		fprintf(out, "  dropped before their thread had a buffer: %" PRIu64 "\n",
			h->unregistered_dropped);
	fprintf(out, "  %8s  %-20s %12s %10s %10s %8s %8s  %s\n", "tid", "name", "events", "dropped",
		"unmatched", "clamped", "open", "first .. last event (since the trace start)");
	for (size_t i = 0; i < f->nthreads; i++) {
		const struct tt_thread *th = &f->threads[i];
		const struct tt_thread_summary *s = &in->threads[th->id];
		fprintf(out, "  %8" PRIu32 "  ", th->tid);
		tt_print_str(out, th->name, 20);
		fprintf(out, " %12" PRIu64 " %10" PRIu64 " %10" PRIu64 " %8" PRIu64 " %8" PRIu64 "  ",
			s->events, th->dropped_total, s->unmatched, s->clamped, s->unterminated);
		if (s->events) {
			tt_print_seconds(out, s->first_ts);
			fprintf(out, " .. ");
			tt_print_seconds(out, s->last_ts);
			fputc('\n', out);
		} else {
			fprintf(out, "no events\n");
		}
	}
	tt_print_states(out, f, in);
	tt_print_sites(out, f, in, max_sites);
}

int tt_info(char *const *paths, size_t n, size_t max_sites, const char *debug_dir, FILE *out)
{
	struct tt_session_opts ro = {.inputs = paths, .ninputs = n, .debug_dir = debug_dir};
	struct tt_session run;
	struct tt_info_sink in = {.sink.ops = &tt_info_ops};
	struct tt_sink *sinks[] = {&in.sink};
	int rc = tt_session_open(&run, &ro);
	if (rc == 0)
		rc = tt_session_decode(&run, sinks, 1);
	for (size_t i = 0; rc == 0 && i < run.trace.nfiles; i++)
		tt_print_file(out, &run.trace.files[i], &in, max_sites);
	free(in.threads);
	free(in.site_uses);
	return tt_session_close(&run, rc);
}

static const char tt_info_usage[] =
	"usage: ticktrace info RUN.ttr [MORE.ttr ...] [--sites N] [--debug-dir DIR]\n"
	"\n"
	"Describes each raw file: format version, TSC rate and how it was obtained, when\n"
	"and how long it recorded, the process, each thread with its event, dropped,\n"
	"unmatched, clamped and unterminated counts, and the call sites with their uses,\n"
	"most used first: a scope's name, file:line and (function); a function recorded\n"
	"with -finstrument-functions as name() and file:line.\n"
	"\n"
	"      --sites N       list the N most used call sites (default 25; 0: all)\n"
	"      --debug-dir DIR where to look for debug info first (see convert)\n"
	"  -q, --quiet         taken, as by every command that reads a run (info prints\n"
	"                      no summary line to leave out)\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 described, 1 bad input, 2 usage.\n";

enum { OPT_SITES = 256, OPT_DEBUG_DIR };
const struct option tt_info_options[] = {
	{"help", no_argument, NULL, 'h'},
	{"quiet", no_argument, NULL, 'q'},
	{"sites", required_argument, NULL, OPT_SITES},
	{"debug-dir", required_argument, NULL, OPT_DEBUG_DIR},
	{NULL, 0, NULL, 0},
};

const struct tt_cmd_arg tt_info_args[] = {
	{OPT_DEBUG_DIR, TT_ARG_DIR, NULL},
	{0, 0, NULL},
};

int tt_cmd_info(int argc, char **argv)
{
	int c;
	size_t sites = TT_INFO_SITES;
	const char *debug_dir = NULL;
	while ((c = getopt_long(argc, argv, "hq", tt_info_options, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(tt_info_usage, stdout); return 0;
		case 'q': break;
		case OPT_SITES: {
			uint64_t n;
			if (!tt_count_option(optarg, 0, SIZE_MAX, &n))
				return tt_usage_error(tt_info_usage, "info: --sites is a number (0: all)");
			sites = (size_t)n;
			break;
		}
		case OPT_DEBUG_DIR: debug_dir = optarg; break;
		default: return tt_usage_error(tt_info_usage, NULL);
		}
	}
	if (optind >= argc)
		return tt_usage_error(tt_info_usage, "info: no input file");
	if (tt_stdout_needed(NULL) < 0)
		return 1;
	return tt_info(argv + optind, (size_t)(argc - optind), sites, debug_dir, stdout) == 0 ? 0 : 1;
}
