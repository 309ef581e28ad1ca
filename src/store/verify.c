// SPDX-License-Identifier: MIT
/*
 * kindex verify: recompute every digest and cross-check every index against the records, so a
 * store damaged by a bug, a bad disk or a hand edit is caught rather than served. Each prefix is
 * scanned once; cross-references are point lookups (bloom filters make misses cheap).
 * Problems name the key ("run sha256:…", "rank-index of group sha256:…") and what disagrees.
 */
#include "private.h"

#include "kx/canon.h"
#include "kx/manifest.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vctx {
	struct kx_store *s;
	struct kx_problems *pr;
	uint64_t checked;
	uint64_t runs, docs, groups;
	uint64_t currents; /* 'C' entries met in the groups' checks (check_current) */
	/* kx_store_verify_since: only what the commits after store generation `since` added, and the
	 * documents and groups (sorted sets, digest order) of those runs */
	uint64_t since;
	uint64_t since_table; /* and only the tables numbered above it read through (check_tables) */
	struct dset {
		struct kx_digest *v;
		size_t len, cap;
		bool sorted;
	} new_docs, new_groups;
	struct kx_current_rec *want; /* a group's current runs, worked out from its runs */
	size_t nwant, cap_want;
	struct store_names names; /* every name met and its component: no two share a path */
	/* the live tables (rocksdb_livefiles), each named once when it cannot be read (damaged_table) */
	const rocksdb_livefiles_t *tables;
	bool *named;
	size_t damaged;     /* tables named */
	uint64_t unreadable; /* point reads that met a damaged table: no record is called missing for them */
};

static void problem(struct vctx *c, const char *where, const struct kx_digest *d, const char *rule,
		    const char *fmt, ...) KX_PRINTF(5, 6);

static void problem(struct vctx *c, const char *where, const struct kx_digest *d, const char *rule,
		    const char *fmt, ...)
{
	char ptr[128], msg[512];
	if (d) {
		char hex[KX_DIGEST_STR_MAX];
		kx_digest_format(d, hex);
		snprintf(ptr, sizeof(ptr), "%s %s", where, hex);
	} else {
		snprintf(ptr, sizeof(ptr), "%s", where);
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	kx_problems_add(c->pr, 0, 0, ptr, rule, "%s", msg);
}

/* A point read's result: a damaged table (-EUCLEAN) is counted, and the scan of the key's family
 * names the table, so the record is not also called missing. */
static bool unreadable(struct vctx *c, int r)
{
	if (r != -EUCLEAN)
		return false;
	c->unreadable++;
	return true;
}

static bool exists(struct vctx *c, const struct key *k)
{
	int r = store_get_raw(c->s, c->s->ro, k->b, k->len, NULL);
	return r == 0 || unreadable(c, r);
}

/* ---- tables that cannot be read --------------------------------------------------------------- */

/* What a key is, as a problem names it: "document sha256:…", "rank-index entry of group sha256:…" */
static void key_name_of(char *out, size_t cap, const unsigned char *k, size_t n)
{
	static const struct {
		unsigned char tag;
		const char *what;
	} digest_keys[] = {
		{ T_DOC, "document" },
		{ T_RUN, "run" },
		{ T_GROUP, "group" },
		{ T_INDEX, "rank-index entry of group" },
		{ T_CURRENT, "current-run entry of group" },
		{ T_WAIT, "waiting-index entry of document" },
		{ T_ALIAS, "alias entry of run" },
		{ T_SIGNATURE, "signature entry of run" },
		{ T_SIGNED, "signed-runs entry of key" },
		{ T_KEY, "key" },
		{ T_ATTESTATION, "attestation entry of run" },
	};
	for (size_t i = 0; n >= 33 && i < KX_ARRAY_SIZE(digest_keys); i++) {
		if (k[0] != digest_keys[i].tag)
			continue;
		struct kx_digest d;
		char hex[KX_DIGEST_STR_MAX];
		memcpy(d.b, k + 1, 32);
		kx_digest_format(&d, hex);
		snprintf(out, cap, "%s %s", digest_keys[i].what, hex);
		return;
	}
	/* a key of names (S, T, M, N) or of the store's own ("\0gen"): its bytes, NULs as '/' */
	char text[64];
	size_t m = 0;
	bool own = n && k[0] == 0;
	for (size_t i = own; i < n && m < sizeof(text) - 4; i++)
		text[m++] = k[i] == 0 ? '/' : k[i] < 0x20 || k[i] >= 0x7f ? '?' : (char)k[i];
	if (m + own < n)
		text[m++] = '.', text[m++] = '.', text[m++] = '.';
	text[m] = '\0';
	snprintf(out, cap, "%s '%s'", own ? "the store's key" : "key", text);
}

/* What the keys from tag lo to tag hi are (keys.h): "documents, groups". */
static void families(char *out, size_t cap, unsigned char lo, unsigned char hi)
{
	static const struct {
		unsigned char tag;
		const char *what;
	} tags[] = {
		{ 0, "the store's schema and counters" },
		{ T_ALIAS, "aliases" },
		{ T_CURRENT, "current-run entries" },
		{ T_DOC, "documents" },
		{ T_GROUP, "groups" },
		{ T_INDEX, "rank-index entries" },
		{ T_MTIME, "directory times" },
		{ T_NAME, "name claims" },
		{ T_RUN, "runs" },
		{ T_SOURCE, "source-index entries" },
		{ T_TREE, "path-index entries" },
		{ T_WAIT, "waiting-index entries" },
		{ T_SIGNED, "signed-runs entries" },
		{ T_SIGNATURE, "signatures" },
		{ T_KEY, "trusted keys" },
		{ T_ATTESTATION, "attestations" },
	};
	size_t n = 0;
	out[0] = '\0';
	for (size_t i = 0; i < KX_ARRAY_SIZE(tags); i++)
		if (tags[i].tag >= lo && tags[i].tag <= hi && n < cap)
			n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? ", " : "", tags[i].what);
	if (!n)
		snprintf(out, cap, "no key family kindex writes");
}

/*
 * The live table RocksDB's message `err` names ("… in /store/000013.sst offset 0 size 1748"), named
 * once as a problem: its file, the keys it holds and what they are. Its index in c->tables, or -1
 * when the message names no live table (named as a problem of the store then).
 */
