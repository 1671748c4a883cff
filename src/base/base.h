/* ticktrace runtime, layer base: what every layer above uses and that knows nothing
 * of recording: the clock, ticktrace's own threads and signal masks, slab memory.
 * Never installed. */
#ifndef TT_BASE_H
#define TT_BASE_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "record_protocol.h"
#include "ticktrace.h"
#include "ticktrace/format.h"

#define TT__HIDDEN __attribute__((visibility("hidden")))

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* (Linux 5.14; older kernels refuse it) */
#endif

/* clock.c */
int64_t tt__clock_ns(clockid_t id) TT__HIDDEN; /* the clock's reading in nanoseconds */
void tt__anchor_now(struct tt_anchor *anchor) TT__HIDDEN;
void tt__clock_fill_header(struct tt_file_header *header) TT__HIDDEN;
/* TSC ticks per second from one anchor to a later one; 0 when no time passed. */
uint64_t tt__anchor_hz(const struct tt_anchor *from, const struct tt_anchor *to) TT__HIDDEN;
extern struct tt_anchor tt__start_anchor TT__HIDDEN;
/* The run's machine and clocks (format.h: TT_SEC_MACHINE): its time namespace's
 * offsets, its name and ids, its wall clocks at the start anchor. */
extern struct tt_machine_info tt__machine TT__HIDDEN;
/* A new run's clocks: the start anchor, the time namespace's offsets, the machine. */
void tt__clock_start(void) TT__HIDDEN;
/* The wall clocks now, with a TSC of their own (format.h: struct tt_clock_reading). */
void tt__clock_reading_now(struct tt_clock_reading *reading) TT__HIDDEN;
/* Up to `size` bytes of a small file (/proc, /sys): how many, 0 when unreadable. */
size_t tt__read_file(const char *path, char *buf, size_t size) TT__HIDDEN;

/* threads.c */
void tt__block_signals(sigset_t *old) TT__HIDDEN;
void tt__restore_signals(const sigset_t *old) TT__HIDDEN;
/* Starts one of ticktrace's own threads, with every signal blocked; with `wait`,
 * returns once it calls tt__thread_running (its first act). 0 or -errno. */
int tt__start_thread(pthread_t *thread, void *(*main)(void *), void *arg, int detached,
		     int wait) TT__HIDDEN;
void tt__thread_running(const char *name) TT__HIDDEN;
/* (tt__own_thread, which the patcher calls: record_protocol.h) */
/* Around work of ticktrace's own threads that allocates: not while a fork runs (fork
 * holds it too). */
void tt__background_work(int begin) TT__HIDDEN;
void tt__background_reset_after_fork(void) TT__HIDDEN; /* in the child */
/* Around ticktrace's own writes to its files: a write past the program's RLIMIT_FSIZE
 * fails (EFBIG), one into a FIFO whose reader left fails (EPIPE), and the file is cut
 * or missing with a word, instead of SIGXFSZ or SIGPIPE ending the program. They are
 * blocked in the writing thread alone, and those its writes raised taken back at the
 * end: the program's dispositions are never changed, and its handlers never called
 * for a write of ticktrace's. */
struct tt__writing {
	sigset_t mask;    /* the thread's, restored at the end */
	unsigned pending; /* those pending already: the program's own */
};
void tt__writing_begin(struct tt__writing *w) TT__HIDDEN;
void tt__writing_end(struct tt__writing *w) TT__HIDDEN;

/* switches.c: a thread's context switches, as the kernel records them */
struct tt__switches {
	int fd;        /* -1: none */
	void *map;     /* the perf ring */
	size_t map_size;
	uint64_t lost; /* switches the kernel could not write (the ring was full) */
};
/* Asks for those of thread `tid` of this process (one perf event and its ring): 0 or
 * -errno, with *denied set when
 * the kernel refuses such events to any thread (seccomp, perf_event_paranoid 3, no
 * perf), not for want of descriptors or locked memory (EMFILE; EPERM from mmap). */
int tt__switches_open(struct tt__switches *s, int tid, int *denied) TT__HIDDEN;
/* Moves up to `cap` of the states recorded since into `out` (in time order); how many.
 * One caller at a time. */
size_t tt__switches_read(struct tt__switches *s, struct tt_sched_state *out, size_t cap) TT__HIDDEN;
void tt__switches_close(struct tt__switches *s) TT__HIDDEN;

/* slab.c: memory for the slow path, which must not call malloc (a signal handler may
 * have interrupted it): bump allocation from private mmap'd slabs, never freed. The
 * caller serializes calls on one slab. */
struct tt__slab {
	char *next, *end;
	size_t slab_size;
};
void *tt__slab_alloc(struct tt__slab *slab, size_t size) TT__HIDDEN;

#endif /* TT_BASE_H */
