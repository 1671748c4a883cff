#include "base_internal.h"

#include <stdarg.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


static const char tt_digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* ".000" to ".999": a time's fraction of a microsecond, four bytes stored at once */
#define TT_FRAC3(a, b)                                                                     \
	"." a b "0" "." a b "1" "." a b "2" "." a b "3" "." a b "4" "." a b "5" "." a b "6" \
	"." a b "7" "." a b "8" "." a b "9"
#define TT_FRAC2(a)                                                                        \
	TT_FRAC3(a, "0") TT_FRAC3(a, "1") TT_FRAC3(a, "2") TT_FRAC3(a, "3") TT_FRAC3(a, "4") \
	TT_FRAC3(a, "5") TT_FRAC3(a, "6") TT_FRAC3(a, "7") TT_FRAC3(a, "8") TT_FRAC3(a, "9")
static const char tt_frac3[4001] = TT_FRAC2("0") TT_FRAC2("1") TT_FRAC2("2") TT_FRAC2("3")
	TT_FRAC2("4") TT_FRAC2("5") TT_FRAC2("6") TT_FRAC2("7") TT_FRAC2("8") TT_FRAC2("9");

static const uint64_t tt_pow10[20] = {
	UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000),
	UINT64_C(100000), UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000),
	UINT64_C(1000000000), UINT64_C(10000000000), UINT64_C(100000000000),
	UINT64_C(1000000000000), UINT64_C(10000000000000), UINT64_C(100000000000000),
	UINT64_C(1000000000000000), UINT64_C(10000000000000000),
	UINT64_C(100000000000000000), UINT64_C(1000000000000000000),
	UINT64_C(10000000000000000000),
};

/* Decimal digits of v: log10 from the bit length (1233 / 4096 ~ log10(2)), then one
 * comparison, instead of a division per digit. */
static inline unsigned tt_digits(uint64_t v)
{
	uint64_t x = v | 1;
	unsigned t = (unsigned)((64 - __builtin_clzll(x)) * 1233) >> 12;
	return t + 1 - (x < tt_pow10[t]);
}

/* Inline in this file's formatters: JSON's every timestamp and duration, no call
 * inside a call. */
static inline __attribute__((always_inline)) char *tt__fmt_u64(char *p, uint64_t v)
{
	char *end = p + tt_digits(v);
	char *q = end;
	/* four digits a step: half the chain of divisions, each step's two pairs apart */
	while (v >= 10000) {
		unsigned four = (unsigned)(v % 10000);
		v /= 10000;
		unsigned hi = four / 100 * 2, lo = four % 100 * 2;
		q -= 4;
		q[0] = tt_digit_pairs[hi];
		q[1] = tt_digit_pairs[hi + 1];
		q[2] = tt_digit_pairs[lo];
		q[3] = tt_digit_pairs[lo + 1];
	}
	if (v >= 100) {
		unsigned pair = (unsigned)(v % 100) * 2;
		v /= 100;
		*--q = tt_digit_pairs[pair + 1];
		*--q = tt_digit_pairs[pair];
	}
	if (v >= 10) {
		*--q = tt_digit_pairs[v * 2 + 1];
		*--q = tt_digit_pairs[v * 2];
	} else {
		*--q = (char)('0' + v);
	}
	return end;
}

char *tt_fmt_u64(char *p, uint64_t v)
{
	return tt__fmt_u64(p, v);
}

void tt_out_u64(struct tt_out *o, uint64_t v)
{
	o->len = (size_t)(tt__fmt_u64(o->buf + o->len, v) - o->buf);
}

void tt_out_i64(struct tt_out *o, int64_t v)
{
	if (v < 0) {
		tt_out_char(o, '-');
		tt_out_u64(o, -(uint64_t)v);
	} else {
		tt_out_u64(o, (uint64_t)v);
	}
}

void tt_out_hex(struct tt_out *o, uint64_t v)
{
	char tmp[16];
	int n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	TT_OUT_LIT(o, "0x");
	while (n)
		tt_out_char(o, tmp[--n]);
}

/* v (below 10^8) as eight decimal digits, leading zeros too, a digit (0 to 9) a
 * byte, the first in the lowest (x86-64: little-endian): both halves of four digits
 * split into pairs and the pairs into digits at once, in the word's lanes (SWAR: x
 * * 10486 >> 20 is x / 100 below 10^4, x * 103 >> 10 is x / 10 below 100; checked
 * for every v against printf). */
