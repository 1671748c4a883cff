/* Flow linking: the flows of a window held back, sorted by time over all threads,
 * and each given its arrow (tt_event.link) from the latest FLOW_OUT of its process
 * with the same id, so an id passed on through several hops draws each hop; where
 * its process has none waiting, from the latest of any other process (a message
 * between processes, or machines, that carried its id along). */
#include <stdlib.h>

#include "decode_internal.h"

/* Flows of a window, in time order over all threads: the DevTools engine pairs flow
 * events in file order, so every FLOW_OUT must reach the sinks before its FLOW_IN. */
static int tt_flow_cmp(const void *a, const void *b)
{
	const struct tt_event *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->thread->id != y->thread->id)
		return x->thread->id < y->thread->id ? -1 : 1;
	return (x->offset > y->offset) - (x->offset < y->offset);
}

static size_t tt_link_home(const struct tt_decoder *d, const struct tt_file *f, uint64_t id)
{
	uint64_t h = (id ^ (uint64_t)(uintptr_t)f) * UINT64_C(0x9E3779B97F4A7C15);
	return (size_t)(h >> 32) & (d->links_cap - 1);
}

static size_t tt_link_slot(const struct tt_decoder *d, const struct tt_file *f, uint64_t id)
{
	size_t i = tt_link_home(d, f, id);
	while (d->links[i].link && !(d->links[i].id == id && d->links[i].file == f))
		i = (i + 1) & (d->links_cap - 1);
	return i;
}

static int tt_links_grow(struct tt_decoder *d)
{
	struct tt_flow_link *old = d->links;
	size_t old_cap = d->links_cap;
	d->links_cap = old_cap ? 2 * old_cap : 64;
	d->links = calloc(d->links_cap, sizeof(*d->links));
	if (!d->links) {
		d->links = old;
		d->links_cap = old_cap;
		return tt_error("out of memory for %zu flows in flight", d->nlinks);
	}
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].link)
			d->links[tt_link_slot(d, old[i].file, old[i].id)] = old[i];
	free(old);
	return 0;
}

/* Empties slot i, moving back the entries after it that probing would not find. */
static void tt_link_erase(struct tt_decoder *d, size_t i)
{
	size_t mask = d->links_cap - 1;
	d->links[i].link = 0;
	d->nlinks--;
	for (size_t j = (i + 1) & mask; d->links[j].link; j = (j + 1) & mask) {
		size_t home = tt_link_home(d, d->links[j].file, d->links[j].id);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			d->links[i] = d->links[j];
			d->links[j].link = 0;
			i = j;
		}
	}
}

static void tt_link_put(struct tt_decoder *d, struct tt_flow_link l)
{
	struct tt_flow_link *at = &d->links[tt_link_slot(d, l.file, l.id)];
	if (!at->link)
		d->nlinks++;
	*at = l;
}

/* The FLOW_OUT waiting under (key, id), taken into *l; false when none waits. */
static bool tt_link_take(struct tt_decoder *d, const struct tt_file *key, uint64_t id,
			 struct tt_flow_link *l)
{
	size_t i = tt_link_slot(d, key, id);
	*l = d->links[i];
	if (l->link)
		tt_link_erase(d, i);
	return l->link != 0;
}

/* (key, id) no longer waits for the FLOW_IN that ended `link`. */
static void tt_link_drop(struct tt_decoder *d, const struct tt_file *key, uint64_t id, uint64_t link)
{
	size_t i = tt_link_slot(d, key, id);
	if (d->links[i].link == link)
		tt_link_erase(d, i);
}

/* Gives a flow its link (tt_event.link), in time order. */
static int tt_flow_link(struct tt_decoder *d, struct tt_event *e)
{
	if ((d->nlinks + 2) * 2 > d->links_cap && tt_links_grow(d) < 0)
		return -1;
	const struct tt_file *f = e->thread->file;
	struct tt_flow_link l;
	if (e->flags & TT_EV_FLOW_OUT) {
		e->link = ++d->last_link;
		tt_link_put(d, (struct tt_flow_link){f, e->value, e->link, f});
		tt_link_put(d, (struct tt_flow_link){NULL, e->value, e->link, f});
	} else if (tt_link_take(d, f, e->value, &l)) {
		e->link = l.link; /* its own process's */
		tt_link_drop(d, NULL, e->value, l.link);
	} else if (tt_link_take(d, NULL, e->value, &l)) {
		e->link = l.link; /* another process's */
		tt_link_drop(d, l.sender, e->value, l.link);
	} else {
		e->link = ++d->last_link; /* no FLOW_OUT before it: an arrow with no start */
	}
	return 0;
}

int tt_decoder_flush_flows(struct tt_decoder *d)
{
	if (d->nflows) /* (none yet: no array) */
		qsort(d->flows, d->nflows, sizeof(*d->flows), tt_flow_cmp);
	int rc = 0;
	for (size_t i = 0; i < d->nflows && rc == 0; i++)
		if ((rc = tt_flow_link(d, &d->flows[i])) == 0) {
			d->sum.points++;
			rc = tt_dispatch(&d->flow, &d->flows[i]);
		}
	d->nflows = 0;
	return rc;
}

/* A flow is a point in time on its thread, inside its innermost open scope; sinks
 * draw the arrow from there (JSON: a zero-length slice; Perfetto: an instant). */
int tt_decoder_flow(struct tt_decoder *d, struct tt_thread_state *st, const struct tt_thread *t,
		   uint32_t dir, uint64_t id, int64_t ts, uint64_t offset)
{
	if (d->nflows == TT_FLOW_BATCH && tt_decoder_flush_flows(d) < 0)
		return -1;
	/* grown as flows come, doubled up to the batch: a whole batch at once was 7.5 MB for
	 * a run with none */
	if (!tt_grow((void **)&d->flows, &d->flows_cap, d->nflows + 1, sizeof(*d->flows)))
		return tt_error("out of memory for %zu flows in a window", d->nflows + 1);
	d->flows[d->nflows++] = (struct tt_event){
		.thread = t, .ts = ts, .value = id, .depth = st->depth, .flags = dir, .offset = offset,
	};
	return 0;
}
