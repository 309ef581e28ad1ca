// SPDX-License-Identifier: MIT
/*
 * The root's files made of every group (docs/views.md, docs/history.md): index.tsv, every run one
 * row, its groups in the numeric order of their names (index_order), and regressions.tsv and
 * regressions.json, every series' open change point. They walk the groups of a generation's
 * comparisons (compare.c lists every group of every gpu directory with its key, in path order)
 * and render each group's part with src/render; content.c keeps the newest of each whole (struct
 * top_slot). The regressions files keep their rows by group between builds (struct reg_state): a
 * drop recomputes the change points of the groups under the gpu directory it changed, and reuses
 * the rest.
 */
#include "private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * regressions.tsv's and regressions.json's rows as their last build found them, by group (in
 * comparison key order), so that the next build finds the change points of the groups whose stamp
 * moved and of no other. A row is a line of the TSV file, at off in text, and the same row as a
 * JSON object, at json_off.
 */
struct reg_group {
	struct kx_digest key;
	int64_t stamp;
	uint32_t first, len; /* its rows */
};

struct reg_row {
	bool worse;
	double change;
	size_t off, len;
	size_t json_off, json_len;
};

struct reg_state {
	struct reg_group *groups;
	size_t ngroups;
	struct reg_row *rows;
	size_t nrows;
	char *text;
	size_t text_len;
};

/*
 * index.tsv's rows by group as its last build wrote them (in comparison key order): where
 * each group's rows lie in the content of that build's generation (its top slot, while it is
 * still kept), and the parameter names that were its columns. The next build copies the rows of a
 * group whose stamp has not moved, if the columns are the same.
 */
struct index_group {
	struct kx_digest key;
	int64_t stamp;
	size_t off, len;
};

struct index_state {
	int64_t generation;
	struct index_group *groups;
	size_t ngroups;
	char **names;
	size_t nnames;
};

/* Free what a reg_state or an index_state holds, and empty it. */
static void reg_state_release(struct reg_state *s)
{
	if (!s)
		return;
	free(s->groups);
	free(s->rows);
	free(s->text);
	*s = (struct reg_state){ 0 };
}

static void index_state_release(struct index_state *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nnames; i++)
		free(s->names[i]);
	free(s->names);
	free(s->groups);
	*s = (struct index_state){ 0 };
}

/* What the last builds kept (kx_tree_free). */
void tree_top_release(struct kx_tree *t)
{
	reg_state_release(t->reg);
	index_state_release(t->index);
	free(t->reg);
	free(t->index);
}

/* ---- index.tsv -------------------------------------------------------------------------------- */

struct names {
	char **v;
	size_t n, cap;
};

static int name_add(void *ctx, const char *name)
{
	struct names *x = ctx;
	if (KX_GROW(x->v, x->cap, x->n, 64) < 0 || !(x->v[x->n] = strdup(name)))
		return -ENOMEM;
	x->n++;
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort and deduplicate a list of names. */
static void names_settle(struct names *x)
{
	if (!x->n)
		return;
	qsort(x->v, x->n, sizeof(*x->v), name_cmp);
	size_t k = 1;
	for (size_t i = 1; i < x->n; i++) {
		if (strcmp(x->v[i], x->v[k - 1]) == 0)
			free(x->v[i]);
		else
			x->v[k++] = x->v[i];
	}
	x->n = k;
}

/* The comparison key first: index_group's and reg_group's order. */
static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, KX_DIGEST_LEN);
}

/*
 * index.tsv's order: the groups of d by kernel, pass, gpu and workload directory name, each
 * compared as people read names (kx_name_cmp: n1024 < n2048 < n16384), not byte by byte as d
 * holds them. Into order[0..d->ngroups).
 */
static int dir_cmp(const void *x, const void *y, void *arg)
{
	const struct cmp_data *d = arg;
	const struct cmp_dir *a = &d->dirs[*(const uint32_t *)x], *b = &d->dirs[*(const uint32_t *)y];
	int c = kx_name_cmp(d->text + a->kernel, d->text + b->kernel);
	if (!c)
		c = kx_name_cmp(d->text + a->pass, d->text + b->pass);
	return c ? c : kx_name_cmp(d->text + d->gpus[a->gpu], d->text + d->gpus[b->gpu]);
}

