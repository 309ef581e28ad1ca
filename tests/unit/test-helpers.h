/* SPDX-License-Identifier: MIT */
/*
 * Shared by the unit tests of the manifest, rank, store, render and ingest modules: a valid
 * manifest to start from (every document included, digests linked up) and small tools to change
 * one thing in it, re-link the digests, and print it the way a user would write it; lookups in a
 * problem list; scratch directories for stores; paths of the test data in the source tree.
 *
 * The manifest is edited as a tree (kx_json) and printed with the library's pretty printer, so a
 * test says "this field, this value" instead of carrying a page of JSON per case.
 */
#ifndef KX_TEST_HELPERS_H
#define KX_TEST_HELPERS_H

#include "kx/canon.h"
#include "kx/manifest.h"
#include "tap.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- data paths ------------------------------------------------------------------------------- */

__attribute__((unused)) static const char *source_root(void)
{
	const char *s = getenv("KX_SOURCE_ROOT");
	return s && *s ? s : ".";
}

/* Read tests/data/REL of the source tree; false (and nothing read) when it cannot be read, which
 * the caller reports as a failed test: the data is part of the repository. */
__attribute__((unused)) static bool read_data(const char *rel, struct kx_buf *out)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s/tests/data/%s", source_root(), rel);
	return kx_read_file(p, 0, out) == 0;
}

/* ---- a valid manifest, edited as a tree ------------------------------------------------------- */

#define TM_OBSERVED "2025-01-02T03:04:05.000Z"
#define TM_OBSERVED_NS 1735787045000000000LL

static const char tm_base_text[] =
	"{\n"
	"  \"run\": {\n"
	"    \"apiVersion\": \"kernelindex.dev/v1alpha1\",\n"
	"    \"kind\": \"BenchmarkRun\",\n"
	"    \"metadata\": { \"name\": \"test-run\", \"labels\": { \"team\": \"kernels\" } },\n"
	"    \"spec\": {\n"
	"      \"benchmark\": \"rms_norm/forward\",\n"
	"      \"status\": \"passed\",\n"
	"      \"observedAt\": \"" TM_OBSERVED "\",\n"
	"      \"timing\": { \"primaryStatistic\": \"median\", \"latencyNs\": { \"median\": 1000 } },\n"
	"      \"measurements\": [ { \"metric\": \"latency\", \"statistic\": \"p20\", \"unit\": \"ns\", \"value\": 990 } ],\n"
	"      \"protocolDigest\": \"sha256:0000000000000000000000000000000000000000000000000000000000000000\",\n"
	"      \"environmentDigest\": \"sha256:0000000000000000000000000000000000000000000000000000000000000000\",\n"
	"      \"workloadDigest\": \"sha256:0000000000000000000000000000000000000000000000000000000000000000\",\n"
	"      \"implementationDigest\": \"sha256:0000000000000000000000000000000000000000000000000000000000000000\"\n"
	"    }\n"
	"  },\n"
	"  \"protocol\": {\n"
	"    \"apiVersion\": \"kernelindex.dev/v1alpha1\",\n"
	"    \"kind\": \"BenchmarkProtocol\",\n"
	"    \"metadata\": { \"name\": \"test-protocol\" },\n"
	"    \"spec\": {\n"
	"      \"harness\": { \"name\": \"test-harness\" },\n"
	"      \"measurement\": { \"timer\": \"cuda_events\", \"primaryStatistic\": \"median\" },\n"
	"      \"comparability\": { \"family\": \"test_family\", \"notes\": \"unit tests\" }\n"
	"    }\n"
	"  },\n"
	"  \"environment\": {\n"
	"    \"apiVersion\": \"kernelindex.dev/v1alpha1\",\n"
	"    \"kind\": \"ExecutionEnvironment\",\n"
	"    \"metadata\": { \"name\": \"test-env\" },\n"
	"    \"spec\": {\n"
	"      \"hardware\": { \"vendor\": \"nvidia\", \"product\": \"NVIDIA A100\", \"formFactor\": \"SXM4-80GB\", \"architecture\": \"sm_80\" },\n"
	"      \"software\": {}\n"
	"    }\n"
	"  },\n"
	"  \"workload\": {\n"
	"    \"apiVersion\": \"kernelindex.dev/v1alpha1\",\n"
	"    \"kind\": \"Workload\",\n"
	"    \"metadata\": { \"name\": \"test-workload\" },\n"
	"    \"spec\": { \"parameters\": { \"tokens\": 16384, \"hidden\": 4096 }, \"dtype\": \"bf16\" }\n"
	"  },\n"
	"  \"implementation\": {\n"
	"    \"apiVersion\": \"kernelindex.dev/v1alpha1\",\n"
	"    \"kind\": \"Implementation\",\n"
	"    \"metadata\": { \"name\": \"test-impl\" },\n"
	"    \"spec\": { \"name\": \"liger\", \"version\": \"0.4.2\" }\n"
	"  }\n"
	"}\n";

