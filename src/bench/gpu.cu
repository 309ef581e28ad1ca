// SPDX-License-Identifier: MIT
/*
 * The CUDA side of device.h: the device and what it reports, cases (inputs generated on the
 * device, an implementation's buffers, its cuBLAS handle), the implementations themselves as
 * sequences of launches, their correctness checks against reference.cu, and the timer ops over
 * CUDA events that measure.c drives.
 *
 * Memory is counted at allocation: every buffer a case holds goes through track(), including the
 * cuBLAS workspace (set explicitly, so cuBLAS allocates none of its own on the stream), so the
 * peak reported for an implementation is exactly what it needs — inputs, outputs, workspace —
 * and comparable with torch.cuda.max_memory_allocated. Reference buffers are allocated only for
 * the check and freed before timing; the flush buffer belongs to the harness.
 *
 * Timing (blocking mode, the kindex protocol): blocking kernel, cudaMemsetAsync of the flush
 * buffer, event, the call, event, release, synchronize. Non-blocking (do_bench): flush, event,
 * call, event, n times back to back, one synchronize.
 */
#include "gpu-internal.cuh"
#include "kx/common.h"

#include <cublas_v2.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef KX_CUDA_ARCHS
#define KX_CUDA_ARCHS "unknown"
#endif

/* a call's whole enqueue takes well under a millisecond; past a second something is stuck */
#define BLOCKER_TIMEOUT_NS 1000000000ull
/* a sample's clock needs a span %globaltimer resolves well (it ticks in up to 1 us steps) */
#define MIN_CLOCK_SPAN_NS 20000ull
/*
 * Vocabulary columns per chunk (docs/harness.md has the memory budget): kindex-chunked-serial
 * holds one chunk of 2048; kindex-chunked two buffers, sized for its widest candidate, and
 * chooses among the candidates by measurement (bench_tune) before it is checked and timed.
 * 2 x 1536 columns leave 4.1x below the materialized peak at the default shape; 2 x 2048 would
 * leave 4.0x, no margin.
 */
#define FLCE_SERIAL_CHUNK 2048
static const int64_t flce_widths[] = { 1024, 1536 }; /* increasing: the last sizes the buffers */

/* Candidate width i of kindex-chunked for a vocabulary of n: no wider than the vocabulary. */
static int64_t flce_width(int64_t n, size_t i)
{
	return flce_widths[i] < n ? flce_widths[i] : n;
}

#define MAX_BUFS 16

struct kx_gpu {
	int dev;
	cudaStream_t st;
	struct kx_gpu_info info;
	void *flush;
	size_t flush_bytes;
	volatile int *flag; /* mapped pinned host memory: the blocking kernel's release */
	int *flag_dev;
	volatile unsigned *timeouts;
	unsigned *timeouts_dev;
	unsigned long long *probe_out; /* device memory, two words */
	/* per-sample clocks: SM 0's (globaltimer, clock64) before and after each sample's event
	 * pair, four words a sample, in mapped pinned host memory */
	volatile unsigned long long *stamps;
	unsigned long long *stamps_dev;
	size_t nstamps;
	cudaEvent_t *ev;
	size_t nev;
};

enum impl_id {
	CE_ONLINE,
	CE_TWO_PASS,
	FLCE_MATERIALIZED,
	FLCE_CHUNKED,
	FLCE_CHUNKED_SERIAL,
	RMS_ROWWISE,
	SWIGLU_CUBLAS,
	MATMUL_CUBLAS,
};

static const struct {
	enum kx_bench_kind kind;
	const char *name;
	enum impl_id id;
} impls[] = {
	{ KX_KIND_CROSS_ENTROPY, "kindex-online", CE_ONLINE },
	{ KX_KIND_CROSS_ENTROPY, "kindex-two-pass", CE_TWO_PASS },
	{ KX_KIND_FLCE, "kindex-materialized", FLCE_MATERIALIZED },
	{ KX_KIND_FLCE, "kindex-chunked", FLCE_CHUNKED },
	{ KX_KIND_FLCE, "kindex-chunked-serial", FLCE_CHUNKED_SERIAL },
	{ KX_KIND_RMS_NORM, "kindex-rowwise", RMS_ROWWISE },
	{ KX_KIND_SWIGLU, "kindex-cublas", SWIGLU_CUBLAS },
	{ KX_KIND_MATMUL, "kindex-cublas", MATMUL_CUBLAS },
};

struct kx_gpu_case {
	struct kx_gpu *g;
	struct kx_bench_shape s;
	enum impl_id impl;
	cublasHandle_t blas;
	void *bufs[MAX_BUFS];
	int nbufs;
	uint64_t bytes, peak;
	/* inputs */
	void *x;      /* fp32 logits (cross_entropy) or bf16 activations / A */
	uint16_t *w;  /* FLCE W [n, k], rms_norm weight [n], swiglu gate+up [2k, n], matmul B [n, k] */
	uint16_t *w2; /* swiglu down [n, k] */
	int32_t *t;
	/* outputs and workspace */
	float *loss, *mean;
	uint16_t *out;  /* FLCE logits or chunk, rms_norm y, swiglu gate+up, matmul C */
	uint16_t *out2; /* swiglu h */
	uint16_t *y;    /* swiglu y */
	float *lse_m, *lse_s, *zt;
	void *ws;
	size_t ws_bytes;
	/* kindex-chunked: the double buffer, the merge stream and its events (fork: the call's
	 * start on st; ready[b]: buffer b's GEMM done; done[b]: buffer b's merge done) */
	uint16_t *zb[2];
	int64_t chunk; /* its chunk width, one of flce_widths (clamped to the vocabulary) */
	cudaStream_t merge_st;
	cudaEvent_t fork, ready[2], done[2];
	char err[256];
};

static int cuda_fail(char *err, size_t len, const char *what, cudaError_t e)
{
	snprintf(err, len, "%s: %s (%s = %d)", what, cudaGetErrorString(e), cudaGetErrorName(e),
		 (int)e);
	return e == cudaErrorMemoryAllocation ? -ENOMEM : -EIO;
}

