/* A one-shot HTTP server on the loopback interface, as Perfetto's open_trace_in_ui:
 * the UI at https://ui.perfetto.dev fetches http://127.0.0.1:PORT/NAME, which needs
 * CORS headers naming its origin (and, for Chrome's private network access, an
 * answer to the preflight). Nothing but that one file is served, and only to requests
 * that name 127.0.0.1 or localhost as their Host: a web page whose own name was made
 * to resolve to 127.0.0.1 (DNS rebinding) sends its own name, and is refused. A client
 * that says nothing for TT_OPEN_IDLE_S seconds is dropped, so that it cannot keep
 * the browser waiting. */
#include "base.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>


/* A client's request head must come within this long; a send that makes no
 * progress for TT_OPEN_STALL_S seconds gives up. */
#define TT_OPEN_IDLE_S 2
#define TT_OPEN_STALL_S 30

#define TT_UI_ORIGIN "https://ui.perfetto.dev"
#define TT_CORS                                                                   \
	"Access-Control-Allow-Origin: " TT_UI_ORIGIN "\r\n"                           \
	"Access-Control-Allow-Methods: GET, OPTIONS\r\n"                              \
	"Access-Control-Allow-Headers: *\r\n"                                         \
	"Access-Control-Allow-Private-Network: true\r\n"

/* The file's name as a URL path segment: unreserved bytes as they are, others %XX. */
static void tt_url_name(const char *name, char *out, size_t cap)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)name; *p && n + 4 < cap; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~", *p))
			out[n++] = (char)*p;
		else
			n += (size_t)snprintf(out + n, cap - n, "%%%02X", *p);
	}
	out[n] = 0;
}

static bool tt_send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* Reads a request head (up to the blank line); false when the client went away. */
static bool tt_read_request(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	while (n + 1 < cap) {
		ssize_t r = recv(fd, buf + n, cap - 1 - n, 0);
		if (r <= 0)
			return false;
		n += (size_t)r;
		buf[n] = 0;
		if (strstr(buf, "\r\n\r\n"))
			return true;
	}
	return false;
}

/* Whether the request's Host header names this machine's loopback at `port`. */
static bool tt_host_is_loopback(const char *req, int port)
{
	const char *line = req;
	while ((line = strstr(line, "\r\n")) != NULL) {
		line += 2;
		if (strncasecmp(line, "Host:", 5) != 0)
			continue;
		const char *v = line + 5;
		v += strspn(v, " \t");
		size_t len = strcspn(v, " \t\r\n");
		char want[64];
		static const char *const names[] = {"127.0.0.1", "localhost"};
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
			int n = snprintf(want, sizeof want, "%s:%d", names[i], port);
			if (len == (size_t)n && strncasecmp(v, want, len) == 0)
				return true;
		}
		return false;
	}
	return false;
}

/* Answers one connection; true once the file has been sent. */
static bool tt_serve_one(int client, const char *url_name, int file_fd, off_t size, int port)
{
	char req[8192], head[1024];
	if (!tt_read_request(client, req, sizeof(req)))
		return false;
	char method[16], target[4096];
	if (sscanf(req, "%15s %4095s", method, target) != 2)
		return false;
	if (!tt_host_is_loopback(req, port)) {
		static const char bad[] = "HTTP/1.1 421 Misdirected Request\r\n"
					  "Content-Length: 0\r\nConnection: close\r\n\r\n";
		tt_send_all(client, bad, sizeof(bad) - 1);
		return false;
	}
	if (strcmp(method, "OPTIONS") == 0) {
		static const char ok[] = "HTTP/1.1 204 No Content\r\n" TT_CORS
					 "Content-Length: 0\r\nConnection: close\r\n\r\n";
		tt_send_all(client, ok, sizeof(ok) - 1);
		return false;
	}
	if (strcmp(method, "GET") != 0 || target[0] != '/' || strcmp(target + 1, url_name) != 0) {
		static const char nf[] = "HTTP/1.1 404 Not Found\r\n" TT_CORS
					 "Content-Length: 0\r\nConnection: close\r\n\r\n";
		tt_send_all(client, nf, sizeof(nf) - 1);
		return false;
	}
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 200 OK\r\n" TT_CORS "Content-Type: application/octet-stream\r\n"
			 "Content-Length: %" PRIu64 "\r\nCache-Control: no-cache\r\n"
			 "Connection: close\r\n\r\n",
			 (uint64_t)size);
	if (!tt_send_all(client, head, (size_t)n))
		return false;
	off_t at = 0;
	while (at < size) {
		ssize_t s = sendfile(client, file_fd, &at, (size_t)(size - at));
		if (s <= 0)
			return false;
	}
	return true;
}

int tt_serve_once(const char *path, int port, FILE *out)
{
	int file_fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO: refused, not waited on */
	struct stat st;
	if (file_fd < 0 || fstat(file_fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int err = file_fd < 0 ? errno : EINVAL;
		if (file_fd >= 0)
			close(file_fd);
		return tt_error("%s: %s", path, err == EINVAL ? "not a regular file" : strerror(err));
	}
	int srv = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(addr);
	if (srv < 0 || setsockopt(srv, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(srv, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(srv, 8) < 0 ||
	    getsockname(srv, (struct sockaddr *)&addr, &len) < 0) {
		int err = errno;
		if (srv >= 0)
			close(srv);
		close(file_fd);
		return tt_error("cannot listen on 127.0.0.1:%d: %s", port, strerror(err));
	}
	const char *slash = strrchr(path, '/');
	char url_name[3 * 256 + 1];
	tt_url_name(slash ? slash + 1 : path, url_name, sizeof(url_name));
	fprintf(out, "Open this URL in a browser to load %s in Perfetto:\n"
		"  " TT_UI_ORIGIN "/#!/?url=http://127.0.0.1:%d/%s\n"
		"(serving it once from 127.0.0.1:%d; Ctrl-C to stop)\n",
		path, ntohs(addr.sin_port), url_name, ntohs(addr.sin_port));
	fflush(out);
	/* A client that hangs up mid-file is an error on its socket, not our end. */
	signal(SIGPIPE, SIG_IGN);
	bool sent = false;
	while (!sent) {
		int client = accept4(srv, NULL, NULL, SOCK_CLOEXEC);
		if (client < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		struct timeval idle = {.tv_sec = TT_OPEN_IDLE_S}, stall = {.tv_sec = TT_OPEN_STALL_S};
		setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle));
		setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &stall, sizeof(stall));
		sent = tt_serve_one(client, url_name, file_fd, st.st_size, ntohs(addr.sin_port));
		close(client);
	}
	close(srv);
	close(file_fd);
	return sent ? 0 : tt_error("accept failed: %s", strerror(errno));
}
