// SPDX-License-Identifier: MIT
/*
 * Iterating a store: a scan of the keys under a prefix (struct scan), and every walk built on one
 * — a group's runs in rank order, every group's runs and current runs in parts, the runs waiting
 * for a document, a run's aliases, the path index, every record of a kind — and the lookup of a
 * record by a prefix of its digest. Each walk calls back per item and stops at a non-zero return.
 */
#include "private.h"

#include <errno.h>
#include <pthread.h>
#include <rocksdb/c.h>
#include <stdlib.h>
#include <string.h>

/*
 * The keys from `prefix` to `upper` (upper_n bytes, excluded; NULL: every key with the prefix).
 * fill: keep the blocks read in the block cache (not for a scan of a whole key family, which would
 * only evict what point reads keep there).
 */
static int scan_open_with(struct scan *sc, struct kx_store *s, struct kx_view *v, const void *prefix, size_t n,
			  const void *upper, size_t upper_n, bool fill)
{
	memset(sc, 0, sizeof(*sc));
	if (n + 1 > sizeof(sc->upper) || upper_n > sizeof(sc->upper))
		return -ENAMETOOLONG;
	sc->ro = rocksdb_readoptions_create();
	if (v)
		rocksdb_readoptions_set_snapshot(sc->ro, v->snap);
	if (!fill)
		rocksdb_readoptions_set_fill_cache(sc->ro, 0);
	/* upper bound = the prefix incremented (prefixes never end in 0xff here) */
	memcpy(sc->upper, upper ? upper : prefix, upper ? upper_n : n);
	sc->upper_len = upper ? upper_n : n;
	while (!upper && sc->upper_len && sc->upper[sc->upper_len - 1] == 0xff)
		sc->upper_len--;
	if (sc->upper_len) {
		if (!upper)
			sc->upper[sc->upper_len - 1]++;
		rocksdb_readoptions_set_iterate_upper_bound(sc->ro, (const char *)sc->upper, sc->upper_len);
	}
	sc->it = rocksdb_create_iterator(db_of(s, v), sc->ro);
	rocksdb_iter_seek(sc->it, prefix, n);
	return 0;
}

int store_scan_open(struct scan *sc, struct kx_store *s, struct kx_view *v, const void *prefix, size_t n)
{
	return scan_open_with(sc, s, v, prefix, n, NULL, 0, true);
}

int store_scan_open_through(struct scan *sc, struct kx_store *s, struct kx_view *v, const void *prefix, size_t n)
{
	return scan_open_with(sc, s, v, prefix, n, NULL, 0, false);
}

void store_scan_close(struct scan *sc)
{
	if (sc->it)
		rocksdb_iter_destroy(sc->it);
	if (sc->ro)
		rocksdb_readoptions_destroy(sc->ro);
}

/* The iteration's error (-EUCLEAN: a damaged file, -EIO: an unreadable one), else 0 */
static int iter_status(rocksdb_iterator_t *it)
{
	char *err = NULL;
	rocksdb_iter_get_error(it, &err);
	int r = store_errno(err);
	rocksdb_free(err);
	return r;
}

int store_scan_status(struct scan *sc)
{
	return iter_status(sc->it);
}

/*
 * Every key `tag` + `d` + …, of exactly `keylen` bytes (any other length is damage: -EIO), in key
 * order; fn gets the key, the digest its last 32 bytes hold (the run, in both indexes) and the
 * entry's value (vn bytes).
 */
typedef int (*digest_key_fn)(void *ctx, const unsigned char *key, const struct kx_digest *last, const char *val,
			     size_t vn);

