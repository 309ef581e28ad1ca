// SPDX-License-Identifier: MIT
/*
 * The writer's caches (see wcache.h): an open-addressing hash map keyed by 32-byte digests —
 * already uniformly distributed, so the first 8 bytes are the hash — and an undo log.
 */
#include "wcache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct wmap {
	size_t vsize, slot_size;
	size_t cap, len, tombs, max;
	unsigned char *slots; /* each: state[8] key[32] value[vsize], padded to 8: values 8-aligned */
};

enum { EMPTY, FULL, TOMB };

static unsigned char *slot(const struct wmap *m, size_t i)
{
	return m->slots + i * m->slot_size;
}

struct wmap *store_wmap_new(size_t value_size, size_t max_entries)
{
	struct wmap *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->vsize = value_size;
	m->slot_size = (8 + 32 + value_size + 7) & ~(size_t)7;
	m->max = max_entries;
	return m;
}

void store_wmap_free(struct wmap *m)
{
	if (!m)
		return;
	free(m->slots);
	free(m);
}

static uint64_t hash(const uint8_t key[32])
{
	uint64_t h;
	memcpy(&h, key, 8);
	return h;
}

static ssize_t find(const struct wmap *m, const uint8_t key[32])
{
	if (!m->cap)
		return -1;
	size_t mask = m->cap - 1;
	for (size_t i = hash(key) & mask, n = 0; n < m->cap; i = (i + 1) & mask, n++) {
		unsigned char *s = slot(m, i);
		if (s[0] == EMPTY)
			return -1;
		if (s[0] == FULL && memcmp(s + 8, key, 32) == 0)
			return (ssize_t)i;
	}
	return -1;
}

void *store_wmap_get(struct wmap *m, const uint8_t key[32])
{
	ssize_t i = find(m, key);
	return i < 0 ? NULL : slot(m, (size_t)i) + 40;
}

static int grow(struct wmap *m)
{
	/* small first: a transaction of one manifest holds a few entries, and a table of 1,024 slots
	 * (150 KB for runs) is an mmap, its page faults and a munmap's TLB shootdown per commit */
	size_t ncap = m->cap ? m->cap * 2 : 16;
	if ((m->len + 1) * 4 < m->cap * 3 / 2 && m->tombs)
		ncap = m->cap; /* mostly tombstones: rehash at the same size */
	unsigned char *ns = calloc(ncap, m->slot_size);
	if (!ns)
		return -ENOMEM;
	unsigned char *old = m->slots;
	size_t ocap = m->cap;
	m->slots = ns;
	m->cap = ncap;
	m->len = m->tombs = 0;
	for (size_t i = 0; i < ocap; i++) {
		unsigned char *s = old + i * m->slot_size;
		if (s[0] != FULL)
			continue;
		size_t mask = ncap - 1, j = hash(s + 8) & mask;
		while (slot(m, j)[0] != EMPTY)
			j = (j + 1) & mask;
		memcpy(slot(m, j), s, m->slot_size);
		m->len++;
	}
	free(old);
	return 0;
}

void *store_wmap_put(struct wmap *m, const uint8_t key[32], const void *value)
{
	ssize_t i = find(m, key);
	if (i < 0) {
		if ((m->len + m->tombs + 1) * 4 > m->cap * 3 && grow(m) < 0)
			return NULL;
		size_t mask = m->cap - 1, j = hash(key) & mask;
		while (slot(m, j)[0] == FULL)
			j = (j + 1) & mask;
		unsigned char *s = slot(m, j);
		if (s[0] == TOMB)
			m->tombs--;
		s[0] = FULL;
		memcpy(s + 8, key, 32);
		m->len++;
		i = (ssize_t)j;
	}
	unsigned char *v = slot(m, (size_t)i) + 40;
	if (m->vsize && value)
		memcpy(v, value, m->vsize);
	return v;
}

static void wmap_del(struct wmap *m, const uint8_t key[32])
{
	ssize_t i = find(m, key);
	if (i < 0)
		return;
	slot(m, (size_t)i)[0] = TOMB;
	m->len--;
	m->tombs++;
}

int store_wmap_each(struct wmap *m, int (*fn)(void *ctx, const uint8_t key[32], void *value), void *ctx)
{
	for (size_t i = 0; i < m->cap; i++) {
		unsigned char *s = slot(m, i);
		if (s[0] != FULL)
			continue;
		int r = fn(ctx, s + 8, s + 40);
		if (r)
			return r;
	}
	return 0;
}

bool store_wmap_over(const struct wmap *m)
{
	return m->len > m->max;
}

void store_wmap_clear(struct wmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->len = m->tombs = 0;
}

/* ---- undo ------------------------------------------------------------------------------------- */

struct undo_entry {
	struct wmap *m;
	uint8_t key[32];
	bool had;
	unsigned char *old; /* value bytes when had */
};

struct undo {
	struct undo_entry *v;
	size_t len, cap;
};

struct undo *store_undo_new(void)
{
	return calloc(1, sizeof(struct undo));
}

void store_undo_free(struct undo *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->len; i++)
		free(u->v[i].old);
	free(u->v);
	free(u);
}

int store_undo_note(struct undo *u, struct wmap *m, const uint8_t key[32])
{
	if (KX_GROW(u->v, u->cap, u->len, 64) < 0)
		return -ENOMEM;
	struct undo_entry *e = &u->v[u->len];
	e->m = m;
	memcpy(e->key, key, 32);
	void *cur = store_wmap_get(m, key);
	e->had = cur != NULL;
	e->old = NULL;
	if (cur && m->vsize) {
		if (!(e->old = malloc(m->vsize)))
			return -ENOMEM;
		memcpy(e->old, cur, m->vsize);
	}
	u->len++;
	return 0;
}

size_t store_undo_mark(const struct undo *u)
{
	return u->len;
}

void store_undo_rollback(struct undo *u, size_t mark)
{
	while (u->len > mark) {
		struct undo_entry *e = &u->v[--u->len];
		if (e->had) {
			if (!store_wmap_put(e->m, e->key, e->old))
				store_wmap_clear(e->m); /* out of memory: forget the cache rather than lie */
		} else
			wmap_del(e->m, e->key);
		free(e->old);
	}
}
