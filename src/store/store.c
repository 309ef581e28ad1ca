// SPDX-License-Identifier: MIT
/*
 * The store on RocksDB's C API: open/close, snapshot views, typed reads and iteration, and
 * transactions (writes collected in memory, with maps that let a multi-manifest file see its own
 * earlier runs when it checks for conflicts, committed as one sorted WriteBatch; see struct op
 * below). Layout in keys.h / docs/store.md.
 *
 * RocksDB's memory is bounded explicitly (a 32 MiB block cache shared by readers, two 16 MiB
 * memtables) because the FUSE daemon that embeds it has a memory target of its own.
 */
#include "private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <rocksdb/c.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * One open RocksDB of a store that follows a replica (KX_STORE_FOLLOW): the store's current one,
 * and those older views still read. A shared flock on its directory tells `kindex pull` the
 * generation is in use; it is let go with the last reference. `refs` is under kx_store.follow.
 */
struct dbh {
	rocksdb_t *db;
	int dirfd;
	char *dir;  /* its real path */
	char *note; /* kx_store_note's text, or NULL */
	unsigned refs;
};

struct kx_view {
	struct kx_store *s;
	rocksdb_t *db;  /* the database the snapshot is of (a follower's changes: kx_store_follow) */
	struct dbh *dbh; /* its reference on it when following, else NULL */
	const rocksdb_snapshot_t *snap;
	rocksdb_readoptions_t *ro;
	uint64_t generation;
	/*
	 * An iterator over the snapshot kept for kx_store_find_bits, made at its first use, under
	 * seek_lock (an iterator serves one thread at a time): a mount decodes an inode number by a
	 * prefix seek for every run directory it has forgotten — a walk of runs/ meets 100,000 of
	 * them —, and seeking one iterator again instead of making one each time saved the daemon
	 * 3.7 µs of CPU per directory there (docs/performance-log.md). Unlike the snapshot, the iterator
	 * also holds on to the memtables and files it was made over, until the view is released: a
	 * mount replaces its view after each commit and releases the old one once nothing uses it.
	 */
	pthread_mutex_t seek_lock;
	rocksdb_iterator_t *seek_it;
};

/*
 * A transaction collects its writes in memory and hands RocksDB one WriteBatch at commit, its keys
 * sorted: the memtable's skiplist inserts a run of ascending keys from where the last one went
 * (its sequential-insert splice), where random digests would each walk the list from the top —
 * several times cheaper for a bulk ingest. Collecting also makes savepoints a length to truncate
 * to. Reads must see the transaction's own writes (two manifests of one file can conflict with
 * each other): the writer caches (wcache.h) track documents, groups and mtimes, and three
 * transaction-local maps track the runs, sources and document bytes written so far.
 */
struct op {
	size_t k, kn, v, vn; /* offsets into kx_txn.bytes */
};
struct docbytes {
	size_t op; /* the put of the document: its value in kx_txn.bytes */
};

struct kx_txn {
	struct kx_store *s;
	struct kx_buf bytes; /* keys and values of the writes, back to back */
	struct op *ops;
	size_t nops, capops;
	struct wmap *runs;     /* run digest → struct kx_run_rec */
	struct wmap *sources;  /* sha256(source '\0' externalId) → run digest */
	struct wmap *docbytes; /* doc digest → struct docbytes (its put in this transaction) */
	struct wmap *dirty;    /* groups changed: their records are written once, at commit */
	struct wmap *stamped;  /* sha256(directory path): directories whose mtime this transaction set */
	int64_t delta_runs, delta_docs, delta_groups;
	struct undo *undo;
	/* the savepoint */
	bool has_save;
	size_t save_undo, save_ops, save_bytes;
	int64_t save_runs, save_docs, save_groups;
};

/*
 * A RocksDB status as a negative errno, by its code: the C API gives the status as text, its
 * code's name first ("Corruption: ", "IO error: ", "Resource busy: "…, Status::ToString), then
 * the message. Only the code is classified, never words inside the message (a "block checksum
 * mismatch" is damage, not a lock); within "IO error", what RocksDB's messages begin with: a full
 * disk, and the LOCK file held ("While lock file: …", "lock hold by current process…").
 */
static bool code_is(const char *err, const char *code, const char **ret_rest)
{
	size_t n = strlen(code);
	if (strncmp(err, code, n) != 0 || strncmp(err + n, ": ", 2) != 0)
		return false;
	*ret_rest = err + n + 2;
	return true;
}

int store_errno(const char *err)
{
	const char *rest;
	if (!err)
		return 0;
	if (code_is(err, "Corruption", &rest))
		return -EUCLEAN;
	if (code_is(err, "NotFound", &rest))
		return -ENOENT;
	if (code_is(err, "Resource busy", &rest))
		return -EBUSY;
	if (code_is(err, "Invalid argument", &rest)) /* "…/CURRENT: does not exist (create_if_missing is false)" */
		return strstr(rest, ": does not exist (create_if_missing") ? -ENOENT : -EINVAL;
	if (code_is(err, "IO error", &rest)) {
		if (strncmp(rest, "No space left on device", 23) == 0 || strstr(rest, ": No space left on device"))
			return -ENOSPC;
		if (strncmp(rest, "While lock file: ", 17) == 0 || strncmp(rest, "lock hold by current process", 28) == 0)
			return -EBUSY; /* LockFile: another process holds LOCK, or this one does */
	}
	return -EIO;
}

/*
 * Every write to the store goes through here. A write RocksDB could not log (a full disk) leaves
 * its log writer failed until RocksDB's own error recovery switches to a new log, which it does
 * once the disk has room again (its SstFileManager checks every few seconds); until then a sync of
 * the log — and Debian's RocksDB is built with assertions — aborts the process
 * (WritableFileWriter: `sync_without_flush_called_`). So a failed write is remembered in
 * `wal_error` until a write succeeds, a sync is refused while it is set, and `wal` keeps a sync
 * from running while a write is in flight that could fail under it. Returns 0 or a negative errno
 * (-ENOSPC for a full disk).
 */
int store_write(struct kx_store *s, const rocksdb_writeoptions_t *wo, rocksdb_writebatch_t *wb)
{
	char *err = NULL;
	pthread_rwlock_wrlock(&s->wal);
	rocksdb_write(s->db, wo, wb, &err);
	s->wal_error = store_errno(err);
	if (!s->wal_error) {
		size_t n;
		rocksdb_writebatch_data(wb, &n);
		s->logged += n;
	}
	int r = s->wal_error;
	pthread_rwlock_unlock(&s->wal);
	rocksdb_free(err);
	return r;
}

/* ---- lifecycle -------------------------------------------------------------------------------- */

/*
 * The store's id: 16 random bytes, made once — with the store, or by the first writer of a store
 * made before ids — and kept by every checkpoint. A publication names it, so a replica tells a
 * re-created store from the one it copied (docs/replicas.md, "Lineage").
 */
static int give_id(struct kx_store *s)
{
	int r = store_get_raw(s, s->ro, KEYLIT(K_ID), NULL);
	if (r != -ENOENT)
		return r;
	unsigned char id[16];
	if (getrandom(id, sizeof(id), 0) != (ssize_t)sizeof(id))
		return -errno;
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	rocksdb_writebatch_put(wb, KEYLIT(K_ID), (const char *)id, sizeof(id));
	r = store_write(s, s->wo_sync, wb);
	rocksdb_writebatch_destroy(wb);
	return r;
}

static int get_in(rocksdb_t *db, const rocksdb_readoptions_t *ro, const void *k, size_t kn, struct kx_buf *out)
{
	char *err = NULL;
	size_t n = 0;
	char *v = rocksdb_get(db, ro, k, kn, &n, &err);
	if (err) {
		int r = store_errno(err);
		rocksdb_free(err);
		return r;
	}
	if (!v)
		return -ENOENT;
	int r = 0;
	if (out) {
		kx_buf_reset(out);
		r = kx_buf_append(out, v, n);
	}
	rocksdb_free(v);
	return r;
}

int store_get_raw(struct kx_store *s, const rocksdb_readoptions_t *ro, const void *k, size_t kn, struct kx_buf *out)
{
	return get_in(s->db, ro, k, kn, out);
}

static uint64_t get_u64_in(rocksdb_t *db, const rocksdb_readoptions_t *ro, const char *k, size_t kn)
{
	struct kx_buf b = { 0 };
	uint64_t v = 0;
	if (get_in(db, ro, k, kn, &b) == 0 && b.len == 8)
		v = store_get_u64((const unsigned char *)b.ptr);
	kx_buf_release(&b);
	return v;
}

static uint64_t get_u64_key(struct kx_store *s, const rocksdb_readoptions_t *ro, const char *k, size_t kn)
{
	return get_u64_in(s->db, ro, k, kn);
}

int kx_store_tree_groups(struct kx_store *s, struct kx_view *v, kx_tree_group_fn fn, void *ctx)
{
	unsigned char p = T_TREE;
	struct scan sc;
	int r = store_scan_open(&sc, s, v, &p, 1);
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn, vn;
		const unsigned char *k = (const unsigned char *)rocksdb_iter_key(sc.it, &kn), *end = k + kn;
		const unsigned char *val = (const unsigned char *)rocksdb_iter_value(sc.it, &vn);
		/* "T" kernel \0 pass \0 gpu \0 slug \0 workload digest → group key, flags (keys.c) */
		char comp[4][KX_NAME_MAX];
		const unsigned char *at = k + 1;
		for (int i = 0; i < 4 && r == 0; i++) {
			const unsigned char *nul = at < end ? memchr(at, '\0', (size_t)(end - at)) : NULL;
			if (!nul || (size_t)(nul - at) >= KX_NAME_MAX) {
				r = -EIO;
				break;
			}
			memcpy(comp[i], at, (size_t)(nul - at));
			comp[i][nul - at] = '\0';
			at = nul + 1;
		}
		if (r == 0 && (end - at != 32 || vn != 33))
			r = -EIO;
		if (r < 0)
			break;
		struct kx_digest w, g;
		memcpy(w.b, at, 32);
		memcpy(g.b, val, 32);
		r = fn(ctx, comp[0], comp[1], comp[2], comp[3], &w, &g, val[32] & 1);
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r;
}


/* What the writer knows of a 'C' key (s->currents): the run it names, or that there is none. */
struct current_mark {
	bool present;
	int64_t observed_ns;
	struct kx_digest run;
};

/* The number of a write-ahead log's file name ("000123.log"), or 0 for any other name. */
static unsigned long long wal_number(const char *name)
{
	char *end;
	unsigned long long num = name[0] >= '0' && name[0] <= '9' ? strtoull(name, &end, 10) : 0;
	return num && strcmp(end, ".log") == 0 ? num : 0;
}

/*
 * RocksDB before 8.3 keeps an empty write-ahead log until a memtable flush moves its log number on
 * (facebook/rocksdb#11313, fixed in 8.3 by #11409; Debian 12 ships 7.8): every read-write open
 * that writes nothing, such as each mount of a tree nobody adds to, leaves a 0-byte NNNNNN.log,
 * and each is opened again at every later open. Called right after rocksdb_open, with its LOCK
 * held, so no other process can be writing to any of them: the empty logs older than the newest
 * (the one this open made, still in use) hold nothing, and RocksDB does not track logs in its
 * MANIFEST (track_and_verify_wals_in_manifest, off), so they are removed. Best effort: a log that
 * stays only costs a file.
 */
