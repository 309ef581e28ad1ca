// SPDX-License-Identifier: MIT
/*
 * kx_buf: the growable, capped byte string behind every rendered file, canonical form and
 * message. Growth doubles; the cap is checked before any allocation so a hostile input can never
 * make us allocate past it (the curl DYNBUF idea).
 */
#include "kx/common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void kx_buf_init(struct kx_buf *b, size_t cap_limit)
{
	memset(b, 0, sizeof(*b));
	b->cap_limit = cap_limit;
}

void kx_buf_release(struct kx_buf *b)
{
	if (!b)
		return;
	free(b->ptr);
	b->ptr = NULL;
	b->len = b->alloc = 0;
}

void kx_buf_reset(struct kx_buf *b)
{
	b->len = 0;
	if (b->ptr)
		b->ptr[0] = '\0';
}

int kx_buf_reserve(struct kx_buf *b, size_t extra)
{
	if (extra > SIZE_MAX / 2 - b->len)
		return -E2BIG;
	size_t need = b->len + extra + 1;
	if (b->cap_limit && b->len + extra > b->cap_limit)
		return -E2BIG;
	if (need <= b->alloc)
		return 0;
	size_t n = b->alloc ? b->alloc : 64;
	while (n < need)
		n *= 2;
	char *p = realloc(b->ptr, n);
	if (!p)
		return -ENOMEM;
	b->ptr = p;
	b->alloc = n;
	return 0;
}

int kx_buf_append(struct kx_buf *b, const void *data, size_t len)
{
	int r = kx_buf_reserve(b, len);
	if (r < 0)
		return r;
	if (len)
		memcpy(b->ptr + b->len, data, len);
	b->len += len;
	b->ptr[b->len] = '\0';
	return 0;
}

int kx_buf_puts(struct kx_buf *b, const char *s)
{
	return kx_buf_append(b, s, strlen(s));
}

int kx_buf_putc_slow(struct kx_buf *b, char c)
{
	return kx_buf_append(b, &c, 1);
}

int kx_buf_vprintf(struct kx_buf *b, const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	char tmp[256];
	int n = vsnprintf(tmp, sizeof(tmp), fmt, aq);
	va_end(aq);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n < sizeof(tmp))
		return kx_buf_append(b, tmp, (size_t)n);
	int r = kx_buf_reserve(b, (size_t)n);
	if (r < 0)
		return r;
	vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int kx_buf_printf(struct kx_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = kx_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return r;
}

char *kx_buf_detach(struct kx_buf *b, size_t *ret_len)
{
	if (!b->ptr && kx_buf_reserve(b, 0) < 0)
		return NULL;
	char *p = b->ptr;
	if (ret_len)
		*ret_len = b->len;
	b->ptr = NULL;
	b->len = b->alloc = 0;
	return p;
}

int kx_read_file(const char *path, size_t limit, struct kx_buf *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = 0;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		r = -EISDIR;
		goto out;
	}
	if (limit && st.st_size > 0 && (uint64_t)st.st_size > limit) {
		r = -EFBIG;
		goto out;
	}
	kx_buf_reset(out);
	r = kx_buf_reserve(out, st.st_size > 0 ? (size_t)st.st_size : 4096);
	if (r < 0)
		goto out;
	for (;;) {
		if (out->alloc - out->len < 2) {
			r = kx_buf_reserve(out, out->alloc);
			if (r < 0)
				goto out;
		}
		ssize_t n = read(fd, out->ptr + out->len, out->alloc - out->len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto out;
		}
		if (n == 0)
			break;
		out->len += (size_t)n;
		if (limit && out->len > limit) {
			r = -EFBIG;
			goto out;
		}
	}
	out->ptr[out->len] = '\0';
out:
	close(fd);
	return r;
}
