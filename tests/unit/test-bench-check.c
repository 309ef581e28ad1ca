// SPDX-License-Identifier: MIT
/*
 * The correctness checks cannot be passed by a wrong kernel. For every workload, a CPU model of
 * its correct implementation (the kernels' arithmetic: bf16 rounding where they round, fp32
 * accumulation, the online log-sum-exp of numeric.h) and deliberately wrong ones run on the
 * inputs the GPU path generates, and go through the very check functions gpu.cu calls after
 * copying its results to the host (check.c): the correct one must pass, every wrong one fail.
 *
 * The wrong implementations, per kind of workload:
 *   loss (cross_entropy, fused_linear_cross_entropy): returns zeros; skips the last 15 % of the
 *     vocabulary in the log-sum-exp; drops the last row from the mean; reads the target's
 *     neighbour (off by one); forgets to rescale the running sum when the maximum grows.
 *   element-wise (rms_norm, swiglu, matmul): returns zeros; skips 15 % of the reduction (the
 *     hidden size in the sum of squares, the inner dimension of the GEMM); leaves the last row
 *     unwritten; computes each row from the next row's input (off by one).
 * Before them: the comparison itself, the published tolerances, and the bf16 rounding allowance.
 */
#include "bench.h"
#include "numeric.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>

static const uint64_t seed = 0x6b696e646578ull; /* bench_case_init's */

static float bf(float x)
{
	return kx_bf16_to_float(kx_bf16_from_float(x));
}

static bool near(double a, double b, double eps)
{
	return fabs(a - b) <= eps;
}

/* ---- the comparison and the policy ------------------------------------------------------------- */

static void policy(void)
{
	struct kx_bench_policy p;
	ok(bench_policy_for("bf16", &p) == 0 && p.loss->rtol == 1e-3 && p.loss->atol == 2e-2 &&
	   p.loss->allowance && !strcmp(p.loss->allowance, "bf16LogitRounding"),
	   "bf16 loss: rtol 1e-3, atol 2e-2, plus the logits' rounding allowance");
	ok(p.mean->rtol == 1e-5 && p.mean->atol == 1e-5 && !p.mean->allowance,
	   "bf16 workload's mean: fp32 tolerance, no allowance");
	ok(p.output->rtol == 1.6e-2 && p.output->atol == 1e-2, "bf16 output: rtol 1.6e-2, atol 1e-2");
	ok(bench_policy_for("fp32", &p) == 0 && p.loss->rtol == 1e-5 && p.loss->atol == 1e-5 &&
	   !p.loss->allowance && p.mean->rtol == 1e-5 && p.output->atol == 1e-5,
	   "fp32: 1e-5 for every output");
	ok(bench_policy_for("fp16", &p) == 0 && p.loss == p.output && p.mean->rtol == 1e-5,
	   "fp16: its output tolerance for a loss, the fp32 one for a mean");
	ok(bench_policy_for("int8", &p) == -ENOENT && bench_policy_for(NULL, &p) == -ENOENT,
	   "an unknown dtype has no policy");
}

