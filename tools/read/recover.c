/* Recovery of files a run did not finish: a live file's chunks given to their
 * threads in time order, the call sites they use that the run had not described yet,
 * a thread's last event cut in half by a kill, a killed stream's dropped events
 * counted; and the sites the decoder names what no record does with (lost events,
 * scopes begun before they were recorded). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read_internal.h"

/* The first time a run of records holds, for ordering a thread's chunks. */
static uint64_t tt_first_time(const struct tt_events *ev)
{
	for (size_t i = 0; i < ev->count; i++)
		if (tt_record_timed(ev->records[i].word))
			return ev->records[i].tsc;
	return UINT64_MAX;
}

static int tt_events_by_time(const void *a, const void *b)
{
	uint64_t x = tt_first_time(a), y = tt_first_time(b);
	return (x > y) - (x < y);
}

/* A thread whose THREAD section the run had not written yet: who it is, as it
 * wrote that itself when it registered; where it did not (a file from before, or
 * from a runtime that does not, a thread past TT_LIVE_THREADS), a tid no system
 * gives (TT_LIVE_UNKNOWN_TID), each its own, and a name that says it is not known. */
static struct tt_thread *tt_live_thread(struct tt_file *f, uint32_t index, uint64_t at, size_t *cap)
{
	uint32_t pos;
	if (tt_map_get(&f->thread_map, index, &pos))
		return &f->threads[pos];
	struct tt_thread t = {.file = f, .index = index, .offset = at};
	if (f->header.live_threads_at && index < TT_LIVE_THREADS) {
		const struct tt_live_thread *who =
			(const struct tt_live_thread *)(f->data + f->header.live_threads_at) + index;
		t.tid = who->tid;
		t.name = (struct tt_str){who->name, (uint32_t)strnlen(who->name, sizeof who->name)};
	}
	static const char unnamed[] = "(not yet described)";
	if (t.tid && !t.name.len)
		t.name = (struct tt_str){unnamed, sizeof unnamed - 1};
	if (!t.tid) {
		struct tt_made_name *made = malloc(sizeof(*made));
		if (!made) {
			TT_FAIL(f, at, "out of memory for %zu threads", f->nthreads);
			return NULL;
		}
		made->next = f->made_names;
		f->made_names = made;
		int n = snprintf(made->text, sizeof(made->text),
				 "(thread %" PRIu32 ", tid not known, not yet described)", index);
		t.name = (struct tt_str){made->text, (uint32_t)n};
		t.tid = TT_LIVE_UNKNOWN_TID(index);
	}
	if (f->nthreads >= UINT32_MAX / 2 || tt_reserve(&f->threads, cap, f->nthreads, sizeof(t)) < 0 ||
	    tt_map_put(&f->thread_map, index, (uint32_t)f->nthreads) < 0) {
		TT_FAIL(f, at, "out of memory for %zu threads", f->nthreads);
		return NULL;
	}
	f->threads[f->nthreads++] = t;
	return &f->threads[f->nthreads - 1];
}

/* How many records after its first an event of this kind and payload takes. */
static uint64_t tt_records_after(unsigned kind, uint64_t payload)
{
	if (TT_RECORD_HAS_VALUE(kind))
		return 1;
	return kind == TT_REC_DESCRIBE && payload <= TT_DESCRIBE_MAX ? TT_TEXT_RECORDS(payload) : 0;
}

/* A chunk of a live file whose run still writes it, copied as it is now: the mapping
 * shows the file as the run goes on, and the decoder, which reads the chunk later, saw
 * a ring's chunk recycled since (zeroed, or another stretch of its thread's records)
 * where a two-record event had been whole. Its records end before the first not yet
 * written (or zeroed as it was recycled); a chunk recycled while it was copied (its
 * head changed but for the successor a chunk being written gets) is left out: a ring's
 * oldest records, overwritten. NULL: no memory. */
static const struct tt_record *tt_live_copy_chunk(struct tt_file *f, uint64_t off,
						  const struct tt_live_chunk *h, size_t *count)
{
	struct tt_live_copy *copy = malloc(sizeof(*copy) + *count * sizeof(struct tt_record));
	if (!copy) {
		TT_FAIL(f, off, "out of memory for a copy of a live chunk");
		return NULL;
	}
	memcpy(copy->records, f->data + off + sizeof(*h), *count * sizeof(struct tt_record));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	struct tt_live_chunk now;
	memcpy(&now, f->data + off, sizeof(now));
	size_t n = 0;
	if (now.size && now.thread_index == h->thread_index && (!h->next || now.next == h->next))
		while (n < *count && copy->records[n].word != 0)
			n++;
	*count = n;
	copy->next = f->live_copies;
	f->live_copies = copy;
	return copy->records;
}

/* An event cut short, at record `first` of `ev`, left out: counted as dropped with the
 * `removed` records of it (and after it) that go. */
