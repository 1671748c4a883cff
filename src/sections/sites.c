/* The call sites and functions that records name, each once: sets of their
 * addresses (tagged with the generation of a library unloaded since, when the writer
 * tells them apart: Linux's retired.c), and the SITES, ARG_NAMES and FUNCS sections
 * that describe them. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sections/sections.h"

/* 1: added, 0: already there, -ENOMEM */
int tt__site_set_add(struct tt__site_set *set, uint64_t address)
{
	if (2 * (set->count + 1) > set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 256;
		uint64_t *slots = calloc(cap, sizeof *slots);
		if (!slots)
			return -ENOMEM;
		for (size_t i = 0; i < set->cap; i++) {
			uint64_t a = set->slots[i];
			if (!a)
				continue;
			size_t h = (a * TT__HASH_MULT) >> 40;
			while (slots[h & (cap - 1)])
				h++;
			slots[h & (cap - 1)] = a;
		}
		free(set->slots);
		set->slots = slots;
		set->cap = cap;
	}
	size_t h = (address * TT__HASH_MULT) >> 40;
	for (;; h++) {
		uint64_t *slot = &set->slots[h & (set->cap - 1)];
		if (*slot == address)
			return 0;
		if (!*slot) {
			*slot = address;
			set->count++;
			set->funcs += (address & TT__FUNC_TAG) != 0;
			return 1;
		}
	}
}

int tt__site_set_add_fresh(struct tt__site_set *set, struct tt__site_set *fresh, uint64_t address)
{
	int added = tt__site_set_add(set, address);
	return added > 0 && fresh ? tt__site_set_add(fresh, address) : added;
}

void tt__site_set_clear(struct tt__site_set *set)
{
	size_t seen = set->retired_seen;
	free(set->slots);
	*set = (struct tt__site_set){.retired_seen = seen};
}

const struct tt_record *tt__sites_add(struct tt__site_set *set, struct tt__site_set *fresh,
				      const struct tt_record *begin, const struct tt_record *end,
				      int stop_unwritten, tt__generation_fn generation)
{
	/* The drain thread runs this on every record a program makes: a table says which
	 * kinds name what, and a run of one site is looked up once. */
#define TT__NAMES(k) \
	[k] = TT_RECORD_HAS_SITE(k) ? 1 : (k) == TT_REC_FUNC_ENTER ? 1 | TT__FUNC_TAG : 0
#define TT__NAMES8(k) TT__NAMES(k), TT__NAMES(k + 1), TT__NAMES(k + 2), TT__NAMES(k + 3), \
	TT__NAMES(k + 4), TT__NAMES(k + 5), TT__NAMES(k + 6), TT__NAMES(k + 7)
	static const uint64_t names[256] = {TT__NAMES8(0), TT__NAMES8(8), TT__NAMES8(16),
					    TT__NAMES8(24)};
	_Static_assert(TT_REC_FUNC_ENTER < 32 && TT_REC_FRAME < 32, "kinds named above");
#undef TT__NAMES8
#undef TT__NAMES
	uint64_t last = 0;
	size_t seen = set->retired_seen;
	if (fresh)
		fresh->retired_seen = seen;
	for (const struct tt_record *r = begin; r < end; r++) {
		uint64_t word = __atomic_load_n(&r->word, __ATOMIC_ACQUIRE);
		if (!word && stop_unwritten)
			return r;
		uint64_t named = names[TT_RECORD_KIND(word) & 0xff];
		if (!named)
			continue;
		uint64_t entry = TT_RECORD_PAYLOAD(word) | (named & TT__FUNC_TAG);
		/* after a dlclose: whose the address was when the record was made */
		if (__builtin_expect(seen != 0, 0))
			entry |= (uint64_t)generation(TT_RECORD_PAYLOAD(word), r->tsc, seen)
				 << TT__GEN_SHIFT;
		if (!entry || entry == last)
			continue;
		last = entry;
		if (tt__site_set_add_fresh(set, fresh, last) < 0)
			return NULL;
	}
	return end;
}

static uint32_t tt__strlen32(const char *s)
{
	return s ? (uint32_t)strnlen(s, UINT32_MAX / 4) : 0;
}

/* Where the sections are told what they describe. */
struct tt__site_view {
	size_t gen;
	tt__site_fn describe;
	void *arg;
};

/* The descriptor of a set's entry of the generation viewed, or NULL for an empty slot,
 * a function or another generation. */
static const struct tt_callsite *tt__site_at(uint64_t entry, const struct tt__site_view *v)
{
	return entry && !(entry & TT__FUNC_TAG) && TT__GEN(entry) == v->gen ?
		       v->describe(entry & TT__ADDRESS_MASK, v->arg) : NULL;
}

