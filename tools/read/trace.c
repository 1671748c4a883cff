/* The trace object: several raw files on one timeline, their sites and threads
 * numbered over all of them, and their functions named by a symbolizer. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"

/* Gives a newly read file's sites and threads their trace-wide ids (sinks keep plain
 * arrays by id). */
static void tt_trace_add(struct tt_trace *t, struct tt_file *f)
{
	f->index = (uint32_t)(f - t->files);
	for (size_t j = 0; j < f->nsites; j++)
		f->sites[j].id = (uint32_t)t->nsites++;
	for (size_t j = 0; j < f->nthreads; j++)
		f->threads[j].id = (uint32_t)t->nthreads++;
}

/* A file's earliest time: its start anchor, or a thread's first record before it. */
static int64_t tt_file_earliest(const struct tt_file *f)
{
	int64_t first = f->header.start.monotonic_ns;
	for (size_t j = 0; j < f->nthreads; j++) {
		const struct tt_thread *th = &f->threads[j];
		if (th->has_first && tt_clock_ns(&f->clock, th->first_tsc) < first)
			first = tt_clock_ns(&f->clock, th->first_tsc);
	}
	return first;
}

/* A file's latest time: its end anchor, or a thread's last record after it. */
static int64_t tt_file_latest(const struct tt_file *f)
{
	int64_t latest = f->header.end.monotonic_ns;
	for (size_t k = 0; k < f->nthreads; k++) {
		uint64_t tsc;
		if (tt_thread_last_tsc(&f->threads[k], &tsc) && tt_clock_ns(&f->clock, tsc) > latest)
			latest = tt_clock_ns(&f->clock, tsc);
	}
	return latest;
}

/* The trace start: the earliest anchor or event. */
static void tt_trace_rebase(struct tt_trace *t)
{
	for (size_t i = 0; i < t->nfiles; i++) {
		int64_t first = tt_file_earliest(&t->files[i]);
		if (i == 0 || first < t->base_ns)
			t->base_ns = first;
	}
}

int64_t tt_trace_latest(const struct tt_trace *t)
{
	int64_t latest = t->base_ns;
	for (size_t i = 0; i < t->nfiles; i++)
		if (tt_file_latest(&t->files[i]) > latest)
			latest = tt_file_latest(&t->files[i]);
	return latest;
}

/* Clocks 2^62 ns (146 years) apart or more are no clocks: damage, a hostile file, or a
 * typo; within it, sums of two such times do not overflow (a trace's own span is
 * held to half that: tt_trace_check_span). */
static bool tt_within_clocks(int64_t ns)
{
	const int64_t far = INT64_C(1) << 62;
	return ns <= far && ns >= -far;
}

/* Every time of a file, from its TSC or read as such, moved by `ns` (a valid file's
 * are within a clock's range: a second of the machine's, moved, still are); its
 * BOOTTIME anchors by `boot_ns`, where the run read them (0 is none, which the
 * .pftrace takes for no suspend since boot, and which a shift must not make a time). */
static void tt_file_shift_clocks(struct tt_file *f, int64_t ns, int64_t boot_ns)
{
	f->clock.ns0 += ns;
	for (struct tt_anchor *a = &f->header.start; a; a = a == &f->header.start ? &f->header.end : NULL) {
		a->monotonic_ns += ns;
		a->boottime_ns += a->boottime_ns ? boot_ns : 0;
	}
	for (size_t j = 0; j < f->nthreads; j++) {
		struct tt_thread *th = &f->threads[j];
		for (size_t k = 0; k < th->nstates; k++)
			if (th->states[k].ns != INT64_MIN) /* (not known from the very start) */
				th->states[k].ns += ns;
		th->states_last += ns;
		th->exited_ns += th->exited_ns ? ns : 0;
		for (size_t k = 0; k < th->ncounters; k++)
			th->counters[k].ns += ns;
	}
}

static void tt_file_shift(struct tt_file *f, int64_t ns)
{
	tt_file_shift_clocks(f, ns, ns);
}