static inline uint64_t tt_eight_digits(uint32_t v)
{
	uint64_t halves = (uint64_t)(v / 10000) | (uint64_t)(v % 10000) << 32;
	uint64_t hundreds = (halves * 10486) >> 20 & UINT64_C(0x0000007F0000007F);
	uint64_t pairs = (halves - 100 * hundreds) << 16 | hundreds;
	uint64_t tens = (pairs * 103) >> 10 & UINT64_C(0x000F000F000F000F);
	return tens | (pairs - 10 * tens) << 8;
}

/* A time of 100 s or more, or before the trace's start: digit by digit, out of line. */
static __attribute__((noinline)) char *tt_us_long(char *p, int64_t ns, uint64_t whole)
{
	if (ns < 0)
		*p++ = '-';
	return tt__fmt_u64(p, whole);
}

void tt_out_us(struct tt_out *o, int64_t ns)
{
	uint64_t mag = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	uint64_t whole = mag / 1000;
	unsigned frac = (unsigned)(mag - whole * 1000);
	char *p = o->buf + o->len;
	if (__builtin_expect((uint64_t)ns < UINT64_C(100000000000), 1)) {
		/* from 0 to 100 s (JSON's timestamps and durations, nearly all): the
		 * eight digits stored at once, their leading zeros shifted out (one kept) */
		uint64_t digits = tt_eight_digits((uint32_t)whole);
		unsigned lead = whole ? (unsigned)__builtin_ctzll(digits) / 8 : 7;
		uint64_t w = (digits | UINT64_C(0x3030303030303030)) >> 8 * lead;
		memcpy(p, &w, 8);
		p += 8 - lead;
	} else {
		p = tt_us_long(p, ns, whole);
	}
	memcpy(p, tt_frac3 + frac * 4, 4);
	o->len = (size_t)(p + 4 - o->buf);
}

void tt_out_decimal(struct tt_out *o, uint64_t n, unsigned places)
{
	if (__builtin_expect(n < UINT64_C(10000000000000000) && places < 16, 1)) {
		/* n as sixteen digits, zeros in front: the whole part begins at its first
		 * digit or at the one before the point, a zero, whichever comes first */
		char digits[32] = {0}; /* (16 on: room for the 16-byte copies) */
		uint64_t hi = tt_eight_digits((uint32_t)(n / 100000000)) | UINT64_C(0x3030303030303030);
		uint64_t lo = tt_eight_digits((uint32_t)(n % 100000000)) | UINT64_C(0x3030303030303030);
		memcpy(digits, &hi, 8);
		memcpy(digits + 8, &lo, 8);
		unsigned len = tt_digits(n), point = 16 - places;
		unsigned from = 16 - len < point - 1 ? 16 - len : point - 1;
		char *p = o->buf + o->len;
		memcpy(p, digits + from, 16); /* (what passes the point is written over) */
		p += point - from;
		*p++ = '.';
		memcpy(p, digits + point, 16);
		o->len = (size_t)(p + places - o->buf);
		return;
	}
	char digits[24];
	size_t len = (size_t)(tt__fmt_u64(digits, n) - digits);
	size_t whole = len > places ? len - places : 0;
	if (whole)
		tt_out_lit(o, digits, whole);
	else
		tt_out_char(o, '0');
	tt_out_char(o, '.');
	for (size_t zeros = places - (len - whole); zeros; zeros--)
		tt_out_char(o, '0');
	tt_out_lit(o, digits + whole, len - whole);
}

static void tt_write_all(struct tt_out *o, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(o->fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			pthread_mutex_lock(&o->lock);
			if (!o->error)
				o->error = errno;
			pthread_mutex_unlock(&o->lock);
			return;
		}
		p += w;
		n -= (size_t)w;
		o->written += (uint64_t)w;
	}
}

/* Writes p, packed first if the format packs its bytes (cut into pieces where cuts
 * says). */
