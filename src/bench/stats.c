// SPDX-License-Identifier: MIT
/*
 * The numbers a run reports and how they are computed: quantiles by linear interpolation, mean,
 * sample standard deviation, the running noise the stopping rule watches and its trailing
 * history, the SHA-256 that pins
 * the raw samples. Pure functions of their inputs; both the GPU and the CPU paths and the unit
 * tests go through them.
 */
#include "bench.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

double bench_quantile(const double *sorted, size_t n, double q)
{
	if (q <= 0)
		return sorted[0];
	if (q >= 1)
		return sorted[n - 1];
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)floor(pos);
	size_t hi = lo + 1 < n ? lo + 1 : lo;
	double t = pos - (double)lo;
	/* written as a + t*(b-a) like numpy, so equal neighbours give exactly that value */
	return sorted[lo] + t * (sorted[hi] - sorted[lo]);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int bench_stats_compute(const uint64_t *ns, size_t n, struct kx_bench_stats *ret)
{
	if (n == 0)
		return -EINVAL;
	double *v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		v[i] = (double)ns[i];
		sum += v[i];
	}
	double mean = sum / (double)n;
	/* two-pass variance: exact enough for 1e5 samples of 1e10 ns, no cancellation */
	double ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - mean) * (v[i] - mean);
	qsort(v, n, sizeof(*v), cmp_double);
	ret->n = n;
	ret->median = bench_quantile(v, n, 0.5);
	ret->p20 = bench_quantile(v, n, 0.2);
	ret->p80 = bench_quantile(v, n, 0.8);
	ret->min = v[0];
	ret->max = v[n - 1];
	ret->mean = mean;
	ret->stdev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
	free(v);
	return 0;
}

int bench_samples_text(const uint64_t *ns, size_t n, struct kx_buf *out)
{
	for (size_t i = 0; i < n; i++) {
		int r = kx_buf_printf(out, "%" PRIu64 "\n", ns[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

int bench_samples_sha256(const uint64_t *ns, size_t n, char hex[KX_DIGEST_HEX + 1])
{
	struct kx_sha256 *h = kx_sha256_new();
	if (!h)
		return -ENOMEM;
	char line[32];
	for (size_t i = 0; i < n; i++) {
		int len = snprintf(line, sizeof(line), "%" PRIu64 "\n", ns[i]);
		kx_sha256_update(h, line, (size_t)len);
	}
	uint8_t d[KX_DIGEST_LEN];
	kx_sha256_final(h, d);
	kx_hex(d, KX_DIGEST_LEN, hex);
	return 0;
}

void bench_running_add(struct kx_bench_running *r, double x)
{
	r->n++;
	r->sum += x;
	double d = x - r->mean;
	r->mean += d / (double)r->n;
	r->m2 += d * (x - r->mean);
}

double bench_running_noise(const struct kx_bench_running *r)
{
	if (r->n < 2 || r->mean == 0)
		return INFINITY;
	double var = r->m2 / (double)(r->n - 1);
	return sqrt(var > 0 ? var : 0) / fabs(r->mean);
}

void bench_noise_push(struct kx_bench_noise_history *h, double noise)
{
	if (!isfinite(noise))
		return;
	h->v[h->next] = noise;
	h->next = (h->next + 1) % KX_BENCH_NOISE_WINDOW;
	if (h->len < KX_BENCH_NOISE_WINDOW)
		h->len++;
}

double bench_noise_spread(const struct kx_bench_noise_history *h)
{
	if (h->len < 2)
		return INFINITY;
	double newest = h->v[(h->next + KX_BENCH_NOISE_WINDOW - 1) % KX_BENCH_NOISE_WINDOW];
	if (!(newest > 0))
		return INFINITY;
	double ss = 0;
	for (size_t i = 0; i < h->len; i++)
		ss += (h->v[i] - newest) * (h->v[i] - newest);
	return sqrt(ss / (double)(h->len - 1)) / newest;
}
