// SPDX-License-Identifier: MIT
/*
 * The pusher: a thread that puts files into the kernel's page cache before a reader asks for
 * them (fuse_lowlevel_notify_store), so that `grep -r`, `tar`, `rsync` and `cat *` on a cold mount
 * pay a READ round trip for the first files of a directory only.
 *
 * Why: a cold read of a small generated file costs one READ round trip (20–35 µs on a VM, most of
 * it waking the reader and the daemon) plus rendering it, while the reader's own work is a few
 * µs — the reader and the daemon take turns on one core and the other stays idle. A reader that
 * has read two files of a directory in a row (ops.c, reader_read) is walking it: this thread then
 * renders the files listed after the second one and stores their bytes in the kernel's page
 * cache, on the other core, while the reader goes on; what it reads next is already there. A
 * push that loses the race costs nothing but the work (the kernel asks with READ as before).
 *
 * Only inodes the kernel holds are pushed (an unknown one answers ENOENT anyway), with the bytes
 * the READ path would answer (kx_fs_push_dir renders them in the current view and, like every
 * operation, holds that view until the kernel has them: a notifier round that changes them waits,
 * so its invalidation always comes after the push — never stale bytes left behind). It runs off
 * the request path and holds no lock while it talks to the kernel; the kernel locks the pages it
 * fills, which only a READ of the same file may hold, and workers answer those meanwhile.
 *
 * The queue is small and drops what it cannot take: a dropped push is only a READ not saved.
 */
#include "fs.h"

#include <errno.h>
#include <stdlib.h>

#define QUEUE 64

struct kx_pusher {
	struct kx_fs *fs;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	unsigned head, len;
	struct {
		uint64_t dir, ino; /* dir 0: file ino alone */
	} q[QUEUE];
	unsigned long dirs, files, dropped; /* for -d */
};

static void *pusher_main(void *arg)
{
	pthread_setname_np(pthread_self(), "kx-pusher"); /* for top -H, perf */
	struct kx_pusher *p = arg;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->stop && !p->len)
			pthread_cond_wait(&p->wake, &p->lock);
		if (p->stop)
			break;
		uint64_t dir = p->q[p->head].dir, ino = p->q[p->head].ino;
		p->head = (p->head + 1) % QUEUE;
		p->len--;
		pthread_mutex_unlock(&p->lock);
		int n = dir ? kx_fs_push_dir(p->fs, dir, ino) : kx_fs_push_file(p->fs, ino);
		pthread_mutex_lock(&p->lock);
		if (n < 0) /* the connection is gone: unmounting */
			break;
		p->dirs++;
		p->files += (unsigned long)n;
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int kx_pusher_start(struct kx_fs *fs)
{
	struct kx_pusher *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->fs = fs;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	int r = pthread_create(&p->thread, NULL, pusher_main, p);
	if (r != 0) {
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return -r;
	}
	fs->pusher = p;
	return 0;
}

void kx_pusher_stop(struct kx_fs *fs)
{
	struct kx_pusher *p = fs->pusher;
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	kx_fs_log_debug(fs, "pushed %lu files of %lu directories into the page cache (%lu requests dropped)", p->files,
			p->dirs, p->dropped);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p);
	fs->pusher = NULL;
}

static void enqueue(struct kx_fs *fs, uint64_t dir, uint64_t ino)
{
	struct kx_pusher *p = fs->pusher;
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->len == QUEUE) {
		p->dropped++;
	} else {
		unsigned tail = (p->head + p->len++) % QUEUE;
		p->q[tail].dir = dir;
		p->q[tail].ino = ino;
		pthread_cond_signal(&p->wake);
	}
	pthread_mutex_unlock(&p->lock);
}

void kx_fs_push(struct kx_fs *fs, uint64_t dir, uint64_t after)
{
	enqueue(fs, dir, after);
}

void kx_fs_push_one(struct kx_fs *fs, uint64_t ino)
{
	enqueue(fs, 0, ino);
}
