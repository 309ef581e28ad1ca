// SPDX-License-Identifier: MIT
/*
 * The inbox's name rules, without FUSE (tests/unit/test-inbox-names.c): which names a file may be
 * created under, which names are temporary (held until renamed, SPEC §4), and what a receipt is
 * called in .accepted/ or .rejected/ — the user's name, a ".1", ".2" … suffix when that is taken,
 * and a cut with a short hash when the result would pass NAME_MAX.
 *
 * What never reaches these functions: "/" inside a name and the names "." and "..". The kernel's
 * path walk splits at "/" and resolves "." and ".." itself (within the mount, and never above its
 * root), so FUSE only ever hands a daemon single components; they are refused here anyway, for a
 * caller that is not the kernel.
 */
#include "fs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);
	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

bool fs_inbox_name_is_temp(const char *name)
{
	size_t len = strlen(name);
	return name[0] == '.' || ends_with(name, len, ".tmp") || ends_with(name, len, ".part") ||
	       ends_with(name, len, "~");
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs, no surrogates, at most
 * U+10FFFF), 0 if there is none. */
static size_t utf8_seq(const unsigned char *s, size_t left)
{
	unsigned c = s[0];
	size_t n;
	unsigned min;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		min = 0x10000;
	} else {
		return 0;
	}
	if (left < n)
		return 0;
	unsigned cp = c & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

int fs_inbox_name_check(const char *name)
{
	size_t len = strlen(name);
	if (len == 0 || len > KX_INBOX_NAME_MAX || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	const unsigned char *s = (const unsigned char *)name;
	for (size_t i = 0; i < len;) {
		if (s[i] < 0x20 || s[i] == 0x7f || s[i] == '/')
			return -EINVAL;
		size_t n = utf8_seq(s + i, len - i);
		if (n == 0)
			return -EINVAL;
		i += n;
	}
	return 0;
}
