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
#include <stdlib.h>
#include <string.h>

/* ---- text ---------------------------------------------------------------------------------- */

/* <text x y [attrs]>escaped s</text> */
static int text_at(struct kx_buf *out, double x, double y, const char *attrs, const char *s)
{
	int r = kx_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\"%s%s>", x, y, *attrs ? " " : "", attrs);
	if (r >= 0)
		r = render_markup_text(out, s);
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
 * span a decade or more: the largest at least 10 times the smallest), and the unit its labels are
 * written in (ns shown as ms when the values are milliseconds).
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
	if (metric && strcmp(metric, "latency") == 0)
		ax->unit = render_time_unit(max, &ax->scale);
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
	ax->log = min > 0 && max / min >= 10;
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

/*
 * A vertical value axis from y1 (bottom) to y0 at x0: grid lines across to x1, ticks, labels, and
 * its name (the metric and unit of `unit`) turned along it at label_x.
 */
static int draw_y_axis(struct kx_buf *out, const struct axis *ay, double x0, double x1, double y0, double y1,
		       double label_x, const char *unit)
{
	double ticks[64];
	char label[128];
	int nt = axis_ticks(ay, ticks, KX_ARRAY_SIZE(ticks)), r = 0;
	for (int i = 0; i < nt && r >= 0; i++) {
		double y = y1 - axis_pos(ay, ticks[i]) * (y1 - y0);
		char t[32];
		tick_label(ay, ticks[i], t, sizeof(t));
		r = kx_buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eaeef2\"/>\n", x0, y, x1,
				  y);
		if (r >= 0)
			r = text_at(out, x0 - 6, y + 4, "text-anchor=\"end\" fill=\"#57606a\"", t);
	}
	const char *metric = kx_unit_metric(unit, NULL);
	snprintf(label, sizeof(label), "%s (%s)%s", metric ? metric : "value", ay->unit, ay->log ? ", log" : "");
	if (r >= 0)
		r = kx_buf_printf(out,
				  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 %.1f %.1f)\">",
				  label_x, (y0 + y1) / 2, label_x, (y0 + y1) / 2);
	if (r >= 0 && (r = render_markup_text(out, label)) >= 0)
		r = kx_buf_puts(out, "</text>\n");
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
		r = render_markup_text(out, title);
	if (r >= 0)
		r = kx_buf_printf(out, "</title>\n<rect width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", w, h);
	return r;
}