static void compare(void)
{
	struct kx_bench_policy p;
	bench_policy_for("bf16", &p);
	struct kx_bench_check c;
	const float ref[] = { 1.0f, 10.0f, -2.0f, 0.0f };
	const float good[] = { 1.02f, 10.1f, -2.03f, 0.009f };
	ok(bench_check_values(&c, &p, "output", good, ref, 4), "values within atol + rtol*|ref| pass");
	ok(c.checked == 4 && c.violations == 0 && c.message[0] == '\0', "no message when passed");

	/* exactly on the bound passes (<=): |1.5 - 1| = 0.5 = 0.5 + 0 * 1 */
	struct kx_bench_tolerance edge = { "fp32", "output", 0, 0.5, NULL };
	const float one = 1.0f, onehalf = 1.5f, over = 1.5001f, small = 0.25f;
	bench_check_init(&c, "fp32", "x");
	bench_check_output(&c, &edge, "x");
	ok(bench_compare(&c, &onehalf, &one, NULL, 1), "an error equal to the bound passes");
	ok(!bench_compare(&c, &over, &one, NULL, 1), "an error past the bound fails");
	bench_check_output(&c, &edge, "y");
	ok(bench_compare(&c, &over, &one, &small, 1), "an allowance widens the bound of its value");

	const float bad[] = { 1.0f, 10.0f, -1.0f, 0.5f };
	bench_check_init(&c, "bf16", "output");
	bench_check_output(&c, p.output, "per-token loss");
	bench_compare(&c, good, ref, NULL, 4);
	bench_compare(&c, bad, ref, NULL, 4);
	ok(!bench_check_finish(&c) && c.violations == 2 && c.checked == 8,
	   "two of eight values outside: failed");
	ok(c.out[0].worst == 7, "worst: the largest share of its bound, indexed across calls (7: 0.5 vs 0)");
	ok(near(c.max_abs, 1.0, 1e-6), "max abs error 1.0");
	ok(strncmp(c.message, "correctness failed: 2 of 8 values of the per-token loss outside bf16 "
			      "output tolerance (rtol 0.016, atol 0.01)", 101) == 0,
	   "message says what failed under which tolerance, lowercase");
	diag("%s", c.message);

	const float nan[] = { 1.0f, NAN, INFINITY, 0.0f };
	ok(!bench_check_values(&c, &p, "output", nan, ref, 4) && c.nonfinite == 2 && c.out[0].worst == 1,
	   "non-finite values fail and the first is named");
	ok(strstr(c.message, "not finite") != NULL, "message names non-finite values");

	bench_check_init(&c, "bf16", "output");
	ok(!bench_check_finish(&c), "a check that compared nothing does not pass");
	const float loss[] = { 1.0f, 2.0f };
	const int64_t rows[] = { 0, 1 };
	ok(!bench_check_losses(&c, &p, loss, 2, 1.5f, rows, loss, NULL, 0) &&
	   strstr(c.message, "compared no values of the per-row loss"),
	   "nor one whose loss output compared nothing: %s", c.message);
	ok(bench_check_losses(&c, &p, loss, 2, 1.5f, rows, loss, NULL, 2) && c.nout == 2 &&
	   c.checked == 3, "a loss check compares the rows and the mean: two outputs, three values");
	ok(!bench_check_losses(&c, &p, loss, 2, 1.5001f, rows, loss, NULL, 2) &&
	   strstr(c.message, "of the mean loss outside bf16 mean tolerance (rtol 1e-05, atol 1e-05)"),
	   "a mean off by 1e-4 fails at fp32 tolerance: %s", c.message);
}

static void allowance(void)
{
	ok(kx_bf16_half_ulp(1.0f) == 0x1p-8f && kx_bf16_half_ulp(1.99f) == 0x1p-8f &&
	   kx_bf16_half_ulp(-2.0f) == 0x1p-7f && kx_bf16_half_ulp(0.75f) == 0x1p-9f &&
	   kx_bf16_half_ulp(20.0f) == 0x1p-4f && kx_bf16_half_ulp(0.0f) == 0,
	   "half a bf16 ulp: 2^-8 on [1, 2), 2^-7 at 2, 2^-9 at 0.75, 1/16 at 20, 0 at 0");
	/* the rounding bound: within half an ulp of every value, and reached by some */
	bool within = true, reached = false;
	for (uint32_t i = 0; i < 100000; i++) {
		float x = 40.0f * kx_rand_normal(seed, 9, i), e = fabsf(bf(x) - x);
		within &= e <= kx_bf16_half_ulp(x);
		reached |= e > 0.99f * kx_bf16_half_ulp(x);
	}
	ok(within && reached, "rounding to bf16 moves a value by at most, and up to, half an ulp");

	/* one dominant logit: the softmax-weighted term is its half ulp */
	float z[1000];
	for (int j = 0; j < 1000; j++)
		z[j] = j == 7 ? 100.0f : 0.5f;
	double a = bench_lse_allowance(z, 1000, 3);
	ok(near(a, 0x1p-9 + 0.25, 1e-6), "dominant logit 100 (half ulp 0.25), target 0.5 (2^-9): %g", a);
	for (int j = 0; j < 1000; j++)
		z[j] = 1.5f;
	a = bench_lse_allowance(z, 1000, 0);
	ok(near(a, 2 * 0x1p-8, 1e-9), "a flat row of 1.5: the target's half ulp twice: %g", a);
}

/* ---- loss workloads --------------------------------------------------------------------------- */

enum wrong { CORRECT, ZEROS, SKIP15, DROP_ROW, OFF_BY_ONE, NO_RESCALE, NWRONG };
static const char *const wrong_names[] = {
	"correct", "returns zeros", "skips 15 % of the reduction", "drops a row",
	"off by one", "forgets to rescale",
};

