/* SPDX-License-Identifier: MIT */
/* Private to src/manifest: what the file reader (manifest.c) takes from the validator (validate.c). */
#ifndef KX_MANIFEST_PRIVATE_H
#define KX_MANIFEST_PRIVATE_H

#include "kx/manifest.h"

/*
 * kx_manifest_check, with flags:
 * - CHECK_MEMO: a document's canonical bytes and digest may come from the validator's per-thread
 *   memo keyed by its source text (validate.c) — only for trees straight from the parser, whose
 *   source text is still what they hold; the file reader's are;
 * - CHECK_DEFER_SIGNATURES: the signatures of a manifest otherwise valid are left unverified
 *   (kx_manifest_limits.on_deferred).
 */
enum { CHECK_MEMO = 1, CHECK_DEFER_SIGNATURES = 2 };
int manifest_check(struct kx_arena *a, struct kx_json *root, struct kx_manifest *ret,
		   struct kx_problems *problems, unsigned flags);

/* An Attestation document (SPEC §8) as an entry of a file: ret->att set. Same contract. */
int manifest_check_attestation(struct kx_arena *a, struct kx_json *root, struct kx_manifest *ret,
			       struct kx_problems *problems);

#endif
