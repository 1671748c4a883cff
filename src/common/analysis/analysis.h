/* The flat profile and the spike detector: one implementation, compiled into the
 * runtime (TICKTRACE_REPORT at exit, and the live spikes of stream mode) and into
 * the tools (`ticktrace report`, `ticktrace spikes`, `convert --threshold`).
 *
 * Each thread's analysis is fed its scopes in order: tt_an_scope_open,
 * tt_an_scope_close (the innermost), tt_an_scope_note, as the scope machine
 * (common.h) opens and closes them. It keeps, per scope key, the profile row (calls,
 * total, self, min, max, a histogram for percentiles), and reports each spike through
 * a callback when the spiking scope ends, so it needs neither the whole trace nor the
 * future. The tools feed it from the decoder's events; the runtime from raw records
 * (tt_an_feed_records). Memory grows with the keys and the nesting depth, never with
 * events. This header is the library's face (names tt_an_); analysis_internal.h is
 * what only its files share.
 *
 * Spikes. A scope spikes when it lasts longer than its threshold, the first of:
 *   1. its own TT_THRESHOLD_NS;
 *   2. the first line of the thresholds table whose pattern matches its name;
 *   3. the TT_CHILDREN_THRESHOLD_NS of the nearest enclosing scope that set one;
 *   4. the global threshold.
 * A scope with none never spikes; nor does one with TT_IGNORE, or nested (at any
 * depth) in one with TT_IGNORE_CHILDREN. The deepest scope explains the time: a
 * spike is reported when it ends, and the time of the spikes reported inside a scope
 * counts as explained; the scope itself is reported only if its time less the
 * explained time still exceeds its threshold. So a parent slow only because of a
 * child that spiked is not shown again, and one slow for other reasons as well is,
 * with the explained part stated.
 *
 * Times are integer nanoseconds; a profile row's children time is total - self,
 * exactly. Percentiles come from a log-linear histogram: 32 buckets per power of two
 * (exact below 64 ns), reported as the middle of the bucket that holds the
 * nearest-rank value, clamped to min..max: within 1/64 (1.6%) of the exact value;
 * exact when that value is the smallest or the largest. */
#ifndef TT_ANALYSIS_H
#define TT_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../common.h"

#define TT_AN_NO_THRESHOLD INT64_C(-1)

/* ---- percentiles ---- */

struct tt_an_hist {
	uint64_t *counts; /* buckets [lo, hi) */
	uint32_t lo, hi;
};

/* Counts one value; 0, or -1 when out of memory. */
int tt_an_hist_add(struct tt_an_hist *h, int64_t ns);
/* Adds `from`'s counts; 0, or -1 when out of memory. */
int tt_an_hist_merge(struct tt_an_hist *into, const struct tt_an_hist *from);
/* The nearest-rank value at `permille` of `calls` values (analysis.h's precision). */
int64_t tt_an_hist_percentile(const struct tt_an_hist *h, uint64_t calls, unsigned permille,
			      int64_t min, int64_t max);

/* ---- a thread's open scopes ---- */

struct tt_an_frame {
	uint64_t key;
	int64_t start;
	int64_t children;  /* ns in its closed children */
	int64_t explained; /* ns of the spikes reported inside it */
	int64_t threshold; /* TT_THRESHOLD_NS, or TT_AN_NO_THRESHOLD */
	int64_t inherited; /* for scopes nested in it: TT_CHILDREN_THRESHOLD_NS here or above */
	uint32_t row;
	uint32_t flags;    /* analysis_internal.h: enum tt_an_frame_flags */
	uint32_t text_at, text_len; /* its TT_DESCRIBE, in the thread's text */
	int64_t start_early; /* as tt_an_spike's start_early_ns, from tt_an_thread's */
};

struct tt_an;

/* A closed scope's duration, bucketed, not yet counted in its row's histogram. */
struct tt_an_pending_count {
	uint32_t row, bucket;
};
#define TT_AN_PENDING_COUNTS 64
/* A thread's states (states.c), those that a scope still open may need. */
struct tt_an_states {
	bool known;    /* the thread's states are recorded */
	int64_t last_ns; /* the last state's, as its SCHED section had it (INT64_MIN: none) */
	/* every switch up to here is among them (a file's: its thread's exit; INT64_MIN:
	 * up to the last state alone, as a live reader's, whose next drain may add some) */
	int64_t complete_ns;
	struct tt_sched_state *at; /* [from, n), ns on the analysis's clock */
	size_t from, n, cap;
};

/* How a time span of a thread split: on CPU, preempted, blocked, and unknown: the time
 * no state covers (before the thread's states were asked for, or switches the kernel
 * lost, its ring full, or that a ring's store recycled). Their sum is the span. */
struct tt_an_split {
	int64_t on_cpu, preempted, blocked, unknown;
};

