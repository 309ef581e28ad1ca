// SPDX-License-Identifier: MIT
/*
 * kindex-bench: the command line. `--list` says what can be run; `--run` checks each chosen
 * implementation against its fp32 reference, times it under the published protocol and emits one
 * manifest per implementation; `--selftest` does the same on the CPU, so the whole host pipeline
 * runs on machines without a GPU; `--record` turns samples timed by another harness (the PyTorch
 * baseline of bench/gpu-check) into a manifest with this machine's environment.
 *
 * Exit status: 0 every run passed; 1 a run failed its correctness check (its manifest is still
 * written); 2 usage; 3 no CUDA device; 4 any other error. Errors go to stderr, lowercase, saying
 * what failed first; progress goes to stderr when it is a terminal.
 */
#include "bench.h"

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef KX_BENCH_CUDA_ARCHS
#define KX_BENCH_CUDA_ARCHS ""
#endif

enum { EXIT_RUN_FAILED = 1, EXIT_USAGE = 2, EXIT_NO_DEVICE = 3, EXIT_ERROR = 4 };

#define MAX_PARAMS 32
#define MAX_CASES 64

struct options {
	enum { MODE_NONE, MODE_LIST, MODE_RUN, MODE_SELFTEST, MODE_RECORD } mode;
	const char *workloads;
	const char *impls;
	const char *params[MAX_PARAMS];
	size_t nparams;
	const char *output, *inbox, *spool, *samples_dir;
	const char *attach[KX_BENCH_ARTIFACTS_MAX - 1]; /* --attach: samples.tsv takes the last place */
	size_t nattach;
	const char *artifacts_dir; /* --artifacts-dir: where artifact bytes go instead */
	const char *key; /* --key: the private key every manifest is signed with */
	bool jsonl, quiet;
	enum kx_bench_protocol_kind protocol;
	int device;
	double warmup, min_time, noise, timeout; /* NaN: protocol default */
	double min_samples, max_samples;
	bool seed_set;
	uint64_t seed;
	const char *samples_file, *impl_project, *impl_version, *correctness_file;
	const char *environment; /* --record: "cuda" or "cpu" */
	uint64_t memory;
};

struct session {
	const struct options *o;
	struct kx_arena *arena; /* protocol and environment documents */
	struct kx_bench_protocol protocol;
	struct kx_json *protocol_doc, *env_doc;
	char gpu_slug[KX_NAME_MAX]; /* the index's slug of the environment: metadata names */
	struct kx_bench_sink sink;
	struct kx_gpu *gpu;
	struct kx_gpu_info gpu_info;
	struct kx_nvml *nvml;
	struct kx_signer *key; /* --key */
	const struct kx_bench_peak *peak; /* the device's datasheet peak; NULL when not in the table */
	bool tty;
	size_t failed;
	struct kx_bench_artifact *attached; /* --attach, hashed before the first run */
	size_t nattached;
	bool artifacts_noted; /* "announced but not written" said */
	uint64_t cpu_llc_bytes; /* the CPU selftest's flush size */
};

