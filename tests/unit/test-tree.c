// SPDX-License-Identifier: MIT
/*
 * The tree of SPEC §3 without FUSE: the path ↔ store mapping the daemon serves and `kindex export`
 * writes. Over the bundled Liger import: every entry of every directory looks up to the same node,
 * decodes back from its inode number, names its parent, has attributes that match its content,
 * and keeps its inode number, size and mtime when the store is reopened (a remount); the published
 * ranking holds. Over hand-made manifests: kx_tree_changes reports exactly what a new run changes
 * — the rank directories it renames, its own names, the files whose bytes move — and nothing that
 * did not change, which is what keeps the daemon's kernel caches both long-lived and right.
 *
 * Needs KX_SOURCE_ROOT (set by meson) for examples/liger/all_benchmark_data.csv.
 */
#include "tap.h"

#include "kx/ingest.h"
#include "kx/liger.h"
#include "kx/tree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/kx-test-tree.XXXXXX";

static struct kx_store *open_store(const char *name, unsigned flags)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	struct kx_store *s = NULL;
	char *err = NULL;
	int r = kx_store_open(path, flags, &s, &err);
	if (r < 0)
		diag("cannot open store %s: %s", path, err ? err : strerror(-r));
	free(err);
	return s;
}

/* ---- part 1: the Liger tree ------------------------------------------------------------------- */

static int import_liger(struct kx_store *s)
{
	const char *root = getenv("KX_SOURCE_ROOT");
	char path[1024];
	snprintf(path, sizeof(path), "%s/examples/liger/all_benchmark_data.csv", root ? root : ".");
	struct kx_buf b = { 0 };
	int r = kx_read_file(path, 0, &b);
	if (r < 0) {
		diag("cannot read %s: %s", path, strerror(-r));
		return r;
	}
	struct kx_arena *a = kx_arena_new();
	struct kx_json **roots = NULL;
	const char **labels = NULL;
	size_t n = 0;
	struct kx_problems p;
	kx_problems_init(&p);
	r = kx_liger_build(a, path, b.ptr, b.len, &roots, &labels, &n, &p);
	struct kx_ingest_result res = { 0 };
	if (r == 0)
		r = kx_ingest_trees(s, a, roots, n, labels, NULL, &res, &p);
	if (r < 0)
		diag("import failed: %s (%zu problems)", strerror(-r), p.len);
	kx_ingest_result_release(&res);
	kx_problems_release(&p);
	free(roots);
	free(labels);
	kx_arena_free(a);
	kx_buf_release(&b);
	return r;
}

struct seen {
	uint64_t ino;
	uint32_t nlink; /* a file's; 0 for directories */
};

struct walk {
	struct kx_tree *t;
	struct kx_view *v;
	const struct kx_node *dir; /* being listed */
	struct seen *inos;
	size_t len, cap;
	size_t files, dirs, bad_lookup, bad_decode, bad_parent, bad_attr;
	char path[4096];
	const char *first_bad;
};

static void note_bad(struct walk *w, size_t *counter)
{
	if ((*counter)++ == 0 && !w->first_bad)
		w->first_bad = strdup(w->path);
}

static int walk_dir(struct walk *w, const struct kx_node *dir);

static int walk_entry(void *ctx, const char *name, const struct kx_node *n)
{
	struct walk *w = ctx;
	size_t plen = strlen(w->path);
	snprintf(w->path + plen, sizeof(w->path) - plen, "/%s", name);
	uint64_t ino = kx_tree_ino(n);
	if (w->len == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 4096;
		w->inos = realloc(w->inos, w->cap * sizeof(*w->inos));
	}
	struct seen *me = &w->inos[w->len++];
	*me = (struct seen){ ino, 0 };

	/* the name looks up to the same node, whose inode number decodes back to it */
	struct kx_node dir, looked, decoded;
	if (kx_tree_lookup(w->t, w->v, w->dir, name, &looked) < 0 || kx_tree_ino(&looked) != ino)
		note_bad(w, &w->bad_lookup);
	if (kx_tree_node(w->t, w->v, ino, &decoded) < 0 || kx_tree_ino(&decoded) != ino ||
	    memcmp(&decoded.id, &n->id, sizeof(n->id)) != 0)
		note_bad(w, &w->bad_decode);
	/* an inode below runs/ decodes through its run's entry there too (the daemon tries that first) */
	char rname[KX_SHORTID_LEN + 1], rpath[64];
	struct kx_node run;
	bool in_runs = n->type == KX_NODE_RUNS_RUN || n->type == KX_NODE_RUNS_FILE;
	if (kx_tree_ino_runs_name(ino, rname) != in_runs) {
		note_bad(w, &w->bad_decode);
	} else if (in_runs) {
		snprintf(rpath, sizeof(rpath), "runs/%s", rname);
		if (kx_tree_resolve(w->t, w->v, rpath, &run) < 0 || !kx_tree_ino_of_run(ino, &run, &decoded) ||
		    decoded.type != n->type || decoded.file != n->file || kx_tree_ino(&decoded) != ino ||
		    memcmp(&decoded.id, &n->id, sizeof(n->id)) != 0)
			note_bad(w, &w->bad_decode);
	}
	(void)dir;

	struct kx_attr a;
	if (kx_tree_getattr(w->t, w->v, n, &a) < 0 || a.ino != ino || a.dir != kx_node_is_dir(n)) {
		note_bad(w, &w->bad_attr);
	} else if (a.dir) {
		w->dirs++;
		if (a.nlink < 2)
			note_bad(w, &w->bad_attr);
		walk_dir(w, n);
	} else {
		w->files++;
		const struct kx_content *c;
		/* the size a tool relies on is the size of what it will read */
		me->nlink = a.nlink; /* counted against the walk below */
		if (a.nlink < 1 || kx_tree_read(w->t, w->v, n, &c) < 0)
			note_bad(w, &w->bad_attr);
		else if (c->len != a.size || a.size == 0)
			note_bad(w, &w->bad_attr);
		else
			kx_content_put(c);
	}
	w->path[plen] = '\0';
	return 0;
}

/* every entry's parent is the directory that listed it */
struct parent_check {
	struct walk *w;
	uint64_t dir_ino;
};

static int check_parent(void *ctx, const char *name, const struct kx_node *n)
{
	struct parent_check *pc = ctx;
	struct kx_node p;
	int r = kx_tree_parent(pc->w->t, pc->w->v, n, &p);
	if (n->type == KX_NODE_DOC_FILE ? r != -ENOENT : r < 0 || kx_tree_ino(&p) != pc->dir_ino)
		note_bad(pc->w, &pc->w->bad_parent); /* a document's file is linked from many: it has none */
	return 0;
}

static int walk_dir(struct walk *w, const struct kx_node *dir)
{
	struct parent_check pc = { w, kx_tree_ino(dir) };
	kx_tree_readdir(w->t, w->v, dir, check_parent, &pc);
	const struct kx_node *up = w->dir;
	w->dir = dir;
	int r = kx_tree_readdir(w->t, w->v, dir, walk_entry, w);
	w->dir = up;
	return r;
}

static int cmp_seen(const void *a, const void *b)
{
	uint64_t x = ((const struct seen *)a)->ino, y = ((const struct seen *)b)->ino;
	return x < y ? -1 : x > y;
}

struct first_names {
	char names[KX_GF__COUNT + 2][160]; /* the group's files, then its first two runs */
	size_t len;
};

static int take_names(void *ctx, const char *name, const struct kx_node *n)
{
	struct first_names *f = ctx;
	if (f->len < KX_ARRAY_SIZE(f->names))
		snprintf(f->names[f->len++], sizeof(f->names[0]), "%s", name);
	return 0;
}

struct count {
	size_t n;
};

static int count_entry(void *ctx, const char *name, const struct kx_node *n)
{
	((struct count *)ctx)->n++;
	return 0;
}

static size_t count_dir(struct kx_tree *t, struct kx_view *v, const char *path)
{
	struct kx_node n;
	struct count c = { 0 };
	if (kx_tree_resolve(t, v, path, &n) == 0)
		kx_tree_readdir(t, v, &n, count_entry, &c);
	return c.n;
}

#define SIMPO "benchmarks/fused_linear_simpo_loss/forward/nvidia-a100-sxm4-80gb/batch4-hidden4096-seq1024-vocab128256-bf16"

static const char *const sample_paths[] = {
	"", "README", "benchmarks", "runs", "digests", "digests/sha256", SIMPO, SIMPO "/ranking.tsv", SIMPO "/SHA256SUMS",
	"benchmarks/fused_linear_simpo_loss", "benchmarks/fused_linear_simpo_loss/forward",
};

struct stat_rec {
	uint64_t ino, size;
	int64_t mtime;
};

