/* The live file (modes stop and ring, TICKTRACE_LIVE=1): the buffers are a shared
 * mapping of a file, TICKTRACE_OUT with ".live" appended, so that what a program recorded outlives it
 * even when SIGKILL ends it with no handler run; the kernel keeps what was written to
 * the mapping. The file is laid out as format.h says for TT_FILE_LIVE:
 *
 *   header (a shared mapping too) | PROCESS | MODULES | THREAD... | SITES... | MODULES...
 *   ... | threads' identities (a shared mapping) | from TT__LIVE_CHUNKS_AT: the
 *   arena's chunks, each with its thread's index
 *
 * A thread writes its own identity (tid, name) as it registers, before it records:
 * the chunks of a thread killed before tt-live described it are still its own.
 * Thread tt-live, every TT__LIVE_PERIOD_NS, appends THREAD sections for new
 * threads and SITES for the call sites their records use first (MODULES again when
 * libraries were loaded or unloaded since), then moves
 * live_sections_end past them and refreshes the end anchor. A run that ends normally
 * (or by a crash whose handler writes the trace) writes its raw file as ever and
 * removes the live file. What a SIGKILL still loses: names threads took since they
 * registered (pthread_setname_np) and call sites first used in the last period (the
 * converter names them by address),
 * threads' dropped counts since the last period (tt-live writes them over those their
 * THREAD sections said), and events of threads that exited in stop and ring modes
 * once a dump compacted them... which a live run never does.
 *
 * After start the file's I/O is done where the program cannot reach its descriptor:
 * tt-prefault alone grows it (ahead of the writers, and for a writer that overtook it,
 * which waits: core/arena.c) and tt-live alone writes its descriptions, each in a table
 * of descriptors of its own (tt__live_table). In the program's table a check and the
 * call it allows are two system calls, and a program that dup2'd its own file over
 * every number between them had the file's growth land in its file, and its writers
 * die of SIGBUS on chunks the file never got (tests/runtime/descriptors.py). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modes/modes.h"

/* Where the chunks begin: room for descriptions before them. */
#define TT__LIVE_CHUNKS_AT (UINT64_C(64) << 20)
/* Where the threads' identities are, ending where the chunks begin. */
#define TT__LIVE_THREADS_AT (TT__LIVE_CHUNKS_AT - TT_LIVE_THREADS * sizeof(struct tt_live_thread))
/* The file grows in steps this large, ahead of the chunks handed out. */
#define TT__LIVE_GROW (UINT64_C(16) << 20)

struct tt__live {
	/* what the arena maps (handle -1: no live file), out->file's as it was kept; used
	 * through out->file */
	struct tt_os_file file;
	char path[4096];
	struct tt_file_header *header; /* shared mapping of the file's first page */
	struct tt_live_thread *threads; /* shared mapping: TT_LIVE_THREADS at TT__LIVE_THREADS_AT */
	/* the file holds this much of the arena: grown by tt-prefault alone (tt__live_grow),
	 * read by the writers (tt__live_cover) */
	uint64_t arena_bytes;
	uint64_t wanted; /* the most a writer asked tt-prefault to grow it to (core lock) */
	int grow_err;    /* tt-prefault's last growth's error (no room), or 0 */
	int said_gone;   /* that the file grows no more, tt-prefault ended */
	struct tt__fd kept;   /* the file's descriptor in the program's table (a forked child's to close) */
	struct tt__out *out;  /* descriptions, appended at header->live_sections_end: tt-live's descriptor */
	struct tt__fd grower; /* tt-prefault's descriptor of the file */
	struct tt__site_set sites, fresh;
	uint64_t modules_changes; /* tt_os_modules_changes() when MODULES was last written */
	int full;     /* no room left for descriptions */
	int said_full; /* that the disk has no room for more chunks */
	int lost; /* the program closed the file's descriptor, and the file is gone */
	int finished; /* the trace is written and the file removed */
	struct tt_os_file_stamp placed; /* the file made: removed only while it is at its name */
};

static struct tt__live tt__live = {.file = {-1}};

