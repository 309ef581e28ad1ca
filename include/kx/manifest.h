/* SPDX-License-Identifier: MIT */
/*
 * Manifest files: parse, validate, and extract what the index needs from each manifest.
 *
 * A file holds one manifest (a JSON object, pretty or not) or JSON Lines of many (one per line).
 * kx_manifest_parse checks everything docs/manifest.md lists and collects *every* problem as
 * {JSON pointer, rule, message} with the source line and column; a file with any problem yields
 * no manifests at all ("one file, one decision"). A valid file yields manifests whose documents
 * carry their digests and whose run facts (benchmark, metric, primary value, observedAt …) are
 * extracted once, so later stages never walk JSON again.
 *
 * Ownership: a struct kx_manifest_file owns its arena; every pointer inside (documents, strings of
 * the facts) lives until kx_manifest_file_free. Parsing is thread-safe (no shared state).
 */
#ifndef KX_MANIFEST_H
#define KX_MANIFEST_H

#include "kx/canon.h"

#define KX_API_VERSION "kernelindex.dev/v1alpha1"
#define KX_MANIFEST_MAX_BYTES_DEFAULT (4u * 1024 * 1024)
/*
 * The longest text a workload's directory name is made from: its parameters sorted, each name and
 * value, joined by '-', then its dtype (kx_rank_workload_slug). Rule `length` past it.
 */
#define KX_WORKLOAD_TEXT_MAX (64u * 1024)
/*
 * Bounds on names (docs/manifest.md, rule `length`; each refused with its limit in the message):
 * an implementation's name, a GPU's product and form factor, a workload parameter's name and a
 * string parameter's value, in bytes; and the parameters of one workload. Real suites use far less
 * (Liger: at most 8 parameters, names under 40 bytes).
 */
#define KX_NAME_TEXT_MAX 256
#define KX_PARAM_VALUE_MAX 256
#define KX_PARAMS_MAX 64
/* An observedAt later than this after the moment of validation is refused (rule `future`). */
#define KX_FUTURE_SLACK_NS (86400ll * 1000000000ll)

enum kx_doc {
	KX_DOC_RUN,
	KX_DOC_PROTOCOL,
	KX_DOC_ENVIRONMENT,
	KX_DOC_WORKLOAD,
	KX_DOC_IMPLEMENTATION,
	KX_DOC__COUNT,
};

/* "run", "protocol" …: the manifest member that holds the document */
const char *kx_doc_member(enum kx_doc d);
/* The document a kind names, or -1 when it is no KernelIndex kind. */
int kx_doc_from_kind(const char *kind);

enum kx_order {
	KX_ORDER_ASCENDING,  /* lower is better: latency, memory */
	KX_ORDER_DESCENDING, /* higher is better: throughput */
};

/* What the index needs to know about a run, extracted once by the validator. */
struct kx_run_facts {
	const char *benchmark;  /* "<kernel>/<pass>", both segments [a-z0-9._-]+ */
	const char *metric;     /* "latency" unless the protocol says otherwise */
	const char *statistic;  /* the primary statistic, e.g. "median" */
	bool passed;            /* status == "passed" */
	bool has_value;         /* a primary value was found (always for passed runs) */
	double value;           /* the primary value, in `unit` */
	const char *unit;       /* "ns" for latency runs; the measurement's unit otherwise */
	double base_value;      /* value in the metric's base unit (ns, B, FLOP/s …) — ranked on */
	bool has_spread;        /* p20 and p80 of the primary metric were found */
	double base_p20, base_p80; /* in the base unit: the noise interval (SPEC §2, within noise) */
	enum kx_order order;
	int64_t observed_ns;    /* observedAt as nanoseconds since the epoch (UTC) */
	const char *observed_at;
	const char *source;     /* sourceNative.source, or NULL */
	const char *external_id; /* sourceNative.externalId, or NULL */
	const char *family;     /* the protocol's comparability family */
	const char *harness;    /* the protocol's harness.name, or NULL */
	bool has_correctness;   /* run.spec.correctness present (kindex-bench) */
};

/*
 * A run's artifacts (SPEC §9): what its spec.artifacts announces, each {name, digest, size,
 * mediaType}; the bytes are stored apart, by digest (kx/store.h). docs/artifacts.md has the rules.
 */
#define KX_ARTIFACTS_MAX 256      /* a run's */
#define KX_ARTIFACT_NAME_MAX 255  /* bytes: one file name */
#define KX_MEDIA_TYPE_MAX 127
struct kx_run_artifact {
	size_t index; /* in spec.artifacts */
	const char *name;
	struct kx_digest digest;
	uint64_t size;
	const char *media_type;
};
typedef int (*kx_run_artifact_fn)(void *ctx, const struct kx_run_artifact *a);
/* Each artifact a validated run document announces, in its order (none: 0); -EINVAL for one that
 * is not as validated. fn's non-zero return stops the walk and is returned. */
int kx_run_artifacts(const struct kx_json *run, kx_run_artifact_fn fn, void *ctx);
/* The rules of an artifact's name and media type. */
bool kx_artifact_name_valid(const char *p, size_t n);
bool kx_media_type_valid(const char *p, size_t n);

/* A verified signature of the manifest's run (SPEC §10): by the Ed25519 key pub, whose id is
 * key_id, over the run's digest string. */
#define KX_SIGNATURES_MEMBER "signatures"
#define KX_SIGNATURES_MAX 16
struct kx_signature {
	struct kx_digest key_id;
	uint8_t pub[KX_ED25519_PUB_LEN];
	uint8_t sig[KX_ED25519_SIG_LEN];
	unsigned at; /* its index in the manifest's signatures array */
};

