// SPDX-License-Identifier: MIT
/*
 * Sizes known before anyone asks (issue "a million runs"). A file's size is its rendered length,
 * so a `stat` that finds no size in the caches renders the file (summary.txt, a run's index.html:
 * 100 µs and more cold). The writer does that instead, after its commits: kx_tree_keep_sizes
 * renders every file of every group below each gpu directory whose time moved, and of every run of
 * those groups, and keeps their sizes in the store ('Z', kx_store_put_sizes), one record per
 * directory. A mount — cold, read-only, a replica's — then answers `stat` with one point read per
 * directory (tree_size: the caches, then that record, then a render), and renders a file only to
 * read it.
 *
 * A kept size holds while what it was rendered from holds, which the stamps say as they say it for
 * the content cache: a run's rank-dependent files and a group's files follow the group's stamp (its
 * gpu directory's time), which the record carries; a run's other files have stamp 0 and hold for
 * good, but for a manifest.json still missing a document, whose size is not kept. And only the
 * renderer that made them may believe them: the record names its build (KX_RENDER_ID, a hash of
 * the rendering code, render-id.py), and another build renders.
 */
#include "private.h"
#include "render-id.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The key of slot k of a run's record: its file k in the rank directory, or runs/' index.html. */
static struct kx_node run_slot_node(const struct kx_digest *run, int k)
{
	struct kx_node n = { .type = KX_NODE_RUN_FILE, .file = (uint8_t)k, .id = *run };
	if (k == RSIZE_RUNS_HTML) {
		n.type = KX_NODE_RUNS_FILE;
		n.file = KX_RF_INDEX_HTML;
	}
	return n;
}

static bool slot_stamped(int k)
{
	return k == RSIZE_RUNS_HTML || tree_rank_dependent(k);
}

/* Whether the writer keeps file n's size: a run's file or a group's. */
static bool kept(const struct kx_node *n)
{
	return n->type == KX_NODE_GROUP_FILE || n->type == KX_NODE_RUN_FILE || n->type == KX_NODE_RUNS_FILE;
}

/* The size of file n of stamp `stamp` from the record the writer kept for its directory, which goes
 * into the sizes cache whole; false when none holds. */
static bool size_stored(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t stamp, uint64_t *ret)
{
	bool group = n->type == KX_NODE_GROUP_FILE;
	if (!kept(n))
		return false;
	struct kx_sizes z;
	if (kx_store_get_sizes(t->s, v, group ? 'g' : 'r', &n->id, &z) < 0 || z.build != KX_RENDER_ID)
		return false;
	int want = group ? n->file
		   : n->type == KX_NODE_RUNS_FILE && n->file == KX_RF_INDEX_HTML ? RSIZE_RUNS_HTML
									   : n->file;
	bool found = false;
	pthread_mutex_lock(&t->lock);
	for (int k = 0; k < (int)z.n; k++) {
		struct kx_node f = group ? (struct kx_node){ .type = KX_NODE_GROUP_FILE, .file = (uint8_t)k, .id = n->id }
					 : run_slot_node(&n->id, k);
		bool stamped = group || slot_stamped(k);
		/* a stamped size holds at the record's stamp only; a manifest.json's is kept at stamp 0 */
		if (z.size[k] == KX_SIZE_UNKNOWN || (stamped && z.stamp != stamp) ||
		    (!stamped && k == want && stamp != 0))
			continue;
		tree_size_put_locked(t, tree_content_key(&f), stamped ? z.stamp : 0, z.size[k]);
		if (k == want) {
			*ret = z.size[k];
			found = true;
		}
	}
	if (found)
		t->stats.sizes_stored++;
	pthread_mutex_unlock(&t->lock);
	return found;
}

int tree_size(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t stamp, bool records,
	      uint64_t *ret)
{
	if (tree_size_get(t, tree_content_key(n), stamp, ret) || (records && size_stored(t, v, n, stamp, ret)))
		return 0;
	if (n->type == KX_NODE_INDEX && tree_index_size(t, v, ret) == 0)
		return 0; /* read a range at a time: never whole */
	if (records && kept(n)) {
		pthread_mutex_lock(&t->lock);
		t->stats.sizes_rendered++; /* what the writer's records did not answer */
		pthread_mutex_unlock(&t->lock);
	}
	return tree_size_of(t, v, n, stamp, ret);
}

