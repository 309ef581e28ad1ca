// SPDX-License-Identifier: MIT
/*
 * Schema upgrades (docs/store.md): what a store written by an older kindex lacks, written when it
 * is opened to write. Each step can be cut short and is done again at the next open, which still
 * finds the older schema: every write is the same bytes the second time.
 */
#include "private.h"

#include "kx/rank.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct upgrade {
	struct kx_store *s;
	rocksdb_writebatch_t *wb;
};

/* Schema 1 → 2: the 'W' entries of the runs stored while a document they name was missing. */
static int upgrade_run(void *ctx, const uint8_t key[32], const char *val, size_t vn)
{
	struct kx_store *s = ((struct upgrade *)ctx)->s;
	rocksdb_writebatch_t *wb = ((struct upgrade *)ctx)->wb;
	struct kx_run_rec x;
	if (store_run_decode(val, vn, &x) < 0)
		return -EIO;
	memcpy(x.run.b, key, 32);
	const struct kx_digest *named[] = { &x.workload, &x.implementation };
	for (size_t i = 0; i < KX_ARRAY_SIZE(named); i++) {
		struct key k;
		store_key_digest(&k, T_DOC, named[i]);
		int r = store_get_raw(s, s->ro, k.b, k.len, NULL);
		if (r == -ENOENT) {
			store_key_wait(&k, named[i], &x.run);
			rocksdb_writebatch_put(wb, (const char *)k.b, k.len, "", 0);
		} else if (r < 0) {
			return r;
		}
	}
	return 0;
}

/* Apply a batch of the upgrade and empty it. */
static int upgrade_write(struct kx_store *s, rocksdb_writebatch_t *wb)
{
	int r = store_write(s, s->wo_sync, wb);
	rocksdb_writebatch_clear(wb);
	return r;
}

#define UPGRADE_BATCH 4096 /* rank-index copies written at a time (a batch of 100,000 holds 30 MB) */

/*
 * A copy of its run's record in each rank-index entry written before the index held one, a batch at
 * a time (a copy written twice is the same copy, so an upgrade cut short is done again at the next
 * open, which still finds no K_INDEX_COPIES). An entry whose run is not stored is left as it is,
 * for `kindex verify` to report.
 */
static int fill_index_copies(struct kx_store *s, rocksdb_writebatch_t *wb)
{
	unsigned char p = T_INDEX;
	struct kx_buf raw = { 0 };
	struct scan sc;
	int r = store_scan_open(&sc, s, NULL, &p, 1);
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn, vn;
		const char *k = rocksdb_iter_key(sc.it, &kn);
		rocksdb_iter_value(sc.it, &vn);
		if (vn || kn != INDEX_KEY_LEN)
			continue;
		struct kx_digest run;
		struct key rk;
		memcpy(run.b, k + kn - 32, 32);
		store_key_digest(&rk, T_RUN, &run);
		if ((r = store_get_raw(s, s->ro, rk.b, rk.len, &raw)) == 0)
			rocksdb_writebatch_put(wb, k, kn, raw.ptr, raw.len);
		else if (r == -ENOENT)
			r = 0;
		if (r == 0 && rocksdb_writebatch_count(wb) >= UPGRADE_BATCH)
			r = upgrade_write(s, wb);
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	kx_buf_release(&raw);
	return r;
}

static int put_current(void *ctx, const struct kx_digest *group, const struct kx_current_rec *c)
{
	struct upgrade *u = ctx;
	struct key k;
	struct kx_buf b = { 0 };
	store_key_current(&k, group, c->impl);
	int r = store_current_encode(c, &b);
	if (r == 0)
		rocksdb_writebatch_put(u->wb, (const char *)k.b, k.len, b.ptr, b.len);
	kx_buf_release(&b);
	if (r == 0 && rocksdb_writebatch_count(u->wb) >= UPGRADE_BATCH)
		r = upgrade_write(u->s, u->wb);
	return r;
}

/* ---- schema 3 → 4: names by their exact bytes (SPEC §2) ------------------------------------- */

