// SPDX-License-Identifier: MIT
/*
 * Transactions: writes collected in memory and committed as one WriteBatch (struct op below),
 * reads that see the transaction's own writes (with maps that let a multi-manifest file see its
 * own earlier runs when it checks for conflicts), one savepoint, and what adding a run or an alias
 * writes — its record, the indexes, its group, the current run, and the mtimes of the directories
 * above it.
 */
#include "private.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <rocksdb/c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A transaction collects its writes in memory and hands RocksDB one WriteBatch at commit, its keys
 * sorted: the memtable's skiplist inserts a run of ascending keys from where the last one went
 * (its sequential-insert splice), where random digests would each walk the list from the top —
 * several times cheaper for a bulk ingest. Collecting also makes savepoints a length to truncate
 * to. Reads must see the transaction's own writes (two manifests of one file can conflict with
 * each other): the writer caches (wcache.h) track documents, groups and mtimes, and three
 * transaction-local maps track the runs, sources and document bytes written so far.
 */
struct op {
	size_t k, kn, v, vn; /* offsets into kx_txn.bytes */
};
struct docbytes {
	size_t op; /* the put of the document: its value in kx_txn.bytes */
};

struct kx_txn {
	struct kx_store *s;
	struct kx_buf bytes; /* keys and values of the writes, back to back */
	struct op *ops;
	size_t nops, capops;
	struct wmap *runs;     /* run digest → struct kx_run_rec */
	struct wmap *sources;  /* sha256(source '\0' externalId) → run digest */
	struct wmap *docbytes; /* doc digest → struct docbytes (its put in this transaction) */
	struct wmap *dirty;    /* groups changed: their records are written once, at commit */
	struct wmap *stamped;  /* sha256(directory path): directories whose mtime this transaction set */
	struct wmap *once;     /* sha256(key): the signatures and attestations this transaction stores */
	int64_t delta_runs, delta_docs, delta_groups;
	bool evidence; /* what runs stored before show changed without runs added (K_EVIDENCE) */
	struct undo *undo;
	/* the savepoint */
	bool has_save, save_evidence;
	size_t save_undo, save_ops, save_bytes;
	int64_t save_runs, save_docs, save_groups;
};

static void txn_free(struct kx_txn *t)
{
	kx_buf_release(&t->bytes);
	free(t->ops);
	store_wmap_free(t->runs);
	store_wmap_free(t->sources);
	store_wmap_free(t->docbytes);
	store_wmap_free(t->dirty);
	store_wmap_free(t->stamped);
	store_wmap_free(t->once);
	store_undo_free(t->undo);
	free(t);
}

int kx_store_txn_begin(struct kx_store *s, struct kx_txn **ret)
{
	if (s->flags & KX_STORE_READONLY)
		return -EROFS;
	struct kx_txn *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->s = s;
	t->undo = store_undo_new();
	if (!t->undo) {
		free(t);
		return -ENOMEM;
	}
	t->runs = store_wmap_new(sizeof(struct kx_run_rec), SIZE_MAX);
	t->sources = store_wmap_new(32, SIZE_MAX);
	t->docbytes = store_wmap_new(sizeof(struct docbytes), SIZE_MAX);
	t->dirty = store_wmap_new(0, SIZE_MAX);
	t->stamped = store_wmap_new(0, SIZE_MAX);
	t->once = store_wmap_new(0, SIZE_MAX);
	if (!t->runs || !t->sources || !t->docbytes || !t->dirty || !t->stamped || !t->once) {
		txn_free(t);
		return -ENOMEM;
	}
	pthread_mutex_lock(&s->writer);
	*ret = t;
	return 0;
}

void kx_txn_abort(struct kx_txn *t)
{
	if (!t)
		return;
	store_undo_rollback(t->undo, 0);
	pthread_mutex_unlock(&t->s->writer);
	txn_free(t);
}

size_t kx_txn_count(const struct kx_txn *t)
{
	return t->nops;
}

void kx_txn_savepoint(struct kx_txn *t)
{
	t->has_save = true;
	t->save_ops = t->nops;
	t->save_bytes = t->bytes.len;
	t->save_undo = store_undo_mark(t->undo);
	t->save_runs = t->delta_runs;
	t->save_docs = t->delta_docs;
	t->save_groups = t->delta_groups;
	t->save_evidence = t->evidence;
}

