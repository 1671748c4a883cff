/* A one-shot HTTP server on the loopback interface, as Perfetto's open_trace_in_ui:
 * the UI at https://ui.perfetto.dev fetches http://127.0.0.1:PORT/NAME, which needs
 * CORS headers naming its origin (and, for Chrome's private network access, an
 * answer to the preflight). Nothing but that one file is served, and only to requests
 * that name 127.0.0.1 or localhost as their Host: a web page whose own name was made
 * to resolve to 127.0.0.1 (DNS rebinding) sends its own name, and is refused. The
 * port is known (the UI's content security policy names it), so the file's path holds
 * a random token: any other local user gets 404. Clients are served side by side,
 * each with a deadline for its whole request head, so that none can keep the browser
 * waiting. */
#include "base.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/sendfile.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


/* A client's whole request head must come within this long, however it trickles;
 * a send that makes no progress for TT_OPEN_STALL_S seconds gives up. */
#define TT_OPEN_HEAD_S 5
#define TT_OPEN_STALL_S 30
/* Connections served at once; more wait in the listen queue. */
#define TT_OPEN_CLIENTS 32
/* Random bytes in the file's path: another local user cannot guess it and fetch the
 * file first (it is served once). */
#define TT_OPEN_TOKEN_BYTES 16

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

/* One connection: its request head as it comes, then its answer. */
struct tt_client {
	int fd;                 /* -1: a free slot */
	int64_t deadline_ms;    /* the head must be complete by then */
	size_t n;               /* bytes of the head so far */
	size_t head_len, head_sent;
	bool file;
	off_t at;               /* of the file, sent so far */
	int64_t progress_ms;    /* when the last bytes went out */
	char req[8192];
	char head[1024];        /* the answer's head, then the file when `file` */
};

struct tt_server {
	const char *url_path; /* "/TOKEN/NAME" */
	int file_fd;
	off_t size;
	int port;
	struct tt_client clients[TT_OPEN_CLIENTS];
};

static int64_t tt_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void tt_client_answer(struct tt_client *c, const char *text)
{
	c->head_len = (size_t)snprintf(c->head, sizeof(c->head), "%s", text);
}

/* The head is complete: what to answer. Only a GET of the file's exact path (its
 * random token) from a page that names the loopback as its host gets the file. */
static void tt_client_request(struct tt_server *sv, struct tt_client *c)
{
	static const char bad[] = "HTTP/1.1 421 Misdirected Request\r\n"
				  "Content-Length: 0\r\nConnection: close\r\n\r\n";
	static const char ok[] = "HTTP/1.1 204 No Content\r\n" TT_CORS
				 "Content-Length: 0\r\nConnection: close\r\n\r\n";
	static const char nf[] = "HTTP/1.1 404 Not Found\r\n" TT_CORS
				 "Content-Length: 0\r\nConnection: close\r\n\r\n";
	char method[16], target[4096];
	if (sscanf(c->req, "%15s %4095s", method, target) != 2 || !tt_host_is_loopback(c->req, sv->port))
		tt_client_answer(c, bad);
	else if (strcmp(method, "OPTIONS") == 0)
		tt_client_answer(c, ok);
	else if (strcmp(method, "GET") != 0 || strcmp(target, sv->url_path) != 0)
		tt_client_answer(c, nf);
	else {
		c->head_len = (size_t)snprintf(c->head, sizeof(c->head),
			"HTTP/1.1 200 OK\r\n" TT_CORS "Content-Type: application/octet-stream\r\n"
			"Content-Length: %" PRIu64 "\r\nCache-Control: no-cache\r\n"
			"Connection: close\r\n\r\n", (uint64_t)sv->size);
		c->file = true;
	}
}

static void tt_client_close(struct tt_client *c)
{
	close(c->fd);
	c->fd = -1;
}

/* Reads what came; false when the client is done with (gone, or its head too long). */
static bool tt_client_read(struct tt_server *sv, struct tt_client *c, int64_t now)
{
	ssize_t r = recv(c->fd, c->req + c->n, sizeof(c->req) - 1 - c->n, MSG_DONTWAIT);
	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
		return false;
	if (r > 0) {
		c->n += (size_t)r;
		c->req[c->n] = 0;
	}
	if (strstr(c->req, "\r\n\r\n")) {
		tt_client_request(sv, c);
		c->progress_ms = now;
		return true;
	}
	return c->n + 1 < sizeof(c->req);
}

/* Sends what the socket takes; false when done with the client (answered, or stalled
 * or gone); *sent once the whole file went out. */
static bool tt_client_write(struct tt_server *sv, struct tt_client *c, int64_t now, bool *sent)
{
	while (c->head_sent < c->head_len) {
		ssize_t w = send(c->fd, c->head + c->head_sent, c->head_len - c->head_sent,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EAGAIN)
			return now - c->progress_ms < TT_OPEN_STALL_S * 1000;
		if (w <= 0)
			return false;
		c->head_sent += (size_t)w;
		c->progress_ms = now;
	}
	/* (The socket is non-blocking: sendfile sends what fits.) */
	while (c->file && c->at < sv->size) {
		ssize_t w = sendfile(c->fd, sv->file_fd, &c->at, (size_t)(sv->size - c->at));
		if (w < 0 && errno == EAGAIN)
			return now - c->progress_ms < TT_OPEN_STALL_S * 1000;
		if (w <= 0)
			return false;
		c->progress_ms = now;
	}
	*sent = c->file;
	return false;
}

