// SPDX-License-Identifier: MIT
/*
 * Directory listings for READDIR/READDIRPLUS, as snapshots: a listing is a directory's entries at
 * one store generation (names and nodes, built once from a view), shared by every reader and kept
 * in a byte-bounded LRU.
 *
 * Why not a handle per opendir: OPENDIR is switched off (ops.c) so a warm `ls` or `find` costs no
 * round trip at all, which leaves READDIR without a handle to hang a snapshot on. The snapshot is
 * carried by the offset instead. An offset handed to the kernel is
 *
 *     generation tag (22 bits) << 40 | last (1 bit) << 39 | index of the next entry (39 bits)
 *
 * so a directory read in many READDIR calls — 100,000 entries take hundreds — continues in the
 * very listing it started in, even if the store changed between calls (the old listing stays
 * cached; if it was evicted, the current one is used from the same index). Offset 0 always starts
 * the current listing; an offset with `last` set is the end, answered without any listing (the
 * kernel asks once more after the last entry of every directory). Listings are a pure function of
 * (directory, generation), so two threads that build the same one concurrently build the same
 * bytes and either copy wins.
 *
 * Only listings of more than SMALL entries are kept: a run or group directory is answered in one
 * READDIR and rebuilt in microseconds, while 100,000 of them would push out the few big listings
 * (runs/, digests/sha256/) that continuations and LOOKUPs need.
 */
#include "fs.h"

#include "kx/list.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define INDEX_BITS 39
#define LAST_BIT (1ull << INDEX_BITS)
#define TAG_SHIFT 40
#define TAG_BITS 22
#define TAG_MASK ((1ull << TAG_BITS) - 1)
#define INDEX_MASK ((1ull << INDEX_BITS) - 1)
#define BUCKETS 1024
#define SMALL 64

struct listing {
	struct fs_listing l; /* what callers hold: fs_dircache_put recovers the listing from it */
	uint32_t *sorted;    /* entry indexes in name order, for lookups */
	char *names;
	size_t bytes;
	unsigned refs; /* the cache's own reference while cached */
	bool cached;
	struct kx_link lru; /* fs_dircache.lru */
	struct listing *hnext;
};

struct fs_dircache {
	pthread_mutex_t lock;
	bool inbox; /* the root lists "inbox" (-o rw) */
	size_t limit, bytes;
	struct kx_list lru; /* most recently used first */
	struct listing *hash[BUCKETS];
};

struct fs_dircache *fs_dircache_new(size_t limit_bytes, bool inbox)
{
	struct fs_dircache *dc = calloc(1, sizeof(*dc));
	if (!dc)
		return NULL;
	dc->limit = limit_bytes;
	dc->inbox = inbox;
	pthread_mutex_init(&dc->lock, NULL);
	return dc;
}

static void listing_free(struct listing *x)
{
	if (!x)
		return;
	free(x->l.e);
	free(x->sorted);
	free(x->names);
	free(x);
}

void fs_dircache_free(struct fs_dircache *dc)
{
	if (!dc)
		return;
	for (struct kx_link *l = dc->lru.head, *n; l; l = n) {
		n = l->next;
		listing_free(kx_entry_of(l, struct listing, lru));
	}
	pthread_mutex_destroy(&dc->lock);
	free(dc);
}

off_t fs_dircache_offset(const struct fs_listing *l, size_t next_index)
{
	return (off_t)((l->generation & TAG_MASK) << TAG_SHIFT | (next_index >= l->len ? LAST_BIT : 0) |
		       (uint64_t)next_index);
}

/* ---- building --------------------------------------------------------------------------------- */

struct builder {
	struct fs_dirent *e;
	size_t *name_off; /* names are appended to `names`; pointers are fixed up at the end */
	size_t len, cap;
	struct kx_buf names;
};

