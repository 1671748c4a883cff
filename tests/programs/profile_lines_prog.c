/* Profiles its own hot loop (a TT_PROFILED section) and writes the buckets with
 * tt_profile_write to argv[1], for tests/profile_lines.sh. Built with -g. */
#include <stdio.h>
#include <time.h>

#include <ticktrace.h>

static volatile unsigned long sink;

TT_PROFILED(lines) void lines_hot_loop(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * i; /* the line where the time goes */
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct tt_profile_config cfg = {.bucket_size = 4, .interval = 100000};
	TT_PROFILE_SECTION(&cfg, lines);
	struct tt_profile *p;
	int rc = tt_profile_create(&p, &cfg);
	if (argc != 2 || rc != 0) {
		fprintf(stderr, "profile_lines_prog OUT: %d\n", rc);
		return 1;
	}
	tt_profile_start(p);
	for (double until = cpu_seconds() + 0.3; cpu_seconds() < until;)
		lines_hot_loop(100000);
	tt_profile_stop(p);
	FILE *out = fopen(argv[1], "w");
	rc = out ? tt_profile_write(p, out) : -1;
	if (out)
		fclose(out);
	tt_profile_close(p);
	return rc == 0 ? 0 : 1;
}