static int damaged_table(struct vctx *c, const char *err)
{
	const char *sst = NULL;
	for (const char *p = err; (p = strstr(p, ".sst")); p++)
		sst = p;
	const char *name = sst;
	while (name && name > err && name[-1] >= '0' && name[-1] <= '9')
		name--;
	int found = -1;
	for (int i = 0; name && name < sst && c->tables && i < rocksdb_livefiles_count(c->tables); i++) {
		const char *f = rocksdb_livefiles_name(c->tables, i);
		const char *base = strrchr(f, '/') ? strrchr(f, '/') + 1 : f;
		if (strlen(base) == (size_t)(sst + 4 - name) && memcmp(base, name, (size_t)(sst + 4 - name)) == 0)
			found = i;
	}
	if (found < 0) {
		c->damaged++;
		kx_problems_add(c->pr, 0, 0, "store", "store-table",
				"a table cannot be read, and what is after it in this key family is not checked: %s", err);
		return -1;
	}
	if (c->named[found])
		return found;
	c->named[found] = true;
	c->damaged++;
	size_t ln, hn;
	const unsigned char *lo = (const unsigned char *)rocksdb_livefiles_smallestkey(c->tables, found, &ln);
	const unsigned char *hi = (const unsigned char *)rocksdb_livefiles_largestkey(c->tables, found, &hn);
	char from[160], to[160], what[400], ptr[64];
	key_name_of(from, sizeof(from), lo, ln);
	key_name_of(to, sizeof(to), hi, hn);
	families(what, sizeof(what), ln ? lo[0] : 0, hn ? hi[0] : 0xff);
	snprintf(ptr, sizeof(ptr), "table %.*s", (int)(sst + 4 - name), name);
	kx_problems_add(c->pr, 0, 0, ptr, "store-table",
			"cannot be read, so what it holds is not checked: %s, from %s to %s (level %d, %zu bytes); "
			"RocksDB says: %s",
			what, from, to, rocksdb_livefiles_level(c->tables, found), rocksdb_livefiles_size(c->tables, found),
			err);
	return found;
}

/* Whether a table named damaged may hold keys with prefix p (n bytes), or one was met that is not
 * among the live tables: a scan of the prefix through RocksDB's iterator can end silently at such
 * a table (table.cc), so a count or list read by one is not compared. */
static bool damaged_under(const struct vctx *c, const unsigned char *p, size_t n)
{
	size_t named = 0;
	for (int i = 0; c->damaged && i < rocksdb_livefiles_count(c->tables); i++) {
		if (!c->named[i])
			continue;
		named++;
		size_t ln, hn;
		const unsigned char *lo = (const unsigned char *)rocksdb_livefiles_smallestkey(c->tables, i, &ln);
		const unsigned char *hi = (const unsigned char *)rocksdb_livefiles_largestkey(c->tables, i, &hn);
		int dl = memcmp(lo, p, ln < n ? ln : n), dh = memcmp(hi, p, hn < n ? hn : n);
		if (dl <= 0 && (dh > 0 || (dh == 0 && hn >= n)))
			return true; /* lo <= the prefix's first key, hi >= it or inside it */
	}
	return named < c->damaged;
}

/*
 * A scan of verify's that goes on past damage. RocksDB 7.8 ends an iteration that steps (Next) into
 * a block it cannot read as if that were the end, with no error; a seek does report it. So each end
 * is confirmed by a seek to the key after the last one read; a damaged table that a seek meets is
 * named (damaged_table) and the scan goes on after the last key it holds.
 */
struct vscan {
	struct scan sc;
	unsigned char last[sizeof(((struct key *)0)->b) + 1]; /* the entry read last, and room for a \0 */
	size_t last_len;
	bool any;
	unsigned char past[sizeof(((struct key *)0)->b) + 1]; /* where it went on after a table, last */
	size_t past_len;
	bool damaged; /* it met a damaged table: what it did not read is not called missing */
};

/* Whether key a (an bytes) sorts after b (bn bytes), as RocksDB's bytewise comparator sorts. */
static bool key_after(const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
	int d = memcmp(a, b, an < bn ? an : bn);
	return d > 0 || (d == 0 && an > bn);
}

/* 1 at an entry, 0 at the end, or a negative errno; `sought`: the iterator was just positioned by
 * a seek (whose end is an end). */
static int vscan_at(struct vctx *c, struct vscan *vs, bool sought)
{
	for (;;) {
		rocksdb_iterator_t *it = vs->sc.it;
		if (rocksdb_iter_valid(it)) {
			size_t kn;
			const char *k = rocksdb_iter_key(it, &kn);
			if (kn < sizeof(vs->last)) {
				memcpy(vs->last, k, kn);
				vs->last_len = kn;
				vs->any = true;
			}
			return 1;
		}
		char *err = NULL;
		rocksdb_iter_get_error(it, &err);
		if (!err && (sought || !vs->any))
			return 0;
		if (!err) {
			vs->last[vs->last_len] = 0; /* the smallest key after the last one */
			rocksdb_iter_seek(it, (const char *)vs->last, vs->last_len + 1);
			sought = true;
			continue;
		}
		int r = store_errno(err);
		int t = r == -EUCLEAN ? damaged_table(c, err) : -1;
		rocksdb_free(err);
		if (r != -EUCLEAN)
			return r;
		vs->damaged = true;
		size_t hn;
		const char *hi = t < 0 ? NULL : rocksdb_livefiles_largestkey(c->tables, t, &hn);
		if (!hi || hn + 1 > sizeof(vs->past) ||
		    (vs->past_len && !key_after((const unsigned char *)hi, hn + 1, vs->past, vs->past_len)))
			return 0; /* no table to go past, or not one further on: the rest of this scan is unread */
		memcpy(vs->past, hi, hn);
		vs->past[hn] = 0;
		vs->past_len = hn + 1;
		rocksdb_iter_seek(it, (const char *)vs->past, vs->past_len);
		sought = true;
	}
}

static int vscan_open(struct vctx *c, struct vscan *vs, const void *prefix, size_t n)
{
	vs->last_len = vs->past_len = 0;
	vs->any = vs->damaged = false;
	int r = store_scan_open(&vs->sc, c->s, NULL, prefix, n);
	return r < 0 ? r : vscan_at(c, vs, true);
}

static int vscan_next(struct vctx *c, struct vscan *vs)
{
	rocksdb_iter_next(vs->sc.it);
	return vscan_at(c, vs, false);
}

static int dset_add(struct dset *d, const struct kx_digest *x)
{
	if (KX_GROW(d->v, d->cap, d->len, 256) < 0)
		return -ENOMEM;
	d->v[d->len++] = *x;
	d->sorted = false;
	return 0;
}

/* d sorted (digest order), so that its equal members are neighbours. */
static void dset_sort(struct dset *d)
{
	if (!d->sorted && d->len)
		qsort(d->v, d->len, sizeof(*d->v), kx_digest_cmp);
	d->sorted = true;
}

/* Whether x is to be checked: every record in a whole verify, only those of the set in one since
 * a generation. */
static bool wanted(struct vctx *c, struct dset *d, const struct kx_digest *x)
{
	if (!c->since)
		return true;
	if (!d->len)
		return false; /* (and qsort's, bsearch's array may not be NULL, even empty) */
	dset_sort(d);
	return bsearch(x, d->v, d->len, sizeof(*d->v), kx_digest_cmp) != NULL;
}

