// SPDX-License-Identifier: MIT
/*
 * The Liger-Kernel CSV importer (SPEC §5) on the bundled all_benchmark_data.csv: 2,448 valid
 * manifests with distinct observations; the published FLCE forward A100 record reproduced (its
 * protocol and environment documents byte for byte, its digests, its median); every GPU of the
 * CSV named and given its architecture; hand-written CSVs with bad rows refused line by line, and
 * a CSV with kernels, GPUs and parameters the importer has never seen imported.
 */
#include "kx/liger.h"
#include "kx/rank.h"
#include "test-helpers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FLCE_EXT "fused_linear_cross_entropy/forward/liger/nvidia-a100-sxm4-80gb/hidden4096-tokens16384-vocab128256-bf16/2024-11-22-17-44-03"

struct built {
	struct kx_arena *a;
	struct kx_json **roots;
	const char **labels;
	size_t n;
	struct kx_problems p;
	int r;
};

static void build(struct built *b, const char *file, const char *text, size_t len)
{
	memset(b, 0, sizeof(*b));
	b->a = kx_arena_new();
	kx_problems_init(&b->p);
	b->r = kx_liger_build(b->a, file, text, len, &b->roots, &b->labels, &b->n, &b->p);
}

static void built_release(struct built *b)
{
	free(b->roots);
	free(b->labels);
	kx_problems_release(&b->p);
	kx_arena_free(b->a);
}

