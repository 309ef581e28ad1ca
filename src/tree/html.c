// SPDX-License-Identifier: MIT
/*
 * index.html of a directory (docs/views.md): what the page links is what kx_tree_readdir lists, so
 * the page follows the tree by construction — a file added to a directory's listing is linked from
 * its page with nothing to add here. The directory's pictures (its *.svg entries) are embedded in
 * listing order; a group's page shows its ranking as a table, a compare/ pair's its summary.tsv
 * and compare/'s every pair's totals (src/render/html.c writes the bytes), and the TSV views named
 * in `shown` as tables of their bytes, read through the reader its caller passes (content.c's:
 * the bytes `cat` reads, from the content cache). Directories are linked in numeric name order
 * (kx_name_cmp: n1024 before n16384) in the places the listing gives directories; a group's run
 * directories keep their order (rank order). Its stamp is its
 * directory's: a group's, a benchmark directory's mtime, a pair's summary.tsv's, compare/'s mtime,
 * or — the root's and benchmarks/' — the store's generation.
 */
#include "private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The TSV views a page shows as tables, where its directory lists them: the root's regressions.tsv
 * (not index.tsv, every run; nor changes.tsv, every step: the groups' pages show theirs), a
 * pass's gpus.tsv, a gpu's sweep.tsv, a group's history.tsv and changes.tsv (its ranking has a
 * table of its own). A view added to a directory is shown by naming it here.
 */
static const struct {
	uint8_t dir; /* the directory's node type */
	const char *name;
} shown[] = {
	{ KX_NODE_ROOT, "regressions.tsv" }, { KX_NODE_BENCH, "gpus.tsv" },     { KX_NODE_BENCH, "sweep.tsv" },
	{ KX_NODE_GROUP, "history.tsv" },    { KX_NODE_GROUP, "changes.tsv" },
};
#define TABLES_MAX KX_ARRAY_SIZE(shown)

struct entries {
	struct kx_arena *a;
	struct kx_html_link *v;
	size_t len, cap;
	const char **pictures;
	size_t npictures, cappictures;
	uint8_t dir;                       /* the directory's node type */
	struct kx_node tables[TABLES_MAX]; /* the nodes of the files of `shown` it lists, in listing order */
	const char *table_names[TABLES_MAX];
	size_t ntables;
};

static int entry_add(void *ctx, const char *name, const struct kx_node *n)
{
	struct entries *e = ctx;
	size_t len = strlen(name);
	const char *copy = kx_arena_strndup(e->a, name, len);
	if (!copy || KX_GROW(e->v, e->cap, e->len, 16) < 0)
		return -ENOMEM;
	e->v[e->len++] = (struct kx_html_link){ .name = copy, .dir = kx_node_is_dir(n) };
	if (!kx_node_is_dir(n) && len > 4 && strcmp(name + len - 4, ".svg") == 0) {
		if (KX_GROW(e->pictures, e->cappictures, e->npictures, 4) < 0)
			return -ENOMEM;
		e->pictures[e->npictures++] = copy;
	}
	for (size_t i = 0; i < TABLES_MAX && !kx_node_is_dir(n); i++)
		if (shown[i].dir == e->dir && strcmp(name, shown[i].name) == 0 && e->ntables < TABLES_MAX) {
			e->tables[e->ntables] = *n;
			e->table_names[e->ntables++] = shown[i].name;
		}
	return 0;
}

static int link_cmp(const void *a, const void *b)
{
	return kx_name_cmp(((const struct kx_html_link *)a)->name, ((const struct kx_html_link *)b)->name);
}

/* The directories of the listing in kx_name_cmp order, in the places directories have in it. */
static int sort_dirs(struct kx_html_link *v, size_t n)
{
	size_t nd = 0;
	for (size_t i = 0; i < n; i++)
		nd += v[i].dir;
	struct kx_html_link *d = nd ? malloc(nd * sizeof(*d)) : NULL;
	if (nd && !d)
		return -ENOMEM;
	for (size_t i = 0, k = 0; i < n; i++)
		if (v[i].dir)
			d[k++] = v[i];
	if (nd)
		qsort(d, nd, sizeof(*d), link_cmp);
	for (size_t i = 0, k = 0; i < n; i++)
		if (v[i].dir)
			v[i] = d[k++];
	free(d);
	return 0;
}

