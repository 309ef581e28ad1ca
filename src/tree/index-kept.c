// SPDX-License-Identifier: MIT
/*
 * /index.tsv kept by the writer (issue "a million runs"). The file is every run one row, so a mount
 * that has not built it renders every group to serve its first read (0.6 s at 100,000 runs). The
 * writer keeps each group's rows in the store instead, after its commits, beside the sizes
 * (kx_tree_keep_sizes calls tree_keep_index), under keys in the file's order (docs/store.md, 'L'),
 * and a head naming the generation at which they are every group's rows. A mount whose view is at
 * that generation reads the file with one scan of those keys (top.c, index_stored).
 *
 * A group's rows change when its gpu directory's time moves (its stamp: every drop below it, and a
 * commit of evidence, moves it), and all of them when the columns — every workload parameter name
 * of every group — gain a name. So after commits from generation before to after, the writer
 * renders again the rows below each gpu directory whose time moved, where the rows kept were whole
 * at before's generation, by this renderer (KX_RENDER_ID); otherwise, or when the columns grew,
 * every group's. A commit by a writer that does not keep them (an older kindex, `kindex attest`)
 * leaves the head at an older generation: mounts render, and the next pass renders every group.
 */
#include "private.h"
#include "render-id.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the columns: every workload parameter name (top.c builds the file with them too) ---------- */

