// SPDX-License-Identifier: MIT
/*
 * index.html, the page of a directory (SPEC §6, docs/views.md): a static site inside the tree, so
 * that any plain HTTP server over the mount — or over a copy made with rsync — serves the whole
 * index with no code of ours. A page links every entry of its directory (relative links only: the
 * site works wherever it is served from), embeds the directory's pictures and shows as a table a
 * group's ranking, a compare/ pair's summary (summary.tsv's numbers, from the same rows by the same
 * code) or compare/'s pairs. No script, no stylesheet or font from elsewhere, no network: one file,
 * the same bytes for the same directory. Written so that an XML parser reads it too (every element
 * closed, attributes quoted), which the tests use as a first check of its structure.
 */
#include "private.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A relative URL of path segments: RFC 3986's unreserved characters and the '/' between segments
 * as they are, every other byte %XX (a name never holds a '/'). */
static int url_path(struct kx_buf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	int r = 0;
	for (; *s && r >= 0; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~' || c == '/')
			r = kx_buf_putc(out, (char)c);
		else
			r = kx_buf_printf(out, "%%%c%c", hex[c >> 4], hex[c & 15]);
	}
	return r;
}

/*
 * Text that may break across lines: escaped as render_markup_text does, with a <wbr/> after each
 * '_', '/' and ',' (and '.' where `dots`: a column head such as median.<gpu>; and between an RFC
 * 3339 time's date and its time), where a reader expects a long name to break, before the browser
 * breaks it anywhere.
 */
int render_html_break_text(struct kx_buf *out, const char *s, size_t len, bool dots)
{
	int r = 0;
	for (size_t i = 0; i < len && r >= 0; i++) {
		char one[2] = { s[i], 0 };
		bool after = s[i] == '_' || s[i] == '/' || s[i] == ',' || (dots && s[i] == '.') ||
			     (s[i] == 'T' && i > 0 && i + 1 < len && s[i - 1] >= '0' && s[i - 1] <= '9' && s[i + 1] >= '0' &&
			      s[i + 1] <= '9');
		r = s[i] ? render_markup_text(out, one) : kx_buf_putc(out, ' ');
		if (r >= 0 && after && i + 1 < len)
			r = kx_buf_puts(out, "<wbr/>");
	}
	return r;
}

int render_html_link(struct kx_buf *out, const char *name, bool dir, const char *text)
{
	int r = kx_buf_puts(out, "<a href=\"");
	if (r >= 0)
		r = url_path(out, name);
	if (r >= 0)
		r = kx_buf_puts(out, dir ? "/\">" : "\">");
	if (r >= 0)
		r = render_markup_text(out, text);
	return r < 0 ? r : kx_buf_puts(out, "</a>");
}

/*
 * The page's look, inline: it fits a window 1,280 px wide (tests/integration/views-site.sh measures
 * it in a browser). Text breaks where it can (long names, paths, RFC 3339 times: at the <wbr/>
 * that break_text places, at hyphens and spaces), headings and lists anywhere they must; in a
 * table a word is never cut while its column can be as wide as it (break-word, not anywhere,
 * which would cut "rank" to fit a narrower column); numbers stay whole and right-aligned; a table
 * wider than the page all the same (a TSV view of many columns: div.v) scrolls inside its own box;
 * pictures shrink to the page's width.
 */
static const char style[] =
	"body{font-family:sans-serif;margin:1.5em;color:#24292f;max-width:80em}"
	"h1{font-size:1.3em;margin:.2em 0}nav{color:#57606a;margin-bottom:1em}"
	"h1,h2,nav,p,li{overflow-wrap:anywhere}th,td{overflow-wrap:break-word}"
	"div.t{max-width:100%;overflow-x:auto}"
	"table{border-collapse:collapse;margin:1em 0;max-width:100%}"
	"th,td{padding:.25em .5em;text-align:left;vertical-align:top;border-bottom:1px solid #d0d7de}"
	"td.n,td.s{text-align:right;font-variant-numeric:tabular-nums}td.n{white-space:nowrap}td.u{white-space:pre-wrap}"
	"tr.first td{font-weight:bold}img{max-width:100%;height:auto;display:block;margin:1em 0}"
	"ul.files{columns:3 18em;padding-left:1.2em}";

