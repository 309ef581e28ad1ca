/* SPDX-License-Identifier: MIT */
/*
 * Comparison groups, ranking and names (SPEC §2): where a run goes in the tree and why.
 * Pure functions, no I/O: given a validated manifest (and the workload/implementation documents
 * when they are known) they compute the slugs, the comparison key and the directory names.
 * Thread-safe.
 */
#ifndef KX_RANK_H
#define KX_RANK_H

#include "kx/manifest.h"
#include "kx/records.h"

#define KX_SLUG_MAX 120 /* a workload slug longer than this is cut and suffixed */
#define KX_PLAIN_MAX 64 /* the longest name that is its own path component */

enum kx_evidence {
	KX_EVIDENCE_SUBMITTED,     /* dropped into the inbox or ingested by hand */
	KX_EVIDENCE_SOURCE_NATIVE, /* imported from a publisher's data (sourceNative) */
	KX_EVIDENCE_MEASURED,      /* produced by kindex-bench with its protocol and correctness check */
};
const char *kx_evidence_name(enum kx_evidence e);

/*
 * Fold text into a path component: lowercase ASCII [a-z0-9._-], every run of other bytes becomes
 * one "-", leading and trailing "-" removed; an empty result or one made of dots becomes
 * "unnamed". Writes at most cap-1 bytes (cut at a byte boundary) and returns the length.
 */
size_t kx_slug(const char *in, size_t len, char *out, size_t cap);

/*
 * Path components (SPEC §2: injective, stable, independent of ingest order). A name is *plain* —
 * its own path component — when it is already a slug: [a-z0-9._-], no dot or dash at either end,
 * no "..", at most KX_PLAIN_MAX bytes, and not a reserved name (kx_rank_reserved). Any other name
 * becomes its slug's readable part (dots never doubled, at most KX_PLAIN_MAX - 9 bytes) + "~" + 8
 * hex digits of the SHA-256 of the exact name, so "liger" and "Liger" are "liger" and
 * "liger~<8 hex>". No component holds "..", starts with "." or is reserved; a plain one holds no
 * "~". out: at least KX_PLAIN_MAX + 1 bytes.
 */
bool kx_rank_plain(const char *s, size_t n);
void kx_rank_component(const char *name, size_t len, char *out, size_t cap);
/* A name the tree itself uses at some level: benchmarks, compare, digests, runs, inbox, sha256,
 * attestations, artifacts, signatures, summary, or one ending in a type the tree generates (.tsv,
 * .json, .svg, .html, .txt, .cff, .csv). */
bool kx_rank_reserved(const char *s, size_t n);

/*
 * Split a GPU's marketing name as CUDA or a benchmark log reports it into product and form factor
 * so that slug(product "-" formFactor) is the slug of the name: "NVIDIA A100-SXM4-80GB" →
 * "NVIDIA A100" + "SXM4-80GB", "NVIDIA H100 80GB HBM3" → "NVIDIA H100" + "80GB HBM3"; consumer
 * boards ("NVIDIA GeForce RTX 4090") stay whole with no form factor.
 */
void kx_rank_gpu_split(const char *name, char *product, size_t plen, char *form, size_t flen);

/* The GPU's path component of an ExecutionEnvironment spec: slug(product "-" formFactor) when
 * that is plain and the name is ASCII (case and punctuation variants are one GPU); else the slug's
 * readable part + "~" + 8 hex of the SHA-256 of the slug (ASCII) or of the exact name (a folding
 * that drops letters is not the same GPU). */
int kx_rank_gpu_slug(const struct kx_json *env_spec, char out[KX_NAME_MAX]);
/* The same component, and (identity not NULL) what the GPU is known by, the text the suffix
 * hashes: the slug of an ASCII name, else the exact "product-formFactor". -EINVAL without a
 * product. */
int kx_rank_gpu_names(const struct kx_json *env_spec, char comp[KX_NAME_MAX], char *identity, size_t cap);
/* The component of a GPU named as a person writes it ("NVIDIA A100-SXM4-80GB", "summary"): as for
 * its environment's "product-formFactor" (kx_rank_gpu_slug). */
