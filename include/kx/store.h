/* SPDX-License-Identifier: MIT */
/*
 * The RocksDB store: documents by digest, runs, comparison groups whose index order *is* the
 * ranking, the (source, externalId) conflict index, the path index the tree is listed from, and
 * directory mtimes. The key layout is documented in docs/store.md; this module is the only one
 * that includes rocksdb/c.h.
 *
 * Reading: every read takes a `struct kx_view` — a RocksDB snapshot — so a listing, a file and
 * its SHA256SUMS are always rendered from one consistent state; NULL means "the latest state".
 * Views are cheap; release them.
 *
 * Writing: a `struct kx_txn` collects its writes in memory; reads through the transaction see its
 * own writes, and kx_txn_commit_gen hands RocksDB all of them as one WriteBatch, its keys sorted, so
 * it applies atomically (all or nothing). One writer at a time:
 * kx_store_txn_begin serialises writers with a mutex. Every commit bumps the store generation,
 * which caches key on.
 *
 * Thread safety: a store handle, views and read calls may be used from any thread concurrently.
 * A transaction belongs to one thread.
 */
#ifndef KX_STORE_H
#define KX_STORE_H

#include "kx/manifest.h"
#include "kx/records.h"

#define KX_STORE_SCHEMA 4

struct kx_store;
struct kx_view;
struct kx_txn;

enum {
	KX_STORE_CREATE = 1 << 0,   /* create an empty store when there is none (kindex init) */
	KX_STORE_READONLY = 1 << 1, /* open without the write lock (concurrent with a writer) */
	KX_STORE_SYNC = 1 << 2,     /* fsync the WAL on every commit */
	KX_STORE_LEAN = 1 << 3,     /* a 16 MiB block cache, not 32: a long-lived daemon (kindexfs) */
	KX_STORE_FOLLOW = 1 << 4,   /* a replica's generation (implies READONLY): kx_store_follow below */
	KX_STORE_VERIFY = 1 << 5,   /* for kx_store_verify (implies READONLY): a table that cannot be read
				     * does not refuse the open; verify names it and reads the rest */
};

/*
 * Open the store in `dir`. On failure *ret_err (if given) receives a malloc'd explanation:
 * "no store here (run kindex init)", "in use by kindexfs pid 123 mounted at /mnt",
 * RocksDB's own message. Errors: -ENOENT (no store), -ENOTDIR (`dir` is a file, or not a
 * directory), -EBUSY (locked by another writer),
 * -EPROTO (schema of another version), -EUCLEAN (damaged: a damaged write-ahead log is named as
 * such, see kx_store_recover), -ENOSPC (no room for what opening writes), -EROFS (opened to write,
 * but `dir` holds PUBLISHED: a replica generation, which nothing writes), -EIO.
 */
int kx_store_open(const char *dir, unsigned flags, struct kx_store **ret, char **ret_err);
void kx_store_close(struct kx_store *s);
const char *kx_store_path(const struct kx_store *s);

/*
 * Persist the WAL now (used after bulk ingests that committed without sync). Refused, with the
 * write's error (-ENOSPC on a full disk), after a commit that could not be written, until a commit
 * succeeds again: RocksDB resumes by itself once the disk has room.
 */
int kx_store_sync(struct kx_store *s);

/*
 * Open a store that kx_store_open refuses because its write-ahead log is damaged (-EUCLEAN, "its
 * write-ahead log is damaged"): copy every log as it is into DIR/lost+found/<time>/, open the store
 * as it stood before the first damaged record (RocksDB's point-in-time recovery: the writes logged
 * after the damage are dropped) and record the loss, which kx_store_losses, `kindex verify` and the
 * mount's README then show. *ret_report: a malloc'd line saying what was done (also when the store
 * opened as it is: it is opened read-only then, and nothing is written). -EROFS for a replica
 * generation (`dir` holds PUBLISHED). On failure *ret_err says why (malloc'd).
 */
int kx_store_recover(const char *dir, char **ret_report, char **ret_err);
/* The losses kx_store_recover recorded, a line each, appended to `out` (nothing when none). */
int kx_store_losses(struct kx_store *s, struct kx_view *v, struct kx_buf *out);

