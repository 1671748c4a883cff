/* Hostile use: a program killed at any moment, signals, FIFOs, devices and files
 * another user planted where ticktrace writes (a file size limit and a full disk:
 * test_hostile_limits.c). Each test starts tt_longrun_prog (path in argv[1]) with
 * the settings of the attack and checks what a user would: that the program ends as
 * it would without ticktrace, that what it recorded converts, and that no file but
 * ticktrace's own is touched. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tt_check.h"
#include "read/read.h"
#include "hostile_support.h"

/* How a program that faults ends: of SIGSEGV; under AddressSanitizer, whose handler
 * was there first and ticktrace chains to, of whatever signal it ends it with
 * (TT_H_SOME_SIGNAL). */
#define TT_H_SOME_SIGNAL (-2)
#ifdef TT_ASAN
#define TT_H_FAULT_STATUS TT_H_SOME_SIGNAL
#else
#define TT_H_FAULT_STATUS (128 + SIGSEGV)
#endif

/* Runs the program (at most 30 s); it must end with `status` and, when `says` is
 * not NULL, say it on its standard error (the file `err`). */
static void tt_h_expect_run(const char *const *settings, const char *const *args, const char *err,
			    int status, const char *says)
{
	int got = tt_h_run(settings, args, err, NULL, 0, 30);
	if (got != status && !(status == TT_H_SOME_SIGNAL && got > 128))
		fail_msg("%s %s with %s...: status %d, not %d (-1: it hung, or looped at a fault)",
			 args[0], args[1] ? args[1] : "", settings[0], got, status);
	if (says)
		tt_h_expect_text(err, says);
}

/* `path` converts with the ticktrace command, to dir/out.json. */
static void tt_h_converts(const char *dir, const char *path)
{
	char out[192];
	snprintf(out, sizeof out, "%s/out.json", dir);
	struct tt_run r;
	TT_RUN(&r, "convert", "--force", path, "-o", out);
	free(r.out);
	if (r.status != 0)
		fail_msg("%s does not convert (status %d): %s", path, r.status, r.err);
	unlink(out);
}

/* ---- SIGKILL at random moments ---- */

/* Checks the "values" program's records in a file: every round from the first kept
 * one on, in order (a run of dropped events may stand for some), each round's
 * instant and counter agreeing; every call site and the thread named. Returns the
 * rounds kept. */
static uint64_t tt_h_check_rounds(const char *path, bool window)
{
	struct tt_file f;
	if (tt_file_open(&f, path) < 0)
		fail_msg("%s cannot be read", path);
	for (size_t i = 0; i < f.nsites; i++)
		if (f.sites[i].name.len && f.sites[i].name.ptr[0] == '(' &&
		    &f.sites[i] != f.gap_site && &f.sites[i] != f.unbegun_site)
			fail_msg("%s: a call site is not named: %.*s", path, (int)f.sites[i].name.len,
				 f.sites[i].name.ptr);
	uint64_t rounds = 0;
	for (size_t k = 0; k < f.nthreads; k++) {
		const struct tt_thread *t = &f.threads[k];
		if (t->flags & TT_THREAD_RUNTIME)
			continue;
		if (t->name.len && t->name.ptr[0] == '(')
			fail_msg("%s: thread %" PRIu32 " is not named", path, t->index);
		bool first = true, after_gap = false;
		uint64_t next = 0, counter = UINT64_MAX;
		for (size_t s = 0; s < t->nsections; s++) {
			const struct tt_events *ev = &t->sections[s];
			const struct tt_record *records = tt_section_records(t, s);
			for (size_t i = 0; i < ev->count; i++) {
				unsigned kind = TT_RECORD_KIND(records[i].word);
				bool valued = TT_RECORD_HAS_VALUE(kind);
				if (valued && i + 1 == ev->count)
					fail_msg("%s: a record with a value ends a section", path);
				uint64_t value = valued ? records[++i].tsc : 0;
				if (kind == TT_REC_DROPPED) {
					after_gap = true;
					counter = UINT64_MAX; /* the round's counter may be in the gap */
				}
				if (kind == TT_REC_COUNTER)
					counter = value;
				if (kind != TT_REC_INSTANT_ARG)
					continue;
				if (!(first && window) && !after_gap && value != next)
					fail_msg("%s: round %" PRIu64 " where %" PRIu64 " was due", path, value, next);
				if (counter != UINT64_MAX && counter + 1 != value)
					fail_msg("%s: counter %" PRIu64 " before round %" PRIu64, path, counter, value);
				first = after_gap = false;
				next = value + 1;
				rounds++;
			}
		}
	}
	tt_file_close(&f);
	return rounds;
}

