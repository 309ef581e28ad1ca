// SPDX-License-Identifier: MIT
/*
 * Attributes and extended attributes, the public kx_tree_getattr and kx_tree_xattr_*: a file's
 * from its stamp and size (content.c), a directory's from its listing (node.c) and records.
 */
#include "private.h"

#include <errno.h>
#include <string.h>

/* ---- attributes ------------------------------------------------------------------------------- */

struct counter {
	uint32_t n;
};

static int count_entry(void *ctx, const char *name, const struct kx_node *n)
{
	struct counter *c = ctx;
	c->n++;
	return 0;
}

int kx_tree_getattr(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct kx_attr *ret)
{
	struct kx_attr a = { .ino = kx_tree_ino(n), .dir = kx_node_is_dir(n), .nlink = 2 };
	struct kx_store_stats st;
	struct kx_run_rec x;
	struct kx_group_rec g;
	int r = 0;
	if (n->type >= KX_NODE_GROUP)
		tree_node_put(t, a.ino, n); /* whoever asks for attributes is about to use the inode number */
	if (!a.dir && n->type == KX_NODE_DOC_FILE && n->file == KX_DOC_FILE_ARTIFACT) {
		/* SPEC §9: its size is stored, its bytes are never rendered; no versions (stamp 0) */
		if ((r = tree_artifact_use(t, v, &n->id, &a.size, &a.mtime_ns, &a.nlink)) < 0)
			return r;
		*ret = a;
		return 0;
	}
	if (!a.dir) {
		int64_t stamp;
		if ((r = tree_stamp_of(t, v, n, &stamp, &a.mtime_ns, &a.nlink)) < 0)
			return r;
		a.stamp = stamp;
		if ((r = tree_size(t, v, n, stamp, true, &a.size)) < 0)
			return r;
		*ret = a;
		return 0;
	}
	a.size = 4096;
	switch (n->type) {
	case KX_NODE_ROOT:
		kx_store_stats(t->s, v, &st);
		a.mtime_ns = st.changed_ns;
		a.nlink = 2 + 4;
		break;
	case KX_NODE_COMPARE:
	case KX_NODE_COMPARE_PAIR:
		if ((r = tree_compare_attr(t, v, n, &a.mtime_ns, &a.nlink)) < 0)
			return r;
		a.mtime_ns = tree_compare_mtime(t, v, a.mtime_ns);
		break;
	case KX_NODE_RUNS:
		kx_store_stats(t->s, v, &st);
		a.mtime_ns = st.changed_ns;
		a.nlink = (uint32_t)(2 + st.runs);
		break;
	case KX_NODE_DIGESTS:
		kx_store_stats(t->s, v, &st);
		a.mtime_ns = st.changed_ns;
		a.nlink = 3;
		break;
	case KX_NODE_DIGESTS_SHA:
		kx_store_stats(t->s, v, &st);
		a.mtime_ns = st.changed_ns;
		break;
	case KX_NODE_BENCHMARKS:
	case KX_NODE_BENCH: {
		char comp[3][KX_NAME_MAX] = { { 0 } };
		uint8_t depth = n->type == KX_NODE_BENCHMARKS ? 0 : n->depth;
		if (depth && (r = tree_bench_comps(t, n, comp)) < 0)
			return r;
		tree_bench_mtime(t, v, depth, comp, &a.mtime_ns);
		struct counter c = { 0 };
		struct kx_node f[BENCH_FILES_MAX];
		if ((r = kx_tree_readdir(t, v, n, count_entry, &c)) < 0)
			return r;
		a.nlink = 2 + c.n - tree_bench_files_of(n, f); /* its subdirectories' "..", not its files */
		break;
	}
	case KX_NODE_GROUP:
		if ((r = tree_get_group(t, v, &n->id, &g, &a.mtime_ns)) < 0)
			return r;
		a.nlink = 2 + g.ranked + g.unranked;
		break;
	case KX_NODE_RUN:
	case KX_NODE_RUNS_RUN: {
		uint32_t atts, arts;
		if ((r = tree_get_run(t, v, &n->id, &x)) < 0 || (r = tree_attestation_count(t, v, &n->id, &atts)) < 0 ||
		    (r = tree_artifact_count(t, v, &n->id, &arts)) < 0)
			return r;
		a.mtime_ns = x.observed_ns;
		/* a run directory's subdirectories, attestations/ (SPEC §8) and artifacts/ (§9), where it has any */
		a.nlink = 2 + (!n->file && atts) + (!n->file && arts);
		break;
	}
	default:
		return -ENOENT;
	}
	*ret = a;
	return 0;
}

/* ---- xattrs ----------------------------------------------------------------------------------- */

static const char *const xattr_names[] = { "user.kindex.digest", "user.kindex.comparison_key",
					   "user.kindex.rank", "user.kindex.evidence" };

static bool xattr_applies(const struct kx_node *n, int i)
{
	switch (n->type) {
	case KX_NODE_RUN:
	case KX_NODE_RUNS_RUN:
	case KX_NODE_RUN_FILE:
	case KX_NODE_RUNS_FILE:
		return true;
	case KX_NODE_GROUP:
	case KX_NODE_GROUP_FILE:
		return i <= 1;
	case KX_NODE_DOC:
	case KX_NODE_DOC_FILE:
		return i == 0;
	default:
		return false;
	}
}

int kx_tree_xattr_list(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct kx_buf *out)
{
	for (size_t i = 0; i < KX_ARRAY_SIZE(xattr_names); i++)
		if (xattr_applies(n, (int)i) && kx_buf_append(out, xattr_names[i], strlen(xattr_names[i]) + 1) < 0)
			return -ENOMEM;
	return 0;
}

int kx_tree_xattr_get(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, const char *name,
		      struct kx_buf *out)
{
	int i = -1;
	for (size_t k = 0; k < KX_ARRAY_SIZE(xattr_names); k++)
		if (strcmp(xattr_names[k], name) == 0)
			i = (int)k;
	if (i < 0 || !xattr_applies(n, i))
		return -ENODATA;
	char s[KX_DIGEST_STR_MAX];
	bool is_run = n->type == KX_NODE_RUN || n->type == KX_NODE_RUNS_RUN || n->type == KX_NODE_RUN_FILE ||
		      n->type == KX_NODE_RUNS_FILE;
	if (i == 0 || (i == 1 && !is_run)) {
		kx_digest_format(&n->id, s);
		return kx_buf_puts(out, s);
	}
	struct runv rv;
	int r = tree_runv_load(t, v, &n->id, &rv);
	if (r < 0)
		return r;
	if (i == 1) {
		kx_digest_format(&rv.run.group, s);
		r = kx_buf_puts(out, s);
	} else if (i == 2) {
		r = rv.v.rank ? kx_buf_printf(out, "%u", rv.v.rank) : kx_buf_puts(out, "unranked");
	} else {
		r = kx_buf_puts(out, kx_evidence_name((enum kx_evidence)rv.run.evidence));
	}
	tree_runv_release(t, &rv);
	return r;
}