static int each_digest_key(struct kx_store *s, struct kx_view *v, unsigned char tag, const struct kx_digest *d,
			   size_t keylen, digest_key_fn fn, void *ctx)
{
	unsigned char p[33] = { tag };
	memcpy(p + 1, d->b, 32);
	struct scan sc;
	int r = store_scan_open(&sc, s, v, p, sizeof(p));
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn;
		const unsigned char *k = (const unsigned char *)rocksdb_iter_key(sc.it, &kn);
		if (kn != keylen) {
			r = -EIO;
			break;
		}
		struct kx_digest last;
		memcpy(last.b, k + keylen - 32, 32);
		size_t vn;
		const char *val = rocksdb_iter_value(sc.it, &vn);
		r = fn(ctx, k, &last, val, vn);
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r;
}

struct each_ctx {
	void *fn;
	void *ctx;
	bool damaged; /* a record did not decode: passed over, and -EBADMSG at the end */
};

struct group_runs {
	struct kx_store *s;
	struct kx_view *v;
	kx_group_run_fn fn;
	void *ctx;
};

/* The record of a rank-index entry of run `run` whose value is val. */
static int index_entry_run(struct kx_store *s, struct kx_view *v, const struct kx_digest *run, const char *val,
			   size_t vn, struct kx_run_rec *ret)
{
	/* no copy (an older store), or one that does not decode: the run's own record serves, and
	 * `kindex verify` reports the entry */
	int r = vn ? store_run_decode(val, vn, ret) : -EINVAL;
	if (r < 0)
		r = kx_store_get_run(s, v, run, ret);
	if (r == -ENOENT)
		r = -EIO; /* an index entry for a run that is not there */
	if (r == 0)
		ret->run = *run;
	return r;
}

static int group_run_key(void *ctx, const unsigned char *key, const struct kx_digest *run, const char *val,
			 size_t vn)
{
	struct group_runs *g = ctx;
	struct kx_run_rec x;
	int r = index_entry_run(g->s, g->v, run, val, vn, &x);
	return r < 0 ? r : g->fn(g->ctx, &x, key[33] == 0); /* class 0: ranked */
}

int kx_store_group_runs(struct kx_store *s, struct kx_view *v, const struct kx_digest *group,
			kx_group_run_fn fn, void *ctx)
{
	struct group_runs g = { s, v, fn, ctx };
	return each_digest_key(s, v, T_INDEX, group, INDEX_KEY_LEN, group_run_key, &g);
}

/* A scan of the entries tagged `tag` of the groups whose key's first byte is in
 * [256 part / parts, 256 (part + 1) / parts), not filling the block cache (a pass over all). */
static int scan_part_open(struct scan *sc, struct kx_store *s, struct kx_view *v, unsigned char tag, unsigned part,
			  unsigned parts)
{
	if (!parts || part >= parts || parts > 256)
		return -EINVAL;
	unsigned char lo[2] = { tag, (unsigned char)(256 * part / parts) };
	unsigned char hi[2] = { tag, (unsigned char)(256 * (part + 1) / parts) }, end = tag + 1;
	bool last = part + 1 == parts;
	return scan_open_with(sc, s, v, lo, part ? 2 : 1, last ? &end : hi, last ? 1 : 2, false);
}

int kx_store_each_group_run(struct kx_store *s, struct kx_view *v, unsigned part, unsigned parts, kx_index_run_fn fn,
			    void *ctx)
{
	struct scan sc;
	int r = scan_part_open(&sc, s, v, T_INDEX, part, parts);
	if (r < 0)
		return r;
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn, vn;
		const unsigned char *k = (const unsigned char *)rocksdb_iter_key(sc.it, &kn);
		if (kn != INDEX_KEY_LEN) {
			r = -EIO;
			break;
		}
		struct kx_digest group, run;
		memcpy(group.b, k + 1, 32);
		memcpy(run.b, k + INDEX_KEY_LEN - 32, 32);
		const char *val = rocksdb_iter_value(sc.it, &vn);
		struct kx_run_rec x;
		if ((r = index_entry_run(s, v, &run, val, vn, &x)) < 0)
			break;
		r = fn(ctx, &group, &x, k[33] == 0);
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r;
}

