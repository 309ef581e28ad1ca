// SPDX-License-Identifier: MIT
/*
 * index.html of a run directory (SPEC §8): the run's page for people, in the order of
 * KernelIndex's run page — the primary measurement, rank and vs #1, identity, correctness,
 * workload, measurements, protocol, environment, artifacts, replications and notes, the
 * controlled rerun, signatures, evidence, the canonical manifest and how to cite — then a link to
 * every file of the directory. The same page as the directories' (html.c: its head, look and
 * escaping), and like them static, script-free, well-formed XML, every string of a document
 * escaped, nothing that depends on when it is read.
 *
 * A run has the page in two places, its rank directory and runs/<id>/, and its links are relative,
 * so they differ by place (kx_run_view.in_runs): #1's page is ../<its rank directory>/ beside it
 * in a group, ../<its id>/ in runs/; the group is ../ or ../../<group path>/. The bytes of each
 * place are fixed by the view alone.
 */
#include "private.h"

#include "kx/json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The sections, in the order the page shows them (test-render checks it). */
static const char *const sections[] = {
	"Measurement", "Rank", "Identity", "Correctness", "Workload", "Measurements", "Protocol", "Environment",
	"Artifacts", "Replications and notes", "Controlled rerun", "Signatures", "Evidence",
	"Canonical manifest", "How to cite", "Files",
};
enum { S_MEASUREMENT, S_RANK, S_IDENTITY, S_CORRECTNESS, S_WORKLOAD, S_MEASUREMENTS, S_PROTOCOL, S_ENVIRONMENT,
       S_ARTIFACTS, S_ATTESTATIONS, S_RERUN, S_SIGNATURES, S_EVIDENCE, S_MANIFEST, S_CITE, S_FILES, S__COUNT };
_Static_assert(KX_ARRAY_SIZE(sections) == S__COUNT, "a name for each section");

/* ---- where the page is ------------------------------------------------------------------------ */

/* The run's name under runs/: the tree's (longer where two runs share 12 digits), else its short id. */
static void id_of(const struct kx_run_rec *x, const char *known, char out[KX_DIGEST_HEX + 1])
{
	char hex[KX_DIGEST_HEX + 1];
	kx_digest_hex(&x->run, hex);
	snprintf(out, KX_DIGEST_HEX + 1, "%.*s", known ? KX_DIGEST_HEX : KX_SHORTID_LEN, known ? known : hex);
}

/* "../" as many times as it takes from the page's directory to the root of the tree */
static int to_root(const struct kx_run_view *v, struct kx_buf *out)
{
	size_t up = v->in_runs ? 2 : 1; /* runs/<id>/, or the rank directory below its group's path */
	for (const char *q = v->in_runs ? NULL : v->group_path; q; q = strchr(q + 1, '/'))
		up++; /* a component of the group's path */
	int r = 0;
	for (size_t i = 0; i < up && r >= 0; i++)
		r = kx_buf_puts(out, "../");
	return r;
}

/* The relative path of the page of the run named `id` under runs/. */
static int runs_page(const struct kx_run_view *v, const char *id, struct kx_buf *out)
{
	int r = v->in_runs ? kx_buf_puts(out, "../") : to_root(v, out);
	if (r >= 0 && !v->in_runs)
		r = kx_buf_puts(out, "runs/");
	return r < 0 ? r : kx_buf_printf(out, "%s/index.html", id);
}

/* <a href="HREF">text</a> for an href built into a buffer by the caller */
static int link_to(struct kx_buf *out, struct kx_buf *href, const char *text)
{
	int r = href->ptr ? render_html_link(out, href->ptr, false, text) : -ENOMEM;
	kx_buf_reset(href);
	return r;
}

/* ---- rows ------------------------------------------------------------------------------------- */

static int section(struct kx_buf *out, int s)
{
	return kx_buf_printf(out, "<h2>%s</h2>\n", sections[s]);
}

static int row_open(struct kx_buf *out, const char *label)
{
	int r = kx_buf_puts(out, "<tr><th>");
	if (r >= 0)
		r = render_markup_text(out, label);
	return r < 0 ? r : kx_buf_puts(out, "</th><td>");
}

static int row_close(struct kx_buf *out)
{
	return kx_buf_puts(out, "</td></tr>\n");
}

