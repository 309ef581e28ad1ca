// SPDX-License-Identifier: MIT
/*
 * SHA-256 (OpenSSL libcrypto's EVP interface; SHA-NI where the CPU has it) and the document
 * digest rule of SPEC §1. With sign.c, the only files that include OpenSSL headers.
 */
#include "private.h"

#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <string.h>

/* OpenSSL 3 looks the algorithm up (under a lock) on every EVP_sha256() use; fetch it once */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void fetch_sha256(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static const EVP_MD *md(void)
{
	pthread_once(&sha256_once, fetch_sha256);
	return sha256_md ? sha256_md : EVP_sha256();
}

void kx_sha256(const void *data, size_t len, uint8_t out[KX_DIGEST_LEN])
{
	unsigned int n = KX_DIGEST_LEN;
	EVP_Digest(data, len, out, &n, md(), NULL);
}

struct kx_sha256 {
	EVP_MD_CTX *ctx;
};

struct kx_sha256 *kx_sha256_new(void)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (!ctx)
		return NULL;
	if (EVP_DigestInit_ex(ctx, md(), NULL) != 1) {
		EVP_MD_CTX_free(ctx);
		return NULL;
	}
	return (struct kx_sha256 *)ctx;
}

void kx_sha256_update(struct kx_sha256 *h, const void *data, size_t len)
{
	EVP_DigestUpdate((EVP_MD_CTX *)h, data, len);
}

void kx_sha256_final(struct kx_sha256 *h, uint8_t out[KX_DIGEST_LEN])
{
	unsigned int n = KX_DIGEST_LEN;
	EVP_DigestFinal_ex((EVP_MD_CTX *)h, out, &n);
	EVP_MD_CTX_free((EVP_MD_CTX *)h);
}

int kx_digest_document_bytes(const struct kx_json *doc, struct kx_buf *out)
{
	if (!doc || doc->type != KX_JSON_OBJECT)
		return -EINVAL;
	/* {apiVersion, kind, spec}: a shallow view of the document without metadata */
	static const char *const hashed[] = { "apiVersion", "kind", "spec" };
	struct kx_json_member m[3];
	struct kx_json view = { .type = KX_JSON_OBJECT };
	view.obj.v = m;
	for (size_t i = 0; i < KX_ARRAY_SIZE(hashed); i++) {
		struct kx_json *v = kx_json_get(doc, hashed[i]);
		if (v)
			m[view.obj.len++] = (struct kx_json_member){ hashed[i], strlen(hashed[i]), v };
	}
	view.obj.cap = view.obj.len;
	return kx_jcs_write(&view, out);
}

int kx_digest_document(const struct kx_json *doc, struct kx_digest *ret)
{
	struct kx_buf b;
	kx_buf_init(&b, 0);
	int r = kx_digest_document_bytes(doc, &b);
	if (r >= 0)
		kx_sha256(b.ptr, b.len, ret->b);
	kx_buf_release(&b);
	return r;
}

void kx_digest_hex(const struct kx_digest *d, char out[KX_DIGEST_HEX + 1])
{
	kx_hex(d->b, KX_DIGEST_LEN, out);
}

void kx_digest_format(const struct kx_digest *d, char out[KX_DIGEST_STR_MAX])
{
	memcpy(out, "sha256:", 7);
	kx_hex(d->b, KX_DIGEST_LEN, out + 7);
}

int kx_digest_parse(const char *s, size_t len, struct kx_digest *ret)
{
	if (len != 7 + KX_DIGEST_HEX || memcmp(s, "sha256:", 7) != 0)
		return -EINVAL;
	for (size_t i = 7; i < len; i++)
		if (s[i] >= 'A' && s[i] <= 'F')
			return -EINVAL; /* lowercase only: the digest is text compared byte for byte */
	struct kx_digest d;
	if (kx_unhex(s + 7, KX_DIGEST_HEX, d.b, KX_DIGEST_LEN) < 0)
		return -EINVAL;
	*ret = d;
	return 0;
}

bool kx_digest_equal(const struct kx_digest *a, const struct kx_digest *b)
{
	return memcmp(a->b, b->b, KX_DIGEST_LEN) == 0;
}

int kx_digest_cmp(const void *a, const void *b)
{
	return memcmp(a, b, KX_DIGEST_LEN);
}

/* kx_digest_document_jcs: where each hashed member's "key":value lies in the serialized document */
struct hashed_spans {
	size_t span[3][2];
	bool have[3];
};

static const char *const hashed_members[3] = { "apiVersion", "kind", "spec" };

static void note_span(void *ctx, const char *key, size_t key_len, size_t start, size_t end)
{
	struct hashed_spans *hs = ctx;
	for (int h = 0; h < 3; h++)
		if (key_len == strlen(hashed_members[h]) && memcmp(key, hashed_members[h], key_len) == 0) {
			hs->have[h] = true;
			hs->span[h][0] = start;
			hs->span[h][1] = end;
		}
}

int kx_digest_document_jcs(const struct kx_json *doc, struct kx_digest *ret, struct kx_buf *full)
{
	struct hashed_spans hs = { 0 };
	int r = canon_jcs_write_object(doc, full, note_span, &hs);
	if (r < 0)
		return r;
	/* the hashed form is those members, in the same (sorted) order, between braces */
	struct kx_sha256 *h = kx_sha256_new();
	if (!h)
		return -ENOMEM;
	kx_sha256_update(h, "{", 1);
	bool first = true;
	for (int k = 0; k < 3; k++) {
		if (!hs.have[k])
			continue;
		if (!first)
			kx_sha256_update(h, ",", 1);
		kx_sha256_update(h, full->ptr + hs.span[k][0], hs.span[k][1] - hs.span[k][0]);
		first = false;
	}
	kx_sha256_update(h, "}", 1);
	kx_sha256_final(h, ret->b);
	return 0;
}
