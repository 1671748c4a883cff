/* A raw file's header and sections, validated one by one (sizes, counts, END totals;
 * a packed EVENTS section unpacked whole), into the struct tt_file. */
#include "read_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* adjtimex's state and status bits as Linux's <sys/timex.h> has them: a MACHINE section
 * holds what the recording kernel said, whichever system reads it. */
#define TT_TIME_ERROR 5
#define TT_STA_UNSYNC 0x0040

/* Bytes validated between two releases of the mapping. */
#define TT_RELEASE_BYTES (8u << 20)

/* A bounded view of one section's payload, read front to back. */
struct tt_cursor {
	const struct tt_file *f;
	uint64_t pos; /* file offset */
	uint64_t end;
};

static bool tt_cursor_take(struct tt_cursor *c, void *out, uint64_t n)
{
	if (c->end - c->pos < n)
		return false;
	memcpy(out, c->f->data + c->pos, n);
	c->pos += n;
	return true;
}

static bool tt_cursor_str(struct tt_cursor *c, struct tt_str *s, uint32_t len)
{
	if (c->end - c->pos < len)
		return false;
	s->ptr = (const char *)c->f->data + c->pos;
	s->len = len;
	c->pos += len;
	return true;
}

/* tsc_hz is what the anchors measured: ticks between them over nanoseconds. A rate
 * that they do not bear out (by more than 1%, for a live file whose end anchor and
 * rate are refreshed one after the other) is a damaged header, and would put the
 * events anywhere in time. */
static int tt_check_anchors(struct tt_file *f)
{
	const struct tt_file_header *h = &f->header;
	if (h->end.tsc <= h->start.tsc || h->end.monotonic_ns <= h->start.monotonic_ns)
		return TT_FAIL(f, offsetof(struct tt_file_header, end),
			       "the end anchor (TSC %" PRIu64 ", %" PRId64 " ns) is not after the start "
			       "anchor (TSC %" PRIu64 ", %" PRId64 " ns)", h->end.tsc,
			       h->end.monotonic_ns, h->start.tsc, h->start.monotonic_ns);
	uint64_t ticks = h->end.tsc - h->start.tsc;
	uint64_t ns = (uint64_t)h->end.monotonic_ns - (uint64_t)h->start.monotonic_ns;
	unsigned __int128 measured = (unsigned __int128)ticks * 1000000000 / ns;
	unsigned __int128 off = measured > h->tsc_hz ? measured - h->tsc_hz : h->tsc_hz - measured;
	if (off * 100 > measured)
		return TT_FAIL(f, offsetof(struct tt_file_header, tsc_hz),
			       "tsc_hz %" PRIu64 " is not what its anchors measured: %" PRIu64
			       " ticks in %" PRIu64 " ns", h->tsc_hz, ticks, ns);
	return 0;
}

/* The times a record may hold. A time far outside the run is a damaged record:
 * refused, never clamped, for drawn at the run's edge it would look like a real
 * event. Around the anchors: a minute, far more than the TSCs of two cores differ.
 * A live file's end anchor is refreshed every tick, and records go on after the
 * last one: an hour. A streamed file's is refreshed as it is written, never in a
 * FIFO: no bound after the run's start. */
static void tt_record_span(struct tt_file *f)
{
	const struct tt_file_header *h = &f->header;
	uint64_t minute = h->tsc_hz > UINT64_MAX / 3600 ? UINT64_MAX / 3600 : h->tsc_hz * 60;
	f->tsc_min = h->start.tsc > minute ? h->start.tsc - minute : 0;
	uint64_t after = h->flags & TT_FILE_STREAMED ? UINT64_MAX :
			 h->flags & TT_FILE_LIVE ? 60 * minute : minute;
	f->tsc_max = h->end.tsc > UINT64_MAX - after ? UINT64_MAX : h->end.tsc + after;
}

static bool tt_all_zeros(const uint8_t *data, size_t size)
{
	for (size_t i = 0; i < size; i++)
		if (data[i])
			return false;
	return size > 0;
}

/* A log of the runtime's lines (base/lines.c), which record names and writes beside its
 * traces: every line of it begins so. */
static bool tt_is_log(const struct tt_file *f)
{
	static const char line[] = "ticktrace: ";
	return f->size >= sizeof line - 1 && memcmp(f->data, line, sizeof line - 1) == 0;
}

int tt_file_read_header(struct tt_file *f)
{
	struct tt_file_header *h = &f->header;
	size_t magic = f->size < TT_FILE_MAGIC_LEN ? f->size : TT_FILE_MAGIC_LEN;
	if (memcmp(f->data, TT_FILE_MAGIC, magic) != 0) {
		if (tt_all_zeros(f->data, f->size < sizeof(*h) ? f->size : sizeof(*h)))
			return TT_FAIL(f, 0, "holds nothing (all zeros where its header goes): a "
					     "live file whose run was killed as it began, before it "
					     "wrote its header, or a file never written");
		if (tt_is_log(f))
			return TT_FAIL(f, 0, "a log of ticktrace's lines (text), not a raw file: the "
					     "runtime writes one beside a trace where the process's "
					     "stderr was not a terminal; leave it out (its name ends "
					     "in .log)");
		return TT_FAIL(f, 0, "not a ticktrace raw file (wrong magic)");
	}
	if (f->size < sizeof(*h))
		return TT_FAIL(f, f->size, "truncated file header (%zu %s, need %zu)", f->size,
			       TT_BYTES(f->size), sizeof(*h));
	memcpy(h, f->data, sizeof(*h));
	if (h->version != TT_FILE_VERSION)
		return TT_FAIL(f, offsetof(struct tt_file_header, version),
			       "format version %" PRIu32 ", this reader knows version %d",
			       h->version, TT_FILE_VERSION);
	if (h->header_size < sizeof(*h) || h->header_size % 16 != 0 || h->header_size > f->size)
		return TT_FAIL(f, offsetof(struct tt_file_header, header_size),
			       "header_size %" PRIu32 " is not a multiple of 16 between %zu and "
			       "the file size %zu",
			       h->header_size, sizeof(*h), f->size);
	const char *why;
	if (tt_clock_init(&f->clock, h, &why) < 0)
		return TT_FAIL(f, offsetof(struct tt_file_header, tsc_source), "%s", why);
	if (tt_check_anchors(f) < 0)
		return -1;
	tt_record_span(f);
	f->first_section = h->header_size;
	return 0;
}

static int tt_read_process(struct tt_file *f, struct tt_cursor *c, bool *seen)
{
	struct tt_process_info pi;
	uint64_t at = c->pos;
	if (*seen)
		return TT_FAIL(f, at, "a second PROCESS section");
	*seen = true;
	if (!tt_cursor_take(c, &pi, sizeof(pi)) ||
	    !tt_cursor_str(c, &f->process.name, pi.name_len) ||
	    !tt_cursor_str(c, &f->process.cmdline, pi.cmdline_len))
		return TT_FAIL(f, at, "PROCESS section too small for its name and command line");
	f->process.pid = pi.pid;
	f->process.ppid = pi.ppid;
	return 0;
}

