/* ticktrace-selfprof: the self-profiling demo. Sums the bytes <= 0x7F of 64 KiB of
 * random bytes, then of the same bytes sorted, profiling the summing routine each
 * time; prints both CPU times and both histograms side by side, bucket by bucket,
 * beside the routine's instructions.
 *
 * The disassembly comes from running objdump on this executable at demo time (the
 * routine's file address is its run-time address less the load bias that
 * dl_iterate_phdr reports): it is exact, and it is what the compiler really emitted.
 * Without objdump the histograms are printed by offset alone, and the demo says so;
 * objdump's own complaints, if any, go to stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <link.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "selfprof_sum.h"

extern char **environ;

enum { BUF_SIZE = 64 * 1024, MAX_INSNS = 512 };

struct options {
	enum tt_profile_source source;
	size_t bucket;
	uint64_t interval;
	unsigned runs;
};

struct run {
	uint64_t cpu_ns;          /* unprofiled */
	uint64_t profiled_cpu_ns;
	uint64_t sum;
	uint64_t *counts;
	struct tt_profile_stats st;
};

struct insn {
	size_t offset;
	char text[96];
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ticktrace-selfprof [--source SOURCE] [--bucket BYTES] [--interval N] [--runs N]\n"
		"  --source    time (default), instructions, cycles, branch-misses, cache-misses\n"
		"  --bucket    bucket size in bytes, a power of two (default 4)\n"
		"  --interval  ns of CPU time for time (default 100000), events otherwise\n"
		"              (default: the library's, 1e6 or 1e4 for misses)\n"
		"  --runs      calls of the routine per data set (default 2000)\n"
		"Set TICKTRACE_PROFILE_NO_PERF=1 to see the timer fallback.\n");
}

static int parse_source(const char *s, enum tt_profile_source *out)
{
	for (int i = TT_PROFILE_TIME; tt_profile_source_name((enum tt_profile_source)i); i++)
		if (strcmp(s, tt_profile_source_name((enum tt_profile_source)i)) == 0) {
			*out = (enum tt_profile_source)i;
			return 0;
		}
	return -1;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{"source", required_argument, NULL, 's'}, {"bucket", required_argument, NULL, 'b'},
		{"interval", required_argument, NULL, 'i'}, {"runs", required_argument, NULL, 'r'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	*o = (struct options){.source = TT_PROFILE_TIME, .bucket = 4, .runs = 2000};
	bool interval_given = false;
	for (int c; (c = getopt_long(argc, argv, "s:b:i:r:h", longs, NULL)) != -1;) {
		char *end = NULL;
		errno = 0;
		switch (c) {
		case 's':
			if (parse_source(optarg, &o->source) != 0) {
				fprintf(stderr, "ticktrace-selfprof: unknown source '%s'\n", optarg);
				return -1;
			}
			continue;
		case 'b':
			o->bucket = (size_t)strtoull(optarg, &end, 0);
			break;
		case 'i':
			o->interval = strtoull(optarg, &end, 0);
			interval_given = true;
			break;
		case 'r':
			o->runs = (unsigned)strtoul(optarg, &end, 0);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
		if (errno || !end || *end || end == optarg) {
			fprintf(stderr, "ticktrace-selfprof: '%s' is not a number\n", optarg);
			return -1;
		}
	}
	if (optind != argc || o->runs == 0) {
		usage(stderr);
		return -1;
	}
	/* The sorted data runs fast: sample it densely enough for a histogram. */
	if (!interval_given && o->source == TT_PROFILE_TIME)
		o->interval = 100000;
	return 0;
}

/* Random bytes from a fixed seed, so every run sums the same data. */
static void fill_random(unsigned char *buf)
{
	uint64_t x = 0x9e3779b97f4a7c15u;
	for (size_t i = 0; i < BUF_SIZE; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (unsigned char)(x >> 32);
	}
}

static void sort_bytes(const unsigned char *in, unsigned char *out)
{
	size_t hist[256] = {0};
	for (size_t i = 0; i < BUF_SIZE; i++)
		hist[in[i]]++;
	for (size_t v = 0, k = 0; v < 256; v++)
		for (size_t j = 0; j < hist[v]; j++)
			out[k++] = (unsigned char)v;
}

static uint64_t sum_runs(const struct options *o, const unsigned char *buf)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < o->runs; i++)
		sum += tt_bench_bytesum(buf, BUF_SIZE);
	return sum;
}

/* Time the calls unprofiled (sampling costs the machine some time per sample), then
 * profile them. */