#define CK(call, what)                                                                         \
	do {                                                                                   \
		cudaError_t e_ = (call);                                                       \
		if (e_ != cudaSuccess)                                                         \
			return cuda_fail(c->err, sizeof(c->err), what, e_);                    \
	} while (0)

/* ---- the device ------------------------------------------------------------------------------ */

/*
 * A failed runtime call is remembered until cudaGetLastError() reads it, and the launchers below
 * report cudaGetLastError(): a tolerated failure (an attribute this driver lacks, an allocation
 * reported as a failed run) must be cleared, or the next launch would be blamed for it.
 */
static void clear_error(void)
{
	(void)cudaGetLastError();
}

static int attr(int dev, enum cudaDeviceAttr a)
{
	int v = 0;
	if (cudaDeviceGetAttribute(&v, a, dev) != cudaSuccess) {
		clear_error();
		v = 0;
	}
	return v;
}

/* The stream, the blocking kernel's flag and timeout counter (mapped pinned host memory, so the
 * host can release a kernel that is already running) and the clock probe's output. */
static int setup_device(struct kx_gpu *g, char *err, size_t errlen)
{
	void *flag = NULL, *to = NULL;
	cudaError_t e = cudaStreamCreateWithFlags(&g->st, cudaStreamNonBlocking);
	if (e == cudaSuccess && (e = cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped)) == cudaSuccess)
		g->flag = (volatile int *)flag;
	if (e == cudaSuccess)
		e = cudaHostGetDevicePointer((void **)&g->flag_dev, flag, 0);
	if (e == cudaSuccess && (e = cudaHostAlloc(&to, sizeof(unsigned), cudaHostAllocMapped)) == cudaSuccess)
		g->timeouts = (volatile unsigned *)to;
	if (e == cudaSuccess)
		e = cudaHostGetDevicePointer((void **)&g->timeouts_dev, to, 0);
	if (e == cudaSuccess)
		e = cudaMalloc((void **)&g->probe_out, 2 * sizeof(unsigned long long));
	if (e != cudaSuccess)
		return cuda_fail(err, errlen, "cannot set up the device", e);
	return 0;
}

int bench_gpu_open(int ordinal, struct kx_gpu **ret, struct kx_gpu_info *ret_info, char *err,
		   size_t errlen)
{
	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess) {
		cuda_fail(err, errlen, "cudaGetDeviceCount", e);
		return -ENODEV;
	}
	if (count <= 0) {
		snprintf(err, errlen, "cudaGetDeviceCount found no device");
		return -ENODEV;
	}
	int dev = ordinal < 0 ? 0 : ordinal;
	if (dev >= count) {
		snprintf(err, errlen, "device %d does not exist (%d found)", dev, count);
		return -ENODEV;
	}
	struct kx_gpu *g = (struct kx_gpu *)calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->dev = dev;
	struct kx_gpu_info *gi = &g->info;
	gi->ordinal = dev;
	cudaDeviceProp prop;
	int r = -EIO;
	if ((e = cudaSetDevice(dev)) != cudaSuccess ||
	    (e = cudaGetDeviceProperties(&prop, dev)) != cudaSuccess) {
		cuda_fail(err, errlen, "cannot open the CUDA device", e);
		goto fail;
	}
	snprintf(gi->name, sizeof(gi->name), "%s", prop.name);
	if (cudaDeviceGetPCIBusId(gi->pci_bus_id, sizeof(gi->pci_bus_id), dev) != cudaSuccess) {
		clear_error();
		gi->pci_bus_id[0] = '\0';
	}
	gi->cc_major = attr(dev, cudaDevAttrComputeCapabilityMajor);
	gi->cc_minor = attr(dev, cudaDevAttrComputeCapabilityMinor);
	gi->sm_count = attr(dev, cudaDevAttrMultiProcessorCount);
	gi->memory_bytes = prop.totalGlobalMem;
	gi->l2_bytes = (uint64_t)attr(dev, cudaDevAttrL2CacheSize);
	/* CUDA 13 dropped clockRate and memoryClockRate from cudaDeviceProp */
	gi->sm_clock_khz = attr(dev, cudaDevAttrClockRate);
	gi->mem_clock_khz = attr(dev, cudaDevAttrMemoryClockRate);
	gi->mem_bus_bits = attr(dev, cudaDevAttrGlobalMemoryBusWidth);
	gi->ecc = attr(dev, cudaDevAttrEccEnabled);
	cudaDriverGetVersion(&gi->driver_version);
	cudaRuntimeGetVersion(&gi->runtime_version);
	cublasGetProperty(MAJOR_VERSION, &gi->cublas_major);
	cublasGetProperty(MINOR_VERSION, &gi->cublas_minor);
	cublasGetProperty(PATCH_LEVEL, &gi->cublas_patch);
	gi->nvcc_major = __CUDACC_VER_MAJOR__;
	gi->nvcc_minor = __CUDACC_VER_MINOR__;
	gi->archs = KX_CUDA_ARCHS;
	if (gi->cc_major < 8) {
		snprintf(err, errlen, "%s is sm_%d%d; kindex-bench needs sm_80 or newer (bf16)",
			 gi->name, gi->cc_major, gi->cc_minor);
		r = -ENODEV;
		goto fail;
	}
	if ((r = setup_device(g, err, errlen)) < 0)
		goto fail;
	*g->flag = 1;
	*g->timeouts = 0;
	/* load the blocking kernel and the probe now, for the same reason as the flush's memset */
	if ((e = bench_launch_blocker(g->flag_dev, BLOCKER_TIMEOUT_NS, g->timeouts_dev, g->st)) != cudaSuccess ||
	    (e = bench_launch_probe(1024, g->probe_out, g->st)) != cudaSuccess ||
	    (e = bench_launch_stamp(gi->sm_count, g->probe_out, g->st)) != cudaSuccess ||
	    (e = cudaStreamSynchronize(g->st)) != cudaSuccess) {
		/* typically cudaErrorNoKernelImageForDevice: a GPU newer than the compiled archs */
		cuda_fail(err, errlen, "cannot run a kernel on the device", e);
		r = -EIO;
		goto fail;
	}
	*ret_info = *gi;
	*ret = g;
	return 0;
