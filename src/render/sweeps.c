// SPDX-License-Identifier: MIT
/*
 * The cross-group files of benchmark directories and their names: sweep.tsv, the sweeps of one
 * gpu directory (which svg.c draws as sweep.svg), and gpus.tsv, one pass across its GPUs — both
 * made of the current runs of the groups below them, with the numbers the ranking files write
 * (render_cells). docs/views.md is their contract: the rules, the columns and the order of the
 * rows. Pure, as all of src/render: the same groups give the same bytes in whatever order they
 * are passed.
 */
#include "private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const bench_files[KX_BF__COUNT] = { "gpus.tsv", "sweep.tsv", "sweep.svg", "index.html" };

const char *kx_bench_file_name(enum kx_bench_file f)
{
	return f < KX_BF__COUNT ? bench_files[f] : "?";
}

/* The median, p20, p80, unit, version and observed_at cells of run x, then mixed. */
static int value_cells(struct kx_buf *out, const struct kx_run_rec *x, bool mixed)
{
	struct render_cells c;
	render_cells(x, &c);
	return kx_buf_printf(out, "\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.value, c.p20, c.p80, c.unit, c.version, c.when,
			     mixed ? "yes" : "no");
}

/* Runs of one implementation set side by side (docs/views.md, "mixed"): two of their known
 * versions differ, or they span more than 90 days. */
struct span {
	int64_t oldest, newest;
	const char *version;  /* the first known version, NULL: none yet */
	bool differ;
	bool any;
};

static void span_add(struct span *s, const struct kx_run_rec *x)
{
	if (!s->any || x->observed_ns < s->oldest)
		s->oldest = x->observed_ns;
	if (!s->any || x->observed_ns > s->newest)
		s->newest = x->observed_ns;
	s->any = true;
	if (*x->version && s->version && strcmp(s->version, x->version) != 0)
		s->differ = true;
	if (*x->version && !s->version)
		s->version = x->version;
}

static bool span_mixed(const struct span *s)
{
	return s->any && kx_mixed_span(s->oldest, s->newest, s->differ);
}

static int impl_cmp(const struct kx_run_rec *a, const struct kx_run_rec *b)
{
	return strcmp(a->impl, b->impl);
}

/* ---- sweep.tsv -------------------------------------------------------------------------------- */

/* A group with its parameters, sorted by name. */
struct sgroup {
	const struct kx_bench_group *g;
	struct render_param *p;
	size_t np;
};

/* A group of one part: the group, and where the axis is among its parameters. */
struct member {
	const struct sgroup *s;
	size_t at;
};

/* A sweep: the axis, the part of the groups that have it (members[from..to)), its fixed text. */
struct part {
	const char *axis;
	const char *fixed;
	bool numeric;
	size_t from, to;
};

/* A row: a current run of a member's group. */
struct row {
	const struct member *m;
	const struct kx_run_rec *x;
};

static int param_name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct render_param *)a)->name, ((const struct render_param *)b)->name);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Two values of a parameter: the same value (type and text) or not, in a total order. */
static int value_cmp(const struct render_param *a, const struct render_param *b)
{
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	return strcmp(a->text, b->text);
}

/* The parameters of two members other than their axis: names and values, in name order. */
static int others_cmp(const struct member *a, const struct member *b)
{
	size_t i = 0, j = 0;
	for (;;) {
		i += i == a->at;
		j += j == b->at;
		if (i == a->s->np || j == b->s->np)
			return (i < a->s->np) - (j < b->s->np);
		int c = strcmp(a->s->p[i].name, b->s->p[j].name);
		if (!c)
			c = value_cmp(&a->s->p[i], &b->s->p[j]);
		if (c)
			return c;
		i++;
		j++;
	}
}

static int member_cmp(const void *x, const void *y)
{
	const struct member *a = x, *b = y;
	int c = others_cmp(a, b);
	return c ? c : strcmp(a->s->g->workload_dir, b->s->g->workload_dir);
}

