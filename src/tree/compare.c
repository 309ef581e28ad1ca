// SPDX-License-Identifier: MIT
/*
 * compare/ (docs/views.md): a directory <candidate>..<baseline> for every ordered pair of
 * implementations that share a group, holding a <gpu>.tsv for every GPU where they do, a
 * summary.tsv and its page, index.html. What they show is a function of every group's current
 * runs, so it is computed in one pass over the groups, on the first read of a generation, and kept
 * for that generation (struct cmp_data): a drop costs nothing here until someone reads compare/
 * again.
 *
 * Names and inode numbers: a pair directory's id is the SHA-256 of its path ("compare/a..b"),
 * a gpu file's and its index.html's of their paths too, summary.tsv has its pair's; an inode
 * number's 55 bits are found among a generation's ids (cmp_data.ids), which say which file they
 * name — not the number's file bits, which a version's number made back lacks (tree_compare_node).
 * Pairs and their GPUs only ever appear (runs are never removed), so a number handed out in one
 * generation decodes in every later one. compare/index.html is one of the tree's pages
 * (KX_NODE_HTML, KX_HTML_COMPARE).
 *
 * Stamps: a <gpu>.tsv's is the newest mtime of the gpu directories that hold the groups it shows
 * (every run added below one of them moves it, as it moves the group's files), a summary.tsv's and
 * a pair's index.html's (which shows the summary) the newest of its gpu files', compare/'s — and
 * compare/index.html's — the newest of all.
 *
 * A group of more than CMP_GROUP_PAIRS_MAX current runs forms no pair by itself (one of 700
 * implementations would make 489,300 directories): it adds rows only to pairs that share a smaller
 * group too.
 *
 * One file of about 1,200 lines because it is one view over one structure (struct cmp_data): the
 * pass that builds it, and the lookup, listing, attributes, stamps and bytes that read it; split,
 * every part would need cmp_data's insides in private.h, which only this file should know.
 */
#include "private.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The parts of struct cmp_data (private.h) that only this file reads. */
struct cmp_run {
	uint32_t impl;
	struct kx_digest run; /* its digest: the run record, which has its version, is read for the rows shown */
	struct kx_compare_run r;
};

struct cmp_group {
	uint32_t name;        /* its workload directory's name */
	uint32_t first, len;  /* its current runs: runs[first..first+len), by impl index */
};

struct cmp_id {               /* what an inode number's 55 bits name: a pair, its index.html or a gpu file */
	uint64_t id55;
	uint32_t pair;
	int32_t file;         /* a gpu file's index, CMP_SUMMARY or CMP_HTML */
};

/* A run of a row shown with its version (rows_of). */
struct cmp_versioned {
	struct kx_compare_run r;
	char version[KX_VERSION_MAX];
};

/* ---- building a generation's comparisons ------------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	while (*s)
		h = (h ^ (uint8_t)*s++) * UINT64_C(0x100000001b3);
	return mix64(h);
}

/* An open-addressing map of uint64_t keys to uint32_t values: slots hold value + 1 (0: empty),
 * grown at half full. Names and digests are kept by their hashes (intern, group_of). */
struct umap {
	uint64_t *key;
	uint32_t *val;
	size_t cap, len;
};

static int umap_grow(struct umap *m)
{
	size_t cap = m->cap ? 2 * m->cap : 1024;
	uint64_t *key = calloc(cap, sizeof(*key));
	uint32_t *val = calloc(cap, sizeof(*val));
	if (!key || !val) {
		free(key);
		free(val);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->val[i])
			continue;
		size_t j = mix64(m->key[i]) & (cap - 1);
		while (val[j])
			j = (j + 1) & (cap - 1);
		key[j] = m->key[i];
		val[j] = m->val[i];
	}
	free(m->key);
	free(m->val);
	m->key = key;
	m->val = val;
	m->cap = cap;
	return 0;
}

/* The value of key; where it has none, -1 — or, with add >= 0, it gets that value (*ret_added). */
static int64_t umap_get(struct umap *m, uint64_t key, int64_t add, bool *ret_added)
{
	if (add >= 0 && 2 * (m->len + 1) > m->cap && umap_grow(m) < 0)
		return -ENOMEM;
	if (!m->cap)
		return -1;
	size_t i = mix64(key) & (m->cap - 1);
	while (m->val[i] && m->key[i] != key)
		i = (i + 1) & (m->cap - 1);
	if (m->val[i])
		return m->val[i] - 1;
	if (add < 0)
		return -1;
	m->key[i] = key;
	m->val[i] = (uint32_t)add + 1;
	m->len++;
	if (ret_added)
		*ret_added = true;
	return add;
}

static void umap_release(struct umap *m)
{
	free(m->key);
	free(m->val);
}

struct build {
	struct kx_tree *t;
	struct kx_view *v;
	struct cmp_data *d;
	size_t cap_impls, cap_gpus, cap_dirs, cap_groups, cap_keys, cap_runs;
	struct umap impl_map, gpu_map; /* hash_str(name) → index (collisions: the next key, below) */
	struct kx_digest *keys;        /* the groups' keys, by index */
	struct umap group_map;         /* a key's first 8 bytes → index (collisions: the next key) */
	struct wl_group {
		char name[KX_NAME_MAX + 16];
		struct kx_digest key;
	} *wl; /* a gpu directory's groups */
	size_t wl_len, wl_cap;
	bool in_dir;                   /* the gpu directory of the scan: */
	char comp[3][KX_NAME_MAX];
	struct wl_scan w;              /* its workload level */
};

/* A copy of s in the text; its offset, or -ENOMEM. */
static int64_t text_add(struct cmp_data *d, const char *s)
{
	size_t n = strlen(s) + 1;
	if (d->text_len + n > UINT32_MAX)
		return -E2BIG;
	while (d->text_len + n > d->text_cap) {
		size_t cap = d->text_cap ? 2 * d->text_cap : 4096;
		char *p = realloc(d->text, cap);
		if (!p)
			return -ENOMEM;
		d->text = p;
		d->text_cap = cap;
	}
	memcpy(d->text + d->text_len, s, n);
	d->text_len += n;
	return (int64_t)(d->text_len - n);
}

/*
 * The index of name among names[0..*len) (an impl or gpu), added when new. Keys are the names'
 * hashes; two names of one hash take the next key, so a lookup walks keys until it finds the name
 * or an empty slot.
 */
static int64_t intern(struct cmp_data *d, struct umap *m, uint32_t **names, size_t *len, size_t *cap,
		      const char *name)
{
	uint64_t h = hash_str(name);
	for (;; h++) {
		bool added = false;
		int64_t i = umap_get(m, h, (int64_t)*len, &added);
		if (i < 0)
			return i;
		if (!added) {
			if (strcmp(d->text + (*names)[i], name) == 0)
				return i;
			continue;
		}
		int64_t off = text_add(d, name);
		if (off < 0 || KX_GROW(*names, *cap, *len, 64) < 0)
			return off < 0 ? off : -ENOMEM;
		(*names)[(*len)++] = (uint32_t)off;
		return i;
	}
}

