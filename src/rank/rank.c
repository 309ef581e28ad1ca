// SPDX-License-Identifier: MIT
/*
 * Placement of runs (SPEC §2): slugs, comparison keys, directory names. The comparison key is the
 * digest of GROUP.json's inputs, so anyone can recompute why two runs were ranked together; the
 * order itself lives in the store's index keys (src/store/keys.h), not in a comparator here.
 */
#include "kx/rank.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *kx_evidence_name(enum kx_evidence e)
{
	switch (e) {
	case KX_EVIDENCE_SOURCE_NATIVE: return "source-native";
	case KX_EVIDENCE_MEASURED: return "measured";
	default: return "submitted";
	}
}

static bool slug_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

size_t kx_slug(const char *in, size_t len, char *out, size_t cap)
{
	size_t n = 0;
	bool pending_dash = false;
	for (size_t i = 0; i < len && n + 1 < cap; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		if (!slug_char(c)) {
			pending_dash = n > 0;
			continue;
		}
		if (pending_dash) {
			out[n++] = '-';
			pending_dash = false;
			if (n + 1 >= cap)
				break;
		}
		out[n++] = (char)c;
	}
	while (n && out[n - 1] == '-')
		n--;
	size_t start = 0;
	while (start < n && out[start] == '-')
		start++;
	if (start) {
		memmove(out, out + start, n - start);
		n -= start;
	}
	bool dots = true;
	for (size_t i = 0; i < n; i++)
		dots = dots && out[i] == '.';
	if (dots) {
		snprintf(out, cap, "unnamed");
		return strlen(out);
	}
	out[n] = '\0';
	return n;
}

/*
 * Names the tree itself uses inside a data directory's parent, at any level (docs/mount.md): its
 * lowercase directories, every file type it generates, and "summary" (a GPU's file in a compare/
 * pair directory is "<gpu>.tsv", beside the pair's summary.tsv). Upper-case names (README,
 * DIGESTS, SHA256SUMS, GROUP.json) are never slugs, so they need no entry.
 */
static const char *const reserved_names[] = { "benchmarks", "compare", "digests", "runs", "inbox", "sha256",
					      "attestations", "artifacts", "signatures", "summary" };
static const char *const reserved_types[] = { ".tsv", ".json", ".svg", ".html", ".txt", ".cff", ".csv" };

bool kx_rank_reserved(const char *s, size_t n)
{
	for (size_t i = 0; i < KX_ARRAY_SIZE(reserved_names); i++)
		if (strlen(reserved_names[i]) == n && memcmp(s, reserved_names[i], n) == 0)
			return true;
	for (size_t i = 0; i < KX_ARRAY_SIZE(reserved_types); i++) {
		size_t l = strlen(reserved_types[i]);
		if (n >= l && memcmp(s + n - l, reserved_types[i], l) == 0)
			return true;
	}
	return false;
}

bool kx_rank_plain(const char *s, size_t n)
{
	if (n == 0 || n > KX_PLAIN_MAX || s[0] == '-' || s[n - 1] == '-' || s[0] == '.' || s[n - 1] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!slug_char((unsigned char)s[i]) || (s[i] == '.' && i + 1 < n && s[i + 1] == '.'))
			return false;
	return !kx_rank_reserved(s, n);
}

/* The readable part of a suffixed component: slug text with every run of dots made one and no dot
 * or dash at either end, cut to KX_PLAIN_MAX - 9 bytes, "unnamed" when nothing is left. */
static size_t readable(const char *slug, size_t n, char *out)
{
	size_t m = 0;
	for (size_t i = 0; i < n && m < KX_PLAIN_MAX - 9; i++) {
		char c = slug[i];
		if ((c == '.' || c == '-') && (m == 0 || (c == '.' && out[m - 1] == '.')))
			continue;
		out[m++] = c;
	}
	while (m && (out[m - 1] == '.' || out[m - 1] == '-'))
		m--;
	if (!m) {
		memcpy(out, "unnamed", 7);
		m = 7;
	}
	out[m] = '\0';
	return m;
}

/* "<readable part of slug>~<8 hex of SHA-256(name)>" */
static void hashed(const char *name, size_t len, const char *slug, size_t slen, char *out, size_t cap)
{
	uint8_t h[32];
	char part[KX_PLAIN_MAX + 1];
	kx_sha256(name, len, h);
	readable(slug, slen, part);
	snprintf(out, cap, "%s~%02x%02x%02x%02x", part, h[0], h[1], h[2], h[3]);
}

