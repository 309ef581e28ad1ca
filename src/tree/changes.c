// SPDX-License-Identifier: MIT
/*
 * What a store change touched: kx_tree_changes compares two views and reports each inode and
 * directory entry that changed, purging from the tree's caches the one change a stamp cannot
 * see (a document stored after the runs that named it).
 */
#include "private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- what a store change touched -------------------------------------------------------------- */

struct names {
	char **v;
	size_t len, cap;
};

static int names_add(void *ctx, const char *name, const struct kx_node *n)
{
	struct names *x = ctx;
	if (KX_GROW(x->v, x->cap, x->len, 32) < 0)
		return -ENOMEM;
	if (!(x->v[x->len] = strdup(name)))
		return -ENOMEM;
	x->len++;
	return 0;
}

static void names_release(struct names *x)
{
	for (size_t i = 0; i < x->len; i++)
		free(x->v[i]);
	free(x->v);
	memset(x, 0, sizeof(*x));
}

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of a directory, sorted; a directory that does not exist in v is empty. */
static int names_of(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir, struct names *out)
{
	int r = kx_tree_readdir(t, v, dir, names_add, out);
	if (r == -ENOENT || r == -ESTALE)
		r = 0;
	if (r == 0 && out->len)
		qsort(out->v, out->len, sizeof(*out->v), strp_cmp);
	return r;
}

struct changes {
	struct kx_tree *t;
	struct kx_view *before, *after;
	kx_inval_fn fn;
	kx_held_fn held;
	void *ctx;
};

static bool may_hold(struct changes *c, const struct kx_node *dir)
{
	return !c->held || c->held(c->ctx, kx_tree_ino(dir));
}

static int inval(struct changes *c, enum kx_inval what, const struct kx_node *n, const char *name)
{
	return c->fn(c->ctx, what, kx_tree_ino(n), name, KX_STAMP_NONE);
}

/* A versioned file (kx_node_versioned) changed: with the stamp it had in `before`. */
static int inval_versioned(struct changes *c, enum kx_inval what, const struct kx_node *n, int64_t before)
{
	return c->fn(c->ctx, what, kx_tree_ino(n), NULL, before);
}

/* The stamp a group's files had in `before` (their gpu directory's mtime); none if it is new. */
static int64_t stamp_before(struct changes *c, const struct kx_digest *key)
{
	int64_t stamp;
	return tree_group_stamp(c->t, c->before, key, &stamp) == 0 ? stamp : KX_STAMP_NONE;
}

/* An ENTRY for every name in one listing of dir and not the other; *ret_differs when any. */
static int diff_dir(struct changes *c, const struct kx_node *dir, bool *ret_differs)
{
	struct names a = { 0 }, b = { 0 };
	int r = names_of(c->t, c->before, dir, &a);
	if (r == 0)
		r = names_of(c->t, c->after, dir, &b);
	size_t i = 0, j = 0;
	bool differs = false;
	while (r == 0 && (i < a.len || j < b.len)) {
		int cmp = i == a.len ? 1 : j == b.len ? -1 : strcmp(a.v[i], b.v[j]);
		if (cmp == 0) {
			i++;
			j++;
			continue;
		}
		differs = true;
		r = inval(c, KX_INVAL_ENTRY, dir, cmp < 0 ? a.v[i++] : b.v[j++]);
	}
	names_release(&a);
	names_release(&b);
	if (r == 0 && ret_differs)
		*ret_differs = differs;
	return r;
}

/*
 * A run's manifest.json, at each place `types` names, when the run, stored before (its callers see
 * to that), gained a signature (SPEC §10: a later copy of the run, signed, touches its group): a new
 * version, with the stamp it had.
 */
static int inval_signed_run(struct changes *c, const struct kx_run_rec *run, const uint8_t *types, size_t ntypes)
{
	uint32_t was, now;
	int64_t stamp;
	int r = tree_signature_count(c->t, c->before, &run->run, &was);
	if (r < 0 || (r = tree_signature_count(c->t, c->after, &run->run, &now)) < 0 || was == now)
		return r;
	if ((r = tree_manifest_stamp(c->t, c->before, run, &stamp)) < 0)
		return r;
	for (size_t k = 0; k < ntypes && r == 0; k++) {
		struct kx_node n = { .type = types[k], .file = KX_RF_MANIFEST, .id = run->run };
		r = inval_versioned(c, KX_INVAL_DATA, &n, stamp);
	}
	return r;
}

/*
 * A run stored before (its callers see to that) that gained an attestation (SPEC §8; its group is
 * touched): at each place `dirs` names, its directory lists attestations/ now, and that lists
 * another file — the names that came and went, and both listings.
 */
static int inval_attested_run(struct changes *c, const struct kx_run_rec *run, const uint8_t *dirs, size_t ndirs,
			      uint8_t file)
{
	int (*count)(struct kx_tree *, struct kx_view *, const struct kx_digest *, uint32_t *) =
		file == TREE_ARTIFACTS_FILE ? tree_artifact_count : tree_attestation_count;
	uint32_t was, now;
	int r = count(c->t, c->before, &run->run, &was);
	if (r < 0 || (r = count(c->t, c->after, &run->run, &now)) < 0 || was == now)
		return r;
	for (size_t k = 0; k < 2 * ndirs && r == 0; k++) {
		struct kx_node d = { .type = dirs[k / 2], .file = k % 2 ? file : 0, .id = run->run };
		if ((r = diff_dir(c, &d, NULL)) == 0)
			r = inval(c, KX_INVAL_DATA, &d, NULL);
	}
	return r;
}

