// SPDX-License-Identifier: MIT
/*
 * The measurement protocols as published documents. Every parameter the sampler obeys is written
 * into the BenchmarkProtocol spec, so the protocol digest a run carries pins how it was measured;
 * change a default here and the digest changes with it. Device-specific values (the L2 size that
 * is flushed) are named by rule here and recorded per run, so one protocol document serves every
 * GPU.
 *
 * Two protocols: the harness's own (family kindex_bench; nvbench-style stopping on noise) and
 * triton.testing.do_bench reproduced step by step (family triton_do_bench) for parity checks
 * against Python harnesses. The CPU selftest uses the kindex rules with a CPU timer and is its own
 * family, so its runs are never mistaken for GPU measurements.
 */
#include "bench.h"
#include "numeric.h"

#include <math.h>
#include <string.h>

void bench_protocol_init(struct kx_bench_protocol *p, enum kx_bench_protocol_kind kind,
			 enum kx_bench_timer timer)
{
	/* nvbench's defaults for the stopping rule: 10 samples, 0.5 s, 0.5% noise, 15 s */
	*p = (struct kx_bench_protocol){
		.kind = kind,
		.timer = timer,
		.warmup_s = 0.1,
		.min_samples = 10,
		.min_time_s = 0.5,
		.noise_target = 0.005,
		/* nvbench's stdrel criterion: more than 64 values, every 16 samples, under 5 % */
		.settle_history = 64,
		.settle_every = 16,
		.settle_spread = 0.05,
		.timeout_s = 15,
		.max_samples = 100000,
		.poll_s = 0.05,
		.throttle_ratio = 0.9,
		/* triton.testing.do_bench(fn, warmup=25, rep=100) and its 256 MiB cache buffer */
		.db_warmup_ms = 25,
		.db_rep_ms = 100,
		.db_estimate_calls = 5,
		.db_flush_bytes = 256u * 1024 * 1024,
	};
}

enum kx_bench_stop bench_should_stop(const struct kx_bench_protocol *p, size_t n,
				     double measured_s, double noise,
				     const struct kx_bench_noise_history *h, double elapsed_s)
{
	if (n >= p->max_samples)
		return KX_STOP_MAX_SAMPLES;
	if (n < p->min_samples)
		return KX_STOP_NO; /* the minimum count holds even past the timeout */
	if (measured_s >= p->min_time_s && noise <= p->noise_target)
		return KX_STOP_CONVERGED;
	/* a noisy kernel whose noise no longer moves will not get quieter by running to the timeout */
	if (measured_s >= p->min_time_s && h && h->len > p->settle_history && p->settle_every &&
	    n % p->settle_every == 0 && bench_noise_spread(h) < p->settle_spread)
		return KX_STOP_SETTLED;
	if (elapsed_s >= p->timeout_s)
		return KX_STOP_TIMEOUT;
	return KX_STOP_NO;
}

const char *bench_stop_name(enum kx_bench_stop s)
{
	switch (s) {
	case KX_STOP_CONVERGED: return "converged";
	case KX_STOP_SETTLED: return "noise-settled";
	case KX_STOP_TIMEOUT: return "timeout";
	case KX_STOP_MAX_SAMPLES: return "max-samples";
	case KX_STOP_DO_BENCH: return "do-bench-repeat";
	case KX_STOP_RECORDED: return "recorded";
	default: return "running";
	}
}

/* ---- the document -------------------------------------------------------------------------------- */

static struct kx_json *obj(struct kx_arena *a)
{
	return kx_json_new(a, KX_JSON_OBJECT);
}

static int set_bool(struct kx_arena *a, struct kx_json *o, const char *k, bool v)
{
	return kx_json_set(a, o, k, kx_json_new_bool(a, v));
}

static struct kx_json *string_array(struct kx_arena *a, const char *const *v, size_t n)
{
	struct kx_json *arr = kx_json_new(a, KX_JSON_ARRAY);
	for (size_t i = 0; arr && i < n; i++)
		if (kx_json_append(a, arr, kx_json_new_string(a, v[i])) < 0)
			return NULL;
	return arr;
}

/* tolerances: {dtype: {output: {rtol, atol[, allowance]}}}, from check.c's table */
static struct kx_json *tolerance_table(struct kx_arena *a)
{
	size_t n;
	const struct kx_bench_tolerance *t = bench_tolerances(&n);
	struct kx_json *tol = obj(a);
	for (size_t i = 0; tol && i < n; i++) {
		struct kx_json *d = kx_json_get(tol, t[i].dtype), *o = obj(a);
		if (!d && (!(d = obj(a)) || kx_json_set(a, tol, t[i].dtype, d) < 0))
			return NULL;
		if (!o || kx_json_set_number(a, o, "rtol", t[i].rtol) < 0 ||
		    kx_json_set_number(a, o, "atol", t[i].atol) < 0 ||
		    (t[i].allowance && kx_bench_set_str(a, o, "allowance", t[i].allowance) < 0) ||
		    kx_json_set(a, d, t[i].output, o) < 0)
			return NULL;
	}
	return tol;
}

