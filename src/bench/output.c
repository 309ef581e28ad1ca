// SPDX-License-Identifier: MIT
/*
 * Where manifests go, always atomically: nothing is visible under its final name until it is
 * complete and fsync'ed. `-o FILE` rewrites FILE after every manifest with all of them so far
 * (FILE.tmp.<pid>, fsync, rename), so each finished run is durable in FILE at once and an error
 * or a kill in a later one loses nothing before it; `--inbox DIR` writes DIR/.<name>.tmp and renames it to DIR/<name> (the mount's
 * inbox holds names with a leading '.' until they are renamed, SPEC §4); `--spool DIR` is a
 * maildir: DIR/tmp/<name>, then DIR/new/<name>. Standard output gets the bytes as they come.
 *
 * Artifacts (bench_sink_put_artifact) go to the artifacts/ directory beside the manifests, each
 * before the manifest that announces it, through a temporary name as the manifests do.
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
	free(s->artifacts_dir);
	s->artifacts_dir = NULL;
}

/* ---- artifacts ---------------------------------------------------------------------------------- */

int bench_sink_artifacts(struct kx_bench_sink *s, const char *dir)
{
	free(s->artifacts_dir);
	s->artifacts_dir = NULL;
	s->artifacts_spool = !dir && s->kind == KX_SINK_SPOOL;
	if (dir) {
		s->artifacts_dir = strdup(dir);
	} else if (s->kind == KX_SINK_FILE) {
		/* beside FILE: dirname(FILE)/artifacts */
		const char *slash = strrchr(s->path, '/');
		if (!slash) {
			s->artifacts_dir = strdup("artifacts");
		} else {
			size_t n = (size_t)(slash - s->path) + 16;
			if ((s->artifacts_dir = malloc(n)))
				snprintf(s->artifacts_dir, n, "%.*s/artifacts",
					 slash == s->path ? 0 : (int)(slash - s->path), s->path);
		}
	} else if (s->kind == KX_SINK_INBOX || s->kind == KX_SINK_SPOOL) {
		size_t n = strlen(s->path) + 16;
		if ((s->artifacts_dir = malloc(n)))
			snprintf(s->artifacts_dir, n, "%s/artifacts", s->path);
	} else {
		return 0; /* standard output: no place for the bytes */
	}
	return s->artifacts_dir ? 0 : -ENOMEM;
}

/* Write the bytes (b, or a copy of a->path checked against its digest and size) to fd. */
static int put_bytes(int fd, const struct kx_bench_artifact *a, const struct kx_buf *b, char *err,
		     size_t errlen)
{
	if (b) {
		int r = write_all(fd, b->ptr, b->len);
		if (r < 0)
			snprintf(err, errlen, "%s", strerror(-r));
		return r;
	}
	int in = open(a->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (in < 0) {
		int e = -errno;
		snprintf(err, errlen, "cannot read '%s': %s", a->path, strerror(errno));
		return e;
	}
	enum { BUF = 64u << 10 };
	char *buf = malloc(BUF);
	struct kx_sha256 *h = kx_sha256_new();
	int r = buf && h ? 0 : -ENOMEM;
	if (r < 0)
		snprintf(err, errlen, "out of memory");
	uint64_t size = 0;
	while (r == 0) {
		ssize_t got = read(in, buf, BUF);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = -errno;
			snprintf(err, errlen, "cannot read '%s': %s", a->path, strerror(errno));
			break;
		}
		if (got == 0)
			break;
		kx_sha256_update(h, buf, (size_t)got);
		size += (uint64_t)got;
		if ((r = write_all(fd, buf, (size_t)got)) < 0)
			snprintf(err, errlen, "%s", strerror(-r));
	}
	char digest[KX_DIGEST_STR_MAX] = "";
	if (h) {
		struct kx_digest d;
		kx_sha256_final(h, d.b);
		kx_digest_format(&d, digest);
	}
	if (r == 0 && (size != a->size || strcmp(digest, a->digest) != 0)) {
		snprintf(err, errlen, "'%s' changed after it was attached (%s)", a->path,
			 size != a->size ? "its size differs" : "its SHA-256 differs");
		r = -ESTALE;
	}
	free(buf);
	close(in);
	return r;
}

int bench_sink_put_artifact(struct kx_bench_sink *s, const struct kx_bench_artifact *a,
			    const struct kx_buf *bytes, char **ret_path, bool *ret_written,
			    char *err, size_t errlen)
{
	*ret_path = NULL;
	*ret_written = false;
	if (!s->artifacts_dir)
		return 0;
	const char *dir = s->artifacts_dir;
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		int e = -errno;
		snprintf(err, errlen, "cannot create '%s': %s", dir, strerror(errno));
		return e;
	}
	/* <hex>-<name>: the name cut at a character boundary to keep within 255 bytes */
	const char *hex = a->digest + strlen("sha256:");
	size_t keep = strlen(a->name), room = 255 - KX_DIGEST_HEX - 1;
	if (keep > room) {
		keep = room;
		while (keep && ((unsigned char)a->name[keep] & 0xc0) == 0x80)
			keep--;
	}
	char file[256];
	snprintf(file, sizeof(file), "%.*s-%.*s", KX_DIGEST_HEX, hex, (int)keep, a->name);
	size_t n = strlen(dir) + strlen(s->path ? s->path : "") + sizeof(file) + 48;
	char *dst = malloc(n), *tmp = malloc(n);
	if (!dst || !tmp) {
		free(dst);
		free(tmp);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(dst, n, "%s/%s", dir, file);
	struct stat st;
	if (stat(dst, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == a->size) {
		/* the same bytes (the name holds their digest) are already there */
		free(tmp);
		*ret_path = dst;
		return 0;
	}
	if (s->artifacts_spool)
		snprintf(tmp, n, "%s/tmp/%s", s->path, file);
	else
		snprintf(tmp, n, "%s/.%.*s.%ld.tmp", dir, KX_DIGEST_HEX, hex, (long)getpid());
	char why[512] = "";
	int r = 0, fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
		goto out;
	}
	r = put_bytes(fd, a, bytes, why, sizeof(why));
	if (r == 0 && fsync(fd) < 0) {
		r = -errno;
		snprintf(why, sizeof(why), "%s", strerror(errno));
	}
	if (close(fd) < 0 && r == 0) {
		r = -errno;
		snprintf(why, sizeof(why), "%s", strerror(errno));
	}
	if (r == 0 && rename(tmp, dst) < 0) {
		r = -errno;
		snprintf(why, sizeof(why), "%s", strerror(errno));
	}
	if (r < 0) {
		snprintf(err, errlen, "cannot write the artifact '%s': %s", dst, why);
		unlink(tmp);
	}
out:
	free(tmp);
	if (r < 0) {
		free(dst);
		return r;
	}
	*ret_path = dst;
	*ret_written = true;
	return 0;
}
