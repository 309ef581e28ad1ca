// SPDX-License-Identifier: MIT
/*
 * The sampling rules, driven by a fake timer whose clock advances by exactly the samples it
 * returns: the stopping rule (10 samples, 0.5 s measured, 0.5% noise, 15 s timeout, the minimum
 * count holding past the timeout, the sample cap), warmup by time, throttle flagging from NVML
 * reasons and from a probed clock, and do_bench's warmup and repeat counts from its estimate.
 */
#include "bench.h"
#include "tap.h"

#include <math.h>

struct fake {
	double t;           /* the fake host clock, seconds */
	uint64_t flush_ns;  /* time a flush takes (counts in do_bench's estimate span) */
	uint64_t (*next)(struct fake *f);
	size_t timed;       /* timed calls so far */
	size_t warm_calls, time_calls_calls, last_n, span_calls;
	bool last_blocking;
	size_t fail_at;     /* time_calls fails with -EIO at this timed call (0 = never) */
	int polls;
	struct kx_bench_clock (*clock)(struct fake *f, int poll);
	uint64_t base;      /* sample value for the generators below */
	double (*mhz)(struct fake *f); /* the SM clock of timed call f->timed; NULL: unknown */
	int64_t value;      /* bench_tune: the value set last */
	size_t sets;
	int set_fails;      /* set() fails with -EINVAL for this value (0 = never) */
};

static uint64_t constant(struct fake *f)
{
	return f->base;
}

static uint64_t alternating(struct fake *f)
{
	return f->timed % 2 ? 2 * f->base : f->base;
}

static uint64_t jitter(struct fake *f)
{
	return f->timed % 2 ? f->base + f->base / 1000 : f->base - f->base / 1000;
}

static uint64_t slow_noisy(struct fake *f)
{
	return f->timed % 2 ? 3000000000ull : 1000000000ull;
}

/* a tuned case: 25 ms at 1024, 24 ms otherwise, and every third timed call 5 ms slower */
static uint64_t by_value(struct fake *f)
{
	return (f->value == 1024 ? 25000000u : 24000000u) + (f->timed % 3 == 1 ? 5000000u : 0);
}

static int f_set(void *ctx, int64_t value)
{
	struct fake *f = ctx;
	if (f->set_fails && value == f->set_fails)
		return -EINVAL;
	f->value = value;
	f->sets++;
	return 0;
}

static int f_time_calls(void *ctx, size_t n, bool blocking, uint64_t *ret, double *ret_mhz)
{
	struct fake *f = ctx;
	f->time_calls_calls++;
	f->last_n = n;
	f->last_blocking = blocking;
	for (size_t i = 0; i < n; i++) {
		if (f->fail_at && f->timed + 1 == f->fail_at)
			return -EIO;
		ret[i] = f->next(f);
		if (ret_mhz)
			ret_mhz[i] = f->mhz ? f->mhz(f) : 0;
		f->timed++;
		f->t += (double)(ret[i] + f->flush_ns) * 1e-9;
	}
	return 0;
}

static int f_time_span(void *ctx, size_t n, uint64_t *ret)
{
	struct fake *f = ctx;
	f->span_calls++;
	*ret = n * (f->next(f) + f->flush_ns);
	f->t += (double)*ret * 1e-9;
	return 0;
}

static int f_warm(void *ctx, size_t n)
{
	struct fake *f = ctx;
	f->warm_calls += n;
	f->t += (double)(n * f->base) * 1e-9;
	return 0;
}

static int f_clock(void *ctx, struct kx_bench_clock *ret)
{
	struct fake *f = ctx;
	*ret = f->clock(f, f->polls++);
	return 0;
}

static double f_now(void *ctx)
{
	return ((struct fake *)ctx)->t;
}

static bool near_rel(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fabs(b);
}

static const struct kx_bench_ops fake_ops = { f_time_calls, f_time_span, f_warm, NULL, f_now };
static const struct kx_bench_ops watched_ops = { f_time_calls, f_time_span, f_warm, f_clock, f_now };

