// SPDX-License-Identifier: MIT
/*
 * The workloads kindex-bench knows, with the benchmark names and parameter names of the Liger
 * import (SPEC §5), so a run lands in the same comparison group as Liger's published rows for the
 * same GPU and shape: the group key holds the workload digest, and the Workload spec written here
 * is byte for byte what the importer writes ({parameters, dtype}, numbers as JSON numbers, no
 * dtype for cross_entropy whose Liger config has none). Default shapes are rows that exist in the
 * Liger data.
 *
 * Adding a workload: a row in `workloads`, its shape mapping in bench_case_shape, and its
 * kernels on the CUDA side (docs/harness.md walks through it).
 */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N(a) a, KX_ARRAY_SIZE(a)

static const struct kx_bench_param flce_params[] = {
	{ "hidden", KX_PARAM_INT, 4096, NULL },
	{ "tokens", KX_PARAM_INT, 16384, NULL },
	{ "vocab", KX_PARAM_INT, 128256, NULL },
};
static const struct kx_bench_impl flce_impls[] = {
	{ "kindex-materialized",
	  "cuBLAS bf16 GEMM into the full [tokens, vocab] bf16 logits, then one cross-entropy "
	  "block per row (fp32 online log-sum-exp)" },
	{ "kindex-chunked",
	  "vocabulary chunks of 1024 or 1536 columns, chosen by measurement: cuBLAS bf16 GEMM into "
	  "one of two [tokens, chunk] buffers while a second stream merges the other into a "
	  "per-token online log-sum-exp; never holds the full logits" },
	{ "kindex-chunked-serial",
	  "the same on one stream, one [tokens, 2048] buffer: each chunk's GEMM, then its merge "
	  "(what the overlap of kindex-chunked is measured against)" },
};

static const struct kx_bench_param ce_params[] = {
	{ "batch", KX_PARAM_INT, 8, NULL },
	{ "seq", KX_PARAM_INT, 2048, NULL },
	{ "vocab", KX_PARAM_INT, 32768, NULL },
};
static const struct kx_bench_impl ce_impls[] = {
	{ "kindex-online", "one block per row, one pass: online max and sum of exponentials" },
	{ "kindex-two-pass", "one block per row, two passes: the row maximum, then the sum" },
};

static const struct kx_bench_param rms_params[] = {
	{ "M", KX_PARAM_INT, 2048, NULL },
	{ "eps", KX_PARAM_NUMBER, 1e-6, NULL },
	{ "hidden", KX_PARAM_INT, 4096, NULL },
};
static const struct kx_bench_impl rms_impls[] = {
	{ "kindex-rowwise",
	  "one block per row, 16-byte loads, sum of squares and scaling in fp32, one rounding" },
};

static const struct kx_bench_param swiglu_params[] = {
	{ "batch", KX_PARAM_INT, 4, NULL },
	{ "hidden_act", KX_PARAM_STRING, 0, "silu" },
	{ "hidden_size", KX_PARAM_INT, 4096, NULL },
	{ "intermediate_size", KX_PARAM_INT, 11008, NULL },
	{ "seq", KX_PARAM_INT, 2048, NULL },
};
static const struct kx_bench_impl swiglu_impls[] = {
	{ "kindex-cublas",
	  "LLaMA MLP: one cuBLAS GEMM for gate and up together, a silu(gate)*up kernel, the down "
	  "GEMM (bf16, fp32 accumulation)" },
};

static const struct kx_bench_param matmul_params[] = {
	{ "K", KX_PARAM_INT, 4096, NULL },
	{ "M", KX_PARAM_INT, 16384, NULL },
	{ "N", KX_PARAM_INT, 128256, NULL },
};
static const struct kx_bench_impl matmul_impls[] = {
	{ "kindex-cublas", "cublasGemmEx bf16 in and out, fp32 compute: C = A * B^T" },
};