static bool tt_boot_known(const struct tt_file *f)
{
	static const uint8_t none[16];
	return f->machine_known && memcmp(f->machine.boot_id, none, sizeof none);
}

/* Two files of one boot (one CLOCK_MONOTONIC): by their boot ids where both have one;
 * else (Windows runs, files of before the MACHINE section) by what else names the
 * machine, the host name and machine id, never by a missing boot id alone, and the
 * same whatever order the files come in. */
static bool tt_same_boot(const struct tt_file *a, const struct tt_file *b)
{
	const struct tt_machine_info *x = &a->machine, *y = &b->machine;
	if (tt_boot_known(a) && tt_boot_known(b))
		return !memcmp(x->boot_id, y->boot_id, sizeof x->boot_id);
	return tt_boot_known(a) == tt_boot_known(b) && x->host_name_len == y->host_name_len &&
	       !memcmp(x->host_name, y->host_name, x->host_name_len) &&
	       !memcmp(x->machine_id, y->machine_id, sizeof x->machine_id);
}

/* Two files of one machine: of one boot, and either in one time namespace (a
 * container, renamed or not) or of one host name (a process that entered a time
 * namespace of its own, a child forked into it). A time namespace with a host name of
 * its own is how the tests stand in for another machine on one boot: two. */
static bool tt_one_machine(const struct tt_file *a, const struct tt_file *b)
{
	const struct tt_machine_info *x = &a->machine, *y = &b->machine;
	return tt_same_boot(a, b) &&
	       ((x->timens_monotonic_ns == y->timens_monotonic_ns &&
		 x->timens_boottime_ns == y->timens_boottime_ns) ||
		(x->host_name_len == y->host_name_len && !memcmp(x->host_name, y->host_name, x->host_name_len)));
}

/* A wall clock at a file's start anchor less its CLOCK_MONOTONIC there (its machine's,
 * once the time namespace's offset is taken out): TAI, or REALTIME; the boot's time by
 * that wall clock, which every run of one boot shares but for steps of the clock. */
static int64_t tt_wall_less_monotonic(const struct tt_file *f, bool tai)
{
	const struct tt_clock_reading *r = &f->machine.start;
	int64_t ns;
	if (__builtin_sub_overflow(tai ? r->tai_ns : r->realtime_ns, f->header.start.monotonic_ns, &ns))
		return INT64_MAX;
	return ns;
}

static bool tt_knows_wall(const struct tt_file *f)
{
	return f->machine.flags & TT_MACHINE_START_CLOCK;
}

static bool tt_knows_tai(const struct tt_file *f)
{
	const struct tt_clock_reading *r = &f->machine.start;
	return tt_knows_wall(f) && r->tai_ns - r->realtime_ns >= 500000000;
}

static uint64_t tt_magnitude(int64_t ns)
{
	return ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
}

/* How far a boot's wall clock `moved` against its CLOCK_MONOTONIC over `elapsed` of it,
 * beyond what a kernel's slewing moves it (500 ppm, and a millisecond for the reads): a
 * step (NTP's, or by hand), or a damaged file; 0 where within. */
static int64_t tt_beyond_slew(int64_t moved, int64_t elapsed)
{
	return tt_magnitude(moved) > tt_magnitude(elapsed) / 2000 + 1000000 ? moved : 0;
}

/* How far a file's wall clock moved against CLOCK_MONOTONIC between its readings at
 * start and as written, beyond slewing: a step during the run; 0 where none, or not read. */
static int64_t tt_wall_step(const struct tt_file *f)
{
	const struct tt_machine_info *m = &f->machine;
	const uint32_t both = TT_MACHINE_START_CLOCK | TT_MACHINE_WRITTEN_CLOCK;
	if ((m->flags & both) != both)
		return 0;
	int64_t elapsed = tt_clock_ns(&f->clock, m->written.tsc) - tt_clock_ns(&f->clock, m->start.tsc);
	int64_t wall, moved;
	if (__builtin_sub_overflow(m->written.realtime_ns, m->start.realtime_ns, &wall) ||
	    __builtin_sub_overflow(wall, elapsed, &moved))
		return wall < 0 ? INT64_MIN : INT64_MAX;
	return tt_beyond_slew(moved, elapsed);
}

