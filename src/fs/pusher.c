// SPDX-License-Identifier: MIT
/*
 * The pusher: a thread that puts files into the kernel's page cache before a reader asks for
 * them (fuse_lowlevel_notify_store), so that `grep -r`, `tar`, `rsync`, `sha256sum -c` or `cat` of
 * a glob on a cold mount seldom wait for a READ round trip.
 *
 * Why: a cold read of a small generated file costs one READ round trip (20–35 µs on a VM, most of
 * it waking the reader and the daemon) plus rendering it, while the reader's own work is a few
 * µs — the reader and the daemon take turns on one core and the other stays idle. This thread
 * renders the files a reader is about to read and stores their bytes in the kernel's page cache,
 * on the other core, while the reader goes on; what it reads next is already there. Three signs
 * (ops.c): a file just looked up by name (fs_push_one) is about to be opened, as a rule; a
 * process that reads a file of a directory it has just listed, or a second file of one in a row
 * (fs_reader_walks), is walking it — the files listed after that one are pushed (fs_push); and
 * once a process has done the former, it reads what it lists (grep -r, tar): when it reaches the
 * end of its next listing, the worker answering pushes that directory's files before it answers
 * (fs_push_now — a push queued then lost the race with the first READ or two in each
 * directory); and when one answer holds such a listing whole, the worker that sent it pushes the
 * files right after it, while the reader takes it in and asks for the end (fs_push_answered:
 * the kernel makes the inodes as it parses the answer, on the reader's core, so a store that comes
 * first is tried again, yielding, a few times); the end is then answered at once, and what the
 * reader does between its two requests overlaps the stores (docs/performance.md). A push that
 * loses the race costs nothing but the work (the kernel asks with READ as before).
 *
 * Only inodes the kernel holds are pushed (an unknown one answers ENOENT anyway), with the bytes
 * the READ path would answer. push_dir renders them in a view and stores them with no view
 * held: a store waits for the lock of its page, which a READ of the same file may hold until a
 * worker answers it, and a notifier round must not wait for that; if the store's generation moved
 * on meanwhile, what was stored is invalidated. This thread holds no lock while it talks to the
 * kernel.
 *
 * The kernel makes a looked-up inode only once the process that asked runs again: a store before
 * that answers ENOENT. On a busy machine that process may wait for a core longer than a batch
 * gathers, so a file whose store answered ENOENT is tried again later, after 1, 2, 4 … 128 ms.
 *
 * The queue is small and drops what it cannot take: a dropped push is only a READ not saved.
 */
#include "fs.h"

#include <fuse_lowlevel.h>

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define QUEUE 64
#define BATCH 32         /* files looked up by name are pushed this many at a time, */
#define BATCH_WAIT_MS 1  /* or once the first has waited this long */
#define TRIES 9          /* stores of a file looked up while the kernel answers ENOENT, */
#define LATER 32         /* for at most this many files at a time */
#define SHARED_SLOTS 4096 /* documents' files remembered as stored */
#define BARE_BITS (1u << 22) /* directories whose listing went without its files' entries (512 KiB) */
#define FIRST_SLOTS 4096     /* bare directories with one file looked up in them (32 KiB) */

struct fs_pusher {
	struct fs *fs;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	bool gathering;      /* files looked up wait for more (or BATCH_WAIT_MS) */
	unsigned head, len;
	unsigned dirs;       /* directory requests among the len queued */
	struct {
		uint64_t dir, ino; /* dir 0: file ino alone */
		unsigned tries;    /* stores of file ino that answered ENOENT so far */
		bool relist;       /* not a push: relist_after(dir) */
	} q[QUEUE];
	unsigned nlater;     /* files to try again, each once it is due */
	struct {
		uint64_t ino;
		unsigned tries;
		struct timespec due;
	} later[LATER];
	unsigned long requests, files, dropped, retried, early, relisted; /* for -d */
	/*
	 * Held by the one worker pushing before it answers (fs_push_now). One at most: a store
	 * waits for its page's lock, which a READ holds until a worker answers it — one worker
	 * waiting leaves the others to answer (loop.c hands its turn on if it waits long).
	 */
	pthread_mutex_t now;
	uint64_t shared[SHARED_SLOTS]; /* documents' files stored (fs_pushed_shared); atomic */
	uint64_t bare[BARE_BITS / 64]; /* fs_listed_bare, by a hash of the inode number; atomic */
	uint64_t first[FIRST_SLOTS];   /* fs_looked_up_in: a directory's first file; atomic */
};

