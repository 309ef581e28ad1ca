// SPDX-License-Identifier: MIT
/*
 * What kindex-bench emits: Workload documents byte for byte as the Liger importer writes them
 * (and their digests, computed independently with `sha256sum` over the JCS text), the protocol
 * documents and what they pin, the run document of a passed and of a failed run, the digests
 * that tie a manifest's five documents together, and the atomic sinks (file, inbox, spool).
 */
#include "bench.h"
#include "tap.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *str_at(const struct kx_json *root, const char *ptr)
{
	const struct kx_json *v = kx_json_pointer(root, ptr);
	return v && v->type == KX_JSON_STRING ? v->str.ptr : NULL;
}

static double num_at(const struct kx_json *root, const char *ptr)
{
	const struct kx_json *v = kx_json_pointer(root, ptr);
	return v && v->type == KX_JSON_NUMBER ? v->number : NAN;
}

static char *jcs(const struct kx_json *v)
{
	struct kx_buf b;
	kx_buf_init(&b, 0);
	if (kx_jcs_write(v, &b) < 0) {
		kx_buf_release(&b);
		return NULL;
	}
	return kx_buf_detach(&b, NULL);
}

static void digest_of(const struct kx_json *doc, char out[KX_DIGEST_STR_MAX])
{
	struct kx_digest d;
	if (kx_digest_document(doc, &d) < 0)
		strcpy(out, "(error)");
	else
		kx_digest_format(&d, out);
}

static const struct {
	const char *benchmark, *spec, *digest;
} liger[] = {
	{ "fused_linear_cross_entropy/forward",
	  "{\"dtype\":\"bf16\",\"parameters\":{\"hidden\":4096,\"tokens\":16384,\"vocab\":128256}}",
	  "sha256:6b3a679c88ca1e6c77236a54611195e1ca9b1524aebdcdc2c25b2bccf43cbf7d" },
	{ "cross_entropy/forward", "{\"parameters\":{\"batch\":8,\"seq\":2048,\"vocab\":32768}}",
	  "sha256:26b3b9eafab81dce8e41a5bb97263fe4b05e5c5dcf9c23ce546543fec4d05eba" },
	{ "rms_norm/forward",
	  "{\"dtype\":\"bf16\",\"parameters\":{\"M\":2048,\"eps\":0.000001,\"hidden\":4096}}",
	  "sha256:e7e04a6a3f206e51adae68d3aa13028cf01dd3926bf1d2500642e8444273510f" },
	{ "swiglu/forward",
	  "{\"dtype\":\"bf16\",\"parameters\":{\"batch\":4,\"hidden_act\":\"silu\",\"hidden_size\":4096,"
	  "\"intermediate_size\":11008,\"seq\":2048}}",
	  "sha256:512ddf1874e09687195bca4fb0985750509eb4a3207ebb1b869b8f68cdaff574" },
};

