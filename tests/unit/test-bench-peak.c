// SPDX-License-Identifier: MIT
/*
 * Figures against the hardware's peak: the datasheet table found by exact CUDA device name (a
 * variant of a known part finds nothing), the arithmetic from a median to TFLOP/s, GB/s and
 * their fractions of the peak (checked against numbers worked out by hand for the default
 * shapes), and the measurements a manifest carries with and without a known peak.
 */
#include "bench.h"
#include "kx/manifest.h"
#include "tap.h"

#include <math.h>

static bool near(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fabs(b);
}

static const struct kx_json *measurement(const struct kx_json *run, const char *metric, const char *unit)
{
	const struct kx_json *ms = kx_json_pointer(run, "/spec/measurements");
	for (size_t i = 0; ms && i < ms->arr.len; i++) {
		const struct kx_json *m = ms->arr.v[i];
		if (!strcmp(kx_json_get_string(m, "metric"), metric) && !strcmp(kx_json_get_string(m, "unit"), unit))
			return kx_json_get(m, "value");
	}
	return NULL;
}

static double value(const struct kx_json *run, const char *metric, const char *unit)
{
	const struct kx_json *v = measurement(run, metric, unit);
	return v ? v->number : NAN;
}

static void table(void)
{
	const struct kx_bench_peak *p = bench_peak_find("NVIDIA H200");
	ok(p && p->bf16_tflops == 989.4 && p->memory_gbps == 4800, "H200: 989.4 TFLOP/s dense bf16, 4800 GB/s");
	p = bench_peak_find("NVIDIA H100 80GB HBM3");
	ok(p && p->bf16_tflops == 989.4 && p->memory_gbps == 3350, "H100 SXM5: 989.4 TFLOP/s, 3350 GB/s");
	p = bench_peak_find("NVIDIA A100-SXM4-80GB");
	ok(p && p->bf16_tflops == 312 && p->memory_gbps == 2039, "A100 SXM4 80GB: 312 TFLOP/s, 2039 GB/s");
	p = bench_peak_find("NVIDIA A100-PCIE-40GB");
	ok(p && p->bf16_tflops == 312 && p->memory_gbps == 1555, "A100 PCIe 40GB: 312 TFLOP/s, 1555 GB/s");
	ok(p && p->source && strstr(p->source, "datasheet"), "each figure names its datasheet: %s",
	   p ? p->source : "");
	ok(!bench_peak_find("NVIDIA H200 NVL") && !bench_peak_find("NVIDIA H100 NVL") &&
	   !bench_peak_find("nvidia h200") && !bench_peak_find("NVIDIA GeForce RTX 4090") &&
	   !bench_peak_find(NULL), "variants, other spellings and unknown parts have no peak");
}

static void arithmetic(void)
{
	const struct kx_bench_workload *w = bench_workload_find("fused_linear_cross_entropy");
	struct kx_bench_case c;
	bench_case_init(&c, w, &w->impls[1]);
	double flops = bench_case_flops(&c), bytes = bench_case_bytes(&c);
	ok(flops == 17214228922368.0, "FLCE at 16384 x 4096 x 128256: 2*BT*H*V = 1.72e13 FLOPs (%.0f)", flops);
	/* X 16384*4096*2 + W 128256*4096*2 + targets and losses 16384*8 */
	ok(bytes == 1185021952.0, "and at least 1185021952 bytes moved (%.0f)", bytes);
	struct kx_bench_figures f;
	bench_figures_of(flops, bytes, 29e6, bench_peak_find("NVIDIA H200"), &f);
	ok(near(f.tflops, 593.5941, 1e-6), "29 ms: 593.63 TFLOP/s (%.4f)", f.tflops);
	ok(near(f.compute_fraction, 593.5941 / 989.4, 1e-6), "= %.4f of the H200's 989.4: the docs' 60 %% at 29 ms",
	   f.compute_fraction);
	ok(near(f.gbps, 40.8628, 1e-5) && near(f.bandwidth_fraction, 40.8628 / 4800, 1e-5),
	   "and 40.86 GB/s, %.5f of 4800 GB/s", f.bandwidth_fraction);

	w = bench_workload_find("rms_norm");
	bench_case_init(&c, w, &w->impls[0]);
	ok(bench_case_flops(&c) == 0 && bench_case_bytes(&c) == 33562624.0,
	   "rms_norm 2048 x 4096: no matrix FLOPs, 4*M*H + 2*H bytes");
	bench_figures_of(0, bench_case_bytes(&c), 20000, bench_peak_find("NVIDIA A100-SXM4-80GB"), &f);
	ok(f.tflops == 0 && f.compute_fraction == 0 && near(f.gbps, 1678.1312, 1e-7) &&
	   near(f.bandwidth_fraction, 1678.1312 / 2039, 1e-7),
	   "20 us: 1678.13 GB/s = %.4f of the A100's 2039 GB/s, no compute figure", f.bandwidth_fraction);

	w = bench_workload_find("matmul");
	bench_case_init(&c, w, &w->impls[0]);
	ok(bench_case_bytes(&c) == 2.0 * 16384 * 4096 + 2.0 * 128256 * 4096 + 2.0 * 16384 * 128256,
	   "matmul: A and B read, C written");
	w = bench_workload_find("swiglu");
	bench_case_init(&c, w, &w->impls[0]);
	ok(bench_case_flops(&c) == 6.0 * 8192 * 4096 * 11008 &&
	   bench_case_bytes(&c) == 4.0 * 8192 * 4096 + 6.0 * 4096 * 11008, "swiglu: 3 GEMMs; x, weights, y");
	w = bench_workload_find("cross_entropy");
	bench_case_init(&c, w, &w->impls[0]);
	ok(bench_case_flops(&c) == 0 && bench_case_bytes(&c) == 4.0 * 16384 * 32768 + 8.0 * 16384,
	   "cross_entropy: bytes only");

	bench_figures_of(flops, bytes, 29e6, NULL, &f);
	ok(f.tflops > 0 && f.compute_fraction == 0 && f.bandwidth_fraction == 0, "no peak: figures, no fractions");
	bench_figures_of(flops, bytes, 0, bench_peak_find("NVIDIA H200"), &f);
	ok(f.tflops == 0 && f.gbps == 0 && f.compute_fraction == 0, "no median: nothing");
}

