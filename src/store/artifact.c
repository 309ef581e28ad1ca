// SPDX-License-Identifier: MIT
/*
 * Artifacts (SPEC §9, docs/artifacts.md): the bytes behind a run's figures, stored once by their
 * SHA-256 and read back in ranges, never held whole in memory.
 *
 * An upload writes the bytes as they come, in chunks of KX_ARTIFACT_CHUNK under 'B' upload[16]
 * index[4], hashing them on the way; only at its end is the digest known. The chunks are written
 * without a sync and under a key no reader looks up: until an 'F' record names the upload (a
 * transaction, kx_txn_add_artifact, whose synced commit makes the chunks before it durable too),
 * they are invisible, and a crash leaves them for `kindex gc`. The upload's id starts with the
 * time it began, so gc knows how old a left-over upload is. The same bytes uploaded twice keep the
 * first upload; the second's chunks are deleted (kx_upload_close).
 *
 * Chunks are larger than the store's min_blob_size: RocksDB keeps them in its blob files, beside
 * the LSM tree, which stays small (store.c). Each ends with the CRC-32C of its bytes (version 2 of
 * the record), checked at every read with the CPU's crc32 instruction, and RocksDB's own checksum
 * of the blob is not: Debian's librocksdb computes that one in software, which was half of a
 * mount's CPU streaming an artifact (docs/performance-log.md). A damaged chunk still fails the read
 * (EIO). Version 1 records, from before, are read with RocksDB's checksum.
 */
#include "private.h"

#include "kx/canon.h"
#include "kx/manifest.h"

#include <errno.h>
#include <rocksdb/c.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define CHUNK_KEY_LEN (1 + KX_UPLOAD_ID_LEN + 4)

static void chunk_key(unsigned char k[CHUNK_KEY_LEN], const uint8_t upload[KX_UPLOAD_ID_LEN], uint32_t index)
{
	k[0] = T_CHUNK;
	memcpy(k + 1, upload, KX_UPLOAD_ID_LEN);
	store_put_u32(k + 1 + KX_UPLOAD_ID_LEN, index);
}

void store_artifact_encode(const struct kx_artifact_rec *a, unsigned char out[ARTIFACT_VALUE_LEN])
{
	out[0] = 2;
	store_put_u64(out + 1, a->size);
	store_put_u64(out + 9, (uint64_t)a->received_ns);
	memcpy(out + 17, a->upload, KX_UPLOAD_ID_LEN);
	store_put_u64(out + ARTIFACT_VALUE_LEN_V1, a->generation);
}

int store_artifact_decode(const char *p, size_t n, struct kx_artifact_rec *a)
{
	bool v1 = n == ARTIFACT_VALUE_LEN_V1 && p[0] == 1, v2 = n == ARTIFACT_VALUE_LEN && p[0] == 2;
	if (!v1 && !v2)
		return -EIO;
	a->version = (uint8_t)p[0];
	a->size = store_get_u64((const unsigned char *)p + 1);
	a->received_ns = (int64_t)store_get_u64((const unsigned char *)p + 9);
	memcpy(a->upload, p + 17, KX_UPLOAD_ID_LEN);
	a->generation = a->version >= 2 ? store_get_u64((const unsigned char *)p + ARTIFACT_VALUE_LEN_V1) : 0;
	return 0;
}

int kx_store_get_artifact(struct kx_store *s, struct kx_view *v, const struct kx_digest *d,
			  struct kx_artifact_rec *ret)
{
	struct key k;
	store_key_digest(&k, T_ARTIFACT, d);
	struct kx_buf b = { 0 };
	int r = store_get_in(db_of(s, v), ro_of(s, v), k.b, k.len, &b);
	if (r == 0)
		r = store_artifact_decode(b.ptr, b.len, ret);
	kx_buf_release(&b);
	return r;
}

int kx_store_read_artifact(struct kx_store *s, struct kx_view *v, const struct kx_artifact_rec *a, uint64_t off,
			   void *buf, size_t len, size_t *ret_n)
{
	size_t done = 0, crc = a->version >= 2 ? 4 : 0;
	const rocksdb_readoptions_t *ro = crc ? ro_bare_of(s, v) : ro_of(s, v);
	int r = 0;
	while (done < len && off + done < a->size) {
		uint64_t at = off + done;
		unsigned char k[CHUNK_KEY_LEN];
		chunk_key(k, a->upload, (uint32_t)(at / KX_ARTIFACT_CHUNK));
		char *err = NULL;
		rocksdb_pinnableslice_t *ps = rocksdb_get_pinned(db_of(s, v), ro, (const char *)k, sizeof(k), &err);
		if (err) {
			r = store_errno(err);
			rocksdb_free(err);
			break;
		}
		size_t n = 0;
		const char *p = ps ? rocksdb_pinnableslice_value(ps, &n) : NULL;
		size_t in = (size_t)(at % KX_ARTIFACT_CHUNK);
		/* every chunk but the last is whole: anything else is damage */
		uint64_t want = a->size - (at - in) < KX_ARTIFACT_CHUNK ? a->size - (at - in) : KX_ARTIFACT_CHUNK;
		if (!p || n != want + crc ||
		    (crc && kx_crc32c(0, p, (size_t)want) != (uint32_t)store_get_u32((const unsigned char *)p + want))) {
			rocksdb_pinnableslice_destroy(ps);
			r = -EIO;
			break;
		}
		n = (size_t)want;
		size_t take = n - in < len - done ? n - in : len - done;
		memcpy((char *)buf + done, p + in, take);
		rocksdb_pinnableslice_destroy(ps);
		done += take;
	}
	*ret_n = done;
	return r;
}