static int add(struct builder *b, const char *name, const struct kx_node *n)
{
	if (b->len == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct fs_dirent *e = realloc(b->e, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		b->e = e;
		size_t *o = realloc(b->name_off, cap * sizeof(*o));
		if (!o)
			return -ENOMEM;
		b->name_off = o;
		b->cap = cap;
	}
	b->name_off[b->len] = b->names.len;
	b->e[b->len].node = *n;
	b->len++;
	return kx_buf_append(&b->names, name, strlen(name) + 1);
}

static int add_entry(void *ctx, const char *name, const struct kx_node *n)
{
	return add(ctx, name, n);
}

static int by_name(const void *a, const void *b, void *arg)
{
	const struct fs_dirent *e = arg;
	return strcmp(e[*(const uint32_t *)a].name, e[*(const uint32_t *)b].name);
}

static int build(struct fs_dircache *dc, struct kx_tree *t, struct fs_view *fv, uint64_t ino, const struct kx_node *dir,
		 struct listing **ret)
{
	struct builder b = { 0 };
	struct kx_node parent;
	int r = kx_tree_parent(t, fv->v, dir, &parent);
	if (r == 0)
		r = add(&b, ".", dir);
	if (r == 0)
		r = add(&b, "..", &parent);
	if (r == 0)
		r = kx_tree_readdir(t, fv->v, dir, add_entry, &b);
	if (r == 0 && dc->inbox && dir->type == KX_NODE_ROOT) {
		/* the daemon's own directory (inbox.c), not the tree's: its inode number is of type KX_NODE__FS */
		struct kx_node inbox = { .type = KX_NODE__FS };
		r = add(&b, "inbox", &inbox);
	}
	struct listing *x = NULL;
	if (r == 0 && b.len >= INDEX_MASK)
		r = -EOVERFLOW;
	if (r == 0 && (!(x = calloc(1, sizeof(*x))) || !(x->sorted = malloc((b.len ? b.len : 1) * sizeof(uint32_t)))))
		r = -ENOMEM;
	if (r < 0) {
		free(b.e);
		free(b.name_off);
		kx_buf_release(&b.names);
		if (x)
			free(x->sorted);
		free(x);
		return r;
	}
	size_t names_bytes = b.names.alloc;
	x->names = kx_buf_detach(&b.names, NULL);
	for (size_t i = 0; i < b.len; i++)
		b.e[i].name = x->names + b.name_off[i];
	free(b.name_off);
	x->l.ino = ino;
	x->l.generation = fv->generation;
	x->l.len = b.len;
	x->l.e = b.e;
	for (size_t i = 0; i < b.len; i++)
		x->sorted[i] = (uint32_t)i;
	qsort_r(x->sorted, b.len, sizeof(*x->sorted), by_name, b.e);
	x->bytes = sizeof(*x) + b.cap * sizeof(*b.e) + names_bytes + b.len * sizeof(uint32_t);
	x->refs = 1;
	*ret = x;
	return 0;
}

/* ---- the cache -------------------------------------------------------------------------------- */

static void drop(struct fs_dircache *dc, struct listing *x)
{
	kx_list_unlink(&dc->lru, &x->lru);
	struct listing **p = &dc->hash[x->l.ino % BUCKETS];
	while (*p && *p != x)
		p = &(*p)->hnext;
	if (*p)
		*p = x->hnext;
	dc->bytes -= x->bytes;
	x->cached = false;
	if (--x->refs == 0)
		listing_free(x);
}

/* A cached listing of ino whose generation matches `gen` in the bits given by `mask`. */
static struct listing *find(struct fs_dircache *dc, uint64_t ino, uint64_t gen, uint64_t mask)
{
	struct listing *best = NULL;
	for (struct listing *x = dc->hash[ino % BUCKETS]; x; x = x->hnext)
		if (x->l.ino == ino && (x->l.generation & mask) == (gen & mask) &&
		    (!best || x->l.generation > best->l.generation))
			best = x;
	return best;
}

int fs_dircache_get(struct fs_dircache *dc, struct kx_tree *t, struct fs_view *fv, uint64_t ino,
		    const struct kx_node *dir, off_t off, const struct fs_listing **ret, size_t *ret_index)
{
	uint64_t o = (uint64_t)off;
	size_t index = (size_t)(o & INDEX_MASK);
	if (o & LAST_BIT)
		return 1; /* past the last entry */
	pthread_mutex_lock(&dc->lock);
	struct listing *x = NULL;
	if (off != 0)
		x = find(dc, ino, o >> TAG_SHIFT, TAG_MASK);
	if (!x)
		x = find(dc, ino, fv->generation, ~0ull);
	if (x) {
		x->refs++;
		kx_list_touch(&dc->lru, &x->lru);
		pthread_mutex_unlock(&dc->lock);
		*ret = &x->l;
		*ret_index = index < x->l.len ? index : x->l.len;
		return 0;
	}
	pthread_mutex_unlock(&dc->lock);

	int r = build(dc, t, fv, ino, dir, &x);
	if (r < 0)
		return r;
	if (x->l.len <= SMALL + 2) {
		*ret = &x->l; /* not worth keeping: the caller's reference is the only one */
		*ret_index = index < x->l.len ? index : x->l.len;
		return 0;
	}
	pthread_mutex_lock(&dc->lock);
	struct listing *other = find(dc, ino, fv->generation, ~0ull);
	if (other) {
		/* built twice concurrently: keep the cached one */
		listing_free(x);
		x = other;
		x->refs++;
	} else {
		x->refs++; /* the cache's reference */
		x->cached = true;
		x->hnext = dc->hash[ino % BUCKETS];
		dc->hash[ino % BUCKETS] = x;
		kx_list_push(&dc->lru, &x->lru);
		dc->bytes += x->bytes;
		while (dc->bytes > dc->limit && dc->lru.tail && dc->lru.tail != &x->lru)
			drop(dc, kx_entry_of(dc->lru.tail, struct listing, lru));
	}
	pthread_mutex_unlock(&dc->lock);
	*ret = &x->l;
	*ret_index = index < x->l.len ? index : x->l.len;
	return 0;
}

void fs_dircache_put(struct fs_dircache *dc, const struct fs_listing *l)
{
	if (!l)
		return;
	struct listing *x = kx_entry_of(l, struct listing, l);
	pthread_mutex_lock(&dc->lock);
	bool last = --x->refs == 0;
	pthread_mutex_unlock(&dc->lock);
	if (last)
		listing_free(x);
}

int fs_dircache_lookup(struct fs_dircache *dc, uint64_t ino, uint64_t generation, const char *name,
		       struct kx_node *ret)
{
	int r = -EAGAIN;
	pthread_mutex_lock(&dc->lock);
	struct listing *x = find(dc, ino, generation, ~0ull);
	if (x) {
		r = -ENOENT;
		size_t lo = 0, hi = x->l.len;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			const struct fs_dirent *e = &x->l.e[x->sorted[mid]];
			int c = strcmp(name, e->name);
			if (c == 0) {
				if (x->sorted[mid] >= 2) { /* never "." or "..": the kernel resolves those */
					*ret = e->node;
					r = 0;
				}
				break;
			}
			if (c < 0)
				hi = mid;
			else
				lo = mid + 1;
		}
	}
	pthread_mutex_unlock(&dc->lock);
	return r;
}

