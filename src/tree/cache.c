// SPDX-License-Identifier: MIT
/*
 * The tree's caches: tree_cache_init sizes them from one bound (kx_tree_new) and
 * tree_cache_release frees them. The small caches (sizes, decoded inodes, run and group records'
 * slots, documents' existence, benchmark directories), the table of how many runs name each
 * document, the content cache with the root's files kept beside it (top slots), and the parsed
 * documents. They read the store, never render: what is cached here is filled by the layers above.
 */
#include "private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Two direct-mapped caches beside the content cache, each a fixed fraction of its bound: file
 * sizes by (content key, stamp), so getattr of a file whose bytes were evicted does not render it
 * again (after a read, the kernel asks for attributes once more) — a group's SHA256SUMS above all,
 * whose size takes every file of every run of the group: a quarter of the bound (65,536 slots
 * with the default 8 MiB; with a 32nd, a group listed again after the kernel had forgotten it —
 * memory pressure, proactive reclaim — was rendered whole again, and `ls -lR` of 20,000 runs
 * listed again cost as much as the first time); and decoded nodes by inode number, which never
 * change meaning (inode numbers are never reused), so an operation on a known inode costs no
 * prefix seek in the store. (The slots other files read too — sizes, the run sizes, group
 * records and groups' stamps — are declared in private.h.)
 */
struct node_slot {
	uint64_t ino;
	struct kx_node n;
};

/*
 * And run records by digest: a record never changes once stored (ranks live in the group index),
 * and one file operation reads its run's record several times (stamp, lookup, attributes, render).
 * An entry serves a view only if the run existed in it (its generation is not newer).
 */
struct run_slot {
	bool used;
	/* as of extra_gen (0: not known; a signature, a key's trust or an attestation changes only with
	 * the generation): SPEC §10, how many signatures of the run are stored (manifest.json's stamp),
	 * and whether one is by a key the store trusts (its evidence); §8, how many attestations */
	uint64_t extra_gen;
	uint32_t sigs, atts, arts; /* §9: its artifacts whose bytes are stored */
	bool trusted;
	struct kx_run_rec rec;
};

/*
 * And which documents exist (a listing of a run directory asks for its workload and
 * implementation documents): a document, once stored, is never removed, so "it exists since
 * generation g" answers every view of generation g or later. Absence is not cached.
 */
struct doc_slot {
	uint64_t generation;
	struct kx_digest d;
};

/* ---- caches ----------------------------------------------------------------------------------- */

static size_t pow2_floor(size_t n)
{
	size_t p = 1;
	while (p * 2 <= n)
		p *= 2;
	return p;
}

/* The keys of one run's nodes differ only in their top bits, so a slot's hash mixes them all */
static uint64_t mix(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	key *= 0xc4ceb9fe1a85ec53ull;
	key ^= key >> 33;
	return key;
}

/* A slot for a key in a table of n, a power of two */
size_t tree_slot_of(uint64_t key, size_t n)
{
	return (size_t)mix(key) & (n - 1);
}

bool tree_rank_dependent(int f)
{
	/* DIGESTS: a run's names its aliases (SPEC §2), SIGNATURES its signatures and whether their
	 * keys are trusted (§10): both change as its group does */
	return f == KX_RF_SUMMARY || f == KX_RF_SHA256SUMS || f == KX_RF_DIGESTS || f == KX_RF_SIGNATURES ||
	       f == KX_RF_INDEX_HTML;
}

bool tree_place_dependent(int f)
{
	/* index.html's links are relative to its place; SHA256SUMS hashes that index.html */
	return f == KX_RF_INDEX_HTML || f == KX_RF_SHA256SUMS;
}

/* Whether a run-sizes slot's entry f follows the group (runs/' index.html does, as the other's) */
static bool rsize_rank(int f)
{
	return f == RSIZE_RUNS_HTML || tree_rank_dependent(f);
}

/*
 * The sizes slot of the run a key (a run file's) belongs to, moved to the front of its set, and
 * the file's index in it: NULL for other keys, and when the run has no slot — unless `take`, which
 * hands it the set's least recently used one, emptied. A key of runs/ is one of its own files
 * (tree_place_dependent): its index.html has an entry of its own, its SHA256SUMS shares the rank
 * directory's, which lists the same names, so has the same size. Under t->lock.
 */
struct rsize_slot *tree_rsize_slot(struct kx_tree *t, uint64_t key, int *ret_file, bool take)
{
	unsigned type = kx_ino_type(key);
	int f = (int)kx_ino_file(key);
	if (f >= KX_RF__COUNT || (type != KX_NODE_RUN_FILE && (type != KX_NODE_RUNS_FILE || !tree_place_dependent(f))))
		return NULL;
	*ret_file = type == KX_NODE_RUNS_FILE && f == KX_RF_INDEX_HTML ? RSIZE_RUNS_HTML : f;
	uint64_t id = (key & BITS55) | 1ull << 63;
	struct rsize_slot *set = &t->rsizes[(size_t)(mix(key & BITS55) % t->nrsets) * RSIZE_WAYS];
	int i = 0;
	while (i < RSIZE_WAYS - 1 && set[i].id != id)
		i++;
	if (set[i].id != id) {
		if (!take)
			return NULL;
		set[i].id = id;
		set[i].rank_stamp = 0;
		memset(set[i].size, 0xff, sizeof(set[i].size)); /* RSIZE_UNKNOWN */
	}
	if (i > 0) {
		struct rsize_slot s = set[i];
		memmove(set + 1, set, (size_t)i * sizeof(*set));
		set[0] = s;
	}
	return set;
}

bool tree_size_get(struct kx_tree *t, uint64_t key, int64_t stamp, uint64_t *ret)
{
	int f;
	pthread_mutex_lock(&t->lock);
	const struct rsize_slot *r = tree_rsize_slot(t, key, &f, false);
	bool hit = r && r->size[f] != RSIZE_UNKNOWN && (!rsize_rank(f) || r->rank_stamp == stamp) &&
		   (f != KX_RF_MANIFEST || stamp == 0);
	if (hit) {
		*ret = r->size[f];
	} else { /* any other file's, or a run's file too large for its slot */
		const struct size_slot *x = &t->sizes[tree_slot_of(key, t->nsizes)];
		hit = x->key == key && key && x->stamp == stamp;
		if (hit)
			*ret = x->size;
	}
	pthread_mutex_unlock(&t->lock);
	return hit;
}

/* under t->lock */
void tree_size_put_locked(struct kx_tree *t, uint64_t key, int64_t stamp, uint64_t size)
{
	int f;
	struct rsize_slot *r = size < RSIZE_UNKNOWN ? tree_rsize_slot(t, key, &f, true) : NULL;
	if (r && f == KX_RF_MANIFEST && stamp != 0)
		r = NULL; /* a version still missing a document: by (key, stamp) like any other file */
	if (r) {
		if (rsize_rank(f) && r->rank_stamp != stamp) {
			r->rank_stamp = stamp;
			for (int k = 0; k < RSIZE_FILES; k++)
				if (rsize_rank(k))
					r->size[k] = RSIZE_UNKNOWN;
		}
		r->size[f] = (uint16_t)size;
		return;
	}
	struct size_slot *x = &t->sizes[tree_slot_of(key, t->nsizes)];
	x->key = key;
	x->stamp = stamp;
	x->size = size;
}

bool tree_node_get(struct kx_tree *t, uint64_t ino, struct kx_node *ret)
{
	pthread_mutex_lock(&t->lock);
	const struct node_slot *x = &t->nodes[tree_slot_of(ino, t->nnodes)];
	bool hit = x->ino == ino && ino;
	if (hit)
		*ret = x->n;
	pthread_mutex_unlock(&t->lock);
	return hit;
}

static size_t run_slot_of(struct kx_tree *t, const struct kx_digest *d)
{
	uint64_t key;
	memcpy(&key, d->b, sizeof(key));
	return tree_slot_of(key, t->nruns);
}

/* Keep a run record read from the store (a run never changes once stored). */
void tree_run_put(struct kx_tree *t, const struct kx_run_rec *rec)
{
	size_t i = run_slot_of(t, &rec->run);
	pthread_mutex_lock(&t->lock);
	t->runs[i].used = true;
	t->runs[i].extra_gen = 0;
	t->runs[i].rec = *rec;
	pthread_mutex_unlock(&t->lock);
}

int tree_get_run(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, struct kx_run_rec *ret)
{
	size_t i = run_slot_of(t, d);
	pthread_mutex_lock(&t->lock);
	const struct run_slot *x = &t->runs[i];
	bool hit = x->used && kx_digest_equal(&x->rec.run, d) && (!v || x->rec.generation <= kx_view_generation(v));
	if (hit)
		*ret = x->rec;
	pthread_mutex_unlock(&t->lock);
	if (!hit) {
		int r = kx_store_get_run(t->s, v, d, ret);
		if (r < 0)
			return r;
		tree_run_put(t, ret);
	}
	tree_evidence(t, v, ret);
	return 0;
}

/*
 * Whether view v holds any key of a family that is only ever added to — signatures, attestations
 * (enum tree_extra) — so "some since generation g" answers every later view, and "none in
 * generation g" that one: a store nobody signed answers with one seek per generation, and its
 * runs' manifest.json stamps with none; one nobody attested likewise for its run directories.
 */
int tree_store_has(struct kx_tree *t, struct kx_view *v, enum tree_extra what, bool *ret)
{
	uint64_t gen = v ? kx_view_generation(v) : 0;
	struct extra_since *h = &t->has[what];
	pthread_mutex_lock(&t->lock);
	bool hit = gen && ((h->since && gen >= h->since) || gen == h->none_at);
	bool any = hit && h->since && gen >= h->since;
	pthread_mutex_unlock(&t->lock);
	if (hit) {
		*ret = any;
		return 0;
	}
	int r = what == TREE_SIGNATURES     ? kx_store_any_signature(t->s, v, &any)
		: what == TREE_ATTESTATIONS ? kx_store_any_attestation(t->s, v, &any)
					    : kx_store_any_artifact(t->s, v, &any);
	if (r < 0)
		return r;
	if (gen) {
		pthread_mutex_lock(&t->lock);
		if (any && (!h->since || gen < h->since))
			h->since = gen;
		else if (!any)
			h->none_at = gen;
		pthread_mutex_unlock(&t->lock);
	}
	*ret = any;
	return 0;
}

static int count_attestation(void *ctx, const struct kx_attestation_ref *a)
{
	(*(uint32_t *)ctx)++;
	return 0;
}

/*
 * What run `run` has beside its record in view v: how many signatures, whether a key the store
 * trusts made one, how many attestations. Nothing read in a store that holds neither; else a scan
 * of each family it holds, kept beside the run's record for the rest of that generation (a stat,
 * a read, a SHA256SUMS and a listing each ask).
 */
struct run_extras {
	uint32_t sigs, atts, arts;
	bool trusted;
};

struct received {
	struct kx_store *s;
	struct kx_view *v;
	uint32_t n;
};

static int count_received(void *ctx, const char *name, const struct kx_digest *d)
{
	struct received *x = ctx;
	struct kx_artifact_rec a;
	int r = kx_store_get_artifact(x->s, x->v, d, &a);
	x->n += r == 0;
	return r == -ENOENT ? 0 : r;
}

static int run_extras(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, struct run_extras *ret)
{
	bool sigs, atts, arts = false;
	int r = tree_store_has(t, v, TREE_SIGNATURES, &sigs);
	if (r == 0)
		r = tree_store_has(t, v, TREE_ATTESTATIONS, &atts);
	if (r == 0)
		r = tree_store_has(t, v, TREE_ARTIFACTS, &arts);
	*ret = (struct run_extras){ 0 };
	if (r < 0 || (!sigs && !atts && !arts))
		return r;
	uint64_t gen = v ? kx_view_generation(v) : 0;
	struct run_slot *x = &t->runs[run_slot_of(t, run)];
	pthread_mutex_lock(&t->lock);
	bool hit = gen && x->used && kx_digest_equal(&x->rec.run, run) && x->extra_gen == gen;
	if (hit)
		*ret = (struct run_extras){ x->sigs, x->atts, x->arts, x->trusted };
	pthread_mutex_unlock(&t->lock);
	if (hit)
		return 0;
	if (sigs && (r = kx_store_run_signatures(t->s, v, run, &ret->sigs, &ret->trusted)) < 0)
		return r;
	if (atts && (r = kx_store_each_attestation(t->s, v, run, count_attestation, &ret->atts)) < 0)
		return r;
	struct received rc = { t->s, v, 0 };
	if (arts && (r = kx_store_run_artifacts(t->s, v, run, count_received, &rc)) < 0)
		return r;
	ret->arts = rc.n;
	if (!gen)
		return 0;
	pthread_mutex_lock(&t->lock);
	if (x->used && kx_digest_equal(&x->rec.run, run)) {
		x->extra_gen = gen;
		x->sigs = ret->sigs;
		x->atts = ret->atts;
		x->arts = ret->arts;
		x->trusted = ret->trusted;
	}
	pthread_mutex_unlock(&t->lock);
	return 0;
}

int tree_signature_count(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, uint32_t *ret)
{
	struct run_extras e;
	int r = run_extras(t, v, run, &e);
	*ret = e.sigs;
	return r;
}

int tree_attestation_count(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, uint32_t *ret)
{
	struct run_extras e;
	int r = run_extras(t, v, run, &e);
	*ret = e.atts;
	return r;
}

int tree_artifact_count(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, uint32_t *ret)
{
	struct run_extras e;
	int r = run_extras(t, v, run, &e);
	*ret = e.arts;
	return r;
}

bool tree_signature_valid(struct kx_tree *t, const struct kx_digest *run, const struct kx_digest *key,
			  const uint8_t pub[KX_ED25519_PUB_LEN], const uint8_t sig[KX_ED25519_SIG_LEN])
{
	/* the memo's key is the bytes checked: a damaged store's other bytes are checked anew */
	uint8_t b[KX_DIGEST_LEN + KX_ED25519_PUB_LEN + KX_ED25519_SIG_LEN], h[KX_DIGEST_LEN];
	memcpy(b, run->b, KX_DIGEST_LEN);
	memcpy(b + KX_DIGEST_LEN, pub, KX_ED25519_PUB_LEN);
	memcpy(b + KX_DIGEST_LEN + KX_ED25519_PUB_LEN, sig, KX_ED25519_SIG_LEN);
	kx_sha256(b, sizeof(b), h);
	uint64_t slot;
	memcpy(&slot, h, sizeof(slot));
	struct sig_memo *m = &t->sigmemo[slot % SIGMEMO_SLOTS];
	pthread_mutex_lock(&t->lock);
	bool hit = memcmp(m->h, h, sizeof(h)) == 0, valid = m->valid;
	pthread_mutex_unlock(&t->lock);
	if (hit)
		return valid;
	char msg[KX_DIGEST_STR_MAX];
	struct kx_digest id;
	kx_digest_format(run, msg);
	kx_key_id(pub, &id);
	valid = kx_digest_equal(&id, key) && kx_verify(pub, msg, strlen(msg), sig);
	pthread_mutex_lock(&t->lock);
	memcpy(m->h, h, sizeof(h));
	m->valid = valid;
	pthread_mutex_unlock(&t->lock);
	return valid;
}

/* A run that claims measured evidence is shown so only while a trusted key's signature of it is
 * stored (SPEC §10). */
void tree_evidence(struct kx_tree *t, struct kx_view *v, struct kx_run_rec *x)
{
	struct run_extras e;
	if (x->evidence != KX_EVIDENCE_MEASURED || (run_extras(t, v, &x->run, &e) == 0 && e.trusted))
		return;
	x->evidence = KX_EVIDENCE_SUBMITTED;
	x->unbacked = true;
}

/* Every document the tree reads, counted: a document is one store value, read whole however
 * little of it is wanted, so what a change costs is visible in kx_tree_stats. */
int tree_get_doc(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, struct kx_buf *out)
{
	pthread_mutex_lock(&t->lock);
	t->stats.doc_reads++;
	pthread_mutex_unlock(&t->lock);
	return kx_store_get_doc(t->s, v, d, out);
}

struct wait_find {
	const struct kx_digest *run;
	bool found;
};

static int wait_step(void *ctx, const struct kx_digest *run)
{
	struct wait_find *w = ctx;
	w->found = kx_digest_equal(w->run, run);
	return w->found;
}

/*
 * Whether document d is stored in view v. `named_by`, when not NULL, is a run of v that names d:
 * unless it waited for d (the W index lists the runs stored while a document they name was
 * missing), d came with it or before it, and is known stored without reading it — a document is
 * read whole, however large, even to learn that it exists.
 */
bool tree_doc_in(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d,
		 const struct kx_digest *named_by)
{
	uint64_t key, gen = v ? kx_view_generation(v) : UINT64_MAX;
	memcpy(&key, d->b, sizeof(key));
	struct doc_slot *x = &t->docs[tree_slot_of(key, t->ndocs)];
	pthread_mutex_lock(&t->lock);
	bool hit = x->generation && kx_digest_equal(&x->d, d) && x->generation <= gen;
	pthread_mutex_unlock(&t->lock);
	if (hit)
		return true;
	struct wait_find w = { named_by, false };
	bool known = named_by && kx_store_each_waiting(t->s, v, d, wait_step, &w) >= 0 && !w.found;
	if (!known && tree_get_doc(t, v, d, NULL) < 0)
		return false;
	if (v) {
		pthread_mutex_lock(&t->lock);
		x->generation = gen ? gen : 1;
		x->d = *d;
		pthread_mutex_unlock(&t->lock);
	}
	return true;
}

bool tree_doc_exists(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d)
{
	return tree_doc_in(t, v, d, NULL);
}

/* ---- how many runs name a document (struct doc_uses) ------------------------------------------ */

/*
 * The runs that name each document (protocol, environment, workload, implementation), counted,
 * and the earliest observedAt among them: the link count and the mtime of the document's file in
 * run directories, one inode for all of them (KX_NODE_DOC_FILE). Built by one pass over the runs
 * when first needed, then kept current by kx_tree_changes with the runs each commit added; a view
 * newer than the table (a commit the notifier has not reached yet) has it built again. An older
 * view is answered from the newer table: a link count or mtime a commit ahead, never a missing
 * document. Open addressing on the digest, at most half full.
 */
struct doc_use {
	struct kx_digest d;
	uint32_t runs;  /* 0: a free slot */
	uint32_t links; /* its file's: 2 a run (benchmarks/ and runs/), 1 an alias (runs/ only) */
	int64_t first_ns;
};

struct doc_uses {
	uint64_t generation; /* of the view it counts */
	size_t cap, len;     /* cap a power of two */
	struct doc_use *v;
};

bool tree_doc_role(int f)
{
	return f == KX_RF_PROTOCOL || f == KX_RF_ENVIRONMENT || f == KX_RF_WORKLOAD || f == KX_RF_IMPLEMENTATION;
}

/* The document a run's file f is (KX_RF_RUN … KX_RF_IMPLEMENTATION). */
const struct kx_digest *tree_run_doc(const struct kx_run_rec *x, int f)
{
	switch (f) {
	case KX_RF_RUN:
		return &x->run;
	case KX_RF_PROTOCOL:
		return &x->protocol;
	case KX_RF_ENVIRONMENT:
		return &x->environment;
	case KX_RF_WORKLOAD:
		return &x->workload;
	default:
		return &x->implementation;
	}
}

/*
 * A file of a run directory. The documents (protocol.json …) are the document's own node, one
 * inode for every run that names it, as hard links: the kernel keeps one copy of the bytes for
 * all of them.
 */
struct kx_node tree_run_file_node(uint8_t dir_type, const struct kx_run_rec *x, int f)
{
	if (tree_doc_role(f))
		return (struct kx_node){ .type = KX_NODE_DOC_FILE, .file = (uint8_t)f, .id = *tree_run_doc(x, f) };
	return (struct kx_node){ .type = dir_type == KX_NODE_RUNS_RUN ? KX_NODE_RUNS_FILE : KX_NODE_RUN_FILE,
				 .file = (uint8_t)f, .id = x->run };
}

/* Whether run x has file f: all of them but workload.json and implementation.json, which need
 * their document stored (a published record may name it by digest only). */
bool tree_run_has(struct kx_tree *t, struct kx_view *v, const struct kx_run_rec *x, int f)
{
	return (f != KX_RF_WORKLOAD && f != KX_RF_IMPLEMENTATION) || tree_doc_in(t, v, tree_run_doc(x, f), &x->run);
}

static void uses_free(struct doc_uses *u)
{
	if (u)
		free(u->v);
	free(u);
}

static struct doc_use *uses_slot(struct doc_use *v, size_t cap, const struct kx_digest *d)
{
	uint64_t h;
	memcpy(&h, d->b, sizeof(h));
	size_t i = (size_t)h & (cap - 1);
	while (v[i].runs && !kx_digest_equal(&v[i].d, d))
		i = (i + 1) & (cap - 1);
	return &v[i];
}

static int uses_add(struct doc_uses *u, const struct kx_digest *d, int64_t observed_ns, uint32_t links)
{
	if (2 * (u->len + 1) > u->cap) {
		size_t cap = u->cap ? 2 * u->cap : 1024;
		struct doc_use *v = calloc(cap, sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < u->cap; i++)
			if (u->v[i].runs)
				*uses_slot(v, cap, &u->v[i].d) = u->v[i];
		free(u->v);
		u->v = v;
		u->cap = cap;
	}
	struct doc_use *e = uses_slot(u->v, u->cap, d);
	if (!e->runs) {
		e->d = *d;
		e->first_ns = observed_ns;
		u->len++;
	} else if (observed_ns < e->first_ns) {
		e->first_ns = observed_ns;
	}
	e->runs++;
	e->links += links;
	return 0;
}

static int uses_add_run(void *ctx, const struct kx_run_rec *x)
{
	int r = 0;
	for (int f = 0; f < KX_RF__COUNT && r == 0; f++)
		if (tree_doc_role(f))
			r = uses_add(ctx, tree_run_doc(x, f), x->observed_ns, x->alias ? 1 : 2);
	return r;
}

static uint64_t view_generation(struct kx_tree *t, struct kx_view *v)
{
	struct kx_store_stats st;
	if (v)
		return kx_view_generation(v);
	kx_store_stats(t->s, v, &st);
	return st.generation;
}

/* How many runs name document d in view v, and the earliest observedAt among them. */
int tree_doc_use(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, uint32_t *ret_runs,
	    int64_t *ret_first_ns, uint32_t *ret_links)
{
	uint64_t gen = view_generation(t, v);
	int r = 0;
	pthread_mutex_lock(&t->uses_lock);
	if (!t->uses || t->uses->generation < gen) {
		struct doc_uses *u = calloc(1, sizeof(*u));
		/* a run record that does not decode counts for none of its documents: that run answers
		 * EIO by itself, and the link counts of the others' files stay what they can be */
		if (!u || ((r = kx_store_each_run(t->s, v, uses_add_run, u)) < 0 && r != -EBADMSG)) {
			uses_free(u);
			pthread_mutex_unlock(&t->uses_lock);
			return u ? r : -ENOMEM;
		}
		u->generation = gen;
		uses_free(t->uses);
		t->uses = u;
	}
	struct doc_use *e = t->uses->cap ? uses_slot(t->uses->v, t->uses->cap, d) : NULL;
	*ret_runs = e ? e->runs : 0;
	*ret_first_ns = e ? e->first_ns : 0;
	if (ret_links)
		*ret_links = e ? e->links : 0;
	pthread_mutex_unlock(&t->uses_lock);
	return *ret_runs ? 0 : -ENOENT;
}

/*
 * How many runs of view v name document d, from the table alone (built when missing): -ESTALE
 * when the table counts another view than v.
 */
int tree_uses_exact(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, uint32_t *ret_runs)
{
	uint32_t runs;
	int64_t first;
	int r = tree_doc_use(t, v, d, &runs, &first, NULL);
	if (r < 0 && r != -ENOENT)
		return r;
	pthread_mutex_lock(&t->uses_lock);
	bool exact = t->uses && t->uses->generation == kx_view_generation(v);
	pthread_mutex_unlock(&t->uses_lock);
	if (!exact)
		return -ESTALE;
	*ret_runs = r == -ENOENT ? 0 : runs;
	return 0;
}

/* kx_tree_changes: the runs `added` between views `before` and `after` name their documents. */
int tree_uses_changed(struct kx_tree *t, struct kx_view *before, struct kx_view *after,
		 const struct kx_digest *added, size_t n)
{
	int r = 0;
	pthread_mutex_lock(&t->uses_lock);
	struct doc_uses *u = t->uses;
	if (u && u->generation == kx_view_generation(before)) {
		struct kx_run_rec x;
		for (size_t i = 0; i < n && r == 0; i++)
			if ((r = kx_store_get_run(t->s, after, &added[i], &x)) == 0)
				r = uses_add_run(u, &x);
		u->generation = kx_view_generation(after);
	}
	if (u && (r < 0 || u->generation < kx_view_generation(after))) {
		uses_free(u); /* built from some other view: built again when next needed */
		t->uses = NULL;
	}
	pthread_mutex_unlock(&t->uses_lock);
	return r;
}

void tree_node_put(struct kx_tree *t, uint64_t ino, const struct kx_node *n)
{
	pthread_mutex_lock(&t->lock);
	struct node_slot *x = &t->nodes[tree_slot_of(ino, t->nnodes)];
	x->ino = ino;
	x->n = *n;
	pthread_mutex_unlock(&t->lock);
}



bool tree_unref(struct kx_tree *t, int *refs)
{
	pthread_mutex_lock(&t->lock);
	bool last = --*refs == 0;
	pthread_mutex_unlock(&t->lock);
	return last;
}


static void centry_free(struct centry *e)
{
	if (e->c.data != e->data)
		free((char *)e->c.data); /* a large file's bytes, taken from the renderer's buffer */
	free(e);
}

/* Size and allocate the small caches from t->limit; -ENOMEM leaves none allocated. */
int tree_cache_init(struct kx_tree *t)
{
	t->nsizes = pow2_floor(t->limit / 4 / sizeof(struct size_slot));
	t->nrsets = t->limit * 3 / 4 / (RSIZE_WAYS * sizeof(struct rsize_slot)) + 1;
	t->nnodes = pow2_floor(t->limit / 4 / sizeof(struct node_slot));
	t->nruns = pow2_floor(t->limit / 8 / sizeof(struct run_slot));
	t->ngroups = pow2_floor(t->limit / 32 / sizeof(struct group_slot));
	t->ngstamps = pow2_floor(t->limit / 8 / sizeof(struct gstamp_slot));
	t->ndocs = pow2_floor(t->limit / 128 / sizeof(struct doc_slot));
	t->sizes = calloc(t->nsizes, sizeof(*t->sizes));
	t->rsizes = calloc(t->nrsets * RSIZE_WAYS, sizeof(*t->rsizes));
	t->nodes = calloc(t->nnodes, sizeof(*t->nodes));
	t->runs = calloc(t->nruns, sizeof(*t->runs));
	t->groups = calloc(t->ngroups, sizeof(*t->groups));
	t->gstamps = calloc(t->ngstamps, sizeof(*t->gstamps));
	t->docs = calloc(t->ndocs, sizeof(*t->docs));
	if (!t->sizes || !t->rsizes || !t->nodes || !t->runs || !t->groups || !t->gstamps || !t->docs) {
		free(t->rsizes);
		free(t->docs);
		free(t->sizes);
		free(t->nodes);
		free(t->runs);
		free(t->groups);
		free(t->gstamps);
		return -ENOMEM;
	}
	return 0;
}

static void pdocs_free_all(struct kx_tree *t);

/* Free what the caches hold, and the caches (kx_tree_free: after the group listings, which hold
 * parsed documents). */
void tree_cache_release(struct kx_tree *t)
{
	for (size_t i = 0; i < KX_ARRAY_SIZE(t->bench); i++)
		for (struct bench_dir *b = t->bench[i], *n; b; b = n) {
			n = b->next;
			free(b);
		}
	for (int i = 0; i < TOP__COUNT; i++) /* before the cache: what is cached too is freed there */
		kx_content_put(t->top[i].c);
	for (struct kx_link *l = t->clru.head, *n; l; l = n) {
		n = l->next;
		centry_free(kx_entry_of(l, struct centry, lru));
	}
	pdocs_free_all(t);
	uses_free(t->uses);
	free(t->sizes);
	free(t->rsizes);
	free(t->nodes);
	free(t->runs);
	free(t->groups);
	free(t->gstamps);
	free(t->docs);
}

void kx_tree_stats(struct kx_tree *t, struct kx_tree_stats *ret)
{
	pthread_mutex_lock(&t->lock);
	*ret = t->stats;
	ret->content_bytes = t->cbytes;
	ret->group_bytes = t->gbytes;
	ret->top_bytes = 0;
	for (int i = 0; i < TOP__COUNT; i++)
		ret->top_bytes += t->top[i].c ? t->top[i].c->len : 0;
	pthread_mutex_unlock(&t->lock);
}

/* benchmark directories: path hash → components (a few thousand at most; never evicted) */
void tree_bench_id(uint8_t depth, char comp[3][KX_NAME_MAX], struct kx_digest *ret)
{
	struct kx_buf b = { 0 };
	kx_buf_printf(&b, "%u", depth);
	for (int i = 0; i < depth; i++) {
		kx_buf_putc(&b, '\0');
		kx_buf_puts(&b, comp[i]);
	}
	kx_sha256(b.ptr, b.len, ret->b);
	kx_buf_release(&b);
}

int tree_bench_node(struct kx_tree *t, uint8_t depth, char comp[3][KX_NAME_MAX], struct kx_node *ret)
{
	struct kx_node n = { .type = KX_NODE_BENCH, .depth = depth };
	tree_bench_id(depth, comp, &n.id);
	uint64_t key = tree_id55(&n.id);
	pthread_mutex_lock(&t->lock);
	struct bench_dir **slot = &t->bench[key & 255], *b;
	for (b = *slot; b && b->key != key; b = b->next)
		;
	if (!b && (b = calloc(1, sizeof(*b)))) {
		b->key = key;
		b->depth = depth;
		memcpy(b->comp, comp, sizeof(b->comp));
		b->next = *slot;
		*slot = b;
	}
	pthread_mutex_unlock(&t->lock);
	if (!b)
		return -ENOMEM;
	*ret = n;
	return 0;
}

int tree_bench_comps(struct kx_tree *t, const struct kx_node *n, char comp[3][KX_NAME_MAX])
{
	uint64_t key = tree_id55(&n->id);
	int r = -ESTALE;
	pthread_mutex_lock(&t->lock);
	for (struct bench_dir *b = t->bench[key & 255]; b; b = b->next)
		if (b->key == key) {
			memcpy(comp, b->comp, sizeof(b->comp));
			r = 0;
			break;
		}
	pthread_mutex_unlock(&t->lock);
	return r;
}

/* ---- content cache ---------------------------------------------------------------------------- */

static void chash_remove(struct kx_tree *t, struct centry *e)
{
	struct centry **p = &t->chash[e->ino % CBUCKETS];
	while (*p && *p != e)
		p = &(*p)->hnext;
	if (*p)
		*p = e->hnext;
}

void tree_cache_drop(struct kx_tree *t, struct centry *e)
{
	kx_list_unlink(&t->clru, &e->lru);
	chash_remove(t, e);
	t->cbytes -= e->c.len + sizeof(*e);
	e->cached = false;
	if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0)
		centry_free(e);
}