/* A site's argument name (TT_BEGIN_NAMED_ARG), or NULL. */
const char *tt__arg_name(const struct tt_callsite *site)
{
	return site && (site->flags & TT__SITE_ARG_NAME) ? site->arg_name : NULL;
}

/* A site's argument as ARG_NAMES tells it: its name ("" for "arg") and type; false
 * when there is nothing to tell (an unnamed, unsigned argument, or none). */
static bool tt__arg_info(const struct tt_callsite *site, const char **name, uint32_t *flags)
{
	*name = tt__arg_name(site);
	*flags = site && (site->flags & TT__SITE_SIGNED_ARG) ? TT_ARG_SIGNED : 0;
	if (!*name)
		*name = "";
	return **name || *flags;
}

/* ARG_NAMES, for the sites whose argument has a name or a signed type. */
static void tt__out_arg_names(struct tt__out *out, const struct tt__site_set *set,
			      const struct tt__site_view *v, uint64_t until)
{
	uint64_t size = sizeof(uint64_t), count = 0;
	const char *name;
	uint32_t flags;
	for (size_t i = 0; i < set->cap; i++) {
		if (tt__arg_info(tt__site_at(set->slots[i], v), &name, &flags)) {
			size += sizeof(struct tt_arg_name_info) + tt__strlen32(name);
			count++;
		}
	}
	if (!count)
		return;
	tt__out_section_until(out, TT_SEC_ARG_NAMES, size, until);
	tt__out(out, &count, sizeof count);
	for (size_t i = 0; i < set->cap; i++) {
		if (!tt__arg_info(tt__site_at(set->slots[i], v), &name, &flags))
			continue;
		struct tt_arg_name_info info = {.address = set->slots[i] & TT__ADDRESS_MASK,
						.name_len = tt__strlen32(name), .flags = flags};
		tt__out(out, &info, sizeof info);
		tt__out(out, name, info.name_len);
	}
	tt__out_pad(out, size);
}

/* The FUNCS section of one generation: the functions' addresses (tagged in the set),
 * named offline from MODULES. */
static void tt__out_funcs(struct tt__out *out, const struct tt__site_set *set, size_t gen,
			  uint64_t until)
{
	uint64_t count = 0;
	for (size_t i = 0; i < set->cap; i++)
		count += (set->slots[i] & TT__FUNC_TAG) && TT__GEN(set->slots[i]) == gen;
	if (!count)
		return;
	uint64_t size = sizeof(uint64_t) * (1 + count);
	tt__out_section_until(out, TT_SEC_FUNCS, size, until);
	tt__out(out, &count, sizeof count);
	for (size_t i = 0; i < set->cap; i++) {
		uint64_t address = set->slots[i] & TT__ADDRESS_MASK;
		if ((set->slots[i] & TT__FUNC_TAG) && TT__GEN(set->slots[i]) == gen)
			tt__out(out, &address, sizeof address);
	}
	tt__out_pad(out, size);
}

void tt__out_site_sections(struct tt__out *out, const struct tt__site_set *set, size_t gen,
			   uint64_t until, tt__site_fn describe, void *arg)
{
	const struct tt__site_view view = {gen, describe, arg}, *v = &view;
	char name[TT__NAME_MAX];
	uint64_t size = sizeof(uint64_t), count = 0;
	for (size_t i = 0; i < set->cap; i++) {
		const struct tt_callsite *site = tt__site_at(set->slots[i], v);
		if (site) {
			size += sizeof(struct tt_site_info) +
				tt__strlen32(tt_site_name(site, name, sizeof name)) +
				tt__strlen32(site->file) + tt__strlen32(site->func);
			count++;
		}
	}
	if (count || !v->gen) {
		tt__out_section_until(out, TT_SEC_SITES, size, until);
		tt__out(out, &count, sizeof count);
		for (size_t i = 0; i < set->cap; i++) {
			const struct tt_callsite *site = tt__site_at(set->slots[i], v);
			if (!site)
				continue;
			const char *shown = tt_site_name(site, name, sizeof name);
			struct tt_site_info info = {
				.address = set->slots[i] & TT__ADDRESS_MASK,
				.line = site->line,
				.name_len = tt__strlen32(shown),
				.file_len = tt__strlen32(site->file),
				.func_len = tt__strlen32(site->func),
			};
			tt__out(out, &info, sizeof info);
			tt__out(out, shown, info.name_len);
			tt__out(out, site->file, info.file_len);
			tt__out(out, site->func, info.func_len);
		}
		tt__out_pad(out, size);
	}
	tt__out_arg_names(out, set, v, until);
	tt__out_funcs(out, set, v->gen, until);
}
