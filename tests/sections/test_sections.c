/* The writers' floor (src/sections/): struct tt__out onto a sink in memory. Every byte
 * lands where the file's offset says, whichever way it went (buffered, put directly,
 * a full buffer put first); a sink's error stops what follows; the sites and functions
 * records name, each described once. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sections/sections.h"

enum { TT_CAP = 1 << 20 };
static struct tt__out out;

/* Pieces of sizes that take each way into the file: small ones buffered, one large
 * enough to go past the buffer, small ones that fill the buffer until a piece no
 * longer fits. */
static void test_offsets(void **state)
{
	(void)state;
	static char file[TT_CAP], expected[TT_CAP];
	struct tt__mem_sink sink;
	tt__mem_sink(&sink, file, sizeof file);
	tt__out_to(&out, &sink.sink);
	/* (4096 bytes and more go directly; 17 of 4000 pass the 64 KiB buffer) */
	static const size_t sizes[] = {3, 70000, 10, 4095, 4000, 4000, 4000, 4000, 4000, 4000, 4000,
				       4000, 4000, 4000, 4000, 4000, 4000, 4000, 4000, 4000, 4000,
				       1, 65536, 17, 4096};
	size_t at = 0;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		char *piece = malloc(sizes[i]);
		assert_non_null(piece);
		for (size_t j = 0; j < sizes[i]; j++)
			piece[j] = (char)(i * 31 + j % 251 + 1);
		memcpy(expected + at, piece, sizes[i]);
		tt__out(&out, piece, sizes[i]);
		free(piece); /* (what the buffer keeps is a copy) */
		at += sizes[i];
		assert_int_equal(out.offset, at);
	}
	tt__out_flush(&out);
	assert_int_equal(out.err, 0);
	assert_int_equal(out.len, 0);
	assert_memory_equal(file, expected, at);
	for (size_t i = at; i < sizeof file; i++)
		if (file[i])
			fail_msg("byte %zu, past the %zu written, is %d", i, at, file[i]);
}

/* A section is its header, its body, and zeros to 8 bytes; END one such. */
static void test_section(void **state)
{
	(void)state;
	static char file[4096];
	struct tt__mem_sink sink;
	tt__mem_sink(&sink, file, sizeof file);
	tt__out_to(&out, &sink.sink);
	memset(file, 0x55, sizeof file);
	struct tt_end_info end = {.threads = 3, .records = 7, .sites = 2};
	tt__out_end(&out, &end);
	tt__out_flush(&out);
	struct tt_section_header h;
	memcpy(&h, file, sizeof h);
	assert_int_equal(h.type, TT_SEC_END);
	assert_int_equal(h.size, sizeof end);
	assert_memory_equal(file + sizeof h, &end, sizeof end);
	assert_int_equal(out.offset, sizeof h + TT_SECTION_PADDED(sizeof end));
	for (size_t i = sizeof h + sizeof end; i < out.offset; i++)
		assert_int_equal(file[i], 0);
}

/* Past the sink's end: -ENOSPC, and nothing put after it. */
static void test_full(void **state)
{
	(void)state;
	static char file[8192];
	struct tt__mem_sink sink;
	tt__mem_sink(&sink, file, 5000);
	tt__out_to(&out, &sink.sink);
	static char bytes[6000];
	memset(bytes, 'x', sizeof bytes);
	tt__out(&out, bytes, 100);
	tt__out(&out, bytes, sizeof bytes);
	assert_int_equal(out.err, -ENOSPC);
	sink.cap = sizeof file; /* (room again: still nothing more) */
	tt__out(&out, "y", 1);
	tt__out_flush(&out);
	assert_int_equal(out.err, -ENOSPC);
	for (size_t i = 0; i < sizeof file; i++)
		if (file[i])
			fail_msg("byte %zu was put after the error", i);
}

static const struct tt_callsite *tt_site_here(uint64_t address, void *unused)
{
	(void)unused;
	return (const struct tt_callsite *)(uintptr_t)address;
}

static void tt_func(void)
{
}

/* Each site and function the records name is in the set once, a function tagged (a
 * VALUE record's value, a site's END, names nothing); the sections say each once:
 * SITES with its name, file and line, ARG_NAMES for a named argument, FUNCS. */