/* The lock file a mounted daemon leaves so `kindex` can name it: "<pid> <mountpoint>\n". */
int kx_store_claim(struct kx_store *s, const char *mountpoint);
/* Who holds the store, when it is held: malloc'd "kindexfs (pid 12, mounted at /mnt)" or NULL. */
char *kx_store_holder(const char *dir);

/* ---- replicas (docs/replicas.md) --------------------------------------------------------------- */

/* A point in the store's history: RocksDB's last sequence number and the store's generation. */
struct kx_store_point {
	uint64_t sequence, generation;
};
/* The last sequence number written (any write moves it: a change to publish). */
uint64_t kx_store_sequence(struct kx_store *s);
/*
 * A RocksDB checkpoint of the store in `dir` (which must not exist; RocksDB makes `dir`.tmp and
 * renames it when complete): table files hard-linked, the rest copied; with the write-ahead log
 * when it is under `log_size_for_flush` bytes, else the memtables are flushed first. No commit
 * runs meanwhile, so *ret is exactly the point the checkpoint holds. -EROFS for a read-only store,
 * -EEXIST when `dir` exists; *ret_err (malloc'd) says why.
 */
int kx_store_checkpoint(struct kx_store *s, const char *dir, uint64_t log_size_for_flush,
			struct kx_store_point *ret, char **ret_err);
/*
 * A store opened with KX_STORE_FOLLOW reads one replica generation (a checkpoint): its directory
 * is held open with a shared flock, so `kindex pull` leaves it be, and every table file is kept
 * open, so it keeps serving if deleted. kx_store_follow switches it to the generation at `dir`
 * (its schema checked): views made after it read the new generation, views made before go on
 * reading theirs, which is closed (and unlocked) when the last of them is released. `note` is
 * kept with the generation (kx_store_note). Reads with a NULL view must not race it.
 * -EINVAL when the store was not opened to follow.
 */
int kx_store_follow(struct kx_store *s, const char *dir, const char *note, char **ret_err);
/* The note of the current generation of a following store (before any view is made). */
int kx_store_set_note(struct kx_store *s, const char *note);
/* The note kept with the generation view v reads (NULL: none, or not a following store); valid
 * while v is. kx_store_dir: the real path of that generation (of the store when not following). */
const char *kx_store_note(struct kx_store *s, struct kx_view *v);
const char *kx_store_dir(struct kx_store *s, struct kx_view *v);

struct kx_view *kx_store_view(struct kx_store *s);
void kx_view_release(struct kx_view *v);
uint64_t kx_view_generation(const struct kx_view *v);

/* ---- reading ---------------------------------------------------------------------------------- */

/* Generic get of a stored document's bytes (the full document as first stored, JCS). -ENOENT. */
int kx_store_get_doc(struct kx_store *s, struct kx_view *v, const struct kx_digest *d,
		     struct kx_buf *out);
int kx_store_get_run(struct kx_store *s, struct kx_view *v, const struct kx_digest *d,
		     struct kx_run_rec *ret);
int kx_store_get_group(struct kx_store *s, struct kx_view *v, const struct kx_digest *key,
		       struct kx_group_rec *ret);
/* The run whose digest starts with `hex` (2..64 hex digits). -ENOENT, or -ENOTUNIQ if several. */
int kx_store_find_run_prefix(struct kx_store *s, struct kx_view *v, const char *hex,
			     struct kx_digest *ret);
/* The run recorded for (source, externalId), -ENOENT. */
int kx_store_find_source(struct kx_store *s, struct kx_view *v, const char *source,
			 const char *external_id, struct kx_digest *ret);


enum kx_record {
	KX_RECORD_DOC,
	KX_RECORD_RUN,
	KX_RECORD_GROUP,
	KX_RECORD_ARTIFACT, /* SPEC §9: bytes stored by their SHA-256 */
};

/*
 * The record of a kind whose key starts with the first `bits` bits of `prefix` (8 <= bits <= 256).
 * -ENOENT when there is none, -ENOTUNIQ when there are several.
 */
int kx_store_find_bits(struct kx_store *s, struct kx_view *v, enum kx_record kind,
		       const uint8_t *prefix, unsigned bits, struct kx_digest *ret);

