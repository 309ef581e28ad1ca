// SPDX-License-Identifier: MIT
/*
 * The Liger-Kernel CSV importer (SPEC §5). Each row becomes a source-native manifest: a run with
 * the published median/p20/p80, the protocol of its pass and metric (the forward latency one is
 * byte-for-byte the published record's), the environment of its GPU, and the workload and
 * implementation documents the row describes. Nothing is guessed: a value that does not parse,
 * an unknown metric or a parameter collision is a problem naming the line.
 */
#include "kx/liger.h"

#include "kx/canon.h"
#include "kx/manifest.h"
#include "kx/rank.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- CSV (RFC 4180: quoted fields, "" inside quotes, CRLF or LF) ------------------------------ */

struct csv {
	const char *p, *end;
	unsigned line; /* line of the next record */
};

#define MAX_FIELDS 64

/* Read one record into fields (arena copies). Returns the field count, 0 at EOF, -1 on error. */
static int csv_record(struct csv *c, struct kx_arena *a, char **fields, unsigned *ret_line, const char **err)
{
	if (c->p >= c->end)
		return 0;
	*ret_line = c->line;
	int n = 0;
	struct kx_buf f;
	kx_buf_init(&f, 1u << 20);
	for (;;) {
		kx_buf_reset(&f);
		if (c->p < c->end && *c->p == '"') {
			c->p++;
			for (;;) {
				if (c->p >= c->end) {
					*err = "unterminated quoted field";
					kx_buf_release(&f);
					return -1;
				}
				char ch = *c->p++;
				if (ch == '"') {
					if (c->p < c->end && *c->p == '"') {
						kx_buf_putc(&f, '"');
						c->p++;
						continue;
					}
					break;
				}
				if (ch == '\n')
					c->line++;
				kx_buf_putc(&f, ch);
			}
		} else {
			while (c->p < c->end && *c->p != ',' && *c->p != '\n' && *c->p != '\r')
				kx_buf_putc(&f, *c->p++);
		}
		if (n == MAX_FIELDS) {
			*err = "too many fields";
			kx_buf_release(&f);
			return -1;
		}
		fields[n++] = kx_arena_strndup(a, f.ptr ? f.ptr : "", f.len);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		if (c->p < c->end && *c->p == '\r')
			c->p++;
		if (c->p < c->end && *c->p == '\n')
			c->p++;
		else if (c->p < c->end) {
			*err = "unexpected character after a quoted field";
			kx_buf_release(&f);
			return -1;
		}
		c->line++;
		break;
	}
	kx_buf_release(&f);
	return n;
}

/* ---- documents -------------------------------------------------------------------------------- */

static struct kx_json *obj(struct kx_arena *a)
{
	return kx_json_new(a, KX_JSON_OBJECT);
}

static struct kx_json *document(struct kx_arena *a, const char *kind, const char *name, const char *title,
				struct kx_json *spec)
{
	struct kx_json *d = obj(a), *md = obj(a);
	kx_json_set_string(a, d, "apiVersion", KX_API_VERSION);
	kx_json_set_string(a, d, "kind", kind);
	kx_json_set_string(a, md, "name", name);
	if (title)
		kx_json_set_string(a, md, "title", title);
	kx_json_set(a, d, "metadata", md);
	kx_json_set(a, d, "spec", spec);
	return d;
}

static const char *pass_phrase(const char *mode)
{
	if (strcmp(mode, "forward") == 0)
		return "the module forward pass";
	if (strcmp(mode, "backward") == 0)
		return "the module backward pass (gradients from a retained forward graph)";
	if (strcmp(mode, "full") == 0)
		return "the module forward and backward passes together";
	return NULL;
}

