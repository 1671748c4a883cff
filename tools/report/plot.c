/* `ticktrace report --svg`: the flat profile as a plot, where the table's columns of
 * percentiles say less than a picture: one row per name, its calls' durations on a
 * log axis (a line from min to max, a bar from p50 to p99, ticks at p50 and p95, a
 * dot at the mean), and its share of the self time as a bar beside its name. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

#define TT_PLOT_WIDTH 1200
#define TT_PLOT_NAME 260  /* the names' column */
#define TT_PLOT_RIGHT 150 /* calls and self time */
#define TT_PLOT_ROW 22
#define TT_PLOT_TOP 70
#define TT_PLOT_ROWS 40 /* rows drawn at most: the first by the table's order */

/* x of a duration on the axis [lo, hi] decades (ns, log10). */
static double tt_plot_x(int64_t ns, double lo, double hi)
{
	double v = log10(ns > 1 ? (double)ns : 1.0);
	double left = TT_PLOT_NAME + 10, right = TT_PLOT_WIDTH - TT_PLOT_RIGHT - 10;
	return left + (v - lo) / (hi - lo) * (right - left);
}

void tt_table_svg(FILE *out, const struct tt_an_table *t, const char *title)
{
	size_t rows = t->n < TT_PLOT_ROWS ? t->n : TT_PLOT_ROWS;
	int64_t min = INT64_MAX, max = 1, self = 0;
	for (size_t i = 0; i < t->n; i++)
		self += t->entries[i].self;
	for (size_t i = 0; i < rows; i++) {
		min = t->entries[i].min < min ? t->entries[i].min : min;
		max = t->entries[i].max > max ? t->entries[i].max : max;
	}
	double lo = floor(log10(min > 1 && min != INT64_MAX ? (double)min : 1.0));
	double hi = ceil(log10((double)max));
	hi = hi > lo ? hi : lo + 1;
	int height = TT_PLOT_TOP + (int)rows * TT_PLOT_ROW + 20;
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text { font: 12px monospace; fill: #000; } .head { font-size: 15px; } "
		".axis { fill: #666; }</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n<text class=\"head\" x=\"10\" "
		"y=\"22\">",
		TT_PLOT_WIDTH, height, TT_PLOT_WIDTH, height);
	tt_xml_text(out, title, SIZE_MAX);
	fprintf(out, "</text>\n<text x=\"10\" y=\"40\">a call's duration, log scale: line min..max, "
		"bar p50..p99, ticks p50 and p95, dot mean; under a name: its share of the self "
		"time; right: calls, self time</text>\n");
	for (double d = lo; d <= hi; d++) { /* a gridline a decade */
		static const char *const unit[] = {"ns", "us", "ms", "s"};
		int e = (int)d;
		double x = tt_plot_x((int64_t)pow(10, d), lo, hi);
		fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
			"<text class=\"axis\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d %s</text>\n", x,
			TT_PLOT_TOP - 8, x, height - 16, x, TT_PLOT_TOP - 12, (int)pow(10, e % 3),
			unit[e / 3 < 3 ? e / 3 : 3]);
	}
	for (size_t i = 0; i < rows; i++) {
		const struct tt_an_entry *r = &t->entries[i];
		double y = TT_PLOT_TOP + (double)i * TT_PLOT_ROW, mid = y + TT_PLOT_ROW / 2.0;
		char p50[32], p99[32], self_s[32];
		fprintf(out, "<g><title>");
		tt_xml_text(out, r->name, SIZE_MAX);
		fprintf(out, ": %" PRIu64 " calls, self %s, p50 %s, p99 %s</title>\n", r->calls,
			tt_an_fmt_ns(self_s, r->self), tt_an_fmt_ns(p50, r->p50), tt_an_fmt_ns(p99, r->p99));
		double share = self ? (double)r->self / (double)self : 0;
		fprintf(out, "<rect x=\"10\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"#f3d7b5\"/>"
			"<text x=\"14\" y=\"%.1f\">", y + 2, share * (TT_PLOT_NAME - 20), TT_PLOT_ROW - 4,
			mid + 4);
		size_t len = strlen(r->name), fits = (TT_PLOT_NAME - 24) / 7;
		tt_xml_text(out, r->name, len <= fits ? len : fits - 2);
		fprintf(out, "%s</text>\n", len <= fits ? "" : "..");
		double xmin = tt_plot_x(r->min, lo, hi), xmax = tt_plot_x(r->max, lo, hi);
		double x50 = tt_plot_x(r->p50, lo, hi), x95 = tt_plot_x(r->p95, lo, hi);
		double x99 = tt_plot_x(r->p99, lo, hi), xmean = tt_plot_x(r->mean, lo, hi);
		fprintf(out,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>"
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"#e8743b\"/>"
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" stroke-width=\"2\"/>"
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>"
			"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#1f5fa8\"/>\n",
			xmin, mid, xmax, mid, x50, y + 5, x99 - x50 > 1 ? x99 - x50 : 1, TT_PLOT_ROW - 10,
			x50, y + 3, x50, y + TT_PLOT_ROW - 3, x95, y + 5, x95, y + TT_PLOT_ROW - 5, xmean, mid);
		fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%" PRIu64 " calls, %s</text>"
			"</g>\n", TT_PLOT_WIDTH - 10, mid + 4, r->calls, self_s);
	}
	if (t->n > rows)
		fprintf(out, "<text x=\"10\" y=\"%d\">... %zu more names</text>\n", height - 4, t->n - rows);
	fputs("</svg>\n", out);
}
