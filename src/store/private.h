/* SPDX-License-Identifier: MIT */
/*
 * Private to src/store: the handle and the view, and what the files of the folder call in each
 * other, under the file that defines it. The files, each calling only those before it: keys.c
 * (keys.h) and wcache.c (wcache.h), then db.c, follow.c, read.c, scan.c, artifact.c, names.c,
 * upgrade.c, txn.c, table.cc, verify.c, store.c, recover.c.
 */
#ifndef KX_STORE_PRIVATE_H
#define KX_STORE_PRIVATE_H

#include "keys.h"
#include "wcache.h"

#include <pthread.h>
#include <rocksdb/c.h>

/* The handle: kx_store_open (store.c) makes it, kx_store_close frees it. */
struct kx_store {
	rocksdb_t *db;
	rocksdb_options_t *opts;
	rocksdb_block_based_table_options_t *table;
	rocksdb_cache_t *cache;
	rocksdb_filterpolicy_t *filter; /* owned by `table` once set */
	rocksdb_readoptions_t *ro;      /* latest state */
	rocksdb_readoptions_t *ro_bare; /* the same, RocksDB's checksums not verified: for the chunks
					 * that carry their own (artifact.c) */
	rocksdb_writeoptions_t *wo, *wo_sync;
	pthread_mutex_t writer;
	pthread_rwlock_t wal; /* a sync of the log (read) against a write (store_write) */
	int wal_error;        /* the last write's error: a sync is refused while it is set */
	uint64_t logged;      /* bytes of the batches written since the open (under wal) */
	char *path;
	char *lockfile; /* written by kx_store_claim */
	char *damage;   /* KX_STORE_VERIFY: RocksDB's error that refused the plain open (a damaged table) */
	unsigned flags;
	bool waiting_index; /* the 'W' index is complete: schema 2 or later, or upgraded at a writable open */
	bool index_copies;  /* every 'I' entry holds its run's record: K_INDEX_COPIES, or upgraded likewise */
	bool current_index; /* the 'C' index is complete: schema 3, or upgraded at a writable open */
	/* the writer's copy of the counters (valid while it holds `writer`; loaded at open) */
	uint64_t gen, n_runs, n_docs, n_groups;
	struct wmap *docs, *groups, *mtimes; /* writer caches (wcache.h); NULL when read-only */
	struct wmap *currents;               /* sha256('C' key) → struct current_mark, likewise */
	struct wmap *names;                  /* sha256('N' key) → sha256(the name that owns it), likewise */
	/* KX_STORE_FOLLOW: the generation now read (db is its), swapped by kx_store_follow */
	pthread_mutex_t follow;
	struct dbh *cur;
};

/* What the writer knows of a 'C' key (s->currents): the run it names, or that there is none. */
struct current_mark {
	bool present;
	int64_t observed_ns;
	struct kx_digest run;
};

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

