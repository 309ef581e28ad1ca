/* SPDX-License-Identifier: MIT */
/*
 * Change points of one series (SPEC §6, docs/history.md): where an implementation's results in
 * one comparison group moved and stayed moved. A series is its passed runs in time order, each
 * contributing one value (its median). Pure functions, no I/O, no randomness: the same series
 * gives the same change points on every machine. Thread-safe.
 *
 * The rule. Walk the series keeping the current segment's start (0 at first). At each result i,
 * the newest KX_CP_CONFIRM results x[i-4..i] are tested against the up to KX_CP_WINDOW results
 * before them since the segment start, x[max(start, i-24) .. i-5]. There is a change point at i-4
 * when all three hold:
 *   - a one-sided exact Mann–Whitney test of the 5 against the earlier ones, in the direction of
 *     the move, gives p < KX_CP_ALPHA (ties: midranks, with the exact permutation distribution
 *     of their rank sum given the ties — see kx_mann_whitney);
 *   - all 5 lie strictly beyond the earlier window's median (all above it, or all below it);
 *   - the median of the 5 moved by at least KX_CP_MIN_MOVE relative to the earlier median.
 * The new segment then starts at i-4 and the walk goes on. At least KX_CP_MIN_BEFORE earlier
 * results are needed (5 against 4 can reach 1/C(9,5) = 0.0079; against 3 only 1/56), so a
 * series of fewer than KX_CP_MIN_SERIES results has none.
 */
#ifndef KX_HISTORY_H
#define KX_HISTORY_H

#include "kx/common.h"
#include "kx/manifest.h"

#include <stdbool.h>
#include <stddef.h>

#define KX_CP_CONFIRM    5    /* the newest results that must agree */
#define KX_CP_WINDOW     20   /* at most this many earlier results of the segment they are tested against */
#define KX_CP_ALPHA      0.01 /* the exact one-sided p-value must be below this */
#define KX_CP_MIN_MOVE   0.03 /* |median of the 5 / earlier median - 1| must be at least this */
#define KX_CP_MIN_BEFORE 4    /* fewest earlier results that can give p < KX_CP_ALPHA */
#define KX_CP_MIN_SERIES (KX_CP_CONFIRM + KX_CP_MIN_BEFORE)

/* One change point: the series moved at x[at] and stayed moved for the KX_CP_CONFIRM results
 * x[at..at+4]; it was found when x[at+4] arrived. */
struct kx_change {
	size_t at;       /* index of the first result of the new segment */
	double before;   /* median of the earlier window x[at-n_before .. at-1] */
	double after;    /* median of the KX_CP_CONFIRM results x[at .. at+4] */
	double change;   /* after / before - 1: +0.1 is 10 % higher */
	double p;        /* the one-sided exact Mann–Whitney p-value, in the direction of the move */
	size_t n_before; /* results in the earlier window, KX_CP_MIN_BEFORE..KX_CP_WINDOW */
	bool worse;      /* a regression: higher for KX_ORDER_ASCENDING metrics, lower for DESCENDING */
};

/*
 * The change points of x[0..n) in order of `at`. Writes the first `cap` of them to out (out may be
 * NULL when cap is 0) and sets *ret_n to how many there are, so a caller can ask for the count
 * first; there are never more than n / 4. Where the earlier median is not positive a relative move
 * is not defined and there is no change point. 0, or -EINVAL (nothing written) when x is NULL with
 * n > 0, out is NULL with cap > 0, ret_n is NULL or a value is not finite. Linear in n.
 */
int kx_changepoints(const double *x, size_t n, enum kx_order order, struct kx_change *out, size_t cap,
		    size_t *ret_n);

/*
 * The one-sided exact Mann–Whitney (Wilcoxon rank-sum) test of a[0..na) against b[0..nb): with
 * `upper`, the probability, over all C(na+nb, na) ways to pick na of the pooled values as
 * "a", that their rank sum is at least the observed one (a tends to be larger); without, at most
 * it. Tied values share their midrank and the distribution is the exact one given those ties
 * (the conditional permutation distribution), so a tie is never counted as a win of either side.
 * Without ties this is the classical U distribution (cached for na = 5, nb <= 20).
 * 1 <= na <= KX_CP_CONFIRM, 1 <= nb <= KX_CP_WINDOW and finite values, else -EINVAL.
 */
int kx_mann_whitney(const double *a, size_t na, const double *b, size_t nb, bool upper, double *ret_p);

/*
 * The rule, its parameters and its reasons as a few lines of text (the "rule" of history.json and
 * regressions.json, one string per line; docs/history.md quotes them). The same bytes every
 * call. 0, or what kx_buf_printf returns.
 */
int kx_changepoint_rule(struct kx_buf *out);

#endif