static void stop_rule(void)
{
	struct kx_bench_protocol p;
	bench_protocol_init(&p, KX_PROTOCOL_KINDEX, KX_TIMER_CUDA_EVENTS);
	ok(p.min_samples == 10 && p.min_time_s == 0.5 && p.noise_target == 0.005 && p.timeout_s == 15,
	   "defaults: 10 samples, 0.5 s, 0.5%% noise, 15 s");
	ok(bench_should_stop(&p, 9, 10, 0, NULL, 1) == KX_STOP_NO, "9 samples never stop, even quiet");
	ok(bench_should_stop(&p, 9, 100, 1, NULL, 100) == KX_STOP_NO,
	   "9 samples do not stop at the timeout: the minimum count holds");
	ok(bench_should_stop(&p, 10, 0.5, 0.005, NULL, 1) == KX_STOP_CONVERGED,
	   "10 samples, 0.5 s, noise at the target: converged");
	ok(bench_should_stop(&p, 10, 0.49, 0.001, NULL, 1) == KX_STOP_NO, "short of 0.5 s: go on");
	ok(bench_should_stop(&p, 500, 1, 0.0051, NULL, 14.9) == KX_STOP_NO, "noisy before timeout: go on");
	ok(bench_should_stop(&p, 500, 1, 0.0051, NULL, 15) == KX_STOP_TIMEOUT, "noisy at timeout: stop");
	ok(bench_should_stop(&p, 100000, 0, INFINITY, NULL, 0) == KX_STOP_MAX_SAMPLES, "cap reached");
	is_str(bench_stop_name(KX_STOP_CONVERGED), "converged", "stop reason names");
}

/* nvbench's settled noise: the trailing history of the noise no longer moves */
static void settle_rule(void)
{
	struct kx_bench_protocol p;
	bench_protocol_init(&p, KX_PROTOCOL_KINDEX, KX_TIMER_CUDA_EVENTS);
	ok(p.settle_history == 64 && p.settle_every == 16 && p.settle_spread == 0.05 &&
	   KX_BENCH_NOISE_WINDOW == 512, "defaults: more than 64 values of 512, every 16 samples, under 5 %%");
	struct kx_bench_noise_history h = { 0 };
	ok(isinf(bench_noise_spread(&h)), "an empty history has no spread");
	bench_noise_push(&h, INFINITY);
	ok(h.len == 0, "an undefined noise (one sample) is not kept");
	for (int i = 0; i < 64; i++)
		bench_noise_push(&h, 0.02);
	ok(h.len == 64 && bench_noise_spread(&h) == 0, "64 equal values: spread 0");
	ok(bench_should_stop(&p, 160, 1, 0.02, &h, 1) == KX_STOP_NO,
	   "64 values are not enough history (more than 64)");
	bench_noise_push(&h, 0.02);
	ok(bench_should_stop(&p, 160, 1, 0.02, &h, 1) == KX_STOP_SETTLED,
	   "65 equal values at 2 %% noise, 160 samples: settled");
	ok(bench_should_stop(&p, 161, 1, 0.02, &h, 1) == KX_STOP_NO, "only every 16 samples");
	ok(bench_should_stop(&p, 160, 0.4, 0.02, &h, 1) == KX_STOP_NO, "not before 0.5 s measured");
	ok(bench_should_stop(&p, 160, 1, 0.004, &h, 1) == KX_STOP_CONVERGED, "under the target: converged first");
	ok(bench_should_stop(&p, 160, 1, 0.02, NULL, 20) == KX_STOP_TIMEOUT, "no history: the timeout");
	is_str(bench_stop_name(KX_STOP_SETTLED), "noise-settled", "its name");

	/* alternating 2 % and 2.5 %: about the newest (2.5 %) the spread is ~14 % */
	h = (struct kx_bench_noise_history){ 0 };
	for (int i = 0; i < 100; i++)
		bench_noise_push(&h, i % 2 ? 0.025 : 0.02);
	double spread = bench_noise_spread(&h);
	ok(spread > 0.13 && spread < 0.15, "a noise still moving by 20 %%: spread %.3f", spread);
	ok(bench_should_stop(&p, 160, 1, 0.025, &h, 1) == KX_STOP_NO &&
	   bench_should_stop(&p, 160, 1, 0.025, &h, 15) == KX_STOP_TIMEOUT, "not settled: on to the timeout");
	/* the window keeps the newest 512: older values fall out */
	h = (struct kx_bench_noise_history){ 0 };
	for (int i = 0; i < 600; i++)
		bench_noise_push(&h, i < 88 ? 1.0 : 0.5);
	ok(h.len == 512 && bench_noise_spread(&h) == 0, "600 values: the first 88 have left the window");
	bench_noise_push(&h, 0.55);
	ok(near_rel(bench_noise_spread(&h), sqrt(511 * 0.05 * 0.05 / 511) / 0.55, 1e-9),
	   "spread about the newest value: %.5f", bench_noise_spread(&h));
}