const struct tt_os_file *tt__live_file(void)
{
	return tt__live.file.handle < 0 ? NULL : &tt__live.file;
}

/* TICKTRACE_LIVE=1, and the run's file a place for a live file beside it: not a
 * device, a pipe (TICKTRACE_OUT=/dev/null) or a directory. Not by default: file
 * pages are faulted in 4 KiB at a time where private memory takes huge pages, so a
 * thread's first pass through its buffer costs about twice as much per event. */
static int tt__live_wanted(const char *path)
{
	return tt__config.live && tt_os_path_regular(path);
}

/* Removes the live file by its name, only while the file there is this one's: never
 * another's that took the name since. */
static void tt__live_remove(struct tt__live *lv)
{
	struct tt_os_file_stamp there;
	if (tt_os_path_stamp(lv->path, &there) == 0 && there.dev == lv->placed.dev &&
	    there.ino == lv->placed.ino)
		tt_os_remove(lv->path);
}

/* Appends what `out` holds to the descriptions and commits it; 0 or -errno. */
static int tt__live_commit(struct tt__live *lv)
{
	tt__out_flush(lv->out);
	if (lv->out->err)
		return lv->out->err;
	__atomic_store_n(&lv->header->live_sections_end, lv->out->offset, __ATOMIC_RELEASE);
	return 0;
}

/* Whether `fd` (tt-live's, the out's; tt-prefault's, grower) is still the live file
 * (or found again by its name): where a thread has no table of its own (Windows, whose
 * handles are no numbers a program takes; start-up, in the program's, before it runs),
 * a program that closes it (closefrom, close_range, a loop of close) and opens its own
 * file at the number would have it grown, written and truncated. Once lost, said: no
 * more chunks (their events counted as dropped), no more descriptions. */
static int tt__live_own(struct tt__live *lv, struct tt__fd *fd)
{
	if (lv->lost)
		return -EBADF;
	if (fd == &tt__fd_out(lv->out)->file ? !tt__out_own(lv->out) : !tt__fd_reopen(fd, lv->path))
		return 0;
	lv->lost = 1;
	fprintf(tt__err, "ticktrace: %s: the program closed the live file's descriptor and the file "
		"could not be kept again (not there by its name, or its new number taken too): "
		"threads get no more buffers (their events are counted as "
		"dropped), and a " TT_OS_HARD_KILL " loses the names since\n", lv->path);
	return -EBADF;
}

/* The file as the platform layer takes it: tt-live's descriptor now (tt__live_own). */
#define TT__LIVE_FILE(lv) (tt__fd_out((lv)->out)->file.file)

/* Gives bytes [from, to) of the file their blocks on disk, through `fd`: a page of a
 * shared mapping that the disk has no room for faults with SIGBUS when written. Where
 * the file system cannot reserve (fallocate: tt_os_file_reserve), the file is only
 * made that long. */
static int tt__live_reserve(struct tt__live *lv, struct tt__fd *fd, uint64_t from, uint64_t to)
{
	int err;
	tt__background_io(1);
	do /* (checked last before each call: fds.c) */
		err = tt__live_own(lv, fd) ? -EBADF : tt_os_file_reserve(&fd->file, from, to);
	while (err == -EINTR);
	if (err == -EOPNOTSUPP)
		err = tt__live_own(lv, fd) ? -EBADF : tt_os_file_resize(&fd->file, to);
	tt__background_io(0);
	return err;
}

static void tt__live_unmap(struct tt__live *lv)
{
	if (lv->header)
		tt_os_file_unmap(lv->header, sizeof *lv->header);
	if (lv->threads)
		tt_os_file_unmap(lv->threads, TT__LIVE_CHUNKS_AT - TT__LIVE_THREADS_AT);
}