struct loss_case {
	const char *name;
	bool bf16;      /* logits rounded to bf16 (fused_linear_cross_entropy), else fp32 inputs */
	size_t m, n, k; /* rows, vocabulary, hidden (bf16 only) */
	size_t s;       /* rows compared, as bench_case_shape chooses */
};

/* The exact logits: fp32 inputs, or X . W^T in fp32 over bf16 X and W (W scaled so the logits
 * have KX_LOGIT_STD), as the GPU path generates and the reference computes them. */
static float *logits(const struct loss_case *lc)
{
	float *z = malloc(lc->m * lc->n * sizeof(float));
	if (!z)
		return NULL;
	if (!lc->bf16) {
		for (size_t i = 0; i < lc->m * lc->n; i++)
			z[i] = KX_LOGIT_STD * kx_rand_normal(seed, KX_T_X, i);
		return z;
	}
	float *x = malloc(lc->m * lc->k * sizeof(float)), *w = malloc(lc->n * lc->k * sizeof(float));
	for (size_t i = 0; x && w && i < lc->m * lc->k; i++)
		x[i] = bf(kx_rand_normal(seed, KX_T_X, i));
	for (size_t i = 0; x && w && i < lc->n * lc->k; i++)
		w[i] = bf(KX_LOGIT_STD / sqrtf((float)lc->k) * kx_rand_normal(seed, KX_T_W, i));
	for (size_t i = 0; x && w && i < lc->m; i++)
		for (size_t j = 0; j < lc->n; j++) {
			float acc = 0;
			for (size_t q = 0; q < lc->k; q++)
				acc = fmaf(x[i * lc->k + q], w[j * lc->k + q], acc);
			z[i * lc->n + j] = acc;
		}
	if (!x || !w) {
		free(z);
		z = NULL;
	}
	free(x);
	free(w);
	return z;
}

/* One implementation: per-row loss over the logits as the kernel holds them (zi), and the mean. */
static void run_loss(enum wrong how, const float *zi, size_t m, size_t n, const int32_t *t,
		     float *loss, float *mean)
{
	size_t used = how == SKIP15 ? n - n * 15 / 100 : n;
	for (size_t i = 0; i < m; i++) {
		const float *r = zi + i * n;
		float mx = -INFINITY, s = 0;
		for (size_t j = 0; j < used; j++) {
			if (how == NO_RESCALE && r[j] > mx) {
				s += 1.0f; /* the old terms stay scaled to the old maximum */
				mx = r[j];
			} else {
				kx_lse_add(&mx, &s, r[j]);
			}
		}
		size_t tt = (size_t)t[i];
		if (how == OFF_BY_ONE)
			tt = tt + 1 < n ? tt + 1 : tt - 1;
		loss[i] = how == ZEROS ? 0.0f : mx + logf(s) - r[tt];
	}
	float sum = 0;
	for (size_t i = 0; i < (how == DROP_ROW ? m - 1 : m); i++)
		sum += loss[i];
	*mean = how == ZEROS ? 0.0f : sum / (float)m;
}

