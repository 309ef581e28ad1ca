// SPDX-License-Identifier: MIT
/*
 * Artifacts (SPEC §9): what a run announces in spec.artifacts and how an attached file becomes
 * one. The names follow the index's rule for an artifact name, so that a run kindex-bench writes
 * is never refused for one: a single file name component of 1 to 255 bytes of UTF-8, without '/',
 * control characters or a leading '.'. A file is read in bounded pieces, never whole.
 */
#include "bench.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define COPY_BUF (64u << 10)

const char *bench_media_type(const char *name)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{ "cu", "text/x-cuda" },
		{ "c", "text/x-c" },
		{ "h", "text/x-c" },
		{ "cpp", "text/x-c++" },
		{ "cc", "text/x-c++" },
		{ "hpp", "text/x-c++" },
		{ "py", "text/x-python" },
		{ "json", "application/json" },
		{ "txt", "text/plain" },
		{ "log", "text/plain" },
		{ "tsv", "text/tab-separated-values" },
		{ "csv", "text/csv" },
	};
	const char *dot = strrchr(name, '.');
	if (dot && dot != name)
		for (size_t i = 0; i < KX_ARRAY_SIZE(types); i++)
			if (strcasecmp(dot + 1, types[i].ext) == 0)
				return types[i].type;
	/* profiler reports (.ncu-rep, .nsys-rep) and everything else */
	return "application/octet-stream";
}

/* The length of the UTF-8 character at s (n bytes left), or 0 when it is not one: no overlong
 * forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_char(const unsigned char *s, size_t n)
{
	if (s[0] < 0x80)
		return 1;
	size_t len = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
		   : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return len;
}

const char *bench_artifact_name_problem(const char *name)
{
	size_t n = strlen(name);
	if (n == 0)
		return "is empty";
	if (n > 255)
		return "is longer than 255 bytes";
	if (name[0] == '.')
		return "starts with '.'";
	const unsigned char *s = (const unsigned char *)name;
	for (size_t i = 0; i < n;) {
		size_t len = utf8_char(s + i, n - i);
		if (!len)
			return "is not UTF-8";
		if (s[i] < 0x20 || s[i] == 0x7f || (len == 2 && s[i] == 0xc2 && s[i + 1] <= 0x9f))
			return "holds a control character";
		if (s[i] == '/')
			return "holds '/'";
		i += len;
	}
	return NULL;
}

static const char *file_type(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket"
	     : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : "not a plain file";
}

int bench_attach(const char *path, struct kx_bench_artifact *ret, char *err, size_t errlen)
{
	memset(ret, 0, sizeof(*ret));
	char qp[KX_QUOTE_SIZE], qn[KX_QUOTE_SIZE];
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	/* O_NONBLOCK: a FIFO must not hang the open; it is refused below */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, errlen, "cannot attach '%s': cannot read it: %s", path, strerror(errno));
		return -EINVAL;
	}
	struct stat st;
	int r = 0;
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "cannot attach '%s': %s", path, strerror(errno));
		r = -EINVAL;
	} else if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "cannot attach '%s': not a regular file (%s)", path,
			 file_type(st.st_mode));
		r = -EINVAL;
	} else {
		const char *why = bench_artifact_name_problem(name);
		if (why) {
			/* quoted: the name may hold what would break the message's line */
			snprintf(err, errlen, "cannot attach %s: an artifact's name must be one file name "
				 "(1 to 255 bytes of UTF-8, no control character, not starting with '.'), and %s %s",
				 kx_quote(qp, path, strlen(path)), kx_quote(qn, name, strlen(name)), why);
			r = -EINVAL;
		}
	}
	char *buf = r == 0 ? malloc(COPY_BUF) : NULL;
	struct kx_sha256 *h = r == 0 ? kx_sha256_new() : NULL;
	if (r == 0 && (!buf || !h))
		r = -ENOMEM;
	uint64_t size = 0;
	while (r == 0) {
		ssize_t got = read(fd, buf, COPY_BUF);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = -errno;
			snprintf(err, errlen, "cannot attach '%s': cannot read it: %s", path,
				 strerror(errno));
			break;
		}
		if (got == 0)
			break;
		kx_sha256_update(h, buf, (size_t)got);
		size += (uint64_t)got;
	}
	if (h) {
		struct kx_digest d;
		kx_sha256_final(h, d.b);
		kx_digest_format(&d, ret->digest);
	}
	free(buf);
	close(fd);
	if (r == -ENOMEM)
		snprintf(err, errlen, "cannot attach '%s': out of memory", path);
	if (r < 0)
		return r;
	ret->name = name;
	ret->media_type = bench_media_type(name);
	ret->size = size;
	ret->path = path;
	return 0;
}

int bench_samples_artifact(const uint64_t *ns, size_t n, struct kx_bench_artifact *ret)
{
	memset(ret, 0, sizeof(*ret));
	char hex[KX_DIGEST_HEX + 1];
	int r = bench_samples_sha256(ns, n, hex);
	if (r < 0)
		return r;
	uint64_t size = 0;
	for (size_t i = 0; i < n; i++) {
		char line[32];
		size += (uint64_t)snprintf(line, sizeof(line), "%" PRIu64 "\n", ns[i]);
	}
	snprintf(ret->digest, sizeof(ret->digest), "sha256:%s", hex);
	ret->name = KX_BENCH_SAMPLES_ARTIFACT;
	ret->media_type = KX_BENCH_SAMPLES_MEDIA_TYPE;
	ret->size = size;
	return 0;
}
