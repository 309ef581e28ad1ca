// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the inbox's name rules (src/fs/names.c) and the receipt names of the inbox and the
 * spool (kx_receipt_name) on arbitrary bytes taken as one name (up to the first NUL). Properties:
 *   - fs_inbox_name_check accepts exactly what an independent oracle accepts: 1 to 255 bytes, not
 *     "." or "..", no '/', no byte 0x01-0x1f or 0x7f, and well-formed UTF-8 by the table of
 *     RFC 3629 §4 (no overlong forms, no surrogates, nothing past U+10FFFF);
 *   - fs_inbox_name_is_temp is a leading '.' or a ".tmp", ".part" or "~" ending;
 *   - for a name create accepts and that is not temporary, the k-th receipt name (k = 0, 1,
 *     99999; room for nothing, ".error" or ".receipt") exists, leaves that room within NAME_MAX,
 *     is itself a name create accepts and not temporary, is NAME[.k] when that fits and otherwise
 *     starts with a prefix of NAME and ends in "~" and 8 hex digits [.k]; different k give
 *     different names.
 */
#include "fuzz.h"

#include "../../src/fs/fs.h"
#include "kx/spool.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

/* RFC 3629 §4, the syntax of UTF-8 byte sequences, one range per byte */
static bool in(unsigned char c, unsigned lo, unsigned hi)
{
	return c >= lo && c <= hi;
}

static size_t oracle_char(const unsigned char *s, size_t left)
{
	static const struct {
		unsigned char n, lo[4], hi[4];
	} forms[] = {
		{ 1, { 0x00 }, { 0x7f } },
		{ 2, { 0xc2, 0x80 }, { 0xdf, 0xbf } },
		{ 3, { 0xe0, 0xa0, 0x80 }, { 0xe0, 0xbf, 0xbf } },
		{ 3, { 0xe1, 0x80, 0x80 }, { 0xec, 0xbf, 0xbf } },
		{ 3, { 0xed, 0x80, 0x80 }, { 0xed, 0x9f, 0xbf } },
		{ 3, { 0xee, 0x80, 0x80 }, { 0xef, 0xbf, 0xbf } },
		{ 4, { 0xf0, 0x90, 0x80, 0x80 }, { 0xf0, 0xbf, 0xbf, 0xbf } },
		{ 4, { 0xf1, 0x80, 0x80, 0x80 }, { 0xf3, 0xbf, 0xbf, 0xbf } },
		{ 4, { 0xf4, 0x80, 0x80, 0x80 }, { 0xf4, 0x8f, 0xbf, 0xbf } },
	};
	for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
		size_t n = forms[f].n, i = 0;
		while (i < n && i < left && in(s[i], forms[f].lo[i], forms[f].hi[i]))
			i++;
		if (i == n)
			return n;
	}
	return 0;
}

static bool oracle_valid(const char *name)
{
	size_t len = strlen(name);
	if (len < 1 || len > 255 || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	const unsigned char *s = (const unsigned char *)name;
	for (size_t i = 0; i < len;) {
		if (s[i] == '/' || s[i] < 0x20 || s[i] == 0x7f)
			return false;
		size_t n = oracle_char(s + i, len - i);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

static bool ends(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

static bool oracle_temp(const char *name)
{
	return name[0] == '.' || ends(name, ".tmp") || ends(name, ".part") || ends(name, "~");
}

static void receipts(const char *name)
{
	static const unsigned ks[] = { 0, 1, 99999 };
	static const size_t reserves[] = { 0, 6, 8 };
	size_t len = strlen(name);
	for (size_t ri = 0; ri < 3; ri++) {
		char prev[NAME_MAX + 1] = "";
		for (size_t ki = 0; ki < 3; ki++) {
			unsigned k = ks[ki];
			size_t reserve = reserves[ri];
			char out[NAME_MAX + 1], kpart[16] = "";
			if (k)
				snprintf(kpart, sizeof(kpart), ".%u", k);
			int r = kx_receipt_name(name, k, reserve, out);
			fuzz_assert(r == 0, "kx_receipt_name(k=%u, reserve=%zu) = %d", k, reserve, r);
			size_t olen = strlen(out), klen = strlen(kpart);
			fuzz_assert(olen + reserve <= NAME_MAX, "'%s' (%zu bytes) leaves no room for %zu", out, olen, reserve);
			fuzz_assert(fs_inbox_name_check(out) == 0, "receipt name '%s' is not a valid name", out);
			fuzz_assert(!fs_inbox_name_is_temp(out), "receipt name '%s' is temporary", out);
			if (len + klen + reserve <= NAME_MAX) {
				fuzz_assert(olen == len + klen && !memcmp(out, name, len) && !strcmp(out + len, kpart),
					    "'%s' is not the name with '%s'", out, kpart);
			} else {
				fuzz_assert(olen > 9 + klen && olen - 9 - klen < len, "cut name '%s'", out);
				size_t cut = olen - 9 - klen;
				fuzz_assert(!memcmp(out, name, cut) && out[cut] == '~', "'%s' does not start with a cut of the name", out);
				for (size_t i = cut + 1; i < cut + 9; i++)
					fuzz_assert(isxdigit((unsigned char)out[i]) && !isupper((unsigned char)out[i]), "hash in '%s'", out);
				fuzz_assert(!strcmp(out + cut + 9, kpart), "'%s' does not end in '%s'", out, kpart);
			}
			fuzz_assert(strcmp(out, prev), "two k give the same receipt name '%s'", out);
			memcpy(prev, out, sizeof(prev));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1024)
		return 0;
	char name[1025];
	memcpy(name, data, size);
	name[size] = '\0';
	bool want = oracle_valid(name);
	int r = fs_inbox_name_check(name);
	fuzz_assert(r == 0 || r == -EINVAL, "fs_inbox_name_check returned %d", r);
	fuzz_assert((r == 0) == want, "fs_inbox_name_check says %d, the rules say %s", r, want ? "valid" : "invalid");
	fuzz_assert(fs_inbox_name_is_temp(name) == oracle_temp(name), "is_temp disagrees");
	if (want && !oracle_temp(name))
		receipts(name);
	return 0;
}