static void KX_PRINTF(1, 2) fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("kindex-bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void usage(FILE *f)
{
	fputs("usage: kindex-bench --list\n"
	      "       kindex-bench --run WORKLOAD[,WORKLOAD...] [--impl NAME[,NAME...]] [--param K=V]...\n"
	      "                    [--protocol kindex|do_bench] [output] [protocol options]\n"
	      "       kindex-bench --selftest [--impl NAME] [--param K=V]... [output] [protocol options]\n"
	      "       kindex-bench --record WORKLOAD --impl NAME --samples FILE [--impl-project P]\n"
	      "                    [--impl-version V] [--correctness FILE] [--memory BYTES]\n"
	      "                    [--environment cuda|cpu] [--protocol kindex|do_bench] [output]\n"
	      "\n"
	      "Measure GPU kernels under a published protocol, check them against an fp32 reference\n"
	      "and emit KernelIndex manifests that `kindex ingest` and a kindexfs inbox accept.\n"
	      "\n"
	      "modes:\n"
	      "  --list                 workloads, their parameters and implementations\n"
	      "  --run WORKLOADS        check and time on the CUDA device ('all' for every workload)\n"
	      "  --selftest             the same pipeline on the CPU (cross_entropy/forward, small)\n"
	      "  --record WORKLOAD      a manifest from samples timed elsewhere (ns, one per line)\n"
	      "\n"
	      "selection:\n"
	      "  --impl NAME[,NAME...]  only these implementations (default: all of the workload)\n"
	      "  --param K=V            a workload parameter, e.g. --param tokens=8192 (repeatable)\n"
	      "  --device N             CUDA device ordinal (default 0)\n"
	      "  --seed N               seed of the generated inputs\n"
	      "\n"
	      "output (default: standard output; several manifests are written as JSON Lines):\n"
	      "  -o, --output FILE      write to FILE atomically, again after every run (FILE.tmp.PID,\n"
	      "                         then renamed): an error in a later run keeps the earlier ones\n"
	      "  --inbox DIR            one file per manifest into a kindexfs inbox (.NAME.tmp, renamed)\n"
	      "  --spool DIR            one file per manifest into a maildir spool (tmp/, then new/)\n"
	      "  --jsonl                JSON Lines even for a single manifest\n"
	      "  --samples-dir DIR      also write each run's raw samples as DIR/NAME.samples\n"
	      "  --attach FILE          announce FILE as an artifact of every run and deliver its bytes\n"
	      "                         with the manifests (repeatable); every timed run also carries\n"
	      "                         samples.tsv, its samples in ns, one per line\n"
	      "  --artifacts-dir DIR    write artifact bytes to DIR (default: artifacts/ beside FILE, in\n"
	      "                         the inbox or in the spool; standard output has no place for them)\n"
	      "  --key FILE             sign every run with this Ed25519 private key (kindex keygen):\n"
	      "                         a store that trusts its public key shows the runs as measured\n"
	      "  -q, --quiet            no progress and no summaries on stderr\n"
	      "\n"
	      "protocol (each changes the published protocol document and so its digest):\n"
	      "  --protocol P           kindex (default) or do_bench (triton.testing.do_bench)\n"
	      "  --warmup S             warmup seconds (0.1)\n"
	      "  --min-samples N        minimum samples (10)\n"
	      "  --min-time S           minimum measured seconds (0.5)\n"
	      "  --noise X              stop when stdev/mean <= X (0.005)\n"
	      "  --timeout S            stop after S seconds once the minimums hold (15)\n"
	      "  --max-samples N        hard cap (100000)\n"
	      "\n"
	      "record:\n"
	      "  --samples FILE         latencies in ns, one integer per line, in measured order\n"
	      "  --impl-project P, --impl-version V   the Implementation document's project/version\n"
	      "  --correctness FILE     a JSON object {\"status\": \"passed\"|\"failed\", ...}\n"
	      "  --memory BYTES         peak memory measured by the other harness\n"
	      "  --environment E        cuda (the device, default) or cpu\n"
	      "\n"
	      "exit status: 0 all passed, 1 a run failed its correctness check (still emitted),\n"
	      "2 usage, 3 no CUDA device, 4 other errors. See kindex-bench(1) and docs/harness.md.\n",
	      f);
}

/* ---- human-readable numbers ------------------------------------------------------------------- */

static const char *fmt_ns(double ns, char *buf, size_t len)
{
	if (ns < 1e3)
		snprintf(buf, len, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.3f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, len, "%.3f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.3f s", ns / 1e9);
	return buf;
}

static const char *fmt_bytes(double b, char *buf, size_t len)
{
	if (b >= 1024.0 * 1024 * 1024)
		snprintf(buf, len, "%.2f GiB", b / (1024.0 * 1024 * 1024));
	else
		snprintf(buf, len, "%.1f MiB", b / (1024.0 * 1024));
	return buf;
}

/* ---- listing ------------------------------------------------------------------------------------ */

static void list_workload(const struct kx_bench_workload *w, const char *heading)
{
	printf("%s%s  (%s)\n  parameters:", heading, w->benchmark, w->title);
	for (size_t i = 0; i < w->nparams; i++) {
		char num[KX_JCS_NUMBER_MAX];
		if (w->params[i].type != KX_PARAM_STRING)
			kx_jcs_number(w->params[i].def, num);
		printf(" %s=%s", w->params[i].name,
		       w->params[i].type == KX_PARAM_STRING ? w->params[i].def_str : num);
	}
	printf("%s%s\n  inputs: %s\n", w->dtype ? "  dtype=" : "", w->dtype ? w->dtype : "", w->inputs);
	for (size_t i = 0; i < w->nimpls; i++)
		printf("  %-22s %s\n", w->impls[i].name, w->impls[i].summary);
	printf("\n");
}

static int do_list(void)
{
	printf("kindex-bench %s: workloads (--run), parameters (--param) and implementations (--impl)\n\n",
	       KX_VERSION);
	for (size_t i = 0; i < bench_nworkloads; i++)
		list_workload(&bench_workloads[i], "");
	list_workload(&bench_selftest_workload, "--selftest (CPU): ");
	printf("protocols (--protocol): kindex (default; family kindex_bench), do_bench (family "
	       "triton_do_bench)\n");
	if (KX_BENCH_CUDA_ARCHS[0])
		printf("this build: CUDA kernels for %s\n", KX_BENCH_CUDA_ARCHS);
	else
		printf("this build: no CUDA (--run reports no CUDA device; --selftest works)\n");
	return 0;
}

/* ---- building the plan ------------------------------------------------------------------------- */

static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

/* Every name of a comma list must be known: returns the first unknown one (or NULL). */
static const char *unknown_impl(const char *list, const struct kx_bench_workload *const *ws,
				size_t nw, char *buf, size_t len)
{
	for (const char *p = list; p && *p;) {
		size_t l = strcspn(p, ",");
		snprintf(buf, len, "%.*s", (int)l, p);
		bool known = false;
		for (size_t i = 0; i < nw && !known; i++)
			known = bench_impl_find(ws[i], buf) != NULL;
		if (!known)
			return buf;
		p += l + (p[l] == ',');
	}
	return NULL;
}

static int apply_params(const struct options *o, struct kx_bench_case *cases, size_t ncases)
{
	for (size_t j = 0; j < o->nparams; j++) {
		const char *eq = strchr(o->params[j], '=');
		if (!eq || eq == o->params[j]) {
			fail("invalid --param '%s': expected NAME=VALUE", o->params[j]);
			return -EINVAL;
		}
		char key[64];
		snprintf(key, sizeof(key), "%.*s", (int)(eq - o->params[j]), o->params[j]);
		bool used = false;
		for (size_t i = 0; i < ncases; i++) {
			char err[256];
			int r = bench_case_set(&cases[i], key, eq + 1, err, sizeof(err));
			if (r == -EINVAL) {
				fail("%s", err);
				return r;
			}
			used |= r == 0;
		}
		if (!used) {
			fail("unknown parameter '%s' for %s (see --list)", key,
			     ncases ? cases[0].w->benchmark : "this workload");
			return -EINVAL;
		}
	}
	if (o->seed_set)
		for (size_t i = 0; i < ncases; i++)
			cases[i].seed = o->seed;
	return 0;
}

static int plan(const struct options *o, const struct kx_bench_workload *const *ws, size_t nw,
		struct kx_bench_case *cases, size_t *ret_n)
{
	char buf[128];
	const char *bad = o->impls ? unknown_impl(o->impls, ws, nw, buf, sizeof(buf)) : NULL;
	if (bad) {
		fail("unknown implementation '%s' (see --list)", bad);
		return -EINVAL;
	}
	size_t n = 0;
	for (size_t i = 0; i < nw; i++) {
		bool any = false;
		for (size_t j = 0; j < ws[i]->nimpls; j++) {
			if (o->impls && !in_list(o->impls, ws[i]->impls[j].name))
				continue;
			if (n == MAX_CASES) {
				fail("too many runs at once (at most %d)", MAX_CASES);
				return -E2BIG;
			}
			bench_case_init(&cases[n++], ws[i], &ws[i]->impls[j]);
			any = true;
		}
		if (!any) {
			fail("no implementation of %s among '%s' (see --list)", ws[i]->benchmark, o->impls);
			return -EINVAL;
		}
	}
	*ret_n = n;
	return apply_params(o, cases, n);
}

static int parse_workloads(const char *list, const struct kx_bench_workload **ws, size_t *ret_n)
{
	size_t n = 0;
	if (strcmp(list, "all") == 0) {
		for (size_t i = 0; i < bench_nworkloads; i++)
			ws[n++] = &bench_workloads[i];
		*ret_n = n;
		return 0;
	}
	for (const char *p = list; *p;) {
		size_t l = strcspn(p, ",");
		char name[128];
		snprintf(name, sizeof(name), "%.*s", (int)l, p);
		const struct kx_bench_workload *w = bench_workload_find(name);
		if (!w) {
			fail("unknown workload '%s' (see --list)", name);
			return -EINVAL;
		}
		bool dup = false;
		for (size_t i = 0; i < n; i++)
			dup |= ws[i] == w;
		if (!dup && n < bench_nworkloads)
			ws[n++] = w;
		p += l + (p[l] == ',');
	}
	if (!n) {
		fail("no workload named");
		return -EINVAL;
	}
	*ret_n = n;
	return 0;
}

/* ---- one run ------------------------------------------------------------------------------------ */

struct run_ctx {
	struct session *S;
	void *inner_ctx;
	struct kx_bench_ops inner;
	const char *label;
	size_t idx, total;
	double last_progress;
};

static int w_time_calls(void *ctx, size_t n, bool blocking, uint64_t *ret_ns, double *ret_mhz)
{
	struct run_ctx *r = ctx;
	return r->inner.time_calls(r->inner_ctx, n, blocking, ret_ns, ret_mhz);
}

static int w_time_span(void *ctx, size_t n, uint64_t *ret_ns)
{
	struct run_ctx *r = ctx;
	return r->inner.time_span(r->inner_ctx, n, ret_ns);
}

static int w_warm(void *ctx, size_t n)
{
	struct run_ctx *r = ctx;
	return r->inner.warm(r->inner_ctx, n);
}

/* NVML's clock event reasons, for the record; each sample's clock comes with the sample */
static int w_clock(void *ctx, struct kx_bench_clock *ret)
{
	struct run_ctx *r = ctx;
	return bench_nvml_poll(r->S->nvml, ret);
}

static double w_now(void *ctx)
{
	(void)ctx;
	return kx_monotonic();
}

static void on_progress(void *arg, const struct kx_bench_samples *s, double noise, double elapsed)
{
	struct run_ctx *r = arg;
	double now = kx_monotonic();
	if (!r->S->tty || now - r->last_progress < 0.2)
		return;
	r->last_progress = now;
	if (isfinite(noise))
		fprintf(stderr, "\r\033[K[%zu/%zu] %s: %zu samples, noise %.2f%%, %.1f s", r->idx,
			r->total, r->label, s->n, noise * 100, elapsed);
	else
		fprintf(stderr, "\r\033[K[%zu/%zu] %s: %zu samples, %.1f s", r->idx, r->total,
			r->label, s->n, elapsed);
}

static void status_line(struct session *S, const char *fmt, ...) KX_PRINTF(2, 3);
static void status_line(struct session *S, const char *fmt, ...)
{
	if (!S->tty)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("\r\033[K", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static void summary(struct session *S, const struct kx_bench_result *res, const char *label)
{
	if (S->o->quiet)
		return;
	if (S->tty)
		fputs("\r\033[K", stderr);
	if (res->message) {
		fprintf(stderr, "%s: failed: %s\n", label, res->message);
		return;
	}
	struct kx_bench_stats st;
	if (!res->samples || bench_stats_compute(res->samples->ns, res->samples->n, &st) < 0) {
		fprintf(stderr, "%s: passed\n", label);
		return;
	}
	char a[32], b[32], c[32], m[32];
	fprintf(stderr, "%s: median %s (p20 %s, p80 %s), %zu samples (%s", label,
		fmt_ns(st.median, a, sizeof(a)), fmt_ns(st.p20, b, sizeof(b)),
		fmt_ns(st.p80, c, sizeof(c)), st.n, bench_stop_name(res->samples->stop));
	if (res->samples->n_throttled)
		fprintf(stderr, ", %zu throttled", res->samples->n_throttled);
	fprintf(stderr, ")");
	double flops = bench_case_flops(res->c), bytes = bench_case_bytes(res->c);
	struct kx_bench_figures f;
	bench_figures_of(flops, bytes, st.median, res->peak, &f);
	if (flops > 0)
		fprintf(stderr, ", %.1f TFLOP/s", f.tflops);
	if (flops > 0 && res->peak)
		fprintf(stderr, " (%.1f%% of peak)", 100 * f.compute_fraction);
	if (bytes > 0)
		fprintf(stderr, ", %.4g GB/s", f.gbps);
	if (bytes > 0 && res->peak)
		fprintf(stderr, " (%.1f%% of peak)", 100 * f.bandwidth_fraction);
	if (res->peak_bytes)
		fprintf(stderr, ", peak %s", fmt_bytes((double)res->peak_bytes, m, sizeof(m)));
	fprintf(stderr, ", correctness %s\n",
		res->correctness ? "as recorded" : res->check ? "passed" : "not checked");
}

static int write_samples(struct session *S, const struct kx_bench_samples *s, const char *name)
{
	struct kx_buf b;
	kx_buf_init(&b, 0);
	char *path = NULL, err[512];
	size_t stem = strlen(name) - (strlen(name) > 5 ? 5 : 0); /* drop ".json" */
	int r = bench_samples_text(s->ns, s->n, &b);
	if (r >= 0 && !(path = kx_arena_printf(S->arena, "%s/%.*s.samples", S->o->samples_dir,
					       (int)stem, name)))
		r = -ENOMEM;
	if (r >= 0 && (r = bench_write_file(path, &b, err, sizeof(err))) < 0)
		fail("%s", err);
	kx_buf_release(&b);
	return r;
}

/*
 * The bytes of every artifact the manifest announces, where the sink keeps them, before the
 * manifest itself: samples.tsv from the samples, an attached file copied as it is. With no place
 * for them (standard output without --artifacts-dir) they stay announced only, and stderr says so
 * once.
 */
static int deliver_artifacts(struct session *S, const struct kx_bench_result *res,
			     const struct kx_json *m)
{
	const struct kx_json *arts = kx_json_pointer(m, "/run/spec/artifacts");
	if (!arts || !arts->arr.len)
		return 0;
	if (!S->sink.artifacts_dir) {
		if (!S->artifacts_noted)
			fail("artifacts announced but not written (no --artifacts-dir with standard output)");
		S->artifacts_noted = true;
		return 0;
	}
	for (size_t i = 0; i < arts->arr.len; i++) {
		const char *name = kx_json_get_string(arts->arr.v[i], "name");
		struct kx_bench_artifact samples;
		const struct kx_bench_artifact *art = NULL;
		struct kx_buf b;
		kx_buf_init(&b, 0);
		int r = 0;
		if (name && strcmp(name, KX_BENCH_SAMPLES_ARTIFACT) == 0 && res->samples && res->samples->n) {
			const struct kx_bench_samples *s = res->samples;
			if ((r = bench_samples_artifact(s->ns, s->n, &samples)) == 0 &&
			    (r = bench_samples_text(s->ns, s->n, &b)) == 0)
				art = &samples;
		}
		for (size_t j = 0; !art && r == 0 && name && j < S->nattached; j++)
			if (strcmp(S->attached[j].name, name) == 0)
				art = &S->attached[j];
		char err[1024], *path = NULL;
		bool written;
		if (r == 0 && !art)
			r = -EINVAL; /* announced but not ours: cannot happen */
		if (r < 0)
			fail("cannot write the artifact '%s': %s", name ? name : "?", strerror(-r));
		else if ((r = bench_sink_put_artifact(&S->sink, art, art == &samples ? &b : NULL, &path,
						      &written, err, sizeof(err))) < 0)
			fail("%s", err);
		free(path);
		kx_buf_release(&b);
		if (r < 0)
			return r;
	}
	return 0;
}

static int emit(struct session *S, struct kx_arena *a, const struct kx_bench_result *res,
		const char *project, const char *version)
{
	struct kx_json *m = NULL;
	int r = bench_manifest(a, res, S->protocol_doc, S->env_doc,
			       bench_workload_document(a, res->c),
			       bench_implementation_document(a, res->c->impl->name, project, version),
			       &m);
	if (r == 0 && S->key && (r = kx_manifest_sign(a, m, S->key)) < 0) {
		fail("cannot sign the manifest: %s", strerror(-r));
		return r;
	}
	if (r < 0) {
		fail("cannot build the manifest: %s", strerror(-r));
		return r;
	}
	char name[256], err[512];
	if ((r = bench_manifest_filename(m, name, sizeof(name))) < 0) {
		fail("cannot name the manifest: %s", strerror(-r));
		return r;
	}
	if ((r = deliver_artifacts(S, res, m)) < 0)
		return r;
	char *path = NULL;
	if ((r = bench_sink_write(&S->sink, m, name, &path, err, sizeof(err))) < 0) {
		fail("%s", err);
		return r;
	}
	if (!S->o->quiet && (S->sink.kind == KX_SINK_INBOX || S->sink.kind == KX_SINK_SPOOL))
		fprintf(stderr, "wrote %s\n", path);
	free(path);
	if (S->o->samples_dir && res->samples && res->samples->n)
		return write_samples(S, res->samples, name);
	return 0;
}

static int set_tunable(void *ctx, int64_t value)
{
	return bench_gpu_case_set_tunable(ctx, value);
}

/*
 * The value of the case's tunable parameter (kindex-chunked: its chunk width), chosen by timing
 * each candidate (bench_tune) before the check, so the value checked is the one timed. On an
 * error ret->parameter still names what was being chosen.
 */
static int tune(struct session *S, struct kx_gpu_case *gc, const struct kx_bench_ops *ops,
		struct run_ctx *rc, struct kx_bench_tuning *ret)
{
	struct kx_bench_tunable t;
	bench_gpu_case_tunable(gc, &t);
	memset(ret, 0, sizeof(*ret));
	if (!t.n)
		return 0;
	status_line(S, "[%zu/%zu] %s: choosing %s by measurement", rc->idx, rc->total, rc->label,
		    t.name);
	int r = bench_tune(&t, set_tunable, gc, ops, rc, KX_BENCH_TUNE_CALLS, ret);
	if (r < 0) {
		ret->parameter = t.name;
		return r;
	}
	if (!S->o->quiet) {
		if (S->tty)
			fputs("\r\033[K", stderr);
		fprintf(stderr, "%s: %s %lld chosen by measurement (median of %zu calls:", rc->label,
			ret->parameter, (long long)ret->values[ret->chosen], ret->calls);
		for (size_t i = 0; i < ret->n; i++) {
			char b[32];
			fprintf(stderr, "%s %lld: %s", i ? "," : "", (long long)ret->values[i],
				fmt_ns((double)ret->median_ns[i], b, sizeof(b)));
		}
		fprintf(stderr, ")\n");
	}
	return 0;
}

/* Check, then time, then emit; a failed check is emitted too. Returns <0 only for errors that
 * should stop the whole session. */
static int run_case(struct session *S, struct kx_bench_case *c, size_t idx, size_t total, bool gpu)
{
	struct kx_arena *a = kx_arena_new();
	if (!a)
		return -ENOMEM;
	char label[160];
	snprintf(label, sizeof(label), "%s %s", c->w->benchmark, c->impl->name);
	struct kx_bench_shape shape;
	bench_case_shape(c, &shape);
	struct kx_bench_policy policy;
	if (bench_policy_for(c->w->compute_dtype, &policy) < 0) {
		fail("cannot check %s: no tolerance for dtype '%s'", label, c->w->compute_dtype);
		kx_arena_free(a);
		return -EINVAL;
	}
	struct kx_bench_result res = {
		.c = c,
		.observed_ns = kx_now_ns(),
		.clock_source = gpu ? (S->nvml ? "per-sample sm0 clock64/globaltimer; nvml reasons"
					       : "per-sample sm0 clock64/globaltimer")
				    : "none",
		.gpu_slug = S->gpu_slug,
		.peak = gpu ? S->peak : NULL,
		.attached = S->attached,
		.nattached = S->nattached,
	};
	struct kx_bench_check check;
	struct kx_bench_tuning tuning;
	struct kx_bench_samples samples = { 0 };
	struct kx_gpu_case *gc = NULL;
	struct kx_cpu_case *cc = NULL;
	char err[512] = "";
	int r;

	/* tests only: make case N (1-based) fail as an error would, to test what survives it */
	const char *inject = getenv("KX_BENCH_TEST_FAIL_CASE");
	uint64_t inject_idx;
	if (inject && kx_parse_uint(inject, 1, SIZE_MAX, &inject_idx) == 0 && inject_idx == idx) {
		fail("cannot prepare %s: failure injected by KX_BENCH_TEST_FAIL_CASE=%s", label, inject);
		r = -EIO;
		goto out;
	}
	status_line(S, "[%zu/%zu] %s: preparing inputs and checking correctness", idx, total, label);
	if (gpu) {
		r = bench_gpu_case_new(S->gpu, &shape, &gc, err, sizeof(err));
		res.flush_bytes = S->protocol.kind == KX_PROTOCOL_DO_BENCH ? S->protocol.db_flush_bytes
									   : S->gpu_info.l2_bytes;
	} else {
		res.flush_bytes = S->protocol.kind == KX_PROTOCOL_DO_BENCH ? S->protocol.db_flush_bytes
									   : S->cpu_llc_bytes;
		r = bench_cpu_case_new(&shape, res.flush_bytes, &cc, err, sizeof(err));
	}
	if (r == -ENOMEM || r == -E2BIG) {
		/* too big for this machine: an honest failed run, the others may still fit */
		res.message = kx_arena_printf(a, "cannot run: %s", err);
		goto emit;
	}
	if (r < 0) {
		fail("cannot prepare %s: %s", label, err);
		goto out;
	}
	struct run_ctx rc = { .S = S, .inner_ctx = gpu ? (void *)gc : (void *)cc, .label = label,
			      .idx = idx, .total = total };
	if (gpu)
		bench_gpu_case_ops(&rc.inner);
	else
		bench_cpu_case_ops(&rc.inner);
	struct kx_bench_ops ops = { w_time_calls, w_time_span, w_warm, gpu && S->nvml ? w_clock : NULL, w_now };
	if (gpu && (r = tune(S, gc, &ops, &rc, &tuning)) < 0) {
		fail("cannot choose %s of %s by measurement: %s", tuning.parameter, label,
		     bench_gpu_case_error(gc));
		goto out;
	}
	if (gpu && tuning.parameter)
		res.tuning = &tuning;
	/* the check runs the value chosen, the one then timed */
	if (gpu)
		r = bench_gpu_case_check(gc, &policy, &check, err, sizeof(err));
	else
		r = bench_cpu_case_check(cc, &policy, &check);
	if (r < 0) {
		fail("cannot check %s: %s", label, err[0] ? err : strerror(-r));
		goto out;
	}
	res.check = &check;
	res.peak_bytes = gpu ? bench_gpu_case_peak_bytes(gc) : bench_cpu_case_peak_bytes(cc);
	if (!check.passed) {
		res.message = check.message;
		goto emit;
	}
	struct kx_bench_progress prog = { on_progress, &rc };
	unsigned timeouts0 = gpu ? bench_gpu_blocker_timeouts(S->gpu) : 0;
	res.observed_ns = kx_now_ns();
	status_line(S, "[%zu/%zu] %s: warming up", idx, total, label);
	r = bench_measure(&S->protocol, &ops, &rc, &prog, &samples);
	if (r < 0) {
		fail("cannot time %s: %s", label,
		     gpu ? bench_gpu_case_error(gc) : strerror(-r));
		goto out;
	}
	res.samples = &samples;
	if (gpu)
		res.blocker_timeouts = bench_gpu_blocker_timeouts(S->gpu) - timeouts0;
emit:
	/* free the device memory before the next case allocates its own */
	bench_gpu_case_free(gc);
	gc = NULL;
	bench_cpu_case_free(cc);
	cc = NULL;
	summary(S, &res, label);
	if (res.message)
		S->failed++;
	r = emit(S, a, &res, NULL, NULL);
out:
	bench_gpu_case_free(gc);
	bench_cpu_case_free(cc);
	bench_samples_release(&samples);
	kx_arena_free(a);
	return r;
}

/* ---- sessions ------------------------------------------------------------------------------------ */

static int open_sink(struct session *S, size_t manifests)
{
	const struct options *o = S->o;
	char err[512];
	enum kx_bench_sink_kind kind = o->inbox ? KX_SINK_INBOX : o->spool ? KX_SINK_SPOOL
				     : o->output ? KX_SINK_FILE : KX_SINK_STDOUT;
	const char *path = o->inbox ? o->inbox : o->spool ? o->spool : o->output;
	int r = bench_sink_open(&S->sink, kind, path, o->jsonl || manifests > 1, err, sizeof(err));
	if (r < 0) {
		fail("%s", err);
		return r;
	}
	if ((r = bench_sink_artifacts(&S->sink, o->artifacts_dir)) < 0) {
		fail("out of memory");
		bench_sink_close(&S->sink);
	}
	return r;
}

/* After an error in `failed`: say what the earlier runs left behind, which stays. */
static void close_sink(struct session *S, const struct kx_bench_case *failed)
{
	const struct kx_bench_sink *k = &S->sink;
	size_t n = k->count;
	if (failed && k->kind == KX_SINK_FILE && n)
		fail("'%s' holds the %zu manifest%s completed before %s %s failed", k->path, n,
		     n == 1 ? "" : "s", failed->w->benchmark, failed->impl->name);
	else if (failed && k->kind == KX_SINK_FILE)
		fail("'%s' not written: no run completed before %s %s failed", k->path,
		     failed->w->benchmark, failed->impl->name);
	else if (failed && n)
		fail("the %zu manifest%s completed before %s %s failed %s in '%s'", n,
		     n == 1 ? "" : "s", failed->w->benchmark, failed->impl->name,
		     n == 1 ? "is" : "are", k->path);
	bench_sink_close(&S->sink);
}

static void protocol_overrides(const struct options *o, struct kx_bench_protocol *p)
{
	if (!isnan(o->warmup))
		p->warmup_s = o->warmup;
	if (!isnan(o->min_time))
		p->min_time_s = o->min_time;
	if (!isnan(o->noise))
		p->noise_target = o->noise;
	if (!isnan(o->timeout))
		p->timeout_s = o->timeout;
	if (!isnan(o->min_samples))
		p->min_samples = (size_t)o->min_samples;
	if (!isnan(o->max_samples))
		p->max_samples = (size_t)o->max_samples;
}

static int open_gpu(struct session *S)
{
	char err[512];
	int r = bench_gpu_open(S->o->device, &S->gpu, &S->gpu_info, err, sizeof(err));
	if (r < 0) {
		fail("no CUDA device: %s", err);
		return r;
	}
	struct kx_nvml_static nv = { 0 };
	if (S->gpu_info.pci_bus_id[0] &&
	    bench_nvml_open(S->gpu_info.pci_bus_id, &S->nvml, err, sizeof(err)) == 0)
		bench_nvml_static_info(S->nvml, &nv);
	else if (!S->o->quiet)
		fprintf(stderr, "kindex-bench: note: no NVML (%s); no clock event reasons recorded\n", err);
	S->peak = bench_peak_find(S->gpu_info.name);
	if (!S->peak && !S->o->quiet)
		fprintf(stderr, "kindex-bench: note: no datasheet peak for '%s': runs carry TFLOP/s and GB/s "
			"but no fraction of peak\n", S->gpu_info.name);
	S->env_doc = bench_gpu_environment(S->arena, &S->gpu_info, &nv);
	if (!S->env_doc)
		return -ENOMEM;
	return kx_rank_gpu_slug(kx_json_get(S->env_doc, "spec"), S->gpu_slug);
}

static void use_cpu(struct session *S)
{
	struct kx_bench_cpu_info ci;
	bench_cpu_capture(&ci);
	S->env_doc = bench_cpu_environment(S->arena, &ci);
	S->cpu_llc_bytes = ci.llc_bytes;
	if (S->env_doc)
		kx_rank_gpu_slug(kx_json_get(S->env_doc, "spec"), S->gpu_slug);
}

static int do_cases(struct session *S, struct kx_bench_case *cases, size_t n, bool gpu)
{
	const struct options *o = S->o;
	bench_protocol_init(&S->protocol, o->protocol,
			    gpu ? KX_TIMER_CUDA_EVENTS : KX_TIMER_CPU_MONOTONIC);
	protocol_overrides(o, &S->protocol);
	S->protocol_doc = bench_protocol_document(S->arena, &S->protocol);
	if (!S->protocol_doc)
		return -ENOMEM;
	if (gpu) {
		char err[512];
		size_t flush = S->protocol.kind == KX_PROTOCOL_DO_BENCH ? S->protocol.db_flush_bytes
									: S->gpu_info.l2_bytes;
		int r = bench_gpu_set_flush(S->gpu, flush, err, sizeof(err));
		if (r < 0) {
			fail("%s", err);
			return r;
		}
	}
	int r = open_sink(S, n);
	if (r < 0)
		return r;
	size_t i = 0;
	for (; i < n && r >= 0; i++)
		r = run_case(S, &cases[i], i + 1, n, gpu);
	close_sink(S, r < 0 ? &cases[i - 1] : NULL);
	return r;
}

/* ---- --record ---------------------------------------------------------------------------------- */

static int read_samples(const char *path, struct kx_bench_samples *s)
{
	struct kx_buf b;
	kx_buf_init(&b, 0);
	int r = kx_read_file(path, 256u << 20, &b);
	if (r < 0) {
		fail("cannot read '%s': %s", path, strerror(-r));
		return r;
	}
	size_t line = 0;
	for (char *p = b.ptr; p && *p;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		line++;
		char *q = p + strspn(p, " \t\r");
		if (*q) {
			/* blanks around the number are allowed, as other harnesses write them */
			size_t len = strcspn(q, " \t\r");
			bool more = q[len + strspn(q + len, " \t\r")] != '\0';
			q[len] = '\0';
			uint64_t v;
			if (more || kx_parse_uint(q, 0, UINT64_MAX, &v) < 0) {
				fail("cannot read '%s' line %zu: expected a latency in ns (an integer)",
				     path, line);
				r = -EINVAL;
				break;
			}
			if (s->n == s->cap) {
				size_t cap = s->cap ? 2 * s->cap : 1024;
				uint64_t *v2 = realloc(s->ns, cap * sizeof(*v2));
				if (!v2) {
					r = -ENOMEM;
					break;
				}
				s->ns = v2;
				s->cap = cap;
			}
			s->ns[s->n++] = v;
		}
		p = nl ? nl + 1 : NULL;
	}
	kx_buf_release(&b);
	if (r >= 0 && s->n == 0) {
		fail("'%s' holds no samples", path);
		r = -EINVAL;
	}
	s->stop = KX_STOP_RECORDED;
	return r;
}

static int read_correctness(struct kx_arena *a, const char *path, struct kx_json **ret,
			    const char **ret_message)
{
	struct kx_buf b;
	kx_buf_init(&b, 0);
	int r = kx_read_file(path, 1u << 20, &b);
	if (r < 0) {
		fail("cannot read '%s': %s", path, strerror(-r));
		return r;
	}
	struct kx_json *v = NULL;
	struct kx_json_error je;
	size_t end;
	size_t len = b.len;
	r = kx_json_parse(a, b.ptr, len, 0, &v, &end, &je);
	kx_buf_release(&b);
	if (r < 0 || end != len) {
		fail("cannot parse '%s': %s", path, r < 0 ? je.message : "trailing data");
		return -EINVAL;
	}
	const char *status = kx_json_get_string(v, "status");
	if (!status || (strcmp(status, "passed") && strcmp(status, "failed"))) {
		fail("invalid '%s': expected an object with \"status\": \"passed\" or \"failed\"", path);
		return -EINVAL;
	}
	*ret = v;
	*ret_message = NULL;
	if (strcmp(status, "failed") == 0) {
		const char *m = kx_json_get_string(v, "message");
		*ret_message = m ? m : "correctness failed (as recorded by the harness that timed it)";
	}
	return 0;
}

static int do_record(struct session *S, const struct kx_bench_workload *w)
{
	const struct options *o = S->o;
	bool gpu = strcmp(o->environment, "cpu") != 0;
	struct kx_bench_impl impl = { o->impls, "recorded" };
	struct kx_bench_case c;
	bench_case_init(&c, w, &impl);
	int r = apply_params(o, &c, 1);
	if (r < 0)
		return r;
	bench_protocol_init(&S->protocol, o->protocol,
			    gpu ? KX_TIMER_CUDA_EVENTS : KX_TIMER_CPU_MONOTONIC);
	protocol_overrides(o, &S->protocol);
	struct kx_bench_samples s = { 0 };
	struct kx_arena *a = kx_arena_new();
	if (!a)
		return -ENOMEM;
	struct kx_bench_result res = { .c = &c, .observed_ns = kx_now_ns(), .samples = &s,
				       .peak_bytes = o->memory, .gpu_slug = S->gpu_slug,
				       .attached = S->attached, .nattached = S->nattached };
	if ((r = read_samples(o->samples_file, &s)) < 0)
		goto out;
	if (o->correctness_file &&
	    (r = read_correctness(a, o->correctness_file, &res.correctness, &res.message)) < 0)
		goto out;
	if (res.message)
		res.samples = NULL; /* a failed run carries no timing, like the harness's own */
	if (gpu) {
		if ((r = open_gpu(S)) < 0)
			goto out;
		res.peak = S->peak;
	} else {
		use_cpu(S);
	}
	S->protocol_doc = bench_protocol_document(S->arena, &S->protocol);
	r = S->protocol_doc && S->env_doc ? open_sink(S, 1) : -ENOMEM;
	if (r < 0)
		goto out;
	if (res.message)
		S->failed++;
	summary(S, &res, w->benchmark);
	r = emit(S, a, &res, o->impl_project ? o->impl_project : o->impls,
		 o->impl_version ? o->impl_version : "unknown");
	close_sink(S, NULL);
out:
	free(s.ns);
	kx_arena_free(a);
	return r;
}

/* ---- arguments ----------------------------------------------------------------------------------- */

enum {
	OPT_LIST = 256, OPT_RUN, OPT_SELFTEST, OPT_RECORD, OPT_IMPL, OPT_PARAM, OPT_INBOX, OPT_SPOOL,
	OPT_JSONL, OPT_PROTOCOL, OPT_DEVICE, OPT_SEED, OPT_WARMUP, OPT_MIN_SAMPLES, OPT_MIN_TIME,
	OPT_NOISE, OPT_TIMEOUT, OPT_MAX_SAMPLES, OPT_SAMPLES_DIR, OPT_SAMPLES, OPT_IMPL_PROJECT,
	OPT_IMPL_VERSION, OPT_CORRECTNESS, OPT_MEMORY, OPT_ENVIRONMENT, OPT_KEY, OPT_ATTACH,
	OPT_ARTIFACTS_DIR,
};

/* The numbers of the options below, each with its range (kindex-bench(1)): kx_parse_uint and
 * kx_parse_decimal's rule, digits only. */
struct number_opt {
	int opt;
	const char *name;
	bool decimal;
	double min, max;
	const char *what;
};
static const struct number_opt number_opts[] = {
	{ OPT_DEVICE, "--device", false, 0, 1024, "a device ordinal" },
	{ OPT_SEED, "--seed", false, 0, (double)UINT64_MAX, "a seed" },
	{ OPT_WARMUP, "--warmup", true, 0, 86400, "seconds" },
	{ OPT_MIN_TIME, "--min-time", true, 0, 86400, "seconds" },
	{ OPT_TIMEOUT, "--timeout", true, 0, 86400, "seconds" },
	{ OPT_NOISE, "--noise", true, 0, 1, "a ratio, stdev/mean" },
	{ OPT_MIN_SAMPLES, "--min-samples", false, 1, 1000000000, "a number of samples" },
	{ OPT_MAX_SAMPLES, "--max-samples", false, 1, 1000000000, "a number of samples" },
	{ OPT_MEMORY, "--memory", false, 0, 9007199254740991.0, "bytes" },
};

/* Option `opt`'s value: 0 and *ret_u (whole numbers) or *ret_d set, or -EINVAL once said why
 * ("invalid --seed ' -5': expected a whole number, 0 to 18446744073709551615"). */
static int parse_number(int opt, const char *s, uint64_t *ret_u, double *ret_d)
{
	const struct number_opt *n = number_opts;
	while (n->opt != opt)
		n++;
	/* (double)UINT64_MAX rounds up to 2^64: the bound of --seed is UINT64_MAX itself */
	uint64_t umax = n->opt == OPT_SEED ? UINT64_MAX : (uint64_t)n->max;
	int r = n->decimal ? kx_parse_decimal(s, n->min, n->max, ret_d) : kx_parse_uint(s, (uint64_t)n->min, umax, ret_u);
	if (r < 0) {
		if (n->decimal)
			fail("invalid %s '%s': expected %s, a decimal from %g to %g (e.g. 0.5)", n->name, s, n->what, n->min,
			     n->max);
		else
			fail("invalid %s '%s': expected %s, a whole number from %llu to %llu", n->name, s, n->what,
			     (unsigned long long)n->min, (unsigned long long)umax);
		return -EINVAL;
	}
	return 0;
}

static const struct option longopts[] = {
	{ "list", no_argument, NULL, OPT_LIST },
	{ "run", required_argument, NULL, OPT_RUN },
	{ "selftest", no_argument, NULL, OPT_SELFTEST },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "impl", required_argument, NULL, OPT_IMPL },
	{ "param", required_argument, NULL, OPT_PARAM },
	{ "output", required_argument, NULL, 'o' },
	{ "inbox", required_argument, NULL, OPT_INBOX },
	{ "spool", required_argument, NULL, OPT_SPOOL },
	{ "jsonl", no_argument, NULL, OPT_JSONL },
	{ "protocol", required_argument, NULL, OPT_PROTOCOL },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "min-samples", required_argument, NULL, OPT_MIN_SAMPLES },
	{ "min-time", required_argument, NULL, OPT_MIN_TIME },
	{ "noise", required_argument, NULL, OPT_NOISE },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "max-samples", required_argument, NULL, OPT_MAX_SAMPLES },
	{ "samples-dir", required_argument, NULL, OPT_SAMPLES_DIR },
	{ "attach", required_argument, NULL, OPT_ATTACH },
	{ "artifacts-dir", required_argument, NULL, OPT_ARTIFACTS_DIR },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "samples", required_argument, NULL, OPT_SAMPLES },
	{ "impl-project", required_argument, NULL, OPT_IMPL_PROJECT },
	{ "impl-version", required_argument, NULL, OPT_IMPL_VERSION },
	{ "correctness", required_argument, NULL, OPT_CORRECTNESS },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "environment", required_argument, NULL, OPT_ENVIRONMENT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static int set_mode(struct options *o, int mode, const char *arg)
{
	if (o->mode != MODE_NONE) {
		fail("choose one of --list, --run, --selftest, --record");
		return -EINVAL;
	}
	o->mode = mode;
	o->workloads = arg;
	return 0;
}