#define TT_MACHINE_AT(field) (at + offsetof(struct tt_machine_info, field))

/* A wall clock reading: zero without its flag; with it, at an anchor the run's TSC
 * can be (`tsc` if not 0), TAI no less than REALTIME and no further ahead than the
 * kernel lets it be, errors not below 0, a state adjtimex returns. */
static int tt_read_clock_reading(struct tt_file *f, uint64_t at, const struct tt_machine_info *m,
				 const struct tt_clock_reading *r, uint32_t flag, const char *which,
				 uint64_t tsc)
{
	static const int64_t max_tai_ahead_ns = INT64_C(100001) * 1000000000; /* MAX_TAI_OFFSET, +1 s */
	at += (uint64_t)((const char *)r - (const char *)m);
	if (!(m->flags & flag)) {
		static const struct tt_clock_reading none;
		if (memcmp(r, &none, sizeof none))
			return TT_FAIL(f, at, "MACHINE section has a %s clock reading without its flag", which);
		return 0;
	}
	if (tsc && r->tsc != tsc)
		return TT_FAIL(f, at + offsetof(struct tt_clock_reading, tsc),
			       "MACHINE section's %s clock reading at TSC %" PRIu64 ", not the start "
			       "anchor's %" PRIu64, which, r->tsc, tsc);
	if (!tsc && r->tsc < f->header.start.tsc)
		return TT_FAIL(f, at + offsetof(struct tt_clock_reading, tsc),
			       "MACHINE section's %s clock reading at TSC %" PRIu64 ", before the "
			       "start anchor's %" PRIu64, which, r->tsc, f->header.start.tsc);
	int64_t tai_ahead = r->tai_ns - r->realtime_ns;
	if (tai_ahead < -1000000000 || tai_ahead > max_tai_ahead_ns)
		return TT_FAIL(f, at + offsetof(struct tt_clock_reading, tai_ns),
			       "MACHINE section's %s CLOCK_TAI is %" PRId64 " ns from CLOCK_REALTIME "
			       "(TAI is 0 to 100000 s ahead)", which, tai_ahead);
	if (r->esterror_ns < 0)
		return TT_FAIL(f, at + offsetof(struct tt_clock_reading, esterror_ns),
			       "MACHINE section's %s clock error %" PRId64 " ns is below 0", which,
			       r->esterror_ns);
	if (r->maxerror_ns < 0)
		return TT_FAIL(f, at + offsetof(struct tt_clock_reading, maxerror_ns),
			       "MACHINE section's %s clock's maximum error %" PRId64 " ns is below 0",
			       which, r->maxerror_ns);
	if (r->state < -1 || r->state > TT_TIME_ERROR)
		return TT_FAIL(f, at + offsetof(struct tt_clock_reading, state),
			       "MACHINE section's %s clock state %" PRId32 " is none adjtimex returns",
			       which, r->state);
	return 0;
}

bool tt_clock_unsynchronized(const struct tt_clock_reading *r)
{
	return r->state == TT_TIME_ERROR || (r->status & TT_STA_UNSYNC);
}

/* The machine and its clocks: offsets that put its start before the machine's boot
 * are refused, and every field that is none the runtime writes. The first version's
 * section (TT_MACHINE_INFO_V1_SIZE) leaves the rest 0; a later version's fields
 * after the struct are skipped. */
static int tt_read_machine(struct tt_file *f, struct tt_cursor *c, bool seen_process, bool *seen)
{
	struct tt_machine_info *m = &f->machine;
	uint64_t at = c->pos;
	if (!seen_process || *seen)
		return TT_FAIL(f, at, "a MACHINE section %s", *seen ? "again" : "before PROCESS");
	*seen = true;
	size_t size = c->end - c->pos == TT_MACHINE_INFO_V1_SIZE ? TT_MACHINE_INFO_V1_SIZE : sizeof *m;
	*m = (struct tt_machine_info){0};
	if (!tt_cursor_take(c, m, size))
		return TT_FAIL(f, at, "MACHINE section too small for its %zu bytes", sizeof *m);
	c->pos = c->end;
	f->machine_known = size == sizeof *m;
	if (!(m->flags & TT_MACHINE_TICK) != !m->tick_ns || (!(m->flags & TT_MACHINE_TICK) && (m->flags & TT_MACHINE_TICK_EACH)))
		return TT_FAIL(f, TT_MACHINE_AT(tick_ns), "MACHINE section's tick of %" PRIu32 " ns %s TT_MACHINE_TICK",
			       m->tick_ns, m->flags & TT_MACHINE_TICK ? "with" : "without");
	if (!(m->flags & TT_MACHINE_TIMENS) && (m->timens_monotonic_ns || m->timens_boottime_ns))
		return TT_FAIL(f, TT_MACHINE_AT(timens_monotonic_ns),
			       "MACHINE section has time namespace offsets without TT_MACHINE_TIMENS");
	const struct tt_anchor *start = &f->header.start;
	if (start->monotonic_ns < m->timens_monotonic_ns)
		return TT_FAIL(f, TT_MACHINE_AT(timens_monotonic_ns),
			       "time namespace's CLOCK_MONOTONIC offset %" PRId64 " ns puts the run's "
			       "start (%" PRId64 " ns) before the machine's boot", m->timens_monotonic_ns,
			       start->monotonic_ns);
	if (start->boottime_ns < m->timens_boottime_ns)
		return TT_FAIL(f, TT_MACHINE_AT(timens_boottime_ns),
			       "time namespace's CLOCK_BOOTTIME offset %" PRId64 " ns puts the run's "
			       "start (%" PRId64 " ns) before the machine's boot", m->timens_boottime_ns,
			       start->boottime_ns);
	if (m->host_name_len > sizeof m->host_name)
		return TT_FAIL(f, TT_MACHINE_AT(host_name_len),
			       "MACHINE section's host name of %" PRIu32 " %s (at most %zu)",
			       m->host_name_len, TT_BYTES(m->host_name_len), sizeof m->host_name);
	for (uint32_t i = 0; i < sizeof m->host_name; i++)
		if ((i < m->host_name_len) != (m->host_name[i] != 0))
			return TT_FAIL(f, TT_MACHINE_AT(host_name) + i,
				       i < m->host_name_len ? "MACHINE section's host name holds a NUL" :
				       "MACHINE section has bytes after its host name");
	int rc = tt_read_clock_reading(f, at, m, &m->start, TT_MACHINE_START_CLOCK, "start",
				       start->tsc);
	return rc ? rc : tt_read_clock_reading(f, at, m, &m->written, TT_MACHINE_WRITTEN_CLOCK,
					       "written", 0);
}

/* A section of `count` entries (each an `entry`, "site") read: 0 where they were all
 * of it, else the bytes left are an error. */
static int tt_read_to_end(struct tt_file *f, const struct tt_cursor *c, const char *section,
			  uint64_t count, const char *entry)
{
	if (c->pos == c->end)
		return 0;
	return TT_FAIL(f, c->pos, "%" PRIu64 " %s left in %s after its %" PRIu64 " %s%s", c->end - c->pos,
		       TT_BYTES(c->end - c->pos), section, count, entry, count == 1 ? "" : "s");
}