void kx_rank_gpu_component(const char *name, char out[KX_NAME_MAX]);

/*
 * The workload slug of a Workload spec: parameters sorted by name, each "<name><value>" (a
 * string's text, a number in JCS form, true/false), joined by "-", dtype last. *ret_cut is set
 * when it was longer than KX_SLUG_MAX and cut.
 */
int kx_rank_workload_slug(const struct kx_json *workload_spec, char out[KX_NAME_MAX], bool *ret_cut);
/* A workload parameter's value as the slug writes it, before folding: a string's text, a number in
 * JCS form, true/false (anything else as its JCS); appended to out. */
int kx_rank_param_text(const struct kx_json *value, struct kx_buf *out);

/*
 * Where a run lives and with whom it is compared. `workload_doc` / `impl_doc` are the documents
 * when known (included in the manifest or already stored), else NULL: then the names come from
 * a six-segment sourceNative.externalId, or are "workload-<12 hex>" and "unknown".
 * Fills the group description (key, slugs, order) and the run record's ranking fields (run digest,
 * group, documents, value, order, evidence, impl, family); ingested_ns/generation are left 0.
 */
int kx_rank_place(const struct kx_manifest *m, const struct kx_json *workload_doc,
		  const struct kx_json *impl_doc, struct kx_group_rec *ret_group,
		  struct kx_run_rec *ret_run);

/* A group's kernel and pass: their exact names from its benchmark and metric ("<pass>" for
 * latency, "<pass>.<metric>" otherwise: full.memory), and their path components (g->kernel,
 * g->pass). */
void kx_rank_group_names(const struct kx_group_rec *g, char *kernel, size_t kcap, char *pass, size_t pcap);
void kx_rank_group_paths(struct kx_group_rec *g);
/* The implementation's exact name: spec.name of its document, or NULL without one. */
const char *kx_rank_impl_name(const struct kx_json *impl_doc);
/* The exact name an implementation is known by: `name` (its document's) when known, else the
 * implementation segment of a six-segment externalId; *ret_len bytes, not NUL-terminated (NULL
 * when neither). */
const char *kx_rank_impl_text(const char *name, const char *external_id, size_t *ret_len);
/* An implementation's path component, its identity in groups, series and compare/: of its exact
 * name when known, else of the implementation segment of a six-segment externalId, else
 * "unknown". */
void kx_rank_impl_component(const char *name, const char *external_id, char out[KX_NAME_MAX]);

/* GROUP.json's inputs {benchmark, metric, gpu, workload} and the comparison key they hash to. */
struct kx_json *kx_rank_group_inputs(struct kx_arena *a, const struct kx_group_rec *g);
int kx_rank_comparison_key(const struct kx_group_rec *g, struct kx_digest *ret);

/* Digits of rank numbers in a group of n ranked runs: at least 2, so `ls` sorts by rank. */
int kx_rank_width(uint32_t n_ranked);
/*
 * What a run is in its group's listing: "passed" when ranked (rank > 0); unranked, "superseded"
 * when it passed (an older run of an implementation whose current run is ranked, SPEC §2), else
 * "failed". It names unranked directories and the status columns of the views.
 */
const char *kx_rank_status(const struct kx_run_rec *run, uint32_t rank);
/* Whether two runs' p20–p80 intervals overlap (SPEC §2, within noise); false when either is unknown. */
bool kx_rank_within_noise(const struct kx_run_rec *a, const struct kx_run_rec *b);
/* "<rank>-<impl>-<shortid>", or "<status>-<impl>-<shortid>" when rank is 0 (superseded-, failed-).
 * out: KX_NAME_MAX+32. */
void kx_rank_dirname(uint32_t rank, int width, const struct kx_run_rec *run, char *out, size_t cap);
/*
 * The directory name of a group under its gpu directory: the base slug, or base "~" 8 hex of the
 * workload digest when the slug was cut or when another workload under the same gpu directory
 * has the same base slug (`shared` — computed by the caller from the sorted listing).
 */
void kx_rank_workload_dirname(const char *base, const struct kx_digest *workload, bool cut,
			      bool shared, char *out, size_t cap);

#endif
