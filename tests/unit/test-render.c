// SPDX-License-Identifier: MIT
/*
 * The render module: the bytes of every generated file, from a real store (ingested manifests)
 * assembled into the views the tree builds. What a user checks: ranking.tsv's columns and rows
 * (rank, vs #1, cross-protocol, failed runs last), ranking.json and GROUP.json (the comparison
 * key recomputes from GROUP.json's own inputs), DIGESTS, manifest.json (the documents back, same
 * digests), summary.txt, SHA256SUMS lines that `sha256sum -c` accepts, human values; and that
 * rendering twice gives the same bytes.
 */
#include "kx/ingest.h"
#include "kx/render.h"
#include "test-helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

static void names(void)
{
	for (int f = 0; f < KX_RF__COUNT; f++)
		ok(kx_run_file_from_name(kx_run_file_name((enum kx_run_file)f)) == f, "run file %s round-trips",
		   kx_run_file_name((enum kx_run_file)f));
	for (int f = 0; f < KX_GF__COUNT; f++)
		ok(kx_group_file_from_name(kx_group_file_name((enum kx_group_file)f)) == f, "group file %s round-trips",
		   kx_group_file_name((enum kx_group_file)f));
	ok(kx_run_file_from_name("nope.json") == -1 && kx_group_file_from_name("README") == -1, "unknown names: -1");
	is_str(kx_run_file_name(KX_RF_DIGESTS), "DIGESTS", "DIGESTS");
	is_str(kx_group_file_name(KX_GF_RANKING_TSV), "ranking.tsv", "ranking.tsv");
}

static void values(void)
{
	static const struct {
		double v;
		const char *unit, *want;
	} cases[] = {
		{ 274073425, "ns", "274.1 ms" },  { 28780993, "ns", "28.78 ms" }, { 1500, "ns", "1.5 us" },
		{ 999, "ns", "999 ns" },         { 2.5e9, "ns", "2.5 s" },       { 28.78, "ms", "28.78 ms" },
		{ 0, "ns", "0 ns" },             { 1536, "B", "1.5 KiB" },       { 512, "MB", "512 MB" },
		{ 1.5, "TFLOP/s", "1.5 TFLOP/s" },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
		char out[64];
		kx_render_value(cases[i].v, cases[i].unit, out, sizeof(out));
		char what[96];
		snprintf(what, sizeof(what), "%g %s shows as %s", cases[i].v, cases[i].unit, cases[i].want);
		is_str(out, cases[i].want, what);
	}
}

/* ---- a group from a real store ---------------------------------------------------------------- */

struct fixture {
	char *dir;
	struct kx_store *s;
	struct kx_arena *a;
	struct kx_group_rec g;
	struct kx_run_rec runs[8];
	char dirnames[8][KX_NAME_MAX + 32];
	const char *dirptr[8];
	size_t n;
	uint32_t ranked;
	char path[1024];
	char workload_dir[KX_NAME_MAX + 16];
	struct kx_json *workload_doc;
};

static int collect(void *ctx, const struct kx_run_rec *run, bool ranked)
{
	struct fixture *f = ctx;
	if (f->n < 8) {
		f->runs[f->n++] = *run;
		f->ranked += ranked;
	}
	return 0;
}

static struct kx_json *stored(struct fixture *f, const struct kx_digest *d)
{
	struct kx_buf b = { 0 };
	struct kx_json *v = NULL;
	struct kx_json_error e;
	if (kx_store_get_doc(f->s, NULL, d, &b) == 0 && kx_json_parse(f->a, b.ptr, b.len, 0, &v, NULL, &e) < 0)
		v = NULL;
	kx_buf_release(&b);
	return v;
}

static bool setup(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->dir = scratch_dir("render");
	f->a = kx_arena_new();
	if (kx_store_open(f->dir, KX_STORE_CREATE, &f->s, NULL) < 0)
		return false;
	/* four runs: 100, 200 and (another protocol family) 250 ns, and a failed one */
	const struct tm_opts runs[] = {
		{ .impl = "torch", .median = "200" },
		{ .impl = "liger", .median = "100" },
		{ .impl = "triton", .median = "250", .family = "other_family" },
		{ .impl = "broken", .status = "failed" },
	};
	struct kx_buf all = { 0 };
	for (size_t i = 0; i < KX_ARRAY_SIZE(runs); i++) {
		char *l = tm_line(&runs[i]);
		kx_buf_puts(&all, l);
		kx_buf_putc(&all, '\n');
		free(l);
	}
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_ingest_result res = { 0 };
	int r = kx_ingest_bytes(f->s, all.ptr, all.len, NULL, &res, &p);
	kx_buf_release(&all);
	if (r < 0) {
		dump_problems(&p);
		kx_problems_release(&p);
		return false;
	}
	kx_problems_release(&p);
	struct kx_run_rec x;
	kx_store_get_run(f->s, NULL, &res.items[0].run, &x);
	kx_ingest_result_release(&res);
	kx_store_get_group(f->s, NULL, &x.group, &f->g);
	kx_store_group_runs(f->s, NULL, &f->g.key, collect, f);
	/* p20–p80: torch's overlaps liger's, triton has none (within noise: yes, then unknown) */
	static const double spread[3][2] = { { 90, 110 }, { 105, 210 }, { -1, -1 } };
	for (size_t i = 0; i < 3 && i < f->n; i++) {
		f->runs[i].has_spread = spread[i][0] >= 0;
		f->runs[i].base_p20 = spread[i][0];
		f->runs[i].base_p80 = spread[i][1];
	}
	int w = kx_rank_width(f->ranked);
	for (size_t i = 0; i < f->n; i++) {
		kx_rank_dirname(i < f->ranked ? (uint32_t)i + 1 : 0, w, &f->runs[i], f->dirnames[i], sizeof(f->dirnames[i]));
		f->dirptr[i] = f->dirnames[i];
	}
	kx_rank_workload_dirname(f->g.workload_slug, &f->g.workload, f->g.workload_cut, false, f->workload_dir, sizeof(f->workload_dir));
	snprintf(f->path, sizeof(f->path), "benchmarks/%s/%s/%s/%s", f->g.kernel, f->g.pass, f->g.gpu, f->workload_dir);
	f->workload_doc = stored(f, &f->g.workload);
	return f->n == 4;
}

static void teardown(struct fixture *f)
{
	kx_store_close(f->s);
	kx_arena_free(f->a);
	scratch_remove(f->dir);
}

static struct kx_group_view group_view(struct fixture *f)
{
	return (struct kx_group_view){ .group = &f->g, .path = f->path, .runs = f->runs, .dirnames = f->dirptr,
				       .len = f->n, .ranked = f->ranked, .workload_dir = f->workload_dir,
				       .workload_doc = f->workload_doc };
}

static struct kx_run_view run_view(struct fixture *f, size_t i)
{
	struct kx_run_view v = { .run = &f->runs[i], .group = &f->g, .group_path = f->path, .dirname = f->dirnames[i],
				 .rank = i < f->ranked ? (uint32_t)i + 1 : 0, .best = f->ranked ? &f->runs[0] : NULL,
				 .best_dirname = f->dirnames[0], .ranked = f->ranked };
	if (v.rank > 1) {
		v.above = &f->runs[i - 1];
		v.above_dirname = f->dirnames[i - 1];
	}
	const struct kx_digest *d[KX_DOC__COUNT] = { &f->runs[i].run, &f->runs[i].protocol, &f->runs[i].environment,
						     &f->runs[i].workload, &f->runs[i].implementation };
	for (int k = 0; k < KX_DOC__COUNT; k++)
		v.doc[k] = stored(f, d[k]);
	return v;
}

/* Split text into lines (in place); returns the count. */
static size_t lines(char *text, char **out, size_t cap)
{
	size_t n = 0;
	for (char *s = text; *s && n < cap;) {
		char *nl = strchr(s, '\n');
		out[n++] = s;
		if (!nl)
			break;
		*nl = '\0';
		s = nl + 1;
	}
	return n;
}

static size_t fields(char *line, char **out, size_t cap)
{
	size_t n = 0;
	for (char *s = line; n < cap;) {
		out[n++] = s;
		char *t = strchr(s, '\t');
		if (!t)
			break;
		*t = '\0';
		s = t + 1;
	}
	return n;
}

static void ranking_tsv(struct fixture *f)
{
	struct kx_group_view g = group_view(f);
	struct kx_buf b = { 0 }, b2 = { 0 };
	ok(kx_render_group_file(&g, KX_GF_RANKING_TSV, &b) == 0 && kx_render_group_file(&g, KX_GF_RANKING_TSV, &b2) == 0 &&
		   b.len == b2.len && memcmp(b.ptr, b2.ptr, b.len) == 0,
	   "ranking.tsv renders, and the same bytes twice");
	ok(b.len && b.ptr[b.len - 1] == '\n', "ranking.tsv ends with a newline");
	char *ln[16];
	size_t n = lines(b.ptr, ln, 16);
	ok(n == 5, "a header and one line per run (got %zu)", n);
	is_str(ln[0], "rank\tdir\timplementation\tmedian\tunit\tvs_best\tobserved_at\tevidence\tfamily\tcross_protocol\tstatus\trun"
		      "\tversion\tp20\tp80\tdisplay\twithin_noise\trerun\trerun_ratio\trerun_within_noise",
	       "the header names the columns: the first twelve in their old order");
	static const struct {
		const char *rank, *impl, *value, *vs, *cross, *status, *p20, *p80, *display, *noise;
	} want[] = {
		{ "1", "liger", "100", "1.000", "no", "passed", "90", "110", "100 ns", "" },
		{ "2", "torch", "200", "2.000", "no", "passed", "105", "210", "200 ns", "yes" },
		{ "3", "triton", "250", "2.500", "yes", "passed", "", "", "250 ns", "no" },
		{ "", "broken", NULL, "", "no", "failed", "", "", NULL, "" },
	};
	for (size_t i = 1; i < n && i <= 4; i++) {
		char *c[24];
		size_t k = fields(ln[i], c, 24);
		if (!ok(k == 20, "row %zu has 20 columns (got %zu)", i, k))
			continue;
		ok(strcmp(c[12], f->runs[i - 1].version) == 0 && strcmp(c[13], want[i - 1].p20) == 0 && strcmp(c[14], want[i - 1].p80) == 0 &&
			   (!want[i - 1].display || strcmp(c[15], want[i - 1].display) == 0) && strcmp(c[16], want[i - 1].noise) == 0,
		   "row %zu: version, p20 '%s', p80 '%s', display '%s', within_noise '%s' (empty: missing)", i, want[i - 1].p20, want[i - 1].p80,
		   want[i - 1].display ? want[i - 1].display : "*", want[i - 1].noise);
		char ds[KX_DIGEST_STR_MAX];
		kx_digest_format(&f->runs[i - 1].run, ds);
		ok(strcmp(c[0], want[i - 1].rank) == 0 && strcmp(c[2], want[i - 1].impl) == 0 &&
			   (!want[i - 1].value || strcmp(c[3], want[i - 1].value) == 0) && strcmp(c[5], want[i - 1].vs) == 0 &&
			   strcmp(c[9], want[i - 1].cross) == 0 && strcmp(c[10], want[i - 1].status) == 0,
		   "row %zu: rank '%s', %s, median '%s', vs_best '%s', cross_protocol %s, %s", i, want[i - 1].rank, want[i - 1].impl,
		   want[i - 1].value ? want[i - 1].value : "*", want[i - 1].vs, want[i - 1].cross, want[i - 1].status);
		ok(strcmp(c[1], f->dirnames[i - 1]) == 0 && strcmp(c[11], ds) == 0, "row %zu: dir %s and the run digest", i, f->dirnames[i - 1]);
		ok(strcmp(c[4], "ns") == 0 && strcmp(c[6], TM_OBSERVED) == 0 && strcmp(c[7], "submitted") == 0,
		   "row %zu: unit, observed_at, evidence", i);
	}
	ok(strcmp(f->runs[0].version, "0.4.2") == 0, "the run record keeps its implementation's version (0.4.2)");
	ok(strncmp(f->dirnames[0], "01-liger-", 9) == 0 && strncmp(f->dirnames[3], "failed-broken-", 14) == 0,
	   "rank directories: 01-liger-…, failed-broken-…");
	kx_buf_release(&b);
	kx_buf_release(&b2);
}

