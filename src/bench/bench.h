/* SPDX-License-Identifier: MIT */
/*
 * kindex-bench's host side, as one internal header: statistics and stopping rules, the sampling
 * driver, the protocol, workload and implementation documents, the environment, the manifest and
 * where it goes. Everything here is plain C11 and runs without a GPU, which is what lets the unit
 * suite and `--selftest` exercise the whole pipeline on machines that have none; the CUDA side is
 * reached only through device.h.
 *
 * Documents are kx_json trees allocated from the caller's arena (kx/json.h) and digested with
 * kx_digest_document (kx/canon.h), so a manifest hashes here exactly as the index hashes it.
 * Functions return 0 or a negative errno unless they say otherwise; nothing here prints except
 * the progress and output code that say so. Not thread-safe.
 */
#ifndef KX_BENCH_H
#define KX_BENCH_H

#include "device.h"
#include "kx/canon.h"
#include "kx/json.h"
#include "kx/rank.h" /* kx_slug, the index's GPU and workload slugs; kx_time_format */

#include <errno.h>

#define KX_BENCH_API_VERSION "kernelindex.dev/v1alpha1"
#define KX_BENCH_HARNESS "kindex-bench"
#define KX_BENCH_PROJECT "kindexfs"

/* kx_json_set_string that takes a NULL string (a failed kx_arena_printf) as -ENOMEM. */
static inline int kx_bench_set_str(struct kx_arena *a, struct kx_json *o, const char *k,
				   const char *s)
{
	return s ? kx_json_set_string(a, o, k, s) : -ENOMEM;
}

/* ---- statistics (stats.c) --------------------------------------------------------------------- */

/* Summary of one run's samples, in ns. stdev is the sample standard deviation (n - 1). */
struct kx_bench_stats {
	size_t n;
	double median, p20, p80, min, max, mean, stdev;
};

/* Quantile q in [0, 1] of sorted[0..n) by linear interpolation between closest ranks
 * (numpy's "linear", torch.quantile's default): position q*(n-1). n must be > 0. */
double bench_quantile(const double *sorted, size_t n, double q);
/* -EINVAL for n == 0, -ENOMEM. */
int bench_stats_compute(const uint64_t *ns, size_t n, struct kx_bench_stats *ret);

/*
 * The raw samples as text: each sample in ns as a decimal integer and "\n", in the order they
 * were measured. Its SHA-256 is the run's samples.sha256, so `sha256sum` of a file written with
 * `--samples-dir` reproduces it.
 */
int bench_samples_text(const uint64_t *ns, size_t n, struct kx_buf *out);
int bench_samples_sha256(const uint64_t *ns, size_t n, char hex[KX_DIGEST_HEX + 1]);

/* Running mean and variance (Welford), for the stopping rule. */
struct kx_bench_running {
	size_t n;
	double mean, m2, sum;
};
void bench_running_add(struct kx_bench_running *r, double x);
/* Relative noise stdev/mean; INFINITY when it is not defined yet (n < 2 or mean 0). */
double bench_running_noise(const struct kx_bench_running *r);

/* The trailing history of the running noise (after each sample), nvbench's noise tracker: the
 * newest KX_BENCH_NOISE_WINDOW values. */
#define KX_BENCH_NOISE_WINDOW 512
struct kx_bench_noise_history {
	double v[KX_BENCH_NOISE_WINDOW];
	size_t len, next;
};
/* Append one noise value; a non-finite one (fewer than 2 samples) is not kept. */
void bench_noise_push(struct kx_bench_noise_history *h, double noise);
/* How much the noise still moves: the standard deviation (n - 1) of the history about its newest
 * value, relative to that value; INFINITY with fewer than 2 values or a newest value of 0. */
double bench_noise_spread(const struct kx_bench_noise_history *h);

/* ---- protocol (protocol.c) -------------------------------------------------------------------- */

enum kx_bench_protocol_kind {
	KX_PROTOCOL_KINDEX,   /* the harness's own protocol (family kindex_bench) */
	KX_PROTOCOL_DO_BENCH, /* triton.testing.do_bench, reproduced exactly */
};

