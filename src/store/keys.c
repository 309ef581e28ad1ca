// SPDX-License-Identifier: MIT
/*
 * Key construction and record encoding for the store (layout in keys.h and docs/store.md), and
 * the schemas (the value of K_SCHEMA) this kindex reads.
 * Records are a version byte followed by fixed-order fields: integers big-endian, doubles as
 * their IEEE bits, strings as a u16 length and bytes. Decoding checks every length and returns
 * -EIO on anything short or malformed, which `kindex verify` reports as corruption.
 */
#include "keys.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define RUN_VERSION 2 /* 2 added the noise interval and the version; 1 is still read */
#define GROUP_VERSION 1

/* The schema a store says it was written in (`want` is this kindex's), if this kindex reads it:
 * its own, or an older one, which it upgrades; 0 for any other. */
int store_readable_schema(const char *schema, const char *want)
{
	if (strcmp(schema, want) == 0)
		return KX_STORE_SCHEMA;
	for (int old = 1; old < KX_STORE_SCHEMA; old++) {
		char name[32];
		snprintf(name, sizeof(name), "kindexfs-store %d", old);
		if (strcmp(schema, name) == 0)
			return old;
	}
	return 0;
}

void store_put_u64(unsigned char *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--) {
		p[i] = (unsigned char)v;
		v >>= 8;
	}
}

uint64_t store_get_u64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

void store_put_u32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

uint32_t store_get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t order_bits(double v, int order)
{
	if (order == KX_ORDER_DESCENDING)
		v = -v;
	if (v == 0)
		v = 0; /* -0 and 0 are the same value */
	uint64_t u;
	memcpy(&u, &v, 8);
	return (u >> 63) ? ~u : u ^ (1ull << 63);
}

void store_key_digest(struct key *k, char tag, const struct kx_digest *d)
{
	k->b[0] = (unsigned char)tag;
	memcpy(k->b + 1, d->b, 32);
	k->len = 33;
}

void store_key_index(struct key *k, const struct kx_run_rec *r)
{
	unsigned char *p = k->b;
	*p++ = T_INDEX;
	memcpy(p, r->group.b, 32);
	p += 32;
	bool ranked = r->passed && r->has_value;
	*p++ = ranked ? 0 : 1;
	store_put_u64(p, ranked ? order_bits(r->base_value, r->order) : 0);
	p += 8;
	store_put_u64(p, (uint64_t)r->observed_ns ^ (1ull << 63));
	p += 8;
	memcpy(p, r->run.b, 32);
	k->len = INDEX_KEY_LEN;
}

static int append(struct key *k, const void *s, size_t n)
{
	if (k->len + n > sizeof(k->b))
		return -ENAMETOOLONG;
	memcpy(k->b + k->len, s, n);
	k->len += n;
	return 0;
}

int store_key_source(struct key *k, const char *source, const char *external_id)
{
	k->b[0] = T_SOURCE;
	k->len = 1;
	if (append(k, source, strlen(source) + 1) < 0)
		return -ENAMETOOLONG;
	return append(k, external_id, strlen(external_id));
}

int store_key_tree(struct key *k, const struct kx_group_rec *g)
{
	k->b[0] = T_TREE;
	k->len = 1;
	const char *parts[] = { g->kernel, g->pass, g->gpu, g->workload_slug };
	for (size_t i = 0; i < KX_ARRAY_SIZE(parts); i++)
		if (append(k, parts[i], strlen(parts[i]) + 1) < 0)
			return -ENAMETOOLONG;
	return append(k, g->workload.b, 32);
}

void store_tree_value(const struct kx_group_rec *g, unsigned char v[TREE_VALUE_LEN])
{
	memcpy(v, g->key.b, 32);
	v[32] = g->workload_cut ? 1 : 0;
}

void store_key_wait(struct key *k, const struct kx_digest *doc, const struct kx_digest *run)
{
	k->b[0] = T_WAIT;
	memcpy(k->b + 1, doc->b, 32);
	memcpy(k->b + 33, run->b, 32);
	k->len = WAIT_KEY_LEN;
}