static void workloads(void)
{
	struct kx_arena *a = kx_arena_new();
	for (size_t i = 0; i < KX_ARRAY_SIZE(liger); i++) {
		const struct kx_bench_workload *w = bench_workload_find(liger[i].benchmark);
		ok(w != NULL, "%s is a workload", liger[i].benchmark);
		if (!w)
			continue;
		struct kx_bench_case c;
		bench_case_init(&c, w, &w->impls[0]);
		struct kx_json *doc = bench_workload_document(a, &c);
		char *spec = jcs(kx_json_get(doc, "spec"));
		is_str(spec, liger[i].spec, "workload spec is the Liger importer's, byte for byte");
		free(spec);
		char d[KX_DIGEST_STR_MAX];
		digest_of(doc, d);
		is_str(d, liger[i].digest, "workload digest (sha256sum of the JCS text)");
		is_str(str_at(doc, "/kind"), "Workload", "kind Workload");
	}
	ok(bench_workload_find("rms_norm") == bench_workload_find("rms_norm/forward"),
	   "a kernel name alone means its forward pass");
	ok(bench_workload_find("rms") == NULL && bench_workload_find("rms_norm/backward") == NULL,
	   "no prefix matching, no unknown passes");

	const struct kx_bench_workload *w = bench_workload_find("fused_linear_cross_entropy");
	struct kx_bench_case c;
	bench_case_init(&c, w, bench_impl_find(w, "kindex-chunked"));
	char err[256] = "";
	ok(bench_case_set(&c, "tokens", "8192", err, sizeof(err)) == 0, "--param tokens=8192");
	char *spec = jcs(kx_json_get(bench_workload_document(a, &c), "spec"));
	is_str(spec, "{\"dtype\":\"bf16\",\"parameters\":{\"hidden\":4096,\"tokens\":8192,\"vocab\":128256}}",
	       "the parameter lands in the workload as a number");
	free(spec);
	struct kx_bench_shape s;
	bench_case_shape(&c, &s);
	ok(s.kind == KX_KIND_FLCE && s.m == 8192 && s.n == 128256 && s.k == 4096 && s.check_rows == 256,
	   "FLCE shape: m tokens, n vocab, k hidden, 256 checked rows");
	ok(bench_case_flops(&c) == 2.0 * 8192 * 128256 * 4096, "FLCE FLOPs 2*BT*V*H");
	ok(bench_case_set(&c, "nope", "1", err, sizeof(err)) == -ENOENT, "unknown parameter: -ENOENT");
	ok(bench_case_set(&c, "tokens", "0", err, sizeof(err)) == -EINVAL, "tokens=0 rejected");
	ok(bench_case_set(&c, "tokens", "1.5", err, sizeof(err)) == -EINVAL &&
	   strstr(err, "positive integer"), "tokens=1.5 rejected: %s", err);
	ok(bench_case_set(&c, "tokens", "12abc", err, sizeof(err)) == -EINVAL, "tokens=12abc rejected");

	w = bench_workload_find("swiglu");
	bench_case_init(&c, w, &w->impls[0]);
	ok(bench_case_set(&c, "hidden_act", "gelu", err, sizeof(err)) == -EINVAL &&
	   strstr(err, "only 'silu'"), "swiglu: only silu is implemented (%s)", err);
	bench_case_shape(&c, &s);
	ok(s.m == 8192 && s.n == 4096 && s.k == 11008 && bench_case_flops(&c) == 6.0 * 8192 * 4096 * 11008,
	   "swiglu shape and FLOPs 6*N*H*I");
	w = bench_workload_find("rms_norm");
	bench_case_init(&c, w, &w->impls[0]);
	ok(bench_case_set(&c, "eps", "1e-5", err, sizeof(err)) == 0 &&
	   bench_case_num(&c, "eps") == 1e-5, "eps takes a float");
	kx_arena_free(a);
}