/* inval_signed_run and inval_attested_run for each run of group x, in both places; nothing is read
 * for a store that holds no signature, or no attestation. */
static int inval_extras(struct changes *c, const struct gctx *x)
{
	static const uint8_t types[] = { KX_NODE_RUN_FILE, KX_NODE_RUNS_FILE }, dirs[] = { KX_NODE_RUN, KX_NODE_RUNS_RUN };
	bool sigs, atts, arts = false;
	int r = tree_store_has(c->t, c->after, TREE_SIGNATURES, &sigs);
	if (r == 0)
		r = tree_store_has(c->t, c->after, TREE_ATTESTATIONS, &atts);
	if (r == 0)
		r = tree_store_has(c->t, c->after, TREE_ARTIFACTS, &arts);
	for (size_t i = 0; i < x->len && r == 0 && (sigs || atts || arts); i++) {
		const struct kx_run_rec *run = &x->runs[i];
		if (run->generation > kx_view_generation(c->before))
			continue; /* new: no kernel holds it */
		if (sigs)
			r = inval_signed_run(c, run, types, KX_ARRAY_SIZE(types));
		if (r == 0 && atts)
			r = inval_attested_run(c, run, dirs, KX_ARRAY_SIZE(dirs), TREE_ATTESTATIONS_FILE);
		if (r == 0 && arts) /* SPEC §9: bytes it announced arrived */
			r = inval_attested_run(c, run, dirs, KX_ARRAY_SIZE(dirs), TREE_ARTIFACTS_FILE);
	}
	return r;
}

/* A run's files whose bytes follow its group (tree_rank_dependent: their stamp is the gpu
 * directory's): rank, path, aliases and signatures, and the page that shows them all */
static const uint8_t rank_files[] = { KX_RF_SUMMARY, KX_RF_SHA256SUMS, KX_RF_DIGESTS, KX_RF_SIGNATURES,
				      KX_RF_INDEX_HTML };

/* The files of every run in a group whose content (DATA) or only mtime (ATTR) changed. */
static int inval_group(struct changes *c, const struct kx_digest *key, enum kx_inval what)
{
	struct kx_node g = { .type = KX_NODE_GROUP, .id = *key };
	int r = inval(c, what, &g, NULL);
	int64_t before = stamp_before(c, key);
	for (int f = 0; f < KX_GF__COUNT && r == 0; f++) {
		struct kx_node n = { .type = KX_NODE_GROUP_FILE, .file = (uint8_t)f, .id = *key };
		r = inval_versioned(c, what, &n, before);
	}
	struct gctx *x = NULL;
	if (r != 0 || (r = tree_gctx_get(c->t, c->after, key, &x)) < 0)
		return r;
	static const uint8_t types[] = { KX_NODE_RUN_FILE, KX_NODE_RUNS_FILE };
	const size_t nf = KX_ARRAY_SIZE(rank_files);
	for (size_t i = 0; i < x->len && r == 0; i++)
		for (size_t k = 0; k < KX_ARRAY_SIZE(types) * nf && r == 0; k++) {
			struct kx_node n = { .type = types[k / nf], .file = rank_files[k % nf], .id = x->runs[i].run };
			r = inval_versioned(c, what, &n, before);
		}
	if (r == 0 && what == KX_INVAL_DATA)
		r = inval_extras(c, x);
	tree_gctx_put(c->t, x);
	return r;
}

static bool digest_in(const struct kx_digest *set, size_t n, const struct kx_digest *d)
{
	for (size_t i = 0; i < n; i++)
		if (kx_digest_equal(&set[i], d))
			return true;
	return false;
}

struct group_walk {
	struct changes *c;
	const struct kx_digest *changed; /* groups with new runs */
	size_t n_changed;
	struct names renamed;            /* workload directory names that are new in `after` */
	int err;
};

static int group_step(void *ctx, const char *name, const struct kx_node *n)
{
	struct group_walk *w = ctx;
	bool renamed = false;
	if (n->type != KX_NODE_GROUP)
		return 0; /* sweep.tsv: told with the path (changes_gpu) */
	for (size_t i = 0; i < w->renamed.len && !renamed; i++)
		renamed = strcmp(w->renamed.v[i], name) == 0;
	if (digest_in(w->changed, w->n_changed, &n->id) || renamed) {
		int r = diff_dir(w->c, n, NULL);
		return r ? r : inval_group(w->c, &n->id, KX_INVAL_DATA);
	}
	/* a sibling: same content, but its mtimes are the gpu directory's, which moved */
	return inval_group(w->c, &n->id, KX_INVAL_ATTR);
}

static int collect_new_names(void *ctx, enum kx_inval what, uint64_t ino, const char *name, int64_t stamp)
{
	return what == KX_INVAL_ENTRY ? names_add(ctx, name, NULL) : 0;
}

/* A benchmark directory's files (gpus.tsv, sweep.tsv, sweep.svg): their bytes follow every run
 * below it. */
static int inval_bench_file(struct changes *c, const struct kx_node *dir)
{
	struct kx_node f[BENCH_FILES_MAX];
	size_t nf = tree_bench_files_of(dir, f);
	int r = 0;
	for (size_t i = 0; i < nf && r >= 0; i++) {
		int64_t before;
		if ((r = tree_bench_file_stamp(c->t, c->before, &f[i], &before)) >= 0)
			r = inval_versioned(c, KX_INVAL_DATA, &f[i], before);
	}
	return r;
}

