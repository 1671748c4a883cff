/* `ticktrace convert`: raw files to Chrome trace JSON or Perfetto's protobuf format,
 * filtered, with spikes marked, through the one pipeline (decode/pipeline.c). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

static const char tt_convert_usage[] =
	"usage: ticktrace convert RUN.ttr [MORE.ttr ...] -o OUTPUT [options]\n"
	"\n"
	"Converts raw files into Chrome trace JSON or Perfetto's protobuf format\n"
	"(several files: one timeline, one process each, aligned on CLOCK_MONOTONIC;\n"
	"the runs of other machines placed through their wall clocks, CLOCK_TAI where\n"
	"both know it, else CLOCK_REALTIME, as well as their kernels say those are:\n"
	"said on stderr and in the JSON's otherData \"machines\").\n"
	"The output is written under a temporary name and renamed when complete; on\n"
	"error nothing is left behind. An output that is one of the inputs, by any name\n"
	"(a link, stdout redirected onto it), is refused.\n"
	"\n"
	"  -o, --output FILE   where to write; '-' is standard output\n"
	"  -f, --force         replace an existing output file\n"
	"  -F, --format FMT    json, or perfetto (Perfetto's protobuf TrackEvent format);\n"
	"                      by default .pftrace, .perfetto-trace and .pb outputs are\n"
	"                      perfetto, anything else json (said on stderr where the\n"
	"                      name is not .json; a raw file's, .ttr or .live, refused)\n"
	"  -q, --quiet         no summary line (warnings are still printed)\n"
	"  -s, --source        JSON: \"src\":\"file:line\" in every slice and instant\n"
	"                      (a third more bytes; the Perfetto format always has them)\n"
	"      --from TIME     keep what happens from TIME after the trace start on\n"
	"      --to TIME       ... up to TIME after the trace start (slices that overlap\n"
	"                      the window are kept whole; the threads' states are cut\n"
	"                      at its edges, and --thread keeps those of its threads)\n"
	"      --clip          cut the slices that cross --from or --to at the window's\n"
	"                      edge, flagged clipped_begin or clipped_end in their args\n"
	"      --thread T      keep the threads whose tid or name is T (repeatable)\n"
	"      --min-dur TIME  keep slices lasting TIME or more (JSON only); their\n"
	"                      children are shorter, so nesting holds\n"
	"                      TIME is a number with ns, us, ms or s (0 alone needs\n"
	"                      none); a filter that keeps nothing (a --thread no thread\n"
	"                      matches, a window past the run) is said on stderr, and\n"
	"                      the output is a valid, empty trace (status 0)\n"
	"      --threshold TIME, --thresholds FILE, --spikes\n"
	"                      mark each spike (see 'ticktrace spikes --help') with an\n"
	"                      instant on its thread at its end, named \"spike: NAME took\n"
	"                      DURATION\" (args: dur_ns, threshold_ns, threshold_from,\n"
	"                      end_late_ns where its end was among dropped events,\n"
	"                      start_early_ns where its beginning was not recorded\n"
	"                      (\"took at least DURATION\"), and\n"
	"                      its split where its thread has states: on_cpu_ns,\n"
	"                      preempted_ns, blocked_ns, unknown_ns, causes_from,\n"
	"                      causes_error_ns; kernel_moved_ns, stolen_ns,\n"
	"                      stolen_error_ns (or stolen_unknown and\n"
	"                      stolen_error_ns, all of on CPU),\n"
	"                      minor_faults, major_faults where known,\n"
	"                      faults_at_least where read inside it\n"
	"                      alone, faults_at_most where around it, reaching\n"
	"                      outside it); --spikes alone uses\n"
	"                      the thresholds set in the code. Without any of them, no\n"
	"                      spikes are looked for.\n"
	"      --offset HOST=TIME  the runs recorded on HOST moved by TIME (a known offset\n"
	"                      of its clock; TIME may be negative: -1.5ms); repeatable:\n"
	"                      a host's add up, to less than 2^62 ns (146 years); the\n"
	"                      trace's times, placed, must span less than 2^61 ns (73\n"
	"                      years). A host name\n"
	"                      that two machines have is refused: HOST may be the\n"
	"                      beginning of a machine id or boot id instead (4 digits\n"
	"                      or more), as convert names machines then\n"
	"      --align flows   place the runs of other machines by the flows between them\n"
	"                      and the machines placed (a first pass over the run),\n"
	"                      machine by machine, through the others where a machine\n"
	"                      has flows with the first only by way of them: where flows\n"
	"                      go both ways, at the middle of the window their send and\n"
	"                      receive times leave (NTP's four timestamps), within half\n"
	"                      its width (and the uncertainty of the machine it is placed\n"
	"                      against); said on stderr. A placement by flows replaces\n"
	"                      what --offset gave the machine (which stays where the\n"
	"                      flows cannot place it); a machine of the first's boot\n"
	"                      stays, exact, unless --offset moved it. Flows between\n"
	"                      machines that arrive before they left are always said\n"
	"      --compress      Perfetto: the packets deflated in bundles (compressed_packets,\n"
	"                      which trace_processor and the UI read) whatever the size,\n"
	"                      and harder: the smallest file. By default a trace of 1 MiB\n"
	"                      of packets or more is deflated, faster (a thirtieth of the\n"
	"                      bytes or less; by the output's writer thread, beside the\n"
	"                      conversion), a smaller one not\n"
	"      --no-compress   Perfetto: plain packets whatever the size\n"
	"      --split N       write time-contiguous shards OUTPUT.0001.EXT ... of at most\n"
	"                      N slices each, what trace_processor holds: scopes, instants,\n"
	"                      flows' ends, frames and the threads' states (a .pftrace's\n"
	"                      are thread_state rows), the rows a shard's edges add too\n"
	"                      (N from 1; more only where more begin at one nanosecond,\n"
	"                      or the threads' rows at its edges are more), each a\n"
	"                      whole trace that opens alone, with every process, thread\n"
	"                      and name; a slice open across a boundary is in the shard\n"
	"                      where it begins, so the shards' slices add up to the\n"
	"                      run's; the threads' states are cut at the shards' edges,\n"
	"                      and add up too. Without it, a trace of more than 3000000 slices,\n"
	"                      counted so (what the Perfetto UI loads in a browser tab),\n"
	"                      is said on stderr. The shards' numbers have one width in a\n"
	"                      run (4 digits, more where it could make more than 9999\n"
	"                      shards), so that OUTPUT.[0-9]*.EXT sorted is the run in\n"
	"                      time. The shards go in place together at the end: on error,\n"
	"                      or a signal (SIGINT, SIGTERM, SIGHUP) before it, none is\n"
	"                      left and an earlier split's are as they were. Files of an\n"
	"                      earlier split of the name (OUTPUT.NNNN.EXT) are refused;\n"
	"                      with --force, those this split does not replace are removed\n"
	"                      with its shards' going in place (said)\n"
	"      --debug-dir DIR look for debug info here first (DIR/.build-id/xx/yyyy.debug,\n"
	"                      or by name), then in /usr/lib/debug; functions recorded with\n"
	"                      -finstrument-functions are named from the binaries' symbols\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 converted, 1 bad input or failed conversion, 2 usage.\n";

/* enum tt_format's names, from TT_FORMAT_JSON on */
static const char tt_format_names[] = "json, perfetto";
static const char tt_align_names[] = "flows";

/* JSON that a viewer will not load says so, and what to do instead. */
static void tt_json_size_check(const struct tt_convert_opts *opts, const char *name,
			       uint64_t bytes)
{
	uint64_t limit = opts->json_limit ? opts->json_limit : TT_JSON_VIEWER_LIMIT;
	if (bytes <= limit)
		return;
	tt_warn("%s: %" PRIu64 " MB of JSON, more than the %" PRIu64 " MB that Perfetto and "
		"chrome://tracing load (a JavaScript string's limit): convert to Perfetto's format "
		"instead (-o run.pftrace: about a quarter of the size, no such limit), or keep less "
		"(--min-dur, --from/--to, --thread)",
		strcmp(name, "-") ? name : "stdout", bytes >> 20, (limit + 24) >> 20);
}

enum tt_format tt_format_named(const char *name)
{
	int i = tt_value_index(tt_format_names, name);
	return i < 0 ? TT_FORMAT_AUTO : (enum tt_format)(TT_FORMAT_JSON + i);
}