struct kx_json *kx_liger_protocol(struct kx_arena *a, const char *mode, const char *metric)
{
	const char *phrase = pass_phrase(mode);
	char generic[160], notes[1024], name[160], title[160];
	if (!phrase) {
		snprintf(generic, sizeof(generic), "the module's '%s' mode", mode);
		phrase = generic;
	}
	struct kx_json *spec = obj(a), *h = obj(a), *m = obj(a), *c = obj(a);
	kx_json_set_string(a, h, "name", "Liger-Kernel benchmark scripts");
	kx_json_set_string(a, h, "repository", "https://github.com/linkedin/Liger-Kernel");
	kx_json_set(a, spec, "harness", h);
	bool memory = strcmp(metric, "memory") == 0;
	if (memory) {
		kx_json_set_string(a, m, "metric", "memory");
		kx_json_set_string(a, m, "instrument", "torch.cuda.max_memory_allocated");
		snprintf(notes, sizeof(notes),
			 "Measured: peak CUDA memory allocated while running %s, from torch.cuda.max_memory_allocated after a reset, repeated and summarised by quantiles 0.5/0.2/0.8 (median with p20/p80 spread), reported in MB as the upstream CSV labels it. The upstream CSV records no CUDA, driver, or torch version; the Liger release rides each run's labels. Comparable only within one kernel, workload, pass, and GPU.",
			 phrase);
		snprintf(name, sizeof(name), "liger-bench-memory-%s", mode);
		snprintf(title, sizeof(title), "Liger benchmark harness · %s pass · peak memory", mode);
	} else {
		kx_json_set_string(a, m, "timer", "cuda_events");
		snprintf(notes, sizeof(notes),
			 "Timed: %s, via triton.testing.do_bench with quantiles 0.5/0.2/0.8 (median with p20/p80 spread). The upstream CSV records no CUDA, driver, or torch version; the Liger release rides each run's labels. Comparable only within one kernel, workload, timed pass, and GPU.",
			 phrase);
		snprintf(name, sizeof(name), "liger-bench-do-bench-%s", mode);
		snprintf(title, sizeof(title), "Liger benchmark harness · %s pass", mode);
	}
	kx_json_set_string(a, m, "primaryStatistic", "median");
	kx_json_set(a, spec, "measurement", m);
	kx_json_set_string(a, c, "notes", notes);
	kx_json_set_string(a, c, "family", "liger_kernel_bench");
	kx_json_set(a, spec, "comparability", c);
	return document(a, "BenchmarkProtocol", name, title, spec);
}

/* Architectures of the GPUs we know by model name (the CSV records names, not compute capability). */
static const struct {
	const char *model, *arch;
} gpus[] = {
	{ "GeForce RTX 5090", "sm_120" }, { "GeForce RTX 5080", "sm_120" }, { "GeForce RTX 4090", "sm_89" },
	{ "GeForce RTX 4080", "sm_89" },  { "GeForce RTX 3090", "sm_86" },  { "GeForce RTX 3080", "sm_86" },
	{ "RTX 6000 Ada", "sm_89" },      { "RTX A6000", "sm_86" },         { "GH200", "sm_90" },
	{ "GB200", "sm_100" },            { "H100", "sm_90" },              { "H200", "sm_90" },
	{ "H800", "sm_90" },              { "H20", "sm_90" },               { "B200", "sm_100" },
	{ "B100", "sm_100" },             { "B300", "sm_103" },             { "A100", "sm_80" },
	{ "A800", "sm_80" },              { "A30", "sm_80" },               { "A40", "sm_86" },
	{ "A10G", "sm_86" },              { "A10", "sm_86" },               { "L40S", "sm_89" },
	{ "L40", "sm_89" },               { "L4", "sm_89" },                { "V100", "sm_70" },
	{ "T4", "sm_75" },
};

/* The architecture of a product name: a known model as a whole word ("A10" is not in "A100"). */
static const char *architecture(const char *product)
{
	for (size_t i = 0; i < KX_ARRAY_SIZE(gpus); i++) {
		size_t n = strlen(gpus[i].model);
		for (const char *p = strstr(product, gpus[i].model); p; p = strstr(p + 1, gpus[i].model)) {
			bool start = p == product || p[-1] == ' ' || p[-1] == '-';
			bool end = !p[n] || p[n] == ' ' || p[n] == '-';
			if (start && end)
				return gpus[i].arch;
		}
	}
	return NULL;
}