/*
 * Before files looked up by name are pushed, the pusher lets them gather: the kernel makes a
 * looked-up inode only once the process that asked runs again (a store before answers ENOENT),
 * and one wake-up of this thread per batch instead of per LOOKUP keeps it off the path of the
 * lookups themselves (a glob of 100,000 names). Directories a reader walks go at once.
 */
static void gather(struct fs_pusher *p)
{
	struct timespec until = fs_deadline_ms(BATCH_WAIT_MS);
	p->gathering = true;
	while (!p->stop && !p->dirs && p->len < BATCH)
		if (pthread_cond_timedwait(&p->wake, &p->lock, &until) == ETIMEDOUT)
			break;
	p->gathering = false;
}

/* Queue a push (or a relisting); p->lock held. */
static void queue(struct fs_pusher *p, uint64_t dir, uint64_t ino, unsigned tries, bool relist)
{
	if (p->len == QUEUE) {
		p->dropped++;
		return;
	}
	unsigned tail = (p->head + p->len++) % QUEUE;
	p->q[tail].dir = dir;
	p->q[tail].ino = ino;
	p->q[tail].tries = tries;
	p->q[tail].relist = relist;
	p->dirs += dir != 0;
}

/* File ino's store answered ENOENT for the tries-th time: try it again later, if at all. */
static void try_later(struct fs_pusher *p, uint64_t ino, unsigned tries)
{
	if (tries >= TRIES || p->nlater == LATER) {
		p->dropped += tries < TRIES;
		return;
	}
	p->later[p->nlater].ino = ino;
	p->later[p->nlater].tries = tries;
	p->later[p->nlater++].due = fs_deadline_ms(1L << (tries - 1));
	p->retried++;
}

static bool before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Queue the files due to be tried again; the earliest still waiting in *next. p->lock held. */
static bool later_due(struct fs_pusher *p, struct timespec *next)
{
	struct timespec now;
	bool waiting = false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	for (unsigned i = 0; i < p->nlater;) {
		if (before(&now, &p->later[i].due)) {
			if (!waiting || before(&p->later[i].due, next))
				*next = p->later[i].due;
			waiting = true;
			i++;
		} else {
			queue(p, 0, p->later[i].ino, p->later[i].tries, false);
			p->later[i] = p->later[--p->nlater];
		}
	}
	return waiting;
}

/* Count a push that stored n files (or failed: n < 0) for -d; p->lock held. */
static void tally(struct fs_pusher *p, int n)
{
	p->requests++;
	p->files += n > 0 ? (unsigned long)n : 0;
}

/*
 * Pushing (pusher.c). Files are rendered in a view, then stored in the kernel's page cache with
 * no view held: a store waits for the lock of its page, which a READ of the same file holds until
 * a worker answers it, and a held view would make a notifier round (and whatever waits for one)
 * wait for that too. So a round may change the store between the rendering and the store; the
 * pusher looks afterwards, and if the generation moved on, takes back what it stored (an
 * invalidation after the store, as the round's own would have been) — bytes of an older
 * generation never stay in the page cache.
 */
#define PUSH_MAX 32   /* files rendered before they are stored */
#define PUSH_WAITS 20 /* a store pushed as its listing is answered: tries again after ENOENT */

struct pushing {
	uint64_t generation; /* of the current view when they were rendered */
	size_t len;
	size_t unknown;      /* stores the kernel answered ENOENT: it has no such inode (yet) */
	unsigned waits;      /* a store answered ENOENT is tried again this many times, yielding:
			      * the reader is taking in the listing that makes the inodes */
	struct {
		uint64_t ino;
		const struct kx_content *c;
	} f[PUSH_MAX];
};

