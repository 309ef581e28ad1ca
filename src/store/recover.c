// SPDX-License-Identifier: MIT
/*
 * The salvage of a store whose write-ahead log is damaged (kx_store_recover, `kindex recover`):
 * every log copied as it is into lost+found/, the store opened as it stood before the damage, and
 * the loss recorded under K_LOSSES, which kx_store_losses reads back.
 */
#include "private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <rocksdb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Copy `name` from directory fd `from` into `to`, synced; 0 or a negative errno. */
static int copy_synced(int from, int to, const char *name)
{
	int in = openat(from, name, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	int out = openat(to, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int r = out < 0 ? -errno : 0;
	char buf[65536];
	for (ssize_t n; r == 0 && (n = read(in, buf, sizeof(buf))) != 0;) {
		if (n < 0) {
			r = errno == EINTR ? 0 : -errno;
			continue;
		}
		for (ssize_t off = 0, w; r == 0 && off < n; off += w > 0 ? w : 0)
			if ((w = write(out, buf + off, (size_t)(n - off))) < 0 && errno != EINTR)
				r = -errno;
	}
	if (r == 0 && fsync(out) < 0)
		r = -errno;
	close(in);
	if (out >= 0)
		close(out);
	return r;
}

/*
 * The store's write-ahead logs, copied as they are into DIR/lost+found/<stamp>/ (made, synced):
 * what recovery drops stays on disk for whoever can make more of it. *ret_where: "lost+found/…".
 */
static int keep_logs(const char *dir, char ret_where[64], char **ret_err)
{
	char stamp[40];
	kx_time_format(kx_now_ns(), stamp);
	snprintf(ret_where, 64, "lost+found/%s", stamp);
	int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), lf = -1, to = -1, r = 0;
	DIR *list = NULL;
	if (d < 0 || ((mkdirat(d, "lost+found", 0755) < 0 && errno != EEXIST)) ||
	    (lf = openat(d, "lost+found", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    mkdirat(lf, stamp, 0755) < 0 || (to = openat(lf, stamp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		r = -errno;
	int scan = r == 0 ? dup(d) : -1;
	if (r == 0 && (scan < 0 || !(list = fdopendir(scan))))
		r = -errno;
	for (struct dirent *e; r == 0 && (e = readdir(list));)
		if (store_wal_number(e->d_name) && (r = copy_synced(d, to, e->d_name)) < 0 &&
		    asprintf(ret_err, "cannot keep '%s/%s' in %s/: %s", dir, e->d_name, ret_where, strerror(-r)) < 0)
			*ret_err = NULL;
	if (r == 0 && (fsync(to) < 0 || fsync(lf) < 0 || fsync(d) < 0))
		r = -errno;
	if (r < 0 && !*ret_err && asprintf(ret_err, "cannot make '%s/%s/': %s", dir, ret_where, strerror(-r)) < 0)
		*ret_err = NULL;
	if (list)
		closedir(list);
	else if (scan >= 0)
		close(scan);
	if (to >= 0)
		close(to);
	if (lf >= 0)
		close(lf);
	if (d >= 0)
		close(d);
	return r;
}

int kx_store_recover(const char *dir, char **ret_report, char **ret_err)
{
	struct kx_store *s;
	char *why = NULL;
	*ret_report = *ret_err = NULL;
	if (store_is_generation(dir)) {
		*ret_err = store_generation_refused(dir, "recover");
		return -EROFS;
	}
	/* read-only first: a store that opens as it is is left as it is, not even its log flushed */
	int r = kx_store_open(dir, KX_STORE_READONLY, &s, &why);
	if (r == 0) {
		kx_store_close(s);
		if (asprintf(ret_report, "store '%s' opens as it is: nothing to recover", dir) < 0)
			*ret_report = NULL;
		return 0;
	}
	if (r != -EUCLEAN) {
		*ret_err = why;
		return r;
	}
	free(why);
	why = NULL;
	char where[64];
	if ((r = keep_logs(dir, where, ret_err)) < 0)
		return r;
	if ((r = kx_store_open(dir, STORE_SALVAGE, &s, ret_err)) < 0)
		return r; /* the damage is not (only) in the log */
	struct kx_buf losses = { 0 };
	char when[40];
	kx_time_format(kx_now_ns(), when);
	r = store_get_raw(s, s->ro, KEYLIT(K_LOSSES), &losses);
	if (r == 0 || r == -ENOENT)
		r = kx_buf_printf(&losses,
				  "%s: the write-ahead log was damaged; the store was opened as it stood before the "
				  "damage, and the writes logged after it were dropped (the log as it was: %s/)\n",
				  when, where);
	if (r >= 0) {
		rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
		rocksdb_writebatch_put(wb, KEYLIT(K_LOSSES), losses.ptr, losses.len);
		r = store_write(s, s->wo_sync, wb);
		rocksdb_writebatch_destroy(wb);
	}
	kx_buf_release(&losses);
	kx_store_close(s);
	if (r < 0) {
		if (asprintf(ret_err, "cannot record the loss in store '%s': %s", dir, strerror(-r)) < 0)
			*ret_err = NULL;
		return r;
	}
	if (asprintf(ret_report,
		     "store '%s' recovered: what was logged after the damage is dropped; the log as it was is in "
		     "%s/%s/",
		     dir, dir, where) < 0)
		*ret_report = NULL;
	return 0;
}

int kx_store_losses(struct kx_store *s, struct kx_view *v, struct kx_buf *out)
{
	int r = store_get_in(db_of(s, v), ro_of(s, v), KEYLIT(K_LOSSES), out);
	return r == -ENOENT ? 0 : r;
}
