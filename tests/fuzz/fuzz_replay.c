/* Runs the fuzz target (fuzz_reader.c) without libFuzzer, under whatever sanitizers
 * the build has: over a seed corpus it makes itself from the demo trace and from
 * files of modes stream (THREAD_TOTALS, runs of lost events), ring (wrapped, crashed),
 * live (chunks; threads and sites not yet described) and a snapshot (each whole, cut at every
 * section boundary and in the middle of each section, counts that lie, a wrong
 * version), and random bytes; then over every file named on the command line
 * (the corpus libFuzzer grew, in tests/fuzz/corpus). With --write-seeds DIR it writes
 * the seed corpus there instead, to start libFuzzer from.
 * Exit status: 0 every input ran (an error message per input is expected), 1 an
 * input could not be read; a crash ends it with the sanitizer's report. */
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tt_demo.h"
#include "tt_tw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct tt_seeds {
	const char *dir; /* write here, or run when NULL */
	int count;
};

static void tt_seed(struct tt_seeds *s, const void *data, size_t size)
{
	if (s->dir) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/seed-%03d.ttr", s->dir, s->count);
		if (tt_tw_save(path, data, size) < 0)
			fprintf(stderr, "cannot write %s\n", path);
	} else {
		LLVMFuzzerTestOneInput(data, size);
	}
	s->count++;
}

/* The demo file with one 64-bit field replaced. */
static void tt_seed_patched(struct tt_seeds *s, const struct tt_tw *w, uint64_t at, uint64_t v)
{
	char *copy = malloc(w->size);
	memcpy(copy, w->data, w->size);
	if (at + 8 <= w->size)
		memcpy(copy + at, &v, 8);
	tt_seed(s, copy, w->size);
	free(copy);
}

/* The spike detector's notes: every kind on nested scopes, a description, and the
 * same file with each record's word patched in turn to a DESCRIBE of the longest
 * text, whose TEXT records do not follow. */
static void tt_seed_notes(struct tt_seeds *s)
{
	const struct tt_record rec[] = {
		TT_TW_REC(TT_REC_BEGIN, S_MAIN, 2000),
		TT_TW_REC(TT_REC_THRESHOLD, 1, 2001),
		TT_TW_REC(TT_REC_CHILDREN_THRESHOLD, 0, 2002),
		TT_TW_REC(TT_REC_FUNC_ENTER, 0x401000, 2003),
		TT_TW_REC(TT_REC_IGNORE_CHILDREN, 0, 2004),
		TT_TW_REC(TT_REC_DESCRIBE, 20, 2005),
		TT_TW_REC(TT_REC_TEXT, 0x41414141, 0x4141414141414141),
		TT_TW_REC(TT_REC_TEXT, 0, 0x4242),
		TT_TW_REC(TT_REC_BEGIN, S_CHILD, 2006),
		TT_TW_REC(TT_REC_IGNORE, 0, 2007),
		TT_TW_REC(TT_REC_END, 0, 9000),
		TT_TW_REC(TT_REC_FUNC_EXIT, 0x401000, 9001),
		TT_TW_REC(TT_REC_END, 0, 9002),
	};
	struct tt_tw w;
	if (tt_tw_open_memory(&w) < 0)
		return;
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "notes");
	tt_tw_sites(&w, tt_demo_sites, tt_demo_nsites);
	tt_tw_thread(&w, 0, 101, "notes", sizeof(rec) / sizeof(rec[0]), 0);
	tt_tw_events(&w, 0, 0, rec, sizeof(rec) / sizeof(rec[0]));
	tt_tw_end(&w);
	if (tt_tw_close(&w) == 0) {
		tt_seed(s, w.data, w.size);
		/* the EVENTS section is the one before END: its header, its info, the records */
		uint64_t records = w.sections[w.nsections - 2] + 16 + sizeof(struct tt_events_info);
		for (size_t i = 0; i < sizeof(rec) / sizeof(rec[0]); i++)
			tt_seed_patched(s, &w, records + 16 * i + 8,
					TT_RECORD_WORD(TT_REC_DESCRIBE, TT_DESCRIBE_MAX));
	}
	tt_tw_free(&w);
}