void kx_txn_rollback(struct kx_txn *t)
{
	if (!t->has_save)
		return;
	t->nops = t->save_ops;
	t->bytes.len = t->save_bytes;
	store_undo_rollback(t->undo, t->save_undo);
	t->delta_runs = t->save_runs;
	t->delta_docs = t->save_docs;
	t->delta_groups = t->save_groups;
	t->evidence = t->save_evidence;
	t->has_save = false;
}

static int txn_get(struct kx_txn *t, const void *k, size_t kn, struct kx_buf *out)
{
	return store_get_in(t->s->db, t->s->ro, k, kn, out);
}

static int txn_put(struct kx_txn *t, const void *k, size_t kn, const void *v, size_t vn)
{
	if (KX_GROW(t->ops, t->capops, t->nops, 256) < 0)
		return -ENOMEM;
	struct op *o = &t->ops[t->nops];
	o->k = t->bytes.len;
	o->kn = kn;
	o->v = t->bytes.len + kn;
	o->vn = vn;
	if (kx_buf_append(&t->bytes, k, kn) < 0 || kx_buf_append(&t->bytes, v, vn) < 0)
		return -ENOMEM;
	t->nops++;
	return 0;
}

static int txn_put_u64(struct kx_txn *t, const void *k, size_t kn, uint64_t v)
{
	unsigned char b[8];
	store_put_u64(b, v);
	return txn_put(t, k, kn, b, 8);
}

static int op_cmp(const void *x, const void *y, void *arg)
{
	const struct kx_txn *t = arg;
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	const struct op *a = &t->ops[i], *b = &t->ops[j];
	size_t n = a->kn < b->kn ? a->kn : b->kn;
	int c = memcmp(t->bytes.ptr + a->k, t->bytes.ptr + b->k, n);
	if (c)
		return c;
	if (a->kn != b->kn)
		return a->kn < b->kn ? -1 : 1;
	return i < j ? -1 : i > j; /* stable: later writes of a key stay later */
}

static int put_group(void *ctx, const uint8_t key[32], void *value)
{
	struct kx_txn *t = ctx;
	const struct kx_group_rec *g = store_wmap_get(t->s->groups, key);
	if (!g)
		return -EIO; /* a dirty group is always cached: the cache is only cleared after commits */
	struct kx_buf b = { 0 };
	int r = store_group_encode(g, &b);
	if (r == 0) {
		struct key k;
		store_key_digest(&k, T_GROUP, &g->key);
		r = txn_put(t, k.b, k.len, b.ptr, b.len);
	}
	kx_buf_release(&b);
	return r;
}

int kx_txn_commit_gen(struct kx_txn *t, bool sync, uint64_t *ret_generation)
{
	struct kx_store *s = t->s;
	int gr = store_wmap_each(t->dirty, put_group, t);
	if (gr < 0) {
		kx_txn_abort(t);
		return gr;
	}
	/* the counters are the writer's (it holds the mutex): no read-modify-write through RocksDB */
	int pr = txn_put_u64(t, KEYLIT(K_GEN), s->gen + 1);
	if (pr == 0)
		pr = txn_put_u64(t, KEYLIT(K_CHANGED), (uint64_t)kx_now_ns());
	if (pr == 0 && t->delta_runs)
		pr = txn_put_u64(t, KEYLIT(K_COUNT_RUNS), s->n_runs + (uint64_t)t->delta_runs);
	if (pr == 0 && t->delta_docs)
		pr = txn_put_u64(t, KEYLIT(K_COUNT_DOCS), s->n_docs + (uint64_t)t->delta_docs);
	if (pr == 0 && t->delta_groups)
		pr = txn_put_u64(t, KEYLIT(K_COUNT_GROUPS), s->n_groups + (uint64_t)t->delta_groups);
	if (pr == 0 && t->evidence)
		pr = txn_put_u64(t, KEYLIT(K_EVIDENCE), s->gen + 1);
	if (pr < 0) {
		kx_txn_abort(t);
		return pr;
	}
	/* key order, and among writes of one key the order they were made (the last one wins) */
	size_t *order = malloc((t->nops ? t->nops : 1) * sizeof(*order));
	if (!order) {
		kx_txn_abort(t);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->nops; i++)
		order[i] = i;
	qsort_r(order, t->nops, sizeof(*order), op_cmp, t);
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	for (size_t i = 0; i < t->nops; i++) {
		const struct op *o = &t->ops[order[i]];
		rocksdb_writebatch_put(wb, t->bytes.ptr + o->k, o->kn, t->bytes.ptr + o->v, o->vn);
	}
	free(order);
	int r = store_write(s, s->wo, wb);
	rocksdb_writebatch_destroy(wb);
	if (r < 0) {
		store_undo_rollback(t->undo, 0); /* nothing was written: the caches go back too */
	} else {
		s->gen++;
		if (ret_generation)
			*ret_generation = s->gen; /* this commit's own, whatever commits after it */
		s->n_runs += (uint64_t)t->delta_runs;
		s->n_docs += (uint64_t)t->delta_docs;
		s->n_groups += (uint64_t)t->delta_groups;
	}
	/* caches are bounded: past their bound they start over (RocksDB is the authority) */
	if (store_wmap_over(s->docs))
		store_wmap_clear(s->docs);
	if (store_wmap_over(s->groups))
		store_wmap_clear(s->groups);
	if (store_wmap_over(s->mtimes))
		store_wmap_clear(s->mtimes);
	if (store_wmap_over(s->currents))
		store_wmap_clear(s->currents);
	if (store_wmap_over(s->names))
		store_wmap_clear(s->names);
	pthread_mutex_unlock(&s->writer);
	txn_free(t);
	/*
	 * The log is synced after the writer's lock is let go: writers that commit meanwhile (eight
	 * `cp` into the inbox) wait in the same sync or share the next — a group commit — instead of
	 * queueing one fdatasync each behind the lock. Until it returns the commit is visible but not
	 * yet durable; the caller answers only after.
	 */
	if (r == 0 && sync)
		r = kx_store_sync(s);
	return r;
}