static int workload_cmp(const void *x, const void *y, void *arg)
{
	return kx_name_cmp(tree_cmp_group_name(arg, *(const uint32_t *)x), tree_cmp_group_name(arg, *(const uint32_t *)y));
}

static int index_order(const struct cmp_data *d, uint32_t *order)
{
	uint32_t *dirs = malloc((d->ndirs ? d->ndirs : 1) * sizeof(*dirs));
	if (!dirs)
		return -ENOMEM;
	for (size_t k = 0; k < d->ndirs; k++)
		dirs[k] = (uint32_t)k;
	qsort_r(dirs, d->ndirs, sizeof(*dirs), dir_cmp, (void *)d);
	size_t n = 0;
	for (size_t k = 0; k < d->ndirs; k++) {
		const struct cmp_dir *dir = &d->dirs[dirs[k]];
		for (uint32_t i = 0; i < dir->len; i++)
			order[n + i] = dir->first + i;
		qsort_r(order + n, dir->len, sizeof(*order), workload_cmp, (void *)d);
		n += dir->len;
	}
	free(dirs);
	return 0;
}

/* Group i of d's rows in the previous build, if its stamp has not moved since and that build's
 * bytes are at hand. */
static const struct index_group *index_prev(const struct index_state *prev, const struct kx_content *prevc,
					    const struct kx_digest *key, int64_t stamp)
{
	const struct index_group *g = prevc && prev->ngroups ? bsearch(key, prev->groups, prev->ngroups,
								       sizeof(*prev->groups), key_cmp)
							     : NULL;
	return g && g->stamp == stamp && g->off + g->len <= prevc->len ? g : NULL;
}

int tree_top_index(struct kx_tree *t, struct kx_view *v, struct kx_buf *out)
{
	struct cmp_data *d;
	int r = tree_cmp_get(t, v, &d);
	if (r < 0)
		return r;
	/* t->top_lock is held (content.c): t->index is this function's alone */
	if (!t->index && !(t->index = calloc(1, sizeof(*t->index)))) {
		tree_cmp_put(t, d);
		return -ENOMEM;
	}
	struct index_state *prev = t->index;
	const struct kx_content *prevc = prev->ngroups ? tree_top_get(t, TOP_INDEX, prev->generation) : NULL;
	const struct index_group **old = calloc(d->ngroups ? d->ngroups : 1, sizeof(*old));
	int64_t *stamps = malloc((d->ngroups ? d->ngroups : 1) * sizeof(*stamps));
	struct index_state next = { .generation = v ? (int64_t)kx_view_generation(v) : 0 };
	struct names names = { 0 };
	size_t cap_groups = 0;
	uint32_t *order = malloc((d->ngroups ? d->ngroups : 1) * sizeof(*order));
	r = !old || !stamps || !order ? -ENOMEM : index_order(d, order);
	for (size_t k = 0; k < d->ndirs && r == 0; k++)
		for (uint32_t i = d->dirs[k].first; i < d->dirs[k].first + d->dirs[k].len; i++) {
			stamps[i] = d->dirs[k].mtime;
			old[i] = index_prev(prev, prevc, &d->keys[i], stamps[i]);
		}
	/* the columns: the previous build's names and those of every group it does not cover */
	for (size_t i = 0; prevc && i < prev->nnames && r == 0; i++)
		r = name_add(&names, prev->names[i]);
	for (size_t i = 0; i < d->ngroups && r == 0; i++) {
		struct kx_group_rec g;
		if (old[i] || (r = tree_get_group(t, v, &d->keys[i], &g, NULL)) < 0)
			continue;
		struct pdoc *p = tree_pdoc_get(t, v, &g.workload, NULL);
		if (p)
			r = kx_render_param_names(p->json, name_add, &names);
		tree_pdoc_put(p);
	}
	names_settle(&names);
	bool same = prevc && names.n == prev->nnames;
	for (size_t i = 0; same && i < names.n; i++)
		same = strcmp(names.v[i], prev->names[i]) == 0;
	const char *const *nv = (const char *const *)names.v;
	if (r == 0)
		r = kx_render_index_header(nv, names.n, out);
	for (size_t o = 0; o < d->ngroups && r == 0; o++) {
		size_t i = order[o];
		if (KX_GROW(next.groups, cap_groups, next.ngroups, 256) < 0) {
			r = -ENOMEM;
			break;
		}
		struct index_group *e = &next.groups[next.ngroups++];
		*e = (struct index_group){ .key = d->keys[i], .stamp = stamps[i], .off = out->len };
		if (same && old[i]) {
			r = kx_buf_append(out, prevc->data + old[i]->off, old[i]->len) < 0 ? -ENOMEM : 0;
		} else {
			struct gctx *g;
			struct kx_group_view gv;
			if ((r = tree_gctx_get(t, v, &d->keys[i], &g)) < 0)
				break;
			tree_group_view(g, &gv);
			r = kx_render_index_rows(&gv, nv, names.n, out);
			tree_gctx_put(t, g);
		}
		e->len = out->len - e->off;
	}
	if (r == 0 && v) {
		if (next.ngroups)
			qsort(next.groups, next.ngroups, sizeof(*next.groups), key_cmp);
		next.names = names.v;
		next.nnames = names.n;
		names = (struct names){ 0 };
		index_state_release(prev);
		*prev = next;
	} else {
		index_state_release(&next);
	}
	for (size_t i = 0; i < names.n; i++)
		free(names.v[i]);
	free(names.v);
	free(stamps);
	free(old);
	kx_content_put(prevc);
	free(order);
	tree_cmp_put(t, d);
	return r;
}

