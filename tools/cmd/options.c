/* What the subcommands' option parsing shares. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

/* Prints a usage error and the command's usage, and returns the usage exit status. */
int tt_usage_error(const char *usage, const char *msg)
{
	if (msg)
		fprintf(stderr, "ticktrace: %s\n", msg);
	fputs(usage, stderr);
	return TT_EXIT_USAGE;
}

/* --threshold TIME (global) or --thresholds FILE; 0, or -1 for a TIME that is not one. */
int tt_threshold_option(bool global, const char *arg, struct tt_thresholds *th)
{
	if (!global) {
		th->file = arg;
		return 0;
	}
	return tt__parse_duration(arg, &th->global);
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
