// SPDX-License-Identifier: MIT
/*
 * Run views: what rendering a run needs (its record, its group listing and position, its parsed
 * documents) as one struct runv, a group's as a kx_group_view, the files a run directory
 * lists, and a run's path in the tree (kx_tree_run_path).
 */
#include "private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- run views -------------------------------------------------------------------------------- */

/* What a struct kx_run_attestation points to. */
struct att_extra {
	struct pdoc *doc;
	struct kx_run_rec by;
	char name[TREE_ATT_NAME_MAX];
	char by_id[KX_DIGEST_HEX + 1];
	char by_gpu[KX_NAME_MAX];
};

void tree_runv_release(struct kx_tree *t, struct runv *rv)
{
	free(rv->aliases);
	free(rv->signatures);
	for (size_t i = 0; i < rv->v.n_attestations; i++)
		tree_pdoc_put(rv->att_extra[i].doc);
	free(rv->attestations);
	free(rv->att_extra);
	free(rv->received);
	tree_gctx_put(t, rv->g);
	for (int d = 0; d < KX_DOC__COUNT; d++)
		tree_pdoc_put(rv->docs[d]);
}

struct alias_list {
	struct kx_digest *v;
	size_t len, cap;
};

static int alias_add(void *ctx, const struct kx_digest *d)
{
	struct alias_list *l = ctx;
	if (KX_GROW(l->v, l->cap, l->len, 4) < 0)
		return -ENOMEM;
	l->v[l->len++] = *d;
	return 0;
}

/* The run's aliases (SPEC §2), for summary.txt and DIGESTS. */
static int load_aliases(struct kx_tree *t, struct kx_view *v, struct runv *rv)
{
	struct alias_list l = { 0 };
	int r = kx_store_each_alias(t->s, v, &rv->run.run, alias_add, &l);
	rv->aliases = l.v;
	rv->v.aliases = l.v;
	rv->v.n_aliases = l.len;
	return r;
}

struct sig_list {
	struct kx_tree *t;
	struct kx_view *v;
	const struct kx_digest *run;
	bool check;
	struct kx_run_signature *x;
	size_t len, cap;
};

static int signature_add(void *ctx, const struct kx_digest *key, const uint8_t *pub, const uint8_t *sig)
{
	struct sig_list *l = ctx;
	if (KX_GROW(l->x, l->cap, l->len, 4) < 0)
		return -ENOMEM;
	struct kx_run_signature *x = &l->x[l->len++];
	*x = (struct kx_run_signature){ .key_id = *key };
	memcpy(x->pub, pub, sizeof(x->pub));
	memcpy(x->sig, sig, sizeof(x->sig));
	if (!l->check)
		return 0;
	x->valid = tree_signature_valid(l->t, l->run, key, pub, sig);
	struct kx_key_rec k;
	int r = kx_store_get_key(l->t->s, l->v, key, &k);
	if (r == 0) {
		x->known = true;
		x->revoked_ns = k.revoked_ns;
		snprintf(x->key_name, sizeof(x->key_name), "%s", k.name);
	}
	return r == -ENOENT ? 0 : r;
}

/* The run's signatures (SPEC §10); when `check`, each checked again, with what the store knows of
 * its key. */
static int load_signatures(struct kx_tree *t, struct kx_view *v, struct runv *rv, bool check)
{
	struct sig_list l = { t, v, &rv->run.run, check, NULL, 0, 0 };
	uint32_t n;
	int r = tree_signature_count(t, v, &rv->run.run, &n); /* none read in a store nobody signed */
	if (r == 0 && n)
		r = kx_store_each_signature(t->s, v, &rv->run.run, signature_add, &l);
	rv->signatures = l.x;
	rv->v.signatures = l.x;
	rv->v.n_signatures = l.len;
	return r;
}

/* ---- attestations (SPEC §8) ------------------------------------------------------------------- */

struct att_refs {
	struct kx_attestation_ref *v;
	size_t len, cap;
};

static int att_ref_add(void *ctx, const struct kx_attestation_ref *a)
{
	struct att_refs *l = ctx;
	if (KX_GROW(l->v, l->cap, l->len, 4) < 0)
		return -ENOMEM;
	l->v[l->len++] = *a;
	return 0;
}