/* ---- the writer's pass ------------------------------------------------------------------------ */

/*
 * The size of file n to keep at stamp `at` (the group's, or 0 for a run's file that does not follow
 * it): KX_SIZE_UNKNOWN for a file the directory does not list, or whose stamp is another — a
 * manifest.json still missing a document.
 */
static int size_now(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t at, uint32_t *ret)
{
	int64_t stamp;
	uint64_t size;
	int r = tree_stamp_of(t, v, n, &stamp, NULL, NULL);
	if (r == 0) /* not from a record: none holds at a stamp that moved, and this pass writes it */
		r = tree_size(t, v, n, stamp, false, &size);
	*ret = r == 0 && stamp == at && size < KX_SIZE_UNKNOWN ? (uint32_t)size : KX_SIZE_UNKNOWN;
	return r == -ENOENT ? 0 : r;
}

struct batch {
	char kind;
	size_t len;
	struct kx_digest ids[256];
	struct kx_sizes z[256];
};

static int batch_flush(struct kx_tree *t, struct batch *b)
{
	int r = b->len ? kx_store_put_sizes(t->s, b->kind, b->ids, b->z, b->len) : 0;
	b->len = 0;
	return r;
}

static int batch_add(struct kx_tree *t, struct batch *b, const struct kx_digest *id, const struct kx_sizes *z)
{
	b->ids[b->len] = *id;
	b->z[b->len++] = *z;
	return b->len == KX_ARRAY_SIZE(b->ids) ? batch_flush(t, b) : 0;
}

struct keep {
	struct kx_tree *t;
	struct kx_view *v;
	struct kx_sizes z; /* the run's, as its files are listed */
};

static int keep_run_file(void *ctx, const char *name, const struct kx_node *n)
{
	struct keep *k = ctx;
	if (n->type != KX_NODE_RUN_FILE || n->file >= KX_RF__COUNT)
		return 0; /* its documents, attestations and artifacts: sized from their own records */
	return size_now(k->t, k->v, n, slot_stamped(n->file) ? k->z.stamp : 0, &k->z.size[n->file]);
}

static int keep_group(struct kx_tree *t, struct kx_view *v, const struct kx_digest *key, struct batch *runs,
		      struct batch *groups, size_t *ret_runs)
{
	struct gctx *g;
	int r = tree_gctx_get(t, v, key, &g);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	struct kx_sizes z = { .build = KX_RENDER_ID, .stamp = g->stamp, .n = KX_GF__COUNT };
	for (int f = 0; f < KX_GF__COUNT && r == 0; f++)
		r = size_now(t, v, &(struct kx_node){ .type = KX_NODE_GROUP_FILE, .file = (uint8_t)f, .id = g->key },
			     g->stamp, &z.size[f]);
	if (r == 0)
		r = batch_add(t, groups, &g->key, &z);
	for (size_t i = 0; i < g->len && r == 0; i++) {
		struct keep k = { t, v, { .build = KX_RENDER_ID, .stamp = g->stamp, .n = RSIZE_FILES } };
		for (int f = 0; f < RSIZE_FILES; f++)
			k.z.size[f] = KX_SIZE_UNKNOWN;
		struct kx_node html = run_slot_node(&g->runs[i].run, RSIZE_RUNS_HTML);
		if ((r = tree_run_files_of(t, v, KX_NODE_RUN, &g->runs[i], keep_run_file, &k)) == 0 &&
		    (r = size_now(t, v, &html, g->stamp, &k.z.size[RSIZE_RUNS_HTML])) == 0)
			r = batch_add(t, runs, &g->runs[i].run, &k.z);
	}
	if (r == 0)
		*ret_runs += g->len;
	tree_gctx_put(t, g);
	return r;
}

/* The groups to size: every group below a gpu directory whose time moved (all of them when there
 * is no `before`), in path order. */