/* A thread's counters' readings (format.h: TT_SEC_SCHEDSTAT, states.c), those that a
 * scope still open may need: the split's second source. */
struct tt_an_counters {
	struct tt_schedstat_sample *at; /* [from, n), ns on the analysis's clock */
	size_t from, n, cap;
	bool steal; /* TT_SCHEDSTAT_STEAL: their CPU time leaves stolen time out */
	bool run_only; /* TT_SCHEDSTAT_RUN_ONLY: CPU time alone (Windows) */
	bool tick_steps; /* TT_SCHEDSTAT_TICK_STEPS: each value up to a tick behind */
	/* tick_steps: the step as its run found it (TT_MACHINE_TICK; 0: not said, so
	 * TT_SCHEDSTAT_TICK_NS), and whether its user and kernel times were each cut to a
	 * step (TT_MACHINE_TICK_EACH: a value up to two behind): tt_an_thread_tick */
	int64_t tick_ns;
	bool tick_each;
	bool switch_count; /* TT_SCHEDSTAT_SWITCH_COUNT: timeslices counts its switches */
	bool budget; /* TT_SCHEDSTAT_BUDGET: tt-sched's CPU budget left scopes of it unread */
	bool blind; /* TT_SCHEDSTAT_BLIND: its records not followed a while, it was read blind */
	bool source; /* they were read for it (a SCHEDSTAT section, of none maybe) */
	/* the latest readings the thread took itself (TT_SCHEDSTAT_OWN_FIRST, _LAST): by
	 * their ns, the last 4 */
	int64_t own_ns[4];
	unsigned owns;
};

/* Where a spike's split came from, and how far it is to be trusted. */
enum tt_an_causes_from { /* (as a snapshot says it: format.h) */
	TT_AN_CAUSES_NONE = TT_CAUSES_NONE,
	TT_AN_CAUSES_SWITCHES = TT_CAUSES_SWITCHES,   /* the thread's switches (SCHED): exact, but for wake-ups (below) */
	TT_AN_CAUSES_SCHEDSTAT = TT_CAUSES_SCHEDSTAT, /* its counters' readings around it: within error_ns */
	TT_AN_CAUSES_THREAD_TIMES = TT_CAUSES_THREAD_TIMES, /* its CPU time alone read around it
	                                                     * (Windows): on CPU within error_ns, the
	                                                     * rest unknown (off CPU, preempted or
	                                                     * blocked not told apart) */
};

/* A span's edges, where no counters reading came near enough to bound one
 * (tt_an_causes.miss_detail.edges) */
#define TT_AN_EDGE_START 1u
#define TT_AN_EDGE_END 2u
#define TT_AN_MISS_FAR_NONE TT_MISS_FAR_NONE /* (miss_detail: no reading on that side; a snapshot's too) */

