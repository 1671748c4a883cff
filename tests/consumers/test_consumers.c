/* The converter's output through real consumers:
 *   test_consumers devtools CHECK.mjs        the demo trace through the DevTools
 *     Performance panel's trace engine (consumers/check-devtools.mjs): no error or
 *     warning, and the expected slices, flows and counters on the expected threads;
 *   test_consumers perfetto CHECK.py SCHEMA  the demo (whole, and filtered to a
 *     window) and traces made for each of Perfetto's rules (merged runs of 2 to 200
 *     processes in any order, ids passed on along a chain, nesting deeper than
 *     Perfetto shows, instants at a slice's very start or end, a ring's first
 *     record, thread states whose switches disagree per CPU), each in both formats,
 *     loaded as Perfetto's importers load them by consumers/check-perfetto.py: the
 *     same slices, depths, arrows, counters, names and thread states from both,
 *     nothing Perfetto counts as an error;
 *   test_consumers trace-processor CHECK.py DEMO DEMO_INSTRUMENTED  the same traces
 *     and real runs of the demo (plain, ring, stream, instrumented) loaded by
 *     Perfetto's own trace_processor_shell ($TICKTRACE_TRACE_PROCESSOR, or
 *     ~/.cache/ticktrace/trace_processor_shell) through
 *     consumers/check-trace-processor.py.
 * Exit 77 (skipped) without node, the engine (`npm ci` in tests/consumers), python3,
 * protoc or trace_processor_shell. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tt_check.h"
#include "tt_demo.h"

static const char devtools_expect[] =
	"{\"slices\": {\"101\": [\"main 0\", \"child 1\", \"flow_out 2\", \"next 0\", \"0x401000 1\","
	" \"flow_in 2\"], \"102\": [\"work 0\", \"flow_in 1\", \"flow_out 1\"]},"
	" \"flows\": [[\"flow_out@101\", \"flow_in@102\"], [\"flow_out@102\", \"flow_in@101\"]],"
	" \"counters\": {\"queue_depth\": 1}}";

/* Runs argv; its exit status, or 1. */
static int tt_spawn(char *const *argv)
{
	pid_t pid = fork();
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* Converts the demo raw file to `out`, all of it or a window of it; 0 or -1. */
static int tt_convert_demo(const char *in, const char *out, bool window)
{
	struct tt_run r;
	if (window)
		TT_RUN(&r, "convert", "--force", in, "-o", out, "--from", "5us", "--to", "6us");
	else
		TT_RUN(&r, "convert", in, "-o", out);
	free(r.out);
	if (r.status != 0)
		fprintf(stderr, "ticktrace convert %s failed (%d):\n%s", out, r.status, r.err);
	return r.status == 0 ? 0 : -1;
}

/* Traces made for Perfetto's rules (issue 14), each converted to both formats. */
#define R TT_TW_REC
#define N(a) (sizeof(a) / sizeof((a)[0]))

enum { S_EMPTY = 0x1080 };
/* The demo's sites and one with no name. */
static struct tt_tw_site tt_case_sites[16];
static size_t tt_case_nsites;

static void tt_case_sites_init(void)
{
	memcpy(tt_case_sites, tt_demo_sites, tt_demo_nsites * sizeof(*tt_case_sites));
	tt_case_sites[tt_demo_nsites] = (struct tt_tw_site){S_EMPTY, "", "edge.c", "edge", 40};
	tt_case_nsites = tt_demo_nsites + 1;
}

struct tt_case_thread {
	uint32_t tid;
	const char *name;
	const struct tt_record *rec;
	size_t n;
};

/* One process's raw file: its header, sites and threads. */
static int tt_case_file(const char *path, const struct tt_file_header *h, uint32_t pid,
			const char *process, const struct tt_case_thread *th, size_t nth)
{
	struct tt_tw w;
	if (tt_tw_open_file(&w, path) < 0)
		return -1;
	tt_tw_header(&w, h);
	tt_tw_process(&w, pid, process);
	tt_tw_sites(&w, tt_case_sites, tt_case_nsites);
	for (size_t i = 0; i < nth; i++) {
		struct tt_thread_info ti = {.index = (uint32_t)i, .tid = th[i].tid, .events = th[i].n};
		if (h && (h->flags & TT_FILE_RING)) { /* as the runtime writes a ring's threads */
			ti.flags = TT_THREAD_WRAPPED;
			ti.dropped[TT_DROP_OVERWRITTEN] = 100;
		}
		tt_tw_thread_info(&w, &ti, th[i].name);
		tt_tw_events(&w, (uint32_t)i, 0, th[i].rec, th[i].n);
	}
	tt_tw_end(&w);
	return tt_tw_close(&w);
}

/* Process k of a merged trace: its run starts 100 ns after process k - 1's, so that
 * all overlap; its anchors carry slightly different BOOTTIME and REALTIME offsets, as
 * anchors taken at different moments do; its threads pass the same flow id 7 as
 * every other process's, and count with the same counter. */
static int tt_case_merged_file(const char *path, unsigned k)
{
	struct tt_file_header h;
	tt_tw_default_header(&h);
	int64_t mono = 5000000000 + 100 * (int64_t)k;
	h.start = (struct tt_anchor){.tsc = 1000, .monotonic_ns = mono,
				     .boottime_ns = mono + 7000000000 + k % 5,
				     .realtime_ns = mono + 1700000000000000000 + k % 7};
	h.end = (struct tt_anchor){.tsc = 1000000, .monotonic_ns = mono + 999000,
				   .boottime_ns = mono + 999000 + 7000000000 + k % 3,
				   .realtime_ns = mono + 999000 + 1700000000000000000 + k % 11};
	h.pid = 5000 + k;
	const struct tt_record a[] = {
		R(TT_REC_BEGIN, S_MAIN, 2000), R(TT_REC_COUNTER, S_QUEUE, 2050), R(TT_REC_VALUE, 0, k),
		R(TT_REC_FLOW_OUT, 0, 2100), R(TT_REC_VALUE, 0, 7), R(TT_REC_END, 0, 3000),
	};
	const struct tt_record b[] = {
		R(TT_REC_BEGIN, S_WORK, 2050), R(TT_REC_FLOW_IN, 0, 2200), R(TT_REC_VALUE, 0, 7),
		R(TT_REC_END, 0, 2900),
	};
	const struct tt_case_thread th[] = {
		{60000 + 2 * k, "a", a, N(a)}, {60001 + 2 * k, "b", b, N(b)},
	};
	return tt_case_file(path, &h, h.pid, "merged", th, N(th));
}

/* A parent and the child it forked: the child's run lies inside the parent's, its
 * anchors taken later; the child takes a flow id the parent passed out, with none of
 * its own waiting: one arrow across the two processes. `path` is the child's file,
 * given first; the parent's is beside it. */
static int tt_case_forked(const char *path)
{
	struct tt_file_header h;
	tt_tw_default_header(&h);
	h.start.boottime_ns = h.start.monotonic_ns + 7000000000;
	h.end.boottime_ns = h.end.monotonic_ns + 7000000000;
	h.pid = 7000;
	const struct tt_record parent[] = {
		R(TT_REC_BEGIN, S_MAIN, 2000), R(TT_REC_FLOW_OUT, 0, 2100), R(TT_REC_VALUE, 0, 1),
		R(TT_REC_END, 0, 9000),
	};
	const struct tt_case_thread pt[] = {{7000, "main", parent, N(parent)}};
	char parent_path[256];
	snprintf(parent_path, sizeof(parent_path), "%s.parent", path);
	if (tt_case_file(parent_path, &h, h.pid, "forked", pt, N(pt)) < 0)
		return -1;
	/* the child: its anchors 300 ns and 500 us after the parent's start, on one clock */
	h.start = (struct tt_anchor){.tsc = 1300, .monotonic_ns = 5000000300,
				     .boottime_ns = 12000000302};
	h.end = (struct tt_anchor){.tsc = 501000, .monotonic_ns = 5000500000,
				   .boottime_ns = 12000500001};
	h.pid = 7001;
	const struct tt_record child[] = {
		R(TT_REC_BEGIN, S_WORK, 2000), R(TT_REC_FLOW_IN, 0, 2200), R(TT_REC_VALUE, 0, 1),
		R(TT_REC_END, 0, 3000),
	};
	const struct tt_case_thread ct[] = {{7001, "main", child, N(child)}};
	return tt_case_file(path, &h, h.pid, "forked", ct, N(ct));
}

/* Items passed on by id producer -> worker -> consumer in two rounds of two items,
 * ids 1 and 2 in each: every hop one arrow (8). */
static int tt_case_chain(const char *path)
{
	struct tt_record p[16], w[32], c[16];
	size_t np = 0, nw = 0, nc = 0;
	p[np++] = R(TT_REC_BEGIN, S_MAIN, 2000);
	for (uint64_t round = 0, t = 2000; round < 2; round++, t += 1000) {
		w[nw++] = R(TT_REC_BEGIN, S_WORK, t + 300);
		c[nc++] = R(TT_REC_BEGIN, S_NEXT, t + 750);
		for (uint64_t id = 1; id <= 2; id++) {
			p[np++] = R(TT_REC_FLOW_OUT, 0, t + 100 * id);
			p[np++] = R(TT_REC_VALUE, 0, id);
			w[nw++] = R(TT_REC_FLOW_IN, 0, t + 200 + 200 * id);
			w[nw++] = R(TT_REC_VALUE, 0, id);
			w[nw++] = R(TT_REC_FLOW_OUT, 0, t + 300 + 200 * id);
			w[nw++] = R(TT_REC_VALUE, 0, id);
			c[nc++] = R(TT_REC_FLOW_IN, 0, t + 750 + 10 * id);
			c[nc++] = R(TT_REC_VALUE, 0, id);
		}
		w[nw++] = R(TT_REC_END, 0, t + 720);
		c[nc++] = R(TT_REC_END, 0, t + 780);
	}
	p[np++] = R(TT_REC_END, 0, 4000);
	const struct tt_case_thread th[] = {
		{301, "producer", p, np}, {302, "worker", w, nw}, {303, "consumer", c, nc},
	};
	return tt_case_file(path, NULL, 4300, "chain", th, N(th));
}

/* Scopes nested TT_CASE_DEEP levels, with an instant and a flow out at the bottom,
 * then a shallow flow: what is deeper than 512 levels is left out (88 slices, an
 * instant, a flow end), the rest keeps its times, the shallow flow its arrow. */
#define TT_CASE_DEEP 600
static int tt_case_deep(const char *path)
{
	static struct tt_record d[2 * TT_CASE_DEEP + 8];
	size_t n = 0;
	for (unsigned i = 0; i < TT_CASE_DEEP; i++)
		d[n++] = R(TT_REC_BEGIN, S_CHILD, 2000 + 10 * i);
	d[n++] = R(TT_REC_INSTANT, S_WAKE, 8000);
	d[n++] = R(TT_REC_FLOW_OUT, 0, 8001);
	d[n++] = R(TT_REC_VALUE, 0, 5);
	for (unsigned i = 0; i < TT_CASE_DEEP; i++)
		d[n++] = R(TT_REC_END, 0, 9000 + 10 * i);
	d[n++] = R(TT_REC_BEGIN, S_NEXT, 20000);
	d[n++] = R(TT_REC_FLOW_OUT, 0, 20001);
	d[n++] = R(TT_REC_VALUE, 0, 6);
	d[n++] = R(TT_REC_END, 0, 20002);
	const struct tt_record o[] = {
		R(TT_REC_BEGIN, S_WORK, 7000),
		R(TT_REC_FLOW_IN, 0, 8500), R(TT_REC_VALUE, 0, 5),
		R(TT_REC_FLOW_IN, 0, 20500), R(TT_REC_VALUE, 0, 6),
		R(TT_REC_END, 0, 30000),
	};
	const struct tt_case_thread th[] = {{401, "recursive", d, n}, {402, "other", o, N(o)}};
	return tt_case_file(path, NULL, 4400, "deep", th, N(th));
}

/* Instants at the very start or end of a slice: the last event of scopes left open
 * (closed there), a spike's mark at the end of a scope that TT_ENDBEGIN ends (with
 * --threshold 2us), an instant recorded just before a scope begins at the same ns;
 * and a name that is empty. */
static int tt_case_edges(const char *path)
{
	const struct tt_record u[] = {
		R(TT_REC_BEGIN, S_MAIN, 2000), R(TT_REC_BEGIN, S_CHILD, 2500),
		R(TT_REC_INSTANT, S_WAKE, 3000),
	};
	const struct tt_record s[] = {
		R(TT_REC_BEGIN, S_MAIN, 2000), R(TT_REC_ENDBEGIN, S_NEXT, 5000), R(TT_REC_END, 0, 5500),
		R(TT_REC_INSTANT, S_WAKE, 6000), R(TT_REC_BEGIN, S_WORK, 6000),
		R(TT_REC_INSTANT, S_EMPTY, 6500), R(TT_REC_END, 0, 7000),
	};
	const struct tt_case_thread th[] = {{501, "unterminated", u, N(u)}, {502, "spiked", s, N(s)}};
	return tt_case_file(path, NULL, 4500, "edges", th, N(th));
}

/* Mode ring: the oldest kept record is a TT_ENDBEGIN, which ends a scope begun
 * before it was recorded (shown from there: zero-length) and begins one at the same
 * ns, inside another scope begun before. */
static int tt_case_ring(const char *path)
{
	struct tt_file_header h;
	tt_tw_default_header(&h);
	h.flags |= TT_FILE_RING;
	const struct tt_record r[] = {
		R(TT_REC_ENDBEGIN, S_NEXT, 2000), R(TT_REC_INSTANT, S_WAKE, 2500),
		R(TT_REC_END, 0, 3000), R(TT_REC_END, 0, 3500),
	};
	const struct tt_case_thread th[] = {{601, "ring", r, N(r)}};
	return tt_case_file(path, &h, 4600, "ring", th, N(th));
}

/* Thread states whose switches, per CPU, do not follow one another as Perfetto
 * requires (each one's prev_pid the one before's next_pid), which the .pftrace's must
 * (tools/sinks/perfetto_sched.c): a thread that exits while it runs (a) and another
 * coming on its CPU after; a run since the switches were asked for that a first
 * switch out ends (b, twice), switches lost after a switch out (b) and while it runs
 * (b, a section of none); two threads coming on one CPU at the same ns (b, e); a
 * thread coming on a CPU before the one there has left it (c onto b); a switch out at
 * the very ns the switches were asked for (d); a thread still running at the end (d);
 * switches lost while a thread ran, its next state on a CPU numbered lower, which
 * Perfetto takes first at one ns: a switch out (f), a switch in (g) (machines_merge
 * under load, CI's clang run: "a synthetic state not after a Running row it cuts"). */
static int tt_case_states(const char *path)
{
#define NS(x) (5000000000 + (x))
	enum { RUN = TT_SCHED_RUNNING, PRE = TT_SCHED_PREEMPTED, BLK = TT_SCHED_BLOCKED };
	static const struct tt_sched_state a[] = {
		{NS(2000), 0, RUN}, {NS(3000), 0, BLK}, {NS(4000), 0, RUN},
	};
	static const struct tt_sched_state b[] = {
		{NS(2500), 1, BLK}, {NS(5000), 0, RUN}, {NS(6000), 0, PRE},
	};
	static const struct tt_sched_state b_after_lost[] = {{NS(7500), 1, BLK}, {NS(8000), 1, RUN}};
	static const struct tt_sched_state c[] = {
		{NS(3000), 1, RUN}, {NS(3500), 1, BLK}, {NS(7200), 1, RUN}, {NS(7600), 1, PRE},
	};
	static const struct tt_sched_state d[] = {
		{NS(4000), 1, BLK}, {NS(4200), 1, RUN}, {NS(4300), 1, PRE}, {NS(9500), 1, RUN},
	};
	static const struct tt_sched_state e[] = {{NS(5000), 0, RUN}, {NS(5500), 0, PRE}};
	static const struct tt_sched_state f[] = {{NS(6000), 1, RUN}, {NS(6500), 0, PRE}};
	static const struct tt_sched_state g[] = {
		{NS(7000), 3, RUN}, {NS(7400), 2, RUN}, {NS(7800), 2, PRE},
	};
	const struct {
		uint32_t tid, flags;
		const char *name;
		int64_t since;
		const struct tt_sched_state *states;
		size_t n;
	} th[] = {
		{801, TT_THREAD_EXITED, "a", NS(1500), a, N(a)}, {802, 0, "b", NS(1000), b, N(b)},
		{803, 0, "c", NS(1000), c, N(c)}, {804, 0, "d", NS(4000), d, N(d)},
		{805, 0, "e", NS(1000), e, N(e)}, {806, 0, "f", NS(1000), f, N(f)},
		{807, 0, "g", NS(1000), g, N(g)},
	};
	struct tt_tw w;
	if (tt_tw_open_file(&w, path) < 0)
		return -1;
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4800, "states");
	tt_tw_sites(&w, tt_case_sites, tt_case_nsites);
	for (uint32_t i = 0; i < N(th); i++) {
		/* (begun after the first states: the checkers line the formats up by their
		 * first slice, which a JSON states track must not be) */
		const struct tt_record rec[] = {R(TT_REC_BEGIN, S_WORK, 3500 + 100 * i),
						R(TT_REC_END, 0, 9000 + 100 * i)};
		struct tt_thread_info ti = {.index = i, .tid = th[i].tid, .events = N(rec),
					    .flags = th[i].flags | TT_THREAD_SCHED};
		tt_tw_thread_info(&w, &ti, th[i].name);
		tt_tw_events(&w, i, 0, rec, N(rec));
		tt_tw_sched(&w, i, 0, th[i].since, th[i].states, th[i].n);
		if (th[i].states == b) {
			tt_tw_sched(&w, i, 3, NS(7000), b_after_lost, N(b_after_lost));
			tt_tw_sched(&w, i, 1, NS(8000), b, 0); /* lost while it ran */
		}
	}
	tt_tw_end(&w);
	return tt_tw_close(&w);
#undef NS
}

