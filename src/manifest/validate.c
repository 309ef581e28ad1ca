// SPDX-License-Identifier: MIT
/*
 * The validator: every rule of docs/manifest.md, applied to one parsed manifest, collecting all
 * problems with their JSON pointers. It also extracts the run facts (struct kx_run_facts) in the
 * same walk, so nothing downstream reads JSON to find a benchmark name or a primary value.
 *
 * Rules are short stable identifiers (listed in docs/manifest.md); messages say what was expected
 * and what was found.
 */
#include "private.h"

#include <errno.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const members[KX_DOC__COUNT] = { "run", "protocol", "environment", "workload",
						    "implementation" };
static const char *const kinds[KX_DOC__COUNT] = { "BenchmarkRun", "BenchmarkProtocol",
						  "ExecutionEnvironment", "Workload", "Implementation" };
static const char *const ref_fields[KX_DOC__COUNT] = { NULL, "protocolDigest", "environmentDigest",
						       "workloadDigest", "implementationDigest" };

const char *kx_doc_member(enum kx_doc d)
{
	return d < KX_DOC__COUNT ? members[d] : "?";
}

int kx_doc_from_kind(const char *kind)
{
	for (int i = 0; i < KX_DOC__COUNT; i++)
		if (strcmp(kinds[i], kind) == 0)
			return i;
	return -1;
}

static const char *article(const char *word)
{
	return strchr("AEIOUaeiou", word[0]) ? "an" : "a";
}

struct ctx {
	struct kx_problems *pr;
	int count;
	int oom;
};

static void add(struct ctx *c, const struct kx_json *at, const char *ptr, const char *rule,
		const char *fmt, ...) KX_PRINTF(5, 6);

static void add(struct ctx *c, const struct kx_json *at, const char *ptr, const char *rule,
		const char *fmt, ...)
{
	char *msg;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0 || !ptr || kx_problems_add(c->pr, at ? at->line : 0, at ? at->col : 0, ptr, rule, "%s", msg) < 0)
		c->oom = 1;
	if (n >= 0)
		free(msg);
	c->count++;
}

/* base + "/" + key as a JSON pointer (RFC 6901: '~' is "~0", '/' is "~1"), whole however long the
 * key: malloc'd, NULL without memory (add() then counts the problem and reports ENOMEM) */
static char *pointer(const char *base, const char *key, size_t key_len)
{
	size_t bl = strlen(base), n = bl + 2;
	for (size_t i = 0; i < key_len; i++)
		n += key[i] == '~' || key[i] == '/' ? 2 : 1;
	char *p = malloc(n), *o = p;
	if (!p)
		return NULL;
	memcpy(o, base, bl);
	o += bl;
	*o++ = '/';
	for (size_t i = 0; i < key_len; i++) {
		if (key[i] == '~' || key[i] == '/') {
			*o++ = '~';
			*o++ = key[i] == '~' ? '0' : '1';
		} else {
			*o++ = key[i];
		}
	}
	*o = '\0';
	return p;
}

/* A user's string for a message, cut at KX_QUOTE_CHARS characters (include/kx/common.h). */
#define Q(buf, s) kx_quote(buf, s, strlen(s))

/*
 * obj[key] checked for presence and type. `want` is a type, or -1 for "any". Numbers must be
 * finite (the linter reports those that are not). On a problem: reported, NULL returned.
 */
enum { ANY = -1, BOOL = -2 };

static struct kx_json *field(struct ctx *c, const struct kx_json *obj, const char *base,
			     const char *key, int want, bool required)
{
	/* the pointer is only spelled out when there is a problem to report: this runs per field */
	char q[KX_QUOTE_SIZE], *ptr;
	struct kx_json *v = kx_json_get(obj, key);
	if (!v) {
		if (required) {
			ptr = pointer(base, key, strlen(key));
			add(c, obj, ptr, "required", "%s is required", Q(q, key));
			free(ptr);
		}
		return NULL;
	}
	bool good = want == ANY || (int)v->type == want ||
		    (want == BOOL && (v->type == KX_JSON_TRUE || v->type == KX_JSON_FALSE));
	if (!good) {
		const char *wn = want == BOOL ? "boolean" : kx_json_type_name((enum kx_json_type)want);
		ptr = pointer(base, key, strlen(key));
		add(c, v, ptr, "type", "%s must be %s %s, found %s", Q(q, key),
		    wn[0] == 'a' || wn[0] == 'o' ? "an" : "a", wn, kx_json_type_name(v->type));
		free(ptr);
		return NULL;
	}
	if (v->type == KX_JSON_STRING && memchr(v->str.ptr, '\0', v->str.len)) {
		ptr = pointer(base, key, strlen(key));
		add(c, v, ptr, "type", "%s must not contain a NUL character", Q(q, key));
		free(ptr);
		return NULL;
	}
	if (v->type == KX_JSON_NUMBER && v->nonfinite)
		return NULL;
	return v;
}

static const char *string_field(struct ctx *c, const struct kx_json *obj, const char *base,
				const char *key, bool required)
{
	struct kx_json *v = field(c, obj, base, key, KX_JSON_STRING, required);
	if (v && v->str.len == 0) {
		char q[KX_QUOTE_SIZE], *ptr = pointer(base, key, strlen(key));
		add(c, v, ptr, "required", "%s must not be empty", Q(q, key));
		free(ptr);
		return NULL;
	}
	return v ? v->str.ptr : NULL;
}

/* A path segment the tree can use as-is: [a-z0-9._-]+, not "." or "..", at most 100 bytes. */
static bool path_safe(const char *s, size_t n)
{
	if (n == 0 || n > 100 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-'))
			return false;
	}
	return true;
}

static void check_benchmark(struct ctx *c, const struct kx_json *at, const char *ptr, const char *b)
{
	char q[KX_QUOTE_SIZE];
	const char *slash = strchr(b, '/');
	if (!slash || strchr(slash + 1, '/') || !path_safe(b, (size_t)(slash - b)) ||
	    !path_safe(slash + 1, strlen(slash + 1)))
		add(c, at, ptr, "path-name",
		    "benchmark %s must be '<kernel>/<pass>', each part made of [a-z0-9._-] (it names directories)", Q(q, b));
	else if (strchr(slash + 1, '.'))
		add(c, at, ptr, "path-name",
		    "the pass of benchmark %s cannot contain '.': it separates the pass from a metric in paths (full.memory)", Q(q, b));
}

static void check_digest_ref(struct ctx *c, const struct kx_json *spec, const char *base,
			     const char *key, struct kx_digest *ret, bool *ret_ok)
{
	*ret_ok = false;
	struct kx_json *v = field(c, spec, base, key, KX_JSON_STRING, true);
	if (!v)
		return;
	if (kx_digest_parse(v->str.ptr, v->str.len, ret) < 0) {
		char q[KX_QUOTE_SIZE], *ptr = pointer(base, key, strlen(key));
		add(c, v, ptr, "digest-format", "%s is not a digest: expected 'sha256:' and 64 lowercase hex digits",
		    kx_quote(q, v->str.ptr, v->str.len));
		free(ptr);
		return;
	}
	*ret_ok = true;
}

static void check_metadata(struct ctx *c, const struct kx_json *doc, const char *base)
{
	char b[256];
	size_t bl = strlen(base);
	memcpy(b, base, bl);
	memcpy(b + bl, "/metadata", 10);
	struct kx_json *md = field(c, doc, base, "metadata", KX_JSON_OBJECT, false);
	if (!md)
		return;
	field(c, md, b, "name", KX_JSON_STRING, false);
	field(c, md, b, "title", KX_JSON_STRING, false);
	struct kx_json *labels = field(c, md, b, "labels", KX_JSON_OBJECT, false);
	if (labels) {
		char lb[sizeof(b) + 8];
		size_t l = strlen(b);
		memcpy(lb, b, l);
		memcpy(lb + l, "/labels", 8); /* keys of labels are spelled out by field() */
		for (size_t i = 0; i < labels->obj.len; i++)
			field(c, labels, lb, labels->obj.v[i].key, KX_JSON_STRING, false);
	}
}

