// SPDX-License-Identifier: MIT
/*
 * The invalidation notifier: a dedicated thread that, after the store changed, tells the kernel
 * which names and inodes to forget (fuse_lowlevel_notify_inval_entry / _inval_inode), so that the
 * long entry/attr timeouts and keep_cache of ops.c never serve a stale tree.
 *
 * Why a thread: the kernel takes directory and inode locks to apply an invalidation, and the
 * operation that caused the change (an inbox FLUSH) may itself hold them — libfuse's
 * fuse_lowlevel.h warns that notifying from inside a related operation deadlocks. So the writer
 * only records what changed (fs_changed, which returns at once) and this thread does the rest,
 * holding no lock while it talks to the kernel — the pattern of libfuse's
 * example/notify_inval_entry.c and notify_inval_inode.c, where an updater thread notifies.
 *
 * Order of a round: (1) swap in a view of the new store state and wait until no operation still
 * reads the old one (fs_view_swap), (2) ask the tree what differs between the two views
 * (kx_tree_changes), (3) send the invalidations. Step 1 is what makes it race-free: an operation
 * that began before the change has finished before its cached result is invalidated, and every
 * later one sees the new state. Rounds coalesce: changes that arrive during a round are handled in
 * the next, from the generation the kernel last saw.
 *
 * Rounds are numbered. fs_changed returns the number of the round that will publish the
 * change, and the inbox hands the reply to the FLUSH or RENAME that committed it to
 * fs_reply_after, which this thread sends once that round is done — so close() returns only
 * when the new run is in the daemon's view and every kernel cache that could hide it was told,
 * while the worker thread is free at once (it writes the receipt meanwhile, in parallel with the
 * round). Deadlock-free because the round only ever waits for tree operations and tree
 * directories' locks, and a request whose reply waits here holds neither: a FLUSH holds no
 * directory lock, a RENAME only the inbox's.
 *
 * Names of the inbox (a file decided behind the kernel's back) are forgotten by a second thread
 * of their own: invalidating one takes the inbox directory's lock, which a RENAME holds until its
 * reply — sent by the first thread. One thread for both could wait for itself.
 *
 * Between rounds the thread also keeps the daemon's footprint honest: every few seconds, if the
 * caches were busy, it hands the heap's free pages back to the system (malloc_trim). The caches
 * are bounded; what they free in the middle of the heap would otherwise stay resident.
 */
#include "fs.h"

