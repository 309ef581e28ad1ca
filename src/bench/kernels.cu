// SPDX-License-Identifier: MIT
/*
 * The kernels kindex-bench times, and the few the harness needs around them (input generation,
 * the blocking kernel that keeps launch latency out of the event pair, the clock probe).
 *
 * Cross-entropy is computed as logsumexp(row) - row[target] with an online log-sum-exp: each
 * thread keeps a (max, sum) pair over its 16-byte vectors, pairs are merged across the warp and
 * the block (numeric.h's kx_lse_merge), so a row is read once. The two-pass variant reads it twice
 * (max, then sum) and is kept as the textbook baseline. The fused linear + cross-entropy paths
 * use the same reduction on bf16 logits: over whole rows after a full GEMM (materialized), or one
 * vocabulary chunk at a time, merged into per-token pairs (chunked). Everything accumulates in
 * fp32; bf16 is only a storage format here.
 */
#include "gpu-internal.cuh"

#include <math.h>

#define BLOCK 256

/* ---- inputs -------------------------------------------------------------------------------- */

static __global__ void gen_bf16(uint16_t *p, int64_t n, uint64_t seed, uint32_t tensor,
				float scale, float offset)
{
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (int64_t)gridDim.x * blockDim.x)
		p[i] = kx_bf16_from_float(offset + scale * kx_rand_normal(seed, tensor, (uint64_t)i));
}

static __global__ void gen_f32(float *p, int64_t n, uint64_t seed, uint32_t tensor, float scale)
{
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (int64_t)gridDim.x * blockDim.x)
		p[i] = scale * kx_rand_normal(seed, tensor, (uint64_t)i);
}

static __global__ void gen_targets(int32_t *t, int64_t n, uint64_t seed, uint32_t classes)
{
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (int64_t)gridDim.x * blockDim.x)
		t[i] = (int32_t)kx_rand_below(seed, KX_T_TARGET, (uint64_t)i, classes);
}

cudaError_t bench_launch_gen_bf16(uint16_t *p, int64_t n, uint64_t seed, uint32_t tensor, float scale,
				  float offset, cudaStream_t st)
{
	gen_bf16<<<kx_grid(n, BLOCK), BLOCK, 0, st>>>(p, n, seed, tensor, scale, offset);
	return cudaGetLastError();
}

cudaError_t bench_launch_gen_f32(float *p, int64_t n, uint64_t seed, uint32_t tensor, float scale,
				 cudaStream_t st)
{
	gen_f32<<<kx_grid(n, BLOCK), BLOCK, 0, st>>>(p, n, seed, tensor, scale);
	return cudaGetLastError();
}

cudaError_t bench_launch_gen_targets(int32_t *t, int64_t n, uint64_t seed, uint32_t classes,
				     cudaStream_t st)
{
	gen_targets<<<kx_grid(n, BLOCK), BLOCK, 0, st>>>(t, n, seed, classes);
	return cudaGetLastError();
}

/* ---- the harness's own kernels --------------------------------------------------------------- */

