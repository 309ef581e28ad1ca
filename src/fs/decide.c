// SPDX-License-Identifier: MIT
/*
 * The decision on a file of the inbox (SPEC §4, docs/inbox.md) and the decider thread: the whole
 * file read and ingested, its receipt filed and the file let out of the inbox — at once for the
 * FLUSH that closes it (fs_inbox_decide), or off the reply of the RENAME that gave it a final name,
 * queued and taken in batches that share one WAL sync and one notifier round (the decider). It
 * calls down into inbox-table.c only; the operations of inbox.c call it. The order that makes a
 * decision crash safe, and the lock nesting it keeps: the opening comment of inbox.c.
 */
#include "inbox-private.h"

#include "kx/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

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
static int file_decision(struct fs_inbox *ib, struct ient *e, const char *name, pid_t pid, int dir,
			 const struct kx_buf *receipt)
{
	bool rejected = dir == D_REJECTED;
	const char *suffix = rejected ? ".error" : "";
	char tmp[64], base[KX_INBOX_NAME_MAX + 1], rname[KX_INBOX_NAME_MAX + 8];
	int tmpdir;
	int r = fs_write_tmp(ib, dir, receipt, tmp, &tmpdir);
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
		if ((r = fs_rename_noreplace(ib->d[tmpdir].fd, tmp, dfd, rname)) != -EEXIST)
			break;
	}
	if (r == 0) {
		fs_inbox_changed(ib, dir);
		if (e->state == LIVE) {
			/* the name still holds this file: every rename and unlink of it went through ib->lock */
			int m = rejected ? fs_rename_noreplace(ib->d[e->dir].fd, e->name, dfd, base)
					 : fs_keep_spare(ib, e->dir, e->name);
			if (m < 0 && rejected)
				fs_log_error("cannot move rejected inbox/%s to .rejected/%s: %s", e->name, base,
					     strerror(-m));
			else if (m < 0)
				fs_log_error("cannot remove accepted inbox/%s: %s", e->name, strerror(-m));
			fs_inbox_changed(ib, e->dir);
			if (have_st)
				fs_file_stat(e->ino, &st, &e->st);
			fs_set_ghost(ib, e, pid);
		}
	} else {
		unlinkat(ib->d[tmpdir].fd, tmp, 0);
	}
	pthread_mutex_unlock(&ib->lock);
	if (r == 0)
		fs_sync_soon(ib);
	return r;
}

/* Take the decider's mark off a file (e->lock held); a system call only where there is one. */
void fs_unmark(struct ient *e)
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
	bool artifact; /* a file of inbox/artifacts/ (SPEC §9): art, not res */
	struct kx_artifact_result art;
	struct kx_problems p;
	struct kx_buf receipt;
};

/* What a writer is told when nothing could be decided: a full disk as such (the writer can act on
 * it), any other failure as EIO; the file stays either way. */
static int undecided(int err)
{
	return err == -ENOSPC ? -ENOSPC : -EIO;
}

/*
 * The first half for a file of inbox/artifacts/ (SPEC §9): its bytes streamed into the store
 * from its descriptor, a chunk at a time, and committed unsynced; the runs announcing them, and
 * digests/, shown.
 */
static void decide_artifact(struct fs_inbox *ib, struct ient *e, int fd, struct decision *d)
{
	struct fs *fs = ib->fs;
	struct kx_artifact_opts o = { .max_bytes = fs->max_artifact, .name = d->name };
	d->artifact = true;
	int r = fd < 0 ? fd : e->too_big ? -EFBIG : kx_ingest_artifact_fd(fs->store, fd, "", &o, &d->art, &d->p);
	if (r == -EFBIG) { /* a write past the cap was refused already */
		kx_problems_add(&d->p, 0, 0, "", "size", "file is over the limit of %" PRIu64 " bytes for an artifact "
				"(-o max_artifact)", fs->max_artifact);
		r = -EINVAL;
	}
	if (r == 0) {
		if (d->art.added)
			d->ticket = fs_changed(fs, NULL, 0, d->art.generation);
		d->w = kx_receipt_artifact(d->name, &d->art, &d->receipt);
	} else if (r == -EINVAL) {
		d->w = kx_receipt_rejected(d->name, &d->p, &d->receipt);
	} else {
		fs_log_error("cannot store inbox/artifacts/%s: %s (left in the inbox)", d->name, strerror(-r));
		r = undecided(r);
	}
	d->r = r;
}

