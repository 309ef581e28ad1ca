/* SPDX-License-Identifier: MIT */
/*
 * The text of every generated file (SPEC §3): pure functions from records and documents to bytes,
 * no I/O. The same bytes are served by the mount and written by `kindex export`, which is what
 * makes the export the mount's oracle. Output is deterministic: the same inputs give the same
 * bytes, so sizes are exact and stable. Thread-safe.
 */
#ifndef KX_RENDER_H
#define KX_RENDER_H

#include "kx/rank.h"
#include "kx/records.h"

#include <sys/types.h>

enum kx_run_file {
	KX_RF_MANIFEST,       /* manifest.json */
	KX_RF_RUN,            /* run.json */
	KX_RF_PROTOCOL,       /* protocol.json */
	KX_RF_ENVIRONMENT,    /* environment.json */
	KX_RF_WORKLOAD,       /* workload.json — only when the document is stored */
	KX_RF_IMPLEMENTATION, /* implementation.json — likewise */
	KX_RF_SUMMARY,        /* summary.txt */
	KX_RF_DIGESTS,        /* DIGESTS */
	KX_RF_SHA256SUMS,     /* SHA256SUMS */
	KX_RF_SIGNATURES,     /* SIGNATURES: the run's signatures and whether the store trusts their keys */
	KX_RF_CITATION,       /* CITATION.cff: how to cite the run (Citation File Format 1.2.0) */
	KX_RF_INDEX_HTML,     /* index.html: the run's page for people (SPEC §8); its links depend on
			       * where it is (kx_run_view.in_runs) */
	KX_RF__COUNT,
};

/*
 * An attestation's file under a run's attestations/ (SPEC §8) is not one of the run's files: it is
 * the attestation document's own (a KX_NODE_DOC_FILE of this file number, id the attestation's
 * digest), one inode under every path of the run.
 */
#define KX_DOC_FILE_ATTESTATION 15
#define KX_DOC_FILE_ARTIFACT 14 /* SPEC §9: an artifact's bytes (node id: their SHA-256) */
_Static_assert(KX_RF__COUNT <= KX_DOC_FILE_ARTIFACT, "a run's files are numbered below an attestation's");

enum kx_group_file {
	KX_GF_RANKING_TSV,
	KX_GF_RANKING_JSON,
	KX_GF_GROUP_JSON,
	KX_GF_HISTORY_TSV,
	KX_GF_HISTORY_JSON,
	KX_GF_RANKING_SVG,
	KX_GF_HISTORY_SVG,
	KX_GF_CHANGES_TSV, /* the steps of every series (docs/views.md) */
	KX_GF_INDEX_HTML, /* rendered by the tree, which lists the directory (src/tree/html.c) */
	KX_GF_SHA256SUMS, /* last: it lists the files before it */
	KX_GF__COUNT,
};

const char *kx_run_file_name(enum kx_run_file f);
const char *kx_group_file_name(enum kx_group_file f);
int kx_run_file_from_name(const char *name);   /* -1 when none */
int kx_group_file_from_name(const char *name); /* -1 when none */

/* One run as the tree shows it: its record, position and the documents that are stored. */
/* A stored signature of a run as its files show it (SPEC §10): the key, what the store knows of
 * it (name, when revoked: 0 when not, or unknown to the store), whether it verifies, and the bytes
 * stored (manifest.json gives them back as the manifest carried them). */
struct kx_run_signature {
	struct kx_digest key_id;
	char key_name[128];
	bool known, valid;
	int64_t revoked_ns;
	uint8_t pub[KX_ED25519_PUB_LEN];
	uint8_t sig[KX_ED25519_SIG_LEN];
};

/*
 * A stored attestation of a run as its files show it (SPEC §8), oldest first (createdAt, then
 * digest). For a reproduction, the reproducing run: its record, its GPU and its /runs name;
 * whether it ran on this run's GPU, its ratio and whether it is within noise follow from them.
 */
struct kx_run_attestation {
	struct kx_digest digest;
	enum kx_attestation_type type;
	int64_t created_ns;
	const char *created_at;     /* as the document says it */
	const char *author;
	const char *text;           /* NULL: none (a note always has one) */
	const char *name;           /* its file under attestations/: "01-note-0123456789ab.json" */
	const struct kx_run_rec *by; /* a reproduction's run, else NULL */
	const char *by_gpu;
	const char *by_id;          /* its name under runs/ */
};

