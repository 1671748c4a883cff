/* `ticktrace diff`'s comparison (report.h): the flat profile of each run of each side
 * (tt_profile_table, through its own tt_session), their calls pooled per scope name,
 * and per scope the change of a statistic, whether the calls' durations moved beyond
 * their spread (tt_rank_test on the two histograms), and with several runs a side,
 * whether every run agrees. Memory grows with the scopes and runs, never with the
 * calls. */
#include "report.h"

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const tt_diff_metrics[] = {"p50", "p90", "p99", "total", "calls"};
const unsigned tt_diff_permille[] = {500, 900, 990};

/* ---- the sides' runs: a raw file, or a directory of them ---- */

static int tt_path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int tt_diff_list_runs(struct tt_diff *d, int side, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) { /* a file; tt_trace_open says what is wrong */
		d->runs[side] = malloc(sizeof(char *));
		if (!d->runs[side] || !(d->runs[side][0] = strdup(path)))
			return tt_error("out of memory");
		d->nruns[side] = 1;
		return 0;
	}
	DIR *dir = opendir(path);
	if (!dir)
		return tt_error("%s: cannot read the directory", path);
	size_t cap = 0;
	struct dirent *e;
	int rc = 0;
	while (rc == 0 && (e = readdir(dir))) {
		size_t len = strlen(e->d_name);
		if (len <= 4 || strcmp(e->d_name + len - 4, ".ttr") != 0)
			continue;
		if (d->nruns[side] == cap) {
			cap = cap ? 2 * cap : 8;
			char **grown = realloc(d->runs[side], cap * sizeof(*grown));
			if (!grown) {
				rc = tt_error("out of memory");
				break;
			}
			d->runs[side] = grown;
		}
		char *run = malloc(strlen(path) + len + 2);
		if (!run) {
			rc = tt_error("out of memory");
			break;
		}
		sprintf(run, "%s/%s", path, e->d_name);
		d->runs[side][d->nruns[side]++] = run;
	}
	closedir(dir);
	if (rc == 0 && !d->nruns[side])
		rc = tt_error("%s: no raw files (*.ttr) in the directory", path);
	if (rc == 0)
		qsort(d->runs[side], d->nruns[side], sizeof(char *), tt_path_cmp);
	return rc;
}

/* ---- pooling the runs' tables ---- */

static uint64_t tt_fnv(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * UINT64_C(0x100000001b3);
	return h;
}

/* The scope of this thread name (NULL: all threads) and name, made if new; NULL when
 * out of memory. */
