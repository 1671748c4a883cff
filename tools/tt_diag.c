#include "tt_diag.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

int tt_diag_quiet;

static void tt_diag_vprint(const char *level, const char *path, const uint64_t *offset,
			   const char *fmt, va_list ap)
{
	if (tt_diag_quiet)
		return;
	fprintf(stderr, "ticktrace: %s: ", level);
	if (path)
		fprintf(stderr, "%s: ", path);
	if (offset)
		fprintf(stderr, "offset %" PRIu64 ": ", *offset);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int tt_error_at(const char *path, uint64_t offset, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tt_diag_vprint("error", path, &offset, fmt, ap);
	va_end(ap);
	return -1;
}

int tt_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tt_diag_vprint("error", NULL, NULL, fmt, ap);
	va_end(ap);
	return -1;
}

void tt_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tt_diag_vprint("warning", NULL, NULL, fmt, ap);
	va_end(ap);
}