int kx_txn_get_run(struct kx_txn *t, const struct kx_digest *d, struct kx_run_rec *ret)
{
	const struct kx_run_rec *c = store_wmap_get(t->runs, d->b);
	if (c) {
		*ret = *c;
		return 0;
	}
	return kx_store_get_run(t->s, NULL, d, ret);
}

int kx_txn_get_group(struct kx_txn *t, const struct kx_digest *key, struct kx_group_rec *ret)
{
	const struct kx_group_rec *c = store_wmap_get(t->s->groups, key->b);
	if (c) {
		*ret = *c;
		return 0;
	}
	int r = kx_store_get_group(t->s, NULL, key, ret);
	if (r == 0 && store_undo_note(t->undo, t->s->groups, key->b) == 0)
		store_wmap_put(t->s->groups, key->b, ret);
	return r;
}

bool kx_txn_has_doc(struct kx_txn *t, const struct kx_digest *d)
{
	if (store_wmap_get(t->s->docs, d->b))
		return true;
	struct key k;
	store_key_digest(&k, T_DOC, d);
	if (txn_get(t, k.b, k.len, NULL) < 0)
		return false;
	if (store_undo_note(t->undo, t->s->docs, d->b) == 0)
		store_wmap_put(t->s->docs, d->b, NULL);
	return true;
}

int kx_txn_get_doc(struct kx_txn *t, const struct kx_digest *d, struct kx_buf *out)
{
	const struct docbytes *c = store_wmap_get(t->docbytes, d->b);
	if (c) {
		const struct op *o = &t->ops[c->op];
		kx_buf_reset(out);
		return kx_buf_append(out, t->bytes.ptr + o->v, o->vn);
	}
	return kx_store_get_doc(t->s, NULL, d, out);
}

static void source_hash(const struct key *k, uint8_t out[32])
{
	kx_sha256(k->b, k->len, out);
}

int kx_txn_find_source(struct kx_txn *t, const char *source, const char *external_id,
		       struct kx_digest *ret)
{
	struct key k;
	if (store_key_source(&k, source, external_id) < 0)
		return -ENOENT;
	uint8_t h[32];
	source_hash(&k, h);
	const uint8_t *c = store_wmap_get(t->sources, h);
	if (c) {
		memcpy(ret->b, c, 32);
		return 0;
	}
	return kx_store_find_source(t->s, NULL, source, external_id, ret);
}