static void tt_write_packed(struct tt_out *o, const char *p, size_t n, const size_t *cuts,
			    size_t ncuts)
{
	if (o->pack) {
		p = o->pack(o->pack_ctx, p, n, cuts, ncuts, &n);
		if (!p) {
			pthread_mutex_lock(&o->lock);
			if (!o->error)
				o->error = ENOMEM;
			pthread_mutex_unlock(&o->lock);
			return;
		}
	}
	tt_write_all(o, p, n);
}

static void *tt_out_writer(void *arg)
{
	struct tt_out *o = arg;
	pthread_mutex_lock(&o->lock);
	for (;;) {
		while (!o->pending && !o->quit)
			pthread_cond_wait(&o->cond, &o->lock);
		if (!o->pending)
			break;
		const char *p = o->pending;
		size_t n = o->pending_len;
		bool failed = o->error != 0; /* after a failure, the rest is dropped */
		pthread_mutex_unlock(&o->lock);
		if (!failed)
			tt_write_packed(o, p, n, o->pending_cuts, o->pending_ncuts);
		pthread_mutex_lock(&o->lock);
		o->pending = NULL;
		pthread_cond_broadcast(&o->cond);
	}
	pthread_mutex_unlock(&o->lock);
	return NULL;
}

void tt_out_wait_idle(struct tt_out *o)
{
	pthread_mutex_lock(&o->lock);
	while (o->pending)
		pthread_cond_wait(&o->cond, &o->lock);
	pthread_mutex_unlock(&o->lock);
}

/* Greedy, as a walk over the units would cut them: the piece is as long as its
 * units fit; a unit that does not fit begins the next, a unit longer than a piece is
 * one alone. Decided when the unit's end is known: when the next begins, or the
 * buffer is handed on. */
void tt_out_cut(struct tt_out *o)
{
	if (o->unit_start > o->piece_limit - TT_OUT_PIECE) {
		o->cuts[o->ncuts++] = o->unit_start;
		o->piece_limit = o->unit_start + TT_OUT_PIECE;
	}
}

void tt_out_flush(struct tt_out *o)
{
	if (o->len == 0)
		return;
	if (o->len > o->piece_limit)
		tt_out_cut(o);
	tt_out_wait_idle(o);
	pthread_mutex_lock(&o->lock);
	o->pending = o->buf;
	o->pending_len = o->len;
	memcpy(o->pending_cuts, o->cuts, o->ncuts * sizeof(o->cuts[0]));
	o->pending_ncuts = o->ncuts;
	pthread_cond_broadcast(&o->cond);
	pthread_mutex_unlock(&o->lock);
	char *next = o->spare;
	o->spare = o->buf;
	o->buf = next;
	o->len = 0;
	o->ncuts = o->unit_start = 0;
	o->piece_limit = TT_OUT_PIECE;
}

void tt_out_bytes(struct tt_out *o, const void *p, size_t n)
{
	if (n > TT_OUT_BUFFER / 2) {
		tt_out_flush(o);
		tt_out_wait_idle(o);
		tt_write_packed(o, p, n, NULL, 0);
		return;
	}
	tt_out_reserve(o, n);
	tt_out_lit(o, p, n);
}

bool tt_grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return true;
	size_t cap2 = *cap ? *cap * 2 : 256;
	while (cap2 < need)
		cap2 *= 2;
	void *q = realloc(*p, cap2 * size);
	if (!q)
		return false;
	*p = q;
	*cap = cap2;
	return true;
}

void tt_out_remove_stale(const char *dir, bool (*of)(const char *name, void *ctx), void *ctx)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		/* ".NAME.PID.XXXXXX", read from its end (NAME has dots of its own) */
		const char *n = e->d_name, *x = strrchr(n, '.'), *p = x;
		if (n[0] != '.' || !x || strlen(x) != 7)
			continue;
		while (p > n && p[-1] >= '0' && p[-1] <= '9')
			p--;
		char name[256];
		size_t len = p > n + 1 ? (size_t)(p - n - 2) : 0;
		if (p == x || p[-1] != '.' || len == 0 || len >= sizeof name)
			continue;
		memcpy(name, n + 1, len);
		name[len] = 0;
		long pid = strtol(p, NULL, 10);
		char *path;
		if (pid > 0 && of(name, ctx) && tt_os_process_gone(pid) &&
		    tt_asprintf(&path, "%s/%s", dir, n) >= 0) {
			unlink(path);
			free(path);
		}
	}
	closedir(d);
}

