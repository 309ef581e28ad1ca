// SPDX-License-Identifier: MIT
/*
 * Environment mapping: the CUDA device name split into product and form factor so that the
 * index's GPU slug, slug(product + "-" + formFactor), equals slug(name) — the slug the Liger
 * import derives from the same GPU's gpu_name — with the real architecture, for the GPUs the
 * published data covers and the ones people run today (an H200 is an H200, never an H100); NVML
 * present or absent; and the CPU environment of the selftest from /proc/cpuinfo text.
 */
#include "bench.h"
#include "tap.h"

#include <math.h>

static const char *str_at(const struct kx_json *root, const char *ptr)
{
	const struct kx_json *v = kx_json_pointer(root, ptr);
	return v && v->type == KX_JSON_STRING ? v->str.ptr : NULL;
}

static const struct {
	const char *name, *product, *form, *slug;
	int major, minor;
	const char *arch;
} gpus[] = {
	{ "NVIDIA A100-SXM4-80GB", "NVIDIA A100", "SXM4-80GB", "nvidia-a100-sxm4-80gb", 8, 0, "sm_80" },
	{ "NVIDIA H100 80GB HBM3", "NVIDIA H100", "80GB HBM3", "nvidia-h100-80gb-hbm3", 9, 0, "sm_90" },
	{ "NVIDIA H100 PCIe", "NVIDIA H100", "PCIe", "nvidia-h100-pcie", 9, 0, "sm_90" },
	{ "NVIDIA H200", "NVIDIA H200", "", "nvidia-h200", 9, 0, "sm_90" },
	{ "NVIDIA H200 NVL", "NVIDIA H200", "NVL", "nvidia-h200-nvl", 9, 0, "sm_90" },
	{ "NVIDIA B200", "NVIDIA B200", "", "nvidia-b200", 10, 0, "sm_100" },
	{ "NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3090", "", "nvidia-geforce-rtx-3090", 8, 6, "sm_86" },
	{ "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090", "", "nvidia-geforce-rtx-4090", 8, 9, "sm_89" },
	{ "NVIDIA A100 80GB PCIe", "NVIDIA A100", "80GB PCIe", "nvidia-a100-80gb-pcie", 8, 0, "sm_80" },
	{ "NVIDIA GH200 480GB", "NVIDIA GH200", "480GB", "nvidia-gh200-480gb", 9, 0, "sm_90" },
	{ "NVIDIA RTX A6000", "NVIDIA RTX A6000", "", "nvidia-rtx-a6000", 8, 6, "sm_86" },
	{ "NVIDIA L40S", "NVIDIA L40S", "", "nvidia-l40s", 8, 9, "sm_89" },
	{ "Tesla V100-SXM2-16GB", "Tesla V100", "SXM2-16GB", "tesla-v100-sxm2-16gb", 7, 0, "sm_70" },
	{ "  NVIDIA H100 NVL ", "NVIDIA H100", "NVL", "nvidia-h100-nvl", 9, 0, "sm_90" },
};

static void split(void)
{
	for (size_t i = 0; i < KX_ARRAY_SIZE(gpus); i++) {
		char product[128], form[128], both[260], s1[260], s2[260];
		kx_rank_gpu_split(gpus[i].name, product, sizeof(product), form, sizeof(form));
		ok(!strcmp(product, gpus[i].product) && !strcmp(form, gpus[i].form),
		   "'%s' -> product '%s', form factor '%s'", gpus[i].name, product, form);
		snprintf(both, sizeof(both), "%s%s%s", product, form[0] ? "-" : "", form);
		kx_slug(both, strlen(both), s1, sizeof(s1));
		kx_slug(gpus[i].name, strlen(gpus[i].name), s2, sizeof(s2));
		ok(!strcmp(s1, s2) && !strcmp(s1, gpus[i].slug), "GPU slug %s = slug(device name)", s1);
	}
	char product[128], form[128];
	kx_rank_gpu_split("NVIDIA H200", product, sizeof(product), form, sizeof(form));
	ok(strstr(product, "H100") == NULL && strstr(product, "H200") != NULL, "an H200 is not an H100");
	kx_rank_gpu_split("", product, sizeof(product), form, sizeof(form));
	ok(!product[0] && !form[0], "an empty name gives empty parts");
	char tiny[6];
	kx_rank_gpu_split("NVIDIA A100-SXM4-80GB", tiny, sizeof(tiny), form, sizeof(form));
	is_str(tiny, "NVIDI", "a short buffer truncates safely");
}

