// SPDX-License-Identifier: MIT
/*
 * /index.tsv kept by the writer (issue "a million runs"; docs/store.md, 'L'): each group's rows as
 * the build that rendered them made them, under a key whose byte order is the file's order, and a
 * head (`\0index-rows`) naming the columns they were rendered with, that build, and the
 * generation at which they are the whole file. A mount whose view is at that generation reads the
 * file with one scan instead of rendering every group. The tree decides what the rows are and
 * when they hold (src/tree/index-kept.c); this file only keeps them.
 *
 * Like the sizes ('Z'), they are written beside the commits, not in them, without a sync: rows
 * lost in a crash leave a head of an older generation, and the file is rendered.
 */
#include "private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HEAD_VERSION 1
#define HEAD_FIXED (1 + 8 + 8 + 8 + 2)
#define ROWS_HEAD (8 + 8 + 8) /* stamp, build, columns */
#define K_INDEX_HEAD "\0index-rows"
#define BATCH_BYTES (1u << 20) /* written a batch at a time */

/*
 * One component of the key: the name as kx_name_cmp orders it, then its bytes. A run of digits is
 * '0', its length without leading zeros (plus one) and those digits, so that byte order is numeric
 * order (n1024 < n2048 < n16384); any other byte is itself, and compares with a digit run as it
 * compares with a digit ('0'...'9' are one range). Two names equal that way are ordered by their
 * bytes (kx_name_cmp's strcmp), which follow. Both end in a 0 byte, below every other.
 */
static size_t key_component(unsigned char *p, const char *name)
{
	size_t n = 0;
	for (const char *x = name; *x;) {
		if (*x < '0' || *x > '9') {
			p[n++] = (unsigned char)*x++;
			continue;
		}
		while (*x == '0')
			x++;
		size_t len = strspn(x, "0123456789");
		p[n++] = '0';
		p[n++] = (unsigned char)(len + 1);
		memcpy(p + n, x, len);
		n += len, x += len;
	}
	p[n++] = 0;
	size_t len = strlen(name);
	memcpy(p + n, name, len + 1);
	return n + len + 1;
}

/* The key of a group's rows: 'L', its kernel, pass, gpu and workload directory names (comp[0..m),
 * m 3 for a gpu directory's prefix), then its comparison key (key may be NULL for a prefix). */
#define INDEX_KEY_MAX (1 + 4 * 3 * (KX_NAME_MAX + 16) + 32)
static size_t index_key(unsigned char *k, const char *const *comp, int m, const struct kx_digest *key)
{
	size_t n = 0;
	k[n++] = T_INDEX_ROWS;
	for (int i = 0; i < m; i++)
		n += key_component(k + n, comp[i]);
	if (key) {
		memcpy(k + n, key->b, 32);
		n += 32;
	}
	return n;
}

static bool names_fit(const char *const *comp, int m)
{
	for (int i = 0; i < m; i++)
		if (strlen(comp[i]) >= KX_NAME_MAX + 16)
			return false;
	return true;
}

void kx_index_head_release(struct kx_index_head *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->nnames; i++)
		free(h->names[i]);
	free(h->names);
	*h = (struct kx_index_head){ 0 };
}

int kx_store_get_index_head(struct kx_store *s, struct kx_view *v, struct kx_index_head *ret)
{
	*ret = (struct kx_index_head){ 0 };
	struct kx_buf b = { 0 };
	int r = store_get_in(db_of(s, v), ro_of(s, v), KEYLIT(K_INDEX_HEAD), &b);
	const unsigned char *p = (const unsigned char *)b.ptr;
	if (r == 0 && (b.len < HEAD_FIXED || p[0] != HEAD_VERSION))
		r = -EBADMSG;
	size_t n = r == 0 ? (size_t)p[25] << 8 | p[26] : 0, off = HEAD_FIXED;
	if (r == 0 && !(ret->names = calloc(n ? n : 1, sizeof(*ret->names))))
		r = -ENOMEM;
	for (size_t i = 0; r == 0 && i < n; i++) {
		const char *end = off < b.len ? memchr(b.ptr + off, '\0', b.len - off) : NULL;
		if (!end)
			r = -EBADMSG;
		else if (!(ret->names[ret->nnames++] = strdup(b.ptr + off)))
			r = -ENOMEM;
		else
			off = (size_t)(end - b.ptr) + 1;
	}
	if (r == 0 && off != b.len)
		r = -EBADMSG;
	if (r == 0) {
		ret->build = store_get_u64(p + 1);
		ret->generation = store_get_u64(p + 9);
		ret->size = store_get_u64(p + 17);
	} else {
		kx_index_head_release(ret);
	}
	kx_buf_release(&b);
	return r;
}

