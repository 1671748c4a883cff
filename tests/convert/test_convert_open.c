/* `ticktrace open`: the converted run served over HTTP to a viewer, and to clients
 * that misbehave (hostile, slow). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tt_check.h"
#include "tt_demo.h"
#include "tt_tw.h"
#include "convert_support.h"

/* One HTTP exchange with 127.0.0.1:port; the whole response, malloc'ed (what came
 * within 10 s: a server that keeps silent fails the test, not hangs it). */
static char *http(int port, const char *request)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval limit = {.tv_sec = 10};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(write(fd, request, strlen(request)), (ssize_t)strlen(request));
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	ssize_t r;
	while ((r = read(fd, buf + n, cap - n)) > 0)
		if ((n += (size_t)r) == cap)
			buf = realloc(buf, (cap *= 2) + 1);
	buf[n] = 0;
	close(fd);
	return buf;
}

/* The server a test started, stopped by its teardown if the test failed. */
static pid_t open_server;

static int open_teardown(void **state)
{
	if (open_server > 0) {
		kill(open_server, SIGKILL);
		waitpid(open_server, NULL, 0);
		open_server = 0;
	}
	return tt_fixture_teardown(state);
}

/* Starts `ticktrace open PATH` on a free port; its pid, the port in *port and the
 * file's URL path in url_path ("/NAME"). */
static pid_t start_open(const char *path, int *port, char *url_path, size_t cap)
{
	int out[2];
	assert_int_equal(pipe(out), 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(out[1], 1);
		execl(getenv("TT_TEST_TOOL"), "ticktrace", "open", "--port", "0", path, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	char banner[1024];
	FILE *fp = fdopen(out[0], "r");
	/* the URL is on the second line */
	assert_non_null(fgets(banner, sizeof(banner) / 2, fp));
	assert_non_null(fgets(banner + strlen(banner), sizeof(banner) / 2, fp));
	fclose(fp);
	static const char prefix[] = "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:";
	const char *url = strstr(banner, prefix);
	assert_non_null(url);
	*port = atoi(url + strlen(prefix));
	assert_true(*port > 0);
	const char *slash = strchr(url + strlen(prefix), '/');
	assert_non_null(slash);
	snprintf(url_path, cap, "%.*s", (int)strcspn(slash, "\n"), slash);
	return open_server = pid;
}

/* A request for `target` from a browser on this machine (Host 127.0.0.1:port). */
static char *http_get(int port, const char *method, const char *target)
{
	char req[512];
	snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
		 "Origin: https://ui.perfetto.dev\r\n\r\n", method, target, port);
	return http(port, req);
}

static void expect_exit_0(pid_t pid)
{
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	open_server = 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("ticktrace open ended with status %#x", st);
}

/* The demo converted to JSON and served by start_open. */
static pid_t open_demo_json(struct tt_fixture *fx, int *port, char *url_path, size_t cap)
{
	assert_int_equal(tt_demo_write(fx->in), 0);
	struct tt_run r;
	TT_RUN(&r, "convert", "-q", fx->in, "-o", fx->out);
	free(r.out);
	return start_open(fx->out, port, url_path, cap);
}

/* ticktrace open serves the file once on loopback with the UI's CORS headers. */
static void test_open(void **state)
{
	int port;
	char target[256];
	pid_t pid = open_demo_json(*state, &port, target, sizeof(target));
	/* "/TOKEN/run.json", TOKEN 32 random hex digits (issue 24 item 14: another local
	 * user fetched "/run.json" first, and the file is served once) */
	assert_int_equal(strlen(target), 1 + 32 + 1 + strlen("run.json"));
	assert_int_equal(strspn(target + 1, "0123456789abcdef"), 32);
	assert_string_equal(target + 33, "/run.json");

	char *resp = http_get(port, "GET", "/other.json");
	assert_non_null(strstr(resp, "404"));
	free(resp);
	/* the file's name without the token, or another token: 404, the file still there */
	resp = http_get(port, "GET", "/run.json");
	assert_non_null(strstr(resp, "404"));
	free(resp);
	char guess[256];
	snprintf(guess, sizeof(guess), "/%032x/run.json", 0);
	resp = http_get(port, "GET", guess);
	assert_non_null(strstr(resp, "404"));
	free(resp);
	resp = http_get(port, "OPTIONS", target);
	assert_non_null(strstr(resp, "HTTP/1.1 204"));
	assert_non_null(strstr(resp, "Access-Control-Allow-Origin: https://ui.perfetto.dev\r\n"));
	free(resp);
	resp = http_get(port, "GET", target);
	assert_non_null(strstr(resp, "HTTP/1.1 200 OK"));
	assert_non_null(strstr(resp, "Access-Control-Allow-Origin: https://ui.perfetto.dev\r\n"));
	const char *body = strstr(resp, "\r\n\r\n");
	assert_non_null(body);
	cJSON *served = cJSON_Parse(body + 4);
	assert_non_null(tt_json_find(served, "X", "work"));
	cJSON_Delete(served);
	free(resp);
	/* served once: it exits by itself */
	expect_exit_0(pid);
}

/* What hostile clients did to ticktrace open: a page that made
 * its own name resolve to 127.0.0.1 is refused; a client that hangs up mid-file
 * does not kill it (SIGPIPE); one that connects and says nothing does not keep the
 * browser waiting. The browser is served after each. */
static void test_open_hostile_clients(void **state)
{
	struct tt_fixture *fx = *state;
	/* big enough that sending it outlasts the socket buffers; an empty JSON array, so
	 * that open takes it for a trace */
	static char big[16 << 20];
	memset(big, ' ', sizeof(big));
	big[0] = '[';
	big[sizeof(big) - 1] = ']';
	assert_int_equal(tt_tw_save(fx->out, big, sizeof(big)), 0);
	int port;
	char target[256];
	pid_t pid = start_open(fx->out, &port, target, sizeof(target));

	char req[512];
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: rebound.example:%d\r\n\r\n", target, port);
	char *resp = http(port, req);
	assert_null(strstr(resp, "200 OK"));
	assert_non_null(strstr(resp, "421"));
	free(resp);
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\n\r\n", target); /* no Host at all */
	resp = http(port, req);
	assert_null(strstr(resp, "200 OK"));
	free(resp);

	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int quitter = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(quitter, (struct sockaddr *)&a, sizeof(a)), 0);
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", target, port);
	assert_int_equal(write(quitter, req, strlen(req)), (ssize_t)strlen(req));
	char some[4096];
	assert_true(read(quitter, some, sizeof(some)) > 0); /* it began sending */
	close(quitter);

	int idle = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(idle, (struct sockaddr *)&a, sizeof(a)), 0);
	resp = http_get(port, "GET", target);
	close(idle);
	assert_non_null(strstr(resp, "HTTP/1.1 200 OK"));
	free(resp);
	expect_exit_0(pid);
}

