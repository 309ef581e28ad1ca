// SPDX-License-Identifier: MIT
/*
 * ECMAScript Number.prototype.toString for finite doubles (ECMA-262 §6.1.6.1.20), which RFC 8785
 * requires for every JSON number.
 *
 * The digits: ECMAScript wants the fewest decimal digits k such that some k-digit decimal reads
 * back as the same double, and among those the one closest to it. glibc's printf rounds exactly
 * and its strtod reads exactly, so for a precision p the correctly rounded p-digit decimal c(p) is
 * the closest p-digit candidate; "some p-digit decimal round-trips" is monotone in p, so a binary
 * search over p = 1..17 finds k. One subtlety: when the double is a power of two, the interval
 * of decimals that read back as it is narrower below than above, so c(p) can miss it while the
 * p-digit decimal on the other side of the value hits it. At each p we therefore also try the
 * neighbour of c(p) across the value. The layout rules (plain, fraction, 1e+21 exponent forms)
 * follow the specification's steps 6-10 literally.
 *
 * Verified byte-exact against the 1,000,000-line ES6 test vector in the unit suite and the
 * 10,000,000-line one in the slow suite (tests/unit/test-number.c).
 */
#include "kx/canon.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dec {
	char d[24]; /* significant digits, no leading zero, NUL-terminated */
	int k;      /* number of digits */
	int n;      /* decimal exponent: value = 0.d1d2...dk * 10^n */
};

/* The correctly rounded p-digit decimal of v (> 0). */
static void round_to(double v, int p, struct dec *out)
{
	char tmp[40];
	snprintf(tmp, sizeof(tmp), "%.*e", p - 1, v);
	/* tmp is "d.ddddde[+-]xx" or "de[+-]xx" when p == 1 */
	int k = 0;
	const char *s = tmp;
	for (; *s && *s != 'e'; s++)
		if (*s != '.')
			out->d[k++] = *s;
	out->d[k] = '\0';
	out->k = k;
	out->n = atoi(s + 1) + 1;
}

static double value_of(const struct dec *x)
{
	char tmp[48];
	snprintf(tmp, sizeof(tmp), "0.%se%d", x->d, x->n);
	return strtod(tmp, NULL);
}

/* x + or - one unit in its last digit, keeping k digits (renormalising on carry/borrow). */
static void step(const struct dec *x, int dir, struct dec *out)
{
	*out = *x;
	int i = out->k - 1;
	if (dir > 0) {
		while (i >= 0 && out->d[i] == '9')
			out->d[i--] = '0';
		if (i >= 0) {
			out->d[i]++;
		} else { /* 99..9 + 1 = 100..0: one more power of ten, same digit count */
			out->d[0] = '1';
			out->n++;
		}
	} else {
		while (i >= 0 && out->d[i] == '0')
			out->d[i--] = '9';
		out->d[i]--; /* i >= 0: x has a non-zero leading digit */
		if (out->d[0] == '0') { /* 100..0 - 1 = 099..9: shift left, fill with 9 */
			memmove(out->d, out->d + 1, (size_t)out->k - 1);
			out->d[out->k - 1] = '9';
			out->n--;
		}
	}
}

/* Some p-digit decimal that reads back as v, or false. */
static bool shortest_at(double v, int p, struct dec *out)
{
	struct dec c;
	round_to(v, p, &c);
	double back = value_of(&c);
	if (back == v) {
		*out = c;
		return true;
	}
	struct dec o;
	step(&c, back < v ? +1 : -1, &o);
	if (value_of(&o) == v) {
		*out = o;
		return true;
	}
	return false;
}

static void trim(struct dec *x)
{
	while (x->k > 1 && x->d[x->k - 1] == '0')
		x->d[--x->k] = '\0';
}

size_t kx_jcs_number(double v, char out[KX_JCS_NUMBER_MAX])
{
	if (!isfinite(v)) {
		out[0] = '\0';
		return 0;
	}
	if (v == 0) { /* also -0 */
		memcpy(out, "0", 2);
		return 1;
	}
	char *o = out;
	if (v < 0) {
		*o++ = '-';
		v = -v;
	}
	if (v < 9007199254740992.0 && v == floor(v)) { /* exact integers: the common case */
		char digits[20];
		int n = 0;
		for (uint64_t u = (uint64_t)v; u; u /= 10)
			digits[n++] = (char)('0' + u % 10);
		for (int i = n - 1; i >= 0; i--)
			*o++ = digits[i];
		*o = '\0';
		return (size_t)(o - out);
	}
	struct dec best;
	int lo = 1, hi = 17;
	round_to(v, 17, &best); /* 17 digits always round-trip */
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		struct dec c;
		if (shortest_at(v, mid, &c)) {
			best = c;
			hi = mid;
		} else {
			lo = mid + 1;
		}
	}
	if (best.k > lo) {
		struct dec c;
		if (shortest_at(v, lo, &c))
			best = c;
	}
	trim(&best);
	int k = best.k, n = best.n;
	const char *d = best.d;
	if (k <= n && n <= 21) {
		memcpy(o, d, (size_t)k);
		o += k;
		for (int i = k; i < n; i++)
			*o++ = '0';
	} else if (0 < n && n <= 21) {
		memcpy(o, d, (size_t)n);
		o += n;
		*o++ = '.';
		memcpy(o, d + n, (size_t)(k - n));
		o += k - n;
	} else if (-6 < n && n <= 0) {
		*o++ = '0';
		*o++ = '.';
		for (int i = 0; i < -n; i++)
			*o++ = '0';
		memcpy(o, d, (size_t)k);
		o += k;
	} else {
		*o++ = d[0];
		if (k > 1) {
			*o++ = '.';
			memcpy(o, d + 1, (size_t)(k - 1));
			o += k - 1;
		}
		o += sprintf(o, "e%c%d", n - 1 >= 0 ? '+' : '-', abs(n - 1));
	}
	*o = '\0';
	return (size_t)(o - out);
}
