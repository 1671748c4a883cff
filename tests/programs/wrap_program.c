/* Linked with -Wl,--wrap=malloc,... and libticktrace-wrap (tests/programs/meson.build): makes
 * the heap operations of wrap_steps.h, and after each one records, as the counter
 * "expected_live_bytes", what its own bookkeeping says the wrappers' "heap_live_bytes"
 * must be. test_wrap reads the trace back. With --dump-midway it also writes a trace
 * in the middle, so that a statically linked runtime's own allocations go through the
 * wrappers while it writes. */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ticktrace.h>

#include "wrap_steps.h"

/* Before the recorder's own start-up: the wrappers start it. */
__attribute__((constructor(101))) static void allocate_early(void)
{
	void *volatile block = malloc(10); /* volatile: the pair is not optimized away */
	free(block);
}

int main(int argc, char **argv)
{
	int dump_midway = argc == 3 && strcmp(argv[1], "--dump-midway") == 0;
	void *blocks[WRAP_BLOCKS] = {0};
	int64_t live = 0;
	void *volatile none = NULL;
	free(none); /* not a free: not recorded */
	TT_BEGIN("steps");
	for (size_t i = 0; i < sizeof(wrap_steps) / sizeof(wrap_steps[0]); i++) {
		const struct wrap_step *s = &wrap_steps[i];
		void **b = &blocks[s->block];
		live -= *b ? (int64_t)malloc_usable_size(*b) : 0;
		switch (s->op) {
		case WRAP_MALLOC: *b = malloc(s->size); break;
		case WRAP_CALLOC: *b = calloc(s->count, s->size); break;
		case WRAP_REALLOC: *b = realloc(*b, s->size); break;
		case WRAP_FREE: free(*b); *b = NULL; break;
		}
		if ((s->op != WRAP_FREE && !(s->op == WRAP_REALLOC && s->size == 0)) && !*b)
			return 1;
		live += *b ? (int64_t)malloc_usable_size(*b) : 0;
		TT_COUNTER("expected_live_bytes", live);
		if (dump_midway && i == 3 && tt_dump(argv[2]) != 0)
			return 1;
	}
	TT_END();
	return live == 0 ? 0 : 1;
}