int kx_txn_claim_name(struct kx_txn *t, char level, const char *component, const char *name, struct kx_buf *ret_other)
{
	struct key k;
	if (store_key_name(&k, level, component) < 0)
		return -ENAMETOOLONG;
	uint8_t h[32], want[32], have[32];
	kx_sha256(k.b, k.len, h);
	kx_sha256(name, strlen(name), want);
	/* the writer's cache knows who holds most components: this name, or another */
	const uint8_t *cached = store_wmap_get(t->s->names, h);
	if (cached && memcmp(cached, want, 32) == 0)
		return 0;
	struct kx_buf b = { 0 }; /* the committed owner ("" for one of this transaction) */
	int r = txn_get(t, k.b, k.len, &b);
	if (r == 0)
		kx_sha256(b.ptr, b.len, have);
	if (r == 0 || r == -ENOENT) {
		if (cached || (r == 0 && memcmp(have, want, 32) != 0))
			r = ret_other && kx_buf_append(ret_other, b.ptr ? b.ptr : "", b.len) < 0 ? -ENOMEM : 1;
		else if ((r == -ENOENT && txn_put(t, k.b, k.len, name, strlen(name)) < 0) ||
			 store_undo_note(t->undo, t->s->names, h) < 0 || !store_wmap_put(t->s->names, h, want))
			r = -ENOMEM; /* the name claims it now, or the writer learns that it holds it */
		else
			r = 0;
	}
	kx_buf_release(&b);
	return r;
}

int kx_txn_put_doc(struct kx_txn *t, const struct kx_digest *d, const char *jcs, size_t len)
{
	if (kx_txn_has_doc(t, d))
		return 0;
	struct key k;
	store_key_digest(&k, T_DOC, d);
	if (txn_put(t, k.b, k.len, jcs, len) < 0)
		return -ENOMEM;
	t->delta_docs++;
	if (store_undo_note(t->undo, t->s->docs, d->b) == 0)
		store_wmap_put(t->s->docs, d->b, NULL);
	/* where the bytes are, for a later manifest of this transaction that references the document
	 * (a rollback truncates the ops and undoes this entry together) */
	struct docbytes db = { t->nops - 1 };
	if (store_undo_note(t->undo, t->docbytes, d->b) < 0 || !store_wmap_put(t->docbytes, d->b, &db))
		return -ENOMEM;
	return 0;
}

static int bump_mtime(struct kx_txn *t, const char *path, int64_t ns)
{
	struct key k;
	int r = store_key_mtime(&k, path);
	if (r < 0)
		return r;
	uint8_t h[32];
	kx_sha256(path, strlen(path), h);
	const int64_t *c = store_wmap_get(t->s->mtimes, h);
	int64_t old = INT64_MIN;
	if (c) {
		old = *c;
	} else {
		struct kx_buf b = { 0 };
		r = txn_get(t, k.b, k.len, &b);
		if (r == 0 && b.len == 8)
			old = (int64_t)store_get_u64((const unsigned char *)b.ptr);
		kx_buf_release(&b);
		if (r < 0 && r != -ENOENT)
			return r;
	}
	/*
	 * A commit moves the mtime of every directory it changes forward, even when its time is not
	 * later (a clock stepped back): the mtime is the stamp the tree's caches and the daemon's
	 * inode versions key on, so a change must never keep the stamp it had before. Runs of one
	 * transaction share its stamp.
	 */
	bool mine = store_wmap_get(t->stamped, h) != NULL;
	if (!mine && old != INT64_MIN && ns <= old)
		ns = old + 1;
	if (ns <= old) {
		if (!c && store_undo_note(t->undo, t->s->mtimes, h) == 0)
			store_wmap_put(t->s->mtimes, h, &old);
		return 0;
	}
	if (txn_put_u64(t, k.b, k.len, (uint64_t)ns) < 0)
		return -ENOMEM;
	if (store_undo_note(t->undo, t->s->mtimes, h) == 0)
		store_wmap_put(t->s->mtimes, h, &ns);
	if (!mine && (store_undo_note(t->undo, t->stamped, h) < 0 || !store_wmap_put(t->stamped, h, NULL)))
		return -ENOMEM;
	return 0;
}

/* The mtimes of the directories above group g's: benchmarks/, its kernel, pass and gpu. */
static int bump_dirs(struct kx_txn *t, const struct kx_group_rec *g, int64_t ns)
{
	char path[4 * KX_NAME_MAX + 32] = "benchmarks";
	size_t n = strlen(path);
	const char *parts[] = { g->kernel, g->pass, g->gpu };
	int r = bump_mtime(t, path, ns);
	for (size_t i = 0; i < KX_ARRAY_SIZE(parts) && r >= 0; i++) {
		size_t l = strlen(parts[i]);
		path[n++] = '/';
		memcpy(path + n, parts[i], l + 1);
		n += l;
		r = bump_mtime(t, path, ns);
	}
	return r;
}

struct waiting {
	struct kx_txn *t;
	int64_t ns;
};

