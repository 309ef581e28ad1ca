// SPDX-License-Identifier: MIT
/*
 * The ingest pipeline over a real store: a file is one decision. The same run twice is
 * idempotent (added, then already present, no new generation); the same observation with other
 * content is a conflict naming the stored run, whether the first copy is in the store or earlier
 * in the same JSON Lines file, and nothing of the refused file is written; a batch keeps the
 * files it accepted around one it refused; a run that only references a workload document gets
 * the stored document's slug; importers' trees go through the same checks.
 */
#include "kx/ingest.h"
#include "test-helpers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct kx_store *open_new(char **dir, const char *what)
{
	*dir = scratch_dir(what);
	struct kx_store *s = NULL;
	char *err = NULL;
	if (kx_store_open(*dir, KX_STORE_CREATE, &s, &err) < 0) {
		printf("Bail out! cannot create a store in %s: %s\n", *dir, err ? err : "?");
		exit(2);
	}
	return s;
}

static struct kx_store_stats stats(struct kx_store *s)
{
	struct kx_store_stats st;
	kx_store_stats(s, NULL, &st);
	return st;
}

static bool same_stats(struct kx_store_stats a, struct kx_store_stats b)
{
	return a.runs == b.runs && a.documents == b.documents && a.groups == b.groups && a.generation == b.generation &&
	       a.changed_ns == b.changed_ns;
}

static void verify_clean(struct kx_store *s, const char *what)
{
	struct kx_problems p;
	kx_problems_init(&p);
	int r = kx_store_verify(s, &p, NULL);
	if (!ok(r == 0 && p.len == 0, "%s: the store verifies clean", what))
		dump_problems(&p);
	kx_problems_release(&p);
}

static int ingest(struct kx_store *s, const char *text, struct kx_ingest_result *res, struct kx_problems *p)
{
	return kx_ingest_bytes(s, text, strlen(text), NULL, res, p);
}

static char *join(const char *a, const char *b)
{
	char *out;
	if (asprintf(&out, "%s\n%s\n", a, b) < 0)
		exit(2);
	return out;
}

static void idempotent(void)
{
	char *dir;
	struct kx_store *s = open_new(&dir, "ingest-idem");
	struct kx_buf fx = { 0 };
	if (!ok(read_data("fixtures/flce-forward-a100.manifest.json", &fx), "read the published fixture")) {
		kx_store_close(s);
		scratch_remove(dir);
		return;
	}
	const char *bytes = fx.ptr;
	struct kx_ingest_result res = { 0 };
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_ingest_opts opts = { .now_ns = 1700000000000000000LL };
	int r = kx_ingest_bytes(s, bytes, strlen(bytes), &opts, &res, &p);
	ok(r == 0 && res.len == 1 && res.added == 1 && res.present == 0 && res.items[0].outcome == KX_INGEST_ADDED,
	   "the first ingest adds the run");
	ok(res.generation == 1, "... as generation 1");
	char d[KX_DIGEST_STR_MAX];
	kx_digest_format(&res.items[0].run, d);
	is_str(d, "sha256:b3b20f4a454b2a9a71a2c91dea53d4cb06282e6d0ef2e64b450eb134df0002fe", "the run id is the published run digest");
	struct kx_run_rec x;
	ok(kx_store_get_run(s, NULL, &res.items[0].run, &x) == 0 && x.ingested_ns == opts.now_ns, "the record keeps the ingest time");
	struct kx_digest run = res.items[0].run;
	kx_ingest_result_release(&res);
	struct kx_store_stats before = stats(s);
	r = kx_ingest_bytes(s, bytes, strlen(bytes), NULL, &res, &p);
	ok(r == 0 && res.len == 1 && res.added == 0 && res.present == 1 && res.items[0].outcome == KX_INGEST_PRESENT &&
		   kx_digest_equal(&res.items[0].run, &run),
	   "the second ingest reports it already present");
	ok(same_stats(before, stats(s)) && res.generation == before.generation, "nothing changed: no commit, same generation");
	ok(p.len == 0, "no problems either time");
	kx_ingest_result_release(&res);
	/* the same run re-serialized (compact, other member order) is the same run */
	struct kx_arena *a = kx_arena_new();
	struct kx_json *v = tm_parse(a, bytes);
	struct kx_buf jcs = { 0 };
	kx_jcs_write(v, &jcs);
	r = kx_ingest_bytes(s, jcs.ptr, jcs.len, NULL, &res, &p);
	ok(r == 0 && res.present == 1 && same_stats(before, stats(s)), "the same manifest in another layout is the same run");
	kx_ingest_result_release(&res);
	kx_buf_release(&jcs);
	kx_arena_free(a);
	kx_problems_release(&p);
	verify_clean(s, "after idempotent ingests");
	kx_ingest_result_release(NULL);
	kx_buf_release(&fx);
	kx_store_close(s);
	scratch_remove(dir);
}