/* Run `run`'s attestations, oldest first (l->v malloc'd); none read where the run has none. */
static int att_refs_of(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, struct att_refs *l)
{
	uint32_t n;
	*l = (struct att_refs){ 0 };
	int r = tree_attestation_count(t, v, run, &n);
	return r < 0 || !n ? r : kx_store_each_attestation(t->s, v, run, att_ref_add, l);
}

static void att_name(size_t i, const struct kx_attestation_ref *a, char out[TREE_ATT_NAME_MAX])
{
	char hex[KX_DIGEST_HEX + 1];
	kx_digest_hex(&a->digest, hex);
	snprintf(out, TREE_ATT_NAME_MAX, "%02zu-%s-%.12s.json", i + 1,
		 kx_attestation_type_name(a->type), hex);
}

int tree_run_attestations_of(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, kx_dirent_fn fn,
			     void *ctx)
{
	struct att_refs l;
	int r = att_refs_of(t, v, run, &l);
	for (size_t i = 0; i < l.len && r == 0; i++) {
		char name[TREE_ATT_NAME_MAX];
		att_name(i, &l.v[i], name);
		struct kx_node n = { .type = KX_NODE_DOC_FILE, .file = KX_DOC_FILE_ATTESTATION, .id = l.v[i].digest };
		r = fn(ctx, name, &n);
	}
	free(l.v);
	return r;
}

struct arts_walk {
	struct kx_tree *t;
	struct kx_view *v;
	kx_dirent_fn fn;
	void *ctx;
};

static int art_step(void *ctx, const char *name, const struct kx_digest *d)
{
	struct arts_walk *w = ctx;
	struct kx_artifact_rec a;
	int r = kx_store_get_artifact(w->t->s, w->v, d, &a);
	if (r < 0)
		return r == -ENOENT ? 0 : r; /* announced, not received: no file */
	struct kx_node n = { .type = KX_NODE_DOC_FILE, .file = KX_DOC_FILE_ARTIFACT, .id = *d };
	return w->fn(w->ctx, name, &n);
}

int tree_run_artifacts_of(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, kx_dirent_fn fn,
			  void *ctx)
{
	uint32_t n;
	int r = tree_artifact_count(t, v, run, &n);
	if (r < 0 || !n)
		return r;
	struct arts_walk w = { t, v, fn, ctx };
	return kx_store_run_artifacts(t->s, v, run, art_step, &w);
}

/* One attestation as the run's files show it: its document's fields, a reproduction's run. */
static int att_view(struct kx_tree *t, struct kx_view *v, size_t i, const struct kx_attestation_ref *ref,
		    struct kx_run_attestation *a, struct att_extra *e)
{
	att_name(i, ref, e->name);
	if (!(e->doc = tree_pdoc_get(t, v, &ref->digest, NULL)))
		return -EIO; /* indexed, so stored */
	const struct kx_json *spec = kx_json_get(e->doc->json, "spec");
	*a = (struct kx_run_attestation){ .digest = ref->digest, .created_ns = ref->created_ns, .name = e->name,
					  .type = ref->type,
					  .created_at = kx_json_get_string(spec, "createdAt"),
					  .author = kx_json_get_string(spec, "author"),
					  .text = kx_json_get_string(spec, "text") };
	if (!a->created_at || !a->author)
		return -EIO;
	if (a->type != KX_ATTEST_REPRODUCTION)
		return 0;
	struct kx_group_rec g;
	int r = tree_get_run(t, v, &ref->by, &e->by);
	if (r == 0)
		r = tree_get_group(t, v, &e->by.group, &g, NULL);
	if (r == 0)
		r = tree_runs_canonical(t, v, &ref->by, e->by_id);
	if (r < 0)
		return r == -ENOENT ? -EIO : r;
	snprintf(e->by_gpu, sizeof(e->by_gpu), "%s", g.gpu);
	a->by = &e->by;
	a->by_id = e->by_id;
	a->by_gpu = e->by_gpu;
	return 0;
}

/* The run's attestations (SPEC §8), for summary.txt and its page. */
static int load_attestations(struct kx_tree *t, struct kx_view *v, struct runv *rv)
{
	struct att_refs l;
	int r = att_refs_of(t, v, &rv->run.run, &l);
	if (r < 0 || !l.len)
		return r;
	rv->attestations = calloc(l.len, sizeof(*rv->attestations));
	rv->att_extra = calloc(l.len, sizeof(*rv->att_extra));
	r = rv->attestations && rv->att_extra ? 0 : -ENOMEM;
	for (size_t i = 0; i < l.len && r == 0; i++) {
		rv->v.n_attestations = i + 1; /* what release puts */
		r = att_view(t, v, i, &l.v[i], &rv->attestations[i], &rv->att_extra[i]);
	}
	rv->v.attestations = rv->attestations;
	free(l.v);
	return r;
}