fail:
	bench_gpu_close(g);
	return r;
}

void bench_gpu_close(struct kx_gpu *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nev; i++)
		cudaEventDestroy(g->ev[i]);
	free(g->ev);
	if (g->flush)
		cudaFree(g->flush);
	if (g->probe_out)
		cudaFree(g->probe_out);
	if (g->stamps)
		cudaFreeHost((void *)g->stamps);
	if (g->flag)
		cudaFreeHost((void *)g->flag);
	if (g->timeouts)
		cudaFreeHost((void *)g->timeouts);
	if (g->st)
		cudaStreamDestroy(g->st);
	free(g);
}

int bench_gpu_set_flush(struct kx_gpu *g, size_t bytes, char *err, size_t errlen)
{
	if (g->flush && g->flush_bytes == bytes)
		return 0;
	if (g->flush)
		cudaFree(g->flush);
	g->flush = NULL;
	g->flush_bytes = 0;
	cudaError_t e = cudaMalloc(&g->flush, bytes);
	if (e != cudaSuccess) {
		clear_error();
		g->flush = NULL;
		return cuda_fail(err, errlen, "cannot allocate the L2 flush buffer", e);
	}
	g->flush_bytes = bytes;
	/*
	 * One flush now, outside any blocked sample: it zeroes the buffer and makes the driver load
	 * whatever the memset needs, since lazy loading under a spinning blocking kernel would wait
	 * for that kernel (and so for its timeout). The implementations' own kernels are loaded by
	 * the correctness check, which runs every one of them before timing.
	 */
	if ((e = cudaMemsetAsync(g->flush, 0, bytes, g->st)) != cudaSuccess ||
	    (e = cudaStreamSynchronize(g->st)) != cudaSuccess)
		return cuda_fail(err, errlen, "cannot clear the L2 flush buffer", e);
	return 0;
}

unsigned bench_gpu_blocker_timeouts(const struct kx_gpu *g)
{
	return *g->timeouts;
}