/* A picture's top: the document, its title in bold and a line saying what it draws. */
static int picture_open(struct kx_buf *out, double w, double h, const char *title, const char *lead)
{
	int r = svg_open(out, w, h, title);
	if (r >= 0)
		r = text_at(out, 12, 22, "font-size=\"15\" font-weight=\"bold\"", title);
	if (r >= 0)
		r = text_at(out, 12, 42, "fill=\"#57606a\"", lead);
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

/* Widen [*min, *max] to hold run x's median and whisker (base unit); the first unit seen kept. */
static void extent_add(const struct kx_run_rec *x, double *min, double *max, const char **unit)
{
	double lo, hi;
	if (!x->has_value)
		return;
	*unit = *unit ? *unit : x->unit;
	*min = fmin(*min, x->base_value);
	*max = fmax(*max, x->base_value);
	if (whisker(x, &lo, &hi)) {
		*min = fmin(*min, lo);
		*max = fmax(*max, hi);
	}
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
		run_label(g, i, label, sizeof(label));
		label_w = fmax(label_w, text_width(label) + 16);
		extent_add(&g->runs[i], &min, &max, &unit);
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

/* ---- sweep.svg -------------------------------------------------------------------------------- */

#define SW_WIDTH 840.0
#define SW_PANEL_W 400.0
#define SW_PANEL_H 270.0
#define SW_GAP 16.0

static const char *const palette[] = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
				       "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22" };

/* The implementations of a picture, in name order: each one's colour, and dashes past the palette. */
struct impls {
	const char **names;
	size_t len, cap;
};

static int cstr_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* render_sweeps's: the implementations of one sweep's points, added to the list */
static int impls_add(void *ctx, const struct sweep *s)
{
	struct impls *im = ctx;
	for (size_t i = 0; i < s->len; i++) {
		if (KX_GROW(im->names, im->cap, im->len, 16) < 0)
			return -ENOMEM;
		im->names[im->len++] = s->points[i].run->impl;
	}
	return 0;
}

/* The implementations drawn in the sweeps of the groups (and only those: a run outside every
 * sweep changes neither the picture nor its legend), sorted, once each. */
static int impls_of(const struct kx_bench_group *g, size_t n, struct impls *ret)
{
	int r = render_sweeps(g, n, impls_add, ret);
	if (r < 0 || !ret->len)
		return r;
	qsort(ret->names, ret->len, sizeof(*ret->names), cstr_cmp);
	size_t u = 0;
	for (size_t i = 0; i < ret->len; i++)
		if (!u || strcmp(ret->names[u - 1], ret->names[i]) != 0)
			ret->names[u++] = ret->names[i];
	ret->len = u;
	return 0;
}

/* stroke="…" and, past the palette's colours, a dash pattern that tells them apart */
static int impl_stroke(struct kx_buf *out, size_t i)
{
	size_t n = KX_ARRAY_SIZE(palette);
	int r = kx_buf_printf(out, " stroke=\"%s\"", palette[i % n]);
	if (r >= 0 && i >= n)
		r = kx_buf_printf(out, " stroke-dasharray=\"%zu 3\"", 2 + 3 * (i / n));
	return r;
}

struct sweep_svg {
	struct kx_buf *out;
	const struct impls *im;
	double top; /* the first row of panels */
	size_t panels;
	struct kx_buf tmp;
};

/* Where the sweep's point i lies on its x axis, 0..1: by number (linear or log) or by its rank
 * among the distinct values. */
static double point_x(const struct sweep *s, const struct axis *ax, size_t nd, size_t i)
{
	if (s->numeric)
		return axis_pos(ax, s->points[i].number);
	size_t k = 0;
	for (size_t j = 1; j <= i; j++)
		k += strcmp(s->points[j].value, s->points[j - 1].value) != 0;
	return nd > 1 ? (double)k / (double)(nd - 1) : 0.5;
}

/*
 * Whether a numeric sweep's x axis is logarithmic: when its values (all above zero) span a decade
 * or more, as a value axis; or when there are three or more and each is the smallest times a power
 * of two (4096, 8192, 16384, 32768: a doubling ladder, gaps allowed), which a linear axis would
 * crowd at its low end — on a log axis they fall evenly.
 */
static bool sweep_log_x(const struct sweep *s, double xmin, double xmax)
{
	if (!(xmin > 0))
		return false;
	if (xmax / xmin >= 10)
		return true;
	size_t distinct = 0;
	for (size_t i = 0; i < s->len; i++) {
		if (i && strcmp(s->points[i].value, s->points[i - 1].value) == 0)
			continue;
		int e;
		double f = frexp(s->points[i].number / xmin, &e);
		if (f != 0.5) /* not a power of two times the smallest */
			return false;
		distinct++;
	}
	return distinct >= 3;
}

static int sweep_panel(void *ctx, const struct sweep *s)
{
	struct sweep_svg *c = ctx;
	struct kx_buf *out = c->out;
	size_t k = c->panels++;
	double px = 12 + (double)(k % 2) * (SW_PANEL_W + SW_GAP), py = c->top + (double)(k / 2) * (SW_PANEL_H + SW_GAP);
	double x0 = px + 64, x1 = px + SW_PANEL_W - 16, y0 = py + 64, y1 = py + SW_PANEL_H - 46;
	char label[256];
	int r = kx_buf_printf(out,
			      "<g>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
			      "stroke=\"#d0d7de\"/>\n",
			      px, py, SW_PANEL_W, SW_PANEL_H);
	snprintf(label, sizeof(label), "over %s", s->axis);
	if (r >= 0)
		r = text_at(out, px + 8, py + 18, "font-weight=\"bold\"", label);
	/* the fixed parameters, on two lines at most, broken after a comma, cut to the panel's width */
	const char *fixed = !*s->fixed ? "nothing else set" : s->fixed;
	size_t room = (size_t)((SW_PANEL_W - 16) / 6.8);
	for (int line = 0; line < 2 && *fixed && r >= 0; line++) {
		size_t len = strlen(fixed), cut = len;
		if (len > room) {
			cut = room;
			while (cut && fixed[cut - 1] != ',')
				cut--;
			if (!cut || line == 1) { /* no comma to break at, or the last line: cut it */
				cut = room > 1 ? room - 1 : 0;
				while (cut && ((unsigned char)fixed[cut] & 0xC0) == 0x80)
					cut--;
			}
		}
		bool more = cut < len && line == 1;
		snprintf(label, sizeof(label), "%.*s%s", (int)cut, fixed, more ? "…" : "");
		r = text_at(out, px + 8, py + 35 + 15 * line, "fill=\"#57606a\"", label);
		fixed += cut;
	}
	/* the value axis: every median and p20–p80 of the sweep */
	double vmin = INFINITY, vmax = 0, lo, hi, xmin = INFINITY, xmax = -INFINITY;
	const char *unit = NULL;
	size_t distinct = 0;
	for (size_t i = 0; i < s->len; i++) {
		const struct kx_run_rec *x = s->points[i].run;
		distinct += !i || strcmp(s->points[i].value, s->points[i - 1].value) != 0;
		xmin = fmin(xmin, s->points[i].number);
		xmax = fmax(xmax, s->points[i].number);
		extent_add(x, &vmin, &vmax, &unit);
	}
	if (!unit || vmax <= 0) {
		if (r >= 0)
			r = text_at(out, px + 8, py + 74, "", "no value to draw");
		return r < 0 ? r : kx_buf_puts(out, "</g>\n");
	}
	struct axis ay, ax = { 0 };
	axis_fit(&ay, vmin, vmax, unit);
	if (r >= 0)
		r = draw_y_axis(out, &ay, x0, x1, y0, y1, px + 16, unit);
	/* the x axis: the sweep's values, by number (linear, or log: sweep_log_x) or in order */
	if (s->numeric) {
		ax.log = sweep_log_x(s, xmin, xmax);
		ax.lo = xmin;
		ax.hi = xmax > xmin ? xmax : xmin + 1;
		if (!ax.log && xmax == xmin) /* one value: in the middle */
			ax.lo = xmin - 0.5, ax.hi = xmin + 0.5;
	}
	/* a tick at every value; a label where it keeps clear of the one before (widths by characters,
	 * text_width), the last value's always, the label before it dropped if they would touch */
	double right = -INFINITY, last_x = x0 + point_x(s, &ax, distinct, s->len - 1) * (x1 - x0);
	double last_left = last_x - text_width(s->points[s->len - 1].value) / 2;
	for (size_t i = 0; i < s->len && r >= 0; i++) {
		if (i && strcmp(s->points[i].value, s->points[i - 1].value) == 0)
			continue;
		double x = x0 + point_x(s, &ax, distinct, i) * (x1 - x0), half = text_width(s->points[i].value) / 2;
		bool last = strcmp(s->points[i].value, s->points[s->len - 1].value) == 0;
		r = kx_buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#57606a\"/>\n", x, y1, x,
				  y1 + 4);
		if (r >= 0 && (last || (x - half >= right + 6 && x + half + 6 <= last_left))) {
			r = text_at(out, x, y1 + 16, "text-anchor=\"middle\" fill=\"#57606a\"", s->points[i].value);
			right = x + half;
		}
	}
	if (r >= 0)
		r = kx_buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#57606a\"/>\n", x0, y1,
				  x1, y1);
	snprintf(label, sizeof(label), "%s%s", s->axis, ax.log ? " (log scale)" : "");
	if (r >= 0)
		r = text_at(out, (x0 + x1) / 2, y1 + 34, "text-anchor=\"middle\"", label);
	/* each implementation: its p20–p80 band, its line through the medians, a dot per point */
	for (size_t m = 0; m < c->im->len && r >= 0; m++) {
		const char *impl = c->im->names[m];
		struct kx_buf *line = &c->tmp;
		size_t np = 0;
		bool band = true;
		kx_buf_reset(line);
		for (size_t i = 0; i < s->len; i++)
			if (strcmp(s->points[i].run->impl, impl) == 0 && s->points[i].run->has_value) {
				np++;
				band &= whisker(s->points[i].run, &lo, &hi);
			}
		if (!np)
			continue;
		const char *colour = palette[m % KX_ARRAY_SIZE(palette)];
		/* the band: p20 forward, p80 back */
		if (band && np > 1) {
			r = kx_buf_printf(out, "<path fill=\"%s\" fill-opacity=\"0.18\" stroke=\"none\" d=\"", colour);
			char op = 'M';
			for (size_t i = 0; i < s->len && r >= 0; i++)
				if (strcmp(s->points[i].run->impl, impl) == 0 && s->points[i].run->has_value) {
					whisker(s->points[i].run, &lo, &hi);
					r = kx_buf_printf(out, "%c%.1f %.1f", op, x0 + point_x(s, &ax, distinct, i) * (x1 - x0),
							  y1 - axis_pos(&ay, lo) * (y1 - y0));
					op = 'L';
				}
			for (size_t i = s->len; i-- > 0 && r >= 0;)
				if (strcmp(s->points[i].run->impl, impl) == 0 && s->points[i].run->has_value) {
					whisker(s->points[i].run, &lo, &hi);
					r = kx_buf_printf(out, "L%.1f %.1f", x0 + point_x(s, &ax, distinct, i) * (x1 - x0),
							  y1 - axis_pos(&ay, hi) * (y1 - y0));
				}
			if (r >= 0)
				r = kx_buf_puts(out, "Z\"/>\n");
		}
		char op = 'M';
		for (size_t i = 0; i < s->len && r >= 0; i++) {
			const struct kx_run_rec *x = s->points[i].run;
			if (strcmp(x->impl, impl) != 0 || !x->has_value)
				continue;
			double cx = x0 + point_x(s, &ax, distinct, i) * (x1 - x0),
			       cy = y1 - axis_pos(&ay, x->base_value) * (y1 - y0);
			r = kx_buf_printf(line, "%c%.1f %.1f", op, cx, cy);
			op = 'L';
			if (r >= 0)
				r = kx_buf_printf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.8\" fill=\"%s\"/>\n", cx, cy, colour);
		}
		if (r >= 0 && np > 1) {
			r = kx_buf_printf(out, "<path fill=\"none\" stroke-width=\"1.8\"");
			if (r >= 0)
				r = impl_stroke(out, m);
			if (r >= 0)
				r = kx_buf_printf(out, " d=\"%s\"/>\n", line->ptr);
		}
	}
	return r < 0 ? r : kx_buf_puts(out, "</g>\n");
}

