/* SPDX-License-Identifier: MIT */
/*
 * The kindexfs daemon's private interface: one `struct fs` shared by the FUSE operations
 * (ops.c), the readdir listings (dircache.c), the shared store view (view.c) and the invalidation
 * notifier (notify.c), set up and torn down by main.c; and every other function that crosses
 * files. Only src/fs includes fuse_lowlevel.h, and only the .c files do: this header keeps FUSE
 * types out so the pieces stay testable on their own.
 *
 * Calls between the files go down only, never in a circle (checked with nm: each object's
 * undefined symbols that another object of src/fs defines). Lower layers first; each file calls
 * only files on lines above it:
 *
 *     log.c  view.c  dircache.c  loop.c  names.c  readers.c  (call no other file of src/fs)
 *     versions.c      -> view
 *     nodes.c         -> versions, dircache, view
 *     notify.c        -> versions, view, loop, log
 *     pusher.c        -> nodes, versions, dircache, view, loop, log
 *     spooler.c       -> notify, log
 *     follow.c        -> notify, log
 *     inbox-table.c   -> names, log
 *     decide.c        -> inbox-table, notify, names, loop, log
 *     inbox.c         -> decide, inbox-table, notify, names, log
 *     ops.c           -> inbox, inbox-table, pusher, nodes, versions, dircache, view, readers, log
 *     main.c          -> all of them
 *
 * Consistency model. Every operation reads one store view (a RocksDB snapshot) — the *current*
 * view, shared and reference-counted, so an operation costs no snapshot of its own. The daemon is
 * the store's one writer: after a commit, the writer (the inbox or the spool) calls fs_changed();
 * the notifier thread then swaps in a new current view, waits until no operation still uses the
 * old one, and only then tells the kernel what to forget. An operation that started on the old
 * state can therefore never re-populate a kernel cache after its invalidation was sent.
 */
#ifndef KX_FS_H
#define KX_FS_H

#include "kx/tree.h"
#include "kx/spool.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

struct fuse_req;
struct fuse_session;
struct fs_dircache;
struct fs_notifier;
struct fs_pusher;
struct fs_inbox;
struct fs_spooler;
struct fs_follower;
struct kx_published;
struct fs_versions;

/* A store view shared by the operations that run on it. */
struct fs_view {
	struct kx_view *v;
	uint64_t generation;
	unsigned refs;    /* operations; under fs.view_lock */
	bool held;        /* by versioned inodes the kernel holds (versions.c); under fs.view_lock */
	uint32_t slot;    /* versions.c's, under its lock: 1 + index among the held views, or 0 */
	uint32_t entries; /* versions.c's: how many of its entries hold this view */
	bool stuck;       /* versions.c's: only old versions left (fs_versions_compact) */
};

struct fs {
	struct kx_store *store;
	struct kx_tree *tree;
	struct fuse_session *se;   /* set once mounted; the notifier sends through it */
	double timeout;            /* entry and attribute timeout, seconds */
	uid_t uid;
	gid_t gid;
	bool debug;
	struct fs_dircache *dirs;
	struct fs_notifier *notifier;
	bool rw;                   /* -o rw: the inbox exists (inbox.c) */
	size_t max_manifest;       /* -o max_manifest: the inbox's size cap per file, bytes */
	uint64_t max_artifact;     /* -o max_artifact: inbox/artifacts/' (SPEC §9), bytes */
	struct fs_inbox *inbox;    /* NULL on read-only mounts */
	struct fs_spooler *spooler; /* -o spool=DIR (spooler.c) */
	struct fs_spooler *trust;   /* STORE/trust/: kindex trust's requests while mounted (spooler.c) */
	struct fs_follower *follower; /* -o follow=DST/current (follow.c) */
	struct fs_versions *versions; /* versioned inodes the kernel holds (versions.c) */
	struct fs_sizer *sizer;    /* the writer's sizes pass (sizer.c); NULL when the store is read-only */
	struct fs_pusher *pusher;  /* files put in the page cache ahead of a reader (pusher.c) */

	pthread_mutex_t view_lock;
	pthread_cond_t view_idle;  /* signalled when a retired view loses its last user */
	struct fs_view *view;      /* the current view */
};

/* ---- timed waits ------------------------------------------------------------------------------ */

/* A condition variable whose timed waits count on CLOCK_MONOTONIC (deadline_ms), not wall time. */
static inline void fs_cond_init_monotonic(pthread_cond_t *c)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(c, &ca);
	pthread_condattr_destroy(&ca);
}