/* SITES and MODULES start with a count of entries; a count the payload cannot hold
 * is refused before anything is allocated. */
static int tt_read_count(struct tt_file *f, struct tt_cursor *c, size_t entry, uint64_t *count,
			 const char *what)
{
	uint64_t at = c->pos;
	if (!tt_cursor_take(c, count, sizeof(*count)))
		return TT_FAIL(f, at, "%s section too small for its count", what);
	if (*count > (c->end - c->pos) / entry)
		return TT_FAIL(f, at, "%s count %" PRIu64 " does not fit the section's %" PRIu64
			       " %s", what, *count, c->end - c->pos, TT_BYTES(c->end - c->pos));
	return 0;
}

/* The descriptions of one address hold one after the other: each from where the one
 * before it (by until) ends. */
static void tt_site_spans(struct tt_file *f, uint64_t address)
{
	uint32_t pos;
	if (!tt_map_get(&f->site_map, address, &pos))
		return;
	for (uint32_t p = pos + 1; p; p = f->sites[p - 1].next_same) {
		struct tt_site *s = &f->sites[p - 1];
		s->since = 0;
		for (uint32_t q = pos + 1; q; q = f->sites[q - 1].next_same) {
			uint64_t until = f->sites[q - 1].until;
			if (until < s->until && until > s->since)
				s->since = until;
		}
	}
}

/* Appends a site (a call site, or a function) and indexes it by address; 0 or -1
 * (also for a second description of an address for the same time span). */
int tt_file_add_site(struct tt_file *f, const struct tt_site *s, size_t *cap, uint64_t at)
{
	uint32_t head;
	bool another = tt_map_get(&f->site_map, s->address, &head);
	if (another && tt_file_site_until(f, s->address, s->until))
		return TT_FAIL(f, at, s->is_func ? "function address 0x%" PRIx64 " is listed twice, "
			       "or is also a call site" : "site address 0x%" PRIx64 " is described twice",
			       s->address);
	if (f->nsites >= UINT32_MAX / 2 || tt_reserve(&f->sites, cap, f->nsites, sizeof(*s)) < 0 ||
	    (!another && tt_map_put(&f->site_map, s->address, (uint32_t)f->nsites) < 0))
		return TT_FAIL(f, at, "out of memory for %zu sites", f->nsites);
	f->sites[f->nsites] = *s;
	if (another) {
		f->sites[f->nsites].next_same = f->sites[head].next_same;
		f->sites[head].next_same = (uint32_t)f->nsites + 1;
	}
	f->nsites++;
	if (another)
		tt_site_spans(f, s->address);
	return 0;
}

static int tt_read_sites(struct tt_file *f, struct tt_cursor *c, uint64_t section, size_t *cap,
			 uint64_t until)
{
	uint64_t count = 0; /* (set by tt_read_count; gcc -O3 cannot tell) */
	if (tt_read_count(f, c, sizeof(struct tt_site_info), &count, "SITES") < 0)
		return -1;
	for (uint64_t i = 0; i < count; i++) {
		struct tt_site_info si;
		struct tt_site s = {.defined_at = section, .until = until};
		uint64_t at = c->pos;
		if (!tt_cursor_take(c, &si, sizeof(si)) || !tt_cursor_str(c, &s.name, si.name_len) ||
		    !tt_cursor_str(c, &s.file, si.file_len) || !tt_cursor_str(c, &s.func, si.func_len))
			return TT_FAIL(f, at, "site %" PRIu64 " of %" PRIu64
				       " runs past the end of its SITES section", i, count);
		struct tt_str *strings[] = {&s.name, &s.file, &s.func};
		for (size_t k = 0; k < 3; k++)
			if (strings[k]->len > TT_MAX_STRING) {
				strings[k]->len = TT_MAX_STRING;
				f->names_cut++;
			}
		s.address = si.address;
		s.line = si.line;
		/* Perfetto shows an empty name from JSON as "[No name]" and from protobuf as
		 * nothing: one name for it in every output and report */
		static const char unnamed[] = "(no name)";
		if (s.name.len == 0)
			s.name = (struct tt_str){unnamed, sizeof unnamed - 1};
		if (tt_file_add_site(f, &s, cap, at) < 0)
			return -1;
	}
	return tt_read_to_end(f, c, "SITES", count, "site");
}

/* Each address becomes a site of its own, which its FUNC_ENTER slices take. */
static int tt_read_funcs(struct tt_file *f, struct tt_cursor *c, uint64_t section, size_t *cap,
			 uint64_t until)
{
	uint64_t count = 0; /* (set by tt_read_count; gcc -O3 cannot tell) */
	if (tt_read_count(f, c, sizeof(uint64_t), &count, "FUNCS") < 0)
		return -1;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t at = c->pos, address = 0;
		tt_cursor_take(c, &address, sizeof(address)); /* the count fits: checked */
		struct tt_site s = {.address = address, .defined_at = section, .is_func = true,
				    .until = until};
		if (tt_file_add_site(f, &s, cap, at) < 0)
			return -1;
		f->nfuncs++;
	}
	return tt_read_to_end(f, c, "FUNCS", count, "function");
}

/* The names of sites' arguments (TT_BEGIN_NAMED_ARG), each of a site read before. */
static int tt_read_arg_names(struct tt_file *f, struct tt_cursor *c, uint64_t until)
{
	uint64_t count = 0; /* (set by tt_read_count; gcc -O3 cannot tell) */
	if (tt_read_count(f, c, sizeof(struct tt_arg_name_info), &count, "ARG_NAMES") < 0)
		return -1;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t at = c->pos;
		struct tt_arg_name_info ai;
		struct tt_str name;
		if (!tt_cursor_take(c, &ai, sizeof(ai)) || !tt_cursor_str(c, &name, ai.name_len))
			return TT_FAIL(f, at, "argument name %" PRIu64 " of %" PRIu64
				       " runs past the end of its ARG_NAMES section", i, count);
		struct tt_site *site = tt_file_site_until(f, ai.address, until);
		if (!site || site->is_func)
			return TT_FAIL(f, at, "argument name of 0x%" PRIx64 ", which no SITES section "
				       "before it describes", ai.address);
		if (name.len) /* (none: "arg") */
			site->arg_name = name;
		site->signed_arg = ai.flags & TT_ARG_SIGNED;
	}
	return tt_read_to_end(f, c, "ARG_NAMES", count, "name");
}

/* Functions are named by their address until symbols name them. */
#define TT_HEX_NAME 20 /* "0x" and 16 digits, NUL */

static int tt_name_funcs_hex(struct tt_file *f)
{
	if (!f->nfuncs)
		return 0;
	f->func_hex = malloc(f->nfuncs * TT_HEX_NAME);
	if (!f->func_hex)
		return tt_error("%s: out of memory for %zu functions", f->path, f->nfuncs);
	char *name = f->func_hex;
	for (size_t i = 0; i < f->nsites; i++) {
		struct tt_site *s = &f->sites[i];
		if (!s->is_func)
			continue;
		int n = snprintf(name, TT_HEX_NAME, "0x%" PRIx64, s->address);
		s->name = s->func = (struct tt_str){name, (uint32_t)n};
		name += TT_HEX_NAME;
	}
	return 0;
}

