// SPDX-License-Identifier: MIT
/*
 * The lower layer of the inbox, under the decision (decide.c) and the operations (inbox.c), and
 * calling neither: the table of the files the kernel was told about, by inode number and by name,
 * with its ghosts; the attributes it is told; the backing files in STORE/inbox and its receipt
 * directories; and the syncer thread, which makes receipts and moves durable in batches. How the
 * inbox works, its crash safety by ordering and its lock nesting: the opening comment of inbox.c.
 */
#include "inbox-private.h"

#include "kx/spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

bool fs_same_process(pid_t a, pid_t b)
{
	return a == b || (a > 0 && b > 0 && tgid_of(a) == tgid_of(b));
}

/* ---- the table (all under ib->lock) --------------------------------------------------------- */

static size_t hash_name(int dir, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)dir;
	for (const unsigned char *s = (const unsigned char *)name; *s; s++)
		h = (h ^ *s) * 1099511628211ull;
	return (size_t)(h % BUCKETS);
}

struct ient *fs_find_ino(struct fs_inbox *ib, uint64_t ino)
{
	for (struct ient *e = ib->by_ino[ino % BUCKETS]; e; e = e->ino_next)
		if (e->ino == ino)
			return e;
	return NULL;
}

struct ient *fs_find_name(struct fs_inbox *ib, int dir, const char *name)
{
	for (struct ient *e = ib->by_name[hash_name(dir, name)]; e; e = e->name_next)
		if (e->dir == dir && strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

void fs_name_unhash(struct fs_inbox *ib, struct ient *e)
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

void fs_name_hash(struct fs_inbox *ib, struct ient *e)
{
	size_t h = hash_name(e->dir, e->name);
	e->name_next = ib->by_name[h];
	ib->by_name[h] = e;
}

void fs_ient_free(struct ient *e)
{
	if (e->fd >= 0)
		close(e->fd);
	pthread_mutex_destroy(&e->lock);
	free(e->name);
	free(e);
}

void fs_unref_locked(struct ient *e)
{
	if (--e->refs == 0)
		fs_ient_free(e);
}

void fs_ghost_remove(struct fs_inbox *ib, struct ient *e)
{
	if (!e->in_ghosts)
		return;
	kx_list_unlink(&ib->ghosts, &e->ghost);
	e->in_ghosts = false;
	ib->nghosts--;
}

/* Forget an entry the kernel no longer holds (and that is no ghost to be found by name). */
void fs_maybe_drop(struct fs_inbox *ib, struct ient *e)
{
	if (e->nlookup > 0 || e->in_ghosts || !e->hashed)
		return;
	fs_name_unhash(ib, e);
	struct ient **p = &ib->by_ino[e->ino % BUCKETS];
	while (*p && *p != e)
		p = &(*p)->ino_next;
	if (*p)
		*p = e->ino_next;
	e->hashed = false;
	fs_unref_locked(e);
}

void fs_set_gone(struct fs_inbox *ib, struct ient *e)
{
	if (e->state == GONE)
		return;
	fs_name_unhash(ib, e);
	fs_ghost_remove(ib, e);
	e->state = GONE;
	fs_maybe_drop(ib, e);
}

static struct ient *ient_new(struct fs_inbox *ib, int dir, const char *name)
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
	fs_name_hash(ib, e);
	return e;
}

/* The entry of a LIVE name, made if needed; NULL only without memory. */
struct ient *fs_entry_for(struct fs_inbox *ib, int dir, const char *name)
{
	struct ient *e = fs_find_name(ib, dir, name);
	return e ? e : ient_new(ib, dir, name);
}

/* Take an entry by inode number for an operation (put it back with fs_inbox_put()). */
struct ient *fs_inbox_get(struct fs_inbox *ib, uint64_t ino)
{
	pthread_mutex_lock(&ib->lock);
	struct ient *e = fs_find_ino(ib, ino);
	if (e)
		e->refs++;
	pthread_mutex_unlock(&ib->lock);
	return e;
}

void fs_inbox_put(struct fs_inbox *ib, struct ient *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&ib->lock);
	fs_unref_locked(e);
	pthread_mutex_unlock(&ib->lock);
}

/* A decided file: out of the name hash, onto the (bounded) list of ghosts. */
void fs_set_ghost(struct fs_inbox *ib, struct ient *e, pid_t decider)
{
	fs_name_unhash(ib, e);
	e->state = GHOST;
	e->decider = decider;
	e->decided_ns = mono_ns();
	kx_list_push(&ib->ghosts, &e->ghost);
	e->in_ghosts = true;
	if (++ib->nghosts > GHOSTS_MAX) {
		struct ient *last = kx_entry_of(ib->ghosts.tail, struct ient, ghost);
		fs_ghost_remove(ib, last);
		fs_maybe_drop(ib, last);
	}
}

/* The ghost of `name` decided less than GHOST_SECONDS ago, or NULL. */
struct ient *fs_ghost_named(struct fs_inbox *ib, int dir, const char *name)
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
struct ient *fs_ghost_for(struct fs_inbox *ib, int dir, const char *name, pid_t pid)
{
	struct ient *e = fs_ghost_named(ib, dir, name);
	return e && fs_same_process(pid, e->decider) ? e : NULL;
}

void fs_inbox_changed(struct fs_inbox *ib, int dir)
{
	ib->d[dir].changes++;
}

/* ---- attributes ----------------------------------------------------------------------------- */

void fs_file_stat(uint64_t ino, const struct stat *b, struct stat *st)
{
	*st = *b;
	st->st_ino = ino;
	st->st_mode = S_IFREG | (b->st_mode & 07777);
	st->st_nlink = 1;
	st->st_dev = 0;
	st->st_rdev = 0;
}

