/* Threads that nobody named carry the process's name (Linux gives a new thread its
 * creator's), so a pool's workers all look like the main thread. Such a thread is
 * named after what it ran first: its outermost scope or function, which for code
 * built with -finstrument-functions is the thread's start routine ("zstd:
 * POOL_thread"). The main thread (tid = pid) and named threads keep their names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"

static bool tt_str_eq(struct tt_str a, struct tt_str b)
{
	return a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0;
}

/* The name of the site or function `r` opens into buf; its length, or 0. */
static size_t tt_opener_name(const struct tt_trace *t, const struct tt_thread *th,
			     const struct tt_record *r, char *buf, size_t cap)
{
	const struct tt_site *site = tt_file_site(th->file, TT_RECORD_PAYLOAD(r->word), r->tsc);
	if (site)
		return (size_t)snprintf(buf, cap, "%.*s", (int)site->name.len, site->name.ptr);
	return TT_RECORD_KIND(r->word) == TT_REC_FUNC_ENTER ?
		       tt_trace_func_name(t, th->file, TT_RECORD_PAYLOAD(r->word), buf, cap) : 0;
}

/* The name of the thread's first scope or function into buf; its length, or 0: the
 * runtime's where it kept it (a file whose records begin later, a ring's, a snapshot's,
 * names the thread as the run's others do), else the first of its records. */
static size_t tt_first_scope(const struct tt_trace *t, const struct tt_thread *th, char *buf,
			     size_t cap)
{
	if (th->opener.word)
		return tt_opener_name(t, th, &th->opener, buf, cap);
	size_t left = TT_FIRST_OPENER_RECORDS;
	for (size_t s = 0; s < th->nsections && left; s++) {
		const struct tt_record *records = tt_section_records(th, s);
		const struct tt_record *r = tt_first_opener(records, records + th->sections[s].count, &left);
		if (r)
			return tt_opener_name(t, th, r, buf, cap);
	}
	return 0;
}

int tt_trace_name_threads(struct tt_trace *t)
{
	for (size_t i = 0; i < t->nfiles; i++) {
		struct tt_file *f = &t->files[i];
		for (size_t k = 0; k < f->nthreads; k++) {
			struct tt_thread *th = &f->threads[k];
			char scope[sizeof(((struct tt_made_name *)0)->text)];
			if (th->tid == f->process.pid || !tt_str_eq(th->name, f->process.name) ||
			    tt_first_scope(t, th, scope, sizeof(scope)) == 0)
				continue;
			struct tt_made_name *made = malloc(sizeof(*made));
			if (!made)
				return tt_error("out of memory");
			int n = snprintf(made->text, sizeof(made->text), "%.*s: %s", (int)th->name.len,
					 th->name.ptr, scope);
			made->next = f->made_names;
			f->made_names = made;
			th->name = (struct tt_str){made->text,
						   (uint32_t)(n < (int)sizeof(made->text) ? n : (int)sizeof(made->text) - 1)};
		}
	}
	return 0;
}
