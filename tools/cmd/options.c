/* What the subcommands' option parsing shares. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

int tt_usage_error(const char *usage, const char *msg)
{
	/* the command, from the usage's first words ("usage: ticktrace convert ...") */
	static const char lead[] = "usage: ticktrace ";
	const char *cmd = strncmp(usage, lead, sizeof lead - 1) == 0 ? usage + sizeof lead - 1 : "";
	int len = (int)strcspn(cmd, " \n");
	if (msg)
		fprintf(stderr, "ticktrace: %s\n", msg);
	fprintf(stderr, "%.*s\nsee ticktrace %.*s%s--help\n", (int)strcspn(usage, "\n"), usage,
		len, cmd, len ? " " : "");
	return TT_EXIT_USAGE;
}

bool tt_count_option(const char *arg, uint64_t min, uint64_t max, uint64_t *value)
{
	/* (strtoull, not strtoul: long is 32 bits on Windows; a digit first: "-3" would be
	 * 2^64 - 3, " 3" taken) */
	char *end;
	errno = 0;
	unsigned long long n = strtoull(arg, &end, 10);
	if (!isdigit((unsigned char)arg[0]) || *end || errno || n < min || n > max)
		return false;
	*value = n;
	return true;
}

int tt_window_option(bool from, const char *arg, struct tt_filter *f)
{
	f->has_from |= from;
	f->has_to |= !from;
	return tt_an_parse_duration(arg, from ? &f->from : &f->to);
}

/* --threshold TIME (global) or --thresholds FILE; 0, or -1 for a TIME that is not one. */
int tt_threshold_option(bool global, const char *arg, struct tt_thresholds *th)
{
	if (!global) {
		th->file = arg;
		return 0;
	}
	return tt_an_parse_duration(arg, &th->global);
}

int tt_value_index(const char *list, const char *name)
{
	size_t n = strlen(name);
	int i = 0;
	for (const char *p = list; *p; i++) {
		size_t len = strcspn(p, ",");
		if (len == n && n && strncmp(p, name, n) == 0)
			return i;
		p += len;
		p += strspn(p, ", ");
	}
	return -1;
}

bool tt_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}