static const char *str(struct kx_json *root, const char *ptr)
{
	struct kx_json *v = kx_json_pointer(root, ptr);
	return v && v->type == KX_JSON_STRING ? v->str.ptr : NULL;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* JCS bytes of two documents are equal */
static bool same_doc(const struct kx_json *x, const struct kx_json *y)
{
	struct kx_buf a = { 0 }, b = { 0 };
	bool same = x && y && kx_jcs_write(x, &a) == 0 && kx_jcs_write(y, &b) == 0 && a.len == b.len &&
		    memcmp(a.ptr, b.ptr, a.len) == 0;
	kx_buf_release(&a);
	kx_buf_release(&b);
	return same;
}

static void bundled_csv(void)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/examples/liger/all_benchmark_data.csv", source_root());
	struct kx_buf csv = { 0 };
	if (!ok(kx_read_file(path, 0, &csv) == 0, "read the bundled CSV (%s)", path))
		return;
	struct built b;
	build(&b, "all_benchmark_data.csv", csv.ptr, csv.len);
	if (!ok(b.r == 0 && b.p.len == 0, "every row maps to a manifest"))
		dump_problems(&b.p);
	ok(b.n == 2448, "2,448 manifests (got %zu)", b.n);

	/* each is a valid manifest; every observation has its own externalId */
	size_t valid = 0, latency = 0, memory = 0;
	const char **ext = calloc(b.n ? b.n : 1, sizeof(*ext));
	struct kx_json *flce = NULL;
	size_t flce_count = 0;
	for (size_t i = 0; i < b.n; i++) {
		struct kx_problems p;
		kx_problems_init(&p);
		struct kx_manifest m;
		if (kx_json_lint(b.roots[i], "", &p) == 0 && kx_manifest_check(b.a, b.roots[i], &m, &p) == 0) {
			valid++;
			latency += strcmp(m.facts.metric, "latency") == 0;
			memory += strcmp(m.facts.metric, "memory") == 0;
		} else if (valid + 3 > i) {
			diag("  %s", b.labels[i]);
			dump_problems(&p);
		}
		kx_problems_release(&p);
		ext[i] = str(b.roots[i], "/run/spec/sourceNative/externalId");
		if (ext[i] && strcmp(ext[i], FLCE_EXT) == 0) {
			flce = b.roots[i];
			flce_count++;
		}
	}
	ok(valid == b.n, "all %zu pass the validator (%zu)", b.n, valid);
	ok(latency == 1649 && memory == 799, "1,649 latency runs (speed rows) and 799 memory runs (got %zu, %zu)", latency, memory);
	qsort(ext, b.n, sizeof(*ext), cmp_str);
	size_t dups = 0;
	for (size_t i = 1; i < b.n; i++)
		if (ext[i] && ext[i - 1] && strcmp(ext[i], ext[i - 1]) == 0) {
			if (dups++ < 3)
				diag("  duplicate externalId %s", ext[i]);
		}
	ok(dups == 0 && ext[0] != NULL, "every row has its own externalId (%zu duplicates)", dups);
	free(ext);
	ok(b.labels && b.n && strncmp(b.labels[0], "all_benchmark_data.csv:2", 24) == 0, "labels name the file and line (%s)",
	   b.n ? b.labels[0] : "");

	/* the published record */
	if (ok(flce && flce_count == 1, "exactly one row is the FLCE forward A100 BT=16384 liger record")) {
		is_str(str(flce, "/run/spec/protocolDigest"), "sha256:a79eaf4df66c97c6adc1fb2d09df78682155d1ea86652ae0b70199875bde7747",
		       "its protocolDigest");
		is_str(str(flce, "/run/spec/environmentDigest"), "sha256:90c9e2764222f592477cfccf3373519add5a1b881563956ad058c4f99e41b6b9",
		       "its environmentDigest");
		struct kx_json *med = kx_json_pointer(flce, "/run/spec/timing/latencyNs/median");
		ok(med && med->type == KX_JSON_NUMBER && med->number == 274073425, "timing.latencyNs.median 274073425");
		is_str(str(flce, "/run/spec/observedAt"), "2024-11-22T17:44:03.000Z", "observedAt as UTC with milliseconds");
		is_str(str(flce, "/run/spec/sourceNative/benchmark"), "fused_linear_cross_entropy/forward", "sourceNative.benchmark");
		is_str(str(flce, "/run/spec/sourceNative/source"), "liger-kernel-bench", "sourceNative.source");
		struct kx_json *ms50 = kx_json_pointer(flce, "/run/spec/sourceNative/metrics/ms_50");
		ok(ms50 && ms50->number == 274.07342529296875, "sourceNative.metrics.ms_50 as in the CSV");
		is_str(str(flce, "/run/metadata/labels/liger_version"), "0.4.2", "labels.liger_version");
		const char *name = str(flce, "/run/metadata/name");
		ok(name && strlen(name) <= 100 && strncmp(name, "liger-fused-linear-cross-entropy-forward-liger-nvidia-a100", 58) == 0,
		   "metadata.name, '_' folded, at most 100 characters (%s)", name ? name : "");
		struct kx_json *w = kx_json_get(flce, "workload");
		char slug[KX_NAME_MAX];
		bool cut;
		ok(w && kx_rank_workload_slug(kx_json_get(w, "spec"), slug, &cut) == 0 &&
			   strcmp(slug, "hidden4096-tokens16384-vocab128256-bf16") == 0,
		   "its workload slugs to hidden4096-tokens16384-vocab128256-bf16");
		struct kx_buf fx = { 0 };
		if (ok(read_data("fixtures/flce-forward-a100.manifest.json", &fx), "read the published fixture")) {
			struct kx_json *f = tm_parse(b.a, fx.ptr);
			ok(same_doc(kx_json_get(flce, "protocol"), kx_json_get(f, "protocol")),
			   "the forward protocol document is the fixture's, byte for byte (metadata included)");
			ok(same_doc(kx_json_get(flce, "environment"), kx_json_get(f, "environment")),
			   "the A100 environment document is the fixture's, byte for byte");
			/* the run itself differs only in the workload and implementation documents it
			 * references (the published record does not include those, so the importer
			 * writes its own) */
			struct kx_json *mine = kx_json_clone(b.a, kx_json_pointer(flce, "/run/spec"));
			struct kx_json *theirs = kx_json_clone(b.a, kx_json_pointer(f, "/run/spec"));
			const char *refs[] = { "workloadDigest", "implementationDigest" };
			for (int k = 0; k < 2; k++) {
				tm_remove(mine, refs[k]);
				tm_remove(theirs, refs[k]);
			}
			ok(same_doc(mine, theirs), "the run's spec is the published one, but for the workload and implementation references");
			ok(same_doc(kx_json_pointer(flce, "/run/metadata"), kx_json_pointer(f, "/run/metadata")) ||
				   strcmp(str(flce, "/run/metadata/name"), str(f, "/run/metadata/name")) == 0,
			   "the run's metadata.name is the published one");
			kx_buf_release(&fx);
		}
	}

	/* memory rows: metric memory, MB, mb_* metrics, .memory in the externalId's pass */
	struct kx_json *mem = NULL;
	for (size_t i = 0; i < b.n && !mem; i++) {
		const char *p = str(b.roots[i], "/protocol/spec/measurement/metric");
		if (p && strcmp(p, "memory") == 0)
			mem = b.roots[i];
	}
	if (ok(mem != NULL, "a memory row")) {
		ok(kx_json_pointer(mem, "/run/spec/sourceNative/metrics/mb_50") && !kx_json_pointer(mem, "/run/spec/sourceNative/metrics/ms_50"),
		   "memory rows carry mb_20/mb_50/mb_80");
		struct kx_json *m0 = kx_json_pointer(mem, "/run/spec/measurements/0");
		is_str(kx_json_get_string(m0, "unit"), "MB", "memory measured in MB");
		is_str(kx_json_get_string(m0, "statistic"), "median", "the median first");
	}
	built_release(&b);
	kx_buf_release(&csv);
}

