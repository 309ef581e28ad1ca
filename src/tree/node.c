// SPDX-License-Identifier: MIT
/*
 * The tree's namespace, the public kx_tree_* operations on names and nodes: lookup and resolve,
 * inode number to node, parent, readdir and a file's name. Attributes are attr.c's, a run's path
 * run.c's.
 */
#include "private.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ---- lookup ----------------------------------------------------------------------------------- */

static int first_hit(void *ctx, const char *name, const struct kx_digest *w, const struct kx_digest *g, bool cut)
{
	return 1;
}

static bool valid_component(const char *name)
{
	return *name && strlen(name) < KX_NAME_MAX && !strchr(name, '/');
}

/* The root's entries, in listing order (index.html is the root's page, KX_NODE_HTML KX_HTML_ROOT). */
static const struct {
	const char *name;
	uint8_t type, file;
} root_entries[] = { { "README", KX_NODE_README, 0 },
		     { "benchmarks", KX_NODE_BENCHMARKS, 0 },
		     { "changes.tsv", KX_NODE_CHANGES, 0 },
		     { "compare", KX_NODE_COMPARE, 0 },
		     { "digests", KX_NODE_DIGESTS, 0 },
		     { "index.html", KX_NODE_HTML, KX_HTML_ROOT },
		     { "index.tsv", KX_NODE_INDEX, 0 },
		     { "regressions.json", KX_NODE_REGRESSIONS, KX_REG_JSON },
		     { "regressions.tsv", KX_NODE_REGRESSIONS, KX_REG_TSV },
		     { "runs", KX_NODE_RUNS, 0 } };

struct att_find {
	const char *name;
	struct kx_node *ret;
};

static int att_match(void *ctx, const char *name, const struct kx_node *n)
{
	struct att_find *f = ctx;
	if (strcmp(name, f->name) != 0)
		return 0;
	*f->ret = *n;
	return 1;
}

/* A file of a run's attestations/ (SPEC §8) or artifacts/ (§9), by name: the run's list, searched. */
static int run_list_lookup(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir, const char *name,
			   struct kx_node *ret)
{
	struct att_find f = { name, ret };
	int r = dir->file == TREE_ARTIFACTS_FILE ? tree_run_artifacts_of(t, v, &dir->id, att_match, &f)
						 : tree_run_attestations_of(t, v, &dir->id, att_match, &f);
	return r < 0 ? r : r == 1 ? 0 : -ENOENT;
}