/* `ms` milliseconds from now on CLOCK_MONOTONIC, for pthread_cond_timedwait. */
static inline struct timespec fs_deadline_ms(long ms)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

/* A notification's error that means the connection is gone (unmounting): stop sending. */
static inline bool fs_gone(int r)
{
	return r == -ENOTCONN || r == -EBADF || r == -ENODEV;
}

/* ---- views (view.c) --------------------------------------------------------------------------- */

/* The current view, with a reference for the caller; never NULL once fs_view_init succeeded. */
struct fs_view *fs_view_get(struct fs *fs);
void fs_view_put(struct fs *fs, struct fs_view *fv);
int fs_view_init(struct fs *fs);
/* Another reference to fv, which the caller knows is alive. */
struct fs_view *fs_view_ref(struct fs *fs, struct fs_view *fv);
/* Keep fv alive without an operation on it / let it go (freed once no operation uses it). */
void fs_view_hold(struct fs *fs, struct fs_view *fv);
void fs_view_unhold(struct fs *fs, struct fs_view *fv);
void fs_view_release(struct fs *fs);
/*
 * Make a fresh view current and wait until the previous one has no user but the caller, who
 * receives it with one reference (NULL when nothing changed: same generation).
 */
struct fs_view *fs_view_swap(struct fs *fs);

/* ---- node resolution (nodes.c) -------------------------------------------------------------------- */

/* The node inode `ino` names in view fv; -ESTALE for one the tree cannot decode (nodes.c). */
int fs_node_of(struct fs *fs, struct fs_view *fv, uint64_t ino, struct kx_node *ret);
/*
 * The same for any inode number of the tree, versioned ones too: the view to answer in may change
 * from *fv (the current view, referenced by the caller) to the one the version was handed out in.
 */
int fs_resolve(struct fs *fs, struct fs_view **fv, uint64_t ino, struct kx_node *ret);
/* The inode number a listing shows for a node (a versioned file's current version). */
uint64_t fs_listed_ino(struct fs *fs, struct fs_view *fv, const struct kx_node *n);

/* ---- readdir listings (dircache.c) ------------------------------------------------------------ */

/*
 * A directory's entries at one store generation: "." and "..", then kx_tree_readdir's order.
 * Offsets handed to the kernel carry a generation tag and the index of the next entry, so a
 * listing read in several READDIR calls continues in the listing it started in, whatever happened
 * to the store meanwhile (dircache.c).
 */
struct fs_dirent {
	const char *name;
	struct kx_node node;
};

struct fs_listing {
	uint64_t ino;
	uint64_t generation;
	size_t len;
	struct fs_dirent *e;
};

/* `inbox`: the root listing ends with "inbox" (a node of type KX_NODE__FS), on -o rw mounts. */
struct fs_dircache *fs_dircache_new(size_t limit_bytes, bool inbox);
void fs_dircache_free(struct fs_dircache *dc);
/*
 * The listing of directory `dir` (inode `ino`) to continue at offset `off`: in view `fv`, or for a
 * continuation in the generation the offset names while that listing is still cached. Returns 0
 * with a listing the caller puts back, 1 when `off` is past the end (no listing), or -errno.
 */
int fs_dircache_get(struct fs_dircache *dc, struct kx_tree *t, struct fs_view *fv, uint64_t ino,
		    const struct kx_node *dir, off_t off, const struct fs_listing **ret, size_t *ret_index);
void fs_dircache_put(struct fs_dircache *dc, const struct fs_listing *l);
/*
 * Look `name` up in the cached listing of directory `ino` at `generation`: 0 (found), -ENOENT (the
 * listing has no such name), -EAGAIN (no such listing cached: ask the tree).
 */
int fs_dircache_lookup(struct fs_dircache *dc, uint64_t ino, uint64_t generation, const char *name,
		       struct kx_node *ret);
off_t fs_dircache_offset(const struct fs_listing *l, size_t next_index);

/* ---- the sizes pass (sizer.c) ---------------------------------------------------------------- */

int fs_sizer_start(struct fs *fs);
/* After a notifier round: the store changed. */
void fs_sizer_tell(struct fs *fs);
/* Stop and join the thread once what it was told is sized (an unmount waits for that pass). */
void fs_sizer_stop(struct fs *fs);

/* ---- the invalidation notifier (notify.c) ----------------------------------------------------- */

