// SPDX-License-Identifier: MIT
/*
 * The shared store view (fs.h, "Consistency model"): the current view, one RocksDB snapshot that
 * every operation reads under a reference instead of taking a snapshot of its own, swapped by the
 * notifier (fs_view_swap) once a commit landed, and freed when its last operation and the
 * versioned inodes that hold it (versions.c) let it go. It calls no other file of src/fs.
 */
#include "fs.h"

#include <errno.h>
#include <stdlib.h>

static struct fs_view *view_new(struct fs *fs)
{
	struct fs_view *fv = calloc(1, sizeof(*fv));
	if (!fv)
		return NULL;
	fv->v = kx_store_view(fs->store);
	if (!fv->v) {
		free(fv);
		return NULL;
	}
	fv->generation = kx_view_generation(fv->v);
	fv->refs = 1; /* the reference of fs.view */
	return fv;
}

static void view_free(struct fs_view *fv)
{
	if (!fv)
		return;
	kx_view_release(fv->v);
	free(fv);
}

int fs_view_init(struct fs *fs)
{
	pthread_mutex_init(&fs->view_lock, NULL);
	pthread_cond_init(&fs->view_idle, NULL);
	fs->view = view_new(fs);
	return fs->view ? 0 : -ENOMEM;
}

void fs_view_release(struct fs *fs)
{
	view_free(fs->view);
	fs->view = NULL;
	pthread_cond_destroy(&fs->view_idle);
	pthread_mutex_destroy(&fs->view_lock);
}

struct fs_view *fs_view_get(struct fs *fs)
{
	pthread_mutex_lock(&fs->view_lock);
	struct fs_view *fv = fs->view;
	fv->refs++;
	pthread_mutex_unlock(&fs->view_lock);
	return fv;
}

struct fs_view *fs_view_ref(struct fs *fs, struct fs_view *fv)
{
	pthread_mutex_lock(&fs->view_lock);
	fv->refs++;
	pthread_mutex_unlock(&fs->view_lock);
	return fv;
}

void fs_view_hold(struct fs *fs, struct fs_view *fv)
{
	pthread_mutex_lock(&fs->view_lock);
	fv->held = true;
	pthread_mutex_unlock(&fs->view_lock);
}

void fs_view_unhold(struct fs *fs, struct fs_view *fv)
{
	pthread_mutex_lock(&fs->view_lock);
	fv->held = false;
	bool last = fv->refs == 0;
	pthread_mutex_unlock(&fs->view_lock);
	if (last)
		view_free(fv);
}

void fs_view_put(struct fs *fs, struct fs_view *fv)
{
	if (!fv)
		return;
	pthread_mutex_lock(&fs->view_lock);
	bool last = --fv->refs == 0 && !fv->held;
	if (fv->refs == 1 && fv != fs->view)
		pthread_cond_broadcast(&fs->view_idle); /* the notifier waits for this */
	pthread_mutex_unlock(&fs->view_lock);
	if (last)
		view_free(fv);
}

struct fs_view *fs_view_swap(struct fs *fs)
{
	struct fs_view *fresh = view_new(fs);
	if (!fresh)
		return NULL;
	pthread_mutex_lock(&fs->view_lock);
	struct fs_view *old = fs->view;
	if (old->generation == fresh->generation) {
		pthread_mutex_unlock(&fs->view_lock);
		view_free(fresh);
		return NULL;
	}
	fs->view = fresh;
	/* keep fs.view's reference as the caller's; wait for operations still reading the old state */
	while (old->refs > 1)
		pthread_cond_wait(&fs->view_idle, &fs->view_lock);
	pthread_mutex_unlock(&fs->view_lock);
	return old;
}
