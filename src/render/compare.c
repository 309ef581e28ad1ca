// SPDX-License-Identifier: MIT
/*
 * The bytes of /compare/<candidate>..<baseline>/<gpu>.tsv and summary.tsv (docs/views.md): a
 * candidate's current runs against a baseline's, group by group, with each side's version and
 * date and whether they are mixed, and per gpu and metric and per kernel/pass/gpu their
 * geometric-mean ratio and how many groups each was better in. The rules of the view (what a
 * ratio is, when a difference is noise, when two runs are mixed) are here; which groups make the
 * rows is the caller's. Pure: the same rows give the same bytes in whatever order they come.
 */
#include "private.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool kx_compare_ratio(const struct kx_compare_run *cand, const struct kx_compare_run *base, double *ret)
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
	if (!kx_compare_ratio(cand, base, &s))
		return "";
	return s > 1 ? "win" : s < 1 ? "loss" : "tie";
}

bool kx_mixed_span(int64_t oldest_ns, int64_t newest_ns, bool versions_differ)
{
	/* (the span as an unsigned difference: dates of any sign, no overflow) */
	return versions_differ || (newest_ns > oldest_ns && (uint64_t)newest_ns - (uint64_t)oldest_ns > (uint64_t)KX_MIXED_NS);
}

bool kx_compare_mixed(const struct kx_compare_run *cand, const struct kx_compare_run *base)
{
	int64_t a = cand->observed_ns, b = base->observed_ns;
	return kx_mixed_span(a < b ? a : b, a < b ? b : a, false);
}

static void number(double v, char out[KX_JCS_NUMBER_MAX])
{
	if (!kx_jcs_number(v, out))
		out[0] = '\0';
}

/* The baseline's median in the candidate's unit (the two are of one metric: one group). */
static double base_in_cand_unit(const struct kx_compare_run *cand, const struct kx_compare_run *base)
{
	double factor;
	if (strcmp(cand->unit, base->unit) == 0 || !kx_unit_metric(cand->unit, &factor))
		return base->value;
	return base->base_value / factor;
}

static int row_gpu_cmp(const void *x, const void *y)
{
	const struct kx_compare_row *a = x, *b = y;
	int c = kx_name_cmp(a->kernel, b->kernel);
	if (!c)
		c = kx_name_cmp(a->pass, b->pass);
	return c ? c : kx_name_cmp(a->workload, b->workload);
}

static int row_place_cmp(const void *x, const void *y)
{
	const struct kx_compare_row *a = x, *b = y;
	int c = kx_name_cmp(a->kernel, b->kernel);
	if (!c)
		c = kx_name_cmp(a->pass, b->pass);
	if (!c)
		c = kx_name_cmp(a->gpu, b->gpu);
	return c ? c : kx_name_cmp(a->workload, b->workload);
}

/* A copy of rows[0..n) sorted by cmp (the caller frees it), or NULL. */
static struct kx_compare_row *sorted(const struct kx_compare_row *rows, size_t n, int (*cmp)(const void *, const void *))
{
	struct kx_compare_row *s = malloc((n ? n : 1) * sizeof(*s));
	if (s && n) {
		memcpy(s, rows, n * sizeof(*s));
		qsort(s, n, sizeof(*s), cmp);
	}
	return s;
}

/* A text field of a row (names, versions): TSV-safe, empty for NULL. */
static int text_cell(struct kx_buf *out, const char *s)
{
	int r = kx_buf_putc(out, '\t');
	return r < 0 ? r : render_tsv_text(out, s ? s : "");
}

int kx_render_compare_gpu(const struct kx_compare_row *rows, size_t n, struct kx_buf *out)
{
	struct kx_compare_row *s = sorted(rows, n, row_gpu_cmp);
	int r = s ? kx_buf_puts(out, "kernel\tpass\tmetric\tworkload\tunit\tcandidate_median\tbaseline_median\tratio"
				     "\tresult\tmixed\tcandidate_version\tbaseline_version\tcandidate_observed_at"
				     "\tbaseline_observed_at\n")
		  : -ENOMEM;
	for (size_t i = 0; i < n && r >= 0; i++) {
		const struct kx_compare_row *x = &s[i];
		char c[KX_JCS_NUMBER_MAX], b[KX_JCS_NUMBER_MAX], ratio[KX_JCS_NUMBER_MAX] = "", cw[40], bw[40];
		double v;
		number(x->cand->value, c);
		number(base_in_cand_unit(x->cand, x->base), b);
		if (kx_compare_ratio(x->cand, x->base, &v))
			render_ratio(v, ratio);
		kx_time_format(x->cand->observed_ns, cw);
		kx_time_format(x->base->observed_ns, bw);
		if ((r = render_tsv_text(out, x->kernel)) >= 0 && (r = text_cell(out, x->pass)) >= 0 &&
		    (r = text_cell(out, x->metric)) >= 0 && (r = text_cell(out, x->workload)) >= 0 &&
		    (r = text_cell(out, x->cand->unit)) >= 0)
			r = kx_buf_printf(out, "\t%s\t%s\t%s\t%s\t%s", c, b, ratio, kx_compare_result(x->cand, x->base),
					  kx_compare_mixed(x->cand, x->base) ? "yes" : "no");
		if (r >= 0 && (r = text_cell(out, x->cand->version)) >= 0 && (r = text_cell(out, x->base->version)) >= 0)
			r = kx_buf_printf(out, "\t%s\t%s\n", cw, bw);
	}
	free(s);
	return r < 0 ? r : 0;
}

