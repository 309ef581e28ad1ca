// SPDX-License-Identifier: MIT
/*
 * The sampling driver: the kindex protocol (warmup by time, then one flushed sample at a time
 * until the stopping rule says so, clocks polled along the way) and triton.testing.do_bench
 * (estimate, warmup and repeat counts, all samples queued back to back), both written once over
 * struct kx_bench_ops so the GPU, the CPU selftest and the unit tests' fake timers share them.
 *
 * Throttling is judged per sample, by the SM clock the timer ops measured across that sample's
 * own timer pair: a sample below throttleRatio of the run's highest is flagged. NVML, polled
 * between samples (never inside the timed region), only records the clock event reasons it
 * reported; a reason is not a judgment (a 700 W part at its power cap runs at full speed).
 */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int push(struct kx_bench_samples *s, uint64_t ns, double mhz)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		uint64_t *v = realloc(s->ns, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->ns = v;
		uint8_t *t = realloc(s->throttled, cap);
		if (!t)
			return -ENOMEM;
		s->throttled = t;
		float *f = realloc(s->mhz, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		s->mhz = f;
		s->cap = cap;
	}
	s->throttled[s->n] = 0;
	s->mhz[s->n] = (float)mhz;
	s->ns[s->n++] = ns;
	return 0;
}

void bench_samples_release(struct kx_bench_samples *s)
{
	if (!s)
		return;
	free(s->ns);
	free(s->throttled);
	free(s->mhz);
	memset(s, 0, sizeof(*s));
}

size_t bench_flag_throttled(const float *mhz, size_t n, double ratio, uint8_t *flags)
{
	double max = 0;
	for (size_t i = 0; i < n; i++)
		max = mhz[i] > max ? mhz[i] : max;
	size_t count = 0;
	for (size_t i = 0; i < n; i++) {
		flags[i] = mhz[i] > 0 && mhz[i] < ratio * max;
		count += flags[i];
	}
	return count;
}

/* After sampling: the samples' own clocks judge them, and give the run's clock range. */
static void judge_clocks(const struct kx_bench_protocol *p, struct kx_bench_samples *s)
{
	bool any = false;
	for (size_t i = 0; i < s->n; i++) {
		if (!(s->mhz[i] > 0))
			continue;
		if (!any || s->mhz[i] < s->clock_min_mhz)
			s->clock_min_mhz = s->mhz[i];
		if (!any || s->mhz[i] > s->clock_max_mhz)
			s->clock_max_mhz = s->mhz[i];
		any = true;
	}
	s->n_throttled = bench_flag_throttled(s->mhz, s->n, p->throttle_ratio, s->throttled);
	s->clock_watched |= any;
}

/* The poll between samples (NVML): what clock event reasons it reported, for the record. */
struct watch {
	bool on;
	double last_poll;
};

static int poll_clock(const struct kx_bench_ops *ops, void *ctx, struct watch *w,
		      struct kx_bench_samples *s)
{
	struct kx_bench_clock c = { 0 };
	int r = ops->clock(ctx, &c);
	if (r < 0)
		return r;
	w->last_poll = ops->now(ctx);
	s->clock_watched = true;
	s->reasons |= c.reasons & KX_NVML_THROTTLE_MASK;
	return 0;
}

static int measure_kindex(const struct kx_bench_protocol *p, const struct kx_bench_ops *ops,
			  void *ctx, const struct kx_bench_progress *progress,
			  struct kx_bench_samples *s)
{
	struct watch w = { .on = ops->clock != NULL };
	uint64_t ns;
	int r;
	double t0 = ops->now(ctx);
	do {
		r = ops->time_calls(ctx, 1, true, &ns, NULL);
		if (r < 0)
			return r;
		s->warmup_calls++;
	} while (ops->now(ctx) - t0 < p->warmup_s);

	if (w.on && (r = poll_clock(ops, ctx, &w, s)) < 0)
		return r;
	struct kx_bench_running run = { 0 };
	struct kx_bench_noise_history *hist = calloc(1, sizeof(*hist));
	if (!hist)
		return -ENOMEM;
	double start = ops->now(ctx);
	for (;;) {
		double mhz = 0;
		r = ops->time_calls(ctx, 1, true, &ns, &mhz);
		if (r >= 0)
			r = push(s, ns, mhz);
		double now = ops->now(ctx);
		if (r >= 0 && w.on && now - w.last_poll >= p->poll_s)
			r = poll_clock(ops, ctx, &w, s);
		if (r < 0)
			break;
		bench_running_add(&run, (double)ns);
		double noise = bench_running_noise(&run);
		bench_noise_push(hist, noise);
		if (progress && progress->fn)
			progress->fn(progress->arg, s, noise, now - start);
		s->stop = bench_should_stop(p, s->n, run.sum * 1e-9, noise, hist, now - start);
		if (s->stop != KX_STOP_NO)
			break;
	}
	free(hist);
	if (r < 0)
		return r;
	judge_clocks(p, s);
	s->wall_s = ops->now(ctx) - t0;
	return 0;
}