void kx_content_put(const struct kx_content *c)
{
	if (!c)
		return;
	struct centry *e = kx_entry_of(c, struct centry, c);
	/* atomic: the cache's own reference is dropped under the tree lock, readers' without it */
	if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0)
		centry_free(e);
}

const struct kx_content *tree_cache_get(struct kx_tree *t, uint64_t ino, int64_t stamp)
{
	pthread_mutex_lock(&t->lock);
	struct centry *e = t->chash[ino % CBUCKETS];
	while (e && e->ino != ino)
		e = e->hnext;
	if (e && e->stamp != stamp) {
		tree_cache_drop(t, e);
		e = NULL;
	}
	if (e) {
		__atomic_add_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
		kx_list_touch(&t->clru, &e->lru);
		t->stats.content_hits++;
	} else {
		t->stats.content_misses++;
	}
	pthread_mutex_unlock(&t->lock);
	return e ? &e->c : NULL;
}

/*
 * The SHA-256 of content c, hashed once per cache entry: a run's files are each in two SHA256SUMS
 * (the run's and its group's), and the run's SHA256SUMS in its group's. The first thread to hash
 * an entry keeps the digest; one that hashes it meanwhile only uses its own.
 */
enum { SHA_UNKNOWN, SHA_KNOWN, SHA_STORING };