static void protocols(void)
{
	struct kx_arena *a = kx_arena_new();
	struct kx_bench_protocol p;
	bench_protocol_init(&p, KX_PROTOCOL_KINDEX, KX_TIMER_CUDA_EVENTS);
	struct kx_json *k = bench_protocol_document(a, &p);
	ok(k != NULL, "kindex protocol document");
	is_str(str_at(k, "/kind"), "BenchmarkProtocol", "kind");
	is_str(str_at(k, "/spec/measurement/primaryStatistic"), "median", "primary statistic median");
	is_str(str_at(k, "/spec/measurement/metric"), "latency", "metric latency");
	is_str(str_at(k, "/spec/measurement/timer"), "cuda_events", "timer cuda_events");
	is_str(str_at(k, "/spec/measurement/quantiles/method"), "linear", "quantiles: linear");
	is_str(str_at(k, "/spec/comparability/family"), "kindex_bench", "family kindex_bench");
	is_str(str_at(k, "/spec/harness/name"), "kindex-bench", "harness name");
	is_str(str_at(k, "/spec/harness/version"), KX_VERSION, "harness version");
	ok(num_at(k, "/spec/sampling/minSamples") == 10 && num_at(k, "/spec/sampling/minMeasuredSeconds") == 0.5 &&
	   num_at(k, "/spec/sampling/noiseTarget") == 0.005 && num_at(k, "/spec/sampling/timeoutSeconds") == 15 &&
	   num_at(k, "/spec/sampling/warmupSeconds") == 0.1, "every stopping parameter is published");
	is_str(str_at(k, "/spec/sampling/cacheFlush/method"), "cudaMemsetAsync", "L2 flush method");
	ok(kx_json_pointer(k, "/spec/scope/forwardIncludesGradients")->type == KX_JSON_FALSE,
	   "the protocol says forward excludes gradients");
	ok(num_at(k, "/spec/correctness/tolerances/bf16/output/rtol") == 0.016 &&
	   num_at(k, "/spec/correctness/tolerances/bf16/output/atol") == 0.01 &&
	   num_at(k, "/spec/correctness/tolerances/fp32/output/atol") == 0.00001,
	   "tolerance policy per dtype and output: element-wise outputs");
	ok(num_at(k, "/spec/correctness/tolerances/bf16/loss/rtol") == 0.001 &&
	   num_at(k, "/spec/correctness/tolerances/bf16/loss/atol") == 0.02 &&
	   num_at(k, "/spec/correctness/tolerances/bf16/mean/rtol") == 0.00001 &&
	   num_at(k, "/spec/correctness/tolerances/bf16/mean/atol") == 0.00001,
	   "a bf16 loss: atol 2e-2, rtol 1e-3; its mean at fp32 tolerance");
	is_str(str_at(k, "/spec/correctness/tolerances/bf16/loss/allowance"), "bf16LogitRounding",
	       "the bf16 loss names its rounding allowance");
	ok(str_at(k, "/spec/correctness/allowances/bf16LogitRounding") &&
	   strstr(str_at(k, "/spec/correctness/allowances/bf16LogitRounding"), "softmax-weighted"),
	   "and the protocol says what the allowance is");
	ok(str_at(k, "/spec/correctness/inputs") &&
	   strstr(str_at(k, "/spec/correctness/inputs"), "standard deviation 4"),
	   "the protocol says the logits' spread");

	char d1[KX_DIGEST_STR_MAX], d2[KX_DIGEST_STR_MAX], d3[KX_DIGEST_STR_MAX];
	digest_of(k, d1);
	digest_of(bench_protocol_document(a, &p), d2);
	is_str(d1, d2, "the protocol digest is stable");
	p.timeout_s = 3;
	digest_of(bench_protocol_document(a, &p), d3);
	ok(strcmp(d1, d3) != 0, "changing a parameter changes the protocol digest");

	bench_protocol_init(&p, KX_PROTOCOL_DO_BENCH, KX_TIMER_CUDA_EVENTS);
	struct kx_json *db = bench_protocol_document(a, &p);
	is_str(str_at(db, "/spec/comparability/family"), "triton_do_bench", "do_bench family");
	ok(num_at(db, "/spec/sampling/cacheFlush/bytes") == 268435456 && num_at(db, "/spec/sampling/warmupMs") == 25 &&
	   num_at(db, "/spec/sampling/repMs") == 100 && num_at(db, "/spec/sampling/estimateCalls") == 5,
	   "do_bench: 256 MiB, 25 ms, 100 ms, 5 calls");
	bench_protocol_init(&p, KX_PROTOCOL_KINDEX, KX_TIMER_CPU_MONOTONIC);
	struct kx_json *cpu = bench_protocol_document(a, &p);
	is_str(str_at(cpu, "/spec/comparability/family"), "kindex_bench_cpu", "CPU selftest family");
	is_str(str_at(cpu, "/spec/measurement/timer"), "clock_monotonic", "CPU timer");
	kx_arena_free(a);
}

static struct kx_json *fake_environment(struct kx_arena *a)
{
	struct kx_gpu_info gi = { .cc_major = 9, .cc_minor = 0, .sm_count = 132,
				  .memory_bytes = 150011707392ull, .l2_bytes = 52428800,
				  .sm_clock_khz = 1980000, .mem_clock_khz = 3201000, .mem_bus_bits = 6144,
				  .ecc = 1, .driver_version = 13000, .runtime_version = 13000,
				  .cublas_major = 13, .nvcc_major = 13, .archs = "sm_90" };
	strcpy(gi.name, "NVIDIA H200");
	return bench_gpu_environment(a, &gi, NULL);
}

