/* ticktrace runtime, layer modes: what becomes of the chunks the core fills. Each
 * mode is a struct tt__mode_ops (core.h) that the core calls: stop and ring (the
 * whole file at a dump, chunks in a live file: live.c), stream (a drain thread writes
 * chunks as they fill: stream.c). Never installed. */
#ifndef TT_MODES_H
#define TT_MODES_H

#include "report/report.h"

/* modes.c: the operations of the mode TICKTRACE_MODE names (none: the default; a
 * name that is no mode's is said, and the default used) */
const struct tt__mode_ops *tt__mode_ops_by_name(const char *name) TT__HIDDEN;

/* live.c: the buffers as a shared mapping of TICKTRACE_OUT.live (modes stop, ring) */
int tt__live_start(void) TT__HIDDEN;  /* 0 also when there is no live file */
const struct tt_os_file *tt__live_file(void) TT__HIDDEN; /* the file the arena maps, or NULL */
uint64_t tt__live_chunks_at(void) TT__HIDDEN; /* where in it */
int tt__live_cover(uint64_t arena_bytes, int grows) TT__HIDDEN; /* core.h: cover */
int tt__live_grow(uint64_t arena_bytes) TT__HIDDEN;            /* core.h: grow */
void tt__live_table(int grows) TT__HIDDEN;                     /* core.h: chunks_file_table */
void tt__live_tick(void) TT__HIDDEN;  /* background thread: descriptions, end anchor */
void tt__live_identify(struct tt__slot *slot) TT__HIDDEN; /* its tid and name, in the file */
void tt__live_finish(void) TT__HIDDEN; /* the raw file is written: no more live file */
/* The raw file could not be written at exit: the live file kept, marked as a run that
 * exited (TT_FILE_LIVE_EXITED); its path, or NULL where there is none. */
const char *tt__live_exited(void) TT__HIDDEN;
int tt__live_after_fork(void) TT__HIDDEN; /* the child's own live file, or -1 */

/* stream.c: mode stream */
int tt__stream_start(void) TT__HIDDEN;  /* creates the file and the drain thread; says why not */
int tt__stream_finish(void) TT__HIDDEN; /* at exit: writes everything, then END */
void tt__stream_chunk_full(struct tt__slot *slot) TT__HIDDEN;     /* wakes the drain */
void tt__stream_thread_exited(struct tt__slot *slot) TT__HIDDEN; /* wakes the drain */
void tt__stream_after_fork(void) TT__HIDDEN;
/* A dump in mode stream: what is recorded so far reaches the file, and with a
 * `path`, a copy of the file so far, ended as a complete one, goes there too. */
int tt__stream_flush(const char *path) TT__HIDDEN;

#endif /* TT_MODES_H */
