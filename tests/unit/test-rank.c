// SPDX-License-Identifier: MIT
/*
 * The rank module: slugs (the path components a user types), GPU and workload slugs, directory
 * names of ranks and workloads, the comparison key (recomputed here from GROUP.json's inputs
 * written out by hand), and where a run goes when its workload or implementation document is
 * not published (the six-segment externalId, or workload-<12 hex>/unknown).
 */
#include "kx/rank.h"
#include "test-helpers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void slugs(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "NVIDIA A100-SXM4-80GB", "nvidia-a100-sxm4-80gb" },
		{ "NVIDIA H100 80GB HBM3", "nvidia-h100-80gb-hbm3" },
		{ "  Hello,  World!! ", "hello-world" },
		{ "a///b", "a-b" },
		{ "a -- b", "a----b" }, /* dashes are kept; each run of other bytes is one more */
		{ "--x--", "x" },
		{ "a.b_c-d", "a.b_c-d" },
		{ "UPPER_case", "upper_case" },
		{ "torch.compile (max-autotune)", "torch.compile-max-autotune" },
		{ "caf\xc3\xa9 cr\xc3\xa8me", "caf-cr-me" },
		{ "", "unnamed" },
		{ "!!!", "unnamed" },
		{ "\xe4\xb8\xad\xe6\x96\x87", "unnamed" },
		{ ".", "unnamed" },
		{ "..", "unnamed" },
		{ "...", "unnamed" },
		{ "/../", "unnamed" },
		{ "a/../b", "a-..-b" },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
		char out[KX_NAME_MAX];
		memset(out, 'Z', sizeof(out));
		size_t n = kx_slug(cases[i].in, strlen(cases[i].in), out, sizeof(out));
		char what[128];
		snprintf(what, sizeof(what), "slug of '%s'", cases[i].in);
		is_str(out, cases[i].want, what);
		ok(n == strlen(out), "%s: returned length is the string length", what);
	}
	/* every output byte is in [a-z0-9._-], for every single byte value */
	bool clean = true;
	for (int c = 1; c < 256 && clean; c++) {
		char in[4] = { 'a', (char)c, 'b', 0 }, out[16];
		kx_slug(in, 3, out, sizeof(out));
		for (char *p = out; *p; p++)
			clean = clean && ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-');
		if (!clean)
			diag("  byte 0x%02x gives '%s'", c, out);
	}
	ok(clean, "slugs hold only [a-z0-9._-] whatever the input byte");
	/* embedded NUL: the length counts, not the C string */
	char out[32];
	kx_slug("ab\0cd", 5, out, sizeof(out));
	is_str(out, "ab-cd", "a NUL byte in the input is a bad character like any other");
	/* cut at the buffer, without a dangling dash */
	size_t n = kx_slug("abcdef", 6, out, 4);
	ok(n == 3 && strcmp(out, "abc") == 0, "cut to cap-1 bytes (got '%s')", out);
	n = kx_slug("ab cd", 5, out, 4);
	ok(strcmp(out, "ab") == 0 && n == 2, "a cut right after a dash drops the dash (got '%s')", out);
}

static struct kx_json *j(struct kx_arena *a, const char *text)
{
	return tm_parse(a, text);
}