struct kx_index_batch {
	struct kx_store *s;
	rocksdb_writebatch_t *wb;
	size_t bytes;
};

int kx_store_index_begin(struct kx_store *s, struct kx_index_batch **ret)
{
	*ret = NULL;
	if (s->flags & (KX_STORE_READONLY | KX_STORE_FOLLOW | KX_STORE_VERIFY))
		return -EROFS;
	struct kx_index_batch *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->s = s;
	b->wb = rocksdb_writebatch_create();
	*ret = b;
	return 0;
}

static int batch_flush(struct kx_index_batch *b)
{
	int r = b->bytes ? store_write(b->s, b->s->wo, b->wb) : 0;
	rocksdb_writebatch_clear(b->wb);
	b->bytes = 0;
	return r;
}

int kx_store_index_clear(struct kx_index_batch *b, const char *const comp[3], uint64_t *ret_bytes)
{
	unsigned char lo[INDEX_KEY_MAX], hi[INDEX_KEY_MAX];
	size_t n = 1;
	if (comp && !names_fit(comp, 3))
		return -ENAMETOOLONG;
	if (comp)
		n = index_key(lo, comp, 3, NULL);
	else
		lo[0] = T_INDEX_ROWS;
	memcpy(hi, lo, n);
	hi[n - 1]++; /* past every key that begins with lo: its last byte is 0 (or the tag) */
	/* the bytes of the rows it removes (the store's latest state: this batch's writer is the only
	 * one of these keys) */
	struct scan sc;
	uint64_t bytes = 0;
	int r = ret_bytes ? store_scan_open(&sc, b->s, NULL, lo, n) : 0;
	for (; ret_bytes && r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		size_t vn;
		rocksdb_iter_value(sc.it, &vn);
		bytes += vn > ROWS_HEAD ? vn - ROWS_HEAD : 0;
	}
	if (ret_bytes) {
		if (r == 0)
			r = store_scan_status(&sc);
		store_scan_close(&sc);
		*ret_bytes = bytes;
	}
	if (r < 0)
		return r;
	rocksdb_writebatch_delete_range(b->wb, (const char *)lo, n, (const char *)hi, n);
	b->bytes += 2 * n;
	/* a range goes before the rows that follow it: written now */
	return batch_flush(b);
}

int kx_store_index_put(struct kx_index_batch *b, const char *const comp[4], const struct kx_index_row *row)
{
	unsigned char k[INDEX_KEY_MAX], head[ROWS_HEAD];
	if (!names_fit(comp, 4))
		return -ENAMETOOLONG;
	size_t kn = index_key(k, comp, 4, &row->key);
	store_put_u64(head, (uint64_t)row->stamp);
	store_put_u64(head + 8, row->build);
	store_put_u64(head + 16, row->columns);
	rocksdb_writebatch_putv(b->wb, 1, (const char *[]){ (const char *)k }, (size_t[]){ kn }, 2,
				(const char *[]){ (const char *)head, row->rows }, (size_t[]){ sizeof(head), row->n });
	b->bytes += kn + sizeof(head) + row->n;
	return b->bytes >= BATCH_BYTES ? batch_flush(b) : 0;
}

void kx_store_index_abort(struct kx_index_batch *b)
{
	if (!b)
		return;
	rocksdb_writebatch_destroy(b->wb);
	free(b);
}

