// SPDX-License-Identifier: MIT
/*
 * The fp32 references every implementation is checked against before it is timed. They are
 * written to be obviously right rather than fast, and to share no code path with the timed
 * kernels beyond numeric.h's arithmetic: a classic shared-memory tiled SGEMM (64x64 tiles, each
 * thread 4x4 outputs, fp32 fused multiply-adds over the exact widened bf16 inputs), cross-entropy
 * as max then sum of exponentials with scalar loads, RMSNorm with a correctly rounded square
 * root. The GEMMs take a row list, so a workload with 16384 tokens is checked on a few hundred
 * evenly spread rows at a cost of milliseconds instead of a full fp32 GEMM.
 */
#include "gpu-internal.cuh"

#include <math.h>

#define TILE 64
#define TK 16

template <typename T> static __device__ __forceinline__ float widen(const T *p);
template <> __device__ __forceinline__ float widen<float>(const float *p)
{
	return *p;
}
template <> __device__ __forceinline__ float widen<uint16_t>(const uint16_t *p)
{
	return kx_bf(*p);
}

/* C[i, j] = sum_k A[row(i), k] * B[j, k]; 256 threads, a 64x64 tile of C per block */
template <typename TA>
static __global__ void __launch_bounds__(256)
	ref_gemm(const TA *__restrict__ A, const int64_t *__restrict__ rows, int64_t s,
		 const uint16_t *__restrict__ B, int64_t n, int64_t k, float *__restrict__ C)
{
	__shared__ float As[TK][TILE + 1], Bs[TK][TILE + 1];
	const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
	const int64_t i0 = (int64_t)blockIdx.y * TILE, j0 = (int64_t)blockIdx.x * TILE;
	float acc[4][4];
#pragma unroll
	for (int q = 0; q < 4; q++)
#pragma unroll
		for (int p = 0; p < 4; p++)
			acc[q][p] = 0.0f;
	for (int64_t k0 = 0; k0 < k; k0 += TK) {
		for (int l = threadIdx.x; l < TILE * TK; l += 256) {
			const int r = l / TK, kk = l % TK;
			const int64_t gi = i0 + r, gj = j0 + r, gk = k0 + kk;
			float a = 0.0f, b = 0.0f;
			if (gi < s && gk < k)
				a = widen(A + (rows ? rows[gi] : gi) * k + gk);
			if (gj < n && gk < k)
				b = kx_bf(B[gj * k + gk]);
			As[kk][r] = a;
			Bs[kk][r] = b;
		}
		__syncthreads();
#pragma unroll
		for (int kk = 0; kk < TK; kk++) {
			float a[4], b[4];
#pragma unroll
			for (int q = 0; q < 4; q++) {
				a[q] = As[kk][ty + 16 * q];
				b[q] = Bs[kk][tx + 16 * q];
			}
#pragma unroll
			for (int q = 0; q < 4; q++)
#pragma unroll
				for (int p = 0; p < 4; p++)
					acc[q][p] = fmaf(a[q], b[p], acc[q][p]);
		}
		__syncthreads();
	}
#pragma unroll
	for (int q = 0; q < 4; q++)
#pragma unroll
		for (int p = 0; p < 4; p++) {
			const int64_t i = i0 + ty + 16 * q, j = j0 + tx + 16 * p;
			if (i < s && j < n)
				C[i * n + j] = acc[q][p];
		}
}

static dim3 gemm_grid(int64_t s, int64_t n)
{
	return dim3((unsigned)((n + TILE - 1) / TILE), (unsigned)((s + TILE - 1) / TILE));
}

cudaError_t bench_ref_gemm_bf16(const uint16_t *A, const int64_t *rows, int64_t s, const uint16_t *B,
				int64_t n, int64_t k, float *C, cudaStream_t st)
{
	ref_gemm<uint16_t><<<gemm_grid(s, n), 256, 0, st>>>(A, rows, s, B, n, k, C);
	return cudaGetLastError();
}