/* The first half; false when there is nothing to decide (d->r says why: 0, or -EIO). */
static bool decide_start(struct fs_inbox *ib, struct ient *e, pid_t pid, struct decision *d)
{
	struct fs *fs = ib->fs;
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
	int fd = fs_entry_fd(ib, e);
	if (e->dir == D_ARTIFACTS) {
		decide_artifact(ib, e, fd, d);
		return true;
	}
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
			if (d->res.items[i].outcome != KX_INGEST_PRESENT && !d->res.items[i].attestation)
				runs[n++] = d->res.items[i].run;
		/* a signature or an attestation added to a stored run (SPEC §10, §8) changes its group:
		 * told too, with no run */
		if (d->res.added || d->res.aliases || d->res.signatures || d->res.attestations_added)
			d->ticket = fs_changed(fs, runs, runs ? n : 0, d->res.generation);
		free(runs);
		d->w = kx_receipt_accepted(fs->tree, d->name, &d->res, &d->receipt);
	} else if (r == -EINVAL) {
		d->w = kx_receipt_rejected(d->name, &d->p, &d->receipt);
	} else {
		fs_log_error("cannot ingest inbox/%s: %s (left in the inbox)", d->name, strerror(-r));
		r = undecided(r);
	}
	d->r = r;
	return true;
}

/*
 * The second half. `synced`: 0 when the store's log was synced after this decision's commit, or
 * the sync's error (the file stays). Returns the decision: 0, -EINVAL, or -EIO or -ENOSPC when
 * nothing could be decided.
 */
static int decide_finish(struct fs_inbox *ib, struct ient *e, struct decision *d, int synced)
{
	struct fs *fs = ib->fs;
	int r = d->r, w = d->w;
	if (r == 0 && synced < 0) {
		fs_log_error("cannot sync the store's log after accepting inbox/%s: %s (left in the inbox)", d->name,
			     strerror(-synced));
		r = undecided(synced);
	} else if (r == 0) {
		if (w >= 0)
			w = file_decision(ib, e, d->name, d->pid, D_ACCEPTED, &d->receipt);
		if (w < 0) {
			/* committed, but no receipt: the file stays, and deciding it again says "present" */
			fs_log_error("accepted inbox/%s but cannot write its receipt: %s", d->name, strerror(-w));
			r = undecided(w);
		}
		if (!d->artifact)
			fs_log_debug(fs, "accepted inbox/%s: %zu added, %zu already present", d->name, d->res.added,
				     d->res.present);
	} else if (r == -EINVAL) {
		if (w >= 0)
			w = file_decision(ib, e, d->name, d->pid, D_REJECTED, &d->receipt);
		if (w < 0) {
			fs_log_error("rejected inbox/%s but cannot file it: %s", d->name, strerror(-w));
			r = undecided(w);
		}
		fs_log_debug(fs, "rejected inbox/%s: %zu problem%s", d->name, d->p.len, d->p.len == 1 ? "" : "s");
	}
	if (r == 0 || r == -EINVAL) {
		fs_unmark(e); /* the file, in .rejected/ or a spare for the next receipt, keeps no mark */
		if (e->fd >= 0) {
			close(e->fd);
			e->fd = -1;
		}
		e->dirty = false;
		e->too_big = false;
		fs_forget_name(fs, INO_DIR(e->dir), d->name);
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
 * (fs_reply_after), so that close() returns once the run shows.
 */
int fs_inbox_decide(struct fs_inbox *ib, struct ient *e, pid_t pid, uint64_t *ret_ticket)
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
 * and decides them first (fs_inbox_start), while a final name written but never renamed or
 * closed — its writer died — stays undecided, as before.
 *
 * What a user sees is ordered by fs_inbox_drain(): the inbox's directories (their attributes,
 * listings and receipts) and an fsync answer only once every file renamed before was decided and
 * shows in the tree — rsync's last step is to stat the inbox (and set its times where they
 * differ), so `rsync -a … mnt/inbox/` returns with its files decided.
 */

