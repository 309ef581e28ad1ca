/* SPDX-License-Identifier: MIT */
/*
 * A doubly linked list threaded through its entries, with both ends: what every bounded cache here
 * keeps its entries on, most recently used first, so that the tail is the one to evict (the tree's
 * group listings, rendered files and parsed documents, the daemon's directory listings, the
 * inbox's decided files). The Linux kernel's list_head, reduced to what those caches do: an entry
 * embeds a struct kx_link, and kx_entry_of turns a link back into its entry.
 *
 * Not thread-safe: each cache holds its own lock around these. A zeroed kx_list is empty, a zeroed
 * kx_link is on no list.
 */
#ifndef KX_LIST_H
#define KX_LIST_H

#include <stddef.h>

struct kx_link {
	struct kx_link *prev, *next;
};

struct kx_list {
	struct kx_link *head, *tail;
};

/* The entry of type `type` whose member `member` is the link `l` (which must not be NULL). */
#define kx_entry_of(l, type, member) ((type *)((char *)(l) - offsetof(type, member)))

/* Take e off the list l it is on. */
static inline void kx_list_unlink(struct kx_list *l, struct kx_link *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		l->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		l->tail = e->prev;
	e->prev = e->next = NULL;
}

/* Put e, on no list, at the head of l. */
static inline void kx_list_push(struct kx_list *l, struct kx_link *e)
{
	e->prev = NULL;
	e->next = l->head;
	if (l->head)
		l->head->prev = e;
	else
		l->tail = e;
	l->head = e;
}

/* Move e, on l, to its head: it was just used. */
static inline void kx_list_touch(struct kx_list *l, struct kx_link *e)
{
	kx_list_unlink(l, e);
	kx_list_push(l, e);
}

#endif