static void gpu_slugs(void)
{
	struct kx_arena *a = kx_arena_new();
	static const struct {
		const char *spec, *want;
	} cases[] = {
		{ "{\"hardware\":{\"vendor\":\"nvidia\",\"product\":\"NVIDIA A100\",\"formFactor\":\"SXM4-80GB\"}}", "nvidia-a100-sxm4-80gb" },
		{ "{\"hardware\":{\"vendor\":\"nvidia\",\"product\":\"NVIDIA H100\",\"formFactor\":\"80GB HBM3\"}}", "nvidia-h100-80gb-hbm3" },
		{ "{\"hardware\":{\"vendor\":\"nvidia\",\"product\":\"NVIDIA GeForce RTX 4090\"}}", "nvidia-geforce-rtx-4090" },
		{ "{\"hardware\":{\"vendor\":\"nvidia\",\"product\":\"NVIDIA GeForce RTX 4090\",\"formFactor\":\"\"}}", "nvidia-geforce-rtx-4090" },
		{ "{\"hardware\":{\"vendor\":\"amd\",\"product\":\"AMD Instinct MI300X\",\"formFactor\":\"OAM\"}}", "amd-instinct-mi300x-oam" },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
		char out[KX_NAME_MAX] = "";
		int r = kx_rank_gpu_slug(j(a, cases[i].spec), out);
		ok(r == 0 && strcmp(out, cases[i].want) == 0, "gpu slug %s (got '%s')", cases[i].want, out);
	}
	char out[KX_NAME_MAX] = "unchanged";
	ok(kx_rank_gpu_slug(j(a, "{\"hardware\":{\"vendor\":\"nvidia\"}}"), out) == -EINVAL, "no product: -EINVAL");
	/* case and punctuation variants of one product are one GPU; a folding that drops letters is not */
	char g1[KX_NAME_MAX], g2[KX_NAME_MAX], g3[KX_NAME_MAX], g4[KX_NAME_MAX];
	kx_rank_gpu_slug(j(a, "{\"hardware\":{\"product\":\"NVIDIA H100\",\"formFactor\":\"SXM5\"}}"), g1);
	kx_rank_gpu_slug(j(a, "{\"hardware\":{\"product\":\"nvidia_h100\",\"formFactor\":\"sxm5\"}}"), g2);
	ok(strcmp(g1, "nvidia-h100-sxm5") == 0 && strcmp(g1, g2) != 0, "'nvidia_h100' keeps its underscore: another GPU (%s, %s)", g1, g2);
	kx_rank_gpu_slug(j(a, "{\"hardware\":{\"product\":\"GPU \xce\xb1\"}}"), g3);
	kx_rank_gpu_slug(j(a, "{\"hardware\":{\"product\":\"GPU \xce\xb2\"}}"), g4);
	ok(strncmp(g3, "gpu~", 4) == 0 && strncmp(g4, "gpu~", 4) == 0 && strcmp(g3, g4) != 0,
	   "'GPU α' and 'GPU β' are two GPUs (%s, %s)", g3, g4);
	kx_rank_gpu_slug(j(a, "{\"hardware\":{\"product\":\"Gpus.TSV\"}}"), g3);
	kx_rank_gpu_slug(j(a, "{\"hardware\":{\"product\":\"gpus.tsv\"}}"), g4);
	ok(strncmp(g3, "gpus.tsv~", 9) == 0 && strcmp(g3, g4) == 0, "a GPU named like a view is suffixed, case folded (%s)", g3);
	kx_arena_free(a);
}

/* SPEC §2: components are injective, stable and never a name the tree uses itself */
static void components(void)
{
	static const struct {
		const char *in, *want; /* the hex digits: python3 -c "hashlib.sha256(b'…').hexdigest()[:8]" */
	} cases[] = {
		{ "liger", "liger" },
		{ "torch_compile", "torch_compile" },
		{ "full.memory", "full.memory" },
		{ "Liger", "liger~7b02f2a0" },
		{ "\xe3\x83\xa9\xe3\x82\xa4\xe3\x82\xac\xe3\x83\xbc", "unnamed~5d5d915a" }, /* ライガー */
		{ "\xe3\x82\xab\xe3\x83\xbc\xe3\x83\x8d\xe3\x83\xab", "unnamed~3a596a69" }, /* カーネル */
		{ "b..c", "b.c~5b1059de" },
		{ "index.html", "index.html~0eb54730" },
		{ "my impl", "my-impl~e712cab2" },
		{ "my/impl", "my-impl~562d7f1f" },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
		char out[KX_PLAIN_MAX + 1];
		kx_rank_component(cases[i].in, strlen(cases[i].in), out, sizeof(out));
		ok(strcmp(out, cases[i].want) == 0, "component of '%s' is '%s' (got '%s')", cases[i].in, cases[i].want, out);
	}
	static const char *const not_plain[] = { "", ".", "..", ".hidden", "a..b", "a.", "-a", "a-", "A", "a b",
						 "gpus.tsv", "sweep.svg", "ranking.json", "compare", "runs", "digests",
						 "CITATION.cff", "summary.txt", "summary", "x~1" };
	for (size_t i = 0; i < KX_ARRAY_SIZE(not_plain); i++)
		ok(!kx_rank_plain(not_plain[i], strlen(not_plain[i])), "'%s' is not its own path component", not_plain[i]);
	/* the longest plain name, and one byte more: cut readable part, still 64 bytes, still unique */
	char n64[80], n65[80], o64[KX_PLAIN_MAX + 1], o65[KX_PLAIN_MAX + 1], o65b[KX_PLAIN_MAX + 1];
	memset(n64, 'a', 64);
	n64[64] = '\0';
	memset(n65, 'a', 65);
	n65[65] = '\0';
	kx_rank_component(n64, 64, o64, sizeof(o64));
	kx_rank_component(n65, 65, o65, sizeof(o65));
	n65[64] = 'b';
	kx_rank_component(n65, 65, o65b, sizeof(o65b));
	ok(strcmp(o64, n64) == 0, "a 64-byte slug is its own component");
	ok(strlen(o65) == 64 && o65[55] == '~' && strcmp(o65, o65b) != 0,
	   "65-byte names sharing 64 bytes: two 64-byte components (%s, %s)", o65, o65b);
	/* names with a 256-byte tail of dots and dashes stay readable and safe */
	char weird[300], ow[KX_PLAIN_MAX + 1];
	memset(weird, '.', 256);
	weird[0] = '-';
	weird[256] = '\0';
	kx_rank_component(weird, 256, ow, sizeof(ow));
	ok(strncmp(ow, "unnamed~", 8) == 0 && !strstr(ow, ".."), "a name of dots and dashes: '%s'", ow);
}

