/* A forked program, through the converter: the child records into its own file with
 * none of the parent's events, and `ticktrace convert parent.ttr child.ttr` puts both
 * processes on one timeline, each under its own pid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>
#include <cmocka.h>

#include "ticktrace.h"
#include "cmd/cmd.h"

static cJSON *tt_load_json(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char text[1 << 20];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	return cJSON_Parse(text);
}

/* Complete slices named `name` in process `pid`. */
static int tt_count_slices(const cJSON *root, double pid, const char *name)
{
	int n = 0;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(ev, "pid");
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(ev, "name");
		n += cJSON_IsString(ph) && strcmp(ph->valuestring, "X") == 0 && cJSON_IsNumber(p) &&
		     p->valuedouble == pid && strcmp(nm->valuestring, name) == 0;
	}
	return n;
}

/* The pids that have a process_name, in order. */
static int tt_processes(const cJSON *root, double *pids, int max)
{
	int n = 0;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(ev, "name");
		if (n < max && cJSON_IsString(nm) && strcmp(nm->valuestring, "process_name") == 0)
			pids[n++] = cJSON_GetObjectItemCaseSensitive(ev, "pid")->valuedouble;
	}
	return n;
}

static void test_fork_child_has_own_file_and_both_merge(void **state)
{
	(void)state;
	char dir[] = "/tmp/tt-fork-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char parent_path[64], child_path[64], out[64];
	snprintf(parent_path, sizeof(parent_path), "%s/parent.ttr", dir);
	snprintf(child_path, sizeof(child_path), "%s/child.ttr", dir);
	snprintf(out, sizeof(out), "%s/all.json", dir);

	TT_BEGIN("before_fork");
	TT_END();
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		TT_BEGIN("in_child");
		TT_END();
		_exit(tt_dump(child_path) == 0 ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	TT_BEGIN("after_fork");
	TT_END();
	assert_int_equal(tt_dump(parent_path), 0);

	char *inputs[] = {parent_path, child_path};
	struct tt_convert_opts opts = {.inputs = inputs, .ninputs = 2, .output = out, .quiet = true};
	struct tt_summary sum;
	assert_int_equal(tt_convert(&opts, &sum), 0);
	assert_int_equal(sum.dropped + sum.unmatched + sum.warnings, 0);

	cJSON *root = tt_load_json(out);
	assert_non_null(root);
	double pids[4];
	assert_int_equal(tt_processes(root, pids, 4), 2);
	assert_true(pids[0] == (double)getpid() || pids[1] == (double)getpid());
	assert_true(pids[0] == (double)child || pids[1] == (double)child);
	assert_int_equal(tt_count_slices(root, getpid(), "before_fork"), 1);
	assert_int_equal(tt_count_slices(root, getpid(), "after_fork"), 1);
	assert_int_equal(tt_count_slices(root, getpid(), "in_child"), 0);
	assert_int_equal(tt_count_slices(root, child, "in_child"), 1);
	assert_int_equal(tt_count_slices(root, child, "before_fork"), 0); /* not duplicated */
	assert_int_equal(tt_count_slices(root, child, "after_fork"), 0);
	cJSON_Delete(root);

	unlink(parent_path);
	unlink(child_path);
	unlink(out);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_child_has_own_file_and_both_merge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