/* The document envelope: apiVersion, kind, metadata, spec. Returns spec or NULL. */
static struct kx_json *check_envelope(struct ctx *c, struct kx_json *doc, enum kx_doc d)
{
	char base[64] = "/";
	strcpy(base + 1, members[d]);
	char q[KX_QUOTE_SIZE];
	const char *api = string_field(c, doc, base, "apiVersion", true);
	if (api && strcmp(api, KX_API_VERSION) != 0) {
		char ptr[128];
		snprintf(ptr, sizeof(ptr), "%s/apiVersion", base);
		add(c, kx_json_get(doc, "apiVersion"), ptr, "api-version",
		    "apiVersion must be '%s', found %s", KX_API_VERSION, Q(q, api));
	}
	const char *kind = string_field(c, doc, base, "kind", true);
	if (kind && strcmp(kind, kinds[d]) != 0) {
		char ptr[128];
		snprintf(ptr, sizeof(ptr), "%s/kind", base);
		add(c, kx_json_get(doc, "kind"), ptr, "kind", "the '%s' member must be %s %s, found %s",
		    members[d], article(kinds[d]), kinds[d], Q(q, kind));
	}
	check_metadata(c, doc, base);
	return field(c, doc, base, "spec", KX_JSON_OBJECT, true);
}

static void check_protocol(struct ctx *c, struct kx_json *spec, struct kx_run_facts *f)
{
	char q[KX_QUOTE_SIZE];
	struct kx_json *m = field(c, spec, "/protocol/spec", "measurement", KX_JSON_OBJECT, true);
	if (m) {
		f->statistic = string_field(c, m, "/protocol/spec/measurement", "primaryStatistic", true);
		const char *metric = string_field(c, m, "/protocol/spec/measurement", "metric", false);
		if (metric && !path_safe(metric, strlen(metric)))
			add(c, kx_json_get(m, "metric"), "/protocol/spec/measurement/metric", "path-name",
			    "metric %s must be made of [a-z0-9._-] (it names directories)", Q(q, metric));
		else if (metric)
			f->metric = metric;
		field(c, m, "/protocol/spec/measurement", "timer", KX_JSON_STRING, false);
	}
	struct kx_json *cmp = field(c, spec, "/protocol/spec", "comparability", KX_JSON_OBJECT, true);
	if (cmp) {
		f->family = string_field(c, cmp, "/protocol/spec/comparability", "family", true);
		field(c, cmp, "/protocol/spec/comparability", "notes", KX_JSON_STRING, false);
	}
	struct kx_json *h = field(c, spec, "/protocol/spec", "harness", KX_JSON_OBJECT, false);
	if (h)
		f->harness = string_field(c, h, "/protocol/spec/harness", "name", false);
}

/* A string field that names something in paths and series (SPEC §2): at most KX_NAME_TEXT_MAX
 * bytes, rule `name-length`. */
static const char *name_field(struct ctx *c, const struct kx_json *obj, const char *base, const char *key,
			      bool required)
{
	const char *s = string_field(c, obj, base, key, required);
	const struct kx_json *v = kx_json_get(obj, key);
	if (s && v->str.len > KX_NAME_TEXT_MAX) {
		char q[KX_QUOTE_SIZE], *ptr = pointer(base, key, strlen(key));
		add(c, v, ptr, "name-length", "%s is %zu bytes, over the limit of %u for a name", Q(q, s), v->str.len,
		    KX_NAME_TEXT_MAX);
		free(ptr);
	}
	return s;
}

static void check_environment(struct ctx *c, struct kx_json *spec)
{
	struct kx_json *hw = field(c, spec, "/environment/spec", "hardware", KX_JSON_OBJECT, true);
	if (hw) {
		string_field(c, hw, "/environment/spec/hardware", "vendor", true);
		name_field(c, hw, "/environment/spec/hardware", "product", true);
		name_field(c, hw, "/environment/spec/hardware", "formFactor", false);
		string_field(c, hw, "/environment/spec/hardware", "architecture", false);
	}
	field(c, spec, "/environment/spec", "software", KX_JSON_OBJECT, false);
}

/* The bytes a scalar parameter value adds to the workload's name text (as rank.c writes it). */
static size_t value_text_len(const struct kx_json *v)
{
	char num[KX_JCS_NUMBER_MAX];
	switch (v->type) {
	case KX_JSON_STRING: return v->str.len;
	case KX_JSON_NUMBER: return v->nonfinite ? 0 : kx_jcs_number(v->number, num);
	case KX_JSON_TRUE: return 4;
	case KX_JSON_FALSE: return 5;
	default: return 0;
	}
}

static void check_workload(struct ctx *c, struct kx_json *spec)
{
	struct kx_json *p = field(c, spec, "/workload/spec", "parameters", KX_JSON_OBJECT, true);
	/* the name text is bounded so that placing the run cannot fail: the longest part is named */
	size_t text = 0, longest = 0;
	bool part_over = false; /* a part over its own bound: named, and the only reason the text is long */
	const struct kx_json_member *at = NULL;
	for (size_t i = 0; p && i < p->obj.len; i++) {
		struct kx_json_member *m = &p->obj.v[i];
		enum kx_json_type t = m->value->type;
		bool bad_type = t == KX_JSON_ARRAY || t == KX_JSON_OBJECT || t == KX_JSON_NULL;
		bool bad_name = m->key_len == 0 || strlen(m->key) != m->key_len;
		size_t part = m->key_len + value_text_len(m->value);
		text += part + (i ? 1 : 0);
		if (part > longest) {
			longest = part;
			at = m;
		}
		bool long_name = !bad_name && m->key_len > KX_NAME_TEXT_MAX;
		bool long_value = t == KX_JSON_STRING && m->value->str.len > KX_PARAM_VALUE_MAX;
		part_over |= long_name || long_value;
		if (!bad_type && !bad_name && !long_name && !long_value)
			continue;
		char q[KX_QUOTE_SIZE], *ptr = pointer("/workload/spec/parameters", m->key, m->key_len);
		if (bad_type)
			add(c, m->value, ptr, "type", "parameter %s must be a number, string or boolean, found %s",
			    kx_quote(q, m->key, m->key_len), kx_json_type_name(t));
		if (bad_name)
			add(c, m->value, ptr, "path-name", "parameter names must be non-empty text (they name directories)");
		if (long_name)
			add(c, m->value, ptr, "name-length", "parameter name %s is %zu bytes, over the limit of %u for a name",
			    kx_quote(q, m->key, m->key_len), m->key_len, KX_NAME_TEXT_MAX);
		if (long_value)
			add(c, m->value, ptr, "value-length", "the value of parameter %s is %zu bytes, over the limit of %u",
			    kx_quote(q, m->key, m->key_len), m->value->str.len, KX_PARAM_VALUE_MAX);
		free(ptr);
	}
	if (p && p->obj.len > KX_PARAMS_MAX)
		add(c, p, "/workload/spec/parameters", "parameters",
		    "a workload has %zu parameters, over the limit of %u (each is a column of /index.tsv)", p->obj.len,
		    KX_PARAMS_MAX);
	struct kx_json *dtype = field(c, spec, "/workload/spec", "dtype", KX_JSON_STRING, false);
	if (dtype && dtype->str.len) {
		text += dtype->str.len + (p && p->obj.len ? 1 : 0);
		if (dtype->str.len > longest)
			at = NULL;
	}
	if (text > KX_WORKLOAD_TEXT_MAX && !part_over) {
		char ptr[512] = "/workload/spec/parameters";
		const struct kx_json *where = p;
		size_t part = 0;
		if (at) {
			snprintf(ptr, sizeof(ptr), "/workload/spec/parameters/%s", at->key);
			where = at->value;
			part = longest;
		} else if (dtype && dtype->str.len) {
			snprintf(ptr, sizeof(ptr), "/workload/spec/dtype");
			where = dtype;
			part = dtype->str.len;
		}
		add(c, where, ptr, "length",
		    "the workload's name (its parameters and dtype, joined) is %zu bytes, over the limit of %u (%zu here)",
		    text, KX_WORKLOAD_TEXT_MAX, part);
	}
}

