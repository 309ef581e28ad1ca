/* SPDX-License-Identifier: MIT */
/*
 * Receipts and the spool directory: how a producer that does not mount learns what became of its
 * files, and the words both the FUSE inbox and the spool use to say it.
 *
 * Spool layout (maildir-style): a producer writes DIR/tmp/NAME and renames it to DIR/new/NAME (the
 * rename makes it visible whole). Each file in new/ is ingested — the store's log synced — and
 * then moved to DIR/accepted/NAME with DIR/accepted/NAME.receipt (the path of each run), or to
 * DIR/rejected/NAME with DIR/rejected/NAME.error (every problem). A crash between the commit and
 * the move leaves the file in new/; processing it again finds its runs already present. A name
 * already taken in accepted/ or rejected/ (by a file or by its receipt) gets a ".1", ".2" …
 * suffix: nothing is overwritten; a name too long to take the receipt's suffix within NAME_MAX is
 * cut, with "~" and 8 hex digits of its hash, for both the file and its receipt. Names starting
 * with "." are skipped; anything in new/ that is not a regular file (a directory, a symbolic link,
 * a FIFO) is rejected with rule "type".
 *
 * DIR/artifacts/NAME (renamed there from tmp/ the same way) is the bytes of an artifact (SPEC §9):
 * every file of artifacts/ is decided before those of new/, so a manifest and the bytes it
 * announces dropped together are served together. Each is stored by its SHA-256
 * (kx_ingest_artifact_fd, at most opts->max_artifact bytes; a name starting with 64 hex digits
 * must be its digest) and filed like a manifest, by the same rules and in the same order: in
 * accepted/ with kx_receipt_artifact's receipt, or in rejected/ with NAME.error; a read or store
 * failure leaves it in artifacts/. A spool with a handler (kx_spool_set_handler) takes requests,
 * not runs: it leaves artifacts/ alone.
 *
 * Thread safety: a spool is used by one thread; the store and tree it is given are thread-safe.
 */
#ifndef KX_SPOOL_H
#define KX_SPOOL_H

#include "kx/ingest.h"
#include "kx/tree.h"

#include <limits.h>
#include <stdio.h>

/* "accepted NAME: …" and one line per run: "added runs/<id> <rank path>" / "present …". */
int kx_receipt_accepted(struct kx_tree *t, const char *name, const struct kx_ingest_result *r,
			struct kx_buf *out);
/*
 * The runs an acceptance receipt (kx_receipt_accepted's bytes) names, a call each: `added` (or
 * already present), `id` the 12 hex digits after "runs/", `path` its tree path when the receipt
 * was written (both NUL-terminated, valid during the call). Returns how many runs it named, 0 for
 * text that is not an acceptance receipt, or the callback's non-zero return.
 */
typedef int (*kx_receipt_run_fn)(void *ctx, bool added, const char *id, const char *path);
int kx_receipt_runs(const char *text, size_t len, kx_receipt_run_fn fn, void *ctx);
/* Likewise the attestations it names (SPEC §8: "attestation added <id> of runs/<id> <path>"): the
 * 12 hex digits of the attestation's digest, and of the run it is about. */
typedef int (*kx_receipt_attestation_fn)(void *ctx, bool added, const char *id, const char *run);
int kx_receipt_attestations(const char *text, size_t len, kx_receipt_attestation_fn fn, void *ctx);

/* "accepted NAME at TIME: artifact sha256:… (N bytes), stored" (or "already stored"), then which
 * stored runs announce it, or that none does yet (SPEC §9). */
int kx_receipt_artifact(const char *name, const struct kx_artifact_result *res, struct kx_buf *out);

/* "rejected NAME: N problems" and one line per problem (file:line:col: pointer: rule: message). */
int kx_receipt_rejected(const char *name, const struct kx_problems *p, struct kx_buf *out);

