// SPDX-License-Identifier: MIT
/*
 * The change-point rule of SPEC §6 (include/kx/history.h states it, docs/history.md says why):
 * one walk over a series with a sorted window of the earlier results kept incrementally, the two
 * cheap conditions (all 5 beyond the earlier median, a move of at least 3 %) tried first, and the
 * exact Mann–Whitney test only where both hold — in a stationary series that is rare, so the walk
 * costs a few comparisons per result. The test counts arrangements in integers: a cached table of
 * the U distribution where no values tie, a small dynamic programme over the tie groups where some
 * do. Nothing here allocates.
 */
#include "kx/history.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define NA_MAX KX_CP_CONFIRM
#define NB_MAX KX_CP_WINDOW
#define U_MAX  (NA_MAX * NB_MAX)
#define N_MAX  (NA_MAX + NB_MAX)
/* the largest doubled rank sum of NA_MAX values among N_MAX: 2 * (N_MAX + … + N_MAX-NA_MAX+1) */
#define W2_MAX (NA_MAX * (2 * N_MAX - NA_MAX + 1))

/*
 * u_ge[a][b][u]: of the C(a+b, a) ways to interleave a values with b others (no ties), how many
 * have U >= u, U counting the pairs where the a-value is the larger. Built from the standard
 * recursion on the largest value: it is an a-value (it beats all b others: U = b + U(a-1, b)) or
 * a b-value (U = U(a, b-1)). 6 × 21 × 101 counts ≤ C(25, 5) = 53,130, built once.
 */
static uint32_t u_ge[NA_MAX + 1][NB_MAX + 1][U_MAX + 2];
static pthread_once_t u_once = PTHREAD_ONCE_INIT;

static void u_build(void)
{
	static uint32_t f[NA_MAX + 1][NB_MAX + 1][U_MAX + 1]; /* f[a][b][u]: how many have U == u */
	for (int a = 0; a <= NA_MAX; a++)
		for (int b = 0; b <= NB_MAX; b++) {
			if (a == 0 || b == 0) {
				f[a][b][0] = 1;
				continue;
			}
			for (int u = 0; u <= a * b; u++)
				f[a][b][u] = (u >= b ? f[a - 1][b][u - b] : 0) + f[a][b - 1][u];
		}
	for (int a = 0; a <= NA_MAX; a++)
		for (int b = 0; b <= NB_MAX; b++)
			for (int u = a * b; u >= 0; u--)
				u_ge[a][b][u] = u_ge[a][b][u + 1] + f[a][b][u];
}

static uint64_t binom(unsigned n, unsigned k)
{
	uint64_t r = 1;
	for (unsigned i = 1; i <= k; i++)
		r = r * (n - k + i) / i; /* exact: r * (n-k+i) is C(n-k+i, i) * i */
	return r;
}

static void sort_small(double *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		double t = v[i];
		size_t j = i;
		for (; j > 0 && v[j - 1] > t; j--)
			v[j] = v[j - 1];
		v[j] = t;
	}
}

/*
 * The exact one-sided p-value of sorted a[0..na) against sorted b[0..nb). Ranks are doubled so
 * midranks stay integers: a tie group at sorted positions [s, s+t) has the doubled midrank
 * 2s + t + 1. Without ties the doubled rank sum is 2U + na(na+1) and the table answers; with
 * ties, cnt[k][w] counts the ways to pick k of the pooled values with doubled rank sum w, tie
 * group by tie group (C(t, c) ways to pick c of a group of t).
 */
static double mw_sorted(const double *a, size_t na, const double *b, size_t nb, bool upper)
{
	size_t n = na + nb, ia = 0, ib = 0, pos = 0, groups = 0;
	unsigned g_size[N_MAX], g_rank2[N_MAX];
	unsigned w2 = 0;
	bool ties = false;
	while (ia < na || ib < nb) {
		double v = ib == nb || (ia < na && a[ia] <= b[ib]) ? a[ia] : b[ib];
		unsigned ta = 0, tb = 0;
		while (ia < na && a[ia] == v)
			ia++, ta++;
		while (ib < nb && b[ib] == v)
			ib++, tb++;
		unsigned t = ta + tb, r2 = (unsigned)(2 * pos) + t + 1;
		w2 += ta * r2;
		ties = ties || t > 1;
		g_size[groups] = t;
		g_rank2[groups++] = r2;
		pos += t;
	}
	double total = (double)binom((unsigned)n, (unsigned)na);
	unsigned base2 = (unsigned)(na * (na + 1));
	if (!ties) {
		pthread_once(&u_once, u_build);
		unsigned u = (w2 - base2) / 2;
		if (!upper)
			u = (unsigned)(na * nb) - u; /* P(U <= u) = P(U' >= ab - u), U' the other side's */
		return u_ge[na][nb][u] / total;
	}
	uint64_t cnt[NA_MAX + 1][W2_MAX + 1];
	memset(cnt, 0, sizeof(cnt));
	cnt[0][0] = 1;
	unsigned wmax = 0; /* the largest sum reached so far */
	for (size_t g = 0; g < groups; g++) {
		unsigned t = g_size[g], r2 = g_rank2[g];
		for (size_t k = na; k >= 1; k--)
			for (unsigned c = 1; c <= t && c <= k; c++) {
				uint64_t ways = binom(t, c);
				for (unsigned w = 0; w <= wmax; w++)
					if (cnt[k - c][w])
						cnt[k][w + c * r2] += cnt[k - c][w] * ways;
			}
		wmax += (unsigned)(t < na ? t : na) * r2;
		if (wmax > W2_MAX)
			wmax = W2_MAX;
	}
	uint64_t tail = 0;
	for (unsigned w = 0; w <= W2_MAX; w++)
		if (upper ? w >= w2 : w <= w2)
			tail += cnt[na][w];
	return (double)tail / total;
}

