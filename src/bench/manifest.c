// SPDX-License-Identifier: MIT
/*
 * The BenchmarkRun document and the manifest around it. The run references its protocol,
 * environment, workload and implementation by digest (computed here with kx_digest_document, the
 * index's own rule), and all five documents travel together, so the index can check every link.
 *
 * A run whose correctness check failed is still a manifest: status "failed", the check's numbers
 * and a message, no timing values (it was never timed) — the index lists it and never ranks it.
 */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int measurement(struct kx_arena *a, struct kx_json *arr, const char *metric,
		       const char *statistic, const char *unit, double value)
{
	struct kx_json *m = kx_json_new(a, KX_JSON_OBJECT);
	if (!m)
		return -ENOMEM;
	int r = 0;
	r |= kx_bench_set_str(a, m, "metric", metric);
	r |= kx_bench_set_str(a, m, "statistic", statistic);
	r |= kx_bench_set_str(a, m, "unit", unit);
	r |= kx_json_set_number(a, m, "value", value);
	r |= kx_json_append(a, arr, m);
	return r;
}

/* 4 significant decimals is more than a timer with ~0.5 us resolution supports */
static double round4(double v)
{
	return round(v * 1e4) / 1e4;
}

/* One output's numbers: {compared, output, rtol, atol, [allowance], checked, violations, …}. */
static struct kx_json *output_check(struct kx_arena *a, const struct kx_bench_output_check *oc)
{
	struct kx_json *o = kx_json_new(a, KX_JSON_OBJECT);
	if (!o)
		return NULL;
	int r = 0;
	r |= kx_bench_set_str(a, o, "compared", oc->what ? oc->what : "output");
	r |= kx_bench_set_str(a, o, "output", oc->tol->output);
	r |= kx_json_set_number(a, o, "rtol", oc->tol->rtol);
	r |= kx_json_set_number(a, o, "atol", oc->tol->atol);
	if (oc->tol->allowance)
		r |= kx_bench_set_str(a, o, "allowance", oc->tol->allowance);
	r |= kx_json_set_number(a, o, "checked", (double)oc->checked);
	r |= kx_json_set_number(a, o, "violations", (double)oc->violations);
	r |= kx_json_set_number(a, o, "nonFinite", (double)oc->nonfinite);
	r |= kx_json_set_number(a, o, "maxAbsError", oc->max_abs);
	r |= kx_json_set_number(a, o, "maxRelError", oc->max_rel);
	/* the largest share of its bound any value used: how close a passing run came to failing */
	if (oc->worst_share >= 0 && isfinite(oc->worst_share))
		r |= kx_json_set_number(a, o, "worstShare", round(oc->worst_share * 1e4) / 1e4);
	return r < 0 ? NULL : o;
}

static struct kx_json *correctness(struct kx_arena *a, const struct kx_bench_check *c)
{
	struct kx_json *o = kx_json_new(a, KX_JSON_OBJECT), *outs = kx_json_new(a, KX_JSON_ARRAY);
	if (!o || !outs)
		return NULL;
	int r = 0;
	r |= kx_bench_set_str(a, o, "status", c->passed ? "passed" : "failed");
	r |= kx_bench_set_str(a, o, "reference", "fp32");
	r |= kx_bench_set_str(a, o, "compared", c->what ? c->what : "output");
	r |= kx_bench_set_str(a, o, "dtype", c->dtype);
	r |= kx_json_set_number(a, o, "checked", (double)c->checked);
	r |= kx_json_set_number(a, o, "violations", (double)c->violations);
	r |= kx_json_set_number(a, o, "nonFinite", (double)c->nonfinite);
	r |= kx_json_set_number(a, o, "maxAbsError", c->max_abs);
	r |= kx_json_set_number(a, o, "maxRelError", c->max_rel);
	for (size_t i = 0; i < c->nout; i++)
		r |= kx_json_append(a, outs, output_check(a, &c->out[i]));
	r |= kx_json_set(a, o, "outputs", outs);
	return r < 0 ? NULL : o;
}

static struct kx_json *latency(struct kx_arena *a, const struct kx_bench_stats *st)
{
	struct kx_json *o = kx_json_new(a, KX_JSON_OBJECT);
	if (!o)
		return NULL;
	const struct {
		const char *k;
		double v;
	} v[] = { { "median", st->median }, { "p20", st->p20 }, { "p80", st->p80 },
		  { "min", st->min },       { "max", st->max }, { "mean", st->mean },
		  { "stdev", st->stdev } };
	for (size_t i = 0; i < KX_ARRAY_SIZE(v); i++)
		if (kx_json_set_number(a, o, v[i].k, round(v[i].v)) < 0)
			return NULL;
	return o;
}

