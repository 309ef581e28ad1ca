// SPDX-License-Identifier: MIT
/*
 * numeric.h, the arithmetic the CUDA kernels and the CPU code share: bf16 rounding (against the
 * IEEE round-to-nearest-even rule), the online log-sum-exp merge the cross-entropy kernels reduce
 * with (any split of a row, merged in any order, gives the row's log-sum-exp), and the input
 * generator (deterministic, unit variance, in range).
 */
#include "numeric.h"
#include "kx/common.h"
#include "tap.h"

#include <math.h>

static double lse_ref(const float *x, size_t n)
{
	double m = -INFINITY, s = 0;
	for (size_t i = 0; i < n; i++)
		m = x[i] > m ? x[i] : m;
	for (size_t i = 0; i < n; i++)
		s += exp((double)x[i] - m);
	return m + log(s);
}

static void bf16(void)
{
	ok(kx_bf16_from_float(1.0f) == 0x3f80, "1.0 is 0x3f80");
	ok(kx_bf16_from_float(-2.0f) == 0xc000, "-2.0 is 0xc000");
	ok(kx_bf16_from_float(-0.0f) == 0x8000, "-0.0 keeps its sign");
	/* 1 + 2^-8 is halfway between 0x3f80 and 0x3f81: ties go to even */
	ok(kx_bf16_from_float(1.00390625f) == 0x3f80, "a tie rounds to even (down)");
	ok(kx_bf16_from_float(1.01171875f) == 0x3f82, "a tie rounds to even (up: 1 + 3*2^-8)");
	ok(kx_bf16_from_float(1.0040f) == 0x3f81, "above the tie rounds up");
	uint16_t n = kx_bf16_from_float(NAN);
	ok((n & 0x7f80) == 0x7f80 && (n & 0x7f), "NaN stays NaN");
	ok(kx_bf16_from_float(INFINITY) == 0x7f80, "infinity stays infinity");
	ok(kx_bf16_from_float(3.4e38f) == 0x7f80, "past halfway above the largest finite bf16: infinity");
	ok(kx_bf16_from_float(3.39e38f) == 0x7f7f, "just above the largest finite bf16 rounds to it");
	ok(kx_bf16_to_float(0x3fc0) == 1.5f, "0x3fc0 is 1.5");
	int exact = 1;
	for (uint32_t h = 0; h < 0x10000; h++)
		if ((h & 0x7f80) != 0x7f80) /* finite values round-trip exactly */
			exact &= kx_bf16_from_float(kx_bf16_to_float((uint16_t)h)) == h;
	ok(exact, "every finite bf16 survives widening and rounding back");
}

