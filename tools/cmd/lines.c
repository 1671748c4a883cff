/* `ticktrace lines`: a self-profile written by tt_profile_write, each bucket named
 * by function and file:line from the module's symbols and debug info (read/symbols.c,
 * as convert names functions). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

struct tt_bucket {
	uint64_t address, count;
};

/* Reads the file: its module (path into module_path, 4096 bytes), how it was sampled
 * (a Windows profile's third line: into sampler, 64 bytes; else empty) and buckets
 * (*buckets malloc'ed); 0 or -1 (reported). */
static int tt_lines_read(const char *path, struct tt_module *m, char *module_path, char *sampler,
			 struct tt_bucket **buckets, size_t *n)
{
	FILE *in = fopen(path, "r");
	if (!in)
		return tt_error("%s: %m", path);
	char line[4200];
	int version = 0, rc = 0;
	size_t got = 0, room = 0;
	*buckets = NULL;
	if (!fgets(line, sizeof(line), in) || sscanf(line, "ticktrace profile %d", &version) != 1 ||
	    version != 1) {
		rc = tt_error_at(path, 0, "not a profile from tt_profile_write (its first line is "
				 "\"ticktrace profile 1\")");
	} else if (!fgets(line, sizeof(line), in) ||
		   sscanf(line, "module %" SCNx64 " %" SCNx64 " %" SCNx64 " %4095[^\r\n]", &m->start,
			  &m->end, &m->file_offset, module_path) != 4) {
		rc = tt_error("%s: line 2: not \"module START END FILE_OFFSET PATH\"", path);
	}
	for (unsigned no = 3; rc == 0 && fgets(line, sizeof(line), in); no++) {
		struct tt_bucket b;
		if (no == 3 && sscanf(line, "sampler %63s", sampler) == 1)
			continue;
		if (sscanf(line, "%" SCNx64 " %" SCNu64, &b.address, &b.count) != 2) {
			rc = tt_error("%s: line %u: not \"ADDRESS COUNT\"", path, no);
			break;
		}
		if (tt_reserve(buckets, &room, got, sizeof(**buckets)) < 0) {
			rc = tt_error("out of memory");
			break;
		}
		(*buckets)[got++] = b;
	}
	fclose(in);
	m->path = (struct tt_str){module_path, (uint32_t)strlen(module_path)};
	m->build_id = (struct tt_str){"", 0}; /* none recorded: the file is taken as it is */
	*n = got;
	return rc;
}

int tt_lines(const char *path, const char *debug_dir, FILE *out)
{
	struct tt_module m = {.until = UINT64_MAX};
	char module_path[4096] = "", sampler[64] = "";
	struct tt_bucket *b = NULL;
	size_t n = 0;
	if (tt_lines_read(path, &m, module_path, sampler, &b, &n) < 0) {
		free(b);
		return -1;
	}
	struct tt_file f = {.path = path, .modules = &m, .nmodules = 1};
	struct tt_symbols *sym = tt_symbols_new(debug_dir);
	if (!sym) {
		free(b);
		return tt_error("out of memory");
	}
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += b[i].count;
	fprintf(out, "%s: %" PRIu64 " samples in %zu buckets of %s%s%s\n", path, total, n, module_path,
		sampler[0] ? ", sampled by " : "", sampler);
	fprintf(out, "%10s %7s  %-18s  %-32s %s\n", "samples", "%", "address", "where", "function");
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct tt_symbol s;
		uint64_t in_file;
		if ((rc = tt_symbols_lookup(sym, &f, b[i].address, UINT64_MAX - 1, &s)) < 0 ||
		    (rc = tt_symbols_file_address(sym, &f, b[i].address, UINT64_MAX - 1, &in_file)) < 0)
			break;
		char where[4200] = "?";
		if (s.file)
			snprintf(where, sizeof(where), "%s:%" PRIu32, s.file, s.line);
		fprintf(out, "%10" PRIu64 " %6.2f%%  %#18" PRIx64 "  %-32s %s\n", b[i].count,
			total ? 100.0 * (double)b[i].count / (double)total : 0.0,
			in_file, where, s.name ? s.name : "?");
	}
	tt_symbols_free(sym);
	free(b);
	return rc;
}

static const char tt_lines_usage[] =
	"usage: ticktrace lines PROFILE.txt [--debug-dir DIR]\n"
	"\n"
	"Names each bucket of a self-profile written by tt_profile_write (ticktrace(3)):\n"
	"its samples and share, its address in the module's file (as addr2line -e takes\n"
	"it), its source file:line and its function (function+0xOFFSET inside one), from\n"
	"the module's symbols and debug info. Run it where the profiled binary is.\n"
	"A Windows program's profile says how it was sampled (the kernel's profile, or a\n"
	"sampler thread); its buckets are named from the .exe's COFF symbols and DWARF.\n"
	"\n"
	"      --debug-dir DIR where to look for debug info first (see convert)\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 named, 1 bad input, 2 usage.\n";

enum { OPT_DEBUG_DIR = 256 };
const struct option tt_lines_options[] = {
	{"debug-dir", required_argument, NULL, OPT_DEBUG_DIR},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

const struct tt_cmd_arg tt_lines_args[] = {
	{OPT_DEBUG_DIR, TT_ARG_DIR, NULL},
	{0, 0, NULL},
};

int tt_cmd_lines(int argc, char **argv)
{
	const char *debug_dir = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "h", tt_lines_options, NULL)) != -1) {
		switch (c) {
		case OPT_DEBUG_DIR: debug_dir = optarg; break;
		case 'h': fputs(tt_lines_usage, stdout); return 0;
		default: return tt_usage_error(tt_lines_usage, NULL);
		}
	}
	if (argc - optind != 1)
		return tt_usage_error(tt_lines_usage, "lines: one profile file");
	if (tt_stdout_needed(NULL) < 0)
		return 1;
	return tt_lines(argv[optind], debug_dir, stdout) == 0 ? 0 : 1;
}