/* The document stored under key hashes to it (`doc`: its bytes, len). */
static void check_doc_bytes(struct vctx *c, struct kx_arena *a, const struct kx_digest *key, const char *v, size_t vn)
{
	struct kx_digest got;
	struct kx_json *doc = NULL;
	struct kx_json_error e;
	if (kx_json_parse(a, v, vn, 0, &doc, NULL, &e) < 0 || doc->type != KX_JSON_OBJECT) {
		problem(c, "document", key, "store-document", "stored bytes are not a JSON object");
	} else if (kx_digest_document(doc, &got) < 0 || !kx_digest_equal(&got, key)) {
		char g[KX_DIGEST_STR_MAX];
		kx_digest_format(&got, g);
		problem(c, "document", key, "digest-mismatch", "stored document hashes to %s", g);
	}
}

/*
 * In a verify since a generation whose older tables were read through before (since_table): the
 * documents the new runs name, each read by its key and hashed (one not stored is the run's
 * problem, check_run's). The documents are not counted then.
 */
static int check_new_docs(struct vctx *c)
{
	int r = 0;
	struct kx_arena *a = kx_arena_new();
	dset_sort(&c->new_docs);
	for (size_t i = 0; i < c->new_docs.len && r == 0; i++) {
		if (i && kx_digest_cmp(&c->new_docs.v[i - 1], &c->new_docs.v[i]) == 0)
			continue;
		struct key k;
		struct kx_buf raw = { 0 };
		store_key_digest(&k, T_DOC, &c->new_docs.v[i]);
		int got = store_get_raw(c->s, c->s->ro, k.b, k.len, &raw);
		if (got == 0) {
			c->checked++;
			check_doc_bytes(c, a, &c->new_docs.v[i], raw.ptr, raw.len);
		} else if (got != -ENOENT && !unreadable(c, got)) {
			r = got;
		}
		kx_buf_release(&raw);
	}
	kx_arena_free(a);
	return r;
}

static int check_docs(struct vctx *c)
{
	unsigned char p = T_DOC;
	struct vscan vs;
	int r = 0, at;
	struct kx_arena *a = kx_arena_new();
	for (at = vscan_open(c, &vs, &p, 1); at > 0 && r == 0; at = vscan_next(c, &vs)) {
		size_t kn, vn;
		const char *k = rocksdb_iter_key(vs.sc.it, &kn);
		const char *v = rocksdb_iter_value(vs.sc.it, &vn);
		c->docs++;
		struct kx_digest key = { 0 };
		if (kn != 33) {
			c->checked++;
			problem(c, "document key", NULL, "store-key", "a document key has %zu bytes, not 33", kn);
			continue;
		}
		memcpy(key.b, k + 1, 32);
		if (!wanted(c, &c->new_docs, &key))
			continue; /* read all the same: its block's checksum is checked, and it is counted */
		c->checked++;
		check_doc_bytes(c, a, &key, v, vn);
		if (kx_arena_used(a) > (64u << 20)) {
			kx_arena_free(a);
			a = kx_arena_new();
		}
	}
	if (r == 0 && at < 0)
		r = at;
	store_scan_close(&vs.sc);
	kx_arena_free(a);
	return r;
}

struct count_ctx {
	uint32_t ranked, unranked;
	struct currents cur;
};

static int count_run(void *ctx, const struct kx_run_rec *run, bool ranked)
{
	struct count_ctx *cc = ctx;
	if (ranked)
		cc->ranked++;
	else
		cc->unranked++;
	return ranked ? store_currents_add(&cc->cur, run) : 0;
}

static int want_current(void *ctx, const struct kx_digest *group, const struct kx_current_rec *x)
{
	struct vctx *c = ctx;
	if (KX_GROW(c->want, c->cap_want, c->nwant, 16) < 0)
		return -ENOMEM;
	c->want[c->nwant++] = *x;
	return 0;
}

/* One 'C' entry of group g against the current run it should hold (NULL: it should not be). */
static void check_entry(struct vctx *c, const struct kx_digest *g, const char *impl, const struct kx_current_rec *want,
			const char *val, size_t vn)
{
	struct kx_current_rec got;
	struct kx_buf b = { 0 };
	char run[KX_DIGEST_STR_MAX];
	if (!want) {
		problem(c, "current-run index of group", g, "store-index",
			"has an entry for %s, which has no ranked run in the group", impl);
	} else if (store_current_decode(val, vn, &got) < 0) {
		problem(c, "current-run index of group", g, "store-record",
			"the entry for %s (%zu bytes) does not decode: it holds the run's digest, observedAt, value "
			"and p20-p80 (docs/store.md)", impl, vn);
	} else if (!kx_digest_equal(&got.run, &want->run)) {
		kx_digest_format(&want->run, run);
		problem(c, "current-run index of group", g, "store-index",
			"names another run than %s's newest ranked one, %s", impl, run);
	} else if (store_current_encode(want, &b) < 0 || b.len != vn || memcmp(b.ptr, val, vn) != 0) {
		problem(c, "current-run index of group", g, "store-index",
			"the entry for %s differs from its run's record (value, p20-p80, unit or observedAt)", impl);
	}
	kx_buf_release(&b);
}

/* The 'C' entries of group g are its implementations' newest ranked runs, cc's, one each; with cc
 * NULL (its runs are in a damaged table) they are read, so their blocks are checked, and no more. */
static int check_current(struct vctx *c, const struct kx_digest *g, struct count_ctx *cc)
{
	c->nwant = 0;
	int r = cc ? store_currents_flush(&cc->cur, g, want_current, c) : 0;
	unsigned char p[33] = { T_CURRENT };
	memcpy(p + 1, g->b, 32);
	struct vscan vs;
	size_t i = 0;
	if (r < 0)
		return r;
	int at;
	for (at = vscan_open(c, &vs, p, sizeof(p)); at > 0; at = vscan_next(c, &vs)) {
		size_t kn, vn;
		const char *k = rocksdb_iter_key(vs.sc.it, &kn);
		const char *val = rocksdb_iter_value(vs.sc.it, &vn);
		char impl[KX_NAME_MAX];
		c->checked++;
		c->currents++;
		if (kn <= 33 || kn - 33 >= sizeof(impl)) {
			problem(c, "current-run index of group", g, "store-key", "a key has %zu bytes", kn);
			continue;
		}
		if (!cc)
			continue;
		memcpy(impl, k + 33, kn - 33);
		impl[kn - 33] = '\0';
		int order = -1;
		/* both in implementation name order: the runs the store lacks come first */
		for (; i < c->nwant && (order = strcmp(c->want[i].impl, impl)) < 0; i++)
			if (!vs.damaged)
				problem(c, "current-run index of group", g, "store-index", "has no entry for %s",
					c->want[i].impl);
		check_entry(c, g, impl, order == 0 ? &c->want[i] : NULL, val, vn);
		i += order == 0;
	}
	for (; i < c->nwant && !vs.damaged && at == 0; i++)
		problem(c, "current-run index of group", g, "store-index", "has no entry for %s", c->want[i].impl);
	r = at < 0 ? at : 0;
	store_scan_close(&vs.sc);
	return r;
}