bool kx_run_newer(int64_t a_ns, const struct kx_digest *a, int64_t b_ns, const struct kx_digest *b)
{
	if (a_ns != b_ns)
		return a_ns > b_ns;
	return memcmp(a->b, b->b, 32) > 0;
}

int store_currents_add(struct currents *c, const struct kx_run_rec *x)
{
	if (KX_GROW(c->v, c->cap, c->len, 16) < 0)
		return -ENOMEM;
	store_current_of(x, &c->v[c->len++]);
	return 0;
}

int kx_run_order(const char *a_impl, int64_t a_ns, const struct kx_digest *a, const char *b_impl, int64_t b_ns,
		 const struct kx_digest *b)
{
	int c = strcmp(a_impl, b_impl);
	return c ? c : kx_run_newer(a_ns, a, b_ns, b) ? -1 : kx_run_newer(b_ns, b, a_ns, a) ? 1 : 0;
}

static int impl_newest_first(const void *x, const void *y)
{
	const struct kx_current_rec *a = x, *b = y;
	return kx_run_order(a->impl, a->observed_ns, &a->run, b->impl, b->observed_ns, &b->run);
}

int store_currents_flush(struct currents *c, const struct kx_digest *group, kx_current_fn fn, void *ctx)
{
	if (c->len) /* (qsort's array may not be NULL, even empty) */
		qsort(c->v, c->len, sizeof(*c->v), impl_newest_first);
	int r = 0;
	for (size_t i = 0; i < c->len && r == 0; i++)
		if (i == 0 || strcmp(c->v[i].impl, c->v[i - 1].impl) != 0)
			r = fn(ctx, group, &c->v[i]);
	c->len = 0;
	return r;
}

void store_currents_release(struct currents *c)
{
	free(c->v);
	*c = (struct currents){ 0 };
}

struct from_index {
	kx_current_fn fn;
	void *ctx;
	bool have_group;
	struct kx_digest group;
	struct currents c;
};

static int from_index_run(void *ctx, const struct kx_digest *group, const struct kx_run_rec *x, bool ranked)
{
	struct from_index *f = ctx;
	int r = 0;
	if (f->have_group && !kx_digest_equal(&f->group, group))
		r = store_currents_flush(&f->c, &f->group, f->fn, f->ctx);
	f->group = *group;
	f->have_group = true;
	return r < 0 || !ranked ? r : store_currents_add(&f->c, x);
}

int store_currents_from_index(struct kx_store *s, struct kx_view *v, unsigned part, unsigned parts,
			      kx_current_fn fn, void *ctx)
{
	struct from_index f = { .fn = fn, .ctx = ctx };
	int r = kx_store_each_group_run(s, v, part, parts, from_index_run, &f);
	if (r == 0 && f.have_group)
		r = store_currents_flush(&f.c, &f.group, fn, ctx);
	store_currents_release(&f.c);
	return r;
}

int kx_store_each_current(struct kx_store *s, struct kx_view *v, unsigned part, unsigned parts, kx_current_fn fn,
			  void *ctx)
{
	if (!s->current_index)
		return store_currents_from_index(s, v, part, parts, fn, ctx);
	struct scan sc;
	int r = scan_part_open(&sc, s, v, T_CURRENT, part, parts);
	if (r < 0)
		return r;
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn, vn;
		const char *k = rocksdb_iter_key(sc.it, &kn);
		const char *val = rocksdb_iter_value(sc.it, &vn);
		struct kx_digest group;
		struct kx_current_rec c;
		if (kn <= 33 || kn - 33 >= sizeof(c.impl) || store_current_decode(val, vn, &c) < 0) {
			r = -EIO; /* `kindex verify` names it */
			break;
		}
		memcpy(group.b, k + 1, 32);
		memcpy(c.impl, k + 33, kn - 33);
		c.impl[kn - 33] = '\0';
		r = fn(ctx, &group, &c);
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r;
}

static int waiting_key(void *ctx, const unsigned char *key, const struct kx_digest *run, const char *val, size_t vn)
{
	struct each_ctx *e = ctx;
	return ((kx_digest_fn)e->fn)(e->ctx, run);
}