/* Keys only, in key (digest) order: cheaper than kx_store_each_run, or than reading each document. */
typedef int (*kx_digest_fn)(void *ctx, const struct kx_digest *d);
int kx_store_each_digest(struct kx_store *s, struct kx_view *v, enum kx_record kind, kx_digest_fn fn,
			 void *ctx);
/* The store's counters and generation; -EUCLEAN where the table that holds the generation is
 * damaged (what can be read is filled in, the rest is 0). */
int kx_store_stats(struct kx_store *s, struct kx_view *v, struct kx_store_stats *ret);

/*
 * Iteration: a callback per item, stop early by returning non-zero (that value is returned).
 * Negative errno on store errors.
 */

/*
 * The runs stored while document `doc` — their workload or implementation — was not (a published
 * record may carry only the digest): when `doc` arrives, exactly these runs gain a file. In digest
 * order; an index, so the cost is the number of such runs, not the size of the store.
 * -EOPNOTSUPP for a store of schema 1 opened read-only, whose index may be incomplete.
 */
int kx_store_each_waiting(struct kx_store *s, struct kx_view *v, const struct kx_digest *doc, kx_digest_fn fn,
			  void *ctx);

/* The aliases of run `run` (SPEC §2: the same observation published again), in digest order. */
int kx_store_each_alias(struct kx_store *s, struct kx_view *v, const struct kx_digest *run, kx_digest_fn fn,
			void *ctx);
/* Every alias of every run, as (run, alias), in run digest order: one scan of the index, which
 * holds nothing in a store where nothing was published twice. */
typedef int (*kx_alias_fn)(void *ctx, const struct kx_digest *run, const struct kx_digest *alias);
int kx_store_each_alias_of_any(struct kx_store *s, struct kx_view *v, kx_alias_fn fn, void *ctx);
/* A key the store knows (SPEC §10): trusted from added_ns, and until revoked_ns when that is not 0. */
#define KX_KEY_NAME_MAX 128
struct kx_key_rec {
	struct kx_digest id;
	uint8_t pub[KX_ED25519_PUB_LEN];
	char name[KX_KEY_NAME_MAX];
	int64_t added_ns, revoked_ns;
};
int kx_store_get_key(struct kx_store *s, struct kx_view *v, const struct kx_digest *id, struct kx_key_rec *ret);
typedef int (*kx_key_fn)(void *ctx, const struct kx_key_rec *k);
int kx_store_each_key(struct kx_store *s, struct kx_view *v, kx_key_fn fn, void *ctx); /* in id order */
/* How many signatures of run `run` are stored, and whether one is by a key the store trusts and
 * has not revoked: one scan of the run's signatures, a key read for each until a trusted one. */
int kx_store_run_signatures(struct kx_store *s, struct kx_view *v, const struct kx_digest *run, uint32_t *ret_count,
			    bool *ret_trusted);

/* The signatures stored for run `run`, by key id (SPEC §10): fn(ctx, key id, public key, signature). */
typedef int (*kx_signature_fn)(void *ctx, const struct kx_digest *key, const uint8_t *pub, const uint8_t *sig);
int kx_store_each_signature(struct kx_store *s, struct kx_view *v, const struct kx_digest *run, kx_signature_fn fn,
			    void *ctx);
/* Whether any run of view v has a stored signature: one seek, whatever the size of the store. */
int kx_store_any_signature(struct kx_store *s, struct kx_view *v, bool *ret);

/* A stored attestation of a run (SPEC §8) as the run's index holds it; its document is stored by
 * its digest. `by`: a reproduction's run. */
struct kx_attestation_ref {
	struct kx_digest digest;
	int64_t created_ns;
	enum kx_attestation_type type;
	struct kx_digest by;
};
typedef int (*kx_attestation_fn)(void *ctx, const struct kx_attestation_ref *a);
/* Run `run`'s attestations, oldest first (createdAt, then digest). */
int kx_store_each_attestation(struct kx_store *s, struct kx_view *v, const struct kx_digest *run,
			      kx_attestation_fn fn, void *ctx);
/* Whether any run of view v has an attestation: one seek. */
int kx_store_any_attestation(struct kx_store *s, struct kx_view *v, bool *ret);

