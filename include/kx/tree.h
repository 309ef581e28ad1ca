/* SPDX-License-Identifier: MIT */
/*
 * The tree of SPEC §3 over a store: path ↔ store mapping, listings, attributes and file content,
 * shared by the FUSE daemon and `kindex export` (which is why an export is byte-identical to the
 * mount). No FUSE types here; the daemon adds the inbox on top.
 *
 * Nodes and inode numbers. A node is (type, file, id) where id is a digest: the run for run
 * directories and files, the comparison key for groups, the document digest for /digests and for
 * a run's documents' files (one node, so one inode, for every run naming the document: hard
 * links, with 2 x that many runs as link count), a hash of the path for benchmark directories.
 * The inode number is computed from the node (KX_INO_* below) —
 *
 *     ino = type << 59 | file << 55 | first 55 bits of id        (the root is always 1)
 *
 * — so it is the same across remounts, never reused for something else, and survives renames (a
 * rank directory keeps its inode when a new run shifts its rank). Decoding an inode number finds
 * the record by prefix, so the daemon keeps no inode table for runs, groups or documents. (The
 * daemon numbers the versions of the few files whose bytes change on its own: kx_node_versioned.)
 *
 * Caching: rendered content is cached by (inode, stamp), where the stamp changes whenever the
 * content can: immutable files have stamp 0, rank-dependent ones the mtime of their gpu
 * directory (bumped by every run added below it). Group listings are cached the same way. Both
 * caches are bounded in bytes by `cache_bytes`; beside them, fixed fractions of it hold file sizes,
 * decoded inode numbers, run and group records and parsed documents, each keyed so that it is
 * valid in every view it answers. A run's files under runs/ share the cache entries of its rank
 * directory's, but for its index.html, whose links are relative to where it is, and the
 * SHA256SUMS that hashes it. The one change a stamp cannot see — a workload or implementation document stored
 * after runs that named it by digest, which changes those runs' "immutable" files — is purged by
 * kx_tree_changes, which the daemon runs after every store change; a process that never writes
 * (kindex export) cannot meet it. All functions are thread-safe.
 */
#ifndef KX_TREE_H
#define KX_TREE_H

#include "kx/render.h"
#include "kx/store.h"

enum kx_node_type {
	KX_NODE_NONE,
	KX_NODE_ROOT,
	KX_NODE_README,
	KX_NODE_BENCHMARKS,
	KX_NODE_RUNS,
	KX_NODE_DIGESTS,
	KX_NODE_DIGESTS_SHA,
	KX_NODE_BENCH,      /* benchmarks/<kernel>[/<pass>[/<gpu>]]: depth 1..3 */
	KX_NODE_GROUP,      /* benchmarks/<k>/<p>/<g>/<workload> */
	KX_NODE_GROUP_FILE,
	KX_NODE_RUN,        /* a rank directory */
	KX_NODE_RUN_FILE,
	KX_NODE_RUNS_RUN,   /* runs/<shortid> */
	KX_NODE_RUNS_FILE,
	KX_NODE_DOC,        /* digests/sha256/<hex>.json */
	KX_NODE_DOC_FILE,   /* a run's protocol.json …: file = its enum kx_run_file, id = the document:
			     * one inode for every run that names it (hard links). Its inode number
			     * is KX_NODE_DOC's with that file (digests/ files have file 0). */
	KX_NODE_INDEX = 16,        /* /index.tsv: every run, one row */
	KX_NODE_BENCH_FILE = 17, /* a benchmark directory's file: file = enum kx_bench_file (gpus.tsv of a
				  * pass directory, sweep.tsv of a gpu directory), id = the directory's */
	KX_NODE_COMPARE = 18,      /* compare/ */
	KX_NODE_COMPARE_PAIR = 19, /* compare/<candidate>..<baseline>: id = a hash of the two names */
	KX_NODE_COMPARE_FILE = 20, /* a pair's file: file KX_CF_SUMMARY (summary.tsv, id = the pair's),
				    * KX_CF_GPU (<gpu>.tsv, id = a hash of the names and the gpu) or
				    * KX_CF_INDEX_HTML (index.html, id = a hash of the names and the page) */
	KX_NODE_REGRESSIONS = 21,  /* /regressions.tsv and .json: every series' open change point
				    * (file = enum kx_regressions_file) */
	KX_NODE_HTML = 22,         /* index.html of the root, benchmarks/ or compare/: file = enum kx_html_file */
	KX_NODE_CHANGES = 23,      /* /changes.tsv: every step of every series */
	KX_NODE__FS = 24,      /* 24..31 belong to the daemon: 24 numbers the inbox's files, */
	KX_NODE__VERSION = 31, /* 31 the versions of the files whose bytes change (src/fs/versions.c) */
};