/* What getopt_long refused (its own messages name the program by the path it was run as): ch is
 * ':' for a missing value, '?' for the rest. */
static void option_error(int ch, char **argv)
{
	const char *a = argv[optind - 1];
	if (strncmp(a, "--", 2) != 0) {
		if (ch == ':')
			fail("option '-%c' needs a value (see --help)", optopt);
		else
			fail("unknown option '-%c' (see --help)", optopt);
		return;
	}
	size_t n = strcspn(a, "=");
	bool known = false;
	for (const struct option *lo = longopts; lo->name; lo++)
		known = known || (strlen(lo->name) == n - 2 && strncmp(lo->name, a + 2, n - 2) == 0);
	if (ch == ':')
		fail("option '%.*s' needs a value (see --help)", (int)n, a);
	else if (known && a[n] == '=')
		fail("option '%.*s' takes no value (see --help)", (int)n, a);
	else
		fail("unknown option '%.*s' (see --help)", (int)n, a);
}

static int parse_args(int argc, char **argv, struct options *o)
{
	*o = (struct options){ .device = -1, .warmup = NAN, .min_time = NAN, .noise = NAN,
			       .timeout = NAN, .min_samples = NAN, .max_samples = NAN,
			       .environment = "cuda" };
	int ch;
	double v;
	uint64_t u;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:qhV", longopts, NULL)) != -1) {
		switch (ch) {
		case OPT_LIST: if (set_mode(o, MODE_LIST, NULL) < 0) return -EINVAL; break;
		case OPT_RUN: if (set_mode(o, MODE_RUN, optarg) < 0) return -EINVAL; break;
		case OPT_SELFTEST: if (set_mode(o, MODE_SELFTEST, NULL) < 0) return -EINVAL; break;
		case OPT_RECORD: if (set_mode(o, MODE_RECORD, optarg) < 0) return -EINVAL; break;
		case OPT_IMPL: o->impls = optarg; break;
		case OPT_PARAM:
			if (o->nparams == MAX_PARAMS) {
				fail("too many --param (at most %d)", MAX_PARAMS);
				return -EINVAL;
			}
			o->params[o->nparams++] = optarg;
			break;
		case 'o': o->output = optarg; break;
		case OPT_INBOX: o->inbox = optarg; break;
		case OPT_SPOOL: o->spool = optarg; break;
		case OPT_JSONL: o->jsonl = true; break;
		case OPT_SAMPLES_DIR: o->samples_dir = optarg; break;
		case OPT_ATTACH:
			if (o->nattach == KX_ARRAY_SIZE(o->attach)) {
				fail("too many --attach (at most %zu: a run holds at most %d artifacts, "
				     "samples.tsv among them)", KX_ARRAY_SIZE(o->attach), KX_BENCH_ARTIFACTS_MAX);
				return -EINVAL;
			}
			o->attach[o->nattach++] = optarg;
			break;
		case OPT_ARTIFACTS_DIR: o->artifacts_dir = optarg; break;
		case OPT_KEY: o->key = optarg; break;
		case 'q': o->quiet = true; break;
		case OPT_PROTOCOL:
			if (strcmp(optarg, "kindex") == 0)
				o->protocol = KX_PROTOCOL_KINDEX;
			else if (strcmp(optarg, "do_bench") == 0)
				o->protocol = KX_PROTOCOL_DO_BENCH;
			else {
				fail("unknown protocol '%s': expected kindex or do_bench", optarg);
				return -EINVAL;
			}
			break;
		case OPT_DEVICE:
			if (parse_number(ch, optarg, &u, NULL) < 0)
				return -EINVAL;
			o->device = (int)u;
			break;
		case OPT_SEED:
			if (parse_number(ch, optarg, &o->seed, NULL) < 0)
				return -EINVAL;
			o->seed_set = true;
			break;
		case OPT_WARMUP: case OPT_MIN_TIME: case OPT_NOISE: case OPT_TIMEOUT:
			if (parse_number(ch, optarg, NULL, &v) < 0)
				return -EINVAL;
			if (ch == OPT_WARMUP) o->warmup = v;
			if (ch == OPT_MIN_TIME) o->min_time = v;
			if (ch == OPT_NOISE) o->noise = v;
			if (ch == OPT_TIMEOUT) o->timeout = v;
			break;
		case OPT_MIN_SAMPLES: case OPT_MAX_SAMPLES: case OPT_MEMORY:
			if (parse_number(ch, optarg, &u, NULL) < 0)
				return -EINVAL;
			if (ch == OPT_MIN_SAMPLES) o->min_samples = (double)u;
			if (ch == OPT_MAX_SAMPLES) o->max_samples = (double)u;
			if (ch == OPT_MEMORY) o->memory = u;
			break;
		case OPT_SAMPLES: o->samples_file = optarg; break;
		case OPT_IMPL_PROJECT: o->impl_project = optarg; break;
		case OPT_IMPL_VERSION: o->impl_version = optarg; break;
		case OPT_CORRECTNESS: o->correctness_file = optarg; break;
		case OPT_ENVIRONMENT:
			if (strcmp(optarg, "cuda") && strcmp(optarg, "cpu")) {
				fail("unknown environment '%s': expected cuda or cpu", optarg);
				return -EINVAL;
			}
			o->environment = optarg;
			break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("kindex-bench %s\n", KX_VERSION); exit(0);
		default: option_error(ch, argv); return -EINVAL;
		}
	}
	if (optind < argc) {
		fail("unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	if (o->mode == MODE_NONE) {
		fail("nothing to do: choose --list, --run, --selftest or --record (see --help)");
		return -EINVAL;
	}
	if (!!o->output + !!o->inbox + !!o->spool > 1) {
		fail("choose one of -o, --inbox, --spool");
		return -EINVAL;
	}
	if (o->artifacts_dir && (o->inbox || o->spool)) {
		fail("--artifacts-dir goes with -o or standard output: an inbox or a spool keeps its "
		     "artifacts in its own artifacts/");
		return -EINVAL;
	}
	if (o->mode == MODE_LIST && (o->nattach || o->artifacts_dir)) {
		fail("--attach and --artifacts-dir go with --run, --selftest or --record");
		return -EINVAL;
	}
	if (!isnan(o->min_samples) && !isnan(o->max_samples) && o->max_samples < o->min_samples) {
		fail("invalid --max-samples: below --min-samples");
		return -EINVAL;
	}
	if (o->mode == MODE_RECORD && (!o->impls || !o->samples_file || strchr(o->impls, ','))) {
		fail("--record needs one --impl NAME and --samples FILE");
		return -EINVAL;
	}
	if (o->mode != MODE_RECORD && (o->samples_file || o->correctness_file || o->memory ||
				       o->impl_project || o->impl_version)) {
		fail("--samples, --correctness, --memory and --impl-* go with --record");
		return -EINVAL;
	}
	return 0;
}