/* Render file n (inode `ino`) in view fv for pushing, if the kernel holds that inode. */
static void push_render(struct fs *fs, struct fs_view *fv, const struct kx_node *n, uint64_t ino,
			struct pushing *p)
{
	if (fs_ino_versioned(ino) ? fs_versions_find(fs, ino, NULL, NULL, NULL) < 0 : !fs_held_maybe(fs, ino))
		return; /* the kernel would answer ENOENT */
	if (fs_pushed_shared(fs, ino))
		return; /* stored for another run that names the same document */
	if (kx_node_read_in_ranges(n))
		return; /* an artifact, index.tsv: read a range at a time, never pushed whole */
	if (p->len < PUSH_MAX && kx_tree_read(fs->tree, fv->v, n, &p->f[p->len].c) == 0)
		p->f[p->len++].ino = ino; /* a failure is the reader's READ's to report */
}

/* One store: 1 stored, -ENOENT the kernel has no such inode (yet, or any longer), -ENOTCONN the
 * connection is gone, 0 another failure (logged). */
static int push_store(struct fs *fs, uint64_t ino, const struct kx_content *c)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(c->len);
	bv.buf[0].mem = (void *)c->data;
	int r = fuse_lowlevel_notify_store(fs->se, ino, 0, &bv, 0);
	if (fs_gone(r))
		return -ENOTCONN;
	if (r < 0 && r != -ENOENT)
		fs_log_error("cannot store inode %#llx in the page cache: %s", (unsigned long long)ino, strerror(-r));
	return r == 0 ? 1 : r == -ENOENT ? r : 0;
}

/*
 * Store what p holds (no view held), then take it back if the store changed meanwhile. Returns
 * how many were stored, or -ENOTCONN.
 */
static int push_flush(struct fs *fs, struct pushing *p)
{
	int r = 0, stored = 0;
	bool kept[PUSH_MAX] = { false };
	for (size_t i = 0; i < p->len && r != -ENOTCONN; i++) {
		r = push_store(fs, p->f[i].ino, p->f[i].c);
		for (unsigned t = 0; r == -ENOENT && t < p->waits; t++) {
			sched_yield(); /* the reader may be waiting for this core */
			r = push_store(fs, p->f[i].ino, p->f[i].c);
		}
		if (r == -ENOENT)
			p->waits = 0; /* it is not making them (now): no more waiting */
		kept[i] = r > 0;
		stored += r > 0;
		if (r > 0)
			fs_pushed_set(fs, p->f[i].ino, true);
		p->unknown += r == -ENOENT;
	}
	struct fs_view *now = fs_view_get(fs);
	bool moved = now->generation != p->generation;
	fs_view_put(fs, now);
	for (size_t i = 0; i < p->len; i++) {
		if (moved && kept[i] && r != -ENOTCONN) {
			fuse_lowlevel_notify_inval_inode(fs->se, p->f[i].ino, 0, 0);
			fs_pushed_set(fs, p->f[i].ino, false);
		}
		kx_content_put(p->f[i].c);
	}
	p->len = 0;
	return r == -ENOTCONN ? r : stored;
}

/* Directory dir's listing (inode number ino) from its start, to fs_dircache_put; NULL if it is
 * gone or empty. */
static const struct fs_listing *listing_of(struct fs *fs, struct fs_view *fv, uint64_t ino, const struct kx_node *dir)
{
	const struct fs_listing *l;
	size_t i;
	return fs_dircache_get(fs->dirs, fs->tree, fv, ino, dir, 0, &l, &i) == 0 ? l : NULL;
}

/* The index of the entry after the one of inode ino in l; 0 if ino is not listed. */
static size_t listed_after(struct fs *fs, struct fs_view *fv, const struct fs_listing *l, uint64_t ino)
{
	for (size_t i = 2; i < l->len; i++)
		if (fs_listed_ino(fs, fv, &l->e[i].node) == ino)
			return i + 1;
	return 0;
}