enum kx_bench_timer {
	KX_TIMER_CUDA_EVENTS,
	KX_TIMER_CPU_MONOTONIC, /* the CPU selftest: clock_gettime(CLOCK_MONOTONIC) */
};

struct kx_bench_protocol {
	enum kx_bench_protocol_kind kind;
	enum kx_bench_timer timer;
	/* kindex protocol */
	double warmup_s;      /* warmup by time: calls (flushed, timed, discarded) until this long */
	size_t min_samples;   /* at least this many samples … */
	double min_time_s;    /* … and this much measured (summed sample) time */
	double noise_target;  /* stop once stdev/mean is at or below this */
	/* or once the noise has settled (nvbench): with more than settle_history values in the
	 * history, checked every settle_every samples, its spread is below settle_spread */
	size_t settle_history, settle_every;
	double settle_spread;
	double timeout_s;     /* or once this much wall time has passed (minimums still hold) */
	size_t max_samples;   /* hard cap on memory */
	double poll_s;        /* clock poll interval */
	double throttle_ratio; /* a probed clock below ratio * highest seen counts as throttled */
	/* do_bench */
	double db_warmup_ms, db_rep_ms;
	size_t db_estimate_calls;
	uint64_t db_flush_bytes;
};

void bench_protocol_init(struct kx_bench_protocol *p, enum kx_bench_protocol_kind kind,
			 enum kx_bench_timer timer);
/* The BenchmarkProtocol document: every parameter above, the tolerance policy and scope. */
struct kx_json *bench_protocol_document(struct kx_arena *a, const struct kx_bench_protocol *p);

/* ---- correctness policy (check.c; the checks themselves are declared in device.h) ------------- */

/* Every tolerance the harness applies, in the order the protocol document lists them. */
const struct kx_bench_tolerance *bench_tolerances(size_t *ret_n);
/* What a tolerance's named allowance is, in words (NULL for none or an unknown name). */
const char *bench_allowance_text(const char *allowance);

enum kx_bench_stop {
	KX_STOP_NO,
	KX_STOP_CONVERGED,   /* minimums met and noise at or under the target */
	KX_STOP_SETTLED,     /* minimums met, noise above the target but no longer moving */
	KX_STOP_TIMEOUT,     /* minimums met, noise still above the target at the timeout */
	KX_STOP_MAX_SAMPLES,
	KX_STOP_DO_BENCH,    /* do_bench's fixed repeat count */
	KX_STOP_RECORDED,    /* samples taken by another harness (--record) */
};

/* The stopping rule of the kindex protocol after n samples, with the noise history so far (NULL:
 * none). Pure: unit-tested directly. */
enum kx_bench_stop bench_should_stop(const struct kx_bench_protocol *p, size_t n,
				     double measured_s, double noise,
				     const struct kx_bench_noise_history *h, double elapsed_s);
const char *bench_stop_name(enum kx_bench_stop s);

/* ---- sampling (measure.c) --------------------------------------------------------------------- */

struct kx_bench_samples {
	uint64_t *ns;        /* in measured order */
	uint8_t *throttled;  /* 1 where the sample's own SM clock was held down */
	float *mhz;          /* each sample's SM clock across its timer pair; 0 = not measured */
	size_t n, cap;
	size_t n_throttled;
	enum kx_bench_stop stop;
	size_t warmup_calls;
	double wall_s;       /* host time from the first warmup call to the last sample */
	bool clock_watched;  /* per-sample clocks were measured, or NVML was polled */
	double clock_min_mhz, clock_max_mhz;
	uint64_t reasons;    /* union of NVML clock event reasons seen between samples (a record) */
	/* do_bench */
	double estimate_ms;
	size_t db_warmup, db_repeat;
};

struct kx_bench_progress {
	/* called after each sample (rate-limit inside); may be NULL */
	void (*fn)(void *arg, const struct kx_bench_samples *s, double noise, double elapsed_s);
	void *arg;
};

/*
 * Flag the samples whose own SM clock (mhz[i], 0 = unknown) is below ratio times the highest of
 * the run's: a sample is judged by the clock it ran at, not by a poll between samples. Returns
 * the number flagged; flags[i] is set to 0 or 1. Pure: unit-tested directly.
 */