static void drop_empty_wals(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	unsigned long long newest = 0, num;
	for (struct dirent *e; (e = readdir(d));)
		if ((num = wal_number(e->d_name)) > newest)
			newest = num;
	rewinddir(d);
	for (struct dirent *e; (e = readdir(d));) {
		struct stat st;
		if ((num = wal_number(e->d_name)) && num < newest &&
		    fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
			unlinkat(fd, e->d_name, 0);
	}
	closedir(d);
}

/*
 * Whether `dir` is a replica generation: a checkpoint that holds the PUBLISHED file its publisher
 * wrote (include/kx/replica.h). Nothing writes one, not even RocksDB's own open to write (a new log,
 * MANIFEST, OPTIONS and LOCK, and a table for what the log held): a follow mount may be serving
 * it, and a pull hard-links its tables into the next generation.
 */
static bool is_generation(const char *dir)
{
	char path[PATH_MAX];
	return snprintf(path, sizeof(path), "%s/PUBLISHED", dir) < (int)sizeof(path) && access(path, F_OK) == 0;
}

static char *generation_refused(const char *dir, const char *what)
{
	char *msg;
	if (asprintf(&msg,
		     "'%s' is a replica generation (it holds PUBLISHED), which is read-only: %s the writer's store "
		     "it was published from instead",
		     dir, what) < 0)
		msg = NULL;
	return msg;
}

#define STORE_WRITE_BUFFER (16u << 20) /* a memtable's bytes before RocksDB writes it out */
#define STORE_SALVAGE (1u << 16) /* kx_store_recover: point-in-time recovery of a damaged log */

/*
 * After an open refused for corruption: whether the log is what is damaged, that is, whether the
 * store opens (read-only, so nothing is changed) when RocksDB may stop replaying the log at the
 * damage.
 */
static bool wal_damaged(rocksdb_options_t *opts, const char *dir)
{
	char *err = NULL;
	rocksdb_options_set_wal_recovery_mode(opts, 2 /* point in time */);
	rocksdb_t *db = rocksdb_open_for_read_only(opts, dir, 0, &err);
	rocksdb_options_set_wal_recovery_mode(opts, 0);
	if (db)
		rocksdb_close(db);
	rocksdb_free(err);
	return db != NULL;
}

static void dbh_put(struct kx_store *s, struct dbh *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&s->follow);
	bool last = --h->refs == 0;
	pthread_mutex_unlock(&s->follow);
	if (!last)
		return;
	if (h->db)
		rocksdb_close(h->db);
	if (h->dirfd >= 0)
		close(h->dirfd); /* and with it the shared lock */
	free(h->dir);
	free(h->note);
	free(h);
}

/*
 * Open a replica's generation read-only (KX_STORE_FOLLOW): `dir` is resolved once, to a directory
 * held open and share-locked (flock) before RocksDB reads it, so a `kindex pull` that removes
 * unused generations (it takes the lock exclusively first) cannot remove it under the open, and a
 * generation it removed just before is seen gone (no CURRENT) rather than half read. Every table
 * file stays open (max_open_files -1, set at kx_store_open), so a generation deleted under a mount
 * anyway keeps serving from the files it has open.
 */
static int dbh_open(struct kx_store *s, const char *dir, struct dbh **ret, char **ret_msg)
{
	struct dbh *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->refs = 1;
	int r = 0;
	char fdpath[64], real[PATH_MAX];
	h->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (h->dirfd < 0) {
		r = -errno;
		if (asprintf(ret_msg, "cannot open replica generation '%s': %s", dir, strerror(-r)) < 0)
			*ret_msg = NULL;
		goto fail;
	}
	if (flock(h->dirfd, LOCK_SH) < 0 || faccessat(h->dirfd, "CURRENT", F_OK, 0) < 0) {
		r = -errno;
		if (asprintf(ret_msg, "no store at '%s' (no CURRENT: removed, or not a generation): %s", dir,
			     strerror(-r)) < 0)
			*ret_msg = NULL;
		goto fail;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", h->dirfd);
	ssize_t n = readlink(fdpath, real, sizeof(real) - 1);
	if (n <= 0) {
		r = n < 0 ? -errno : -ENOENT;
		if (asprintf(ret_msg, "cannot resolve '%s': %s", dir, strerror(-r)) < 0)
			*ret_msg = NULL;
		goto fail;
	}
	real[n] = '\0';
	if (!(h->dir = strdup(real))) {
		r = -ENOMEM;
		goto fail;
	}
	char *err = NULL;
	h->db = rocksdb_open_for_read_only(s->opts, h->dir, 0, &err);
	if (err) {
		r = store_errno(err);
		if (asprintf(ret_msg, "cannot open store '%s': %s", h->dir, err) < 0)
			*ret_msg = NULL;
		rocksdb_free(err);
		h->db = NULL;
		goto fail;
	}
	*ret = h;
	return 0;
fail:
	dbh_put(s, h);
	return r;
}

int kx_store_open(const char *dir, unsigned flags, struct kx_store **ret, char **ret_err)
{
	char *msg = NULL;
	int r = 0;
	struct kx_store *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->writer, NULL);
	pthread_mutex_init(&s->follow, NULL);
	if (flags & (KX_STORE_FOLLOW | KX_STORE_VERIFY))
		flags |= KX_STORE_READONLY;
	/* a commit waits for the syncs in flight, not behind every sync that comes after it */
	pthread_rwlockattr_t wal_attr;
	pthread_rwlockattr_init(&wal_attr);
	pthread_rwlockattr_setkind_np(&wal_attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&s->wal, &wal_attr);
	pthread_rwlockattr_destroy(&wal_attr);
	s->flags = flags;
	/* the absolute path: it is shown in README, which must read the same from any directory */
	s->path = realpath(dir, NULL);
	if (!s->path)
		s->path = strdup(dir);
	struct stat st;
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
		r = -ENOTDIR;
		if (asprintf(&msg, "'%s' is %s, not a store directory", dir,
			     S_ISREG(st.st_mode) ? "a file" : "not a directory") < 0)
			msg = NULL;
		goto fail;
	}
	char current[4096];
	snprintf(current, sizeof(current), "%s/CURRENT", dir);
	if (!(flags & KX_STORE_CREATE) && access(current, F_OK) != 0) {
		r = -ENOENT;
		if (asprintf(&msg, "no store at '%s' (create one with: kindex --store %s init)", dir, dir) < 0)
			msg = NULL;
		goto fail;
	}
	if (!(flags & KX_STORE_READONLY) && is_generation(dir)) {
		r = -EROFS;
		msg = generation_refused(dir, "write to");
		goto fail;
	}
	if (flags & KX_STORE_CREATE) {
		mkdir(dir, 0755);
		char *abs = realpath(dir, NULL);
		if (abs) {
			free(s->path);
			s->path = abs;
		}
	}

	s->opts = rocksdb_options_create();
	rocksdb_options_set_create_if_missing(s->opts, (flags & KX_STORE_CREATE) ? 1 : 0);
	rocksdb_options_set_max_background_jobs(s->opts, 2);
	rocksdb_options_set_write_buffer_size(s->opts, STORE_WRITE_BUFFER);
	rocksdb_options_set_max_total_wal_size(s->opts, 64u << 20);
	rocksdb_options_set_max_open_files(s->opts, flags & KX_STORE_FOLLOW ? -1 : 512);
	rocksdb_options_set_keep_log_file_num(s->opts, 2);
	rocksdb_options_set_max_log_file_size(s->opts, 1u << 20);
	rocksdb_options_set_compression(s->opts, rocksdb_lz4_compression);
	/* most point reads ask for keys that are not there (is this run new?): a memtable bloom
	 * filter answers those without walking the skiplist */
	rocksdb_options_set_memtable_prefix_bloom_size_ratio(s->opts, 0.05);
	rocksdb_options_set_memtable_whole_key_filtering(s->opts, 1);
	/*
	 * RocksDB's own log (LOG) records nothing below FATAL: on a full disk its writes fail too, and
	 * the next line it logs — ERROR and WARN lines come with every failed write — aborts in
	 * Debian's build (see store_write). What goes wrong reaches the caller as a status anyway.
	 */
	rocksdb_options_set_info_log_level(s->opts, 4 /* FATAL */);
	/*
	 * A log whose end is torn (a crash mid-append) is read up to the tear; a log damaged before its
	 * end refuses the open, where point-in-time recovery, RocksDB's default, would open the store
	 * without every write after the damage and say so only in LOG. kx_store_recover opens such a
	 * store that way on purpose, keeping the damaged logs and a record of the loss.
	 */
	rocksdb_options_set_wal_recovery_mode(s->opts, flags & STORE_SALVAGE ? 2 /* point in time */
									 : 0 /* tolerate a torn tail */);
	s->table = rocksdb_block_based_options_create();
	/*
	 * Blocks are cached uncompressed; the page cache holds them compressed as well. For the
	 * daemon, whose memory is bounded, 16 MiB: `ls -lR` of 100,000 runs (a 76 MB store) ran as
	 * fast with 16 MiB as with 32, in 18 MiB less RSS (docs/performance-log.md).
	 */
	s->cache = rocksdb_cache_create_lru((flags & KX_STORE_LEAN ? 16u : 32u) << 20);
	rocksdb_block_based_options_set_block_cache(s->table, s->cache);
	s->filter = rocksdb_filterpolicy_create_bloom(10);
	rocksdb_block_based_options_set_filter_policy(s->table, s->filter);
	rocksdb_options_set_block_based_table_factory(s->opts, s->table);

	char *err = NULL;
	if (flags & KX_STORE_FOLLOW) {
		if ((r = dbh_open(s, dir, &s->cur, &msg)) < 0)
			goto fail;
		s->db = s->cur->db;
	} else if (flags & KX_STORE_READONLY)
		s->db = rocksdb_open_for_read_only(s->opts, dir, 0, &err);
	else
		s->db = rocksdb_open(s->opts, dir, &err);
	if (err && (flags & KX_STORE_VERIFY) && store_errno(err) == -EUCLEAN && !wal_damaged(s->opts, dir)) {
		/*
		 * A table RocksDB reads at the open (its footer, index or properties block; it opens the
		 * first 16 tables, or all of them with max_open_files -1) is damaged, and the log is not:
		 * without paranoid checks the open goes on, each read of that table fails instead, and
		 * verify names it and reads the rest.
		 */
		rocksdb_options_set_paranoid_checks(s->opts, 0);
		s->damage = err;
		err = NULL;
		s->db = rocksdb_open_for_read_only(s->opts, dir, 0, &err);
	}
	if (err) {
		r = store_errno(err);
		char *holder = r == -EBUSY ? kx_store_holder(dir) : NULL;
		if (r == -EUCLEAN && !(flags & STORE_SALVAGE) && wal_damaged(s->opts, dir)) {
			if (asprintf(&msg,
				     "cannot open store '%s': its write-ahead log is damaged (%s), and opening it would "
				     "drop every write logged after the damage; 'kindex --store %s recover' opens it "
				     "without them, keeps the log in lost+found/ and records the loss (docs/inbox.md, "
				     "\"Durability\")",
				     dir, err, dir) < 0)
				msg = NULL;
		} else if (holder) {
			if (asprintf(&msg, "store '%s' is in use by %s; write through its inbox, or unmount it first", dir, holder) < 0)
				msg = NULL;
		} else if (r == -EBUSY) {
			if (asprintf(&msg, "store '%s' is in use by another process (%s)", dir, err) < 0)
				msg = NULL;
		} else if (asprintf(&msg, r == -EUCLEAN ? "store '%s' is damaged: %s" : "cannot open store '%s': %s", dir,
				    err) < 0) {
			msg = NULL;
		}
		free(holder);
		rocksdb_free(err);
		goto fail;
	}
	if (!(flags & KX_STORE_READONLY))
		drop_empty_wals(s->path);
	s->ro = rocksdb_readoptions_create();
	s->wo = rocksdb_writeoptions_create();
	s->wo_sync = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(s->wo_sync, 1);
	if (flags & KX_STORE_SYNC)
		rocksdb_writeoptions_set_sync(s->wo, 1);

	struct kx_buf schema = { 0 };
	char want[32];
	snprintf(want, sizeof(want), "kindexfs-store %d", KX_STORE_SCHEMA);
	r = store_get_raw(s, s->ro, KEYLIT(K_SCHEMA), &schema);
	s->waiting_index = s->index_copies = s->current_index = true; /* but for an older store read as it is */
	bool writable = !(flags & KX_STORE_READONLY);
	int from = r == 0 ? store_readable_schema(schema.ptr, want) : 0;
	if (r == -EUCLEAN && (flags & KX_STORE_VERIFY)) {
		r = 0; /* read as this kindex's: verify names the table that holds the schema */
		from = KX_STORE_SCHEMA;
	}
	if (r == -ENOENT && writable) {
		unsigned char created[8];
		store_put_u64(created, (uint64_t)kx_now_ns());
		rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
		rocksdb_writebatch_put(wb, KEYLIT(K_CREATED), (const char *)created, 8);
		rocksdb_writebatch_put(wb, KEYLIT(K_INDEX_COPIES), "", 0);
		rocksdb_writebatch_put(wb, KEYLIT(K_SCHEMA), want, strlen(want));
		r = store_write(s, s->wo_sync, wb);
		rocksdb_writebatch_destroy(wb);
		if (r < 0) {
			if (asprintf(&msg, "cannot initialise store '%s': %s", dir, strerror(-r)) < 0)
				msg = NULL;
			kx_buf_release(&schema);
			goto fail;
		}
	} else if (from) {
		/*
		 * What an older kindex wrote may lack something: schema 1 the 'W' index, which only writers
		 * use; a store without K_INDEX_COPIES the run's record in some rank-index entries, which a
		 * reader then reads by digest; schema 2 the 'C' index, which a reader then works out from
		 * the rank index. Read as it is; upgraded when opened to write.
		 */
		bool copies = store_get_raw(s, s->ro, KEYLIT(K_INDEX_COPIES), NULL) == 0;
		if (writable && (from < KX_STORE_SCHEMA || !copies) && (r = store_upgrade(s, from, want)) < 0 &&
		    asprintf(&msg, "cannot upgrade store '%s' to schema '%s': %s", dir, want, strerror(-r)) < 0)
			msg = NULL;
		s->waiting_index = from >= 2 || writable;
		s->index_copies = copies || writable;
		s->current_index = from == KX_STORE_SCHEMA || writable;
	} else if (r == 0) {
		r = -EPROTO;
		if (asprintf(&msg, "store '%s' has schema '%s'; this kindex reads '%s'", dir, schema.ptr, want) < 0)
			msg = NULL;
	} else if (r == -ENOENT) {
		r = 0; /* read-only view of an empty store */
	} else if (r == -EUCLEAN) {
		if (asprintf(&msg, "store '%s' is damaged: the table that holds its schema cannot be read "
				   "('kindex --store %s verify' names it)", dir, dir) < 0)
			msg = NULL;
	}
	kx_buf_release(&schema);
	if (r == 0 && writable && (r = give_id(s)) < 0 && asprintf(&msg, "cannot give store '%s' its id: %s", dir,
								       strerror(-r)) < 0)
		msg = NULL;
	if (r < 0)
		goto fail;
	if (!(flags & KX_STORE_READONLY)) {
		s->docs = store_wmap_new(0, 1u << 20);
		s->groups = store_wmap_new(sizeof(struct kx_group_rec), 1u << 16);
		s->mtimes = store_wmap_new(sizeof(int64_t), 1u << 16);
		s->currents = store_wmap_new(sizeof(struct current_mark), 1u << 17);
		s->names = store_wmap_new(32, 1u << 16);
		if (!s->docs || !s->groups || !s->mtimes || !s->currents || !s->names) {
			r = -ENOMEM;
			goto fail;
		}
	}
	s->gen = get_u64_key(s, s->ro, KEYLIT(K_GEN));
	s->n_runs = get_u64_key(s, s->ro, KEYLIT(K_COUNT_RUNS));
	s->n_docs = get_u64_key(s, s->ro, KEYLIT(K_COUNT_DOCS));
	s->n_groups = get_u64_key(s, s->ro, KEYLIT(K_COUNT_GROUPS));
	*ret = s;
	return 0;
