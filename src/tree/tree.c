// SPDX-License-Identifier: MIT
/*
 * The tree of SPEC §3 over the store (see include/kx/tree.h for the node and inode scheme).
 *
 * Everything is computed from the store on demand: listings by prefix scans, files by rendering
 * (src/render). Two byte-bounded caches make repeated access cheap: group listings (a group's
 * runs in rank order with their directory names) and rendered content, both keyed so that a stale
 * entry is recognised rather than served — by the mtime of the group's gpu directory, which every
 * ingest below it bumps. Smaller caches, each a fixed fraction of the bound, spare the store the
 * reads one file operation repeats (sizes, inode decoding, run and group records, groups' stamps,
 * document existence, parsed documents); see "caches" below for what keeps each one valid. A FUSE
 * traversal of 100,000 runs (bench/read) is what they are tuned on: it renders each run once, not
 * once per path and file.
 */
#include "kx/tree.h"

#include "kx/list.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BITS55 KX_INO_ID_MASK

/* ---- inode numbers ---------------------------------------------------------------------------- */

static uint64_t id55(const struct kx_digest *d)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | d->b[i];
	return v >> 9;
}

uint64_t kx_tree_ino(const struct kx_node *n)
{
	if (n->type == KX_NODE_ROOT)
		return 1;
	uint64_t ino = kx_ino_of(n->type == KX_NODE_DOC_FILE ? KX_NODE_DOC : n->type, n->file);
	switch (n->type) {
	case KX_NODE_README:
	case KX_NODE_BENCHMARKS:
	case KX_NODE_RUNS:
	case KX_NODE_DIGESTS:
	case KX_NODE_DIGESTS_SHA:
		return ino;
	default:
		return ino | id55(&n->id);
	}
}

bool kx_tree_ino_linked(uint64_t ino)
{
	return kx_ino_type(ino) == KX_NODE_DOC && kx_ino_file(ino) != 0; /* KX_NODE_DOC_FILE's */
}

/* The node type and file an inode number carries (its top 9 bits; the rest is the digest's 55). */
static void ino_kind(uint64_t ino, struct kx_node *n)
{
	n->type = (uint8_t)kx_ino_type(ino);
	n->file = (uint8_t)kx_ino_file(ino);
}

static bool ino_in_runs(uint64_t ino)
{
	return kx_ino_type(ino) == KX_NODE_RUNS_RUN || kx_ino_type(ino) == KX_NODE_RUNS_FILE;
}

bool kx_tree_ino_runs_name(uint64_t ino, char name[KX_SHORTID_LEN + 1])
{
	if (!ino_in_runs(ino))
		return false;
	uint64_t bits = (ino & BITS55) >> (55 - 4 * KX_SHORTID_LEN);
	for (int i = KX_SHORTID_LEN - 1; i >= 0; i--, bits >>= 4)
		name[i] = "0123456789abcdef"[bits & 15];
	name[KX_SHORTID_LEN] = '\0';
	return true;
}

bool kx_tree_ino_of_run(uint64_t ino, const struct kx_node *run, struct kx_node *ret)
{
	if (!ino_in_runs(ino) || run->type != KX_NODE_RUNS_RUN)
		return false;
	struct kx_node n = *run;
	ino_kind(ino, &n);
	if (kx_tree_ino(&n) != ino)
		return false;
	*ret = n;
	return true;
}

bool kx_node_is_dir(const struct kx_node *n)
{
	switch (n->type) {
	case KX_NODE_ROOT:
	case KX_NODE_BENCHMARKS:
	case KX_NODE_RUNS:
	case KX_NODE_DIGESTS:
	case KX_NODE_DIGESTS_SHA:
	case KX_NODE_BENCH:
	case KX_NODE_GROUP:
	case KX_NODE_RUN:
	case KX_NODE_RUNS_RUN:
		return true;
	default:
		return false;
	}
}

/* ---- caches ----------------------------------------------------------------------------------- */

struct bench_dir {
	uint64_t key;
	uint8_t depth;
	char comp[3][KX_NAME_MAX];
	struct bench_dir *next;
};

/* A group as listed: its runs in rank order with their directory names. Reference-counted. */
struct gctx {
	struct kx_digest key;
	int64_t stamp;
	struct kx_group_rec group;
	struct kx_run_rec *runs;
	char (*dirnames)[KX_NAME_MAX + 32];
	const char **dirptrs;
	uint32_t *by_digest; /* indexes of runs sorted by digest */
	size_t len;
	uint32_t ranked;
	char workload_dir[KX_NAME_MAX + 16];
	char path[5 * KX_NAME_MAX];
	struct pdoc *wdoc;      /* the workload document, shared (parsed documents, below) */
	struct kx_json *workload_doc;
	size_t bytes;
	int refs;
	struct kx_link lru;       /* kx_tree.glru */
	struct gctx *hnext;       /* hash chain (kx_tree.ghash) */
};

struct centry {
	uint64_t ino;
	int64_t stamp;
	struct kx_content c;
	int refs; /* 1 for the cache's own reference while cached */
	bool cached;
	uint8_t sha_state;             /* SHA_* (atomic): whether sha holds the bytes' SHA-256 */
	uint8_t sha[KX_DIGEST_LEN];
	struct kx_link lru; /* kx_tree.clru */
	struct centry *hnext;
	char data[]; /* the bytes, in the same allocation: what is counted is what is used */
};

struct pdoc {
	struct kx_digest d;
	uint64_t generation; /* of the view it was read in (UINT64_MAX: none) */
	struct kx_arena *arena;
	struct kx_json *json;
	int refs; /* one for the cache while cached; atomic (dropped without the tree lock) */
	struct kx_link lru; /* kx_tree.plru */
	struct pdoc *hnext;
};

#define CBUCKETS 4096
#define GBUCKETS 1024
#define PBUCKETS 256

struct kx_tree {
	struct kx_store *s;
	size_t limit;
	pthread_mutex_t lock;
	struct bench_dir *bench[256];
	struct kx_list glru; /* group listings, most recently used first */
	struct gctx *ghash[GBUCKETS];
	size_t gbytes;
	struct centry *chash[CBUCKETS];
	struct kx_list clru; /* rendered content, most recently used first */
	size_t cbytes;
	struct size_slot *sizes; /* direct-mapped, nsizes a power of two */
	size_t nsizes;
	struct rsize_slot *rsizes; /* sets of RSIZE_WAYS, one slot per run */
	size_t nrsets;
	struct node_slot *nodes; /* likewise */
	size_t nnodes;
	struct run_slot *runs;   /* likewise */
	size_t nruns;
	struct group_slot *groups; /* likewise */
	size_t ngroups;
	struct gstamp_slot *gstamps; /* likewise */
	size_t ngstamps;
	struct doc_slot *docs;     /* likewise */
	size_t ndocs;
	struct kx_list plru; /* parsed documents, most recently used first */
	struct pdoc *phash[PBUCKETS];
	size_t npdocs;
	pthread_mutex_t uses_lock;  /* the table below; held while it is built */
	struct doc_uses *uses;      /* how many runs name each document (doc_use) */
	struct kx_tree_stats stats;
};

/*
 * Two direct-mapped caches beside the content cache, each a fixed fraction of its bound: file
 * sizes by (content key, stamp), so getattr of a file whose bytes were evicted does not render it
 * again (after a read, the kernel asks for attributes once more) — a group's SHA256SUMS above all,
 * whose size takes every file of every run of the group: a quarter of the bound (65,536 slots
 * with the default 8 MiB; with a 32nd, a group listed again after the kernel had forgotten it —
 * memory pressure, proactive reclaim — was rendered whole again, and `ls -lR` of 20,000 runs
 * listed again cost as much as the first time); and decoded nodes by inode number, which never
 * change meaning (inode numbers are never reused), so an operation on a known inode costs no
 * prefix seek in the store.
 */
struct size_slot {
	uint64_t key;
	int64_t stamp;
	uint64_t size;
};

struct node_slot {
	uint64_t ino;
	struct kx_node n;
};

/*
 * The sizes of a run's files together, one slot per run (the files of the rank directory and of
 * runs/ share them): a listing with attributes of every run directory — ls -lR, rsync — then
 * renders each run once, not once per path, in 40 bytes per run. A run's slot is one of a set of
 * RSIZE_WAYS, most recently used first: `ls -lR` lists every run under benchmarks/ before any
 * under runs/, and a direct-mapped table lost a third or more of 100,000 runs in between (each
 * rendered again: a quarter of the daemon's time). A size is kept in 16 bits; a larger file's
 * goes to the sizes table.
 */
#define RSIZE_WAYS 4
#define RSIZE_UNKNOWN UINT16_MAX

struct rsize_slot {
	uint64_t id;        /* the run's 55 inode bits, with bit 63 set when used */
	int64_t rank_stamp; /* the stamp of the rank-dependent sizes */
	uint16_t size[KX_RF__COUNT];
};

/*
 * And run records by digest: a record never changes once stored (ranks live in the group index),
 * and one file operation reads its run's record several times (stamp, lookup, attributes, render).
 * An entry serves a view only if the run existed in it (its generation is not newer).
 */
struct pdoc;
static void pdocs_free_all(struct kx_tree *t);

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
	uint32_t runs; /* 0: a free slot */
	int64_t first_ns;
};

struct doc_uses {
	uint64_t generation; /* of the view it counts */
	size_t cap, len;     /* cap a power of two */
	struct doc_use *v;
};

struct run_slot {
	bool used;
	struct kx_run_rec rec;
};

/*
 * And group records with their stamp (the gpu directory's mtime), by comparison key and store
 * generation: both change with every run added to the group, so an entry serves exactly the
 * views of its generation — which is every view until the store changes.
 */
struct group_slot {
	uint64_t generation;
	bool used;
	int64_t stamp;
	struct kx_group_rec rec;
};

/*
 * And groups' stamps alone, by the same keys and generations: all that a run's rank-dependent
 * files (summary.txt, SHA256SUMS) need of their group, for their inode numbers (the version) and
 * mtimes — for each run a walk of runs/ meets, in digest order, from thousands of groups where the
 * record slots (about 1 KiB each) keep 128 with the default 8 MiB. 48 bytes each, an eighth of the
 * bound: 16,384 slots, for the 9,192 groups of 100,000 synthetic runs. A cold `find` of those
 * reads the store 150,000 times less and took 10% less time (docs/performance.md).
 */
