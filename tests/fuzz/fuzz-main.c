// SPDX-License-Identifier: MIT
/*
 * The corpus replay: without libFuzzer, a fuzz target is an ordinary test that feeds it every file
 * of the directories (or the files) named on the command line, in name order, one TAP line per
 * input (systemd's src/fuzz/fuzz-main.c does the same). Every corpus is in the source tree, so a
 * path that is not there fails the test. A broken property aborts the process, after the
 * "# input" line that names the file.
 */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int n;

static int one(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		printf("not ok %d - %s: %s\n", ++n, path, strerror(errno));
		return 1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	for (size_t got; buf && (got = fread(buf + len, 1, cap - len, f)) > 0;) {
		len += got;
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	fclose(f);
	if (!buf) {
		printf("not ok %d - %s: out of memory\n", ++n, path);
		return 1;
	}
	printf("# input %s (%zu bytes)\n", path, len);
	fflush(stdout);
	/* an exact-size copy, so ASan sees a read past the end of the input */
	uint8_t *exact = malloc(len ? len : 1);
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	printf("ok %d - %s\n", ++n, path);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int dir(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		printf("not ok %d - %s: %s\n", ++n, path, strerror(errno));
		return 1;
	}
	char **names = NULL;
	size_t len = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (len == cap) {
			cap = cap ? cap * 2 : 64;
			names = realloc(names, cap * sizeof(*names));
		}
		if (asprintf(&names[len], "%s/%s", path, e->d_name) < 0)
			abort();
		len++;
	}
	closedir(d);
	qsort(names, len, sizeof(*names), cmp);
	int bad = 0;
	for (size_t i = 0; i < len; i++) {
		struct stat st;
		if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode))
			bad += one(names[i]);
		free(names[i]);
	}
	free(names);
	return bad;
}

int main(int argc, char **argv)
{
	int bad = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			printf("not ok %d - %s: %s\n", ++n, argv[i], strerror(errno));
			bad++;
		} else if (S_ISDIR(st.st_mode))
			bad += dir(argv[i]);
		else
			bad += one(argv[i]);
	}
	printf("1..%d\n", n);
	return bad ? 1 : 0;
}
