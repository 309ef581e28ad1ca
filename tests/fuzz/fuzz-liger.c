// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the Liger-Kernel CSV importer (kx_liger_build, `kindex import liger`) on arbitrary
 * bytes. Properties:
 *   - it returns 0 or -EINVAL; -EINVAL always comes with at least one problem, 0 with none; every
 *     problem has a rule and a message;
 *   - it builds at most one manifest per line, each labelled "<file>:<line>: ";
 *   - when it accepts the file, every manifest it built goes through what `kindex import` does
 *     next: the linter finds nothing (the importer writes no duplicate keys and no non-finite
 *     numbers); kx_manifest_check accepts it, or refuses it (-EINVAL) with problems that
 *     kx_ingest_trees reports under the row's "<file>:<line>: " label — a kernel name with a
 *     space in it is the validator's to refuse, not the importer's; and an accepted one can be
 *     placed (kx_rank_place) under names that are path components.
 */
#include "fuzz.h"
#include "kx/liger.h"
#include "kx/manifest.h"
#include "kx/rank.h"

#include <errno.h>
#include <string.h>

static void dump(const struct kx_problems *p)
{
	for (size_t i = 0; i < p->len && i < 8; i++)
		fprintf(stderr, "  %u: %s: %s: %s\n", p->v[i].line, p->v[i].pointer, p->v[i].rule, p->v[i].message);
}

static bool component(const char *s)
{
	return s[0] && strcmp(s, ".") && strcmp(s, "..") && !strchr(s, '/');
}

static void manifest_ok(struct kx_arena *a, struct kx_json *root, const char *label)
{
	struct kx_problems p;
	kx_problems_init(&p);
	int r = kx_json_lint(root, "", &p);
	if (r == 0 && p.len)
		dump(&p);
	fuzz_assert(r == 0 && p.len == 0, "%s: the importer built a manifest the linter refuses", label);
	struct kx_manifest m;
	r = kx_manifest_check(a, root, &m, &p);
	fuzz_assert(r == 0 || r == -EINVAL, "%s: kx_manifest_check returned %d", label, r);
	fuzz_assert(r == 0 ? p.len == 0 : p.len > 0, "%s: kx_manifest_check returned %d with %zu problems", label, r, p.len);
	for (size_t i = 0; i < p.len; i++)
		fuzz_assert(p.v[i].rule && p.v[i].rule[0] && p.v[i].message && p.v[i].message[0], "%s: a problem without a rule or message", label);
	kx_problems_release(&p);
	if (r)
		return;
	struct kx_group_rec grp;
	struct kx_run_rec run;
	r = kx_rank_place(&m, m.doc[KX_DOC_WORKLOAD], m.doc[KX_DOC_IMPLEMENTATION], &grp, &run);
	fuzz_assert(r == 0, "%s: an imported manifest cannot be placed: %d", label, r);
	fuzz_assert(component(grp.gpu) && component(grp.workload_slug) && component(grp.kernel) && component(grp.pass) &&
			    component(run.impl),
		    "%s: a name that is not a path component: %s/%s/%s/%s/%s", label, grp.kernel, grp.pass, grp.gpu,
		    grp.workload_slug, run.impl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 16)
		return 0;
	struct kx_arena *a = kx_arena_new();
	struct kx_problems p;
	kx_problems_init(&p);
	struct kx_json **roots = NULL;
	const char **labels = NULL;
	size_t n = 0;
	int r = kx_liger_build(a, "f.csv", (const char *)data, size, &roots, &labels, &n, &p);
	fuzz_assert(r == 0 || r == -EINVAL, "kx_liger_build returned %d", r);
	fuzz_assert(r == 0 ? p.len == 0 : p.len > 0, "returned %d with %zu problems", r, p.len);
	for (size_t i = 0; i < p.len; i++) {
		fuzz_assert(p.v[i].rule && p.v[i].rule[0], "a problem without a rule");
		fuzz_assert(p.v[i].message && p.v[i].message[0], "a problem without a message");
	}
	size_t lines = 1;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	fuzz_assert(n < lines, "%zu manifests from %zu lines", n, lines);
	for (size_t i = 0; i < n; i++) {
		fuzz_assert(roots[i] && labels[i] && strncmp(labels[i], "f.csv:", 6) == 0, "manifest %zu unlabelled", i);
		if (r == 0)
			manifest_ok(a, roots[i], labels[i]);
	}
	free(roots);
	free(labels);
	kx_problems_release(&p);
	kx_arena_free(a);
	return 0;
}