int render_html_head(struct kx_buf *out, const char *title, const char *path)
{
	int r = kx_buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>");
	if (r >= 0)
		r = render_markup_text(out, title);
	if (r >= 0)
		r = kx_buf_printf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n", style);
	return r < 0 ? r : render_html_nav(out, path);
}

/* "kindex / benchmarks / k / p": each ancestor a link back up to its page, the directory itself
 * plain text; runs/ and digests/, which have no page (the server lists them), plain text too */
int render_html_nav(struct kx_buf *out, const char *path)
{
	size_t depth = 0;
	for (const char *p = path; *p; p++)
		depth += *p == '/';
	depth += *path != '\0';
	int r = kx_buf_puts(out, "<nav>");
	for (size_t i = 0; i <= depth && r >= 0; i++) {
		/* component i: "kindex" (the root) or the i-th name of the path (a pair's: two names) */
		char name[KX_NAME_MAX * 2 + 8];
		if (i == 0) {
			snprintf(name, sizeof(name), "kindex");
		} else {
			const char *p = path;
			for (size_t k = 1; k < i; k++)
				p = strchr(p, '/') + 1;
			const char *end = strchr(p, '/');
			snprintf(name, sizeof(name), "%.*s", (int)(end ? (size_t)(end - p) : strlen(p)), p);
		}
		if (i)
			r = kx_buf_puts(out, " / ");
		if (r < 0)
			break;
		if (i == depth || (i == 1 && (strcmp(name, "runs") == 0 || strcmp(name, "digests") == 0))) {
			r = render_markup_text(out, name);
			continue;
		}
		r = kx_buf_puts(out, "<a href=\"");
		for (size_t k = i; k < depth && r >= 0; k++)
			r = kx_buf_puts(out, "../");
		if (r >= 0)
			r = kx_buf_puts(out, "index.html\">");
		if (r >= 0)
			r = render_markup_text(out, name);
		if (r >= 0)
			r = kx_buf_puts(out, "</a>");
	}
	return r < 0 ? r : kx_buf_puts(out, "</nav>\n");
}

int render_html_cell(struct kx_buf *out, bool number, const char *text)
{
	int r = kx_buf_puts(out, number ? "<td class=\"n\">" : "<td>");
	if (r >= 0)
		r = render_markup_text(out, text);
	return r < 0 ? r : kx_buf_puts(out, "</td>");
}

/* <td class="u"><bdi>text</bdi></td>: what a user wrote (an attestation's author, its text), its
 * line breaks kept and its direction isolated, so a right-to-left override in it reorders nothing
 * after the cell's end; spanning `span` columns when more than one */
int render_html_user_cell(struct kx_buf *out, const char *text, unsigned span)
{
	int r = span > 1 ? kx_buf_printf(out, "<td class=\"u\" colspan=\"%u\"><bdi>", span)
			 : kx_buf_puts(out, "<td class=\"u\"><bdi>");
	/* line feeds and tabs, which a note may hold, are text in XML: kept as they are */
	for (size_t n; *text && r >= 0; text += n) {
		n = strcspn(text, "\n\t");
		char *part = strndup(text, n);
		r = part ? render_markup_text(out, part) : -ENOMEM;
		free(part);
		if (r >= 0 && text[n])
			r = kx_buf_putc(out, text[n++]);
	}
	return r < 0 ? r : kx_buf_puts(out, "</bdi></td>");
}

/* <td class="s">a – b</td>: two values, each kept whole (a no-break space before its unit), the
 * line free to break at the dash between them */
static int spread_cell(struct kx_buf *out, const char *text)
{
	int r = kx_buf_puts(out, "<td class=\"s\">");
	for (const char *p = text; *p && r >= 0; p++) {
		bool by_dash = strncmp(p + 1, "–", strlen("–")) == 0 || (p > text && p - text >= (ptrdiff_t)strlen("–") &&
									 strncmp(p - strlen("–"), "–", strlen("–")) == 0);
		char one[2] = { *p, 0 };
		r = *p == ' ' && !by_dash ? kx_buf_puts(out, "&#160;") : render_markup_text(out, one);
	}
	return r < 0 ? r : kx_buf_puts(out, "</td>");
}