cudaError_t bench_ref_gemm_f32(const float *A, int64_t s, const uint16_t *B, int64_t n, int64_t k,
			       float *C, cudaStream_t st)
{
	ref_gemm<float><<<gemm_grid(s, n), 256, 0, st>>>(A, NULL, s, B, n, k, C);
	return cudaGetLastError();
}

static __global__ void __launch_bounds__(256)
	ref_ce_rows(const float *__restrict__ z, int64_t n, const int64_t *__restrict__ rows,
		    const int32_t *__restrict__ t, float *__restrict__ loss, float *__restrict__ allow)
{
	const float *zr = z + (int64_t)blockIdx.x * n;
	float mx = -INFINITY;
	for (int64_t j = threadIdx.x; j < n; j += 256)
		mx = fmaxf(mx, zr[j]);
	mx = kx_block_max<256>(mx);
	float s = 0.0f;
	for (int64_t j = threadIdx.x; j < n; j += 256)
		s += expf(zr[j] - mx);
	s = kx_block_sum<256>(s);
	const int64_t src = rows ? rows[blockIdx.x] : (int64_t)blockIdx.x;
	if (threadIdx.x == 0)
		loss[blockIdx.x] = mx + logf(s) - zr[t[src]];
	if (!allow)
		return;
	/* bench_lse_allowance (check.c): softmax-weighted half ulps, plus the target's own */
	float a = 0.0f;
	for (int64_t j = threadIdx.x; j < n; j += 256)
		a += expf(zr[j] - mx) * kx_bf16_half_ulp(zr[j]);
	a = kx_block_sum<256>(a);
	if (threadIdx.x == 0)
		allow[blockIdx.x] = kx_bf16_half_ulp(zr[t[src]]) + a / s;
}

cudaError_t bench_ref_ce(const float *z, int64_t s, int64_t n, const int64_t *rows, const int32_t *t,
			 float *loss, float *allow, cudaStream_t st)
{
	ref_ce_rows<<<(unsigned)s, 256, 0, st>>>(z, n, rows, t, loss, allow);
	return cudaGetLastError();
}

static __global__ void __launch_bounds__(256)
	ref_rms(const uint16_t *__restrict__ x, const uint16_t *__restrict__ w, float *__restrict__ y,
		int64_t n, float eps)
{
	const uint16_t *xr = x + (int64_t)blockIdx.x * n;
	float *yr = y + (int64_t)blockIdx.x * n;
	float ss = 0.0f;
	for (int64_t j = threadIdx.x; j < n; j += 256) {
		float v = kx_bf(xr[j]);
		ss += v * v;
	}
	ss = kx_block_sum<256>(ss);
	const float r = 1.0f / sqrtf(ss / (float)n + eps);
	for (int64_t j = threadIdx.x; j < n; j += 256)
		yr[j] = kx_bf(xr[j]) * r * kx_bf(w[j]);
}

cudaError_t bench_ref_rms_norm(const uint16_t *x, const uint16_t *w, float *y, int64_t m, int64_t n,
			       float eps, cudaStream_t st)
{
	ref_rms<<<(unsigned)m, 256, 0, st>>>(x, w, y, n, eps);
	return cudaGetLastError();
}

static __global__ void ref_silu(const float *__restrict__ g, int64_t s, int64_t inter,
				float *__restrict__ h)
{
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < s * inter;
	     i += (int64_t)gridDim.x * blockDim.x) {
		const int64_t r = i / inter, j = i % inter;
		h[i] = kx_silu(g[r * 2 * inter + j]) * g[r * 2 * inter + inter + j];
	}
}

cudaError_t bench_ref_silu_mul(const float *g, int64_t s, int64_t inter, float *h, cudaStream_t st)
{
	ref_silu<<<kx_grid(s * inter, 256), 256, 0, st>>>(g, s, inter, h);
	return cudaGetLastError();
}
