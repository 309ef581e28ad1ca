// SPDX-License-Identifier: MIT
/*
 * RFC 3339 timestamps and units: the two small vocabularies the validator checks values against.
 * Time is converted by arithmetic (days from civil, Howard Hinnant's algorithm), not timegm(), so
 * it is independent of the process's TZ and thread-safe.
 */
#include "kx/manifest.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int *ry, unsigned *rm, unsigned *rd)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t y = (int64_t)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	unsigned d = doy - (153 * mp + 2) / 5 + 1;
	unsigned m = mp < 10 ? mp + 3 : mp - 9;
	*ry = (int)(y + (m <= 2));
	*rm = m;
	*rd = d;
}

int kx_time_parse(const char *s, int64_t *ret_ns)
{
	int y, mo, d, h, mi, se;
	size_t n = strlen(s);
	if (n < 20 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) || s[7] != '-' ||
	    digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') || digits(s + 11, 2, &h) ||
	    s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' || digits(s + 17, 2, &se))
		return -EINVAL;
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap) ||
	    h > 23 || mi > 59 || se > 60)
		return -EINVAL;
	const char *p = s + 19;
	int64_t frac = 0;
	if (*p == '.') {
		p++;
		int nd = 0;
		while (*p >= '0' && *p <= '9') {
			if (nd < 9)
				frac = frac * 10 + (*p - '0');
			nd++;
			p++;
		}
		if (!nd)
			return -EINVAL;
		for (; nd < 9; nd++)
			frac *= 10;
	}
	int64_t off = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om;
		if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) || oh > 23 || om > 59)
			return -EINVAL;
		off = (int64_t)(oh * 60 + om) * 60 * (*p == '+' ? 1 : -1);
		p += 6;
	} else {
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	if (se == 60) /* a leap second reads as the last second of its minute */
		se = 59;
	int64_t secs = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + se - off;
	/* nanoseconds in an int64 reach from 1677-09-21 to 2262-04-11: outside that, refuse rather
	 * than wrap (a year-9999 timestamp must not read as 1816) */
	int64_t ns;
	if (secs < 0 && frac > 0) { /* keep the intermediate in range at the low end */
		secs += 1;
		frac -= 1000000000;
	}
	if (__builtin_mul_overflow(secs, (int64_t)1000000000, &ns) || __builtin_add_overflow(ns, frac, &ns))
		return -EINVAL;
	*ret_ns = ns;
	return 0;
}

void kx_time_format(int64_t ns, char *out)
{
	int64_t secs = ns / 1000000000, rem = ns % 1000000000;
	if (rem < 0) {
		rem += 1000000000;
		secs--;
	}
	int64_t days = secs / 86400, sod = secs % 86400;
	if (sod < 0) {
		sod += 86400;
		days--;
	}
	int y;
	unsigned m, d;
	civil_from_days(days, &y, &m, &d);
	snprintf(out, 32, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", y % 10000, m % 100, d % 100, (int)(sod / 3600),
		 (int)(sod / 60 % 60), (int)(sod % 60), (int)(rem / 1000000));
}

static const struct {
	const char *unit, *metric;
	double factor;
} units[] = {
	{ "ns", "latency", 1 },           { "us", "latency", 1e3 },
	{ "ms", "latency", 1e6 },         { "s", "latency", 1e9 },
	{ "B", "memory", 1 },             { "KB", "memory", 1e3 },
	{ "MB", "memory", 1e6 },          { "GB", "memory", 1e9 },
	{ "KiB", "memory", 1024.0 },      { "MiB", "memory", 1048576.0 },
	{ "GiB", "memory", 1073741824.0 }, { "FLOP/s", "throughput", 1 },
	{ "GFLOP/s", "throughput", 1e9 }, { "TFLOP/s", "throughput", 1e12 },
	{ "B/s", "bandwidth", 1 },        { "GB/s", "bandwidth", 1e9 },
	{ "count", "count", 1 },          { "ratio", "ratio", 1 },
	{ "%", "ratio", 0.01 },           { "W", "power", 1 },
	{ "MHz", "frequency", 1e6 },      { "C", "temperature", 1 },
};

const char *kx_unit_metric(const char *unit, double *ret_factor)
{
	for (size_t i = 0; i < KX_ARRAY_SIZE(units); i++)
		if (strcmp(units[i].unit, unit) == 0) {
			if (ret_factor)
				*ret_factor = units[i].factor;
			return units[i].metric;
		}
	return NULL;
}