int kx_store_each_waiting(struct kx_store *s, struct kx_view *v, const struct kx_digest *doc, kx_digest_fn fn,
			  void *ctx)
{
	if (!s->waiting_index)
		return -EOPNOTSUPP; /* a schema-1 store read as it is: the index may lack runs */
	struct each_ctx e = { .fn = (void *)fn, .ctx = ctx };
	return each_digest_key(s, v, T_WAIT, doc, WAIT_KEY_LEN, waiting_key, &e);
}

#define ALIAS_KEY_LEN PAIR_KEY_LEN

static int alias_key(void *ctx, const unsigned char *key, const struct kx_digest *alias, const char *val, size_t vn)
{
	struct each_ctx *e = ctx;
	return ((kx_digest_fn)e->fn)(e->ctx, alias);
}

int kx_store_each_alias(struct kx_store *s, struct kx_view *v, const struct kx_digest *run, kx_digest_fn fn,
			void *ctx)
{
	struct each_ctx e = { .fn = (void *)fn, .ctx = ctx };
	return each_digest_key(s, v, T_ALIAS, run, ALIAS_KEY_LEN, alias_key, &e);
}

int kx_store_each_announcer(struct kx_store *s, struct kx_view *v, const struct kx_digest *d, kx_digest_fn fn,
			    void *ctx)
{
	struct each_ctx e = { .fn = (void *)fn, .ctx = ctx };
	return each_digest_key(s, v, T_ANNOUNCED, d, PAIR_KEY_LEN, alias_key, &e); /* a pair, as 'A' is */
}

static int count_digest(void *ctx, const struct kx_digest *d)
{
	(*(size_t *)ctx)++;
	return 0;
}

int kx_store_count_announcers(struct kx_store *s, struct kx_view *v, const struct kx_digest *d, size_t *ret)
{
	*ret = 0;
	return kx_store_each_announcer(s, v, d, count_digest, ret);
}

int kx_store_each_alias_of_any(struct kx_store *s, struct kx_view *v, kx_alias_fn fn, void *ctx)
{
	unsigned char tag = T_ALIAS;
	struct scan sc;
	int r = store_scan_open(&sc, s, v, &tag, 1);
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn;
		const unsigned char *k = (const unsigned char *)rocksdb_iter_key(sc.it, &kn);
		struct kx_digest run, alias;
		if (kn != ALIAS_KEY_LEN) {
			r = -EIO;
			break;
		}
		memcpy(run.b, k + 1, 32);
		memcpy(alias.b, k + 33, 32);
		r = fn(ctx, &run, &alias);
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r;
}

static int signature_key(void *ctx, const unsigned char *key, const struct kx_digest *id, const char *val, size_t vn)
{
	struct each_ctx *e = ctx;
	if (vn != SIGNATURE_VALUE_LEN)
		return -EBADMSG;
	const uint8_t *v = (const uint8_t *)val;
	return ((kx_signature_fn)e->fn)(e->ctx, id, v, v + KX_ED25519_PUB_LEN);
}

int kx_store_each_signature(struct kx_store *s, struct kx_view *v, const struct kx_digest *run, kx_signature_fn fn,
			    void *ctx)
{
	struct each_ctx e = { .fn = (void *)fn, .ctx = ctx };
	return each_digest_key(s, v, T_SIGNATURE, run, PAIR_KEY_LEN, signature_key, &e);
}

static int key_record(void *ctx, const uint8_t key[32], const char *val, size_t vn)
{
	struct each_ctx *e = ctx;
	struct kx_key_rec k;
	if (store_key_rec_decode(val, vn, &k) < 0)
		return -EBADMSG;
	memcpy(k.id.b, key, 32);
	return ((kx_key_fn)e->fn)(e->ctx, &k);
}