static void passed_run(void)
{
	struct kx_arena *a = kx_arena_new();
	const struct kx_bench_workload *w = bench_workload_find("fused_linear_cross_entropy");
	struct kx_bench_case c;
	bench_case_init(&c, w, bench_impl_find(w, "kindex-chunked"));
	struct kx_bench_protocol p;
	bench_protocol_init(&p, KX_PROTOCOL_KINDEX, KX_TIMER_CUDA_EVENTS);
	struct kx_json *proto = bench_protocol_document(a, &p), *env = fake_environment(a),
		       *wl = bench_workload_document(a, &c),
		       *impl = bench_implementation_document(a, "kindex-chunked", NULL, NULL);
	uint64_t ns[] = { 25000000, 25100000, 24900000, 25050000, 24950000,
			  25000000, 25020000, 24980000, 25010000, 24990000 };
	uint8_t thr[10] = { 0 };
	struct kx_bench_samples s = { .ns = ns, .throttled = thr, .n = 10, .n_throttled = 0,
				      .stop = KX_STOP_CONVERGED, .warmup_calls = 4, .wall_s = 0.6,
				      .clock_watched = true, .clock_min_mhz = 1755, .clock_max_mhz = 1980,
				      .reasons = 0x4 };
	struct kx_bench_check chk;
	struct kx_bench_policy pol;
	bench_policy_for("bf16", &pol);
	const float got[] = { 11.5f, 12.0f }, ref[] = { 11.51f, 12.01f }, allow[] = { 0.05f, 0.05f };
	const int64_t rows[] = { 0, 1 };
	bench_check_losses(&chk, &pol, got, 2, 11.75f, rows, ref, allow, 2);
	struct kx_bench_tuning tn = { .parameter = "chunkColumns", .n = 2, .values = { 1024, 1536 },
				      .median_ns = { 25400000, 24900000 }, .calls = 3, .chosen = 1 };
	struct kx_bench_result res = { .c = &c, .observed_ns = 1764433556123000000ll, .check = &chk,
				       .samples = &s, .peak_bytes = 1286000000, .flush_bytes = 52428800,
				       .clock_source = "nvml", .gpu_slug = "nvidia-h200", .tuning = &tn };
	struct kx_json *m = NULL;
	ok(bench_manifest(a, &res, proto, env, wl, impl, &m) == 0, "manifest of a passed run");
	struct kx_json *run = kx_json_get(m, "run");
	is_str(str_at(run, "/kind"), "BenchmarkRun", "run kind");
	is_str(str_at(run, "/apiVersion"), "kernelindex.dev/v1alpha1", "apiVersion");
	is_str(str_at(run, "/spec/status"), "passed", "status passed");
	is_str(str_at(run, "/spec/observedAt"), "2025-11-29T16:25:56.123Z", "observedAt: RFC 3339, ms, UTC");
	is_str(str_at(run, "/spec/benchmark"), "fused_linear_cross_entropy/forward", "benchmark");
	is_str(str_at(run, "/spec/timing/primaryStatistic"), "median", "primary statistic");
	struct kx_bench_stats st;
	bench_stats_compute(ns, 10, &st);
	ok(num_at(run, "/spec/timing/latencyNs/median") == round(st.median) &&
	   num_at(run, "/spec/timing/latencyNs/p20") == round(st.p20) &&
	   num_at(run, "/spec/timing/latencyNs/p80") == round(st.p80) &&
	   num_at(run, "/spec/timing/latencyNs/min") == 24900000 &&
	   num_at(run, "/spec/timing/latencyNs/max") == 25100000 &&
	   num_at(run, "/spec/timing/latencyNs/mean") == round(st.mean) &&
	   num_at(run, "/spec/timing/latencyNs/stdev") == round(st.stdev),
	   "latencyNs: median, p20, p80, min, max, mean, stdev in ns");
	char hex[KX_DIGEST_HEX + 1];
	bench_samples_sha256(ns, 10, hex);
	is_str(str_at(run, "/spec/samples/sha256"), hex, "samples.sha256 pins the raw samples");
	ok(num_at(run, "/spec/samples/count") == 10 && num_at(run, "/spec/samples/throttled") == 0,
	   "samples count and throttled");
	is_str(str_at(run, "/spec/samples/stoppedBy"), "converged", "why sampling stopped");
	/* samples.tsv: the bytes samples.sha256 is the digest of, 9 bytes a line here */
	char sd[KX_DIGEST_STR_MAX];
	snprintf(sd, sizeof(sd), "sha256:%s", hex);
	is_str(str_at(run, "/spec/artifacts/0/name"), "samples.tsv", "samples.tsv is the first artifact");
	is_str(str_at(run, "/spec/artifacts/0/digest"), sd, "its digest is samples.sha256");
	ok(num_at(run, "/spec/artifacts/0/size") == 90, "its size is that of the text: %g",
	   num_at(run, "/spec/artifacts/0/size"));
	is_str(str_at(run, "/spec/artifacts/0/mediaType"), "text/tab-separated-values", "its media type");
	const struct kx_json *art0 = kx_json_pointer(run, "/spec/artifacts/0");
	ok(art0 && art0->obj.len == 4 && kx_json_pointer(run, "/spec/artifacts/1") == NULL,
	   "exactly name, digest, size and mediaType; nothing attached, nothing more");
	ok(num_at(run, "/spec/sampling/flushBytes") == 52428800, "the L2 bytes flushed are recorded");
	is_str(str_at(run, "/spec/sampling/clocks/throttleReasons/0"), "sw_power_cap", "NVML reasons named");
	is_str(str_at(run, "/spec/tuning/parameter"), "chunkColumns", "the parameter chosen by measurement");
	ok(num_at(run, "/spec/tuning/value") == 1536 && num_at(run, "/spec/tuning/callsEach") == 3 &&
	   num_at(run, "/spec/tuning/candidates/0/value") == 1024 &&
	   num_at(run, "/spec/tuning/candidates/0/medianNs") == 25400000 &&
	   num_at(run, "/spec/tuning/candidates/1/value") == 1536 &&
	   num_at(run, "/spec/tuning/candidates/1/medianNs") == 24900000 &&
	   kx_json_pointer(run, "/spec/tuning/candidates/2") == NULL,
	   "tuning: the value chosen, the calls each, every candidate's median");
	is_str(str_at(run, "/spec/tuning/chosenBy"), "lowest median", "and the rule");

	const struct kx_json *meas = kx_json_pointer(run, "/spec/measurements");
	bool memory = false, tflops = false, p20 = false;
	for (size_t i = 0; meas && i < meas->arr.len; i++) {
		const struct kx_json *e = meas->arr.v[i];
		const char *metric = kx_json_get_string(e, "metric"), *stat = kx_json_get_string(e, "statistic"),
			   *unit = kx_json_get_string(e, "unit");
		double v = kx_json_get(e, "value")->number;
		memory |= !strcmp(metric, "memory") && !strcmp(stat, "peak") && !strcmp(unit, "B") && v == 1286000000;
		tflops |= !strcmp(metric, "throughput") && !strcmp(unit, "TFLOP/s") &&
			  fabs(v - 2.0 * 16384 * 128256 * 4096 / st.median / 1e3) < 1e-3;
		p20 |= !strcmp(metric, "latency") && !strcmp(stat, "p20") && !strcmp(unit, "ns");
	}
	ok(memory, "peak memory as {memory, peak, B}");
	ok(tflops, "throughput in TFLOP/s from the median");
	ok(p20, "p20 latency also as a measurement");
	is_str(str_at(run, "/spec/correctness/status"), "passed", "correctness passed");
	ok(num_at(run, "/spec/correctness/checked") == 3, "correctness counts every value compared");
	is_str(str_at(run, "/spec/correctness/outputs/0/compared"), "per-row loss (all rows)", "first output");
	ok(num_at(run, "/spec/correctness/outputs/0/rtol") == 0.001 &&
	   num_at(run, "/spec/correctness/outputs/0/atol") == 0.02 &&
	   num_at(run, "/spec/correctness/outputs/0/checked") == 2,
	   "the loss carries its own tolerance and count");
	is_str(str_at(run, "/spec/correctness/outputs/0/allowance"), "bf16LogitRounding", "and allowance");
	/* 0.01 of 0.02 + 0.001 * 11.51 + 0.05 */
	ok(fabs(num_at(run, "/spec/correctness/outputs/0/worstShare") - 0.1227) < 2e-4,
	   "worst share of the bound: %g", num_at(run, "/spec/correctness/outputs/0/worstShare"));
	is_str(str_at(run, "/spec/correctness/outputs/1/compared"), "mean loss", "second output");
	ok(num_at(run, "/spec/correctness/outputs/1/rtol") == 0.00001 &&
	   num_at(run, "/spec/correctness/outputs/1/checked") == 1, "the mean at fp32 tolerance");
	ok(kx_json_pointer(run, "/spec/message") == NULL, "no message on a passed run");

	const char *keys[] = { "protocol", "environment", "workload", "implementation" };
	const char *ptrs[] = { "/spec/protocolDigest", "/spec/environmentDigest", "/spec/workloadDigest",
			       "/spec/implementationDigest" };
	for (size_t i = 0; i < 4; i++) {
		char d[KX_DIGEST_STR_MAX];
		digest_of(kx_json_get(m, keys[i]), d);
		is_str(str_at(run, ptrs[i]), d, "run.spec digest = digest of the included document");
	}
	is_str(str_at(m, "/environment/spec/hardware/product"), "NVIDIA H200", "H200 environment");
	char *spec = jcs(kx_json_get(impl, "spec"));
	is_str(spec, "{\"name\":\"kindex-chunked\",\"project\":\"kindexfs\",\"provider\":\"kindex-bench\","
		     "\"version\":\"" KX_VERSION "\"}", "implementation spec");
	free(spec);

	/* the JCS text parses back to a manifest with the same run digest */
	char *text = jcs(m);
	struct kx_json *back = NULL;
	struct kx_json_error je;
	size_t end;
	ok(text && kx_json_parse(a, text, strlen(text), 0, &back, &end, &je) == 0, "JCS text parses");
	char d1[KX_DIGEST_STR_MAX], d2[KX_DIGEST_STR_MAX];
	digest_of(run, d1);
	digest_of(kx_json_get(back, "run"), d2);
	is_str(d2, d1, "run digest survives serialization");
	free(text);

	char name[256];
	ok(bench_manifest_filename(m, name, sizeof(name)) == 0 &&
	   strncmp(name, "fused_linear_cross_entropy-forward-kindex-chunked-", 50) == 0 &&
	   strncmp(name + 50, d1 + 7, 12) == 0 && !strcmp(name + 62, ".json"),
	   "file name: benchmark, impl, 12 hex of the run digest (%s)", name);
	is_str(str_at(run, "/metadata/name"),
	       "kindex-bench-fused-linear-cross-entropy-forward-kindex-chunked-nvidia-h200", "run name");
	kx_arena_free(a);
}

