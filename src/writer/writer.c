/* The raw file writer (tt_dump and the dump at exit). Records are written straight
 * from the chunks; only the call sites the records reference are written, each once.
 * The file is created under a temporary name (mode 0600, O_EXCL, so a symlink is
 * never followed) and renamed into place when complete. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "writer/writer.h"

/* Writes this large go to the file directly. */
#define TT__OUT_DIRECT 4096

static void tt__out_raw(struct tt__out *out, const void *data, size_t size)
{
	const char *p = data;
	while (size && !out->err) {
		ssize_t n = write(out->fd, p, size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			out->err = n < 0 ? -errno : -EIO;
			return;
		}
		p += n;
		size -= (size_t)n;
	}
}

void tt__out_flush(struct tt__out *out)
{
	tt__out_raw(out, out->buf, out->len);
	out->len = 0;
}

/* What is buffered, then `size` bytes at `data`, in one system call where it can. */
static void tt__out_flush_with(struct tt__out *out, const void *data, size_t size)
{
	struct iovec iov[2] = {{out->buf, out->len}, {(void *)data, size}};
	ssize_t n = out->err ? 0 : writev(out->fd, iov, 2);
	size_t done = n > 0 ? (size_t)n : 0;
	/* What a short or interrupted write left, the slow way (it reports errors). */
	size_t from_buf = done < out->len ? done : out->len;
	tt__out_raw(out, out->buf + from_buf, out->len - from_buf);
	size_t from_data = done - from_buf;
	tt__out_raw(out, (const char *)data + from_data, size - from_data);
	out->len = 0;
}

void tt__out(struct tt__out *out, const void *data, size_t size)
{
	out->offset += size;
	/* Records go from the chunks to the file without a copy into the buffer. */
	if (size >= TT__OUT_DIRECT) {
		tt__out_flush_with(out, data, size);
		return;
	}
	if (size > sizeof out->buf - out->len)
		tt__out_flush(out);
	memcpy(out->buf + out->len, data, size);
	out->len += size;
}

void tt__out_section(struct tt__out *out, uint32_t type, uint64_t size)
{
	struct tt_section_header header = {.type = type, .size = size};
	tt__out(out, &header, sizeof header);
}

void tt__out_pad(struct tt__out *out, uint64_t size)
{
	static const char zeros[16];
	tt__out(out, zeros, TT_SECTION_PADDED(size) - size);
}

/* ---- call sites and functions: the sets of addresses the records use ---- */

/* 1: added, 0: already there, -ENOMEM */
static int tt__site_set_add(struct tt__site_set *set, uint64_t address)
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

void tt__site_set_clear(struct tt__site_set *set)
{
	size_t seen = set->retired_seen;
	free(set->slots);
	*set = (struct tt__site_set){.retired_seen = seen};
}

static size_t tt__generation(uint64_t address, uint64_t tsc, size_t limit);

const struct tt_record *tt__sites_add(struct tt__site_set *set, struct tt__site_set *fresh,
				      const struct tt_record *begin, const struct tt_record *end,
				      int stop_unwritten)
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
			entry |= (uint64_t)tt__generation(TT_RECORD_PAYLOAD(word), r->tsc, seen)
				 << TT__GEN_SHIFT;
		if (!entry || entry == last)
			continue;
		last = entry;
		int added = tt__site_set_add(set, last);
		if (added > 0 && fresh)
			added = tt__site_set_add(fresh, last);
		if (added < 0)
			return NULL;
	}
	return end;
}

static uint32_t tt__strlen32(const char *s)
{
	return s ? (uint32_t)strnlen(s, UINT32_MAX / 4) : 0;
}

/* Address ranges of every segment of the loaded modules, taken at the dump. */
struct tt__ranges {
	uint64_t (*range)[2]; /* [start, end) */
	size_t count, cap;
	int err;
};

/* What the entries of one generation are described with. */
struct tt__names_view {
	const struct tt__ranges *loaded; /* segments loaded when the names were read, or NULL */
	size_t seen;                     /* the set's retired_seen */
	size_t gen;                      /* the generation described */
};

static const struct tt_callsite *tt__site_descriptor(uint64_t address, const struct tt__names_view *v);
static int tt__add_loaded(struct dl_phdr_info *info, size_t size, void *data);
static pthread_mutex_t tt__retired_mutex;
static uint64_t tt__retired_until(size_t gen);

/* The descriptor of a set's entry of the generation viewed, or NULL for an empty slot,
 * a function or another generation. */
static const struct tt_callsite *tt__site_at(uint64_t entry, const struct tt__names_view *v)
{
	return entry && !(entry & TT__FUNC_TAG) && TT__GEN(entry) == v->gen ?
		       tt__site_descriptor(entry & TT__ADDRESS_MASK, v) : NULL;
}

/* A site's argument name (TT_BEGIN_NAMED_ARG), or NULL. */
static const char *tt__arg_name(const struct tt_callsite *site)
{
	return site && (site->flags & TT__SITE_ARG_NAME) ? site->arg_name : NULL;
}

/* A section's header: within an UNLOADED section when `until` is not 0 (what it
 * describes held until then). */
static void tt__out_section_until(struct tt__out *out, uint32_t type, uint64_t size, uint64_t until)
{
	if (until) {
		struct tt_unloaded_info info = {.until_tsc = until};
		tt__out_section(out, TT_SEC_UNLOADED, sizeof info + sizeof(struct tt_section_header) +
							      TT_SECTION_PADDED(size));
		tt__out(out, &info, sizeof info);
	}
	tt__out_section(out, type, size);
}

