/* SPDX-License-Identifier: MIT */
/*
 * The boundary between kindex-bench's host logic (plain C) and its CUDA side (*.cu, compiled as
 * C++ by nvcc): plain structs and extern "C" functions only, so both compilers read the same
 * declarations. The host decides what to run and how to sample; the device side prepares inputs,
 * runs an implementation, checks it against its fp32 reference and times calls when asked.
 *
 * Built without CUDA, gpu-none.c provides the same functions: bench_gpu_open fails with the reason,
 * so `--run` can say "no CUDA device: …" and everything else still works.
 *
 * Not thread-safe: one thread drives one device.
 */
#ifndef KX_BENCH_DEVICE_H
#define KX_BENCH_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kernels a workload can name; each has its own shape meaning (struct kx_bench_shape). */
enum kx_bench_kind {
	KX_KIND_CROSS_ENTROPY,
	KX_KIND_FLCE,
	KX_KIND_RMS_NORM,
	KX_KIND_SWIGLU,
	KX_KIND_MATMUL,
};

/*
 * What to run, reduced to numbers. Meaning of m, n, k per kind:
 *   cross_entropy: m = batch*seq rows of fp32 logits, n = vocab
 *   fused_linear_cross_entropy: m = tokens, n = vocab, k = hidden (bf16 X[m,k], W[n,k])
 *   rms_norm: m = rows (M), n = hidden, eps (bf16)
 *   swiglu: m = batch*seq, n = hidden_size, k = intermediate_size (bf16 MLP, silu)
 *   matmul: C[m,n] = A[m,k] * B[n,k]^T (bf16, fp32 accumulation)
 */
struct kx_bench_shape {
	enum kx_bench_kind kind;
	const char *impl; /* implementation name, e.g. "kindex-chunked" */
	int64_t m, n, k;
	double eps;
	uint64_t seed;      /* inputs are a pure function of (seed, index): numeric.h */
	size_t check_rows;  /* rows compared with the reference (all rows when m is smaller) */
};

/*
 * Tolerance of one output: a value passes when |got - ref| <= atol + rtol * |ref| + allowance,
 * where the allowance is a per-value bound the reference computes (allowance names it; NULL when
 * there is none, and the allowance is 0).
 */
struct kx_bench_tolerance {
	const char *dtype;  /* the workload's compute dtype: "bf16", "fp16", "fp32" */
	const char *output; /* "loss" (per-row), "mean" (a reduction), "output" (element-wise) */
	double rtol, atol;
	const char *allowance;
};

/* The tolerances one workload's check applies, by output (bench_policy_for). */
struct kx_bench_policy {
	const char *dtype;
	const struct kx_bench_tolerance *loss, *mean, *output;
};

#define KX_BENCH_MAX_OUTPUTS 3

/* One compared output of a check: its tolerance and how the values fared under it. */
struct kx_bench_output_check {
	const char *what;  /* "per-token loss (sampled rows)", "mean loss", "output (all rows)" */
	const struct kx_bench_tolerance *tol;
	size_t checked, violations, nonfinite;
	double max_abs, max_rel;
	size_t worst;       /* first non-finite value, else the one using most of its allowance */
	double worst_share; /* |got - ref| / bound at worst */
};

/* The outcome of a correctness check: every output compared, and their totals. */
struct kx_bench_check {
	bool passed;
	const char *dtype;
	struct kx_bench_output_check out[KX_BENCH_MAX_OUTPUTS];
	size_t nout;
	size_t checked, violations, nonfinite; /* over all outputs */
	double max_abs, max_rel;
	const char *what;  /* the outputs compared, for the record ("per-token loss and mean loss") */
	char message[320]; /* lowercase, for a failed check: the first output that failed, by how much */
};

/*
 * A check: bench_check_init, then per output bench_check_output and one or more
 * bench_compare into it, then bench_check_finish (passed = every output compared values
 * and none is outside its tolerance or non-finite; writes the message). allow[i] is the
 * reference's per-value allowance (NULL: none). Returns whether the output so far passes.
 */