static void conflicts(void)
{
	char *dir;
	struct kx_store *s = open_new(&dir, "ingest-conflict");
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_ingest_result res = { 0 };
	char *first = tm_line(&(struct tm_opts){ .source = "liger-kernel-bench", .external_id = "k/p/i/g/w/t", .median = "100" });
	char *changed = tm_line(&(struct tm_opts){ .source = "liger-kernel-bench", .external_id = "k/p/i/g/w/t", .median = "101" });
	ok(ingest(s, first, &res, &p) == 0 && res.added == 1, "the first copy of an observation is added");
	char stored[KX_DIGEST_STR_MAX], hex[KX_DIGEST_HEX + 1];
	kx_digest_format(&res.items[0].run, stored);
	kx_digest_hex(&res.items[0].run, hex);
	kx_ingest_result_release(&res);
	struct kx_store_stats before = stats(s);
	int r = ingest(s, changed, &res, &p);
	ok(r == -EINVAL, "a changed copy of the same observation is refused");
	const struct kx_problem *q = expect_problem(&p, "/run/spec/sourceNative/externalId", "conflict", "changed copy");
	if (q) {
		char shortpath[32];
		snprintf(shortpath, sizeof(shortpath), "runs/%.12s", hex);
		ok(strstr(q->message, stored) != NULL, "the conflict names the stored run's digest (%s)", q->message);
		ok(strstr(q->message, shortpath) != NULL, "... and where it lives (%s)", shortpath);
		ok(strstr(q->message, "k/p/i/g/w/t") != NULL, "... and the externalId");
		ok(q->line == 1, "... on the manifest's line");
	}
	ok(same_stats(before, stats(s)), "nothing was written");
	kx_problems_release(&p);

	/* another source with the same externalId is another observation */
	char *other = tm_line(&(struct tm_opts){ .source = "other-source", .external_id = "k/p/i/g/w/t", .median = "101" });
	ok(ingest(s, other, &res, &p) == 0 && res.added == 1, "the same externalId from another source is not a conflict");
	kx_ingest_result_release(&res);

	/* two conflicting manifests in one JSON Lines file: the whole file is refused */
	char *x1 = tm_line(&(struct tm_opts){ .source = "s2", .external_id = "same", .median = "1" });
	char *x2 = tm_line(&(struct tm_opts){ .source = "s2", .external_id = "same", .median = "2" });
	char *good = tm_line(&(struct tm_opts){ .impl = "innocent" });
	char *both;
	if (asprintf(&both, "%s\n%s\n%s\n", good, x1, x2) < 0)
		exit(2);
	before = stats(s);
	r = ingest(s, both, &res, &p);
	ok(r == -EINVAL, "a JSON Lines file whose lines 2 and 3 conflict is refused");
	q = expect_problem(&p, "/run/spec/sourceNative/externalId", "conflict", "conflict inside one file");
	if (q)
		ok(q->line == 3, "the conflict is reported on line 3 (got %u)", q->line);
	ok(same_stats(before, stats(s)), "nothing of that file was written, not even its good line 1");
	kx_problems_release(&p);
	/* the good line alone is fine afterwards (the refused file left no trace in the caches) */
	ok(ingest(s, good, &res, &p) == 0 && res.added == 1, "line 1 on its own is then added");
	kx_ingest_result_release(&res);
	ok(ingest(s, x2, &res, &p) == 0 && res.added == 1, "and the second copy on its own too (the first was never stored)");
	kx_ingest_result_release(&res);
	/* the same line twice in one file is the same run twice, not a conflict */
	char *twice = join(x1, x1);
	ok(ingest(s, twice, &res, &p) == -EINVAL, "x1 now conflicts with the stored x2");
	kx_problems_release(&p);
	char *y = tm_line(&(struct tm_opts){ .source = "s3", .external_id = "y" });
	char *ytwice = join(y, y);
	r = ingest(s, ytwice, &res, &p);
	ok(r == 0 && res.added == 1 && res.present == 1, "one run twice in one file: added, then already present");
	kx_ingest_result_release(&res);
	kx_problems_release(&p);
	verify_clean(s, "after conflicts");

	/* SPEC §2: the same observation published again with equal measurements (another title, its
	 * own implementation document) is an alias: stored, not ranked or counted */
	char *pub = tm_line(&(struct tm_opts){ .impl = "liger", .source = "s4", .external_id = "k/p/liger/g/w/t" });
	char *again = tm_line(&(struct tm_opts){ .impl = "Liger (KernelIndex)", .source = "s4",
						 .external_id = "k/p/liger/g/w/t" });
	char *moved = tm_line(&(struct tm_opts){ .impl = "liger", .source = "s4", .external_id = "k/p/liger/g/w/t",
						 .median = "1001" });
	ok(ingest(s, pub, &res, &p) == 0 && res.added == 1, "a published run");
	kx_ingest_result_release(&res);
	before = stats(s);
	r = ingest(s, again, &res, &p);
	ok(r == 0 && res.added == 0 && res.aliases == 1 && res.len == 1 && res.items[0].outcome == KX_INGEST_ALIAS,
	   "the same observation with equal measurements: an alias (%d)", r);
	struct kx_digest of = res.len ? res.items[0].alias_of : (struct kx_digest){ 0 };
	struct kx_digest alias = res.len ? res.items[0].run : (struct kx_digest){ 0 };
	kx_ingest_result_release(&res);
	struct kx_store_stats after = stats(s);
	ok(after.runs == before.runs && after.groups == before.groups && after.documents == before.documents + 2,
	   "... counted as no run and no group; its run and implementation documents stored");
	struct kx_run_rec ax, ox;
	ok(kx_store_get_run(s, NULL, &alias, &ax) == 0 && ax.alias && kx_digest_equal(&ax.alias_of, &of) &&
		   kx_store_get_run(s, NULL, &of, &ox) == 0 && !ox.alias && kx_digest_equal(&ax.group, &ox.group) &&
		   strcmp(ax.impl, ox.impl) == 0,
	   "... its record names the run, in the run's group, under the run's implementation");
	ok(ingest(s, again, &res, &p) == 0 && res.present == 1, "the alias again: already present");
	kx_ingest_result_release(&res);
	ok(ingest(s, moved, &res, &p) == -EINVAL && find_problem(&p, NULL, "conflict"),
	   "the same observation with another median: still a conflict");
	kx_problems_release(&p);
	verify_clean(s, "after an alias");
	free(pub);
	free(again);
	free(moved);
	free(first);
	free(changed);
	free(other);
	free(x1);
	free(x2);
	free(good);
	free(both);
	free(twice);
	free(y);
	free(ytwice);
	kx_store_close(s);
	scratch_remove(dir);
}

