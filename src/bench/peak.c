// SPDX-License-Identifier: MIT
/*
 * What a device can do at most, and how close a run came: the dense bf16 tensor-core peak and
 * the memory bandwidth of the GPUs whose vendor datasheets state them, found by the exact CUDA
 * device name (a near miss — an NVL or PCIe variant of a known part — finds nothing rather than
 * the wrong figure), and the arithmetic from a run's median to TFLOP/s, GB/s and their fractions
 * of those peaks.
 *
 * Dense means without structured sparsity: NVIDIA's datasheets list sparse figures (twice the
 * dense ones) first, marked with an asterisk; the dense figure is half of it. Bandwidths are the
 * datasheets' "GPU memory bandwidth" in GB/s (10^9 bytes per second).
 */
#include "bench.h"

#include <string.h>

static const struct kx_bench_peak peaks[] = {
	/* NVIDIA A100 Tensor Core GPU datasheet: BF16 Tensor Core 312 TFLOPS (624 with sparsity);
	 * memory bandwidth 2,039 GB/s (80GB SXM), 1,935 GB/s (80GB PCIe), 1,555 GB/s (40GB) */
	{ "NVIDIA A100-SXM4-80GB", 312, 2039, "NVIDIA A100 datasheet (80GB SXM)" },
	{ "NVIDIA A100 80GB PCIe", 312, 1935, "NVIDIA A100 datasheet (80GB PCIe)" },
	{ "NVIDIA A100-SXM4-40GB", 312, 1555, "NVIDIA A100 datasheet (40GB SXM)" },
	{ "NVIDIA A100-PCIE-40GB", 312, 1555, "NVIDIA A100 datasheet (40GB PCIe)" },
	/* NVIDIA H100 Tensor Core GPU datasheet: BF16 Tensor Core 1,979 TFLOPS with sparsity (SXM),
	 * 1,513 (PCIe); memory bandwidth 3.35 TB/s (SXM), 2 TB/s (PCIe). The SXM5 part names itself
	 * "NVIDIA H100 80GB HBM3"; 989.4 is the Hopper whitepaper's dense figure (1,978.9 / 2). */
	{ "NVIDIA H100 80GB HBM3", 989.4, 3350, "NVIDIA H100 datasheet (SXM)" },
	{ "NVIDIA H100 PCIe", 756.5, 2000, "NVIDIA H100 datasheet (PCIe)" },
	/* NVIDIA H200 Tensor Core GPU datasheet: BF16 Tensor Core 1,979 TFLOPS with sparsity (SXM);
	 * memory bandwidth 4.8 TB/s */
	{ "NVIDIA H200", 989.4, 4800, "NVIDIA H200 datasheet (SXM)" },
};

const struct kx_bench_peak *bench_peak_find(const char *device)
{
	for (size_t i = 0; device && i < KX_ARRAY_SIZE(peaks); i++)
		if (strcmp(peaks[i].device, device) == 0)
			return &peaks[i];
	return NULL;
}

void bench_figures_of(double flops, double bytes, double median_ns,
		      const struct kx_bench_peak *peak, struct kx_bench_figures *ret)
{
	struct kx_bench_figures f = { 0 };
	if (median_ns > 0) {
		f.tflops = flops / median_ns / 1e3; /* FLOP per ns is GFLOP/s */
		f.gbps = bytes / median_ns;         /* bytes per ns is GB/s */
	}
	if (peak && peak->bf16_tflops > 0)
		f.compute_fraction = f.tflops / peak->bf16_tflops;
	if (peak && peak->memory_gbps > 0)
		f.bandwidth_fraction = f.gbps / peak->memory_gbps;
	*ret = f;
}