static void check_implementation(struct ctx *c, struct kx_json *spec)
{
	name_field(c, spec, "/implementation/spec", "name", true);
	field(c, spec, "/implementation/spec", "provider", KX_JSON_STRING, false);
	field(c, spec, "/implementation/spec", "version", KX_JSON_STRING, false);
}

static void check_measurements(struct ctx *c, struct kx_json *arr)
{
	for (size_t i = 0; i < arr->arr.len; i++) {
		char base[128] = "/run/spec/measurements/";
		size_t bl = strlen(base);
		/* no printf in the per-field path: index digits by hand */
		char digits[24];
		int nd = 0;
		for (size_t v = i; v || !nd; v /= 10)
			digits[nd++] = (char)('0' + v % 10);
		while (nd)
			base[bl++] = digits[--nd];
		base[bl] = '\0';
		struct kx_json *m = arr->arr.v[i];
		if (m->type != KX_JSON_OBJECT) {
			add(c, m, base, "type", "a measurement must be an object, found %s", kx_json_type_name(m->type));
			continue;
		}
		const char *metric = string_field(c, m, base, "metric", true);
		string_field(c, m, base, "statistic", true);
		field(c, m, base, "value", KX_JSON_NUMBER, true);
		const char *unit = string_field(c, m, base, "unit", true);
		if (!unit)
			continue;
		const char *um = kx_unit_metric(unit, NULL);
		bool mismatch = um && metric && (strcmp(metric, "latency") == 0 || strcmp(metric, "memory") == 0) &&
				strcmp(um, metric) != 0;
		if (um && !mismatch)
			continue;
		char ptr[160], q[KX_QUOTE_SIZE], q2[KX_QUOTE_SIZE];
		snprintf(ptr, sizeof(ptr), "%s/unit", base); /* base is ours: an index */
		if (!um)
			add(c, kx_json_get(m, "unit"), ptr, "unit",
			    "unknown unit %s (known: ns us ms s, B KB MB GB KiB MiB GiB, FLOP/s GFLOP/s TFLOP/s, B/s GB/s, count ratio %% W MHz C)",
			    Q(q, unit));
		else
			add(c, kx_json_get(m, "unit"), ptr, "unit", "unit %s does not measure %s", Q(q, unit), Q(q2, metric));
	}
}

static void only_members(struct ctx *c, const struct kx_json *obj, const char *base, const char *const *known,
			 size_t n, const char *holds);

/* RFC 6838's restricted-name: an alphanumeric, then up to 126 of these. */
static size_t restricted_name(const char *p, size_t n)
{
	size_t i = 0;
	if (!n || !((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= '0' && p[0] <= '9')))
		return 0;
	for (i = 1; i < n && i < 127; i++) {
		char ch = p[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      strchr("!#$&-^_.+", ch)))
			break;
	}
	return i;
}

bool kx_media_type_valid(const char *p, size_t n)
{
	size_t t = restricted_name(p, n);
	if (!t || t >= n || p[t] != '/')
		return false;
	size_t st = restricted_name(p + t + 1, n - t - 1);
	return st && t + 1 + st == n && n <= KX_MEDIA_TYPE_MAX;
}

static ssize_t control_at(const char *s, size_t n, const char *allowed);

bool kx_artifact_name_valid(const char *p, size_t n)
{
	return n && n <= KX_ARTIFACT_NAME_MAX && p[0] != '.' && !memchr(p, '/', n) && control_at(p, n, "") < 0;
}

static const char *const artifact_members[] = { "name", "digest", "size", "mediaType" };

/* A run's spec.artifacts (SPEC §9): what it announces, each {name, digest, size, mediaType}. */
static void check_artifacts(struct ctx *c, const struct kx_json *arr)
{
	char q[KX_QUOTE_SIZE], q2[KX_QUOTE_SIZE];
	if (arr->arr.len > KX_ARTIFACTS_MAX)
		add(c, arr, "/run/spec/artifacts", "count", "%zu artifacts, over the limit of %d a run", arr->arr.len,
		    KX_ARTIFACTS_MAX);
	for (size_t i = 0; i < arr->arr.len && i < KX_ARTIFACTS_MAX; i++) {
		char base[64], ptr[96];
		snprintf(base, sizeof(base), "/run/spec/artifacts/%zu", i);
		const struct kx_json *o = arr->arr.v[i];
		if (o->type != KX_JSON_OBJECT) {
			add(c, o, base, "type", "an artifact must be an object, found %s", kx_json_type_name(o->type));
			continue;
		}
		only_members(c, o, base, artifact_members, KX_ARRAY_SIZE(artifact_members),
			     "an artifact holds name, digest, size, mediaType");
		struct kx_json *name = field(c, o, base, "name", KX_JSON_STRING, true);
		snprintf(ptr, sizeof(ptr), "%s/name", base);
		if (name && !kx_artifact_name_valid(name->str.ptr, name->str.len))
			add(c, name, ptr, "name",
			    "artifact name %s is not a safe file name: 1 to %d bytes, no '/', no control character "
			    "(C0, DEL, C1), not starting with '.'",
			    kx_quote(q, name->str.ptr, name->str.len), KX_ARTIFACT_NAME_MAX);
		for (size_t j = 0; name && j < i; j++) {
			const struct kx_json *other = arr->arr.v[j]->type == KX_JSON_OBJECT ? kx_json_get(arr->arr.v[j], "name")
											    : NULL;
			if (other && other->type == KX_JSON_STRING && other->str.len == name->str.len &&
			    memcmp(other->str.ptr, name->str.ptr, name->str.len) == 0) {
				add(c, name, ptr, "duplicate", "artifact name %s is also artifact %zu's: names are unique in a run",
				    kx_quote(q, name->str.ptr, name->str.len), j);
				break;
			}
		}
		struct kx_digest d;
		bool ok;
		check_digest_ref(c, o, base, "digest", &d, &ok);
		struct kx_json *size = field(c, o, base, "size", KX_JSON_NUMBER, true);
		snprintf(ptr, sizeof(ptr), "%s/size", base);
		if (size && !(size->number >= 0 && size->number <= 9007199254740992.0 && size->number == (double)(uint64_t)size->number))
			add(c, size, ptr, "size", "size must be a whole number of bytes from 0 to 2^53, found %.17g", size->number);
		struct kx_json *mt = field(c, o, base, "mediaType", KX_JSON_STRING, true);
		snprintf(ptr, sizeof(ptr), "%s/mediaType", base);
		if (mt && !kx_media_type_valid(mt->str.ptr, mt->str.len))
			add(c, mt, ptr, "media-type", "%s is not a media type: type/subtype (RFC 6838), at most %d bytes, e.g. %s",
			    kx_quote(q, mt->str.ptr, mt->str.len), KX_MEDIA_TYPE_MAX, Q(q2, "text/tab-separated-values"));
	}
}