static void batches(void)
{
	char *dir;
	struct kx_store *s = open_new(&dir, "ingest-batch");
	struct kx_problems p;
	kx_problems_init(&p);
	char *f1 = tm_line(&(struct tm_opts){ .impl = "one", .source = "s", .external_id = "e1" });
	char *f2good = tm_line(&(struct tm_opts){ .impl = "two", .params = "{\"hidden\":2}" });
	/* the same observation as f1 with another median: a conflict (with f1's median, an alias) */
	char *f2bad = tm_line(&(struct tm_opts){ .impl = "clash", .source = "s", .external_id = "e1", .median = "1001" });
	char *f2 = join(f2good, f2bad);
	char *f3 = tm_line(&(struct tm_opts){ .impl = "three" });
	struct kx_ingest_batch *b;
	ok(kx_ingest_batch_begin(s, NULL, &b) == 0, "begin a batch");
	struct kx_ingest_result r1 = { 0 }, r2 = { 0 }, r3 = { 0 };
	ok(kx_ingest_batch_add(b, f1, strlen(f1), &r1, &p) == 0 && r1.added == 1, "file 1 staged");
	int r = kx_ingest_batch_add(b, f2, strlen(f2), &r2, &p);
	ok(r == -EINVAL && find_problem(&p, NULL, "conflict"), "file 2 refused: its line 2 conflicts with file 1");
	ok(kx_ingest_batch_add(b, f3, strlen(f3), &r3, &p) == 0 && r3.added == 1, "file 3 staged");
	ok(kx_ingest_batch_files(b) == 2, "two files staged");
	struct kx_store_stats mid = stats(s);
	ok(mid.runs == 0, "nothing is visible before the commit");
	uint64_t gen = 0;
	ok(kx_ingest_batch_commit(b, &gen) == 0 && gen == 1, "commit: generation 1");
	struct kx_store_stats st = stats(s);
	ok(st.runs == 2, "files 1 and 3 are stored: 2 runs (got %llu)", (unsigned long long)st.runs);
	struct kx_run_rec x;
	ok(kx_store_get_run(s, NULL, &r1.items[0].run, &x) == 0 && kx_store_get_run(s, NULL, &r3.items[0].run, &x) == 0,
	   "the runs of files 1 and 3");
	/* file 2's good line was staged and rolled back with its file */
	struct kx_manifest_file *mf = NULL;
	struct kx_problems q;
	kx_problems_init(&q);
	kx_manifest_parse(f2good, strlen(f2good), NULL, &mf, &q);
	ok(mf && kx_store_get_run(s, NULL, &mf->v[0].digest[KX_DOC_RUN], &x) == -ENOENT, "file 2's valid line was not kept");
	ok(st.groups == 1, "file 2's new group was not kept either");
	kx_manifest_file_free(mf);
	kx_problems_release(&q);
	verify_clean(s, "after a batch with a refused file");
	kx_ingest_result_release(&r1);
	kx_ingest_result_release(&r2);
	kx_ingest_result_release(&r3);

	/* prepare on one side, stage on the other (kindex ingest's reader thread) */
	struct kx_prepared *pp;
	ok(kx_ingest_prepare(f2good, strlen(f2good), NULL, NULL, &pp, &p) == 0, "kx_ingest_prepare");
	ok(kx_ingest_batch_begin(s, NULL, &b) == 0, "a second batch");
	ok(kx_ingest_batch_add_prepared(b, pp, &r2, &p) == 0 && r2.added == 1, "stage the prepared file");
	ok(kx_ingest_batch_commit(b, &gen) == 0 && gen == 2 && stats(s).runs == 3, "commit: 3 runs, generation 2");
	kx_ingest_result_release(&r2);
	kx_prepared_free(pp);
	kx_prepared_free(NULL);
	/* a batch that adds nothing commits nothing */
	ok(kx_ingest_batch_begin(s, NULL, &b) == 0 && kx_ingest_batch_add(b, f3, strlen(f3), &r3, &p) == 0 && r3.present == 1,
	   "a batch of a run already present");
	ok(kx_ingest_batch_commit(b, &gen) == 0 && gen == 2, "its commit bumps no generation");
	kx_ingest_result_release(&r3);
	/* an aborted batch leaves nothing */
	char *f4 = tm_line(&(struct tm_opts){ .impl = "four" });
	ok(kx_ingest_batch_begin(s, NULL, &b) == 0 && kx_ingest_batch_add(b, f4, strlen(f4), NULL, &p) == 0, "stage file 4");
	kx_ingest_batch_abort(b);
	ok(stats(s).runs == 3, "an aborted batch writes nothing");
	kx_ingest_batch_abort(NULL);
	verify_clean(s, "after the batches");
	kx_problems_release(&p);
	free(f1);
	free(f2good);
	free(f2bad);
	free(f2);
	free(f3);
	free(f4);
	kx_store_close(s);
	scratch_remove(dir);
}