static void ranking_json(struct fixture *f)
{
	struct kx_group_view g = group_view(f);
	struct kx_buf b = { 0 };
	ok(kx_render_group_file(&g, KX_GF_RANKING_JSON, &b) == 0, "ranking.json renders");
	struct kx_arena *a = kx_arena_new();
	struct kx_json *v = NULL;
	struct kx_json_error e;
	if (ok(kx_json_parse(a, b.ptr, b.len, 0, &v, NULL, &e) == 0, "ranking.json is JSON")) {
		struct kx_json *runs = kx_json_get(v, "runs");
		ok(runs && runs->type == KX_JSON_ARRAY && runs->arr.len == 4, "four runs");
		struct kx_json *ranked = kx_json_get(v, "ranked");
		ok(ranked && ranked->number == 3, "ranked: 3");
		is_str(kx_json_get_string(v, "order"), "ascending", "order ascending");
		char ks[KX_DIGEST_STR_MAX];
		kx_digest_format(&f->g.key, ks);
		is_str(kx_json_get_string(v, "comparison_key"), ks, "the comparison key");
		if (runs && runs->arr.len == 4) {
			ok(kx_json_get(runs->arr.v[0], "rank")->number == 1 && kx_json_get(runs->arr.v[1], "vs_best")->number == 2 &&
				   kx_json_get(runs->arr.v[1], "median")->number == 200,
			   "rank 1 first; #2 is 2x #1 (vs_best), median 200");
			ok(kx_json_get(runs->arr.v[3], "rank")->type == KX_JSON_NULL &&
				   kx_json_get(runs->arr.v[3], "vs_best")->type == KX_JSON_NULL &&
				   kx_json_get(runs->arr.v[3], "within_noise")->type == KX_JSON_NULL,
			   "the failed run has rank, vs_best and within_noise null");
			ok(kx_json_get(runs->arr.v[1], "within_noise")->type == KX_JSON_TRUE &&
				   kx_json_get(runs->arr.v[0], "within_noise")->type == KX_JSON_NULL,
			   "within_noise: true for torch, null for #1 (as ranking.tsv's empty field)");
			ok(kx_json_get(runs->arr.v[2], "cross_protocol")->type == KX_JSON_TRUE, "the other family is marked cross_protocol");
			ok(kx_json_get(runs->arr.v[0], "observed_at") && !kx_json_get(runs->arr.v[0], "observedAt") &&
				   !kx_json_get(runs->arr.v[0], "value"),
			   "ranking.json's keys are ranking.tsv's names: observed_at, not observedAt; median, not value");
		}
	}
	/* pretty output is its own canonical pretty form */
	struct kx_buf again = { 0 };
	if (v)
		kx_json_write_pretty(v, &again);
	ok(v && again.len == b.len && memcmp(again.ptr, b.ptr, b.len) == 0, "ranking.json is in the stable pretty form");
	kx_buf_release(&again);
	kx_arena_free(a);
	kx_buf_release(&b);
}

static void group_json(struct fixture *f)
{
	struct kx_group_view g = group_view(f);
	struct kx_buf b = { 0 };
	ok(kx_render_group_file(&g, KX_GF_GROUP_JSON, &b) == 0, "GROUP.json renders");
	struct kx_arena *a = kx_arena_new();
	struct kx_json *v = NULL;
	struct kx_json_error e;
	if (ok(kx_json_parse(a, b.ptr, b.len, 0, &v, NULL, &e) == 0, "GROUP.json is JSON")) {
		/* anyone can recompute why runs were ranked together */
		struct kx_json *in = kx_json_get(v, "inputs");
		struct kx_buf jcs = { 0 };
		struct kx_digest d;
		char got[KX_DIGEST_STR_MAX] = "";
		if (in && kx_jcs_write(in, &jcs) == 0) {
			kx_sha256(jcs.ptr, jcs.len, d.b);
			kx_digest_format(&d, got);
		}
		is_str(got, kx_json_get_string(v, "comparisonKey"), "comparisonKey = sha256 of the JCS of GROUP.json's inputs");
		is_str(kx_json_get_string(in, "benchmark"), "rms_norm/forward", "input benchmark");
		is_str(kx_json_get_string(in, "gpu"), "nvidia-a100-sxm4-80gb", "input gpu");
		is_str(kx_json_get_string(in, "metric"), "latency", "input metric");
		char wd[KX_DIGEST_STR_MAX];
		kx_digest_format(&f->g.workload, wd);
		is_str(kx_json_get_string(in, "workload"), wd, "input workload digest");
		is_str(kx_json_get_string(v, "path"), f->path, "the group's path");
		struct kx_json *params = kx_json_pointer(v, "/workload/parameters/hidden");
		ok(params && params->number == 4096, "the workload's parameters are shown");
		kx_buf_release(&jcs);
	}
	kx_arena_free(a);
	kx_buf_release(&b);
	/* without the workload document */
	g.workload_doc = NULL;
	ok(kx_render_group_file(&g, KX_GF_GROUP_JSON, &b) == 0 && strstr(b.ptr, "not published"),
	   "GROUP.json says when the workload document is not published");
	kx_buf_release(&b);
	ok(kx_render_group_file(&g, KX_GF_SHA256SUMS, &b) == -ENOENT, "SHA256SUMS is not rendered by kx_render_group_file");
	kx_buf_release(&b);
}

/* ranking.svg: the same bytes each time, a bar and a label per ranked run, #1 in its colour, torch
 * marked within noise of #1, whiskers only where a spread is known, text escaped (xmllint and
 * rsvg-convert check the Liger ones: views-pictures.sh). */
static void ranking_svg(struct fixture *f)
{
	struct kx_group_view g = group_view(f);
	struct kx_buf b = { 0 }, b2 = { 0 };
	ok(kx_render_group_file(&g, KX_GF_RANKING_SVG, &b) == 0 && kx_render_group_file(&g, KX_GF_RANKING_SVG, &b2) == 0 &&
		   b.len == b2.len && memcmp(b.ptr, b2.ptr, b.len) == 0,
	   "ranking.svg renders, and the same bytes twice"); /* a kx_buf is NUL-terminated */
	ok(strncmp(b.ptr, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\"",
		   79) == 0,
	   "an SVG 1.1 document");
	ok(b.len > 7 && strcmp(b.ptr + b.len - 7, "</svg>\n") == 0, "which ends with </svg>");
	ok(strstr(b.ptr, ">1  liger 0.4.2<") && strstr(b.ptr, ">2  torch") && strstr(b.ptr, ">3  triton") &&
		   !strstr(b.ptr, "broken"),
	   "a label per ranked run, in rank order, none for the failed one");
	size_t bars = 0, whiskers = 0;
	for (const char *p = b.ptr; (p = strstr(p, "height=\"14.0\"")); p++)
		bars++;
	for (const char *p = b.ptr; (p = strstr(p, "<path d=\"M")); p++)
		whiskers++;
	ok(bars == 3, "three bars (%zu)", bars);
	ok(whiskers == 2 + 1, "two whiskers (liger's, torch's) and the legend's (%zu)", whiskers);
	ok(strstr(b.ptr, "fill=\"#1f6feb\"") != NULL, "#1 is drawn in its colour");
	ok(strstr(b.ptr, "200 ns  ≈ #1<") != NULL, "torch is marked within noise of #1");
	ok(strstr(b.ptr, "latency (ns)") != NULL, "the axis is named, with its unit");
	kx_buf_release(&b2);
	/* a version is the user's text: escaped */
	struct kx_run_rec keep = f->runs[0];
	snprintf(f->runs[0].version, sizeof(f->runs[0].version), "1.0 <rc&\"1\">");
	kx_buf_reset(&b);
	ok(kx_render_group_file(&g, KX_GF_RANKING_SVG, &b) == 0 &&
		   strstr(b.ptr, ">1  liger 1.0 &lt;rc&amp;&quot;1&quot;&gt;<") != NULL,
	   "a version's <, &, \" are escaped");
	f->runs[0] = keep;
	/* a group with nothing ranked still says what it is */
	g.ranked = 0;
	kx_buf_reset(&b);
	ok(kx_render_group_file(&g, KX_GF_RANKING_SVG, &b) == 0 &&
		   strstr(b.ptr, "no current run") != NULL && strstr(b.ptr, "</svg>"),
	   "with nothing ranked: a picture that says so");
	kx_buf_release(&b);
}

/* index.html: every entry linked (a name's odd bytes %-escaped in the link, &-escaped in the text),
 * the pictures embedded, a breadcrumb up to the root, the group's runs as a table */
static void index_html(struct fixture *f)
{
	struct kx_group_view g = group_view(f);
	static const struct kx_html_link links[] = { { "ranking.tsv", false }, { "ranking.svg", false },
						     { "a b&c", true } };
	static const char *const pictures[] = { "ranking.svg" };
	struct kx_html_page p = { .path = "benchmarks/k/p", .heading = "k <p>", .lead = "lead", .group = &g,
				  .pictures = pictures, .npictures = 1, .links = links, .nlinks = 3 };
	struct kx_buf b = { 0 }, again = { 0 };
	ok(kx_render_index_html(&p, &b) == 0 && kx_render_index_html(&p, &again) == 0 && strcmp(b.ptr, again.ptr) == 0,
	   "index.html renders, the same bytes twice");
	ok(strncmp(b.ptr, "<!DOCTYPE html>\n<html lang=\"en\">", 31) == 0 && strstr(b.ptr, "</html>\n") &&
		   !strstr(b.ptr, "<script"),
	   "an HTML5 document without a script");
	ok(strstr(b.ptr, "<title>k &lt;p&gt;</title>") != NULL, "its title escaped");
	ok(strstr(b.ptr, "<a href=\"a%20b%26c/\">a b&amp;c/</a>") != NULL, "a directory's link escaped for a URL, its text for HTML");
	ok(strstr(b.ptr, "<img src=\"ranking.svg\" alt=\"ranking.svg\"/>") != NULL, "the picture embedded");
	ok(strstr(b.ptr, "<nav><a href=\"../../../index.html\">kindex</a> / <a href=\"../../index.html\">benchmarks</a> / "
			 "<a href=\"../index.html\">k</a> / p</nav>") != NULL,
	   "a breadcrumb: each directory above, relative");
	char first[256];
	snprintf(first, sizeof(first), "<tr class=\"first\"><td class=\"n\">1</td><td><a href=\"%s/index.html\">liger</a></td>",
		 f->dirnames[0]);
	ok(strstr(b.ptr, first) && strstr(b.ptr, ">torch</a></td>") &&
		   strstr(b.ptr, "≈ #1") && strstr(b.ptr, ">broken</a></td>") && strstr(b.ptr, ">failed<"),
	   "the ranking as a table: #1 first, torch within noise of it, the failed run after, each linking its page");
	kx_buf_release(&b);
	kx_buf_release(&again);
}

/* The positions of the page's <h2> headings in `want` order; true when each is found after the one
 * before it. */