/* ---- artifacts (SPEC §9, docs/artifacts.md) ------------------------------------------------- */

/* An artifact's bytes are kept in chunks of this size (the last one shorter). */
#define KX_ARTIFACT_CHUNK (128u << 10)
#define KX_UPLOAD_ID_LEN 16
/* A stored artifact: its bytes, stored once by their SHA-256 (the record's key). */
struct kx_artifact_rec {
	uint8_t version;                    /* 2: each chunk ends with its own CRC-32C; 1: RocksDB's
					     * checksum only (stores before it) */
	uint64_t size;
	int64_t received_ns;                /* when its bytes were stored */
	uint8_t upload[KX_UPLOAD_ID_LEN];   /* where its chunks are: the time the upload began (ns,
					     * big-endian), then random bytes */
	uint64_t generation;                /* version 2: the store generation whose commit stored it
					     * (what a verify since a generation hashes); 1: 0 */
};
/* The artifact with SHA-256 d: -ENOENT when its bytes have not been received. */
int kx_store_get_artifact(struct kx_store *s, struct kx_view *v, const struct kx_digest *d,
			  struct kx_artifact_rec *ret);
/* Up to len bytes of artifact a from offset off into buf, their count into *ret_n (less than len
 * only at the end); -EIO for a chunk missing or of the wrong length (damage). */
int kx_store_read_artifact(struct kx_store *s, struct kx_view *v, const struct kx_artifact_rec *a, uint64_t off,
			   void *buf, size_t len, size_t *ret_n);
typedef int (*kx_artifact_fn)(void *ctx, const struct kx_digest *d, const struct kx_artifact_rec *a);
/* Every stored artifact, in digest order. */
int kx_store_each_artifact(struct kx_store *s, struct kx_view *v, kx_artifact_fn fn, void *ctx);
/* Whether view v holds any artifact: one seek. */
int kx_store_any_artifact(struct kx_store *s, struct kx_view *v, bool *ret);
/* The runs whose spec.artifacts announce the artifact with SHA-256 d, in digest order. */
int kx_store_each_announcer(struct kx_store *s, struct kx_view *v, const struct kx_digest *d, kx_digest_fn fn,
			    void *ctx);
/* How many runs announce it. */
int kx_store_count_announcers(struct kx_store *s, struct kx_view *v, const struct kx_digest *d, size_t *ret);
/* Run `run`'s artifacts as announced, in its spec.artifacts order: fn(ctx, name, digest). */
typedef int (*kx_run_artifact_ref_fn)(void *ctx, const char *name, const struct kx_digest *d);
int kx_store_run_artifacts(struct kx_store *s, struct kx_view *v, const struct kx_digest *run,
			   kx_run_artifact_ref_fn fn, void *ctx);
/*
 * Every upload's chunks ('B' entries) by upload: fn(ctx, id, bytes) once each, in id order (so the
 * oldest first). An upload no artifact record names is a left-over (a crash, a refused digest).
 */
typedef int (*kx_upload_fn)(void *ctx, const uint8_t id[KX_UPLOAD_ID_LEN], uint64_t bytes);
int kx_store_each_upload(struct kx_store *s, struct kx_view *v, kx_upload_fn fn, void *ctx);
/* Remove an upload's chunks; with d, the artifact record too (kindex gc). Not for a mounted store. */
int kx_store_remove_upload(struct kx_store *s, const struct kx_digest *d, const uint8_t id[KX_UPLOAD_ID_LEN]);
/* Give the disk back: compact the range of a removed upload's chunks, so that the blob files
 * holding nothing else are deleted (those shared with live chunks wait for RocksDB's blob garbage
 * collection). */
int kx_store_reclaim_upload(struct kx_store *s, const uint8_t id[KX_UPLOAD_ID_LEN]);

/*
 * Storing an artifact's bytes as they come (an inbox file, a spool file, kindex ingest): begin,
 * write any number of times (-EFBIG past max bytes in all), end (the digest and record of the
 * bytes), then commit the record with kx_txn_add_artifact, and close: keep the chunks when the
 * commit stored the record, drop them otherwise (refused, or the bytes were stored already).
 * Memory: one chunk. Not thread-safe; uploads may run beside each other and beside transactions.
 */
