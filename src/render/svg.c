// SPDX-License-Identifier: MIT
/*
 * The pictures of the tree (SPEC §6, docs/views.md): SVG 1.1 written here, no scripts, no
 * external references, readable with the numbers alone removed (a title, axis labels with units,
 * a legend). Coordinates are written with one decimal and numbers through the same formatting as
 * the text files, so the same view gives the same bytes on every machine.
 */
#include "private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- text ---------------------------------------------------------------------------------- */

/* Append s with XML's five special characters escaped (text and attribute values alike). */
static int xml_text(struct kx_buf *out, const char *s)
{
	int r = 0;
	for (; *s && r >= 0; s++) {
		switch (*s) {
		case '&':
			r = kx_buf_puts(out, "&amp;");
			break;
		case '<':
			r = kx_buf_puts(out, "&lt;");
			break;
		case '>':
			r = kx_buf_puts(out, "&gt;");
			break;
		case '"':
			r = kx_buf_puts(out, "&quot;");
			break;
		case '\'':
			r = kx_buf_puts(out, "&apos;");
			break;
		default:
			/* control characters are not allowed in XML 1.0 text: a space stands for them */
			r = kx_buf_putc(out, (unsigned char)*s < 0x20 ? ' ' : *s);
		}
	}
	return r;
}

/* <text x y [attrs]>escaped s</text> */
static int text_at(struct kx_buf *out, double x, double y, const char *attrs, const char *s)
{
	int r = kx_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\"%s%s>", x, y, *attrs ? " " : "", attrs);
	if (r >= 0)
		r = xml_text(out, s);
	return r < 0 ? r : kx_buf_puts(out, "</text>\n");
}

/* An estimate of a label's width at font size 12 (sans-serif averages ~0.6 em per character). */
static double text_width(const char *s)
{
	size_t chars = 0;
	for (; *s; s++)
		chars += ((unsigned char)*s & 0xC0) != 0x80; /* count UTF-8 characters, not bytes */
	return 6.8 * (double)chars;
}

/* ---- value axes ------------------------------------------------------------------------------ */

/*
 * An axis over values in a metric's base unit: its domain, whether it is logarithmic (the values
 * span more than a decade), and the unit its labels are written in (ns shown as ms when the
 * values are milliseconds).
 */
struct axis {
	double lo, hi; /* the domain, base unit */
	bool log;
	double scale;	  /* base units per label unit */
	const char *unit; /* the label unit */
	double step;	  /* linear: the tick spacing, base unit */
};

/* A label unit for values up to `max` in the base unit of `unit`'s metric. */
static void axis_unit(struct axis *ax, const char *unit, double max)
{
	double factor = 1;
	const char *metric = kx_unit_metric(unit, &factor);
	ax->unit = unit;
	ax->scale = factor > 0 ? factor : 1;
	if (metric && strcmp(metric, "latency") == 0) {
		static const struct {
			double scale;
			const char *name;
		} t[] = { { 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" }, { 1, "ns" } };
		for (size_t i = 0; i < KX_ARRAY_SIZE(t); i++)
			if (max >= t[i].scale || t[i].scale == 1) {
				ax->scale = t[i].scale;
				ax->unit = t[i].name;
				break;
			}
	}
}

/* 1, 2 or 5 times a power of ten, the smallest such at least x (x > 0). */
static double nice_step(double x)
{
	double p = pow(10, floor(log10(x)));
	return x <= p ? p : x <= 2 * p ? 2 * p : x <= 5 * p ? 5 * p : 10 * p;
}

/* An axis holding [min, max] (base unit, max > 0), from zero unless it is logarithmic. */
static void axis_fit(struct axis *ax, double min, double max, const char *unit)
{
	axis_unit(ax, unit, max);
	ax->log = min > 0 && max / min > 10;
	if (ax->log) {
		ax->lo = pow(10, floor(log10(min)));
		ax->hi = pow(10, ceil(log10(max)));
		if (ax->hi <= ax->lo)
			ax->hi = ax->lo * 10;
		ax->step = 0;
		return;
	}
	ax->lo = 0;
	ax->step = nice_step(max / 5);
	ax->hi = ceil(max / ax->step) * ax->step;
	if (ax->hi < max * 1.0001)
		ax->hi += ax->step;
}

/* Where v falls on the axis, 0..1 (clamped). */
static double axis_pos(const struct axis *ax, double v)
{
	double t;
	if (ax->log)
		t = v > 0 ? (log10(v) - log10(ax->lo)) / (log10(ax->hi) - log10(ax->lo)) : 0;
	else
		t = (v - ax->lo) / (ax->hi - ax->lo);
	return t < 0 ? 0 : t > 1 ? 1 : t;
}

/* A tick's label: the value in the label unit, shortest form ("0.5", "20", "1e+04"). */
static void tick_label(const struct axis *ax, double v, char *out, size_t cap)
{
	double x = v / ax->scale;
	if (fabs(x) < 1e-12 * ax->hi / ax->scale)
		x = 0;
	snprintf(out, cap, "%.6g", x);
}

/* The ticks of the axis, in order: at most cap of them written to ticks, their count returned. */
static int axis_ticks(const struct axis *ax, double *ticks, size_t cap)
{
	size_t n = 0;
	if (ax->log) {
		for (double v = ax->lo; v <= ax->hi * 1.0001 && n < cap; v *= 10)
			ticks[n++] = v;
	} else {
		for (size_t i = 0; n < cap; i++) {
			double v = ax->lo + (double)i * ax->step;
			if (v > ax->hi * 1.0001)
				break;
			ticks[n++] = v;
		}
	}
	return (int)n;
}

/*
 * A horizontal value axis at y from x0 to x1: grid lines up to `top`, ticks, labels and the
 * axis title below it.
 */
static int draw_x_axis(struct kx_buf *out, const struct axis *ax, double x0, double x1, double top, double y,
		       const char *title)
{
	double ticks[64];
	int n = axis_ticks(ax, ticks, KX_ARRAY_SIZE(ticks)), r = 0;
	for (int i = 0; i < n && r >= 0; i++) {
		double x = x0 + axis_pos(ax, ticks[i]) * (x1 - x0);
		char label[32];
		tick_label(ax, ticks[i], label, sizeof(label));
		r = kx_buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d0d7de\"/>\n",
				  x, top, x, y + 4);
		if (r >= 0)
			r = text_at(out, x, y + 16, "text-anchor=\"middle\" fill=\"#57606a\"", label);
	}
	if (r >= 0)
		r = kx_buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#57606a\"/>\n",
				  x0, y, x1, y);
	if (r >= 0)
		r = text_at(out, (x0 + x1) / 2, y + 34, "text-anchor=\"middle\"", title);
	return r;
}