static void kindex_protocol(void)
{
	struct kx_bench_protocol p;
	bench_protocol_init(&p, KX_PROTOCOL_KINDEX, KX_TIMER_CUDA_EVENTS);
	struct kx_bench_samples s;

	struct fake f = { .next = constant, .base = 1000000 };
	ok(bench_measure(&p, &fake_ops, &f, NULL, &s) == 0, "constant 1 ms samples");
	ok(s.warmup_calls >= 100 && s.warmup_calls <= 101, "warmup by time: 0.1 s of 1 ms calls (%zu)",
	   s.warmup_calls);
	ok(s.n == 500 && s.stop == KX_STOP_CONVERGED, "quiet: stops at 0.5 s measured (%zu samples)",
	   s.n);
	ok(f.last_blocking && f.last_n == 1, "kindex samples one blocking call at a time");
	ok(!s.clock_watched && s.n_throttled == 0, "no clock op: nothing watched, nothing flagged");
	bench_samples_release(&s);

	f = (struct fake){ .next = jitter, .base = 1000000 };
	bench_measure(&p, &fake_ops, &f, NULL, &s);
	ok(s.n == 500 && s.stop == KX_STOP_CONVERGED, "0.1%% jitter is under the noise target");
	bench_samples_release(&s);

	f = (struct fake){ .next = alternating, .base = 1000000 };
	bench_measure(&p, &fake_ops, &f, NULL, &s);
	ok(s.stop == KX_STOP_SETTLED && s.n >= 334 && s.n % 16 == 0 && s.n < 1500 && s.wall_s < 2.5,
	   "33%% noise that no longer moves stops as settled: %zu samples, %.2f s, not the 15 s timeout",
	   s.n, s.wall_s);
	bench_samples_release(&s);

	p.settle_spread = 0; /* nothing settles: the timeout, as before */
	f = (struct fake){ .next = alternating, .base = 1000000 };
	bench_measure(&p, &fake_ops, &f, NULL, &s);
	ok(s.stop == KX_STOP_TIMEOUT && s.n > 9900 && s.n < 10100,
	   "never settling, 33%% noise runs to the 15 s timeout (%zu samples of 1.5 ms on average)", s.n);
	bench_samples_release(&s);
	p.settle_spread = 0.05;

	p.max_samples = 200;
	f = (struct fake){ .next = alternating, .base = 1000000 };
	bench_measure(&p, &fake_ops, &f, NULL, &s);
	ok(s.stop == KX_STOP_MAX_SAMPLES && s.n == 200, "the sample cap stops a noisy run");
	bench_samples_release(&s);
	p.max_samples = 100000;

	f = (struct fake){ .next = slow_noisy, .base = 1000000000 };
	bench_measure(&p, &fake_ops, &f, NULL, &s);
	ok(s.stop == KX_STOP_TIMEOUT && s.n == 10,
	   "1-3 s samples: the timeout passes at 8 but 10 samples are taken");
	bench_samples_release(&s);

	f = (struct fake){ .next = constant, .base = 1000000, .fail_at = 20 };
	ok(bench_measure(&p, &fake_ops, &f, NULL, &s) == -EIO && s.ns == NULL && s.n == 0,
	   "a failing timer fails the measurement and leaves no samples");
}

