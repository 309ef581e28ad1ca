// SPDX-License-Identifier: MIT
/*
 * The sampling driver: the kindex protocol (warmup by time, then one flushed sample at a time
 * until the stopping rule says so, clocks polled along the way) and triton.testing.do_bench
 * (estimate, warmup and repeat counts, all samples queued back to back), both written once over
 * struct kx_bench_ops so the GPU, the CPU selftest and the unit tests' fake timers share them.
 *
 * Throttling is attributed per poll interval: the samples taken since the previous poll are
 * flagged when that poll or the current one saw a throttled clock. Polls run between samples,
 * never inside the timed region.
 */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int push(struct kx_bench_samples *s, uint64_t ns)
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
		s->cap = cap;
	}
	s->throttled[s->n] = 0;
	s->ns[s->n++] = ns;
	return 0;
}

void kx_bench_samples_release(struct kx_bench_samples *s)
{
	if (!s)
		return;
	free(s->ns);
	free(s->throttled);
	memset(s, 0, sizeof(*s));
}

/* The clock watch: what the last poll said and where the samples since then begin. */
struct watch {
	bool on;
	bool prev_throttled;
	double max_mhz;
	size_t since; /* first sample not yet attributed */
	double last_poll;
};

static int poll_clock(const struct kx_bench_protocol *p, const struct kx_bench_ops *ops, void *ctx,
		      struct watch *w, struct kx_bench_samples *s)
{
	struct kx_bench_clock c = { 0 };
	int r = ops->clock(ctx, &c);
	if (r < 0)
		return r;
	w->last_poll = ops->now(ctx);
	bool throttled = c.throttled || (c.reasons & KX_NVML_THROTTLE_MASK) != 0;
	if (c.sm_mhz > 0) {
		if (!s->clock_watched || c.sm_mhz < s->clock_min_mhz)
			s->clock_min_mhz = c.sm_mhz;
		if (!s->clock_watched || c.sm_mhz > s->clock_max_mhz)
			s->clock_max_mhz = c.sm_mhz;
		/* a probe without reasons: judge the clock against the highest seen */
		if (c.sm_mhz > w->max_mhz)
			w->max_mhz = c.sm_mhz;
		if (!c.reasons_known && c.sm_mhz < p->throttle_ratio * w->max_mhz)
			throttled = true;
	}
	s->clock_watched = true;
	s->reasons |= c.reasons & KX_NVML_THROTTLE_MASK;
	if (throttled || w->prev_throttled)
		for (size_t i = w->since; i < s->n; i++)
			if (!s->throttled[i]) {
				s->throttled[i] = 1;
				s->n_throttled++;
			}
	w->since = s->n;
	w->prev_throttled = throttled;
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
		r = ops->time_calls(ctx, 1, true, &ns);
		if (r < 0)
			return r;
		s->warmup_calls++;
	} while (ops->now(ctx) - t0 < p->warmup_s);

	if (w.on && (r = poll_clock(p, ops, ctx, &w, s)) < 0)
		return r;
	struct kx_bench_running run = { 0 };
	struct kx_bench_noise_history *hist = calloc(1, sizeof(*hist));
	if (!hist)
		return -ENOMEM;
	double start = ops->now(ctx);
	for (;;) {
		r = ops->time_calls(ctx, 1, true, &ns);
		if (r >= 0)
			r = push(s, ns);
		double now = ops->now(ctx);
		if (r >= 0 && w.on && now - w.last_poll >= p->poll_s)
			r = poll_clock(p, ops, ctx, &w, s);
		if (r < 0)
			break;
		kx_bench_running_add(&run, (double)ns);
		double noise = kx_bench_running_noise(&run);
		kx_bench_noise_push(hist, noise);
		if (progress && progress->fn)
			progress->fn(progress->arg, s, noise, now - start);
		s->stop = kx_bench_should_stop(p, s->n, run.sum * 1e-9, noise, hist, now - start);
		if (s->stop != KX_STOP_NO)
			break;
	}
	free(hist);
	if (r < 0)
		return r;
	if (w.on && w.since < s->n && (r = poll_clock(p, ops, ctx, &w, s)) < 0)
		return r;
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
	if (!ns)
		return -ENOMEM;
	r = ops->time_calls(ctx, s->db_repeat, false, ns);
	for (size_t i = 0; r >= 0 && i < s->db_repeat; i++)
		r = push(s, ns[i]);
	free(ns);
	if (r < 0)
		return r;
	/* do_bench watches no clocks; one poll after the batch still says how it ran */
	if (ops->clock) {
		struct watch w = { .on = true };
		if ((r = poll_clock(p, ops, ctx, &w, s)) < 0)
			return r;
	}
	s->stop = KX_STOP_DO_BENCH;
	s->wall_s = ops->now(ctx) - t0;
	if (progress && progress->fn)
		progress->fn(progress->arg, s, NAN, s->wall_s);
	return 0;
}

int kx_bench_measure(const struct kx_bench_protocol *p, const struct kx_bench_ops *ops, void *ctx,
		     const struct kx_bench_progress *progress, struct kx_bench_samples *ret)
{
	memset(ret, 0, sizeof(*ret));
	int r = p->kind == KX_PROTOCOL_DO_BENCH ? measure_dobench(p, ops, ctx, progress, ret)
						: measure_kindex(p, ops, ctx, progress, ret);
	if (r < 0)
		kx_bench_samples_release(ret);
	return r;
}
