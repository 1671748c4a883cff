/* A thread's states (format.h: TT_SEC_SCHED), the spike detector's second input:
 * how a scope's time split between running, waiting for a CPU (preempted) and
 * waiting for something else (blocked). The thread runs at every event it records,
 * so a scope begins and ends on CPU; between, the states say. */
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

int tt_an_thread_states(struct tt_an_thread *th, const struct tt_sched_state *states,
			size_t n, int64_t offset_ns)
{
	struct tt_an_states *h = &th->states;
	h->known = true;
	if (h->from > h->n / 2) { /* what no open scope needs any more */
		memmove(h->at, h->at + h->from, (h->n - h->from) * sizeof *h->at);
		h->n -= h->from;
		h->from = 0;
	}
	if (h->n + n > h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 256;
		while (cap < h->n + n)
			cap *= 2;
		struct tt_sched_state *grown = realloc(h->at, cap * sizeof *grown);
		if (!grown) {
			th->an->oom = true;
			return -1;
		}
		h->at = grown;
		h->cap = cap;
	}
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

void tt_an_states_forget_before(struct tt_an_thread *th, int64_t ns)
{
	struct tt_an_states *h = &th->states;
	size_t i = tt_an_states_after(h, ns);
	/* keep the state in force at ns */
	if (i > h->from)
		h->from = i - 1;
}

void tt_an_states_free(struct tt_an_states *h)
{
	free(h->at);
	*h = (struct tt_an_states){.last_ns = INT64_MIN};
}