struct kx_artifact_upload;
int kx_store_upload_begin(struct kx_store *s, uint64_t max, struct kx_artifact_upload **ret);
int kx_upload_write(struct kx_artifact_upload *u, const void *p, size_t n);
int kx_upload_end(struct kx_artifact_upload *u, struct kx_digest *ret, struct kx_artifact_rec *rec);
void kx_upload_close(struct kx_artifact_upload *u, bool keep);

/*
 * The runs of a group in rank order: ranked ones first (best first), then unranked, each with its
 * record. The rank index holds a copy of each run's record (written with it, never changed), so a
 * group's runs come from one short scan, not a read per run scattered over the store; an entry
 * written before it did (an older store) has its record read from the run's own key.
 */
typedef int (*kx_group_run_fn)(void *ctx, const struct kx_run_rec *run, bool ranked);
int kx_store_group_runs(struct kx_store *s, struct kx_view *v, const struct kx_digest *group,
			kx_group_run_fn fn, void *ctx);

/*
 * The runs of every group, as kx_store_group_runs lists each (rank order, record, ranked), group
 * after group in key order — one scan of the rank index, for a pass over every group without a
 * seek for each. Part `part` of `parts` (1..256): the groups whose key's first byte is in the
 * part-th of as many equal ranges; the parts together are every group, each once, and may be
 * scanned at once from as many threads.
 */
typedef int (*kx_index_run_fn)(void *ctx, const struct kx_digest *group, const struct kx_run_rec *run, bool ranked);
int kx_store_each_group_run(struct kx_store *s, struct kx_view *v, unsigned part, unsigned parts, kx_index_run_fn fn,
			    void *ctx);

/*
 * Which of two runs of one implementation in one group is its current one: the later observedAt,
 * then the greater run digest (SPEC §2). True when run a is newer than run b.
 */
bool kx_run_newer(int64_t a_ns, const struct kx_digest *a, int64_t b_ns, const struct kx_digest *b);
/* Runs by implementation name, each implementation's newest first: qsort's <0, 0, >0. */
int kx_run_order(const char *a_impl, int64_t a_ns, const struct kx_digest *a, const char *b_impl, int64_t b_ns,
		 const struct kx_digest *b);

/*
 * The current runs of every group — of each implementation with a ranked run, the newest
 * (kx_run_newer) — group after group in key order, each group's in implementation name (byte)
 * order; in parts as kx_store_each_group_run. The store keeps them at ingest (schema 3), so this
 * reads about a fifth of what a scan of the rank index would; a store of an older schema opened
 * read-only has them worked out from the rank index instead, the same records in the same order.
 */
typedef int (*kx_current_fn)(void *ctx, const struct kx_digest *group, const struct kx_current_rec *c);
int kx_store_each_current(struct kx_store *s, struct kx_view *v, unsigned part, unsigned parts, kx_current_fn fn,
			  void *ctx);

/*
 * The path index. `prefix` holds 0..3 components (kernel, pass, gpu); the callback receives each
 * distinct next component once, in byte order. At depth 3 (workload level) it receives each
 * group under that gpu with its base workload slug, its workload digest, its group key and whether
 * the slug was cut (kx_rank_workload_dirname() turns those into directory names).
 */
typedef int (*kx_tree_fn)(void *ctx, const char *name, const struct kx_digest *workload,
			  const struct kx_digest *group, bool cut);
int kx_store_tree_list(struct kx_store *s, struct kx_view *v, const char *const *prefix,
		       size_t depth, kx_tree_fn fn, void *ctx);
/* Every group of the path index in path order, with its gpu directory's components: for each gpu
 * directory what kx_store_tree_list gives at depth 3 (fn's last four arguments), in one scan. */
typedef int (*kx_tree_group_fn)(void *ctx, const char *kernel, const char *pass, const char *gpu, const char *name,
				const struct kx_digest *workload, const struct kx_digest *group, bool cut);
