// SPDX-License-Identifier: MIT
/*
 * The manifest module: every rule of docs/manifest.md, each reported with the JSON pointer, the
 * rule id and (where the input has one) the line and column a user would jump to; one file with
 * many problems reports all of them; a JSON Lines file reports every bad line and yields nothing;
 * valid files (the published fixture, a hand-built manifest, JSON Lines) give the right digests
 * and run facts; RFC 3339 times and units.
 */
#include "kx/manifest.h"
#include "test-helpers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- small tools ------------------------------------------------------------------------------ */

/* text with the first `from` replaced by `to` (malloc'd); bails out when `from` is absent */
static char *replace(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	if (!at) {
		printf("Bail out! '%s' not in the test text\n", from);
		exit(2);
	}
	size_t n = strlen(text) - strlen(from) + strlen(to);
	char *out = malloc(n + 1);
	size_t pre = (size_t)(at - text);
	memcpy(out, text, pre);
	strcpy(out + pre, to);
	strcat(out, at + strlen(from));
	return out;
}

/* 1-based line and byte column of text[off] */
static void line_col(const char *text, size_t off, unsigned *line, unsigned *col)
{
	unsigned l = 1;
	size_t ls = 0;
	for (size_t i = 0; i < off; i++)
		if (text[i] == '\n') {
			l++;
			ls = i + 1;
		}
	*line = l;
	*col = (unsigned)(off - ls) + 1;
}

/* where `needle` starts in text, plus `skip` bytes */
static void pos_of(const char *text, const char *needle, size_t skip, unsigned *line, unsigned *col)
{
	const char *at = strstr(text, needle);
	if (!at) {
		printf("Bail out! '%s' not in the test text\n", needle);
		exit(2);
	}
	line_col(text, (size_t)(at - text) + skip, line, col);
}

static int parse(const char *text, size_t len, const struct kx_manifest_limits *lim,
		 struct kx_manifest_file **ret, struct kx_problems *p)
{
	return kx_manifest_parse(text, len, lim, ret, p);
}

/* Parse; expect refusal; the problem list stays in *p for the caller. */
static int refused(const char *text, size_t len, const struct kx_manifest_limits *lim, struct kx_problems *p,
		   const char *what)
{
	struct kx_manifest_file *sentinel = (struct kx_manifest_file *)(uintptr_t)0x1, *f = sentinel;
	int r = parse(text, len, lim, &f, p);
	ok(r == -EINVAL && f == sentinel && p->len > 0, "%s: refused (-EINVAL, no file, problems listed)", what);
	if (r == 0 && f != sentinel)
		kx_manifest_file_free(f);
	return r;
}

/* The base manifest with its digests linked, pretty (malloc'd). */
static char *good_pretty(void)
{
	struct kx_arena *a = kx_arena_new();
	struct kx_json *m = tm_base(a);
	tm_fix(a, m);
	char *s = tm_text(m, true);
	kx_arena_free(a);
	return s;
}

/* ---- valid files ------------------------------------------------------------------------------ */

static void valid_fixture(void)
{
	struct kx_buf b = { 0 };
	if (!ok(read_data("fixtures/flce-forward-a100.manifest.json", &b), "read tests/data/fixtures/flce-forward-a100.manifest.json"))
		return;
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_manifest_file *f = NULL;
	int r = parse(b.ptr, b.len, NULL, &f, &p);
	if (!ok(r == 0 && f && f->len == 1 && !f->json_lines, "the published fixture is valid")) {
		dump_problems(&p);
		goto out;
	}
	struct kx_manifest *m = &f->v[0];
	char s[KX_DIGEST_STR_MAX];
	kx_digest_format(&m->digest[KX_DOC_RUN], s);
	is_str(s, "sha256:b3b20f4a454b2a9a71a2c91dea53d4cb06282e6d0ef2e64b450eb134df0002fe", "fixture run digest");
	kx_digest_format(&m->digest[KX_DOC_PROTOCOL], s);
	is_str(s, "sha256:a79eaf4df66c97c6adc1fb2d09df78682155d1ea86652ae0b70199875bde7747", "fixture protocol digest");
	kx_digest_format(&m->digest[KX_DOC_ENVIRONMENT], s);
	is_str(s, "sha256:90c9e2764222f592477cfccf3373519add5a1b881563956ad058c4f99e41b6b9", "fixture environment digest");
	/* the workload is only referenced: its digest is the reference, the document absent */
	kx_digest_format(&m->digest[KX_DOC_WORKLOAD], s);
	ok(m->doc[KX_DOC_WORKLOAD] == NULL && strcmp(s, "sha256:c3fd7dcabc481639ad1bb6c563ca6279f254358aca177e511ac7f140be9a3fb5") == 0,
	   "a referenced, not included workload keeps the referenced digest");
	ok(m->doc[KX_DOC_IMPLEMENTATION] == NULL && m->doc[KX_DOC_RUN] && m->doc[KX_DOC_PROTOCOL] && m->doc[KX_DOC_ENVIRONMENT],
	   "documents present exactly where the fixture includes them");
	const struct kx_run_facts *x = &m->facts;
	is_str(x->benchmark, "fused_linear_cross_entropy/forward", "benchmark taken from sourceNative.benchmark");
	is_str(x->metric, "latency", "metric defaults to latency");
	is_str(x->statistic, "median", "primary statistic from the protocol");
	ok(x->passed && x->has_value && x->value == 274073425 && x->base_value == 274073425 && strcmp(x->unit, "ns") == 0,
	   "primary value 274073425 ns");
	ok(x->observed_ns == 1732297443000000000LL, "observedAt 2024-11-22T17:44:03.000Z in ns");
	ok(x->order == KX_ORDER_ASCENDING, "latency ranks ascending");
	is_str(x->source, "liger-kernel-bench", "sourceNative.source");
	is_str(x->external_id,
	       "fused_linear_cross_entropy/forward/liger/nvidia-a100-sxm4-80gb/hidden4096-tokens16384-vocab128256-bf16/2024-11-22-17-44-03",
	       "sourceNative.externalId");
	is_str(x->family, "liger_kernel_bench", "protocol family");
	ok(m->line == 1, "the manifest starts on line 1");
out:
	kx_manifest_file_free(f);
	kx_problems_release(&p);
	kx_buf_release(&b);
}

/* The digest rule computed by hand: sha256 of JCS text written out in the test. */
static void valid_handmade(void)
{
	char *text = good_pretty();
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_manifest_file *f = NULL;
	int r = parse(text, strlen(text), NULL, &f, &p);
	if (!ok(r == 0 && f && f->len == 1, "a hand-built manifest with all five documents is valid")) {
		dump_problems(&p);
		goto out;
	}
	struct kx_manifest *m = &f->v[0];
	static const char env_jcs[] =
		"{\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"kind\":\"ExecutionEnvironment\",\"spec\":{\"hardware\":"
		"{\"architecture\":\"sm_80\",\"formFactor\":\"SXM4-80GB\",\"product\":\"NVIDIA A100\",\"vendor\":\"nvidia\"},"
		"\"software\":{}}}";
	static const char wl_jcs[] =
		"{\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"kind\":\"Workload\",\"spec\":{\"dtype\":\"bf16\","
		"\"parameters\":{\"hidden\":4096,\"tokens\":16384}}}";
	struct kx_digest want;
	kx_sha256(env_jcs, strlen(env_jcs), want.b);
	ok(kx_digest_equal(&want, &m->digest[KX_DOC_ENVIRONMENT]), "environment digest = sha256 of hand-written JCS of {apiVersion, kind, spec}");
	kx_sha256(wl_jcs, strlen(wl_jcs), want.b);
	ok(kx_digest_equal(&want, &m->digest[KX_DOC_WORKLOAD]), "workload digest = sha256 of hand-written JCS (metadata not hashed)");
	for (int d = 0; d < KX_DOC__COUNT; d++)
		ok(m->doc[d] != NULL, "document %s present", kx_doc_member((enum kx_doc)d));
	const struct kx_run_facts *x = &m->facts;
	is_str(x->benchmark, "rms_norm/forward", "benchmark from run.spec.benchmark");
	ok(x->value == 1000 && x->observed_ns == TM_OBSERVED_NS && x->passed, "value and observedAt extracted");
	is_str(x->harness, "test-harness", "harness name extracted");
	ok(x->source == NULL && x->external_id == NULL, "no sourceNative: no source facts");
	ok(!x->has_correctness, "no correctness block");

	/* the same bytes give the same digests, every time */
	struct kx_manifest_file *g = NULL;
	if (ok(parse(text, strlen(text), NULL, &g, &p) == 0, "parsing again succeeds"))
		ok(memcmp(g->v[0].digest, m->digest, sizeof(m->digest)) == 0, "digests are stable across parses");
	kx_manifest_file_free(g);
out:
	kx_manifest_file_free(f);
	kx_problems_release(&p);
	free(text);
}

