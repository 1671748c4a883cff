#include "tt_check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

extern char **environ;

int tt_child_spawn(struct tt_child *c, const char *prog, const char *const *settings,
		   const char *const *args, const char *err)
{
	const char *env[256];
	size_t n = 0;
	for (char **e = environ; *e && n < 200; e++)
		if (strncmp(*e, "TICKTRACE", 9) != 0)
			env[n++] = *e;
	for (; *settings && n < 255; settings++)
		env[n++] = *settings;
	env[n] = NULL;
	const char *argv[16] = {prog};
	for (size_t i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	int out[2];
	if (pipe2(out, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, out[1], 1);
	if (err)
		posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int rc = posix_spawn(&c->pid, prog, &actions, NULL, (char *const *)argv, (char *const *)env);
	posix_spawn_file_actions_destroy(&actions);
	close(out[1]);
	c->out = rc == 0 ? fdopen(out[0], "r") : NULL;
	if (!c->out)
		close(out[0]);
	return c->out ? 0 : -1;
}

int tt_child_wait(struct tt_child *c, int seconds)
{
	int status = 0;
	pid_t got = 0;
	for (int tenths = 0; tenths < seconds * 10 && got == 0; tenths++) {
		got = waitpid(c->pid, &status, WNOHANG);
		if (got == 0)
			usleep(100000);
		else if (got < 0 && errno == EINTR)
			got = 0;
	}
	if (got == 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &status, 0);
	}
	fclose(c->out);
	if (got == 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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

/* The directories this process made and has not removed: a signal that ends the test
 * (meson's timeout sends SIGTERM to its process group) removes them first. A SIGKILL
 * runs no handler: those left then hold their maker's pid in their name, and the next
 * test that makes one removes them once that pid is gone. */
#define TT_TMPDIR_PREFIX "tt-test-"
#define TT_TMPDIRS_MAX 64
static char tt_tmpdirs[TT_TMPDIRS_MAX][64];

/* Removes `name` (relative to the directory `at`) and all it holds. Async-signal-safe
 * (no stdio, no malloc), so that the signal handler can call it. */
static void tt_remove_tree(int at, const char *name)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		char buf[4096];
		ssize_t n;
		while ((n = getdents64(fd, buf, sizeof buf)) > 0)
			for (ssize_t off = 0; off < n;) {
				const struct dirent64 *de = (const void *)(buf + off);
				off += de->d_reclen;
				if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
				    unlinkat(fd, de->d_name, 0) < 0)
					tt_remove_tree(fd, de->d_name); /* a directory */
			}
		close(fd);
	}
	unlinkat(at, name, AT_REMOVEDIR);
}

static void tt_tmpdirs_remove_and_die(int sig)
{
	for (size_t i = 0; i < TT_TMPDIRS_MAX; i++)
		if (tt_tmpdirs[i][0])
			tt_remove_tree(AT_FDCWD, tt_tmpdirs[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Removes what killed tests of this user left in `base`: directories whose maker's pid
 * no longer runs. */
static void tt_tmpdirs_reap(const char *base)
{
	DIR *tmp = opendir(base);
	struct dirent *de;
	while (tmp && (de = readdir(tmp))) {
		long pid;
		int end = 0; /* where the pid's dash ends: the name is PREFIX PID-XXXXXX, no other */
		struct stat st;
		if (sscanf(de->d_name, TT_TMPDIR_PREFIX "%ld-%n", &pid, &end) == 1 && end > 0 &&
		    strlen(de->d_name + end) == 6 && pid > 0 &&
		    kill((pid_t)pid, 0) < 0 && errno == ESRCH &&
		    fstatat(dirfd(tmp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode) && st.st_uid == geteuid())
			tt_remove_tree(dirfd(tmp), de->d_name);
	}
	if (tmp)
		closedir(tmp);
}

void tt_tmpdir_in(const char *base, char *dir, size_t cap)
{
	static int first = 1;
	if (first) {
		first = 0;
		tt_tmpdirs_reap("/tmp");
		tt_tmpdirs_reap("/dev/shm");
		static const int ending[] = {SIGHUP, SIGINT, SIGTERM};
		for (size_t i = 0; i < sizeof ending / sizeof ending[0]; i++)
			signal(ending[i], tt_tmpdirs_remove_and_die);
	}
	snprintf(dir, cap, "%s/" TT_TMPDIR_PREFIX "%ld-XXXXXX", base, (long)getpid());
	if (!mkdtemp(dir))
		abort();
	for (size_t i = 0; i < TT_TMPDIRS_MAX; i++)
		if (!tt_tmpdirs[i][0] && strlen(dir) < sizeof tt_tmpdirs[i]) {
			strcpy(tt_tmpdirs[i], dir);
			break;
		}
}

void tt_tmpdir(char *dir, size_t cap)
{
	tt_tmpdir_in("/tmp", dir, cap);
}

void tt_rmdir(const char *dir)
{
	tt_remove_tree(AT_FDCWD, dir);
	for (size_t i = 0; i < TT_TMPDIRS_MAX; i++)
		if (strcmp(tt_tmpdirs[i], dir) == 0)
			tt_tmpdirs[i][0] = 0;
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

char *tt_read_text(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *text = tt_slurp_fd(fd, NULL);
	close(fd);
	return text;
}

cJSON *tt_json_load(const char *path)
{
	char *text = tt_read_text(path);
	if (!text)
		return NULL;
	cJSON *root = cJSON_Parse(text);
	free(text);
	return root;
}

int64_t tt_json_ns(const cJSON *ev, const char *field)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, field);
	return cJSON_IsNumber(v) ? (int64_t)llround(v->valuedouble * 1000.0) : -1;
}

bool tt_json_is_states_track(const cJSON *thread_name)
{
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(thread_name, "args");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(args, "name");
	if (!cJSON_IsString(name))
		return false;
	size_t n = strlen(name->valuestring), tail = strlen(" (states)");
	return strcmp(name->valuestring, "states") == 0 ||
	       (n > tail && strcmp(name->valuestring + n - tail, " (states)") == 0);
}

char *tt_json_thread_listing(cJSON *root, const char *thread)
{
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		const char *name = cJSON_GetObjectItemCaseSensitive(ev, "name")->valuestring;
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
		uint32_t pid = (uint32_t)cJSON_GetObjectItemCaseSensitive(ev, "pid")->valuedouble;
		uint32_t tid = (uint32_t)cJSON_GetObjectItemCaseSensitive(ev, "tid")->valuedouble;
		if (strcmp(name, "thread_name") != 0)
			continue;
		if (thread ? strcmp(cJSON_GetObjectItemCaseSensitive(args, "name")->valuestring, thread) == 0 :
			     tid == pid)
			return tt_json_listing(root, tid);
	}
	fprintf(stderr, "no thread %s in the trace\n", thread ? thread : "main");
	return NULL;
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

int tt_check_perfetto(const char *check_py, const char *schema, const char *pftrace,
		      const char *json, const char *dir)
{
	int rc = tt_sh("python3 '%s' '%s' '%s' '%s' >'%s/perfetto.out' 2>&1", check_py, pftrace,
		       schema, json, dir);
	if (rc != 0 && rc != 77)
		tt_sh("cat '%s/perfetto.out' >&2", dir);
	return rc;
}

cJSON *tt_json_load_checked(const char *check_py, const char *schema, const char *pftrace,
			    const char *json, const char *dir)
{
	int rc = tt_check_perfetto(check_py, schema, pftrace, json, dir);
	return rc == 0 || rc == 77 ? tt_json_load(json) : NULL;
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