static bool in_order(const char *page, const char *const *want, size_t n)
{
	const char *at = page;
	for (size_t i = 0; i < n; i++) {
		char h[96];
		snprintf(h, sizeof(h), "<h2>%s</h2>", want[i]);
		const char *p = strstr(at, h);
		if (!p) {
			diag("section %s missing or out of order", want[i]);
			return false;
		}
		at = p + strlen(h);
	}
	return true;
}

/* index.html of a run (SPEC §8): KernelIndex's sections in its order, each once; "#1" and the group
 * linked relative to its place (rank directory, runs/), the rest the same in both; a name escaped. */
static void run_page(struct fixture *f)
{
	static const char *const order[] = { "Measurement", "Rank", "Identity", "Correctness", "Workload",
					      "Measurements", "Protocol", "Environment", "Artifacts",
					      "Replications and notes", "Controlled rerun", "Signatures", "Evidence",
					      "Canonical manifest", "How to cite", "Files" };
	struct kx_run_view v = run_view(f, 1); /* torch, rank 2 */
	struct kx_buf b = { 0 }, r = { 0 };
	ok(kx_render_run_file(&v, KX_RF_INDEX_HTML, &b) == 0 && in_order(b.ptr, order, KX_ARRAY_SIZE(order)),
	   "index.html: its sections in the order of KernelIndex's run page");
	size_t h2 = 0;
	for (const char *p = b.ptr; (p = strstr(p, "<h2>")); p++)
		h2++;
	ok(h2 == KX_ARRAY_SIZE(order), "and no other (%zu)", h2);
	char want[512], best[KX_DIGEST_HEX + 1];
	snprintf(want, sizeof(want), "<a href=\"../%s/index.html\">#1: liger, 100 ns</a>", f->dirnames[0]);
	ok(strstr(b.ptr, want) && strstr(b.ptr, "<a href=\"../index.html\">its page"),
	   "in its rank directory: #1 is ../%s/, the group ../", f->dirnames[0]);
	ok(strstr(b.ptr, "<a href=\"../../../../../../runs/") && strstr(b.ptr, "<a href=\"CITATION.cff\">") &&
		   strstr(b.ptr, "<a href=\"manifest.json\">") && strstr(b.ptr, "<a href=\"index.html\">index.html</a>"),
	   "the permalink up to runs/, and every file of the directory linked");
	ok(strstr(b.ptr, "No attestations yet. They never change a run's evidence; only a controlled rerun does.") &&
		   strstr(b.ptr, "No artifacts published with this run.") && strstr(b.ptr, "No signatures."),
	   "no attestation, artifact or signature: each section says so");
	v.in_runs = true;
	kx_digest_hex(&f->runs[0].run, best);
	ok(kx_render_run_file(&v, KX_RF_INDEX_HTML, &r) == 0 && in_order(r.ptr, order, KX_ARRAY_SIZE(order)),
	   "under runs/: the same sections");
	snprintf(want, sizeof(want), "<a href=\"../%.12s/index.html\">#1: liger, 100 ns</a>", best);
	char group[1200];
	snprintf(group, sizeof(group), "<a href=\"../../%s/index.html\">", f->path);
	ok(strstr(r.ptr, want) && strstr(r.ptr, group) && strstr(r.ptr, "<nav><a href=\"../../index.html\">kindex</a> / runs / "),
	   "under runs/: #1 is ../<its id>/, the group ../../<its path>/, runs/ not linked (no page)");
	ok(strcmp(b.ptr, r.ptr) != 0, "the two places' pages differ (their links)");
	/* replications and notes: a reproduction links its run's page and its own file, with its
	 * median, its ratio, its GPU and the noise; a note its author's and its text, escaped */
	struct kx_run_attestation att[2] = {
		{ .type = KX_ATTEST_REPRODUCTION, .created_at = "2026-01-02T00:00:00Z", .author = "lab",
		  .name = "01-reproduction-0123456789ab.json", .by = &f->runs[0], .by_gpu = f->g.gpu,
		  .by_id = "0123456789ab" },
		{ .type = KX_ATTEST_NOTE, .created_at = "2026-01-03T00:00:00Z", .author = "<me>",
		  .text = "odd & \"slow\"", .name = "02-note-0123456789ab.json" },
	};
	v.attestations = att;
	v.n_attestations = 2;
	kx_buf_reset(&r);
	ok(kx_render_run_file(&v, KX_RF_INDEX_HTML, &r) == 0 && in_order(r.ptr, order, KX_ARRAY_SIZE(order)) &&
		   strstr(r.ptr, "<a href=\"attestations/01-reproduction-0123456789ab.json\">reproduction</a>") &&
		   strstr(r.ptr, "<a href=\"../0123456789ab/index.html\">0123456789ab</a>") &&
		   strstr(r.ptr, "<td class=\"n\">0.5000</td><td>same GPU</td><td>within noise</td>") &&
		   strstr(r.ptr, "<td class=\"u\"><bdi>&lt;me&gt;</bdi></td>") && strstr(r.ptr, "odd &amp; &quot;slow&quot;") &&
		   !strstr(r.ptr, "No attestations yet"),
	   "replications and notes: a reproduction's run, ratio, GPU and noise; a note's author and text escaped");
	v.attestations = NULL;
	v.n_attestations = 0;
	/* a name is the user's text: escaped wherever the page shows it */
	struct kx_run_rec keep = f->runs[1];
	snprintf(f->runs[1].impl, sizeof(f->runs[1].impl), "<script>\"x\"&'y'");
	kx_buf_reset(&r);
	ok(kx_render_run_file(&v, KX_RF_INDEX_HTML, &r) == 0 && !strstr(r.ptr, "<script") &&
		   strstr(r.ptr, "&lt;script&gt;&quot;x&quot;&amp;&#39;y&#39;"),
	   "an implementation's name escaped");
	f->runs[1] = keep;
	kx_buf_release(&b);
	kx_buf_release(&r);
}

static void run_files(struct fixture *f)
{
	struct kx_run_view v = run_view(f, 1); /* torch, rank 2 */
	for (int k = 0; k < KX_RF__COUNT; k++) {
		if (k == KX_RF_SHA256SUMS)
			continue;
		struct kx_buf b1 = { 0 }, b2 = { 0 };
		int r1 = kx_render_run_file(&v, (enum kx_run_file)k, &b1), r2 = kx_render_run_file(&v, (enum kx_run_file)k, &b2);
		ok(r1 == 0 && r2 == 0 && b1.len > 0 && b1.len == b2.len && memcmp(b1.ptr, b2.ptr, b1.len) == 0,
		   "%s renders the same bytes twice", kx_run_file_name((enum kx_run_file)k));
		kx_buf_release(&b1);
		kx_buf_release(&b2);
	}
	/* DIGESTS: every digest of the run, then the comparison key */
	struct kx_buf b = { 0 };
	kx_render_run_file(&v, KX_RF_DIGESTS, &b);
	char *ln[16];
	size_t n = lines(b.ptr, ln, 16);
	static const char *const names[] = { "run", "protocol", "environment", "workload", "implementation", "comparison-key" };
	const struct kx_digest *ds[] = { &v.run->run, &v.run->protocol, &v.run->environment, &v.run->workload,
					 &v.run->implementation, &v.run->group };
	ok(n == 6, "DIGESTS has six lines");
	for (size_t i = 0; i < n && i < 6; i++) {
		char want[128], d[KX_DIGEST_STR_MAX];
		kx_digest_format(ds[i], d);
		snprintf(want, sizeof(want), "%s %s", names[i], d);
		is_str(ln[i], want, names[i]);
	}
	kx_buf_release(&b);

	/* manifest.json gives the documents back: a valid manifest with the same digests */
	kx_render_run_file(&v, KX_RF_MANIFEST, &b);
	struct kx_manifest_file *mf = NULL;
	struct kx_problems p;
	kx_problems_init(&p);
	if (ok(kx_manifest_parse(b.ptr, b.len, NULL, &mf, &p) == 0, "manifest.json is a valid manifest")) {
		ok(kx_digest_equal(&mf->v[0].digest[KX_DOC_RUN], &v.run->run) &&
			   kx_digest_equal(&mf->v[0].digest[KX_DOC_WORKLOAD], &v.run->workload) &&
			   kx_digest_equal(&mf->v[0].digest[KX_DOC_IMPLEMENTATION], &v.run->implementation),
		   "manifest.json's documents hash to the run's digests");
		ok(kx_json_get_string(kx_json_pointer(mf->v[0].root, "/run/metadata"), "name") != NULL, "metadata is kept");
	} else {
		dump_problems(&p);
	}
	kx_manifest_file_free(mf);
	kx_problems_release(&p);
	kx_buf_release(&b);
	/* run.json is the run document, pretty */
	struct kx_buf want = { 0 };
	kx_json_write_pretty(v.doc[KX_DOC_RUN], &want);
	kx_render_run_file(&v, KX_RF_RUN, &b);
	ok(b.len == want.len && memcmp(b.ptr, want.ptr, b.len) == 0 && b.ptr[b.len - 1] == '\n', "run.json is the run document, pretty");
	kx_buf_release(&b);
	kx_buf_release(&want);

	/* summary.txt: what a user reads first */
	kx_render_run_file(&v, KX_RF_SUMMARY, &b);
	char hex[KX_DIGEST_HEX + 1], shortp[32];
	kx_digest_hex(&v.run->run, hex);
	snprintf(shortp, sizeof(shortp), "runs/%.12s", hex);
	ok(strstr(b.ptr, "rms_norm/forward") && strstr(b.ptr, "torch"), "summary names the benchmark and implementation");
	ok(strstr(b.ptr, "200 ns") != NULL, "summary shows the value (200 ns)");
	ok(strstr(b.ptr, "2 of 3") != NULL, "summary shows the rank among ranked runs (2 of 3)");
	ok(strstr(b.ptr, "within noise of #1 (01-liger-") != NULL, "summary says the run is within noise of #1, by name");
	ok(strstr(b.ptr, "105 ns – 210 ns  (p20–p80)") != NULL, "summary shows the p20–p80 spread");
	ok(strstr(b.ptr, "2.000x") && strstr(b.ptr, f->dirnames[0]), "summary compares with #1 (2.000x, its directory)");
	ok(strstr(b.ptr, shortp) && strstr(b.ptr, f->dirnames[1]), "summary gives the stable path and the rank path");
	ok(strstr(b.ptr, "cross-protocol") == NULL, "same family: not cross-protocol");
	ok(strstr(b.ptr, "200 ns  (") == NULL, "a value whose human form is its raw form is shown once");
	kx_buf_release(&b);
	struct kx_run_rec big = *v.run;
	big.value = 274073425;
	struct kx_run_view vbig = v;
	vbig.run = &big;
	kx_render_run_file(&vbig, KX_RF_SUMMARY, &b);
	ok(strstr(b.ptr, "274.1 ms  (274073425 ns)") != NULL, "a value shown in other units is followed by its raw form");
	kx_buf_release(&b);
	struct kx_run_view v3 = run_view(f, 2);
	kx_render_run_file(&v3, KX_RF_SUMMARY, &b);
	ok(strstr(b.ptr, "cross-protocol") && strstr(b.ptr, "other_family"), "another family is marked cross-protocol");
	kx_buf_release(&b);
	struct kx_run_view v1 = run_view(f, 0);
	kx_render_run_file(&v1, KX_RF_SUMMARY, &b);
	ok(strstr(b.ptr, "this is #1") != NULL, "#1 says so");
	kx_buf_release(&b);
	struct kx_run_view vf = run_view(f, 3);
	kx_render_run_file(&vf, KX_RF_SUMMARY, &b);
	ok(strstr(b.ptr, "not ranked") && strstr(b.ptr, "failed"), "a failed run is not ranked");
	kx_buf_release(&b);

	/* documents that are not stored are not files */
	v.doc[KX_DOC_WORKLOAD] = NULL;
	ok(!kx_render_run_has(&v, KX_RF_WORKLOAD) && kx_render_run_has(&v, KX_RF_IMPLEMENTATION), "workload.json exists only with its document");
	ok(kx_render_run_file(&v, KX_RF_WORKLOAD, &b) == -ENOENT, "rendering it: -ENOENT");
	kx_buf_release(&b);
	kx_render_run_file(&v, KX_RF_SUMMARY, &b);
	ok(strstr(b.ptr, "not published") != NULL, "summary says the workload document is not published");
	kx_buf_release(&b);
}

