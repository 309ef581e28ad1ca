// SPDX-License-Identifier: MIT
/*
 * Group listings: a group's record and stamp, its workload directory name (the walk of the
 * workload level), and the listing of its runs in rank order with their directory names, built
 * from the store and kept in a byte-bounded cache (struct gctx).
 */
#include "private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- group listings --------------------------------------------------------------------------- */

static int64_t gpu_stamp(struct kx_tree *t, struct kx_view *v, const struct kx_group_rec *g)
{
	char path[4 * KX_NAME_MAX + 16];
	snprintf(path, sizeof(path), "benchmarks/%s/%s/%s", g->kernel, g->pass, g->gpu);
	int64_t ns = 0;
	if (kx_store_dir_mtime(t->s, v, path, &ns) < 0)
		ns = g->changed_ns;
	return ns;
}

/* A group record and its stamp (gpu_stamp), through the generation-scoped cache. */
int tree_get_group(struct kx_tree *t, struct kx_view *v, const struct kx_digest *key, struct kx_group_rec *ret,
		   int64_t *ret_stamp)
{
	uint64_t k, gen = v ? kx_view_generation(v) : 0;
	memcpy(&k, key->b, sizeof(k));
	size_t i = tree_slot_of(k, t->ngroups);
	bool hit = false;
	if (v) {
		pthread_mutex_lock(&t->lock);
		const struct group_slot *x = &t->groups[i];
		hit = x->used && x->generation == gen && kx_digest_equal(&x->rec.key, key);
		if (hit) {
			*ret = x->rec;
			if (ret_stamp)
				*ret_stamp = x->stamp;
		}
		pthread_mutex_unlock(&t->lock);
	}
	if (hit)
		return 0;
	int r = kx_store_get_group(t->s, v, key, ret);
	if (r < 0)
		return r;
	int64_t stamp = gpu_stamp(t, v, ret);
	if (ret_stamp)
		*ret_stamp = stamp;
	if (v) {
		pthread_mutex_lock(&t->lock);
		t->groups[i] = (struct group_slot){ .generation = gen, .used = true, .stamp = stamp, .rec = *ret };
		if (gen) /* a store with groups has one: every ingest is a generation */
			t->gstamps[tree_slot_of(k, t->ngstamps)] =
				(struct gstamp_slot){ .generation = gen, .key = *key, .stamp = stamp };
		pthread_mutex_unlock(&t->lock);
	}
	return 0;
}

/* The stamps' directories: whether one moved since a view (the writer's passes, private.h). */
bool tree_dir_moved(struct kx_tree *t, struct kx_view *before, const char *path, int64_t now)
{
	int64_t was = 0;
	return !before || kx_store_dir_mtime(t->s, before, path, &was) < 0 || was != now;
}

/* A group's stamp alone (tree_get_group's), through the table of stamps before the records'. */
int tree_group_stamp(struct kx_tree *t, struct kx_view *v, const struct kx_digest *key, int64_t *ret)
{
	uint64_t k, gen = v ? kx_view_generation(v) : 0;
	memcpy(&k, key->b, sizeof(k));
	bool hit = false;
	if (gen) {
		pthread_mutex_lock(&t->lock);
		const struct gstamp_slot *x = &t->gstamps[tree_slot_of(k, t->ngstamps)];
		if ((hit = x->generation == gen && kx_digest_equal(&x->key, key)))
			*ret = x->stamp;
		pthread_mutex_unlock(&t->lock);
	}
	struct kx_group_rec g;
	return hit ? 0 : tree_get_group(t, v, key, &g, ret);
}

/*
 * Walk the workload level, deciding each entry's directory name once its successor is known
 * (a shared base slug needs both neighbours). emit() is called for the previous entry.
 */
static int wl_emit(struct wl_scan *w, bool next_shares)
{
	char name[KX_NAME_MAX + 16];
	kx_rank_workload_dirname(w->prev_base, &w->prev_w, w->prev_cut, w->prev_shared || next_shares, name,
				 sizeof(name));
	if (w->want && kx_digest_equal(w->want, &w->prev_g)) {
		snprintf(w->name_out, sizeof(w->name_out), "%s", name);
		return 1;
	}
	if (w->match && strcmp(w->match, name) == 0) {
		w->found = w->prev_g;
		return 1;
	}
	if (w->fn) {
		struct kx_node n = { .type = KX_NODE_GROUP, .id = w->prev_g };
		return w->fn(w->ctx, name, &n);
	}
	return 0;
}

int tree_wl_feed(void *ctx, const char *name, const struct kx_digest *workload, const struct kx_digest *group,
		 bool cut)
{
	struct wl_scan *w = ctx;
	bool shares = w->have_prev && strcmp(w->prev_base, name) == 0;
	if (w->have_prev) {
		int r = wl_emit(w, shares);
		if (r)
			return r;
	}
	w->prev_shared = shares;
	snprintf(w->prev_base, sizeof(w->prev_base), "%s", name);
	w->prev_w = *workload;
	w->prev_g = *group;
	w->prev_cut = cut;
	w->have_prev = true;
	return 0;
}