/*
 * Everything below one gpu directory, and the path down to it; with its pass directory's files
 * when `pass_first` (the first gpu directory of its pass in this change: those files are told
 * once), and its kernel directory's when `kernel_first` (likewise).
 */
static int changes_gpu(struct changes *c, const struct kx_group_rec *g, const struct kx_digest *groups, size_t n,
		       bool kernel_first, bool pass_first)
{
	char comp[3][KX_NAME_MAX] = { { 0 } };
	snprintf(comp[0], KX_NAME_MAX, "%s", g->kernel);
	snprintf(comp[1], KX_NAME_MAX, "%s", g->pass);
	snprintf(comp[2], KX_NAME_MAX, "%s", g->gpu);
	struct kx_node parent = { .type = KX_NODE_BENCHMARKS }, node;
	int r = 0;
	for (uint8_t d = 1; d <= 3 && r == 0; d++) {
		if ((r = tree_bench_node(c->t, d, comp, &node)) < 0)
			return r;
		struct kx_node probe;
		bool is_new = kx_tree_lookup(c->t, c->before, &parent, comp[d - 1], &probe) == -ENOENT;
		if (is_new)
			r = inval(c, KX_INVAL_ENTRY, &parent, comp[d - 1]);
		/* a new child changes the listing; otherwise only mtime and nlink moved */
		if (r == 0 && d > 1)
			r = inval(c, is_new ? KX_INVAL_DATA : KX_INVAL_ATTR, &parent, NULL);
		/* a new directory's file is new with it: nobody can hold it yet */
		if (r == 0 && !is_new && (d == 3 || (d == 2 && pass_first) || (d == 1 && kernel_first)))
			r = inval_bench_file(c, &node);
		parent = node;
	}
	if (r < 0)
		return r;
	/*
	 * Nothing below this directory can be cached where it is not held, and nothing of runs/ where
	 * runs/ is not: then the listing is all (one group's change moves every group's mtimes here,
	 * and walking them all is most of a round's work).
	 */
	struct kx_node runs_dir = { .type = KX_NODE_RUNS };
	if (!may_hold(c, &parent) && !may_hold(c, &runs_dir))
		return inval(c, KX_INVAL_DATA, &parent, NULL);
	/* the workload level: new groups, and groups whose name gained a ~suffix beside a new one */
	struct group_walk w = { .c = c, .changed = groups, .n_changed = n };
	struct changes collect = *c;
	collect.fn = collect_new_names;
	collect.ctx = &w.renamed;
	bool differs = false;
	r = diff_dir(&collect, &parent, &differs);
	for (size_t i = 0; i < w.renamed.len && r == 0; i++)
		r = inval(c, KX_INVAL_ENTRY, &parent, w.renamed.v[i]);
	if (r == 0)
		r = inval(c, KX_INVAL_DATA, &parent, NULL);
	if (r == 0)
		r = kx_tree_readdir(c->t, c->after, &parent, group_step, &w);
	names_release(&w.renamed);
	return r;
}

/* ---- compare/ --------------------------------------------------------------------------------- */

/* A pair's gpu file that a change may have touched, by its names. */
struct touch {
	char cand[KX_NAME_MAX], base[KX_NAME_MAX], gpu[KX_NAME_MAX];
};

struct touches {
	struct touch *v;
	size_t len, cap;
	struct names big;      /* the implementations of a group too large to form pairs, sorted */
	const char *big_gpu;
};

static int touch_add(struct touches *x, const char *cand, const char *base, const char *gpu)
{
	if (KX_GROW(x->v, x->cap, x->len, 64) < 0)
		return -ENOMEM;
	struct touch *t = &x->v[x->len++];
	snprintf(t->cand, sizeof(t->cand), "%s", cand);
	snprintf(t->base, sizeof(t->base), "%s", base);
	snprintf(t->gpu, sizeof(t->gpu), "%s", gpu);
	return 0;
}

static int touch_cmp(const void *x, const void *y)
{
	const struct touch *a = x, *b = y;
	int c = strcmp(a->cand, b->cand);
	if (!c)
		c = strcmp(a->base, b->base);
	return c ? c : strcmp(a->gpu, b->gpu);
}

static bool in_big(const struct touches *x, const char *impl)
{
	return bsearch(&impl, x->big.v, x->big.len, sizeof(*x->big.v), strp_cmp) != NULL;
}

/* The pairs a large group adds rows to: those of `d` and those found so far. */
static int touch_big(struct touches *x, const struct cmp_data *d)
{
	int r = 0;
	for (size_t i = 0; i < d->npairs && r == 0; i++) {
		const char *cand = d->text + d->impls[d->pairs[i].cand], *base = d->text + d->impls[d->pairs[i].base];
		if (in_big(x, cand) && in_big(x, base))
			r = touch_add(x, cand, base, x->big_gpu);
	}
	for (size_t i = 0, n = x->len; i < n && r == 0; i++)
		if (in_big(x, x->v[i].cand) && in_big(x, x->v[i].base))
			r = touch_add(x, x->v[i].cand, x->v[i].base, x->big_gpu);
	return r;
}

struct touch_walk {
	struct changes *c;
	const struct cmp_data *d;
	const char *gpu;
	struct touches *out;
};