void kx_rank_component(const char *name, size_t len, char *out, size_t cap)
{
	if (kx_rank_plain(name, len)) {
		snprintf(out, cap, "%.*s", (int)len, name);
		return;
	}
	char slug[KX_NAME_TEXT_MAX + 1];
	size_t n = kx_slug(name, len, slug, sizeof(slug));
	hashed(name, len, slug, n, out, cap);
}

/* Consumer and workstation boards have no form factor in their names: keep them whole. */
static bool whole_name(const char *name)
{
	static const char *const words[] = { "GeForce", "RTX", "Quadro", "TITAN" };
	for (size_t i = 0; i < KX_ARRAY_SIZE(words); i++)
		if (strstr(name, words[i]))
			return true;
	return false;
}

void kx_rank_gpu_split(const char *name, char *product, size_t plen, char *form, size_t flen)
{
	while (*name == ' ')
		name++;
	size_t len = strlen(name);
	while (len && name[len - 1] == ' ')
		len--;
	kx_copyn(form, flen, "", 0);
	if (whole_name(name)) {
		kx_copyn(product, plen, name, len);
		return;
	}
	/*
	 * The model is the first word holding a digit (A100-SXM4-80GB, H100, H200, B200, GH200).
	 * Everything after it — the rest of that word past its first '-', then the other words —
	 * is the form factor. Splitting only at a ' ' or '-' keeps the slug: both fold to '-'.
	 */
	size_t i = 0;
	while (i < len) {
		size_t w = i;
		while (i < len && name[i] != ' ')
			i++;
		bool digit = false;
		for (size_t j = w; j < i; j++)
			digit |= isdigit((unsigned char)name[j]) != 0;
		if (digit) {
			const char *dash = memchr(name + w, '-', i - w);
			size_t cut = dash ? (size_t)(dash - name) : i;
			kx_copyn(product, plen, name, cut);
			size_t f = cut < len ? cut + 1 : len;
			kx_copyn(form, flen, name + f, len - f);
			return;
		}
		while (i < len && name[i] == ' ')
			i++;
	}
	kx_copyn(product, plen, name, len);
}

/* "product-formFactor" of an ExecutionEnvironment spec; -EINVAL without a product */
static int gpu_text(const struct kx_json *env_spec, char *text, size_t cap)
{
	const struct kx_json *hw = kx_json_get(env_spec, "hardware");
	const char *product = kx_json_get_string(hw, "product");
	const char *ff = kx_json_get_string(hw, "formFactor");
	if (!product)
		return -EINVAL;
	snprintf(text, cap, ff && *ff ? "%s-%s" : "%s", product, ff);
	return 0;
}

/*
 * A GPU name's slug (into slug) and its component (into out). Case and punctuation variants of one
 * product are one GPU: an ASCII name is known by its slug; a folding that dropped letters (any
 * non-ASCII byte) keeps the exact name. Returns whether the name is ASCII.
 */
static bool gpu_fold(const char *name, char *slug, size_t cap, char out[KX_NAME_MAX])
{
	size_t n = kx_slug(name, strlen(name), slug, cap);
	bool ascii = true;
	for (const char *p = name; *p; p++)
		ascii = ascii && (unsigned char)*p < 0x80;
	if (ascii && kx_rank_plain(slug, n))
		memcpy(out, slug, n + 1);
	else if (ascii)
		hashed(slug, n, slug, n, out, KX_NAME_MAX);
	else
		hashed(name, strlen(name), slug, n, out, KX_NAME_MAX);
	return ascii;
}

int kx_rank_gpu_names(const struct kx_json *env_spec, char comp[KX_NAME_MAX], char *identity, size_t cap)
{
	char text[2 * KX_NAME_TEXT_MAX + 2], slug[sizeof(text)];
	int r = gpu_text(env_spec, text, sizeof(text));
	if (r < 0)
		return r;
	bool ascii = gpu_fold(text, slug, sizeof(slug), comp);
	if (identity)
		snprintf(identity, cap, "%s", ascii ? slug : text);
	return 0;
}

int kx_rank_gpu_slug(const struct kx_json *env_spec, char out[KX_NAME_MAX])
{
	return kx_rank_gpu_names(env_spec, out, NULL, 0);
}

void kx_rank_gpu_component(const char *name, char out[KX_NAME_MAX])
{
	char slug[2 * KX_NAME_TEXT_MAX + 2];
	gpu_fold(name, slug, sizeof(slug), out);
}