/* Parse JSON text that the test itself wrote; aborts the test on a typo. */
__attribute__((unused)) static struct kx_json *tm_parse(struct kx_arena *a, const char *text)
{
	struct kx_json *v = NULL;
	struct kx_json_error e;
	if (kx_json_parse(a, text, strlen(text), 0, &v, NULL, &e) < 0) {
		printf("Bail out! test JSON does not parse: %u:%u: %s\n%s\n", e.line, e.col, e.message, text);
		exit(2);
	}
	return v;
}

__attribute__((unused)) static struct kx_json *tm_base(struct kx_arena *a)
{
	return tm_parse(a, tm_base_text);
}

__attribute__((unused)) static struct kx_json *tm_at(struct kx_json *root, const char *ptr)
{
	struct kx_json *v = kx_json_pointer(root, ptr);
	if (!v) {
		printf("Bail out! no %s in the test manifest\n", ptr);
		exit(2);
	}
	return v;
}

/* root[ptr][key] = the JSON value written as text ("\"passed\"", "5", "[1]") */
__attribute__((unused)) static void tm_set(struct kx_arena *a, struct kx_json *root, const char *ptr,
					   const char *key, const char *json)
{
	kx_json_set(a, tm_at(root, ptr), key, tm_parse(a, json));
}

__attribute__((unused)) static void tm_set_str(struct kx_arena *a, struct kx_json *root, const char *ptr,
					       const char *key, const char *s)
{
	kx_json_set_string(a, tm_at(root, ptr), key, s);
}

/* Remove obj[key] (its first member of that name) if present; true when something was removed.
 * Like kx_json_set, it clears the object's source text, which no longer describes it. */
__attribute__((unused)) static bool tm_remove(struct kx_json *obj, const char *key)
{
	if (!obj || obj->type != KX_JSON_OBJECT)
		return false;
	size_t n = strlen(key);
	for (size_t i = 0; i < obj->obj.len; i++) {
		struct kx_json_member *m = &obj->obj.v[i];
		if (m->key_len == n && memcmp(m->key, key, n) == 0) {
			obj->src = NULL;
			memmove(m, m + 1, (obj->obj.len - i - 1) * sizeof(*m));
			obj->obj.len--;
			return true;
		}
	}
	return false;
}

__attribute__((unused)) static void tm_del(struct kx_json *root, const char *ptr, const char *key)
{
	if (!tm_remove(tm_at(root, ptr), key)) {
		printf("Bail out! no %s/%s to remove\n", ptr, key);
		exit(2);
	}
}

/* Point the run's references at what the included documents hash to now. */
__attribute__((unused)) static void tm_fix(struct kx_arena *a, struct kx_json *root)
{
	static const char *const refs[][2] = {
		{ "protocol", "protocolDigest" },
		{ "environment", "environmentDigest" },
		{ "workload", "workloadDigest" },
		{ "implementation", "implementationDigest" },
	};
	struct kx_json *spec = kx_json_pointer(root, "/run/spec");
	for (size_t i = 0; spec && i < KX_ARRAY_SIZE(refs); i++) {
		struct kx_json *doc = kx_json_get(root, refs[i][0]);
		struct kx_digest d;
		char s[KX_DIGEST_STR_MAX];
		if (!doc || doc->type != KX_JSON_OBJECT || kx_digest_document(doc, &d) < 0)
			continue;
		kx_digest_format(&d, s);
		kx_json_set_string(a, spec, refs[i][1], s);
	}
}

/* The digest string of root[member], "" when it cannot be computed. */
__attribute__((unused)) static const char *tm_digest(struct kx_json *root, const char *member, char out[KX_DIGEST_STR_MAX])
{
	struct kx_digest d;
	out[0] = '\0';
	struct kx_json *doc = kx_json_get(root, member);
	if (doc && kx_digest_document(doc, &d) == 0)
		kx_digest_format(&d, out);
	return out;
}

/* The manifest as text: pretty (a file a user writes) or JCS (one JSON Lines line). malloc'd. */
__attribute__((unused)) static char *tm_text(const struct kx_json *root, bool pretty)
{
	struct kx_buf b = { 0 };
	int r = pretty ? kx_json_write_pretty(root, &b) : kx_jcs_write(root, &b);
	if (r < 0) {
		printf("Bail out! cannot print the test manifest: %d\n", r);
		exit(2);
	}
	return kx_buf_detach(&b, NULL);
}

/* A fresh valid manifest with the common knobs turned, as one JSON Lines line (malloc'd). */
struct tm_opts {
	const char *benchmark;   /* default rms_norm/forward */
	const char *impl;        /* implementation name, default liger */
	const char *observed;    /* default TM_OBSERVED */
	const char *median;      /* JSON number text, default 1000 */
	const char *status;      /* default passed */
	const char *family;      /* protocol family, default test_family */
	const char *params;      /* workload parameters (JSON object text) */
	const char *source, *external_id; /* sourceNative, when set */
	bool no_workload, no_impl;        /* leave the document out (the reference stays) */
};

