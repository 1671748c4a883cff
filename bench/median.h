/* The benchmark's figures are medians over repeats: shared by the runs of ticktrace-bench. */
#ifndef TT_BENCH_MEDIAN_H
#define TT_BENCH_MEDIAN_H

#include <math.h>
#include <stdlib.h>

static inline int tt_bench_compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of `n` figures (sorts them). */
static inline double tt_bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, tt_bench_compare);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Where the median of `n` figures (sorted by tt_bench_median) lies with 95 %
 * confidence, from the order statistics: *lo and *hi (the whole range for n < 6). */
static inline void tt_bench_median_bounds(const double *sorted, int n, double *lo, double *hi)
{
	double half = 0.98 * sqrt((double)n);
	int i = (int)floor(n / 2.0 - half), j = (int)ceil(n / 2.0 + half);
	*lo = sorted[i < 0 ? 0 : i];
	*hi = sorted[j > n - 1 ? n - 1 : j];
}

#endif