/* the SM clock of each sample, as the GPU measures it across the sample's event pair */
static double steady(struct fake *f)
{
	(void)f;
	return 1980;
}

static double dip(struct fake *f)
{
	/* timed calls 300..349 (warmup included) run 25 % down, 400 at 1700 MHz: within 90 % of 1980 */
	return f->timed >= 300 && f->timed < 350 ? 1485 : f->timed == 400 ? 1800 : 1980;
}

static struct kx_bench_clock nvml_power_cap(struct fake *f, int poll)
{
	(void)f;
	(void)poll;
	/* a 700 W part at its power limit: NVML reports the software power cap at every poll */
	return (struct kx_bench_clock){ .sm_mhz = 1980, .reasons_known = true, .reasons = 0x4,
					.throttled = true };
}

static void clock_watch(void)
{
	const float mhz[] = { 1980, 0, 1700, 1800, 1782, 1781.9f };
	uint8_t flags[6];
	ok(bench_flag_throttled(mhz, 6, 0.9, flags) == 2 && !flags[0] && !flags[1] && flags[2] &&
	   !flags[3] && !flags[4] && flags[5],
	   "a sample below 90 %% of the run's highest clock is throttled; an unknown clock is not");
	const float none[] = { 0, 0 };
	ok(bench_flag_throttled(none, 2, 0.9, flags) == 0 && !flags[0] && !flags[1],
	   "no clock measured: nothing flagged");

	struct kx_bench_protocol p;
	bench_protocol_init(&p, KX_PROTOCOL_KINDEX, KX_TIMER_CUDA_EVENTS);
	struct kx_bench_samples s;
	struct fake f = { .next = constant, .base = 1000000, .mhz = dip };
	bench_measure(&p, &fake_ops, &f, NULL, &s);
	size_t warm = s.warmup_calls, want = 0;
	for (size_t t = 300; t < 350; t++)
		want += t >= warm;
	ok(s.clock_watched && s.clock_min_mhz == 1485 && s.clock_max_mhz == 1980, "the samples' clock range");
	ok(s.n_throttled == want && want > 0, "exactly the samples that ran slow are flagged (%zu of %zu)",
	   s.n_throttled, want);
	bool exact = true;
	for (size_t i = 0; i < s.n; i++)
		exact &= s.throttled[i] == (i + warm >= 300 && i + warm < 350);
	ok(exact, "each flag is its own sample's: none before, none after, 1800 MHz not");
	bench_samples_release(&s);

	f = (struct fake){ .next = constant, .base = 1000000, .mhz = steady, .clock = nvml_power_cap };
	bench_measure(&p, &watched_ops, &f, NULL, &s);
	ok(s.n_throttled == 0 && s.reasons == 0x4,
	   "NVML's power cap at every poll, the clock steady: recorded, nothing flagged");
	bench_samples_release(&s);

	f = (struct fake){ .next = constant, .base = 1000000 };
	bench_measure(&p, &fake_ops, &f, NULL, &s);
	ok(!s.clock_watched && s.n_throttled == 0, "no clocks at all: nothing watched, nothing flagged");
	bench_samples_release(&s);
}