/* A group that runs leave or join (a GPU re-keyed): its record as it was or will be, and the
 * change of its counts. */
struct moved {
	struct kx_group_rec g;
	int64_t ranked, unranked;
};

struct rekey {
	struct kx_store *s;
	rocksdb_writebatch_t *wb;
	struct store_names names;
	struct moved *moved;
	size_t nmoved, cap_moved;
};

static int move_count(struct rekey *u, const struct kx_group_rec *g, const struct kx_run_rec *x, int d)
{
	size_t i = 0;
	while (i < u->nmoved && !kx_digest_equal(&u->moved[i].g.key, &g->key))
		i++;
	if (i == u->nmoved) {
		if (KX_GROW(u->moved, u->cap_moved, u->nmoved, 8) < 0)
			return -ENOMEM;
		u->moved[u->nmoved++] = (struct moved){ .g = *g };
	}
	*(x->passed && x->has_value ? &u->moved[i].ranked : &u->moved[i].unranked) += d;
	return 0;
}

/*
 * A run an older kindex keyed by slug: its record and rank-index copy under its implementation's
 * component, and, where its GPU's component is not its group's GPU (two GPUs whose slugs dropped
 * letters were one group), in the group of that component — the counts of both noted for
 * settle_groups.
 */
static int rekey_run(void *ctx, const uint8_t key[32], const char *val, size_t vn)
{
	struct rekey *u = ctx;
	struct kx_run_rec x;
	if (store_run_decode(val, vn, &x) < 0)
		return -EIO;
	memcpy(x.run.b, key, 32);
	char impl[KX_NAME_MAX], gpu[KX_NAME_MAX];
	struct kx_group_rec g;
	int r = store_names_run(&u->names, u->s, &x, NULL, impl, gpu);
	if (r == 0)
		r = kx_store_get_group(u->s, NULL, &x.group, &g);
	bool moves = r == 0 && *gpu && strcmp(gpu, g.gpu) != 0;
	if (r < 0 || (strcmp(impl, x.impl) == 0 && !moves))
		return r;
	memcpy(x.impl, impl, sizeof(impl));
	struct key k;
	if (moves) {
		store_key_index(&k, &x);
		rocksdb_writebatch_delete(u->wb, (const char *)k.b, k.len);
		struct kx_group_rec ng = g;
		snprintf(ng.gpu, sizeof(ng.gpu), "%s", gpu);
		if ((r = kx_rank_comparison_key(&ng, &ng.key)) < 0 || (r = move_count(u, &g, &x, -1)) < 0 ||
		    (r = move_count(u, &ng, &x, 1)) < 0)
			return r;
		x.group = ng.key;
	}
	struct kx_buf b = { 0 };
	if ((r = store_run_encode(&x, &b)) == 0) {
		store_key_digest(&k, T_RUN, &x.run);
		rocksdb_writebatch_put(u->wb, (const char *)k.b, k.len, b.ptr, b.len);
		store_key_index(&k, &x);
		rocksdb_writebatch_put(u->wb, (const char *)k.b, k.len, b.ptr, b.len);
	}
	kx_buf_release(&b);
	/* runs that moved are written with their groups' records, at once (settle_groups): an upgrade
	 * cut short never leaves a run in a group that is not stored */
	if (r == 0 && !u->nmoved && rocksdb_writebatch_count(u->wb) >= UPGRADE_BATCH)
		r = upgrade_write(u->s, u->wb);
	return r;
}

static void keep_mtime(struct rekey *u, const char *path, int64_t ns);

/* Group g's record and path index entry, into the batch. */
static int put_group(struct rekey *u, const struct kx_group_rec *g)
{
	struct key k;
	struct kx_buf b = { 0 };
	unsigned char tv[TREE_VALUE_LEN];
	int r = store_key_tree(&k, g);
	if (r == 0 && (r = store_group_encode(g, &b)) == 0) {
		store_tree_value(g, tv);
		rocksdb_writebatch_put(u->wb, (const char *)k.b, k.len, (const char *)tv, sizeof(tv));
		store_key_digest(&k, T_GROUP, &g->key);
		rocksdb_writebatch_put(u->wb, (const char *)k.b, k.len, b.ptr, b.len);
	}
	kx_buf_release(&b);
	return r;
}

