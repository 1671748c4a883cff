/* The benchmark's figures are medians over repeats: shared by the runs of ticktrace-bench. */
#ifndef TT_BENCH_MEDIAN_H
#define TT_BENCH_MEDIAN_H

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

#endif
