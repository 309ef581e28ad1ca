// SPDX-License-Identifier: MIT
/*
 * An artifact's bytes (SPEC §9, docs/artifacts.md) taken into the store: read in bounded pieces
 * from a descriptor, hashed and written as they come (kx/store.h's upload), then one synced
 * commit of its record. The same decision for every entrance: the inbox's artifacts/, a spool's
 * artifacts/, `kindex ingest`.
 */
#include "kx/ingest.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_PIECE (1u << 20)

/* The digest a file's name claims: 64 lowercase hex digits, alone or before '-' or '.'. */
bool kx_artifact_name_claims(const char *name, struct kx_digest *ret)
{
	char s[7 + KX_DIGEST_HEX + 1] = "sha256:";
	size_t n = strlen(name);
	if (n < KX_DIGEST_HEX || (n > KX_DIGEST_HEX && name[KX_DIGEST_HEX] != '-' && name[KX_DIGEST_HEX] != '.'))
		return false;
	memcpy(s + 7, name, KX_DIGEST_HEX);
	return kx_digest_parse(s, sizeof(s) - 1, ret) == 0;
}

int kx_ingest_artifact_fd(struct kx_store *s, int fd, const char *label, const struct kx_artifact_opts *o,
			  struct kx_artifact_result *res, struct kx_problems *problems)
{
	memset(res, 0, sizeof(*res));
	struct kx_artifact_upload *u;
	int r = kx_store_upload_begin(s, o->max_bytes, &u);
	if (r < 0)
		return r;
	char *piece = malloc(READ_PIECE);
	if (!piece) {
		kx_upload_close(u, false);
		return -ENOMEM;
	}
	for (off_t off = 0;;) {
		ssize_t n = pread(fd, piece, READ_PIECE, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : 0;
			break;
		}
		if ((r = kx_upload_write(u, piece, (size_t)n)) < 0)
			break;
		off += n;
	}
	free(piece);
	struct kx_artifact_rec a;
	if (r == 0)
		r = kx_upload_end(u, &res->digest, &a);
	if (r == -EFBIG) {
		kx_problems_add(problems, 0, 0, "", "size",
				"over the limit of %" PRIu64 " bytes for an artifact (the mount's -o max_artifact=, "
				"kindex ingest --max-artifact)",
				o->max_bytes);
		r = -EINVAL;
	}
	if (r < 0) {
		kx_upload_close(u, false);
		return r;
	}
	res->size = a.size;
	struct kx_digest claimed;
	if (o->expect || kx_artifact_name_claims(o->name ? o->name : "", &claimed)) {
		const struct kx_digest *want = o->expect ? o->expect : &claimed;
		if (!kx_digest_equal(want, &res->digest)) {
			char w[KX_DIGEST_STR_MAX], got[KX_DIGEST_STR_MAX];
			kx_digest_format(want, w);
			kx_digest_format(&res->digest, got);
			kx_problems_add(problems, 0, 0, "", "digest",
					"named for %s, but its bytes hash to %s: refused (a damaged or a wrong file)", w, got);
			kx_upload_close(u, false);
			return -EINVAL;
		}
	}
	struct kx_txn *t;
	if ((r = kx_store_txn_begin(s, &t)) < 0) {
		kx_upload_close(u, false);
		return r;
	}
	int64_t now = o->now_ns ? o->now_ns : a.received_ns;
	r = kx_txn_add_artifact(t, &res->digest, &a, now);
	res->added = r == 0;
	if (r < 0)
		kx_txn_abort(t);
	else
		r = kx_txn_commit_gen(t, o->sync, &res->generation);
	kx_upload_close(u, r == 0 && res->added);
	if (r == 0)
		r = kx_store_count_announcers(s, NULL, &res->digest, &res->announced_by);
	return r;
}