/* ARG_NAMES, for the sites whose argument has a name. Retired mutex held. */
static void tt__out_arg_names(struct tt__out *out, const struct tt__site_set *set,
			      const struct tt__names_view *v, uint64_t until)
{
	uint64_t size = sizeof(uint64_t), count = 0;
	for (size_t i = 0; i < set->cap; i++) {
		const char *name = tt__arg_name(tt__site_at(set->slots[i], v));
		if (name) {
			size += sizeof(struct tt_arg_name_info) + tt__strlen32(name);
			count++;
		}
	}
	if (!count)
		return;
	tt__out_section_until(out, TT_SEC_ARG_NAMES, size, until);
	tt__out(out, &count, sizeof count);
	for (size_t i = 0; i < set->cap; i++) {
		const char *name = tt__arg_name(tt__site_at(set->slots[i], v));
		if (!name)
			continue;
		struct tt_arg_name_info info = {.address = set->slots[i] & TT__ADDRESS_MASK,
						.name_len = tt__strlen32(name)};
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

/* SITES, ARG_NAMES and FUNCS of the generation viewed; those of a library unloaded
 * since (generation k > 0: the k-th) within UNLOADED sections. Retired mutex held. */
static void tt__out_generation(struct tt__out *out, const struct tt__site_set *set,
			       const struct tt__names_view *v)
{
	char name[TT__NAME_MAX];
	uint64_t until = tt__retired_until(v->gen);
	uint64_t size = sizeof(uint64_t), count = 0;
	for (size_t i = 0; i < set->cap; i++) {
		const struct tt_callsite *site = tt__site_at(set->slots[i], v);
		if (site) {
			size += sizeof(struct tt_site_info) +
				tt__strlen32(tt__site_name(site, name, sizeof name)) +
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
			const char *shown = tt__site_name(site, name, sizeof name);
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

/* Every generation the set holds. Retired mutex held. */
static void tt__out_names(struct tt__out *out, const struct tt__site_set *set,
			  const struct tt__ranges *loaded)
{
	struct tt__names_view v = {.loaded = loaded, .seen = set->retired_seen};
	tt__out_generation(out, set, &v);
	if (!set->retired_seen)
		return;
	static bool present[TT__RETIRED_MAX + 1]; /* (retired mutex held) */
	memset(present, 0, sizeof present);
	for (size_t i = 0; i < set->cap; i++)
		present[TT__GEN(set->slots[i])] = true;
	for (v.gen = 1; v.gen <= set->retired_seen; v.gen++)
		if (present[v.gen])
			tt__out_generation(out, set, &v);
}

void tt__out_sites(struct tt__out *out, const struct tt__site_set *set)
{
	struct tt__ranges loaded = {0};
	dl_iterate_phdr(tt__add_loaded, &loaded);
	pthread_mutex_lock(&tt__retired_mutex);
	tt__out_names(out, set, loaded.err ? NULL : &loaded);
	pthread_mutex_unlock(&tt__retired_mutex);
	free(loaded.range);
}

/* ---- threads: the extent of every chunk, taken once so counts and data agree ---- */

struct tt__extent {
	const struct tt_record *begin, *end;
};

struct tt__thread_snapshot {
	struct tt__slot *slot;
	struct tt__extent *extents;
	size_t chunks;
	uint64_t records;
	struct tt_record gap[2]; /* events it is dropping now, after its records */
	size_t gap_records;
};

static int tt__snapshot_thread(struct tt__thread_snapshot *snap, struct tt__slot *slot)
{
	size_t cap = 16;
	snap->slot = slot;
	snap->chunks = 0;
	snap->records = 0;
	snap->extents = malloc(cap * sizeof *snap->extents);
	if (!snap->extents)
		return -ENOMEM;
	for (const struct tt__chunk *chunk = slot->first; chunk;
	     chunk = __atomic_load_n(&chunk->next, __ATOMIC_ACQUIRE)) {
		if (snap->chunks == cap) {
			struct tt__extent *grown = realloc(snap->extents, 2 * cap * sizeof *grown);
			if (!grown)
				return -ENOMEM;
			snap->extents = grown;
			cap *= 2;
		}
		struct tt__extent *e = &snap->extents[snap->chunks++];
		tt__chunk_extent(slot, chunk, &e->begin, &e->end);
		snap->records += (uint64_t)(e->end - e->begin);
	}
	snap->gap_records = tt__gap_records(slot, snap->gap);
	snap->records += snap->gap_records;
	return 0;
}

/* The call-site descriptors and the instrumented functions the records name. */
static int tt__collect_names(struct tt__site_set *set, const struct tt__thread_snapshot *snap)
{
	for (size_t c = 0; c < snap->chunks; c++)
		if (!tt__sites_add(set, NULL, snap->extents[c].begin, snap->extents[c].end, 0))
			return -ENOMEM;
	return 0;
}

/* The name a thread has now: its own (named or read at exit), or its comm if alive. */
static void tt__thread_name_now(const struct tt__slot *slot, char *name, size_t size)
{
	snprintf(name, size, "%s", slot->name);
	if (slot->named || (__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_EXITED))
		return;
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%u/comm", slot->tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(name, (int)size, f))
		name[strcspn(name, "\n")] = 0;
	fclose(f);
}

void tt__out_thread_info(struct tt__out *out, uint32_t type, const struct tt__slot *slot,
			 uint64_t records, uint64_t *dropped_total)
{
	char name[64];
	tt__thread_name_now(slot, name, sizeof name);
	uint32_t flags = __atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE);
	struct tt_thread_info info = {
		.index = slot->index,
		.tid = slot->tid,
		.events = records,
		.name_len = (uint32_t)strlen(name),
		.flags = (flags & TT__SLOT_EXITED ? TT_THREAD_EXITED : 0) |
			 (flags & TT__SLOT_WRAPPED ? TT_THREAD_WRAPPED : 0) |
			 (flags & TT__SLOT_RUNTIME ? TT_THREAD_RUNTIME : 0),
	};
	struct tt__gap gap;
	tt__drops_now(slot, info.dropped, &gap);
	for (int i = 0; i < TT_DROP_CAUSES; i++)
		*dropped_total += info.dropped[i];
	uint64_t size = sizeof info + info.name_len;
	tt__out_section(out, type, size);
	tt__out(out, &info, sizeof info);
	tt__out(out, name, info.name_len);
	tt__out_pad(out, size);
}

void tt__out_events(struct tt__out *out, const struct tt__slot *slot, uint64_t first,
		    const struct tt_record *begin, const struct tt_record *end)
{
	uint64_t count = (uint64_t)(end - begin);
	struct tt_events_info events = {.thread_index = slot->index, .first_record = first};
	tt__out_section(out, TT_SEC_EVENTS, sizeof events + count * sizeof(struct tt_record));
	tt__out(out, &events, sizeof events);
	tt__out(out, begin, count * sizeof(struct tt_record));
}

size_t tt__pack_records(uint8_t *buf, const struct tt_record *begin, const struct tt_record *end)
{
	uint64_t words[TT_PACKED_LITERAL] = {0};
	uint64_t last_tsc = 0;
	uint8_t *p = buf;
	for (const struct tt_record *r = begin; r < end; r++) {
		uint64_t word = r->word, field = r->tsc;
		unsigned slot = tt_packed_slot(word);
		if (word && words[slot] == word) {
			*p++ = (uint8_t)slot;
		} else {
			*p++ = TT_PACKED_LITERAL;
			memcpy(p, &word, sizeof word);
			p += sizeof word;
			words[slot] = word;
		}
		if (TT_RECORD_HAS_TIME(TT_RECORD_KIND(word))) {
			uint64_t delta = field - last_tsc;
			last_tsc = field;
			field = tt_zigzag(delta);
		}
		do {
			uint8_t low = field & 0x7f;
			field >>= 7;
			*p++ = (uint8_t)(low | (field ? 0x80 : 0));
		} while (field);
	}
	return (size_t)(p - buf);
}

void tt__out_events_packed(struct tt__out *out, const struct tt__slot *slot, uint64_t first,
			   uint64_t records, const uint8_t *packed, size_t bytes)
{
	struct tt_events_info events = {.thread_index = slot->index, .first_record = first};
	struct tt_packed_info info = {.records = records};
	uint64_t size = sizeof events + sizeof info + bytes;
	tt__out_section(out, TT_SEC_EVENTS_PACKED, size);
	tt__out(out, &events, sizeof events);
	tt__out(out, &info, sizeof info);
	tt__out(out, packed, bytes);
	tt__out_pad(out, size);
}

static void tt__out_thread(struct tt__out *out, const struct tt__thread_snapshot *snap,
			   uint64_t *dropped_total)
{
	tt__out_thread_info(out, TT_SEC_THREAD, snap->slot, snap->records, dropped_total);
	uint64_t first = 0;
	for (size_t c = 0; c < snap->chunks; c++) {
		const struct tt__extent *e = &snap->extents[c];
		if (e->end == e->begin)
			continue;
		tt__out_events(out, snap->slot, first, e->begin, e->end);
		first += (uint64_t)(e->end - e->begin);
	}
	if (snap->gap_records)
		tt__out_events(out, snap->slot, first, snap->gap, snap->gap + snap->gap_records);
}

/* ---- process and modules ---- */

static size_t tt__read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t len = 0;
	ssize_t n;
	while (len < size && (n = read(fd, buf + len, size - len)) > 0)
		len += (size_t)n;
	close(fd);
	return len;
}

void tt__out_process(struct tt__out *out)
{
	static char cmdline[4096];
	char name[64];
	size_t name_len = tt__read_file("/proc/self/comm", name, sizeof name);
	while (name_len && name[name_len - 1] == '\n')
		name_len--;
	struct tt_process_info info = {
		.pid = (uint32_t)getpid(),
		.ppid = (uint32_t)getppid(),
		.name_len = (uint32_t)name_len,
		.cmdline_len = (uint32_t)tt__read_file("/proc/self/cmdline", cmdline, sizeof cmdline),
	};
	uint64_t size = sizeof info + info.name_len + info.cmdline_len;
	tt__out_section(out, TT_SEC_PROCESS, size);
	tt__out(out, &info, sizeof info);
	tt__out(out, name, info.name_len);
	tt__out(out, cmdline, info.cmdline_len);
	tt__out_pad(out, size);
}

struct tt__modules {
	char *data; /* tt_module_info entries with their strings, back to back */
	size_t len, cap;
	uint64_t count;
	int err;
};

static void tt__modules_append(struct tt__modules *m, const void *data, size_t size)
{
	if (m->err)
		return;
	if (m->len + size > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 4096;
		while (cap < m->len + size)
			cap *= 2;
		char *grown = realloc(m->data, cap);
		if (!grown) {
			m->err = -ENOMEM;
			return;
		}
		m->data = grown;
		m->cap = cap;
	}
	memcpy(m->data + m->len, data, size);
	m->len += size;
}

static size_t tt__build_id(const struct dl_phdr_info *info, const unsigned char **id)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *note = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof *note;
			const char *desc = name + ((note->n_namesz + 3) & ~3u);
			if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0) {
				*id = (const unsigned char *)desc;
				return note->n_descsz;
			}
			p = desc + ((note->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

/* Every loadable segment: functions are named from the code's, and call sites that
 * the run had not described from the data's (descriptors are static data). */
static int tt__add_module(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct tt__modules *m = data;
	char exe[PATH_MAX];
	const char *path = info->dlpi_name;
	if (!path || !*path) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[n > 0 ? n : 0] = 0;
		path = exe;
	}
	const unsigned char *build_id = NULL;
	size_t build_id_len = tt__build_id(info, &build_id);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		struct tt_module_info mod = {
			.start = info->dlpi_addr + ph->p_vaddr,
			.end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz,
			.file_offset = ph->p_offset,
			.path_len = (uint32_t)strlen(path),
			.build_id_len = (uint32_t)build_id_len,
		};
		tt__modules_append(m, &mod, sizeof mod);
		tt__modules_append(m, path, mod.path_len);
		tt__modules_append(m, build_id, build_id_len);
		m->count++;
	}
	return 0;
}

/* ---- libraries unloaded while the program runs (dlclose: lifecycle/unload.c) ---- */

/* A copy of a call-site descriptor whose memory goes with its library. */
struct tt__retired_site {
	uint64_t address;
	struct tt_callsite site; /* the strings are copies */
};

struct tt__retired_func {
	uint64_t address;
	char *symbol;
};

/* What a library closed with dlclose leaves for the file: its module entries, copies
 * of its call-site descriptors that records name, and when it was unloaded. Records
 * made before then at its addresses are its; later ones, of a library loaded there
 * since. */
struct tt__retired_lib {
	uintptr_t base;
	char *name;
	uint64_t until; /* TSC once dlclose returned; 0 while it runs */
	struct tt__ranges ranges; /* its loadable segments; none: it stayed loaded */
	struct tt__modules modules;
	struct tt__retired_site *sites;
	size_t nsites, sites_cap;
	/* its functions that records name and their dynamic symbols (NULL: none, a
	 * static function) for the runtime's report and spike log */
	struct tt__retired_func *funcs;
	size_t nfuncs, funcs_cap;
};

static pthread_mutex_t tt__retired_mutex = PTHREAD_MUTEX_INITIALIZER;
/* In the order they began unloading; an entry never moves or changes once its
 * until is set. */
static struct tt__retired_lib *tt__retired[TT__RETIRED_MAX];
static size_t tt__nretired; /* retired mutex */
/* The first this many have their until (atomic): generations are told apart by them. */
static size_t tt__retired_published;

/* A site whose library is unloaded and was not retired (unloaded by other means than
 * dlclose, or recorded by its destructors): named so, never read. */
static const struct tt_callsite tt__unloaded_site = {"(unloaded library)", "", "", 0, 0, NULL};

static void tt__ranges_add(struct tt__ranges *r, uint64_t start, uint64_t end)
{
	if (r->count == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		uint64_t(*grown)[2] = realloc(r->range, cap * sizeof *grown);
		if (!grown) {
			r->err = -ENOMEM;
			return;
		}
		r->range = grown;
		r->cap = cap;
	}
	r->range[r->count][0] = start;
	r->range[r->count++][1] = end;
}

static void tt__ranges_of(struct tt__ranges *r, const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD)
			tt__ranges_add(r, info->dlpi_addr + ph->p_vaddr,
				       info->dlpi_addr + ph->p_vaddr + ph->p_memsz);
	}
}