/* SHA256SUMS lines, checked by sha256sum itself. */
static void sums(struct fixture *f)
{
	struct kx_buf b = { 0 };
	uint8_t d[KX_DIGEST_LEN];
	kx_sha256("hello\n", 6, d);
	kx_render_sha256sums_line(&b, "a.txt", d);
	is_str(b.ptr, "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03  a.txt\n", "sha256sum line of 'hello\\n'");
	ok(kx_sha256sums_line_len(strlen("a.txt")) == b.len, "its length is known from the name alone");
	kx_buf_release(&b);
	if (system("command -v sha256sum >/dev/null 2>&1") != 0) {
		printf("ok %d - # SKIP sha256sum is not installed\n", ++tap_n);
		return;
	}
	char *dir = scratch_dir("render-sums");
	struct kx_run_view v = run_view(f, 1);
	struct kx_buf sumsfile = { 0 };
	for (int k = 0; k < KX_RF__COUNT; k++) {
		if (k == KX_RF_SHA256SUMS || !kx_render_run_has(&v, (enum kx_run_file)k))
			continue;
		kx_render_run_file(&v, (enum kx_run_file)k, &b);
		char p[1024];
		snprintf(p, sizeof(p), "%s/%s", dir, kx_run_file_name((enum kx_run_file)k));
		FILE *fp = fopen(p, "wb");
		fwrite(b.ptr, 1, b.len, fp);
		fclose(fp);
		kx_sha256(b.ptr, b.len, d);
		kx_render_sha256sums_line(&sumsfile, kx_run_file_name((enum kx_run_file)k), d);
		kx_buf_release(&b);
	}
	char p[1024], cmd[1200];
	snprintf(p, sizeof(p), "%s/SHA256SUMS", dir);
	FILE *fp = fopen(p, "wb");
	fwrite(sumsfile.ptr, 1, sumsfile.len, fp);
	fclose(fp);
	snprintf(cmd, sizeof(cmd), "cd '%s' && sha256sum -c --strict --quiet SHA256SUMS", dir);
	ok(system(cmd) == 0, "sha256sum -c accepts SHA256SUMS lines over the rendered run files");
	/* and notices a changed file */
	snprintf(cmd, sizeof(cmd), "cd '%s' && chmod u+w DIGESTS && echo x >> DIGESTS && ! sha256sum -c --quiet SHA256SUMS >/dev/null 2>&1", dir);
	ok(system(cmd) == 0, "... and refuses them once a file changes");
	kx_buf_release(&sumsfile);
	scratch_remove(dir);
}

/* the number on README's line "<label>   <n>" (-1 when there is none) */
static int sig_key_cmp(const void *a, const void *b)
{
	return memcmp(((const struct kx_run_signature *)a)->key_id.b, ((const struct kx_run_signature *)b)->key_id.b,
		      KX_DIGEST_LEN);
}

/*
 * manifest.json of a signed run (SPEC §10) carries its stored signatures as a manifest does, in key
 * id order: it parses and verifies again to the same keys and bytes. An unsigned run's does not
 * change: no "signatures" member, the same bytes with or without the (empty) list.
 */
static void signed_manifest(struct fixture *f)
{
	char *dir = scratch_dir("render-sign"), key[2][PATH_MAX], pub[2][PATH_MAX], err[256];
	struct kx_signer *signer[2] = { NULL, NULL };
	struct kx_run_signature sigs[2];
	struct kx_run_view v = run_view(f, 1);
	char msg[KX_DIGEST_STR_MAX];
	kx_digest_format(&v.run->run, msg);
	bool keys = true;
	for (int i = 0; i < 2 && keys; i++) {
		struct kx_digest id;
		snprintf(key[i], sizeof(key[i]), "%s/k%d.key", dir, i);
		snprintf(pub[i], sizeof(pub[i]), "%s/k%d.pub", dir, i);
		keys = kx_key_generate(key[i], pub[i], &id, err, sizeof(err)) == 0 &&
		       kx_signer_open(key[i], &signer[i], err, sizeof(err)) == 0;
		if (!keys)
			break;
		sigs[i] = (struct kx_run_signature){ .key_id = id, .valid = true };
		memcpy(sigs[i].pub, kx_signer_public(signer[i]), KX_ED25519_PUB_LEN);
		keys = kx_sign(signer[i], msg, strlen(msg), sigs[i].sig) == 0;
	}
	if (!ok(keys, "two keys sign the run digest")) {
		diag("%s", err);
		goto out;
	}
	qsort(sigs, 2, sizeof(*sigs), sig_key_cmp); /* the store's order */

	struct kx_buf plain = { 0 }, empty = { 0 }, b = { 0 };
	kx_render_run_file(&v, KX_RF_MANIFEST, &plain);
	v.signatures = sigs; /* a list, but empty */
	kx_render_run_file(&v, KX_RF_MANIFEST, &empty);
	ok(plain.len == empty.len && memcmp(plain.ptr, empty.ptr, plain.len) == 0 &&
		   !strstr(plain.ptr, "\"signatures\""),
	   "an unsigned run's manifest.json has no signatures member, the same bytes as before");
	v.n_signatures = 2;
	ok(kx_render_run_file(&v, KX_RF_MANIFEST, &b) == 0, "a signed run's manifest.json renders");
	struct kx_manifest_file *mf = NULL;
	struct kx_problems p;
	kx_problems_init(&p);
	if (ok(kx_manifest_parse(b.ptr, b.len, NULL, &mf, &p) == 0,
	       "it is a valid manifest: each signature verifies")) {
		const struct kx_manifest *m = &mf->v[0];
		bool same = m->nsigs == 2;
		for (size_t i = 0; i < m->nsigs && same; i++)
			same = kx_digest_equal(&m->sigs[i].key_id, &sigs[i].key_id) &&
			       !memcmp(m->sigs[i].pub, sigs[i].pub, KX_ED25519_PUB_LEN) &&
			       !memcmp(m->sigs[i].sig, sigs[i].sig, KX_ED25519_SIG_LEN);
		ok(same, "with both signatures, in key id order, their keys and values as stored");
		ok(kx_digest_equal(&m->digest[KX_DOC_RUN], &v.run->run), "and the same run digest");
		ok(!strcmp(kx_json_get_string(kx_json_pointer(m->root, "/signatures/0"), "algorithm"), "ed25519"),
		   "algorithm ed25519");
	} else {
		dump_problems(&p);
	}
	kx_manifest_file_free(mf);
	kx_problems_release(&p);
	kx_buf_release(&plain);
	kx_buf_release(&empty);
	kx_buf_release(&b);
out:
	for (int i = 0; i < 2; i++)
		kx_signer_free(signer[i]);
	scratch_remove(dir);
}

static long readme_count(const char *text, const char *label)
{
	size_t n = strlen(label);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, label, n) == 0 && l[n] == ' ')
			return strtol(l + n, NULL, 10);
	return -1;
}

static void readme(struct fixture *f)
{
	struct kx_readme_info info = { .store_path = "/srv/kindex" };
	kx_store_stats(f->s, NULL, &info.stats);
	struct kx_buf b = { 0 }, b2 = { 0 };
	ok(kx_render_readme(&info, &b) == 0 && kx_render_readme(&info, &b2) == 0 && b.len == b2.len &&
		   memcmp(b.ptr, b2.ptr, b.len) == 0,
	   "README renders the same bytes twice");
	ok(strstr(b.ptr, "/srv/kindex") && readme_count(b.ptr, "runs") == 4 && readme_count(b.ptr, "groups") == 1 &&
		   readme_count(b.ptr, "documents") == (long)info.stats.documents,
	   "README gives the store and the counts (4 runs, 1 group)");
	ok(strstr(b.ptr, KX_VERSION) && strstr(b.ptr, KX_API_VERSION), "README gives the versions");
	ok(strstr(b.ptr, "<pass>.memory/") && strstr(b.ptr, "full.memory/ holds the memory runs of full"),
	   "README explains the <pass>.memory directories");
	kx_buf_release(&b);
	kx_buf_release(&b2);
}

/* ---- the files of benchmark directories ------------------------------------------------------- */

static struct kx_run_rec run_of(const char *impl, double value, const char *unit)
{
	struct kx_run_rec x = { .passed = true, .has_value = true, .value = value };
	double factor = 1;
	kx_unit_metric(unit, &factor);
	x.base_value = value * factor;
	snprintf(x.impl, sizeof(x.impl), "%s", impl);
	snprintf(x.unit, sizeof(x.unit), "%s", unit);
	return x;
}

static struct kx_json *workload_of(struct kx_arena *a, const char *params, const char *dtype)
{
	char text[512];
	snprintf(text, sizeof(text), "{\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"kind\":\"Workload\",\"metadata\":{},"
		 "\"spec\":{\"parameters\":%s,\"dtype\":\"%s\"}}", params, dtype);
	struct kx_json *v = NULL;
	struct kx_json_error e;
	return kx_json_parse(a, text, strlen(text), 0, &v, NULL, &e) == 0 ? v : NULL;
}