/* What a spike's split says beside its three parts. */
struct tt_an_causes {
	enum tt_an_causes_from from;
	int64_t error_ns;   /* each part within this of the kernel's figure (0: exact) */
	/* Its thread's CPU time moves in steps of the system's tick (TT_SCHEDSTAT_TICK_STEPS),
	 * where its counters split it or say why not: the step (its run's, or
	 * TT_SCHEDSTAT_TICK_NS where its run did not say it: tick_said false) and how far
	 * behind a value may be, which error_ns holds; 0s: not so */
	int64_t tick_ns, tick_behind_ns;
	bool tick_said;
	bool faults;        /* the counters were read around it, or twice inside it: */
	uint64_t minor_faults, major_faults; /* from the reading before its start to the one
	                                      * after its end (all of its faults, and any
	                                      * between those readings outside it) */
	bool faults_at_least; /* none before its start or none after its end: between the
	                       * first and the last reading inside it, at least */
	/* The readings around it reach outside it and counted some: at most (the same
	 * count may go whole to each spike between them: outside recheck r46, F1); and
	 * how far apart they were (0: not known, a snapshot's) */
	bool faults_at_most;
	int64_t faults_read_ns;
	bool stolen_known;  /* switches and a CPU time that leaves steal out (TT_SCHEDSTAT_STEAL),
	                     * read near enough (within half its time on CPU): */
	int64_t stolen_ns;  /* of on_cpu, the time the hypervisor ran something else */
	/* stolen_ns within this (its CPU time's readings); not known (stolen_miss): how
	 * much of on_cpu may be stolen, all of it */
	int64_t stolen_error_ns;
	/* Switches and a CPU time that leaves steal out, but no stolen_ns: why
	 * (tt_an_stolen_unknown_text; as a snapshot says it: format.h) */
	enum tt_an_stolen_miss {
		TT_AN_STOLEN_SAID = 0,          /* (stolen_known, or the run cannot tell it) */
		TT_AN_STOLEN_NEVER_READ = TT_STOLEN_NEVER_READ, /* its CPU time never read */
		TT_AN_STOLEN_NOT_AFTER = TT_STOLEN_NOT_AFTER,   /* none read after its start (a
		                                                 * thread killed, or ended first) */
		TT_AN_STOLEN_NOT_BEFORE = TT_STOLEN_NOT_BEFORE, /* none read before its end */
		TT_AN_STOLEN_NOT_BOUNDED = TT_STOLEN_NOT_BOUNDED, /* readings around it, but they
		                                                 * and its switches bound it no
		                                                 * closer than all its time on CPU */
	} stolen_miss;
	/* thread-times with switch counts (TT_SCHEDSTAT_SWITCH_COUNT): the thread was
	 * switched in at least switches_min and at most switches_max times inside it (0
	 * and 0: on CPU throughout, what its CPU time lacks stolen) */
	bool switches_counted;
	uint64_t switches_min, switches_max;
	/* The switches count a woken thread's wait for a CPU as blocked (it was switched
	 * out asleep until switched in); the kernel's run-queue wait, in its counters'
	 * readings, holds it: where readings bound it (wakeups_known), moved from blocked
	 * into preempted, `wakeups_ns` of it, preempted and blocked then within error_ns
	 * (on CPU within the kernel's move alone); where none bound it (wakeups_unbounded), blocked may hold
	 * such waits: error_ns is all of it. */
	bool wakeups_known, wakeups_unbounded;
	int64_t wakeups_ns;
	/* The kernel's own figures (its CPU time and run-queue wait, in the readings
	 * beside the switches) put time elsewhere than the switches do: at a preemption
	 * its accounting may stop at the wake-up that caused it, or begin the next run
	 * at a moment its run-queue clock kept, not at the switch. Where the readings show
	 * it (moved_known), moved_ns of the switches' on CPU the kernel counts as waiting
	 * for a CPU (negative: of their preempted it counts as on CPU), and error_ns
	 * covers it; stolen_ns and wakeups_ns leave it out. */
	bool moved_known;
	int64_t moved_ns;
	/* Where no two readings measured it (none before its end) and one after it bounds
	 * it, with the waits after wake-ups: the kernel's wait over it exceeds preempted by
	 * at most this (0: not so, or within the error said besides), error_ns covering it. */
	int64_t moved_most_ns;
	/* Switches in inside it that no two readings measured: the kernel charges a thread's
	 * CPU time from when it picks it, before the context switch that its switch in is
	 * recorded after, so its CPU time may run ahead of on CPU by up to this (a few
	 * microseconds each, tens a spike: outside recheck r41 F1; taken as 20 us each, no
	 * more than its time off CPU), error_ns covering it. Where readings measured some,
	 * the rest are taken at twice their mean, in the move (moved_known). */
	int64_t cpu_ahead_most_ns;
	/* No split although the thread's counters were read for it: why
	 * (tt_an_no_split_text), and how far the readings nearest its edges were from them
	 * (as a snapshot says it: format.h) */
	enum tt_an_counters_miss {
		TT_AN_MISS_NONE = TT_UNSPLIT_THREAD,           /* (split, or no counters read for it) */
		TT_AN_MISS_NOT_AFTER = TT_UNSPLIT_NOT_AFTER,   /* none read after its start */
		TT_AN_MISS_NOT_BEFORE = TT_UNSPLIT_NOT_BEFORE, /* none read before its end */
		TT_AN_MISS_NOT_INSIDE = TT_UNSPLIT_NOT_INSIDE, /* none inside it: those around it
		                                                * bound it no closer than half its length */
		TT_AN_MISS_TOO_FAR = TT_UNSPLIT_TOO_FAR,       /* those inside too far from its
		                                                * edges to bound it closer than
		                                                * half its length */
		TT_AN_MISS_NEVER_READ = TT_UNSPLIT_NEVER_READ, /* none read at all */
	} miss;
	int64_t miss_start_ns, miss_end_ns;
	bool miss_budget; /* and tt-sched's CPU budget left scopes of its thread unread */
	bool miss_blind; /* and its thread's scopes were not known a while: read blind */
	/* Of readings around it (TT_AN_MISS_NOT_INSIDE, _TOO_FAR), what else they say, where
	 * known (0s: not said, as an earlier snapshot's): */
	struct tt_an_miss_detail {
		/* TOO_FAR: the edges no reading came near enough to bound (TT_AN_EDGE_*: one
		 * at least; none, with `tick`, where they bound each, the CPU time's steps of
		 * the system's tick (TT_SCHEDSTAT_TICK_STEPS) no closer than half its length) */
		unsigned edges;
		bool tick;
		/* TOO_FAR: the reading before its start and the one after its end, how far
		 * (TT_AN_MISS_FAR_NONE: none; 0: not said) */
		int64_t before_ns, after_ns;
		/* how late past TT_COUNTERS_AFTER_NS (tt-sched reads a scope open that long)
		 * the first reading after its start came, where it lasted that long and the
		 * reading came twice that late or more (0: not so, or not said) */
		int64_t late_ns;
		/* the thread's own run-queue wait in the over_ns between the readings around
		 * its start (over_ns 0: not known): the machine's load, which tt-sched waits in */
		int64_t waited_ns, over_ns;
	} miss_detail;
	/* Its switches' spans that no state covers (TT_SCHED_UNKNOWN: the kernel lost
	 * them, its ring for the thread full, or they were not asked for yet): `lost` of
	 * them the kernel lost there (its count), `lost_ns` of the spike without states;
	 * `covered_ns` of that split from the counters read around each span (then from
	 * is TT_AN_CAUSES_SCHEDSTAT, error_ns holds theirs), the rest unknown, `miss`
	 * (and its distances) saying why no reading covers it (tt_an_unknown_text). */
	uint64_t lost;
	int64_t lost_ns, covered_ns;
};