/* A file whole, then cut at every section boundary and in the middle of each section,
 * with a section size and a count or index that lie, a wrong version, and its first
 * record's TSC at the end of time. */
static void tt_seed_damaged(struct tt_seeds *s, const struct tt_tw *w)
{
	tt_seed(s, w->data, w->size);
	/* Section boundaries: walk the section headers the way the format lays them out,
	 * up to a live file's chunks. */
	struct tt_file_header h;
	memcpy(&h, w->data, sizeof(h));
	uint64_t end = h.flags & TT_FILE_LIVE ? h.live_sections_end : w->size;
	for (uint64_t off = sizeof(struct tt_file_header); off + 16 <= end;) {
		struct tt_section_header sh;
		memcpy(&sh, w->data + off, sizeof(sh));
		tt_seed(s, w->data, off);                      /* cut before the section */
		tt_seed(s, w->data, off + 16 + sh.size / 2);   /* cut inside it */
		tt_seed_patched(s, w, off + 8, sh.size + 16); /* a size that lies */
		tt_seed_patched(s, w, off + 8, UINT64_MAX);  /* one that overflows */
		tt_seed_patched(s, w, off + 16, UINT64_C(1) << 40); /* a count or index that lies */
		off += 16 + TT_SECTION_PADDED(sh.size);
	}
	tt_seed_patched(s, w, 8, 2);                     /* version 2 (and header_size 0) */
	/* the first record's TSC at the end of time: times saturate (this hung the merge) */
	struct tt_section_header first;
	for (uint64_t off = sizeof(struct tt_file_header); off + 16 <= end;
	     off += 16 + TT_SECTION_PADDED(first.size)) {
		memcpy(&first, w->data + off, sizeof(first));
		if (first.type == TT_SEC_EVENTS) {
			tt_seed_patched(s, w, off + 32, UINT64_MAX);
			break;
		}
	}
}

/* Patches `size` bytes at `at` of a file that tt_tw holds in memory. */
static void tt_patch(struct tt_tw *w, uint64_t at, const void *bytes, size_t size)
{
	if (at + size <= w->size)
		memcpy(w->data + at, bytes, size);
}

/* Where field `field` of section number `k` (as tt_tw wrote them) is. */
#define TT_AT(w, k, type, field) ((w)->sections[k] + 16 + offsetof(type, field))

/* The file of a mode stream run: THREAD_TOTALS with every cause of drops, two runs of
 * lost events that close and open scopes, functions, notes. */
static void tt_seed_stream(struct tt_tw *w, struct tt_file_header *h)
{
	static const uint64_t funcs[] = {0x401000, 0x402000};
	static const struct tt_record first[] = {
		TT_TW_REC(TT_REC_BEGIN, S_MAIN, 2000),
		TT_TW_REC(TT_REC_FUNC_ENTER, 0x401000, 2100),
		TT_TW_REC(TT_REC_THRESHOLD, 50, 2150),
		TT_TW_REC(TT_REC_DESCRIBE, 5, 2160),
		TT_TW_REC(TT_REC_TEXT, 0, 0x6f6c6c6568),
		TT_TW_REC(TT_REC_BEGIN, S_CHILD, 2200),
		TT_TW_REC(TT_REC_DROPPED, 7, 2300),
		TT_TW_REC(TT_REC_VALUE, TT_GAP_DEPTHS(1, 2), 2900),
		TT_TW_REC(TT_REC_INSTANT, S_WAKE, 3000),
		TT_TW_REC(TT_REC_END, 0, 3100),
		TT_TW_REC(TT_REC_END, 0, 3200),
		TT_TW_REC(TT_REC_FUNC_EXIT, 0x401000, 3300),
	};
	static const struct tt_record second[] = {
		TT_TW_REC(TT_REC_COUNTER, S_QUEUE, 3400),
		TT_TW_REC(TT_REC_VALUE, 0, 9),
		/* (as many lost as said to close: more than are open) */
		TT_TW_REC(TT_REC_DROPPED, TT_GAP_DEPTH_MAX, 3500),
		TT_TW_REC(TT_REC_VALUE, TT_GAP_DEPTHS(TT_GAP_DEPTH_MAX, 0), 3600),
		TT_TW_REC(TT_REC_FUNC_ENTER, 0x402000, 3700),
		TT_TW_REC(TT_REC_CHILDREN_THRESHOLD, 10, 3710),
		TT_TW_REC(TT_REC_BEGIN, S_WORK, 3800),
	};
	h->flags |= TT_FILE_STREAMED;
	tt_tw_header(w, h);
	tt_tw_process(w, 4242, "stream");
	tt_tw_sites(w, tt_demo_sites, tt_demo_nsites);
	tt_tw_funcs(w, funcs, 2);
	tt_tw_thread(w, 0, 101, "main", 0, 0);
	tt_tw_thread(w, 1, 102, "tt-drain", 0, 0);
	tt_tw_events(w, 0, 0, first, sizeof(first) / sizeof(first[0]));
	tt_tw_events(w, 0, sizeof(first) / sizeof(first[0]), second, sizeof(second) / sizeof(second[0]));
	struct tt_thread_info totals = {.index = 0, .tid = 101,
					.events = (sizeof(first) + sizeof(second)) / sizeof(first[0]),
					.dropped = {1, 1, 10, 1, 2}, .flags = TT_THREAD_EXITED};
	tt_tw_thread_totals(w, &totals, "main, renamed");
	tt_tw_thread_totals(w, &(struct tt_thread_info){.index = 1, .tid = 102,
							 .flags = TT_THREAD_RUNTIME}, "tt-drain");
	tt_tw_end(w);
}

