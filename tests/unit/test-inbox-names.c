// SPDX-License-Identifier: MIT
/*
 * The inbox's name rules without FUSE (src/fs/names.c): which names create refuses (control bytes,
 * broken UTF-8, ".", "..", '/', more than 255 bytes), which names are temporary (held until a
 * rename), and receipt names — the user's name, ".1", ".2" … when taken, and for names near
 * NAME_MAX a cut at a character boundary plus a hash, so that "<name>.error" and "<name>.12" still
 * fit in 255 bytes and two long names that share a prefix do not collide.
 */
#include "tap.h"

#include "../../src/fs/fs.h"
#include "kx/spool.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static bool valid_utf8(const char *s)
{
	return fs_inbox_name_check(s) == 0;
}

int main(void)
{
	/* ---- create's rules ---- */
	ok(fs_inbox_name_check("run.json") == 0, "a plain name is fine");
	ok(fs_inbox_name_check("résultat-été.json") == 0, "UTF-8 is fine");
	ok(fs_inbox_name_check("日本語.jsonl") == 0, "three-byte UTF-8 is fine");
	ok(fs_inbox_name_check("😀.json") == 0, "four-byte UTF-8 is fine");
	ok(fs_inbox_name_check("") == -EINVAL, "the empty name is refused");
	ok(fs_inbox_name_check(".") == -EINVAL && fs_inbox_name_check("..") == -EINVAL, ". and .. are refused");
	ok(fs_inbox_name_check("a/b") == -EINVAL, "a slash is refused");
	ok(fs_inbox_name_check("a\nb") == -EINVAL, "a newline is refused");
	ok(fs_inbox_name_check("a\tb") == -EINVAL, "a tab is refused");
	ok(fs_inbox_name_check("a\x1b[31mb") == -EINVAL, "an escape sequence is refused");
	ok(fs_inbox_name_check("a\x7f") == -EINVAL, "DEL is refused");
	ok(fs_inbox_name_check("caf\xe9.json") == -EINVAL, "Latin-1 (not UTF-8) is refused");
	ok(!valid_utf8("\xc0\xaf"), "an overlong '/' is refused");
	ok(!valid_utf8("\xe0\x80\xaf"), "a three-byte overlong is refused");
	ok(!valid_utf8("\xed\xa0\x80"), "a UTF-16 surrogate is refused");
	ok(!valid_utf8("\xf4\x90\x80\x80"), "a code point past U+10FFFF is refused");
	ok(!valid_utf8("\xe6\x97"), "a truncated sequence is refused");
	ok(!valid_utf8("\x80"), "a lone continuation byte is refused");
	char n255[256], n256[257];
	memset(n255, 'a', 255);
	n255[255] = '\0';
	memset(n256, 'a', 256);
	n256[256] = '\0';
	ok(fs_inbox_name_check(n255) == 0, "255 bytes are fine");
	ok(fs_inbox_name_check(n256) == -EINVAL, "256 bytes are refused");

	/* ---- temporary names ---- */
	ok(fs_inbox_name_is_temp(".run.json.Xa12bc"), "rsync's .NAME.XXXXXX is temporary");
	ok(fs_inbox_name_is_temp("run.json.tmp"), "*.tmp is temporary");
	ok(fs_inbox_name_is_temp("run.json.part"), "*.part is temporary");
	ok(fs_inbox_name_is_temp("run.json~"), "*~ is temporary");
	ok(!fs_inbox_name_is_temp("run.json"), "run.json is final");
	ok(!fs_inbox_name_is_temp("tmp"), "'tmp' is final");
	ok(!fs_inbox_name_is_temp("run.tmp.json"), "'.tmp' inside a name is final");
	ok(!fs_inbox_name_is_temp("run.TMP"), "upper case .TMP is final (the rule is exact)");

	/* ---- receipt names ---- */
	char out[KX_INBOX_NAME_MAX + 1];
	ok(kx_receipt_name("run.json", 0, 0, out) == 0 && strcmp(out, "run.json") == 0, "first receipt: the name");
	ok(kx_receipt_name("run.json", 1, 0, out) == 0 && strcmp(out, "run.json.1") == 0, "then .1");
	ok(kx_receipt_name("run.json", 12, 6, out) == 0 && strcmp(out, "run.json.12") == 0, "then .12");
	ok(kx_receipt_name(n255, 0, 0, out) == 0 && strcmp(out, n255) == 0,
	   "a 255-byte accepted receipt keeps its name");
	ok(kx_receipt_name(n255, 0, 6, out) == 0 && strlen(out) + 6 <= 255 && strstr(out, "~"),
	   "a 255-byte rejected name is cut so that .error fits (%zu bytes)", strlen(out));
	char again[KX_INBOX_NAME_MAX + 1];
	kx_receipt_name(n255, 0, 6, again);
	ok(strcmp(out, again) == 0, "the cut is deterministic");
	ok(kx_receipt_name(n255, 99999, 6, out) == 0 && strlen(out) + 6 <= 255 &&
	   strcmp(out + strlen(out) - 6, ".99999") == 0, "cut names keep their counter last (%s)", out + 240);
	char other[256];
	memcpy(other, n255, 256);
	other[254] = 'b';
	char o1[KX_INBOX_NAME_MAX + 1], o2[KX_INBOX_NAME_MAX + 1];
	kx_receipt_name(n255, 0, 6, o1);
	kx_receipt_name(other, 0, 6, o2);
	ok(strcmp(o1, o2) != 0, "two long names with a common prefix get different receipts");
	/* a long UTF-8 name: cut between characters, never inside one */
	char u[256] = "";
	while (strlen(u) + 3 <= 255)
		strcat(u, "日");
	ok(fs_inbox_name_check(u) == 0, "a %zu-byte UTF-8 name is valid", strlen(u));
	ok(kx_receipt_name(u, 3, 6, out) == 0 && fs_inbox_name_check(out) == 0 && strlen(out) + 6 <= 255,
	   "its cut receipt name is still UTF-8 and fits");
	ok(kx_receipt_name("", 0, 0, out) == -EINVAL, "no receipt for the empty name");
	return tap_done();
}