/* A group of a gpu directory that received runs: every pair of its current runs in `after`. */
static int touch_group(void *ctx, const char *name, const struct kx_node *n)
{
	struct touch_walk *w = ctx;
	struct gctx *g;
	int r = tree_gctx_get(w->c->t, w->c->after, &n->id, &g);
	if (r < 0)
		return r;
	struct touches *x = w->out;
	x->big.len = 0;
	for (uint32_t i = 0; i < g->ranked && r == 0; i++)
		if (g->runs[i].has_value)
			r = names_add(&x->big, g->runs[i].impl, NULL);
	if (r == 0 && x->big.len <= CMP_GROUP_PAIRS_MAX) {
		for (size_t i = 0; i < x->big.len && r == 0; i++)
			for (size_t j = 0; j < x->big.len && r == 0; j++)
				if (i != j)
					r = touch_add(x, x->big.v[i], x->big.v[j], w->gpu);
	} else if (r == 0) {
		qsort(x->big.v, x->big.len, sizeof(*x->big.v), strp_cmp);
		x->big_gpu = w->gpu;
		r = touch_big(x, w->d);
	}
	for (size_t i = 0; i < x->big.len; i++)
		free(x->big.v[i]);
	x->big.len = 0;
	tree_gctx_put(w->c->t, g);
	return r;
}

/*
 * compare/: the files of every pair sharing a group below a gpu directory that received runs —
 * which moved their stamp (compare.c) — with the stamps they had in the newest comparisons kept
 * of `before` or earlier (what the kernel may hold was looked up in those, or is no longer named:
 * a file changed since was told then), and the names that are new. Where none were kept, nothing
 * of compare/ was ever looked up.
 */
static int changes_compare(struct changes *c, const struct kx_group_rec *gpus, size_t n)
{
	struct kx_node dir = { .type = KX_NODE_COMPARE };
	if (!may_hold(c, &dir))
		return 0;
	struct cmp_data *d = tree_cmp_peek(c->t, kx_view_generation(c->before));
	if (!d)
		return 0;
	struct touches x = { 0 };
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		const char *comp[3] = { gpus[i].kernel, gpus[i].pass, gpus[i].gpu };
		struct touch_walk tw = { c, d, gpus[i].gpu, &x };
		struct wl_scan w = { .fn = touch_group, .ctx = &tw };
		r = tree_wl_walk(c->t, c->after, comp, &w);
	}
	if (r == 0 && x.len)
		qsort(x.v, x.len, sizeof(*x.v), touch_cmp);
	bool new_pairs = false;
	for (size_t i = 0, j; i < x.len && r == 0; i = j) {
		for (j = i + 1; j < x.len && !strcmp(x.v[i].cand, x.v[j].cand) && !strcmp(x.v[i].base, x.v[j].base);)
			j++;
		ssize_t p = tree_cmp_pair_of(d, x.v[i].cand, x.v[i].base);
		if (p < 0) {
			char name[2 * KX_NAME_MAX + 4];
			snprintf(name, sizeof(name), "%s..%s", x.v[i].cand, x.v[i].base);
			new_pairs = true;
			r = inval(c, KX_INVAL_ENTRY, &dir, name);
			continue;
		}
		struct kx_node pair = tree_cmp_pair_node(d, (size_t)p);
		if (!may_hold(c, &pair))
			continue;
		bool listing = false;
		for (size_t k = i; k < j && r == 0; k++) {
			if (k > i && !strcmp(x.v[k].gpu, x.v[k - 1].gpu))
				continue;
			ssize_t f = tree_cmp_file_of(d, (size_t)p, x.v[k].gpu);
			struct kx_node file = tree_cmp_file_node(d, (size_t)p, f);
			char name[KX_NAME_MAX + 8];
			snprintf(name, sizeof(name), "%s.tsv", x.v[k].gpu);
			if (f < 0) {
				listing = true;
				r = inval(c, KX_INVAL_ENTRY, &pair, name);
			} else {
				r = inval_versioned(c, KX_INVAL_DATA, &file, d->files[f].stamp);
			}
		}
		/* summary.tsv and the page, which shows it and links every gpu file */
		struct kx_node summary = tree_cmp_file_node(d, (size_t)p, CMP_SUMMARY);
		struct kx_node page = tree_cmp_file_node(d, (size_t)p, CMP_HTML);
		if (r == 0)
			r = inval_versioned(c, KX_INVAL_DATA, &summary, d->pairs[p].stamp);
		if (r == 0)
			r = inval_versioned(c, KX_INVAL_DATA, &page, d->pairs[p].stamp);
		if (r == 0)
			r = inval(c, listing ? KX_INVAL_DATA : KX_INVAL_ATTR, &pair, NULL);
	}
	/* compare/index.html: every pair's totals, and a link to each */
	struct kx_node page = { .type = KX_NODE_HTML, .file = KX_HTML_COMPARE };
	if (r == 0 && x.len)
		r = inval_versioned(c, KX_INVAL_DATA, &page, d->mtime);
	if (r == 0)
		r = inval(c, new_pairs ? KX_INVAL_DATA : KX_INVAL_ATTR, &dir, NULL);
	free(x.v);
	free(x.big.v);
	tree_cmp_put(c->t, d);
	return r;
}

struct new_runs {
	struct kx_digest *v;
	size_t len, cap;
};

static int new_run_add(struct new_runs *x, const struct kx_digest *d)
{
	if (KX_GROW(x->v, x->cap, x->len, 16) < 0)
		return -ENOMEM;
	x->v[x->len++] = *d;
	return 0;
}