static int check_group(void *ctx, const struct kx_group_rec *g)
{
	struct vctx *c = ctx;
	c->groups++;
	c->checked++;
	struct count_ctx cc = { 0 };
	int r = kx_store_group_runs(c->s, NULL, &g->key, count_run, &cc);
	unsigned char p[33] = { T_INDEX };
	memcpy(p + 1, g->key.b, 32);
	bool listed = !unreadable(c, r) && !damaged_under(c, p, sizeof(p));
	if (!listed)
		r = 0; /* its rank-index entries are in a damaged table, named already */
	else if (r == -EIO) /* an entry that does not decode: check_index names it */
		problem(c, "group", &g->key, "store-record", "its runs cannot be listed: a rank-index entry does not decode");
	else if (r < 0)
		return r;
	else if (cc.ranked != g->ranked || cc.unranked != g->unranked)
		problem(c, "group", &g->key, "store-count",
			"the record counts %u ranked and %u unranked runs, the rank index holds %u and %u",
			g->ranked, g->unranked, cc.ranked, cc.unranked);
	/* (a store of schema 2 opened read-only has no 'C' index yet: it gets one when opened to write) */
	r = r == 0 && c->s->current_index ? check_current(c, &g->key, listed ? &cc : NULL) : 0;
	store_currents_release(&cc.cur);
	if (r < 0)
		return r;
	char kernel[KX_NAME_MAX], pass[KX_NAME_MAX];
	if ((r = store_names_group(&c->names, g, kernel, pass)) < 0)
		return r;
	if (strcmp(kernel, g->kernel) != 0 || strcmp(pass, g->pass) != 0)
		problem(c, "group", &g->key, "store-name",
			"benchmark %s is kept under %s/%s, but its path is %s/%s (SPEC §2): a store of an older "
			"kindex, upgraded when opened to write", g->benchmark, g->kernel, g->pass, kernel, pass);
	struct key k;
	struct kx_buf b = { 0 };
	if (store_key_tree(&k, g) < 0 || (!unreadable(c, r = store_get_raw(c->s, c->s->ro, k.b, k.len, &b)) &&
					    (r < 0 || b.len != 33 || memcmp(b.ptr, g->key.b, 32) != 0)))
		problem(c, "group", &g->key, "store-index", "path index entry %s/%s/%s/%s is missing or points elsewhere",
			g->kernel, g->pass, g->gpu, g->workload_slug);
	kx_buf_release(&b);
	return 0;
}

/* The rank-index entries under prefix p (n bytes): 'I', or 'I' and a group's digest. */
static int check_index_in(struct vctx *c, const unsigned char *p, size_t n)
{
	struct vscan vs;
	int r = 0, at;
	for (at = vscan_open(c, &vs, p, n); at > 0 && r == 0; at = vscan_next(c, &vs)) {
		size_t kn;
		const unsigned char *k = (const unsigned char *)rocksdb_iter_key(vs.sc.it, &kn);
		if (kn != INDEX_KEY_LEN) {
			c->checked++;
			problem(c, "rank-index key", NULL, "store-key", "a rank-index key has %zu bytes", kn);
			continue;
		}
		struct kx_digest run, group;
		memcpy(group.b, k + 1, 32);
		memcpy(run.b, k + INDEX_KEY_LEN - 32, 32);
		if (!wanted(c, &c->new_groups, &group))
			continue;
		c->checked++;
		/* the run's record, read once: what the key is made of, and what the value copies */
		struct key want;
		struct kx_buf raw = { 0 };
		struct kx_run_rec x;
		store_key_digest(&want, T_RUN, &run);
		int got = store_get_raw(c->s, c->s->ro, want.b, want.len, &raw);
		if (got < 0 || store_run_decode(raw.ptr, raw.len, &x) < 0) {
			if (unreadable(c, got))
				;
			else if (got == -ENOENT)
				problem(c, "rank-index entry for run", &run, "store-index", "points at a run that is not stored");
			else if (got == 0) /* check_records names the record */
				problem(c, "rank-index entry for run", &run, "store-record",
					"points at a run whose record does not decode");
			else
				return got;
			kx_buf_release(&raw);
			continue;
		}
		x.run = run;
		store_key_index(&want, &x);
		if (want.len != kn || memcmp(want.b, k, kn) != 0)
			problem(c, "rank-index entry for run", &run, "store-index",
				"disagrees with the run record (group, value or observedAt changed)");
		/* its copy of the record (none in an entry written before the index held one: such a
		 * store, which lacks K_INDEX_COPIES, is upgraded when it is opened to write) */
		size_t vn;
		const char *val = rocksdb_iter_value(vs.sc.it, &vn);
		if (vn && (raw.len != vn || memcmp(raw.ptr, val, vn) != 0))
			problem(c, "rank-index entry for run", &run, "store-index",
				"holds a copy of the run record that differs from the record");
		else if (!vn && c->s->index_copies)
			problem(c, "rank-index entry for run", &run, "store-index",
				"holds no copy of the run record (this store says every entry does)");
		kx_buf_release(&raw);
	}
	if (r == 0 && at < 0)
		r = at;
	store_scan_close(&vs.sc);
	return r;
}

/* Every rank-index entry; in a verify since a generation whose older tables were read through
 * before (since_table), only the new runs' groups' entries, each group's by its prefix. */
static int check_index(struct vctx *c)
{
	unsigned char p[33] = { T_INDEX };
	if (!c->since || !c->since_table)
		return check_index_in(c, p, 1);
	int r = 0;
	dset_sort(&c->new_groups);
	for (size_t i = 0; i < c->new_groups.len && r == 0; i++) {
		if (i && kx_digest_cmp(&c->new_groups.v[i - 1], &c->new_groups.v[i]) == 0)
			continue;
		memcpy(p + 1, c->new_groups.v[i].b, 32);
		r = check_index_in(c, p, sizeof(p));
	}
	return r;
}

/* An alias (SPEC §2): of a stored run that is no alias, with the 'A' entry that names it; never in
 * the rank, current-run or source index (the run it is an alias of owns the source entry). */
