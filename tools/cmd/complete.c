/* `ticktrace --complete`: what the bash completion asks (ticktrace.bash-completion),
 * read from the commands' own getopt tables and value lists, so that it never spells
 * an option or a value again. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static const char *tt_arg_kind_name(const struct tt_cmd *c, const struct option *o)
{
	static const char *const names[] = {[TT_ARG_TEXT] = "text", [TT_ARG_FILE] = "file",
					    [TT_ARG_DIR] = "dir", [TT_ARG_VALUES] = "values"};
	if (o->has_arg == no_argument)
		return "flag";
	for (const struct tt_cmd_arg *a = c->args; a->opt; a++)
		if (a->opt == o->val)
			return names[a->kind];
	return names[TT_ARG_TEXT];
}

/* The option named `word` ("--output" or "-o") of c, or NULL. */
static const struct option *tt_option_named(const struct tt_cmd *c, const char *word)
{
	for (const struct option *o = c->options; o->name; o++)
		if ((strncmp(word, "--", 2) == 0 && strcmp(word + 2, o->name) == 0) ||
		    (o->val < 256 && word[0] == '-' && word[1] == o->val && !word[2]))
			return o;
	return NULL;
}

int tt_cmd_complete(const struct tt_cmd *cmds, size_t n, int argc, char **argv, FILE *out)
{
	if (argc < 1) {
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%s\n", cmds[i].name);
		fputs("help\n", out);
		return 0;
	}
	const struct tt_cmd *c = NULL;
	for (size_t i = 0; i < n && !c; i++)
		if (strcmp(cmds[i].name, argv[0]) == 0)
			c = &cmds[i];
	if (!c)
		return 1;
	if (argc >= 2) {
		const struct option *o = tt_option_named(c, argv[1]);
		for (const struct tt_cmd_arg *a = c->args; o && a->opt; a++)
			for (const char *p = a->values; a->opt == o->val && p && *p;) {
				size_t len = strcspn(p, ",");
				fprintf(out, "%.*s\n", (int)len, p);
				p += len;
				p += strspn(p, ", ");
			}
		return 0;
	}
	fprintf(out, "@operands %s\n", c->operands);
	for (const struct option *o = c->options; o->name; o++) {
		const char *kind = tt_arg_kind_name(c, o);
		fprintf(out, "--%s %s\n", o->name, kind);
		if (o->val < 256 && isalpha(o->val))
			fprintf(out, "-%c %s\n", o->val, kind);
	}
	return 0;
}