/* <tr><th>label</th><td>text</td></tr>, the text printf's, escaped, free to break in a long name */
static int row(struct kx_buf *out, const char *label, const char *fmt, ...) KX_PRINTF(3, 4);

static int row(struct kx_buf *out, const char *label, const char *fmt, ...)
{
	struct kx_buf t;
	kx_buf_init(&t, 0);
	va_list ap;
	va_start(ap, fmt);
	int r = kx_buf_vprintf(&t, fmt, ap);
	va_end(ap);
	if (r >= 0)
		r = row_open(out, label);
	if (r >= 0)
		r = render_html_break_text(out, t.ptr ? t.ptr : "", t.len, false);
	kx_buf_release(&t);
	return r < 0 ? r : row_close(out);
}

/* a row of a sentence of runtext.c, which fn writes */
static int text_row(struct kx_buf *out, const char *label, int (*fn)(const struct kx_run_view *v, struct kx_buf *out),
		    const struct kx_run_view *v)
{
	return render_sentence(out, label, fn, v, row);
}

static int digest_row(struct kx_buf *out, const char *label, const struct kx_digest *d)
{
	char ds[KX_DIGEST_STR_MAX];
	kx_digest_format(d, ds);
	return row(out, label, "%s", ds);
}

/* A JSON value as a cell's text: a string as it is, anything else as its JCS. */
static int value_text(const struct kx_json *val, struct kx_buf *out)
{
	return val->type == KX_JSON_STRING ? kx_buf_append(out, val->str.ptr, val->str.len) : kx_jcs_write(val, out);
}

/* Each member of an object (correctness, software) as a row; `none` when it has none. */
static int members(struct kx_buf *out, const struct kx_json *obj, const char *none)
{
	if (!obj || obj->type != KX_JSON_OBJECT || !obj->obj.len)
		return kx_buf_printf(out, "<p>%s</p>\n", none);
	int r = kx_buf_puts(out, "<table>\n");
	struct kx_buf t;
	kx_buf_init(&t, 0);
	for (size_t i = 0; i < obj->obj.len && r >= 0; i++) {
		kx_buf_reset(&t);
		r = value_text(obj->obj.v[i].value, &t);
		if (r >= 0)
			r = row(out, obj->obj.v[i].key, "%s", t.ptr ? t.ptr : "");
	}
	kx_buf_release(&t);
	return r < 0 ? r : kx_buf_puts(out, "</table>\n");
}

/* A table's head: <table> and a row of <th>, the names given. */
static int head(struct kx_buf *out, const char *const *names, size_t n)
{
	int r = kx_buf_puts(out, "<div class=\"t\"><table>\n<tr>");
	for (size_t i = 0; i < n && r >= 0; i++)
		r = kx_buf_printf(out, "<th>%s</th>", names[i]);
	return r < 0 ? r : kx_buf_puts(out, "</tr>\n");
}

static int table_end(struct kx_buf *out)
{
	return kx_buf_puts(out, "</table></div>\n");
}

/* ---- the sections ----------------------------------------------------------------------------- */

static int measurement(struct kx_buf *out, const struct kx_run_view *v)
{
	const struct kx_run_rec *x = v->run;
	const char *stat = render_str_at(v->doc[KX_DOC_RUN], "/spec/timing/primaryStatistic");
	char text[KX_JCS_NUMBER_MAX + 160], spread[160];
	int r = section(out, S_MEASUREMENT);
	if (r >= 0)
		r = kx_buf_puts(out, "<table>\n");
	if (r >= 0 && x->has_value) {
		render_value_text(x->value, x->unit, text, sizeof(text));
		r = row(out, "value", "%s", text);
	} else if (r >= 0) {
		r = row(out, "value", "no value");
	}
	if (r >= 0)
		r = row(out, "metric", "%s (%s is better)", v->group->metric,
			x->order == KX_ORDER_DESCENDING ? "higher" : "lower");
	if (r >= 0)
		r = row(out, "statistic", "%s", stat ? stat : "primary");
	if (r >= 0 && x->has_value)
		r = row(out, "unit", "%s", x->unit);
	if (r >= 0 && render_spread_text(x, spread, sizeof(spread)))
		r = row(out, "p20–p80", "%s", spread);
	if (r >= 0)
		r = row(out, "status", "%s", x->passed ? "passed" : "failed");
	return r < 0 ? r : kx_buf_puts(out, "</table>\n");
}