static enum tt_format tt_format_for(const struct tt_convert_opts *opts)
{
	if (opts->format != TT_FORMAT_AUTO)
		return opts->format;
	const char *o = opts->output;
	return tt_ends_with(o, ".pftrace") || tt_ends_with(o, ".perfetto-trace") ||
			       tt_ends_with(o, ".pb") ?
		       TT_FORMAT_PERFETTO :
		       TT_FORMAT_JSON;
}

/* An output whose name no format has (-F not given): a raw file's name refused, as
 * every command would take the trace for a broken recording; another said, as JSON is
 * then a guess (ticktrace(1): "anything else json"). 0, or -1 after saying why. */
static int tt_output_name_check(const struct tt_convert_opts *opts, enum tt_format format)
{
	const char *base = tt_os_file_name(opts->output);
	const char *ext = strrchr(base, '.');
	if (opts->format != TT_FORMAT_AUTO || format != TT_FORMAT_JSON || !ext || ext == base ||
	    strcmp(ext, ".json") == 0)
		return 0;
	if (strcmp(ext, ".ttr") == 0 || strcmp(ext, ".live") == 0)
		return tt_error("%s: a raw file's name (%s), and convert writes a trace: name it "
				".json or .pftrace (or -F json keeps the name)", opts->output, ext);
	tt_warn("%s: written as JSON, as a name not .json, .pftrace, .perfetto-trace or .pb "
		"is (-F json or -F perfetto chooses)", opts->output);
	return 0;
}

/* JSON: each process given another pid than its own (viewers join processes by pid)
 * said, and whose process had it. The number said, or -1 after reporting why. */
static int tt_say_pids(const struct tt_trace *t)
{
	uint32_t *pid_of = calloc(t->nfiles ? t->nfiles : 1, sizeof(*pid_of));
	if (!pid_of)
		return tt_error("out of memory for %zu files", t->nfiles);
	tt_json_pids(t, pid_of);
	int said = 0;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tt_file *f = &t->files[i];
		size_t k = 0; /* the file whose process kept the pid */
		while (k < i && pid_of[k] != f->process.pid)
			k++;
		if (pid_of[i] == f->process.pid || k == i)
			continue;
		tt_warn("%s: its process %" PRIu32 " is pid %" PRIu32 " in the JSON (\"recorded_pid\" "
			"in otherData), as %s's process had pid %" PRIu32 " %s", f->path,
			f->process.pid, pid_of[i], t->files[k].path, f->process.pid,
			t->files[k].machine_index == f->machine_index ?
				"on the same machine at the same time (another PID namespace)" :
				"on another machine");
		said++;
	}
	free(pid_of);
	return said;
}

static void tt_put_host(FILE *out, const struct tt_trace *t, size_t k)
{
	const struct tt_machine_info *m = &t->machines[k].file->machine;
	fprintf(out, "host ");
	tt_put_escaped(out, m->host_name_len ? m->host_name : "(not known)",
		       m->host_name_len ? m->host_name_len : 11);
	char prefix[33];
	const char *key = tt_machine_key(t, k, prefix);
	if (key)
		fprintf(out, " (%s %s)", key, prefix);
}

/* The window that --align flows found a machine's flows leave it, and against which
 * machine where that is not the first (a chain: their uncertainties add up). */
static void tt_say_window(const struct tt_trace *t, const struct tt_machine *mc)
{
	fprintf(stderr, "the window its flows leave: ");
	tt_print_offset(stderr, mc->flows_lo_ns);
	fprintf(stderr, " .. ");
	tt_print_offset(stderr, mc->flows_hi_ns);
	if (mc->flows_with) {
		fprintf(stderr, ", against ");
		tt_put_host(stderr, t, mc->flows_with);
	}
}

/* How runs of several machines were placed, and how far off that may be; a machine
 * whose clock the kernel calls unsynchronized is said where wall clocks placed any. */
static void tt_say_machines(const struct tt_trace *t)
{
	bool by_wall = false;
	for (size_t k = 0; k < t->nmachines; k++)
		by_wall |= !strcmp(t->machines[k].clock, "CLOCK_REALTIME") ||
			   !strcmp(t->machines[k].clock, "CLOCK_TAI"); /* (not by flows) */
	if (t->nmachines < 2)
		return;
	fprintf(stderr, "ticktrace: %zu machines, on the CLOCK_MONOTONIC of the first:\n",
		t->nmachines);
	for (size_t k = 0; k < t->nmachines; k++) {
		const struct tt_machine *mc = &t->machines[k];
		const struct tt_machine_info *m = &mc->file->machine;
		fprintf(stderr, "ticktrace:   ");
		tt_put_host(stderr, t, k);
		if (!strcmp(mc->clock, "CLOCK_MONOTONIC") && !mc->given_ns) {
			fprintf(stderr, ": %s, exact", k ? "the first's boot" : "the first");
		} else {
			fprintf(stderr, ": placed by %s, ", mc->clock);
			tt_print_offset(stderr, mc->offset_ns);
			if (mc->given_ns) {
				fprintf(stderr, " (of which --offset ");
				tt_print_offset(stderr, mc->given_ns);
				fputc(')', stderr);
			}
			if (mc->flows_ns) {
				fprintf(stderr, " (of which the flows ");
				tt_print_offset(stderr, mc->flows_ns);
				fputc(')', stderr);
			}
			if (mc->uncertainty_ns < 0) {
				fprintf(stderr, ", how far off not known (a kernel did not say its clock's error)");
			} else if (!strcmp(mc->clock, "flows")) {
				fprintf(stderr, ", off by up to ");
				tt_print_seconds(stderr, mc->uncertainty_ns);
				fprintf(stderr, " (");
				tt_say_window(t, mc);
				fputc(')', stderr);
			} else if (mc->uncertainty_ns) {
				fprintf(stderr, ", off by up to ");
				tt_print_seconds(stderr, mc->uncertainty_ns);
				fprintf(stderr, " (both kernels' maximum error)");
			}
		}
		if (mc->flows_window && strcmp(mc->clock, "flows")) {
			fprintf(stderr, "; ");
			tt_say_window(t, mc);
		}
		if (m->timens_monotonic_ns) {
			fprintf(stderr, "; its time namespace's ");
			tt_print_offset(stderr, m->timens_monotonic_ns);
			fprintf(stderr, " taken out");
		}
		if (mc->wall_step_ns && by_wall) {
			fprintf(stderr, "; its wall clock stepped ");
			tt_print_offset(stderr, mc->wall_step_ns);
			fprintf(stderr, " during its run (against CLOCK_MONOTONIC, between its readings at "
				"the start and as its file was written): placed by the start's");
		}
		char prefix[33]; /* (--offset's name for it: its host's, or its id's beginning) */
		bool keyed = tt_machine_key(t, k, prefix) != NULL;
		if (mc->unsynchronized && by_wall)
			fprintf(stderr, "; its kernel calls its clock UNSYNCHRONIZED: its wall clock may be "
				"off by any amount (--offset %.*s=TIME corrects a known offset)",
				keyed ? (int)strlen(prefix) : (int)m->host_name_len, keyed ? prefix : m->host_name);
		fputc('\n', stderr);
	}
}


/* Runs of one boot whose wall clocks disagree beyond slewing: stepped between them, or a
 * damaged file; the boot placed by its earliest run's, whatever the files' order. The
 * number of warnings said. */
static uint64_t tt_warn_runs_disagree(const struct tt_trace *t)
{
	uint64_t said = 0;
	for (size_t k = 0; k < t->nmachines; k++) {
		const struct tt_machine *mc = &t->machines[k];
		if (!mc->runs_disagree_ns)
			continue;
		fprintf(stderr, "ticktrace: warning: ");
		tt_put_host(stderr, t, k);
		fprintf(stderr, ": runs of one boot disagree about its wall clock: %s's moved ",
			mc->disagreeing->path);
		tt_print_offset(stderr, mc->runs_disagree_ns);
		fprintf(stderr, " against CLOCK_MONOTONIC from %s's (its boot's earliest run, which "
			"placed it): the clock stepped between them, or a file's time namespace "
			"offsets are damaged\n", mc->anchor->path);
		said++;
	}
	return said;
}

/* --align flows: a first pass pairs the flows between machines (report/align.c); each
 * machine whose flows with one placed go both ways moves to the middle of the window
 * they leave, machine by machine (through the others: a chain), and its uncertainty
 * is half its width, plus that of the machine it was placed against, whatever
 * --offset gave it (the flows measure; the offset stays where they cannot place it).
 * A machine of the first's boot not moved by --offset stays (exact): the window its
 * flows leave is said. */