static int ensure_events(struct kx_gpu *g, size_t n, char *err, size_t errlen)
{
	if (g->nev >= n)
		return 0;
	cudaEvent_t *ev = (cudaEvent_t *)realloc(g->ev, n * sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	g->ev = ev;
	for (; g->nev < n; g->nev++) {
		cudaError_t e = cudaEventCreate(&g->ev[g->nev]);
		if (e != cudaSuccess)
			return cuda_fail(err, errlen, "cudaEventCreate", e);
	}
	return 0;
}

static int ensure_stamps(struct kx_gpu *g, size_t n, char *err, size_t errlen)
{
	if (g->nstamps >= n)
		return 0;
	if (g->stamps)
		cudaFreeHost((void *)g->stamps);
	g->stamps = NULL;
	g->nstamps = 0;
	void *p = NULL;
	cudaError_t e = cudaHostAlloc(&p, n * 4 * sizeof(unsigned long long), cudaHostAllocMapped);
	if (e == cudaSuccess)
		e = cudaHostGetDevicePointer((void **)&g->stamps_dev, p, 0);
	if (e != cudaSuccess) {
		if (p)
			cudaFreeHost(p);
		return cuda_fail(err, errlen, "cannot allocate the clock stamps", e);
	}
	g->stamps = (volatile unsigned long long *)p;
	g->nstamps = n;
	return 0;
}

/* Sample i's SM clock in MHz from its stamps: SM 0's cycles over %globaltimer ns across the event
 * pair; 0 when a stamp missed SM 0 or the span is too short to resolve. */
static double sample_mhz(const volatile unsigned long long *w)
{
	unsigned long long t0 = w[0], c0 = w[1], t1 = w[2], c1 = w[3];
	if (!t0 || !t1 || t1 < t0 + MIN_CLOCK_SPAN_NS || c1 <= c0)
		return 0;
	return (double)(c1 - c0) / (double)(t1 - t0) * 1e3;
}

/* ---- cases ------------------------------------------------------------------------------------- */

static int track(struct kx_gpu_case *c, void **p, uint64_t bytes, const char *what)
{
	if (c->nbufs == MAX_BUFS) {
		snprintf(c->err, sizeof(c->err), "too many buffers");
		return -E2BIG;
	}
	cudaError_t e = cudaMalloc(p, bytes);
	if (e != cudaSuccess) {
		clear_error();
		*p = NULL;
		char msg[128];
		snprintf(msg, sizeof(msg), "cannot allocate %s (%.1f MiB)", what,
			 (double)bytes / 1048576.0);
		return cuda_fail(c->err, sizeof(c->err), msg, e);
	}
	c->bufs[c->nbufs++] = *p;
	c->bytes += bytes;
	if (c->bytes > c->peak)
		c->peak = c->bytes;
	return 0;
}

#define TRACK(ptr, bytes, what)                                                                \
	do {                                                                                   \
		int r_ = track(c, (void **)&(ptr), (uint64_t)(bytes), what);                   \
		if (r_ < 0)                                                                    \
			return r_;                                                             \
	} while (0)

void bench_gpu_case_free(struct kx_gpu_case *c)
{
	if (!c)
		return;
	if (c->g)
		cudaStreamSynchronize(c->g->st);
	if (c->merge_st) {
		/* a call that failed half-way may have left merges queued that st never joined */
		cudaStreamSynchronize(c->merge_st);
		cudaStreamDestroy(c->merge_st);
	}
	cudaEvent_t evs[] = { c->fork, c->ready[0], c->ready[1], c->done[0], c->done[1] };
	for (size_t i = 0; i < KX_ARRAY_SIZE(evs); i++)
		if (evs[i])
			cudaEventDestroy(evs[i]);
	if (c->blas)
		cublasDestroy(c->blas);
	for (int i = 0; i < c->nbufs; i++)
		cudaFree(c->bufs[i]);
	free(c);
	clear_error(); /* whatever the teardown reported must not be blamed on the next case */
}

uint64_t bench_gpu_case_peak_bytes(const struct kx_gpu_case *c)
{
	return c->peak;
}

const char *bench_gpu_case_error(const struct kx_gpu_case *c)
{
	return c->err;
}

void bench_gpu_case_tunable(const struct kx_gpu_case *c, struct kx_bench_tunable *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (c->impl != FLCE_CHUNKED)
		return;
	ret->name = "chunkColumns";
	for (size_t i = 0; i < KX_ARRAY_SIZE(flce_widths) && ret->n < KX_BENCH_MAX_CANDIDATES; i++) {
		int64_t w = flce_width(c->s.n, i);
		/* a vocabulary narrower than a candidate leaves fewer distinct widths */
		if (ret->n == 0 || ret->values[ret->n - 1] != w)
			ret->values[ret->n++] = w;
	}
}

int bench_gpu_case_set_tunable(struct kx_gpu_case *c, int64_t value)
{
	struct kx_bench_tunable t;
	bench_gpu_case_tunable(c, &t);
	for (size_t i = 0; i < t.n; i++)
		if (t.values[i] == value) {
			c->chunk = value; /* within the buffers: they are sized for the widest */
			return 0;
		}
	snprintf(c->err, sizeof(c->err), "%lld is not a candidate %s of this implementation",
		 (long long)value, t.name ? t.name : "value");
	return -EINVAL;
}

static int blas_fail(struct kx_gpu_case *c, const char *what, cublasStatus_t s)
{
	snprintf(c->err, sizeof(c->err), "%s: %s", what, cublasGetStatusString(s));
	return s == CUBLAS_STATUS_ALLOC_FAILED ? -ENOMEM : -EIO;
}

static int setup_blas(struct kx_gpu_case *c)
{
	cublasStatus_t s = cublasCreate(&c->blas);
	if (s != CUBLAS_STATUS_SUCCESS) {
		c->blas = NULL;
		return blas_fail(c, "cublasCreate", s);
	}
	/* Hopper and newer want 32 MiB (cuBLAS docs); our own, so the peak counts it */
	c->ws_bytes = c->g->info.cc_major >= 9 ? 32u << 20 : 4u << 20;
	TRACK(c->ws, c->ws_bytes, "the cuBLAS workspace");
	if ((s = cublasSetStream(c->blas, c->g->st)) != CUBLAS_STATUS_SUCCESS)
		return blas_fail(c, "cublasSetStream", s);
	/* after cublasSetStream, which resets the workspace to cuBLAS's own */
	if ((s = cublasSetWorkspace(c->blas, c->ws, c->ws_bytes)) != CUBLAS_STATUS_SUCCESS)
		return blas_fail(c, "cublasSetWorkspace", s);
	return 0;
}

/*
 * Row-major C[rows, cols] = X[rows, k] . W[cols, k]^T in bf16 with fp32 accumulation. cuBLAS is
 * column-major: that C is C^T[cols, rows] = W . X^T, i.e. op(A) = W (stored as a k x cols
 * column-major matrix, transposed), op(B) = X (k x rows, not transposed), ldc = ldc.
 */
static int gemm(struct kx_gpu_case *c, const uint16_t *X, int64_t rows, const uint16_t *W,
		int64_t cols, int64_t k, uint16_t *C, int64_t ldc)
{
	const float alpha = 1.0f, beta = 0.0f;
	cublasStatus_t s = cublasGemmEx(c->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)cols, (int)rows,
					(int)k, &alpha, W, CUDA_R_16BF, (int)k, X, CUDA_R_16BF,
					(int)k, &beta, C, CUDA_R_16BF, (int)ldc, CUBLAS_COMPUTE_32F,
					CUBLAS_GEMM_DEFAULT);
	return s == CUBLAS_STATUS_SUCCESS ? 0 : blas_fail(c, "cublasGemmEx", s);
}

static int fits_int(struct kx_gpu_case *c, int64_t v, const char *what)
{
	if (v > 0x7fffffff) {
		snprintf(c->err, sizeof(c->err), "%s %lld is too large for cuBLAS (2^31)", what,
			 (long long)v);
		return -EINVAL;
	}
	return 0;
}

/* kindex-chunked's merge stream and the events that order it against st (run_flce_overlapped).
 * What is created is set in c at once, so bench_gpu_case_free destroys it whatever fails next. */
static int setup_merge_stream(struct kx_gpu_case *c)
{
	cudaStream_t ms;
	CK(cudaStreamCreateWithFlags(&ms, cudaStreamNonBlocking), "cannot create the merge stream");
	c->merge_st = ms;
	cudaEvent_t *evs[] = { &c->fork, &c->ready[0], &c->ready[1], &c->done[0], &c->done[1] };
	for (size_t i = 0; i < KX_ARRAY_SIZE(evs); i++) {
		cudaEvent_t ev;
		CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming),
		   "cannot create the merge stream's events");
		*evs[i] = ev;
	}
	return 0;
}