static int tt__add_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	tt__ranges_of(data, info);
	return 0;
}

static bool tt__ranges_hold(const struct tt__ranges *r, uint64_t address)
{
	for (size_t i = 0; i < r->count; i++)
		if (address >= r->range[i][0] && address < r->range[i][1])
			return true;
	return false;
}

/* The generation of a record at `address` made at `tsc`, among the first `limit`
 * libraries unloaded: k when the k-th was loaded there then, 0 when none was. */
static size_t tt__generation(uint64_t address, uint64_t tsc, size_t limit)
{
	for (size_t k = 0; k < limit; k++) {
		const struct tt__retired_lib *lib = tt__retired[k];
		if (tsc < lib->until && tt__ranges_hold(&lib->ranges, address))
			return k + 1;
	}
	return 0;
}

static uint64_t tt__retired_until(size_t gen)
{
	return gen ? tt__retired[gen - 1]->until : 0;
}

/* The library's copy of its descriptor at `address`. Retired mutex held. */
static const struct tt_callsite *tt__lib_site(const struct tt__retired_lib *lib, uint64_t address)
{
	for (size_t i = 0; i < lib->nsites; i++)
		if (lib->sites[i].address == address)
			return &lib->sites[i].site;
	return &tt__unloaded_site;
}

static const struct tt_callsite *tt__site_descriptor(uint64_t address, const struct tt__names_view *v)
{
	if (v->gen)
		return tt__lib_site(tt__retired[v->gen - 1], address);
	/* A library that began unloading after these records were told apart was loaded
	 * when they were made, and its memory may be gone: its copies. */
	for (size_t k = v->seen; k < tt__nretired; k++)
		if (tt__ranges_hold(&tt__retired[k]->ranges, address))
			return tt__lib_site(tt__retired[k], address);
	/* names made at run time live in names.c's memory, not in a module */
	return !v->loaded || tt__ranges_hold(v->loaded, address) || tt__names_hold(address) ?
		       (const struct tt_callsite *)(uintptr_t)address :
		       &tt__unloaded_site;
}