/*
 * Sign manifest's run with key (SPEC §10): its Ed25519 signature of the run digest string, added to
 * the manifest's signatures array (made when missing; a signature by the same key replaced). The
 * run document is untouched. -EINVAL: no run object, or signatures is not an array.
 */
int kx_manifest_sign(struct kx_arena *a, struct kx_json *manifest, const struct kx_signer *key);

/*
 * An attestation (SPEC §8): a document of its own, `kind: Attestation` of apiVersion
 * KX_ATTESTATION_API, about one stored run (its subject) — a reproduction by another run, or a
 * note. A file may hold attestations beside manifests (one per JSON Lines line, or alone); what
 * only the store can tell (that the subject and the reproducing run are stored, and of one
 * benchmark) is checked at ingest. docs/attestations.md lists the rules.
 */
#define KX_ATTESTATION_API "kindexfs.dev/v1alpha1"
#define KX_ATTESTATION_KIND "Attestation"
#define KX_NOTE_TEXT_MAX 4096   /* a note's (or a reproduction's) text, in bytes */
#define KX_AUTHOR_TEXT_MAX 256  /* an author, in bytes */

/* (the values are stored: src/store/keys.h) */
enum kx_attestation_type {
	KX_ATTEST_REPRODUCTION = 0, /* another stored run reproduces the subject */
	KX_ATTEST_NOTE = 1,         /* text about the subject */
};

/* "reproduction" or "note" */
const char *kx_attestation_type_name(enum kx_attestation_type type);

struct kx_attestation {
	struct kx_digest digest;  /* of the document (the rule of SPEC §1) */
	const char *jcs;          /* the whole document's canonical bytes, as stored */
	size_t jcs_len;
	enum kx_attestation_type type;
	struct kx_digest subject; /* the run it is about */
	struct kx_digest run;     /* a reproduction's: the reproducing run */
	int64_t created_ns;
	const char *author;
	const char *text;         /* NULL: none */
};

struct kx_manifest {
	unsigned line;                        /* where it starts in the file (1-based) */
	struct kx_json *root;
	struct kx_json *doc[KX_DOC__COUNT];   /* NULL where the manifest does not include it */
	struct kx_digest digest[KX_DOC__COUNT]; /* of included documents; else the run's reference */
	const char *jcs[KX_DOC__COUNT];       /* JCS of each included whole document (in the arena) */
	size_t jcs_len[KX_DOC__COUNT];
	struct kx_run_facts facts;
	struct kx_signature *sigs; /* its signatures, each verified unless left to the caller (in the arena; none: NULL, 0) */
	size_t nsigs;
	/* set: this entry of the file is an attestation, not a manifest (all of the above unset but line
	 * and root) */
	const struct kx_attestation *att;
};

/*
 * For a parse that leaves signatures to its caller (kx_manifest_limits.on_deferred): whether x is
 * its key's signature of the run digest `run` — the Ed25519 check, safe on any thread — and the
 * problem (rule `signature`) that a signature x of m that is not makes its file.
 */
bool kx_signature_good(const struct kx_digest *run, const struct kx_signature *x);
int kx_signature_refuse(const struct kx_manifest *m, const struct kx_signature *x, struct kx_problems *problems);

struct kx_manifest_file {
	struct kx_arena *arena;
	struct kx_manifest *v;
	size_t len;
	bool json_lines;
};

struct kx_manifest_limits {
	size_t max_bytes;   /* 0 = KX_MANIFEST_MAX_BYTES_DEFAULT */
	unsigned max_depth; /* 0 = KX_JSON_MAX_DEPTH_DEFAULT */
	/*
	 * Set: signatures are left to the caller. Each manifest of a valid file is handed over with
	 * its signatures unchecked as it is taken into the file (index: its place in v), for the
	 * caller to check with kx_signature_good, on other threads while parsing goes on, and to
	 * refuse the file for a bad one. A file refused anyway has them checked here.
	 */
	int (*on_deferred)(void *ctx, size_t index, const struct kx_manifest *m); /* < 0: fail (errno) */
	void *deferred_ctx;
};

/*
 * Parse and validate `len` bytes. Returns 0 with *ret_file set when the file is valid, -EINVAL
 * when it is not (every problem appended to `problems`, *ret_file untouched), -ENOMEM.
 * `limits` may be NULL.
 */
int kx_manifest_parse(const char *bytes, size_t len, const struct kx_manifest_limits *limits,
		      struct kx_manifest_file **ret_file, struct kx_problems *problems);
void kx_manifest_file_free(struct kx_manifest_file *f);

/* Validate one manifest object (already parsed, e.g. built by an importer). Same contract. */
int kx_manifest_check(struct kx_arena *a, struct kx_json *root, struct kx_manifest *ret,
		      struct kx_problems *problems);

/*
 * Parse an RFC 3339 date-time with a zone ("2024-11-22T17:44:03.000Z", "…+02:00") into
 * nanoseconds since the epoch. -EINVAL for anything else, including impossible dates.
 */
int kx_time_parse(const char *s, int64_t *ret_ns);
/* Format ns since the epoch as "YYYY-MM-DDTHH:MM:SS.mmmZ" (out: at least 32 bytes). */
void kx_time_format(int64_t ns, char *out);

/*
 * The metric a unit measures ("latency" for "ms") and the factor to its base unit
 * (ms → 1e6 ns); NULL when the unit is unknown.
 */
const char *kx_unit_metric(const char *unit, double *ret_factor);

#endif