struct tt_h_kill_case {
	const char *name;
	const char *settings[4];
	const char *file;   /* where the run's records are: "run.ttr" or "run.ttr.live" */
	bool window;        /* mode ring: the first kept round may be any */
	bool dump_first;    /* a dump asked for (SIGUSR2) at a random moment before the kill */
};

static const struct tt_h_kill_case tt_h_kill_cases[] = {
	{"stop, live", {"TICKTRACE_MODE=stop", "TICKTRACE_LIVE=1"}, "run.ttr.live", false, false},
	{"ring, live", {"TICKTRACE_MODE=ring", "TICKTRACE_LIVE=1", "TICKTRACE_BUFFER=65536"},
	 "run.ttr.live", true, false},
	{"stream", {"TICKTRACE_MODE=stream", "TICKTRACE_BUFFER=65536"}, "run.ttr", false, false},
	{"stream, live asked for", {"TICKTRACE_MODE=stream", "TICKTRACE_LIVE=1"}, "run.ttr", false, false},
	{"stop, dumping", {"TICKTRACE_MODE=stop", "TICKTRACE_DUMP_SIGNAL=USR2"}, "run.ttr", false, true},
	{"ring, dumping", {"TICKTRACE_MODE=ring", "TICKTRACE_DUMP_SIGNAL=USR2", "TICKTRACE_BUFFER=65536"},
	 "run.ttr", true, true},
};

struct tt_h_trial {
	const struct tt_h_kill_case *c;
	struct tt_child child;
	char dir[64], out_setting[128];
};

/* 20 runs, a few at a time, each killed at a random moment up to 60 ms after it
 * began recording what is checked (for the dumping cases, a dump asked for at a
 * random moment before): what the run left always converts, with every round up to
 * the last one recorded. The seed is printed, to replay a failure. */
static void test_sigkill_at_random_moments(void **state)
{
	(void)state;
	enum { TRIALS = 20, AT_ONCE = 4 };
	const char *seed_text = getenv("TT_TEST_SEED");
	unsigned seed = seed_text ? (unsigned)atol(seed_text) : (unsigned)time(NULL) ^ (unsigned)getpid();
	printf("SIGKILL at random moments: TT_TEST_SEED=%u\n", seed);
	srand(seed);
	size_t ncases = sizeof tt_h_kill_cases / sizeof tt_h_kill_cases[0];
	for (int done = 0; done < TRIALS; done += AT_ONCE) {
		struct tt_h_trial trials[AT_ONCE];
		for (int i = 0; i < AT_ONCE; i++) {
			struct tt_h_trial *t = &trials[i];
			t->c = &tt_h_kill_cases[(size_t)(done + i) % ncases];
			tt_tmpdir(t->dir, sizeof t->dir);
			snprintf(t->out_setting, sizeof t->out_setting, "TICKTRACE_OUT=%s/run.ttr", t->dir);
			const char *settings[6] = {t->out_setting};
			memcpy(settings + 1, t->c->settings, sizeof t->c->settings);
			assert_int_equal(tt_child_spawn(&t->child, tt_h_prog, settings, TT_H("values"), NULL), 0);
		}
		for (int i = 0; i < AT_ONCE; i++) {
			struct tt_h_trial *t = &trials[i];
			char line[64];
			assert_non_null(fgets(line, sizeof line, t->child.out));
			assert_string_equal(line, "ready\n");
			if (t->c->dump_first) {
				usleep((useconds_t)(rand() % 30000));
				kill(t->child.pid, SIGUSR2);
			}
			usleep((useconds_t)(rand() % 60000));
			kill(t->child.pid, SIGKILL);
			assert_int_equal(tt_child_wait(&t->child, 60), 128 + SIGKILL);
		}
		for (int i = 0; i < AT_ONCE; i++) {
			struct tt_h_trial *t = &trials[i];
			char path[128];
			snprintf(path, sizeof path, "%s/%s", t->dir, t->c->file);
			/* A dump the kill interrupted left no file, and no half of one. */
			if (t->c->dump_first && access(path, F_OK) != 0) {
				if (tt_dir_entries(t->dir) != 0) {
					char ls[256];
					snprintf(ls, sizeof ls, "ls -la %s", t->dir);
					if (system(ls) != 0)
						fprintf(stderr, "(cannot list it)\n");
					fail_msg("%s: a dump the kill interrupted left files (case %s)", t->dir,
						 t->c->name);
				}
			} else {
				tt_h_converts(t->dir, path);
				printf("case %s: %s\n", t->c->name, path);
				uint64_t rounds = tt_h_check_rounds(path, t->c->window);
				if (rounds == 0)
					fail_msg("%s: no round kept (case %s)", path, t->c->name);
			}
			tt_rmdir(t->dir);
		}
	}
}