static int bump_waiting_run(void *ctx, const struct kx_digest *run)
{
	struct waiting *w = ctx;
	struct kx_run_rec x;
	struct kx_group_rec g;
	int r = kx_store_get_run(w->t->s, NULL, run, &x);
	if (r == 0)
		r = kx_txn_get_group(w->t, &x.group, &g);
	return r == -ENOENT ? 0 : r < 0 ? r : bump_dirs(w->t, &g, w->ns);
}

/*
 * Document d, stored by this transaction, was missing for runs stored before it (the W index):
 * they gain a file and their manifest.json, summary.txt and SHA256SUMS change, so the directories
 * above their groups move forward like those of any run added — their mtime is the stamp those
 * files are versioned by (src/fs/versions.c), and a change must not keep it.
 */
static int bump_waiting(struct kx_txn *t, const struct kx_digest *d, int64_t ns)
{
	struct waiting w = { t, ns };
	return kx_store_each_waiting(t->s, NULL, d, bump_waiting_run, &w);
}

/* Ranked run x becomes its implementation's current run in its group ('C') when it is newer than
 * the one there (kx_run_newer); the writer keeps what it knows of each key in s->currents. */
static int note_current(struct kx_txn *t, const struct kx_run_rec *x)
{
	struct key k;
	uint8_t h[32];
	store_key_current(&k, &x->group, x->impl);
	kx_sha256(k.b, k.len, h);
	struct current_mark m = { .present = false };
	const struct current_mark *known = store_wmap_get(t->s->currents, h);
	struct kx_buf b = { 0 };
	int r = 0;
	if (known) {
		m = *known;
	} else if ((r = txn_get(t, k.b, k.len, &b)) == 0) {
		struct kx_current_rec c;
		if ((r = store_current_decode(b.ptr, b.len, &c)) == 0)
			m = (struct current_mark){ true, c.observed_ns, c.run };
	}
	if (r == -ENOENT)
		r = 0;
	bool take = r == 0 && (!m.present || kx_run_newer(x->observed_ns, &x->run, m.observed_ns, &m.run));
	if (take) {
		struct kx_current_rec c;
		store_current_of(x, &c);
		kx_buf_reset(&b);
		m = (struct current_mark){ true, x->observed_ns, x->run };
		if ((r = store_current_encode(&c, &b)) == 0)
			r = txn_put(t, k.b, k.len, b.ptr, b.len);
	}
	if (r == 0 && (take || !known) &&
	    (store_undo_note(t->undo, t->s->currents, h) < 0 || !store_wmap_put(t->s->currents, h, &m)))
		r = -ENOMEM;
	kx_buf_release(&b);
	return r;
}

/*
 * Group g changes in this transaction at ns: its record, with its last change moved forward, is
 * written at commit. *ret_bump: the directories above it need their mtimes moved too — directory
 * mtimes only move forward: a group this transaction already changed at this time needs no bump;
 * one it changes first always gets one (bump_mtime), later clock or not.
 */
static int touch_group(struct kx_txn *t, struct kx_group_rec *g, int64_t ns, bool *ret_bump)
{
	*ret_bump = ns > g->changed_ns || !store_wmap_get(t->dirty, g->key.b);
	if (*ret_bump)
		g->changed_ns = ns > g->changed_ns ? ns : g->changed_ns + 1;
	if (store_undo_note(t->undo, t->s->groups, g->key.b) < 0 || !store_wmap_put(t->s->groups, g->key.b, g) ||
	    store_undo_note(t->undo, t->dirty, g->key.b) < 0 || !store_wmap_put(t->dirty, g->key.b, NULL))
		return -ENOMEM;
	return 0;
}

/* A run's record under 'R', and in the transaction's map of runs (kx_txn_get_run). */
static int put_run(struct kx_txn *t, const struct kx_run_rec *run, struct kx_buf *b)
{
	struct kx_run_rec rec = *run;
	rec.generation = t->s->gen + 1; /* the generation this transaction's commit creates */
	struct key k;
	int r = store_run_encode(&rec, b);
	store_key_digest(&k, T_RUN, &run->run);
	if (r == 0 && (r = txn_put(t, k.b, k.len, b->ptr, b->len)) == 0 &&
	    (store_undo_note(t->undo, t->runs, run->run.b) < 0 || !store_wmap_put(t->runs, run->run.b, run)))
		r = -ENOMEM;
	return r;
}