static void gpus(void)
{
	static const struct {
		const char *name, *arch;
	} cases[] = {
		/* every GPU of the bundled CSV */
		{ "NVIDIA A100-SXM4-80GB", "sm_80" },
		{ "NVIDIA H100 80GB HBM3", "sm_90" },
		{ "NVIDIA H100 PCIe", "sm_90" },
		{ "NVIDIA GeForce RTX 3090", "sm_86" },
		{ "NVIDIA GeForce RTX 4090", "sm_89" },
		{ "NVIDIA B200", "sm_100" },
		/* and a few it may meet next */
		{ "NVIDIA H200", "sm_90" },
		{ "NVIDIA A10", "sm_86" },
		{ "NVIDIA A100 80GB PCIe", "sm_80" },
		{ "NVIDIA L40S", "sm_89" },
		{ "NVIDIA L4", "sm_89" },
		{ "AMD Instinct MI300X", NULL },
		{ "Some Accelerator 9000", NULL },
	};
	struct kx_arena *a = kx_arena_new();
	for (size_t i = 0; i < KX_ARRAY_SIZE(cases); i++) {
		struct kx_json *env = kx_liger_environment(a, cases[i].name);
		char want[KX_NAME_MAX], got[KX_NAME_MAX] = "";
		kx_slug(cases[i].name, strlen(cases[i].name), want, sizeof(want));
		struct kx_json *spec = kx_json_get(env, "spec");
		ok(spec && kx_rank_gpu_slug(spec, got) == 0 && strcmp(got, want) == 0, "%s: gpu slug %s (got %s)", cases[i].name, want, got);
		const char *arch = str(env, "/spec/hardware/architecture");
		if (cases[i].arch)
			ok(arch && strcmp(arch, cases[i].arch) == 0, "%s: architecture %s (got %s)", cases[i].name, cases[i].arch,
			   arch ? arch : "none");
		else
			ok(arch == NULL, "%s: no architecture is invented", cases[i].name);
		const char *vendor = str(env, "/spec/hardware/vendor");
		ok(vendor && strcmp(vendor, strncmp(cases[i].name, "NVIDIA", 6) == 0 ? "nvidia"
					    : strncmp(cases[i].name, "AMD", 3) == 0 ? "amd" : "unknown") == 0,
		   "%s: vendor %s", cases[i].name, vendor ? vendor : "none");
		struct kx_problems p;
		kx_problems_init(&p);
		struct kx_json *m = tm_base(a);
		kx_json_set(a, m, "environment", env);
		tm_fix(a, m);
		struct kx_manifest mm;
		ok(kx_manifest_check(a, m, &mm, &p) == 0, "%s: a valid environment document", cases[i].name);
		kx_problems_release(&p);
	}
	is_str(str(kx_liger_environment(a, "NVIDIA H100 80GB HBM3"), "/spec/hardware/product"), "NVIDIA H100", "H100: product");
	is_str(str(kx_liger_environment(a, "NVIDIA H100 80GB HBM3"), "/spec/hardware/formFactor"), "80GB HBM3", "H100: form factor");
	/* protocols */
	char d[KX_DIGEST_STR_MAX];
	struct kx_json *m = kx_json_new(a, KX_JSON_OBJECT);
	kx_json_set(a, m, "protocol", kx_liger_protocol(a, "forward", "latency"));
	is_str(tm_digest(m, "protocol", d), "sha256:a79eaf4df66c97c6adc1fb2d09df78682155d1ea86652ae0b70199875bde7747",
	       "the forward latency protocol is the published one");
	static const char *const modes[][2] = { { "backward", "latency" }, { "full", "latency" }, { "full", "memory" }, { "forward", "memory" } };
	for (size_t i = 0; i < KX_ARRAY_SIZE(modes); i++) {
		kx_json_set(a, m, "other", kx_liger_protocol(a, modes[i][0], modes[i][1]));
		char d2[KX_DIGEST_STR_MAX];
		ok(strcmp(tm_digest(m, "other", d2), d) != 0, "the %s %s protocol is its own", modes[i][0], modes[i][1]);
		const char *metric = str(kx_json_get(m, "other"), "/spec/measurement/metric");
		ok(strcmp(modes[i][1], "memory") == 0 ? metric && strcmp(metric, "memory") == 0 : metric == NULL,
		   "%s %s: measurement.metric %s", modes[i][0], modes[i][1], metric ? metric : "absent (latency)");
		is_str(str(kx_json_get(m, "other"), "/spec/comparability/family"), "liger_kernel_bench", "same family");
	}
	kx_arena_free(a);
}

