// SPDX-License-Identifier: MIT
/*
 * Trust requests (SPEC §10, docs/signatures.md): `kindex trust add` and `trust revoke` as one JSON
 * object, applied to the store in a commit of their own. `kindex trust` applies a request itself
 * when the store is not mounted; when it is, it drops the request into STORE/trust/ (a spool:
 * tmp/, then new/) and the daemon, the store's one writer, applies it with the same function and
 * tells the kernel what changed, as after a drop. Either way the receipt is the same line.
 *
 * Who may make a request is who may write STORE/trust/: the store's owner (the directory is made
 * mode 0700), never an inbox writer (docs/signatures.md, "Who can claim what").
 */
#include "kx/spool.h"

#include "kx/canon.h"
#include "kx/json.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

bool kx_key_name_valid(const char *name)
{
	size_t n = strlen(name);
	if (!n || n >= KX_KEY_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			return false;
	return true;
}

int kx_trust_request(const uint8_t *pub, const char *name, const char *key, struct kx_buf *out)
{
	struct kx_arena *a = kx_arena_new();
	struct kx_json *o = a ? kx_json_new(a, KX_JSON_OBJECT) : NULL;
	int r = o ? 0 : -ENOMEM;
	if (r == 0 && pub) {
		char b64[KX_BASE64_LEN(KX_ED25519_PUB_LEN) + 1];
		kx_base64_encode(pub, KX_ED25519_PUB_LEN, b64);
		r |= kx_json_set(a, o, "trust", kx_json_new_string(a, "add"));
		r |= kx_json_set(a, o, "name", kx_json_new_string(a, name));
		r |= kx_json_set(a, o, "publicKey", kx_json_new_string(a, b64));
	} else if (r == 0) {
		r |= kx_json_set(a, o, "trust", kx_json_new_string(a, "revoke"));
		r |= kx_json_set(a, o, "key", kx_json_new_string(a, key));
	}
	if (r == 0)
		r = kx_jcs_write(o, out);
	if (r == 0)
		r = kx_buf_putc(out, '\n');
	kx_arena_free(a);
	return r < 0 ? -ENOMEM : 0;
}

struct by_name {
	const char *name;
	struct kx_key_rec k;
	int n;
};

static int match_name(void *ctx, const struct kx_key_rec *k)
{
	struct by_name *b = ctx;
	if (strcmp(k->name, b->name) == 0) {
		b->k = *k;
		b->n++;
	}
	return 0;
}

/* A string member of the request, or NULL (a problem noted) */
static const char *member(struct kx_json *req, const char *key, struct kx_problems *p)
{
	const char *v = kx_json_get_string(req, key);
	if (!v) {
		char ptr[32];
		snprintf(ptr, sizeof(ptr), "/%s", key);
		kx_problems_add(p, 0, 0, ptr, "required", "the request has no string '%s'", key);
	}
	return v;
}

int kx_trust_apply(void *ctx, struct kx_store *s, const char *bytes, size_t len, struct kx_buf *receipt,
		   struct kx_problems *p, uint64_t *ret_generation)
{
	(void)ctx;
	*ret_generation = 0;
	struct kx_arena *a = kx_arena_new();
	if (!a)
		return -ENOMEM;
	struct kx_json *req = NULL;
	struct kx_json_error e;
	int r = 0;
	if (kx_json_parse(a, bytes, len, 0, &req, NULL, &e) < 0 || req->type != KX_JSON_OBJECT) {
		kx_problems_add(p, 0, 0, "", "json-syntax", "a trust request is one JSON object");
		r = -EINVAL;
		goto out;
	}
	const char *what = member(req, "trust", p);
	bool add = what && strcmp(what, "add") == 0;
	if (what && !add && strcmp(what, "revoke") != 0)
		kx_problems_add(p, 0, 0, "/trust", "value", "'trust' is \"add\" or \"revoke\"");
	const char *name = add ? member(req, "name", p) : NULL;
	const char *b64 = add ? member(req, "publicKey", p) : NULL;
	const char *key = what && !add ? member(req, "key", p) : NULL;
	uint8_t pub[KX_ED25519_PUB_LEN];
	if (b64 && kx_base64_decode(b64, strlen(b64), pub, sizeof(pub)) < 0)
		kx_problems_add(p, 0, 0, "/publicKey", "signature", "publicKey is not base64 of a 32-byte Ed25519 key");
	if (name && !kx_key_name_valid(name))
		kx_problems_add(p, 0, 0, "/name", "name", "a key's name is 1 to %d bytes of printable text",
				KX_KEY_NAME_MAX - 1);
	if (p->len) {
		r = -EINVAL;
		goto out;
	}
	struct kx_digest id;
	struct kx_key_rec known = { 0 };
	if (add) {
		kx_key_id(pub, &id);
		r = kx_store_get_key(s, NULL, &id, &known);
		r = r == -ENOENT ? 0 : r;
	} else if (kx_digest_parse(key, strlen(key), &id) == 0) {
		r = kx_store_get_key(s, NULL, &id, &known);
	} else { /* a name: the one key the store knows by it */
		struct by_name b = { .name = key };
		r = kx_store_each_key(s, NULL, match_name, &b);
		if (r == 0 && b.n != 1) {
			kx_problems_add(p, 0, 0, "/key", "key",
					b.n ? "'%s' names %d keys: give the key's id (kindex trust list)"
					    : "'%s' is neither a key id (sha256:...) nor the name of a key the store knows",
					key, b.n);
			r = -EINVAL;
			goto out;
		}
		id = b.k.id;
		known = b.k;
	}
	if (r == -ENOENT) {
		kx_problems_add(p, 0, 0, "/key", "key", "the store knows no key %s (kindex trust list)", key);
		r = -EINVAL;
	}
	if (r < 0)
		goto out;
	char ids[KX_DIGEST_STR_MAX];
	kx_digest_format(&id, ids);
	struct kx_txn *t;
	if ((r = kx_store_txn_begin(s, &t)) < 0)
		goto out;
	int64_t now = kx_now_ns();
	int done = add ? kx_txn_trust_key(t, pub, name, now) : kx_txn_revoke_key(t, &id, now);
	if (done == 0) {
		r = kx_txn_commit_gen(t, true, ret_generation);
	} else {
		kx_txn_abort(t);
		r = done > 0 ? 0 : done;
	}
	if (r == -EPERM) {
		kx_problems_add(p, 0, 0, "/publicKey", "revoked",
				"key %s was revoked: a revoked key is not trusted again (make a new one: kindex keygen)", ids);
		r = -EINVAL;
	}
	if (r == 0)
		r = kx_buf_printf(receipt, "%s %s %s%s\n", add ? "trusted" : "revoked", ids,
				  add ? (done > 0 ? known.name : name) : known.name,
				  done > 0 ? (add ? " (trusted already: its name is kept)" : " (revoked already)") : "") < 0
			    ? -ENOMEM
			    : 0;
out:
	kx_arena_free(a);
	return r;
}