int kx_tree_lookup(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir, const char *name,
		   struct kx_node *ret)
{
	struct kx_node n = { 0 };
	int r;
	switch (dir->type) {
	case KX_NODE_ROOT:
		for (size_t i = 0; i < KX_ARRAY_SIZE(root_entries) && !n.type; i++)
			if (strcmp(name, root_entries[i].name) == 0) {
				n.type = root_entries[i].type;
				n.file = root_entries[i].file;
			}
		if (!n.type)
			return -ENOENT;
		break;
	case KX_NODE_COMPARE:
	case KX_NODE_COMPARE_PAIR:
		return tree_compare_lookup(t, v, dir, name, ret);
	case KX_NODE_DIGESTS:
		if (strcmp(name, "sha256") != 0)
			return -ENOENT;
		n.type = KX_NODE_DIGESTS_SHA;
		break;
	case KX_NODE_BENCHMARKS:
	case KX_NODE_BENCH: {
		char comp[3][KX_NAME_MAX] = { { 0 } };
		uint8_t depth = dir->type == KX_NODE_BENCHMARKS ? 0 : dir->depth;
		if (depth && (r = tree_bench_comps(t, dir, comp)) < 0)
			return r;
		if (!valid_component(name))
			return -ENOENT;
		struct kx_node f[BENCH_FILES_MAX];
		size_t nf = tree_bench_files_of(dir, f), i = 0;
		while (i < nf && strcmp(name, tree_bench_file_name(&f[i])) != 0)
			i++;
		if (i < nf) {
			n = f[i]; /* before any directory of that name (no slug is "sweep.tsv") */
			break;
		}
		if (depth == 3) {
			const char *c3[3] = { comp[0], comp[1], comp[2] };
			struct wl_scan w = { .match = name };
			r = tree_wl_walk(t, v, c3, &w);
			if (r < 0)
				return r;
			if (r == 0)
				return -ENOENT;
			n.type = KX_NODE_GROUP;
			n.id = w.found;
			break;
		}
		snprintf(comp[depth], KX_NAME_MAX, "%s", name);
		const char *c[3] = { comp[0], comp[1], comp[2] };
		r = kx_store_tree_list(t->s, v, c, depth + 1u, first_hit, NULL);
		if (r < 0)
			return r;
		if (r == 0)
			return -ENOENT;
		return tree_bench_node(t, depth + 1, comp, ret);
	}
	case KX_NODE_GROUP: {
		int f = kx_group_file_from_name(name);
		if (f >= 0) {
			n.type = KX_NODE_GROUP_FILE;
			n.file = (uint8_t)f;
			n.id = dir->id;
			break;
		}
		const char *dash = strrchr(name, '-');
		if (!dash || strlen(dash + 1) != KX_SHORTID_LEN)
			return -ENOENT;
		struct gctx *g;
		if ((r = tree_gctx_get(t, v, &dir->id, &g)) < 0)
			return r;
		r = -ENOENT;
		for (size_t i = 0; i < g->len; i++)
			if (strcmp(g->dirnames[i], name) == 0) {
				n.type = KX_NODE_RUN;
				n.id = g->runs[i].run;
				r = 0;
				break;
			}
		tree_gctx_put(t, g);
		if (r < 0)
			return r;
		break;
	}
	case KX_NODE_RUN:
	case KX_NODE_RUNS_RUN: {
		if (dir->file)
			return run_list_lookup(t, v, dir, name, ret);
		uint32_t count;
		bool atts = strcmp(name, TREE_ATTESTATIONS_DIR) == 0, arts = strcmp(name, TREE_ARTIFACTS_DIR) == 0;
		if (atts || arts) { /* SPEC §8, §9: where the run has any */
			r = atts ? tree_attestation_count(t, v, &dir->id, &count) : tree_artifact_count(t, v, &dir->id, &count);
			if (r < 0)
				return r;
			if (!count)
				return -ENOENT;
			n = *dir;
			n.file = atts ? TREE_ATTESTATIONS_FILE : TREE_ARTIFACTS_FILE;
			break;
		}
		int f = kx_run_file_from_name(name);
		if (f < 0)
			return -ENOENT;
		struct kx_run_rec x;
		if ((r = tree_get_run(t, v, &dir->id, &x)) < 0)
			return r;
		if (!tree_run_has(t, v, &x, f))
			return -ENOENT;
		n = tree_run_file_node(dir->type, &x, f);
		break;
	}
	case KX_NODE_RUNS: {
		size_t len = strlen(name);
		if (len < KX_SHORTID_LEN || len > KX_DIGEST_HEX || strspn(name, "0123456789abcdef") != len)
			return -ENOENT;
		struct kx_digest d;
		if ((r = kx_store_find_run_prefix(t->s, v, name, &d)) < 0)
			return r == -ENOTUNIQ ? -ENOENT : r;
		/* a unique 12-digit prefix is the canonical name by definition; longer ones are checked */
		char canon[65];
		if (len > KX_SHORTID_LEN && (r = tree_runs_canonical(t, v, &d, canon)) < 0)
			return r;
		if (len > KX_SHORTID_LEN && strcmp(canon, name) != 0)
			return -ENOENT;
		n.type = KX_NODE_RUNS_RUN;
		n.id = d;
		break;
	}
	case KX_NODE_DIGESTS_SHA: {
		size_t len = strlen(name);
		if (len == KX_DIGEST_HEX && strspn(name, "0123456789abcdef") == KX_DIGEST_HEX) { /* an artifact's bytes */
			char s[KX_DIGEST_STR_MAX];
			struct kx_artifact_rec a;
			snprintf(s, sizeof(s), "sha256:%.64s", name);
			if (kx_digest_parse(s, strlen(s), &n.id) < 0)
				return -ENOENT;
			if ((r = kx_store_get_artifact(t->s, v, &n.id, &a)) < 0)
				return r;
			n.type = KX_NODE_DOC_FILE;
			n.file = KX_DOC_FILE_ARTIFACT;
			break;
		}
		if (len != KX_DIGEST_HEX + 5 || strcmp(name + KX_DIGEST_HEX, ".json") != 0 ||
		    strspn(name, "0123456789abcdef") != KX_DIGEST_HEX)
			return -ENOENT;
		char s[KX_DIGEST_STR_MAX];
		snprintf(s, sizeof(s), "sha256:%.64s", name);
		if (kx_digest_parse(s, strlen(s), &n.id) < 0 || !tree_doc_exists(t, v, &n.id))
			return -ENOENT;
		n.type = KX_NODE_DOC;
		break;
	}
	default:
		return kx_node_is_dir(dir) ? -ENOENT : -ENOTDIR;
	}
	*ret = n;
	return 0;
}

