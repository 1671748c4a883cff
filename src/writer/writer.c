/* The raw file a dump writes (tt_dump, a signal, the exit): every thread's chunks
 * as they are, taken once, and the call sites and functions their records name, each
 * described once. Records go from the chunks to the file without a copy. */
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "writer/writer.h"

void tt__file_header(struct tt_file_header *header, uint32_t flags)
{
	*header = (struct tt_file_header){
		.version = TT_FILE_VERSION,
		.header_size = sizeof *header,
		.pid = (uint32_t)getpid(),
		.unregistered_dropped = __atomic_load_n(&tt__unregistered_drops, __ATOMIC_RELAXED),
	};
	memcpy(header->magic, TT_FILE_MAGIC, TT_FILE_MAGIC_LEN);
	tt__clock_fill_header(header);
	header->flags |= flags;
	header->crash_signal = (uint32_t)__atomic_load_n(&tt__crash_signal, __ATOMIC_ACQUIRE);
	if (header->crash_signal)
		header->flags |= TT_FILE_CRASHED;
}

void tt__out_file_header(struct tt__out *out, uint32_t flags)
{
	struct tt_file_header header;
	tt__file_header(&header, flags);
	tt__out(out, &header, sizeof header);
}

void tt__out_end(struct tt__out *out, const struct tt_end_info *end)
{
	tt__out_section(out, TT_SEC_END, sizeof *end);
	tt__out(out, end, sizeof *end);
	tt__out_pad(out, sizeof *end);
}

static int tt__write_to(struct tt__out *out)
{
	struct tt__thread_snapshot *snaps = NULL;
	struct tt__site_set names = {0};
	struct tt__ranges loaded = {0};
	size_t threads = 0, cap = 0;
	int err = 0;
	names.retired_seen = tt__retired_count();
	/* Threads whose switches tt-sched has not asked for yet are asked for now, before
	 * their THREAD sections say whether they have states (a short run's, or where the
	 * kernel refuses: then its line is said). */
	tt__sched_drain(NULL);
	for (struct tt__slot *slot = tt__registry_head(); slot;
	     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE)) {
		if (threads == cap) {
			cap = cap ? 2 * cap : 64;
			struct tt__thread_snapshot *grown = realloc(snaps, cap * sizeof *grown);
			if (!grown) {
				err = -ENOMEM;
				goto out;
			}
			snaps = grown;
		}
		err = tt__snapshot_thread(&snaps[threads++], slot);
		if (!err)
			err = tt__collect_names(&names, &snaps[threads - 1]);
		if (err)
			goto out;
	}

	tt__out_file_header(out, tt__mode->file_flags);
	tt__out_process(out);
	err = tt__out_modules(out);
	if (err)
		goto out;
	/* Descriptors are read where their library is still loaded, or from the copies
	 * that dlclose left. */
	dl_iterate_phdr(tt__add_loaded, &loaded);
	err = loaded.err;
	if (err)
		goto out;
	tt__out_names(out, &names, &loaded);
	struct tt_end_info end = {.threads = threads, .sites = names.count - names.funcs};
	for (size_t i = 0; i < threads; i++) {
		tt__out_thread(out, &snaps[i], &end.dropped);
		end.records += snaps[i].records;
	}
	tt__out_end(out, &end);
	tt__out_flush(out);
	err = out->err;
out:
	for (size_t i = 0; i < threads; i++)
		free(snaps[i].extents);
	free(snaps);
	free(names.slots);
	free(loaded.range);
	return err;
}

/* Writes the file with the exiting threads' chunks held in place. */
static int tt__write_held(struct tt__out *out, void *unused)
{
	(void)unused;
	tt__hold_chunks(1);
	int err = tt__write_to(out);
	tt__hold_chunks(0);
	return err;
}

int tt__write_file(const char *path)
{
	return tt__write_file_with(path, tt__write_held, NULL);
}