static void test_liger(void)
{
	struct kx_store *s = open_store("liger", KX_STORE_CREATE);
	if (!ok(s != NULL, "create a store") || !ok(import_liger(s) == 0, "import the bundled Liger CSV"))
		return;
	struct kx_tree *t = kx_tree_new(s, 0);
	struct kx_view *v = kx_store_view(s);
	struct kx_store_stats st;
	kx_store_stats(s, v, &st);
	ok(st.runs > 2000, "the import holds %llu runs", (unsigned long long)st.runs);

	struct kx_node n;
	ok(kx_tree_resolve(t, v, "", &n) == 0 && n.type == KX_NODE_ROOT && kx_tree_ino(&n) == 1,
	   "the root is inode 1 (FUSE_ROOT_ID)");

	/* SPEC §5's known check, through the tree's names */
	struct first_names f = { 0 };
	int r = kx_tree_resolve(t, v, SIMPO, &n);
	if (ok(r == 0 && n.type == KX_NODE_GROUP, "the simpo group resolves"))
		kx_tree_readdir(t, v, &n, take_names, &f);
	const size_t nf = KX_GF__COUNT; /* the group's files come first, SHA256SUMS last of them */
	ok(f.len >= nf + 2 && strcmp(f.names[0], "ranking.tsv") == 0 && strcmp(f.names[nf - 1], "SHA256SUMS") == 0,
	   "a group lists its %zu files first", nf);
	ok(f.len >= nf + 2 && strncmp(f.names[nf], "01-huggingface-", 15) == 0 && strncmp(f.names[nf + 1], "02-liger-", 9) == 0,
	   "huggingface ranks 1 and liger 2 (%s, %s)", f.len > nf ? f.names[nf] : "-", f.len > nf + 1 ? f.names[nf + 1] : "-");

	/* flat listings agree with the store's counts */
	ok(count_dir(t, v, "runs") == st.runs, "runs/ lists every run once");
	ok(count_dir(t, v, "digests/sha256") == st.documents, "digests/sha256/ lists every document once");

	/* lookups that must fail, and how */
	struct kx_node x;
	char shortid[200] = "";
	struct first_names rn = { 0 };
	if (kx_tree_resolve(t, v, "runs", &x) == 0)
		kx_tree_readdir(t, v, &x, take_names, &rn);
	snprintf(shortid, sizeof(shortid), "%s", rn.len ? rn.names[0] : "");
	char upper[200], path[512];
	for (size_t i = 0; i <= strlen(shortid); i++)
		upper[i] = (char)(shortid[i] >= 'a' && shortid[i] <= 'f' ? shortid[i] - 32 : shortid[i]);
	snprintf(path, sizeof(path), "runs/%s", shortid);
	ok(strlen(shortid) == 12 && kx_tree_resolve(t, v, path, &x) == 0 && x.type == KX_NODE_RUNS_RUN,
	   "runs/%s resolves", shortid);
	snprintf(path, sizeof(path), "runs/%s", upper);
	ok(strcmp(upper, shortid) == 0 || kx_tree_resolve(t, v, path, &x) == -ENOENT, "runs/<SHORTID> in upper case does not");
	snprintf(path, sizeof(path), "runs/%.11s", shortid);
	ok(kx_tree_resolve(t, v, path, &x) == -ENOENT, "runs/<11 digits> does not");
	struct kx_node mine, other, manifest, got;
	char other_path[512];
	snprintf(path, sizeof(path), "runs/%s", shortid);
	snprintf(other_path, sizeof(other_path), "runs/%s", rn.len > 1 ? rn.names[1] : "");
	bool both = kx_tree_resolve(t, v, path, &mine) == 0 && kx_tree_resolve(t, v, other_path, &other) == 0;
	snprintf(path, sizeof(path), "runs/%s/manifest.json", shortid);
	ok(both && kx_tree_resolve(t, v, path, &manifest) == 0 &&
	   kx_tree_ino_of_run(kx_tree_ino(&manifest), &mine, &got) &&
	   kx_tree_ino(&got) == kx_tree_ino(&manifest) && !kx_tree_ino_of_run(kx_tree_ino(&manifest), &other, &got),
	   "a runs/ inode decodes through its own run's entry, not another's");
	snprintf(path, sizeof(path), "runs/%s/manifest.json/x", shortid);
	ok(kx_tree_resolve(t, v, path, &x) == -ENOTDIR, "a name below a file is ENOTDIR");
	ok(kx_tree_resolve(t, v, "benchmarks/no-such-kernel", &x) == -ENOENT, "an unknown kernel is ENOENT");
	ok(kx_tree_resolve(t, v, SIMPO "/01-nobody-000000000000", &x) == -ENOENT, "an unknown rank directory is ENOENT");
	ok(kx_tree_resolve(t, v, "digests/sha256/00", &x) == -ENOENT, "a malformed digest name is ENOENT");

	/* xattrs */
	struct kx_buf b = { 0 };
	snprintf(path, sizeof(path), "runs/%s", shortid);
	if (kx_tree_resolve(t, v, path, &x) == 0) {
		r = kx_tree_xattr_get(t, v, &x, "user.kindex.digest", &b);
		ok(r == 0 && b.len == 71 && strncmp(b.ptr, "sha256:", 7) == 0 && strncmp(b.ptr + 7, shortid, 12) == 0,
		   "user.kindex.digest of a run is its digest (%s)", b.ptr ? b.ptr : "-");
		kx_buf_reset(&b);
		ok(kx_tree_xattr_get(t, v, &x, "user.nope", &b) == -ENODATA, "an unknown xattr is ENODATA");
		kx_buf_reset(&b);
		ok(kx_tree_xattr_list(t, v, &x, &b) == 0 && memmem(b.ptr, b.len, "user.kindex.rank", 17) != NULL,
		   "a run lists user.kindex.rank");
		/* mtimes come from the data: observedAt for a run's immutable files */
		struct kx_run_rec rec;
		struct kx_node mf = { .type = KX_NODE_RUNS_FILE, .file = KX_RF_MANIFEST, .id = x.id };
		struct kx_attr a;
		ok(kx_store_get_run(s, v, &x.id, &rec) == 0 && kx_tree_getattr(t, v, &mf, &a) == 0 &&
		   a.mtime_ns == rec.observed_ns, "manifest.json carries the run's observedAt as mtime");
	}
	kx_buf_release(&b);

	/* index.tsv is held beside the content cache while it is read (its reader's pieces) ... */
	struct kx_node index_tsv;
	const struct kx_content *ic = NULL;
	struct kx_tree_stats ts;
	char *index_bytes = NULL;
	size_t index_len = 0;
	if (kx_tree_resolve(t, v, "index.tsv", &index_tsv) == 0 && kx_tree_read(t, v, &index_tsv, &ic) == 0) {
		index_len = ic->len;
		index_bytes = malloc(index_len + 1);
		if (index_bytes)
			memcpy(index_bytes, ic->data, index_len);
		kx_content_put(ic);
	}
	kx_tree_stats(t, &ts);
	ok(index_bytes && index_len > 64 * 1024 && ts.top_bytes >= index_len,
	   "index.tsv read (%zu bytes) is held beside the content cache", index_len);

	/* the whole tree, entry by entry */
	struct walk w = { .t = t, .v = v };
	struct kx_node root = { .type = KX_NODE_ROOT };
	walk_dir(&w, &root);
	/* ... and let go once thousands of other files have been rendered since it was last read */
	kx_tree_stats(t, &ts);
	ok(ts.top_bytes < index_len, "after the walk it is no longer held (%zu bytes held)", ts.top_bytes);
	ic = NULL;
	ok(index_bytes && kx_tree_read(t, v, &index_tsv, &ic) == 0 && ic->len == index_len &&
		   memcmp(ic->data, index_bytes, index_len) == 0,
	   "read again, it is built again with the same bytes");
	kx_content_put(ic);
	free(index_bytes);
	diag("walked %zu directories and %zu files", w.dirs, w.files);
	if (w.first_bad)
		diag("first problem at %s", w.first_bad);
	ok(w.files > 40000 && w.dirs > 5000, "the walk reached the whole tree");
	ok(w.bad_lookup == 0, "every entry looks up to its own node (%zu do not)", w.bad_lookup);
	ok(w.bad_decode == 0, "every inode number decodes back to its node (%zu do not)", w.bad_decode);
	ok(w.bad_parent == 0, "every entry's parent is the directory that lists it (%zu not)", w.bad_parent);
	ok(w.bad_attr == 0, "every entry's attributes agree with its content (%zu do not)", w.bad_attr);
	/* an inode number is met once per link: once, or a document's file in every run naming it */
	qsort(w.inos, w.len, sizeof(*w.inos), cmp_seen);
	size_t wrong = 0, linked = 0;
	for (size_t i = 0, j; i < w.len; i = j) {
		for (j = i + 1; j < w.len && w.inos[j].ino == w.inos[i].ino;)
			j++;
		uint32_t want = w.inos[i].nlink ? w.inos[i].nlink : 1;
		wrong += j - i != want;
		linked += j - i > 1;
	}
	ok(wrong == 0 && linked > 0,
	   "every inode number is met as often as it has links (%zu are not; %zu have more than one)", wrong, linked);
	free(w.inos);
	free((void *)w.first_bad);

	/* a remount: same inode numbers, sizes and mtimes */
	struct stat_rec before[KX_ARRAY_SIZE(sample_paths) + 1];
	char run_path[256];
	snprintf(run_path, sizeof(run_path), "runs/%s/summary.txt", shortid);
	for (size_t i = 0; i <= KX_ARRAY_SIZE(sample_paths); i++) {
		const char *p = i < KX_ARRAY_SIZE(sample_paths) ? sample_paths[i] : run_path;
		struct kx_attr a = { 0 };
		if (kx_tree_resolve(t, v, p, &x) == 0)
			kx_tree_getattr(t, v, &x, &a);
		before[i] = (struct stat_rec){ a.ino, a.size, a.mtime_ns };
	}
	kx_view_release(v);
	kx_tree_free(t);
	kx_store_close(s);
	s = open_store("liger", KX_STORE_READONLY);
	if (!ok(s != NULL, "reopen the store"))
		return;
	t = kx_tree_new(s, 1 << 20); /* a small cache this time: nothing may depend on it */
	v = kx_store_view(s);
	size_t same = 0;
	for (size_t i = 0; i <= KX_ARRAY_SIZE(sample_paths); i++) {
		const char *p = i < KX_ARRAY_SIZE(sample_paths) ? sample_paths[i] : run_path;
		struct kx_attr a = { 0 };
		if (kx_tree_resolve(t, v, p, &x) == 0)
			kx_tree_getattr(t, v, &x, &a);
		same += a.ino && a.ino == before[i].ino && a.size == before[i].size && a.mtime_ns == before[i].mtime;
	}
	ok(same == KX_ARRAY_SIZE(sample_paths) + 1, "inode, size and mtime are the same after reopening (%zu of %zu)",
	   same, KX_ARRAY_SIZE(sample_paths) + 1);
	kx_view_release(v);
	kx_tree_free(t);

	/*
	 * A cache far smaller than the tree: the runs' file sizes are kept in sets shared by dozens
	 * of runs (benchmarks/ sets them, runs/ finds most of them evicted), content is rendered
	 * again and again — and every size still has to be the size read.
	 */
	t = kx_tree_new(s, 64 << 10);
	v = kx_store_view(s);
	struct walk small = { .t = t, .v = v };
	walk_dir(&small, &root);
	if (small.first_bad)
		diag("first problem at %s", small.first_bad);
	ok(small.files == w.files && small.bad_attr == 0,
	   "with a 64 KiB cache, every entry's attributes still agree with its content (%zu of %zu files; %zu do not)",
	   small.files, w.files, small.bad_attr);
	free(small.inos);
	free((void *)small.first_bad);
	kx_view_release(v);
	kx_tree_free(t);
	kx_store_close(s);
}

