/* `ticktrace open FILE`: what the file is decides what is served. A trace Perfetto
 * loads (Chrome JSON, Perfetto protobuf) is served as it is; a raw file is first
 * converted to Perfetto's format in a private temporary directory, removed when done
 * (or on Ctrl-C); anything else is refused before a port is opened. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"

enum tt_trace_kind { TT_KIND_RAW, TT_KIND_JSON, TT_KIND_PERFETTO, TT_KIND_OTHER };

/* From the file's first bytes (head, n of them; size: the whole file's). */
static enum tt_trace_kind tt_trace_kind(const char *head, size_t n, size_t size)
{
	if (n >= TT_FILE_MAGIC_LEN && memcmp(head, TT_FILE_MAGIC, TT_FILE_MAGIC_LEN) == 0)
		return TT_KIND_RAW;
	/* Perfetto: a Trace message, whose field 1 (packet, length-delimited) comes first,
	 * and whose first packet's length fits in the file. */
	if (n >= 2 && (unsigned char)head[0] == 0x0a) {
		uint64_t len = 0;
		size_t i = 1;
		for (int shift = 0; i < n && i < 11; i++, shift += 7) {
			len |= (uint64_t)((unsigned char)head[i] & 0x7f) << shift;
			if (!((unsigned char)head[i] & 0x80))
				break;
		}
		if (i < n && i < 11 && len > 0 && len <= size - i - 1)
			return TT_KIND_PERFETTO;
	}
	/* Chrome JSON: an array of events, or an object with "traceEvents". */
	size_t i = n >= 3 && memcmp(head, "\xef\xbb\xbf", 3) == 0 ? 3 : 0; /* a BOM */
	while (i < n && strchr(" \t\r\n", head[i]))
		i++;
	if (i < n && head[i] == '[')
		return TT_KIND_JSON;
	if (i < n && head[i] == '{' && memmem(head, n, "\"traceEvents\"", 13))
		return TT_KIND_JSON;
	return TT_KIND_OTHER;
}

/* The converted file and its directory, removed at the end or on a signal. */
static char tt_open_tmp_dir[PATH_MAX], tt_open_tmp_file[PATH_MAX + 256];

static void tt_open_cleanup(void)
{
	if (tt_open_tmp_file[0]) {
		unlink(tt_open_tmp_file);
		tt_keep_on_signal(tt_open_tmp_file);
	}
	if (tt_open_tmp_dir[0]) {
		rmdir(tt_open_tmp_dir);
		tt_keep_on_signal(tt_open_tmp_dir);
	}
}

/* Converts the raw file at path to DIR/NAME.pftrace in a new private directory: the
 * whole run, or, past what the Perfetto UI loads, its shard `shard` (0: the first);
 * 0, or -1 after reporting why. */
static int tt_open_convert(char *path, const char *debug_dir, unsigned shard, FILE *out)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(tt_open_tmp_dir, sizeof(tt_open_tmp_dir), "%s/ticktrace-open.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	tt_signals_hold();
	char *made = mkdtemp(tt_open_tmp_dir);
	int err = errno;
	if (made)
		tt_remove_on_signal(tt_open_tmp_dir);
	tt_signals_release();
	if (!made) {
		tt_open_tmp_dir[0] = 0;
		return tt_error("cannot make a temporary directory to convert %s into: %s", path,
				strerror(err));
	}
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	int stem = (int)strcspn(base, "."); /* run.ttr.live: run */
	stem = stem ? stem : (int)strlen(base);
	snprintf(tt_open_tmp_file, sizeof(tt_open_tmp_file), "%s/%.*s.pftrace", tt_open_tmp_dir,
		 stem < 200 ? stem : 200, base);
	tt_remove_on_signal(tt_open_tmp_file);
	char *inputs[] = {path};
	unsigned nshards = 0;
	struct tt_convert_opts opts = {.inputs = inputs, .ninputs = 1, .output = tt_open_tmp_file,
				       .format = TT_FORMAT_PERFETTO, .quiet = true, .debug_dir = debug_dir,
				       .thresholds.global = TT_AN_NO_THRESHOLD,
				       .split = TT_UI_SLICE_LIMIT, .shard = shard ? shard : 1,
				       .nshards = &nshards};
	if (tt_convert(&opts, NULL) != 0)
		return -1;
	fprintf(out, "%s is a raw file: converted to Perfetto's format (%s, removed when done)\n",
		path, tt_open_tmp_file);
	if (nshards > 1)
		fprintf(out, "%s: more slices than the Perfetto UI loads: serving shard %u of %u (at "
			"most %" PRIu64 " slices each, in time order); `ticktrace open %s --shard N` "
			"serves another, `ticktrace convert %s --split %" PRIu64 " -o OUT.pftrace` "
			"writes them all\n",
			path, opts.shard, nshards, TT_UI_SLICE_LIMIT, path, path, TT_UI_SLICE_LIMIT);
	return 0;
}