int kx_store_each_key(struct kx_store *s, struct kx_view *v, kx_key_fn fn, void *ctx)
{
	struct each_ctx e = { .fn = (void *)fn, .ctx = ctx };
	return store_each_record(s, v, T_KEY, key_record, &e);
}

/* Whether view v holds any key of the family `tag`: one seek. */
static int any_key(struct kx_store *s, struct kx_view *v, unsigned char tag, bool *ret)
{
	struct scan sc;
	int r = store_scan_open(&sc, s, v, &tag, 1);
	bool any = r == 0 && rocksdb_iter_valid(sc.it);
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	if (r == 0)
		*ret = any;
	return r;
}

int kx_store_any_signature(struct kx_store *s, struct kx_view *v, bool *ret)
{
	return any_key(s, v, T_SIGNATURE, ret);
}

int kx_store_any_attestation(struct kx_store *s, struct kx_view *v, bool *ret)
{
	return any_key(s, v, T_ATTESTATION, ret);
}

static int attestation_key(void *ctx, const unsigned char *key, const struct kx_digest *att, const char *val,
			   size_t vn)
{
	struct each_ctx *e = ctx;
	if (vn != ATTESTATION_VALUE_LEN || (uint8_t)val[0] > KX_ATTEST_NOTE)
		return -EBADMSG;
	struct kx_attestation_ref a = { .digest = *att, .type = (enum kx_attestation_type)val[0],
					.created_ns = (int64_t)(store_get_u64(key + 33) ^ (1ull << 63)) };
	memcpy(a.by.b, val + 1, 32);
	return ((kx_attestation_fn)e->fn)(e->ctx, &a);
}

int kx_store_each_attestation(struct kx_store *s, struct kx_view *v, const struct kx_digest *run,
			      kx_attestation_fn fn, void *ctx)
{
	struct each_ctx e = { .fn = (void *)fn, .ctx = ctx };
	return each_digest_key(s, v, T_ATTESTATION, run, ATTESTATION_KEY_LEN, attestation_key, &e);
}

struct run_sigs {
	struct kx_store *s;
	struct kx_view *v;
	uint32_t count;
	bool trusted;
};

static int run_sig(void *ctx, const struct kx_digest *key, const uint8_t *pub, const uint8_t *sig)
{
	struct run_sigs *x = ctx;
	struct kx_key_rec k;
	x->count++;
	if (x->trusted)
		return 0;
	int r = kx_store_get_key(x->s, x->v, key, &k);
	if (r == 0 && !k.revoked_ns)
		x->trusted = true;
	return r == -ENOENT ? 0 : r;
}

int kx_store_run_signatures(struct kx_store *s, struct kx_view *v, const struct kx_digest *run, uint32_t *ret_count,
			    bool *ret_trusted)
{
	struct run_sigs x = { s, v, 0, false };
	int r = kx_store_each_signature(s, v, run, run_sig, &x);
	*ret_count = x.count;
	*ret_trusted = x.trusted;
	return r < 0 ? r : 0;
}

int kx_store_each_dir_mtime(struct kx_store *s, struct kx_view *v, kx_mtime_fn fn, void *ctx)
{
	unsigned char tag = T_MTIME;
	struct scan sc;
	int r = store_scan_open(&sc, s, v, &tag, 1);
	char path[4096];
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn, vn;
		const char *k = rocksdb_iter_key(sc.it, &kn);
		const char *val = rocksdb_iter_value(sc.it, &vn);
		if (vn != 8 || kn < 2 || kn > sizeof(path)) {
			r = -EIO;
			break;
		}
		memcpy(path, k + 1, kn - 1);
		path[kn - 1] = '\0';
		r = fn(ctx, path, (int64_t)store_get_u64((const unsigned char *)val));
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r;
}

