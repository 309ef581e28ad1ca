/* SPDX-License-Identifier: MIT */
/*
 * The private header of src/tree: struct kx_tree, and what crosses the folder's files — each type
 * and function under the file that defines it, the files lowest first. A file calls only the files
 * listed before it, never one after it; scripts/check-layers reads the built objects with nm and
 * fails on a call that goes the other way (a circle), and on a global that is neither kx_...
 * (include/kx/tree.h) nor tree_... (here). What only one file uses is static in that file.
 *
 *     inode.c    the inode codec: a node's number and back, which nodes are directories
 *     cache.c    the caches: sizes, decoded inodes, run and group records, documents' existence
 *                and uses, benchmark directories' paths, rendered content (and the root's files
 *                kept beside it), parsed documents
 *     group.c    a group's record and stamp, its workload directory name, its listing (gctx)
 *     sweeps.c   benchmark directories' files (gpus.tsv, sweep.tsv, sweep.svg) and their mtimes
 *     compare.c  compare/: a generation's comparisons, its pairs, their files, names and inodes
 *     shortid.c  the names in runs/
 *     run.c      run views (runv), a group's render view, a run directory's files, a run's path
 *     node.c     the namespace: lookup, resolve, inode to node, parent, readdir, a file's name
 *     html.c     index.html of a directory, made from its listing
 *     top.c      index.tsv, regressions.tsv and .json, changes.tsv, and their rows kept between builds
 *     index-kept.c  index.tsv's rows kept in the store by the writer, for mounts to read in one scan
 *     content.c  a file's stamp, bytes and size, SHA256SUMS
 *     attr.c     getattr and the xattrs
 *     tree.c     the tree's lifetime (kx_tree_new, kx_tree_free) and README's health lines
 *     changes.c  what a store change touched (kx_tree_changes)
 *
 * The tree of SPEC §3 over the store (see include/kx/tree.h for the node and inode scheme).
 *
 * Everything is computed from the store on demand: listings by prefix scans, files by rendering
 * (src/render). Two byte-bounded caches make repeated access cheap: group listings (a group's
 * runs in rank order with their directory names) and rendered content, both keyed so that a stale
 * entry is recognised rather than served — by the mtime of the group's gpu directory, which every
 * ingest below it bumps. Smaller caches, each a fixed fraction of the bound, spare the store the
 * reads one file operation repeats (sizes, inode decoding, run and group records, groups' stamps,
 * document existence, parsed documents); cache.c says what keeps each one valid. A FUSE traversal
 * of 100,000 runs (bench/read) is what they are tuned on: it renders each run once, not once per
 * path and file.
 */
#ifndef KX_TREE_PRIVATE_H
#define KX_TREE_PRIVATE_H

#include "kx/tree.h"

#include "kx/list.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define BITS55 KX_INO_ID_MASK

#define CBUCKETS 4096
#define GBUCKETS 1024
#define PBUCKETS 256

#define CMP_SLOTS 2 /* generations of comparisons kept: the newest two asked for (compare.c) */
#define SIGMEMO_SLOTS 1024 /* signatures whose check is remembered (tree_signature_valid) */

/*
 * The root's files made of every group (top.c): index.tsv, regressions.tsv and .json, changes.tsv.
 * The newest rendered version of each is held here whatever its size — the content cache keeps
 * nothing larger than a quarter of its bound, and index.tsv of 100,000 runs is 33 MB, which every
 * read of a `cat` would otherwise render again — until a newer stamp (the store's generation)
 * replaces it, until TOP_IDLE_PUTS other files have been rendered since it was last read (a walk
 * that stats it, `ls -lR` or `rsync`, then goes on without holding it), or, once the slots hold
 * more than TOP_KEEP_BYTES, until another of them is built while nobody reads it: at 100,000 runs
 * `cat index.tsv changes.tsv` holds one whole file at a time, not both (34 and 31 MB), while two
 * readers reading both at once keep both. Its reader reads it within microseconds a piece, and the
 * kernel's page cache keeps what was read (keep_cache). The slots are cache.c's (tree_top_get,
 * tree_top_keep), beside the content cache.
 */
enum { TOP_INDEX, TOP_REGRESSIONS, TOP_REGRESSIONS_JSON, TOP_CHANGES, TOP__COUNT };
#define TOP_IDLE_PUTS 4096
#define TOP_KEEP_BYTES (48u << 20)

struct top_slot {
	int64_t stamp;
	const struct kx_content *c;
	uint64_t used; /* kx_tree.puts when it was kept or last read */
	uint64_t read; /* kx_tree.top_reads when it was kept or last read */
};

