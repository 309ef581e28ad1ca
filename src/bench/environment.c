// SPDX-License-Identifier: MIT
/*
 * ExecutionEnvironment documents: where a run was measured. For a GPU, what CUDA and NVML report,
 * with the device name split into product and form factor so that the index's GPU slug
 * (slug(product + "-" + formFactor)) is exactly the slug of the name CUDA reports, the same slug
 * the Liger import derives from its gpu_name column: an H200 lands under nvidia-h200, never under
 * an H100 directory. For the CPU selftest, the processor from /proc/cpuinfo and the system from
 * uname.
 *
 * Only configuration goes into the environment (peak clocks, power limit, versions); what varies
 * from run to run (current clocks, throttling) goes into the run, so one machine keeps one
 * environment digest.
 */
#include "bench.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

void bench_sm_arch(int major, int minor, char out[16])
{
	snprintf(out, 16, "sm_%d%d", major, minor);
}

static char *version_text(struct kx_arena *a, int v)
{
	/* CUDA's encoding: 1000 * major + 10 * minor */
	return kx_arena_printf(a, "%d.%d", v / 1000, (v % 1000) / 10);
}

struct kx_json *bench_gpu_environment(struct kx_arena *a, const struct kx_gpu_info *gi,
				      const struct kx_nvml_static *nv)
{
	struct kx_json *doc = kx_json_new(a, KX_JSON_OBJECT), *meta = kx_json_new(a, KX_JSON_OBJECT),
		       *spec = kx_json_new(a, KX_JSON_OBJECT), *hw = kx_json_new(a, KX_JSON_OBJECT),
		       *sw = kx_json_new(a, KX_JSON_OBJECT), *clocks = kx_json_new(a, KX_JSON_OBJECT),
		       *kb = kx_json_new(a, KX_JSON_OBJECT);
	if (!doc || !meta || !spec || !hw || !sw || !clocks || !kb)
		return NULL;
	char product[256], form[256], arch[16], slug[256];
	kx_rank_gpu_split(gi->name, product, sizeof(product), form, sizeof(form));
	bench_sm_arch(gi->cc_major, gi->cc_minor, arch);
	kx_slug(gi->name, strlen(gi->name), slug, sizeof(slug));
	int r = 0;
	r |= kx_bench_set_str(a, hw, "vendor", "nvidia");
	r |= kx_bench_set_str(a, hw, "product", product);
	if (form[0])
		r |= kx_bench_set_str(a, hw, "formFactor", form);
	r |= kx_bench_set_str(a, hw, "architecture", arch);
	r |= kx_bench_set_str(a, hw, "deviceName", gi->name);
	r |= kx_json_set_number(a, hw, "smCount", gi->sm_count);
	r |= kx_json_set_number(a, hw, "memoryBytes", (double)gi->memory_bytes);
	r |= kx_json_set_number(a, hw, "l2CacheBytes", (double)gi->l2_bytes);
	r |= kx_json_set_number(a, hw, "memoryBusWidthBits", gi->mem_bus_bits);

	r |= kx_bench_set_str(a, sw, "cudaDriver", version_text(a, gi->driver_version));
	r |= kx_bench_set_str(a, sw, "cudaRuntime", version_text(a, gi->runtime_version));
	r |= kx_bench_set_str(a, sw, "cublas",
				kx_arena_printf(a, "%d.%d.%d", gi->cublas_major, gi->cublas_minor,
						gi->cublas_patch));
	bool nvml = nv && nv->present;
	if (nvml)
		r |= kx_bench_set_str(a, sw, "nvmlDriver", nv->driver);
	r |= kx_bench_set_str(a, clocks, "source", nvml && nv->sm_max_mhz ? "nvml" : "cudaDeviceGetAttribute");
	r |= kx_json_set_number(a, clocks, "smMaxMHz",
				nvml && nv->sm_max_mhz ? (double)nv->sm_max_mhz : gi->sm_clock_khz / 1000);
	r |= kx_json_set_number(a, clocks, "memoryMaxMHz",
				nvml && nv->mem_max_mhz ? (double)nv->mem_max_mhz : gi->mem_clock_khz / 1000);
	r |= kx_json_set(a, sw, "clocks", clocks);
	if (nvml && nv->power_limit_mw)
		r |= kx_json_set_number(a, sw, "powerLimitW", nv->power_limit_mw / 1000.0);
	r |= kx_json_set(a, sw, "eccEnabled", kx_json_new_bool(a, gi->ecc != 0));
	r |= kx_bench_set_str(a, kb, "version", KX_VERSION);
	r |= kx_bench_set_str(a, kb, "nvcc", kx_arena_printf(a, "%d.%d", gi->nvcc_major, gi->nvcc_minor));
	r |= kx_bench_set_str(a, kb, "cudaArchitectures", gi->archs ? gi->archs : "");
	r |= kx_json_set(a, sw, "kindexBench", kb);

	r |= kx_json_set(a, spec, "hardware", hw);
	r |= kx_json_set(a, spec, "software", sw);
	r |= kx_bench_set_str(a, meta, "name", kx_arena_printf(a, "kindex-bench-%s", slug));
	r |= kx_bench_set_str(a, meta, "title",
				kx_arena_printf(a, "%s · driver %s · CUDA %s", gi->name,
						nvml ? nv->driver : version_text(a, gi->driver_version),
						version_text(a, gi->runtime_version)));
	r |= kx_bench_set_str(a, doc, "apiVersion", KX_BENCH_API_VERSION);
	r |= kx_bench_set_str(a, doc, "kind", "ExecutionEnvironment");
	r |= kx_json_set(a, doc, "metadata", meta);
	r |= kx_json_set(a, doc, "spec", spec);
	return r < 0 ? NULL : doc;
}

