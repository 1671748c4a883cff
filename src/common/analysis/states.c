/* A thread's states (format.h: TT_SEC_SCHED), the spike detector's second input:
 * how a scope's time split between running, waiting for a CPU (preempted) and
 * waiting for something else (blocked). The thread runs at every event it records,
 * so a scope begins and ends on CPU; between, the states say. */
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

/* Room for `more` items after the n of *at (items of `size` bytes), those before
 * `*from` (no open scope needs them any more) let go first once they are half: 0, or
 * -1 with an->oom set. */
static int tt_an_room(struct tt_an *an, void **at, size_t *from, size_t *n, size_t *cap, size_t more,
		      size_t size)
{
	if (*from > *n / 2) {
		memmove(*at, (char *)*at + *from * size, (*n - *from) * size);
		*n -= *from;
		*from = 0;
	}
	if (*n + more <= *cap)
		return 0;
	size_t grown_cap = *cap ? 2 * *cap : 256;
	while (grown_cap < *n + more)
		grown_cap *= 2;
	void *grown = realloc(*at, grown_cap * size);
	if (!grown) {
		an->oom = true;
		return -1;
	}
	*at = grown;
	*cap = grown_cap;
	return 0;
}

int tt_an_thread_states(struct tt_an_thread *th, const struct tt_sched_state *states,
			size_t n, int64_t offset_ns)
{
	struct tt_an_states *h = &th->states;
	h->known = true;
	if (tt_an_room(th->an, (void **)&h->at, &h->from, &h->n, &h->cap, n, sizeof *h->at) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct tt_sched_state s = states[i];
		if (s.ns != INT64_MIN) /* (not known from the very start) */
			s.ns -= offset_ns;
		if (h->n && s.ns < h->at[h->n - 1].ns) /* never from the kernel */
			s.ns = h->at[h->n - 1].ns;
		h->at[h->n++] = s;
	}
	return 0;
}

int tt_an_thread_sched_section(struct tt_an_thread *th, uint64_t lost, int64_t since_ns,
			       const struct tt_sched_state *states, size_t n, int64_t offset_ns)
{
	struct tt_sched_state head[2];
	size_t k = tt_sched_head(&th->states.last_ns, lost, since_ns, states, n, head);
	if (tt_an_thread_states(th, head, k, offset_ns) < 0)
		return -1;
	return tt_an_thread_states(th, states, n, offset_ns);
}

