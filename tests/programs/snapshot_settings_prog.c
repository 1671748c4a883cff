/* snapshot_settings.py's program: calls tt_trigger(why) for each argument and prints
 * what each returned, a line each ("WHY RESULT"); an argument "fork" forks there, the
 * child going on with the rest (its lines prefixed "child "); "many" calls
 * tt_trigger("many") 200 times, a millisecond apart, and prints how many times each
 * result came ("many RESULT COUNT"); "gone" calls it from a thread that then records
 * 100000 scopes, ten times its ring, and exits, joined before the process ends, which
 * writes the snapshot (with a TICKTRACE_SNAPSHOT_AFTER longer than the run): its
 * window's start overwritten, its thread gone ("gone RESULT"); "cut" records 100000 scopes, then calls it
 * and records no more, so that a small ring holds the window's end alone ("cut
 * RESULT"); "joined" first creates and joins 2000
 * threads in turn, each recording a little, then calls it ("joined RESULT");
 * "until-exit" starts a thread that calls it every 100 us until the process ends
 * (main returns 300 ms later), writing "calling" before each call and "0" after each
 * that returned 0, so that what the exit cut short is known; "budget" starts 4
 * threads that record scopes as fast as they can for 600 ms while it calls it every
 * 50 ms ("budget N": how many returned 0); "crash" aborts the process after the
 * calls before it. Records a scope around each call, so that
 * the snapshot's window holds records. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ticktrace.h>

/* With a TICKTRACE_BUFFER well under 100000 and a window that ends after the run: the
 * thread is gone when its snapshot is written, at exit, whatever the machine's load
 * (once the window's end was 1 ms after the call, and tt-spikes, woken as a window
 * ends, at times copied it before this thread overwrote it or left). */
static void *tt_trigger_and_go(void *result)
{
	*(int *)result = tt_trigger("gone");
	for (int k = 0; k < 100000; k++) {
		TT_SCOPE("over the window");
	}
	return NULL;
}

/* Unbuffered, so that nothing waits in stdio when the process ends under it. */
static void *tt_trigger_until_exit(void *unused)
{
	(void)unused;
	for (;;) {
		TT_SCOPE("around the trigger");
		(void)!write(1, "calling\n", 8);
		if (tt_trigger("until-exit") == 0)
			(void)!write(1, "0\n", 2);
		nanosleep(&(struct timespec){0, 100000}, NULL);
	}
	return NULL;
}

static int tt_flat_out_stop;

static void *tt_record_flat_out(void *unused)
{
	(void)unused;
	while (!__atomic_load_n(&tt_flat_out_stop, __ATOMIC_RELAXED)) {
		TT_SCOPE("flat out");
	}
	return NULL;
}

static void *tt_record_a_little(void *unused)
{
	(void)unused;
	for (int k = 0; k < 100; k++) {
		TT_SCOPE("a little");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *who = "";
	pid_t child = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "many") == 0) {
			int zero = 0, busy = 0, other = 0;
			for (int k = 0; k < 200; k++) {
				TT_SCOPE("around the trigger");
				int rc = tt_trigger("many");
				zero += rc == 0, busy += rc == -EBUSY, other += rc && rc != -EBUSY;
				nanosleep(&(struct timespec){0, 1000000}, NULL);
			}
			printf("many 0 %d\nmany %d %d\nmany other %d\n", zero, -EBUSY, busy, other);
			continue;
		}
		if (strcmp(argv[i], "gone") == 0) {
			int result = 1;
			pthread_t thread;
			if (pthread_create(&thread, NULL, tt_trigger_and_go, &result) == 0)
				pthread_join(thread, NULL);
			printf("gone %d\n", result);
			continue;
		}
		if (strcmp(argv[i], "cut") == 0) { /* (200000 records, then nothing: the window's start overwritten) */
			for (int k = 0; k < 100000; k++) {
				TT_SCOPE("filling the ring");
			}
			printf("cut %d\n", tt_trigger("cut"));
			continue;
		}
		if (strcmp(argv[i], "until-exit") == 0) {
			pthread_t thread;
			if (pthread_create(&thread, NULL, tt_trigger_until_exit, NULL) == 0)
				nanosleep(&(struct timespec){0, 300000000}, NULL);
			fflush(stdout);
			continue;
		}
		if (strcmp(argv[i], "budget") == 0) {
			pthread_t threads[4];
			int started = 0, zeros = 0;
			while (started < 4 && pthread_create(&threads[started], NULL, tt_record_flat_out, NULL) == 0)
				started++;
			for (int k = 0; k < 12; k++) {
				nanosleep(&(struct timespec){0, 50000000}, NULL);
				TT_SCOPE("around the trigger");
				zeros += tt_trigger("budget") == 0;
			}
			__atomic_store_n(&tt_flat_out_stop, 1, __ATOMIC_RELAXED);
			while (started > 0)
				pthread_join(threads[--started], NULL);
			printf("budget %d\n", zeros);
			continue;
		}
		if (strcmp(argv[i], "joined") == 0) {
			for (int k = 0; k < 2000; k++) {
				pthread_t thread;
				if (pthread_create(&thread, NULL, tt_record_a_little, NULL) == 0)
					pthread_join(thread, NULL);
			}
			TT_SCOPE("around the trigger");
			printf("joined %d\n", tt_trigger("joined"));
			continue;
		}
		if (strcmp(argv[i], "crash") == 0) {
			fflush(stdout);
			abort();
		}
		if (strcmp(argv[i], "fork") == 0) {
			fflush(stdout);
			child = fork();
			if (child == 0)
				who = "child ";
			continue;
		}
		TT_SCOPE("around the trigger");
		printf("%s%s %d\n", who, argv[i], tt_trigger(argv[i]));
	}
	fflush(stdout);
	if (child > 0)
		waitpid(child, NULL, 0);
	return 0;
}
