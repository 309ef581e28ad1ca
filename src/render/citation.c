// SPDX-License-Identifier: MIT
/*
 * CITATION.cff of a run directory (SPEC §8): how to cite the run, in the Citation File Format
 * 1.2.0 (https://citation-file-format.github.io/1.2.0/schema, keys as its schema names them) —
 * title, the source as author, the date observed, the run digest and the permalink runs/<short
 * id>/ as identifiers. Everything in it is fixed when the run is stored; the access date is left to
 * the reader, so the file's bytes never change and are safe to hash, cache and copy.
 */
#include "private.h"

#include "kx/json.h"
#include "kx/manifest.h"
#include "kx/rank.h"

#include <stdio.h>
#include <string.h>

/*
 * s as a YAML double-quoted scalar: backslash and quote escaped, and every character YAML does not
 * allow as it is (C0 and C1 controls, DEL, the byte order mark, U+FFFE and U+FFFF) or that would
 * break a line (U+2028, U+2029) written as an escape. s is valid UTF-8 (the parser saw to it).
 */
static int yaml_str(struct kx_buf *out, const char *s)
{
	int r = kx_buf_putc(out, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p && r >= 0;) {
		unsigned cp = *p, n = 1;
		if (cp >= 0xc0 && (cp & 0xe0) == 0xc0)
			cp = (cp & 0x1f) << 6 | (p[1] & 0x3f), n = 2;
		else if ((cp & 0xf0) == 0xe0)
			cp = (cp & 0x0f) << 12 | (p[1] & 0x3f) << 6 | (p[2] & 0x3f), n = 3;
		else if ((cp & 0xf8) == 0xf0)
			n = 4; /* outside the BMP: all printable as far as YAML is concerned */
		if (cp == '"' || cp == '\\')
			r = kx_buf_printf(out, "\\%c", (char)cp);
		else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
			r = kx_buf_printf(out, "\\x%02x", cp);
		else if (n == 3 && (cp == 0xfeff || cp == 0xfffe || cp == 0xffff || cp == 0x2028 || cp == 0x2029))
			r = kx_buf_printf(out, "\\u%04x", cp);
		else
			r = kx_buf_append(out, p, n);
		p += n;
	}
	return r < 0 ? r : kx_buf_putc(out, '"');
}

static int field(struct kx_buf *out, const char *indent, const char *key, const char *value)
{
	int r = kx_buf_printf(out, "%s%s: ", indent, key);
	if (r >= 0)
		r = yaml_str(out, value);
	return r < 0 ? r : kx_buf_putc(out, '\n');
}

int render_citation(const struct kx_run_view *v, struct kx_buf *out)
{
	const struct kx_run_rec *x = v->run;
	const struct kx_group_rec *g = v->group;
	const struct kx_json *rs = v->doc[KX_DOC_RUN];
	char hex[KX_DIGEST_HEX + 1], ds[KX_DIGEST_STR_MAX], when[40], val[64], link[KX_SHORTID_LEN + 8];
	char title[4 * KX_NAME_MAX + 1024], abstract[4 * KX_NAME_MAX + 512];
	kx_digest_hex(&x->run, hex);
	kx_digest_format(&x->run, ds);
	kx_time_format(x->observed_ns, when);
	snprintf(link, sizeof(link), "runs/%.*s/", KX_SHORTID_LEN, hex);

	const char *name = render_str_at(rs, "/metadata/title");
	if (name)
		snprintf(title, sizeof(title), "%s on %s, %s", name, g->gpu, g->workload_slug);
	else
		snprintf(title, sizeof(title), "%s · %s on %s, %s", g->benchmark, x->impl, g->gpu, g->workload_slug);
	const char *stat = render_str_at(rs, "/spec/timing/primaryStatistic");
	if (x->has_value)
		kx_render_value(x->value, x->unit, val, sizeof(val));
	snprintf(abstract, sizeof(abstract), "%s %s of %s on %s, workload %s: %s (%s is better), %s; observed %s.",
		 stat ? stat : "primary", g->metric, x->impl, g->gpu, g->workload_slug, x->has_value ? val : "no value",
		 x->order == KX_ORDER_DESCENDING ? "higher" : "lower", x->passed ? "passed" : "failed", when);
	/* the author: who published the observation, else the harness that made it */
	const char *author = render_str_at(rs, "/spec/sourceNative/source");
	if (!author)
		author = render_str_at(v->doc[KX_DOC_PROTOCOL], "/spec/harness/name");

	int r = kx_buf_puts(out, "# How to cite this benchmark run (Citation File Format 1.2.0). Add the date you\n"
				 "# accessed it; the permalink is its directory in a kindexfs tree.\n"
				 "cff-version: 1.2.0\n");
	if (r >= 0)
		r = field(out, "", "message", "To cite this benchmark run, give its digest and permalink, with the date "
					      "you accessed it.");
	if (r >= 0)
		r = kx_buf_puts(out, "type: dataset\n");
	if (r >= 0)
		r = field(out, "", "title", title);
	if (r >= 0)
		r = field(out, "", "abstract", abstract);
	if (r >= 0)
		r = kx_buf_puts(out, "authors:\n");
	if (r >= 0)
		r = field(out, "  - ", "name", author && *author ? author : "unknown");
	if (r >= 0)
		r = kx_buf_printf(out, "date-released: \"%.10s\"\n", when);
	if (r >= 0 && x->version[0])
		r = field(out, "", "version", x->version);
	if (r >= 0)
		r = kx_buf_puts(out, "identifiers:\n  - type: other\n");
	if (r >= 0)
		r = field(out, "    ", "value", ds);
	if (r >= 0)
		r = field(out, "    ", "description",
			  "The run digest: SHA-256 of the RFC 8785 form of its BenchmarkRun document (KernelIndex).");
	if (r >= 0)
		r = kx_buf_puts(out, "  - type: other\n");
	if (r >= 0)
		r = field(out, "    ", "value", link);
	if (r >= 0)
		r = field(out, "    ", "description", "The permalink: the run's directory in a kindexfs tree.");
	/* keywords are unique items: a kernel, pass, GPU or implementation named alike is said once */
	const char *kw[] = { g->kernel, g->pass, g->gpu, x->impl };
	if (r >= 0)
		r = kx_buf_puts(out, "keywords:\n");
	for (size_t i = 0; i < KX_ARRAY_SIZE(kw) && r >= 0; i++) {
		bool again = !*kw[i];
		for (size_t k = 0; k < i; k++)
			again |= strcmp(kw[k], kw[i]) == 0;
		if (!again && (r = kx_buf_puts(out, "  - ")) >= 0 && (r = yaml_str(out, kw[i])) >= 0)
			r = kx_buf_putc(out, '\n');
	}
	return r < 0 ? r : 0;
}
