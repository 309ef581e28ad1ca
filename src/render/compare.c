// SPDX-License-Identifier: MIT
/*
 * The bytes of /compare/<candidate>..<baseline>/<gpu>.tsv and summary.tsv (docs/views.md): a
 * candidate's current runs against a baseline's, group by group, and per kernel/pass/gpu their
 * geometric-mean speedup and how many groups each was better in. The rules of the view (what a
 * speedup is, when a difference is noise) are here; which groups make the rows is the caller's.
 */
#include "private.h"

#include <math.h>
#include <string.h>

bool kx_compare_speedup(const struct kx_compare_run *cand, const struct kx_compare_run *base, double *ret)
{
	/* above 1 means the candidate is better, whichever way the metric is better */
	bool lower = cand->order != KX_ORDER_DESCENDING;
	double num = lower ? base->base_value : cand->base_value, den = lower ? cand->base_value : base->base_value;
	if (!(num > 0 && den > 0) || !isfinite(num / den))
		return false;
	*ret = num / den;
	return true;
}

/* The p20–p80 intervals overlap (SPEC §2, within noise); never when either is unknown. */
static bool overlap(const struct kx_compare_run *a, const struct kx_compare_run *b)
{
	return a->has_spread && b->has_spread && a->base_p20 <= b->base_p80 && b->base_p20 <= a->base_p80;
}

const char *kx_compare_result(const struct kx_compare_run *cand, const struct kx_compare_run *base)
{
	double s;
	if (overlap(cand, base))
		return "noise";
	if (!kx_compare_speedup(cand, base, &s))
		return "-";
	return s > 1 ? "win" : s < 1 ? "loss" : "tie";
}

static void number(double v, char out[KX_JCS_NUMBER_MAX])
{
	if (!kx_jcs_number(v, out))
		strcpy(out, "-");
}

/* The baseline's median in the candidate's unit (the two are of one metric: one group). */
static double base_in_cand_unit(const struct kx_compare_run *cand, const struct kx_compare_run *base)
{
	double factor;
	if (strcmp(cand->unit, base->unit) == 0 || !kx_unit_metric(cand->unit, &factor))
		return base->value;
	return base->base_value / factor;
}

int kx_render_compare_gpu(const struct kx_compare_row *rows, size_t n, struct kx_buf *out)
{
	int r = kx_buf_puts(out, "kernel\tpass\tworkload\tcandidate\tbaseline\tunit\tspeedup\tresult\n");
	for (size_t i = 0; i < n && r >= 0; i++) {
		const struct kx_compare_row *x = &rows[i];
		char kernel[KX_NAME_MAX], pass[KX_NAME_MAX], workload[KX_NAME_MAX + 16], unit[16];
		char c[KX_JCS_NUMBER_MAX], b[KX_JCS_NUMBER_MAX], s[KX_JCS_NUMBER_MAX] = "-";
		double speedup;
		render_field(x->kernel, kernel, sizeof(kernel));
		render_field(x->pass, pass, sizeof(pass));
		render_field(x->workload, workload, sizeof(workload));
		render_field(x->cand->unit, unit, sizeof(unit));
		number(x->cand->value, c);
		number(base_in_cand_unit(x->cand, x->base), b);
		if (kx_compare_speedup(x->cand, x->base, &speedup))
			number(speedup, s);
		r = kx_buf_printf(out, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", kernel, pass, workload, c, b, unit, s,
				  kx_compare_result(x->cand, x->base));
	}
	return r < 0 ? r : 0;
}

static bool same_place(const struct kx_compare_row *a, const struct kx_compare_row *b)
{
	return strcmp(a->kernel, b->kernel) == 0 && strcmp(a->pass, b->pass) == 0 && strcmp(a->gpu, b->gpu) == 0;
}

void kx_compare_totals_add(struct kx_compare_totals *t, const struct kx_compare_run *cand,
			   const struct kx_compare_run *base)
{
	/* the geometric mean is over the groups where a speedup is known */
	double s;
	if (kx_compare_speedup(cand, base, &s)) {
		t->logs += log(s);
		t->known++;
	}
	const char *res = kx_compare_result(cand, base);
	t->groups++;
	t->wins += strcmp(res, "win") == 0;
	t->losses += strcmp(res, "loss") == 0;
	t->noise += strcmp(res, "noise") == 0;
	t->ties += strcmp(res, "tie") == 0;
}

void render_compare_geomean(const struct kx_compare_totals *t, char out[KX_JCS_NUMBER_MAX])
{
	if (t->known)
		number(exp(t->logs / (double)t->known), out);
	else
		strcpy(out, "-");
}

size_t render_compare_place(const struct kx_compare_row *rows, size_t i, size_t n, struct kx_compare_totals *ret)
{
	size_t j = i;
	*ret = (struct kx_compare_totals){ 0 };
	for (; j < n && same_place(&rows[i], &rows[j]); j++)
		kx_compare_totals_add(ret, rows[j].cand, rows[j].base);
	return j;
}

int kx_render_compare_summary(const struct kx_compare_row *rows, size_t n, struct kx_buf *out)
{
	int r = kx_buf_puts(out, "kernel\tpass\tgpu\tgroups\tgeomean_speedup\twins\tlosses\tnoise\tties\n");
	for (size_t i = 0, j; i < n && r >= 0; i = j) {
		struct kx_compare_totals t;
		j = render_compare_place(rows, i, n, &t);
		char kernel[KX_NAME_MAX], pass[KX_NAME_MAX], gpu[KX_NAME_MAX], geo[KX_JCS_NUMBER_MAX];
		render_field(rows[i].kernel, kernel, sizeof(kernel));
		render_field(rows[i].pass, pass, sizeof(pass));
		render_field(rows[i].gpu, gpu, sizeof(gpu));
		render_compare_geomean(&t, geo);
		r = kx_buf_printf(out, "%s\t%s\t%s\t%zu\t%s\t%zu\t%zu\t%zu\t%zu\n", kernel, pass, gpu, t.groups, geo,
				  t.wins, t.losses, t.noise, t.ties);
	}
	return r < 0 ? r : 0;
}