/* <td>text</td>, breaking where break_text says */
static int break_cell(struct kx_buf *out, const char *text)
{
	int r = kx_buf_puts(out, "<td>");
	if (r >= 0)
		r = render_html_break_text(out, text, strlen(text), false);
	return r < 0 ? r : kx_buf_puts(out, "</td>");
}

/* A group's ranking.tsv as a table: every run, ranked first, each row linking its page (the
 * implementation's name) and its directory; the columns named as ranking.tsv names them, a value
 * shown as its display, a missing one empty. */
static int ranking_table(struct kx_buf *out, const struct kx_group_view *g)
{
	int r = kx_buf_puts(out, "<div class=\"t\"><table>\n<tr><th>rank</th><th>implementation</th><th>version</th>"
				 "<th>median</th><th>p20–p80</th><th>vs_<wbr/>best</th><th>within_<wbr/>noise</th>"
				 "<th>status</th><th>observed_<wbr/>at</th><th>dir</th></tr>\n");
	const struct kx_run_rec *best = g->ranked ? &g->runs[0] : NULL;
	for (size_t i = 0; i < g->len && r >= 0; i++) {
		const struct kx_run_rec *x = &g->runs[i];
		bool ranked = i < g->ranked;
		struct render_cells c;
		char rank[16] = "", value[64] = "", spread[160] = "", vs[32] = "", noise[32] = "";
		render_cells(x, &c);
		if (ranked)
			snprintf(rank, sizeof(rank), "%zu", i + 1);
		if (x->has_value)
			kx_render_value(x->value, x->unit, value, sizeof(value));
		render_spread_text(x, spread, sizeof(spread));
		double q = ranked ? render_vs_best(x, best) : NAN;
		if (isfinite(q))
			snprintf(vs, sizeof(vs), "%.3f×", q);
		if (ranked && i > 0 && kx_rank_within_noise(x, &g->runs[i - 1]))
			snprintf(noise, sizeof(noise), "≈ #%zu", i);
		r = kx_buf_puts(out, i == 0 && ranked ? "<tr class=\"first\">" : "<tr>");
		if (r >= 0)
			r = render_html_cell(out, true, rank);
		char page[KX_NAME_MAX + 48];
		snprintf(page, sizeof(page), "%s/index.html", g->dirnames[i]);
		if (r >= 0 && (r = kx_buf_puts(out, "<td>")) >= 0 &&
		    (r = render_html_link(out, page, false, x->impl)) >= 0)
			r = kx_buf_puts(out, "</td>");
		if (r >= 0)
			r = render_html_cell(out, false, c.version);
		if (r >= 0)
			r = render_html_cell(out, true, value);
		if (r >= 0)
			r = spread_cell(out, spread);
		if (r >= 0)
			r = render_html_cell(out, true, vs);
		if (r >= 0)
			r = render_html_cell(out, false, noise);
		if (r >= 0)
			r = render_html_cell(out, false, kx_rank_status(x, ranked ? (uint32_t)i + 1 : 0));
		if (r >= 0)
			r = break_cell(out, c.when);
		if (r >= 0)
			r = kx_buf_puts(out, "<td>");
		if (r >= 0)
			r = render_html_link(out, g->dirnames[i], true, g->dirnames[i]);
		if (r >= 0)
			r = kx_buf_puts(out, "</td></tr>\n");
	}
	return r < 0 ? r : kx_buf_puts(out, "</table></div>\n");
}

/* A TSV field that is a plain number ("-12", "0.5", "1e-3"): right-aligned in its column. */
static bool is_number(const char *s, size_t len)
{
	size_t i = 0, digits = 0;
	if (i < len && (s[i] == '-' || s[i] == '+'))
		i++;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		digits++;
	if (i < len && s[i] == '.')
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			digits++;
	if (digits && i < len && (s[i] == 'e' || s[i] == 'E')) {
		size_t e = 0;
		if (++i < len && (s[i] == '-' || s[i] == '+'))
			i++;
		for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			e++;
		digits = e ? digits : 0;
	}
	return digits && i == len;
}