int tree_wl_end(struct wl_scan *w)
{
	return w->have_prev ? wl_emit(w, false) : 0;
}

int tree_wl_walk(struct kx_tree *t, struct kx_view *v, const char *const comp[3], struct wl_scan *w)
{
	int r = kx_store_tree_list(t->s, v, comp, 3, tree_wl_feed, w);
	return r == 0 ? tree_wl_end(w) : r;
}

static int digest_cmp_idx(const void *x, const void *y, void *arg)
{
	const struct kx_run_rec *runs = arg;
	return memcmp(runs[*(const uint32_t *)x].run.b, runs[*(const uint32_t *)y].run.b, 32);
}

struct collect {
	struct kx_tree *t;
	struct kx_view *v;
	struct kx_run_rec *runs;
	size_t len, cap;
	uint32_t ranked;
};

static int collect_run(void *ctx, const struct kx_run_rec *run, bool ranked)
{
	struct collect *c = ctx;
	if (KX_GROW(c->runs, c->cap, c->len, 16) < 0)
		return -ENOMEM;
	c->runs[c->len] = *run;
	c->ranked += ranked;
	tree_run_put(c->t, run); /* its run directory, listed next, needs it again */
	tree_evidence(c->t, c->v, &c->runs[c->len++]);
	return 0;
}


/* Ranked indexes sorted by implementation, each one's newest passed run first (kx_run_order). */
static int newest_first(const void *x, const void *y, void *arg)
{
	const struct kx_run_rec *runs = arg, *a = &runs[*(const uint32_t *)x], *b = &runs[*(const uint32_t *)y];
	return kx_run_order(a->impl, a->observed_ns, &a->run, b->impl, b->observed_ns, &b->run);
}

/*
 * Rank the current run of each implementation only: of the runs[0..ranked) the store lists in
 * value order, keep each implementation's newest in front, in the same order, and move the others
 * (superseded) behind them, before the unranked runs. Returns the number of current runs.
 */
static int current_first(struct kx_run_rec *runs, uint32_t ranked, uint32_t *ret_current)
{
	uint32_t *idx = malloc((ranked ? ranked : 1) * sizeof(*idx));
	bool *current = calloc(ranked ? ranked : 1, sizeof(*current));
	struct kx_run_rec *tmp = malloc((ranked ? ranked : 1) * sizeof(*tmp));
	if (!idx || !current || !tmp) {
		free(idx);
		free(current);
		free(tmp);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < ranked; i++)
		idx[i] = i;
	qsort_r(idx, ranked, sizeof(*idx), newest_first, runs);
	uint32_t cur = 0;
	for (uint32_t i = 0; i < ranked; i++) {
		current[idx[i]] = i == 0 || strcmp(runs[idx[i]].impl, runs[idx[i - 1]].impl) != 0;
		cur += current[idx[i]];
	}
	/* current runs to tmp[0..cur), superseded ones after them, each in value order */
	for (uint32_t i = 0, c = 0, o = cur; i < ranked; i++)
		tmp[current[i] ? c++ : o++] = runs[i];
	memcpy(runs, tmp, ranked * sizeof(*tmp));
	free(idx);
	free(current);
	free(tmp);
	*ret_current = cur;
	return 0;
}

/* Free a listing whose last reference is gone. */
static void gctx_free(struct gctx *g)
{
	if (!g)
		return;
	free(g->runs);
	free(g->dirnames);
	free(g->dirptrs);
	free(g->by_digest);
	free(g->reruns);
	tree_pdoc_put(g->wdoc);
	free(g);
}