static void loss_workload(const struct loss_case *lc)
{
	size_t m = lc->m, n = lc->n, s = lc->s;
	float *z = logits(lc), *zi = malloc(m * n * sizeof(float)), *loss = malloc(m * sizeof(float));
	float *ref = malloc(s * sizeof(float)), *allow = malloc(s * sizeof(float));
	int32_t *t = malloc(m * sizeof(int32_t));
	int64_t *rows = malloc(s * sizeof(int64_t));
	if (!ok(z && zi && loss && ref && allow && t && rows, "%s: inputs", lc->name))
		goto out;
	for (size_t i = 0; i < m; i++)
		t[i] = (int32_t)kx_rand_below(seed, KX_T_TARGET, i, (uint32_t)n);
	for (size_t i = 0; i < m * n; i++)
		zi[i] = lc->bf16 ? bf(z[i]) : z[i];
	double var = 0;
	for (size_t i = 0; i < m * n; i++)
		var += (double)z[i] * z[i];
	ok(near(sqrt(var / (double)(m * n)), KX_LOGIT_STD, 0.15 * KX_LOGIT_STD),
	   "%s: logits of standard deviation %.2f (KX_LOGIT_STD %g)", lc->name,
	   sqrt(var / (double)(m * n)), (double)KX_LOGIT_STD);

	/* the reference: two passes in fp32 over the exact logits (reference.cu's ref_ce_rows) */
	bench_pick_rows(rows, (int64_t)s, (int64_t)m);
	for (size_t i = 0; i < s; i++) {
		const float *r = z + (size_t)rows[i] * n;
		float mx = -INFINITY, sum = 0;
		for (size_t j = 0; j < n; j++)
			mx = fmaxf(mx, r[j]);
		for (size_t j = 0; j < n; j++)
			sum += expf(r[j] - mx);
		ref[i] = mx + logf(sum) - r[t[rows[i]]];
		allow[i] = (float)bench_lse_allowance(r, n, t[rows[i]]);
	}
	struct kx_bench_policy p;
	bench_policy_for(lc->bf16 ? "bf16" : "fp32", &p);
	for (int how = CORRECT; how < NWRONG; how++) {
		float mean;
		run_loss((enum wrong)how, zi, m, n, t, loss, &mean);
		struct kx_bench_check c;
		bool passed = bench_check_losses(&c, &p, loss, m, mean, rows, ref,
						 lc->bf16 ? allow : NULL, s);
		if (how == CORRECT) {
			ok(passed, "%s, correct: passes (%zu values; worst share of its bound %.3f)",
			   lc->name, c.checked, c.out[0].worst_share);
			diag("max abs error %.3g; %s", c.max_abs, c.message);
		} else {
			ok(!passed, "%s, %s: fails: %s", lc->name, wrong_names[how], c.message);
		}
	}
	if (lc->bf16) {
		/* without its allowance the loss's fixed bound is what catches a partial log-sum-exp */
		double amax = 0;
		for (size_t i = 0; i < s; i++)
			amax = fmax(amax, allow[i]);
		ok(amax < 0.1, "%s: the largest rounding allowance is %.3f, under 0.1", lc->name, amax);
	}
out:
	free(z);
	free(zi);
	free(loss);
	free(ref);
	free(allow);
	free(t);
	free(rows);
}

/* ---- element-wise workloads ----------------------------------------------------------------- */

enum out_kind { RMS_NORM, SWIGLU, MATMUL };

struct out_case {
	const char *name;
	enum out_kind kind;
	size_t m, n, k, s; /* as struct kx_bench_shape: rows, hidden/N, intermediate/K, compared */
};

static float dot(const float *a, const float *b, size_t k)
{
	float acc = 0;
	for (size_t q = 0; q < k; q++)
		acc = fmaf(a[q], b[q], acc);
	return acc;
}

/* Inputs in bf16 (as floats), generated as gpu.cu's prepare() does. */
struct out_inputs {
	float *x, *w, *w2;
};

static bool out_inputs(const struct out_case *oc, struct out_inputs *in)
{
	size_t m = oc->m, n = oc->n, k = oc->k;
	size_t nx = oc->kind == MATMUL ? m * k : m * n;
	size_t nw = oc->kind == RMS_NORM ? n : oc->kind == SWIGLU ? 2 * k * n : n * k;
	in->x = malloc(nx * sizeof(float));
	in->w = malloc(nw * sizeof(float));
	in->w2 = malloc((oc->kind == SWIGLU ? n * k : 1) * sizeof(float));
	if (!in->x || !in->w || !in->w2)
		return false;
	for (size_t i = 0; i < nx; i++)
		in->x[i] = bf(kx_rand_normal(seed, KX_T_X, i));
	for (size_t i = 0; i < nw; i++)
		in->w[i] = oc->kind == RMS_NORM ? bf(1.0f + 0.1f * kx_rand_normal(seed, KX_T_W, i))
			 : oc->kind == SWIGLU   ? bf(kx_rand_normal(seed, KX_T_W_GATEUP, i) / sqrtf((float)n))
						: bf(kx_rand_normal(seed, KX_T_W, i) / sqrtf((float)k));
	for (size_t i = 0; oc->kind == SWIGLU && i < n * k; i++)
		in->w2[i] = bf(kx_rand_normal(seed, KX_T_W_DOWN, i) / sqrtf((float)k));
	return true;
}

/*
 * Row `row` of the output into y[0..n): the kernel's arithmetic (rounded = true: bf16 where the
 * kernels round) or the fp32 reference's (rounded = false), done right or wrong.
 */