static int part_cmp(const void *x, const void *y, void *arg)
{
	const struct part *a = x, *b = y;
	const struct member *m = arg;
	int c = strcmp(a->axis, b->axis);
	if (!c)
		c = kx_name_cmp(a->fixed, b->fixed);
	return c ? c : others_cmp(&m[a->from], &m[b->from]);
}

static int row_cmp(const void *x, const void *y, void *arg)
{
	const struct row *a = x, *b = y;
	const struct render_param *va = &a->m->s->p[a->m->at], *vb = &b->m->s->p[b->m->at];
	int c = 0;
	if (*(const bool *)arg && va->number != vb->number)
		c = va->number < vb->number ? -1 : 1;
	if (!c && !*(const bool *)arg)
		c = kx_name_cmp(va->text, vb->text);
	if (!c)
		c = value_cmp(va, vb);
	if (!c)
		c = impl_cmp(a->x, b->x);
	return c ? c : strcmp(a->m->s->g->workload_dir, b->m->s->g->workload_dir);
}

/*
 * A group's parameters from its workload document (none when it is not stored): spec.parameters,
 * and spec.dtype as the parameter "dtype" unless one is named so — a workload's dtype is one of
 * the settings a sweep holds fixed (Liger's benchmark configs list it beside the others), so
 * groups of two dtypes are two sweeps, and groups that differ in their dtype alone a sweep of it.
 */
int render_params(struct kx_arena *a, const struct kx_json *workload_doc, struct render_param **ret_p, size_t *ret_n)
{
	const struct kx_json *spec = workload_doc ? kx_json_get(workload_doc, "spec") : NULL;
	const struct kx_json *p = spec ? kx_json_get(spec, "parameters") : NULL;
	const struct kx_json *dtype = spec ? kx_json_get(spec, "dtype") : NULL;
	*ret_p = NULL;
	*ret_n = 0;
	if (p && p->type != KX_JSON_OBJECT)
		p = NULL;
	if (dtype && (dtype->type != KX_JSON_STRING || (p && kx_json_get(p, "dtype"))))
		dtype = NULL;
	size_t n = (p ? p->obj.len : 0) + (dtype != NULL), np = 0;
	if (!n)
		return 0;
	struct render_param *out = kx_arena_alloc(a, n * sizeof(*out));
	if (!out)
		return -ENOMEM;
	struct kx_buf b = { 0 };
	int r = 0;
	for (size_t i = 0; p && i < p->obj.len && r >= 0; i++) {
		const struct kx_json *v = p->obj.v[i].value;
		kx_buf_reset(&b);
		struct render_param *x = &out[np];
		x->type = v->type;
		x->number = v->type == KX_JSON_NUMBER ? v->number : 0;
		x->name = kx_arena_strndup(a, p->obj.v[i].key, p->obj.v[i].key_len);
		if ((r = kx_rank_param_text(v, &b)) >= 0 && !(x->text = kx_arena_strndup(a, b.ptr ? b.ptr : "", b.len)))
			r = -ENOMEM;
		if (r >= 0 && !x->name)
			r = -ENOMEM;
		np += r >= 0;
	}
	kx_buf_release(&b);
	if (r >= 0 && dtype) {
		struct render_param *x = &out[np++];
		*x = (struct render_param){ .name = "dtype", .type = KX_JSON_STRING,
					    .text = kx_arena_strndup(a, dtype->str.ptr, dtype->str.len) };
		if (!x->text)
			r = -ENOMEM;
	}
	if (r < 0)
		return r;
	qsort(out, np, sizeof(*out), param_name_cmp);
	*ret_p = out;
	*ret_n = np;
	return 0;
}

static int params_of(struct kx_arena *a, const struct kx_bench_group *g, struct sgroup *ret)
{
	ret->g = g;
	return render_params(a, g->workload_doc, &ret->p, &ret->np);
}