static struct kx_json *correctness_policy(struct kx_arena *a)
{
	struct kx_json *c = obj(a), *tol = tolerance_table(a), *allow = obj(a), *outputs = obj(a);
	if (!c || !tol || !allow || !outputs)
		return NULL;
	int r = 0;
	r |= kx_bench_set_str(a, allow, "bf16LogitRounding", bench_allowance_text("bf16LogitRounding"));
	r |= kx_bench_set_str(a, outputs, "loss",
		"the per-row (per-token) loss of each compared row against the reference's");
	r |= kx_bench_set_str(a, outputs, "mean",
		"the implementation's mean loss against the fp64 mean of all its per-row losses");
	r |= kx_bench_set_str(a, outputs, "output", "every value of each compared row of the output");
	r |= set_bool(a, c, "checkedBeforeTiming", true);
	r |= kx_bench_set_str(a, c, "reference",
		"fp32 on the same inputs: bf16 inputs widened exactly, products and sums in fp32, "
		"no intermediate rounding; rows sampled evenly (at most 256) when a workload has more");
	r |= kx_bench_set_str(a, c, "rule",
		"every checked value of each output: |got - ref| <= atol + rtol * |ref| + allowance, "
		"with the tolerance of the workload's dtype for that output; any non-finite value fails");
	r |= kx_json_set(a, c, "outputs", outputs);
	r |= kx_json_set(a, c, "tolerances", tol);
	r |= kx_json_set(a, c, "allowances", allow);
	r |= kx_bench_set_str(a, c, "dtypeOfWorkload",
		"the workload's dtype; fp32 where it has none (cross_entropy's fp32 logits)");
	r |= kx_bench_set_str(a, c, "inputs", kx_arena_printf(a,
		"generated from a counter hash; the logits of the loss workloads have standard deviation "
		"%g (fp32 logits drawn so, or a weight scaled so that X W^T has it), so the softmax is "
		"peaked and the maximum and rescaling of the log-sum-exp matter", (double)KX_LOGIT_STD));
	r |= kx_bench_set_str(a, c, "onFailure",
		"the run is emitted with status failed and a message, is not timed, and is never ranked");
	return r < 0 ? NULL : c;
}

static struct kx_json *scope(struct kx_arena *a)
{
	struct kx_json *s = obj(a);
	if (!s)
		return NULL;
	int r = 0;
	r |= set_bool(a, s, "forwardIncludesGradients", false);
	r |= kx_bench_set_str(a, s, "timedRegion",
		"one forward call of the implementation: its kernels and library calls on one stream, "
		"inputs already resident, outputs written, including the final loss reduction; no "
		"allocation, no host synchronization inside");
	return r < 0 ? NULL : s;
}

static struct kx_json *measurement(struct kx_arena *a, const struct kx_bench_protocol *p)
{
	static const char *const stats[] = { "median", "p20", "p80", "min", "max", "mean", "stdev" };
	struct kx_json *m = obj(a), *q = obj(a);
	if (!m || !q)
		return NULL;
	int r = 0;
	r |= kx_bench_set_str(a, m, "metric", "latency");
	r |= kx_bench_set_str(a, m, "timer",
				p->timer == KX_TIMER_CUDA_EVENTS ? "cuda_events" : "clock_monotonic");
	r |= kx_bench_set_str(a, m, "primaryStatistic", "median");
	r |= kx_bench_set_str(a, m, "unit", "ns");
	r |= kx_json_set(a, m, "statistics", string_array(a, stats, KX_ARRAY_SIZE(stats)));
	r |= kx_bench_set_str(a, q, "method", "linear");
	r |= kx_bench_set_str(a, q, "definition",
		"sorted samples x[0..n-1], position q*(n-1), interpolated between the closest ranks "
		"(numpy 'linear', torch.quantile)");
	r |= kx_json_set(a, m, "quantiles", q);
	r |= kx_bench_set_str(a, m, "stdev", "sample standard deviation (n - 1)");
	r |= kx_bench_set_str(a, m, "rounding", "statistics reported to the nearest ns");
	r |= kx_bench_set_str(a, m, "samplesDigest",
		"sha256 of the samples in ns as decimal integers, one per line, in measured order");
	r |= kx_bench_set_str(a, m, "memory",
		"peak bytes held by the implementation's inputs, outputs and workspace "
		"(cuBLAS workspace included), counted at allocation");
	return r < 0 ? NULL : m;
}

