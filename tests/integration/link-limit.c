// SPDX-License-Identifier: MIT
/*
 * A file system's limit of links to one file, for tests (LD_PRELOAD): linkat fails with EMLINK
 * once the file has KX_TEST_LINK_MAX names, as ext4 does at 65,000 — so that `kindex export`'s
 * answer to it is tested on a tree of thousands of files rather than on 32,500 runs sharing a
 * protocol. KX_TEST_LINK_MAX=1 is a file system with no hard links at all. Unset: no limit.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

int linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags);

int linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags)
{
	static int (*real)(int, const char *, int, const char *, int);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "linkat");
	const char *max = getenv("KX_TEST_LINK_MAX");
	struct stat st;
	if (max && fstatat(olddirfd, oldpath, &st, 0) == 0 && st.st_nlink >= strtoul(max, NULL, 10)) {
		errno = EMLINK;
		return -1;
	}
	return real(olddirfd, oldpath, newdirfd, newpath, flags);
}