/* `fixed`: the parameters of member m other than its axis, "name=value" joined by ",". */
static const char *fixed_of(struct kx_arena *a, const struct member *m, struct kx_buf *b)
{
	kx_buf_reset(b);
	int r = 0;
	for (size_t i = 0; i < m->s->np && r >= 0; i++) {
		if (i == m->at)
			continue;
		if (b->len)
			r = kx_buf_putc(b, ',');
		if (r >= 0)
			r = kx_buf_printf(b, "%s=%s", m->s->p[i].name, m->s->p[i].text);
	}
	if (r < 0)
		return NULL;
	return kx_arena_strndup(a, b->len ? b->ptr : "", b->len);
}

/*
 * The parts of the groups that have parameter `axis` (members[from..to), sorted by their other
 * parameters) in which the axis takes two values or more: those are sweeps, added to *parts.
 */
static int sweeps_of(struct kx_arena *a, const char *axis, const struct member *m, size_t from, size_t to,
		     struct part **parts, size_t *len, size_t *cap, struct kx_buf *tmp)
{
	for (size_t i = from, j; i < to; i = j) {
		bool varies = false, numeric = true;
		for (j = i; j < to && (j == i || others_cmp(&m[i], &m[j]) == 0); j++) {
			varies |= value_cmp(&m[i].s->p[m[i].at], &m[j].s->p[m[j].at]) != 0;
			numeric &= m[j].s->p[m[j].at].type == KX_JSON_NUMBER;
		}
		if (!varies)
			continue;
		if (KX_GROW(*parts, *cap, *len, 16) < 0)
			return -ENOMEM;
		struct part *p = &(*parts)[(*len)++];
		*p = (struct part){ .axis = axis, .fixed = fixed_of(a, &m[i], tmp), .numeric = numeric, .from = i, .to = j };
		if (!p->fixed)
			return -ENOMEM;
	}
	return 0;
}

/* Scratch arrays of sweep_of, kept across sweeps. */
struct scratch {
	struct row *rows;
	struct sweep_point *points;
	size_t cap;
};

/* The sweep of part p: its rows in order, handed to fn as points. */
static int sweep_of(const struct part *p, const struct member *m, struct scratch *x,
		    int (*fn)(void *ctx, const struct sweep *s), void *ctx)
{
	size_t n = 0;
	for (size_t i = p->from; i < p->to; i++)
		n += m[i].s->g->len;
	if (n > x->cap) {
		struct row *rows = realloc(x->rows, n * sizeof(*rows));
		if (rows)
			x->rows = rows;
		struct sweep_point *points = realloc(x->points, n * sizeof(*points));
		if (points)
			x->points = points;
		if (!rows || !points)
			return -ENOMEM;
		x->cap = n;
	}
	n = 0;
	for (size_t i = p->from; i < p->to; i++)
		for (size_t k = 0; k < m[i].s->g->len; k++)
			x->rows[n++] = (struct row){ &m[i], &m[i].s->g->runs[k] };
	qsort_r(x->rows, n, sizeof(*x->rows), row_cmp, (void *)&p->numeric);
	for (size_t i = 0; i < n; i++) {
		const struct row *w = &x->rows[i];
		const struct render_param *v = &w->m->s->p[w->m->at];
		x->points[i] = (struct sweep_point){ .value = v->text, .number = v->number,
						     .workload_dir = w->m->s->g->workload_dir, .run = w->x };
	}
	struct sweep sw = { .axis = p->axis, .fixed = p->fixed, .numeric = p->numeric, .points = x->points, .len = n };
	return fn(ctx, &sw);
}