/* The module like `m` whose span ends at `until`, or NULL. */
static struct tt_module *tt_module_known(const struct tt_file *f, const struct tt_module *m,
					 uint64_t until)
{
	for (size_t i = 0; i < f->nmodules; i++) {
		struct tt_module *k = &f->modules[i];
		if (k->start == m->start && k->end == m->end && k->file_offset == m->file_offset &&
		    k->until == until && k->path.len == m->path.len &&
		    memcmp(k->path.ptr, m->path.ptr, m->path.len) == 0)
			return k;
	}
	return NULL;
}

/* A module first said to be unloaded at m->until: what was described of its addresses
 * before without an end (while it was loaded) ends then. Whether it was listed so. */
static bool tt_module_unloaded(struct tt_file *f, const struct tt_module *m)
{
	for (size_t i = 0; i < f->nsites; i++) {
		struct tt_site *s = &f->sites[i];
		if (s->until == UINT64_MAX && s->address >= m->start && s->address < m->end &&
		    !tt_file_site_until(f, s->address, m->until)) {
			s->until = m->until;
			tt_site_spans(f, s->address);
		}
	}
	struct tt_module *loaded = tt_module_known(f, m, UINT64_MAX);
	if (loaded)
		loaded->until = m->until;
	return loaded != NULL;
}

static int tt_read_modules(struct tt_file *f, struct tt_cursor *c, size_t *cap, uint64_t until)
{
	uint64_t count = 0; /* (set by tt_read_count; gcc -O3 cannot tell) */
	if (tt_read_count(f, c, sizeof(struct tt_module_info), &count, "MODULES") < 0)
		return -1;
	for (uint64_t i = 0; i < count; i++) {
		struct tt_module_info mi;
		struct tt_module m;
		uint64_t at = c->pos;
		if (!tt_cursor_take(c, &mi, sizeof(mi)) || !tt_cursor_str(c, &m.path, mi.path_len) ||
		    !tt_cursor_str(c, &m.build_id, mi.build_id_len))
			return TT_FAIL(f, at, "module %" PRIu64 " of %" PRIu64
				       " runs past the end of its MODULES section", i, count);
		m.start = mi.start;
		m.end = mi.end;
		m.file_offset = mi.file_offset;
		m.until = until;
		/* A streamed file lists the modules at start and again at the end. */
		if (tt_module_known(f, &m, until) || (until != UINT64_MAX && tt_module_unloaded(f, &m)))
			continue;
		if (tt_reserve(&f->modules, cap, f->nmodules, sizeof(m)) < 0)
			return TT_FAIL(f, at, "out of memory for %zu modules", f->nmodules);
		f->modules[f->nmodules++] = m;
	}
	return tt_read_to_end(f, c, "MODULES", count, "module");
}

/* A thread's counts, flags and name, from its THREAD or THREAD_TOTALS section. */
static int tt_thread_totals(struct tt_file *f, struct tt_thread *t, const struct tt_thread_info *ti,
			    struct tt_str name, uint64_t at)
{
	f->dropped -= t->dropped_total;
	t->dropped_total = 0;
	t->name = name;
	t->flags = ti->flags;
	t->events = ti->events;
	for (int i = 0; i < TT_DROP_CAUSES; i++) {
		t->dropped[i] = ti->dropped[i];
		if (__builtin_add_overflow(t->dropped_total, ti->dropped[i], &t->dropped_total) ||
		    __builtin_add_overflow(f->dropped, ti->dropped[i], &f->dropped))
			return TT_FAIL(f, at + offsetof(struct tt_thread_info, dropped),
				       "dropped counts overflow 64 bits");
	}
	return 0;
}

static int tt_read_thread(struct tt_file *f, struct tt_cursor *c, uint64_t section, size_t *cap)
{
	struct tt_thread_info ti;
	struct tt_thread t = {.file = f, .offset = section};
	struct tt_str name;
	uint64_t at = c->pos;
	if (!tt_cursor_take(c, &ti, sizeof(ti)) || !tt_cursor_str(c, &name, ti.name_len))
		return TT_FAIL(f, at, "THREAD section too small for its name");
	uint32_t dup;
	if (tt_map_get(&f->thread_map, ti.index, &dup))
		return TT_FAIL(f, at, "a second THREAD section for thread index %" PRIu32, ti.index);
	t.index = ti.index;
	t.tid = ti.tid;
	if (tt_thread_totals(f, &t, &ti, name, at) < 0)
		return -1;
	if (f->nthreads >= UINT32_MAX / 2 ||
	    tt_reserve(&f->threads, cap, f->nthreads, sizeof(t)) < 0 ||
	    tt_map_put(&f->thread_map, t.index, (uint32_t)f->nthreads) < 0)
		return TT_FAIL(f, at, "out of memory for %zu threads", f->nthreads);
	f->threads[f->nthreads++] = t;
	return 0;
}

/* The thread a section names; NULL after reporting that it has no THREAD section
 * before it. */
static struct tt_thread *tt_thread_named(const struct tt_file *f, uint32_t index, uint64_t at,
					 const char *section)
{
	uint32_t pos;
	if (tt_map_get(&f->thread_map, index, &pos))
		return &f->threads[pos];
	TT_FAIL(f, at, "%s for thread index %" PRIu32 ", which has no THREAD section before it",
		section, index);
	return NULL;
}

/* A streamed thread's final totals, name and flags. */
static int tt_read_thread_totals(struct tt_file *f, struct tt_cursor *c)
{
	struct tt_thread_info ti;
	struct tt_str name;
	uint64_t at = c->pos;
	if (!tt_cursor_take(c, &ti, sizeof(ti)) || !tt_cursor_str(c, &name, ti.name_len))
		return TT_FAIL(f, at, "THREAD_TOTALS section too small for its name");
	struct tt_thread *t = tt_thread_named(f, ti.index, at, "THREAD_TOTALS");
	if (!t)
		return -1;
	if (ti.tid != t->tid)
		return TT_FAIL(f, at + offsetof(struct tt_thread_info, tid),
			       "THREAD_TOTALS of thread index %" PRIu32 " names tid %" PRIu32
			       ", its THREAD section %" PRIu32, ti.index, ti.tid, t->tid);
	return tt_thread_totals(f, t, &ti, name, at);
}

/* The thread whose records an EVENTS section's header says it continues. */
static struct tt_thread *tt_events_thread(struct tt_file *f, const struct tt_events_info *ei,
					  uint64_t at, const char *what)
{
	struct tt_thread *t = tt_thread_named(f, ei->thread_index, at, what);
	if (t && ei->first_record != t->records) {
		TT_FAIL(f, at + offsetof(struct tt_events_info, first_record),
			"%s section starts at record %" PRIu64 " of thread index %" PRIu32
			", but its earlier sections hold %" PRIu64,
			what, ei->first_record, t->index, t->records);
		return NULL;
	}
	return t;
}

