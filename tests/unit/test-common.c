// SPDX-License-Identifier: MIT
/* src/common's parsers of the numbers users give: kx_parse_size, kx_parse_uint, kx_parse_decimal. */
#include "tap.h"

#include "kx/common.h"

#include <errno.h>
#include <stdint.h>

/* kx_parse_size's answer for s, and that *ret is untouched when it fails */
static void size_case(const char *s, bool suffixes, uint64_t min, uint64_t max, int want, uint64_t want_v)
{
	uint64_t v = 42;
	int r = kx_parse_size(s, suffixes, min, max, &v);
	ok(r == want && v == (r == 0 ? want_v : 42), "size '%s'%s in [%llu, %llu]: %d (%llu), want %d (%llu)", s,
	   suffixes ? " with suffixes" : "", (unsigned long long)min, (unsigned long long)max, r,
	   (unsigned long long)v, want, (unsigned long long)(want == 0 ? want_v : 42));
}

static void sizes(void)
{
	size_case("0", false, 0, UINT64_MAX, 0, 0);
	size_case("4194304", true, 1, UINT64_MAX, 0, 4194304);
	size_case("4M", true, 1, UINT64_MAX, 0, 4u << 20);
	size_case("4MiB", true, 1, UINT64_MAX, 0, 4u << 20);
	size_case("4mb", true, 1, UINT64_MAX, 0, 4u << 20);
	size_case("1G", true, 1, UINT64_MAX, 0, 1u << 30);
	size_case("512B", true, 1, UINT64_MAX, 0, 512);
	size_case("4M", false, 1, UINT64_MAX, -EINVAL, 0);
	size_case("4X", true, 1, UINT64_MAX, -EINVAL, 0);
	size_case("4iB", true, 1, UINT64_MAX, -EINVAL, 0);
	size_case("-1", true, 0, UINT64_MAX, -EINVAL, 0);
	size_case(" 4M", true, 0, UINT64_MAX, -EINVAL, 0);
	size_case("0x10", true, 0, UINT64_MAX, -EINVAL, 0);
	size_case("", true, 0, UINT64_MAX, -EINVAL, 0);
	size_case("0", true, 1, UINT64_MAX, -ERANGE, 0);
	size_case("17179869184G", true, 0, UINT64_MAX, -ERANGE, 0); /* 2^34 * 2^30 */
	size_case("17179869183G", true, 0, UINT64_MAX, 0, 17179869183ull << 30);
	size_case("100000000000000000000000", true, 0, UINT64_MAX, -ERANGE, 0);
}

static void uint_case(const char *s, uint64_t min, uint64_t max, int want, uint64_t want_v)
{
	uint64_t v = 42;
	int r = kx_parse_uint(s, min, max, &v);
	ok(r == want && v == (r == 0 ? want_v : 42), "whole number '%s' in [%llu, %llu]: %d (%llu), want %d (%llu)", s,
	   (unsigned long long)min, (unsigned long long)max, r, (unsigned long long)v, want,
	   (unsigned long long)(want == 0 ? want_v : 42));
}

static void uints(void)
{
	uint_case("0", 0, UINT64_MAX, 0, 0);
	uint_case("7", 0, UINT64_MAX, 0, 7);
	uint_case("007", 0, UINT64_MAX, 0, 7); /* decimal, never octal */
	uint_case("18446744073709551615", 0, UINT64_MAX, 0, UINT64_MAX);
	uint_case("18446744073709551616", 0, UINT64_MAX, -ERANGE, 0); /* never wrapped */
	uint_case("99999999999999999999999", 0, UINT64_MAX, -ERANGE, 0);
	uint_case("1000000", 1, 1000000, 0, 1000000);
	uint_case("1000001", 1, 1000000, -ERANGE, 0);
	uint_case("0", 1, 1000000, -ERANGE, 0);
	/* what strtoull would have read as something else */
	const char *bad[] = { "", " -5", "-5", "-0", "+5", " 5", "5 ", "\t5", "5\n", "0x10", "1e3", "5.0", "5.",
			      "4M", "5k", "five", "5five", "\xef\xbc\x95" /* a full-width 5 */ };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		uint_case(bad[i], 0, UINT64_MAX, -EINVAL, 0);
}

static void decimal_case(const char *s, double min, double max, int want, double want_v)
{
	double v = 42;
	int r = kx_parse_decimal(s, min, max, &v);
	ok(r == want && v == (r == 0 ? want_v : 42), "decimal '%s' in [%g, %g]: %d (%.17g), want %d (%.17g)", s, min,
	   max, r, v, want, want == 0 ? want_v : 42);
}