static int artifact_record(void *ctx, const uint8_t key[32], const char *val, size_t vn)
{
	void **e = ctx;
	struct kx_artifact_rec a;
	int r = store_artifact_decode(val, vn, &a);
	if (r < 0)
		return r;
	struct kx_digest d;
	memcpy(d.b, key, 32);
	return ((kx_artifact_fn)e[0])(e[1], &d, &a);
}

int kx_store_each_artifact(struct kx_store *s, struct kx_view *v, kx_artifact_fn fn, void *ctx)
{
	void *e[2] = { (void *)fn, ctx };
	return store_each_record(s, v, T_ARTIFACT, artifact_record, e);
}

int kx_store_any_artifact(struct kx_store *s, struct kx_view *v, bool *ret)
{
	unsigned char p = T_ARTIFACT;
	struct scan sc;
	int r = store_scan_open(&sc, s, v, &p, 1);
	if (r == 0) {
		*ret = rocksdb_iter_valid(sc.it);
		r = store_scan_status(&sc);
	}
	store_scan_close(&sc);
	return r;
}

int kx_store_run_artifacts(struct kx_store *s, struct kx_view *v, const struct kx_digest *run,
			   kx_run_artifact_ref_fn fn, void *ctx)
{
	unsigned char p[33] = { T_RUN_ARTIFACT };
	memcpy(p + 1, run->b, 32);
	struct scan sc;
	int r = store_scan_open(&sc, s, v, p, sizeof(p));
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn, vn;
		rocksdb_iter_key(sc.it, &kn);
		const char *val = rocksdb_iter_value(sc.it, &vn);
		if (kn != RUN_ARTIFACT_KEY_LEN || vn <= 32 || vn > 32 + KX_ARTIFACT_NAME_MAX) {
			r = -EIO;
			break;
		}
		struct kx_digest d;
		memcpy(d.b, val, 32);
		char name[KX_ARTIFACT_NAME_MAX + 1];
		memcpy(name, val + 32, vn - 32);
		name[vn - 32] = '\0';
		r = fn(ctx, name, &d);
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r;
}

/* ---- uploads --------------------------------------------------------------------------------- */

struct kx_artifact_upload {
	struct kx_store *s;
	struct kx_sha256 *h;
	uint64_t size, max;
	uint32_t chunks; /* written */
	uint8_t id[KX_UPLOAD_ID_LEN];
	size_t fill;
	unsigned char *chunk; /* KX_ARTIFACT_CHUNK bytes, then room for their CRC-32C */
};

int kx_store_upload_begin(struct kx_store *s, uint64_t max, struct kx_artifact_upload **ret)
{
	if (s->flags & KX_STORE_READONLY)
		return -EROFS;
	struct kx_artifact_upload *u = calloc(1, sizeof(*u));
	if (!u || !(u->chunk = malloc(KX_ARTIFACT_CHUNK + 4)) || !(u->h = kx_sha256_new())) {
		if (u)
			free(u->chunk);
		free(u);
		return -ENOMEM;
	}
	u->s = s;
	u->max = max;
	store_put_u64(u->id, (uint64_t)kx_now_ns());
	if (getrandom(u->id + 8, KX_UPLOAD_ID_LEN - 8, 0) != KX_UPLOAD_ID_LEN - 8) {
		for (size_t i = 8; i < KX_UPLOAD_ID_LEN; i++) /* no entropy yet: unique enough with the time */
			u->id[i] = (uint8_t)(rand() >> 3);
	}
	*ret = u;
	return 0;
}

static int put_chunk(struct kx_artifact_upload *u)
{
	if (u->chunks == UINT32_MAX)
		return -EFBIG;
	unsigned char k[CHUNK_KEY_LEN];
	chunk_key(k, u->id, u->chunks);
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	store_put_u32(u->chunk + u->fill, kx_crc32c(0, u->chunk, u->fill));
	rocksdb_writebatch_put(wb, (const char *)k, sizeof(k), (const char *)u->chunk, u->fill + 4);
	int r = store_write(u->s, u->s->wo, wb);
	rocksdb_writebatch_destroy(wb);
	if (r == 0) {
		u->chunks++;
		u->fill = 0;
	}
	return r;
}

