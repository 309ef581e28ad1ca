// SPDX-License-Identifier: MIT
/*
 * /index.tsv (docs/views.md "/index.tsv — every run, one row"): the header, with a column per
 * workload parameter name the tree knows, and one group's rows, each run in listing order with
 * the numbers and cells ranking.tsv writes (render_cells, render_rank_cells, both empty where a
 * value is not known or does not apply). The tree puts the groups together in the numeric order of
 * their names (src/tree/top.c). Pure: the same group and names give the same bytes.
 */
#include "private.h"

#include "kx/canon.h"
#include "kx/store.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kx_render_param_names(const struct kx_json *workload_doc, int (*fn)(void *ctx, const char *name), void *ctx)
{
	struct kx_arena *a = kx_arena_new();
	struct render_param *p;
	size_t n;
	int r = a ? render_params(a, workload_doc, &p, &n) : -ENOMEM;
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = fn(ctx, p[i].name);
	kx_arena_free(a);
	return r < 0 ? r : 0;
}

/* The cells ranking.tsv and /index.tsv share for run i of g (docs/views.md "One vocabulary"):
 * rank, vs_best and within_noise, empty where they do not apply; display, empty without a value. */
/* Measured runs by implementation, the newest of each first. */
static int rerun_cmp(const void *a, const void *b, void *ctx)
{
	const struct kx_run_rec *runs = ctx, *x = &runs[*(const int32_t *)a], *y = &runs[*(const int32_t *)b];
	int c = strcmp(x->impl, y->impl);
	if (c || x == y)
		return c;
	return kx_run_newer(x->observed_ns, &x->run, y->observed_ns, &y->run) ? -1 : 1;
}

