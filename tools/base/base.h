/* tools/base: what every layer of the command uses: errors and warnings (diag.c), the
 * map (map.c), the output file with its buffers and formatters (out.c), and serving a
 * file once to the Perfetto UI (serve.c). */
#ifndef TT_TOOLS_BASE_H
#define TT_TOOLS_BASE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"


/* Errors and warnings on stderr, in one format: the file, the byte offset, the problem. */

#define TT_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Nonzero: print nothing (the fuzzer). */
extern int tt_diag_quiet;

/* Writes n bytes of text from a trace or the command line with control bytes (a
 * terminal's escape sequences) shown as \xNN, not sent; returns the columns used.
 * Every error and warning goes through it. */
size_t tt_put_escaped(FILE *out, const char *text, size_t n);

/* "ticktrace: error: PATH: offset N: problem". Returns -1, so that callers can
 * `return tt_error_at(...)`. */
TT_PRINTF(3, 4) int tt_error_at(const char *path, uint64_t offset, const char *fmt, ...);
/* "ticktrace: error: problem" */
TT_PRINTF(1, 2) int tt_error(const char *fmt, ...);
/* "ticktrace: warning: problem" */
TT_PRINTF(1, 2) void tt_warn(const char *fmt, ...);
/* An out-of-memory error (one whose text begins "out of memory", which any step may
 * meet) that names no file is said of the file it is about: the one being read, the
 * trace's when it is one file, the output while it is written. Sets that file (NULL:
 * none) and returns the one it replaces, to be put back. */
const char *tt_diag_about(const char *path);

/* A small open-addressing map from a 64-bit key to a 32-bit value: call-site addresses
 * to sites, thread indexes to threads. Grows with what it holds, never with events. */

struct tt_map {
	uint64_t *keys;
	uint32_t *values;
	size_t cap; /* a power of two, or 0 */
	size_t count;
};

/* 0, or -1 when out of memory. Replaces the value of an existing key. */
int tt_map_put(struct tt_map *m, uint64_t key, uint32_t value);
/* True and *value set when the key is present. */
bool tt_map_get(const struct tt_map *m, uint64_t key, uint32_t *value);
/* Removes the key, if present. */
void tt_map_del(struct tt_map *m, uint64_t key);
void tt_map_free(struct tt_map *m);

/* Output: a large buffer filled by hand-written formatters, handed to a writer thread
 * that write(2)s it while the next buffer fills (the copy into the page cache costs
 * as much as the formatting), into a temporary file beside the destination that is
 * renamed over it only when complete. A failed or interrupted conversion leaves no
 * partial file behind. */

#define TT_OUT_BUFFER (4u << 20)
/* Room every formatter may assume after tt_out_reserve(o, TT_OUT_SLACK): the
 * fixed-size parts of one event. Strings of any length go through tt_out_bytes. */
#define TT_OUT_SLACK 1024u
/* A packing format packs a buffer in pieces of whole units (Perfetto's packets): each
 * as many units as fit in this many bytes, a longer unit a piece alone. The format
 * says where each unit begins (tt_out_unit), so that the writer need not find them. */
#define TT_OUT_PIECE (256u << 10)
/* (a piece and the unit after it are longer than TT_OUT_PIECE together) */
#define TT_OUT_CUTS (2 * TT_OUT_BUFFER / TT_OUT_PIECE + 1)

struct tt_out {
	int fd;
	char *buf;        /* being filled */
	size_t len;
	char *spare;      /* the other buffer: being written, or free */
	pthread_t writer;
	bool writer_running;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	const char *pending; /* handed to the writer; NULL when it is idle */
	size_t pending_len;
	/* Where the buffer being filled is cut into pieces (ascending), where its piece
	 * begins plus TT_OUT_PIECE, where its last unit begins; the pending buffer's cuts */
	size_t cuts[TT_OUT_CUTS], ncuts, piece_limit, unit_start;
	size_t pending_cuts[TT_OUT_CUTS], pending_ncuts;
	bool quit;
	int error;        /* the errno of the first failed write, or 0 */
	const char *path; /* as given; "-" for stdout */
	char *tmp;        /* the temporary file, until it is renamed or removed */
	bool force;
	const char *about_was; /* tt_diag_about's before it, put back as it is released */
	uint64_t written; /* bytes passed to write(2) */
	/* Set by a format that packs its bytes (Perfetto's compressed packets): the writer
	 * writes what pack makes of each buffer handed to it and of the bytes written past
	 * the buffers, in order (n 0: the end, what it holds back), in its own memory; NULL
	 * when out of memory. Each is whole units, cut into pieces where `cuts` says (a
	 * buffer's; bytes written past the buffers are one piece). pack_free frees
	 * pack_ctx with the output. */
	const char *(*pack)(void *ctx, const char *p, size_t n, const size_t *cuts, size_t ncuts,
			    size_t *packed);
	void (*pack_free)(void *ctx);
	void *pack_ctx;
};

/* A regular file's `size` bytes (fd open to read) mapped read-only whole, to be read
 * front to back; NULL and errno (os_linux.c, os_windows.c). */
