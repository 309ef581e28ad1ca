// SPDX-License-Identifier: MIT
/*
 * Following a replica (KX_STORE_FOLLOW, docs/replicas.md): each generation a store reads, opened
 * read-only and share-locked (struct dbh) and let go with the last view of it; the switch to the
 * next generation (kx_store_follow) and the note kept with one. And the lock file a mounted daemon
 * leaves, by which `kindex` names who holds a store (kx_store_claim, kx_store_holder).
 */
#include "private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <rocksdb/c.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

void store_dbh_put(struct kx_store *s, struct dbh *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&s->follow);
	bool last = --h->refs == 0;
	pthread_mutex_unlock(&s->follow);
	if (!last)
		return;
	if (h->db)
		rocksdb_close(h->db);
	if (h->dirfd >= 0)
		close(h->dirfd); /* and with it the shared lock */
	free(h->dir);
	free(h->note);
	free(h);
}

/*
 * Open a replica's generation read-only (KX_STORE_FOLLOW): `dir` is resolved once, to a directory
 * held open and share-locked (flock) before RocksDB reads it, so a `kindex pull` that removes
 * unused generations (it takes the lock exclusively first) cannot remove it under the open, and a
 * generation it removed just before is seen gone (no CURRENT) rather than half read. Every table
 * file stays open (max_open_files -1, set at kx_store_open), so a generation deleted under a mount
 * anyway keeps serving from the files it has open.
 */
int store_dbh_open(struct kx_store *s, const char *dir, struct dbh **ret, char **ret_msg)
{
	struct dbh *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->refs = 1;
	int r = 0;
	char fdpath[64], real[PATH_MAX];
	h->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (h->dirfd < 0) {
		r = -errno;
		if (asprintf(ret_msg, "cannot open replica generation '%s': %s", dir, strerror(-r)) < 0)
			*ret_msg = NULL;
		goto fail;
	}
	if (flock(h->dirfd, LOCK_SH) < 0 || faccessat(h->dirfd, "CURRENT", F_OK, 0) < 0) {
		r = -errno;
		if (asprintf(ret_msg, "no store at '%s' (no CURRENT: removed, or not a generation): %s", dir,
			     strerror(-r)) < 0)
			*ret_msg = NULL;
		goto fail;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", h->dirfd);
	ssize_t n = readlink(fdpath, real, sizeof(real) - 1);
	if (n <= 0) {
		r = n < 0 ? -errno : -ENOENT;
		if (asprintf(ret_msg, "cannot resolve '%s': %s", dir, strerror(-r)) < 0)
			*ret_msg = NULL;
		goto fail;
	}
	real[n] = '\0';
	if (!(h->dir = strdup(real))) {
		r = -ENOMEM;
		goto fail;
	}
	char *err = NULL;
	h->db = rocksdb_open_for_read_only(s->opts, h->dir, 0, &err);
	if (err) {
		r = store_errno(err);
		if (asprintf(ret_msg, "cannot open store '%s': %s", h->dir, err) < 0)
			*ret_msg = NULL;
		rocksdb_free(err);
		h->db = NULL;
		goto fail;
	}
	*ret = h;
	return 0;
fail:
	store_dbh_put(s, h);
	return r;
}

int kx_store_follow(struct kx_store *s, const char *dir, const char *note, char **ret_err)
{
	if (!s->cur)
		return -EINVAL;
	struct dbh *h = NULL;
	char *msg = NULL;
	int r = store_dbh_open(s, dir, &h, &msg);
	struct kx_buf schema = { 0 };
	char want[32];
	snprintf(want, sizeof(want), "kindexfs-store %d", KX_STORE_SCHEMA);
	if (r == 0 && (r = store_get_in(h->db, s->ro, KEYLIT(K_SCHEMA), &schema)) == 0 &&
	    store_readable_schema(schema.ptr, want) != KX_STORE_SCHEMA)
		r = -EPROTO;
	if (r == -EPROTO || r == -ENOENT) {
		if (!msg && asprintf(&msg, "store '%s' has schema '%s'; a replica must have '%s'", h->dir,
				     schema.ptr ? schema.ptr : "(none)", want) < 0)
			msg = NULL;
	}
	kx_buf_release(&schema);
	if (r == 0 && note && !(h->note = strdup(note)))
		r = -ENOMEM;
	if (r < 0) {
		store_dbh_put(s, h);
		if (ret_err)
			*ret_err = msg;
		else
			free(msg);
		return r;
	}
	pthread_mutex_lock(&s->follow);
	struct dbh *old = s->cur;
	s->cur = h;
	s->db = h->db;
	pthread_mutex_unlock(&s->follow);
	store_dbh_put(s, old); /* closed once the last view of it is released */
	return 0;
}

int kx_store_set_note(struct kx_store *s, const char *note)
{
	if (!s->cur)
		return -EINVAL;
	char *n = note ? strdup(note) : NULL;
	if (note && !n)
		return -ENOMEM;
	pthread_mutex_lock(&s->follow);
	char *old = s->cur->note;
	s->cur->note = n;
	pthread_mutex_unlock(&s->follow);
	free(old);
	return 0;
}

const char *kx_store_note(struct kx_store *s, struct kx_view *v)
{
	return v && v->dbh ? v->dbh->note : NULL;
}

const char *kx_store_dir(struct kx_store *s, struct kx_view *v)
{
	return v && v->dbh ? v->dbh->dir : s->path;
}

int kx_store_claim(struct kx_store *s, const char *mountpoint)
{
	char *p;
	if (asprintf(&p, "%s/kindexfs.lock", s->path) < 0)
		return -ENOMEM;
	FILE *f = fopen(p, "w");
	if (!f) {
		int r = -errno;
		free(p);
		return r;
	}
	fprintf(f, "%ld %s\n", (long)getpid(), mountpoint);
	fclose(f);
	free(s->lockfile);
	s->lockfile = p;
	return 0;
}

char *kx_store_holder(const char *dir)
{
	char p[4096], line[4200];
	snprintf(p, sizeof(p), "%s/kindexfs.lock", dir);
	FILE *f = fopen(p, "r");
	if (!f)
		return NULL;
	char *out = NULL;
	long pid;
	char mnt[4096];
	if (fgets(line, sizeof(line), f) && sscanf(line, "%ld %4095[^\n]", &pid, mnt) == 2 &&
	    (kill((pid_t)pid, 0) == 0 || errno == EPERM)) {
		if (asprintf(&out, "kindexfs (pid %ld, mounted at %s)", pid, mnt) < 0)
			out = NULL;
	}
	fclose(f);
	return out;
}
