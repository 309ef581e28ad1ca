// SPDX-License-Identifier: MIT
/*
 * The formatting every generated file shares, below the files that write them: the names of a
 * run's and a group's files (a run's index.html links them), a number in its JCS form (exact,
 * locale-free) for the machine-readable files, a value as people read it ("274.1 ms") for the
 * human ones, a run's values in its own unit and its cells as the TSV files write them
 * (render_cells), how many times worse than the best a run is, text made safe for a TSV field or
 * for XML, and a document's string at a JSON pointer. Pure: nothing here reads the store or the
 * clock.
 */
#include "private.h"

#include "kx/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the names of a run directory's and a group directory's files ------------------------------ */

static const char *const run_files[KX_RF__COUNT] = {
	"manifest.json", "run.json", "protocol.json", "environment.json", "workload.json",
	"implementation.json", "summary.txt", "DIGESTS", "SHA256SUMS", "SIGNATURES", "CITATION.cff",
	"index.html",
};
static const char *const group_files[KX_GF__COUNT] = {
	"ranking.tsv", "ranking.json", "GROUP.json", "history.tsv", "history.json",
	"ranking.svg", "history.svg", "changes.tsv", "index.html", "SHA256SUMS",
};

const char *kx_run_file_name(enum kx_run_file f)
{
	return f < KX_RF__COUNT ? run_files[f] : "?";
}

const char *kx_group_file_name(enum kx_group_file f)
{
	return f < KX_GF__COUNT ? group_files[f] : "?";
}

int kx_run_file_from_name(const char *name)
{
	for (int i = 0; i < KX_RF__COUNT; i++)
		if (strcmp(run_files[i], name) == 0)
			return i;
	return -1;
}

int kx_group_file_from_name(const char *name)
{
	for (int i = 0; i < KX_GF__COUNT; i++)
		if (strcmp(group_files[i], name) == 0)
			return i;
	return -1;
}

bool kx_render_run_has(const struct kx_run_view *v, enum kx_run_file f)
{
	if (f == KX_RF_WORKLOAD)
		return v->doc[KX_DOC_WORKLOAD] != NULL;
	if (f == KX_RF_IMPLEMENTATION)
		return v->doc[KX_DOC_IMPLEMENTATION] != NULL;
	return f < KX_RF__COUNT;
}

/* ---- documents -------------------------------------------------------------------------------- */

const char *render_str_at(const struct kx_json *doc, const char *ptr)
{
	const struct kx_json *v = doc ? kx_json_pointer(doc, ptr) : NULL;
	return v && v->type == KX_JSON_STRING && strlen(v->str.ptr) == v->str.len ? v->str.ptr : NULL;
}

/* ---- numbers and values ----------------------------------------------------------------------- */

void render_number(double v, char out[KX_JCS_NUMBER_MAX])
{
	if (!kx_jcs_number(v, out))
		snprintf(out, KX_JCS_NUMBER_MAX, "null");
}

