// SPDX-License-Identifier: MIT
/*
 * Versioned inodes: every version of a file that changes when runs are added (the README, a
 * group's ranking.tsv, ranking.json, GROUP.json and SHA256SUMS, its runs' summary.txt and
 * SHA256SUMS, a run's manifest.json, which changes when a document it names is stored late, and
 * the benchmark directories' gpus.tsv and sweep.tsv and the files of compare/ — kx_node_versioned)
 * is an inode of its own, immutable like every other file of the tree. A new run gives such a file a
 * new stamp, so the next LOOKUP gets a new inode number, while
 * a reader that holds the old one keeps reading the old bytes at the old size — what rename(2)
 * over a file does on a local disk. Without this, the kernel's cached size of the old version and
 * a READ answered from the new one could meet in one read(2): a torn file.
 *
 * Inode numbers. Type KX_NODE__VERSION (31, the daemon's in the tree's encoding, include/kx/tree.h)
 * marks a version; the 59 bits below the type mix the file's plain number and its stamp:
 *
 *     ino = 31 << 59 | ((mix(plain) ^ mix(stamp)) & (2^59 - 1))
 *
 * with mix a bijection of 64 bits (splitmix64's finaliser). Any file kx_node_versioned names is
 * one — a new kind of file needs nothing here. The same (file, stamp) always gives the same number,
 * across remounts too; two versions share one with odds of 2^-59 a pair. The number cannot be
 * decoded by itself, so this table keeps, for every version the kernel holds, its plain number,
 * its stamp, the kernel's lookup count (LOOKUP and READDIRPLUS add, FORGET takes away) and a view
 * of the store in which it was that version (a count that reaches 2^32 - 1 sticks there: that
 * inode is kept until unmount rather than ever forgotten too early).
 *
 * The table. `ls -lR` of 100,000 runs has the kernel hold over 400,000 versions, so the table is
 * the daemon's largest allocation after the caches. An entry is 24 bytes: its number is not kept,
 * since fs_version_ino(plain, stamp) gives it again. The entries are spread by hash over SEGS
 * segments, each its own open-addressing table with linear probing, of any size (a slot's home is
 * the hash scaled to the size), grown by a quarter when it is 80 % full and shrunk when it is a
 * quarter full. So the table is 64–80 % full as it grows, and a growth copies one segment, not
 * the whole table: one table doubling at 80 % sat at 40 % after each doubling and held the old
 * and the new table at once while it copied (48 MiB at 420,000 inodes, against 13–16 MiB now).
 *
 * Views: an entry holds its view (fs_view.holds) until the kernel forgets the inode, so an old
 * version can still be rendered after newer ones were stored; an entry looked up again moves to
 * the newer view, which lets old snapshots go. Operations answer from the current view whenever
 * the file's stamp there is still the entry's (the usual case) and from the entry's view otherwise.
 *
 * Should two versions ever hash to one number (2^-57 a pair), or memory run out, the file is handed
 * out under its plain tree inode number as before this table existed; `plain_used` then makes the
 * notifier invalidate plain numbers too.
 */
#include "fs.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define BITS59 ((UINT64_C(1) << KX_INO_TYPE_SHIFT) - 1)

struct ventry {
	uint64_t plain; /* the file's number in the tree (kx_tree_ino) */
	int64_t stamp;
	uint32_t nlookup; /* 0: a free slot */
	uint32_t view;    /* index into fs_versions.views */
};

#define SEGS 256
#define SEG_MIN 16 /* slots of a segment's first table */

struct vseg {
	struct ventry *t; /* NULL until its first entry */
	uint32_t cap, len;
};

struct fs_versions {
	pthread_mutex_t lock;
	struct vseg seg[SEGS];
	struct fs_view **views;
	size_t nviews, capviews;
	bool plain_used;
	_Atomic uint32_t *held; /* HELD_SLOTS lookup counts of plain inodes, by hash (fs_held_*) */
	atomic_bool held_lost;  /* a count went wrong: every inode may be held */
};

#define HELD_SLOTS (1u << 17)