/* The run whose wall clock places its boot: the earliest that read one (on the boot's
 * CLOCK_MONOTONIC, its time namespace's offset taken out), whatever order the files
 * come in; a later run's may have been stepped since. */
static const struct tt_file *tt_boot_anchor(const struct tt_trace *t, const struct tt_file *of)
{
	const struct tt_file *best = of;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tt_file *f = &t->files[i];
		if (!tt_same_boot(f, of) || f == best)
			continue;
		if (tt_knows_wall(f) != tt_knows_wall(best)) {
			if (tt_knows_wall(f))
				best = f;
		} else if (f->header.start.monotonic_ns < best->header.start.monotonic_ns ||
			   (f->header.start.monotonic_ns == best->header.start.monotonic_ns &&
			    (f->header.pid < best->header.pid ||
			     (f->header.pid == best->header.pid && f->header.start.tsc < best->header.start.tsc)))) {
			best = f;
		}
	}
	return best;
}

/* Runs of one boot whose wall clocks disagree (against CLOCK_MONOTONIC, beyond slewing)
 * with the run that placed the boot: the clock stepped between them, or a file's time
 * namespace offsets are damaged. Each machine keeps its run that disagrees most. */
static void tt_trace_runs_disagree(struct tt_trace *t)
{
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tt_file *f = &t->files[i];
		const struct tt_file *anchor = tt_boot_anchor(t, f);
		if (anchor == f || !tt_knows_wall(f) || !tt_knows_wall(anchor))
			continue;
		int64_t ours = tt_wall_less_monotonic(f, false), theirs = tt_wall_less_monotonic(anchor, false);
		int64_t moved; /* (their boot times by the wall clock: one, but for steps) */
		if (__builtin_sub_overflow(ours, theirs, &moved))
			moved = ours < theirs ? INT64_MIN : INT64_MAX;
		int64_t elapsed;
		if (__builtin_sub_overflow(f->header.start.monotonic_ns, anchor->header.start.monotonic_ns,
					   &elapsed))
			elapsed = INT64_MAX;
		int64_t step = tt_beyond_slew(moved, elapsed);
		struct tt_machine *mc = &t->machines[f->machine_index];
		if (step && tt_magnitude(step) > tt_magnitude(mc->runs_disagree_ns)) {
			mc->runs_disagree_ns = step;
			mc->disagreeing = f;
			mc->anchor = anchor;
		}
	}
}

/* Groups the files into machines and places each on the first file's machine's
 * CLOCK_MONOTONIC: a time namespace's offsets taken out of every file (exact), another
 * boot through the wall clocks, as well as their kernels say they are, each boot by
 * its earliest run's (tt_boot_anchor). A machine is a
 * boot, not a host name: `unshare --uts` or a container renames the host, not the
 * machine, and a time namespace moves its clocks, which each file's offsets take out
 * (tt_one_machine); Perfetto links flows within a machine only (each file keeps its own
 * name, in its process's labels). */