int kx_upload_write(struct kx_artifact_upload *u, const void *p, size_t n)
{
	if (n > u->max - u->size)
		return -EFBIG;
	kx_sha256_update(u->h, p, n);
	u->size += n;
	while (n) {
		size_t take = KX_ARTIFACT_CHUNK - u->fill < n ? KX_ARTIFACT_CHUNK - u->fill : n;
		memcpy(u->chunk + u->fill, p, take);
		u->fill += take;
		p = (const char *)p + take;
		n -= take;
		int r;
		if (u->fill == KX_ARTIFACT_CHUNK && (r = put_chunk(u)) < 0)
			return r;
	}
	return 0;
}

int kx_upload_end(struct kx_artifact_upload *u, struct kx_digest *ret, struct kx_artifact_rec *rec)
{
	int r = u->fill ? put_chunk(u) : 0;
	if (r < 0)
		return r;
	kx_sha256_final(u->h, ret->b);
	u->h = NULL;
	rec->version = 2;
	rec->generation = 0; /* the commit's: kx_txn_add_artifact */
	rec->size = u->size;
	rec->received_ns = kx_now_ns();
	memcpy(rec->upload, u->id, KX_UPLOAD_ID_LEN);
	return 0;
}

/* The keys of an upload's chunks: from 'B' upload to the upload's id incremented (excluded), which
 * every index of it sorts below. */
static void upload_range(const uint8_t upload[KX_UPLOAD_ID_LEN], unsigned char lo[1 + KX_UPLOAD_ID_LEN],
			 unsigned char hi[1 + KX_UPLOAD_ID_LEN])
{
	lo[0] = T_CHUNK;
	memcpy(lo + 1, upload, KX_UPLOAD_ID_LEN);
	memcpy(hi, lo, 1 + KX_UPLOAD_ID_LEN);
	size_t i = 1 + KX_UPLOAD_ID_LEN;
	while (i > 1 && hi[i - 1] == 0xff)
		hi[--i] = 0;
	hi[i - 1]++;
}

/* Delete every chunk of an upload (one range), and with d its record, in one write. */
int kx_store_remove_upload(struct kx_store *s, const struct kx_digest *d, const uint8_t upload[KX_UPLOAD_ID_LEN])
{
	unsigned char lo[1 + KX_UPLOAD_ID_LEN], hi[1 + KX_UPLOAD_ID_LEN];
	upload_range(upload, lo, hi);
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	rocksdb_writebatch_delete_range(wb, (const char *)lo, sizeof(lo), (const char *)hi, sizeof(hi));
	if (d) {
		struct key k;
		store_key_digest(&k, T_ARTIFACT, d);
		rocksdb_writebatch_delete(wb, (const char *)k.b, k.len);
	}
	int r = store_write(s, s->wo_sync, wb);
	rocksdb_writebatch_destroy(wb);
	return r;
}

int kx_store_reclaim_upload(struct kx_store *s, const uint8_t upload[KX_UPLOAD_ID_LEN])
{
	unsigned char lo[1 + KX_UPLOAD_ID_LEN], hi[1 + KX_UPLOAD_ID_LEN];
	upload_range(upload, lo, hi);
	/* the range's tables rewritten without the deleted chunks: a blob file only they referenced
	 * is then referenced by none, and RocksDB deletes it */
	rocksdb_compact_range(s->db, (const char *)lo, sizeof(lo), (const char *)hi, sizeof(hi));
	return 0;
}

int kx_store_each_upload(struct kx_store *s, struct kx_view *v, kx_upload_fn fn, void *ctx)
{
	unsigned char p = T_CHUNK;
	struct scan sc;
	int r = store_scan_open(&sc, s, v, &p, 1);
	uint8_t cur[KX_UPLOAD_ID_LEN];
	uint64_t bytes = 0;
	bool have = false;
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t kn, vn;
		const char *k = rocksdb_iter_key(sc.it, &kn);
		if (kn != CHUNK_KEY_LEN) {
			r = -EIO;
			break;
		}
		if (have && memcmp(cur, k + 1, KX_UPLOAD_ID_LEN) != 0) {
			if ((r = fn(ctx, cur, bytes)) != 0)
				break;
			bytes = 0;
		}
		memcpy(cur, k + 1, KX_UPLOAD_ID_LEN);
		have = true;
		rocksdb_iter_value(sc.it, &vn);
		bytes += vn;
	}
	if (r == 0 && have)
		r = fn(ctx, cur, bytes);
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r;
}

void kx_upload_close(struct kx_artifact_upload *u, bool keep)
{
	if (!u)
		return;
	/* what is not deleted now, kindex gc takes; an upload larger than a memtable was written out to
	 * blob files, whose disk its range's compaction gives back (a smaller one's chunks and their
	 * deletion meet in the memtable, and go no further) */
	if (!keep && u->chunks && kx_store_remove_upload(u->s, NULL, u->id) == 0 && u->size > STORE_WRITE_BUFFER)
		kx_store_reclaim_upload(u->s, u->id);
	if (u->h) {
		uint8_t dummy[KX_DIGEST_LEN];
		kx_sha256_final(u->h, dummy);
	}
	free(u->chunk);
	free(u);
}
