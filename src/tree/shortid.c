// SPDX-License-Identifier: MIT
/*
 * The names in /runs: each run by the shortest prefix of its digest, 12 hex digits or more, that
 * no other run shares.
 */
#include "private.h"

#include <errno.h>
#include <stdio.h>

/* ---- names in /runs ----------------------------------------------------------------------------- */

/* hex digits shared by two digests */
static unsigned common_hex(const struct kx_digest *a, const struct kx_digest *b)
{
	unsigned n = 0;
	for (int i = 0; i < 32; i++) {
		if (a->b[i] == b->b[i]) {
			n += 2;
			continue;
		}
		if ((a->b[i] >> 4) == (b->b[i] >> 4))
			n++;
		break;
	}
	return n;
}

static void runs_name(const struct kx_digest *d, unsigned len, char *out)
{
	char hex[KX_DIGEST_HEX + 1];
	kx_digest_hex(d, hex);
	if (len < KX_SHORTID_LEN)
		len = KX_SHORTID_LEN;
	snprintf(out, 65, "%.*s", (int)len, hex);
}

int tree_runs_emit(struct runs_walk *w, unsigned next_common)
{
	unsigned need = (w->prev_common > next_common ? w->prev_common : next_common) + 1;
	char name[65];
	runs_name(&w->prev, need, name);
	struct kx_node n = { .type = KX_NODE_RUNS_RUN, .id = w->prev };
	return w->fn(w->ctx, name, &n);
}

int tree_runs_step(void *ctx, const struct kx_digest *d)
{
	struct runs_walk *w = ctx;
	unsigned c = w->have ? common_hex(&w->prev, d) : 0;
	if (w->have) {
		int r = tree_runs_emit(w, c);
		if (r)
			return r;
	}
	w->prev = *d;
	w->prev_common = c;
	w->have = true;
	return 0;
}

/* The canonical /runs name of a run: 12 hex digits, more when another run shares them. */
int tree_runs_canonical(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, char *out)
{
	for (unsigned bits = KX_SHORTID_LEN * 4; bits <= 256; bits += 4) {
		struct kx_digest got;
		int r = kx_store_find_bits(t->s, v, KX_RECORD_RUN, d->b, bits, &got);
		if (r == 0) {
			runs_name(d, bits / 4, out);
			return 0;
		}
		if (r != -ENOTUNIQ)
			return r;
	}
	return -EIO;
}