const struct kx_bench_workload bench_workloads[] = {
	{ "cross_entropy/forward", "Cross-entropy", KX_KIND_CROSS_ENTROPY, NULL, "fp32",
	  N(ce_params), N(ce_impls),
	  "fp32 logits [batch*seq, vocab], int32 targets; mean loss" },
	{ "fused_linear_cross_entropy/forward", "Fused linear + cross-entropy", KX_KIND_FLCE, "bf16",
	  "bf16", N(flce_params), N(flce_impls),
	  "bf16 X [tokens, hidden] and W [vocab, hidden], int32 targets; mean loss" },
	{ "rms_norm/forward", "RMSNorm", KX_KIND_RMS_NORM, "bf16", "bf16", N(rms_params),
	  N(rms_impls), "bf16 x [M, hidden] and weight [hidden]; bf16 output" },
	{ "swiglu/forward", "SwiGLU MLP", KX_KIND_SWIGLU, "bf16", "bf16", N(swiglu_params),
	  N(swiglu_impls),
	  "bf16 x [batch*seq, hidden_size], gate/up [2*intermediate_size, hidden_size], down "
	  "[hidden_size, intermediate_size]; bf16 output" },
	{ "matmul/forward", "Matrix multiply (the FLCE GEMM)", KX_KIND_MATMUL, "bf16", "bf16",
	  N(matmul_params), N(matmul_impls),
	  "bf16 A [M, K] and B [N, K]; bf16 C = A * B^T (torch.matmul(a, b.t()))" },
};
const size_t bench_nworkloads = KX_ARRAY_SIZE(bench_workloads);

static const struct kx_bench_param selftest_params[] = {
	{ "batch", KX_PARAM_INT, 1, NULL },
	{ "seq", KX_PARAM_INT, 256, NULL },
	{ "vocab", KX_PARAM_INT, 4096, NULL },
};
static const struct kx_bench_impl selftest_impls[] = {
	{ "kindex-cpu-online", "single thread, one pass per row: online max and sum (fp32)" },
	{ "kindex-cpu-two-pass", "single thread, two passes per row: maximum, then sum (fp32)" },
};
const struct kx_bench_workload bench_selftest_workload = {
	"cross_entropy/forward", "Cross-entropy (CPU selftest)", KX_KIND_CROSS_ENTROPY, NULL, "fp32",
	N(selftest_params), N(selftest_impls),
	"fp32 logits [batch*seq, vocab], int32 targets; mean loss; reference in fp64"
};

const struct kx_bench_workload *bench_workload_find(const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < bench_nworkloads; i++) {
		const char *b = bench_workloads[i].benchmark;
		if (strcmp(b, name) == 0 || (strncmp(b, name, n) == 0 && b[n] == '/'))
			return &bench_workloads[i];
	}
	return NULL;
}

const struct kx_bench_impl *bench_impl_find(const struct kx_bench_workload *w, const char *name)
{
	for (size_t i = 0; i < w->nimpls; i++)
		if (strcmp(w->impls[i].name, name) == 0)
			return &w->impls[i];
	return NULL;
}

void bench_case_init(struct kx_bench_case *c, const struct kx_bench_workload *w,
		     const struct kx_bench_impl *impl)
{
	memset(c, 0, sizeof(*c));
	c->w = w;
	c->impl = impl;
	c->seed = 0x6b696e646578ull; /* "kindex" */
	for (size_t i = 0; i < w->nparams && i < KX_BENCH_MAX_PARAMS; i++) {
		c->num[i] = w->params[i].def;
		c->str[i] = w->params[i].def_str;
	}
}

static int param_index(const struct kx_bench_workload *w, const char *name)
{
	for (size_t i = 0; i < w->nparams; i++)
		if (strcmp(w->params[i].name, name) == 0)
			return (int)i;
	return -1;
}

