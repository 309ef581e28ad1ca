// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the strict JSON parser, the linter, JCS and the pretty form on arbitrary bytes.
 * Properties, for every input the parser accepts:
 *   - an error names a rule and a position inside the input (line >= 1, col >= 1, offset <= size);
 *   - when the linter finds nothing, JCS succeeds; its output re-parses to an equal value and
 *     re-canonicalizes to the same bytes (JCS is a fixed point); the pretty form re-parses to the
 *     same JCS bytes; the digest of the value's JCS is the same either way;
 *   - when the linter finds duplicate keys or non-finite numbers, JCS refuses (-EINVAL);
 *   - reading the input as a sequence of JSON texts (JSON Lines, `kindex canon`) always makes
 *     progress and ends.
 */
#include "fuzz.h"
#include "kx/canon.h"

#include <errno.h>
#include <string.h>

static void check_error(const struct kx_json_error *e, size_t size)
{
	fuzz_assert(e->rule && (strcmp(e->rule, "json-syntax") == 0 || strcmp(e->rule, "utf8") == 0 ||
				strcmp(e->rule, "depth") == 0),
		    "rule '%s'", e->rule ? e->rule : "(null)");
	fuzz_assert(e->line >= 1 && e->col >= 1 && e->offset <= size, "position %u:%u offset %zu of %zu", e->line,
		    e->col, e->offset, size);
	fuzz_assert(e->message[0] != '\0', "an error without a message");
}

static void value(struct kx_arena *a, const struct kx_json *v)
{
	struct kx_problems p;
	kx_problems_init(&p);
	int lint = kx_json_lint(v, "", &p);
	fuzz_assert(lint >= 0 && (size_t)lint == p.len, "lint returned %d with %zu problems", lint, p.len);
	for (size_t i = 0; i < p.len; i++)
		fuzz_assert(p.v[i].pointer[0] == '\0' || p.v[i].pointer[0] == '/', "pointer '%s'", p.v[i].pointer);
	struct kx_buf jcs = { 0 }, again = { 0 }, pretty = { 0 }, pj = { 0 };
	int r = kx_jcs_write(v, &jcs);
	if (p.len) {
		fuzz_assert(r == -EINVAL, "JCS of a value with %zu lint problems returned %d", p.len, r);
		goto out;
	}
	fuzz_assert(r == 0, "JCS of a lint-clean value failed: %d", r);
	struct kx_json *w = NULL;
	struct kx_json_error e;
	r = kx_json_parse(a, jcs.ptr, jcs.len, 1u << 20, &w, NULL, &e);
	fuzz_assert(r == 0, "JCS output does not parse: %s", e.message);
	fuzz_assert(kx_json_equal(v, w), "JCS output parses to another value");
	fuzz_assert(kx_jcs_write(w, &again) == 0 && again.len == jcs.len && memcmp(again.ptr, jcs.ptr, jcs.len) == 0,
		    "JCS is not a fixed point");
	fuzz_assert(kx_json_write_pretty(v, &pretty) == 0 && pretty.len && pretty.ptr[pretty.len - 1] == '\n',
		    "pretty form failed");
	struct kx_json *pv = NULL;
	r = kx_json_parse(a, pretty.ptr, pretty.len, 1u << 20, &pv, NULL, &e);
	fuzz_assert(r == 0, "pretty output does not parse: %s", e.message);
	fuzz_assert(kx_jcs_write(pv, &pj) == 0 && pj.len == jcs.len && memcmp(pj.ptr, jcs.ptr, jcs.len) == 0,
		    "pretty output re-canonicalizes to other bytes");
	if (v->type == KX_JSON_OBJECT) {
		struct kx_digest d1, d2;
		fuzz_assert(kx_digest_document(v, &d1) == 0 && kx_digest_document(w, &d2) == 0 && kx_digest_equal(&d1, &d2),
			    "the digest changes across a JCS round trip");
	}
out:
	kx_buf_release(&jcs);
	kx_buf_release(&again);
	kx_buf_release(&pretty);
	kx_buf_release(&pj);
	kx_problems_release(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 20)
		return 0;
	const char *text = (const char *)data;
	struct kx_arena *a = kx_arena_new();
	struct kx_json *v = NULL;
	struct kx_json_error e;
	memset(&e, 0, sizeof(e));
	int r = kx_json_parse(a, text, size, 0, &v, NULL, &e);
	if (r == 0)
		value(a, v);
	else {
		fuzz_assert(r == -EINVAL, "parse returned %d", r);
		check_error(&e, size);
	}
	/* as a sequence of texts */
	size_t pos = 0;
	for (int k = 0; pos < size && k < 64; k++) {
		size_t end = 0;
		struct kx_json *x = NULL;
		if (kx_json_parse(a, text + pos, size - pos, 8, &x, &end, &e) < 0) {
			check_error(&e, size - pos);
			break;
		}
		fuzz_assert(end > 0 && end <= size - pos, "no progress reading a sequence (end %zu)", end);
		pos += end;
	}
	kx_arena_free(a);
	return 0;
}
