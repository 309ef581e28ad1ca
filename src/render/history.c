// SPDX-License-Identifier: MIT
/*
 * The history of a group (SPEC §6, docs/history.md, docs/views.md): history.tsv and history.json,
 * every passed run of each implementation in time order — its series — with the change points of
 * that series found by the rule of src/history (kx_changepoints, on the medians in the metric's
 * base unit), the rule and its parameters at history.json's top (docs/history.md states them
 * for history.tsv, which is a header and rows only); and the rows of /regressions.tsv and
 * /regressions.json, each series' open change point. Pure: the same group gives the same bytes.
 */
#include "private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* implementations in name order (kx_name_cmp), each in time order: observedAt, then the digest
 * (as the tree picks the newest) */
static int series_cmp(const void *x, const void *y, void *arg)
{
	const struct kx_run_rec *runs = arg, *a = &runs[*(const uint32_t *)x], *b = &runs[*(const uint32_t *)y];
	int c = kx_name_cmp(a->impl, b->impl);
	if (c)
		return c;
	if (a->observed_ns != b->observed_ns)
		return a->observed_ns < b->observed_ns ? -1 : 1;
	return memcmp(a->run.b, b->run.b, sizeof(a->run.b));
}

static int double_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/*
 * The observations of series runs[s[0..n)], in time order: runs with equal observedAt have no order
 * between them (SPEC §2), so they are one observation, valued at the median of their values. x[m]
 * is observation m's value, first[m] the index in s of its first run; the count is returned.
 */
static size_t observations(const struct kx_run_rec *runs, const uint32_t *s, size_t n, double *x, size_t *first)
{
	size_t m = 0;
	for (size_t k = 0, e; k < n; k = e) {
		for (e = k + 1; e < n && runs[s[e]].observed_ns == runs[s[k]].observed_ns; e++)
			;
		for (size_t q = k; q < e; q++)
			x[m + q - k] = runs[s[q]].base_value;
		if (e - k > 1)
			qsort(x + m, e - k, sizeof(*x), double_cmp);
		size_t c = e - k;
		x[m] = c % 2 ? x[m + c / 2] : (x[m + c / 2 - 1] + x[m + c / 2]) / 2;
		first[m++] = k;
	}
	return m;
}

int render_each_series(const struct kx_group_view *g, int (*fn)(void *ctx, const struct render_series *s),
		       void *ctx)
{
	size_t cap = g->len ? g->len : 1;
	uint32_t *s = malloc(cap * sizeof(*s));
	double *x = malloc(cap * sizeof(*x));
	size_t *first = malloc(cap * sizeof(*first));
	struct kx_change *cp = malloc((cap / 4 + 1) * sizeof(*cp));
	size_t n = 0;
	int r = !s || !x || !first || !cp ? -ENOMEM : 0;
	for (size_t i = 0; i < g->len && r >= 0; i++)
		if (g->runs[i].passed && g->runs[i].has_value)
			s[n++] = (uint32_t)i;
	if (r >= 0 && n)
		qsort_r(s, n, sizeof(*s), series_cmp, (void *)g->runs);
	for (size_t i = 0, j; i < n && r >= 0; i = j) {
		for (j = i + 1; j < n && strcmp(g->runs[s[j]].impl, g->runs[s[i]].impl) == 0; j++)
			;
		size_t m = observations(g->runs, s + i, j - i, x, first), ncp = 0;
		r = kx_changepoints(x, m, (enum kx_order)g->group->order, cp, m / 4 + 1, &ncp);
		for (size_t c = 0; r >= 0 && c < ncp; c++)
			cp[c].at = first[cp[c].at]; /* from observations to the series' runs */
		if (r >= 0) {
			struct render_series rs = { .g = g, .impl = g->runs[s[i]].impl, .runs = s + i, .n = j - i,
						    .cp = cp, .ncp = ncp };
			r = fn(ctx, &rs);
		}
	}
	free(cp);
	free(first);
	free(x);
	free(s);
	return r < 0 ? r : 0;
}