static void valid_json_lines(void)
{
	char *l1 = tm_line(&(struct tm_opts){ .impl = "liger" });
	char *l2 = tm_line(&(struct tm_opts){ .impl = "torch", .median = "2000" });
	char *l3 = tm_line(&(struct tm_opts){ .impl = "triton", .observed = "2025-01-03T00:00:00Z" });
	char text[1 << 15];
	/* a blank line, CRLF endings and a missing final newline are all fine */
	snprintf(text, sizeof(text), "%s\n\n%s\r\n%s", l1, l2, l3);
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_manifest_file *f = NULL;
	int r = parse(text, strlen(text), NULL, &f, &p);
	if (ok(r == 0 && f && f->json_lines && f->len == 3, "JSON Lines of three valid manifests (blank line, CRLF)")) {
		ok(f->v[0].line == 1 && f->v[1].line == 3 && f->v[2].line == 4, "each manifest knows its line (1, 3, 4)");
		ok(f->v[1].facts.value == 2000 && f->v[2].facts.observed_ns == 1735862400000000000LL,
		   "facts belong to their own line");
		ok(!kx_digest_equal(&f->v[0].digest[KX_DOC_RUN], &f->v[1].digest[KX_DOC_RUN]),
		   "different runs, different run digests");
	} else {
		dump_problems(&p);
	}
	kx_manifest_file_free(f);
	kx_problems_release(&p);
	free(l1);
	free(l2);
	free(l3);
}

/* One manifest, laid out the ways people and tools write JSON: always one valid manifest (a
 * multi-line layout must not be mistaken for JSON Lines). */
static void valid_layouts(void)
{
	struct kx_arena *a = kx_arena_new();
	struct kx_json *m = tm_base(a);
	tm_fix(a, m);
	char *jcs = tm_text(m, false), *pretty = tm_text(m, true);
	static const char *const members[] = { "run", "protocol", "environment", "workload", "implementation" };
	/* one top-level member per line: {"run": {...},\n "protocol": {...},\n ...} */
	struct kx_buf per_line = { 0 }, brace_key = { 0 }, lead = { 0 }, trail = { 0 };
	for (size_t i = 0; i < KX_ARRAY_SIZE(members); i++) {
		struct kx_buf d = { 0 };
		kx_jcs_write(kx_json_get(m, members[i]), &d);
		kx_buf_printf(&per_line, "%s\"%s\": %s", i ? ",\n " : "{", members[i], d.ptr);
		kx_buf_release(&d);
		kx_buf_reset(&d);
		kx_json_write_pretty(kx_json_get(m, members[i]), &d);
		d.ptr[--d.len] = '\0'; /* the pretty form's final newline */
		kx_buf_printf(&brace_key, "%s\"%s\":\n%s", i ? ",\n  " : "{ ", members[i], d.ptr);
		kx_buf_release(&d);
	}
	kx_buf_puts(&per_line, "}\n");
	kx_buf_puts(&brace_key, "\n}\n");
	kx_buf_printf(&lead, "\n\n  %s", pretty);
	kx_buf_printf(&trail, "%s\n\n\n", jcs);
	struct {
		const char *what, *text;
	} cases[] = {
		{ "JCS on one line", jcs },
		{ "pretty", pretty },
		{ "one member per line ({\"run\": {…},⏎ \"protocol\": …)", per_line.ptr },
		{ "the first member's name on the opening line ({ \"run\":⏎ …)", brace_key.ptr },
		{ "blank lines before it", lead.ptr },
		{ "one line and blank lines after it", trail.ptr },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
		struct kx_problems p;
		kx_problems_init(&p);
		struct kx_manifest_file *f = NULL;
		int r = parse(cases[i].text, strlen(cases[i].text), NULL, &f, &p);
		if (!ok(r == 0 && f && f->len == 1, "one manifest, %s, is one valid manifest", cases[i].what)) {
			diag("  %zu problems, first of them:", p.len);
			p.len = p.len > 3 ? 3 : p.len;
			dump_problems(&p);
		}
		kx_manifest_file_free(f);
		kx_problems_release(&p);
	}
	kx_buf_release(&per_line);
	kx_buf_release(&brace_key);
	kx_buf_release(&lead);
	kx_buf_release(&trail);
	free(jcs);
	free(pretty);
	kx_arena_free(a);
}

/* Variants that must stay valid. */
static void valid_variants(void)
{
	struct {
		const char *what;
		const char *ptr, *key, *json; /* json NULL: delete */
		bool fix;
	} cases[] = {
		{ "metadata is not hashed: renaming a document keeps its digest", "/protocol/metadata", "name", "\"renamed\"", false },
		{ "a failed run needs no timing", "/run/spec", "timing", NULL, false },
		{ "unknown members inside a spec are kept (forward compatible)", "/protocol/spec", "futureField", "{\"a\":[1,2]}", true },
		{ "the workload may be only referenced", "", "workload", NULL, false },
		{ "the implementation may be only referenced", "", "implementation", NULL, false },
		{ "observedAt with an offset", "/run/spec", "observedAt", "\"2025-01-02T05:04:05+02:00\"", false },
		{ "observedAt with nanoseconds and lowercase t/z", "/run/spec", "observedAt", "\"2025-01-02t03:04:05.123456789z\"", false },
		{ "a benchmark with dots and dashes in the kernel", "/run/spec", "benchmark", "\"a.b-c_d/forward\"", false },
		{ "memory unit in a memory measurement", "/run/spec/measurements/0", "unit", "\"MiB\"", false },
		{ "quantiles may be equal", "/run/spec/measurements/0", "value", "1000", false },
		{ "quantiles compare in one unit (p20 0.00099 ms below the median 1000 ns)", "/run/spec", "measurements",
		  "[{\"metric\":\"latency\",\"statistic\":\"p20\",\"unit\":\"ms\",\"value\":0.00099}]", false },
		{ "quantiles of two metrics are not compared", "/run/spec", "measurements",
		  "[{\"metric\":\"memory\",\"statistic\":\"p20\",\"unit\":\"MB\",\"value\":5000}]", false },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
		struct kx_arena *a = kx_arena_new();
		struct kx_json *m = tm_base(a);
		tm_fix(a, m);
		if (strcmp(cases[i].key, "timing") == 0)
			tm_set_str(a, m, "/run/spec", "status", "failed");
		if (strcmp(cases[i].key, "unit") == 0)
			tm_set_str(a, m, "/run/spec/measurements/0", "metric", "memory");
		if (cases[i].json)
			tm_set(a, m, cases[i].ptr, cases[i].key, cases[i].json);
		else
			tm_del(m, cases[i].ptr, cases[i].key);
		if (cases[i].fix)
			tm_fix(a, m);
		char *text = tm_text(m, true);
		struct kx_problems p;
		kx_problems_init(&p);
		struct kx_manifest_file *f = NULL;
		if (!ok(parse(text, strlen(text), NULL, &f, &p) == 0 && f && f->len == 1, "valid: %s", cases[i].what))
			dump_problems(&p);
		if (f && i == 5)
			ok(f->v[0].facts.observed_ns == TM_OBSERVED_NS, "+02:00 converts to the same instant as Z");
		if (f && i == 6)
			ok(f->v[0].facts.observed_ns == TM_OBSERVED_NS + 123456789, "nanoseconds are kept");
		if (f && i == 1)
			ok(!f->v[0].facts.passed && !f->v[0].facts.has_value, "a failed run has no primary value");
		kx_manifest_file_free(f);
		kx_problems_release(&p);
		free(text);
		kx_arena_free(a);
	}
}

/* Non-latency metrics: the primary value is the measurement, in its unit and in the base unit. */
static void valid_metrics(void)
{
	struct {
		const char *metric, *unit, *value;
		double base;
		enum kx_order order;
	} cases[] = {
		{ "throughput", "TFLOP/s", "1.5", 1.5e12, KX_ORDER_DESCENDING },
		{ "memory", "MB", "512", 512e6, KX_ORDER_ASCENDING },
		{ "memory", "GiB", "2", 2147483648.0, KX_ORDER_ASCENDING },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
		struct kx_arena *a = kx_arena_new();
		struct kx_json *m = tm_base(a);
		tm_set_str(a, m, "/protocol/spec/measurement", "metric", cases[i].metric);
		char ms[256];
		snprintf(ms, sizeof(ms), "[{\"metric\":\"%s\",\"statistic\":\"median\",\"unit\":\"%s\",\"value\":%s}]",
			 cases[i].metric, cases[i].unit, cases[i].value);
		tm_set(a, m, "/run/spec", "measurements", ms);
		tm_del(m, "/run/spec/timing", "latencyNs");
		tm_fix(a, m);
		char *text = tm_text(m, true);
		struct kx_problems p;
		kx_problems_init(&p);
		struct kx_manifest_file *f = NULL;
		if (ok(parse(text, strlen(text), NULL, &f, &p) == 0, "a %s run in %s is valid", cases[i].metric, cases[i].unit)) {
			const struct kx_run_facts *x = &f->v[0].facts;
			ok(strcmp(x->metric, cases[i].metric) == 0 && strcmp(x->unit, cases[i].unit) == 0 &&
				   x->value == strtod(cases[i].value, NULL) && x->base_value == cases[i].base &&
				   x->order == cases[i].order,
			   "%s %s: value in its unit, base value %g, order %s", cases[i].value, cases[i].unit, cases[i].base,
			   cases[i].order == KX_ORDER_ASCENDING ? "ascending" : "descending");
		} else {
			dump_problems(&p);
		}
		kx_manifest_file_free(f);
		kx_problems_release(&p);
		free(text);
		kx_arena_free(a);
	}
	/* a passed memory run without its memory measurement has no primary value */
	struct kx_arena *a = kx_arena_new();
	struct kx_json *m = tm_base(a);
	tm_set_str(a, m, "/protocol/spec/measurement", "metric", "memory");
	tm_fix(a, m);
	char *text = tm_text(m, true);
	struct kx_problems p;
	kx_problems_init(&p);
	refused(text, strlen(text), NULL, &p, "memory run without a memory measurement");
	expect_problem(&p, "/run/spec/measurements", "required", "memory run without a memory measurement");
	kx_problems_release(&p);
	free(text);
	kx_arena_free(a);
}