static void test_site_sections(void **state)
{
	(void)state;
	static const struct tt_callsite one = {"one", "a.c", "f", 7, 0, NULL};
	static const struct tt_callsite two = {"two", "b.c", "g", 9, TT__SITE_ARG_NAME, "bytes"};
	uint64_t func = (uint64_t)(uintptr_t)tt_func;
	const struct tt_record records[] = {
		{1, TT_RECORD_WORD(TT_REC_BEGIN, (uintptr_t)&one)},
		{2, TT_RECORD_WORD(TT_REC_BEGIN_ARG, (uintptr_t)&two)},
		{(uint64_t)(uintptr_t)&one + 16, TT_RECORD_WORD(TT_REC_VALUE, 0)},
		{3, TT_RECORD_WORD(TT_REC_FUNC_ENTER, func)},
		{4, TT_RECORD_WORD(TT_REC_FUNC_EXIT, func)},
		{5, TT_RECORD_WORD(TT_REC_END, 0)},
		{6, TT_RECORD_WORD(TT_REC_BEGIN, (uintptr_t)&one)},
	};
	struct tt__site_set set = {0}, fresh = {0};
	assert_non_null(tt__sites_add(&set, &fresh, records, records + 7, 0, NULL));
	assert_int_equal(set.count, 3);
	assert_int_equal(set.funcs, 1);
	assert_int_equal(fresh.count, 3);
	assert_int_equal(tt__site_set_add(&set, func | TT__FUNC_TAG), 0);
	static char file[4096];
	struct tt__mem_sink sink;
	tt__mem_sink(&sink, file, sizeof file);
	tt__out_to(&out, &sink.sink);
	tt__out_site_sections(&out, &set, 0, 0, tt_site_here, NULL);
	tt__out_flush(&out);
	assert_int_equal(out.err, 0);
	const char *p = file;
	struct tt_section_header h;
	memcpy(&h, p, sizeof h);
	assert_int_equal(h.type, TT_SEC_SITES);
	uint64_t count;
	memcpy(&count, p + sizeof h, sizeof count);
	assert_int_equal(count, 2);
	const char *entry = p + sizeof h + sizeof count;
	for (uint64_t i = 0; i < count; i++) {
		struct tt_site_info info;
		memcpy(&info, entry, sizeof info);
		const struct tt_callsite *site = info.address == (uintptr_t)&one ? &one : &two;
		assert_int_equal(info.address, (uintptr_t)site);
		assert_int_equal(info.line, site->line);
		assert_int_equal(info.name_len, 3);
		assert_memory_equal(entry + sizeof info, site->name, 3);
		assert_memory_equal(entry + sizeof info + 3, site->file, 3);
		assert_memory_equal(entry + sizeof info + 6, site->func, 1);
		entry += sizeof info + 7;
	}
	p += sizeof h + TT_SECTION_PADDED(h.size);
	memcpy(&h, p, sizeof h);
	assert_int_equal(h.type, TT_SEC_ARG_NAMES);
	struct tt_arg_name_info arg;
	memcpy(&count, p + sizeof h, sizeof count);
	memcpy(&arg, p + sizeof h + sizeof count, sizeof arg);
	assert_int_equal(count, 1);
	assert_int_equal(arg.address, (uintptr_t)&two);
	assert_int_equal(arg.name_len, 5);
	assert_memory_equal(p + sizeof h + sizeof count + sizeof arg, "bytes", 5);
	p += sizeof h + TT_SECTION_PADDED(h.size);
	memcpy(&h, p, sizeof h);
	assert_int_equal(h.type, TT_SEC_FUNCS);
	uint64_t funcs[2];
	memcpy(funcs, p + sizeof h, sizeof funcs);
	assert_int_equal(funcs[0], 1);
	assert_int_equal(funcs[1], func);
	assert_int_equal(out.offset, (uint64_t)(p - file) + sizeof h + TT_SECTION_PADDED(h.size));
	tt__site_set_clear(&set);
	tt__site_set_clear(&fresh);
}

/* What says whose a file is (header.c): the header's format, the run's start and an
 * end anchor after it, this process; PROCESS with its name and command line, padded
 * with zeros; MACHINE with the host's name and both wall clocks, the second read as
 * it is written. */