void kx_compare_totals_add(struct kx_compare_totals *t, const struct kx_compare_run *cand,
			   const struct kx_compare_run *base)
{
	/* the geometric mean is over the groups where a ratio is known */
	double s;
	if (kx_compare_ratio(cand, base, &s)) {
		t->logs += log(s);
		t->known++;
	}
	const char *res = kx_compare_result(cand, base);
	t->groups++;
	t->wins += strcmp(res, "win") == 0;
	t->losses += strcmp(res, "loss") == 0;
	t->noise += strcmp(res, "noise") == 0;
	t->ties += strcmp(res, "tie") == 0;
	t->mixed += kx_compare_mixed(cand, base);
}

void render_compare_geomean(const struct kx_compare_totals *t, char out[KX_JCS_NUMBER_MAX])
{
	if (t->known)
		render_ratio(exp(t->logs / (double)t->known), out);
	else
		out[0] = '\0';
}

static int line_total_cmp(const void *x, const void *y)
{
	const struct render_compare_line *a = x, *b = y;
	int c = kx_name_cmp(a->gpu, b->gpu);
	return c ? c : kx_name_cmp(a->metric, b->metric);
}

int render_compare_lines(const struct kx_compare_row *rows, size_t n, struct render_compare_line **ret, size_t *ret_n)
{
	struct kx_compare_row *s = sorted(rows, n, row_place_cmp);
	struct render_compare_line *l = calloc(2 * n + 1, sizeof(*l));
	size_t nt = 0, nl = 0;
	*ret = NULL;
	*ret_n = 0;
	if (!s || !l) {
		free(s);
		free(l);
		return -ENOMEM;
	}
	/* the totals of each gpu and metric first (l[0..nt)), then a line per kernel, pass and gpu */
	for (size_t i = 0; i < n; i++) {
		const struct kx_compare_row *x = &s[i];
		size_t t = 0;
		while (t < nt && !(strcmp(l[t].gpu, x->gpu) == 0 && strcmp(l[t].metric, x->metric ? x->metric : "") == 0))
			t++;
		if (t == nt)
			l[nt++] = (struct render_compare_line){ .kernel = "", .pass = "", .gpu = x->gpu,
								.metric = x->metric ? x->metric : "" };
		kx_compare_totals_add(&l[t].t, x->cand, x->base);
	}
	qsort(l, nt, sizeof(*l), line_total_cmp);
	nl = nt;
	for (size_t i = 0; i < n; i++) {
		const struct kx_compare_row *x = &s[i];
		struct render_compare_line *p = nl > nt ? &l[nl - 1] : NULL;
		if (!p || strcmp(p->kernel, x->kernel) != 0 || strcmp(p->pass, x->pass) != 0 || strcmp(p->gpu, x->gpu) != 0) {
			p = &l[nl++];
			*p = (struct render_compare_line){ .kernel = x->kernel, .pass = x->pass, .gpu = x->gpu,
							   .metric = x->metric ? x->metric : "" };
		}
		kx_compare_totals_add(&p->t, x->cand, x->base);
	}
	free(s);
	*ret = l;
	*ret_n = nl;
	return 0;
}

int kx_render_compare_summary(const struct kx_compare_row *rows, size_t n, struct kx_buf *out)
{
	struct render_compare_line *l;
	size_t nl;
	int r = render_compare_lines(rows, n, &l, &nl);
	if (r >= 0)
		r = kx_buf_puts(out, "kernel\tpass\tmetric\tgpu\tgroups\tgeomean_ratio\twins\tlosses\tnoise\tties"
				     "\tmixed_groups\n");
	for (size_t i = 0; i < nl && r >= 0; i++) {
		char geo[KX_JCS_NUMBER_MAX];
		const struct kx_compare_totals *t = &l[i].t;
		render_compare_geomean(t, geo);
		if ((r = render_tsv_text(out, l[i].kernel)) >= 0 && (r = text_cell(out, l[i].pass)) >= 0 &&
		    (r = text_cell(out, l[i].metric)) >= 0 && (r = text_cell(out, l[i].gpu)) >= 0)
			r = kx_buf_printf(out, "\t%zu\t%s\t%zu\t%zu\t%zu\t%zu\t%zu\n", t->groups, geo, t->wins, t->losses,
					  t->noise, t->ties, t->mixed);
	}
	free(l);
	return r < 0 ? r : 0;
}
