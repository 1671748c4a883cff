#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ticktrace.h"
#include "tt_test_trace.h"

void tt_test_dump(struct tt_test_trace *trace)
{
	strcpy(trace->path, "/tmp/tt-test-XXXXXX");
	int fd = mkstemp(trace->path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(tt_dump(trace->path), 0);
	assert_int_equal(tt_file_open(&trace->file, trace->path), 0);
}

void tt_test_close(struct tt_test_trace *trace)
{
	tt_file_close(&trace->file);
	unlink(trace->path);
}

static char tt_test_names[64][256];

static void tt_test_each_in_section(const struct tt_test_trace *trace, const struct tt_thread *thread,
				    const struct tt_events *events,
				    void (*fn)(const struct tt_test_event *event, void *arg), void *arg)
{
	for (size_t i = 0; i < events->count; i++) {
		const struct tt_record *r = &events->records[i];
		unsigned kind = TT_RECORD_KIND(r->word);
		if (!TT_RECORD_HAS_TIME(kind))
			continue;
		struct tt_test_event event = {.thread = thread, .kind = kind, .name = "", .tsc = r->tsc};
		const struct tt_site *site = tt_file_site(&trace->file, TT_RECORD_PAYLOAD(r->word), r->tsc);
		if (site) {
			/* NUL-terminated copies, a few in flight at a time. */
			static unsigned next;
			char *name = tt_test_names[next++ % 64];
			size_t len = site->name.len < 255 ? site->name.len : 255;
			memcpy(name, site->name.ptr, len);
			name[len] = 0;
			event.name = name;
		}
		if (TT_RECORD_HAS_VALUE(kind)) {
			/* The hot path reserves both records at once: never split. */
			assert_true(i + 1 < events->count);
			assert_int_equal(TT_RECORD_KIND(events->records[i + 1].word), TT_REC_VALUE);
			event.value = events->records[++i].tsc;
		}
		fn(&event, arg);
	}
}

void tt_test_each_event(const struct tt_test_trace *trace,
			void (*fn)(const struct tt_test_event *event, void *arg), void *arg)
{
	for (size_t t = 0; t < trace->file.nthreads; t++) {
		const struct tt_thread *thread = &trace->file.threads[t];
		for (size_t sec = 0; sec < thread->nsections; sec++)
			tt_test_each_in_section(trace, thread, &thread->sections[sec], fn, arg);
	}
}

uint32_t tt_test_table_index(uintptr_t thread_pointer)
{
	return (uint32_t)(thread_pointer >> 12) & 0xffff; /* asm/record.asm */
}