/* a base-unit value in run x's unit (as it is where the unit is not known) */
static double in_unit(const struct kx_run_rec *x, double base)
{
	double v = base;
	render_in_unit(x, base, &v);
	return v;
}

/* A change point's cells as the TSV files write them: its move, the change in percent and the
 * p-value (4 significant digits), and the medians before and after in the unit of run x (the
 * first of the new segment), JCS; all empty on a row without one. */
struct change_cells {
	const char *move;
	char change_pct[KX_JCS_NUMBER_MAX], p[KX_JCS_NUMBER_MAX], before[KX_JCS_NUMBER_MAX], after[KX_JCS_NUMBER_MAX];
};

static int change_cells(const struct kx_run_rec *x, const struct kx_change *cp, struct change_cells *c)
{
	if (!isfinite(cp->change) || !isfinite(cp->p) || !kx_jcs_number(in_unit(x, cp->before), c->before) ||
	    !kx_jcs_number(in_unit(x, cp->after), c->after))
		return -EINVAL;
	render_ratio(100 * cp->change, c->change_pct);
	render_ratio(cp->p, c->p);
	c->move = cp->worse ? "regression" : "improvement";
	return 0;
}

/* A change point's keys in history.json and regressions.json, the cells change_cells writes at
 * full precision: move, change_pct, p, and the medians before and after in the unit of run x. */
static void change_json(struct kx_arena *a, struct kx_json *o, const struct kx_run_rec *x, const struct kx_change *cp)
{
	kx_json_set_string(a, o, "move", cp->worse ? "regression" : "improvement");
	kx_json_set_number(a, o, "change_pct", 100 * cp->change);
	kx_json_set_number(a, o, "p", cp->p);
	kx_json_set_number(a, o, "before", in_unit(x, cp->before));
	kx_json_set_number(a, o, "after", in_unit(x, cp->after));
	kx_json_set_string(a, o, "unit", x->unit);
}

/* The rule and its parameters, as history.json and regressions.json give them: "rule", its text
 * a string per line (kx_changepoint_rule, docs/history.md), and "parameters". */
static int rule_json(struct kx_arena *a, struct kx_json *root)
{
	struct kx_buf rule = { 0 };
	struct kx_json *lines = kx_json_new(a, KX_JSON_ARRAY), *p = kx_json_new(a, KX_JSON_OBJECT);
	int r = lines && p ? kx_changepoint_rule(&rule) : -ENOMEM;
	for (const char *l = rule.ptr, *e; r >= 0 && l && *l && (e = strchr(l, '\n')); l = e + 1) {
		struct kx_json *line = kx_json_new_stringn(a, l, (size_t)(e - l));
		if (!line)
			r = -ENOMEM;
		else
			kx_json_append(a, lines, line);
	}
	kx_buf_release(&rule);
	if (r < 0)
		return r;
	kx_json_set(a, root, "rule", lines);
	kx_json_set_number(a, p, "confirm", KX_CP_CONFIRM);
	kx_json_set_number(a, p, "window", KX_CP_WINDOW);
	kx_json_set_number(a, p, "alpha", KX_CP_ALPHA);
	kx_json_set_number(a, p, "min_move", KX_CP_MIN_MOVE);
	kx_json_set_number(a, p, "min_before", KX_CP_MIN_BEFORE);
	kx_json_set(a, root, "parameters", p);
	return 0;
}

/* ---- history.tsv ------------------------------------------------------------------------------ */

