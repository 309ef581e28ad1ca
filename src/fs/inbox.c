// SPDX-License-Identifier: MIT
/*
 * The inbox (SPEC §4, docs/inbox.md): a passthrough onto the real directory STORE/inbox — so a
 * file being written, and every receipt, survives a crash of the daemon and a remount — plus the
 * decision. A file is decided when a process that wrote it closes it under a final name (FLUSH),
 * or after it is renamed to a final name (RENAME; rsync and editors write a temporary name first:
 * the rename answers at once and the decider thread takes it, see decide.c): the whole
 * file goes through kx_ingest_bytes with the WAL synced, then
 *
 *   accepted   .accepted/<name> (kx_receipt_accepted) is written — temporary name, then rename —
 *              inbox/<name> leaves (kept as a spare for a later receipt), the tree is told
 *              (fs_changed); FLUSH answers 0;
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
 * thread. Temporary names, and names found absent, are cached for NAME_TIMEOUT (fs_name_timeout()):
 * they change only through the kernel — rsync's 19 requests per file drop to 10.
 * Directory listings are cached by the kernel (no OPENDIR, see ops.c) and checked against the
 * directory's mtime; every change made here also moves the mtime this daemon reports, by at least
 * a nanosecond, so a listing is never served from before a change on a coarse clock.
 *
 * Locks: ib->lock (the table, names, states, the backing directories' namespace — held only for
 * system calls that do not block on I/O) nests inside an entry's lock (its descriptor, its write
 * state and its decision, which may take a synced commit). No FUSE notification is sent from
 * here: fs_changed and fs_forget_name queue work for the notifier thread.
 *
 * What never reaches us: names with '/', ".", ".." (the kernel's path walk resolves them within
 * the mount); STORE/inbox is not followed through symlinks (O_NOFOLLOW everywhere), and entries
 * of the backing directory that are not regular files (or the two receipt directories) are hidden.
 *
 * The files: this one sets the inbox up and answers its FUSE operations; decide.c decides (the
 * decision and the decider thread); inbox-table.c holds the table, the attributes, the backing
 * files and the syncer. Each calls only those after it; inbox-private.h is what they share.
 */
#include "inbox-private.h"

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

static const char *const dir_names[D__N] = { ".", ".accepted", ".rejected", "artifacts" };

static struct fs_inbox *ib_of(fuse_req_t req)
{
	return ((struct fs *)fuse_req_userdata(req))->inbox;
}

static int dir_of_ino(uint64_t ino)
{
	uint64_t i = ino & ~KX_INO_INBOX;
	return ino >= KX_INO_INBOX && i < D__N ? (int)i : -1;
}

/* The directory inbox/NAME is (.accepted, .rejected, artifacts), or -1. */
static int subdir_of(int dir, const char *name)
{
	for (int i = D_ACCEPTED; dir == D_INBOX && i < D__N; i++)
		if (strcmp(name, dir_names[i]) == 0)
			return i;
	return -1;
}

static bool is_receipt_dir_name(int dir, const char *name)
{
	return subdir_of(dir, name) >= 0;
}

