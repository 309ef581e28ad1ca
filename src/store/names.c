// SPDX-License-Identifier: MIT
/*
 * Names and their path components over a stored store (SPEC §2): what an implementation, a GPU,
 * a kernel and a pass are called, worked out again from the stored documents, and every
 * (component, exact name) pair met, so that `kindex verify` can say where two names share a path
 * and the schema-4 upgrade can re-key the runs and groups an older kindex keyed by slug. Documents
 * shared by many runs are read once (a memo by digest).
 */
#include "private.h"

#include "kx/rank.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* what a document of one digest names */
struct names_memo {
	struct kx_digest d;
	bool known; /* the document is stored */
	char comp[KX_NAME_MAX];
	char name[2 * KX_NAME_TEXT_MAX + 2];
};

struct names_pair {
	char level; /* 'k' kernel, 'p' pass, 'g' GPU, 'i' implementation */
	char comp[KX_NAME_MAX];
	char name[2 * KX_NAME_TEXT_MAX + 2];
};

static int digest_cmp(const void *x, const void *y)
{
	return memcmp(((const struct names_memo *)x)->d.b, ((const struct names_memo *)y)->d.b, 32);
}

static int pair_cmp(const void *x, const void *y)
{
	const struct names_pair *a = x, *b = y;
	int c = a->level - b->level;
	if (!c)
		c = strcmp(a->comp, b->comp);
	return c ? c : strcmp(a->name, b->name);
}

/* Insert *e into the sorted array v[0..*len) unless an equal one is there; the element found or
 * inserted, or NULL without memory. */
static void *insert(void **v, size_t *len, size_t *cap, size_t size, const void *e,
		    int (*cmp)(const void *, const void *))
{
	size_t lo = 0, hi = *len;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = cmp((char *)*v + mid * size, e);
		if (c == 0)
			return (char *)*v + mid * size;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (*len == *cap) {
		size_t ncap = *cap ? 2 * *cap : 16;
		void *nv = realloc(*v, ncap * size);
		if (!nv)
			return NULL;
		*v = nv;
		*cap = ncap;
	}
	char *at = (char *)*v + lo * size;
	memmove(at + size, at, (*len - lo) * size);
	memcpy(at, e, size);
	(*len)++;
	return at;
}

static int note_pair(struct store_names *n, char level, const char *comp, const char *name)
{
	struct names_pair p = { .level = level };
	snprintf(p.comp, sizeof(p.comp), "%s", comp);
	snprintf(p.name, sizeof(p.name), "%s", name);
	return insert((void **)&n->pairs, &n->npairs, &n->cap_pairs, sizeof(p), &p, pair_cmp) ? 0 : -ENOMEM;
}

/* The stored document d, parsed into a; NULL when it is not stored or not JSON. */
static int get_doc(struct kx_store *s, struct kx_arena *a, const struct kx_digest *d, struct kx_json **ret)
{
	struct key k;
	struct kx_buf b = { 0 };
	struct kx_json_error e;
	store_key_digest(&k, T_DOC, d);
	int r = store_get_raw(s, s->ro, k.b, k.len, &b);
	*ret = NULL;
	if (r == 0 && kx_json_parse(a, b.ptr, b.len, 0, ret, NULL, &e) < 0)
		*ret = NULL;
	kx_buf_release(&b);
	return r == -ENOENT ? 0 : r;
}

/* The memo of document d (an implementation for level 'i', an environment for 'g') in the memo
 * array m, worked out the first time d is met, its (component, name) pair noted then. */
static int memo_get(struct store_names *n, struct kx_store *s, struct names_memo **m, size_t *len, size_t *cap,
		    const struct kx_digest *d, char level, struct names_memo **ret)
{
	struct names_memo key = { .d = *d };
	struct names_memo *e = *len ? bsearch(&key, *m, *len, sizeof(key), digest_cmp) : NULL; /* (not NULL, 0) */
	if (e) {
		*ret = e;
		return 0;
	}
	struct kx_arena *a = kx_arena_new();
	struct kx_json *doc = NULL;
	int r = a ? get_doc(s, a, d, &doc) : -ENOMEM;
	const struct kx_json *spec = kx_json_get(doc, "spec");
	if (r == 0 && spec && level == 'i') {
		const char *name = kx_rank_impl_name(doc);
		if (name) {
			key.known = true;
			snprintf(key.name, sizeof(key.name), "%s", name);
			kx_rank_impl_component(name, NULL, key.comp);
		}
	} else if (r == 0 && spec) {
		key.known = kx_rank_gpu_names(spec, key.comp, key.name, sizeof(key.name)) == 0;
	}
	kx_arena_free(a);
	if (r < 0)
		return r;
	*ret = insert((void **)m, len, cap, sizeof(key), &key, digest_cmp);
	if (!*ret)
		return -ENOMEM;
	return key.known ? note_pair(n, level, key.comp, key.name) : 0;
}

