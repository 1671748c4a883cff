/* descriptors.py's program whose standard streams are its data files, as a daemon's
 * can be: it closes every descriptor, 0..2 too, and opens DIR/data-0..2, which take
 * numbers 0, 1 and 2; records more than its buffer holds (ticktrace then has drops to
 * say at exit), and writes a line into each file.
 *
 *   stdio_taken_prog data DIR
 *
 * The same, but number 2 is its log, open for appending (DIR/log): where ticktrace's
 * lines go, as the program's stderr.
 *
 *   stdio_taken_prog log DIR */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ticktrace.h"

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "data") != 0 && strcmp(argv[1], "log") != 0)) {
		fprintf(stderr, "usage: stdio_taken_prog data|log DIR\n");
		return 2;
	}
	int log = strcmp(argv[1], "log") == 0;
	for (int fd = 0; fd < 1024; fd++)
		close(fd);
	int fds[3];
	for (int i = 0; i < 3; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s-%d", argv[2], log && i == 2 ? "log" : "data", i);
		fds[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC | (log && i == 2 ? O_APPEND : 0), 0644);
		if (fds[i] != i)
			return 1;
	}
	for (int i = 0; i < 200000; i++) {
		TT_BEGIN("step");
		TT_END();
	}
	static const char line[] = "the program's own line\n";
	for (int i = 0; i < 3; i++)
		if (write(fds[i], line, sizeof line - 1) != (ssize_t)(sizeof line - 1))
			return 1;
	return 0;
}