/* The tree: its store, the bound of its caches, and each file's state, under the locks named. */
struct kx_tree {
	struct kx_store *s;
	size_t limit;
	pthread_mutex_t lock;
	/* cache.c */
	struct bench_dir *bench[256];
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
	struct group_slot *groups; /* likewise (group.c reads and fills them) */
	size_t ngroups;
	struct gstamp_slot *gstamps; /* likewise (group.c) */
	size_t ngstamps;
	struct doc_slot *docs;     /* likewise */
	size_t ndocs;
	struct extra_since {
		uint64_t since;    /* the oldest generation known to hold one; 0 none known */
		uint64_t none_at;  /* a generation known to hold none */
	} has[3];                  /* signatures, attestations, artifacts (tree_store_has) */
	struct kx_list plru; /* parsed documents, most recently used first */
	struct pdoc *phash[PBUCKETS];
	size_t npdocs;
	pthread_mutex_t uses_lock;  /* the table below; held while it is built */
	struct doc_uses *uses;      /* how many runs name each document (tree_doc_use) */
	struct top_slot top[TOP__COUNT];
	uint64_t puts;              /* files rendered into the content cache (tree_cache_put), under lock */
	struct sig_memo {          /* stored signatures checked again (tree_signature_valid), under lock */
		uint8_t h[KX_DIGEST_LEN]; /* sha256(run, public key, signature); zero: unused */
		bool valid;
	} sigmemo[SIGMEMO_SLOTS];
	uint64_t top_reads;         /* reads of the top slots (tree_top_get, tree_top_mark), under lock */
	struct kx_tree_stats stats;
	/* group.c */
	struct kx_list glru; /* group listings, most recently used first */
	struct gctx *ghash[GBUCKETS];
	size_t gbytes;
	/* compare.c */
	pthread_mutex_t cmp_lock;   /* held while a generation's comparisons are built */
	struct cmp_data *cmp[CMP_SLOTS];
	/* top.c */
	pthread_mutex_t top_lock;   /* held while a file of top.c is built (content.c), and for the three below */
	struct reg_state *reg;      /* regressions.tsv's rows by group, from its last build (NULL: none yet) */
	struct rows_state *index;   /* index.tsv's likewise */
	struct rows_state *changes; /* changes.tsv's likewise */
	/* index-kept.c */
	pthread_mutex_t stream_lock;  /* the one below */
	struct index_stream *stream;  /* index.tsv read from the rows kept, of one generation (NULL: none) */
	/* tree.c */
	pthread_mutex_t health_lock; /* the two below (kx_tree_set_health) */
	char *health;
	uint64_t health_serial;
};

/* ---- inode.c ------------------------------------------------------------------------------- */

/* The 55 bits of a digest an inode number carries. */
uint64_t tree_id55(const struct kx_digest *d);

/* The node type and file of an inode number, into n. */
void tree_ino_kind(uint64_t ino, struct kx_node *n);

/* ---- cache.c ------------------------------------------------------------------------------- */

/* A benchmark directory's path components by the 55 bits of its id (kx_tree.bench, never evicted). */
struct bench_dir {
	uint64_t key;
	uint8_t depth;
	char comp[3][KX_NAME_MAX];
	struct bench_dir *next;
};

/* A file's rendered bytes in the content cache. */
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
	char data[]; /* a small file's bytes, in the same allocation (c.data points here); a large
		      * one's are their own allocation (tree_cache_put) */
};

/* A parsed document, shared by its readers. */
struct pdoc {
	struct kx_digest d;
	uint64_t generation; /* of the view it was read in (UINT64_MAX: none) */
	struct kx_arena *arena;
	struct kx_json *json;
	int refs; /* one for the cache while cached; atomic (dropped without the tree lock) */
	struct kx_link lru; /* kx_tree.plru */
	struct pdoc *hnext;
};

/* A file's size by (content key, stamp): the sizes table (cache.c says what it spares). */
struct size_slot {
	uint64_t key;
	int64_t stamp;
	uint64_t size;
};

/*
 * The sizes of a run's files together, one slot per run (the files of the rank directory and of
 * runs/ share them, but for runs/' own index.html: RSIZE_RUNS_HTML): a listing with attributes of
 * every run directory — ls -lR, rsync — then renders each run once, not once per path, in 48
 * bytes per run. A run's slot is one of a set of
 * RSIZE_WAYS, most recently used first: `ls -lR` lists every run under benchmarks/ before any
 * under runs/, and a direct-mapped table lost a third or more of 100,000 runs in between (each
 * rendered again: a quarter of the daemon's time). A size is kept in 16 bits; a larger file's
 * goes to the sizes table.
 */
#define RSIZE_WAYS 4
#define RSIZE_UNKNOWN UINT16_MAX
#define RSIZE_RUNS_HTML KX_RF__COUNT /* runs/<id>/index.html */
#define RSIZE_FILES (KX_RF__COUNT + 1)