static void out_row(const struct out_case *oc, const struct out_inputs *in, size_t row,
		    enum wrong how, bool rounded, float *y, float *tmp)
{
	size_t m = oc->m, n = oc->n, k = oc->k;
	float (*r)(float) = rounded ? bf : NULL;
#define R(v) (r ? r(v) : (v))
	if (how == ZEROS || (how == DROP_ROW && row == m - 1)) {
		for (size_t j = 0; j < n; j++)
			y[j] = 0;
		return;
	}
	size_t src = how == OFF_BY_ONE ? (row + 1) % m : row;
	switch (oc->kind) {
	case RMS_NORM: {
		const float *x = in->x + src * n;
		float ss = 0;
		for (size_t j = 0; j < (how == SKIP15 ? n - n * 15 / 100 : n); j++)
			ss += x[j] * x[j];
		float inv = 1.0f / sqrtf(ss / (float)n + 1e-6f);
		for (size_t j = 0; j < n; j++)
			y[j] = R(x[j] * inv * in->w[j]);
		break;
	}
	case SWIGLU: {
		const float *x = in->x + src * n;
		for (size_t q = 0; q < 2 * k; q++) /* gate and up, then h = silu(gate) * up */
			tmp[q] = R(dot(x, in->w + q * n, n));
		for (size_t q = 0; q < k; q++)
			tmp[q] = R(kx_silu(tmp[q]) * tmp[k + q]);
		for (size_t j = 0; j < n; j++)
			y[j] = R(dot(tmp, in->w2 + j * k, how == SKIP15 ? k - k * 15 / 100 : k));
		break;
	}
	case MATMUL:
		for (size_t j = 0; j < n; j++)
			y[j] = R(dot(in->x + src * k, in->w + j * k, how == SKIP15 ? k - k * 15 / 100 : k));
		break;
	}
#undef R
}

static void out_workload(const struct out_case *oc)
{
	size_t s = oc->s, n = oc->n;
	struct out_inputs in = { 0 };
	float *got = malloc(s * n * sizeof(float)), *ref = malloc(s * n * sizeof(float));
	float *tmp = malloc(2 * (oc->k + 1) * sizeof(float));
	int64_t *rows = malloc(s * sizeof(int64_t));
	if (!ok(out_inputs(oc, &in) && got && ref && tmp && rows, "%s: inputs", oc->name))
		goto out;
	bench_pick_rows(rows, (int64_t)s, (int64_t)oc->m);
	ok(rows[0] == 0 && rows[s - 1] == (int64_t)oc->m - 1, "%s: the compared rows include the first and last",
	   oc->name);
	for (size_t i = 0; i < s; i++)
		out_row(oc, &in, (size_t)rows[i], CORRECT, false, ref + i * n, tmp);
	struct kx_bench_policy p;
	bench_policy_for("bf16", &p);
	for (int how = CORRECT; how < NO_RESCALE; how++) {
		for (size_t i = 0; i < s; i++)
			out_row(oc, &in, (size_t)rows[i], (enum wrong)how, true, got + i * n, tmp);
		struct kx_bench_check c;
		bool passed = bench_check_values(&c, &p, s == oc->m ? "output (all rows)" : "output (sampled rows)",
						 got, ref, s * n);
		if (how == CORRECT)
			ok(passed, "%s, correct: passes (%zu values; worst share of its bound %.3f)", oc->name,
			   c.checked, c.out[0].worst_share);
		else
			ok(!passed, "%s, %s: fails: %s", oc->name, wrong_names[how], c.message);
	}
out:
	free(in.x);
	free(in.w);
	free(in.w2);
	free(got);
	free(ref);
	free(tmp);
	free(rows);
}

int main(void)
{
	policy();
	compare();
	allowance();
	/* the workloads' kinds at small shapes; compared rows as bench_case_shape picks them */
	const struct loss_case losses[] = {
		{ "cross_entropy/forward", false, 64, 4096, 0, 64 },
		{ "fused_linear_cross_entropy/forward", true, 300, 8192, 64, 256 },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(losses); i++)
		loss_workload(&losses[i]);
	const struct out_case outs[] = {
		{ "rms_norm/forward", RMS_NORM, 64, 1024, 0, 64 },
		{ "swiglu/forward", SWIGLU, 300, 64, 96, 128 },
		{ "matmul/forward", MATMUL, 300, 512, 256, 64 },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(outs); i++)
		out_workload(&outs[i]);
	return tap_done();
}
