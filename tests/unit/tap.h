/* SPDX-License-Identifier: MIT */
/*
 * A minimal TAP producer for the unit suite: `ok(cond, fmt, ...)` prints "ok N - …" or
 * "not ok N - …", `tap_done()` prints the plan and returns the exit status (meson's TAP protocol
 * reads the lines; the status makes a plain run fail too).
 */
#ifndef KX_TAP_H
#define KX_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

__attribute__((format(printf, 2, 3), unused)) static int ok(int cond, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	if (!cond)
		tap_failed++;
	fflush(stdout);
	return cond;
}

__attribute__((unused)) static int is_str(const char *got, const char *want, const char *what)
{
	int c = got && want && strcmp(got, want) == 0;
	if (!ok(c, "%s", what))
		printf("#   got:  '%s'\n#   want: '%s'\n", got ? got : "(null)", want ? want : "(null)");
	return c;
}

/* A comment for the reader of the TAP stream: each of its lines behind "# ", so that text with
 * newlines in it (a rendered file) never reads as a TAP line. */
__attribute__((format(printf, 1, 2), unused)) static void diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (!s)
		return;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	for (char *l = s, *e; *l; l = e + 1) {
		e = strchr(l, '\n');
		printf("# %.*s\n", e ? (int)(e - l) : (int)strlen(l), l);
		if (!e)
			break;
	}
	free(s);
}

__attribute__((unused)) static int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
