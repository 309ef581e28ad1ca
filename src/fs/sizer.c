// SPDX-License-Identifier: MIT
/*
 * The sizer: the writer's pass after its commits (kx_tree_keep_sizes, src/tree/sizes.c) on a
 * mount that holds its store — the inbox's, the spool's and kindex trust's commits — so that the
 * next mount of the store, read-only or a replica's, answers `stat` without rendering.
 *
 * Its own thread, told by the notifier after each round (fs_sizer_tell): the pass renders every
 * file below the gpu directories a commit moved, which takes longer than telling the kernel, and
 * neither the notifier's next round nor a FUSE worker waits for it. It goes from the store view it
 * sized last (at first, the mount's) to the store as it is when the pass begins, so rounds told
 * while a pass runs are joined; its views are its own, never the tree's (fs_view_swap waits for
 * those to be put). At the unmount it sizes what was committed since its last pass (the notifier
 * drops a round it has not begun), and the unmount waits for that pass. A pass that
 * fails is said on stderr and changes nothing: what has no size kept is rendered when asked.
 */
#include "fs.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct fs_sizer {
	struct fs *fs;
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct kx_view *from; /* sized up to here: a store view of the thread's own */
	bool told;            /* a round came since the last pass began */
	bool stop;
};

/* From z->from to the store as it is now, which becomes z->from. */
static void pass(struct fs_sizer *z)
{
	struct kx_view *to = kx_store_view(z->fs->store);
	if (!to)
		return;
	if (kx_view_generation(to) == kx_view_generation(z->from)) {
		kx_view_release(to);
		return;
	}
	size_t runs = 0;
	int r = kx_tree_keep_sizes(z->fs->tree, z->from, to, NULL, NULL, &runs);
	if (r < 0)
		fs_log_error("cannot keep the sizes of generation %llu's files: %s",
			     (unsigned long long)kx_view_generation(to), strerror(-r));
	else
		fs_log_debug(z->fs, "sizes kept from generation %llu to %llu: %zu runs",
			     (unsigned long long)kx_view_generation(z->from), (unsigned long long)kx_view_generation(to),
			     runs);
	kx_view_release(z->from);
	z->from = to;
}

static void *sizer_main(void *arg)
{
	struct fs_sizer *z = arg;
	pthread_setname_np(pthread_self(), "kx-sizer");
	pthread_mutex_lock(&z->lock);
	while (!z->stop) {
		if (!z->told) {
			pthread_cond_wait(&z->wake, &z->lock);
			continue;
		}
		z->told = false;
		pthread_mutex_unlock(&z->lock);
		pass(z);
		pthread_mutex_lock(&z->lock);
	}
	pthread_mutex_unlock(&z->lock);
	pass(z); /* what was committed since (a round the notifier dropped at the unmount) */
	return NULL;
}

int fs_sizer_start(struct fs *fs)
{
	struct fs_sizer *z = calloc(1, sizeof(*z));
	if (!z || !(z->from = kx_store_view(fs->store))) {
		free(z);
		return -ENOMEM;
	}
	z->fs = fs;
	pthread_mutex_init(&z->lock, NULL);
	pthread_cond_init(&z->wake, NULL);
	int r = pthread_create(&z->th, NULL, sizer_main, z);
	if (r != 0) {
		kx_view_release(z->from);
		pthread_cond_destroy(&z->wake);
		pthread_mutex_destroy(&z->lock);
		free(z);
		return -r;
	}
	fs->sizer = z;
	return 0;
}

void fs_sizer_tell(struct fs *fs)
{
	struct fs_sizer *z = fs->sizer;
	if (!z)
		return;
	pthread_mutex_lock(&z->lock);
	z->told = true;
	pthread_cond_signal(&z->wake);
	pthread_mutex_unlock(&z->lock);
}

void fs_sizer_stop(struct fs *fs)
{
	struct fs_sizer *z = fs->sizer;
	if (!z)
		return;
	pthread_mutex_lock(&z->lock);
	z->stop = true;
	pthread_cond_signal(&z->wake);
	pthread_mutex_unlock(&z->lock);
	pthread_join(z->th, NULL);
	kx_view_release(z->from);
	pthread_cond_destroy(&z->wake);
	pthread_mutex_destroy(&z->lock);
	free(z);
	fs->sizer = NULL;
}