int kx_store_tree_groups(struct kx_store *s, struct kx_view *v, kx_tree_group_fn fn, void *ctx);
/* mtime of a directory of the path index ("benchmarks/<k>", "benchmarks/<k>/<p>" …). -ENOENT. */
int kx_store_dir_mtime(struct kx_store *s, struct kx_view *v, const char *path, int64_t *ret_ns);
/* Every directory time ('M'), in path order: fn(ctx, path, ns). */
typedef int (*kx_mtime_fn)(void *ctx, const char *path, int64_t ns);
int kx_store_each_dir_mtime(struct kx_store *s, struct kx_view *v, kx_mtime_fn fn, void *ctx);

/*
 * Every run record. One that does not decode (a damaged value) is passed over, and the walk
 * returns -EBADMSG once it has called `fn` for every other (-EIO: RocksDB could not read);
 * `kindex verify` names such records.
 */
typedef int (*kx_run_fn)(void *ctx, const struct kx_run_rec *run);
int kx_store_each_run(struct kx_store *s, struct kx_view *v, kx_run_fn fn, void *ctx);

/*
 * Check every index against the records (kindex verify): each document hashes to its key, each
 * run's documents and group exist, its rank-index, path-index and source entries exist and agree,
 * no index entry points at nothing, counts match. Problems are appended (pointer = the key).
 */
int kx_store_verify(struct kx_store *s, struct kx_problems *problems, uint64_t *ret_checked);
/*
 * The same for what the commits after store generation `since` added, for a copy of a store whose
 * state at `since` was verified (a replica's previous generation, kx_replica_pull): each run they
 * added with every check above, the documents it names and the 'W' index names hashed, its
 * group's record, rank-index, path-index and current-run entries; the documents of older runs are
 * not hashed again, nor the source-index and current-run entries of older runs read. Every live
 * table file is read through, each block's checksum checked, but for those numbered up to
 * `since_table` (their files' names, 000013.sst: 13), which the caller knows were read through
 * before: the same files. With since_table 0, every table, and every document, run, group and
 * rank-index entry is read and counted against the counters; with since_table, every run and
 * group is (the new runs are found among them), the new runs' documents and their groups'
 * rank-index entries by their keys, and the documents are not counted. since 0: everything, as
 * kx_store_verify.
 */
int kx_store_verify_since(struct kx_store *s, uint64_t since, uint64_t since_table, struct kx_problems *problems,
			  uint64_t *ret_checked);

/*
 * The sizes of the files of one directory, kept by the writer so that a mount need not render a
 * file to answer `stat` ('Z', docs/store.md): kind 'r' a run's (by its digest), 'g' a group's (by
 * its key). What each size is, and when it holds, is the tree's (kx_tree_keep_sizes): `build` names
 * the renderer that made them, `stamp` the version of the directory they were made at.
 * kx_store_get_sizes: -ENOENT when none are kept, -EBADMSG for a record it cannot read (another
 * version's). kx_store_put_sizes writes n records in one batch, not synced, outside any
 * transaction (they add nothing the store holds, and a lost one is rendered again); -EROFS on a
 * read-only store.
 */
#define KX_SIZES_MAX 16
#define KX_SIZE_UNKNOWN UINT32_MAX
struct kx_sizes {
	uint64_t build;
	int64_t stamp;
	unsigned n;
	uint32_t size[KX_SIZES_MAX];
};
int kx_store_get_sizes(struct kx_store *s, struct kx_view *v, char kind, const struct kx_digest *id,
		       struct kx_sizes *ret);
int kx_store_put_sizes(struct kx_store *s, char kind, const struct kx_digest *ids, const struct kx_sizes *sizes,
		       size_t n);

