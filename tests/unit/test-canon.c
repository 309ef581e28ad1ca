// SPDX-License-Identifier: MIT
/*
 * The canon module: the strict parser, JCS against the RFC 8785 reference vectors
 * (tests/data/jcs), the pretty form, and the digests of the published fixture record.
 */
#include "kx/canon.h"
#include "tap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* tests/data of the source tree (KX_SOURCE_ROOT, set by tests/meson.build) */
static const char *data_dir(void)
{
	static char dir[1024];
	const char *s = getenv("KX_SOURCE_ROOT");
	snprintf(dir, sizeof(dir), "%s/tests/data", s && *s ? s : ".");
	return dir;
}

static struct kx_json *parse(struct kx_arena *a, const char *text, struct kx_json_error *e)
{
	struct kx_json *v = NULL;
	if (kx_json_parse(a, text, strlen(text), 0, &v, NULL, e) < 0)
		return NULL;
	return v;
}

static void jcs_vectors(void)
{
	static const char *names[] = { "arrays", "french", "structures", "unicode", "values", "weird" };
	for (size_t i = 0; i < KX_ARRAY_SIZE(names); i++) {
		char in[1200], out[1200];
		snprintf(in, sizeof(in), "%s/jcs/input/%s.json", data_dir(), names[i]);
		snprintf(out, sizeof(out), "%s/jcs/output/%s.json", data_dir(), names[i]);
		struct kx_buf ib = { 0 }, ob = { 0 }, got = { 0 };
		if (!ok(kx_read_file(in, 0, &ib) == 0 && kx_read_file(out, 0, &ob) == 0,
			"read jcs vector %s", names[i]))
			continue;
		struct kx_arena *a = kx_arena_new();
		struct kx_json *v = NULL;
		struct kx_json_error e;
		int r = kx_json_parse(a, ib.ptr, ib.len, 0, &v, NULL, &e);
		if (r == 0)
			r = kx_jcs_write(v, &got);
		ok(r == 0 && got.len == ob.len && memcmp(got.ptr, ob.ptr, ob.len) == 0,
		   "jcs vector %s is byte-exact", names[i]);
		kx_arena_free(a);
		kx_buf_release(&ib);
		kx_buf_release(&ob);
		kx_buf_release(&got);
	}
}

static void fixture_digests(void)
{
	char path[1200];
	snprintf(path, sizeof(path), "%s/fixtures/flce-forward-a100.manifest.json", data_dir());
	struct kx_buf b = { 0 };
	if (!ok(kx_read_file(path, 0, &b) == 0, "read the fixture"))
		return;
	struct kx_arena *a = kx_arena_new();
	struct kx_json_error e;
	struct kx_json *m = parse(a, b.ptr, &e);
	ok(m != NULL, "fixture parses");
	static const struct {
		const char *member, *want;
	} want[] = {
		{ "protocol", "sha256:a79eaf4df66c97c6adc1fb2d09df78682155d1ea86652ae0b70199875bde7747" },
		{ "environment", "sha256:90c9e2764222f592477cfccf3373519add5a1b881563956ad058c4f99e41b6b9" },
		{ "run", "sha256:b3b20f4a454b2a9a71a2c91dea53d4cb06282e6d0ef2e64b450eb134df0002fe" },
	};
	for (size_t i = 0; m && i < KX_ARRAY_SIZE(want); i++) {
		struct kx_digest d;
		char s[KX_DIGEST_STR_MAX] = "";
		if (kx_digest_document(kx_json_get(m, want[i].member), &d) == 0)
			kx_digest_format(&d, s);
		is_str(s, want[i].want, want[i].member);
	}
	/* metadata is not hashed */
	struct kx_json *env = kx_json_get(m, "environment");
	struct kx_digest d1, d2;
	kx_digest_document(env, &d1);
	kx_json_set_string(a, kx_json_get(env, "metadata"), "title", "changed");
	kx_digest_document(env, &d2);
	ok(kx_digest_equal(&d1, &d2), "changing metadata keeps the digest");
	kx_json_set_string(a, kx_json_get(kx_json_get(env, "spec"), "hardware"), "vendor", "NVIDIA");
	kx_digest_document(env, &d2);
	ok(!kx_digest_equal(&d1, &d2), "changing spec changes the digest");
	kx_arena_free(a);
	kx_buf_release(&b);
}

static void expect_error(const char *text, const char *rule, unsigned line, unsigned col, const char *what)
{
	struct kx_arena *a = kx_arena_new();
	struct kx_json_error e = { 0 };
	struct kx_json *v = NULL;
	int r = kx_json_parse(a, text, strlen(text), 0, &v, NULL, &e);
	int good = r == -EINVAL && e.rule && strcmp(e.rule, rule) == 0 && e.line == line && e.col == col;
	if (!ok(good, "refused: %s", what))
		diag("r=%d rule=%s at %u:%u: %s", r, e.rule ? e.rule : "-", e.line, e.col, e.message);
	kx_arena_free(a);
}