/* ---- syntax, encoding, structure limits: line and column ------------------------------------- */

static void expect_at(const struct kx_problems *p, const char *pointer, const char *rule, unsigned line,
		      unsigned col, const char *what)
{
	const struct kx_problem *q = expect_problem(p, pointer, rule, what);
	if (q && !ok(q->line == line && q->col == col, "%s: reported at %u:%u", what, line, col))
		diag("  got %u:%u", q->line, q->col);
}

static void syntax_errors(void)
{
	struct kx_problems p;
	kx_problems_init(&p);
	static const char t1[] = "{\n  \"run\": {,\n}";
	refused(t1, strlen(t1), NULL, &p, "stray comma");
	expect_at(&p, "", "json-syntax", 2, 11, "stray comma");
	kx_problems_release(&p);

	char *good = good_pretty();
	size_t half = strlen(good) / 2;
	unsigned l, c;
	line_col(good, half, &l, &c);
	refused(good, half, NULL, &p, "manifest cut in half");
	expect_at(&p, "", "json-syntax", l, c, "manifest cut in half: error at the end of the input");
	kx_problems_release(&p);

	static const char t3[] = "{\"run\": \"unterminated}";
	refused(t3, strlen(t3), NULL, &p, "unterminated string");
	expect_problem(&p, "", "json-syntax", "unterminated string");
	kx_problems_release(&p);

	refused("", 0, NULL, &p, "empty file");
	expect_problem(&p, "", "json-syntax", "empty file");
	kx_problems_release(&p);

	char *trail;
	if (asprintf(&trail, "%sx", good) < 0)
		exit(2);
	line_col(trail, strlen(good), &l, &c);
	refused(trail, strlen(trail), NULL, &p, "garbage after the manifest");
	expect_at(&p, "", "json-syntax", l, c, "garbage after the manifest");
	kx_problems_release(&p);
	free(trail);

	static const char *const bad_json[] = { "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":+1}", "{'a':1}",
						"{\"a\":tru}", "{\"a\":NaN}", "{\"a\":[1,]}", "{\"a\":\"\\x\"}",
						"{\"a\":\"tab\there\"}" };
	for (size_t i = 0; i < KX_ARRAY_SIZE(bad_json); i++) {
		refused(bad_json[i], strlen(bad_json[i]), NULL, &p, bad_json[i]);
		expect_problem(&p, "", "json-syntax", bad_json[i]);
		kx_problems_release(&p);
	}

	char *bom;
	if (asprintf(&bom, "\xef\xbb\xbf%s", good) < 0)
		exit(2);
	refused(bom, strlen(bom), NULL, &p, "a UTF-8 byte order mark");
	kx_problems_release(&p);
	free(bom);
	free(good);
}

static void encoding_errors(void)
{
	char *good = good_pretty();
	struct {
		const char *what, *bytes;
	} cases[] = {
		{ "byte 0xff", "\xff" },
		{ "overlong '/' (c0 af)", "\xc0\xaf" },
		{ "UTF-8 encoded surrogate (ed a0 80)", "\xed\xa0\x80" },
		{ "code point past U+10FFFF (f4 90 80 80)", "\xf4\x90\x80\x80" },
		{ "a lone continuation byte", "\x80" },
		{ "a 3-byte sequence cut short", "\xe2\x82" },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
		char to[64];
		snprintf(to, sizeof(to), "\"test-%s-run\"", cases[i].bytes);
		char *text = replace(good, "\"test-run\"", to);
		unsigned l, c;
		pos_of(text, to, 6, &l, &c);
		struct kx_problems p;
		kx_problems_init(&p);
		char what[128];
		snprintf(what, sizeof(what), "non-UTF-8 in a string: %s", cases[i].what);
		refused(text, strlen(text), NULL, &p, what);
		expect_at(&p, "", "utf8", l, c, what);
		kx_problems_release(&p);
		free(text);
	}
	struct {
		const char *what, *esc;
		bool good;
	} escs[] = {
		{ "unpaired high surrogate escape", "\\ud800", false },
		{ "unpaired low surrogate escape", "\\udc00x", false },
		{ "high surrogate followed by a non-surrogate", "\\ud800\\u0041", false },
		{ "a surrogate pair escape (U+1F600)", "\\ud83d\\ude00", true },
		{ "escaped BMP characters", "\\u00e9\\u4e2d", true },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(escs); i++) {
		char to[64];
		snprintf(to, sizeof(to), "\"test-%s\"", escs[i].esc);
		char *text = replace(good, "\"test-run\"", to);
		struct kx_problems p;
		kx_problems_init(&p);
		struct kx_manifest_file *f = NULL;
		int r = parse(text, strlen(text), NULL, &f, &p);
		if (escs[i].good) {
			ok(r == 0, "%s is valid", escs[i].what);
		} else {
			unsigned l, c;
			pos_of(text, to, 6, &l, &c);
			ok(r == -EINVAL, "%s is refused", escs[i].what);
			expect_at(&p, "", "utf8", l, c, escs[i].what);
		}
		kx_manifest_file_free(f);
		kx_problems_release(&p);
		free(text);
	}
	/* outside a string, too */
	static const char raw[] = "{\"run\": \xff}";
	struct kx_problems p;
	kx_problems_init(&p);
	refused(raw, strlen(raw), NULL, &p, "a raw 0xff where a value belongs");
	expect_at(&p, "", "utf8", 1, 9, "a raw 0xff where a value belongs");
	kx_problems_release(&p);
	free(good);
}

static void duplicate_keys(void)
{
	char *good = good_pretty();
	/* in the run (not referenced by a digest) and in the protocol (referenced) */
	struct {
		const char *what, *from, *to, *second, *pointer;
	} cases[] = {
		{ "run.spec.status twice", "\"status\": \"passed\"", "\"status\": \"passed\", \"status\": \"failed\"",
		  "\"status\": \"failed\"", "/run/spec/status" },
		{ "protocol.spec.harness.name twice", "\"name\": \"test-harness\"",
		  "\"name\": \"test-harness\", \"name\": \"other\"", "\"name\": \"other\"", "/protocol/spec/harness/name" },
		{ "a top-level member twice", "\"run\": {", "\"run\": {},\n  \"run\": {", "\"run\": {\n", "/run" },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
		char *text = replace(good, cases[i].from, cases[i].to);
		struct kx_problems p;
		kx_problems_init(&p);
		refused(text, strlen(text), NULL, &p, cases[i].what);
		const struct kx_problem *q = expect_problem(&p, cases[i].pointer, "duplicate-key", cases[i].what);
		unsigned l, kc, vc;
		pos_of(text, cases[i].second, 0, &l, &kc);
		const char *colon = strchr(cases[i].second, ':');
		vc = kc + (unsigned)(colon - cases[i].second) + 2;
		if (q && !ok(q->line == l && (q->col == kc || q->col == vc), "%s: reported on the second occurrence (%u:%u)",
			     cases[i].what, l, kc))
			diag("  got %u:%u", q->line, q->col);
		/* the document with a duplicate key has no digest; that must not be reported as a
		 * mismatch against a digest nobody computed */
		const struct kx_problem *mm = find_problem(&p, NULL, "digest-mismatch");
		if (!ok(mm == NULL || !strstr(mm->message, "sha256:0000000000000000"),
			"%s: no digest-mismatch against an all-zero digest", cases[i].what))
			diag("  got: %s: %s", mm->pointer, mm->message);
		kx_problems_release(&p);
		free(text);
	}
	free(good);
}

static void non_finite(void)
{
	char *good = good_pretty();
	struct {
		const char *from, *to, *pointer;
		size_t skip;
	} cases[] = {
		{ "\"median\": 1000", "\"median\": 1e999", "/run/spec/timing/latencyNs/median", 10 },
		{ "\"hidden\": 4096", "\"hidden\": -1e400", "/workload/spec/parameters/hidden", 10 },
		{ "\"value\": 990", "\"value\": 1e309", "/run/spec/measurements/0/value", 9 },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
		char *text = replace(good, cases[i].from, cases[i].to);
		unsigned l, c;
		pos_of(text, cases[i].to, cases[i].skip, &l, &c);
		struct kx_problems p;
		kx_problems_init(&p);
		refused(text, strlen(text), NULL, &p, cases[i].to);
		expect_at(&p, cases[i].pointer, "non-finite", l, c, cases[i].to);
		kx_problems_release(&p);
		free(text);
	}
	/* large but finite is fine (and keeps its value) */
	char *max = replace(good, "\"p20\"", "\"max\""); /* a p20 that large would be above the median */
	char *text = replace(max, "\"value\": 990", "\"value\": 1.7976931348623157e308");
	free(max);
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_manifest_file *f = NULL;
	ok(parse(text, strlen(text), NULL, &f, &p) == 0, "DBL_MAX is a finite number");
	kx_manifest_file_free(f);
	kx_problems_release(&p);
	free(text);
	free(good);
}