static void failed_run(void)
{
	struct kx_arena *a = kx_arena_new();
	const struct kx_bench_workload *w = bench_workload_find("rms_norm");
	struct kx_bench_case c;
	bench_case_init(&c, w, &w->impls[0]);
	struct kx_bench_protocol p;
	bench_protocol_init(&p, KX_PROTOCOL_KINDEX, KX_TIMER_CUDA_EVENTS);
	struct kx_bench_check chk;
	struct kx_bench_policy pol;
	bench_policy_for("bf16", &pol);
	const float got[] = { 1.0f, 5.0f }, ref[] = { 1.0f, 1.0f };
	bench_check_values(&chk, &pol, "output (all rows)", got, ref, 2);
	struct kx_bench_result res = { .c = &c, .observed_ns = 0, .check = &chk, .message = chk.message,
				       .peak_bytes = 33554432, .gpu_slug = "nvidia-h200" };
	struct kx_json *m = NULL;
	ok(bench_manifest(a, &res, bench_protocol_document(a, &p), fake_environment(a),
			  bench_workload_document(a, &c),
			  bench_implementation_document(a, "kindex-rowwise", NULL, NULL), &m) == 0,
	   "a failed run is still a manifest");
	struct kx_json *run = kx_json_get(m, "run");
	is_str(str_at(run, "/spec/status"), "failed", "status failed");
	is_str(str_at(run, "/spec/correctness/status"), "failed", "correctness failed");
	ok(str_at(run, "/spec/message") && !strncmp(str_at(run, "/spec/message"), "correctness failed: 1 of 2", 26),
	   "message says why");
	is_str(str_at(run, "/spec/observedAt"), "1970-01-01T00:00:00.000Z", "epoch timestamp");
	is_str(str_at(run, "/spec/timing/primaryStatistic"), "median", "primary statistic kept");
	ok(kx_json_pointer(run, "/spec/timing/latencyNs") == NULL && kx_json_pointer(run, "/spec/samples") == NULL,
	   "a failed run carries no timing: it was never timed");
	ok(str_at(run, "/spec/workloadDigest") && str_at(run, "/spec/protocolDigest"), "digests still linked");
	ok(kx_json_pointer(run, "/spec/tuning") == NULL, "no tuning where nothing was chosen");
	ok(kx_json_pointer(run, "/spec/artifacts") == NULL, "no samples, no attachment: no artifacts");

	/* an attached file is announced by a failed run too; there are no samples to announce */
	struct kx_bench_artifact att = { .name = "kernel.cu", .media_type = "text/x-cuda", .size = 22,
					 .digest = "sha256:16b7234fd7daa9c8d8fdddcc99c3559944eddc3d3d8491170ec2292e5a4ee2b0" };
	res.attached = &att;
	res.nattached = 1;
	ok(bench_manifest(a, &res, bench_protocol_document(a, &p), fake_environment(a),
			  bench_workload_document(a, &c),
			  bench_implementation_document(a, "kindex-rowwise", NULL, NULL), &m) == 0,
	   "a failed run with an attachment");
	run = kx_json_get(m, "run");
	is_str(str_at(run, "/spec/artifacts/0/name"), "kernel.cu", "the attachment is announced");
	ok(num_at(run, "/spec/artifacts/0/size") == 22 && kx_json_pointer(run, "/spec/artifacts/1") == NULL,
	   "alone: a run never timed has no samples.tsv");
	kx_arena_free(a);
}