static __device__ __forceinline__ unsigned long long globaltimer(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/*
 * Holds the stream while the host enqueues flush, events and the call, so they start back to
 * back however slow the host was (nvbench's blocking kernel). The flag lives in mapped pinned
 * host memory; the timeout keeps a host that never releases it (a full launch queue) from
 * hanging the run.
 */
static __global__ void blocker(volatile int *flag, unsigned long long timeout_ns,
			       volatile unsigned *timeouts)
{
	unsigned long long t0 = globaltimer();
	while (*flag == 0) {
		if (globaltimer() - t0 > timeout_ns) {
			*timeouts = *timeouts + 1;
			return;
		}
		__nanosleep(256);
	}
}

cudaError_t bench_launch_blocker(volatile int *flag, unsigned long long timeout_ns,
				 volatile unsigned *timeouts, cudaStream_t st)
{
	blocker<<<1, 1, 0, st>>>(flag, timeout_ns, timeouts);
	return cudaGetLastError();
}

/* SM cycles (clock64) against wall ns (%globaltimer): the effective SM clock without NVML. */
static __global__ void probe(unsigned long long cycles, unsigned long long *out)
{
	long long c0 = clock64();
	unsigned long long t0 = globaltimer();
	while ((unsigned long long)(clock64() - c0) < cycles) {
	}
	long long c1 = clock64();
	unsigned long long t1 = globaltimer();
	out[0] = (unsigned long long)(c1 - c0);
	out[1] = t1 - t0;
}

/*
 * SM 0's %globaltimer and clock64 into out[0], out[1] (nvbench's timestamps kernel): one block per
 * SM, so that one of them lands on SM 0; clock64 counts per SM, so both stamps of a sample must
 * come from the same one. A sample's clock is (c1 - c0) / (t1 - t0) across its event pair.
 */
static __global__ void stamp(unsigned long long *out)
{
	unsigned smid;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
	if (smid == 0) {
		out[0] = globaltimer();
		out[1] = (unsigned long long)clock64();
	}
}

cudaError_t bench_launch_stamp(int sms, unsigned long long *out, cudaStream_t st)
{
	stamp<<<(unsigned)(sms > 0 ? sms : 1), 1, 0, st>>>(out);
	return cudaGetLastError();
}

cudaError_t bench_launch_probe(unsigned long long cycles, unsigned long long *out, cudaStream_t st)
{
	probe<<<1, 1, 0, st>>>(cycles, out);
	return cudaGetLastError();
}

/* ---- cross-entropy over fp32 logits ----------------------------------------------------------- */

/* rows are 16-byte aligned when n % 4 == 0: cudaMalloc aligns to 256 and a row is 4n bytes */
static __global__ void __launch_bounds__(BLOCK)
	ce_f32_online(const float *__restrict__ x, int64_t n, const int32_t *__restrict__ t,
		      float *__restrict__ loss)
{
	const float *xr = x + (int64_t)blockIdx.x * n;
	float m = -INFINITY, s = 0.0f;
	if ((n & 3) == 0) {
		const float4 *v = reinterpret_cast<const float4 *>(xr);
		for (int64_t i = threadIdx.x; i < (n >> 2); i += BLOCK) {
			float4 q = __ldcs(v + i);
			float mq = fmaxf(fmaxf(q.x, q.y), fmaxf(q.z, q.w));
			float sq = expf(q.x - mq) + expf(q.y - mq) + expf(q.z - mq) + expf(q.w - mq);
			kx_lse_merge(&m, &s, mq, sq);
		}
	} else {
		for (int64_t i = threadIdx.x; i < n; i += BLOCK)
			kx_lse_add(&m, &s, xr[i]);
	}
	kx_block_lse<BLOCK>(m, s);
	if (threadIdx.x == 0)
		loss[blockIdx.x] = m + logf(s) - xr[t[blockIdx.x]];
}

static __global__ void __launch_bounds__(BLOCK)
	ce_f32_two_pass(const float *__restrict__ x, int64_t n, const int32_t *__restrict__ t,
			float *__restrict__ loss)
{
	const float *xr = x + (int64_t)blockIdx.x * n;
	const bool vec = (n & 3) == 0;
	const float4 *v = reinterpret_cast<const float4 *>(xr);
	float mx = -INFINITY;
	if (vec) {
		for (int64_t i = threadIdx.x; i < (n >> 2); i += BLOCK) {
			float4 q = v[i];
			mx = fmaxf(mx, fmaxf(fmaxf(q.x, q.y), fmaxf(q.z, q.w)));
		}
	} else {
		for (int64_t i = threadIdx.x; i < n; i += BLOCK)
			mx = fmaxf(mx, xr[i]);
	}
	mx = kx_block_max<BLOCK>(mx);
	float s = 0.0f;
	if (vec) {
		for (int64_t i = threadIdx.x; i < (n >> 2); i += BLOCK) {
			float4 q = v[i];
			s += expf(q.x - mx) + expf(q.y - mx) + expf(q.z - mx) + expf(q.w - mx);
		}
	} else {
		for (int64_t i = threadIdx.x; i < n; i += BLOCK)
			s += expf(xr[i] - mx);
	}
	s = kx_block_sum<BLOCK>(s);
	if (threadIdx.x == 0)
		loss[blockIdx.x] = mx + logf(s) - xr[t[blockIdx.x]];
}

cudaError_t bench_launch_ce_f32(const float *x, int64_t m, int64_t n, const int32_t *t, float *loss,
				bool two_pass, cudaStream_t st)
{
	if (two_pass)
		ce_f32_two_pass<<<(unsigned)m, BLOCK, 0, st>>>(x, n, t, loss);
	else
		ce_f32_online<<<(unsigned)m, BLOCK, 0, st>>>(x, n, t, loss);
	return cudaGetLastError();
}

/* ---- cross-entropy over bf16 logits ----------------------------------------------------------- */

/* Online pair of 8 bf16 values packed in a uint4: one max, eight exponentials, one merge. */
static __device__ __forceinline__ void lse8(uint4 q, float &m, float &s)
{
	float f[8] = { kx_bf_lo(q.x), kx_bf_hi(q.x), kx_bf_lo(q.y), kx_bf_hi(q.y),
		       kx_bf_lo(q.z), kx_bf_hi(q.z), kx_bf_lo(q.w), kx_bf_hi(q.w) };
	float mq = f[0];
#pragma unroll
	for (int j = 1; j < 8; j++)
		mq = fmaxf(mq, f[j]);
	float sq = 0.0f;
#pragma unroll
	for (int j = 0; j < 8; j++)
		sq += expf(f[j] - mq);
	kx_lse_merge(&m, &s, mq, sq);
}

/* rows are 16-byte aligned when n % 8 == 0 (2n bytes a row) */
static __global__ void __launch_bounds__(BLOCK)
	ce_bf16(const uint16_t *__restrict__ z, int64_t n, const int32_t *__restrict__ t,
		float *__restrict__ loss)
{
	const uint16_t *zr = z + (int64_t)blockIdx.x * n;
	float m = -INFINITY, s = 0.0f;
	if ((n & 7) == 0) {
		const uint4 *v = reinterpret_cast<const uint4 *>(zr);
		for (int64_t i = threadIdx.x; i < (n >> 3); i += BLOCK)
			lse8(__ldcs(v + i), m, s);
	} else {
		for (int64_t i = threadIdx.x; i < n; i += BLOCK)
			kx_lse_add(&m, &s, kx_bf(zr[i]));
	}
	kx_block_lse<BLOCK>(m, s);
	if (threadIdx.x == 0)
		loss[blockIdx.x] = m + logf(s) - kx_bf(zr[t[blockIdx.x]]);
}

cudaError_t bench_launch_ce_bf16(const uint16_t *z, int64_t m, int64_t n, const int32_t *t,
				 float *loss, cudaStream_t st)
{
	ce_bf16<<<(unsigned)m, BLOCK, 0, st>>>(z, n, t, loss);
	return cudaGetLastError();
}

/*
 * One warp per row of a vocabulary chunk: the chunk's (max, sum) merged into the row's running
 * pair. The target's logit is read from the chunk that holds it, rounded as the materialized
 * path rounds it, so both paths compute the same function.
 */
#define CHUNK_ROWS (BLOCK / 32)

static __global__ void __launch_bounds__(BLOCK)
	lse_chunk(const uint16_t *__restrict__ z, int64_t m, int64_t nc, int64_t c0, bool first,
		  const int32_t *__restrict__ t, float *__restrict__ M, float *__restrict__ S,
		  float *__restrict__ zt)
{
	const int64_t row = (int64_t)blockIdx.x * CHUNK_ROWS + (threadIdx.x >> 5);
	const int lane = threadIdx.x & 31;
	if (row >= m)
		return; /* whole warps leave together; no block-wide barrier follows */
	const uint16_t *zr = z + row * nc;
	float mm = -INFINITY, ss = 0.0f;
	if ((nc & 7) == 0) {
		const uint4 *v = reinterpret_cast<const uint4 *>(zr);
		for (int64_t i = lane; i < (nc >> 3); i += 32)
			lse8(__ldcs(v + i), mm, ss);
	} else {
		for (int64_t i = lane; i < nc; i += 32)
			kx_lse_add(&mm, &ss, kx_bf(zr[i]));
	}
	kx_warp_lse(mm, ss);
	if (lane == 0) {
		if (first) {
			M[row] = mm;
			S[row] = ss;
		} else {
			float a = M[row], b = S[row];
			kx_lse_merge(&a, &b, mm, ss);
			M[row] = a;
			S[row] = b;
		}
		int64_t tt = (int64_t)t[row] - c0;
		if (tt >= 0 && tt < nc)
			zt[row] = kx_bf(zr[tt]);
	}
}

cudaError_t bench_launch_lse_chunk(const uint16_t *z, int64_t m, int64_t nc, int64_t c0, bool first,
				   const int32_t *t, float *M, float *S, float *zt, cudaStream_t st)
{
	unsigned blocks = (unsigned)((m + CHUNK_ROWS - 1) / CHUNK_ROWS);
	lse_chunk<<<blocks, BLOCK, 0, st>>>(z, m, nc, c0, first, t, M, S, zt);
	return cudaGetLastError();
}

static __global__ void lse_finish(const float *__restrict__ M, const float *__restrict__ S,
				  const float *__restrict__ zt, int64_t m, float *__restrict__ loss)
{
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m;
	     i += (int64_t)gridDim.x * blockDim.x)
		loss[i] = M[i] + logf(S[i]) - zt[i];
}

