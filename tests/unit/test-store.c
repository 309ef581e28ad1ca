// SPDX-License-Identifier: MIT
/*
 * The store module, on real RocksDB directories under mkdtemp: create/open/reopen and the
 * messages that say what to do; the rank index order *is* the ranking (ascending latency, ties by
 * earlier observedAt then digest; descending throughput across units; failed runs after the
 * ranked ones); prefix lookups; snapshot views; savepoints, rollback and abort leaving the store
 * and the writer's caches exactly as they were (checked by a later commit and kx_store_verify);
 * concurrent read-only handles and the single-writer lock.
 */
#include "kx/rank.h"
#include "kx/store.h"
#include "test-helpers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- staging runs ----------------------------------------------------------------------------- */

struct staged {
	struct kx_run_rec x;
	struct kx_group_rec g;
	struct kx_digest doc[KX_DOC__COUNT];
};

/* Validate, place and write one manifest tree into t, as the ingest pipeline does. */
static int stage(struct kx_txn *t, struct kx_json *root, int64_t ingested, struct staged *ret)
{
	struct kx_arena *a = kx_arena_new();
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_manifest m;
	struct staged s;
	int r = kx_manifest_check(a, root, &m, &p);
	if (r < 0) {
		dump_problems(&p);
		goto out;
	}
	r = kx_rank_place(&m, m.doc[KX_DOC_WORKLOAD], m.doc[KX_DOC_IMPLEMENTATION], &s.g, &s.x);
	for (int d = 0; r == 0 && d < KX_DOC__COUNT; d++) {
		s.doc[d] = m.digest[d];
		if (!m.doc[d])
			continue;
		struct kx_buf b = { 0 };
		r = kx_jcs_write(m.doc[d], &b);
		if (r == 0)
			r = kx_txn_put_doc(t, &m.digest[d], b.ptr, b.len);
		kx_buf_release(&b);
	}
	s.x.ingested_ns = ingested;
	if (r == 0)
		r = kx_txn_add_run(t, &s.x, &s.g, m.facts.source, m.facts.external_id);
	if (r == 0 && ret)
		*ret = s;
out:
	kx_problems_release(&p);
	kx_arena_free(a);
	return r;
}

static int stage_opts(struct kx_txn *t, const struct tm_opts *o, int64_t ingested, struct staged *ret)
{
	struct kx_arena *a = kx_arena_new();
	int r = stage(t, tm_build(a, o), ingested, ret);
	kx_arena_free(a);
	return r;
}

/* A throughput run: value in `unit`, protocol metric throughput. */
static int stage_tput(struct kx_txn *t, const char *impl, const char *value, const char *unit, bool failed,
		      struct staged *ret)
{
	struct kx_arena *a = kx_arena_new();
	struct kx_json *m = tm_base(a);
	tm_set_str(a, m, "/run/spec", "benchmark", "gemm_bf16/forward");
	tm_set_str(a, m, "/protocol/spec/measurement", "metric", "throughput");
	tm_set_str(a, m, "/implementation/spec", "name", impl);
	char ms[256];
	snprintf(ms, sizeof(ms), "[{\"metric\":\"throughput\",\"statistic\":\"median\",\"unit\":\"%s\",\"value\":%s}]", unit, value);
	tm_set(a, m, "/run/spec", "measurements", ms);
	tm_del(m, "/run/spec/timing", "latencyNs");
	if (failed) {
		tm_set_str(a, m, "/run/spec", "status", "failed");
		tm_del(m, "/run/spec", "measurements");
	}
	tm_fix(a, m);
	int r = stage(t, m, 1, ret);
	kx_arena_free(a);
	return r;
}

/* ---- the order of a group ---------------------------------------------------------------------- */

struct order {
	struct kx_digest run[32];
	bool ranked[32];
	size_t n;
};

static int collect(void *ctx, const struct kx_run_rec *run, bool ranked)
{
	struct order *o = ctx;
	if (o->n < 32) {
		o->run[o->n] = run->run;
		o->ranked[o->n] = ranked;
	}
	o->n++;
	return 0;
}

static void expect_order(struct kx_store *s, const struct kx_digest *group, const struct staged *const *want, size_t n,
			 size_t n_ranked, const char *what)
{
	struct order o = { .n = 0 };
	int r = kx_store_group_runs(s, NULL, group, collect, &o);
	bool same = r == 0 && o.n == n;
	for (size_t i = 0; same && i < n; i++)
		same = kx_digest_equal(&o.run[i], &want[i]->x.run) && o.ranked[i] == (i < n_ranked);
	if (!ok(same, "%s", what)) {
		diag("  got %zu runs (r=%d):", o.n, r);
		for (size_t i = 0; i < o.n && i < 32; i++) {
			size_t k = n;
			for (size_t q = 0; q < n; q++)
				if (kx_digest_equal(&o.run[i], &want[q]->x.run))
					k = q;
			diag("    %zu: expected position %zu, ranked %d", i, k, o.ranked[i]);
		}
	}
	struct kx_group_rec g;
	if (kx_store_get_group(s, NULL, group, &g) == 0)
		ok(g.ranked == n_ranked && g.unranked == n - n_ranked, "%s: the group counts %zu ranked, %zu not (got %u, %u)",
		   what, n_ranked, n - n_ranked, g.ranked, g.unranked);
	else
		ok(0, "%s: group record exists", what);
}

static struct kx_store *open_new(char **dir, const char *what)
{
	*dir = scratch_dir(what);
	struct kx_store *s = NULL;
	char *err = NULL;
	int r = kx_store_open(*dir, KX_STORE_CREATE, &s, &err);
	if (r < 0) {
		printf("Bail out! cannot create a store in %s: %s\n", *dir, err ? err : "?");
		exit(2);
	}
	return s;
}

static void verify_clean(struct kx_store *s, const char *what)
{
	struct kx_problems p;
	kx_problems_init(&p);
	uint64_t checked = 0;
	int r = kx_store_verify(s, &p, &checked);
	struct kx_store_stats st;
	kx_store_stats(s, NULL, &st);
	if (!ok(r == 0 && p.len == 0 && (checked > 0 || st.runs == 0), "%s: kx_store_verify finds no problem (%llu records)", what,
		(unsigned long long)checked))
		dump_problems(&p);
	kx_problems_release(&p);
}