int kx_run_artifacts(const struct kx_json *run, kx_run_artifact_fn fn, void *ctx)
{
	const struct kx_json *arr = run ? kx_json_pointer(run, "/spec/artifacts") : NULL;
	if (!arr || arr->type != KX_JSON_ARRAY)
		return 0;
	for (size_t i = 0; i < arr->arr.len; i++) {
		const struct kx_json *o = arr->arr.v[i];
		const struct kx_json *n = kx_json_get(o, "name"), *d = kx_json_get(o, "digest");
		const struct kx_json *z = kx_json_get(o, "size"), *m = kx_json_get(o, "mediaType");
		struct kx_run_artifact x = { .index = i };
		if (!n || !d || !z || !m || kx_digest_parse(d->str.ptr, d->str.len, &x.digest) < 0)
			return -EINVAL; /* a stored run was validated: not one */
		x.name = n->str.ptr;
		x.size = (uint64_t)z->number;
		x.media_type = m->str.ptr;
		int r = fn(ctx, &x);
		if (r)
			return r;
	}
	return 0;
}

/*
 * Quantiles of one quantity ascend: p20 <= median <= p80. A quantity is a metric in one kind of
 * unit (latency in ns or ms; throughput in TFLOP/s and in GB/s are two), compared in its base
 * unit; timing.latencyNs holds latency in ns. Values that are not finite numbers, or have an
 * unknown unit, are other rules' problems and are left out here.
 */
enum { QT_P20, QT_MEDIAN, QT_P80, QT__COUNT };
static const char *const quantile_names[QT__COUNT] = { "p20", "median", "p80" };

struct quantity {
	const char *metric, *kind;
	struct {
		const struct kx_json *at;
		long index; /* in measurements; -1 for timing.latencyNs */
		const char *unit;
		double base; /* in the base unit of kind */
	} q[QT__COUNT];
};

static void quantile_add(struct quantity *qs, size_t *n, size_t cap, const char *metric, const char *kind, int which,
			 const struct kx_json *at, long index, const char *unit, double factor)
{
	size_t i = 0;
	while (i < *n && (strcmp(qs[i].metric, metric) != 0 || strcmp(qs[i].kind, kind) != 0))
		i++;
	if (i == *n) {
		if (*n == cap)
			return;
		qs[(*n)++] = (struct quantity){ .metric = metric, .kind = kind };
	}
	if (qs[i].q[which].at)
		return; /* the first value of a statistic is the one checked */
	qs[i].q[which].at = at;
	qs[i].q[which].index = index;
	qs[i].q[which].unit = unit;
	qs[i].q[which].base = at->number * factor;
}

/* Every quantity of a run's spec with its quantiles: timing.latencyNs first, then measurements. */
static size_t quantities(struct kx_json *spec, struct quantity *qs, size_t cap)
{
	size_t n = 0;
	struct kx_json *timing = kx_json_get(spec, "timing");
	struct kx_json *lat = timing && timing->type == KX_JSON_OBJECT ? kx_json_get(timing, "latencyNs") : NULL;
	for (int k = 0; lat && lat->type == KX_JSON_OBJECT && k < QT__COUNT; k++) {
		struct kx_json *v = kx_json_get(lat, quantile_names[k]);
		if (v && v->type == KX_JSON_NUMBER && !v->nonfinite)
			quantile_add(qs, &n, cap, "latency", "latency", k, v, -1, "ns", 1);
	}
	struct kx_json *ms = kx_json_get(spec, "measurements");
	for (size_t i = 0; ms && ms->type == KX_JSON_ARRAY && i < ms->arr.len; i++) {
		struct kx_json *m = ms->arr.v[i];
		const char *metric = kx_json_get_string(m, "metric"), *stat = kx_json_get_string(m, "statistic");
		const char *unit = kx_json_get_string(m, "unit");
		struct kx_json *v = kx_json_get(m, "value");
		double factor;
		const char *kind = unit ? kx_unit_metric(unit, &factor) : NULL;
		if (!metric || !stat || !kind || !v || v->type != KX_JSON_NUMBER || v->nonfinite)
			continue;
		for (int k = 0; k < QT__COUNT; k++)
			if (strcmp(stat, quantile_names[k]) == 0)
				quantile_add(qs, &n, cap, metric, kind, k, v, (long)i, unit, factor);
	}
	return n;
}

static void check_quantiles(struct ctx *c, const struct quantity *qs, size_t n)
{
	static const int pairs[][2] = { { QT_P20, QT_MEDIAN }, { QT_MEDIAN, QT_P80 }, { QT_P20, QT_P80 } };
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < KX_ARRAY_SIZE(pairs); k++) {
			int lo = pairs[k][0], hi = pairs[k][1];
			if (!qs[i].q[lo].at || !qs[i].q[hi].at || (k == 2 && qs[i].q[QT_MEDIAN].at))
				continue; /* p20 against p80 only when there is no median between them */
			if (qs[i].q[lo].base <= qs[i].q[hi].base)
				continue;
			/* the problem is the value that is not the median */
			int at = lo == QT_MEDIAN ? hi : lo;
			char ptr[160], a[KX_JCS_NUMBER_MAX], b[KX_JCS_NUMBER_MAX], q[KX_QUOTE_SIZE];
			if (qs[i].q[at].index < 0)
				snprintf(ptr, sizeof(ptr), "/run/spec/timing/latencyNs/%s", quantile_names[at]);
			else
				snprintf(ptr, sizeof(ptr), "/run/spec/measurements/%ld/value", qs[i].q[at].index);
			if (!kx_jcs_number(qs[i].q[lo].at->number, a))
				snprintf(a, sizeof(a), "?");
			if (!kx_jcs_number(qs[i].q[hi].at->number, b))
				snprintf(b, sizeof(b), "?");
			add(c, qs[i].q[at].at, ptr, "quantile-order",
			    "%s %s %s %s is above %s %s %s: quantiles ascend (p20 <= median <= p80)", Q(q, qs[i].metric),
			    quantile_names[lo], a, qs[i].q[lo].unit, quantile_names[hi], b, qs[i].q[hi].unit);
		}
	}
}

/* The primary value: timing.latencyNs.<stat> for latency, else the matching measurement. */
static void primary_value(struct ctx *c, struct kx_json *spec, struct kx_run_facts *f)
{
	char q[KX_QUOTE_SIZE], q2[KX_QUOTE_SIZE];
	struct kx_json *timing = kx_json_get(spec, "timing");
	if (strcmp(f->metric, "latency") == 0) {
		struct kx_json *lat = timing ? kx_json_get(timing, "latencyNs") : NULL;
		struct kx_json *v = lat && lat->type == KX_JSON_OBJECT ? kx_json_get(lat, f->statistic) : NULL;
		char *ptr = v || f->passed ? pointer("/run/spec/timing/latencyNs", f->statistic, strlen(f->statistic)) : NULL;
		if (v && v->type != KX_JSON_NUMBER) {
			add(c, v, ptr, "type", "the primary value must be a number, found %s", kx_json_type_name(v->type));
		} else if (v && !v->nonfinite) {
			f->has_value = true;
			f->value = f->base_value = v->number;
			f->unit = "ns";
			if (v->number < 0)
				add(c, v, ptr, "range", "a latency cannot be negative (%g ns)", v->number);
		} else if (!v && f->passed) {
			add(c, timing ? timing : spec, ptr, "required",
			    "a passed run needs its primary value: timing.latencyNs, statistic %s (in ns)", Q(q, f->statistic));
		}
		free(ptr);
		return;
	}
	struct kx_json *ms = kx_json_get(spec, "measurements");
	for (size_t i = 0; ms && ms->type == KX_JSON_ARRAY && i < ms->arr.len; i++) {
		struct kx_json *m = ms->arr.v[i];
		const char *metric = kx_json_get_string(m, "metric");
		const char *stat = kx_json_get_string(m, "statistic");
		const char *unit = kx_json_get_string(m, "unit");
		struct kx_json *val = kx_json_get(m, "value");
		double factor;
		if (!metric || !stat || !unit || !val || val->type != KX_JSON_NUMBER || val->nonfinite ||
		    strcmp(metric, f->metric) != 0 || strcmp(stat, f->statistic) != 0 ||
		    !kx_unit_metric(unit, &factor))
			continue;
		f->has_value = true;
		f->value = val->number;
		f->unit = unit;
		f->base_value = val->number * factor;
		return;
	}
	if (f->passed)
		add(c, spec, "/run/spec/measurements", "required",
		    "a passed %s run needs a measurement with metric %s and statistic %s", f->metric,
		    Q(q, f->metric), Q(q2, f->statistic));
}