int tt_open_trace(char *path, int port, const char *debug_dir, unsigned shard, FILE *out)
{
	char head[4096];
	ssize_t n = -1;
	struct stat st;
	const char *why;
	int fd = tt_open_regular(path, &why);
	if (fd < 0)
		return tt_error("%s: %s", path, why);
	if (fstat(fd, &st) == 0)
		n = pread(fd, head, sizeof(head), 0);
	int err = errno;
	close(fd);
	if (n < 0)
		return tt_error("%s: %s", path, strerror(err));
	switch (tt_trace_kind(head, (size_t)n, (size_t)st.st_size)) {
	case TT_KIND_JSON:
	case TT_KIND_PERFETTO:
		if (shard)
			return tt_error("%s: --shard N is for a raw file (.ttr): this is a trace already",
					path);
		return tt_serve_once(path, port, out);
	case TT_KIND_RAW: break;
	case TT_KIND_OTHER:
		return tt_error_at(path, 0, "not a trace: neither a ticktrace raw file (.ttr), Chrome "
				   "trace JSON nor Perfetto's protobuf format; nothing served");
	}
	int rc = tt_open_convert(path, debug_dir, shard, out);
	if (rc == 0)
		rc = tt_serve_once(tt_open_tmp_file, port, out);
	tt_open_cleanup();
	return rc;
}

static const char tt_open_usage[] =
	"usage: ticktrace open TRACE.pftrace|TRACE.json|RUN.ttr [--port N] [--shard K]\n"
	"                      [--debug-dir DIR]\n"
	"\n"
	"Serves the file once from 127.0.0.1 (loopback only) with the headers the\n"
	"Perfetto UI needs to fetch it, at a path with a random token, and prints the\n"
	"ui.perfetto.dev URL that loads it.\n"
	"Exits after the file is fetched, or on Ctrl-C. A raw file is converted to\n"
	"Perfetto's format first (in a temporary directory, removed when done); a file\n"
	"that is not a trace is refused. A raw file of more slices than the UI loads in a\n"
	"browser tab (3000000) is cut into shards of that many, as convert cuts it\n"
	"(see its help), and its first shard served, which is said.\n"
	"\n"
	"  -p, --port N        the port (default 9001, the one the UI may fetch from;\n"
	"                      0: any free port)\n"
	"      --shard K       serve the raw file's shard K (from 1) instead\n"
	"      --debug-dir DIR a raw file's debug info: where to look first (see convert)\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 served, 1 cannot serve, 2 usage.\n";

enum { OPT_DEBUG_DIR = 256, OPT_SHARD };
const struct option tt_open_options[] = {
	{"port", required_argument, NULL, 'p'},
	{"debug-dir", required_argument, NULL, OPT_DEBUG_DIR},
	{"shard", required_argument, NULL, OPT_SHARD},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

const struct tt_cmd_arg tt_open_args[] = {
	{OPT_DEBUG_DIR, TT_ARG_DIR, NULL},
	{0, 0, NULL},
};

int tt_cmd_open(int argc, char **argv)
{
	int c, port = TT_SERVE_PORT;
	unsigned long shard = 0;
	const char *debug_dir = NULL;
	char *end;
	while ((c = getopt_long(argc, argv, "p:h", tt_open_options, NULL)) != -1) {
		switch (c) {
		case 'p':
			port = (int)strtol(optarg, &end, 10);
			if (*end || port < 0 || port > 65535)
				return tt_usage_error(tt_open_usage, "open: --port is 0 to 65535");
			break;
		case OPT_DEBUG_DIR: debug_dir = optarg; break;
		case OPT_SHARD:
			errno = 0;
			shard = strtoul(optarg, &end, 10);
			if (!isdigit((unsigned char)optarg[0]) || *end || errno || shard == 0 ||
			    shard > UINT_MAX)
				return tt_usage_error(tt_open_usage, "open: --shard is a number, from 1");
			break;
		case 'h': fputs(tt_open_usage, stdout); return 0;
		default: return tt_usage_error(tt_open_usage, NULL);
		}
	}
	if (argc - optind != 1)
		return tt_usage_error(tt_open_usage, "open: one trace file");
	if (tt_stdout_needed(NULL) < 0) /* (the URL that loads it) */
		return 1;
	return tt_open_trace(argv[optind], port, debug_dir, (unsigned)shard, stdout) == 0 ? 0 : 1;
}
