/* The thresholds file (analysis.h): read by `ticktrace spikes --thresholds`, `convert
 * --thresholds` and the live spike log (TICKTRACE_SPIKE_THRESHOLDS), one parser for
 * all. It prints nothing: each caller says what went wrong in its own words. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

static int tt__thresholds_fail(struct tt__thresholds_problem *p, enum tt__thresholds_what what,
			       size_t line, const char *text)
{
	*p = (struct tt__thresholds_problem){.what = what, .line = line, .text = text};
	return -1;
}

/* The whole file, NUL-terminated; NULL with errno set. */
static char *tt__read_text(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	char buf[4096];
	size_t n;
	while (mem && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, mem);
	int err = ferror(f) ? EIO : !mem ? ENOMEM : 0;
	fclose(f);
	if (mem && fclose(mem) != 0 && !err)
		err = ENOMEM;
	if (err) {
		free(text);
		errno = err;
		return NULL;
	}
	return text;
}

/* Cuts t->text into lines and fills t->rules; the patterns point into the text. */
static int tt__thresholds_parse(struct tt__thresholds *t, struct tt__thresholds_problem *p)
{
	size_t lines = 1;
	for (const char *c = t->text; *c; c++)
		lines += *c == '\n';
	t->rules = calloc(lines, sizeof(*t->rules));
	if (!t->rules)
		return tt__thresholds_fail(p, TT__THRESHOLDS_OOM, 0, NULL);
	char *line = t->text;
	for (size_t number = 1; line; number++) {
		char *next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		char *end = line + strlen(line);
		while (end > line && isspace((unsigned char)end[-1]))
			*--end = 0;
		while (isspace((unsigned char)*line))
			line++;
		if (*line) {
			/* the duration is the last word; the pattern, all before it */
			char *space = end;
			while (space > line && !isspace((unsigned char)space[-1]))
				space--;
			char *pattern_end = space;
			while (pattern_end > line && isspace((unsigned char)pattern_end[-1]))
				pattern_end--;
			if (pattern_end == line)
				return tt__thresholds_fail(p, TT__THRESHOLDS_NO_PATTERN, number, line);
			*pattern_end = 0;
			struct tt__threshold_rule *r = &t->rules[t->nrules++];
			r->pattern = line;
			if (tt__parse_duration(space, &r->ns) < 0)
				return tt__thresholds_fail(p, TT__THRESHOLDS_NO_DURATION, number, space);
		}
		line = next;
	}
	return 0;
}

int tt__thresholds_load(struct tt__thresholds *t, const char *path, struct tt__thresholds_problem *p)
{
	*t = (struct tt__thresholds){0};
	t->text = tt__read_text(path);
	if (!t->text) {
		*p = (struct tt__thresholds_problem){.what = TT__THRESHOLDS_UNREADABLE,
						     .err = errno ? errno : EIO};
		return -1;
	}
	return tt__thresholds_parse(t, p);
}

void tt__thresholds_free(struct tt__thresholds *t)
{
	free(t->rules);
	free(t->text);
	*t = (struct tt__thresholds){0};
}

const char *tt__thresholds_problem_text(const struct tt__thresholds_problem *p, char *buf, size_t cap)
{
	switch (p->what) {
	case TT__THRESHOLDS_UNREADABLE:
		snprintf(buf, cap, "cannot read: %s", strerror(p->err));
		break;
	case TT__THRESHOLDS_OOM:
		snprintf(buf, cap, "out of memory");
		break;
	case TT__THRESHOLDS_NO_PATTERN:
		snprintf(buf, cap, "line %zu: \"%s\" is not \"NAME-PATTERN DURATION\"", p->line, p->text);
		break;
	case TT__THRESHOLDS_NO_DURATION:
		snprintf(buf, cap, "line %zu: \"%s\" is not a duration (a number with ns, us, ms or s)",
			 p->line, p->text);
		break;
	}
	return buf;
}