static int prepare(struct kx_gpu_case *c)
{
	const struct kx_bench_shape *s = &c->s;
	const int64_t m = s->m, n = s->n, k = s->k;
	cudaStream_t st = c->g->st;
	const uint64_t seed = s->seed;
	int r;
	switch (c->impl) {
	case CE_ONLINE:
	case CE_TWO_PASS:
		TRACK(c->x, (uint64_t)m * n * 4, "the logits");
		TRACK(c->t, m * 4, "the targets");
		TRACK(c->loss, m * 4, "the per-row loss");
		TRACK(c->mean, 4, "the mean loss");
		CK(bench_launch_gen_f32((float *)c->x, m * n, seed, KX_T_X, KX_LOGIT_STD, st), "generating logits");
		CK(bench_launch_gen_targets(c->t, m, seed, (uint32_t)n, st), "generating targets");
		break;
	case FLCE_MATERIALIZED:
	case FLCE_CHUNKED:
	case FLCE_CHUNKED_SERIAL:
		if ((r = fits_int(c, n, "vocab")) < 0 || (r = setup_blas(c)) < 0)
			return r;
		TRACK(c->x, (uint64_t)m * k * 2, "X");
		TRACK(c->w, (uint64_t)n * k * 2, "W");
		TRACK(c->t, m * 4, "the targets");
		TRACK(c->loss, m * 4, "the per-token loss");
		TRACK(c->mean, 4, "the mean loss");
		if (c->impl == FLCE_MATERIALIZED) {
			TRACK(c->out, (uint64_t)m * n * 2, "the logits");
		} else if (c->impl == FLCE_CHUNKED_SERIAL) {
			TRACK(c->out, (uint64_t)m * (n < FLCE_SERIAL_CHUNK ? n : FLCE_SERIAL_CHUNK) * 2,
			      "the logits chunk");
		} else {
			/* both buffers of the widest candidate, whichever width the measurement picks */
			c->chunk = flce_width(n, KX_ARRAY_SIZE(flce_widths) - 1);
			TRACK(c->zb[0], (uint64_t)m * c->chunk * 2, "the first logits chunk");
			TRACK(c->zb[1], (uint64_t)m * c->chunk * 2, "the second logits chunk");
			if ((r = setup_merge_stream(c)) < 0)
				return r;
		}
		if (c->impl != FLCE_MATERIALIZED) {
			TRACK(c->lse_m, m * 4, "the running maxima");
			TRACK(c->lse_s, m * 4, "the running sums");
			TRACK(c->zt, m * 4, "the target logits");
		}
		CK(bench_launch_gen_bf16((uint16_t *)c->x, m * k, seed, KX_T_X, 1.0f, 0.0f, st), "generating X");
		/* logits X . W^T of standard deviation KX_LOGIT_STD (numeric.h) */
		CK(bench_launch_gen_bf16(c->w, n * k, seed, KX_T_W, KX_LOGIT_STD / sqrtf((float)k), 0.0f, st),
		   "generating W");
		CK(bench_launch_gen_targets(c->t, m, seed, (uint32_t)n, st), "generating targets");
		break;
	case RMS_ROWWISE:
		TRACK(c->x, (uint64_t)m * n * 2, "x");
		TRACK(c->w, n * 2, "the weight");
		TRACK(c->out, (uint64_t)m * n * 2, "y");
		CK(bench_launch_gen_bf16((uint16_t *)c->x, m * n, seed, KX_T_X, 1.0f, 0.0f, st), "generating x");
		CK(bench_launch_gen_bf16(c->w, n, seed, KX_T_W, 0.1f, 1.0f, st), "generating the weight");
		break;
	case SWIGLU_CUBLAS:
		if ((r = fits_int(c, 2 * k, "2 * intermediate_size")) < 0 || (r = setup_blas(c)) < 0)
			return r;
		TRACK(c->x, (uint64_t)m * n * 2, "x");
		TRACK(c->w, (uint64_t)2 * k * n * 2, "the gate and up weights");
		TRACK(c->w2, (uint64_t)n * k * 2, "the down weight");
		TRACK(c->out, (uint64_t)m * 2 * k * 2, "the gate and up activations");
		TRACK(c->out2, (uint64_t)m * k * 2, "h");
		TRACK(c->y, (uint64_t)m * n * 2, "y");
		CK(bench_launch_gen_bf16((uint16_t *)c->x, m * n, seed, KX_T_X, 1.0f, 0.0f, st), "generating x");
		CK(bench_launch_gen_bf16(c->w, 2 * k * n, seed, KX_T_W_GATEUP, 1.0f / sqrtf((float)n), 0.0f, st),
		   "generating the gate and up weights");
		CK(bench_launch_gen_bf16(c->w2, n * k, seed, KX_T_W_DOWN, 1.0f / sqrtf((float)k), 0.0f, st),
		   "generating the down weight");
		break;
	case MATMUL_CUBLAS:
		if ((r = fits_int(c, n, "N")) < 0 || (r = setup_blas(c)) < 0)
			return r;
		TRACK(c->x, (uint64_t)m * k * 2, "A");
		TRACK(c->w, (uint64_t)n * k * 2, "B");
		TRACK(c->out, (uint64_t)m * n * 2, "C");
		CK(bench_launch_gen_bf16((uint16_t *)c->x, m * k, seed, KX_T_X, 1.0f, 0.0f, st), "generating A");
		CK(bench_launch_gen_bf16(c->w, n * k, seed, KX_T_W, 1.0f / sqrtf((float)k), 0.0f, st),
		   "generating B");
		break;
	}
	CK(cudaStreamSynchronize(st), "generating the inputs");
	return 0;
}