int kx_store_index_end(struct kx_index_batch *b, const struct kx_index_head *head)
{
	int r = batch_flush(b);
	struct kx_buf v = { 0 };
	unsigned char fixed[HEAD_FIXED] = { HEAD_VERSION };
	store_put_u64(fixed + 1, head->build);
	store_put_u64(fixed + 9, head->generation);
	store_put_u64(fixed + 17, head->size);
	fixed[25] = (unsigned char)(head->nnames >> 8);
	fixed[26] = (unsigned char)head->nnames;
	if (head->nnames > 0xffff)
		r = -E2BIG;
	if (r == 0 && kx_buf_append(&v, fixed, sizeof(fixed)) < 0)
		r = -ENOMEM;
	for (size_t i = 0; r == 0 && i < head->nnames; i++)
		if (kx_buf_append(&v, head->names[i], strlen(head->names[i]) + 1) < 0)
			r = -ENOMEM;
	if (r == 0) {
		rocksdb_writebatch_put(b->wb, KEYLIT(K_INDEX_HEAD), v.ptr, v.len);
		r = store_write(b->s, b->s->wo, b->wb);
	}
	kx_buf_release(&v);
	kx_store_index_abort(b);
	return r;
}

/* The row at the iterator; -EBADMSG for a record it cannot read. */
static int row_at(rocksdb_iterator_t *it, struct kx_index_row *ret)
{
	size_t kn, vn;
	const unsigned char *k = (const unsigned char *)rocksdb_iter_key(it, &kn);
	const unsigned char *val = (const unsigned char *)rocksdb_iter_value(it, &vn);
	if (kn < 1 + 32 || vn < ROWS_HEAD)
		return -EBADMSG;
	memcpy(ret->key.b, k + kn - 32, 32);
	ret->at = k;
	ret->at_len = kn;
	ret->stamp = (int64_t)store_get_u64(val);
	ret->build = store_get_u64(val + 8);
	ret->columns = store_get_u64(val + 16);
	ret->rows = (const char *)val + ROWS_HEAD;
	ret->n = vn - ROWS_HEAD;
	return 0;
}

int kx_store_each_index_rows(struct kx_store *s, struct kx_view *v, kx_index_rows_fn fn, void *ctx)
{
	unsigned char p = T_INDEX_ROWS;
	struct scan sc;
	int r = store_scan_open_through(&sc, s, v, &p, 1);
	for (; r == 0 && rocksdb_iter_valid(sc.it); rocksdb_iter_next(sc.it)) {
		struct kx_index_row row;
		if ((r = row_at(sc.it, &row)) == 0)
			r = fn(ctx, &row);
	}
	if (r == 0)
		r = store_scan_status(&sc);
	store_scan_close(&sc);
	return r;
}

struct kx_index_cursor {
	struct scan sc;
};

int kx_store_index_cursor(struct kx_store *s, struct kx_view *v, struct kx_index_cursor **ret)
{
	unsigned char p = T_INDEX_ROWS;
	struct kx_index_cursor *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	/* a cursor reads on through the file (a mount's READs of index.tsv, 35 MB at 100,000 runs):
	 * its blocks would only push out of the block cache what point reads keep there */
	int r = store_scan_open_through(&c->sc, s, v, &p, 1);
	if (r < 0) {
		free(c);
		c = NULL;
	}
	*ret = c;
	return r;
}

/* The row the cursor is at after a seek or a step; -ENOENT past the last. */
static int cursor_row(struct kx_index_cursor *c, struct kx_index_row *ret)
{
	if (rocksdb_iter_valid(c->sc.it))
		return row_at(c->sc.it, ret);
	int r = store_scan_status(&c->sc);
	return r < 0 ? r : -ENOENT;
}

int kx_index_cursor_seek(struct kx_index_cursor *c, const void *at, size_t n, struct kx_index_row *ret)
{
	unsigned char first = T_INDEX_ROWS;
	rocksdb_iter_seek(c->sc.it, n ? at : (const void *)&first, n ? n : 1);
	return cursor_row(c, ret);
}

int kx_index_cursor_find(struct kx_index_cursor *c, const char *const comp[4], const struct kx_digest *key,
			 struct kx_index_row *ret)
{
	unsigned char k[INDEX_KEY_MAX];
	if (!names_fit(comp, 4))
		return -ENOENT;
	size_t kn = index_key(k, comp, 4, key);
	int r = kx_index_cursor_seek(c, k, kn, ret);
	return r == 0 && (ret->at_len != kn || memcmp(ret->at, k, kn) != 0) ? -ENOENT : r;
}

int kx_index_cursor_next(struct kx_index_cursor *c, struct kx_index_row *ret)
{
	rocksdb_iter_next(c->sc.it);
	return cursor_row(c, ret);
}

void kx_index_cursor_free(struct kx_index_cursor *c)
{
	if (!c)
		return;
	store_scan_close(&c->sc);
	free(c);
}
