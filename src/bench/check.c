// SPDX-License-Identifier: MIT
/*
 * The correctness policy and the checks behind it: a tolerance per output (per-row loss, mean,
 * element-wise output) and dtype, the comparison |got - ref| <= atol + rtol * |ref| + allowance,
 * and the one check per kind of workload that the GPU path (gpu.cu, after copying results to the
 * host), the CPU selftest and the unit tests' deliberately wrong implementations all run. Keeping
 * the checks here, in plain C, is what lets a machine without a GPU prove that a wrong kernel
 * fails them.
 *
 * Why these tolerances (docs/harness.md has the measurements):
 *  - a bf16 per-row loss: atol 2e-2 and rtol 1e-3, plus the reference's first-order bound on what
 *    rounding the logits to bf16 can do to logsumexp(z) - z[t] (bench_lse_allowance). With
 *    logits of standard deviation 4 that rounding alone moves a correct kernel's loss by up to
 *    0.07 at 128256 classes, more than any fixed atol that still catches a log-sum-exp that skips
 *    15 % of the row; the allowance follows each row's own softmax instead, and stays under 0.1.
 *  - a mean of per-row losses is an fp32 reduction of values the harness has on the host: fp32
 *    tolerance, against the fp64 mean of the implementation's own per-row losses.
 *  - element-wise bf16 outputs: torch.testing.assert_close's bf16 rtol, atol 1e-2 (about 2.5 bf16
 *    ulps at 1.0; every kernel rounds intermediates to bf16 and outputs are O(1)).
 *  - fp32: 1e-5 both, torch's 1.3e-6 widened because the references reduce rows of up to 1e5
 *    values in another order than the kernels.
 */
#include "bench.h"
#include "numeric.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const struct kx_bench_tolerance tolerances[] = {
	{ "bf16", "loss", 1e-3, 2e-2, "bf16LogitRounding" },
	{ "bf16", "mean", 1e-5, 1e-5, NULL },
	{ "bf16", "output", 1.6e-2, 1e-2, NULL },
	{ "fp16", "output", 1e-3, 1e-3, NULL },
	{ "fp32", "loss", 1e-5, 1e-5, NULL },
	{ "fp32", "mean", 1e-5, 1e-5, NULL },
	{ "fp32", "output", 1e-5, 1e-5, NULL },
};

const struct kx_bench_tolerance *bench_tolerances(size_t *ret_n)
{
	*ret_n = KX_ARRAY_SIZE(tolerances);
	return tolerances;
}

static const struct kx_bench_tolerance *find(const char *dtype, const char *output)
{
	for (size_t i = 0; i < KX_ARRAY_SIZE(tolerances); i++)
		if (!strcmp(tolerances[i].dtype, dtype) && !strcmp(tolerances[i].output, output))
			return &tolerances[i];
	return NULL;
}

int bench_policy_for(const char *dtype, struct kx_bench_policy *ret)
{
	const struct kx_bench_tolerance *out = dtype ? find(dtype, "output") : NULL;
	if (!out)
		return -ENOENT;
	const struct kx_bench_tolerance *loss = find(dtype, "loss"), *mean = find(dtype, "mean");
	*ret = (struct kx_bench_policy){ .dtype = out->dtype, .output = out,
					 .loss = loss ? loss : out, .mean = mean ? mean : find("fp32", "mean") };
	return 0;
}

const char *bench_allowance_text(const char *allowance)
{
	if (allowance && !strcmp(allowance, "bf16LogitRounding"))
		return "half a bf16 ulp of the target logit plus the softmax-weighted half bf16 ulps of "
		       "all logits of the row, from the reference's fp32 logits: the first-order bound on "
		       "what rounding the logits to bf16 does to logsumexp(z) - z[target]";
	return NULL;
}

void bench_check_init(struct kx_bench_check *c, const char *dtype, const char *what)
{
	*c = (struct kx_bench_check){ .dtype = dtype, .what = what };
}

void bench_check_output(struct kx_bench_check *c, const struct kx_bench_tolerance *tol,
			const char *what)
{
	if (c->nout == KX_BENCH_MAX_OUTPUTS)
		c->nout--; /* a programming error: fold extra outputs into the last one */
	c->out[c->nout++] = (struct kx_bench_output_check){ .what = what, .tol = tol, .worst_share = -1 };
}

