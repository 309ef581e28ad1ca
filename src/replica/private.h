/* SPDX-License-Identifier: MIT */
/* Private to src/replica: what publish.c and pull.c share (replica.c). */
#ifndef KX_REPLICA_PRIVATE_H
#define KX_REPLICA_PRIVATE_H

#include "kx/manifest.h"
#include "kx/replica.h"

/* What `kindex pull` makes in DST carries this file (pull.c): made first, removed last. */
#define REPLICA_MARK ".kindex-pull"

/* Remove directory `name` under dirfd and all it holds, REPLICA_MARK last: a removal cut short
 * leaves the mark while anything is left. A symbolic link or file of that name is unlinked, never
 * followed. 0 when it is gone (or was never there), or a negative errno. */
int replica_remove_dir(int dirfd, const char *name);
/* Write `name` under dirfd whole or not at all: a hidden temporary file, fsync, rename, fsync of
 * the directory. */
int replica_write_file(int dirfd, const char *name, const char *bytes, size_t len);

/* kx_published_read, with `shown` as the file's name in messages. */
int replica_read_published(int dirfd, const char *name, const char *shown, struct kx_published *ret, char **ret_err);

#endif
