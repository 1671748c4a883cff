/* Start-up (before main, or a thread's first event if that comes first), the dump at
 * exit, and the public controls. Environment: TICKTRACE=0, TICKTRACE_BUFFER (events
 * per thread), TICKTRACE_OUT (%p: the pid), TICKTRACE_MODE (stop, ring, stream),
 * TICKTRACE_LIVE=1 (modes stop and ring: live.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <intrin.h>

#include "portable/portable.h"
#include "record_protocol.h"

/* Address space for every thread's chunks: reserved, committed as threads take them. */
#define TT__ARENA_BYTES (UINT64_C(4) << 30)

struct tt__run tt__run;
struct tt_os_lock tt__run_lock;


/* This process is not the run's first (TICKTRACE_PROGRAM_PID names another: one that
 * started it, by system or CreateProcess): its file, where TICKTRACE_OUT has no %p,
 * is named apart with its pid (run.ttr.PID), as Linux's is (writer/output.c); the
 * first tells its children so. A child at the same name replaced its parent's file. */
static int tt__apart;

static void tt__find_first(void)
{
	char text[32];
	const char *first = tt_os_getenv(TT_ENV_PROGRAM_PID, text, sizeof text);
	unsigned long pid = first ? strtoul(first, NULL, 10) : 0;
	tt__apart = pid && pid != tt_os_process_id();
	if (tt__apart)
		return;
	static char setting[64]; /* (putenv keeps it) */
	snprintf(setting, sizeof setting, "%s=%" PRIu32, TT_ENV_PROGRAM_PID, tt_os_process_id());
	putenv(setting); /* (msvcrt's putenv sets the process's environment too: CreateProcess's) */
}

/* The directory the program started in, where a relative TICKTRACE_OUT (and the
 * default name) is resolved wherever the program is at its end, as Linux's is and the
 * stream's file and the live file are, opened at start ("": the name as it is). */
static char tt__start_dir[1024];

/* Room for TICKTRACE_OUT (a byte past the longest, to see a longer one) with the
 * default name joined to it, where it names a directory. */
#define TT__OUT_ROOM (TT__OUT_MAX + 2 + sizeof TT_OUT_DEFAULT)

/* `pattern` with each %p the pid, into `name`: 0, or -ENAMETOOLONG. */
static int tt__expand(const char *pattern, char *name, size_t size)
{
	size_t len = 0;
	name[0] = 0;
	for (const char *p = pattern; *p; p++) {
		int n = p[0] == '%' && p[1] == 'p' ? snprintf(name + len, size - len, "%" PRIu32, tt_os_process_id())
						   : snprintf(name + len, size - len, "%c", *p);
		p += p[0] == '%' && p[1] == 'p';
		if (n < 0 || (size_t)n >= size - len) {
			name[len] = 0;
			return -ENAMETOOLONG;
		}
		len += (size_t)n;
	}
	return 0;
}

/* TICKTRACE_OUT as it is now, or the default name, read into `out`; `*too_long` where
 * it is longer than TT__OUT_MAX. One that names a directory (DIR\, or one there: as
 * Linux's, tt_os_out_dir) is the default name in it, by the default's rules; where the
 * directory is not one to write into, the default name itself, "DIR: why" in `why`
 * ("": none). */
static const char *tt__out_pattern(char out[TT__OUT_ROOM], int *too_long, char *why, size_t cap)
{
	const char *given = tt_os_getenv(TT_ENV_OUT, out, TT__OUT_MAX + 2);
	why[0] = 0;
	*too_long = given && strlen(given) > TT__OUT_MAX;
	if (!given || !*given)
		return TT_OUT_DEFAULT;
	char name[TT__OUT_MAX + 16], there[TT__PATH_MAX + 1], in_dir[TT__OUT_ROOM];
	if (*too_long || tt__expand(given, name, sizeof name) || tt_os_path_in(tt__start_dir, name, there, sizeof there))
		return given;
	int in = tt_os_out_dir(given, there, TT_OUT_DEFAULT, in_dir, sizeof in_dir, why, cap);
	if (in <= 0)
		return in < 0 ? TT_OUT_DEFAULT : given;
	memcpy(out, in_dir, strlen(in_dir) + 1);
	return out;
}