fail:
	if (ret_err)
		*ret_err = msg;
	else
		free(msg);
	kx_store_close(s);
	return r;
}

/*
 * At close, write the memtables to a table file when this open logged more than a write buffer.
 * What is left in them is replayed from the write-ahead log at every later open, into memory, all
 * at once, and a read-only open (a `kindex cat`, a mount -o ro) replays it again each time: a JSON
 * Lines file is one batch (all or nothing), and after `kindex ingest` of 100,000 runs in one,
 * each later open peaked at 492 MiB replaying its 161 MB log. RocksDB did not flush the batch by
 * itself: its memtable counted 16.5 MB, under the write buffer. A smaller remainder stays in the
 * log, so that a command adding one manifest leaves no table file. A flush that fails (a full
 * disk) leaves the log as it was: nothing is lost, the next open pays.
 */
static void flush_if_logged(struct kx_store *s)
{
	if (s->logged <= STORE_WRITE_BUFFER)
		return;
	rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
	char *err = NULL;
	rocksdb_flushoptions_set_wait(fo, 1);
	rocksdb_flush(s->db, fo, &err);
	rocksdb_free(err);
	rocksdb_flushoptions_destroy(fo);
}

void kx_store_close(struct kx_store *s)
{
	if (!s)
		return;
	if (s->cur) {
		dbh_put(s, s->cur); /* s->db is its */
	} else if (s->db) {
		if (!(s->flags & KX_STORE_READONLY) && kx_store_sync(s) == 0) /* refused after a failed write */
			flush_if_logged(s);
		rocksdb_close(s->db);
	}
	if (s->lockfile) {
		unlink(s->lockfile);
		free(s->lockfile);
	}
	rocksdb_free(s->damage);
	if (s->ro)
		rocksdb_readoptions_destroy(s->ro);
	if (s->wo)
		rocksdb_writeoptions_destroy(s->wo);
	if (s->wo_sync)
		rocksdb_writeoptions_destroy(s->wo_sync);
	if (s->opts)
		rocksdb_options_destroy(s->opts);
	if (s->table)
		rocksdb_block_based_options_destroy(s->table);
	else if (s->filter)
		rocksdb_filterpolicy_destroy(s->filter);
	if (s->cache)
		rocksdb_cache_destroy(s->cache);
	store_wmap_free(s->docs);
	store_wmap_free(s->groups);
	store_wmap_free(s->mtimes);
	store_wmap_free(s->currents);
	store_wmap_free(s->names);
	pthread_mutex_destroy(&s->writer);
	pthread_mutex_destroy(&s->follow);
	pthread_rwlock_destroy(&s->wal);
	free(s->path);
	free(s);
}

const char *kx_store_path(const struct kx_store *s)
{
	return s->path;
}

int kx_store_sync(struct kx_store *s)
{
	pthread_rwlock_rdlock(&s->wal);
	int r = s->wal_error;
	if (r == 0) {
		char *err = NULL;
		rocksdb_flush_wal(s->db, 1, &err);
		r = store_errno(err);
		rocksdb_free(err);
	}
	pthread_rwlock_unlock(&s->wal);
	return r;
}

uint64_t kx_store_sequence(struct kx_store *s)
{
	return rocksdb_get_latest_sequence_number(s->db);
}

int kx_store_checkpoint(struct kx_store *s, const char *dir, uint64_t log_size_for_flush,
			struct kx_store_point *ret, char **ret_err)
{
	if (s->flags & KX_STORE_READONLY)
		return -EROFS;
	char *err = NULL;
	/* no commit between the point read and the checkpoint: the checkpoint is exactly that point */
	pthread_mutex_lock(&s->writer);
	struct kx_store_point pt = { .sequence = rocksdb_get_latest_sequence_number(s->db), .generation = s->gen };
	rocksdb_checkpoint_t *cp = rocksdb_checkpoint_object_create(s->db, &err);
	if (!err)
		rocksdb_checkpoint_create(cp, dir, log_size_for_flush, &err);
	pthread_mutex_unlock(&s->writer);
	if (cp)
		rocksdb_checkpoint_object_destroy(cp);
	if (err) {
		int r = store_errno(err);
		if (strstr(err, "exists"))
			r = -EEXIST;
		if (ret_err && asprintf(ret_err, "cannot take a checkpoint of store '%s' into '%s': %s", s->path, dir,
					err) < 0)
			*ret_err = NULL;
		rocksdb_free(err);
		return r;
	}
	*ret = pt;
	return 0;
}

int kx_store_follow(struct kx_store *s, const char *dir, const char *note, char **ret_err)
{
	if (!s->cur)
		return -EINVAL;
	struct dbh *h = NULL;
	char *msg = NULL;
	int r = dbh_open(s, dir, &h, &msg);
	struct kx_buf schema = { 0 };
	char want[32];
	snprintf(want, sizeof(want), "kindexfs-store %d", KX_STORE_SCHEMA);
	if (r == 0 && (r = get_in(h->db, s->ro, KEYLIT(K_SCHEMA), &schema)) == 0 &&
	    store_readable_schema(schema.ptr, want) != KX_STORE_SCHEMA)
		r = -EPROTO;
	if (r == -EPROTO || r == -ENOENT) {
		if (!msg && asprintf(&msg, "store '%s' has schema '%s'; a replica must have '%s'", h->dir,
				     schema.ptr ? schema.ptr : "(none)", want) < 0)
			msg = NULL;
	}
	kx_buf_release(&schema);
	if (r == 0 && note && !(h->note = strdup(note)))
		r = -ENOMEM;
	if (r < 0) {
		dbh_put(s, h);
		if (ret_err)
			*ret_err = msg;
		else
			free(msg);
		return r;
	}
	pthread_mutex_lock(&s->follow);
	struct dbh *old = s->cur;
	s->cur = h;
	s->db = h->db;
	pthread_mutex_unlock(&s->follow);
	dbh_put(s, old); /* closed once the last view of it is released */
	return 0;
}