__attribute__((unused)) static struct kx_json *tm_build(struct kx_arena *a, const struct tm_opts *o)
{
	struct kx_json *m = tm_base(a);
	if (o->benchmark)
		tm_set_str(a, m, "/run/spec", "benchmark", o->benchmark);
	if (o->impl)
		tm_set_str(a, m, "/implementation/spec", "name", o->impl);
	if (o->observed)
		tm_set_str(a, m, "/run/spec", "observedAt", o->observed);
	if (o->median) {
		tm_set(a, m, "/run/spec/timing/latencyNs", "median", o->median);
		/* the base's p20 (990) must not be above the median (rule quantile-order) */
		tm_set(a, m, "/run/spec/measurements/0", "value", o->median);
	}
	if (o->status)
		tm_set_str(a, m, "/run/spec", "status", o->status);
	if (o->family)
		tm_set_str(a, m, "/protocol/spec/comparability", "family", o->family);
	if (o->params)
		tm_set(a, m, "/workload/spec", "parameters", o->params);
	if (o->source) {
		char sn[2048];
		snprintf(sn, sizeof(sn), "{\"source\":\"%s\",\"externalId\":\"%s\"}", o->source,
			 o->external_id ? o->external_id : "");
		tm_set(a, m, "/run/spec", "sourceNative", sn);
	}
	tm_fix(a, m);
	if (o->no_workload)
		tm_remove(m, "workload");
	if (o->no_impl)
		tm_remove(m, "implementation");
	return m;
}

__attribute__((unused)) static char *tm_line(const struct tm_opts *o)
{
	struct kx_arena *a = kx_arena_new();
	char *s = tm_text(tm_build(a, o), false);
	kx_arena_free(a);
	return s;
}

/* ---- problems --------------------------------------------------------------------------------- */

__attribute__((unused)) static void dump_problems(const struct kx_problems *p)
{
	for (size_t i = 0; i < p->len; i++)
		diag("  problem %zu: %u:%u: '%s': %s: %s", i, p->v[i].line, p->v[i].col, p->v[i].pointer,
		     p->v[i].rule, p->v[i].message);
}

/* The first problem with this pointer (NULL: any) and rule, or NULL. */
__attribute__((unused)) static const struct kx_problem *find_problem(const struct kx_problems *p,
								     const char *pointer, const char *rule)
{
	for (size_t i = 0; i < p->len; i++)
		if ((!pointer || strcmp(p->v[i].pointer, pointer) == 0) && strcmp(p->v[i].rule, rule) == 0)
			return &p->v[i];
	return NULL;
}

/* ok() that the problem is there; prints the list when it is not. */
__attribute__((unused)) static const struct kx_problem *expect_problem(const struct kx_problems *p,
								       const char *pointer, const char *rule,
								       const char *what)
{
	const struct kx_problem *q = find_problem(p, pointer, rule);
	if (!ok(q != NULL, "%s: %s at '%s'", what, rule, pointer ? pointer : "*")) {
		diag("  %zu problems:", p->len);
		dump_problems(p);
	}
	return q;
}

/* ---- scratch directories ---------------------------------------------------------------------- */

__attribute__((unused)) static char *scratch_dir(const char *what)
{
	const char *tmp = getenv("TMPDIR");
	char *p;
	if (asprintf(&p, "%s/kx-%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", what) < 0 || !mkdtemp(p)) {
		printf("Bail out! cannot create a scratch directory\n");
		exit(2);
	}
	return p;
}

__attribute__((unused)) static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

__attribute__((unused)) static void scratch_remove(char *dir)
{
	if (dir)
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

/* ---- signatures (SPEC §10) ---- */

/* The fixture with `signatures: [sig]` added, sig given as JSON text (malloc'd). */
__attribute__((unused)) static char *tm_with_signatures(const struct kx_buf *fixture, const char *sigs)
{
	const char *end = strrchr(fixture->ptr, '}');
	size_t head = (size_t)(end - fixture->ptr);
	char *out = malloc(head + strlen(sigs) + 32);
	if (out)
		sprintf(out, "%.*s, \"signatures\": %s}\n", (int)head, fixture->ptr, sigs);
	return out;
}

/* {keyId, algorithm, publicKey, value} of key s signing msg, as JSON; flip: a bit of the value */
__attribute__((unused)) static void tm_signature_json(const struct kx_signer *s, const char *msg, const char *alg, bool flip, char *out,
			   size_t cap)
{
	uint8_t sig[KX_ED25519_SIG_LEN];
	char v[KX_BASE64_LEN(KX_ED25519_SIG_LEN) + 1], pub[KX_BASE64_LEN(KX_ED25519_PUB_LEN) + 1], id[KX_DIGEST_STR_MAX];
	struct kx_digest d;
	kx_sign(s, msg, strlen(msg), sig);
	if (flip)
		sig[17] ^= 0x20;
	kx_base64_encode(sig, sizeof(sig), v);
	kx_base64_encode(kx_signer_public(s), KX_ED25519_PUB_LEN, pub);
	kx_key_id(kx_signer_public(s), &d);
	kx_digest_format(&d, id);
	snprintf(out, cap, "{\"keyId\": \"%s\", \"algorithm\": \"%s\", \"publicKey\": \"%s\", \"value\": \"%s\"}", id, alg,
		 pub, v);
}

#endif