/*
 * The noise interval of the primary value (SPEC §2, within noise): the p20 and p80 of the quantity
 * of its metric in its unit's kind (check_quantiles' quantities), in the base unit.
 */
static void primary_spread(const struct quantity *qs, size_t n, struct kx_run_facts *f)
{
	const char *kind = f->has_value && f->unit ? kx_unit_metric(f->unit, NULL) : NULL;
	for (size_t i = 0; kind && i < n; i++) {
		if (strcmp(qs[i].metric, f->metric) != 0 || strcmp(qs[i].kind, kind) != 0)
			continue;
		if (qs[i].q[QT_P20].at && qs[i].q[QT_P80].at) {
			f->has_spread = true;
			f->base_p20 = qs[i].q[QT_P20].base;
			f->base_p80 = qs[i].q[QT_P80].base;
		}
		return;
	}
}

static void check_run(struct ctx *c, struct kx_json *spec, struct kx_manifest *m)
{
	struct kx_run_facts *f = &m->facts;
	char q[KX_QUOTE_SIZE], q2[KX_QUOTE_SIZE];
	struct kx_json *st = field(c, spec, "/run/spec", "status", KX_JSON_STRING, true);
	if (st) {
		if (strcmp(st->str.ptr, "passed") == 0)
			f->passed = true;
		else if (strcmp(st->str.ptr, "failed") != 0)
			add(c, st, "/run/spec/status", "enum", "status must be 'passed' or 'failed', found %s",
			    kx_quote(q, st->str.ptr, st->str.len));
	}
	struct kx_json *obs = field(c, spec, "/run/spec", "observedAt", KX_JSON_STRING, true);
	if (obs) {
		if (kx_time_parse(obs->str.ptr, &f->observed_ns) < 0)
			add(c, obs, "/run/spec/observedAt", "timestamp",
			    "%s is not an RFC 3339 date-time with a zone between 1677 and 2262 (e.g. 2024-11-22T17:44:03.000Z)",
			    kx_quote(q, obs->str.ptr, obs->str.len));
		else if (f->observed_ns > kx_now_ns() + KX_FUTURE_SLACK_NS)
			add(c, obs, "/run/spec/observedAt", "future",
			    "%s is more than a day after now: a run cannot be observed in the future (check the clock "
			    "and the zone)", kx_quote(q, obs->str.ptr, obs->str.len));
		else
			f->observed_at = obs->str.ptr;
	}
	struct kx_json *sn = field(c, spec, "/run/spec", "sourceNative", KX_JSON_OBJECT, false);
	const char *sn_bench = NULL;
	if (sn) {
		f->source = string_field(c, sn, "/run/spec/sourceNative", "source", true);
		f->external_id = string_field(c, sn, "/run/spec/sourceNative", "externalId", true);
		/* both are keys of the conflict index: bounded like path names */
		if (f->source && strlen(f->source) > 256) {
			add(c, kx_json_get(sn, "source"), "/run/spec/sourceNative/source", "length",
			    "source is %zu bytes, over the limit of 256", strlen(f->source));
			f->source = NULL;
		}
		if (f->external_id && strlen(f->external_id) > 2048) {
			add(c, kx_json_get(sn, "externalId"), "/run/spec/sourceNative/externalId", "length",
			    "externalId is %zu bytes, over the limit of 2048", strlen(f->external_id));
			f->external_id = NULL;
		}
		sn_bench = string_field(c, sn, "/run/spec/sourceNative", "benchmark", false);
		field(c, sn, "/run/spec/sourceNative", "metrics", KX_JSON_OBJECT, false);
	}
	const char *bench = string_field(c, spec, "/run/spec", "benchmark", false);
	if (bench) {
		check_benchmark(c, kx_json_get(spec, "benchmark"), "/run/spec/benchmark", bench);
		if (sn_bench && strcmp(sn_bench, bench) != 0)
			add(c, kx_json_get(sn, "benchmark"), "/run/spec/sourceNative/benchmark", "benchmark",
			    "sourceNative.benchmark %s differs from benchmark %s", Q(q, sn_bench), Q(q2, bench));
		f->benchmark = bench;
	} else if (sn_bench) {
		check_benchmark(c, kx_json_get(sn, "benchmark"), "/run/spec/sourceNative/benchmark", sn_bench);
		f->benchmark = sn_bench;
	} else if (!sn || !kx_json_get(sn, "benchmark")) {
		add(c, spec, "/run/spec/benchmark", "required",
		    "'benchmark' is required ('<kernel>/<pass>'; or sourceNative.benchmark)");
	}
	struct kx_json *timing = field(c, spec, "/run/spec", "timing", KX_JSON_OBJECT, f->passed);
	if (timing) {
		const char *ps = string_field(c, timing, "/run/spec/timing", "primaryStatistic", true);
		if (ps && f->statistic && strcmp(ps, f->statistic) != 0)
			add(c, kx_json_get(timing, "primaryStatistic"), "/run/spec/timing/primaryStatistic",
			    "statistic-mismatch", "the run ranks on %s but its protocol measures %s", Q(q, ps),
			    Q(q2, f->statistic));
		struct kx_json *lat = field(c, timing, "/run/spec/timing", "latencyNs", KX_JSON_OBJECT, false);
		for (size_t i = 0; lat && i < lat->obj.len; i++)
			field(c, lat, "/run/spec/timing/latencyNs", lat->obj.v[i].key, KX_JSON_NUMBER, false);
	}
	struct kx_json *ms = field(c, spec, "/run/spec", "measurements", KX_JSON_ARRAY, false);
	if (ms)
		check_measurements(c, ms);
	struct kx_json *arts = field(c, spec, "/run/spec", "artifacts", KX_JSON_ARRAY, false);
	if (arts)
		check_artifacts(c, arts);
	struct quantity qs[16];
	size_t nq = quantities(spec, qs, KX_ARRAY_SIZE(qs));
	check_quantiles(c, qs, nq);
	struct kx_json *corr = field(c, spec, "/run/spec", "correctness", KX_JSON_OBJECT, false);
	f->has_correctness = corr != NULL;
	field(c, spec, "/run/spec", "message", KX_JSON_STRING, false);
	if (f->statistic)
		primary_value(c, spec, f);
	primary_spread(qs, nq, f);
}

/*
 * Most manifests of a batch share their protocol, environment, implementation and workload
 * documents byte for byte. Equal source text means equal trees, so equal canonical bytes and
 * digest: a small per-thread memo keyed by the document's source text saves re-serializing and
 * re-hashing them. Built documents (no source text) are always computed.
 */
#define MEMO_SLOTS 512
#define MEMO_MAX_SRC 16384