#define HEADER "kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,x_label,x_value,y_value_50,y_value_20,y_value_80,extra_benchmark_config_str,gpu_name,timestamp,liger_version\n"

static void bad_rows(void)
{
	static const char csv[] = HEADER
		"rms_norm,liger,forward,speed,ms,H,hidden,4096,abc,0.1,0.3,\"{\"\"M\"\": 2048, \"\"dtype\"\": \"\"torch.float32\"\"}\",NVIDIA A100-SXM4-80GB,2024-09-03 15:31:39,0.2.1\n"
		"rms_norm,liger,forward,energy,J,H,hidden,4096,0.2,0.1,0.3,\"{}\",NVIDIA A100-SXM4-80GB,2024-09-03 15:31:39,0.2.1\n"
		"rms_norm,liger,forward,speed,ms,H,hidden,4096,0.2\n"
		"rms_norm,liger,forward,speed,ms,H,hidden,2048,0.2,0.1,0.3,\"{}\",NVIDIA A100-SXM4-80GB,2024-09-03 15:31:39,0.2.1\n"
		"rms_norm,liger,forward,speed,ms,H,hidden,4096,0.2,0.1,0.3,\"{}\",NVIDIA A100-SXM4-80GB,03/09/2024,0.2.1\n"
		"rms_norm,liger,forward,speed,ms,H,hidden,4096,0.2,0.1,0.3,\"{not json}\",NVIDIA A100-SXM4-80GB,2024-09-03 15:31:39,0.2.1\n"
		"rms_norm,liger,forward,speed,s,H,hidden,4096,0.2,0.1,0.3,\"{}\",NVIDIA A100-SXM4-80GB,2024-09-03 15:31:39,0.2.1\n"
		"rms_norm,liger,forward,speed,ms,H,hidden,4096,inf,0.1,0.3,\"{}\",NVIDIA A100-SXM4-80GB,2024-09-03 15:31:39,0.2.1\n"
		"rms_norm,liger,forward,speed,ms,H,hidden,4096,0x1p-2,0.1,0.3,\"{}\",NVIDIA A100-SXM4-80GB,2024-09-03 15:31:39,0.2.1\n"
		"rms_norm,liger,forward,speed,ms,H,hidden,4096,0.2,0.1,0.3,\"{\"\"eps\"\": 1e606}\",NVIDIA A100-SXM4-80GB,2024-09-03 15:31:39,0.2.1\n";
	struct built b;
	build(&b, "bad.csv", csv, strlen(csv));
	ok(b.r == -EINVAL, "a CSV with bad rows is refused");
	static const struct {
		unsigned line;
		const char *pointer, *rule;
	} want[] = {
		{ 2, "column y_value_50", "type" },
		{ 3, "column metric_name", "enum" },
		{ 4, "row", "csv" },
		{ 6, "column timestamp", "timestamp" },
		{ 7, "column extra_benchmark_config_str", "json-syntax" },
		{ 8, "column metric_unit", "unit" },
		{ 9, "column y_value_50", "type" },
		{ 10, "column y_value_50", "type" }, /* a C hex float is not a decimal number */
		{ 11, "column extra_benchmark_config_str", "non-finite" }, /* no workload digest without it */
	};
	for (size_t i = 0; i < KX_ARRAY_SIZE(want); i++) {
		bool found = false;
		for (size_t k = 0; k < b.p.len; k++)
			found |= b.p.v[k].line == want[i].line && strcmp(b.p.v[k].pointer, want[i].pointer) == 0 &&
				 strcmp(b.p.v[k].rule, want[i].rule) == 0;
		if (!ok(found, "line %u: %s, %s", want[i].line, want[i].pointer, want[i].rule))
			dump_problems(&b.p);
	}
	bool line5 = false;
	for (size_t k = 0; k < b.p.len; k++)
		line5 |= b.p.v[k].line == 5;
	ok(!line5, "the good row (line 5) has no problem");
	struct kx_buf out = { 0 };
	kx_problems_format(&b.p, "bad.csv", &out);
	ok(out.ptr && strstr(out.ptr, "bad.csv:2: column y_value_50: type: ") != NULL, "formatted: bad.csv:2: column y_value_50: …");
	kx_buf_release(&out);
	built_release(&b);

	/* a header without a required column */
	static const char nohdr[] = "kernel_name,kernel_provider\nrms_norm,liger\n";
	build(&b, "h.csv", nohdr, strlen(nohdr));
	ok(b.r == -EINVAL && b.n == 0, "a CSV without the required columns is refused");
	bool y50 = false;
	for (size_t k = 0; k < b.p.len; k++)
		y50 |= strcmp(b.p.v[k].pointer, "header") == 0 && strstr(b.p.v[k].message, "y_value_50") != NULL;
	ok(y50, "the problem names the missing column y_value_50");
	built_release(&b);
	build(&b, "e.csv", "", 0);
	ok(b.r == -EINVAL && b.p.len == 1, "an empty CSV is refused");
	built_release(&b);
	static const char unterminated[] = HEADER "rms_norm,liger,forward,speed,ms,H,hidden,4096,0.2,0.1,0.3,\"{\n";
	build(&b, "u.csv", unterminated, strlen(unterminated));
	ok(b.r == -EINVAL && b.p.len >= 1 && b.p.v[0].line == 2, "an unterminated quote is reported on its row's line");
	built_release(&b);
}