static int tt_align_by_flows(struct tt_trace *t, uint64_t *warnings)
{
	size_t n = t->nmachines;
	if (n < 2) {
		tt_warn("--align flows: the runs are of one machine: nothing to align");
		++*warnings;
		return 0;
	}
	struct tt_sink *bounds = tt_flow_bounds_new(n);
	struct tt_flow_place *place = calloc(n, sizeof(*place));
	bool *fixed = calloc(n, sizeof(*fixed));
	int rc = bounds && place && fixed ? tt_decode(t, &bounds, 1) : tt_error("out of memory");
	if (rc == 0) {
		const struct tt_flow_pair *pairs = tt_flow_bounds_pairs(bounds);
		for (size_t k = 0; k < n; k++)
			fixed[k] = !strcmp(t->machines[k].clock, "CLOCK_MONOTONIC") &&
				   !t->machines[k].given_ns;
		tt_flow_align(pairs, n, fixed, place);
		for (size_t k = 1; k < n; k++) {
			struct tt_machine *mc = &t->machines[k];
			const struct tt_flow_place *pl = &place[k];
			if (pl->by == TT_FLOW_NOT_PLACED) {
				++*warnings;
				fprintf(stderr, "ticktrace: warning: --align flows: ");
				tt_put_host(stderr, t, k);
				fprintf(stderr, " stays where %s placed it: no machine placed has flows "
					"with it both ways that agree\n", mc->clock);
				for (size_t j = 0; j < n; j++) {
					const struct tt_flow_pair *p = &pairs[j < k ? j * n + k : k * n + j];
					if (j == k || (!p->a_to_b && !p->b_to_a))
						continue;
					fprintf(stderr, "ticktrace:   with ");
					tt_put_host(stderr, t, j);
					fprintf(stderr, ": %" PRIu64 " flows to it, %" PRIu64 " from it%s\n",
						j < k ? p->a_to_b : p->b_to_a, j < k ? p->b_to_a : p->a_to_b,
						p->a_to_b && p->b_to_a ? ", which disagree (clocks that drift apart, "
						"or flows of one id that are not one message)" : "");
				}
				continue;
			}
			mc->flows_window = true;
			mc->flows_lo_ns = pl->lo_ns;
			mc->flows_hi_ns = pl->hi_ns;
			mc->flows_with = pl->by;
			if (fixed[k])
				continue;
			tt_trace_move(t, k, pl->shift_ns);
			mc->flows_ns = pl->shift_ns;
			mc->clock = "flows";
			mc->uncertainty_ns = pl->uncertainty_ns;
		}
	}
	tt_sink_free(bounds);
	free(place);
	free(fixed);
	return rc;
}

/* Flows between machines that arrive before they left, as placed: said, and what
 * would place them (not --align flows where it was given); the warnings. */
static uint64_t tt_say_early_flows(const struct tt_trace *t, const struct tt_sink *bounds,
				   bool aligned)
{
	size_t n = t->nmachines;
	uint64_t warnings = 0;
	const struct tt_flow_pair *pairs = tt_flow_bounds_pairs(bounds);
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++) {
			const struct tt_flow_pair *p = &pairs[a * n + b];
			if (!p->early)
				continue;
			warnings++;
			tt_warn("%" PRIu64 " of the %" PRIu64 " flows between machines arrive before they "
				"left (by up to %" PRId64 ".%09" PRId64 " s): the clocks of the two are "
				"placed off by more than that (%s--offset HOST=TIME by a known offset):",
				p->early, p->a_to_b + p->b_to_a, p->earliest / 1000000000,
				p->earliest % 1000000000,
				aligned ? "" : "--align flows places them by their flows, ");
			fputs("ticktrace:   ", stderr);
			tt_put_host(stderr, t, a);
			fputs(" and ", stderr);
			tt_put_host(stderr, t, b);
			fputc('\n', stderr);
		}
	return warnings;
}

/* Flows between machines into a .pftrace: Perfetto's trace_processor, and so its UI,
 * links flow ids within a machine only (each machine_id has a flow tracker of its own,
 * in its sources of 2026): their arrows are in the file but not drawn. Said, with
 * where they are. The warnings. */
static uint64_t tt_say_flows_between_machines(const struct tt_trace *t, const struct tt_sink *bounds)
{
	size_t n = t->nmachines;
	const struct tt_flow_pair *pairs = tt_flow_bounds_pairs(bounds);
	uint64_t flows = 0;
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++)
			flows += pairs[a * n + b].a_to_b + pairs[a * n + b].b_to_a;
	if (flows)
		tt_warn("%" PRIu64 " flows between machines: Perfetto links flows within a machine "
			"only (a flow tracker per machine), so the .pftrace's arrows between machines "
			"are not drawn; the JSON's are (-o OUT.json)", flows);
	return flows ? 1 : 0;
}

/* The sinks of one output: writer, the user's filter, the shard's window, the spike
 * marks, each wrapping the next; NULL after reporting (out of memory). */
struct tt_chain {
	struct tt_sink *writer, *filter, *shard, *marks;
};

/* The writer first: it may read, to its end, the trace a filter showed it (the
 * filter's, cut_states) */
static void tt_chain_free(struct tt_chain *c)
{
	tt_sink_free(c->writer);
	tt_sink_free(c->shard);
	tt_sink_free(c->filter);
	tt_sink_free(c->marks);
	*c = (struct tt_chain){0};
}

static struct tt_sink *tt_chain_new(struct tt_chain *c, const struct tt_convert_opts *opts,
				    struct tt_sink *writer, const struct tt_filter *shard,
				    const struct tt_thresholds *thresholds)
{
	*c = (struct tt_chain){.writer = writer};
	struct tt_sink *first = writer;
	/* each window cuts the threads' states the writer shows to its own */
	struct tt_filter window = shard ? *shard : (struct tt_filter){0}, user = opts->filter;
	window.cut_states = user.cut_states = true;
	if (first && shard)
		first = c->shard = tt_filter_sink_new(first, &window);
	if (first && tt_filter_active(&opts->filter))
		first = c->filter = tt_filter_sink_new(first, &user);
	if (first && opts->spikes)
		first = c->marks = tt_spike_mark_sink_new(first, thresholds);
	if (!first) {
		tt_chain_free(c);
		tt_error("out of memory");
	}
	return first;
}

static struct tt_sink *tt_writer_new(enum tt_format format, struct tt_out *out,
				     const struct tt_convert_opts *opts)
{
	return format == TT_FORMAT_PERFETTO ? tt_perfetto_sink_new(out) :
					      tt_json_sink_new(out, opts->source);
}

/* Where the shards' numbers go in `output`'s name: its file name (`base`, past the
 * directory: tt_os_file_name, the system's separators) and, in it, its extension
 * (`ext`: past the last dot, not a leading one; none: the name's end). */
struct tt_shard_stem {
	const char *base, *ext;
};

static struct tt_shard_stem tt_shard_stem(const char *output)
{
	const char *base = tt_os_file_name(output);
	const char *dot = strrchr(base, '.');
	return (struct tt_shard_stem){base, dot && dot != base ? dot : base + strlen(base)};
}

/* Shard k (from 1) of `output`: its name with its number, `width` digits, before the
 * extension (out.pftrace: out.0001.pftrace), into buf; false when it does not fit. */
static bool tt_shard_name(char *buf, size_t cap, const char *output, unsigned k, unsigned width)
{
	const char *ext = tt_shard_stem(output).ext;
	int n = snprintf(buf, cap, "%.*s.%0*u%s", (int)(ext - output), output, (int)width, k, ext);
	return n >= 0 && (size_t)n < cap;
}

/* The digits of a run's shard numbers, one width for all of them, so that a glob of
 * them is the run's and sorts in time: 4, or enough for the most shards the run could
 * make (a shard holds at least half of N less its edges' rows, and the run no more
 * slices than records, a thread's end and its states). */
static unsigned tt_shard_width(const struct tt_trace *t, uint64_t split)
{
	uint64_t most = 0, threads = 0;
	for (size_t i = 0; i < t->nfiles; i++)
		for (size_t k = 0; k < t->files[i].nthreads; k++, threads++)
			most += t->files[i].threads[k].records + 2 + t->files[i].threads[k].nstates;
	uint64_t edges = threads * (2 + TT_STATE_ROWS_AT_END);
	uint64_t room = split > edges ? split - edges : 1;
	uint64_t shards = most / room * 4 + 2, top = 10000;
	unsigned width = 4;
	for (; width < 10 && shards >= top; width++)
		top *= 10;
	return width;
}