/* A run killed before it described the call sites it used: the converter names
 * them from the binary, where their descriptors are static data (item 2). */
static void test_sites_named_after_sigkill(void **state)
{
	(void)state;
	struct tt_h_dir d;
	tt_h_dir_make(&d);
	struct tt_child c;
	assert_int_equal(tt_child_spawn(&c, tt_h_prog, TT_H(d.out, "TICKTRACE_LIVE=1"), TT_H("hold", "1000", "0"),
					NULL), 0);
	char line[64], live[160], json[160];
	assert_non_null(fgets(line, sizeof line, c.out));
	kill(c.pid, SIGKILL);
	assert_int_equal(tt_child_wait(&c, 30), 128 + SIGKILL);
	snprintf(live, sizeof live, "%s.live", d.path);
	snprintf(json, sizeof json, "%s/run.json", d.dir);
	struct tt_run r;
	TT_RUN(&r, "convert", live, "-o", json);
	free(r.out);
	assert_int_equal(r.status, 0);
	cJSON *root = tt_json_load(json);
	const cJSON *seq = tt_json_find(root, "i", "seq");
	if (!seq)
		fail_msg("no instant named \"seq\" in %s: %s", json, tt_h_read(json));
	cJSON_Delete(root);
	tt_rmdir(d.dir);
}

/* ---- signals ---- */

/* A program started with SIGSEGV ignored (as by `nohup`-like wrappers, across exec)
 * that faults dies of it, as it does without ticktrace, after the trace is
 * written (item 9). */
static void test_fault_with_ignored_signal_dies(void **state)
{
	(void)state;
	struct tt_h_dir d;
	char script[512];
	tt_h_dir_make(&d);
	snprintf(script, sizeof script, "trap '' SEGV; exec '%s' crash segv 1000", tt_h_prog);
	struct tt_child c;
	assert_int_equal(tt_child_spawn(&c, "/bin/sh", TT_H(d.out), TT_H("-c", script), NULL), 0);
	int status = tt_child_wait(&c, 30);
	if (status != TT_H_FAULT_STATUS && !(TT_H_FAULT_STATUS == TT_H_SOME_SIGNAL && status > 128))
		fail_msg("status %d, not %d (-1: it looped at its fault)", status, 128 + SIGSEGV);
	struct tt_file f;
	assert_int_equal(tt_file_open(&f, d.path), 0);
	assert_int_equal(f.header.crash_signal, SIGSEGV);
	tt_file_close(&f);
	tt_rmdir(d.dir);
}

/* TICKTRACE_DUMP_SIGNAL naming a crash signal, or one that takes no handler, is
 * refused with a word, and a real fault still ends the program (item 10). */
static void test_dump_signal_refuses_crash_signals(void **state)
{
	(void)state;
	struct tt_h_dir d;
	tt_h_dir_make(&d);
	static const char *const crash[] = {"TICKTRACE_DUMP_SIGNAL=11", "TICKTRACE_DUMP_SIGNAL=7",
					    "TICKTRACE_DUMP_SIGNAL=4"};
	for (size_t i = 0; i < sizeof crash / sizeof crash[0]; i++)
		tt_h_expect_run(TT_H(crash[i], d.out), TT_H("crash", "segv", "100"), d.err, TT_H_FAULT_STATUS,
				"is not a signal ticktrace can take");
	static const char *const unhandled[] = {"TICKTRACE_DUMP_SIGNAL=9", "TICKTRACE_DUMP_SIGNAL=19"};
	for (size_t i = 0; i < sizeof unhandled / sizeof unhandled[0]; i++)
		tt_h_expect_run(TT_H(unhandled[i], d.out), TT_H("seq", "1", "100"), d.err, 0,
				"is not a signal ticktrace can take");
	tt_rmdir(d.dir);
}