/* ---- part 2: what a new run changes ----------------------------------------------------------- */

/*
 * A source-native manifest after the published fused_linear_cross_entropy record
 * (tests/data/fixtures/flce-forward-a100.manifest.json): protocol and environment included,
 * workload and implementation by reference only, so kernel, implementation and workload come from
 * the externalId.
 */
#define FLCE_WORKLOAD "sha256:c3fd7dcabc481639ad1bb6c563ca6279f254358aca177e511ac7f140be9a3fb5"
static const char *workload_digest = FLCE_WORKLOAD;
static const char *workload_doc; /* when set, included as the manifest's "workload" */

static int make_manifest(struct kx_buf *out, const char *kernel, const char *impl, long median, int second)
{
	char ts[32], when[40];
	snprintf(ts, sizeof(ts), "2024-11-22-17-44-%02d", second);
	snprintf(when, sizeof(when), "2024-11-22T17:44:%02d.000Z", second);
	return kx_buf_printf(out,
		"{\"run\":{\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"kind\":\"BenchmarkRun\","
		"\"metadata\":{\"name\":\"test-%s-%s-%d\"},"
		"\"spec\":{\"status\":\"passed\",\"timing\":{\"latencyNs\":{\"median\":%ld},\"primaryStatistic\":\"median\"},"
		"\"observedAt\":\"%s\","
		"\"measurements\":[{\"unit\":\"ns\",\"value\":%ld,\"metric\":\"latency\",\"statistic\":\"p20\"},"
		"{\"unit\":\"ns\",\"value\":%ld,\"metric\":\"latency\",\"statistic\":\"p80\"}],"
		"\"sourceNative\":{\"source\":\"liger-kernel-bench\",\"metrics\":{\"ms_50\":%g},\"benchmark\":\"%s/forward\","
		"\"externalId\":\"%s/forward/%s/nvidia-a100-sxm4-80gb/hidden4096-tokens16384-vocab128256-bf16/%s\"},"
		"\"protocolDigest\":\"sha256:a79eaf4df66c97c6adc1fb2d09df78682155d1ea86652ae0b70199875bde7747\","
		"\"workloadDigest\":\"%s\","
		"\"environmentDigest\":\"sha256:90c9e2764222f592477cfccf3373519add5a1b881563956ad058c4f99e41b6b9\","
		"\"implementationDigest\":\"sha256:4f970577df89318b3944ff7b478fd52790063d9c16bfd99ccfcf824d1f17bdc8\"}},"
		"\"protocol\":{\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"kind\":\"BenchmarkProtocol\","
		"\"metadata\":{\"name\":\"liger-bench-do-bench-forward\"},"
		"\"spec\":{\"harness\":{\"name\":\"Liger-Kernel benchmark scripts\",\"repository\":\"https://github.com/linkedin/Liger-Kernel\"},"
		"\"measurement\":{\"timer\":\"cuda_events\",\"primaryStatistic\":\"median\"},"
		"\"comparability\":{\"notes\":\"Timed: the module forward pass, via triton.testing.do_bench with quantiles 0.5/0.2/0.8 "
		"(median with p20/p80 spread). The upstream CSV records no CUDA, driver, or torch version; the Liger release rides "
		"each run's labels. Comparable only within one kernel, workload, timed pass, and GPU.\","
		"\"family\":\"liger_kernel_bench\"}}},"
		"\"environment\":{\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"kind\":\"ExecutionEnvironment\","
		"\"metadata\":{\"name\":\"liger-bench-nvidia-a100-sxm4-80gb\"},"
		"\"spec\":{\"hardware\":{\"vendor\":\"nvidia\",\"product\":\"NVIDIA A100\",\"formFactor\":\"SXM4-80GB\","
		"\"architecture\":\"sm_80\"},\"software\":{}}}%s%s}\n",
		kernel, impl, second, median, when, median, median, median / 1e6, kernel, kernel, impl, ts, workload_digest,
		workload_doc ? ",\"workload\":" : "", workload_doc ? workload_doc : "");
}

static int add_run(struct kx_store *s, const char *kernel, const char *impl, long median, int second,
		   struct kx_digest *ret)
{
	struct kx_buf b = { 0 };
	make_manifest(&b, kernel, impl, median, second);
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_ingest_result res = { 0 };
	int r = kx_ingest_bytes(s, b.ptr, b.len, NULL, &res, &p);
	if (r < 0) {
		struct kx_buf msg = { 0 };
		kx_problems_format(&p, "manifest", &msg);
		diag("ingest failed: %s\n%s", strerror(-r), msg.ptr ? msg.ptr : "");
		kx_buf_release(&msg);
	} else if (res.len == 1 && res.items[0].outcome == KX_INGEST_ADDED) {
		*ret = res.items[0].run;
	} else {
		r = -EEXIST;
	}
	kx_ingest_result_release(&res);
	kx_problems_release(&p);
	kx_buf_release(&b);
	return r;
}

struct inval {
	int what;
	uint64_t ino;
	char name[160];
	int64_t stamp;
};

struct invals {
	struct inval *v;
	size_t len, cap;
};

static int collect(void *ctx, enum kx_inval what, uint64_t ino, const char *name, int64_t stamp)
{
	struct invals *x = ctx;
	if (x->len == x->cap) {
		x->cap = x->cap ? x->cap * 2 : 64;
		x->v = realloc(x->v, x->cap * sizeof(*x->v));
	}
	x->v[x->len++] = (struct inval){ what, ino, "", stamp };
	if (name)
		snprintf(x->v[x->len - 1].name, sizeof(x->v[0].name), "%s", name);
	return 0;
}

static bool has(const struct invals *x, int what, uint64_t ino, const char *name)
{
	for (size_t i = 0; i < x->len; i++)
		if (x->v[i].what == what && x->v[i].ino == ino && strcmp(x->v[i].name, name ? name : "") == 0)
			return true;
	return false;
}

/* The stamp reported with an invalidation (what, ino), or KX_STAMP_NONE - 1 if there is none. */
static int64_t stamp_of_inval(const struct invals *x, int what, uint64_t ino)
{
	for (size_t i = 0; i < x->len; i++)
		if (x->v[i].what == what && x->v[i].ino == ino)
			return x->v[i].stamp;
	return KX_STAMP_NONE + 1;
}

static bool has_name(const struct invals *x, const char *name)
{
	for (size_t i = 0; i < x->len; i++)
		if (x->v[i].what == KX_INVAL_ENTRY && strcmp(x->v[i].name, name) == 0)
			return true;
	return false;
}

/* kx_held_fn for the tests: nothing is held but held_but (0: nothing at all) */
static uint64_t held_but;
static bool held_except(void *ctx, uint64_t ino)
{
	(void)ctx;
	return held_but != 0 && ino == held_but;
}