static bool tt_out_named(const char *name, void *base)
{
	return strcmp(name, base) == 0;
}

/* A temporary file in the destination's directory, so the rename stays on one file
 * system: "dir/.name.PID.XXXXXX" (its PID tells a later command it is stale; `sweep`:
 * a killed one's removed first). */
static int tt_out_make_tmp(struct tt_out *o, bool sweep)
{
	const char *base = tt_os_file_name(o->path);
	int dirlen = (int)(base - o->path);
	size_t cap = strlen(o->path) + 32;
	o->tmp = malloc(cap);
	if (!o->tmp)
		return tt_error("out of memory");
	snprintf(o->tmp, cap, "%.*s", dirlen ? dirlen : 1, dirlen ? o->path : ".");
	if (sweep)
		tt_out_remove_stale(o->tmp, tt_out_named, (void *)base);
	snprintf(o->tmp, cap, "%.*s.%s.%ld.XXXXXX", dirlen, o->path, base, (long)getpid());
	tt_signals_hold();
	o->fd = tt_os_create_tmp(o->tmp);
	int err = errno;
	if (o->fd >= 0)
		tt_remove_on_signal(o->tmp);
	tt_signals_release();
	if (o->fd < 0) {
		free(o->tmp);
		o->tmp = NULL;
		return tt_error("%s: cannot create a temporary file beside it: %s", o->path,
				strerror(err));
	}
	return 0;
}

/* The buffers and the writer thread; 0 or -1. */
static int tt_out_start(struct tt_out *o)
{
	/* pages, touched as they fill (malloc's, under meson test's MALLOC_PERTURB_, were
	 * all 8 MiB written first: 35 ms of a small conversion's 40) */
	o->buf = tt_os_pages(TT_OUT_BUFFER);
	o->spare = tt_os_pages(TT_OUT_BUFFER);
	pthread_mutex_init(&o->lock, NULL);
	pthread_cond_init(&o->cond, NULL);
	const char *name = strcmp(o->path, "-") ? o->path : "stdout";
	if (!o->buf || !o->spare)
		return tt_error("%s: out of memory for its output buffers (2 of %d MiB)", name,
				TT_OUT_BUFFER >> 20);
	int err = tt_thread_start(&o->writer, tt_out_writer, o);
	if (err)
		return tt_error("%s: cannot start its writer thread: %s", name, strerror(err));
	o->writer_running = true;
	return 0;
}

/* Stops the writer after what it was handed, and frees everything. */
static void tt_out_release(struct tt_out *o)
{
	if (o->writer_running) {
		pthread_mutex_lock(&o->lock);
		o->quit = true;
		pthread_cond_broadcast(&o->cond);
		pthread_mutex_unlock(&o->lock);
		pthread_join(o->writer, NULL);
	}
	pthread_mutex_destroy(&o->lock);
	pthread_cond_destroy(&o->cond);
	if (o->pack_free)
		o->pack_free(o->pack_ctx);
	/* (closed first: Windows removes no open file) */
	if (o->fd > STDERR_FILENO)
		close(o->fd);
	if (o->tmp) {
		unlink(o->tmp);
		tt_keep_on_signal(o->tmp);
		free(o->tmp);
	}
	tt_os_pages_free(o->buf, TT_OUT_BUFFER);
	tt_os_pages_free(o->spare, TT_OUT_BUFFER);
	tt_diag_about(o->about_was);
	/* what was written stays known */
	*o = (struct tt_out){.fd = -1, .written = o->written, .about_was = o->about_was};
}

int tt_open_regular(const char *path, const char **why)
{
	/* (O_NONBLOCK changes nothing for a regular file's reads.) */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		/* (EISDIR: Windows' open of a directory, which Linux's opens) */
		*why = errno == EISDIR ? "not a regular file" : strerror(errno);
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		return fd;
	*why = "not a regular file";
	close(fd);
	return -1;
}

bool tt_stdout_closed;

int tt_stdout_needed(const char *instead)
{
	if (!tt_stdout_closed)
		return 0;
	return tt_error("stdout is closed (>&-): nowhere to write the output%s%s%s", instead ? " (" : "",
			instead ? instead : "", instead ? ")" : "");
}