struct kx_json *kx_liger_environment(struct kx_arena *a, const char *gpu_name)
{
	const char *vendor = "unknown", *rest = gpu_name;
	if (strncasecmp(gpu_name, "NVIDIA ", 7) == 0) {
		vendor = "nvidia";
		rest = gpu_name + 7;
	} else if (strncasecmp(gpu_name, "AMD ", 4) == 0) {
		vendor = "amd";
		rest = gpu_name + 4;
	}
	char product[256], form[256];
	kx_rank_gpu_split(gpu_name, product, sizeof(product), form, sizeof(form));
	const char *arch = architecture(product);
	struct kx_json *spec = obj(a), *hw = obj(a);
	kx_json_set_string(a, hw, "vendor", vendor);
	kx_json_set_string(a, hw, "product", product);
	if (*form)
		kx_json_set_string(a, hw, "formFactor", form);
	if (arch)
		kx_json_set_string(a, hw, "architecture", arch);
	kx_json_set(a, spec, "hardware", hw);
	kx_json_set(a, spec, "software", obj(a));
	char slug[KX_NAME_MAX], name[200], title[300];
	kx_slug(gpu_name, strlen(gpu_name), slug, sizeof(slug));
	snprintf(name, sizeof(name), "liger-bench-%s", slug);
	snprintf(title, sizeof(title), "Liger benchmark host · %s", rest);
	return document(a, "ExecutionEnvironment", name, title, spec);
}

/* ---- rows ------------------------------------------------------------------------------------- */

enum col {
	C_KERNEL, C_PROVIDER, C_MODE, C_METRIC, C_UNIT, C_XNAME, C_XVALUE, C_Y50, C_Y20, C_Y80,
	C_CONFIG, C_GPU, C_TIMESTAMP, C_VERSION, C__COUNT
};

static const char *const colnames[C__COUNT] = {
	"kernel_name", "kernel_provider", "kernel_operation_mode", "metric_name", "metric_unit",
	"x_name", "x_value", "y_value_50", "y_value_20", "y_value_80", "extra_benchmark_config_str",
	"gpu_name", "timestamp", "liger_version",
};

static const struct {
	const char *from, *to;
} renames[] = { { "B", "batch" }, { "T", "seq" }, { "BT", "tokens" }, { "H", "hidden" }, { "V", "vocab" } };

static const char *param_name(const char *k)
{
	for (size_t i = 0; i < KX_ARRAY_SIZE(renames); i++)
		if (strcmp(renames[i].from, k) == 0)
			return renames[i].to;
	return k;
}

static const char *dtype_name(const char *t)
{
	if (strcmp(t, "torch.bfloat16") == 0)
		return "bf16";
	if (strcmp(t, "torch.float32") == 0)
		return "fp32";
	if (strcmp(t, "torch.float16") == 0)
		return "fp16";
	return strncmp(t, "torch.", 6) == 0 ? t + 6 : t;
}

struct row {
	const char *file;
	unsigned line;
	char **f;
	struct kx_problems *pr;
	int bad;
};

static void row_problem(struct row *r, const char *col, const char *rule, const char *fmt, ...) KX_PRINTF(4, 5);

