// SPDX-License-Identifier: MIT
/*
 * The tree's lifetime: kx_tree_new sizes the caches from one bound (cache.c) and kx_tree_free has
 * each file free the state it keeps — group listings (group.c), the rows of the root's files kept
 * between builds (top.c), a generation's comparisons (compare.c), then the caches, which the
 * listings hold parsed documents of. Also what README says of the mount's health.
 */
#include "private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct kx_tree *kx_tree_new(struct kx_store *s, size_t cache_bytes)
{
	struct kx_tree *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->s = s;
	pthread_mutex_init(&t->health_lock, NULL);
	t->limit = cache_bytes ? cache_bytes : 32u << 20;
	if (tree_cache_init(t) < 0) {
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	pthread_mutex_init(&t->uses_lock, NULL);
	pthread_mutex_init(&t->cmp_lock, NULL);
	pthread_mutex_init(&t->top_lock, NULL);
	pthread_mutex_init(&t->stream_lock, NULL);
	return t;
}

void kx_tree_free(struct kx_tree *t)
{
	if (!t)
		return;
	free(t->health);
	pthread_mutex_destroy(&t->health_lock);
	tree_groups_release(t); /* before the parsed documents the listings hold (tree_cache_release) */
	tree_top_release(t);
	tree_index_stream_release(t);
	tree_compare_release(t);
	tree_cache_release(t);
	pthread_mutex_destroy(&t->top_lock);
	pthread_mutex_destroy(&t->stream_lock);
	pthread_mutex_destroy(&t->cmp_lock);
	pthread_mutex_destroy(&t->uses_lock);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

struct kx_store *kx_tree_store(struct kx_tree *t)
{
	return t->s;
}

int kx_tree_set_health(struct kx_tree *t, const char *lines)
{
	char *copy = lines ? strdup(lines) : NULL;
	if (lines && !copy)
		return -ENOMEM;
	pthread_mutex_lock(&t->health_lock);
	char *old = t->health;
	t->health = copy;
	t->health_serial++;
	pthread_mutex_unlock(&t->health_lock);
	free(old);
	return 0;
}