/* The 'W' entries of a run whose workload or implementation document is not stored (yet). */
static int put_waiting(struct kx_txn *t, const struct kx_run_rec *run)
{
	const struct kx_digest *named[] = { &run->workload, &run->implementation };
	int r = 0;
	for (size_t i = 0; i < KX_ARRAY_SIZE(named) && r == 0; i++) {
		if (kx_txn_has_doc(t, named[i]))
			continue;
		struct key k;
		store_key_wait(&k, named[i], &run->run);
		r = txn_put(t, k.b, k.len, "", 0);
	}
	return r;
}

int kx_txn_add_alias(struct kx_txn *t, const struct kx_run_rec *alias)
{
	struct kx_run_rec of;
	struct kx_group_rec g;
	int r = kx_txn_get_run(t, &alias->alias_of, &of);
	if (r == 0 && of.alias)
		return -EINVAL; /* an alias of an alias: the caller names the run itself */
	if (r == 0)
		r = kx_txn_get_group(t, &of.group, &g);
	if (r < 0)
		return r;
	struct kx_run_rec x = *alias;
	x.alias = true;
	x.group = of.group;
	snprintf(x.impl, sizeof(x.impl), "%s", of.impl);
	/* the run's summary.txt and DIGESTS now name the alias: its group changes, as for a drop */
	bool bump;
	struct kx_buf b = { 0 };
	struct key k;
	if ((r = touch_group(t, &g, x.ingested_ns, &bump)) == 0 && (r = put_run(t, &x, &b)) == 0 &&
	    (r = put_waiting(t, &x)) == 0) {
		store_key_alias(&k, &of.run, &x.run);
		r = txn_put(t, k.b, k.len, "", 0);
	}
	if (r == 0 && bump)
		r = bump_dirs(t, &g, x.ingested_ns);
	kx_buf_release(&b);
	return r;
}

int kx_txn_add_run(struct kx_txn *t, const struct kx_run_rec *run, const struct kx_group_rec *group,
		   const char *source, const char *external_id)
{
	struct kx_group_rec g;
	int r = kx_txn_get_group(t, &run->group, &g);
	struct key k;
	if (r == -ENOENT) {
		g = *group;
		g.key = run->group;
		g.ranked = g.unranked = 0;
		g.changed_ns = 0;
		if ((r = store_key_tree(&k, &g)) < 0)
			return r;
		unsigned char tv[TREE_VALUE_LEN];
		store_tree_value(&g, tv);
		if (txn_put(t, k.b, k.len, tv, sizeof(tv)) < 0)
			return -ENOMEM;
		t->delta_groups++;
	} else if (r < 0) {
		return r;
	}
	if (run->passed && run->has_value)
		g.ranked++;
	else
		g.unranked++;
	bool bump;
	struct kx_buf b = { 0 };
	if ((r = touch_group(t, &g, run->ingested_ns, &bump)) < 0)
		goto out;

	if ((r = put_run(t, run, &b)) < 0)
		goto out;
	store_key_index(&k, run);
	if ((r = txn_put(t, k.b, k.len, b.ptr, b.len)) < 0) /* the record again: kx_store_group_runs */
		goto out;
	if (run->passed && run->has_value && (r = note_current(t, run)) < 0)
		goto out;
	/* a document it names but that is not here (yet): the run waits for it (kx_store_each_waiting) */
	if ((r = put_waiting(t, run)) < 0)
		goto out;
	const struct kx_digest *named[] = { &run->workload, &run->implementation };

	if (source && external_id) {
		if ((r = store_key_source(&k, source, external_id)) < 0)
			goto out;
		if ((r = txn_put(t, k.b, k.len, run->run.b, 32)) < 0)
			goto out;
		uint8_t h[32];
		source_hash(&k, h);
		if (store_undo_note(t->undo, t->sources, h) < 0 || !store_wmap_put(t->sources, h, run->run.b)) {
			r = -ENOMEM;
			goto out;
		}
	}
	r = bump ? bump_dirs(t, &g, run->ingested_ns) : 0;
	for (size_t i = 0; i < KX_ARRAY_SIZE(named) && r >= 0; i++)
		if (store_wmap_get(t->docbytes, named[i]->b))
			r = bump_waiting(t, named[i], run->ingested_ns);
	t->delta_runs++;
out:
	kx_buf_release(&b);
	return r < 0 ? r : 0;
}

/*
 * Key k, which a signature or an attestation is stored under, is this transaction's to write: 0
 * (noted, so a second claim in it finds it), 1 when stored already — by an earlier commit, or
 * earlier in this transaction (one file can carry the same signed run, or attestation, twice).
 */
