// SPDX-License-Identifier: MIT
/*
 * Schema upgrades (docs/store.md): what a store written by an older kindex lacks, written when it
 * is opened to write. Each step can be cut short and is done again at the next open, which still
 * finds the older schema: every write is the same bytes the second time.
 */
#include "private.h"

#include <errno.h>
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
	if (run_decode(val, vn, &x) < 0)
		return -EIO;
	memcpy(x.run.b, key, 32);
	const struct kx_digest *named[] = { &x.workload, &x.implementation };
	for (size_t i = 0; i < KX_ARRAY_SIZE(named); i++) {
		struct key k;
		key_digest(&k, T_DOC, named[i]);
		int r = get_raw(s, s->ro, k.b, k.len, NULL);
		if (r == -ENOENT) {
			key_wait(&k, named[i], &x.run);
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
	int r = scan_open(&sc, s, NULL, &p, 1);
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn, vn;
		const char *k = rocksdb_iter_key(sc.it, &kn);
		rocksdb_iter_value(sc.it, &vn);
		if (vn || kn != INDEX_KEY_LEN)
			continue;
		struct kx_digest run;
		struct key rk;
		memcpy(run.b, k + kn - 32, 32);
		key_digest(&rk, T_RUN, &run);
		if ((r = get_raw(s, s->ro, rk.b, rk.len, &raw)) == 0)
			rocksdb_writebatch_put(wb, k, kn, raw.ptr, raw.len);
		else if (r == -ENOENT)
			r = 0;
		if (r == 0 && rocksdb_writebatch_count(wb) >= UPGRADE_BATCH)
			r = upgrade_write(s, wb);
	}
	if (r == 0)
		r = scan_status(&sc);
	scan_close(&sc);
	kx_buf_release(&raw);
	return r;
}

static int put_current(void *ctx, const struct kx_digest *group, const struct kx_current_rec *c)
{
	struct upgrade *u = ctx;
	struct key k;
	struct kx_buf b = { 0 };
	key_current(&k, group, c->impl);
	int r = current_encode(c, &b);
	if (r == 0)
		rocksdb_writebatch_put(u->wb, (const char *)k.b, k.len, b.ptr, b.len);
	kx_buf_release(&b);
	if (r == 0 && rocksdb_writebatch_count(u->wb) >= UPGRADE_BATCH)
		r = upgrade_write(u->s, u->wb);
	return r;
}

/* A store written by an older kindex, opened to write: what it lacks, then the keys that say it no
 * longer lacks it. Schema 2 → 3: the 'C' index, worked out from the rank index (an upgrade cut
 * short writes the same entries again at the next open, which still finds schema 2). */
int store_upgrade(struct kx_store *s, int from, const char *schema)
{
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	struct upgrade u = { s, wb };
	int r = from < 2 ? each_record(s, NULL, T_RUN, upgrade_run, &u) : 0;
	if (r == 0)
		r = fill_index_copies(s, wb);
	if (r == 0 && from < 3)
		r = currents_from_index(s, NULL, 0, 1, put_current, &u);
	if (r == 0) {
		rocksdb_writebatch_put(wb, KEYLIT(K_INDEX_COPIES), "", 0);
		rocksdb_writebatch_put(wb, KEYLIT(K_SCHEMA), schema, strlen(schema));
		r = upgrade_write(s, wb);
	}
	rocksdb_writebatch_destroy(wb);
	return r;
}

/* The schema a store says it was written in (`want` is this kindex's), if this kindex reads it:
 * its own, or 1 or 2, which it upgrades; 0 for any other. */
int store_readable_schema(const char *schema, const char *want)
{
	if (strcmp(schema, want) == 0)
		return KX_STORE_SCHEMA;
	return strcmp(schema, "kindexfs-store 1") == 0 ? 1 : strcmp(schema, "kindexfs-store 2") == 0 ? 2 : 0;
}