/* ---- regressions.tsv -------------------------------------------------------------------------- */

struct reg_build {
	struct reg_state s;
	size_t cap_groups, cap_rows, cap_text;
};

static int row_add(void *ctx, const struct kx_regression *row)
{
	struct reg_build *b = ctx;
	if (KX_GROW(b->s.rows, b->cap_rows, b->s.nrows, 64) < 0)
		return -ENOMEM;
	while (b->cap_text < b->s.text_len + row->len + row->json_len) {
		size_t cap = b->cap_text ? 2 * b->cap_text : 4096;
		char *p = realloc(b->s.text, cap);
		if (!p)
			return -ENOMEM;
		b->s.text = p;
		b->cap_text = cap;
	}
	memcpy(b->s.text + b->s.text_len, row->line, row->len);
	memcpy(b->s.text + b->s.text_len + row->len, row->json, row->json_len);
	b->s.rows[b->s.nrows++] = (struct reg_row){ .worse = row->worse, .change = row->change,
						    .off = b->s.text_len, .len = row->len,
						    .json_off = b->s.text_len + row->len, .json_len = row->json_len };
	b->s.text_len += row->len + row->json_len;
	return 0;
}

/* The rows of a group as the previous build found them, when its stamp has not moved since. */
static const struct reg_group *reg_prev(const struct reg_state *prev, const struct kx_digest *key, int64_t stamp)
{
	const struct reg_group *g = prev->ngroups ? bsearch(key, prev->groups, prev->ngroups, sizeof(*prev->groups),
							    key_cmp)
						  : NULL;
	return g && g->stamp == stamp ? g : NULL;
}

static int group_rows(struct kx_tree *t, struct kx_view *v, const struct reg_state *prev, const struct kx_digest *key,
		      int64_t stamp, struct reg_build *b)
{
	if (KX_GROW(b->s.groups, b->cap_groups, b->s.ngroups, 256) < 0)
		return -ENOMEM;
	struct reg_group *g = &b->s.groups[b->s.ngroups++];
	*g = (struct reg_group){ .key = *key, .stamp = stamp, .first = (uint32_t)b->s.nrows };
	const struct reg_group *old = reg_prev(prev, key, stamp);
	int r = 0;
	if (old) {
		for (uint32_t i = 0; i < old->len && r == 0; i++) {
			const struct reg_row *x = &prev->rows[old->first + i];
			struct kx_regression row = { .worse = x->worse, .change = x->change, .line = prev->text + x->off,
						     .len = x->len, .json = prev->text + x->json_off, .json_len = x->json_len };
			r = row_add(b, &row);
		}
	} else {
		struct gctx *c;
		struct kx_group_view gv;
		if ((r = tree_gctx_get(t, v, key, &c)) < 0)
			return r;
		tree_group_view(c, &gv);
		r = kx_render_group_regressions(&gv, row_add, b);
		tree_gctx_put(t, c);
	}
	b->s.groups[b->s.ngroups - 1].len = (uint32_t)(b->s.nrows - g->first);
	return r;
}

