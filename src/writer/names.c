/* Names made at run time (TT_SCOPE_DYN and the other _DYN macros), and the names of
 * C++'s TT_FUNC.
 *
 * A runtime name is copied once into a call-site descriptor of its own, keyed on the
 * macro's static descriptor and the name's bytes; events then record that descriptor
 * through the ordinary emitters, and the writer describes it like a static one. The
 * lookup takes no lock: an open-addressing table whose entries, once set, never
 * change, published with release stores. A name not seen before is added under a
 * mutex with signals blocked (a handler may look names up too), into memory that is
 * never freed, so a descriptor stays valid until the process ends. */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "writer.h"

/* Descriptors live in slabs of this size; the writer asks whether an address lies in
 * one of them. */
#define TT__NAMES_SLAB (1u << 20)
#define TT__NAMES_MAX_SLABS 4096 /* 4 GiB of names: beyond it, names are not kept */
#define TT__NAMES_FIRST_CAP 1024

struct tt__dyn_site {
	struct tt_callsite site; /* first: its address is the records' payload */
	const struct tt_callsite *from; /* the macro's own descriptor */
	uint64_t hash;
	size_t len;    /* of the name as given, or of what is kept of it when cut */
	bool cut;      /* the name was longer than TT_NAME_MAX: "..." follows its len bytes */
	char name[]; /* NUL-terminated copy, then the file's and the function's */
};

struct tt__names_table {
	size_t mask;
	struct tt__dyn_site *entry[];
};

static struct tt__names_table *tt__names;   /* read with acquire loads */
static size_t tt__names_count;
static struct tt__lock tt__names_lock = TT__LOCK_INIT(TT__LOCK_NAMES);
static char *tt__names_next, *tt__names_end;
static char *tt__names_slabs[TT__NAMES_MAX_SLABS];
static size_t tt__names_nslabs; /* read with acquire loads by the writer */

/* Named so when a name cannot be kept (no memory). */
static const struct tt_callsite tt__names_lost = {"(name not kept: no memory)", "", "", 0, 0, NULL};

static uint64_t tt__name_hash(const struct tt_callsite *from, const char *name, size_t len)
{
	uint64_t h = UINT64_C(14695981039346656037) ^ (uint64_t)(uintptr_t)from;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * UINT64_C(1099511628211);
	return h ^ h >> 29;
}

static const struct tt__dyn_site *tt__names_find(const struct tt__names_table *table,
						 const struct tt_callsite *from, const char *name,
						 size_t len, bool cut, uint64_t hash, size_t *at)
{
	for (size_t i = hash & table->mask;; i = (i + 1) & table->mask) {
		const struct tt__dyn_site *e = __atomic_load_n(&table->entry[i], __ATOMIC_ACQUIRE);
		if (!e || (e->hash == hash && e->from == from && e->len == len && e->cut == cut &&
			   memcmp(e->name, name, len) == 0)) {
			*at = i;
			return e;
		}
	}
}

/* Names mutex held. Memory from the slabs; large blocks (tables) are mapped alone. */
static void *tt__names_alloc(size_t size)
{
	size = (size + 15) & ~(size_t)15;
	if (size > TT__NAMES_SLAB / 4) {
		return tt_os_alloc(size);
	}
	if ((size_t)(tt__names_end - tt__names_next) < size) {
		if (tt__names_nslabs == TT__NAMES_MAX_SLABS)
			return NULL;
		void *p = tt_os_alloc(TT__NAMES_SLAB);
		if (!p)
			return NULL;
		tt__names_next = p;
		tt__names_end = tt__names_next + TT__NAMES_SLAB;
		tt__names_slabs[tt__names_nslabs] = p;
		__atomic_store_n(&tt__names_nslabs, tt__names_nslabs + 1, __ATOMIC_RELEASE);
	}
	void *block = tt__names_next;
	tt__names_next += size;
	return block;
}

/* Names mutex held: a table twice as large, holding every entry (the old one is left
 * to lookups that still read it). */
static struct tt__names_table *tt__names_grow(const struct tt__names_table *old)
{
	size_t cap = old ? 2 * (old->mask + 1) : TT__NAMES_FIRST_CAP;
	struct tt__names_table *table =
		tt__names_alloc(sizeof *table + cap * sizeof table->entry[0]);
	if (!table)
		return NULL;
	table->mask = cap - 1;
	for (size_t i = 0; old && i <= old->mask; i++) {
		struct tt__dyn_site *e = old->entry[i];
		if (!e)
			continue;
		size_t at = e->hash & table->mask;
		while (table->entry[at])
			at = (at + 1) & table->mask;
		table->entry[at] = e;
	}
	return table;
}

