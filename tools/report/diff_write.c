/* `ticktrace diff`'s output (report.h: tt_diff_write): a table for a terminal, one
 * JSON object per scope a line, a Markdown table of the changes for a CI summary, or
 * report's plot of the first scopes' distributions on both sides. */
#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#define TT_DIFF_SVG_CHANGES 10 /* --svg: the first scopes drawn */
#define TT_DIFF_NAME_MAX 48    /* the text table cuts longer names */

static const char *const tt_side_names[] = {"base", "new"};

static const char *tt_verdict(const struct tt_diff_scope *s)
{
	if (!s->side[TT_BASE].calls)
		return "new";
	if (!s->side[TT_NEW].calls)
		return "gone";
	return s->regressed ? "REGRESSED" : s->improved ? "improved" : "";
}

static void tt_fmt_pct(char buf[32], double pct)
{
	if (isnan(pct))
		snprintf(buf, 32, "-");
	else if (isinf(pct))
		snprintf(buf, 32, "+inf%%");
	else
		snprintf(buf, 32, "%+.1f%%", pct);
}

static void tt_fmt_p(char buf[32], const struct tt_diff_scope *s)
{
	if (!s->side[TT_BASE].calls || !s->side[TT_NEW].calls)
		snprintf(buf, 32, "-");
	else if (s->test.p_value < 1e-9)
		snprintf(buf, 32, "<1e-9");
	else
		snprintf(buf, 32, "%.2g", s->test.p_value);
}

#define TT_DIFF_COLUMNS 8
static const char *const tt_diff_headings[TT_DIFF_COLUMNS] = {
	"calls", "total", "self", "p50", "p90", "p99", "max", "runs",
};

static void tt_side_cells(const struct tt_diff_side *s, char cells[TT_DIFF_COLUMNS][32])
{
	snprintf(cells[0], 32, "%" PRIu64, s->calls);
	tt_an_fmt_ns(cells[1], s->total);
	tt_an_fmt_ns(cells[2], s->self);
	for (int i = 0; i < 3; i++)
		tt_an_fmt_ns(cells[3 + i], s->calls ? tt_diff_percentile(s, tt_diff_permille[i]) : 0);
	tt_an_fmt_ns(cells[6], s->calls ? s->max : 0);
	snprintf(cells[7], 32, "%" PRIu32, s->runs);
}