static void slugs(void)
{
	/* the index's slug (kx_slug) is what the GPU directory is named by: the split must keep it */
	char s[64];
	kx_slug("Intel(R) Xeon(R) Platinum 8480+", 31, s, sizeof(s));
	is_str(s, "intel-r-xeon-r-platinum-8480", "CPU product slug: runs of other characters become one '-'");
	char arch[16];
	bench_sm_arch(10, 0, arch);
	is_str(arch, "sm_100", "compute capability 10.0 is sm_100");
	bench_sm_arch(8, 9, arch);
	is_str(arch, "sm_89", "8.9 is sm_89");
}

static void gpu_documents(void)
{
	struct kx_arena *a = kx_arena_new();
	for (size_t i = 0; i < KX_ARRAY_SIZE(gpus); i++) {
		struct kx_gpu_info gi = { .cc_major = gpus[i].major, .cc_minor = gpus[i].minor,
					  .sm_count = 100, .memory_bytes = 80ull << 30, .l2_bytes = 50u << 20,
					  .sm_clock_khz = 1755000, .mem_clock_khz = 2619000,
					  .driver_version = 12080, .runtime_version = 13000,
					  .cublas_major = 13, .cublas_minor = 1, .nvcc_major = 13,
					  .archs = "sm_80 sm_90" };
		snprintf(gi.name, sizeof(gi.name), "%s", gpus[i].name);
		struct kx_json *env = bench_gpu_environment(a, &gi, NULL);
		ok(env && !strcmp(str_at(env, "/spec/hardware/vendor"), "nvidia") &&
		   !strcmp(str_at(env, "/spec/hardware/product"), gpus[i].product) &&
		   !strcmp(str_at(env, "/spec/hardware/architecture"), gpus[i].arch),
		   "%s: vendor nvidia, product %s, %s", gpus[i].name, gpus[i].product, gpus[i].arch);
		const char *form = str_at(env, "/spec/hardware/formFactor");
		ok(gpus[i].form[0] ? form && !strcmp(form, gpus[i].form) : form == NULL,
		   "formFactor %s", gpus[i].form[0] ? gpus[i].form : "absent");
	}
	struct kx_gpu_info gi = { .cc_major = 9, .cc_minor = 0, .sm_clock_khz = 1980000,
				  .mem_clock_khz = 3201000, .driver_version = 12080,
				  .runtime_version = 13000, .cublas_major = 13, .cublas_minor = 1,
				  .cublas_patch = 3, .nvcc_major = 13, .archs = "sm_90" };
	strcpy(gi.name, "NVIDIA H200");
	struct kx_json *env = bench_gpu_environment(a, &gi, NULL);
	is_str(str_at(env, "/spec/software/cudaDriver"), "12.8", "driver version 12080 is 12.8");
	is_str(str_at(env, "/spec/software/cudaRuntime"), "13.0", "runtime 13.0");
	is_str(str_at(env, "/spec/software/cublas"), "13.1.3", "cuBLAS version");
	ok(kx_json_pointer(env, "/spec/software/nvmlDriver") == NULL, "no NVML: no NVML driver version");
	is_str(str_at(env, "/spec/software/clocks/source"), "cudaDeviceGetAttribute", "clocks from CUDA");
	ok(kx_json_pointer(env, "/spec/software/clocks/smMaxMHz")->number == 1980, "peak SM clock in MHz");
	ok(kx_json_pointer(env, "/spec/software/powerLimitW") == NULL, "no NVML: no power limit");

	struct kx_nvml_static nv = { .present = true, .sm_max_mhz = 1980, .mem_max_mhz = 3201,
				     .power_limit_mw = 700000 };
	strcpy(nv.driver, "580.95.05");
	env = bench_gpu_environment(a, &gi, &nv);
	is_str(str_at(env, "/spec/software/nvmlDriver"), "580.95.05", "NVML driver version");
	is_str(str_at(env, "/spec/software/clocks/source"), "nvml", "clocks from NVML");
	ok(kx_json_pointer(env, "/spec/software/powerLimitW")->number == 700, "power limit in W");
	is_str(str_at(env, "/kind"), "ExecutionEnvironment", "kind");
	struct kx_digest d1, d2;
	ok(bench_gpu_environment(a, &gi, &nv) && kx_digest_document(env, &d1) == 0 &&
	   kx_digest_document(bench_gpu_environment(a, &gi, &nv), &d2) == 0 && kx_digest_equal(&d1, &d2),
	   "one machine, one environment digest");
	kx_arena_free(a);
}