static void lifecycle(void)
{
	char *dir = scratch_dir("store-open");
	char missing[1024];
	snprintf(missing, sizeof(missing), "%s/none", dir);
	struct kx_store *s = (struct kx_store *)(uintptr_t)0x1;
	char *err = NULL;
	int r = kx_store_open(missing, 0, &s, &err);
	ok(r == -ENOENT && s == (struct kx_store *)(uintptr_t)0x1, "opening a directory without a store: -ENOENT, no handle");
	ok(err && strstr(err, "init") && strstr(err, missing), "the message names the directory and says to init (%s)", err ? err : "");
	free(err);
	err = NULL;
	ok(access(missing, F_OK) != 0, "a failed open creates nothing");

	r = kx_store_open(missing, KX_STORE_CREATE, &s, &err);
	if (!ok(r == 0, "KX_STORE_CREATE creates a store")) {
		diag("  %s", err ? err : "");
		scratch_remove(dir);
		return;
	}
	is_str(kx_store_path(s), missing, "kx_store_path");
	struct kx_store_stats st;
	kx_store_stats(s, NULL, &st);
	ok(st.runs == 0 && st.documents == 0 && st.groups == 0 && st.generation == 0, "a new store is empty, generation 0");
	ok(st.created_ns > 1700000000000000000LL && st.changed_ns == st.created_ns, "created now; changed = created until a commit");
	verify_clean(s, "an empty store");

	/* one writer: a second read-write handle is refused, a read-only one works alongside */
	struct kx_store *s2 = NULL, *ro = NULL;
	char *err2 = NULL;
	r = kx_store_open(missing, 0, &s2, &err2);
	ok(r == -EBUSY && s2 == NULL, "a second read-write open: -EBUSY (got %d)", r);
	ok(err2 && strstr(err2, "in use"), "the message says the store is in use (%s)", err2 ? err2 : "");
	free(err2);
	kx_store_close(s2);
	r = kx_store_open(missing, KX_STORE_READONLY, &ro, NULL);
	ok(r == 0 && ro, "a read-only open while the writer is open");
	struct kx_txn *t = (struct kx_txn *)(uintptr_t)0x1;
	if (ro)
		ok(kx_store_txn_begin(ro, &t) == -EROFS && t == (struct kx_txn *)(uintptr_t)0x1, "a read-only handle cannot write: -EROFS");

	/* write, then read through both handles */
	struct staged a;
	r = kx_store_txn_begin(s, &t);
	if (ok(r == 0 && stage_opts(t, &(struct tm_opts){ .impl = "liger" }, 5, &a) == 0, "stage one run")) {
		ok(kx_txn_commit_gen(t, true, NULL) == 0, "commit (sync)");
	} else {
		kx_txn_abort(t);
	}
	struct kx_run_rec x;
	ok(kx_store_get_run(s, NULL, &a.x.run, &x) == 0 && x.value == 1000 && strcmp(x.impl, "liger") == 0 && x.ingested_ns == 5,
	   "the writer reads the committed run");
	kx_store_close(ro);
	ro = NULL;
	r = kx_store_open(missing, KX_STORE_READONLY, &ro, NULL);
	ok(r == 0 && kx_store_get_run(ro, NULL, &a.x.run, &x) == 0, "a read-only handle opened after the commit sees it");
	kx_store_close(ro);
	kx_store_stats(s, NULL, &st);
	ok(st.runs == 1 && st.groups == 1 && st.documents == 5 && st.generation == 1 && st.changed_ns >= st.created_ns,
	   "counters: 1 run, 1 group, 5 documents, generation 1");
	kx_store_close(s);

	/* reopen: everything is still there, and a new writer continues the counters */
	s = NULL;
	r = kx_store_open(missing, 0, &s, NULL);
	if (ok(r == 0, "reopen after close")) {
		struct kx_store_stats st2;
		kx_store_stats(s, NULL, &st2);
		ok(st2.runs == 1 && st2.groups == 1 && st2.documents == 5 && st2.generation == 1 && st2.created_ns == st.created_ns,
		   "counters survive a reopen");
		ok(kx_store_get_run(s, NULL, &a.x.run, &x) == 0 && kx_digest_equal(&x.group, &a.g.key), "the run survives a reopen");
		struct kx_buf b = { 0 };
		ok(kx_store_get_doc(s, NULL, &a.doc[KX_DOC_PROTOCOL], &b) == 0 && b.len > 0 && b.ptr[0] == '{', "documents survive a reopen");
		/* the stored bytes are the JCS of the whole document (metadata included) */
		struct kx_arena *ar = kx_arena_new();
		struct kx_json *base = tm_base(ar);
		struct kx_buf want = { 0 };
		kx_jcs_write(kx_json_get(base, "protocol"), &want);
		ok(b.len == want.len && memcmp(b.ptr, want.ptr, b.len) == 0, "a document is stored as the JCS of the whole document");
		kx_buf_release(&want);
		kx_arena_free(ar);
		kx_buf_release(&b);
		struct staged c;
		r = kx_store_txn_begin(s, &t);
		if (r == 0 && stage_opts(t, &(struct tm_opts){ .impl = "torch" }, 6, &c) == 0)
			r = kx_txn_commit_gen(t, false, NULL);
		else
			kx_txn_abort(t);
		kx_store_stats(s, NULL, &st2);
		ok(r == 0 && st2.runs == 2 && st2.groups == 1 && st2.documents == 7 && st2.generation == 2,
		   "after a reopen, a commit continues from the stored counters");
		struct kx_group_rec g;
		ok(kx_store_get_group(s, NULL, &a.g.key, &g) == 0 && g.ranked == 2, "the group record counts both runs");
		verify_clean(s, "after a reopen and a commit");
		kx_store_close(s);
	}
	scratch_remove(dir);
}