struct kx_run_view {
	const struct kx_run_rec *run;
	const struct kx_group_rec *group;
	const char *group_path;   /* "benchmarks/<kernel>/<pass>/<gpu>/<workload>" */
	const char *dirname;      /* "02-liger-e6eff4c05fb7" */
	uint32_t rank;            /* 1-based; 0 when not ranked */
	const struct kx_run_rec *best; /* rank 1 of the group, or NULL when none */
	const char *best_dirname;
	uint32_t ranked;          /* how many runs the group ranks (its current runs) */
	const struct kx_run_rec *above; /* the run ranked just above (rank > 1), else NULL */
	const char *above_dirname;
	const struct kx_run_rec *current; /* a superseded run's: its implementation's current run */
	const char *current_dirname;
	struct kx_json *doc[KX_DOC__COUNT]; /* parsed stored documents; NULL where not stored */
	/* SPEC §2 aliases: for an alias (run->alias), the /runs name of the run it is an alias of and
	 * that run's path (its rank and group fields above are then unset); for any other run, its
	 * aliases' digests (summary.txt's and DIGESTS' "also published as") */
	const char *alias_of_id, *alias_of_path;
	const struct kx_digest *aliases;
	size_t n_aliases;
	/* SPEC §10: the measured run of its implementation in its group that reruns it (kx_render_reruns;
	 * NULL: none), for summary.txt */
	const struct kx_run_rec *rerun;
	const char *rerun_dirname;
	/* SPEC §10: its stored signatures, in key id order (SIGNATURES, summary.txt, manifest.json) */
	const struct kx_run_signature *signatures;
	size_t n_signatures;
	/* SPEC §8: its attestations, oldest first (summary.txt, index.html) */
	const struct kx_run_attestation *attestations;
	size_t n_attestations;
	/* SPEC §9: for each of its spec.artifacts, in order, whether the bytes are stored (served under
	 * artifacts/); n_artifacts 0: none known received (summary.txt, index.html) */
	const bool *artifact_received;
	size_t n_artifacts;
	/* index.html's place, which its links follow: under runs/ (true) or in its rank directory;
	 * the names under runs/ of this run and of #1 (NULL: not known, then not linked) */
	bool in_runs;
	const char *runs_id, *best_runs_id;
};

/* Whether the file exists for this run (workload.json and implementation.json may not). */
bool kx_render_run_has(const struct kx_run_view *v, enum kx_run_file f);
/* Render one run file, except SHA256SUMS (see kx_render_sha256sums). -ENOENT when absent. */
int kx_render_run_file(const struct kx_run_view *v, enum kx_run_file f, struct kx_buf *out);

/*
 * Each run's controlled rerun (SPEC §10) into out[0..n): of runs[0..n), the index of the newest
 * measured run (by observedAt, then the greater digest) of run i's implementation that passed,
 * when run i is not measured itself and both have a value; else -1. One sort of the measured
 * runs, O(n log n). 0 or -ENOMEM.
 */
int kx_render_reruns(const struct kx_run_rec *runs, size_t n, int32_t *out);

/* A group as the tree shows it: its record, path and runs in rank order. */
struct kx_group_view {
	const struct kx_group_rec *group;
	const char *path;          /* "benchmarks/…/<workload dir>" */
	const struct kx_run_rec *runs; /* rank order: ranked first, then unranked */
	const char *const *dirnames;   /* per run */
	const int32_t *reruns;         /* per run: kx_render_reruns (NULL: no run has one) */
	size_t len;
	uint32_t ranked;
	const char *workload_dir;  /* the workload directory name */
	struct kx_json *workload_doc; /* when stored, else NULL */
};

/* ranking.tsv, ranking.json, GROUP.json, history.tsv, history.json, ranking.svg, history.svg, changes.tsv (not
 * SHA256SUMS, index.html). */
int kx_render_group_file(const struct kx_group_view *g, enum kx_group_file f, struct kx_buf *out);

/* Append "<sha256 hex>  <name>\n" for content of that SHA-256 (the sha256sum -c format). */
int kx_render_sha256sums_line(struct kx_buf *out, const char *name, const uint8_t sha256[KX_DIGEST_LEN]);
/* The length of that line for a name of name_len bytes, whatever the content: a SHA256SUMS file's
 * size is known from its names alone, without rendering (or hashing) what it covers. */
size_t kx_sha256sums_line_len(size_t name_len);

/*
 * The files of benchmark directories (docs/views.md): gpus.tsv in a pass directory, sweep.tsv in
 * a gpu directory, made of the current runs of the groups below them.
 */
enum kx_bench_file {
	KX_BF_GPUS_TSV,  /* benchmarks/<kernel>/<pass>/gpus.tsv */
	KX_BF_SWEEP_TSV, /* benchmarks/<kernel>/<pass>/<gpu>/sweep.tsv */
	KX_BF_SWEEP_SVG, /* benchmarks/<kernel>/<pass>/<gpu>/sweep.svg */
	KX_BF_INDEX_HTML, /* benchmarks/<kernel>[/<pass>[/<gpu>]]/index.html (src/tree/html.c) */
	KX_BF__COUNT,
};
const char *kx_bench_file_name(enum kx_bench_file f);