static int claim_once(struct kx_txn *t, const struct key *k)
{
	unsigned char h[KX_DIGEST_LEN];
	kx_sha256(k->b, k->len, h);
	if (store_wmap_get(t->once, h))
		return 1;
	int r = txn_get(t, k->b, k->len, NULL);
	if (r != -ENOENT)
		return r == 0 ? 1 : r;
	if (store_undo_note(t->undo, t->once, h) < 0 || !store_wmap_put(t->once, h, NULL))
		return -ENOMEM;
	return 0;
}

/*
 * Stored run `run` shows something more at ns (a signature, an attestation): its group changes, as
 * for a drop, and the directories above it move on; a run stored before changes with no run added,
 * which the commit records (K_EVIDENCE).
 */
static int run_shows_more(struct kx_txn *t, const struct kx_digest *run, int64_t ns)
{
	struct kx_run_rec x;
	struct kx_group_rec g;
	bool bump;
	int r;
	if ((r = kx_txn_get_run(t, run, &x)) < 0 || (r = kx_txn_get_group(t, &x.group, &g)) < 0)
		return r;
	t->evidence |= !store_wmap_get(t->runs, run->b);
	if ((r = touch_group(t, &g, ns, &bump)) == 0 && bump)
		r = bump_dirs(t, &g, ns);
	return r;
}

int kx_txn_add_signature(struct kx_txn *t, const struct kx_digest *run, const struct kx_digest *key,
			 const uint8_t pub[KX_ED25519_PUB_LEN], const uint8_t sig[KX_ED25519_SIG_LEN], int64_t ns)
{
	struct key k;
	store_key_pair(&k, T_SIGNATURE, run, key);
	int r = claim_once(t, &k);
	if (r != 0)
		return r;
	/* the run's SIGNATURES, summary.txt, page and manifest.json change */
	unsigned char v[SIGNATURE_VALUE_LEN];
	memcpy(v, pub, KX_ED25519_PUB_LEN);
	memcpy(v + KX_ED25519_PUB_LEN, sig, KX_ED25519_SIG_LEN);
	if ((r = run_shows_more(t, run, ns)) == 0 && (r = txn_put(t, k.b, k.len, v, sizeof(v))) == 0) {
		store_key_pair(&k, T_SIGNED, key, run);
		r = txn_put(t, k.b, k.len, "", 0);
	}
	return r;
}

int kx_txn_add_attestation(struct kx_txn *t, const struct kx_attestation_ref *a, const struct kx_digest *subject,
			   const char *jcs, size_t len, int64_t ns)
{
	struct key k;
	store_key_attestation(&k, subject, a->created_ns, &a->digest);
	int r = claim_once(t, &k);
	if (r != 0)
		return r;
	/* the subject's summary.txt, its page and attestations/ change */
	unsigned char v[ATTESTATION_VALUE_LEN] = { (unsigned char)a->type };
	memcpy(v + 1, a->by.b, 32);
	if (!kx_txn_has_doc(t, &a->digest))
		r = kx_txn_put_doc(t, &a->digest, jcs, len);
	if (r == 0 && (r = run_shows_more(t, subject, ns)) == 0)
		r = txn_put(t, k.b, k.len, v, sizeof(v));
	return r;
}

struct announced {
	struct kx_txn *t;
	int64_t ns;
};

static int show_artifact(void *ctx, const struct kx_digest *run)
{
	struct announced *x = ctx;
	return run_shows_more(x->t, run, x->ns);
}

int kx_txn_add_artifact(struct kx_txn *t, const struct kx_digest *d, const struct kx_artifact_rec *a, int64_t ns)
{
	struct key k;
	store_key_digest(&k, T_ARTIFACT, d);
	int r = claim_once(t, &k);
	if (r != 0)
		return r;
	struct kx_artifact_rec rec = *a;
	rec.generation = t->s->gen + 1; /* the generation this transaction's commit creates */
	unsigned char v[ARTIFACT_VALUE_LEN];
	store_artifact_encode(&rec, v);
	/* the runs announcing it: their artifacts/, summary.txt and page change */
	struct announced x = { t, ns };
	if ((r = kx_store_each_announcer(t->s, NULL, d, show_artifact, &x)) == 0)
		r = txn_put(t, k.b, k.len, v, sizeof(v));
	return r;
}