static void depth_and_size(void)
{
	char *good = good_pretty();
	/* 70 nested arrays inside run.spec: the root, run and spec are 3 levels, so the 62nd
	 * array is the 65th level */
	char deep[256] = "\"deep\": ";
	size_t n = strlen(deep);
	for (int i = 0; i < 70; i++)
		deep[n++] = '[';
	for (int i = 0; i < 70; i++)
		deep[n++] = ']';
	deep[n] = '\0';
	char to[400];
	snprintf(to, sizeof(to), "%s, \"status\": \"passed\"", deep);
	char *text = replace(good, "\"status\": \"passed\"", to);
	unsigned l, c;
	pos_of(text, "\"deep\": ", 8 + 61, &l, &c);
	struct kx_problems p;
	kx_problems_init(&p);
	refused(text, strlen(text), NULL, &p, "70 nested arrays");
	expect_at(&p, "", "depth", l, c, "nesting deeper than 64: reported at the 65th level");
	kx_problems_release(&p);
	free(text);

	/* exactly 64 levels is allowed */
	{
		struct kx_arena *a = kx_arena_new();
		char s64[200], s65[200];
		memset(s64, '[', 64);
		memset(s64 + 64, ']', 64);
		s64[128] = '\0';
		memset(s65, '[', 65);
		memset(s65 + 65, ']', 65);
		s65[130] = '\0';
		struct kx_json *v;
		struct kx_json_error e;
		ok(kx_json_parse(a, s64, strlen(s64), 0, &v, NULL, &e) == 0, "64 levels of nesting parse");
		ok(kx_json_parse(a, s65, strlen(s65), 0, &v, NULL, &e) == -EINVAL && strcmp(e.rule, "depth") == 0,
		   "65 levels are refused with rule depth");
		kx_arena_free(a);
	}

	/* a configurable depth: the base manifest is 5 levels deep */
	struct kx_manifest_file *f = NULL;
	struct kx_manifest_limits lim = { .max_depth = 5 };
	ok(parse(good, strlen(good), &lim, &f, &p) == 0, "max_depth 5 admits a 5-level manifest");
	kx_manifest_file_free(f);
	f = NULL;
	lim.max_depth = 4;
	refused(good, strlen(good), &lim, &p, "max_depth 4");
	expect_problem(&p, "", "depth", "max_depth 4 refuses a 5-level manifest");
	kx_problems_release(&p);

	/* the size cap: default 4 MiB, and configurable; whitespace counts */
	size_t cap = KX_MANIFEST_MAX_BYTES_DEFAULT;
	char *big = malloc(cap + 2);
	size_t gl = strlen(good);
	memcpy(big, good, gl);
	memset(big + gl, ' ', cap + 1 - gl);
	big[cap + 1] = '\0';
	refused(big, cap + 1, NULL, &p, "4 MiB + 1 byte");
	const struct kx_problem *q = expect_problem(&p, "", "size", "a file over the default cap");
	if (q)
		ok(strstr(q->message, "4194304") != NULL, "the size message names the limit (%s)", q->message);
	kx_problems_release(&p);
	ok(parse(big, cap, NULL, &f, &p) == 0, "exactly 4 MiB is accepted");
	kx_manifest_file_free(f);
	f = NULL;
	kx_problems_release(&p);
	free(big);

	lim = (struct kx_manifest_limits){ .max_bytes = gl - 1 };
	refused(good, gl, &lim, &p, "max_bytes one below the file size");
	expect_problem(&p, "", "size", "a configurable cap");
	kx_problems_release(&p);
	lim.max_bytes = gl;
	ok(parse(good, gl, &lim, &f, &p) == 0, "max_bytes equal to the file size accepts it");
	kx_manifest_file_free(f);
	kx_problems_release(&p);
	free(good);
}

/* ---- the rules, one at a time (tree edits) ---------------------------------------------------- */

struct rule_case {
	const char *ptr, *key, *json; /* set ptr[key] = json, or delete it when json is NULL */
	bool fix;                     /* re-link digests after the edit */
	const char *pointer, *rule;   /* the problem a user must see */
};

