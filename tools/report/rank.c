/* The Mann-Whitney U test from histograms (report.h: tt_rank_test). */
#include "report.h"

#include <math.h>

static uint64_t tt_hist_count(const struct tt_an_hist *h, uint32_t b)
{
	return h->counts && b >= h->lo && b < h->hi ? h->counts[b - h->lo] : 0;
}

static uint64_t tt_hist_calls(const struct tt_an_hist *h)
{
	uint64_t n = 0;
	for (uint32_t b = h->lo; h->counts && b < h->hi; b++)
		n += h->counts[b - h->lo];
	return n;
}

void tt_rank_test(const struct tt_an_hist *base, const struct tt_an_hist *new, struct tt_rank_test *r)
{
	*r = (struct tt_rank_test){.base_calls = tt_hist_calls(base), .new_calls = tt_hist_calls(new),
				   .superiority = 0.5, .p_value = 1};
	if (!r->base_calls || !r->new_calls)
		return;
	uint32_t lo = !base->counts ? new->lo : !new->counts ? base->lo : base->lo < new->lo ? base->lo : new->lo;
	uint32_t hi = base->hi > new->hi ? base->hi : new->hi;
	/* Counts reach 2^40 and more; long double keeps 64 bits of them and of the cubes'
	 * leading digits, which is all the tie term needs. */
	long double u = 0, ties = 0, below = 0; /* base calls in the buckets below */
	for (uint32_t b = lo; b < hi; b++) {
		long double nb = (long double)tt_hist_count(base, b), nn = (long double)tt_hist_count(new, b);
		u += nn * (below + nb / 2);
		below += nb;
		long double t = nb + nn;
		ties += t * t * t - t;
	}
	long double n1 = (long double)r->base_calls, n2 = (long double)r->new_calls, n = n1 + n2;
	long double mean = n1 * n2 / 2;
	long double var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)));
	r->superiority = (double)(u / (n1 * n2));
	if (var <= 0)
		return; /* every call in one bucket: nothing to tell apart */
	long double off = fabsl(u - mean) - 0.5L; /* continuity correction */
	r->z = off > 0 ? (double)(copysignl(off, u - mean) / sqrtl(var)) : 0;
	r->p_value = erfc(fabs(r->z) / sqrt(2.0));
}