int kx_render_reruns(const struct kx_run_rec *runs, size_t n, int32_t *out)
{
	size_t m = 0;
	for (size_t j = 0; j < n; j++) {
		const struct kx_run_rec *y = &runs[j];
		out[j] = -1;
		m += y->evidence == KX_EVIDENCE_MEASURED && y->has_value && y->passed;
	}
	if (!m)
		return 0;
	int32_t *c = malloc(m * sizeof(*c));
	if (!c)
		return -ENOMEM;
	m = 0;
	for (size_t j = 0; j < n; j++)
		if (runs[j].evidence == KX_EVIDENCE_MEASURED && runs[j].has_value && runs[j].passed)
			c[m++] = (int32_t)j;
	qsort_r(c, m, sizeof(*c), rerun_cmp, (void *)runs);
	size_t k = 0; /* the newest of each implementation */
	for (size_t j = 0; j < m; j++)
		if (!k || strcmp(runs[c[k - 1]].impl, runs[c[j]].impl) != 0)
			c[k++] = c[j];
	for (size_t i = 0; i < n; i++) {
		const struct kx_run_rec *x = &runs[i];
		if (x->evidence == KX_EVIDENCE_MEASURED || !x->has_value)
			continue;
		size_t lo = 0, hi = k;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			int d = strcmp(runs[c[mid]].impl, x->impl);
			if (d == 0) {
				out[i] = c[mid];
				break;
			}
			if (d < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	free(c);
	return 0;
}

void render_rank_cells(const struct kx_group_view *g, size_t i, struct render_rank_cells *c)
{
	const struct kx_run_rec *x = &g->runs[i];
	c->rank[0] = c->vs_best[0] = c->display[0] = c->rerun[0] = c->rerun_ratio[0] = '\0';
	c->within_noise = c->rerun_within_noise = "";
	c->rerun_q = NAN;
	int32_t j = g->reruns ? g->reruns[i] : -1;
	if (j >= 0) {
		const struct kx_run_rec *y = &g->runs[j];
		char hex[KX_DIGEST_HEX + 1];
		kx_digest_hex(&y->run, hex);
		snprintf(c->rerun, sizeof(c->rerun), "%.*s", KX_SHORTID_LEN, hex);
		c->rerun_q = x->base_value != 0 ? y->base_value / x->base_value : NAN;
		render_ratio(c->rerun_q, c->rerun_ratio);
		c->rerun_within_noise = kx_rank_within_noise(x, y) ? "yes" : "no";
	}
	if (i < g->ranked) {
		snprintf(c->rank, sizeof(c->rank), "%zu", i + 1);
		render_ratio(render_vs_best(x, &g->runs[0]), c->vs_best);
		if (i > 0)
			c->within_noise = kx_rank_within_noise(x, &g->runs[i - 1]) ? "yes" : "no";
	}
	if (x->has_value)
		kx_render_value(x->value, x->unit, c->display, sizeof(c->display));
}

int kx_render_index_header(const char *const *names, size_t n, struct kx_buf *out)
{
	int r = kx_buf_puts(out, "kernel\tpass\tmetric\tgpu\tworkload");
	for (size_t i = 0; i < n && r >= 0; i++)
		if ((r = kx_buf_puts(out, "\tp.")) >= 0)
			r = render_tsv_text(out, names[i]);
	if (r >= 0)
		r = kx_buf_puts(out, "\timplementation\tversion\tstatus\trank\tcurrent\tmedian\tp20\tp80\tunit\tevidence"
				     "\tobserved_at\tshortid\tpath\twithin_noise\tvs_best\tdisplay\trerun\trerun_ratio"
				     "\trerun_within_noise\n");
	return r < 0 ? r : 0;
}

/* The parameter cells of a workload whose parameters are p[0..np), in name order, for the
 * columns names[0..n), in name order too: one merge. */
static int param_cells(const struct render_param *p, size_t np, const char *const *names, size_t n,
		       struct kx_buf *out)
{
	int r = 0;
	for (size_t i = 0, k = 0; i < n && r >= 0; i++) {
		while (k < np && strcmp(p[k].name, names[i]) < 0)
			k++;
		r = kx_buf_putc(out, '\t'); /* empty where this workload lacks the parameter */
		if (r >= 0 && k < np && strcmp(p[k].name, names[i]) == 0)
			r = render_tsv_text(out, p[k].text);
	}
	return r;
}

int kx_render_index_rows(const struct kx_group_view *g, const char *const *names, size_t n, struct kx_buf *out)
{
	struct kx_arena *a = kx_arena_new();
	struct kx_buf cells = { 0 };
	struct render_param *p = NULL;
	size_t np = 0;
	int r = a ? render_params(a, g->workload_doc, &p, &np) : -ENOMEM;
	/* what every row of the group starts with: the group and its parameters */
	const struct kx_group_rec *gr = g->group;
	const char *group[] = { gr->kernel, gr->pass, gr->metric, gr->gpu, g->workload_dir };
	for (size_t i = 0; i < KX_ARRAY_SIZE(group) && r >= 0; i++)
		if ((r = i ? kx_buf_putc(&cells, '\t') : 0) >= 0)
			r = render_tsv_text(&cells, group[i]);
	if (r >= 0)
		r = param_cells(p, np, names, n, &cells);
	for (size_t i = 0; i < g->len && r >= 0; i++) {
		const struct kx_run_rec *x = &g->runs[i];
		uint32_t rank = i < g->ranked ? (uint32_t)i + 1 : 0;
		struct render_cells c;
		struct render_rank_cells rc;
		char shortid[KX_SHORTID_LEN + 1];
		render_cells(x, &c);
		render_rank_cells(g, i, &rc);
		kx_hex(x->run.b, KX_SHORTID_LEN / 2, shortid);
		if ((r = kx_buf_append(out, cells.ptr, cells.len)) >= 0 && (r = kx_buf_putc(out, '\t')) >= 0)
			r = render_tsv_text(out, x->impl);
		if (r >= 0)
			r = kx_buf_printf(out, "\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s/%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
					  c.version, kx_rank_status(x, rank), rc.rank, rank ? "yes" : "no", c.value, c.p20,
					  c.p80, c.unit, kx_evidence_name((enum kx_evidence)x->evidence), c.when, shortid,
					  g->path, g->dirnames[i], rc.within_noise, rc.vs_best, rc.display, rc.rerun,
					  rc.rerun_ratio, rc.rerun_within_noise);
	}
	kx_buf_release(&cells);
	kx_arena_free(a);
	return r < 0 ? r : 0;
}