/* The names output gives a split's source: "switches", "schedstat", "thread-times"
 * (NULL: none). */
const char *tt_an_causes_from_name(enum tt_an_causes_from from);
/* Why a spike's stolen time is not said where its run tells stolen time apart
 * (c->stolen_miss), in words: "its thread's CPU time was not read after it began (...)";
 * NULL: said, or not to be told. */
const char *tt_an_stolen_unknown_text(const struct tt_an_causes *c);

/* An argument that says something of a spike (the tools' marks, `spikes --json`, the
 * runtime's live log): a number, or a text. */
struct tt_an_arg {
	const char *key;
	const char *text; /* NULL: the argument is `number` */
	int64_t number;
};

/* A spike's split's source and what else it says (struct
 * tt_an_causes), as arguments under the keys `spikes --json` and the marks give them:
 * causes_from and causes_error_ns (with a source; tick_ns and tick_behind_ns where its
 * thread's CPU time moves in steps of the system's tick, the error holding that), wakeup_waits_ns or
 * blocked_may_hold_wakeup_waits (1) (switches: where waits for a CPU after wake-ups
 * were moved into preempted, or may be in blocked), kernel_moved_ns (where the kernel's
 * own figures put a preemption's edge elsewhere; kernel_moved_at_most_ns: may, not
 * measured; kernel_cpu_ahead_at_most_ns: its CPU time may run ahead of on CPU at
 * switches in not measured), stolen_ns and stolen_error_ns (or, where the run tells stolen time apart
 * and they are not known, stolen_unknown: why, and stolen_error_ns: all of on CPU),
 * without_switches_ns and switches_lost (its time without switches, covered from the
 * counters or unknown, and the switches the kernel lost there), minor_faults and
 * major_faults (where known; faults_at_least or faults_at_most (1) where a bound, and
 * faults_read_ns, the readings' span, with at most). How many it wrote at `args`, at most TT_AN_CAUSES_ARGS. */
#define TT_AN_CAUSES_ARGS 16
size_t tt_an_causes_args(struct tt_an_arg *args, const struct tt_an_causes *c);
/* The line under a split (at `indent`) that says what else its causes tell: the
 * source and resolution of an approximate split, the time stolen (or why not), the
 * page faults; nothing where they tell nothing. */
void tt_an_causes_print(FILE *out, const char *indent, const struct tt_an_causes *c);

/* ---- a thread's analysis ---- */

struct tt_an_row;
struct tt_an_name_group;

struct tt_an_thread {
	struct tt_an *an;
	void *ctx;        /* the caller's thread, for its callbacks */
	uint32_t pid, tid;
	const char *name; /* not NUL-terminated */
	uint32_t name_len;
	struct tt_an_frame *stack;
	uint32_t depth, cap;
	char *text;       /* the descriptions of the open scopes, back to back */
	uint32_t text_len, text_cap;
	struct tt_an_row *rows;
	uint32_t nrows, rows_cap;
	uint32_t *index;  /* open addressing by key: row + 1, 0 empty */
	uint32_t index_cap;
	/* Histogram counts are added a batch at a time (tt_an_counts_flush), each batch's
		     * counters fetched together: with thousands of rows each counter is a cache miss
		     * of its own, which one by one would stall the decoding between them. */
	struct tt_an_pending_count pending[TT_AN_PENDING_COUNTS];
	uint32_t npending;
	uint64_t spikes;
	/* The profile's names, the first row of each: open addressing, 0 empty */
	struct tt_an_name_group *groups;
	uint32_t ngroups, groups_cap;
	struct tt_an_states states;
	/* Without states: why, as its THREAD flags say it (format.h: enum tt_no_states;
	 * common.h: tt_sched_none_text), for the spikes and the table to say */
	uint32_t no_states;
	struct tt_an_counters counters;
	/* Set by the caller around closing scopes whose end was among lost events: they
	 * ended up to this after the end given (-1: how much later not known; 0: recorded) */
	int64_t end_late;
	/* Set by the caller around opening scopes whose beginning was not recorded (before
	 * the oldest record its thread kept, or among lost events): they began up to this
	 * before the start given (-1: how much earlier not known; 0: recorded) */
	int64_t start_early;
};