int tt__out_pid_named(void)
{
	char out[TT__OUT_ROOM], why[TT__PATH_MAX + 200];
	int too_long;
	return tt__apart || strstr(tt__out_pattern(out, &too_long, why, sizeof why), "%p");
}

int tt__out_keep(void)
{
	char out[TT__OUT_ROOM], why[TT__PATH_MAX + 200];
	int too_long;
	return tt_os_name_is(tt__out_pattern(out, &too_long, why, sizeof why), TT_OUT_DEFAULT);
}

/* The number the run's file at the default name takes, chosen as the process first
 * names it: another run's of its pid there (Wine's first process is 32 with each new
 * wineserver), its live file and its trace named apart from it alike. */
static struct tt_os_out_number tt__out_number;

/* The default file: TICKTRACE_OUT, %p its pid, or ticktrace-PID.ttr (.PID after it in
 * a process apart; the default name numbered: tt__out_number), in the start
 * directory; -ENAMETOOLONG (its first bytes in `path`) where it does not fit. `why`:
 * tt__out_pattern's. */
static int tt__default_path_why(char *path, size_t size, char *why, size_t cap)
{
	char out[TT__OUT_ROOM];
	char name[TT__OUT_MAX + sizeof TT_OUT_DEFAULT + 16];
	int too_long;
	const char *pattern = tt__out_pattern(out, &too_long, why, cap);
	int cut = tt__expand(pattern, name, sizeof name) != 0;
	size_t len = strlen(name);
	if (!cut && tt__apart && !strstr(pattern, "%p") && !tt_os_is_device(name)) {
		int n = snprintf(name + len, sizeof name - len, ".%" PRIu32, tt_os_process_id());
		cut = n < 0 || (size_t)n >= sizeof name - len;
		name[cut ? len : len + (size_t)n] = 0;
	}
	if (!cut && tt_os_path_in(tt__start_dir, name, path, size) < 0)
		cut = 1;
	if (!cut && tt_os_name_is(pattern, TT_OUT_DEFAULT) && !tt_os_is_device(path)) {
		snprintf(name, sizeof name, "%s", path);
		cut = tt_os_out_numbered(&tt__out_number, tt_os_process_id(), 0, path, size) < 0;
	}
	if (cut)
		snprintf(path, size, "%s", name);
	return cut || too_long ? -ENAMETOOLONG : 0;
}

void tt__out_say_numbered(const char *path)
{
	char line[2 * TT__PATH_MAX + 256];
	tt_os_out_said(&tt__out_number, tt_os_process_id(), 0, path, line, sizeof line);
	fputs(line, stderr);
}

static int tt__default_path(char *path, size_t size)
{
	char why[TT__PATH_MAX + 200];
	return tt__default_path_why(path, size, why, sizeof why);
}

/* The run's end (crash_signal 0) or the process dying of a fault: what was recorded,
 * in the default file, named in `path` (mode stream: the streamed file's end); a live
 * file, once the trace is written, removed. */
static int tt__run_end(int crash_signal, char *path, size_t size)
{
	int rc = tt__default_path(path, size);
	if (rc)
		return rc;
	if (tt__run.mode == TT__MODE_STREAM)
		return tt__stream_finish(crash_signal);
	rc = tt__write_file(path, size, crash_signal);
	if (rc == 0 && tt__run.live)
		tt__live_finish();
	return rc;
}

/* The events the threads dropped, by cause, and what to change: one line, as Linux's
 * tt__say_drops (core/slow_path.c). A ring's overwritten events are its way, not said.
 * (No lock: at exit the other threads are gone or their counts only grow.) */