static void gpu_split(void)
{
	static const struct {
		const char *name, *product, *form;
	} cases[] = {
		{ "NVIDIA A100-SXM4-80GB", "NVIDIA A100", "SXM4-80GB" },
		{ "NVIDIA H100 80GB HBM3", "NVIDIA H100", "80GB HBM3" },
		{ "NVIDIA H100 PCIe", "NVIDIA H100", "PCIe" },
		{ "NVIDIA B200", "NVIDIA B200", "" },
		{ "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090", "" },
		{ "NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3090", "" },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
		char product[128] = "?", form[128] = "?";
		kx_rank_gpu_split(cases[i].name, product, sizeof(product), form, sizeof(form));
		ok(strcmp(product, cases[i].product) == 0 && strcmp(form, cases[i].form) == 0, "split '%s' = '%s' + '%s' (got '%s' + '%s')",
		   cases[i].name, cases[i].product, cases[i].form, product, form);
	}
	/* the contract: slug(product "-" formFactor) is the slug of the name, for any name */
	static const char *const names[] = {
		"NVIDIA A100-SXM4-80GB", "  NVIDIA A100-SXM4-80GB  ", "Tesla V100-SXM2-16GB", "NVIDIA A100 80GB PCIe",
		"AMD Instinct MI300X", "Intel(R) Data Center GPU Max 1550", "NVIDIA RTX A6000", "NVIDIA L40S", "GH200 480GB",
		"NVIDIA-H100", "Unknown GPU", "", "A100--SXM4", "NVIDIA H100 NVL (94GB)", "Quadro RTX 8000",
		"NVIDIA TITAN V", "H100-", "-H100", "1 2 3",
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(names); i++) {
		char product[128], form[128], joined[300], a[KX_NAME_MAX], b[KX_NAME_MAX];
		kx_rank_gpu_split(names[i], product, sizeof(product), form, sizeof(form));
		snprintf(joined, sizeof(joined), *form ? "%s-%s" : "%s", product, form);
		kx_slug(joined, strlen(joined), a, sizeof(a));
		kx_slug(names[i], strlen(names[i]), b, sizeof(b));
		ok(strcmp(a, b) == 0, "slug(product-form) = slug('%s') = '%s' (got '%s' from '%s' + '%s')", names[i], b, a, product, form);
	}
	/* small buffers are cut, never overrun */
	char p4[4], f4[4];
	memset(p4, 'Z', sizeof(p4));
	memset(f4, 'Z', sizeof(f4));
	kx_rank_gpu_split("NVIDIA A100-SXM4-80GB", p4, sizeof(p4), f4, sizeof(f4));
	ok(p4[3] == '\0' && f4[3] == '\0' && strcmp(p4, "NVI") == 0 && strcmp(f4, "SXM") == 0, "cut to the buffers (got '%s', '%s')", p4, f4);
}

