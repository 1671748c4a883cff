/* Numbered messages between two processes, each end a flow:
 *
 *   flows_prog send N      N times: FLOW_OUT(i) in a scope "send", then i written to
 *                          stdout (8 bytes)
 *   flows_prog receive N   N times: 8 bytes read from stdin, then FLOW_IN(i) in a
 *                          scope "receive"
 *
 * A receive comes after its send (the pipe orders them): on one timeline, a flow_in
 * before its flow_out is a clock misplaced. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ticktrace.h>

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "send") && strcmp(argv[1], "receive"))) {
		fprintf(stderr, "usage: flows_prog send|receive N\n");
		return 2;
	}
	uint64_t n = strtoull(argv[2], NULL, 10);
	for (uint64_t i = 1; i <= n; i++) {
		uint64_t id = i;
		if (argv[1][0] == 's') {
			TT_SCOPE("send");
			TT_FLOW_OUT(id);
			if (write(STDOUT_FILENO, &id, sizeof id) != sizeof id)
				return 1;
		} else {
			if (read(STDIN_FILENO, &id, sizeof id) != sizeof id)
				return 1;
			TT_SCOPE("receive");
			TT_FLOW_IN(id);
		}
	}
	return 0;
}