static void tt__say_drops(void)
{
	uint64_t total[TT_DROP_CAUSES] = {0};
	uint64_t all = __atomic_load_n(&tt__run.unregistered_dropped, __ATOMIC_RELAXED);
	for (struct tt__slot *s = __atomic_load_n(&tt__run.first, __ATOMIC_ACQUIRE); s;
	     s = __atomic_load_n(&s->next, __ATOMIC_ACQUIRE))
		for (int i = 0; i < TT_DROP_CAUSES; i++)
			if (tt_drop_cause_text((unsigned)i)) {
				uint64_t n = __atomic_load_n(&s->dropped[i], __ATOMIC_RELAXED);
				total[i] += n;
				all += n;
			}
	if (!all)
		return;
	fprintf(stderr, "ticktrace: %" PRIu64 " events dropped", all);
	for (int i = 0; i < TT_DROP_CAUSES; i++)
		if (total[i])
			fprintf(stderr, ", %" PRIu64 " because %s", total[i], tt_drop_cause_text((unsigned)i));
	if (total[TT_DROP_BEHIND])
		fprintf(stderr, ": write to a faster disk, or set TICKTRACE_BUFFER larger");
	else if (total[TT_DROP_FULL])
		fprintf(stderr, ": set TICKTRACE_BUFFER larger, or TICKTRACE_MODE=ring to keep the "
			"latest, or TICKTRACE_MODE=stream to keep them all");
	else if (total[TT_DROP_NO_MEMORY])
		fprintf(stderr, ": set TICKTRACE_BUFFER smaller, or TICKTRACE_MODE=stream");
	fprintf(stderr, "\n");
}

/* The run ended: at exit, or by a crash whose file the exit must not replace (a
 * stack overflow ends only its thread: the process then exits as its last ends). */
static int tt__ended;

/* (once: tt_os_at_exit may call it twice) */
static void tt__exit(void)
{
	if (tt__run.off)
		return;
	if (!__atomic_exchange_n(&tt__ended, 1, __ATOMIC_ACQ_REL)) {
		char path[TT__PATH_MAX + 1];
		int rc = tt__run_end(0, path, sizeof path);
		if (rc < 0) /* (Linux's words: lifecycle/start.c) */
			fprintf(stderr, "ticktrace: could not write the trace at exit to %s: %s\n", path,
				strerror(-rc));
		tt__say_drops();
	}
	tt__threads_end();
}

/* (`exception`: its code, which the file keeps as its crash_signal) */
static void tt__crashed(uint32_t exception)
{
	if (__atomic_exchange_n(&tt__ended, 1, __ATOMIC_ACQ_REL))
		return;
	char path[TT__PATH_MAX + 1];
	int rc = tt__run_end((int)exception, path, sizeof path);
	if (rc < 0)
		fprintf(stderr, "ticktrace: could not write the trace on exception 0x%08" PRIX32 " to %s: %s\n",
			exception, path, strerror(-rc));
}

/* Linux's settings this runtime has not: each one set said once, as a bad value is,
 * rather than a run that silently lacks what was asked. */
static void tt__say_unsupported(void)
{
	static const char *const names[] = {"TICKTRACE_REPORT", "TICKTRACE_SPIKES", "TICKTRACE_SNAPSHOTS",
					    "TICKTRACE_SNAPSHOT_MAX", "TICKTRACE_SPIKES_LOG_MAX",
					    "TICKTRACE_SPIKE_THRESHOLD", "TICKTRACE_MEMORY", "TICKTRACE_LOG"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		const char *value = getenv(names[i]);
		if (value && *value)
			fprintf(stderr, "ticktrace: %s=%s: not on Windows (Linux's runtime alone); ignored\n",
				names[i], value);
	}
}

/* TICKTRACE_MODE (another value said, and stop used, as on Linux) and TICKTRACE_LIVE. */
static void tt__mode_from_env(void)
{
	static const enum tt__mode modes[TT_MODE_COUNT] = {TT__MODE_STOP, TT__MODE_STREAM, TT__MODE_RING};
	tt__run.mode = modes[tt_mode_index(getenv(TT_ENV_MODE), stderr)];
	const char *live = getenv(TT_ENV_LIVE);
	tt__run.live = live && strcmp(live, "1") == 0 && tt__run.mode != TT__MODE_STREAM;
}

/* TICKTRACE_MIN_DUR: calls shorter, nothing recorded inside, erased as they return
 * (asm/record_win64.asm); a bad value said, and every call kept. */
static void tt__min_dur_from_env(void)
{
	const char *text = getenv(TT_ENV_MIN_DUR);
	int64_t ns = 0;
	if (text && *text && tt_parse_duration(text, &ns) == -1) {
		fprintf(stderr, "ticktrace: TICKTRACE_MIN_DUR=%s is not a duration (such as 500ns, 2us, "
				"1ms; 0: every call kept); every call kept\n", text);
		ns = 0;
	} else if (text && *text && !tt_time_in_range(TT_ENV_MIN_DUR, text, ns, stderr, "every call kept")) {
		ns = 0;
	}
	tt__run.min_dur_ns = (uint64_t)ns;
	tt__run.min_dur_ticks = ns ? tt_os_ns_in_ticks((uint64_t)ns) : 0;
}