#define TT_CASE_MAX_INPUTS 200

struct tt_case {
	char name[32];
	char *inputs[TT_CASE_MAX_INPUTS];
	size_t ninputs;
	const char *extra[3]; /* more convert options */
	int flows;            /* arrows expected, or -1 */
	const char *warning;  /* what the conversion must warn, or NULL */
};

static char *tt_case_path(const char *dir, const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return strdup(path);
}

/* n merged processes, their files given in an order that `seed` picks (0: later
 * first). */
static int tt_case_merged(struct tt_case *c, const char *dir, unsigned n, unsigned seed)
{
	snprintf(c->name, sizeof(c->name), "merged%u", n);
	c->ninputs = n;
	c->flows = (int)n;
	for (unsigned k = 0; k < n; k++) {
		char name[32];
		snprintf(name, sizeof(name), "merged%u-%03u.ttr", n, k);
		c->inputs[n - 1 - k] = tt_case_path(dir, name);
		if (tt_case_merged_file(c->inputs[n - 1 - k], k) < 0)
			return -1;
	}
	for (unsigned i = n - 1; seed && i > 0; i--) { /* a fixed shuffle */
		seed = seed * 1103515245u + 12345u;
		unsigned j = (seed >> 8) % (i + 1);
		char *x = c->inputs[i];
		c->inputs[i] = c->inputs[j];
		c->inputs[j] = x;
	}
	return 0;
}