static int wl_add(void *ctx, const char *name, const struct kx_node *n)
{
	struct build *b = ctx;
	if (KX_GROW(b->wl, b->wl_cap, b->wl_len, 16) < 0)
		return -ENOMEM;
	snprintf(b->wl[b->wl_len].name, sizeof(b->wl[b->wl_len].name), "%s", name);
	b->wl[b->wl_len++].key = n->id;
	return 0;
}

static int wl_cmp(const void *x, const void *y)
{
	return strcmp(((const struct wl_group *)x)->name, ((const struct wl_group *)y)->name);
}

static int run_cmp(const void *x, const void *y)
{
	uint32_t a = ((const struct cmp_run *)x)->impl, b = ((const struct cmp_run *)y)->impl;
	return a < b ? -1 : a > b;
}

/* A group of a gpu directory, its runs to come from the scan of the current runs (add_current). */
static int add_group(struct build *b, const struct wl_group *w)
{
	struct cmp_data *d = b->d;
	int64_t name = text_add(d, w->name);
	if (name < 0 || KX_GROW(d->groups, b->cap_groups, d->ngroups, 256) < 0)
		return name < 0 ? (int)name : -ENOMEM;
	if (KX_GROW(b->keys, b->cap_keys, d->ngroups, 256) < 0)
		return -ENOMEM;
	uint64_t h;
	memcpy(&h, w->key.b, sizeof(h));
	for (bool added = false; !added; h++) {
		int64_t i = umap_get(&b->group_map, h, (int64_t)d->ngroups, &added);
		if (i < 0)
			return (int)i;
		if (!added && kx_digest_equal(&b->keys[i], &w->key))
			return 0; /* listed twice: cannot be */
	}
	b->keys[d->ngroups] = w->key;
	d->groups[d->ngroups++] = (struct cmp_group){ .name = (uint32_t)name };
	return 0;
}

/* The index of the group of key, or -1. */
static int64_t group_of(struct build *b, const struct kx_digest *key)
{
	uint64_t h;
	memcpy(&h, key->b, sizeof(h));
	for (;; h++) {
		int64_t i = umap_get(&b->group_map, h, -1, NULL);
		if (i < 0 || kx_digest_equal(&b->keys[i], key))
			return i;
	}
}

/*
 * What one thread of the scan of the current runs found (kx_store_each_current, in chunks each
 * thread takes the next of): its groups' current runs, by group key, its implementations numbered
 * and named in `names` (only its text and impls) until the parts are put together (merge_part).
 */
struct part {
	struct kx_tree *t;
	struct kx_view *v;
	atomic_uint *next;             /* the next chunk of the store's groups to scan, of `chunks` */
	unsigned chunks;
	struct cmp_data names;
	struct umap impl_map;
	size_t cap_impls;
	struct cmp_run *runs;
	size_t nruns, cap_runs;
	struct part_group {
		struct kx_digest key;
		uint32_t first, len;   /* its runs: runs[first..first+len) */
	} *groups;
	size_t ngroups, cap_groups;
	int r;
};

/* One current run of the scan; a group's come one after another (a chunk holds whole groups). */
static int add_current(void *ctx, const struct kx_digest *group, const struct kx_current_rec *c)
{
	struct part *p = ctx;
	if (!p->ngroups || !kx_digest_equal(&p->groups[p->ngroups - 1].key, group)) {
		if (KX_GROW(p->groups, p->cap_groups, p->ngroups, 256) < 0)
			return -ENOMEM;
		p->groups[p->ngroups++] = (struct part_group){ .key = *group, .first = (uint32_t)p->nruns };
	}
	int64_t impl = intern(&p->names, &p->impl_map, &p->names.impls, &p->names.nimpls, &p->cap_impls, c->impl);
	if (impl < 0)
		return (int)impl;
	if (KX_GROW(p->runs, p->cap_runs, p->nruns, 1024) < 0)
		return -ENOMEM;
	struct cmp_run *x = &p->runs[p->nruns++];
	*x = (struct cmp_run){ .impl = (uint32_t)impl, .run = c->run,
			       .r = { .value = c->value, .base_value = c->base_value, .base_p20 = c->base_p20,
				      .base_p80 = c->base_p80, .has_spread = c->has_spread, .order = c->order,
				      .observed_ns = c->observed_ns } };
	memcpy(x->r.unit, c->unit, sizeof(x->r.unit));
	p->groups[p->ngroups - 1].len++;
	return 0;
}

static void *scan_part(void *arg)
{
	struct part *p = arg;
	for (unsigned c; p->r == 0 && (c = atomic_fetch_add(p->next, 1)) < p->chunks;)
		p->r = kx_store_each_current(p->t->s, p->v, c, p->chunks, add_current, p);
	return NULL;
}

/* A part's groups into d: their runs, with the implementations numbered as d numbers them. */
static int merge_part(struct build *b, struct part *p)
{
	struct cmp_data *d = b->d;
	uint32_t *impl = malloc((p->names.nimpls + 1) * sizeof(*impl));
	if (!impl)
		return -ENOMEM;
	int r = 0;
	for (size_t i = 0; i < p->names.nimpls && r == 0; i++) {
		int64_t x = intern(d, &b->impl_map, &d->impls, &d->nimpls, &b->cap_impls, p->names.text + p->names.impls[i]);
		impl[i] = (uint32_t)x;
		r = x < 0 ? (int)x : 0;
	}
	for (size_t i = 0; i < p->ngroups && r == 0; i++) {
		const struct part_group *pg = &p->groups[i];
		int64_t gi = group_of(b, &pg->key);
		if (gi < 0)
			continue; /* a group the path index does not list is in no directory (kindex verify says so) */
		struct cmp_group *g = &d->groups[gi];
		g->first = (uint32_t)d->nruns;
		g->len = pg->len;
		for (uint32_t k = 0; k < pg->len && r == 0; k++) {
			if (KX_GROW(d->runs, b->cap_runs, d->nruns, 1024) < 0) {
				r = -ENOMEM;
				break;
			}
			d->runs[d->nruns] = p->runs[pg->first + k];
			d->runs[d->nruns++].impl = impl[p->runs[pg->first + k].impl];
		}
		if (r == 0)
			qsort(&d->runs[g->first], g->len, sizeof(*d->runs), run_cmp);
	}
	free(impl);
	return r;
}