/* One line of a TSV as a table row: each field a <th> (the header) or a <td>. */
static int tsv_row(struct kx_buf *out, const char *line, size_t len, bool head)
{
	int r = kx_buf_puts(out, "<tr>");
	for (size_t i = 0; i <= len && r >= 0;) {
		const char *tab = memchr(line + i, '\t', len - i);
		size_t end = tab ? (size_t)(tab - line) : len;
		bool number = !head && is_number(line + i, end - i);
		r = kx_buf_puts(out, head ? "<th>" : number ? "<td class=\"n\">" : "<td>");
		if (r >= 0)
			r = render_html_break_text(out, line + i, end - i, head);
		if (r >= 0)
			r = kx_buf_puts(out, head ? "</th>" : "</td>");
		i = end + 1;
	}
	return r < 0 ? r : kx_buf_puts(out, "</tr>\n");
}

/*
 * A TSV view of the directory as a table, from its bytes alone: whatever its columns, the header
 * line's names head them, a number is right-aligned; the first KX_HTML_TSV_ROWS rows, then how many
 * more the file has, linked — a page stays small over any number of runs.
 */
static int tsv_table(struct kx_buf *out, const struct kx_html_tsv *t)
{
	size_t rows = 0;
	for (size_t i = 0; i < t->len; i++)
		rows += t->bytes[i] == '\n';
	if (t->len && t->bytes[t->len - 1] != '\n')
		rows++; /* a last line without its newline */
	rows -= rows > 0; /* the header */
	int r = kx_buf_puts(out, "<h2>");
	if (r >= 0)
		r = render_html_link(out, t->name, false, t->name);
	if (r >= 0)
		r = kx_buf_printf(out, "</h2>\n<p>%zu row%s.</p>\n", rows, rows == 1 ? "" : "s");
	if (r < 0 || !rows)
		return r;
	r = kx_buf_puts(out, "<div class=\"t v\"><table>\n");
	const char *p = t->bytes, *end = t->bytes + t->len;
	for (size_t n = 0; p < end && n <= KX_HTML_TSV_ROWS && r >= 0; n++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		r = tsv_row(out, p, len, n == 0);
		p += len + 1;
	}
	if (r >= 0)
		r = kx_buf_puts(out, "</table></div>\n");
	if (r >= 0 && rows > KX_HTML_TSV_ROWS) {
		r = kx_buf_printf(out, "<p>%zu more rows: ", rows - KX_HTML_TSV_ROWS);
		if (r >= 0)
			r = render_html_link(out, t->name, false, t->name);
		if (r >= 0)
			r = kx_buf_puts(out, "</p>\n");
	}
	return r;
}

/* A comparison's totals as the cells of summary.tsv's columns groups … mixed_groups. */
static int totals_cells(struct kx_buf *out, const struct kx_compare_totals *t)
{
	char geo[KX_JCS_NUMBER_MAX];
	render_compare_geomean(t, geo);
	const size_t counts[] = { t->wins, t->losses, t->noise, t->ties, t->mixed };
	char text[24];
	snprintf(text, sizeof(text), "%zu", t->groups);
	int r = render_html_cell(out, true, text);
	if (r >= 0)
		r = render_html_cell(out, true, geo);
	for (size_t i = 0; i < KX_ARRAY_SIZE(counts) && r >= 0; i++) {
		snprintf(text, sizeof(text), "%zu", counts[i]);
		r = render_html_cell(out, true, text);
	}
	return r;
}

static const char totals_head[] = "<th>groups</th><th>geomean_ratio</th><th>wins</th><th>losses</th><th>noise</th>"
				  "<th>ties</th><th>mixed_groups</th></tr>\n";

/* A pair's summary.tsv as a table: its lines (each gpu's and metric's totals, then a line per
 * kernel, pass and gpu), its columns and values. */