/* A section's records, in the file or unpacked: the thread's first time, its count. */
int tt_file_add_events(struct tt_file *f, struct tt_thread *t, struct tt_events ev,
			 const struct tt_record *r, uint64_t at)
{
	for (uint64_t i = 0; i < ev.count && !t->has_first; i++) {
		if (tt_record_timed(r[i].word)) {
			t->first_tsc = r[i].tsc;
			t->has_first = true;
		}
	}
	if (tt_reserve(&t->sections, &t->sections_cap, t->nsections, sizeof(*t->sections)) < 0)
		return TT_FAIL(f, at, "out of memory for %zu EVENTS sections", t->nsections);
	t->sections[t->nsections++] = ev;
	t->records += ev.count;
	f->records += ev.count;
	return 0;
}

static int tt_read_events(struct tt_file *f, struct tt_cursor *c)
{
	struct tt_events_info ei;
	uint64_t at = c->pos;
	if (!tt_cursor_take(c, &ei, sizeof(ei)))
		return TT_FAIL(f, at, "EVENTS section too small for its header");
	if ((c->end - c->pos) % sizeof(struct tt_record) != 0)
		return TT_FAIL(f, at, "EVENTS payload of %" PRIu64 " %s is not whole records",
			       c->end - c->pos, TT_BYTES(c->end - c->pos));
	struct tt_thread *t = tt_events_thread(f, &ei, at, "EVENTS");
	if (!t)
		return -1;
	uint64_t count = (c->end - c->pos) / sizeof(struct tt_record);
	const struct tt_record *r = (const struct tt_record *)(f->data + c->pos);
	return tt_file_add_events(f, t, (struct tt_events){.records = r, .count = count, .offset = c->pos},
			     r, at);
}

/* TICKTRACE_MIN_DUR's erased calls of a thread, per function (FILTERED), or with
 * `dropped` the calls it dropped with its buffer used up (DROPPED_CALLS). */
static int tt_read_filtered(struct tt_file *f, struct tt_cursor *c, bool dropped)
{
	const char *what = dropped ? "DROPPED_CALLS" : "FILTERED";
	struct tt_filtered_info fi;
	uint64_t at = c->pos;
	if (!tt_cursor_take(c, &fi, sizeof(fi)))
		return TT_FAIL(f, at, "%s section too small for its header", what);
	if (c->end - c->pos != (uint64_t)fi.count * sizeof(struct tt_filtered_fn))
		return TT_FAIL(f, at + offsetof(struct tt_filtered_info, count),
			       "%s section of %" PRIu64 " %s does not hold its %" PRIu32
			       " functions", what, c->end - c->pos, TT_BYTES(c->end - c->pos), fi.count);
	if (!fi.min_dur_ns != dropped)
		return TT_FAIL(f, at + offsetof(struct tt_filtered_info, min_dur_ns),
			       dropped ? "DROPPED_CALLS section with a min_dur_ns" :
				       "FILTERED section with no min_dur_ns");
	struct tt_thread *t = tt_thread_named(f, fi.thread_index, at, what);
	if (!t)
		return -1;
	struct tt_filtered_fn **fns = dropped ? &t->dropped_calls : &t->filtered;
	if (*fns)
		return TT_FAIL(f, at, "a second %s section of thread index %" PRIu32, what,
			       fi.thread_index);
	if (!(*fns = calloc(fi.count ? fi.count : 1, sizeof(**fns))))
		return TT_FAIL(f, at, "out of memory for %" PRIu32 " functions", fi.count);
	for (uint32_t i = 0; i < fi.count; i++) {
		uint64_t pos = c->pos + i * sizeof(struct tt_filtered_fn);
		struct tt_filtered_fn *fn = &(*fns)[i];
		memcpy(fn, f->data + pos, sizeof *fn);
		if (!fn->address || !fn->calls)
			return TT_FAIL(f, pos + (fn->address ? offsetof(struct tt_filtered_fn, calls) : 0),
				       "%s function %" PRIu32 " of thread index %" PRIu32 " has no %s",
				       what, i, fi.thread_index, fn->address ? "calls" : "address");
	}
	if (dropped) {
		t->ndropped_calls = fi.count;
	} else {
		t->nfiltered = fi.count;
		t->filtered_min_ns = fi.min_dur_ns;
	}
	c->pos = c->end;
	return 0;
}

/* The functions the run turned off (TURNED_OFF), each named in a FUNCS section. */
static int tt_read_turned_off(struct tt_file *f, struct tt_cursor *c)
{
	struct tt_turned_off_info ti;
	uint64_t at = c->pos;
	if (f->turned_off)
		return TT_FAIL(f, at, "a second TURNED_OFF section");
	if (!tt_cursor_take(c, &ti, sizeof(ti)))
		return TT_FAIL(f, at, "TURNED_OFF section too small for its header");
	if (c->end - c->pos != (uint64_t)ti.count * sizeof(struct tt_turned_off_fn))
		return TT_FAIL(f, at + offsetof(struct tt_turned_off_info, count),
			       "TURNED_OFF section of %" PRIu64 " %s does not hold its %" PRIu32
			       " functions", c->end - c->pos, TT_BYTES(c->end - c->pos), ti.count);
	if (!ti.after_calls)
		return TT_FAIL(f, at + offsetof(struct tt_turned_off_info, after_calls),
			       "TURNED_OFF section with no after_calls");
	if (!(f->turned_off = calloc(ti.count ? ti.count : 1, sizeof(*f->turned_off))))
		return TT_FAIL(f, at, "out of memory for %" PRIu32 " functions", ti.count);
	for (uint32_t i = 0; i < ti.count; i++) {
		uint64_t pos = c->pos + i * sizeof(struct tt_turned_off_fn);
		memcpy(&f->turned_off[i], f->data + pos, sizeof f->turned_off[i]);
		if (!f->turned_off[i].address)
			return TT_FAIL(f, pos, "TURNED_OFF function %" PRIu32 " has no address", i);
	}
	f->nturned_off = ti.count;
	f->turned_off_info = ti;
	c->pos = c->end;
	return 0;
}