int kx_store_set_note(struct kx_store *s, const char *note)
{
	if (!s->cur)
		return -EINVAL;
	char *n = note ? strdup(note) : NULL;
	if (note && !n)
		return -ENOMEM;
	pthread_mutex_lock(&s->follow);
	char *old = s->cur->note;
	s->cur->note = n;
	pthread_mutex_unlock(&s->follow);
	free(old);
	return 0;
}

const char *kx_store_note(struct kx_store *s, struct kx_view *v)
{
	return v && v->dbh ? v->dbh->note : NULL;
}

const char *kx_store_dir(struct kx_store *s, struct kx_view *v)
{
	return v && v->dbh ? v->dbh->dir : s->path;
}

int kx_store_claim(struct kx_store *s, const char *mountpoint)
{
	char *p;
	if (asprintf(&p, "%s/kindexfs.lock", s->path) < 0)
		return -ENOMEM;
	FILE *f = fopen(p, "w");
	if (!f) {
		int r = -errno;
		free(p);
		return r;
	}
	fprintf(f, "%ld %s\n", (long)getpid(), mountpoint);
	fclose(f);
	free(s->lockfile);
	s->lockfile = p;
	return 0;
}

char *kx_store_holder(const char *dir)
{
	char p[4096], line[4200];
	snprintf(p, sizeof(p), "%s/kindexfs.lock", dir);
	FILE *f = fopen(p, "r");
	if (!f)
		return NULL;
	char *out = NULL;
	long pid;
	char mnt[4096];
	if (fgets(line, sizeof(line), f) && sscanf(line, "%ld %4095[^\n]", &pid, mnt) == 2 &&
	    (kill((pid_t)pid, 0) == 0 || errno == EPERM)) {
		if (asprintf(&out, "kindexfs (pid %ld, mounted at %s)", pid, mnt) < 0)
			out = NULL;
	}
	fclose(f);
	return out;
}

/* ---- recovery of a damaged log ------------------------------------------------------------------ */

