// SPDX-License-Identifier: MIT
/*
 * The CPU selftest's workload: cross_entropy/forward on the host, single-threaded, with the
 * inputs a GPU run of the same shape would generate (numeric.h). Two implementations (one pass
 * with an online maximum, two passes) are checked against an fp64 reference and timed with the
 * kindex sampling rules, a clock_gettime(CLOCK_MONOTONIC) pair around each call and the last-level
 * cache overwritten before it. This is what `--selftest` runs on machines without a GPU, so the
 * protocol, statistics, environment and manifest code runs for real everywhere.
 */
#include "bench.h"
#include "numeric.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum cpu_impl { CPU_ONLINE, CPU_TWO_PASS };

static const char *const cpu_impls[] = { "kindex-cpu-online", "kindex-cpu-two-pass" };

struct kx_cpu_case {
	struct kx_bench_shape shape;
	enum cpu_impl impl;
	float *logits;
	int32_t *targets;
	float *loss; /* per row */
	float mean;
	uint8_t *flush;
	size_t flush_bytes;
	unsigned flushes;
	uint64_t peak;
};

bool bench_cpu_has_impl(enum kx_bench_kind kind, const char *impl)
{
	if (kind != KX_KIND_CROSS_ENTROPY)
		return false;
	for (size_t i = 0; i < KX_ARRAY_SIZE(cpu_impls); i++)
		if (strcmp(cpu_impls[i], impl) == 0)
			return true;
	return false;
}

void bench_cpu_case_free(struct kx_cpu_case *c)
{
	if (!c)
		return;
	free(c->logits);
	free(c->targets);
	free(c->loss);
	free(c->flush);
	free(c);
}

int bench_cpu_case_new(const struct kx_bench_shape *shape, uint64_t flush_bytes,
		       struct kx_cpu_case **ret, char *err, size_t errlen)
{
	if (!bench_cpu_has_impl(shape->kind, shape->impl)) {
		snprintf(err, errlen, "no CPU implementation '%s' of this workload", shape->impl);
		return -EINVAL;
	}
	size_t m = (size_t)shape->m, n = (size_t)shape->n;
	if (n > SIZE_MAX / sizeof(float) / m) {
		snprintf(err, errlen, "cannot allocate a %zu x %zu logits matrix", m, n);
		return -E2BIG;
	}
	struct kx_cpu_case *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->shape = *shape;
	c->impl = strcmp(shape->impl, cpu_impls[CPU_ONLINE]) == 0 ? CPU_ONLINE : CPU_TWO_PASS;
	c->logits = malloc(m * n * sizeof(float));
	c->targets = malloc(m * sizeof(int32_t));
	c->loss = malloc(m * sizeof(float));
	c->flush_bytes = (size_t)flush_bytes;
	c->flush = malloc(c->flush_bytes ? c->flush_bytes : 1);
	if (!c->logits || !c->targets || !c->loss || !c->flush) {
		snprintf(err, errlen, "cannot allocate %zu MiB of inputs",
			 (m * n * sizeof(float) + c->flush_bytes) >> 20);
		bench_cpu_case_free(c);
		return -ENOMEM;
	}
	c->peak = m * n * sizeof(float) + m * sizeof(int32_t) + m * sizeof(float);
	for (size_t i = 0; i < m * n; i++)
		c->logits[i] = KX_LOGIT_STD * kx_rand_normal(shape->seed, KX_T_X, i);
	for (size_t i = 0; i < m; i++)
		c->targets[i] = (int32_t)kx_rand_below(shape->seed, KX_T_TARGET, i, (uint32_t)n);
	*ret = c;
	return 0;
}

uint64_t bench_cpu_case_peak_bytes(const struct kx_cpu_case *c)
{
	return c->peak;
}

static float row_online(const float *x, size_t n, int32_t t)
{
	float m = -INFINITY, s = 0;
	for (size_t j = 0; j < n; j++)
		kx_lse_add(&m, &s, x[j]);
	return m + logf(s) - x[t];
}

