// SPDX-License-Identifier: MIT
/*
 * Manifest files: size cap, one JSON value or JSON Lines, then lint and validation of each
 * manifest. A syntax error in a JSON Lines file does not stop the others from being checked: each
 * line is its own JSON text, so the error lists every failing line at once.
 */
#include "private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kx_manifest_file_free(struct kx_manifest_file *f)
{
	if (!f)
		return;
	kx_arena_free(f->arena);
	free(f->v);
	free(f);
}

static int push(struct kx_manifest_file *f, size_t *cap, const struct kx_manifest *m)
{
	if (KX_GROW(f->v, *cap, f->len, 4) < 0)
		return -ENOMEM;
	f->v[f->len++] = *m;
	return 0;
}

static void syntax_problem(struct kx_problems *pr, const struct kx_json_error *e, unsigned line_base)
{
	kx_problems_add(pr, e->line + line_base, e->col, "", e->rule, "%s", e->message);
}

/* Validate one parsed value; appends to f on success. Returns problems added (>= 0) or -ENOMEM. */
static int one(struct kx_manifest_file *f, size_t *cap, struct kx_json *root, unsigned line_base,
	       const struct kx_manifest_limits *limits, struct kx_problems *pr)
{
	size_t before = pr->len;
	if (kx_json_lint(root, "", pr) < 0)
		return -ENOMEM;
	struct kx_manifest m;
	bool defer = limits && limits->on_deferred;
	/* a manifest holds documents; a document on its own with kind Attestation is one (SPEC §8) */
	const char *kind = kx_json_get_string(root, "kind");
	int r = kind && strcmp(kind, KX_ATTESTATION_KIND) == 0
			? manifest_check_attestation(f->arena, root, &m, pr)
			: manifest_check(f->arena, root, &m, pr, CHECK_MEMO | (defer ? CHECK_DEFER_SIGNATURES : 0));
	if (r == -ENOMEM)
		return r;
	/* line numbers of a JSON Lines entry are relative to its own line */
	for (size_t i = before; line_base && i < pr->len; i++)
		if (pr->v[i].line)
			pr->v[i].line += line_base;
	if (r == 0 && pr->len == before) {
		m.line = root->line + line_base;
		if (push(f, cap, &m) < 0)
			return -ENOMEM;
		if (defer && m.nsigs && (r = limits->on_deferred(limits->deferred_ctx, f->len - 1, &m)) < 0)
			return r;
	}
	return (int)(pr->len - before);
}

/*
 * A file refused for other problems gets its deferred signatures checked here, so that every
 * problem is reported at once, merged in line order with the others (from problem `from` on). Such
 * a file is JSON Lines (a lone manifest with problems has its signatures checked at once), whose
 * problems come line by line.
 */
