// SPDX-License-Identifier: MIT
/*
 * /index.tsv kept by the writer (issue "a million runs"). The file is every run one row, so a mount
 * that has not built it renders every group to serve its first read (0.6 s at 100,000 runs). The
 * writer keeps each group's rows in the store instead, after its commits, beside the sizes
 * (kx_tree_keep_sizes calls tree_keep_index), under keys in the file's order (docs/store.md, 'L'),
 * and a head naming the generation at which they are every group's rows. A mount whose view is at
 * that generation reads the file a range at a time from those keys (tree_index_read, below);
 * `kindex cat` with one scan of them (top.c, index_stored).
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

/* Whether gpu directory dir of d moved between before and d's view (tree_dir_moved). */
static bool dir_moved(struct kx_tree *t, struct kx_view *before, const struct cmp_data *d, const struct cmp_dir *dir)
{
	char path[4 * KX_NAME_MAX + 16];
	snprintf(path, sizeof(path), "benchmarks/%s/%s/%s", d->text + dir->kernel, d->text + dir->pass,
		 d->text + d->gpus[dir->gpu]);
	return tree_dir_moved(t, before, path, dir->mtime);
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
		    struct kx_buf *rows, uint64_t *size)
{
	const char *comp[4];
	uint64_t gone = 0;
	tree_index_comp(d, dir, dir->first, comp);
	int r = clear ? kx_store_index_clear(b, comp, &gone) : 0;
	*size -= gone < *size ? gone : *size;
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
		*size += rows->len;
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
	if ((r = tree_cmp_dirs(t, after, &d)) < 0)
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
	/* the file's size: the rows kept before, less those cleared, and the rows written */
	uint64_t size = all ? 0 : was.size;
	if (r == 0)
		r = kx_store_index_begin(t->s, &b);
	if (r == 0 && all && (r = kx_store_index_clear(b, NULL, NULL)) == 0 &&
	    (r = kx_render_index_header((const char *const *)names.v, names.n, &rows)) == 0)
		size += rows.len; /* the header's bytes */
	for (size_t k = 0; r == 0 && k < d->ndirs; k++)
		if (all || moved[k])
			r = keep_dir(t, after, d, &d->dirs[k], &names, columns, !all, b, &rows, &size);
	if (r == 0) {
		struct kx_index_head head = { .build = KX_RENDER_ID, .generation = kx_view_generation(after),
					      .size = size, .names = names.v, .nnames = names.n };
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

/* ---- index.tsv read a range at a time --------------------------------------------------------- */

/*
 * Where the rows kept are the whole file at a view's generation, a mount reads index.tsv from them
 * a range at a time, never holding the file: a READ seeks the rows to the mark at or before its
 * offset and copies what it covers. The marks — a row's offset in the file and its key — are left
 * by earlier READs, one where each ended (a `cat` reads on from there), at most one in
 * MARK_GAP bytes; the first is the first row, after the header. Its size is the head's.
 */
#define MARK_GAP (64u << 10)

struct mark {
	uint64_t off;
	unsigned char *at; /* NULL: the first row */
	size_t at_len;
};

struct index_stream {
	uint64_t generation, size, columns;
	struct kx_buf header;
	struct mark *marks; /* by offset */
	size_t nmarks, cap;
};

static void stream_free(struct index_stream *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->nmarks; i++)
		free(x->marks[i].at);
	free(x->marks);
	kx_buf_release(&x->header);
	free(x);
}

int tree_index_head_at(struct kx_tree *t, struct kx_view *v, struct kx_index_head *ret)
{
	if (kx_store_get_index_head(t->s, v, ret) < 0)
		return -ENOENT;
	if (ret->build == KX_RENDER_ID && ret->generation == kx_view_generation(v))
		return 0;
	kx_index_head_release(ret);
	return -ENOENT;
}

void tree_index_stream_release(struct kx_tree *t)
{
	stream_free(t->stream);
	t->stream = NULL;
}

/*
 * The view to read v's rows in, with the head there: v, where it sees the rows kept whole at its
 * generation; else the store as it is now, where that is still at v's generation — a read-write
 * mount's view is taken before its own writer's pass keeps the rows, and one generation is one
 * tree, so the rows kept at it are v's (the caller releases *ret when it is not v). -ENOENT where
 * neither holds them. Asked at each read, not only for a new stream: two views of one generation
 * may differ in what the writer kept, and a view that does not see the rows is never read as if it
 * did.
 */
static int rows_view(struct kx_tree *t, struct kx_view *v, struct kx_view **ret, struct kx_index_head *h)
{
	*ret = v;
	if (tree_index_head_at(t, v, h) == 0)
		return 0;
	struct kx_view *now = kx_store_view(t->s);
	if (now && kx_view_generation(now) == kx_view_generation(v) && tree_index_head_at(t, now, h) == 0) {
		*ret = now;
		return 0;
	}
	kx_view_release(now);
	return -ENOENT;
}

/* Let go of the view rows_view handed out, where it is not v. */
static void rows_view_release(struct kx_view *v, struct kx_view *rows)
{
	if (rows != v)
		kx_view_release(rows);
}

/* The stream of v's generation, under t->stream_lock, and the view to read its rows in (rows_view:
 * the caller releases it when it is not v); -ENOENT where the rows kept are not the whole file at
 * v's generation. */
static int stream_locked(struct kx_tree *t, struct kx_view *v, struct index_stream **ret, struct kx_view **ret_rows)
{
	uint64_t gen = kx_view_generation(v);
	struct kx_index_head h;
	if (rows_view(t, v, ret_rows, &h) < 0)
		return -ENOENT;
	if (t->stream && t->stream->generation == gen) {
		kx_index_head_release(&h);
		*ret = t->stream;
		return 0;
	}
	struct index_stream *x = calloc(1, sizeof(*x));
	int r = x ? 0 : -ENOMEM;
	if (r == 0) {
		x->generation = gen;
		x->size = h.size;
		x->columns = tree_index_columns((const char *const *)h.names, h.nnames);
		kx_buf_init(&x->header, 0);
		r = kx_render_index_header((const char *const *)h.names, h.nnames, &x->header);
	}
	if (r == 0 && x->header.len > x->size)
		r = -EBADMSG;
	if (r == 0 && KX_GROW(x->marks, x->cap, x->nmarks, 64) < 0)
		r = -ENOMEM;
	if (r == 0) {
		x->marks[x->nmarks++] = (struct mark){ .off = x->header.len };
		stream_free(t->stream);
		t->stream = x;
		*ret = x;
		pthread_mutex_lock(&t->lock);
		t->stats.index_streamed++;
		pthread_mutex_unlock(&t->lock);
	} else {
		stream_free(x);
		rows_view_release(v, *ret_rows);
		*ret_rows = v;
	}
	kx_index_head_release(&h);
	return r;
}

int tree_index_size(struct kx_tree *t, struct kx_view *v, uint64_t *ret)
{
	struct index_stream *x;
	struct kx_view *rv = NULL;
	pthread_mutex_lock(&t->stream_lock);
	int r = v ? stream_locked(t, v, &x, &rv) : -ENOENT;
	if (r == 0)
		*ret = x->size;
	pthread_mutex_unlock(&t->stream_lock);
	rows_view_release(v, rv); /* v itself where r < 0 */
	return r;
}

/* The last mark at or before off (there is always the first). */
static size_t mark_before(const struct index_stream *x, uint64_t off)
{
	size_t lo = 0, hi = x->nmarks;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->marks[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Leave a mark at off, the row at key `at`, unless one lies within MARK_GAP before it. */
static void mark_add(struct kx_tree *t, struct index_stream *x, uint64_t gen, uint64_t off, const void *at, size_t n)
{
	pthread_mutex_lock(&t->stream_lock);
	if (t->stream != x || x->generation != gen)
		goto out; /* another generation's stream since */
	size_t i = mark_before(x, off);
	if (x->marks[i].off + MARK_GAP > off)
		goto out;
	unsigned char *copy = malloc(n);
	if (!copy || KX_GROW(x->marks, x->cap, x->nmarks, 64) < 0) {
		free(copy);
		goto out;
	}
	memcpy(copy, at, n);
	memmove(x->marks + i + 2, x->marks + i + 1, (x->nmarks - i - 1) * sizeof(*x->marks));
	x->marks[i + 1] = (struct mark){ .off = off, .at = copy, .at_len = n };
	x->nmarks++;
out:
	pthread_mutex_unlock(&t->stream_lock);
}

int tree_index_read(struct kx_tree *t, struct kx_view *v, uint64_t off, void *buf, size_t len, size_t *ret_n)
{
	struct index_stream *x;
	struct kx_view *rv = NULL;
	*ret_n = 0;
	pthread_mutex_lock(&t->stream_lock);
	int r = v ? stream_locked(t, v, &x, &rv) : -ENOENT;
	if (r < 0) {
		pthread_mutex_unlock(&t->stream_lock);
		return r == -ENOENT ? -EAGAIN : r;
	}
	uint64_t gen = x->generation, columns = x->columns, hlen = x->header.len;
	uint64_t end = off >= x->size ? off : off + (len < x->size - off ? len : x->size - off);
	if (off < hlen)
		memcpy(buf, x->header.ptr + off, (end < hlen ? end : hlen) - off);
	uint64_t pos = off > hlen ? off : hlen;
	struct mark m = { 0 };
	if (pos < end) { /* a copy: the stream's marks may move once the lock is let go */
		const struct mark *at = &x->marks[mark_before(x, pos)];
		m = (struct mark){ .off = at->off, .at_len = at->at_len };
		if (at->at && !(m.at = malloc(at->at_len)))
			r = -ENOMEM;
		else if (at->at)
			memcpy(m.at, at->at, at->at_len);
	}
	pthread_mutex_unlock(&t->stream_lock);
	struct kx_index_cursor *c = NULL;
	struct kx_index_row row;
	if (r == 0 && pos < end && (r = kx_store_index_cursor(t->s, rv, &c)) == 0)
		r = kx_index_cursor_seek(c, m.at, m.at_len, &row);
	for (uint64_t at = m.off; r == 0 && pos < end;) {
		if (row.build != KX_RENDER_ID || row.columns != columns) {
			r = -EIO; /* not the rows the head names */
			break;
		}
		uint64_t row_end = at + row.n;
		if (row_end > pos) {
			uint64_t to = row_end < end ? row_end : end;
			memcpy((char *)buf + (pos - off), row.rows + (pos - at), to - pos);
			pos = to;
		}
		if (pos == end) { /* where the next read begins: in this row */
			mark_add(t, x, gen, at, row.at, row.at_len);
			break;
		}
		at = row_end;
		r = kx_index_cursor_next(c, &row);
	}
	kx_index_cursor_free(c);
	free(m.at);
	rows_view_release(v, rv);
	if (r == -ENOENT)
		r = -EIO; /* the rows end before the head's size */
	if (r == 0)
		*ret_n = end - off;
	return r;
}