static void content_sha256(const struct kx_content *c, uint8_t out[KX_DIGEST_LEN])
{
	struct centry *e = kx_entry_of(c, struct centry, c);
	if (__atomic_load_n(&e->sha_state, __ATOMIC_ACQUIRE) == SHA_KNOWN) {
		memcpy(out, e->sha, KX_DIGEST_LEN);
		return;
	}
	kx_sha256(c->data, c->len, out);
	uint8_t unknown = SHA_UNKNOWN;
	if (__atomic_compare_exchange_n(&e->sha_state, &unknown, SHA_STORING, false, __ATOMIC_ACQUIRE,
					__ATOMIC_RELAXED)) {
		memcpy(e->sha, out, KX_DIGEST_LEN);
		__atomic_store_n(&e->sha_state, SHA_KNOWN, __ATOMIC_RELEASE);
	}
}

/* A SHA256SUMS line for content c, named name. */
int tree_sums_line(struct kx_buf *out, const char *name, const struct kx_content *c)
{
	uint8_t d[KX_DIGEST_LEN];
	content_sha256(c, d);
	return kx_render_sha256sums_line(out, name, d);
}

/* Files this large are taken from the renderer's buffer rather than copied: index.tsv at
 * 100,000 runs is 33 MB, and a copy would hold it twice at the peak. */