int bench_case_set(struct kx_bench_case *c, const char *key, const char *value, char *err,
		   size_t errlen)
{
	int i = param_index(c->w, key);
	if (i < 0)
		return -ENOENT;
	const struct kx_bench_param *p = &c->w->params[i];
	if (p->type == KX_PARAM_STRING) {
		if (strcmp(value, p->def_str) != 0) {
			snprintf(err, errlen, "unsupported %s '%s' for %s: only '%s' is implemented",
				 key, value, c->w->benchmark, p->def_str);
			return -EINVAL;
		}
		c->str[i] = value;
		return 0;
	}
	char *end;
	errno = 0;
	double v = strtod(value, &end);
	if (end == value || *end || errno || !isfinite(v) || v <= 0) {
		snprintf(err, errlen, "invalid %s '%s': expected a positive number", key, value);
		return -EINVAL;
	}
	if (p->type == KX_PARAM_INT && (v != floor(v) || v > 2147483647.0)) {
		snprintf(err, errlen, "invalid %s '%s': expected a positive integer below 2^31",
			 key, value);
		return -EINVAL;
	}
	c->num[i] = v;
	return 0;
}

double bench_case_num(const struct kx_bench_case *c, const char *name)
{
	int i = param_index(c->w, name);
	return i < 0 || c->w->params[i].type == KX_PARAM_STRING ? NAN : c->num[i];
}

#define P(name) ((int64_t)bench_case_num(c, name))

void bench_case_shape(const struct kx_bench_case *c, struct kx_bench_shape *ret)
{
	struct kx_bench_shape s = { .kind = c->w->kind, .impl = c->impl->name, .seed = c->seed };
	switch (c->w->kind) {
	case KX_KIND_CROSS_ENTROPY:
		s.m = P("batch") * P("seq");
		s.n = P("vocab");
		s.check_rows = (size_t)s.m;
		break;
	case KX_KIND_FLCE:
		s.m = P("tokens");
		s.n = P("vocab");
		s.k = P("hidden");
		s.check_rows = 256;
		break;
	case KX_KIND_RMS_NORM:
		s.m = P("M");
		s.n = P("hidden");
		s.eps = bench_case_num(c, "eps");
		s.check_rows = (size_t)s.m;
		break;
	case KX_KIND_SWIGLU:
		s.m = P("batch") * P("seq");
		s.n = P("hidden_size");
		s.k = P("intermediate_size");
		s.check_rows = 128;
		break;
	case KX_KIND_MATMUL:
		s.m = P("M");
		s.n = P("N");
		s.k = P("K");
		s.check_rows = 64;
		break;
	}
	if (s.check_rows > (size_t)s.m)
		s.check_rows = (size_t)s.m;
	*ret = s;
}

double bench_case_flops(const struct kx_bench_case *c)
{
	struct kx_bench_shape s;
	bench_case_shape(c, &s);
	switch (s.kind) {
	case KX_KIND_FLCE:
	case KX_KIND_MATMUL:
		return 2.0 * (double)s.m * (double)s.n * (double)s.k;
	case KX_KIND_SWIGLU: /* gate and up: 2*(2mnk); down: 2mnk */
		return 6.0 * (double)s.m * (double)s.n * (double)s.k;
	default:
		return 0;
	}
}

double bench_case_bytes(const struct kx_bench_case *c)
{
	struct kx_bench_shape s;
	bench_case_shape(c, &s);
	switch (s.kind) {
	case KX_KIND_CROSS_ENTROPY: /* logits read once, targets read, per-row loss written */
		return 4.0 * (double)s.m * (double)s.n + 8.0 * (double)s.m;
	case KX_KIND_RMS_NORM: /* x read, y written, weight read */
		return 4.0 * (double)s.m * (double)s.n + 2.0 * (double)s.n;
	case KX_KIND_FLCE: /* X and W read, targets read, per-token loss written */
		return 2.0 * (double)s.m * (double)s.k + 2.0 * (double)s.n * (double)s.k +
		       8.0 * (double)s.m;
	case KX_KIND_SWIGLU: /* x read, gate+up and down weights read, y written */
		return 4.0 * (double)s.m * (double)s.n + 6.0 * (double)s.n * (double)s.k;
	case KX_KIND_MATMUL: /* A and B read, C written */
		return 2.0 * (double)s.m * (double)s.k + 2.0 * (double)s.n * (double)s.k +
		       2.0 * (double)s.m * (double)s.n;
	}
	return 0;
}

