// SPDX-License-Identifier: MIT
/*
 * The inbox (SPEC §4, docs/inbox.md): a passthrough onto the real directory STORE/inbox — so a
 * file being written, and every receipt, survives a crash of the daemon and a remount — plus the
 * decision. A file is decided when a process that wrote it closes it under a final name (FLUSH),
 * or after it is renamed to a final name (RENAME; rsync and editors write a temporary name first:
 * the rename answers at once and the decider thread takes it, see "the decider" below): the whole
 * file goes through kx_ingest_bytes with the WAL synced, then
 *
 *   accepted   .accepted/<name> (kx_receipt_accepted) is written — temporary name, then rename —
 *              inbox/<name> leaves (kept as a spare for a later receipt), the tree is told
 *              (kx_fs_changed); FLUSH answers 0;
 *   rejected   .rejected/<name>.error (kx_receipt_rejected) is written the same way, then the file
 *              is renamed byte for byte to .rejected/<name>; FLUSH answers EINVAL so that close()
 *              fails (after a RENAME, the receipt is the record);
 *   failed     (the store could not commit) EIO; the file stays in the inbox.
 *
 * Crash safety is in the order: the commit is durable (its WAL synced) before any receipt or
 * unlink, a receipt is in place before the file leaves, and a rejected file is moved (one rename),
 * never copied. A crash of the daemon anywhere leaves the file in the inbox or decided, never
 * gone. Receipts and the inbox's directories are made durable in batches by a thread of their
 * own (one syncfs at most every SYNC_DELAY_MS), off the path of the reply: a power loss can lose
 * the last fraction of a second of receipts and inbox changes, never a run whose close()
 * returned 0 (docs/inbox.md, "Durability"). A file left in the inbox is not decided again by
 * itself — the daemon cannot tell a complete file from one whose writer died (a JSON Lines file
 * cut at a line boundary is valid, and would be accepted short) — unless a rename marked it.
 *
 * Inode numbers and the table. FUSE names files by inode number, the backing directory by name;
 * `struct ient` links the two: one entry per (directory, name) the kernel was told about, with a
 * number from a counter (never reused while mounted, so a new file of an old name never meets
 * the old one's cached pages). Renames keep the number. An unlinked or replaced file stays as
 * GONE until the kernel forgets it; a decided file stays as a GHOST: for GHOST_SECONDS the process
 * that decided it still finds it by name and may change its mode and times — `install` closes the
 * file and then chmods it by name, and must not fail because the file was accepted meanwhile.
 * Other processes see the name gone at once. Opening a ghost for writing again with O_TRUNC (a
 * script that writes the same name twice in a row) starts a new file under that name.
 *
 * The kernel's caches. Final names and their files have zero timeouts (they change behind the
 * kernel's back: a FLUSH removes a name), and decided names are also invalidated by the notifier
 * thread. Temporary names, and names found absent, are cached for NAME_TIMEOUT (name_timeout()):
 * they change only through the kernel — rsync's 19 requests per file drop to 10.
 * Directory listings are cached by the kernel (no OPENDIR, see ops.c) and checked against the
 * directory's mtime; every change made here also moves the mtime this daemon reports, by at least
 * a nanosecond, so a listing is never served from before a change on a coarse clock.
 *
 * Locks: ib->lock (the table, names, states, the backing directories' namespace — held only for
 * system calls that do not block on I/O) nests inside an entry's lock (its descriptor, its write
 * state and its decision, which may take a synced commit). No FUSE notification is sent from
 * here: kx_fs_changed and kx_fs_forget_name queue work for the notifier thread.
 *
 * What never reaches us: names with '/', ".", ".." (the kernel's path walk resolves them within
 * the mount); STORE/inbox is not followed through symlinks (O_NOFOLLOW everywhere), and entries
 * of the backing directory that are not regular files (or the two receipt directories) are hidden.
 */
#include "inbox.h"

#include "kx/list.h"
#include "kx/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define GHOST_SECONDS 5
#define GHOSTS_MAX 256
#define BUCKETS 4096
#define TMP_PREFIX ".kx-"   /* receipts being written and spares; hidden, and removed at mount */
#define SYNC_DELAY_MS 50    /* receipts wait at most this long for the batch that syncs them */
#define SPARES_MAX 64       /* accepted files kept to write receipts into (see write_tmp) */
#define DECIDE_BATCH 64     /* files the decider takes at once: one WAL sync and one round for all */
#define DECIDE_WAIT_MS 2    /* how long a batch waits for more files, unless someone waits for it */
#define DRAIN_WAIT_MS 10000 /* the bound of a wait for the decider, where one is needed (drain()) */
#define FORGET_WAIT_MS 100  /* the same for the kernel to drop decided names */
#define QUEUED_XATTR "user.kindex.queued" /* on a renamed file until decided: see the decider */
#define NAME_TIMEOUT 10.0   /* seconds the kernel may cache a temporary name or an absent one */

enum { D_INBOX, D_ACCEPTED, D_REJECTED, D__N };
static const char *const dir_names[D__N] = { ".", ".accepted", ".rejected" };

#define INO_DIR(d) (KX_INO_INBOX | (uint64_t)(d))
#define FIRST_FILE 16

enum state {
	LIVE,  /* the backing file is there under `name` */
	GHOST, /* decided: accepted or rejected, gone from the inbox */
	GONE,  /* unlinked or replaced: no name any more */
};

struct ient {
	uint64_t ino;
	int dir;
	/* under ib->lock */
	char *name;
	enum state state;
	uint64_t nlookup;
	unsigned refs; /* the table's own while hashed by ino, plus operations in flight */
	bool hashed, in_ghosts, queued;
	struct ient *ino_next, *name_next;
	struct kx_link ghost; /* kx_inbox.ghosts */
	pid_t decider;      /* GHOST: the thread whose close or rename decided it */
	int64_t decided_ns; /* GHOST: when (CLOCK_MONOTONIC) */
	/* under lock */
	pthread_mutex_t lock;
	int fd;            /* the backing file, opened when needed; -1 */
	bool dirty;        /* created, written or changed since its last decision */
	bool too_big;      /* a write was refused with EFBIG: the decision will say so */
	bool marked;       /* the file carries QUEUED_XATTR: renamed to a final name, not yet decided */
	pid_t writer;      /* the thread that last wrote or changed it */
	struct stat st;    /* GHOST: its attributes when decided */
};

struct dirstate {
	int fd;
	uint64_t changes, reported_changes;
	struct timespec reported;
};

struct kx_inbox {
	struct kx_fs *fs;
	pthread_mutex_t lock;
	struct dirstate d[D__N];
	uint64_t next_ino;
	struct ient *by_ino[BUCKETS];
	struct ient *by_name[BUCKETS];
	struct kx_list ghosts; /* newest first */
	size_t nghosts;
	atomic_ulong tmp_counter;
	char (*spares)[64]; /* hidden names in .accepted/ of accepted files, to reuse for receipts */
	size_t nspares;
	bool root; /* the daemon runs as root: new files belong to their creator */
	/* the syncer: receipts and directory changes made durable in batches */
	pthread_t syncer;
	pthread_mutex_t sync_lock;
	pthread_cond_t sync_wake;
	bool sync_pending, sync_stop, syncer_started;
	/* the decider: files renamed to a final name, decided in order off the rename's reply */
	pthread_t decider;
	pthread_cond_t queue_wake, queue_done; /* with ib->lock */
	struct queued *queue, *queue_tail;
	size_t queue_len;
	uint64_t nqueued, ndecided; /* files queued and decided since the mount: drain() compares */
	unsigned draining;          /* threads in drain(): the decider does not wait for more */
	bool decider_stop, decider_started;
};

struct queued {
	struct queued *next;
	struct ient *e; /* with a reference */
	pid_t pid;      /* the thread that renamed it: it may still find its ghost */
};