/* Mode ring: a wrapped thread whose records begin inside scopes (an END, a function's
 * exit, an ENDBEGIN), written at a crash. */
static void tt_seed_ring(struct tt_tw *w, struct tt_file_header *h)
{
	static const struct tt_record rec[] = {
		TT_TW_REC(TT_REC_END, 0, 2000),
		TT_TW_REC(TT_REC_FUNC_EXIT, 0x401000, 2100),
		TT_TW_REC(TT_REC_ENDBEGIN, S_NEXT, 2200),
		TT_TW_REC(TT_REC_BEGIN_ARG, S_CHILD, 2300),
		TT_TW_REC(TT_REC_VALUE, 0, 5),
		TT_TW_REC(TT_REC_FLOW_OUT, 0, 2400),
		TT_TW_REC(TT_REC_VALUE, 0, 0x42),
		TT_TW_REC(TT_REC_IGNORE_CHILDREN, 0, 2450),
		TT_TW_REC(TT_REC_END, 0, 2500),
		TT_TW_REC(TT_REC_FUNC_EXIT, 0x401000, 2550),
		TT_TW_REC(TT_REC_END, 0, 2600),
		TT_TW_REC(TT_REC_INSTANT_ARG, S_DROP, 2700),
		TT_TW_REC(TT_REC_VALUE, 0, 1),
		TT_TW_REC(TT_REC_BEGIN, S_MAIN, 2800),
	};
	static const uint64_t funcs[] = {0x401000};
	h->flags |= TT_FILE_RING | TT_FILE_CRASHED;
	h->crash_signal = 11;
	h->unregistered_dropped = 3;
	tt_tw_header(w, h);
	tt_tw_process(w, 4242, "ring");
	tt_tw_sites(w, tt_demo_sites, tt_demo_nsites);
	tt_tw_funcs(w, funcs, 1);
	tt_tw_thread(w, 0, 101, "main", sizeof(rec) / sizeof(rec[0]), 100);
	tt_tw_events(w, 0, 0, rec, sizeof(rec) / sizeof(rec[0]));
	tt_tw_end(w);
}

/* A live file (the run was killed) in mode ring: a thread's chunks out of order, and
 * a thread and a call site not described yet. */