/* A case of one raw file, written by `write`. */
static int tt_case_one(struct tt_case *c, const char *dir, const char *name,
		       int (*write)(const char *path), int flows)
{
	char file[48];
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(file, sizeof(file), "%s.ttr", name);
	c->inputs[0] = tt_case_path(dir, file);
	c->ninputs = 1;
	c->flows = flows;
	return write(c->inputs[0]);
}

static int tt_case_demo(const char *path)
{
	return tt_demo_write(path);
}

/* Every synthetic case; how many, or -1. */
static int tt_cases_write(struct tt_case *cases, const char *dir)
{
	tt_case_sites_init();
	struct tt_case *c = cases;
	if (tt_case_one(c++, dir, "demo", tt_case_demo, 2) < 0)
		return -1;
	static const unsigned merged[][2] = {{2, 0}, {3, 7}, {17, 3}, {200, 11}};
	for (size_t i = 0; i < N(merged); i++)
		if (tt_case_merged(c++, dir, merged[i][0], merged[i][1]) < 0)
			return -1;
	if (tt_case_one(c++, dir, "chain", tt_case_chain, 8) < 0)
		return -1;
	if (tt_case_one(c, dir, "forked", tt_case_forked, 1) < 0) /* the child's file first */
		return -1;
	c->inputs[1] = tt_case_path(dir, "forked.ttr.parent");
	c++->ninputs = 2;
	if (tt_case_one(c, dir, "deep", tt_case_deep, 1) < 0)
		return -1;
	c++->warning = "88 slices, 1 instants and 1 flow ends nested deeper than 512 levels left out";
	if (tt_case_one(c, dir, "edges", tt_case_edges, 0) < 0)
		return -1;
	c->extra[0] = "--threshold";
	c++->extra[1] = "2us";
	if (tt_case_one(c++, dir, "ring", tt_case_ring, 0) < 0)
		return -1;
	if (tt_case_one(c++, dir, "states", tt_case_states, 0) < 0)
		return -1;
	return (int)(c - cases);
}