/*
 * --attach: each file hashed once, before the first run, so a bad argument is said before
 * anything is measured. Names must be unique within a run, samples.tsv included. -EINVAL for the
 * arguments' faults (usage), another errno for a read that failed.
 */
static int attach_files(struct session *S)
{
	const struct options *o = S->o;
	if (!o->nattach)
		return 0;
	S->attached = calloc(o->nattach, sizeof(*S->attached));
	if (!S->attached) {
		fail("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < o->nattach; i++) {
		char err[1024];
		struct kx_bench_artifact *art = &S->attached[i];
		int r = bench_attach(o->attach[i], art, err, sizeof(err));
		if (r < 0) {
			fail("%s", err);
			return r;
		}
		if (strcmp(art->name, KX_BENCH_SAMPLES_ARTIFACT) == 0) {
			fail("cannot attach '%s': two artifacts of a run cannot share a name, and '%s' is "
			     "the samples kindex-bench attaches to every timed run", art->path,
			     KX_BENCH_SAMPLES_ARTIFACT);
			return -EINVAL;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(S->attached[j].name, art->name) == 0) {
				fail("cannot attach '%s': two artifacts of a run cannot share a name, and "
				     "'%s' is attached already as '%s'", art->path, S->attached[j].path,
				     art->name);
				return -EINVAL;
			}
		S->nattached++;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	if (parse_args(argc, argv, &o) < 0)
		return EXIT_USAGE;
	if (o.mode == MODE_LIST)
		return do_list();

	struct session S = { .o = &o, .tty = !o.quiet && isatty(STDERR_FILENO) };
	S.arena = kx_arena_new();
	if (!S.arena) {
		fail("out of memory");
		return EXIT_ERROR;
	}
	char kerr[512];
	if (o.key && kx_signer_open(o.key, &S.key, kerr, sizeof(kerr)) < 0) {
		fail("--key: %s", kerr);
		kx_arena_free(S.arena);
		return EXIT_USAGE;
	}
	struct kx_bench_case *cases = calloc(MAX_CASES, sizeof(*cases));
	int r = cases ? 0 : -ENOMEM, status = EXIT_ERROR;
	size_t n = 0;
	if (r < 0) {
		fail("out of memory");
	} else if ((r = attach_files(&S)) < 0) {
		status = r == -EINVAL ? EXIT_USAGE : EXIT_ERROR;
	} else if (o.mode == MODE_SELFTEST) {
		const struct kx_bench_workload *w = &bench_selftest_workload;
		if (plan(&o, &w, 1, cases, &n) < 0) {
			status = EXIT_USAGE;
			goto out;
		}
		use_cpu(&S);
		r = S.env_doc ? do_cases(&S, cases, n, false) : -ENOMEM;
	} else if (o.mode == MODE_RUN) {
		const struct kx_bench_workload *ws[16];
		size_t nw;
		if (parse_workloads(o.workloads, ws, &nw) < 0 || plan(&o, ws, nw, cases, &n) < 0) {
			status = EXIT_USAGE;
			goto out;
		}
		if (open_gpu(&S) < 0) {
			status = EXIT_NO_DEVICE;
			goto out;
		}
		r = do_cases(&S, cases, n, true);
	} else {
		const struct kx_bench_workload *w = bench_workload_find(o.workloads);
		if (!w) {
			fail("unknown workload '%s' (see --list)", o.workloads);
			status = EXIT_USAGE;
			goto out;
		}
		r = do_record(&S, w);
		if (r == -ENODEV) {
			status = EXIT_NO_DEVICE;
			goto out;
		}
		if (r == -EINVAL) {
			status = EXIT_USAGE;
			goto out;
		}
	}
	if (r >= 0)
		status = S.failed ? EXIT_RUN_FAILED : 0;
out:
	if (S.tty)
		fputs("\r\033[K", stderr);
	bench_nvml_close(S.nvml);
	bench_gpu_close(S.gpu);
	kx_signer_free(S.key);
	free(S.attached);
	free(cases);
	kx_arena_free(S.arena);
	return status;
}