static int rank(struct kx_buf *out, const struct kx_run_view *v)
{
	const struct kx_run_rec *x = v->run;
	struct kx_buf href;
	kx_buf_init(&href, 0);
	int r = section(out, S_RANK);
	if (r >= 0)
		r = kx_buf_puts(out, "<table>\n");
	if (r >= 0)
		r = text_row(out, "rank", render_rank_text, v);
	if (r >= 0 && x->alias && (r = row_open(out, "alias of")) >= 0) {
		/* SPEC §2: an alias is in runs/ only, beside the run it is an alias of */
		if ((r = runs_page(v, v->alias_of_id, &href)) >= 0)
			r = link_to(out, &href, v->alias_of_path);
		if (r >= 0)
			r = row_close(out);
	}
	if (r >= 0 && v->rank && v->best) {
		char vs[160], val[64], best_id[KX_DIGEST_HEX + 1], text[3 * KX_NAME_MAX];
		render_vs_best_text(v, vs, sizeof(vs));
		kx_render_value(v->best->value, v->best->unit, val, sizeof(val));
		id_of(v->best, v->best_runs_id, best_id);
		snprintf(text, sizeof(text), "#1: %s, %s", v->best->impl, val);
		r = row_open(out, "vs #1");
		if (r >= 0)
			r = render_markup_text(out, vs);
		if (r >= 0 && v->rank > 1)
			r = kx_buf_puts(out, " (");
		if (r >= 0 && v->rank > 1) {
			r = v->in_runs ? runs_page(v, best_id, &href)
				       : kx_buf_printf(&href, "../%s/index.html", v->best_dirname);
			if (r >= 0)
				r = link_to(out, &href, text);
			if (r >= 0)
				r = kx_buf_puts(out, ")");
		}
		if (r >= 0)
			r = row_close(out);
		if (r >= 0 && render_cross_protocol(x, v->best))
			r = row(out, "comparability", "cross-protocol: measured under '%s', #1 under '%s'", x->family,
				v->best->family);
	}
	if (r >= 0 && v->above && kx_rank_within_noise(x, v->above))
		r = row(out, "noise", "within noise of #%u (%s): the p20–p80 intervals overlap", v->rank - 1,
			v->above_dirname);
	if (r >= 0 && (r = row_open(out, "group")) >= 0) {
		r = v->in_runs ? to_root(v, &href) : kx_buf_puts(&href, "../");
		if (r >= 0 && v->in_runs)
			r = kx_buf_printf(&href, "%s/", v->group_path);
		if (r >= 0)
			r = kx_buf_puts(&href, "index.html");
		if (r >= 0)
			r = link_to(out, &href, "its page, with every run of the group");
		if (r >= 0)
			r = row_close(out);
	}
	kx_buf_release(&href);
	return r < 0 ? r : kx_buf_puts(out, "</table>\n");
}

static int identity(struct kx_buf *out, const struct kx_run_view *v)
{
	const struct kx_run_rec *x = v->run;
	const struct kx_json *rs = v->doc[KX_DOC_RUN], *im = v->doc[KX_DOC_IMPLEMENTATION];
	const char *ver = render_str_at(im, "/spec/version"), *prov = render_str_at(im, "/spec/provider");
	const char *name = render_str_at(im, "/spec/name"), *obs = render_str_at(rs, "/spec/observedAt");
	const char *src = render_str_at(rs, "/spec/sourceNative/source");
	const char *ext = render_str_at(rs, "/spec/sourceNative/externalId");
	const char *msg = render_str_at(rs, "/spec/message");
	char when[40], id[KX_DIGEST_HEX + 1];
	kx_time_format(x->observed_ns, when);
	id_of(x, v->runs_id, id);
	int r = section(out, S_IDENTITY);
	if (r >= 0)
		r = kx_buf_puts(out, "<table>\n");
	if (r >= 0)
		r = row(out, "benchmark", "%s", v->group->benchmark);
	if (r >= 0)
		r = row(out, "implementation", "%s%s%s%s%s", name ? name : x->impl, ver || x->version[0] ? " " : "",
			ver ? ver : x->version, prov ? " by " : "", prov ? prov : "");
	if (r >= 0)
		r = digest_row(out, "run digest", &x->run);
	if (r >= 0)
		r = row(out, "short id", "%s", id);
	if (r >= 0)
		r = row(out, "observed", "%s", obs ? obs : when);
	if (r >= 0 && src)
		r = row(out, "source", "%s%s%s", src, ext ? ": " : "", ext ? ext : "");
	if (r >= 0 && msg)
		r = row(out, "message", "%s", msg);
	if (r >= 0)
		r = text_row(out, "path", render_path_text, v);
	if (r >= 0)
		r = digest_row(out, "comparison key", &x->group);
	for (size_t i = 0; i < v->n_aliases && r >= 0; i++)
		r = digest_row(out, "also published as", &v->aliases[i]);
	return r < 0 ? r : kx_buf_puts(out, "</table>\n");
}