static void dobench(void)
{
	struct kx_bench_protocol p;
	bench_protocol_init(&p, KX_PROTOCOL_DO_BENCH, KX_TIMER_CUDA_EVENTS);
	ok(p.db_warmup_ms == 25 && p.db_rep_ms == 100 && p.db_estimate_calls == 5 &&
	   p.db_flush_bytes == 268435456, "do_bench: 25 ms, 100 ms, 5 calls, 256 MiB");
	struct kx_bench_samples s;

	/* 4 ms calls + 1 ms flush: the estimate includes the flush, as do_bench's does */
	struct fake f = { .next = constant, .base = 4000000, .flush_ns = 1000000 };
	ok(bench_measure(&p, &fake_ops, &f, NULL, &s) == 0, "do_bench run");
	ok(s.estimate_ms == 5 && s.db_warmup == 5 && s.db_repeat == 20,
	   "estimate 5 ms: 5 warmup calls, 20 repeats");
	ok(f.warm_calls == 6 && f.span_calls == 1, "one call first, then the 5 warmup calls");
	ok(f.time_calls_calls == 1 && f.last_n == 20 && !f.last_blocking,
	   "all 20 repeats enqueued back to back in one batch");
	ok(s.n == 20 && s.stop == KX_STOP_DO_BENCH, "20 samples, stopped by the repeat count");
	bench_samples_release(&s);

	f = (struct fake){ .next = constant, .base = 300000000 };
	bench_measure(&p, &fake_ops, &f, NULL, &s);
	ok(s.db_warmup == 1 && s.db_repeat == 1, "a 300 ms call: max(1, int(...)) gives 1 and 1");
	bench_samples_release(&s);

	f = (struct fake){ .next = constant, .base = 300000 };
	bench_measure(&p, &fake_ops, &f, NULL, &s);
	ok(s.db_warmup == 83 && s.db_repeat == 333, "a 0.3 ms call: int(25/0.3) = 83, int(100/0.3) = 333");
	bench_samples_release(&s);
}

static void tune(void)
{
	struct kx_bench_tunable t = { "chunkColumns", 3, { 1024, 1536, 2048 } };
	struct kx_bench_tuning tn;
	struct fake f = { .next = by_value };
	ok(bench_tune(&t, f_set, &f, &fake_ops, &f, 3, &tn) == 0, "tuning runs");
	ok(tn.parameter && !strcmp(tn.parameter, "chunkColumns") && tn.n == 3 && tn.calls == 3,
	   "it names the parameter, the candidates and the calls each");
	ok(tn.median_ns[0] == 25000000 && tn.median_ns[1] == 24000000 && tn.median_ns[2] == 24000000,
	   "each candidate's median of 3, the slow third call left out");
	ok(tn.chosen == 1 && tn.values[tn.chosen] == 1536, "the fastest wins, the first of equal medians");
	ok(f.value == 1536 && f.sets == 4, "and is set again last (4 sets), so the case runs with it");
	ok(f.warm_calls == 3 && f.time_calls_calls == 3 && f.last_n == 3 && f.last_blocking,
	   "one untimed call, then 3 blocked timed calls, per candidate");

	struct kx_bench_tunable none = { 0 };
	f = (struct fake){ .next = by_value };
	ok(bench_tune(&none, f_set, &f, &fake_ops, &f, 3, &tn) == 0 && !tn.parameter && !f.sets &&
	   !f.warm_calls && !f.time_calls_calls, "nothing to tune: nothing is run, nothing chosen");

	f = (struct fake){ .next = by_value, .set_fails = 2048 };
	ok(bench_tune(&t, f_set, &f, &fake_ops, &f, 3, &tn) == -EINVAL && !tn.parameter,
	   "a value the case refuses is an error, and nothing is chosen");
	f = (struct fake){ .next = by_value, .fail_at = 5 };
	ok(bench_tune(&t, f_set, &f, &fake_ops, &f, 3, &tn) == -EIO && !tn.parameter,
	   "so is a timed call that fails");
}

int main(void)
{
	stop_rule();
	settle_rule();
	kindex_protocol();
	clock_watch();
	dobench();
	tune();
	return tap_done();
}