static void ranking_order(void)
{
	char *dir;
	struct kx_store *s = open_new(&dir, "store-rank");
	struct kx_txn *t;
	kx_store_txn_begin(s, &t);
	/* latency: ascending; ties by earlier observedAt, then by digest; failed last */
	struct staged r300, r100late, r100early, r200, rfail, tie1, tie2, old, young;
	int r = 0;
	r |= stage_opts(t, &(struct tm_opts){ .impl = "a", .median = "300" }, 1, &r300);
	r |= stage_opts(t, &(struct tm_opts){ .impl = "b", .median = "100", .observed = "2025-01-02T00:00:00Z" }, 1, &r100late);
	r |= stage_opts(t, &(struct tm_opts){ .impl = "c", .median = "100", .observed = "2025-01-01T00:00:00Z" }, 1, &r100early);
	r |= stage_opts(t, &(struct tm_opts){ .impl = "d", .median = "200" }, 1, &r200);
	r |= stage_opts(t, &(struct tm_opts){ .impl = "e", .status = "failed" }, 1, &rfail);
	/* a second group (another workload) for equal value and time: digest order */
	r |= stage_opts(t, &(struct tm_opts){ .impl = "f", .median = "50", .params = "{\"hidden\":1}" }, 1, &tie1);
	r |= stage_opts(t, &(struct tm_opts){ .impl = "g", .median = "50", .params = "{\"hidden\":1}" }, 1, &tie2);
	/* a third: observedAt before and after 1970 */
	r |= stage_opts(t, &(struct tm_opts){ .impl = "h", .median = "7", .observed = "1971-01-01T00:00:00Z", .params = "{\"hidden\":2}" }, 1, &young);
	r |= stage_opts(t, &(struct tm_opts){ .impl = "i", .median = "7", .observed = "1969-06-01T00:00:00Z", .params = "{\"hidden\":2}" }, 1, &old);
	ok(r == 0, "stage nine latency runs in three groups");
	ok(kx_txn_commit_gen(t, false, NULL) == 0, "commit");
	ok(kx_digest_equal(&r300.g.key, &r100late.g.key) && kx_digest_equal(&r300.g.key, &rfail.g.key) &&
		   !kx_digest_equal(&r300.g.key, &tie1.g.key),
	   "runs of one benchmark, gpu and workload share a group; another workload is another group");
	const struct staged *lat[] = { &r100early, &r100late, &r200, &r300, &rfail };
	expect_order(s, &r300.g.key, lat, 5, 4, "latency: 100 (earlier), 100 (later), 200, 300, then the failed run");
	const struct staged *ties[2] = { &tie1, &tie2 };
	if (memcmp(tie1.x.run.b, tie2.x.run.b, 32) > 0) {
		ties[0] = &tie2;
		ties[1] = &tie1;
	}
	expect_order(s, &tie1.g.key, ties, 2, 2, "equal value and observedAt: ordered by run digest");
	const struct staged *ages[] = { &old, &young };
	expect_order(s, &old.g.key, ages, 2, 2, "a tie broken by an observedAt before 1970");

	/* throughput: descending on the base value, whatever the unit */
	struct staged g1500, t12, g900, tf;
	kx_store_txn_begin(s, &t);
	r = stage_tput(t, "cutlass", "1500", "GFLOP/s", false, &g1500);
	r |= stage_tput(t, "triton", "1.2", "TFLOP/s", false, &t12);
	r |= stage_tput(t, "torch", "900", "GFLOP/s", false, &g900);
	r |= stage_tput(t, "broken", "0", "GFLOP/s", true, &tf);
	ok(r == 0 && kx_txn_commit_gen(t, false, NULL) == 0, "stage and commit four throughput runs");
	ok(g1500.g.order == KX_ORDER_DESCENDING, "a throughput group ranks descending");
	const struct staged *tp[] = { &g1500, &t12, &g900, &tf };
	expect_order(s, &g1500.g.key, tp, 4, 3, "throughput: 1500 GFLOP/s, 1.2 TFLOP/s, 900 GFLOP/s, then the failed run");

	/* adding a better run later moves it to the front */
	struct staged best;
	kx_store_txn_begin(s, &t);
	r = stage_opts(t, &(struct tm_opts){ .impl = "j", .median = "99.5" }, 2, &best);
	ok(r == 0 && kx_txn_commit_gen(t, false, NULL) == 0, "a faster run arrives later");
	const struct staged *lat2[] = { &best, &r100early, &r100late, &r200, &r300, &rfail };
	expect_order(s, &r300.g.key, lat2, 6, 5, "the faster run ranks first");

	/* the path index, directory mtimes, the source index */
	struct kx_store_stats st;
	kx_store_stats(s, NULL, &st);
	ok(st.runs == 14 && st.groups == 4, "14 runs in 4 groups (got %llu, %llu)", (unsigned long long)st.runs,
	   (unsigned long long)st.groups);
	int64_t mt = 0;
	ok(kx_store_dir_mtime(s, NULL, "benchmarks/rms_norm/forward/nvidia-a100-sxm4-80gb", &mt) == 0 && mt == 2,
	   "a gpu directory's mtime is its newest run's ingest time");
	ok(kx_store_dir_mtime(s, NULL, "benchmarks/gemm_bf16", &mt) == 0 && mt == 1, "a kernel directory's mtime");
	ok(kx_store_dir_mtime(s, NULL, "benchmarks/nothing", &mt) == -ENOENT, "no mtime for a directory that is not there");

	/*
	 * A clock stepped back: runs stamped earlier than their directories still move the mtimes
	 * forward — the mtime is what caches and the daemon's inode versions key on — once per commit.
	 */
	const char *gpu = "benchmarks/rms_norm/forward/nvidia-a100-sxm4-80gb";
	int64_t gpu0 = 0, gpu1 = 0, top0 = 0, top1 = 0, gtt = 0;
	kx_store_dir_mtime(s, NULL, gpu, &gpu0);
	kx_store_dir_mtime(s, NULL, "benchmarks", &top0);
	struct staged back1, back2;
	kx_store_txn_begin(s, &t);
	r = stage_opts(t, &(struct tm_opts){ .impl = "k", .median = "150" }, 1, &back1);
	r |= stage_opts(t, &(struct tm_opts){ .impl = "l", .median = "160" }, 1, &back2);
	ok(r == 0 && kx_txn_commit_gen(t, false, NULL) == 0,
	   "two runs ingested at time 1, below a directory last changed at %lld", (long long)gpu0);
	r = kx_store_dir_mtime(s, NULL, gpu, &gpu1);
	r |= kx_store_dir_mtime(s, NULL, "benchmarks", &top1);
	ok(r == 0 && gpu1 == gpu0 + 1 && top1 == top0 + 1,
	   "the gpu directory and benchmarks/ still move forward, by one for the commit (%lld -> %lld)",
	   (long long)gpu0, (long long)gpu1);
	ok(kx_store_dir_mtime(s, NULL, "benchmarks/gemm_bf16", &gtt) == 0 && gtt == 1, "a directory it did not change keeps its mtime");
	verify_clean(s, "after ranking");
	kx_store_close(s);
	scratch_remove(dir);
}