static struct kx_group_rec group_of(struct kx_store *s, const struct kx_digest *run)
{
	struct kx_run_rec x;
	struct kx_group_rec g;
	memset(&g, 0, sizeof(g));
	if (kx_store_get_run(s, NULL, run, &x) == 0)
		kx_store_get_group(s, NULL, &x.group, &g);
	return g;
}

static void references(void)
{
	char *dir;
	struct kx_store *s = open_new(&dir, "ingest-ref");
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_ingest_result ra = { 0 }, rb = { 0 }, rc = { 0 };
	/* A includes its workload; B only references it (and names no externalId) */
	char *a = tm_line(&(struct tm_opts){ .impl = "a" });
	char *b = tm_line(&(struct tm_opts){ .impl = "b", .no_workload = true });
	ok(ingest(s, a, &ra, &p) == 0 && ingest(s, b, &rb, &p) == 0 && rb.added == 1, "A (with workload), then B (reference only)");
	struct kx_group_rec ga = group_of(s, &ra.items[0].run), gb = group_of(s, &rb.items[0].run);
	is_str(gb.workload_slug, "hidden4096-tokens16384-bf16", "B's workload slug comes from the stored document");
	ok(kx_digest_equal(&ga.key, &gb.key), "A and B are in one group");
	/* the same within one file: line 2 references what line 1 includes */
	char *c1 = tm_line(&(struct tm_opts){ .impl = "c1", .params = "{\"seq\":77}" });
	char *c2 = tm_line(&(struct tm_opts){ .impl = "c2", .params = "{\"seq\":77}", .no_workload = true, .no_impl = true });
	char *c = join(c1, c2);
	ok(ingest(s, c, &rc, &p) == 0 && rc.added == 2, "a file whose line 2 references line 1's workload");
	struct kx_group_rec gc = group_of(s, &rc.items[1].run);
	is_str(gc.workload_slug, "seq77-bf16", "line 2 gets the slug of the workload line 1 included");
	struct kx_run_rec x;
	kx_store_get_run(s, NULL, &rc.items[1].run, &x);
	is_str(x.impl, "unknown", "an implementation that is not stored anywhere: 'unknown'");
	/* a reference to nothing known, no externalId */
	struct kx_ingest_result rd = { 0 };
	char *d = tm_line(&(struct tm_opts){ .impl = "d", .params = "{\"never\":1}", .no_workload = true });
	ok(ingest(s, d, &rd, &p) == 0, "a run whose workload is known nowhere");
	struct kx_group_rec gd = group_of(s, &rd.items[0].run);
	ok(strncmp(gd.workload_slug, "workload-", 9) == 0 && strlen(gd.workload_slug) == 21, "named workload-<12 hex> (%s)", gd.workload_slug);
	struct kx_buf bb = { 0 };
	ok(kx_store_get_doc(s, NULL, &gd.workload, &bb) == -ENOENT, "the reference is stored as a reference, no document invented");
	kx_buf_release(&bb);
	verify_clean(s, "after references");
	kx_ingest_result_release(&ra);
	kx_ingest_result_release(&rb);
	kx_ingest_result_release(&rc);
	kx_ingest_result_release(&rd);
	kx_problems_release(&p);
	free(a);
	free(b);
	free(c1);
	free(c2);
	free(c);
	free(d);
	kx_store_close(s);
	scratch_remove(dir);
}

