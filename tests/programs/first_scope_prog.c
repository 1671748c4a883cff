/* A worker whose first scope ("worker") opens as it starts and lasts the whole run of
 * it, with 100,000 short scopes ("inner") inside, a trigger at the 90,000th: in mode
 * ring with a small buffer the run's file keeps only its last inner scopes, and the
 * trigger's snapshot begins inside "worker" too (runtime/first_scope.py). */
#include <pthread.h>
#include <stdio.h>

#include <ticktrace.h>

static void *worker(void *arg)
{
	TT_SCOPE("worker");
	for (int i = 0; i < 100000; i++) {
		TT_SCOPE("inner");
		if (i == 90000) {
			int rc = tt_trigger("late");
			if (rc != 0)
				fprintf(stderr, "tt_trigger: %d\n", rc);
		}
	}
	return arg;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	return 0;
}
