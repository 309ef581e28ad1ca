// SPDX-License-Identifier: MIT
/*
 * Reading a store: views (a RocksDB snapshot, with a reference on the replica generation it is
 * of when the store follows one) and the point reads — a document, a run, a group, a source, the
 * counters and a directory's mtime — in a view or in the latest state.
 */
#include "private.h"

#include <errno.h>
#include <pthread.h>
#include <rocksdb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kx_view *kx_store_view(struct kx_store *s)
{
	struct kx_view *v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->s = s;
	pthread_mutex_init(&v->seek_lock, NULL);
	pthread_mutex_lock(&s->follow);
	if ((v->dbh = s->cur))
		v->dbh->refs++;
	v->db = s->db;
	pthread_mutex_unlock(&s->follow);
	v->snap = rocksdb_create_snapshot(v->db);
	v->ro = rocksdb_readoptions_create();
	rocksdb_readoptions_set_snapshot(v->ro, v->snap);
	v->ro_bare = rocksdb_readoptions_create();
	rocksdb_readoptions_set_snapshot(v->ro_bare, v->snap);
	rocksdb_readoptions_set_verify_checksums(v->ro_bare, 0);
	v->generation = store_get_u64_in(v->db, v->ro, KEYLIT(K_GEN));
	return v;
}

void kx_view_release(struct kx_view *v)
{
	if (!v)
		return;
	if (v->seek_it)
		rocksdb_iter_destroy(v->seek_it);
	pthread_mutex_destroy(&v->seek_lock);
	rocksdb_readoptions_destroy(v->ro);
	rocksdb_readoptions_destroy(v->ro_bare);
	rocksdb_release_snapshot(v->db, v->snap);
	store_dbh_put(v->s, v->dbh);
	free(v);
}

uint64_t kx_view_generation(const struct kx_view *v)
{
	return v->generation;
}

int kx_store_get_doc(struct kx_store *s, struct kx_view *v, const struct kx_digest *d,
		     struct kx_buf *out)
{
	struct key k;
	store_key_digest(&k, T_DOC, d);
	return store_get_in(db_of(s, v), ro_of(s, v), k.b, k.len, out);
}

int kx_store_get_run(struct kx_store *s, struct kx_view *v, const struct kx_digest *d,
		     struct kx_run_rec *ret)
{
	struct key k;
	store_key_digest(&k, T_RUN, d);
	struct kx_buf b = { 0 };
	int r = store_get_in(db_of(s, v), ro_of(s, v), k.b, k.len, &b);
	if (r == 0) {
		struct kx_run_rec x;
		r = store_run_decode(b.ptr, b.len, &x);
		if (r == 0) {
			x.run = *d;
			*ret = x;
		}
	}
	kx_buf_release(&b);
	return r;
}

int kx_store_get_group(struct kx_store *s, struct kx_view *v, const struct kx_digest *key,
		       struct kx_group_rec *ret)
{
	struct key k;
	store_key_digest(&k, T_GROUP, key);
	struct kx_buf b = { 0 };
	int r = store_get_in(db_of(s, v), ro_of(s, v), k.b, k.len, &b);
	if (r == 0) {
		struct kx_group_rec g;
		r = store_group_decode(b.ptr, b.len, &g);
		if (r == 0) {
			g.key = *key;
			*ret = g;
		}
	}
	kx_buf_release(&b);
	return r;
}

int kx_store_find_source(struct kx_store *s, struct kx_view *v, const char *source,
			 const char *external_id, struct kx_digest *ret)
{
	struct key k;
	if (store_key_source(&k, source, external_id) < 0)
		return -ENOENT;
	struct kx_buf b = { 0 };
	int r = store_get_in(db_of(s, v), ro_of(s, v), k.b, k.len, &b);
	if (r == 0 && b.len != 32)
		r = -EIO;
	if (r == 0)
		memcpy(ret->b, b.ptr, 32);
	kx_buf_release(&b);
	return r;
}

int kx_store_stats(struct kx_store *s, struct kx_view *v, struct kx_store_stats *ret)
{
	const rocksdb_readoptions_t *ro = ro_of(s, v);
	rocksdb_t *db = db_of(s, v);
	ret->runs = store_get_u64_in(db, ro, KEYLIT(K_COUNT_RUNS));
	ret->documents = store_get_u64_in(db, ro, KEYLIT(K_COUNT_DOCS));
	ret->groups = store_get_u64_in(db, ro, KEYLIT(K_COUNT_GROUPS));
	/* the generation with its status: where its table is damaged, 0 must not pass for it */
	bool damaged = store_read_u64_in(db, ro, KEYLIT(K_GEN), &ret->generation) == -EUCLEAN;
	ret->evidence_generation = store_get_u64_in(db, ro, KEYLIT(K_EVIDENCE));
	ret->changed_ns = (int64_t)store_get_u64_in(db, ro, KEYLIT(K_CHANGED));
	ret->created_ns = (int64_t)store_get_u64_in(db, ro, KEYLIT(K_CREATED));
	struct kx_buf id = { 0 };
	ret->id[0] = '\0';
	if (store_get_in(db, ro, KEYLIT(K_ID), &id) == 0 && id.len == 16)
		for (size_t i = 0; i < 16; i++)
			snprintf(ret->id + 2 * i, 3, "%02x", (unsigned char)id.ptr[i]);
	kx_buf_release(&id);
	if (!ret->changed_ns)
		ret->changed_ns = ret->created_ns;
	return damaged ? -EUCLEAN : 0;
}

int kx_store_dir_mtime(struct kx_store *s, struct kx_view *v, const char *path, int64_t *ret_ns)
{
	struct key k;
	if (store_key_mtime(&k, path) < 0)
		return -ENOENT;
	struct kx_buf b = { 0 };
	int r = store_get_in(db_of(s, v), ro_of(s, v), k.b, k.len, &b);
	if (r == 0 && b.len != 8)
		r = -EIO;
	if (r == 0)
		*ret_ns = (int64_t)store_get_u64((const unsigned char *)b.ptr);
	kx_buf_release(&b);
	return r;
}

int kx_store_get_key(struct kx_store *s, struct kx_view *v, const struct kx_digest *id, struct kx_key_rec *ret)
{
	struct key k;
	store_key_digest(&k, T_KEY, id);
	struct kx_buf b = { 0 };
	int r = store_get_in(db_of(s, v), ro_of(s, v), k.b, k.len, &b);
	if (r == 0 && (r = store_key_rec_decode(b.ptr, b.len, ret)) == 0)
		ret->id = *id;
	kx_buf_release(&b);
	return r;
}