/* ---- the CPU ------------------------------------------------------------------------------------- */

static const struct {
	const char *raw, *vendor;
} cpu_vendors[] = {
	{ "GenuineIntel", "intel" }, { "AuthenticAMD", "amd" }, { "HygonGenuine", "hygon" },
	{ "CentaurHauls", "centaur" }, { "0x41", "arm" }, { "0x61", "apple" },
	{ "0x4e", "nvidia" }, { "0x51", "qualcomm" }, { "0xc0", "ampere" }, { "0x48", "hisilicon" },
};

static void set_vendor(struct kx_bench_cpu_info *ci, const char *raw)
{
	for (size_t i = 0; i < KX_ARRAY_SIZE(cpu_vendors); i++)
		if (strcmp(cpu_vendors[i].raw, raw) == 0) {
			snprintf(ci->vendor, sizeof(ci->vendor), "%s", cpu_vendors[i].vendor);
			return;
		}
	kx_slug(raw, strlen(raw), ci->vendor, sizeof(ci->vendor));
}

void bench_cpuinfo_parse(const char *text, size_t len, struct kx_bench_cpu_info *ret)
{
	ret->vendor[0] = ret->product[0] = '\0';
	char part[64] = "";
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		const char *colon = memchr(p, ':', (size_t)(eol - p));
		if (eol == p && (ret->vendor[0] || ret->product[0]))
			break; /* the blank line after the first processor */
		if (colon) {
			const char *k = p, *ke = colon, *v = colon + 1, *ve = eol;
			while (ke > k && (ke[-1] == ' ' || ke[-1] == '\t'))
				ke--;
			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\r'))
				ve--;
			char key[64], val[192];
			kx_copyn(key, sizeof(key), k, (size_t)(ke - k));
			kx_copyn(val, sizeof(val), v, (size_t)(ve - v));
			if ((strcmp(key, "vendor_id") == 0 || strcmp(key, "CPU implementer") == 0) &&
			    !ret->vendor[0])
				set_vendor(ret, val);
			else if (strcmp(key, "model name") == 0 && !ret->product[0])
				snprintf(ret->product, sizeof(ret->product), "%s", val);
			else if (strcmp(key, "CPU part") == 0 && !part[0])
				kx_copyn(part, sizeof(part), val, strlen(val));
		}
		p = nl ? nl + 1 : end;
	}
	if (!ret->product[0] && part[0]) /* arm64 names no model: say which part it is */
		snprintf(ret->product, sizeof(ret->product), "%s CPU part %s",
			 ret->vendor[0] ? ret->vendor : "unknown", part);
	if (!ret->vendor[0])
		snprintf(ret->vendor, sizeof(ret->vendor), "unknown");
	if (!ret->product[0])
		snprintf(ret->product, sizeof(ret->product), "unknown CPU");
}

static uint64_t sysfs_llc(void)
{
	uint64_t best = 0;
	for (int i = 0; i < 8; i++) {
		char path[96], buf[64];
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f)) {
			char *e;
			uint64_t v = strtoull(buf, &e, 10);
			if (*e == 'K')
				v <<= 10;
			else if (*e == 'M')
				v <<= 20;
			if (v > best)
				best = v;
		}
		fclose(f);
	}
	return best;
}

