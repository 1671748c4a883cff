/* Configuration: the environment read once, at start-up, into tt__config (core.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lifecycle/lifecycle.h"

#define TT__MEMORY_MIN (UINT64_C(1) << 20)

/* The run's memory for buffers by default: a quarter of the machine's. */
static uint64_t tt__default_memory(void)
{
	uint64_t physical = tt_os_memory_size();
	return (physical ? physical : UINT64_C(4) << 30) / 4;
}

/* TICKTRACE_MEMORY: bytes, or with a suffix K, M or G (KiB, MiB, GiB). */
static uint64_t tt__parse_memory(const char *text)
{
	uint64_t bytes;
	if (tt_parse_size(text, &bytes) < 0 || bytes < TT__MEMORY_MIN) {
		uint64_t fallback = tt__default_memory();
		fprintf(tt__err, "ticktrace: TICKTRACE_MEMORY=%s is not a size of 1M or more (bytes, or "
			"with K, M or G); using %" PRIu64 "M\n", text, fallback >> 20);
		return fallback;
	}
	return bytes;
}

/* TICKTRACE_MIN_DUR, or `fallback_ns` (the zero-markup build's default,
 * min_dur_default) when it is unset or not a duration: a bad value is said once, where
 * the environment is read, and never turns the filter off. */
static bool tt__min_dur_invalid;

static void tt__config_min_dur(const char *text, uint64_t fallback_ns)
{
	int64_t ns = (int64_t)fallback_ns;
	static const char then[] = "using the default (1us in the zero-markup build, none otherwise)";
	if (text && *text && !tt__min_dur_invalid && tt_parse_duration(text, &ns) == -1) {
		fprintf(tt__err, "ticktrace: TICKTRACE_MIN_DUR=%s is not a duration (such as 500ns, "
			"2us, 1ms; 0: every call kept); %s\n", text, then);
		tt__min_dur_invalid = true;
		ns = (int64_t)fallback_ns;
	} else if (text && *text && !tt__min_dur_invalid &&
		   !tt_time_in_range(TT_ENV_MIN_DUR, text, ns, tt__err, then)) {
		tt__min_dur_invalid = true;
		ns = (int64_t)fallback_ns;
	}
	tt__config.min_dur_ns = (uint64_t)ns;
	tt__config.min_dur_ticks = ns ? tt_os_ns_in_ticks((uint64_t)ns) : 0;
}

void tt__min_dur_default(uint64_t ns)
{
	tt__init();
	const char *text = getenv(TT_ENV_MIN_DUR);
	if (!tt__config.off && (!text || !*text || tt__min_dur_invalid))
		tt__config_min_dur(NULL, ns);
}

/* TICKTRACE_SCHED: 0, switches, schedstat, or 1 or unset (the default). */
static void tt__config_sched(const char *sched)
{
	tt__config.sched_off = sched && strcmp(sched, "0") == 0;
	tt__config.sched_only = !sched                       ? 0
			      : strcmp(sched, "switches") == 0  ? TT__SCHED_SWITCHES
			      : strcmp(sched, "schedstat") == 0 ? TT__SCHED_SCHEDSTAT
								: 0;
	if (sched && *sched && !tt__config.sched_off && !tt__config.sched_only &&
	    strcmp(sched, "1") != 0)
		fprintf(tt__err, "ticktrace: TICKTRACE_SCHED=%s is not 0, 1, switches or schedstat; "
			"using the default (the switches where the kernel allows them, the threads' "
			"counters where it refuses them)\n", sched);
}

/* The zero-markup build: the program links libticktrace-detour (pkg-config
 * ticktrace-instrument), which patches every function (its `every_sled`), not under
 * `ticktrace record` (which preloads it, with TT_ENV_LIST) nor told what to patch
 * (TT_ENV_DETOUR). Known here, before the patcher's constructor runs (the runtime's
 * runs first): start-up's own lines go where the run's do. */
static int tt__is_detour(const struct tt_os_module *module, void *arg)
{
	(void)arg;
	const char *base = strrchr(module->path, '/');
	return strncmp(base ? base + 1 : module->path, "libticktrace-detour.", 20) == 0;
}