/*
 * An inode number's fields, the one definition of its layout (inode.c encodes the tree's nodes; the
 * daemon's own numbers, types KX_NODE__FS and up, follow the same fields):
 *
 *     bits 63..59  type   enum kx_node_type: 0..23 the tree's, 24..31 the daemon's
 *     bits 58..55  file   enum kx_run_file or kx_group_file (a document's file: its run file)
 *     bits 54..0   id     the first 55 bits of the node's digest
 */
#define KX_INO_TYPE_SHIFT 59
#define KX_INO_FILE_SHIFT 55
#define KX_INO_FILE_MASK UINT64_C(15)
#define KX_INO_ID_MASK ((UINT64_C(1) << KX_INO_FILE_SHIFT) - 1)

static inline unsigned kx_ino_type(uint64_t ino)
{
	return (unsigned)(ino >> KX_INO_TYPE_SHIFT);
}

static inline unsigned kx_ino_file(uint64_t ino)
{
	return (unsigned)(ino >> KX_INO_FILE_SHIFT & KX_INO_FILE_MASK);
}

/* The number of a node type and file, before its id is or-ed in. */
static inline uint64_t kx_ino_of(unsigned type, unsigned file)
{
	return (uint64_t)type << KX_INO_TYPE_SHIFT | ((uint64_t)file & KX_INO_FILE_MASK) << KX_INO_FILE_SHIFT;
}

_Static_assert(KX_NODE_HTML < KX_NODE__FS && KX_NODE_CHANGES < KX_NODE__FS, "the tree's node types stay below the daemon's");
_Static_assert(KX_NODE__VERSION > KX_NODE__FS && KX_NODE__VERSION < 32, "a type is 5 bits, the daemon's distinct");
_Static_assert(KX_RF__COUNT <= 16 && KX_GF__COUNT <= 16, "a run's or a group's file is 4 bits");

/* The files of a compare/ pair directory (KX_NODE_COMPARE_FILE's file). */
enum kx_compare_file {
	KX_CF_SUMMARY,
	KX_CF_GPU,
	KX_CF_INDEX_HTML,
};

/* The pages that are nodes of their own, not a directory's file (KX_NODE_HTML's file). */
enum kx_html_file {
	KX_HTML_ROOT,
	KX_HTML_BENCHMARKS,
	KX_HTML_COMPARE,
};

/* The two forms of /regressions (KX_NODE_REGRESSIONS's file). */
enum kx_regressions_file {
	KX_REG_TSV,
	KX_REG_JSON,
};

struct kx_node {
	uint8_t type;
	uint8_t file;  /* enum kx_run_file / kx_group_file */
	uint8_t depth; /* KX_NODE_BENCH */
	struct kx_digest id;
};

struct kx_attr {
	uint64_t ino;
	bool dir;
	uint64_t size;
	uint32_t nlink;
	int64_t mtime_ns;
	int64_t stamp; /* files: the version of their content (see kx_node_versioned) */
};

struct kx_tree;

/* `cache_bytes`: the bound of each cache (content and group listings); 0 = 32 MiB. */
struct kx_tree *kx_tree_new(struct kx_store *s, size_t cache_bytes);
void kx_tree_free(struct kx_tree *t);
/*
 * What README says of the mount's health beside the store: a publisher that fails, pulls into a
 * followed replica that fail (lines, or NULL for none). README's stamp changes with it; the caller
 * tells the kernel (fs_set_health). Thread-safe.
 */
int kx_tree_set_health(struct kx_tree *t, const char *lines);
struct kx_store *kx_tree_store(struct kx_tree *t);

uint64_t kx_tree_ino(const struct kx_node *n);
/* Whether ino is a document's file in run directories: one inode for many paths (hard links). */
bool kx_tree_ino_linked(uint64_t ino);
/*
 * For the inode number of a runs/<id>/ directory or one of its files: the node it names if its run
 * is `run` (a runs/ entry's node), and the name that entry most likely has (the run's first
 * KX_SHORTID_LEN hex digits: longer only where two runs share them). False for any other inode.
 */