static void tt_count_cut_event(struct tt_file *f, struct tt_thread *t, const struct tt_events *ev, size_t first,
			       uint64_t removed)
{
	if (!t->cut_events++)
		t->cut_offset = tt_record_offset(ev, first);
	t->dropped_total++;
	f->dropped++;
	t->records -= removed;
	f->records -= removed;
}

/* Where a running live file's thread's chunk ends inside an event (the chunk read
 * while its thread wrote that event, or recycled as it was read) and the next chunk
 * does not go on with the rest of it: that event is left out and counted as dropped,
 * as the last one a killed run cut (tt_file_trim_cut_event). */
static void tt_live_trim_between(struct tt_file *f, struct tt_thread *t)
{
	for (size_t s = 0; s + 1 < t->nsections; s++) {
		struct tt_events *ev = &t->sections[s];
		const struct tt_record *r = ev->records, *next = t->sections[s + 1].records;
		size_t i = ev->count, behind = 0;
		while (i > 0 && behind <= TT_TEXT_RECORDS(TT_DESCRIBE_MAX) &&
		       (TT_RECORD_KIND(r[i - 1].word) == TT_REC_VALUE ||
			TT_RECORD_KIND(r[i - 1].word) == TT_REC_TEXT))
			i--, behind++;
		if (i == 0 || TT_RECORD_KIND(r[i - 1].word) == TT_REC_PAD)
			continue;
		uint64_t after = tt_records_after(TT_RECORD_KIND(r[i - 1].word), TT_RECORD_PAYLOAD(r[i - 1].word));
		size_t more = 0; /* of the rest, at the next chunk's start */
		while (more + behind < after && more < t->sections[s + 1].count &&
		       (TT_RECORD_KIND(next[more].word) == TT_REC_VALUE ||
			TT_RECORD_KIND(next[more].word) == TT_REC_TEXT))
			more++;
		if (more + behind >= after)
			continue;
		tt_count_cut_event(f, t, ev, i - 1, ev->count - (i - 1));
		ev->count = i - 1;
	}
}

/* Gives each chunk to its thread, in the time order of their first records. */
int tt_file_read_live_chunks(struct tt_file *f)
{
	size_t thread_cap = f->nthreads;
	bool running = tt_file_writer_running(f);
	for (uint64_t off = f->header.live_chunks_at; f->size - off >= TT_LIVE_CHUNK_SIZE;
	     off += TT_LIVE_CHUNK_SIZE) {
		struct tt_live_chunk h;
		memcpy(&h, f->data + off, sizeof(h));
		if (h.size == 0)
			continue; /* never used, or recycled */
		if (h.size < sizeof(h) || h.size > TT_LIVE_CHUNK_SIZE || h.size % sizeof(struct tt_record))
			return TT_FAIL(f, off + offsetof(struct tt_live_chunk, size),
				       "live chunk of %" PRIu32 " %s", h.size, TT_BYTES(h.size));
		const struct tt_record *r = (const struct tt_record *)(f->data + off + sizeof(h));
		size_t count = (h.size - sizeof(h)) / sizeof(*r);
		if (running && !(r = tt_live_copy_chunk(f, off, &h, &count)))
			return -1;
		/* Its thread was recording into it: the records end at the last written. */
		while (h.size == TT_LIVE_CHUNK_SIZE && count > 0 && r[count - 1].word == 0)
			count--;
		if (count == 0)
			continue;
		struct tt_thread *t = tt_live_thread(f, h.thread_index, off, &thread_cap);
		/* (its first time is taken again below, once its chunks are in time order) */
		if (!t || tt_file_add_events(f, t, (struct tt_events){.records = r, .count = count,
								  .offset = off + sizeof(h)},
					r, off) < 0)
			return -1;
	}
	for (size_t i = 0; i < f->nthreads; i++) {
		struct tt_thread *t = &f->threads[i];
		/* a thread described but with no chunk left has no array at all */
		if (t->nsections > 1)
			qsort(t->sections, t->nsections, sizeof(*t->sections), tt_events_by_time);
		if (running)
			tt_live_trim_between(f, t);
		t->events = t->records;
		if (t->nsections && tt_first_time(&t->sections[0]) != UINT64_MAX) {
			t->first_tsc = tt_first_time(&t->sections[0]);
			t->has_first = true;
		}
		/* A ring's thread may have wrapped since it was described. */
		if (f->header.flags & TT_FILE_RING)
			t->flags |= TT_THREAD_WRAPPED;
	}
	tt_file_release(NULL, f, f->header.live_chunks_at, f->size);
	return 0;
}

/* Call sites the records of a live file use that the run had not described yet:
 * named by their address. */
