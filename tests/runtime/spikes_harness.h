/* What the tests of tt-spikes with no runtime started share (test_spikes_tail.c,
 * test_spikes_resume.c): records, chunks of the arena's alignment, a thread's slot in
 * the registry, and the spike log, started (tt-spikes looks every 20 ms) and read.
 * Included once, after cmocka.h. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/core_internal.h"
#include "report/report.h"

static struct tt_record tt_rec(unsigned kind, const struct tt_callsite *site, uint64_t tsc)
{
	return (struct tt_record){tsc, TT_RECORD_WORD(kind, site ? (uint64_t)(uintptr_t)site : 0)};
}

/* A chunk of the arena's alignment, its pages untouched. */
static struct tt__chunk *tt_chunk_new(void)
{
	void *at = mmap(NULL, 2 * TT__CHUNK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(at != MAP_FAILED);
	return (struct tt__chunk *)(((uintptr_t)at + TT__CHUNK_SIZE - 1) & ~(uintptr_t)(TT__CHUNK_SIZE - 1));
}

/* `slot`, the program's main thread named `name`, its chunks from `first` to `current`
 * (`chunks` of them), its cursor at `cursor`, the registry's one thread. */
static void tt_slot_register(struct tt__slot *slot, struct tt__chunk *first, struct tt__chunk *current,
			     uint64_t chunks, const struct tt_record *cursor, const char *name)
{
	slot->hot = &slot->parked;
	slot->tid = (uint32_t)getpid();
	slot->first = first;
	slot->current = current;
	slot->chunks = chunks;
	slot->chunk_end = (char *)current + TT__CHUNK_SIZE;
	slot->parked.cursor = (char *)cursor;
	snprintf(slot->name, sizeof slot->name, "%s", name);
	__atomic_store_n(&tt__registry_first, slot, __ATOMIC_RELEASE);
}

/* The spike log, in a folder of its own, with a threshold of 1 ms. */
struct tt_log {
	char dir[32], path[64];
};

static void tt_log_start(struct tt_log *log)
{
	snprintf(log->dir, sizeof log->dir, "/tmp/tt-spikes-XXXXXX");
	assert_non_null(mkdtemp(log->dir));
	snprintf(log->path, sizeof log->path, "%s/spikes.log", log->dir);
	setenv("TICKTRACE_SPIKES", log->path, 1);
	setenv("TICKTRACE_SPIKE_THRESHOLD", "1ms", 1);
	tt__spikes_start();
}

/* The log's text now ("" where there is none yet). */
static char *tt_log_text(const struct tt_log *log)
{
	static char text[1 << 16];
	text[0] = 0;
	FILE *f = fopen(log->path, "r");
	if (!f)
		return text;
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = 0;
	return text;
}

static void tt_log_remove(const struct tt_log *log)
{
	unlink(log->path);
	rmdir(log->dir);
}