void bench_cpu_capture(struct kx_bench_cpu_info *ret)
{
	memset(ret, 0, sizeof(*ret));
	struct kx_buf b;
	kx_buf_init(&b, 0);
	if (kx_read_file("/proc/cpuinfo", 16u << 20, &b) >= 0)
		bench_cpuinfo_parse(b.ptr, b.len, ret);
	else
		bench_cpuinfo_parse("", 0, ret);
	kx_buf_release(&b);
	struct utsname u;
	if (uname(&u) == 0) {
		kx_copyn(ret->arch, sizeof(ret->arch), u.machine, strlen(u.machine));
		snprintf(ret->os, sizeof(ret->os), "%s %s", u.sysname, u.release);
	} else {
		snprintf(ret->arch, sizeof(ret->arch), "unknown");
		snprintf(ret->os, sizeof(ret->os), "unknown");
	}
#ifdef __GLIBC__
	snprintf(ret->libc, sizeof(ret->libc), "glibc %s", gnu_get_libc_version());
#else
	snprintf(ret->libc, sizeof(ret->libc), "unknown");
#endif
#if defined(__clang__)
	snprintf(ret->compiler, sizeof(ret->compiler), "clang %s", __clang_version__);
#elif defined(__GNUC__)
	snprintf(ret->compiler, sizeof(ret->compiler), "gcc %s", __VERSION__);
#else
	snprintf(ret->compiler, sizeof(ret->compiler), "unknown");
#endif
	ret->cpus = sysconf(_SC_NPROCESSORS_ONLN);
	long llc = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
	llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
	if (llc <= 0)
		llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
	ret->llc_bytes = llc > 0 ? (uint64_t)llc : sysfs_llc();
	if (!ret->llc_bytes)
		ret->llc_bytes = 32u << 20; /* nothing says: assume a large server LLC */
}

struct kx_json *bench_cpu_environment(struct kx_arena *a, const struct kx_bench_cpu_info *ci)
{
	struct kx_json *doc = kx_json_new(a, KX_JSON_OBJECT), *meta = kx_json_new(a, KX_JSON_OBJECT),
		       *spec = kx_json_new(a, KX_JSON_OBJECT), *hw = kx_json_new(a, KX_JSON_OBJECT),
		       *sw = kx_json_new(a, KX_JSON_OBJECT), *kb = kx_json_new(a, KX_JSON_OBJECT);
	if (!doc || !meta || !spec || !hw || !sw || !kb)
		return NULL;
	char slug[256];
	kx_slug(ci->product, strlen(ci->product), slug, sizeof(slug));
	int r = 0;
	r |= kx_bench_set_str(a, hw, "vendor", ci->vendor);
	r |= kx_bench_set_str(a, hw, "product", ci->product);
	r |= kx_bench_set_str(a, hw, "architecture", ci->arch);
	r |= kx_json_set_number(a, hw, "logicalCpus", (double)ci->cpus);
	r |= kx_json_set_number(a, hw, "lastLevelCacheBytes", (double)ci->llc_bytes);
	r |= kx_bench_set_str(a, sw, "os", ci->os);
	r |= kx_bench_set_str(a, sw, "libc", ci->libc);
	r |= kx_bench_set_str(a, sw, "compiler", ci->compiler);
	r |= kx_bench_set_str(a, kb, "version", KX_VERSION);
	r |= kx_json_set_number(a, kb, "threads", 1);
	r |= kx_json_set(a, sw, "kindexBench", kb);
	r |= kx_json_set(a, spec, "hardware", hw);
	r |= kx_json_set(a, spec, "software", sw);
	r |= kx_bench_set_str(a, meta, "name", kx_arena_printf(a, "kindex-bench-cpu-%s", slug));
	r |= kx_bench_set_str(a, meta, "title",
				kx_arena_printf(a, "%s · %s · %s", ci->product, ci->arch, ci->os));
	r |= kx_bench_set_str(a, doc, "apiVersion", KX_BENCH_API_VERSION);
	r |= kx_bench_set_str(a, doc, "kind", "ExecutionEnvironment");
	r |= kx_json_set(a, doc, "metadata", meta);
	r |= kx_json_set(a, doc, "spec", spec);
	return r < 0 ? NULL : doc;
}
