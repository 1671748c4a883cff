#include "base.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tt_diag_quiet;

size_t tt_put_escaped(FILE *out, const char *text, size_t n)
{
	size_t width = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\x%02x", c);
			width += 4;
		} else {
			fputc(c, out);
			width++;
		}
	}
	return width;
}

static const char *tt_diag_file;

const char *tt_diag_about(const char *path)
{
	const char *was = tt_diag_file;
	tt_diag_file = path;
	return was;
}

static void tt_diag_vprint(const char *level, const char *path, const uint64_t *offset,
			   const char *fmt, va_list ap)
{
	static const char oom[] = "out of memory";
	if (tt_diag_quiet)
		return;
	if (!path && !strncmp(fmt, oom, sizeof oom - 1))
		path = tt_diag_file;
	fprintf(stderr, "ticktrace: %s: ", level);
	if (path) {
		tt_put_escaped(stderr, path, strlen(path));
		fputs(": ", stderr);
	}
	if (offset)
		fprintf(stderr, "offset %" PRIu64 ": ", *offset);
	char buf[1024];
	va_list copy;
	va_copy(copy, ap);
	int n = vsnprintf(buf, sizeof buf, fmt, copy);
	va_end(copy);
	char *text = n >= (int)sizeof buf ? malloc((size_t)n + 1) : buf;
	if (n > 0 && (text == buf || (text && vsnprintf(text, (size_t)n + 1, fmt, ap) == n)))
		tt_put_escaped(stderr, text, (size_t)n);
	if (text != buf)
		free(text);
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