struct rsize_slot {
	uint64_t id;        /* the run's 55 inode bits, with bit 63 set when used */
	int64_t rank_stamp; /* the stamp of the rank-dependent sizes */
	uint16_t size[RSIZE_FILES];
};

/*
 * Group records with their stamp (the gpu directory's mtime), by comparison key and store
 * generation (group.c's tree_get_group): both change with every run added to the group, so an
 * entry serves exactly the views of its generation — which is every view until the store changes.
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
 * reads the store 150,000 times less and took 10% less time (docs/performance-log.md).
 */
struct gstamp_slot {
	uint64_t generation; /* 0: unused */
	struct kx_digest key;
	int64_t stamp;
};

/* Size and allocate the small caches from t->limit (kx_tree_new); -ENOMEM leaves none allocated. */
int tree_cache_init(struct kx_tree *t);

/* Free what the caches hold, and the caches (kx_tree_free, after the group listings). */
void tree_cache_release(struct kx_tree *t);

/* A slot for a key in a direct-mapped table of n slots, n a power of two. */
size_t tree_slot_of(uint64_t key, size_t n);

/* Whether run file f depends on the run's rank (summary.txt, SHA256SUMS, index.html …). */
bool tree_rank_dependent(int f);

/* Whether run file f differs by place, rank directory or runs/ (index.html, its links; SHA256SUMS,
 * which hashes it): the runs/ file is content of its own. Every other file of runs/<id>/ is the
 * rank directory's. */
bool tree_place_dependent(int f);

/* The run-sizes slot of a run file's key, moved to the front of its set; under t->lock. */
struct rsize_slot *tree_rsize_slot(struct kx_tree *t, uint64_t key, int *ret_file, bool take);

/* A file's size from the sizes caches, by content key and stamp. */
bool tree_size_get(struct kx_tree *t, uint64_t key, int64_t stamp, uint64_t *ret);

/* Keep a file's size in the sizes caches; under t->lock. */
void tree_size_put_locked(struct kx_tree *t, uint64_t key, int64_t stamp, uint64_t size);

/* The node of an inode number from the decoded-nodes cache. */
bool tree_node_get(struct kx_tree *t, uint64_t ino, struct kx_node *ret);

/* Keep the node of an inode number in the decoded-nodes cache. */
void tree_node_put(struct kx_tree *t, uint64_t ino, const struct kx_node *n);

/* Keep a run record read from the store. */
void tree_run_put(struct kx_tree *t, const struct kx_run_rec *rec);

/* A run record, through the run-records cache. */
int tree_get_run(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, struct kx_run_rec *ret);
/* SPEC §10: a run whose record claims measured evidence (kindex-bench's protocol and correctness
 * check) shows it only while a stored signature of it is by a key the store trusts; otherwise it
 * is submitted. Records are cached as stored; what they show is worked out as they are read
 * (tree_get_run, a group's listing), in view v. */
void tree_evidence(struct kx_tree *t, struct kx_view *v, struct kx_run_rec *x);

/* Whether view v stores any signature (SPEC §10) or any attestation (§8); and how many of run `run`
 * (0 without a read where none is stored). Both are only ever added, so a count names the set. */
enum tree_extra { TREE_SIGNATURES, TREE_ATTESTATIONS, TREE_ARTIFACTS };
int tree_store_has(struct kx_tree *t, struct kx_view *v, enum tree_extra what, bool *ret);
int tree_signature_count(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, uint32_t *ret);
int tree_attestation_count(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, uint32_t *ret);
/* How many of run `run`'s announced artifacts (SPEC §9) have their bytes stored in v. */
int tree_artifact_count(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, uint32_t *ret);

/* Whether sig, stored as key's signature of run, is that key's (pub) Ed25519 signature of the run's
 * digest string: checked again, and remembered, since SIGNATURES, summary.txt and index.html each
 * show the verdict and a check costs what rendering a file does. */
bool tree_signature_valid(struct kx_tree *t, const struct kx_digest *run, const struct kx_digest *key,
			  const uint8_t pub[KX_ED25519_PUB_LEN], const uint8_t sig[KX_ED25519_SIG_LEN]);

/* A document's stored bytes (out NULL: whether it is stored), counted in the stats. */
int tree_get_doc(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, struct kx_buf *out);

/* Whether document d is stored in view v (named_by: a run of v that names it, or NULL). */
bool tree_doc_in(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d,
		 const struct kx_digest *named_by);

/* Whether document d is stored in view v. */
bool tree_doc_exists(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d);

/* Whether run file f is one of the run's documents (protocol … implementation). */
bool tree_doc_role(int f);

/* The document a run's file f is. */
const struct kx_digest *tree_run_doc(const struct kx_run_rec *x, int f);

/* The node of file f of run x in a directory of type dir_type. */
struct kx_node tree_run_file_node(uint8_t dir_type, const struct kx_run_rec *x, int f);