static void sweep_tsv(void)
{
	struct kx_arena *a = kx_arena_new();
	struct kx_run_rec r[] = { run_of("torch", 1, "ms"), run_of("liger", 2, "ms"),  run_of("liger", 3, "ms"),
				  run_of("liger", 4, "ms"), run_of("liger", 5, "ms"),  run_of("liger", 6, "ms"),
				  run_of("liger", 7, "ms"), run_of("liger", 8, "ms"),  run_of("liger", 9, "ms") };
	r[1].has_spread = true;
	r[1].base_p20 = 1.5e6;
	r[1].base_p80 = 2.5e6;
	/* mixed: liger's runs of the tokens sweep in two versions (one run without a version does not
	 * count), the mode sweep's 91 days apart; the hidden sweep's one version and one unknown */
	snprintf(r[2].version, sizeof(r[2].version), "0.2");
	snprintf(r[3].version, sizeof(r[3].version), "0.3");
	r[5].observed_ns = INT64_C(91) * 86400 * 1000000000;
	/* a tokens sweep (4096 < 8192 < 16384, not in byte order) at hidden 4096, a hidden sweep at tokens
	 * 8192, a string axis, a dtype sweep, a group alone at its point (no sweep) and one without a
	 * document */
	struct kx_bench_group g[] = {
		{ .workload_dir = "t16384", .workload_doc = workload_of(a, "{\"tokens\":16384,\"hidden\":4096}", "bf16"), .runs = &r[2], .len = 1 },
		{ .workload_dir = "t4096", .workload_doc = workload_of(a, "{\"hidden\":4096,\"tokens\":4096}", "bf16"), .runs = &r[0], .len = 2 },
		{ .workload_dir = "t8192", .workload_doc = workload_of(a, "{\"hidden\":4096,\"tokens\":8192}", "bf16"), .runs = &r[3], .len = 1 },
		{ .workload_dir = "h1024", .workload_doc = workload_of(a, "{\"hidden\":1024,\"tokens\":8192}", "bf16"), .runs = &r[4], .len = 1 },
		{ .workload_dir = "mb", .workload_doc = workload_of(a, "{\"mode\":\"b\"}", "bf16"), .runs = &r[5], .len = 1 },
		{ .workload_dir = "ma", .workload_doc = workload_of(a, "{\"mode\":\"a\\tx\"}", "bf16"), .runs = &r[6], .len = 1 },
		{ .workload_dir = "t4096f", .workload_doc = workload_of(a, "{\"hidden\":4096,\"tokens\":4096}", "fp32"), .runs = &r[8], .len = 1 },
		{ .workload_dir = "alone", .workload_doc = workload_of(a, "{\"hidden\":1,\"seq\":2}", "bf16"), .runs = &r[7], .len = 1 },
		{ .workload_dir = "nodoc", .runs = &r[7], .len = 1 },
	};
#define T0 "\t1970-01-01T00:00:00.000Z\t"
	const char *head = "axis\taxis_value\tfixed\tworkload\timplementation\tmedian\tp20\tp80\tunit\tversion"
			   "\tobserved_at\tmixed\n";
	const char *rows = "dtype\tbf16\thidden=4096,tokens=4096\tt4096\tliger\t2\t1.5\t2.5\tms\t" T0 "no\n"
			   "dtype\tbf16\thidden=4096,tokens=4096\tt4096\ttorch\t1\t\t\tms\t" T0 "no\n"
			   "dtype\tfp32\thidden=4096,tokens=4096\tt4096f\tliger\t9\t\t\tms\t" T0 "no\n"
			   "hidden\t1024\tdtype=bf16,tokens=8192\th1024\tliger\t5\t\t\tms\t" T0 "no\n"
			   "hidden\t4096\tdtype=bf16,tokens=8192\tt8192\tliger\t4\t\t\tms\t0.3" T0 "no\n"
			   "mode\ta x\tdtype=bf16\tma\tliger\t7\t\t\tms\t" T0 "yes\n"
			   "mode\tb\tdtype=bf16\tmb\tliger\t6\t\t\tms\t\t1970-04-02T00:00:00.000Z\tyes\n"
			   "tokens\t4096\tdtype=bf16,hidden=4096\tt4096\tliger\t2\t1.5\t2.5\tms\t" T0 "yes\n"
			   "tokens\t4096\tdtype=bf16,hidden=4096\tt4096\ttorch\t1\t\t\tms\t" T0 "no\n"
			   "tokens\t8192\tdtype=bf16,hidden=4096\tt8192\tliger\t4\t\t\tms\t0.3" T0 "yes\n"
			   "tokens\t16384\tdtype=bf16,hidden=4096\tt16384\tliger\t3\t\t\tms\t0.2" T0 "yes\n";
#undef T0
	char want[4096];
	snprintf(want, sizeof(want), "%s%s", head, rows);
	struct kx_buf b = { 0 }, again = { 0 };
	ok(kx_render_sweep_tsv(g, KX_ARRAY_SIZE(g), &b) == 0, "sweep.tsv renders");
	is_str(b.ptr, want, "sweep.tsv: axes in name order, numeric axes numerically, dtype a parameter, a tab as a space, "
			    "missing values empty, an implementation's rows mixed where its runs of the sweep differ in "
			    "version or span more than 90 days");
	/* the same groups in another order give the same bytes */
	struct kx_bench_group rev[KX_ARRAY_SIZE(g)];
	for (size_t i = 0; i < KX_ARRAY_SIZE(g); i++)
		rev[i] = g[KX_ARRAY_SIZE(g) - 1 - i];
	ok(kx_render_sweep_tsv(rev, KX_ARRAY_SIZE(rev), &again) == 0 && strcmp(b.ptr, again.ptr) == 0,
	   "sweep.tsv does not depend on the order of its groups");
	kx_buf_reset(&b);
	ok(kx_render_sweep_tsv(g + 7, 2, &b) == 0 && strcmp(b.ptr, head) == 0,
	   "no sweep: the header alone");
	/* sweep.svg draws the same sweeps: a panel each, in that order, a dot per row */
	kx_buf_reset(&b);
	kx_buf_reset(&again);
	ok(kx_render_sweep_svg("k fwd on gpu & co", g, KX_ARRAY_SIZE(g), &b) == 0 &&
		   kx_render_sweep_svg("k fwd on gpu & co", rev, KX_ARRAY_SIZE(rev), &again) == 0 && strcmp(b.ptr, again.ptr) == 0,
	   "sweep.svg renders, the same bytes whatever the groups' order");
	size_t panels = 0, dots = 0;
	for (const char *p = b.ptr; (p = strstr(p, "<g>")); p++)
		panels++;
	for (const char *p = b.ptr; (p = strstr(p, "<circle")); p++)
		dots++;
	const char *d = strstr(b.ptr, ">over dtype<"), *h = strstr(b.ptr, ">over hidden<"), *m = strstr(b.ptr, ">over mode<"),
		   *t = strstr(b.ptr, ">over tokens<");
	ok(panels == 4 && dots == 11, "four panels and eleven dots, as sweep.tsv has sweeps and rows (%zu, %zu)", panels, dots);
	ok(d && h && m && t && d < h && h < m && m < t, "the panels in sweep.tsv's order");
	ok(strstr(b.ptr, "<title>k fwd on gpu &amp; co</title>") && strstr(b.ptr, ">a x<"), "text is escaped, a tab a space");
	ok(strstr(b.ptr, "fill-opacity=\"0.18\"") == NULL, "no band where an implementation's points lack a spread");
	kx_buf_reset(&b);
	ok(kx_render_sweep_svg("none", g + 7, 2, &b) == 0 && strstr(b.ptr, "no sweep") && !strstr(b.ptr, "<g>"),
	   "no sweep: a picture that says so");
	kx_buf_release(&b);
	kx_buf_release(&again);
	kx_arena_free(a);
}

static void gpus_tsv(void)
{
	struct kx_run_rec r[] = { run_of("liger", 2, "ms"), run_of("liger", 3e6, "ns"), run_of("torch", 4, "ms"),
				  run_of("liger", 5, "ms"), run_of("liger", 6, "ms"), run_of("liger", 7, "ms"),
				  run_of("liger", 8, "ms") };
	struct kx_digest d1, d2, d3, d4;
	kx_sha256("1", 1, d1.b);
	kx_sha256("2", 1, d2.b);
	kx_sha256("3", 1, d3.b);
	kx_sha256("4", 1, d4.b);
	/* liger at w1: 0.2.1 on the a100, 0.6.0 on the h100 (Liger's layer_norm): mixed; at w10 one
	 * version, 91 days apart: mixed too */
	snprintf(r[0].version, sizeof(r[0].version), "0.2.1");
	snprintf(r[1].version, sizeof(r[1].version), "0.6.0");
	r[6].observed_ns = INT64_C(91) * 86400 * 1000000000;
	char hex2[KX_DIGEST_HEX + 1], hex3[KX_DIGEST_HEX + 1];
	kx_digest_hex(&d2, hex2);
	kx_digest_hex(&d3, hex3);
	/* w1 on both GPUs (ns on the second: in the row's ms), w2 two workloads of one base slug */
	struct kx_bench_group g[] = {
		{ .base = "w1", .workload = d1, .gpu = 1, .runs = &r[1], .len = 2 },
		{ .base = "w1", .workload = d1, .gpu = 0, .runs = &r[0], .len = 1 },
		{ .base = "w2", .workload = d2, .gpu = 0, .runs = &r[3], .len = 1 },
		{ .base = "w2", .workload = d3, .gpu = 1, .runs = &r[4], .len = 1 },
		{ .base = "w10", .workload = d4, .gpu = 0, .runs = &r[5], .len = 1 },
		{ .base = "w10", .workload = d4, .gpu = 1, .runs = &r[6], .len = 1 },
	};
	const char *gpus[] = { "a100", "h100" };
	char want[2048];
	bool two_first = strcmp(hex2, hex3) < 0;
#define T0 "1970-01-01T00:00:00.000Z"
	const char *a100 = "no\t5\t\t\t\t" T0 "\t", *h100 = "no\t\t6\t\t\t\t" T0;
	snprintf(want, sizeof(want),
		 "workload\timplementation\tunit\tmixed\tmedian.a100\tmedian.h100\tversion.a100\tversion.h100"
		 "\tobserved_at.a100\tobserved_at.h100\n"
		 "w1\tliger\tms\tyes\t2\t3\t0.2.1\t0.6.0\t" T0 "\t" T0 "\n"
		 "w1\ttorch\tms\tno\t\t4\t\t\t\t" T0 "\n"
		 "w2~%.8s\tliger\tms\t%s\n"
		 "w2~%.8s\tliger\tms\t%s\n"
		 "w10\tliger\tms\tyes\t7\t8\t\t\t" T0 "\t1970-04-02T00:00:00.000Z\n",
		 two_first ? hex2 : hex3, two_first ? a100 : h100, two_first ? hex3 : hex2, two_first ? h100 : a100);
#undef T0
	struct kx_buf b = { 0 };
	ok(kx_render_gpus_tsv(gpus, 2, g, KX_ARRAY_SIZE(g), &b) == 0, "gpus.tsv renders");
	is_str(b.ptr, want, "gpus.tsv: medians, versions and dates per GPU, values in the row's unit, a shared base "
			    "slug suffixed, workloads in numeric order (w2 < w10), mixed across versions or past 90 days");
	kx_buf_release(&b);
	is_str(kx_bench_file_name(KX_BF_SWEEP_TSV), "sweep.tsv", "sweep.tsv is its name");
}