static void cpu(void)
{
	static const char x86[] =
		"processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n"
		"model name\t: Intel(R) Xeon(R) Platinum 8480+\nflags\t\t: fpu vme\n\n"
		"processor\t: 1\nvendor_id\t: GenuineIntel\nmodel name\t: Something Else\n\n";
	struct kx_bench_cpu_info ci = { 0 };
	bench_cpuinfo_parse(x86, sizeof(x86) - 1, &ci);
	is_str(ci.vendor, "intel", "GenuineIntel is intel");
	is_str(ci.product, "Intel(R) Xeon(R) Platinum 8480+", "model name of the first processor");

	static const char amd[] = "vendor_id : AuthenticAMD\nmodel name : AMD EPYC 9654 96-Core Processor\n";
	bench_cpuinfo_parse(amd, sizeof(amd) - 1, &ci);
	ok(!strcmp(ci.vendor, "amd") && !strcmp(ci.product, "AMD EPYC 9654 96-Core Processor"), "AMD");

	static const char arm[] = "processor\t: 0\nBogoMIPS\t: 2000.00\nCPU implementer\t: 0x41\n"
				  "CPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd0c\n\n";
	bench_cpuinfo_parse(arm, sizeof(arm) - 1, &ci);
	ok(!strcmp(ci.vendor, "arm") && !strcmp(ci.product, "arm CPU part 0xd0c"),
	   "arm64 has no model name: vendor arm, product names the part");
	bench_cpuinfo_parse("", 0, &ci);
	ok(!strcmp(ci.vendor, "unknown") && !strcmp(ci.product, "unknown CPU"), "nothing known");

	struct kx_bench_cpu_info here;
	bench_cpu_capture(&here);
	ok(here.product[0] && here.arch[0] && here.cpus > 0 && here.llc_bytes > 0,
	   "this machine: %s, %s, %ld CPUs, %llu B last-level cache", here.product, here.arch,
	   here.cpus, (unsigned long long)here.llc_bytes);
	struct kx_arena *a = kx_arena_new();
	struct kx_json *env = bench_cpu_environment(a, &here);
	is_str(str_at(env, "/spec/hardware/product"), here.product, "CPU environment: product");
	is_str(str_at(env, "/spec/hardware/vendor"), here.vendor, "CPU environment: vendor");
	is_str(str_at(env, "/spec/hardware/architecture"), here.arch, "CPU environment: uname -m");
	ok(kx_json_pointer(env, "/spec/hardware/formFactor") == NULL, "a CPU has no form factor");
	kx_arena_free(a);
}

int main(void)
{
	split();
	slugs();
	gpu_documents();
	cpu();
	return tap_done();
}
