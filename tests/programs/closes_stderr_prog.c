/* closed_stderr.py's program: one that lets its stderr go, as many do.
 *
 *   closes_stderr_prog close     at exit, in a handler registered after ticktrace's
 *                                 (atexit runs it first), close(2)
 *   closes_stderr_prog fclose    at exit, as gnulib's close_stdout (coreutils, xz):
 *                                 fclose(stdout), then fclose(stderr)
 *   closes_stderr_prog daemon    closes 0..2 as a daemon does to let whoever reads its
 *                                 output see its end, says {"closed": 1} on its stdout
 *                                 first, then waits until its stdin's file (argv[2])
 *                                 exists before it exits
 *   closes_stderr_prog keep      exits as it is (sigpipe.py: its stderr a pipe whose
 *                                 reader left)
 *   closes_stderr_prog lines     its lines on stdout, each in a scope, until the pipe's
 *                                 reader leaves (SIGPIPE, its default action, ends it)
 *   closes_stderr_prog ignored   the same with SIGPIPE ignored (set after ticktrace
 *                                 started): the failed write ends it, exit 3
 *   closes_stderr_prog gzip      the same with gzip's handlers for SIGPIPE (signal) and
 *                                 SIGTERM (sigaction): clean up, set the default back,
 *                                 check it is shown so (else exit 4), raise it again;
 *                                 "cleaned" on stderr
 *   closes_stderr_prog resethand the same with a handler installed with SA_RESETHAND,
 *                                 which only raises the signal again
 *
 * Each records more than its buffer holds (run with a small TICKTRACE_BUFFER: ticktrace
 * has drops to say at exit) and a 2 ms scope "nap" (a spike to say at exit with
 * TICKTRACE_SPIKE_THRESHOLD=1ms, TICKTRACE_REPORT=stderr: a report to say). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ticktrace.h"

static void close_2(void)
{
	close(2);
}

static void close_stdout(void)
{
	if (fclose(stdout) != 0 || fclose(stderr) != 0)
		_exit(1);
}

static void say(const char *text)
{
	if (write(2, text, strlen(text)) < 0)
		_exit(5);
}

/* gzip's abort_gzip_signal: its output removed, then the default back and the signal
 * raised again; the default must be what the program is shown. */
static void gzip_handler(int sig)
{
	say("cleaned\n");
	struct sigaction now;
	if (signal(sig, SIG_DFL) != gzip_handler || sigaction(sig, NULL, &now) != 0 ||
	    (now.sa_flags & SA_SIGINFO) || now.sa_handler != SIG_DFL) {
		say("not shown its handler, then the default\n");
		_exit(4);
	}
	raise(sig);
}

static void resethand_handler(int sig)
{
	raise(sig);
}

static void nap_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000};
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "";
	TT_BEGIN("nap");
	nap_ms(2);
	TT_END();
	for (int i = 0; i < 100000; i++) {
		TT_BEGIN("step");
		TT_END();
	}
	if (strcmp(how, "close") == 0) {
		atexit(close_2);
	} else if (strcmp(how, "fclose") == 0) {
		atexit(close_stdout);
	} else if (strcmp(how, "daemon") == 0 && argc > 2) {
		printf("{\"closed\": 1}\n");
		fflush(stdout);
		for (int fd = 0; fd < 3; fd++)
			close(fd);
		for (int i = 0; i < 60000 && access(argv[2], F_OK) != 0; i++)
			nap_ms(1);
	} else if (strcmp(how, "lines") == 0 || strcmp(how, "ignored") == 0 ||
		   strcmp(how, "gzip") == 0 || strcmp(how, "resethand") == 0) {
		if (strcmp(how, "ignored") == 0)
			signal(SIGPIPE, SIG_IGN);
		struct sigaction action = {.sa_handler = gzip_handler};
		sigaddset(&action.sa_mask, SIGPIPE);
		sigaddset(&action.sa_mask, SIGTERM);
		if (strcmp(how, "gzip") == 0 &&
		    (signal(SIGPIPE, gzip_handler) == SIG_ERR || sigaction(SIGTERM, &action, NULL) != 0))
			return 6;
		action = (struct sigaction){.sa_handler = resethand_handler, .sa_flags = SA_RESETHAND};
		if (strcmp(how, "resethand") == 0 &&
		    (sigaction(SIGPIPE, &action, NULL) != 0 || sigaction(SIGTERM, &action, NULL) != 0))
			return 6;
		for (;;) {
			TT_SCOPE("line");
			if (puts("line") == EOF || fflush(stdout) != 0)
				return 3;
		}
	} else if (strcmp(how, "keep") != 0) {
		fprintf(stderr, "usage: closes_stderr_prog close|fclose|daemon FILE|keep|lines|ignored|"
				"gzip|resethand\n");
		return 2;
	}
	return 0;
}
