/* SPDX-License-Identifier: MIT */
/*
 * Liger-Kernel's benchmark CSV (all_benchmark_data.csv) mapped to KernelIndex manifests,
 * SPEC §5. The columns are the contract — kernel_name, kernel_provider, kernel_operation_mode,
 * metric_name, metric_unit, x_name, x_value, y_value_50/20/80, extra_benchmark_config_str,
 * gpu_name, timestamp, liger_version — found by name in the header; kernels, parameters and GPUs
 * vary freely. A row that cannot be mapped is a problem naming its file and line, never skipped.
 */
#ifndef KX_LIGER_H
#define KX_LIGER_H

#include "kx/json.h"

/*
 * Build one manifest tree per data row of a CSV file into `a`. Appends to *roots / *labels
 * (malloc'd arrays grown as needed, *n updated); labels are "<file>:<line>" in the arena.
 * Returns 0, -EINVAL with problems appended (every bad row), -ENOMEM.
 */
int kx_liger_build(struct kx_arena *a, const char *file, const char *bytes, size_t len,
		   struct kx_json ***roots, const char ***labels, size_t *n,
		   struct kx_problems *problems);

/* The protocol document of a pass and metric ("forward", "latency" is the fixture's exactly). */
struct kx_json *kx_liger_protocol(struct kx_arena *a, const char *mode, const char *metric);

/*
 * The environment document of a CSV gpu_name: product and form factor chosen so that the GPU
 * slug equals the slug of the name, with the real architecture for GPUs we know
 * (NVIDIA A100 → sm_80, H100/H200 → sm_90, B200 → sm_100, RTX 3090 → sm_86, RTX 4090 → sm_89 …).
 */
struct kx_json *kx_liger_environment(struct kx_arena *a, const char *gpu_name);

#endif