size_t bench_flag_throttled(const float *mhz, size_t n, double ratio, uint8_t *flags);

/* Sample one implementation under protocol p with the given timer ops. */
int bench_measure(const struct kx_bench_protocol *p, const struct kx_bench_ops *ops, void *ctx,
		  const struct kx_bench_progress *progress, struct kx_bench_samples *ret);
void bench_samples_release(struct kx_bench_samples *s);

/* What bench_tune measured: each candidate's median and the one chosen. */
struct kx_bench_tuning {
	const char *parameter; /* the tunable's name ("chunkColumns"); NULL: nothing was tuned */
	size_t n;
	int64_t values[KX_BENCH_MAX_CANDIDATES];
	uint64_t median_ns[KX_BENCH_MAX_CANDIDATES];
	size_t calls;  /* timed calls per candidate, after one untimed call */
	size_t chosen; /* index into values of the fastest */
};

/* timed calls per candidate: a median of three, cheap next to the sampling that follows */
#define KX_BENCH_TUNE_CALLS 3

/*
 * Choose t's value by measurement: for each candidate, set(set_ctx, value), one untimed call
 * (ops->warm: whatever the value needs is loaded outside a blocked stream), then `calls` calls
 * each flushed, blocked and between its own timer pair (ops->time_calls, blocking, as the kindex
 * protocol samples); the lowest median wins (the first of equal ones) and is set again last, so
 * the case runs with it from then on. t without candidates: nothing is chosen (parameter NULL).
 */
int bench_tune(const struct kx_bench_tunable *t, int (*set)(void *set_ctx, int64_t value),
	       void *set_ctx, const struct kx_bench_ops *ops, void *ctx, size_t calls,
	       struct kx_bench_tuning *ret);

/* ---- workloads (workload.c) ------------------------------------------------------------------- */

#define KX_BENCH_MAX_PARAMS 8

enum kx_bench_param_type {
	KX_PARAM_INT,    /* positive integer */
	KX_PARAM_NUMBER, /* positive finite number */
	KX_PARAM_STRING, /* one of a fixed set (the default is the only one supported) */
};

struct kx_bench_param {
	const char *name; /* exactly the Liger importer's parameter name */
	enum kx_bench_param_type type;
	double def;
	const char *def_str;
};

struct kx_bench_impl {
	const char *name;
	const char *summary;
};

struct kx_bench_workload {
	const char *benchmark; /* "<kernel>/<pass>", the Liger benchmark name */
	const char *title;
	enum kx_bench_kind kind;
	const char *dtype;         /* the workload document's dtype, NULL where Liger has none */
	const char *compute_dtype; /* whose tolerance applies */
	const struct kx_bench_param *params;
	size_t nparams;
	const struct kx_bench_impl *impls;
	size_t nimpls;
	const char *inputs; /* one line for --list: what the inputs are */
};

extern const struct kx_bench_workload bench_workloads[];
extern const size_t bench_nworkloads;
/* The CPU selftest's workload: cross_entropy/forward at a small shape, CPU implementations. */
extern const struct kx_bench_workload bench_selftest_workload;

/* By benchmark name, or by kernel name alone ("rms_norm" = "rms_norm/forward"). */
const struct kx_bench_workload *bench_workload_find(const char *name);
const struct kx_bench_impl *bench_impl_find(const struct kx_bench_workload *w, const char *name);

struct kx_bench_case {
	const struct kx_bench_workload *w;
	const struct kx_bench_impl *impl;
	double num[KX_BENCH_MAX_PARAMS];
	const char *str[KX_BENCH_MAX_PARAMS];
	uint64_t seed;
};

void bench_case_init(struct kx_bench_case *c, const struct kx_bench_workload *w,
		     const struct kx_bench_impl *impl);
/* Set a parameter from its text; -ENOENT when the workload has no such parameter, -EINVAL with
 * err filled when the value is not acceptable. `value` must outlive the case. */
int bench_case_set(struct kx_bench_case *c, const char *key, const char *value, char *err,
		   size_t errlen);