void bench_check_init(struct kx_bench_check *c, const char *dtype, const char *what);
void bench_check_output(struct kx_bench_check *c, const struct kx_bench_tolerance *tol,
			const char *what);
bool bench_compare(struct kx_bench_check *c, const float *got, const float *ref,
		   const float *allow, size_t n);
bool bench_check_finish(struct kx_bench_check *c);

/* The published tolerances for a workload of this compute dtype; -ENOENT for an unknown one. */
int bench_policy_for(const char *dtype, struct kx_bench_policy *ret);

/* Evenly spread rows of m: all of them when s == m, else the first, the last and s - 2 between. */
void bench_pick_rows(int64_t *rows, int64_t s, int64_t m);

/*
 * The check of a loss workload (cross_entropy, fused_linear_cross_entropy), the one the GPU and
 * CPU paths both run: the per-row loss at rows[0..s) against the reference ref[0..s) under the
 * policy's loss tolerance with the reference's allowance (allow: NULL or s values), then the
 * mean against the fp64 mean of all m per-row losses under the mean tolerance. Finishes c.
 */
bool bench_check_losses(struct kx_bench_check *c, const struct kx_bench_policy *p,
			const float *loss, size_t m, float mean, const int64_t *rows,
			const float *ref, const float *allow, size_t s);
/* The check of an element-wise workload: got[0..n) against ref under the output tolerance.
 * Finishes c. */
bool bench_check_values(struct kx_bench_check *c, const struct kx_bench_policy *p,
			const char *what, const float *got, const float *ref, size_t n);

/*
 * The reference's allowance for the loss of one row of bf16-rounded logits: how far rounding
 * every logit to bf16 can move logsumexp(z) - z[t] to first order, computed from the exact
 * (fp32) logits z[0..n): half an ulp of the target logit plus the softmax-weighted half ulps of
 * all logits (d logsumexp / dz_j = softmax_j). fp64 on the host; reference.cu evaluates the same.
 */
double bench_lse_allowance(const float *z, size_t n, int32_t t);

/*
 * How a harness times calls, whatever the clock (CUDA events or the CPU's monotonic clock). The
 * sampling rules (measure.c) are written once against these.
 */
struct kx_bench_clock {
	double sm_mhz;    /* effective SM (or CPU) clock; 0 when unknown */
	uint64_t reasons; /* NVML clock event reasons that count as throttling (0 = none) */
	bool reasons_known; /* NVML answered: judge by reasons, not by the clock's level */
	bool throttled;
};

struct kx_bench_ops {
	/*
	 * Time n calls into ret_ns[0..n), each after a cache flush and between its own timer pair.
	 * blocking (the kindex protocol): each call is enqueued behind a blocked stream, released
	 * once enqueued, and synchronized before the next; otherwise (do_bench) the n calls are
	 * enqueued back to back and synchronized once at the end. ret_mhz (may be NULL): each
	 * call's effective SM clock across its timer pair, 0 where it could not be measured.
	 */
	int (*time_calls)(void *ctx, size_t n, bool blocking, uint64_t *ret_ns, double *ret_mhz);
	/* n (flush + call) pairs between one timer pair, total in *ret_ns (do_bench's estimate). */
	int (*time_span)(void *ctx, size_t n, uint64_t *ret_ns);
	/* n untimed calls without flushing (do_bench's warmup). */
	int (*warm)(void *ctx, size_t n);
	/* Poll the clocks; NULL when nothing can be watched. */
	int (*clock)(void *ctx, struct kx_bench_clock *ret);
	/* Monotonic seconds (the host clock the timeout and warmup are measured in). */
	double (*now)(void *ctx);
};

/* ---- the CUDA side ---------------------------------------------------------------------------- */