static int refuse_deferred(struct kx_manifest_file *f, struct kx_problems *pr, size_t from)
{
	size_t mid = pr->len;
	for (size_t i = 0; i < f->len; i++)
		for (size_t k = 0; k < f->v[i].nsigs; k++)
			if (!kx_signature_good(&f->v[i].digest[KX_DOC_RUN], &f->v[i].sigs[k]) &&
			    kx_signature_refuse(&f->v[i], &f->v[i].sigs[k], pr) < 0)
				return -ENOMEM;
	if (mid == pr->len)
		return 0;
	struct kx_problem *v = malloc((pr->len - from) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t a = from, b = mid, o = 0;
	while (a < mid || b < pr->len)
		v[o++] = b == pr->len || (a < mid && pr->v[a].line <= pr->v[b].line) ? pr->v[a++] : pr->v[b++];
	memcpy(pr->v + from, v, o * sizeof(*v));
	free(v);
	return 0;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

/* The next non-blank line at or after *pos: its [start, end) with surrounding blanks trimmed. */
static bool next_line(const char *bytes, size_t len, size_t *pos, const char **ret_b, const char **ret_e)
{
	while (*pos < len) {
		const char *b = bytes + *pos, *nl = memchr(b, '\n', len - *pos);
		const char *e = nl ? nl : bytes + len;
		*pos = (size_t)(e - bytes) + (nl ? 1 : 0);
		while (b < e && (*b == ' ' || *b == '\t' || *b == '\r'))
			b++;
		while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
			e--;
		if (b < e) {
			*ret_b = b;
			*ret_e = e;
			return true;
		}
	}
	return false;
}

/*
 * Called when the bytes are not one JSON value: are they JSON Lines? Yes when the first non-blank
 * line is a whole JSON value on its own, or when it and the next non-blank line both start an
 * object (a JSON Lines file whose first line is broken). A pretty-printed manifest with an error
 * is neither: its lines after the first start with a member name or a brace-less value.
 */
static bool looks_like_json_lines(struct kx_arena *a, const char *bytes, size_t len, unsigned depth)
{
	size_t pos = 0;
	const char *b1, *e1, *b2, *e2;
	if (!next_line(bytes, len, &pos, &b1, &e1) || !next_line(bytes, len, &pos, &b2, &e2))
		return false;
	if (*b1 != '{')
		return false;
	struct kx_json *v;
	struct kx_json_error err;
	if (kx_json_parse(a, b1, (size_t)(e1 - b1), depth, &v, NULL, &err) == 0)
		return true;
	return *b2 == '{';
}

int kx_manifest_parse(const char *bytes, size_t len, const struct kx_manifest_limits *limits,
		      struct kx_manifest_file **ret_file, struct kx_problems *problems)
{
	size_t max_bytes = limits && limits->max_bytes ? limits->max_bytes : KX_MANIFEST_MAX_BYTES_DEFAULT;
	unsigned depth = limits && limits->max_depth ? limits->max_depth : KX_JSON_MAX_DEPTH_DEFAULT;
	if (len > max_bytes) {
		kx_problems_add(problems, 0, 0, "", "size",
				"file is %zu bytes, over the limit of %zu bytes (split it, or raise the limit)",
				len, max_bytes);
		return -EINVAL;
	}
	struct kx_manifest_file *f = calloc(1, sizeof(*f));
	if (!f || !(f->arena = kx_arena_new())) {
		free(f);
		return -ENOMEM;
	}
	size_t cap = 0, nprob = problems->len;
	int r = 0;
	struct kx_json_error e;
	/* one JSON value (pretty or not) is the common case: try it first */
	struct kx_json *root = NULL;
	r = kx_json_parse(f->arena, bytes, len, depth, &root, NULL, &e);
	if (r == -ENOMEM)
		goto out;
	if (r == 0) {
		r = one(f, &cap, root, 0, limits, problems);
		goto out;
	}
	if (!looks_like_json_lines(f->arena, bytes, len, depth)) {
		if (strncmp(e.message, "unexpected", 10) == 0)
			snprintf(e.message + strlen(e.message), sizeof(e.message) - strlen(e.message),
				 " (a file holds one manifest, or JSON Lines: one per line)");
		syntax_problem(problems, &e, 0);
		r = 0;
		goto out;
	}
	/* JSON Lines: every line is its own JSON text, so a broken line does not hide the others */
	f->json_lines = true;
	unsigned lineno = 0;
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(bytes + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (bytes + pos)) : len - pos;
		lineno++;
		if (!blank(bytes + pos, n)) {
			struct kx_json *v = NULL;
			r = kx_json_parse(f->arena, bytes + pos, n, depth, &v, NULL, &e);
			if (r == -ENOMEM)
				goto out;
			if (r < 0)
				syntax_problem(problems, &e, lineno - 1);
			else if ((r = one(f, &cap, v, lineno - 1, limits, problems)) < 0)
				goto out;
		}
		pos += n + 1;
	}
	r = 0;
out:
	if (r == -ENOMEM) {
		kx_manifest_file_free(f);
		return r;
	}
	if (problems->len > nprob && limits && limits->on_deferred)
		r = refuse_deferred(f, problems, nprob);
	if (problems->len > nprob || r < 0) {
		kx_manifest_file_free(f);
		return r == -ENOMEM ? r : -EINVAL;
	}
	*ret_file = f;
	return 0;
}

int kx_manifest_sign(struct kx_arena *a, struct kx_json *manifest, const struct kx_signer *key)
{
	struct kx_digest d, id;
	char msg[KX_DIGEST_STR_MAX], kid[KX_DIGEST_STR_MAX];
	char pub[KX_BASE64_LEN(KX_ED25519_PUB_LEN) + 1], val[KX_BASE64_LEN(KX_ED25519_SIG_LEN) + 1];
	uint8_t sig[KX_ED25519_SIG_LEN];
	struct kx_json *run = kx_json_get(manifest, "run"), *arr = kx_json_get(manifest, KX_SIGNATURES_MEMBER);
	if (!run || run->type != KX_JSON_OBJECT || (arr && arr->type != KX_JSON_ARRAY))
		return -EINVAL;
	int r = kx_digest_document(run, &d);
	if (r < 0)
		return r;
	kx_digest_format(&d, msg);
	if ((r = kx_sign(key, msg, strlen(msg), sig)) < 0)
		return r;
	kx_key_id(kx_signer_public(key), &id);
	kx_digest_format(&id, kid);
	kx_base64_encode(kx_signer_public(key), KX_ED25519_PUB_LEN, pub);
	kx_base64_encode(sig, sizeof(sig), val);
	struct kx_json *o = kx_json_new(a, KX_JSON_OBJECT);
	if (!o)
		return -ENOMEM;
	r |= kx_json_set_string(a, o, "keyId", kid);
	r |= kx_json_set_string(a, o, "algorithm", "ed25519");
	r |= kx_json_set_string(a, o, "publicKey", pub);
	r |= kx_json_set_string(a, o, "value", val);
	if (r < 0)
		return -ENOMEM;
	/* the key's earlier signature of this run, if any, is replaced: a key signs a run once */
	for (size_t i = 0; arr && i < arr->arr.len; i++) {
		const char *k = kx_json_get_string(arr->arr.v[i], "keyId");
		if (k && strcmp(k, kid) == 0) {
			arr->arr.v[i] = o;
			return 0;
		}
	}
	if (!arr && (!(arr = kx_json_new(a, KX_JSON_ARRAY)) || kx_json_set(a, manifest, KX_SIGNATURES_MEMBER, arr) < 0))
		return -ENOMEM;
	return kx_json_append(a, arr, o) < 0 ? -ENOMEM : 0;
}