/* A numeric parameter's value (NaN when there is none of that name). */
double bench_case_num(const struct kx_bench_case *c, const char *name);
void bench_case_shape(const struct kx_bench_case *c, struct kx_bench_shape *ret);
/*
 * Floating-point operations of one call's matrix products (0 for a workload without one:
 * cross_entropy and rms_norm are bound by memory, and their few operations per element against
 * a tensor-core peak would say nothing), and the bytes one call must move at least: its inputs
 * read once and its outputs written once, whatever an implementation keeps in between.
 */
double bench_case_flops(const struct kx_bench_case *c);
double bench_case_bytes(const struct kx_bench_case *c);
/* The Workload document: {parameters, dtype} exactly as the Liger importer writes it. */
struct kx_json *bench_workload_document(struct kx_arena *a, const struct kx_bench_case *c);
/* The Implementation document; project/version NULL mean kindexfs and KX_VERSION. */
struct kx_json *bench_implementation_document(struct kx_arena *a, const char *name,
					      const char *project, const char *version);

/* ---- environment (environment.c, nvml.c) ------------------------------------------------------ */

/*
 * Split a CUDA device name into product and form factor so that slug(product + "-" + form factor)
 * equals slug(name): "NVIDIA A100-SXM4-80GB" -> "NVIDIA A100" + "SXM4-80GB", "NVIDIA H100 80GB
 * HBM3" -> "NVIDIA H100" + "80GB HBM3", "NVIDIA GeForce RTX 4090" -> itself + "".
 */
/* "sm_90" from compute capability 9.0. */
void bench_sm_arch(int major, int minor, char out[16]);

/* What NVML knows that CUDA does not (zeroed / present = false when libnvidia-ml is absent). */
struct kx_nvml_static {
	bool present;
	char driver[96];
	unsigned sm_max_mhz, mem_max_mhz;
	unsigned power_limit_mw; /* enforced power limit; 0 = unknown */
};

struct kx_json *bench_gpu_environment(struct kx_arena *a, const struct kx_gpu_info *gi,
				      const struct kx_nvml_static *nv);

struct kx_bench_cpu_info {
	char vendor[64];   /* "intel", "amd", "arm", … (lowercase) */
	char product[192]; /* /proc/cpuinfo "model name" */
	char arch[64];     /* uname -m */
	char os[160];      /* uname -sr */
	char libc[64];
	char compiler[128];
	long cpus;
	uint64_t llc_bytes; /* last-level cache, the selftest's flush size */
};

/* Parse /proc/cpuinfo text: vendor and product of the first processor. */
void bench_cpuinfo_parse(const char *text, size_t len, struct kx_bench_cpu_info *ret);
void bench_cpu_capture(struct kx_bench_cpu_info *ret);
struct kx_json *bench_cpu_environment(struct kx_arena *a, const struct kx_bench_cpu_info *ci);

struct kx_nvml;
/* Load libnvidia-ml with dlopen and find the device by PCI bus id; -ENOENT when absent. */
int bench_nvml_open(const char *pci_bus_id, struct kx_nvml **ret, char *err, size_t errlen);
void bench_nvml_close(struct kx_nvml *n);
void bench_nvml_static_info(struct kx_nvml *n, struct kx_nvml_static *ret);
int bench_nvml_poll(struct kx_nvml *n, struct kx_bench_clock *ret);
/* NVML clock event reasons worth recording: software thermal, hardware slowdown, thermal and
 * power brake, and the software power cap (0x4), which a 700 W part reports whenever it runs at
 * its power limit: recorded, never alone a sign of throttling (samples are judged by their own
 * clock). */
#define KX_NVML_THROTTLE_MASK 0xecull
/* Names of the reasons in `bits`, as a JSON array of strings. */
struct kx_json *bench_nvml_reason_names(struct kx_arena *a, uint64_t bits);

/* ---- peaks and figures (peak.c) ---------------------------------------------------------------- */

/* A device's dense bf16 tensor-core peak and memory bandwidth, as its datasheet states them. */
struct kx_bench_peak {
	const char *device; /* the CUDA device name, exactly */
	double bf16_tflops; /* dense (no sparsity), fp32 accumulation */
	double memory_gbps; /* 10^9 bytes per second */
	const char *source; /* the datasheet */
};

