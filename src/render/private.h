/* SPDX-License-Identifier: MIT */
/*
 * The private header of src/render: what crosses its files, grouped under the file that defines
 * it. The files, lowest first; each calls only those above it (scripts/check-layers checks it):
 *
 *     format.c   the formatting they all share: files' names, numbers, values, a run's cells, TSV
 *                and XML text
 *     runtext.c  the sentences about a run that summary.txt and index.html both say
 *     compare.c  /compare/'s <gpu>.tsv and summary.tsv, and the rules of a ratio and of mixed
 *     sweeps.c   the benchmark directories' files: their names, gpus.tsv, sweep.tsv and its sweeps
 *     history.c  a group's series and change points: history.tsv, history.json, /regressions.tsv
 *     steps.c    the steps of a group's series: changes.tsv, and the rows of /changes.tsv
 *     index.c    /index.tsv: its header and a group's rows; the cells it shares with ranking.tsv
 *     svg.c      the pictures: ranking.svg, history.svg, sweep.svg
 *     html.c     index.html, the page of a directory
 *     runpage.c  index.html of a run directory, the run's page
 *     render.c   the run and group files, SHA256SUMS lines, the README
 *
 * The text files write a run's numbers (render_cells) and a text field (render_field,
 * render_tsv_text) the same way.
 */
#ifndef KX_RENDER_PRIVATE_H
#define KX_RENDER_PRIVATE_H

#include "kx/history.h"
#include "kx/render.h"

/* ---- format.c --------------------------------------------------------------------------------- */

/* v in its JCS form, "null" where it has none */
void render_number(double v, char out[KX_JCS_NUMBER_MAX]);
/* The unit a duration of `ns` nanoseconds reads best in: the largest of s, ms, us, ns it reaches,
 * and that unit's nanoseconds in *ret_scale. */
const char *render_time_unit(double ns, double *ret_scale);
/* A ratio or a relative change as the TSV files write it: 4 significant digits, a plain decimal
 * ("3.588", "0.01235", "58050"), "inf" / "-inf", empty for NaN; the .json twins keep full precision. */
void render_ratio(double v, char out[KX_JCS_NUMBER_MAX]);
/* #1's value against run's, as "how many times worse than the best" (>= 1); NaN when unknown */
double render_vs_best(const struct kx_run_rec *run, const struct kx_run_rec *best);

/* A text field of a TSV file: tabs and line breaks become spaces, nothing stays empty (a missing value is an empty field). */
void render_field(const char *text, char *out, size_t cap);
/* The same for a string s (not NULL), appended to out whole. */
int render_tsv_text(struct kx_buf *out, const char *s);
/* The string at JSON pointer ptr of doc (NULL: none, not a string, or holding a NUL). */
const char *render_str_at(const struct kx_json *doc, const char *ptr);

/* CITATION.cff of a run (citation.c; SPEC §8): needs the run's group and documents. */
int render_citation(const struct kx_run_view *v, struct kx_buf *out);
/* s with XML's five special characters escaped, for text and attribute values alike of the
 * pictures and the pages; control characters (which XML 1.0 text cannot hold) as spaces */
int render_markup_text(struct kx_buf *out, const char *s);

/* A value in run x's metric's base unit, in x's unit; false when that unit is not known. */
bool render_in_unit(const struct kx_run_rec *x, double base, double *ret);
/* Run x's p20 and p80 in its unit; false when not known. */
bool render_spread_in_unit(const struct kx_run_rec *x, double *p20, double *p80);
/* "58.52 ms – 59.10 ms", run x's p20–p80 as people read it; false (out untouched) when not known. */
bool render_spread_text(const struct kx_run_rec *x, char *out, size_t cap);

/* A run's cells as the TSV files write them: empty where not known. */
struct render_cells {
	char value[KX_JCS_NUMBER_MAX]; /* the primary value in `unit`, JCS */
	char p20[KX_JCS_NUMBER_MAX], p80[KX_JCS_NUMBER_MAX]; /* its p20–p80 interval in `unit` */
	const char *unit;              /* the run's unit, "" without a value */
	char version[KX_VERSION_MAX];  /* the implementation's version (a TSV field) */
	char when[40];                 /* observedAt, RFC 3339 UTC */
};
void render_cells(const struct kx_run_rec *x, struct render_cells *c);

/* ---- runtext.c: the sentences of summary.txt that index.html says too ------------------------ */

/* Whether run v's i-th announced artifact has its bytes stored (SPEC §9). */
bool render_artifact_received(const struct kx_run_view *v, size_t i);

/* "274.1 ms  (274073425 ns)": a value as people read it, then its stored number and unit only
 * when they read differently ("27582.5 MB" once). */
