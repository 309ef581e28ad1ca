// SPDX-License-Identifier: MIT
/*
 * The root's files made of every group (docs/views.md, docs/history.md): index.tsv, every run one
 * row, its groups in the numeric order of their names (index_order), and regressions.tsv and
 * regressions.json, every series' open change point. They walk the groups of a generation's
 * comparisons (compare.c lists every group of every gpu directory with its key, in path order)
 * and render each group's part with src/render; content.c keeps the newest of each whole (struct
 * top_slot). The regressions files keep their rows by group between builds (struct reg_state): a
 * drop recomputes the change points of the groups under the gpu directory it changed, and reuses
 * the rest. changes.tsv, every step of every series, is in tree order (names in numeric order)
 * and copies the rows of the groups a drop did not touch, as index.tsv does (struct rows_state).
 */
#include "private.h"
#include "render-id.h"

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
 * index.tsv's or changes.tsv's rows by group as its last build wrote them (in comparison key
 * order): where each group's rows lie in the content of that build's generation (its top slot,
 * while it is still kept), and for index.tsv the parameter names that were its columns. The next
 * build copies the rows of a group whose stamp has not moved (and for index.tsv, if the columns
 * are the same).
 */
struct rows_group {
	struct kx_digest key;
	int64_t stamp;
	size_t off, len;
};

struct rows_state {
	int64_t generation;
	struct rows_group *groups;
	size_t ngroups;
	char **names;
	size_t nnames;
};

/* Free what a reg_state or a rows_state holds, and empty it. */
static void reg_state_release(struct reg_state *s)
{
	if (!s)
		return;
	free(s->groups);
	free(s->rows);
	free(s->text);
	*s = (struct reg_state){ 0 };
}

static void rows_state_release(struct rows_state *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nnames; i++)
		free(s->names[i]);
	free(s->names);
	free(s->groups);
	*s = (struct rows_state){ 0 };
}

/* What the last builds kept (kx_tree_free). */
void tree_top_release(struct kx_tree *t)
{
	reg_state_release(t->reg);
	rows_state_release(t->index);
	rows_state_release(t->changes);
	free(t->reg);
	free(t->index);
	free(t->changes);
}

/* ---- index.tsv and changes.tsv: the rows of every group in tree order -------------------------------------------------------------------------------- */

/* rows_group and reg_group begin with their comparison key: kx_digest_cmp orders them. */

/* Tree order (tree_index_order). */
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

int tree_index_order(const struct cmp_data *d, uint32_t *order)
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

/* A group's rows in the previous build, if its stamp has not moved since and that build's bytes
 * are at hand. */
static const struct rows_group *rows_prev(const struct rows_state *prev, const struct kx_content *prevc,
					  const struct kx_digest *key, int64_t stamp)
{
	const struct rows_group *g = prevc && prev->ngroups ? bsearch(key, prev->groups, prev->ngroups,
								      sizeof(*prev->groups), kx_digest_cmp)
							    : NULL;
	return g && g->stamp == stamp && g->off + g->len <= prevc->len ? g : NULL;
}

/*
 * One build of index.tsv or changes.tsv: the generation's comparisons (d), the state its last
 * build left (prev, and the bytes it wrote, prevc) and the one this build leaves (next), the
 * groups of d in tree order, each group's stamp (its gpu directory's) and its rows in prevc where
 * they can be copied (old, NULL where not), and each group's gpu directory (dirs). index.tsv's
 * builds also copy, where the previous build's rows are not at hand, the rows the writer kept
 * (kept, of the columns kept_columns; NULL: none), and know which groups have them (has_kept).
 */
struct rows_build {
	struct cmp_data *d;
	struct rows_state *prev, next;
	const struct kx_content *prevc;
	uint32_t *order, *dirs;
	int64_t *stamps;
	const struct rows_group **old;
	struct kx_index_cursor *kept;
	uint64_t kept_columns;
	bool *has_kept;
};

/* Begin a build of the top file `top`, whose state is *state (t->index or t->changes). */
static int rows_begin(struct kx_tree *t, struct kx_view *v, struct rows_state **state, int top, struct rows_build *b)
{
	*b = (struct rows_build){ .next.generation = v ? (int64_t)kx_view_generation(v) : 0 };
	int r = tree_cmp_get(t, v, &b->d);
	if (r < 0)
		return r;
	/* t->top_lock is held (content.c): the state is this build's alone */
	if (!*state && !(*state = calloc(1, sizeof(**state))))
		return -ENOMEM;
	b->prev = *state;
	b->prevc = b->prev->ngroups ? tree_top_get(t, top, b->prev->generation) : NULL;
	const struct cmp_data *d = b->d;
	size_t n = d->ngroups ? d->ngroups : 1;
	b->order = malloc(n * sizeof(*b->order));
	b->dirs = malloc(n * sizeof(*b->dirs));
	b->stamps = malloc(n * sizeof(*b->stamps));
	b->old = calloc(n, sizeof(*b->old));
	if (!b->order || !b->dirs || !b->stamps || !b->old)
		return -ENOMEM;
	for (size_t k = 0; k < d->ndirs; k++)
		for (uint32_t i = d->dirs[k].first; i < d->dirs[k].first + d->dirs[k].len; i++) {
			b->dirs[i] = (uint32_t)k;
			b->stamps[i] = d->dirs[k].mtime;
			b->old[i] = rows_prev(b->prev, b->prevc, &d->keys[i], b->stamps[i]);
		}
	return tree_index_order(d, b->order);
}