static int tt_read_sched(struct tt_file *f, struct tt_cursor *c)
{
	struct tt_sched_info si;
	uint64_t at = c->pos;
	if (!tt_cursor_take(c, &si, sizeof(si)))
		return TT_FAIL(f, at, "SCHED section too small for its header");
	if ((c->end - c->pos) % sizeof(struct tt_sched_state) != 0)
		return TT_FAIL(f, at, "SCHED payload of %" PRIu64 " %s is not whole states",
			       c->end - c->pos, TT_BYTES(c->end - c->pos));
	struct tt_thread *t = tt_thread_named(f, si.thread_index, at, "SCHED");
	if (!t)
		return -1;
	/* (a streamed file's THREAD may come before the kernel was asked: format.h) */
	if (!(t->flags & TT_THREAD_SCHED) && !(f->header.flags & TT_FILE_STREAMED))
		return TT_FAIL(f, at, "SCHED section of thread index %" PRIu32
			       ", whose THREAD section says it has no states", si.thread_index);
	t->flags |= TT_THREAD_SCHED;
	uint64_t count = (c->end - c->pos) / sizeof(struct tt_sched_state);
	if (tt_reserve_n(&t->states, &t->states_cap, t->nstates, count + 2, sizeof(*t->states)) < 0)
		return TT_FAIL(f, at, "out of memory for %" PRIu64 " states", count);
	struct tt_sched_state first;
	if (count)
		memcpy(&first, f->data + c->pos, sizeof first);
	int64_t floor = t->has_states ? t->states_last : f->header.start.monotonic_ns;
	if (si.since_ns < floor || (count && si.since_ns > first.ns))
		return TT_FAIL(f, at + offsetof(struct tt_sched_info, since_ns),
			       "SCHED section of thread index %" PRIu32 " has since_ns %" PRId64
			       ", %s", si.thread_index, si.since_ns,
			       si.since_ns < floor ? "before the run or its thread's last state"
						  : "after its first state");
	int64_t last = t->has_states ? t->states_last : INT64_MIN;
	t->nstates += tt_sched_head(&last, si.lost, si.since_ns, &first, count ? 1 : 0,
				     t->states + t->nstates);
	t->states_lost += si.lost;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t pos = c->pos + i * sizeof(struct tt_sched_state);
		struct tt_sched_state st;
		memcpy(&st, f->data + pos, sizeof st);
		if (st.what > TT_SCHED_BLOCKED)
			return TT_FAIL(f, pos + offsetof(struct tt_sched_state, what),
				       "state %" PRIu32 " of thread index %" PRIu32 " is not one",
				       st.what, si.thread_index);
		if (st.ns < si.since_ns || (i && st.ns < t->states[t->nstates - 1].ns))
			return TT_FAIL(f, pos, "state at %" PRId64 " ns of thread index %" PRIu32
				       " is before %s", st.ns, si.thread_index,
				       st.ns < si.since_ns ? "its section's since_ns" : "the state before it");
		t->states[t->nstates++] = st;
	}
	if (count)
		t->states_last = t->states[t->nstates - 1].ns;
	else if (!t->has_states)
		t->states_last = si.since_ns;
	t->has_states = true;
	if (si.exited_ns && si.exited_ns < t->states_last)
		return TT_FAIL(f, at + offsetof(struct tt_sched_info, exited_ns),
			       "SCHED section of thread index %" PRIu32 " has exited_ns %" PRId64
			       ", before its thread's last state", si.thread_index, si.exited_ns);
	if (si.exited_ns)
		t->exited_ns = si.exited_ns;
	return 0;
}

/* When a thread without switches exited (format.h). */
static int tt_read_thread_exit(struct tt_file *f, struct tt_cursor *c)
{
	struct tt_thread_exit ex;
	uint64_t at = c->pos;
	if (!tt_cursor_take(c, &ex, sizeof ex))
		return TT_FAIL(f, at, "THREAD_EXIT section too small");
	struct tt_thread *t = tt_thread_named(f, ex.thread_index, at, "THREAD_EXIT section");
	if (!t)
		return -1;
	if (ex.exited_ns <= 0 || t->exited_ns)
		return TT_FAIL(f, at + offsetof(struct tt_thread_exit, exited_ns),
			       "THREAD_EXIT section of thread index %" PRIu32 " has exited_ns %" PRId64
			       "%s", ex.thread_index, ex.exited_ns,
			       t->exited_ns ? ", its exit said before" : ", not a time");
	t->exited_ns = ex.exited_ns;
	return 0;
}

/* The record that opened a thread's first scope or function (format.h). */
static int tt_read_thread_first(struct tt_file *f, struct tt_cursor *c)
{
	struct tt_thread_first first;
	uint64_t at = c->pos;
	if (!tt_cursor_take(c, &first, sizeof first))
		return TT_FAIL(f, at, "THREAD_FIRST section too small");
	struct tt_thread *t = tt_thread_named(f, first.thread_index, at, "THREAD_FIRST section");
	if (!t)
		return -1;
	if (!TT_OPENS_SCOPE(TT_RECORD_KIND(first.record.word)) || t->opener.word)
		return TT_FAIL(f, at + offsetof(struct tt_thread_first, record),
			       "THREAD_FIRST section of thread index %" PRIu32 " %s", first.thread_index,
			       t->opener.word ? "after another" : "holds no record that opens a scope");
	t->opener = first.record;
	return 0;
}

/* A thread's counters' readings, read by the runtime's tt-sched (format.h). */
static int tt_read_schedstat(struct tt_file *f, struct tt_cursor *c)
{
	struct tt_schedstat_info si;
	uint64_t at = c->pos;
	if (!tt_cursor_take(c, &si, sizeof(si)))
		return TT_FAIL(f, at, "SCHEDSTAT section too small for its header");
	if (si.flags & ~(uint32_t)(TT_SCHEDSTAT_STEAL | TT_SCHEDSTAT_RUN_ONLY | TT_SCHEDSTAT_TICK_STEPS |
				   TT_SCHEDSTAT_SWITCH_COUNT | TT_SCHEDSTAT_BUDGET | TT_SCHEDSTAT_OWN_FIRST |
				   TT_SCHEDSTAT_OWN_LAST | TT_SCHEDSTAT_BLIND))
		return TT_FAIL(f, at + offsetof(struct tt_schedstat_info, flags),
			       "SCHEDSTAT section with unknown flags 0x%" PRIx32, si.flags);
	struct tt_schedstat_budget budget = {0};
	if ((si.flags & TT_SCHEDSTAT_BUDGET) && !tt_cursor_take(c, &budget, sizeof budget))
		return TT_FAIL(f, at, "SCHEDSTAT section too small for its budget's count");
	if (budget.reserved)
		return TT_FAIL(f, at + sizeof si + offsetof(struct tt_schedstat_budget, reserved),
			       "SCHEDSTAT budget's reserved field is %" PRIu64 ", not 0", budget.reserved);
	if ((c->end - c->pos) % sizeof(struct tt_schedstat_sample) != 0)
		return TT_FAIL(f, at, "SCHEDSTAT payload of %" PRIu64 " %s is not whole readings",
			       c->end - c->pos, TT_BYTES(c->end - c->pos));
	struct tt_thread *t = tt_thread_named(f, si.thread_index, at, "SCHEDSTAT");
	if (!t)
		return -1;
	uint64_t count = (c->end - c->pos) / sizeof(struct tt_schedstat_sample);
	if (tt_reserve_n(&t->counters, &t->counters_cap, t->ncounters, count,
			 sizeof(*t->counters)) < 0)
		return TT_FAIL(f, at, "out of memory for %" PRIu64 " readings", count);
	for (uint64_t i = 0; i < count; i++) {
		uint64_t pos = c->pos + i * sizeof(struct tt_schedstat_sample);
		struct tt_schedstat_sample r;
		memcpy(&r, f->data + pos, sizeof r);
		const struct tt_schedstat_sample *prev = t->ncounters ? &t->counters[t->ncounters - 1] : NULL;
		if (prev && (r.ns < prev->ns || r.run_ns < prev->run_ns || r.wait_ns < prev->wait_ns ||
			     r.timeslices < prev->timeslices || r.minflt < prev->minflt || r.majflt < prev->majflt))
			return TT_FAIL(f, pos, "reading at %" PRId64 " ns of thread index %" PRIu32
				       " is before the one before it, or counts less", r.ns, si.thread_index);
		t->counters[t->ncounters++] = r;
	}
	/* (one array of the thread's readings: its first own where the first section's
	 * first is, its last where the last section's last is) */
	const uint32_t owns = TT_SCHEDSTAT_OWN_FIRST | TT_SCHEDSTAT_OWN_LAST;
	uint32_t own = t->counters_flags & owns;
	if (count)
		own = ((t->ncounters == count ? si.flags : own) & TT_SCHEDSTAT_OWN_FIRST) |
		      (si.flags & TT_SCHEDSTAT_OWN_LAST);
	t->counters_lost += si.lost;
	t->counters_flags = (si.flags & ~owns) | own;
	t->has_counters = true;
	/* (each section's count is the thread's since its start) */
	t->counters_unread = budget.unread > t->counters_unread ? budget.unread : t->counters_unread;
	c->pos = c->end;
	return 0;
}

