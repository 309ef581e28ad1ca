// SPDX-License-Identifier: MIT
/*
 * kx_arena: a bump allocator. A parsed manifest is a few hundred small nodes that are born and
 * die together; one arena per manifest replaces hundreds of malloc/free pairs with a handful of
 * block allocations and makes cleanup a single call.
 */
#include "kx/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct block {
	struct block *next;
	size_t size;
	size_t used;
	_Alignas(16) unsigned char data[];
};

struct kx_arena {
	struct block *head;
	size_t total;
};

#define BLOCK_MIN (8 * 1024 - sizeof(struct block))

struct kx_arena *kx_arena_new(void)
{
	return calloc(1, sizeof(struct kx_arena));
}

void kx_arena_free(struct kx_arena *a)
{
	if (!a)
		return;
	struct block *b = a->head;
	while (b) {
		struct block *n = b->next;
		free(b);
		b = n;
	}
	free(a);
}

void *kx_arena_alloc(struct kx_arena *a, size_t size)
{
	size = (size + 7) & ~(size_t)7;
	struct block *b = a->head;
	if (!b || b->size - b->used < size) {
		size_t bs = size > BLOCK_MIN ? size : BLOCK_MIN;
		/* grow geometrically with the arena, so big trees take few blocks */
		if (a->total / 2 > bs && a->total / 2 < 64u * 1024 * 1024)
			bs = a->total / 2;
		struct block *nb = malloc(sizeof(*nb) + bs);
		if (!nb)
			return NULL;
		nb->size = bs;
		nb->used = 0;
		if (b && size > BLOCK_MIN && b->size - b->used > BLOCK_MIN / 4) {
			/* a one-off large allocation: keep filling the current block afterwards */
			nb->next = b->next;
			b->next = nb;
		} else {
			nb->next = b;
			a->head = nb;
		}
		a->total += bs;
		b = nb;
	}
	void *p = b->data + b->used;
	b->used += size;
	return p;
}

void *kx_arena_zalloc(struct kx_arena *a, size_t size)
{
	void *p = kx_arena_alloc(a, size);
	if (p)
		memset(p, 0, size);
	return p;
}

char *kx_arena_strndup(struct kx_arena *a, const char *s, size_t len)
{
	char *p = kx_arena_alloc(a, len + 1);
	if (!p)
		return NULL;
	if (len)
		memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *kx_arena_printf(struct kx_arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *p = kx_arena_alloc(a, (size_t)n + 1);
	if (!p)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

size_t kx_arena_used(const struct kx_arena *a)
{
	return a->total;
}
