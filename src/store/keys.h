/* SPDX-License-Identifier: MIT */
/*
 * Private to src/store: the byte layout of keys and records (docs/store.md is the reference).
 *
 *   "\0schema"                         "kindexfs-store <n>"
 *   "\0gen" "\0changed" "\0created"   u64 generation, i64 last commit, i64 kindex init (ns), big-endian
 *   "\0index-copies"                  "" — every 'I' entry's value is its run's record (below)
 *   "\0losses"                        text: a line for each recovery that dropped writes
 *   "\0count/runs|docs|groups"         u64
 *   'D' digest[32]                     document: JCS of the whole document as first stored
 *   'R' digest[32]                     run record (below)
 *   'G' key[32]                        group record
 *   'I' group[32] class[1] value[8] observed[8] run[32]   run record — the ranking, in key order
 *   'S' source '\0' externalId         run digest[32]
 *   'T' kernel '\0' pass '\0' gpu '\0' workload-slug '\0' workload[32]   group key[32] cut[1]
 *   'M' directory path                 i64 mtime (ns)
 *   'W' document[32] run[32]           "" — a run stored while its workload or implementation
 *                                      document was missing (kx_store_each_waiting)
 *   'C' group[32] impl                 current record (below): the group's current run of impl,
 *                                      its newest ranked one (kx_run_newer; schema 3)
 *   'A' run[32] alias[32]             "" — an alias of the run (SPEC §2: the same observation
 *                                      published again with equal measurements; its record is in
 *                                      'R', flagged, and in no other index)
 *   'N' level[1] component             the exact name that owns this path component at this level
 *                                      ('i' implementation, 'g' GPU, 'k' kernel, 'p' pass; schema 4)
 *   'Y' run[32] key[32]                public key[32] signature[64] — a verified Ed25519 signature
 *                                      of the run's digest string by the key (SPEC §10)
 *   'X' key[32] run[32]                "" — the runs a key signed (for what trusting it changes)
 *   'K' key[32]                        a key the store trusts or trusted (record below)
 *   'V' run[32] created[8] att[32]     type[1] run[32] — an attestation of the run (SPEC §8): its
 *                                      document is in 'D'; created is its createdAt as observed
 *                                      below (so a run's list oldest first); type an enum
 *                                      kx_attestation_type: 0 a reproduction by run, 1 a note (run:
 *                                      zeros)
 *   'F' digest[32]                     version[1] size[8] received[8] upload[16] generation[8] — an
 *                                      artifact whose bytes are stored (SPEC §9): digest their
 *                                      SHA-256, received the time (ns), upload where its chunks
 *                                      are, generation the commit's that stored it; version 2: its
 *                                      chunks end with their CRC-32C; 1 (before it): they do not,
 *                                      and the record has no generation
 *   'B' upload[16] index[4]            bytes crc[4] — an artifact's bytes, KX_ARTIFACT_CHUNK a chunk
 *                                      (the last one shorter), then (version 2) CRC-32C of them,
 *                                      big-endian; kept in RocksDB's blob files; index big-endian
 *   'H' artifact[32] run[32]           "" — the run announces the artifact in spec.artifacts
 *   'P' run[32] index[2]               artifact[32] name — the run's spec.artifacts, in its order
 *   'Z' kind[1] id[32]                 version[1] build[8] stamp[8] n[1] size[4]×n — the sizes of a
 *                                      run's files ('r', by run) or a group's ('g', by group key) as
 *                                      the build `build` rendered them, at the group's stamp; written
 *                                      by the writer after its commits, in none (sizes.c)
 *
 * class is 0 for ranked runs (passed, with a value) and 1 for the rest, so ranked runs list
 * first. value is the order-preserving encoding of the base value (negated for "higher is
 * better"): flip the sign bit of non-negative doubles, all bits of negative ones, big-endian.
 * observed is observedAt in ns with the sign bit flipped, big-endian. Ties therefore break by
 * earlier observedAt, then by run digest — SPEC §2 — with no comparator code at all.
 *
 * A key record: version[1] public key[32] added[8] revoked[8] (i64 ns, 0: not revoked) name
 * (u16 length, bytes).
 *
 * A current record: version[1] run[32] observed[8] order[1] has_spread[1] value base_value
 * base_p20 base_p80 (f64 bits, big-endian) unit (u16 length, bytes) — about 80 bytes, against a run
 * record's 250, so a pass over every group's current runs reads a fifth of what the rank index
 * holds.
 */
#ifndef KX_STORE_KEYS_H
#define KX_STORE_KEYS_H

#include "kx/store.h"

/* The schema K_SCHEMA says a store was written in (`want` is this kindex's, "kindexfs-store <n>"),
 * if this kindex reads it: its own, or an older one it upgrades; 0 for any other. */
int store_readable_schema(const char *schema, const char *want);