static int series_rows(void *ctx, const struct render_series *s)
{
	struct kx_buf *out = ctx;
	const struct kx_group_view *g = s->g;
	size_t segment = 1, next = 0;
	int r = 0;
	for (size_t i = 0; i < s->n && r >= 0; i++) {
		const struct kx_run_rec *run = &g->runs[s->runs[i]];
		struct render_cells c;
		struct change_cells cc = { .move = "" };
		render_cells(run, &c);
		if (next < s->ncp && s->cp[next].at == i) {
			segment++;
			if ((r = change_cells(run, &s->cp[next++], &cc)) < 0)
				return r;
		}
		/* status as ranking.tsv says it: the ranked prefix holds each implementation's current run */
		uint32_t rank = s->runs[i] < g->ranked ? s->runs[i] + 1 : 0;
		r = kx_buf_printf(out, "%s\t%zu\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%zu\t%s\t%s\t%s\t%s\t%s\t%s\n", run->impl,
				  i + 1, c.when, c.version, c.value, c.p20, c.p80, c.unit,
				  kx_evidence_name((enum kx_evidence)run->evidence), kx_rank_status(run, rank),
				  segment, cc.move, cc.change_pct, cc.p, cc.before, cc.after, g->dirnames[s->runs[i]]);
	}
	return r;
}

int render_history_tsv(const struct kx_group_view *g, struct kx_buf *out)
{
	int r = kx_buf_puts(out, "implementation\tn\tobserved_at\tversion\tmedian\tp20\tp80\tunit\tevidence\tstatus"
				 "\tsegment\tmove\tchange_pct\tp\tbefore\tafter\tdir\n");
	return r < 0 ? r : render_each_series(g, series_rows, out);
}

/* ---- history.json ----------------------------------------------------------------------------- */

struct json_history {
	struct kx_arena *a;
	struct kx_json *series;
};

static struct kx_json *number_or_null(struct kx_arena *a, bool known, double v)
{
	return known ? kx_json_new_number(a, v) : kx_json_new(a, KX_JSON_NULL);
}

static int series_json(void *ctx, const struct render_series *s)
{
	struct json_history *h = ctx;
	struct kx_arena *a = h->a;
	const struct kx_group_view *g = s->g;
	struct kx_json *o = kx_json_new(a, KX_JSON_OBJECT), *runs = kx_json_new(a, KX_JSON_ARRAY),
		       *changes = kx_json_new(a, KX_JSON_ARRAY);
	if (!o || !runs || !changes)
		return -ENOMEM;
	kx_json_set_string(a, o, "implementation", s->impl);
	size_t segment = 1, next = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct kx_run_rec *x = &g->runs[s->runs[i]];
		struct kx_json *e = kx_json_new(a, KX_JSON_OBJECT);
		char when[40], ds[KX_DIGEST_STR_MAX];
		double lo = 0, hi = 0;
		bool spread = render_spread_in_unit(x, &lo, &hi);
		if (!e)
			return -ENOMEM;
		if (next < s->ncp && s->cp[next].at == i) {
			const struct kx_change *cp = &s->cp[next++];
			struct kx_json *c = kx_json_new(a, KX_JSON_OBJECT);
			if (!c)
				return -ENOMEM;
			segment++;
			kx_json_set_number(a, c, "n", (double)(i + 1));
			kx_time_format(x->observed_ns, when);
			kx_json_set_string(a, c, "observed_at", when);
			change_json(a, c, x, cp);
			kx_json_set_number(a, c, "earlier_results", (double)cp->n_before);
			kx_json_append(a, changes, c);
		}
		kx_json_set_number(a, e, "n", (double)(i + 1));
		kx_time_format(x->observed_ns, when);
		kx_json_set_string(a, e, "observed_at", when);
		kx_json_set(a, e, "version",
			    x->version[0] ? kx_json_new_string(a, x->version) : kx_json_new(a, KX_JSON_NULL));
		kx_json_set_number(a, e, "median", x->value);
		kx_json_set(a, e, "p20", number_or_null(a, spread, lo));
		kx_json_set(a, e, "p80", number_or_null(a, spread, hi));
		kx_json_set_string(a, e, "unit", x->unit);
		kx_json_set_string(a, e, "evidence", kx_evidence_name((enum kx_evidence)x->evidence));
		kx_json_set_string(a, e, "status", kx_rank_status(x, s->runs[i] < g->ranked ? s->runs[i] + 1 : 0));
		kx_json_set_number(a, e, "segment", (double)segment);
		kx_json_set_string(a, e, "dir", g->dirnames[s->runs[i]]);
		kx_digest_format(&x->run, ds);
		kx_json_set_string(a, e, "run", ds);
		kx_json_append(a, runs, e);
	}
	kx_json_set(a, o, "runs", runs);
	kx_json_set(a, o, "change_points", changes);
	kx_json_append(a, h->series, o);
	return 0;
}