/* The scope as shown: "name", or "[thread] name" by thread. */
static void tt_shown_name(char *buf, size_t cap, const struct tt_diff_scope *s)
{
	if (s->thread)
		snprintf(buf, cap, "[%s] %s", *s->thread ? s->thread : "(unnamed)", s->name);
	else
		snprintf(buf, cap, "%s", s->name);
	for (char *p = buf; *p; p++) /* one line a scope, whatever a name holds */
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

static void tt_diff_text(FILE *out, const struct tt_diff *d, const char *summary)
{
	int width[TT_DIFF_COLUMNS] = {0}, name_width = 5; /* "scope" */
	char cells[TT_DIFF_COLUMNS][32], name[1024];
	for (int c = 0; c < TT_DIFF_COLUMNS; c++)
		width[c] = (int)strlen(tt_diff_headings[c]);
	for (size_t i = 0; i < d->n; i++) {
		tt_shown_name(name, sizeof name, &d->scopes[i]);
		int w = (int)strlen(name);
		name_width = w > name_width ? (w < TT_DIFF_NAME_MAX ? w : TT_DIFF_NAME_MAX) : name_width;
		for (int k = 0; k < 2; k++) {
			tt_side_cells(&d->scopes[i].side[k], cells);
			for (int c = 0; c < TT_DIFF_COLUMNS; c++) {
				int w = (int)strlen(cells[c]);
				width[c] = w > width[c] ? w : width[c];
			}
		}
	}
	fprintf(out, "%s\n\n%-*s %-4s", summary, name_width, "scope", "");
	for (int c = 0; c < TT_DIFF_COLUMNS; c++)
		fprintf(out, "  %*s", width[c], tt_diff_headings[c]);
	char change[32];
	snprintf(change, sizeof change, "%s change", tt_diff_metrics[d->o->metric]);
	fprintf(out, "  %12s  %7s\n", change, "p-value");
	for (size_t i = 0; i < d->n; i++) {
		const struct tt_diff_scope *s = &d->scopes[i];
		char pct[32], p[32];
		tt_shown_name(name, sizeof name, s);
		tt_fmt_pct(pct, s->change_pct);
		tt_fmt_p(p, s);
		for (int k = 0; k < 2; k++) {
			fprintf(out, "%-*.*s %-4s", name_width, name_width, k ? "" : name,
				tt_side_names[k]);
			tt_side_cells(&s->side[k], cells);
			for (int c = 0; c < TT_DIFF_COLUMNS; c++)
				fprintf(out, "  %*s", width[c], s->side[k].calls ? cells[c] : "-");
			if (k)
				fprintf(out, "  %12s  %7s  %s", pct, p, tt_verdict(s));
			fputc('\n', out);
		}
	}
}

/* A JSON number, or null for what JSON cannot hold. */
static void tt_json_number(cJSON *obj, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(obj, key, v);
	else
		cJSON_AddNullToObject(obj, key);
}

static cJSON *tt_side_json(const struct tt_diff_side *s)
{
	cJSON *obj = cJSON_CreateObject();
	const struct {
		const char *key;
		double v;
	} fields[] = {
		{"runs", s->runs},
		{"calls", (double)s->calls},
		{"total_ns", (double)s->total},
		{"self_ns", (double)s->self},
		{"p50_ns", s->calls ? (double)tt_diff_percentile(s, 500) : 0},
		{"p90_ns", s->calls ? (double)tt_diff_percentile(s, 900) : 0},
		{"p99_ns", s->calls ? (double)tt_diff_percentile(s, 990) : 0},
		{"max_ns", s->calls ? (double)s->max : 0},
	};
	for (size_t f = 0; obj && f < sizeof(fields) / sizeof(fields[0]); f++)
		cJSON_AddNumberToObject(obj, fields[f].key, fields[f].v);
	return obj;
}

static int tt_diff_json(FILE *out, const struct tt_diff *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct tt_diff_scope *s = &d->scopes[i];
		bool both = s->side[TT_BASE].calls && s->side[TT_NEW].calls;
		cJSON *obj = cJSON_CreateObject();
		if (!obj)
			return tt_error("out of memory");
		tt_json_add_text(obj, "name", s->name, strlen(s->name));
		if (s->thread)
			tt_json_add_text(obj, "thread", s->thread, strlen(s->thread));
		for (int k = 0; k < 2; k++)
			cJSON_AddItemToObject(obj, tt_side_names[k], tt_side_json(&s->side[k]));
		cJSON_AddStringToObject(obj, "metric", tt_diff_metrics[d->o->metric]);
		tt_json_number(obj, "change_pct", s->change_pct);
		tt_json_number(obj, "p_value", both ? s->test.p_value : NAN);
		tt_json_number(obj, "superiority", both ? s->test.superiority : NAN);
		cJSON_AddBoolToObject(obj, "significant", s->significant);
		if (d->nruns[TT_BASE] > 1 && d->nruns[TT_NEW] > 1)
			cJSON_AddBoolToObject(obj, "runs_agree", s->consistent);
		cJSON_AddBoolToObject(obj, "regressed", s->regressed);
		cJSON_AddBoolToObject(obj, "improved", s->improved);
		char *text = cJSON_PrintUnformatted(obj);
		cJSON_Delete(obj);
		if (!text)
			return tt_error("out of memory");
		fprintf(out, "%s\n", text);
		free(text);
	}
	return 0;
}

/* Markdown table cells: '|' escaped, control bytes as '?'. */
static void tt_md_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '|' || *s == '\\' || *s == '`' || *s == '*' || *s == '_' || *s == '<')
			fputc('\\', out);
		fputc(*s, out);
	}
}

