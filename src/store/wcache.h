/* SPDX-License-Identifier: MIT */
/*
 * Private to src/store: the writer's caches. While it holds the writer lock, the one writer knows
 * exactly what the store holds for the keys it touches most — which documents exist, each
 * group's record, each directory's mtime — because every change goes through it. Keeping those
 * in memory turns the ~12 RocksDB point reads an ingest did per manifest into hash lookups.
 *
 * A transaction changes the caches in place and records an undo entry per change; abort (or a
 * rollback to a savepoint) replays the undo log backwards, commit forgets it. Entries are keyed by
 * 32 bytes (a digest, or the SHA-256 of a directory path). When a map grows past its bound it is
 * emptied at the next commit — it is a cache: RocksDB stays the authority.
 */
#ifndef KX_STORE_WCACHE_H
#define KX_STORE_WCACHE_H

#include "kx/common.h"

struct wmap;

struct wmap *store_wmap_new(size_t value_size, size_t max_entries);
void store_wmap_free(struct wmap *m);
/* value pointer (value_size bytes) or NULL */
void *store_wmap_get(struct wmap *m, const uint8_t key[32]);
/* insert or overwrite; returns the stored value pointer or NULL on ENOMEM */
void *store_wmap_put(struct wmap *m, const uint8_t key[32], const void *value);
bool store_wmap_over(const struct wmap *m);
/* Call fn for every entry (no changes to m meanwhile); stops at the first non-zero return. */
int store_wmap_each(struct wmap *m, int (*fn)(void *ctx, const uint8_t key[32], void *value), void *ctx);
void store_wmap_clear(struct wmap *m);

/* The undo log of a transaction over any number of maps. */
struct undo;
struct undo *store_undo_new(void);
void store_undo_free(struct undo *u);
/* Record the current state of key in m before changing it. */
int store_undo_note(struct undo *u, struct wmap *m, const uint8_t key[32]);
size_t store_undo_mark(const struct undo *u);
/* Restore every change recorded after `mark`, newest first. */
void store_undo_rollback(struct undo *u, size_t mark);

#endif