bool kx_tree_ino_runs_name(uint64_t ino, char name[KX_SHORTID_LEN + 1]);
bool kx_tree_ino_of_run(uint64_t ino, const struct kx_node *run, struct kx_node *ret);
/* -ENOENT for an inode number that names nothing (e.g. a run that is gone), -ESTALE for a
 * benchmark directory this process has not seen. */
int kx_tree_node(struct kx_tree *t, struct kx_view *v, uint64_t ino, struct kx_node *ret);
bool kx_node_is_dir(const struct kx_node *n);
/* The directory that holds n (the root for the root itself): ".." of a listing. */
int kx_tree_parent(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct kx_node *ret);

int kx_tree_lookup(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir, const char *name,
		   struct kx_node *ret);
/* A path relative to the root ("benchmarks/…", "" for the root). -ENOENT; -ENOTDIR for a path
 * that goes on past a file, a '/' included ("README/", "README/x"). */
int kx_tree_resolve(struct kx_tree *t, struct kx_view *v, const char *path, struct kx_node *ret);

/* Entries of a directory in a stable order ("." and ".." not included). Stop early by returning
 * non-zero from fn. */
typedef int (*kx_dirent_fn)(void *ctx, const char *name, const struct kx_node *n);
int kx_tree_readdir(struct kx_tree *t, struct kx_view *v, const struct kx_node *dir, kx_dirent_fn fn,
		    void *ctx);

int kx_tree_getattr(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct kx_attr *ret);

/*
 * Versioned files: the README, index.tsv, regressions.tsv, changes.tsv, the files that follow a group's ranks (its ranking.tsv,
 * ranking.json, GROUP.json and SHA256SUMS; its runs' summary.txt, index.html and SHA256SUMS, in both places)
 * the benchmark directories' gpus.tsv and sweep.tsv and the files of compare/ change content when
 * runs are added; no other file does (but for the rare late document, which changes some files of
 * the runs that named it in place, and a signature stored for a stored run, which changes its
 * manifest.json: kx_tree_changes). Their content is a
 * function of (node, stamp) — the stamp changes whenever runs are added — so a daemon that gives each
 * (node, stamp) an inode number of its own serves every version as an immutable file, the way a
 * file replaced by rename(2) keeps its old bytes for whoever has it open (src/fs/versions.c).
 * kx_tree_stamp: a file's stamp in view v (what kx_attr.stamp says, without computing a size).
 */
#define KX_STAMP_NONE INT64_MIN
bool kx_node_versioned(const struct kx_node *n);
int kx_tree_stamp(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t *ret);
/* The name of file n in its directory ("README", "ranking.tsv", "nvidia-a100-sxm4-80gb.tsv" …);
 * -EISDIR for a directory, -ENOENT for a file that is not in view v. */
int kx_tree_file_name(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, char *out, size_t cap);

/*
 * The implementations compare/ pairs (docs/views.md): every name with a current run in some group
 * of view v, in byte order, once each to fn (stop early by returning non-zero). A pair directory
 * exists for two of them that share a group.
 */
int kx_tree_compare_impls(struct kx_tree *t, struct kx_view *v, int (*fn)(void *ctx, const char *impl), void *ctx);

/*
 * The content of a file: a reference-counted, immutable byte string, valid until
 * kx_content_put. -EISDIR for directories.
 */
struct kx_content {
	const char *data;
	size_t len;
};
int kx_tree_read(struct kx_tree *t, struct kx_view *v, const struct kx_node *n,
		 const struct kx_content **ret);
void kx_content_put(const struct kx_content *c);
/*
 * An artifact's bytes (SPEC §9: KX_NODE_DOC_FILE, file KX_DOC_FILE_ARTIFACT) are never read
 * whole — kx_tree_read answers -EFBIG for one —, but in ranges: up to len bytes from off into
 * buf, their count into *ret_n (less only at the end).
 */
bool kx_node_is_artifact(const struct kx_node *n);
/*
 * A range of file n read without reading it whole, where it can be (kx_node_read_in_ranges): an
 * artifact's, and /index.tsv's where the rows the writer kept are the whole file at v's generation
 * (docs/store.md, 'L'); up to len bytes from off into buf, their count into *ret_n. -EAGAIN: this
 * file is read whole (kx_tree_read). Such a file is not one to render ahead whole (a pusher's).
 */