/* The thread's buffer for its packed sections, room for `count` records. */
static struct tt_unpacked *tt_unpacked_for(struct tt_thread *t, size_t count)
{
	if (!t->unpacked && !(t->unpacked = calloc(1, sizeof(*t->unpacked))))
		return NULL;
	struct tt_unpacked *u = t->unpacked;
	if (u->cap < count) {
		struct tt_record *records = realloc(u->records, count * sizeof(*records));
		if (!records)
			return NULL;
		u->records = records;
		u->cap = count;
	}
	return u;
}

static int tt_read_events_packed(struct tt_file *f, struct tt_cursor *c)
{
	struct tt_events_info ei;
	struct tt_packed_info pi;
	uint64_t at = c->pos;
	if (!tt_cursor_take(c, &ei, sizeof(ei)) || !tt_cursor_take(c, &pi, sizeof(pi)))
		return TT_FAIL(f, at, "EVENTS_PACKED section too small for its headers");
	struct tt_thread *t = tt_events_thread(f, &ei, at, "EVENTS_PACKED");
	if (!t)
		return -1;
	if (pi.records == 0 || pi.records > TT_PACKED_MAX_RECORDS)
		return TT_FAIL(f, at + sizeof(ei), "EVENTS_PACKED holds %" PRIu64 " records (1 to %d)",
			       pi.records, TT_PACKED_MAX_RECORDS);
	struct tt_unpacked *u = tt_unpacked_for(t, pi.records);
	if (!u)
		return TT_FAIL(f, at, "out of memory for %" PRIu64 " records", pi.records);
	const uint8_t *bytes = (const uint8_t *)f->data + c->pos;
	size_t size = c->end - c->pos, bad, pos;
	const char *wrong = tt_unpack_records(bytes, size, pi.records, u->records, &bad, &pos);
	if (wrong)
		return TT_FAIL(f, c->pos + pos, "packed record %zu of %" PRIu64 ": %s", bad,
			       pi.records, wrong);
	u->section = t->nsections;
	u->valid = true;
	struct tt_events ev = {.packed = bytes, .packed_size = size, .count = pi.records,
			       .offset = c->pos};
	c->pos = c->end;
	return tt_file_add_events(f, t, ev, u->records, at);
}

/* The END section's totals must agree with what the file holds. */
static int tt_read_end(struct tt_file *f, struct tt_cursor *c)
{
	uint64_t at = c->pos;
	struct tt_end_info *e = &f->end;
	if (!tt_cursor_take(c, e, sizeof(*e)))
		return TT_FAIL(f, at, "END section too small");
	if (e->threads != f->nthreads)
		return TT_FAIL(f, at + offsetof(struct tt_end_info, threads),
			       "END counts %" PRIu64 " threads, the file holds %zu", e->threads,
			       f->nthreads);
	if (e->records != f->records)
		return TT_FAIL(f, at + offsetof(struct tt_end_info, records),
			       "END counts %" PRIu64 " records, the file holds %" PRIu64, e->records,
			       f->records);
	if (e->dropped != f->dropped)
		return TT_FAIL(f, at + offsetof(struct tt_end_info, dropped),
			       "END counts %" PRIu64 " dropped events, the threads %" PRIu64,
			       e->dropped, f->dropped);
	if (e->sites != f->nsites - f->nfuncs)
		return TT_FAIL(f, at + offsetof(struct tt_end_info, sites),
			       "END counts %" PRIu64 " sites, the file holds %zu", e->sites,
			       f->nsites - f->nfuncs);
	for (size_t i = 0; i < f->nthreads; i++) {
		const struct tt_thread *t = &f->threads[i];
		if (t->events != t->records)
			return TT_FAIL(f, t->offset + sizeof(struct tt_section_header) +
						  offsetof(struct tt_thread_info, events),
				       "thread index %" PRIu32 " says %" PRIu64
				       " events, its EVENTS sections hold %" PRIu64,
				       t->index, t->events, t->records);
	}
	return 0;
}

/* Reads the section header at `off`; 0 with the payload's bounds, or -1. */
static int tt_section_at(const struct tt_file *f, uint64_t off, struct tt_section_header *sh,
			 struct tt_cursor *c)
{
	if (f->size - off < sizeof(*sh))
		return TT_FAIL(f, off, "truncated section header (%" PRIu64 " %s left, need %zu)",
			       f->size - off, TT_BYTES(f->size - off), sizeof(*sh));
	memcpy(sh, f->data + off, sizeof(*sh));
	uint64_t payload = off + sizeof(*sh);
	uint64_t left = f->size - payload;
	if (sh->size > left)
		return TT_FAIL(f, off + offsetof(struct tt_section_header, size),
			       "section of %" PRIu64 " %s runs past the end of the file (%" PRIu64
			       " %s left)", sh->size, TT_BYTES(sh->size), left, TT_BYTES(left));
	if (TT_SECTION_PADDED(sh->size) > left)
		return TT_FAIL(f, payload + sh->size, "truncated padding after a section");
	*c = (struct tt_cursor){.f = f, .pos = payload, .end = payload + sh->size};
	return 0;
}

/* Whether the section at `off` lies whole in the file. */
static bool tt_section_complete(const struct tt_file *f, uint64_t off)
{
	struct tt_section_header sh;
	if (f->size - off < sizeof(sh))
		return false;
	memcpy(&sh, f->data + off, sizeof(sh));
	return sh.size <= f->size - off - sizeof(sh) &&
	       TT_SECTION_PADDED(sh.size) <= f->size - off - sizeof(sh);
}

/* A description of a library unloaded at until_tsc: the section inside, read as
 * itself, for records before then. */
