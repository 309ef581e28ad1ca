// SPDX-License-Identifier: MIT
/*
 * The CPU selftest's workload end to end without the command line: both CPU implementations pass
 * their check against the fp64 reference, a tolerance of zero makes the same check fail with a
 * message, the timer ops return real monotonic-clock samples, and the kindex sampling rules run
 * over them.
 */
#include "bench.h"
#include "tap.h"

int main(void)
{
	const char *impls[] = { "kindex-cpu-online", "kindex-cpu-two-pass" };
	ok(bench_cpu_has_impl(KX_KIND_CROSS_ENTROPY, impls[0]) &&
	   !bench_cpu_has_impl(KX_KIND_FLCE, impls[0]) &&
	   !bench_cpu_has_impl(KX_KIND_CROSS_ENTROPY, "kindex-online"),
	   "CPU implementations exist for cross_entropy only");
	for (size_t i = 0; i < 2; i++) {
		struct kx_bench_shape shape = { .kind = KX_KIND_CROSS_ENTROPY, .impl = impls[i],
						.m = 16, .n = 1000, .seed = 1, .check_rows = 16 };
		struct kx_cpu_case *c = NULL;
		char err[256];
		ok(bench_cpu_case_new(&shape, 1 << 20, &c, err, sizeof(err)) == 0, "%s: case", impls[i]);
		if (!c)
			continue;
		struct kx_bench_check chk;
		struct kx_bench_policy pol;
		bench_policy_for("fp32", &pol);
		ok(bench_cpu_case_check(c, &pol, &chk) == 0 && chk.passed &&
		   chk.checked == 17, "%s matches the fp64 reference (16 rows and the mean)", impls[i]);
		diag("max abs error %g, max rel error %g", chk.max_abs, chk.max_rel);
		struct kx_bench_tolerance zero = { "fp32", "loss", 0, 0, NULL };
		pol.loss = &zero;
		ok(bench_cpu_case_check(c, &pol, &chk) == 0 && !chk.passed &&
		   !strncmp(chk.message, "correctness failed:", 19),
		   "with zero tolerance the same check fails: %s", chk.message);
		ok(bench_cpu_case_peak_bytes(c) == 16 * 1000 * 4 + 16 * 4 + 16 * 4,
		   "peak bytes: logits, targets, per-row loss");

		struct kx_bench_ops ops;
		bench_cpu_case_ops(&ops);
		uint64_t ns[3];
		ok(ops.time_calls(c, 3, true, ns, NULL) == 0 && ns[0] > 0 && ns[1] > 0 && ns[2] > 0,
		   "timed calls take time (%llu ns)", (unsigned long long)ns[0]);
		ok(ops.clock == NULL, "CPU clocks are not watched");

		struct kx_bench_protocol p;
		bench_protocol_init(&p, KX_PROTOCOL_KINDEX, KX_TIMER_CPU_MONOTONIC);
		p.warmup_s = 0.01;
		p.min_time_s = 0.01;
		p.timeout_s = 0.5;
		struct kx_bench_samples s;
		int r = bench_measure(&p, &ops, c, NULL, &s);
		ok(r == 0 && s.n >= 10 &&
		   (s.stop == KX_STOP_CONVERGED || s.stop == KX_STOP_SETTLED || s.stop == KX_STOP_TIMEOUT),
		   "sampled under the kindex rules: %zu samples, %s", s.n, bench_stop_name(s.stop));
		bench_samples_release(&s);

		bench_protocol_init(&p, KX_PROTOCOL_DO_BENCH, KX_TIMER_CPU_MONOTONIC);
		p.db_rep_ms = 5;
		p.db_warmup_ms = 1;
		ok(bench_measure(&p, &ops, c, NULL, &s) == 0 && s.n == s.db_repeat && s.n >= 1,
		   "do_bench over the CPU timer: %zu repeats", s.n);
		bench_samples_release(&s);
		bench_cpu_case_free(c);
	}
	struct kx_bench_shape bad = { .kind = KX_KIND_CROSS_ENTROPY, .impl = "kindex-online", .m = 1, .n = 1 };
	struct kx_cpu_case *c = NULL;
	char err[256];
	ok(bench_cpu_case_new(&bad, 0, &c, err, sizeof(err)) == -EINVAL && c == NULL,
	   "a GPU implementation has no CPU case: %s", err);
	return tap_done();
}