/*
 * /index.tsv kept by the writer ('L' and `\0index-rows`, docs/store.md): each group's rows under a
 * key whose byte order is the file's — the kernel, pass, gpu and workload directory names as
 * people read them (kx_name_cmp), then the group's comparison key — with the stamp they were made
 * at, and a head: the renderer that made them (`build`), the generation at which they are every
 * group's rows, and the parameter names that are their columns. What they are and when they hold
 * is the tree's (src/tree/index-kept.c).
 *
 * kx_store_get_index_head: -ENOENT when none is kept, -EBADMSG for one it cannot read; the names
 * are the caller's (kx_index_head_release). A batch (kx_store_index_begin, -EROFS on a read-only
 * store) removes the rows below a gpu directory (comp: kernel, pass, gpu), or every row (comp
 * NULL), saying how many bytes of rows that was where ret_bytes is not NULL, and puts a group's
 * (comp: the four names); kx_store_index_end writes the rest, then the
 * head, and frees the batch, as kx_store_index_abort does without writing. Not synced, outside any
 * transaction, as the sizes. A group's rows carry the stamp, renderer and columns (an id of the
 * names) they were made with: kx_store_each_index_rows hands every group's in key order; a cursor
 * finds one group's (-ENOENT: none kept), or seeks to the first row at or after a key (`at`, as a
 * row gives it; n 0: the first row) and steps to the next (-ENOENT past the last). A row is
 * valid until the cursor's next call.
 */
struct kx_index_row {
	const void *at; /* its key in the store */
	size_t at_len;
	struct kx_digest key;
	int64_t stamp;
	uint64_t build, columns;
	const char *rows;
	size_t n;
};
struct kx_index_head {
	uint64_t build, generation;
	uint64_t size; /* the file's bytes, header and rows */
	char **names;
	size_t nnames;
};
int kx_store_get_index_head(struct kx_store *s, struct kx_view *v, struct kx_index_head *ret);
void kx_index_head_release(struct kx_index_head *h);
struct kx_index_batch;
int kx_store_index_begin(struct kx_store *s, struct kx_index_batch **ret);
int kx_store_index_clear(struct kx_index_batch *b, const char *const comp[3], uint64_t *ret_bytes);
int kx_store_index_put(struct kx_index_batch *b, const char *const comp[4], const struct kx_index_row *row);
int kx_store_index_end(struct kx_index_batch *b, const struct kx_index_head *head);
void kx_store_index_abort(struct kx_index_batch *b);
typedef int (*kx_index_rows_fn)(void *ctx, const struct kx_index_row *row);
int kx_store_each_index_rows(struct kx_store *s, struct kx_view *v, kx_index_rows_fn fn, void *ctx);
struct kx_index_cursor;
int kx_store_index_cursor(struct kx_store *s, struct kx_view *v, struct kx_index_cursor **ret);
int kx_index_cursor_find(struct kx_index_cursor *c, const char *const comp[4], const struct kx_digest *key,
			 struct kx_index_row *ret);
int kx_index_cursor_seek(struct kx_index_cursor *c, const void *at, size_t n, struct kx_index_row *ret);
int kx_index_cursor_next(struct kx_index_cursor *c, struct kx_index_row *ret);
void kx_index_cursor_free(struct kx_index_cursor *c);

/* ---- writing ---------------------------------------------------------------------------------- */

int kx_store_txn_begin(struct kx_store *s, struct kx_txn **ret);
void kx_txn_abort(struct kx_txn *t); /* discard; NULL is a no-op */
/*
 * Apply atomically and bump the generation; the transaction is freed either way. `sync`: return
 * only once the WAL is synced, which concurrent committers share (a group commit); -EIO if that
 * sync fails, the commit then applied but perhaps not durable. *ret_generation (when not NULL):
 * the generation this commit created.
 */
int kx_txn_commit_gen(struct kx_txn *t, bool sync, uint64_t *ret_generation);
size_t kx_txn_count(const struct kx_txn *t);
/*
 * One savepoint at a time: kx_txn_savepoint marks the current state, kx_txn_rollback returns to
 * it (undoing every write since, including counters and caches). Used to stage many files in one
 * transaction while refusing some of them.
 */
void kx_txn_savepoint(struct kx_txn *t);
void kx_txn_rollback(struct kx_txn *t);

/* Reads that see the transaction's own writes. */
int kx_txn_get_run(struct kx_txn *t, const struct kx_digest *d, struct kx_run_rec *ret);
int kx_txn_get_group(struct kx_txn *t, const struct kx_digest *key, struct kx_group_rec *ret);
bool kx_txn_has_doc(struct kx_txn *t, const struct kx_digest *d);
int kx_txn_get_doc(struct kx_txn *t, const struct kx_digest *d, struct kx_buf *out);
/*
 * SPEC §2: the exact name `name` claims the path component `component` at `level` ('i'
 * implementation, 'g' GPU, 'k' kernel, 'p' pass). 0 when the component is free (now claimed) or
 * already the name's; 1 when another name holds it, that name appended to ret_other (when not
 * NULL; "" when it came in this same transaction); or a negative errno.
 */
