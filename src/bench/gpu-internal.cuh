/* SPDX-License-Identifier: MIT */
/*
 * Private to the CUDA side of kindex-bench: the launchers of every kernel, grouped by file.
 * kernels.cu holds the timed implementations' kernels and the harness's own (input generation,
 * blocking, clock probe); reference.cu the fp32 references. Launchers return the launch's
 * cudaError_t (cudaGetLastError), so gpu.cu can name what failed.
 *
 * Layouts: row-major throughout. bf16 tensors are stored and passed as uint16_t bit patterns and
 * widened with numeric.h (exact), so no kernel depends on cuda_bf16.h's operator overloads.
 */
#ifndef KX_BENCH_GPU_INTERNAL_CUH
#define KX_BENCH_GPU_INTERNAL_CUH

#include "device.h"

#include <cuda_runtime.h>
#include <stdint.h>

/* ---- harness kernels (kernels.cu) ---- */

/* p[i] = bf16(offset + scale * normal(seed, tensor, i)) */
cudaError_t bench_launch_gen_bf16(uint16_t *p, int64_t n, uint64_t seed, uint32_t tensor, float scale,
				  float offset, cudaStream_t st);
cudaError_t bench_launch_gen_f32(float *p, int64_t n, uint64_t seed, uint32_t tensor, float scale,
				 cudaStream_t st);
cudaError_t bench_launch_gen_targets(int32_t *t, int64_t n, uint64_t seed, uint32_t classes,
				     cudaStream_t st);
/* Spin until *flag != 0 or timeout_ns of %globaltimer passed (then ++*timeouts). */
cudaError_t bench_launch_blocker(volatile int *flag, unsigned long long timeout_ns,
				 volatile unsigned *timeouts, cudaStream_t st);
/* out[0] = %globaltimer, out[1] = clock64 of SM 0 (one block per SM, `sms` of them). */
cudaError_t bench_launch_stamp(int sms, unsigned long long *out, cudaStream_t st);
/* out[0] = SM cycles spent, out[1] = %globaltimer ns spent, spinning `cycles` cycles. */
cudaError_t bench_launch_probe(unsigned long long cycles, unsigned long long *out, cudaStream_t st);

/* ---- implementations (kernels.cu) ---- */

/* Cross-entropy of fp32 logits [m, n]: loss[r] = logsumexp(x[r]) - x[r, t[r]]. */
cudaError_t bench_launch_ce_f32(const float *x, int64_t m, int64_t n, const int32_t *t, float *loss,
				bool two_pass, cudaStream_t st);
/* The same over bf16 logits [m, n] (row stride n). */
cudaError_t bench_launch_ce_bf16(const uint16_t *z, int64_t m, int64_t n, const int32_t *t,
				 float *loss, cudaStream_t st);
/*
 * Merge the chunk z[m, nc] (columns c0 .. c0+nc of the logits) into the per-row online
 * log-sum-exp (M, S), and pick up the target's logit into zt when it falls in the chunk.
 * first: this is the first chunk, (M, S) are written instead of merged.
 */
cudaError_t bench_launch_lse_chunk(const uint16_t *z, int64_t m, int64_t nc, int64_t c0, bool first,
				   const int32_t *t, float *M, float *S, float *zt, cudaStream_t st);
/* loss[r] = M[r] + log(S[r]) - zt[r] */
cudaError_t bench_launch_lse_finish(const float *M, const float *S, const float *zt, int64_t m,
				    float *loss, cudaStream_t st);
/* out[0] = mean of v[0..n), one block, fixed order (deterministic). */
cudaError_t bench_launch_mean(const float *v, int64_t n, float *out, cudaStream_t st);
/* y = bf16(x * rsqrt(mean(x^2) + eps) * w), rows of n. */
cudaError_t bench_launch_rms_norm(const uint16_t *x, const uint16_t *w, uint16_t *y, int64_t m,
				  int64_t n, float eps, cudaStream_t st);
/* h[r, j] = bf16(silu(gu[r, j]) * gu[r, inter + j]); gu is [m, 2*inter]. */
cudaError_t bench_launch_silu_mul(const uint16_t *gu, int64_t m, int64_t inter, uint16_t *h,
				  cudaStream_t st);
/* dst[i, j] = float(src[rows[i] * ld + j]) for j < ncols: sampled rows of a bf16 output. */
cudaError_t bench_launch_gather_bf16(const uint16_t *src, int64_t ld, const int64_t *rows, int64_t s,
				     int64_t ncols, float *dst, cudaStream_t st);

/* ---- fp32 references (reference.cu) ---- */