static int profile_run(const struct options *o, const unsigned char *buf, struct run *r)
{
	uint64_t t0 = thread_cpu_ns();
	r->sum = sum_runs(o, buf);
	r->cpu_ns = thread_cpu_ns() - t0;

	struct tt_profile_config cfg = {.bucket_size = o->bucket, .source = o->source,
					.interval = o->interval};
	TT_PROFILE_SECTION(&cfg, bytesum);
	struct tt_profile *p;
	int rc = tt_profile_create(&p, &cfg);
	if (rc != 0)
		return rc;
	t0 = thread_cpu_ns();
	rc = tt_profile_start(p);
	if (rc == 0 && sum_runs(o, buf) != r->sum)
		rc = -EIO; /* the same bytes summed differently: a broken build */
	if (rc == 0)
		rc = tt_profile_stop(p);
	r->profiled_cpu_ns = thread_cpu_ns() - t0;
	r->counts = NULL;
	if (rc == 0) {
		tt_profile_read(p, NULL, 0, &r->st);
		r->counts = calloc(r->st.buckets, sizeof(*r->counts));
		rc = r->counts ? tt_profile_read(p, r->counts, r->st.buckets, &r->st) : -ENOMEM;
	}
	tt_profile_close(p);
	return rc;
}

/* The object that holds addr: its path and load bias. */
struct module {
	uintptr_t addr;
	uintptr_t bias;
	char path[4096];
};

static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct module *m = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD || m->addr < lo || m->addr >= lo + ph->p_memsz)
			continue;
		m->bias = info->dlpi_addr;
		if (info->dlpi_name && *info->dlpi_name) {
			snprintf(m->path, sizeof(m->path), "%s", info->dlpi_name);
		} else {
			ssize_t n = readlink("/proc/self/exe", m->path, sizeof(m->path) - 1);
			m->path[n > 0 ? n : 0] = '\0';
		}
		return 1;
	}
	return 0;
}

/* Disassemble [start, start + size) of this process with objdump. Returns the
 * number of instructions, 0 if objdump is missing or says nothing. */
static size_t disassemble(const void *start, size_t size, struct insn *out)
{
	struct module m = {.addr = (uintptr_t)start};
	if (!dl_iterate_phdr(find_module, &m) || !m.path[0])
		return 0;
	uintptr_t lo = m.addr - m.bias;
	char from[32], to[32];
	snprintf(from, sizeof(from), "--start-address=0x%lx", (unsigned long)lo);
	snprintf(to, sizeof(to), "--stop-address=0x%lx", (unsigned long)(lo + size));
	char *argv[] = {"objdump", "-d", "--no-show-raw-insn", from, to, m.path, NULL};
	int pipefd[2];
	if (pipe(pipefd) != 0)
		return 0;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, pipefd[0]);
	pid_t pid;
	int rc = posix_spawnp(&pid, "objdump", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	size_t n = 0;
	FILE *f = fdopen(pipefd[0], "r");
	char line[512];
	while (f && rc == 0 && n < MAX_INSNS && fgets(line, sizeof(line), f)) {
		/* "  401136:\tmovzbl (%rdi),%eax" */
		char *tab = strchr(line, '\t');
		unsigned long addr;
		if (!tab || sscanf(line, " %lx:", &addr) != 1 || addr < lo || addr >= lo + size)
			continue;
		line[strcspn(line, "\n")] = '\0';
		out[n].offset = addr - lo;
		snprintf(out[n].text, sizeof(out[n].text), "%s", tab + 1);
		n++;
	}
	if (f)
		fclose(f);
	else
		close(pipefd[0]);
	if (rc == 0)
		waitpid(pid, NULL, 0);
	return n;
}

/* Does the loop still branch on the byte? A conditional move or vector code would
 * make sorted and random data run alike, and the demo would show nothing. */
static void check_branch(const struct insn *insns, size_t n)
{
	size_t jcc = 0, cmov = 0, vector = 0;
	for (size_t i = 0; i < n; i++) {
		const char *t = insns[i].text;
		jcc += t[0] == 'j' && strncmp(t, "jmp", 3) != 0;
		cmov += strncmp(t, "cmov", 4) == 0;
		vector += strstr(t, "%xmm") || strstr(t, "%ymm") || strstr(t, "%zmm");
	}
	if (cmov || vector || jcc < 2)
		printf("warning: the routine was compiled without a data-dependent branch (%zu "
		       "conditional jumps, %zu cmov, %zu vector); the difference may not show\n",
		       jcc, cmov, vector);
	else
		printf("the routine keeps its branch: %zu conditional jumps, no cmov, no vector code\n",
		       jcc);
}

static void print_cell(uint64_t count, uint64_t total)
{
	printf("  %7llu %5.1f%%", (unsigned long long)count,
	       total ? 100.0 * (double)count / (double)total : 0.0);
}

