/* Names made at run time (TT_SCOPE_DYN and the other _DYN macros, writer/names.c):
 * each name copied once into a
 * call-site descriptor of its own, keyed on the macro's static descriptor and the
 * name's bytes; events then record that descriptor through the ordinary emitters, and
 * the writer describes it like a static one.
 *
 * A lookup takes no lock: an open-addressing table whose entries, once set, never
 * change, published with release stores. A name not seen before is added under the
 * caller's lock, into memory that is never freed, so a descriptor stays valid until
 * the process ends. */
#include <string.h>

#include "common.h"
#include "ticktrace.h"

/* Descriptors live in slabs of this size; the writer asks whether an address lies in
 * one of them. */
#define TT_NAMES_SLAB (1u << 20)
#define TT_NAMES_FIRST_CAP 1024

struct tt_dyn_site {
	struct tt_callsite site; /* first: its address is the records' payload */
	const struct tt_callsite *from; /* the macro's own descriptor */
	uint64_t hash;
	size_t len;    /* of the name as given, or of what is kept of it when cut */
	bool cut;      /* the name was longer than TT_NAME_MAX: "..." follows its len bytes */
	char name[]; /* NUL-terminated copy, then the file's and the function's */
};

struct tt_names_table {
	size_t mask;
	struct tt_dyn_site *entry[];
};

/* Named so when a name cannot be kept (no memory). */
static const struct tt_callsite tt_names_lost = {"(name not kept: no memory)", "", "", 0, 0, NULL};

static uint64_t tt_name_hash(const struct tt_callsite *from, const char *name, size_t len)
{
	uint64_t h = UINT64_C(14695981039346656037) ^ (uint64_t)(uintptr_t)from;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * UINT64_C(1099511628211);
	return h ^ h >> 29;
}

static const struct tt_dyn_site *tt_names_at(const struct tt_names_table *table,
					     const struct tt_name_key *key, size_t *at)
{
	for (size_t i = key->hash & table->mask;; i = (i + 1) & table->mask) {
		const struct tt_dyn_site *e = __atomic_load_n(&table->entry[i], __ATOMIC_ACQUIRE);
		if (!e || (e->hash == key->hash && e->from == key->from && e->len == key->len &&
			   e->cut == key->cut && memcmp(e->name, key->name, key->len) == 0)) {
			*at = i;
			return e;
		}
	}
}

const struct tt_callsite *tt_names_find(const struct tt_names *names, const struct tt_callsite *from,
					const char *name, size_t len, struct tt_name_key *key)
{
	if (!name) {
		name = "(null)";
		len = 6;
	} else if (len == (size_t)-1) {
		len = strnlen(name, TT_NAME_MAX + 1);
	}
	/* A name from the program's data can be any length: the file holds none longer
	 * than its readers take. One cut is its first bytes and "...", a site of its own. */
	bool cut = len > TT_NAME_MAX;
	if (cut)
		len = TT_NAME_MAX - 3;
	*key = (struct tt_name_key){from, name, len, cut, tt_name_hash(from, name, len) ^ cut};
	const struct tt_names_table *table = __atomic_load_n(&names->table, __ATOMIC_ACQUIRE);
	size_t at;
	const struct tt_dyn_site *found = table ? tt_names_at(table, key, &at) : NULL;
	return found ? &found->site : NULL;
}

/* Lock held. Memory from the slabs; large blocks (tables) are taken alone. */
static void *tt_names_alloc(struct tt_names *names, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	if (size > TT_NAMES_SLAB / 4)
		return names->alloc(size);
	if ((size_t)(names->end - names->next) < size) {
		if (names->nslabs == TT_NAMES_MAX_SLABS)
			return NULL;
		char *p = names->alloc(TT_NAMES_SLAB);
		if (!p)
			return NULL;
		names->next = p;
		names->end = p + TT_NAMES_SLAB;
		names->slabs[names->nslabs] = p;
		__atomic_store_n(&names->nslabs, names->nslabs + 1, __ATOMIC_RELEASE);
	}
	void *block = names->next;
	names->next += size;
	return block;
}

/* Lock held: a table twice as large, holding every entry (the old one is left to
 * lookups that still read it). */
static struct tt_names_table *tt_names_grow(struct tt_names *names, const struct tt_names_table *old)
{
	size_t cap = old ? 2 * (old->mask + 1) : TT_NAMES_FIRST_CAP;
	struct tt_names_table *table = tt_names_alloc(names, sizeof *table + cap * sizeof table->entry[0]);
	if (!table)
		return NULL;
	table->mask = cap - 1;
	for (size_t i = 0; old && i <= old->mask; i++) {
		struct tt_dyn_site *e = old->entry[i];
		if (!e)
			continue;
		size_t at = e->hash & table->mask;
		while (table->entry[at])
			at = (at + 1) & table->mask;
		table->entry[at] = e;
	}
	return table;
}

const struct tt_callsite *tt_names_add(struct tt_names *names, const struct tt_name_key *key)
{
	struct tt_names_table *table = names->table;
	size_t at;
	const struct tt_dyn_site *found = table ? tt_names_at(table, key, &at) : NULL;
	if (found)
		return &found->site;
	if (!table || 2 * (names->count + 1) > table->mask + 1) {
		table = tt_names_grow(names, table);
		if (!table)
			return &tt_names_lost;
		__atomic_store_n(&names->table, table, __ATOMIC_RELEASE);
		tt_names_at(table, key, &at);
	}
	/* the file and function are copied too: the macro's strings go away with its
	 * library (dlclose), and this descriptor does not */
	const struct tt_callsite *from = key->from;
	size_t file_len = from->file ? strlen(from->file) : 0;
	size_t func_len = from->func ? strlen(from->func) : 0;
	size_t kept = key->len + (key->cut ? 3 : 0);
	struct tt_dyn_site *e = tt_names_alloc(names, sizeof *e + kept + file_len + func_len + 3);
	if (!e)
		return &tt_names_lost;
	char *file = e->name + kept + 1, *func = file + file_len + 1;
	memcpy(e->name, key->name, key->len);
	memcpy(e->name + key->len, "...", kept - key->len);
	e->name[kept] = 0;
	memcpy(file, from->file ? from->file : "", file_len + 1);
	memcpy(func, from->func ? from->func : "", func_len + 1);
	e->site = (struct tt_callsite){e->name, file, func, from->line, from->flags & ~TT__SITE_ARG_NAME,
				       NULL};
	e->from = from;
	e->hash = key->hash;
	e->len = key->len;
	e->cut = key->cut;
	names->count++;
	__atomic_store_n(&table->entry[at], e, __ATOMIC_RELEASE);
	return &e->site;
}

bool tt_names_hold(const struct tt_names *names, uint64_t address)
{
	size_t n = __atomic_load_n(&names->nslabs, __ATOMIC_ACQUIRE);
	if (address == (uint64_t)(uintptr_t)&tt_names_lost)
		return true;
	for (size_t i = 0; i < n; i++)
		if (address - (uint64_t)(uintptr_t)names->slabs[i] < TT_NAMES_SLAB)
			return true;
	return false;
}