int tree_name_add(void *ctx, const char *name)
{
	struct tree_names *x = ctx;
	if (KX_GROW(x->v, x->cap, x->n, 64) < 0 || !(x->v[x->n] = strdup(name)))
		return -ENOMEM;
	x->n++;
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void tree_names_settle(struct tree_names *x)
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

bool tree_names_equal(const struct tree_names *a, char *const *b, size_t nb)
{
	if (a->n != nb)
		return false;
	for (size_t i = 0; i < nb; i++)
		if (strcmp(a->v[i], b[i]) != 0)
			return false;
	return true;
}

void tree_names_release(struct tree_names *x)
{
	for (size_t i = 0; i < x->n; i++)
		free(x->v[i]);
	free(x->v);
	*x = (struct tree_names){ 0 };
}

int tree_group_param_names(struct kx_tree *t, struct kx_view *v, const struct kx_digest *key, struct tree_names *names)
{
	struct kx_group_rec g;
	int r = tree_get_group(t, v, key, &g, NULL);
	if (r < 0)
		return r;
	struct pdoc *p = tree_pdoc_get(t, v, &g.workload, NULL);
	if (p)
		r = kx_render_param_names(p->json, tree_name_add, names);
	tree_pdoc_put(p);
	return r;
}

/* ---- the writer's pass ------------------------------------------------------------------------ */

/* Whether gpu directory k of d moved between before and d's view: its time is another. */
static bool dir_moved(struct kx_tree *t, struct kx_view *before, const struct cmp_data *d, const struct cmp_dir *dir)
{
	char path[4 * KX_NAME_MAX + 16];
	int64_t was = 0;
	snprintf(path, sizeof(path), "benchmarks/%s/%s/%s", d->text + dir->kernel, d->text + dir->pass,
		 d->text + d->gpus[dir->gpu]);
	return kx_store_dir_mtime(t->s, before, path, &was) < 0 || was != dir->mtime;
}

void tree_index_comp(const struct cmp_data *d, const struct cmp_dir *dir, size_t i, const char *comp[4])
{
	comp[0] = d->text + dir->kernel;
	comp[1] = d->text + dir->pass;
	comp[2] = d->text + d->gpus[dir->gpu];
	comp[3] = tree_cmp_group_name(d, i);
}

uint64_t tree_index_columns(const char *const *names, size_t n)
{
	struct kx_sha256 *h = kx_sha256_new();
	uint8_t out[KX_DIGEST_LEN];
	if (!h)
		return 0; /* no rows are kept with it (keep_dir), and none read */
	for (size_t i = 0; i < n; i++)
		kx_sha256_update(h, names[i], strlen(names[i]) + 1);
	kx_sha256_final(h, out);
	uint64_t id = 0;
	for (int i = 0; i < 8; i++)
		id = id << 8 | out[i];
	return id ? id : 1;
}

/* Render and put the rows of the groups of dir (after clearing the rows kept below it, or all). */
static int keep_dir(struct kx_tree *t, struct kx_view *v, const struct cmp_data *d, const struct cmp_dir *dir,
		    const struct tree_names *names, uint64_t columns, bool clear, struct kx_index_batch *b,
		    struct kx_buf *rows)
{
	const char *comp[4];
	tree_index_comp(d, dir, dir->first, comp);
	int r = clear ? kx_store_index_clear(b, comp) : 0;
	for (uint32_t i = dir->first; i < dir->first + dir->len && r == 0; i++) {
		struct gctx *g;
		struct kx_group_view gv;
		if ((r = tree_gctx_get(t, v, &d->keys[i], &g)) < 0)
			break;
		tree_group_view(g, &gv);
		rows->len = 0;
		r = kx_render_index_rows(&gv, (const char *const *)names->v, names->n, rows);
		tree_gctx_put(t, g);
		comp[3] = tree_cmp_group_name(d, i);
		struct kx_index_row row = { .key = d->keys[i], .stamp = dir->mtime, .build = KX_RENDER_ID,
					    .columns = columns, .rows = rows->ptr, .n = rows->len };
		if (r == 0)
			r = kx_store_index_put(b, comp, &row);
	}
	return r;
}

int tree_keep_index(struct kx_tree *t, struct kx_view *before, struct kx_view *after)
{
	struct kx_index_head was;
	bool all = true;
	int r = 0;
	if (kx_store_get_index_head(t->s, after, &was) < 0)
		was = (struct kx_index_head){ 0 };
	else if (was.build == KX_RENDER_ID && was.generation == kx_view_generation(after))
		goto out; /* kept already */
	else
		all = !before || was.build != KX_RENDER_ID || was.generation != kx_view_generation(before);
	struct cmp_data *d;
	if ((r = tree_cmp_get(t, after, &d)) < 0)
		goto out;
	bool *moved = calloc(d->ndirs ? d->ndirs : 1, sizeof(*moved));
	struct tree_names names = { 0 };
	struct kx_buf rows;
	kx_buf_init(&rows, 0);
	if (!moved)
		r = -ENOMEM;
	/* the columns: the names kept before, and those of every group below a directory that moved */
	for (size_t i = 0; r == 0 && !all && i < was.nnames; i++)
		r = tree_name_add(&names, was.names[i]);
	for (size_t k = 0; r == 0 && k < d->ndirs; k++) {
		moved[k] = all || dir_moved(t, before, d, &d->dirs[k]);
		for (uint32_t i = d->dirs[k].first; moved[k] && r == 0 && i < d->dirs[k].first + d->dirs[k].len; i++)
			r = tree_group_param_names(t, after, &d->keys[i], &names);
	}
	tree_names_settle(&names);
	if (r == 0 && !all && !tree_names_equal(&names, was.names, was.nnames)) {
		/* a new column: every row changes, and every group's names are needed */
		all = true;
		tree_names_release(&names);
		for (size_t i = 0; r == 0 && i < d->ngroups; i++)
			r = tree_group_param_names(t, after, &d->keys[i], &names);
		tree_names_settle(&names);
	}
	struct kx_index_batch *b = NULL;
	uint64_t columns = tree_index_columns((const char *const *)names.v, names.n);
	if (r == 0)
		r = kx_store_index_begin(t->s, &b);
	if (r == 0 && all)
		r = kx_store_index_clear(b, NULL);
	for (size_t k = 0; r == 0 && k < d->ndirs; k++)
		if (all || moved[k])
			r = keep_dir(t, after, d, &d->dirs[k], &names, columns, !all, b, &rows);
	if (r == 0) {
		struct kx_index_head head = { .build = KX_RENDER_ID, .generation = kx_view_generation(after),
					      .names = names.v, .nnames = names.n };
		r = kx_store_index_end(b, &head);
	} else {
		kx_store_index_abort(b);
	}
	kx_buf_release(&rows);
	tree_names_release(&names);
	free(moved);
	tree_cmp_put(t, d);
out:
	kx_index_head_release(&was);
	return r;
}