int kx_txn_claim_name(struct kx_txn *t, char level, const char *component, const char *name, struct kx_buf *ret_other);
int kx_txn_find_source(struct kx_txn *t, const char *source, const char *external_id,
		       struct kx_digest *ret);

/* Store a document (JCS bytes of the whole document) unless one with that digest exists. */
int kx_txn_put_doc(struct kx_txn *t, const struct kx_digest *d, const char *jcs, size_t len);
/*
 * Add an alias (SPEC §2): alias->alias_of names a stored run that is no alias; the alias's own
 * documents are staged by the caller. Its record (flagged, with alias_of's group, implementation
 * and values) goes under 'R' and its entry under 'A'; no rank, current-run or source entry, no
 * count. The run's group changes (its summary.txt and DIGESTS name the alias).
 */
int kx_txn_add_alias(struct kx_txn *t, const struct kx_run_rec *alias);
/*
 * Add a run: its record, rank-index entry, source entry (when it has one), and the group (created
 * from `group` when new; counts and mtimes updated), path index and directory mtimes.
 * `group` must describe run->group. The caller has checked the run is new.
 */
int kx_txn_add_run(struct kx_txn *t, const struct kx_run_rec *run, const struct kx_group_rec *group,
		   const char *source, const char *external_id);
/*
 * Trust key `pub` under `name` (SPEC §10: 'kindex trust add'), or revoke key `id` ('trust revoke':
 * recorded, never deleted; a revoked key is never trusted again). The groups of the runs the key
 * signed change at ns: their evidence may. trust: 0 trusted now, 1 trusted already (its name
 * kept), -EPERM revoked before. revoke: 0 revoked now, 1 revoked already, -ENOENT not a key the
 * store knows.
 */
int kx_txn_trust_key(struct kx_txn *t, const uint8_t pub[KX_ED25519_PUB_LEN], const char *name, int64_t ns);
int kx_txn_revoke_key(struct kx_txn *t, const struct kx_digest *id, int64_t ns);

/*
 * Store a verified signature of stored run `run` by key `key` (SPEC §10: Ed25519 over the run's
 * digest string; the caller has checked it). The run's group changes at ns (its files show the
 * signature). 1 when that key's signature of the run is stored already (nothing written).
 */
int kx_txn_add_signature(struct kx_txn *t, const struct kx_digest *run, const struct kx_digest *key,
			 const uint8_t pub[KX_ED25519_PUB_LEN], const uint8_t sig[KX_ED25519_SIG_LEN], int64_t ns);

/*
 * Store attestation a (SPEC §8) — its document (jcs: its canonical bytes) under its digest, its
 * entry in its subject's index — about stored run a->subject; the caller has checked the subject,
 * and a reproduction's run. The subject's group changes at ns (its files show the attestation).
 * 1 when it is stored already (nothing written).
 */
int kx_txn_add_attestation(struct kx_txn *t, const struct kx_attestation_ref *a, const struct kx_digest *subject,
			   const char *jcs, size_t len, int64_t ns);

/*
 * Store the record of artifact d (SPEC §9) whose bytes upload `a` holds; every run announcing it
 * changes at ns (its artifacts/ and summary.txt show it). 1 when d is stored already (nothing
 * written: the caller drops the upload).
 */
int kx_txn_add_artifact(struct kx_txn *t, const struct kx_digest *d, const struct kx_artifact_rec *a, int64_t ns);
/* The stored artifact d (the latest state; -ENOENT when its bytes have not arrived). */
int kx_txn_get_artifact(struct kx_txn *t, const struct kx_digest *d, struct kx_artifact_rec *ret);
/* Record that run `run` announces artifact d as its index-th, named `name` (kx_store_each_announcer,
 * kx_store_run_artifacts). */
int kx_txn_announce_artifact(struct kx_txn *t, const struct kx_digest *run, size_t index, const struct kx_digest *d,
			     const char *name);

#endif