static int correctness(struct kx_buf *out, const struct kx_run_view *v)
{
	const struct kx_json *rs = v->doc[KX_DOC_RUN];
	int r = section(out, S_CORRECTNESS);
	return r < 0 ? r
		     : members(out, rs ? kx_json_pointer(rs, "/spec/correctness") : NULL,
			       "No correctness record: the run does not say how its output was checked.");
}

static int workload(struct kx_buf *out, const struct kx_run_view *v)
{
	struct kx_arena *a = kx_arena_new();
	struct render_param *p = NULL;
	size_t n = 0;
	int r = a ? render_params(a, v->doc[KX_DOC_WORKLOAD], &p, &n) : -ENOMEM;
	if (r >= 0)
		r = section(out, S_WORKLOAD);
	if (r >= 0)
		r = kx_buf_puts(out, "<table>\n");
	if (r >= 0 && !v->doc[KX_DOC_WORKLOAD])
		r = row(out, "slug", "%s (workload document not published)", v->group->workload_slug);
	for (size_t i = 0; i < n && r >= 0; i++)
		r = row(out, p[i].name, "%s", p[i].text);
	if (r >= 0)
		r = digest_row(out, "digest", &v->run->workload);
	kx_arena_free(a);
	return r < 0 ? r : kx_buf_puts(out, "</table>\n");
}

static int measurements(struct kx_buf *out, const struct kx_run_view *v)
{
	const struct kx_json *ms = render_measurements(v);
	static const char *const cols[] = { "metric", "statistic", "value", "unit" };
	int r = section(out, S_MEASUREMENTS);
	if (r < 0)
		return r;
	if (!ms)
		return kx_buf_puts(out, "<p>No measurements beside the primary value.</p>\n");
	r = head(out, cols, KX_ARRAY_SIZE(cols));
	for (size_t i = 0; i < ms->arr.len && r >= 0; i++) {
		struct render_measurement m;
		if (!render_measurement(ms->arr.v[i], &m))
			continue;
		char text[KX_JCS_NUMBER_MAX + 160];
		render_value_text(m.value, m.unit, text, sizeof(text));
		r = kx_buf_puts(out, "<tr>");
		if (r >= 0)
			r = render_html_cell(out, false, m.metric);
		if (r >= 0)
			r = render_html_cell(out, false, m.statistic);
		if (r >= 0)
			r = render_html_cell(out, true, text);
		if (r >= 0)
			r = render_html_cell(out, false, m.unit);
		if (r >= 0)
			r = kx_buf_puts(out, "</tr>\n");
	}
	return r < 0 ? r : table_end(out);
}

static int protocol(struct kx_buf *out, const struct kx_run_view *v)
{
	const struct kx_json *pr = v->doc[KX_DOC_PROTOCOL];
	static const struct {
		const char *label, *ptr;
	} fields[] = {
		{ "title", "/metadata/title" },
		{ "harness", "/spec/harness/name" },
		{ "harness version", "/spec/harness/version" },
		{ "repository", "/spec/harness/repository" },
		{ "timer", "/spec/measurement/timer" },
		{ "notes", "/spec/comparability/notes" },
	};
	int r = section(out, S_PROTOCOL);
	if (r >= 0)
		r = kx_buf_puts(out, "<table>\n");
	if (r >= 0)
		r = row(out, "family", "%s", v->run->family);
	for (size_t i = 0; i < KX_ARRAY_SIZE(fields) && r >= 0; i++) {
		const char *s = render_str_at(pr, fields[i].ptr);
		if (s)
			r = row(out, fields[i].label, "%s", s);
	}
	if (r >= 0)
		r = digest_row(out, "digest", &v->run->protocol);
	return r < 0 ? r : kx_buf_puts(out, "</table>\n");
}

