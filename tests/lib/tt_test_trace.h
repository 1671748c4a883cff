/* For tests of the runtime: dump what this process recorded, read it back with the
 * tools' reader, and walk each thread's events. */
#ifndef TT_TEST_TRACE_H
#define TT_TEST_TRACE_H

#include <stdint.h>

#include "read/read.h"

struct tt_test_trace {
	struct tt_file file;
	char path[64];
};

/* One event as recorded: its kind, its site's name ("" without a site), its value
 * (for kinds that carry one) and the thread it is on. */
struct tt_test_event {
	const struct tt_thread *thread;
	unsigned kind;
	const char *name;
	uint64_t value;
	uint64_t tsc;
};

/* tt_dump() into a temporary file and open it; fails the test on error. */
void tt_test_dump(struct tt_test_trace *trace);
void tt_test_close(struct tt_test_trace *trace);

/* Calls `fn` for every event of every thread, in each thread's recorded order. */
void tt_test_each_event(const struct tt_test_trace *trace,
			void (*fn)(const struct tt_test_event *event, void *arg), void *arg);

/* The hash the hot path uses to index its table (asm/record.asm). */
uint32_t tt_test_table_index(uintptr_t thread_pointer);

#endif