static int row_cmp(const void *x, const void *y, void *arg)
{
	const char *text = arg;
	const struct reg_row *a = x, *b = y;
	struct kx_regression ra = { .worse = a->worse, .change = a->change, .line = text + a->off, .len = a->len },
			     rb = { .worse = b->worse, .change = b->change, .line = text + b->off, .len = b->len };
	return kx_regression_cmp(&ra, &rb);
}

/* regressions.tsv (json false) or regressions.json of view v: the rows of every group, from the
 * last build's where a group's stamp has not moved, in the files' order. */
static int regressions(struct kx_tree *t, struct kx_view *v, bool json, struct kx_buf *out)
{
	struct cmp_data *d;
	int r = tree_cmp_get(t, v, &d);
	if (r < 0)
		return r;
	struct reg_build b = { 0 };
	/* t->top_lock is held (content.c): t->reg is this function's alone */
	if (!t->reg && !(t->reg = calloc(1, sizeof(*t->reg)))) {
		tree_cmp_put(t, d);
		return -ENOMEM;
	}
	for (size_t k = 0; k < d->ndirs && r == 0; k++)
		for (uint32_t i = d->dirs[k].first; i < d->dirs[k].first + d->dirs[k].len && r == 0; i++)
			r = group_rows(t, v, t->reg, &d->keys[i], d->dirs[k].mtime, &b);
	tree_cmp_put(t, d);
	if (r == 0) {
		/* the file's order, on a copy of the rows; the rows stay by group, for the next build */
		struct reg_row *sorted = malloc((b.s.nrows ? b.s.nrows : 1) * sizeof(*sorted));
		struct kx_regression *rows = malloc((b.s.nrows ? b.s.nrows : 1) * sizeof(*rows));
		if (!sorted || !rows) {
			r = -ENOMEM;
		} else {
			if (b.s.nrows)
				memcpy(sorted, b.s.rows, b.s.nrows * sizeof(*sorted));
			qsort_r(sorted, b.s.nrows, sizeof(*sorted), row_cmp, b.s.text);
			for (size_t i = 0; i < b.s.nrows; i++)
				rows[i] = (struct kx_regression){ .worse = sorted[i].worse, .change = sorted[i].change,
								  .line = b.s.text + sorted[i].off, .len = sorted[i].len,
								  .json = b.s.text + sorted[i].json_off,
								  .json_len = sorted[i].json_len };
			if (json) {
				r = kx_render_regressions_json(rows, b.s.nrows, out);
			} else {
				r = kx_render_regressions_header(out);
				for (size_t i = 0; i < b.s.nrows && r == 0; i++)
					r = kx_buf_append(out, rows[i].line, rows[i].len) < 0 ? -ENOMEM : 0;
			}
		}
		free(rows);
		free(sorted);
	}
	if (r == 0) {
		if (b.s.ngroups)
			qsort(b.s.groups, b.s.ngroups, sizeof(*b.s.groups), key_cmp);
		reg_state_release(t->reg);
		*t->reg = b.s;
	} else {
		reg_state_release(&b.s);
	}
	return r;
}

int tree_top_regressions(struct kx_tree *t, struct kx_view *v, struct kx_buf *out)
{
	return regressions(t, v, false, out);
}

int tree_top_regressions_json(struct kx_tree *t, struct kx_view *v, struct kx_buf *out)
{
	return regressions(t, v, true, out);
}