int tt_file_name_unknown_sites(struct tt_file *f)
{
	size_t cap = f->nsites;
	for (size_t i = 0; i < f->nthreads; i++) {
		const struct tt_thread *t = &f->threads[i];
		for (size_t k = 0; k < t->nsections; k++) {
			const struct tt_events *ev = &t->sections[k];
			const struct tt_record *r = tt_section_records(t, k);
			for (size_t j = 0; j < ev->count; j++) {
				uint64_t word = r[j].word, address = TT_RECORD_PAYLOAD(word);
				uint64_t tsc = r[j].tsc;
				if (!TT_RECORD_HAS_SITE(TT_RECORD_KIND(word)) || tt_file_site(f, address, tsc))
					continue;
				/* of the library that held the address then */
				const struct tt_module *m = tt_file_module(f, address, tsc);
				struct tt_made_name *made = malloc(sizeof(*made));
				if (!made)
					return TT_FAIL(f, ev->offset, "out of memory for %zu sites", f->nsites);
				made->next = f->made_names;
				f->made_names = made;
				int n = snprintf(made->text, sizeof(made->text), "(site %#" PRIx64 ", not yet described)",
						 address);
				struct tt_site s = {
					.address = address,
					.name = {made->text, (uint32_t)n},
					.undescribed = true,
					.until = m ? m->until : UINT64_MAX,
				};
				/* (a description of that span that does not hold this record:
				 * the file is damaged, and the decoder says so) */
				if (!tt_file_site_until(f, address, s.until) &&
				    tt_file_add_site(f, &s, &cap, tt_record_offset(ev, j)) < 0)
					return -1;
			}
		}
	}
	return 0;
}

/* The sites for what the decoder shows that no record names, where it may be needed:
 * lost events, scopes begun before a ring's window or in a run of lost events. */
int tt_file_add_decoder_sites(struct tt_file *f)
{
	bool wrapped = false;
	for (size_t i = 0; i < f->nthreads; i++)
		wrapped |= (f->threads[i].flags & TT_THREAD_WRAPPED) != 0;
	if (!f->dropped && !wrapped && !(f->header.flags & (TT_FILE_STREAMED | TT_FILE_LIVE)))
		return 0;
	static const struct {
		const char *name;
		uint64_t address; /* above any payload: no record names it */
	} made[] = {{"ticktrace: events dropped", UINT64_MAX}, {"(begun before it was recorded)", UINT64_MAX - 1}};
	struct tt_site *sites = realloc(f->sites, (f->nsites + 2) * sizeof(*sites));
	if (!sites)
		return tt_error("%s: out of memory for its sites", f->path);
	f->sites = sites;
	for (size_t i = 0; i < 2; i++)
		f->sites[f->nsites++] = (struct tt_site){
			.address = made[i].address,
			.name = {made[i].name, (uint32_t)strlen(made[i].name)},
			.file = {"ticktrace", 9},
			.until = UINT64_MAX,
		};
	f->gap_site = &f->sites[f->nsites - 2];
	f->unbegun_site = &f->sites[f->nsites - 1];
	return 0;
}

/* A file cut short (a run killed, or still writing) may end a thread inside its last
 * event: its first record written, the VALUE or TEXT records after it not yet; so may a
 * dump that read a thread while it wrote that event. That event is left out and
 * counted as dropped; the records before it are whole. */
void tt_file_trim_cut_event(struct tt_file *f, struct tt_thread *t)
{
	/* Back over the records that continue an event, to the record that begins it. */
	uint64_t behind = 0;
	for (size_t s = t->nsections; s-- > 0;) {
		const struct tt_events *ev = &t->sections[s];
		const struct tt_record *r = tt_section_records(t, s);
		for (size_t i = ev->count; i-- > 0;) {
			unsigned kind = TT_RECORD_KIND(r[i].word);
			if (kind == TT_REC_VALUE || kind == TT_REC_TEXT) {
				if (++behind > TT_TEXT_RECORDS(TT_DESCRIBE_MAX))
					return; /* not a cut event: the decoder says what is wrong */
				continue;
			}
			if (kind == TT_REC_PAD || tt_records_after(kind, TT_RECORD_PAYLOAD(r[i].word)) <= behind)
				return;
			/* Cut: drop it and what of it was written. */
			tt_count_cut_event(f, t, ev, i, behind + 1);
			t->sections[s].count = i;
			t->nsections = s + (i > 0);
			if (f->header.flags & TT_FILE_LIVE)
				t->events = t->records;
			if (!t->records)
				t->has_first = false;
			return;
		}
	}
}

/* A stream cut short (the run killed) has no totals for the threads that had not
 * exited: their runs of dropped events (DROPPED records) say how many they lost, as
 * the disk fell behind, at least. */
void tt_file_count_gaps(struct tt_file *f, struct tt_thread *t)
{
	uint64_t lost = 0;
	for (size_t s = 0; s < t->nsections; s++) {
		const struct tt_record *r = tt_section_records(t, s);
		for (size_t i = 0; r && i < t->sections[s].count; i++)
			if (TT_RECORD_KIND(r[i].word) == TT_REC_DROPPED)
				lost += TT_RECORD_PAYLOAD(r[i].word);
	}
	if (lost <= t->dropped_total)
		return;
	t->dropped[TT_DROP_BEHIND] += lost - t->dropped_total;
	f->dropped += lost - t->dropped_total;
	t->dropped_total = lost;
}