int kx_render_sweep_svg(const char *title, const struct kx_bench_group *g, size_t n, struct kx_buf *out)
{
	struct impls im = { 0 };
	struct kx_buf body = { 0 };
	struct sweep_svg c = { .out = &body, .im = &im };
	int r = impls_of(g, n, &im);
	/* the legend's rows, before the panels below it */
	double lx = 12, ly = 66;
	for (size_t i = 0; i < im.len && r >= 0; i++) {
		double w = 30 + text_width(im.names[i]) + 18;
		if (lx > 12 && lx + w > SW_WIDTH - 12)
			lx = 12, ly += 20;
		r = kx_buf_printf(&body, "<path d=\"M%.1f %.1fH%.1f\" stroke-width=\"2.5\"", lx, ly - 4, lx + 24);
		if (r >= 0)
			r = impl_stroke(&body, i);
		if (r >= 0)
			r = kx_buf_puts(&body, "/>\n");
		if (r >= 0)
			r = text_at(&body, lx + 30, ly, "", im.names[i]);
		lx += w;
	}
	c.top = ly + 18;
	if (r >= 0)
		r = render_sweeps(g, n, sweep_panel, &c);
	double h = c.top + (double)((c.panels + 1) / 2) * (SW_PANEL_H + SW_GAP) + (c.panels ? 0 : 30);
	if (r >= 0)
		r = picture_open(out, SW_WIDTH, h, title,
				 "each panel a sweep: workloads that differ in one parameter; the median of each "
				 "implementation's current run, its p20–p80 band");
	if (r >= 0 && body.len)
		r = kx_buf_puts(out, body.ptr);
	if (r >= 0 && !c.panels)
		r = text_at(out, 12, c.top + 10, "", "no sweep: no two workloads here differ in one parameter alone");
	if (r >= 0)
		r = kx_buf_puts(out, "</svg>\n");
	kx_buf_release(&c.tmp);
	kx_buf_release(&body);
	free(im.names);
	return r < 0 ? r : 0;
}