static bool hidden(int dir, const char *name)
{
	return !fs_takes_files(dir) && strncmp(name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0;
}

/*
 * A GHOST written to again with O_TRUNC (or at offset 0) by the process that still sees it: a new
 * file under its name, if the name is free (e->lock held). 0 or -ESTALE.
 */
static int resurrect(struct fs_inbox *ib, struct ient *e)
{
	int r = -ESTALE;
	pthread_mutex_lock(&ib->lock);
	if (e->state == GHOST && !fs_find_name(ib, e->dir, e->name)) {
		int fd = openat(ib->d[e->dir].fd, e->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				(e->st.st_mode & 0777) | 0600);
		if (fd >= 0) {
			fs_ghost_remove(ib, e);
			e->state = LIVE;
			fs_name_hash(ib, e);
			fs_inbox_changed(ib, e->dir);
			/* back behind the kernel's back: it may hold the name as absent */
			fs_forget_name(ib->fs, INO_DIR(e->dir), e->name);
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

int fs_inbox_open(struct fs *fs, const char *store_path, char **ret_err)
{
	struct fs_inbox *ib = calloc(1, sizeof(*ib));
	char path[4096];
	int r = 0;
	if (!ib)
		return -ENOMEM;
	for (int i = 0; i < D__N; i++)
		ib->d[i].fd = -1;
	pthread_mutex_init(&ib->lock, NULL);
	pthread_mutex_init(&ib->sync_lock, NULL);
	fs_cond_init_monotonic(&ib->sync_wake);
	fs_cond_init_monotonic(&ib->queue_wake);
	fs_cond_init_monotonic(&ib->queue_done);
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
		r = -pthread_create(&ib->syncer, NULL, fs_syncer_main, ib);
		ib->syncer_started = r == 0;
	}
	if (r < 0) {
		if (ret_err && asprintf(ret_err, "cannot set up the inbox '%s': %s", path, strerror(-r)) < 0)
			*ret_err = NULL;
		fs->inbox = ib;
		fs_inbox_close(fs);
		return r;
	}
	fs->inbox = ib;
	return 0;
}

void fs_inbox_close(struct fs *fs)
{
	struct fs_inbox *ib = fs->inbox;
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
			fs_ient_free(e);
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
		fs_log_error("%s of inbox/%s failed: %s", op, name ? name : "?", strerror(-r));
	fuse_reply_err(req, -r);
}

void fs_inbox_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs_inbox *ib = ib_of(req);
	struct fuse_entry_param ep;
	struct stat st = { 0 };
	int dir = dir_of_ino(parent);
	if (dir < 0) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (!fs_takes_files(dir))
		fs_inbox_drain(ib, true, true); /* the receipt of a file renamed before is there, its name gone */
	if (is_receipt_dir_name(dir, name)) {
		int sub = subdir_of(dir, name);
		int r = fs_dir_stat(ib, sub, &st);
		if (r < 0) {
			reply_err(req, "lookup", name, r);
			return;
		}
		fs_entry_param(&ep, &st, ib->fs->timeout, 0);
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
		else if (!(e = fs_entry_for(ib, dir, name)))
			r = -ENOMEM;
		else
			fs_file_stat(e->ino, &b, &st);
		timeout = fs_name_timeout(dir, name);
	} else if (errno == ENOENT) {
		struct ient *stale = fs_find_name(ib, dir, name);
		if (stale)
			fs_set_gone(ib, stale); /* removed behind our back */
		if ((e = fs_ghost_for(ib, dir, name, fuse_req_ctx(req)->pid)))
			st = e->st;
		else
			r = -ENOENT;
		/*
		 * A name of the inbox appears only through the kernel (create, rename), which turns its
		 * cached absence into an entry — unless it is the name of a ghost, which its decider must
		 * still find: only such a name is not cached absent.
		 */
		if (r == -ENOENT && fs_takes_files(dir) && !fs_ghost_named(ib, dir, name))
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
	fs_entry_param(&ep, &st, timeout, timeout);
	fuse_reply_entry(req, &ep);
}

void fs_inbox_forget(struct fs *fs, fuse_ino_t ino, uint64_t nlookup)
{
	struct fs_inbox *ib = fs->inbox;
	if (!ib || dir_of_ino(ino) >= 0)
		return;
	pthread_mutex_lock(&ib->lock);
	struct ient *e = fs_find_ino(ib, ino);
	if (e) {
		e->nlookup = e->nlookup > nlookup ? e->nlookup - nlookup : 0;
		fs_maybe_drop(ib, e);
	}
	pthread_mutex_unlock(&ib->lock);
}

/* Attributes of a file entry (e->lock held). */
static int entry_stat(struct fs_inbox *ib, struct ient *e, struct stat *st)
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
	fs_file_stat(e->ino, &b, st);
	if (e->state == GONE)
		st->st_nlink = 0;
	return 0;
}

void fs_inbox_getattr(fuse_req_t req, fuse_ino_t ino)
{
	struct fs_inbox *ib = ib_of(req);
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
		fs_inbox_drain(ib, false, true);
		r = fs_dir_stat(ib, dir, &st);
	} else {
		struct ient *e = fs_inbox_get(ib, ino);
		if (!e) {
			fuse_reply_err(req, ESTALE);
			return;
		}
		pthread_mutex_lock(&e->lock);
		r = entry_stat(ib, e, &st);
		timeout = fs_attr_timeout(ib, e);
		pthread_mutex_unlock(&e->lock);
		fs_inbox_put(ib, e);
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

void fs_inbox_setattr(fuse_req_t req, fuse_ino_t ino, const struct stat *attr, int to_set)
{
	struct fs_inbox *ib = ib_of(req);
	struct fs *fs = ib->fs;
	struct stat st;
	int dir = dir_of_ino(ino), r;
	if (dir >= 0) {
		/* the directories themselves: `rsync -a dir/ mnt/inbox/` sets the inbox's mode and times */
		fs_inbox_drain(ib, false, false);
		r = (to_set & FUSE_SET_ATTR_SIZE) ? -EISDIR : set_meta(ib->d[dir].fd, attr, to_set, 0700);
		if (r == 0) {
			pthread_mutex_lock(&ib->lock);
			ib->d[dir].reported_changes = ib->d[dir].changes; /* report the times just set */
			ib->d[dir].reported = (struct timespec){ 0 };
			pthread_mutex_unlock(&ib->lock);
			r = fs_dir_stat(ib, dir, &st);
		}
		if (r < 0)
			reply_err(req, "setattr", dir_names[dir], r);
		else
			fuse_reply_attr(req, &st, 0);
		return;
	}
	struct ient *e = fs_inbox_get(ib, ino);
	if (!e) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	pthread_mutex_lock(&e->lock);
	r = 0;
	if ((to_set & FUSE_SET_ATTR_SIZE) && !fs_takes_files(e->dir))
		r = -EPERM; /* receipts and rejected files are records: byte-exact */
	else if ((to_set & FUSE_SET_ATTR_SIZE) && (uint64_t)attr->st_size > fs_max_bytes(fs, e->dir))
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
		int fd = fs_entry_fd(ib, e);
		r = fd < 0 ? fd : set_meta(fd, attr, to_set, fs_takes_files(e->dir) ? 0600 : 0400);
		if (r == 0 && (to_set & FUSE_SET_ATTR_SIZE) && ftruncate(fd, attr->st_size) < 0)
			r = -errno;
		if (r == 0 && fs_takes_files(e->dir)) {
			/* any change counts as a write: `touch` + close decides a file left in the inbox */
			e->dirty = true;
			e->writer = fuse_req_ctx(req)->pid;
			if (to_set & FUSE_SET_ATTR_SIZE)
				e->too_big = false;
		}
		if (r == 0)
			r = entry_stat(ib, e, &st);
	}
	double timeout = fs_attr_timeout(ib, e);
	pthread_mutex_unlock(&e->lock);
	fs_inbox_put(ib, e);
	if (r < 0)
		reply_err(req, "setattr", NULL, r);
	else
		fuse_reply_attr(req, &st, timeout);
}

void fs_inbox_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off)
{
	struct fs_inbox *ib = ib_of(req);
	if (dir_of_ino(ino) >= 0) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	struct ient *e = fs_inbox_get(ib, ino);
	if (!e) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	char *buf = malloc(size ? size : 1);
	pthread_mutex_lock(&e->lock);
	int fd = e->state == GHOST ? -ESTALE : fs_entry_fd(ib, e);
	ssize_t n = fd < 0 ? fd : !buf ? -ENOMEM : pread(fd, buf, size, off);
	if (n < 0 && fd >= 0 && buf)
		n = -errno;
	pthread_mutex_unlock(&e->lock);
	fs_inbox_put(ib, e);
	if (n < 0)
		reply_err(req, "read", NULL, (int)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

void fs_inbox_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off)
{
	struct fs_inbox *ib = ib_of(req);
	struct fs *fs = ib->fs;
	if (dir_of_ino(ino) >= 0) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	struct ient *e = fs_inbox_get(ib, ino);
	if (!e) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	ssize_t r = 0;
	pthread_mutex_lock(&e->lock);
	if (!fs_takes_files(e->dir))
		r = -EACCES; /* receipts are written by the daemon only */
	else if (off < 0 || (uint64_t)off + size > fs_max_bytes(fs, e->dir)) {
		/* the size cap, as the bytes arrive: cp, dd, tee and Python all report EFBIG */
		e->too_big = true;
		e->dirty = true;
		e->writer = fuse_req_ctx(req)->pid;
		r = -EFBIG;
	} else if (e->state == GHOST)
		r = off == 0 ? resurrect(ib, e) : -ESTALE;
	if (r == 0) {
		int fd = fs_entry_fd(ib, e);
		r = fd < 0 ? fd : pwrite(fd, buf, size, off);
		if (r < 0 && fd >= 0)
			r = -errno;
		if (r >= 0) {
			e->dirty = true;
			e->writer = fuse_req_ctx(req)->pid;
		}
	}
	pthread_mutex_unlock(&e->lock);
	fs_inbox_put(ib, e);
	if (r < 0)
		reply_err(req, "write", NULL, (int)r);
	else
		fuse_reply_write(req, (size_t)r);
}

void fs_inbox_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi)
{
	struct fs_inbox *ib = ib_of(req);
	int dir = dir_of_ino(parent);
	int r = 0;
	if (dir < 0)
		r = -ENOTDIR;
	else if (!fs_takes_files(dir))
		r = -EACCES; /* .accepted/ and .rejected/ hold the daemon's records */
	else if (fs_inbox_name_check(name) < 0)
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
	else if (!(e = fs_entry_for(ib, dir, name)))
		r = -ENOMEM;
	if (r == 0) {
		e->refs++;
		e->nlookup++;
		fs_inbox_changed(ib, dir);
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
	fs_file_stat(e->ino, &b, &st);
	fs_inbox_put(ib, e);
	struct fuse_entry_param ep;
	double timeout = fs_name_timeout(dir, name);
	fs_entry_param(&ep, &st, timeout, timeout);
	fi->fh = 0; /* operations find the file by inode number, as for files opened without OPEN */
	fi->keep_cache = 0;
	fi->direct_io = 0;
	if (fuse_reply_create(req, &ep, fi) == -ENOENT)
		fs_inbox_forget(ib->fs, ep.ino, 1); /* the creator was interrupted: the kernel holds nothing */
}

void fs_inbox_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs_inbox *ib = ib_of(req);
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
		struct ient *e = fs_find_name(ib, dir, name);
		if (e)
			fs_set_gone(ib, e);
		fs_inbox_changed(ib, dir);
	}
	pthread_mutex_unlock(&ib->lock);
	if (r < 0)
		reply_err(req, "unlink", name, r);
	else
		fuse_reply_err(req, 0);
}

