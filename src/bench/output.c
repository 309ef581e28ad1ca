// SPDX-License-Identifier: MIT
/*
 * Where manifests go, always atomically: nothing is visible under its final name until it is
 * complete and fsync'ed. `-o FILE` rewrites FILE after every manifest with all of them so far
 * (FILE.tmp.<pid>, fsync, rename), so each finished run is durable in FILE at once and an error
 * or a kill in a later one loses nothing before it; `--inbox DIR` writes DIR/.<name>.tmp and renames it to DIR/<name> (the mount's
 * inbox holds names with a leading '.' until they are renamed, SPEC §4); `--spool DIR` is a
 * maildir: DIR/tmp/<name>, then DIR/new/<name>. Standard output gets the bytes as they come.
 *
 * Format: the pretty form (kx_json_write_pretty) for a single manifest, JSON Lines of JCS when a
 * stream or file holds several (the index reads both).
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int render(const struct kx_json *m, bool lines, struct kx_buf *b)
{
	if (!lines)
		return kx_json_write_pretty(m, b);
	int r = kx_jcs_write(m, b);
	return r < 0 ? r : kx_buf_putc(b, '\n');
}

int bench_sink_open(struct kx_bench_sink *s, enum kx_bench_sink_kind kind, const char *path,
		    bool lines, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->path = path;
	s->lines = lines;
	if (kind == KX_SINK_STDOUT) {
		s->f = stdout;
		return 0;
	}
	if (kind == KX_SINK_FILE) {
		size_t n = strlen(path) + 32;
		s->tmp_path = malloc(n);
		if (!s->tmp_path)
			return -ENOMEM;
		snprintf(s->tmp_path, n, "%s.tmp.%ld", path, (long)getpid());
		/* fail now, before any run, where FILE's directory cannot take it */
		int fd = open(s->tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (fd < 0) {
			int e = -errno;
			snprintf(err, errlen, "cannot create '%s': %s", s->tmp_path, strerror(errno));
			free(s->tmp_path);
			s->tmp_path = NULL;
			return e;
		}
		close(fd);
		unlink(s->tmp_path);
		kx_buf_init(&s->all, 0);
		return 0;
	}
	/* inbox and spool: the directories must be there (a spool's tmp/ and new/ are made) */
	const char *what = kind == KX_SINK_INBOX ? "an inbox" : "a spool";
	struct stat st;
	if (stat(path, &st) < 0) {
		int e = -errno;
		snprintf(err, errlen, "cannot use '%s' as %s: %s", path, what, strerror(errno));
		return e;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "cannot use '%s' as %s: not a directory", path, what);
		return -ENOTDIR;
	}
	if (kind == KX_SINK_SPOOL) {
		const char *sub[] = { "tmp", "new" };
		for (size_t i = 0; i < 2; i++) {
			char p[4096];
			snprintf(p, sizeof(p), "%s/%s", path, sub[i]);
			if (mkdir(p, 0777) < 0 && errno != EEXIST) {
				int e = -errno;
				snprintf(err, errlen, "cannot create '%s': %s", p, strerror(errno));
				return e;
			}
		}
	}
	return 0;
}

/* Write `b` to tmp with fsync, then rename to dst. */
static int publish(const char *tmp, const char *dst, const struct kx_buf *b, char *err,
		   size_t errlen)
{
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		int e = -errno;
		snprintf(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
		return e;
	}
	int r = write_all(fd, b->ptr, b->len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, dst) < 0)
		r = -errno;
	if (r < 0) {
		snprintf(err, errlen, "cannot write '%s': %s", dst, strerror(-r));
		unlink(tmp);
	}
	return r;
}

int bench_write_file(const char *path, const struct kx_buf *b, char *err, size_t errlen)
{
	size_t n = strlen(path) + 32;
	char *tmp = malloc(n);
	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
	int r = publish(tmp, path, b, err, errlen);
	free(tmp);
	return r;
}

int bench_sink_write(struct kx_bench_sink *s, const struct kx_json *manifest, const char *name,
		     char **ret_path, char *err, size_t errlen)
{
	struct kx_buf b;
	kx_buf_init(&b, 0);
	int r = render(manifest, s->kind == KX_SINK_INBOX || s->kind == KX_SINK_SPOOL ? false : s->lines, &b);
	if (r < 0) {
		snprintf(err, errlen, "cannot serialize the manifest: %s", strerror(-r));
		goto out;
	}
	if (s->kind == KX_SINK_STDOUT) {
		FILE *f = s->f;
		if (fwrite(b.ptr, 1, b.len, f) != b.len || fflush(f) != 0) {
			r = -errno;
			snprintf(err, errlen, "cannot write 'standard output': %s", strerror(errno));
			goto out;
		}
		if (ret_path)
			*ret_path = strdup("-");
	} else if (s->kind == KX_SINK_FILE) {
		/* FILE again, with this manifest after the others: complete at every step */
		size_t len0 = s->all.len;
		if ((r = kx_buf_append(&s->all, b.ptr, b.len)) < 0) {
			snprintf(err, errlen, "cannot write '%s': %s", s->path, strerror(-r));
			goto out;
		}
		if ((r = publish(s->tmp_path, s->path, &s->all, err, errlen)) < 0) {
			s->all.len = len0;
			goto out;
		}
		if (ret_path)
			*ret_path = strdup(s->path);
	} else {
		size_t n = strlen(s->path) + strlen(name) + 16;
		char *tmp = malloc(n), *dst = malloc(n);
		if (!tmp || !dst) {
			free(tmp);
			free(dst);
			r = -ENOMEM;
			goto out;
		}
		if (s->kind == KX_SINK_INBOX) {
			snprintf(tmp, n, "%s/.%s.tmp", s->path, name);
			snprintf(dst, n, "%s/%s", s->path, name);
		} else {
			snprintf(tmp, n, "%s/tmp/%s", s->path, name);
			snprintf(dst, n, "%s/new/%s", s->path, name);
		}
		r = publish(tmp, dst, &b, err, errlen);
		free(tmp);
		if (r == 0 && ret_path)
			*ret_path = dst;
		else
			free(dst);
	}
	if (r == 0)
		s->count++;
out:
	kx_buf_release(&b);
	return r;
}

void bench_sink_close(struct kx_bench_sink *s)
{
	if (s->kind == KX_SINK_FILE)
		kx_buf_release(&s->all);
	free(s->tmp_path);
	s->tmp_path = NULL;
}