int store_names_run(struct store_names *n, struct kx_store *s, const struct kx_run_rec *x, const char *external_id,
		    char impl[KX_NAME_MAX], char gpu[KX_NAME_MAX])
{
	struct names_memo *m;
	int r = memo_get(n, s, &n->impls, &n->nimpls, &n->cap_impls, &x->implementation, 'i', &m);
	if (r < 0)
		return r;
	if (m->known) {
		memcpy(impl, m->comp, KX_NAME_MAX);
	} else {
		/* no implementation document: the name is the externalId's (SPEC §2), read from the run */
		struct kx_arena *a = kx_arena_new();
		struct kx_json *doc = NULL;
		r = !a ? -ENOMEM : external_id ? 0 : get_doc(s, a, &x->run, &doc);
		if (!external_id)
			external_id = kx_json_get_string(kx_json_pointer(doc, "/spec/sourceNative"), "externalId");
		size_t len;
		const char *seg = kx_rank_impl_text(NULL, external_id, &len);
		kx_rank_impl_component(NULL, external_id, impl);
		if (r == 0 && seg) {
			char name[KX_NAME_TEXT_MAX + 1];
			snprintf(name, sizeof(name), "%.*s", (int)len, seg);
			r = note_pair(n, 'i', impl, name);
		}
		kx_arena_free(a);
		if (r < 0)
			return r;
	}
	if (!gpu)
		return 0;
	r = memo_get(n, s, &n->envs, &n->nenvs, &n->cap_envs, &x->environment, 'g', &m);
	if (r == 0)
		snprintf(gpu, KX_NAME_MAX, "%s", m->known ? m->comp : "");
	return r;
}

int store_names_group(struct store_names *n, const struct kx_group_rec *g, char kernel[KX_NAME_MAX],
		      char pass[KX_NAME_MAX])
{
	char kname[sizeof(g->benchmark)], pname[sizeof(g->benchmark) + sizeof(g->metric) + 2];
	kx_rank_group_names(g, kname, sizeof(kname), pname, sizeof(pname));
	kx_rank_component(kname, strlen(kname), kernel, KX_NAME_MAX);
	kx_rank_component(pname, strlen(pname), pass, KX_NAME_MAX);
	int r = note_pair(n, 'k', kernel, kname);
	return r < 0 ? r : note_pair(n, 'p', pass, pname);
}

int store_names_each(const struct store_names *n, int (*fn)(void *ctx, char level, const char *comp, const char *name),
		     void *ctx)
{
	int r = 0;
	for (size_t i = 0; i < n->npairs && r == 0; i++)
		r = fn(ctx, n->pairs[i].level, n->pairs[i].comp, n->pairs[i].name);
	return r;
}

const char *store_names_level(char level)
{
	switch (level) {
	case 'k': return "kernels";
	case 'p': return "passes";
	case 'g': return "GPUs";
	default: return "implementations";
	}
}

int store_names_collisions(const struct store_names *n, int (*fn)(void *ctx, char level, const char *comp,
								 const char *a, const char *b),
			   void *ctx)
{
	int r = 0;
	for (size_t i = 1; i < n->npairs && r == 0; i++) {
		const struct names_pair *p = &n->pairs[i - 1], *q = &n->pairs[i];
		if (p->level == q->level && strcmp(p->comp, q->comp) == 0)
			r = fn(ctx, q->level, q->comp, p->name, q->name);
	}
	return r;
}

void store_names_release(struct store_names *n)
{
	free(n->impls);
	free(n->envs);
	free(n->pairs);
	*n = (struct store_names){ 0 };
}