/* `output`'s directory, with its separator ("./" for none; allocated, NULL out of
 * memory). */
static char *tt_output_dir(const char *output)
{
	const char *base = tt_os_file_name(output);
	return base != output ? strndup(output, (size_t)(base - output)) : strdup("./");
}

/* Whether `name`, a file's in its directory, is a shard of the output whose stem is
 * `of`, OUTPUT.NNNN.EXT (four digits or more): its number in *k and its digits in
 * *width. */
static bool tt_shard_of(const char *name, const struct tt_shard_stem *of, unsigned long *k, size_t *width)
{
	size_t stem = (size_t)(of->ext - of->base);
	if (strncmp(name, of->base, stem) || name[stem] != '.')
		return false;
	const char *digits = name + stem + 1;
	*width = strspn(digits, "0123456789");
	*k = strtoul(digits, NULL, 10);
	return *width >= 4 && strcmp(digits + *width, of->ext) == 0;
}

static bool tt_any_shard_of(const char *name, void *of)
{
	unsigned long k;
	size_t width;
	return tt_shard_of(name, of, &k, &width);
}

/* The files of an earlier split of `output` in its directory (tt_shard_of) but for
 * this one's (`width` digits, 1 to `made`): removed with `remove` (--force, once this
 * split is whole), else the first named into `first`, so that a glob of the shards is
 * this run's alone. How many. */
static unsigned tt_earlier_shards(const char *output, unsigned width, unsigned made, bool remove,
				  char *first, size_t cap)
{
	char *dir = tt_output_dir(output);
	DIR *d = dir ? opendir(dir) : NULL;
	struct tt_shard_stem of = tt_shard_stem(output);
	unsigned found = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		unsigned long k;
		size_t len;
		if (!tt_shard_of(e->d_name, &of, &k, &len) || (len == width && k >= 1 && k <= made))
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s%s", dir, e->d_name);
		if (remove)
			found += unlink(path) == 0;
		else if (found++ == 0)
			snprintf(first, cap, "%s", of.base != output ? path : e->d_name);
	}
	if (d)
		closedir(d);
	free(dir);
	return found;
}

/* --split in one pass: the shards written as the decoding goes. Shard k holds the
 * slices begun in [its first begin, the next shard's) (a slice open across a boundary
 * belongs, whole, to the shard where it begins), and the instants, counters, flows
 * and frames of that time; the first reaches back to the run's start, the last to its
 * end. It holds at most opts->split slices as trace_processor counts them (unless more
 * begin at one nanosecond): its slices, instants, flows' ends and frames, and the
 * threads' states (slices of the JSON; rows the UI loads too from a .pftrace, where
 * counting them keeps the two formats' shards alike), those cut at its start too. Each is a
 * whole trace through a window (filter.c, by_begin): processes, threads, names and
 * clock, and its threads' states cut to it (written at its finish: its end is known
 * only when the next shard begins). The decoder's threads come window by window
 * (`advance`: every event up to a time has come), one thread after the other inside
 * a window, so a window's events are held until its end, when its begins, sorted,
 * say where shards begin; then each event goes to its shard. A shard is finished
 * (its temporary file written and closed) as soon as the decoding is past its end and
 * every slice begun in it has ended: memory grows with the shards still open (those
 * with a scope open, such as a thread's outermost) and a window's events, never with
 * the run. The finished shards go in place together at the run's end, or none (a
 * failure, a signal before it): no set of shards is ever part this run's and part an
 * earlier one's, or missing some. */
enum tt_held_kind { TT_HOLD_BEGIN, TT_HOLD_END, TT_HOLD_INSTANT, TT_HOLD_COUNTER, TT_HOLD_FLOW,
		    TT_HOLD_FRAME, TT_HOLD_THREAD_END, TT_HOLD_WARNING };

/* An event held until its window ends; its strings copied into the splitter's
 * `text` (at offsets: the copy may move as it grows). */
struct tt_held_event {
	enum tt_held_kind kind;
	struct tt_event e;
	struct tt_thread_summary thread_sum; /* TT_HOLD_THREAD_END: of e.thread */
	size_t text_at, name_at;             /* in text: e.text's copy, e.func_name's */
};

struct tt_shard {
	unsigned number;    /* from 1 */
	bool has_from, has_to;
	int64_t from, to;   /* its window: its first begin, the next shard's less 1 */
	uint64_t open;      /* slices begun in it not yet ended */
	bool written;       /* a file (not only counted: --shard K writes one) */
	struct tt_out out;
	struct tt_chain chain;
	struct tt_sink *first; /* the chain's head */
	char name[4096];
};

struct tt_splitter {
	struct tt_sink sink;
	const struct tt_convert_opts *opts;
	enum tt_format format;
	const struct tt_thresholds *thresholds;
	const struct tt_trace *trace; /* (what the user's filter shows: gone with it) */
	size_t nthreads;
	struct tt_shard **open; /* by number */
	size_t nopen, open_cap;
	unsigned made;          /* shards begun */
	unsigned width;         /* the digits of their numbers (tt_shard_width) */
	uint64_t room;          /* slices the newest takes: opts->split, less the states
				 * across its start */
	uint64_t have;          /* slices begun in the newest */
	bool full;              /* the newest is full: the next begin begins a shard */
	uint64_t slices;        /* begun in all (trace_processor's: as `room` counts them) */
	struct tt_out_held *done; /* the shards written, each its temporary file until the end */
	size_t ndone, done_cap;
	struct tt_held_event *held; /* the window's events */
	size_t nheld, held_cap;
	int64_t *begins;        /* the window's begins, sorted at its end */
	size_t nbegins, begins_cap;
	struct tt_buf text;
	bool *ended;            /* by thread id: its thread_end came */
	size_t *state_next;     /* by thread id: its first state not counted yet */
	int64_t *gone;          /* by thread id: tt_states_gone's, found once for every shard */
	/* By thread id: the shards of its open slices, by depth (a slice whose end the
	 * user's --min-dur drops is closed by the next begin or end at its depth or above) */
	struct tt_open_slices {
		struct tt_shard **shard;
		size_t n, cap;
	} *opened;
	char first_name[4096], last_name[4096];
};

/* The shard whose window holds ts: the newest begun at ts or before; NULL when it
 * is finished (a slice's begin that a user's --from held back until its thread's
 * first event in the window) */
static struct tt_shard *tt_shard_at(struct tt_splitter *sp, int64_t ts)
{
	for (size_t i = sp->nopen; i-- > 0;)
		if (!sp->open[i]->has_from || sp->open[i]->from <= ts)
			return sp->open[i]->has_to && sp->open[i]->to < ts ? NULL : sp->open[i];
	return NULL;
}

/* A trace's time ts as a state's (CLOCK_MONOTONIC ns: a thread's first may be long
 * before the trace's start), saturated. */
static int64_t tt_state_ns(const struct tt_trace *t, int64_t ts)
{
	int64_t ns;
	return __builtin_add_overflow(t->base_ns, ts, &ns) ? (ts < 0 ? INT64_MIN : INT64_MAX) : ns;
}

/* The rows of the threads' states that a shard beginning at `from` holds beyond
 * those of the states begun in it (counted as they come): the states across its start
 * and what its edges add (tt_state_rows_at), none of a thread gone by then. */
static uint64_t tt_states_across(const struct tt_splitter *sp, int64_t from)
{
	const struct tt_trace *t = sp->trace;
	int64_t at = tt_state_ns(t, from);
	uint64_t n = 0;
	for (size_t i = 0; i < t->nfiles; i++)
		for (size_t k = 0; k < t->files[i].nthreads; k++) {
			const struct tt_thread *th = &t->files[i].threads[k];
			if ((th->flags & TT_THREAD_SCHED) && th->nstates && sp->gone[th->id] > at)
				n += tt_state_rows_at(th, at) + TT_STATE_ROWS_AT_END;
		}
	return n;
}

/* Begins shard `number` at `from` (has_from: not the first), the one before it ending
 * there. */