static int new_run_step(void *ctx, const struct kx_digest *d)
{
	return new_run_add(ctx, d);
}

/*
 * The runs of `after` that `before` lacks, without being told: both lists of run keys, in key
 * order, merged (keys only — no record is read).
 */
static int scan_new_runs(struct kx_tree *t, struct kx_view *before, struct kx_view *after, struct new_runs *out)
{
	struct new_runs a = { 0 }, b = { 0 };
	int r = kx_store_each_digest(t->s, before, KX_RECORD_RUN, new_run_step, &a);
	if (r == 0)
		r = kx_store_each_digest(t->s, after, KX_RECORD_RUN, new_run_step, &b);
	for (size_t i = 0, j = 0; r == 0 && j < b.len; j++) {
		while (i < a.len && memcmp(a.v[i].b, b.v[j].b, 32) < 0)
			i++;
		if (i == a.len || memcmp(a.v[i].b, b.v[j].b, 32) != 0)
			r = new_run_add(out, &b.v[j]);
	}
	free(a.v);
	free(b.v);
	return r;
}

/* The groups that changed, and their gpu directories (each once). */
struct group_set {
	struct new_runs keys;
	struct kx_group_rec *gpus;
	size_t n_gpus, cap_gpus;
};

static int group_set_add(struct group_set *gs, struct kx_tree *t, struct kx_view *v, const struct kx_digest *key)
{
	if (digest_in(gs->keys.v, gs->keys.len, key))
		return 0;
	struct kx_group_rec g;
	int r = kx_store_get_group(t->s, v, key, &g);
	if (r < 0 || (r = new_run_add(&gs->keys, key)) < 0)
		return r;
	for (size_t k = 0; k < gs->n_gpus; k++)
		if (!strcmp(gs->gpus[k].kernel, g.kernel) && !strcmp(gs->gpus[k].pass, g.pass) &&
		    !strcmp(gs->gpus[k].gpu, g.gpu))
			return 0;
	if (KX_GROW(gs->gpus, gs->cap_gpus, gs->n_gpus, 8) < 0)
		return -ENOMEM;
	gs->gpus[gs->n_gpus++] = g;
	return 0;
}

/*
 * The gpu directories whose time moved with no run added below them: a commit that only touched
 * groups (SPEC §10: a signature added to a stored run, a key trusted or revoked, which changes
 * the evidence the runs it signed show). Each such directory's groups join the set, as if runs
 * had come: their files and listings are told again. One scan of the directory times ('M').
 */
struct moved {
	struct kx_tree *t;
	struct kx_view *before, *after;
	struct group_set *gs;
};

static int moved_group(void *ctx, const char *name, const struct kx_digest *workload, const struct kx_digest *group,
		       bool cut)
{
	struct moved *m = ctx;
	return group_set_add(m->gs, m->t, m->after, group);
}

static int moved_dir(void *ctx, const char *path, int64_t ns)
{
	struct moved *m = ctx;
	char copy[4096], *comp[4], *save = NULL;
	snprintf(copy, sizeof(copy), "%s", path);
	size_t n = 0;
	for (char *p = strtok_r(copy, "/", &save); p && n < 4; p = strtok_r(NULL, "/", &save))
		comp[n++] = p;
	if (n != 4 || strtok_r(NULL, "/", &save) || strcmp(comp[0], "benchmarks") != 0)
		return 0; /* only benchmarks/<kernel>/<pass>/<gpu> */
	int64_t was = 0;
	if (kx_store_dir_mtime(m->t->s, m->before, path, &was) == 0 && was == ns)
		return 0;
	for (size_t k = 0; k < m->gs->n_gpus; k++)
		if (!strcmp(m->gs->gpus[k].kernel, comp[1]) && !strcmp(m->gs->gpus[k].pass, comp[2]) &&
		    !strcmp(m->gs->gpus[k].gpu, comp[3]))
			return 0; /* runs came: its groups are in the set */
	const char *const prefix[] = { comp[1], comp[2], comp[3] };
	return kx_store_tree_list(m->t->s, m->after, prefix, 3, moved_group, m);
}

/*
 * Aliases (SPEC §2) are listed under runs/ only, in no group's listing, so inval_group does not
 * reach them; yet an alias's summary.txt names where the run it is an alias of lives, and its
 * files follow its group as that group's runs' do. The aliases whose group, or whose run's group,
 * this change touched are told likewise: one scan of the alias index, empty in most stores.
 */
struct alias_walk {
	struct changes *c;
	const struct group_set *gs;
};

static int alias_step(void *ctx, const struct kx_digest *run, const struct kx_digest *alias)
{
	struct alias_walk *w = ctx;
	struct changes *c = w->c;
	const struct new_runs *keys = &w->gs->keys;
	struct kx_run_rec a, x;
	int r = tree_get_run(c->t, c->after, alias, &a);
	if (r == 0)
		r = tree_get_run(c->t, c->after, run, &x);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	if (a.generation > kx_view_generation(c->before) ||
	    (!digest_in(keys->v, keys->len, &a.group) && !digest_in(keys->v, keys->len, &x.group)))
		return 0;
	int64_t before = stamp_before(c, &a.group);
	for (size_t f = 0; f < KX_ARRAY_SIZE(rank_files) && r == 0; f++) {
		struct kx_node n = { .type = KX_NODE_RUNS_FILE, .file = rank_files[f], .id = *alias };
		r = inval_versioned(c, KX_INVAL_DATA, &n, before);
	}
	static const uint8_t types[] = { KX_NODE_RUNS_FILE }, dirs[] = { KX_NODE_RUNS_RUN };
	if (r == 0)
		r = inval_signed_run(c, &a, types, 1);
	return r ? r : inval_attested_run(c, &a, dirs, 1, TREE_ATTESTATIONS_FILE);
}