static void tt_cases_free(struct tt_case *cases, int n)
{
	for (int i = 0; i < n; i++)
		for (size_t k = 0; k < cases[i].ninputs; k++)
			free(cases[i].inputs[k]);
}

/* Converts a case to dir/NAME.EXT; 0, or -1 after saying why. */
static int tt_case_convert(const struct tt_case *c, const char *dir, const char *ext)
{
	char out[256];
	snprintf(out, sizeof(out), "%.64s/%.31s.%s", dir, c->name, ext);
	const char *argv[TT_CASE_MAX_INPUTS + 16];
	size_t n = 0;
	argv[n++] = "convert";
	argv[n++] = "--force";
	for (size_t i = 0; i < c->ninputs; i++)
		argv[n++] = c->inputs[i];
	argv[n++] = "-o";
	argv[n++] = out;
	for (size_t i = 0; i < N(c->extra) && c->extra[i]; i++)
		argv[n++] = c->extra[i];
	argv[n] = NULL;
	struct tt_run r;
	tt_run(&r, argv);
	free(r.out);
	if (r.status != 0) {
		fprintf(stderr, "ticktrace convert %s failed (%d):\n%s", out, r.status, r.err);
		return -1;
	}
	if (c->warning && !strstr(r.err, c->warning)) {
		fprintf(stderr, "ticktrace convert %s did not warn \"%s\":\n%s", out, c->warning, r.err);
		return -1;
	}
	return 0;
}