int bench_gpu_case_new(struct kx_gpu *g, const struct kx_bench_shape *shape,
		       struct kx_gpu_case **ret, char *err, size_t errlen)
{
	struct kx_gpu_case *c = (struct kx_gpu_case *)calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->g = g;
	c->s = *shape;
	bool found = false;
	for (size_t i = 0; i < sizeof(impls) / sizeof(impls[0]); i++)
		if (impls[i].kind == shape->kind && strcmp(impls[i].name, shape->impl) == 0) {
			c->impl = impls[i].id;
			found = true;
		}
	if (!found) {
		snprintf(err, errlen, "no CUDA implementation '%s' of this workload", shape->impl);
		free(c);
		return -EINVAL;
	}
	int r = prepare(c);
	if (r < 0) {
		snprintf(err, errlen, "%s", c->err);
		bench_gpu_case_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

/* ---- the implementations: one forward call each, enqueued on the stream --------------------- */

/*
 * kindex-chunked's chunks: chunk i's GEMM (cuBLAS, on st) writes buffer i % 2 while the merge of
 * chunk i - 1 reads the other buffer on the merge stream. st forks the merge stream at the call's
 * start (so every merge is ordered after whatever precedes the call on st: the blocking kernel,
 * the flush, the start event) and joins it at the end (so st's next work, the finish kernel and
 * the end event, follows every merge). Before GEMM i overwrites buffer i % 2, st waits for the
 * merge of chunk i - 2, which read it. One merge stream keeps the merges in chunk order, as the
 * running (max, sum) needs; a cudaStreamWaitEvent waits for the record the host made last, so
 * each event is safely recorded again two chunks later.
 */
static int run_flce_overlapped(struct kx_gpu_case *c)
{
	const int64_t m = c->s.m, n = c->s.n, k = c->s.k, w = c->chunk;
	cudaStream_t st = c->g->st, ms = c->merge_st;
	const uint16_t *xb = (const uint16_t *)c->x;
	int r;
	CK(cudaEventRecord(c->fork, st), "forking the merge stream");
	CK(cudaStreamWaitEvent(ms, c->fork, 0), "forking the merge stream");
	int64_t i = 0;
	for (int64_t c0 = 0; c0 < n; c0 += w, i++) {
		const int64_t nc = n - c0 < w ? n - c0 : w;
		const int b = (int)(i & 1);
		if (i >= 2)
			CK(cudaStreamWaitEvent(st, c->done[b], 0), "waiting for a chunk's merge");
		if ((r = gemm(c, xb, m, c->w + c0 * k, nc, k, c->zb[b], nc)) < 0)
			return r;
		CK(cudaEventRecord(c->ready[b], st), "recording a chunk's GEMM");
		CK(cudaStreamWaitEvent(ms, c->ready[b], 0), "waiting for a chunk's GEMM");
		CK(bench_launch_lse_chunk(c->zb[b], m, nc, c0, c0 == 0, c->t, c->lse_m, c->lse_s, c->zt, ms),
		   "log-sum-exp chunk kernel");
		CK(cudaEventRecord(c->done[b], ms), "recording a chunk's merge");
	}
	if (i > 0)
		CK(cudaStreamWaitEvent(st, c->done[(i - 1) & 1], 0), "joining the merge stream");
	return 0;
}

static int run_impl(struct kx_gpu_case *c)
{
	const int64_t m = c->s.m, n = c->s.n, k = c->s.k;
	cudaStream_t st = c->g->st;
	const uint16_t *xb = (const uint16_t *)c->x;
	int r;
	switch (c->impl) {
	case CE_ONLINE:
	case CE_TWO_PASS:
		CK(bench_launch_ce_f32((const float *)c->x, m, n, c->t, c->loss, c->impl == CE_TWO_PASS, st),
		   "cross_entropy kernel");
		break;
	case FLCE_MATERIALIZED:
		if ((r = gemm(c, xb, m, c->w, n, k, c->out, n)) < 0)
			return r;
		CK(bench_launch_ce_bf16(c->out, m, n, c->t, c->loss, st), "cross_entropy kernel");
		break;
	case FLCE_CHUNKED:
		if ((r = run_flce_overlapped(c)) < 0)
			return r;
		CK(bench_launch_lse_finish(c->lse_m, c->lse_s, c->zt, m, c->loss, st), "loss kernel");
		break;
	case FLCE_CHUNKED_SERIAL:
		for (int64_t c0 = 0; c0 < n; c0 += FLCE_SERIAL_CHUNK) {
			const int64_t nc = n - c0 < FLCE_SERIAL_CHUNK ? n - c0 : FLCE_SERIAL_CHUNK;
			if ((r = gemm(c, xb, m, c->w + c0 * k, nc, k, c->out, nc)) < 0)
				return r;
			CK(bench_launch_lse_chunk(c->out, m, nc, c0, c0 == 0, c->t, c->lse_m, c->lse_s, c->zt, st),
			   "log-sum-exp chunk kernel");
		}
		CK(bench_launch_lse_finish(c->lse_m, c->lse_s, c->zt, m, c->loss, st), "loss kernel");
		break;
	case RMS_ROWWISE:
		CK(bench_launch_rms_norm(xb, c->w, c->out, m, n, (float)c->s.eps, st), "rms_norm kernel");
		return 0;
	case SWIGLU_CUBLAS:
		if ((r = gemm(c, xb, m, c->w, 2 * k, n, c->out, 2 * k)) < 0)
			return r;
		CK(bench_launch_silu_mul(c->out, m, k, c->out2, st), "silu kernel");
		return gemm(c, c->out2, m, c->w2, n, k, c->y, n);
	case MATMUL_CUBLAS:
		return gemm(c, xb, m, c->w, n, k, c->out, n);
	}
	CK(bench_launch_mean(c->loss, m, c->mean, st), "mean kernel");
	return 0;
}

/* ---- correctness ------------------------------------------------------------------------------ */

/* Device scratch for the reference, freed however the check ends. */
struct scratch {
	void *p[6];
	int n;
};

static int scratch_alloc(struct kx_gpu_case *c, struct scratch *s, void **p, uint64_t bytes,
			 const char *what)
{
	if (s->n == (int)(sizeof(s->p) / sizeof(s->p[0]))) {
		snprintf(c->err, sizeof(c->err), "too many reference buffers");
		return -E2BIG;
	}
	cudaError_t e = cudaMalloc(p, bytes);
	if (e != cudaSuccess) {
		clear_error();
		char msg[128];
		snprintf(msg, sizeof(msg), "cannot allocate the reference's %s", what);
		return cuda_fail(c->err, sizeof(c->err), msg, e);
	}
	s->p[s->n++] = *p;
	return 0;
}

static void scratch_free(struct scratch *s)
{
	for (int i = 0; i < s->n; i++)
		cudaFree(s->p[i]);
}

#define SCRATCH(ptr, bytes, what)                                                              \
	do {                                                                                   \
		int r_ = scratch_alloc(c, &sc, (void **)&(ptr), (uint64_t)(bytes), what);      \
		if (r_ < 0)                                                                    \
			return r_;                                                             \
	} while (0)

static int to_host(struct kx_gpu_case *c, void *dst, const void *src, size_t bytes)
{
	CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->g->st), "copying results");
	CK(cudaStreamSynchronize(c->g->st), "copying results");
	return 0;
}