static int tt__find_retiring(struct dl_phdr_info *info, size_t size, void *data)
{
	struct tt__retired_lib *lib = data;
	if (info->dlpi_addr != lib->base || !info->dlpi_name || strcmp(info->dlpi_name, lib->name) != 0)
		return 0;
	tt__add_module(info, size, &lib->modules);
	tt__ranges_of(&lib->ranges, info);
	return 1;
}

static int tt__is_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const struct tt__retired_lib *lib = data;
	return info->dlpi_addr == lib->base && info->dlpi_name && strcmp(info->dlpi_name, lib->name) == 0;
}

static char *tt__copy(const char *s)
{
	return s ? strndup(s, UINT32_MAX / 4) : NULL;
}

/* Room in the array at *p (cap elements of `size` bytes) for one more than count. */
static int tt__grow(void **p, size_t *cap, size_t count, size_t size)
{
	if (count < *cap)
		return 0;
	size_t grown_cap = *cap ? 2 * *cap : 16;
	void *grown = realloc(*p, grown_cap * size);
	if (!grown)
		return -ENOMEM;
	*p = grown;
	*cap = grown_cap;
	return 0;
}

static const struct tt__retired_func *tt__lib_func(const struct tt__retired_lib *lib, uint64_t address)
{
	for (size_t i = 0; i < lib->nfuncs; i++)
		if (lib->funcs[i].address == address)
			return &lib->funcs[i];
	return NULL;
}