static int tt_trace_place(struct tt_trace *t)
{
	t->machines = calloc(t->nfiles, sizeof *t->machines);
	if (!t->machines)
		return tt_error("out of memory");
	/* a machine: the files tt_one_machine joins, directly or through others (whatever
	 * their order), named by its first */
	for (size_t i = 0; i < t->nfiles; i++)
		t->files[i].machine_index = (uint32_t)i;
	for (bool joined = true; joined;) {
		joined = false;
		for (size_t i = 0; i < t->nfiles; i++)
			for (size_t j = i + 1; j < t->nfiles; j++) {
				struct tt_file *a = &t->files[i], *b = &t->files[j];
				if (a->machine_index != b->machine_index && tt_one_machine(a, b)) {
					uint32_t low = a->machine_index < b->machine_index ? a->machine_index :
											     b->machine_index;
					joined = true;
					a->machine_index = b->machine_index = low;
				}
			}
	}
	for (size_t i = 0; i < t->nfiles; i++) {
		struct tt_file *f = &t->files[i];
		const struct tt_machine_info *m = &f->machine;
		/* (a machine's files' lowest index is its first's, numbered before them) */
		if (f->machine_index == i) {
			f->machine_index = (uint32_t)t->nmachines;
			t->machines[t->nmachines++] = (struct tt_machine){.file = f, .clock = "CLOCK_MONOTONIC"};
		} else {
			f->machine_index = t->files[f->machine_index].machine_index;
		}
		/* (each clock's own offset: a namespace may move them apart) */
		tt_file_shift_clocks(f, -m->timens_monotonic_ns, -m->timens_boottime_ns);
	}
	const struct tt_file *first = tt_boot_anchor(t, &t->files[0]);
	for (size_t k = 0; k < t->nmachines; k++) {
		struct tt_machine *mc = &t->machines[k];
		const struct tt_file *f = tt_boot_anchor(t, mc->file);
		const struct tt_machine_info *m = &f->machine;
		mc->wall_step_ns = tt_wall_step(f);
		mc->unsynchronized = tt_knows_wall(f) && tt_clock_unsynchronized(&m->start);
		/* another machine of the same boot is where it is */
		size_t same = 0;
		while (same < k && !tt_same_boot(t->machines[same].file, f))
			same++;
		if (same < k) {
			mc->offset_ns = t->machines[same].offset_ns;
			mc->clock = t->machines[same].clock;
			mc->uncertainty_ns = t->machines[same].uncertainty_ns;
		} else if (k) {
			bool tai = tt_knows_tai(f) && tt_knows_tai(first);
			mc->clock = tai ? "CLOCK_TAI" : "CLOCK_REALTIME";
			/* (boot times 2^62 ns from 1970 are no clocks: damage, or a hostile file;
			 * within that, their difference does not overflow) */
			int64_t ours = tt_wall_less_monotonic(f, tai);
			int64_t theirs = tt_wall_less_monotonic(first, tai);
			if (!tt_within_clocks(ours) || !tt_within_clocks(theirs))
				return tt_error("%s: its boot's time by its wall clock (REALTIME less "
						"CLOCK_MONOTONIC at its start), or %s's, is 2^62 ns (146 "
						"years) or more from 1970: no clock; not placed on one "
						"timeline", f->path, first->path);
			mc->offset_ns = ours - theirs;
			const struct tt_clock_reading *a = &first->machine.start, *b = &m->start;
			bool known = tt_knows_wall(first) && tt_knows_wall(f) && a->state >= 0 && b->state >= 0;
			mc->uncertainty_ns = -1;
			if (known && __builtin_add_overflow(a->maxerror_ns, b->maxerror_ns, &mc->uncertainty_ns))
				mc->uncertainty_ns = INT64_MAX;
		}
	}
	tt_trace_runs_disagree(t);
	for (size_t i = 0; i < t->nfiles; i++)
		tt_file_shift(&t->files[i], t->machines[t->files[i].machine_index].offset_ns);
	return 0;
}

/* Whether a file of machine k was recorded on a host named `host`: a machine is a
 * boot, and `unshare --uts` or a container renames its host, not the machine. */
static bool tt_machine_named(const struct tt_trace *t, size_t k, const char *host)
{
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tt_machine_info *m = &t->files[i].machine;
		if (t->files[i].machine_index == k && strlen(host) == m->host_name_len &&
		    !memcmp(host, m->host_name, m->host_name_len))
			return true;
	}
	return false;
}

/* How many leading hexadecimal digits of two ids agree. */
static size_t tt_id_digits_alike(const uint8_t *a, const uint8_t *b)
{
	size_t n = 0;
	while (n < 32 && ((a[n / 2] ^ b[n / 2]) & (n % 2 ? 0x0f : 0xf0)) == 0)
		n++;
	return n;
}

/* Whether `hex` (4 digits or more, either case: fewer could be a host name's typo)
 * begins the id; an id not known is zeros, as convert names its machine. */