int kx_rank_param_text(const struct kx_json *v, struct kx_buf *b)
{
	char num[KX_JCS_NUMBER_MAX];
	switch (v->type) {
	case KX_JSON_STRING:
		return kx_buf_append(b, v->str.ptr, v->str.len);
	case KX_JSON_NUMBER:
		return kx_buf_append(b, num, kx_jcs_number(v->number, num));
	case KX_JSON_TRUE:
		return kx_buf_puts(b, "true");
	case KX_JSON_FALSE:
		return kx_buf_puts(b, "false");
	default:
		return kx_jcs_write(v, b);
	}
}

static int param_cmp(const void *x, const void *y)
{
	const struct kx_json_member *a = *(const struct kx_json_member *const *)x;
	const struct kx_json_member *b = *(const struct kx_json_member *const *)y;
	return kx_jcs_key_cmp(a->key, a->key_len, b->key, b->key_len);
}

int kx_rank_workload_slug(const struct kx_json *spec, char out[KX_NAME_MAX], bool *ret_cut)
{
	const struct kx_json *params = kx_json_get(spec, "parameters");
	struct kx_buf b;
	kx_buf_init(&b, KX_WORKLOAD_TEXT_MAX); /* validated: a longer text is refused (rule length) */
	int r = 0;
	size_t n = params && params->type == KX_JSON_OBJECT ? params->obj.len : 0;
	const struct kx_json_member **idx = n ? malloc(n * sizeof(*idx)) : NULL;
	if (n && !idx)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		idx[i] = &params->obj.v[i];
	if (n)
		qsort(idx, n, sizeof(*idx), param_cmp);
	for (size_t i = 0; i < n && r >= 0; i++) {
		if (i)
			r = kx_buf_putc(&b, '-');
		if (r >= 0)
			r = kx_buf_append(&b, idx[i]->key, idx[i]->key_len);
		if (r >= 0)
			r = kx_rank_param_text(idx[i]->value, &b);
	}
	free(idx);
	const char *dtype = kx_json_get_string(spec, "dtype");
	if (r >= 0 && dtype && *dtype)
		r = kx_buf_printf(&b, n ? "-%s" : "%s", dtype);
	if (r < 0) {
		kx_buf_release(&b);
		return r;
	}
	char full[4096];
	size_t len = kx_slug(b.ptr ? b.ptr : "", b.len, full, sizeof(full));
	kx_buf_release(&b);
	bool cut = len > KX_SLUG_MAX;
	if (cut) {
		len = KX_SLUG_MAX;
		while (len && full[len - 1] == '-')
			len--;
		full[len] = '\0';
	}
	memcpy(out, full, len + 1);
	*ret_cut = cut;
	return 0;
}

/* segment i (0-based) of a '/'-separated id with exactly `want` segments, as it is (*ret_len bytes,
 * not NUL-terminated); NULL when the id has another shape or the segment is empty */
static const char *id_segment(const char *id, int want, int i, size_t *ret_len)
{
	int count = 1;
	for (const char *p = id; *p; p++)
		count += *p == '/';
	if (count != want)
		return NULL;
	const char *p = id;
	for (int k = 0; k < i; k++)
		p = strchr(p, '/') + 1;
	const char *e = strchr(p, '/');
	*ret_len = e ? (size_t)(e - p) : strlen(p);
	return *ret_len ? p : NULL;
}

/* segment i (0-based) of a '/'-separated id with exactly `want` segments, slugged, a '~' kept (a
 * cut workload slug's suffix) */
static bool segment(const char *id, int want, int i, char *out, size_t cap)
{
	size_t n;
	const char *p = id_segment(id, want, i, &n);
	if (!p)
		return false;
	const char *tilde = memchr(p, '~', n);
	size_t base = tilde ? (size_t)(tilde - p) : n;
	size_t len = kx_slug(p, base, out, cap);
	if (tilde && len + 1 < cap) {
		out[len++] = '~';
		kx_slug(tilde + 1, n - base - 1, out + len, cap - len);
	}
	return true;
}

struct kx_json *kx_rank_group_inputs(struct kx_arena *a, const struct kx_group_rec *g)
{
	struct kx_json *o = kx_json_new(a, KX_JSON_OBJECT);
	char wd[KX_DIGEST_STR_MAX];
	kx_digest_format(&g->workload, wd);
	if (!o || kx_json_set_string(a, o, "benchmark", g->benchmark) < 0 ||
	    kx_json_set_string(a, o, "metric", g->metric) < 0 || kx_json_set_string(a, o, "gpu", g->gpu) < 0 ||
	    kx_json_set_string(a, o, "workload", wd) < 0)
		return NULL;
	return o;
}

static bool plain(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == '"' || *s == '\\' || (unsigned char)*s >= 0x80)
			return false;
	return true;
}