static int environment(struct kx_buf *out, const struct kx_run_view *v)
{
	const struct kx_json *env = v->doc[KX_DOC_ENVIRONMENT];
	int r = section(out, S_ENVIRONMENT);
	if (r >= 0)
		r = kx_buf_puts(out, "<table>\n");
	if (r >= 0)
		r = text_row(out, "GPU", render_hardware_text, v);
	if (r >= 0)
		r = digest_row(out, "digest", &v->run->environment);
	if (r >= 0)
		r = kx_buf_puts(out, "</table>\n<h3>Software</h3>\n");
	return r < 0 ? r : members(out, env ? kx_json_pointer(env, "/spec/software") : NULL, "Not recorded.");
}

/* SPEC §9: what the run document's spec.artifacts announces; a received one's name links its bytes */
static int artifacts(struct kx_buf *out, const struct kx_run_view *v)
{
	const struct kx_json *rs = v->doc[KX_DOC_RUN];
	const struct kx_json *as = rs ? kx_json_pointer(rs, "/spec/artifacts") : NULL;
	static const char *const cols[] = { "name", "size", "mediaType", "digest", "bytes" };
	int r = section(out, S_ARTIFACTS);
	if (r < 0)
		return r;
	if ((!as || as->type != KX_JSON_ARRAY || !as->arr.len))
		return kx_buf_puts(out, "<p>No artifacts published with this run.</p>\n");
	r = head(out, cols, KX_ARRAY_SIZE(cols));
	struct kx_buf t;
	kx_buf_init(&t, 0);
	for (size_t i = 0; i < as->arr.len && r >= 0; i++) {
		r = kx_buf_puts(out, "<tr>");
		bool got = render_artifact_received(v, i);
		for (size_t k = 0; k + 1 < KX_ARRAY_SIZE(cols) && r >= 0; k++) {
			const struct kx_json *f = kx_json_get(as->arr.v[i], cols[k]);
			kx_buf_reset(&t);
			r = f ? value_text(f, &t) : 0;
			if (r < 0)
				break;
			if (k == 0 && got) {
				struct kx_buf href;
				kx_buf_init(&href, 0);
				r = kx_buf_printf(&href, "artifacts/%s", t.ptr ? t.ptr : "");
				if (r >= 0 && (r = kx_buf_puts(out, "<td>")) >= 0 && (r = link_to(out, &href, t.ptr ? t.ptr : "")) >= 0)
					r = kx_buf_puts(out, "</td>");
				kx_buf_release(&href);
			} else {
				r = render_html_cell(out, k == 1, t.ptr ? t.ptr : "");
			}
		}
		if (r >= 0)
			r = render_html_cell(out, false, got ? "received" : "announced, not received");
		if (r >= 0)
			r = kx_buf_puts(out, "</tr>\n");
	}
	kx_buf_release(&t);
	return r < 0 ? r : table_end(out);
}