int kx_store_tree_list(struct kx_store *s, struct kx_view *v, const char *const *prefix,
		       size_t depth, kx_tree_fn fn, void *ctx)
{
	unsigned char p[1024];
	size_t n = 0;
	p[n++] = T_TREE;
	for (size_t i = 0; i < depth; i++) {
		size_t l = strlen(prefix[i]);
		if (n + l + 1 > sizeof(p) - 2)
			return -ENOENT;
		memcpy(p + n, prefix[i], l + 1);
		n += l + 1;
	}
	struct scan sc;
	int r = store_scan_open(&sc, s, v, p, n);
	while (r == 0 && rocksdb_iter_valid(sc.it)) {
		size_t kn, vn;
		const unsigned char *k = (const unsigned char *)rocksdb_iter_key(sc.it, &kn);
		const unsigned char *name = k + n;
		const unsigned char *nul = memchr(name, '\0', kn - n);
		if (!nul) {
			r = -EIO;
			break;
		}
		char comp[KX_NAME_MAX];
		size_t cl = (size_t)(nul - name);
		if (cl >= sizeof(comp)) {
			r = -EIO;
			break;
		}
		memcpy(comp, name, cl);
		comp[cl] = '\0';
		if (depth >= 3) {
			const unsigned char *val = (const unsigned char *)rocksdb_iter_value(sc.it, &vn);
			if (kn != n + cl + 1 + 32 || vn != 33) {
				r = -EIO;
				break;
			}
			struct kx_digest w, g;
			memcpy(w.b, nul + 1, 32);
			memcpy(g.b, val, 32);
			r = fn(ctx, comp, &w, &g, val[32] & 1);
			rocksdb_iter_next(sc.it);
		} else {
			r = fn(ctx, comp, NULL, NULL, false);
			/* skip everything under this component: seek to "<prefix><comp>\x01" */
			unsigned char next[1040];
			memcpy(next, k, n + cl);
			next[n + cl] = 0x01;
			rocksdb_iter_seek(sc.it, (const char *)next, n + cl + 1);
		}
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r;
}

int kx_store_tree_groups(struct kx_store *s, struct kx_view *v, kx_tree_group_fn fn, void *ctx)
{
	unsigned char p = T_TREE;
	struct scan sc;
	int r = store_scan_open(&sc, s, v, &p, 1);
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn, vn;
		const unsigned char *k = (const unsigned char *)rocksdb_iter_key(sc.it, &kn), *end = k + kn;
		const unsigned char *val = (const unsigned char *)rocksdb_iter_value(sc.it, &vn);
		/* "T" kernel \0 pass \0 gpu \0 slug \0 workload digest → group key, flags (keys.c) */
		char comp[4][KX_NAME_MAX];
		const unsigned char *at = k + 1;
		for (int i = 0; i < 4 && r == 0; i++) {
			const unsigned char *nul = at < end ? memchr(at, '\0', (size_t)(end - at)) : NULL;
			if (!nul || (size_t)(nul - at) >= KX_NAME_MAX) {
				r = -EIO;
				break;
			}
			memcpy(comp[i], at, (size_t)(nul - at));
			comp[i][nul - at] = '\0';
			at = nul + 1;
		}
		if (r == 0 && (end - at != 32 || vn != 33))
			r = -EIO;
		if (r < 0)
			break;
		struct kx_digest w, g;
		memcpy(w.b, at, 32);
		memcpy(g.b, val, 32);
		r = fn(ctx, comp[0], comp[1], comp[2], comp[3], &w, &g, val[32] & 1);
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r;
}

int store_each_record(struct kx_store *s, struct kx_view *v, unsigned char tag, record_fn fn, void *ctx)
{
	struct scan sc;
	int r = store_scan_open(&sc, s, v, &tag, 1);
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn, vn;
		const char *k = rocksdb_iter_key(sc.it, &kn);
		const char *val = rocksdb_iter_value(sc.it, &vn);
		r = kn == 33 ? fn(ctx, (const uint8_t *)k + 1, val, vn) : -EIO;
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r;
}

static int run_record(void *ctx, const uint8_t key[32], const char *val, size_t vn)
{
	struct each_ctx *e = ctx;
	struct kx_run_rec x;
	if (store_run_decode(val, vn, &x) < 0) {
		e->damaged = true;
		return 0;
	}
	memcpy(x.run.b, key, 32);
	return ((kx_run_fn)e->fn)(e->ctx, &x);
}

int kx_store_each_run(struct kx_store *s, struct kx_view *v, kx_run_fn fn, void *ctx)
{
	struct each_ctx e = { .fn = (void *)fn, .ctx = ctx };
	int r = store_each_record(s, v, T_RUN, run_record, &e);
	return r == 0 && e.damaged ? -EBADMSG : r;
}

static const unsigned char record_tags[] = { T_DOC, T_RUN, T_GROUP, T_ARTIFACT };

int kx_store_find_bits(struct kx_store *s, struct kx_view *v, enum kx_record kind,
		       const uint8_t *prefix, unsigned bits, struct kx_digest *ret)
{
	if (bits < 8 || bits > 256 || kind > KX_RECORD_ARTIFACT)
		return -ENOENT;
	unsigned char p[33] = { record_tags[kind] };
	size_t whole = bits / 8;
	memcpy(p + 1, prefix, whole);
	unsigned rest = bits % 8;
	unsigned char mask = (unsigned char)(0xff00 >> rest);
	struct scan sc = { 0 };
	rocksdb_iterator_t *it;
	if (v) { /* the view's own iterator (no upper bound: the loop stops past the prefix) */
		pthread_mutex_lock(&v->seek_lock);
		if (!v->seek_it)
			v->seek_it = rocksdb_create_iterator(v->db, v->ro);
		it = v->seek_it;
		rocksdb_iter_seek(it, (const char *)p, 1 + whole);
	} else {
		store_scan_open(&sc, s, NULL, p, 1 + whole); /* cannot fail: the prefix is short */
		it = sc.it;
	}
	struct kx_digest d;
	int found = 0;
	for (; rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		size_t kn;
		const unsigned char *k = (const unsigned char *)rocksdb_iter_key(it, &kn);
		if (kn < 1 + whole || memcmp(k, p, 1 + whole) != 0)
			break;
		if (kn != 33)
			continue;
		if (rest && (k[1 + whole] & mask) != (prefix[whole] & mask)) {
			if ((k[1 + whole] & mask) > (prefix[whole] & mask))
				break; /* keys are sorted: no later one can match */
			continue;
		}
		if (++found > 1)
			break;
		memcpy(d.b, k + 1, 32);
	}
	int r = iter_status(it);
	if (v)
		pthread_mutex_unlock(&v->seek_lock);
	store_scan_close(&sc);
	if (r < 0)
		return r;
	if (found == 1)
		*ret = d;
	return found == 1 ? 0 : found ? -ENOTUNIQ : -ENOENT;
}

int kx_store_find_run_prefix(struct kx_store *s, struct kx_view *v, const char *hex,
			     struct kx_digest *ret)
{
	size_t n = strlen(hex);
	uint8_t b[32] = { 0 };
	if (n < 2 || n > 64)
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		char c = hex[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return -ENOENT;
		b[i / 2] |= (uint8_t)(i % 2 ? d : d << 4);
	}
	return kx_store_find_bits(s, v, KX_RECORD_RUN, b, (unsigned)n * 4, ret);
}

static int digest_record(void *ctx, const uint8_t key[32], const char *val, size_t vn)
{
	struct each_ctx *e = ctx;
	struct kx_digest d;
	memcpy(d.b, key, 32);
	return ((kx_digest_fn)e->fn)(e->ctx, &d);
}

int kx_store_each_digest(struct kx_store *s, struct kx_view *v, enum kx_record kind, kx_digest_fn fn,
			 void *ctx)
{
	if (kind > KX_RECORD_ARTIFACT)
		return -EINVAL;
	struct each_ctx e = { .fn = (void *)fn, .ctx = ctx };
	return store_each_record(s, v, record_tags[kind], digest_record, &e);
}