#include <fuse_lowlevel.h>

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A name the kernel should forget (the inbox: a file decided behind the kernel's back). */
struct stale_name {
	struct stale_name *next;
	uint64_t parent;
	char name[];
};

/* A reply held until round `ticket` is done. */
struct deferred {
	struct deferred *next;
	uint64_t ticket;
	fuse_req_t req;
	int err;
};

struct fs_notifier {
	struct fs *fs;
	pthread_t thread, forgetter;
	pthread_mutex_t lock;
	pthread_cond_t wake, forget_wake, round_done, names_done;
	bool stop, pending, unknown, forgetter_started;
	struct kx_digest *runs; /* added since the last round; `unknown` when a caller could not say */
	size_t len, cap;
	uint64_t *gens;         /* the generations those commits created */
	size_t ngens, capgens;
	uint64_t started, done; /* rounds */
	struct deferred *replies;
	struct stale_name *names;
	size_t nnames;
	uint64_t names_told, names_sent; /* counts since the mount: fs_wait_forgotten compares */
};

#define NAMES_MAX 65536 /* beyond that, names are dropped: they time out anyway (10 s at most) */

struct sent {
	struct fs *fs;
	struct fs_view *after;
	bool plain_used; /* fs_versions_plain_used: versioned files may be held by plain number too */
	unsigned long entries, inodes, deleted, unknown, unheld;
};

/* One notification: `child` non-zero deletes name → child (a replaced version, below). */
static int notify(struct sent *s, enum kx_inval what, uint64_t ino, const char *name, uint64_t child)
{
	int r;
	if (!child && !fs_held_maybe(s->fs, ino)) {
		s->unheld++; /* neither the inode nor a name below it can be in the kernel's caches */
		return 0;
	}
	if (child) {
		r = fuse_lowlevel_notify_delete(s->fs->se, ino, child, name, strlen(name));
		s->deleted++;
	} else if (what == KX_INVAL_ENTRY) {
		r = fuse_lowlevel_notify_inval_entry(s->fs->se, ino, name, strlen(name));
		s->entries++;
	} else {
		/* a negative offset: attributes only, the page cache stays */
		r = fuse_lowlevel_notify_inval_inode(s->fs->se, ino, what == KX_INVAL_DATA ? 0 : -1, 0);
		s->inodes++;
	}
	if (r == -ENOENT) {
		s->unknown++; /* the kernel holds no such inode or name: nothing to forget */
		return 0;
	}
	if (fs_gone(r))
		return r; /* unmounting: stop this round */
	if (r < 0)
		fs_log_error("cannot invalidate inode %#llx%s%s: %s", (unsigned long long)ino, name ? " entry " : "",
			     name ? name : "", strerror(-r));
	return 0;
}

/*
 * A versioned file (plain inode number `plain`) changed; `stamp` is the version the kernel may
 * hold (versions.c). If it holds it and the stamp moved on, its name now leads to another inode:
 * the name is deleted with the old inode as its child — the kernel unhashes it and drops the old
 * inode's link count, so it forgets the inode once no one has it open, while whoever has it open
 * goes on reading the old version whole, as after a rename(2) over a file. Same stamp (the version
 * did not change, only attributes moved): the inode is invalidated, as every other file's.
 */
static int send_version(struct sent *s, enum kx_inval what, uint64_t plain, int64_t stamp)
{
	uint64_t old = fs_version_ino(plain, stamp);
	int64_t now;
	struct kx_node n, dir;
	if (fs_versions_find(s->fs, old, NULL, NULL, NULL) < 0)
		return 0; /* the kernel does not hold that version */
	if (kx_tree_node(s->fs->tree, s->after->v, plain, &n) < 0 ||
	    kx_tree_stamp(s->fs->tree, s->after->v, &n, &now) < 0 || now == stamp ||
	    kx_tree_parent(s->fs->tree, s->after->v, &n, &dir) < 0)
		return notify(s, what, old, NULL, 0);
	char name[KX_NAME_MAX + 16];
	if (kx_tree_file_name(s->fs->tree, s->after->v, &n, name, sizeof(name)) < 0)
		return notify(s, what, old, NULL, 0);
	return notify(s, what, kx_tree_ino(&dir), name, old);
}

static bool held_dir(void *ctx, uint64_t ino)
{
	struct sent *s = ctx;
	return fs_held_maybe(s->fs, ino);
}

static int send_one(void *ctx, enum kx_inval what, uint64_t ino, const char *name, int64_t stamp)
{
	struct sent *s = ctx;
	int r = 0;
	if (stamp != KX_STAMP_NONE && (r = send_version(s, what, ino, stamp)) == 0 && !s->plain_used)
		return 0;
	return r ? r : notify(s, what, ino, name, 0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * Whether the commits told (`gens`, the generations they created) are every commit from `from`
 * (excluded) to `to`. Not when a writer committed and has not told yet — its fs_changed is on
 * its way — or told in a round before: its runs are in `to` all the same, so the round must find
 * them itself (a scan), or the kernel would never hear of them (the next round's `before`
 * already holds them).
 */
static bool told_all(uint64_t *gens, size_t n, uint64_t from, uint64_t to)
{
	qsort(gens, n, sizeof(*gens), cmp_u64);
	uint64_t want = from + 1;
	for (size_t i = 0; i < n && want <= to; i++)
		if (gens[i] == want)
			want++;
	return want > to;
}

static void round_of(struct fs_notifier *nt, struct kx_digest *runs, size_t n, uint64_t *gens, size_t ngens)
{
	struct fs *fs = nt->fs;
	struct fs_view *before = fs_view_swap(fs);
	if (!before)
		return; /* same generation: nothing the kernel could have cached differs */
	struct fs_view *after = fs_view_get(fs);
	if (runs && !told_all(gens, ngens, before->generation, after->generation))
		runs = NULL, n = 0; /* found from the generations */
	struct sent s = { .fs = fs, .after = after, .plain_used = fs_versions_plain_used(fs) };
	struct kx_tree_stats st0, st1;
	kx_tree_stats(fs->tree, &st0);
	int r = kx_tree_changes(fs->tree, before->v, after->v, runs, n, send_one, held_dir, &s);
	kx_tree_stats(fs->tree, &st1);
	if (r < 0 && r != -ENOTCONN && r != -EBADF && r != -ENODEV)
		fs_log_error("cannot work out what changed from generation %llu to %llu: %s",
			     (unsigned long long)before->generation, (unsigned long long)after->generation,
			     strerror(-r));
	/* documents read meanwhile: the round's own, and any a concurrent operation read */
	fs_log_debug(fs, "generation %llu -> %llu: %lu entries, %lu inodes invalidated, %lu versions replaced "
		     "(%lu not cached; %lu not sent, not held); %llu documents read", (unsigned long long)before->generation,
		     (unsigned long long)after->generation, s.entries, s.inodes, s.deleted, s.unknown, s.unheld,
		     (unsigned long long)(st1.doc_reads - st0.doc_reads));
	fs_versions_compact(fs, after);
	if (fs->debug) {
		size_t views, bytes, held = fs_versions_count(fs, &views, &bytes);
		fs_log_debug(fs, "versioned inodes the kernel holds: %zu, in %zu store views (table %zu KiB)", held,
			     views, bytes >> 10);
	}
	fs_sizer_tell(fs); /* the sizes of what moved, kept for later mounts */
	fs_view_put(fs, after);
	fs_view_put(fs, before);
}

/* Take the replies whose round is done (under nt->lock). */
static struct deferred *due_replies(struct fs_notifier *nt, bool all)
{
	struct deferred *due = NULL, **p = &nt->replies;
	while (*p) {
		struct deferred *d = *p;
		if (all || d->ticket <= nt->done) {
			*p = d->next;
			d->next = due;
			due = d;
		} else {
			p = &d->next;
		}
	}
	return due;
}

static void send_replies(struct deferred *d)
{
	while (d) {
		struct deferred *next = d->next;
		fuse_reply_err(d->req, d->err);
		free(d);
		d = next;
	}
}

#define TRIM_SECONDS 2
#define TELL_WAIT_MS 20 /* how long a round waits for writers that committed but have not told */

/*
 * Before a round (nt->lock held): give writers that committed and have not told yet a moment to
 * tell — they do right after their commit's sync — so that the round knows their runs and need
 * not find them with a scan of the store (round_of still does, if one is late).
 */
static void wait_for_tellers(struct fs_notifier *nt)
{
	if (nt->unknown)
		return;
	struct fs *fs = nt->fs;
	pthread_mutex_unlock(&nt->lock);
	struct fs_view *cur = fs_view_get(fs);
	uint64_t from = cur->generation;
	fs_view_put(fs, cur);
	struct kx_store_stats st;
	int r = kx_store_stats(fs->store, NULL, &st);
	pthread_mutex_lock(&nt->lock);
	if (r < 0)
		return;
	struct timespec until = fs_deadline_ms(TELL_WAIT_MS);
	while (!nt->stop && !nt->unknown && !told_all(nt->gens, nt->ngens, from, st.generation))
		if (pthread_cond_timedwait(&nt->wake, &nt->lock, &until) == ETIMEDOUT)
			break;
}

static void *notifier_main(void *arg)
{
	pthread_setname_np(pthread_self(), "kx-notifier"); /* for top -H, perf */
	struct fs_notifier *nt = arg;
	struct kx_tree_stats last = { 0 };
	pthread_mutex_lock(&nt->lock);
	for (;;) {
		while (!nt->stop && !nt->pending) {
			struct timespec until;
			clock_gettime(CLOCK_MONOTONIC, &until);
			until.tv_sec += TRIM_SECONDS;
			if (pthread_cond_timedwait(&nt->wake, &nt->lock, &until) != ETIMEDOUT)
				continue;
			struct kx_tree_stats st;
			kx_tree_stats(nt->fs->tree, &st);
			if (st.content_misses != last.content_misses || st.group_misses != last.group_misses) {
				pthread_mutex_unlock(&nt->lock);
				malloc_trim(0);
				pthread_mutex_lock(&nt->lock);
			}
			last = st;
		}
		if (nt->stop)
			break;
		wait_for_tellers(nt);
		struct kx_digest *runs = nt->unknown ? NULL : nt->runs;
		size_t n = nt->unknown ? 0 : nt->len;
		uint64_t *gens = nt->gens;
		size_t ngens = nt->ngens;
		if (nt->unknown)
			free(nt->runs);
		nt->runs = NULL;
		nt->len = nt->cap = 0;
		nt->gens = NULL;
		nt->ngens = nt->capgens = 0;
		nt->pending = nt->unknown = false;
		uint64_t round = ++nt->started;
		pthread_mutex_unlock(&nt->lock);
		round_of(nt, runs, n, gens, ngens);
		free(runs);
		free(gens);
		pthread_mutex_lock(&nt->lock);
		nt->done = round;
		pthread_cond_broadcast(&nt->round_done);
		struct deferred *due = due_replies(nt, false);
		pthread_mutex_unlock(&nt->lock);
		send_replies(due);
		pthread_mutex_lock(&nt->lock);
	}
	pthread_mutex_unlock(&nt->lock);
	return NULL;
}

static void free_names(struct stale_name *n)
{
	while (n) {
		struct stale_name *next = n->next;
		free(n);
		n = next;
	}
}

/* A decided file's name: the kernel may hold it with a timeout (a temporary name renamed to it) or
 * not (zero timeouts: this only spares the daemon the inodes stale dentries pin); ENOENT means the
 * kernel had already dropped it. */
static void *forgetter_main(void *arg)
{
	pthread_setname_np(pthread_self(), "kx-forgetter"); /* for top -H, perf */
	struct fs_notifier *nt = arg;
	pthread_mutex_lock(&nt->lock);
	for (;;) {
		while (!nt->stop && !nt->names)
			pthread_cond_wait(&nt->forget_wake, &nt->lock);
		if (nt->stop)
			break;
		struct stale_name *names = nt->names;
		size_t count = nt->nnames;
		nt->names = NULL;
		nt->nnames = 0;
		pthread_mutex_unlock(&nt->lock);
		for (struct stale_name *n = names; n; n = n->next) {
			int r = fuse_lowlevel_notify_inval_entry(nt->fs->se, n->parent, n->name, strlen(n->name));
			if (fs_gone(r))
				break;
			if (r < 0 && r != -ENOENT)
				fs_log_error("cannot invalidate inode %#llx entry %s: %s", (unsigned long long)n->parent,
					     n->name, strerror(-r));
		}
		free_names(names);
		pthread_mutex_lock(&nt->lock);
		nt->names_sent += count;
		pthread_cond_broadcast(&nt->names_done);
	}
	pthread_mutex_unlock(&nt->lock);
	return NULL;
}

int fs_notifier_start(struct fs *fs)
{
	struct fs_notifier *nt = calloc(1, sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	nt->fs = fs;
	pthread_mutex_init(&nt->lock, NULL);
	fs_cond_init_monotonic(&nt->wake);
	pthread_cond_init(&nt->forget_wake, NULL);
	pthread_cond_init(&nt->round_done, NULL);
	fs_cond_init_monotonic(&nt->names_done);
	int r = pthread_create(&nt->thread, NULL, notifier_main, nt);
	if (r == 0 && fs->inbox) {
		if ((r = pthread_create(&nt->forgetter, NULL, forgetter_main, nt)) != 0) {
			pthread_mutex_lock(&nt->lock);
			nt->stop = true;
			pthread_cond_signal(&nt->wake);
			pthread_mutex_unlock(&nt->lock);
			pthread_join(nt->thread, NULL);
		}
		nt->forgetter_started = r == 0;
	}
	if (r != 0) {
		pthread_cond_destroy(&nt->wake);
		pthread_cond_destroy(&nt->forget_wake);
		pthread_cond_destroy(&nt->round_done);
		pthread_cond_destroy(&nt->names_done);
		pthread_mutex_destroy(&nt->lock);
		free(nt);
		return -r;
	}
	fs->notifier = nt;
	return 0;
}

void fs_notifier_stop(struct fs *fs)
{
	struct fs_notifier *nt = fs->notifier;
	if (!nt)
		return;
	pthread_mutex_lock(&nt->lock);
	nt->stop = true;
	pthread_cond_signal(&nt->wake);
	pthread_cond_signal(&nt->forget_wake);
	pthread_cond_broadcast(&nt->round_done);
	pthread_cond_broadcast(&nt->names_done);
	pthread_mutex_unlock(&nt->lock);
	pthread_join(nt->thread, NULL);
	if (nt->forgetter_started)
		pthread_join(nt->forgetter, NULL);
	/* replies still held: the session is ending, answer them rather than leave them */
	send_replies(due_replies(nt, true));
	pthread_cond_destroy(&nt->wake);
	pthread_cond_destroy(&nt->forget_wake);
	pthread_cond_destroy(&nt->round_done);
	pthread_cond_destroy(&nt->names_done);
	pthread_mutex_destroy(&nt->lock);
	free(nt->runs);
	free(nt->gens);
	free_names(nt->names);
	free(nt);
	fs->notifier = NULL;
}

void fs_forget_name(struct fs *fs, uint64_t parent, const char *name)
{
	struct fs_notifier *nt = fs->notifier;
	if (!nt || !nt->forgetter_started)
		return;
	size_t len = strlen(name);
	struct stale_name *n = malloc(sizeof(*n) + len + 1);
	if (!n)
		return;
	n->parent = parent;
	memcpy(n->name, name, len + 1);
	pthread_mutex_lock(&nt->lock);
	if (nt->nnames < NAMES_MAX) {
		n->next = nt->names;
		nt->names = n;
		nt->nnames++;
		nt->names_told++;
		pthread_cond_signal(&nt->forget_wake);
		n = NULL;
	}
	pthread_mutex_unlock(&nt->lock);
	free(n);
}

/* `v` with room for `need` elements of `size` bytes (capacity in *cap), or NULL without memory. */
static void *reserve(void *v, size_t *cap, size_t need, size_t size)
{
	if (v && need <= *cap)
		return v;
	size_t c = need > 8 ? need * 2 : 16;
	void *x = realloc(v, c * size);
	if (x)
		*cap = c;
	return x;
}

uint64_t fs_changed(struct fs *fs, const struct kx_digest *runs, size_t n, uint64_t generation)
{
	struct fs_notifier *nt = fs->notifier;
	if (!nt)
		return 0;
	pthread_mutex_lock(&nt->lock);
	bool known = runs && generation && !nt->unknown;
	uint64_t *gens = known ? reserve(nt->gens, &nt->capgens, nt->ngens + 1, sizeof(*gens)) : NULL;
	if (gens)
		nt->gens = gens;
	struct kx_digest *v = gens ? reserve(nt->runs, &nt->cap, nt->len + n, sizeof(*v)) : NULL;
	if (v) {
		nt->runs = v;
		nt->gens[nt->ngens++] = generation;
		memcpy(nt->runs + nt->len, runs, n * sizeof(*runs));
		nt->len += n;
	} else {
		nt->unknown = true; /* the round finds the runs from the generations: a scan, no lost change */
	}
	nt->pending = true;
	uint64_t ticket = nt->started + 1; /* the next round to start takes this change */
	pthread_cond_signal(&nt->wake);
	pthread_mutex_unlock(&nt->lock);
	return ticket;
}

void fs_reply_after(struct fs *fs, uint64_t ticket, struct fuse_req *req, int err)
{
	struct fs_notifier *nt = fs->notifier;
	struct deferred *d = NULL;
	if (nt && ticket && (d = malloc(sizeof(*d)))) {
		pthread_mutex_lock(&nt->lock);
		if (ticket > nt->done && !nt->stop) {
			d->ticket = ticket;
			d->req = req;
			d->err = err;
			d->next = nt->replies;
			nt->replies = d;
			d = NULL;
			req = NULL;
		}
		pthread_mutex_unlock(&nt->lock);
	}
	free(d);
	if (req)
		fuse_reply_err(req, err);
}

void fs_wait_round(struct fs *fs, uint64_t ticket)
{
	struct fs_notifier *nt = fs->notifier;
	if (!nt || !ticket)
		return;
	pthread_mutex_lock(&nt->lock);
	if (ticket > nt->done && !nt->stop)
		fs_loop_hand_off();
	while (ticket > nt->done && !nt->stop)
		pthread_cond_wait(&nt->round_done, &nt->lock);
	pthread_mutex_unlock(&nt->lock);
}

void fs_wait_forgotten(struct fs *fs, long ms)
{
	struct fs_notifier *nt = fs->notifier;
	if (!nt || !nt->forgetter_started)
		return;
	struct timespec until = fs_deadline_ms(ms);
	pthread_mutex_lock(&nt->lock);
	uint64_t target = nt->names_told;
	if (nt->names_sent < target && !nt->stop)
		fs_loop_hand_off();
	while (nt->names_sent < target && !nt->stop)
		if (pthread_cond_timedwait(&nt->names_done, &nt->lock, &until) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&nt->lock);
}

void fs_set_health(struct fs *fs, const char *lines)
{
	if (kx_tree_set_health(fs->tree, lines) < 0)
		return; /* out of memory: README keeps what it said */
	/* README is versioned (an inode per stamp, fs_versions_ref): the kernel forgets the name, and
	 * its next lookup finds the version that says what is true now */
	if (fs->se && !fuse_session_exited(fs->se))
		fuse_lowlevel_notify_inval_entry(fs->se, FUSE_ROOT_ID, "README", 6);
}