int render_history_json(const struct kx_group_view *g, struct kx_buf *out)
{
	struct json_history h = { .a = kx_arena_new() };
	struct kx_json *root = NULL;
	int r = h.a ? 0 : -ENOMEM;
	if (r == 0) {
		root = kx_json_new(h.a, KX_JSON_OBJECT);
		h.series = kx_json_new(h.a, KX_JSON_ARRAY);
		r = root && h.series ? rule_json(h.a, root) : -ENOMEM;
	}
	if (r >= 0) {
		char ds[KX_DIGEST_STR_MAX];
		kx_digest_format(&g->group->key, ds);
		kx_json_set_string(h.a, root, "comparison_key", ds);
		kx_json_set_string(h.a, root, "group", g->path);
		kx_json_set_string(h.a, root, "order",
				   g->group->order == KX_ORDER_DESCENDING ? "descending" : "ascending");
		r = render_each_series(g, series_json, &h);
	}
	if (r >= 0) {
		kx_json_set(h.a, root, "series", h.series);
		r = kx_json_write_pretty(root, out);
	}
	kx_arena_free(h.a);
	return r < 0 ? r : 0;
}

/* ---- /regressions.tsv and /regressions.json ------------------------------------------------- */

int kx_render_regressions_header(struct kx_buf *out)
{
	int r = kx_buf_puts(out, "move\tchange_pct\tp\tbefore\tafter\tunit\timplementation\tsince\tversion\twas"
				 "\tresults\tkernel\tpass\tgpu\tworkload\tgroup\n");
	return r < 0 ? r : 0;
}

struct regressions {
	int (*fn)(void *ctx, const struct kx_regression *row);
	void *ctx;
	struct kx_buf line, json;
	struct kx_arena *a;
};

static struct kx_json *string_or_null(struct kx_arena *a, const char *s)
{
	return s[0] ? kx_json_new_string(a, s) : kx_json_new(a, KX_JSON_NULL);
}

/* A row of /regressions.json: the TSV line's columns as keys, numbers at full precision, null
 * where the line has an empty field; JCS, so that it can be kept as bytes between builds. */
static int regression_json(struct regressions *x, const struct render_series *s, const struct kx_change *cp,
			   const struct render_cells *c)
{
	const struct kx_group_view *g = s->g;
	const struct kx_run_rec *at = &g->runs[s->runs[cp->at]];
	struct kx_arena *a = x->a;
	struct kx_json *o = kx_json_new(a, KX_JSON_OBJECT);
	if (!o)
		return -ENOMEM;
	change_json(a, o, at, cp);
	kx_json_set_string(a, o, "implementation", s->impl);
	kx_json_set_string(a, o, "since", c->when);
	kx_json_set(a, o, "version", string_or_null(a, at->version));
	kx_json_set(a, o, "was", string_or_null(a, g->runs[s->runs[cp->at - 1]].version));
	kx_json_set_number(a, o, "results", (double)(s->n - cp->at));
	kx_json_set_string(a, o, "kernel", g->group->kernel);
	kx_json_set_string(a, o, "pass", g->group->pass);
	kx_json_set_string(a, o, "gpu", g->group->gpu);
	kx_json_set_string(a, o, "workload", g->workload_dir);
	kx_json_set_string(a, o, "group", g->path);
	kx_buf_reset(&x->json);
	return kx_jcs_write(o, &x->json);
}