/* A view (read.c): a snapshot of the database it was made over. */
struct kx_view {
	struct kx_store *s;
	rocksdb_t *db;  /* the database the snapshot is of (a follower's changes: kx_store_follow) */
	struct dbh *dbh; /* its reference on it when following, else NULL */
	const rocksdb_snapshot_t *snap;
	rocksdb_readoptions_t *ro, *ro_bare; /* ro_bare: as kx_store's */
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

/* A read's options and database: the view's, or the latest state's (v NULL). */
static inline const rocksdb_readoptions_t *ro_of(struct kx_store *s, struct kx_view *v)
{
	return v ? v->ro : s->ro;
}

static inline const rocksdb_readoptions_t *ro_bare_of(struct kx_store *s, struct kx_view *v)
{
	return v ? v->ro_bare : s->ro_bare;
}

static inline rocksdb_t *db_of(struct kx_store *s, struct kx_view *v)
{
	return v ? v->db : s->db;
}

#define KEYLIT(k) (k), (sizeof(k) - 1)

#define STORE_WRITE_BUFFER (16u << 20) /* a memtable's bytes before RocksDB writes it out */

/* ---- db.c -------------------------------------------------------------------------------------- */

/* A RocksDB status (the C API's error text) as a negative errno, by its code; 0 for none. */
int store_errno(const char *err);
int store_write(struct kx_store *s, const rocksdb_writeoptions_t *wo, rocksdb_writebatch_t *wb);
/* The value of key k in db (-ENOENT when there is none), into out when not NULL; store_get_raw
 * reads the store's current database, store_read_u64_in a u64 value (*ret 0 when missing or not
 * one; the read's status returned), store_get_u64_in the same for callers that want no status. */
int store_get_in(rocksdb_t *db, const rocksdb_readoptions_t *ro, const void *k, size_t kn, struct kx_buf *out);
int store_get_raw(struct kx_store *s, const rocksdb_readoptions_t *ro, const void *k, size_t kn, struct kx_buf *out);
int store_read_u64_in(rocksdb_t *db, const rocksdb_readoptions_t *ro, const char *k, size_t kn, uint64_t *ret);
uint64_t store_get_u64_in(rocksdb_t *db, const rocksdb_readoptions_t *ro, const char *k, size_t kn);

/* ---- follow.c ---------------------------------------------------------------------------------- */

int store_dbh_open(struct kx_store *s, const char *dir, struct dbh **ret, char **ret_msg);
void store_dbh_put(struct kx_store *s, struct dbh *h); /* drops a reference; NULL does nothing */

/* ---- scan.c ------------------------------------------------------------------------------------ */

/* An iterator over the keys under a prefix, in a view or the latest state. */
struct scan {
	rocksdb_readoptions_t *ro;
	rocksdb_iterator_t *it;
	unsigned char upper[1040];
	size_t upper_len;
};

int store_scan_open(struct scan *sc, struct kx_store *s, struct kx_view *v, const void *prefix, size_t n);
/* The same for a scan that reads through a whole key family: it leaves the block cache to point reads. */
int store_scan_open_through(struct scan *sc, struct kx_store *s, struct kx_view *v, const void *prefix, size_t n);
void store_scan_close(struct scan *sc);
int store_scan_status(struct scan *sc);

/* Every record of one tag, key and value; the callback's non-zero return stops the scan. */
typedef int (*record_fn)(void *ctx, const uint8_t key[32], const char *val, size_t vn);
int store_each_record(struct kx_store *s, struct kx_view *v, unsigned char tag, record_fn fn, void *ctx);

/*
 * A group's current runs worked out from its runs (kx_store_group_runs or a scan of the rank
 * index): add each ranked one, then flush hands fn each implementation's newest (kx_run_newer), in
 * implementation name order, and empties the set for the next group.
 */
struct currents {
	struct kx_current_rec *v;
	size_t len, cap;
};

int store_currents_add(struct currents *c, const struct kx_run_rec *x);
int store_currents_flush(struct currents *c, const struct kx_digest *group, kx_current_fn fn, void *ctx);
void store_currents_release(struct currents *c);

/* The current runs of every group of a part, worked out from the rank index (a store without the
 * 'C' index; the upgrade that writes it). */
int store_currents_from_index(struct kx_store *s, struct kx_view *v, unsigned part, unsigned parts,
			      kx_current_fn fn, void *ctx);

/* ---- names.c ----------------------------------------------------------------------------------- */

/*
 * Path components worked out again from the stored documents (SPEC §2), and every
 * (component, exact name) pair met. store_names_run: run x's implementation component (its
 * document's name, or the externalId's segment: pass it when known, else the run document is
 * read) and, when gpu is not NULL, its GPU's ("" when the environment is not stored).
 * store_names_group: a group's kernel and pass components. store_names_collisions: fn for every
 * two names of one level that share a component; store_names_each: for every pair, in order.
 * Zero-initialize, then store_names_release.
 */
struct store_names {
	struct names_memo *impls, *envs;
	size_t nimpls, cap_impls, nenvs, cap_envs;
	struct names_pair *pairs;
	size_t npairs, cap_pairs;
};
int store_names_run(struct store_names *n, struct kx_store *s, const struct kx_run_rec *x, const char *external_id,
		    char impl[KX_NAME_MAX], char gpu[KX_NAME_MAX]);
int store_names_group(struct store_names *n, const struct kx_group_rec *g, char kernel[KX_NAME_MAX],
		      char pass[KX_NAME_MAX]);
int store_names_collisions(const struct store_names *n,
			   int (*fn)(void *ctx, char level, const char *comp, const char *a, const char *b), void *ctx);
int store_names_each(const struct store_names *n, int (*fn)(void *ctx, char level, const char *comp, const char *name),
		     void *ctx);
const char *store_names_level(char level); /* "implementations", "GPUs", "kernels", "passes" */
void store_names_release(struct store_names *n);

/* ---- artifact.c -------------------------------------------------------------------------------- */

/* An artifact record's bytes ('F' value). */
void store_artifact_encode(const struct kx_artifact_rec *a, unsigned char out[ARTIFACT_VALUE_LEN]); /* version 2 */
int store_artifact_decode(const char *p, size_t n, struct kx_artifact_rec *a); /* -EIO: not one */

/* ---- table.cc ---------------------------------------------------------------------------------- */

/* Read the table file at `path` through, every block's checksum checked: 0; -1 with RocksDB's
 * status in *ret_err (malloc'd, naming the file; store_errno reads it); -ENOMEM. */
int store_table_check(const char *path, char **ret_err);

/* ---- upgrade.c --------------------------------------------------------------------------------- */

/* The upgrade from `from` to this kindex's schema, at a writable open. */
int store_upgrade(struct kx_store *s, int from, const char *schema);

/* ---- store.c ----------------------------------------------------------------------------------- */

#define STORE_SALVAGE (1u << 16) /* kx_store_recover: point-in-time recovery of a damaged log */
/* The number of a write-ahead log's file name ("000123.log"), or 0 for any other name. */
unsigned long long store_wal_number(const char *name);
/* Whether `dir` is a replica generation (it holds PUBLISHED), which nothing writes; the message that
 * refuses to `what` it (malloc'd, or NULL). */
bool store_is_generation(const char *dir);
char *store_generation_refused(const char *dir, const char *what);

#endif