int tree_html(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir,
	      int (*read)(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, const struct kx_content **ret),
	      struct kx_buf *out)
{
	struct entries e = { .a = kx_arena_new(), .dir = dir->type };
	const struct kx_content *bytes[TABLES_MAX] = { NULL };
	struct kx_html_tsv tables[TABLES_MAX];
	struct kx_html_page p = { 0 };
	struct gctx *g = NULL;
	struct kx_group_view gv;
	struct cmp_page cp = { 0 };
	char path[5 * KX_NAME_MAX + 32] = "benchmarks", heading[5 * KX_NAME_MAX + 32], lead[1024];
	int r = e.a ? kx_tree_readdir(t, v, dir, entry_add, &e) : -ENOMEM;
	if (r >= 0 && dir->type == KX_NODE_GROUP && (r = tree_gctx_get(t, v, &dir->id, &g)) >= 0) {
		tree_group_view(g, &gv);
		const struct kx_group_rec *gr = gv.group;
		snprintf(path, sizeof(path), "%s", gv.path);
		snprintf(heading, sizeof(heading), "%s %s on %s: %s", gr->kernel, gr->pass, gr->gpu, gv.workload_dir);
		snprintf(lead, sizeof(lead), "%s, %s is better: %u current run%s ranked, %zu other%s (superseded or failed).",
			 gr->metric, gr->order == KX_ORDER_DESCENDING ? "higher" : "lower", gv.ranked, gv.ranked == 1 ? "" : "s",
			 gv.len - gv.ranked, gv.len - gv.ranked == 1 ? "" : "s");
		p.group = &gv;
		p.heading = heading;
		p.lead = lead;
	} else if (r >= 0 && dir->type == KX_NODE_BENCH) {
		char comp[3][KX_NAME_MAX] = { { 0 } };
		if ((r = tree_bench_comps(t, dir, comp)) >= 0)
			for (int i = 0; i < dir->depth; i++) {
				size_t l = strlen(path);
				snprintf(path + l, sizeof(path) - l, "/%s", comp[i]);
			}
		static const char *const leads[] = {
			NULL, "Its passes: forward, backward, full (and .memory for the memory metric).",
			"Its GPUs; gpus.tsv: each workload's current medians across them.",
			"Its comparison groups, one per workload; sweep.tsv and sweep.svg: the groups that differ "
			"in one parameter.",
		};
		p.lead = dir->depth < KX_ARRAY_SIZE(leads) ? leads[dir->depth] : NULL;
	} else if (r >= 0 && dir->type == KX_NODE_COMPARE_PAIR && (r = tree_compare_page(t, v, dir, &cp)) >= 0) {
		snprintf(path, sizeof(path), "compare/%s..%s", cp.cand, cp.base);
		snprintf(heading, sizeof(heading), "%s against %s", cp.cand, cp.base);
		snprintf(lead, sizeof(lead),
			 "Each group where both have a current run is a row of <gpu>.tsv: the two medians, their "
			 "ratio (above 1: %s is better), each side's version and date, mixed when they lie more "
			 "than 90 days apart. summary.tsv, the table below: the totals of each GPU and metric "
			 "(empty kernel and pass), then per kernel, pass and GPU the groups, the geometric mean of "
			 "their ratios, how many %s won, lost, tied or was within noise in, and how many are mixed.",
			 cp.cand, cp.cand);
		p.heading = heading;
		p.lead = lead;
		p.summary = cp.rows;
		p.nsummary = cp.nrows;
	} else if (r >= 0 && dir->type == KX_NODE_COMPARE && (r = tree_compare_page(t, v, dir, &cp)) >= 0) {
		snprintf(path, sizeof(path), "compare");
		p.lead = cp.npairs ? "Every two implementations that share a comparison group, each way round: "
				     "candidate..baseline, with its totals on each GPU and metric over the groups they "
				     "share there (a ratio above 1: the candidate is better)."
				   : "No two implementations share a comparison group yet.";
		p.pairs = cp.npairs ? cp.pairs : NULL;
		p.npairs = cp.npairs;
	} else if (r >= 0 && dir->type == KX_NODE_BENCHMARKS) {
		p.lead = "Every kernel benchmarked: kernel / pass / GPU / workload, each workload a comparison group.";
	} else if (r >= 0 && dir->type == KX_NODE_ROOT) {
		/* not README's text: it names the store, and the same runs give the same site anywhere */
		p.lead = "An index of GPU kernel benchmark results (KernelIndex): benchmarks/ holds every "
			 "comparison group, ranked, and compare/ every two implementations that share one; README "
			 "says what this store holds. Every directory of benchmarks/ and compare/ has a page like "
			 "this one.";
		path[0] = '\0';
	}
	/* a group's run directories in rank order, as listed; elsewhere in the order people read names */
	if (r >= 0 && dir->type != KX_NODE_GROUP)
		r = sort_dirs(e.v, e.len);
	for (size_t i = 0; i < e.ntables && r >= 0; i++) {
		r = read(t, v, &e.tables[i], &bytes[i]);
		if (r >= 0)
			tables[i] = (struct kx_html_tsv){ .name = e.table_names[i], .bytes = bytes[i]->data, .len = bytes[i]->len };
	}
	p.tables = tables;
	p.ntables = e.ntables;
	p.path = path;
	p.links = e.v;
	p.nlinks = e.len;
	p.pictures = e.pictures;
	p.npictures = e.npictures;
	if (r >= 0)
		r = kx_render_index_html(&p, out);
	if (g)
		tree_gctx_put(t, g);
	tree_compare_page_release(t, &cp);
	for (size_t i = 0; i < e.ntables; i++)
		kx_content_put(bytes[i]);
	free(e.v);
	free(e.pictures);
	kx_arena_free(e.a);
	return r < 0 ? r : 0;
}
