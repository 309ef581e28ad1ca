// SPDX-License-Identifier: MIT
/* Small helpers every module needs: hex encoding, clocks, parsing the numbers and sizes users give. */
#include "kx/common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void kx_copyn(char *dst, size_t cap, const char *src, size_t n)
{
	if (!cap)
		return;
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

void kx_hex(const uint8_t *bytes, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * len] = '\0';
}

/* value + 1 of each hex digit, 0 for other bytes: a table because digests are parsed per manifest */
static const unsigned char hexvals[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
	['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

static int hexval(char c)
{
	return (int)hexvals[(unsigned char)c] - 1;
}

int kx_unhex(const char *hex, size_t hexlen, uint8_t *out, size_t len)
{
	if (hexlen != 2 * len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* Bytes of the UTF-8 character at s (of n), or 0 when it is not one (overlong forms included). */
static size_t utf8_char(const unsigned char *s, size_t n)
{
	size_t k = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (!k || k > n || (k == 2 && s[0] < 0xc2) || (k == 3 && s[0] == 0xe0 && s[1] < 0xa0) ||
	    (k == 3 && s[0] == 0xed && s[1] >= 0xa0) || (k == 4 && s[0] == 0xf0 && s[1] < 0x90) ||
	    (k == 4 && s[0] > 0xf4) || (k == 4 && s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return k;
}

const char *kx_quote(char buf[KX_QUOTE_SIZE], const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t o = 0, i = 0;
	buf[o++] = '\'';
	for (unsigned chars = 0; i < len && chars < KX_QUOTE_CHARS; chars++) {
		size_t k = u[i] < 0x20 || u[i] == 0x7f ? 0 : utf8_char(u + i, len - i);
		if (k) {
			memcpy(buf + o, s + i, k);
			o += k;
			i += k;
		} else {
			o += (size_t)snprintf(buf + o, 5, "\\x%02x", u[i]);
			i++;
		}
	}
	if (i < len)
		snprintf(buf + o, KX_QUOTE_SIZE - o, "\u2026' (+%zu bytes)", len - i);
	else
		snprintf(buf + o, KX_QUOTE_SIZE - o, "'");
	return buf;
}

int kx_parse_size(const char *s, bool suffixes, uint64_t min, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;
	bool over = false;
	const char *p = s;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			over = true;
		else
			v = v * 10 + d;
	}
	if (p == s)
		return -EINVAL;
	unsigned shift = 0;
	if (suffixes) {
		switch (*p) {
		case 'k': case 'K': shift = 10; p++; break;
		case 'm': case 'M': shift = 20; p++; break;
		case 'g': case 'G': shift = 30; p++; break;
		default: break;
		}
		if (shift && p[0] == 'i' && (p[1] == 'B' || p[1] == 'b'))
			p += 2;
		else if (*p == 'B' || *p == 'b')
			p++;
	}
	if (*p)
		return -EINVAL;
	if (over || v > (UINT64_MAX >> shift))
		return -ERANGE;
	v <<= shift;
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int kx_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	return kx_parse_size(s, false, min, max, ret);
}

int kx_parse_decimal(const char *s, double min, double max, double *ret)
{
	size_t whole = strspn(s, "0123456789"), frac = 0;
	if (s[whole] == '.')
		frac = strspn(s + whole + 1, "0123456789");
	const char *end = s + whole + (s[whole] == '.' ? 1 + frac : 0);
	if (whole + frac == 0 || *end)
		return -EINVAL;
	/* what is left is in strtod's syntax in every locale we run in ("C": nothing calls
	 * setlocale), which glibc rounds correctly; a value past DBL_MAX is HUGE_VAL */
	double v = strtod(s, NULL);
	if (!(v >= min && v <= max))
		return -ERANGE;
	*ret = v;
	return 0;
}

int kx_grow(void *array, size_t *cap, size_t len, size_t size, size_t first)
{
	if (len < *cap)
		return 0;
	size_t n = *cap ? *cap * 2 : first;
	if (n < len + 1 || n > SIZE_MAX / size)
		return -ENOMEM;
	void *old, *v;
	memcpy(&old, array, sizeof(old)); /* the caller's T *, whatever T */
	if (!(v = realloc(old, n * size)))
		return -ENOMEM;
	memcpy(array, &v, sizeof(v));
	*cap = n;
	return 0;
}

int64_t kx_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct timespec kx_timespec_from_ns(int64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000), .tv_nsec = (long)(ns % 1000000000) };
	if (ts.tv_nsec < 0) { /* C division truncates toward zero */
		ts.tv_sec--;
		ts.tv_nsec += 1000000000;
	}
	return ts;
}

double kx_monotonic(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int kx_name_cmp(const char *a, const char *b)
{
	const char *x = a, *y = b;
	while (*x && *y) {
		bool dx = *x >= '0' && *x <= '9', dy = *y >= '0' && *y <= '9';
		if (!dx || !dy) {
			if (*x != *y)
				return (unsigned char)*x < (unsigned char)*y ? -1 : 1;
			x++, y++;
			continue;
		}
		while (*x == '0')
			x++;
		while (*y == '0')
			y++;
		size_t nx = strspn(x, "0123456789"), ny = strspn(y, "0123456789");
		if (nx != ny)
			return nx < ny ? -1 : 1;
		int c = memcmp(x, y, nx);
		if (c)
			return c < 0 ? -1 : 1;
		x += nx, y += ny;
	}
	if (*x || *y)
		return *x ? 1 : -1;
	int c = strcmp(a, b);
	return c < 0 ? -1 : c > 0;
}