static void check_alias(struct vctx *c, const struct kx_run_rec *x, const char *src, const char *ext)
{
	struct kx_run_rec of;
	struct kx_digest got;
	struct key k;
	int r = kx_store_get_run(c->s, NULL, &x->alias_of, &of);
	if (unreadable(c, r))
		;
	else if (r < 0 || of.alias)
		problem(c, "alias", &x->run, "store-index", "names a run that is not stored, or is an alias itself");
	else if (!kx_digest_equal(&of.group, &x->group))
		problem(c, "alias", &x->run, "store-record", "its record is not in the group of the run it is an alias of");
	store_key_alias(&k, &x->alias_of, &x->run);
	if (!exists(c, &k))
		problem(c, "alias", &x->run, "store-index", "the alias index has no entry for it");
	if (src && ext && !unreadable(c, r = kx_store_find_source(c->s, NULL, src, ext, &got)) &&
	    (r < 0 || !kx_digest_equal(&got, &x->alias_of)))
		problem(c, "alias", &x->run, "store-index", "the source index does not name the run it is an alias of");
	store_key_index(&k, x);
	if (store_get_raw(c->s, c->s->ro, k.b, k.len, NULL) == 0)
		problem(c, "alias", &x->run, "store-index", "the rank index has an entry for it: an alias is never ranked");
}

static int check_run(void *ctx, const struct kx_run_rec *x)
{
	struct vctx *c = ctx;
	c->runs += !x->alias; /* an alias (SPEC §2) is never counted */
	c->checked++;
	struct key k;
	struct kx_buf doc = { 0 };
	const char *ext = NULL;
	struct kx_arena *a = kx_arena_new();
	if (!a)
		return -ENOMEM;
	int r = kx_store_get_doc(c->s, NULL, &x->run, &doc);
	if (unreadable(c, r)) {
		;
	} else if (r < 0) {
		problem(c, "run", &x->run, "store-document", "the run document is not stored");
	} else {
		struct kx_json *d = NULL;
		struct kx_json_error e;
		if (kx_json_parse(a, doc.ptr, doc.len, 0, &d, NULL, &e) == 0) {
			const char *kind = kx_json_get_string(d, "kind");
			if (!kind || strcmp(kind, "BenchmarkRun") != 0)
				problem(c, "run", &x->run, "store-document", "the run's document is a %s", kind ? kind : "?");
			struct kx_json *sn = kx_json_pointer(d, "/spec/sourceNative");
			const char *src = kx_json_get_string(sn, "source");
			ext = kx_json_get_string(sn, "externalId");
			struct kx_digest got;
			if (x->alias)
				check_alias(c, x, src, ext);
			else if (src && ext && !unreadable(c, r = kx_store_find_source(c->s, NULL, src, ext, &got)) &&
				 (r < 0 || !kx_digest_equal(&got, &x->run)))
				problem(c, "run", &x->run, "store-index", "the source index has no entry for %s %s", src, ext);
		}
	}
	const struct kx_digest *req[] = { &x->protocol, &x->environment };
	const char *names[] = { "protocol", "environment" };
	for (int i = 0; i < 2; i++) {
		store_key_digest(&k, T_DOC, req[i]);
		if (!exists(c, &k))
			problem(c, "run", &x->run, "store-document", "its %s document is not stored", names[i]);
	}
	/* a workload or implementation document not stored: the run waits for it in the 'W' index
	 * (which a schema-1 store opened read-only does not have yet) */
	const struct kx_digest *named[] = { &x->workload, &x->implementation };
	const char *named_as[] = { "workload", "implementation" };
	for (int i = 0; i < 2 && c->s->waiting_index; i++) {
		store_key_digest(&k, T_DOC, named[i]);
		if (exists(c, &k))
			continue;
		store_key_wait(&k, named[i], &x->run);
		if (!exists(c, &k))
			problem(c, "run", &x->run, "store-index",
				"its %s document is not stored, and the waiting index has no entry for it", named_as[i]);
	}
	struct kx_group_rec g;
	r = kx_store_get_group(c->s, NULL, &x->group, &g);
	bool have_group = r == 0;
	if (!have_group && !unreadable(c, r))
		problem(c, "run", &x->run, "store-index", "its comparison group is not stored");
	/* SPEC §2: the run is keyed by the component of its implementation's exact name, its group by
	 * its GPU's (an alias by the run's it is an alias of: checked above) */
	char impl[KX_NAME_MAX], gpu[KX_NAME_MAX];
	r = x->alias ? 0 : store_names_run(&c->names, c->s, x, ext, impl, gpu);
	kx_buf_release(&doc);
	kx_arena_free(a);
	if (unreadable(c, r))
		return 0; /* a document its name is read from is in a damaged table */
	if (r < 0 || x->alias)
		return r;
	if (strcmp(impl, x->impl) != 0)
		problem(c, "run", &x->run, "store-name",
			"its implementation is kept as %s, but its name's path component is %s (SPEC §2): a store "
			"of an older kindex, upgraded when opened to write", x->impl, impl);
	if (have_group && *gpu && strcmp(gpu, g.gpu) != 0)
		problem(c, "run", &x->run, "store-name",
			"its GPU is kept as %s, but the environment's path component is %s (SPEC §2): a store of "
			"an older kindex, upgraded when opened to write", g.gpu, gpu);
	store_key_index(&k, x);
	if (!exists(c, &k))
		problem(c, "run", &x->run, "store-index", "the rank index has no entry for it");
	return 0;
}

static int check_refs(struct vctx *c, unsigned char tag)
{
	struct vscan vs;
	int r = 0, at;
	for (at = vscan_open(c, &vs, &tag, 1); at > 0 && r == 0; at = vscan_next(c, &vs)) {
		size_t kn, vn;
		const char *k = rocksdb_iter_key(vs.sc.it, &kn);
		const char *v = rocksdb_iter_value(vs.sc.it, &vn);
		c->checked++;
		struct kx_digest d;
		if (vn != (tag == T_SOURCE ? 32u : 33u)) {
			problem(c, tag == T_SOURCE ? "source index" : "path index", NULL, "store-index",
				"an entry's value has %zu bytes", vn);
			continue;
		}
		memcpy(d.b, v, 32);
		struct key t;
		store_key_digest(&t, tag == T_SOURCE ? T_RUN : T_GROUP, &d);
		if (!exists(c, &t)) {
			char name[200];
			size_t n = kn - 1 < 150 ? kn - 1 : 150;
			memcpy(name, k + 1, n);
			for (size_t i = 0; i < n; i++)
				if (!name[i])
					name[i] = '/';
			name[n] = '\0';
			problem(c, tag == T_SOURCE ? "source index" : "path index", NULL, "store-index",
				"'%s' points at a %s that is not stored", name, tag == T_SOURCE ? "run" : "group");
		}
	}
	if (r == 0 && at < 0)
		r = at;
	store_scan_close(&vs.sc);
	return r;
}