/* The rows the writer kept for group i of b, when they are of this renderer, of the columns
 * `columns` and at the group's stamp. */
static bool kept_rows(struct rows_build *b, size_t i, uint64_t columns, struct kx_index_row *ret)
{
	const char *comp[4];
	tree_index_comp(b->d, &b->d->dirs[b->dirs[i]], i, comp);
	return kx_index_cursor_find(b->kept, comp, &b->d->keys[i], ret) == 0 && ret->build == KX_RENDER_ID &&
	       ret->columns == columns && ret->stamp == b->stamps[i];
}

/* Every group's rows into out in tree order, each group's place kept in b->next: copied from the
 * previous build where b->old has them and reuse allows, written by fn otherwise. */
static int rows_write(struct kx_tree *t, struct kx_view *v, struct rows_build *b, bool reuse,
		      int (*fn)(const struct kx_group_view *g, void *ctx, struct kx_buf *out), void *ctx,
		      struct kx_buf *out)
{
	size_t cap = 0;
	int r = 0;
	for (size_t o = 0; o < b->d->ngroups && r == 0; o++) {
		size_t i = b->order[o];
		if (KX_GROW(b->next.groups, cap, b->next.ngroups, 256) < 0)
			return -ENOMEM;
		struct rows_group *e = &b->next.groups[b->next.ngroups++];
		*e = (struct rows_group){ .key = b->d->keys[i], .stamp = b->stamps[i], .off = out->len };
		struct kx_index_row row;
		if (reuse && b->old[i]) {
			r = kx_buf_append(out, b->prevc->data + b->old[i]->off, b->old[i]->len) < 0 ? -ENOMEM : 0;
		} else if (b->kept && b->has_kept[i] && kept_rows(b, i, b->kept_columns, &row)) {
			r = kx_buf_append(out, row.rows, row.n) < 0 ? -ENOMEM : 0;
		} else {
			struct gctx *g;
			struct kx_group_view gv;
			if ((r = tree_gctx_get(t, v, &b->d->keys[i], &g)) < 0)
				break;
			tree_group_view(g, &gv);
			r = fn(&gv, ctx, out);
			tree_gctx_put(t, g);
		}
		e->len = out->len - e->off;
	}
	return r;
}

/* End a build: its state replaces the last one's if it is to be kept (whole, and of a view). */
static void rows_end(struct kx_tree *t, struct rows_build *b, bool keep)
{
	if (keep && b->prev) {
		if (b->next.ngroups)
			qsort(b->next.groups, b->next.ngroups, sizeof(*b->next.groups), kx_digest_cmp);
		rows_state_release(b->prev);
		*b->prev = b->next;
	} else {
		rows_state_release(&b->next);
	}
	kx_index_cursor_free(b->kept);
	free(b->has_kept);
	free(b->old);
	free(b->stamps);
	free(b->dirs);
	free(b->order);
	kx_content_put(b->prevc);
	if (b->d)
		tree_cmp_put(t, b->d);
}

static int index_rows(const struct kx_group_view *g, void *ctx, struct kx_buf *out)
{
	const struct tree_names *names = ctx;
	return kx_render_index_rows(g, (const char *const *)names->v, names->n, out);
}

/*
 * index.tsv from the rows the writer kept (src/tree/index-kept.c), when they are every group's rows
 * of v's generation, made by this renderer: the header and one scan, no group rendered. They are
 * kept as the state of a build (t->index), for the next to copy from. -ENOENT when none hold.
 */
struct stored {
	struct rows_state st;
	size_t cap;
	uint64_t columns;
	struct kx_buf *out;
};

static int stored_rows(void *ctx, const struct kx_index_row *row)
{
	struct stored *x = ctx;
	if (row->build != KX_RENDER_ID || row->columns != x->columns)
		return -ESTALE; /* rows of a pass cut short: rendered */
	if (KX_GROW(x->st.groups, x->cap, x->st.ngroups, 1024) < 0)
		return -ENOMEM;
	x->st.groups[x->st.ngroups++] = (struct rows_group){ .key = row->key, .stamp = row->stamp,
							     .off = x->out->len, .len = row->n };
	return kx_buf_append(x->out, row->rows, row->n) < 0 ? -ENOMEM : 0;
}