struct gstamp_slot {
	uint64_t generation; /* 0: unused */
	struct kx_digest key;
	int64_t stamp;
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
static size_t slot_of(uint64_t key, size_t n)
{
	return (size_t)mix(key) & (n - 1);
}

static bool rank_dependent(int f);

/*
 * The sizes slot of the run a key (a run file's) belongs to, moved to the front of its set, and
 * the file's index: NULL for other keys, and when the run has no slot — unless `take`, which
 * hands it the set's least recently used one, emptied. Under t->lock.
 */
static struct rsize_slot *rsize_slot(struct kx_tree *t, uint64_t key, int *ret_file, bool take)
{
	if (kx_ino_type(key) != KX_NODE_RUN_FILE || (*ret_file = (int)kx_ino_file(key)) >= KX_RF__COUNT)
		return NULL;
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

static bool size_get(struct kx_tree *t, uint64_t key, int64_t stamp, uint64_t *ret)
{
	int f;
	pthread_mutex_lock(&t->lock);
	const struct rsize_slot *r = rsize_slot(t, key, &f, false);
	bool hit = r && r->size[f] != RSIZE_UNKNOWN && (!rank_dependent(f) || r->rank_stamp == stamp) &&
		   (f != KX_RF_MANIFEST || stamp == 0);
	if (hit) {
		*ret = r->size[f];
	} else { /* any other file's, or a run's file too large for its slot */
		const struct size_slot *x = &t->sizes[slot_of(key, t->nsizes)];
		hit = x->key == key && key && x->stamp == stamp;
		if (hit)
			*ret = x->size;
	}
	pthread_mutex_unlock(&t->lock);
	return hit;
}

/* under t->lock */
static void size_put_locked(struct kx_tree *t, uint64_t key, int64_t stamp, uint64_t size)
{
	int f;
	struct rsize_slot *r = size < RSIZE_UNKNOWN ? rsize_slot(t, key, &f, true) : NULL;
	if (r && f == KX_RF_MANIFEST && stamp != 0)
		r = NULL; /* a version still missing a document: by (key, stamp) like any other file */
	if (r) {
		if (rank_dependent(f) && r->rank_stamp != stamp) {
			r->rank_stamp = stamp;
			r->size[KX_RF_SUMMARY] = r->size[KX_RF_SHA256SUMS] = RSIZE_UNKNOWN;
		}
		r->size[f] = (uint16_t)size;
		return;
	}
	struct size_slot *x = &t->sizes[slot_of(key, t->nsizes)];
	x->key = key;
	x->stamp = stamp;
	x->size = size;
}

static bool node_get(struct kx_tree *t, uint64_t ino, struct kx_node *ret)
{
	pthread_mutex_lock(&t->lock);
	const struct node_slot *x = &t->nodes[slot_of(ino, t->nnodes)];
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
	return slot_of(key, t->nruns);
}

/* Keep a run record read from the store (a run never changes once stored). */
static void run_put(struct kx_tree *t, const struct kx_run_rec *rec)
{
	size_t i = run_slot_of(t, &rec->run);
	pthread_mutex_lock(&t->lock);
	t->runs[i].used = true;
	t->runs[i].rec = *rec;
	pthread_mutex_unlock(&t->lock);
}

static int get_run(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, struct kx_run_rec *ret)
{
	size_t i = run_slot_of(t, d);
	pthread_mutex_lock(&t->lock);
	const struct run_slot *x = &t->runs[i];
	bool hit = x->used && kx_digest_equal(&x->rec.run, d) && (!v || x->rec.generation <= kx_view_generation(v));
	if (hit)
		*ret = x->rec;
	pthread_mutex_unlock(&t->lock);
	if (hit)
		return 0;
	int r = kx_store_get_run(t->s, v, d, ret);
	if (r < 0)
		return r;
	run_put(t, ret);
	return 0;
}

/* Every document the tree reads, counted: a document is one store value, read whole however
 * little of it is wanted, so what a change costs is visible in kx_tree_stats. */
static int get_doc(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, struct kx_buf *out)
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
static bool doc_in(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d,
		   const struct kx_digest *named_by)
{
	uint64_t key, gen = v ? kx_view_generation(v) : UINT64_MAX;
	memcpy(&key, d->b, sizeof(key));
	struct doc_slot *x = &t->docs[slot_of(key, t->ndocs)];
	pthread_mutex_lock(&t->lock);
	bool hit = x->generation && kx_digest_equal(&x->d, d) && x->generation <= gen;
	pthread_mutex_unlock(&t->lock);
	if (hit)
		return true;
	struct wait_find w = { named_by, false };
	bool known = named_by && kx_store_each_waiting(t->s, v, d, wait_step, &w) >= 0 && !w.found;
	if (!known && get_doc(t, v, d, NULL) < 0)
		return false;
	if (v) {
		pthread_mutex_lock(&t->lock);
		x->generation = gen ? gen : 1;
		x->d = *d;
		pthread_mutex_unlock(&t->lock);
	}
	return true;
}

static bool doc_exists(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d)
{
	return doc_in(t, v, d, NULL);
}

/* ---- how many runs name a document (struct doc_uses) ------------------------------------------ */

static bool doc_role(int f)
{
	return f == KX_RF_PROTOCOL || f == KX_RF_ENVIRONMENT || f == KX_RF_WORKLOAD || f == KX_RF_IMPLEMENTATION;
}

/* The document a run's file f is (KX_RF_RUN … KX_RF_IMPLEMENTATION). */
static const struct kx_digest *run_doc(const struct kx_run_rec *x, int f)
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
static struct kx_node run_file_node(uint8_t dir_type, const struct kx_run_rec *x, int f)
{
	if (doc_role(f))
		return (struct kx_node){ .type = KX_NODE_DOC_FILE, .file = (uint8_t)f, .id = *run_doc(x, f) };
	return (struct kx_node){ .type = dir_type == KX_NODE_RUNS_RUN ? KX_NODE_RUNS_FILE : KX_NODE_RUN_FILE,
				 .file = (uint8_t)f, .id = x->run };
}

/* Whether run x has file f: all of them but workload.json and implementation.json, which need
 * their document stored (a published record may name it by digest only). */
static bool run_has(struct kx_tree *t, struct kx_view *v, const struct kx_run_rec *x, int f)
{
	return (f != KX_RF_WORKLOAD && f != KX_RF_IMPLEMENTATION) || doc_in(t, v, run_doc(x, f), &x->run);
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

static int uses_add(struct doc_uses *u, const struct kx_digest *d, int64_t observed_ns)
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
	return 0;
}

static int uses_add_run(void *ctx, const struct kx_run_rec *x)
{
	int r = 0;
	for (int f = 0; f < KX_RF__COUNT && r == 0; f++)
		if (doc_role(f))
			r = uses_add(ctx, run_doc(x, f), x->observed_ns);
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
static int doc_use(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, uint32_t *ret_runs,
		   int64_t *ret_first_ns)
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
	pthread_mutex_unlock(&t->uses_lock);
	return *ret_runs ? 0 : -ENOENT;
}

/*
 * How many runs of view v name document d, from the table alone (built when missing): -ESTALE
 * when the table counts another view than v.
 */
static int uses_exact(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, uint32_t *ret_runs)
{
	uint32_t runs;
	int64_t first;
	int r = doc_use(t, v, d, &runs, &first);
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
static int uses_changed(struct kx_tree *t, struct kx_view *before, struct kx_view *after,
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

static void node_put(struct kx_tree *t, uint64_t ino, const struct kx_node *n)
{
	pthread_mutex_lock(&t->lock);
	struct node_slot *x = &t->nodes[slot_of(ino, t->nnodes)];
	x->ino = ino;
	x->n = *n;
	pthread_mutex_unlock(&t->lock);
}

struct kx_tree *kx_tree_new(struct kx_store *s, size_t cache_bytes)
{
	struct kx_tree *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->s = s;
	t->limit = cache_bytes ? cache_bytes : 32u << 20;
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
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	pthread_mutex_init(&t->uses_lock, NULL);
	return t;
}

static void pdoc_put(struct pdoc *p);

static void gctx_free(struct gctx *g)
{
	if (!g)
		return;
	free(g->runs);
	free(g->dirnames);
	free(g->dirptrs);
	free(g->by_digest);
	pdoc_put(g->wdoc);
	free(g);
}

static void centry_free(struct centry *e)
{
	free(e);
}

void kx_tree_free(struct kx_tree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < KX_ARRAY_SIZE(t->bench); i++)
		for (struct bench_dir *b = t->bench[i], *n; b; b = n) {
			n = b->next;
			free(b);
		}
	for (struct kx_link *l = t->glru.head, *n; l; l = n) {
		n = l->next;
		gctx_free(kx_entry_of(l, struct gctx, lru));
	}
	for (struct kx_link *l = t->clru.head, *n; l; l = n) {
		n = l->next;
		centry_free(kx_entry_of(l, struct centry, lru));
	}
	pdocs_free_all(t);
	uses_free(t->uses);
	pthread_mutex_destroy(&t->uses_lock);
	pthread_mutex_destroy(&t->lock);
	free(t->sizes);
	free(t->rsizes);
	free(t->nodes);
	free(t->runs);
	free(t->groups);
	free(t->gstamps);
	free(t->docs);
	free(t);
}

struct kx_store *kx_tree_store(struct kx_tree *t)
{
	return t->s;
}

void kx_tree_stats(struct kx_tree *t, struct kx_tree_stats *ret)
{
	pthread_mutex_lock(&t->lock);
	*ret = t->stats;
	ret->content_bytes = t->cbytes;
	ret->group_bytes = t->gbytes;
	pthread_mutex_unlock(&t->lock);
}

/* benchmark directories: path hash → components (a few thousand at most; never evicted) */
static void bench_id(uint8_t depth, char comp[3][KX_NAME_MAX], struct kx_digest *ret)
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

static int bench_node(struct kx_tree *t, uint8_t depth, char comp[3][KX_NAME_MAX], struct kx_node *ret)
{
	struct kx_node n = { .type = KX_NODE_BENCH, .depth = depth };
	bench_id(depth, comp, &n.id);
	uint64_t key = id55(&n.id);
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

static int bench_comps(struct kx_tree *t, const struct kx_node *n, char comp[3][KX_NAME_MAX])
{
	uint64_t key = id55(&n->id);
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

/* ---- group listings --------------------------------------------------------------------------- */

static int64_t gpu_stamp(struct kx_tree *t, struct kx_view *v, const struct kx_group_rec *g)
{
	char path[4 * KX_NAME_MAX + 16];
	snprintf(path, sizeof(path), "benchmarks/%s/%s/%s", g->kernel, g->pass, g->gpu);
	int64_t ns = 0;
	if (kx_store_dir_mtime(t->s, v, path, &ns) < 0)
		ns = g->changed_ns;
	return ns;
}

/* A group record and its stamp (gpu_stamp), through the generation-scoped cache. */
static int get_group(struct kx_tree *t, struct kx_view *v, const struct kx_digest *key, struct kx_group_rec *ret,
		     int64_t *ret_stamp)
{
	uint64_t k, gen = v ? kx_view_generation(v) : 0;
	memcpy(&k, key->b, sizeof(k));
	size_t i = slot_of(k, t->ngroups);
	bool hit = false;
	if (v) {
		pthread_mutex_lock(&t->lock);
		const struct group_slot *x = &t->groups[i];
		hit = x->used && x->generation == gen && kx_digest_equal(&x->rec.key, key);
		if (hit) {
			*ret = x->rec;
			if (ret_stamp)
				*ret_stamp = x->stamp;
		}
		pthread_mutex_unlock(&t->lock);
	}
	if (hit)
		return 0;
	int r = kx_store_get_group(t->s, v, key, ret);
	if (r < 0)
		return r;
	int64_t stamp = gpu_stamp(t, v, ret);
	if (ret_stamp)
		*ret_stamp = stamp;
	if (v) {
		pthread_mutex_lock(&t->lock);
		t->groups[i] = (struct group_slot){ .generation = gen, .used = true, .stamp = stamp, .rec = *ret };
		if (gen) /* a store with groups has one: every ingest is a generation */
			t->gstamps[slot_of(k, t->ngstamps)] =
				(struct gstamp_slot){ .generation = gen, .key = *key, .stamp = stamp };
		pthread_mutex_unlock(&t->lock);
	}
	return 0;
}

/* A group's stamp alone (get_group's), through the table of stamps before the records'. */
static int group_stamp(struct kx_tree *t, struct kx_view *v, const struct kx_digest *key, int64_t *ret)
{
	uint64_t k, gen = v ? kx_view_generation(v) : 0;
	memcpy(&k, key->b, sizeof(k));
	bool hit = false;
	if (gen) {
		pthread_mutex_lock(&t->lock);
		const struct gstamp_slot *x = &t->gstamps[slot_of(k, t->ngstamps)];
		if ((hit = x->generation == gen && kx_digest_equal(&x->key, key)))
			*ret = x->stamp;
		pthread_mutex_unlock(&t->lock);
	}
	struct kx_group_rec g;
	return hit ? 0 : get_group(t, v, key, &g, ret);
}

struct wl_scan {
	const struct kx_digest *want;
	char prev_base[KX_NAME_MAX];
	struct kx_digest prev_w, prev_g;
	bool prev_cut, have_prev, prev_shared;
	/* output for a callback that wants names */
	kx_dirent_fn fn;
	void *ctx;
	const char *match; /* lookup by name */
	struct kx_digest found;
	char name_out[KX_NAME_MAX + 16];
	int done;
};

/*
 * Walk the workload level, deciding each entry's directory name once its successor is known
 * (a shared base slug needs both neighbours). emit() is called for the previous entry.
 */
static int wl_emit(struct wl_scan *w, bool next_shares)
{
	char name[KX_NAME_MAX + 16];
	kx_rank_workload_dirname(w->prev_base, &w->prev_w, w->prev_cut, w->prev_shared || next_shares, name,
				 sizeof(name));
	if (w->want && kx_digest_equal(w->want, &w->prev_g)) {
		snprintf(w->name_out, sizeof(w->name_out), "%s", name);
		return 1;
	}
	if (w->match && strcmp(w->match, name) == 0) {
		w->found = w->prev_g;
		return 1;
	}
	if (w->fn) {
		struct kx_node n = { .type = KX_NODE_GROUP, .id = w->prev_g };
		return w->fn(w->ctx, name, &n);
	}
	return 0;
}

static int wl_step(void *ctx, const char *name, const struct kx_digest *workload,
		   const struct kx_digest *group, bool cut)
{
	struct wl_scan *w = ctx;
	bool shares = w->have_prev && strcmp(w->prev_base, name) == 0;
	if (w->have_prev) {
		int r = wl_emit(w, shares);
		if (r)
			return r;
	}
	w->prev_shared = shares;
	snprintf(w->prev_base, sizeof(w->prev_base), "%s", name);
	w->prev_w = *workload;
	w->prev_g = *group;
	w->prev_cut = cut;
	w->have_prev = true;
	return 0;
}

static int wl_walk(struct kx_tree *t, struct kx_view *v, const char *const comp[3], struct wl_scan *w)
{
	int r = kx_store_tree_list(t->s, v, comp, 3, wl_step, w);
	if (r == 0 && w->have_prev)
		r = wl_emit(w, false);
	return r;
}

static int digest_cmp_idx(const void *x, const void *y, void *arg)
{
	const struct kx_run_rec *runs = arg;
	return memcmp(runs[*(const uint32_t *)x].run.b, runs[*(const uint32_t *)y].run.b, 32);
}

struct collect {
	struct kx_tree *t;
	struct kx_run_rec *runs;
	size_t len, cap;
	uint32_t ranked;
};

static int collect_run(void *ctx, const struct kx_run_rec *run, bool ranked)
{
	struct collect *c = ctx;
	if (KX_GROW(c->runs, c->cap, c->len, 16) < 0)
		return -ENOMEM;
	c->runs[c->len++] = *run;
	c->ranked += ranked;
	run_put(c->t, run); /* its run directory, listed next, needs it again */
	return 0;
}

static struct pdoc *pdoc_get(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d,
			     const struct kx_digest *named_by);

static int gctx_build(struct kx_tree *t, struct kx_view *v, const struct kx_group_rec *g, int64_t stamp,
		      struct gctx **ret)
{
	struct gctx *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->key = g->key;
	x->group = *g;
	x->stamp = stamp;
	x->refs = 1;
	struct collect c = { t, NULL, 0, 0, 0 };
	int r = kx_store_group_runs(t->s, v, &g->key, collect_run, &c);
	x->runs = c.runs;
	x->len = c.len;
	x->ranked = c.ranked;
	if (r < 0)
		goto fail;
	x->dirnames = calloc(x->len ? x->len : 1, sizeof(*x->dirnames));
	x->dirptrs = calloc(x->len ? x->len : 1, sizeof(*x->dirptrs));
	x->by_digest = calloc(x->len ? x->len : 1, sizeof(*x->by_digest));
	if (!x->dirnames || !x->dirptrs || !x->by_digest) {
		r = -ENOMEM;
		goto fail;
	}
	int width = kx_rank_width(x->ranked);
	for (size_t i = 0; i < x->len; i++) {
		kx_rank_dirname(i < x->ranked ? (uint32_t)i + 1 : 0, width, &x->runs[i], x->dirnames[i],
				sizeof(x->dirnames[i]));
		x->dirptrs[i] = x->dirnames[i];
		x->by_digest[i] = (uint32_t)i;
	}
	qsort_r(x->by_digest, x->len, sizeof(*x->by_digest), digest_cmp_idx, x->runs);
	const char *comp[3] = { g->kernel, g->pass, g->gpu };
	struct wl_scan w = { .want = &g->key };
	r = wl_walk(t, v, comp, &w);
	if (r < 0)
		goto fail;
	snprintf(x->workload_dir, sizeof(x->workload_dir), "%s", w.name_out[0] ? w.name_out : g->workload_slug);
	snprintf(x->path, sizeof(x->path), "benchmarks/%s/%s/%s/%s", g->kernel, g->pass, g->gpu, x->workload_dir);
	if ((x->wdoc = pdoc_get(t, v, &g->workload, x->len ? &x->runs[0].run : NULL)))
		x->workload_doc = x->wdoc->json;
	x->bytes = sizeof(*x) + c.cap * sizeof(*x->runs) + x->len * (sizeof(*x->dirnames) + sizeof(char *) + 4);
	*ret = x;
	return 0;
fail:
	gctx_free(x);
	return r;
}

static void gctx_put(struct kx_tree *t, struct gctx *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&t->lock);
	bool dead = --g->refs == 0;
	pthread_mutex_unlock(&t->lock);
	if (dead)
		gctx_free(g);
}

/* The group listing, cached. The caller puts its reference with gctx_put. */
static struct gctx **ghash_slot(struct kx_tree *t, const struct kx_digest *key)
{
	return &t->ghash[(key->b[0] | key->b[1] << 8) % GBUCKETS];
}

/* Drop a listing from the cache (LRU, hash, byte count) and put the cache's reference. */
static void gcache_drop(struct kx_tree *t, struct gctx *g)
{
	kx_list_unlink(&t->glru, &g->lru);
	struct gctx **p = ghash_slot(t, &g->key);
	while (*p && *p != g)
		p = &(*p)->hnext;
	if (*p)
		*p = g->hnext;
	t->gbytes -= g->bytes;
	if (--g->refs == 0)
		gctx_free(g);
}

static int gctx_get(struct kx_tree *t, struct kx_view *v, const struct kx_digest *key, struct gctx **ret)
{
	struct kx_group_rec g;
	int64_t stamp;
	int r = get_group(t, v, key, &g, &stamp);
	if (r < 0)
		return r;
	pthread_mutex_lock(&t->lock);
	for (struct gctx *x = *ghash_slot(t, key); x; x = x->hnext) {
		if (!kx_digest_equal(&x->key, key))
			continue;
		if (x->stamp == stamp && x->group.ranked == g.ranked && x->group.unranked == g.unranked) {
			x->refs++;
			kx_list_touch(&t->glru, &x->lru);
			t->stats.group_hits++;
			pthread_mutex_unlock(&t->lock);
			*ret = x;
			return 0;
		}
		break;
	}
	t->stats.group_misses++;
	pthread_mutex_unlock(&t->lock);

	struct gctx *x;
	r = gctx_build(t, v, &g, stamp, &x);
	if (r < 0)
		return r;
	pthread_mutex_lock(&t->lock);
	/* replace any older listing of this group, then trim to the bound */
	for (struct gctx *o = *ghash_slot(t, key); o; o = o->hnext)
		if (kx_digest_equal(&o->key, key)) {
			gcache_drop(t, o);
			break;
		}
	x->refs++; /* the cache's reference */
	kx_list_push(&t->glru, &x->lru);
	x->hnext = *ghash_slot(t, key);
	*ghash_slot(t, key) = x;
	t->gbytes += x->bytes;
	while (t->gbytes > t->limit && t->glru.tail && t->glru.tail != &x->lru)
		gcache_drop(t, kx_entry_of(t->glru.tail, struct gctx, lru));
	pthread_mutex_unlock(&t->lock);
	*ret = x;
	return 0;
}

static int bsearch_cmp(const void *key, const void *elt, void *arg)
{
	const struct kx_run_rec *runs = arg;
	return memcmp(key, runs[*(const uint32_t *)elt].run.b, 32);
}

/* position of run in the listing, or -1 */
static ssize_t gctx_find(const struct gctx *g, const struct kx_digest *run)
{
	size_t lo = 0, hi = g->len;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = bsearch_cmp(run->b, &g->by_digest[mid], g->runs);
		if (c == 0)
			return g->by_digest[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
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

static void cache_drop(struct kx_tree *t, struct centry *e)
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

static const struct kx_content *cache_get(struct kx_tree *t, uint64_t ino, int64_t stamp)
{
	pthread_mutex_lock(&t->lock);
	struct centry *e = t->chash[ino % CBUCKETS];
	while (e && e->ino != ino)
		e = e->hnext;
	if (e && e->stamp != stamp) {
		cache_drop(t, e);
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
static int sums_line(struct kx_buf *out, const char *name, const struct kx_content *c)
{
	uint8_t d[KX_DIGEST_LEN];
	content_sha256(c, d);
	return kx_render_sha256sums_line(out, name, d);
}

/* Copy buf's bytes into a new entry; returns the content with one reference for the caller. */
static const struct kx_content *cache_put(struct kx_tree *t, uint64_t ino, int64_t stamp, const struct kx_buf *buf)
{
	size_t len = buf->len;
	struct centry *e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	memset(e, 0, sizeof(*e));
	if (len)
		memcpy(e->data, buf->ptr, len);
	e->data[len] = '\0';
	e->c.data = e->data;
	e->c.len = len;
	e->ino = ino;
	e->stamp = stamp;
	e->refs = 1;
	pthread_mutex_lock(&t->lock);
	size_put_locked(t, ino, stamp, len);
	if (len > t->limit / 4) {
		pthread_mutex_unlock(&t->lock);
		return &e->c; /* too big to keep: the caller's reference is the only one */
	}
	struct centry *o = t->chash[ino % CBUCKETS];
	while (o && o->ino != ino)
		o = o->hnext;
	if (o)
		cache_drop(t, o);
	__atomic_add_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
	e->cached = true;
	e->hnext = t->chash[ino % CBUCKETS];
	t->chash[ino % CBUCKETS] = e;
	kx_list_push(&t->clru, &e->lru);
	t->cbytes += len + sizeof(*e);
	while (t->cbytes > t->limit && t->clru.tail && t->clru.tail != &e->lru)
		cache_drop(t, kx_entry_of(t->clru.tail, struct centry, lru));
	pthread_mutex_unlock(&t->lock);
	return &e->c;
}

/* ---- run views -------------------------------------------------------------------------------- */

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

static void pdoc_put(struct pdoc *p)
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
static struct pdoc *pdoc_get(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d,
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
			if (newer && !doc_in(t, v, d, named_by)) {
				pdoc_put(p);
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
	if (get_doc(t, v, d, &b) < 0 || !(p = calloc(1, sizeof(*p))) || !(p->arena = kx_arena_new()) ||
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

struct runv {
	struct kx_run_view v;
	struct kx_run_rec run;
	struct gctx *g;
	struct pdoc *docs[KX_DOC__COUNT];
};

static void runv_release(struct kx_tree *t, struct runv *rv)
{
	gctx_put(t, rv->g);
	for (int d = 0; d < KX_DOC__COUNT; d++)
		pdoc_put(rv->docs[d]);
}

enum { RV_GROUP = 1, RV_DOCS = 2 };

/*
 * Load what rendering a run needs: RV_GROUP its group listing and position (rank, names — only
 * summary.txt, SHA256SUMS and the rank xattrs need them), RV_DOCS its parsed documents.
 */
static int runv_load_with(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, unsigned what,
			  struct runv *rv)
{
	memset(rv, 0, sizeof(*rv));
	int r = get_run(t, v, run, &rv->run);
	if (r < 0)
		return r;
	rv->v.run = &rv->run;
	if (what & RV_GROUP) {
		r = gctx_get(t, v, &rv->run.group, &rv->g);
		if (r < 0)
			return r == -ENOENT ? -EIO : r;
		ssize_t pos = gctx_find(rv->g, run);
		if (pos < 0) {
			runv_release(t, rv);
			return -EIO;
		}
		rv->v.group = &rv->g->group;
		rv->v.group_path = rv->g->path;
		rv->v.dirname = rv->g->dirnames[pos];
		rv->v.rank = (size_t)pos < rv->g->ranked ? (uint32_t)pos + 1 : 0;
		if (rv->g->ranked) {
			rv->v.best = &rv->g->runs[0];
			rv->v.best_dirname = rv->g->dirnames[0];
		}
	}
	if (!(what & RV_DOCS))
		return 0;
	const struct kx_digest *ds[KX_DOC__COUNT] = { &rv->run.run, &rv->run.protocol, &rv->run.environment,
						      &rv->run.workload, &rv->run.implementation };
	for (int d = 0; d < KX_DOC__COUNT; d++) {
		rv->docs[d] = pdoc_get(t, v, ds[d], &rv->run.run);
		rv->v.doc[d] = rv->docs[d] ? rv->docs[d]->json : NULL;
	}
	return 0;
}

static int runv_load(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, struct runv *rv)
{
	return runv_load_with(t, v, run, RV_GROUP | RV_DOCS, rv);
}

static void group_view(const struct gctx *g, struct kx_group_view *gv)
{
	gv->group = &g->group;
	gv->path = g->path;
	gv->runs = g->runs;
	gv->dirnames = g->dirptrs;
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
static int run_files_of(struct kx_tree *t, struct kx_view *v, uint8_t dir_type, const struct kx_run_rec *x,
			kx_dirent_fn fn, void *ctx)
{
	int r = 0;
	for (int f = 0; f < KX_RF__COUNT && r == 0; f++) {
		if (!run_has(t, v, x, f))
			continue;
		struct kx_node n = run_file_node(dir_type, x, f);
		r = fn(ctx, kx_run_file_name((enum kx_run_file)f), &n);
	}
	return r;
}

static int read_stamped(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t stamp,
			const struct kx_content **ret);

/*
 * SHA256SUMS, written or only sized by one walk, so that its size is its rendered length. Each
 * line is 64 hex digits, two spaces, the name and a newline, whatever it hashes
 * (kx_sha256sums_line_len): a listing that hands out sizes (`ls -l`, `grep -r`, rsync) renders and
 * hashes nothing for a SHA256SUMS. The bytes come from the content cache: a run's files are
 * rendered once whether its directory or its group's SHA256SUMS asks, and hashed once for both.
 */
struct sums {
	struct kx_tree *t;
	struct kx_view *v;
	struct kx_buf *out; /* NULL: the size only */
	uint64_t size;
	int64_t stamp;      /* the group's: that of its files and its runs' rank-dependent ones */
	const char *dir;    /* in a group's SHA256SUMS, the rank directory of the run's files; NULL in a run's */
};

static int sums_add(void *ctx, const char *name, const struct kx_node *n)
{
	struct sums *s = ctx;
	bool run_file = n->type == KX_NODE_RUN_FILE;
	if (run_file && n->file == KX_RF_SHA256SUMS && !s->dir)
		return 0; /* a run's SHA256SUMS does not list itself */
	s->size += kx_sha256sums_line_len((s->dir ? strlen(s->dir) + 1 : 0) + strlen(name));
	if (!s->out)
		return 0;
	char path[2 * KX_NAME_MAX];
	if (s->dir) {
		snprintf(path, sizeof(path), "%s/%s", s->dir, name);
		name = path;
	}
	bool stamped = n->type == KX_NODE_GROUP_FILE || (run_file && rank_dependent(n->file));
	int64_t stamp = stamped ? s->stamp : 0;
	const struct kx_content *c;
	int r = run_file && n->file == KX_RF_MANIFEST ? kx_tree_stamp(s->t, s->v, n, &stamp) : 0;
	if (r == 0)
		r = read_stamped(s->t, s->v, n, stamp, &c);
	if (r < 0)
		return r == -ENOENT ? -EIO : r; /* listed, so it must be there */
	r = sums_line(s->out, name, c);
	kx_content_put(c);
	return r;
}

/* Run x's SHA256SUMS (its group's stamp `stamp`) into out, or its size alone (out NULL; ret_size
 * NULL when only the bytes are wanted). */
static int run_sums(struct kx_tree *t, struct kx_view *v, const struct kx_run_rec *x, int64_t stamp,
		    struct kx_buf *out, uint64_t *ret_size)
{
	struct sums s = { .t = t, .v = v, .out = out, .stamp = stamp };
	int r = run_files_of(t, v, KX_NODE_RUN, x, sums_add, &s);
	if (ret_size)
		*ret_size = s.size;
	return r;
}

/* Group g's SHA256SUMS — its own files, then every file of every run, SHA256SUMS last — likewise. */
static int group_sums(struct kx_tree *t, struct kx_view *v, const struct gctx *g, struct kx_buf *out,
		      uint64_t *ret_size)
{
	struct sums s = { .t = t, .v = v, .out = out, .stamp = g->stamp };
	int r = 0;
	for (int f = 0; f < KX_GF_SHA256SUMS && r == 0; f++) {
		struct kx_node n = { .type = KX_NODE_GROUP_FILE, .file = (uint8_t)f, .id = g->key };
		r = sums_add(&s, kx_group_file_name((enum kx_group_file)f), &n);
	}
	for (size_t i = 0; i < g->len && r == 0; i++) {
		s.dir = g->dirnames[i];
		r = run_files_of(t, v, KX_NODE_RUN, &g->runs[i], sums_add, &s);
	}
	if (ret_size)
		*ret_size = s.size;
	return r;
}

static int render_group(struct kx_tree *t, struct kx_view *v, const struct gctx *g, enum kx_group_file f,
			struct kx_buf *out)
{
	if (f == KX_GF_SHA256SUMS)
		return group_sums(t, v, g, out, NULL);
	struct kx_group_view gv;
	group_view(g, &gv);
	return kx_render_group_file(&gv, f, out);
}

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

struct runs_walk {
	kx_dirent_fn fn;
	void *ctx;
	struct kx_digest prev;
	unsigned prev_common; /* shared with the one before prev */
	bool have;
};

static int runs_emit(struct runs_walk *w, unsigned next_common)
{
	unsigned need = (w->prev_common > next_common ? w->prev_common : next_common) + 1;
	char name[65];
	runs_name(&w->prev, need, name);
	struct kx_node n = { .type = KX_NODE_RUNS_RUN, .id = w->prev };
	return w->fn(w->ctx, name, &n);
}

static int runs_step(void *ctx, const struct kx_digest *d)
{
	struct runs_walk *w = ctx;
	unsigned c = w->have ? common_hex(&w->prev, d) : 0;
	if (w->have) {
		int r = runs_emit(w, c);
		if (r)
			return r;
	}
	w->prev = *d;
	w->prev_common = c;
	w->have = true;
	return 0;
}

/* The canonical /runs name of a run: 12 hex digits, more when another run shares them. */
static int runs_canonical(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, char *out)
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

/* ---- lookup ----------------------------------------------------------------------------------- */

static int first_hit(void *ctx, const char *name, const struct kx_digest *w, const struct kx_digest *g, bool cut)
{
	return 1;
}

static bool valid_component(const char *name)
{
	return *name && strlen(name) < KX_NAME_MAX && !strchr(name, '/');
}

int kx_tree_lookup(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir, const char *name,
		   struct kx_node *ret)
{
	struct kx_node n = { 0 };
	int r;
	switch (dir->type) {
	case KX_NODE_ROOT:
		if (strcmp(name, "README") == 0)
			n.type = KX_NODE_README;
		else if (strcmp(name, "benchmarks") == 0)
			n.type = KX_NODE_BENCHMARKS;
		else if (strcmp(name, "runs") == 0)
			n.type = KX_NODE_RUNS;
		else if (strcmp(name, "digests") == 0)
			n.type = KX_NODE_DIGESTS;
		else
			return -ENOENT;
		break;
	case KX_NODE_DIGESTS:
		if (strcmp(name, "sha256") != 0)
			return -ENOENT;
		n.type = KX_NODE_DIGESTS_SHA;
		break;
	case KX_NODE_BENCHMARKS:
	case KX_NODE_BENCH: {
		char comp[3][KX_NAME_MAX] = { { 0 } };
		uint8_t depth = dir->type == KX_NODE_BENCHMARKS ? 0 : dir->depth;
		if (depth && (r = bench_comps(t, dir, comp)) < 0)
			return r;
		if (!valid_component(name))
			return -ENOENT;
		if (depth == 3) {
			const char *c3[3] = { comp[0], comp[1], comp[2] };
			struct wl_scan w = { .match = name };
			r = wl_walk(t, v, c3, &w);
			if (r < 0)
				return r;
			if (r == 0)
				return -ENOENT;
			n.type = KX_NODE_GROUP;
			n.id = w.found;
			break;
		}
		snprintf(comp[depth], KX_NAME_MAX, "%s", name);
		const char *c[3] = { comp[0], comp[1], comp[2] };
		r = kx_store_tree_list(t->s, v, c, depth + 1u, first_hit, NULL);
		if (r < 0)
			return r;
		if (r == 0)
			return -ENOENT;
		return bench_node(t, depth + 1, comp, ret);
	}
	case KX_NODE_GROUP: {
		int f = kx_group_file_from_name(name);
		if (f >= 0) {
			n.type = KX_NODE_GROUP_FILE;
			n.file = (uint8_t)f;
			n.id = dir->id;
			break;
		}
		const char *dash = strrchr(name, '-');
		if (!dash || strlen(dash + 1) != KX_SHORTID_LEN)
			return -ENOENT;
		struct gctx *g;
		if ((r = gctx_get(t, v, &dir->id, &g)) < 0)
			return r;
		r = -ENOENT;
		for (size_t i = 0; i < g->len; i++)
			if (strcmp(g->dirnames[i], name) == 0) {
				n.type = KX_NODE_RUN;
				n.id = g->runs[i].run;
				r = 0;
				break;
			}
		gctx_put(t, g);
		if (r < 0)
			return r;
		break;
	}
	case KX_NODE_RUN:
	case KX_NODE_RUNS_RUN: {
		int f = kx_run_file_from_name(name);
		if (f < 0)
			return -ENOENT;
		struct kx_run_rec x;
		if ((r = get_run(t, v, &dir->id, &x)) < 0)
			return r;
		if (!run_has(t, v, &x, f))
			return -ENOENT;
		n = run_file_node(dir->type, &x, f);
		break;
	}
	case KX_NODE_RUNS: {
		size_t len = strlen(name);
		if (len < KX_SHORTID_LEN || len > KX_DIGEST_HEX || strspn(name, "0123456789abcdef") != len)
			return -ENOENT;
		struct kx_digest d;
		if ((r = kx_store_find_run_prefix(t->s, v, name, &d)) < 0)
			return r == -ENOTUNIQ ? -ENOENT : r;
		/* a unique 12-digit prefix is the canonical name by definition; longer ones are checked */
		char canon[65];
		if (len > KX_SHORTID_LEN && (r = runs_canonical(t, v, &d, canon)) < 0)
			return r;
		if (len > KX_SHORTID_LEN && strcmp(canon, name) != 0)
			return -ENOENT;
		n.type = KX_NODE_RUNS_RUN;
		n.id = d;
		break;
	}
	case KX_NODE_DIGESTS_SHA: {
		size_t len = strlen(name);
		if (len != KX_DIGEST_HEX + 5 || strcmp(name + KX_DIGEST_HEX, ".json") != 0 ||
		    strspn(name, "0123456789abcdef") != KX_DIGEST_HEX)
			return -ENOENT;
		char s[KX_DIGEST_STR_MAX];
		snprintf(s, sizeof(s), "sha256:%.64s", name);
		if (kx_digest_parse(s, strlen(s), &n.id) < 0 || !doc_exists(t, v, &n.id))
			return -ENOENT;
		n.type = KX_NODE_DOC;
		break;
	}
	default:
		return kx_node_is_dir(dir) ? -ENOENT : -ENOTDIR;
	}
	*ret = n;
	return 0;
}

int kx_tree_resolve(struct kx_tree *t, struct kx_view *v, const char *path, struct kx_node *ret)
{
	struct kx_node n = { .type = KX_NODE_ROOT };
	char comp[KX_NAME_MAX + 64];
	const char *p = path;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len >= sizeof(comp))
			return -ENOENT;
		memcpy(comp, p, len);
		comp[len] = '\0';
		p += len;
		if (strcmp(comp, ".") == 0)
			continue;
		struct kx_node c;
		int r = kx_tree_lookup(t, v, &n, comp, &c);
		if (r < 0)
			return r;
		n = c;
	}
	*ret = n;
	return 0;
}

int kx_tree_node(struct kx_tree *t, struct kx_view *v, uint64_t ino, struct kx_node *ret)
{
	struct kx_node n = { 0 };
	if (ino == 1) {
		n.type = KX_NODE_ROOT;
		*ret = n;
		return 0;
	}
	ino_kind(ino, &n);
	uint8_t prefix[8];
	uint64_t bits = (ino & BITS55) << 9;
	for (int i = 7; i >= 0; i--) {
		prefix[i] = (uint8_t)bits;
		bits >>= 8;
	}
	int r = 0;
	switch (n.type) {
	case KX_NODE_README:
	case KX_NODE_BENCHMARKS:
	case KX_NODE_RUNS:
	case KX_NODE_DIGESTS:
	case KX_NODE_DIGESTS_SHA:
		break;
	case KX_NODE_BENCH: {
		uint64_t key = ino & BITS55;
		r = -ESTALE;
		pthread_mutex_lock(&t->lock);
		for (struct bench_dir *b = t->bench[key & 255]; b; b = b->next)
			if (b->key == key) {
				n.depth = b->depth;
				bench_id(b->depth, b->comp, &n.id);
				r = 0;
			}
		pthread_mutex_unlock(&t->lock);
		break;
	}
	case KX_NODE_GROUP:
	case KX_NODE_GROUP_FILE:
		if (node_get(t, ino, ret))
			return 0;
		r = kx_store_find_bits(t->s, v, KX_RECORD_GROUP, prefix, 55, &n.id);
		break;
	case KX_NODE_RUN:
	case KX_NODE_RUN_FILE:
	case KX_NODE_RUNS_RUN:
	case KX_NODE_RUNS_FILE:
		if (node_get(t, ino, ret))
			return 0;
		r = kx_store_find_bits(t->s, v, KX_RECORD_RUN, prefix, 55, &n.id);
		break;
	case KX_NODE_DOC:
		if (n.file && !doc_role(n.file))
			return -ENOENT;
		if (n.file)
			n.type = KX_NODE_DOC_FILE;
		if (node_get(t, ino, ret))
			return 0;
		r = kx_store_find_bits(t->s, v, KX_RECORD_DOC, prefix, 55, &n.id);
		break;
	default:
		return -ENOENT;
	}
	if (r == -ENOTUNIQ)
		r = -EIO;
	if (r < 0)
		return r;
	if (n.type >= KX_NODE_GROUP)
		node_put(t, ino, &n);
	*ret = n;
	return 0;
}

int kx_tree_parent(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct kx_node *ret)
{
	struct kx_node p = { 0 };
	int r = 0;
	switch (n->type) {
	case KX_NODE_ROOT:
	case KX_NODE_README:
	case KX_NODE_BENCHMARKS:
	case KX_NODE_RUNS:
	case KX_NODE_DIGESTS:
		p.type = KX_NODE_ROOT;
		break;
	case KX_NODE_DIGESTS_SHA:
		p.type = KX_NODE_DIGESTS;
		break;
	case KX_NODE_DOC:
		p.type = KX_NODE_DIGESTS_SHA;
		break;
	case KX_NODE_BENCH: {
		if (n->depth <= 1) {
			p.type = KX_NODE_BENCHMARKS;
			break;
		}
		char comp[3][KX_NAME_MAX] = { { 0 } };
		if ((r = bench_comps(t, n, comp)) < 0)
			return r;
		return bench_node(t, (uint8_t)(n->depth - 1), comp, ret);
	}
	case KX_NODE_GROUP: {
		struct kx_group_rec g;
		if ((r = get_group(t, v, &n->id, &g, NULL)) < 0)
			return r;
		char comp[3][KX_NAME_MAX] = { { 0 } };
		snprintf(comp[0], KX_NAME_MAX, "%s", g.kernel);
		snprintf(comp[1], KX_NAME_MAX, "%s", g.pass);
		snprintf(comp[2], KX_NAME_MAX, "%s", g.gpu);
		return bench_node(t, 3, comp, ret);
	}
	case KX_NODE_GROUP_FILE:
		p.type = KX_NODE_GROUP;
		p.id = n->id;
		break;
	case KX_NODE_RUN: {
		struct kx_run_rec x;
		if ((r = get_run(t, v, &n->id, &x)) < 0)
			return r;
		p.type = KX_NODE_GROUP;
		p.id = x.group;
		break;
	}
	case KX_NODE_RUN_FILE:
		p.type = KX_NODE_RUN;
		p.id = n->id;
		break;
	case KX_NODE_RUNS_RUN:
		p.type = KX_NODE_RUNS;
		break;
	case KX_NODE_RUNS_FILE:
		p.type = KX_NODE_RUNS_RUN;
		p.id = n->id;
		break;
	default:
		return -ENOENT;
	}
	*ret = p;
	return 0;
}

/* ---- readdir ---------------------------------------------------------------------------------- */

struct bench_walk {
	struct kx_tree *t;
	uint8_t depth;
	char comp[3][KX_NAME_MAX];
	kx_dirent_fn fn;
	void *ctx;
};

static int bench_step(void *ctx, const char *name, const struct kx_digest *w, const struct kx_digest *g, bool cut)
{
	struct bench_walk *b = ctx;
	snprintf(b->comp[b->depth], KX_NAME_MAX, "%s", name);
	struct kx_node n;
	int r = bench_node(b->t, b->depth + 1, b->comp, &n);
	return r < 0 ? r : b->fn(b->ctx, name, &n);
}

struct doc_walk {
	kx_dirent_fn fn;
	void *ctx;
};

static int doc_step(void *ctx, const struct kx_digest *d)
{
	struct doc_walk *w = ctx;
	char name[KX_DIGEST_HEX + 8];
	kx_digest_hex(d, name);
	strcat(name, ".json");
	struct kx_node n = { .type = KX_NODE_DOC, .id = *d };
	return w->fn(w->ctx, name, &n);
}

static int run_files(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir, kx_dirent_fn fn, void *ctx)
{
	struct kx_run_rec x;
	int r = get_run(t, v, &dir->id, &x);
	return r < 0 ? r : run_files_of(t, v, dir->type, &x, fn, ctx);
}

int kx_tree_readdir(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir, kx_dirent_fn fn,
		    void *ctx)
{
	int r = 0;
	switch (dir->type) {
	case KX_NODE_ROOT: {
		static const struct {
			const char *name;
			uint8_t type;
		} e[] = { { "README", KX_NODE_README }, { "benchmarks", KX_NODE_BENCHMARKS },
			  { "digests", KX_NODE_DIGESTS }, { "runs", KX_NODE_RUNS } };
		for (size_t i = 0; i < KX_ARRAY_SIZE(e) && r == 0; i++) {
			struct kx_node n = { .type = e[i].type };
			r = fn(ctx, e[i].name, &n);
		}
		return r;
	}
	case KX_NODE_DIGESTS: {
		struct kx_node n = { .type = KX_NODE_DIGESTS_SHA };
		return fn(ctx, "sha256", &n);
	}
	case KX_NODE_BENCHMARKS:
	case KX_NODE_BENCH: {
		struct bench_walk b = { .t = t, .fn = fn, .ctx = ctx };
		b.depth = dir->type == KX_NODE_BENCHMARKS ? 0 : dir->depth;
		if (b.depth && (r = bench_comps(t, dir, b.comp)) < 0)
			return r;
		const char *c[3] = { b.comp[0], b.comp[1], b.comp[2] };
		if (b.depth == 3) {
			struct wl_scan w = { .fn = fn, .ctx = ctx };
			return wl_walk(t, v, c, &w);
		}
		return kx_store_tree_list(t->s, v, c, b.depth, bench_step, &b);
	}
	case KX_NODE_GROUP: {
		for (int f = 0; f < KX_GF__COUNT && r == 0; f++) {
			struct kx_node n = { .type = KX_NODE_GROUP_FILE, .file = (uint8_t)f, .id = dir->id };
			r = fn(ctx, kx_group_file_name((enum kx_group_file)f), &n);
		}
		if (r)
			return r;
		struct gctx *g;
		if ((r = gctx_get(t, v, &dir->id, &g)) < 0)
			return r;
		for (size_t i = 0; i < g->len && r == 0; i++) {
			struct kx_node n = { .type = KX_NODE_RUN, .id = g->runs[i].run };
			r = fn(ctx, g->dirnames[i], &n);
		}
		gctx_put(t, g);
		return r;
	}
	case KX_NODE_RUN:
	case KX_NODE_RUNS_RUN:
		return run_files(t, v, dir, fn, ctx);
	case KX_NODE_RUNS: {
		struct runs_walk w = { .fn = fn, .ctx = ctx };
		r = kx_store_each_digest(t->s, v, KX_RECORD_RUN, runs_step, &w);
		if (r == 0 && w.have)
			r = runs_emit(&w, 0);
		return r;
	}
	case KX_NODE_DIGESTS_SHA: {
		struct doc_walk w = { fn, ctx };
		return kx_store_each_digest(t->s, v, KX_RECORD_DOC, doc_step, &w);
	}
	default:
		return -ENOTDIR;
	}
}

/* ---- content ---------------------------------------------------------------------------------- */

/*
 * The version of a run's manifest.json: which of its workload and implementation documents are
 * missing in v (0 for nearly every run: both came with it). It changes when such a document is
 * stored late, and only then.
 */
static int64_t manifest_stamp(struct kx_tree *t, struct kx_view *v, const struct kx_run_rec *x)
{
	return (doc_in(t, v, &x->workload, &x->run) ? 0 : 1) | (doc_in(t, v, &x->implementation, &x->run) ? 0 : 2);
}

/*
 * The stamp under which a file's content is cached; and, where asked for (getattr), its mtime and
 * link count — reading the bytes needs neither, so neither the store's counters nor a document's
 * uses are looked up for it.
 */
static int stamp_of(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t *ret_stamp,
		    int64_t *ret_mtime, uint32_t *ret_nlink)
{
	struct kx_store_stats st;
	struct kx_run_rec x;
	int64_t mtime = 0;
	uint32_t runs = 0;
	int r = 0;
	*ret_stamp = 0;
	switch (n->type) {
	case KX_NODE_README:
		kx_store_stats(t->s, v, &st);
		*ret_stamp = (int64_t)st.generation;
		mtime = st.changed_ns;
		break;
	case KX_NODE_GROUP_FILE:
		r = group_stamp(t, v, &n->id, ret_stamp);
		mtime = *ret_stamp;
		break;
	case KX_NODE_RUN_FILE:
	case KX_NODE_RUNS_FILE:
		if ((r = get_run(t, v, &n->id, &x)) < 0)
			return r;
		if (n->file == KX_RF_SUMMARY || n->file == KX_RF_SHA256SUMS) {
			r = group_stamp(t, v, &x.group, ret_stamp);
			mtime = *ret_stamp;
		} else {
			/* manifest.json holds the workload and implementation documents once stored */
			if (n->file == KX_RF_MANIFEST)
				*ret_stamp = manifest_stamp(t, v, &x);
			mtime = x.observed_ns;
		}
		break;
	case KX_NODE_DOC:
		if (ret_mtime) {
			kx_store_stats(t->s, v, &st);
			mtime = st.created_ns;
		}
		break;
	case KX_NODE_DOC_FILE:
		if (ret_mtime || ret_nlink)
			r = doc_use(t, v, &n->id, &runs, &mtime);
		break;
	default:
		return -EISDIR;
	}
	if (r < 0)
		return r;
	if (ret_mtime)
		*ret_mtime = mtime;
	if (ret_nlink)
		*ret_nlink = runs ? 2 * runs : 1; /* a document's file: under benchmarks/ and runs/ of each */
	return 0;
}

static int render_node(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct kx_buf *out)
{
	int r;
	switch (n->type) {
	case KX_NODE_README: {
		struct kx_readme_info info = { .store_path = kx_store_path(t->s) };
		struct kx_buf losses = { 0 };
		kx_store_stats(t->s, v, &info.stats);
		if ((r = kx_store_losses(t->s, v, &losses)) == 0) {
			info.losses = losses.ptr;
			r = kx_render_readme(&info, out);
		}
		kx_buf_release(&losses);
		return r;
	}
	case KX_NODE_GROUP_FILE: {
		struct gctx *g;
		if ((r = gctx_get(t, v, &n->id, &g)) < 0)
			return r;
		r = render_group(t, v, g, (enum kx_group_file)n->file, out);
		gctx_put(t, g);
		return r;
	}
	case KX_NODE_DOC: {
		struct kx_buf b = { 0 };
		if ((r = get_doc(t, v, &n->id, &b)) < 0)
			return r;
		struct kx_arena *a = kx_arena_new();
		struct kx_json *doc = NULL;
		struct kx_json_error e;
		r = a ? kx_json_parse(a, b.ptr, b.len, 0, &doc, NULL, &e) : -ENOMEM;
		if (r == -EINVAL)
			r = -EIO;
		if (r == 0)
			r = kx_digest_document_bytes(doc, out);
		kx_arena_free(a);
		kx_buf_release(&b);
		return r;
	}
	case KX_NODE_DOC_FILE: {
		struct pdoc *p = pdoc_get(t, v, &n->id, NULL);
		if (!p)
			return -ENOENT;
		r = kx_json_write_pretty(p->json, out);
		pdoc_put(p);
		return r;
	}
	default:
		return -EISDIR;
	}
}

/* Content is cached by node, except that a run's files under runs/ share the rank directory's. */
static uint64_t content_key(const struct kx_node *n)
{
	if (n->type != KX_NODE_RUNS_FILE)
		return kx_tree_ino(n);
	struct kx_node k = *n;
	k.type = KX_NODE_RUN_FILE;
	return kx_tree_ino(&k);
}

static bool rank_dependent(int f)
{
	return f == KX_RF_SUMMARY || f == KX_RF_SHA256SUMS;
}

/*
 * One file of a run. The documents and manifest.json need only the record and the parsed
 * documents (what `cat manifest.json` costs); summary.txt also the group listing (rank, names);
 * SHA256SUMS is made of the other files' bytes, taken from the cache rather than rendered again.
 * Sibling files rendered next share the parse (pdocs) and the listing (gctx).
 */
static int read_run(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t stamp,
		    const struct kx_content **ret)
{
	enum kx_run_file f = (enum kx_run_file)n->file;
	/* SHA256SUMS needs the record alone: its files' bytes come from read_stamped */
	unsigned what = f == KX_RF_SHA256SUMS ? 0 : f == KX_RF_SUMMARY ? RV_GROUP | RV_DOCS : RV_DOCS;
	struct runv rv;
	int r = runv_load_with(t, v, &n->id, what, &rv);
	if (r < 0)
		return r;
	if (!kx_render_run_has(&rv.v, f)) {
		runv_release(t, &rv);
		return -ENOENT;
	}
	struct kx_buf b;
	kx_buf_init(&b, 0);
	if (f != KX_RF_SHA256SUMS)
		r = kx_render_run_file(&rv.v, f, &b);
	else
		r = run_sums(t, v, &rv.run, stamp, &b, NULL);
	runv_release(t, &rv);
	const struct kx_content *c = NULL;
	if (r >= 0 && !(c = cache_put(t, content_key(n), stamp, &b)))
		r = -ENOMEM;
	kx_buf_release(&b);
	if (r < 0)
		return r;
	*ret = c;
	return 0;
}

/* kx_tree_read once the stamp is known */
static int read_stamped(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t stamp,
			const struct kx_content **ret)
{
	uint64_t key = content_key(n);
	const struct kx_content *c = cache_get(t, key, stamp);
	if (c) {
		*ret = c;
		return 0;
	}
	if (n->type == KX_NODE_RUN_FILE || n->type == KX_NODE_RUNS_FILE)
		return read_run(t, v, n, stamp, ret);
	struct kx_buf b;
	kx_buf_init(&b, 0);
	int r = render_node(t, v, n, &b);
	if (r < 0) {
		kx_buf_release(&b);
		return r;
	}
	c = cache_put(t, key, stamp, &b);
	kx_buf_release(&b);
	if (!c)
		return -ENOMEM;
	*ret = c;
	return 0;
}

int kx_tree_read(struct kx_tree *t, struct kx_view *v, const struct kx_node *n,
		 const struct kx_content **ret)
{
	int64_t stamp;
	int r = kx_tree_stamp(t, v, n, &stamp);
	if (r < 0)
		return r;
	return read_stamped(t, v, n, stamp, ret);
}

struct counter {
	uint32_t n;
};

static int count_entry(void *ctx, const char *name, const struct kx_node *n)
{
	struct counter *c = ctx;
	c->n++;
	return 0;
}

bool kx_node_versioned(const struct kx_node *n)
{
	return n->type == KX_NODE_README || n->type == KX_NODE_GROUP_FILE ||
	       ((n->type == KX_NODE_RUN_FILE || n->type == KX_NODE_RUNS_FILE) &&
		(rank_dependent(n->file) || n->file == KX_RF_MANIFEST));
}

int kx_tree_stamp(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t *ret)
{
	return stamp_of(t, v, n, ret, NULL, NULL);
}

/*
 * The size of file n (of stamp `stamp`) that the sizes cache lacks, kept there: a SHA256SUMS's
 * from the names it lists (struct sums), any other file's by rendering it.
 */
static int size_of(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t stamp, uint64_t *ret)
{
	int r;
	if (n->type == KX_NODE_GROUP_FILE && n->file == KX_GF_SHA256SUMS) {
		struct gctx *g;
		if ((r = gctx_get(t, v, &n->id, &g)) < 0)
			return r;
		r = group_sums(t, v, g, NULL, ret);
		gctx_put(t, g);
	} else if ((n->type == KX_NODE_RUN_FILE || n->type == KX_NODE_RUNS_FILE) && n->file == KX_RF_SHA256SUMS) {
		struct kx_run_rec x;
		if ((r = get_run(t, v, &n->id, &x)) == 0)
			r = run_sums(t, v, &x, stamp, NULL, ret);
	} else {
		const struct kx_content *c;
		if ((r = read_stamped(t, v, n, stamp, &c)) < 0)
			return r;
		*ret = c->len; /* and kept by cache_put */
		kx_content_put(c);
		return 0;
	}
	if (r == 0) {
		pthread_mutex_lock(&t->lock);
		size_put_locked(t, content_key(n), stamp, *ret);
		pthread_mutex_unlock(&t->lock);
	}
	return r;
}

int kx_tree_getattr(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct kx_attr *ret)
{
	struct kx_attr a = { .ino = kx_tree_ino(n), .dir = kx_node_is_dir(n), .nlink = 2 };
	struct kx_store_stats st;
	struct kx_run_rec x;
	struct kx_group_rec g;
	int r = 0;
	if (n->type >= KX_NODE_GROUP)
		node_put(t, a.ino, n); /* whoever asks for attributes is about to use the inode number */
	if (!a.dir) {
		int64_t stamp;
		if ((r = stamp_of(t, v, n, &stamp, &a.mtime_ns, &a.nlink)) < 0)
			return r;
		a.stamp = stamp;
		if (!size_get(t, content_key(n), stamp, &a.size) && (r = size_of(t, v, n, stamp, &a.size)) < 0)
			return r;
		*ret = a;
		return 0;
	}
	a.size = 4096;
	switch (n->type) {
	case KX_NODE_ROOT:
		kx_store_stats(t->s, v, &st);
		a.mtime_ns = st.changed_ns;
		a.nlink = 2 + 3;
		break;
	case KX_NODE_RUNS:
		kx_store_stats(t->s, v, &st);
		a.mtime_ns = st.changed_ns;
		a.nlink = (uint32_t)(2 + st.runs);
		break;
	case KX_NODE_DIGESTS:
		kx_store_stats(t->s, v, &st);
		a.mtime_ns = st.changed_ns;
		a.nlink = 3;
		break;
	case KX_NODE_DIGESTS_SHA:
		kx_store_stats(t->s, v, &st);
		a.mtime_ns = st.changed_ns;
		break;
	case KX_NODE_BENCHMARKS:
	case KX_NODE_BENCH: {
		char comp[3][KX_NAME_MAX] = { { 0 } };
		char path[4 * KX_NAME_MAX + 16] = "benchmarks";
		uint8_t depth = n->type == KX_NODE_BENCHMARKS ? 0 : n->depth;
		if (depth && (r = bench_comps(t, n, comp)) < 0)
			return r;
		for (int i = 0; i < depth; i++) {
			size_t l = strlen(path);
			snprintf(path + l, sizeof(path) - l, "/%s", comp[i]);
		}
		if (kx_store_dir_mtime(t->s, v, path, &a.mtime_ns) < 0) {
			kx_store_stats(t->s, v, &st);
			a.mtime_ns = st.created_ns;
		}
		struct counter c = { 0 };
		if ((r = kx_tree_readdir(t, v, n, count_entry, &c)) < 0)
			return r;
		a.nlink = 2 + c.n;
		break;
	}
	case KX_NODE_GROUP:
		if ((r = get_group(t, v, &n->id, &g, &a.mtime_ns)) < 0)
			return r;
		a.nlink = 2 + g.ranked + g.unranked;
		break;
	case KX_NODE_RUN:
	case KX_NODE_RUNS_RUN:
		if ((r = get_run(t, v, &n->id, &x)) < 0)
			return r;
		a.mtime_ns = x.observed_ns;
		break;
	default:
		return -ENOENT;
	}
	*ret = a;
	return 0;
}

int kx_tree_run_path(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, char *out, size_t cap)
{
	struct runv rv;
	int r = runv_load_with(t, v, run, RV_GROUP, &rv); /* a path needs no document */
	if (r < 0)
		return r;
	snprintf(out, cap, "%s/%s", rv.v.group_path, rv.v.dirname);
	runv_release(t, &rv);
	return 0;
}

/* ---- xattrs ----------------------------------------------------------------------------------- */

static const char *const xattr_names[] = { "user.kindex.digest", "user.kindex.comparison_key",
					   "user.kindex.rank", "user.kindex.evidence" };

static bool xattr_applies(const struct kx_node *n, int i)
{
	switch (n->type) {
	case KX_NODE_RUN:
	case KX_NODE_RUNS_RUN:
	case KX_NODE_RUN_FILE:
	case KX_NODE_RUNS_FILE:
		return true;
	case KX_NODE_GROUP:
	case KX_NODE_GROUP_FILE:
		return i <= 1;
	case KX_NODE_DOC:
	case KX_NODE_DOC_FILE:
		return i == 0;
	default:
		return false;
	}
}

int kx_tree_xattr_list(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct kx_buf *out)
{
	for (size_t i = 0; i < KX_ARRAY_SIZE(xattr_names); i++)
		if (xattr_applies(n, (int)i) && kx_buf_append(out, xattr_names[i], strlen(xattr_names[i]) + 1) < 0)
			return -ENOMEM;
	return 0;
}

int kx_tree_xattr_get(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, const char *name,
		      struct kx_buf *out)
{
	int i = -1;
	for (size_t k = 0; k < KX_ARRAY_SIZE(xattr_names); k++)
		if (strcmp(xattr_names[k], name) == 0)
			i = (int)k;
	if (i < 0 || !xattr_applies(n, i))
		return -ENODATA;
	char s[KX_DIGEST_STR_MAX];
	bool is_run = n->type == KX_NODE_RUN || n->type == KX_NODE_RUNS_RUN || n->type == KX_NODE_RUN_FILE ||
		      n->type == KX_NODE_RUNS_FILE;
	if (i == 0 || (i == 1 && !is_run)) {
		kx_digest_format(&n->id, s);
		return kx_buf_puts(out, s);
	}
	struct runv rv;
	int r = runv_load(t, v, &n->id, &rv);
	if (r < 0)
		return r;
	if (i == 1) {
		kx_digest_format(&rv.run.group, s);
		r = kx_buf_puts(out, s);
	} else if (i == 2) {
		r = rv.v.rank ? kx_buf_printf(out, "%u", rv.v.rank) : kx_buf_puts(out, "unranked");
	} else {
		r = kx_buf_puts(out, kx_evidence_name((enum kx_evidence)rv.run.evidence));
	}
	runv_release(t, &rv);
	return r;
}

/* ---- what a store change touched -------------------------------------------------------------- */

struct names {
	char **v;
	size_t len, cap;
};

static int names_add(void *ctx, const char *name, const struct kx_node *n)
{
	struct names *x = ctx;
	if (KX_GROW(x->v, x->cap, x->len, 32) < 0)
		return -ENOMEM;
	if (!(x->v[x->len] = strdup(name)))
		return -ENOMEM;
	x->len++;
	return 0;
}

static void names_release(struct names *x)
{
	for (size_t i = 0; i < x->len; i++)
		free(x->v[i]);
	free(x->v);
	memset(x, 0, sizeof(*x));
}

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of a directory, sorted; a directory that does not exist in v is empty. */
static int names_of(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir, struct names *out)
{
	int r = kx_tree_readdir(t, v, dir, names_add, out);
	if (r == -ENOENT || r == -ESTALE)
		r = 0;
	if (r == 0 && out->len)
		qsort(out->v, out->len, sizeof(*out->v), strp_cmp);
	return r;
}

struct changes {
	struct kx_tree *t;
	struct kx_view *before, *after;
	kx_inval_fn fn;
	kx_held_fn held;
	void *ctx;
};

static bool may_hold(struct changes *c, const struct kx_node *dir)
{
	return !c->held || c->held(c->ctx, kx_tree_ino(dir));
}

static int inval(struct changes *c, enum kx_inval what, const struct kx_node *n, const char *name)
{
	return c->fn(c->ctx, what, kx_tree_ino(n), name, KX_STAMP_NONE);
}

/* A versioned file (kx_node_versioned) changed: with the stamp it had in `before`. */
static int inval_versioned(struct changes *c, enum kx_inval what, const struct kx_node *n, int64_t before)
{
	return c->fn(c->ctx, what, kx_tree_ino(n), NULL, before);
}

/* The stamp a group's files had in `before` (their gpu directory's mtime); none if it is new. */
static int64_t stamp_before(struct changes *c, const struct kx_digest *key)
{
	int64_t stamp;
	return group_stamp(c->t, c->before, key, &stamp) == 0 ? stamp : KX_STAMP_NONE;
}

/* An ENTRY for every name in one listing of dir and not the other; *ret_differs when any. */
static int diff_dir(struct changes *c, const struct kx_node *dir, bool *ret_differs)
{
	struct names a = { 0 }, b = { 0 };
	int r = names_of(c->t, c->before, dir, &a);
	if (r == 0)
		r = names_of(c->t, c->after, dir, &b);
	size_t i = 0, j = 0;
	bool differs = false;
	while (r == 0 && (i < a.len || j < b.len)) {
		int cmp = i == a.len ? 1 : j == b.len ? -1 : strcmp(a.v[i], b.v[j]);
		if (cmp == 0) {
			i++;
			j++;
			continue;
		}
		differs = true;
		r = inval(c, KX_INVAL_ENTRY, dir, cmp < 0 ? a.v[i++] : b.v[j++]);
	}
	names_release(&a);
	names_release(&b);
	if (r == 0 && ret_differs)
		*ret_differs = differs;
	return r;
}

/* The files of every run in a group whose content (DATA) or only mtime (ATTR) changed. */
static int inval_group(struct changes *c, const struct kx_digest *key, enum kx_inval what)
{
	struct kx_node g = { .type = KX_NODE_GROUP, .id = *key };
	int r = inval(c, what, &g, NULL);
	int64_t before = stamp_before(c, key);
	for (int f = 0; f < KX_GF__COUNT && r == 0; f++) {
		struct kx_node n = { .type = KX_NODE_GROUP_FILE, .file = (uint8_t)f, .id = *key };
		r = inval_versioned(c, what, &n, before);
	}
	struct gctx *x = NULL;
	if (r != 0 || (r = gctx_get(c->t, c->after, key, &x)) < 0)
		return r;
	/* only summary.txt and SHA256SUMS depend on rank and path (their stamp is the gpu directory's) */
	static const uint8_t files[] = { KX_RF_SUMMARY, KX_RF_SHA256SUMS };
	static const uint8_t types[] = { KX_NODE_RUN_FILE, KX_NODE_RUNS_FILE };
	for (size_t i = 0; i < x->len && r == 0; i++)
		for (size_t k = 0; k < 4 && r == 0; k++) {
			struct kx_node n = { .type = types[k / 2], .file = files[k % 2], .id = x->runs[i].run };
			r = inval_versioned(c, what, &n, before);
		}
	gctx_put(c->t, x);
	return r;
}

static bool digest_in(const struct kx_digest *set, size_t n, const struct kx_digest *d)
{
	for (size_t i = 0; i < n; i++)
		if (kx_digest_equal(&set[i], d))
			return true;
	return false;
}

struct group_walk {
	struct changes *c;
	const struct kx_digest *changed; /* groups with new runs */
	size_t n_changed;
	struct names renamed;            /* workload directory names that are new in `after` */
	int err;
};

static int group_step(void *ctx, const char *name, const struct kx_node *n)
{
	struct group_walk *w = ctx;
	bool renamed = false;
	for (size_t i = 0; i < w->renamed.len && !renamed; i++)
		renamed = strcmp(w->renamed.v[i], name) == 0;
	if (digest_in(w->changed, w->n_changed, &n->id) || renamed) {
		int r = diff_dir(w->c, n, NULL);
		return r ? r : inval_group(w->c, &n->id, KX_INVAL_DATA);
	}
	/* a sibling: same content, but its mtimes are the gpu directory's, which moved */
	return inval_group(w->c, &n->id, KX_INVAL_ATTR);
}

static int collect_new_names(void *ctx, enum kx_inval what, uint64_t ino, const char *name, int64_t stamp)
{
	return what == KX_INVAL_ENTRY ? names_add(ctx, name, NULL) : 0;
}

/* Everything below one gpu directory, and the path down to it. */
static int changes_gpu(struct changes *c, const struct kx_group_rec *g, const struct kx_digest *groups, size_t n)
{
	char comp[3][KX_NAME_MAX] = { { 0 } };
	snprintf(comp[0], KX_NAME_MAX, "%s", g->kernel);
	snprintf(comp[1], KX_NAME_MAX, "%s", g->pass);
	snprintf(comp[2], KX_NAME_MAX, "%s", g->gpu);
	struct kx_node parent = { .type = KX_NODE_BENCHMARKS }, node;
	int r = 0;
	for (uint8_t d = 1; d <= 3 && r == 0; d++) {
		if ((r = bench_node(c->t, d, comp, &node)) < 0)
			return r;
		struct kx_node probe;
		bool is_new = kx_tree_lookup(c->t, c->before, &parent, comp[d - 1], &probe) == -ENOENT;
		if (is_new)
			r = inval(c, KX_INVAL_ENTRY, &parent, comp[d - 1]);
		/* a new child changes the listing; otherwise only mtime and nlink moved */
		if (r == 0 && d > 1)
			r = inval(c, is_new ? KX_INVAL_DATA : KX_INVAL_ATTR, &parent, NULL);
		parent = node;
	}
	if (r < 0)
		return r;
	/*
	 * Nothing below this directory can be cached where it is not held, and nothing of runs/ where
	 * runs/ is not: then the listing is all (one group's change moves every group's mtimes here,
	 * and walking them all is most of a round's work).
	 */
	struct kx_node runs_dir = { .type = KX_NODE_RUNS };
	if (!may_hold(c, &parent) && !may_hold(c, &runs_dir))
		return inval(c, KX_INVAL_DATA, &parent, NULL);
	/* the workload level: new groups, and groups whose name gained a ~suffix beside a new one */
	struct group_walk w = { .c = c, .changed = groups, .n_changed = n };
	struct changes collect = *c;
	collect.fn = collect_new_names;
	collect.ctx = &w.renamed;
	bool differs = false;
	r = diff_dir(&collect, &parent, &differs);
	for (size_t i = 0; i < w.renamed.len && r == 0; i++)
		r = inval(c, KX_INVAL_ENTRY, &parent, w.renamed.v[i]);
	if (r == 0)
		r = inval(c, KX_INVAL_DATA, &parent, NULL);
	if (r == 0)
		r = kx_tree_readdir(c->t, c->after, &parent, group_step, &w);
	names_release(&w.renamed);
	return r;
}

struct new_runs {
	struct kx_digest *v;
	size_t len, cap;
};

static int new_run_add(struct new_runs *x, const struct kx_digest *d)
{
	if (KX_GROW(x->v, x->cap, x->len, 16) < 0)
		return -ENOMEM;
	x->v[x->len++] = *d;
	return 0;
}

static int new_run_step(void *ctx, const struct kx_digest *d)
{
	return new_run_add(ctx, d);
}

/*
 * The runs of `after` that `before` lacks, without being told: both lists of run keys, in key
 * order, merged (keys only — no record is read).
 */
static int scan_new_runs(struct kx_tree *t, struct kx_view *before, struct kx_view *after, struct new_runs *out)
{
	struct new_runs a = { 0 }, b = { 0 };
	int r = kx_store_each_digest(t->s, before, KX_RECORD_RUN, new_run_step, &a);
	if (r == 0)
		r = kx_store_each_digest(t->s, after, KX_RECORD_RUN, new_run_step, &b);
	for (size_t i = 0, j = 0; r == 0 && j < b.len; j++) {
		while (i < a.len && memcmp(a.v[i].b, b.v[j].b, 32) < 0)
			i++;
		if (i == a.len || memcmp(a.v[i].b, b.v[j].b, 32) != 0)
			r = new_run_add(out, &b.v[j]);
	}
	free(a.v);
	free(b.v);
	return r;
}

/* The groups that changed, and their gpu directories (each once). */
struct group_set {
	struct new_runs keys;
	struct kx_group_rec *gpus;
	size_t n_gpus, cap_gpus;
};

static int group_set_add(struct group_set *gs, struct kx_tree *t, struct kx_view *v, const struct kx_digest *key)
{
	if (digest_in(gs->keys.v, gs->keys.len, key))
		return 0;
	struct kx_group_rec g;
	int r = kx_store_get_group(t->s, v, key, &g);
	if (r < 0 || (r = new_run_add(&gs->keys, key)) < 0)
		return r;
	for (size_t k = 0; k < gs->n_gpus; k++)
		if (!strcmp(gs->gpus[k].kernel, g.kernel) && !strcmp(gs->gpus[k].pass, g.pass) &&
		    !strcmp(gs->gpus[k].gpu, g.gpu))
			return 0;
	if (KX_GROW(gs->gpus, gs->cap_gpus, gs->n_gpus, 8) < 0)
		return -ENOMEM;
	gs->gpus[gs->n_gpus++] = g;
	return 0;
}

/* Forget a run's files in this tree's own caches (content and sizes, both paths). */
static void purge_run(struct kx_tree *t, const struct kx_digest *run)
{
	pthread_mutex_lock(&t->lock);
	for (int f = 0; f < KX_RF__COUNT; f++) {
		struct kx_node n = { .type = KX_NODE_RUN_FILE, .file = (uint8_t)f, .id = *run };
		uint64_t ino = kx_tree_ino(&n);
		for (struct centry *e = t->chash[ino % CBUCKETS]; e; e = e->hnext)
			if (e->ino == ino) {
				cache_drop(t, e);
				break;
			}
	}
	/* one sizes slot holds all the run's files */
	int file;
	struct kx_node n = { .type = KX_NODE_RUN_FILE, .id = *run };
	struct rsize_slot *rs = rsize_slot(t, kx_tree_ino(&n), &file, false);
	if (rs)
		rs->id = 0;
	pthread_mutex_unlock(&t->lock);
}

/* Forget a group's listing and files in this tree's own caches. */
static void purge_group(struct kx_tree *t, const struct kx_digest *key)
{
	pthread_mutex_lock(&t->lock);
	for (struct gctx *g = *ghash_slot(t, key); g; g = g->hnext)
		if (kx_digest_equal(&g->key, key)) {
			gcache_drop(t, g);
			break;
		}
	for (int f = 0; f < KX_GF__COUNT; f++) {
		struct kx_node n = { .type = KX_NODE_GROUP_FILE, .file = (uint8_t)f, .id = *key };
		uint64_t ino = kx_tree_ino(&n);
		for (struct centry *e = t->chash[ino % CBUCKETS]; e; e = e->hnext)
			if (e->ino == ino) {
				cache_drop(t, e);
				break;
			}
		t->sizes[slot_of(ino, t->nsizes)].key = 0;
	}
	pthread_mutex_unlock(&t->lock);
}

struct late_walk {
	struct changes *c;
	const struct new_runs *added, *late;
	struct group_set *gs;
	int err;
};

static int late_step(void *ctx, const struct kx_run_rec *x)
{
	struct late_walk *w = ctx;
	bool wl = digest_in(w->late->v, w->late->len, &x->workload);
	bool im = digest_in(w->late->v, w->late->len, &x->implementation);
	if ((!wl && !im) || digest_in(w->added->v, w->added->len, &x->run))
		return 0;
	struct changes *c = w->c;
	purge_run(c->t, &x->run);
	purge_group(c->t, &x->group);
	int r = 0;
	static const uint8_t dirs[] = { KX_NODE_RUN, KX_NODE_RUNS_RUN }, files[] = { KX_NODE_RUN_FILE, KX_NODE_RUNS_FILE };
	int64_t before = stamp_before(c, &x->group);
	for (int k = 0; k < 2 && r == 0; k++) {
		struct kx_node d = { .type = dirs[k], .id = x->run };
		if (wl)
			r = inval(c, KX_INVAL_ENTRY, &d, kx_run_file_name(KX_RF_WORKLOAD));
		if (r == 0 && im)
			r = inval(c, KX_INVAL_ENTRY, &d, kx_run_file_name(KX_RF_IMPLEMENTATION));
		if (r == 0)
			r = inval(c, KX_INVAL_DATA, &d, NULL);
		static const uint8_t changed[] = { KX_RF_MANIFEST, KX_RF_SUMMARY, KX_RF_SHA256SUMS };
		for (size_t f = 0; f < KX_ARRAY_SIZE(changed) && r == 0; f++) {
			struct kx_node n = { .type = files[k], .file = changed[f], .id = x->run };
			int64_t was = before;
			if (changed[f] == KX_RF_MANIFEST)
				was = manifest_stamp(c->t, c->before, x);
			r = inval_versioned(c, KX_INVAL_DATA, &n, was);
		}
	}
	return r ? r : group_set_add(w->gs, c->t, c->after, &x->group);
}

static int late_run(void *ctx, const struct kx_digest *run)
{
	struct late_walk *w = ctx;
	struct kx_run_rec x;
	int r = kx_store_get_run(w->c->t->s, w->c->after, run, &x);
	return r == -ENOENT ? 0 : r < 0 ? r : late_step(w, &x);
}

/*
 * Documents stored now that runs stored before referenced by digest only (published records often
 * carry just the digest of their workload): those runs gain workload.json or implementation.json,
 * and their manifest.json, summary.txt, SHA256SUMS and their group's GROUP.json change. The store
 * indexes the runs waiting for each document (kx_store_each_waiting): exactly those are visited.
 */
static int changes_late(struct changes *c, const struct new_runs *added, const struct new_runs *late,
			struct group_set *gs)
{
	struct late_walk w = { c, added, late, gs, 0 };
	int r = 0;
	for (size_t i = 0; i < late->len && r == 0; i++)
		r = kx_store_each_waiting(c->t->s, c->after, &late->v[i], late_run, &w);
	return r == -EOPNOTSUPP ? 0 : r;
}

static int count_waiting(void *ctx, const struct kx_digest *run)
{
	(*(uint32_t *)ctx)++;
	return 0;
}

/*
 * Whether document d, which the runs `added` (records `recs`) name as file f, is stored in
 * `after` and whether it was in `before` — without reading it: a document is one store value,
 * read whole even to learn that it exists, and one of 4 MB made every change that linked it cost
 * two such reads. Instead: a document is only ever stored with a run that names it, and a run
 * stored while a document it names was missing is listed in the W index
 * (kx_store_each_waiting; complete in any store a writer opened, which upgrades it). So a document
 * is stored in a view exactly when more runs of the view name it (the hard-link table) than wait
 * for it. A run's own document is new with the run.
 */
static int doc_stored(struct kx_tree *t, struct kx_view *before, struct kx_view *after,
		      const struct kx_run_rec *recs, size_t n, int f, const struct kx_digest *d, bool *ret_after,
		      bool *ret_before)
{
	if (f == KX_RF_RUN) {
		*ret_after = true;
		*ret_before = false;
		return 0;
	}
	uint32_t named, named_added = 0, wait_after = 0, wait_before = 0;
	int r = uses_exact(t, after, d, &named);
	if (r == -ESTALE) {
		*ret_after = get_doc(t, after, d, NULL) == 0;
		*ret_before = *ret_after && get_doc(t, before, d, NULL) == 0;
		return 0;
	}
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		named_added += kx_digest_equal(run_doc(&recs[i], f), d);
	/* only workload and implementation documents may be named before they are stored */
	if (f == KX_RF_WORKLOAD || f == KX_RF_IMPLEMENTATION) {
		r = kx_store_each_waiting(t->s, after, d, count_waiting, &wait_after);
		if (r == 0)
			r = kx_store_each_waiting(t->s, before, d, count_waiting, &wait_before);
		if (r == -EOPNOTSUPP) {
			*ret_after = get_doc(t, after, d, NULL) == 0;
			*ret_before = *ret_after && get_doc(t, before, d, NULL) == 0;
			return 0;
		}
		if (r < 0)
			return r;
	}
	*ret_after = named > wait_after;
	*ret_before = named > named_added && named - named_added > wait_before;
	return 0;
}

int kx_tree_changes(struct kx_tree *t, struct kx_view *before, struct kx_view *after, const struct kx_digest *runs,
		    size_t n, kx_inval_fn fn, kx_held_fn held, void *ctx)
{
	struct changes c = { t, before, after, fn, held, ctx };
	struct new_runs added = { 0 }, late = { 0 }, seen = { 0 }; /* seen: documents */
	struct group_set gs = { 0 };
	struct kx_run_rec x, *recs = NULL;
	int r = 0;

	/* the runs that are in `after` and not in `before` */
	if (!runs) {
		r = kx_view_generation(before) != kx_view_generation(after) ? scan_new_runs(t, before, after, &added) : 0;
	} else {
		for (size_t i = 0; i < n && r == 0; i++)
			if (!digest_in(added.v, added.len, &runs[i]) && kx_store_get_run(t->s, after, &runs[i], &x) == 0)
				r = new_run_add(&added, &runs[i]);
	}
	size_t keep = 0;
	for (size_t i = 0; i < added.len && r == 0; i++)
		if (kx_store_get_run(t->s, before, &added.v[i], &x) == -ENOENT)
			added.v[keep++] = added.v[i];
	added.len = keep;
	/* First, though the loop below reads each added run again: the daemon already answers from
	 * `after`, and a getattr of a document's file meanwhile (one the invalidations below prompt)
	 * would find a table still counting `before` and build it again from every run. */
	if (r == 0)
		r = uses_changed(t, before, after, added.v, added.len);
	if (r < 0 || added.len == 0)
		goto out;
	if (!(recs = malloc(added.len * sizeof(*recs)))) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < added.len && r == 0; i++)
		r = kx_store_get_run(t->s, after, &added.v[i], &recs[i]);
	if (r < 0)
		goto out;

	/* the top of the tree: counts, mtimes, README and the flat listings */
	static const uint8_t top[][2] = { { KX_NODE_ROOT, KX_INVAL_ATTR },       { KX_NODE_README, KX_INVAL_DATA },
					  { KX_NODE_BENCHMARKS, KX_INVAL_DATA }, { KX_NODE_RUNS, KX_INVAL_DATA },
					  { KX_NODE_DIGESTS, KX_INVAL_ATTR },    { KX_NODE_DIGESTS_SHA, KX_INVAL_DATA } };
	for (size_t i = 0; i < KX_ARRAY_SIZE(top) && r == 0; i++) {
		struct kx_node nd = { .type = top[i][0] };
		r = nd.type == KX_NODE_README ? inval_versioned(&c, KX_INVAL_DATA, &nd, (int64_t)kx_view_generation(before))
					      : inval(&c, (enum kx_inval)top[i][1], &nd, NULL);
	}

	/* runs/<shortid> and digests/sha256/<hex>.json that are new */
	bool runs_renamed = false;
	for (size_t i = 0; i < added.len && r == 0; i++) {
		x = recs[i];
		char name[KX_DIGEST_HEX + 8];
		struct kx_node runs_dir = { .type = KX_NODE_RUNS }, sha_dir = { .type = KX_NODE_DIGESTS_SHA };
		if ((r = runs_canonical(t, after, &x.run, name)) < 0)
			break;
		if (strlen(name) > KX_SHORTID_LEN)
			runs_renamed = true; /* it shares 12 digits with another run, whose name may have grown */
		else
			r = inval(&c, KX_INVAL_ENTRY, &runs_dir, name);
		/* its stored documents: each one's file in run directories has one more link (and perhaps
		 * an earlier mtime); a new one is a new name in digests/sha256/ */
		for (int f = KX_RF_RUN; f <= KX_RF_IMPLEMENTATION && r == 0; f++) {
			const struct kx_digest *d = run_doc(&x, f);
			if (digest_in(seen.v, seen.len, d))
				continue; /* named by a run before it in this change: told already */
			bool now, was;
			if ((r = new_run_add(&seen, d)) < 0 ||
			    (r = doc_stored(t, before, after, recs, added.len, f, d, &now, &was)) < 0)
				break;
			if (!now)
				continue;
			struct kx_node df = { .type = KX_NODE_DOC_FILE, .file = (uint8_t)f, .id = *d };
			if (doc_role(f))
				r = inval(&c, KX_INVAL_ATTR, &df, NULL);
			if (r < 0 || was)
				continue;
			kx_digest_hex(d, name);
			strcat(name, ".json");
			r = inval(&c, KX_INVAL_ENTRY, &sha_dir, name);
			/* a workload or implementation document older runs knew only by digest */
			if (r == 0 && f >= KX_RF_WORKLOAD && !digest_in(late.v, late.len, d))
				r = new_run_add(&late, d);
		}
		if (r == 0)
			r = group_set_add(&gs, t, after, &x.group);
	}
	if (r == 0 && runs_renamed) {
		struct kx_node runs_dir = { .type = KX_NODE_RUNS };
		r = diff_dir(&c, &runs_dir, NULL);
	}
	if (r == 0 && late.len)
		r = changes_late(&c, &added, &late, &gs);

	/* benchmarks/: each gpu directory that received runs, with every group below it */
	for (size_t i = 0; i < gs.n_gpus && r == 0; i++)
		r = changes_gpu(&c, &gs.gpus[i], gs.keys.v, gs.keys.len);
out:
	free(recs);
	free(seen.v);
	free(added.v);
	free(late.v);
	free(gs.keys.v);
	free(gs.gpus);
	return r;
}