static void rule_cases(void)
{
	static const struct rule_case cases[] = {
		/* required members and fields */
		{ "", "environment", NULL, false, "", "required" },
		{ "", "protocol", NULL, false, "", "required" },
		{ "", "run", NULL, false, "", "required" },
		{ "/run", "spec", NULL, false, "/run/spec", "required" },
		{ "/run", "apiVersion", NULL, false, "/run/apiVersion", "required" },
		{ "/protocol", "kind", NULL, true, "/protocol/kind", "required" },
		{ "/run/spec", "status", NULL, false, "/run/spec/status", "required" },
		{ "/run/spec", "observedAt", NULL, false, "/run/spec/observedAt", "required" },
		{ "/run/spec", "protocolDigest", NULL, false, "/run/spec/protocolDigest", "required" },
		{ "/run/spec", "environmentDigest", NULL, false, "/run/spec/environmentDigest", "required" },
		{ "/run/spec", "workloadDigest", NULL, false, "/run/spec/workloadDigest", "required" },
		{ "/run/spec", "implementationDigest", NULL, false, "/run/spec/implementationDigest", "required" },
		{ "/run/spec", "benchmark", NULL, false, "/run/spec/benchmark", "required" },
		{ "/run/spec", "timing", NULL, false, "/run/spec/timing", "required" },
		{ "/run/spec/timing", "primaryStatistic", NULL, false, "/run/spec/timing/primaryStatistic", "required" },
		{ "/run/spec/timing", "latencyNs", NULL, false, "/run/spec/timing/latencyNs/median", "required" },
		{ "/protocol/spec/measurement", "primaryStatistic", NULL, true, "/protocol/spec/measurement/primaryStatistic", "required" },
		{ "/protocol/spec/comparability", "family", NULL, true, "/protocol/spec/comparability/family", "required" },
		{ "/protocol/spec", "measurement", NULL, true, "/protocol/spec/measurement", "required" },
		{ "/environment/spec/hardware", "vendor", NULL, true, "/environment/spec/hardware/vendor", "required" },
		{ "/environment/spec/hardware", "product", NULL, true, "/environment/spec/hardware/product", "required" },
		{ "/environment/spec", "hardware", NULL, true, "/environment/spec/hardware", "required" },
		{ "/workload/spec", "parameters", NULL, true, "/workload/spec/parameters", "required" },
		{ "/implementation/spec", "name", NULL, true, "/implementation/spec/name", "required" },
		{ "/implementation/spec", "name", "\"\"", true, "/implementation/spec/name", "required" },
		{ "/run/spec/measurements/0", "value", NULL, false, "/run/spec/measurements/0/value", "required" },
		{ "/run/spec", "sourceNative", "{\"externalId\":\"x\"}", false, "/run/spec/sourceNative/source", "required" },
		{ "/run/spec", "sourceNative", "{\"source\":\"s\"}", false, "/run/spec/sourceNative/externalId", "required" },
		/* types */
		{ "/run/spec", "status", "5", false, "/run/spec/status", "type" },
		{ "/run/spec", "status", "\"pass\\u0000ed\"", false, "/run/spec/status", "type" },
		{ "/run/spec", "observedAt", "1735787045", false, "/run/spec/observedAt", "type" },
		{ "/run/spec", "benchmark", "[\"rms_norm\",\"forward\"]", false, "/run/spec/benchmark", "type" },
		{ "/run/spec", "timing", "\"fast\"", false, "/run/spec/timing", "type" },
		{ "/run/spec/timing/latencyNs", "median", "\"1000\"", false, "/run/spec/timing/latencyNs/median", "type" },
		{ "/run/spec", "measurements", "{}", false, "/run/spec/measurements", "type" },
		{ "/run/spec", "measurements", "[5]", false, "/run/spec/measurements/0", "type" },
		{ "/run/spec", "protocolDigest", "7", false, "/run/spec/protocolDigest", "type" },
		{ "", "environment", "\"NVIDIA A100\"", false, "/environment", "type" },
		{ "", "workload", "[]", false, "/workload", "type" },
		{ "/run", "spec", "[]", false, "/run/spec", "type" },
		{ "/run", "metadata", "[]", false, "/run/metadata", "type" },
		{ "/run/metadata", "name", "1", false, "/run/metadata/name", "type" },
		{ "/run/metadata/labels", "team", "true", false, "/run/metadata/labels/team", "type" },
		{ "/workload/spec/parameters", "hidden", "[4096]", true, "/workload/spec/parameters/hidden", "type" },
		{ "/workload/spec/parameters", "hidden", "null", true, "/workload/spec/parameters/hidden", "type" },
		{ "/workload/spec/parameters", "hidden", "{\"v\":1}", true, "/workload/spec/parameters/hidden", "type" },
		{ "/environment/spec/hardware", "product", "80", true, "/environment/spec/hardware/product", "type" },
		/* values */
		{ "/run/spec", "status", "\"done\"", false, "/run/spec/status", "enum" },
		{ "/run/spec/timing/latencyNs", "median", "-5", false, "/run/spec/timing/latencyNs/median", "range" },
		{ "/run", "apiVersion", "\"kernelindex.dev/v1\"", false, "/run/apiVersion", "api-version" },
		{ "/protocol", "apiVersion", "\"kernelindex.dev/v1beta1\"", true, "/protocol/apiVersion", "api-version" },
		{ "/run", "kind", "\"BenchmarkResult\"", false, "/run/kind", "kind" },
		{ "/environment", "kind", "\"Workload\"", true, "/environment/kind", "kind" },
		{ "", "extra", "{}", false, "/extra", "unknown-member" },
		{ "", "Run", "{}", false, "/Run", "unknown-member" },
		{ "/run/spec/timing", "primaryStatistic", "\"mean\"", false, "/run/spec/timing/primaryStatistic", "statistic-mismatch" },
		{ "/run/spec", "sourceNative", "{\"source\":\"s\",\"externalId\":\"x\",\"benchmark\":\"layer_norm/forward\"}", false,
		  "/run/spec/sourceNative/benchmark", "benchmark" },
		/* digests */
		{ "/protocol/spec/comparability", "notes", "\"edited after the run was written\"", false, "/run/spec/protocolDigest", "digest-mismatch" },
		{ "/environment/spec/hardware", "architecture", "\"sm_90\"", false, "/run/spec/environmentDigest", "digest-mismatch" },
		{ "/workload/spec/parameters", "hidden", "8192", false, "/run/spec/workloadDigest", "digest-mismatch" },
		{ "/implementation/spec", "version", "\"0.5.0\"", false, "/run/spec/implementationDigest", "digest-mismatch" },
		{ "/run/spec", "protocolDigest", "\"sha256:A79EAF4DF66C97C6ADC1FB2D09DF78682155D1EA86652AE0B70199875BDE7747\"", false,
		  "/run/spec/protocolDigest", "digest-format" },
		{ "/run/spec", "protocolDigest", "\"SHA256:a79eaf4df66c97c6adc1fb2d09df78682155d1ea86652ae0b70199875bde7747\"", false,
		  "/run/spec/protocolDigest", "digest-format" },
		{ "/run/spec", "workloadDigest", "\"sha256:a79eaf4df66c97c6adc1fb2d09df78682155d1ea86652ae0b70199875bde774\"", false,
		  "/run/spec/workloadDigest", "digest-format" },
		{ "/run/spec", "workloadDigest", "\"sha256:a79eaf4df66c97c6adc1fb2d09df78682155d1ea86652ae0b70199875bde77470\"", false,
		  "/run/spec/workloadDigest", "digest-format" },
		{ "/run/spec", "workloadDigest",
		  "\"sha512:cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e\"",
		  false, "/run/spec/workloadDigest", "digest-format" },
		{ "/run/spec", "workloadDigest", "\"md5:d41d8cd98f00b204e9800998ecf8427e\"", false, "/run/spec/workloadDigest", "digest-format" },
		{ "/run/spec", "implementationDigest", "\"a79eaf4df66c97c6adc1fb2d09df78682155d1ea86652ae0b70199875bde7747\"", false,
		  "/run/spec/implementationDigest", "digest-format" },
		{ "/run/spec", "implementationDigest", "\"sha256:g79eaf4df66c97c6adc1fb2d09df78682155d1ea86652ae0b70199875bde7747\"", false,
		  "/run/spec/implementationDigest", "digest-format" },
		/* timestamps */
		{ "/run/spec", "observedAt", "\"2024-11-22T17:44:03\"", false, "/run/spec/observedAt", "timestamp" },
		{ "/run/spec", "observedAt", "\"2024-11-22T17:44:03.000\"", false, "/run/spec/observedAt", "timestamp" },
		{ "/run/spec", "observedAt", "\"2024-02-30T00:00:00Z\"", false, "/run/spec/observedAt", "timestamp" },
		{ "/run/spec", "observedAt", "\"2023-02-29T00:00:00Z\"", false, "/run/spec/observedAt", "timestamp" },
		{ "/run/spec", "observedAt", "\"2024-11-22T24:00:00Z\"", false, "/run/spec/observedAt", "timestamp" },
		{ "/run/spec", "observedAt", "\"2024-11-22T23:60:00Z\"", false, "/run/spec/observedAt", "timestamp" },
		{ "/run/spec", "observedAt", "\"2024-13-01T00:00:00Z\"", false, "/run/spec/observedAt", "timestamp" },
		{ "/run/spec", "observedAt", "\"2024-11-22 17:44:03\"", false, "/run/spec/observedAt", "timestamp" },
		{ "/run/spec", "observedAt", "\"22/11/2024\"", false, "/run/spec/observedAt", "timestamp" },
		{ "/run/spec", "observedAt", "\"2024-11-22T17:44:03+2:00\"", false, "/run/spec/observedAt", "timestamp" },
		{ "/run/spec", "observedAt", "\"2024-11-22T17:44:03.Z\"", false, "/run/spec/observedAt", "timestamp" },
		{ "/run/spec", "observedAt", "\"2024-11-22T17:44:03Z junk\"", false, "/run/spec/observedAt", "timestamp" },
		/* units */
		{ "/run/spec/measurements/0", "unit", "\"furlong\"", false, "/run/spec/measurements/0/unit", "unit" },
		{ "/run/spec/measurements/0", "unit", "\"NS\"", false, "/run/spec/measurements/0/unit", "unit" },
		{ "/run/spec/measurements/0", "unit", "\"MB\"", false, "/run/spec/measurements/0/unit", "unit" },
		/* quantiles out of order: the value that is not the median is the problem */
		{ "/run/spec/measurements/0", "value", "1001", false, "/run/spec/measurements/0/value", "quantile-order" },
		{ "/run/spec/timing/latencyNs", "p80", "999", false, "/run/spec/timing/latencyNs/p80", "quantile-order" },
		{ "/run/spec", "measurements", "[{\"metric\":\"latency\",\"statistic\":\"p80\",\"unit\":\"ms\",\"value\":0.0009}]",
		  false, "/run/spec/measurements/0/value", "quantile-order" },
		{ "/run/spec", "measurements",
		  "[{\"metric\":\"memory\",\"statistic\":\"median\",\"unit\":\"MB\",\"value\":10},"
		  "{\"metric\":\"memory\",\"statistic\":\"p20\",\"unit\":\"MB\",\"value\":11}]",
		  false, "/run/spec/measurements/1/value", "quantile-order" },
		{ "/run/spec", "measurements",
		  "[{\"metric\":\"memory\",\"statistic\":\"p80\",\"unit\":\"MB\",\"value\":10},"
		  "{\"metric\":\"memory\",\"statistic\":\"p20\",\"unit\":\"MB\",\"value\":11}]",
		  false, "/run/spec/measurements/1/value", "quantile-order" },
		/* names that cannot form a path */
		{ "/run/spec", "benchmark", "\"rms_norm\"", false, "/run/spec/benchmark", "path-name" },
		{ "/run/spec", "benchmark", "\"RMS_norm/forward\"", false, "/run/spec/benchmark", "path-name" },
		{ "/run/spec", "benchmark", "\"rms_norm/Forward\"", false, "/run/spec/benchmark", "path-name" },
		{ "/run/spec", "benchmark", "\"../forward\"", false, "/run/spec/benchmark", "path-name" },
		{ "/run/spec", "benchmark", "\"rms_norm/..\"", false, "/run/spec/benchmark", "path-name" },
		{ "/run/spec", "benchmark", "\"./forward\"", false, "/run/spec/benchmark", "path-name" },
		{ "/run/spec", "benchmark", "\"rms_norm/forward.memory\"", false, "/run/spec/benchmark", "path-name" },
		{ "/run/spec", "benchmark", "\"rms_norm/forward/extra\"", false, "/run/spec/benchmark", "path-name" },
		{ "/run/spec", "benchmark", "\"rms norm/forward\"", false, "/run/spec/benchmark", "path-name" },
		{ "/run/spec", "benchmark", "\"/forward\"", false, "/run/spec/benchmark", "path-name" },
		{ "/run/spec", "benchmark", "\"rms_norm/\"", false, "/run/spec/benchmark", "path-name" },
		{ "/run/spec", "benchmark", "\"rms\\u00e9/forward\"", false, "/run/spec/benchmark", "path-name" },
		{ "/protocol/spec/measurement", "metric", "\"Peak Memory\"", true, "/protocol/spec/measurement/metric", "path-name" },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
		const struct rule_case *k = &cases[i];
		struct kx_arena *a = kx_arena_new();
		struct kx_json *m = tm_base(a);
		tm_fix(a, m);
		if (k->json)
			tm_set(a, m, k->ptr, k->key, k->json);
		else
			tm_del(m, k->ptr, k->key);
		if (k->fix)
			tm_fix(a, m);
		char *text = tm_text(m, true);
		char what[300];
		snprintf(what, sizeof(what), "%s %s/%s%s%s", k->json ? "set" : "delete", k->ptr, k->key,
			 k->json ? " = " : "", k->json ? k->json : "");
		struct kx_problems p;
		kx_problems_init(&p);
		struct kx_manifest_file *sentinel = (struct kx_manifest_file *)(uintptr_t)0x1, *f = sentinel;
		int r = parse(text, strlen(text), NULL, &f, &p);
		const struct kx_problem *q = find_problem(&p, k->pointer, k->rule);
		/* a problem at a value carries that value's position; one about a missing member the
		 * position of the object that lacks it (never 0:0 in a file that has lines) */
		if (!ok(r == -EINVAL && f == sentinel && q && q->line > 0, "%s: %s at '%s'", what, k->rule, k->pointer)) {
			diag("  returned %d, %zu problems:", r, p.len);
			dump_problems(&p);
		}
		kx_problems_release(&p);
		free(text);
		kx_arena_free(a);
	}
}