cudaError_t bench_launch_lse_finish(const float *M, const float *S, const float *zt, int64_t m,
				    float *loss, cudaStream_t st)
{
	lse_finish<<<kx_grid(m, BLOCK), BLOCK, 0, st>>>(M, S, zt, m, loss);
	return cudaGetLastError();
}

#define MEAN_BLOCK 1024

static __global__ void __launch_bounds__(MEAN_BLOCK)
	mean_kernel(const float *__restrict__ v, int64_t n, float *__restrict__ out)
{
	float acc = 0.0f;
	for (int64_t i = threadIdx.x; i < n; i += MEAN_BLOCK)
		acc += v[i];
	acc = kx_block_sum<MEAN_BLOCK>(acc);
	if (threadIdx.x == 0)
		out[0] = acc / (float)n;
}

cudaError_t bench_launch_mean(const float *v, int64_t n, float *out, cudaStream_t st)
{
	mean_kernel<<<1, MEAN_BLOCK, 0, st>>>(v, n, out);
	return cudaGetLastError();
}

/* ---- RMSNorm ------------------------------------------------------------------------------------ */

static __global__ void __launch_bounds__(BLOCK)
	rms_norm_bf16(const uint16_t *__restrict__ x, const uint16_t *__restrict__ w,
		      uint16_t *__restrict__ y, int64_t n, float eps)
{
	const uint16_t *xr = x + (int64_t)blockIdx.x * n;
	uint16_t *yr = y + (int64_t)blockIdx.x * n;
	const bool vec = (n & 7) == 0;
	float ss = 0.0f;
	if (vec) {
		const uint4 *v = reinterpret_cast<const uint4 *>(xr);
		for (int64_t i = threadIdx.x; i < (n >> 3); i += BLOCK) {
			uint4 q = v[i];
			const uint32_t wd[4] = { q.x, q.y, q.z, q.w };
#pragma unroll
			for (int j = 0; j < 4; j++) {
				float a = kx_bf_lo(wd[j]), b = kx_bf_hi(wd[j]);
				ss += a * a + b * b;
			}
		}
	} else {
		for (int64_t i = threadIdx.x; i < n; i += BLOCK) {
			float a = kx_bf(xr[i]);
			ss += a * a;
		}
	}
	ss = kx_block_sum<BLOCK>(ss);
	const float r = rsqrtf(ss / (float)n + eps);
	if (vec) {
		/* the second read of the row hits L1/L2: it was read a moment ago by this block */
		const uint4 *v = reinterpret_cast<const uint4 *>(xr);
		const uint4 *wv = reinterpret_cast<const uint4 *>(w);
		uint4 *o = reinterpret_cast<uint4 *>(yr);
		for (int64_t i = threadIdx.x; i < (n >> 3); i += BLOCK) {
			uint4 q = v[i], g = __ldg(wv + i), out;
			out.x = kx_bf_pack(kx_bf_lo(q.x) * r * kx_bf_lo(g.x), kx_bf_hi(q.x) * r * kx_bf_hi(g.x));
			out.y = kx_bf_pack(kx_bf_lo(q.y) * r * kx_bf_lo(g.y), kx_bf_hi(q.y) * r * kx_bf_hi(g.y));
			out.z = kx_bf_pack(kx_bf_lo(q.z) * r * kx_bf_lo(g.z), kx_bf_hi(q.z) * r * kx_bf_hi(g.z));
			out.w = kx_bf_pack(kx_bf_lo(q.w) * r * kx_bf_lo(g.w), kx_bf_hi(q.w) * r * kx_bf_hi(g.w));
			__stcs(o + i, out);
		}
	} else {
		for (int64_t i = threadIdx.x; i < n; i += BLOCK)
			yr[i] = kx_bf16_from_float(kx_bf(xr[i]) * r * kx_bf(w[i]));
	}
}