/* Queue a LIVE entry (ib->lock held). */
void fs_enqueue_locked(struct fs_inbox *ib, struct ient *e, pid_t pid)
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
void fs_inbox_drain(struct fs_inbox *ib, bool forgotten, bool bounded)
{
	struct timespec until = fs_deadline_ms(DRAIN_WAIT_MS);
	pthread_mutex_lock(&ib->lock);
	uint64_t target = ib->nqueued;
	if (ib->ndecided < target && ib->decider_started) {
		ib->draining++;
		pthread_cond_signal(&ib->queue_wake); /* no more waiting for a fuller batch */
		fs_loop_hand_off();
		while (ib->ndecided < target && ib->decider_started)
			if (bounded ? pthread_cond_timedwait(&ib->queue_done, &ib->lock, &until) == ETIMEDOUT
				    : pthread_cond_wait(&ib->queue_done, &ib->lock) != 0)
				break;
		ib->draining--;
	}
	pthread_mutex_unlock(&ib->lock);
	if (forgotten)
		fs_wait_forgotten(ib->fs, FORGET_WAIT_MS);
}

/* Decide a batch taken from the queue: every commit, one sync, every filing, one round. */
static void decide_batch(struct fs_inbox *ib, struct queued *batch)
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
		bool final = e->state == LIVE && fs_takes_files(e->dir) && !fs_inbox_name_is_temp(e->name);
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
	fs_wait_round(ib->fs, ticket);
	pthread_mutex_lock(&ib->lock);
	for (struct queued *q = batch, *next; q; q = next) {
		next = q->next;
		fs_maybe_drop(ib, q->e);
		fs_unref_locked(q->e);
		free(q);
	}
	pthread_mutex_unlock(&ib->lock);
}

static void *decider_main(void *arg)
{
	pthread_setname_np(pthread_self(), "kx-decider"); /* for top -H, perf */
	struct fs_inbox *ib = arg;
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
		struct timespec until = fs_deadline_ms(DECIDE_WAIT_MS);
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
int fs_mark_queued(struct fs_inbox *ib, struct ient *e)
{
	int fd = fs_entry_fd(ib, e);
	if (fd < 0)
		return fd;
	if (fsetxattr(fd, QUEUED_XATTR, "", 0, 0) < 0)
		return -errno;
	e->marked = true;
	return 0;
}

/* Queue the files of `where` a killed daemon left marked (before the decider starts: no lock
 * needed); how many. */
static size_t queue_marked_in(struct fs_inbox *ib, int where)
{
	int fd = openat(ib->d[where].fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(dir))) {
		if ((de->d_type != DT_REG && de->d_type != DT_UNKNOWN) || fs_inbox_name_is_temp(de->d_name) ||
		    fs_inbox_name_check(de->d_name) < 0)
			continue;
		int f = openat(ib->d[where].fd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		struct stat st;
		bool marked = f >= 0 && fstat(f, &st) == 0 && S_ISREG(st.st_mode) &&
			      fgetxattr(f, QUEUED_XATTR, NULL, 0) >= 0;
		if (f >= 0)
			close(f);
		struct ient *e = marked ? fs_entry_for(ib, where, de->d_name) : NULL;
		if (e) {
			e->marked = true;
			fs_enqueue_locked(ib, e, 0);
			n++;
		}
	}
	closedir(dir);
	return n;
}

static void queue_marked(struct fs_inbox *ib)
{
	size_t n = queue_marked_in(ib, D_INBOX) + queue_marked_in(ib, D_ARTIFACTS);
	if (n)
		fs_log_debug(ib->fs, "deciding %zu file%s renamed into the inbox before the daemon stopped", n,
			     n == 1 ? "" : "s");
}

int fs_inbox_start(struct fs *fs)
{
	struct fs_inbox *ib = fs->inbox;
	if (!ib)
		return 0;
	queue_marked(ib);
	int r = pthread_create(&ib->decider, NULL, decider_main, ib);
	ib->decider_started = r == 0;
	return -r;
}

void fs_inbox_stop(struct fs *fs)
{
	struct fs_inbox *ib = fs->inbox;
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