struct names {
	char v[16][KX_NAME_MAX];
	struct kx_digest group[16];
	size_t n;
};

static int name_cb(void *ctx, const char *name, const struct kx_digest *w, const struct kx_digest *g, bool cut)
{
	struct names *o = ctx;
	if (o->n < 16) {
		snprintf(o->v[o->n], KX_NAME_MAX, "%s", name);
		if (g)
			o->group[o->n] = *g;
	}
	o->n++;
	return 0;
}

static int count_cb(void *ctx, const struct kx_run_rec *x)
{
	(*(size_t *)ctx)++;
	return 0;
}

/* A document of the store, read as the tree reads one: counted when its bytes hash to its key. */
struct docs {
	struct kx_store *s;
	size_t n;
};

static int count_doc(void *ctx, const struct kx_digest *d)
{
	struct docs *c = ctx;
	struct kx_digest got;
	struct kx_buf b = { 0 };
	struct kx_arena *a = kx_arena_new();
	struct kx_json *v = NULL;
	struct kx_json_error e;
	if (kx_store_get_doc(c->s, NULL, d, &b) == 0 && kx_json_parse(a, b.ptr, b.len, 0, &v, NULL, &e) == 0 &&
	    kx_digest_document(v, &got) == 0 && kx_digest_equal(&got, d))
		c->n++;
	kx_arena_free(a);
	kx_buf_release(&b);
	return 0;
}

static int stop_cb(void *ctx, const struct kx_run_rec *x)
{
	(*(size_t *)ctx)++;
	return 42;
}

static void listings(void)
{
	char *dir;
	struct kx_store *s = open_new(&dir, "store-list");
	struct kx_txn *t;
	kx_store_txn_begin(s, &t);
	struct staged a, b, c;
	int r = stage_opts(t, &(struct tm_opts){ .benchmark = "rms_norm/forward" }, 1, &a);
	r |= stage_opts(t, &(struct tm_opts){ .benchmark = "rms_norm/backward" }, 1, &b);
	r |= stage_opts(t, &(struct tm_opts){ .benchmark = "layer_norm/forward", .source = "src", .external_id = "ext-1" }, 1, &c);
	ok(r == 0 && kx_txn_commit_gen(t, false, NULL) == 0, "three runs in three benchmarks");
	struct names o = { .n = 0 };
	kx_store_tree_list(s, NULL, NULL, 0, name_cb, &o);
	ok(o.n == 2 && strcmp(o.v[0], "layer_norm") == 0 && strcmp(o.v[1], "rms_norm") == 0, "kernels listed once each, in order");
	o.n = 0;
	const char *k[] = { "rms_norm", "forward", "nvidia-a100-sxm4-80gb" };
	kx_store_tree_list(s, NULL, k, 1, name_cb, &o);
	ok(o.n == 2 && strcmp(o.v[0], "backward") == 0 && strcmp(o.v[1], "forward") == 0, "passes of rms_norm");
	o.n = 0;
	kx_store_tree_list(s, NULL, k, 3, name_cb, &o);
	ok(o.n == 1 && strcmp(o.v[0], "hidden4096-tokens16384-bf16") == 0 && kx_digest_equal(&o.group[0], &a.g.key),
	   "the workload level gives the base slug and the group key");
	struct kx_digest d;
	ok(kx_store_find_source(s, NULL, "src", "ext-1", &d) == 0 && kx_digest_equal(&d, &c.x.run), "the source index finds the run");
	ok(kx_store_find_source(s, NULL, "src", "ext-2", &d) == -ENOENT, "an unknown externalId: -ENOENT");
	ok(kx_store_find_source(s, NULL, "other", "ext-1", &d) == -ENOENT, "the source is part of the key");
	size_t n = 0;
	kx_store_each_run(s, NULL, count_cb, &n);
	ok(n == 3, "kx_store_each_run visits 3 runs");
	struct docs docs = { s, 0 };
	kx_store_each_digest(s, NULL, KX_RECORD_DOC, count_doc, &docs);
	ok(docs.n == 7, "every stored document hashes to its key (3 runs + 4 shared documents)");
	n = 0;
	ok(kx_store_each_run(s, NULL, stop_cb, &n) == 42 && n == 1, "a callback's non-zero return stops iteration and is returned");
	kx_store_close(s);
	scratch_remove(dir);
}

/* The scans over every group: the path index in path order, and the rank index group by group. */
struct every {
	char path[32][4 * KX_NAME_MAX];
	struct kx_digest group[32];
	size_t n;
	struct order runs[32]; /* by group, in the order the rank index gives them */
	struct kx_digest run_group[32];
	size_t ngroups;
};

static int every_group(void *ctx, const char *kernel, const char *pass, const char *gpu, const char *name,
		       const struct kx_digest *w, const struct kx_digest *g, bool cut)
{
	struct every *e = ctx;
	if (e->n < 32) {
		snprintf(e->path[e->n], sizeof(e->path[e->n]), "%s/%s/%s/%s", kernel, pass, gpu, name);
		e->group[e->n] = *g;
	}
	e->n++;
	return 0;
}

static int every_run(void *ctx, const struct kx_digest *group, const struct kx_run_rec *run, bool ranked)
{
	struct every *e = ctx;
	if (!e->ngroups || !kx_digest_equal(&e->run_group[e->ngroups - 1], group)) {
		if (e->ngroups == 32)
			return -E2BIG;
		e->run_group[e->ngroups++] = *group;
	}
	return collect(&e->runs[e->ngroups - 1], run, ranked);
}