static void decimals(void)
{
	decimal_case("2", 0.001, 86400, 0, 2);
	decimal_case("0.5", 0.001, 86400, 0, 0.5);
	decimal_case(".5", 0.001, 86400, 0, 0.5);
	decimal_case("2.", 0.001, 86400, 0, 2);
	decimal_case("0.001", 0.001, 86400, 0, 0.001);
	decimal_case("0.1", 0, 86400, 0, 0.1); /* the nearest double, as strtod rounds it */
	decimal_case("86400", 0.001, 86400, 0, 86400);
	decimal_case("86400.0000001", 0.001, 86400, -ERANGE, 0);
	decimal_case("0.0009", 0.001, 86400, -ERANGE, 0);
	decimal_case("0", 0.001, 86400, -ERANGE, 0);
	decimal_case("0", 0, 4294967295.0, 0, 0);
	decimal_case("4294967295", 0, 4294967295.0, 0, 4294967295.0);
	decimal_case("4294967295.5", 0, 4294967295.0, -ERANGE, 0);
	decimal_case("0000000000000000000000000000000000000001.50", 0, 10, 0, 1.5);
	char huge[400];
	memset(huge, '9', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0'; /* past DBL_MAX: HUGE_VAL, out of any range */
	decimal_case(huge, 0, 1e308, -ERANGE, 0);
	const char *bad[] = { "", ".", "..5", "1.2.3", " 2", "2 ", "-1", "-0", "+2", "1e3", "1E3", "0x1p-2", "inf",
			      "nan", "infinity", "2s", "2,5", "0.5\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		decimal_case(bad[i], 0, 1e308, -EINVAL, 0);
}

/* kx_name_cmp: numbers in names compare as numbers, and the order is total */
static void names(void)
{
	static const char *const sorted[] = { "", "a", "a0", "a00", "a01", "a1", "a2", "a10", "a10b", "a10c",
					      "b", "hidden4096-tokens4096", "hidden4096-tokens16384", "n1024",
					      "n2048", "n16384", "n99999999999999999999999", "n100000000000000000000000" };
	size_t n = sizeof(sorted) / sizeof(*sorted);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < n; k++) {
			int c = kx_name_cmp(sorted[i], sorted[k]), want = i < k ? -1 : i > k;
			if (c != want)
				ok(false, "name order '%s' vs '%s': %d, want %d", sorted[i], sorted[k], c, want);
		}
	ok(true, "name order: %zu names, every pair in order", n);
	ok(kx_name_cmp("n2048", "n16384") < 0, "n2048 before n16384");
	ok(kx_name_cmp("eps0.000001", "eps0.00001") < 0, "eps0.000001 before eps0.00001 (1 < 10 after the zeros)");
}

/* kx_crc32c: RFC 3720's vectors (B.4), and every length against the bitwise definition, whole and
 * continued across a split (the 8-byte steps and the tail a byte at a time) */
static uint32_t crc_bitwise(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
	}
	return ~c;
}

static void crc(void)
{
	unsigned char b[300];
	memset(b, 0, 32);
	ok(kx_crc32c(0, b, 32) == 0x8A9136AAu, "CRC-32C of 32 zero bytes: 8A9136AA (RFC 3720)");
	memset(b, 0xff, 32);
	ok(kx_crc32c(0, b, 32) == 0x62A8AB43u, "CRC-32C of 32 0xFF bytes: 62A8AB43");
	for (int i = 0; i < 32; i++)
		b[i] = (unsigned char)i;
	ok(kx_crc32c(0, b, 32) == 0x46DD794Eu, "CRC-32C of 0..31: 46DD794E");
	ok(kx_crc32c(0, "123456789", 9) == 0xE3069283u, "CRC-32C of \"123456789\": E3069283");
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (unsigned char)(i * 131 + 7);
	int bad = 0;
	for (size_t n = 0; n <= sizeof(b); n++) {
		uint32_t want = crc_bitwise(b, n);
		bad += kx_crc32c(0, b, n) != want || kx_crc32c(kx_crc32c(0, b, n / 3), b + n / 3, n - n / 3) != want;
	}
	ok(!bad, "CRC-32C of 0 to 300 bytes, whole and in two parts, as the bitwise definition (%d differ)", bad);
}

int main(void)
{
	names();
	crc();
	sizes();
	uints();
	decimals();
	return tap_done();
}