/* Whether run x has file f in view v. */
bool tree_run_has(struct kx_tree *t, struct kx_view *v, const struct kx_run_rec *x, int f);

/* How many runs of v name document d, the earliest observedAt among them, and (ret_links not NULL)
 * the links of its file: 2 a run, 1 an alias (in runs/ only). */
int tree_doc_use(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, uint32_t *ret_runs,
	    int64_t *ret_first_ns, uint32_t *ret_links);

/* How many runs of v name document d, from the table alone; -ESTALE if it counts another view. */
int tree_uses_exact(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, uint32_t *ret_runs);

/* Bring the document-use table from view before to after, which added the runs `added`. */
int tree_uses_changed(struct kx_tree *t, struct kx_view *before, struct kx_view *after,
		 const struct kx_digest *added, size_t n);

/* Put one of the references counted in *refs (under t->lock); whether it was the last. */
bool tree_unref(struct kx_tree *t, int *refs);

/* The id of the benchmark directory of path components comp[0..depth). */
void tree_bench_id(uint8_t depth, char comp[3][KX_NAME_MAX], struct kx_digest *ret);

/* The node of a benchmark directory, remembered so that its inode number decodes. */
int tree_bench_node(struct kx_tree *t, uint8_t depth, char comp[3][KX_NAME_MAX], struct kx_node *ret);

/* The path components of a benchmark directory's node; -ESTALE if never seen. */
int tree_bench_comps(struct kx_tree *t, const struct kx_node *n, char comp[3][KX_NAME_MAX]);

/* Drop a content entry from the cache; under t->lock. */
void tree_cache_drop(struct kx_tree *t, struct centry *e);

/* Cached content by key and stamp, with a reference for the caller, or NULL. */
const struct kx_content *tree_cache_get(struct kx_tree *t, uint64_t ino, int64_t stamp);

/* Append the SHA256SUMS line of content c, named name, to out. */
int tree_sums_line(struct kx_buf *out, const char *name, const struct kx_content *c);

/* Cache buf's bytes: a copy of a small file; a large one's buffer is taken, leaving buf empty.
 * Returns the content with a reference for the caller. */
const struct kx_content *tree_cache_put(struct kx_tree *t, uint64_t ino, int64_t stamp, struct kx_buf *buf);

/* The content kept in top slot `slot` if its stamp is `stamp`, with a reference, or NULL. */
const struct kx_content *tree_top_get(struct kx_tree *t, int slot, int64_t stamp);

/* Let go of what top slot `slot` keeps (readers who hold it keep their references). */
void tree_top_drop(struct kx_tree *t, int slot);

/* A mark taken before a build (tree_top_keep lets go of the slots not read since). */
uint64_t tree_top_mark(struct kx_tree *t);

/* Keep content c (the caller keeps its reference) in top slot `slot`, in place of an older one,
 * built since `mark`; past TOP_KEEP_BYTES, the other slots that nobody read since are let go. */
void tree_top_keep(struct kx_tree *t, int slot, int64_t stamp, const struct kx_content *c, uint64_t mark);

/* Put a reference to a parsed document. */
void tree_pdoc_put(struct pdoc *p);

/* The parsed document d if stored in v, with a reference for the caller, or NULL. */
struct pdoc *tree_pdoc_get(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d,
		      const struct kx_digest *named_by);

/* ---- group.c ------------------------------------------------------------------------------- */

/* A group as listed: its runs in rank order with their directory names. Reference-counted. */
struct gctx {
	struct kx_digest key;
	int64_t stamp;
	struct kx_group_rec group;
	struct kx_run_rec *runs;
	char (*dirnames)[KX_NAME_MAX + 32];
	const char **dirptrs;
	uint32_t *by_digest; /* indexes of runs sorted by digest */
	int32_t *reruns;     /* each run's controlled rerun (kx_render_reruns) */
	size_t len;
	uint32_t ranked;
	char workload_dir[KX_NAME_MAX + 16];
	char path[5 * KX_NAME_MAX];
	struct pdoc *wdoc;      /* the workload document, shared (parsed documents, cache.c) */
	struct kx_json *workload_doc;
	size_t bytes;
	int refs;
	struct kx_link lru;       /* kx_tree.glru */
	struct gctx *hnext;       /* hash chain (kx_tree.ghash) */
};

/* A walk of the workload level of a gpu directory (tree_wl_walk), which decides each directory's name. */
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

/* A group record and its stamp, through the generation-scoped cache. */
int tree_get_group(struct kx_tree *t, struct kx_view *v, const struct kx_digest *key, struct kx_group_rec *ret,
		   int64_t *ret_stamp);

/* Whether the directory at `path` (benchmarks/<k>/<p>/<gpu>), whose time is now `now`, moved since
 * view before (NULL: unknown, so moved): what the writer's passes keep again, sizes and rows. */