/* compare/'s files (docs/views.md): ratio, result, mixed, the geometric mean, byte for byte. */
static void compare(void)
{
	/* the known check of SPEC §5: huggingface 28.78 ms, liger 58.81 ms (latency, in ns) */
	const int64_t day = INT64_C(86400000000000), t0 = INT64_C(1725377499000000000); /* 2024-09-03T15:31:39Z */
	struct kx_compare_run liger = { .value = 58808769, .base_value = 58808769, .base_p20 = 58.5e6, .base_p80 = 59.1e6,
					.has_spread = true, .unit = "ns", .observed_ns = t0, .version = "0.2.1" };
	struct kx_compare_run hf = { .value = 28780993, .base_value = 28780993, .base_p20 = 28.7e6, .base_p80 = 28.9e6,
				     .has_spread = true, .unit = "ns", .observed_ns = t0 + 90 * day };
	double sp = 0;
	ok(kx_compare_ratio(&liger, &hf, &sp) && fabs(sp - 28780993.0 / 58808769.0) < 1e-15,
	   "ratio of a lower-is-better metric: baseline / candidate (%.6f)", sp);
	ok(strcmp(kx_compare_result(&liger, &hf), "loss") == 0 && strcmp(kx_compare_result(&hf, &liger), "win") == 0,
	   "slower: loss; faster: win");
	ok(!kx_compare_mixed(&liger, &hf) && !kx_compare_mixed(&hf, &liger), "90 days apart exactly: not mixed");
	struct kx_compare_run later = hf;
	later.observed_ns++;
	ok(kx_compare_mixed(&liger, &later) && kx_compare_mixed(&later, &liger), "more than 90 days apart: mixed");
	ok(!kx_mixed_span(t0, t0 + day, false) && kx_mixed_span(t0, t0 + day, true) && kx_mixed_span(t0, t0 + 91 * day, false),
	   "one implementation's runs: mixed when their versions differ or they span more than 90 days");
	struct kx_compare_run near = hf;
	near.base_value = near.value = 28.8e6;
	ok(strcmp(kx_compare_result(&near, &hf), "noise") == 0, "overlapping p20-p80 intervals: noise, whatever the ratio");
	struct kx_compare_run bare = hf;
	bare.has_spread = false;
	ok(strcmp(kx_compare_result(&bare, &hf), "tie") == 0, "equal medians, an interval unknown: tie");
	struct kx_compare_run fast = { .value = 200, .base_value = 200e9, .order = KX_ORDER_DESCENDING, .unit = "GB/s" };
	struct kx_compare_run slow = { .value = 100, .base_value = 100e9, .order = KX_ORDER_DESCENDING, .unit = "GB/s" };
	ok(kx_compare_ratio(&fast, &slow, &sp) && sp == 2, "higher-is-better: candidate / baseline");
	struct kx_compare_run zero = { .unit = "ns", .observed_ns = t0 };
	ok(!kx_compare_ratio(&zero, &hf, &sp) && strcmp(kx_compare_result(&zero, &hf), "") == 0,
	   "a median of 0: no ratio, an empty result");
	struct kx_compare_run ms = liger;
	snprintf(ms.unit, sizeof(ms.unit), "ms");
	ms.value = 58.808769;
	struct kx_compare_row rows[] = {
		{ "fused_linear_simpo_loss", "forward", "nvidia-a100-sxm4-80gb", "batch8-seq1024", "latency", &hf, &liger },
		{ "fused_linear_simpo_loss", "forward", "nvidia-a100-sxm4-80gb", "batch16-seq1024", "latency", &ms, &later },
		{ "fused_linear_simpo_loss", "forward", "nvidia-a100-sxm4-80gb", "batch4-seq1024", "latency", &liger, &hf },
		{ "rms_norm", "full", "nvidia-h100-80gb-hbm3", "hidden1024", "latency", &near, &hf },
		{ "rms_norm", "full", "nvidia-h100-80gb-hbm3", "hidden2048", "latency", &zero, &hf },
		{ "rms_norm", "full.memory", "nvidia-h100-80gb-hbm3", "hidden2048", "memory", &liger, &hf },
	};
	struct kx_buf b = { 0 };
	ok(kx_render_compare_gpu(rows, 3, &b) == 0, "<gpu>.tsv renders");
	is_str(b.ptr,
	       "kernel\tpass\tmetric\tworkload\tunit\tcandidate_median\tbaseline_median\tratio\tresult\tmixed"
	       "\tcandidate_version\tbaseline_version\tcandidate_observed_at\tbaseline_observed_at\n"
	       "fused_linear_simpo_loss\tforward\tlatency\tbatch4-seq1024\tns\t58808769\t28780993\t0.4894\tloss\tno"
	       "\t0.2.1\t\t2024-09-03T15:31:39.000Z\t2024-12-02T15:31:39.000Z\n"
	       "fused_linear_simpo_loss\tforward\tlatency\tbatch8-seq1024\tns\t28780993\t58808769\t2.043\twin\tno"
	       "\t\t0.2.1\t2024-12-02T15:31:39.000Z\t2024-09-03T15:31:39.000Z\n"
	       "fused_linear_simpo_loss\tforward\tlatency\tbatch16-seq1024\tms\t58.808769\t28.780993\t0.4894\tloss\tyes"
	       "\t0.2.1\t\t2024-09-03T15:31:39.000Z\t2024-12-02T15:31:39.000Z\n",
	       "<gpu>.tsv: workloads in numeric order, both medians in the candidate's unit, the ratio to 4 digits, "
	       "versions (empty: none), dates, mixed past 90 days");
	kx_buf_reset(&b);
	char geo[KX_JCS_NUMBER_MAX], geo2[KX_JCS_NUMBER_MAX];
	ok(kx_render_compare_summary(rows, KX_ARRAY_SIZE(rows), &b) == 0, "summary.tsv renders");
	/* the A100's three (two of 0.4894, one of 2.043); the H100's latency: one known ratio (near/hf),
	 * one without (zero), the mean of the one */
	double g1 = exp((log(28780993.0 / 58808769.0) * 2 + log(58808769.0 / 28780993.0)) / 3);
	snprintf(geo, sizeof(geo), "%.4g", g1);
	snprintf(geo2, sizeof(geo2), "%.4g", 28780993.0 / 28.8e6);
	is_str(b.ptr,
	       "kernel\tpass\tmetric\tgpu\tgroups\tgeomean_ratio\twins\tlosses\tnoise\tties\tmixed_groups\n"
	       "\t\tlatency\tnvidia-a100-sxm4-80gb\t3\t0.7881\t1\t2\t0\t0\t1\n"
	       "\t\tlatency\tnvidia-h100-80gb-hbm3\t2\t0.9993\t0\t0\t1\t0\t0\n"
	       "\t\tmemory\tnvidia-h100-80gb-hbm3\t1\t0.4894\t0\t1\t0\t0\t0\n"
	       "fused_linear_simpo_loss\tforward\tlatency\tnvidia-a100-sxm4-80gb\t3\t0.7881\t1\t2\t0\t0\t1\n"
	       "rms_norm\tfull\tlatency\tnvidia-h100-80gb-hbm3\t2\t0.9993\t0\t0\t1\t0\t0\n"
	       "rms_norm\tfull.memory\tmemory\tnvidia-h100-80gb-hbm3\t1\t0.4894\t0\t1\t0\t0\t0\n",
	       "summary.tsv: the totals of each gpu and metric (memory apart), then a line per kernel/pass/gpu; a "
	       "group without a ratio counts in groups, not in the mean");
	ok(strcmp(geo, "0.7881") == 0 && strcmp(geo2, "0.9993") == 0, "(the means worked out here: %s %s)", geo, geo2);
	kx_buf_release(&b);
}

/* The pages of compare/ (docs/views.md): a pair's summary.tsv as a table, cell for cell; compare/'s
 * pairs with their totals on each gpu and metric; odd bytes in a name escaped for a URL and for HTML. */
static void compare_pages(void)
{
	struct kx_compare_run fast = { .value = 1000, .base_value = 1000, .unit = "ns" };
	struct kx_compare_run slow = { .value = 4000, .base_value = 4000, .unit = "ns" };
	struct kx_compare_run zero = { .unit = "ns" };
	struct kx_compare_row rows[] = {
		{ "k<1>", "forward", "gpu&a", "w1", "latency", &fast, &slow },
		{ "k<1>", "forward", "gpu&a", "w2", "latency", &slow, &fast },
		{ "k<1>", "forward", "gpu&a", "w3", "latency", &fast, &slow },
		{ "k2", "full", "gpu-b", "w1", "latency", &zero, &slow },
	};
	static const struct kx_html_link links[] = { { "gpu&a.tsv", false }, { "index.html", false },
						     { "summary.tsv", false } };
	struct kx_html_page p = { .path = "compare/a <b>..c\"d", .heading = "a <b> against c\"d", .links = links,
				  .nlinks = 3, .summary = rows, .nsummary = 4 };
	struct kx_buf b = { 0 }, tsv = { 0 };
	ok(kx_render_index_html(&p, &b) == 0 && kx_render_compare_summary(rows, 4, &tsv) == 0, "a pair's page renders");
	ok(strstr(b.ptr, "<nav><a href=\"../../index.html\">kindex</a> / <a href=\"../index.html\">compare</a> / "
			 "a &lt;b&gt;..c&quot;d</nav>") != NULL && strstr(b.ptr, "<title>a &lt;b&gt; against c&quot;d</title>"),
	   "its breadcrumb and title: the pair's name escaped");
	ok(strstr(b.ptr, "<a href=\"gpu%26a.tsv\">gpu&amp;a.tsv</a>") != NULL, "a gpu file linked, escaped for a URL and for HTML");
	/* the table, made back into TSV lines: summary.tsv's bytes (its names need no TSV escaping) */
	struct kx_buf back = { 0 };
	const char *at = strstr(b.ptr, "<table>");
	int rows_seen = 0;
	for (const char *tr = at; tr && (tr = strstr(tr, "<tr>")); tr += 4, rows_seen++) {
		const char *end = strstr(tr, "</tr>"), *c = tr + 4;
		for (bool first = true; (c = strstr(c, "<t")) && c < end; first = false) {
			c = strchr(c, '>') + 1;
			const char *e = strstr(c, "</t");
			kx_buf_printf(&back, "%s%.*s", first ? "" : "\t", (int)(e - c), c);
		}
		kx_buf_putc(&back, '\n');
	}
	/* (HTML's escapes undone: the only ones these names make) */
	struct kx_buf plain = { 0 };
	for (const char *c = back.ptr; c && *c; c++) {
		const char *const esc[][2] = { { "&lt;", "<" }, { "&gt;", ">" }, { "&amp;", "&" } };
		size_t k = 0;
		while (k < KX_ARRAY_SIZE(esc) && strncmp(c, esc[k][0], strlen(esc[k][0])) != 0)
			k++;
		if (k < KX_ARRAY_SIZE(esc)) {
			kx_buf_puts(&plain, esc[k][1]);
			c += strlen(esc[k][0]) - 1;
		} else {
			kx_buf_putc(&plain, *c);
		}
	}
	ok(rows_seen == 5, "its table: a header, a total per gpu and metric, a row per kernel, pass and gpu (%d rows)",
	   rows_seen);
	is_str(plain.ptr, tsv.ptr, "its table is summary.tsv, cell for cell");
	ok(strstr(b.ptr, "<td>k&lt;1&gt;</td><td>forward</td><td>latency</td><td>gpu&amp;a</td><td class=\"n\">3</td>") != NULL,
	   "names in the table escaped, numbers right-aligned");
	kx_buf_release(&b);
	kx_buf_release(&tsv);
	kx_buf_release(&back);
	kx_buf_release(&plain);

	/* compare/: every pair linked, with its totals on each gpu and metric */
	struct kx_html_pair pairs[2] = { { .name = "a <b>..c\"d", .gpu = "gpu&a", .metric = "latency" },
					 { .name = "c\"d..a <b>", .gpu = "gpu&a", .metric = "latency" } };
	for (size_t i = 0; i < 3; i++) {
		kx_compare_totals_add(&pairs[0].totals, rows[i].cand, rows[i].base);
		kx_compare_totals_add(&pairs[1].totals, rows[i].base, rows[i].cand);
	}
	static const struct kx_html_link dirs[] = { { "a <b>..c\"d", true }, { "c\"d..a <b>", true }, { "index.html", false } };
	struct kx_html_page c = { .path = "compare", .links = dirs, .nlinks = 3, .pairs = pairs, .npairs = 2 };
	char geo[KX_JCS_NUMBER_MAX], row[512];
	snprintf(geo, sizeof(geo), "1.587"); /* w1 w2 w3 of k<1>: (4 × 4 × 0.25)^(1/3) = 1.5874… */
	snprintf(row, sizeof(row),
		 "<tr><td><a href=\"a%%20%%3Cb%%3E..c%%22d/\">a &lt;b&gt;..c&quot;d</a></td><td>gpu&amp;a</td>"
		 "<td>latency</td><td class=\"n\">3</td><td class=\"n\">%s</td><td class=\"n\">2</td><td class=\"n\">1</td>"
		 "<td class=\"n\">0</td><td class=\"n\">0</td><td class=\"n\">0</td></tr>\n", geo);
	ok(pairs[0].totals.groups == 3 && pairs[0].totals.known == 3 && kx_render_index_html(&c, &b) == 0 &&
		   strstr(b.ptr, "<tr><th>pair</th><th>gpu</th><th>metric</th><th>groups</th><th>geomean_ratio</th>") &&
		   strstr(b.ptr, row),
	   "compare/: a row per pair, gpu and metric, its directory linked, its totals (the mean of 3 ratios)");
	ok(strstr(b.ptr, "<nav><a href=\"../index.html\">kindex</a> / compare</nav>") &&
		   strstr(b.ptr, "<li><a href=\"c%22d..a%20%3Cb%3E/\">c&quot;d..a &lt;b&gt;/</a></li>") && !strstr(b.ptr, "<script"),
	   "its breadcrumb, every entry linked, no script");
	kx_buf_release(&b);
}