/* The peak of the device of this CUDA name; NULL for a device the table does not hold. */
const struct kx_bench_peak *bench_peak_find(const char *device);

/* What one call achieved: TFLOP/s and GB/s at its median, and their fractions of the peak (0
 * where the peak, the FLOP count or the byte count is unknown). */
struct kx_bench_figures {
	double tflops, gbps;
	double compute_fraction, bandwidth_fraction;
};
void bench_figures_of(double flops, double bytes, double median_ns,
		      const struct kx_bench_peak *peak, struct kx_bench_figures *ret);

/* ---- artifacts (artifacts.c) ------------------------------------------------------------------ */

/*
 * The files behind a run (SPEC §9), announced in its spec.artifacts as {name, digest, size,
 * mediaType} and delivered beside the manifests, in an artifacts/ directory, before the manifest
 * that announces them. Every timed run has samples.tsv: the bytes whose SHA-256 is samples.sha256
 * (bench_samples_text). `--attach FILE` adds a file to every run of the invocation.
 */
#define KX_BENCH_ARTIFACTS_MAX 256 /* per run, samples.tsv included */
#define KX_BENCH_SAMPLES_ARTIFACT "samples.tsv"
#define KX_BENCH_SAMPLES_MEDIA_TYPE "text/tab-separated-values"

struct kx_bench_artifact {
	const char *name;                /* one safe file name component */
	const char *media_type;          /* type/subtype */
	char digest[KX_DIGEST_STR_MAX];  /* "sha256:<64 hex>" of the bytes */
	uint64_t size;
	const char *path;                /* --attach: the file the bytes are copied from */
};

/* The media type of a file name, by its extension (.cu text/x-cuda, ... application/octet-stream). */
const char *bench_media_type(const char *name);
/* NULL when `name` may name an artifact (1-255 bytes of UTF-8, no '/', no control character, no
 * leading '.'), else why not, as a phrase ("starts with '.'"). */
const char *bench_artifact_name_problem(const char *name);
/*
 * `--attach PATH`: the artifact named by its base name, its digest and size computed by reading
 * the file once, in bounded pieces. -EINVAL (the argument's fault: not there, unreadable, not a
 * regular file, a name an artifact cannot have) or another negative errno (a read error), with
 * err saying which file and why.
 */
int bench_attach(const char *path, struct kx_bench_artifact *ret, char *err, size_t errlen);
/* samples.tsv of these samples, without building its bytes. */
int bench_samples_artifact(const uint64_t *ns, size_t n, struct kx_bench_artifact *ret);

/* ---- manifest (manifest.c) -------------------------------------------------------------------- */

struct kx_bench_result {
	const struct kx_bench_case *c;
	int64_t observed_ns;                 /* Unix ns, when the measurement started */
	const struct kx_bench_check *check;  /* NULL: not checked by the harness */
	struct kx_json *correctness;         /* used verbatim instead of check when set (--record) */
	const char *message;                 /* why the run failed; NULL when it did not */
	const struct kx_bench_samples *samples; /* NULL: not timed (failed runs) */
	uint64_t peak_bytes;                 /* 0: not measured */
	uint64_t flush_bytes;
	const char *clock_source;            /* "nvml", "globaltimer", "none" */
	unsigned blocker_timeouts;
	const char *gpu_slug;                /* for metadata.name */
	const struct kx_bench_peak *peak;    /* the device's peak; NULL when unknown (or a CPU) */
	const struct kx_bench_tuning *tuning; /* what the implementation chose by measurement */
	const struct kx_bench_artifact *attached; /* --attach: announced by every run, after samples.tsv */
	size_t nattached;
};

/*
 * The manifest {run, protocol, environment, workload, implementation}: the run document carries
 * the digests of the other four (computed here with kx_digest_document). The protocol,
 * environment, workload and implementation trees are referenced, not copied.
 */
int bench_manifest(struct kx_arena *a, const struct kx_bench_result *r,
		   struct kx_json *protocol, struct kx_json *environment, struct kx_json *workload,
		   struct kx_json *implementation, struct kx_json **ret);