/* Positions of problems found by the validator (not the parser), checked on the base text. */
static void rule_positions(void)
{
	char *good = good_pretty();
	struct {
		const char *from, *to, *pointer, *rule;
		size_t skip;
	} cases[] = {
		{ "\"observedAt\": \"" TM_OBSERVED "\"", "\"observedAt\": \"2024-02-30T00:00:00Z\"", "/run/spec/observedAt", "timestamp", 14 },
		{ "\"unit\": \"ns\"", "\"unit\": \"furlong\"", "/run/spec/measurements/0/unit", "unit", 8 },
		{ "\"status\": \"passed\"", "\"status\": 5", "/run/spec/status", "type", 10 },
		{ "\"benchmark\": \"rms_norm/forward\"", "\"benchmark\": \"RMS/forward\"", "/run/spec/benchmark", "path-name", 13 },
		{ "\"kind\": \"BenchmarkRun\"", "\"kind\": \"BenchmarkRunX\"", "/run/kind", "kind", 8 },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
		char *text = replace(good, cases[i].from, cases[i].to);
		unsigned l, c;
		pos_of(text, cases[i].to, cases[i].skip, &l, &c);
		struct kx_problems p;
		kx_problems_init(&p);
		refused(text, strlen(text), NULL, &p, cases[i].to);
		expect_at(&p, cases[i].pointer, cases[i].rule, l, c, cases[i].to);
		kx_problems_release(&p);
		free(text);
	}
	free(good);
}

/* ---- every problem of a file, and of every line ----------------------------------------------- */

static void collect_every_problem(void)
{
	struct kx_arena *a = kx_arena_new();
	struct kx_json *m = tm_base(a);
	tm_set_str(a, m, "/protocol", "apiVersion", "kernelindex.dev/v2");
	tm_del(m, "/environment/spec/hardware", "product");
	tm_set(a, m, "/workload/spec/parameters", "hidden", "[1]");
	tm_fix(a, m);
	tm_set_str(a, m, "/run/spec", "observedAt", "2024-02-30T00:00:00Z");
	tm_set_str(a, m, "/run/spec/measurements/0", "unit", "furlong");
	tm_set(a, m, "", "extra", "{}");
	tm_set_str(a, m, "/run/spec", "benchmark", "RMS/forward");
	tm_set_str(a, m, "/run/spec", "implementationDigest", "sha256:ABC");
	tm_set_str(a, m, "/run/spec/timing", "primaryStatistic", "mean");
	char *pretty = tm_text(m, true);
	/* two more the tree cannot hold: a duplicate key and a number out of range */
	char *t1 = replace(pretty, "\"team\": \"kernels\"", "\"team\": \"kernels\",\n        \"team\": \"other\"");
	char *text = replace(t1, "\"median\": 1000", "\"median\": 1e999");
	static const struct {
		const char *pointer, *rule;
	} want[] = {
		{ "/protocol/apiVersion", "api-version" },
		{ "/environment/spec/hardware/product", "required" },
		{ "/workload/spec/parameters/hidden", "type" },
		{ "/run/spec/observedAt", "timestamp" },
		{ "/run/spec/measurements/0/unit", "unit" },
		{ "/extra", "unknown-member" },
		{ "/run/spec/benchmark", "path-name" },
		{ "/run/spec/implementationDigest", "digest-format" },
		{ "/run/spec/timing/primaryStatistic", "statistic-mismatch" },
		{ "/run/metadata/labels/team", "duplicate-key" },
		{ "/run/spec/timing/latencyNs/median", "non-finite" },
	};
	struct kx_problems p;
	kx_problems_init(&p);
	refused(text, strlen(text), NULL, &p, "one file, eleven problems");
	for (size_t i = 0; i < KX_ARRAY_SIZE(want); i++)
		expect_problem(&p, want[i].pointer, want[i].rule, "one file, eleven problems: all reported");
	if (!ok(p.len == KX_ARRAY_SIZE(want), "exactly those eleven (no noise): %zu", p.len))
		dump_problems(&p);
	/* each problem carries its position */
	size_t positioned = 0;
	for (size_t i = 0; i < p.len; i++)
		positioned += p.v[i].line > 0;
	ok(positioned == p.len, "every problem has a line number");

	/* kx_problems_format: "<file>:<line>:<col>: <pointer>: <rule>: <message>" */
	struct kx_buf out = { 0 };
	kx_problems_format(&p, "m.json", &out);
	const struct kx_problem *q = find_problem(&p, "/run/spec/observedAt", "timestamp");
	if (q) {
		char want_line[256];
		snprintf(want_line, sizeof(want_line), "m.json:%u:%u: /run/spec/observedAt: timestamp: ", q->line, q->col);
		ok(out.ptr && strstr(out.ptr, want_line) != NULL, "formatted as file:line:col: pointer: rule: message");
	}
	size_t lines = 0;
	for (size_t i = 0; i < out.len; i++)
		lines += out.ptr[i] == '\n';
	ok(lines == p.len, "one formatted line per problem");
	kx_buf_release(&out);
	kx_problems_release(&p);
	free(text);
	free(t1);
	free(pretty);
	kx_arena_free(a);
}

static char *jsonl(char **lines, size_t n)
{
	struct kx_buf b = { 0 };
	for (size_t i = 0; i < n; i++) {
		kx_buf_puts(&b, lines[i]);
		kx_buf_putc(&b, '\n');
	}
	return kx_buf_detach(&b, NULL);
}

static void json_lines_bad(void)
{
	char *lines[6];
	char when[40];
	for (int i = 0; i < 6; i++) {
		snprintf(when, sizeof(when), "2025-01-0%dT00:00:00Z", i + 1);
		lines[i] = tm_line(&(struct tm_opts){ .observed = when });
	}
	/* line 2 cut short (a syntax error), line 5 a bad date (a validation error) */
	lines[1][40] = '\0';
	char *l5 = replace(lines[4], "2025-01-05T00:00:00Z", "2025-01-35T00:00:00Z");
	free(lines[4]);
	lines[4] = l5;
	char *text = jsonl(lines, 6);
	struct kx_problems p;
	kx_problems_init(&p);
	refused(text, strlen(text), NULL, &p, "JSON Lines with bad lines 2 and 5");
	const struct kx_problem *q2 = expect_problem(&p, "", "json-syntax", "JSON Lines: line 2's syntax error");
	if (q2)
		ok(q2->line == 2 && q2->col == 41, "line 2's error is at 2:41 (got %u:%u)", q2->line, q2->col);
	const struct kx_problem *q5 = expect_problem(&p, "/run/spec/observedAt", "timestamp", "JSON Lines: line 5's bad date");
	if (q5)
		ok(q5->line == 5, "line 5's problem is on line 5 (got %u)", q5->line);
	bool only = true;
	for (size_t i = 0; i < p.len; i++)
		only = only && (p.v[i].line == 2 || p.v[i].line == 5);
	if (!ok(only && p.len == 2, "no problem on the good lines"))
		dump_problems(&p);
	kx_problems_release(&p);
	free(text);

	/* the first line broken too: every line is still its own JSON text */
	lines[0][30] = '\0';
	text = jsonl(lines, 6);
	refused(text, strlen(text), NULL, &p, "JSON Lines with bad lines 1, 2 and 5");
	bool l1 = false, l2 = false, l5b = false;
	for (size_t i = 0; i < p.len; i++) {
		l1 |= p.v[i].line == 1;
		l2 |= p.v[i].line == 2;
		l5b |= p.v[i].line == 5;
	}
	if (!ok(l1 && l2 && l5b, "JSON Lines whose first line is cut: lines 1, 2 and 5 all reported"))
		dump_problems(&p);
	kx_problems_release(&p);
	free(text);
	for (int i = 0; i < 6; i++)
		free(lines[i]);
}

/* kx_manifest_check on a tree an importer built */
static void check_tree(void)
{
	struct kx_arena *a = kx_arena_new();
	struct kx_json *m = tm_base(a);
	tm_fix(a, m);
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_manifest out;
	ok(kx_manifest_check(a, m, &out, &p) == 0 && p.len == 0 && out.doc[KX_DOC_RUN] != NULL,
	   "kx_manifest_check accepts a built tree");
	struct kx_json *arr = kx_json_new(a, KX_JSON_ARRAY);
	ok(kx_manifest_check(a, arr, &out, &p) == -EINVAL && find_problem(&p, "", "type"), "a manifest that is an array: type at ''");
	kx_problems_release(&p);
	kx_arena_free(a);
}

/* ---- time and units --------------------------------------------------------------------------- */