/* The rows kx_render_group_regressions gives, copied. */
struct rows {
	struct kx_regression v[8];
	char text[8][512], json[8][1024];
	size_t n;
};

static int collect_row(void *ctx, const struct kx_regression *row)
{
	struct rows *x = ctx;
	if (x->n == 8 || row->len >= sizeof(x->text[0]) || row->json_len >= sizeof(x->json[0]))
		return -ENOSPC;
	memcpy(x->text[x->n], row->line, row->len);
	memcpy(x->json[x->n], row->json, row->json_len);
	x->v[x->n] = *row;
	x->v[x->n].line = x->text[x->n];
	x->v[x->n].json = x->json[x->n];
	x->n++;
	return 0;
}

/* A forward latency group (lower is better) of kernel on gpu, for the views made of its runs. */
static struct kx_group_rec latency_group(const char *kernel, const char *gpu)
{
	struct kx_group_rec gr = { .order = KX_ORDER_ASCENDING };
	snprintf(gr.kernel, sizeof(gr.kernel), "%s", kernel);
	snprintf(gr.pass, sizeof(gr.pass), "forward");
	snprintf(gr.metric, sizeof(gr.metric), "latency");
	snprintf(gr.gpu, sizeof(gr.gpu), "%s", gpu);
	return gr;
}

/* /regressions.tsv's rows of one group, their order, history.json's series; an /index.tsv row */
static void history_and_index(void)
{
	struct kx_arena *a = kx_arena_new();
	/* three series of 15, a day apart: a +10 % step, a -20 % step and a +30 % step at the 11th */
	static const struct {
		const char *impl;
		double step;
	} series[] = { { "aaa", 1.10 }, { "bbb", 0.80 }, { "ccc", 1.30 } };
	struct kx_run_rec r[45];
	char dirs[45][32];
	const char *dirp[45];
	for (size_t k = 0; k < 3; k++)
		for (size_t i = 0; i < 15; i++) {
			size_t j = 15 * k + i;
			double wiggle[] = { 0, 0.002, -0.003, 0.001, -0.001 };
			r[j] = run_of(series[k].impl, 100 * (i >= 10 ? series[k].step : 1.0) * (1 + wiggle[i % 5]), "ms");
			r[j].observed_ns = (int64_t)(i + 1) * 86400 * INT64_C(1000000000);
			r[j].run.b[0] = (uint8_t)j;
			snprintf(dirs[j], sizeof(dirs[j]), "superseded-%s-%02zu", series[k].impl, j);
			dirp[j] = dirs[j];
		}
	struct kx_group_rec gr = latency_group("rms_norm", "nvidia-h100");
	struct kx_group_view g = { .group = &gr, .path = "benchmarks/rms_norm/forward/nvidia-h100/h4096", .runs = r,
				   .dirnames = dirp, .len = 45, .workload_dir = "h4096",
				   .workload_doc = workload_of(a, "{\"hidden\":4096,\"batch\":8}", "bf16") };
	struct rows rows = { .n = 0 };
	ok(kx_render_group_regressions(&g, collect_row, &rows) == 0 && rows.n == 3, "three series, three open change points (%zu)",
	   rows.n);
	for (size_t i = 1; i < rows.n; i++)
		for (size_t j = i; j > 0 && kx_regression_cmp(&rows.v[j], &rows.v[j - 1]) < 0; j--) {
			struct kx_regression t = rows.v[j];
			rows.v[j] = rows.v[j - 1];
			rows.v[j - 1] = t;
		}
#define STARTS(s, lit) (strncmp((s), lit, sizeof(lit) - 1) == 0)
	if (!ok(rows.n == 3 && STARTS(rows.v[0].line, "regression\t30.00\t0.0003330\t100\t130\tms\t") &&
			strstr(rows.v[0].line, "\tccc\t") && STARTS(rows.v[1].line, "regression\t10.00\t") &&
			strstr(rows.v[1].line, "\taaa\t") && STARTS(rows.v[2].line, "improvement\t-19.92\t") &&
			strstr(rows.v[2].line, "\tbbb\t"),
	   "worst first: +30 %%, +10 %%, then the -20 %% improvement (placed a result early: -19.9 %%); "
	   "change_pct and p to 4 significant digits"))
		for (size_t i = 0; i < rows.n; i++)
			diag("row %zu: %.*s", i, (int)rows.v[i].len, rows.v[i].line);
	if (!ok(rows.n == 3 && strstr(rows.v[0].line, "\t5\trms_norm\tforward\tnvidia-h100\th4096\tbenchmarks/rms_norm/forward/nvidia-h100/h4096\n"),
		"a row names the segment's 5 results and the group"))
		diag("the row: %.*s", rows.n ? (int)rows.v[0].len : 0, rows.n ? rows.v[0].line : "");
	struct kx_buf b = { 0 };
	struct kx_json *doc = NULL;
	struct kx_json_error e;
	ok(kx_render_group_file(&g, KX_GF_HISTORY_JSON, &b) == 0 && kx_json_parse(a, b.ptr, b.len, 0, &doc, NULL, &e) == 0,
	   "history.json renders and parses");
	const struct kx_json *sv = doc ? kx_json_get(doc, "series") : NULL;
	const struct kx_json *changes = sv && sv->arr.len == 3 ? kx_json_get(sv->arr.v[2], "change_points") : NULL;
	ok(changes && changes->arr.len == 1 && kx_json_get(changes->arr.v[0], "n")->number == 11 &&
		   strcmp(kx_json_get_string(changes->arr.v[0], "move"), "regression") == 0 &&
		   kx_json_get(changes->arr.v[0], "change_pct") &&
		   kx_json_get(changes->arr.v[0], "change_pct")->number > 29.99 &&
		   kx_json_get(changes->arr.v[0], "change_pct")->number < 30.01 && kx_json_get(changes->arr.v[0], "observed_at"),
	   "history.json: ccc's one change point, a regression at its 11th result, change_pct 30, observed_at");
	ok(doc && kx_json_get(doc, "rule") && kx_json_get(doc, "rule")->type == KX_JSON_ARRAY &&
		   kx_json_get(doc, "parameters") && kx_json_get(kx_json_get(doc, "parameters"), "min_move") &&
		   kx_json_get_string(doc, "group") && !kx_json_get(doc, "comparisonKey") && kx_json_get(doc, "comparison_key"),
	   "history.json: the rule, its parameters, snake_case keys (comparison_key, group)");
	kx_buf_reset(&b);
	ok(kx_render_regressions_json(rows.v, rows.n, &b) == 0, "regressions.json renders");
	struct kx_json *rj = NULL;
	const struct kx_json *cps = kx_json_parse(a, b.ptr, b.len, 0, &rj, NULL, &e) == 0 ? kx_json_get(rj, "change_points") : NULL;
	ok(cps && cps->arr.len == 3 && strcmp(kx_json_get_string(cps->arr.v[0], "implementation"), "ccc") == 0 &&
		   kx_json_get(cps->arr.v[2], "change_pct")->number < -19.91 &&
		   kx_json_get(cps->arr.v[2], "change_pct")->number > -19.93 &&
		   kx_json_get(cps->arr.v[2], "change_pct")->number != -19.92 &&
		   kx_json_get(cps->arr.v[0], "results")->number == 5 && kx_json_get(cps->arr.v[0], "was")->type == KX_JSON_NULL &&
		   strcmp(kx_json_get_string(cps->arr.v[0], "group"), g.path) == 0 && kx_json_get(rj, "rule"),
	   "regressions.json: the rule and the rows in the file's order, change_pct at full precision, was null");
	kx_buf_reset(&b);
	ok(kx_render_group_file(&g, KX_GF_HISTORY_SVG, &b) == 0 && strstr(b.ptr, ">regression +30.0 %<") &&
		   strstr(b.ptr, ">improvement -19.9 %<"),
	   "history.svg labels the change points with their moves");
	/* SPEC §2: runs with one observedAt have no order between them. The same 45 runs, all at one
	 * instant, are three observations: no series has a change point, whatever the digests say */
	struct kx_run_rec same[45];
	memcpy(same, r, sizeof(same));
	for (size_t j = 0; j < 45; j++)
		same[j].observed_ns = 86400 * INT64_C(1000000000);
	struct kx_group_view gs = g;
	gs.runs = same;
	struct rows none = { .n = 0 };
	int rr = kx_render_group_regressions(&gs, collect_row, &none);
	ok(rr == 0 && none.n == 0, "15 runs of one observedAt are one observation: no change point (%zu rows)", none.n);
	/* two instants, the step between them: still too short a series for the rule */
	for (size_t j = 0; j < 45; j++)
		same[j].observed_ns = (j % 15 >= 10 ? 2 : 1) * 86400 * INT64_C(1000000000);
	none.n = 0;
	rr = kx_render_group_regressions(&gs, collect_row, &none);
	ok(rr == 0 && none.n == 0, "two observedAt values are two observations: no change point (%zu rows)", none.n);
	/* index.tsv: the columns of every name, empty where this workload lacks one */
	const char *names[] = { "batch", "dtype", "hidden", "seq" };
	kx_buf_reset(&b);
	ok(kx_render_index_header(names, 4, &b) == 0 &&
		   STARTS(b.ptr, "kernel\tpass\tmetric\tgpu\tworkload\tp.batch\tp.dtype\tp.hidden\tp.seq\timplementation\t") &&
		   strstr(b.ptr, "\tobserved_at\tshortid\tpath\twithin_noise\tvs_best\tdisplay\trerun\trerun_ratio"
				 "\trerun_within_noise\n"),
	   "index.tsv's header: a p.<name> column per parameter name");
	g.len = 1;
	g.ranked = 1;
	kx_buf_reset(&b);
	if (!ok(kx_render_index_rows(&g, names, 4, &b) == 0 &&
			strcmp(b.ptr, "rms_norm\tforward\tlatency\tnvidia-h100\th4096\t8\tbf16\t4096\t\taaa\t\tpassed\t1\tyes\t100\t\t"
				      "\tms\tsubmitted\t1970-01-02T00:00:00.000Z\t000000000000\tbenchmarks/rms_norm/forward/nvidia-h100/"
				      "h4096/superseded-aaa-00\t\t1.000\t100 ms\t\t\t\n") == 0,
		"an index.tsv row: the group, its parameters, the run; empty where missing; vs_best, display"))
		diag("the row: %s", b.ptr ? b.ptr : "");
	kx_buf_release(&b);
	kx_arena_free(a);
}

/* A run for steps(): its value, spread (lo == hi == 0: none) and unit, version, day and digest byte */
static struct kx_run_rec step_run(const char *impl, double value, double lo, double hi, const char *unit,
				  const char *version, int day, uint8_t id)
{
	struct kx_run_rec x = run_of(impl, value, unit);
	double factor = 1;
	kx_unit_metric(unit, &factor);
	x.has_spread = lo != 0 || hi != 0;
	x.base_p20 = lo * factor;
	x.base_p80 = hi * factor;
	snprintf(x.version, sizeof(x.version), "%s", version);
	x.observed_ns = (int64_t)day * 86400 * INT64_C(1000000000);
	memset(x.run.b, id, sizeof(x.run.b));
	return x;
}