int tt_out_possible(const char *path)
{
	return strcmp(path, "-") ? 0 : tt_stdout_needed("-o FILE writes it to a file");
}

static int tt_out_open_sweeping(struct tt_out *o, const char *path, bool force, bool sweep)
{
	*o = (struct tt_out){.fd = -1, .path = path, .force = force, .piece_limit = TT_OUT_PIECE,
			     .about_was = tt_diag_about(NULL)};
	if (tt_out_possible(path) < 0)
		return -1;
	tt_diag_about(strcmp(path, "-") ? path : o->about_was); /* (stdout: what it is of) */
	int rc = tt_out_start(o);
	struct stat st;
	if (rc < 0) {
		/* reported */
	} else if (strcmp(path, "-") == 0) {
		o->fd = STDOUT_FILENO;
	} else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		rc = tt_error("%s: is a directory", path);
	} else if (tt_os_open_in_place(path, &o->fd)) {
		/* a device or a pipe: written directly, nothing to rename */
		if (o->fd < 0)
			rc = tt_error("%s: %s", path, errno == ENXIO ? "a FIFO no one reads" : strerror(errno));
	} else if (!force && lstat(path, &st) == 0) {
		rc = tt_error("%s: exists (use --force to overwrite it)", path);
	} else {
		rc = tt_out_make_tmp(o, sweep);
	}
	if (rc < 0)
		tt_out_release(o);
	return rc;
}

int tt_out_open(struct tt_out *o, const char *path, bool force)
{
	return tt_out_open_sweeping(o, path, force, true);
}

int tt_out_open_swept(struct tt_out *o, const char *path, bool force)
{
	return tt_out_open_sweeping(o, path, force, false);
}

int tt_out_apart(const char *path, char *const *inputs, size_t n)
{
	bool is_stdout = strcmp(path, "-") == 0;
	for (size_t i = 0; i < n; i++)
		if (tt_os_same_file(path, inputs[i]))
			return tt_error("%s: the same file as the input %s: the output would replace "
					"it (write to another file)", is_stdout ? "stdout" : path, inputs[i]);
	return 0;
}

int tt_out_text(struct tt_out *o, int (*print)(void *ctx, FILE *out), void *ctx)
{
	FILE *stream = tt_os_out_stream(o);
	if (!stream)
		return tt_error("out of memory");
	int rc = print(ctx, stream);
	if (fclose(stream) != 0 && rc == 0) {
		if (strcmp(o->path, "-") == 0)
			tt_os_end_on_closed_pipe(errno);
		rc = tt_error("%s: cannot write", strcmp(o->path, "-") ? o->path : "stdout");
	}
	return rc;
}

int tt_stdout_finish(int status)
{
	bool flush_failed = fflush(stdout) != 0;
	int err = errno;
	if (!flush_failed && !ferror(stdout))
		return status;
	tt_os_end_on_closed_pipe(flush_failed ? err : 0);
	if (tt_stdout_closed)
		tt_error("stdout is closed (>&-): what the command printed went nowhere");
	else /* (an earlier write's error: its errno is gone) */
		tt_error("stdout: write failed%s%s", flush_failed ? ": " : "", flush_failed ? strerror(err) : "");
	return status ? status : 1;
}

void tt_xml_text(FILE *out, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(s[i], out);
		}
	}
}

/* Writes what is buffered and renames the temporary file into place, or (`held`) leaves
 * it closed and hands it over. 0, or -1 after reporting why (the temporary file is then
 * removed). Frees everything either way. */
static int tt_out_commit(struct tt_out *o, struct tt_out_held *held)
{
	tt_out_flush(o);
	tt_out_wait_idle(o);
	if (o->pack && !o->error)
		tt_write_packed(o, NULL, 0, NULL, 0);
	if (o->error) {
		bool is_stdout = strcmp(o->path, "-") == 0;
		if (is_stdout)
			tt_os_end_on_closed_pipe(o->error);
		tt_error("%s: write failed: %s", is_stdout ? "stdout" : o->path, strerror(o->error));
		tt_out_release(o);
		return -1;
	}
	char *path = held ? strdup(o->path) : NULL;
	if (held && !path) {
		tt_error("out of memory");
		tt_out_release(o);
		return -1;
	}
	if (o->tmp) {
		int rc = tt_os_close_tmp(o->fd);
		o->fd = -1;
		if (rc == 0 && !held)
			rc = tt_os_rename_tmp(o->tmp, o->path, o->force);
		if (rc < 0) {
			tt_error("%s: %s", o->path, strerror(errno));
			free(path);
			tt_out_release(o);
			return -1;
		}
		if (!held) {
			tt_keep_on_signal(o->tmp);
			free(o->tmp);
		}
	}
	if (held)
		*held = (struct tt_out_held){.tmp = o->tmp, .path = path};
	o->tmp = NULL;
	tt_out_release(o);
	return 0;
}