/* Where a spike's threshold came from (the numbered list above). */
enum tt_an_threshold_source {
	TT_AN_FROM_CODE = 1,     /* TT_THRESHOLD_NS */
	TT_AN_FROM_TABLE = 2,    /* a line of the thresholds table */
	TT_AN_FROM_CHILDREN = 3, /* TT_CHILDREN_THRESHOLD_NS of an enclosing scope */
	TT_AN_FROM_GLOBAL = 4,   /* the global threshold */
};

/* One spike, valid during the callback. */
struct tt_an_spike {
	struct tt_an_thread *thread;
	uint64_t key;
	int64_t start, dur, threshold;
	enum tt_an_threshold_source source;
	int64_t explained;          /* ns of it in spikes reported before, inside it */
	const char *text;           /* its TT_DESCRIBE (text_len bytes), or NULL */
	uint32_t text_len;
	const struct tt_an_frame *stack; /* the scopes around it, outermost first, still open */
	uint32_t depth;
	uint64_t frame;   /* TT_FRAME_MARK: the frame it began in (from 1), or 0: none yet */
	int64_t frame_ns; /* the mean length of the frames so far, or 0 */
	/* Its end was among lost events (a full buffer's, a stream's disk behind): it ended
	 * at start + dur, the split's end, or up to this later (-1: how much later not
	 * known); 0: its end was recorded */
	int64_t end_late_ns;
	/* Its beginning was not recorded (a ring overwrote it, a fork's parent opened it,
	 * or among lost events): it began at start, or up to this earlier (-1: how much
	 * earlier not known), and lasted dur at least; 0: its beginning was recorded */
	int64_t start_early_ns;
	bool has_split;   /* the thread has states: how its time split (false: no split) */
	struct tt_an_split split;
	struct tt_an_causes causes; /* from where, how exact; page faults, stolen time */
};

/* The frames of a run (TT_FRAME_MARK), as far as spikes need them: which frame a time
 * is in, for the frames of the first key marked. The last TT_AN_FRAME_MARKS marks are
 * kept: a spike that began before them is said to be in the oldest. */
#define TT_AN_FRAME_MARKS 64
struct tt_an_frames {
	uint64_t key;   /* whose frames these are */
	uint64_t count; /* marks so far */
	int64_t first, last;
	int64_t at[TT_AN_FRAME_MARKS]; /* the latest marks, by count % TT_AN_FRAME_MARKS */
};

/* A line of the thresholds table: names that match `pattern` (fnmatch: * ? [...]). */
struct tt_an_threshold_rule {
	const char *pattern;
	int64_t ns;
};

/* The thresholds table read from a file of lines "NAME-PATTERN DURATION" ("GameTick
 * 16.6ms", "script_* 0.1ms"; '#' starts a comment), by the tools (--thresholds) and
 * the runtime (TICKTRACE_SPIKE_THRESHOLDS) alike (thresholds.c). */
struct tt_an_thresholds {
	struct tt_an_threshold_rule *rules;
	size_t nrules;
	char *text; /* the file's text, which the patterns point into */
};

enum tt_an_thresholds_what {
	TT_AN_THRESHOLDS_UNREADABLE, /* err: the errno */
	TT_AN_THRESHOLDS_NOT_FILE,   /* a device, FIFO or directory: never read */
	TT_AN_THRESHOLDS_TOO_BIG,    /* more than TT_AN_THRESHOLDS_MAX_BYTES */
	TT_AN_THRESHOLDS_OOM,
	TT_AN_THRESHOLDS_NO_PATTERN,  /* text: the line, a single word */
	TT_AN_THRESHOLDS_NO_DURATION, /* text: the line's last word */
};

/* What is wrong with a thresholds file: the caller names the file and says it. */
struct tt_an_thresholds_problem {
	enum tt_an_thresholds_what what;
	int err;
	size_t line;      /* from 1; 0 when not about a line */
	const char *text; /* in the table's text: valid until tt_an_thresholds_free */
};

/* Reads the file at `path` into `t`; 0, or -1 with `problem` filled in (then `t` still
 * needs tt_an_thresholds_free). Prints nothing. */
int tt_an_thresholds_load(struct tt_an_thresholds *t, const char *path,
			struct tt_an_thresholds_problem *problem);