const char *render_time_unit(double ns, double *ret_scale)
{
	static const struct {
		double scale;
		const char *name;
	} t[] = { { 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" } };
	for (size_t i = 0; i < KX_ARRAY_SIZE(t); i++)
		if (fabs(ns) >= t[i].scale) {
			*ret_scale = t[i].scale;
			return t[i].name;
		}
	*ret_scale = 1;
	return "ns";
}

void kx_render_value(double v, const char *unit, char *out, size_t cap)
{
	double factor = 1;
	const char *metric = unit ? kx_unit_metric(unit, &factor) : NULL;
	if (metric && strcmp(metric, "latency") == 0) {
		double ns = v * factor, scale;
		const char *name = render_time_unit(ns, &scale);
		snprintf(out, cap, "%.4g %s", ns / scale, name);
		return;
	}
	if (metric && strcmp(metric, "memory") == 0 && strcmp(unit, "B") == 0) {
		static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB" };
		int i = 0;
		while (fabs(v) >= 1024 && i < 4) {
			v /= 1024;
			i++;
		}
		snprintf(out, cap, "%.4g %s", v, names[i]);
		return;
	}
	snprintf(out, cap, "%.6g %s", v, unit ? unit : "");
}

void render_ratio(double v, char out[KX_JCS_NUMBER_MAX])
{
	if (isnan(v)) {
		out[0] = '\0';
		return;
	}
	if (isinf(v)) {
		snprintf(out, KX_JCS_NUMBER_MAX, v > 0 ? "inf" : "-inf");
		return;
	}
	if (v == 0) {
		snprintf(out, KX_JCS_NUMBER_MAX, "0");
		return;
	}
	/* 4 significant digits as a plain decimal: 3.588, 0.01235, 58050 (never 5.805e+04) */
	int exp10 = (int)floor(log10(fabs(v)));
	int decimals = 3 - exp10;
	if (decimals < 0) {
		double unit = pow(10, -decimals);
		snprintf(out, KX_JCS_NUMBER_MAX, "%.0f", round(v / unit) * unit);
		return;
	}
	snprintf(out, KX_JCS_NUMBER_MAX, "%.*f", decimals > 17 ? 17 : decimals, v);
	/* rounding can carry into a new digit (9.9996 -> "10.000"): one decimal fewer then */
	if (decimals > 0 && fabs(strtod(out, NULL)) >= pow(10, exp10 + 1))
		snprintf(out, KX_JCS_NUMBER_MAX, "%.*f", decimals - 1, v);
}

/* rank 1 / this, as "how many times worse than the best" (>= 1) */
double render_vs_best(const struct kx_run_rec *run, const struct kx_run_rec *best)
{
	if (!best || !run->has_value || !best->has_value)
		return NAN;
	double a = run->base_value, b = best->base_value;
	if (run->order == KX_ORDER_DESCENDING) {
		double t = a;
		a = b;
		b = t;
	}
	if (b == 0)
		return a == 0 ? 1 : INFINITY;
	return a / b;
}

/* ---- text ------------------------------------------------------------------------------------- */

void render_field(const char *text, char *out, size_t cap)
{
	size_t i = 0;
	if (!text)
		text = "";
	for (; text[i] && i + 1 < cap; i++)
		out[i] = text[i] == '\t' || text[i] == '\n' || text[i] == '\r' ? ' ' : text[i];
	out[i] = '\0';
}

int render_tsv_text(struct kx_buf *out, const char *s)
{
	int r = 0;
	for (; *s && r >= 0; s++)
		r = kx_buf_putc(out, *s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s);
	return r;
}

int render_markup_text(struct kx_buf *out, const char *s)
{
	int r = 0;
	for (; *s && r >= 0; s++) {
		switch (*s) {
		case '&': r = kx_buf_puts(out, "&amp;"); break;
		case '<': r = kx_buf_puts(out, "&lt;"); break;
		case '>': r = kx_buf_puts(out, "&gt;"); break;
		case '"': r = kx_buf_puts(out, "&quot;"); break;
		case '\'': r = kx_buf_puts(out, "&#39;"); break;
		/* control characters are not allowed in XML 1.0 text: a space stands for them */
		default: r = kx_buf_putc(out, (unsigned char)*s < 0x20 ? ' ' : *s);
		}
	}
	return r;
}

/* ---- a run's numbers -------------------------------------------------------------------------- */

bool render_in_unit(const struct kx_run_rec *x, double base, double *ret)
{
	double factor = 1;
	if (!kx_unit_metric(x->unit, &factor) || factor == 0)
		return false;
	*ret = base / factor;
	return true;
}

bool render_spread_in_unit(const struct kx_run_rec *x, double *p20, double *p80)
{
	return x->has_spread && render_in_unit(x, x->base_p20, p20) && render_in_unit(x, x->base_p80, p80);
}

bool render_spread_text(const struct kx_run_rec *x, char *out, size_t cap)
{
	double lo, hi;
	char a[64], b[64];
	if (!render_spread_in_unit(x, &lo, &hi))
		return false;
	kx_render_value(lo, x->unit, a, sizeof(a));
	kx_render_value(hi, x->unit, b, sizeof(b));
	snprintf(out, cap, "%s – %s", a, b);
	return true;
}

void render_cells(const struct kx_run_rec *x, struct render_cells *c)
{
	double lo, hi;
	c->value[0] = c->p20[0] = c->p80[0] = '\0';
	if (x->has_value)
		render_number(x->value, c->value);
	if (render_spread_in_unit(x, &lo, &hi)) {
		render_number(lo, c->p20);
		render_number(hi, c->p80);
	}
	c->unit = x->has_value ? x->unit : "";
	render_field(x->version, c->version, sizeof(c->version));
	kx_time_format(x->observed_ns, c->when);
}