/* ---- history.svg ------------------------------------------------------------------------------ */

#define HS_WIDTH 840.0
#define HS_PLOT_H 300.0

/* The extent of a group's series: their values, times and implementations (render_each_series). */
struct history_extent {
	double vmin, vmax;
	int64_t tmin, tmax;
	const char *unit;
	size_t series;
};

static int history_extent(void *ctx, const struct render_series *s)
{
	struct history_extent *e = ctx;
	for (size_t i = 0; i < s->n; i++) {
		const struct kx_run_rec *x = &s->g->runs[s->runs[i]];
		extent_add(x, &e->vmin, &e->vmax, &e->unit);
		e->tmin = x->observed_ns < e->tmin ? x->observed_ns : e->tmin;
		e->tmax = x->observed_ns > e->tmax ? x->observed_ns : e->tmax;
	}
	e->series++;
	return 0;
}

struct history_svg {
	struct kx_buf *out;
	double width;
	const struct axis *ay;
	double x0, x1, y0, y1;
	int64_t t0, t1;
	size_t series; /* drawn so far: the next one's colour */
	double lx, ly; /* the legend's next place */
	struct kx_buf line;
};

static double time_x(const struct history_svg *h, int64_t t)
{
	return h->x0 + (double)(t - h->t0) / (double)(h->t1 - h->t0) * (h->x1 - h->x0);
}