/* Each case in both formats through check-perfetto.py; 0 when all pass. */
static int tt_cases_check(const struct tt_case *cases, int n, const char *dir, char **argv)
{
	int failed = 0;
	for (int i = 0; i < n; i++) {
		const struct tt_case *c = &cases[i];
		char json[256], pf[256], flows[16];
		snprintf(json, sizeof(json), "%.64s/%.31s.json", dir, c->name);
		snprintf(pf, sizeof(pf), "%.64s/%.31s.pftrace", dir, c->name);
		snprintf(flows, sizeof(flows), "%d", c->flows);
		char *py_argv[] = {"python3", argv[2], pf, argv[3], json, "--flows", flows, NULL};
		if (c->flows < 0)
			py_argv[5] = NULL;
		printf("== %s (%zu file%s)\n", c->name, c->ninputs, c->ninputs > 1 ? "s" : "");
		fflush(stdout);
		if (tt_case_convert(c, dir, "json") < 0 || tt_case_convert(c, dir, "pftrace") < 0 ||
		    tt_spawn(py_argv) != 0) {
			printf("FAIL %s\n", c->name);
			failed = 1;
		}
	}
	return failed;
}

/* Perfetto's trace_processor_shell: $TICKTRACE_TRACE_PROCESSOR, or where
 * build-trace-processor.sh puts it; NULL when neither is there. */