static void artifact_names(void)
{
	const struct {
		const char *name, *type;
	} types[] = {
		{ "kernel.cu", "text/x-cuda" }, { "a.c", "text/x-c" }, { "a.h", "text/x-c" },
		{ "a.cpp", "text/x-c++" }, { "a.cc", "text/x-c++" }, { "a.hpp", "text/x-c++" },
		{ "bench.py", "text/x-python" }, { "x.json", "application/json" }, { "notes.txt", "text/plain" },
		{ "run.log", "text/plain" }, { "samples.tsv", "text/tab-separated-values" },
		{ "t.csv", "text/csv" }, { "prof.ncu-rep", "application/octet-stream" },
		{ "prof.nsys-rep", "application/octet-stream" }, { "Makefile", "application/octet-stream" },
		{ "KERNEL.CU", "text/x-cuda" }, { "archive.tar.gz", "application/octet-stream" },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(types); i++)
		ok(strcmp(bench_media_type(types[i].name), types[i].type) == 0, "media type of %s: %s",
		   types[i].name, bench_media_type(types[i].name));

	char long_name[300];
	memset(long_name, 'a', sizeof(long_name));
	long_name[255] = '\0';
	ok(bench_artifact_name_problem(long_name) == NULL, "255 bytes is a name");
	long_name[255] = 'a';
	long_name[256] = '\0';
	ok(bench_artifact_name_problem(long_name) != NULL, "256 bytes is not");
	const char *good[] = { "kernel.cu", "résumé.txt", "a b", "x..y", "日本.log" };
	for (size_t i = 0; i < KX_ARRAY_SIZE(good); i++)
		ok(bench_artifact_name_problem(good[i]) == NULL, "'%s' is a name", good[i]);
	const char *bad[] = { "", ".hidden", "a/b", "tab\there", "del\x7f", "c1\xc2\x85", "\xff.bin",
			      "\xc0\xaf", "\xed\xa0\x80" };
	for (size_t i = 0; i < KX_ARRAY_SIZE(bad); i++)
		ok(bench_artifact_name_problem(bad[i]) != NULL, "bad name %zu refused: %s", i,
		   bench_artifact_name_problem(bad[i]));
}