static void every_group_scans(void)
{
	char *dir;
	struct kx_store *s = open_new(&dir, "store-every");
	struct kx_txn *t;
	kx_store_txn_begin(s, &t);
	struct staged a, b, c, d;
	int r = stage_opts(t, &(struct tm_opts){ .benchmark = "rms_norm/forward", .median = "2000" }, 1, &a);
	r |= stage_opts(t, &(struct tm_opts){ .benchmark = "rms_norm/forward", .impl = "torch", .median = "1000" }, 1, &b);
	r |= stage_opts(t, &(struct tm_opts){ .benchmark = "rms_norm/backward" }, 1, &c);
	r |= stage_opts(t, &(struct tm_opts){ .benchmark = "layer_norm/forward", .status = "failed" }, 1, &d);
	ok(r == 0 && kx_txn_commit_gen(t, false, NULL) == 0, "four runs in three groups");
	struct every e = { .n = 0 };
	ok(kx_store_tree_groups(s, NULL, every_group, &e) == 0 && e.n == 3, "kx_store_tree_groups: every group once");
	const char *want[] = { "layer_norm/forward", "rms_norm/backward", "rms_norm/forward" };
	bool order = e.n == 3;
	for (size_t i = 0; i < 3 && order; i++) {
		char p[4 * KX_NAME_MAX];
		snprintf(p, sizeof(p), "%s/nvidia-a100-sxm4-80gb/hidden4096-tokens16384-bf16", want[i]);
		order = strcmp(e.path[i], p) == 0;
	}
	ok(order && kx_digest_equal(&e.group[0], &d.g.key) && kx_digest_equal(&e.group[2], &a.g.key),
	   "in path order, each with its kernel, pass, gpu, base slug and group key");
	ok(kx_store_each_group_run(s, NULL, 0, 1, every_run, &e) == 0 && e.ngroups == 3, "kx_store_each_group_run: three groups");
	bool same = true;
	for (size_t i = 0; i < e.ngroups && same; i++) {
		struct order o = { .n = 0 };
		kx_store_group_runs(s, NULL, &e.run_group[i], collect, &o);
		same = o.n == e.runs[i].n;
		for (size_t k = 0; k < o.n && same; k++)
			same = kx_digest_equal(&o.run[k], &e.runs[i].run[k]) && o.ranked[k] == e.runs[i].ranked[k];
	}
	ok(same, "each group's runs as kx_store_group_runs lists them: rank order, ranked or not");
	bool two = false;
	for (size_t i = 0; i < e.ngroups; i++)
		if (kx_digest_equal(&e.run_group[i], &a.g.key))
			two = e.runs[i].n == 2 && kx_digest_equal(&e.runs[i].run[0], &b.x.run) && e.runs[i].ranked[1];
	ok(two, "torch (1000 ns) before liger (2000 ns) in their group");
	/* in parts: 24 groups more, so that every part of a few has some */
	kx_store_txn_begin(s, &t);
	for (int i = 0; i < 24 && r == 0; i++) {
		char bench[64];
		snprintf(bench, sizeof(bench), "kernel%02d/forward", i);
		r = stage_opts(t, &(struct tm_opts){ .benchmark = bench }, 1, NULL);
	}
	ok(r == 0 && kx_txn_commit_gen(t, false, NULL) == 0, "24 more groups");
	static struct every whole, parts;
	whole.ngroups = 0;
	kx_store_each_group_run(s, NULL, 0, 1, every_run, &whole);
	for (unsigned count = 2; count <= 256; count = count * 3 - 1) {
		memset(&parts, 0, sizeof(parts));
		bool in_parts = true;
		for (unsigned part = 0; part < count && in_parts; part++)
			in_parts = kx_store_each_group_run(s, NULL, part, count, every_run, &parts) == 0;
		same = in_parts && whole.ngroups == 27 && parts.ngroups == whole.ngroups;
		for (size_t i = 0; i < whole.ngroups && same; i++)
			same = kx_digest_equal(&parts.run_group[i], &whole.run_group[i]) &&
			       parts.runs[i].n == whole.runs[i].n;
		ok(same, "in %u parts: the same 27 groups and runs, in the same order (%zu)", count, parts.ngroups);
	}
	ok(kx_store_each_group_run(s, NULL, 5, 5, every_run, &parts) == -EINVAL &&
		   kx_store_each_group_run(s, NULL, 0, 257, every_run, &parts) == -EINVAL,
	   "a part past the last, or more parts than a byte has values: -EINVAL");
	kx_store_close(s);
	scratch_remove(dir);
}

struct seen_currents {
	size_t n;
	struct kx_digest group[8];
	struct kx_current_rec c[8];
};

static int every_current(void *ctx, const struct kx_digest *group, const struct kx_current_rec *c)
{
	struct seen_currents *e = ctx;
	if (e->n == 8)
		return -E2BIG;
	e->group[e->n] = *group;
	e->c[e->n++] = *c;
	return 0;
}

/* The current run of impl in the one group: its run digest, or all zeroes when there is none. */
static struct kx_digest current_of_impl(struct kx_store *s, const char *impl)
{
	struct seen_currents e = { .n = 0 };
	struct kx_digest none = { { 0 } };
	if (kx_store_each_current(s, NULL, 0, 1, every_current, &e) < 0)
		return none;
	for (size_t i = 0; i < e.n; i++)
		if (strcmp(e.c[i].impl, impl) == 0)
			return e.c[i].run;
	return none;
}