static void tt_seed_live(struct tt_tw *w, struct tt_file_header *h)
{
	static const struct tt_record late[] = {
		TT_TW_REC(TT_REC_INSTANT, S_WAKE, 3000),
		TT_TW_REC(TT_REC_END, 0, 3100),
		TT_TW_REC(TT_REC_BEGIN, 0x9990, 3200),
	};
	static const struct tt_record early[] = {
		TT_TW_REC(TT_REC_END, 0, 1900),
		TT_TW_REC(TT_REC_BEGIN, S_MAIN, 2000),
		TT_TW_REC(TT_REC_FUNC_ENTER, 0x401000, 2100),
	};
	static const struct tt_record other[] = {
		TT_TW_REC(TT_REC_BEGIN, 0x9990, 2500),
		TT_TW_REC(TT_REC_COUNTER, 0x99a0, 2600),
		TT_TW_REC(TT_REC_VALUE, 0, 4),
	};
	h->flags |= TT_FILE_LIVE | TT_FILE_RING;
	tt_tw_header(w, h);
	tt_tw_process(w, 4242, "live");
	tt_tw_sites(w, tt_demo_sites, tt_demo_nsites);
	tt_tw_thread(w, 0, 101, "main", 0, 0);
	tt_tw_thread(w, 1, 102, "idle", 0, 0);
	tt_tw_live_chunk(w, 0, late, sizeof(late) / sizeof(late[0]));
	tt_tw_live_chunk(w, 7, other, sizeof(other) / sizeof(other[0]));
	tt_tw_live_chunk(w, 0, early, sizeof(early) / sizeof(early[0]));
}

/* A snapshot (TICKTRACE_SNAPSHOTS): its SNAPSHOT section after PROCESS (a spike with
 * its split, a thread whose window the ring cut), wrapped threads, a thread's states. */
static void tt_seed_snapshot(struct tt_tw *w, struct tt_file_header *h)
{
	static const struct tt_record spiked[] = {
		TT_TW_REC(TT_REC_BEGIN, S_WORK, 3000),
		TT_TW_REC(TT_REC_END, 0, 9000),
		TT_TW_REC(TT_REC_END, 0, 9500),
	};
	static const struct tt_record cut[] = {
		TT_TW_REC(TT_REC_END, 0, 2500),
		TT_TW_REC(TT_REC_BEGIN, S_NEXT, 2600),
	};
	static const struct tt_sched_state states[] = {
		{5000001000, 0, TT_SCHED_RUNNING}, {5000004000, 0, TT_SCHED_BLOCKED},
		{5000006000, 1, TT_SCHED_RUNNING},
	};
	const struct tt_snapshot_info info = {
		.kind = TT_SNAPSHOT_SPIKE, .number = 1, .from_tsc = 2000, .to_tsc = 10000,
		.begin_tsc = 3000, .end_tsc = 9000, .threshold_ns = 1000,
		.threshold_from = TT_THRESHOLD_FROM_GLOBAL, .has_split = 1, .on_cpu_ns = 4000,
		.blocked_ns = 2000,
	};
	const struct tt_snapshot_cut cuts[] = {{.thread_index = 1, .events = 40, .lost_from_tsc = 1500,
						.lost_to_tsc = 2400}};
	h->flags |= TT_FILE_RING | TT_FILE_SNAPSHOT;
	tt_tw_header(w, h);
	tt_tw_process(w, 4242, "snapshot");
	tt_tw_snapshot(w, &info, "work", cuts, 1);
	tt_tw_sites(w, tt_demo_sites, tt_demo_nsites);
	struct tt_thread_info t0 = {.index = 0, .tid = 101, .events = 3,
				    .flags = TT_THREAD_WRAPPED | TT_THREAD_SCHED};
	tt_tw_thread_info(w, &t0, "main");
	tt_tw_events(w, 0, 0, spiked, 3);
	tt_tw_sched(w, 0, 0, 5000001000, states, 3);
	struct tt_thread_info t1 = {.index = 1, .tid = 102, .events = 2, .flags = TT_THREAD_WRAPPED};
	t1.dropped[TT_DROP_OVERWRITTEN] = 40;
	tt_tw_thread_info(w, &t1, "noisy");
	tt_tw_events(w, 1, 0, cut, 2);
	tt_tw_end(w);
}