static void parser(void)
{
	expect_error("[01]", "json-syntax", 1, 3, "leading zero");
	expect_error("[1.]", "json-syntax", 1, 4, "digit missing after '.'");
	expect_error("{\n  \"a\": 1,\n  \"b\": tru\n}", "json-syntax", 3, 8, "bad literal, line and column");
	expect_error("[\"\\ud800\"]", "utf8", 1, 3, "lone surrogate");
	expect_error("[\"\xff\"]", "utf8", 1, 3, "invalid UTF-8");
	expect_error("[\"\xc0\xaf\"]", "utf8", 1, 3, "overlong UTF-8");
	expect_error("{\"a\":1}x", "json-syntax", 1, 8, "trailing garbage");
	expect_error("[\"a\nb\"]", "json-syntax", 1, 4, "raw newline in string");
	expect_error("", "json-syntax", 1, 1, "empty input");
	char deep[200];
	memset(deep, '[', 65);
	memset(deep + 65, ']', 65);
	deep[130] = '\0';
	expect_error(deep, "depth", 1, 65, "nesting deeper than 64");
	memset(deep, '[', 64);
	memset(deep + 64, ']', 64);
	deep[128] = '\0';
	struct kx_arena *a = kx_arena_new();
	struct kx_json_error e;
	ok(parse(a, deep, &e) != NULL, "nesting of exactly 64 is accepted");

	/* what the parser keeps for the linter */
	struct kx_json *v = parse(a, "{\"a\": 1, \"b\": {\"x\": 1e999, \"x\": 2}, \"a\": 3}", &e);
	struct kx_problems p;
	kx_problems_init(&p);
	ok(v && kx_json_lint(v, "", &p) == 3, "lint finds two duplicates and one non-finite number");
	int seen = 0;
	for (size_t i = 0; i < p.len; i++) {
		seen += strcmp(p.v[i].pointer, "/a") == 0 && strcmp(p.v[i].rule, "duplicate-key") == 0;
		seen += strcmp(p.v[i].pointer, "/b/x") == 0 && strcmp(p.v[i].rule, "duplicate-key") == 0;
		seen += strcmp(p.v[i].pointer, "/b/x") == 0 && strcmp(p.v[i].rule, "non-finite") == 0;
	}
	ok(seen == 3, "each problem has its JSON pointer");
	kx_problems_release(&p);

	struct kx_buf out = { 0 };
	v = parse(a, "{\"k\":\"a\\u0000b\"}", &e);
	ok(v && kx_jcs_write(v, &out) == 0 && out.len == 16 && memcmp(out.ptr, "{\"k\":\"a\\u0000b\"}", 16) == 0,
	   "an escaped NUL survives parse and JCS");
	kx_buf_reset(&out);
	v = parse(a, "{\"a\":1,\"a\":1}", &e);
	ok(v && kx_jcs_write(v, &out) == -EINVAL, "JCS refuses duplicate keys");

	/* UTF-16 ordering: U+1F602 (surrogates D83D DE02) sorts before U+FB33 */
	kx_buf_reset(&out);
	v = parse(a, "{\"\\ufb33\":1,\"\\ud83d\\ude02\":2}", &e);
	ok(v && kx_jcs_write(v, &out) == 0 && strcmp(out.ptr, "{\"\xf0\x9f\x98\x82\":2,\"\xef\xac\xb3\":1}") == 0,
	   "keys sort by UTF-16 code units");

	kx_buf_reset(&out);
	v = parse(a, "{\"b\":[1,{}],\"a\":{\"z\":[],\"y\":true}}", &e);
	ok(v && kx_json_write_pretty(v, &out) == 0 &&
		   strcmp(out.ptr, "{\n  \"a\": {\n    \"y\": true,\n    \"z\": []\n  },\n  \"b\": [\n    1,\n    {}\n  ]\n}\n") == 0,
	   "pretty form is stable and sorted");
	size_t end = 0;
	v = NULL;
	const char *jl = "{\"a\":1}\n{\"a\":2}\n";
	ok(kx_json_parse(a, jl, strlen(jl), 0, &v, &end, &e) == 0 && end == 8, "JSON Lines: first value ends at the next line");

	struct kx_digest d;
	ok(kx_digest_parse("sha256:A79EAF4DF66C97C6ADC1FB2D09DF78682155D1EA86652AE0B70199875BDE7747", 71, &d) == -EINVAL,
	   "uppercase digests are malformed");
	ok(kx_digest_parse("sha1:a79eaf4d", 13, &d) == -EINVAL, "other algorithms are malformed");
	ok(kx_json_pointer(v, "/a") && kx_json_pointer(v, "/a")->number == 1, "json pointer");
	kx_buf_release(&out);
	kx_arena_free(a);
}

int main(void)
{
	jcs_vectors();
	fixture_digests();
	parser();
	return tap_done();
}
