// SPDX-License-Identifier: MIT
/*
 * Ed25519 keys and signatures (SPEC §10) through libcrypto's EVP interface: a key pair written as
 * PEM (the private key PKCS #8, mode 0600; the public key SubjectPublicKeyInfo beside it), a key's
 * id (sha256: of its 32 raw bytes), a signature over a message (a run's digest string) and its
 * check, and base64 for the manifest's `value` and `publicKey`.
 *
 * A file that is not what it must be (no PEM, another algorithm, a private key others may read)
 * gets a message that says which and what to do, in the caller's `err`.
 */
#include "private.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ERR(...) (snprintf(err, err_cap, __VA_ARGS__), -EINVAL)

void kx_key_id(const uint8_t pub[KX_ED25519_PUB_LEN], struct kx_digest *ret)
{
	kx_sha256(pub, KX_ED25519_PUB_LEN, ret->b);
}

/* The 32 raw bytes of an Ed25519 key (public, or the public half of a private one). */
static int raw_public(EVP_PKEY *k, uint8_t pub[KX_ED25519_PUB_LEN])
{
	size_t n = KX_ED25519_PUB_LEN;
	return EVP_PKEY_get_raw_public_key(k, pub, &n) == 1 && n == KX_ED25519_PUB_LEN ? 0 : -EINVAL;
}

/* Write PEM to path with mode, failing if it exists (a key is never overwritten). */
static int write_pem(const char *path, mode_t mode, EVP_PKEY *k, bool private, char *err, size_t err_cap)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0) {
		int e = errno;
		snprintf(err, err_cap, "cannot create %s: %s", path, strerror(e));
		return -e;
	}
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		return ERR("cannot write %s: %s", path, strerror(errno));
	}
	int ok = private ? PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL) : PEM_write_PUBKEY(f, k);
	ok = fflush(f) == 0 && fsync(fileno(f)) == 0 && ok;
	if (fclose(f) != 0 || !ok) {
		unlink(path);
		return ERR("cannot write %s", path);
	}
	return 0;
}

int kx_key_generate(const char *priv_path, const char *pub_path, struct kx_digest *ret_id, char *err, size_t err_cap)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	if (!k)
		return ERR("cannot make an Ed25519 key (libcrypto)");
	uint8_t pub[KX_ED25519_PUB_LEN];
	int r = raw_public(k, pub) < 0 ? ERR("cannot read the new key's public half") : 0;
	if (r == 0)
		r = write_pem(priv_path, 0600, k, true, err, err_cap);
	if (r == 0 && (r = write_pem(pub_path, 0644, k, false, err, err_cap)) < 0)
		unlink(priv_path);
	if (r == 0)
		kx_key_id(pub, ret_id);
	EVP_PKEY_free(k);
	return r;
}

/* Read one PEM key from path: private or public. */
static EVP_PKEY *read_pem(const char *path, bool private, char *err, size_t err_cap)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		snprintf(err, err_cap, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	EVP_PKEY *k = private ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : PEM_read_PUBKEY(f, NULL, NULL, NULL);
	fclose(f);
	if (!k)
		snprintf(err, err_cap, "%s: not a PEM %s key (make one with 'kindex keygen NAME')", path,
			 private ? "private" : "public");
	else if (EVP_PKEY_get_base_id(k) != EVP_PKEY_ED25519) {
		snprintf(err, err_cap, "%s: key type %s, not Ed25519 (signatures are Ed25519: 'kindex keygen NAME')", path,
			 EVP_PKEY_get0_type_name(k) ? EVP_PKEY_get0_type_name(k) : "non-Ed25519");
		EVP_PKEY_free(k);
		k = NULL;
	}
	return k;
}

struct kx_signer {
	EVP_PKEY *k;
	uint8_t pub[KX_ED25519_PUB_LEN];
};

int kx_signer_open(const char *path, struct kx_signer **ret, char *err, size_t err_cap)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return ERR("cannot open %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return ERR("%s: not a regular file", path);
	if (st.st_mode & 077)
		return ERR("%s: a private key others may read (mode %04o): 'chmod 600 %s'", path,
			   (unsigned)(st.st_mode & 07777), path);
	EVP_PKEY *k = read_pem(path, true, err, err_cap);
	if (!k)
		return -EINVAL;
	struct kx_signer *s = calloc(1, sizeof(*s));
	if (!s) {
		EVP_PKEY_free(k);
		return -ENOMEM;
	}
	s->k = k;
	if (raw_public(k, s->pub) < 0) {
		kx_signer_free(s);
		return ERR("%s: cannot read the key's public half", path);
	}
	*ret = s;
	return 0;
}

void kx_signer_free(struct kx_signer *s)
{
	if (!s)
		return;
	EVP_PKEY_free(s->k);
	free(s);
}