void render_value_text(double v, const char *unit, char *out, size_t cap);
/* Whether run and #1 were measured under different protocol families. */
bool render_cross_protocol(const struct kx_run_rec *run, const struct kx_run_rec *best);
/* "2 of 3  (median latency, lower is better)", or why the run is not ranked. */
int render_rank_text(const struct kx_run_view *v, struct kx_buf *out);
/* "this is #1", "2.000x slower than #1" (v ranked, with a #1). */
void render_vs_best_text(const struct kx_run_view *v, char *out, size_t cap);
/* Its evidence and where it comes from: "source-native (liger-kernel-bench: …)". */
int render_evidence_text(const struct kx_run_view *v, struct kx_buf *out);
/* Its controlled rerun (v->rerun, not NULL): which run, the ratio, within noise or not. */
int render_rerun_text(const struct kx_run_view *v, struct kx_buf *out);
/* A reproduction of the run (SPEC §8; a->by not NULL) beside it: the reproducing run's median as
 * people read it ("" without a value), its ratio to the run's value (render_ratio), whether it ran
 * on the run's GPU and whether the two are within noise. */
struct render_reproduction {
	char median[64];
	char ratio[KX_JCS_NUMBER_MAX];
	bool same_gpu, within_noise;
};
void render_reproduction(const struct kx_run_view *v, const struct kx_run_attestation *a,
			  struct render_reproduction *ret);
/* The GPU as its environment names it: product, form factor, architecture. */
int render_hardware_text(const struct kx_run_view *v, struct kx_buf *out);
/* The run document's spec.measurements, a non-empty array, or NULL; and one of them, true when
 * it has each of the four (a string, the value a number). */
struct render_measurement {
	const char *metric, *statistic, *unit;
	double value;
};
const struct kx_json *render_measurements(const struct kx_run_view *v);
bool render_measurement(const struct kx_json *m, struct render_measurement *ret);
/* A stored signature as SIGNATURES, index.html and summary.txt show it: its key id, whether it
 * verifies, whether the store trusts its key now (known, valid, not revoked) and in a word why
 * (standing: "trusted", "revoked", "not trusted" for a signature that does not verify, "a key this
 * store does not know"), when the key was revoked. */
struct render_sig_cells {
	char key_id[KX_DIGEST_STR_MAX], revoked_at[40];
	const char *valid, *trusted; /* "yes" or "no" */
	const char *standing;
};
void render_sig_cells(const struct kx_run_signature *x, struct render_sig_cells *c);
/* Its path in benchmarks/, or why it has none (an alias). */
int render_path_text(const struct kx_run_view *v, struct kx_buf *out);
/* put(out, label, "%s", text) of the text `sentence` writes: one of the above, as a line of
 * summary.txt or a row of index.html. */
int render_sentence(struct kx_buf *out, const char *label,
		    int (*sentence)(const struct kx_run_view *v, struct kx_buf *out), const struct kx_run_view *v,
		    int (*put)(struct kx_buf *out, const char *label, const char *fmt, ...));

/* ---- compare.c -------------------------------------------------------------------------------- */

/* A line of summary.tsv: the totals of one gpu and metric (kernel and pass ""), or of one kernel,
 * pass and gpu (of one metric). */
struct render_compare_line {
	const char *kernel, *pass, *metric, *gpu;
	struct kx_compare_totals t;
};
/* summary.tsv's lines of rows[0..n), in its order (*ret to free); the geometric mean of totals as
 * summary.tsv writes it (empty when no ratio is known). */
int render_compare_lines(const struct kx_compare_row *rows, size_t n, struct render_compare_line **ret, size_t *ret_n);
void render_compare_geomean(const struct kx_compare_totals *t, char out[KX_JCS_NUMBER_MAX]);

/* ---- sweeps.c --------------------------------------------------------------------------------- */

/* A workload parameter: its name and its value as the slug writes it (kx_rank_param_text). */
struct render_param {
	const char *name, *text;
	enum kx_json_type type;
	double number;
};

/* A workload document's parameters (docs/views.md: spec.parameters, and spec.dtype as "dtype"
 * unless a parameter has that name), in name order, allocated in a; none without the document. */
int render_params(struct kx_arena *a, const struct kx_json *workload_doc, struct render_param **ret_p,
		  size_t *ret_n);

/* One point of a sweep: a current run at one value of the axis. */
struct sweep_point {
	const char *value;            /* the axis value as the slug writes it */
	double number;                /* its number, in a numeric sweep */
	const char *workload_dir;     /* its group's directory */
	const struct kx_run_rec *run; /* a current run of that group */
};

