// SPDX-License-Identifier: MIT
/*
 * kindex-bench's numbers: quantiles by linear interpolation (values numpy.quantile gives for the
 * same data), mean and sample standard deviation, the running noise of the stopping rule, the
 * SHA-256 of the raw samples (as `sha256sum` computes it over the samples file). The tolerance
 * comparison is test-bench-check.c's.
 */
#include "bench.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>

static int near(double got, double want, double eps)
{
	return fabs(got - want) <= eps * (fabs(want) > 1 ? fabs(want) : 1);
}

static void quantiles(void)
{
	const double five[] = { 1, 2, 3, 4, 5 };
	ok(bench_quantile(five, 5, 0.5) == 3, "median of 1..5 is 3");
	ok(near(bench_quantile(five, 5, 0.2), 1.8, 1e-12), "p20 of 1..5 is 1.8 (numpy linear)");
	ok(near(bench_quantile(five, 5, 0.8), 4.2, 1e-12), "p80 of 1..5 is 4.2");
	ok(bench_quantile(five, 5, 0) == 1 && bench_quantile(five, 5, 1) == 5,
	   "q=0 and q=1 are min and max");
	const double four[] = { 10, 20, 30, 40 };
	ok(bench_quantile(four, 4, 0.5) == 25, "median of an even count interpolates (25)");
	ok(near(bench_quantile(four, 4, 0.2), 16, 1e-12), "p20 of 10..40 is 16");
	ok(near(bench_quantile(four, 4, 0.8), 34, 1e-12), "p80 of 10..40 is 34");
	const double one[] = { 7 };
	ok(bench_quantile(one, 1, 0.2) == 7 && bench_quantile(one, 1, 0.8) == 7,
	   "a single sample is every quantile");
	const double same[] = { 5, 5, 5 };
	ok(bench_quantile(same, 3, 0.3) == 5, "equal neighbours give exactly their value");
}

static void summary(void)
{
	/* unsorted on purpose: the statistics must not depend on the order */
	const uint64_t ns[] = { 400, 1000, 100, 300, 200 };
	struct kx_bench_stats st;
	ok(bench_stats_compute(ns, 5, &st) == 0, "stats of five samples");
	ok(st.n == 5 && st.median == 300 && st.min == 100 && st.max == 1000, "median, min, max");
	ok(near(st.p20, 180, 1e-12) && near(st.p80, 520, 1e-12), "p20 180, p80 520");
	ok(st.mean == 400, "mean 400");
	ok(near(st.stdev, sqrt(125000.0), 1e-12), "sample stdev sqrt(500000/4) (n - 1)");
	const uint64_t single = 42;
	ok(bench_stats_compute(&single, 1, &st) == 0 && st.stdev == 0 && st.median == 42,
	   "one sample: stdev 0");
	ok(bench_stats_compute(ns, 0, &st) == -EINVAL, "no samples: -EINVAL");
	/* large values: no loss from the two-pass variance */
	uint64_t big[3] = { 10000000000ull, 10000000001ull, 10000000002ull };
	ok(bench_stats_compute(big, 3, &st) == 0 && near(st.stdev, 1, 1e-9),
	   "stdev of 1e10+{0,1,2} is 1");
}

static void samples_digest(void)
{
	const uint64_t ns[] = { 1, 2, 3 };
	struct kx_buf b;
	kx_buf_init(&b, 0);
	ok(bench_samples_text(ns, 3, &b) == 0 && b.len == 6 && memcmp(b.ptr, "1\n2\n3\n", 6) == 0,
	   "samples text is one decimal ns per line");
	kx_buf_release(&b);
	char hex[KX_DIGEST_HEX + 1];
	ok(bench_samples_sha256(ns, 3, hex) == 0, "samples digest");
	is_str(hex, "14c5e74c4b96ccef41cd94db73a9ec3348038ac094feca4fd897cecffa07cdae",
	       "sha256 of \"1\\n2\\n3\\n\" (printf '1\\n2\\n3\\n' | sha256sum)");
	const uint64_t five[] = { 100, 200, 300, 400, 1000 };
	bench_samples_sha256(five, 5, hex);
	is_str(hex, "0aff1f510ff1644b475df44bbbfe47d188bd9b762b1543f205d9f9924cd07131",
	       "sha256 of five samples in measured order");
	const uint64_t swapped[] = { 200, 100, 300, 400, 1000 };
	char hex2[KX_DIGEST_HEX + 1];
	bench_samples_sha256(swapped, 5, hex2);
	ok(strcmp(hex, hex2) != 0, "the order of the samples is part of the digest");
}

static void running(void)
{
	struct kx_bench_running r = { 0 };
	bench_running_add(&r, 10);
	ok(isinf(bench_running_noise(&r)), "noise is undefined (infinite) after one sample");
	const double v[] = { 12, 9, 11, 10, 13, 8 };
	double sum = 10;
	for (size_t i = 0; i < KX_ARRAY_SIZE(v); i++) {
		bench_running_add(&r, v[i]);
		sum += v[i];
	}
	double mean = sum / 7, ss = (10 - mean) * (10 - mean);
	for (size_t i = 0; i < KX_ARRAY_SIZE(v); i++)
		ss += (v[i] - mean) * (v[i] - mean);
	ok(near(r.mean, mean, 1e-12) && r.sum == sum, "running mean and sum");
	ok(near(bench_running_noise(&r), sqrt(ss / 6) / mean, 1e-12),
	   "running noise equals two-pass stdev/mean");
	struct kx_bench_running c = { 0 };
	for (int i = 0; i < 100; i++)
		bench_running_add(&c, 5e6);
	ok(bench_running_noise(&c) == 0, "constant samples have zero noise");
}

int main(void)
{
	quantiles();
	summary();
	samples_digest();
	running();
	return tap_done();
}