static int index_stored(struct kx_tree *t, struct kx_view *v, struct kx_buf *out)
{
	struct kx_index_head h;
	int r = tree_index_head_at(t, v, &h);
	if (r < 0)
		return r;
	struct stored x = { .st.generation = (int64_t)h.generation, .out = out,
			    .columns = tree_index_columns((const char *const *)h.names, h.nnames) };
	r = kx_render_index_header((const char *const *)h.names, h.nnames, out);
	if (r == 0)
		r = kx_store_each_index_rows(t->s, v, stored_rows, &x);
	if (r == 0 && !t->index && !(t->index = calloc(1, sizeof(*t->index))))
		r = -ENOMEM;
	if (r == 0) {
		/* t->top_lock is held (content.c) */
		qsort(x.st.groups, x.st.ngroups, sizeof(*x.st.groups), kx_digest_cmp);
		x.st.names = h.names;
		x.st.nnames = h.nnames;
		h = (struct kx_index_head){ 0 };
		rows_state_release(t->index);
		*t->index = x.st;
	} else {
		rows_state_release(&x.st);
		out->len = 0;
	}
	kx_index_head_release(&h);
	return r;
}

int tree_top_index(struct kx_tree *t, struct kx_view *v, struct kx_buf *out)
{
	bool whole = v && index_stored(t, v, out) == 0;
	pthread_mutex_lock(&t->lock);
	(*(whole ? &t->stats.index_kept : &t->stats.index_rendered))++;
	pthread_mutex_unlock(&t->lock);
	if (whole)
		return 0;
	struct rows_build b;
	struct tree_names names = { 0 };
	struct kx_index_head h = { 0 };
	int r = rows_begin(t, v, &t->index, TOP_INDEX, &b);
	/* the rows the writer kept, for the groups whose rows the previous build does not hold */
	bool kept = false;
	if (r == 0 && v && kx_store_get_index_head(t->s, v, &h) == 0 && h.build == KX_RENDER_ID &&
	    kx_store_index_cursor(t->s, v, &b.kept) == 0) {
		b.kept_columns = tree_index_columns((const char *const *)h.names, h.nnames);
		if (!(b.has_kept = calloc(b.d->ngroups ? b.d->ngroups : 1, sizeof(*b.has_kept))))
			r = -ENOMEM;
		struct kx_index_row row;
		for (size_t i = 0; r == 0 && i < b.d->ngroups; i++)
			if (!b.old[i] && (b.has_kept[i] = kept_rows(&b, i, b.kept_columns, &row)))
				kept = true;
	}
	/* the columns: those of the previous build and of the rows kept, and of every group neither has */
	for (size_t i = 0; b.prevc && i < b.prev->nnames && r == 0; i++)
		r = tree_name_add(&names, b.prev->names[i]);
	for (size_t i = 0; kept && i < h.nnames && r == 0; i++)
		r = tree_name_add(&names, h.names[i]);
	for (size_t i = 0; r == 0 && i < b.d->ngroups; i++)
		if (!b.old[i] && !(b.has_kept && b.has_kept[i]))
			r = tree_group_param_names(t, v, &b.d->keys[i], &names);
	tree_names_settle(&names);
	bool same = b.prevc && tree_names_equal(&names, b.prev->names, b.prev->nnames);
	if (b.kept && !tree_names_equal(&names, h.names, h.nnames)) {
		kx_index_cursor_free(b.kept); /* a column they lack: rendered */
		b.kept = NULL;
	}
	kx_index_head_release(&h);
	if (r == 0)
		r = kx_render_index_header((const char *const *)names.v, names.n, out);
	if (r == 0)
		r = rows_write(t, v, &b, same, index_rows, &names, out);
	if (r == 0) {
		b.next.names = names.v;
		b.next.nnames = names.n;
		names = (struct tree_names){ 0 };
	}
	rows_end(t, &b, r == 0 && v);
	tree_names_release(&names);
	return r;
}

static int changes_rows(const struct kx_group_view *g, void *ctx, struct kx_buf *out)
{
	(void)ctx;
	return kx_render_group_changes(g, out);
}

int tree_top_changes(struct kx_tree *t, struct kx_view *v, struct kx_buf *out)
{
	struct rows_build b;
	int r = rows_begin(t, v, &t->changes, TOP_CHANGES, &b);
	if (r == 0)
		r = kx_render_changes_header(out);
	if (r == 0)
		r = rows_write(t, v, &b, true, changes_rows, NULL, out);
	rows_end(t, &b, r == 0 && v);
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
							    kx_digest_cmp)
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
			qsort(b.s.groups, b.s.ngroups, sizeof(*b.s.groups), kx_digest_cmp);
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