struct pick {
	struct kx_tree *t;
	struct kx_view *before, *after;
	char gpu[3 * KX_NAME_MAX + 16]; /* the directory last compared, and whether it moved */
	bool moved;
	struct kx_digest *keys;
	size_t len, cap;
};

static int pick_group(void *ctx, const char *kernel, const char *pass, const char *gpu, const char *name,
		      const struct kx_digest *workload, const struct kx_digest *group, bool cut)
{
	struct pick *p = ctx;
	char path[sizeof(p->gpu)];
	snprintf(path, sizeof(path), "benchmarks/%s/%s/%s", kernel, pass, gpu);
	if (strcmp(path, p->gpu) != 0) {
		memcpy(p->gpu, path, sizeof(path));
		int64_t now = 0;
		p->moved = kx_store_dir_mtime(p->t->s, p->after, path, &now) < 0 ||
			   tree_dir_moved(p->t, p->before, path, now);
	}
	if (!p->moved)
		return 0;
	if (KX_GROW(p->keys, p->cap, p->len, 1024) < 0)
		return -ENOMEM;
	p->keys[p->len++] = *group;
	return 0;
}

/* One of the pass's threads: the groups i of p with i % parts == part. */
struct share {
	struct kx_tree *t;
	struct kx_view *v;
	const struct pick *p;
	unsigned part, parts;
	size_t runs;
	int r;
	_Atomic size_t *done;
	kx_sizes_progress_fn fn; /* part 0's only */
	size_t told;             /* the groups done when it last called fn */
	void *ctx;
	pthread_t th;
};

static void *share_main(void *arg)
{
	struct share *sh = arg;
	struct batch *rb = calloc(1, sizeof(*rb)), *gb = calloc(1, sizeof(*gb));
	int r = rb && gb ? 0 : -ENOMEM;
	if (r == 0) {
		rb->kind = 'r';
		gb->kind = 'g';
	}
	for (size_t i = sh->part; i < sh->p->len && r == 0; i += sh->parts) {
		r = keep_group(sh->t, sh->v, &sh->p->keys[i], rb, gb, &sh->runs);
		size_t done = ++*sh->done;
		if (sh->fn && done >= sh->told + 256) {
			sh->fn(sh->ctx, done, sh->p->len);
			sh->told = done;
		}
	}
	if (r == 0 && (r = batch_flush(sh->t, rb)) == 0)
		r = batch_flush(sh->t, gb);
	free(rb);
	free(gb);
	sh->r = r;
	return NULL;
}

int kx_tree_keep_sizes(struct kx_tree *t, struct kx_view *before, struct kx_view *after, kx_sizes_progress_fn fn,
		       void *ctx, size_t *ret_runs)
{
	struct pick p = { .t = t, .before = before, .after = after };
	int r = kx_store_tree_groups(t->s, after, pick_group, &p);
	/* a thread per core (up to 8), each rendering its share of the groups; a share whose thread
	 * could not start is done by this one */
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned parts = cores < 1 ? 1 : cores > 8 ? 8 : (unsigned)cores;
	if (parts > p.len / 16 + 1)
		parts = (unsigned)(p.len / 16 + 1);
	struct share sh[8];
	bool running[8] = { false };
	_Atomic size_t done = 0;
	size_t runs = 0;
	for (unsigned k = 0; k < parts; k++)
		sh[k] = (struct share){ .t = t, .v = after, .p = &p, .part = k, .parts = parts, .done = &done,
					.fn = k == 0 ? fn : NULL, .ctx = ctx };
	for (unsigned k = 1; k < parts && r == 0; k++)
		running[k] = pthread_create(&sh[k].th, NULL, share_main, &sh[k]) == 0;
	for (unsigned k = 0; k < parts && r == 0; k++) {
		if (running[k])
			pthread_join(sh[k].th, NULL);
		else
			share_main(&sh[k]);
	}
	for (unsigned k = 0; k < parts && r == 0; k++) {
		runs += sh[k].runs;
		r = sh[k].r;
	}
	if (r == 0)
		r = tree_keep_index(t, before, after);
	if (r == 0 && fn)
		fn(ctx, p.len, p.len);
	free(p.keys);
	if (ret_runs)
		*ret_runs = runs;
	return r;
}