/* ---- FIFOs and devices ---- */

/* TICKTRACE_OUT a FIFO that no one reads: the program ends, and says why; a FIFO that
 * is read gets the stream, without a false error; `ticktrace info` on a FIFO that no
 * one writes refuses it rather than waiting (item 11). */
static void test_fifo_outputs(void **state)
{
	(void)state;
	char dir[64], fifo[128], out[160], err[160], copy[160];
	tt_tmpdir(dir, sizeof dir);
	snprintf(fifo, sizeof fifo, "%s/run.ttr", dir);
	snprintf(out, sizeof out, "TICKTRACE_OUT=%s", fifo);
	snprintf(err, sizeof err, "%s/stderr", dir);
	snprintf(copy, sizeof copy, "%s/copy.ttr", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	static const char *const modes[] = {"TICKTRACE_MODE=stop", "TICKTRACE_MODE=stream"};
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		tt_h_expect_run(TT_H(modes[i], out), TT_H("seq", "1", "100"), err, 0, "Broken pipe");

	/* A reader: the stream goes through whole, and no error is said. The FIFO is open
	 * at both ends before the program starts: a reader child that opened it only once
	 * scheduled could come after the program had found no reader and left, then wait
	 * in open for a writer that never came (the test hung now and then). The test's own
	 * write end keeps the reader from an end of file before the program wrote. */
	int rd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(rd >= 0);
	int wr = open(fifo, O_WRONLY | O_CLOEXEC);
	assert_true(wr >= 0);
	pid_t reader = fork();
	if (reader == 0) {
		close(wr);
		int to = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		char buf[65536];
		ssize_t n;
		if (fcntl(rd, F_SETFL, 0) < 0 || to < 0)
			_exit(1);
		while ((n = read(rd, buf, sizeof buf)) > 0)
			if (write(to, buf, (size_t)n) != n)
				_exit(1);
		_exit(n < 0);
	}
	close(rd);
	int status = tt_h_run(TT_H(out, "TICKTRACE_MODE=stream"), TT_H("seq", "1", "100"), err, NULL, 0, 30);
	close(wr); /* the reader's end of file, once it read what the program wrote */
	int reader_status;
	assert_int_equal(waitpid(reader, &reader_status, 0), reader);
	assert_true(WIFEXITED(reader_status) && WEXITSTATUS(reader_status) == 0);
	assert_int_equal(status, 0);
	if (tt_h_read(err)[0])
		fail_msg("mode stream to a FIFO said: %s", tt_h_read(err));
	struct tt_file f;
	assert_int_equal(tt_file_open(&f, copy), 0);
	assert_int_equal(f.records, 200);
	tt_file_close(&f);

	/* No writer: refused at once. */
	struct tt_child c;
	const char *tool = getenv("TT_TEST_TOOL");
	assert_int_equal(tt_child_spawn(&c, tool, TT_H("X=1"), TT_H("info", fifo), err), 0);
	assert_int_equal(tt_child_wait(&c, 30), 1);
	tt_h_expect_text(err, "not a regular file");
	tt_rmdir(dir);
}

/* TICKTRACE_SPIKE_THRESHOLDS naming a device or a FIFO: said, and the program runs
 * (it never reached main, growing without end, item 12). */
static void test_thresholds_from_a_device(void **state)
{
	(void)state;
	struct tt_h_dir d;
	char fifo[128], from_fifo[160];
	tt_h_dir_make(&d);
	snprintf(fifo, sizeof fifo, "%s/thresholds", d.dir);
	snprintf(from_fifo, sizeof from_fifo, "TICKTRACE_SPIKE_THRESHOLDS=%s", fifo);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	const char *const sources[] = {"TICKTRACE_SPIKE_THRESHOLDS=/dev/zero", from_fifo};
	for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++)
		tt_h_expect_run(TT_H(sources[i], d.out, "TICKTRACE_MODE=stream", "TICKTRACE_SPIKES=stderr"),
				TT_H("seq", "1", "100"), d.err, 0, "not a regular file");
	tt_rmdir(d.dir);
}

/* ---- files planted where ticktrace writes ---- */

/* A file "another user" planted at `path` (0666, world-writable), with a second name
 * that keeps it after it is replaced. */