bool kx_node_read_in_ranges(const struct kx_node *n);
int kx_tree_read_range(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, uint64_t off, void *buf,
		       size_t len, size_t *ret_n);
int kx_tree_read_artifact(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, uint64_t off, void *buf,
			  size_t len, size_t *ret_n);

/* The current tree path of a run ("benchmarks/…/02-liger-e6eff4c05fb7"). */
int kx_tree_run_path(struct kx_tree *t, struct kx_view *v, const struct kx_digest *run, char *out,
		     size_t cap);

/* Extended attributes of a node: names ("user.kindex.digest" …) and values. */
int kx_tree_xattr_list(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct kx_buf *out);
int kx_tree_xattr_get(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, const char *name,
		      struct kx_buf *out);

/*
 * What a kernel that caches the tree must forget after the store went from view `before` to view
 * `after` (the FUSE daemon's notifier). `runs` are the runs that were added (NULL: find them from
 * the generations, a scan of every run). fn receives, once each:
 *   KX_INVAL_ENTRY  name `name` in directory `ino` appeared, disappeared or names another node
 *                   (new runs shift ranks, which renames rank directories);
 *   KX_INVAL_DATA   the attributes and the content of `ino` changed (a file's bytes, a listing);
 *   KX_INVAL_ATTR   only the attributes of `ino` changed (an mtime that follows its gpu directory).
 * For a versioned file (kx_node_versioned: DATA or ATTR), `stamp` is the stamp it had in
 * `before` (KX_STAMP_NONE when it was not there): the version a kernel may still hold; for
 * everything else it is KX_STAMP_NONE.
 * Names that did not change are never reported (invalidating a directory's entry would drop the
 * kernel's cache of everything below it). A non-zero return of fn stops the walk and is returned.
 * It also forgets, in this tree's own caches, what a stamp cannot tell is stale (see above).
 */
enum kx_inval {
	KX_INVAL_ENTRY,
	KX_INVAL_DATA,
	KX_INVAL_ATTR,
};
typedef int (*kx_inval_fn)(void *ctx, enum kx_inval what, uint64_t ino, const char *name, int64_t stamp);
/*
 * `held` (NULL: everything may be): whether the consumer may hold directory `ino` — a kernel that
 * does not hold a directory holds nothing below it. The walk below a gpu directory (every group of
 * it, every run of those groups) is skipped when neither that directory nor runs/ may be held.
 */
typedef bool (*kx_held_fn)(void *ctx, uint64_t ino);
int kx_tree_changes(struct kx_tree *t, struct kx_view *before, struct kx_view *after,
		    const struct kx_digest *runs, size_t n, kx_inval_fn fn, kx_held_fn held, void *ctx);

struct kx_tree_stats {
	uint64_t content_hits, content_misses, group_hits, group_misses;
	uint64_t doc_reads; /* documents read from the store (whatever their size: a document is one value) */
	size_t content_bytes, group_bytes;
	size_t top_bytes; /* index.tsv's and regressions.tsv's bytes held beside the content cache */
	/* the sizes of run and group files a stat asked for: from the writer's records, and rendered
	 * because none held (kx_tree_keep_sizes) */
	uint64_t sizes_stored, sizes_rendered;
	/* index.tsv: generations read a range at a time from the rows the writer kept; builds whole
	 * from them alone, and rendered (copying the rows kept that still hold) */
	uint64_t index_streamed, index_kept, index_rendered;
};
void kx_tree_stats(struct kx_tree *t, struct kx_tree_stats *ret);

/*
 * The writer's pass after its commits (docs/store.md, 'Z'): renders every file of every group below
 * each gpu directory whose time moved from `before` to `after` (before NULL: every group), and of
 * every run of those groups, and keeps their sizes in the store, so that a mount answers `stat` of
 * them without rendering (what a size holds for: src/tree/sizes.c). fn(ctx, done, total) is called
 * as groups are done; *ret_runs (may be NULL) says how many runs were sized. Aliases, documents,
 * attestations and the views above the groups are sized as before, when asked. -EROFS: a
 * read-only store.
 */
typedef void (*kx_sizes_progress_fn)(void *ctx, size_t done, size_t total);
int kx_tree_keep_sizes(struct kx_tree *t, struct kx_view *before, struct kx_view *after, kx_sizes_progress_fn fn,
		       void *ctx, size_t *ret_runs);

#endif
