// SPDX-License-Identifier: MIT
/*
 * The files across the groups of a benchmark directory (docs/views.md) — gpus.tsv in a pass
 * directory, sweep.tsv and sweep.svg in a gpu directory — and those directories' mtimes, which are
 * the files' stamps: every run added below a directory moves its mtime (the store's 'M' records),
 * and so does a workload document stored late for a run below it (which may add a sweep), so the
 * bytes are a function of the stamp. The bytes are rendered by src/render (kx_render_gpus_tsv,
 * kx_render_sweep_tsv, kx_render_sweep_svg) from the listings of the groups below (group.c), whose
 * ranked prefix is the current runs; each file is rendered on its first read, never at ingest.
 * Also the list of a benchmark directory's files, index.html among them (html.c renders it).
 * Nothing here is about the bench/ scripts or kindex-bench.
 */
#include "private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- benchmark directories' files ------------------------------------------------------------- */

int tree_bench_mtime(struct kx_tree *t, struct kx_view *v, uint8_t depth, char comp[3][KX_NAME_MAX], int64_t *ret)
{
	char path[4 * KX_NAME_MAX + 16] = "benchmarks";
	for (int i = 0; i < depth; i++) {
		size_t l = strlen(path);
		snprintf(path + l, sizeof(path) - l, "/%s", comp[i]);
	}
	if (kx_store_dir_mtime(t->s, v, path, ret) < 0) {
		struct kx_store_stats st; /* a store older than directory mtimes */
		kx_store_stats(t->s, v, &st);
		*ret = st.created_ns;
	}
	return 0;
}

size_t tree_bench_files_of(const struct kx_node *dir, struct kx_node ret[BENCH_FILES_MAX])
{
	static const uint8_t kernel[] = { KX_BF_INDEX_HTML }, pass[] = { KX_BF_GPUS_TSV, KX_BF_INDEX_HTML },
			     gpu[] = { KX_BF_SWEEP_TSV, KX_BF_SWEEP_SVG, KX_BF_INDEX_HTML };
	_Static_assert(KX_ARRAY_SIZE(gpu) <= BENCH_FILES_MAX, "BENCH_FILES_MAX holds a directory's files");
	if (dir->type == KX_NODE_BENCHMARKS) { /* its page is the tree's, versioned as the root's */
		ret[0] = (struct kx_node){ .type = KX_NODE_HTML, .file = KX_HTML_BENCHMARKS };
		return 1;
	}
	if (dir->type != KX_NODE_BENCH || dir->depth < 1 || dir->depth > 3)
		return 0;
	const uint8_t *f = dir->depth == 1 ? kernel : dir->depth == 2 ? pass : gpu;
	size_t n = dir->depth == 1 ? KX_ARRAY_SIZE(kernel) : dir->depth == 2 ? KX_ARRAY_SIZE(pass) : KX_ARRAY_SIZE(gpu);
	for (size_t i = 0; i < n; i++)
		ret[i] = (struct kx_node){ .type = KX_NODE_BENCH_FILE, .depth = dir->depth, .id = dir->id, .file = f[i] };
	return n;
}

const char *tree_bench_file_name(const struct kx_node *f)
{
	return f->type == KX_NODE_HTML ? "index.html" : kx_bench_file_name((enum kx_bench_file)f->file);
}

int tree_bench_file_stamp(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t *ret)
{
	char comp[3][KX_NAME_MAX] = { { 0 } };
	int r = tree_bench_comps(t, n, comp);
	return r < 0 ? r : tree_bench_mtime(t, v, n->depth, comp, ret);
}

/* A group below the directory: where the walk of the path index found it, and its listing. */
struct below_group {
	struct kx_digest key, workload;
	bool cut;
	uint32_t gpu;
	char name[KX_NAME_MAX + 16]; /* its workload directory name (sweep.tsv) or base slug (gpus.tsv) */
	struct gctx *x;
};

struct below {
	struct below_group *v;
	size_t len, cap;
	uint32_t gpu;              /* of the groups being listed */
	char (*gpus)[KX_NAME_MAX]; /* the gpu directories of a pass */
	size_t ngpus, capgpus;
};

static int below_add(struct below *b, const char *name, const struct kx_digest *workload,
		     const struct kx_digest *key, bool cut)
{
	if (KX_GROW(b->v, b->cap, b->len, 16) < 0)
		return -ENOMEM;
	struct below_group *x = &b->v[b->len++];
	*x = (struct below_group){ .key = *key, .workload = *workload, .cut = cut, .gpu = b->gpu };
	snprintf(x->name, sizeof(x->name), "%s", name);
	return 0;
}