int kx_rank_comparison_key(const struct kx_group_rec *g, struct kx_digest *ret)
{
	/* The inputs are slugs, path-safe names and a digest, which JCS writes without escapes:
	 * then the JCS text is a concatenation in key order (this runs for every ingested run).
	 * Anything else goes through the general serializer. */
	if (plain(g->benchmark) && plain(g->metric) && plain(g->gpu)) {
		char wd[KX_DIGEST_STR_MAX], text[4 * KX_NAME_MAX + 128];
		kx_digest_format(&g->workload, wd);
		int n = snprintf(text, sizeof(text), "{\"benchmark\":\"%s\",\"gpu\":\"%s\",\"metric\":\"%s\",\"workload\":\"%s\"}",
				 g->benchmark, g->gpu, g->metric, wd);
		if (n > 0 && (size_t)n < sizeof(text)) {
			kx_sha256(text, (size_t)n, ret->b);
			return 0;
		}
	}
	struct kx_arena *a = kx_arena_new();
	if (!a)
		return -ENOMEM;
	struct kx_json *in = kx_rank_group_inputs(a, g);
	struct kx_buf b = { 0 };
	int r = in ? kx_jcs_write(in, &b) : -ENOMEM;
	if (r >= 0)
		kx_sha256(b.ptr, b.len, ret->b);
	kx_buf_release(&b);
	kx_arena_free(a);
	return r < 0 ? r : 0;
}

void kx_rank_group_names(const struct kx_group_rec *g, char *kernel, size_t kcap, char *pass, size_t pcap)
{
	const char *slash = strchr(g->benchmark, '/');
	snprintf(kernel, kcap, "%.*s", (int)(slash ? (size_t)(slash - g->benchmark) : strlen(g->benchmark)),
		 g->benchmark);
	snprintf(pass, pcap, strcmp(g->metric, "latency") == 0 ? "%s" : "%s.%s", slash ? slash + 1 : "", g->metric);
}

void kx_rank_group_paths(struct kx_group_rec *g)
{
	char kernel[sizeof(g->benchmark)], pass[sizeof(g->benchmark) + sizeof(g->metric) + 2];
	kx_rank_group_names(g, kernel, sizeof(kernel), pass, sizeof(pass));
	kx_rank_component(kernel, strlen(kernel), g->kernel, sizeof(g->kernel));
	kx_rank_component(pass, strlen(pass), g->pass, sizeof(g->pass));
}

const char *kx_rank_impl_name(const struct kx_json *impl_doc)
{
	return impl_doc ? kx_json_get_string(kx_json_get(impl_doc, "spec"), "name") : NULL;
}

const char *kx_rank_impl_text(const char *name, const char *external_id, size_t *ret_len)
{
	*ret_len = 0;
	if (name) {
		*ret_len = strlen(name);
		return name;
	}
	return external_id ? id_segment(external_id, 6, 2, ret_len) : NULL;
}

void kx_rank_impl_component(const char *name, const char *external_id, char out[KX_NAME_MAX])
{
	/* identity is the exact name (SPEC §2): its component is injective, never a lossy slug */
	size_t len;
	const char *text = kx_rank_impl_text(name, external_id, &len);
	if (text)
		kx_rank_component(text, len, out, KX_NAME_MAX);
	else
		snprintf(out, KX_NAME_MAX, "unknown");
}

static void copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

int kx_rank_place(const struct kx_manifest *m, const struct kx_json *workload_doc,
		  const struct kx_json *impl_doc, struct kx_group_rec *ret_group,
		  struct kx_run_rec *ret_run)
{
	const struct kx_run_facts *f = &m->facts;
	struct kx_group_rec g;
	struct kx_run_rec x;
	memset(&g, 0, sizeof(g));
	memset(&x, 0, sizeof(x));
	if (!f->benchmark || !m->doc[KX_DOC_ENVIRONMENT])
		return -EINVAL;
	copy(g.benchmark, sizeof(g.benchmark), f->benchmark);
	copy(g.metric, sizeof(g.metric), f->metric);
	kx_rank_group_paths(&g);
	int r = kx_rank_gpu_slug(kx_json_get(m->doc[KX_DOC_ENVIRONMENT], "spec"), g.gpu);
	if (r < 0)
		return r;
	g.workload = m->digest[KX_DOC_WORKLOAD];
	char hex[KX_DIGEST_HEX + 1];
	if (workload_doc) {
		r = kx_rank_workload_slug(kx_json_get(workload_doc, "spec"), g.workload_slug, &g.workload_cut);
		if (r < 0)
			return r;
	} else if (f->external_id && segment(f->external_id, 6, 4, g.workload_slug, sizeof(g.workload_slug))) {
		/* "<slug>~<8 hex>" in an externalId is a cut slug (SPEC §5): keep the cut base, and the
		 * directory gets its suffix back from the workload digest */
		char *tilde = strchr(g.workload_slug, '~');
		if (tilde) {
			*tilde = '\0';
			g.workload_cut = true;
		}
	} else {
		kx_digest_hex(&g.workload, hex);
		snprintf(g.workload_slug, sizeof(g.workload_slug), "workload-%.12s", hex);
	}
	g.order = (uint8_t)f->order;
	r = kx_rank_comparison_key(&g, &g.key);
	if (r < 0)
		return r;