/* SPEC §8: each attestation — a reproduction with its run, median, ratio, GPU and noise */
static int attestations(struct kx_buf *out, const struct kx_run_view *v)
{
	/* a row each, its text (a note's, or a reproduction's) in a row of its own below, as wide as
	 * the table: a paragraph does not fit a column */
	static const char *const cols[] = { "type", "date", "author", "run", "median", "ratio", "GPU", "noise" };
	int r = section(out, S_ATTESTATIONS);
	if (r >= 0 && !v->n_attestations)
		return kx_buf_puts(out, "<p>No attestations yet. They never change a run's evidence; only a controlled "
					"rerun does.</p>\n");
	if (r >= 0)
		r = kx_buf_puts(out, "<p>They never change a run's evidence; only a controlled rerun does.</p>\n");
	if (r >= 0)
		r = head(out, cols, KX_ARRAY_SIZE(cols));
	struct kx_buf href;
	kx_buf_init(&href, 0);
	for (size_t i = 0; i < v->n_attestations && r >= 0; i++) {
		const struct kx_run_attestation *a = &v->attestations[i];
		const struct kx_run_rec *y = a->by;
		struct render_reproduction c = { .median = "", .ratio = "" };
		const char *gpu = "", *noise = "";
		if (y) {
			render_reproduction(v, a, &c);
			gpu = c.same_gpu ? "same GPU" : "another GPU";
			noise = c.within_noise ? "within noise" : "outside the noise";
		}
		/* its type links its file under attestations/ */
		r = kx_buf_puts(out, "<tr><td>");
		if (r >= 0 && (r = kx_buf_printf(&href, "attestations/%s", a->name)) >= 0)
			r = link_to(out, &href, kx_attestation_type_name(a->type));
		if (r >= 0)
			r = kx_buf_puts(out, "</td>");
		if (r >= 0)
			r = render_html_cell(out, false, a->created_at ? a->created_at : "");
		if (r >= 0)
			r = render_html_user_cell(out, a->author ? a->author : "", 1);
		if (r >= 0)
			r = kx_buf_puts(out, "<td>");
		if (r >= 0 && y && a->by_id && (r = runs_page(v, a->by_id, &href)) >= 0)
			r = link_to(out, &href, a->by_id);
		if (r >= 0)
			r = kx_buf_puts(out, "</td>");
		if (r >= 0)
			r = render_html_cell(out, true, c.median);
		if (r >= 0)
			r = render_html_cell(out, true, c.ratio);
		if (r >= 0)
			r = render_html_cell(out, false, gpu);
		if (r >= 0)
			r = render_html_cell(out, false, noise);
		if (r >= 0)
			r = kx_buf_puts(out, "</tr>\n");
		if (r >= 0 && a->text && (r = kx_buf_puts(out, "<tr><td></td>")) >= 0 &&
		    (r = render_html_user_cell(out, a->text, KX_ARRAY_SIZE(cols) - 1)) >= 0)
			r = kx_buf_puts(out, "</tr>\n");
	}
	kx_buf_release(&href);
	return r < 0 ? r : table_end(out);
}

static int rerun(struct kx_buf *out, const struct kx_run_view *v)
{
	int r = section(out, S_RERUN);
	if (r >= 0 && !v->rerun)
		return kx_buf_puts(out, "<p>None: no measured run of this implementation, workload and GPU reruns "
					"it.</p>\n");
	if (r >= 0)
		r = kx_buf_puts(out, "<table>\n");
	if (r >= 0)
		r = text_row(out, "rerun", render_rerun_text, v);
	return r < 0 ? r : kx_buf_puts(out, "</table>\n");
}

/* SPEC §10: as SIGNATURES shows them */
static int signatures(struct kx_buf *out, const struct kx_run_view *v)
{
	static const char *const cols[] = { "key name", "key id", "valid", "trusted", "revoked at" };
	int r = section(out, S_SIGNATURES);
	if (r >= 0 && !v->n_signatures)
		return kx_buf_puts(out, "<p>No signatures.</p>\n");
	if (r >= 0)
		r = head(out, cols, KX_ARRAY_SIZE(cols));
	for (size_t i = 0; i < v->n_signatures && r >= 0; i++) {
		const struct kx_run_signature *x = &v->signatures[i];
		struct render_sig_cells c;
		render_sig_cells(x, &c);
		const char *const text[] = { x->known ? x->key_name : "(a key this store does not know)", c.key_id,
					     c.valid, c.trusted, c.revoked_at };
		r = kx_buf_puts(out, "<tr>");
		for (size_t k = 0; k < KX_ARRAY_SIZE(text) && r >= 0; k++)
			r = render_html_cell(out, false, text[k]);
		if (r >= 0)
			r = kx_buf_puts(out, "</tr>\n");
	}
	return r < 0 ? r : table_end(out);
}

static int evidence(struct kx_buf *out, const struct kx_run_view *v)
{
	int r = section(out, S_EVIDENCE);
	if (r >= 0)
		r = kx_buf_puts(out, "<table>\n");
	if (r >= 0)
		r = text_row(out, "evidence", render_evidence_text, v);
	return r < 0 ? r : kx_buf_puts(out, "</table>\n");
}