#define K_SCHEMA "\0schema"
#define K_GEN "\0gen"
#define K_CHANGED "\0changed"
#define K_CREATED "\0created"
#define K_ID "\0id" /* 16 random bytes, made with the store (or by the first writer of an older one) */
#define K_INDEX_COPIES "\0index-copies" /* present: every 'I' entry holds its run's record */
#define K_LOSSES "\0losses"             /* text, a line per kx_store_recover that dropped writes */
#define K_COUNT_RUNS "\0count/runs"
#define K_COUNT_DOCS "\0count/docs"
#define K_COUNT_GROUPS "\0count/groups"
#define K_EVIDENCE "\0evidence" /* the generation of the last commit that changed what stored runs show
				  * without adding runs: a signature, a key trusted or revoked (SPEC §10),
				  * an attestation (§8) */

enum {
	T_DOC = 'D',
	T_RUN = 'R',
	T_GROUP = 'G',
	T_INDEX = 'I',
	T_SOURCE = 'S',
	T_TREE = 'T',
	T_MTIME = 'M',
	T_WAIT = 'W',
	T_CURRENT = 'C',
	T_NAME = 'N',
	T_ALIAS = 'A',
	T_SIGNATURE = 'Y',
	T_SIGNED = 'X',
	T_KEY = 'K',
	T_ATTESTATION = 'V',
	T_ARTIFACT = 'F',
	T_CHUNK = 'B',
	T_ANNOUNCED = 'H',
	T_RUN_ARTIFACT = 'P',
	T_SIZES = 'Z',
	T_INDEX_ROWS = 'L',
};

#define WAIT_KEY_LEN (1 + 32 + 32)

#define INDEX_KEY_LEN (1 + 32 + 1 + 8 + 8 + 32)

/* a key under construction; keys are short except S, T and M, which carry names */
struct key {
	size_t len;
	unsigned char b[2560]; /* an S key: source (<= 256) + externalId (<= 2048), validated */
};

void store_key_digest(struct key *k, char tag, const struct kx_digest *d);
void store_key_index(struct key *k, const struct kx_run_rec *run);
int store_key_source(struct key *k, const char *source, const char *external_id);
int store_key_tree(struct key *k, const struct kx_group_rec *g);
#define TREE_VALUE_LEN 33
void store_tree_value(const struct kx_group_rec *g, unsigned char v[TREE_VALUE_LEN]); /* key[32] cut[1] */
int store_key_mtime(struct key *k, const char *path);
void store_key_wait(struct key *k, const struct kx_digest *doc, const struct kx_digest *run);
void store_key_current(struct key *k, const struct kx_digest *group, const char *impl);
int store_key_name(struct key *k, char level, const char *component);
void store_key_alias(struct key *k, const struct kx_digest *run, const struct kx_digest *alias);
/* 'Y' run key and 'X' key run: a pair of digests under a tag (65 bytes) */
void store_key_pair(struct key *k, char tag, const struct kx_digest *a, const struct kx_digest *b);
#define PAIR_KEY_LEN 65
/* 'V' run created attestation (SPEC §8) */
void store_key_attestation(struct key *k, const struct kx_digest *run, int64_t created_ns, const struct kx_digest *att);
#define ATTESTATION_KEY_LEN (1 + 32 + 8 + 32)
#define ATTESTATION_VALUE_LEN (1 + 32)
#define RUN_ARTIFACT_KEY_LEN (1 + 32 + 2)
#define ARTIFACT_VALUE_LEN_V1 (1 + 8 + 8 + KX_UPLOAD_ID_LEN)
#define ARTIFACT_VALUE_LEN (ARTIFACT_VALUE_LEN_V1 + 8) /* version 2: and the generation */
#define SIGNATURE_VALUE_LEN (KX_ED25519_PUB_LEN + KX_ED25519_SIG_LEN)

void store_put_u64(unsigned char *p, uint64_t v);
uint64_t store_get_u64(const unsigned char *p);
void store_put_u32(unsigned char *p, uint32_t v); /* big-endian, as the u64 */
uint32_t store_get_u32(const unsigned char *p);

int store_key_rec_encode(const struct kx_key_rec *k, struct kx_buf *out);
int store_key_rec_decode(const char *p, size_t n, struct kx_key_rec *k); /* all but k->id */
int store_run_encode(const struct kx_run_rec *r, struct kx_buf *out);
int store_run_decode(const char *p, size_t n, struct kx_run_rec *r);
int store_group_encode(const struct kx_group_rec *g, struct kx_buf *out);
int store_group_decode(const char *p, size_t n, struct kx_group_rec *g);
void store_current_of(const struct kx_run_rec *x, struct kx_current_rec *ret);
int store_current_encode(const struct kx_current_rec *c, struct kx_buf *out);
int store_current_decode(const char *p, size_t n, struct kx_current_rec *c); /* all but impl: the key's */

#endif