const uint8_t *tt_os_map(int fd, size_t size);
void tt_os_unmap(const uint8_t *p, size_t size);
/* n bytes of a mapped file (whole pages), read: their memory given back (read again
 * from the file if touched). */
void tt_os_release(const uint8_t *p, size_t n);
/* n bytes of a mapped file (whole pages) mapped in, as reading them would: the
 * kernel's work for them done in the calling thread. */
void tt_os_map_in(const uint8_t *p, size_t n);
/* `size` bytes of fresh zeroed pages, each touched first as it is written (not malloc's:
 * with MALLOC_PERTURB_, which meson test sets, glibc writes a whole block as it is
 * allocated, calloc's too); NULL where none. */
char *tt_os_pages(size_t size);
void tt_os_pages_free(char *p, size_t size);

/* Standard input, output and error, where one was closed (`ticktrace convert ... >&-
 * 2>&-`), open on /dev/null: else the first file the command opens takes its number,
 * and what is said on stderr or printed goes into that file (a trace being written).
 * A closed stdout stays one to write to (/dev/null read-only, not inherited: a write
 * fails, as a program `record` runs has it closed) and is said so: tt_stdout_closed. */
void tt_standard_fds(void);
/* Whether the command was started with stdout closed (tt_standard_fds). */
extern bool tt_stdout_closed;
/* A command whose output goes to stdout: 0, or where stdout was closed -1 after saying
 * so (`instead`: what the user can do, or NULL), before any work. */
int tt_stdout_needed(const char *instead);
/* Where the file name in `path` begins: past its last directory separator ('/'; on
 * Windows '\\' too, and a drive's colon: "C:out.json"), as each system reads a path
 * (os_linux.c, os_windows.c). */
const char *tt_os_file_name(const char *path);
/* The command's arguments in UTF-8: Windows' as its command line has them (UTF-16),
 * not in the ANSI code page; Linux's as they are. */
void tt_os_utf8_args(int *argc, char ***argv);

/* Opens a regular file to read, never blocking: a FIFO or a device a file names (and a
 * file can come from anyone) is refused, not waited on. Its descriptor (close-on-exec),
 * or -1 with *why set to the reason ("not a regular file", or strerror). */
int tt_open_regular(const char *path, const char **why);

/* `path` (a file, or an empty directory) is removed when a signal that ends the
 * command ends it (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGPIPE...: out.c), until
 * tt_keep_on_signal: the paths named last go first (any number; out of memory, a
 * path is not removed). */
void tt_remove_on_signal(const char *path);
/* Those signals held off from tt_signals_hold to tt_signals_release (not nested):
 * around making a file and naming it to tt_remove_on_signal, where one between left
 * the file behind. */
void tt_signals_hold(void);
void tt_signals_release(void);
/* pthread_create, the thread holding those signals off for good: they are the main
 * thread's to take (where a helper took one, the main thread's hold kept nothing), but
 * SIGPIPE and SIGXFSZ, which the thread's own writes raise. */
int tt_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg);
/* *p (an array of *cap items of `size` bytes) grown to hold `need`: false, out of memory. */
bool tt_grow(void **p, size_t *cap, size_t need, size_t size);
void tt_keep_on_signal(const char *path);

/* Removes the temporary files (".NAME.PID.XXXXXX", tt_out_open's) in `dir` of the
 * outputs whose NAME `of` accepts that commands killed outright (SIGKILL, a crash) left:
 * those whose PID is no process's (a live command's are left alone). tt_out_open does
 * so for its output's name. */
void tt_out_remove_stale(const char *dir, bool (*of)(const char *name, void *ctx), void *ctx);
/* Opens `path` ("-": stdout). An existing regular file needs `force`; an existing
 * device or pipe is written directly. 0, or -1 after reporting why. */
int tt_out_open(struct tt_out *o, const char *path, bool force);
/* tt_out_open, its directory's stale temporary files of its name removed already (one
 * tt_out_remove_stale for a split's shards, not one a shard). */
int tt_out_open_swept(struct tt_out *o, const char *path, bool force);
/* What tt_out_open refuses before any work: stdout ("-") where it was closed. 0, or -1
 * after saying so. */
int tt_out_possible(const char *path);
/* Refuses an output `path` ("-": stdout) that is one of the `n` inputs, by any name
 * (a link, another path, stdout redirected onto it): writing it would replace what is
 * being read. 0, or -1 after saying which input. */
int tt_out_apart(const char *path, char *const *inputs, size_t n);
/* What every command that writes text does: `write` prints into a stream over the
 * open output, which is then closed. 0, or -1 after reporting why (what `write`
 * returned, or a failed write); the caller commits or aborts. */
int tt_out_text(struct tt_out *o, int (*write)(void *ctx, FILE *out), void *ctx);
/* A command's exit status once what it printed to stdout (help, info, a listing) is
 * written: a failed write (`info >/dev/full`) is said and fails a command that had
 * succeeded, as a failed output file does (tt_out_text). */
int tt_stdout_finish(int status);
/* Ends the output: aborts it when rc < 0, else commits it. rc, or -1 when the commit
 * failed (reported). */