void tt_an_thresholds_free(struct tt_an_thresholds *t);
/* The problem in words, without the file's name: "line 3: \"GameTick\" is not
 * \"NAME-PATTERN DURATION\"", "cannot read: No such file or directory"; returns buf. */
const char *tt_an_thresholds_problem_text(const struct tt_an_thresholds_problem *problem, char *buf,
					size_t cap);

struct tt_an {
	bool profile; /* keep the profile rows */
	bool find_spikes;
	int64_t threshold; /* the global one, or TT_AN_NO_THRESHOLD */
	const char *global_from; /* how output names where it came from; NULL: "--threshold" */
	const struct tt_an_threshold_rule *rules;
	size_t nrules;
	/* Writes the name of `key` into buf (NUL-terminated, at most cap bytes) and
	      * returns its length. */
	size_t (*name)(void *ctx, const struct tt_an_thread *th, uint64_t key, char *buf,
		       size_t cap);
	/* When set: a scope closed, with `self` ns of its own (report --frames). */
	void (*closed)(void *ctx, const struct tt_an_thread *th, uint64_t key, int64_t self);
	/* When set: a spike was found on `th`, before it is split: what reads the thread's
	 * counters as it runs gives the readings after its end (tt_an_thread_counters) now,
	 * rather than for every piece of records it feeds. */
	void (*before_split)(void *ctx, struct tt_an_thread *th);
	/* A spike; < 0 stops the analysis (the callback reported why). */
	int (*spike)(void *ctx, const struct tt_an_spike *spike);
	void *ctx;
	uint64_t spikes_found; /* over all threads */
	struct tt_an_frames frames;
	uint32_t print_depth; /* tt_an_spike_print: the innermost scopes shown (0: all) */
	bool oom;        /* memory ran out: the results are incomplete */
};

void tt_an_thread_init(struct tt_an_thread *th, struct tt_an *an, void *ctx);
void tt_an_thread_free(struct tt_an_thread *th);

/* A thread's scopes. Each returns 0, or < 0 when out of memory (an->oom is set) or
 * when the spike callback failed. Times must not go backwards on a thread. */
int tt_an_scope_open(struct tt_an_thread *th, uint64_t key, int64_t ts);
/* Closes the innermost open scope at `end` (nothing open: nothing happens). */
int tt_an_scope_close(struct tt_an_thread *th, int64_t end);
/* A note on the innermost open scope: TT_REC_THRESHOLD to TT_REC_IGNORE_CHILDREN with
 * its value, or TT_REC_DESCRIBE with its text; or on every open scope:
 * TT_REC_PARENTS_THRESHOLD. */
int tt_an_scope_note(struct tt_an_thread *th, unsigned kind, uint64_t value,
		     const char *text, size_t len);

/* A frame boundary at ts, of the frames named by `key` (others than the first key
 * marked are not counted). Marks must come in time order. */
void tt_an_frame_mark(struct tt_an *an, uint64_t key, int64_t ts);

/* Where a spike's threshold came from, as output names it: "TT_THRESHOLD_NS",
 * "thresholds file", ... */
const char *tt_an_spike_threshold_from(const struct tt_an_spike *s);

/* Why a spike has no split, by its causes: where its thread's counters were read for
 * it but not near enough, that; else why the thread has no states, by its flags
 * (tt_an_thread.no_states: tt_sched_none_text). */
const char *tt_an_no_split_text(const struct tt_an_causes *c, uint32_t no_states, char *buf, size_t cap);
/* (bytes that hold the longest of either text below, its thread's reason too) */
#define TT_AN_NO_SPLIT_TEXT 1024
/* Why a spike's split leaves its time without states (causes->lost_ns) unknown, or
 * partly: the switches the kernel lost there, and why no counters reading covers it
 * (NULL: all of it covered, or none without states). */
const char *tt_an_unknown_text(const struct tt_an_causes *c, char *buf, size_t cap);
#define TT_AN_UNKNOWN_TEXT TT_AN_NO_SPLIT_TEXT
/* Where a spike's end was lost, in words: "its end was among dropped events: it ended
 * up to 24.112 ms later" (NULL: recorded); into buf. */
const char *tt_an_end_late_text(const struct tt_an_spike *s, char *buf, size_t cap);
/* Where a spike's beginning was lost, in words: "its beginning was not recorded (before
 * the oldest record its thread kept: ...): it began earlier, how much not known" (NULL:
 * recorded); into buf (TT_AN_START_EARLY_TEXT bytes hold it). */
const char *tt_an_start_early_text(const struct tt_an_spike *s, char *buf, size_t cap);
#define TT_AN_START_EARLY_TEXT 256
/* How long a scope lasted, as a spike's line says it: "at least " before a duration
 * whose beginning was not recorded (start_early: tt_an_spike's start_early_ns); into
 * buf (48 bytes). */