/* One series: its p20–p80 bars, its line through the medians, a dot per result, the version
 * where it changes, and each change point as a dashed line with its move. */
static int history_series(void *ctx, const struct render_series *s)
{
	struct history_svg *h = ctx;
	struct kx_buf *out = h->out;
	size_t k = h->series++, next = 0;
	const char *colour = palette[k % KX_ARRAY_SIZE(palette)];
	char label[KX_VERSION_MAX + 64];
	int r = 0;
	kx_buf_reset(&h->line);
	for (size_t i = 0; i < s->n && r >= 0; i++) {
		const struct kx_run_rec *x = &s->g->runs[s->runs[i]], *prev = i ? &s->g->runs[s->runs[i - 1]] : NULL;
		double cx = time_x(h, x->observed_ns), cy = h->y1 - axis_pos(h->ay, x->base_value) * (h->y1 - h->y0);
		double lo, hi;
		if (whisker(x, &lo, &hi))
			r = kx_buf_printf(out,
					  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
					  "stroke-opacity=\"0.5\"/>\n",
					  cx, h->y1 - axis_pos(h->ay, lo) * (h->y1 - h->y0), cx,
					  h->y1 - axis_pos(h->ay, hi) * (h->y1 - h->y0), colour);
		if (r >= 0)
			r = kx_buf_printf(&h->line, "%c%.1f %.1f", i ? 'L' : 'M', cx, cy);
		if (r >= 0)
			r = kx_buf_printf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", cx, cy, colour);
		if (r >= 0 && *x->version && (!prev || strcmp(prev->version, x->version) != 0))
			r = text_at(out, cx + 4, cy - 7, "font-size=\"10\" fill=\"#57606a\"", x->version);
		if (r >= 0 && next < s->ncp && s->cp[next].at == i) {
			const struct kx_change *cp = &s->cp[next++];
			r = kx_buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
					       "stroke-dasharray=\"6 4\"/>\n",
					  cx, h->y0, cx, h->y1, colour);
			snprintf(label, sizeof(label), "%s %+.1f %%", cp->worse ? "regression" : "improvement",
				 100 * cp->change);
			/* beside the line, on the side with room; a row of its own per series (of 4) */
			bool left = cx > (h->x0 + h->x1) / 2;
			char attrs[96];
			snprintf(attrs, sizeof(attrs), "font-size=\"11\" fill=\"%s\"%s", cp->worse ? "#cf222e" : "#1a7f37",
				 left ? " text-anchor=\"end\"" : "");
			if (r >= 0)
				r = text_at(out, left ? cx - 3 : cx + 3, h->y0 + 12 + 13 * (double)(k % 4), attrs, label);
		}
	}
	if (r >= 0 && s->n > 1) {
		r = kx_buf_puts(out, "<path fill=\"none\" stroke-width=\"1.8\"");
		if (r >= 0)
			r = impl_stroke(out, k);
		if (r >= 0)
			r = kx_buf_printf(out, " d=\"%s\"/>\n", h->line.ptr);
	}
	/* its legend entry */
	double w = 30 + text_width(s->impl) + 18;
	if (h->lx > 12 && h->lx + w > h->width - 12)
		h->lx = 12, h->ly += 18;
	if (r >= 0)
		r = kx_buf_printf(out, "<path d=\"M%.1f %.1fH%.1f\" stroke-width=\"2.5\"", h->lx, h->ly - 4, h->lx + 24);
	if (r >= 0)
		r = impl_stroke(out, k);
	if (r >= 0)
		r = kx_buf_puts(out, "/>\n");
	if (r >= 0)
		r = text_at(out, h->lx + 30, h->ly, "", s->impl);
	h->lx += w;
	return r;
}