static struct kx_inbox *ib_of(fuse_req_t req)
{
	return ((struct kx_fs *)fuse_req_userdata(req))->inbox;
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The process (thread group) of a thread id as FUSE reports it; the id itself if /proc says nothing. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[128];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	FILE *f = fopen(path, "re");
	pid_t tgid = tid;
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

static bool same_process(pid_t a, pid_t b)
{
	return a == b || (a > 0 && b > 0 && tgid_of(a) == tgid_of(b));
}

static int dir_of_ino(uint64_t ino)
{
	uint64_t i = ino & ~KX_INO_INBOX;
	return ino >= KX_INO_INBOX && i < D__N ? (int)i : -1;
}

static bool is_receipt_dir_name(int dir, const char *name)
{
	return dir == D_INBOX && (strcmp(name, ".accepted") == 0 || strcmp(name, ".rejected") == 0);
}

static bool hidden(int dir, const char *name)
{
	return dir != D_INBOX && strncmp(name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0;
}

/* ---- the table (all under ib->lock) --------------------------------------------------------- */

static size_t hash_name(int dir, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)dir;
	for (const unsigned char *s = (const unsigned char *)name; *s; s++)
		h = (h ^ *s) * 1099511628211ull;
	return (size_t)(h % BUCKETS);
}

static struct ient *find_ino(struct kx_inbox *ib, uint64_t ino)
{
	for (struct ient *e = ib->by_ino[ino % BUCKETS]; e; e = e->ino_next)
		if (e->ino == ino)
			return e;
	return NULL;
}

static struct ient *find_name(struct kx_inbox *ib, int dir, const char *name)
{
	for (struct ient *e = ib->by_name[hash_name(dir, name)]; e; e = e->name_next)
		if (e->dir == dir && strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

static void name_unhash(struct kx_inbox *ib, struct ient *e)
{
	if (e->state != LIVE)
		return;
	struct ient **p = &ib->by_name[hash_name(e->dir, e->name)];
	while (*p && *p != e)
		p = &(*p)->name_next;
	if (*p)
		*p = e->name_next;
	e->name_next = NULL;
}

static void name_hash(struct kx_inbox *ib, struct ient *e)
{
	size_t h = hash_name(e->dir, e->name);
	e->name_next = ib->by_name[h];
	ib->by_name[h] = e;
}

static void ient_free(struct ient *e)
{
	if (e->fd >= 0)
		close(e->fd);
	pthread_mutex_destroy(&e->lock);
	free(e->name);
	free(e);
}

static void unref_locked(struct ient *e)
{
	if (--e->refs == 0)
		ient_free(e);
}

static void ghost_remove(struct kx_inbox *ib, struct ient *e)
{
	if (!e->in_ghosts)
		return;
	kx_list_unlink(&ib->ghosts, &e->ghost);
	e->in_ghosts = false;
	ib->nghosts--;
}

/* Forget an entry the kernel no longer holds (and that is no ghost to be found by name). */
static void maybe_drop(struct kx_inbox *ib, struct ient *e)
{
	if (e->nlookup > 0 || e->in_ghosts || !e->hashed)
		return;
	name_unhash(ib, e);
	struct ient **p = &ib->by_ino[e->ino % BUCKETS];
	while (*p && *p != e)
		p = &(*p)->ino_next;
	if (*p)
		*p = e->ino_next;
	e->hashed = false;
	unref_locked(e);
}

static void set_gone(struct kx_inbox *ib, struct ient *e)
{
	if (e->state == GONE)
		return;
	name_unhash(ib, e);
	ghost_remove(ib, e);
	e->state = GONE;
	maybe_drop(ib, e);
}

static struct ient *ient_new(struct kx_inbox *ib, int dir, const char *name)
{
	struct ient *e = calloc(1, sizeof(*e));
	if (!e || !(e->name = strdup(name))) {
		free(e);
		return NULL;
	}
	e->ino = KX_INO_INBOX | ib->next_ino++;
	e->dir = dir;
	e->fd = -1;
	e->state = LIVE;
	e->refs = 1;
	e->hashed = true;
	pthread_mutex_init(&e->lock, NULL);
	e->ino_next = ib->by_ino[e->ino % BUCKETS];
	ib->by_ino[e->ino % BUCKETS] = e;
	name_hash(ib, e);
	return e;
}

/* The entry of a LIVE name, made if needed; NULL only without memory. */
static struct ient *entry_for(struct kx_inbox *ib, int dir, const char *name)
{
	struct ient *e = find_name(ib, dir, name);
	return e ? e : ient_new(ib, dir, name);
}

/* Take an entry by inode number for an operation (put it back with put()). */
static struct ient *get(struct kx_inbox *ib, uint64_t ino)
{
	pthread_mutex_lock(&ib->lock);
	struct ient *e = find_ino(ib, ino);
	if (e)
		e->refs++;
	pthread_mutex_unlock(&ib->lock);
	return e;
}

static void put(struct kx_inbox *ib, struct ient *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&ib->lock);
	unref_locked(e);
	pthread_mutex_unlock(&ib->lock);
}

/* A decided file: out of the name hash, onto the (bounded) list of ghosts. */
static void set_ghost(struct kx_inbox *ib, struct ient *e, pid_t decider)
{
	name_unhash(ib, e);
	e->state = GHOST;
	e->decider = decider;
	e->decided_ns = mono_ns();
	kx_list_push(&ib->ghosts, &e->ghost);
	e->in_ghosts = true;
	if (++ib->nghosts > GHOSTS_MAX) {
		struct ient *last = kx_entry_of(ib->ghosts.tail, struct ient, ghost);
		ghost_remove(ib, last);
		maybe_drop(ib, last);
	}
}

/* The ghost of `name` decided less than GHOST_SECONDS ago, or NULL. */
static struct ient *ghost_named(struct kx_inbox *ib, int dir, const char *name)
{
	int64_t now = mono_ns();
	for (struct kx_link *l = ib->ghosts.head; l; l = l->next) {
		struct ient *e = kx_entry_of(l, struct ient, ghost);
		if (now - e->decided_ns > (int64_t)GHOST_SECONDS * 1000000000)
			break; /* newest first: the rest are older */
		if (e->dir == dir && strcmp(e->name, name) == 0)
			return e;
	}
	return NULL;
}

/*
 * The ghost of `name` that the process of thread `pid` may still see, or NULL: the deciding
 * thread itself, or another thread of its process (compared through /proc only here, on the rare
 * lookup of a name just decided).
 */
static struct ient *ghost_for(struct kx_inbox *ib, int dir, const char *name, pid_t pid)
{
	struct ient *e = ghost_named(ib, dir, name);
	return e && same_process(pid, e->decider) ? e : NULL;
}

static void changed(struct kx_inbox *ib, int dir)
{
	ib->d[dir].changes++;
}

/* ---- attributes ----------------------------------------------------------------------------- */

static void file_stat(uint64_t ino, const struct stat *b, struct stat *st)
{
	*st = *b;
	st->st_ino = ino;
	st->st_mode = S_IFREG | (b->st_mode & 07777);
	st->st_nlink = 1;
	st->st_dev = 0;
	st->st_rdev = 0;
}

/* A receipt directory or the inbox, with an mtime that moves with every change made here. */
static int dir_stat(struct kx_inbox *ib, int dir, struct stat *st)
{
	struct stat b;
	if (fstat(ib->d[dir].fd, &b) < 0)
		return -errno;
	pthread_mutex_lock(&ib->lock);
	struct dirstate *ds = &ib->d[dir];
	if (ds->changes != ds->reported_changes && b.st_mtim.tv_sec <= ds->reported.tv_sec &&
	    (b.st_mtim.tv_sec < ds->reported.tv_sec || b.st_mtim.tv_nsec <= ds->reported.tv_nsec)) {
		b.st_mtim = ds->reported;
		if (++b.st_mtim.tv_nsec == 1000000000) {
			b.st_mtim.tv_sec++;
			b.st_mtim.tv_nsec = 0;
		}
	}
	ds->reported = b.st_mtim;
	ds->reported_changes = ds->changes;
	pthread_mutex_unlock(&ib->lock);
	*st = b;
	st->st_ino = INO_DIR(dir);
	st->st_mode = S_IFDIR | (b.st_mode & 07777);
	st->st_nlink = dir == D_INBOX ? 4 : 2;
	st->st_dev = 0;
	return 0;
}

static void entry_param(struct fuse_entry_param *e, const struct stat *st, double entry_timeout,
			double attr_timeout)
{
	memset(e, 0, sizeof(*e));
	e->ino = st->st_ino;
	e->generation = 1;
	e->attr = *st;
	e->attr_timeout = attr_timeout;
	e->entry_timeout = entry_timeout;
}

/*
 * How long the kernel may keep a name of the inbox, and the attributes behind it, without asking
 * (seconds). Only a temporary name (rsync's .NAME.XXXXXX, *.part, …) is never changed behind the
 * kernel's back: the daemon decides final names only, so a temporary name comes and goes through
 * the kernel's own create, rename and unlink. Once renamed to a final name its cached entry
 * travels along, and the notifier drops it when the file is decided (kx_fs_forget_name; the
 * kernel orders that after the rename, under the directory's lock). Everything else: 0.
 */
static double name_timeout(int dir, const char *name)
{
	return dir == D_INBOX && kx_inbox_name_is_temp(name) ? NAME_TIMEOUT : 0;
}

/* The same for an entry's attributes (e->lock held; ib->lock not). */
static double attr_timeout(struct kx_inbox *ib, struct ient *e)
{
	pthread_mutex_lock(&ib->lock);
	double t = e->state == LIVE ? name_timeout(e->dir, e->name) : 0;
	pthread_mutex_unlock(&ib->lock);
	return t;
}

void kx_inbox_root_entry(struct kx_fs *fs, struct fuse_entry_param *e)
{
	struct stat st;
	if (dir_stat(fs->inbox, D_INBOX, &st) < 0) {
		memset(&st, 0, sizeof(st));
		st.st_ino = INO_DIR(D_INBOX);
		st.st_mode = S_IFDIR | 0755;
		st.st_nlink = 4;
	}
	/* the name never changes meaning: cache it as long as the tree's; the attributes not at all */
	entry_param(e, &st, fs->timeout, 0);
}

/* ---- backing files -------------------------------------------------------------------------- */

/* The entry's descriptor, opened by name when there is none (under e->lock). */
static int entry_fd(struct kx_inbox *ib, struct ient *e)
{
	if (e->fd >= 0)
		return e->fd;
	int r = -ESTALE;
	pthread_mutex_lock(&ib->lock);
	if (e->state == LIVE) {
		int flags = (e->dir == D_INBOX ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
		e->fd = openat(ib->d[e->dir].fd, e->name, flags);
		r = e->fd >= 0 ? e->fd : errno == ENOENT ? -ESTALE : -errno;
	}
	pthread_mutex_unlock(&ib->lock);
	return r;
}

static void entry_close(struct ient *e)
{
	if (e->fd >= 0 && e->state != GONE) { /* a GONE file cannot be opened again: keep it */
		close(e->fd);
		e->fd = -1;
	}
}

/* rename without replacing; link + unlink where the file system has no RENAME_NOREPLACE */
static int rename_noreplace(int olddir, const char *old, int newdir, const char *new)
{
	if (renameat2(olddir, old, newdir, new, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	if (linkat(olddir, old, newdir, new, 0) < 0)
		return -errno;
	unlinkat(olddir, old, 0);
	return 0;
}

/*
 * Write a receipt under a hidden temporary name (.kx-PID-N.tmp: removed at the next mount if the
 * daemon dies first) and return the directory it is in — `dir`, or .accepted/ where a spare was
 * reused. Spares: an accepted file leaves the inbox renamed to a hidden name in .accepted/
 * (keep_spare) rather than unlinked, and its inode is rewritten as the next receipt. Creating a
 * file and deleting another per decision costs more than it seems: without a journal, ext4 scans
 * past every inode deleted in the last seconds at each creation (a quarter of the daemon's time
 * under rsync, before spares).
 */
static int write_tmp(struct kx_inbox *ib, int dir, const struct kx_buf *data, char tmp[64], int *ret_dir)
{
	int fd = -1;
	bool spare = false;
	*ret_dir = dir;
	pthread_mutex_lock(&ib->lock);
	while (fd < 0 && ib->nspares > 0) {
		memcpy(tmp, ib->spares[--ib->nspares], 64);
		/* not O_TRUNC: a file cut to 0 and written again is flushed at close by ext4 (auto_da_alloc) */
		fd = openat(ib->d[D_ACCEPTED].fd, tmp, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		/* a receipt's mode and owner (the spare was the writer's file, theirs where we are root) */
		if (fd >= 0 && (fchmod(fd, 0644) < 0 || (ib->root && fchown(fd, geteuid(), getegid()) < 0))) {
			close(fd);
			fd = -1;
		}
		spare = fd >= 0;
		if (!spare)
			unlinkat(ib->d[D_ACCEPTED].fd, tmp, 0);
	}
	if (spare)
		*ret_dir = D_ACCEPTED;
	pthread_mutex_unlock(&ib->lock);
	if (fd < 0) {
		snprintf(tmp, 64, TMP_PREFIX "%d-%lu.tmp", (int)getpid(), atomic_fetch_add(&ib->tmp_counter, 1));
		fd = openat(ib->d[dir].fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			return -errno;
	}
	int r = 0;
	for (size_t done = 0; done < data->len && r == 0;) {
		ssize_t w = pwrite(fd, data->ptr + done, data->len - done, (off_t)done);
		if (w < 0 && errno != EINTR)
			r = -errno;
		else if (w > 0)
			done += (size_t)w;
	}
	if (r == 0 && spare && ftruncate(fd, (off_t)data->len) < 0)
		r = -errno; /* a spare: what is left of its old bytes goes */
	close(fd);
	if (r < 0)
		unlinkat(ib->d[*ret_dir].fd, tmp, 0);
	return r;
}

/* An accepted file leaves the inbox: kept as a spare, or removed (ib->lock held). 0 or -errno. */
static int keep_spare(struct kx_inbox *ib, const char *name)
{
	if (ib->nspares < SPARES_MAX && (ib->spares || (ib->spares = malloc(SPARES_MAX * sizeof(*ib->spares))))) {
		char *spare = ib->spares[ib->nspares];
		snprintf(spare, 64, TMP_PREFIX "%d-%lu.tmp", (int)getpid(), atomic_fetch_add(&ib->tmp_counter, 1));
		if (rename_noreplace(ib->d[D_INBOX].fd, name, ib->d[D_ACCEPTED].fd, spare) == 0) {
			ib->nspares++;
			return 0;
		}
	}
	return unlinkat(ib->d[D_INBOX].fd, name, 0) < 0 ? -errno : 0;
}

/* ---- the syncer ----------------------------------------------------------------------------- */

/*
 * One syncfs per batch: the receipts, the moves and unlinks in the inbox, and the bytes of files
 * being written, all at once. syncfs rather than an fsync per receipt and directory: those cost a
 * disk round trip each (two per decision, more than the decision itself) and would order nothing
 * the commit's own WAL sync has not already made safe.
 */
static void *syncer_main(void *arg)
{
	pthread_setname_np(pthread_self(), "kx-syncer"); /* for top -H, perf */
	struct kx_inbox *ib = arg;
	pthread_mutex_lock(&ib->sync_lock);
	for (;;) {
		while (!ib->sync_pending && !ib->sync_stop)
			pthread_cond_wait(&ib->sync_wake, &ib->sync_lock);
		if (!ib->sync_pending)
			break; /* stopping, nothing left to sync */
		if (!ib->sync_stop) {
			/* let the batch fill: decisions arriving meanwhile share this sync */
			struct timespec until = kx_deadline_ms(SYNC_DELAY_MS);
			while (!ib->sync_stop && pthread_cond_timedwait(&ib->sync_wake, &ib->sync_lock, &until) == 0)
				;
		}
		ib->sync_pending = false;
		pthread_mutex_unlock(&ib->sync_lock);
		if (syncfs(ib->d[D_INBOX].fd) < 0)
			kx_fs_log_error("cannot sync the inbox's file system: %s", strerror(errno));
		pthread_mutex_lock(&ib->sync_lock);
	}
	pthread_mutex_unlock(&ib->sync_lock);
	return NULL;
}

/* A receipt or a move to make durable with the next batch (at once where there is no syncer). */
static void sync_soon(struct kx_inbox *ib)
{
	if (!ib->syncer_started) {
		syncfs(ib->d[D_INBOX].fd);
		return;
	}
	pthread_mutex_lock(&ib->sync_lock);
	if (!ib->sync_pending) {
		ib->sync_pending = true;
		pthread_cond_signal(&ib->sync_wake);
	}
	pthread_mutex_unlock(&ib->sync_lock);
}

/* ---- the decision --------------------------------------------------------------------------- */

static int read_all(int fd, size_t cap, struct kx_buf *out)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size > cap)
		return -EFBIG;
	kx_buf_reset(out);
	int r = kx_buf_reserve(out, (size_t)st.st_size + 1);
	for (off_t off = 0; r == 0;) {
		if (out->alloc - out->len < 4096 && (r = kx_buf_reserve(out, 65536)) < 0)
			break;
		ssize_t n = pread(fd, out->ptr + out->len, out->alloc - out->len - 1, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		out->len += (size_t)n;
		out->ptr[out->len] = '\0';
		off += n;
		if (out->len > cap)
			return -EFBIG;
	}
	return r;
}

/*
 * File a decision (e->lock held): the receipt in `dir` first — accepted: .accepted/NAME; rejected:
 * .rejected/NAME.error, beside which the file itself then moves, byte for byte, as NAME — and only
 * then the file leaves the inbox (accepted: removed). A name taken gets .1, .2 …; nothing is
 * overwritten. Both become durable with the syncer's next batch.
 */
static int file_decision(struct kx_inbox *ib, struct ient *e, const char *name, pid_t pid, int dir,
			 const struct kx_buf *receipt)
{
	bool rejected = dir == D_REJECTED;
	const char *suffix = rejected ? ".error" : "";
	char tmp[64], base[KX_INBOX_NAME_MAX + 1], rname[KX_INBOX_NAME_MAX + 8];
	int tmpdir;
	int r = write_tmp(ib, dir, receipt, tmp, &tmpdir);
	if (r < 0)
		return r;
	int dfd = ib->d[dir].fd;
	struct stat st = { 0 };
	bool have_st = e->fd >= 0 && fstat(e->fd, &st) == 0;
	pthread_mutex_lock(&ib->lock);
	for (unsigned k = 0;; k++) {
		if ((r = kx_receipt_name(name, k, strlen(suffix), base)) < 0)
			break;
		if (rejected && faccessat(dfd, base, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			continue; /* <name>.k is taken, whether or not its .error is */
		snprintf(rname, sizeof(rname), "%s%s", base, suffix);
		if ((r = rename_noreplace(ib->d[tmpdir].fd, tmp, dfd, rname)) != -EEXIST)
			break;
	}
	if (r == 0) {
		changed(ib, dir);
		if (e->state == LIVE) {
			/* the name still holds this file: every rename and unlink of it went through ib->lock */
			int m = rejected ? rename_noreplace(ib->d[D_INBOX].fd, e->name, dfd, base)
					 : keep_spare(ib, e->name);
			if (m < 0 && rejected)
				kx_fs_log_error("cannot move rejected inbox/%s to .rejected/%s: %s", e->name, base,
						strerror(-m));
			else if (m < 0)
				kx_fs_log_error("cannot remove accepted inbox/%s: %s", e->name, strerror(-m));
			changed(ib, D_INBOX);
			if (have_st)
				file_stat(e->ino, &st, &e->st);
			set_ghost(ib, e, pid);
		}
	} else {
		unlinkat(ib->d[tmpdir].fd, tmp, 0);
	}
	pthread_mutex_unlock(&ib->lock);
	if (r == 0)
		sync_soon(ib);
	return r;
}

/* Take the decider's mark off a file (e->lock held); a system call only where there is one. */
static void unmark(struct ient *e)
{
	if (e->marked && e->fd >= 0)
		fremovexattr(e->fd, QUEUED_XATTR);
	e->marked = false;
}

/*
 * A decision in two halves, so that the decider can share one WAL sync among many: decide_start
 * reads, validates and commits (unsynced), tells the notifier and writes the receipt's text;
 * decide_finish, once every accepted decision's commit is synced, files the receipt and lets the
 * file leave the inbox. e->lock is held from the start of one to the end of the other.
 */
struct decision {
	char *name; /* NULL: nothing to decide (the file is no longer LIVE) */
	pid_t pid;  /* the thread whose close or rename decides it */
	int r;      /* 0: accepted; -EINVAL: rejected; -EIO, -ENOSPC: nothing could be decided */
	int w;      /* the receipt's text: 0 or -errno */
	uint64_t ticket;
	struct kx_ingest_result res;
	struct kx_problems p;
	struct kx_buf receipt;
};

/* The first half; false when there is nothing to decide (d->r says why: 0, or -EIO). */
static bool decide_start(struct kx_inbox *ib, struct ient *e, pid_t pid, struct decision *d)
{
	struct kx_fs *fs = ib->fs;
	memset(d, 0, sizeof(*d));
	d->pid = pid;
	pthread_mutex_lock(&ib->lock);
	if (e->state == LIVE)
		d->name = strdup(e->name);
	pthread_mutex_unlock(&ib->lock);
	if (!d->name) {
		d->r = e->state == LIVE ? -EIO : 0;
		return false;
	}
	struct kx_buf bytes = { 0 };
	kx_problems_init(&d->p);
	int fd = entry_fd(ib, e);
	int r = fd < 0 ? fd : e->too_big ? -EFBIG : read_all(fd, fs->max_manifest, &bytes);
	if (r == -EFBIG) {
		kx_problems_add(&d->p, 0, 0, "", "size", "file is over the limit of %zu byte%s (-o max_manifest)",
				fs->max_manifest, fs->max_manifest == 1 ? "" : "s");
		r = -EINVAL;
	} else if (r == 0) {
		/* committed unsynced: the sync follows, once the notifier has the change */
		struct kx_ingest_opts o = { .limits = { .max_bytes = fs->max_manifest } };
		r = kx_ingest_bytes(fs->store, bytes.ptr ? bytes.ptr : "", bytes.len, &o, &d->res, &d->p);
	}
	kx_buf_release(&bytes);
	if (r == 0) {
		/*
		 * The tree first: the notifier's round (the new view, the kernel's invalidations) runs
		 * while the WAL is synced and the receipt written. The sync comes before the file leaves
		 * the inbox (decide_finish): a power loss can never take both. It is made for runs found
		 * already present too — another writer's commit may not be synced yet.
		 */
		size_t n = 0;
		struct kx_digest *runs = malloc((d->res.len ? d->res.len : 1) * sizeof(*runs));
		for (size_t i = 0; runs && i < d->res.len; i++)
			if (d->res.items[i].outcome == KX_INGEST_ADDED)
				runs[n++] = d->res.items[i].run;
		if (d->res.added)
			d->ticket = kx_fs_changed(fs, runs, runs ? n : 0, d->res.generation);
		free(runs);
		d->w = kx_receipt_accepted(fs->tree, d->name, &d->res, &d->receipt);
	} else if (r == -EINVAL) {
		d->w = kx_receipt_rejected(d->name, &d->p, &d->receipt);
	} else {
		kx_fs_log_error("cannot ingest inbox/%s: %s (left in the inbox)", d->name, strerror(-r));
		if (r != -ENOSPC) /* a full disk is said as such: the writer can act on it */
			r = -EIO;
	}
	d->r = r;
	return true;
}

/*
 * The second half. `synced`: 0 when the store's log was synced after this decision's commit, or
 * the sync's error (the file stays). Returns the decision: 0, -EINVAL, or -EIO or -ENOSPC when
 * nothing could be decided.
 */
static int decide_finish(struct kx_inbox *ib, struct ient *e, struct decision *d, int synced)
{
	struct kx_fs *fs = ib->fs;
	int r = d->r, w = d->w;
	if (r == 0 && synced < 0) {
		kx_fs_log_error("cannot sync the store's log after accepting inbox/%s: %s (left in the inbox)", d->name,
				strerror(-synced));
		r = synced == -ENOSPC ? -ENOSPC : -EIO;
	} else if (r == 0) {
		if (w >= 0)
			w = file_decision(ib, e, d->name, d->pid, D_ACCEPTED, &d->receipt);
		if (w < 0) {
			/* committed, but no receipt: the file stays, and deciding it again says "present" */
			kx_fs_log_error("accepted inbox/%s but cannot write its receipt: %s", d->name, strerror(-w));
			r = w == -ENOSPC ? -ENOSPC : -EIO;
		}
		kx_fs_log_debug(fs, "accepted inbox/%s: %zu added, %zu already present", d->name, d->res.added,
				d->res.present);
	} else if (r == -EINVAL) {
		if (w >= 0)
			w = file_decision(ib, e, d->name, d->pid, D_REJECTED, &d->receipt);
		if (w < 0) {
			kx_fs_log_error("rejected inbox/%s but cannot file it: %s", d->name, strerror(-w));
			r = w == -ENOSPC ? -ENOSPC : -EIO;
		}
		kx_fs_log_debug(fs, "rejected inbox/%s: %zu problem%s", d->name, d->p.len, d->p.len == 1 ? "" : "s");
	}
	if (r == 0 || r == -EINVAL) {
		unmark(e); /* the file, in .rejected/ or a spare for the next receipt, keeps no mark */
		if (e->fd >= 0) {
			close(e->fd);
			e->fd = -1;
		}
		e->dirty = false;
		e->too_big = false;
		kx_fs_forget_name(fs, INO_DIR(D_INBOX), d->name);
	}
	kx_buf_release(&d->receipt);
	kx_ingest_result_release(&d->res);
	kx_problems_release(&d->p);
	free(d->name);
	return r;
}

/*
 * Decide a LIVE file of the inbox under a final name (e->lock held), both halves. 0: accepted;
 * -EINVAL: rejected (and filed); -EIO or -ENOSPC: nothing could be decided, the file stays. *ret_ticket: the
 * notifier round that publishes the new runs (0: none); the reply waits for it
 * (kx_fs_reply_after), so that close() returns once the run shows.
 */
static int decide(struct kx_inbox *ib, struct ient *e, pid_t pid, uint64_t *ret_ticket)
{
	struct decision d;
	*ret_ticket = 0;
	if (!decide_start(ib, e, pid, &d))
		return d.r;
	int synced = d.r != 0 ? 0 : kx_store_sync(ib->fs->store);
	*ret_ticket = d.ticket;
	return decide_finish(ib, e, &d, synced);
}

/* ---- the decider ------------------------------------------------------------------------------ */

/*
 * A file renamed to a final name is decided off the rename's reply: rsync (and every tool that
 * writes a temporary name first) renames file after file and waits for each rename, so a decision
 * there — a synced commit, a notifier round — would cost each file its whole time. Instead the
 * rename marks the file (the QUEUED_XATTR extended attribute, set before the rename: the mark and
 * the final name arrive together), answers, and queues it; the decider thread takes the queue in
 * batches, one WAL sync and one notifier round for a batch. The mark is what makes a returned
 * rename durable: a daemon killed before the decision finds the marked files at the next mount
 * and decides them first (kx_inbox_start), while a final name written but never renamed or
 * closed — its writer died — stays undecided, as before.
 *
 * What a user sees is ordered by drain(): the inbox's directories (their attributes, listings and
 * receipts) and an fsync answer only once every file renamed before was decided and shows in the
 * tree — rsync's last step is to stat the inbox (and set its times where they differ), so
 * `rsync -a … mnt/inbox/` returns with its files decided.
 */

/* Queue a LIVE entry (ib->lock held). */
static void enqueue_locked(struct kx_inbox *ib, struct ient *e, pid_t pid)
{
	struct queued *q;
	if (e->queued || !(q = malloc(sizeof(*q))))
		return; /* already queued; without memory the mark still has it decided at the next mount */
	q->next = NULL;
	q->e = e;
	q->pid = pid;
	e->refs++;
	e->queued = true;
	if (ib->queue_tail)
		ib->queue_tail->next = q;
	else
		ib->queue = q;
	ib->queue_tail = q;
	ib->queue_len++;
	ib->nqueued++;
	pthread_cond_signal(&ib->queue_wake);
}

/*
 * Wait until every file queued before this call is decided and its runs show, and, with
 * `forgotten`, the kernel was told to drop their names in /inbox (no lock of ours held).
 *
 * The kernel holds locks of its own meanwhile, and the decisions need some: a round of
 * invalidations takes the locks of the tree's directories it changes (README's: the root's), and
 * forgetting a name the lock of /inbox. SETATTR, FSYNC and READDIR hold nothing but their own
 * inode's, never one of those — they wait as long as it takes (`bounded` false). A GETATTR (the
 * kernel checking permissions) and a LOOKUP in a receipt directory can come inside a rename(2)
 * that holds two directories' locks (`mv mnt/README mnt/inbox/.accepted/`): they wait
 * DRAIN_WAIT_MS at most, names FORGET_WAIT_MS, and answer then anyway — a deadlock is never the
 * price of a fresher answer.
 */
static void drain(struct kx_inbox *ib, bool forgotten, bool bounded)
{
	struct timespec until = kx_deadline_ms(DRAIN_WAIT_MS);
	pthread_mutex_lock(&ib->lock);
	uint64_t target = ib->nqueued;
	if (ib->ndecided < target && ib->decider_started) {
		ib->draining++;
		pthread_cond_signal(&ib->queue_wake); /* no more waiting for a fuller batch */
		kx_loop_hand_off();
		while (ib->ndecided < target && ib->decider_started)
			if (bounded ? pthread_cond_timedwait(&ib->queue_done, &ib->lock, &until) == ETIMEDOUT
				    : pthread_cond_wait(&ib->queue_done, &ib->lock) != 0)
				break;
		ib->draining--;
	}
	pthread_mutex_unlock(&ib->lock);
	if (forgotten)
		kx_fs_wait_forgotten(ib->fs, FORGET_WAIT_MS);
}

/* Decide a batch taken from the queue: every commit, one sync, every filing, one round. */
static void decide_batch(struct kx_inbox *ib, struct queued *batch)
{
	struct decision d[DECIDE_BATCH];
	bool started[DECIDE_BATCH];
	bool sync = false;
	size_t n = 0;
	for (struct queued *q = batch; q; q = q->next, n++) {
		struct ient *e = q->e;
		pthread_mutex_lock(&e->lock);
		pthread_mutex_lock(&ib->lock);
		e->queued = false;
		/* renamed again, to a temporary name or away, since: not (or not yet) to be decided */
		bool final = e->state == LIVE && e->dir == D_INBOX && !kx_inbox_name_is_temp(e->name);
		pthread_mutex_unlock(&ib->lock);
		started[n] = final && decide_start(ib, e, q->pid, &d[n]);
		sync |= started[n] && d[n].r == 0;
	}
	int synced = sync ? kx_store_sync(ib->fs->store) : 0;
	uint64_t ticket = 0;
	n = 0;
	for (struct queued *q = batch; q; q = q->next, n++) {
		if (started[n]) {
			if (d[n].ticket > ticket)
				ticket = d[n].ticket;
			decide_finish(ib, q->e, &d[n], synced);
		}
		pthread_mutex_unlock(&q->e->lock);
	}
	kx_fs_wait_round(ib->fs, ticket);
	pthread_mutex_lock(&ib->lock);
	for (struct queued *q = batch, *next; q; q = next) {
		next = q->next;
		maybe_drop(ib, q->e);
		unref_locked(q->e);
		free(q);
	}
	pthread_mutex_unlock(&ib->lock);
}

static void *decider_main(void *arg)
{
	pthread_setname_np(pthread_self(), "kx-decider"); /* for top -H, perf */
	struct kx_inbox *ib = arg;
	pthread_mutex_lock(&ib->lock);
	for (;;) {
		while (!ib->queue && !ib->decider_stop)
			pthread_cond_wait(&ib->queue_wake, &ib->lock);
		if (!ib->queue)
			break; /* stopping, and every queued file decided */
		/*
		 * rsync renames the next file in well under a millisecond: a moment's wait makes one WAL
		 * sync and one round serve several — unless a reader waits for the decisions.
		 */
		struct timespec until = kx_deadline_ms(DECIDE_WAIT_MS);
		while (ib->queue_len < DECIDE_BATCH && !ib->draining && !ib->decider_stop &&
		       pthread_cond_timedwait(&ib->queue_wake, &ib->lock, &until) == 0)
			;
		struct queued *batch = ib->queue, **tail = &batch->next;
		size_t n = 1;
		while (*tail && n < DECIDE_BATCH) {
			tail = &(*tail)->next;
			n++;
		}
		ib->queue = *tail;
		*tail = NULL;
		if (!ib->queue)
			ib->queue_tail = NULL;
		ib->queue_len -= n;
		pthread_mutex_unlock(&ib->lock);
		decide_batch(ib, batch);
		pthread_mutex_lock(&ib->lock);
		ib->ndecided += n;
		pthread_cond_broadcast(&ib->queue_done);
	}
	pthread_mutex_unlock(&ib->lock);
	return NULL;
}

/* Mark a LIVE file as renamed to be decided (e->lock held): 0, or -errno (no extended attributes). */
static int mark_queued(struct kx_inbox *ib, struct ient *e)
{
	int fd = entry_fd(ib, e);
	if (fd < 0)
		return fd;
	if (fsetxattr(fd, QUEUED_XATTR, "", 0, 0) < 0)
		return -errno;
	e->marked = true;
	return 0;
}

/* Queue the files a killed daemon left marked (before the decider starts: no lock needed). */
static void queue_marked(struct kx_inbox *ib)
{
	int fd = openat(ib->d[D_INBOX].fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(dir))) {
		if ((de->d_type != DT_REG && de->d_type != DT_UNKNOWN) || kx_inbox_name_is_temp(de->d_name) ||
		    kx_inbox_name_check(de->d_name) < 0)
			continue;
		int f = openat(ib->d[D_INBOX].fd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		struct stat st;
		bool marked = f >= 0 && fstat(f, &st) == 0 && S_ISREG(st.st_mode) &&
			      fgetxattr(f, QUEUED_XATTR, NULL, 0) >= 0;
		if (f >= 0)
			close(f);
		struct ient *e = marked ? entry_for(ib, D_INBOX, de->d_name) : NULL;
		if (e) {
			e->marked = true;
			enqueue_locked(ib, e, 0);
			n++;
		}
	}
	closedir(dir);
	if (n)
		kx_fs_log_debug(ib->fs, "deciding %zu file%s renamed into the inbox before the daemon stopped", n,
				n == 1 ? "" : "s");
}

int kx_inbox_start(struct kx_fs *fs)
{
	struct kx_inbox *ib = fs->inbox;
	if (!ib)
		return 0;
	queue_marked(ib);
	int r = pthread_create(&ib->decider, NULL, decider_main, ib);
	ib->decider_started = r == 0;
	return -r;
}

void kx_inbox_stop(struct kx_fs *fs)
{
	struct kx_inbox *ib = fs->inbox;
	if (!ib || !ib->decider_started)
		return;
	/* what was renamed is decided before the notifier stops and the store closes */
	pthread_mutex_lock(&ib->lock);
	ib->decider_stop = true;
	pthread_cond_signal(&ib->queue_wake);
	pthread_mutex_unlock(&ib->lock);
	pthread_join(ib->decider, NULL);
	pthread_mutex_lock(&ib->lock);
	ib->decider_started = false;
	pthread_cond_broadcast(&ib->queue_done);
	pthread_mutex_unlock(&ib->lock);
}

/*
 * A GHOST written to again with O_TRUNC (or at offset 0) by the process that still sees it: a new
 * file under its name, if the name is free (e->lock held). 0 or -ESTALE.
 */
static int resurrect(struct kx_inbox *ib, struct ient *e)
{
	int r = -ESTALE;
	pthread_mutex_lock(&ib->lock);
	if (e->state == GHOST && !find_name(ib, e->dir, e->name)) {
		int fd = openat(ib->d[e->dir].fd, e->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				(e->st.st_mode & 0777) | 0600);
		if (fd >= 0) {
			ghost_remove(ib, e);
			e->state = LIVE;
			name_hash(ib, e);
			changed(ib, e->dir);
			/* back behind the kernel's back: it may hold the name as absent */
			kx_fs_forget_name(ib->fs, INO_DIR(e->dir), e->name);
			if (e->fd >= 0)
				close(e->fd);
			e->fd = fd;
			e->dirty = true;
			e->too_big = false;
			r = 0;
		}
	}
	pthread_mutex_unlock(&ib->lock);
	return r;
}

/* ---- set-up --------------------------------------------------------------------------------- */

int kx_inbox_open(struct kx_fs *fs, const char *store_path, char **ret_err)
{
	struct kx_inbox *ib = calloc(1, sizeof(*ib));
	char path[4096];
	int r = 0;
	if (!ib)
		return -ENOMEM;
	for (int i = 0; i < D__N; i++)
		ib->d[i].fd = -1;
	pthread_mutex_init(&ib->lock, NULL);
	pthread_mutex_init(&ib->sync_lock, NULL);
	kx_cond_init_monotonic(&ib->sync_wake);
	kx_cond_init_monotonic(&ib->queue_wake);
	kx_cond_init_monotonic(&ib->queue_done);
	ib->fs = fs;
	ib->next_ino = FIRST_FILE;
	ib->root = geteuid() == 0;
	snprintf(path, sizeof(path), "%s/inbox", store_path);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		r = -errno;
	if (r == 0 && (ib->d[D_INBOX].fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		r = -errno;
	for (int i = D_ACCEPTED; r == 0 && i < D__N; i++) {
		if (mkdirat(ib->d[D_INBOX].fd, dir_names[i], 0755) < 0 && errno != EEXIST)
			r = -errno;
		else if ((ib->d[i].fd = openat(ib->d[D_INBOX].fd, dir_names[i],
					       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			r = -errno;
		else
			kx_receipts_remove_dead(ib->d[i].fd);
	}
	if (r == 0) {
		r = -pthread_create(&ib->syncer, NULL, syncer_main, ib);
		ib->syncer_started = r == 0;
	}
	if (r < 0) {
		if (ret_err && asprintf(ret_err, "cannot set up the inbox '%s': %s", path, strerror(-r)) < 0)
			*ret_err = NULL;
		fs->inbox = ib;
		kx_inbox_close(fs);
		return r;
	}
	fs->inbox = ib;
	return 0;
}

void kx_inbox_close(struct kx_fs *fs)
{
	struct kx_inbox *ib = fs->inbox;
	if (!ib)
		return;
	if (ib->syncer_started) {
		/* the last batch is synced before the store closes: an unmount loses no receipt */
		pthread_mutex_lock(&ib->sync_lock);
		ib->sync_stop = true;
		pthread_cond_signal(&ib->sync_wake);
		pthread_mutex_unlock(&ib->sync_lock);
		pthread_join(ib->syncer, NULL);
	}
	for (size_t i = 0; i < ib->nspares; i++)
		unlinkat(ib->d[D_ACCEPTED].fd, ib->spares[i], 0);
	free(ib->spares);
	for (struct queued *q = ib->queue, *next; q; q = next) {
		next = q->next; /* left only where the decider never started: the marks remain */
		free(q);
	}
	for (size_t b = 0; b < BUCKETS; b++)
		for (struct ient *e = ib->by_ino[b], *n; e; e = n) {
			n = e->ino_next;
			ient_free(e);
		}
	for (int i = 0; i < D__N; i++)
		if (ib->d[i].fd >= 0)
			close(ib->d[i].fd);
	pthread_mutex_destroy(&ib->lock);
	pthread_mutex_destroy(&ib->sync_lock);
	pthread_cond_destroy(&ib->sync_wake);
	pthread_cond_destroy(&ib->queue_wake);
	pthread_cond_destroy(&ib->queue_done);
	free(ib);
	fs->inbox = NULL;
}

/* ---- operations ----------------------------------------------------------------------------- */

static void reply_err(fuse_req_t req, const char *op, const char *name, int r)
{
	if (r == -EIO || r == -ENOMEM)
		kx_fs_log_error("%s of inbox/%s failed: %s", op, name ? name : "?", strerror(-r));
	fuse_reply_err(req, -r);
}

void kx_inbox_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct kx_inbox *ib = ib_of(req);
	struct fuse_entry_param ep;
	struct stat st = { 0 };
	int dir = dir_of_ino(parent);
	if (dir < 0) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (dir != D_INBOX)
		drain(ib, true, true); /* the receipt of a file renamed before is there, its name gone */
	if (is_receipt_dir_name(dir, name)) {
		int sub = name[1] == 'a' ? D_ACCEPTED : D_REJECTED;
		int r = dir_stat(ib, sub, &st);
		if (r < 0) {
			reply_err(req, "lookup", name, r);
			return;
		}
		entry_param(&ep, &st, ib->fs->timeout, 0);
		fuse_reply_entry(req, &ep);
		return;
	}
	if (hidden(dir, name)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	struct stat b;
	int r = 0;
	double timeout = 0, negative = 0;
	pthread_mutex_lock(&ib->lock);
	struct ient *e = NULL;
	if (fstatat(ib->d[dir].fd, name, &b, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISREG(b.st_mode))
			r = -ENOENT; /* not ours to show: only files and the two receipt directories */
		else if (!(e = entry_for(ib, dir, name)))
			r = -ENOMEM;
		else
			file_stat(e->ino, &b, &st);
		timeout = name_timeout(dir, name);
	} else if (errno == ENOENT) {
		struct ient *stale = find_name(ib, dir, name);
		if (stale)
			set_gone(ib, stale); /* removed behind our back */
		if ((e = ghost_for(ib, dir, name, fuse_req_ctx(req)->pid)))
			st = e->st;
		else
			r = -ENOENT;
		/*
		 * A name of the inbox appears only through the kernel (create, rename), which turns its
		 * cached absence into an entry — unless it is the name of a ghost, which its decider must
		 * still find: only such a name is not cached absent.
		 */
		if (r == -ENOENT && dir == D_INBOX && !ghost_named(ib, dir, name))
			negative = NAME_TIMEOUT;
	} else {
		r = -errno;
	}
	if (e)
		e->nlookup++;
	pthread_mutex_unlock(&ib->lock);
	if (r == -ENOENT && negative > 0) {
		memset(&ep, 0, sizeof(ep)); /* inode 0: the kernel keeps the name as absent */
		ep.entry_timeout = negative;
		fuse_reply_entry(req, &ep);
		return;
	}
	if (r < 0) {
		reply_err(req, "lookup", name, r);
		return;
	}
	entry_param(&ep, &st, timeout, timeout);
	fuse_reply_entry(req, &ep);
}

void kx_inbox_forget(struct kx_fs *fs, fuse_ino_t ino, uint64_t nlookup)
{
	struct kx_inbox *ib = fs->inbox;
	if (!ib || dir_of_ino(ino) >= 0)
		return;
	pthread_mutex_lock(&ib->lock);
	struct ient *e = find_ino(ib, ino);
	if (e) {
		e->nlookup = e->nlookup > nlookup ? e->nlookup - nlookup : 0;
		maybe_drop(ib, e);
	}
	pthread_mutex_unlock(&ib->lock);
}

/* Attributes of a file entry (e->lock held). */
static int entry_stat(struct kx_inbox *ib, struct ient *e, struct stat *st)
{
	struct stat b;
	if (e->state == GHOST) {
		*st = e->st;
		return 0;
	}
	if (e->fd >= 0) {
		if (fstat(e->fd, &b) < 0)
			return -errno;
	} else {
		int r = 0;
		pthread_mutex_lock(&ib->lock);
		if (e->state != LIVE)
			r = -ESTALE;
		else if (fstatat(ib->d[e->dir].fd, e->name, &b, AT_SYMLINK_NOFOLLOW) < 0)
			r = errno == ENOENT ? -ESTALE : -errno;
		pthread_mutex_unlock(&ib->lock);
		if (r < 0)
			return r;
	}
	file_stat(e->ino, &b, st);
	if (e->state == GONE)
		st->st_nlink = 0;
	return 0;
}

void kx_inbox_getattr(fuse_req_t req, fuse_ino_t ino)
{
	struct kx_inbox *ib = ib_of(req);
	struct stat st;
	double timeout = 0;
	int dir = dir_of_ino(ino), r;
	if (dir >= 0) {
		/*
		 * A cached listing is checked against this mtime: it shows every file renamed before; and
		 * `rsync -a`'s last step is a stat of the inbox, so when rsync exits its files are decided.
		 * (With -o default_permissions the kernel asks for these attributes before every step in
		 * the inbox, and each waits: renames then go at the pace of their decisions.)
		 */
		drain(ib, false, true);
		r = dir_stat(ib, dir, &st);
	} else {
		struct ient *e = get(ib, ino);
		if (!e) {
			fuse_reply_err(req, ESTALE);
			return;
		}
		pthread_mutex_lock(&e->lock);
		r = entry_stat(ib, e, &st);
		timeout = attr_timeout(ib, e);
		pthread_mutex_unlock(&e->lock);
		put(ib, e);
	}
	if (r < 0)
		reply_err(req, "getattr", NULL, r);
	else
		fuse_reply_attr(req, &st, timeout);
}

static void times_of(const struct stat *attr, int to_set, struct timespec ts[2])
{
	ts[0].tv_nsec = ts[1].tv_nsec = UTIME_OMIT;
	if (to_set & FUSE_SET_ATTR_ATIME_NOW)
		ts[0].tv_nsec = UTIME_NOW;
	else if (to_set & FUSE_SET_ATTR_ATIME)
		ts[0] = attr->st_atim;
	if (to_set & FUSE_SET_ATTR_MTIME_NOW)
		ts[1].tv_nsec = UTIME_NOW;
	else if (to_set & FUSE_SET_ATTR_MTIME)
		ts[1] = attr->st_mtim;
}

/* mode, owner and times on a descriptor (a directory, a file or a receipt) */
static int set_meta(int fd, const struct stat *attr, int to_set, mode_t keep)
{
	if ((to_set & FUSE_SET_ATTR_MODE) && fchmod(fd, (attr->st_mode & 07777) | keep) < 0)
		return -errno;
	if ((to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) &&
	    fchown(fd, (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1,
		   (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1) < 0)
		return -errno;
	if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW)) {
		struct timespec ts[2];
		times_of(attr, to_set, ts);
		if (futimens(fd, ts) < 0)
			return -errno;
	}
	return 0;
}

void kx_inbox_setattr(fuse_req_t req, fuse_ino_t ino, const struct stat *attr, int to_set)
{
	struct kx_inbox *ib = ib_of(req);
	struct kx_fs *fs = ib->fs;
	struct stat st;
	int dir = dir_of_ino(ino), r;
	if (dir >= 0) {
		/* the directories themselves: `rsync -a dir/ mnt/inbox/` sets the inbox's mode and times */
		drain(ib, false, false);
		r = (to_set & FUSE_SET_ATTR_SIZE) ? -EISDIR : set_meta(ib->d[dir].fd, attr, to_set, 0700);
		if (r == 0) {
			pthread_mutex_lock(&ib->lock);
			ib->d[dir].reported_changes = ib->d[dir].changes; /* report the times just set */
			ib->d[dir].reported = (struct timespec){ 0 };
			pthread_mutex_unlock(&ib->lock);
			r = dir_stat(ib, dir, &st);
		}
		if (r < 0)
			reply_err(req, "setattr", dir_names[dir], r);
		else
			fuse_reply_attr(req, &st, 0);
		return;
	}
	struct ient *e = get(ib, ino);
	if (!e) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	pthread_mutex_lock(&e->lock);
	r = 0;
	if ((to_set & FUSE_SET_ATTR_SIZE) && e->dir != D_INBOX)
		r = -EPERM; /* receipts and rejected files are records: byte-exact */
	else if ((to_set & FUSE_SET_ATTR_SIZE) && (uint64_t)attr->st_size > fs->max_manifest)
		r = -EFBIG;
	else if (e->state == GHOST && (to_set & FUSE_SET_ATTR_SIZE))
		r = resurrect(ib, e); /* open(O_TRUNC) of a file just decided: a new one */
	if (r == 0 && e->state == GHOST) {
		/* a late chmod/utimes on a decided file (install, cp -p): it is gone, and that is fine */
		if (to_set & FUSE_SET_ATTR_MODE)
			e->st.st_mode = S_IFREG | (attr->st_mode & 07777);
		struct timespec ts[2];
		times_of(attr, to_set, ts);
		if (ts[0].tv_nsec != UTIME_OMIT)
			e->st.st_atim = ts[0].tv_nsec == UTIME_NOW ? (struct timespec){ time(NULL), 0 } : ts[0];
		if (ts[1].tv_nsec != UTIME_OMIT)
			e->st.st_mtim = ts[1].tv_nsec == UTIME_NOW ? (struct timespec){ time(NULL), 0 } : ts[1];
		st = e->st;
	} else if (r == 0) {
		int fd = entry_fd(ib, e);
		r = fd < 0 ? fd : set_meta(fd, attr, to_set, e->dir == D_INBOX ? 0600 : 0400);
		if (r == 0 && (to_set & FUSE_SET_ATTR_SIZE) && ftruncate(fd, attr->st_size) < 0)
			r = -errno;
		if (r == 0 && e->dir == D_INBOX) {
			/* any change counts as a write: `touch` + close decides a file left in the inbox */
			e->dirty = true;
			e->writer = fuse_req_ctx(req)->pid;
			if (to_set & FUSE_SET_ATTR_SIZE)
				e->too_big = false;
		}
		if (r == 0)
			r = entry_stat(ib, e, &st);
	}
	double timeout = attr_timeout(ib, e);
	pthread_mutex_unlock(&e->lock);
	put(ib, e);
	if (r < 0)
		reply_err(req, "setattr", NULL, r);
	else
		fuse_reply_attr(req, &st, timeout);
}

void kx_inbox_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off)
{
	struct kx_inbox *ib = ib_of(req);
	if (dir_of_ino(ino) >= 0) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	struct ient *e = get(ib, ino);
	if (!e) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	char *buf = malloc(size ? size : 1);
	pthread_mutex_lock(&e->lock);
	int fd = e->state == GHOST ? -ESTALE : entry_fd(ib, e);
	ssize_t n = fd < 0 ? fd : !buf ? -ENOMEM : pread(fd, buf, size, off);
	if (n < 0 && fd >= 0 && buf)
		n = -errno;
	pthread_mutex_unlock(&e->lock);
	put(ib, e);
	if (n < 0)
		reply_err(req, "read", NULL, (int)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

void kx_inbox_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off)
{
	struct kx_inbox *ib = ib_of(req);
	struct kx_fs *fs = ib->fs;
	if (dir_of_ino(ino) >= 0) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	struct ient *e = get(ib, ino);
	if (!e) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	ssize_t r = 0;
	pthread_mutex_lock(&e->lock);
	if (e->dir != D_INBOX)
		r = -EACCES; /* receipts are written by the daemon only */
	else if (off < 0 || (uint64_t)off + size > fs->max_manifest) {
		/* the size cap, as the bytes arrive: cp, dd, tee and Python all report EFBIG */
		e->too_big = true;
		e->dirty = true;
		e->writer = fuse_req_ctx(req)->pid;
		r = -EFBIG;
	} else if (e->state == GHOST)
		r = off == 0 ? resurrect(ib, e) : -ESTALE;
	if (r == 0) {
		int fd = entry_fd(ib, e);
		r = fd < 0 ? fd : pwrite(fd, buf, size, off);
		if (r < 0 && fd >= 0)
			r = -errno;
		if (r >= 0) {
			e->dirty = true;
			e->writer = fuse_req_ctx(req)->pid;
		}
	}
	pthread_mutex_unlock(&e->lock);
	put(ib, e);
	if (r < 0)
		reply_err(req, "write", NULL, (int)r);
	else
		fuse_reply_write(req, (size_t)r);
}

void kx_inbox_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi)
{
	struct kx_inbox *ib = ib_of(req);
	int dir = dir_of_ino(parent);
	int r = 0;
	if (dir < 0)
		r = -ENOTDIR;
	else if (dir != D_INBOX)
		r = -EACCES; /* .accepted/ and .rejected/ hold the daemon's records */
	else if (kx_inbox_name_check(name) < 0)
		r = -EINVAL; /* control bytes, not UTF-8: refused, not slugged (the name is the user's) */
	else if (is_receipt_dir_name(dir, name))
		r = -EEXIST;
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	int flags = O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (fi->flags & (O_EXCL | O_TRUNC));
	struct stat b, st;
	struct ient *e = NULL;
	pthread_mutex_lock(&ib->lock);
	int fd = openat(ib->d[dir].fd, name, flags, (mode & 0777) | 0600);
	if (fd < 0)
		r = -errno;
	else if (fstat(fd, &b) < 0)
		r = -errno;
	else if (!S_ISREG(b.st_mode))
		r = -EEXIST;
	else if (!(e = entry_for(ib, dir, name)))
		r = -ENOMEM;
	if (r == 0) {
		e->refs++;
		e->nlookup++;
		changed(ib, dir);
	}
	pthread_mutex_unlock(&ib->lock);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		reply_err(req, "create", name, r);
		return;
	}
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	if (ib->root && fchown(fd, ctx->uid, ctx->gid) == 0)
		fstat(fd, &b); /* a file belongs to whoever created it, as on a local file system */
	pthread_mutex_lock(&e->lock);
	if (e->fd < 0)
		e->fd = fd;
	else
		close(fd);
	e->dirty = true;
	e->writer = ctx->pid;
	if (fi->flags & O_TRUNC)
		e->too_big = false;
	pthread_mutex_unlock(&e->lock);
	file_stat(e->ino, &b, &st);
	put(ib, e);
	struct fuse_entry_param ep;
	double timeout = name_timeout(dir, name);
	entry_param(&ep, &st, timeout, timeout);
	fi->fh = 0; /* operations find the file by inode number, as for files opened without OPEN */
	fi->keep_cache = 0;
	fi->direct_io = 0;
	if (fuse_reply_create(req, &ep, fi) == -ENOENT)
		kx_inbox_forget(ib->fs, ep.ino, 1); /* the creator was interrupted: the kernel holds nothing */
}

void kx_inbox_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct kx_inbox *ib = ib_of(req);
	int dir = dir_of_ino(parent), r = 0;
	struct stat b;
	if (dir < 0) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (is_receipt_dir_name(dir, name)) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (hidden(dir, name)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	pthread_mutex_lock(&ib->lock);
	if (fstatat(ib->d[dir].fd, name, &b, AT_SYMLINK_NOFOLLOW) < 0)
		r = -errno;
	else if (!S_ISREG(b.st_mode))
		r = -ENOENT;
	else if (unlinkat(ib->d[dir].fd, name, 0) < 0)
		r = -errno;
	if (r == 0) {
		struct ient *e = find_name(ib, dir, name);
		if (e)
			set_gone(ib, e);
		changed(ib, dir);
	}
	pthread_mutex_unlock(&ib->lock);
	if (r < 0)
		reply_err(req, "unlink", name, r);
	else
		fuse_reply_err(req, 0);
}

void kx_inbox_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	int dir = dir_of_ino(parent);
	if (dir < 0)
		fuse_reply_err(req, ENOTDIR);
	else if (is_receipt_dir_name(dir, name))
		fuse_reply_err(req, EPERM); /* the receipt directories stay; their files may go */
	else
		fuse_reply_err(req, ENOTDIR); /* nothing else in the inbox is a directory */
}

void kx_inbox_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		     const char *newname, unsigned int flags)
{
	struct kx_inbox *ib = ib_of(req);
	int dir = dir_of_ino(parent), r = 0;
	/* never EINVAL: mv and rsync read it as "moving a directory into itself" and give up */
	if (flags & ~RENAME_NOREPLACE)
		r = -EOPNOTSUPP;
	else if (dir < 0 || newparent != parent)
		r = -EXDEV; /* mv copies and unlinks instead: a file from .rejected/ is decided anew */
	else if (is_receipt_dir_name(dir, name) || is_receipt_dir_name(dir, newname))
		r = -EPERM;
	else if (hidden(dir, name) || hidden(dir, newname))
		r = -ENOENT;
	else if (kx_inbox_name_check(newname) < 0)
		r = -EILSEQ; /* a name that create would refuse, and not EINVAL (above) */
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	if (strcmp(name, newname) == 0) {
		fuse_reply_err(req, 0);
		return;
	}
	struct stat b;
	struct ient *e = NULL;
	pthread_mutex_lock(&ib->lock);
	if (fstatat(ib->d[dir].fd, name, &b, AT_SYMLINK_NOFOLLOW) < 0)
		r = -errno;
	else if (!S_ISREG(b.st_mode))
		r = -ENOENT;
	else if (!(e = entry_for(ib, dir, name)))
		r = -ENOMEM;
	else
		e->refs++;
	pthread_mutex_unlock(&ib->lock);
	if (r < 0) {
		reply_err(req, "rename", name, r);
		return;
	}
	pthread_mutex_lock(&e->lock); /* no decision of this file in flight while it moves */
	bool final = dir == D_INBOX && !kx_inbox_name_is_temp(newname);
	/* marked first: a returned rename is decided even if the daemon is killed (see the decider) */
	bool queue = final && ib->decider_started && mark_queued(ib, e) == 0;
	pthread_mutex_lock(&ib->lock);
	if (e->state != LIVE || strcmp(e->name, name) != 0)
		r = -ENOENT; /* decided or moved meanwhile */
	else if (flags & RENAME_NOREPLACE)
		r = rename_noreplace(ib->d[dir].fd, name, ib->d[dir].fd, newname);
	else if (renameat(ib->d[dir].fd, name, ib->d[dir].fd, newname) < 0)
		r = -errno;
	char *copy = r == 0 ? strdup(newname) : NULL;
	if (r == 0 && !copy) {
		/* renamed on disk, not in the table: forget the entry rather than hold a wrong name */
		set_gone(ib, e);
		r = -ENOMEM;
	} else if (r == 0) {
		struct ient *target = find_name(ib, dir, newname);
		if (target && target != e)
			set_gone(ib, target); /* replaced */
		name_unhash(ib, e);
		free(e->name);
		e->name = copy;
		name_hash(ib, e);
		changed(ib, dir);
		if (queue)
			enqueue_locked(ib, e, fuse_req_ctx(req)->pid);
	}
	pthread_mutex_unlock(&ib->lock);
	if (r < 0 && queue)
		unmark(e);
	/*
	 * Arriving at a final name decides a file — by the decider, or here where the file system
	 * under the store keeps no extended attributes. A rejected file still renames fine (see
	 * .rejected/).
	 */
	uint64_t ticket = 0;
	if (r == 0 && final && !queue) {
		int d = decide(ib, e, fuse_req_ctx(req)->pid, &ticket);
		r = d == -EINVAL ? 0 : d;
	}
	pthread_mutex_unlock(&e->lock);
	pthread_mutex_lock(&ib->lock);
	maybe_drop(ib, e);
	unref_locked(e);
	pthread_mutex_unlock(&ib->lock);
	if (r < 0)
		reply_err(req, "rename", name, r);
	else
		kx_fs_reply_after(ib->fs, ticket, req, 0);
}

/* Listings come from the backing directory; offsets are its own telldir cookies. */
void kx_inbox_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus)
{
	struct kx_inbox *ib = ib_of(req);
	int dir = dir_of_ino(ino);
	if (dir < 0) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (!off)
		drain(ib, dir != D_INBOX, false); /* a listing from the start shows what was renamed before */
	int fd = openat(ib->d[dir].fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	char *buf = malloc(size);
	if (!d || !buf) {
		int r = !buf ? -ENOMEM : -errno;
		if (d)
			closedir(d);
		else if (fd >= 0)
			close(fd);
		free(buf);
		reply_err(req, "readdir", dir_names[dir], r);
		return;
	}
	if (off)
		seekdir(d, off);
	size_t used = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		struct stat st = { 0 };
		if (strcmp(n, ".") == 0) {
			st.st_ino = INO_DIR(dir);
			st.st_mode = S_IFDIR;
		} else if (strcmp(n, "..") == 0) {
			st.st_ino = dir == D_INBOX ? 1 : INO_DIR(D_INBOX);
			st.st_mode = S_IFDIR;
		} else if (is_receipt_dir_name(dir, n)) {
			st.st_ino = INO_DIR(n[1] == 'a' ? D_ACCEPTED : D_REJECTED);
			st.st_mode = S_IFDIR;
		} else if (hidden(dir, n)) {
			continue;
		} else {
			unsigned char type = de->d_type;
			struct stat b;
			if (type == DT_UNKNOWN && fstatat(ib->d[dir].fd, n, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISREG(b.st_mode))
				type = DT_REG;
			if (type != DT_REG)
				continue;
			pthread_mutex_lock(&ib->lock);
			struct ient *e = find_name(ib, dir, n);
			/* a name not yet looked up has no number of ours: a placeholder in the other half */
			st.st_ino = e ? e->ino : KX_INO_INBOX | 1ull << 58 | (de->d_ino & ((1ull << 58) - 1));
			pthread_mutex_unlock(&ib->lock);
			st.st_mode = S_IFREG;
		}
		off_t next = telldir(d);
		size_t need;
		if (plus) {
			/* names only: the kernel looks up what it wants, and LOOKUP counts the references */
			struct fuse_entry_param ep = { .attr = st };
			need = fuse_add_direntry_plus(req, buf + used, size - used, n, &ep, next);
		} else {
			need = fuse_add_direntry(req, buf + used, size - used, n, &st, next);
		}
		if (need > size - used)
			break;
		used += need;
	}
	closedir(d);
	fuse_reply_buf(req, buf, used);
	free(buf);
}

void kx_inbox_flush(fuse_req_t req, fuse_ino_t ino)
{
	struct kx_inbox *ib = ib_of(req);
	if (dir_of_ino(ino) >= 0) {
		fuse_reply_err(req, 0);
		return;
	}
	struct ient *e = get(ib, ino);
	if (!e) {
		fuse_reply_err(req, 0);
		return;
	}
	pid_t pid = fuse_req_ctx(req)->pid;
	int r = 0;
	pthread_mutex_lock(&e->lock);
	bool final = false;
	pthread_mutex_lock(&ib->lock);
	if (e->state == LIVE && e->dir == D_INBOX)
		final = !kx_inbox_name_is_temp(e->name);
	pthread_mutex_unlock(&ib->lock);
	/*
	 * Decided by a close of the process that wrote it: a reader closing its own descriptor (or
	 * `tail -f`) decides nothing. Thread ids first, the process only when they differ. And not
	 * while empty: a shell's `cmd > f` and dd's of= open the file, duplicate the descriptor and
	 * close the original before the first byte is written — that close is no end of the file.
	 */
	struct stat st;
	uint64_t ticket = 0;
	if (final && (e->dirty || e->too_big) && same_process(pid, e->writer) &&
	    (e->too_big || entry_stat(ib, e, &st) < 0 || st.st_size > 0))
		r = decide(ib, e, pid, &ticket);
	else
		entry_close(e); /* opened again on the next write: no descriptor per idle file */
	pthread_mutex_unlock(&e->lock);
	put(ib, e);
	/* EINVAL: refused, so close() fails — cp, install, tee, dd and Python report it */
	kx_fs_reply_after(ib->fs, ticket, req, -r);
}

void kx_inbox_fsync(fuse_req_t req, fuse_ino_t ino, int datasync)
{
	struct kx_inbox *ib = ib_of(req);
	int dir = dir_of_ino(ino), r = 0;
	drain(ib, false, false);
	if (dir >= 0) {
		r = fsync(ib->d[dir].fd) < 0 ? -errno : 0;
	} else {
		struct ient *e = get(ib, ino);
		if (!e) {
			fuse_reply_err(req, ESTALE);
			return;
		}
		pthread_mutex_lock(&e->lock);
		if (e->state != GHOST) {
			int fd = entry_fd(ib, e);
			r = fd < 0 ? fd : (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? -errno : 0;
		}
		pthread_mutex_unlock(&e->lock);
		put(ib, e);
	}
	if (r < 0)
		reply_err(req, "fsync", NULL, r);
	else
		fuse_reply_err(req, 0);
}

void kx_inbox_release(fuse_req_t req, fuse_ino_t ino)
{
	struct kx_inbox *ib = ib_of(req);
	struct ient *e = dir_of_ino(ino) < 0 ? get(ib, ino) : NULL;
	if (e) {
		pthread_mutex_lock(&e->lock);
		entry_close(e);
		pthread_mutex_unlock(&e->lock);
		put(ib, e);
	}
	fuse_reply_err(req, 0);
}

void kx_inbox_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct kx_inbox *ib = ib_of(req);
	struct statvfs sv;
	if (fstatvfs(ib->d[D_INBOX].fd, &sv) < 0) {
		reply_err(req, "statfs", NULL, -errno);
		return;
	}
	sv.f_namemax = KX_INBOX_NAME_MAX;
	fuse_reply_statfs(req, &sv);
}