/* The 'C' index: of each implementation's ranked runs in a group the newest, kept at every commit. */
static void current_runs(void)
{
	char *dir;
	struct kx_store *s = open_new(&dir, "store-current");
	struct kx_txn *t;
	struct staged a, b, old, failed, newer, older, aborted, between;
	kx_store_txn_begin(s, &t);
	int r = stage_opts(t, &(struct tm_opts){ .observed = "2026-01-01T00:00:00Z", .median = "2000" }, 1, &a);
	r |= stage_opts(t, &(struct tm_opts){ .impl = "torch", .median = "1000" }, 1, &b);
	r |= stage_opts(t, &(struct tm_opts){ .observed = "2025-06-01T00:00:00Z", .median = "500" }, 1, &old);
	r |= stage_opts(t, &(struct tm_opts){ .observed = "2026-06-01T00:00:00Z", .status = "failed" }, 1, &failed);
	ok(r == 0 && kx_txn_commit_gen(t, false, NULL) == 0, "four runs of two implementations in one group");
	struct seen_currents e = { .n = 0 };
	r = kx_store_each_current(s, NULL, 0, 1, every_current, &e);
	ok(r == 0 && e.n == 2, "two current runs (%zu)", e.n);
	ok(e.n == 2 && strcmp(e.c[0].impl, "liger") == 0 && strcmp(e.c[1].impl, "torch") == 0 &&
		   kx_digest_equal(&e.group[0], &a.g.key) && kx_digest_equal(&e.group[1], &a.g.key),
	   "in implementation name order, of their group");
	ok(e.n == 2 && kx_digest_equal(&e.c[0].run, &a.x.run) && e.c[0].value == 2000 &&
		   e.c[0].observed_ns == a.x.observed_ns && strcmp(e.c[0].unit, a.x.unit) == 0,
	   "liger's is its newest ranked run, with its value: not the older, faster one, nor the failed one");
	ok(e.n == 2 && kx_digest_equal(&e.c[1].run, &b.x.run) && e.c[1].base_value == b.x.base_value &&
		   e.c[1].has_spread == b.x.has_spread && e.c[1].base_p20 == b.x.base_p20 && e.c[1].base_p80 == b.x.base_p80,
	   "torch's, with its base value and p20-p80");

	kx_store_txn_begin(s, &t);
	r = stage_opts(t, &(struct tm_opts){ .observed = "2026-03-01T00:00:00Z", .median = "3000" }, 2, &newer);
	ok(r == 0 && kx_txn_commit_gen(t, false, NULL) == 0, "a newer liger run");
	struct kx_digest cur = current_of_impl(s, "liger");
	ok(kx_digest_equal(&cur, &newer.x.run), "... becomes liger's current run");
	kx_store_txn_begin(s, &t);
	r = stage_opts(t, &(struct tm_opts){ .observed = "2024-01-01T00:00:00Z", .median = "10" }, 3, &older);
	ok(r == 0 && kx_txn_commit_gen(t, false, NULL) == 0, "an older liger run, stored later");
	cur = current_of_impl(s, "liger");
	ok(kx_digest_equal(&cur, &newer.x.run), "... does not");
	kx_store_txn_begin(s, &t);
	r = stage_opts(t, &(struct tm_opts){ .observed = "2026-09-01T00:00:00Z", .median = "20" }, 4, &aborted);
	kx_txn_abort(t);
	kx_store_txn_begin(s, &t);
	r |= stage_opts(t, &(struct tm_opts){ .observed = "2026-04-01T00:00:00Z", .median = "30" }, 5, &between);
	ok(r == 0 && kx_txn_commit_gen(t, false, NULL) == 0, "a run newer than the current one, after an aborted newest one");
	cur = current_of_impl(s, "liger");
	ok(kx_digest_equal(&cur, &between.x.run), "... is current: the abort took its run out of the writer's cache too");
	verify_clean(s, "current runs");
	kx_store_close(s);
	char *err = NULL;
	ok(kx_store_open(dir, KX_STORE_READONLY, &s, &err) == 0, "reopened read-only");
	cur = current_of_impl(s, "liger");
	ok(s && kx_digest_equal(&cur, &between.x.run), "... the same current run");
	kx_store_close(s);
	free(err);
	scratch_remove(dir);
}

/* Prefix lookups over records with chosen digests. */
static void prefixes(void)
{
	char *dir;
	struct kx_store *s = open_new(&dir, "store-prefix");
	struct kx_txn *t;
	kx_store_txn_begin(s, &t);
	struct kx_group_rec g;
	memset(&g, 0, sizeof(g));
	kx_sha256("group", 5, g.key.b);
	snprintf(g.benchmark, sizeof(g.benchmark), "k/p");
	snprintf(g.metric, sizeof(g.metric), "latency");
	snprintf(g.kernel, sizeof(g.kernel), "k");
	snprintf(g.pass, sizeof(g.pass), "p");
	snprintf(g.gpu, sizeof(g.gpu), "gpu");
	snprintf(g.workload_slug, sizeof(g.workload_slug), "w");
	static const char *const hex[] = {
		"abcd000000000000000000000000000000000000000000000000000000000001",
		"abce000000000000000000000000000000000000000000000000000000000002",
		"0f00000000000000000000000000000000000000000000000000000000000003",
	};
	struct kx_run_rec x[3];
	for (int i = 0; i < 3; i++) {
		memset(&x[i], 0, sizeof(x[i]));
		kx_unhex(hex[i], 64, x[i].run.b, 32);
		x[i].group = g.key;
		x[i].passed = x[i].has_value = true;
		x[i].value = x[i].base_value = 10 + i;
		snprintf(x[i].impl, sizeof(x[i].impl), "impl");
		snprintf(x[i].unit, sizeof(x[i].unit), "ns");
		kx_txn_add_run(t, &x[i], &g, NULL, NULL);
	}
	ok(kx_txn_commit_gen(t, false, NULL) == 0, "three runs with chosen digests");
	struct kx_digest d;
	static const struct {
		const char *prefix;
		int want; /* index, or -ENOENT / -ENOTUNIQ */
	} cases[] = {
		{ "abcd", 0 }, { "abce", 1 }, { "0f", 2 }, { "0f0", 2 }, { "ab", -ENOTUNIQ }, { "abc", -ENOTUNIQ },
		{ "abcf", -ENOENT }, { "ff", -ENOENT }, { "abd", -ENOENT }, { "ABCD", -ENOENT }, { "a", -ENOENT },
		{ "abcd000000000000000000000000000000000000000000000000000000000001", 0 },
		{ "abcd0000000000000000000000000000000000000000000000000000000000010", -ENOENT },
		{ "zz", -ENOENT },
	};
	/* the latest state, then a view (whose one iterator seeks again for every lookup, back and forth) */
	struct kx_view *view = kx_store_view(s);
	for (int pass = 0; pass < 2; pass++) {
		struct kx_view *v = pass ? view : NULL;
		const char *in = pass ? " (in a view)" : "";
		for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
			memset(&d, 0, sizeof(d));
			int r = kx_store_find_run_prefix(s, v, cases[i].prefix, &d);
			if (cases[i].want >= 0)
				ok(r == 0 && kx_digest_equal(&d, &x[cases[i].want].run), "prefix '%s' finds run %d%s",
				   cases[i].prefix, cases[i].want, in);
			else
				ok(r == cases[i].want && kx_digest_equal(&d, &(struct kx_digest){ 0 }), "prefix '%s': %s, the digest untouched%s (got %d)",
				   cases[i].prefix, cases[i].want == -ENOENT ? "-ENOENT" : "-ENOTUNIQ", in, r);
		}
	}
	kx_view_release(view);
	/* bits: 0xcd = 11001101, 0xce = 11001110 share 6 bits */
	ok(kx_store_find_bits(s, NULL, KX_RECORD_RUN, x[0].run.b, 14, &d) == -ENOTUNIQ, "14 bits: both abcd… and abce… match");
	ok(kx_store_find_bits(s, NULL, KX_RECORD_RUN, x[0].run.b, 15, &d) == 0 && kx_digest_equal(&d, &x[0].run), "15 bits tell them apart (abcd…)");
	ok(kx_store_find_bits(s, NULL, KX_RECORD_RUN, x[1].run.b, 15, &d) == 0 && kx_digest_equal(&d, &x[1].run), "15 bits tell them apart (abce…)");
	ok(kx_store_find_bits(s, NULL, KX_RECORD_RUN, x[2].run.b, 256, &d) == 0 && kx_digest_equal(&d, &x[2].run), "256 bits: the whole digest");
	ok(kx_store_find_bits(s, NULL, KX_RECORD_RUN, x[2].run.b, 7, &d) == -ENOENT, "fewer than 8 bits: -ENOENT");
	ok(kx_store_find_bits(s, NULL, KX_RECORD_GROUP, g.key.b, 40, &d) == 0 && kx_digest_equal(&d, &g.key), "groups by prefix");
	ok(kx_store_find_bits(s, NULL, KX_RECORD_DOC, x[0].run.b, 16, &d) == -ENOENT, "no documents in this store");
	kx_store_close(s);
	scratch_remove(dir);
}