int tt__live_start(void)
{
	struct tt__live *lv = &tt__live;
	char path[4096];
	int err = tt__default_path(path, sizeof path);
	if (err || !tt__live_wanted(path))
		return err;
	err = tt__fd_room(); /* (none below a small limit: no file made) */
	if (err)
		return err;
	if (snprintf(lv->path, sizeof lv->path, "%s.live", path) >= (int)sizeof lv->path)
		return -ENAMETOOLONG;
	struct tt__fd_out *file = malloc(sizeof *file);
	if (!file)
		return -ENOMEM;
	tt__fd_out_init(file);
	lv->out = &file->out;
	/* (made new and held: another process's of the same name, or a killed run's,
	 * left as it is, this one's beside it, said) */
	struct tt_os_file made;
	char said[2 * sizeof lv->path + 160];
	err = tt_os_live_place(lv->path, sizeof lv->path, &made, said, sizeof said);
	/* (where the name given cannot take it, the run's name is the default one: the
	 * live file and the exit's trace there together) */
	if (err && tt__out_fall_back(err, "the live file", path, sizeof path) == 0 &&
	    snprintf(lv->path, sizeof lv->path, "%s.live", path) < (int)sizeof lv->path)
		err = tt_os_live_place(lv->path, sizeof lv->path, &made, said, sizeof said);
	if (!err)
		fputs(said, tt__err);
	int made_err = err;
	err = tt__fd_keep(&tt__fd_out(lv->out)->file, err ? (struct tt_os_file){err} : made);
	if (err && !made_err)
		tt_os_remove(lv->path); /* (just made, no descriptor left for it) */
	if (err)
		goto fail_err;
	lv->kept = lv->grower = tt__fd_out(lv->out)->file; /* (the same number, until their tables) */
	lv->file = lv->kept.file;
	tt_os_file_stamp(&TT__LIVE_FILE(lv), &lv->placed);
	/* Listed at once: a process stopped before its header is written leaves a file
	 * that holds nothing, which record then removes. */
	tt__list_written(lv->path);
	/* The header page and the first chunks must have their room on disk, or there
	 * is no live file: the buffers are then in memory, as without TICKTRACE_LIVE. */
	err = tt_os_file_resize(&TT__LIVE_FILE(lv), TT__LIVE_CHUNKS_AT);
	if (err)
		goto fail_err;
	err = tt__live_reserve(lv, &lv->kept, 0, sizeof *lv->header);
	if (!err)
		err = tt__live_reserve(lv, &lv->kept, TT__LIVE_THREADS_AT, TT__LIVE_CHUNKS_AT + TT__LIVE_GROW);
	lv->arena_bytes = TT__LIVE_GROW;
	if (err) {
		fprintf(tt__err, "ticktrace: %s: no room for a live file (%s): the buffers are in "
			"memory, and a " TT_OS_HARD_KILL " loses them\n", lv->path, strerror(-err));
		tt__live_remove(lv);
		tt__fd_close(&lv->kept);
		free(lv->out);
		*lv = (struct tt__live){.file = {-1}};
		return 0;
	}
	lv->header = tt_os_file_map(&TT__LIVE_FILE(lv), 0, sizeof *lv->header);
	if (!lv->header)
		goto fail;
	lv->threads = tt_os_file_map(&TT__LIVE_FILE(lv), TT__LIVE_THREADS_AT,
				     TT__LIVE_CHUNKS_AT - TT__LIVE_THREADS_AT);
	if (!lv->threads)
		goto fail;
	tt__file_header(lv->header, TT_FILE_LIVE | tt__mode->file_flags);
	lv->header->live_chunks_at = TT__LIVE_CHUNKS_AT;
	lv->header->live_threads_at = TT__LIVE_THREADS_AT;
	tt__fd_out(lv->out)->path = lv->path;
	lv->out->offset = sizeof *lv->header;
	err = tt_os_file_seek(&TT__LIVE_FILE(lv), lv->out->offset);
	if (err)
		goto fail_err;
	tt__out_process(lv->out);
	lv->modules_changes = tt_os_modules_changes();
	err = tt__out_modules(lv->out);
	if (!err)
		err = tt__live_commit(lv);
	if (err)
		goto fail_err;
	return 0;
fail:
	err = -errno;
fail_err:
	tt__live_unmap(lv);
	if (lv->file.handle >= 0) {
		tt__live_remove(lv);
		tt__fd_close(&lv->kept);
	}
	free(lv->out);
	*lv = (struct tt__live){.file = {-1}};
	return err;
}