static void times(void)
{
	static const struct {
		const char *s;
		int64_t ns;
	} good[] = {
		{ "1970-01-01T00:00:00Z", 0 },
		{ "2024-11-22T17:44:03.000Z", 1732297443000000000LL },
		{ "2024-11-22T19:44:03.000+02:00", 1732297443000000000LL },
		{ "2024-11-22T12:14:03-05:30", 1732297443000000000LL },
		{ "2024-11-22T17:44:03.5Z", 1732297443500000000LL },
		{ "2024-11-22T17:44:03.123456789Z", 1732297443123456789LL },
		{ "2024-02-29T00:00:00Z", 1709164800000000000LL },
		{ "2000-02-29T00:00:00Z", 951782400000000000LL },
		{ "1969-12-31T23:59:59Z", -1000000000LL },
		{ "2016-12-31T23:59:60Z", 1483228799000000000LL },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(good); i++) {
		int64_t ns = 7;
		int r = kx_time_parse(good[i].s, &ns);
		if (!ok(r == 0 && ns == good[i].ns, "time %s = %lld ns", good[i].s, (long long)good[i].ns))
			diag("  got %d, %lld", r, (long long)ns);
	}
	static const char *const bad[] = {
		"2024-11-22T17:44:03", "2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z",
		"2024-04-31T00:00:00Z", "2024-11-22T24:00:00Z", "2024-11-22T23:60:00Z", "2024-11-22T23:59:61Z",
		"2024-00-10T00:00:00Z", "2024-11-00T00:00:00Z", "2024-11-22T17:44:03+24:00", "2024-11-22T17:44:03+02:60",
		"2024-11-22T17:44:03+0200", "2024-11-22T17:44:03.Z", "2024-11-22X17:44:03Z", "", "2024-11-22",
		"2024-11-22T17:44:03ZZ", "2024-1-22T17:44:03Z", "+2024-11-22T17:44:03Z",
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(bad); i++) {
		int64_t ns = 7;
		ok(kx_time_parse(bad[i], &ns) == -EINVAL && ns == 7, "time '%s' is refused, output untouched", bad[i]);
	}
	/* instants a 64-bit count of nanoseconds cannot hold (before 1677-09-21, after 2262-04-11):
	 * refused, or at least given back as they were written, never wrapped around */
	static const char *const far[] = { "2262-04-12T00:00:00Z", "4050-01-02T05:04:05.123456789+02:00",
					   "9999-12-31T23:59:59Z", "1677-09-21T00:00:00Z", "0000-01-01T00:00:00Z" };
	for (size_t i = 0; i < KX_ARRAY_SIZE(far); i++) {
		int64_t ns = 7;
		char back[40] = "";
		int r = kx_time_parse(far[i], &ns);
		if (r == 0)
			kx_time_format(ns, back);
		if (!ok(r == -EINVAL || strncmp(back, far[i], 19) == 0, "time %s: refused, or not wrapped around", far[i]))
			diag("  parsed as %lld ns = %s", (long long)ns, back);
	}
	int64_t edge = 0;
	ok(kx_time_parse("2262-04-11T23:47:16.854775807Z", &edge) == 0 && edge == INT64_MAX, "the last representable instant parses");
	ok(kx_time_parse("1677-09-21T00:12:43.145224192Z", &edge) == 0 && edge == INT64_MIN, "the first representable instant parses");
	/* format, and the round trip (millisecond precision) */
	char out[40];
	kx_time_format(1732297443000000000LL, out);
	is_str(out, "2024-11-22T17:44:03.000Z", "format 1732297443 s");
	kx_time_format(-1, out);
	is_str(out, "1969-12-31T23:59:59.999Z", "format -1 ns (before the epoch rounds down)");
	kx_time_format(951782400123000000LL, out);
	is_str(out, "2000-02-29T00:00:00.123Z", "format a leap day");
	int64_t samples[] = { 0, 1, 86399999000000LL, 1732297443123000000LL, -86400000000000LL, 4102444799999000000LL,
			      -2208988800000000000LL };
	bool round = true;
	for (size_t i = 0; i < KX_ARRAY_SIZE(samples); i++) {
		int64_t back = 0;
		kx_time_format(samples[i], out);
		int64_t want = samples[i] - ((samples[i] % 1000000 + 1000000) % 1000000);
		if (kx_time_parse(out, &back) != 0 || back != want) {
			round = false;
			diag("  %lld -> %s -> %lld", (long long)samples[i], out, (long long)back);
		}
	}
	ok(round, "kx_time_format then kx_time_parse gives the instant back (to the millisecond)");
	/* every day of 1999..2004 round-trips (month lengths, leap years) */
	bool days = true;
	for (int64_t d = 10592; d < 12784 && days; d++) {
		int64_t ns = d * 86400 * 1000000000LL + 45296789000000LL, back;
		kx_time_format(ns, out);
		days = kx_time_parse(out, &back) == 0 && back == ns;
		if (!days)
			diag("  day %lld: %s", (long long)d, out);
	}
	ok(days, "every day from 1999 to 2004 round-trips");
}

static void units(void)
{
	static const struct {
		const char *unit, *metric;
		double factor;
	} known[] = {
		{ "ns", "latency", 1 },     { "us", "latency", 1e3 },         { "ms", "latency", 1e6 },
		{ "s", "latency", 1e9 },    { "B", "memory", 1 },             { "KB", "memory", 1e3 },
		{ "MB", "memory", 1e6 },    { "GB", "memory", 1e9 },          { "KiB", "memory", 1024 },
		{ "MiB", "memory", 1048576 }, { "GiB", "memory", 1073741824.0 }, { "FLOP/s", "throughput", 1 },
		{ "GFLOP/s", "throughput", 1e9 }, { "TFLOP/s", "throughput", 1e12 },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(known); i++) {
		double f = 0;
		const char *m = kx_unit_metric(known[i].unit, &f);
		ok(m && strcmp(m, known[i].metric) == 0 && f == known[i].factor, "unit %s measures %s (x%g)", known[i].unit,
		   known[i].metric, known[i].factor);
	}
	static const char *const more[] = { "B/s", "GB/s", "count", "ratio", "%", "W", "MHz", "C" };
	for (size_t i = 0; i < KX_ARRAY_SIZE(more); i++)
		ok(kx_unit_metric(more[i], NULL) != NULL, "unit %s is known", more[i]);
	static const char *const unknown[] = { "furlong", "NS", "Ms", "mb", "", "ms " };
	for (size_t i = 0; i < KX_ARRAY_SIZE(unknown); i++)
		ok(kx_unit_metric(unknown[i], NULL) == NULL, "unit '%s' is unknown", unknown[i]);
}

/* A workload's name text is bounded (rule length): at the limit accepted, one byte past refused
 * with the pointer of the part that makes it long. Parameters are bounded too (below), so only a
 * long dtype can reach it. */
static void workload_text_limit(void)
{
	/* the base workload's text without its dtype, "hidden4096-tokens16384", is 22 bytes; "-<dtype>"
	 * adds 1 + L */
	size_t base = 22 + 1;
	for (int past = 0; past <= 1; past++) {
		struct kx_arena *a = kx_arena_new();
		struct kx_json *m = tm_base(a);
		size_t n = KX_WORKLOAD_TEXT_MAX - base + (size_t)past;
		char *dtype = malloc(n + 1);
		memset(dtype, 'd', n);
		dtype[n] = '\0';
		tm_set_str(a, m, "/workload/spec", "dtype", dtype);
		tm_fix(a, m);
		char *text = tm_text(m, true);
		struct kx_problems p;
		kx_problems_init(&p);
		struct kx_manifest_file *f = NULL;
		if (!past) {
			int r = parse(text, strlen(text), NULL, &f, &p);
			if (!ok(r == 0, "a workload name of exactly %u bytes is accepted", KX_WORKLOAD_TEXT_MAX))
				dump_problems(&p);
			kx_manifest_file_free(f);
		} else {
			refused(text, strlen(text), NULL, &p, "a workload name one byte over the limit");
			const struct kx_problem *q = expect_problem(&p, "/workload/spec/dtype", "length", "one byte over");
			ok(q && strstr(q->message, "65537 bytes, over the limit of 65536"), "the message says both sizes (%s)",
			   q ? q->message : "");
			ok(p.len == 1, "and nothing else is reported (%zu problems)", p.len);
		}
		kx_problems_release(&p);
		free(text);
		free(dtype);
		kx_arena_free(a);
	}
}

/* SPEC §2 bounds: parameters per workload, a name's bytes, a parameter value's bytes. At each
 * limit accepted; one past it refused with its own rule, the pointer and the limit. */