static int tt__under_record(void)
{
	const char *list = getenv(TT_ENV_LIST);
	return list && *list;
}

static int tt__zero_markup(void)
{
	const char *detour = getenv(TT_ENV_DETOUR);
	return !tt__under_record() && (!detour || !*detour) && tt_os_modules(tt__is_detour, NULL);
}

/* A run of record's that keeps a log beside each trace: not --list's, whose run is
 * gone with its directory once listed (what it says is said on stderr). */
static int tt__record_keeps_logs(void)
{
	return tt__under_record() && !getenv(TT_ENV_DETOUR_LIST);
}

/* TICKTRACE_LOG's file, %p in it, made absolute as the run starts; "": the trace's
 * name and .log. */
static char tt__log_pattern[4096];

/* The log's name (base.h, tt__err_to). TICKTRACE_LOG's is emptied by the run's first
 * process alone (its children and images may share it); one beside the trace is the
 * process's own, emptied as its trace is replaced; none (stderr) beside a trace written
 * to a device or a FIFO. */
static int tt__log_name(char *buf, size_t size)
{
	if (tt__log_pattern[0]) {
		if (tt__expand_pid(tt__log_pattern, buf, size) < 0)
			return -1;
		tt__list_tagged(TT_LIST_LOG, buf);
		return !tt__forked && !tt__exec_image;
	}
	size_t len;
	if (tt__default_path(buf, size) < 0 || tt__output_in_place(buf) ||
	    (len = strlen(buf)) + sizeof ".log" > size)
		return -1;
	memcpy(buf + len, ".log", sizeof ".log");
	tt__list_tagged(TT_LIST_LOG, buf);
	return 1;
}

/* TICKTRACE_LOG: stderr, off, or a file; unset, stderr, but where stderr is not a
 * terminal in the zero-markup build or under `ticktrace record` (TT_ENV_LIST) a file
 * beside the trace: the program's own output, which its tests may compare (xz's
 * test_scripts.sh its xzgrep's 2>&1), stays as without ticktrace; record names the
 * logs. */
static void tt__config_log(const char *log)
{
	int where = TT__LOG_STDERR;
	tt__log_pattern[0] = 0;
	if (log && strcmp(log, "off") == 0) {
		where = TT__LOG_OFF;
	} else if (log && *log && strcmp(log, "stderr") != 0) {
		char cwd[4096];
		tt_in_dir(log, tt_os_current_dir(cwd, sizeof cwd) ? cwd : "", tt__log_pattern,
			  sizeof tt__log_pattern);
		where = TT__LOG_FILE;
	} else if ((!log || !*log) && !isatty(2) && (tt__config.zero_markup || tt__record_keeps_logs())) {
		where = TT__LOG_FILE;
	}
	tt__err_to(where, tt__log_name);
}

void tt__config_read(void)
{
	tt__config.zero_markup = tt__zero_markup();
	tt__config_log(getenv("TICKTRACE_LOG"));
	tt__config.off = !tt_setting_on("TICKTRACE", getenv("TICKTRACE"), true, "recording on", tt__err);
	tt__config.live = tt_setting_on(TT_ENV_LIVE, getenv(TT_ENV_LIVE), false,
					"no live file (a " TT_OS_HARD_KILL " loses the run)", tt__err);
	tt__config.buffer_events = tt_buffer_events(getenv(TT_ENV_BUFFER), tt__err);
	tt__config.chunk_budget =
		(tt__config.buffer_events + TT__CHUNK_RECORDS - 1) / TT__CHUNK_RECORDS;
	const char *memory = getenv("TICKTRACE_MEMORY");
	tt__config.memory_bytes = memory && *memory ? tt__parse_memory(memory) : tt__default_memory();
	tt__config.mode = tt__mode_ops_by_name(getenv(TT_ENV_MODE));
	tt__config_sched(getenv("TICKTRACE_SCHED"));
	tt__config_min_dur(getenv(TT_ENV_MIN_DUR), 0);
	/* Streaming and recycling need a chunk to record into while another is written
	 * or recycled. */
	if ((tt__config.mode->drains || tt__config.mode->recycle_oldest) &&
	    tt__config.chunk_budget < 2)
		tt__config.chunk_budget = 2;
}