bool tree_dir_moved(struct kx_tree *t, struct kx_view *before, const char *path, int64_t now);

/* A group's stamp (its gpu directory's mtime) alone. */
int tree_group_stamp(struct kx_tree *t, struct kx_view *v, const struct kx_digest *key, int64_t *ret);

/* Walk the workload level below benchmark path comp, deciding each directory name. */
int tree_wl_walk(struct kx_tree *t, struct kx_view *v, const char *const comp[3], struct wl_scan *w);

/* tree_wl_walk's steps, for a caller that lists the workload level itself: each entry in path order
 * (a kx_tree_fn), then the end of the directory. */
int tree_wl_feed(void *ctx, const char *name, const struct kx_digest *workload, const struct kx_digest *group,
		 bool cut);
int tree_wl_end(struct wl_scan *w);

/* A group's listing, cached, with a reference for the caller (tree_gctx_put). */
int tree_gctx_get(struct kx_tree *t, struct kx_view *v, const struct kx_digest *key, struct gctx **ret);

/* Put a reference to a group listing. */
void tree_gctx_put(struct kx_tree *t, struct gctx *g);

/* The position of a run in a group listing, or -1. */
ssize_t tree_gctx_find(const struct gctx *g, const struct kx_digest *run);

/* The hash chain of group listings a key belongs to; under t->lock. */
struct gctx **tree_ghash_slot(struct kx_tree *t, const struct kx_digest *key);

/* Drop a group listing from the cache; under t->lock. */
void tree_gcache_drop(struct kx_tree *t, struct gctx *g);

/* Free every listing the cache holds (kx_tree_free). */
void tree_groups_release(struct kx_tree *t);

/* ---- sweeps.c ------------------------------------------------------------------------------ */

/* The mtime of the benchmark directory of path components comp[0..depth) (0: benchmarks/). */
int tree_bench_mtime(struct kx_tree *t, struct kx_view *v, uint8_t depth, char comp[3][KX_NAME_MAX], int64_t *ret);

/* The files of benchmark directory dir, or of benchmarks/, in listing order — index.html of every
 * one; gpus.tsv of a pass; sweep.tsv and sweep.svg of a gpu — written to ret (BENCH_FILES_MAX),
 * their count returned (0: none). */
#define BENCH_FILES_MAX 3
/* The name of one of them (benchmarks/' page is a KX_NODE_HTML, the others KX_NODE_BENCH_FILE). */
const char *tree_bench_file_name(const struct kx_node *f);
size_t tree_bench_files_of(const struct kx_node *dir, struct kx_node ret[BENCH_FILES_MAX]);

/* A benchmark directory's file's stamp: the directory's mtime. */
int tree_bench_file_stamp(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t *ret);

/* The bytes of a benchmark directory's file other than its index.html (html.c's). */
int tree_bench_file_render(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct kx_buf *out);

/* ---- compare.c ----------------------------------------------------------------------------- */

/*
 * The comparisons of one store generation (docs/views.md "/compare/"): every group's current runs,
 * as a comparison needs them, and the pairs of implementations that share a group, with their
 * GPUs and stamps. Built in one pass over every group the first time a view of that generation
 * asks, immutable after; reference-counted (refs under kx_tree.lock). Names are offsets into
 * `text`; indexes into impls are in order of appearance, into gpus in kx_name_cmp's order. The parts only
 * compare.c reads (struct cmp_run, cmp_group, cmp_id) are declared there.
 */
struct cmp_dir {              /* benchmarks/<kernel>/<pass>/<gpu>, in path order */
	uint32_t kernel, pass;
	uint32_t gpu;
	uint32_t metric;      /* its groups' metric: an index into metrics */
	int64_t mtime;
	uint32_t first, len;  /* its groups, in workload directory name order */
};

struct cmp_pair {             /* compare/<cand>..<base>, in name order */
	uint32_t cand, base;
	uint32_t name;        /* "<cand>..<base>" */
	int64_t stamp;        /* its summary.tsv's and index.html's (and mtime): the newest of its gpu files' */
	struct kx_digest id;
	struct kx_digest html_id; /* its index.html's: a number of its own (cmp_id) */
	uint32_t first, len;  /* its gpu files: files[first..first+len), in gpu name order */
};

struct cmp_file {             /* compare/<cand>..<base>/<gpu>.tsv */
	uint32_t pair, gpu;
	int64_t stamp;        /* its mtime: the newest of the gpu directories holding its groups */
	struct kx_digest id;
};

/* A pair's files that are not gpu files, as a file index (tree_cmp_file_node, and compare.c) */
#define CMP_SUMMARY (-1) /* summary.tsv, or the pair directory: they share the pair's id */
#define CMP_HTML (-2)    /* index.html */