static const char *tt_trace_processor(char *buf, size_t cap)
{
	const char *env = getenv("TICKTRACE_TRACE_PROCESSOR");
	if (env && *env)
		return access(env, X_OK) == 0 ? env : NULL;
	const char *home = getenv("HOME");
	snprintf(buf, cap, "%s/.cache/ticktrace/trace_processor_shell", home ? home : "");
	return home && access(buf, X_OK) == 0 ? buf : NULL;
}

/* A real run of a demo program into dir/NAME.ttr, with `mode` (TICKTRACE_MODE) and
 * `buffer` (TICKTRACE_BUFFER, or NULL); 0 or -1. */
static int tt_demo_run(const char *demo, const char *dir, const char *name, const char *items,
		       const char *mode, const char *buffer)
{
	char sub[256], from[512], to[512];
	snprintf(sub, sizeof(sub), "%s/%s.d", dir, name);
	if (mkdir(sub, 0700) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		setenv("TICKTRACE_MODE", mode, 1);
		if (buffer)
			setenv("TICKTRACE_BUFFER", buffer, 1);
		char out[300];
		snprintf(out, sizeof(out), "%s/run.ttr", sub); /* the stream's own file */
		setenv("TICKTRACE_OUT", out, 1);
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		execl(demo, demo, "--items", items, "--out", sub, (char *)NULL);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "%s (%s) failed\n", demo, mode);
		return -1;
	}
	snprintf(from, sizeof(from), "%s/demo.ttr", sub);
	snprintf(to, sizeof(to), "%s/%s.ttr", dir, name);
	return rename(from, to);
}