void fs_inbox_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	int dir = dir_of_ino(parent);
	if (dir < 0)
		fuse_reply_err(req, ENOTDIR);
	else if (is_receipt_dir_name(dir, name))
		fuse_reply_err(req, EPERM); /* the receipt directories and artifacts/ stay; their files may go */
	else
		fuse_reply_err(req, ENOTDIR); /* nothing else in the inbox is a directory */
}

void fs_inbox_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		     const char *newname, unsigned int flags)
{
	struct fs_inbox *ib = ib_of(req);
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
	else if (fs_inbox_name_check(newname) < 0)
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
	else if (!(e = fs_entry_for(ib, dir, name)))
		r = -ENOMEM;
	else
		e->refs++;
	pthread_mutex_unlock(&ib->lock);
	if (r < 0) {
		reply_err(req, "rename", name, r);
		return;
	}
	pthread_mutex_lock(&e->lock); /* no decision of this file in flight while it moves */
	bool final = fs_takes_files(dir) && !fs_inbox_name_is_temp(newname);
	/* marked first: a returned rename is decided even if the daemon is killed (see the decider) */
	bool queue = final && ib->decider_started && fs_mark_queued(ib, e) == 0;
	pthread_mutex_lock(&ib->lock);
	if (e->state != LIVE || strcmp(e->name, name) != 0)
		r = -ENOENT; /* decided or moved meanwhile */
	else if (flags & RENAME_NOREPLACE)
		r = fs_rename_noreplace(ib->d[dir].fd, name, ib->d[dir].fd, newname);
	else if (renameat(ib->d[dir].fd, name, ib->d[dir].fd, newname) < 0)
		r = -errno;
	char *copy = r == 0 ? strdup(newname) : NULL;
	if (r == 0 && !copy) {
		/* renamed on disk, not in the table: forget the entry rather than hold a wrong name */
		fs_set_gone(ib, e);
		r = -ENOMEM;
	} else if (r == 0) {
		struct ient *target = fs_find_name(ib, dir, newname);
		if (target && target != e)
			fs_set_gone(ib, target); /* replaced */
		fs_name_unhash(ib, e);
		free(e->name);
		e->name = copy;
		fs_name_hash(ib, e);
		fs_inbox_changed(ib, dir);
		if (queue)
			fs_enqueue_locked(ib, e, fuse_req_ctx(req)->pid);
	}
	pthread_mutex_unlock(&ib->lock);
	if (r < 0 && queue)
		fs_unmark(e);
	/*
	 * Arriving at a final name decides a file — by the decider, or here where the file system
	 * under the store keeps no extended attributes. A rejected file still renames fine (see
	 * .rejected/).
	 */
	uint64_t ticket = 0;
	if (r == 0 && final && !queue) {
		int d = fs_inbox_decide(ib, e, fuse_req_ctx(req)->pid, &ticket);
		r = d == -EINVAL ? 0 : d;
	}
	pthread_mutex_unlock(&e->lock);
	pthread_mutex_lock(&ib->lock);
	fs_maybe_drop(ib, e);
	fs_unref_locked(e);
	pthread_mutex_unlock(&ib->lock);
	if (r < 0)
		reply_err(req, "rename", name, r);
	else
		fs_reply_after(ib->fs, ticket, req, 0);
}