/* Serves until one client has had the whole file: the listening socket and every
 * client polled at once, so that a slow one holds up no other. */
static int tt_serve_loop(struct tt_server *sv, int srv)
{
	struct pollfd pfd[TT_OPEN_CLIENTS + 1];
	for (size_t i = 0; i < TT_OPEN_CLIENTS; i++)
		sv->clients[i].fd = -1;
	bool sent = false;
	while (!sent) {
		int64_t now = tt_now_ms(), wake = now + 60000;
		size_t free_slot = TT_OPEN_CLIENTS;
		for (size_t i = 0; i < TT_OPEN_CLIENTS; i++) {
			struct tt_client *c = &sv->clients[i];
			pfd[i] = (struct pollfd){.fd = c->fd, .events = c->head_len ? POLLOUT : POLLIN};
			if (c->fd < 0) {
				free_slot = i;
				continue;
			}
			int64_t due = c->head_len ? c->progress_ms + TT_OPEN_STALL_S * 1000 : c->deadline_ms;
			wake = due < wake ? due : wake;
		}
		/* (With every slot taken, new clients wait in the listen queue.) */
		pfd[TT_OPEN_CLIENTS] = (struct pollfd){.fd = free_slot < TT_OPEN_CLIENTS ? srv : -1,
						       .events = POLLIN};
		int ready = poll(pfd, TT_OPEN_CLIENTS + 1, (int)(wake > now ? wake - now : 0));
		if (ready < 0 && errno != EINTR)
			return tt_error("poll failed: %s", strerror(errno));
		now = tt_now_ms();
		for (size_t i = 0; i < TT_OPEN_CLIENTS && !sent; i++) {
			struct tt_client *c = &sv->clients[i];
			if (c->fd < 0)
				continue;
			bool keep;
			if (c->head_len)
				keep = !(pfd[i].revents & (POLLOUT | POLLERR | POLLHUP)) ?
					       now - c->progress_ms < TT_OPEN_STALL_S * 1000 :
					       tt_client_write(sv, c, now, &sent);
			else
				keep = (!pfd[i].revents || tt_client_read(sv, c, now)) &&
				       (c->head_len || now < c->deadline_ms);
			/* an answer just made goes out at once, as far as the socket takes it */
			if (keep && c->head_len && !c->head_sent)
				keep = tt_client_write(sv, c, now, &sent);
			if (!keep)
				tt_client_close(c);
		}
		if (free_slot < TT_OPEN_CLIENTS && (pfd[TT_OPEN_CLIENTS].revents & POLLIN)) {
			int fd = accept4(srv, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
			if (fd >= 0) {
				struct tt_client *c = &sv->clients[free_slot];
				memset(c, 0, offsetof(struct tt_client, req));
				c->fd = fd;
				c->deadline_ms = now + TT_OPEN_HEAD_S * 1000;
				c->req[0] = 0;
				c->head[0] = 0;
			} else if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) {
				return tt_error("accept failed: %s", strerror(errno));
			}
		}
	}
	for (size_t i = 0; i < TT_OPEN_CLIENTS; i++)
		if (sv->clients[i].fd >= 0)
			tt_client_close(&sv->clients[i]);
	return 0;
}

int tt_serve_once(const char *path, int port, FILE *out)
{
	const char *why;
	int file_fd = tt_open_regular(path, &why);
	struct stat st;
	if (file_fd < 0)
		return tt_error("%s: %s", path, why);
	if (fstat(file_fd, &st) < 0) {
		int err = errno;
		close(file_fd);
		return tt_error("%s: %s", path, strerror(err));
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
	unsigned char token[TT_OPEN_TOKEN_BYTES];
	if (getrandom(token, sizeof(token), 0) != (ssize_t)sizeof(token)) {
		int err = errno;
		close(srv);
		close(file_fd);
		return tt_error("no random bytes for the file's path: %s", strerror(err));
	}
	char url_path[2 + 2 * TT_OPEN_TOKEN_BYTES + 3 * 256 + 1] = "/";
	for (size_t i = 0; i < sizeof(token); i++)
		snprintf(url_path + 1 + 2 * i, 3, "%02x", token[i]);
	url_path[1 + 2 * sizeof(token)] = '/';
	const char *slash = strrchr(path, '/');
	tt_url_name(slash ? slash + 1 : path, url_path + 2 + 2 * sizeof(token),
		    sizeof(url_path) - 2 - 2 * sizeof(token));
	fprintf(out, "Open this URL in a browser to load %s in Perfetto:\n"
		"  " TT_UI_ORIGIN "/#!/?url=http://127.0.0.1:%d%s\n"
		"(serving it once from 127.0.0.1:%d; Ctrl-C to stop)\n",
		path, ntohs(addr.sin_port), url_path, ntohs(addr.sin_port));
	fflush(out);
	/* A client that hangs up mid-file is an error on its socket, not our end. */
	signal(SIGPIPE, SIG_IGN);
	struct tt_server *sv = malloc(sizeof(*sv));
	int rc = sv ? 0 : tt_error("out of memory");
	if (sv) {
		*sv = (struct tt_server){.url_path = url_path, .file_fd = file_fd, .size = st.st_size,
					 .port = ntohs(addr.sin_port)};
		rc = tt_serve_loop(sv, srv);
		free(sv);
	}
	close(srv);
	close(file_fd);
	return rc;
}