void tt__start(void)
{
	tt_os_lock(&tt__run_lock);
	if (tt__run.started) {
		tt_os_unlock(&tt__run_lock);
		return;
	}
	tt__run.off = tt_recording_off(getenv("TICKTRACE"), stderr);
	tt__mode_from_env();
	if (!tt__run.off)
		tt__say_unsupported();
	tt__find_first();
	tt_os_current_dir(tt__start_dir, sizeof tt__start_dir);
	uint64_t records = tt_buffer_events(getenv(TT_ENV_BUFFER), stderr);
	uint64_t per_chunk = (TT__CHUNK_SIZE - sizeof(struct tt__chunk)) / sizeof(struct tt_record);
	tt__run.chunk_budget = (records + per_chunk - 1) / per_chunk;
	/* (a ring recycles a chunk other than the one it records into; a stream writes
	 * one while its thread records into another) */
	if (tt__run.mode != TT__MODE_STOP && tt__run.chunk_budget < 2)
		tt__run.chunk_budget = 2;
	tt__min_dur_from_env();
	if (!tt__run.off) {
		tt__run.next = tt_os_reserve(TT__ARENA_BYTES);
		tt__run.arena_end = tt__run.next ? tt__run.next + TT__ARENA_BYTES : NULL;
		if (!tt__run.next) {
			fprintf(stderr, "ticktrace: no address space for the buffers; recording is off\n");
			tt__run.off = 1;
		}
	}
	if (tt__run.off)
		__atomic_or_fetch(&tt__hot_global.unusual, TT__HOT_OFF, __ATOMIC_RELAXED);
	tt_os_anchor(&tt__run.start);
	tt__machine_start(&tt__run.machine, &tt__run.start);
	tt__run.machine.flags |= TT_MACHINE_WINDOWS;
	tt__run.process.ppid = tt_os_parent_id();
	tt_os_on_unload(tt__module_unloaded); /* (where ntdll cannot tell: their functions unnamed) */
	tt__run.process.cmdline_len = (uint32_t)tt_os_command_line(tt__run.cmdline, sizeof tt__run.cmdline);
	char path[TT__PATH_MAX + 1 + 5], why[TT__PATH_MAX + 200];
	int rc = tt__default_path_why(path, sizeof path - 5, why, sizeof why);
	char given[TT__OUT_MAX + 2];
	if (!tt__run.off && rc == 0 && why[0] && !tt__apart && tt_os_getenv(TT_ENV_OUT, given, sizeof given))
		fprintf(stderr, "ticktrace: TICKTRACE_OUT=%s names the directory %s: the trace is written at "
			"%s, the default name, instead\n", given, why, path);
	/* (a process apart: its run began before it) */
	if (rc != 0 || tt__apart || tt_os_path_stamp(path, &tt__run.out_before) != 0)
		tt__run.out_before = (struct tt_os_file_stamp){0};
	tt__run.out_since_ns = tt_os_file_clock_ns();
	if (!tt__run.off && rc < 0) {
		fprintf(stderr, "ticktrace: TICKTRACE_OUT=%.40s...: %s (%d bytes at most); recording is off\n",
			path, strerror(-rc), TT__OUT_MAX);
		tt__run.off = 1;
		__atomic_or_fetch(&tt__hot_global.unusual, TT__HOT_OFF, __ATOMIC_RELAXED);
	}
	if (!tt__run.off && tt__run.mode == TT__MODE_STREAM && (rc = tt__stream_start(path)) < 0) {
		fprintf(stderr, "ticktrace: %s: %s; recording is off\n", path, strerror(-rc));
		tt__run.off = 1;
		__atomic_or_fetch(&tt__hot_global.unusual, TT__HOT_OFF, __ATOMIC_RELAXED);
	}
	if (!tt__run.off) {
		tt__live_start(strcat(path, ".live"));
		if (!tt__run.live)
			tt__prefault_start();
		tt__counters_start();
	}
	__atomic_store_n(&tt__run.started, 1, __ATOMIC_RELEASE);
	tt_os_unlock(&tt__run_lock);
	if (!tt__run.off) {
		/* (before ExitProcess ends tt-stream: a DLL's atexit runs only after, at its
		 * detach, and found tt-stream ended while it wrote) */
		tt_os_at_exit(tt__exit);
		if (tt_os_on_crash(tt__crashed, 0) != 0)
			fprintf(stderr, "ticktrace: no crash handler: a crash leaves no trace\n");
	}
}