struct cmp_data {
	uint64_t generation;
	int refs;
	char *text;
	size_t text_len, text_cap;
	uint32_t *impls, *impl_order; /* names by index; indexes in name order */
	size_t nimpls;
	uint32_t *gpus;
	size_t ngpus;
	uint32_t *metrics;           /* names by index, in order of appearance */
	size_t nmetrics;
	struct cmp_dir *dirs;
	size_t ndirs;
	struct cmp_group *groups;    /* in path order: by dir, then workload directory name */
	struct kx_digest *keys;      /* each group's comparison key */
	size_t ngroups;
	struct cmp_run *runs;
	size_t nruns;
	struct cmp_pair *pairs;
	size_t npairs;
	struct cmp_file *files;
	size_t nfiles;
	struct cmp_id *ids;          /* by id55 */
	size_t nids;
	int64_t mtime;               /* compare/'s: the newest of its pairs' (0: none) */
};

#define CMP_GROUP_PAIRS_MAX 32 /* a group of more current runs forms no pair by itself (compare.c) */

/* The comparisons of view v's generation, built on the first call for it, with a reference for the
 * caller (tree_cmp_put). */
int tree_cmp_get(struct kx_tree *t, struct kx_view *v, struct cmp_data **ret);

/* View v's gpu directories and their groups (dirs, groups, keys; no runs, no pairs), built for the
 * caller alone and never kept: for the writer's pass, which lists them and needs no run, and whose
 * view runs ahead of the mount's, so that it never pushes out of the slots the generation the
 * notifier's next round peeks at (tree_cmp_peek). */
int tree_cmp_dirs(struct kx_tree *t, struct kx_view *v, struct cmp_data **ret);

/* Put a reference to a generation's comparisons. */
void tree_cmp_put(struct kx_tree *t, struct cmp_data *d);

/* The newest comparisons kept of a generation no newer than `generation`, with a reference, or
 * NULL: what the kernel may hold of compare/ was looked up in one of them or is no longer named. */
struct cmp_data *tree_cmp_peek(struct kx_tree *t, uint64_t generation);

/* Free the generations kept (kx_tree_free). */
void tree_compare_release(struct kx_tree *t);

/* Group i's workload directory name (top.c orders index.tsv's groups by it). */
const char *tree_cmp_group_name(const struct cmp_data *d, size_t i);

/* The pair "<cand>..<base>" by its two names, or -1. */
ssize_t tree_cmp_pair_of(const struct cmp_data *d, const char *cand, const char *base);

/* The gpu file of a pair on gpu, or -1. */
ssize_t tree_cmp_file_of(const struct cmp_data *d, size_t pair, const char *gpu);

/* The node of a pair's directory; of its gpu file `file`, or its summary.tsv (CMP_SUMMARY) or
 * index.html (CMP_HTML). */
struct kx_node tree_cmp_pair_node(const struct cmp_data *d, size_t pair);
struct kx_node tree_cmp_file_node(const struct cmp_data *d, size_t pair, ssize_t file);

/* The node of an inode number of compare/ (types KX_NODE_COMPARE…_FILE). */
int tree_compare_node(struct kx_tree *t, struct kx_view *v, uint64_t ino, struct kx_node *ret);

/* kx_tree_lookup, kx_tree_readdir and kx_tree_parent in compare/ and its pair directories. */
int tree_compare_lookup(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir, const char *name,
		   struct kx_node *ret);
int tree_compare_readdir(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir, kx_dirent_fn fn, void *ctx);
int tree_compare_parent(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct kx_node *ret);

/* The stamp of a compare node (a file's; its mtime, a directory's too; 0 for an empty compare/)
 * and its link count. */
int tree_compare_attr(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t *ret_stamp,
		 uint32_t *ret_nlink);
/* The mtime of compare/, a pair or a page of theirs with stamp `stamp`: the stamp, or the store's
 * creation while nothing is compared yet (stamp 0). */
int64_t tree_compare_mtime(struct kx_tree *t, struct kx_view *v, int64_t stamp);

/*
 * What the page of compare/ or of a pair directory shows beside its links (html.c): for a pair, the
 * rows of its summary.tsv and its two names; for compare/, every pair with its totals. Valid until
 * tree_compare_page_release.
 */
struct cmp_page {
	struct cmp_data *d;
	const char *cand, *base;
	struct kx_compare_row *rows;
	size_t nrows;
	struct kx_html_pair *pairs;
	size_t npairs;
};
int tree_compare_page(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir, struct cmp_page *ret);
void tree_compare_page_release(struct kx_tree *t, struct cmp_page *p);

/* A pair's file's name, and its bytes. */
int tree_compare_file_name(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, char *out, size_t cap);
int tree_compare_render(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct kx_buf *out);

/* ---- shortid.c ----------------------------------------------------------------------------- */