/*
 * The time axis. Its ticks fall on round times of one step of a ladder — 1, 2, 5, 10, 15, 30 s,
 * 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h, 1, 2, 7, 14 days (weeks from Monday), 1, 2, 3, 6
 * months, 1, 2, 5, 10, … years — the smallest step whose labels, each as wide as its characters
 * (text_width), keep clear of each other: as many ticks as the axis can read, at any span, from
 * seconds to years. A label is written to the step's resolution: HH:MM:SS under a minute,
 * HH:MM under a day, MM-DD under a month, YYYY-MM under a year, else YYYY; with the date (MM-DD,
 * or YYYY-MM-DD for days) in front when the ticks do not all fall on one day (one year), so no two
 * labels read the same. Under the first label, the rest of its date (the day, or the year) for
 * context. All UTC.
 */
enum { T_SECONDS, T_MONTHS, T_YEARS };

struct time_step {
	int kind;
	int64_t n; /* seconds, months or years */
};

static const struct time_step time_ladder[] = {
	{ T_SECONDS, 1 },	  { T_SECONDS, 2 },	   { T_SECONDS, 5 },	     { T_SECONDS, 10 },
	{ T_SECONDS, 15 },	  { T_SECONDS, 30 },	   { T_SECONDS, 60 },	     { T_SECONDS, 120 },
	{ T_SECONDS, 300 },	  { T_SECONDS, 600 },	   { T_SECONDS, 900 },	     { T_SECONDS, 1800 },
	{ T_SECONDS, 3600 },	  { T_SECONDS, 7200 },	   { T_SECONDS, 10800 },     { T_SECONDS, 21600 },
	{ T_SECONDS, 43200 },	  { T_SECONDS, 86400 },	   { T_SECONDS, 172800 },    { T_SECONDS, 604800 },
	{ T_SECONDS, 1209600 },	  { T_MONTHS, 1 },	   { T_MONTHS, 2 },	     { T_MONTHS, 3 },
	{ T_MONTHS, 6 },	  { T_YEARS, 1 },	   { T_YEARS, 2 },	     { T_YEARS, 5 },
};

#define TIME_TICKS_MAX 10

/* Days since 1970-01-01 of a proleptic Gregorian date, and back (H. Hinnant's civil algorithms). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400, yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int64_t *m, int64_t *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097, doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = yoe + era * 400 + (*m <= 2);
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* The ticks of step st in [t0, t1] (seconds), in order: their count, or cap + 1 when more. */
static size_t time_ticks(int64_t t0, int64_t t1, const struct time_step *st, int64_t *ticks, size_t cap)
{
	size_t n = 0;
	if (st->kind == T_SECONDS) {
		int64_t off = st->n % 604800 == 0 ? 4 * 86400 : 0; /* weeks from a Monday: 1970-01-05 */
		for (int64_t t = -floor_div(-(t0 - off), st->n) * st->n + off; t <= t1; t += st->n) {
			if (n == cap)
				return cap + 1;
			ticks[n++] = t;
		}
		return n;
	}
	int64_t y, m, d, months = st->kind == T_MONTHS ? st->n : 12 * st->n;
	civil_from_days(floor_div(t0, 86400), &y, &m, &d);
	int64_t k = -floor_div(-(y * 12 + m - 1), months) * months; /* the first month index >= t0's month */
	for (;; k += months) {
		int64_t t = days_from_civil(floor_div(k, 12), k - floor_div(k, 12) * 12 + 1, 1) * 86400;
		if (t < t0)
			continue;
		if (t > t1)
			break;
		if (n == cap)
			return cap + 1;
		ticks[n++] = t;
	}
	return n;
}