static int tt_shard_begin(struct tt_splitter *sp, bool has_from, int64_t from)
{
	const struct tt_convert_opts *opts = sp->opts;
	struct tt_shard *sh = calloc(1, sizeof(*sh));
	if (!sh || !tt_grow((void **)&sp->open, &sp->open_cap, sp->nopen + 1, sizeof(*sp->open))) {
		free(sh);
		return tt_error("out of memory");
	}
	*sh = (struct tt_shard){.number = ++sp->made, .has_from = has_from, .from = from};
	if (sp->nopen) {
		struct tt_shard *before = sp->open[sp->nopen - 1];
		before->has_to = true;
		before->to = from - 1;
		if (before->chain.shard)
			tt_filter_set_end(before->chain.shard, before->to);
	}
	sp->open[sp->nopen++] = sh;
	uint64_t across = tt_states_across(sp, has_from ? from : INT64_MIN);
	sp->room = across < opts->split ? opts->split - across : 1;
	sp->have = 0;
	sp->full = false;
	if (opts->shard && opts->shard != sh->number)
		return 0; /* only counted */
	if (opts->shard)
		snprintf(sh->name, sizeof(sh->name), "%s", opts->output);
	else if (!tt_shard_name(sh->name, sizeof(sh->name), opts->output, sh->number, sp->width))
		return tt_error("%s: the name is too long for its shards", opts->output);
	else if (strlen(sh->name) != strlen(sp->first_name))
		return tt_error("%s: more than %u shards, past the %u digits of their names: a "
				"larger --split", opts->output, sh->number - 1, sp->width);
	if (tt_out_apart(sh->name, opts->inputs, opts->ninputs) < 0 ||
	    (opts->shard ? tt_out_open(&sh->out, sh->name, opts->force)
			 : tt_out_open_swept(&sh->out, sh->name, opts->force)) < 0)
		return -1;
	sh->written = true;
	if (sp->format == TT_FORMAT_PERFETTO && tt_perfetto_compress(&sh->out, opts->compress) < 0)
		return -1;
	/* (the user's filter and the spike marks are before the splitter, once for all) */
	struct tt_filter window = {.by_begin = true, .has_from = has_from, .from = from,
				   .cut_states = true, .open_end = true, .gone = sp->gone};
	sh->chain.writer = tt_writer_new(sp->format, &sh->out, opts);
	sh->first = sh->chain.shard = sh->chain.writer ? tt_filter_sink_new(sh->chain.writer, &window) : NULL;
	if (!sh->first)
		return tt_error("out of memory");
	return sh->first->ops->start ? sh->first->ops->start(sh->first, sp->trace) : 0;
}

/* Writes what the shard still owes; its file held until the split is whole. */
static int tt_shard_finish(struct tt_splitter *sp, struct tt_shard *sh, const struct tt_summary *sum)
{
	int rc = 0;
	if (sh->first) {
		/* what a thread holds at its latest time goes out at its end (Perfetto) */
		static const struct tt_thread_summary none;
		for (size_t i = 0; i < sp->trace->nfiles && rc == 0; i++)
			for (size_t k = 0; k < sp->trace->files[i].nthreads && rc == 0; k++) {
				const struct tt_thread *th = &sp->trace->files[i].threads[k];
				if (!sp->ended[th->id] && sh->first->ops->thread_end)
					rc = sh->first->ops->thread_end(sh->first, th, &none);
			}
		if (rc == 0 && sh->first->ops->finish)
			rc = sh->first->ops->finish(sh->first, sum);
	}
	tt_chain_free(&sh->chain);
	sh->first = NULL;
	if (sh->written) {
		sh->written = false;
		struct tt_out_held held;
		rc = tt_out_finish_held(&sh->out, rc, &held);
		if (rc == 0 && sp->format == TT_FORMAT_JSON)
			tt_json_size_check(sp->opts, sh->name, sh->out.written);
		if (rc == 0 && !tt_grow((void **)&sp->done, &sp->done_cap, sp->ndone + 1, sizeof(*sp->done))) {
			tt_out_drop(&held, 1);
			rc = tt_error("out of memory");
		}
		if (rc == 0)
			sp->done[sp->ndone++] = held;
		if (rc == 0 && sh->number == 1)
			memcpy(sp->first_name, sh->name, sizeof(sh->name));
		if (rc == 0)
			memcpy(sp->last_name, sh->name, sizeof(sh->name));
	}
	return rc;
}

/* Finishes the open shards that nothing more can come to: the decoding past their
 * end, none of their slices open (all of them at the run's end: `all`). */
static int tt_shards_finish(struct tt_splitter *sp, int64_t now, bool all, const struct tt_summary *sum)
{
	size_t kept = 0;
	int rc = 0;
	for (size_t i = 0; i < sp->nopen; i++) {
		struct tt_shard *sh = sp->open[i];
		if (rc == 0 && (all || (sh->has_to && sh->to < now && sh->open == 0))) {
			rc = tt_shard_finish(sp, sh, sum);
			free(sh);
		} else {
			sp->open[kept++] = sh;
		}
	}
	sp->nopen = kept;
	return rc;
}

static int tt_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Where the window's begins (sorted, b[0..n)) begin shards: a shard takes up to
 * sp->room slices, slices begun at one time stay in one shard, and more than
 * that many begun at one time make it bigger. Earlier windows' begins are all
 * before b[0]. */
static int tt_shards_cut(struct tt_splitter *sp, const int64_t *b, size_t n)
{
	size_t i = 0; /* the newest shard's first begin in this window (0: perhaps earlier) */
	if (n && sp->full && tt_shard_begin(sp, true, b[0]) < 0)
		return -1;
	while (i < n) {
		if (sp->have + (n - i) <= sp->room) {
			sp->have += n - i;
			sp->full = sp->have >= sp->room;
			return 0;
		}
		size_t next = i + (size_t)(sp->room - sp->have);
		size_t lowest = sp->have ? 0 : i; /* (a shard begun in an earlier window may end at b[0]) */
		while (next > lowest && b[next - 1] == b[next])
			next--;
		if (next == i && sp->have == 0) {
			while (next < n && b[next] == b[i])
				next++; /* more than N begin at one time: the shard is bigger */
			if (next == n) {
				sp->have = n - i;
				sp->full = true;
				return 0;
			}
		}
		if (tt_shard_begin(sp, true, b[next]) < 0)
			return -1;
		i = next;
	}
	return 0;
}

static struct tt_held_event *tt_hold(struct tt_splitter *sp, enum tt_held_kind kind,
				     const struct tt_event *e)
{
	if (!tt_grow((void **)&sp->held, &sp->held_cap, sp->nheld + 1, sizeof(*sp->held))) {
		tt_error("out of memory for a window of %zu events (--split)", sp->nheld);
		return NULL;
	}
	struct tt_held_event *h = &sp->held[sp->nheld++];
	h->kind = kind;
	h->text_at = h->name_at = SIZE_MAX;
	if (!e)
		return h;
	h->e = *e;
	/* the strings an event points to are the decoder's only during the call */
	if (tt_event_naming(e) == TT_NAMED_BY_FUNC && e->func_name.ptr) {
		h->name_at = sp->text.len;
		tt_buf_add(&sp->text, e->func_name.ptr, e->func_name.len);
	}
	if (e->flags & TT_EV_NAMED) {
		h->text_at = sp->text.len;
		tt_buf_add(&sp->text, e->text, strlen(e->text) + 1);
	} else if (e->flags & (TT_EV_DESCRIBED | TT_EV_DESCRIBE)) {
		h->text_at = sp->text.len;
		tt_buf_add(&sp->text, e->text, e->text_len);
	}
	if (sp->text.oom) {
		tt_error("out of memory for a window's names (--split)");
		return NULL;
	}
	return h;
}

/* A slice of trace_processor's table at ts, for the shards' cuts. */
static int tt_split_count(struct tt_splitter *sp, int64_t ts)
{
	if (!tt_grow((void **)&sp->begins, &sp->begins_cap, sp->nbegins + 1, sizeof(*sp->begins)))
		return tt_error("out of memory for a window's slices (--split)");
	sp->begins[sp->nbegins++] = ts;
	sp->slices++;
	return 0;
}

