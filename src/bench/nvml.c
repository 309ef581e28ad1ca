// SPDX-License-Identifier: MIT
/*
 * NVML through dlopen: the driver version, peak clocks and power limit for the environment, and
 * the SM clock and clock event reasons the sampler polls to flag throttled samples. NVML ships
 * with the driver, not the toolkit, so kindex-bench never links it: where libnvidia-ml.so.1 is
 * missing (containers without the driver's utilities, CI) bench_nvml_open fails with -ENOENT and
 * the sampler falls back to the %globaltimer/clock64 probe kernel.
 *
 * The few NVML declarations are written out here (no nvml.h needed to build); the values are
 * NVML's stable ABI: NVML_SUCCESS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, and the clock event
 * reason bits listed in `reasons`.
 */
#include "bench.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nvml_device; /* opaque nvmlDevice_t */

struct kx_nvml {
	void *lib;
	struct nvml_device *dev;
	int (*shutdown)(void);
	int (*clock_info)(struct nvml_device *, int, unsigned *);
	int (*max_clock_info)(struct nvml_device *, int, unsigned *);
	int (*reasons)(struct nvml_device *, unsigned long long *);
	int (*power_limit)(struct nvml_device *, unsigned *);
	int (*driver_version)(char *, unsigned);
};

enum { NVML_OK = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

static void *sym(void *lib, const char *a, const char *b)
{
	void *p = dlsym(lib, a);
	return p || !b ? p : dlsym(lib, b);
}

int bench_nvml_open(const char *pci_bus_id, struct kx_nvml **ret, char *err, size_t errlen)
{
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(err, errlen, "cannot load libnvidia-ml.so.1: %s", dlerror());
		return -ENOENT;
	}
	int (*init)(void) = (int (*)(void))sym(lib, "nvmlInit_v2", "nvmlInit");
	int (*by_pci)(const char *, struct nvml_device **) =
		(int (*)(const char *, struct nvml_device **))sym(
			lib, "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId");
	struct kx_nvml *n = calloc(1, sizeof(*n));
	if (!n) {
		dlclose(lib);
		return -ENOMEM;
	}
	n->lib = lib;
	n->shutdown = (int (*)(void))sym(lib, "nvmlShutdown", NULL);
	n->clock_info = (int (*)(struct nvml_device *, int, unsigned *))sym(lib, "nvmlDeviceGetClockInfo", NULL);
	n->max_clock_info = (int (*)(struct nvml_device *, int, unsigned *))sym(lib, "nvmlDeviceGetMaxClockInfo", NULL);
	/* renamed in NVML 12.x; the old name stays as an alias in older drivers */
	n->reasons = (int (*)(struct nvml_device *, unsigned long long *))sym(
		lib, "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons");
	n->power_limit = (int (*)(struct nvml_device *, unsigned *))sym(lib, "nvmlDeviceGetEnforcedPowerLimit", NULL);
	n->driver_version = (int (*)(char *, unsigned))sym(lib, "nvmlSystemGetDriverVersion", NULL);
	int rc;
	if (!init || !by_pci || !n->shutdown) {
		snprintf(err, errlen, "libnvidia-ml.so.1 lacks nvmlInit or nvmlDeviceGetHandleByPciBusId");
		rc = -ENOENT;
		goto fail;
	}
	if ((rc = init()) != NVML_OK) {
		snprintf(err, errlen, "nvmlInit failed: NVML error %d", rc);
		n->shutdown = NULL; /* nothing to shut down */
		rc = -EIO;
		goto fail;
	}
	if ((rc = by_pci(pci_bus_id, &n->dev)) != NVML_OK) {
		snprintf(err, errlen, "nvmlDeviceGetHandleByPciBusId('%s') failed: NVML error %d",
			 pci_bus_id, rc);
		rc = -ENODEV;
		goto fail;
	}
	*ret = n;
	return 0;
fail:
	bench_nvml_close(n);
	return rc;
}

void bench_nvml_close(struct kx_nvml *n)
{
	if (!n)
		return;
	if (n->shutdown)
		n->shutdown();
	dlclose(n->lib);
	free(n);
}

void bench_nvml_static_info(struct kx_nvml *n, struct kx_nvml_static *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->present = true;
	if (!n->driver_version || n->driver_version(ret->driver, sizeof(ret->driver)) != NVML_OK)
		snprintf(ret->driver, sizeof(ret->driver), "unknown");
	if (n->max_clock_info) {
		if (n->max_clock_info(n->dev, NVML_CLOCK_SM, &ret->sm_max_mhz) != NVML_OK)
			ret->sm_max_mhz = 0;
		if (n->max_clock_info(n->dev, NVML_CLOCK_MEM, &ret->mem_max_mhz) != NVML_OK)
			ret->mem_max_mhz = 0;
	}
	if (!n->power_limit || n->power_limit(n->dev, &ret->power_limit_mw) != NVML_OK)
		ret->power_limit_mw = 0;
}

int bench_nvml_poll(struct kx_nvml *n, struct kx_bench_clock *ret)
{
	memset(ret, 0, sizeof(*ret));
	unsigned mhz = 0;
	if (n->clock_info && n->clock_info(n->dev, NVML_CLOCK_SM, &mhz) == NVML_OK)
		ret->sm_mhz = mhz;
	unsigned long long r = 0;
	if (n->reasons && n->reasons(n->dev, &r) == NVML_OK) {
		ret->reasons = r & KX_NVML_THROTTLE_MASK;
		ret->reasons_known = true;
	}
	/* with reasons available the clock ratio is not needed: NVML says why it is low */
	ret->throttled = ret->reasons != 0;
	return 0;
}

static const struct {
	uint64_t bit;
	const char *name;
} reasons[] = {
	{ 0x1, "gpu_idle" },
	{ 0x2, "applications_clocks_setting" },
	{ 0x4, "sw_power_cap" },
	{ 0x8, "hw_slowdown" },
	{ 0x10, "sync_boost" },
	{ 0x20, "sw_thermal_slowdown" },
	{ 0x40, "hw_thermal_slowdown" },
	{ 0x80, "hw_power_brake_slowdown" },
	{ 0x100, "display_clock_setting" },
};

struct kx_json *bench_nvml_reason_names(struct kx_arena *a, uint64_t bits)
{
	struct kx_json *arr = kx_json_new(a, KX_JSON_ARRAY);
	for (size_t i = 0; arr && i < KX_ARRAY_SIZE(reasons); i++)
		if ((bits & reasons[i].bit) &&
		    kx_json_append(a, arr, kx_json_new_string(a, reasons[i].name)) < 0)
			return NULL;
	return arr;
}