struct memo_entry {
	uint64_t hash;
	char *src;
	size_t src_len;
	char *jcs;
	size_t jcs_len;
	struct kx_digest digest;
};

/* per thread, freed when the thread ends (pthread key destructor: LeakSanitizer stays quiet) */
static pthread_key_t memo_key;
static pthread_once_t memo_once = PTHREAD_ONCE_INIT;

static void memo_free(void *p)
{
	struct memo_entry *m = p;
	for (size_t i = 0; i < MEMO_SLOTS; i++) {
		free(m[i].src);
		free(m[i].jcs);
	}
	free(m);
}

static void memo_init(void)
{
	pthread_key_create(&memo_key, memo_free);
}

static struct memo_entry *memo_table(void)
{
	pthread_once(&memo_once, memo_init);
	struct memo_entry *m = pthread_getspecific(memo_key);
	if (!m && (m = calloc(MEMO_SLOTS, sizeof(*m))) && pthread_setspecific(memo_key, m) != 0) {
		free(m);
		m = NULL;
	}
	return m;
}

static uint64_t fnv1a(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
	return h;
}

static int memo_find(const struct kx_json *doc, struct kx_digest *ret, const char **ret_jcs, size_t *ret_len)
{
	if (!doc->src || doc->src_len > MEMO_MAX_SRC)
		return -ENOENT;
	struct memo_entry *memo = memo_table();
	if (!memo)
		return -ENOENT;
	uint64_t h = fnv1a(doc->src, doc->src_len);
	struct memo_entry *e = &memo[h % MEMO_SLOTS];
	if (!e->src || e->hash != h || e->src_len != doc->src_len || memcmp(e->src, doc->src, doc->src_len) != 0)
		return -ENOENT;
	*ret = e->digest;
	*ret_jcs = e->jcs;
	*ret_len = e->jcs_len;
	return 0;
}

static void memo_add(const struct kx_json *doc, const struct kx_digest *d, const char *jcs, size_t len)
{
	if (!doc->src || doc->src_len > MEMO_MAX_SRC)
		return;
	struct memo_entry *memo = memo_table();
	if (!memo)
		return;
	uint64_t h = fnv1a(doc->src, doc->src_len);
	struct memo_entry *e = &memo[h % MEMO_SLOTS];
	char *src = malloc(doc->src_len), *j = malloc(len ? len : 1);
	if (!src || !j) {
		free(src);
		free(j);
		return;
	}
	free(e->src);
	free(e->jcs);
	memcpy(src, doc->src, doc->src_len);
	memcpy(j, jcs, len);
	*e = (struct memo_entry){ h, src, doc->src_len, j, len, *d };
}

int kx_manifest_check(struct kx_arena *a, struct kx_json *root, struct kx_manifest *ret,
		      struct kx_problems *problems)
{
	return manifest_check(a, root, ret, problems, 0);
}

bool kx_signature_good(const struct kx_digest *run, const struct kx_signature *x)
{
	char msg[KX_DIGEST_STR_MAX];
	kx_digest_format(run, msg);
	return kx_verify(x->pub, msg, strlen(msg), x->sig);
}

/* The problem of signature x of m (an element of its root's signatures array) not verifying. */
static void bad_signature(struct ctx *c, const struct kx_manifest *m, const struct kx_signature *x, const char *run)
{
	const struct kx_json *sigs = kx_json_get(m->root, KX_SIGNATURES_MEMBER);
	const struct kx_json *val = kx_json_get(sigs->arr.v[x->at], "value");
	char ptr[64], id[KX_DIGEST_STR_MAX];
	snprintf(ptr, sizeof(ptr), "/%s/%u/value", KX_SIGNATURES_MEMBER, x->at);
	kx_digest_format(&x->key_id, id);
	add(c, val, ptr, "signature", "the signature does not verify: it is not key %s's signature of the run digest %s",
	    id, run);
}

int kx_signature_refuse(const struct kx_manifest *m, const struct kx_signature *x, struct kx_problems *problems)
{
	struct ctx c = { .pr = problems };
	char run[KX_DIGEST_STR_MAX];
	size_t before = problems->len;
	kx_digest_format(&m->digest[KX_DOC_RUN], run);
	bad_signature(&c, m, x, run);
	/* a JSON Lines entry's nodes count lines from its own line */
	for (size_t i = before; i < problems->len; i++)
		if (problems->v[i].line)
			problems->v[i].line += m->line - m->root->line;
	return c.oom ? -ENOMEM : 0;
}

/*
 * The manifest's signatures (SPEC §10, docs/manifest.md "Signatures"): an array of at most
 * KX_SIGNATURES_MAX objects {keyId, algorithm: "ed25519", publicKey, value}, each the Ed25519
 * signature by publicKey (whose sha256: is keyId) of the run's digest string "sha256:<hex>". One
 * that does not verify is refused (rule `signature`); so is a key named twice. `run` is NULL when
 * the run could not be hashed (reported already): the signatures are then only checked for shape.
 * `defer`: a manifest otherwise valid keeps its signatures unchecked, for the caller's threads.
 */
static void check_signatures(struct ctx *c, struct kx_arena *a, const struct kx_json *sigs,
			     const struct kx_digest *run, struct kx_manifest *m, bool defer)
{
	if (sigs->type != KX_JSON_ARRAY) {
		add(c, sigs, "/" KX_SIGNATURES_MEMBER, "type", "'signatures' must be an array, found %s",
		    kx_json_type_name(sigs->type));
		return;
	}
	if (sigs->arr.len > KX_SIGNATURES_MAX) {
		add(c, sigs, "/" KX_SIGNATURES_MEMBER, "signatures", "at most %d signatures, found %zu",
		    KX_SIGNATURES_MAX, sigs->arr.len);
		return;
	}
	char msg[KX_DIGEST_STR_MAX] = "";
	if (run)
		kx_digest_format(run, msg);
	struct kx_signature *out = a && sigs->arr.len ? kx_arena_zalloc(a, sigs->arr.len * sizeof(*out)) : NULL;
	if (a && sigs->arr.len && !out) {
		c->oom = 1;
		return;
	}
	struct kx_digest seen[KX_SIGNATURES_MAX];
	size_t n = 0, nseen = 0;
	/* the Ed25519 checks, unless the caller runs them (kx_signature_good) on its threads */
	bool deferring = defer && out && c->count == 0;
	for (size_t i = 0; i < sigs->arr.len; i++) {
		const struct kx_json *s = sigs->arr.v[i];
		char base[48], ptr[64];
		snprintf(base, sizeof(base), "/%s/%zu", KX_SIGNATURES_MEMBER, i);
		if (s->type != KX_JSON_OBJECT) {
			add(c, s, base, "type", "a signature must be an object {keyId, algorithm, publicKey, value}, found %s",
			    kx_json_type_name(s->type));
			continue;
		}
		const char *id = string_field(c, s, base, "keyId", true);
		const char *alg = string_field(c, s, base, "algorithm", true);
		const struct kx_json *pub = field(c, s, base, "publicKey", KX_JSON_STRING, true);
		const struct kx_json *val = field(c, s, base, "value", KX_JSON_STRING, true);
		struct kx_signature x = { 0 };
		bool good = id && alg && pub && val;
		if (id && kx_digest_parse(id, strlen(id), &x.key_id) < 0) {
			snprintf(ptr, sizeof(ptr), "%s/keyId", base);
			add(c, kx_json_get(s, "keyId"), ptr, "signature", "keyId must be sha256:<64 lowercase hex>");
			good = false;
		}
		if (alg && strcmp(alg, "ed25519") != 0) {
			char q[KX_QUOTE_SIZE];
			snprintf(ptr, sizeof(ptr), "%s/algorithm", base);
			add(c, kx_json_get(s, "algorithm"), ptr, "signature",
			    "algorithm %s is not supported: signatures are \"ed25519\"", Q(q, alg));
			good = false;
		}
		if (pub && kx_base64_decode(pub->str.ptr, pub->str.len, x.pub, sizeof(x.pub)) < 0) {
			snprintf(ptr, sizeof(ptr), "%s/publicKey", base);
			add(c, pub, ptr, "signature", "publicKey must be the base64 of a 32-byte Ed25519 public key");
			good = false;
		}
		if (val && kx_base64_decode(val->str.ptr, val->str.len, x.sig, sizeof(x.sig)) < 0) {
			snprintf(ptr, sizeof(ptr), "%s/value", base);
			add(c, val, ptr, "signature", "value must be the base64 of a 64-byte Ed25519 signature");
			good = false;
		}
		if (!good)
			continue;
		struct kx_digest derived;
		kx_key_id(x.pub, &derived);
		if (!kx_digest_equal(&derived, &x.key_id)) {
			char d[KX_DIGEST_STR_MAX];
			kx_digest_format(&derived, d);
			snprintf(ptr, sizeof(ptr), "%s/keyId", base);
			add(c, kx_json_get(s, "keyId"), ptr, "signature",
			    "keyId is not the id of publicKey (sha256: of its 32 bytes is %s)", d);
			continue;
		}
		for (size_t k = 0; k < nseen; k++)
			if (kx_digest_equal(&seen[k], &x.key_id)) {
				snprintf(ptr, sizeof(ptr), "%s/keyId", base);
				add(c, kx_json_get(s, "keyId"), ptr, "signature", "key %s signs the run twice", id);
				good = false;
			}
		seen[nseen++] = x.key_id;
		x.at = (unsigned)i;
		if (good && run && !deferring && !kx_signature_good(run, &x)) {
			bad_signature(c, m, &x, msg);
			good = false;
		}
		if (good && out)
			out[n++] = x;
	}
	if (deferring && run && c->count) /* refused anyway: checked now, so that every problem is told */
		for (size_t i = 0; i < n; i++)
			if (!kx_signature_good(run, &out[i]))
				bad_signature(c, m, &out[i], msg);
	m->sigs = out;
	m->nsigs = n;
}