static int tt_read_unloaded(struct tt_file *f, struct tt_cursor *c, uint64_t off, size_t *site_cap,
			    size_t *module_cap)
{
	struct tt_unloaded_info ui;
	uint64_t at = c->pos;
	if (!tt_cursor_take(c, &ui, sizeof(ui)))
		return TT_FAIL(f, at, "UNLOADED section too small for its header");
	if (ui.until_tsc == 0 || ui.until_tsc == UINT64_MAX)
		return TT_FAIL(f, at, "UNLOADED section until TSC %" PRIu64, ui.until_tsc);
	struct tt_section_header sh;
	struct tt_cursor inner;
	if (tt_section_at(f, c->pos, &sh, &inner) < 0)
		return -1;
	if (inner.end - sh.size + TT_SECTION_PADDED(sh.size) != c->end)
		return TT_FAIL(f, c->pos, "the section in an UNLOADED section does not fill it");
	switch (sh.type) {
	case TT_SEC_SITES: return tt_read_sites(f, &inner, off, site_cap, ui.until_tsc);
	case TT_SEC_MODULES: return tt_read_modules(f, &inner, module_cap, ui.until_tsc);
	case TT_SEC_FUNCS: return tt_read_funcs(f, &inner, off, site_cap, ui.until_tsc);
	case TT_SEC_ARG_NAMES: return tt_read_arg_names(f, &inner, ui.until_tsc);
	default:
		return TT_FAIL(f, c->pos, "section type %" PRIu32 " in an UNLOADED section", sh.type);
	}
}

int tt_file_read_sections(struct tt_file *f)
{
	size_t site_cap = 0, thread_cap = 0, module_cap = 0;
	bool seen_process = false, seen_machine = false;
	uint64_t off = f->first_section, released = 0;
	bool streamed = f->header.flags & TT_FILE_STREAMED;
	bool live = f->header.flags & TT_FILE_LIVE;
	if (live && (f->header.live_sections_end < off || f->header.live_sections_end > f->header.live_chunks_at ||
		     f->header.live_chunks_at > f->size || f->header.live_chunks_at % 16))
		return TT_FAIL(f, offsetof(struct tt_file_header, live_sections_end),
			       "live file: sections end at %" PRIu64 " and chunks begin at %" PRIu64
			       ", not in order within its %zu %s", f->header.live_sections_end,
			       f->header.live_chunks_at, f->size, TT_BYTES(f->size));
	uint64_t threads_at = f->header.live_threads_at;
	if (live && threads_at &&
	    (threads_at < f->header.live_sections_end || threads_at % 8 || threads_at > f->header.live_chunks_at ||
	     f->header.live_chunks_at - threads_at < TT_LIVE_THREADS * sizeof(struct tt_live_thread)))
		return TT_FAIL(f, offsetof(struct tt_file_header, live_threads_at),
			       "live file: threads' identities at %" PRIu64 " are not between where its "
			       "sections end (%" PRIu64 ") and its chunks begin (%" PRIu64 ")",
			       threads_at, f->header.live_sections_end, f->header.live_chunks_at);
	for (;;) {
		/* A live file's descriptions end where the run last completed them. */
		if (live && off == f->header.live_sections_end) {
			f->cut_short = true;
			f->cut_at = off;
			break;
		}
		/* A streamed file ends where the run stopped writing it: its sections hold
		 * until the last complete one. */
		if (streamed && !tt_section_complete(f, off)) {
			f->cut_short = true;
			f->cut_at = off;
			tt_file_release(NULL, f, released, off);
			break;
		}
		if (off == f->size)
			return TT_FAIL(f, off, "no END section: the file was cut short");
		struct tt_section_header sh;
		struct tt_cursor c;
		if (tt_section_at(f, off, &sh, &c) < 0)
			return -1;
		int rc;
		switch (sh.type) {
		case TT_SEC_PROCESS: rc = tt_read_process(f, &c, &seen_process); break;
		case TT_SEC_SITES: rc = tt_read_sites(f, &c, off, &site_cap, UINT64_MAX); break;
		case TT_SEC_MODULES: rc = tt_read_modules(f, &c, &module_cap, UINT64_MAX); break;
		case TT_SEC_THREAD: rc = tt_read_thread(f, &c, off, &thread_cap); break;
		case TT_SEC_THREAD_TOTALS: rc = tt_read_thread_totals(f, &c); break;
		case TT_SEC_EVENTS: rc = tt_read_events(f, &c); break;
		case TT_SEC_EVENTS_PACKED: rc = tt_read_events_packed(f, &c); break;
		case TT_SEC_END: rc = tt_read_end(f, &c); break;
		case TT_SEC_FUNCS: rc = tt_read_funcs(f, &c, off, &site_cap, UINT64_MAX); break;
		case TT_SEC_ARG_NAMES: rc = tt_read_arg_names(f, &c, UINT64_MAX); break;
		case TT_SEC_UNLOADED: rc = tt_read_unloaded(f, &c, off, &site_cap, &module_cap); break;
		case TT_SEC_SCHED: rc = tt_read_sched(f, &c); break;
		case TT_SEC_SCHEDSTAT: rc = tt_read_schedstat(f, &c); break;
		case TT_SEC_THREAD_EXIT: rc = tt_read_thread_exit(f, &c); break;
		case TT_SEC_THREAD_FIRST: rc = tt_read_thread_first(f, &c); break;
		case TT_SEC_FILTERED: rc = tt_read_filtered(f, &c, false); break;
		case TT_SEC_DROPPED_CALLS: rc = tt_read_filtered(f, &c, true); break;
		case TT_SEC_TURNED_OFF: rc = tt_read_turned_off(f, &c); break;
		case TT_SEC_SNAPSHOT: rc = tt_file_read_snapshot(f, c.pos, sh.size, seen_process); break;
		case TT_SEC_MACHINE: rc = tt_read_machine(f, &c, seen_process, &seen_machine); break;
		default:
			return TT_FAIL(f, off, "unknown section type %" PRIu32, sh.type);
		}
		if (rc < 0)
			return -1;
		off = c.end - sh.size + TT_SECTION_PADDED(sh.size);
		/* Validating touches every section header, and the kernel maps pages around
		 * each: drop them as it goes (decoding reads them again in order). */
		if (off - released >= TT_RELEASE_BYTES) {
			tt_file_release(NULL, f, released, off);
			released = off;
		}
		if (sh.type == TT_SEC_END) {
			if (off != f->size)
				return TT_FAIL(f, off, "%" PRIu64 " %s after the END section",
					       f->size - off, TT_BYTES(f->size - off));
			tt_file_release(NULL, f, released, off);
			break;
		}
	}
	if (!seen_process)
		return TT_FAIL(f, f->first_section, "no PROCESS section");
	if (tt_file_check_snapshot(f) < 0)
		return -1;
	if (f->names_cut)
		tt_warn("%s: %" PRIu64 " names of call sites longer than %u bytes, cut to %u bytes",
			f->path, f->names_cut, TT_MAX_STRING, TT_MAX_STRING);
	return tt_name_funcs_hex(f);
}