static bool tt_id_begins(const uint8_t id[16], const char *hex)
{
	size_t n = strlen(hex);
	if (n < 4 || n > 32)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = hex[i] | 0x20;
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (v != ((id[i / 2] >> (i % 2 ? 0 : 4)) & 0x0f))
			return false;
	}
	return true;
}

/* The first `digits` hexadecimal digits of an id, ended by a 0. */
static void tt_id_hex(char *out, const uint8_t id[16], size_t digits)
{
	for (size_t i = 0; i < digits; i++)
		out[i] = "0123456789abcdef"[(id[i / 2] >> (i % 2 ? 0 : 4)) & 0x0f];
	out[digits] = 0;
}

const char *tt_machine_key(const struct tt_trace *t, size_t k, char prefix[33])
{
	const struct tt_machine_info *m = &t->machines[k].file->machine;
	const char *what = NULL;
	for (size_t j = 0; j < t->nmachines; j++) {
		const struct tt_machine_info *o = &t->machines[j].file->machine;
		if (j == k || tt_same_boot(t->machines[j].file, t->machines[k].file) ||
		    o->host_name_len != m->host_name_len || memcmp(o->host_name, m->host_name, m->host_name_len))
			continue;
		if (!memcmp(o->machine_id, m->machine_id, sizeof m->machine_id))
			what = "boot id";
		else if (!what)
			what = "machine id";
	}
	prefix[0] = 0;
	if (!what)
		return NULL;
	bool boot = !strcmp(what, "boot id");
	const uint8_t *id = boot ? m->boot_id : m->machine_id;
	size_t digits = 8;
	for (size_t j = 0; j < t->nmachines; j++) {
		const struct tt_machine_info *o = &t->machines[j].file->machine;
		size_t alike = tt_id_digits_alike(id, boot ? o->boot_id : o->machine_id);
		if (j != k && alike >= digits)
			digits = alike < 32 ? alike + 1 : 32;
	}
	tt_id_hex(prefix, id, digits);
	return what;
}

size_t tt_machine_label(const struct tt_trace *t, size_t k, struct tt_str host, char *buf, size_t cap)
{
	char prefix[33];
	const char *key = t->nmachines ? tt_machine_key(t, k, prefix) : NULL;
	int len = key ? snprintf(buf, cap, "%.*s (%s %s)", (int)host.len, host.ptr, key, prefix) :
			snprintf(buf, cap, "%.*s", (int)host.len, host.ptr);
	return len < 0 ? 0 : (size_t)len >= cap ? cap - 1 : (size_t)len;
}

/* --offset's NAME: the machines with a file recorded on a host of that name, else those
 * whose machine id or boot id begins with it; false where none is. */
static bool tt_machine_chosen(const struct tt_trace *t, size_t k, const char *name, bool by_host)
{
	const struct tt_machine_info *m = &t->machines[k].file->machine;
	return by_host ? tt_machine_named(t, k, name) :
			 tt_id_begins(m->machine_id, name) || tt_id_begins(m->boot_id, name);
}