int tt_out_finish(struct tt_out *o, int rc);
/* An output written whole but not in place yet, one of a set that goes in place at
 * once (a split's shards): its temporary file, closed, which a signal that ends the
 * command still removes (NULL: a device written in place), and its path. */
struct tt_out_held {
	char *tmp, *path;
};
/* tt_out_finish, but a committed output is left its temporary file, in *held (for
 * tt_out_place or tt_out_drop). */
int tt_out_finish_held(struct tt_out *o, int rc, struct tt_out_held *held);
/* Renames the `n` held outputs into place, replacing a file of their path only with
 * `replace`: with the signals held (tt_signals_hold) around it and whatever else makes
 * the set whole, a signal that ends the command finds all of them in place or none.
 * 0; or -1 after saying which failed, those put in place before it and the temporary
 * files removed. Frees them either way. */
int tt_out_place(struct tt_out_held *held, size_t n, bool replace);
/* Removes the `n` held outputs' temporary files, and frees them: the set given up. */
void tt_out_drop(struct tt_out_held *held, size_t n);
/* At most max bytes of s as XML text (& < > " escaped), for the SVG writers. */
void tt_xml_text(FILE *out, const char *s, size_t max);
/* Hands the buffer to the writer and continues in the other one; errors are
 * remembered in o->error and reported at commit. */
void tt_out_flush(struct tt_out *o);

static inline void tt_out_reserve(struct tt_out *o, size_t n)
{
	if (TT_OUT_BUFFER - o->len < n)
		tt_out_flush(o);
}

/* The piece ends before the unit that began last (out.c), as it does not fit. */
void tt_out_cut(struct tt_out *o);

/* A unit of a packing format begins here (after tt_out_reserve: in this buffer). */
static inline void tt_out_unit(struct tt_out *o)
{
	if (__builtin_expect(o->len > o->piece_limit, 0))
		tt_out_cut(o);
	o->unit_start = o->len;
}

/* Bytes of any length. */
void tt_out_bytes(struct tt_out *o, const void *p, size_t n);

/* The formatters below write at o->buf + o->len with no check: reserve first. */
static inline void tt_out_lit(struct tt_out *o, const char *s, size_t n)
{
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}
#define TT_OUT_LIT(o, s) tt_out_lit((o), "" s, sizeof("" s) - 1)

static inline void tt_out_char(struct tt_out *o, char c)
{
	o->buf[o->len++] = c;
}

void tt_out_u64(struct tt_out *o, uint64_t v);
void tt_out_i64(struct tt_out *o, int64_t v);
/* Lowercase hexadecimal with a 0x prefix. */
void tt_out_hex(struct tt_out *o, uint64_t v);
/* Nanoseconds as microseconds with exactly three fraction digits: 1234567 -> 1234.567 */
void tt_out_us(struct tt_out *o, int64_t ns);
/* n / 10^places with exactly `places` (at most 20) fraction digits: (1234, 5) -> 0.01234 */
void tt_out_decimal(struct tt_out *o, uint64_t n, unsigned places);

/* A string of its own, printf-formatted, into *out (free it): 0, or -1 with *out NULL
 * when out of memory. */
TT_PRINTF(2, 3) int tt_asprintf(char **out, const char *fmt, ...);

/* Formats into `p` (at least 20 bytes); returns the end. */
char *tt_fmt_u64(char *p, uint64_t v);

/* Length of the valid UTF-8 sequence of a non-ASCII character at s (at most n
 * bytes), or 0 when the bytes are not one. */
size_t tt_utf8_seq(const unsigned char *s, size_t n);
/* Copies n bytes to out (room for 3 * n) with every byte that is not UTF-8 replaced
 * by U+FFFD; returns the length. Output formats need valid UTF-8 text. */
size_t tt_utf8_clean(const char *s, size_t n, char *out);

/* A growable byte string for what is built once (per site, per thread), not per
 * event. An allocation failure is remembered and reported by the user. */
struct tt_buf {
	char *p;
	size_t len, cap;
	bool oom;
};

void tt_buf_add(struct tt_buf *b, const void *p, size_t n);
/* Room for n more bytes at the end: where they go (len is the caller's to move on),
 * or NULL when there is no memory (oom set). */
char *tt_buf_room(struct tt_buf *b, size_t n);
/* Only for string literals: the "" makes anything else a compile error. */
#define TT_BUF_LIT(b, s) tt_buf_add((b), "" s, sizeof("" s) - 1)
void tt_buf_u64(struct tt_buf *b, uint64_t v);
void tt_buf_free(struct tt_buf *b);

/* Serving one file once to the Perfetto UI (serve.c). */
/* The port the Perfetto UI may fetch from (its content security policy allows
 * http://127.0.0.1:9001, as Perfetto's own open_trace_in_ui uses). */
#define TT_SERVE_PORT 9001

/* Listens on 127.0.0.1:port (0: any free port), prints on `out` the ui.perfetto.dev
 * URL that loads the file, answers the UI's preflight requests, and returns after
 * the file was sent once (0) or on an error (-1, reported). */
int tt_serve_once(const char *path, int port, FILE *out);

#endif