/* A walk of runs/ in digest order, naming each run once the next one is known. */
struct runs_walk {
	kx_dirent_fn fn;
	void *ctx;
	struct kx_digest prev;
	unsigned prev_common; /* shared with the one before prev */
	bool have;
};

/* kx_store_each_digest step of a walk of runs/: names the run before d. */
int tree_runs_step(void *ctx, const struct kx_digest *d);

/* Name the last run of a walk of runs/ (next_common 0 at the end). */
int tree_runs_emit(struct runs_walk *w, unsigned next_common);

/* The canonical runs/ name of run d. */
int tree_runs_canonical(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, char *out);

/* ---- run.c --------------------------------------------------------------------------------- */

/* What rendering a run needs: its view, with the references it holds. */
struct runv {
	struct kx_run_view v;
	struct kx_run_rec run;
	struct gctx *g;
	struct pdoc *docs[KX_DOC__COUNT];
	struct kx_digest *aliases; /* v.aliases (malloc'd) */
	struct kx_run_signature *signatures; /* v.signatures (malloc'd) */
	struct kx_run_attestation *attestations; /* v.attestations (malloc'd), with what they point to: */
	struct att_extra *att_extra;
	bool *received; /* v.artifact_received (malloc'd) */
	char alias_of_id[KX_DIGEST_HEX + 1], alias_of_path[8 * KX_NAME_MAX];
	char runs_id[KX_DIGEST_HEX + 1], best_runs_id[KX_DIGEST_HEX + 1]; /* v.runs_id, v.best_runs_id */
};

/* The name of an attestation's file under attestations/: "01-reproduction-0123456789ab.json". */
#define TREE_ATT_NAME_MAX 48
/* The name of a run directory's attestations/ (SPEC §8), and its node's file number: a rank
 * directory's or a runs/ directory's node with this file is its attestations/. */
#define TREE_ATTESTATIONS_DIR "attestations"
#define TREE_ATTESTATIONS_FILE 1
/* Likewise a run directory's artifacts/ (SPEC §9), where any of its artifacts' bytes are stored. */
#define TREE_ARTIFACTS_DIR "artifacts"
#define TREE_ARTIFACTS_FILE 2

/* RV_SIGNATURES: the stored signatures as stored (manifest.json); with RV_SIG_CHECKS each is
 * verified again and its key looked up (SIGNATURES): an Ed25519 check and a read a signature.
 * RV_NAMES: the names under runs/ of the run and of #1 (index.html's links; with RV_GROUP). */
enum { RV_GROUP = 1, RV_DOCS = 2, RV_ALIASES = 4, RV_SIGNATURES = 8, RV_SIG_CHECKS = 16, RV_ATTESTATIONS = 32,
       RV_NAMES = 64, RV_ARTIFACTS = 128 };

/* Load what rendering run `run` needs (RV_GROUP, RV_DOCS) into rv. */
int tree_runv_load_with(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, unsigned what,
		   struct runv *rv);

/* tree_runv_load_with everything. */
int tree_runv_load(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, struct runv *rv);

/* Put what tree_runv_load_with took. */
void tree_runv_release(struct kx_tree *t, struct runv *rv);

/* The render view of a group listing. */
void tree_group_view(const struct gctx *g, struct kx_group_view *gv);

/*
 * fn(ctx, name, node) for each attestation of run `run` (SPEC §8), oldest first: its name under
 * attestations/ and its file's node (KX_NODE_DOC_FILE, file KX_DOC_FILE_ATTESTATION). Nothing is
 * read for a run without any.
 */
int tree_run_attestations_of(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, kx_dirent_fn fn,
			     void *ctx);

/*
 * fn(ctx, name, node) for each artifact of run `run` whose bytes are stored (SPEC §9), in its
 * spec.artifacts order: its name under artifacts/ and its node (KX_NODE_DOC_FILE, file
 * KX_DOC_FILE_ARTIFACT, id its SHA-256). Nothing is read for a run without any.
 */
int tree_run_artifacts_of(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, kx_dirent_fn fn,
			  void *ctx);

/* fn(ctx, name, node) for each file a directory of run x lists. */
int tree_run_files_of(struct kx_tree *t, struct kx_view *v, uint8_t dir_type, const struct kx_run_rec *x,
		 kx_dirent_fn fn, void *ctx);

/* ---- html.c -------------------------------------------------------------------------------- */

/* index.html of directory dir (the root, benchmarks/ or one below it, a group, compare/ or a pair
 * directory); `read` gives the bytes of a file of it that the page shows as a table (content.c's
 * reader: html.c cannot call content.c, which calls it), with a reference it puts. */
int tree_html(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir,
	      int (*read)(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, const struct kx_content **ret),
	      struct kx_buf *out);