cudaError_t bench_launch_rms_norm(const uint16_t *x, const uint16_t *w, uint16_t *y, int64_t m,
				  int64_t n, float eps, cudaStream_t st)
{
	rms_norm_bf16<<<(unsigned)m, BLOCK, 0, st>>>(x, w, y, n, eps);
	return cudaGetLastError();
}

/* ---- SwiGLU activation ------------------------------------------------------------------------- */

/* grid.y walks rows (looping past 65535), grid.x columns; pairs of bf16 when inter is even */
static __global__ void silu_mul(const uint16_t *__restrict__ gu, int64_t m, int64_t inter,
				uint16_t *__restrict__ h)
{
	const bool pairs = (inter & 1) == 0;
	const int64_t cols = pairs ? inter / 2 : inter;
	for (int64_t r = blockIdx.y; r < m; r += gridDim.y) {
		const uint16_t *g = gu + r * 2 * inter;
		for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < cols;
		     j += (int64_t)gridDim.x * blockDim.x) {
			if (pairs) {
				uint32_t a = reinterpret_cast<const uint32_t *>(g)[j];
				uint32_t b = reinterpret_cast<const uint32_t *>(g + inter)[j];
				reinterpret_cast<uint32_t *>(h + r * inter)[j] =
					kx_bf_pack(kx_silu(kx_bf_lo(a)) * kx_bf_lo(b),
						   kx_silu(kx_bf_hi(a)) * kx_bf_hi(b));
			} else {
				h[r * inter + j] =
					kx_bf16_from_float(kx_silu(kx_bf(g[j])) * kx_bf(g[inter + j]));
			}
		}
	}
}