static void name_bounds(void)
{
	char big[KX_NAME_TEXT_MAX + 2];
	for (int past = 0; past <= 1; past++) {
		size_t n = KX_NAME_TEXT_MAX + (size_t)past;
		memset(big, 'n', n);
		big[n] = '\0';
		static const struct {
			const char *what, *at, *key, *rule, *ptr;
		} cases[] = {
			{ "an implementation name", "/implementation/spec", "name", "name-length", "/implementation/spec/name" },
			{ "a GPU product", "/environment/spec/hardware", "product", "name-length", "/environment/spec/hardware/product" },
			{ "a form factor", "/environment/spec/hardware", "formFactor", "name-length", "/environment/spec/hardware/formFactor" },
			{ "a parameter value", "/workload/spec/parameters", "label", "value-length", "/workload/spec/parameters/label" },
		};
		for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
			struct kx_arena *a = kx_arena_new();
			struct kx_json *m = tm_base(a);
			tm_set_str(a, m, cases[i].at, cases[i].key, big);
			tm_fix(a, m);
			char *text = tm_text(m, true);
			struct kx_problems p;
			kx_problems_init(&p);
			struct kx_manifest_file *f = NULL;
			if (!past) {
				ok(parse(text, strlen(text), NULL, &f, &p) == 0, "%s of %zu bytes is accepted", cases[i].what, n);
				kx_manifest_file_free(f);
			} else {
				refused(text, strlen(text), NULL, &p, cases[i].what);
				const struct kx_problem *q = expect_problem(&p, cases[i].ptr, cases[i].rule, cases[i].what);
				ok(q && strstr(q->message, "257 bytes, over the limit of 256"), "%s: the message gives the limit (%s)",
				   cases[i].what, q ? q->message : "");
			}
			kx_problems_release(&p);
			free(text);
			kx_arena_free(a);
		}
		/* a parameter name, and the count of parameters */
		struct kx_arena *a = kx_arena_new();
		struct kx_json *m = tm_base(a);
		tm_set_str(a, m, "/workload/spec/parameters", big, "x");
		for (int k = 0; k < KX_PARAMS_MAX - 3 + past; k++) { /* the base has hidden and tokens */
			char key[16];
			snprintf(key, sizeof(key), "p%d", k);
			tm_set_str(a, m, "/workload/spec/parameters", key, "1");
		}
		tm_fix(a, m);
		char *text = tm_text(m, true);
		struct kx_problems p;
		kx_problems_init(&p);
		struct kx_manifest_file *f = NULL;
		if (!past) {
			if (!ok(parse(text, strlen(text), NULL, &f, &p) == 0, "%u parameters, one named with %zu bytes: accepted",
				KX_PARAMS_MAX, strlen(big)))
				dump_problems(&p);
			kx_manifest_file_free(f);
		} else {
			refused(text, strlen(text), NULL, &p, "65 parameters, one with a 257-byte name");
			const struct kx_problem *q = expect_problem(&p, "/workload/spec/parameters", "parameters", "65 parameters");
			ok(q && strstr(q->message, "65 parameters, over the limit of 64"), "the count and the limit (%s)",
			   q ? q->message : "");
			char ptr[KX_NAME_TEXT_MAX + 64];
			snprintf(ptr, sizeof(ptr), "/workload/spec/parameters/%s", big);
			expect_problem(&p, ptr, "name-length", "a 257-byte parameter name");
		}
		kx_problems_release(&p);
		free(text);
		kx_arena_free(a);
	}
}

/* SPEC §2: an observedAt more than a day after now is refused (rule future); within a day, kept. */
static void future_times(void)
{
	char when[40];
	struct kx_problems p;
	for (int far = 0; far <= 1; far++) {
		int64_t ns = kx_now_ns() + (far ? 86400 + 3600 : 86400 - 3600) * 1000000000ll;
		time_t sec = (time_t)(ns / 1000000000);
		struct tm tm;
		gmtime_r(&sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		struct kx_arena *a = kx_arena_new();
		struct kx_json *m = tm_build(a, &(struct tm_opts){ .observed = when });
		char *text = tm_text(m, true);
		kx_problems_init(&p);
		struct kx_manifest_file *f = NULL;
		if (!far) {
			ok(parse(text, strlen(text), NULL, &f, &p) == 0, "observed 23 h from now (%s): accepted", when);
			kx_manifest_file_free(f);
		} else {
			refused(text, strlen(text), NULL, &p, "observed 25 h from now");
			expect_problem(&p, "/run/spec/observedAt", "future", "observed 25 h from now");
		}
		kx_problems_release(&p);
		free(text);
		kx_arena_free(a);
	}
}

/* ---- signatures (SPEC §10) ------------------------------------------------------------------- */

static void signatures(void)
{
	struct kx_buf b = { 0 };
	char dir[] = "/tmp/kx-test-manifest-sign.XXXXXX", k1[64], p1[64], k2[64], p2[64], err[256];
	struct kx_digest id;
	struct kx_signer *s1 = NULL, *s2 = NULL;
	if (!ok(read_data("fixtures/flce-forward-a100.manifest.json", &b) && mkdtemp(dir), "the fixture and a scratch directory"))
		return;
	snprintf(k1, sizeof(k1), "%s/a.key", dir);
	snprintf(p1, sizeof(p1), "%s/a.pub", dir);
	snprintf(k2, sizeof(k2), "%s/b.key", dir);
	snprintf(p2, sizeof(p2), "%s/b.pub", dir);
	if (!ok(kx_key_generate(k1, p1, &id, err, sizeof(err)) == 0 && kx_key_generate(k2, p2, &id, err, sizeof(err)) == 0 &&
		   kx_signer_open(k1, &s1, err, sizeof(err)) == 0 && kx_signer_open(k2, &s2, err, sizeof(err)) == 0,
	   "two signing keys"))
		goto out;
	const char *run = "sha256:b3b20f4a454b2a9a71a2c91dea53d4cb06282e6d0ef2e64b450eb134df0002fe";
	char a[512], c[512], arr[1200];
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_manifest_file *f = NULL;

	tm_signature_json(s1, run, "ed25519", false, a, sizeof(a));
	tm_signature_json(s2, run, "ed25519", false, c, sizeof(c));
	snprintf(arr, sizeof(arr), "[%s, %s]", a, c);
	char *t = tm_with_signatures(&b, arr);
	int r = parse(t, strlen(t), NULL, &f, &p);
	struct kx_digest want;
	kx_key_id(kx_signer_public(s2), &want);
	ok(r == 0 && f && f->v[0].nsigs == 2 && kx_digest_equal(&f->v[0].sigs[1].key_id, &want),
	   "two keys' signatures of the run digest: valid, both kept in order");
	if (r < 0)
		dump_problems(&p);
	kx_manifest_file_free(f);
	f = NULL;
	free(t);

	static const struct {
		const char *what, *pointer;
	} bad[] = {
		{ "one bit of the signature flipped", "/signatures/0/value" },
		{ "a signature of another run's digest", "/signatures/0/value" },
		{ "the keyId of another key", "/signatures/0/keyId" },
		{ "an algorithm other than ed25519", "/signatures/0/algorithm" },
		{ "the same key twice", "/signatures/1/keyId" },
		{ "a value that is not base64 of 64 bytes", "/signatures/0/value" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		switch (i) {
		case 0: tm_signature_json(s1, run, "ed25519", true, a, sizeof(a)); snprintf(arr, sizeof(arr), "[%s]", a); break;
		case 1:
			tm_signature_json(s1, "sha256:272e401936bf2f8f5c1e0c6ad0a5b0a3c6b9d2ee8b1f0e7a6d5c4b3a29180706", "ed25519",
				       false, a, sizeof(a));
			snprintf(arr, sizeof(arr), "[%s]", a);
			break;
		case 2: {
			tm_signature_json(s1, run, "ed25519", false, a, sizeof(a));
			char mine[KX_DIGEST_STR_MAX], other[KX_DIGEST_STR_MAX];
			struct kx_digest d1;
			kx_key_id(kx_signer_public(s1), &d1);
			kx_digest_format(&d1, mine);
			kx_digest_format(&want, other); /* s2's id on s1's key */
			char *x = replace(a, mine, other);
			snprintf(arr, sizeof(arr), "[%s]", x);
			free(x);
			break;
		}
		case 3: tm_signature_json(s1, run, "rsa", false, a, sizeof(a)); snprintf(arr, sizeof(arr), "[%s]", a); break;
		case 4: tm_signature_json(s1, run, "ed25519", false, a, sizeof(a)); snprintf(arr, sizeof(arr), "[%s, %s]", a, a); break;
		case 5: {
			tm_signature_json(s1, run, "ed25519", false, a, sizeof(a));
			char *v = strstr(a, "\"value\": \"") + 10;
			memcpy(v, "AAAA", 4);
			v[4] = '"';
			v[5] = '}';
			v[6] = '\0';
			snprintf(arr, sizeof(arr), "[%s]", a);
			break;
		}
		}
		t = tm_with_signatures(&b, arr);
		kx_problems_release(&p);
		kx_problems_init(&p);
		refused(t, strlen(t), NULL, &p, bad[i].what);
		expect_problem(&p, bad[i].pointer, "signature", bad[i].what);
		free(t);
	}
	t = tm_with_signatures(&b, "{}");
	kx_problems_release(&p);
	kx_problems_init(&p);
	refused(t, strlen(t), NULL, &p, "signatures that are not an array");
	expect_problem(&p, "/signatures", "type", "signatures that are not an array");
	free(t);
	kx_problems_release(&p);
out:
	kx_signer_free(s1);
	kx_signer_free(s2);
	unlink(k1), unlink(p1), unlink(k2), unlink(p2), rmdir(dir);
	kx_buf_release(&b);
}

int main(void)
{
	valid_fixture();
	valid_handmade();
	valid_json_lines();
	valid_layouts();
	valid_variants();
	valid_metrics();
	syntax_errors();
	encoding_errors();
	duplicate_keys();
	non_finite();
	depth_and_size();
	rule_cases();
	rule_positions();
	collect_every_problem();
	json_lines_bad();
	check_tree();
	times();
	units();
	workload_text_limit();
	name_bounds();
	future_times();
	signatures();
	return tap_done();
}