/* As tt-prefault (grows) and tt-live start: a table of descriptors of the thread's
 * own, holding the file at its number (the program's dup2 and close never reach it). */
void tt__live_table(int grows)
{
	struct tt__live *lv = &tt__live;
	struct tt__fd *mine = grows ? &lv->grower : &tt__fd_out(lv->out)->file;
	struct tt__fd was = *mine;
	if (tt__fd_private_table(&mine, 1) < 0 || mine->file.handle >= 0 || was.file.handle < 0)
		return; /* (Windows: none; the handle as it is) */
	/* The program took the number before the table was made (a forked child that
	 * closes its descriptors at once; let go above, and counted no more): the file
	 * found again by its name, kept in this table. */
	struct tt_os_file found;
	if (tt_os_file_reopen(lv->path, &was.id, &found) == 0)
		tt__fd_keep(mine, found);
}

int tt__live_cover(uint64_t arena_bytes, int grows)
{
	struct tt__live *lv = &tt__live;
	if (arena_bytes <= __atomic_load_n(&lv->arena_bytes, __ATOMIC_ACQUIRE))
		return 0;
	int err = __atomic_load_n(&lv->grow_err, __ATOMIC_ACQUIRE);
	if (err)
		return err; /* (its last growth failed, said: no room) */
	if (!grows) {
		/* (not at the run's end, whose trace is written: what is recorded after it goes
		 * nowhere) */
		if (!lv->said_gone && !lv->finished && !lv->lost)
			fprintf(tt__err, "ticktrace: %s: no more room for buffers: tt-prefault, which "
				"grows the live file where the program cannot reach its descriptor, "
				"ended (given back to the program: its limit on processes); events from "
				"now on are counted as dropped\n", lv->path);
		lv->said_gone = 1;
		return -ECANCELED;
	}
	if (arena_bytes > lv->wanted)
		__atomic_store_n(&lv->wanted, arena_bytes, __ATOMIC_RELEASE);
	return 1;
}

int tt__live_grow(uint64_t arena_bytes)
{
	struct tt__live *lv = &tt__live;
	uint64_t wanted = __atomic_load_n(&lv->wanted, __ATOMIC_ACQUIRE);
	uint64_t had = __atomic_load_n(&lv->arena_bytes, __ATOMIC_RELAXED);
	arena_bytes = wanted > arena_bytes ? wanted : arena_bytes;
	if (lv->file.handle < 0 || arena_bytes <= had)
		return 0;
	uint64_t grown = (arena_bytes + TT__LIVE_GROW - 1) / TT__LIVE_GROW * TT__LIVE_GROW;
	struct tt_os_writing writing;
	tt_os_writing_begin(&writing);
	int err = tt__live_reserve(lv, &lv->grower, TT__LIVE_CHUNKS_AT + had, TT__LIVE_CHUNKS_AT + grown);
	tt_os_writing_end(&writing);
	if (err) {
		/* Threads get no more chunks: their events are counted as dropped. */
		if (!lv->said_full && !lv->lost)
			fprintf(tt__err, "ticktrace: %s: no room for more buffers (%s): events from "
				"now on are counted as dropped\n", lv->path, strerror(-err));
		lv->said_full = 1;
	} else {
		__atomic_store_n(&lv->arena_bytes, grown, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&lv->grow_err, err, __ATOMIC_RELEASE);
	return err;
}

uint64_t tt__live_chunks_at(void)
{
	return TT__LIVE_CHUNKS_AT;
}

/* The sites a slot's records use that are not described yet, from where the last
 * look stopped, in one chunk: 1 when the next chunk waits, 0 when all are seen, or
 * -ENOMEM. The chunk's records are copied while the chunks are held (no ring
 * recycling) and looked at once they are let go: a ring that fills while they are
 * held grows, up to a bound, then drops events, so a hold is kept to a copy of
 * 64 KiB (looking the sites up took milliseconds under ASan, and a hold the scheduler
 * stretched past the bound dropped events). Only tt-live runs it. */
static int tt__live_scan(struct tt__live *lv, struct tt__slot *slot)
{
	static struct tt_record copy[TT__CHUNK_RECORDS];
	tt__hold_chunks(1);
	struct tt__chunk *chunk = slot->live_chunk;
	/* A ring may have recycled the chunk where the last look stopped. */
	struct tt__chunk *c = slot->first;
	while (c && c != chunk)
		c = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE);
	if (!c) {
		chunk = slot->first;
		slot->drained = NULL;
	}
	const struct tt_record *begin = NULL, *end = NULL, *from = NULL;
	struct tt__chunk *next = NULL;
	if (chunk) {
		/* (the successor it had as its end was found: tt__chunk_extent) */
		next = (struct tt__chunk *)tt__chunk_extent(slot, chunk, &begin, &end);
		/* (where it stopped, if the chunk is the one it was: a ring may have recycled
		 * it and handed it to the thread again, its records fewer) */
		int same = slot->drained && chunk == slot->live_chunk && begin < end &&
			   begin->tsc == slot->live_first.tsc && begin->word == slot->live_first.word &&
			   slot->drained <= end;
		from = same ? slot->drained : begin;
		if (begin < end)
			slot->live_first = *begin;
		memcpy(copy, from, (size_t)(end - from) * sizeof *copy);
	}
	tt__hold_chunks(0);
	if (!chunk)
		return 0;
	const struct tt_record *to = tt__sites_add(&lv->sites, &lv->fresh, copy, copy + (end - from), 1,
						   tt__generation);
	if (!to)
		return -ENOMEM;
	slot->live_chunk = chunk;
	slot->drained = from + (to - copy);
	if (slot->drained != end || !next)
		return 0;
	slot->live_chunk = next; /* read from its beginning */
	slot->drained = NULL;
	return 1;
}

