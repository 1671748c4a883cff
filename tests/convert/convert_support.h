#ifndef TT_CONVERT_SUPPORT_H
#define TT_CONVERT_SUPPORT_H

/* What the converter's tests (test_convert*.c) share: demo raw files written
 * with tt_tw, the fixture's setup, and reading what the command said. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tt_check.h"
#include "tt_tw.h"

#define R TT_TW_REC
#define N(a) (sizeof(a) / sizeof((a)[0]))

void open_demo(struct tt_tw *w, const char *path, const struct tt_file_header *h);
void open_flagged(struct tt_tw *w, const char *path, uint32_t flags);
void write_one_clocked(const char *path, const struct tt_file_header *h,
		       const struct tt_record *rec, size_t n, bool idle);
void write_one(const char *path, const struct tt_record *rec, size_t n);
int setup(void **state);
void assert_err_has(const struct tt_run *r, const char *text);
const cJSON *field(const cJSON *ev, const char *name);
const cJSON *arg(const cJSON *ev, const char *name);

#endif