#define CONTENT_TAKE_BYTES (64u << 10)

/* A new entry of buf's bytes, copied or taken; returns it with one reference for the caller. */
const struct kx_content *tree_cache_put(struct kx_tree *t, uint64_t ino, int64_t stamp, struct kx_buf *buf)
{
	size_t len = buf->len;
	bool take = len >= CONTENT_TAKE_BYTES;
	struct centry *e = malloc(sizeof(*e) + (take ? 0 : len + 1));
	if (!e)
		return NULL;
	memset(e, 0, sizeof(*e));
	if (take) {
		/* a kx_buf always has a byte to spare after len; shrinking to it moves no bytes (glibc
		 * remaps a large block), so a large file is never held twice */
		char *p = realloc(buf->ptr, len + 1);
		p = p ? p : buf->ptr;
		p[len] = '\0';
		e->c.data = p;
		buf->ptr = NULL;
		buf->len = buf->alloc = 0;
	} else {
		if (len)
			memcpy(e->data, buf->ptr, len);
		e->data[len] = '\0';
		e->c.data = e->data;
	}
	e->c.len = len;
	e->ino = ino;
	e->stamp = stamp;
	e->refs = 1;
	pthread_mutex_lock(&t->lock);
	tree_size_put_locked(t, ino, stamp, len);
	if (len > t->limit / 4) {
		pthread_mutex_unlock(&t->lock);
		return &e->c; /* too big to keep: the caller's reference is the only one */
	}
	struct centry *o = t->chash[ino % CBUCKETS];
	while (o && o->ino != ino)
		o = o->hnext;
	if (o)
		tree_cache_drop(t, o);
	__atomic_add_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
	e->cached = true;
	e->hnext = t->chash[ino % CBUCKETS];
	t->chash[ino % CBUCKETS] = e;
	kx_list_push(&t->clru, &e->lru);
	t->cbytes += len + sizeof(*e);
	while (t->cbytes > t->limit && t->clru.tail && t->clru.tail != &e->lru)
		tree_cache_drop(t, kx_entry_of(t->clru.tail, struct centry, lru));
	const struct kx_content *idle[TOP__COUNT] = { NULL };
	t->puts++;
	for (int i = 0; i < TOP__COUNT; i++)
		if (t->top[i].c && t->puts - t->top[i].used > TOP_IDLE_PUTS) {
			idle[i] = t->top[i].c;
			t->top[i] = (struct top_slot){ 0 };
		}
	pthread_mutex_unlock(&t->lock);
	for (int i = 0; i < TOP__COUNT; i++)
		kx_content_put(idle[i]);
	return &e->c;
}

