/* SPDX-License-Identifier: MIT */
/*
 * What the files of the inbox share, and no other file includes: the table's entry, the inbox's
 * state, the constants, and the functions that cross files. How the inbox works — its crash
 * safety by ordering and its lock nesting (ib->lock inside an entry's lock) — is the opening
 * comment of inbox.c. The files call down, never up:
 *
 *   inbox.c        set-up and the FUSE operations               -> decide.c, inbox-table.c
 *   decide.c       the decision and the decider thread          -> inbox-table.c
 *   inbox-table.c  the table, attributes, backing files, syncer -> (neither)
 */
#ifndef KX_FS_INBOX_PRIVATE_H
#define KX_FS_INBOX_PRIVATE_H

#include "inbox.h"

#include "kx/list.h"

#include <stdatomic.h>
#include <sys/stat.h>

#define GHOST_SECONDS 5
#define GHOSTS_MAX 256
#define BUCKETS 4096
#define TMP_PREFIX ".kx-"   /* receipts being written and spares; hidden, and removed at mount */
#define SYNC_DELAY_MS 50    /* receipts wait at most this long for the batch that syncs them */
#define SPARES_MAX 64       /* accepted files kept to write receipts into (see fs_write_tmp) */
#define DECIDE_BATCH 64     /* files the decider takes at once: one WAL sync and one round for all */
#define DECIDE_WAIT_MS 2    /* how long a batch waits for more files, unless someone waits for it */
#define DRAIN_WAIT_MS 10000 /* the bound of a wait for the decider, where one is needed: fs_inbox_drain */
#define FORGET_WAIT_MS 100  /* the same for the kernel to drop decided names */
#define QUEUED_XATTR "user.kindex.queued" /* on a renamed file until decided: see the decider */
#define NAME_TIMEOUT 10.0   /* seconds the kernel may cache a temporary name or an absent one */

/* inbox/ and its artifacts/ (SPEC §9) take files; .accepted/ and .rejected/ hold the daemon's
 * records */
enum { D_INBOX, D_ACCEPTED, D_REJECTED, D_ARTIFACTS, D__N };

/* Whether files are written, and decided, in directory `dir`: inbox/ (manifests) and
 * inbox/artifacts/ (artifacts' bytes). */
static inline bool fs_takes_files(int dir)
{
	return dir == D_INBOX || dir == D_ARTIFACTS;
}

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
	struct kx_link ghost; /* fs_inbox.ghosts */
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

struct fs_inbox {
	struct fs *fs;
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
	uint64_t nqueued, ndecided; /* queued and decided since the mount: fs_inbox_drain compares */
	unsigned draining;          /* threads in fs_inbox_drain: the decider does not wait for more */
	bool decider_stop, decider_started;
};

struct queued {
	struct queued *next;
	struct ient *e; /* with a reference */
	pid_t pid;      /* the thread that renamed it: it may still find its ghost */
};

/* A file's size cap in directory `dir`: -o max_manifest=, or for an artifact -o max_artifact=. */
static inline uint64_t fs_max_bytes(const struct fs *fs, int dir)
{
	return dir == D_ARTIFACTS ? fs->max_artifact : fs->max_manifest;
}

/* ---- inbox-table.c -------------------------------------------------------------------------- */

/* Whether two thread ids are of one process (/proc asked only where the ids differ). */
bool fs_same_process(pid_t a, pid_t b);

