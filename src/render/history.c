// SPDX-License-Identifier: MIT
/*
 * history.tsv of a group (SPEC §6, docs/history.md, docs/views.md): every passed run of each
 * implementation in time order — its series — with the change points of that series found by the
 * rule of src/history (kx_changepoints, on the medians in the metric's base unit). The rule and its
 * parameters head the file. Pure: the same group gives the same bytes.
 */
#include "private.h"

#include "kx/history.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* time order within an implementation: observedAt, then the digest (as the tree picks the newest) */
static int series_cmp(const void *x, const void *y, void *arg)
{
	const struct kx_run_rec *runs = arg, *a = &runs[*(const uint32_t *)x], *b = &runs[*(const uint32_t *)y];
	int c = strcmp(a->impl, b->impl);
	if (c)
		return c;
	if (a->observed_ns != b->observed_ns)
		return a->observed_ns < b->observed_ns ? -1 : 1;
	return memcmp(a->run.b, b->run.b, sizeof(a->run.b));
}

/* a base-unit value in run x's unit (as it is where the unit is not known), JCS */
static void in_unit(const struct kx_run_rec *x, double base, char out[KX_JCS_NUMBER_MAX])
{
	double v = base;
	render_in_unit(x, base, &v);
	if (!kx_jcs_number(v, out))
		snprintf(out, KX_JCS_NUMBER_MAX, "-");
}

/* One implementation's series s[0..n) (indexes into g->runs): its rows. */
static int series_rows(const struct kx_group_view *g, const uint32_t *s, size_t n, double *x, struct kx_change *cp,
		       struct kx_buf *out)
{
	for (size_t i = 0; i < n; i++)
		x[i] = g->runs[s[i]].base_value;
	size_t ncp = 0;
	int r = kx_changepoints(x, n, (enum kx_order)g->group->order, cp, n / 4 + 1, &ncp);
	size_t segment = 1, next = 0;
	for (size_t i = 0; i < n && r >= 0; i++) {
		const struct kx_run_rec *run = &g->runs[s[i]];
		struct render_cells c;
		char change[KX_JCS_NUMBER_MAX] = "-", p[KX_JCS_NUMBER_MAX] = "-", before[KX_JCS_NUMBER_MAX] = "-",
		     after[KX_JCS_NUMBER_MAX] = "-";
		const char *move = "-";
		render_cells(run, &c);
		if (next < ncp && cp[next].at == i) {
			segment++;
			if (!kx_jcs_number(cp[next].change, change) || !kx_jcs_number(cp[next].p, p))
				return -EINVAL;
			in_unit(run, cp[next].before, before);
			in_unit(run, cp[next].after, after);
			move = cp[next].worse ? "regression" : "improvement";
			next++;
		}
		bool current = s[i] < g->ranked; /* the ranked prefix: each implementation's current run */
		r = kx_buf_printf(out, "%s\t%zu\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%zu\t%s\t%s\t%s\t%s\t%s\t%s\n", run->impl,
				  i + 1, c.when, c.version, c.value, c.p20, c.p80, c.unit,
				  kx_evidence_name((enum kx_evidence)run->evidence), current ? "current" : "superseded",
				  segment, move, change, p, before, after, g->dirnames[s[i]]);
	}
	return r;
}

int render_history_tsv(const struct kx_group_view *g, struct kx_buf *out)
{
	int r = kx_changepoint_rule(out);
	if (r >= 0)
		r = kx_buf_puts(out, "implementation\tn\tobserved_at\tversion\tmedian\tp20\tp80\tunit\tevidence\tstatus"
				     "\tsegment\tmove\tchange\tp\tbefore\tafter\tdir\n");
	/* the series: every passed run with a value, by implementation, in time order */
	uint32_t *s = malloc((g->len ? g->len : 1) * sizeof(*s));
	double *x = malloc((g->len ? g->len : 1) * sizeof(*x));
	struct kx_change *cp = malloc((g->len / 4 + 1) * sizeof(*cp));
	size_t n = 0;
	if (r >= 0 && (!s || !x || !cp))
		r = -ENOMEM;
	for (size_t i = 0; i < g->len && r >= 0; i++)
		if (g->runs[i].passed && g->runs[i].has_value)
			s[n++] = (uint32_t)i;
	if (r >= 0 && n)
		qsort_r(s, n, sizeof(*s), series_cmp, (void *)g->runs);
	for (size_t i = 0, j; i < n && r >= 0; i = j) {
		for (j = i + 1; j < n && strcmp(g->runs[s[j]].impl, g->runs[s[i]].impl) == 0; j++)
			;
		r = series_rows(g, s + i, j - i, x, cp, out);
	}
	free(cp);
	free(x);
	free(s);
	return r < 0 ? r : 0;
}