static struct kx_json *kindex_sampling(struct kx_arena *a, const struct kx_bench_protocol *p)
{
	bool gpu = p->timer == KX_TIMER_CUDA_EVENTS;
	struct kx_json *s = obj(a), *flush = obj(a), *clocks = obj(a);
	if (!s || !flush || !clocks)
		return NULL;
	int r = 0;
	if (gpu) {
		r |= kx_bench_set_str(a, flush, "method", "cudaMemsetAsync");
		r |= kx_bench_set_str(a, flush, "bytes", "l2CacheSize (cudaDevAttrL2CacheSize)");
	} else {
		r |= kx_bench_set_str(a, flush, "method", "memset of a host buffer");
		r |= kx_bench_set_str(a, flush, "bytes", "last-level cache size");
	}
	r |= kx_bench_set_str(a, flush, "when", "before every timed call, outside the timed region");
	r |= kx_json_set(a, s, "cacheFlush", flush);
	r |= kx_json_set_number(a, s, "warmupSeconds", p->warmup_s);
	r |= kx_bench_set_str(a, s, "warmup",
		"by time: flushed and timed calls, discarded, until warmupSeconds has passed (at least one)");
	r |= kx_json_set_number(a, s, "minSamples", (double)p->min_samples);
	r |= kx_json_set_number(a, s, "minMeasuredSeconds", p->min_time_s);
	r |= kx_json_set_number(a, s, "noiseTarget", p->noise_target);
	r |= kx_bench_set_str(a, s, "noise", "stdev / mean of the samples so far");
	r |= kx_json_set_number(a, s, "noiseWindow", KX_BENCH_NOISE_WINDOW);
	r |= kx_json_set_number(a, s, "settleHistory", (double)p->settle_history);
	r |= kx_json_set_number(a, s, "settleEvery", (double)p->settle_every);
	r |= kx_json_set_number(a, s, "settleSpread", p->settle_spread);
	r |= kx_json_set_number(a, s, "timeoutSeconds", p->timeout_s);
	r |= kx_json_set_number(a, s, "maxSamples", (double)p->max_samples);
	r |= kx_bench_set_str(a, s, "stop",
		"after each sample: stop once minSamples and minMeasuredSeconds are reached and noise <= "
		"noiseTarget; or, with those minimums reached, once the noise has settled (nvbench's "
		"stdrel criterion): every settleEvery samples, when the last noiseWindow values of the "
		"noise (one after each sample) number more than settleHistory and their standard "
		"deviation about the newest, relative to it, is below settleSpread; or once "
		"timeoutSeconds of wall time have passed with minSamples reached; or at maxSamples");
	if (gpu) {
		r |= kx_bench_set_str(a, s, "enqueue",
			"each call is enqueued behind a spinning kernel that is released once the flush, "
			"both events and the call are queued, so launch latency never lands inside the "
			"event pair; the stream is synchronized after each call");
		r |= kx_bench_set_str(a, clocks, "source",
			"per sample: SM 0's clock64 cycles over %globaltimer ns between a stamp kernel just "
			"before the sample's start event and one just after its end event (nvbench's "
			"timestamps kernel), outside the timed region; unknown below 20 us. NVML (dlopen), "
			"polled between samples, records clock event reasons only");
		r |= kx_json_set_number(a, clocks, "pollSeconds", p->poll_s);
		r |= kx_bench_set_str(a, clocks, "throttledWhen",
			"the sample's own SM clock is below throttleRatio of the highest clock of the run's "
			"samples; an NVML reason alone (the software power cap a part at its power limit "
			"reports) is recorded, not judged");
		r |= kx_json_set_number(a, clocks, "throttleRatio", p->throttle_ratio);
		r |= kx_bench_set_str(a, clocks, "throttledSamples",
					"counted and reported, kept in the statistics");
	} else {
		r |= kx_bench_set_str(a, clocks, "source", "none (CPU clocks are not watched)");
	}
	r |= kx_json_set(a, s, "clocks", clocks);
	return r < 0 ? NULL : s;
}

static struct kx_json *dobench_sampling(struct kx_arena *a, const struct kx_bench_protocol *p)
{
	struct kx_json *s = obj(a), *flush = obj(a);
	if (!s || !flush)
		return NULL;
	int r = 0;
	r |= kx_bench_set_str(a, flush, "method",
		"cudaMemsetAsync zeroing the buffer (triton: cache.zero_() on an int32 tensor)");
	r |= kx_json_set_number(a, flush, "bytes", (double)p->db_flush_bytes);
	r |= kx_bench_set_str(a, flush, "when",
		"before every estimate call and every timed call, outside the timed region; not "
		"before warmup calls");
	r |= kx_json_set(a, s, "cacheFlush", flush);
	r |= kx_json_set_number(a, s, "warmupMs", p->db_warmup_ms);
	r |= kx_json_set_number(a, s, "repMs", p->db_rep_ms);
	r |= kx_json_set_number(a, s, "estimateCalls", (double)p->db_estimate_calls);
	r |= kx_bench_set_str(a, s, "algorithm",
		"one call and a synchronize; estimate_ms = time of estimateCalls (flush + call) pairs "
		"between one event pair / estimateCalls; n_warmup = max(1, int(warmupMs / estimate_ms)) "
		"calls; n_repeat = max(1, int(repMs / estimate_ms)) calls, each flushed and between its "
		"own event pair, all enqueued back to back, one synchronize at the end");
	r |= kx_bench_set_str(a, s, "reference",
				"triton.testing.do_bench(fn, warmup=25, rep=100, quantiles=[0.5, 0.2, 0.8])");
	return r < 0 ? NULL : s;
}