/* CHECK_MEMO: only for trees straight from the parser — a tree changed after parsing no longer
 * matches its source text, which is what the memo is keyed by */
int manifest_check(struct kx_arena *a, struct kx_json *root, struct kx_manifest *ret,
		   struct kx_problems *problems, unsigned flags)
{
	struct ctx c = { .pr = problems };
	struct kx_manifest m = { .root = root, .line = root->line };
	const struct kx_json *sigs = NULL;
	m.facts.metric = "latency";
	if (root->type != KX_JSON_OBJECT) {
		add(&c, root, "", "type", "a manifest must be a JSON object with run, protocol and environment, found %s",
		    kx_json_type_name(root->type));
		return c.oom ? -ENOMEM : -EINVAL;
	}
	for (size_t i = 0; i < root->obj.len; i++) {
		struct kx_json_member *mm = &root->obj.v[i];
		int d = -1;
		for (int k = 0; k < KX_DOC__COUNT; k++)
			if (strlen(members[k]) == mm->key_len && memcmp(members[k], mm->key, mm->key_len) == 0)
				d = k;
		if (mm->key_len == strlen(KX_SIGNATURES_MEMBER) &&
		    memcmp(mm->key, KX_SIGNATURES_MEMBER, mm->key_len) == 0) {
			sigs = mm->value; /* checked once the run's digest is known */
			continue;
		}
		if (d < 0 || mm->value->type != KX_JSON_OBJECT) {
			char q[KX_QUOTE_SIZE], *ptr = pointer("", mm->key, mm->key_len);
			if (d < 0)
				add(&c, mm->value, ptr, "unknown-member",
				    "unknown member %s: a manifest holds run, protocol, environment, workload, "
				    "implementation, signatures",
				    kx_quote(q, mm->key, mm->key_len));
			else
				add(&c, mm->value, ptr, "type", "'%s' must be an object (%s %s document), found %s",
				    members[d], article(kinds[d]), kinds[d], kx_json_type_name(mm->value->type));
			free(ptr);
			continue;
		}
		if (!m.doc[d])
			m.doc[d] = mm->value;
	}
	for (int d = 0; d <= KX_DOC_ENVIRONMENT; d++)
		if (!kx_json_get(root, members[d]))
			add(&c, root, "", "required", "the manifest has no '%s' member (%s %s document)", members[d],
			    article(kinds[d]), kinds[d]);

	struct kx_json *spec[KX_DOC__COUNT] = { 0 };
	for (int d = 0; d < KX_DOC__COUNT; d++)
		if (m.doc[d])
			spec[d] = check_envelope(&c, m.doc[d], (enum kx_doc)d);
	/* the protocol first: it says what the run's primary value is */
	if (spec[KX_DOC_PROTOCOL])
		check_protocol(&c, spec[KX_DOC_PROTOCOL], &m.facts);
	if (spec[KX_DOC_ENVIRONMENT])
		check_environment(&c, spec[KX_DOC_ENVIRONMENT]);
	if (spec[KX_DOC_WORKLOAD])
		check_workload(&c, spec[KX_DOC_WORKLOAD]);
	if (spec[KX_DOC_IMPLEMENTATION])
		check_implementation(&c, spec[KX_DOC_IMPLEMENTATION]);
	if (spec[KX_DOC_RUN])
		check_run(&c, spec[KX_DOC_RUN], &m);

	/* digests: each included document must hash to what the run references */
	struct kx_buf jcs;
	kx_buf_init(&jcs, 0);
	bool hashed[KX_DOC__COUNT] = { false };
	for (int d = 0; d < KX_DOC__COUNT; d++) {
		if (!m.doc[d])
			continue;
		const char *bytes;
		size_t len;
		if (!(flags & CHECK_MEMO) || memo_find(m.doc[d], &m.digest[d], &bytes, &len) < 0) {
			kx_buf_reset(&jcs);
			if (kx_digest_document_jcs(m.doc[d], &m.digest[d], &jcs) < 0)
				continue; /* duplicate keys or non-finite numbers: the linter said so */
			bytes = jcs.ptr;
			len = jcs.len;
			if (flags & CHECK_MEMO)
				memo_add(m.doc[d], &m.digest[d], bytes, len);
		}
		hashed[d] = true;
		/* kept for the store: the document is serialized once, here */
		m.jcs[d] = a ? kx_arena_strndup(a, bytes, len) : NULL;
		m.jcs_len[d] = len;
		if (a && !m.jcs[d])
			c.oom = 1;
	}
	kx_buf_release(&jcs);
	if (spec[KX_DOC_RUN]) {
		for (int d = KX_DOC_PROTOCOL; d < KX_DOC__COUNT; d++) {
			struct kx_digest ref;
			bool ok;
			check_digest_ref(&c, spec[KX_DOC_RUN], "/run/spec", ref_fields[d], &ref, &ok);
			if (!ok)
				continue;
			if (!m.doc[d]) {
				m.digest[d] = ref;
				continue;
			}
			/* a document that cannot be hashed (duplicate keys …) is already reported */
			if (hashed[d] && !kx_digest_equal(&ref, &m.digest[d])) {
				char want[KX_DIGEST_STR_MAX], got[KX_DIGEST_STR_MAX], ptr[64];
				kx_digest_format(&ref, want);
				kx_digest_format(&m.digest[d], got);
				snprintf(ptr, sizeof(ptr), "/run/spec/%s", ref_fields[d]);
				add(&c, kx_json_get(spec[KX_DOC_RUN], ref_fields[d]), ptr, "digest-mismatch",
				    "the included %s hashes to %s, not to the referenced %s", members[d], got, want);
			}
		}
	}
	if (sigs)
		check_signatures(&c, a, sigs, hashed[KX_DOC_RUN] ? &m.digest[KX_DOC_RUN] : NULL, &m,
				 flags & CHECK_DEFER_SIGNATURES);
	const char *metric = m.facts.metric;
	m.facts.order = strcmp(metric, "throughput") == 0 || strcmp(metric, "bandwidth") == 0
				? KX_ORDER_DESCENDING
				: KX_ORDER_ASCENDING;
	if (c.oom)
		return -ENOMEM;
	if (c.count)
		return -EINVAL;
	*ret = m;
	return 0;
}

