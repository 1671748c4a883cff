/* The scope machine (common.h): how a thread's records open and close scopes, for the
 * tools' decoder and the runtime's analysis alike. */
#include <stdlib.h>

#include "common.h"

int tt__scopes_open_rare(struct tt_scopes *s, uint64_t key, uint64_t offset)
{
	if (s->too_deep || (s->max_depth && s->depth == s->max_depth)) {
		if (s->too_deep_total++ == 0)
			s->first_too_deep = offset;
		s->too_deep++;
		return 0;
	}
	if (s->depth == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 64;
		uint64_t *keys = realloc(s->keys, cap * sizeof *keys);
		if (!keys)
			return -1;
		s->keys = keys;
		s->cap = cap;
	}
	s->keys[s->depth++] = key;
	return 1;
}

int tt_scopes_unbegun(struct tt_scopes *s, uint64_t key, uint64_t offset)
{
	s->unbegun++;
	return tt_scopes_open(s, key, offset);
}

/* An end while scopes left out are open closes the innermost of them: true when it
 * did. */
static bool tt_scopes_end_left_out(struct tt_scopes *s)
{
	if (!s->too_deep)
		return false;
	s->too_deep--;
	return true;
}

static void tt_scopes_unmatched(struct tt_scopes *s, uint64_t offset)
{
	if (s->unmatched++ == 0)
		s->first_unmatched = offset;
}

bool tt__scopes_end_rare(struct tt_scopes *s, uint64_t offset)
{
	if (tt_scopes_end_left_out(s))
		return false;
	if (s->depth == 0) {
		tt_scopes_unmatched(s, offset);
		return false;
	}
	s->depth--;
	return true;
}

uint32_t tt_scopes_func_exit(struct tt_scopes *s, uint64_t key, uint64_t offset, uint64_t tsc)
{
	if (tt_scopes_end_left_out(s))
		return 0;
	uint32_t i = s->depth;
	while (i > 0 && s->keys[i - 1] != key && s->keys[i - 1] != TT_KEY_UNBEGUN)
		i--;
	if (i == 0) {
		/* recording began inside the function, or its entry was lost */
		if (s->unmatched_exits++ == 0) {
			s->first_unmatched_exit = offset;
			s->unmatched_exit_key = key;
			s->unmatched_exit_tsc = tsc;
		}
		tt_scopes_unmatched(s, offset);
		return 0;
	}
	uint32_t closes = s->depth - (i - 1);
	s->depth = i - 1;
	return closes;
}

uint32_t tt_scopes_gap(struct tt_scopes *s, uint32_t closes)
{
	uint32_t n = 0;
	/* (scopes are left out only while max_depth of them are open: depth > n holds
	 * until those are closed) */
	for (; closes > 0 && s->depth > n; closes--) {
		s->gap_closed++;
		if (!tt_scopes_end_left_out(s))
			n++;
	}
	s->depth -= n;
	return n;
}

uint32_t tt_scopes_finish(struct tt_scopes *s)
{
	uint32_t open = s->depth;
	s->too_deep = 0;
	s->depth = 0;
	return open;
}

void tt_scopes_free(struct tt_scopes *s)
{
	free(s->keys);
	s->keys = NULL;
	s->depth = s->cap = 0;
}

int tt_unbegun_scan(struct tt_unbegun_scan *u, const struct tt_record *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned kind = TT_RECORD_KIND(r[i].word);
		if (TT_RECORD_CLOSES(kind) && u->depth > 0) {
			u->depth--;
		} else if (TT_RECORD_CLOSES(kind) && u->n < u->max) {
			if (u->n == u->cap) {
				uint32_t cap = u->cap ? 2 * u->cap : 16;
				uint64_t *keys = realloc(u->keys, cap * sizeof *keys);
				if (!keys)
					return -1;
				u->keys = keys;
				u->cap = cap;
			}
			u->keys[u->n++] = kind == TT_REC_FUNC_EXIT ? TT_RECORD_PAYLOAD(r[i].word) : 0;
		}
		u->depth += TT_RECORD_OPENS(kind);
	}
	return 0;
}