/* Every 'C' entry was met in its group's check: none is of a group that is not stored. */
static int check_current_groups(struct vctx *c)
{
	unsigned char tag = T_CURRENT;
	struct vscan vs;
	uint64_t n = 0;
	int r = 0, at;
	for (at = vscan_open(c, &vs, &tag, 1); at > 0 && r == 0; at = vscan_next(c, &vs))
		n++;
	if (r == 0 && at < 0)
		r = at;
	store_scan_close(&vs.sc);
	unsigned char groups = T_GROUP; /* c->currents: the entries of the groups check_group read */
	if (r == 0 && n != c->currents && !damaged_under(c, &tag, 1) && !damaged_under(c, &groups, 1))
		problem(c, "current-run index", NULL, "store-index",
			"holds %llu entries of groups that are not stored (%llu in all)",
			(unsigned long long)(n - c->currents), (unsigned long long)n);
	return r;
}

/*
 * Every 'W' entry names a stored run that names the document as its workload or implementation.
 * In a verify since a generation, every document it names is hashed too (check_docs, after): one
 * that completed waiting runs may have come after the generation, with no new run.
 */
static int check_waiting(struct vctx *c)
{
	unsigned char tag = T_WAIT;
	struct vscan vs;
	int r = 0, at;
	for (at = vscan_open(c, &vs, &tag, 1); at > 0 && r == 0; at = vscan_next(c, &vs)) {
		size_t kn;
		const char *k = rocksdb_iter_key(vs.sc.it, &kn);
		c->checked++;
		if (kn != WAIT_KEY_LEN) {
			problem(c, "waiting index", NULL, "store-index", "an entry's key has %zu bytes", kn);
			continue;
		}
		struct kx_digest doc, run;
		memcpy(doc.b, k + 1, 32);
		memcpy(run.b, k + 33, 32);
		if (c->since && (r = dset_add(&c->new_docs, &doc)) < 0)
			break;
		struct kx_run_rec x;
		int got = kx_store_get_run(c->s, NULL, &run, &x);
		if (unreadable(c, got))
			;
		else if (got < 0)
			problem(c, "run", &run, "store-index", "the waiting index names it, but it is not stored");
		else if (!kx_digest_equal(&x.workload, &doc) && !kx_digest_equal(&x.implementation, &doc))
			problem(c, "run", &run, "store-index",
				"the waiting index says it waits for a document it does not name");
	}
	if (r == 0 && at < 0)
		r = at;
	store_scan_close(&vs.sc);
	return r;
}

/* One stored signature of run by key: pub[32] sig[64] (SPEC §10). */
static void check_signature(struct vctx *c, const struct kx_digest *run, const struct kx_digest *key, const uint8_t *pub)
{
	const uint8_t *sig = pub + KX_ED25519_PUB_LEN;
	char msg[KX_DIGEST_STR_MAX], kid[KX_DIGEST_STR_MAX];
	struct kx_digest id;
	kx_digest_format(run, msg);
	kx_digest_format(key, kid);
	kx_key_id(pub, &id);
	struct key x;
	store_key_digest(&x, T_RUN, run);
	if (!exists(c, &x))
		problem(c, "run", run, "store-index", "a signature by key %s is stored for it, but it is not stored", kid);
	if (!kx_digest_equal(&id, key))
		problem(c, "run", run, "signature", "the public key stored as key %s's is another key's", kid);
	else if (!kx_verify(pub, msg, strlen(msg), sig))
		problem(c, "run", run, "signature", "key %s's stored signature does not verify", kid);
	store_key_pair(&x, T_SIGNED, key, run);
	if (!exists(c, &x))
		problem(c, "run", run, "store-index", "the signed-runs index lacks key %s's entry for it", kid);
}

struct sig_check {
	struct vctx *c;
	const struct kx_digest *run;
};

static int check_one_signature(void *ctx, const struct kx_digest *key, const uint8_t *pub, const uint8_t *sig)
{
	struct sig_check *x = ctx;
	x->c->checked++;
	check_signature(x->c, x->run, key, pub);
	return 0;
}

/* Each entry of the key family `tag`, given to fn (one per entry, counted as checked). */
static int each_entry(struct vctx *c, unsigned char tag,
		      void (*fn)(struct vctx *c, const char *k, size_t kn, const char *v, size_t vn))
{
	struct vscan vs;
	int at;
	for (at = vscan_open(c, &vs, &tag, 1); at > 0; at = vscan_next(c, &vs)) {
		size_t kn, vn;
		const char *k = rocksdb_iter_key(vs.sc.it, &kn);
		const char *v = rocksdb_iter_value(vs.sc.it, &vn);
		c->checked++;
		fn(c, k, kn, v, vn);
	}
	store_scan_close(&vs.sc);
	return at < 0 ? at : 0;
}

/* A 'Y' entry (SPEC §10): a signature of a stored run by the key its public key names, checked
 * again over the run's digest string, with its 'X' entry. */
static void signature_entry(struct vctx *c, const char *k, size_t kn, const char *v, size_t vn)
{
	if (kn != PAIR_KEY_LEN || vn != SIGNATURE_VALUE_LEN) {
		problem(c, "signature index", NULL, "store-index", "an entry has a %zu-byte key and a %zu-byte value", kn, vn);
		return;
	}
	struct kx_digest run, key;
	memcpy(run.b, k + 1, 32);
	memcpy(key.b, k + 33, 32);
	check_signature(c, &run, &key, (const uint8_t *)v);
}

/* A 'K' record (SPEC §10): it decodes, and its public key is the key its id names. */
static void key_entry(struct vctx *c, const char *k, size_t kn, const char *v, size_t vn)
{
	struct kx_key_rec rec;
	struct kx_digest id, named;
	if (kn != 33 || store_key_rec_decode(v, vn, &rec) < 0) {
		problem(c, "trusted keys", NULL, "store-record", "a key record of %zu bytes does not decode", vn);
		return;
	}
	memcpy(named.b, k + 1, 32);
	kx_key_id(rec.pub, &id);
	if (!kx_digest_equal(&id, &named))
		problem(c, "key", &named, "store-record", "its record holds another key's public bytes");
	else if (rec.revoked_ns && rec.revoked_ns < rec.added_ns)
		problem(c, "key", &named, "store-record", "revoked before it was added");
}

/* An 'X' entry: the signature it stands for is stored. */
static void signed_entry(struct vctx *c, const char *k, size_t kn, const char *v, size_t vn)
{
	struct kx_digest run, key;
	struct key x;
	if (kn == PAIR_KEY_LEN) {
		memcpy(key.b, k + 1, 32);
		memcpy(run.b, k + 33, 32);
		store_key_pair(&x, T_SIGNATURE, &run, &key);
	}
	if (kn != PAIR_KEY_LEN || !exists(c, &x))
		problem(c, "signed-runs index", kn == PAIR_KEY_LEN ? &key : NULL, "store-index",
			"names a run it holds no signature of");
}