static void new_names(void)
{
	/* columns in another order, a quoted field spanning lines, a new kernel, GPU and parameters */
	static const char csv[] =
		"timestamp,gpu_name,liger_version,kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,x_label,x_value,y_value_50,y_value_20,y_value_80,extra_benchmark_config_str\n"
		"2025-03-04 05:06:07,NVIDIA H200,0.6.0,my_new_kernel,liger,forward,speed,ms,bsz,batch,8,1.5,1.25,1.75,\"{\"\"seq_len\"\": 512,\n \"\"dtype\"\": \"\"torch.float16\"\", \"\"mode\"\": \"\"forward\"\", \"\"bsz\"\": null}\"\n"
		"2025-03-04 05:06:07,NVIDIA H200,0.6.0,my_new_kernel,my-provider,full,memory,MB,bsz,batch,8,100,90,110,\"{\"\"seq_len\"\": 512, \"\"dtype\"\": \"\"torch.float16\"\", \"\"causal\"\": true}\"\n"
		"2025-03-04 05:06:07,NVIDIA H200,0.6.0,my_new_kernel,liger,forward,speed,ms,bsz,batch,8,oops,1.25,1.75,\"{}\"\n";
	struct built b;
	build(&b, "new.csv", csv, strlen(csv));
	/* physical lines: 1 header, 2-3 the first record, 4 the second, 5 the third */
	bool line5 = false;
	for (size_t k = 0; k < b.p.len; k++)
		line5 |= b.p.v[k].line == 5 && strcmp(b.p.v[k].pointer, "column y_value_50") == 0;
	ok(b.r == -EINVAL && line5 && b.p.len == 1,
	   "after a quoted field spanning two lines, a bad row is reported on the line an editor shows (5)");
	if (!line5)
		dump_problems(&b.p);
	built_release(&b);

	size_t good_len = strstr(csv, "\n2025-03-04 05:06:07,NVIDIA H200,0.6.0,my_new_kernel,liger,forward,speed,ms,bsz,batch,8,oops") - csv + 1;
	build(&b, "new.csv", csv, good_len);
	if (!ok(b.r == 0 && b.n == 2, "a CSV with a new kernel, GPU and parameter names imports")) {
		dump_problems(&b.p);
		built_release(&b);
		return;
	}
	for (size_t i = 0; i < b.n; i++) {
		struct kx_problems p;
		kx_problems_init(&p);
		struct kx_manifest m;
		if (!ok(kx_manifest_check(b.a, b.roots[i], &m, &p) == 0, "row %zu is a valid manifest", i + 2))
			dump_problems(&p);
		kx_problems_release(&p);
	}
	struct kx_json *r0 = b.roots[0], *r1 = b.roots[1];
	is_str(str(r0, "/run/spec/sourceNative/benchmark"), "my_new_kernel/forward", "benchmark kernel/mode");
	is_str(str(r0, "/run/spec/sourceNative/externalId"), "my_new_kernel/forward/liger/nvidia-h200/bsz8-seq_len512-fp16/2025-03-04-05-06-07",
	       "externalId: kernel/mode/provider/gpu/workload/timestamp; swept bsz replaces the config's null; mode dropped");
	struct kx_json *med = kx_json_pointer(r0, "/run/spec/timing/latencyNs/median");
	ok(med && med->number == 1500000, "1.5 ms is 1500000 ns");
	is_str(str(r0, "/environment/spec/hardware/architecture"), "sm_90", "H200 is sm_90");
	is_str(str(r0, "/run/spec/observedAt"), "2025-03-04T05:06:07.000Z", "observedAt");
	is_str(str(r1, "/run/spec/sourceNative/externalId"),
	       "my_new_kernel/full.memory/my-provider/nvidia-h200/bsz8-causaltrue-seq_len512-fp16/2025-03-04-05-06-07",
	       "a memory row: booleans in the slug, .memory in the pass");
	is_str(str(r1, "/implementation/spec/name"), "my-provider", "implementation = kernel_provider");
	ok(kx_json_pointer(r1, "/implementation/spec/version") == NULL, "a non-liger provider gets no liger version");
	is_str(str(r0, "/implementation/spec/version"), "0.6.0", "a liger provider gets the liger version");
	/* the same CSV saved with CRLF line endings gives the same manifests */
	struct kx_buf crlf = { 0 };
	for (size_t i = 0; i < good_len; i++) {
		if (csv[i] == '\n')
			kx_buf_putc(&crlf, '\r');
		kx_buf_putc(&crlf, csv[i]);
	}
	struct built c;
	build(&c, "new.csv", crlf.ptr, crlf.len);
	bool same = c.r == 0 && c.n == 2;
	for (size_t i = 0; same && i < 2; i++) {
		char d1[KX_DIGEST_STR_MAX], d2[KX_DIGEST_STR_MAX];
		same = strcmp(tm_digest(b.roots[i], "run", d1), tm_digest(c.roots[i], "run", d2)) == 0 && *d1;
	}
	if (!ok(same, "the same CSV with CRLF line endings gives the same runs"))
		dump_problems(&c.p);
	built_release(&c);
	kx_buf_release(&crlf);

	built_release(&b);

	/* renames only of the single-letter names; a collision after renaming is a problem */
	static const char clash[] = HEADER
		"k,liger,forward,speed,ms,T,seq,128,1,1,1,\"{\"\"seq\"\": 64}\",NVIDIA B200,2025-01-01 00:00:00,0.6.0\n";
	build(&b, "clash.csv", clash, strlen(clash));
	ok(b.r == -EINVAL && b.p.len && b.p.v[0].line == 2 && strcmp(b.p.v[0].rule, "duplicate-key") == 0,
	   "T (renamed seq) colliding with a config 'seq' is a problem on its line");
	built_release(&b);
}

int main(void)
{
	bundled_csv();
	gpus();
	bad_rows();
	new_names();
	return tap_done();
}