/* C[s, n] = A[rows[i], :k] . B[j, :k] in fp32 (A bf16 [*, k], B bf16 [n, k]); rows NULL = 0..s. */
cudaError_t bench_ref_gemm_bf16(const uint16_t *A, const int64_t *rows, int64_t s, const uint16_t *B,
				int64_t n, int64_t k, float *C, cudaStream_t st);
/* The same with an fp32 A [s, k]. */
cudaError_t bench_ref_gemm_f32(const float *A, int64_t s, const uint16_t *B, int64_t n, int64_t k,
			       float *C, cudaStream_t st);
/* Two-pass fp32 cross-entropy of rows z[s, n]; target of row i is t[rows ? rows[i] : i]. With
 * allow, also each row's bf16 rounding allowance (bench_lse_allowance of check.c). */
cudaError_t bench_ref_ce(const float *z, int64_t s, int64_t n, const int64_t *rows, const int32_t *t,
			 float *loss, float *allow, cudaStream_t st);
cudaError_t bench_ref_rms_norm(const uint16_t *x, const uint16_t *w, float *y, int64_t m, int64_t n,
			       float eps, cudaStream_t st);
/* h[r, j] = silu(g[r, j]) * g[r, inter + j] in fp32. */
cudaError_t bench_ref_silu_mul(const float *g, int64_t s, int64_t inter, float *h, cudaStream_t st);

/* ---- device helpers shared by kernels.cu and reference.cu ---- */

#include "numeric.h"

/* bf16 bits to float (exact): a lone value, and the low / high half of a 32-bit pair. */
static __device__ __forceinline__ float kx_bf(uint16_t h)
{
	return __uint_as_float((uint32_t)h << 16);
}
static __device__ __forceinline__ float kx_bf_lo(uint32_t w)
{
	return __uint_as_float(w << 16);
}
static __device__ __forceinline__ float kx_bf_hi(uint32_t w)
{
	return __uint_as_float(w & 0xffff0000u);
}
/* Two floats rounded to bf16 (nearest even) and packed, the first in the low half. */
static __device__ __forceinline__ uint32_t kx_bf_pack(float a, float b)
{
	return (uint32_t)kx_bf16_from_float(a) | ((uint32_t)kx_bf16_from_float(b) << 16);
}

static __device__ __forceinline__ void kx_warp_lse(float &m, float &s)
{
	for (int o = 16; o > 0; o >>= 1) {
		float m2 = __shfl_xor_sync(0xffffffffu, m, o);
		float s2 = __shfl_xor_sync(0xffffffffu, s, o);
		kx_lse_merge(&m, &s, m2, s2);
	}
}

/* Online log-sum-exp pair of the whole block; the result is valid in thread 0. */
template <int BLOCK> static __device__ __forceinline__ void kx_block_lse(float &m, float &s)
{
	__shared__ float sm[BLOCK / 32], ss[BLOCK / 32];
	const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
	kx_warp_lse(m, s);
	if (lane == 0) {
		sm[wid] = m;
		ss[wid] = s;
	}
	__syncthreads();
	if (wid == 0) {
		m = lane < BLOCK / 32 ? sm[lane] : -INFINITY;
		s = lane < BLOCK / 32 ? ss[lane] : 0.0f;
		kx_warp_lse(m, s);
	}
}

/* Maximum / sum over the block, returned to every thread. */
template <int BLOCK> static __device__ __forceinline__ float kx_block_max(float v)
{
	__shared__ float sh[BLOCK / 32];
	__shared__ float res;
	const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	if (lane == 0)
		sh[wid] = v;
	__syncthreads();
	if (wid == 0) {
		v = lane < BLOCK / 32 ? sh[lane] : -INFINITY;
		for (int o = 16; o > 0; o >>= 1)
			v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
		if (lane == 0)
			res = v;
	}
	__syncthreads();
	return res;
}

template <int BLOCK> static __device__ __forceinline__ float kx_block_sum(float v)
{
	__shared__ float sh[BLOCK / 32];
	__shared__ float res;
	const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	if (lane == 0)
		sh[wid] = v;
	__syncthreads();
	if (wid == 0) {
		v = lane < BLOCK / 32 ? sh[lane] : 0.0f;
		for (int o = 16; o > 0; o >>= 1)
			v += __shfl_xor_sync(0xffffffffu, v, o);
		if (lane == 0)
			res = v;
	}
	__syncthreads();
	return res;
}

/* Blocks for a grid-stride loop over n items: enough to fill any GPU, never past the limit. */
static inline unsigned kx_grid(int64_t n, int block)
{
	int64_t g = (n + block - 1) / block;
	return (unsigned)(g < 1 ? 1 : g > (1 << 20) ? (1 << 20) : g);
}

#endif