struct received_walk {
	struct kx_tree *t;
	struct kx_view *v;
	struct runv *rv;
};

static int received_step(void *ctx, const char *name, const struct kx_digest *d)
{
	struct received_walk *w = ctx;
	struct kx_artifact_rec a;
	bool *b = realloc(w->rv->received, (w->rv->v.n_artifacts + 1) * sizeof(*b));
	if (!b)
		return -ENOMEM;
	w->rv->received = b;
	int r = kx_store_get_artifact(w->t->s, w->v, d, &a);
	b[w->rv->v.n_artifacts++] = r == 0;
	return r == -ENOENT ? 0 : r;
}

/* SPEC §9: which of the run's announced artifacts have their bytes stored; nothing read for a run
 * with none stored. */
static int load_artifacts(struct kx_tree *t, struct kx_view *v, struct runv *rv)
{
	uint32_t n;
	int r = tree_artifact_count(t, v, &rv->run.run, &n);
	if (r < 0 || !n)
		return r;
	struct received_walk w = { t, v, rv };
	r = kx_store_run_artifacts(t->s, v, &rv->run.run, received_step, &w);
	rv->v.artifact_received = rv->received;
	return r;
}

/*
 * Load what rendering a run needs: RV_GROUP its group listing and position (rank, names — only
 * summary.txt, SHA256SUMS and the rank xattrs need them), RV_DOCS its parsed documents,
 * RV_ALIASES its aliases (one seek: only summary.txt and DIGESTS show them), RV_SIGNATURES its
 * stored signatures (one seek: manifest.json), RV_SIG_CHECKS those checked again (SIGNATURES),
 * RV_NAMES the names under runs/ of the run and #1 (a seek or two: index.html). An
 * alias (SPEC §2) has no position: RV_GROUP gives the run it is an alias of instead.
 */
int tree_runv_load_with(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, unsigned what,
		   struct runv *rv)
{
	memset(rv, 0, sizeof(*rv));
	int r = tree_get_run(t, v, run, &rv->run);
	if (r < 0)
		return r;
	rv->v.run = &rv->run;
	if (what & RV_GROUP && rv->run.alias) {
		/* an alias is in no group's listing: it names the run it is an alias of */
		if ((r = tree_runs_canonical(t, v, &rv->run.alias_of, rv->alias_of_id)) < 0 ||
		    (r = kx_tree_run_path(t, v, &rv->run.alias_of, rv->alias_of_path, sizeof(rv->alias_of_path))) < 0 ||
		    (r = tree_gctx_get(t, v, &rv->run.group, &rv->g)) < 0) {
			tree_runv_release(t, rv);
			return r == -ENOENT ? -EIO : r;
		}
		rv->v.alias_of_id = rv->alias_of_id;
		rv->v.alias_of_path = rv->alias_of_path;
		rv->v.group = &rv->g->group;
		rv->v.group_path = rv->g->path;
		rv->v.dirname = "";
	} else if (what & RV_GROUP) {
		r = tree_gctx_get(t, v, &rv->run.group, &rv->g);
		if (r < 0)
			return r == -ENOENT ? -EIO : r;
		ssize_t pos = tree_gctx_find(rv->g, run);
		if (pos < 0) {
			tree_runv_release(t, rv);
			return -EIO;
		}
		rv->v.group = &rv->g->group;
		rv->v.group_path = rv->g->path;
		rv->v.dirname = rv->g->dirnames[pos];
		rv->v.rank = (size_t)pos < rv->g->ranked ? (uint32_t)pos + 1 : 0;
		rv->v.ranked = rv->g->ranked;
		if (rv->g->ranked) {
			rv->v.best = &rv->g->runs[0];
			rv->v.best_dirname = rv->g->dirnames[0];
		}
		if (rv->v.rank > 1) {
			rv->v.above = &rv->g->runs[pos - 1];
			rv->v.above_dirname = rv->g->dirnames[pos - 1];
		}
		/* SPEC §10: the measured run of its implementation that reruns it */
		int32_t j = rv->g->reruns[pos];
		if (j >= 0) {
			rv->v.rerun = &rv->g->runs[j];
			rv->v.rerun_dirname = rv->g->dirnames[j];
		}
		/* a superseded run: its implementation's current run, ranked once */
		for (size_t i = 0; !rv->v.rank && rv->run.passed && !rv->v.current && i < rv->g->ranked; i++)
			if (strcmp(rv->g->runs[i].impl, rv->run.impl) == 0) {
				rv->v.current = &rv->g->runs[i];
				rv->v.current_dirname = rv->g->dirnames[i];
			}
	}
	/* a name under runs/ can be longer than 12 digits (another run shares them): the store says */
	if (what & RV_NAMES) {
		r = tree_runs_canonical(t, v, run, rv->runs_id);
		if (r == 0 && rv->v.best)
			r = tree_runs_canonical(t, v, &rv->v.best->run, rv->best_runs_id);
		if (r < 0) {
			tree_runv_release(t, rv);
			return r;
		}
		rv->v.runs_id = rv->runs_id;
		rv->v.best_runs_id = rv->v.best ? rv->best_runs_id : NULL;
	}
	if (what & RV_ALIASES && !rv->run.alias && (r = load_aliases(t, v, rv)) < 0) {
		tree_runv_release(t, rv);
		return r;
	}
	if (what & (RV_SIGNATURES | RV_SIG_CHECKS) && (r = load_signatures(t, v, rv, what & RV_SIG_CHECKS)) < 0) {
		tree_runv_release(t, rv);
		return r;
	}
	if (what & RV_ARTIFACTS && (r = load_artifacts(t, v, rv)) < 0) {
		tree_runv_release(t, rv);
		return r;
	}
	if (what & RV_ATTESTATIONS && (r = load_attestations(t, v, rv)) < 0) {
		tree_runv_release(t, rv);
		return r;
	}
	if (!(what & RV_DOCS))
		return 0;
	const struct kx_digest *ds[KX_DOC__COUNT] = { &rv->run.run, &rv->run.protocol, &rv->run.environment,
						      &rv->run.workload, &rv->run.implementation };
	for (int d = 0; d < KX_DOC__COUNT; d++) {
		rv->docs[d] = tree_pdoc_get(t, v, ds[d], &rv->run.run);
		rv->v.doc[d] = rv->docs[d] ? rv->docs[d]->json : NULL;
	}
	return 0;
}