static void tt_h_plant(const char *path, const char *keep)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "planted\n", 8), 8);
	fchmod(fd, 0666);
	/* Planted before the run began, a second before: within the clock tick of its
	 * start (files are stamped by the coarse clock) it would be judged another
	 * process's of the run's time, and the trace put beside it (once in three runs
	 * of the whole suite here, load ~25). */
	struct timespec before[2];
	clock_gettime(CLOCK_REALTIME, &before[0]);
	before[0].tv_sec -= 1;
	before[1] = before[0];
	assert_int_equal(futimens(fd, before), 0);
	close(fd);
	assert_int_equal(link(path, keep), 0);
}

static void tt_h_expect_untouched(const char *keep)
{
	const char *text = tt_h_read(keep);
	if (strcmp(text, "planted\n") != 0)
		fail_msg("the planted file %s was written: %.40s", keep, text);
}

/* A file of ticktrace's at `path`: new, and no one else's to read (mode 0600). */
static void tt_h_expect_own(const char *path)
{
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
}

/* The stream file and the spike log are new files renamed into place, the live file
 * a new one beside what is there, never a file or link planted there written through; a symlink at a stream's
 * TICKTRACE_OUT no longer turns recording off (items 14, 15, 19). */
static void test_planted_files_are_replaced(void **state)
{
	(void)state;
	char dir[64], path[128], keep[160], out[160], live[160], spikes[160], spikes_set[192];
	tt_tmpdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/run.ttr", dir);
	snprintf(keep, sizeof keep, "%s/planted", dir);
	snprintf(out, sizeof out, "TICKTRACE_OUT=%s", path);

	tt_h_plant(path, keep);
	assert_int_equal(tt_h_run(TT_H(out, "TICKTRACE_MODE=stream"), TT_H("seq", "1", "100"), NULL, NULL, 0, 30), 0);
	tt_h_expect_untouched(keep);
	tt_h_expect_own(path);
	tt_h_converts(dir, path);
	unlink(path);
	unlink(keep);

	/* A file planted at the live file's name: left as it is, the run's own beside it
	 * (a killed run's, or another's: never replaced), which a SIGKILL leaves. */
	char beside[192];
	snprintf(live, sizeof live, "%s.live", path);
	tt_h_plant(live, keep);
	struct tt_child c;
	assert_int_equal(tt_child_spawn(&c, tt_h_prog, TT_H(out, "TICKTRACE_LIVE=1"), TT_H("values"), NULL), 0);
	char line[64];
	if (!fgets(line, sizeof line, c.out))
		kill(c.pid, SIGKILL);
	snprintf(beside, sizeof beside, "%s/run.%d.ttr.live", dir, (int)c.pid);
	struct stat st;
	int made = lstat(beside, &st);
	kill(c.pid, SIGKILL);
	assert_int_equal(tt_child_wait(&c, 30), 128 + SIGKILL);
	assert_int_equal(made, 0);
	tt_h_expect_own(beside);
	tt_h_expect_untouched(live);
	tt_h_expect_untouched(keep);
	unlink(beside);
	unlink(live);
	unlink(keep);

	/* Symlinks at the stream's path and the spike log's: replaced, never followed. */
	snprintf(spikes, sizeof spikes, "%s/spikes.log", dir);
	snprintf(spikes_set, sizeof spikes_set, "TICKTRACE_SPIKES=%s", spikes);
	tt_h_plant(keep, path); /* (keep is the victim; path, unlinked below, a second name) */
	unlink(path);
	assert_int_equal(symlink(keep, path), 0);
	assert_int_equal(symlink(keep, spikes), 0);
	assert_int_equal(tt_h_run(TT_H(out, "TICKTRACE_MODE=stream", spikes_set), TT_H("seq", "1", "100"),
				  NULL, NULL, 0, 30), 0);
	tt_h_expect_untouched(keep);
	tt_h_expect_own(path);
	tt_h_expect_own(spikes);
	struct tt_file f;
	assert_int_equal(tt_file_open(&f, path), 0);
	assert_int_equal(f.records, 200); /* recording was on */
	tt_file_close(&f);
	tt_rmdir(dir);
}

/* TICKTRACE_REPORT naming a link of the user's to a device (/dev/stdout,
 * /proc/self/fd/1) writes there, and the link stays; in mode stream it is refused
 * with a word, not ignored (item 16). */