/* A 'V' entry (SPEC §8): its run, its document and a reproduction's run are stored. */
static void attestation_entry(struct vctx *c, const char *k, size_t kn, const char *v, size_t vn)
{
	if (kn != ATTESTATION_KEY_LEN || vn != ATTESTATION_VALUE_LEN || (uint8_t)v[0] > KX_ATTEST_NOTE) {
		problem(c, "attestation index", NULL, "store-index", "an entry has a %zu-byte key and a %zu-byte value",
			kn, vn);
		return;
	}
	struct kx_digest run, att, by;
	char a[KX_DIGEST_STR_MAX];
	memcpy(run.b, k + 1, 32);
	memcpy(att.b, k + 41, 32);
	memcpy(by.b, v + 1, 32);
	kx_digest_format(&att, a);
	struct key x;
	store_key_digest(&x, T_RUN, &run);
	if (!exists(c, &x))
		problem(c, "run", &run, "store-index", "attestation %s is stored for it, but it is not stored", a);
	store_key_digest(&x, T_DOC, &att);
	if (!exists(c, &x))
		problem(c, "run", &run, "store-index", "its attestation %s has no stored document", a);
	store_key_digest(&x, T_RUN, &by);
	if (v[0] == KX_ATTEST_REPRODUCTION && !exists(c, &x))
		problem(c, "run", &run, "store-index", "the run its attestation %s says reproduces it is not stored", a);
}

/* An 'F' record (SPEC §9): its bytes read back, chunk by chunk, hash to its digest and add up to
 * its size. In a verify since a generation, only the artifacts a later commit stored: a replica's
 * pull hashes the bytes that are new to it (a version 1 record has no generation: left, as the
 * whole verify before the replica's last checks it). */
static void artifact_entry(struct vctx *c, const char *k, size_t kn, const char *v, size_t vn)
{
	struct kx_digest d;
	struct kx_artifact_rec a;
	if (kn != 33) {
		problem(c, "artifact key", NULL, "store-key", "an artifact key has %zu bytes, not 33", kn);
		return;
	}
	memcpy(d.b, k + 1, 32);
	int r = store_artifact_decode(v, vn, &a);
	if (r < 0) {
		problem(c, "artifact", &d, "store-record", "its record (%zu bytes) does not decode", vn);
		return;
	}
	if (c->since && a.generation <= c->since)
		return;
	char *piece = malloc(KX_ARTIFACT_CHUNK);
	struct kx_sha256 *h = kx_sha256_new();
	uint64_t at = 0;
	while (piece && h && at < a.size) {
		size_t got;
		if ((r = kx_store_read_artifact(c->s, NULL, &a, at, piece, KX_ARTIFACT_CHUNK, &got)) < 0 || !got)
			break;
		kx_sha256_update(h, piece, got);
		at += got;
	}
	uint8_t got_d[KX_DIGEST_LEN];
	if (h)
		kx_sha256_final(h, got_d);
	free(piece);
	if (!piece || !h) {
		problem(c, "artifact", &d, "store-artifact", "not checked: out of memory");
	} else if (at < a.size) {
		problem(c, "artifact", &d, "store-artifact",
			"its bytes cannot be read back past byte %llu of %llu (%s): a chunk is missing or damaged",
			(unsigned long long)at, (unsigned long long)a.size, r < 0 ? strerror(-r) : "cut short");
	} else if (memcmp(got_d, d.b, KX_DIGEST_LEN) != 0) {
		struct kx_digest g;
		char gs[KX_DIGEST_STR_MAX];
		memcpy(g.b, got_d, KX_DIGEST_LEN);
		kx_digest_format(&g, gs);
		problem(c, "artifact", &d, "store-artifact", "its %llu bytes hash to %s: damaged", (unsigned long long)a.size,
			gs);
	}
}

/* An 'H' entry: the run that announces the artifact is stored, and lists it ('P'). */
static void announced_entry(struct vctx *c, const char *k, size_t kn, const char *v, size_t vn)
{
	if (kn != PAIR_KEY_LEN) {
		problem(c, "artifact announcements", NULL, "store-index", "an entry has a %zu-byte key", kn);
		return;
	}
	struct kx_digest art, run;
	memcpy(art.b, k + 1, 32);
	memcpy(run.b, k + 33, 32);
	struct key x;
	store_key_digest(&x, T_RUN, &run);
	if (!exists(c, &x)) {
		char a[KX_DIGEST_STR_MAX];
		kx_digest_format(&art, a);
		problem(c, "run", &run, "store-index", "it is said to announce artifact %s, but it is not stored", a);
	}
}

/* A 'P' entry: a run's announced artifact, with its 'H' entry. */
static void run_artifact_entry(struct vctx *c, const char *k, size_t kn, const char *v, size_t vn)
{
	struct kx_digest run, art;
	if (kn != RUN_ARTIFACT_KEY_LEN || vn <= 32) {
		problem(c, "run artifacts", NULL, "store-index", "an entry has a %zu-byte key and a %zu-byte value", kn, vn);
		return;
	}
	memcpy(run.b, k + 1, 32);
	memcpy(art.b, v, 32);
	struct key x;
	store_key_pair(&x, T_ANNOUNCED, &art, &run);
	if (!exists(c, &x))
		problem(c, "run", &run, "store-index", "artifact %.*s of its list has no announcement entry", (int)(vn - 32),
			v + 32);
}

/* A run a verify since a generation checks: checked now, its documents and group later. */
static int note_new_run(struct vctx *c, const struct kx_run_rec *x)
{
	const struct kx_digest *docs[] = { &x->run, &x->protocol, &x->environment, &x->workload, &x->implementation };
	int r = check_run(c, x);
	struct sig_check sc = { c, &x->run };
	if (r == 0) /* its signatures (a full verify checks every one: signature_entry) */
		r = kx_store_each_signature(c->s, NULL, &x->run, check_one_signature, &sc);
	for (size_t i = 0; i < KX_ARRAY_SIZE(docs) && r == 0; i++)
		r = dset_add(&c->new_docs, docs[i]);
	return r == 0 ? dset_add(&c->new_groups, &x->group) : r;
}

/*
 * Each run ('R') or group ('G') record, decoded and checked; one that does not decode is reported
 * with its key and the walk goes on, so that one damaged value hides nothing after it.
 */
