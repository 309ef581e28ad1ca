// SPDX-License-Identifier: MIT
/*
 * Sizes kept by the writer (issue "a million runs"; docs/store.md, 'Z'): the size of each file of
 * a run's directories and of a group's, as the build that rendered them made them, so that a mount
 * answers `stat` with a point read instead of rendering the file to learn its length. The tree
 * decides what they are and when they hold (src/tree/sizes.c); this file only keeps them.
 *
 * They are written beside the commits, not in them: derived from what a commit stored, by whoever
 * wrote it, after it (no generation of their own, no sync: a size lost in a crash is rendered
 * again). A read-only store refuses to keep them.
 */
#include "private.h"

#include <errno.h>
#include <string.h>

#define SIZES_VERSION 1
#define SIZES_KEY_LEN (1 + 1 + 32)
#define SIZES_HEAD (1 + 8 + 8 + 1)

static void sizes_key(unsigned char k[SIZES_KEY_LEN], char kind, const struct kx_digest *id)
{
	k[0] = T_SIZES;
	k[1] = (unsigned char)kind;
	memcpy(k + 2, id->b, 32);
}

int kx_store_get_sizes(struct kx_store *s, struct kx_view *v, char kind, const struct kx_digest *id,
		       struct kx_sizes *ret)
{
	unsigned char k[SIZES_KEY_LEN];
	sizes_key(k, kind, id);
	struct kx_buf b = { 0 };
	int r = store_get_in(db_of(s, v), ro_of(s, v), k, sizeof(k), &b);
	const unsigned char *p = (const unsigned char *)b.ptr;
	if (r == 0 && (b.len < SIZES_HEAD || p[0] != SIZES_VERSION || p[17] > KX_SIZES_MAX ||
		       b.len != SIZES_HEAD + 4 * (size_t)p[17]))
		r = -EBADMSG; /* another version's, or damaged: the caller renders */
	if (r == 0) {
		ret->build = store_get_u64(p + 1);
		ret->stamp = (int64_t)store_get_u64(p + 9);
		ret->n = p[17];
		for (unsigned i = 0; i < ret->n; i++)
			ret->size[i] = store_get_u32(p + SIZES_HEAD + 4 * i);
	}
	kx_buf_release(&b);
	return r;
}

int kx_store_put_sizes(struct kx_store *s, char kind, const struct kx_digest *ids, const struct kx_sizes *sizes,
		       size_t n)
{
	if (s->flags & (KX_STORE_READONLY | KX_STORE_FOLLOW | KX_STORE_VERIFY))
		return -EROFS;
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	for (size_t i = 0; i < n; i++) {
		unsigned char k[SIZES_KEY_LEN], val[SIZES_HEAD + 4 * KX_SIZES_MAX];
		const struct kx_sizes *z = &sizes[i];
		size_t m = z->n < KX_SIZES_MAX ? z->n : KX_SIZES_MAX;
		sizes_key(k, kind, &ids[i]);
		val[0] = SIZES_VERSION;
		store_put_u64(val + 1, z->build);
		store_put_u64(val + 9, (uint64_t)z->stamp);
		val[17] = (unsigned char)m;
		for (size_t f = 0; f < m; f++)
			store_put_u32(val + SIZES_HEAD + 4 * f, z->size[f]);
		rocksdb_writebatch_put(wb, (const char *)k, sizeof(k), (const char *)val, SIZES_HEAD + 4 * m);
	}
	int r = store_write(s, s->wo, wb);
	rocksdb_writebatch_destroy(wb);
	return r;
}
