/* SPDX-License-Identifier: MIT */
/*
 * Private to src/canon: what the digests (digest.c) take from the JCS writer (jcs.c). Calls go
 * one way, digest.c → jcs.c: the writer knows nothing of hashing.
 */
#ifndef KX_CANON_PRIVATE_H
#define KX_CANON_PRIVATE_H

#include "kx/canon.h"

/* Called for each member as it is written: its key, and where its "key":value lies in `out`. */
typedef void (*canon_jcs_member_fn)(void *ctx, const char *key, size_t key_len, size_t start, size_t end);

/*
 * Append the JCS form of object `obj` to `out` (members in RFC 8785 order), calling `fn` after each
 * member. 0; -EINVAL if `obj` is not an object; on failure `out` is as it was.
 */
int canon_jcs_write_object(const struct kx_json *obj, struct kx_buf *out, canon_jcs_member_fn fn, void *ctx);

#endif
