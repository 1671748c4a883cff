/* TICKTRACE_REPORT: a program writes its own flat profile at exit, and it is the one
 * `ticktrace report` prints of the raw file the same run wrote: the same names and
 * calls exactly, the same times to within the difference of the two clock rates
 * (the report's end anchor is taken a moment after the file's). */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ticktrace.h"
#include "tt_check.h"

extern char **environ;

static volatile uint64_t sink;

static void spin(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sink += i;
}

static void *worker(void *arg)
{
	(void)arg;
	tt_thread_name("worker");
	for (int i = 0; i < 300; i++) {
		TT_SCOPE("work");
		spin(20000);
		TT_SCOPE("work_part");
		spin(10000);
	}
	return NULL;
}

/* The recording program: two threads, nested scopes, some 50 ms of work. */
static int child(void)
{
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	for (int i = 0; i < 200; i++) {
		TT_SCOPE("outer");
		spin(5000);
		for (int k = 0; k < 3; k++) {
			TT_SCOPE("inner");
			spin(10000);
		}
	}
	pthread_join(t, NULL);
	return 0;
}

/* Runs this program as the child with two more environment variables; returns what
 * it printed on stderr (free it). */
static char *run_child(const char *self, const char *out, const char *report)
{
	char out_env[256], report_env[256], err_path[128];
	snprintf(out_env, sizeof out_env, "TICKTRACE_OUT=%s", out);
	snprintf(report_env, sizeof report_env, "TICKTRACE_REPORT=%s", report);
	snprintf(err_path, sizeof err_path, "%s.stderr", out);
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 3, sizeof(*env));
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		/* (a run of its own: not a child of this traced test's) */
		if (strncmp(environ[i], "TICKTRACE_OUT=", 14) && strncmp(environ[i], "TICKTRACE_REPORT=", 17) &&
		    strncmp(environ[i], "TICKTRACE_PROGRAM_PID=", 22))
			env[k++] = environ[i];
	env[k++] = out_env;
	env[k++] = report_env;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	char *const argv[] = {(char *)self, "--child", NULL};
	pid_t pid;
	assert_int_equal(posix_spawn(&pid, self, &fa, NULL, argv, env), 0);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	char *text = tt_read_text(err_path);
	assert_non_null(text);
	return text;
}

struct csv_row {
	char name[64];
	int64_t v[10]; /* calls, total, self, children, min, max, mean, p50, p95, p99 */
};

static size_t parse_csv(const char *text, struct csv_row *rows, size_t cap)
{
	assert_non_null(strstr(text, "name,calls,total_ns,self_ns,children_ns,min_ns,max_ns,mean_ns,"
				     "p50_ns,p95_ns,p99_ns\r\n"));
	size_t n = 0;
	for (const char *p = strchr(text, '\n') + 1; *p; p = strchr(p, '\n') + 1) {
		assert_true(n < cap);
		struct csv_row *r = &rows[n++];
		int used = 0;
		assert_int_equal(sscanf(p, "\"%63[^\"]\",%n", r->name, &used), 1);
		const char *q = p + used;
		for (int i = 0; i < 10; i++) {
			r->v[i] = strtoll(q, (char **)&q, 10);
			q++;
		}
	}
	return n;
}

static void test_report_at_exit_is_the_tools_report(void **state)
{
	const char *self = *state;
	char dir[64], raw[128], csv[128], text_path[128];
	tt_tmpdir(dir, sizeof dir);
	snprintf(raw, sizeof raw, "%s/run.ttr", dir);
	snprintf(csv, sizeof csv, "%s/report-%%p.csv", dir);
	free(run_child(self, raw, csv));
	/* %p: the only report file is named after the child */
	char cmd[256], found[256] = "";
	snprintf(cmd, sizeof cmd, "ls %s/report-*.csv", dir);
	FILE *ls = popen(cmd, "r");
	assert_non_null(fgets(found, sizeof found, ls));
	pclose(ls);
	found[strcspn(found, "\n")] = 0;
	char *mine = tt_read_text(found);
	assert_non_null(mine);

	struct tt_run r;
	TT_RUN(&r, "report", raw, "--csv");
	assert_int_equal(r.status, 0);
	struct csv_row a[16], b[16];
	size_t na = parse_csv(mine, a, 16), nb = parse_csv(r.out, b, 16);
	assert_int_equal(na, 4);
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++) {
		size_t j = 0;
		while (j < nb && strcmp(a[i].name, b[j].name))
			j++;
		assert_true(j < nb);
		assert_int_equal(a[i].v[0], b[j].v[0]); /* calls */
		assert_int_equal(a[i].v[1], a[i].v[2] + a[i].v[3]); /* total = self + children */
		for (int k = 1; k < 10; k++) {
			int64_t diff = a[i].v[k] > b[j].v[k] ? a[i].v[k] - b[j].v[k] : b[j].v[k] - a[i].v[k];
			if (diff > 200 + b[j].v[k] / 1000)
				fail_msg("%s column %d: %lld at exit, %lld from the file", a[i].name, k,
					 (long long)a[i].v[k], (long long)b[j].v[k]);
		}
	}
	const char *counts[][2] = {{"outer", "200"}, {"inner", "600"}, {"work", "300"}, {"work_part", "300"}};
	for (size_t i = 0; i < 4; i++) {
		size_t j = 0;
		while (j < na && strcmp(a[j].name, counts[i][0]))
			j++;
		assert_true(j < na);
		assert_int_equal(a[j].v[0], atoi(counts[i][1]));
	}
	free(mine);
	free(r.out);

	/* the text table, on stderr and in a file */
	char *err = run_child(self, raw, "stderr");
	assert_non_null(strstr(err, "flat profile: 4 names, 1400 calls, 2 threads"));
	assert_non_null(strstr(err, "work_part"));
	free(err);
	snprintf(text_path, sizeof text_path, "%s/report.txt", dir);
	free(run_child(self, raw, text_path));
	FILE *f = fopen(text_path, "r");
	assert_non_null(f);
	char line[256];
	assert_non_null(fgets(line, sizeof line, f));
	assert_non_null(strstr(line, "flat profile: 4 names, 1400 calls, 2 threads"));
	fclose(f);
	tt_rmdir(dir);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--child") == 0)
		return child();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate(test_report_at_exit_is_the_tools_report, argv[0]),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