/* The thread's first scope or function, once known (as it left its first chunk, which
 * a ring may take): a THREAD_FIRST section, its site or function with the others. */
static int tt__live_first(struct tt__live *lv, struct tt__slot *slot)
{
	if (slot->opener_said || !__atomic_load_n(&slot->opener_looked, __ATOMIC_ACQUIRE))
		return 0;
	if (slot->opener.word) {
		if (!tt__sites_add(&lv->sites, &lv->fresh, &slot->opener, &slot->opener + 1, 0, tt__generation))
			return -ENOMEM;
		tt__out_thread_first(lv->out, slot->index, &slot->opener);
	}
	slot->opener_said = 1;
	return 0;
}

/* The dropped counts of each thread the file describes, as they are now, written over
 * those its THREAD section said where they grew: a killed run's file says what each
 * thread lost up to the last tick. */
static void tt__live_drops(struct tt__live *lv)
{
	uint64_t described = __atomic_load_n(&lv->header->live_sections_end, __ATOMIC_ACQUIRE);
	for (struct tt__slot *slot = tt__registry_head(); slot;
	     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE)) {
		if (!slot->live_dropped_at || slot->live_dropped_at + sizeof(uint64_t[TT_DROP_CAUSES]) > described)
			continue;
		uint64_t dropped[TT_DROP_CAUSES], sum = 0;
		struct tt_gap gap;
		tt__drops_now(slot, dropped, &gap);
		for (int i = 0; i < TT_DROP_CAUSES; i++)
			sum += dropped[i];
		if (sum != slot->live_dropped_said &&
		    tt_os_file_write_at(&TT__LIVE_FILE(lv), dropped, sizeof dropped, slot->live_dropped_at) ==
			    (int64_t)sizeof dropped)
			slot->live_dropped_said = sum;
	}
}