static void workload_slugs(void)
{
	struct kx_arena *a = kx_arena_new();
	static const struct {
		const char *spec, *want;
	} cases[] = {
		{ "{\"parameters\":{\"vocab\":128256,\"hidden\":4096,\"tokens\":16384},\"dtype\":\"bf16\"}",
		  "hidden4096-tokens16384-vocab128256-bf16" },
		{ "{\"dtype\":\"bf16\",\"parameters\":{\"seq\":1024,\"batch\":4,\"vocab\":128256,\"hidden\":4096}}",
		  "batch4-hidden4096-seq1024-vocab128256-bf16" },
		/* ECMAScript number text: 1e-6 prints as 0.000001, 1e-7 as 1e-7 */
		{ "{\"parameters\":{\"eps\":1e-6,\"hidden\":4096}}", "eps0.000001-hidden4096" },
		{ "{\"parameters\":{\"eps\":1e-7}}", "eps1e-7" },
		{ "{\"parameters\":{\"scale\":0.5,\"n\":100000000000000000000}}", "n100000000000000000000-scale0.5" },
		{ "{\"parameters\":{\"inplace\":true,\"causal\":false}}", "causalfalse-inplacetrue" },
		{ "{\"parameters\":{\"mode\":\"Max Autotune\"}}", "modemax-autotune" },
		{ "{\"parameters\":{\"b\":1,\"B\":2,\"a\":3}}", "b2-a3-b1" },
		{ "{\"parameters\":{},\"dtype\":\"fp16\"}", "fp16" },
		{ "{\"parameters\":{\"hidden\":4096}}", "hidden4096" },
		{ "{\"parameters\":{}}", "unnamed" },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
		char out[KX_NAME_MAX] = "";
		bool cut = true;
		int r = kx_rank_workload_slug(j(a, cases[i].spec), out, &cut);
		ok(r == 0 && !cut && strcmp(out, cases[i].want) == 0, "workload slug %s (got '%s')", cases[i].want, out);
	}
	/* longer than 120: cut, flagged, a prefix of the whole */
	char spec[2048] = "{\"parameters\":{";
	for (int i = 0; i < 20; i++) {
		char p[64];
		snprintf(p, sizeof(p), "%s\"parameter_%02d\":%d", i ? "," : "", i, 1000 + i);
		strcat(spec, p);
	}
	strcat(spec, "},\"dtype\":\"bf16\"}");
	char out[KX_NAME_MAX] = "";
	bool cut = false;
	int r = kx_rank_workload_slug(j(a, spec), out, &cut);
	ok(r == 0 && cut, "a 20-parameter workload is cut");
	ok(strlen(out) <= KX_SLUG_MAX && strlen(out) >= KX_SLUG_MAX - 1, "cut to %d characters (got %zu)", KX_SLUG_MAX, strlen(out));
	ok(strncmp(out, "parameter_001000-parameter_011001-parameter_021002", 50) == 0, "the cut slug is the start of the whole");
	ok(out[strlen(out) - 1] != '-', "a cut slug does not end in '-'");
	/* exactly 120 is not cut */
	char s120[256];
	snprintf(s120, sizeof(s120), "{\"parameters\":{\"%0116d\":1234}}", 0);
	r = kx_rank_workload_slug(j(a, s120), out, &cut);
	ok(r == 0 && !cut && strlen(out) == 120, "a slug of exactly 120 characters is not cut (%zu)", strlen(out));
	snprintf(s120, sizeof(s120), "{\"parameters\":{\"%0117d\":1234}}", 0);
	r = kx_rank_workload_slug(j(a, s120), out, &cut);
	ok(r == 0 && cut && strlen(out) == 120, "121 characters are cut to 120");
	/* the validator lets through a name text of KX_WORKLOAD_TEXT_MAX bytes: it must place */
	size_t n = KX_WORKLOAD_TEXT_MAX - strlen("label");
	char *big = malloc(n + 64);
	int len = snprintf(big, 64, "{\"parameters\":{\"label\":\"");
	memset(big + len, 'x', n);
	strcpy(big + len + n, "\"}}");
	r = kx_rank_workload_slug(j(a, big), out, &cut);
	ok(r == 0 && cut && strlen(out) == KX_SLUG_MAX, "a name text of %u bytes gives a cut slug (r=%d)",
	   KX_WORKLOAD_TEXT_MAX, r);
	free(big);
	kx_arena_free(a);
}

