/* Memory release: the decoder tells the kernel which parts of the mapped files it
 * has read for good, so that converting a large file keeps little of it resident. */
#include <unistd.h>

#include "decode_internal.h"

/* Releases each file below the earliest section a thread still reads (from a little
 * before where the last call stopped, for pages mapped again since). */
void tt_decoder_release_behind(struct tt_decoder *d)
{
	const struct tt_trace *t = d->trace;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tt_file *f = &t->files[i];
		uint64_t low = f->size;
		for (size_t k = 0; k < f->nthreads; k++) {
			const struct tt_thread_state *st = &d->threads[f->threads[k].id];
			if (!st->done && st->section < st->thread->nsections &&
			    st->thread->sections[st->section].offset < low)
				low = st->thread->sections[st->section].offset;
		}
		uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), from = d->released[i];
		low &= ~(page - 1); /* the page that holds it is still read */
		from = from > TT_RELEASE_BEHIND_MARGIN ? from - TT_RELEASE_BEHIND_MARGIN : 0;
		if (low > from)
			tt_file_release(d->ahead, f, from, low);
		d->released[i] = low > d->released[i] ? low : d->released[i];
	}
	d->released_at = d->sum.events;
}
