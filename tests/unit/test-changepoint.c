// SPDX-License-Identifier: MIT
/*
 * The change-point rule (include/kx/history.h, docs/history.md): exact Mann–Whitney p-values
 * against cases counted by hand and against brute-force enumeration of every arrangement (ties
 * included); the walk against a naive re-implementation of the rule; the simulation of issue 24
 * (generated series under three noise models, with a known step and without, detection and
 * false-alert rates asserted); the short, constant and small-step series that must have none.
 *
 * `test-changepoint` alone prints the measured rates as TAP diagnostics (docs/history.md quotes
 * them); `test-changepoint --alternative` measures the alternative rule docs/history.md proposes.
 * The generator is splitmix64 with Box–Muller, seeded per series: the same numbers on every
 * machine, so the counts are stable.
 */
#include "kx/history.h"
#include "tap.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-12 * fabs(b);
}

/* ---- a deterministic generator ---------------------------------------------------------------- */

struct rng {
	uint64_t s;
	bool has_spare;
	double spare;
};

static uint64_t splitmix64(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double uniform(struct rng *r) /* in (0, 1) */
{
	return ((double)(splitmix64(r) >> 11) + 0.5) * 0x1p-53;
}

static double gauss(struct rng *r)
{
	if (r->has_spare) {
		r->has_spare = false;
		return r->spare;
	}
	double m = sqrt(-2 * log(uniform(r))), t = 2 * M_PI * uniform(r);
	r->spare = m * sin(t);
	r->has_spare = true;
	return m * cos(t);
}

/* ---- exact p-values --------------------------------------------------------------------------- */

static double mw(const double *a, size_t na, const double *b, size_t nb, bool upper)
{
	double p = -1;
	if (kx_mann_whitney(a, na, b, nb, upper, &p) != 0)
		return -1;
	return p;
}

static void hand_counted(void)
{
	double four[] = { 1, 2, 3, 4 }, above[] = { 5, 6, 7, 8, 9 }, below[] = { -5, -4, -3, -2, -1 };
	ok(near(mw(above, 5, four, 4, true), 1.0 / 126), "5 all above 4: p = 1/C(9,5) = 1/126");
	ok(near(mw(below, 5, four, 4, false), 1.0 / 126), "5 all below 4, lower tail: p = 1/126");
	ok(near(mw(above, 5, four, 4, false), 1.0), "5 all above 4, lower tail: p = 1");
	ok(mw(above, 5, four, 3, true) > KX_CP_ALPHA && near(mw(above, 5, four, 3, true), 1.0 / 56),
	   "5 all above 3: p = 1/56, cannot reach %g: why a series needs %d results", KX_CP_ALPHA,
	   KX_CP_MIN_SERIES);
	double twenty[20];
	for (int i = 0; i < 20; i++)
		twenty[i] = i;
	double high[] = { 100, 101, 102, 103, 104 };
	ok(near(mw(high, 5, twenty, 20, true), 1.0 / 53130), "5 all above 20: p = 1/C(25,5) = 1/53130");
	/* U = 19 of 20: the all-above arrangement and the one with the lowest of the 5 below the top */
	double a19[] = { 3.5, 5, 6, 7, 8 }, a18[] = { 2.5, 5, 6, 7, 8 };
	ok(near(mw(a19, 5, four, 4, true), 2.0 / 126), "U = 19 of 20: p = 2/126");
	/* U = 18: deficits 0, 1 and 2 (2 = 2 or 1+1): 1 + 1 + 2 arrangements */
	ok(near(mw(a18, 5, four, 4, true), 4.0 / 126), "U = 18 of 20: p = 4/126");
	/* one value of the 5 in the middle of 20: U = 4*20 + 10 = 90; deficit <= 10 into <= 5 parts:
	 * 1+1+2+3+5+7+10+13+18+23+30 = 113 arrangements */
	double mid[] = { 9.5, 100, 101, 102, 103 };
	ok(near(mw(mid, 5, twenty, 20, true), 113.0 / 53130), "U = 90 of 100: p = 113/53130");

	/* Ties. Pooled {1,1,1,1,1,2,2,2,2}: the 1s share midrank 3, the 2s 7.5. The 5 hold one 1 and
	 * four 2s: W = 33, reached only by sets with all four 2s: C(5,1) = 5 of 126. */
	double b1[] = { 1, 1, 1, 1 }, a1[] = { 1, 2, 2, 2, 2 };
	ok(near(mw(a1, 5, b1, 4, true), 5.0 / 126), "ties: {1,2,2,2,2} vs {1,1,1,1}: p = 5/126");
	/* {1,2,3,4} vs {4,5,6,7,8}: the 4s share midrank 4.5; W = 34.5 is the maximum, reached by
	 * either 4 with 5..8: 2 of 126 — the tie costs significance (untied it would be 1/126) */
	double a2[] = { 4, 5, 6, 7, 8 };
	ok(near(mw(a2, 5, four, 4, true), 2.0 / 126), "ties: a shared 4: p = 2/126, not 1/126");
	/* all equal: every arrangement has the same rank sum */
	double c5[] = { 3, 3, 3, 3, 3 }, c4[] = { 3, 3, 3, 3 };
	ok(near(mw(c5, 5, c4, 4, true), 1.0) && near(mw(c5, 5, c4, 4, false), 1.0), "all values equal: p = 1");
	/* ties only inside each sample: still the most extreme arrangement, 1/126 */
	double b3[] = { 1, 1, 1, 1 }, a3[] = { 2, 2, 2, 2, 2 };
	ok(near(mw(a3, 5, b3, 4, true), 1.0 / 126), "ties within each side only: p = 1/126");

	double p;
	double nan_[] = { 1, 2, NAN, 4, 5 };
	ok(kx_mann_whitney(nan_, 5, four, 4, true, &p) == -EINVAL, "a NaN: -EINVAL");
	ok(kx_mann_whitney(above, 6, four, 4, true, &p) == -EINVAL, "6 against: -EINVAL");
	ok(kx_mann_whitney(above, 5, twenty, 0, true, &p) == -EINVAL, "none before: -EINVAL");
}

/* The oracle: every na-subset of the pooled values, its doubled midrank sum, counted. */
static void enumerate(const unsigned *rank2, size_t n, size_t na, size_t from, size_t k, unsigned sum,
		      unsigned w2, bool upper, uint64_t *tail, uint64_t *all)
{
	if (k == na) {
		(*all)++;
		*tail += upper ? sum >= w2 : sum <= w2;
		return;
	}
	for (size_t i = from; i + (na - k) <= n; i++)
		enumerate(rank2, n, na, i + 1, k + 1, sum + rank2[i], w2, upper, tail, all);
}

static double brute_p(const double *a, size_t na, const double *b, size_t nb, bool upper)
{
	double v[KX_CP_CONFIRM + KX_CP_WINDOW];
	unsigned rank2[KX_CP_CONFIRM + KX_CP_WINDOW], w2 = 0;
	size_t n = na + nb;
	memcpy(v, a, na * sizeof(*a));
	memcpy(v + na, b, nb * sizeof(*b));
	for (size_t i = 0; i < n; i++) {
		unsigned less = 0, equal = 0;
		for (size_t j = 0; j < n; j++) {
			less += v[j] < v[i];
			equal += v[j] == v[i];
		}
		rank2[i] = 2 * less + equal + 1; /* twice the midrank */
		if (i < na)
			w2 += rank2[i];
	}
	uint64_t tail = 0, all = 0;
	enumerate(rank2, n, na, 0, 0, 0, w2, upper, &tail, &all);
	return (double)tail / (double)all;
}

static void against_enumeration(void)
{
	struct rng r = { .s = 42 };
	size_t cases = 0, agree = 0;
	for (int t = 0; t < 300; t++) {
		size_t na = 1 + t % KX_CP_CONFIRM, nb = 1 + (size_t)(uniform(&r) * KX_CP_WINDOW);
		int levels = t % 3 == 0 ? 1000000 : 2 + t % 7; /* a third untied, the rest heavily tied */
		double a[KX_CP_CONFIRM], b[KX_CP_WINDOW];
		double shift = (t % 5) * 0.5;
		for (size_t i = 0; i < na; i++)
			a[i] = floor(uniform(&r) * levels) + shift;
		for (size_t i = 0; i < nb; i++)
			b[i] = floor(uniform(&r) * levels);
		bool upper = t % 2;
		double want = brute_p(a, na, b, nb, upper), got = mw(a, na, b, nb, upper);
		cases++;
		if (near(got, want))
			agree++;
		else
			diag("  na %zu nb %zu levels %d upper %d: got %.17g, want %.17g", na, nb, levels, upper, got,
			     want);
	}
	ok(agree == cases, "p equals brute-force enumeration in %zu of %zu random cases (1..5 vs 1..20, ties)",
	   agree, cases);
}

/* ---- the walk against a naive statement of the rule ------------------------------------------ */

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static double median(const double *v, size_t n)
{
	double s[KX_CP_WINDOW];
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/*
 * The rule as SPEC §6 states it, each window computed afresh. `margin` > 0 is the alternative of
 * docs/history.md (all 5 beyond the earlier median by at least that fraction); `brute` takes p
 * from the enumeration above instead of the module's kx_mann_whitney.
 */
static size_t naive(const double *x, size_t n, enum kx_order order, double margin, bool brute, struct kx_change *out,
		    size_t cap)
{
	size_t start = 0, found = 0;
	for (size_t i = 0; i < n; i++) {
		if (i < start + 8)
			continue;
		size_t r0 = i - 4, b0 = r0 >= start + 20 ? r0 - 20 : start, nb = r0 - b0;
		double before = median(x + b0, nb), after = median(x + r0, 5);
		bool above = true, below = true;
		for (size_t j = r0; j <= i; j++) {
			above = above && x[j] > before * (1 + margin);
			below = below && x[j] < before * (1 - margin);
		}
		if (!(above || below) || before <= 0 || fabs(after / before - 1) < 0.03)
			continue;
		double p = 1;
		if (brute)
			p = brute_p(x + r0, 5, x + b0, nb, above);
		else
			kx_mann_whitney(x + r0, 5, x + b0, nb, above, &p);
		if (p >= 0.01)
			continue;
		if (found < cap)
			out[found] = (struct kx_change){ .at = r0, .before = before, .after = after,
							 .change = after / before - 1, .p = p, .n_before = nb,
							 .worse = above == (order == KX_ORDER_ASCENDING) };
		found++;
		start = r0;
	}
	return found;
}

static void against_naive(void)
{
	struct rng r = { .s = 7 };
	size_t series = 0, same = 0, total = 0;
	for (int t = 0; t < 60; t++) {
		double x[90];
		double level = 1;
		for (size_t i = 0; i < KX_ARRAY_SIZE(x); i++) {
			if (uniform(&r) < 0.04)
				level *= uniform(&r) < 0.5 ? 1.06 : 0.95;
			double v = level * (1 + 0.01 * gauss(&r)) * (uniform(&r) < 0.3 ? 1.08 : 1);
			x[i] = t % 2 ? round(v * 100) / 100 : v; /* half the series rounded: ties */
		}
		struct kx_change got[32], want[32];
		size_t ng = 0, nw = naive(x, KX_ARRAY_SIZE(x), KX_ORDER_ASCENDING, 0, true, want, 32);
		int rc = kx_changepoints(x, KX_ARRAY_SIZE(x), KX_ORDER_ASCENDING, got, 32, &ng);
		bool eq = rc == 0 && ng == nw;
		for (size_t k = 0; eq && k < ng; k++)
			eq = got[k].at == want[k].at && got[k].n_before == want[k].n_before &&
			     near(got[k].before, want[k].before) && near(got[k].after, want[k].after) &&
			     near(got[k].change, want[k].change) && near(got[k].p, want[k].p) &&
			     got[k].worse == want[k].worse;
		series++;
		same += eq;
		total += nw;
		if (!eq)
			diag("  series %d: %zu change points, the naive rule %zu", t, ng, nw);
	}
	ok(same == series && total > 20,
	   "the walk agrees with a naive statement of the rule on %zu of %zu series (%zu change points)", same, series,
	   total);
}

/* ---- simulation (issue 24) -------------------------------------------------------------------- */

/*
 * The noise models of issue 24, each as the issue names it and, for spikes and bimodality, also
 * on top of the 1 % Gaussian noise every real benchmark has. A value is level × (1 + gauss·N(0,1))
 * × (1 + spike with probability spike_p) × (1 + mode with probability mode_p). `misses` names the
 * targets the rule as written does not meet under that model (docs/history.md, "Measured"):
 * those lines are TAP TODO, so a change that meets them shows as an unexpected pass.
 */
enum { MISS_DETECT = 1, MISS_FALSE = 2 };
static const struct model {
	const char *name;
	double gauss, spike_p, spike, mode_p, mode;
	int misses;
} models[] = {
	{ "1 % Gaussian", 0.01, 0, 0, 0, 0, 0 },
	{ "5 % spikes of +15 %", 0, 0.05, 0.15, 0, 0, 0 },
	{ "30 % bimodal at +8 %", 0, 0, 0, 0.30, 0.08, 0 },
	{ "5 % spikes of +15 % on 1 % Gaussian", 0.01, 0.05, 0.15, 0, 0, 0 },
	{ "30 % bimodal at +8 % on 1 % Gaussian", 0.01, 0, 0, 0.30, 0.08, MISS_FALSE },
};

static double draw(struct rng *r, const struct model *m, double level)
{
	double v = level * (1 + m->gauss * gauss(r));
	if (m->spike_p && uniform(r) < m->spike_p)
		v *= 1 + m->spike;
	if (m->mode_p && uniform(r) < m->mode_p)
		v *= 1 + m->mode;
	return v;
}

#define STEP_SERIES 10000 /* per model: the rate under bimodal noise is near the target, so many */
#define DOWN_SERIES 2000
#define STEP_LEN    60
#define STEP_AT     30
#define FREE_SERIES 1000
#define FREE_LEN    200

/* the rule under test: the module, or the alternative (--alternative) */
static double alt_margin;

static size_t changes(const double *x, size_t n, struct kx_change *out, size_t cap)
{
	size_t k = 0;
	if (alt_margin > 0)
		return naive(x, n, KX_ORDER_ASCENDING, alt_margin, false, out, cap);
	kx_changepoints(x, n, KX_ORDER_ASCENDING, out, cap, &k);
	return k;
}

struct tally {
	size_t series, caught, placed[5], worse, early, late_extra;
};

/* One series with a step of `step` (0.10 = +10 %) at STEP_AT. Caught when a change point in the
 * step's direction is reported once the step's first result is in and by the time its fifth is:
 * found at at + 4 in [STEP_AT, STEP_AT + 4], so at in [STEP_AT - 4, STEP_AT]; placed[d] counts
 * at = STEP_AT - d. */
static void step_series(const struct model *m, double step, uint64_t seed, struct tally *t)
{
	struct rng r = { .s = seed };
	double x[STEP_LEN];
	for (size_t i = 0; i < STEP_LEN; i++)
		x[i] = draw(&r, m, i < STEP_AT ? 1 : 1 + step);
	struct kx_change c[STEP_LEN / 4 + 1];
	size_t n = changes(x, STEP_LEN, c, KX_ARRAY_SIZE(c));
	t->series++;
	bool caught = false;
	for (size_t k = 0; k < n; k++) {
		if (!caught && c[k].at + 4 >= STEP_AT && c[k].at <= STEP_AT && (c[k].change > 0) == (step > 0)) {
			caught = true;
			t->caught++;
			t->placed[STEP_AT - c[k].at]++;
			t->worse += c[k].worse;
		} else if (c[k].at + 4 < STEP_AT) {
			t->early++;
		} else {
			t->late_extra++;
		}
	}
}

/* ok(), or for a documented miss the TAP TODO line that says so (a pass there fails the test) */
static void target(bool met, bool known_miss, const char *what, double measured)
{
	if (!known_miss) {
		ok(met, "%s (%.2f)", what, measured);
		return;
	}
	printf("%sok %d - %s (%.2f) # TODO the rule as written misses this: docs/history.md\n", met ? "" : "not ",
	       ++tap_n, what, measured);
	tap_failed += met;
}

static void simulation(void)
{
	for (size_t mi = 0; mi < KX_ARRAY_SIZE(models); mi++) {
		const struct model *m = &models[mi];
		struct tally up = { 0 }, down = { 0 };
		for (uint64_t s = 0; s < STEP_SERIES; s++)
			step_series(m, +0.10, 1000003 * (mi + 1) + s, &up);
		for (uint64_t s = 0; s < DOWN_SERIES; s++)
			step_series(m, -0.10, 2000003 * (mi + 1) + s, &down);
		size_t results = 0, alerts = 0;
		for (uint64_t s = 0; s < FREE_SERIES; s++) {
			struct rng r = { .s = 3000017 * (mi + 1) + s };
			double x[FREE_LEN];
			for (size_t i = 0; i < FREE_LEN; i++)
				x[i] = draw(&r, m, 1);
			alerts += changes(x, FREE_LEN, NULL, 0);
			results += FREE_LEN;
		}
		double caught = 100.0 * up.caught / up.series, caught_down = 100.0 * down.caught / down.series;
		double per_1000 = 1000.0 * alerts / results;
		diag("%s: +10 %% step caught within 5 results in %zu of %zu series (%.1f %%): at the step %zu, "
		     "1 early %zu, 2 early %zu, 3-4 early %zu; other change points in those series: %zu before the "
		     "step, %zu after",
		     m->name, up.caught, up.series, caught, up.placed[0], up.placed[1], up.placed[2],
		     up.placed[3] + up.placed[4], up.early, up.late_extra);
		diag("%s: -10 %% step caught within 5 results in %zu of %zu (%.1f %%), %zu of them called worse",
		     m->name, down.caught, down.series, caught_down, down.worse);
		diag("%s: %zu false alerts in %zu step-free results = %.2f per 1,000", m->name, alerts, results,
		     per_1000);
		char what[160];
		snprintf(what, sizeof(what), "%s: a +10 %% step is caught within 5 results in >= 98 %% of series",
			 m->name);
		target(caught >= 98, alt_margin == 0 && (m->misses & MISS_DETECT), what, caught);
		snprintf(what, sizeof(what), "%s: false alerts <= 4.6 per 1,000 results", m->name);
		target(per_1000 <= 4.6, alt_margin == 0 && (m->misses & MISS_FALSE), what, per_1000);
		ok(up.caught > 0 && up.worse == up.caught,
		   "%s: every +10 %% step of a lower-is-better metric is a regression", m->name);
		/* a spike within the 5 (1 - 0.95^5 = 23 %) keeps them from all lying below: 77 % under spikes */
		ok(caught_down >= 70 && down.worse == 0,
		   "%s: a -10 %% step is an improvement, never a regression (found in %.1f %%)", m->name, caught_down);
	}
}

/* ---- series that must have none, fields, order, errors ---------------------------------------- */

static size_t count(const double *x, size_t n)
{
	size_t k = 99;
	kx_changepoints(x, n, KX_ORDER_ASCENDING, NULL, 0, &k);
	return k;
}

static void edges(void)
{
	double x[120];
	/* a step right after 4: the first place a change can be */
	for (size_t i = 0; i < 9; i++)
		x[i] = i < 4 ? 1 : 2;
	struct kx_change c[8];
	size_t n = 0;
	ok(kx_changepoints(x, 9, KX_ORDER_ASCENDING, c, 8, &n) == 0 && n == 1 && c[0].at == 4 &&
	   c[0].n_before == 4 && near(c[0].p, 1.0 / 126), "9 results, 4 then 5 doubled: one change at 4, p = 1/126");
	bool none = true;
	for (size_t len = 0; len < KX_CP_MIN_SERIES; len++) {
		for (size_t i = 0; i < len; i++)
			x[i] = i < len / 2 ? 1 : 10;
		none = none && count(x, len) == 0;
	}
	ok(none, "series of 0..%d results have none, whatever their step", KX_CP_MIN_SERIES - 1);
	for (size_t i = 0; i < 8; i++)
		x[i] = i < 3 ? 1 : 2;
	ok(count(x, 8) == 0, "8 results, 3 then 5 doubled: none (5 vs 3 cannot reach p < %g)", KX_CP_ALPHA);

	for (size_t i = 0; i < 120; i++)
		x[i] = 58.81;
	ok(count(x, 120) == 0, "a constant series: none");

	for (size_t i = 0; i < 120; i++)
		x[i] = i < 60 ? 1 : 1.02;
	ok(count(x, 120) == 0, "a clean 2 %% step: none (below the 3 %% floor)");
	struct rng r = { .s = 99 };
	for (size_t i = 0; i < 120; i++)
		x[i] = (i < 60 ? 1 : 1.02) * (1 + 0.001 * gauss(&r));
	ok(count(x, 120) == 0, "a 2 %% step under 0.1 %% noise: none");
	for (size_t i = 0; i < 120; i++)
		x[i] = i < 60 ? 1 : 1.03;
	ok(count(x, 120) == 1, "a clean 3 %% step: one (the floor is inclusive)");

	/* two steps, up then back: a change at each, the second against its own segment only */
	for (size_t i = 0; i < 90; i++)
		x[i] = i >= 30 && i < 60 ? 1.1 : 1.0;
	ok(kx_changepoints(x, 90, KX_ORDER_ASCENDING, c, 8, &n) == 0 && n == 2, "up 10 %% and back: two change points");
	ok(n == 2 && c[0].at == 30 && c[0].n_before == 20 && c[0].before == 1.0 && c[0].after == 1.1 &&
	   near(c[0].change, 0.1) && near(c[0].p, 1.0 / 53130) && c[0].worse,
	   "the first at 30: 1 -> 1.1, +10 %%, p = 1/53130, 20 before, worse");
	ok(n == 2 && c[1].at == 60 && c[1].n_before == 20 && c[1].before == 1.1 && c[1].after == 1.0 &&
	   near(c[1].change, 1.0 / 1.1 - 1) && !c[1].worse, "the second at 60: back to 1, better");
	ok(kx_changepoints(x, 90, KX_ORDER_DESCENDING, c, 8, &n) == 0 && n == 2 && !c[0].worse && c[1].worse,
	   "higher-is-better: the rise is an improvement, the fall a regression");
	/* a step soon after a change: tested against the new segment's 4 results only */
	for (size_t i = 0; i < 50; i++)
		x[i] = i < 30 ? 1.0 : i < 34 ? 1.1 : 1.3;
	ok(kx_changepoints(x, 50, KX_ORDER_ASCENDING, c, 8, &n) == 0 && n == 2 && c[0].at == 30 && c[1].at == 34 &&
	   c[1].n_before == 4 && c[1].before == 1.1, "a second step 4 results after the first: found against those 4");

	/* one spike, or four in a row, is no change */
	for (size_t i = 0; i < 60; i++)
		x[i] = i >= 30 && i < 34 ? 2 : 1;
	ok(count(x, 60) == 0, "4 high results in a row: none (5 must agree)");

	/* cap: the count comes back whatever fits */
	for (size_t i = 0; i < 120; i++)
		x[i] = (i / 20) % 2 ? 1.5 : 1;
	size_t all = count(x, 120);
	ok(kx_changepoints(x, 120, KX_ORDER_ASCENDING, c, 2, &n) == 0 && n == all && all == 5 && c[1].at == 40,
	   "cap 2 of 5: two written, 5 counted");
	ok(kx_changepoints(x, 120, KX_ORDER_ASCENDING, NULL, 0, &n) == 0 && n == 5, "cap 0, out NULL: the count");

	x[7] = INFINITY;
	n = 77;
	ok(kx_changepoints(x, 120, KX_ORDER_ASCENDING, c, 8, &n) == -EINVAL && n == 77,
	   "an infinite value: -EINVAL, nothing written");
	ok(kx_changepoints(NULL, 3, KX_ORDER_ASCENDING, NULL, 0, &n) == -EINVAL, "NULL series: -EINVAL");
	ok(kx_changepoints(NULL, 0, KX_ORDER_ASCENDING, NULL, 0, &n) == 0 && n == 0, "empty series: none");
}

static void rule_text(void)
{
	struct kx_buf b = { 0 }, b2 = { 0 };
	ok(kx_changepoint_rule(&b) == 0 && kx_changepoint_rule(&b2) == 0 && b.len == b2.len &&
	   memcmp(b.ptr, b2.ptr, b.len) == 0, "the rule's text: the same bytes each call");
	bool plain = b.len > 0 && b.ptr[b.len - 1] == '\n';
	size_t lines = 0;
	for (const char *p = b.ptr; plain && *p; p = strchr(p, '\n') + 1, lines++)
		plain = *p != '#' && *p != '\n';
	ok(plain && lines >= 3 && lines <= 10, "the rule is lines of text, none a '#' comment or empty (%zu lines)", lines);
	ok(strstr(b.ptr, "the 5 runs") && strstr(b.ptr, "up to 20 before") && strstr(b.ptr, "p < 0.01") &&
	   strstr(b.ptr, "at least 3 %") && strstr(b.ptr, "Mann-Whitney") && strstr(b.ptr, "fewer than 9 runs"),
	   "the rule names its parameters: 5, 20, p < 0.01, 3 %%, 9");
	printf("%s", b.ptr);
	kx_buf_release(&b);
	kx_buf_release(&b2);
}

/* not a timed assertion (docs/performance.md): a figure for docs/history.md */
static void cost(void)
{
	enum { LEN = 10000, REPS = 20 };
	static double x[LEN];
	struct rng r = { .s = 5 };
	for (size_t i = 0; i < LEN; i++)
		x[i] = round(draw(&r, &models[4], 1 + 0.1 * ((i / 500) % 2)) * 100) / 100;
	struct timespec t0, t1;
	size_t n = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int k = 0; k < REPS; k++)
		kx_changepoints(x, LEN, KX_ORDER_ASCENDING, NULL, 0, &n);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double us = ((t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3) / REPS;
	diag("cost: %d results (bimodal, rounded to 0.01, a 10 %% step every 500) in %.0f us = %.2f us per 100 "
	     "results, %zu change points", LEN, us, us / (LEN / 100), n);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--alternative") == 0) {
		/* docs/history.md: the alternative measured under the same models */
		alt_margin = 0.015;
		diag("the alternative: all 5 beyond the earlier median by at least %g %%", 100 * alt_margin);
		simulation();
		return tap_done();
	}
	hand_counted();
	against_enumeration();
	against_naive();
	edges();
	rule_text();
	simulation();
	cost();
	return tap_done();
}
