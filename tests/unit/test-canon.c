// SPDX-License-Identifier: MIT
/*
 * The canon module: the strict parser, JCS against the RFC 8785 reference vectors
 * (tests/data/jcs), the pretty form, the digests of the published fixture record, and Ed25519
 * signatures (RFC 8032's first test vector, a key pair made and used, keys refused).
 */
#include "kx/canon.h"
#include "tap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static void unhex(const char *h, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sscanf(h + 2 * i, "%2hhx", &out[i]);
}

/* An EC P-256 key: PEM, but not Ed25519 */
static const char ec_key[] = "-----BEGIN PRIVATE KEY-----\n"
			     "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgZjzHSPa4zUGDoUz+\n"
			     "EFd4MadO6w3zjBsz/mI3kNob1F+hRANCAAQJUm0RZDDrZuvAOyvPdQTP3vbGDyqG\n"
			     "ZDmPxff5EvujqYdfp7LqxcP7Fpok4+ERSk/mM5++Bs3RIFiPVzc3Ji4N\n"
			     "-----END PRIVATE KEY-----\n";

static void signatures(void)
{
	/* RFC 8032 §7.1, TEST 1: the empty message */
	uint8_t pub[KX_ED25519_PUB_LEN], sig[KX_ED25519_SIG_LEN];
	unhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", pub, sizeof(pub));
	unhex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
	      "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
	      sig, sizeof(sig));
	ok(kx_verify(pub, "", 0, sig), "RFC 8032 test 1: its signature verifies");
	sig[10] ^= 0x04;
	ok(!kx_verify(pub, "", 0, sig), "with one bit flipped it does not");
	sig[10] ^= 0x04;
	ok(!kx_verify(pub, "x", 1, sig), "nor over another message");

	char dir[] = "/tmp/kx-test-sign.XXXXXX", priv[64], pubp[64], ec[64], err[512] = "";
	if (!ok(mkdtemp(dir) != NULL, "a scratch directory"))
		return;
	snprintf(priv, sizeof(priv), "%s/k", dir);
	snprintf(pubp, sizeof(pubp), "%s/k.pub", dir);
	snprintf(ec, sizeof(ec), "%s/ec", dir);
	struct kx_digest id, id2;
	ok(kx_key_generate(priv, pubp, &id, err, sizeof(err)) == 0, "a key pair is made (%s)", err);
	struct stat st;
	ok(stat(priv, &st) == 0 && (st.st_mode & 0777) == 0600, "the private key has mode 0600");
	ok(kx_key_generate(priv, pubp, &id2, err, sizeof(err)) == -EEXIST && strstr(err, priv),
	   "a second keygen to the same files is refused, naming the file (%s)", err);
	struct kx_signer *s = NULL;
	ok(kx_signer_open(priv, &s, err, sizeof(err)) == 0, "the private key opens (%s)", err);
	uint8_t raw[KX_ED25519_PUB_LEN];
	ok(kx_pubkey_read(pubp, raw, err, sizeof(err)) == 0 && s && memcmp(raw, kx_signer_public(s), sizeof(raw)) == 0,
	   "the public key file holds the private key's public half");
	kx_key_id(raw, &id2);
	ok(kx_digest_equal(&id, &id2), "the key id is sha256 of the 32 raw bytes");
	const char *msg = "sha256:272e401936bf2f8f5c1e0c6ad0a5b0a3c6b9d2ee8b1f0e7a6d5c4b3a2918070605";
	ok(s && kx_sign(s, msg, strlen(msg), sig) == 0 && kx_verify(raw, msg, strlen(msg), sig),
	   "a signature it makes verifies with the public key");
	char b64[KX_BASE64_LEN(KX_ED25519_SIG_LEN) + 1];
	uint8_t back[KX_ED25519_SIG_LEN];
	ok(kx_base64_encode(sig, sizeof(sig), b64) == 88 && kx_base64_decode(b64, 88, back, sizeof(back)) == 0 &&
		   memcmp(back, sig, sizeof(sig)) == 0,
	   "base64: 88 characters, and back");
	ok(kx_base64_decode(b64, 87, back, sizeof(back)) == -EINVAL && kx_base64_decode("!!!!", 4, back, 3) == -EINVAL,
	   "base64: a wrong length or alphabet is refused");
	kx_signer_free(s);
	s = NULL;

	chmod(priv, 0644);
	ok(kx_signer_open(priv, &s, err, sizeof(err)) == -EINVAL && strstr(err, "chmod 600"),
	   "a private key others may read is refused: %s", err);
	FILE *f = fopen(ec, "w");
	if (f) {
		fputs(ec_key, f);
		fclose(f);
	}
	chmod(ec, 0600);
	ok(kx_signer_open(ec, &s, err, sizeof(err)) == -EINVAL && strstr(err, "not Ed25519"),
	   "an EC key is refused: %s", err);
	ok(kx_pubkey_read(priv, raw, err, sizeof(err)) == -EINVAL && strstr(err, "not a PEM public key"),
	   "a private key where a public one is expected is refused: %s", err);
	unlink(priv);
	unlink(pubp);
	unlink(ec);
	rmdir(dir);
}

int main(void)
{
	jcs_vectors();
	fixture_digests();
	parser();
	signatures();
	return tap_done();
}