static void part_release(struct part *p)
{
	free(p->names.text);
	free(p->names.impls);
	umap_release(&p->impl_map);
	free(p->runs);
	free(p->groups);
}

/* The index of metric name among d's metrics, added when new (a store has a few). */
static int64_t metric_of(struct cmp_data *d, const char *name)
{
	for (size_t i = 0; i < d->nmetrics; i++)
		if (strcmp(d->text + d->metrics[i], name) == 0)
			return (int64_t)i;
	int64_t off = text_add(d, name);
	if (off < 0)
		return off;
	uint32_t *m = realloc(d->metrics, (d->nmetrics + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	d->metrics = m;
	m[d->nmetrics] = (uint32_t)off;
	return (int64_t)d->nmetrics++;
}

/* The gpu directory whose groups were scanned last, its groups in workload directory name order. */
static int dir_end(struct build *b)
{
	struct cmp_data *d = b->d;
	const char *kernel = b->comp[0], *pass = b->comp[1], *gpu = b->comp[2];
	int r = tree_wl_end(&b->w);
	int64_t k = r < 0 ? r : text_add(d, kernel), p = k < 0 ? k : text_add(d, pass);
	int64_t gi = p < 0 ? p : intern(d, &b->gpu_map, &d->gpus, &d->ngpus, &b->cap_gpus, gpu);
	if (gi < 0 || KX_GROW(d->dirs, b->cap_dirs, d->ndirs, 64) < 0)
		return gi < 0 ? (int)gi : -ENOMEM;
	struct cmp_dir dir = { .kernel = (uint32_t)k, .pass = (uint32_t)p, .gpu = (uint32_t)gi,
			       .first = (uint32_t)d->ngroups };
	/* its metric: its groups', one for them all (the pass directory's name says it) */
	struct kx_group_rec g;
	int64_t mi = metric_of(d, b->wl_len && kx_store_get_group(b->t->s, b->v, &b->wl[0].key, &g) == 0 ? g.metric : "");
	if (mi < 0)
		return (int)mi;
	dir.metric = (uint32_t)mi;
	char path[4 * KX_NAME_MAX + 16];
	snprintf(path, sizeof(path), "benchmarks/%s/%s/%s", kernel, pass, gpu);
	if (kx_store_dir_mtime(b->t->s, b->v, path, &dir.mtime) < 0)
		dir.mtime = 0;
	qsort(b->wl, b->wl_len, sizeof(*b->wl), wl_cmp);
	for (size_t i = 0; i < b->wl_len && r == 0; i++)
		r = add_group(b, &b->wl[i]);
	dir.len = (uint32_t)(d->ngroups - dir.first);
	d->dirs[d->ndirs++] = dir;
	b->wl_len = 0;
	return r;
}

static int tree_step(void *ctx, const char *kernel, const char *pass, const char *gpu, const char *name,
		     const struct kx_digest *workload, const struct kx_digest *group, bool cut)
{
	struct build *b = ctx;
	const char *comp[3] = { kernel, pass, gpu };
	bool same = b->in_dir;
	for (int i = 0; i < 3 && same; i++)
		same = strcmp(b->comp[i], comp[i]) == 0;
	if (!same) {
		int r = b->in_dir ? dir_end(b) : 0;
		if (r < 0)
			return r;
		for (int i = 0; i < 3; i++)
			snprintf(b->comp[i], sizeof(b->comp[i]), "%s", comp[i]);
		b->w = (struct wl_scan){ .fn = wl_add, .ctx = b };
		b->in_dir = true;
	}
	return tree_wl_feed(&b->w, name, workload, group, cut);
}

/* Every gpu directory of the path index and its groups, in path order: one scan. */
static int walk_dirs(struct build *b)
{
	int r = kx_store_tree_groups(b->t->s, b->v, tree_step, b);
	return r == 0 && b->in_dir ? dir_end(b) : r;
}

#define SCAN_THREADS_MAX 4
#define SCAN_CHUNKS 8 /* per thread: the threads finish together, whichever started late */

/*
 * The path index and every group's current runs, at once: the current runs in chunks, scanned by
 * as many threads as there are cores (up to SCAN_THREADS_MAX), this one among them once it has
 * walked the path index.
 */
static int scan_all(struct build *b)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n = cores < 1 ? 1 : cores > SCAN_THREADS_MAX ? SCAN_THREADS_MAX : (unsigned)cores;
	struct part parts[SCAN_THREADS_MAX];
	pthread_t threads[SCAN_THREADS_MAX];
	bool started[SCAN_THREADS_MAX] = { false };
	atomic_uint next = 0;
	for (unsigned i = 0; i < n; i++) {
		parts[i] = (struct part){ .t = b->t, .v = b->v, .next = &next, .chunks = SCAN_CHUNKS * n };
		started[i] = i > 0 && pthread_create(&threads[i], NULL, scan_part, &parts[i]) == 0;
	}
	int r = walk_dirs(b);
	scan_part(&parts[0]); /* and any chunks a thread that did not start would have taken */
	for (unsigned i = 1; i < n; i++)
		if (started[i])
			pthread_join(threads[i], NULL);
	for (unsigned i = 0; i < n && r == 0; i++)
		if ((r = parts[i].r) == 0)
			r = merge_part(b, &parts[i]);
	for (unsigned i = 0; i < n; i++)
		part_release(&parts[i]);
	return r;
}

/* An unordered pair of implementations a < b on a GPU, while building. */
struct entry {
	uint32_t upair, gpu;
	int64_t stamp;
};

struct upair {
	uint32_t a, b;
};

struct pairs {
	struct umap up_map, entry_map;
	struct upair *up;
	size_t nup, cap_up;
	struct entry *e;
	size_t ne, cap_e;
};

static int entry_touch(struct pairs *p, uint32_t up, uint32_t gpu, int64_t mtime)
{
	bool added = false;
	int64_t i = umap_get(&p->entry_map, (uint64_t)up << 32 | gpu, (int64_t)p->ne, &added);
	if (i < 0)
		return (int)i;
	if (added) {
		if (KX_GROW(p->e, p->cap_e, p->ne, 256) < 0)
			return -ENOMEM;
		p->e[p->ne++] = (struct entry){ up, gpu, mtime };
	} else if (p->e[i].stamp < mtime) {
		p->e[i].stamp = mtime;
	}
	return 0;
}

static const struct cmp_run *run_of(const struct cmp_data *d, const struct cmp_group *g, uint32_t impl)
{
	size_t lo = g->first, hi = (size_t)g->first + g->len;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (d->runs[mid].impl == impl)
			return &d->runs[mid];
		if (d->runs[mid].impl < impl)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The pairs that share a group, and the GPUs where they do, with their stamps. */
static int find_pairs(struct cmp_data *d, struct pairs *p)
{
	int r = 0;
	for (size_t di = 0; di < d->ndirs && r == 0; di++) {
		const struct cmp_dir *dir = &d->dirs[di];
		for (uint32_t gi = dir->first; gi < dir->first + dir->len && r == 0; gi++) {
			const struct cmp_group *g = &d->groups[gi];
			if (g->len > CMP_GROUP_PAIRS_MAX)
				continue;
			for (uint32_t i = 0; i < g->len && r == 0; i++)
				for (uint32_t j = i + 1; j < g->len && r == 0; j++) {
					uint32_t a = d->runs[g->first + i].impl, b = d->runs[g->first + j].impl;
					struct upair u = { a < b ? a : b, a < b ? b : a };
					bool added = false;
					uint64_t key = (uint64_t)u.a << 32 | u.b;
					int64_t up = umap_get(&p->up_map, key, (int64_t)p->nup, &added);
					if (up < 0 || (added && KX_GROW(p->up, p->cap_up, p->nup, 256) < 0)) {
						r = up < 0 ? (int)up : -ENOMEM;
						break;
					}
					if (added)
						p->up[p->nup++] = u;
					r = entry_touch(p, (uint32_t)up, dir->gpu, dir->mtime);
				}
		}
	}
	/* the large groups: rows of the pairs that smaller groups made */
	for (size_t di = 0; di < d->ndirs && r == 0; di++) {
		const struct cmp_dir *dir = &d->dirs[di];
		for (uint32_t gi = dir->first; gi < dir->first + dir->len && r == 0; gi++) {
			const struct cmp_group *g = &d->groups[gi];
			if (g->len <= CMP_GROUP_PAIRS_MAX)
				continue;
			for (size_t up = 0; up < p->nup && r == 0; up++)
				if (run_of(d, g, p->up[up].a) && run_of(d, g, p->up[up].b))
					r = entry_touch(p, (uint32_t)up, dir->gpu, dir->mtime);
		}
	}
	return r;
}

struct by_name {
	const char *text;
	const uint32_t *names;
};

static int by_name_cmp(const void *x, const void *y, void *arg)
{
	const struct by_name *n = arg;
	return strcmp(n->text + n->names[*(const uint32_t *)x], n->text + n->names[*(const uint32_t *)y]);
}

static int by_kx_name_cmp(const void *x, const void *y, void *arg)
{
	const struct by_name *n = arg;
	return kx_name_cmp(n->text + n->names[*(const uint32_t *)x], n->text + n->names[*(const uint32_t *)y]);
}

/* Indexes 0..n into names, in their names' order by cmp (the caller frees). */
static uint32_t *name_order(const struct cmp_data *d, const uint32_t *names, size_t n,
			    int (*cmp)(const void *, const void *, void *))
{
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	struct by_name arg = { d->text, names };
	qsort_r(order, n, sizeof(*order), cmp, &arg);
	return order;
}

/* Number the gpus in kx_name_cmp's order (their files and totals are in it) and the
 * implementations' byte order. */
static int sort_names(struct cmp_data *d)
{
	uint32_t *order = name_order(d, d->gpus, d->ngpus, by_kx_name_cmp), *rank = malloc((d->ngpus + 1) * sizeof(*rank));
	uint32_t *names = malloc((d->ngpus + 1) * sizeof(*names));
	int r = order && rank && names ? 0 : -ENOMEM;
	for (uint32_t i = 0; i < d->ngpus && r == 0; i++) {
		rank[order[i]] = i;
		names[i] = d->gpus[order[i]];
	}
	for (size_t i = 0; i < d->ndirs && r == 0; i++)
		d->dirs[i].gpu = rank[d->dirs[i].gpu];
	if (r == 0) {
		if (d->ngpus)
			memcpy(d->gpus, names, d->ngpus * sizeof(*names));
		if (!(d->impl_order = name_order(d, d->impls, d->nimpls, by_name_cmp)))
			r = -ENOMEM;
	}
	free(order);
	free(rank);
	free(names);
	return r;
}

struct opair {
	struct cmp_pair p;
	uint32_t upair;
};

static int opair_cmp(const void *x, const void *y, void *arg)
{
	return strcmp((const char *)arg + ((const struct opair *)x)->p.name,
		      (const char *)arg + ((const struct opair *)y)->p.name);
}

static int entry_cmp(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;
	if (a->upair != b->upair)
		return a->upair < b->upair ? -1 : 1;
	return a->gpu < b->gpu ? -1 : a->gpu > b->gpu;
}

static int id_cmp(const void *x, const void *y)
{
	uint64_t a = ((const struct cmp_id *)x)->id55, b = ((const struct cmp_id *)y)->id55;
	return a < b ? -1 : a > b;
}

static void path_id(const char *a, const char *b, const char *c, struct kx_digest *ret)
{
	char path[4 * KX_NAME_MAX + 32];
	snprintf(path, sizeof(path), "compare/%s%s%s", a, b, c);
	kx_sha256(path, strlen(path), ret->b);
}

/* The ordered pairs in name order, their gpu files in gpu name order, and the ids of both. */
static int make_pairs(struct cmp_data *d, struct pairs *p)
{
	struct opair *op = calloc(2 * p->nup + 1, sizeof(*op));
	size_t *first = calloc(p->nup + 1, sizeof(*first));
	int r = op && first ? 0 : -ENOMEM;
	if (p->ne) /* (no pairs: e is NULL, which qsort must not get) */
		qsort(p->e, p->ne, sizeof(*p->e), entry_cmp);
	for (size_t i = 0, u = 0; r == 0 && u <= p->nup; u++) {
		while (i < p->ne && p->e[i].upair < u)
			i++;
		first[u] = i;
	}
	for (size_t u = 0; u < p->nup && r == 0; u++)
		for (int dir = 0; dir < 2 && r == 0; dir++) {
			struct opair *o = &op[2 * u + dir];
			o->upair = (uint32_t)u;
			o->p.cand = dir ? p->up[u].b : p->up[u].a;
			o->p.base = dir ? p->up[u].a : p->up[u].b;
			char name[2 * KX_NAME_MAX + 4];
			snprintf(name, sizeof(name), "%s..%s", d->text + d->impls[o->p.cand],
				 d->text + d->impls[o->p.base]);
			int64_t off = text_add(d, name);
			if (off < 0)
				r = (int)off;
			o->p.name = (uint32_t)off;
		}
	if (r == 0) {
		qsort_r(op, 2 * p->nup, sizeof(*op), opair_cmp, d->text);
		d->npairs = 2 * p->nup;
		d->nfiles = 2 * p->ne;
		d->pairs = calloc(d->npairs + 1, sizeof(*d->pairs));
		d->files = calloc(d->nfiles + 1, sizeof(*d->files));
		d->ids = calloc(2 * d->npairs + d->nfiles + 1, sizeof(*d->ids));
		if (!d->pairs || !d->files || !d->ids)
			r = -ENOMEM;
	}
	size_t nf = 0;
	for (size_t i = 0; i < d->npairs && r == 0; i++) {
		struct cmp_pair *x = &d->pairs[i];
		*x = op[i].p;
		const char *name = d->text + x->name;
		path_id(name, "", "", &x->id);
		path_id(name, "/", "index.html", &x->html_id);
		x->first = (uint32_t)nf;
		for (size_t e = first[op[i].upair]; e < first[op[i].upair + 1]; e++) {
			struct cmp_file *f = &d->files[nf++];
			*f = (struct cmp_file){ .pair = (uint32_t)i, .gpu = p->e[e].gpu, .stamp = p->e[e].stamp };
			path_id(name, "/", d->text + d->gpus[f->gpu], &f->id);
			if (x->stamp < f->stamp)
				x->stamp = f->stamp;
			d->ids[d->nids++] = (struct cmp_id){ tree_id55(&f->id), (uint32_t)i, (int32_t)(nf - 1) };
		}
		x->len = (uint32_t)(nf - x->first);
		d->ids[d->nids++] = (struct cmp_id){ tree_id55(&x->id), (uint32_t)i, CMP_SUMMARY };
		d->ids[d->nids++] = (struct cmp_id){ tree_id55(&x->html_id), (uint32_t)i, CMP_HTML };
		if (d->mtime < x->stamp)
			d->mtime = x->stamp;
	}
	if (r == 0 && d->nids)
		qsort(d->ids, d->nids, sizeof(*d->ids), id_cmp);
	free(op);
	free(first);
	return r;
}

/* Free a generation's comparisons (their last reference is gone). */
static void cmp_free(struct cmp_data *d)
{
	if (!d)
		return;
	free(d->text);
	free(d->impls);
	free(d->impl_order);
	free(d->gpus);
	free(d->metrics);
	free(d->dirs);
	free(d->groups);
	free(d->keys);
	free(d->runs);
	free(d->pairs);
	free(d->files);
	free(d->ids);
	free(d);
}

/* A generation's comparisons, built from view v; with `runs` false, its gpu directories and their
 * groups only (no pairs). */
static int cmp_build(struct kx_tree *t, struct kx_view *v, bool runs, struct cmp_data **ret)
{
	struct cmp_data *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->generation = v ? kx_view_generation(v) : 0;
	d->refs = 1;
	struct build b = { .t = t, .v = v, .d = d };
	struct pairs p = { 0 };
	int r = runs ? scan_all(&b) : walk_dirs(&b);
	if (r == 0)
		r = sort_names(d);
	if (r == 0)
		r = find_pairs(d, &p);
	if (r == 0)
		r = make_pairs(d, &p);
	umap_release(&b.impl_map);
	umap_release(&b.gpu_map);
	umap_release(&b.group_map);
	d->keys = b.keys; /* by group, for the files made of every group (top.c) */
	free(b.wl);
	umap_release(&p.up_map);
	umap_release(&p.entry_map);
	free(p.up);
	free(p.e);
	if (r < 0) {
		cmp_free(d);
		return r;
	}
	*ret = d;
	return 0;
}

void tree_cmp_put(struct kx_tree *t, struct cmp_data *d)
{
	if (d && tree_unref(t, &d->refs))
		cmp_free(d);
}

/* The cached comparisons of generation gen, with a reference; under t->lock. */
static struct cmp_data *cached_locked(struct kx_tree *t, uint64_t gen)
{
	for (size_t i = 0; i < CMP_SLOTS; i++)
		if (t->cmp[i] && t->cmp[i]->generation == gen) {
			t->cmp[i]->refs++;
			return t->cmp[i];
		}
	return NULL;
}

int tree_cmp_get(struct kx_tree *t, struct kx_view *v, struct cmp_data **ret)
{
	if (!v) /* no generation to keep it for */
		return cmp_build(t, v, true, ret);
	uint64_t gen = kx_view_generation(v);
	pthread_mutex_lock(&t->lock);
	struct cmp_data *d = cached_locked(t, gen);
	pthread_mutex_unlock(&t->lock);
	if (d) {
		*ret = d;
		return 0;
	}
	/* one builder at a time: the others wait for its result rather than build it again */
	pthread_mutex_lock(&t->cmp_lock);
	pthread_mutex_lock(&t->lock);
	d = cached_locked(t, gen);
	pthread_mutex_unlock(&t->lock);
	int r = d ? 0 : cmp_build(t, v, true, &d);
	if (r == 0 && d->refs == 1) {
		/* keep it in place of the oldest generation, unless it is older than both */
		pthread_mutex_lock(&t->lock);
		size_t old = 0;
		for (size_t i = 1; i < CMP_SLOTS; i++)
			if (!t->cmp[i] || (t->cmp[old] && t->cmp[i]->generation < t->cmp[old]->generation))
				old = i;
		struct cmp_data *gone = NULL;
		if (!t->cmp[old] || t->cmp[old]->generation < gen) {
			gone = t->cmp[old];
			t->cmp[old] = d;
			d->refs++;
			if (gone && --gone->refs > 0)
				gone = NULL;
		}
		pthread_mutex_unlock(&t->lock);
		cmp_free(gone);
	}
	pthread_mutex_unlock(&t->cmp_lock);
	if (r < 0)
		return r;
	*ret = d;
	return 0;
}

int tree_cmp_dirs(struct kx_tree *t, struct kx_view *v, struct cmp_data **ret)
{
	return cmp_build(t, v, false, ret);
}

struct cmp_data *tree_cmp_peek(struct kx_tree *t, uint64_t generation)
{
	struct cmp_data *best = NULL;
	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < CMP_SLOTS; i++)
		if (t->cmp[i] && t->cmp[i]->generation <= generation &&
		    (!best || best->generation < t->cmp[i]->generation))
			best = t->cmp[i];
	if (best)
		best->refs++;
	pthread_mutex_unlock(&t->lock);
	return best;
}

/* Free the generations kept (kx_tree_free). */
void tree_compare_release(struct kx_tree *t)
{
	for (size_t i = 0; i < CMP_SLOTS; i++)
		cmp_free(t->cmp[i]);
}

/* ---- what a generation holds ------------------------------------------------------------------ */

static const char *pair_name(const struct cmp_data *d, size_t i)
{
	return d->text + d->pairs[i].name;
}

static const char *file_gpu(const struct cmp_data *d, size_t i)
{
	return d->text + d->gpus[d->files[i].gpu];
}

/* The index in [lo, hi) whose name_at is `name`, the names in cmp's order there; or -1. */
static ssize_t bisect(const struct cmp_data *d, size_t lo, size_t hi, const char *name,
		      const char *(*name_at)(const struct cmp_data *d, size_t i), int (*cmp)(const char *, const char *))
{
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = cmp(name, name_at(d, mid));
		if (c == 0)
			return (ssize_t)mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* The pair named "<cand>..<base>", or -1. */
static ssize_t pair_named(const struct cmp_data *d, const char *name)
{
	return bisect(d, 0, d->npairs, name, pair_name, strcmp);
}

const char *tree_cmp_group_name(const struct cmp_data *d, size_t i)
{
	return d->text + d->groups[i].name;
}

ssize_t tree_cmp_pair_of(const struct cmp_data *d, const char *cand, const char *base)
{
	char name[2 * KX_NAME_MAX + 4];
	snprintf(name, sizeof(name), "%s..%s", cand, base);
	return pair_named(d, name);
}

ssize_t tree_cmp_file_of(const struct cmp_data *d, size_t pair, const char *gpu)
{
	const struct cmp_pair *p = &d->pairs[pair];
	return bisect(d, p->first, (size_t)p->first + p->len, gpu, file_gpu, kx_name_cmp);
}

struct kx_node tree_cmp_pair_node(const struct cmp_data *d, size_t pair)
{
	return (struct kx_node){ .type = KX_NODE_COMPARE_PAIR, .id = d->pairs[pair].id };
}

struct kx_node tree_cmp_file_node(const struct cmp_data *d, size_t pair, ssize_t file)
{
	const struct cmp_pair *p = &d->pairs[pair];
	if (file == CMP_HTML)
		return (struct kx_node){ .type = KX_NODE_COMPARE_FILE, .file = KX_CF_INDEX_HTML, .id = p->html_id };
	if (file < 0)
		return (struct kx_node){ .type = KX_NODE_COMPARE_FILE, .file = KX_CF_SUMMARY, .id = p->id };
	return (struct kx_node){ .type = KX_NODE_COMPARE_FILE, .file = KX_CF_GPU, .id = d->files[file].id };
}

/* The kind of a pair's file (KX_NODE_COMPARE_FILE's file) of a file index. */
static uint8_t file_kind(ssize_t file)
{
	return file == CMP_HTML ? KX_CF_INDEX_HTML : file < 0 ? KX_CF_SUMMARY : KX_CF_GPU;
}

/* What 55 bits of an id name: 0 with its pair and file (CMP_SUMMARY: the pair or its summary.tsv),
 * -ENOENT, or -EIO where two of them share those bits. */
static int find_id(const struct cmp_data *d, uint64_t id55, size_t *ret_pair, ssize_t *ret_file)
{
	size_t lo = 0, hi = d->nids;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (d->ids[mid].id55 < id55)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == d->nids || d->ids[lo].id55 != id55)
		return -ENOENT;
	if (lo + 1 < d->nids && d->ids[lo + 1].id55 == id55)
		return -EIO;
	*ret_pair = d->ids[lo].pair;
	*ret_file = d->ids[lo].file;
	return 0;
}

/* The pair and file (CMP_SUMMARY: none, or summary.tsv) of node n in d; -ENOENT when n is not there. */
static int locate(const struct cmp_data *d, const struct kx_node *n, size_t *ret_pair, ssize_t *ret_file)
{
	size_t pair;
	ssize_t file;
	int r = find_id(d, tree_id55(&n->id), &pair, &file);
	if (r < 0)
		return r;
	struct kx_node want = n->type == KX_NODE_COMPARE_PAIR ? tree_cmp_pair_node(d, pair)
							      : tree_cmp_file_node(d, pair, file);
	if (!kx_digest_equal(&want.id, &n->id) || want.type != n->type || want.file != n->file)
		return -ENOENT;
	*ret_pair = pair;
	*ret_file = file;
	return 0;
}

/* ---- the tree's operations on compare/ -------------------------------------------------------- */

int tree_compare_node(struct kx_tree *t, struct kx_view *v, uint64_t ino, struct kx_node *ret)
{
	struct kx_node n = { 0 };
	tree_ino_kind(ino, &n);
	if (n.type == KX_NODE_COMPARE) {
		*ret = n;
		return (ino & BITS55) || n.file ? -ENOENT : 0;
	}
	struct cmp_data *d;
	int r = tree_cmp_get(t, v, &d);
	if (r < 0)
		return r;
	size_t pair;
	ssize_t file;
	r = find_id(d, ino & BITS55, &pair, &file);
	/* a file's number made back from a version's (src/fs/versions.c) has file 0, whichever it is */
	if (r == 0 && n.type == KX_NODE_COMPARE_PAIR)
		r = file == CMP_SUMMARY && n.file == 0 ? 0 : -ENOENT;
	else if (r == 0 && n.file != 0 && n.file != file_kind(file))
		r = -ENOENT;
	if (r == 0)
		*ret = n.type == KX_NODE_COMPARE_PAIR ? tree_cmp_pair_node(d, pair) : tree_cmp_file_node(d, pair, file);
	tree_cmp_put(t, d);
	return r;
}

/* A node of compare/ in the comparisons of its view: them (a reference: tree_cmp_put), and for a pair
 * or a file its pair and file (CMP_SUMMARY: none, or summary.tsv). */
struct at {
	struct cmp_data *d;
	size_t pair;
	ssize_t file;
};

static int at_node(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct at *ret)
{
	*ret = (struct at){ .file = CMP_SUMMARY };
	int r = tree_cmp_get(t, v, &ret->d);
	if (r < 0) {
		ret->d = NULL;
		return r;
	}
	return n->type == KX_NODE_COMPARE ? 0 : locate(ret->d, n, &ret->pair, &ret->file);
}

/* The names of a pair's files that are not gpu files, in name order: each before any gpu file's
 * name after it in the listing (a gpu named "summary" has no file). */
static const struct {
	const char *name;
	int file;
} pair_files[] = { { "index.html", CMP_HTML }, { "summary.tsv", CMP_SUMMARY } };

/* A pair's file named name into *ret_file (a gpu file's index, CMP_SUMMARY or CMP_HTML); -ENOENT. */
static int file_named(const struct cmp_data *d, size_t pair, const char *name, ssize_t *ret_file)
{
	char gpu[KX_NAME_MAX];
	size_t len = strlen(name);
	ssize_t file;
	for (size_t i = 0; i < KX_ARRAY_SIZE(pair_files); i++)
		if (strcmp(name, pair_files[i].name) == 0) {
			*ret_file = pair_files[i].file;
			return 0;
		}
	if (len < 5 || len - 4 >= sizeof(gpu) || strcmp(name + len - 4, ".tsv") != 0)
		return -ENOENT;
	snprintf(gpu, sizeof(gpu), "%.*s", (int)(len - 4), name);
	if ((file = tree_cmp_file_of(d, pair, gpu)) < 0)
		return -ENOENT;
	*ret_file = file;
	return 0;
}

/* compare/index.html: a page of the tree's, listed after the pairs (files after directories) */
static const struct kx_node compare_html = { .type = KX_NODE_HTML, .file = KX_HTML_COMPARE };

int tree_compare_lookup(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir, const char *name,
		   struct kx_node *ret)
{
	struct at a;
	int r = at_node(t, v, dir, &a);
	ssize_t i = -1;
	if (r == 0 && dir->type == KX_NODE_COMPARE && strcmp(name, "index.html") == 0)
		*ret = compare_html;
	else if (r == 0 && dir->type == KX_NODE_COMPARE && (i = pair_named(a.d, name)) >= 0)
		*ret = tree_cmp_pair_node(a.d, (size_t)i);
	else if (r == 0 && dir->type == KX_NODE_COMPARE_PAIR && file_named(a.d, a.pair, name, &i) == 0)
		*ret = tree_cmp_file_node(a.d, a.pair, i);
	else if (r == 0)
		r = -ENOENT;
	tree_cmp_put(t, a.d);
	return r;
}

/* A pair's file's name into out ("<gpu>.tsv", "summary.tsv", "index.html"). */
static void file_name(const struct cmp_data *d, ssize_t file, char *out, size_t cap)
{
	if (file == CMP_HTML)
		snprintf(out, cap, "index.html");
	else if (file < 0)
		snprintf(out, cap, "summary.tsv");
	else
		snprintf(out, cap, "%s.tsv", file_gpu(d, (size_t)file));
}

int tree_compare_readdir(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir, kx_dirent_fn fn, void *ctx)
{
	struct at a;
	int r = at_node(t, v, dir, &a);
	const struct cmp_data *d = a.d;
	if (r == 0 && dir->type == KX_NODE_COMPARE) {
		for (size_t i = 0; i < d->npairs && r == 0; i++) {
			struct kx_node n = tree_cmp_pair_node(d, i);
			r = fn(ctx, pair_name(d, i), &n);
		}
		if (r == 0)
			r = fn(ctx, "index.html", &compare_html);
	} else if (r == 0) {
		/* its gpu files, index.html and summary.tsv, in name order */
		const struct cmp_pair *p = &d->pairs[a.pair];
		size_t end = (size_t)p->first + p->len, k = 0;
		for (size_t i = p->first; i <= end && r == 0; i++) {
			char name[KX_NAME_MAX + 8];
			if (i < end)
				file_name(d, (ssize_t)i, name, sizeof(name));
			for (; k < KX_ARRAY_SIZE(pair_files) && r == 0; k++) {
				if (i < end && strcmp(name, pair_files[k].name) < 0)
					break; /* after this gpu file */
				struct kx_node n = tree_cmp_file_node(d, a.pair, pair_files[k].file);
				r = fn(ctx, pair_files[k].name, &n);
			}
			if (r == 0 && i < end && strcmp(name, "summary.tsv") != 0) {
				struct kx_node n = tree_cmp_file_node(d, a.pair, (ssize_t)i);
				r = fn(ctx, name, &n);
			}
		}
	}
	tree_cmp_put(t, a.d);
	return r;
}

int tree_compare_parent(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct kx_node *ret)
{
	if (n->type != KX_NODE_COMPARE_FILE) {
		*ret = (struct kx_node){ .type = n->type == KX_NODE_COMPARE ? KX_NODE_ROOT : KX_NODE_COMPARE };
		return 0;
	}
	struct at a;
	int r = at_node(t, v, n, &a);
	if (r == 0)
		*ret = tree_cmp_pair_node(a.d, a.pair);
	tree_cmp_put(t, a.d);
	return r;
}

int tree_compare_attr(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t *ret_stamp,
		 uint32_t *ret_nlink)
{
	struct at a;
	int r = at_node(t, v, n, &a);
	if (r == 0 && n->type == KX_NODE_COMPARE) {
		*ret_stamp = a.d->mtime;
		*ret_nlink = (uint32_t)(2 + a.d->npairs);
	} else if (r == 0) {
		*ret_stamp = a.file < 0 ? a.d->pairs[a.pair].stamp : a.d->files[a.file].stamp;
		*ret_nlink = n->type == KX_NODE_COMPARE_PAIR ? 2 : 1;
	}
	tree_cmp_put(t, a.d);
	return r;
}

int64_t tree_compare_mtime(struct kx_tree *t, struct kx_view *v, int64_t stamp)
{
	if (stamp)
		return stamp;
	struct kx_store_stats st; /* nothing compared yet */
	kx_store_stats(t->s, v, &st);
	return st.created_ns;
}

int tree_compare_file_name(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, char *out, size_t cap)
{
	struct at a;
	int r = at_node(t, v, n, &a);
	if (r == 0)
		file_name(a.d, a.file, out, cap);
	tree_cmp_put(t, a.d);
	return r;
}

/* The rows of a pair's file: on one gpu (the gpu file's), or every one (summary.tsv); for a gpu
 * file with each side's version, read from its run record (*ret_runs holds those copies of the
 * runs: the caller frees it with the rows). */
static int rows_of(struct kx_tree *t, struct kx_view *v, const struct cmp_data *d, size_t pair, ssize_t file,
		   struct kx_compare_row **ret, size_t *ret_n, struct cmp_versioned **ret_runs)
{
	const struct cmp_pair *p = &d->pairs[pair];
	struct kx_compare_row *rows = NULL;
	struct cmp_versioned *runs = NULL;
	size_t n = 0, cap = 0;
	int r = 0;
	for (size_t di = 0; di < d->ndirs && r == 0; di++) {
		const struct cmp_dir *dir = &d->dirs[di];
		if (file >= 0 && dir->gpu != d->files[file].gpu)
			continue;
		for (uint32_t gi = dir->first; gi < dir->first + dir->len && r == 0; gi++) {
			const struct cmp_group *g = &d->groups[gi];
			const struct cmp_run *c = run_of(d, g, p->cand), *b = c ? run_of(d, g, p->base) : NULL;
			if (!b)
				continue;
			if (KX_GROW(rows, cap, n, 64) < 0) {
				r = -ENOMEM;
				break;
			}
			rows[n++] = (struct kx_compare_row){ .kernel = d->text + dir->kernel,
							     .pass = d->text + dir->pass,
							     .metric = d->text + d->metrics[dir->metric],
							     .gpu = d->text + d->gpus[dir->gpu],
							     .workload = d->text + g->name,
							     .cand = &c->r,
							     .base = &b->r };
		}
	}
	if (r == 0 && file >= 0 && n && !(runs = calloc(2 * n, sizeof(*runs))))
		r = -ENOMEM;
	for (size_t i = 0; runs && i < 2 * n && r == 0; i++) {
		/* a run of the view's generation has its record (a failed read: the version is not known) */
		const struct cmp_run *x = (const struct cmp_run *)((const char *)(i % 2 ? rows[i / 2].base : rows[i / 2].cand) -
								   offsetof(struct cmp_run, r));
		struct kx_run_rec rec;
		runs[i].r = x->r;
		if (kx_store_get_run(t->s, v, &x->run, &rec) == 0)
			snprintf(runs[i].version, sizeof(runs[i].version), "%s", rec.version);
		runs[i].r.version = runs[i].version;
		if (i % 2)
			rows[i / 2].base = &runs[i].r;
		else
			rows[i / 2].cand = &runs[i].r;
	}
	if (r < 0) {
		free(rows);
		free(runs);
		return r;
	}
	*ret = rows;
	*ret_n = n;
	if (ret_runs)
		*ret_runs = runs;
	else
		free(runs);
	return 0;
}

int tree_compare_render(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct kx_buf *out)
{
	struct at a;
	struct kx_compare_row *rows = NULL;
	struct cmp_versioned *runs = NULL;
	size_t len;
	int r = at_node(t, v, n, &a);
	if (r == 0 && (r = rows_of(t, v, a.d, a.pair, a.file, &rows, &len, &runs)) == 0)
		r = a.file < 0 ? kx_render_compare_summary(rows, len, out) : kx_render_compare_gpu(rows, len, out);
	free(rows);
	free(runs);
	tree_cmp_put(t, a.d);
	return r;
}

/* The index of metric m in the metrics' name order (the order of a pair's totals on one gpu). */
static uint32_t *metric_order(const struct cmp_data *d)
{
	uint32_t *order = name_order(d, d->metrics, d->nmetrics, by_name_cmp), *rank = NULL;
	if (order && (rank = malloc((d->nmetrics + 1) * sizeof(*rank))))
		for (uint32_t i = 0; i < d->nmetrics; i++)
			rank[order[i]] = i;
	free(order);
	return rank;
}

/* Every pair's totals on each of its gpus and each metric (its summary.tsv's total lines), into
 * out[file * nmetrics + metric in name order]: one pass over the groups, each group adding to the
 * pairs of its current runs. */
static void pair_totals(const struct cmp_data *d, const uint32_t *mrank, struct kx_html_pair *out)
{
	for (size_t di = 0; di < d->ndirs; di++) {
		const struct cmp_dir *dir = &d->dirs[di];
		const char *gpu = d->text + d->gpus[dir->gpu];
		size_t m = mrank[dir->metric];
		for (uint32_t gi = dir->first; gi < dir->first + dir->len; gi++) {
			const struct cmp_group *g = &d->groups[gi];
			const struct cmp_run *runs = &d->runs[g->first];
			if (g->len > CMP_GROUP_PAIRS_MAX) {
				/* a large group adds rows only to the pairs that smaller groups made */
				for (size_t p = 0; p < d->npairs; p++) {
					const struct cmp_run *c = run_of(d, g, d->pairs[p].cand);
					const struct cmp_run *b = c ? run_of(d, g, d->pairs[p].base) : NULL;
					ssize_t f = b ? tree_cmp_file_of(d, p, gpu) : -1;
					if (f >= 0)
						kx_compare_totals_add(&out[(size_t)f * d->nmetrics + m].totals, &c->r, &b->r);
				}
				continue;
			}
			for (uint32_t i = 0; i < g->len; i++)
				for (uint32_t j = 0; j < g->len; j++) {
					if (i == j)
						continue;
					ssize_t p = tree_cmp_pair_of(d, d->text + d->impls[runs[i].impl],
								d->text + d->impls[runs[j].impl]);
					ssize_t f = p >= 0 ? tree_cmp_file_of(d, (size_t)p, gpu) : -1;
					if (f >= 0)
						kx_compare_totals_add(&out[(size_t)f * d->nmetrics + m].totals, &runs[i].r,
								      &runs[j].r);
				}
		}
	}
}

int tree_compare_page(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir, struct cmp_page *ret)
{
	struct at a;
	*ret = (struct cmp_page){ 0 };
	int r = at_node(t, v, dir, &a);
	const struct cmp_data *d = a.d;
	if (r == 0 && dir->type == KX_NODE_COMPARE_PAIR) {
		ret->cand = d->text + d->impls[d->pairs[a.pair].cand];
		ret->base = d->text + d->impls[d->pairs[a.pair].base];
		r = rows_of(t, v, d, a.pair, CMP_SUMMARY, &ret->rows, &ret->nrows, NULL);
	} else if (r == 0 && dir->type == KX_NODE_COMPARE) {
		/* a slot for each gpu file and metric, in pair, gpu and metric order; the empty ones left out */
		size_t slots = d->nfiles * d->nmetrics;
		uint32_t *mrank = metric_order(d), *mname = calloc(d->nmetrics + 1, sizeof(*mname));
		if (!mrank || !mname || !(ret->pairs = calloc(slots + 1, sizeof(*ret->pairs))))
			r = -ENOMEM;
		for (size_t i = 0; i < d->nmetrics && r == 0; i++)
			mname[mrank[i]] = d->metrics[i];
		if (r == 0)
			pair_totals(d, mrank, ret->pairs);
		for (size_t i = 0; i < slots && r == 0; i++) {
			const struct cmp_file *f = &d->files[i / d->nmetrics];
			if (!ret->pairs[i].totals.groups)
				continue;
			ret->pairs[ret->npairs++] = (struct kx_html_pair){
				.name = pair_name(d, f->pair), .gpu = d->text + d->gpus[f->gpu],
				.metric = d->text + mname[i % d->nmetrics], .totals = ret->pairs[i].totals };
		}
		free(mrank);
		free(mname);
	} else if (r == 0) {
		r = -ENOTDIR;
	}
	ret->d = a.d;
	if (r < 0)
		tree_compare_page_release(t, ret);
	return r;
}

void tree_compare_page_release(struct kx_tree *t, struct cmp_page *p)
{
	free(p->rows);
	free(p->pairs);
	tree_cmp_put(t, p->d);
	*p = (struct cmp_page){ 0 };
}

int kx_tree_compare_impls(struct kx_tree *t, struct kx_view *v, int (*fn)(void *ctx, const char *impl), void *ctx)
{
	struct at a;
	int r = at_node(t, v, &(struct kx_node){ .type = KX_NODE_COMPARE }, &a);
	for (size_t i = 0; r == 0 && i < a.d->nimpls; i++)
		r = fn(ctx, a.d->text + a.d->impls[a.d->impl_order[i]]);
	tree_cmp_put(t, a.d);
	return r;
}
