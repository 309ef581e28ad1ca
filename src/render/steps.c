// SPDX-License-Identifier: MIT
/*
 * Steps (SPEC §6, docs/views.md "changes.tsv — steps"): a group's changes.tsv and the rows of
 * /changes.tsv. A step is two consecutive runs of a series (history.c's render_each_series: an
 * implementation's passed runs in a group, in time order), the earlier one `before`, the later
 * one `after`: their medians, the relative change, whether it is a regression or an improvement
 * for the metric's order, whether their p20–p80 intervals are apart, and each side's version,
 * observedAt and short id — the moves of series too short for a change point. Pure: the same
 * group gives the same bytes.
 */
#include "private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char header[] = "kernel\tpass\tmetric\tgpu\tworkload\timplementation\tbefore_median\tafter_median\tunit"
			     "\tchange_pct\tmove\tseparated\tbefore_version\tafter_version\tbefore_observed_at"
			     "\tafter_observed_at\tbefore_p20\tbefore_p80\tafter_p20\tafter_p80\tbefore_shortid"
			     "\tafter_shortid\tgroup\n";

int kx_render_changes_header(struct kx_buf *out)
{
	return kx_buf_puts(out, header) < 0 ? -ENOMEM : 0;
}

/* A base-unit value in run x's unit as a JCS number; empty where it has none */
static void cell_in_unit(const struct kx_run_rec *x, double base, char out[KX_JCS_NUMBER_MAX])
{
	double v;
	out[0] = '\0';
	if (render_in_unit(x, base, &v) && !kx_jcs_number(v, out))
		out[0] = '\0';
}

/*
 * The cells of run b (the earlier run of a step) in the unit of run a (the later one): b's own
 * cells where the units are the same (the numbers as published), else b's base-unit values
 * converted into a's unit.
 */
static void cells_in_unit_of(const struct kx_run_rec *b, const struct kx_run_rec *a, struct render_cells *c)
{
	render_cells(b, c);
	if (strcmp(a->unit, b->unit) == 0)
		return;
	cell_in_unit(a, b->base_value, c->value);
	c->p20[0] = c->p80[0] = '\0';
	if (b->has_spread) {
		cell_in_unit(a, b->base_p20, c->p20);
		cell_in_unit(a, b->base_p80, c->p80);
	}
	c->unit = a->unit;
}

/* The short id of a run: its digest's first KX_SHORTID_LEN hex digits */
static void shortid(const struct kx_run_rec *x, char out[KX_DIGEST_HEX + 1])
{
	kx_digest_hex(&x->run, out);
	out[KX_SHORTID_LEN] = '\0';
}

/* Whether the later run a is worse than the earlier b, better, or neither, for the metric's order */
static const char *move_of(const struct kx_group_view *g, const struct kx_run_rec *b, const struct kx_run_rec *a)
{
	if (a->base_value == b->base_value)
		return "";
	bool up = a->base_value > b->base_value;
	bool worse = g->group->order == KX_ORDER_DESCENDING ? !up : up;
	return worse ? "regression" : "improvement";
}

/* yes when the two p20–p80 intervals do not overlap, no when they do, empty when one is not known */
static const char *separated(const struct kx_run_rec *b, const struct kx_run_rec *a)
{
	if (!a->has_spread || !b->has_spread)
		return "";
	return b->base_p80 < a->base_p20 || a->base_p80 < b->base_p20 ? "yes" : "no";
}

static int step_row(struct kx_buf *out, const struct kx_group_view *g, const char *impl, const struct kx_run_rec *b,
		    const struct kx_run_rec *a)
{
	struct render_cells cb, ca;
	char change[KX_JCS_NUMBER_MAX], sb[KX_DIGEST_HEX + 1], sa[KX_DIGEST_HEX + 1];
	render_cells(a, &ca);
	cells_in_unit_of(b, a, &cb);
	/* the change in percent of the earlier median; a step from 0 is infinite, one from 0 to 0 none */
	double pct = b->base_value != 0 ? (a->base_value / b->base_value - 1) * 100
		     : a->base_value == 0 ? 0
		     : a->base_value > 0 ? INFINITY : -INFINITY;
	render_ratio(pct, change);
	shortid(b, sb);
	shortid(a, sa);
	int r = 0;
	const char *names[] = { g->group->kernel, g->group->pass, g->group->metric, g->group->gpu, g->workload_dir, impl };
	for (size_t i = 0; i < KX_ARRAY_SIZE(names) && r >= 0; i++)
		if ((r = render_tsv_text(out, names[i])) >= 0)
			r = kx_buf_putc(out, '\t');
	if (r >= 0)
		r = kx_buf_printf(out, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t", cb.value, ca.value,
				  ca.unit, change, move_of(g, b, a), separated(b, a), cb.version, ca.version, cb.when,
				  ca.when, cb.p20, cb.p80, ca.p20, ca.p80, sb, sa);
	if (r >= 0 && (r = render_tsv_text(out, g->path)) >= 0)
		r = kx_buf_putc(out, '\n');
	return r < 0 ? -ENOMEM : 0;
}

/* The rows of a group's series, each series' at [off, off + len) of text, for ordering them */
struct series_rows {
	const char *impl; /* valid while the group view is */
	size_t off, len;
};

struct group_steps {
	struct kx_buf text;
	struct series_rows *v;
	size_t n, cap;
};

static int series_steps(void *ctx, const struct render_series *s)
{
	struct group_steps *x = ctx;
	if (s->n < 2)
		return 0;
	if (KX_GROW(x->v, x->cap, x->n, 8) < 0)
		return -ENOMEM;
	/* s->impl is the name in one of the group's run records, which outlive the walk */
	struct series_rows e = { .impl = s->g->runs[s->runs[0]].impl, .off = x->text.len };
	int r = 0;
	for (size_t i = 1; i < s->n && r >= 0; i++)
		r = step_row(&x->text, s->g, s->impl, &s->g->runs[s->runs[i - 1]], &s->g->runs[s->runs[i]]);
	e.len = x->text.len - e.off;
	x->v[x->n++] = e;
	return r;
}

static int series_rows_cmp(const void *a, const void *b)
{
	return kx_name_cmp(((const struct series_rows *)a)->impl, ((const struct series_rows *)b)->impl);
}

int kx_render_group_changes(const struct kx_group_view *g, struct kx_buf *out)
{
	struct group_steps x = { 0 };
	int r = render_each_series(g, series_steps, &x);
	/* implementations in numeric order of their names (kx_name_cmp), whatever order the walk took */
	if (r >= 0 && x.n > 1)
		qsort(x.v, x.n, sizeof(*x.v), series_rows_cmp);
	for (size_t i = 0; i < x.n && r >= 0; i++)
		r = kx_buf_append(out, x.text.ptr + x.v[i].off, x.v[i].len) < 0 ? -ENOMEM : 0;
	kx_buf_release(&x.text);
	free(x.v);
	return r < 0 ? r : 0;
}

int render_changes_tsv(const struct kx_group_view *g, struct kx_buf *out)
{
	int r = kx_render_changes_header(out);
	return r < 0 ? r : kx_render_group_changes(g, out);
}
