// SPDX-License-Identifier: MIT
/*
 * Fuzz target: kx_manifest_parse on arbitrary bytes, the validator behind every entrance (ingest,
 * inbox, spool). Properties:
 *   - it returns 0 or -EINVAL; -EINVAL always comes with at least one problem, 0 with none;
 *   - every problem has a rule, a message, and a pointer that is "" or starts with "/";
 *     kx_problems_format writes one line per problem;
 *   - a valid file's manifests: each included document hashes (recomputed here) to the digest the
 *     file reports, and parsing the same bytes again gives the same digests and facts; a passed
 *     run has its primary value; each one can be placed (kx_rank_place), and its comparison key
 *     recomputes from its inputs.
 * Small limits are used too, so the size and depth checks meet the same inputs.
 */
#include "fuzz.h"
#include "kx/rank.h"

#include <errno.h>
#include <string.h>

static void problems_ok(const struct kx_problems *p)
{
	for (size_t i = 0; i < p->len; i++) {
		fuzz_assert(p->v[i].rule && p->v[i].rule[0], "a problem without a rule");
		fuzz_assert(p->v[i].message && p->v[i].message[0], "a problem without a message");
		fuzz_assert(p->v[i].pointer[0] == '\0' || p->v[i].pointer[0] == '/', "pointer '%s'", p->v[i].pointer);
	}
	struct kx_buf out = { 0 };
	fuzz_assert(kx_problems_format(p, "f", &out) >= 0, "kx_problems_format failed");
	size_t lines = 0;
	for (size_t i = 0; i < out.len; i++)
		lines += out.ptr[i] == '\n';
	fuzz_assert(lines >= p->len, "%zu problems formatted as %zu lines", p->len, lines);
	kx_buf_release(&out);
}

static void manifest_ok(const struct kx_manifest *m, const struct kx_manifest *again)
{
	for (int d = 0; d < KX_DOC__COUNT; d++) {
		fuzz_assert(kx_digest_equal(&m->digest[d], &again->digest[d]), "digest of %s differs between two parses",
			    kx_doc_member((enum kx_doc)d));
		if (!m->doc[d])
			continue;
		struct kx_digest x;
		fuzz_assert(kx_digest_document(m->doc[d], &x) == 0 && kx_digest_equal(&x, &m->digest[d]),
			    "the %s document does not hash to its reported digest", kx_doc_member((enum kx_doc)d));
	}
	fuzz_assert(m->doc[KX_DOC_RUN] && m->doc[KX_DOC_PROTOCOL] && m->doc[KX_DOC_ENVIRONMENT], "a required document is missing");
	const struct kx_run_facts *f = &m->facts, *g = &again->facts;
	fuzz_assert(f->benchmark && strchr(f->benchmark, '/'), "benchmark '%s'", f->benchmark ? f->benchmark : "(null)");
	fuzz_assert(!f->passed || f->has_value, "a passed run without its primary value");
	fuzz_assert(f->observed_ns == g->observed_ns && f->value == g->value && f->passed == g->passed &&
			    strcmp(f->benchmark, g->benchmark) == 0,
		    "facts differ between two parses");
	struct kx_group_rec grp;
	struct kx_run_rec run;
	int r = kx_rank_place(m, m->doc[KX_DOC_WORKLOAD], m->doc[KX_DOC_IMPLEMENTATION], &grp, &run);
	fuzz_assert(r == 0, "a valid manifest cannot be placed: %d", r);
	struct kx_digest key;
	fuzz_assert(kx_rank_comparison_key(&grp, &key) == 0 && kx_digest_equal(&key, &grp.key), "comparison key");
	fuzz_assert(kx_digest_equal(&run.run, &m->digest[KX_DOC_RUN]) && kx_digest_equal(&run.group, &grp.key), "run record");
	fuzz_assert(strlen(grp.gpu) > 0 && strlen(grp.workload_slug) > 0 && strlen(run.impl) > 0, "empty names");
	fuzz_assert(strcmp(grp.gpu, ".") && strcmp(grp.gpu, "..") && strcmp(grp.workload_slug, ".") &&
			    strcmp(grp.workload_slug, "..") && strcmp(run.impl, ".") && strcmp(run.impl, ".."),
		    "a name that is not a path component");
	fuzz_assert(!strchr(grp.gpu, '/') && !strchr(grp.workload_slug, '/') && !strchr(run.impl, '/'), "a '/' in a name");
}

static void one(const uint8_t *data, size_t size, const struct kx_manifest_limits *lim)
{
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_manifest_file *f = NULL;
	int r = kx_manifest_parse((const char *)data, size, lim, &f, &p);
	fuzz_assert(r == 0 || r == -EINVAL, "kx_manifest_parse returned %d", r);
	if (r == -EINVAL) {
		fuzz_assert(p.len > 0 && f == NULL, "refused without a reason");
	} else {
		fuzz_assert(p.len == 0 && f != NULL, "accepted with %zu problems", p.len);
		struct kx_problems p2;
		kx_problems_init(&p2);
		struct kx_manifest_file *g = NULL;
		fuzz_assert(kx_manifest_parse((const char *)data, size, lim, &g, &p2) == 0 && g->len == f->len,
			    "a second parse of the same bytes differs");
		for (size_t i = 0; i < f->len; i++)
			manifest_ok(&f->v[i], &g->v[i]);
		kx_manifest_file_free(g);
		kx_problems_release(&p2);
	}
	problems_ok(&p);
	kx_manifest_file_free(f);
	kx_problems_release(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 20)
		return 0;
	one(data, size, NULL);
	struct kx_manifest_limits small = { .max_bytes = 4096, .max_depth = 6 };
	one(data, size, &small);
	return 0;
}