/* tree_wl_walk's: a group of the gpu directory by its directory name */
static int dir_step(void *ctx, const char *name, const struct kx_node *n)
{
	static const struct kx_digest none;
	return below_add(ctx, name, &none, &n->id, false);
}

/* kx_store_tree_list's at depth 3: a group by its base slug */
static int slug_step(void *ctx, const char *name, const struct kx_digest *workload, const struct kx_digest *group,
		     bool cut)
{
	return below_add(ctx, name, workload, group, cut);
}

/* kx_store_tree_list's at depth 2: a gpu directory */
static int gpu_step(void *ctx, const char *name, const struct kx_digest *workload, const struct kx_digest *group,
		    bool cut)
{
	struct below *b = ctx;
	if (KX_GROW(b->gpus, b->capgpus, b->ngpus, 8) < 0)
		return -ENOMEM;
	snprintf(b->gpus[b->ngpus++], KX_NAME_MAX, "%s", name);
	return 0;
}

static int gpu_name_cmp(const void *x, const void *y)
{
	return kx_name_cmp((const char *)x, (const char *)y);
}

static void below_release(struct kx_tree *t, struct below *b)
{
	for (size_t i = 0; i < b->len; i++)
		tree_gctx_put(t, b->v[i].x);
	free(b->v);
	free(b->gpus);
}

/* Every group's listing, and the groups as the renderer sees them (*ret, to free). */
static int below_load(struct kx_tree *t, struct kx_view *v, struct below *b, struct kx_bench_group **ret)
{
	struct kx_bench_group *g = calloc(b->len ? b->len : 1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	int r = 0;
	for (size_t i = 0; i < b->len && r == 0; i++) {
		struct below_group *x = &b->v[i];
		if ((r = tree_gctx_get(t, v, &x->key, &x->x)) < 0)
			break;
		g[i] = (struct kx_bench_group){ .workload_dir = x->name, .base = x->name, .workload = x->workload,
						.cut = x->cut, .gpu = x->gpu, .workload_doc = x->x->workload_doc,
						.runs = x->x->runs, .len = x->x->ranked };
	}
	if (r < 0) {
		free(g);
		return r;
	}
	*ret = g;
	return 0;
}

int tree_bench_file_render(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct kx_buf *out)
{
	char comp[3][KX_NAME_MAX] = { { 0 } };
	int r = tree_bench_comps(t, n, comp);
	if (r < 0)
		return r;
	const char *c[3] = { comp[0], comp[1], comp[2] };
	struct below b = { 0 };
	struct kx_bench_group *g = NULL;
	if (n->file == KX_BF_SWEEP_TSV || n->file == KX_BF_SWEEP_SVG) {
		struct wl_scan w = { .fn = dir_step, .ctx = &b };
		char title[3 * KX_NAME_MAX + 8];
		snprintf(title, sizeof(title), "%s %s on %s", comp[0], comp[1], comp[2]);
		if ((r = tree_wl_walk(t, v, c, &w)) == 0 && (r = below_load(t, v, &b, &g)) == 0)
			r = n->file == KX_BF_SWEEP_TSV ? kx_render_sweep_tsv(g, b.len, out)
						       : kx_render_sweep_svg(title, g, b.len, out);
	} else {
		/* the gpu directories in kx_name_cmp's order: gpus.tsv's columns */
		r = kx_store_tree_list(t->s, v, c, 2, gpu_step, &b);
		if (r == 0 && b.ngpus > 1)
			qsort(b.gpus, b.ngpus, sizeof(*b.gpus), gpu_name_cmp);
		for (size_t i = 0; i < b.ngpus && r == 0; i++) {
			const char *cg[3] = { comp[0], comp[1], b.gpus[i] };
			b.gpu = (uint32_t)i;
			r = kx_store_tree_list(t->s, v, cg, 3, slug_step, &b);
		}
		const char **gpus = r == 0 ? malloc((b.ngpus ? b.ngpus : 1) * sizeof(*gpus)) : NULL;
		if (r == 0 && !gpus)
			r = -ENOMEM;
		for (size_t i = 0; i < b.ngpus && r == 0; i++)
			gpus[i] = b.gpus[i];
		if (r == 0 && (r = below_load(t, v, &b, &g)) == 0)
			r = kx_render_gpus_tsv(gpus, b.ngpus, g, b.len, out);
		free(gpus);
	}
	free(g);
	below_release(t, &b);
	return r;
}