int kx_tree_resolve(struct kx_tree *t, struct kx_view *v, const char *path, struct kx_node *ret)
{
	struct kx_node n = { .type = KX_NODE_ROOT };
	char comp[KX_NAME_MAX + 64];
	const char *p = path;
	while (*p) {
		/* "README/", "README/x", "README/.": a file has no entries, not even itself (path_resolution(7)) */
		if (*p == '/' && !kx_node_is_dir(&n))
			return -ENOTDIR;
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len >= sizeof(comp))
			return -ENOENT;
		memcpy(comp, p, len);
		comp[len] = '\0';
		p += len;
		if (strcmp(comp, ".") == 0)
			continue;
		struct kx_node c;
		int r = kx_tree_lookup(t, v, &n, comp, &c);
		if (r < 0)
			return r;
		n = c;
	}
	*ret = n;
	return 0;
}

int kx_tree_node(struct kx_tree *t, struct kx_view *v, uint64_t ino, struct kx_node *ret)
{
	struct kx_node n = { 0 };
	if (ino == 1) {
		n.type = KX_NODE_ROOT;
		*ret = n;
		return 0;
	}
	tree_ino_kind(ino, &n);
	uint8_t prefix[8];
	uint64_t bits = (ino & BITS55) << 9;
	for (int i = 7; i >= 0; i--) {
		prefix[i] = (uint8_t)bits;
		bits >>= 8;
	}
	int r = 0;
	switch (n.type) {
	case KX_NODE_HTML:
		if (n.file > KX_HTML_COMPARE || (ino & BITS55))
			return -ESTALE;
		break;
	case KX_NODE_REGRESSIONS:
		if (n.file > KX_REG_JSON || (ino & BITS55))
			return -ESTALE;
		break;
	case KX_NODE_README:
	case KX_NODE_INDEX:
	case KX_NODE_CHANGES:
	case KX_NODE_BENCHMARKS:
	case KX_NODE_RUNS:
	case KX_NODE_DIGESTS:
	case KX_NODE_DIGESTS_SHA:
		if (ino & BITS55)
			return -ESTALE;
		break;
	case KX_NODE_BENCH:
	case KX_NODE_BENCH_FILE: {
		uint64_t key = ino & BITS55;
		r = -ESTALE;
		pthread_mutex_lock(&t->lock);
		for (struct bench_dir *b = t->bench[key & 255]; b; b = b->next)
			if (b->key == key) {
				n.depth = b->depth;
				tree_bench_id(b->depth, b->comp, &n.id);
				r = 0;
			}
		pthread_mutex_unlock(&t->lock);
		/* a directory's file: one of its depth's */
		if (r == 0 && n.type == KX_NODE_BENCH_FILE) {
			struct kx_node dir = n, f[BENCH_FILES_MAX];
			dir.type = KX_NODE_BENCH;
			size_t nf = tree_bench_files_of(&dir, f), i = 0;
			while (i < nf && f[i].file != n.file)
				i++;
			if (i == nf)
				return -ENOENT;
			*ret = f[i];
			return 0;
		}
		break;
	}
	case KX_NODE_GROUP:
	case KX_NODE_GROUP_FILE:
		if (tree_node_get(t, ino, ret))
			return 0;
		r = kx_store_find_bits(t->s, v, KX_RECORD_GROUP, prefix, 55, &n.id);
		break;
	case KX_NODE_RUN:
	case KX_NODE_RUN_FILE:
	case KX_NODE_RUNS_RUN:
	case KX_NODE_RUNS_FILE:
		if ((n.type == KX_NODE_RUN || n.type == KX_NODE_RUNS_RUN) && n.file > TREE_ARTIFACTS_FILE)
			return -ESTALE;
		if (tree_node_get(t, ino, ret))
			return 0;
		r = kx_store_find_bits(t->s, v, KX_RECORD_RUN, prefix, 55, &n.id);
		break;
	case KX_NODE_COMPARE:
	case KX_NODE_COMPARE_PAIR:
	case KX_NODE_COMPARE_FILE:
		if (tree_node_get(t, ino, ret))
			return 0;
		if ((r = tree_compare_node(t, v, ino, &n)) < 0)
			return r;
		tree_node_put(t, ino, &n);
		*ret = n;
		return 0;
	case KX_NODE_DOC:
		if (n.file && n.file != KX_DOC_FILE_ATTESTATION && n.file != KX_DOC_FILE_ARTIFACT && !tree_doc_role(n.file))
			return -ENOENT;
		if (n.file)
			n.type = KX_NODE_DOC_FILE;
		if (tree_node_get(t, ino, ret))
			return 0;
		r = kx_store_find_bits(t->s, v, n.file == KX_DOC_FILE_ARTIFACT ? KX_RECORD_ARTIFACT : KX_RECORD_DOC, prefix,
				       55, &n.id);
		break;
	default:
		return -ENOENT;
	}
	if (r == -ENOTUNIQ)
		r = -EIO;
	if (r < 0)
		return r;
	if (n.type >= KX_NODE_GROUP)
		tree_node_put(t, ino, &n);
	*ret = n;
	return 0;
}