/* Keeps the dynamic symbol of a function of the retiring library. */
static int tt__retire_func(struct tt__retired_lib *lib, uint64_t address)
{
	if (tt__lib_func(lib, address))
		return 0;
	if (tt__grow((void **)&lib->funcs, &lib->funcs_cap, lib->nfuncs, sizeof *lib->funcs) < 0)
		return -ENOMEM;
	Dl_info info;
	bool named = dladdr((void *)(uintptr_t)address, &info) && info.dli_sname &&
		     info.dli_saddr == (void *)(uintptr_t)address;
	lib->funcs[lib->nfuncs++] = (struct tt__retired_func){address, named ? tt__copy(info.dli_sname) : NULL};
	return 0;
}

/* Copies the descriptors in the retiring library that the thread's records name
 * (not those of a library unloaded before it from the same addresses), and the
 * symbols of its functions. */
static int tt__retire_sites(const struct tt__thread_snapshot *snap, struct tt__retired_lib *lib,
			    size_t published)
{
	for (size_t c = 0; c < snap->chunks; c++) {
		for (const struct tt_record *r = snap->extents[c].begin; r < snap->extents[c].end; r++) {
			uint64_t address = TT_RECORD_PAYLOAD(r->word);
			unsigned kind = TT_RECORD_KIND(r->word);
			if ((!TT_RECORD_HAS_SITE(kind) && kind != TT_REC_FUNC_ENTER) ||
			    !tt__ranges_hold(&lib->ranges, address) ||
			    tt__generation(address, r->tsc, published))
				continue;
			if (kind == TT_REC_FUNC_ENTER) {
				if (tt__retire_func(lib, address) < 0)
					return -ENOMEM;
				continue;
			}
			if (tt__lib_site(lib, address) != &tt__unloaded_site)
				continue;
			if (tt__grow((void **)&lib->sites, &lib->sites_cap, lib->nsites, sizeof *lib->sites) < 0)
				return -ENOMEM;
			const struct tt_callsite *site = (const struct tt_callsite *)(uintptr_t)address;
			lib->sites[lib->nsites++] = (struct tt__retired_site){
				.address = address,
				.site = {tt__copy(site->name), tt__copy(site->file), tt__copy(site->func),
					 site->line, site->flags, tt__copy(tt__arg_name(site))},
			};
		}
	}
	return 0;
}

static void tt__retired_free(struct tt__retired_lib *lib)
{
	if (!lib)
		return;
	for (size_t i = 0; i < lib->nsites; i++) {
		const struct tt_callsite *site = &lib->sites[i].site;
		free((char *)site->name);
		free((char *)site->file);
		free((char *)site->func);
		free((char *)site->arg_name);
	}
	free(lib->sites);
	for (size_t i = 0; i < lib->nfuncs; i++)
		free(lib->funcs[i].symbol);
	free(lib->funcs);
	free(lib->ranges.range);
	free(lib->modules.data);
	free(lib->name);
	free(lib);
}

struct tt__retired_lib *tt__retire_library(uintptr_t base, const char *name)
{
	struct tt__retired_lib *lib = calloc(1, sizeof *lib);
	if (lib && !(lib->name = tt__copy(name))) {
		free(lib);
		lib = NULL;
	}
	int err = lib ? 0 : -ENOMEM;
	if (lib) {
		lib->base = base;
		tt__hold_chunks(1);
		pthread_mutex_lock(&tt__retired_mutex);
		if (tt__nretired == TT__RETIRED_MAX)
			err = -ENOSPC;
		else
			dl_iterate_phdr(tt__find_retiring, lib);
		err = err ? err : lib->ranges.err ? lib->ranges.err : lib->modules.err;
		size_t published = __atomic_load_n(&tt__retired_published, __ATOMIC_ACQUIRE);
		for (struct tt__slot *slot = tt__registry_head(); slot && lib->ranges.count && !err;
		     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE)) {
			struct tt__thread_snapshot snap;
			err = tt__snapshot_thread(&snap, slot);
			if (!err)
				err = tt__retire_sites(&snap, lib, published);
			free(snap.extents);
		}
		if (!err && lib->ranges.count) {
			tt__retired[tt__nretired] = lib;
			__atomic_store_n(&tt__nretired, tt__nretired + 1, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&tt__retired_mutex);
		tt__hold_chunks(0);
	}
	if (err == -ENOSPC)
		fprintf(stderr, "ticktrace: more than %d libraries unloaded: call sites and functions "
			"of %s may be named after a library loaded later at its addresses\n",
			TT__RETIRED_MAX, name);
	else if (err)
		fprintf(stderr, "ticktrace: no memory to keep the call sites of %s, which is being "
			"unloaded: they are named \"(unloaded library)\"\n", name);
	if (err || !lib->ranges.count) {
		tt__retired_free(lib);
		return NULL;
	}
	return lib;
}

void tt__library_unloaded(struct tt__retired_lib *lib)
{
	if (!lib)
		return;
	/* after its destructors, which may have recorded too */
	uint64_t now = __builtin_ia32_rdtsc();
	pthread_mutex_lock(&tt__retired_mutex);
	/* Still loaded (opened more than once, or RTLD_NODELETE): nothing was unloaded. */
	if (dl_iterate_phdr(tt__is_loaded, lib)) {
		lib->ranges.count = 0;
		lib->modules.count = 0;
		lib->modules.len = 0;
	}
	lib->until = now;
	size_t published = tt__retired_published;
	while (published < tt__nretired && tt__retired[published]->until)
		published++;
	__atomic_store_n(&tt__retired_published, published, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&tt__retired_mutex);
}