bool bench_compare(struct kx_bench_check *c, const float *got, const float *ref,
		   const float *allow, size_t n)
{
	if (c->nout == 0)
		return false;
	struct kx_bench_output_check *o = &c->out[c->nout - 1];
	for (size_t i = 0; i < n; i++) {
		double g = got[i], r = ref[i];
		if (!isfinite(g)) {
			if (o->nonfinite++ == 0)
				o->worst = o->checked + i;
			continue;
		}
		double err = fabs(g - r);
		double bound = o->tol->atol + o->tol->rtol * fabs(r) + (allow ? (double)allow[i] : 0);
		if (err > o->max_abs)
			o->max_abs = err;
		if (r != 0 && err / fabs(r) > o->max_rel)
			o->max_rel = err / fabs(r);
		if (!(err <= bound)) /* also catches a non-finite reference or allowance */
			o->violations++;
		double share = err / bound;
		if (!o->nonfinite && share > o->worst_share) {
			o->worst_share = share;
			o->worst = o->checked + i;
		}
	}
	o->checked += n;
	return o->violations == 0 && o->nonfinite == 0;
}

bool bench_check_finish(struct kx_bench_check *c)
{
	c->checked = c->violations = c->nonfinite = 0;
	c->max_abs = c->max_rel = 0;
	const struct kx_bench_output_check *bad = NULL, *empty = c->nout ? NULL : &c->out[0];
	for (size_t i = 0; i < c->nout; i++) {
		const struct kx_bench_output_check *o = &c->out[i];
		c->checked += o->checked;
		c->violations += o->violations;
		c->nonfinite += o->nonfinite;
		c->max_abs = fmax(c->max_abs, o->max_abs);
		c->max_rel = fmax(c->max_rel, o->max_rel);
		if (!bad && (o->violations || o->nonfinite))
			bad = o;
		if (!empty && o->checked == 0)
			empty = o;
	}
	c->passed = !bad && !empty;
	if (bad && bad->nonfinite)
		snprintf(c->message, sizeof(c->message),
			 "correctness failed: %zu of %zu values of the %s are not finite (first at %zu)",
			 bad->nonfinite, bad->checked, bad->what, bad->worst);
	else if (bad)
		snprintf(c->message, sizeof(c->message),
			 "correctness failed: %zu of %zu values of the %s outside %s %s tolerance "
			 "(rtol %g, atol %g%s); max abs error %.6g, worst at %zu",
			 bad->violations, bad->checked, bad->what, bad->tol->dtype, bad->tol->output,
			 bad->tol->rtol, bad->tol->atol,
			 bad->tol->allowance ? ", plus the bf16 rounding of the logits" : "",
			 bad->max_abs, bad->worst);
	else if (empty)
		snprintf(c->message, sizeof(c->message), "correctness check compared no values%s%s",
			 c->nout ? " of the " : "", c->nout ? empty->what : "");
	else
		c->message[0] = '\0';
	return c->passed;
}

void bench_pick_rows(int64_t *rows, int64_t s, int64_t m)
{
	for (int64_t i = 0; i < s; i++)
		rows[i] = s == m || s == 1 ? i : i * (m - 1) / (s - 1);
}

bool bench_check_losses(struct kx_bench_check *c, const struct kx_bench_policy *p,
			const float *loss, size_t m, float mean, const int64_t *rows,
			const float *ref, const float *allow, size_t s)
{
	bench_check_init(c, p->dtype, s == m ? "per-row loss (all rows) and mean loss"
						: "per-row loss (sampled rows) and mean loss");
	bench_check_output(c, p->loss, s == m ? "per-row loss (all rows)" : "per-row loss (sampled rows)");
	for (size_t i = 0; i < s; i++) {
		float got = loss[rows[i]];
		bench_compare(c, &got, &ref[i], allow ? &allow[i] : NULL, 1);
	}
	/* the implementation's mean against the fp64 mean of every per-row loss it produced */
	double sum = 0;
	for (size_t i = 0; i < m; i++)
		sum += loss[i];
	float want = m ? (float)(sum / (double)m) : NAN;
	bench_check_output(c, p->mean, "mean loss");
	if (m)
		bench_compare(c, &mean, &want, NULL, 1);
	return bench_check_finish(c);
}

bool bench_check_values(struct kx_bench_check *c, const struct kx_bench_policy *p,
			const char *what, const float *got, const float *ref, size_t n)
{
	bench_check_init(c, p->dtype, what);
	bench_check_output(c, p->output, what);
	bench_compare(c, got, ref, NULL, n);
	return bench_check_finish(c);
}

double bench_lse_allowance(const float *z, size_t n, int32_t t)
{
	double mx = -INFINITY, s = 0, a = 0;
	for (size_t j = 0; j < n; j++)
		mx = z[j] > mx ? z[j] : mx;
	for (size_t j = 0; j < n; j++) {
		double e = exp((double)z[j] - mx);
		s += e;
		a += e * kx_bf16_half_ulp(z[j]);
	}
	return kx_bf16_half_ulp(z[t]) + a / s;
}