static void tt_diff_markdown(FILE *out, const struct tt_diff *d, const char *summary)
{
	fprintf(out, "### ticktrace diff\n\n%s\n\n", summary);
	size_t shown = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct tt_diff_scope *s = &d->scopes[i];
		if (!*tt_verdict(s))
			continue;
		if (!shown++)
			fprintf(out, "| scope | | calls | total | p50 | p90 | p99 | max | %s change | p-value |\n"
				"|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n", tt_diff_metrics[d->o->metric]);
		char name[1024], pct[32], p[32], cells[2][TT_DIFF_COLUMNS][32];
		tt_shown_name(name, sizeof name, s);
		tt_fmt_pct(pct, s->change_pct);
		tt_fmt_p(p, s);
		for (int k = 0; k < 2; k++)
			tt_side_cells(&s->side[k], cells[k]);
		fputs("| ", out);
		tt_md_text(out, name);
		fprintf(out, " | %s |", tt_verdict(s));
		static const int columns[] = {0, 1, 3, 4, 5, 6};
		for (size_t c = 0; c < sizeof(columns) / sizeof(columns[0]); c++)
			fprintf(out, " %s → %s |", s->side[TT_BASE].calls ? cells[0][columns[c]] : "-",
				s->side[TT_NEW].calls ? cells[1][columns[c]] : "-");
		fprintf(out, " %s | %s |\n", pct, p);
	}
	if (shown < d->n)
		fprintf(out, "%s%zu scopes with no change beyond the threshold are not shown.\n",
			shown ? "\n" : "", d->n - shown);
}

/* A side of a scope as a row of report's table, for its plot. */
static int tt_side_entry(struct tt_an_entry *e, const struct tt_diff_scope *s, int side)
{
	char name[1024];
	tt_shown_name(name, sizeof name, s);
	const struct tt_diff_side *v = &s->side[side];
	size_t len = strlen(name) + 8;
	*e = (struct tt_an_entry){
		.name = malloc(len), .calls = v->calls, .total = v->total, .self = v->self,
		.children = v->total - v->self, .min = v->min, .max = v->max,
		.mean = v->calls_total / (int64_t)v->calls, .p50 = tt_diff_percentile(v, 500),
		.p95 = tt_diff_percentile(v, 950), .p99 = tt_diff_percentile(v, 990),
		.calls_total = v->calls_total,
	};
	if (!e->name)
		return -1;
	snprintf(e->name, len, "%s (%s)", name, tt_side_names[side]);
	return 0;
}

static int tt_diff_svg(FILE *out, const struct tt_diff *d)
{
	struct tt_an_table t = {.entries = calloc(2 * TT_DIFF_SVG_CHANGES, sizeof(struct tt_an_entry))};
	int rc = t.entries ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < d->n && t.n < 2 * TT_DIFF_SVG_CHANGES; i++) {
		const struct tt_diff_scope *s = &d->scopes[i];
		if (!s->side[TT_BASE].calls || !s->side[TT_NEW].calls)
			continue;
		for (int k = 0; k < 2 && rc == 0; k++, t.n++) {
			rc = tt_side_entry(&t.entries[t.n], s, k);
			t.calls += s->side[k].calls;
		}
	}
	if (rc == 0) {
		char title[1024];
		snprintf(title, sizeof title, "ticktrace diff: %s -> %s, the first %zu of %zu scopes",
			 d->o->paths[TT_BASE], d->o->paths[TT_NEW], t.n / 2, d->n);
		tt_table_svg(out, &t, title);
	}
	tt_an_table_free(&t);
	return rc < 0 ? tt_error("out of memory") : 0;
}

int tt_diff_write(void *ctx, FILE *out)
{
	const struct tt_diff *d = ctx;
	switch (d->o->format) {
	case TT_DIFF_JSON: return tt_diff_json(out, d);
	case TT_DIFF_MARKDOWN: tt_diff_markdown(out, d, d->summary); return 0;
	case TT_DIFF_SVG: return tt_diff_svg(out, d);
	default: tt_diff_text(out, d, d->summary); return 0;
	}
}