/* ---- the root's files made of every group ----------------------------------------------------- */

const struct kx_content *tree_top_get(struct kx_tree *t, int slot, int64_t stamp)
{
	const struct kx_content *c = NULL;
	pthread_mutex_lock(&t->lock);
	if (t->top[slot].c && t->top[slot].stamp == stamp) {
		c = t->top[slot].c;
		t->top[slot].used = t->puts;
		t->top[slot].read = ++t->top_reads;
		__atomic_add_fetch(&kx_entry_of(c, struct centry, c)->refs, 1, __ATOMIC_ACQ_REL);
	}
	pthread_mutex_unlock(&t->lock);
	return c;
}

void tree_top_drop(struct kx_tree *t, int slot)
{
	pthread_mutex_lock(&t->lock);
	const struct kx_content *old = t->top[slot].c;
	t->top[slot] = (struct top_slot){ 0 };
	pthread_mutex_unlock(&t->lock);
	kx_content_put(old);
}

uint64_t tree_top_mark(struct kx_tree *t)
{
	pthread_mutex_lock(&t->lock);
	uint64_t mark = ++t->top_reads;
	pthread_mutex_unlock(&t->lock);
	return mark;
}

void tree_top_keep(struct kx_tree *t, int slot, int64_t stamp, const struct kx_content *c, uint64_t mark)
{
	const struct kx_content *old[TOP__COUNT + 1] = { NULL };
	__atomic_add_fetch(&kx_entry_of(c, struct centry, c)->refs, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_lock(&t->lock);
	if (!t->top[slot].c || t->top[slot].stamp <= stamp) {
		old[TOP__COUNT] = t->top[slot].c;
		t->top[slot] = (struct top_slot){ .stamp = stamp, .c = c, .used = t->puts, .read = ++t->top_reads };
	} else {
		old[TOP__COUNT] = c; /* an older view's, built late: the newer one stays */
	}
	size_t bytes = 0;
	for (int i = 0; i < TOP__COUNT; i++)
		bytes += t->top[i].c ? t->top[i].c->len : 0;
	for (int i = 0; i < TOP__COUNT && bytes > TOP_KEEP_BYTES; i++)
		if (i != slot && t->top[i].c && t->top[i].read < mark) {
			old[i] = t->top[i].c;
			t->top[i] = (struct top_slot){ 0 };
		}
	pthread_mutex_unlock(&t->lock);
	for (int i = 0; i <= TOP__COUNT; i++)
		kx_content_put(old[i]);
}

/* ---- parsed documents ------------------------------------------------------------------------- */

/*
 * Parsed documents by digest, the most recently used few hundred: a run's own document is read for
 * each of its files that is rendered (one parse for a whole run directory), and the protocol,
 * environment, workload and implementation documents are shared by many runs (one parse for all).
 * Documents are content-addressed, so an entry is valid in every view. Read-only once built.
 */
#define PDOCS_MAX 256


static void pdoc_free(struct pdoc *p)
{
	if (!p)
		return;
	kx_arena_free(p->arena);
	free(p);
}

static void pdocs_free_all(struct kx_tree *t)
{
	for (struct kx_link *l = t->plru.head, *n; l; l = n) {
		n = l->next;
		pdoc_free(kx_entry_of(l, struct pdoc, lru));
	}
}

void tree_pdoc_put(struct pdoc *p)
{
	if (p && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0)
		pdoc_free(p);
}

static struct pdoc **phash_slot(struct kx_tree *t, const struct kx_digest *d)
{
	return &t->phash[(d->b[0] | d->b[1] << 8) % PBUCKETS];
}

/*
 * The parsed document d, or NULL when it is not stored in v (or does not parse, which verify
 * reports); `named_by`, when not NULL, is a run of v that names d. A document read in a newer
 * view answers an older one only if it was stored then: a late document must not appear in the
 * old version of a file its arrival changed.
 */
struct pdoc *tree_pdoc_get(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d,
		      const struct kx_digest *named_by)
{
	uint64_t gen = v ? kx_view_generation(v) : UINT64_MAX;
	pthread_mutex_lock(&t->lock);
	for (struct pdoc *p = *phash_slot(t, d); p; p = p->hnext)
		if (kx_digest_equal(&p->d, d)) {
			__atomic_add_fetch(&p->refs, 1, __ATOMIC_ACQ_REL);
			kx_list_touch(&t->plru, &p->lru);
			bool newer = p->generation > gen;
			pthread_mutex_unlock(&t->lock);
			if (newer && !tree_doc_in(t, v, d, named_by)) {
				tree_pdoc_put(p);
				return NULL;
			}
			if (newer) {
				pthread_mutex_lock(&t->lock);
				if (p->generation > gen)
					p->generation = gen; /* documents are never removed: stored from then on */
				pthread_mutex_unlock(&t->lock);
			}
			return p;
		}
	pthread_mutex_unlock(&t->lock);

	struct kx_buf b = { 0 };
	struct pdoc *p = NULL;
	struct kx_json_error e;
	if (tree_get_doc(t, v, d, &b) < 0 || !(p = calloc(1, sizeof(*p))) || !(p->arena = kx_arena_new()) ||
	    kx_json_parse(p->arena, b.ptr, b.len, 0, &p->json, NULL, &e) < 0) {
		kx_buf_release(&b);
		pdoc_free(p);
		return NULL;
	}
	kx_buf_release(&b);
	p->d = *d;
	p->generation = gen;
	p->refs = 2; /* the caller's and the cache's */
	struct pdoc *evict = NULL;
	pthread_mutex_lock(&t->lock);
	kx_list_push(&t->plru, &p->lru);
	p->hnext = *phash_slot(t, d);
	*phash_slot(t, d) = p;
	if (++t->npdocs > PDOCS_MAX) {
		struct pdoc *o = kx_entry_of(t->plru.tail, struct pdoc, lru), **q = phash_slot(t, &o->d);
		kx_list_unlink(&t->plru, &o->lru);
		while (*q && *q != o)
			q = &(*q)->hnext;
		if (*q)
			*q = o->hnext;
		t->npdocs--;
		if (__atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL) == 0)
			evict = o;
	}
	pthread_mutex_unlock(&t->lock);
	pdoc_free(evict);
	return p;
}