static void test_report_to_a_device(void **state)
{
	(void)state;
	struct tt_h_dir d;
	char link_path[128], report[192];
	tt_h_dir_make(&d);
	snprintf(link_path, sizeof link_path, "%s/stdout", d.dir);
	snprintf(report, sizeof report, "TICKTRACE_REPORT=%s", link_path);
	assert_int_equal(symlink("/proc/self/fd/1", link_path), 0);
	char line[256];
	assert_int_equal(tt_h_run(TT_H(d.out, report), TT_H("seq", "1", "100"), d.err, line, sizeof line, 30), 0);
	if (!strstr(line, "ticktrace: pid "))
		fail_msg("the report did not reach standard output: \"%s\"; stderr: %s", line, tt_h_read(d.err));
	struct stat st;
	assert_int_equal(lstat(link_path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));

	tt_h_expect_run(TT_H(d.out, report, "TICKTRACE_MODE=stream"), TT_H("seq", "1", "100"), d.err, 0,
			"TICKTRACE_REPORT needs TICKTRACE_MODE stop or ring");

	/* Standard output a file (`prog > file`): the report goes on in that file, after
	 * what the program printed, as its own output would; the names stay links. */
	static const char *const descriptors[] = {"/proc/self/fd/1", "/dev/stdout"};
	char output[160], script[512];
	snprintf(output, sizeof output, "%s/output", d.dir);
	for (size_t i = 0; i < sizeof descriptors / sizeof descriptors[0]; i++) {
		snprintf(report, sizeof report, "TICKTRACE_REPORT=%s", descriptors[i]);
		snprintf(script, sizeof script, "echo printed before > '%s'; exec '%s' seq 1 100 >> '%s'",
			 output, tt_h_prog, output);
		struct tt_child c;
		assert_int_equal(tt_child_spawn(&c, "/bin/sh", TT_H(d.out, report), TT_H("-c", script), d.err), 0);
		assert_int_equal(tt_child_wait(&c, 30), 0);
		const char *text = tt_h_read(output);
		if (strncmp(text, "printed before\n", 15) != 0 || !strstr(text, "ticktrace: pid "))
			fail_msg("%s: the report is not after the program's output in %s:\n%s\n(see %s)",
				 descriptors[i], output, text, d.err);
		assert_int_equal(lstat(descriptors[i], &st), 0);
		assert_true(S_ISLNK(st.st_mode));
	}
	tt_rmdir(d.dir);
}

/* ---- threads ---- */

/* Threads that record in every round of key destructors, the last one too, then a
 * thread on the same stack: each thread's events stay its own (item 6). */
static void test_events_in_the_last_destructor_round(void **state)
{
	(void)state;
	struct tt_h_dir d;
	tt_h_dir_make(&d);
	tt_h_expect_run(TT_H(d.out), TT_H("destructors", "4"), NULL, 0, NULL);
	struct tt_file f;
	assert_int_equal(tt_file_open(&f, d.path), 0);
	uint32_t numbers_seen = 0;
	for (size_t k = 0; k < f.nthreads; k++) {
		const struct tt_thread *t = &f.threads[k];
		uint64_t number = UINT64_MAX, ordinary = 0;
		for (size_t s = 0; s < t->nsections; s++)
			for (size_t i = 0; i + 1 < t->sections[s].count; i++) {
				if (TT_RECORD_KIND(tt_section_records(t, s)[i].word) != TT_REC_INSTANT_ARG)
					continue;
				uint64_t value = tt_section_records(t, s)[++i].tsc;
				if (number == UINT64_MAX)
					number = value >> 32;
				if (value >> 32 != number)
					fail_msg("thread %" PRIu32 " (tid %" PRIu32 ") holds events of thread "
						 "%" PRIu64 " and of thread %" PRIu64, t->index, t->tid,
						 number, value >> 32);
				ordinary += (uint32_t)value < 10;
			}
		if (ordinary) {
			assert_int_equal(ordinary, 10);
			numbers_seen++;
		}
	}
	assert_int_equal(numbers_seen, 4);
	tt_file_close(&f);
	tt_rmdir(d.dir);
}

/* ---- exec ---- */

/* A program that becomes another by exec: what it recorded before is in its file,
 * complete, in mode stop as in mode stream, through execl as through execvp (item 5). */