int kx_tree_parent(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct kx_node *ret)
{
	struct kx_node p = { 0 };
	int r = 0;
	if ((n->type == KX_NODE_RUN || n->type == KX_NODE_RUNS_RUN) && n->file) {
		*ret = *n; /* a run's attestations/ or artifacts/ (SPEC §8, §9): in its run directory, at either place */
		ret->file = 0;
		return 0;
	}
	switch (n->type) {
	case KX_NODE_ROOT:
	case KX_NODE_README:
	case KX_NODE_INDEX:
	case KX_NODE_REGRESSIONS:
	case KX_NODE_CHANGES:
	case KX_NODE_BENCHMARKS:
	case KX_NODE_RUNS:
	case KX_NODE_DIGESTS:
		p.type = KX_NODE_ROOT;
		break;
	case KX_NODE_HTML:
		p.type = n->file == KX_HTML_ROOT ? KX_NODE_ROOT : n->file == KX_HTML_BENCHMARKS ? KX_NODE_BENCHMARKS
									: KX_NODE_COMPARE;
		break;
	case KX_NODE_DIGESTS_SHA:
		p.type = KX_NODE_DIGESTS;
		break;
	case KX_NODE_DOC:
		p.type = KX_NODE_DIGESTS_SHA;
		break;
	case KX_NODE_BENCH: {
		if (n->depth <= 1) {
			p.type = KX_NODE_BENCHMARKS;
			break;
		}
		char comp[3][KX_NAME_MAX] = { { 0 } };
		if ((r = tree_bench_comps(t, n, comp)) < 0)
			return r;
		return tree_bench_node(t, (uint8_t)(n->depth - 1), comp, ret);
	}
	case KX_NODE_GROUP: {
		struct kx_group_rec g;
		if ((r = tree_get_group(t, v, &n->id, &g, NULL)) < 0)
			return r;
		char comp[3][KX_NAME_MAX] = { { 0 } };
		snprintf(comp[0], KX_NAME_MAX, "%s", g.kernel);
		snprintf(comp[1], KX_NAME_MAX, "%s", g.pass);
		snprintf(comp[2], KX_NAME_MAX, "%s", g.gpu);
		return tree_bench_node(t, 3, comp, ret);
	}
	case KX_NODE_GROUP_FILE:
		p.type = KX_NODE_GROUP;
		p.id = n->id;
		break;
	case KX_NODE_BENCH_FILE:
		p = *n;
		p.type = KX_NODE_BENCH;
		p.file = 0;
		break;
	case KX_NODE_RUN: {
		struct kx_run_rec x;
		if ((r = tree_get_run(t, v, &n->id, &x)) < 0)
			return r;
		p.type = KX_NODE_GROUP;
		p.id = x.group;
		break;
	}
	case KX_NODE_RUN_FILE:
		p.type = KX_NODE_RUN;
		p.id = n->id;
		break;
	case KX_NODE_RUNS_RUN:
		p.type = KX_NODE_RUNS;
		break;
	case KX_NODE_RUNS_FILE:
		p.type = KX_NODE_RUNS_RUN;
		p.id = n->id;
		break;
	case KX_NODE_COMPARE:
	case KX_NODE_COMPARE_PAIR:
	case KX_NODE_COMPARE_FILE:
		return tree_compare_parent(t, v, n, ret);
	default:
		return -ENOENT;
	}
	*ret = p;
	return 0;
}