/* Names mutex held: adds the name, or finds it added by another thread meanwhile. */
static const struct tt_callsite *tt__names_add(const struct tt_callsite *from, const char *name,
					       size_t len, bool cut, uint64_t hash)
{
	struct tt__names_table *table = tt__names;
	size_t at;
	const struct tt__dyn_site *found =
		table ? tt__names_find(table, from, name, len, cut, hash, &at) : NULL;
	if (found)
		return &found->site;
	if (!table || 2 * (tt__names_count + 1) > table->mask + 1) {
		table = tt__names_grow(table);
		if (!table)
			return &tt__names_lost;
		__atomic_store_n(&tt__names, table, __ATOMIC_RELEASE);
		tt__names_find(table, from, name, len, cut, hash, &at);
	}
	/* the file and function are copied too: the macro's strings go away with its
	 * library (dlclose), and this descriptor does not */
	size_t file_len = from->file ? strlen(from->file) : 0;
	size_t func_len = from->func ? strlen(from->func) : 0;
	size_t kept = len + (cut ? 3 : 0);
	struct tt__dyn_site *e = tt__names_alloc(sizeof *e + kept + file_len + func_len + 3);
	if (!e)
		return &tt__names_lost;
	char *file = e->name + kept + 1, *func = file + file_len + 1;
	memcpy(e->name, name, len);
	memcpy(e->name + len, "...", kept - len);
	e->name[kept] = 0;
	memcpy(file, from->file ? from->file : "", file_len + 1);
	memcpy(func, from->func ? from->func : "", func_len + 1);
	e->site = (struct tt_callsite){e->name, file, func, from->line, from->flags & ~TT__SITE_ARG_NAME,
				       NULL};
	e->from = from;
	e->hash = hash;
	e->len = len;
	e->cut = cut;
	tt__names_count++;
	__atomic_store_n(&table->entry[at], e, __ATOMIC_RELEASE);
	return &e->site;
}

const struct tt_callsite *tt__name(const struct tt_callsite *from, const char *name, size_t len)
{
	/* Recording off (TICKTRACE=0, tt_disable): no event names it, nothing is kept. A
	 * name may come before the constructor ran, which says whether it is on; not
	 * while start-up runs on this thread (its event would be dropped as re-entered). */
	const struct tt__mode_ops *mode = __atomic_load_n(&tt__mode, __ATOMIC_ACQUIRE);
	if (mode->start && !tt__in_slow_path)
		mode->start();
	if (tt__config.off || !__atomic_load_n(&tt__recording, __ATOMIC_RELAXED))
		return from;
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
	uint64_t hash = tt__name_hash(from, name, len) ^ cut;
	const struct tt__names_table *table = __atomic_load_n(&tt__names, __ATOMIC_ACQUIRE);
	size_t at;
	const struct tt__dyn_site *found =
		table ? tt__names_find(table, from, name, len, cut, hash, &at) : NULL;
	if (found)
		return &found->site;
	sigset_t old;
	tt__block_signals(&old);
	tt__lock(&tt__names_lock);
	const struct tt_callsite *site = tt__names_add(from, name, len, cut, hash);
	tt__unlock(&tt__names_lock);
	tt__restore_signals(&old);
	return site;
}

bool tt__names_hold(uint64_t address)
{
	size_t n = __atomic_load_n(&tt__names_nslabs, __ATOMIC_ACQUIRE);
	if (address == (uint64_t)(uintptr_t)&tt__names_lost)
		return true;
	for (size_t i = 0; i < n; i++)
		if (address - (uint64_t)(uintptr_t)tt__names_slabs[i] < TT__NAMES_SLAB)
			return true;
	return false;
}

void tt__names_after_fork(void)
{
	tt__lock_reset(&tt__names_lock);
}

const char *tt__site_name(const struct tt_callsite *site, char *buf, size_t cap)
{
	if (!(site->flags & TT__SITE_PRETTY) || !site->name)
		return site->name;
	tt_pretty_name(site->name, buf, cap);
	return buf;
}