int tree_runv_load(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, struct runv *rv)
{
	return tree_runv_load_with(t, v, run, RV_GROUP | RV_DOCS, rv);
}

void tree_group_view(const struct gctx *g, struct kx_group_view *gv)
{
	gv->group = &g->group;
	gv->path = g->path;
	gv->runs = g->runs;
	gv->dirnames = g->dirptrs;
	gv->reruns = g->reruns;
	gv->len = g->len;
	gv->ranked = g->ranked;
	gv->workload_dir = g->workload_dir;
	gv->workload_doc = g->workload_doc;
}

/*
 * Each file of run x that a directory of it lists — all but workload.json and implementation.json
 * whose document is not stored — as fn(ctx, name, node): the one list behind a run directory's
 * listing and the two SHA256SUMS that cover its files.
 */
int tree_run_files_of(struct kx_tree *t, struct kx_view *v, uint8_t dir_type, const struct kx_run_rec *x,
		 kx_dirent_fn fn, void *ctx)
{
	int r = 0;
	for (int f = 0; f < KX_RF__COUNT && r == 0; f++) {
		if (!tree_run_has(t, v, x, f))
			continue;
		struct kx_node n = tree_run_file_node(dir_type, x, f);
		r = fn(ctx, kx_run_file_name((enum kx_run_file)f), &n);
	}
	return r;
}

int kx_tree_run_path(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, char *out, size_t cap)
{
	struct kx_run_rec x;
	int r = tree_get_run(t, v, run, &x);
	if (r == 0 && x.alias) { /* SPEC §2: an alias is in runs/ only */
		char id[KX_DIGEST_HEX + 1];
		if ((r = tree_runs_canonical(t, v, run, id)) == 0)
			snprintf(out, cap, "runs/%s", id);
		return r;
	}
	struct runv rv;
	r = r < 0 ? r : tree_runv_load_with(t, v, run, RV_GROUP, &rv); /* a path needs no document */
	if (r < 0)
		return r;
	snprintf(out, cap, "%s/%s", rv.v.group_path, rv.v.dirname);
	tree_runv_release(t, &rv);
	return 0;
}