int tt_out_finish(struct tt_out *o, int rc)
{
	if (rc < 0) {
		tt_out_release(o); /* the temporary file removed */
		return rc;
	}
	return tt_out_commit(o, NULL);
}

int tt_out_finish_held(struct tt_out *o, int rc, struct tt_out_held *held)
{
	*held = (struct tt_out_held){0};
	if (rc < 0) {
		tt_out_release(o);
		return rc;
	}
	return tt_out_commit(o, held);
}

/* Frees the held outputs, their temporary files no longer the signal handler's (the
 * last named first: each found at its list's end). */
static void tt_out_held_free(struct tt_out_held *held, size_t n)
{
	for (size_t i = n; i-- > 0;) {
		if (held[i].tmp)
			tt_keep_on_signal(held[i].tmp);
		free(held[i].tmp);
		free(held[i].path);
	}
}

void tt_out_drop(struct tt_out_held *held, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (held[i].tmp)
			unlink(held[i].tmp);
	tt_out_held_free(held, n);
}

int tt_out_place(struct tt_out_held *held, size_t n, bool replace)
{
	size_t placed = 0;
	for (; placed < n; placed++)
		if (held[placed].tmp && tt_os_rename_tmp(held[placed].tmp, held[placed].path, replace) < 0)
			break;
	if (placed == n) {
		tt_out_held_free(held, n);
		return 0;
	}
	int err = errno;
	char replaced[96] = "";
	if (replace && placed)
		snprintf(replaced, sizeof replaced, "; the %zu put in place before it replaced files of "
			 "their names, which are gone", placed);
	tt_error("%s: %s: none of the %zu files of its set left in place%s", held[placed].path,
		 strerror(err), n, replaced);
	for (size_t i = 0; i < placed; i++)
		if (held[i].tmp)
			unlink(held[i].path);
	tt_out_drop(held, n);
	return -1;
}

char *tt_buf_room(struct tt_buf *b, size_t n)
{
	if (b->oom)
		return NULL;
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap - b->len < n)
			cap *= 2;
		char *q = realloc(b->p, cap);
		if (!q) {
			b->oom = true;
			return NULL;
		}
		b->p = q;
		b->cap = cap;
	}
	return b->p + b->len;
}

void tt_buf_add(struct tt_buf *b, const void *p, size_t n)
{
	char *q = tt_buf_room(b, n);
	if (!q)
		return;
	memcpy(q, p, n);
	b->len += n;
}

void tt_buf_u64(struct tt_buf *b, uint64_t v)
{
	char tmp[24];
	tt_buf_add(b, tmp, (size_t)(tt_fmt_u64(tmp, v) - tmp));
}

void tt_buf_free(struct tt_buf *b)
{
	free(b->p);
	*b = (struct tt_buf){0};
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
size_t tt_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
	if (len == 0 || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	/* Overlong forms, surrogates and code points past U+10FFFF. */
	if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0) ||
	    (c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90))
		return 0;
	return len;
}

size_t tt_utf8_clean(const char *str, size_t n, char *out)
{
	const unsigned char *s = (const unsigned char *)str;
	char *q = out;
	for (size_t i = 0; i < n;) {
		size_t len = s[i] < 0x80 ? 1 : tt_utf8_seq(s + i, n - i);
		if (len) {
			memcpy(q, s + i, len);
			q += len;
			i += len;
		} else {
			memcpy(q, "\xEF\xBF\xBD", 3);
			q += 3;
			i++;
		}
	}
	return (size_t)(q - out);
}

int tt_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(out, fmt, ap);
	va_end(ap);
	if (n < 0)
		*out = NULL;
	return n < 0 ? -1 : 0;
}
