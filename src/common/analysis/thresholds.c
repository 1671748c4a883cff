/* The thresholds file (analysis.h): read by `ticktrace spikes --thresholds`, `convert
 * --thresholds` and the live spike log (TICKTRACE_SPIKE_THRESHOLDS), one parser for
 * all. It prints nothing: each caller says what went wrong in its own words. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

static int tt_an_thresholds_fail(struct tt_an_thresholds_problem *p, enum tt_an_thresholds_what what,
				 size_t line, const char *text)
{
	*p = (struct tt_an_thresholds_problem){.what = what, .line = line, .text = text};
	return -1;
}

/* The file's text (tt_read_small_file); NULL with the problem in *p. */
static char *tt_an_read_text(const char *path, struct tt_an_thresholds_problem *p)
{
	char *text;
	size_t len;
	int err = tt_read_small_file(path, TT_AN_THRESHOLDS_MAX_BYTES, &text, &len);
	if (err == TT_READ_NOT_REGULAR)
		tt_an_thresholds_fail(p, TT_AN_THRESHOLDS_NOT_FILE, 0, NULL);
	else if (err == -EFBIG)
		tt_an_thresholds_fail(p, TT_AN_THRESHOLDS_TOO_BIG, 0, NULL);
	else if (err == -ENOMEM)
		tt_an_thresholds_fail(p, TT_AN_THRESHOLDS_OOM, 0, NULL);
	else if (err) {
		tt_an_thresholds_fail(p, TT_AN_THRESHOLDS_UNREADABLE, 0, NULL);
		p->err = -err;
	}
	return text;
}

static int tt_an_thresholds_parse(struct tt_an_thresholds *t, struct tt_an_thresholds_problem *p)
{
	size_t lines = 1;
	for (const char *c = t->text; *c; c++)
		lines += *c == '\n';
	t->rules = calloc(lines, sizeof(*t->rules));
	if (!t->rules)
		return tt_an_thresholds_fail(p, TT_AN_THRESHOLDS_OOM, 0, NULL);
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
				return tt_an_thresholds_fail(p, TT_AN_THRESHOLDS_NO_PATTERN, number, line);
			*pattern_end = 0;
			struct tt_an_threshold_rule *r = &t->rules[t->nrules++];
			r->pattern = line;
			if (tt_an_parse_duration(space, &r->ns) < 0)
				return tt_an_thresholds_fail(p, TT_AN_THRESHOLDS_NO_DURATION, number, space);
		}
		line = next;
	}
	return 0;
}

int tt_an_thresholds_load(struct tt_an_thresholds *t, const char *path, struct tt_an_thresholds_problem *p)
{
	*t = (struct tt_an_thresholds){0};
	t->text = tt_an_read_text(path, p);
	if (!t->text)
		return -1;
	return tt_an_thresholds_parse(t, p);
}

void tt_an_thresholds_free(struct tt_an_thresholds *t)
{
	free(t->rules);
	free(t->text);
	*t = (struct tt_an_thresholds){0};
}

const char *tt_an_thresholds_problem_text(const struct tt_an_thresholds_problem *p, char *buf, size_t cap)
{
	switch (p->what) {
	case TT_AN_THRESHOLDS_UNREADABLE:
		snprintf(buf, cap, "cannot read: %s", strerror(p->err));
		break;
	case TT_AN_THRESHOLDS_NOT_FILE:
		snprintf(buf, cap, "not a regular file");
		break;
	case TT_AN_THRESHOLDS_TOO_BIG:
		snprintf(buf, cap, "more than %d bytes", TT_AN_THRESHOLDS_MAX_BYTES);
		break;
	case TT_AN_THRESHOLDS_OOM:
		snprintf(buf, cap, "out of memory");
		break;
	case TT_AN_THRESHOLDS_NO_PATTERN:
		snprintf(buf, cap, "line %zu: \"%s\" is not \"NAME-PATTERN DURATION\"", p->line, p->text);
		break;
	case TT_AN_THRESHOLDS_NO_DURATION:
		snprintf(buf, cap, "line %zu: \"%s\" is not a duration (a number with ns, us, ms or s)",
			 p->line, p->text);
		break;
	}
	return buf;
}