int tt_trace_offset(struct tt_trace *t, const char *name, int64_t ns)
{
	bool by_host = false;
	for (size_t k = 0; k < t->nmachines; k++)
		by_host |= tt_machine_named(t, k, name);
	/* One machine, or several of one boot (its time namespaces): two boots would be
	 * moved alike, which corrects neither */
	size_t chosen = t->nmachines, boots = 0;
	char list[1024] = ""; /* (a long list cut short: the error says how many) */
	for (size_t k = 0; k < t->nmachines; k++) {
		if (!tt_machine_chosen(t, k, name, by_host))
			continue;
		size_t j = chosen;
		while (j < k && !(tt_machine_chosen(t, j, name, by_host) &&
				  tt_same_boot(t->machines[j].file, t->machines[k].file)))
			j++;
		if (chosen == t->nmachines)
			chosen = k;
		else if (j < k)
			continue;
		const struct tt_machine_info *m = &t->machines[k].file->machine;
		char machine_id[33], boot_id[33];
		tt_id_hex(machine_id, m->machine_id, 32);
		tt_id_hex(boot_id, m->boot_id, 32);
		size_t len = strlen(list);
		snprintf(list + len, sizeof list - len, "%shost %.*s, machine id %s, boot id %s",
			 boots++ ? "; " : "", (int)m->host_name_len, m->host_name, machine_id, boot_id);
	}
	if (!boots)
		return tt_error("--offset %s: no file was recorded on a host of that name, nor on a "
				"machine whose machine id or boot id begins so", name);
	if (boots > 1)
		return tt_error("--offset %s: %zu machines %s (%s): --offset ID=TIME with the "
				"beginning of one's machine id (or boot id, where those agree) says which",
				name, boots, by_host ? "have that host name" : "have an id that begins so", list);
	for (size_t k = chosen; k < t->nmachines; k++) {
		struct tt_machine *mc = &t->machines[k];
		if (!tt_machine_chosen(t, k, name, by_host))
			continue;
		int64_t given;
		if (__builtin_add_overflow(mc->given_ns, ns, &given) || !tt_within_clocks(given))
			return tt_error("--offset %s: 2^62 ns (146 years) or more in all: no clock is "
					"that far off", name);
		mc->given_ns = given;
		tt_trace_move(t, k, ns);
	}
	return 0;
}

/* Where machine k is and why, for a message: "host vm: +4000000000 s by
 * CLOCK_REALTIME, of which --offset +4000000000 s". */
static void tt_say_placed(const struct tt_trace *t, size_t k, char *buf, size_t cap)
{
	const struct tt_machine *mc = &t->machines[k];
	const struct tt_machine_info *m = &mc->file->machine;
	char label[TT_MACHINE_LABEL_MAX];
	tt_machine_label(t, k, (struct tt_str){m->host_name, m->host_name_len}, label, sizeof label);
	int n = snprintf(buf, cap, "host %s: %+.0f s by %s", label, (double)mc->offset_ns / 1e9,
			 strcmp(mc->clock, "CLOCK_MONOTONIC") ? mc->clock : "its boot");
	if (mc->given_ns && n >= 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, ", of which --offset %+.0f s", (double)mc->given_ns / 1e9);
}

int tt_trace_check_span(const struct tt_trace *t)
{
	size_t early = 0, late = 0;
	for (size_t i = 1; i < t->nfiles; i++) {
		if (tt_file_earliest(&t->files[i]) < tt_file_earliest(&t->files[early]))
			early = i;
		if (tt_file_latest(&t->files[i]) > tt_file_latest(&t->files[late]))
			late = i;
	}
	int64_t span;
	if (!t->nfiles || (!__builtin_sub_overflow(tt_trace_latest(t), t->base_ns, &span) &&
			   span < TT_TIME_LIMIT))
		return 0;
	const struct tt_file *a = &t->files[early], *b = &t->files[late];
	char first[TT_MACHINE_LABEL_MAX + 128], last[TT_MACHINE_LABEL_MAX + 128];
	tt_say_placed(t, a->machine_index, first, sizeof first);
	last[0] = 0;
	if (b->machine_index != a->machine_index) {
		last[0] = ';', last[1] = ' ';
		tt_say_placed(t, b->machine_index, last + 2, sizeof last - 2);
	}
	double apart_s = ((double)tt_file_latest(b) - (double)tt_file_earliest(a)) / 1e9;
	return tt_error("%s and %s are placed %.0f s (%.0f years) apart, from the earliest time to "
			"the latest (%s%s): a trace's times span less than 2^61 ns (73 years) in "
			"every format; nothing written%s",
			a->path, b->path, apart_s, apart_s / 31557600.0, first, last, t->machines[a->machine_index].given_ns || t->machines[b->machine_index].given_ns ?
						     "" : " (--offset HOST=TIME corrects a known offset)");
}