int kx_txn_get_artifact(struct kx_txn *t, const struct kx_digest *d, struct kx_artifact_rec *ret)
{
	return kx_store_get_artifact(t->s, NULL, d, ret);
}

int kx_txn_announce_artifact(struct kx_txn *t, const struct kx_digest *run, size_t index, const struct kx_digest *d,
			     const char *name)
{
	struct key k;
	store_key_pair(&k, T_ANNOUNCED, d, run);
	int r = txn_put(t, k.b, k.len, "", 0);
	if (r < 0)
		return r;
	/* the run's list, in its order: 'P' run index → digest name */
	unsigned char pk[RUN_ARTIFACT_KEY_LEN] = { T_RUN_ARTIFACT };
	memcpy(pk + 1, run->b, 32);
	pk[33] = (unsigned char)(index >> 8);
	pk[34] = (unsigned char)index;
	size_t n = strlen(name);
	unsigned char v[32 + KX_ARTIFACT_NAME_MAX];
	if (n > KX_ARTIFACT_NAME_MAX || index > 0xffff)
		return -EINVAL;
	memcpy(v, d->b, 32);
	memcpy(v + 32, name, n);
	return txn_put(t, pk, sizeof(pk), v, 32 + n);
}

/* The groups of the runs key `id` signed change at ns: the evidence their files show may. */
struct touch_signed {
	struct kx_txn *t;
	int64_t ns;
};

static int touch_signed_run(struct touch_signed *x, const struct kx_digest *run)
{
	struct kx_run_rec rec;
	struct kx_group_rec g;
	int r = kx_txn_get_run(x->t, run, &rec);
	if (r == 0)
		r = kx_txn_get_group(x->t, &rec.group, &g);
	bool bump;
	if (r == 0 && (r = touch_group(x->t, &g, x->ns, &bump)) == 0 && bump)
		r = bump_dirs(x->t, &g, x->ns);
	return r;
}

static int touch_signed(struct kx_txn *t, const struct kx_digest *id, int64_t ns)
{
	struct touch_signed x = { t, ns };
	unsigned char p[33] = { T_SIGNED };
	memcpy(p + 1, id->b, 32);
	struct kx_digest *runs = NULL;
	size_t n = 0, cap = 0;
	struct scan sc;
	int r = store_scan_open(&sc, t->s, NULL, p, sizeof(p));
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn;
		const char *k = rocksdb_iter_key(sc.it, &kn);
		if (kn != PAIR_KEY_LEN || KX_GROW(runs, cap, n, 64) < 0) {
			r = kn != PAIR_KEY_LEN ? -EIO : -ENOMEM;
			break;
		}
		memcpy(runs[n++].b, k + 33, 32);
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	for (size_t i = 0; i < n && r == 0; i++)
		r = touch_signed_run(&x, &runs[i]);
	free(runs);
	return r;
}

static int put_key(struct kx_txn *t, const struct kx_key_rec *k)
{
	struct key kk;
	struct kx_buf b = { 0 };
	store_key_digest(&kk, T_KEY, &k->id);
	int r = store_key_rec_encode(k, &b);
	if (r == 0)
		r = txn_put(t, kk.b, kk.len, b.ptr, b.len);
	kx_buf_release(&b);
	return r;
}

int kx_txn_trust_key(struct kx_txn *t, const uint8_t pub[KX_ED25519_PUB_LEN], const char *name, int64_t ns)
{
	struct kx_key_rec k = { .added_ns = ns };
	kx_key_id(pub, &k.id);
	struct kx_key_rec old;
	int r = kx_store_get_key(t->s, NULL, &k.id, &old);
	if (r == 0)
		return old.revoked_ns ? -EPERM : 1;
	if (r != -ENOENT)
		return r;
	memcpy(k.pub, pub, KX_ED25519_PUB_LEN);
	snprintf(k.name, sizeof(k.name), "%s", name);
	if ((r = put_key(t, &k)) == 0)
		r = touch_signed(t, &k.id, ns);
	t->evidence = true;
	return r;
}

int kx_txn_revoke_key(struct kx_txn *t, const struct kx_digest *id, int64_t ns)
{
	struct kx_key_rec k;
	int r = kx_store_get_key(t->s, NULL, id, &k);
	if (r < 0)
		return r;
	if (k.revoked_ns)
		return 1;
	k.revoked_ns = ns > k.added_ns ? ns : k.added_ns + 1;
	if ((r = put_key(t, &k)) == 0)
		r = touch_signed(t, id, ns);
	t->evidence = true;
	return r;
}