static struct tt_diff_scope *tt_diff_scope(struct tt_diff *d, const char *thread, size_t thread_len,
					   const char *name)
{
	uint64_t h = tt_fnv(UINT64_C(0xcbf29ce484222325), thread ? thread : "", thread ? thread_len : 0);
	h = tt_fnv(tt_fnv(h, "", 1), name, strlen(name));
	uint32_t at = 0;
	tt_map_get(&d->by_hash, h, &at);
	for (uint32_t i = at; i; i = d->scopes[i - 1].same_hash) {
		struct tt_diff_scope *s = &d->scopes[i - 1];
		if (strcmp(s->name, name) == 0 && (!thread || (strlen(s->thread) == thread_len &&
							       memcmp(s->thread, thread, thread_len) == 0)))
			return s;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 256;
		struct tt_diff_scope *grown = realloc(d->scopes, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		d->scopes = grown;
		d->cap = cap;
	}
	struct tt_diff_scope *s = &d->scopes[d->n];
	*s = (struct tt_diff_scope){.name = strdup(name), .same_hash = at,
				    .thread = thread ? strndup(thread, thread_len) : NULL};
	for (int k = 0; k < 2; k++) {
		s->side[k].min = INT64_MAX;
		s->side[k].per_run = malloc(d->nruns[k] * sizeof(int64_t));
		for (size_t r = 0; s->side[k].per_run && r < d->nruns[k]; r++)
			s->side[k].per_run[r] = d->o->metric >= TT_DIFF_TOTAL ? 0 : TT_DIFF_ABSENT;
	}
	d->n++; /* counted before the checks, so that tt_diff_free frees what was made */
	if (!s->name || (thread && !s->thread) || !s->side[0].per_run || !s->side[1].per_run ||
	    tt_map_put(&d->by_hash, h, (uint32_t)d->n) < 0)
		return NULL;
	return s;
}

static int64_t tt_entry_metric(const struct tt_an_entry *e, enum tt_diff_metric m)
{
	switch (m) {
	case TT_DIFF_TOTAL: return e->total;
	case TT_DIFF_CALLS: return e->calls > INT64_MAX ? INT64_MAX : (int64_t)e->calls;
	default: return tt_an_hist_percentile(&e->hist, e->calls, tt_diff_permille[m], e->min, e->max);
	}
}

static int64_t tt_side_metric(const struct tt_diff_side *s, enum tt_diff_metric m)
{
	switch (m) {
	case TT_DIFF_TOTAL: return s->total;
	case TT_DIFF_CALLS: return s->calls > INT64_MAX ? INT64_MAX : (int64_t)s->calls;
	default: return tt_an_hist_percentile(&s->hist, s->calls, tt_diff_permille[m], s->min, s->max);
	}
}

int64_t tt_diff_percentile(const struct tt_diff_side *s, unsigned permille)
{
	return tt_an_hist_percentile(&s->hist, s->calls, permille, s->min, s->max);
}

static void tt_add_sat(int64_t *acc, int64_t v)
{
	if (__builtin_add_overflow(*acc, v, acc))
		*acc = INT64_MAX;
}

/* What a thread is matched by between runs: its name; the main thread's, unless the
 * program named it, is its program's, which two builds need not share: "main". */
static struct tt_str tt_thread_key(const struct tt_an_thread *th)
{
	const struct tt_thread *t = th->ctx;
	const struct tt_process *p = &t->file->process;
	struct tt_str name = {th->name ? th->name : "", th->name ? th->name_len : 0};
	if (th->tid == th->pid && name.len == p->name.len && memcmp(name.ptr, p->name.ptr, name.len) == 0)
		return (struct tt_str){"main", 4};
	return name;
}

/* Adds the table of run `r` of `side` to the scopes; 0 or -1. */
static int tt_diff_add_table(struct tt_diff *d, int side, size_t r, const struct tt_an_table *t,
			     const struct tt_summary *sum)
{
	d->dropped[side] += sum->dropped;
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_an_entry *e = &t->entries[i];
		struct tt_str thread = e->thread ? tt_thread_key(e->thread) : (struct tt_str){0};
		struct tt_diff_scope *scope = tt_diff_scope(d, thread.ptr, thread.len, e->name);
		if (!scope)
			return tt_error("out of memory for %zu scopes", d->n);
		struct tt_diff_side *s = &scope->side[side];
		if (s->last_run != r + 1) { /* by thread, a run's threads of one name share it */
			s->runs++;
			s->last_run = r + 1;
		}
		s->calls += e->calls;
		tt_add_sat(&s->total, e->total);
		tt_add_sat(&s->self, e->self);
		tt_add_sat(&s->calls_total, e->calls_total);
		s->min = e->min < s->min ? e->min : s->min;
		s->max = e->max > s->max ? e->max : s->max;
		if (tt_an_hist_merge(&s->hist, &e->hist) < 0)
			return tt_error("out of memory for the histograms");
		int64_t v = tt_entry_metric(e, d->o->metric);
		if (d->o->metric >= TT_DIFF_TOTAL)
			tt_add_sat(&s->per_run[r], v);
		else if (s->per_run[r] == TT_DIFF_ABSENT || v > s->per_run[r])
			s->per_run[r] = v; /* by thread, the slowest of the run's threads of a name */
	}
	return 0;
}

/* ---- the comparison ---- */

/* With several runs a side, a change counts only when every run says so: each new
 * run's figure beyond each base run's. Runs are not independent samples of calls (a
 * run on a busier machine is slower throughout), which pooling their calls hides. */