int render_sweeps(const struct kx_bench_group *g, size_t n, int (*fn)(void *ctx, const struct sweep *s), void *ctx)
{
	struct kx_arena *a = kx_arena_new();
	struct sgroup *sg = calloc(n ? n : 1, sizeof(*sg));
	const char **names = NULL;
	struct member *m = NULL;
	struct part *parts = NULL;
	struct scratch x = { 0 };
	size_t nnames = 0, nparts = 0, capparts = 0, total = 0;
	struct kx_buf tmp = { 0 };
	int r = !a || !sg ? -ENOMEM : 0;
	for (size_t i = 0; i < n && r >= 0; i++)
		if ((r = params_of(a, &g[i], &sg[i])) >= 0)
			total += sg[i].np;
	/* every parameter name once, in name order: the axes */
	if (r >= 0 && !(names = malloc((total ? total : 1) * sizeof(*names))))
		r = -ENOMEM;
	for (size_t i = 0; i < n && r >= 0; i++)
		for (size_t k = 0; k < sg[i].np; k++)
			names[nnames++] = sg[i].p[k].name;
	if (r >= 0)
		qsort(names, nnames, sizeof(*names), str_cmp);
	if (r >= 0 && !(m = malloc((n ? n : 1) * sizeof(*m))))
		r = -ENOMEM;
	for (size_t i = 0; i < nnames && r >= 0; i++) {
		if (i && strcmp(names[i], names[i - 1]) == 0)
			continue;
		size_t nm = 0;
		for (size_t k = 0; k < n; k++) {
			struct render_param key = { .name = names[i] };
			/* a group without a current run has no row: a sweep of it could show one value */
			const struct render_param *at = sg[k].np && sg[k].g->len
							 ? bsearch(&key, sg[k].p, sg[k].np, sizeof(key), param_name_cmp)
							 : NULL;
			if (at)
				m[nm++] = (struct member){ &sg[k], (size_t)(at - sg[k].p) };
		}
		qsort(m, nm, sizeof(*m), member_cmp);
		size_t first = nparts;
		r = sweeps_of(a, names[i], m, 0, nm, &parts, &nparts, &capparts, &tmp);
		/* the parts keep indexes into m, which the next axis reuses: hand this axis's sweeps now */
		if (r >= 0 && nparts > first)
			qsort_r(parts + first, nparts - first, sizeof(*parts), part_cmp, m);
		for (size_t k = first; k < nparts && r >= 0; k++)
			r = sweep_of(&parts[k], m, &x, fn, ctx);
	}
	kx_buf_release(&tmp);
	free(x.points);
	free(x.rows);
	free(parts);
	free(m);
	free(names);
	free(sg);
	kx_arena_free(a);
	return r < 0 ? r : 0;
}

/* An implementation's runs in one sweep, together (sweep_tsv_rows). */
struct impl_span {
	const struct kx_run_rec *run; /* one of them: its impl names them */
	struct span sp;
};

/* sweep.tsv's rows of one sweep; a row is mixed when its implementation's runs in the sweep are */
static int sweep_tsv_rows(void *ctx, const struct sweep *s)
{
	struct kx_buf *out = ctx;
	/* each implementation's span, once: a sweep holds a few implementations, each at many points */
	struct impl_span *is = malloc((s->len ? s->len : 1) * sizeof(*is));
	size_t nis = 0, *of = malloc((s->len ? s->len : 1) * sizeof(*of));
	int r = is && of ? 0 : -ENOMEM;
	for (size_t i = 0; i < s->len && r >= 0; i++) {
		size_t k = 0;
		while (k < nis && impl_cmp(is[k].run, s->points[i].run) != 0)
			k++;
		if (k == nis)
			is[nis++] = (struct impl_span){ .run = s->points[i].run };
		span_add(&is[k].sp, s->points[i].run);
		of[i] = k;
	}
	for (size_t i = 0; i < s->len && r >= 0; i++) {
		const struct sweep_point *x = &s->points[i];
		if ((r = render_tsv_text(out, s->axis)) >= 0 && (r = kx_buf_putc(out, '\t')) >= 0 &&
		    (r = render_tsv_text(out, x->value)) >= 0 &&
		    (r = kx_buf_putc(out, '\t')) >= 0 && (r = render_tsv_text(out, s->fixed)) >= 0)
			r = kx_buf_printf(out, "\t%s\t%s", x->workload_dir, x->run->impl);
		if (r >= 0)
			r = value_cells(out, x->run, span_mixed(&is[of[i]].sp));
	}
	free(is);
	free(of);
	return r;
}

