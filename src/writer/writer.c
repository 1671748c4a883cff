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

/* ---- call sites and functions: the sets of addresses the records use ---- */

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

void tt__site_set_clear(struct tt__site_set *set)
{
	size_t seen = set->retired_seen;
	free(set->slots);
	*set = (struct tt__site_set){.retired_seen = seen};
}

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

/* The descriptor of a set's entry of the generation viewed, or NULL for an empty slot,
 * a function or another generation. */
static const struct tt_callsite *tt__site_at(uint64_t entry, const struct tt__names_view *v)
{
	return entry && !(entry & TT__FUNC_TAG) && TT__GEN(entry) == v->gen ?
		       tt__site_descriptor(entry & TT__ADDRESS_MASK, v) : NULL;
}

/* A site's argument name (TT_BEGIN_NAMED_ARG), or NULL. */
const char *tt__arg_name(const struct tt_callsite *site)
{
	return site && (site->flags & TT__SITE_ARG_NAME) ? site->arg_name : NULL;
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

/* The call-site descriptors and the instrumented functions the records name. */
static int tt__collect_names(struct tt__site_set *set, const struct tt__thread_snapshot *snap)
{
	for (size_t c = 0; c < snap->chunks; c++)
		if (!tt__sites_add(set, NULL, snap->extents[c].begin, snap->extents[c].end, 0))
			return -ENOMEM;
	return 0;
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