static bool tt_runs_agree(const struct tt_diff *d, const struct tt_diff_scope *s, bool up)
{
	if (d->nruns[TT_BASE] < 2 || d->nruns[TT_NEW] < 2)
		return true;
	int64_t lo[2] = {INT64_MAX, INT64_MAX}, hi[2] = {INT64_MIN, INT64_MIN};
	for (int k = 0; k < 2; k++)
		for (size_t r = 0; r < d->nruns[k]; r++) {
			int64_t v = s->side[k].per_run[r];
			if (v == TT_DIFF_ABSENT)
				continue;
			lo[k] = v < lo[k] ? v : lo[k];
			hi[k] = v > hi[k] ? v : hi[k];
		}
	return up ? lo[TT_NEW] > hi[TT_BASE] : hi[TT_NEW] < lo[TT_BASE];
}

static double tt_change_pct(int64_t base, int64_t now)
{
	if (base == now)
		return 0;
	return base > 0 ? ((double)now - (double)base) / (double)base * 100 : INFINITY;
}

/* Whether the durations moved in the direction `up`, beyond their spread. */
static bool tt_durations_moved(const struct tt_diff_scope *s, double alpha, bool up)
{
	return s->test.p_value < alpha && (up ? s->test.z > 0 : s->test.z < 0);
}

/* Whether a change of the total in the direction `up` is significant: more (fewer)
 * calls, counted exactly, or longer (shorter) ones. */
static bool tt_total_moved(const struct tt_diff_scope *s, double alpha, bool up)
{
	uint64_t b = s->side[TT_BASE].calls, n = s->side[TT_NEW].calls;
	return (up ? n > b : n < b) || tt_durations_moved(s, alpha, up);
}

static void tt_scope_compare(struct tt_diff *d, struct tt_diff_scope *s)
{
	const struct tt_diff_opts *o = d->o;
	enum tt_diff_metric m = o->metric;
	tt_rank_test(&s->side[TT_BASE].hist, &s->side[TT_NEW].hist, &s->test);
	int64_t metric[2];
	for (int k = 0; k < 2; k++)
		metric[k] = tt_side_metric(&s->side[k], m);
	bool both = s->side[TT_BASE].calls && s->side[TT_NEW].calls;
	s->change_pct = both ? tt_change_pct(metric[TT_BASE], metric[TT_NEW]) : NAN;
	bool up = metric[TT_NEW] > metric[TT_BASE];
	if (!both || metric[TT_NEW] == metric[TT_BASE])
		s->significant = false;
	else if (m == TT_DIFF_CALLS)
		s->significant = true; /* counted, not sampled */
	else if (m == TT_DIFF_TOTAL)
		s->significant = tt_total_moved(s, o->alpha, up);
	else
		s->significant = tt_durations_moved(s, o->alpha, up);
	s->consistent = s->significant && tt_runs_agree(d, s, up);
	double pct = o->fail_above > 0 ? o->fail_above : TT_DIFF_DEFAULT_PCT;
	s->regressed = s->consistent && s->change_pct > pct;
	s->improved = s->consistent && s->change_pct < -pct;
	int64_t bt = s->side[TT_BASE].total, nt = s->side[TT_NEW].total;
	s->total_up = both && nt > bt && tt_total_moved(s, o->alpha, true);
	d->regressed += s->regressed;
	d->improved += s->improved;
}

/* Significant increases of the total first, the largest first; then the others by
 * their change of total, increases before decreases. */
static int tt_scope_cmp(const void *a, const void *b)
{
	const struct tt_diff_scope *x = a, *y = b;
	if (x->total_up != y->total_up)
		return x->total_up ? -1 : 1;
	double dx = (double)x->side[TT_NEW].total - (double)x->side[TT_BASE].total;
	double dy = (double)y->side[TT_NEW].total - (double)y->side[TT_BASE].total;
	if (dx != dy)
		return dx > dy ? -1 : 1;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->thread ? x->thread : "", y->thread ? y->thread : "");
}

/* Too rare to judge: a side that has the scope has fewer than --min-calls calls. */
static bool tt_too_rare(const struct tt_diff_scope *s, uint64_t min_calls)
{
	for (int k = 0; k < 2; k++)
		if (s->side[k].calls && s->side[k].calls < min_calls)
			return true;
	return false;
}


static void tt_scope_free(struct tt_diff_scope *s)
{
	free(s->name);
	free(s->thread);
	for (int k = 0; k < 2; k++) {
		free(s->side[k].hist.counts);
		free(s->side[k].per_run);
	}
}