/* The fields of a time: "YYYY-MM-DD HH:MM:SS" in parts. */
struct civil {
	int64_t y, mo, d, h, mi, s;
};

static void civil_of(int64_t t, struct civil *c)
{
	int64_t days = floor_div(t, 86400), sec = t - days * 86400;
	civil_from_days(days, &c->y, &c->mo, &c->d);
	c->h = sec / 3600;
	c->mi = sec / 60 % 60;
	c->s = sec % 60;
}

/* The label of tick t for step st; `dated`: the date in front (the ticks span more than a day or,
 * for days, a year). */
static void time_label(int64_t t, const struct time_step *st, bool dated, char *out, size_t cap)
{
	struct civil c;
	civil_of(t, &c);
	char date[32] = "";
	if (st->kind == T_YEARS) {
		snprintf(out, cap, "%04lld", (long long)c.y);
	} else if (st->kind == T_MONTHS) {
		snprintf(out, cap, "%04lld-%02lld", (long long)c.y, (long long)c.mo);
	} else if (st->n >= 86400) {
		if (dated)
			snprintf(out, cap, "%04lld-%02lld-%02lld", (long long)c.y, (long long)c.mo, (long long)c.d);
		else
			snprintf(out, cap, "%02lld-%02lld", (long long)c.mo, (long long)c.d);
	} else {
		if (dated)
			snprintf(date, sizeof(date), "%02lld-%02lld ", (long long)c.mo, (long long)c.d);
		if (st->n >= 60)
			snprintf(out, cap, "%s%02lld:%02lld", date, (long long)c.h, (long long)c.mi);
		else
			snprintf(out, cap, "%s%02lld:%02lld:%02lld", date, (long long)c.h, (long long)c.mi, (long long)c.s);
	}
}

/* What the first label leaves out of its date, written under it: the day (YYYY-MM-DD) under a
 * time of day, the year under a date without one; "" when the label holds it all. */
static void time_context(int64_t t, const struct time_step *st, bool dated, char *out, size_t cap)
{
	struct civil c;
	civil_of(t, &c);
	out[0] = '\0';
	if (st->kind != T_SECONDS || (st->n >= 86400 && dated))
		return;
	if (st->n < 86400 && !dated)
		snprintf(out, cap, "%04lld-%02lld-%02lld", (long long)c.y, (long long)c.mo, (long long)c.d);
	else
		snprintf(out, cap, "%04lld", (long long)c.y);
}

/* Whether the ticks need their date in front: they fall on more than one day (more than one year,
 * for a step of days). */
static bool time_dated(const int64_t *ticks, size_t n, const struct time_step *st)
{
	struct civil a, b;
	if (st->kind != T_SECONDS || n < 2)
		return false;
	civil_of(ticks[0], &a);
	civil_of(ticks[n - 1], &b);
	return st->n >= 86400 ? a.y != b.y : a.y != b.y || a.mo != b.mo || a.d != b.d;
}