/* The groups runs left or joined: counts changed, a new group's record and path index entry made,
 * an emptied one's removed, and the store's count of groups set. */
static int settle_groups(struct rekey *u)
{
	int64_t groups = 0;
	int r = 0;
	for (size_t i = 0; i < u->nmoved && r == 0; i++) {
		struct moved *m = &u->moved[i];
		struct kx_group_rec g;
		struct key k;
		bool stored = kx_store_get_group(u->s, NULL, &m->g.key, &g) == 0;
		if (!stored) {
			g = m->g;
			g.ranked = g.unranked = 0;
			groups++;
		}
		g.ranked = (uint32_t)((int64_t)g.ranked + m->ranked);
		g.unranked = (uint32_t)((int64_t)g.unranked + m->unranked);
		if (g.ranked + g.unranked == 0) {
			if ((r = store_key_tree(&k, &g)) < 0)
				break;
			rocksdb_writebatch_delete(u->wb, (const char *)k.b, k.len);
			store_key_digest(&k, T_GROUP, &g.key);
			rocksdb_writebatch_delete(u->wb, (const char *)k.b, k.len);
			groups--;
			continue;
		}
		r = put_group(u, &g);
	}
	if (r == 0 && groups) {
		struct kx_store_stats st;
		unsigned char v[8];
		kx_store_stats(u->s, NULL, &st);
		store_put_u64(v, (uint64_t)((int64_t)st.groups + groups));
		rocksdb_writebatch_put(u->wb, KEYLIT(K_COUNT_GROUPS), (const char *)v, 8);
	}
	if (r == 0)
		r = upgrade_write(u->s, u->wb); /* the moved runs, their groups and the count: one write */
	/* then the new gpu directories' mtimes, each written before the next group reads it back */
	for (size_t i = 0; i < u->nmoved && r == 0; i++) {
		const struct kx_group_rec *g = &u->moved[i].g;
		char path[4 * KX_NAME_MAX + 32];
		snprintf(path, sizeof(path), "benchmarks/%s/%s/%s", g->kernel, g->pass, g->gpu);
		keep_mtime(u, path, g->changed_ns);
		r = upgrade_write(u->s, u->wb);
	}
	return r;
}

/* A directory's mtime moved to at least ns (a renamed directory keeps its groups' newest time). */
static void keep_mtime(struct rekey *u, const char *path, int64_t ns)
{
	int64_t old;
	struct key k;
	if (store_key_mtime(&k, path) < 0 || (kx_store_dir_mtime(u->s, NULL, path, &old) == 0 && old >= ns))
		return;
	unsigned char v[8];
	store_put_u64(v, (uint64_t)ns);
	rocksdb_writebatch_put(u->wb, (const char *)k.b, k.len, (const char *)v, 8);
}

/* A group whose kernel or pass is no plain name: its path index entry and record under the
 * components, and the mtimes of its new directories. (A GPU is part of the comparison key: its runs
 * moved to the group of its component in rekey_run.) */