/* The threads' states begun up to ts, counted. */
static int tt_split_count_states(struct tt_splitter *sp, int64_t ts)
{
	const struct tt_trace *t = sp->trace;
	int64_t until = tt_state_ns(t, ts);
	for (size_t i = 0; i < t->nfiles; i++)
		for (size_t k = 0; k < t->files[i].nthreads; k++) {
			const struct tt_thread *th = &t->files[i].threads[k];
			size_t *next = &sp->state_next[th->id];
			for (; (th->flags & TT_THREAD_SCHED) && *next < th->nstates &&
			       th->states[*next].ns <= until; ++*next)
				if (tt_state_shown(th, *next)) {
					int64_t ts_of; /* (one known from the very start: INT64_MIN) */
					if (__builtin_sub_overflow(th->states[*next].ns, t->base_ns, &ts_of))
						ts_of = INT64_MIN;
					if (tt_split_count(sp, ts_of) < 0)
						return -1;
				}
		}
	return 0;
}

/* An event held; one that trace_processor keeps as a slice (`counts`) counted at its time. */
#define TT_SPLIT_HOLD(fn, kind, counts)                                        \
	static int fn(struct tt_sink *s, const struct tt_event *e)                 \
	{                                                                          \
		struct tt_splitter *sp = (struct tt_splitter *)s;                      \
		if ((counts) && tt_split_count(sp, e->ts) < 0)                         \
			return -1;                                                         \
		return tt_hold(sp, kind, e) ? 0 : -1;                                  \
	}
TT_SPLIT_HOLD(tt_split_begin, TT_HOLD_BEGIN, true)
TT_SPLIT_HOLD(tt_split_end, TT_HOLD_END, false)
TT_SPLIT_HOLD(tt_split_instant, TT_HOLD_INSTANT, true)
TT_SPLIT_HOLD(tt_split_counter, TT_HOLD_COUNTER, false)
TT_SPLIT_HOLD(tt_split_flow, TT_HOLD_FLOW, true)
TT_SPLIT_HOLD(tt_split_frame, TT_HOLD_FRAME, e->value > 1) /* (the frame that ended: a slice) */

static int tt_split_thread_end(struct tt_sink *s, const struct tt_thread *t,
			       const struct tt_thread_summary *sum)
{
	struct tt_held_event *h = tt_hold((struct tt_splitter *)s, TT_HOLD_THREAD_END, NULL);
	if (h) {
		h->e = (struct tt_event){.thread = t};
		h->thread_sum = *sum;
	}
	return h ? 0 : -1;
}

static void tt_split_warning(struct tt_sink *s, const char *message)
{
	struct tt_splitter *sp = (struct tt_splitter *)s;
	struct tt_held_event *h = tt_hold(sp, TT_HOLD_WARNING, NULL);
	if (h) {
		h->text_at = sp->text.len;
		tt_buf_add(&sp->text, message, strlen(message) + 1);
	}
}

/* The slices open on a thread at `depth` and deeper have ended. */
static void tt_slices_close(struct tt_open_slices *o, uint32_t depth)
{
	for (; o->n > depth; o->n--)
		o->shard[o->n - 1]->open--;
}

/* One held event to its shard (or, a thread's end or a warning, to every shard open). */
static int tt_split_send(struct tt_splitter *sp, struct tt_held_event *h)
{
	struct tt_event *e = &h->e;
	if (h->text_at != SIZE_MAX)
		e->text = sp->text.p + h->text_at;
	if (h->name_at != SIZE_MAX)
		e->func_name.ptr = sp->text.p + h->name_at;
	if (h->kind == TT_HOLD_THREAD_END || h->kind == TT_HOLD_WARNING) {
		if (h->kind == TT_HOLD_THREAD_END) {
			sp->ended[e->thread->id] = true;
			tt_slices_close(&sp->opened[e->thread->id], 0);
		}
		int rc = 0;
		for (size_t i = 0; i < sp->nopen && rc == 0; i++) {
			struct tt_sink *f = sp->open[i]->first;
			if (f && h->kind == TT_HOLD_WARNING && f->ops->warning)
				f->ops->warning(f, e->text);
			else if (f && h->kind == TT_HOLD_THREAD_END && f->ops->thread_end)
				rc = f->ops->thread_end(f, e->thread, &h->thread_sum);
		}
		return rc;
	}
	struct tt_open_slices *o = &sp->opened[e->thread->id];
	/* a slice's end goes where its begin went: the shard of its begin time */
	struct tt_shard *sh = h->kind == TT_HOLD_END && o->n > e->depth ? o->shard[e->depth] :
										tt_shard_at(sp, e->ts);
	if (!sh && h->kind == TT_HOLD_BEGIN)
		sh = sp->open[0]; /* held back by --from past its shard's end: the oldest open */
	if (h->kind == TT_HOLD_BEGIN || h->kind == TT_HOLD_END)
		tt_slices_close(o, e->depth);
	if (!sh)
		return 0; /* a point of a time whose shard is finished (--from's held begins') */
	if (h->kind == TT_HOLD_BEGIN) {
		if (!tt_grow((void **)&o->shard, &o->cap, (size_t)e->depth + 1, sizeof(*o->shard)))
			return tt_error("out of memory");
		o->shard[e->depth] = sh;
		o->n = e->depth + 1;
		sh->open++;
	}
	struct tt_sink *f = sh->first;
	if (!f)
		return 0;
	switch (h->kind) {
	case TT_HOLD_BEGIN: return f->ops->slice_begin ? f->ops->slice_begin(f, e) : 0;
	case TT_HOLD_END: return f->ops->slice_end ? f->ops->slice_end(f, e) : 0;
	case TT_HOLD_INSTANT: return f->ops->instant ? f->ops->instant(f, e) : 0;
	case TT_HOLD_COUNTER: return f->ops->counter ? f->ops->counter(f, e) : 0;
	case TT_HOLD_FLOW: return f->ops->flow ? f->ops->flow(f, e) : 0;
	case TT_HOLD_FRAME: return f->ops->frame ? f->ops->frame(f, e) : 0;
	default: return 0;
	}
}

/* A window's end: its begins say where shards begin, its events go to theirs, and
 * the shards the decoding is past are finished. */
static int tt_split_advance(struct tt_sink *s, int64_t ts, const struct tt_summary *so_far)
{
	struct tt_splitter *sp = (struct tt_splitter *)s;
	if (tt_split_count_states(sp, ts) < 0)
		return -1;
	if (sp->nbegins) /* (a window with none has no array yet: qsort wants one) */
		qsort(sp->begins, sp->nbegins, sizeof(*sp->begins), tt_cmp_i64);
	int rc = tt_shards_cut(sp, sp->begins, sp->nbegins);
	for (size_t i = 0; i < sp->nheld && rc == 0; i++)
		rc = tt_split_send(sp, &sp->held[i]);
	sp->nheld = sp->nbegins = 0;
	sp->text.len = 0;
	return rc < 0 ? rc : tt_shards_finish(sp, ts, false, so_far);
}

static int tt_split_start(struct tt_sink *s, const struct tt_trace *t)
{
	struct tt_splitter *sp = (struct tt_splitter *)s;
	sp->trace = t;
	sp->nthreads = t->nthreads;
	sp->ended = calloc(t->nthreads ? t->nthreads : 1, sizeof(*sp->ended));
	sp->opened = calloc(t->nthreads ? t->nthreads : 1, sizeof(*sp->opened));
	sp->state_next = calloc(t->nthreads ? t->nthreads : 1, sizeof(*sp->state_next));
	sp->gone = calloc(t->nthreads ? t->nthreads : 1, sizeof(*sp->gone));
	if (!sp->ended || !sp->opened || !sp->state_next || !sp->gone)
		return tt_error("out of memory");
	if (tt_states_gone(t, sp->gone) < 0)
		return -1;
	sp->width = tt_shard_width(t, sp->opts->split);
	/* the shards' temporary files a split killed outright left, of any number (this
	 * split's own numbers would remove only theirs): one look at the directory for all
	 * of them, not one a shard (tt_out_open_swept) */
	char *dir = sp->opts->shard ? NULL : tt_output_dir(sp->opts->output);
	struct tt_shard_stem stem = tt_shard_stem(sp->opts->output);
	if (dir)
		tt_out_remove_stale(dir, tt_any_shard_of, &stem);
	free(dir);
	char earlier[4096];
	if (!sp->opts->shard && !sp->opts->force &&
	    tt_earlier_shards(sp->opts->output, sp->width, 0, false, earlier, sizeof(earlier)))
		return tt_error("%s: exists, a shard of an earlier split of %s (--force replaces them)",
				earlier, sp->opts->output);
	if (!tt_shard_name(sp->first_name, sizeof(sp->first_name), sp->opts->output, 1, sp->width))
		return tt_error("%s: the name is too long for its shards", sp->opts->output);
	return tt_shard_begin(sp, false, 0);
}

