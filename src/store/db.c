// SPDX-License-Identifier: MIT
/*
 * The calls into RocksDB that the other files of src/store build on: a RocksDB status as a
 * negative errno, the one path every write to the store takes (store_write) and the sync of the
 * log it guards (kx_store_sync), and the point read of one raw value.
 */
#include "private.h"

#include <errno.h>
#include <pthread.h>
#include <rocksdb/c.h>
#include <string.h>

/*
 * A RocksDB status as a negative errno, by its code: the C API gives the status as text, its
 * code's name first ("Corruption: ", "IO error: ", "Resource busy: "…, Status::ToString), then
 * the message. Only the code is classified, never words inside the message (a "block checksum
 * mismatch" is damage, not a lock); within "IO error", what RocksDB's messages begin with: a full
 * disk, and the LOCK file held ("While lock file: …", "lock hold by current process…").
 */
static bool code_is(const char *err, const char *code, const char **ret_rest)
{
	size_t n = strlen(code);
	if (strncmp(err, code, n) != 0 || strncmp(err + n, ": ", 2) != 0)
		return false;
	*ret_rest = err + n + 2;
	return true;
}

int store_errno(const char *err)
{
	const char *rest;
	if (!err)
		return 0;
	if (code_is(err, "Corruption", &rest))
		return -EUCLEAN;
	if (code_is(err, "NotFound", &rest))
		return -ENOENT;
	if (code_is(err, "Resource busy", &rest))
		return -EBUSY;
	if (code_is(err, "Invalid argument", &rest)) /* "…/CURRENT: does not exist (create_if_missing is false)" */
		return strstr(rest, ": does not exist (create_if_missing") ? -ENOENT : -EINVAL;
	if (code_is(err, "IO error", &rest)) {
		if (strncmp(rest, "No space left on device", 23) == 0 || strstr(rest, ": No space left on device"))
			return -ENOSPC;
		if (strncmp(rest, "While lock file: ", 17) == 0 || strncmp(rest, "lock hold by current process", 28) == 0)
			return -EBUSY; /* LockFile: another process holds LOCK, or this one does */
	}
	return -EIO;
}

/*
 * Every write to the store goes through here. A write RocksDB could not log (a full disk) leaves
 * its log writer failed until RocksDB's own error recovery switches to a new log, which it does
 * once the disk has room again (its SstFileManager checks every few seconds); until then a sync of
 * the log — and Debian's RocksDB is built with assertions — aborts the process
 * (WritableFileWriter: `sync_without_flush_called_`). So a failed write is remembered in
 * `wal_error` until a write succeeds, a sync is refused while it is set, and `wal` keeps a sync
 * from running while a write is in flight that could fail under it. Returns 0 or a negative errno
 * (-ENOSPC for a full disk).
 */
int store_write(struct kx_store *s, const rocksdb_writeoptions_t *wo, rocksdb_writebatch_t *wb)
{
	char *err = NULL;
	pthread_rwlock_wrlock(&s->wal);
	rocksdb_write(s->db, wo, wb, &err);
	s->wal_error = store_errno(err);
	if (!s->wal_error) {
		size_t n;
		rocksdb_writebatch_data(wb, &n);
		s->logged += n;
	}
	int r = s->wal_error;
	pthread_rwlock_unlock(&s->wal);
	rocksdb_free(err);
	return r;
}

/*
 * A sync after a failed write waits for a write that succeeds, and an ingest whose runs were all
 * stored already writes nothing: without a write of its own, its sync would be refused until some
 * other writer came along. So it makes one — a batch holding only a blob for the log, which the
 * log takes and no table stores. It fails for as long as RocksDB has not recovered.
 */
static int store_write_probe(struct kx_store *s)
{
	static const char blob[] = "kindex: sync after a failed write";
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	rocksdb_writebatch_put_log_data(wb, blob, sizeof(blob) - 1);
	int r = store_write(s, s->wo, wb);
	rocksdb_writebatch_destroy(wb);
	return r;
}

int kx_store_sync(struct kx_store *s)
{
	pthread_rwlock_rdlock(&s->wal);
	bool failed = s->wal_error != 0;
	pthread_rwlock_unlock(&s->wal);
	int r = failed ? store_write_probe(s) : 0;
	if (r < 0)
		return r;
	pthread_rwlock_rdlock(&s->wal);
	r = s->wal_error; /* a write may have failed since the probe */
	if (r == 0) {
		char *err = NULL;
		rocksdb_flush_wal(s->db, 1, &err);
		r = store_errno(err);
		rocksdb_free(err);
	}
	pthread_rwlock_unlock(&s->wal);
	return r;
}

int store_get_in(rocksdb_t *db, const rocksdb_readoptions_t *ro, const void *k, size_t kn, struct kx_buf *out)
{
	char *err = NULL;
	size_t n = 0;
	char *v = rocksdb_get(db, ro, k, kn, &n, &err);
	if (err) {
		int r = store_errno(err);
		rocksdb_free(err);
		return r;
	}
	if (!v)
		return -ENOENT;
	int r = 0;
	if (out) {
		kx_buf_reset(out);
		r = kx_buf_append(out, v, n);
	}
	rocksdb_free(v);
	return r;
}

int store_get_raw(struct kx_store *s, const rocksdb_readoptions_t *ro, const void *k, size_t kn, struct kx_buf *out)
{
	return store_get_in(s->db, ro, k, kn, out);
}

int store_read_u64_in(rocksdb_t *db, const rocksdb_readoptions_t *ro, const char *k, size_t kn, uint64_t *ret)
{
	struct kx_buf b = { 0 };
	int r = store_get_in(db, ro, k, kn, &b);
	*ret = r == 0 && b.len == 8 ? store_get_u64((const unsigned char *)b.ptr) : 0;
	kx_buf_release(&b);
	return r;
}

uint64_t store_get_u64_in(rocksdb_t *db, const rocksdb_readoptions_t *ro, const char *k, size_t kn)
{
	uint64_t v;
	store_read_u64_in(db, ro, k, kn, &v);
	return v;
}