static int time_axis(struct kx_buf *out, const struct history_svg *h)
{
	int64_t t0 = -floor_div(-h->t0, INT64_C(1000000000)), t1 = floor_div(h->t1, INT64_C(1000000000));
	int64_t ticks[TIME_TICKS_MAX];
	size_t n = 0;
	const struct time_step *st = NULL;
	struct time_step big = { T_YEARS, 0 };
	bool dated = false;
	/* the smallest step of the ladder (then 10, 20, 50, … years) whose labels keep clear */
	for (size_t i = 0; !st && t1 > t0 && i < KX_ARRAY_SIZE(time_ladder) + 48; i++) {
		if (i >= KX_ARRAY_SIZE(time_ladder)) { /* 10, 20, 50, 100, … years */
			size_t j = i - KX_ARRAY_SIZE(time_ladder);
			big.n = (int64_t[]){ 1, 2, 5 }[j % 3];
			for (size_t e = 0; e <= j / 3; e++)
				big.n *= 10;
		}
		const struct time_step *cand = i < KX_ARRAY_SIZE(time_ladder) ? &time_ladder[i] : &big;
		size_t k = time_ticks(t0, t1, cand, ticks, TIME_TICKS_MAX);
		if (k <= TIME_TICKS_MAX) {
			bool d = time_dated(ticks, k, cand);
			double widest = 0, gap = INFINITY;
			for (size_t j = 0; j < k; j++) {
				char label[40];
				time_label(ticks[j], cand, d, label, sizeof(label));
				widest = fmax(widest, text_width(label));
				if (j)
					gap = fmin(gap, time_x(h, ticks[j] * INT64_C(1000000000)) -
								time_x(h, ticks[j - 1] * INT64_C(1000000000)));
			}
			if (gap >= 1.5 * widest + 16 || k == 1) {
				st = cand, n = k, dated = d;
				break;
			}
		}
	}
	int r = 0;
	for (size_t i = 0; i < n && r >= 0; i++) {
		char label[40];
		double x = time_x(h, ticks[i] * INT64_C(1000000000));
		time_label(ticks[i], st, dated, label, sizeof(label));
		r = kx_buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#57606a\"/>\n", x, h->y1,
				  x, h->y1 + 4);
		if (r >= 0)
			r = text_at(out, x, h->y1 + 16, "text-anchor=\"middle\" fill=\"#57606a\"", label);
		if (r >= 0 && i == 0) {
			time_context(ticks[i], st, dated, label, sizeof(label));
			if (*label)
				r = text_at(out, x, h->y1 + 29, "text-anchor=\"middle\" fill=\"#57606a\" font-size=\"11\"", label);
		}
	}
	if (r >= 0)
		r = kx_buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#57606a\"/>\n", h->x0,
				  h->y1, h->x1, h->y1);
	if (r >= 0)
		r = text_at(out, (h->x0 + h->x1) / 2, h->y1 + 44, "text-anchor=\"middle\"", "observed_at (UTC)");
	return r;
}

int render_history_svg(const struct kx_group_view *g, struct kx_buf *out)
{
	const struct kx_group_rec *gr = g->group;
	struct history_extent e = { .vmin = INFINITY, .vmax = 0, .tmin = INT64_MAX, .tmax = INT64_MIN };
	struct kx_buf body = { 0 };
	char title[5 * KX_NAME_MAX + 32];
	snprintf(title, sizeof(title), "%s %s on %s: %s over time", gr->kernel, gr->pass, gr->gpu, g->workload_dir);
	int r = render_each_series(g, history_extent, &e);
	/* the legend's rows first (at most one per 4 implementations on a wide picture), then the plot */
	double legend = 66 + 18 * (double)((e.series + 3) / 4);
	double width = fmax(HS_WIDTH, 24 + text_width(title) * 1.4); /* the title, bold at font size 15 */
	struct axis ay = { 0 };
	struct history_svg h = { .out = &body, .width = width, .ay = &ay, .x0 = 84, .x1 = width - 48,
				 .y0 = legend + 10, .y1 = legend + 10 + HS_PLOT_H, .lx = 12, .ly = 66 };
	bool drawn = r >= 0 && e.unit && e.vmax > 0;
	if (drawn) {
		axis_fit(&ay, e.vmin, e.vmax, e.unit);
		/* a day either side of a single time, 3 % of the span otherwise (2 s at least, so that the
		 * axis holds a tick or two): dots clear of the axes */
		int64_t pad = e.tmax > e.tmin ? (e.tmax - e.tmin) / 32 : INT64_C(86400000000000);
		pad = pad > INT64_C(2000000000) ? pad : INT64_C(2000000000);
		h.t0 = e.tmin - pad;
		h.t1 = e.tmax + pad;
		r = draw_y_axis(&body, &ay, h.x0, h.x1, h.y0, h.y1, 24, e.unit);
		if (r >= 0)
			r = time_axis(&body, &h);
		if (r >= 0)
			r = render_each_series(g, history_series, &h);
	}
	double height = drawn ? h.y1 + 60 : 100;
	if (r >= 0)
		r = picture_open(out, width, height, title,
				 "each implementation's medians over time, p20–p80 bars, versions where they change; "
				 "change points dashed");
	if (r >= 0 && body.len)
		r = kx_buf_puts(out, body.ptr);
	if (r >= 0 && !drawn)
		r = text_at(out, 12, 74, "", "no passed run with a value to draw");
	if (r >= 0)
		r = kx_buf_puts(out, "</svg>\n");
	kx_buf_release(&h.line);
	kx_buf_release(&body);
	return r < 0 ? r : 0;
}
