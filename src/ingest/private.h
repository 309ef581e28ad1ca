/* SPDX-License-Identifier: MIT */
/* Private to src/ingest: the signature checks a prepared file hands to a kx_verify_pool. */
#ifndef KX_INGEST_PRIVATE_H
#define KX_INGEST_PRIVATE_H

#include "kx/ingest.h"

/* One signature to check: a copy, so that it outlives the parse that found it. */
struct verify_item {
	struct kx_digest run;
	struct kx_signature x;
	size_t manifest; /* its manifest's index in the file */
	bool bad;
};

enum { VERIFY_BLOCK = 64 }; /* items a thread takes at once: a few milliseconds of checks */

struct verify_block {
	struct verify_block *next;      /* the job's next block, in file order */
	struct verify_block *queue;     /* the pool's next queued block */
	struct verify_job *job;
	size_t n;
	struct verify_item v[VERIFY_BLOCK];
};

/* The deferred signature checks of one prepared file, queued block by block as it is parsed. */
struct verify_job {
	struct kx_verify_pool *pool; /* NULL: no checks */
	struct verify_block *first, *last;
	size_t pending; /* blocks queued or being checked */
};

/* kx_manifest_limits.on_deferred for a job (ctx): copy m's signatures into it. 0 or -ENOMEM. */
int ingest_verify_add(void *job, size_t index, const struct kx_manifest *m);
/* Queue the last block: the file is parsed. */
void ingest_verify_seal(struct verify_job *j);
/* Check what no worker has taken and wait for the rest: then every item's `bad` is final. */
void ingest_verify_finish(struct verify_job *j);
/* Take j's unchecked blocks off the queue, wait for those being checked, free them all. */
void ingest_verify_cancel(struct verify_job *j);

#endif