/* ---- top.c --------------------------------------------------------------------------------- */

/* index.tsv, regressions.tsv, regressions.json and changes.tsv of view v; under t->top_lock.
 * index.tsv is read from the rows the writer kept where they hold (index-kept.c). */
int tree_top_index(struct kx_tree *t, struct kx_view *v, struct kx_buf *out);
int tree_top_regressions(struct kx_tree *t, struct kx_view *v, struct kx_buf *out);
int tree_top_regressions_json(struct kx_tree *t, struct kx_view *v, struct kx_buf *out);
int tree_top_changes(struct kx_tree *t, struct kx_view *v, struct kx_buf *out);

/* Free the rows the last builds kept (kx_tree_free). */
void tree_top_release(struct kx_tree *t);

/*
 * index.tsv's order: the groups of d by kernel, pass, gpu and workload directory name, each
 * compared as people read names (kx_name_cmp: n1024 < n2048 < n16384), not byte by byte as d
 * holds them. Into order[0..d->ngroups).
 */
int tree_index_order(const struct cmp_data *d, uint32_t *order);

/* ---- index-kept.c --------------------------------------------------------------------------- */

/* A list of names: tree_name_add adds one (a copy; fn of kx_render_param_names), tree_names_settle
 * sorts it and drops repeats, tree_names_release frees it. */
struct tree_names {
	char **v;
	size_t n, cap;
};
int tree_name_add(void *ctx, const char *name);
void tree_names_settle(struct tree_names *x);
bool tree_names_equal(const struct tree_names *a, char *const *b, size_t nb);
void tree_names_release(struct tree_names *x);

/* The parameter names of group key's workload (its columns in index.tsv), into names. */
int tree_group_param_names(struct kx_tree *t, struct kx_view *v, const struct kx_digest *key,
			   struct tree_names *names);

/*
 * Keep index.tsv's rows in the store after the commits between views before and after (NULL: none
 * known): the rows of every group below a gpu directory whose time moved, or of every group where
 * the rows kept were not whole at before's generation, or where a group brings a new column.
 */
int tree_keep_index(struct kx_tree *t, struct kx_view *before, struct kx_view *after);

/* The names of group i of d, below gpu directory dir, that key its rows ('L'): kernel, pass, gpu,
 * workload directory. */
void tree_index_comp(const struct cmp_data *d, const struct cmp_dir *dir, size_t i, const char *comp[4]);

/* The id of index.tsv's columns, the parameter names (settled), that the rows kept carry. */
uint64_t tree_index_columns(const char *const *names, size_t n);

/* The head of the rows the writer kept (docs/store.md, 'L') where they are the whole file at v's
 * generation, made by this renderer; -ENOENT otherwise (nothing to release). */
int tree_index_head_at(struct kx_tree *t, struct kx_view *v, struct kx_index_head *ret);

/* index.tsv read from the rows the writer kept, where they are the whole file at v's generation:
 * its size, and a range of it (kx_tree_read_range); -ENOENT (read: -EAGAIN) where they are not. */
int tree_index_size(struct kx_tree *t, struct kx_view *v, uint64_t *ret);
int tree_index_read(struct kx_tree *t, struct kx_view *v, uint64_t off, void *buf, size_t len, size_t *ret_n);
void tree_index_stream_release(struct kx_tree *t); /* kx_tree_free */

/* ---- content.c ----------------------------------------------------------------------------- */

/* The version of a run's manifest.json in v: which of its late documents are missing, and how
 * many signatures it carries. */
int tree_manifest_stamp(struct kx_tree *t, struct kx_view *v, const struct kx_run_rec *x, int64_t *ret);

/* A file's stamp, and where asked for its mtime and link count. */
int tree_stamp_of(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t *ret_stamp,
		  int64_t *ret_mtime, uint32_t *ret_nlink);

/*
 * An artifact's bytes (SPEC §9), from one read of its record: their size (ret_size may be NULL),
 * its mtime — when they were stored — and its links, as digests/sha256/<hex> and under both
 * paths of each run that announces it (one for an alias).
 */
int tree_artifact_use(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, uint64_t *ret_size,
		      int64_t *ret_mtime, uint32_t *ret_links);

/* The key a file's content and size are cached under. */
uint64_t tree_content_key(const struct kx_node *n);

/* The size of file n of stamp `stamp`, computed and kept in the sizes cache. */
int tree_size_of(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t stamp, uint64_t *ret);

/* ---- sizes.c ------------------------------------------------------------------------------- */

/* The size of file n of stamp `stamp`: from the sizes cache, else (where `records`: a stat's, not the
 * writer's pass) from the record the writer kept for its directory (kx_tree_keep_sizes), which goes
 * into the cache whole, counted in the stats, else tree_size_of. */
int tree_size(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t stamp, bool records,
	      uint64_t *ret);

#endif