/* ---- readdir ---------------------------------------------------------------------------------- */

struct bench_walk {
	struct kx_tree *t;
	uint8_t depth;
	char comp[3][KX_NAME_MAX];
	kx_dirent_fn fn;
	void *ctx;
};

static int bench_step(void *ctx, const char *name, const struct kx_digest *w, const struct kx_digest *g, bool cut)
{
	struct bench_walk *b = ctx;
	snprintf(b->comp[b->depth], KX_NAME_MAX, "%s", name);
	struct kx_node n;
	int r = tree_bench_node(b->t, b->depth + 1, b->comp, &n);
	return r < 0 ? r : b->fn(b->ctx, name, &n);
}

struct doc_walk {
	kx_dirent_fn fn;
	void *ctx;
};

static int doc_step(void *ctx, const struct kx_digest *d)
{
	struct doc_walk *w = ctx;
	char name[KX_DIGEST_HEX + 8];
	kx_digest_hex(d, name);
	strcat(name, ".json");
	struct kx_node n = { .type = KX_NODE_DOC, .id = *d };
	return w->fn(w->ctx, name, &n);
}

/* An artifact's bytes (SPEC §9): digests/sha256/<hex>, the same file as under its runs' artifacts/. */
static int artifact_step(void *ctx, const struct kx_digest *d)
{
	struct doc_walk *w = ctx;
	char name[KX_DIGEST_HEX + 1];
	kx_digest_hex(d, name);
	struct kx_node n = { .type = KX_NODE_DOC_FILE, .file = KX_DOC_FILE_ARTIFACT, .id = *d };
	return w->fn(w->ctx, name, &n);
}

/* A run directory's files, then its attestations/ where it has any (SPEC §8); or that directory's. */
static int run_files(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir, kx_dirent_fn fn, void *ctx)
{
	if (dir->file == TREE_ATTESTATIONS_FILE)
		return tree_run_attestations_of(t, v, &dir->id, fn, ctx);
	if (dir->file == TREE_ARTIFACTS_FILE)
		return tree_run_artifacts_of(t, v, &dir->id, fn, ctx);
	struct kx_run_rec x;
	uint32_t atts = 0, arts = 0;
	int r = tree_get_run(t, v, &dir->id, &x);
	if (r == 0)
		r = tree_run_files_of(t, v, dir->type, &x, fn, ctx);
	if (r == 0)
		r = tree_attestation_count(t, v, &dir->id, &atts);
	if (r == 0)
		r = tree_artifact_count(t, v, &dir->id, &arts);
	struct kx_node n = *dir;
	if (r == 0 && atts) {
		n.file = TREE_ATTESTATIONS_FILE;
		r = fn(ctx, TREE_ATTESTATIONS_DIR, &n);
	}
	if (r == 0 && arts) {
		n.file = TREE_ARTIFACTS_FILE;
		r = fn(ctx, TREE_ARTIFACTS_DIR, &n);
	}
	return r;
}