/* ---- attestations (SPEC §8) ------------------------------------------------------------------- */

const char *kx_attestation_type_name(enum kx_attestation_type type)
{
	return type == KX_ATTEST_REPRODUCTION ? "reproduction" : "note";
}

/* The first control character of s (C0 but those `allowed`, DEL, C1), as its byte offset, or -1. */
static ssize_t control_at(const char *s, size_t n, const char *allowed)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if ((ch < 0x20 && !strchr(allowed, ch)) || ch == 0x7f ||
		    (ch == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0x9f))
			return (ssize_t)i;
	}
	return -1;
}

/* A text member of an attestation's spec: at most `max` bytes, no control character but `allowed`. */
static const char *att_text(struct ctx *c, const struct kx_json *spec, const char *key, bool required, size_t max,
			    const char *allowed)
{
	const char *s = string_field(c, spec, "/spec", key, required);
	if (!s)
		return NULL;
	const struct kx_json *v = kx_json_get(spec, key);
	char ptr[64];
	snprintf(ptr, sizeof(ptr), "/spec/%s", key);
	ssize_t at = control_at(s, v->str.len, allowed);
	if (v->str.len > max) {
		add(c, v, ptr, "length", "%s is %zu bytes, over the limit of %zu", key, v->str.len, max);
		return NULL;
	}
	if (at >= 0) {
		unsigned ch = (unsigned char)s[at] == 0xc2 ? (unsigned char)s[at + 1] : (unsigned char)s[at];
		add(c, v, ptr, "control", "%s holds the control character U+%04X at byte %zd%s", key, ch, at,
		    *allowed ? " (only line feeds and tabs are allowed)" : "");
		return NULL;
	}
	return s;
}

static const char *const att_members[] = { "subject", "type", "run", "text", "author", "createdAt" };

/* Each member of obj (at base) not among known[0..n) is a problem, rule unknown-member: "holds". */
static void only_members(struct ctx *c, const struct kx_json *obj, const char *base, const char *const *known,
			 size_t n, const char *holds)
{
	char q[KX_QUOTE_SIZE];
	for (size_t i = 0; i < obj->obj.len; i++) {
		const struct kx_json_member *mm = &obj->obj.v[i];
		bool ok = false;
		for (size_t k = 0; k < n; k++)
			ok |= strlen(known[k]) == mm->key_len && memcmp(known[k], mm->key, mm->key_len) == 0;
		if (!ok) {
			char *ptr = pointer(base, mm->key, mm->key_len);
			add(c, mm->value, ptr, "unknown-member", "unknown member %s: %s", kx_quote(q, mm->key, mm->key_len),
			    holds);
			free(ptr);
		}
	}
}

/*
 * An attestation document (root), alone: its envelope, its spec's members and their rules. What
 * only the store can tell is left to ingest (src/ingest).
 */
int manifest_check_attestation(struct kx_arena *a, struct kx_json *root, struct kx_manifest *ret,
			       struct kx_problems *problems)
{
	struct ctx c = { .pr = problems };
	struct kx_attestation *x = a ? kx_arena_alloc(a, sizeof(*x)) : NULL;
	if (!x)
		return -ENOMEM;
	memset(x, 0, sizeof(*x));
	char q[KX_QUOTE_SIZE];
	const char *api = string_field(&c, root, "", "apiVersion", true);
	if (api && strcmp(api, KX_ATTESTATION_API) != 0)
		add(&c, kx_json_get(root, "apiVersion"), "/apiVersion", "api-version",
		    "an Attestation's apiVersion must be '%s', found %s", KX_ATTESTATION_API, Q(q, api));
	check_metadata(&c, root, "");
	static const char *const top[] = { "apiVersion", "kind", "metadata", "spec" };
	only_members(&c, root, "", top, KX_ARRAY_SIZE(top), "an Attestation holds apiVersion, kind, metadata, spec");
	struct kx_json *spec = field(&c, root, "", "spec", KX_JSON_OBJECT, true);
	if (!spec)
		return c.oom ? -ENOMEM : -EINVAL;
	only_members(&c, spec, "/spec", att_members, KX_ARRAY_SIZE(att_members),
		     "an Attestation's spec holds subject, type, run, text, author, createdAt");
	bool subject_ok, run_ok = false;
	check_digest_ref(&c, spec, "/spec", "subject", &x->subject, &subject_ok);
	const char *type = string_field(&c, spec, "/spec", "type", true);
	bool note = type && strcmp(type, "note") == 0, repro = type && strcmp(type, "reproduction") == 0;
	if (type && !note && !repro)
		add(&c, kx_json_get(spec, "type"), "/spec/type", "enum",
		    "type must be 'reproduction' or 'note', found %s", Q(q, type));
	x->type = repro ? KX_ATTEST_REPRODUCTION : KX_ATTEST_NOTE;
	const struct kx_json *run = kx_json_get(spec, "run");
	if (repro) {
		check_digest_ref(&c, spec, "/spec", "run", &x->run, &run_ok);
		if (run_ok && subject_ok && kx_digest_equal(&x->run, &x->subject))
			add(&c, run, "/spec/run", "reproduction", "a run cannot reproduce itself: run is the subject");
	} else if (note && run) {
		add(&c, run, "/spec/run", "unknown-member", "a note names no run (a reproduction does)");
	}
	x->text = att_text(&c, spec, "text", note, KX_NOTE_TEXT_MAX, "\n\t");
	x->author = att_text(&c, spec, "author", true, KX_AUTHOR_TEXT_MAX, "");
	struct kx_json *at = field(&c, spec, "/spec", "createdAt", KX_JSON_STRING, true);
	if (at && kx_time_parse(at->str.ptr, &x->created_ns) < 0)
		add(&c, at, "/spec/createdAt", "timestamp",
		    "%s is not an RFC 3339 date-time with a zone between 1677 and 2262 (e.g. 2024-11-22T17:44:03.000Z)",
		    kx_quote(q, at->str.ptr, at->str.len));
	else if (at && x->created_ns > kx_now_ns() + KX_FUTURE_SLACK_NS)
		add(&c, at, "/spec/createdAt", "future",
		    "%s is more than a day after now: an attestation cannot be made in the future (check the clock "
		    "and the zone)", kx_quote(q, at->str.ptr, at->str.len));
	if (c.oom)
		return -ENOMEM;
	if (c.count)
		return -EINVAL;
	struct kx_buf jcs;
	kx_buf_init(&jcs, 0);
	int r = kx_digest_document_jcs(root, &x->digest, &jcs);
	if (r == 0 && !(x->jcs = kx_arena_strndup(a, jcs.ptr, jcs.len)))
		r = -ENOMEM;
	x->jcs_len = jcs.len;
	kx_buf_release(&jcs);
	if (r < 0)
		return r == -ENOMEM ? r : -EINVAL; /* the linter reported what cannot be hashed */
	*ret = (struct kx_manifest){ .line = root->line, .root = root, .att = x };
	return 0;
}