static void tt__out_module_list(struct tt__out *out, const struct tt__modules *m, uint64_t until)
{
	uint64_t size = sizeof m->count + m->len;
	tt__out_section_until(out, TT_SEC_MODULES, size, until);
	tt__out(out, &m->count, sizeof m->count);
	if (m->len) /* (none: no buffer at all) */
		tt__out(out, m->data, m->len);
	tt__out_pad(out, size);
}

/* The modules of libraries [from, to) of those unloaded. Retired mutex held. */
static void tt__out_retired_modules(struct tt__out *out, size_t from, size_t to)
{
	for (size_t k = from; k < to; k++)
		if (tt__retired[k]->modules.count)
			tt__out_module_list(out, &tt__retired[k]->modules, tt__retired[k]->until);
}

int tt__out_loaded_modules(struct tt__out *out)
{
	struct tt__modules m = {0};
	dl_iterate_phdr(tt__add_module, &m);
	if (!m.err)
		tt__out_module_list(out, &m, 0);
	free(m.data);
	return m.err;
}

int tt__out_modules(struct tt__out *out)
{
	/* the unloaded first: an UNLOADED MODULES ends the span of what was described of
	 * its addresses before it, and a library loaded there since comes after */
	pthread_mutex_lock(&tt__retired_mutex);
	tt__out_retired_modules(out, 0, __atomic_load_n(&tt__retired_published, __ATOMIC_ACQUIRE));
	pthread_mutex_unlock(&tt__retired_mutex);
	return tt__out_loaded_modules(out);
}

int tt__out_unloaded(struct tt__out *out, struct tt__site_set *set)
{
	size_t published = __atomic_load_n(&tt__retired_published, __ATOMIC_ACQUIRE);
	if (published == set->retired_seen)
		return 0;
	struct tt__site_set told = {.retired_seen = published};
	int err = 0;
	pthread_mutex_lock(&tt__retired_mutex);
	tt__out_retired_modules(out, set->retired_seen, published);
	/* What was described of their addresses was theirs: it is not described again
	 * when their records come, and a library loaded there since gets its own. */
	for (size_t i = 0; i < set->cap && !err; i++) {
		uint64_t entry = set->slots[i];
		if (!entry)
			continue;
		for (size_t k = set->retired_seen; k < published && !TT__GEN(entry); k++)
			if (tt__ranges_hold(&tt__retired[k]->ranges, entry & TT__ADDRESS_MASK))
				entry |= (uint64_t)(k + 1) << TT__GEN_SHIFT;
		err = tt__site_set_add(&told, entry) < 0 ? -ENOMEM : 0;
	}
	pthread_mutex_unlock(&tt__retired_mutex);
	if (err) {
		free(told.slots); /* (its UNLOADED sections are written again next time) */
		return err;
	}
	free(set->slots);
	*set = told;
	return 0;
}

uint64_t tt__record_key(uint64_t address, uint64_t tsc)
{
	size_t published = __atomic_load_n(&tt__retired_published, __ATOMIC_ACQUIRE);
	return address | (uint64_t)tt__generation(address, tsc, published) << TT__GEN_SHIFT;
}

static size_t tt__name_out(size_t cap, int n)
{
	return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}

size_t tt__unloaded_name(uint64_t address, size_t gen, bool func, char *buf, size_t cap)
{
	Dl_info info;
	if (!gen && (!__atomic_load_n(&tt__nretired, __ATOMIC_ACQUIRE) ||
		     dladdr((void *)(uintptr_t)address, &info) || (!func && tt__names_hold(address))))
		return 0;
	char name[TT__NAME_MAX];
	size_t n;
	pthread_mutex_lock(&tt__retired_mutex);
	const struct tt__retired_lib *lib = gen ? tt__retired[gen - 1] : NULL;
	/* none loaded there now: the last one that was (its key was made before it went) */
	for (size_t k = tt__nretired; !gen && k-- > 0 && !lib;)
		if (tt__ranges_hold(&tt__retired[k]->ranges, address))
			lib = tt__retired[k];
	if (!func)
		n = tt__name_out(cap, snprintf(buf, cap, "%s", tt__site_name(lib ? tt__lib_site(lib, address) :
										   &tt__unloaded_site, name, sizeof name)));
	else if (lib && tt__lib_func(lib, address) && tt__lib_func(lib, address)->symbol)
		n = tt__name_out(cap, snprintf(buf, cap, "%s", tt__lib_func(lib, address)->symbol));
	else if (lib) /* as for a static function (report.c): for addr2line -e */
		n = tt__name_out(cap, snprintf(buf, cap, "%s+0x%" PRIx64,
						    strrchr(lib->name, '/') ? strrchr(lib->name, '/') + 1 : lib->name,
						    address - lib->base));
	else
		n = tt__name_out(cap, snprintf(buf, cap, "0x%" PRIx64, address));
	pthread_mutex_unlock(&tt__retired_mutex);
	return n;
}

static int tt__count_changes(struct dl_phdr_info *info, size_t size, void *data)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
		*(uint64_t *)data = info->dlpi_adds + info->dlpi_subs;
	return 1;
}

uint64_t tt__modules_changes(void)
{
	uint64_t changes = 0;
	dl_iterate_phdr(tt__count_changes, &changes);
	return changes;
}

/* ---- the file ---- */

int tt__default_path(char *buf, size_t size)
{
	const char *pattern = getenv("TICKTRACE_OUT");
	return tt__expand_path(pattern && *pattern ? pattern : "ticktrace-%p.ttr", buf, size);
}

