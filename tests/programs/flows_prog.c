/* Numbered messages between two processes, each end a flow:
 *
 *   flows_prog send N      N times: FLOW_OUT(i) in a scope "send", then i written to
 *                          stdout (8 bytes)
 *   flows_prog receive N   N times: 8 bytes read from stdin, then FLOW_IN(i) in a
 *                          scope "receive"
 *   flows_prog ping N      N round trips, flows both ways: send 2i - 1, receive 2i
 *   flows_prog pong N      the other end: receive 2i - 1, send 2i
 *   ... N BASE             the ids BASE + those: conversations of their own
 *
 * A receive comes after its send (the pipe orders them): on one timeline, a flow_in
 * before its flow_out is a clock misplaced. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ticktrace.h>

static int send_one(uint64_t id)
{
	TT_SCOPE("send");
	TT_FLOW_OUT(id);
	return write(STDOUT_FILENO, &id, sizeof id) == sizeof id ? 0 : -1;
}

static int receive_one(void)
{
	uint64_t id;
	if (read(STDIN_FILENO, &id, sizeof id) != sizeof id)
		return -1;
	TT_SCOPE("receive");
	TT_FLOW_IN(id);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = {"send", "receive", "ping", "pong"};
	int mode = -1;
	for (int m = 0; (argc == 3 || argc == 4) && m < 4; m++)
		if (!strcmp(argv[1], modes[m]))
			mode = m;
	if (mode < 0) {
		fprintf(stderr, "usage: flows_prog send|receive|ping|pong N [BASE]\n");
		return 2;
	}
	uint64_t n = strtoull(argv[2], NULL, 10);
	uint64_t base = argc == 4 ? strtoull(argv[3], NULL, 10) : 0;
	for (uint64_t i = 1; i <= n; i++) {
		int rc = 0;
		switch (mode) {
		case 0: rc = send_one(base + i); break;
		case 1: rc = receive_one(); break;
		case 2: rc = send_one(base + 2 * i - 1) < 0 ? -1 : receive_one(); break;
		default: rc = receive_one() < 0 ? -1 : send_one(base + 2 * i); break;
		}
		if (rc < 0)
			return 1;
	}
	return 0;
}