static int check_records(struct vctx *c, unsigned char tag)
{
	const char *what = tag == T_RUN ? "run" : "group";
	struct vscan vs;
	int r = 0, at;
	for (at = vscan_open(c, &vs, &tag, 1); at > 0 && r == 0; at = vscan_next(c, &vs)) {
		size_t kn, vn;
		const char *k = rocksdb_iter_key(vs.sc.it, &kn);
		const char *v = rocksdb_iter_value(vs.sc.it, &vn);
		struct kx_digest key = { 0 };
		if (kn != 33) {
			c->checked++;
			problem(c, tag == T_RUN ? "run key" : "group key", NULL, "store-key", "a %s key has %zu bytes, not 33",
				what, kn);
			continue;
		}
		memcpy(key.b, k + 1, 32);
		struct kx_run_rec x;
		struct kx_group_rec g;
		if (tag == T_RUN ? store_run_decode(v, vn, &x) < 0 : store_group_decode(v, vn, &g) < 0) {
			c->checked++;
			*(tag == T_RUN ? &c->runs : &c->groups) += 1;
			problem(c, what, &key, "store-record",
				"its record (%zu bytes) does not decode: a %s record holds %s (docs/store.md)", vn, what,
				tag == T_RUN ? "the run's document digests, its group, value and observedAt"
					     : "the group's names, digests and run counts");
			continue;
		}
		if (tag == T_RUN) {
			x.run = key;
			if (!c->since)
				r = check_run(c, &x);
			else if (x.generation > c->since)
				r = note_new_run(c, &x);
			else
				c->runs += !x.alias; /* an older run: counted, as check_run counts them */
		} else if (wanted(c, &c->new_groups, &key)) {
			g.key = key;
			r = check_group(c, &g);
		} else {
			c->groups++;
		}
	}
	if (r == 0 && at < 0)
		r = at;
	store_scan_close(&vs.sc);
	return r;
}

/*
 * Each live table read through, every block's checksum checked (store_table_check: the file's
 * own blocks, whatever other tables share its key range), unless the open named it already. It
 * comes before the scans: one that meets a damaged table may end there silently or go on past it,
 * so the tables named here are what the checks leave uncompared (damaged_under); and no scan reads
 * the store's own keys, aliases, directory times and name claims. In a verify since a generation,
 * the tables numbered up to since_table were read through before (the caller knows: the same
 * files).
 */
static int check_tables(struct vctx *c)
{
	for (int i = 0; i < rocksdb_livefiles_count(c->tables); i++) {
		const char *name = rocksdb_livefiles_name(c->tables, i);
		if (!name || c->named[i] ||
		    (c->since && c->since_table && strtoull(name + strspn(name, "/"), NULL, 10) <= c->since_table))
			continue;
		char path[PATH_MAX], *err = NULL;
		if (snprintf(path, sizeof(path), "%s/%s", c->s->path, name + strspn(name, "/")) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		int r = store_table_check(path, &err);
		if (r == -1) {
			r = store_errno(err);
			if (r == -EUCLEAN) {
				damaged_table(c, err);
				r = 0;
			}
		}
		free(err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int name_collision(void *ctx, char level, const char *comp, const char *a, const char *b)
{
	char qa[KX_QUOTE_SIZE], qb[KX_QUOTE_SIZE];
	problem(ctx, "names", NULL, "name-collision", "%s %s and %s share the path component %s (SPEC §2)",
		store_names_level(level), kx_quote(qa, a, strlen(a)), kx_quote(qb, b, strlen(b)), comp);
	return 0;
}

int kx_store_verify_since(struct kx_store *s, uint64_t since, uint64_t since_table, struct kx_problems *problems,
			  uint64_t *ret_checked)
{
	struct vctx c = { .s = s, .pr = problems, .since = since, .since_table = since_table };
	int r = 0;
	c.tables = rocksdb_livefiles(s->db);
	if (!c.tables || !(c.named = calloc((size_t)rocksdb_livefiles_count(c.tables) + 1, sizeof(bool))))
		r = -ENOMEM;
	else if (s->damage) /* the error that refused the plain open (KX_STORE_VERIFY) */
		damaged_table(&c, s->damage);
	/* every damaged table named first: what the checks below read of one is not compared */
	if (r >= 0)
		r = check_tables(&c);
	if (r >= 0 && since) {
		/* the new runs and the waiting index first: what they name is what the scans below check */
		r = check_records(&c, T_RUN);
		if (r >= 0)
			r = check_waiting(&c);
	}
	/* a verify since a generation whose older tables were read through before reads only what is
	 * new; one that was not reads every document, run, group and rank-index entry (so RocksDB
	 * checks each block) and counts them */
	bool light = since && since_table;
	if (r >= 0)
		r = light ? check_new_docs(&c) : check_docs(&c);
	if (r >= 0)
		r = check_records(&c, T_GROUP);
	if (r >= 0)
		r = check_index(&c);
	if (r >= 0 && !since)
		r = check_records(&c, T_RUN);
	/* the indexes' own entries, each a point read at what it names: those of a new run are the
	 * run's checks, above */
	if (r >= 0 && !since)
		r = check_refs(&c, T_SOURCE);
	if (r >= 0)
		r = check_refs(&c, T_TREE);
	if (r >= 0 && !since)
		r = check_waiting(&c);
	if (r >= 0 && s->current_index && !since)
		r = check_current_groups(&c);
	if (r >= 0 && !since) /* a verify since: the new runs' signatures, each with its run */
		r = each_entry(&c, T_SIGNATURE, signature_entry);
	if (r >= 0 && !since)
		r = each_entry(&c, T_SIGNED, signed_entry);
	if (r >= 0)
		r = each_entry(&c, T_KEY, key_entry);
	if (r >= 0 && !since)
		r = each_entry(&c, T_ATTESTATION, attestation_entry);
	/* SPEC §9: every artifact's bytes hashed again (a verify since a generation: the new ones) */
	if (r >= 0)
		r = each_entry(&c, T_ARTIFACT, artifact_entry);
	if (r >= 0 && !since)
		r = each_entry(&c, T_ANNOUNCED, announced_entry);
	if (r >= 0 && !since)
		r = each_entry(&c, T_RUN_ARTIFACT, run_artifact_entry);
	if (r >= 0)
		r = store_names_collisions(&c.names, name_collision, &c);
	store_names_release(&c.names);
	free(c.want);
	free(c.new_docs.v);
	free(c.new_groups.v);
	free(c.named);
	if (c.tables)
		rocksdb_livefiles_destroy(c.tables);
	if (r >= 0 && c.unreadable && !c.damaged)
		kx_problems_add(problems, 0, 0, "store", "store-table",
				"%llu records cannot be read (RocksDB says a table is damaged), yet no scan met the table",
				(unsigned long long)c.unreadable);
	/* (what a damaged table holds is not counted: the counters cannot agree then) */
	struct kx_store_stats st;
	kx_store_stats(s, NULL, &st);
	if (r >= 0 && !c.damaged && !c.unreadable &&
	    (st.runs != c.runs || (!light && st.documents != c.docs) || st.groups != c.groups))
		problem(&c, "store counters", NULL, "store-count",
			"counters say %llu runs, %llu documents, %llu groups; found %llu, %llu, %llu",
			(unsigned long long)st.runs, (unsigned long long)st.documents, (unsigned long long)st.groups,
			(unsigned long long)c.runs, (unsigned long long)c.docs, (unsigned long long)c.groups);
	if (ret_checked)
		*ret_checked = c.checked;
	return r;
}

int kx_store_verify(struct kx_store *s, struct kx_problems *problems, uint64_t *ret_checked)
{
	return kx_store_verify_since(s, 0, 0, problems, ret_checked);
}