static bool all_finite(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return false;
	return true;
}

int kx_mann_whitney(const double *a, size_t na, const double *b, size_t nb, bool upper, double *ret_p)
{
	if (!a || !b || !ret_p || na < 1 || na > NA_MAX || nb < 1 || nb > NB_MAX || !all_finite(a, na) ||
	    !all_finite(b, nb))
		return -EINVAL;
	double sa[NA_MAX], sb[NB_MAX];
	memcpy(sa, a, na * sizeof(*a));
	memcpy(sb, b, nb * sizeof(*b));
	sort_small(sa, na);
	sort_small(sb, nb);
	*ret_p = mw_sorted(sa, na, sb, nb, upper);
	return 0;
}

/* The earlier window x[lo..hi), sorted; values leave from the old end and join at the new. */
struct window {
	double v[NB_MAX + 1]; /* one more: a step adds its value before the oldest leaves */
	size_t n;
};

static void window_add(struct window *w, double x)
{
	size_t j = w->n++;
	for (; j > 0 && w->v[j - 1] > x; j--)
		w->v[j] = w->v[j - 1];
	w->v[j] = x;
}

static void window_remove(struct window *w, double x)
{
	size_t j = 0;
	while (w->v[j] != x) /* x is there: it was added and equal values are interchangeable */
		j++;
	memmove(w->v + j, w->v + j + 1, (--w->n - j) * sizeof(*w->v));
}

static double median_sorted(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : v[n / 2 - 1] / 2 + v[n / 2] / 2;
}

int kx_changepoints(const double *x, size_t n, enum kx_order order, struct kx_change *out, size_t cap,
		    size_t *ret_n)
{
	if ((!x && n > 0) || (!out && cap > 0) || !ret_n || !all_finite(x, n))
		return -EINVAL;
	struct window w = { .n = 0 };
	size_t start = 0, lo = 0, hi = 0, found = 0;
	for (size_t i = KX_CP_MIN_SERIES - 1; i < n; i++) {
		size_t r0 = i + 1 - KX_CP_CONFIRM; /* the newest results are x[r0..i] */
		if (r0 < start + KX_CP_MIN_BEFORE)
			continue;
		size_t b0 = r0 - start > KX_CP_WINDOW ? r0 - KX_CP_WINDOW : start;
		for (; hi < r0; hi++)
			window_add(&w, x[hi]);
		for (; lo < b0; lo++)
			window_remove(&w, x[lo]);
		double rmin = x[r0], rmax = x[r0];
		for (size_t j = r0 + 1; j <= i; j++) {
			rmin = x[j] < rmin ? x[j] : rmin;
			rmax = x[j] > rmax ? x[j] : rmax;
		}
		double before = median_sorted(w.v, w.n);
		bool up = rmin > before;
		if (!(up || rmax < before) || !(before > 0))
			continue;
		double recent[KX_CP_CONFIRM];
		memcpy(recent, x + r0, sizeof(recent));
		sort_small(recent, KX_CP_CONFIRM);
		double after = median_sorted(recent, KX_CP_CONFIRM), change = after / before - 1;
		if (fabs(change) < KX_CP_MIN_MOVE)
			continue;
		double p = mw_sorted(recent, KX_CP_CONFIRM, w.v, w.n, up);
		if (!(p < KX_CP_ALPHA))
			continue;
		if (found < cap)
			out[found] = (struct kx_change){
				.at = r0,
				.before = before,
				.after = after,
				.change = change,
				.p = p,
				.n_before = w.n,
				.worse = up == (order == KX_ORDER_ASCENDING),
			};
		found++;
		start = lo = hi = r0;
		w.n = 0;
	}
	*ret_n = found;
	return 0;
}

int kx_changepoint_rule(struct kx_buf *out)
{
	return kx_buf_printf(out,
		"change points (SPEC 6, docs/history.md): per implementation, its passed runs in time order,"
		" one median each\n"
		"a change point at run k: the %d runs k..k+%d against the up to %d before them since the last"
		" change point,\n"
		"  when a one-sided exact Mann-Whitney test gives p < %g (tied values at their midranks, exact"
		" given the ties),\n"
		"  all %d lie beyond the earlier median, and their median moved by at least %g %% from it;"
		" a new segment starts at k\n"
		"why: %d runs must agree, so one spike or one bad night raises nothing; a rank test, because"
		" benchmark noise is\n"
		"  spiky and bimodal, not Gaussian; all beyond the median and a %g %% floor keep tiny but"
		" significant moves out\n"
		"a series of fewer than %d runs has none; worse = slower (higher for lower-is-better metrics,"
		" lower for higher-is-better)\n",
		KX_CP_CONFIRM, KX_CP_CONFIRM - 1, KX_CP_WINDOW, KX_CP_ALPHA, KX_CP_CONFIRM, 100 * KX_CP_MIN_MOVE,
		KX_CP_CONFIRM, 100 * KX_CP_MIN_MOVE, KX_CP_MIN_SERIES);
}