static int series_regression(void *ctx, const struct render_series *s)
{
	struct regressions *x = ctx;
	if (!s->ncp)
		return 0;
	const struct kx_group_view *g = s->g;
	const struct kx_change *cp = &s->cp[s->ncp - 1];
	const struct kx_run_rec *at = &g->runs[s->runs[cp->at]], *was = &g->runs[s->runs[cp->at - 1]];
	struct change_cells cc;
	struct render_cells c, w;
	int r = change_cells(at, cp, &cc);
	render_cells(at, &c);
	render_cells(was, &w);
	kx_buf_reset(&x->line);
	if (r >= 0)
		r = kx_buf_printf(&x->line, "%s\t%s\t%s\t%s\t%s\t%s\t", cc.move, cc.change_pct, cc.p, cc.before,
				  cc.after, c.unit);
	const char *text[] = { s->impl, c.when, c.version, w.version };
	for (size_t i = 0; i < KX_ARRAY_SIZE(text) && r >= 0; i++)
		if ((r = render_tsv_text(&x->line, text[i])) >= 0)
			r = kx_buf_putc(&x->line, '\t');
	if (r >= 0)
		r = kx_buf_printf(&x->line, "%zu", s->n - cp->at);
	const char *group[] = { g->group->kernel, g->group->pass, g->group->gpu, g->workload_dir, g->path };
	for (size_t i = 0; i < KX_ARRAY_SIZE(group) && r >= 0; i++)
		if ((r = kx_buf_putc(&x->line, '\t')) >= 0)
			r = render_tsv_text(&x->line, group[i]);
	if (r >= 0)
		r = kx_buf_putc(&x->line, '\n');
	if (r >= 0)
		r = regression_json(x, s, cp, &c);
	if (r >= 0) {
		struct kx_regression row = { .worse = cp->worse, .change = cp->change, .line = x->line.ptr,
					     .len = x->line.len, .json = x->json.ptr, .json_len = x->json.len };
		r = x->fn(x->ctx, &row);
	}
	return r;
}

int kx_render_group_regressions(const struct kx_group_view *g,
				int (*fn)(void *ctx, const struct kx_regression *row), void *ctx)
{
	struct regressions x = { .fn = fn, .ctx = ctx, .a = kx_arena_new() };
	int r = x.a ? render_each_series(g, series_regression, &x) : -ENOMEM;
	kx_buf_release(&x.line);
	kx_buf_release(&x.json);
	kx_arena_free(x.a);
	return r;
}

int kx_render_regressions_json(const struct kx_regression *rows, size_t n, struct kx_buf *out)
{
	struct kx_arena *a = kx_arena_new();
	struct kx_json *root = a ? kx_json_new(a, KX_JSON_OBJECT) : NULL, *list = a ? kx_json_new(a, KX_JSON_ARRAY) : NULL;
	int r = root && list ? rule_json(a, root) : -ENOMEM;
	for (size_t i = 0; i < n && r >= 0; i++) {
		struct kx_json *v = NULL;
		struct kx_json_error e;
		if ((r = kx_json_parse(a, rows[i].json, rows[i].json_len, 0, &v, NULL, &e)) >= 0)
			kx_json_append(a, list, v);
	}
	if (r >= 0) {
		kx_json_set(a, root, "change_points", list);
		r = kx_json_write_pretty(root, out);
	}
	kx_arena_free(a);
	return r < 0 ? r : 0;
}

int kx_regression_cmp(const struct kx_regression *a, const struct kx_regression *b)
{
	if (a->worse != b->worse)
		return a->worse ? -1 : 1;
	double ma = a->change < 0 ? -a->change : a->change, mb = b->change < 0 ? -b->change : b->change;
	if (ma != mb)
		return ma > mb ? -1 : 1;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->line, b->line, n);
	return c ? c : a->len < b->len ? -1 : a->len > b->len;
}