static uint64_t mix(uint64_t z)
{
	z += UINT64_C(0x9e3779b97f4a7c15); /* splitmix64 */
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

uint64_t fs_version_ino(uint64_t plain, int64_t stamp)
{
	/* the stamp's mix is turned by a constant so that plain == stamp does not cancel out */
	uint64_t turned = (uint64_t)stamp ^ UINT64_C(0x5851f42d4c957f2d);
	return kx_ino_of(KX_NODE__VERSION, 0) | ((mix(plain) ^ mix(turned)) & BITS59);
}

int fs_versions_init(struct fs *fs)
{
	struct fs_versions *vt = calloc(1, sizeof(*vt));
	if (!vt || !(vt->held = calloc(HELD_SLOTS, sizeof(*vt->held)))) {
		free(vt);
		return -ENOMEM;
	}
	pthread_mutex_init(&vt->lock, NULL);
	fs->versions = vt;
	return 0;
}

/* At unmount: the kernel holds nothing any more. */
void fs_versions_free(struct fs *fs)
{
	struct fs_versions *vt = fs->versions;
	if (!vt)
		return;
	for (size_t i = 0; i < vt->nviews; i++)
		if (vt->views[i])
			fs_view_unhold(fs, vt->views[i]);
	pthread_mutex_destroy(&vt->lock);
	free(vt->views);
	for (size_t i = 0; i < SEGS; i++)
		free(vt->seg[i].t);
	free((void *)vt->held);
	free(vt);
	fs->versions = NULL;
}

/*
 * Plain inodes the kernel may hold. Every other inode number of the tree is decoded from itself
 * and needs no table; but the notifier, told that a run arrived, would otherwise send the kernel
 * ~20 invalidations for every new run — names in directories, attributes of directories — of
 * which, while nobody reads the tree, it holds none (each a system call answered ENOENT, about a
 * third of the write path's time under rsync). So LOOKUP and READDIRPLUS count what they hand out
 * and FORGET takes it back, in HELD_SLOTS counters indexed by a hash of the inode number: a zero
 * count means the kernel holds no inode that hashes there, and a name below a directory the kernel
 * does not hold cannot be cached either. Collisions only cost an invalidation sent for nothing; a
 * count that would go below zero (it cannot, unless the kernel forgets what it was never given)
 * turns the filter off for good.
 */
static _Atomic uint32_t *held_slot(struct fs_versions *vt, uint64_t ino)
{
	uint64_t z = ino * UINT64_C(0x9e3779b97f4a7c15);
	return &vt->held[(z >> 40) & (HELD_SLOTS - 1)];
}

void fs_held_ref(struct fs *fs, uint64_t ino)
{
	_Atomic uint32_t *c = held_slot(fs->versions, ino);
	uint32_t old = atomic_load(c);
	while (old != UINT32_MAX && !atomic_compare_exchange_weak(c, &old, old + 1))
		;
}

void fs_held_unref(struct fs *fs, uint64_t ino, uint64_t nlookup)
{
	struct fs_versions *vt = fs->versions;
	_Atomic uint32_t *c = held_slot(vt, ino);
	uint32_t old = atomic_load(c);
	do {
		if (old == UINT32_MAX)
			return; /* stuck: held until unmount */
		if (old < nlookup) {
			atomic_store(&vt->held_lost, true);
			return;
		}
	} while (!atomic_compare_exchange_weak(c, &old, (uint32_t)(old - nlookup)));
}

bool fs_held_maybe(struct fs *fs, uint64_t ino)
{
	struct fs_versions *vt = fs->versions;
	return ino == 1 || atomic_load(&vt->held_lost) || atomic_load(held_slot(vt, ino)) > 0;
}

static uint64_t entry_ino(const struct ventry *e)
{
	return fs_version_ino(e->plain, e->stamp);
}

static uint64_t hash(uint64_t ino)
{
	return ino * UINT64_C(0x9e3779b97f4a7c15);
}

/* The segment of a number: the hash's top bits. */
static struct vseg *seg_of(struct fs_versions *vt, uint64_t ino)
{
	return &vt->seg[hash(ino) >> 56];
}

/* A number's first slot in a table of cap slots: 32 bits of the hash below the segment's, scaled. */
static uint32_t home(uint64_t ino, uint32_t cap)
{
	return (uint32_t)(((hash(ino) >> 24) & UINT32_MAX) * cap >> 32);
}

/* The slot of ino in its segment's table, or the free slot where it would go; NULL: no table yet. */
static struct ventry *slot(struct vseg *sg, uint64_t ino)
{
	if (!sg->t)
		return NULL;
	uint32_t i = home(ino, sg->cap);
	while (sg->t[i].nlookup && entry_ino(&sg->t[i]) != ino)
		if (++i == sg->cap)
			i = 0;
	return &sg->t[i];
}

/* Move a segment's entries into a table of cap slots (cap > its entries). */
static int resize(struct vseg *sg, uint32_t cap)
{
	struct ventry *t = calloc(cap, sizeof(*t)), *old = sg->t;
	if (!t)
		return -ENOMEM;
	uint32_t n = sg->cap;
	sg->t = t;
	sg->cap = cap;
	for (uint32_t i = 0; i < n; i++)
		if (old[i].nlookup)
			*slot(sg, entry_ino(&old[i])) = old[i];
	free(old);
	return 0;
}

/* Room for one entry more in the segment: at most 80 % full after it. */
static int reserve(struct vseg *sg)
{
	if (sg->t && ((uint64_t)sg->len + 1) * 5 <= (uint64_t)sg->cap * 4)
		return 0;
	if (sg->cap > UINT32_MAX / 2)
		return -ENOMEM;
	return resize(sg, sg->cap ? sg->cap + sg->cap / 4 : SEG_MIN);
}

/* Remove e, shifting back the entries of its probe run (no tombstones); a table left a quarter
 * full is halved (when that fails, it stays as it is). */
static void erase(struct vseg *sg, struct ventry *e)
{
	uint32_t i = (uint32_t)(e - sg->t), j = i;
	sg->t[i].nlookup = 0;
	for (;;) {
		if (++j == sg->cap)
			j = 0;
		if (!sg->t[j].nlookup)
			break;
		uint32_t h = home(entry_ino(&sg->t[j]), sg->cap);
		/* move j back to i unless its home lies cyclically in (i, j] */
		if (i <= j ? (h <= i || h > j) : (h <= i && h > j)) {
			sg->t[i] = sg->t[j];
			sg->t[j].nlookup = 0;
			i = j;
		}
	}
	sg->len--;
	if (sg->cap > SEG_MIN && (uint64_t)sg->len * 4 < sg->cap)
		(void)resize(sg, sg->len * 2 > SEG_MIN ? sg->len * 2 : SEG_MIN);
}

/*
 * One entry more holds fv: its index among the held views, which it joins (with a hold) with its
 * first entry, and leaves with its last (view_drop) — never listed without an entry to keep it
 * alive. Under vt->lock, which orders holds and unholds. 0 or -ENOMEM.
 */
static int view_add(struct fs *fs, struct fs_versions *vt, struct fs_view *fv, uint32_t *ret)
{
	if (!fv->slot) {
		size_t i = 0;
		while (i < vt->nviews && vt->views[i])
			i++;
		if (i == vt->capviews) {
			size_t cap = vt->capviews ? vt->capviews * 2 : 16;
			struct fs_view **v = realloc(vt->views, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			memset(v + vt->capviews, 0, (cap - vt->capviews) * sizeof(*v));
			vt->views = v;
			vt->capviews = cap;
		}
		if (i == vt->nviews)
			vt->nviews++;
		vt->views[i] = fv;
		fv->slot = (uint32_t)i + 1;
	}
	if (fv->entries++ == 0)
		fs_view_hold(fs, fv);
	*ret = fv->slot - 1;
	return 0;
}

/* One entry fewer holds view i (under vt->lock); with its last one it is let go. */
static void view_drop(struct fs *fs, struct fs_versions *vt, uint32_t i)
{
	struct fs_view *fv = vt->views[i];
	if (--fv->entries)
		return;
	vt->views[i] = NULL;
	fv->slot = 0;
	fs_view_unhold(fs, fv);
}

uint64_t fs_versions_ref(struct fs *fs, struct fs_view *fv, const struct kx_node *n, int64_t stamp)
{
	struct fs_versions *vt = fs->versions;
	uint64_t plain = kx_tree_ino(n), ino;
	uint32_t vi;
	if (!kx_node_versioned(n))
		return plain;
	ino = fs_version_ino(plain, stamp);
	pthread_mutex_lock(&vt->lock);
	struct vseg *sg = seg_of(vt, ino);
	if (reserve(sg) < 0)
		goto plain;
	struct ventry *e = slot(sg, ino);
	if (e->nlookup && (e->stamp != stamp || e->plain != plain))
		goto plain; /* two versions, one number: see the file comment */
	if (!e->nlookup) {
		if (view_add(fs, vt, fv, &vi) < 0)
			goto plain;
		*e = (struct ventry){ .plain = plain, .stamp = stamp, .nlookup = 1, .view = vi };
		sg->len++;
	} else {
		e->nlookup += e->nlookup < UINT32_MAX; /* saturated: kept until unmount, never freed early */
		if (vt->views[e->view]->generation < fv->generation && view_add(fs, vt, fv, &vi) == 0) {
			/* looked up again in a newer view of the same version: let the old view go */
			view_drop(fs, vt, e->view);
			e->view = vi;
		}
	}
	pthread_mutex_unlock(&vt->lock);
	return ino;
plain:
	vt->plain_used = true;
	pthread_mutex_unlock(&vt->lock);
	return plain;
}

void fs_versions_unref(struct fs *fs, uint64_t ino, uint64_t nlookup)
{
	struct fs_versions *vt = fs->versions;
	pthread_mutex_lock(&vt->lock);
	struct vseg *sg = seg_of(vt, ino);
	struct ventry *e = slot(sg, ino);
	if (e && e->nlookup && e->nlookup < UINT32_MAX) {
		if (e->nlookup > nlookup) {
			e->nlookup -= (uint32_t)nlookup;
		} else {
			view_drop(fs, vt, e->view);
			erase(sg, e);
		}
	}
	pthread_mutex_unlock(&vt->lock);
}

int fs_versions_find(struct fs *fs, uint64_t ino, uint64_t *ret_plain, int64_t *ret_stamp, struct fs_view **ret_view)
{
	struct fs_versions *vt = fs->versions;
	int r = -ESTALE; /* an inode number the kernel no longer holds */
	pthread_mutex_lock(&vt->lock);
	struct ventry *e = slot(seg_of(vt, ino), ino);
	if (e && e->nlookup) {
		if (ret_stamp)
			*ret_stamp = e->stamp;
		if (ret_plain)
			*ret_plain = e->plain;
		if (ret_view)
			*ret_view = fs_view_ref(fs, vt->views[e->view]);
		r = 0;
	}
	pthread_mutex_unlock(&vt->lock);
	return r;
}

/*
 * Held views: an entry keeps the view it was handed out in, and the kernel keeps inodes for as
 * long as memory allows, so each round's view could stay held for ever — a store snapshot each.
 * After every round the notifier calls this: past VIEWS_HELD, the entries of the oldest held view
 * that are still the current version move to `cur` (what a LOOKUP of them does too), a batch per
 * round, found with the table unlocked. A view whose remaining entries are all old versions —
 * files someone may still have open — is marked stuck and stays until the kernel forgets them.
 */
#define VIEWS_HELD 16
#define COMPACT_BATCH 8192

void fs_versions_compact(struct fs *fs, struct fs_view *cur)
{
	struct fs_versions *vt = fs->versions;
	struct { uint64_t ino, plain; int64_t stamp; } *batch = NULL;
	size_t n = 0, held = 0;
	uint32_t vi = 0;
	struct fs_view *oldest = NULL;
	pthread_mutex_lock(&vt->lock);
	for (size_t i = 0; i < vt->nviews; i++) {
		struct fs_view *fv = vt->views[i];
		if (!fv)
			continue;
		held++;
		if (fv != cur && !fv->stuck && (!oldest || fv->generation < oldest->generation))
			oldest = fv, vi = (uint32_t)i;
	}
	if (held > VIEWS_HELD && oldest && (batch = malloc(COMPACT_BATCH * sizeof(*batch))))
		for (size_t k = 0; k < SEGS && n < COMPACT_BATCH; k++)
			for (uint32_t i = 0; i < vt->seg[k].cap && n < COMPACT_BATCH; i++) {
				const struct ventry *e = &vt->seg[k].t[i];
				if (e->nlookup && e->view == vi) {
					batch[n].ino = entry_ino(e);
					batch[n].plain = e->plain;
					batch[n++].stamp = e->stamp;
				}
			}
	pthread_mutex_unlock(&vt->lock);
	if (!n) {
		free(batch);
		return;
	}
	size_t keep = 0;
	for (size_t i = 0; i < n; i++) {
		struct kx_node node;
		int64_t now;
		if (kx_tree_node(fs->tree, cur->v, batch[i].plain, &node) == 0 &&
		    kx_tree_stamp(fs->tree, cur->v, &node, &now) == 0 && now == batch[i].stamp)
			batch[keep++] = batch[i];
	}
	uint32_t ci;
	size_t moved = 0;
	pthread_mutex_lock(&vt->lock);
	for (size_t i = 0; i < keep && vt->views[vi] == oldest; i++) {
		struct ventry *e = slot(seg_of(vt, batch[i].ino), batch[i].ino);
		if (e && e->nlookup && e->view == vi && e->stamp == batch[i].stamp && view_add(fs, vt, cur, &ci) == 0) {
			e->view = ci;
			moved++;
			view_drop(fs, vt, vi); /* with its last entry the view goes, and index vi is free */
		}
	}
	if (!moved && n < COMPACT_BATCH && vt->views[vi] == oldest)
		oldest->stuck = true;
	pthread_mutex_unlock(&vt->lock);
	free(batch);
}

bool fs_versions_plain_used(struct fs *fs)
{
	pthread_mutex_lock(&fs->versions->lock);
	bool used = fs->versions->plain_used;
	pthread_mutex_unlock(&fs->versions->lock);
	return used;
}

size_t fs_versions_count(struct fs *fs, size_t *ret_views, size_t *ret_bytes)
{
	struct fs_versions *vt = fs->versions;
	pthread_mutex_lock(&vt->lock);
	size_t n = 0, views = 0, slots = 0;
	for (size_t i = 0; i < vt->nviews; i++)
		views += vt->views[i] != NULL;
	for (size_t i = 0; i < SEGS; i++) {
		n += vt->seg[i].len;
		slots += vt->seg[i].cap;
	}
	pthread_mutex_unlock(&vt->lock);
	if (ret_views)
		*ret_views = views;
	if (ret_bytes)
		*ret_bytes = slots * sizeof(struct ventry);
	return n;
}