static void test_exec_keeps_the_trace(void **state)
{
	(void)state;
	struct tt_h_dir d;
	tt_h_dir_make(&d);
	static const char *const modes[] = {"TICKTRACE_MODE=stop", "TICKTRACE_MODE=stream"};
	static const char *const hows[] = {"execl", "execvp"};
	for (size_t i = 0; i < 2; i++) {
		tt_h_expect_run(TT_H(modes[i], d.out), TT_H("exec", "1000", hows[i]), NULL, 0, NULL);
		struct tt_file f;
		if (tt_file_open(&f, d.path) < 0)
			fail_msg("%s, %s: no trace", modes[i], hows[i]);
		assert_false(f.cut_short);
		assert_int_equal(f.records, 2000);
		tt_file_close(&f);
		unlink(d.path);
	}
	tt_rmdir(d.dir);
}

/* The number of "seq" events numbered `number` (argument >> 32) in a file. */
static uint64_t tt_h_seq_count(const struct tt_file *f, uint32_t number)
{
	uint64_t n = 0;
	for (size_t k = 0; k < f->nthreads; k++)
		for (size_t s = 0; s < f->threads[k].nsections; s++) {
			const struct tt_events *sec = &f->threads[k].sections[s];
			const struct tt_record *records = tt_section_records(&f->threads[k], s);
			for (size_t i = 0; i + 1 < sec->count; i++)
				n += TT_RECORD_KIND(records[i].word) == TT_REC_INSTANT_ARG &&
				     records[i + 1].tsc >> 32 == number;
		}
	return n;
}

/* A program that becomes a daemon (daemon(): a fork whose parent leaves by _exit,
 * running no exit handler): what it recorded before is in its file, whole, in mode
 * stop as in mode stream, and the daemon records into a file of its own (item 5). */
static void test_daemon_keeps_the_trace(void **state)
{
	(void)state;
	struct tt_h_dir d;
	tt_h_dir_make(&d);
	static const char *const modes[] = {"TICKTRACE_MODE=stop", "TICKTRACE_MODE=stream"};
	for (size_t i = 0; i < 2; i++) {
		char line[32];
		assert_int_equal(tt_h_run(TT_H(modes[i], d.out), TT_H("daemon", "1000"), NULL, line,
					  sizeof line, 30), 0);
		int child = atoi(line);
		assert_true(child > 0);
		/* The daemon is no child of this test's to wait for: its file is whole (a
		 * stream's has its END) when it has ended. */
		char child_path[192];
		snprintf(child_path, sizeof child_path, "%s.%d", d.path, child);
		struct tt_file f;
		for (int tries = 0; tries < 1000; tries++, usleep(10000)) {
			if (access(child_path, F_OK) < 0)
				continue;
			/* (read while it is written, it may not parse yet: the end says) */
			bool whole = tt_file_open(&f, child_path) == 0 && !f.cut_short;
			tt_file_close(&f);
			if (whole)
				break;
		}
		if (tt_file_open(&f, d.path) < 0)
			fail_msg("%s: the daemon's parent left no trace", modes[i]);
		assert_false(f.cut_short);
		assert_int_equal(tt_h_seq_count(&f, 1), 1000);
		assert_int_equal(tt_h_seq_count(&f, 2), 0);
		tt_file_close(&f);
		if (tt_file_open(&f, child_path) < 0)
			fail_msg("%s: the daemon left no trace %s", modes[i], child_path);
		assert_false(f.cut_short);
		assert_int_equal(tt_h_seq_count(&f, 1), 0);
		assert_int_equal(tt_h_seq_count(&f, 2), 1000);
		tt_file_close(&f);
		unlink(d.path);
		unlink(child_path);
	}
	tt_rmdir(d.dir);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_hostile PROG\n");
		return 2;
	}
	tt_h_prog = argv[1];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sigkill_at_random_moments),
		cmocka_unit_test(test_sites_named_after_sigkill),
		cmocka_unit_test(test_fault_with_ignored_signal_dies),
		cmocka_unit_test(test_dump_signal_refuses_crash_signals),
		cmocka_unit_test(test_fifo_outputs),
		cmocka_unit_test(test_thresholds_from_a_device),
		cmocka_unit_test(test_planted_files_are_replaced),
		cmocka_unit_test(test_report_to_a_device),
		cmocka_unit_test(test_exec_keeps_the_trace),
		cmocka_unit_test(test_daemon_keeps_the_trace),
		cmocka_unit_test(test_events_in_the_last_destructor_round),
	};
	const char *only = getenv("TT_TEST_ONLY"); /* a pattern: run the tests it names */
	if (only)
		cmocka_set_test_filter(only);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