/* A file name for the manifest: "<kernel>-<pass>-<impl>-<12 hex of the run digest>.json". */
int bench_manifest_filename(const struct kx_json *manifest, char *out, size_t outlen);

/* ---- output (output.c) ------------------------------------------------------------------------ */

enum kx_bench_sink_kind {
	KX_SINK_STDOUT,
	KX_SINK_FILE,  /* FILE.tmp.<pid> renamed to FILE after each manifest, holding all so far */
	KX_SINK_INBOX, /* DIR/.name.tmp renamed to DIR/name */
	KX_SINK_SPOOL, /* maildir: DIR/tmp/name renamed to DIR/new/name */
};

struct kx_bench_sink {
	enum kx_bench_sink_kind kind;
	const char *path;
	bool lines;     /* JSON Lines (JCS, one manifest a line) instead of the pretty form */
	void *f;        /* FILE * of stdout */
	char *tmp_path;
	struct kx_buf all; /* KX_SINK_FILE: every manifest written so far */
	size_t count;
	char *artifacts_dir; /* where artifact bytes go; NULL: nowhere (standard output) */
	bool artifacts_spool; /* written to path/tmp/ first (maildir), else to a dot name */
};

int bench_sink_open(struct kx_bench_sink *s, enum kx_bench_sink_kind kind, const char *path,
		    bool lines, char *err, size_t errlen);
/* Write one manifest; for inbox and spool `name` is its file name. Returns the path written in
 * ret_path (may be NULL; heap string the caller frees) for a message. */
int bench_sink_write(struct kx_bench_sink *s, const struct kx_json *manifest, const char *name,
		     char **ret_path, char *err, size_t errlen);
/*
 * Where the sink's artifacts go: `dir` when given (--artifacts-dir), else the artifacts/ beside
 * the manifests: dirname(FILE)/artifacts for -o FILE, DIR/artifacts for an inbox or a spool, and
 * nowhere for standard output. Call after bench_sink_open; the directory is made when the first
 * artifact is written.
 */
int bench_sink_artifacts(struct kx_bench_sink *s, const char *dir);
/*
 * Put one artifact's bytes where the sink's artifacts go, as <64 hex of its digest>-<name> (the
 * name cut at a character boundary to keep the file name within 255 bytes), atomically: a
 * temporary name (DIR/.<hex>.<pid>.tmp, or the spool's tmp/<file name>), fsync, rename. The
 * bytes are `bytes` or, when it is NULL, a copy of a->path streamed in bounded pieces and checked
 * against a->digest and a->size. A file of that name and size already there is kept as it is (the
 * name holds the digest). *ret_path: the file written or found (heap; NULL when the sink has no
 * place for artifacts); *ret_written: whether it was written now. err says why on failure.
 */
int bench_sink_put_artifact(struct kx_bench_sink *s, const struct kx_bench_artifact *a,
			    const struct kx_buf *bytes, char **ret_path, bool *ret_written,
			    char *err, size_t errlen);
/* Write a whole file atomically: PATH.tmp.<pid>, fsync, rename. */
int bench_write_file(const char *path, const struct kx_buf *b, char *err, size_t errlen);
/* Every manifest written is already in place (FILE holds all of them so far): closing only frees,
 * and an error in a later run leaves the earlier ones where they are. */
void bench_sink_close(struct kx_bench_sink *s);

/* ---- the CPU selftest (cpu.c) ----------------------------------------------------------------- */

struct kx_cpu_case;
bool bench_cpu_has_impl(enum kx_bench_kind kind, const char *impl);
int bench_cpu_case_new(const struct kx_bench_shape *shape, uint64_t flush_bytes,
		       struct kx_cpu_case **ret, char *err, size_t errlen);
void bench_cpu_case_free(struct kx_cpu_case *c);
int bench_cpu_case_check(struct kx_cpu_case *c, const struct kx_bench_policy *p,
			 struct kx_bench_check *ret);
uint64_t bench_cpu_case_peak_bytes(const struct kx_cpu_case *c);
/* Timer ops over clock_gettime(CLOCK_MONOTONIC) (ctx = the case); clock stays NULL. */
void bench_cpu_case_ops(struct kx_bench_ops *ops);

#endif