void tt__live_tick(void)
{
	struct tt__live *lv = &tt__live;
	if (lv->file.handle < 0 || lv->finished)
		return;
	struct tt_os_writing writing;
	tt_os_writing_begin(&writing);
	if (!lv->full && !tt__live_own(lv, &tt__fd_out(lv->out)->file)) {
		/* Libraries unloaded or loaded since: named offline after a SIGKILL too. */
		int err = tt__out_modules_since(lv->out, &lv->sites, &lv->modules_changes);
		for (struct tt__slot *slot = tt__registry_head(); slot && !err;
		     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE)) {
			if (!slot->streamed) {
				uint64_t said = 0;
				slot->live_dropped_at = lv->out->offset + sizeof(struct tt_section_header) +
							offsetof(struct tt_thread_info, dropped);
				tt__out_thread_info(lv->out, TT_SEC_THREAD, slot, 0, &said);
				slot->live_dropped_said = said;
				tt__out_counters_source(lv->out, slot);
				slot->streamed = 1;
			}
			int more;
			/* (a thread that records faster than this reads keeps it here for as long
			 * as it does: a snapshot waiting for the work has it between chunks) */
			while ((more = tt__live_scan(lv, slot)) > 0)
				tt__background_give_way();
			err = more < 0 ? more : tt__live_first(lv, slot);
		}
		if (lv->fresh.count) {
			tt__out_sites(lv->out, &lv->fresh);
			tt__site_set_clear(&lv->fresh);
		}
		/* Descriptions that would reach the chunks are not written: the converter
		 * then names those threads and sites by number. */
		if (err || lv->out->offset + lv->out->len > TT__LIVE_THREADS_AT) {
			lv->full = 1;
			fprintf(tt__err, "ticktrace: %s: no more room for thread and site names\n", lv->path);
		} else if (tt__live_commit(lv) < 0) {
			lv->full = 1;
		}
		tt__live_drops(lv);
	}
	struct tt_file_header now;
	tt__clock_fill_header(&now);
	lv->header->end = now.end;
	lv->header->tsc_hz = now.tsc_hz;
	tt_os_writing_end(&writing);
}

/* In the child after fork: the parent's live file is the parent's; the child gets
 * one of its own (or none). */
int tt__live_after_fork(void)
{
	struct tt__live *lv = &tt__live;
	if (lv->file.handle < 0)
		return -1;
	tt__live_unmap(lv);
	/* (the parent's, in the child's table: tt-live's and tt-prefault's were their own) */
	tt__fd_close(&lv->kept);
	free(lv->out);
	tt__site_set_clear(&lv->sites);
	tt__site_set_clear(&lv->fresh);
	*lv = (struct tt__live){.file = {-1}};
	struct tt_os_writing writing;
	tt_os_writing_begin(&writing);
	int err = tt__live_start();
	tt_os_writing_end(&writing);
	if (err < 0)
		fprintf(tt__err, "ticktrace: the child process %d has no live file\n", (int)tt_os_process_id());
	return lv->file.handle < 0 ? -1 : 0;
}

void tt__live_identify(struct tt__slot *slot)
{
	struct tt__live *lv = &tt__live;
	if (!lv->threads || lv->finished || slot->index >= TT_LIVE_THREADS)
		return; /* (a thread past them: the converter says it is not described) */
	struct tt_live_thread *entry = &lv->threads[slot->index];
	size_t len = strnlen(slot->name, sizeof entry->name - 1);
	memcpy(entry->name, slot->name, len);
	entry->name[len] = 0;
	/* Last: the reader takes an entry with its tid as complete. */
	__atomic_store_n(&entry->tid, slot->tid, __ATOMIC_RELEASE);
}

const char *tt__live_exited(void)
{
	struct tt__live *lv = &tt__live;
	if (lv->file.handle < 0 || lv->finished || !lv->header)
		return NULL;
	__atomic_or_fetch(&lv->header->flags, TT_FILE_LIVE_EXITED, __ATOMIC_RELEASE);
	return lv->path;
}

void tt__live_finish(void)
{
	struct tt__live *lv = &tt__live;
	if (lv->file.handle < 0 || lv->finished)
		return;
	/* The mapping and the descriptor stay: threads may still record until the process
	 * ends, into chunks the file must go on holding (touching a shared mapping past
	 * the end of its file is SIGBUS). */
	tt__live_remove(lv);
	lv->finished = 1;
}