/* int() of a positive double, as Python truncates it; at least 1 as do_bench clamps. */
static size_t count_from(double budget_ms, double estimate_ms, size_t cap)
{
	double v = estimate_ms > 0 ? floor(budget_ms / estimate_ms) : (double)cap;
	if (!(v >= 1))
		v = 1;
	return v > (double)cap ? cap : (size_t)v;
}

static int measure_dobench(const struct kx_bench_protocol *p, const struct kx_bench_ops *ops,
			   void *ctx, const struct kx_bench_progress *progress,
			   struct kx_bench_samples *s)
{
	double t0 = ops->now(ctx);
	/* fn(); synchronize() */
	int r = ops->warm(ctx, 1);
	if (r < 0)
		return r;
	uint64_t span;
	if ((r = ops->time_span(ctx, p->db_estimate_calls, &span)) < 0)
		return r;
	s->estimate_ms = (double)span * 1e-6 / (double)p->db_estimate_calls;
	s->db_warmup = count_from(p->db_warmup_ms, s->estimate_ms, p->max_samples);
	s->db_repeat = count_from(p->db_rep_ms, s->estimate_ms, p->max_samples);
	if ((r = ops->warm(ctx, s->db_warmup)) < 0)
		return r;
	s->warmup_calls = 1 + p->db_estimate_calls + s->db_warmup;
	uint64_t *ns = calloc(s->db_repeat, sizeof(*ns));
	double *mhz = calloc(s->db_repeat, sizeof(*mhz));
	r = ns && mhz ? ops->time_calls(ctx, s->db_repeat, false, ns, mhz) : -ENOMEM;
	for (size_t i = 0; r >= 0 && i < s->db_repeat; i++)
		r = push(s, ns[i], mhz[i]);
	free(ns);
	free(mhz);
	if (r < 0)
		return r;
	/* do_bench watches no clocks; the samples' own clocks and one poll still say how it ran */
	if (ops->clock) {
		struct watch w = { .on = true };
		if ((r = poll_clock(ops, ctx, &w, s)) < 0)
			return r;
	}
	judge_clocks(p, s);
	s->stop = KX_STOP_DO_BENCH;
	s->wall_s = ops->now(ctx) - t0;
	if (progress && progress->fn)
		progress->fn(progress->arg, s, NAN, s->wall_s);
	return 0;
}

int bench_measure(const struct kx_bench_protocol *p, const struct kx_bench_ops *ops, void *ctx,
		  const struct kx_bench_progress *progress, struct kx_bench_samples *ret)
{
	memset(ret, 0, sizeof(*ret));
	int r = p->kind == KX_PROTOCOL_DO_BENCH ? measure_dobench(p, ops, ctx, progress, ret)
						: measure_kindex(p, ops, ctx, progress, ret);
	if (r < 0)
		bench_samples_release(ret);
	return r;
}

int bench_tune(const struct kx_bench_tunable *t, int (*set)(void *set_ctx, int64_t value),
	       void *set_ctx, const struct kx_bench_ops *ops, void *ctx, size_t calls,
	       struct kx_bench_tuning *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (!t->n)
		return 0;
	if (t->n > KX_BENCH_MAX_CANDIDATES || !calls)
		return -EINVAL;
	uint64_t *ns = calloc(calls, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	int r = 0;
	for (size_t i = 0; r >= 0 && i < t->n; i++) {
		struct kx_bench_stats st;
		if ((r = set(set_ctx, t->values[i])) < 0 || (r = ops->warm(ctx, 1)) < 0 ||
		    (r = ops->time_calls(ctx, calls, true, ns, NULL)) < 0 ||
		    (r = bench_stats_compute(ns, calls, &st)) < 0)
			break;
		ret->values[i] = t->values[i];
		ret->median_ns[i] = (uint64_t)llround(st.median);
		if (ret->median_ns[i] < ret->median_ns[ret->chosen])
			ret->chosen = i;
	}
	free(ns);
	/* the case keeps the value it was set to last: set the winner again */
	if (r >= 0)
		r = set(set_ctx, t->values[ret->chosen]);
	if (r < 0) {
		memset(ret, 0, sizeof(*ret));
		return r;
	}
	ret->parameter = t->name;
	ret->n = t->n;
	ret->calls = calls;
	return 0;
}