/* A group as those files see it. Borrowed pointers, valid for the call. */
struct kx_bench_group {
	const char *workload_dir;      /* its directory name in its gpu directory (sweep.tsv) */
	const char *base;              /* its base workload slug (gpus.tsv) */
	struct kx_digest workload;     /* the workload digest (gpus.tsv) */
	bool cut;                      /* the base slug was cut (gpus.tsv) */
	uint32_t gpu;                  /* the index of its gpu directory (gpus.tsv) */
	const struct kx_json *workload_doc; /* the stored workload document, or NULL (sweep.tsv) */
	const struct kx_run_rec *runs; /* its current runs (the ranked ones), in any order */
	size_t len;
};

/* sweep.tsv of the n groups of one gpu directory, in any order. */
int kx_render_sweep_tsv(const struct kx_bench_group *g, size_t n, struct kx_buf *out);
/* sweep.svg of the same groups: a panel per sweep of sweep.tsv; `title` names the directory. */
int kx_render_sweep_svg(const char *title, const struct kx_bench_group *g, size_t n, struct kx_buf *out);
/* gpus.tsv of the n groups of one pass directory, whose gpu directories are gpus[0..ngpus) in the
 * order of its columns (kx_name_cmp's); the rows in workload (kx_name_cmp) and implementation order. */
int kx_render_gpus_tsv(const char *const *gpus, size_t ngpus, const struct kx_bench_group *g, size_t n,
		       struct kx_buf *out);

/*
 * The files of /compare/<candidate>..<baseline>/ (docs/views.md): one row for each group where
 * both implementations have a current run, made of the two runs' numbers, versions and dates.
 */
struct kx_compare_run {
	double value;              /* the median, in unit */
	double base_value;         /* the same in the metric's base unit (ns, B) */
	double base_p20, base_p80; /* its p20–p80 interval in the base unit, when has_spread */
	bool has_spread;
	uint8_t order;             /* enum kx_order: whether lower is better */
	int64_t observed_ns;       /* its observedAt */
	const char *version;       /* the implementation's version; NULL or "" when none or not known */
	char unit[16];
};

struct kx_compare_row {
	const char *kernel, *pass, *gpu, *workload; /* the group: its path components */
	const char *metric;                         /* and its metric (latency, memory, …) */
	const struct kx_compare_run *cand, *base;
};

/* The ratio of cand to base (above 1: cand is better, whichever way the metric is better: base /
 * cand for lower-is-better, cand / base for higher-is-better); false when it has none (a median
 * of 0 or below). */
bool kx_compare_ratio(const struct kx_compare_run *cand, const struct kx_compare_run *base, double *ret);
/* "win", "loss", "noise" or "tie"; "" without a ratio and outside each other's noise. */
const char *kx_compare_result(const struct kx_compare_run *cand, const struct kx_compare_run *base);

/* Two runs set side by side lie more than KX_MIXED_NS apart, or differ in version (docs/views.md,
 * "mixed"): kx_compare_mixed for two implementations' runs (their dates only: two implementations'
 * versions are not one series); kx_mixed_span for one implementation's runs, from the oldest and
 * newest observedAt among them and whether two of their known versions differ. */
#define KX_MIXED_NS (INT64_C(90) * 86400 * 1000000000)
bool kx_compare_mixed(const struct kx_compare_run *cand, const struct kx_compare_run *base);
bool kx_mixed_span(int64_t oldest_ns, int64_t newest_ns, bool versions_differ);

/* <gpu>.tsv of the rows of one gpu, in any order: sorted by kernel, pass and workload (names in
 * kx_name_cmp's order). */
int kx_render_compare_gpu(const struct kx_compare_row *rows, size_t n, struct kx_buf *out);
/* summary.tsv of the rows of a pair, in any order: the totals of each gpu and metric, then a line
 * for each kernel, pass and gpu. */
int kx_render_compare_summary(const struct kx_compare_row *rows, size_t n, struct kx_buf *out);

/* The counts summary.tsv gives over groups where both have a current run (kx_compare_totals_add
 * adds one group; zeroed: none yet). */
struct kx_compare_totals {
	size_t groups, known; /* known: those with a ratio, which the geometric mean is over */
	size_t wins, losses, noise, ties, mixed;
	double logs;          /* the sum of the known ratios' natural logarithms */
};
void kx_compare_totals_add(struct kx_compare_totals *t, const struct kx_compare_run *cand,
			   const struct kx_compare_run *base);

/* index.html of a directory (docs/views.md): its entries linked, its pictures embedded, a
 * group's ranking, a pair's summary or compare/'s pairs as a table, and TSV views of the directory
 * each as a table of their bytes (the header line's names as column heads; the first
 * KX_HTML_TSV_ROWS rows, then a line saying how many more the file has). */