cudaError_t bench_launch_silu_mul(const uint16_t *gu, int64_t m, int64_t inter, uint16_t *h,
				  cudaStream_t st)
{
	int64_t cols = (inter & 1) == 0 ? inter / 2 : inter;
	dim3 grid(kx_grid(cols, BLOCK), (unsigned)(m < 65535 ? m : 65535));
	silu_mul<<<grid, BLOCK, 0, st>>>(gu, m, inter, h);
	return cudaGetLastError();
}

static __global__ void gather_bf16(const uint16_t *__restrict__ src, int64_t ld,
				   const int64_t *__restrict__ rows, int64_t s, int64_t ncols,
				   float *__restrict__ dst)
{
	for (int64_t i = blockIdx.y; i < s; i += gridDim.y)
		for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < ncols;
		     j += (int64_t)gridDim.x * blockDim.x)
			dst[i * ncols + j] = kx_bf(src[rows[i] * ld + j]);
}

cudaError_t bench_launch_gather_bf16(const uint16_t *src, int64_t ld, const int64_t *rows, int64_t s,
				     int64_t ncols, float *dst, cudaStream_t st)
{
	dim3 grid(kx_grid(ncols, BLOCK), (unsigned)(s < 65535 ? s : 65535));
	gather_bf16<<<grid, BLOCK, 0, st>>>(src, ld, rows, s, ncols, dst);
	return cudaGetLastError();
}