const char *tt_an_fmt_dur(char *buf, int64_t ns, int64_t start_early);
/* Prints a spike as `ticktrace spikes` does: a line about it, its split (or why it
 * has none), a line for each scope around it (with how long it had been open when the
 * spike ended) and itself, the innermost an->print_depth of them, and its
 * description if it has one. */
void tt_an_spike_print(FILE *out, const struct tt_an_spike *spike);

/* A spike's split, as its line under the spike: `indent`, then "on CPU ..., preempted
 * ..., blocked ..., unknown ..." (approximate: each part but unknown after a "~"). */
void tt_an_split_print(FILE *out, const char *indent, const struct tt_an_split *split,
		       const struct tt_an_causes *c);

/* tt_parse_duration (common.h), the analysis library's name for it. */
int tt_an_parse_duration(const char *text, int64_t *ns);

/* "12.851 ms", "850 ns", "4.216 s": three decimals, the largest unit under the value. */
char *tt_an_fmt_ns(char buf[32], int64_t ns);

/* ---- the table ---- */

enum tt_an_sort {
	TT_AN_SORT_SELF, TT_AN_SORT_TOTAL, TT_AN_SORT_CHILDREN, TT_AN_SORT_CALLS, TT_AN_SORT_MIN,
	TT_AN_SORT_MAX, TT_AN_SORT_MEAN, TT_AN_SORT_P50, TT_AN_SORT_P95, TT_AN_SORT_P99, TT_AN_SORT_NAME,
};

/* "self", "total", ...: the sort, or -1; and the other way. */
int tt_an_sort_named(const char *name);
const char *tt_an_sort_name(enum tt_an_sort sort);
/* The names, for usage texts: "self, total, ..." */
extern const char tt_an_sort_names[];

/* A line of the table: a name (on one thread with by_thread) and its merged rows. */
struct tt_an_entry {
	char *name;
	const struct tt_an_thread *thread; /* by_thread; else NULL */
	uint64_t calls;
	int64_t total, self, children, min, max, mean, p50, p95, p99;
	int64_t calls_total; /* the sum of every call's duration (recursion: above total) */
	bool near_overhead;  /* p50 within TT_AN_NEAR_OVERHEAD x the call overhead */
	bool is_func;        /* a function (-finstrument-functions) */
	uint64_t over;       /* calls longer than the global threshold */
	struct tt_an_hist hist; /* every call's duration (`diff` compares them); the table's */
	/* With split: of total, on CPU and off it (preempted + blocked), where its
		    * thread's states tell; unknown, the rest of total (no state covers it, or its
		    * thread has none) */
	bool split;
	unsigned approximate; /* some of it split by the counters: within their resolution,
	                       * each call's; enum tt_an_approximate says whose (spikes
	                       * --json says it) */
	int64_t on_cpu, off_cpu, preempted, blocked, unknown;
	uint64_t filtered; /* of calls, erased as they returned (struct tt_an_row) */
	int64_t filtered_ns; /* their time, in their callers' self (struct tt_an_row) */
	uint64_t dropped;  /* calls dropped with the buffer used up, besides `calls` */
};

/* Whose counters split calls that their threads' switches did not (a mask): Linux's,
 * where perf_event_open was refused or the kernel lost switches (schedstat), or a
 * Windows thread's CPU time. */
enum tt_an_approximate {
	TT_AN_APPROX_SCHEDSTAT = 1u << 0,
	TT_AN_APPROX_THREAD_TIMES = 1u << 1,
};

struct tt_an_table {
	struct tt_an_entry *entries;
	size_t n;
	size_t threads;
	uint64_t calls; /* over all entries */
	int64_t overhead_ns;  /* what recording a call costs on this machine (measured) */
	size_t near_overhead; /* entries whose p50 is within TT_AN_NEAR_OVERHEAD x it */
	bool split;           /* an entry has states: the table shows on and off CPU */
	bool unknown;         /* of those, one with time neither: the table shows it too */
	unsigned approximate; /* of those, one split by the counters: "~" before its times
	                       * (enum tt_an_approximate: whose) */
	/* A thread with calls and no states, the first (NULL: none): without split, the
	 * table says why */
	const struct tt_an_thread *no_states;
	uint64_t filtered;    /* of calls, erased as they returned */
};

/* Rows whose median call is within this many times the call overhead are flagged: their
 * time is mostly the recorder's own (a 28 ns MEM_isLittleEndian is not real work). */
#define TT_AN_NEAR_OVERHEAD 3

/* The rows of `n` threads merged by name (and thread, with by_thread: then grouped
 * by thread in the order given), sorted. 0, or -1 when out of memory. */
/* Calls of `key` that TICKTRACE_MIN_DUR erased as they returned (a FILTERED section):
 * `calls` of `ns` together, counted in its row; 0, or -1 when out of memory. */