static struct kx_json *sampling(struct kx_arena *a, const struct kx_bench_result *res)
{
	const struct kx_bench_samples *s = res->samples;
	struct kx_json *o = kx_json_new(a, KX_JSON_OBJECT), *clk = kx_json_new(a, KX_JSON_OBJECT);
	if (!o || !clk)
		return NULL;
	int r = 0;
	r |= kx_json_set_number(a, o, "flushBytes", (double)res->flush_bytes);
	r |= kx_json_set_number(a, o, "warmupCalls", (double)s->warmup_calls);
	r |= kx_json_set_number(a, o, "wallSeconds", round4(s->wall_s));
	r |= kx_bench_set_str(a, clk, "source", res->clock_source ? res->clock_source : "none");
	if (s->clock_watched && s->clock_max_mhz > 0) {
		r |= kx_json_set_number(a, clk, "smMinMHz", round(s->clock_min_mhz));
		r |= kx_json_set_number(a, clk, "smMaxMHz", round(s->clock_max_mhz));
	}
	if (s->clock_watched)
		r |= kx_json_set(a, clk, "throttleReasons", bench_nvml_reason_names(a, s->reasons));
	r |= kx_json_set(a, o, "clocks", clk);
	if (res->blocker_timeouts)
		r |= kx_json_set_number(a, o, "blockerTimeouts", res->blocker_timeouts);
	if (s->stop == KX_STOP_DO_BENCH) {
		struct kx_json *db = kx_json_new(a, KX_JSON_OBJECT);
		r |= db ? 0 : -ENOMEM;
		r |= kx_json_set_number(a, db, "estimateMs", round4(s->estimate_ms));
		r |= kx_json_set_number(a, db, "warmupCalls", (double)s->db_warmup);
		r |= kx_json_set_number(a, db, "repeatCalls", (double)s->db_repeat);
		r |= kx_json_set(a, o, "doBench", db);
	}
	return r < 0 ? NULL : o;
}

/*
 * What the implementation chose by measurement before it was checked and timed (bench_tune):
 * {parameter, value, chosenBy, callsEach, candidates: [{value, medianNs}, ...]}.
 */
static struct kx_json *tuning(struct kx_arena *a, const struct kx_bench_tuning *t)
{
	struct kx_json *o = kx_json_new(a, KX_JSON_OBJECT), *cands = kx_json_new(a, KX_JSON_ARRAY);
	if (!o || !cands)
		return NULL;
	int r = 0;
	r |= kx_bench_set_str(a, o, "parameter", t->parameter);
	r |= kx_json_set_number(a, o, "value", (double)t->values[t->chosen]);
	r |= kx_bench_set_str(a, o, "chosenBy", "lowest median");
	r |= kx_json_set_number(a, o, "callsEach", (double)t->calls);
	for (size_t i = 0; i < t->n; i++) {
		struct kx_json *c = kx_json_new(a, KX_JSON_OBJECT);
		r |= c ? 0 : -ENOMEM;
		r |= kx_json_set_number(a, c, "value", (double)t->values[i]);
		r |= kx_json_set_number(a, c, "medianNs", (double)t->median_ns[i]);
		r |= kx_json_append(a, cands, c);
	}
	r |= kx_json_set(a, o, "candidates", cands);
	return r < 0 ? NULL : o;
}

/*
 * What the median call achieved: TFLOP/s (workloads with matrix products) and GB/s (every
 * workload: the bytes it must move at least), and where the device's peak is known their
 * fractions of it, in % (compute-of-peak: of the dense bf16 tensor-core peak; bandwidth-of-peak:
 * of the memory bandwidth), with the peak itself in spec.peak.
 */
static int figures(struct kx_arena *a, struct kx_json *spec, struct kx_json *meas,
		   const struct kx_bench_result *res, double median_ns)
{
	double flops = bench_case_flops(res->c), bytes = bench_case_bytes(res->c);
	struct kx_bench_figures f;
	bench_figures_of(flops, bytes, median_ns, res->peak, &f);
	int r = 0;
	if (flops > 0 && median_ns > 0)
		r |= measurement(a, meas, "throughput", "median", "TFLOP/s", round4(f.tflops));
	if (bytes > 0 && median_ns > 0)
		r |= measurement(a, meas, "throughput", "median", "GB/s", round4(f.gbps));
	if (!res->peak || median_ns <= 0)
		return r;
	if (flops > 0)
		r |= measurement(a, meas, "compute-of-peak", "median", "%", round4(100 * f.compute_fraction));
	if (bytes > 0)
		r |= measurement(a, meas, "bandwidth-of-peak", "median", "%",
				 round4(100 * f.bandwidth_fraction));
	struct kx_json *p = kx_json_new(a, KX_JSON_OBJECT);
	r |= p ? 0 : -ENOMEM;
	r |= kx_bench_set_str(a, p, "device", res->peak->device);
	r |= kx_json_set_number(a, p, "bf16DenseTFLOPs", res->peak->bf16_tflops);
	r |= kx_json_set_number(a, p, "memoryGBps", res->peak->memory_gbps);
	r |= kx_bench_set_str(a, p, "source", res->peak->source);
	r |= kx_json_set(a, spec, "peak", p);
	return r;
}