static int tt_split_finish(struct tt_sink *s, const struct tt_summary *sum)
{
	struct tt_splitter *sp = (struct tt_splitter *)s;
	int rc = tt_split_advance(s, INT64_MAX, sum);
	return rc < 0 ? rc : tt_shards_finish(sp, INT64_MAX, true, sum);
}

/* Frees the splitter; after a failure, its open shards abandoned (no file; those
 * written are tt_split_done's). */
static void tt_split_destroy(struct tt_sink *s)
{
	struct tt_splitter *sp = (struct tt_splitter *)s;
	for (size_t i = 0; i < sp->nopen; i++) {
		tt_chain_free(&sp->open[i]->chain);
		if (sp->open[i]->written)
			tt_out_finish(&sp->open[i]->out, -1);
		free(sp->open[i]);
	}
	free(sp->open);
	free(sp->held);
	free(sp->begins);
	free(sp->text.p);
	free(sp->ended);
	free(sp->state_next);
	free(sp->gone);
	for (size_t i = 0; sp->opened && i < sp->nthreads; i++)
		free(sp->opened[i].shard);
	free(sp->opened);
}

static const struct tt_sink_ops tt_splitter_ops = {
	.start = tt_split_start,
	.slice_begin = tt_split_begin,
	.slice_end = tt_split_end,
	.instant = tt_split_instant,
	.counter = tt_split_counter,
	.flow = tt_split_flow,
	.frame = tt_split_frame,
	.thread_end = tt_split_thread_end,
	.advance = tt_split_advance,
	.warning = tt_split_warning,
	.finish = tt_split_finish,
	.destroy = tt_split_destroy,
};

/* Shards by name: by number (one width). */
static int tt_cmp_held_path(const void *a, const void *b)
{
	return strcmp(((const struct tt_out_held *)a)->path, ((const struct tt_out_held *)b)->path);
}

/* After the decoding: the shards' count, what a failure leaves (nothing), what
 * --force removes, and the summary line. */
static int tt_split_report(struct tt_splitter *sp, struct tt_session *run, int rc)
{
	const struct tt_convert_opts *opts = sp->opts;
	unsigned k = sp->made;
	if (opts->nshards)
		*opts->nshards = k;
	if (rc == 0 && opts->shard > k)
		rc = tt_error("%s: %u shards of at most %" PRIu64 " slices: there is no shard %u",
			      opts->inputs[0], k, opts->split, opts->shard);
	if (rc < 0) {
		tt_out_drop(sp->done, sp->ndone);
		return -1;
	}
	/* all of the shards in place at once, and an earlier split's past them gone (--force),
	 * or none: a signal before finds the earlier split as it was */
	unsigned stale = 0;
	qsort(sp->done, sp->ndone, sizeof(*sp->done), tt_cmp_held_path); /* (in their order) */
	tt_signals_hold();
	rc = tt_out_place(sp->done, sp->ndone, opts->force);
	if (rc == 0 && !opts->shard && opts->force)
		stale = tt_earlier_shards(opts->output, sp->width, k, true, NULL, 0);
	tt_signals_release();
	if (rc < 0)
		return -1;
	if (!opts->shard && !opts->quiet && !tt_diag_quiet)
		fprintf(stderr, "ticktrace: %s%s -> %s ... %s: %u shard%s of at most %" PRIu64
			" slices (%" PRIu64 " slices, %" PRIu64 " events, %" PRIu64 " threads, %" PRIu64
			" dropped, %" PRIu64 " warnings)\n",
			opts->inputs[0], opts->ninputs > 1 ? " ..." : "", sp->first_name, sp->last_name, k,
			k == 1 ? "" : "s", opts->split, sp->slices, run->sum.events, run->sum.threads, run->sum.dropped,
			run->sum.warnings);
	if (stale && !opts->quiet && !tt_diag_quiet)
		fprintf(stderr, "ticktrace: removed %u shard%s of an earlier split of %s, not this one's\n",
			stale, stale == 1 ? "" : "s", opts->output);
	return 0;
}

static int tt_split_done(struct tt_splitter *sp, struct tt_session *run, int rc)
{
	rc = tt_split_report(sp, run, rc);
	free(sp->done);
	return rc;
}

/* A whole trace the Perfetto UI will not load says so, and what to do instead: its
 * slices counted as --split counts them. */
static void tt_slice_count_check(const struct tt_convert_opts *opts, uint64_t slices)
{
	if (slices <= TT_UI_SLICE_LIMIT)
		return;
	tt_warn("%s: %" PRIu64 " slices (instants, flows' ends and thread states included, as "
		"trace_processor keeps them), more than the ~%" PRIu64 " M the Perfetto UI loads in "
		"a browser tab (trace_processor keeps ~600 bytes a slice): split it into shards "
		"that each open alone (--split %" PRIu64 "), or keep less (--from/--to, --thread)",
		strcmp(opts->output, "-") ? opts->output : "stdout", slices,
		TT_UI_SLICE_LIMIT / 1000000, TT_UI_SLICE_LIMIT);
}

int tt_convert(const struct tt_convert_opts *opts, struct tt_summary *sum)
{
	enum tt_format format = tt_format_for(opts);
	if (format == TT_FORMAT_PERFETTO && opts->filter.min_dur > 0)
		return tt_error("--min-dur works with JSON output only: Perfetto's format needs a "
				"slice's begin before its duration is known");
	if (format != TT_FORMAT_PERFETTO && opts->compress != TT_PACK_LARGE)
		return tt_error("--%s works with Perfetto output only (.pftrace)",
				opts->compress == TT_PACK_ALWAYS ? "compress" : "no-compress");
	/* --split: the shards written by the splitter as the one pass goes */
	struct tt_session_opts ro = {.inputs = opts->inputs, .ninputs = opts->ninputs,
				 .debug_dir = opts->debug_dir,
				 .output = opts->split ? NULL : opts->output,
				 .force = opts->force, .quiet = opts->quiet,
				 .offset_hosts = opts->offset_hosts, .offset_ns = opts->offset_ns,
				 .noffsets = opts->noffsets};
	struct tt_session run;
	struct tt_splitter splitter = {.sink.ops = &tt_splitter_ops, .opts = opts, .format = format};
	struct tt_chain chain = {0};
	struct tt_sink *sinks[2] = {NULL}, *bounds = NULL;
	/* the thresholds are the caller's; the rules read from their file, ours */
	struct tt_thresholds thresholds = opts->thresholds;
	int rc = tt_session_open(&run, &ro);
	uint64_t merge_warnings = 0; /* said before the decoding: in the summary's count */
	if (rc == 0 && opts->align_flows && (rc = tt_align_by_flows(&run.trace, &merge_warnings)) == 0)
		rc = tt_trace_check_span(&run.trace);
	if (rc == 0 && !opts->quiet)
		tt_say_machines(&run.trace);
	if (rc == 0)
		merge_warnings += tt_warn_runs_disagree(&run.trace);
	if (rc == 0 && format == TT_FORMAT_JSON) {
		int said = tt_say_pids(&run.trace);
		rc = said < 0 ? -1 : 0;
		merge_warnings += said > 0 ? (uint64_t)said : 0;
	}
	if (rc == 0)
		rc = tt_thresholds_load(&thresholds);
	if (rc == 0 && !opts->split)
		rc = tt_session_output(&run);
	if (rc == 0) /* (after: an output that is the input is refused as such first) */
		rc = tt_output_name_check(opts, format);
	if (rc == 0 && !opts->split && format == TT_FORMAT_PERFETTO)
		rc = tt_perfetto_compress(&run.out, opts->compress);
	if (rc == 0 && !opts->split) {
		sinks[0] = tt_chain_new(&chain, opts, tt_writer_new(format, &run.out, opts), NULL,
					&thresholds);
		rc = sinks[0] ? 0 : -1;
	} else if (rc == 0) {
		/* the user's filter and the spike marks once, before the shards */
		sinks[0] = tt_chain_new(&chain, opts, &splitter.sink, NULL, &thresholds);
		chain.writer = NULL; /* (on the stack) */
		rc = sinks[0] ? 0 : -1;
	}
	size_t nsinks = 1;
	/* flows between machines paired, to say those that arrive before they left */
	if (rc == 0 && run.trace.nmachines > 1) {
		sinks[nsinks++] = bounds = tt_flow_bounds_new(run.trace.nmachines);
		rc = bounds ? 0 : tt_error("out of memory");
	}
	if (rc == 0)
		rc = tt_session_decode(&run, sinks, nsinks);
	if (rc == 0 && bounds)
		merge_warnings += tt_say_early_flows(&run.trace, bounds, opts->align_flows);
	if (rc == 0 && bounds && format == TT_FORMAT_PERFETTO)
		merge_warnings += tt_say_flows_between_machines(&run.trace, bounds);
	run.sum.warnings += merge_warnings;
	/* (the sinks go while the trace they read is still open) */
	tt_chain_free(&chain);
	tt_sink_free(bounds);
	if (opts->split) {
		tt_split_destroy(&splitter.sink); /* (after a failure: the shards open abandoned) */
		rc = tt_split_done(&splitter, &run, rc);
	}
	/* (no filter: the writer's; the states before the trace goes) */
	uint64_t slices = run.sum.slices + run.sum.points +
			  (rc == 0 && !opts->split ? tt_states_shown(&run.trace) : 0);
	rc = tt_session_close(&run, rc);
	if (rc == 0 && format == TT_FORMAT_JSON && !opts->split)
		tt_json_size_check(opts, opts->output, run.out.written); /* (what the commit wrote) */
	if (rc == 0 && !opts->split && !tt_filter_active(&opts->filter))
		tt_slice_count_check(opts, slices);
	tt_thresholds_free(&thresholds);
	if (sum)
		*sum = run.sum;
	return rc;
}