/*
 * The pusher's work: store in the kernel's page cache every file of directory `dir` listed after
 * inode `after` (all of them if `after` is 0 or not listed) that the kernel holds / file `ino`.
 * Return how many they stored, or -ENOTCONN once the connection is gone; a file the kernel has no
 * inode for (yet: it makes a looked-up inode only once the process that asked runs again) returns
 * -ENOENT. With `all` (fs_push_answered; NULL otherwise) a store answered ENOENT is tried again
 * a few times, and *all tells whether every file listed after `after` was stored.
 */
static int push_dir(struct fs *fs, uint64_t dino, uint64_t after, bool *all)
{
	struct pushing p = { .len = 0, .waits = all ? PUSH_WAITS : 0 };
	struct fs_view *fv = fs_view_get(fs);
	struct kx_node dir;
	const struct fs_listing *l = fs_node_of(fs, fv, dino, &dir) == 0 ? listing_of(fs, fv, dino, &dir) : NULL;
	size_t i = l && after ? listed_after(fs, fv, l, after) : 0; /* after 0: from the first file */
	p.generation = fv->generation;
	for (i = i ? i : 2; l && i < l->len && p.len < PUSH_MAX; i++) {
		const struct kx_node *n = &l->e[i].node;
		if (n->type < KX_NODE__FS && !kx_node_is_dir(n))
			push_render(fs, fv, n, fs_listed_ino(fs, fv, n), &p);
	}
	bool whole = l && i == l->len; /* not cut short at PUSH_MAX */
	if (l)
		fs_dircache_put(fs->dirs, l);
	fs_view_put(fs, fv);
	int r = push_flush(fs, &p);
	if (all)
		*all = whole && r >= 0 && !p.unknown;
	return r;
}

static int push_file(struct fs *fs, uint64_t ino)
{
	struct pushing p = { .len = 0 };
	struct fs_view *fv = fs_view_get(fs);
	struct kx_node n;
	p.generation = fv->generation;
	if (fs_resolve(fs, &fv, ino, &n) == 0)
		push_render(fs, fv, &n, ino, &p);
	fs_view_put(fs, fv);
	int r = push_flush(fs, &p);
	return r == 0 && p.unknown ? -ENOENT : r;
}

#define RELIST_AHEAD 256 /* bare listings dropped after the directory a reader looks up files in */
#define RELIST_SCAN 1024 /* entries of the parent looked at for them */

/* Directory s's bare listing, if the kernel may hold one: its bit taken, its inode into todo. */
static bool take_bare(struct fs *fs, struct fs_view *fv, const struct kx_node *s, uint64_t *todo, size_t *n)
{
	uint64_t ino;
	if (*n == RELIST_AHEAD || s->type >= KX_NODE__FS || !kx_node_is_dir(s) || !fs_bare_take(fs, ino = fs_listed_ino(fs, fv, s)))
		return false;
	todo[(*n)++] = ino;
	return true;
}

/*
 * The directories after `dino` in its parent, and for a group directory among them whose listing
 * was bare its rank directories too: a reader that looks up the files of a group's first rank
 * directory one by one goes on to the next group's. How many listings it dropped, or -ENOTCONN
 * once the connection is gone.
 */
static int relist_after(struct fs *fs, uint64_t dino)
{
	struct fs_view *fv = fs_view_get(fs);
	struct kx_node dir, parent;
	const struct fs_listing *l = NULL, *sub;
	size_t n = 0;
	uint64_t todo[RELIST_AHEAD];
	if (fs_node_of(fs, fv, dino, &dir) == 0 && kx_tree_parent(fs->tree, fv->v, &dir, &parent) == 0)
		l = listing_of(fs, fv, kx_tree_ino(&parent), &parent);
	size_t i = l ? listed_after(fs, fv, l, dino) : 0;
	for (size_t end = i + RELIST_SCAN; i && i < l->len && i < end && n < RELIST_AHEAD; i++) {
		const struct kx_node *s = &l->e[i].node;
		/* a group find listed: it listed its rank directories too */
		if (take_bare(fs, fv, s, todo, &n) && s->type == KX_NODE_GROUP && (sub = listing_of(fs, fv, todo[n - 1], s))) {
			for (size_t j = 2; j < sub->len; j++)
				take_bare(fs, fv, &sub->e[j].node, todo, &n);
			fs_dircache_put(fs->dirs, sub);
		}
	}
	if (l)
		fs_dircache_put(fs->dirs, l);
	fs_view_put(fs, fv);
	/* like a store, with no view held: the kernel drops the listing's pages and the attributes */
	for (size_t k = 0; k < n; k++)
		if (fs_gone(fuse_lowlevel_notify_inval_inode(fs->se, todo[k], 0, 0)))
			return -ENOTCONN;
	return (int)n;
}