/* A sweep (docs/views.md): groups of one gpu directory whose workloads differ in `axis` alone. */
struct sweep {
	const char *axis;
	const char *fixed;  /* the other parameters, "name=value" joined by ",", or "" */
	bool numeric;       /* every value is a number: they sort numerically */
	const struct sweep_point *points; /* by value, implementation, workload directory */
	size_t len;
};

/* Every sweep of the n groups of one gpu directory, to fn in sweep.tsv's order; stops at fn's
 * first negative return, which it returns. The sweep's arrays are valid during the call. */
int render_sweeps(const struct kx_bench_group *g, size_t n, int (*fn)(void *ctx, const struct sweep *s), void *ctx);

/* ---- history.c -------------------------------------------------------------------------------- */

/*
 * A series (docs/history.md): one implementation's passed runs with a value in a group, in time
 * order (observedAt, then the digest), and their change points. render_each_series gives fn each
 * series of group g, implementations in name order (kx_name_cmp); stops at fn's first negative
 * return, which it returns. The arrays are valid during the call.
 */
struct render_series {
	const struct kx_group_view *g;
	const char *impl;
	const uint32_t *runs;          /* indexes into g->runs, in time order */
	size_t n;
	const struct kx_change *cp;    /* its change points, in order */
	size_t ncp;
};
int render_each_series(const struct kx_group_view *g, int (*fn)(void *ctx, const struct render_series *s),
		       void *ctx);

/* history.tsv and history.json of a group */
int render_history_tsv(const struct kx_group_view *g, struct kx_buf *out);
int render_history_json(const struct kx_group_view *g, struct kx_buf *out);

/* ---- steps.c ---------------------------------------------------------------------------------- */

/* changes.tsv of a group: the header and its steps (kx_render_group_changes) */
int render_changes_tsv(const struct kx_group_view *g, struct kx_buf *out);

/* ---- index.c: and the public kx_render_index_* (kx/render.h) ---------------------------------- */

/* The cells of run i of group g that ranking.tsv and /index.tsv share (docs/views.md): its rank,
 * vs_best (4 significant digits) and within_noise (yes/no below #1), each empty where it does not
 * apply (an unranked run; #1's within_noise), and its display, empty without a value; and its
 * controlled rerun (SPEC §10: kx_render_reruns), its short id, the ratio of its median to this
 * run's (4 significant digits) and whether their intervals overlap, empty without one. */
struct render_rank_cells {
	char rank[16];
	char vs_best[KX_JCS_NUMBER_MAX];
	const char *within_noise; /* "yes", "no" or "" */
	char display[64];
	char rerun[KX_SHORTID_LEN + 1];
	char rerun_ratio[KX_JCS_NUMBER_MAX];
	const char *rerun_within_noise; /* "yes", "no" or "" */
	double rerun_q;                 /* the ratio at full precision (NAN without a rerun) */
};
void render_rank_cells(const struct kx_group_view *g, size_t i, struct render_rank_cells *c);

/* ---- svg.c ------------------------------------------------------------------------------------ */

/* ranking.svg and history.svg of a group (sweep.svg is public: kx_render_sweep_svg) */
int render_ranking_svg(const struct kx_group_view *g, struct kx_buf *out);
int render_history_svg(const struct kx_group_view *g, struct kx_buf *out);

/* ---- html.c: and the public kx_render_index_html ---------------------------------------------- */

/* What every page shares (runpage.c's too): the head, the page's look and the breadcrumb of `path`
 * (the page's directory in the tree), up to <body> and its <nav>. */
int render_html_head(struct kx_buf *out, const char *title, const char *path);
/* The breadcrumb alone: each directory above `path` a link to its page, relative. */
int render_html_nav(struct kx_buf *out, const char *path);
/* <a href="PATH[/]">text</a>: PATH relative, its segments escaped for a URL, text for markup. */
int render_html_link(struct kx_buf *out, const char *path, bool dir, const char *text);
/* s[0..len) escaped as render_markup_text does, with a <wbr/> where a long name breaks ('_', '/',
 * ','; '.' too where `dots`; between an RFC 3339 time's date and time). */
int render_html_break_text(struct kx_buf *out, const char *s, size_t len, bool dots);
/* <td class="n">text</td> (a number, kept on one line) or <td>text</td>. */
int render_html_cell(struct kx_buf *out, bool number, const char *text);
/* <td class="u"><bdi>text</bdi></td>: what a user wrote, its line breaks kept, its direction
 * isolated; spanning `span` columns when more than one. */
int render_html_user_cell(struct kx_buf *out, const char *text, unsigned span);

/* ---- runpage.c ------------------------------------------------------------------------------- */

/* index.html of a run directory (SPEC §8), for the place v->in_runs says. */
int render_run_page(const struct kx_run_view *v, struct kx_buf *out);

/* ---- render.c: nothing crosses; the top of the folder, public (kx/render.h) ------------------- */

#endif