static int cmp_inval(const void *a, const void *b)
{
	const struct inval *x = a, *y = b;
	if (x->what != y->what)
		return x->what - y->what;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void dirname_of(const char *impl, int rank, const struct kx_digest *d, char *out, size_t cap)
{
	char hex[KX_DIGEST_HEX + 1];
	kx_digest_hex(d, hex);
	snprintf(out, cap, "%02d-%s-%.12s", rank, impl, hex);
}

static uint64_t ino_of(int type, int file, const struct kx_digest *id)
{
	struct kx_node n = { .type = (uint8_t)type, .file = (uint8_t)file };
	if (id)
		n.id = *id;
	return kx_tree_ino(&n);
}

/* getattr's size of a SHA256SUMS (n) is what reading it gives, and it lists workload.json or not */
static bool sums_agree(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, bool workload)
{
	struct kx_attr a;
	const struct kx_content *c;
	if (kx_tree_getattr(t, v, n, &a) < 0 || kx_tree_read(t, v, n, &c) < 0)
		return false;
	static const char line_end[] = "  workload.json\n";
	bool agree = c->len == a.size && (memmem(c->data, c->len, line_end, strlen(line_end)) != NULL) == workload;
	kx_content_put(c);
	return agree;
}

static void test_changes(void)
{
	struct kx_store *s = open_store("changes", KX_STORE_CREATE);
	struct kx_digest a, b, c;
	if (!ok(s && add_run(s, "demo_kernel", "alpha", 2000000, 1, &a) == 0, "store a first run (alpha, 2 ms)"))
		return;
	struct kx_tree *t = kx_tree_new(s, 0);
	struct kx_view *v0 = kx_store_view(s);
	struct kx_node group;
	const char *gpath = "benchmarks/demo_kernel/forward/nvidia-a100-sxm4-80gb/hidden4096-tokens16384-vocab128256-bf16";
	char a1[200], a2[200], b1[200], hex[KX_DIGEST_HEX + 1], name[512];
	dirname_of("alpha", 1, &a, a1, sizeof(a1));
	snprintf(name, sizeof(name), "%s/%s", gpath, a1);
	struct kx_node x;
	ok(kx_tree_resolve(t, v0, gpath, &group) == 0 && kx_tree_resolve(t, v0, name, &x) == 0, "alpha is %s", a1);
	/* the kernel has read these in the old state */
	const struct kx_content *cn;
	struct kx_node summary = { .type = KX_NODE_RUN_FILE, .file = KX_RF_SUMMARY, .id = a };
	if (kx_tree_read(t, v0, &summary, &cn) == 0)
		kx_content_put(cn);

	ok(add_run(s, "demo_kernel", "beta", 1000000, 2, &b) == 0, "store a faster run (beta, 1 ms)");
	struct kx_view *v1 = kx_store_view(s);
	dirname_of("alpha", 2, &a, a2, sizeof(a2));
	dirname_of("beta", 1, &b, b1, sizeof(b1));
	snprintf(name, sizeof(name), "%s/%s", gpath, b1);
	ok(kx_tree_resolve(t, v1, name, &x) == 0, "beta is now %s", b1);
	snprintf(name, sizeof(name), "%s/%s", gpath, a2);
	ok(kx_tree_resolve(t, v1, name, &x) == 0 && kx_tree_ino(&x) == ino_of(KX_NODE_RUN, 0, &a),
	   "alpha moved to %s and kept its inode number", a2);

	/* a document's file is one inode in every run that names it: its links, its earliest observedAt */
	struct kx_node pa, pb;
	struct kx_attr at0, at1, bt1;
	struct kx_run_rec ra, rb;
	snprintf(name, sizeof(name), "%s/%s/protocol.json", gpath, a1);
	ok(kx_tree_resolve(t, v0, name, &pa) == 0 && pa.type == KX_NODE_DOC_FILE && kx_tree_getattr(t, v0, &pa, &at0) == 0 &&
	   kx_store_get_run(s, v0, &a, &ra) == 0 && at0.nlink == 2 && at0.mtime_ns == ra.observed_ns,
	   "alpha's protocol.json: 2 links (benchmarks/ and runs/), alpha's observedAt");
	snprintf(name, sizeof(name), "%s/%s/protocol.json", gpath, b1);
	ok(kx_tree_resolve(t, v1, name, &pb) == 0 && kx_tree_ino(&pb) == kx_tree_ino(&pa) &&
	   kx_tree_getattr(t, v1, &pa, &at1) == 0 && kx_tree_getattr(t, v1, &pb, &bt1) == 0 &&
	   kx_store_get_run(s, v1, &b, &rb) == 0 && at1.nlink == 4 && bt1.nlink == 4 &&
	   at1.mtime_ns == (ra.observed_ns < rb.observed_ns ? ra.observed_ns : rb.observed_ns),
	   "beta's is the same inode: 4 links once beta is stored, the earlier observedAt of the two");

	struct invals got = { 0 }, scanned = { 0 };
	int r = kx_tree_changes(t, v0, v1, &b, 1, collect, NULL, &got);
	ok(has(&got, KX_INVAL_ATTR, kx_tree_ino(&pa), NULL), "the shared protocol.json's attributes are invalidated");
	ok(r == 0 && got.len > 0, "kx_tree_changes succeeds (%zu invalidations)", got.len);
	uint64_t g = kx_tree_ino(&group);
	ok(has(&got, KX_INVAL_ENTRY, g, a1), "the old rank directory name %s is invalidated", a1);
	ok(has(&got, KX_INVAL_ENTRY, g, a2), "the new name %s is invalidated (a cached negative entry)", a2);
	ok(has(&got, KX_INVAL_ENTRY, g, b1), "the new run's directory %s is invalidated", b1);
	ok(has(&got, KX_INVAL_DATA, g, NULL), "the group's listing is invalidated");
	bool files = true;
	for (int f = 0; f < KX_GF__COUNT; f++)
		files &= has(&got, KX_INVAL_DATA, ino_of(KX_NODE_GROUP_FILE, f, &group.id), NULL);
	ok(files, "ranking.tsv, ranking.json, GROUP.json and SHA256SUMS are invalidated");
	ok(has(&got, KX_INVAL_DATA, ino_of(KX_NODE_RUN_FILE, KX_RF_SUMMARY, &a), NULL) &&
	   has(&got, KX_INVAL_DATA, ino_of(KX_NODE_RUNS_FILE, KX_RF_SUMMARY, &a), NULL) &&
	   has(&got, KX_INVAL_DATA, ino_of(KX_NODE_RUN_FILE, KX_RF_SHA256SUMS, &a), NULL),
	   "alpha's summary.txt and SHA256SUMS (rank 2 now) are invalidated, under both paths");
	ok(!has(&got, KX_INVAL_DATA, ino_of(KX_NODE_RUN_FILE, KX_RF_MANIFEST, &a), NULL),
	   "alpha's manifest.json (unchanged) is not");
	/* versioned files come with the stamp the kernel may hold them at: their version in v0 */
	int64_t s0, s1, g0;
	struct kx_node tsv = { .type = KX_NODE_GROUP_FILE, .file = KX_GF_RANKING_TSV, .id = group.id };
	ok(kx_tree_stamp(t, v0, &summary, &s0) == 0 && kx_tree_stamp(t, v1, &summary, &s1) == 0 && s0 != s1 &&
	   stamp_of_inval(&got, KX_INVAL_DATA, ino_of(KX_NODE_RUN_FILE, KX_RF_SUMMARY, &a)) == s0,
	   "alpha's summary.txt is reported with its stamp before the change (a new one after)");
	ok(kx_tree_stamp(t, v0, &tsv, &g0) == 0 &&
	   stamp_of_inval(&got, KX_INVAL_DATA, ino_of(KX_NODE_GROUP_FILE, KX_GF_RANKING_TSV, &group.id)) == g0,
	   "and so is the group's ranking.tsv");
	ok(stamp_of_inval(&got, KX_INVAL_DATA, ino_of(KX_NODE_RUN_FILE, KX_RF_SUMMARY, &b)) == s0,
	   "the new run's summary.txt with the group's old stamp (a version no kernel can hold)");
	ok(stamp_of_inval(&got, KX_INVAL_DATA, g) == KX_STAMP_NONE, "a listing is reported without a stamp");
	struct kx_node readme = { .type = KX_NODE_README };
	ok(kx_node_versioned(&readme) && kx_node_versioned(&summary) && kx_node_versioned(&tsv) &&
	   kx_node_versioned(&(struct kx_node){ .type = KX_NODE_RUN_FILE, .file = KX_RF_MANIFEST, .id = a }) &&
	   !kx_node_versioned(&(struct kx_node){ .type = KX_NODE_RUN_FILE, .file = KX_RF_RUN, .id = a }),
	   "versioned: README, ranking files, summary.txt, manifest.json (a late document changes it); not run.json");
	/* the benchmark directories' files follow every run below them: versioned, with their old stamp */
	struct kx_node sweep, gpus;
	int64_t w0, w1, q0, q1;
	ok(kx_tree_resolve(t, v1, "benchmarks/demo_kernel/forward/nvidia-a100-sxm4-80gb/sweep.tsv", &sweep) == 0 &&
	   kx_tree_resolve(t, v1, "benchmarks/demo_kernel/forward/gpus.tsv", &gpus) == 0 &&
	   sweep.type == KX_NODE_BENCH_FILE && gpus.type == KX_NODE_BENCH_FILE && kx_node_versioned(&sweep) &&
	   kx_node_versioned(&gpus), "sweep.tsv and gpus.tsv resolve, versioned");
	ok(kx_tree_stamp(t, v0, &sweep, &w0) == 0 && kx_tree_stamp(t, v1, &sweep, &w1) == 0 && w0 != w1 &&
	   stamp_of_inval(&got, KX_INVAL_DATA, kx_tree_ino(&sweep)) == w0,
	   "sweep.tsv is reported with its stamp before the change (a new one after)");
	ok(kx_tree_stamp(t, v0, &gpus, &q0) == 0 && kx_tree_stamp(t, v1, &gpus, &q1) == 0 && q0 != q1 &&
	   stamp_of_inval(&got, KX_INVAL_DATA, kx_tree_ino(&gpus)) == q0, "and so is gpus.tsv");
	struct kx_node picture, back, plain;
	int64_t p0;
	ok(kx_tree_resolve(t, v1, "benchmarks/demo_kernel/forward/nvidia-a100-sxm4-80gb/sweep.svg", &picture) == 0 &&
	   picture.type == KX_NODE_BENCH_FILE && picture.file == KX_BF_SWEEP_SVG && kx_node_versioned(&picture) &&
	   kx_tree_stamp(t, v0, &picture, &p0) == 0 && stamp_of_inval(&got, KX_INVAL_DATA, kx_tree_ino(&picture)) == p0,
	   "sweep.svg beside it: versioned, reported with its stamp before the change");
	ok(kx_tree_node(t, v1, kx_tree_ino(&sweep), &back) == 0 && kx_tree_ino(&back) == kx_tree_ino(&sweep) &&
	   kx_tree_node(t, v1, kx_tree_ino(&picture), &back) == 0 && back.file == KX_BF_SWEEP_SVG &&
	   kx_tree_node(t, v1, kx_tree_ino(&gpus), &back) == 0 && back.file == KX_BF_GPUS_TSV,
	   "their inode numbers decode to the same files");
	ok(kx_tree_node(t, v1, kx_tree_ino(&sweep) & ~(KX_INO_FILE_MASK << KX_INO_FILE_SHIFT), &plain) == -ENOENT,
	   "a gpu directory's number with a pass directory's file (gpus.tsv) is no file");
	kx_digest_hex(&b, hex);
	snprintf(name, sizeof(name), "%.12s", hex);
	ok(has(&got, KX_INVAL_ENTRY, ino_of(KX_NODE_RUNS, 0, NULL), name), "runs/%s is invalidated", name);
	snprintf(name, sizeof(name), "%s.json", hex);
	ok(has(&got, KX_INVAL_ENTRY, ino_of(KX_NODE_DIGESTS_SHA, 0, NULL), name), "digests/sha256/<beta's run>.json is");
	ok(!has_name(&got, "a79eaf4df66c97c6adc1fb2d09df78682155d1ea86652ae0b70199875bde7747.json"),
	   "the protocol document, stored before, is not");
	ok(!has_name(&got, "demo_kernel") && !has_name(&got, "forward") && !has_name(&got, "nvidia-a100-sxm4-80gb") &&
	   !has_name(&got, "hidden4096-tokens16384-vocab128256-bf16"),
	   "no directory on the path is invalidated by name (that would drop the kernel's cache below it)");
	ok(has(&got, KX_INVAL_DATA, ino_of(KX_NODE_README, 0, NULL), NULL), "README (its counts) is invalidated");

	/* without the list of runs, comparing the views finds the same */
	r = kx_tree_changes(t, v0, v1, NULL, 0, collect, NULL, &scanned);
	ok(r == 0 && scanned.len == got.len, "without the list of runs, as many invalidations (%zu)", scanned.len);
	qsort(got.v, got.len, sizeof(*got.v), cmp_inval);
	qsort(scanned.v, scanned.len, sizeof(*scanned.v), cmp_inval);
	bool same = scanned.len == got.len;
	for (size_t i = 0; same && i < got.len; i++)
		same = cmp_inval(&got.v[i], &scanned.v[i]) == 0;
	ok(same, "and the same ones");

	/* a consumer that holds neither the gpu directory nor runs/ hears nothing of the groups below */
	struct kx_node gpu;
	char gpu_path[200];
	snprintf(gpu_path, sizeof(gpu_path), "%.*s", (int)(strrchr(gpath, '/') - gpath), gpath);
	ok(kx_tree_resolve(t, v0, gpu_path, &gpu) == 0, "the gpu directory resolves");
	struct invals unheld = { 0 }, gpu_only = { 0 };
	char shortid[16];
	snprintf(shortid, sizeof(shortid), "%.12s", hex);
	held_but = 0;
	r = kx_tree_changes(t, v0, v1, &b, 1, collect, held_except, &unheld);
	ok(r == 0 && has(&unheld, KX_INVAL_DATA, kx_tree_ino(&gpu), NULL) && !has(&unheld, KX_INVAL_DATA, g, NULL) &&
	   !has(&unheld, KX_INVAL_ENTRY, g, a1) &&
	   !has(&unheld, KX_INVAL_DATA, ino_of(KX_NODE_RUNS_FILE, KX_RF_SUMMARY, &a), NULL) &&
	   has(&unheld, KX_INVAL_ENTRY, ino_of(KX_NODE_RUNS, 0, NULL), shortid),
	   "held by no one: the gpu directory's listing, runs/ and digests/ only (%zu, not %zu)", unheld.len,
	   got.len);
	/* holding the gpu directory (and so maybe what is below it): all of it again */
	held_but = kx_tree_ino(&gpu);
	r = kx_tree_changes(t, v0, v1, &b, 1, collect, held_except, &gpu_only);
	ok(r == 0 && gpu_only.len == got.len, "holding the gpu directory: every invalidation (%zu)", gpu_only.len);

	/* nothing changed, nothing to say */
	struct invals none = { 0 };
	ok(kx_tree_changes(t, v1, v1, NULL, 0, collect, NULL, &none) == 0 && none.len == 0, "no change, no invalidation");
	/* told of a run that was already there, with nothing else new (a view of the same generation):
	 * nothing. (Between v0 and v1 the directory times moved with b, which is reported whatever
	 * the list says: a commit can change groups without adding a run, SPEC §10.) */
	struct kx_view *v1b = kx_store_view(s);
	ok(kx_tree_changes(t, v1, v1b, &a, 1, collect, NULL, &none) == 0 && none.len == 0,
	   "a run that was already there changes nothing");
	kx_view_release(v1b);

	/* a new kernel appears under benchmarks/ */
	ok(add_run(s, "other_kernel", "alpha", 3000000, 3, &c) == 0, "store a run of another kernel");
	struct kx_view *v2 = kx_store_view(s);
	struct invals k = { 0 };
	ok(kx_tree_changes(t, v1, v2, &c, 1, collect, NULL, &k) == 0 &&
	   has(&k, KX_INVAL_ENTRY, ino_of(KX_NODE_BENCHMARKS, 0, NULL), "other_kernel"),
	   "benchmarks/other_kernel is invalidated as a new name");
	ok(!has(&k, KX_INVAL_ENTRY, g, a2) && !has(&k, KX_INVAL_DATA, g, NULL),
	   "the demo_kernel group, untouched, is not invalidated");

	/*
	 * A late document: runs stored with only their workload's digest, then one whose manifest
	 * includes that workload document. The older runs gain workload.json, and their manifest.json
	 * changes — in the kernel's caches and in the tree's own.
	 */
	static const char wdoc[] = "{\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"kind\":\"Workload\","
				   "\"metadata\":{\"name\":\"late\"},\"spec\":{\"parameters\":{\"hidden\":4096,"
				   "\"tokens\":16384,\"vocab\":128256},\"dtype\":\"bf16\"}}";
	struct kx_arena *ar = kx_arena_new();
	struct kx_json *wj = NULL;
	struct kx_json_error je;
	struct kx_digest wd;
	char wds[KX_DIGEST_STR_MAX];
	kx_json_parse(ar, wdoc, strlen(wdoc), 0, &wj, NULL, &je);
	kx_digest_document(wj, &wd);
	kx_digest_format(&wd, wds);
	workload_digest = wds;
	struct kx_digest e1, e2;
	ok(add_run(s, "late_kernel", "alpha", 5000000, 4, &e1) == 0, "store a run that names its workload by digest only");
	struct kx_view *v3 = kx_store_view(s);
	struct kx_node m1 = { .type = KX_NODE_RUNS_FILE, .file = KX_RF_MANIFEST, .id = e1 }, dir1;
	const struct kx_content *before_bytes = NULL;
	kx_tree_read(t, v3, &m1, &before_bytes);
	char p1[256];
	kx_digest_hex(&e1, hex);
	snprintf(p1, sizeof(p1), "runs/%.12s/workload.json", hex);
	ok(kx_tree_resolve(t, v3, p1, &x) == -ENOENT, "it has no workload.json");
	struct kx_node sums1 = { .type = KX_NODE_RUNS_FILE, .file = KX_RF_SHA256SUMS, .id = e1 };
	ok(sums_agree(t, v3, &sums1, false), "its SHA256SUMS, sized before it is read, lists no workload.json");
	workload_doc = wdoc;
	ok(add_run(s, "late_kernel", "beta", 4000000, 5, &e2) == 0, "store one that includes the workload document");
	workload_doc = NULL;
	struct kx_view *v4 = kx_store_view(s);
	struct invals late = { 0 };
	r = kx_tree_changes(t, v3, v4, &e2, 1, collect, NULL, &late);
	ok(r == 0 && late.len > 0, "kx_tree_changes succeeds (%zu invalidations)", late.len);
	struct kx_node runsdir1 = { .type = KX_NODE_RUNS_RUN, .id = e1 };
	ok(has(&late, KX_INVAL_ENTRY, kx_tree_ino(&runsdir1), "workload.json"), "runs/<older>/workload.json is a new name");
	ok(has(&late, KX_INVAL_DATA, kx_tree_ino(&m1), NULL), "the older run's manifest.json is invalidated");
	ok(kx_tree_resolve(t, v4, p1, &dir1) == 0, "and workload.json now resolves");
	ok(sums_agree(t, v4, &sums1, true), "its SHA256SUMS, sized again before it is read, lists it");
	const struct kx_content *after_bytes = NULL;
	r = kx_tree_read(t, v4, &m1, &after_bytes);
	ok(r == 0 && before_bytes && after_bytes->len > before_bytes->len &&
	   memmem(after_bytes->data, after_bytes->len, "\"workload\"", 10) != NULL,
	   "the tree serves the new manifest.json (%zu bytes, was %zu), not its cached copy",
	   after_bytes ? after_bytes->len : 0, before_bytes ? before_bytes->len : 0);
	kx_content_put(before_bytes);
	kx_content_put(after_bytes);
	kx_arena_free(ar);
	free(late.v);

	free(got.v);
	free(scanned.v);
	free(none.v);
	free(k.v);
	free(unheld.v);
	free(gpu_only.v);
	kx_view_release(v0);
	kx_view_release(v1);
	kx_view_release(v2);
	kx_view_release(v3);
	kx_view_release(v4);
	kx_tree_free(t);
	kx_store_close(s);
}

/* The workload digest of document text doc, formatted, into out. */
static const char *digest_of_doc(const char *doc, char out[KX_DIGEST_STR_MAX])
{
	struct kx_arena *a = kx_arena_new();
	struct kx_json *j = NULL;
	struct kx_json_error e;
	struct kx_digest d;
	kx_json_parse(a, doc, strlen(doc), 0, &j, NULL, &e);
	kx_digest_document(j, &d);
	kx_digest_format(&d, out);
	kx_arena_free(a);
	return out;
}

static bool content_has(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, const char *text)
{
	const struct kx_content *c;
	if (kx_tree_read(t, v, n, &c) < 0)
		return false;
	bool found = memmem(c->data, c->len, text, strlen(text)) != NULL;
	kx_content_put(c);
	return found;
}

/*
 * A workload document stored late, with a run of another kernel: the gpu directory of the run that
 * waited for it gains a sweep, and its sweep.tsv a new version (the store moves its mtime).
 */
static void test_late_sweep(void)
{
	static const char w16[] = "{\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"kind\":\"Workload\",\"metadata\":{},"
				  "\"spec\":{\"parameters\":{\"hidden\":4096,\"tokens\":16384},\"dtype\":\"bf16\"}}";
	static const char w8[] = "{\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"kind\":\"Workload\",\"metadata\":{},"
				 "\"spec\":{\"parameters\":{\"hidden\":4096,\"tokens\":8192},\"dtype\":\"bf16\"}}";
	char d16[KX_DIGEST_STR_MAX], d8[KX_DIGEST_STR_MAX];
	const char *saved = workload_digest;
	struct kx_store *s = open_store("late-sweep", KX_STORE_CREATE);
	struct kx_digest r1, r2, r3;
	workload_digest = digest_of_doc(w16, d16);
	workload_doc = w16;
	bool stored = s && add_run(s, "sweep_kernel", "alpha", 2000000, 1, &r1) == 0;
	workload_digest = digest_of_doc(w8, d8);
	workload_doc = NULL;
	stored = stored && add_run(s, "sweep_kernel", "alpha", 1000000, 2, &r2) == 0;
	if (!ok(stored, "two groups of one gpu directory, one workload document not stored")) {
		workload_digest = saved;
		kx_store_close(s);
		return;
	}
	struct kx_tree *t = kx_tree_new(s, 0);
	struct kx_view *v0 = kx_store_view(s);
	struct kx_node sweep;
	int64_t w0 = 0, w1 = 1;
	ok(kx_tree_resolve(t, v0, "benchmarks/sweep_kernel/forward/nvidia-a100-sxm4-80gb/sweep.tsv", &sweep) == 0 &&
	   !content_has(t, v0, &sweep, "tokens\t"), "sweep.tsv: no sweep while one workload's parameters are unknown");
	workload_doc = w8;
	ok(add_run(s, "carrier_kernel", "beta", 3000000, 3, &r3) == 0, "a run of another kernel brings that document");
	workload_doc = NULL;
	workload_digest = saved;
	struct kx_view *v1 = kx_store_view(s);
	struct invals got = { 0 };
	ok(kx_tree_changes(t, v0, v1, &r3, 1, collect, NULL, &got) == 0 && kx_tree_stamp(t, v0, &sweep, &w0) == 0 &&
	   kx_tree_stamp(t, v1, &sweep, &w1) == 0 && w0 != w1 &&
	   stamp_of_inval(&got, KX_INVAL_DATA, kx_tree_ino(&sweep)) == w0,
	   "its sweep.tsv is invalidated, with its stamp before (a new one after)");
	ok(content_has(t, v1, &sweep, "tokens\t8192\tdtype=bf16,hidden=4096\t") && content_has(t, v1, &sweep, "tokens\t16384\t"),
	   "and read again it holds the tokens sweep");
	ok(!content_has(t, v0, &sweep, "tokens\t"), "the old version is still the old bytes");
	struct kx_attr at;
	const struct kx_content *c;
	ok(kx_tree_getattr(t, v1, &sweep, &at) == 0 && kx_tree_read(t, v1, &sweep, &c) == 0 && c->len == at.size,
	   "its size is the new bytes'");
	kx_content_put(c);
	free(got.v);
	kx_view_release(v0);
	kx_view_release(v1);
	kx_tree_free(t);
	kx_store_close(s);
}

/* The bytes of a file of the tree at path, as a string (NULL when it cannot be read). */
static char *read_path(struct kx_tree *t, struct kx_view *v, const char *path, struct kx_node *ret)
{
	struct kx_node n;
	const struct kx_content *c;
	if (kx_tree_resolve(t, v, path, &n) < 0 || kx_tree_read(t, v, &n, &c) < 0)
		return NULL;
	char *s = strndup(c->data, c->len);
	kx_content_put(c);
	if (ret)
		*ret = n;
	return s;
}

/* compare/ (docs/views.md): its names, inode numbers, bytes and what a change to it reports. */
static void test_compare(void)
{
	struct kx_store *s = open_store("compare", KX_STORE_CREATE);
	struct kx_digest a, b, c, d;
	workload_digest = FLCE_WORKLOAD;
	if (!ok(s && add_run(s, "cmp_kernel", "alpha", 2000000, 1, &a) == 0 &&
			add_run(s, "cmp_kernel", "beta", 1000000, 2, &b) == 0,
		"store alpha (2 ms) and beta (1 ms) in one group"))
		return;
	struct kx_tree *t = kx_tree_new(s, 0);
	struct kx_view *v0 = kx_store_view(s);
	struct first_names f = { 0 };
	struct kx_node dir, pair, gpu_file, summary, x;
	ok(kx_tree_resolve(t, v0, "compare", &dir) == 0 && dir.type == KX_NODE_COMPARE && kx_node_is_dir(&dir) &&
		   kx_tree_readdir(t, v0, &dir, take_names, &f) == 0 && f.len == 3 &&
		   strcmp(f.names[0], "alpha..beta") == 0 && strcmp(f.names[1], "beta..alpha") == 0 &&
		   strcmp(f.names[2], "index.html") == 0,
	   "compare/ lists alpha..beta and beta..alpha, then its page");
	struct first_names pf = { 0 };
	ok(kx_tree_resolve(t, v0, "compare/alpha..beta", &pair) == 0 &&
		   kx_tree_readdir(t, v0, &pair, take_names, &pf) == 0 && pf.len == 3 &&
		   strcmp(pf.names[0], "index.html") == 0 && strcmp(pf.names[1], "nvidia-a100-sxm4-80gb.tsv") == 0 &&
		   strcmp(pf.names[2], "summary.tsv") == 0,
	   "a pair lists its page, its gpu's file and summary.tsv, in name order");
	const char *gpath = "compare/alpha..beta/nvidia-a100-sxm4-80gb.tsv";
	char *bytes = read_path(t, v0, gpath, &gpu_file);
	if (!ok(bytes &&
			strcmp(bytes,
			       "kernel\tpass\tmetric\tworkload\tunit\tcandidate_median\tbaseline_median\tratio\tresult\tmixed"
			       "\tcandidate_version\tbaseline_version\tcandidate_observed_at\tbaseline_observed_at\n"
			       "cmp_kernel\tforward\tlatency\thidden4096-tokens16384-vocab128256-bf16\tns\t2000000\t1000000\t0.5000"
			       "\tloss\tno\t\t\t2024-11-22T17:44:01.000Z\t2024-11-22T17:44:02.000Z\n") == 0,
		"alpha against beta: ratio 0.5, a loss, each side's version and date"))
		diag("%s", bytes ? bytes : "(null)");
	free(bytes);
	bytes = read_path(t, v0, "compare/beta..alpha/summary.tsv", &summary);
	ok(bytes && strstr(bytes, "\n\t\tlatency\tnvidia-a100-sxm4-80gb\t1\t2.000\t1\t0\t0\t0\t0\n"
				  "cmp_kernel\tforward\tlatency\tnvidia-a100-sxm4-80gb\t1\t2.000\t1\t0\t0\t0\t0\n") != NULL,
	   "beta against alpha: the gpu's latency total, then its one group: geometric mean 2, one win");
	free(bytes);
	ok(kx_tree_resolve(t, v0, "compare/alpha..gamma", &x) == -ENOENT &&
		   kx_tree_resolve(t, v0, "compare/alpha..alpha", &x) == -ENOENT &&
		   kx_tree_resolve(t, v0, "compare/alpha..beta/nvidia-h100-80gb-hbm3.tsv", &x) == -ENOENT,
	   "no pair with an unknown implementation or itself, no file for a gpu they do not share");

	/* inode numbers decode back, also the file-less plain number a version makes back (versions.c) */
	struct kx_node back, parent;
	uint64_t plain = kx_ino_of(KX_NODE_COMPARE_FILE, 0) | (kx_tree_ino(&gpu_file) & KX_INO_ID_MASK);
	ok(kx_tree_node(t, v0, kx_tree_ino(&gpu_file), &back) == 0 && back.file == KX_CF_GPU &&
		   kx_tree_ino(&back) == kx_tree_ino(&gpu_file) && kx_tree_node(t, v0, plain, &back) == 0 &&
		   kx_tree_ino(&back) == kx_tree_ino(&gpu_file) &&
		   kx_tree_node(t, v0, kx_tree_ino(&pair), &back) == 0 && back.type == KX_NODE_COMPARE_PAIR &&
		   kx_tree_parent(t, v0, &gpu_file, &parent) == 0 && kx_tree_ino(&parent) == kx_tree_ino(&pair) &&
		   kx_tree_parent(t, v0, &pair, &parent) == 0 && parent.type == KX_NODE_COMPARE,
	   "a gpu file's and a pair's inode numbers decode, and their parents are the pair and compare/");
	ok(kx_node_versioned(&gpu_file) && kx_node_versioned(&summary), "compare/'s files are versioned");
	char name[200];
	ok(kx_tree_file_name(t, v0, &gpu_file, name, sizeof(name)) == 0 &&
		   strcmp(name, "nvidia-a100-sxm4-80gb.tsv") == 0,
	   "kx_tree_file_name names a gpu file");
	struct kx_attr fa, ga;
	struct kx_node gpu_dir;
	int64_t st0, sum0;
	bytes = read_path(t, v0, gpath, NULL);
	ok(kx_tree_resolve(t, v0, "benchmarks/cmp_kernel/forward/nvidia-a100-sxm4-80gb", &gpu_dir) == 0 &&
		   kx_tree_getattr(t, v0, &gpu_dir, &ga) == 0 && kx_tree_getattr(t, v0, &gpu_file, &fa) == 0 && bytes &&
		   fa.size == strlen(bytes) && fa.mtime_ns == ga.mtime_ns &&
		   kx_tree_stamp(t, v0, &gpu_file, &st0) == 0 && st0 == ga.mtime_ns &&
		   kx_tree_stamp(t, v0, &(struct kx_node){ .type = KX_NODE_COMPARE_FILE, .id = pair.id }, &sum0) == 0 &&
		   sum0 == st0,
	   "its size is its bytes', its stamp and mtime its gpu directory's mtime");
	free(bytes);

	/* the pages: numbers of their own, which decode back (a pair's also from the plain number a
	 * version makes back: not its summary.tsv's), exact sizes, their directories' stamps */
	struct kx_node page, cpage;
	struct kx_attr pa, ca, da;
	int64_t pst, cst;
	char *pbytes = read_path(t, v0, "compare/alpha..beta/index.html", &page);
	char *cbytes = read_path(t, v0, "compare/index.html", &cpage);
	uint64_t pplain = kx_ino_of(KX_NODE_COMPARE_FILE, 0) | (kx_tree_ino(&page) & KX_INO_ID_MASK);
	ok(pbytes && page.type == KX_NODE_COMPARE_FILE && page.file == KX_CF_INDEX_HTML &&
		   kx_tree_ino(&page) != kx_tree_ino(&summary) && (kx_tree_ino(&page) & KX_INO_ID_MASK) !=
		   (kx_tree_ino(&summary) & KX_INO_ID_MASK) &&
		   kx_tree_node(t, v0, kx_tree_ino(&page), &back) == 0 && kx_tree_ino(&back) == kx_tree_ino(&page) &&
		   kx_tree_node(t, v0, pplain, &back) == 0 && back.file == KX_CF_INDEX_HTML &&
		   kx_tree_parent(t, v0, &page, &parent) == 0 && kx_tree_ino(&parent) == kx_tree_ino(&pair) &&
		   kx_tree_file_name(t, v0, &page, name, sizeof(name)) == 0 && strcmp(name, "index.html") == 0 &&
		   kx_node_versioned(&page),
	   "a pair's index.html: its own inode number, decoded back, its parent the pair, versioned");
	ok(pbytes && kx_tree_getattr(t, v0, &page, &pa) == 0 && pa.size == strlen(pbytes) && pa.mtime_ns == fa.mtime_ns &&
		   kx_tree_stamp(t, v0, &page, &pst) == 0 && pst == sum0 &&
		   strstr(pbytes, "<td>cmp_kernel</td><td>forward</td><td>latency</td><td>nvidia-a100-sxm4-80gb</td>"
				  "<td class=\"n\">1</td><td class=\"n\">0.5000</td><td class=\"n\">0</td><td class=\"n\">1</td>") &&
		   strstr(pbytes, "<a href=\"nvidia-a100-sxm4-80gb.tsv\">"),
	   "its size is its bytes', its stamp summary.tsv's; its table the summary, its gpu file linked");
	ok(cbytes && cpage.type == KX_NODE_HTML && cpage.file == KX_HTML_COMPARE &&
		   kx_tree_node(t, v0, kx_tree_ino(&cpage), &back) == 0 && back.type == KX_NODE_HTML &&
		   back.file == KX_HTML_COMPARE && kx_tree_parent(t, v0, &cpage, &parent) == 0 &&
		   parent.type == KX_NODE_COMPARE && kx_tree_getattr(t, v0, &cpage, &ca) == 0 && ca.size == strlen(cbytes) &&
		   kx_tree_getattr(t, v0, &dir, &da) == 0 && ca.mtime_ns == da.mtime_ns &&
		   kx_tree_stamp(t, v0, &cpage, &cst) == 0 && cst == da.mtime_ns &&
		   strstr(cbytes, "<a href=\"alpha..beta/\">alpha..beta</a></td><td>nvidia-a100-sxm4-80gb</td>"
				  "<td>latency</td><td class=\"n\">1</td><td class=\"n\">0.5000</td>"),
	   "compare/index.html: decoded back, its size exact, stamp and mtime compare/'s, a row per pair, gpu and metric");
	free(pbytes);
	free(cbytes);

	/* a new implementation in the group: new pairs; alpha..beta's files change (their stamp moved) */
	ok(add_run(s, "cmp_kernel", "gamma", 3000000, 3, &c) == 0, "store gamma (3 ms) in the group");
	struct kx_view *v1 = kx_store_view(s);
	struct invals got = { 0 };
	int r = kx_tree_changes(t, v0, v1, &c, 1, collect, NULL, &got);
	uint64_t cdir = kx_tree_ino(&dir);
	ok(r == 0 && has(&got, KX_INVAL_ENTRY, cdir, "alpha..gamma") &&
		   has(&got, KX_INVAL_ENTRY, cdir, "gamma..beta") && has(&got, KX_INVAL_DATA, cdir, NULL) &&
		   !has(&got, KX_INVAL_ENTRY, cdir, "alpha..beta"),
	   "the new pairs' names and compare/'s listing are reported, not the old pair's name");
	ok(stamp_of_inval(&got, KX_INVAL_DATA, kx_tree_ino(&gpu_file)) == st0 &&
		   stamp_of_inval(&got, KX_INVAL_DATA, ino_of(KX_NODE_COMPARE_FILE, KX_CF_SUMMARY, &pair.id)) == sum0 &&
		   has(&got, KX_INVAL_ATTR, kx_tree_ino(&pair), NULL),
	   "alpha..beta's gpu file and summary.tsv with their stamps before, its directory's mtime");
	ok(stamp_of_inval(&got, KX_INVAL_DATA, kx_tree_ino(&page)) == sum0 &&
		   stamp_of_inval(&got, KX_INVAL_DATA, kx_tree_ino(&cpage)) == cst,
	   "and the pages: alpha..beta's and compare/'s, with their stamps before");
	int64_t st1;
	ok(kx_tree_stamp(t, v1, &gpu_file, &st1) == 0 && st1 > st0, "that stamp moved on");
	ok(kx_tree_resolve(t, v1, "compare/gamma..alpha/nvidia-a100-sxm4-80gb.tsv", &x) == 0, "gamma..alpha is there");

	/* a newer run of alpha: its row in alpha..beta changes */
	ok(add_run(s, "cmp_kernel", "alpha", 500000, 4, &d) == 0, "store a newer alpha (0.5 ms)");
	struct kx_view *v2 = kx_store_view(s);
	struct invals got2 = { 0 };
	bytes = read_path(t, v1, gpath, NULL); /* read in v1: the kernel may hold that version */
	free(bytes);
	r = kx_tree_changes(t, v1, v2, &d, 1, collect, NULL, &got2);
	ok(r == 0 && stamp_of_inval(&got2, KX_INVAL_DATA, kx_tree_ino(&gpu_file)) == st1 &&
		   !has(&got2, KX_INVAL_DATA, cdir, NULL),
	   "reported with its stamp in v1; no new pair, so compare/'s listing stays");
	bytes = read_path(t, v2, gpath, NULL);
	ok(bytes && strstr(bytes, "\tns\t500000\t1000000\t2.000\twin\t") != NULL,
	   "alpha's current run is its newest: a win now");
	free(bytes);

	/* a group of more current runs than CMP_GROUP_PAIRS_MAX (32) forms no pair, but gives rows */
	struct kx_digest y;
	bool stored = add_run(s, "big_kernel", "alpha", 1000000, 5, &y) == 0 &&
		      add_run(s, "big_kernel", "beta", 2000000, 6, &y) == 0;
	for (int i = 0; i < 31 && stored; i++) {
		char impl[16];
		snprintf(impl, sizeof(impl), "many%02d", i);
		stored = add_run(s, "big_kernel", impl, 3000000 + i, 7 + i, &y) == 0;
	}
	ok(stored, "store a group of 33 implementations, alpha and beta among them");
	struct kx_view *v3 = kx_store_view(s);
	struct first_names f3 = { 0 };
	ok(kx_tree_readdir(t, v3, &dir, take_names, &f3) == 0 && f3.len == 7 &&
		   kx_tree_resolve(t, v3, "compare/many00..many01", &x) == -ENOENT,
	   "it adds no pair to compare/ (%zu)", f3.len);
	bytes = read_path(t, v3, "compare/alpha..beta/summary.tsv", NULL);
	ok(bytes && strstr(bytes, "\nbig_kernel\tforward\tlatency\tnvidia-a100-sxm4-80gb\t1\t2.000\t1\t0\t0\t0\t0\n") != NULL,
	   "but a row to alpha..beta, which a smaller group made");
	free(bytes);

	/* a mount's writer pass (the sizer) runs ahead of the view the kernel reads: two passes to
	 * newer generations before the notifier's round must still leave it the comparisons the
	 * kernel's compare/index.html was looked up in, or the round tells nothing of compare/ */
	int64_t cst3;
	bytes = read_path(t, v3, "compare/index.html", NULL);
	ok(bytes && kx_tree_stamp(t, v3, &cpage, &cst3) == 0, "compare/index.html read in v3");
	free(bytes);
	struct kx_digest e1, e2;
	struct kx_view *v4 = NULL, *v5 = NULL;
	size_t nruns;
	ok(add_run(s, "cmp_kernel", "beta", 900000, 40, &e1) == 0 && (v4 = kx_store_view(s)) &&
		   kx_tree_keep_sizes(t, v3, v4, NULL, NULL, &nruns) == 0 &&
		   add_run(s, "cmp_kernel", "gamma", 800000, 41, &e2) == 0 && (v5 = kx_store_view(s)) &&
		   kx_tree_keep_sizes(t, v4, v5, NULL, NULL, &nruns) == 0,
	   "a newer beta and gamma stored, each followed by the writer's pass");
	struct invals got3 = { 0 };
	struct kx_digest both[] = { e1, e2 };
	r = kx_tree_changes(t, v3, v5, both, 2, collect, NULL, &got3);
	ok(r == 0 && stamp_of_inval(&got3, KX_INVAL_DATA, kx_tree_ino(&cpage)) == cst3,
	   "the round from v3 tells compare/index.html with the stamp it had there");
	free(got3.v);
	kx_view_release(v4);
	kx_view_release(v5);
	free(got.v);
	free(got2.v);
	kx_view_release(v0);
	kx_view_release(v1);
	kx_view_release(v2);
	kx_view_release(v3);
	kx_tree_free(t);
	kx_store_close(s);
}

/* Ingest the manifest of add_run(kernel, impl, median, second) again, signed by `key` (SPEC §10). */
static int sign_run(struct kx_store *s, const struct kx_signer *key, const char *kernel, const char *impl,
		    long median, int second)
{
	struct kx_buf b = { 0 }, out = { 0 };
	struct kx_arena *a = kx_arena_new();
	struct kx_json *m = NULL;
	struct kx_json_error je;
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_ingest_result res = { 0 };
	make_manifest(&b, kernel, impl, median, second);
	int r = a ? kx_json_parse(a, b.ptr, b.len, 0, &m, NULL, &je) : -ENOMEM;
	if (r == 0)
		r = kx_manifest_sign(a, m, key);
	if (r == 0)
		r = kx_jcs_write(m, &out);
	if (r == 0)
		r = kx_ingest_bytes(s, out.ptr, out.len, NULL, &res, &p);
	if (r == 0 && !(res.len == 1 && res.items[0].outcome == KX_INGEST_PRESENT && res.items[0].signatures == 1))
		r = -EIO;
	kx_ingest_result_release(&res);
	kx_problems_release(&p);
	kx_arena_free(a);
	kx_buf_release(&b);
	kx_buf_release(&out);
	return r;
}

/* Whether getattr's size of n in v is the length of what reading it gives; *ret_bytes a copy. */
static bool size_agrees(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, char **ret_bytes)
{
	struct kx_attr a;
	const struct kx_content *c;
	if (kx_tree_getattr(t, v, n, &a) < 0 || kx_tree_read(t, v, n, &c) < 0)
		return false;
	bool agree = c->len == a.size;
	if (ret_bytes)
		*ret_bytes = strndup(c->data, c->len);
	kx_content_put(c);
	return agree;
}

/*
 * SPEC §10: manifest.json carries the run's stored signatures. A stored run signed by a later copy
 * gets a new manifest.json — a new stamp, bytes and size, told to the kernel with the stamp it had —
 * while an unsigned run keeps stamp 0 in a store that holds signatures, and an older view keeps
 * serving the old version.
 */
static void test_signed(void)
{
	struct kx_store *s = open_store("signed", KX_STORE_CREATE);
	struct kx_digest a, b;
	char key[300], pub[300], err[256];
	snprintf(key, sizeof(key), "%s/lab.key", tmpdir);
	snprintf(pub, sizeof(pub), "%s/lab.pub", tmpdir);
	struct kx_digest id;
	struct kx_signer *signer = NULL;
	workload_digest = FLCE_WORKLOAD;
	if (!ok(s && add_run(s, "sig_kernel", "alpha", 2000000, 1, &a) == 0 &&
		   add_run(s, "sig_kernel", "beta", 3000000, 2, &b) == 0 &&
		   kx_key_generate(key, pub, &id, err, sizeof(err)) == 0 &&
		   kx_signer_open(key, &signer, err, sizeof(err)) == 0,
	   "two unsigned runs, and a key")) {
		kx_store_close(s);
		return;
	}
	struct kx_tree *t = kx_tree_new(s, 0);
	struct kx_view *v0 = kx_store_view(s);
	struct kx_node ma = { .type = KX_NODE_RUNS_FILE, .file = KX_RF_MANIFEST, .id = a };
	struct kx_node mb = { .type = KX_NODE_RUNS_FILE, .file = KX_RF_MANIFEST, .id = b };
	struct kx_node sa = { .type = KX_NODE_RUNS_FILE, .file = KX_RF_SHA256SUMS, .id = a };
	/* (both name an implementation document they do not carry: stamp 2, not 0) */
	int64_t st0 = -1, st1 = -1, stb0 = -1, stb = -1, was = -1;
	char *old = NULL, *now = NULL, *again = NULL;
	int r = kx_tree_stamp(t, v0, &ma, &st0);
	if (r == 0)
		r = kx_tree_stamp(t, v0, &mb, &stb0);
	ok(r == 0 && st0 == stb0 && st0 >= 0 && st0 < 4,
	   "an unsigned run's manifest.json: the stamp of its missing documents alone (%lld)", (long long)st0);
	ok(size_agrees(t, v0, &ma, &old) && old && !strstr(old, "\"signatures\""), "no signatures member, its size right");

	ok(sign_run(s, signer, "sig_kernel", "alpha", 2000000, 1) == 0, "the first run ingested again, signed");
	struct kx_view *v1 = kx_store_view(s);
	r = kx_tree_stamp(t, v1, &ma, &st1);
	ok(r == 0 && st1 != st0, "its manifest.json has a new stamp (%lld)", (long long)st1);
	ok(kx_tree_stamp(t, v1, &mb, &stb) == 0 && stb == stb0, "the other run's stays as it was in a store that holds a signature");
	ok(size_agrees(t, v1, &ma, &now) && now && strstr(now, "\"signatures\"") && strlen(now) > strlen(old),
	   "the new manifest.json has the signature, and getattr the new size, not the cached one");
	ok(size_agrees(t, v1, &sa, NULL), "its SHA256SUMS, sized and read");
	ok(kx_tree_stamp(t, v0, &ma, &was) == 0 && was == st0 && size_agrees(t, v0, &ma, &again) && again &&
		   !strcmp(again, old),
	   "the older view still serves the old version");

	struct invals got = { 0 };
	r = kx_tree_changes(t, v0, v1, NULL, 0, collect, NULL, &got);
	struct kx_node ra = { .type = KX_NODE_RUN_FILE, .file = KX_RF_MANIFEST, .id = a };
	struct kx_node rb = { .type = KX_NODE_RUN_FILE, .file = KX_RF_MANIFEST, .id = b };
	ok(r == 0 && stamp_of_inval(&got, KX_INVAL_DATA, kx_tree_ino(&ma)) == st0 &&
		   stamp_of_inval(&got, KX_INVAL_DATA, kx_tree_ino(&ra)) == st0,
	   "kx_tree_changes tells its manifest.json, in both places, with the stamp it had");
	ok(!has(&got, KX_INVAL_DATA, kx_tree_ino(&mb), NULL) && !has(&got, KX_INVAL_DATA, kx_tree_ino(&rb), NULL),
	   "and not the unsigned run's");
	free(got.v);
	free(old);
	free(now);
	free(again);
	kx_signer_free(signer);
	kx_view_release(v0);
	kx_view_release(v1);
	kx_tree_free(t);
	kx_store_close(s);
}

/* ---- part 6: sizes kept by the writer (docs/store.md, 'Z') ------------------------------------- */

/* The size a fresh tree (empty caches, as a cold mount's) gives to run x's summary.txt. */
static uint64_t fresh_size(struct kx_store *s, const struct kx_digest *x, uint64_t *ret_stored)
{
	struct kx_tree *t = kx_tree_new(s, 0);
	struct kx_view *v = kx_store_view(s);
	struct kx_node n = { .type = KX_NODE_RUNS_FILE, .file = KX_RF_SUMMARY, .id = *x };
	struct kx_attr a = { .size = UINT64_MAX };
	struct kx_tree_stats st;
	kx_tree_getattr(t, v, &n, &a);
	kx_tree_stats(t, &st);
	*ret_stored = st.sizes_stored;
	kx_view_release(v);
	kx_tree_free(t);
	return a.size;
}

static void test_kept_sizes(void)
{
	struct kx_store *s = open_store("sizes", KX_STORE_CREATE);
	struct kx_digest a, b, c;
	if (!ok(s && add_run(s, "demo_kernel", "alpha", 2000000, 1, &a) == 0 &&
			add_run(s, "demo_kernel", "beta", 3000000, 2, &b) == 0,
		"store two runs of one group"))
		return;
	uint64_t stored, truth = fresh_size(s, &a, &stored);
	ok(stored == 0, "with no sizes kept, a stat renders (%llu from the store)", (unsigned long long)stored);
	struct kx_tree *t = kx_tree_new(s, 0);
	struct kx_view *v = kx_store_view(s);
	size_t runs = 0;
	int r = kx_tree_keep_sizes(t, NULL, v, NULL, NULL, &runs);
	ok(r == 0 && runs == 2, "the writer's pass sizes both runs (%zu)", runs);
	ok(fresh_size(s, &a, &stored) == truth && stored == 1, "then a stat takes summary.txt's size from the store");
	struct kx_sizes z = { 0 }, was;
	r = kx_store_get_sizes(s, NULL, 'r', &a, &z);
	ok(r == 0 && z.n == KX_RF__COUNT + 1 && z.size[KX_RF_SUMMARY] == truth, "the record holds it (%u sizes)", z.n);
	was = z;
	/* a record with another size is believed as long as its build and stamp are right: the size
	 * comes from there, not from a render */
	z.size[KX_RF_SUMMARY] = (uint32_t)truth + 7;
	kx_store_put_sizes(s, 'r', &a, &z, 1);
	ok(fresh_size(s, &a, &stored) == truth + 7, "a kept size is what stat answers");
	z.build ^= 1;
	kx_store_put_sizes(s, 'r', &a, &z, 1);
	ok(fresh_size(s, &a, &stored) == truth && stored == 0, "one kept by another build is not believed: rendered");
	z.build = was.build;
	z.stamp -= 1;
	kx_store_put_sizes(s, 'r', &a, &z, 1);
	ok(fresh_size(s, &a, &stored) == truth && stored == 0, "one kept at another stamp is not believed: rendered");
	kx_store_put_sizes(s, 'r', &a, &was, 1);
	/* a third run in the group changes a's summary (its rank's neighbours): the kept size is at an
	 * older stamp until the pass runs again */
	kx_view_release(v);
	if (!ok(add_run(s, "demo_kernel", "gamma", 1000000, 3, &c) == 0, "a third run joins the group"))
		goto out;
	v = kx_store_view(s);
	uint64_t now = fresh_size(s, &a, &stored);
	ok(now != truth && stored == 0, "the old record is not believed at the new stamp (%llu, was %llu)",
	   (unsigned long long)now, (unsigned long long)truth);
	struct kx_view *before = v;
	v = kx_store_view(s);
	r = kx_tree_keep_sizes(t, before, v, NULL, NULL, &runs);
	ok(r == 0 && runs == 0, "a pass from the state after it to the same state sizes nothing (%zu)", runs);
	kx_view_release(before);
	r = kx_tree_keep_sizes(t, NULL, v, NULL, NULL, &runs);
	ok(r == 0 && runs == 3, "a pass over every group sizes three (%zu)", runs);
	ok(fresh_size(s, &a, &stored) == now && stored == 1, "and the new size is taken from the store");
out:
	kx_view_release(v);
	kx_tree_free(t);
	kx_store_close(s);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_liger();
	test_changes();
	test_late_sweep();
	test_signed();
	test_compare();
	test_kept_sizes();
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		diag("could not remove %s", tmpdir);
	return tap_done();
}