static void *pusher_main(void *arg)
{
	pthread_setname_np(pthread_self(), "kx-pusher"); /* for top -H, perf */
	struct fs_pusher *p = arg;
	bool batch = false; /* pushing a gathered batch: until the queue is empty */
	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct timespec next;
		bool waiting = p->nlater && later_due(p, &next);
		while (!p->stop && !p->len) {
			batch = false;
			if (!waiting)
				pthread_cond_wait(&p->wake, &p->lock);
			else if (pthread_cond_timedwait(&p->wake, &p->lock, &next) == ETIMEDOUT)
				waiting = later_due(p, &next);
		}
		if (!p->stop && !batch && !p->dirs) {
			gather(p);
			batch = true;
		}
		if (p->stop)
			break;
		uint64_t dir = p->q[p->head].dir, ino = p->q[p->head].ino;
		unsigned tries = p->q[p->head].tries;
		bool relist = p->q[p->head].relist;
		p->head = (p->head + 1) % QUEUE;
		p->len--;
		p->dirs -= dir != 0;
		pthread_mutex_unlock(&p->lock);
		int n = relist ? relist_after(p->fs, dir)
			: dir  ? push_dir(p->fs, dir, ino, NULL)
			       : push_file(p->fs, ino);
		pthread_mutex_lock(&p->lock);
		if (n == -ENOTCONN) /* the connection is gone: unmounting */
			break;
		if (relist) {
			p->relisted += n > 0 ? (unsigned long)n : 0;
			continue;
		}
		if (n == -ENOENT)
			try_later(p, ino, tries + 1);
		tally(p, n);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void pusher_free(struct fs_pusher *p)
{
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->now);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

int fs_pusher_start(struct fs *fs)
{
	struct fs_pusher *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->fs = fs;
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_init(&p->now, NULL);
	fs_cond_init_monotonic(&p->wake);
	int r = pthread_create(&p->thread, NULL, pusher_main, p);
	if (r != 0) {
		pusher_free(p);
		return -r;
	}
	fs->pusher = p;
	return 0;
}

void fs_pusher_stop(struct fs *fs)
{
	struct fs_pusher *p = fs->pusher;
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	fs_log_debug(fs, "pushed %lu files into the page cache for %lu requests (%lu directories whole as their listing was answered, %lu tried again, %lu dropped: no room); %lu listings without files' entries dropped from the kernel's cache",
		     p->files, p->requests, p->early, p->retried, p->dropped, p->relisted);
	pusher_free(p);
	fs->pusher = NULL;
}

static void enqueue(struct fs *fs, uint64_t dir, uint64_t ino)
{
	struct fs_pusher *p = fs->pusher;
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	queue(p, dir, ino, 0, false);
	/* a batch being gathered is woken only when it is full (or a directory comes) */
	if (!p->gathering || dir || p->len >= BATCH)
		pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
}

void fs_push(struct fs *fs, uint64_t dir, uint64_t after)
{
	enqueue(fs, dir, after);
}

void fs_push_one(struct fs *fs, uint64_t ino)
{
	enqueue(fs, 0, ino);
}

/*
 * Push directory `dir` on the calling worker, before or after its answer (*all as for
 * push_dir). False, and nothing done, when it must not: a store may wait for a READ of its
 * page, and another worker must be there to answer it — so never under -s, and one worker at a time.
 */
static bool push_here(struct fs *fs, uint64_t dir, bool *all)
{
	struct fs_pusher *p = fs->pusher;
	if (!p || !fs_loop_watched() || pthread_mutex_trylock(&p->now) != 0)
		return false;
	int n = push_dir(fs, dir, 0, all);
	pthread_mutex_unlock(&p->now);
	pthread_mutex_lock(&p->lock);
	tally(p, n);
	p->early += all && *all;
	pthread_mutex_unlock(&p->lock);
	return true;
}

void fs_push_now(struct fs *fs, uint64_t dir)
{
	if (!push_here(fs, dir, NULL))
		enqueue(fs, dir, 0);
}

bool fs_push_answered(struct fs *fs, uint64_t dir)
{
	bool all = false;
	return push_here(fs, dir, &all) && all;
}

bool fs_pushed_shared(struct fs *fs, uint64_t ino)
{
	struct fs_pusher *p = fs->pusher;
	return p && kx_tree_ino_linked(ino) && __atomic_load_n(&p->shared[ino % SHARED_SLOTS], __ATOMIC_RELAXED) == ino;
}

void fs_pushed_set(struct fs *fs, uint64_t ino, bool stored)
{
	struct fs_pusher *p = fs->pusher;
	if (!p || !kx_tree_ino_linked(ino))
		return;
	uint64_t *slot = &p->shared[ino % SHARED_SLOTS];
	if (stored)
		__atomic_store_n(slot, ino, __ATOMIC_RELAXED);
	else
		__atomic_compare_exchange_n(slot, &ino, 0, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* The high bits of a multiplicative hash: inode numbers share their low ones. */
static uint64_t ino_hash(uint64_t ino)
{
	return ino * 0x9e3779b97f4a7c15ull;
}

/* The bit of directory `dir` in the table of bare listings. */
static uint64_t *bare_word(struct fs_pusher *p, uint64_t dir, uint64_t *bit)
{
	uint64_t h = ino_hash(dir) >> 40;
	*bit = 1ull << (h % 64);
	return &p->bare[(h / 64) % (BARE_BITS / 64)];
}

void fs_listed_bare(struct fs *fs, uint64_t dir)
{
	struct fs_pusher *p = fs->pusher;
	uint64_t bit;
	if (p) {
		uint64_t *w = bare_word(p, dir, &bit);
		if (!(__atomic_load_n(w, __ATOMIC_RELAXED) & bit))
			__atomic_fetch_or(w, bit, __ATOMIC_RELAXED);
	}
}

bool fs_bare_take(struct fs *fs, uint64_t dir)
{
	struct fs_pusher *p = fs->pusher;
	uint64_t bit;
	if (!p)
		return false;
	uint64_t *w = bare_word(p, dir, &bit);
	return (__atomic_load_n(w, __ATOMIC_RELAXED) & bit) && (__atomic_fetch_and(w, ~bit, __ATOMIC_RELAXED) & bit);
}

/*
 * Only a second file of one bare directory, other than the first, says that the reader reads what
 * a listing holds (grep -r, tar, rsync reading the kernel's copy of find's listing): a reader of
 * paths another process found (find -name manifest.json | xargs cat) looks up one file in each
 * directory, and lists nothing — dropping the listings it passes would only make the next find
 * list them all again. The first file of each such directory is remembered in a slot, as a hash
 * of the directory and one of the file; a collision costs one relisting too many or too few.
 */
void fs_looked_up_in(struct fs *fs, uint64_t dir, uint64_t file)
{
	struct fs_pusher *p = fs->pusher;
	uint64_t bit;
	if (!p || !(__atomic_load_n(bare_word(p, dir, &bit), __ATOMIC_RELAXED) & bit))
		return; /* its listing had its files' entries, or this was said already */
	uint64_t h = ino_hash(dir), tag = (h & 0xffffffff00000000ull) | ino_hash(file) >> 32;
	uint64_t was = __atomic_exchange_n(&p->first[(h >> 20) % FIRST_SLOTS], tag, __ATOMIC_RELAXED);
	if (was == tag || (was ^ tag) >> 32 || !fs_bare_take(fs, dir))
		return; /* the directory's first file (again), or another worker took the bit */
	pthread_mutex_lock(&p->lock);
	queue(p, dir, 0, 0, true);
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
}