void tt_diff_free(struct tt_diff *d)
{
	for (size_t i = 0; i < d->n; i++)
		tt_scope_free(&d->scopes[i]);
	free(d->scopes);
	tt_map_free(&d->by_hash);
	for (int k = 0; k < 2; k++) {
		for (size_t r = 0; r < d->nruns[k]; r++)
			free(d->runs[k][r]);
		free(d->runs[k]);
	}
}

/* The runs are decoded a few at a time, each on a thread of its own: a side's 100
 * million events take seconds, and the two sides are independent. What each run
 * adds to the scopes is added under the lock. */
#define TT_DIFF_WORKERS 4

struct tt_diff_jobs {
	struct tt_diff *d;
	pthread_mutex_t lock;
	size_t next, total;
	bool failed;
};

struct tt_diff_run {
	struct tt_diff_jobs *jobs;
	int side;
	size_t run;
};

static int tt_diff_add_locked(void *ctx, struct tt_an_table *t, const struct tt_summary *sum)
{
	struct tt_diff_run *run = ctx;
	pthread_mutex_lock(&run->jobs->lock);
	int rc = tt_diff_add_table(run->jobs->d, run->side, run->run, t, sum);
	pthread_mutex_unlock(&run->jobs->lock);
	return rc;
}

static void *tt_diff_worker(void *arg)
{
	struct tt_diff_jobs *jobs = arg;
	struct tt_diff *d = jobs->d;
	for (;;) {
		pthread_mutex_lock(&jobs->lock);
		size_t job = jobs->failed ? jobs->total : jobs->next++;
		pthread_mutex_unlock(&jobs->lock);
		if (job >= jobs->total)
			return NULL;
		struct tt_diff_run run = {jobs, job < d->nruns[TT_BASE] ? TT_BASE : TT_NEW, job};
		if (run.side == TT_NEW)
			run.run -= d->nruns[TT_BASE];
		/* quiet: no progress bar from several threads at once */
		struct tt_session_opts so = {.inputs = &d->runs[run.side][run.run], .ninputs = 1,
					     .debug_dir = d->o->debug_dir, .quiet = true};
		struct tt_session session;
		int rc = tt_session_open(&session, &so);
		if (rc == 0)
			rc = tt_profile_table(&session, &d->o->filter, d->o->by_thread, tt_diff_add_locked, &run);
		if (tt_session_close(&session, rc) < 0) {
			pthread_mutex_lock(&jobs->lock);
			jobs->failed = true;
			pthread_mutex_unlock(&jobs->lock);
		}
	}
}

static int tt_diff_read(struct tt_diff *d)
{
	const struct tt_diff_opts *o = d->o;
	for (int k = 0; k < 2; k++)
		if (tt_diff_list_runs(d, k, o->paths[k]) < 0)
			return -1;
	struct tt_diff_jobs jobs = {.d = d, .lock = PTHREAD_MUTEX_INITIALIZER,
				    .total = d->nruns[TT_BASE] + d->nruns[TT_NEW]};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nworkers = cpus < 1 ? 1 : (size_t)cpus;
	nworkers = nworkers < jobs.total ? nworkers : jobs.total;
	nworkers = nworkers < TT_DIFF_WORKERS ? nworkers : TT_DIFF_WORKERS;
	pthread_t workers[TT_DIFF_WORKERS];
	size_t started = 0;
	while (started + 1 < nworkers && tt_thread_start(&workers[started], tt_diff_worker, &jobs) == 0)
		started++;
	tt_diff_worker(&jobs); /* this thread is one of them */
	for (size_t i = 0; i < started; i++)
		pthread_join(workers[i], NULL);
	if (jobs.failed)
		return -1;
	for (int k = 0; k < 2; k++)
		if (d->dropped[k])
			tt_warn("%s: %" PRIu64 " events were dropped while recording: not counted",
				o->paths[k], d->dropped[k]);
	return 0;
}

/* The scopes named in d->uncompared's list of scopes gone: the first few. */
#define TT_DIFF_GONE_NAMED 5