static int manifest(struct kx_buf *out, const struct kx_run_view *v)
{
	int r = section(out, S_MANIFEST);
	if (r >= 0)
		r = kx_buf_puts(out, "<p>");
	if (r >= 0)
		r = render_html_link(out, "manifest.json", false, "manifest.json");
	if (r >= 0)
		r = kx_buf_puts(out, ": the whole record, its documents and signatures, which ingests again to "
				     "the same run. ");
	if (r >= 0)
		r = render_html_link(out, "DIGESTS", false, "DIGESTS");
	if (r >= 0)
		r = kx_buf_puts(out, ": every digest of the run and its comparison key. ");
	if (r >= 0)
		r = render_html_link(out, "SHA256SUMS", false, "SHA256SUMS");
	return r < 0 ? r
		     : kx_buf_puts(out, ": this directory's files, for <code>sha256sum -c SHA256SUMS</code>.</p>\n");
}

static int cite(struct kx_buf *out, const struct kx_run_view *v)
{
	char text[KX_DIGEST_HEX + 16], id[KX_DIGEST_HEX + 1];
	struct kx_buf href;
	kx_buf_init(&href, 0);
	id_of(v->run, v->runs_id, id);
	snprintf(text, sizeof(text), "runs/%s/", id);
	int r = section(out, S_CITE);
	if (r >= 0)
		r = kx_buf_puts(out, "<table>\n");
	if (r >= 0 && (r = row_open(out, "permalink")) >= 0 && (r = runs_page(v, id, &href)) >= 0 &&
	    (r = link_to(out, &href, text)) >= 0)
		r = row_close(out);
	if (r >= 0)
		r = digest_row(out, "run digest", &v->run->run);
	if (r >= 0 && (r = row_open(out, "citation")) >= 0 &&
	    (r = render_html_link(out, "CITATION.cff", false, "CITATION.cff")) >= 0)
		r = kx_buf_puts(out, " (Citation File Format 1.2.0): add the date you accessed it");
	if (r >= 0)
		r = row_close(out);
	kx_buf_release(&href);
	return r < 0 ? r : kx_buf_puts(out, "</table>\n");
}

static int files(struct kx_buf *out, const struct kx_run_view *v)
{
	int r = section(out, S_FILES);
	if (r >= 0)
		r = kx_buf_puts(out, "<ul class=\"files\">\n");
	for (int f = 0; f < KX_RF__COUNT && r >= 0; f++) {
		if (!kx_render_run_has(v, (enum kx_run_file)f))
			continue;
		const char *name = kx_run_file_name((enum kx_run_file)f);
		if ((r = kx_buf_puts(out, "<li>")) >= 0 && (r = render_html_link(out, name, false, name)) >= 0)
			r = kx_buf_puts(out, "</li>\n");
	}
	return r < 0 ? r : kx_buf_puts(out, "</ul>\n");
}

/* The sections in their order: sections[i]'s is parts[i]. */
static int (*const parts[S__COUNT])(struct kx_buf *out, const struct kx_run_view *v) = {
	measurement, rank, identity, correctness, workload, measurements, protocol, environment,
	artifacts, attestations, rerun, signatures, evidence, manifest, cite, files,
};

int render_run_page(const struct kx_run_view *v, struct kx_buf *out)
{
	const struct kx_run_rec *x = v->run;
	const struct kx_group_rec *g = v->group;
	const char *lead = render_str_at(v->doc[KX_DOC_RUN], "/metadata/title");
	char id[KX_DIGEST_HEX + 1];
	struct kx_buf t;
	kx_buf_init(&t, 0);
	id_of(x, v->runs_id, id);
	int r = kx_buf_printf(&t, "%s · %s · %s", g->benchmark, x->impl, g->gpu);
	struct kx_buf path;
	kx_buf_init(&path, 0);
	if (r >= 0)
		r = v->in_runs ? kx_buf_printf(&path, "runs/%s", id)
			       : kx_buf_printf(&path, "%s/%s", v->group_path, v->dirname);
	if (r >= 0)
		r = render_html_head(out, t.ptr, path.ptr);
	if (r >= 0 && (r = kx_buf_puts(out, "<h1>")) >= 0 && (r = render_markup_text(out, t.ptr)) >= 0)
		r = kx_buf_puts(out, "</h1>\n<p>");
	if (r >= 0)
		r = render_markup_text(out, lead ? lead : g->workload_slug);
	if (r >= 0)
		r = kx_buf_puts(out, "</p>\n");
	kx_buf_release(&t);
	kx_buf_release(&path);
	for (size_t i = 0; i < S__COUNT && r >= 0; i++)
		r = parts[i](out, v);
	return r < 0 ? r : kx_buf_puts(out, "</body>\n</html>\n");
}