/* One of spec.artifacts: {name, digest, size, mediaType}, exactly those four. */
static int artifact(struct kx_arena *a, struct kx_json *arr, const struct kx_bench_artifact *art)
{
	struct kx_json *o = kx_json_new(a, KX_JSON_OBJECT);
	if (!o)
		return -ENOMEM;
	int r = 0;
	r |= kx_bench_set_str(a, o, "name", art->name);
	r |= kx_bench_set_str(a, o, "digest", art->digest);
	r |= kx_json_set_number(a, o, "size", (double)art->size);
	r |= kx_bench_set_str(a, o, "mediaType", art->media_type);
	r |= kx_json_append(a, arr, o);
	return r;
}

static int run_spec(struct kx_arena *a, struct kx_json *spec, const struct kx_bench_result *res)
{
	const struct kx_bench_case *c = res->c;
	bool passed = !res->message;
	char when[32];
	kx_time_format(res->observed_ns, when);
	int r = 0;
	r |= kx_bench_set_str(a, spec, "status", passed ? "passed" : "failed");
	r |= kx_bench_set_str(a, spec, "observedAt", when);
	r |= kx_bench_set_str(a, spec, "benchmark", c->w->benchmark);

	struct kx_json *timing = kx_json_new(a, KX_JSON_OBJECT);
	struct kx_json *meas = kx_json_new(a, KX_JSON_ARRAY);
	struct kx_json *arts = kx_json_new(a, KX_JSON_ARRAY);
	if (!timing || !meas || !arts)
		return -ENOMEM;
	r |= kx_bench_set_str(a, timing, "primaryStatistic", "median");
	const struct kx_bench_samples *s = res->samples;
	if (s && s->n) {
		struct kx_bench_stats st;
		char hex[KX_DIGEST_HEX + 1];
		int e = bench_stats_compute(s->ns, s->n, &st);
		if (e < 0 || (e = bench_samples_sha256(s->ns, s->n, hex)) < 0)
			return e;
		r |= kx_json_set(a, timing, "latencyNs", latency(a, &st));
		static const char *const names[] = { "p20", "p80", "min", "max", "mean", "stdev" };
		const double vals[] = { st.p20, st.p80, st.min, st.max, st.mean, st.stdev };
		for (size_t i = 0; i < KX_ARRAY_SIZE(names); i++)
			r |= measurement(a, meas, "latency", names[i], "ns", round(vals[i]));
		r |= figures(a, spec, meas, res, st.median);

		struct kx_json *so = kx_json_new(a, KX_JSON_OBJECT);
		if (!so)
			return -ENOMEM;
		r |= kx_json_set_number(a, so, "count", (double)s->n);
		r |= kx_bench_set_str(a, so, "sha256", hex);
		r |= kx_json_set_number(a, so, "throttled", (double)s->n_throttled);
		r |= kx_bench_set_str(a, so, "stoppedBy", bench_stop_name(s->stop));
		r |= kx_json_set_number(a, so, "noise",
					st.mean > 0 ? round(st.stdev / st.mean * 1e6) / 1e6 : 0);
		r |= kx_json_set(a, spec, "samples", so);
		/* the same bytes as a file: samples.tsv, whose digest is samples.sha256's */
		struct kx_bench_artifact sa;
		if ((e = bench_samples_artifact(s->ns, s->n, &sa)) < 0)
			return e;
		r |= artifact(a, arts, &sa);
		if (s->stop != KX_STOP_RECORDED) /* another harness's sampling is its own to report */
			r |= kx_json_set(a, spec, "sampling", sampling(a, res));
	}
	for (size_t i = 0; i < res->nattached; i++)
		r |= artifact(a, arts, &res->attached[i]);
	if (arts->arr.len)
		r |= kx_json_set(a, spec, "artifacts", arts);
	if (res->tuning && res->tuning->parameter)
		r |= kx_json_set(a, spec, "tuning", tuning(a, res->tuning));
	if (res->peak_bytes)
		r |= measurement(a, meas, "memory", "peak", "B", (double)res->peak_bytes);
	r |= kx_json_set(a, spec, "timing", timing);
	r |= kx_json_set(a, spec, "measurements", meas);
	if (res->correctness)
		r |= kx_json_set(a, spec, "correctness", res->correctness);
	else if (res->check)
		r |= kx_json_set(a, spec, "correctness", correctness(a, res->check));
	if (res->message)
		r |= kx_bench_set_str(a, spec, "message", res->message);
	return r;
}