static void tt_seed_formats(struct tt_seeds *s)
{
	void (*const files[])(struct tt_tw *, struct tt_file_header *) = {
		tt_seed_stream, tt_seed_ring, tt_seed_live, tt_seed_snapshot,
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct tt_tw w;
		struct tt_file_header h;
		tt_tw_default_header(&h);
		if (tt_tw_open_memory(&w) < 0)
			return;
		files[i](&w, &h);
		if (tt_tw_close(&w) == 0) {
			tt_seed_damaged(s, &w);
			if (h.flags & TT_FILE_RING && !(h.flags & (TT_FILE_LIVE | TT_FILE_SNAPSHOT))) {
				/* as the runtime writes it: wrapped, its drops overwritten */
				uint64_t dropped[TT_DROP_CAUSES] = {[TT_DROP_OVERWRITTEN] = 100};
				uint32_t wrapped = TT_THREAD_WRAPPED;
				tt_patch(&w, TT_AT(&w, 4, struct tt_thread_info, dropped), dropped, sizeof(dropped));
				tt_patch(&w, TT_AT(&w, 4, struct tt_thread_info, flags), &wrapped, sizeof(wrapped));
				tt_seed_damaged(s, &w);
			}
			if (h.flags & TT_FILE_LIVE) {
				/* the first chunk the one its thread was recording into */
				uint32_t size = TT_LIVE_CHUNK_SIZE;
				tt_patch(&w, w.live_chunks_at + offsetof(struct tt_live_chunk, size), &size,
					 sizeof(size));
				tt_seed(s, w.data, w.size);
			}
		}
		tt_tw_free(&w);
	}
}

static int tt_make_seeds(struct tt_seeds *s)
{
	tt_seed_notes(s);
	tt_seed_formats(s);
	char tmp[] = "/tmp/tt-fuzz-XXXXXX";
	if (!mkdtemp(tmp))
		return -1;
	char path[64];
	snprintf(path, sizeof(path), "%s/demo.ttr", tmp);
	struct tt_tw w = {0};
	FILE *fp = NULL;
	struct stat st;
	int rc = -1;
	if (tt_demo_write(path) < 0 || stat(path, &st) < 0 || !(fp = fopen(path, "rb")))
		goto out;
	w.size = (size_t)st.st_size;
	w.data = malloc(w.size);
	if (fread(w.data, 1, w.size, fp) != w.size)
		goto out;
	tt_seed_damaged(s, &w);
	unsigned seed = 1;
	for (int i = 0; i < 8; i++) {                     /* random bytes, some with the magic */
		char junk[512];
		for (size_t k = 0; k < sizeof(junk); k++)
			junk[k] = (char)(rand_r(&seed) >> 7);
		if (i % 2)
			memcpy(junk, TT_FILE_MAGIC, TT_FILE_MAGIC_LEN);
		tt_seed(s, junk, sizeof(junk));
	}
	rc = 0;
out:
	if (fp)
		fclose(fp);
	free(w.data);
	unlink(path);
	rmdir(tmp);
	return rc;
}

static int tt_replay_file(const char *path)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return -1;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n == cap && !(buf = realloc(buf, cap = cap ? 2 * cap : 65536)))
			return -1;
		size_t r = fread(buf + n, 1, cap - n, fp);
		if (r == 0)
			break;
		n += r;
	}
	fclose(fp);
	LLVMFuzzerTestOneInput((const uint8_t *)buf, n);
	free(buf);
	return 0;
}

/* A file, or every file in a directory. */
static int tt_replay(const char *path, int *count)
{
	DIR *d = opendir(path);
	if (!d) {
		(*count)++;
		return tt_replay_file(path);
	}
	struct dirent *de;
	int rc = 0;
	char sub[4096];
	while (rc == 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		rc = tt_replay(sub, count);
	}
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	struct tt_seeds s = {0};
	if (argc == 3 && strcmp(argv[1], "--write-seeds") == 0) {
		s.dir = argv[2];
		return tt_make_seeds(&s) == 0 ? 0 : 1;
	}
	if (tt_make_seeds(&s) < 0) {
		fprintf(stderr, "fuzz_replay: cannot make the seed corpus\n");
		return 1;
	}
	int replayed = 0;
	for (int i = 1; i < argc; i++) {
		if (tt_replay(argv[i], &replayed) < 0) {
			fprintf(stderr, "fuzz_replay: cannot read %s\n", argv[i]);
			return 1;
		}
	}
	printf("fuzz_replay: %d seeds and %d corpus files ran without a crash\n", s.count, replayed);
	return 0;
}