static void dirnames(void)
{
	static const struct {
		uint32_t n;
		int w;
	} widths[] = { { 0, 2 }, { 1, 2 }, { 9, 2 }, { 10, 2 }, { 99, 2 }, { 100, 3 }, { 999, 3 }, { 1000, 4 }, { 123456, 6 } };
	for (size_t i = 0; i < KX_ARRAY_SIZE(widths); i++)
		ok(kx_rank_width(widths[i].n) == widths[i].w, "a group of %u ranked runs numbers with %d digits",
		   widths[i].n, widths[i].w);

	struct kx_run_rec x;
	memset(&x, 0, sizeof(x));
	kx_unhex("e6eff4c05fb7c0ffee000000000000000000000000000000000000000000abcd", 64, x.run.b, 32);
	snprintf(x.impl, sizeof(x.impl), "liger");
	char out[KX_NAME_MAX + 32];
	kx_rank_dirname(2, 2, &x, out, sizeof(out));
	is_str(out, "02-liger-e6eff4c05fb7", "rank 2 of a small group");
	kx_rank_dirname(7, 3, &x, out, sizeof(out));
	is_str(out, "007-liger-e6eff4c05fb7", "rank 7 of a group of 100+");
	kx_rank_dirname(100, 3, &x, out, sizeof(out));
	is_str(out, "100-liger-e6eff4c05fb7", "rank 100");
	kx_rank_dirname(0, 2, &x, out, sizeof(out));
	is_str(out, "failed-liger-e6eff4c05fb7", "an unranked run");
	/* names sort by rank with ls */
	char a[64], b[64];
	kx_rank_dirname(9, kx_rank_width(120), &x, a, sizeof(a));
	kx_rank_dirname(10, kx_rank_width(120), &x, b, sizeof(b));
	ok(strcmp(a, b) < 0, "rank 9 sorts before rank 10 (%s, %s)", a, b);

	struct kx_digest w;
	kx_unhex("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", 64, w.b, 32);
	kx_rank_workload_dirname("hidden4096-bf16", &w, false, false, out, sizeof(out));
	is_str(out, "hidden4096-bf16", "a workload directory is its slug");
	kx_rank_workload_dirname("hidden4096-bf16", &w, true, false, out, sizeof(out));
	is_str(out, "hidden4096-bf16~01234567", "a cut slug gets ~8 hex of the workload digest");
	kx_rank_workload_dirname("hidden4096-bf16", &w, false, true, out, sizeof(out));
	is_str(out, "hidden4096-bf16~01234567", "a shared slug gets ~8 hex of the workload digest");
	kx_rank_workload_dirname("sweep.tsv", &w, false, false, out, sizeof(out));
	is_str(out, "sweep.tsv~01234567", "a workload named like a view gets ~8 hex");
	kx_rank_workload_dirname(".a..b.", &w, false, false, out, sizeof(out));
	is_str(out, "a.b~01234567", "a workload slug with dots at its ends or doubled: never hidden, never '..'");
}

/* Parse a manifest tree through the validator. */
static bool check(struct kx_arena *a, struct kx_json *root, struct kx_manifest *m)
{
	struct kx_problems p;
	kx_problems_init(&p);
	int r = kx_manifest_check(a, root, m, &p);
	if (r < 0)
		dump_problems(&p);
	kx_problems_release(&p);
	return r == 0;
}