static int summary_table(struct kx_buf *out, const struct kx_compare_row *rows, size_t n)
{
	struct render_compare_line *l;
	size_t nl;
	int r = render_compare_lines(rows, n, &l, &nl);
	if (r >= 0)
		r = kx_buf_printf(out, "<table>\n<tr><th>kernel</th><th>pass</th><th>metric</th><th>gpu</th>%s",
				  totals_head);
	for (size_t i = 0; i < nl && r >= 0; i++) {
		const char *text[] = { l[i].kernel, l[i].pass, l[i].metric, l[i].gpu };
		r = kx_buf_puts(out, "<tr>");
		for (size_t k = 0; k < KX_ARRAY_SIZE(text) && r >= 0; k++)
			r = render_html_cell(out, false, text[k]);
		if (r >= 0)
			r = totals_cells(out, &l[i].t);
		if (r >= 0)
			r = kx_buf_puts(out, "</tr>\n");
	}
	free(l);
	return r < 0 ? r : kx_buf_puts(out, "</table>\n");
}

/* compare/'s pairs as a table: each pair's totals on each gpu and metric, linking its directory. */
static int pairs_table(struct kx_buf *out, const struct kx_html_pair *pairs, size_t n)
{
	int r = kx_buf_printf(out, "<table>\n<tr><th>pair</th><th>gpu</th><th>metric</th>%s", totals_head);
	for (size_t i = 0; i < n && r >= 0; i++) {
		r = kx_buf_puts(out, "<tr><td>");
		if (r >= 0)
			r = render_html_link(out, pairs[i].name, true, pairs[i].name);
		if (r >= 0)
			r = kx_buf_puts(out, "</td>");
		if (r >= 0)
			r = render_html_cell(out, false, pairs[i].gpu);
		if (r >= 0)
			r = render_html_cell(out, false, pairs[i].metric);
		if (r >= 0)
			r = totals_cells(out, &pairs[i].totals);
		if (r >= 0)
			r = kx_buf_puts(out, "</tr>\n");
	}
	return r < 0 ? r : kx_buf_puts(out, "</table>\n");
}

int kx_render_index_html(const struct kx_html_page *p, struct kx_buf *out)
{
	const char *title = p->heading && *p->heading ? p->heading : *p->path ? p->path : "kindex";
	int r = render_html_head(out, title, p->path);
	if (r >= 0 && (r = kx_buf_puts(out, "<h1>")) >= 0 && (r = render_markup_text(out, title)) >= 0)
		r = kx_buf_puts(out, "</h1>\n");
	if (r >= 0 && p->lead && *p->lead && (r = kx_buf_puts(out, "<p>")) >= 0 && (r = render_markup_text(out, p->lead)) >= 0)
		r = kx_buf_puts(out, "</p>\n");
	if (r >= 0 && p->group)
		r = ranking_table(out, p->group);
	if (r >= 0 && p->summary)
		r = summary_table(out, p->summary, p->nsummary);
	if (r >= 0 && p->pairs)
		r = pairs_table(out, p->pairs, p->npairs);
	for (size_t i = 0; i < p->npictures && r >= 0; i++) {
		r = kx_buf_puts(out, "<p><img src=\"");
		if (r >= 0)
			r = url_path(out, p->pictures[i]);
		if (r >= 0)
			r = kx_buf_puts(out, "\" alt=\"");
		if (r >= 0)
			r = render_markup_text(out, p->pictures[i]);
		if (r >= 0)
			r = kx_buf_puts(out, "\"/></p>\n");
	}
	for (size_t i = 0; i < p->ntables && r >= 0; i++)
		r = tsv_table(out, &p->tables[i]);
	if (r >= 0)
		r = kx_buf_printf(out, "<h2>%zu entries</h2>\n<ul class=\"files\">\n", p->nlinks);
	for (size_t i = 0; i < p->nlinks && r >= 0; i++) {
		r = kx_buf_puts(out, "<li>");
		if (r >= 0) {
			char text[KX_NAME_MAX * 2 + 8];
			snprintf(text, sizeof(text), "%s%s", p->links[i].name, p->links[i].dir ? "/" : "");
			r = render_html_link(out, p->links[i].name, p->links[i].dir, text);
		}
		if (r >= 0)
			r = kx_buf_puts(out, "</li>\n");
	}
	return r < 0 ? r : kx_buf_puts(out, "</ul>\n</body>\n</html>\n");
}