/* Copy `name` from directory fd `from` into `to`, synced; 0 or a negative errno. */
static int copy_synced(int from, int to, const char *name)
{
	int in = openat(from, name, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	int out = openat(to, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int r = out < 0 ? -errno : 0;
	char buf[65536];
	for (ssize_t n; r == 0 && (n = read(in, buf, sizeof(buf))) != 0;) {
		if (n < 0) {
			r = errno == EINTR ? 0 : -errno;
			continue;
		}
		for (ssize_t off = 0, w; r == 0 && off < n; off += w > 0 ? w : 0)
			if ((w = write(out, buf + off, (size_t)(n - off))) < 0 && errno != EINTR)
				r = -errno;
	}
	if (r == 0 && fsync(out) < 0)
		r = -errno;
	close(in);
	if (out >= 0)
		close(out);
	return r;
}

/*
 * The store's write-ahead logs, copied as they are into DIR/lost+found/<stamp>/ (made, synced):
 * what recovery drops stays on disk for whoever can make more of it. *ret_where: "lost+found/…".
 */
static int keep_logs(const char *dir, char ret_where[64], char **ret_err)
{
	char stamp[40];
	kx_time_format(kx_now_ns(), stamp);
	snprintf(ret_where, 64, "lost+found/%s", stamp);
	int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), lf = -1, to = -1, r = 0;
	DIR *list = NULL;
	if (d < 0 || ((mkdirat(d, "lost+found", 0755) < 0 && errno != EEXIST)) ||
	    (lf = openat(d, "lost+found", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    mkdirat(lf, stamp, 0755) < 0 || (to = openat(lf, stamp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		r = -errno;
	int scan = r == 0 ? dup(d) : -1;
	if (r == 0 && (scan < 0 || !(list = fdopendir(scan))))
		r = -errno;
	for (struct dirent *e; r == 0 && (e = readdir(list));)
		if (wal_number(e->d_name) && (r = copy_synced(d, to, e->d_name)) < 0 &&
		    asprintf(ret_err, "cannot keep '%s/%s' in %s/: %s", dir, e->d_name, ret_where, strerror(-r)) < 0)
			*ret_err = NULL;
	if (r == 0 && (fsync(to) < 0 || fsync(lf) < 0 || fsync(d) < 0))
		r = -errno;
	if (r < 0 && !*ret_err && asprintf(ret_err, "cannot make '%s/%s/': %s", dir, ret_where, strerror(-r)) < 0)
		*ret_err = NULL;
	if (list)
		closedir(list);
	else if (scan >= 0)
		close(scan);
	if (to >= 0)
		close(to);
	if (lf >= 0)
		close(lf);
	if (d >= 0)
		close(d);
	return r;
}

static const rocksdb_readoptions_t *ro_of(struct kx_store *s, struct kx_view *v);
static rocksdb_t *db_of(struct kx_store *s, struct kx_view *v);

int kx_store_recover(const char *dir, char **ret_report, char **ret_err)
{
	struct kx_store *s;
	char *why = NULL;
	*ret_report = *ret_err = NULL;
	if (is_generation(dir)) {
		*ret_err = generation_refused(dir, "recover");
		return -EROFS;
	}
	/* read-only first: a store that opens as it is is left as it is, not even its log flushed */
	int r = kx_store_open(dir, KX_STORE_READONLY, &s, &why);
	if (r == 0) {
		kx_store_close(s);
		if (asprintf(ret_report, "store '%s' opens as it is: nothing to recover", dir) < 0)
			*ret_report = NULL;
		return 0;
	}
	if (r != -EUCLEAN) {
		*ret_err = why;
		return r;
	}
	free(why);
	why = NULL;
	char where[64];
	if ((r = keep_logs(dir, where, ret_err)) < 0)
		return r;
	if ((r = kx_store_open(dir, STORE_SALVAGE, &s, ret_err)) < 0)
		return r; /* the damage is not (only) in the log */
	struct kx_buf losses = { 0 };
	char when[40];
	kx_time_format(kx_now_ns(), when);
	r = store_get_raw(s, s->ro, KEYLIT(K_LOSSES), &losses);
	if (r == 0 || r == -ENOENT)
		r = kx_buf_printf(&losses,
				  "%s: the write-ahead log was damaged; the store was opened as it stood before the "
				  "damage, and the writes logged after it were dropped (the log as it was: %s/)\n",
				  when, where);
	if (r >= 0) {
		rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
		rocksdb_writebatch_put(wb, KEYLIT(K_LOSSES), losses.ptr, losses.len);
		r = store_write(s, s->wo_sync, wb);
		rocksdb_writebatch_destroy(wb);
	}
	kx_buf_release(&losses);
	kx_store_close(s);
	if (r < 0) {
		if (asprintf(ret_err, "cannot record the loss in store '%s': %s", dir, strerror(-r)) < 0)
			*ret_err = NULL;
		return r;
	}
	if (asprintf(ret_report,
		     "store '%s' recovered: what was logged after the damage is dropped; the log as it was is in "
		     "%s/%s/",
		     dir, dir, where) < 0)
		*ret_report = NULL;
	return 0;
}

int kx_store_losses(struct kx_store *s, struct kx_view *v, struct kx_buf *out)
{
	int r = get_in(db_of(s, v), ro_of(s, v), KEYLIT(K_LOSSES), out);
	return r == -ENOENT ? 0 : r;
}

/* ---- views ------------------------------------------------------------------------------------ */

struct kx_view *kx_store_view(struct kx_store *s)
{
	struct kx_view *v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->s = s;
	pthread_mutex_init(&v->seek_lock, NULL);
	pthread_mutex_lock(&s->follow);
	if ((v->dbh = s->cur))
		v->dbh->refs++;
	v->db = s->db;
	pthread_mutex_unlock(&s->follow);
	v->snap = rocksdb_create_snapshot(v->db);
	v->ro = rocksdb_readoptions_create();
	rocksdb_readoptions_set_snapshot(v->ro, v->snap);
	v->generation = get_u64_in(v->db, v->ro, KEYLIT(K_GEN));
	return v;
}

void kx_view_release(struct kx_view *v)
{
	if (!v)
		return;
	if (v->seek_it)
		rocksdb_iter_destroy(v->seek_it);
	pthread_mutex_destroy(&v->seek_lock);
	rocksdb_readoptions_destroy(v->ro);
	rocksdb_release_snapshot(v->db, v->snap);
	dbh_put(v->s, v->dbh);
	free(v);
}

uint64_t kx_view_generation(const struct kx_view *v)
{
	return v->generation;
}

static const rocksdb_readoptions_t *ro_of(struct kx_store *s, struct kx_view *v)
{
	return v ? v->ro : s->ro;
}

static rocksdb_t *db_of(struct kx_store *s, struct kx_view *v)
{
	return v ? v->db : s->db;
}

/* ---- reads ------------------------------------------------------------------------------------ */

int kx_store_get_doc(struct kx_store *s, struct kx_view *v, const struct kx_digest *d,
		     struct kx_buf *out)
{
	struct key k;
	store_key_digest(&k, T_DOC, d);
	return get_in(db_of(s, v), ro_of(s, v), k.b, k.len, out);
}

int kx_store_get_run(struct kx_store *s, struct kx_view *v, const struct kx_digest *d,
		     struct kx_run_rec *ret)
{
	struct key k;
	store_key_digest(&k, T_RUN, d);
	struct kx_buf b = { 0 };
	int r = get_in(db_of(s, v), ro_of(s, v), k.b, k.len, &b);
	if (r == 0) {
		struct kx_run_rec x;
		r = store_run_decode(b.ptr, b.len, &x);
		if (r == 0) {
			x.run = *d;
			*ret = x;
		}
	}
	kx_buf_release(&b);
	return r;
}

int kx_store_get_group(struct kx_store *s, struct kx_view *v, const struct kx_digest *key,
		       struct kx_group_rec *ret)
{
	struct key k;
	store_key_digest(&k, T_GROUP, key);
	struct kx_buf b = { 0 };
	int r = get_in(db_of(s, v), ro_of(s, v), k.b, k.len, &b);
	if (r == 0) {
		struct kx_group_rec g;
		r = store_group_decode(b.ptr, b.len, &g);
		if (r == 0) {
			g.key = *key;
			*ret = g;
		}
	}
	kx_buf_release(&b);
	return r;
}

int kx_store_find_source(struct kx_store *s, struct kx_view *v, const char *source,
			 const char *external_id, struct kx_digest *ret)
{
	struct key k;
	if (store_key_source(&k, source, external_id) < 0)
		return -ENOENT;
	struct kx_buf b = { 0 };
	int r = get_in(db_of(s, v), ro_of(s, v), k.b, k.len, &b);
	if (r == 0 && b.len != 32)
		r = -EIO;
	if (r == 0)
		memcpy(ret->b, b.ptr, 32);
	kx_buf_release(&b);
	return r;
}

int kx_store_stats(struct kx_store *s, struct kx_view *v, struct kx_store_stats *ret)
{
	const rocksdb_readoptions_t *ro = ro_of(s, v);
	rocksdb_t *db = db_of(s, v);
	ret->runs = get_u64_in(db, ro, KEYLIT(K_COUNT_RUNS));
	ret->documents = get_u64_in(db, ro, KEYLIT(K_COUNT_DOCS));
	ret->groups = get_u64_in(db, ro, KEYLIT(K_COUNT_GROUPS));
	ret->generation = get_u64_in(db, ro, KEYLIT(K_GEN));
	ret->changed_ns = (int64_t)get_u64_in(db, ro, KEYLIT(K_CHANGED));
	ret->created_ns = (int64_t)get_u64_in(db, ro, KEYLIT(K_CREATED));
	struct kx_buf id = { 0 };
	ret->id[0] = '\0';
	if (get_in(db, ro, KEYLIT(K_ID), &id) == 0 && id.len == 16)
		for (size_t i = 0; i < 16; i++)
			snprintf(ret->id + 2 * i, 3, "%02x", (unsigned char)id.ptr[i]);
	kx_buf_release(&id);
	if (!ret->changed_ns)
		ret->changed_ns = ret->created_ns;
	return 0;
}

int kx_store_dir_mtime(struct kx_store *s, struct kx_view *v, const char *path, int64_t *ret_ns)
{
	struct key k;
	if (store_key_mtime(&k, path) < 0)
		return -ENOENT;
	struct kx_buf b = { 0 };
	int r = get_in(db_of(s, v), ro_of(s, v), k.b, k.len, &b);
	if (r == 0 && b.len != 8)
		r = -EIO;
	if (r == 0)
		*ret_ns = (int64_t)store_get_u64((const unsigned char *)b.ptr);
	kx_buf_release(&b);
	return r;
}

/* ---- iteration -------------------------------------------------------------------------------- */

/* An iterator over keys starting with prefix[0..n), in a view (or the latest state). */
/*
 * The keys from `prefix` to `upper` (upper_n bytes, excluded; NULL: every key with the prefix).
 * fill: keep the blocks read in the block cache (not for a scan of a whole key family, which would
 * only evict what point reads keep there).
 */
static int scan_open_with(struct scan *sc, struct kx_store *s, struct kx_view *v, const void *prefix, size_t n,
			  const void *upper, size_t upper_n, bool fill)
{
	memset(sc, 0, sizeof(*sc));
	if (n + 1 > sizeof(sc->upper) || upper_n > sizeof(sc->upper))
		return -ENAMETOOLONG;
	sc->ro = rocksdb_readoptions_create();
	if (v)
		rocksdb_readoptions_set_snapshot(sc->ro, v->snap);
	if (!fill)
		rocksdb_readoptions_set_fill_cache(sc->ro, 0);
	/* upper bound = the prefix incremented (prefixes never end in 0xff here) */
	memcpy(sc->upper, upper ? upper : prefix, upper ? upper_n : n);
	sc->upper_len = upper ? upper_n : n;
	while (!upper && sc->upper_len && sc->upper[sc->upper_len - 1] == 0xff)
		sc->upper_len--;
	if (sc->upper_len) {
		if (!upper)
			sc->upper[sc->upper_len - 1]++;
		rocksdb_readoptions_set_iterate_upper_bound(sc->ro, (const char *)sc->upper, sc->upper_len);
	}
	sc->it = rocksdb_create_iterator(db_of(s, v), sc->ro);
	rocksdb_iter_seek(sc->it, prefix, n);
	return 0;
}

int store_scan_open(struct scan *sc, struct kx_store *s, struct kx_view *v, const void *prefix, size_t n)
{
	return scan_open_with(sc, s, v, prefix, n, NULL, 0, true);
}

void store_scan_close(struct scan *sc)
{
	if (sc->it)
		rocksdb_iter_destroy(sc->it);
	if (sc->ro)
		rocksdb_readoptions_destroy(sc->ro);
}

/* The iteration's error (-EUCLEAN: a damaged file, -EIO: an unreadable one), else 0 */
static int iter_status(rocksdb_iterator_t *it)
{
	char *err = NULL;
	rocksdb_iter_get_error(it, &err);
	int r = store_errno(err);
	rocksdb_free(err);
	return r;
}

int store_scan_status(struct scan *sc)
{
	return iter_status(sc->it);
}

/*
 * Every key `tag` + `d` + …, of exactly `keylen` bytes (any other length is damage: -EIO), in key
 * order; fn gets the key, the digest its last 32 bytes hold (the run, in both indexes) and the
 * entry's value (vn bytes).
 */
typedef int (*digest_key_fn)(void *ctx, const unsigned char *key, const struct kx_digest *last, const char *val,
			     size_t vn);

static int each_digest_key(struct kx_store *s, struct kx_view *v, unsigned char tag, const struct kx_digest *d,
			   size_t keylen, digest_key_fn fn, void *ctx)
{
	unsigned char p[33] = { tag };
	memcpy(p + 1, d->b, 32);
	struct scan sc;
	int r = store_scan_open(&sc, s, v, p, sizeof(p));
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn;
		const unsigned char *k = (const unsigned char *)rocksdb_iter_key(sc.it, &kn);
		if (kn != keylen) {
			r = -EIO;
			break;
		}
		struct kx_digest last;
		memcpy(last.b, k + keylen - 32, 32);
		size_t vn;
		const char *val = rocksdb_iter_value(sc.it, &vn);
		r = fn(ctx, k, &last, val, vn);
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r;
}

struct each_ctx {
	void *fn;
	void *ctx;
	bool damaged; /* a record did not decode: passed over, and -EBADMSG at the end */
};

struct group_runs {
	struct kx_store *s;
	struct kx_view *v;
	kx_group_run_fn fn;
	void *ctx;
};

/* The record of a rank-index entry of run `run` whose value is val. */
static int index_entry_run(struct kx_store *s, struct kx_view *v, const struct kx_digest *run, const char *val,
			   size_t vn, struct kx_run_rec *ret)
{
	/* no copy (an older store), or one that does not decode: the run's own record serves, and
	 * `kindex verify` reports the entry */
	int r = vn ? store_run_decode(val, vn, ret) : -EINVAL;
	if (r < 0)
		r = kx_store_get_run(s, v, run, ret);
	if (r == -ENOENT)
		r = -EIO; /* an index entry for a run that is not there */
	if (r == 0)
		ret->run = *run;
	return r;
}

static int group_run_key(void *ctx, const unsigned char *key, const struct kx_digest *run, const char *val,
			 size_t vn)
{
	struct group_runs *g = ctx;
	struct kx_run_rec x;
	int r = index_entry_run(g->s, g->v, run, val, vn, &x);
	return r < 0 ? r : g->fn(g->ctx, &x, key[33] == 0); /* class 0: ranked */
}

int kx_store_group_runs(struct kx_store *s, struct kx_view *v, const struct kx_digest *group,
			kx_group_run_fn fn, void *ctx)
{
	struct group_runs g = { s, v, fn, ctx };
	return each_digest_key(s, v, T_INDEX, group, INDEX_KEY_LEN, group_run_key, &g);
}

/* A scan of the entries tagged `tag` of the groups whose key's first byte is in
 * [256 part / parts, 256 (part + 1) / parts), not filling the block cache (a pass over all). */
static int scan_part_open(struct scan *sc, struct kx_store *s, struct kx_view *v, unsigned char tag, unsigned part,
			  unsigned parts)
{
	if (!parts || part >= parts || parts > 256)
		return -EINVAL;
	unsigned char lo[2] = { tag, (unsigned char)(256 * part / parts) };
	unsigned char hi[2] = { tag, (unsigned char)(256 * (part + 1) / parts) }, end = tag + 1;
	bool last = part + 1 == parts;
	return scan_open_with(sc, s, v, lo, part ? 2 : 1, last ? &end : hi, last ? 1 : 2, false);
}

int kx_store_each_group_run(struct kx_store *s, struct kx_view *v, unsigned part, unsigned parts, kx_index_run_fn fn,
			    void *ctx)
{
	struct scan sc;
	int r = scan_part_open(&sc, s, v, T_INDEX, part, parts);
	if (r < 0)
		return r;
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn, vn;
		const unsigned char *k = (const unsigned char *)rocksdb_iter_key(sc.it, &kn);
		if (kn != INDEX_KEY_LEN) {
			r = -EIO;
			break;
		}
		struct kx_digest group, run;
		memcpy(group.b, k + 1, 32);
		memcpy(run.b, k + INDEX_KEY_LEN - 32, 32);
		const char *val = rocksdb_iter_value(sc.it, &vn);
		struct kx_run_rec x;
		if ((r = index_entry_run(s, v, &run, val, vn, &x)) < 0)
			break;
		r = fn(ctx, &group, &x, k[33] == 0);
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r;
}

bool kx_run_newer(int64_t a_ns, const struct kx_digest *a, int64_t b_ns, const struct kx_digest *b)
{
	if (a_ns != b_ns)
		return a_ns > b_ns;
	return memcmp(a->b, b->b, 32) > 0;
}

int store_currents_add(struct currents *c, const struct kx_run_rec *x)
{
	if (KX_GROW(c->v, c->cap, c->len, 16) < 0)
		return -ENOMEM;
	store_current_of(x, &c->v[c->len++]);
	return 0;
}

int kx_run_order(const char *a_impl, int64_t a_ns, const struct kx_digest *a, const char *b_impl, int64_t b_ns,
		 const struct kx_digest *b)
{
	int c = strcmp(a_impl, b_impl);
	return c ? c : kx_run_newer(a_ns, a, b_ns, b) ? -1 : kx_run_newer(b_ns, b, a_ns, a) ? 1 : 0;
}

static int impl_newest_first(const void *x, const void *y)
{
	const struct kx_current_rec *a = x, *b = y;
	return kx_run_order(a->impl, a->observed_ns, &a->run, b->impl, b->observed_ns, &b->run);
}

int store_currents_flush(struct currents *c, const struct kx_digest *group, kx_current_fn fn, void *ctx)
{
	if (c->len) /* (qsort's array may not be NULL, even empty) */
		qsort(c->v, c->len, sizeof(*c->v), impl_newest_first);
	int r = 0;
	for (size_t i = 0; i < c->len && r == 0; i++)
		if (i == 0 || strcmp(c->v[i].impl, c->v[i - 1].impl) != 0)
			r = fn(ctx, group, &c->v[i]);
	c->len = 0;
	return r;
}

void store_currents_release(struct currents *c)
{
	free(c->v);
	*c = (struct currents){ 0 };
}

struct from_index {
	kx_current_fn fn;
	void *ctx;
	bool have_group;
	struct kx_digest group;
	struct currents c;
};

static int from_index_run(void *ctx, const struct kx_digest *group, const struct kx_run_rec *x, bool ranked)
{
	struct from_index *f = ctx;
	int r = 0;
	if (f->have_group && !kx_digest_equal(&f->group, group))
		r = store_currents_flush(&f->c, &f->group, f->fn, f->ctx);
	f->group = *group;
	f->have_group = true;
	return r < 0 || !ranked ? r : store_currents_add(&f->c, x);
}

int store_currents_from_index(struct kx_store *s, struct kx_view *v, unsigned part, unsigned parts,
			      kx_current_fn fn, void *ctx)
{
	struct from_index f = { .fn = fn, .ctx = ctx };
	int r = kx_store_each_group_run(s, v, part, parts, from_index_run, &f);
	if (r == 0 && f.have_group)
		r = store_currents_flush(&f.c, &f.group, fn, ctx);
	store_currents_release(&f.c);
	return r;
}

int kx_store_each_current(struct kx_store *s, struct kx_view *v, unsigned part, unsigned parts, kx_current_fn fn,
			  void *ctx)
{
	if (!s->current_index)
		return store_currents_from_index(s, v, part, parts, fn, ctx);
	struct scan sc;
	int r = scan_part_open(&sc, s, v, T_CURRENT, part, parts);
	if (r < 0)
		return r;
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn, vn;
		const char *k = rocksdb_iter_key(sc.it, &kn);
		const char *val = rocksdb_iter_value(sc.it, &vn);
		struct kx_digest group;
		struct kx_current_rec c;
		if (kn <= 33 || kn - 33 >= sizeof(c.impl) || store_current_decode(val, vn, &c) < 0) {
			r = -EIO; /* `kindex verify` names it */
			break;
		}
		memcpy(group.b, k + 1, 32);
		memcpy(c.impl, k + 33, kn - 33);
		c.impl[kn - 33] = '\0';
		r = fn(ctx, &group, &c);
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r;
}

static int waiting_key(void *ctx, const unsigned char *key, const struct kx_digest *run, const char *val, size_t vn)
{
	struct each_ctx *e = ctx;
	return ((kx_digest_fn)e->fn)(e->ctx, run);
}

int kx_store_each_waiting(struct kx_store *s, struct kx_view *v, const struct kx_digest *doc, kx_digest_fn fn,
			  void *ctx)
{
	if (!s->waiting_index)
		return -EOPNOTSUPP; /* a schema-1 store read as it is: the index may lack runs */
	struct each_ctx e = { .fn = (void *)fn, .ctx = ctx };
	return each_digest_key(s, v, T_WAIT, doc, WAIT_KEY_LEN, waiting_key, &e);
}

#define ALIAS_KEY_LEN 65

static int alias_key(void *ctx, const unsigned char *key, const struct kx_digest *alias, const char *val, size_t vn)
{
	struct each_ctx *e = ctx;
	return ((kx_digest_fn)e->fn)(e->ctx, alias);
}

int kx_store_each_alias(struct kx_store *s, struct kx_view *v, const struct kx_digest *run, kx_digest_fn fn,
			void *ctx)
{
	struct each_ctx e = { .fn = (void *)fn, .ctx = ctx };
	return each_digest_key(s, v, T_ALIAS, run, ALIAS_KEY_LEN, alias_key, &e);
}

int kx_store_tree_list(struct kx_store *s, struct kx_view *v, const char *const *prefix,
		       size_t depth, kx_tree_fn fn, void *ctx)
{
	unsigned char p[1024];
	size_t n = 0;
	p[n++] = T_TREE;
	for (size_t i = 0; i < depth; i++) {
		size_t l = strlen(prefix[i]);
		if (n + l + 1 > sizeof(p) - 2)
			return -ENOENT;
		memcpy(p + n, prefix[i], l + 1);
		n += l + 1;
	}
	struct scan sc;
	int r = store_scan_open(&sc, s, v, p, n);
	while (r == 0 && rocksdb_iter_valid(sc.it)) {
		size_t kn, vn;
		const unsigned char *k = (const unsigned char *)rocksdb_iter_key(sc.it, &kn);
		const unsigned char *name = k + n;
		const unsigned char *nul = memchr(name, '\0', kn - n);
		if (!nul) {
			r = -EIO;
			break;
		}
		char comp[KX_NAME_MAX];
		size_t cl = (size_t)(nul - name);
		if (cl >= sizeof(comp)) {
			r = -EIO;
			break;
		}
		memcpy(comp, name, cl);
		comp[cl] = '\0';
		if (depth >= 3) {
			const unsigned char *val = (const unsigned char *)rocksdb_iter_value(sc.it, &vn);
			if (kn != n + cl + 1 + 32 || vn != 33) {
				r = -EIO;
				break;
			}
			struct kx_digest w, g;
			memcpy(w.b, nul + 1, 32);
			memcpy(g.b, val, 32);
			r = fn(ctx, comp, &w, &g, val[32] & 1);
			rocksdb_iter_next(sc.it);
		} else {
			r = fn(ctx, comp, NULL, NULL, false);
			/* skip everything under this component: seek to "<prefix><comp>\x01" */
			unsigned char next[1040];
			memcpy(next, k, n + cl);
			next[n + cl] = 0x01;
			rocksdb_iter_seek(sc.it, (const char *)next, n + cl + 1);
		}
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r;
}

int store_each_record(struct kx_store *s, struct kx_view *v, unsigned char tag, record_fn fn, void *ctx)
{
	struct scan sc;
	int r = store_scan_open(&sc, s, v, &tag, 1);
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn, vn;
		const char *k = rocksdb_iter_key(sc.it, &kn);
		const char *val = rocksdb_iter_value(sc.it, &vn);
		r = kn == 33 ? fn(ctx, (const uint8_t *)k + 1, val, vn) : -EIO;
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r;
}

static int run_record(void *ctx, const uint8_t key[32], const char *val, size_t vn)
{
	struct each_ctx *e = ctx;
	struct kx_run_rec x;
	if (store_run_decode(val, vn, &x) < 0) {
		e->damaged = true;
		return 0;
	}
	memcpy(x.run.b, key, 32);
	return ((kx_run_fn)e->fn)(e->ctx, &x);
}

int kx_store_each_run(struct kx_store *s, struct kx_view *v, kx_run_fn fn, void *ctx)
{
	struct each_ctx e = { .fn = (void *)fn, .ctx = ctx };
	int r = store_each_record(s, v, T_RUN, run_record, &e);
	return r == 0 && e.damaged ? -EBADMSG : r;
}

static const unsigned char record_tags[] = { T_DOC, T_RUN, T_GROUP };

int kx_store_find_bits(struct kx_store *s, struct kx_view *v, enum kx_record kind,
		       const uint8_t *prefix, unsigned bits, struct kx_digest *ret)
{
	if (bits < 8 || bits > 256 || kind > KX_RECORD_GROUP)
		return -ENOENT;
	unsigned char p[33] = { record_tags[kind] };
	size_t whole = bits / 8;
	memcpy(p + 1, prefix, whole);
	unsigned rest = bits % 8;
	unsigned char mask = (unsigned char)(0xff00 >> rest);
	struct scan sc = { 0 };
	rocksdb_iterator_t *it;
	if (v) { /* the view's own iterator (no upper bound: the loop stops past the prefix) */
		pthread_mutex_lock(&v->seek_lock);
		if (!v->seek_it)
			v->seek_it = rocksdb_create_iterator(v->db, v->ro);
		it = v->seek_it;
		rocksdb_iter_seek(it, (const char *)p, 1 + whole);
	} else {
		store_scan_open(&sc, s, NULL, p, 1 + whole); /* cannot fail: the prefix is short */
		it = sc.it;
	}
	struct kx_digest d;
	int found = 0;
	for (; rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		size_t kn;
		const unsigned char *k = (const unsigned char *)rocksdb_iter_key(it, &kn);
		if (kn < 1 + whole || memcmp(k, p, 1 + whole) != 0)
			break;
		if (kn != 33)
			continue;
		if (rest && (k[1 + whole] & mask) != (prefix[whole] & mask)) {
			if ((k[1 + whole] & mask) > (prefix[whole] & mask))
				break; /* keys are sorted: no later one can match */
			continue;
		}
		if (++found > 1)
			break;
		memcpy(d.b, k + 1, 32);
	}
	int r = iter_status(it);
	if (v)
		pthread_mutex_unlock(&v->seek_lock);
	store_scan_close(&sc);
	if (r < 0)
		return r;
	if (found == 1)
		*ret = d;
	return found == 1 ? 0 : found ? -ENOTUNIQ : -ENOENT;
}

int kx_store_find_run_prefix(struct kx_store *s, struct kx_view *v, const char *hex,
			     struct kx_digest *ret)
{
	size_t n = strlen(hex);
	uint8_t b[32] = { 0 };
	if (n < 2 || n > 64)
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		char c = hex[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return -ENOENT;
		b[i / 2] |= (uint8_t)(i % 2 ? d : d << 4);
	}
	return kx_store_find_bits(s, v, KX_RECORD_RUN, b, (unsigned)n * 4, ret);
}

static int digest_record(void *ctx, const uint8_t key[32], const char *val, size_t vn)
{
	struct each_ctx *e = ctx;
	struct kx_digest d;
	memcpy(d.b, key, 32);
	return ((kx_digest_fn)e->fn)(e->ctx, &d);
}

int kx_store_each_digest(struct kx_store *s, struct kx_view *v, enum kx_record kind, kx_digest_fn fn,
			 void *ctx)
{
	if (kind > KX_RECORD_GROUP)
		return -EINVAL;
	struct each_ctx e = { .fn = (void *)fn, .ctx = ctx };
	return store_each_record(s, v, record_tags[kind], digest_record, &e);
}

/* ---- transactions ----------------------------------------------------------------------------- */

static void txn_free(struct kx_txn *t)
{
	kx_buf_release(&t->bytes);
	free(t->ops);
	store_wmap_free(t->runs);
	store_wmap_free(t->sources);
	store_wmap_free(t->docbytes);
	store_wmap_free(t->dirty);
	store_wmap_free(t->stamped);
	store_undo_free(t->undo);
	free(t);
}

int kx_store_txn_begin(struct kx_store *s, struct kx_txn **ret)
{
	if (s->flags & KX_STORE_READONLY)
		return -EROFS;
	struct kx_txn *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->s = s;
	t->undo = store_undo_new();
	if (!t->undo) {
		free(t);
		return -ENOMEM;
	}
	t->runs = store_wmap_new(sizeof(struct kx_run_rec), SIZE_MAX);
	t->sources = store_wmap_new(32, SIZE_MAX);
	t->docbytes = store_wmap_new(sizeof(struct docbytes), SIZE_MAX);
	t->dirty = store_wmap_new(0, SIZE_MAX);
	t->stamped = store_wmap_new(0, SIZE_MAX);
	if (!t->runs || !t->sources || !t->docbytes || !t->dirty || !t->stamped) {
		txn_free(t);
		return -ENOMEM;
	}
	pthread_mutex_lock(&s->writer);
	*ret = t;
	return 0;
}

void kx_txn_abort(struct kx_txn *t)
{
	if (!t)
		return;
	store_undo_rollback(t->undo, 0);
	pthread_mutex_unlock(&t->s->writer);
	txn_free(t);
}

size_t kx_txn_count(const struct kx_txn *t)
{
	return t->nops;
}

void kx_txn_savepoint(struct kx_txn *t)
{
	t->has_save = true;
	t->save_ops = t->nops;
	t->save_bytes = t->bytes.len;
	t->save_undo = store_undo_mark(t->undo);
	t->save_runs = t->delta_runs;
	t->save_docs = t->delta_docs;
	t->save_groups = t->delta_groups;
}

void kx_txn_rollback(struct kx_txn *t)
{
	if (!t->has_save)
		return;
	t->nops = t->save_ops;
	t->bytes.len = t->save_bytes;
	store_undo_rollback(t->undo, t->save_undo);
	t->delta_runs = t->save_runs;
	t->delta_docs = t->save_docs;
	t->delta_groups = t->save_groups;
	t->has_save = false;
}

static int txn_get(struct kx_txn *t, const void *k, size_t kn, struct kx_buf *out)
{
	char *err = NULL;
	size_t n = 0;
	char *v = rocksdb_get(t->s->db, t->s->ro, k, kn, &n, &err);
	if (err) {
		int r = store_errno(err);
		rocksdb_free(err);
		return r;
	}
	if (!v)
		return -ENOENT;
	int r = 0;
	if (out) {
		kx_buf_reset(out);
		r = kx_buf_append(out, v, n);
	}
	rocksdb_free(v);
	return r;
}

static int txn_put(struct kx_txn *t, const void *k, size_t kn, const void *v, size_t vn)
{
	if (KX_GROW(t->ops, t->capops, t->nops, 256) < 0)
		return -ENOMEM;
	struct op *o = &t->ops[t->nops];
	o->k = t->bytes.len;
	o->kn = kn;
	o->v = t->bytes.len + kn;
	o->vn = vn;
	if (kx_buf_append(&t->bytes, k, kn) < 0 || kx_buf_append(&t->bytes, v, vn) < 0)
		return -ENOMEM;
	t->nops++;
	return 0;
}

static int txn_put_u64(struct kx_txn *t, const void *k, size_t kn, uint64_t v)
{
	unsigned char b[8];
	store_put_u64(b, v);
	return txn_put(t, k, kn, b, 8);
}

static int op_cmp(const void *x, const void *y, void *arg)
{
	const struct kx_txn *t = arg;
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	const struct op *a = &t->ops[i], *b = &t->ops[j];
	size_t n = a->kn < b->kn ? a->kn : b->kn;
	int c = memcmp(t->bytes.ptr + a->k, t->bytes.ptr + b->k, n);
	if (c)
		return c;
	if (a->kn != b->kn)
		return a->kn < b->kn ? -1 : 1;
	return i < j ? -1 : i > j; /* stable: later writes of a key stay later */
}

static int put_group(void *ctx, const uint8_t key[32], void *value)
{
	struct kx_txn *t = ctx;
	const struct kx_group_rec *g = store_wmap_get(t->s->groups, key);
	if (!g)
		return -EIO; /* a dirty group is always cached: the cache is only cleared after commits */
	struct kx_buf b = { 0 };
	int r = store_group_encode(g, &b);
	if (r == 0) {
		struct key k;
		store_key_digest(&k, T_GROUP, &g->key);
		r = txn_put(t, k.b, k.len, b.ptr, b.len);
	}
	kx_buf_release(&b);
	return r;
}

int kx_txn_commit_gen(struct kx_txn *t, bool sync, uint64_t *ret_generation)
{
	struct kx_store *s = t->s;
	int gr = store_wmap_each(t->dirty, put_group, t);
	if (gr < 0) {
		kx_txn_abort(t);
		return gr;
	}
	/* the counters are the writer's (it holds the mutex): no read-modify-write through RocksDB */
	int pr = txn_put_u64(t, KEYLIT(K_GEN), s->gen + 1);
	if (pr == 0)
		pr = txn_put_u64(t, KEYLIT(K_CHANGED), (uint64_t)kx_now_ns());
	if (pr == 0 && t->delta_runs)
		pr = txn_put_u64(t, KEYLIT(K_COUNT_RUNS), s->n_runs + (uint64_t)t->delta_runs);
	if (pr == 0 && t->delta_docs)
		pr = txn_put_u64(t, KEYLIT(K_COUNT_DOCS), s->n_docs + (uint64_t)t->delta_docs);
	if (pr == 0 && t->delta_groups)
		pr = txn_put_u64(t, KEYLIT(K_COUNT_GROUPS), s->n_groups + (uint64_t)t->delta_groups);
	if (pr < 0) {
		kx_txn_abort(t);
		return pr;
	}
	/* key order, and among writes of one key the order they were made (the last one wins) */
	size_t *order = malloc((t->nops ? t->nops : 1) * sizeof(*order));
	if (!order) {
		kx_txn_abort(t);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->nops; i++)
		order[i] = i;
	qsort_r(order, t->nops, sizeof(*order), op_cmp, t);
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	for (size_t i = 0; i < t->nops; i++) {
		const struct op *o = &t->ops[order[i]];
		rocksdb_writebatch_put(wb, t->bytes.ptr + o->k, o->kn, t->bytes.ptr + o->v, o->vn);
	}
	free(order);
	int r = store_write(s, s->wo, wb);
	rocksdb_writebatch_destroy(wb);
	if (r < 0) {
		store_undo_rollback(t->undo, 0); /* nothing was written: the caches go back too */
	} else {
		s->gen++;
		if (ret_generation)
			*ret_generation = s->gen; /* this commit's own, whatever commits after it */
		s->n_runs += (uint64_t)t->delta_runs;
		s->n_docs += (uint64_t)t->delta_docs;
		s->n_groups += (uint64_t)t->delta_groups;
	}
	/* caches are bounded: past their bound they start over (RocksDB is the authority) */
	if (store_wmap_over(s->docs))
		store_wmap_clear(s->docs);
	if (store_wmap_over(s->groups))
		store_wmap_clear(s->groups);
	if (store_wmap_over(s->mtimes))
		store_wmap_clear(s->mtimes);
	if (store_wmap_over(s->currents))
		store_wmap_clear(s->currents);
	if (store_wmap_over(s->names))
		store_wmap_clear(s->names);
	pthread_mutex_unlock(&s->writer);
	txn_free(t);
	/*
	 * The log is synced after the writer's lock is let go: writers that commit meanwhile (eight
	 * `cp` into the inbox) wait in the same sync or share the next — a group commit — instead of
	 * queueing one fdatasync each behind the lock. Until it returns the commit is visible but not
	 * yet durable; the caller answers only after.
	 */
	if (r == 0 && sync)
		r = kx_store_sync(s);
	return r;
}

int kx_txn_get_run(struct kx_txn *t, const struct kx_digest *d, struct kx_run_rec *ret)
{
	const struct kx_run_rec *c = store_wmap_get(t->runs, d->b);
	if (c) {
		*ret = *c;
		return 0;
	}
	return kx_store_get_run(t->s, NULL, d, ret);
}

int kx_txn_get_group(struct kx_txn *t, const struct kx_digest *key, struct kx_group_rec *ret)
{
	const struct kx_group_rec *c = store_wmap_get(t->s->groups, key->b);
	if (c) {
		*ret = *c;
		return 0;
	}
	int r = kx_store_get_group(t->s, NULL, key, ret);
	if (r == 0 && store_undo_note(t->undo, t->s->groups, key->b) == 0)
		store_wmap_put(t->s->groups, key->b, ret);
	return r;
}

bool kx_txn_has_doc(struct kx_txn *t, const struct kx_digest *d)
{
	if (store_wmap_get(t->s->docs, d->b))
		return true;
	struct key k;
	store_key_digest(&k, T_DOC, d);
	if (txn_get(t, k.b, k.len, NULL) < 0)
		return false;
	if (store_undo_note(t->undo, t->s->docs, d->b) == 0)
		store_wmap_put(t->s->docs, d->b, NULL);
	return true;
}

int kx_txn_get_doc(struct kx_txn *t, const struct kx_digest *d, struct kx_buf *out)
{
	const struct docbytes *c = store_wmap_get(t->docbytes, d->b);
	if (c) {
		const struct op *o = &t->ops[c->op];
		kx_buf_reset(out);
		return kx_buf_append(out, t->bytes.ptr + o->v, o->vn);
	}
	return kx_store_get_doc(t->s, NULL, d, out);
}

static void source_hash(const struct key *k, uint8_t out[32])
{
	kx_sha256(k->b, k->len, out);
}

int kx_txn_find_source(struct kx_txn *t, const char *source, const char *external_id,
		       struct kx_digest *ret)
{
	struct key k;
	if (store_key_source(&k, source, external_id) < 0)
		return -ENOENT;
	uint8_t h[32];
	source_hash(&k, h);
	const uint8_t *c = store_wmap_get(t->sources, h);
	if (c) {
		memcpy(ret->b, c, 32);
		return 0;
	}
	return kx_store_find_source(t->s, NULL, source, external_id, ret);
}

int kx_txn_claim_name(struct kx_txn *t, char level, const char *component, const char *name, struct kx_buf *ret_other)
{
	struct key k;
	if (store_key_name(&k, level, component) < 0)
		return -ENAMETOOLONG;
	uint8_t h[32], want[32], have[32];
	kx_sha256(k.b, k.len, h);
	kx_sha256(name, strlen(name), want);
	/* the writer's cache knows who holds most components: this name, or another */
	const uint8_t *cached = store_wmap_get(t->s->names, h);
	if (cached && memcmp(cached, want, 32) == 0)
		return 0;
	struct kx_buf b = { 0 }; /* the committed owner ("" for one of this transaction) */
	int r = txn_get(t, k.b, k.len, &b);
	if (r == 0)
		kx_sha256(b.ptr, b.len, have);
	if (r == 0 || r == -ENOENT) {
		if (cached || (r == 0 && memcmp(have, want, 32) != 0))
			r = ret_other && kx_buf_append(ret_other, b.ptr ? b.ptr : "", b.len) < 0 ? -ENOMEM : 1;
		else if ((r == -ENOENT && txn_put(t, k.b, k.len, name, strlen(name)) < 0) ||
			 store_undo_note(t->undo, t->s->names, h) < 0 || !store_wmap_put(t->s->names, h, want))
			r = -ENOMEM; /* the name claims it now, or the writer learns that it holds it */
		else
			r = 0;
	}
	kx_buf_release(&b);
	return r;
}

int kx_txn_put_doc(struct kx_txn *t, const struct kx_digest *d, const char *jcs, size_t len)
{
	if (kx_txn_has_doc(t, d))
		return 0;
	struct key k;
	store_key_digest(&k, T_DOC, d);
	if (txn_put(t, k.b, k.len, jcs, len) < 0)
		return -ENOMEM;
	t->delta_docs++;
	if (store_undo_note(t->undo, t->s->docs, d->b) == 0)
		store_wmap_put(t->s->docs, d->b, NULL);
	/* where the bytes are, for a later manifest of this transaction that references the document
	 * (a rollback truncates the ops and undoes this entry together) */
	struct docbytes db = { t->nops - 1 };
	if (store_undo_note(t->undo, t->docbytes, d->b) < 0 || !store_wmap_put(t->docbytes, d->b, &db))
		return -ENOMEM;
	return 0;
}

static int bump_mtime(struct kx_txn *t, const char *path, int64_t ns)
{
	struct key k;
	int r = store_key_mtime(&k, path);
	if (r < 0)
		return r;
	uint8_t h[32];
	kx_sha256(path, strlen(path), h);
	const int64_t *c = store_wmap_get(t->s->mtimes, h);
	int64_t old = INT64_MIN;
	if (c) {
		old = *c;
	} else {
		struct kx_buf b = { 0 };
		r = txn_get(t, k.b, k.len, &b);
		if (r == 0 && b.len == 8)
			old = (int64_t)store_get_u64((const unsigned char *)b.ptr);
		kx_buf_release(&b);
		if (r < 0 && r != -ENOENT)
			return r;
	}
	/*
	 * A commit moves the mtime of every directory it changes forward, even when its time is not
	 * later (a clock stepped back): the mtime is the stamp the tree's caches and the daemon's
	 * inode versions key on, so a change must never keep the stamp it had before. Runs of one
	 * transaction share its stamp.
	 */
	bool mine = store_wmap_get(t->stamped, h) != NULL;
	if (!mine && old != INT64_MIN && ns <= old)
		ns = old + 1;
	if (ns <= old) {
		if (!c && store_undo_note(t->undo, t->s->mtimes, h) == 0)
			store_wmap_put(t->s->mtimes, h, &old);
		return 0;
	}
	if (txn_put_u64(t, k.b, k.len, (uint64_t)ns) < 0)
		return -ENOMEM;
	if (store_undo_note(t->undo, t->s->mtimes, h) == 0)
		store_wmap_put(t->s->mtimes, h, &ns);
	if (!mine && (store_undo_note(t->undo, t->stamped, h) < 0 || !store_wmap_put(t->stamped, h, NULL)))
		return -ENOMEM;
	return 0;
}

/* The mtimes of the directories above group g's: benchmarks/, its kernel, pass and gpu. */
static int bump_dirs(struct kx_txn *t, const struct kx_group_rec *g, int64_t ns)
{
	char path[4 * KX_NAME_MAX + 32] = "benchmarks";
	size_t n = strlen(path);
	const char *parts[] = { g->kernel, g->pass, g->gpu };
	int r = bump_mtime(t, path, ns);
	for (size_t i = 0; i < KX_ARRAY_SIZE(parts) && r >= 0; i++) {
		size_t l = strlen(parts[i]);
		path[n++] = '/';
		memcpy(path + n, parts[i], l + 1);
		n += l;
		r = bump_mtime(t, path, ns);
	}
	return r;
}

struct waiting {
	struct kx_txn *t;
	int64_t ns;
};

static int bump_waiting_run(void *ctx, const struct kx_digest *run)
{
	struct waiting *w = ctx;
	struct kx_run_rec x;
	struct kx_group_rec g;
	int r = kx_store_get_run(w->t->s, NULL, run, &x);
	if (r == 0)
		r = kx_txn_get_group(w->t, &x.group, &g);
	return r == -ENOENT ? 0 : r < 0 ? r : bump_dirs(w->t, &g, w->ns);
}

/*
 * Document d, stored by this transaction, was missing for runs stored before it (the W index):
 * they gain a file and their manifest.json, summary.txt and SHA256SUMS change, so the directories
 * above their groups move forward like those of any run added — their mtime is the stamp those
 * files are versioned by (src/fs/versions.c), and a change must not keep it.
 */
static int bump_waiting(struct kx_txn *t, const struct kx_digest *d, int64_t ns)
{
	struct waiting w = { t, ns };
	return kx_store_each_waiting(t->s, NULL, d, bump_waiting_run, &w);
}

/* Ranked run x becomes its implementation's current run in its group ('C') when it is newer than
 * the one there (kx_run_newer); the writer keeps what it knows of each key in s->currents. */
static int note_current(struct kx_txn *t, const struct kx_run_rec *x)
{
	struct key k;
	uint8_t h[32];
	store_key_current(&k, &x->group, x->impl);
	kx_sha256(k.b, k.len, h);
	struct current_mark m = { .present = false };
	const struct current_mark *known = store_wmap_get(t->s->currents, h);
	struct kx_buf b = { 0 };
	int r = 0;
	if (known) {
		m = *known;
	} else if ((r = txn_get(t, k.b, k.len, &b)) == 0) {
		struct kx_current_rec c;
		if ((r = store_current_decode(b.ptr, b.len, &c)) == 0)
			m = (struct current_mark){ true, c.observed_ns, c.run };
	}
	if (r == -ENOENT)
		r = 0;
	bool take = r == 0 && (!m.present || kx_run_newer(x->observed_ns, &x->run, m.observed_ns, &m.run));
	if (take) {
		struct kx_current_rec c;
		store_current_of(x, &c);
		kx_buf_reset(&b);
		m = (struct current_mark){ true, x->observed_ns, x->run };
		if ((r = store_current_encode(&c, &b)) == 0)
			r = txn_put(t, k.b, k.len, b.ptr, b.len);
	}
	if (r == 0 && (take || !known) &&
	    (store_undo_note(t->undo, t->s->currents, h) < 0 || !store_wmap_put(t->s->currents, h, &m)))
		r = -ENOMEM;
	kx_buf_release(&b);
	return r;
}

/*
 * Group g changes in this transaction at ns: its record, with its last change moved forward, is
 * written at commit. *ret_bump: the directories above it need their mtimes moved too — directory
 * mtimes only move forward: a group this transaction already changed at this time needs no bump;
 * one it changes first always gets one (bump_mtime), later clock or not.
 */
static int touch_group(struct kx_txn *t, struct kx_group_rec *g, int64_t ns, bool *ret_bump)
{
	*ret_bump = ns > g->changed_ns || !store_wmap_get(t->dirty, g->key.b);
	if (*ret_bump)
		g->changed_ns = ns > g->changed_ns ? ns : g->changed_ns + 1;
	if (store_undo_note(t->undo, t->s->groups, g->key.b) < 0 || !store_wmap_put(t->s->groups, g->key.b, g) ||
	    store_undo_note(t->undo, t->dirty, g->key.b) < 0 || !store_wmap_put(t->dirty, g->key.b, NULL))
		return -ENOMEM;
	return 0;
}

/* A run's record under 'R', and in the transaction's map of runs (kx_txn_get_run). */
static int put_run(struct kx_txn *t, const struct kx_run_rec *run, struct kx_buf *b)
{
	struct kx_run_rec rec = *run;
	rec.generation = t->s->gen + 1; /* the generation this transaction's commit creates */
	struct key k;
	int r = store_run_encode(&rec, b);
	store_key_digest(&k, T_RUN, &run->run);
	if (r == 0 && (r = txn_put(t, k.b, k.len, b->ptr, b->len)) == 0 &&
	    (store_undo_note(t->undo, t->runs, run->run.b) < 0 || !store_wmap_put(t->runs, run->run.b, run)))
		r = -ENOMEM;
	return r;
}

/* The 'W' entries of a run whose workload or implementation document is not stored (yet). */
static int put_waiting(struct kx_txn *t, const struct kx_run_rec *run)
{
	const struct kx_digest *named[] = { &run->workload, &run->implementation };
	int r = 0;
	for (size_t i = 0; i < KX_ARRAY_SIZE(named) && r == 0; i++) {
		if (kx_txn_has_doc(t, named[i]))
			continue;
		struct key k;
		store_key_wait(&k, named[i], &run->run);
		r = txn_put(t, k.b, k.len, "", 0);
	}
	return r;
}

int kx_txn_add_alias(struct kx_txn *t, const struct kx_run_rec *alias)
{
	struct kx_run_rec of;
	struct kx_group_rec g;
	int r = kx_txn_get_run(t, &alias->alias_of, &of);
	if (r == 0 && of.alias)
		return -EINVAL; /* an alias of an alias: the caller names the run itself */
	if (r == 0)
		r = kx_txn_get_group(t, &of.group, &g);
	if (r < 0)
		return r;
	struct kx_run_rec x = *alias;
	x.alias = true;
	x.group = of.group;
	snprintf(x.impl, sizeof(x.impl), "%s", of.impl);
	/* the run's summary.txt and DIGESTS now name the alias: its group changes, as for a drop */
	bool bump;
	struct kx_buf b = { 0 };
	struct key k;
	if ((r = touch_group(t, &g, x.ingested_ns, &bump)) == 0 && (r = put_run(t, &x, &b)) == 0 &&
	    (r = put_waiting(t, &x)) == 0) {
		store_key_alias(&k, &of.run, &x.run);
		r = txn_put(t, k.b, k.len, "", 0);
	}
	if (r == 0 && bump)
		r = bump_dirs(t, &g, x.ingested_ns);
	kx_buf_release(&b);
	return r;
}

int kx_txn_add_run(struct kx_txn *t, const struct kx_run_rec *run, const struct kx_group_rec *group,
		   const char *source, const char *external_id)
{
	struct kx_group_rec g;
	int r = kx_txn_get_group(t, &run->group, &g);
	struct key k;
	if (r == -ENOENT) {
		g = *group;
		g.key = run->group;
		g.ranked = g.unranked = 0;
		g.changed_ns = 0;
		if ((r = store_key_tree(&k, &g)) < 0)
			return r;
		unsigned char tv[TREE_VALUE_LEN];
		store_tree_value(&g, tv);
		if (txn_put(t, k.b, k.len, tv, sizeof(tv)) < 0)
			return -ENOMEM;
		t->delta_groups++;
	} else if (r < 0) {
		return r;
	}
	if (run->passed && run->has_value)
		g.ranked++;
	else
		g.unranked++;
	bool bump;
	struct kx_buf b = { 0 };
	if ((r = touch_group(t, &g, run->ingested_ns, &bump)) < 0)
		goto out;

	if ((r = put_run(t, run, &b)) < 0)
		goto out;
	store_key_index(&k, run);
	if ((r = txn_put(t, k.b, k.len, b.ptr, b.len)) < 0) /* the record again: kx_store_group_runs */
		goto out;
	if (run->passed && run->has_value && (r = note_current(t, run)) < 0)
		goto out;
	/* a document it names but that is not here (yet): the run waits for it (kx_store_each_waiting) */
	if ((r = put_waiting(t, run)) < 0)
		goto out;
	const struct kx_digest *named[] = { &run->workload, &run->implementation };

	if (source && external_id) {
		if ((r = store_key_source(&k, source, external_id)) < 0)
			goto out;
		if ((r = txn_put(t, k.b, k.len, run->run.b, 32)) < 0)
			goto out;
		uint8_t h[32];
		source_hash(&k, h);
		if (store_undo_note(t->undo, t->sources, h) < 0 || !store_wmap_put(t->sources, h, run->run.b)) {
			r = -ENOMEM;
			goto out;
		}
	}
	r = bump ? bump_dirs(t, &g, run->ingested_ns) : 0;
	for (size_t i = 0; i < KX_ARRAY_SIZE(named) && r >= 0; i++)
		if (store_wmap_get(t->docbytes, named[i]->b))
			r = bump_waiting(t, named[i], run->ingested_ns);
	t->delta_runs++;
out:
	kx_buf_release(&b);
	return r < 0 ? r : 0;
}