static int set_digest(struct kx_arena *a, struct kx_json *spec, const char *key,
		      const struct kx_json *doc)
{
	struct kx_digest d;
	char s[KX_DIGEST_STR_MAX];
	int r = kx_digest_document(doc, &d);
	if (r < 0)
		return r;
	kx_digest_format(&d, s);
	return kx_bench_set_str(a, spec, key, s);
}

int bench_manifest(struct kx_arena *a, const struct kx_bench_result *res,
		   struct kx_json *protocol, struct kx_json *environment, struct kx_json *workload,
		   struct kx_json *implementation, struct kx_json **ret)
{
	if (!protocol || !environment || !workload || !implementation)
		return -ENOMEM; /* a builder above ran out of memory */
	struct kx_json *doc = kx_json_new(a, KX_JSON_OBJECT), *meta = kx_json_new(a, KX_JSON_OBJECT),
		       *spec = kx_json_new(a, KX_JSON_OBJECT), *labels = kx_json_new(a, KX_JSON_OBJECT),
		       *m = kx_json_new(a, KX_JSON_OBJECT);
	if (!doc || !meta || !spec || !labels || !m)
		return -ENOMEM;
	int r = run_spec(a, spec, res);
	if (r < 0)
		return r;
	if ((r = set_digest(a, spec, "protocolDigest", protocol)) < 0 ||
	    (r = set_digest(a, spec, "environmentDigest", environment)) < 0 ||
	    (r = set_digest(a, spec, "workloadDigest", workload)) < 0 ||
	    (r = set_digest(a, spec, "implementationDigest", implementation)) < 0)
		return r;

	const char *impl = kx_json_get_string(kx_json_get(implementation, "spec"), "name");
	char *name = kx_arena_printf(a, "kindex-bench-%s-%s-%s", res->c->w->benchmark,
				     impl ? impl : "unknown", res->gpu_slug ? res->gpu_slug : "unknown");
	if (!name)
		return -ENOMEM;
	for (char *p = name; *p; p++)
		if (*p == '_' || *p == '/')
			*p = '-';
	if (strlen(name) > 100)
		name[100] = '\0';
	r |= kx_bench_set_str(a, meta, "name", name);
	r |= kx_bench_set_str(a, meta, "title",
			      kx_arena_printf(a, "%s · %s · %s", res->c->w->title, impl ? impl : "unknown",
					      strchr(res->c->w->benchmark, '/') + 1));
	r |= kx_bench_set_str(a, labels, "harness", KX_BENCH_HARNESS);
	r |= kx_bench_set_str(a, labels, "harness_version", KX_VERSION);
	r |= kx_json_set(a, meta, "labels", labels);
	r |= kx_bench_set_str(a, doc, "apiVersion", KX_BENCH_API_VERSION);
	r |= kx_bench_set_str(a, doc, "kind", "BenchmarkRun");
	r |= kx_json_set(a, doc, "metadata", meta);
	r |= kx_json_set(a, doc, "spec", spec);

	r |= kx_json_set(a, m, "run", doc);
	r |= kx_json_set(a, m, "protocol", protocol);
	r |= kx_json_set(a, m, "environment", environment);
	r |= kx_json_set(a, m, "workload", workload);
	r |= kx_json_set(a, m, "implementation", implementation);
	if (r < 0)
		return r;
	*ret = m;
	return 0;
}

int bench_manifest_filename(const struct kx_json *manifest, char *out, size_t outlen)
{
	const struct kx_json *run = kx_json_get(manifest, "run");
	const char *bench = kx_json_get_string(kx_json_get(run, "spec"), "benchmark");
	const char *impl = kx_json_get_string(
		kx_json_get(kx_json_get(manifest, "implementation"), "spec"), "name");
	struct kx_digest d;
	char hex[KX_DIGEST_HEX + 1], raw[512];
	int r = kx_digest_document(run, &d);
	if (r < 0)
		return r;
	kx_digest_hex(&d, hex);
	snprintf(raw, sizeof(raw), "%s-%s", bench ? bench : "run", impl ? impl : "unknown");
	char slug[400];
	kx_slug(raw, strlen(raw), slug, sizeof(slug));
	if ((size_t)snprintf(out, outlen, "%s-%.*s.json", slug, KX_SHORTID_LEN, hex) >= outlen)
		return -ENAMETOOLONG;
	return 0;
}