/* Listings come from the backing directory; offsets are its own telldir cookies. */
void fs_inbox_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus)
{
	struct fs_inbox *ib = ib_of(req);
	int dir = dir_of_ino(ino);
	if (dir < 0) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (!off)
		fs_inbox_drain(ib, !fs_takes_files(dir), false); /* a listing from the start shows what was renamed before */
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
			st.st_ino = INO_DIR(subdir_of(dir, n));
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
			struct ient *e = fs_find_name(ib, dir, n);
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

void fs_inbox_flush(fuse_req_t req, fuse_ino_t ino)
{
	struct fs_inbox *ib = ib_of(req);
	if (dir_of_ino(ino) >= 0) {
		fuse_reply_err(req, 0);
		return;
	}
	struct ient *e = fs_inbox_get(ib, ino);
	if (!e) {
		fuse_reply_err(req, 0);
		return;
	}
	pid_t pid = fuse_req_ctx(req)->pid;
	int r = 0;
	pthread_mutex_lock(&e->lock);
	bool final = false;
	pthread_mutex_lock(&ib->lock);
	if (e->state == LIVE && fs_takes_files(e->dir))
		final = !fs_inbox_name_is_temp(e->name);
	pthread_mutex_unlock(&ib->lock);
	/*
	 * Decided by a close of the process that wrote it: a reader closing its own descriptor (or
	 * `tail -f`) decides nothing. Thread ids first, the process only when they differ. And not
	 * while empty: a shell's `cmd > f` and dd's of= open the file, duplicate the descriptor and
	 * close the original before the first byte is written — that close is no end of the file.
	 */
	struct stat st;
	uint64_t ticket = 0;
	if (final && (e->dirty || e->too_big) && fs_same_process(pid, e->writer) &&
	    (e->too_big || entry_stat(ib, e, &st) < 0 || st.st_size > 0))
		r = fs_inbox_decide(ib, e, pid, &ticket);
	else
		fs_entry_close(e); /* opened again on the next write: no descriptor per idle file */
	pthread_mutex_unlock(&e->lock);
	fs_inbox_put(ib, e);
	/* EINVAL: refused, so close() fails — cp, install, tee, dd and Python report it */
	fs_reply_after(ib->fs, ticket, req, -r);
}

void fs_inbox_fsync(fuse_req_t req, fuse_ino_t ino, int datasync)
{
	struct fs_inbox *ib = ib_of(req);
	int dir = dir_of_ino(ino), r = 0;
	fs_inbox_drain(ib, false, false);
	if (dir >= 0) {
		r = fsync(ib->d[dir].fd) < 0 ? -errno : 0;
	} else {
		struct ient *e = fs_inbox_get(ib, ino);
		if (!e) {
			fuse_reply_err(req, ESTALE);
			return;
		}
		pthread_mutex_lock(&e->lock);
		if (e->state != GHOST) {
			int fd = fs_entry_fd(ib, e);
			r = fd < 0 ? fd : (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? -errno : 0;
		}
		pthread_mutex_unlock(&e->lock);
		fs_inbox_put(ib, e);
	}
	if (r < 0)
		reply_err(req, "fsync", NULL, r);
	else
		fuse_reply_err(req, 0);
}

void fs_inbox_release(fuse_req_t req, fuse_ino_t ino)
{
	struct fs_inbox *ib = ib_of(req);
	struct ient *e = dir_of_ino(ino) < 0 ? fs_inbox_get(ib, ino) : NULL;
	if (e) {
		pthread_mutex_lock(&e->lock);
		fs_entry_close(e);
		pthread_mutex_unlock(&e->lock);
		fs_inbox_put(ib, e);
	}
	fuse_reply_err(req, 0);
}

void fs_inbox_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct fs_inbox *ib = ib_of(req);
	struct statvfs sv;
	if (fstatvfs(ib->d[D_INBOX].fd, &sv) < 0) {
		reply_err(req, "statfs", NULL, -errno);
		return;
	}
	sv.f_namemax = KX_INBOX_NAME_MAX;
	fuse_reply_statfs(req, &sv);
}