/* A client that sends its request one byte every half second, in a child: 0 once the
 * server closed its connection within `seconds`, 1 if it never did. */
static pid_t start_trickle(int port, int seconds)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		_exit(2);
	static const char head[] = "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
	for (int i = 0; i < 2 * seconds; i++) {
		char c = i < (int)sizeof(head) - 1 ? head[i] : 'a';
		if (send(fd, &c, 1, MSG_NOSIGNAL) != 1)
			_exit(0);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		char got;
		if (poll(&p, 1, 500) > 0 && recv(fd, &got, 1, 0) <= 0)
			_exit(0);
	}
	_exit(1);
}

/* Issue 24 item 15: a client that sends its request head a byte at a time once held
 * the server for everyone (the timeout was per recv). Now the browser is served
 * beside it, and the trickler is dropped when its head is not complete in 5 s. */
static void test_open_slow_client(void **state)
{
	int port;
	char target[256];
	pid_t pid = open_demo_json(*state, &port, target, sizeof(target));
	pid_t trickler = start_trickle(port, 30);
	/* let it connect and begin */
	usleep(300 * 1000);
	char *resp = http_get(port, "GET", "/other.json");
	assert_non_null(strstr(resp, "404"));
	free(resp);
	int st;
	assert_int_equal(waitpid(trickler, &st, 0), trickler);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("the slow client was not dropped within 30 s (status %#x)", st);
	resp = http_get(port, "GET", target);
	assert_non_null(strstr(resp, "HTTP/1.1 200 OK"));
	free(resp);
	expect_exit_0(pid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open, setup, open_teardown),
		cmocka_unit_test_setup_teardown(test_open_hostile_clients, setup, open_teardown),
		cmocka_unit_test_setup_teardown(test_open_slow_client, setup, open_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