static void bf16_to_float(const uint16_t *in, float *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = kx_bf16_to_float(in[i]);
}

static int check_body(struct kx_gpu_case *c, const struct kx_bench_policy *p,
		      struct kx_bench_check *chk, struct scratch &sc, void **host)
{
	const int64_t m = c->s.m, n = c->s.n, k = c->s.k;
	const int64_t s = (int64_t)c->s.check_rows;
	cudaStream_t st = c->g->st;
	int r;
	if ((r = run_impl(c)) < 0)
		return r;
	CK(cudaStreamSynchronize(st), "running the implementation");

	int64_t *rows = (int64_t *)malloc((size_t)s * sizeof(int64_t));
	host[0] = rows;
	if (!rows)
		return -ENOMEM;
	bench_pick_rows(rows, s, m);
	int64_t *drows;
	SCRATCH(drows, s * 8, "row list");
	CK(cudaMemcpyAsync(drows, rows, (size_t)s * 8, cudaMemcpyHostToDevice, st), "copying rows");

	switch (c->impl) {
	case CE_ONLINE:
	case CE_TWO_PASS:
	case FLCE_MATERIALIZED:
	case FLCE_CHUNKED:
	case FLCE_CHUNKED_SERIAL: {
		float *ref, *z = NULL, *allow = NULL;
		SCRATCH(ref, s * 4, "losses");
		if (c->impl == CE_ONLINE || c->impl == CE_TWO_PASS) {
			CK(bench_ref_ce((const float *)c->x, s, n, drows, c->t, ref, NULL, st), "reference kernel");
			/* rows are all rows here (check_rows = m): z is the input itself */
		} else {
			/* bf16 logits: the reference bounds what their rounding does to each loss */
			SCRATCH(z, s * n * 4, "logits");
			SCRATCH(allow, s * 4, "allowances");
			CK(bench_ref_gemm_bf16((const uint16_t *)c->x, drows, s, c->w, n, k, z, st),
			   "reference GEMM");
			CK(bench_ref_ce(z, s, n, drows, c->t, ref, allow, st), "reference kernel");
		}
		float *loss = (float *)malloc((size_t)m * 4), *refh = (float *)malloc((size_t)s * 4),
		      *allowh = (float *)malloc((size_t)s * 4);
		host[1] = loss, host[2] = refh, host[3] = allowh;
		if (!loss || !refh || !allowh)
			return -ENOMEM;
		float mean;
		if ((r = to_host(c, loss, c->loss, (size_t)m * 4)) < 0 ||
		    (r = to_host(c, &mean, c->mean, 4)) < 0 || (r = to_host(c, refh, ref, (size_t)s * 4)) < 0 ||
		    (allow && (r = to_host(c, allowh, allow, (size_t)s * 4)) < 0))
			return r;
		bench_check_losses(chk, p, loss, (size_t)m, mean, rows, refh, allow ? allowh : NULL,
				   (size_t)s);
		break;
	}
	case RMS_ROWWISE: {
		float *ref;
		SCRATCH(ref, m * n * 4, "output");
		CK(bench_ref_rms_norm((const uint16_t *)c->x, c->w, ref, m, n, (float)c->s.eps, st),
		   "reference kernel");
		float *got = (float *)malloc((size_t)(m * n) * 4), *refh = (float *)malloc((size_t)(m * n) * 4);
		uint16_t *raw = (uint16_t *)malloc((size_t)(m * n) * 2);
		host[1] = got, host[2] = refh, host[3] = raw;
		if (!got || !refh || !raw)
			return -ENOMEM;
		if ((r = to_host(c, raw, c->out, (size_t)(m * n) * 2)) < 0 ||
		    (r = to_host(c, refh, ref, (size_t)(m * n) * 4)) < 0)
			return r;
		bf16_to_float(raw, got, (size_t)(m * n));
		bench_check_values(chk, p, "output (all rows)", got, refh, (size_t)(m * n));
		break;
	}
	case SWIGLU_CUBLAS:
	case MATMUL_CUBLAS: {
		float *ref, *got;
		SCRATCH(ref, s * n * 4, "output");
		SCRATCH(got, s * n * 4, "gathered output");
		if (c->impl == SWIGLU_CUBLAS) {
			float *gu, *h;
			SCRATCH(gu, s * 2 * k * 4, "gate and up activations");
			SCRATCH(h, s * k * 4, "h");
			CK(bench_ref_gemm_bf16((const uint16_t *)c->x, drows, s, c->w, 2 * k, n, gu, st),
			   "reference GEMM");
			CK(bench_ref_silu_mul(gu, s, k, h, st), "reference silu");
			CK(bench_ref_gemm_f32(h, s, c->w2, n, k, ref, st), "reference GEMM");
			CK(bench_launch_gather_bf16(c->y, n, drows, s, n, got, st), "gathering rows");
		} else {
			CK(bench_ref_gemm_bf16((const uint16_t *)c->x, drows, s, c->w, n, k, ref, st),
			   "reference GEMM");
			CK(bench_launch_gather_bf16(c->out, n, drows, s, n, got, st), "gathering rows");
		}
		float *goth = (float *)malloc((size_t)(s * n) * 4), *refh = (float *)malloc((size_t)(s * n) * 4);
		host[1] = goth, host[2] = refh;
		if (!goth || !refh)
			return -ENOMEM;
		if ((r = to_host(c, goth, got, (size_t)(s * n) * 4)) < 0 ||
		    (r = to_host(c, refh, ref, (size_t)(s * n) * 4)) < 0)
			return r;
		bench_check_values(chk, p, s == m ? "output (all rows)" : "output (sampled rows)", goth,
				   refh, (size_t)(s * n));
		break;
	}
	}
	return 0;
}