int kx_tree_readdir(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir, kx_dirent_fn fn,
		    void *ctx)
{
	int r = 0;
	switch (dir->type) {
	case KX_NODE_ROOT:
		for (size_t i = 0; i < KX_ARRAY_SIZE(root_entries) && r == 0; i++) {
			struct kx_node n = { .type = root_entries[i].type, .file = root_entries[i].file };
			r = fn(ctx, root_entries[i].name, &n);
		}
		return r;
	case KX_NODE_DIGESTS: {
		struct kx_node n = { .type = KX_NODE_DIGESTS_SHA };
		return fn(ctx, "sha256", &n);
	}
	case KX_NODE_BENCHMARKS:
	case KX_NODE_BENCH: {
		struct bench_walk b = { .t = t, .fn = fn, .ctx = ctx };
		b.depth = dir->type == KX_NODE_BENCHMARKS ? 0 : dir->depth;
		if (b.depth && (r = tree_bench_comps(t, dir, b.comp)) < 0)
			return r;
		const char *c[3] = { b.comp[0], b.comp[1], b.comp[2] };
		struct wl_scan w = { .fn = fn, .ctx = ctx };
		r = b.depth == 3 ? tree_wl_walk(t, v, c, &w) : kx_store_tree_list(t->s, v, c, b.depth, bench_step, &b);
		/* its files after its directories */
		struct kx_node f[BENCH_FILES_MAX];
		size_t nf = tree_bench_files_of(dir, f);
		for (size_t i = 0; i < nf && r == 0; i++)
			r = fn(ctx, tree_bench_file_name(&f[i]), &f[i]);
		return r;
	}
	case KX_NODE_GROUP: {
		for (int f = 0; f < KX_GF__COUNT && r == 0; f++) {
			struct kx_node n = { .type = KX_NODE_GROUP_FILE, .file = (uint8_t)f, .id = dir->id };
			r = fn(ctx, kx_group_file_name((enum kx_group_file)f), &n);
		}
		if (r)
			return r;
		struct gctx *g;
		if ((r = tree_gctx_get(t, v, &dir->id, &g)) < 0)
			return r;
		for (size_t i = 0; i < g->len && r == 0; i++) {
			struct kx_node n = { .type = KX_NODE_RUN, .id = g->runs[i].run };
			r = fn(ctx, g->dirnames[i], &n);
		}
		tree_gctx_put(t, g);
		return r;
	}
	case KX_NODE_RUN:
	case KX_NODE_RUNS_RUN:
		return run_files(t, v, dir, fn, ctx);
	case KX_NODE_COMPARE:
	case KX_NODE_COMPARE_PAIR:
		return tree_compare_readdir(t, v, dir, fn, ctx);
	case KX_NODE_RUNS: {
		struct runs_walk w = { .fn = fn, .ctx = ctx };
		r = kx_store_each_digest(t->s, v, KX_RECORD_RUN, tree_runs_step, &w);
		if (r == 0 && w.have)
			r = tree_runs_emit(&w, 0);
		return r;
	}
	case KX_NODE_DIGESTS_SHA: {
		struct doc_walk w = { fn, ctx };
		r = kx_store_each_digest(t->s, v, KX_RECORD_DOC, doc_step, &w);
		return r ? r : kx_store_each_digest(t->s, v, KX_RECORD_ARTIFACT, artifact_step, &w);
	}
	default:
		return -ENOTDIR;
	}
}

/* ---- names ------------------------------------------------------------------------------------ */

int kx_tree_file_name(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, char *out, size_t cap)
{
	switch (n->type) {
	case KX_NODE_README:
	case KX_NODE_HTML: /* the root's page, benchmarks/' or compare/' (the same name) */
	case KX_NODE_INDEX:
	case KX_NODE_REGRESSIONS:
	case KX_NODE_CHANGES:
		for (size_t i = 0; i < KX_ARRAY_SIZE(root_entries); i++)
			if (root_entries[i].type == n->type &&
			    (n->type != KX_NODE_REGRESSIONS || root_entries[i].file == n->file))
				snprintf(out, cap, "%s", root_entries[i].name);
		return 0;
	case KX_NODE_GROUP_FILE:
		snprintf(out, cap, "%s", kx_group_file_name((enum kx_group_file)n->file));
		return 0;
	case KX_NODE_BENCH_FILE:
		snprintf(out, cap, "%s", kx_bench_file_name((enum kx_bench_file)n->file));
		return 0;
	case KX_NODE_RUN_FILE:
	case KX_NODE_RUNS_FILE:
	case KX_NODE_DOC_FILE:
		if (n->file == KX_DOC_FILE_ATTESTATION)
			return -ENOENT; /* its name is its place in its run's list: attestations/ has it */
		if (n->file == KX_DOC_FILE_ARTIFACT) { /* its runs name it; digests/sha256/ by its digest */
			char hex[KX_DIGEST_HEX + 1];
			kx_digest_hex(&n->id, hex);
			snprintf(out, cap, "%s", hex);
			return 0;
		}
		snprintf(out, cap, "%s", kx_run_file_name((enum kx_run_file)n->file));
		return 0;
	case KX_NODE_DOC: {
		char hex[KX_DIGEST_HEX + 1];
		kx_digest_hex(&n->id, hex);
		snprintf(out, cap, "%s.json", hex);
		return 0;
	}
	case KX_NODE_COMPARE_FILE:
		return tree_compare_file_name(t, v, n, out, cap);
	default:
		return kx_node_is_dir(n) ? -EISDIR : -ENOENT;
	}
}