/*
 * The k-th name for a record of NAME (k = 0: NAME itself, else "NAME.k"), leaving room for
 * `reserve` more bytes (".error" = 6, ".receipt" = 8) within NAME_MAX: a name that would be too
 * long is cut at a UTF-8 character boundary and marked with "~" and 8 hex digits of a hash of the
 * whole name ("<cut>~1a2b3c4d.k"). The rule of both the inbox and the spool. 0, or -EINVAL for an
 * empty name or an impossible reserve.
 */
int kx_receipt_name(const char *name, unsigned k, size_t reserve, char out[NAME_MAX + 1]);

/*
 * Remove from directory `dfd` the receipts a process that is gone left half-written: hidden
 * ".kx-PID….tmp" files, which are never records (both the inbox and the spool write receipts
 * under such a name, then rename them).
 */
void kx_receipts_remove_dead(int dfd);

struct kx_spool;

/* Open (creating tmp/ new/ accepted/ rejected/ artifacts/ as needed) and start watching DIR/new
 * and DIR/artifacts. */
int kx_spool_open(const char *dir, struct kx_spool **ret, char **ret_err);
void kx_spool_close(struct kx_spool *sp);
/* The descriptor to poll for readability (inotify); events are consumed by kx_spool_process. */
int kx_spool_fd(const struct kx_spool *sp);

struct kx_spool_counts {
	size_t accepted;  /* files of new/ */
	size_t artifacts; /* files of artifacts/ accepted (stored, or stored before) */
	size_t rejected, failed; /* of both; failed: I/O errors, the file stays where it was */
	uint64_t generation;               /* store generation after the last commit */
};

/*
 * A spool of other requests than manifests (SPEC §10's trust requests, kx_trust_apply): each
 * file's bytes go to fn instead of ingest. fn returns 0 with the receipt (accepted/NAME.receipt)
 * and the generation its commit made (0: none), -EINVAL with problems (rejected/NAME.error), or
 * another negative errno (the file stays in new/).
 */
typedef int (*kx_spool_fn)(void *ctx, struct kx_store *s, const char *bytes, size_t len, struct kx_buf *receipt,
			   struct kx_problems *p, uint64_t *ret_generation);
void kx_spool_set_handler(struct kx_spool *sp, kx_spool_fn fn, void *ctx);

/*
 * Store every file now in DIR/artifacts, then ingest every file now in DIR/new, each in name
 * order, with `opts` (sync is forced on; opts->max_artifact caps an artifact). Also drains pending
 * inotify events. `log` (may be NULL) receives one line per file decided.
 */
int kx_spool_process(struct kx_spool *sp, struct kx_store *s, struct kx_tree *t,
		     const struct kx_ingest_opts *opts, struct kx_spool_counts *counts, FILE *log);

/* ---- trust requests (SPEC §10; trust.c) ------------------------------------------------------- */

/*
 * A trust request, one JSON object: {"trust": "add", "name": NAME, "publicKey": BASE64 of the 32
 * raw bytes} or {"trust": "revoke", "key": "sha256:<hex>" or a NAME}. Applied to the store in a
 * commit of its own (kx_txn_trust_key, kx_txn_revoke_key); the receipt says what changed, in one
 * line ("trusted sha256:... lab-a", "revoked sha256:... lab-a", or "... already"). -EINVAL with
 * problems for a request that is malformed or cannot be done (a revoked key trusted again, a key
 * or name the store does not know, a name that is several keys'). `kindex trust` applies it to an
 * unmounted store; a mounted store's daemon applies the files `kindex trust` drops in
 * STORE/trust/ (kx_spool_set_handler).
 */
int kx_trust_apply(void *ctx, struct kx_store *s, const char *bytes, size_t len, struct kx_buf *receipt,
		   struct kx_problems *p, uint64_t *ret_generation);
/* A key's name: 1 to KX_KEY_NAME_MAX - 1 bytes of printable text (SIGNATURES and receipts show it). */
bool kx_key_name_valid(const char *name);
/* The request's text for `kindex trust add` (pub, name) or `trust revoke` (key: id or name). */
int kx_trust_request(const uint8_t *pub, const char *name, const char *key, struct kx_buf *out);

#endif
