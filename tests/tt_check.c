#include "tt_check.h"

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Reads all of fd into a malloc'ed string. */
static char *tt_slurp_fd(int fd, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *p = malloc(cap + 1);
	for (;;) {
		if (n == cap) {
			cap *= 2;
			p = realloc(p, cap + 1);
		}
		ssize_t r = read(fd, p + n, cap - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	p[n] = 0;
	if (len)
		*len = n;
	return p;
}

void tt_run(struct tt_run *r, const char *const *args)
{
	const char *exe = getenv("TT_TEST_TOOL");
	if (!exe)
		exe = "ticktrace";
	size_t n = 0;
	while (args[n])
		n++;
	const char **argv = calloc(n + 2, sizeof(*argv));
	argv[0] = exe;
	memcpy(argv + 1, args, n * sizeof(*argv));
	char errpath[] = "/tmp/tt-stderr-XXXXXX";
	int errfd = mkstemp(errpath);
	unlink(errpath);
	int outpipe[2];
	if (errfd < 0 || pipe(outpipe) < 0)
		abort();
	pid_t pid = fork();
	if (pid == 0) {
		dup2(outpipe[1], 1);
		dup2(errfd, 2);
		close(outpipe[0]);
		execv(exe, (char *const *)argv);
		_exit(127);
	}
	close(outpipe[1]);
	r->out = tt_slurp_fd(outpipe[0], &r->out_len);
	close(outpipe[0]);
	int st;
	waitpid(pid, &st, 0);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	lseek(errfd, 0, SEEK_SET);
	ssize_t e = read(errfd, r->err, sizeof(r->err) - 1);
	r->err[e > 0 ? e : 0] = 0;
	close(errfd);
	free(argv);
}

void tt_tmpdir(char *dir, size_t cap)
{
	snprintf(dir, cap, "/tmp/tt-test-XXXXXX");
	if (!mkdtemp(dir))
		abort();
}

void tt_rmdir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[4096];
	while (d && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (unlink(path) < 0)
				tt_rmdir(path); /* a directory */
		}
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

int tt_fixture_setup(void **state, const char *in, const char *out)
{
	struct tt_fixture *fx = calloc(1, sizeof(*fx));
	tt_tmpdir(fx->dir, sizeof(fx->dir));
	snprintf(fx->in, sizeof(fx->in), "%s/%s", fx->dir, in);
	snprintf(fx->out, sizeof(fx->out), "%s/%s", fx->dir, out);
	snprintf(fx->aux, sizeof(fx->aux), "%s/aux", fx->dir);
	*state = fx;
	return 0;
}

int tt_fixture_teardown(void **state)
{
	struct tt_fixture *fx = *state;
	tt_rmdir(fx->dir);
	free(fx);
	return 0;
}

int tt_dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;
	while (d && (de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

cJSON *tt_json_load(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	char *text = tt_slurp_fd(fd, NULL);
	close(fd);
	cJSON *root = cJSON_Parse(text);
	free(text);
	return root;
}

int64_t tt_json_ns(const cJSON *ev, const char *field)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, field);
	return cJSON_IsNumber(v) ? (int64_t)llround(v->valuedouble * 1000.0) : -1;
}

cJSON *tt_json_find(cJSON *root, const char *ph, const char *name)
{
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(ev, "ph");
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(ev, "name");
		if (cJSON_IsString(p) && cJSON_IsString(n) && strcmp(p->valuestring, ph) == 0 &&
		    strcmp(n->valuestring, name) == 0)
			return (cJSON *)ev;
	}
	return NULL;
}

struct tt_item {
	int64_t ts, dur; /* dur -1: not a slice */
	const char *ph, *name;
	size_t order;    /* position in the file, to keep ties stable */
};

/* Time order; at equal times the longer slice first (it is the parent), slices
 * before points. */
static int tt_item_cmp(const void *a, const void *b)
{
	const struct tt_item *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

char *tt_json_listing(cJSON *root, uint32_t tid)
{
	const cJSON *events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
	size_t n = 0, cap = (size_t)cJSON_GetArraySize(events) + 1;
	struct tt_item *items = calloc(cap, sizeof(*items));
	const cJSON *ev;
	cJSON_ArrayForEach(ev, events)
	{
		const char *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph")->valuestring;
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(ev, "tid");
		if (strchr("MCstf", ph[0]) || (tid && (uint32_t)t->valuedouble != tid))
			continue;
		items[n] = (struct tt_item){
			.ts = tt_json_ns(ev, "ts"),
			.dur = strcmp(ph, "X") == 0 ? tt_json_ns(ev, "dur") : -1,
			.ph = ph,
			.name = cJSON_GetObjectItemCaseSensitive(ev, "name")->valuestring,
			.order = n,
		};
		n++;
	}
	qsort(items, n, sizeof(*items), tt_item_cmp);
	size_t len = 0, outcap = 64 + n * 80;
	char *out = malloc(outcap);
	int64_t stack[256];
	int depth = 0;
	out[0] = 0;
	for (size_t i = 0; i < n; i++) {
		const struct tt_item *it = &items[i];
		/* What starts at a slice's end time is after it (ENDBEGIN siblings). */
		while (depth > 0 && stack[depth - 1] <= it->ts)
			depth--;
		if (depth > 0 && it->dur >= 0 && it->ts + it->dur > stack[depth - 1]) {
			fprintf(stderr, "%s at %lld overlaps its parent's end %lld\n", it->name,
				(long long)it->ts, (long long)stack[depth - 1]);
			free(out);
			free(items);
			return NULL;
		}
		len += (size_t)snprintf(out + len, outcap - len, "%s %s %d\n", it->ph, it->name, depth);
		if (it->dur >= 0 && depth < 256)
			stack[depth++] = it->ts + it->dur;
	}
	free(items);
	return out;
}

int tt_sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int st = system(cmd);
	int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	if (rc)
		fprintf(stderr, "exit %d: %s\n", rc, cmd);
	return rc;
}