/* The table's functions below want ib->lock held, but for fs_inbox_get and fs_inbox_put. */
/* The entry of an inode number, or NULL. */
struct ient *fs_find_ino(struct fs_inbox *ib, uint64_t ino);
/* The LIVE entry of a name, or NULL. */
struct ient *fs_find_name(struct fs_inbox *ib, int dir, const char *name);
/* Take a LIVE entry out of the name hash (nothing for one that is not LIVE). */
void fs_name_unhash(struct fs_inbox *ib, struct ient *e);
/* Put an entry into the name hash under e->name. */
void fs_name_hash(struct fs_inbox *ib, struct ient *e);
/* Free an entry, its descriptor and name (its references not counted: at close only). */
void fs_ient_free(struct ient *e);
/* Drop a reference; the last frees the entry. */
void fs_unref_locked(struct ient *e);
/* Take an entry off the list of ghosts, if it is on it. */
void fs_ghost_remove(struct fs_inbox *ib, struct ient *e);
/* Forget an entry the kernel no longer holds (and that is no ghost to be found by name). */
void fs_maybe_drop(struct fs_inbox *ib, struct ient *e);
/* An entry unlinked or replaced: GONE, without a name. */
void fs_set_gone(struct fs_inbox *ib, struct ient *e);
/* The entry of a LIVE name, made if needed; NULL only without memory. */
struct ient *fs_entry_for(struct fs_inbox *ib, int dir, const char *name);
/* Take an entry by inode number for an operation, with a reference (takes ib->lock). */
struct ient *fs_inbox_get(struct fs_inbox *ib, uint64_t ino);
/* Give back fs_inbox_get's reference; NULL is a no-op (takes ib->lock). */
void fs_inbox_put(struct fs_inbox *ib, struct ient *e);
/* A decided file: out of the name hash, onto the (bounded) list of ghosts. */
void fs_set_ghost(struct fs_inbox *ib, struct ient *e, pid_t decider);
/* The ghost of `name` decided less than GHOST_SECONDS ago, or NULL. */
struct ient *fs_ghost_named(struct fs_inbox *ib, int dir, const char *name);
/* The ghost of `name` that the process of thread `pid` may still see, or NULL. */
struct ient *fs_ghost_for(struct fs_inbox *ib, int dir, const char *name, pid_t pid);
/* A change in directory `dir`: the mtime reported next moves (see fs_dir_stat). */
void fs_inbox_changed(struct fs_inbox *ib, int dir);

/* The attributes of a backing file as the file of inode `ino`. */
void fs_file_stat(uint64_t ino, const struct stat *b, struct stat *st);
/* A receipt directory or the inbox, with an mtime that moves with every change made here. */
int fs_dir_stat(struct fs_inbox *ib, int dir, struct stat *st);
/* A FUSE entry of attributes `st` (st_ino its inode number) and the two timeouts. */
void fs_entry_param(struct fuse_entry_param *e, const struct stat *st, double entry_timeout,
		    double attr_timeout);
/* How long the kernel may keep a name of the inbox without asking (seconds). */
double fs_name_timeout(int dir, const char *name);
/* The same for an entry's attributes (e->lock held; ib->lock not). */
double fs_attr_timeout(struct fs_inbox *ib, struct ient *e);

/* The entry's descriptor, opened by name when there is none (e->lock held). */
int fs_entry_fd(struct fs_inbox *ib, struct ient *e);
/* Close an idle entry's descriptor, but a GONE file's (it cannot be opened again). */
void fs_entry_close(struct ient *e);
/* rename without replacing; link + unlink where the file system has no RENAME_NOREPLACE */
int fs_rename_noreplace(int olddir, const char *old, int newdir, const char *new);
/* Write a receipt under a hidden temporary name `tmp` in *ret_dir (`dir`, or .accepted/). */
int fs_write_tmp(struct fs_inbox *ib, int dir, const struct kx_buf *data, char tmp[64], int *ret_dir);
/* An accepted file leaves directory `dir`: a manifest's kept as a spare, or removed (an
 * artifact's always: its blocks are freed at once); ib->lock held. 0 or -errno. */
int fs_keep_spare(struct fs_inbox *ib, int dir, const char *name);

/* The syncer thread (fs_inbox_open starts it, fs_inbox_close stops it). */
void *fs_syncer_main(void *arg);
/* A receipt or a move to make durable with the next batch (at once where there is no syncer). */
void fs_sync_soon(struct fs_inbox *ib);

/* ---- decide.c ------------------------------------------------------------------------------- */

/* Take the decider's mark off a file (e->lock held). */
void fs_unmark(struct ient *e);
/* Decide a LIVE file under a final name (e->lock held): 0, -EINVAL, or -EIO, -ENOSPC. */
int fs_inbox_decide(struct fs_inbox *ib, struct ient *e, pid_t pid, uint64_t *ret_ticket);
/* Queue a LIVE entry for the decider (ib->lock held). */
void fs_enqueue_locked(struct fs_inbox *ib, struct ient *e, pid_t pid);
/* Wait until every file queued before is decided and shows (no lock of ours held). */
void fs_inbox_drain(struct fs_inbox *ib, bool forgotten, bool bounded);
/* Mark a LIVE file as renamed to be decided (e->lock held): 0, or -errno. */
int fs_mark_queued(struct fs_inbox *ib, struct ient *e);

#endif