/* d->uncompared: what of the sides the comparison could not judge. `with[k]`: scopes
 * side k recorded; `common`: scopes both did (before --min-calls, which leaves out
 * scopes the user means to leave out). The scopes gone are counted after it. */
static void tt_diff_uncompared(struct tt_diff *d, const size_t with[2], size_t common)
{
	const struct tt_diff_opts *o = d->o;
	char *u = d->uncompared;
	size_t cap = sizeof d->uncompared;
	if (!with[TT_BASE] || !with[TT_NEW]) {
		const char *chosen = o->filter.nthreads || o->filter.has_from || o->filter.has_to ?
					     " (in the --thread, --from and --to chosen)" : "";
		if (!with[TT_BASE] && !with[TT_NEW])
			snprintf(u, cap, "neither %s nor %s recorded a scope%s: nothing was compared",
				 o->paths[TT_BASE], o->paths[TT_NEW], chosen);
		else
			snprintf(u, cap, "%s recorded no scope%s: nothing was compared",
				 o->paths[with[TT_BASE] ? TT_NEW : TT_BASE], chosen);
		return;
	}
	if (!common) {
		snprintf(u, cap, "%s and %s have no scope in common (another program, or every scope "
			 "renamed): nothing was compared", o->paths[TT_BASE], o->paths[TT_NEW]);
		return;
	}
	size_t named = 0, len;
	for (size_t i = 0; i < d->n; i++)
		d->gone += d->scopes[i].side[TT_BASE].calls && !d->scopes[i].side[TT_NEW].calls;
	if (!d->gone)
		return;
	len = (size_t)snprintf(u, cap, "%zu scope%s of %s %s not in %s (removed, renamed or not run):",
			       d->gone, d->gone == 1 ? "" : "s", o->paths[TT_BASE], d->gone == 1 ? "is" : "are",
			       o->paths[TT_NEW]);
	for (size_t i = 0; i < d->n && named < TT_DIFF_GONE_NAMED && len < cap; i++) {
		const struct tt_diff_scope *s = &d->scopes[i];
		if (s->side[TT_BASE].calls && !s->side[TT_NEW].calls)
			len += (size_t)snprintf(u + len, cap - len, "%s %s%s%s", named++ ? "," : "", s->name,
						s->thread ? " in " : "", s->thread ? s->thread : "");
	}
	if (len < cap && named < d->gone)
		snprintf(u + len, cap - len, " and %zu more", d->gone - named);
}

int tt_diff_compare(struct tt_diff *d, const struct tt_diff_opts *o)
{
	*d = (struct tt_diff){.o = o};
	if (tt_diff_read(d) < 0)
		return -1;
	size_t kept = 0, with[2] = {0, 0}, common = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct tt_diff_scope *s = &d->scopes[i];
		with[TT_BASE] += s->side[TT_BASE].calls > 0;
		with[TT_NEW] += s->side[TT_NEW].calls > 0;
		common += s->side[TT_BASE].calls && s->side[TT_NEW].calls;
		if (tt_too_rare(&d->scopes[i], o->min_calls)) {
			tt_scope_free(&d->scopes[i]);
			continue;
		}
		d->scopes[kept] = d->scopes[i];
		tt_scope_compare(d, &d->scopes[kept++]);
	}
	d->n = kept; /* the hash chains point at places that moved: not used from here */
	if (d->n)
		qsort(d->scopes, d->n, sizeof(*d->scopes), tt_scope_cmp);
	tt_diff_uncompared(d, with, common);
	double pct = o->fail_above > 0 ? o->fail_above : TT_DIFF_DEFAULT_PCT;
	snprintf(d->summary, sizeof d->summary,
		 "%s (%zu run%s) -> %s (%zu run%s): %zu scopes, %zu regressed, %zu improved "
		 "(%s beyond %g%%, p < %g)", o->paths[TT_BASE], d->nruns[TT_BASE],
		 d->nruns[TT_BASE] == 1 ? "" : "s", o->paths[TT_NEW], d->nruns[TT_NEW],
		 d->nruns[TT_NEW] == 1 ? "" : "s", d->n, d->regressed, d->improved, tt_diff_metrics[o->metric],
		 pct, o->alpha);
	return 0;
}