void tt_trace_move(struct tt_trace *t, size_t k, int64_t ns)
{
	t->machines[k].offset_ns += ns;
	for (size_t i = 0; i < t->nfiles; i++)
		if (t->files[i].machine_index == k)
			tt_file_shift(&t->files[i], ns);
	tt_trace_rebase(t);
}

int tt_trace_open(struct tt_trace *t, char *const *paths, size_t n)
{
	/* (out of memory, the file named where there is one) */
	*t = (struct tt_trace){.files = calloc(n ? n : 1, sizeof(struct tt_file)),
			       .about_was = tt_diag_about(n == 1 ? paths[0] : NULL)};
	if (!t->files)
		return tt_error("out of memory");
	for (size_t i = 0; i < n; i++) {
		t->nfiles = i + 1;
		if (tt_file_open(&t->files[i], paths[i]) < 0)
			return -1;
		/* The same file twice, or a copy of it, or a run's tt_dump(path) copy with
		 * its final file: each event would count twice. */
		const struct tt_file_header *h = &t->files[i].header;
		for (size_t k = 0; k < i; k++) {
			const struct tt_file_header *other = &t->files[k].header;
			if (other->pid == h->pid && other->start.tsc == h->start.tsc &&
			    other->start.monotonic_ns == h->start.monotonic_ns)
				return tt_error("%s: offset %zu: the same run as %s (process %" PRIu32
						", same start): merged, its events would count twice%s",
						paths[i], offsetof(struct tt_file_header, start), paths[k],
						h->pid, (h->flags & other->flags & TT_FILE_SNAPSHOT) ?
						" (two snapshots of one run, whose windows may overlap: "
						"one at a time)" : "");
		}
		tt_trace_add(t, &t->files[i]);
	}
	if (n && tt_trace_place(t) < 0)
		return -1;
	tt_trace_rebase(t);
	return 0;
}

int tt_trace_load(struct tt_trace *t, const char *name, const uint8_t *data, size_t size)
{
	*t = (struct tt_trace){.files = calloc(1, sizeof(struct tt_file)), .nfiles = 1,
			       .about_was = tt_diag_about(name)};
	if (!t->files)
		return tt_error("out of memory");
	if (tt_file_load(&t->files[0], name, data, size) < 0)
		return -1;
	tt_trace_add(t, &t->files[0]);
	if (tt_trace_place(t) < 0)
		return -1;
	tt_trace_rebase(t);
	return 0;
}

void tt_trace_close(struct tt_trace *t)
{
	for (size_t i = 0; i < t->nfiles; i++)
		tt_file_close(&t->files[i]);
	free(t->files);
	free(t->machines);
	tt_diag_about(t->about_was);
	*t = (struct tt_trace){.about_was = t->about_was};
}

static struct tt_str tt_str_of(const char *s)
{
	return (struct tt_str){s ? s : "", s ? (uint32_t)strnlen(s, TT_MAX_STRING) : 0};
}

int tt_trace_symbolize(struct tt_trace *t, tt_symbolize_fn fn, void *ctx)
{
	t->symbolize = fn;
	t->symbolize_ctx = ctx;
	for (size_t i = 0; i < t->nfiles; i++) {
		struct tt_file *f = &t->files[i];
		for (size_t k = 0; k < f->nsites; k++) {
			struct tt_site *s = &f->sites[k];
			struct tt_symbol sym;
			if (!s->is_func)
				continue;
			/* with the module that held it during its span */
			if (fn(ctx, f, s->address, s->until - 1, &sym) < 0)
				return tt_error("out of memory for symbols");
			s->name = s->func = tt_str_of(sym.name);
			s->file = tt_str_of(sym.file);
			s->line = sym.line;
		}
	}
	return 0;
}

size_t tt_trace_func_name(const struct tt_trace *t, const struct tt_file *file,
			  uint64_t address, char *buf, size_t cap)
{
	struct tt_symbol sym;
	int n = t->symbolize && t->symbolize(t->symbolize_ctx, file, address, UINT64_MAX - 1, &sym) == 0 ?
			snprintf(buf, cap, "%s", sym.name) :
			snprintf(buf, cap, "0x%" PRIx64, address);
	return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}