int store_key_mtime(struct key *k, const char *path)
{
	k->b[0] = T_MTIME;
	k->len = 1;
	return append(k, path, strlen(path));
}

void store_key_current(struct key *k, const struct kx_digest *group, const char *impl)
{
	store_key_digest(k, T_CURRENT, group);
	append(k, impl, strnlen(impl, KX_NAME_MAX - 1)); /* a slug: fits, with room to spare */
}

void store_key_pair(struct key *k, char tag, const struct kx_digest *a, const struct kx_digest *b)
{
	store_key_digest(k, tag, a);
	memcpy(k->b + 33, b->b, 32);
	k->len = PAIR_KEY_LEN;
}

void store_key_attestation(struct key *k, const struct kx_digest *run, int64_t created_ns, const struct kx_digest *att)
{
	store_key_digest(k, T_ATTESTATION, run);
	store_put_u64(k->b + 33, (uint64_t)created_ns ^ (1ull << 63));
	memcpy(k->b + 41, att->b, 32);
	k->len = ATTESTATION_KEY_LEN;
}

void store_key_alias(struct key *k, const struct kx_digest *run, const struct kx_digest *alias)
{
	store_key_pair(k, T_ALIAS, run, alias);
}

int store_key_name(struct key *k, char level, const char *component)
{
	k->b[0] = T_NAME;
	k->b[1] = (unsigned char)level;
	k->len = 2;
	return append(k, component, strlen(component));
}

/* ---- record codec ----------------------------------------------------------------------------- */

static int w_u8(struct kx_buf *b, unsigned v)
{
	return kx_buf_putc(b, (char)v);
}

static int w_u64(struct kx_buf *b, uint64_t v)
{
	unsigned char p[8];
	store_put_u64(p, v);
	return kx_buf_append(b, p, 8);
}

static int w_f64(struct kx_buf *b, double v)
{
	uint64_t u;
	memcpy(&u, &v, 8);
	return w_u64(b, u);
}

static int w_str(struct kx_buf *b, const char *s)
{
	size_t n = strlen(s);
	unsigned char l[2] = { (unsigned char)(n >> 8), (unsigned char)n };
	int r = kx_buf_append(b, l, 2);
	return r < 0 ? r : kx_buf_append(b, s, n);
}

struct rd {
	const unsigned char *p, *end;
	int bad;
};