struct kx_json *bench_protocol_document(struct kx_arena *a, const struct kx_bench_protocol *p)
{
	bool dobench = p->kind == KX_PROTOCOL_DO_BENCH;
	bool gpu = p->timer == KX_TIMER_CUDA_EVENTS;
	struct kx_json *doc = obj(a), *meta = obj(a), *spec = obj(a), *harness = obj(a),
		       *comp = obj(a);
	if (!doc || !meta || !spec || !harness || !comp)
		return NULL;
	int r = 0;
	r |= kx_bench_set_str(a, doc, "apiVersion", KX_BENCH_API_VERSION);
	r |= kx_bench_set_str(a, doc, "kind", "BenchmarkProtocol");
	r |= kx_bench_set_str(a, meta, "name",
				dobench ? "kindex-bench-do-bench" : gpu ? "kindex-bench" : "kindex-bench-cpu");
	r |= kx_bench_set_str(a, meta, "title",
				dobench ? "kindex-bench · triton do_bench reproduction"
				: gpu   ? "kindex-bench · flushed CUDA-event samples until the noise settles"
					: "kindex-bench · CPU selftest, same sampling rules");
	r |= kx_json_set(a, doc, "metadata", meta);

	r |= kx_bench_set_str(a, harness, "name", KX_BENCH_HARNESS);
	r |= kx_bench_set_str(a, harness, "version", KX_VERSION);
	r |= kx_json_set(a, spec, "harness", harness);
	r |= kx_json_set(a, spec, "measurement", measurement(a, p));
	r |= kx_json_set(a, spec, "sampling", dobench ? dobench_sampling(a, p) : kindex_sampling(a, p));
	r |= kx_json_set(a, spec, "correctness", correctness_policy(a));
	r |= kx_json_set(a, spec, "scope", scope(a));

	const char *family = dobench ? "triton_do_bench" : gpu ? "kindex_bench" : "kindex_bench_cpu";
	r |= kx_bench_set_str(a, comp, "family", family);
	char *notes;
	if (dobench)
		notes = kx_arena_printf(a,
			"Timed like triton.testing.do_bench: %g MiB zeroed before each call, %g ms "
			"warmup and %g ms of repeats sized from a %zu-call estimate, CUDA events, median "
			"with p20/p80. For side-by-side parity with Python harnesses; the forward pass "
			"computes no gradients. Comparable only within one kernel, workload, timed pass "
			"and GPU.",
			(double)p->db_flush_bytes / 1048576.0, p->db_warmup_ms, p->db_rep_ms,
			p->db_estimate_calls);
	else if (gpu)
		notes = kx_arena_printf(a,
			"Timed: one forward call per sample (loss or output only, no gradients), L2 "
			"flushed before each, CUDA events, launch latency kept out by a blocking kernel; "
			"median of at least %zu samples and %g s until stdev/mean <= %g%% or %g s. Checked "
			"against an fp32 reference before timing. Liger's published "
			"fused_linear_cross_entropy forward times (family liger_kernel_bench) include the "
			"gradients its fused kernel computes inside the forward, so they are a different "
			"measurement. Comparable only within one kernel, workload, timed pass and GPU.",
			p->min_samples, p->min_time_s, p->noise_target * 100, p->timeout_s);
	else
		notes = kx_arena_printf(a,
			"The CPU selftest: kindex-bench's sampling rules (%g s warmup, at least %zu "
			"samples and %g s, until stdev/mean <= %g%% or %g s) on a single-threaded CPU "
			"implementation, timed with clock_gettime(CLOCK_MONOTONIC) after overwriting the "
			"last-level cache. It proves the pipeline; it says nothing about GPU kernels.",
			p->warmup_s, p->min_samples, p->min_time_s, p->noise_target * 100, p->timeout_s);
	r |= kx_bench_set_str(a, comp, "notes", notes);
	r |= kx_json_set(a, spec, "comparability", comp);
	r |= kx_json_set(a, doc, "spec", spec);
	return r < 0 ? NULL : doc;
}
