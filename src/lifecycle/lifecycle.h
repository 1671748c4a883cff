/* ticktrace runtime, layer lifecycle: around the recording, on top of every other
 * layer: start-up and configuration, the public controls, fork, signals and crashes,
 * exit, libraries unloaded. Included by this folder's files alone. Never installed. */
#ifndef TT_LIFECYCLE_H
#define TT_LIFECYCLE_H

#include "modes/modes.h"

/* start.c */
void tt__init(void) TT__HIDDEN; /* idempotent; every entry point calls it */
/* Ends the run as at exit: the trace written (or the stream ended), recording off.
 * Once; nothing in a vfork child. */
void tt__finish(void) TT__HIDDEN;
/* Whether this is a vfork child (of a process that started the run): it shares that
 * process's memory, and the image it execs is a process's first. */
int tt__in_vfork_child(void) TT__HIDDEN;
/* Set while the program is in daemon() (exec.c's, Linux's): its fork's parent leaves
 * by _exit, its run ended as the fork returns there. */
extern int tt__in_daemon TT__HIDDEN;

/* config.c: TICKTRACE, TICKTRACE_BUFFER, TICKTRACE_MODE into tt__config */
void tt__config_read(void) TT__HIDDEN;

/* signals.c: TICKTRACE_DUMP_SIGNAL, crashes, and the service thread that writes the
 * trace for them */
int tt__signals_init(void) TT__HIDDEN;
void tt__signals_after_fork(void) TT__HIDDEN;
/* Async-signal-safe: the run ends by `finish` (tt__finish: as at exit), called by
 * the service thread, which the caller waits for (at most as long as for a crash's
 * dump): 1; 0, nothing done, where there is none (it gave way to the program's
 * threads, or never started), or called from it. */
int tt__finish_from_anywhere(void (*finish)(void)) TT__HIDDEN;

#endif /* TT_LIFECYCLE_H */