/* What cudaGetDeviceProperties and cudaDeviceGetAttribute say (CUDA 13 has no clockRate field). */
struct kx_gpu_info {
	int ordinal;
	char name[256];
	char pci_bus_id[32];
	int cc_major, cc_minor;
	int sm_count;
	uint64_t memory_bytes;
	uint64_t l2_bytes;
	int sm_clock_khz;  /* cudaDevAttrClockRate: peak SM clock */
	int mem_clock_khz; /* cudaDevAttrMemoryClockRate */
	int mem_bus_bits;
	int ecc;
	int driver_version;  /* cudaDriverGetVersion: 13000 = 13.0 */
	int runtime_version; /* cudaRuntimeGetVersion */
	int cublas_major, cublas_minor, cublas_patch;
	int nvcc_major, nvcc_minor; /* the toolkit kindex-bench was compiled with */
	const char *archs;          /* the architectures compiled in, "sm_80 sm_90 …" */
};

struct kx_gpu;
struct kx_gpu_case;

/*
 * A parameter an implementation chooses by measurement at run time (kindex-chunked: its chunk
 * width, in vocabulary columns): its name as the run records it and the candidate values, in
 * increasing order; n = 0 when the implementation has none.
 */
#define KX_BENCH_MAX_CANDIDATES 4
struct kx_bench_tunable {
	const char *name; /* "chunkColumns" */
	size_t n;
	int64_t values[KX_BENCH_MAX_CANDIDATES];
};

/*
 * Open device `ordinal` (-1: the first one). On failure returns a negative errno and writes the
 * reason to err (e.g. "cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime
 * version (cudaErrorInsufficientDriver = 35)"); -ENODEV when there is no device.
 */
int bench_gpu_open(int ordinal, struct kx_gpu **ret, struct kx_gpu_info *ret_info, char *err,
		   size_t errlen);
void bench_gpu_close(struct kx_gpu *g);
/* Allocate the flush buffer: `bytes` zeroed with cudaMemsetAsync before each timed call. */
int bench_gpu_set_flush(struct kx_gpu *g, size_t bytes, char *err, size_t errlen);
/* Calls whose blocking kernel gave up waiting (a sign the launch queue filled up). */
unsigned bench_gpu_blocker_timeouts(const struct kx_gpu *g);

/*
 * Prepare inputs (deterministic, generated on the device) and the implementation's buffers.
 * -ENOMEM when the device has not enough memory (err says which allocation), -EINVAL for a shape
 * the implementation cannot take, -EIO for another CUDA error.
 */
int bench_gpu_case_new(struct kx_gpu *g, const struct kx_bench_shape *shape,
		       struct kx_gpu_case **ret, char *err, size_t errlen);
void bench_gpu_case_free(struct kx_gpu_case *c);
/* Run once, run the fp32 reference on the same inputs and compare under the policy. */
int bench_gpu_case_check(struct kx_gpu_case *c, const struct kx_bench_policy *p,
			 struct kx_bench_check *ret, char *err, size_t errlen);
/* Peak bytes of the case's device allocations: inputs, outputs and workspace (cuBLAS's too). */
uint64_t bench_gpu_case_peak_bytes(const struct kx_gpu_case *c);
/* Timer ops over CUDA events for this case (ctx = the case). clock and now stay NULL. */
void bench_gpu_case_ops(struct kx_bench_ops *ops);
/* The last CUDA error message of the case (after an op failed). */
const char *bench_gpu_case_error(const struct kx_gpu_case *c);
/* The case's tunable parameter (n = 0: none); bench_tune chooses its value by measurement. */
void bench_gpu_case_tunable(const struct kx_gpu_case *c, struct kx_bench_tunable *ret);
/* Use `value` from the next call on; -EINVAL (with the case's error) for one not a candidate.
 * Until it is called the case uses its widest candidate. */
int bench_gpu_case_set_tunable(struct kx_gpu_case *c, int64_t value);

#ifdef __cplusplus
}
#endif

#endif
