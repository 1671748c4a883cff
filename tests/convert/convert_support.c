/* The converter tests' shared part (see convert_support.h). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tt_check.h"
#include "tt_demo.h"
#include "tt_tw.h"
#include "convert_support.h"

/* Starts a file at `path` with header `h` (NULL: the default, 1 GHz), the demo's
 * process and its call sites. */
void open_demo(struct tt_tw *w, const char *path, const struct tt_file_header *h)
{
	assert_int_equal(tt_tw_open_file(w, path), 0);
	tt_tw_header(w, h);
	tt_tw_process(w, 4242, "demo");
	tt_tw_sites(w, tt_demo_sites, tt_demo_nsites);
}

/* Starts a demo file whose default header also has `flags` (TT_FILE_LIVE, ...). */
void open_flagged(struct tt_tw *w, const char *path, uint32_t flags)
{
	struct tt_file_header h;
	tt_tw_default_header(&h);
	h.flags |= flags;
	open_demo(w, path, &h);
}

/* One thread's records in a file whose header is `h` (NULL: the default, 1 GHz);
 * with `idle`, a second thread that recorded nothing. */
void write_one_clocked(const char *path, const struct tt_file_header *h,
		       const struct tt_record *rec, size_t n, bool idle)
{
	struct tt_tw w;
	open_demo(&w, path, h);
	tt_tw_thread(&w, 0, 101, "producer", n, 0);
	tt_tw_events(&w, 0, 0, rec, n);
	if (idle)
		tt_tw_thread(&w, 1, 102, "idle", 0, 0);
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
}

void write_one(const char *path, const struct tt_record *rec, size_t n)
{
	write_one_clocked(path, NULL, rec, n, false);
}

int setup(void **state)
{
	return tt_fixture_setup(state, "run.ttr", "run.json");
}

/* Shows what the command printed when the expected text is not there. */
void assert_err_has(const struct tt_run *r, const char *text)
{
	if (!strstr(r->err, text))
		fail_msg("expected \"%s\" on stderr, got:\n%s", text, r->err);
}

const cJSON *field(const cJSON *ev, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, name);
	if (!v)
		fail_msg("event %s has no field %s", cJSON_PrintUnformatted(ev), name);
	return v;
}

const cJSON *arg(const cJSON *ev, const char *name)
{
	/* NULL when the event has no args at all */
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "args"), name);
}