static int svg_open(struct kx_buf *out, double w, double h, const char *title)
{
	int r = kx_buf_printf(
		out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n<title>",
		w, h, w, h);
	if (r >= 0)
		r = xml_text(out, title);
	if (r >= 0)
		r = kx_buf_printf(out, "</title>\n<rect width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", w, h);
	return r;
}

/* ---- ranking.svg ------------------------------------------------------------------------------ */

#define RS_WIDTH  760.0 /* at least; wider where a label needs it */
#define RS_TOP	  80.0	/* the first bar's row */
#define RS_ROW	  26.0
#define RS_BAR	  14.0
#define RS_VALUES 120.0 /* room right of the bars for value labels */
#define RS_FIRST  "#1f6feb"
#define RS_OTHER  "#8c959f"
#define RS_NOISE  "#c9d1d9"

/* The low and high ends of run x's whisker (its p20–p80), base unit; false without one. */
static bool whisker(const struct kx_run_rec *x, double *lo, double *hi)
{
	if (!x->has_spread || !(x->base_p20 <= x->base_p80))
		return false;
	*lo = x->base_p20;
	*hi = x->base_p80;
	return true;
}

static void run_label(const struct kx_group_view *g, size_t i, char *out, size_t cap)
{
	const struct kx_run_rec *x = &g->runs[i];
	if (*x->version)
		snprintf(out, cap, "%zu  %s %s", i + 1, x->impl, x->version);
	else
		snprintf(out, cap, "%zu  %s", i + 1, x->impl);
}