static const unsigned char *take(struct rd *r, size_t n)
{
	if ((size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return NULL;
	}
	const unsigned char *q = r->p;
	r->p += n;
	return q;
}

static unsigned r_u8(struct rd *r)
{
	const unsigned char *q = take(r, 1);
	return q ? *q : 0;
}

static uint64_t r_u64(struct rd *r)
{
	const unsigned char *q = take(r, 8);
	return q ? store_get_u64(q) : 0;
}

static double r_f64(struct rd *r)
{
	uint64_t u = r_u64(r);
	double v;
	memcpy(&v, &u, 8);
	return v;
}

static void r_str(struct rd *r, char *out, size_t cap)
{
	const unsigned char *l = take(r, 2);
	size_t n = l ? (size_t)(l[0] << 8 | l[1]) : 0;
	const unsigned char *s = take(r, n);
	if (!s || n >= cap) {
		r->bad = 1;
		out[0] = '\0';
		return;
	}
	memcpy(out, s, n);
	out[n] = '\0';
}

static void r_digest(struct rd *r, struct kx_digest *d)
{
	const unsigned char *q = take(r, 32);
	if (q)
		memcpy(d->b, q, 32);
}

#define KEY_VERSION 1

int store_key_rec_encode(const struct kx_key_rec *k, struct kx_buf *b)
{
	int r = w_u8(b, KEY_VERSION);
	if (r == 0)
		r = kx_buf_append(b, k->pub, KX_ED25519_PUB_LEN);
	if (r == 0)
		r = w_u64(b, (uint64_t)k->added_ns);
	if (r == 0)
		r = w_u64(b, (uint64_t)k->revoked_ns);
	if (r == 0)
		r = w_str(b, k->name);
	return r < 0 ? -ENOMEM : 0;
}

int store_key_rec_decode(const char *p, size_t n, struct kx_key_rec *k)
{
	struct rd r = { (const unsigned char *)p, (const unsigned char *)p + n, 0 };
	if (r_u8(&r) != KEY_VERSION)
		return -EBADMSG;
	const unsigned char *pub = take(&r, KX_ED25519_PUB_LEN);
	if (pub)
		memcpy(k->pub, pub, KX_ED25519_PUB_LEN);
	k->added_ns = (int64_t)r_u64(&r);
	k->revoked_ns = (int64_t)r_u64(&r);
	r_str(&r, k->name, sizeof(k->name));
	return r.bad || r.p != r.end ? -EBADMSG : 0;
}

int store_run_encode(const struct kx_run_rec *x, struct kx_buf *b)
{
	int r = w_u8(b, RUN_VERSION);
	const struct kx_digest *ds[] = { &x->group, &x->protocol, &x->environment, &x->workload,
					 &x->implementation };
	for (size_t i = 0; i < KX_ARRAY_SIZE(ds) && r >= 0; i++)
		r = kx_buf_append(b, ds[i]->b, 32);
	if (r >= 0)
		r = w_u8(b, (x->passed ? 1u : 0u) | (x->has_value ? 2u : 0u) | (x->alias ? 4u : 0u));
	if (r >= 0)
		r = w_u8(b, x->evidence);
	if (r >= 0)
		r = w_u8(b, x->order);
	if (r >= 0)
		r = w_f64(b, x->value);
	if (r >= 0)
		r = w_f64(b, x->base_value);
	if (r >= 0)
		r = w_u64(b, (uint64_t)x->observed_ns);
	if (r >= 0)
		r = w_u64(b, (uint64_t)x->ingested_ns);
	if (r >= 0)
		r = w_u64(b, x->generation);
	if (r >= 0)
		r = w_str(b, x->unit);
	if (r >= 0)
		r = w_str(b, x->impl);
	if (r >= 0)
		r = w_str(b, x->family);
	if (r >= 0)
		r = w_u8(b, x->has_spread);
	if (r >= 0)
		r = w_f64(b, x->base_p20);
	if (r >= 0)
		r = w_f64(b, x->base_p80);
	if (r >= 0)
		r = w_str(b, x->version);
	if (r >= 0 && x->alias)
		r = kx_buf_append(b, x->alias_of.b, 32);
	return r;
}

int store_run_decode(const char *p, size_t n, struct kx_run_rec *x)
{
	struct rd r = { (const unsigned char *)p, (const unsigned char *)p + n, 0 };
	unsigned version = r_u8(&r);
	if (version != 1 && version != RUN_VERSION)
		return -EIO;
	x->unbacked = false; /* not stored: worked out as the tree reads the record (tree_evidence) */
	struct kx_digest *ds[] = { &x->group, &x->protocol, &x->environment, &x->workload,
				   &x->implementation };
	for (size_t i = 0; i < KX_ARRAY_SIZE(ds); i++)
		r_digest(&r, ds[i]);
	unsigned flags = r_u8(&r);
	x->passed = flags & 1;
	x->has_value = flags & 2;
	x->alias = flags & 4;
	x->evidence = (uint8_t)r_u8(&r);
	x->order = (uint8_t)r_u8(&r);
	x->value = r_f64(&r);
	x->base_value = r_f64(&r);
	x->observed_ns = (int64_t)r_u64(&r);
	x->ingested_ns = (int64_t)r_u64(&r);
	x->generation = r_u64(&r);
	r_str(&r, x->unit, sizeof(x->unit));
	r_str(&r, x->impl, sizeof(x->impl));
	r_str(&r, x->family, sizeof(x->family));
	x->has_spread = false;
	x->base_p20 = x->base_p80 = 0;
	x->version[0] = '\0';
	if (version >= 2) {
		x->has_spread = r_u8(&r) != 0;
		x->base_p20 = r_f64(&r);
		x->base_p80 = r_f64(&r);
		r_str(&r, x->version, sizeof(x->version));
	}
	memset(&x->alias_of, 0, sizeof(x->alias_of));
	if (x->alias)
		r_digest(&r, &x->alias_of);
	return r.bad || r.p != r.end ? -EIO : 0;
}

int store_group_encode(const struct kx_group_rec *g, struct kx_buf *b)
{
	int r = w_u8(b, GROUP_VERSION);
	if (r >= 0)
		r = kx_buf_append(b, g->workload.b, 32);
	const char *s[] = { g->benchmark, g->metric, g->kernel, g->pass, g->gpu, g->workload_slug };
	for (size_t i = 0; i < KX_ARRAY_SIZE(s) && r >= 0; i++)
		r = w_str(b, s[i]);
	if (r >= 0)
		r = w_u8(b, g->workload_cut);
	if (r >= 0)
		r = w_u8(b, g->order);
	if (r >= 0)
		r = w_u64(b, g->ranked);
	if (r >= 0)
		r = w_u64(b, g->unranked);
	if (r >= 0)
		r = w_u64(b, (uint64_t)g->changed_ns);
	return r;
}

int store_group_decode(const char *p, size_t n, struct kx_group_rec *g)
{
	struct rd r = { (const unsigned char *)p, (const unsigned char *)p + n, 0 };
	if (r_u8(&r) != GROUP_VERSION)
		return -EIO;
	r_digest(&r, &g->workload);
	r_str(&r, g->benchmark, sizeof(g->benchmark));
	r_str(&r, g->metric, sizeof(g->metric));
	r_str(&r, g->kernel, sizeof(g->kernel));
	r_str(&r, g->pass, sizeof(g->pass));
	r_str(&r, g->gpu, sizeof(g->gpu));
	r_str(&r, g->workload_slug, sizeof(g->workload_slug));
	g->workload_cut = r_u8(&r);
	g->order = (uint8_t)r_u8(&r);
	g->ranked = (uint32_t)r_u64(&r);
	g->unranked = (uint32_t)r_u64(&r);
	g->changed_ns = (int64_t)r_u64(&r);
	return r.bad || r.p != r.end ? -EIO : 0;
}

#define CURRENT_VERSION 1

void store_current_of(const struct kx_run_rec *x, struct kx_current_rec *c)
{
	*c = (struct kx_current_rec){ .run = x->run, .observed_ns = x->observed_ns, .order = x->order,
				      .has_spread = x->has_spread, .value = x->value, .base_value = x->base_value,
				      .base_p20 = x->base_p20, .base_p80 = x->base_p80 };
	snprintf(c->unit, sizeof(c->unit), "%s", x->unit);
	snprintf(c->impl, sizeof(c->impl), "%s", x->impl);
}

int store_current_encode(const struct kx_current_rec *c, struct kx_buf *b)
{
	int r = w_u8(b, CURRENT_VERSION);
	if (r >= 0)
		r = kx_buf_append(b, c->run.b, 32);
	if (r >= 0)
		r = w_u64(b, (uint64_t)c->observed_ns);
	if (r >= 0)
		r = w_u8(b, c->order);
	if (r >= 0)
		r = w_u8(b, c->has_spread);
	const double f[] = { c->value, c->base_value, c->base_p20, c->base_p80 };
	for (size_t i = 0; i < KX_ARRAY_SIZE(f) && r >= 0; i++)
		r = w_f64(b, f[i]);
	if (r >= 0)
		r = w_str(b, c->unit);
	return r;
}

int store_current_decode(const char *p, size_t n, struct kx_current_rec *c)
{
	struct rd r = { (const unsigned char *)p, (const unsigned char *)p + n, 0 };
	if (r_u8(&r) != CURRENT_VERSION)
		return -EIO;
	r_digest(&r, &c->run);
	c->observed_ns = (int64_t)r_u64(&r);
	c->order = (uint8_t)r_u8(&r);
	c->has_spread = r_u8(&r) != 0;
	c->value = r_f64(&r);
	c->base_value = r_f64(&r);
	c->base_p20 = r_f64(&r);
	c->base_p80 = r_f64(&r);
	r_str(&r, c->unit, sizeof(c->unit));
	return r.bad || r.p != r.end ? -EIO : 0;
}