	x.run = m->digest[KX_DOC_RUN];
	x.group = g.key;
	x.protocol = m->digest[KX_DOC_PROTOCOL];
	x.environment = m->digest[KX_DOC_ENVIRONMENT];
	x.workload = m->digest[KX_DOC_WORKLOAD];
	x.implementation = m->digest[KX_DOC_IMPLEMENTATION];
	x.passed = f->passed;
	x.has_value = f->has_value;
	x.value = f->value;
	x.base_value = f->base_value;
	x.has_spread = f->has_spread;
	x.base_p20 = f->base_p20;
	x.base_p80 = f->base_p80;
	x.order = (uint8_t)f->order;
	x.observed_ns = f->observed_ns;
	copy(x.unit, sizeof(x.unit), f->unit ? f->unit : "");
	copy(x.family, sizeof(x.family), f->family);
	x.evidence = f->source ? KX_EVIDENCE_SOURCE_NATIVE
		     : f->harness && strcmp(f->harness, "kindex-bench") == 0 && f->has_correctness
			     ? KX_EVIDENCE_MEASURED
			     : KX_EVIDENCE_SUBMITTED;
	const char *impl = kx_rank_impl_name(impl_doc);
	const char *version = impl_doc ? kx_json_get_string(kx_json_get(impl_doc, "spec"), "version") : NULL;
	copy(x.version, sizeof(x.version), version ? version : "");
	kx_rank_impl_component(impl, f->external_id, x.impl);
	*ret_group = g;
	*ret_run = x;
	return 0;
}

const char *kx_rank_status(const struct kx_run_rec *run, uint32_t rank)
{
	return rank ? "passed" : run->passed && run->has_value ? "superseded" : "failed";
}

bool kx_rank_within_noise(const struct kx_run_rec *a, const struct kx_run_rec *b)
{
	return a->has_spread && b->has_spread && a->base_p20 <= b->base_p80 && b->base_p20 <= a->base_p80;
}

int kx_rank_width(uint32_t n)
{
	int w = 1;
	for (uint32_t v = n; v >= 10; v /= 10)
		w++;
	return w < 2 ? 2 : w;
}

void kx_rank_dirname(uint32_t rank, int width, const struct kx_run_rec *run, char *out, size_t cap)
{
	char hex[KX_DIGEST_HEX + 1];
	kx_digest_hex(&run->run, hex);
	if (rank)
		snprintf(out, cap, "%0*u-%s-%.12s", width, rank, run->impl, hex);
	else
		snprintf(out, cap, "%s-%s-%.12s", kx_rank_status(run, 0), run->impl, hex);
}

/* A workload slug that can be a directory name as it is: it may be longer than a plain name
 * (KX_SLUG_MAX), but never starts or ends with a dot, never holds "..", and is not reserved. */
static bool workload_plain(const char *s)
{
	size_t n = strlen(s);
	return n && s[0] != '.' && s[n - 1] != '.' && !strstr(s, "..") && !kx_rank_reserved(s, n);
}

void kx_rank_workload_dirname(const char *base, const struct kx_digest *workload, bool cut,
			      bool shared, char *out, size_t cap)
{
	char hex[KX_DIGEST_HEX + 1];
	kx_digest_hex(workload, hex);
	if (!workload_plain(base)) {
		/* no leading or trailing dot, no "..": a suffix alone does not make it a safe name */
		char clean[KX_NAME_MAX];
		size_t m = 0;
		for (const char *p = base; *p && m + 1 < sizeof(clean); p++)
			if (*p != '.' || (m && clean[m - 1] != '.'))
				clean[m++] = *p;
		while (m && clean[m - 1] == '.')
			m--;
		clean[m] = '\0';
		snprintf(out, cap, "%s~%.8s", m ? clean : "unnamed", hex);
	} else if (cut || shared) {
		snprintf(out, cap, "%s~%.8s", base, hex);
	} else {
		snprintf(out, cap, "%s", base);
	}
}