/* Forget a run's files in this tree's own caches (content and sizes, both paths: runs/ has
 * content of its own where tree_place_dependent says). */
static void purge_run(struct kx_tree *t, const struct kx_digest *run)
{
	pthread_mutex_lock(&t->lock);
	for (int k = 0; k < 2 * KX_RF__COUNT; k++) {
		int f = k % KX_RF__COUNT;
		struct kx_node n = { .type = k < KX_RF__COUNT ? KX_NODE_RUN_FILE : KX_NODE_RUNS_FILE,
				     .file = (uint8_t)f, .id = *run };
		uint64_t ino = kx_tree_ino(&n);
		if (n.type == KX_NODE_RUNS_FILE && !tree_place_dependent(f))
			continue; /* the rank directory's content: dropped above */
		for (struct centry *e = t->chash[ino % CBUCKETS]; e; e = e->hnext)
			if (e->ino == ino) {
				tree_cache_drop(t, e);
				break;
			}
		struct size_slot *x = &t->sizes[tree_slot_of(ino, t->nsizes)];
		if (x->key == ino)
			x->key = 0; /* a file too large for the run's slot */
	}
	/* one sizes slot holds all the run's files */
	int file;
	struct kx_node n = { .type = KX_NODE_RUN_FILE, .id = *run };
	struct rsize_slot *rs = tree_rsize_slot(t, kx_tree_ino(&n), &file, false);
	if (rs)
		rs->id = 0;
	pthread_mutex_unlock(&t->lock);
}

/* Forget a group's listing and files in this tree's own caches. */
static void purge_group(struct kx_tree *t, const struct kx_digest *key)
{
	pthread_mutex_lock(&t->lock);
	for (struct gctx *g = *tree_ghash_slot(t, key); g; g = g->hnext)
		if (kx_digest_equal(&g->key, key)) {
			tree_gcache_drop(t, g);
			break;
		}
	for (int f = 0; f < KX_GF__COUNT; f++) {
		struct kx_node n = { .type = KX_NODE_GROUP_FILE, .file = (uint8_t)f, .id = *key };
		uint64_t ino = kx_tree_ino(&n);
		for (struct centry *e = t->chash[ino % CBUCKETS]; e; e = e->hnext)
			if (e->ino == ino) {
				tree_cache_drop(t, e);
				break;
			}
		t->sizes[tree_slot_of(ino, t->nsizes)].key = 0;
	}
	pthread_mutex_unlock(&t->lock);
}

struct late_walk {
	struct changes *c;
	const struct new_runs *added, *late;
	struct group_set *gs;
	int err;
};

static int late_step(void *ctx, const struct kx_run_rec *x)
{
	struct late_walk *w = ctx;
	bool wl = digest_in(w->late->v, w->late->len, &x->workload);
	bool im = digest_in(w->late->v, w->late->len, &x->implementation);
	if ((!wl && !im) || digest_in(w->added->v, w->added->len, &x->run))
		return 0;
	struct changes *c = w->c;
	purge_run(c->t, &x->run);
	purge_group(c->t, &x->group);
	int r = 0;
	static const uint8_t dirs[] = { KX_NODE_RUN, KX_NODE_RUNS_RUN }, files[] = { KX_NODE_RUN_FILE, KX_NODE_RUNS_FILE };
	int64_t before = stamp_before(c, &x->group);
	for (int k = 0; k < 2 && r == 0; k++) {
		struct kx_node d = { .type = dirs[k], .id = x->run };
		if (wl)
			r = inval(c, KX_INVAL_ENTRY, &d, kx_run_file_name(KX_RF_WORKLOAD));
		if (r == 0 && im)
			r = inval(c, KX_INVAL_ENTRY, &d, kx_run_file_name(KX_RF_IMPLEMENTATION));
		if (r == 0)
			r = inval(c, KX_INVAL_DATA, &d, NULL);
		static const uint8_t changed[] = { KX_RF_MANIFEST, KX_RF_SUMMARY, KX_RF_SHA256SUMS, KX_RF_DIGESTS,
						   KX_RF_INDEX_HTML };
		for (size_t f = 0; f < KX_ARRAY_SIZE(changed) && r == 0; f++) {
			struct kx_node n = { .type = files[k], .file = changed[f], .id = x->run };
			int64_t was = before;
			if (changed[f] == KX_RF_MANIFEST)
				r = tree_manifest_stamp(c->t, c->before, x, &was);
			if (r == 0)
				r = inval_versioned(c, KX_INVAL_DATA, &n, was);
		}
	}
	return r ? r : group_set_add(w->gs, c->t, c->after, &x->group);
}

static int late_run(void *ctx, const struct kx_digest *run)
{
	struct late_walk *w = ctx;
	struct kx_run_rec x;
	int r = kx_store_get_run(w->c->t->s, w->c->after, run, &x);
	return r == -ENOENT ? 0 : r < 0 ? r : late_step(w, &x);
}

/*
 * Documents stored now that runs stored before referenced by digest only (published records often
 * carry just the digest of their workload): those runs gain workload.json or implementation.json,
 * and their manifest.json, summary.txt, index.html, SHA256SUMS and their group's GROUP.json
 * change. The store indexes the runs waiting for each document (kx_store_each_waiting): exactly
 * those are visited.
 */
