// SPDX-License-Identifier: MIT
/*
 * A disk whose syncs of the store's write-ahead log fail, for tests (LD_PRELOAD): with
 * KX_TEST_LOG_SYNC=EIO, fsync and fdatasync of a file whose name ends in ".log" (RocksDB's logs)
 * fail with EIO, as a failing disk's do; everything else syncs. Unset: every sync as it is.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failing(int fd)
{
	const char *how = getenv("KX_TEST_LOG_SYNC");
	char link[64], path[4096];
	if (!how || strcmp(how, "EIO") != 0)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	return n > 4 && memcmp(path + n - 4, ".log", 4) == 0;
}

/* The real sync `name` of fd (looked up once into *real), or EIO where fd is a failing log. */
static int sync_as(const char *name, int (**real)(int), int fd)
{
	if (!*real)
		*(void **)real = dlsym(RTLD_NEXT, name);
	if (failing(fd)) {
		errno = EIO;
		return -1;
	}
	return (*real)(fd);
}

int fsync(int fd)
{
	static int (*real)(int);
	return sync_as("fsync", &real, fd);
}

int fdatasync(int fd)
{
	static int (*real)(int);
	return sync_as("fdatasync", &real, fd);
}