static size_t count_files(const char *dir)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, ".."); /* hidden files count */
	if (d)
		closedir(d);
	return n;
}

static void sinks(void)
{
	char tmpl[] = "/tmp/test-bench-manifest-XXXXXX";
	char *dir = mkdtemp(tmpl);
	ok(dir != NULL, "temporary directory");
	struct kx_arena *a = kx_arena_new();
	struct kx_json *m = kx_json_new(a, KX_JSON_OBJECT);
	kx_json_set_string(a, m, "hello", "world");
	char err[512], path[600];
	struct kx_bench_sink s;

	snprintf(path, sizeof(path), "%s/out.jsonl", dir);
	ok(bench_sink_open(&s, KX_SINK_FILE, path, true, err, sizeof(err)) == 0, "file sink");
	ok(access(path, F_OK) != 0, "nothing under the final name before a manifest");
	bench_sink_write(&s, m, "x.json", NULL, err, sizeof(err));
	struct kx_buf b;
	kx_buf_init(&b, 0);
	kx_read_file(path, 0, &b);
	is_str(b.ptr, "{\"hello\":\"world\"}\n", "the first manifest is in place at once");
	kx_buf_release(&b);
	ok(count_files(dir) == 1, "no temporary file between manifests");
	bench_sink_write(&s, m, "x.json", NULL, err, sizeof(err));
	bench_sink_close(&s);
	kx_buf_init(&b, 0);
	kx_read_file(path, 0, &b);
	is_str(b.ptr, "{\"hello\":\"world\"}\n{\"hello\":\"world\"}\n", "JSON Lines of JCS");
	kx_buf_release(&b);
	ok(count_files(dir) == 1, "no temporary file left");

	snprintf(path, sizeof(path), "%s/empty.json", dir);
	bench_sink_open(&s, KX_SINK_FILE, path, false, err, sizeof(err));
	bench_sink_close(&s);
	ok(access(path, F_OK) != 0 && count_files(dir) == 1, "a file sink without a manifest leaves nothing");

	char inbox[256];
	snprintf(inbox, sizeof(inbox), "%s/inbox", dir);
	mkdir(inbox, 0777);
	char *written = NULL;
	ok(bench_sink_open(&s, KX_SINK_INBOX, inbox, false, err, sizeof(err)) == 0 &&
	   bench_sink_write(&s, m, "run-1.json", &written, err, sizeof(err)) == 0, "inbox write");
	snprintf(path, sizeof(path), "%s/run-1.json", inbox);
	is_str(written, path, "the inbox file has its final name");
	free(written);
	kx_buf_init(&b, 0);
	kx_read_file(path, 0, &b);
	is_str(b.ptr, "{\n  \"hello\": \"world\"\n}\n", "one pretty manifest per inbox file");
	kx_buf_release(&b);
	ok(count_files(inbox) == 1, "no .run-1.json.tmp left in the inbox");
	bench_sink_close(&s);

	/* artifacts: in the inbox's artifacts/, named by digest, no temporary name left */
	char src[300], arts[300], want[600];
	snprintf(src, sizeof(src), "%s/k.cu", dir);
	snprintf(arts, sizeof(arts), "%s/artifacts", inbox);
	FILE *f = fopen(src, "w");
	fputs("abc", f);
	fclose(f);
	struct kx_bench_artifact art;
	bool fresh = false;
	ok(bench_attach(src, &art, err, sizeof(err)) == 0 && art.size == 3, "attach a file: %s", err);
	is_str(art.digest, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	       "its digest is the SHA-256 of its bytes");
	ok(bench_sink_open(&s, KX_SINK_INBOX, inbox, false, err, sizeof(err)) == 0 &&
	   bench_sink_artifacts(&s, NULL) == 0 &&
	   bench_sink_put_artifact(&s, &art, NULL, &written, &fresh, err, sizeof(err)) == 0 && fresh,
	   "the artifact is copied: %s", err);
	snprintf(want, sizeof(want), "%s/ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad-k.cu",
		 arts);
	is_str(written, want, "as <hex>-<name> in artifacts/");
	free(written);
	ok(count_files(arts) == 1, "and nothing else there");
	ok(bench_sink_put_artifact(&s, &art, NULL, &written, &fresh, err, sizeof(err)) == 0 && !fresh,
	   "the same bytes again: kept as they are");
	free(written);
	unlink(want);
	f = fopen(src, "w");
	fputs("abd", f);
	fclose(f);
	ok(bench_sink_put_artifact(&s, &art, NULL, &written, &fresh, err, sizeof(err)) == -ESTALE &&
	   strstr(err, "changed after it was attached"), "a file changed since it was hashed is refused: %s", err);
	ok(count_files(arts) == 0, "and leaves nothing behind");
	bench_sink_close(&s);

	char spool[256];
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	mkdir(spool, 0777);
	ok(bench_sink_open(&s, KX_SINK_SPOOL, spool, false, err, sizeof(err)) == 0 &&
	   bench_sink_write(&s, m, "run-2.json", NULL, err, sizeof(err)) == 0, "spool write");
	snprintf(path, sizeof(path), "%s/new/run-2.json", spool);
	ok(access(path, F_OK) == 0, "maildir: the file is in new/");
	snprintf(path, sizeof(path), "%s/tmp", spool);
	ok(count_files(path) == 0, "maildir: tmp/ is empty again");
	bench_sink_close(&s);

	snprintf(path, sizeof(path), "%s/missing", dir);
	ok(bench_sink_open(&s, KX_SINK_INBOX, path, false, err, sizeof(err)) == -ENOENT &&
	   !strncmp(err, "cannot use '", 12), "a missing inbox: %s", err);

	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ok(system(cmd) == 0, "cleanup");
	kx_arena_free(a);
}

int main(void)
{
	workloads();
	protocols();
	passed_run();
	failed_run();
	artifact_names();
	sinks();
	return tap_done();
}