/* Every case, and real runs of the demo, in both formats, with `ticktrace report
 * --json` of each, through check-trace-processor.py; its exit status. */
static int tt_cases_processor(struct tt_case *cases, int n, const char *dir,
			      const char *processor, char **argv)
{
	static const struct {
		const char *name, *items, *mode, *buffer;
		bool instrumented;
	} runs[] = {
		{"run-demo", "300", "stop", NULL, false},
		{"run-ring", "2000", "ring", "8192", false},
		{"run-stream", "5000", "stream", NULL, false},
		{"run-instrumented", "200", "stop", NULL, true},
	};
	for (size_t i = 0; i < N(runs); i++) {
		struct tt_case *c = &cases[n];
		char name[64];
		snprintf(name, sizeof(name), "%s.ttr", runs[i].name);
		if (tt_demo_run(runs[i].instrumented ? argv[4] : argv[3], dir, runs[i].name, runs[i].items,
				runs[i].mode, runs[i].buffer) < 0)
			return 1;
		snprintf(c->name, sizeof(c->name), "%s", runs[i].name);
		c->inputs[0] = tt_case_path(dir, name);
		c->ninputs = 1;
		c->flows = -1;
		c->extra[0] = "--spikes";
		n++;
	}
	char *py_argv[64] = {"python3", argv[2], (char *)processor, (char *)dir};
	char specs[32][48];
	size_t np = 4;
	for (int i = 0; i < n; i++) {
		const struct tt_case *c = &cases[i];
		if (tt_case_convert(c, dir, "json") < 0 || tt_case_convert(c, dir, "pftrace") < 0)
			return 1;
		const char *report[TT_CASE_MAX_INPUTS + 4] = {"report", "--json"};
		for (size_t k = 0; k < c->ninputs; k++)
			report[2 + k] = c->inputs[k];
		report[2 + c->ninputs] = NULL;
		struct tt_run r;
		tt_run(&r, report);
		char path[256];
		snprintf(path, sizeof(path), "%.64s/%.31s.report.json", dir, c->name);
		int saved = r.status == 0 ? tt_tw_save(path, r.out, r.out_len) : -1;
		free(r.out);
		if (saved < 0) {
			fprintf(stderr, "ticktrace report %s failed (%d):\n%s", c->name, r.status, r.err);
			return 1;
		}
		snprintf(specs[i], sizeof(specs[i]), "%.31s:%d", c->name, c->flows);
		py_argv[np++] = specs[i];
	}
	py_argv[np] = NULL;
	return tt_spawn(py_argv);
}