static int changes_late(struct changes *c, const struct new_runs *added, const struct new_runs *late,
			struct group_set *gs)
{
	struct late_walk w = { c, added, late, gs, 0 };
	int r = 0;
	for (size_t i = 0; i < late->len && r == 0; i++)
		r = kx_store_each_waiting(c->t->s, c->after, &late->v[i], late_run, &w);
	return r == -EOPNOTSUPP ? 0 : r;
}

static int count_waiting(void *ctx, const struct kx_digest *run)
{
	(*(uint32_t *)ctx)++;
	return 0;
}

/*
 * Whether document d, which the runs `added` (records `recs`) name as file f, is stored in
 * `after` and whether it was in `before` — without reading it: a document is one store value,
 * read whole even to learn that it exists, and one of 4 MB made every change that linked it cost
 * two such reads. Instead: a document is only ever stored with a run that names it, and a run
 * stored while a document it names was missing is listed in the W index
 * (kx_store_each_waiting; complete in any store a writer opened, which upgrades it). So a document
 * is stored in a view exactly when more runs of the view name it (the hard-link table) than wait
 * for it. A run's own document is new with the run.
 */
static int doc_stored(struct kx_tree *t, struct kx_view *before, struct kx_view *after,
		      const struct kx_run_rec *recs, size_t n, int f, const struct kx_digest *d, bool *ret_after,
		      bool *ret_before)
{
	if (f == KX_RF_RUN) {
		*ret_after = true;
		*ret_before = false;
		return 0;
	}
	uint32_t named, named_added = 0, wait_after = 0, wait_before = 0;
	int r = tree_uses_exact(t, after, d, &named);
	if (r == -ESTALE) {
		*ret_after = tree_get_doc(t, after, d, NULL) == 0;
		*ret_before = *ret_after && tree_get_doc(t, before, d, NULL) == 0;
		return 0;
	}
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		named_added += kx_digest_equal(tree_run_doc(&recs[i], f), d);
	/* only workload and implementation documents may be named before they are stored */
	if (f == KX_RF_WORKLOAD || f == KX_RF_IMPLEMENTATION) {
		r = kx_store_each_waiting(t->s, after, d, count_waiting, &wait_after);
		if (r == 0)
			r = kx_store_each_waiting(t->s, before, d, count_waiting, &wait_before);
		if (r == -EOPNOTSUPP) {
			*ret_after = tree_get_doc(t, after, d, NULL) == 0;
			*ret_before = *ret_after && tree_get_doc(t, before, d, NULL) == 0;
			return 0;
		}
		if (r < 0)
			return r;
	}
	*ret_after = named > wait_after;
	*ret_before = named > named_added && named - named_added > wait_before;
	return 0;
}

struct art_links {
	struct changes *c;
};

/* An artifact a new run announces: its file's link count moved (its bytes, if stored, are one
 * inode under every run announcing them and digests/). */
static int artifact_linked(void *ctx, const char *name, const struct kx_digest *d)
{
	struct art_links *l = ctx;
	struct kx_node n = { .type = KX_NODE_DOC_FILE, .file = KX_DOC_FILE_ARTIFACT, .id = *d };
	return inval(l->c, KX_INVAL_ATTR, &n, NULL);
}