static struct kx_json *manifest_for(struct kx_arena *a, const char *bench, size_t impl,
				    const struct kx_bench_peak *peak, struct kx_bench_case *c)
{
	const struct kx_bench_workload *w = bench_workload_find(bench);
	bench_case_init(c, w, &w->impls[impl]);
	struct kx_bench_protocol p;
	bench_protocol_init(&p, KX_PROTOCOL_KINDEX, KX_TIMER_CUDA_EVENTS);
	struct kx_gpu_info gi = { .cc_major = 9, .sm_count = 132, .memory_bytes = 150011707392ull,
				  .l2_bytes = 52428800, .driver_version = 13000, .runtime_version = 13000,
				  .archs = "sm_90" };
	strcpy(gi.name, "NVIDIA H200");
	static uint64_t ns[10];
	for (size_t i = 0; i < 10; i++)
		ns[i] = 29000000;
	static uint8_t thr[10];
	static struct kx_bench_samples s;
	s = (struct kx_bench_samples){ .ns = ns, .throttled = thr, .n = 10, .stop = KX_STOP_CONVERGED };
	struct kx_bench_result res = { .c = c, .samples = &s, .gpu_slug = "nvidia-h200", .peak = peak };
	struct kx_json *m = NULL;
	if (bench_manifest(a, &res, bench_protocol_document(a, &p), bench_gpu_environment(a, &gi, NULL),
			   bench_workload_document(a, c),
			   bench_implementation_document(a, w->impls[impl].name, NULL, NULL), &m) < 0)
		return NULL;
	return m;
}

static void manifests(void)
{
	struct kx_arena *a = kx_arena_new();
	struct kx_bench_case c;
	struct kx_json *m = manifest_for(a, "fused_linear_cross_entropy", 1, bench_peak_find("NVIDIA H200"), &c);
	const struct kx_json *run = kx_json_get(m, "run");
	ok(run != NULL, "an FLCE run on an H200");
	struct kx_problems pr;
	kx_problems_init(&pr);
	struct kx_manifest mf;
	int r = kx_manifest_check(a, m, &mf, &pr);
	struct kx_buf text = { 0 };
	kx_problems_format(&pr, "run", &text);
	ok(r == 0 && pr.len == 0, "the index accepts it (%% units, spec.peak)%s%s", text.len ? ": " : "",
	   text.len ? text.ptr : "");
	kx_buf_release(&text);
	kx_problems_release(&pr);
	ok(near(value(run, "throughput", "TFLOP/s"), 593.5941, 1e-6), "TFLOP/s: %g", value(run, "throughput", "TFLOP/s"));
	ok(near(value(run, "throughput", "GB/s"), 40.8628, 1e-5), "GB/s: %g", value(run, "throughput", "GB/s"));
	ok(near(value(run, "compute-of-peak", "%"), 59.9954, 1e-5), "compute-of-peak: %g %%",
	   value(run, "compute-of-peak", "%"));
	ok(near(value(run, "bandwidth-of-peak", "%"), 0.8513, 1e-3), "bandwidth-of-peak: %g %%",
	   value(run, "bandwidth-of-peak", "%"));
	const struct kx_json *pk = kx_json_pointer(run, "/spec/peak");
	ok(pk && !strcmp(kx_json_get_string(pk, "device"), "NVIDIA H200") &&
	   kx_json_get(pk, "bf16DenseTFLOPs")->number == 989.4 && kx_json_get(pk, "memoryGBps")->number == 4800 &&
	   strstr(kx_json_get_string(pk, "source"), "H200 datasheet"),
	   "spec.peak: the device, both peaks and the datasheet");

	run = kx_json_get(manifest_for(a, "fused_linear_cross_entropy", 1, NULL, &c), "run");
	ok(run && measurement(run, "throughput", "TFLOP/s") && measurement(run, "throughput", "GB/s") &&
	   !measurement(run, "compute-of-peak", "%") && !measurement(run, "bandwidth-of-peak", "%") &&
	   !kx_json_pointer(run, "/spec/peak"), "a device without a known peak: figures, no fractions, no peak");

	run = kx_json_get(manifest_for(a, "rms_norm", 0, bench_peak_find("NVIDIA H200"), &c), "run");
	ok(run && !measurement(run, "throughput", "TFLOP/s") && measurement(run, "throughput", "GB/s") &&
	   !measurement(run, "compute-of-peak", "%") && measurement(run, "bandwidth-of-peak", "%"),
	   "rms_norm: GB/s and its fraction only");
	kx_arena_free(a);
}

int main(void)
{
	table();
	arithmetic();
	manifests();
	return tap_done();
}