int bench_gpu_case_check(struct kx_gpu_case *c, const struct kx_bench_policy *p,
			 struct kx_bench_check *ret, char *err, size_t errlen)
{
	struct scratch sc = { { NULL }, 0 };
	void *host[4] = { NULL, NULL, NULL, NULL };
	struct kx_bench_check chk;
	bench_check_init(&chk, p->dtype, "output");
	int r = check_body(c, p, &chk, sc, host);
	cudaStreamSynchronize(c->g->st);
	scratch_free(&sc);
	for (int i = 0; i < 4; i++)
		free(host[i]);
	if (r < 0) {
		snprintf(err, errlen, "%s", c->err[0] ? c->err : strerror(-r));
		return r;
	}
	*ret = chk;
	return 0;
}

/* ---- timer ops ------------------------------------------------------------------------------- */

static int time_calls(void *ctx, size_t n, bool blocking, uint64_t *ret_ns, double *ret_mhz)
{
	struct kx_gpu_case *c = (struct kx_gpu_case *)ctx;
	struct kx_gpu *g = c->g;
	cudaStream_t st = g->st;
	const int sms = g->info.sm_count;
	int r = ensure_events(g, blocking ? 2 : 2 * n, c->err, sizeof(c->err));
	if (r >= 0)
		r = ensure_stamps(g, blocking ? 1 : n, c->err, sizeof(c->err));
	if (r < 0)
		return r;
	/* the stream is idle here (each op synchronizes before it returns): clear the stamps */
	for (size_t i = 0; i < 4 * (blocking ? 1 : n); i++)
		g->stamps[i] = 0;
	if (!g->flush) {
		snprintf(c->err, sizeof(c->err), "no flush buffer set");
		return -EINVAL;
	}
	if (blocking) {
		for (size_t i = 0; i < n; i++) {
			*g->flag = 0;
			cudaError_t e = bench_launch_blocker(g->flag_dev, BLOCKER_TIMEOUT_NS, g->timeouts_dev, st);
			if (e == cudaSuccess)
				e = cudaMemsetAsync(g->flush, 0, g->flush_bytes, st);
			if (e == cudaSuccess)
				e = bench_launch_stamp(sms, g->stamps_dev, st);
			if (e == cudaSuccess)
				e = cudaEventRecord(g->ev[0], st);
			if (e != cudaSuccess) {
				*g->flag = 1;
				return cuda_fail(c->err, sizeof(c->err), "enqueueing a sample", e);
			}
			r = run_impl(c);
			if (r == 0 && (e = cudaEventRecord(g->ev[1], st)) != cudaSuccess)
				r = cuda_fail(c->err, sizeof(c->err), "cudaEventRecord", e);
			if (r == 0 && (e = bench_launch_stamp(sms, g->stamps_dev + 2, st)) != cudaSuccess)
				r = cuda_fail(c->err, sizeof(c->err), "stamping the SM clock", e);
			__sync_synchronize();
			*g->flag = 1; /* everything is queued: let the stream run */
			if (r < 0) {
				cudaStreamSynchronize(st);
				return r;
			}
			float ms = 0;
			CK(cudaStreamSynchronize(st), "waiting for a sample");
			CK(cudaEventElapsedTime(&ms, g->ev[0], g->ev[1]), "cudaEventElapsedTime");
			ret_ns[i] = (uint64_t)llround((double)ms * 1e6);
			if (ret_mhz)
				ret_mhz[i] = sample_mhz(g->stamps);
			for (int j = 0; j < 4; j++)
				g->stamps[j] = 0;
		}
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		CK(cudaMemsetAsync(g->flush, 0, g->flush_bytes, st), "flushing L2");
		CK(bench_launch_stamp(sms, g->stamps_dev + 4 * i, st), "stamping the SM clock");
		CK(cudaEventRecord(g->ev[2 * i], st), "cudaEventRecord");
		if ((r = run_impl(c)) < 0)
			return r;
		CK(cudaEventRecord(g->ev[2 * i + 1], st), "cudaEventRecord");
		CK(bench_launch_stamp(sms, g->stamps_dev + 4 * i + 2, st), "stamping the SM clock");
	}
	CK(cudaStreamSynchronize(st), "waiting for the samples");
	for (size_t i = 0; i < n; i++) {
		float ms = 0;
		CK(cudaEventElapsedTime(&ms, g->ev[2 * i], g->ev[2 * i + 1]), "cudaEventElapsedTime");
		ret_ns[i] = (uint64_t)llround((double)ms * 1e6);
		if (ret_mhz)
			ret_mhz[i] = sample_mhz(g->stamps + 4 * i);
	}
	return 0;
}

static int time_span(void *ctx, size_t n, uint64_t *ret_ns)
{
	struct kx_gpu_case *c = (struct kx_gpu_case *)ctx;
	struct kx_gpu *g = c->g;
	int r = ensure_events(g, 2, c->err, sizeof(c->err));
	if (r < 0)
		return r;
	CK(cudaEventRecord(g->ev[0], g->st), "cudaEventRecord");
	for (size_t i = 0; i < n; i++) {
		CK(cudaMemsetAsync(g->flush, 0, g->flush_bytes, g->st), "flushing L2");
		if ((r = run_impl(c)) < 0)
			return r;
	}
	CK(cudaEventRecord(g->ev[1], g->st), "cudaEventRecord");
	CK(cudaEventSynchronize(g->ev[1]), "waiting for the estimate");
	float ms = 0;
	CK(cudaEventElapsedTime(&ms, g->ev[0], g->ev[1]), "cudaEventElapsedTime");
	*ret_ns = (uint64_t)llround((double)ms * 1e6);
	return 0;
}

static int warm(void *ctx, size_t n)
{
	struct kx_gpu_case *c = (struct kx_gpu_case *)ctx;
	for (size_t i = 0; i < n; i++) {
		int r = run_impl(c);
		if (r < 0)
			return r;
	}
	CK(cudaStreamSynchronize(c->g->st), "warming up");
	return 0;
}

void bench_gpu_case_ops(struct kx_bench_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->time_calls = time_calls;
	ops->time_span = time_span;
	ops->warm = warm;
}