struct kx_json *bench_workload_document(struct kx_arena *a, const struct kx_bench_case *c)
{
	const struct kx_bench_workload *w = c->w;
	struct kx_json *doc = kx_json_new(a, KX_JSON_OBJECT), *meta = kx_json_new(a, KX_JSON_OBJECT),
		       *spec = kx_json_new(a, KX_JSON_OBJECT),
		       *params = kx_json_new(a, KX_JSON_OBJECT);
	if (!doc || !meta || !spec || !params)
		return NULL;
	int r = 0;
	for (size_t i = 0; i < w->nparams; i++)
		r |= w->params[i].type == KX_PARAM_STRING
			     ? kx_bench_set_str(a, params, w->params[i].name, c->str[i])
			     : kx_json_set_number(a, params, w->params[i].name, c->num[i]);
	r |= kx_json_set(a, spec, "parameters", params);
	if (w->dtype)
		r |= kx_bench_set_str(a, spec, "dtype", w->dtype);

	/* "hidden4096-tokens16384-vocab128256-bf16": the index's own slug of this spec */
	char slug[KX_NAME_MAX], kernel[64];
	bool cut;
	if (r < 0 || kx_rank_workload_slug(spec, slug, &cut) < 0)
		return NULL;
	snprintf(kernel, sizeof(kernel), "%.*s", (int)strcspn(w->benchmark, "/"), w->benchmark);
	char *name = kx_arena_printf(a, "%s-%s", kernel, slug);
	char *title = kx_arena_printf(a, "%s · %s", w->title, slug);
	if (!name || !title)
		return NULL;
	for (char *p = name; *p; p++)
		if (*p == '_')
			*p = '-';
	r |= kx_bench_set_str(a, meta, "name", name);
	r |= kx_bench_set_str(a, meta, "title", title);
	r |= kx_bench_set_str(a, doc, "apiVersion", KX_BENCH_API_VERSION);
	r |= kx_bench_set_str(a, doc, "kind", "Workload");
	r |= kx_json_set(a, doc, "metadata", meta);
	r |= kx_json_set(a, doc, "spec", spec);
	return r < 0 ? NULL : doc;
}

struct kx_json *bench_implementation_document(struct kx_arena *a, const char *name,
					      const char *project, const char *version)
{
	struct kx_json *doc = kx_json_new(a, KX_JSON_OBJECT), *meta = kx_json_new(a, KX_JSON_OBJECT),
		       *spec = kx_json_new(a, KX_JSON_OBJECT);
	if (!doc || !meta || !spec)
		return NULL;
	int r = 0;
	r |= kx_bench_set_str(a, spec, "name", name);
	r |= kx_bench_set_str(a, spec, "provider", KX_BENCH_HARNESS);
	r |= kx_bench_set_str(a, spec, "project", project ? project : KX_BENCH_PROJECT);
	r |= kx_bench_set_str(a, spec, "version", version ? version : KX_VERSION);
	r |= kx_bench_set_str(a, meta, "name", name);
	char *title = kx_arena_printf(a, "%s (%s %s)", name, project ? project : KX_BENCH_PROJECT,
				      version ? version : KX_VERSION);
	r |= title ? kx_bench_set_str(a, meta, "title", title) : -ENOMEM;
	r |= kx_bench_set_str(a, doc, "apiVersion", KX_BENCH_API_VERSION);
	r |= kx_bench_set_str(a, doc, "kind", "Implementation");
	r |= kx_json_set(a, doc, "metadata", meta);
	r |= kx_json_set(a, doc, "spec", spec);
	return r < 0 ? NULL : doc;
}