/* The first state after `ns` (h->n: none). */
static size_t tt_an_states_after(const struct tt_an_states *h, int64_t ns)
{
	size_t lo = h->from, hi = h->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h->at[mid].ns <= ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool tt_an_split(const struct tt_an_thread *th, int64_t start, int64_t end,
		 struct tt_an_split *split)
{
	const struct tt_an_states *h = &th->states;
	*split = (struct tt_an_split){0};
	if (!h->known)
		return false;
	size_t i = tt_an_states_after(h, start);
	/* (before the first state: not known) */
	uint32_t what = i > h->from ? h->at[i - 1].what : TT_SCHED_UNKNOWN;
	int64_t at = start;
	for (;; i++) {
		int64_t next = i < h->n && h->at[i].ns < end ? h->at[i].ns : end;
		int64_t *into = what == TT_SCHED_PREEMPTED ? &split->preempted
			      : what == TT_SCHED_BLOCKED   ? &split->blocked
			      : what == TT_SCHED_UNKNOWN   ? &split->unknown
							   : &split->on_cpu;
		*into += next - at;
		at = next;
		if (at >= end)
			break;
		what = h->at[i].what;
	}
	return true;
}

/* ---- the counters: the second source ---- */

int tt_an_thread_counters(struct tt_an_thread *th, const struct tt_schedstat_sample *readings,
			  size_t n, uint32_t flags, int64_t offset_ns)
{
	struct tt_an_counters *c = &th->counters;
	c->steal = flags & TT_SCHEDSTAT_STEAL;
	c->run_only = flags & TT_SCHEDSTAT_RUN_ONLY;
	c->tick_steps = flags & TT_SCHEDSTAT_TICK_STEPS;
	c->switch_count = c->run_only && (flags & TT_SCHEDSTAT_SWITCH_COUNT);
	if (tt_an_room(th->an, (void **)&c->at, &c->from, &c->n, &c->cap, n, sizeof *c->at) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct tt_schedstat_sample r = readings[i];
		r.ns -= offset_ns;
		if (c->n && r.ns < c->at[c->n - 1].ns) /* never from the kernel */
			r.ns = c->at[c->n - 1].ns;
		c->at[c->n++] = r;
	}
	return 0;
}

/* The first reading at or after `ns` (c->n: none). */
static size_t tt_an_counters_from(const struct tt_an_counters *c, int64_t ns)
{
	size_t lo = c->from, hi = c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->at[mid].ns < ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A counter at a moment `x` the thread ran (it recorded an event then), between the
 * readings before and after it: what they allow, and how wide that is. Its CPU time
 * grows at most as fast as the clock, either way. Its wait on a run queue is counted
 * as each wait ends: since the thread ran at x, a wait counted after x began after x
 * (the reading after bounds it), but one counted before x may have begun before the
 * reading before (which bounds nothing of it). Within what they allow, the value is
 * `guess` (the counter's pace inside the spike, carried to its edge), else the middle. */
struct tt_an_estimate {
	int64_t value, width;
};

#define TT_AN_NO_GUESS INT64_MIN

static struct tt_an_estimate tt_an_counter_at(const struct tt_schedstat_sample *lo, int64_t at_lo,
					      const struct tt_schedstat_sample *hi, int64_t at_hi,
					      int64_t x, bool ahead_bound, int64_t guess, int64_t span)
{
	int64_t low = hi ? at_hi - (hi->ns - x) : at_lo, high = hi ? at_hi : INT64_MAX;
	if (lo && low < at_lo)
		low = at_lo;
	if (lo && ahead_bound && at_lo + (x - lo->ns) < high)
		high = at_lo + (x - lo->ns);
	if (!hi && !ahead_bound) /* (no bound above but the spike's length: `span`) */
		high = at_lo + span;
	if (high < low)
		high = low;
	int64_t value = guess == TT_AN_NO_GUESS ? low + (high - low) / 2
		      : guess < low ? low : guess > high ? high : guess;
	return (struct tt_an_estimate){value, high - low};
}

/* A counter at x at the pace it had from reading a to reading b (inside the spike),
 * carried from `from` (a or b); TT_AN_NO_GUESS without two readings. */
static int64_t tt_an_paced(const struct tt_schedstat_sample *a, const struct tt_schedstat_sample *b,
			   size_t field, bool from_b, int64_t x)
{
	if (!a || !b || b->ns <= a->ns)
		return TT_AN_NO_GUESS;
	int64_t va = (int64_t) * (const uint64_t *)((const char *)a + field);
	int64_t vb = (int64_t) * (const uint64_t *)((const char *)b + field);
	double pace = (double)(vb - va) / (double)(b->ns - a->ns);
	return from_b ? vb - (int64_t)(pace * (double)(b->ns - x)) : va + (int64_t)(pace * (double)(x - a->ns));
}

/* How [start, end) split by the counters read around it; false: no reading after its
 * start, or none before its end. */
static bool tt_an_counters_split(const struct tt_an_counters *c, int64_t start, int64_t end,
				 struct tt_an_split *split, struct tt_an_causes *causes,
				 struct tt_an_estimate *cpu)
{
	size_t i = tt_an_counters_from(c, start), k = tt_an_counters_from(c, end);
	const struct tt_schedstat_sample *s_lo = i > c->from ? &c->at[i - 1] : NULL;
	const struct tt_schedstat_sample *s_hi = i < c->n ? &c->at[i] : NULL;
	const struct tt_schedstat_sample *e_lo = k > c->from ? &c->at[k - 1] : NULL;
	const struct tt_schedstat_sample *e_hi = k < c->n ? &c->at[k] : NULL;
	if (!s_hi || !e_lo || (!s_lo && s_hi->ns > end))
		return false;
	/* The pace inside it: from its first reading to the next one (before its end, or
	 * the one after it), back to its start; from the reading before its last to its
	 * last, on to its end. */
	const struct tt_schedstat_sample *s_next = i + 1 < c->n && s_hi->ns < end ? &c->at[i + 1] : NULL;
	const struct tt_schedstat_sample *e_prev = k >= c->from + 2 && e_lo->ns > start ? &c->at[k - 2] : NULL;
#define TT_AN_AT(lo, hi, x, field, ahead_bound, guess)                                           \
	tt_an_counter_at(lo, lo ? (int64_t)lo->field : 0, hi, hi ? (int64_t)hi->field : 0, x, ahead_bound, \
			 guess, end - start)
#define TT_AN_FIELD(field) offsetof(struct tt_schedstat_sample, field)
	struct tt_an_estimate run_s = TT_AN_AT(s_lo, s_hi, start, run_ns, true,
					       tt_an_paced(s_hi, s_next, TT_AN_FIELD(run_ns), false, start));
	struct tt_an_estimate run_e = TT_AN_AT(e_lo, e_hi, end, run_ns, true,
					       tt_an_paced(e_prev, e_lo, TT_AN_FIELD(run_ns), true, end));
	struct tt_an_estimate wait_s = TT_AN_AT(s_lo, s_hi, start, wait_ns, false,
						tt_an_paced(s_hi, s_next, TT_AN_FIELD(wait_ns), false, start));
	struct tt_an_estimate wait_e = TT_AN_AT(e_lo, e_hi, end, wait_ns, false,
						tt_an_paced(e_prev, e_lo, TT_AN_FIELD(wait_ns), true, end));
#undef TT_AN_AT
#undef TT_AN_FIELD
	int64_t dur = end - start;
	int64_t on = run_e.value - run_s.value, pre = wait_e.value - wait_s.value;
	on = on < 0 ? 0 : on > dur ? dur : on;
	*cpu = (struct tt_an_estimate){on, run_s.width + run_e.width};
	if (c->run_only) { /* (off CPU, not told apart: unknown) */
		*split = (struct tt_an_split){on, 0, 0, dur - on};
		causes->error_ns = (run_s.width + run_e.width) / 2 + (c->tick_steps ? TT_SCHEDSTAT_TICK_NS : 0);
		/* Its switches in from the readings inside it (at least) to those around it
		 * (at most). None: it ran at both edges and was never switched out between,
		 * on CPU throughout by the scheduler; what its CPU time lacks, the
		 * hypervisor's or the interrupts'. */
		if (c->switch_count && s_lo && e_hi) {
			causes->switches_counted = true;
			causes->switches_max = e_hi->timeslices - s_lo->timeslices;
			causes->switches_min = s_hi->ns <= e_lo->ns ? e_lo->timeslices - s_hi->timeslices : 0;
			if (!causes->switches_max) {
				*split = (struct tt_an_split){dur, 0, 0, 0};
				causes->stolen_known = true;
				causes->stolen_ns = dur - on;
			}
		}
		return true;
	}
	pre = pre < 0 ? 0 : pre > dur - on ? dur - on : pre;
	*split = (struct tt_an_split){on, pre, dur - on - pre, 0}; /* (the counters cover it all) */
	/* Each half-width bounds its part's error; blocked, the rest, has both parts'. */
	causes->error_ns = (run_s.width + run_e.width + wait_s.width + wait_e.width) / 2;
	/* The faults from the reading nearest its start to the one nearest its end. */
	const struct tt_schedstat_sample *from = !s_lo || (s_hi->ns - start < start - s_lo->ns) ? s_hi : s_lo;
	const struct tt_schedstat_sample *to = !e_hi || (end - e_lo->ns < e_hi->ns - end) ? e_lo : e_hi;
	if (to->ns >= from->ns) {
		causes->faults = true;
		causes->minor_faults = to->minflt - from->minflt;
		causes->major_faults = to->majflt - from->majflt;
	}
	return true;
}

void tt_an_causes(const struct tt_an_thread *th, int64_t start, int64_t end, bool *has_split,
		  struct tt_an_split *split, struct tt_an_causes *causes)
{
	*causes = (struct tt_an_causes){0};
	struct tt_an_split by_counters;
	struct tt_an_causes counted = {0};
	struct tt_an_estimate cpu;
	bool counters = tt_an_counters_split(&th->counters, start, end, &by_counters, &counted, &cpu);
	if (*has_split) {
		causes->from = TT_AN_CAUSES_SWITCHES;
		/* The switches count as on CPU what the hypervisor took; the CPU time not.
		 * (Said where the readings bound it within half the time on CPU.) */
		if (counters && th->counters.steal && cpu.width <= split->on_cpu) {
			int64_t stolen = split->on_cpu - cpu.value;
			causes->stolen_known = true;
			causes->stolen_ns = stolen < 0 ? 0 : stolen > split->on_cpu ? split->on_cpu : stolen;
			causes->error_ns = cpu.width / 2;
		}
	} else if (counters && counted.error_ns < end - start) { /* (else it says nothing) */
		*has_split = true;
		*split = by_counters;
		causes->from = th->counters.run_only ? TT_AN_CAUSES_THREAD_TIMES : TT_AN_CAUSES_SCHEDSTAT;
		causes->error_ns = counted.error_ns;
		causes->switches_counted = counted.switches_counted;
		causes->switches_min = counted.switches_min;
		causes->switches_max = counted.switches_max;
		causes->stolen_known = counted.stolen_known;
		causes->stolen_ns = counted.stolen_ns;
	}
	if (counters) {
		causes->faults = counted.faults;
		causes->minor_faults = counted.minor_faults;
		causes->major_faults = counted.major_faults;
	}
}

bool tt_an_call_split(const struct tt_an_thread *th, int64_t start, int64_t end,
		      struct tt_an_split *split, bool *approximate)
{
	bool has = tt_an_split(th, start, end, split);
	*approximate = false;
	if (has || !th->counters.n)
		return has;
	struct tt_an_causes causes;
	tt_an_causes(th, start, end, &has, split, &causes);
	*approximate = has;
	if (!has) /* (no reading near enough: not covered) */
		*split = (struct tt_an_split){.unknown = end - start};
	return true;
}

const char *tt_an_causes_from_name(enum tt_an_causes_from from)
{
	switch (from) {
	case TT_AN_CAUSES_SWITCHES: return "switches";
	case TT_AN_CAUSES_SCHEDSTAT: return "schedstat";
	case TT_AN_CAUSES_THREAD_TIMES: return "thread-times";
	default: return NULL;
	}
}

void tt_an_states_forget_before(struct tt_an_thread *th, int64_t ns)
{
	struct tt_an_states *h = &th->states;
	size_t i = tt_an_states_after(h, ns);
	/* keep the state in force at ns */
	if (i > h->from)
		h->from = i - 1;
	/* and the reading before ns */
	struct tt_an_counters *c = &th->counters;
	size_t k = tt_an_counters_from(c, ns);
	if (k > c->from)
		c->from = k - 1;
}

void tt_an_states_free(struct tt_an_thread *th)
{
	free(th->states.at);
	th->states = (struct tt_an_states){.last_ns = INT64_MIN};
	free(th->counters.at);
	th->counters = (struct tt_an_counters){0};
}