int fs_notifier_start(struct fs *fs);
/* Stop and join the thread; pending work is dropped (the kernel connection is gone by then). */
void fs_notifier_stop(struct fs *fs);
/*
 * The store changed: the commit that created `generation` added `runs` (NULL/0: unknown, found
 * from the generations). Returns at once with the number of the notifier round that will publish
 * the change (0: no notifier); the notifier thread does the rest. Thread-safe; callable from
 * inside an operation. A round whose generations were not all told this way finds the new runs
 * itself, so a commit that lands before its writer tells is never missed.
 */
uint64_t fs_changed(struct fs *fs, const struct kx_digest *runs, size_t n, uint64_t generation);
/* README's health lines (kx_tree_set_health: a failing publisher, failing pulls; NULL: none), and
 * the kernel told to forget README's attributes and pages. From any thread but a request's. */
void fs_set_health(struct fs *fs, const char *lines);
/*
 * Answer `req` with `err` (0 or a positive errno, as fuse_reply_err) once round `ticket` is done:
 * the change is in the daemon's view and the kernel's caches were told. At once for ticket 0 or a
 * round already done. The caller must hold no lock a tree operation could wait for.
 */
void fs_reply_after(struct fs *fs, uint64_t ticket, struct fuse_req *req, int err);
/* The same, blocking the calling thread (not an operation's: it waits for the kernel too). */
void fs_wait_round(struct fs *fs, uint64_t ticket);
/* Have the kernel forget name `name` in inbox directory `parent` (a thread of its own, -o rw). */
void fs_forget_name(struct fs *fs, uint64_t parent, const char *name);
/*
 * Wait until the names told so far were forgotten, `ms` at most: each takes the lock of /inbox in
 * the kernel, which the operation waiting may hold (SETATTR, FSYNCDIR, READDIR of /inbox, RENAME…).
 */
void fs_wait_forgotten(struct fs *fs, long ms);

/* ---- versioned inodes (versions.c) ------------------------------------------------------------ */

/*
 * A file that kx_node_versioned names gets an inode number per stamp (type KX_NODE__VERSION in the
 * tree's encoding), so that each version is immutable for the kernel: see versions.c.
 */
static inline bool fs_ino_versioned(uint64_t ino)
{
	return kx_ino_type(ino) == KX_NODE__VERSION;
}

int fs_versions_init(struct fs *fs);
void fs_versions_free(struct fs *fs);
/* The inode number of version `stamp` of the file whose tree inode number is `plain`. */
uint64_t fs_version_ino(uint64_t plain, int64_t stamp);
/*
 * Hand version `stamp` of file n, as seen in view fv, to the kernel: one more lookup reference,
 * and its inode number (the plain one in the rare case it cannot be versioned). Undo with
 * fs_versions_unref when the reply does not reach the kernel.
 */
uint64_t fs_versions_ref(struct fs *fs, struct fs_view *fv, const struct kx_node *n, int64_t stamp);
/* FORGET: the kernel drops nlookup references. */
void fs_versions_unref(struct fs *fs, uint64_t ino, uint64_t nlookup);
/*
 * A held version: its tree inode number, stamp and a view in which the file was that version,
 * with a reference (each only where its pointer is not NULL). -ESTALE when the kernel does not
 * hold `ino`.
 */
int fs_versions_find(struct fs *fs, uint64_t ino, uint64_t *ret_plain, int64_t *ret_stamp,
		     struct fs_view **ret_view);
/* After a notifier round: let the oldest held views go where their files did not change (`cur`: the current view). */
void fs_versions_compact(struct fs *fs, struct fs_view *cur);
/*
 * Plain (not versioned) inodes of the tree handed to the kernel: LOOKUP and READDIRPLUS count them
 * in, FORGET out. fs_held_maybe is false only where the kernel surely holds no such inode.
 */
void fs_held_ref(struct fs *fs, uint64_t ino);
void fs_held_unref(struct fs *fs, uint64_t ino, uint64_t nlookup);
bool fs_held_maybe(struct fs *fs, uint64_t ino);
/* Whether some file was ever handed out under its plain number (the notifier then invalidates those too). */
bool fs_versions_plain_used(struct fs *fs);
/* How many versions the kernel holds; the store views they hold and the table's bytes, where asked. */
size_t fs_versions_count(struct fs *fs, size_t *ret_views, size_t *ret_bytes);

/* ---- the inbox's name rules (names.c) --------------------------------------------------------- */

#define KX_INBOX_NAME_MAX 255

/* Held until renamed, never decided: a leading '.', or ending in ".tmp", ".part" or "~". */
bool fs_inbox_name_is_temp(const char *name);
/*
 * 0 for a name a file may be created under; -EINVAL for "", ".", "..", a '/', control bytes
 * (0x01-0x1f, 0x7f), anything that is not well-formed UTF-8, or more than 255 bytes.
 */