__attribute__((constructor)) static void tt__constructor(void)
{
	tt__start();
}

int tt_dump(const char *path)
{
	if (!__atomic_load_n(&tt__run.started, __ATOMIC_ACQUIRE))
		tt__start();
	if (tt__run.off)
		return -ECANCELED;
	if (tt__run.mode == TT__MODE_STREAM) /* (the default file is the stream's own) */
		return tt__stream_flush(path);
	char fallback[TT__PATH_MAX + 1];
	if (path)
		return tt__write_file((char *)path, 0, 0);
	int rc = tt__default_path(fallback, sizeof fallback);
	return rc ? rc : tt__write_file(fallback, sizeof fallback, 0);
}

/* The calling thread's slot, registered if need be, the lock held; NULL (not held)
 * when recording is off for the run or there is no memory for it. */
static struct tt__slot *tt__self_locked(void)
{
	if (!__atomic_load_n(&tt__run.started, __ATOMIC_ACQUIRE))
		tt__start();
	if (tt__run.off)
		return NULL;
	int watched = tt__watch_exit() == 0;
	tt_os_lock(&tt__run_lock);
	struct tt__slot *slot = tt__self(watched);
	if (!slot)
		tt_os_unlock(&tt__run_lock);
	return slot;
}

void tt_thread_name(const char *name)
{
	struct tt__slot *slot = tt__self_locked();
	if (!slot)
		return;
	snprintf(slot->name, sizeof slot->name, "%.*s", (int)tt_utf8_cut(name, sizeof slot->name - 1), name);
	slot->named = 1;
	tt_os_unlock(&tt__run_lock);
}

void tt__describe(const char *fmt, ...)
{
	uint64_t tsc = __rdtsc(); /* when it was described, like any event */
	struct tt_record records[TT_DESCRIBE_RECORDS];
	va_list ap;
	va_start(ap, fmt);
	size_t n = tt_describe_records(records, tsc, fmt, ap);
	va_end(ap);
	if (n)
		tt__record_many(records, n);
}

/* Names made at run time (the _DYN macros): Linux's table (common/names.c), added
 * under a lock of their own. Recording off (TICKTRACE=0, tt_disable): no event names
 * it, nothing is kept. */
static struct tt_names tt__names = {.alloc = tt_os_alloc};
static struct tt_os_lock tt__names_lock;

const struct tt_callsite *tt__name(const struct tt_callsite *from, const char *name, size_t len)
{
	if (!__atomic_load_n(&tt__run.started, __ATOMIC_ACQUIRE))
		tt__start();
	if (__atomic_load_n(&tt__hot_global.unusual, __ATOMIC_RELAXED) & TT__HOT_OFF)
		return from;
	struct tt_name_key key;
	const struct tt_callsite *found = tt_names_find(&tt__names, from, name, len, &key);
	if (found)
		return found;
	tt_os_lock(&tt__names_lock);
	const struct tt_callsite *site = tt_names_add(&tt__names, &key);
	tt_os_unlock(&tt__names_lock);
	return site;
}

static void tt__pause_self(int paused)
{
	struct tt__slot *slot = tt__self_locked();
	if (!slot)
		return;
	slot->paused = paused;
	tt__set_limit(slot);
	tt_os_unlock(&tt__run_lock);
}

void tt_pause(void)
{
	tt__pause_self(1);
}

void tt_resume(void)
{
	tt__pause_self(0);
}

void tt_enable(void)
{
	if (!tt__run.off)
		__atomic_and_fetch(&tt__hot_global.unusual, ~TT__HOT_OFF, __ATOMIC_RELAXED);
}

void tt_disable(void)
{
	__atomic_or_fetch(&tt__hot_global.unusual, TT__HOT_OFF, __ATOMIC_RELAXED);
}

int tt_trigger(const char *why)
{
	(void)why;
	return tt__run.off ? -ECANCELED : -ENOTCONN; /* (no snapshots on this runtime) */
}