int kx_render_sweep_tsv(const struct kx_bench_group *g, size_t n, struct kx_buf *out)
{
	int r = kx_buf_puts(out, "axis\taxis_value\tfixed\tworkload\timplementation\tmedian\tp20\tp80\tunit\tversion"
				 "\tobserved_at\tmixed\n");
	return r < 0 ? r : render_sweeps(g, n, sweep_tsv_rows, out);
}

/* ---- gpus.tsv --------------------------------------------------------------------------------- */

/* A workload of the pass (one digest), with the name its rows have. */
struct wl {
	const struct kx_digest *d;
	const char *base;
	bool cut;
	char name[KX_NAME_MAX + 16];
};

/* A current run on one GPU, of workload wl. */
struct cell {
	const struct wl *wl;
	uint32_t gpu;
	const struct kx_run_rec *x;
};

static int group_digest_cmp(const void *x, const void *y)
{
	const struct kx_bench_group *a = *(const struct kx_bench_group *const *)x;
	const struct kx_bench_group *b = *(const struct kx_bench_group *const *)y;
	int c = memcmp(a->workload.b, b->workload.b, KX_DIGEST_LEN);
	return c ? c : a->gpu < b->gpu ? -1 : a->gpu > b->gpu;
}

static int wl_base_cmp(const void *x, const void *y)
{
	const struct wl *a = *(const struct wl *const *)x, *b = *(const struct wl *const *)y;
	return strcmp(a->base, b->base);
}

static int cell_cmp(const void *x, const void *y)
{
	const struct cell *a = x, *b = y;
	int c = a->wl == b->wl ? 0 : kx_name_cmp(a->wl->name, b->wl->name);
	if (!c && a->wl != b->wl)
		c = memcmp(a->wl->d->b, b->wl->d->b, KX_DIGEST_LEN);
	if (!c)
		c = impl_cmp(a->x, b->x);
	return c ? c : a->gpu < b->gpu ? -1 : a->gpu > b->gpu;
}

/* The median of x in `unit` (of the same kind as x's own), empty when not known. */
static void median_in(const struct kx_run_rec *x, const char *unit, char out[KX_JCS_NUMBER_MAX])
{
	struct kx_run_rec y = *x;
	double factor;
	out[0] = '\0';
	if (!x->has_value)
		return;
	if (strcmp(x->unit, unit) != 0) {
		const char *kind = kx_unit_metric(unit, &factor), *own = kx_unit_metric(x->unit, NULL);
		if (!kind || !own || strcmp(kind, own) != 0 || factor == 0)
			return;
		y.value = x->base_value / factor;
	}
	struct render_cells c;
	render_cells(&y, &c);
	strcpy(out, c.value);
}

/* One row: the cells c[0..n) of one workload and implementation — its median, version and date
 * on each GPU, and whether those runs are mixed. */
static int gpus_row(const struct cell *c, size_t n, size_t ngpus, const struct kx_run_rec **by_gpu,
		    struct kx_buf *out)
{
	struct span sp = { 0 };
	memset(by_gpu, 0, ngpus * sizeof(*by_gpu));
	for (size_t i = 0; i < n; i++)
		if (c[i].gpu < ngpus && !by_gpu[c[i].gpu]) {
			by_gpu[c[i].gpu] = c[i].x;
			span_add(&sp, c[i].x);
		}
	const char *unit = NULL;
	for (size_t k = 0; k < ngpus && !unit; k++)
		if (by_gpu[k] && by_gpu[k]->has_value)
			unit = by_gpu[k]->unit;
	int r = kx_buf_printf(out, "%s\t%s\t%s\t%s", c->wl->name, c->x->impl, unit ? unit : "",
			      span_mixed(&sp) ? "yes" : "no");
	for (size_t k = 0; k < ngpus && r >= 0; k++) {
		char v[KX_JCS_NUMBER_MAX] = "";
		if (by_gpu[k] && unit)
			median_in(by_gpu[k], unit, v);
		r = kx_buf_printf(out, "\t%s", v);
	}
	for (size_t k = 0; k < ngpus && r >= 0; k++) {
		char v[KX_VERSION_MAX] = "";
		if (by_gpu[k])
			render_field(by_gpu[k]->version, v, sizeof(v));
		r = kx_buf_printf(out, "\t%s", v);
	}
	for (size_t k = 0; k < ngpus && r >= 0; k++) {
		char when[40] = "";
		if (by_gpu[k])
			kx_time_format(by_gpu[k]->observed_ns, when);
		r = kx_buf_printf(out, "\t%s", when);
	}
	return r < 0 ? r : kx_buf_putc(out, '\n');
}