#define KX_HTML_TSV_ROWS 200
struct kx_html_tsv {
	const char *name; /* the file's name in the directory, linked */
	const char *bytes;
	size_t len;
};
struct kx_html_link {
	const char *name;
	bool dir;
};
struct kx_html_pair {
	const char *name;   /* "<candidate>..<baseline>", its directory */
	const char *gpu, *metric; /* the groups its totals are over: of one gpu and metric */
	struct kx_compare_totals totals;
};
struct kx_html_page {
	const char *path;    /* the directory in the tree: "" for the root, "benchmarks/<kernel>/<pass>" … */
	const char *heading; /* the page's title; the path (or "kindex") when NULL */
	const char *lead;    /* a sentence under the title, or NULL */
	const struct kx_group_view *group; /* a group's directory: its ranking as a table, or NULL */
	const char *const *pictures;       /* SVG files of the directory, embedded in this order */
	size_t npictures;
	const struct kx_html_link *links; /* every entry of the directory, in listing order */
	size_t nlinks;
	/* a pair directory of compare/: its summary.tsv as a table, made of the same rows (sorted as
	 * kx_render_compare_summary wants them), or NULL */
	const struct kx_compare_row *summary;
	size_t nsummary;
	/* compare/: every pair's totals on each gpu and metric as a table (by pair, then gpu and
	 * metric), or NULL */
	const struct kx_html_pair *pairs;
	size_t npairs;
	/* TSV views of the directory shown as tables, in this order, after its pictures */
	const struct kx_html_tsv *tables;
	size_t ntables;
};
int kx_render_index_html(const struct kx_html_page *p, struct kx_buf *out);

/*
 * /index.tsv (docs/views.md): a header with a column "p.<name>" for each of names[0..n) (every
 * workload parameter name of the tree, in byte order), then each group's rows, the groups in the
 * numeric order of their names (the tree orders them: src/tree/top.c). kx_render_param_names: a
 * workload document's parameter names, to fn in byte order.
 */
int kx_render_param_names(const struct kx_json *workload_doc, int (*fn)(void *ctx, const char *name), void *ctx);
int kx_render_index_header(const char *const *names, size_t n, struct kx_buf *out);
int kx_render_index_rows(const struct kx_group_view *g, const char *const *names, size_t n, struct kx_buf *out);

/*
 * /regressions.tsv and /regressions.json (docs/history.md): every open change point of every
 * series, worst first. A series' open change point is its last one: the start of the segment its
 * newest results are in. kx_render_group_regressions gives fn one row for each series of group g
 * that has one: a line of the TSV file (with its newline), the same row as a JSON object (JCS
 * bytes) and what the files sort them by. regressions.tsv is kx_render_regressions_header and the
 * lines sorted by kx_regression_cmp; regressions.json is kx_render_regressions_json of the rows
 * in that order: the rule, its parameters and the rows.
 */
struct kx_regression {
	bool worse;    /* a regression; else an improvement */
	double change; /* after / before - 1 */
	const char *line;
	size_t len;
	const char *json;
	size_t json_len;
};
int kx_render_regressions_header(struct kx_buf *out);
int kx_render_group_regressions(const struct kx_group_view *g,
				int (*fn)(void *ctx, const struct kx_regression *row), void *ctx);
int kx_render_regressions_json(const struct kx_regression *rows, size_t n, struct kx_buf *out);
/* Regressions first, each kind by the size of the move, largest first; then by the line's bytes. */
int kx_regression_cmp(const struct kx_regression *a, const struct kx_regression *b);

/*
 * /changes.tsv and a group's changes.tsv (docs/views.md, "changes.tsv — steps"): every step of
 * every series, two consecutive runs of one implementation in a group. The header, then each
 * group's rows (kx_render_group_changes: a line per step, series in render order, each in time
 * order), the groups in tree order; a group's own changes.tsv is the header and its rows.
 */
int kx_render_changes_header(struct kx_buf *out);
int kx_render_group_changes(const struct kx_group_view *g, struct kx_buf *out);

struct kx_readme_info {
	const char *store_path;
	struct kx_store_stats stats;
	const char *losses; /* kx_store_losses: a line each, or NULL */
	const char *replica; /* a replica's generation and lag (kx_store_note): lines, or NULL */
	const char *health;  /* a failing publisher, failing pulls (kx_tree_set_health): lines, or NULL */
};
int kx_render_readme(const struct kx_readme_info *info, struct kx_buf *out);

/* Human formatting of a value in its unit: "274.1 ms" for 274073425 ns, "1.25 GB" … */
void kx_render_value(double value, const char *unit, char *out, size_t cap);

#endif