static void test_header_process_machine(void **state)
{
	(void)state;
	struct tt_anchor start;
	tt_os_anchor(&start);
	struct tt_machine_info machine;
	tt__machine_start(&machine, &start);
	struct tt_file_header header;
	tt__file_header_init(&header, &start);
	assert_memory_equal(header.magic, TT_FILE_MAGIC, TT_FILE_MAGIC_LEN);
	assert_int_equal(header.version, TT_FILE_VERSION);
	assert_int_equal(header.header_size, sizeof header);
	assert_int_equal(header.pid, tt_os_process_id());
	assert_int_equal(header.tsc_source, TT_TSC_ANCHORS);
	assert_memory_equal(&header.start, &start, sizeof start);
	assert_true(header.end.tsc > start.tsc);
	assert_true(header.end.monotonic_ns >= start.monotonic_ns);
	assert_int_equal(header.flags, tt_os_invariant_tsc() ? TT_FILE_INVARIANT_TSC : 0);

	static char file[4096];
	struct tt__mem_sink sink;
	tt__mem_sink(&sink, file, sizeof file);
	tt__out_to(&out, &sink.sink);
	memset(file, 0x55, sizeof file);
	static const char cmdline[] = "prog\0-x\0";
	struct tt_process_info info = {.pid = 42, .ppid = 7, .name_len = 5,
				       .cmdline_len = sizeof cmdline - 1};
	tt__out_process_section(&out, &info, "prog1", cmdline);
	tt__out_machine(&out, &machine);
	tt__out_flush(&out);
	assert_int_equal(out.err, 0);
	struct tt_section_header h;
	memcpy(&h, file, sizeof h);
	assert_int_equal(h.type, TT_SEC_PROCESS);
	assert_int_equal(h.size, sizeof info + 5 + sizeof cmdline - 1);
	const char *body = file + sizeof h;
	assert_memory_equal(body, &info, sizeof info);
	assert_memory_equal(body + sizeof info, "prog1", 5);
	assert_memory_equal(body + sizeof info + 5, cmdline, sizeof cmdline - 1);
	for (uint64_t i = h.size; i < TT_SECTION_PADDED(h.size); i++)
		assert_int_equal(body[i], 0);
	const char *p = body + TT_SECTION_PADDED(h.size);
	memcpy(&h, p, sizeof h);
	assert_int_equal(h.type, TT_SEC_MACHINE);
	assert_int_equal(h.size, sizeof machine);
	struct tt_machine_info written;
	memcpy(&written, p + sizeof h, sizeof written);
	assert_int_equal(written.flags, TT_MACHINE_START_CLOCK | TT_MACHINE_WRITTEN_CLOCK);
	char host[TT_HOST_NAME_MAX + 1];
	size_t host_len = tt_os_host_name(host, sizeof host);
	assert_int_equal(written.host_name_len, host_len);
	assert_memory_equal(written.host_name, host, host_len);
	assert_int_equal(written.start.tsc, start.tsc);
	assert_true(written.written.tsc > written.start.tsc);
	assert_true(written.written.realtime_ns >= written.start.realtime_ns);
	assert_int_equal(out.offset, (uint64_t)(p - file) + sizeof h + TT_SECTION_PADDED(sizeof machine));
}

/* THREAD's name: the one kept once final (named, or exited), else the system's now,
 * the kept one where the system has none for the id (the thread just gone), and the
 * program's where neither names it. */
static void test_thread_name(void **state)
{
	(void)state;
	char own[64], program[64];
	assert_int_equal(pthread_setname_np(pthread_self(), "tt-own-name"), 0); /* (not the program's) */
	assert_true(tt_os_thread_name(own, sizeof own) > 0);
	assert_string_equal(own, "tt-own-name");
	assert_true(tt_os_process_name(program, sizeof program) > 0);
	const uint32_t gone = UINT32_MAX - 1; /* (no thread of this process) */
	const struct {
		uint32_t tid;
		const char *kept;
		int final;
		const char *expected;
	} cases[] = {
		{tt_os_thread_id(), "given", 1, "given"},
		{tt_os_thread_id(), "at start", 0, own},
		{gone, "at start", 0, "at start"},
		{gone, "", 0, program},
		{gone, "", 1, program},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		static char file[4096];
		struct tt__mem_sink sink;
		tt__mem_sink(&sink, file, sizeof file);
		tt__out_to(&out, &sink.sink);
		struct tt_thread_info info = {.index = 3, .tid = cases[i].tid, .events = 5};
		tt__out_thread_section(&out, TT_SEC_THREAD, &info, cases[i].kept, cases[i].final);
		tt__out_flush(&out);
		assert_int_equal(out.err, 0);
		struct tt_section_header h;
		memcpy(&h, file, sizeof h);
		struct tt_thread_info written;
		memcpy(&written, file + sizeof h, sizeof written);
		size_t len = strlen(cases[i].expected);
		assert_int_equal(h.type, TT_SEC_THREAD);
		assert_int_equal(h.size, sizeof written + len);
		assert_int_equal(written.name_len, len);
		assert_int_equal(written.events, 5);
		if (memcmp(file + sizeof h + sizeof written, cases[i].expected, len) != 0)
			fail_msg("case %zu: the name '%.*s', not '%s'", i, (int)len,
				 file + sizeof h + sizeof written, cases[i].expected);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offsets),
		cmocka_unit_test(test_section),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_site_sections),
		cmocka_unit_test(test_header_process_machine),
		cmocka_unit_test(test_thread_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