int main(int argc, char **argv)
{
	bool devtools = argc == 3 && strcmp(argv[1], "devtools") == 0;
	bool perfetto = argc == 4 && strcmp(argv[1], "perfetto") == 0;
	bool tp = argc == 5 && strcmp(argv[1], "trace-processor") == 0;
	if (!devtools && !perfetto && !tp) {
		fprintf(stderr, "usage: test_consumers devtools CHECK.mjs | perfetto CHECK.py SCHEMA |"
			" trace-processor CHECK.py DEMO DEMO_INSTRUMENTED\n");
		return 2;
	}
	const char *runner = devtools ? "node" : "python3";
	char probe[64], tp_buf[512];
	snprintf(probe, sizeof(probe), "%s --version >/dev/null 2>&1", runner);
	if (system(probe) != 0) {
		printf("skip: %s is not installed\n", runner);
		return 77;
	}
	const char *processor = tp ? tt_trace_processor(tp_buf, sizeof(tp_buf)) : NULL;
	if (tp && !processor) {
		printf("skip: no trace_processor_shell: set TICKTRACE_TRACE_PROCESSOR, or build it "
		       "into ~/.cache/ticktrace with build-trace-processor.sh (about 40 minutes)\n");
		return 77;
	}
	char dir[64], in[128], json[128], pf[128], exp[128];
	tt_tmpdir(dir, sizeof(dir));
	snprintf(in, sizeof(in), "%s/demo.ttr", dir);
	snprintf(json, sizeof(json), "%s/demo.json", dir);
	snprintf(pf, sizeof(pf), "%s/demo.pftrace", dir);
	snprintf(exp, sizeof(exp), "%s/expect.json", dir);
	static struct tt_case cases[24];
	int ncases = 0, status = 1;
	if (tt_demo_write(in) < 0 ||
	    (devtools && tt_tw_save(exp, devtools_expect, strlen(devtools_expect)) < 0) ||
	    (!devtools && (ncases = tt_cases_write(cases, dir)) < 0)) {
		fprintf(stderr, "cannot write the test files in %s\n", dir);
	} else if (devtools) {
		char *node_argv[] = {"node", argv[2], json, "--expect", exp, NULL};
		if (tt_convert_demo(in, json, false) == 0)
			status = tt_spawn(node_argv);
	} else if (perfetto) {
		/* the demo filtered to a window (the filter holds back begins for Perfetto),
		 * then every case whole */
		char *py_argv[] = {"python3", argv[2], pf, argv[3], json, NULL};
		status = tt_convert_demo(in, json, true) == 0 && tt_convert_demo(in, pf, true) == 0 ?
				 tt_spawn(py_argv) :
				 1;
		if (tt_cases_check(cases, ncases, dir, argv) != 0)
			status = 1;
	} else {
		status = tt_cases_processor(cases, ncases, dir, processor, argv);
	}
	tt_cases_free(cases, ncases < 0 ? 0 : ncases);
	tt_rmdir(dir);
	return status;
}