int tt__expand_path(const char *pattern, char *buf, size_t size)
{
	size_t len = 0;
	for (const char *p = pattern; *p; p++) {
		int n;
		if (p[0] == '%' && p[1] == 'p') {
			n = snprintf(buf + len, size - len, "%d", (int)getpid());
			p++;
		} else {
			n = snprintf(buf + len, size - len, "%c", *p);
		}
		if (n < 0 || (size_t)n >= size - len)
			return -ENAMETOOLONG;
		len += (size_t)n;
	}
	/* A forked child writes a file of its own, even where the name has no %p. */
	if (tt__forked && !strstr(pattern, "%p")) {
		int n = snprintf(buf + len, size - len, ".%d", (int)getpid());
		if (n < 0 || (size_t)n >= size - len)
			return -ENAMETOOLONG;
		len += (size_t)n;
	}
	/* An exec'd image, at the same pid, too: .execN before the extension, so that
	 * run.ttr's next image is run.exec1.ttr, found by *.ttr alike. */
	if (tt__exec_image) {
		char *base = strrchr(buf, '/');
		base = base ? base + 1 : buf;
		char *dot = strrchr(base, '.');
		size_t at = dot && dot != base ? (size_t)(dot - buf) : len;
		char tag[24];
		int n = snprintf(tag, sizeof tag, ".exec%u", tt__exec_image);
		if (len + (size_t)n >= size)
			return -ENAMETOOLONG;
		memmove(buf + at + n, buf + at, len - at + 1);
		memcpy(buf + at, tag, (size_t)n);
	}
	return 0;
}

void tt__file_header(struct tt_file_header *header, uint32_t flags)
{
	*header = (struct tt_file_header){
		.version = TT_FILE_VERSION,
		.header_size = sizeof *header,
		.pid = (uint32_t)getpid(),
		.unregistered_dropped = __atomic_load_n(&tt__unregistered_drops, __ATOMIC_RELAXED),
	};
	memcpy(header->magic, TT_FILE_MAGIC, TT_FILE_MAGIC_LEN);
	tt__clock_fill_header(header);
	header->flags |= flags;
	header->crash_signal = (uint32_t)__atomic_load_n(&tt__crash_signal, __ATOMIC_ACQUIRE);
	if (header->crash_signal)
		header->flags |= TT_FILE_CRASHED;
}

void tt__out_file_header(struct tt__out *out, uint32_t flags)
{
	struct tt_file_header header;
	tt__file_header(&header, flags);
	tt__out(out, &header, sizeof header);
}

void tt__out_end(struct tt__out *out, const struct tt_end_info *end)
{
	tt__out_section(out, TT_SEC_END, sizeof *end);
	tt__out(out, end, sizeof *end);
	tt__out_pad(out, sizeof *end);
}

static int tt__write_to(struct tt__out *out)
{
	struct tt__thread_snapshot *snaps = NULL;
	struct tt__site_set names = {0};
	struct tt__ranges loaded = {0};
	size_t threads = 0, cap = 0;
	int err = 0;
	names.retired_seen = __atomic_load_n(&tt__retired_published, __ATOMIC_ACQUIRE);
	for (struct tt__slot *slot = tt__registry_head(); slot;
	     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE)) {
		if (threads == cap) {
			cap = cap ? 2 * cap : 64;
			struct tt__thread_snapshot *grown = realloc(snaps, cap * sizeof *grown);
			if (!grown) {
				err = -ENOMEM;
				goto out;
			}
			snaps = grown;
		}
		err = tt__snapshot_thread(&snaps[threads++], slot);
		if (!err)
			err = tt__collect_names(&names, &snaps[threads - 1]);
		if (err)
			goto out;
	}

	tt__out_file_header(out, tt__config.mode == TT__MODE_RING ? TT_FILE_RING : 0);
	tt__out_process(out);
	err = tt__out_modules(out);
	if (err)
		goto out;
	/* Descriptors are read where their library is still loaded, or from the copies
	 * that dlclose left. */
	dl_iterate_phdr(tt__add_loaded, &loaded);
	err = loaded.err;
	if (err)
		goto out;
	pthread_mutex_lock(&tt__retired_mutex);
	tt__out_names(out, &names, &loaded);
	pthread_mutex_unlock(&tt__retired_mutex);
	struct tt_end_info end = {.threads = threads, .sites = names.count - names.funcs};
	for (size_t i = 0; i < threads; i++) {
		tt__out_thread(out, &snaps[i], &end.dropped);
		end.records += snaps[i].records;
	}
	tt__out_end(out, &end);
	tt__out_flush(out);
	err = out->err;
out:
	for (size_t i = 0; i < threads; i++)
		free(snaps[i].extents);
	free(snaps);
	free(names.slots);
	free(loaded.range);
	return err;
}

/* Writes the file with the exiting threads' chunks held in place. */
static int tt__write_held(struct tt__out *out, void *unused)
{
	(void)unused;
	tt__hold_chunks(1);
	int err = tt__write_to(out);
	tt__hold_chunks(0);
	return err;
}

/* Runs `write` on `out`, open on `fd`, and closes it. */
static int tt__write_fd(struct tt__out *out, int fd, tt__file_writer write, void *arg)
{
	*out = (struct tt__out){.fd = fd};
	int err = write(out, arg);
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}

int tt__write_file(const char *path)
{
	return tt__write_file_with(path, tt__write_held, NULL);
}

int tt__write_default_file(void)
{
	char path[4096];
	int err = tt__default_path(path, sizeof path);
	if (!err)
		err = tt__write_file(path);
	if (!err && !tt__output_in_place(path))
		tt__list_written(path);
	return err;
}

/* The descriptor a path names as the program's own: /dev/stdout, /dev/stderr,
 * /dev/fd/N, /proc/self/fd/N (thread-self, this pid); -1 for any other path. Written
 * through that descriptor, whatever it is (a file `prog > out` opened, a socket):
 * renaming over the name would replace /dev/stdout itself. */
