// SPDX-License-Identifier: MIT
/*
 * Inode numbers: the codec between a node and its inode number (include/kx/tree.h gives the
 * layout), and which nodes are directories. Pure: no store, no cache, no lock.
 */
#include "private.h"


/* ---- inode numbers ---------------------------------------------------------------------------- */

uint64_t tree_id55(const struct kx_digest *d)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | d->b[i];
	return v >> 9;
}

uint64_t kx_tree_ino(const struct kx_node *n)
{
	if (n->type == KX_NODE_ROOT)
		return 1;
	uint64_t ino = kx_ino_of(n->type == KX_NODE_DOC_FILE ? KX_NODE_DOC : n->type, n->file);
	switch (n->type) {
	case KX_NODE_README:
	case KX_NODE_INDEX:
	case KX_NODE_REGRESSIONS:
	case KX_NODE_CHANGES:
	case KX_NODE_HTML:
	case KX_NODE_BENCHMARKS:
	case KX_NODE_RUNS:
	case KX_NODE_DIGESTS:
	case KX_NODE_DIGESTS_SHA:
	case KX_NODE_COMPARE:
		return ino;
	default:
		return ino | tree_id55(&n->id);
	}
}

bool kx_tree_ino_linked(uint64_t ino)
{
	return kx_ino_type(ino) == KX_NODE_DOC && kx_ino_file(ino) != 0; /* KX_NODE_DOC_FILE's */
}

/* The node type and file an inode number carries (its top 9 bits; the rest is the digest's 55). */
void tree_ino_kind(uint64_t ino, struct kx_node *n)
{
	n->type = (uint8_t)kx_ino_type(ino);
	n->file = (uint8_t)kx_ino_file(ino);
}

static bool ino_in_runs(uint64_t ino)
{
	return kx_ino_type(ino) == KX_NODE_RUNS_RUN || kx_ino_type(ino) == KX_NODE_RUNS_FILE;
}

bool kx_tree_ino_runs_name(uint64_t ino, char name[KX_SHORTID_LEN + 1])
{
	if (!ino_in_runs(ino))
		return false;
	uint64_t bits = (ino & BITS55) >> (55 - 4 * KX_SHORTID_LEN);
	for (int i = KX_SHORTID_LEN - 1; i >= 0; i--, bits >>= 4)
		name[i] = "0123456789abcdef"[bits & 15];
	name[KX_SHORTID_LEN] = '\0';
	return true;
}

bool kx_tree_ino_of_run(uint64_t ino, const struct kx_node *run, struct kx_node *ret)
{
	if (!ino_in_runs(ino) || run->type != KX_NODE_RUNS_RUN)
		return false;
	struct kx_node n = *run;
	tree_ino_kind(ino, &n);
	if (kx_tree_ino(&n) != ino)
		return false;
	*ret = n;
	return true;
}

bool kx_node_is_dir(const struct kx_node *n)
{
	switch (n->type) {
	case KX_NODE_ROOT:
	case KX_NODE_BENCHMARKS:
	case KX_NODE_RUNS:
	case KX_NODE_DIGESTS:
	case KX_NODE_DIGESTS_SHA:
	case KX_NODE_BENCH:
	case KX_NODE_GROUP:
	case KX_NODE_RUN:
	case KX_NODE_RUNS_RUN:
	case KX_NODE_COMPARE:
	case KX_NODE_COMPARE_PAIR:
		return true;
	default:
		return false;
	}
}
