/* tools/base's inside: what out.c asks of the operating system's file (os_linux.c or
 * os_windows.c, one of them built), the places where Linux and Windows write an output
 * differently. */
#ifndef TT_BASE_INTERNAL_H
#define TT_BASE_INTERNAL_H

#include "base.h"

/* Creates the temporary file `tmpl` names ("...XXXXXX", the X's replaced) to write;
 * its descriptor, or -1 and errno. */
int tt_os_create_tmp(char *tmpl);
/* Whether no process has the id `pid` (its temporary files are stale). */
bool tt_os_process_gone(long pid);
/* Whether `path` is written in place (a device or a FIFO, nothing renamed), and then
 * its descriptor in *fd (-1 and errno when it cannot be opened). */
bool tt_os_open_in_place(const char *path, int *fd);
/* The temporary file `fd`, written, closed with the mode an output gets. 0, or -1 and
 * errno. */
int tt_os_close_tmp(int fd);
/* The closed temporary file `tmp` renamed to `path`, replacing a file there only when
 * `replace`. 0, or -1 and errno. */
int tt_os_rename_tmp(const char *tmp, const char *path, bool replace);
/* Whether the output `path` ("-": standard output) is the file `input` already (by
 * device and inode, or volume and file index: through any name or link). */
bool tt_os_same_file(const char *path, const char *input);
/* A write to standard output failed (`err`, its errno): where its reader had closed
 * the pipe, ends the command as Linux's SIGPIPE does (128 + 13, nothing said, its
 * temporary files removed); else returns. (Linux's: SIGPIPE has ended it before, or
 * is ignored, and then the error is said as other tools say it.) */
void tt_os_end_on_closed_pipe(int err);
/* A stream whose bytes go to the output, in order after what is buffered; NULL out
 * of memory. */
FILE *tt_os_out_stream(struct tt_out *o);

/* Reads a byte of every page of [p, p + n): the page faults map them (and the kernel
 * those around each). */
static inline void tt_touch_pages(const uint8_t *p, size_t n, size_t page)
{
	uint8_t sum = 0;
	for (size_t i = 0; i < n; i += page)
		sum += *(const volatile uint8_t *)(p + i);
	(void)sum;
}

/* Waits until the output's writer has written what it was handed (out.c). */
void tt_out_wait_idle(struct tt_out *o);

#endif
