/* SPDX-License-Identifier: MIT */
/*
 * Arithmetic shared verbatim by the CUDA kernels and the host C code (CPU selftest, unit tests):
 * the input generator, bf16 rounding, the online log-sum-exp merge and silu. Keeping one copy
 * means the CPU tests exercise the exact expressions the kernels evaluate, and a CPU run of a
 * workload sees the same inputs as a GPU run of it.
 *
 * Inputs are a pure function of (seed, index): a splitmix64 hash, turned into a uniform float by
 * its top 24 bits and into an approximately normal one by summing four uniforms (Irwin-Hall,
 * rescaled to unit variance). Integer and float additions only, so host and device produce the
 * same values; no state, so any thread can generate any element.
 */
#ifndef KX_BENCH_NUMERIC_H
#define KX_BENCH_NUMERIC_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define KX_HD static inline __host__ __device__
#else
#define KX_HD static inline
#endif

/* splitmix64's finalizer: a bijection on 64-bit words with good avalanche. */
KX_HD uint64_t kx_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Distinct streams per tensor: seed, tensor number and element index mixed together. */
KX_HD uint64_t kx_rand_bits(uint64_t seed, uint32_t tensor, uint64_t idx)
{
	return kx_mix64(kx_mix64(seed ^ ((uint64_t)tensor << 56)) ^ idx);
}

/* Uniform in [0, 1) with 24 random bits (exactly representable as a float). */
KX_HD float kx_rand_uniform(uint64_t seed, uint32_t tensor, uint64_t idx)
{
	return (float)(kx_rand_bits(seed, tensor, idx) >> 40) * (1.0f / 16777216.0f);
}

/* Mean 0, variance 1, support (-2*sqrt(3), 2*sqrt(3)): four 16-bit uniforms from one hash. */
KX_HD float kx_rand_normal(uint64_t seed, uint32_t tensor, uint64_t idx)
{
	uint64_t b = kx_rand_bits(seed, tensor, idx);
	float s = (float)(b & 0xffff) + (float)((b >> 16) & 0xffff) + (float)((b >> 32) & 0xffff) +
		  (float)(b >> 48);
	/* sum of four U(0,65536) has mean 131070 and variance 4 * 65536^2 / 12 */
	return (s - 131070.0f) * (1.7320508f / 65536.0f);
}

/* Uniform integer in [0, n), n < 2^32 (multiply-high, no modulo bias worth mentioning here). */
KX_HD uint32_t kx_rand_below(uint64_t seed, uint32_t tensor, uint64_t idx, uint32_t n)
{
	return (uint32_t)(((kx_rand_bits(seed, tensor, idx) >> 32) * (uint64_t)n) >> 32);
}

/*
 * Standard deviation of the logits every loss workload is fed: fp32 logits drawn with it
 * (cross_entropy), or a weight scaled so that X . W^T has it (fused_linear_cross_entropy). At 4
 * the softmax is peaked (the row maximum is about 4.5 standard deviations at 128256 classes, and
 * a handful of logits hold most of the mass), so a log-sum-exp that mishandles the maximum or the
 * rescaling of its running sum, or skips part of the row, moves the loss far outside tolerance;
 * N(0, 1) logits give a flat softmax where such errors nearly cancel.
 */
#define KX_LOGIT_STD 4.0f

/* Tensor numbers of the generated inputs: a new tensor takes a new number, never reuses one. */
enum {
	KX_T_X = 1,       /* activations / logits */
	KX_T_W = 2,       /* weight (FLCE W, rms_norm weight, matmul B) */
	KX_T_TARGET = 3,  /* class indices */
	KX_T_W_GATEUP = 4,
	KX_T_W_DOWN = 5,
};

/* float -> bf16 bits, round to nearest even (what __float2bfloat16_rn does); NaN stays NaN. */
KX_HD uint16_t kx_bf16_from_float(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

KX_HD float kx_bf16_to_float(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/*
 * Half a bf16 ulp at x: the most rounding x to bf16 (to nearest) can move it. bf16 keeps fp32's
 * exponent and 8 significant bits, so for 2^e <= |x| < 2^(e+1) this is 2^(e-8). 0 for values
 * below 2^-118 (none of the workloads' logits), infinite for non-finite x.
 */
KX_HD float kx_bf16_half_ulp(float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	uint32_t e = (u >> 23) & 0xffu;
	if (e == 0xffu)
		return INFINITY;
	if (e < 9)
		return 0.0f;
	u = (e - 8) << 23;
	float h;
	memcpy(&h, &u, 4);
	return h;
}

/*
 * Online log-sum-exp: the pair (m, s) stands for log(s) + m = log(sum exp(x)) over the values
 * seen, with m their maximum. Merging two pairs rescales the smaller maximum's sum; an empty pair
 * is (-inf, 0) and merging it changes nothing (the guard avoids -inf - -inf = NaN).
 */
KX_HD void kx_lse_merge(float *m, float *s, float m2, float s2)
{
	if (m2 == -INFINITY)
		return;
	if (*m == -INFINITY) {
		*m = m2;
		*s = s2;
		return;
	}
	if (m2 > *m) {
		*s = *s * expf(*m - m2) + s2;
		*m = m2;
	} else {
		*s += s2 * expf(m2 - *m);
	}
}

/* Add one value to an online pair. */
KX_HD void kx_lse_add(float *m, float *s, float x)
{
	if (x > *m) {
		*s = (*m == -INFINITY ? 0.0f : *s * expf(*m - x)) + 1.0f;
		*m = x;
	} else {
		*s += expf(x - *m);
	}
}

KX_HD float kx_silu(float x)
{
	return x / (1.0f + expf(-x));
}

#endif