/* changes.tsv (docs/views.md, "changes.tsv — steps"): a row per step, its cells */
static void steps(void)
{
	struct kx_run_rec r[] = {
		/* aaa: 10 ms, then 4000 us (-60 %, apart), then 4 ms again (no move), then 0 (a series
		 * never has a value of 0 in practice; a step from it is infinite) */
		step_run("aaa", 10, 9.9, 10.1, "ms", "0.1", 3, 1), step_run("aaa", 4000, 3990, 4010, "us", "0.2", 4, 2),
		step_run("aaa", 4, 0, 0, "ms", "", 5, 3), step_run("aaa", 0, 0, 0, "ms", "", 6, 4),
		step_run("aaa", 1, 0.9, 1.1, "ms", "", 7, 5),
		/* bbb: one run, no step; ccc: failed, in no series */
		step_run("bbb", 1, 0.9, 1.1, "ms", "1.0", 1, 6), step_run("ccc", 1, 0.9, 1.1, "ms", "", 1, 7),
		step_run("ccc", 2, 1.9, 2.1, "ms", "", 2, 8),
	};
	r[6].passed = r[7].passed = false;
	const char *dirp[KX_ARRAY_SIZE(r)] = { 0 };
	struct kx_group_rec gr = latency_group("kto_loss", "h100");
	struct kx_group_view g = { .group = &gr, .path = "benchmarks/kto_loss/forward/h100/b2", .runs = r, .dirnames = dirp,
				   .len = KX_ARRAY_SIZE(r), .workload_dir = "b2" };
	struct kx_buf b = { 0 };
	is_str(kx_group_file_name(KX_GF_CHANGES_TSV), "changes.tsv", "a group's file changes.tsv");
	ok(kx_render_group_file(&g, KX_GF_CHANGES_TSV, &b) == 0, "changes.tsv renders");
	char *lines[8] = { 0 };
	size_t n = 0;
	for (char *p = b.ptr, *e; p && *p && n < 8; p = e + 1) {
		if (!(e = strchr(p, '\n')))
			break;
		*e = '\0';
		lines[n++] = p;
	}
	ok(n == 5 && STARTS(lines[0], "kernel\tpass\tmetric\tgpu\tworkload\timplementation\tbefore_median\tafter_median\tunit\t"
				      "change_pct\tmove\tseparated\t"),
	   "a header and four steps: aaa's five runs; bbb's one run and ccc's failed runs make none (%zu lines)", n);
	static const char *const want[] = {
		/* ms -> us: the earlier run's values in the later one's unit */
		"kto_loss\tforward\tlatency\th100\tb2\taaa\t10000\t4000\tus\t-60.00\timprovement\tyes\t0.1\t0.2\t"
		"1970-01-04T00:00:00.000Z\t1970-01-05T00:00:00.000Z\t9900\t10100\t3990\t4010\t010101010101\t020202020202\t"
		"benchmarks/kto_loss/forward/h100/b2",
		/* the same median: no move; an interval not known: separated empty */
		"kto_loss\tforward\tlatency\th100\tb2\taaa\t4\t4\tms\t0\t\t\t0.2\t\t1970-01-05T00:00:00.000Z\t"
		"1970-01-06T00:00:00.000Z\t3.99\t4.01\t\t\t020202020202\t030303030303\tbenchmarks/kto_loss/forward/h100/b2",
		"kto_loss\tforward\tlatency\th100\tb2\taaa\t4\t0\tms\t-100.0\timprovement\t\t",
		"kto_loss\tforward\tlatency\th100\tb2\taaa\t0\t1\tms\tinf\tregression\t\t",
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(want); i++)
		if (!ok(n == 5 && strncmp(lines[i + 1], want[i], strlen(want[i])) == 0,
			"step %zu: its cells", i + 1))
			diag("got:  %s\nwant: %s", n > i + 1 ? lines[i + 1] : "", want[i]);
	/* a higher-is-better metric: up is an improvement; overlapping intervals are not apart */
	gr.order = KX_ORDER_DESCENDING;
	struct kx_run_rec t[] = { step_run("aaa", 100, 90, 110, "GB/s", "", 1, 1), step_run("aaa", 105, 95, 115, "GB/s", "", 2, 2) };
	g.runs = t;
	g.len = 2;
	kx_buf_reset(&b);
	ok(kx_render_group_file(&g, KX_GF_CHANGES_TSV, &b) == 0 && strstr(b.ptr, "\taaa\t100\t105\tGB/s\t5.000\timprovement\tno\t"),
	   "bandwidth 100 -> 105 GB/s: +5.000 %%, an improvement, within the intervals");
	g.len = 1;
	kx_buf_reset(&b);
	ok(kx_render_group_file(&g, KX_GF_CHANGES_TSV, &b) == 0 && strchr(b.ptr, '\n') == b.ptr + b.len - 1,
	   "no step: the header alone");
	/* implementations in numeric order of their names: v9 before v10 (bytewise, v10 comes first) */
	struct kx_run_rec u[] = { step_run("v10", 1, 0, 0, "ms", "", 1, 1), step_run("v10", 2, 0, 0, "ms", "", 2, 2),
				  step_run("v9", 1, 0, 0, "ms", "", 1, 3), step_run("v9", 2, 0, 0, "ms", "", 2, 4) };
	gr.order = KX_ORDER_ASCENDING;
	g.runs = u;
	g.len = 4;
	kx_buf_reset(&b);
	const char *v9 = NULL, *v10 = NULL;
	if (kx_render_group_file(&g, KX_GF_CHANGES_TSV, &b) == 0) {
		v9 = strstr(b.ptr, "\tv9\t");
		v10 = strstr(b.ptr, "\tv10\t");
	}
	ok(v9 && v10 && v9 < v10, "implementations in numeric order: v9's step before v10's");
	kx_buf_release(&b);
}

/* Controlled reruns (SPEC §10): a submitted or source-native run shows the newest measured run of
 * its implementation in its group — short id, ratio of medians, whether the intervals overlap */
static void reruns(void)
{
	struct kx_run_rec r[] = {
		step_run("aaa", 100, 95, 105, "ms", "", 1, 1), /* source-native */
		step_run("bbb", 110, 100, 120, "ms", "", 1, 2), /* submitted, never rerun */
		step_run("aaa", 104, 99, 109, "ms", "", 3, 3),  /* measured: the newer rerun */
		step_run("aaa", 150, 140, 160, "ms", "", 2, 4), /* measured, older */
		step_run("bbb", 90, 85, 95, "ms", "", 4, 5),    /* measured, newest, failed: reruns nothing */
		step_run("ccc", 50, 45, 55, "ms", "", 2, 6),    /* measured: ccc's rerun, not aaa's */
		step_run("ccc", 60, 55, 65, "ms", "", 1, 7),    /* submitted */
	};
	r[0].evidence = KX_EVIDENCE_SOURCE_NATIVE;
	r[1].evidence = r[6].evidence = KX_EVIDENCE_SUBMITTED;
	r[2].evidence = r[3].evidence = r[4].evidence = r[5].evidence = KX_EVIDENCE_MEASURED;
	r[4].passed = false;
	const char *dirp[] = { "01-aaa-01", "02-bbb-02", "superseded-aaa-03", "superseded-aaa-04", "failed-bbb-05",
			       "superseded-ccc-06", "superseded-ccc-07" };
	int32_t rr[7];
	struct kx_group_rec gr = latency_group("k", "h100");
	struct kx_group_view g = { .group = &gr, .path = "benchmarks/k/forward/h100/w", .runs = r, .dirnames = dirp,
				   .reruns = rr, .len = 7, .ranked = 2, .workload_dir = "w" };
	ok(kx_render_reruns(r, 7, rr) == 0 && rr[0] == 2 && rr[1] == -1 && rr[6] == 5,
	   "aaa's source-native run is rerun by its newest measured run, ccc's by ccc's; bbb's measured run failed");
	ok(rr[2] == -1 && rr[3] == -1 && rr[4] == -1 && rr[5] == -1, "a measured run reruns nothing");
	struct kx_buf b = { 0 };
	ok(kx_render_group_file(&g, KX_GF_RANKING_TSV, &b) == 0, "ranking.tsv renders");
	char *ln[8];
	size_t n = lines(b.ptr, ln, 8);
	char *c[24];
	size_t k = n > 1 ? fields(ln[1], c, 24) : 0;
	ok(k == 20 && strcmp(c[17], "030303030303") == 0 && strcmp(c[18], "1.040") == 0 && strcmp(c[19], "yes") == 0,
	   "its row: the rerun's short id, 1.040 (104 / 100 ms), within noise");
	k = n > 2 ? fields(ln[2], c, 24) : 0;
	ok(k == 20 && !c[17][0] && !c[18][0] && !c[19][0], "bbb's row: the three rerun cells empty");
	kx_buf_release(&b);
}

/* A TSV view as a table on its page: any columns (none known to the page code), the header's names
 * as <th>, numbers right-aligned, text escaped; the first KX_HTML_TSV_ROWS rows, then how many more */
static void index_html_tables(void)
{
	struct kx_buf tsv = { 0 }, b = { 0 };
	kx_buf_printf(&tsv, "zeta\tmedian.gpu_a\tnote\n");
	for (int i = 0; i < 250; i++)
		kx_buf_printf(&tsv, "row%d\t%d.5\t%s\n", i, 1000 + i, i == 0 ? "a<b" : "");
	struct kx_html_tsv tables[] = { { "many.tsv", tsv.ptr, tsv.len }, { "none.tsv", "zeta\n", 5 } };
	struct kx_html_page p = { .path = "x", .tables = tables, .ntables = 2 };
	ok(kx_render_index_html(&p, &b) == 0, "a page with two TSV views renders");
	size_t rows = 0;
	for (const char *q = b.ptr; (q = strstr(q, "<tr><td>row")); q++)
		rows++;
	ok(strstr(b.ptr, "<h2><a href=\"many.tsv\">many.tsv</a></h2>\n<p>250 rows.</p>") &&
		   strstr(b.ptr, "<tr><th>zeta</th><th>median.<wbr/>gpu_<wbr/>a</th><th>note</th></tr>"),
	   "its heading links the file and counts its rows; the header's names head the columns");
	ok(strstr(b.ptr, "<tr><td>row0</td><td class=\"n\">1000.5</td><td>a&lt;b</td></tr>") &&
		   strstr(b.ptr, "<td>row199</td>") && !strstr(b.ptr, "<td>row200</td>") && rows == KX_HTML_TSV_ROWS,
	   "numbers right-aligned, text escaped, the first %d rows (%zu)", KX_HTML_TSV_ROWS, rows);
	ok(strstr(b.ptr, "<p>50 more rows: <a href=\"many.tsv\">many.tsv</a></p>") != NULL, "then how many more, linked");
	ok(strstr(b.ptr, "<a href=\"none.tsv\">none.tsv</a></h2>\n<p>0 rows.</p>\n") &&
		   !strstr(strstr(b.ptr, "none.tsv"), "<table>"),
	   "a view with a header alone: no table, 0 rows");
	kx_buf_release(&tsv);
	kx_buf_release(&b);
}

int main(void)
{
	names();
	values();
	sweep_tsv();
	gpus_tsv();
	compare();
	compare_pages();
	history_and_index();
	steps();
	reruns();
	index_html_tables();
	struct fixture f;
	if (ok(setup(&f), "a group of four runs (three ranked, one failed) in a store")) {
		ranking_tsv(&f);
		ranking_json(&f);
		group_json(&f);
		ranking_svg(&f);
		index_html(&f);
		run_files(&f);
		run_page(&f);
		signed_manifest(&f);
		sums(&f);
		readme(&f);
	}
	teardown(&f);
	return tap_done();
}
