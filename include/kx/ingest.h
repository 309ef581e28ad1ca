/* SPDX-License-Identifier: MIT */
/*
 * The one ingest pipeline — validate → canonicalize → digest → one WriteBatch — shared by
 * `kindex ingest`, `kindex import`, the FUSE inbox and the spool watcher, so all of them accept
 * and refuse exactly the same files with the same messages.
 *
 * A file is one decision: either every manifest in it is valid and none conflicts with the store
 * (or with another in the same file), and all its runs are committed in one atomic WriteBatch;
 * or nothing is written and every problem is reported.
 *
 * Thread-safe: concurrent calls serialise on the store's writer lock.
 */
#ifndef KX_INGEST_H
#define KX_INGEST_H

#include "kx/rank.h"
#include "kx/store.h"

struct kx_ingest_opts {
	struct kx_manifest_limits limits;
	bool sync;        /* fsync the WAL before returning (the inbox's durability promise) */
	int64_t now_ns;   /* ingest time to record; 0 = the clock */
	uint64_t max_artifact; /* SPEC §9: an artifact's bytes at most (0: KX_ARTIFACT_MAX_DEFAULT) */
};

enum kx_ingest_outcome {
	KX_INGEST_ADDED,
	KX_INGEST_PRESENT, /* the same run digest was already stored: nothing to do */
	KX_INGEST_ALIAS,   /* stored as an alias of alias_of (SPEC §2): the same observation again */
};

struct kx_ingest_item {
	struct kx_digest run;
	enum kx_ingest_outcome outcome;
	struct kx_digest alias_of; /* KX_INGEST_ALIAS */
	unsigned line; /* where the manifest starts in its file */
	unsigned signatures; /* its signatures stored now (SPEC §10; those stored before not counted) */
	/* an attestation (SPEC §8), not a manifest: `run` is its digest, `subject` the run it is about;
	 * outcome KX_INGEST_ADDED or KX_INGEST_PRESENT */
	bool attestation;
	struct kx_digest subject;
};

struct kx_ingest_result {
	struct kx_ingest_item *items; /* one per manifest, in file order (malloc'd) */
	size_t len;
	size_t added, present, aliases; /* runs */
	size_t signatures; /* signatures stored (of new runs and of runs stored before) */
	size_t attestations, attestations_added; /* the file's attestations; those stored now (SPEC §8) */
	uint64_t generation; /* the store generation this commit created (no commit: the current one) */
};

void kx_ingest_result_release(struct kx_ingest_result *r);

/*
 * Ingest the bytes of one file. Returns 0 (result filled), -EINVAL (problems appended, nothing
 * written), or another negative errno for store failures (-EIO …). `result` may be NULL.
 */
int kx_ingest_bytes(struct kx_store *s, const char *bytes, size_t len,
		    const struct kx_ingest_opts *opts, struct kx_ingest_result *result,
		    struct kx_problems *problems);

/* ---- artifacts (SPEC §9) ---------------------------------------------------------------------- */

struct kx_artifact_opts {
	uint64_t max_bytes;              /* refused past it (rule size) */
	const char *name;                /* the file's name: one that starts with 64 hex digits claims
					  * that digest (kx_artifact_name_claims); NULL: none */
	const struct kx_digest *expect;  /* set: the bytes must hash to it */
	bool sync;
	int64_t now_ns;                  /* 0 = the clock */
};
#define KX_ARTIFACT_MAX_DEFAULT (UINT64_C(1) << 30)

struct kx_artifact_result {
	struct kx_digest digest;
	uint64_t size;
	bool added;           /* stored now; else stored before (nothing written) */
	size_t announced_by;  /* stored runs that announce it */
	uint64_t generation;
};

/*
 * Store the bytes read from fd (from offset 0 to its end) as an artifact, never holding them whole:
 * 0 with res filled; -EINVAL with the problem named under `label` (over max_bytes: rule size; not
 * the digest its name or expect claims: rule digest, both digests named), nothing stored; another
 * negative errno for a read or store failure.
 */
int kx_ingest_artifact_fd(struct kx_store *s, int fd, const char *label, const struct kx_artifact_opts *o,
			  struct kx_artifact_result *res, struct kx_problems *problems);
/* The digest a file name claims: its first 64 characters, lowercase hex, alone or followed by '-'
 * or '.' (kindex-bench writes "<hex>-<name>"). */
bool kx_artifact_name_claims(const char *name, struct kx_digest *ret);

/*
 * Many files, one commit: a batch stages file after file in one transaction, each file still one
 * decision (a refused file is rolled back to where it started and reported; the others stay).
 * The commit makes every staged file durable at once — cheaper per file than kx_ingest_bytes,
 * for bulk `kindex ingest`. Results of staged files are final only once the commit succeeds.
 */
struct kx_ingest_batch;
int kx_ingest_batch_begin(struct kx_store *s, const struct kx_ingest_opts *opts,
			  struct kx_ingest_batch **ret);
/* 0 (staged; result filled), -EINVAL (refused: problems appended, nothing staged), other errors. */
int kx_ingest_batch_add(struct kx_ingest_batch *b, const char *bytes, size_t len,
			struct kx_ingest_result *result, struct kx_problems *problems);
/*
 * Threads that check signatures (SPEC §10) beside the store's writes: an Ed25519 verification
 * costs about what the rest of a run's ingest does. threads 0: the stager checks them all.
 */
struct kx_verify_pool;
int kx_verify_pool_new(unsigned threads, struct kx_verify_pool **ret);
void kx_verify_pool_free(struct kx_verify_pool *p); /* after every file prepared with it is freed */

/*
 * The store-independent half of an ingest — parse, validate, digest, place, canonicalize — as a
 * separate step, so it can run on another thread than the one that writes (kindex ingest reads
 * ahead). With a pool, the file's signatures are queued there rather than checked here; staging
 * the file waits for them. 0 with *ret set, -EINVAL with problems appended, -ENOMEM.
 */
struct kx_prepared;
int kx_ingest_prepare(const char *bytes, size_t len, const struct kx_manifest_limits *limits,
		      struct kx_verify_pool *pool, struct kx_prepared **ret, struct kx_problems *problems);
void kx_prepared_free(struct kx_prepared *p);
/* Stage a prepared file (the batch does not take ownership): -EINVAL also for a bad signature. */
int kx_ingest_batch_add_prepared(struct kx_ingest_batch *b, struct kx_prepared *p,
				 struct kx_ingest_result *result, struct kx_problems *problems);
size_t kx_ingest_batch_files(const struct kx_ingest_batch *b);
/* Commit what is staged (frees the batch); the generation after it in *ret_generation. */
int kx_ingest_batch_commit(struct kx_ingest_batch *b, uint64_t *ret_generation);
void kx_ingest_batch_abort(struct kx_ingest_batch *b);

/*
 * Ingest manifests that were built as trees (importers). Each is validated with
 * kx_manifest_check; all of them form one decision and one WriteBatch. Problems carry the
 * manifest's index as a "/<i>" pointer prefix unless `labels` gives a prefix per manifest.
 */
int kx_ingest_trees(struct kx_store *s, struct kx_arena *a, struct kx_json *const *roots, size_t n,
		    const char *const *labels, const struct kx_ingest_opts *opts,
		    struct kx_ingest_result *result, struct kx_problems *problems);

#endif