/* A receipt directory or the inbox, with an mtime that moves with every change made here. */
int fs_dir_stat(struct fs_inbox *ib, int dir, struct stat *st)
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
	st->st_nlink = dir == D_INBOX ? 5 : 2; /* inbox/: .accepted/, .rejected/, artifacts/ */
	st->st_dev = 0;
	return 0;
}

void fs_entry_param(struct fuse_entry_param *e, const struct stat *st, double entry_timeout,
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
 * travels along, and the notifier drops it when the file is decided (fs_forget_name; the
 * kernel orders that after the rename, under the directory's lock). Everything else: 0.
 */
double fs_name_timeout(int dir, const char *name)
{
	return fs_takes_files(dir) && fs_inbox_name_is_temp(name) ? NAME_TIMEOUT : 0;
}

/* The same for an entry's attributes (e->lock held; ib->lock not). */
double fs_attr_timeout(struct fs_inbox *ib, struct ient *e)
{
	pthread_mutex_lock(&ib->lock);
	double t = e->state == LIVE ? fs_name_timeout(e->dir, e->name) : 0;
	pthread_mutex_unlock(&ib->lock);
	return t;
}

void fs_inbox_root_entry(struct fs *fs, struct fuse_entry_param *e)
{
	struct stat st;
	if (fs_dir_stat(fs->inbox, D_INBOX, &st) < 0) {
		memset(&st, 0, sizeof(st));
		st.st_ino = INO_DIR(D_INBOX);
		st.st_mode = S_IFDIR | 0755;
		st.st_nlink = 4;
	}
	/* the name never changes meaning: cache it as long as the tree's; the attributes not at all */
	fs_entry_param(e, &st, fs->timeout, 0);
}

/* ---- backing files -------------------------------------------------------------------------- */

/* The entry's descriptor, opened by name when there is none (under e->lock). */
int fs_entry_fd(struct fs_inbox *ib, struct ient *e)
{
	if (e->fd >= 0)
		return e->fd;
	int r = -ESTALE;
	pthread_mutex_lock(&ib->lock);
	if (e->state == LIVE) {
		int flags = (fs_takes_files(e->dir) ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
		e->fd = openat(ib->d[e->dir].fd, e->name, flags);
		r = e->fd >= 0 ? e->fd : errno == ENOENT ? -ESTALE : -errno;
	}
	pthread_mutex_unlock(&ib->lock);
	return r;
}

void fs_entry_close(struct ient *e)
{
	if (e->fd >= 0 && e->state != GONE) { /* a GONE file cannot be opened again: keep it */
		close(e->fd);
		e->fd = -1;
	}
}

/* rename without replacing; link + unlink where the file system has no RENAME_NOREPLACE */
int fs_rename_noreplace(int olddir, const char *old, int newdir, const char *new)
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
 * (fs_keep_spare) rather than unlinked, and its inode is rewritten as the next receipt. Creating a
 * file and deleting another per decision costs more than it seems: without a journal, ext4 scans
 * past every inode deleted in the last seconds at each creation (a quarter of the daemon's time
 * under rsync, before spares).
 */
int fs_write_tmp(struct fs_inbox *ib, int dir, const struct kx_buf *data, char tmp[64], int *ret_dir)
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

/* An accepted file leaves its directory: a manifest's kept as a spare, or removed (ib->lock held). */
int fs_keep_spare(struct fs_inbox *ib, int dir, const char *name)
{
	if (dir == D_INBOX && ib->nspares < SPARES_MAX && (ib->spares || (ib->spares = malloc(SPARES_MAX * sizeof(*ib->spares))))) {
		char *spare = ib->spares[ib->nspares];
		snprintf(spare, 64, TMP_PREFIX "%d-%lu.tmp", (int)getpid(), atomic_fetch_add(&ib->tmp_counter, 1));
		if (fs_rename_noreplace(ib->d[D_INBOX].fd, name, ib->d[D_ACCEPTED].fd, spare) == 0) {
			ib->nspares++;
			return 0;
		}
	}
	return unlinkat(ib->d[dir].fd, name, 0) < 0 ? -errno : 0;
}

/* ---- the syncer ----------------------------------------------------------------------------- */

/*
 * One syncfs per batch: the receipts, the moves and unlinks in the inbox, and the bytes of files
 * being written, all at once. syncfs rather than an fsync per receipt and directory: those cost a
 * disk round trip each (two per decision, more than the decision itself) and would order nothing
 * the commit's own WAL sync has not already made safe.
 */
void *fs_syncer_main(void *arg)
{
	pthread_setname_np(pthread_self(), "kx-syncer"); /* for top -H, perf */
	struct fs_inbox *ib = arg;
	pthread_mutex_lock(&ib->sync_lock);
	for (;;) {
		while (!ib->sync_pending && !ib->sync_stop)
			pthread_cond_wait(&ib->sync_wake, &ib->sync_lock);
		if (!ib->sync_pending)
			break; /* stopping, nothing left to sync */
		if (!ib->sync_stop) {
			/* let the batch fill: decisions arriving meanwhile share this sync */
			struct timespec until = fs_deadline_ms(SYNC_DELAY_MS);
			while (!ib->sync_stop && pthread_cond_timedwait(&ib->sync_wake, &ib->sync_lock, &until) == 0)
				;
		}
		ib->sync_pending = false;
		pthread_mutex_unlock(&ib->sync_lock);
		if (syncfs(ib->d[D_INBOX].fd) < 0)
			fs_log_error("cannot sync the inbox's file system: %s", strerror(errno));
		pthread_mutex_lock(&ib->sync_lock);
	}
	pthread_mutex_unlock(&ib->sync_lock);
	return NULL;
}

/* A receipt or a move to make durable with the next batch (at once where there is no syncer). */
void fs_sync_soon(struct fs_inbox *ib)
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