static float row_two_pass(const float *x, size_t n, int32_t t)
{
	float m = -INFINITY, s = 0;
	for (size_t j = 0; j < n; j++)
		m = x[j] > m ? x[j] : m;
	for (size_t j = 0; j < n; j++)
		s += expf(x[j] - m);
	return m + logf(s) - x[t];
}

static void run(struct kx_cpu_case *c)
{
	size_t m = (size_t)c->shape.m, n = (size_t)c->shape.n;
	double sum = 0;
	for (size_t i = 0; i < m; i++) {
		const float *x = c->logits + i * n;
		c->loss[i] = c->impl == CPU_ONLINE ? row_online(x, n, c->targets[i])
						   : row_two_pass(x, n, c->targets[i]);
		sum += c->loss[i];
	}
	c->mean = (float)(sum / (double)m);
}

int bench_cpu_case_check(struct kx_cpu_case *c, const struct kx_bench_policy *p,
			 struct kx_bench_check *ret)
{
	size_t m = (size_t)c->shape.m, n = (size_t)c->shape.n;
	float *ref = malloc(m * sizeof(float));
	int64_t *rows = malloc(m * sizeof(int64_t));
	if (!ref || !rows) {
		free(ref);
		free(rows);
		return -ENOMEM;
	}
	run(c);
	for (size_t i = 0; i < m; i++) {
		const float *x = c->logits + i * n;
		double mx = -INFINITY, s = 0;
		for (size_t j = 0; j < n; j++)
			mx = x[j] > mx ? x[j] : mx;
		for (size_t j = 0; j < n; j++)
			s += exp((double)x[j] - mx);
		ref[i] = (float)(mx + log(s) - x[c->targets[i]]);
	}
	bench_pick_rows(rows, (int64_t)m, (int64_t)m);
	bench_check_losses(ret, p, c->loss, m, c->mean, rows, ref, NULL, m);
	free(ref);
	free(rows);
	return 0;
}

/* ---- timer ops: the CPU's monotonic clock ------------------------------------------------------- */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void flush(struct kx_cpu_case *c)
{
	/* a new byte each time, and a compiler barrier: the stores cannot be dropped or merged */
	memset(c->flush, (int)(++c->flushes & 0xff), c->flush_bytes);
	__asm__ __volatile__("" ::: "memory");
}

static int cpu_time_calls(void *ctx, size_t n, bool blocking, uint64_t *ret_ns, double *ret_mhz)
{
	struct kx_cpu_case *c = ctx;
	(void)blocking; /* a CPU call is synchronous either way */
	for (size_t i = 0; i < n; i++) {
		flush(c);
		uint64_t t0 = mono_ns();
		run(c);
		__asm__ __volatile__("" ::: "memory");
		ret_ns[i] = mono_ns() - t0;
		if (ret_mhz)
			ret_mhz[i] = 0; /* CPU clocks are not watched */
	}
	return 0;
}

static int cpu_time_span(void *ctx, size_t n, uint64_t *ret_ns)
{
	struct kx_cpu_case *c = ctx;
	uint64_t t0 = mono_ns();
	for (size_t i = 0; i < n; i++) {
		flush(c);
		run(c);
	}
	__asm__ __volatile__("" ::: "memory");
	*ret_ns = mono_ns() - t0;
	return 0;
}

static int cpu_warm(void *ctx, size_t n)
{
	for (size_t i = 0; i < n; i++)
		run(ctx);
	return 0;
}

static double cpu_now(void *ctx)
{
	(void)ctx;
	return kx_monotonic();
}

void bench_cpu_case_ops(struct kx_bench_ops *ops)
{
	*ops = (struct kx_bench_ops){
		.time_calls = cpu_time_calls,
		.time_span = cpu_time_span,
		.warm = cpu_warm,
		.clock = NULL,
		.now = cpu_now,
	};
}