int render_ranking_svg(const struct kx_group_view *g, struct kx_buf *out)
{
	const struct kx_group_rec *gr = g->group;
	size_t n = g->ranked;
	double min = INFINITY, max = 0, label_w = 120;
	const char *unit = NULL;
	char label[KX_NAME_MAX + KX_VERSION_MAX + 24], title[4 * KX_NAME_MAX + 32];
	for (size_t i = 0; i < n; i++) {
		const struct kx_run_rec *x = &g->runs[i];
		double lo, hi;
		run_label(g, i, label, sizeof(label));
		label_w = fmax(label_w, text_width(label) + 16);
		if (!x->has_value)
			continue;
		unit = unit ? unit : x->unit;
		min = fmin(min, x->base_value);
		max = fmax(max, x->base_value);
		if (whisker(x, &lo, &hi)) {
			min = fmin(min, lo);
			max = fmax(max, hi);
		}
	}
	label_w = fmin(label_w, 300);
	snprintf(title, sizeof(title), "%s %s on %s", gr->kernel, gr->pass, gr->gpu);
	double w = fmax(RS_WIDTH, fmax(text_width(g->workload_dir), text_width(title) * 1.25) + 24);
	double h = RS_TOP + (double)(n ? n : 1) * RS_ROW + 78;
	double x0 = label_w, x1 = w - RS_VALUES;
	int r = svg_open(out, w, h, title);
	if (r >= 0)
		r = text_at(out, 12, 22, "font-size=\"15\" font-weight=\"bold\"", title);
	if (r >= 0)
		r = text_at(out, 12, 42, "", g->workload_dir);
	snprintf(label, sizeof(label), "%s, %s is better · the current run of each implementation: median, p20–p80",
		 gr->metric, gr->order == KX_ORDER_DESCENDING ? "higher" : "lower");
	if (r >= 0)
		r = text_at(out, 12, 60, "fill=\"#57606a\"", label);
	if (r >= 0 && (!unit || max <= 0)) {
		r = text_at(out, 12, RS_TOP + 16, "", n ? "no value to draw" : "no current run: nothing is ranked");
		return r < 0 ? r : kx_buf_puts(out, "</svg>\n");
	}
	struct axis ax;
	axis_fit(&ax, min, max, unit);
	double axis_y = RS_TOP + (double)n * RS_ROW;
	snprintf(label, sizeof(label), "%s (%s)%s", gr->metric, ax.unit, ax.log ? ", log scale" : "");
	if (r >= 0)
		r = draw_x_axis(out, &ax, x0, x1, RS_TOP - 6, axis_y, label);
	for (size_t i = 0; i < n && r >= 0; i++) {
		const struct kx_run_rec *x = &g->runs[i];
		double y = RS_TOP + (double)i * RS_ROW, mid = y + RS_ROW / 2, lo, hi;
		bool noise = i > 0 && kx_rank_within_noise(x, &g->runs[i - 1]);
		run_label(g, i, label, sizeof(label));
		r = text_at(out, x0 - 8, mid + 4,
			    i == 0 ? "text-anchor=\"end\" font-weight=\"bold\"" : "text-anchor=\"end\"", label);
		if (r < 0 || !x->has_value)
			continue;
		double xv = x0 + axis_pos(&ax, x->base_value) * (x1 - x0);
		r = kx_buf_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"%s/>\n",
				  x0, mid - RS_BAR / 2, fmax(xv - x0, 0.5), RS_BAR,
				  i == 0  ? RS_FIRST
				  : noise ? RS_NOISE
					  : RS_OTHER,
				  noise ? " stroke=\"#57606a\" stroke-dasharray=\"3 2\"" : "");
		double right = xv;
		if (r >= 0 && whisker(x, &lo, &hi)) {
			double a = x0 + axis_pos(&ax, lo) * (x1 - x0), b = x0 + axis_pos(&ax, hi) * (x1 - x0);
			right = fmax(right, b);
			r = kx_buf_printf(
				out,
				"<path d=\"M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f\" stroke=\"#24292f\" "
				"fill=\"none\"/>\n",
				a, mid, b, a, mid - 5, mid + 5, b, mid - 5, mid + 5);
		}
		char value[64];
		kx_render_value(x->value, x->unit, value, sizeof(value));
		if (noise)
			snprintf(label, sizeof(label), "%s  ≈ #%zu", value, i);
		else
			snprintf(label, sizeof(label), "%s", value);
		if (r >= 0)
			r = text_at(out, right + 6, mid + 4, i == 0 ? "font-weight=\"bold\"" : "", label);
	}
	/* the legend: a swatch and its words each, left to right */
	static const struct {
		const char *fill, *stroke, *words;
	} legend[] = {
		{ RS_FIRST, "", "#1" },
		{ RS_OTHER, "", "ranked" },
		{ RS_NOISE, " stroke=\"#57606a\" stroke-dasharray=\"3 2\"", "within noise of the run above (≈ #N)" },
		{ NULL, "", "p20–p80" },
	};
	double lx = 12, ly = axis_y + 56;
	for (size_t i = 0; i < KX_ARRAY_SIZE(legend) && r >= 0; i++) {
		if (legend[i].fill)
			r = kx_buf_printf(out,
					  "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"%s\"%s/>\n",
					  lx, ly - 9, legend[i].fill, legend[i].stroke);
		else
			r = kx_buf_printf(
				out,
				"<path d=\"M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f\" stroke=\"#24292f\" "
				"fill=\"none\"/>\n",
				lx, ly - 4, lx + 12, lx, ly - 9, ly + 1, lx + 12, ly - 9, ly + 1);
		if (r >= 0)
			r = text_at(out, lx + 16, ly, "", legend[i].words);
		lx += 16 + text_width(legend[i].words) + 20;
	}
	return r < 0 ? r : kx_buf_puts(out, "</svg>\n");
}
