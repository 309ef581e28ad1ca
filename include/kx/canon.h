/* SPDX-License-Identifier: MIT */
/*
 * Canonical bytes and digests: the JSON Canonicalization Scheme (RFC 8785), the pretty form the
 * tree serves, SHA-256 digests of documents, and Ed25519 signatures. This module is the only user
 * of libcrypto.
 *
 * JCS: object members sorted by their keys' UTF-16 code units, no insignificant whitespace,
 * strings with the minimal escapes of RFC 8785 §3.2.2.2, numbers as ECMAScript's
 * Number.prototype.toString (shortest round-trip digits; "1e+21", "1e-7", "100000000000000000000").
 *
 * Digest rule (SPEC §1): digest(doc) = "sha256:" + hex(SHA-256(JCS({apiVersion, kind, spec}))).
 * `metadata` is not hashed.
 *
 * Signatures (SPEC §10): Ed25519 key pairs, a key's id, signing a message and checking a
 * signature, base64.
 *
 * All functions are thread-safe (no shared state).
 */
#ifndef KX_CANON_H
#define KX_CANON_H

#include "kx/json.h"

/* Longest text kx_jcs_number can produce ("-1.2345678901234567e-308" is 24), plus NUL. */
#define KX_JCS_NUMBER_MAX 32

/*
 * Format a finite double as ECMAScript does (RFC 8785 §3.2.2.3). Writes a NUL-terminated string
 * and returns its length; returns 0 for NaN and infinities, which JSON cannot hold.
 */
size_t kx_jcs_number(double v, char out[KX_JCS_NUMBER_MAX]);

/*
 * Append the JCS form of v. Returns -EINVAL when v holds something JCS cannot express (duplicate
 * keys, a non-finite number, a string that is not UTF-8), -E2BIG past the buffer's cap.
 */
int kx_jcs_write(const struct kx_json *v, struct kx_buf *out);

/*
 * Append the pretty form: JCS member order, strings and numbers exactly as JCS writes them,
 * two-space indentation, one member per line, empty containers as {} and [], and a final newline.
 * Stable bytes for stable input: this is what manifest.json and friends are served as.
 */
int kx_json_write_pretty(const struct kx_json *v, struct kx_buf *out);

/* Compare two keys by UTF-16 code units (the JCS member order); <0, 0, >0. */
int kx_jcs_key_cmp(const char *a, size_t alen, const char *b, size_t blen);

/* ---- digests ---------------------------------------------------------------------------------- */

#define KX_DIGEST_LEN 32
#define KX_DIGEST_HEX 64
#define KX_DIGEST_STR_MAX 72 /* "sha256:" + 64 hex + NUL */
#define KX_SHORTID_LEN 12    /* hex digits of a run's short id */

struct kx_digest {
	uint8_t b[KX_DIGEST_LEN];
};

void kx_sha256(const void *data, size_t len, uint8_t out[KX_DIGEST_LEN]);

/* Incremental SHA-256 (for hashing files and generated content as it is produced). */
struct kx_sha256;
struct kx_sha256 *kx_sha256_new(void);
void kx_sha256_update(struct kx_sha256 *h, const void *data, size_t len);
void kx_sha256_final(struct kx_sha256 *h, uint8_t out[KX_DIGEST_LEN]); /* also frees h */

/*
 * The digest of a document: JCS of {apiVersion, kind, spec} taken from `doc` (members that are
 * missing are left out of the hashed object). -EINVAL as kx_jcs_write.
 */
int kx_digest_document(const struct kx_json *doc, struct kx_digest *ret);
/*
 * Both at once, serializing the document a single time: the digest, and the JCS of the whole
 * document (metadata included) appended to `full` — what the store keeps.
 */
int kx_digest_document_jcs(const struct kx_json *doc, struct kx_digest *ret, struct kx_buf *full);
/* The hashed form itself (the bytes the digest is the SHA-256 of). */
int kx_digest_document_bytes(const struct kx_json *doc, struct kx_buf *out);

/* "sha256:<64 lowercase hex>" */
void kx_digest_format(const struct kx_digest *d, char out[KX_DIGEST_STR_MAX]);
void kx_digest_hex(const struct kx_digest *d, char out[KX_DIGEST_HEX + 1]);
/* Parse "sha256:<64 lowercase hex>"; anything else (uppercase, other algorithms, length) -EINVAL. */
int kx_digest_parse(const char *s, size_t len, struct kx_digest *ret);
bool kx_digest_equal(const struct kx_digest *a, const struct kx_digest *b);
/* Digest order, shaped for qsort and bsearch: a and b point at a struct kx_digest (or at a struct
 * that begins with one). */
int kx_digest_cmp(const void *a, const void *b);

/* ---- signatures (SPEC §10; sign.c) -------------------------------------------------------------- */

#define KX_ED25519_PUB_LEN 32
#define KX_ED25519_SIG_LEN 64
#define KX_BASE64_LEN(n) (4 * (((n) + 2) / 3)) /* without the NUL */

/* A key's id: the SHA-256 of its 32 raw public bytes (written "sha256:<hex>"). */
void kx_key_id(const uint8_t pub[KX_ED25519_PUB_LEN], struct kx_digest *ret);

/*
 * Make an Ed25519 key pair: the private key as PKCS #8 PEM at priv_path (mode 0600), the public key
 * as SubjectPublicKeyInfo PEM at pub_path; neither file may exist. Its id into *ret_id. On failure
 * nothing is left behind and err says why (-EINVAL, -EEXIST and other errnos).
 */
int kx_key_generate(const char *priv_path, const char *pub_path, struct kx_digest *ret_id, char *err, size_t err_cap);

/* A private key to sign with: a regular file no one else may read (mode 0600 or stricter), PEM,
 * Ed25519. -EINVAL with err saying which rule the file breaks. */
struct kx_signer;
int kx_signer_open(const char *path, struct kx_signer **ret, char *err, size_t err_cap);
void kx_signer_free(struct kx_signer *s);
const uint8_t *kx_signer_public(const struct kx_signer *s); /* its 32 raw public bytes */
int kx_sign(const struct kx_signer *s, const void *msg, size_t len, uint8_t sig[KX_ED25519_SIG_LEN]);

/* Whether sig is pub's Ed25519 signature of msg. */
bool kx_verify(const uint8_t pub[KX_ED25519_PUB_LEN], const void *msg, size_t len,
	       const uint8_t sig[KX_ED25519_SIG_LEN]);

/* A public key: read from a PEM file (Ed25519 only; -EINVAL with err), or written as PEM. */
int kx_pubkey_read(const char *path, uint8_t pub[KX_ED25519_PUB_LEN], char *err, size_t err_cap);
int kx_pubkey_pem(const uint8_t pub[KX_ED25519_PUB_LEN], struct kx_buf *out);

/* Base64 with padding (RFC 4648 §4). encode writes KX_BASE64_LEN(len) characters and a NUL, and
 * returns the count; decode takes exactly the encoding of `want` bytes (at most 3 KiB), else -EINVAL. */
size_t kx_base64_encode(const void *data, size_t len, char *out);
int kx_base64_decode(const char *s, size_t len, uint8_t *out, size_t want);

#endif