static int tt__named_descriptor(const char *path)
{
	if (strcmp(path, "/dev/stdout") == 0)
		return 1;
	if (strcmp(path, "/dev/stderr") == 0)
		return 2;
	char self[32];
	snprintf(self, sizeof self, "/proc/%d/fd/", (int)getpid());
	static const char *const dirs[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"};
	const char *number = NULL;
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		if (strncmp(path, dirs[i], strlen(dirs[i])) == 0)
			number = path + strlen(dirs[i]);
	if (strncmp(path, self, strlen(self)) == 0)
		number = path + strlen(self);
	if (!number || *number < '0' || *number > '9')
		return -1;
	char *end;
	long fd = strtol(number, &end, 10);
	return *end || fd > INT_MAX ? -1 : (int)fd;
}

int tt__output_in_place(const char *path)
{
	if (tt__named_descriptor(path) >= 0)
		return 1;
	struct stat st;
	if (lstat(path, &st) < 0)
		return 0;
	/* A link of our own or the system's to a device (/dev/stdout, /proc/self/fd/1)
	 * is the device; another user's link is replaced, never followed. */
	if (S_ISLNK(st.st_mode) && (st.st_uid == geteuid() || st.st_uid == 0) && stat(path, &st) < 0)
		return 0;
	return S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode);
}

int tt__open_in_place(const char *path)
{
	int named = tt__named_descriptor(path);
	if (named >= 0) {
		int fd = fcntl(named, F_DUPFD_CLOEXEC, 0);
		return fd < 0 ? -errno : fd;
	}
	/* A FIFO with no reader fails (ENXIO) rather than blocking the program. */
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENXIO ? -EPIPE : -errno;
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* An unnamed file (O_TMPFILE) in PATH's directory, or -errno where the file system
 * has none. */
static int tt__open_unnamed(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path) >= (int)sizeof dir)
		return -ENAMETOOLONG;
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

/* Names the unnamed file `fd` PATH where nothing is there (tmp then ""), or else a
 * new name beside PATH, in tmp, for the caller to rename over it. */
static int tt__name_unnamed(int fd, const char *path, char *tmp, size_t cap)
{
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	tmp[0] = 0;
	/* Nothing at PATH: named there at once (nothing to rename, no moment when a
	 * temporary name exists). */
	if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	for (unsigned attempt = 0; attempt < 100; attempt++) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (snprintf(tmp, cap, "%s.tmp-%d-%lx", path, (int)getpid(),
			     (unsigned long)now.tv_nsec ^ attempt) >= (int)cap)
			return -ENAMETOOLONG;
		if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno != EEXIST) {
			int err = -errno;
			tmp[0] = 0;
			return err;
		}
	}
	tmp[0] = 0;
	return -EEXIST;
}

int tt__create_replacing(const char *path, char *tmp, size_t cap)
{
	if (snprintf(tmp, cap, "%s.tmp-XXXXXX", path) >= (int)cap)
		return -ENAMETOOLONG;
	int fd = mkostemp(tmp, O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int tt__open_output(const char *path, int *in_place)
{
	*in_place = tt__output_in_place(path);
	return *in_place ? tt__open_in_place(path) : tt__create_new(path);
}

int tt__create_new(const char *path)
{
	char tmp[4096 + 16];
	int fd = tt__create_replacing(path, tmp, sizeof tmp);
	if (fd >= 0 && rename(tmp, path) < 0) {
		int err = -errno;
		unlink(tmp);
		close(fd);
		return err;
	}
	return fd;
}

int tt__write_file_with(const char *path, tt__file_writer write, void *arg)
{
	struct tt__out *out = malloc(sizeof *out);
	if (!out)
		return -ENOMEM;
	struct stat st;
	int err;
	/* A device or a pipe (TICKTRACE_OUT=/dev/null, a FIFO) is written in place:
	 * renaming over it would replace the device node. */
	if (tt__output_in_place(path)) {
		int fd = tt__open_in_place(path);
		err = fd < 0 ? fd : tt__write_fd(out, fd, write, arg);
		free(out);
		return err;
	}
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		free(out);
		return -EISDIR;
	}
	/* A file with no name while it is written: a run killed meanwhile leaves
	 * nothing behind. It is named beside PATH when complete, then renamed over it. */
	char tmp[4096 + 16] = "";
	int fd = tt__open_unnamed(path);
	int unnamed = fd >= 0;
	if (!unnamed)
		fd = tt__create_replacing(path, tmp, sizeof tmp);
	if (fd < 0) {
		free(out);
		return fd;
	}
	int keep = unnamed ? dup(fd) : -1; /* (tt__write_fd closes fd) */
	err = unnamed && keep < 0 ? -errno : tt__write_fd(out, fd, write, arg);
	if (!err && unnamed)
		err = tt__name_unnamed(keep, path, tmp, sizeof tmp);
	if (keep >= 0)
		close(keep);
	if (!err && tmp[0] && rename(tmp, path) < 0)
		err = -errno;
	if (err && tmp[0])
		unlink(tmp);
	free(out);
	return err;
}

void tt__list_written(const char *path)
{
	const char *list = getenv("TICKTRACE_LIST");
	char line[4096 + 4096 + 2];
	size_t len = 0;
	if (!list || !*list)
		return;
	if (path[0] != '/') {
		if (!getcwd(line, 4096))
			return;
		len = strlen(line);
		line[len++] = '/';
	}
	size_t n = strlen(path);
	if (n > 4096)
		return;
	memcpy(line + len, path, n);
	len += n;
	line[len++] = '\n';
	/* One write with O_APPEND: lines of processes writing at once never mix. */
	int fd = open(list, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	ssize_t written = write(fd, line, len);
	(void)written; /* a list that cannot take the line: the file is written all the same */
	close(fd);
}