int kx_render_gpus_tsv(const char *const *gpus, size_t ngpus, const struct kx_bench_group *g, size_t n,
		       struct kx_buf *out)
{
	int r = kx_buf_puts(out, "workload\timplementation\tunit\tmixed");
	static const char *const family[] = { "median", "version", "observed_at" };
	for (size_t f = 0; f < KX_ARRAY_SIZE(family) && r >= 0; f++)
		for (size_t k = 0; k < ngpus && r >= 0; k++) {
			if ((r = kx_buf_printf(out, "\t%s.", family[f])) >= 0)
				r = render_tsv_text(out, gpus[k]);
		}
	if (r >= 0)
		r = kx_buf_putc(out, '\n');
	const struct kx_bench_group **by = malloc((n ? n : 1) * sizeof(*by));
	struct wl *wls = calloc(n ? n : 1, sizeof(*wls)), **wlp = malloc((n ? n : 1) * sizeof(*wlp));
	const struct kx_run_rec **by_gpu = malloc((ngpus ? ngpus : 1) * sizeof(*by_gpu));
	struct cell *cells = NULL;
	size_t nwl = 0, ncells = 0, cap = 0;
	if (r >= 0 && (!by || !wls || !wlp || !by_gpu))
		r = -ENOMEM;
	/* the workloads, by digest: each named by the base slug of its first GPU */
	for (size_t i = 0; i < n && r >= 0; i++)
		by[i] = &g[i];
	if (r >= 0)
		qsort(by, n, sizeof(*by), group_digest_cmp);
	for (size_t i = 0; i < n && r >= 0; i++) {
		if (!nwl || !kx_digest_equal(wls[nwl - 1].d, &by[i]->workload)) {
			wls[nwl] = (struct wl){ .d = &by[i]->workload, .base = by[i]->base };
			wlp[nwl] = &wls[nwl];
			nwl++;
		}
		struct wl *w = &wls[nwl - 1];
		w->cut |= by[i]->cut;
		for (size_t k = 0; k < by[i]->len && r >= 0; k++) {
			if ((r = KX_GROW(cells, cap, ncells, 64)) >= 0)
				cells[ncells++] = (struct cell){ w, by[i]->gpu, &by[i]->runs[k] };
		}
	}
	/* a base slug two workloads of the pass share is suffixed on both, as in directory names */
	if (r >= 0)
		qsort(wlp, nwl, sizeof(*wlp), wl_base_cmp);
	for (size_t i = 0; i < nwl && r >= 0; i++) {
		bool shared = (i && strcmp(wlp[i]->base, wlp[i - 1]->base) == 0) ||
			      (i + 1 < nwl && strcmp(wlp[i]->base, wlp[i + 1]->base) == 0);
		kx_rank_workload_dirname(wlp[i]->base, wlp[i]->d, wlp[i]->cut, shared, wlp[i]->name,
					 sizeof(wlp[i]->name));
	}
	if (r >= 0 && ncells)
		qsort(cells, ncells, sizeof(*cells), cell_cmp);
	for (size_t i = 0, j; i < ncells && r >= 0; i = j) {
		for (j = i + 1; j < ncells && cells[j].wl == cells[i].wl && impl_cmp(cells[j].x, cells[i].x) == 0; j++)
			;
		r = gpus_row(&cells[i], j - i, ngpus, by_gpu, out);
	}
	free(cells);
	free(by_gpu);
	free(wlp);
	free(wls);
	free(by);
	return r < 0 ? r : 0;
}