static void comparison_key(void)
{
	struct kx_arena *a = kx_arena_new();
	struct kx_json *root = tm_build(a, &(struct tm_opts){ .params = "{\"vocab\":128256,\"hidden\":4096}" });
	struct kx_manifest m;
	if (!ok(check(a, root, &m), "the test manifest is valid"))
		goto out;
	struct kx_group_rec g;
	struct kx_run_rec x;
	int r = kx_rank_place(&m, m.doc[KX_DOC_WORKLOAD], m.doc[KX_DOC_IMPLEMENTATION], &g, &x);
	ok(r == 0, "kx_rank_place");
	is_str(g.benchmark, "rms_norm/forward", "group benchmark");
	is_str(g.kernel, "rms_norm", "group kernel");
	is_str(g.pass, "forward", "group pass");
	is_str(g.metric, "latency", "group metric");
	is_str(g.gpu, "nvidia-a100-sxm4-80gb", "group gpu");
	is_str(g.workload_slug, "hidden4096-vocab128256-bf16", "group workload slug");
	ok(kx_digest_equal(&g.workload, &m.digest[KX_DOC_WORKLOAD]), "the group's workload is the workload digest");

	/* the key, recomputed from GROUP.json's inputs written out by hand */
	char wd[KX_DIGEST_STR_MAX], text[512];
	kx_digest_format(&m.digest[KX_DOC_WORKLOAD], wd);
	snprintf(text, sizeof(text), "{\"benchmark\":\"rms_norm/forward\",\"gpu\":\"nvidia-a100-sxm4-80gb\",\"metric\":\"latency\",\"workload\":\"%s\"}", wd);
	struct kx_digest want, got;
	kx_sha256(text, strlen(text), want.b);
	ok(kx_digest_equal(&g.key, &want), "comparison key = sha256 of the JCS of {benchmark, gpu, metric, workload}");
	ok(kx_rank_comparison_key(&g, &got) == 0 && kx_digest_equal(&got, &want), "kx_rank_comparison_key agrees");
	struct kx_buf b = { 0 };
	struct kx_json *in = kx_rank_group_inputs(a, &g);
	ok(in && kx_jcs_write(in, &b) == 0 && b.len == strlen(text) && memcmp(b.ptr, text, b.len) == 0,
	   "kx_rank_group_inputs are exactly those four members");
	kx_buf_release(&b);

	/* inputs JCS must escape (non-ASCII, quotes): the key is still sha256 of the JCS */
	struct kx_group_rec h = g;
	snprintf(h.gpu, sizeof(h.gpu), "gpu \"\xc3\xa9\"\\");
	in = kx_rank_group_inputs(a, &h);
	kx_jcs_write(in, &b);
	kx_sha256(b.ptr, b.len, want.b);
	ok(kx_rank_comparison_key(&h, &got) == 0 && kx_digest_equal(&got, &want), "a key over inputs that need escapes");
	ok(strstr(b.ptr, "\"gpu\":\"gpu \\\"\xc3\xa9\\\"\\\\\"") != NULL, "the escaped input appears in JCS form");
	kx_buf_release(&b);

	/* every input changes the key */
	struct kx_group_rec v[4];
	for (int i = 0; i < 4; i++)
		v[i] = g;
	snprintf(v[0].benchmark, sizeof(v[0].benchmark), "rms_norm/backward");
	snprintf(v[1].metric, sizeof(v[1].metric), "memory");
	snprintf(v[2].gpu, sizeof(v[2].gpu), "nvidia-h100-80gb-hbm3");
	v[3].workload.b[31] ^= 1;
	for (int i = 0; i < 4; i++) {
		kx_rank_comparison_key(&v[i], &got);
		ok(!kx_digest_equal(&got, &g.key), "changing input %d changes the key", i);
	}
	/* the slug is not an input: two workloads that fold to one slug stay two groups */
	struct kx_group_rec s = g;
	snprintf(s.workload_slug, sizeof(s.workload_slug), "other");
	kx_rank_comparison_key(&s, &got);
	ok(kx_digest_equal(&got, &g.key), "the workload slug is a name, not an input of the key");

	/* the run record */
	ok(kx_digest_equal(&x.run, &m.digest[KX_DOC_RUN]) && kx_digest_equal(&x.group, &g.key), "run record: digest and group");
	ok(kx_digest_equal(&x.protocol, &m.digest[KX_DOC_PROTOCOL]) && kx_digest_equal(&x.environment, &m.digest[KX_DOC_ENVIRONMENT]) &&
		   kx_digest_equal(&x.implementation, &m.digest[KX_DOC_IMPLEMENTATION]),
	   "run record: document digests");
	is_str(x.impl, "liger", "run record: implementation slug from the document");
	is_str(x.family, "test_family", "run record: protocol family");
	ok(x.passed && x.has_value && x.value == 1000 && x.base_value == 1000 && strcmp(x.unit, "ns") == 0 &&
		   x.observed_ns == TM_OBSERVED_NS && x.order == KX_ORDER_ASCENDING,
	   "run record: value, unit, observedAt, order");
	ok(x.evidence == KX_EVIDENCE_SUBMITTED, "a plain manifest is submitted evidence");
out:
	kx_arena_free(a);
}