static int rekey_group(void *ctx, const uint8_t key[32], const char *val, size_t vn)
{
	struct rekey *u = ctx;
	struct kx_group_rec g;
	if (store_group_decode(val, vn, &g) < 0)
		return -EIO;
	memcpy(g.key.b, key, 32);
	char kernel[KX_NAME_MAX], pass[KX_NAME_MAX];
	int r = store_names_group(&u->names, &g, kernel, pass);
	if (r < 0 || (strcmp(kernel, g.kernel) == 0 && strcmp(pass, g.pass) == 0))
		return r;
	struct key k;
	if ((r = store_key_tree(&k, &g)) < 0)
		return r;
	rocksdb_writebatch_delete(u->wb, (const char *)k.b, k.len);
	memcpy(g.kernel, kernel, sizeof(kernel));
	memcpy(g.pass, pass, sizeof(pass));
	if ((r = put_group(u, &g)) == 0) {
		char path[4 * KX_NAME_MAX + 32];
		snprintf(path, sizeof(path), "benchmarks/%s", g.kernel);
		keep_mtime(u, path, g.changed_ns);
		snprintf(path, sizeof(path), "benchmarks/%s/%s", g.kernel, g.pass);
		keep_mtime(u, path, g.changed_ns);
		snprintf(path, sizeof(path), "benchmarks/%s/%s/%s", g.kernel, g.pass, g.gpu);
		keep_mtime(u, path, g.changed_ns);
		/* written at once: the next group of these directories reads the mtimes back */
		r = upgrade_write(u->s, u->wb);
	}
	return r;
}

/* The 'N' entry of a name met: which exact name owns the component (of two that share one, the
 * later in byte order; `kindex verify` names both). */
static int put_name(void *ctx, char level, const char *comp, const char *name)
{
	struct rekey *u = ctx;
	struct key k;
	if (store_key_name(&k, level, comp) < 0)
		return -ENAMETOOLONG;
	rocksdb_writebatch_put(u->wb, (const char *)k.b, k.len, name, strlen(name));
	return rocksdb_writebatch_count(u->wb) >= UPGRADE_BATCH ? upgrade_write(u->s, u->wb) : 0;
}

/* Every 'C' entry removed: the index is written again from the rank index. */
static int drop_currents(struct kx_store *s, rocksdb_writebatch_t *wb)
{
	unsigned char p = T_CURRENT;
	struct scan sc;
	int r = store_scan_open(&sc, s, NULL, &p, 1);
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn;
		const char *k = rocksdb_iter_key(sc.it, &kn);
		rocksdb_writebatch_delete(wb, k, kn);
		if (rocksdb_writebatch_count(wb) >= UPGRADE_BATCH)
			r = upgrade_write(s, wb);
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r == 0 ? upgrade_write(s, wb) : r;
}

/*
 * A store written by an older kindex, opened to write: what it lacks, then the keys that say it no
 * longer lacks it. Schema 2 → 3: the 'C' index, worked out from the rank index. Schema 3 → 4:
 * implementations, GPUs, kernels and passes keyed by the components of their exact names, where
 * an older kindex used a lossy slug; the 'N' index of every name met; then the 'C' index again,
 * under those names. An upgrade cut short writes the same entries again at the next open, which
 * still finds the older schema (a GPU's runs, moved already, are then where they belong).
 */
int store_upgrade(struct kx_store *s, int from, const char *schema)
{
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	struct upgrade u = { s, wb };
	struct rekey rk = { .s = s, .wb = wb };
	int r = from < 2 ? store_each_record(s, NULL, T_RUN, upgrade_run, &u) : 0;
	if (r == 0)
		r = fill_index_copies(s, wb);
	if (r == 0 && from < 4 && (r = store_each_record(s, NULL, T_RUN, rekey_run, &rk)) == 0 &&
	    (r = upgrade_write(s, wb)) == 0 && (r = settle_groups(&rk)) == 0 &&
	    (r = store_each_record(s, NULL, T_GROUP, rekey_group, &rk)) == 0 &&
	    (r = store_names_each(&rk.names, put_name, &rk)) == 0 && (r = drop_currents(s, wb)) == 0)
		r = store_currents_from_index(s, NULL, 0, 1, put_current, &u);
	if (r == 0) {
		rocksdb_writebatch_put(wb, KEYLIT(K_INDEX_COPIES), "", 0);
		rocksdb_writebatch_put(wb, KEYLIT(K_SCHEMA), schema, strlen(schema));
		r = upgrade_write(s, wb);
	}
	store_names_release(&rk.names);
	free(rk.moved);
	rocksdb_writebatch_destroy(wb);
	return r;
}