int fs_inbox_name_check(const char *name);

/* ---- the spool thread (spooler.c) ------------------------------------------------------------- */

/* Start watching DIR (kx_spool_open) on a thread of its own, into *slot; `trust`: its files are
 * kindex trust's requests (kx_trust_apply), not manifests. *ret_err names a failure. */
int fs_spooler_start(struct fs *fs, const char *dir, bool trust, struct fs_spooler **slot, char **ret_err);
/* Stop and join it (NULL-safe); a file being handled is finished first. */
void fs_spooler_stop(struct fs_spooler **slot);

/* ---- the follower (follow.c) ------------------------------------------------------------------ */

/*
 * Open the generation `current` (DST/current) names: *ret_fd holds its directory (the caller
 * closes it; "/proc/self/fd/N" opens the very generation read), *ret_note is README's note for it
 * (malloc'd), ret_name (NAME_MAX + 1 bytes) its directory's name. *ret_err says why not.
 */
int fs_follow_open(const char *current, int *ret_fd, char **ret_note, char *ret_name, char **ret_err);
/* README's note for generation p, served from now_ns on (malloc'd into *ret). */
int fs_follow_note(const struct kx_published *p, int64_t now_ns, char **ret);
/* Watch `current` on a thread of its own, the store serving generation `served` (its name). */
int fs_follower_start(struct fs *fs, const char *current, const char *served, unsigned stale_after,
		      char **ret_err);
/* Stop and join it (NULL-safe); a switch in progress is finished first. */
void fs_follower_stop(struct fs *fs);

/* ---- the pusher (pusher.c) ------------------------------------------------------------------- */

int fs_pusher_start(struct fs *fs);
/* Stop and join it (NULL-safe); a directory being pushed is finished first. */
void fs_pusher_stop(struct fs *fs);
/*
 * A reader is walking directory `dir` and has just read file `after`: push the files listed after
 * it. Returns at once (the pusher's thread does the work); callable from inside an operation.
 */
void fs_push(struct fs *fs, uint64_t dir, uint64_t after);
/* A file was just looked up by name (it is about to be opened, as a rule): push it. */
void fs_push_one(struct fs *fs, uint64_t ino);
/*
 * A document's file is one inode in every run directory that names it (hard links): once stored,
 * pushes of other runs' directories leave it be (fs_pushed_shared) until the kernel forgets the
 * inode or a push takes the store back (fs_pushed_set, false). Files of one run only are never
 * remembered. A slot per inode number, direct-mapped: a collision costs one store again.
 */
bool fs_pushed_shared(struct fs *fs, uint64_t ino);
void fs_pushed_set(struct fs *fs, uint64_t ino, bool stored);
/*
 * A reader of what it lists has listed directory `dir` to its end: push its files before the
 * calling worker answers (the reader opens the first as soon as it has the answer); or queue them
 * for the pusher when another worker is pushing already, or under -s (fs_loop_watched).
 */
void fs_push_now(struct fs *fs, uint64_t dir);
/*
 * Such a reader's listing of `dir` was just answered whole, in one batch: push its files now, while
 * the reader takes the answer in (the kernel makes their inodes as it does; a store that comes
 * first is tried again). True if every one was stored: the reader's end-of-listing request then
 * has nothing to push; false (the inodes did not come, or another worker is pushing) leaves them to
 * that request.
 */
bool fs_push_answered(struct fs *fs, uint64_t dir);
/*
 * Bare listings. A listing answered to a process that did not ask for attributes (find) leaves
 * out its files' entries — rendering each to size it would cost a walk most of its time — and the
 * kernel keeps that listing (cache_readdir). A reader that comes later (grep -r, tar, rsync, ls -l)
 * then gets the names from the kernel and looks up, and reads, each file: two round trips a file
 * and nothing pushed, twice as slow as on a fresh mount. So such listings are remembered
 * (fs_listed_bare, a bit per directory, hashed: a collision costs one listing again), and once
 * a second file of one is looked up by name (fs_looked_up_in: `file` in `dir`; one file a
 * directory is a reader of paths, as from find | xargs cat, which lists nothing), the pusher's
 * thread drops the kernel's copies of the bare listings among the directories listed after it in
 * its parent (relist_after, pusher.c; RELIST_AHEAD of them): the reader lists those anew, and
 * gets entries and pushed files. fs_bare_take tests and clears a directory's bit. Nothing
 * without the pusher.
 */