int tt_an_add_filtered(struct tt_an_thread *th, uint64_t key, uint64_t calls, int64_t ns);
/* Calls of `key` dropped with the buffer used up (a DROPPED_CALLS section), counted in
 * its row's `dropped` alone (their times are not known); 0, or -1 when out of memory. */
int tt_an_add_dropped(struct tt_an_thread *th, uint64_t key, uint64_t calls);
int tt_an_table_build(struct tt_an_table *t, struct tt_an_thread *const *threads, size_t n,
		      bool by_thread, enum tt_an_sort sort);
void tt_an_table_free(struct tt_an_table *t);
/* As an aligned text table, or CSV (RFC 4180, integer nanoseconds). */
void tt_an_table_print(FILE *out, const struct tt_an_table *t);
void tt_an_table_csv(FILE *out, const struct tt_an_table *t);

/* ---- the thread's states (states.c) ---- */

/* Adds the thread's next states (time order, after those given before), their ns
 * less offset_ns on the analysis's clock. Give them before the events they cover: a
 * scope's split is taken when it closes. 0, or -1 when out of memory. */
int tt_an_thread_states(struct tt_an_thread *th, const struct tt_sched_state *states,
			size_t n, int64_t offset_ns);
/* A SCHED section's states, as tt_an_thread_states adds them, with what its head says
 * (common.h: tt_sched_head). */
int tt_an_thread_sched_section(struct tt_an_thread *th, uint64_t lost, int64_t since_ns,
			       const struct tt_sched_state *states, size_t n, int64_t offset_ns);

/* Adds the thread's next counters' readings (time order, after those given before),
 * their ns less offset_ns on the analysis's clock; `flags`: their section's (format.h:
 * enum tt_schedstat_flags). Give them before the events they cover. 0, or -1 when out
 * of memory. */
int tt_an_thread_counters(struct tt_an_thread *th, const struct tt_schedstat_sample *readings,
			  size_t n, uint32_t flags, int64_t offset_ns);
/* The tick its CPU time moves in (TT_SCHEDSTAT_TICK_STEPS), as its run's MACHINE section
 * says it (TT_MACHINE_TICK, _TICK_EACH; none: TT_SCHEDSTAT_TICK_NS). */
void tt_an_thread_tick(struct tt_an_thread *th, const struct tt_machine_info *machine);

/* ---- from raw records (the runtime) ---- */

#define TT_AN_FEED_HELD 32 /* scopes a feed holds back (below), at most */

/* Feeds one thread's records, in recorded order and in as many pieces as they come,
 * into its analysis, as the tools' decoder does: scopes open and close as the
 * scope machine (common.h) says, notes go to the innermost, times that go backwards
 * are held at the last one. */
struct tt_an_feed {
	struct tt_an_thread *th;
	const struct tt_clock *clock; /* a record's time */
	/* The key of the site or function a record made at `tsc` names (NULL: its
		   * address): the runtime tells apart libraries loaded one after the other at
		   * the same address. */
	uint64_t (*key)(uint64_t address, uint64_t tsc);
	unsigned pending;   /* VALUE: skip one; TEXT: collect text_want bytes */
	uint32_t text_want, text_len;
	char text[TT_DESCRIBE_MAX + TT_TEXT_BYTES];
	uint64_t last_tsc;
	int64_t last_ns;
	bool last_ns_stale; /* last_tsc's time not found yet (records passed over) */
	bool started;
	struct tt_scopes scopes; /* (unmatched: ends with no open scope to close) */
	int64_t rules_least;     /* the least of the thresholds table's, once known */
	bool rules_least_known;
	/* Without a profile, the scopes opened inside the analysis's innermost that it has
	 * not been told of yet (feed.c): each one is told only once it must be (it lasts
	 * long enough for a threshold, a note goes to it, an end does not match it). */
	struct tt_an_held {
		uint64_t word, tsc; /* its record */
		uint64_t at;        /* its time in ticks, held monotonic */
	} held[TT_AN_FEED_HELD];
	uint32_t nheld;
	uint64_t least_ticks; /* the fewest ticks a held scope lasts to be a spike, once known */
	bool least_known;
};

int tt_an_feed_records(struct tt_an_feed *f, const struct tt_record *r, size_t n);
/* Closes what is still open at the last time seen, or at `exit_ns` (the thread's exit,
 * INT64_MIN: not known) where later: a thread that left by pthread_exit or was
 * cancelled was in its scopes until then, as the decoder closes them. Where the
 * thread's events after its records were dropped (its buffer used up), at the last
 * time seen, each spike among them saying it may have ended up to `dropped_until`
 * (its exit, or the end of the recording; INT64_MIN: none dropped). */
int tt_an_feed_finish(struct tt_an_feed *f, int64_t exit_ns, int64_t dropped_until);
void tt_an_feed_free(struct tt_an_feed *f);

#endif