int kx_tree_changes(struct kx_tree *t, struct kx_view *before, struct kx_view *after, const struct kx_digest *runs,
		    size_t n, kx_inval_fn fn, kx_held_fn held, void *ctx)
{
	struct changes c = { t, before, after, fn, held, ctx };
	struct new_runs added = { 0 }, late = { 0 }, seen = { 0 }; /* seen: documents */
	struct group_set gs = { 0 };
	struct kx_run_rec x, *recs = NULL;
	int r = 0;

	/* the runs that are in `after` and not in `before` */
	if (!runs) {
		r = kx_view_generation(before) != kx_view_generation(after) ? scan_new_runs(t, before, after, &added) : 0;
	} else {
		for (size_t i = 0; i < n && r == 0; i++)
			if (!digest_in(added.v, added.len, &runs[i]) && kx_store_get_run(t->s, after, &runs[i], &x) == 0)
				r = new_run_add(&added, &runs[i]);
	}
	size_t keep = 0;
	for (size_t i = 0; i < added.len && r == 0; i++)
		if (kx_store_get_run(t->s, before, &added.v[i], &x) == -ENOENT)
			added.v[keep++] = added.v[i];
	added.len = keep;
	/* First, though the loop below reads each added run again: the daemon already answers from
	 * `after`, and a getattr of a document's file meanwhile (one the invalidations below prompt)
	 * would find a table still counting `before` and build it again from every run. */
	if (r == 0)
		r = tree_uses_changed(t, before, after, added.v, added.len);
	/* no run added: a commit since `before` can still have moved the evidence a group shows
	 * (SPEC §10), which the store records, and the directory times below tell where */
	struct kx_store_stats st = { 0 };
	kx_store_stats(t->s, after, &st);
	bool evidence = st.evidence_generation > kx_view_generation(before);
	if (r < 0 || (added.len == 0 && !evidence))
		goto out;
	if (!(recs = malloc((added.len ? added.len : 1) * sizeof(*recs)))) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < added.len && r == 0; i++)
		r = kx_store_get_run(t->s, after, &added.v[i], &recs[i]);
	if (r < 0)
		goto out;

	/* the top of the tree: counts, mtimes, README, the pages and the flat listings */
	static const uint8_t top[][3] = { { KX_NODE_ROOT, 0, KX_INVAL_ATTR },       { KX_NODE_README, 0, KX_INVAL_DATA },
					  { KX_NODE_HTML, KX_HTML_ROOT, KX_INVAL_DATA },
					  { KX_NODE_HTML, KX_HTML_BENCHMARKS, KX_INVAL_DATA },
					  { KX_NODE_INDEX, 0, KX_INVAL_DATA },      { KX_NODE_REGRESSIONS, 0, KX_INVAL_DATA },
					  { KX_NODE_REGRESSIONS, KX_REG_JSON, KX_INVAL_DATA },
					  { KX_NODE_CHANGES, 0, KX_INVAL_DATA },
					  { KX_NODE_BENCHMARKS, 0, KX_INVAL_DATA }, { KX_NODE_RUNS, 0, KX_INVAL_DATA },
					  { KX_NODE_DIGESTS, 0, KX_INVAL_ATTR },    { KX_NODE_DIGESTS_SHA, 0, KX_INVAL_DATA } };
	for (size_t i = 0; i < KX_ARRAY_SIZE(top) && r == 0; i++) {
		struct kx_node nd = { .type = top[i][0], .file = top[i][1] };
		/* README and the pages are versions of the store's generation */
		r = kx_node_versioned(&nd) ? inval_versioned(&c, KX_INVAL_DATA, &nd, (int64_t)kx_view_generation(before))
					   : inval(&c, (enum kx_inval)top[i][2], &nd, NULL);
	}

	/* runs/<shortid> and digests/sha256/<hex>.json that are new */
	bool runs_renamed = false;
	for (size_t i = 0; i < added.len && r == 0; i++) {
		x = recs[i];
		char name[KX_DIGEST_HEX + 8];
		struct kx_node runs_dir = { .type = KX_NODE_RUNS }, sha_dir = { .type = KX_NODE_DIGESTS_SHA };
		if ((r = tree_runs_canonical(t, after, &x.run, name)) < 0)
			break;
		if (strlen(name) > KX_SHORTID_LEN)
			runs_renamed = true; /* it shares 12 digits with another run, whose name may have grown */
		else
			r = inval(&c, KX_INVAL_ENTRY, &runs_dir, name);
		/* its stored documents: each one's file in run directories has one more link (and perhaps
		 * an earlier mtime); a new one is a new name in digests/sha256/ */
		for (int f = KX_RF_RUN; f <= KX_RF_IMPLEMENTATION && r == 0; f++) {
			const struct kx_digest *d = tree_run_doc(&x, f);
			if (digest_in(seen.v, seen.len, d))
				continue; /* named by a run before it in this change: told already */
			bool now, was;
			if ((r = new_run_add(&seen, d)) < 0 ||
			    (r = doc_stored(t, before, after, recs, added.len, f, d, &now, &was)) < 0)
				break;
			if (!now)
				continue;
			struct kx_node df = { .type = KX_NODE_DOC_FILE, .file = (uint8_t)f, .id = *d };
			if (tree_doc_role(f))
				r = inval(&c, KX_INVAL_ATTR, &df, NULL);
			if (r < 0 || was)
				continue;
			kx_digest_hex(d, name);
			strcat(name, ".json");
			r = inval(&c, KX_INVAL_ENTRY, &sha_dir, name);
			/* a workload or implementation document older runs knew only by digest */
			if (r == 0 && f >= KX_RF_WORKLOAD && !digest_in(late.v, late.len, d))
				r = new_run_add(&late, d);
		}
		/* SPEC §9: each artifact it announces whose bytes are stored has more links */
		struct art_links al = { &c };
		if (r == 0)
			r = kx_store_run_artifacts(t->s, after, &x.run, artifact_linked, &al);
		if (r == 0)
			r = group_set_add(&gs, t, after, &x.group);
	}
	if (r == 0 && runs_renamed) {
		struct kx_node runs_dir = { .type = KX_NODE_RUNS };
		r = diff_dir(&c, &runs_dir, NULL);
	}
	if (r == 0 && late.len)
		r = changes_late(&c, &added, &late, &gs);
	if (r == 0 && evidence) {
		struct moved m = { t, before, after, &gs };
		r = kx_store_each_dir_mtime(t->s, after, moved_dir, &m);
	}

	if (r == 0 && gs.keys.len) {
		struct alias_walk w = { &c, &gs };
		r = kx_store_each_alias_of_any(t->s, after, alias_step, &w);
	}

	/* benchmarks/: each gpu directory that received runs, with every group below it */
	for (size_t i = 0; i < gs.n_gpus && r == 0; i++) {
		bool kernel_first = true, pass_first = true;
		for (size_t k = 0; k < i && pass_first; k++) {
			bool kernel = strcmp(gs.gpus[k].kernel, gs.gpus[i].kernel) == 0;
			kernel_first &= !kernel;
			pass_first = !kernel || strcmp(gs.gpus[k].pass, gs.gpus[i].pass);
		}
		r = changes_gpu(&c, &gs.gpus[i], gs.keys.v, gs.keys.len, kernel_first, pass_first);
	}
	if (r == 0)
		r = changes_compare(&c, gs.gpus, gs.n_gpus);
out:
	free(recs);
	free(seen.v);
	free(added.v);
	free(late.v);
	free(gs.keys.v);
	free(gs.gpus);
	return r;
}