static void lse(void)
{
	float x[1000];
	for (size_t i = 0; i < 1000; i++)
		x[i] = 8.0f * kx_rand_normal(7, KX_T_X, i);
	double want = lse_ref(x, 1000);

	float m = -INFINITY, s = 0;
	for (size_t i = 0; i < 1000; i++)
		kx_lse_add(&m, &s, x[i]);
	ok(fabs(m + log(s) - want) < 1e-5, "adding one value at a time gives log-sum-exp");

	/* the kernels' shape: 37 uneven chunks, each reduced alone, merged in reverse order */
	float M = -INFINITY, S = 0;
	for (int c = 36; c >= 0; c--) {
		size_t lo = (size_t)c * 1000 / 37, hi = (size_t)(c + 1) * 1000 / 37;
		float mc = -INFINITY, sc = 0;
		for (size_t i = lo; i < hi; i++)
			kx_lse_add(&mc, &sc, x[i]);
		kx_lse_merge(&M, &S, mc, sc);
	}
	ok(fabs(M + log(S) - want) < 1e-5, "merging chunks in any order gives log-sum-exp");

	/* kindex-chunked's loop at the default vocabulary, at each width it may choose and at the
	 * serial path's: the first chunk written, the others merged in order, the last one short,
	 * the target's logit picked up in whichever chunk holds it */
	enum { V = 128256 };
	static float row[V];
	for (size_t i = 0; i < V; i++)
		row[i] = kx_bf16_to_float(kx_bf16_from_float(4.0f * kx_rand_normal(7, KX_T_W, i)));
	const size_t target = 127999; /* in the short last chunk at 1024 and 1536 */
	double want_loss = lse_ref(row, V) - row[target];
	const size_t widths[] = { 1024, 1536, 2048 };
	for (size_t w = 0; w < 3; w++) {
		float Mw = 0, Sw = 0, zt = NAN;
		for (size_t c0 = 0; c0 < V; c0 += widths[w]) {
			size_t nc = V - c0 < widths[w] ? V - c0 : widths[w];
			float mc = -INFINITY, sc = 0;
			for (size_t i = 0; i < nc; i++)
				kx_lse_add(&mc, &sc, row[c0 + i]);
			if (c0 == 0)
				Mw = mc, Sw = sc;
			else
				kx_lse_merge(&Mw, &Sw, mc, sc);
			if (target >= c0 && target < c0 + nc)
				zt = row[target];
		}
		double got = Mw + log(Sw) - zt;
		ok(fabs(got - want_loss) < 1e-4 * fabs(want_loss),
		   "chunks of %zu columns over 128256: the loss of log-sum-exp (%.6f, want %.6f)",
		   widths[w], got, want_loss);
	}

	float a = 3.0f, b = 2.0f;
	kx_lse_merge(&a, &b, -INFINITY, 0.0f);
	ok(a == 3.0f && b == 2.0f, "merging an empty pair changes nothing");
	float e = -INFINITY, f = 0;
	kx_lse_merge(&e, &f, 1.0f, 4.0f);
	ok(e == 1.0f && f == 4.0f, "merging into an empty pair copies");
	float big = 1000.0f, one = 1.0f;
	kx_lse_merge(&big, &one, 1001.0f, 1.0f);
	ok(isfinite(big) && isfinite(one) && fabs(big + log(one) - (1001.0 + log1p(exp(-1.0)))) < 1e-4,
	   "large logits do not overflow");
}

static void generator(void)
{
	double sum = 0, sq = 0, mn = 0, mx = 0;
	const size_t n = 200000;
	for (size_t i = 0; i < n; i++) {
		double v = kx_rand_normal(0x6b696e646578ull, KX_T_X, i);
		sum += v;
		sq += v * v;
		mn = v < mn ? v : mn;
		mx = v > mx ? v : mx;
	}
	double mean = sum / n, var = sq / n - mean * mean;
	ok(fabs(mean) < 0.01, "normal inputs have mean ~0 (%.4f)", mean);
	ok(fabs(var - 1) < 0.01, "normal inputs have variance ~1 (%.4f)", var);
	ok(mn > -3.47 && mx < 3.47, "normal inputs stay within +-2*sqrt(3)");
	ok(kx_rand_normal(1, KX_T_X, 5) == kx_rand_normal(1, KX_T_X, 5), "same seed, same value");
	ok(kx_rand_normal(1, KX_T_X, 5) != kx_rand_normal(1, KX_T_W, 5), "tensors are independent");
	int in_range = 1;
	unsigned hist[4] = { 0 };
	for (size_t i = 0; i < 40000; i++) {
		uint32_t t = kx_rand_below(3, KX_T_TARGET, i, 128256);
		in_range &= t < 128256;
		hist[t / 32064]++;
	}
	ok(in_range, "targets fall in [0, vocab)");
	ok(hist[0] > 9500 && hist[3] > 9500, "targets spread over the vocabulary");
	ok(kx_silu(0) == 0 && fabs(kx_silu(10) - 10 / (1 + exp(-10.0))) < 1e-5, "silu");
}

int main(void)
{
	bf16();
	lse();
	generator();
	return tap_done();
}
