// SPDX-License-Identifier: MIT
/*
 * device.h for a build without CUDA (nvcc was not found, or -Dcuda=disabled): there is no device
 * to open, and bench_gpu_open says why, so `kindex-bench --run` fails with "no CUDA device: …"
 * while --list, --selftest and --record with a CPU environment work as in a CUDA build. The
 * other functions are unreachable without an open device and only keep the linker satisfied.
 */
#include "device.h"

#include <errno.h>
#include <stdio.h>

int bench_gpu_open(int ordinal, struct kx_gpu **ret, struct kx_gpu_info *ret_info, char *err,
		   size_t errlen)
{
	(void)ordinal;
	(void)ret;
	(void)ret_info;
	snprintf(err, errlen, "kindex-bench was built without CUDA (-Dcuda=disabled, or nvcc was "
			      "not on PATH when meson configured; see docs/harness.md)");
	return -ENODEV;
}

void bench_gpu_close(struct kx_gpu *g)
{
	(void)g;
}

int bench_gpu_set_flush(struct kx_gpu *g, size_t bytes, char *err, size_t errlen)
{
	(void)g;
	(void)bytes;
	snprintf(err, errlen, "no CUDA device");
	return -ENODEV;
}

unsigned bench_gpu_blocker_timeouts(const struct kx_gpu *g)
{
	(void)g;
	return 0;
}

int bench_gpu_case_new(struct kx_gpu *g, const struct kx_bench_shape *shape,
		       struct kx_gpu_case **ret, char *err, size_t errlen)
{
	(void)g;
	(void)shape;
	(void)ret;
	snprintf(err, errlen, "no CUDA device");
	return -ENODEV;
}

void bench_gpu_case_free(struct kx_gpu_case *c)
{
	(void)c;
}

int bench_gpu_case_check(struct kx_gpu_case *c, const struct kx_bench_policy *p,
			 struct kx_bench_check *ret, char *err, size_t errlen)
{
	(void)c;
	(void)p;
	(void)ret;
	snprintf(err, errlen, "no CUDA device");
	return -ENODEV;
}

uint64_t bench_gpu_case_peak_bytes(const struct kx_gpu_case *c)
{
	(void)c;
	return 0;
}

void bench_gpu_case_ops(struct kx_bench_ops *ops)
{
	*ops = (struct kx_bench_ops){ 0 };
}

const char *bench_gpu_case_error(const struct kx_gpu_case *c)
{
	(void)c;
	return "no CUDA device";
}

void bench_gpu_case_tunable(const struct kx_gpu_case *c, struct kx_bench_tunable *ret)
{
	(void)c;
	*ret = (struct kx_bench_tunable){ 0 };
}

int bench_gpu_case_set_tunable(struct kx_gpu_case *c, int64_t value)
{
	(void)c;
	(void)value;
	return -ENODEV;
}