static void place_variants(void)
{
	struct kx_arena *a = kx_arena_new();
	struct kx_manifest m;
	struct kx_group_rec g;
	struct kx_run_rec x;

	/* a memory protocol: the pass carries the metric */
	struct kx_json *root = tm_base(a);
	tm_set_str(a, root, "/protocol/spec/measurement", "metric", "memory");
	tm_set(a, root, "/run/spec", "measurements", "[{\"metric\":\"memory\",\"statistic\":\"median\",\"unit\":\"MB\",\"value\":12.5}]");
	tm_set_str(a, root, "/implementation/spec", "name", "Torch Compile");
	tm_fix(a, root);
	if (ok(check(a, root, &m) && kx_rank_place(&m, m.doc[KX_DOC_WORKLOAD], m.doc[KX_DOC_IMPLEMENTATION], &g, &x) == 0,
	       "a memory run is placed")) {
		is_str(g.pass, "forward.memory", "a non-latency metric is appended to the pass");
		is_str(g.metric, "memory", "metric memory");
		ok(x.value == 12.5 && x.base_value == 12.5e6 && strcmp(x.unit, "MB") == 0, "value in MB, ranked in bytes");
		is_str(x.impl, "torch-compile~56ffc009", "an implementation name that is no slug: its slug, '~' and 8 hex of its SHA-256");
	}

	/* evidence */
	root = tm_build(a, &(struct tm_opts){ .source = "liger-kernel-bench", .external_id = "a/b/c/d/e/f" });
	if (check(a, root, &m) && kx_rank_place(&m, m.doc[KX_DOC_WORKLOAD], m.doc[KX_DOC_IMPLEMENTATION], &g, &x) == 0)
		ok(x.evidence == KX_EVIDENCE_SOURCE_NATIVE, "sourceNative makes source-native evidence");
	root = tm_base(a);
	tm_set_str(a, root, "/protocol/spec/harness", "name", "kindex-bench");
	tm_set(a, root, "/run/spec", "correctness", "{\"status\":\"passed\"}");
	tm_fix(a, root);
	if (check(a, root, &m) && kx_rank_place(&m, m.doc[KX_DOC_WORKLOAD], m.doc[KX_DOC_IMPLEMENTATION], &g, &x) == 0)
		ok(x.evidence == KX_EVIDENCE_MEASURED, "kindex-bench with a correctness check is measured evidence");
	tm_del(root, "/run/spec", "correctness");
	if (check(a, root, &m) && kx_rank_place(&m, m.doc[KX_DOC_WORKLOAD], m.doc[KX_DOC_IMPLEMENTATION], &g, &x) == 0)
		ok(x.evidence == KX_EVIDENCE_SUBMITTED, "kindex-bench without a correctness check is only submitted");
	is_str(kx_evidence_name(KX_EVIDENCE_SOURCE_NATIVE), "source-native", "evidence name source-native");
	is_str(kx_evidence_name(KX_EVIDENCE_MEASURED), "measured", "evidence name measured");
	is_str(kx_evidence_name(KX_EVIDENCE_SUBMITTED), "submitted", "evidence name submitted");
	kx_arena_free(a);
}