const uint8_t *kx_signer_public(const struct kx_signer *s)
{
	return s->pub;
}

int kx_sign(const struct kx_signer *s, const void *msg, size_t len, uint8_t sig[KX_ED25519_SIG_LEN])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t n = KX_ED25519_SIG_LEN;
	int ok = ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, s->k) == 1 &&
		 EVP_DigestSign(ctx, sig, &n, msg, len) == 1 && n == KX_ED25519_SIG_LEN;
	EVP_MD_CTX_free(ctx);
	return ok ? 0 : -EINVAL;
}

/*
 * The key last verified with, kept per thread: making an EVP_PKEY takes libcrypto's global locks,
 * at which threads checking runs signed by one key would otherwise queue.
 */
struct last_key {
	uint8_t pub[KX_ED25519_PUB_LEN];
	EVP_PKEY *k;
};
static pthread_key_t last_key;
static bool have_last_key;

static void last_key_free(void *p)
{
	struct last_key *c = p;
	EVP_PKEY_free(c->k);
	free(c);
}

static void last_key_init(void)
{
	have_last_key = pthread_key_create(&last_key, last_key_free) == 0;
}

/* The public key pub as an EVP_PKEY: the thread's kept one (*owned false), or a new one. */
static EVP_PKEY *public_key(const uint8_t pub[KX_ED25519_PUB_LEN], bool *owned)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, last_key_init);
	struct last_key *c = have_last_key ? pthread_getspecific(last_key) : NULL;
	if (c && memcmp(c->pub, pub, KX_ED25519_PUB_LEN) == 0) {
		*owned = false;
		return c->k;
	}
	EVP_PKEY *k = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, KX_ED25519_PUB_LEN);
	*owned = true;
	if (!k || !have_last_key)
		return k;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c || pthread_setspecific(last_key, c) != 0) {
			free(c);
			return k;
		}
	}
	EVP_PKEY_free(c->k);
	memcpy(c->pub, pub, KX_ED25519_PUB_LEN);
	c->k = k;
	*owned = false;
	return k;
}

bool kx_verify(const uint8_t pub[KX_ED25519_PUB_LEN], const void *msg, size_t len,
	       const uint8_t sig[KX_ED25519_SIG_LEN])
{
	bool owned;
	EVP_PKEY *k = public_key(pub, &owned);
	EVP_MD_CTX *ctx = k ? EVP_MD_CTX_new() : NULL;
	bool ok = ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, k) == 1 &&
		  EVP_DigestVerify(ctx, sig, KX_ED25519_SIG_LEN, msg, len) == 1;
	EVP_MD_CTX_free(ctx);
	if (owned)
		EVP_PKEY_free(k);
	return ok;
}

int kx_pubkey_read(const char *path, uint8_t pub[KX_ED25519_PUB_LEN], char *err, size_t err_cap)
{
	EVP_PKEY *k = read_pem(path, false, err, err_cap);
	if (!k)
		return -EINVAL;
	int r = raw_public(k, pub) < 0 ? ERR("%s: cannot read the public key's bytes", path) : 0;
	EVP_PKEY_free(k);
	return r;
}

int kx_pubkey_pem(const uint8_t pub[KX_ED25519_PUB_LEN], struct kx_buf *out)
{
	EVP_PKEY *k = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, KX_ED25519_PUB_LEN);
	BIO *b = k ? BIO_new(BIO_s_mem()) : NULL;
	int r = b && PEM_write_bio_PUBKEY(b, k) == 1 ? 0 : -ENOMEM;
	char *p;
	long n = b ? BIO_get_mem_data(b, &p) : 0;
	if (r == 0 && kx_buf_append(out, p, (size_t)n) < 0)
		r = -ENOMEM;
	BIO_free(b);
	EVP_PKEY_free(k);
	return r;
}

/* ---- base64 (RFC 4648 §4, with padding) -------------------------------------------------------- */

size_t kx_base64_encode(const void *data, size_t len, char *out)
{
	return (size_t)EVP_EncodeBlock((unsigned char *)out, data, (int)len);
}

int kx_base64_decode(const char *s, size_t len, uint8_t *out, size_t want)
{
	/* EVP_DecodeBlock counts padding as zero bytes; the length is checked against it instead */
	if (len != 4 * ((want + 2) / 3) || len > 4 * 1024)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		bool pad = c == '=' && i >= len - (3 - want % 3) % 3;
		if (!(pad || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
		      c == '/'))
			return -EINVAL;
	}
	uint8_t buf[3 * 1024 + 3];
	int n = EVP_DecodeBlock(buf, (const unsigned char *)s, (int)len);
	if (n < 0 || (size_t)n < want)
		return -EINVAL;
	memcpy(out, buf, want);
	return 0;
}