static void row_problem(struct row *r, const char *col, const char *rule, const char *fmt, ...)
{
	char msg[600], ptr[128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(ptr, sizeof(ptr), "column %s", col);
	kx_problems_add(r->pr, r->line, 0, ptr, rule, "%s", msg);
	r->bad++;
}

/* A finite decimal in JSON number syntax ("0.53", "1e-06"); strtod alone would take "0x1p-2",
 * "inf" or " 5" too */
static bool number(struct kx_arena *a, const char *s, double *out)
{
	struct kx_json *v = NULL;
	struct kx_json_error e;
	if (!*s || *s == ' ' || kx_json_parse(a, s, strlen(s), 1, &v, NULL, &e) < 0 || v->type != KX_JSON_NUMBER ||
	    v->nonfinite)
		return false;
	*out = v->number;
	return true;
}

/* x_value as a JSON number when it is JSON number text, else a string */
static struct kx_json *scalar(struct kx_arena *a, const char *s)
{
	struct kx_json *v = NULL;
	struct kx_json_error e;
	if (kx_json_parse(a, s, strlen(s), 1, &v, NULL, &e) == 0 && v->type == KX_JSON_NUMBER && !v->nonfinite)
		return v;
	return kx_json_new_string(a, s);
}

static struct kx_json *workload(struct kx_arena *a, struct row *r)
{
	struct kx_json *cfg = NULL;
	struct kx_json_error e;
	const char *text = r->f[C_CONFIG];
	if (!*text)
		text = "{}";
	if (kx_json_parse(a, text, strlen(text), 0, &cfg, NULL, &e) < 0 || cfg->type != KX_JSON_OBJECT) {
		row_problem(r, colnames[C_CONFIG], "json-syntax", "extra_benchmark_config_str is not a JSON object: %s",
			    cfg ? "not an object" : e.message);
		return NULL;
	}
	struct kx_json *params = obj(a);
	const char *dtype = NULL;
	for (size_t i = 0; i < cfg->obj.len; i++) {
		struct kx_json_member *m = &cfg->obj.v[i];
		if (strcmp(m->key, "mode") == 0 || m->value->type == KX_JSON_NULL)
			continue;
		if (strcmp(m->key, "dtype") == 0) {
			if (m->value->type != KX_JSON_STRING) {
				row_problem(r, colnames[C_CONFIG], "type", "dtype must be a string");
				continue;
			}
			dtype = dtype_name(m->value->str.ptr);
			continue;
		}
		if (m->value->type == KX_JSON_NUMBER && m->value->nonfinite) {
			row_problem(r, colnames[C_CONFIG], "non-finite", "parameter '%s' is out of the range of a double", m->key);
			continue;
		}
		if (m->value->type == KX_JSON_ARRAY || m->value->type == KX_JSON_OBJECT) {
			row_problem(r, colnames[C_CONFIG], "type", "parameter '%s' is a %s: only numbers, strings and booleans name a workload",
				    m->key, kx_json_type_name(m->value->type));
			continue;
		}
		if (strcmp(m->key, r->f[C_XNAME]) == 0)
			continue; /* the swept value below overrides it */
		const char *name = param_name(m->key);
		if (kx_json_get(params, name)) {
			row_problem(r, colnames[C_CONFIG], "duplicate-key", "parameters '%s' and another key both map to '%s'",
				    m->key, name);
			continue;
		}
		kx_json_set(a, params, name, m->value);
	}
	const char *xname = param_name(r->f[C_XNAME]);
	if (!*r->f[C_XNAME]) {
		row_problem(r, colnames[C_XNAME], "required", "x_name is empty");
	} else if (kx_json_get(params, xname)) {
		row_problem(r, colnames[C_XNAME], "duplicate-key", "x_name '%s' collides with config parameter '%s'",
			    r->f[C_XNAME], xname);
	} else {
		kx_json_set(a, params, xname, scalar(a, r->f[C_XVALUE]));
	}
	struct kx_json *spec = obj(a);
	kx_json_set(a, spec, "parameters", params);
	if (dtype)
		kx_json_set_string(a, spec, "dtype", dtype);
	char slug[KX_NAME_MAX], name[128];
	bool cut;
	kx_rank_workload_slug(spec, slug, &cut);
	snprintf(name, sizeof(name), "workload-%.100s", slug);
	return document(a, "Workload", name, NULL, spec);
}

static char *digest_str(struct kx_arena *a, const struct kx_json *doc)
{
	struct kx_digest d;
	char s[KX_DIGEST_STR_MAX];
	if (kx_digest_document(doc, &d) < 0)
		return NULL;
	kx_digest_format(&d, s);
	return kx_arena_strndup(a, s, strlen(s));
}

static void title_case(const char *kernel, char *out, size_t cap)
{
	snprintf(out, cap, "%s", kernel);
	for (char *p = out; *p; p++)
		if (*p == '_')
			*p = ' ';
	out[0] = (char)toupper((unsigned char)out[0]);
}

static struct kx_json *measurement(struct kx_arena *a, const char *metric, const char *stat, const char *unit, double v)
{
	struct kx_json *m = obj(a);
	kx_json_set_string(a, m, "unit", unit);
	kx_json_set_number(a, m, "value", v);
	kx_json_set_string(a, m, "metric", metric);
	kx_json_set_string(a, m, "statistic", stat);
	return m;
}

static struct kx_json *row_manifest(struct kx_arena *a, struct row *r)
{
	char **f = r->f;
	const char *metric = NULL;
	if (strcmp(f[C_METRIC], "speed") == 0) {
		metric = "latency";
		if (strcmp(f[C_UNIT], "ms") != 0)
			row_problem(r, colnames[C_UNIT], "unit", "speed rows must be in ms, found '%s'", f[C_UNIT]);
	} else if (strcmp(f[C_METRIC], "memory") == 0) {
		metric = "memory";
		if (strcmp(f[C_UNIT], "MB") != 0)
			row_problem(r, colnames[C_UNIT], "unit", "memory rows must be in MB, found '%s'", f[C_UNIT]);
	} else {
		row_problem(r, colnames[C_METRIC], "enum", "metric_name must be 'speed' or 'memory', found '%s'", f[C_METRIC]);
	}
	double y[3];
	const enum col ycols[3] = { C_Y20, C_Y50, C_Y80 };
	for (int i = 0; i < 3; i++)
		if (!number(a, f[ycols[i]], &y[i]))
			row_problem(r, colnames[ycols[i]], "type", "'%s' is not a finite number", f[ycols[i]]);
	int64_t obs_ns = 0;
	char observed[40];
	const char *ts = f[C_TIMESTAMP];
	snprintf(observed, sizeof(observed), "%.10sT%.8s.000Z", ts, strlen(ts) > 11 ? ts + 11 : "");
	if (strlen(ts) != 19 || ts[10] != ' ' || kx_time_parse(observed, &obs_ns) < 0)
		row_problem(r, colnames[C_TIMESTAMP], "timestamp", "'%s' is not 'YYYY-MM-DD HH:MM:SS'", ts);
	char bench[512];
	snprintf(bench, sizeof(bench), "%s/%s", f[C_KERNEL], f[C_MODE]);
	if (!*f[C_KERNEL] || !*f[C_MODE] || !*f[C_PROVIDER] || !*f[C_GPU])
		row_problem(r, "kernel_name", "required", "kernel_name, kernel_operation_mode, kernel_provider and gpu_name must not be empty");
	struct kx_json *wl = workload(a, r);
	if (r->bad || !wl)
		return NULL;

	struct kx_json *proto = kx_liger_protocol(a, f[C_MODE], metric);
	struct kx_json *env = kx_liger_environment(a, f[C_GPU]);
	struct kx_json *impl_spec = obj(a);
	kx_json_set_string(a, impl_spec, "name", f[C_PROVIDER]);
	if (strncmp(f[C_PROVIDER], "liger", 5) == 0 && *f[C_VERSION])
		kx_json_set_string(a, impl_spec, "version", f[C_VERSION]);
	char iname[200];
	snprintf(iname, sizeof(iname), "liger-impl-%s", f[C_PROVIDER]);
	struct kx_json *impl = document(a, "Implementation", iname, f[C_PROVIDER], impl_spec);

	char gpu[KX_NAME_MAX], wslug[KX_NAME_MAX + 16];
	kx_rank_gpu_slug(kx_json_get(env, "spec"), gpu);
	bool cut;
	kx_rank_workload_slug(kx_json_get(wl, "spec"), wslug, &cut);
	if (cut) {
		struct kx_digest wd;
		kx_digest_document(wl, &wd);
		char hex[KX_DIGEST_HEX + 1];
		kx_digest_hex(&wd, hex);
		size_t l = strlen(wslug);
		snprintf(wslug + l, sizeof(wslug) - l, "~%.8s", hex);
	}
	bool memory = strcmp(metric, "memory") == 0;
	char ext[1024], tsslug[32];
	snprintf(tsslug, sizeof(tsslug), "%s", ts);
	for (char *p = tsslug; *p; p++)
		if (*p == ' ' || *p == ':')
			*p = '-';
	snprintf(ext, sizeof(ext), "%s/%s%s/%s/%s/%s/%s", f[C_KERNEL], f[C_MODE], memory ? ".memory" : "",
		 f[C_PROVIDER], gpu, wslug, tsslug);

	struct kx_json *spec = obj(a), *timing = obj(a), *ms = kx_json_new(a, KX_JSON_ARRAY);
	kx_json_set_string(a, spec, "status", "passed");
	kx_json_set_string(a, timing, "primaryStatistic", "median");
	if (memory) {
		kx_json_append(a, ms, measurement(a, "memory", "median", "MB", y[1]));
		kx_json_append(a, ms, measurement(a, "memory", "p20", "MB", y[0]));
		kx_json_append(a, ms, measurement(a, "memory", "p80", "MB", y[2]));
	} else {
		struct kx_json *lat = obj(a);
		kx_json_set_number(a, lat, "median", (double)llround(y[1] * 1e6));
		kx_json_set(a, timing, "latencyNs", lat);
		kx_json_append(a, ms, measurement(a, "latency", "p20", "ns", (double)llround(y[0] * 1e6)));
		kx_json_append(a, ms, measurement(a, "latency", "p80", "ns", (double)llround(y[2] * 1e6)));
	}
	kx_json_set(a, spec, "timing", timing);
	kx_json_set_string(a, spec, "observedAt", observed);
	kx_json_set(a, spec, "measurements", ms);
	struct kx_json *sn = obj(a), *metrics = obj(a);
	kx_json_set_string(a, sn, "source", "liger-kernel-bench");
	const char *pfx = memory ? "mb" : "ms";
	char key[16];
	const char *q[3] = { "20", "50", "80" };
	for (int i = 0; i < 3; i++) {
		snprintf(key, sizeof(key), "%s_%s", pfx, q[i]);
		kx_json_set_number(a, metrics, key, y[i]);
	}
	kx_json_set(a, sn, "metrics", metrics);
	kx_json_set_string(a, sn, "benchmark", bench);
	kx_json_set_string(a, sn, "externalId", ext);
	kx_json_set(a, spec, "sourceNative", sn);
	/* a document JCS refuses has no digest: the row's problem, not a NULL in the run */
	const struct {
		const char *member;
		const struct kx_json *doc;
		enum col from;
	} refs[] = { { "protocolDigest", proto, C_MODE }, { "workloadDigest", wl, C_CONFIG },
		     { "environmentDigest", env, C_GPU }, { "implementationDigest", impl, C_PROVIDER } };
	for (size_t i = 0; i < KX_ARRAY_SIZE(refs); i++) {
		const char *d = digest_str(a, refs[i].doc);
		if (!d) {
			row_problem(r, colnames[refs[i].from], "digest", "the %.*s document it makes cannot be digested (JCS refuses it)",
				    (int)(strlen(refs[i].member) - strlen("Digest")), refs[i].member);
			return NULL;
		}
		kx_json_set_string(a, spec, refs[i].member, d);
	}

	char name[1024], title[512], kt[256];
	snprintf(name, sizeof(name), "liger-%s-%s-%s-%s-%s", f[C_KERNEL], f[C_MODE], f[C_PROVIDER], gpu, wslug);
	for (char *p = name; *p; p++)
		if (*p == '_')
			*p = '-';
	name[100] = '\0';
	title_case(f[C_KERNEL], kt, sizeof(kt));
	snprintf(title, sizeof(title), "%s · %s · %s%s", kt, f[C_PROVIDER], f[C_MODE], memory ? " · memory" : "");
	struct kx_json *run = document(a, "BenchmarkRun", name, title, spec);
	struct kx_json *labels = obj(a);
	kx_json_set_string(a, labels, "liger_version", f[C_VERSION]);
	kx_json_set(a, kx_json_get(run, "metadata"), "labels", labels);

	struct kx_json *m = obj(a);
	kx_json_set(a, m, "run", run);
	kx_json_set(a, m, "protocol", proto);
	kx_json_set(a, m, "environment", env);
	kx_json_set(a, m, "workload", wl);
	kx_json_set(a, m, "implementation", impl);
	return m;
}

int kx_liger_build(struct kx_arena *a, const char *file, const char *bytes, size_t len,
		   struct kx_json ***roots, const char ***labels, size_t *n,
		   struct kx_problems *problems)
{
	struct csv c = { bytes, bytes + len, 1 };
	char *fields[MAX_FIELDS];
	const char *err = NULL;
	unsigned line;
	int nf = csv_record(&c, a, fields, &line, &err);
	if (nf <= 0) {
		kx_problems_add(problems, 1, 0, "header", "csv", "%s", nf < 0 ? err : "the file is empty");
		return -EINVAL;
	}
	int idx[C__COUNT];
	size_t before = problems->len;
	for (int i = 0; i < C__COUNT; i++) {
		idx[i] = -1;
		for (int k = 0; k < nf; k++)
			if (strcmp(fields[k], colnames[i]) == 0)
				idx[i] = k;
		if (idx[i] < 0)
			kx_problems_add(problems, 1, 0, "header", "required", "the header has no column '%s'", colnames[i]);
	}
	if (problems->len > before)
		return -EINVAL;
	size_t cap = *n;
	for (;;) {
		nf = csv_record(&c, a, fields, &line, &err);
		if (nf == 0)
			break;
		if (nf < 0) {
			kx_problems_add(problems, line, 0, "row", "csv", "%s", err);
			return -EINVAL;
		}
		if (nf == 1 && !fields[0][0])
			continue; /* blank line */
		struct row r = { file, line, NULL, problems, 0 };
		char *f[C__COUNT];
		bool short_row = false;
		for (int i = 0; i < C__COUNT; i++) {
			if (idx[i] >= nf)
				short_row = true;
			f[i] = idx[i] < nf ? fields[idx[i]] : "";
		}
		if (short_row) {
			kx_problems_add(problems, line, 0, "row", "csv", "the row has %d fields, the header names more", nf);
			continue;
		}
		r.f = f;
		struct kx_json *m = row_manifest(a, &r);
		if (!m)
			continue;
		if (*n == cap || !*roots) {
			cap = cap ? cap * 2 : 1024;
			struct kx_json **nr = realloc(*roots, cap * sizeof(*nr));
			const char **nl = realloc(*labels, cap * sizeof(*nl));
			if (!nr || !nl) {
				free(nr ? nr : *roots);
				free(nl ? nl : *labels);
				*roots = NULL;
				*labels = NULL;
				return -ENOMEM;
			}
			*roots = nr;
			*labels = nl;
		}
		(*roots)[*n] = m;
		(*labels)[*n] = kx_arena_printf(a, "%s:%u: ", file, line);
		(*n)++;
	}
	return problems->len > before ? -EINVAL : 0;
}