static void views(void)
{
	char *dir;
	struct kx_store *s = open_new(&dir, "store-view");
	struct kx_txn *t;
	struct staged a, b;
	kx_store_txn_begin(s, &t);
	stage_opts(t, &(struct tm_opts){ .impl = "a" }, 1, &a);
	kx_txn_commit_gen(t, false, NULL);
	struct kx_view *v = kx_store_view(s);
	ok(v && kx_view_generation(v) == 1, "a view of generation 1");
	kx_store_txn_begin(s, &t);
	stage_opts(t, &(struct tm_opts){ .impl = "b", .median = "10" }, 2, &b);
	/* not committed yet: nobody sees it */
	struct kx_run_rec x;
	ok(kx_store_get_run(s, NULL, &b.x.run, &x) == -ENOENT, "an uncommitted run is not visible to readers");
	ok(kx_txn_get_run(t, &b.x.run, &x) == 0, "... but the transaction sees its own write");
	kx_txn_commit_gen(t, false, NULL);
	ok(kx_store_get_run(s, v, &b.x.run, &x) == -ENOENT, "a view taken before a commit does not see the new run");
	ok(kx_store_get_run(s, NULL, &b.x.run, &x) == 0, "the latest state does");
	struct kx_store_stats st;
	kx_store_stats(s, v, &st);
	ok(st.runs == 1 && st.generation == 1, "the old view's counters are the old ones");
	struct order o = { .n = 0 };
	kx_store_group_runs(s, v, &a.g.key, collect, &o);
	ok(o.n == 1, "the old view lists the group as it was (1 run)");
	struct kx_group_rec g;
	ok(kx_store_get_group(s, v, &a.g.key, &g) == 0 && g.ranked == 1, "the old view's group record counts 1");
	struct kx_digest d;
	char hex[KX_DIGEST_HEX + 1];
	kx_digest_hex(&b.x.run, hex);
	hex[12] = '\0';
	ok(kx_store_find_run_prefix(s, v, hex, &d) == -ENOENT, "prefix lookups in the old view do not see it either");
	struct kx_view *v2 = kx_store_view(s);
	ok(kx_view_generation(v2) == 2 && kx_store_get_run(s, v2, &b.x.run, &x) == 0, "a new view sees generation 2");
	kx_view_release(v);
	kx_view_release(v2);
	kx_view_release(NULL);
	kx_store_close(s);
	scratch_remove(dir);
}