void fs_listed_bare(struct fs *fs, uint64_t dir);
void fs_looked_up_in(struct fs *fs, uint64_t dir, uint64_t file);
bool fs_bare_take(struct fs *fs, uint64_t dir);

/* ---- the session loop (loop.c) -------------------------------------------------------------- */

/*
 * Serve the session with up to max_threads workers, one at a time reading /dev/fuse, the one that
 * reads polling it for spin_us after each answer (0: never; never with one CPU). Every thread
 * blocks fs_loop_signals() (the caller too: they arrive on a signalfd). Returns 0 once unmounted,
 * the number of the signal that ended it, or -errno.
 */
int fs_loop_run(struct fuse_session *se, unsigned max_threads, unsigned spin_us);
/* The signals that end the loop, for the caller to block before it starts any thread. */
void fs_loop_signals(sigset_t *set);
/*
 * The calling operation is about to wait for another thread (the inbox's decider, the notifier):
 * let another worker read requests meanwhile (a no-op outside the loop's workers).
 */
void fs_loop_hand_off(void);
/*
 * Whether the calling thread is a worker of fs_loop_run: if it waits for the kernel to be answered
 * (a page-cache store waits for a READ of its page), another worker reads requests within
 * WATCH_MS. False under libfuse's single-threaded loop (-s) or with -o max_threads=1, where
 * nothing would.
 */
bool fs_loop_watched(void);

/* ---- the reader table (readers.c) ------------------------------------------------------------ */

/*
 * What the operations learn of the processes that read the tree, per pid, and what they guess
 * from it: which processes get files' attributes in their listings, which walk what they list.
 * Only round trips depend on it. Thread-safe.
 */
/* pid asked for a file's attributes or bytes: its listings come with files' attributes. */
void fs_reader_saw_file(pid_t pid);
/*
 * pid looked up file ino: whether pushing it may come before its READ. Not when pid read the last
 * file it looked up right after the lookup (cat or sha256sum -c of a list of names, xargs cat):
 * its READ follows the answer within microseconds, long before a push gathered into a batch
 * (pusher.c) is stored, and the push would only render and store the file a second time, on the
 * other core, which such a pipeline's other process (find) needs. A shell expanding a glob looks
 * up every name before anything is read: its files are pushed.
 */
bool fs_reader_looks_up(pid_t pid, uint64_t ino);
/*
 * pid lists a directory: whether it wants files' attributes. `dir` non-zero: the listing starts
 * there, noted for fs_reader_walks.
 */
bool fs_reader_lists(pid_t pid, uint64_t dir);
/*
 * pid read a file of directory `dir` from its start: whether it walks the directory's files
 * (pusher.c) — from its second file there in a row, or its first in a directory it has just
 * listed itself (grep -r and tar list a directory, then read its files; `cat` of one NAME in each
 * of many directories reads one file per directory, listed by the shell). Files pushed ahead come
 * without a READ, so a READ here after that means the reader is past what was pushed (or won a
 * race with the pusher): the files after it are pushed again.
 */
bool fs_reader_walks(pid_t pid, uint64_t dir, uint64_t ino);
/*
 * pid reached the end of listing `dir`: whether it will read the files listed — it began to list
 * `dir` itself and has read the files of a directory it listed before (grep -r, tar). Their
 * inodes exist by now (the kernel made them as it took in the listing, before asking for more),
 * so they can be pushed before the reader opens the first.
 */
bool fs_reader_ends(pid_t pid, uint64_t dir);
/*
 * The files of `dir` were pushed right after the one batch that held pid's listing of it whole
 * (fs_push_answered; `all`: every one was stored): remembered, so that the end of the listing
 * pushes nothing (fs_reader_pushed).
 */
void fs_reader_set_pushed(pid_t pid, uint64_t dir, bool all);
/* Whether the files of `dir` were pushed as pid's listing of it was answered (once: forgotten). */
bool fs_reader_pushed(pid_t pid, uint64_t dir);

/* ---- operations (ops.c) ----------------------------------------------------------------------- */

/*
 * The struct fuse_lowlevel_ops of the daemon (opaque here to keep FUSE out of this header):
 * read-only mounts get no FLUSH (so the kernel never sends one), -o rw mounts get the inbox's.
 */
const void *fs_ops(bool rw, size_t *ret_size);

/* ---- logging (log.c) ------------------------------------------------------------------------------ */

/* Messages on stderr (or syslog once detached), lowercase, failure first. */
void fs_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fs_log_debug(const struct fs *fs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