static void refusals(void)
{
	char *dir;
	struct kx_store *s = open_new(&dir, "ingest-refuse");
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_ingest_result res = { 0 };
	/* an invalid file: problems of the validator, nothing written */
	int r = ingest(s, "{\"run\": 1}", &res, &p);
	ok(r == -EINVAL && p.len >= 3 && res.len == 0, "an invalid manifest is refused with its problems");
	ok(stats(s).generation == 0, "and nothing is written");
	kx_problems_release(&p);
	/* limits pass through */
	char *line = tm_line(&(struct tm_opts){ 0 });
	struct kx_ingest_opts opts = { .limits = { .max_bytes = 100 } };
	r = kx_ingest_bytes(s, line, strlen(line), &opts, &res, &p);
	ok(r == -EINVAL && find_problem(&p, "", "size"), "the size limit of the options applies");
	kx_problems_release(&p);
	/* a very long externalId: valid JSON, valid manifest; the store must either take it or the
	 * refusal must say why, never fail with a bare errno */
	char longid[1400];
	memset(longid, 'x', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	char *big = tm_line(&(struct tm_opts){ .source = "s", .external_id = longid });
	r = ingest(s, big, &res, &p);
	if (!ok(r == 0 || (r == -EINVAL && p.len > 0), "a 1399-byte externalId is added or refused with a reason (got %d, %zu problems)",
		r, p.len))
		dump_problems(&p);
	kx_ingest_result_release(&res);
	kx_problems_release(&p);
	verify_clean(s, "after refusals");
	free(line);
	free(big);
	kx_store_close(s);
	scratch_remove(dir);
}

/* kx_ingest_trees: the importers' entrance */
static void trees(void)
{
	char *dir;
	struct kx_store *s = open_new(&dir, "ingest-trees");
	struct kx_arena *a = kx_arena_new();
	struct kx_json *roots[3] = {
		tm_build(a, &(struct tm_opts){ .impl = "t1" }),
		tm_build(a, &(struct tm_opts){ .impl = "t2" }),
		tm_build(a, &(struct tm_opts){ .impl = "t3" }),
	};
	tm_set_str(a, roots[1], "/run/spec", "observedAt", "yesterday");
	const char *labels[3] = { "data.csv:2: ", "data.csv:3: ", "data.csv:4: " };
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_ingest_result res = { 0 };
	int r = kx_ingest_trees(s, a, roots, 3, labels, NULL, &res, &p);
	ok(r == -EINVAL && stats(s).runs == 0, "one bad tree refuses all three");
	expect_problem(&p, "data.csv:3: /run/spec/observedAt", "timestamp", "the problem carries its label");
	kx_problems_release(&p);
	r = kx_ingest_trees(s, a, roots, 3, NULL, NULL, &res, &p);
	expect_problem(&p, "/1/run/spec/observedAt", "timestamp", "without labels, the index prefixes the pointer");
	kx_problems_release(&p);
	tm_set_str(a, roots[1], "/run/spec", "observedAt", TM_OBSERVED);
	r = kx_ingest_trees(s, a, roots, 3, labels, NULL, &res, &p);
	ok(r == 0 && res.added == 3 && stats(s).runs == 3 && res.generation == 1, "three good trees: one commit, three runs");
	kx_ingest_result_release(&res);
	r = kx_ingest_trees(s, a, roots, 3, labels, NULL, &res, &p);
	ok(r == 0 && res.added == 0 && res.present == 3 && stats(s).generation == 1, "again: all present, no commit");
	kx_ingest_result_release(&res);
	kx_problems_release(&p);
	verify_clean(s, "after trees");
	kx_arena_free(a);
	kx_store_close(s);
	scratch_remove(dir);
}

struct sig_list {
	struct kx_digest id[4];
	size_t n;
	bool verified;
};

static int sig_add(void *ctx, const struct kx_digest *key, const uint8_t *pub, const uint8_t *sig)
{
	struct sig_list *l = ctx;
	const char *msg = "sha256:b3b20f4a454b2a9a71a2c91dea53d4cb06282e6d0ef2e64b450eb134df0002fe";
	struct kx_digest id;
	kx_key_id(pub, &id);
	l->verified = (l->n == 0 || l->verified) && kx_digest_equal(&id, key) && kx_verify(pub, msg, strlen(msg), sig);
	if (l->n < 4)
		l->id[l->n++] = *key;
	return 0;
}

/* SPEC §10: a manifest's verified signatures are stored with its run, each once; a run stored
 * before gains the signatures of a later copy, in a commit of their own. */
static void signed_runs(void)
{
	char *dir, *kdir = scratch_dir("ingest-keys"), k1[512], p1[512], k2[512], p2[512], err[512];
	struct kx_store *s = open_new(&dir, "ingest-signed");
	struct kx_buf fx = { 0 };
	struct kx_signer *a = NULL, *b = NULL;
	struct kx_digest ida, idb;
	snprintf(k1, sizeof(k1), "%s/a.key", kdir);
	snprintf(p1, sizeof(p1), "%s/a.pub", kdir);
	snprintf(k2, sizeof(k2), "%s/b.key", kdir);
	snprintf(p2, sizeof(p2), "%s/b.pub", kdir);
	if (!ok(read_data("fixtures/flce-forward-a100.manifest.json", &fx) &&
			kx_key_generate(k1, p1, &ida, err, sizeof(err)) == 0 &&
			kx_key_generate(k2, p2, &idb, err, sizeof(err)) == 0 && kx_signer_open(k1, &a, err, sizeof(err)) == 0 &&
			kx_signer_open(k2, &b, err, sizeof(err)) == 0,
		"the fixture and two keys"))
		goto out;
	const char *run = "sha256:b3b20f4a454b2a9a71a2c91dea53d4cb06282e6d0ef2e64b450eb134df0002fe";
	char sa[512], sb[512], arr[1100];
	tm_signature_json(a, run, "ed25519", false, sa, sizeof(sa));
	tm_signature_json(b, run, "ed25519", false, sb, sizeof(sb));
	snprintf(arr, sizeof(arr), "[%s]", sa);
	char *one = tm_with_signatures(&fx, arr);
	snprintf(arr, sizeof(arr), "[%s, %s]", sb, sa);
	char *two = tm_with_signatures(&fx, arr);
	struct kx_ingest_result res = { 0 };
	struct kx_problems p;
	kx_problems_init(&p);
	int r = ingest(s, one, &res, &p);
	ok(r == 0 && res.added == 1 && res.signatures == 1 && res.items[0].signatures == 1,
	   "a signed run: added, with its signature stored");
	struct kx_digest id = res.items[0].run;
	kx_ingest_result_release(&res);
	struct sig_list l = { 0 };
	ok(kx_store_each_signature(s, NULL, &id, sig_add, &l) == 0 && l.n == 1 && kx_digest_equal(&l.id[0], &ida) &&
		   l.verified,
	   "the store lists it: key a's, which verifies over the run digest");
	struct kx_store_stats before = stats(s);
	r = ingest(s, one, &res, &p);
	ok(r == 0 && res.present == 1 && res.signatures == 0 && same_stats(before, stats(s)),
	   "the same signed manifest again: present, no signature new, no commit");
	kx_ingest_result_release(&res);
	r = ingest(s, two, &res, &p);
	struct kx_store_stats after = stats(s);
	ok(r == 0 && res.present == 1 && res.signatures == 1 && after.generation == before.generation + 1 &&
		   after.runs == before.runs,
	   "a copy signed by a and b: present, b's signature stored in a commit of its own, no run added");
	kx_ingest_result_release(&res);
	l = (struct sig_list){ 0 };
	struct kx_digest lo = memcmp(ida.b, idb.b, 32) < 0 ? ida : idb, hi = memcmp(ida.b, idb.b, 32) < 0 ? idb : ida;
	ok(kx_store_each_signature(s, NULL, &id, sig_add, &l) == 0 && l.n == 2 && kx_digest_equal(&l.id[0], &lo) &&
		   kx_digest_equal(&l.id[1], &hi) && l.verified,
	   "both keys' signatures listed, in key id order");
	ok(p.len == 0, "no problems");
	if (p.len)
		dump_problems(&p);
	kx_problems_release(&p);
	verify_clean(s, "with signed runs");
	free(one);
	free(two);
out:
	kx_signer_free(a);
	kx_signer_free(b);
	kx_buf_release(&fx);
	kx_store_close(s);
	scratch_remove(dir);
	scratch_remove(kdir);
}

/* JSON Lines of n runs (implementations p0…), each signed by key k; line `bad` (1-based; 0: none)
 * with its signature's first character changed, line `broken` cut short. */
static char *signed_lines(const struct kx_signer *k, int n, int bad, int broken)
{
	struct kx_buf out = { 0 };
	for (int i = 1; i <= n; i++) {
		struct kx_arena *a = kx_arena_new();
		char impl[16];
		snprintf(impl, sizeof(impl), "p%d", i - 1);
		struct kx_json *m = tm_build(a, &(struct tm_opts){ .impl = impl });
		if (kx_manifest_sign(a, m, k) < 0) {
			printf("Bail out! cannot sign test line %d\n", i);
			exit(2);
		}
		char *t = tm_text(m, false), *v = strstr(t, "\"value\":\"");
		if (i == bad && v)
			v[9] = v[9] == 'A' ? 'B' : 'A';
		kx_buf_append(&out, t, i == broken ? strlen(t) / 2 : strlen(t));
		kx_buf_append(&out, "\n", 1);
		free(t);
		kx_arena_free(a);
	}
	return kx_buf_detach(&out, NULL);
}

/* Prepare text with the pool's threads checking signatures, and stage it in a batch of its own. */
static int pooled(struct kx_store *s, struct kx_verify_pool *pool, const char *text, struct kx_ingest_result *res,
		  struct kx_problems *p)
{
	struct kx_prepared *pp;
	struct kx_ingest_batch *b;
	int r = kx_ingest_prepare(text, strlen(text), NULL, pool, &pp, p);
	if (r < 0)
		return r;
	if ((r = kx_ingest_batch_begin(s, NULL, &b)) == 0) {
		r = kx_ingest_batch_add_prepared(b, pp, res, p);
		r = r < 0 ? (kx_ingest_batch_abort(b), r) : kx_ingest_batch_commit(b, NULL);
	}
	kx_prepared_free(pp);
	return r;
}

/* kindex ingest's way: signatures checked on a pool's threads while the file is staged. */
static void pooled_signatures(void)
{
	char *dir, *kdir = scratch_dir("ingest-pool-keys"), kp[512], pp[512], err[512];
	struct kx_store *s = open_new(&dir, "ingest-pool");
	struct kx_signer *k = NULL;
	struct kx_digest id;
	snprintf(kp, sizeof(kp), "%s/k.key", kdir);
	snprintf(pp, sizeof(pp), "%s/k.pub", kdir);
	if (!ok(kx_key_generate(kp, pp, &id, err, sizeof(err)) == 0 && kx_signer_open(kp, &k, err, sizeof(err)) == 0,
		"a key"))
		return;
	struct kx_verify_pool *pool, *none;
	ok(kx_verify_pool_new(3, &pool) == 0 && kx_verify_pool_new(0, &none) == 0, "pools of 3 threads and of none");
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_ingest_result res = { 0 };

	char *bad = signed_lines(k, 300, 201, 0);
	int r = pooled(s, pool, bad, &res, &p);
	const struct kx_problem *q = find_problem(&p, "/signatures/0/value", "signature");
	ok(r == -EINVAL && p.len == 1 && q && q->line == 201 && strstr(q->message, "does not verify"),
	   "300 signed lines, line 201's signature damaged: refused for that line alone (got %d, %zu problems)", r, p.len);
	ok(stats(s).runs == 0, "nothing stored: the 200 lines before it were staged and rolled back");
	kx_problems_release(&p);

	char *both = signed_lines(k, 300, 201, 7);
	r = pooled(s, pool, both, &res, &p);
	ok(r == -EINVAL && p.len >= 2 && p.v[0].line == 7 && strcmp(p.v[p.len - 1].rule, "signature") == 0 &&
		   p.v[p.len - 1].line == 201,
	   "line 7 broken as well: refused at once with both problems, in line order");
	if (p.len < 2)
		dump_problems(&p);
	kx_problems_release(&p);

	char *good = signed_lines(k, 300, 0, 0);
	r = pooled(s, pool, good, &res, &p);
	ok(r == 0 && res.added == 300 && res.signatures == 300 && p.len == 0, "300 good lines: added, each signature stored");
	kx_ingest_result_release(&res);
	r = pooled(s, none, bad, &res, &p);
	ok(r == -EINVAL && find_problem(&p, "/signatures/0/value", "signature"),
	   "a pool with no threads: the stager checks, and refuses the damaged line too");
	kx_problems_release(&p);

	/* one file carrying the same signed run twice stores its signature once */
	char *once = signed_lines(k, 1, 0, 0), *twice = join(once, once), *dir2;
	struct kx_store *s2 = open_new(&dir2, "ingest-twice");
	r = ingest(s2, twice, &res, &p);
	ok(r == 0 && res.added == 1 && res.present == 1 && res.signatures == 1,
	   "the same signed line twice: 1 added, 1 present, 1 signature stored (got %zu)", res.signatures);
	kx_ingest_result_release(&res);
	verify_clean(s2, "after the same signed run twice");
	kx_store_close(s2);
	scratch_remove(dir2);
	free(once);
	free(twice);

	/* a prepared file freed unstaged takes its checks off the queue */
	struct kx_prepared *left;
	ok(kx_ingest_prepare(good, strlen(good), NULL, pool, &left, &p) == 0, "prepared, never staged");
	kx_prepared_free(left);
	verify_clean(s, "after pooled signature checks");
	kx_verify_pool_free(pool);
	kx_verify_pool_free(none);
	kx_verify_pool_free(NULL);
	kx_signer_free(k);
	free(bad);
	free(both);
	free(good);
	kx_store_close(s);
	scratch_remove(dir);
	scratch_remove(kdir);
}

int main(void)
{
	idempotent();
	conflicts();
	batches();
	references();
	refusals();
	trees();
	signed_runs();
	pooled_signatures();
	return tap_done();
}