static void savepoints(void)
{
	char *dir;
	struct kx_store *s = open_new(&dir, "store-savepoint");
	struct kx_txn *t;
	struct staged a, b, c, d, e;
	struct kx_run_rec x;
	struct kx_store_stats st;

	/* run a into group G; then, under a savepoint, b into G and c into a new group H */
	kx_store_txn_begin(s, &t);
	ok(stage_opts(t, &(struct tm_opts){ .impl = "a" }, 1, &a) == 0, "stage a");
	size_t count_a = kx_txn_count(t);
	kx_txn_savepoint(t);
	ok(stage_opts(t, &(struct tm_opts){ .impl = "b", .median = "5" }, 2, &b) == 0, "stage b (same group) after the savepoint");
	ok(stage_opts(t, &(struct tm_opts){ .impl = "c", .params = "{\"hidden\":7}", .source = "s", .external_id = "c" }, 3, &c) == 0,
	   "stage c (new group, new workload document, a source entry)");
	ok(kx_txn_get_run(t, &b.x.run, &x) == 0 && kx_txn_has_doc(t, &c.doc[KX_DOC_WORKLOAD]), "the transaction sees b and c");
	kx_txn_rollback(t);
	ok(kx_txn_count(t) == count_a, "rollback returns the batch to its size at the savepoint");
	ok(kx_txn_get_run(t, &b.x.run, &x) == -ENOENT && kx_txn_get_run(t, &c.x.run, &x) == -ENOENT,
	   "rolled-back runs are not found in the transaction");
	ok(!kx_txn_has_doc(t, &c.doc[KX_DOC_WORKLOAD]) && !kx_txn_has_doc(t, &c.doc[KX_DOC_RUN]), "rolled-back documents are gone");
	struct kx_digest dd;
	ok(kx_txn_find_source(t, "s", "c", &dd) == -ENOENT, "the rolled-back source entry is gone");
	struct kx_group_rec g;
	ok(kx_txn_get_group(t, &a.g.key, &g) == 0 && g.ranked == 1, "group G counts only a again");
	ok(kx_txn_get_group(t, &c.g.key, &g) == -ENOENT, "group H does not exist");
	ok(kx_txn_get_run(t, &a.x.run, &x) == 0, "a is still staged");
	ok(kx_txn_commit_gen(t, false, NULL) == 0, "commit");
	kx_store_stats(s, NULL, &st);
	ok(st.runs == 1 && st.groups == 1 && st.documents == 5, "committed: 1 run, 1 group, 5 documents (got %llu, %llu, %llu)",
	   (unsigned long long)st.runs, (unsigned long long)st.groups, (unsigned long long)st.documents);
	ok(kx_store_get_run(s, NULL, &b.x.run, &x) == -ENOENT && kx_store_get_run(s, NULL, &c.x.run, &x) == -ENOENT,
	   "b and c were never written");
	verify_clean(s, "after a rollback and commit");

	/* the caches the writer keeps must have forgotten b, c and H: adding into G and H now */
	kx_store_txn_begin(s, &t);
	ok(stage_opts(t, &(struct tm_opts){ .impl = "d", .median = "7" }, 4, &d) == 0, "stage d into G");
	ok(stage_opts(t, &(struct tm_opts){ .impl = "e", .params = "{\"hidden\":7}", .source = "s", .external_id = "c" }, 5, &e) == 0,
	   "stage e into H, with c's source entry");
	ok(kx_digest_equal(&e.g.key, &c.g.key), "e is in the group c would have been");
	ok(kx_txn_commit_gen(t, false, NULL) == 0, "commit");
	kx_store_stats(s, NULL, &st);
	ok(st.runs == 3 && st.groups == 2 && st.documents == 10, "3 runs, 2 groups, 10 documents (got %llu, %llu, %llu)",
	   (unsigned long long)st.runs, (unsigned long long)st.groups, (unsigned long long)st.documents);
	ok(kx_store_get_group(s, NULL, &a.g.key, &g) == 0 && g.ranked == 2, "G counts a and d (got %u)", g.ranked);
	ok(kx_store_get_group(s, NULL, &e.g.key, &g) == 0 && g.ranked == 1, "H counts e");
	ok(kx_store_find_source(s, NULL, "s", "c", &dd) == 0 && kx_digest_equal(&dd, &e.x.run), "the source entry is e's");
	verify_clean(s, "after a later commit into the rolled-back group");

	/* a second savepoint round in one transaction: file-by-file staging */
	struct staged f, h;
	kx_store_txn_begin(s, &t);
	kx_txn_savepoint(t);
	ok(stage_opts(t, &(struct tm_opts){ .impl = "f", .median = "8" }, 6, &f) == 0, "file 1: stage f");
	kx_txn_savepoint(t);
	stage_opts(t, &(struct tm_opts){ .impl = "g2", .median = "9", .params = "{\"hidden\":99}" }, 6, NULL);
	kx_txn_rollback(t);
	kx_txn_savepoint(t);
	ok(stage_opts(t, &(struct tm_opts){ .impl = "h", .median = "11" }, 6, &h) == 0, "file 3: stage h");
	ok(kx_txn_commit_gen(t, false, NULL) == 0, "commit files 1 and 3");
	kx_store_stats(s, NULL, &st);
	ok(st.runs == 5 && st.groups == 2, "5 runs, 2 groups: file 2 left nothing (got %llu, %llu)", (unsigned long long)st.runs,
	   (unsigned long long)st.groups);
	verify_clean(s, "after staging three files and refusing the second");
	kx_store_close(s);
	scratch_remove(dir);
}

static void aborts(void)
{
	char *dir;
	struct kx_store *s = open_new(&dir, "store-abort");
	struct kx_txn *t;
	struct staged a, b;
	struct kx_run_rec x;
	struct kx_store_stats st;
	kx_store_txn_begin(s, &t);
	stage_opts(t, &(struct tm_opts){ .impl = "a", .source = "s", .external_id = "a" }, 1, &a);
	kx_txn_abort(t);
	kx_store_stats(s, NULL, &st);
	ok(st.runs == 0 && st.documents == 0 && st.groups == 0 && st.generation == 0, "abort: nothing written, no generation bump");
	ok(kx_store_get_run(s, NULL, &a.x.run, &x) == -ENOENT, "abort: the run is not there");
	struct kx_buf bb = { 0 };
	ok(kx_store_get_doc(s, NULL, &a.doc[KX_DOC_PROTOCOL], &bb) == -ENOENT, "abort: no documents");
	kx_buf_release(&bb);
	kx_txn_abort(NULL);

	/* the same run again: it must be new again, with its group and documents */
	kx_store_txn_begin(s, &t);
	ok(kx_txn_get_run(t, &a.x.run, &x) == -ENOENT && !kx_txn_has_doc(t, &a.doc[KX_DOC_PROTOCOL]),
	   "a new transaction does not see the aborted writes (caches rolled back)");
	stage_opts(t, &(struct tm_opts){ .impl = "a", .source = "s", .external_id = "a" }, 1, &a);
	stage_opts(t, &(struct tm_opts){ .impl = "b" }, 1, &b);
	ok(kx_txn_commit_gen(t, false, NULL) == 0, "commit after an abort");
	kx_store_stats(s, NULL, &st);
	ok(st.runs == 2 && st.groups == 1 && st.documents == 7 && st.generation == 1, "2 runs, 1 group, 7 documents, generation 1");
	verify_clean(s, "after an abort and a commit");
	kx_store_close(s);
	scratch_remove(dir);
}

int main(void)
{
	lifecycle();
	ranking_order();
	listings();
	every_group_scans();
	current_runs();
	prefixes();
	views();
	savepoints();
	aborts();
	return tap_done();
}