static void print_histograms(const struct options *o, const struct run *rnd,
			     const struct run *srt, const struct insn *insns, size_t ninsns)
{
	printf("\n%-8s  %15s  %15s  %s\n", "offset", "random", "sorted",
	       ninsns ? "instructions starting in the bucket" : "(no disassembly: objdump missing or failed)");
	size_t k = 0;
	for (size_t b = 0; b < rnd->st.buckets; b++) {
		size_t lo = b * o->bucket, hi = lo + o->bucket;
		bool first = true;
		bool has = rnd->counts[b] || srt->counts[b];
		for (; k < ninsns && insns[k].offset < hi; k++, first = false) {
			printf(first ? "+0x%-6zx" : "   +0x%-3zx", insns[k].offset);
			if (first) {
				print_cell(rnd->counts[b], rnd->st.samples);
				print_cell(srt->counts[b], srt->st.samples);
			} else {
				printf("  %15s  %15s", "", "");
			}
			printf("  %s\n", insns[k].text);
		}
		if (first && (has || !ninsns)) {
			printf("+0x%-6zx", lo);
			print_cell(rnd->counts[b], rnd->st.samples);
			print_cell(srt->counts[b], srt->st.samples);
			printf("%s\n", ninsns ? "  (inside the instruction above)" : "");
		}
	}
}

static void print_run(const char *name, const struct options *o, const struct run *r)
{
	printf("%-7s %8.3f s CPU, %7.1f us per call (%7.1f profiled), %llu samples in the "
	       "routine (%llu outside, %llu lost)\n",
	       name, (double)r->cpu_ns / 1e9, (double)r->cpu_ns / 1e3 / o->runs,
	       (double)r->profiled_cpu_ns / 1e3 / o->runs,
	       (unsigned long long)r->st.samples, (unsigned long long)r->st.outside,
	       (unsigned long long)r->st.lost);
}

int main(int argc, char **argv)
{
	struct options o;
	if (parse_options(argc, argv, &o) != 0)
		return 2;
	static unsigned char random_bytes[BUF_SIZE], sorted_bytes[BUF_SIZE];
	fill_random(random_bytes);
	sort_bytes(random_bytes, sorted_bytes);

	struct run rnd = {0}, srt = {0};
	int rc = profile_run(&o, random_bytes, &rnd);
	if (rc == 0)
		rc = profile_run(&o, sorted_bytes, &srt);
	if (rc == -ENODEV) {
		fprintf(stderr,
			"ticktrace-selfprof: --source %s needs a hardware performance counter (PMU), "
			"and this machine exposes none to perf (a VM without PMU passthrough?). "
			"Use --source time.\n",
			tt_profile_source_name(o.source));
		return 1;
	}
	if (rc != 0) {
		fprintf(stderr, "ticktrace-selfprof: profiling with --source %s failed: %s\n",
			tt_profile_source_name(o.source), strerror(-rc));
		return 1;
	}

	struct tt_profile_config range = {0};
	TT_PROFILE_SECTION(&range, bytesum);
	static struct insn insns[MAX_INSNS];
	size_t ninsns = disassemble(range.start, range.size, insns);

	printf("ticktrace-selfprof: sum of the bytes <= 0x7F of %d KiB, %u calls per data set\n",
	       BUF_SIZE / 1024, o.runs);
	printf("source %s through %s, interval %llu%s", tt_profile_source_name(rnd.st.source),
	       rnd.st.mechanism == TT_PROFILE_PERF ? "perf" : "CPU-time timers (fallback)",
	       (unsigned long long)rnd.st.interval, rnd.st.source == TT_PROFILE_TIME ? " ns" : " events");
	if (rnd.st.source == TT_PROFILE_TIME)
		printf(" (effective %llu ns)", (unsigned long long)rnd.st.effective_interval_ns);
	printf(", bucket %zu bytes, routine %zu bytes at %p\n", o.bucket, range.size, range.start);
	print_run("random", &o, &rnd);
	print_run("sorted", &o, &srt);
	printf("sorted runs %.2fx as fast (sums %s)\n", (double)rnd.cpu_ns / (double)srt.cpu_ns,
	       rnd.sum == srt.sum ? "equal" : "DIFFER");
	if (ninsns)
		check_branch(insns, ninsns);
	print_histograms(&o, &rnd, &srt, insns, ninsns);
	printf("\nA sample names the instruction about to run when it was taken, so the cost "
	       "of a stall or\nof a mispredicted branch shows on the instruction after it, or "
	       "on the branch's target.\n");
	free(rnd.counts);
	free(srt.counts);
	return rnd.sum == srt.sum ? 0 : 1;
}