/* Names from the externalId when the documents are not published. */
static void external_id_fallback(void)
{
	static const struct {
		const char *ext;
		const char *workload, *impl; /* NULL workload: workload-<12 hex> */
	} cases[] = {
		{ "fused_linear_cross_entropy/forward/liger/nvidia-a100-sxm4-80gb/hidden4096-tokens16384-vocab128256-bf16/2024-11-22-17-44-03",
		  "hidden4096-tokens16384-vocab128256-bf16", "liger" },
		{ "k/p/Torch Compile/gpu/Batch 4/ts", "batch-4", "torch-compile~56ffc009" },
		{ "k/p/impl/gpu/w", NULL, "unknown" },                /* five segments */
		{ "k/p/impl/gpu/w/ts/extra", NULL, "unknown" },       /* seven */
		{ "k/p//gpu//ts", NULL, "unknown" },                  /* empty segments */
		{ "opaque-id-42", NULL, "unknown" },
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
		struct kx_arena *a = kx_arena_new();
		struct kx_json *root = tm_build(a, &(struct tm_opts){ .source = "src", .external_id = cases[i].ext,
								     .no_workload = true, .no_impl = true });
		struct kx_manifest m;
		struct kx_group_rec g;
		struct kx_run_rec x;
		if (!ok(check(a, root, &m) && kx_rank_place(&m, NULL, NULL, &g, &x) == 0, "placed without documents: %s", cases[i].ext)) {
			kx_arena_free(a);
			continue;
		}
		char want[64];
		if (cases[i].workload) {
			snprintf(want, sizeof(want), "%s", cases[i].workload);
		} else {
			char hex[KX_DIGEST_HEX + 1];
			kx_digest_hex(&m.digest[KX_DOC_WORKLOAD], hex);
			snprintf(want, sizeof(want), "workload-%.12s", hex);
		}
		is_str(g.workload_slug, want, "workload slug");
		is_str(x.impl, cases[i].impl, "implementation name");
		ok(kx_digest_equal(&g.workload, &m.digest[KX_DOC_WORKLOAD]), "the group still keys on the referenced workload digest");
		kx_arena_free(a);
	}
	/* no sourceNative at all */
	struct kx_arena *a = kx_arena_new();
	struct kx_json *root = tm_build(a, &(struct tm_opts){ .no_workload = true, .no_impl = true });
	struct kx_manifest m;
	struct kx_group_rec g;
	struct kx_run_rec x;
	if (check(a, root, &m) && kx_rank_place(&m, NULL, NULL, &g, &x) == 0) {
		ok(strncmp(g.workload_slug, "workload-", 9) == 0 && strlen(g.workload_slug) == 21, "no externalId: workload-<12 hex> (%s)",
		   g.workload_slug);
		is_str(x.impl, "unknown", "no externalId: implementation unknown");
	}
	/* a document wins over the externalId, each on its own */
	root = tm_build(a, &(struct tm_opts){ .source = "src", .external_id = "k/p/from-ext/gpu/w-from-ext/ts", .no_workload = true });
	if (check(a, root, &m) && kx_rank_place(&m, NULL, m.doc[KX_DOC_IMPLEMENTATION], &g, &x) == 0) {
		is_str(g.workload_slug, "w-from-ext", "workload from the externalId when only that document is missing");
		is_str(x.impl, "liger", "implementation from its document");
	}
	/* a liger-style externalId of a cut slug keeps its ~suffix: the same directory name as when
	 * the workload document is known (SPEC §2 + §5: paths never depend on what was published) */
	char longslug[200], ext[400];
	memset(longslug, 'x', 120);
	snprintf(longslug + 120, sizeof(longslug) - 120, "~1a2b3c4d");
	snprintf(ext, sizeof(ext), "k/p/impl/gpu/%s/ts", longslug);
	root = tm_build(a, &(struct tm_opts){ .source = "src", .external_id = ext, .no_workload = true, .no_impl = true });
	if (check(a, root, &m) && kx_rank_place(&m, NULL, NULL, &g, &x) == 0) {
		char dir[KX_NAME_MAX + 16];
		kx_rank_workload_dirname(g.workload_slug, &g.workload, g.workload_cut, false, dir, sizeof(dir));
		char hex[KX_DIGEST_HEX + 1];
		kx_digest_hex(&g.workload, hex);
		ok(strlen(dir) == 129 && dir[120] == '~' && strncmp(dir, longslug, 120) == 0 && strncmp(dir + 121, hex, 8) == 0,
		   "a cut workload slug from the externalId keeps its cut base and gets '~<8 hex of the workload digest>' (got '%s')", dir);
	}
	kx_arena_free(a);
}

int main(void)
{
	slugs();
	gpu_slugs();
	components();
	gpu_split();
	workload_slugs();
	dirnames();
	comparison_key();
	place_variants();
	external_id_fallback();
	return tap_done();
}