static int gctx_build(struct kx_tree *t, struct kx_view *v, const struct kx_group_rec *g, int64_t stamp,
		      struct gctx **ret)
{
	struct gctx *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->key = g->key;
	x->group = *g;
	x->stamp = stamp;
	x->refs = 1;
	struct collect c = { t, v, NULL, 0, 0, 0 };
	int r = kx_store_group_runs(t->s, v, &g->key, collect_run, &c);
	x->runs = c.runs;
	x->len = c.len;
	if (r == 0)
		r = current_first(x->runs, c.ranked, &x->ranked);
	if (r < 0)
		goto fail;
	x->dirnames = calloc(x->len ? x->len : 1, sizeof(*x->dirnames));
	x->dirptrs = calloc(x->len ? x->len : 1, sizeof(*x->dirptrs));
	x->by_digest = calloc(x->len ? x->len : 1, sizeof(*x->by_digest));
	x->reruns = calloc(x->len ? x->len : 1, sizeof(*x->reruns));
	if (!x->dirnames || !x->dirptrs || !x->by_digest || !x->reruns ||
	    (r = kx_render_reruns(x->runs, x->len, x->reruns)) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	int width = kx_rank_width(x->ranked);
	for (size_t i = 0; i < x->len; i++) {
		kx_rank_dirname(i < x->ranked ? (uint32_t)i + 1 : 0, width, &x->runs[i], x->dirnames[i],
				sizeof(x->dirnames[i]));
		x->dirptrs[i] = x->dirnames[i];
		x->by_digest[i] = (uint32_t)i;
	}
	qsort_r(x->by_digest, x->len, sizeof(*x->by_digest), digest_cmp_idx, x->runs);
	const char *comp[3] = { g->kernel, g->pass, g->gpu };
	struct wl_scan w = { .want = &g->key };
	r = tree_wl_walk(t, v, comp, &w);
	if (r < 0)
		goto fail;
	snprintf(x->workload_dir, sizeof(x->workload_dir), "%s", w.name_out[0] ? w.name_out : g->workload_slug);
	snprintf(x->path, sizeof(x->path), "benchmarks/%s/%s/%s/%s", g->kernel, g->pass, g->gpu, x->workload_dir);
	if ((x->wdoc = tree_pdoc_get(t, v, &g->workload, x->len ? &x->runs[0].run : NULL)))
		x->workload_doc = x->wdoc->json;
	x->bytes = sizeof(*x) + c.cap * sizeof(*x->runs) + x->len * (sizeof(*x->dirnames) + sizeof(char *) + 4 + 4);
	*ret = x;
	return 0;
fail:
	gctx_free(x);
	return r;
}

void tree_gctx_put(struct kx_tree *t, struct gctx *g)
{
	if (g && tree_unref(t, &g->refs))
		gctx_free(g);
}

/* The group listing, cached. The caller puts its reference with tree_gctx_put. */
struct gctx **tree_ghash_slot(struct kx_tree *t, const struct kx_digest *key)
{
	return &t->ghash[(key->b[0] | key->b[1] << 8) % GBUCKETS];
}

/* Drop a listing from the cache (LRU, hash, byte count) and put the cache's reference. */
void tree_gcache_drop(struct kx_tree *t, struct gctx *g)
{
	kx_list_unlink(&t->glru, &g->lru);
	struct gctx **p = tree_ghash_slot(t, &g->key);
	while (*p && *p != g)
		p = &(*p)->hnext;
	if (*p)
		*p = g->hnext;
	t->gbytes -= g->bytes;
	if (--g->refs == 0)
		gctx_free(g);
}

int tree_gctx_get(struct kx_tree *t, struct kx_view *v, const struct kx_digest *key, struct gctx **ret)
{
	struct kx_group_rec g;
	int64_t stamp;
	int r = tree_get_group(t, v, key, &g, &stamp);
	if (r < 0)
		return r;
	pthread_mutex_lock(&t->lock);
	for (struct gctx *x = *tree_ghash_slot(t, key); x; x = x->hnext) {
		if (!kx_digest_equal(&x->key, key))
			continue;
		if (x->stamp == stamp && x->group.ranked == g.ranked && x->group.unranked == g.unranked) {
			x->refs++;
			kx_list_touch(&t->glru, &x->lru);
			t->stats.group_hits++;
			pthread_mutex_unlock(&t->lock);
			*ret = x;
			return 0;
		}
		break;
	}
	t->stats.group_misses++;
	pthread_mutex_unlock(&t->lock);

	struct gctx *x;
	r = gctx_build(t, v, &g, stamp, &x);
	if (r < 0)
		return r;
	pthread_mutex_lock(&t->lock);
	/* replace any older listing of this group, then trim to the bound */
	for (struct gctx *o = *tree_ghash_slot(t, key); o; o = o->hnext)
		if (kx_digest_equal(&o->key, key)) {
			tree_gcache_drop(t, o);
			break;
		}
	x->refs++; /* the cache's reference */
	kx_list_push(&t->glru, &x->lru);
	x->hnext = *tree_ghash_slot(t, key);
	*tree_ghash_slot(t, key) = x;
	t->gbytes += x->bytes;
	while (t->gbytes > t->limit && t->glru.tail && t->glru.tail != &x->lru)
		tree_gcache_drop(t, kx_entry_of(t->glru.tail, struct gctx, lru));
	pthread_mutex_unlock(&t->lock);
	*ret = x;
	return 0;
}

static int bsearch_cmp(const void *key, const void *elt, void *arg)
{
	const struct kx_run_rec *runs = arg;
	return memcmp(key, runs[*(const uint32_t *)elt].run.b, 32);
}

/* position of run in the listing, or -1 */
ssize_t tree_gctx_find(const struct gctx *g, const struct kx_digest *run)
{
	size_t lo = 0, hi = g->len;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = bsearch_cmp(run->b, &g->by_digest[mid], g->runs);
		if (c == 0)
			return g->by_digest[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* Free every listing the cache holds (kx_tree_free: before the parsed documents, which they hold). */
void tree_groups_release(struct kx_tree *t)
{
	for (struct kx_link *l = t->glru.head, *n; l; l = n) {
		n = l->next;
		gctx_free(kx_entry_of(l, struct gctx, lru));
	}
}