enum { OPT_FROM = 256, OPT_TO, OPT_THREAD, OPT_MIN_DUR, OPT_THRESHOLD, OPT_THRESHOLDS,
       OPT_SPIKES, OPT_DEBUG_DIR, OPT_CLIP, OPT_OFFSET, OPT_SPLIT, OPT_ALIGN, OPT_COMPRESS,
       OPT_NO_COMPRESS };
const struct option tt_convert_options[] = {
	{"output", required_argument, NULL, 'o'}, {"force", no_argument, NULL, 'f'},
	{"format", required_argument, NULL, 'F'}, {"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},         {"from", required_argument, NULL, OPT_FROM},
	{"source", no_argument, NULL, 's'},
	{"to", required_argument, NULL, OPT_TO},  {"thread", required_argument, NULL, OPT_THREAD},
	{"min-dur", required_argument, NULL, OPT_MIN_DUR},
	{"threshold", required_argument, NULL, OPT_THRESHOLD},
	{"thresholds", required_argument, NULL, OPT_THRESHOLDS},
	{"spikes", no_argument, NULL, OPT_SPIKES},
	{"debug-dir", required_argument, NULL, OPT_DEBUG_DIR},
	{"clip", no_argument, NULL, OPT_CLIP}, {"offset", required_argument, NULL, OPT_OFFSET},
	{"split", required_argument, NULL, OPT_SPLIT},
	{"align", required_argument, NULL, OPT_ALIGN},
	{"compress", no_argument, NULL, OPT_COMPRESS},
	{"no-compress", no_argument, NULL, OPT_NO_COMPRESS},
	{NULL, 0, NULL, 0},
};

const struct tt_cmd_arg tt_convert_args[] = {
	{'o', TT_ARG_FILE, NULL},
	{'F', TT_ARG_VALUES, tt_format_names},
	{OPT_ALIGN, TT_ARG_VALUES, tt_align_names},
	{OPT_THRESHOLDS, TT_ARG_FILE, NULL},
	{OPT_DEBUG_DIR, TT_ARG_DIR, NULL},
	{0, 0, NULL},
};

int tt_cmd_convert(int argc, char **argv)
{
	struct tt_convert_opts opts = {.thresholds.global = TT_AN_NO_THRESHOLD};
	const char **threads = calloc((size_t)argc, sizeof(*threads));
	opts.offset_hosts = calloc((size_t)argc, sizeof(*opts.offset_hosts));
	opts.offset_ns = calloc((size_t)argc, sizeof(*opts.offset_ns));
	int c, rc = -1;
	while (rc < 0 && (c = getopt_long(argc, argv, "o:fF:qsh", tt_convert_options, NULL)) != -1) {
		int64_t *bound = c == OPT_FROM ? &opts.filter.from :
				 c == OPT_TO   ? &opts.filter.to :
						 &opts.filter.min_dur;
		switch (c) {
		case OPT_FROM:
		case OPT_TO:
		case OPT_MIN_DUR:
			opts.filter.has_from |= c == OPT_FROM;
			opts.filter.has_to |= c == OPT_TO;
			if (tt_an_parse_duration(optarg, bound) < 0)
				rc = tt_usage_error(tt_convert_usage,
						    "convert: a TIME is a number with ns, us, ms or s");
			break;
		case OPT_THREAD: threads[opts.filter.nthreads++] = optarg; break;
		case OPT_THRESHOLD:
		case OPT_THRESHOLDS:
			if (tt_threshold_option(c == OPT_THRESHOLD, optarg, &opts.thresholds) < 0)
				rc = tt_usage_error(tt_convert_usage, "convert: --threshold is a TIME");
			opts.spikes = true;
			break;
		case OPT_SPIKES: opts.spikes = true; break;
		case OPT_DEBUG_DIR: opts.debug_dir = optarg; break;
		case OPT_CLIP: opts.filter.clip = true; break;
		case OPT_OFFSET: {
			char *eq = strrchr(optarg, '=');
			int64_t *ns = &opts.offset_ns[opts.noffsets];
			bool negative = eq && eq[1] == '-';
			if (!eq || eq == optarg || tt_an_parse_duration(eq + 1 + negative, ns) < 0) {
				rc = tt_usage_error(tt_convert_usage, "convert: --offset is HOST=TIME "
						    "(a number with ns, us, ms or s; negative: -1.5ms)");
				break;
			}
			*eq = 0;
			*ns = negative ? -*ns : *ns;
			opts.offset_hosts[opts.noffsets++] = optarg;
			break;
		}
		case OPT_SPLIT: {
			if (!tt_count_option(optarg, 1, UINT64_MAX, &opts.split))
				rc = tt_usage_error(tt_convert_usage, "convert: --split is a number of "
								      "slices a shard, 1 or more");
			break;
		}
		case OPT_COMPRESS: opts.compress = TT_PACK_ALWAYS; break;
		case OPT_NO_COMPRESS: opts.compress = TT_PACK_NEVER; break;
		case OPT_ALIGN:
			opts.align_flows = tt_value_index(tt_align_names, optarg) == 0;
			if (!opts.align_flows)
				rc = tt_usage_error(tt_convert_usage, "convert: --align is flows");
			break;
		case 'o': opts.output = optarg; break;
		case 'f': opts.force = true; break;
		case 'q': opts.quiet = true; break;
		case 's': opts.source = true; break;
		case 'F':
			opts.format = tt_format_named(optarg);
			if (opts.format == TT_FORMAT_AUTO)
				rc = tt_usage_error(tt_convert_usage, "convert: --format is json or perfetto");
			break;
		case 'h':
			fputs(tt_convert_usage, stdout);
			rc = 0;
			break;
		default: rc = tt_usage_error(tt_convert_usage, NULL); break;
		}
	}
	opts.filter.threads = threads;
	if (rc >= 0)
		; /* --help, or a usage error */
	else if (optind >= argc)
		rc = tt_usage_error(tt_convert_usage, "convert: no input file");
	else if (!opts.output)
		rc = tt_usage_error(tt_convert_usage, "convert: no output (-o FILE, or -o - for stdout)");
	else if (opts.filter.has_from && opts.filter.has_to && opts.filter.from > opts.filter.to)
		rc = tt_usage_error(tt_convert_usage, "convert: --from is after --to");
	else if (opts.split && strcmp(opts.output, "-") == 0)
		rc = tt_usage_error(tt_convert_usage, "convert: --split writes files: -o FILE, not -o -");
	else if (opts.filter.clip && !opts.filter.has_from && !opts.filter.has_to)
		rc = tt_usage_error(tt_convert_usage, "convert: --clip cuts at --from or --to: give one");
	if (rc < 0) {
		opts.inputs = argv + optind;
		opts.ninputs = (size_t)(argc - optind);
		rc = tt_convert(&opts, NULL) == 0 ? 0 : 1;
	}
	free(threads);
	free(opts.offset_hosts);
	free(opts.offset_ns);
	return rc;
}
