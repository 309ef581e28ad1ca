// SPDX-License-Identifier: MIT
/*
 * The JSON Canonicalization Scheme (RFC 8785) and the pretty form built on the same pieces.
 *
 * Member order is by UTF-16 code units, not bytes: UTF-8 byte order equals code point order,
 * which differs from UTF-16 order only where a supplementary character (a surrogate pair,
 * 0xD800..0xDBFF first unit) meets a character in U+E000..U+FFFF. kx_jcs_key_cmp handles that
 * case; ASCII keys take a memcmp path.
 */
#include "private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Decode one code point from valid UTF-8 (the parser and builders guarantee validity). */
static unsigned next_cp(const unsigned char **pp, const unsigned char *end)
{
	const unsigned char *p = *pp;
	unsigned c = *p++;
	if (c >= 0x80) {
		int n = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
		c &= 0x3f >> n;
		for (int i = 0; i < n && p < end; i++)
			c = c << 6 | (*p++ & 0x3f);
	}
	*pp = p;
	return c;
}

/* The UTF-16 unit sequence of cp: one unit, or a surrogate pair. */
static int utf16(unsigned cp, unsigned u[2])
{
	if (cp < 0x10000) {
		u[0] = cp;
		return 1;
	}
	cp -= 0x10000;
	u[0] = 0xd800 + (cp >> 10);
	u[1] = 0xdc00 + (cp & 0x3ff);
	return 2;
}

int kx_jcs_key_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	const unsigned char *p = (const unsigned char *)a, *pe = p + alen;
	const unsigned char *q = (const unsigned char *)b, *qe = q + blen;
	/* common prefix of bytes compares equal in any order */
	while (p < pe && q < qe && *p == *q && *p < 0x80) {
		p++;
		q++;
	}
	unsigned pu[2], qu[2];
	int pn = 0, pi = 0, qn = 0, qi = 0;
	for (;;) {
		if (pi == pn) {
			if (p >= pe)
				break;
			pn = utf16(next_cp(&p, pe), pu);
			pi = 0;
		}
		if (qi == qn) {
			if (q >= qe)
				break;
			qn = utf16(next_cp(&q, qe), qu);
			qi = 0;
		}
		if (pu[pi] != qu[qi])
			return pu[pi] < qu[qi] ? -1 : 1;
		pi++;
		qi++;
	}
	bool pdone = pi == pn && p >= pe, qdone = qi == qn && q >= qe;
	return pdone && qdone ? 0 : pdone ? -1 : 1;
}

static int member_cmp(const void *x, const void *y)
{
	const struct kx_json_member *a = *(const struct kx_json_member *const *)x;
	const struct kx_json_member *b = *(const struct kx_json_member *const *)y;
	return kx_jcs_key_cmp(a->key, a->key_len, b->key, b->key_len);
}

static int write_string(struct kx_buf *out, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	int r = kx_buf_reserve(out, len + 2);
	if (r < 0)
		return r;
	out->ptr[out->len++] = '"';
	size_t run = 0; /* start of the pending unescaped run */
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	for (size_t i = 0; i < len; i++) {
		/* eight bytes at a time while none needs escaping ('"', '\\', control bytes) */
		while (len - i >= 8) {
			uint64_t w;
			memcpy(&w, s + i, 8);
			uint64_t quote = w ^ (ones * '"'), bslash = w ^ (ones * '\\');
			uint64_t low = (w - ones * 0x20) & ~w; /* a byte < 0x20 (bytes >= 0x80 excluded by ~w) */
			if (((low | ((quote - ones) & ~quote) | ((bslash - ones) & ~bslash)) & highs))
				break;
			i += 8;
		}
		if (i >= len)
			break;
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		if ((r = kx_buf_append(out, s + run, i - run)) < 0)
			return r;
		run = i + 1;
		char e[6] = { '\\', 0 };
		size_t n = 2;
		switch (c) {
		case '"': e[1] = '"'; break;
		case '\\': e[1] = '\\'; break;
		case '\b': e[1] = 'b'; break;
		case '\f': e[1] = 'f'; break;
		case '\n': e[1] = 'n'; break;
		case '\r': e[1] = 'r'; break;
		case '\t': e[1] = 't'; break;
		default:
			e[1] = 'u';
			e[2] = '0';
			e[3] = '0';
			e[4] = hex[c >> 4];
			e[5] = hex[c & 15];
			n = 6;
		}
		if ((r = kx_buf_append(out, e, n)) < 0)
			return r;
	}
	if ((r = kx_buf_append(out, s + run, len - run)) < 0)
		return r;
	return kx_buf_putc(out, '"');
}

/*
 * Members of obj in JCS order, checked for duplicates, into `idx` (which has room for `room`);
 * larger objects get a malloc'd array in *ret_heap. Small objects — nearly all of them — are
 * insertion-sorted on the caller's stack.
 */
static int sorted_members(const struct kx_json *obj, const struct kx_json_member **idx, size_t room,
			  const struct kx_json_member ***ret, const struct kx_json_member ***ret_heap)
{
	size_t n = obj->obj.len;
	*ret_heap = NULL;
	if (n > room) {
		idx = malloc(n * sizeof(*idx));
		if (!idx)
			return -ENOMEM;
		*ret_heap = idx;
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = &obj->obj.v[i];
	if (n > room) {
		qsort(idx, n, sizeof(*idx), member_cmp);
	} else {
		for (size_t i = 1; i < n; i++) {
			const struct kx_json_member *m = idx[i];
			size_t j = i;
			while (j && member_cmp(&idx[j - 1], &m) > 0) {
				idx[j] = idx[j - 1];
				j--;
			}
			idx[j] = m;
		}
	}
	for (size_t i = 1; i < n; i++)
		if (idx[i - 1]->key_len == idx[i]->key_len &&
		    memcmp(idx[i - 1]->key, idx[i]->key, idx[i]->key_len) == 0) {
			free(*ret_heap);
			*ret_heap = NULL;
			return -EINVAL;
		}
	*ret = idx;
	return 0;
}

static int indent(struct kx_buf *out, int depth)
{
	int r = kx_buf_putc(out, '\n');
	for (int i = 0; i < depth && r >= 0; i++)
		r = kx_buf_append(out, "  ", 2);
	return r;
}

/* pretty < 0: JCS; pretty >= 0: indented at that depth */
static int write_value(const struct kx_json *v, struct kx_buf *out, int pretty)
{
	int r;
	switch (v->type) {
	case KX_JSON_NULL:
		return kx_buf_append(out, "null", 4);
	case KX_JSON_TRUE:
		return kx_buf_append(out, "true", 4);
	case KX_JSON_FALSE:
		return kx_buf_append(out, "false", 5);
	case KX_JSON_NUMBER: {
		char num[KX_JCS_NUMBER_MAX];
		size_t n = kx_jcs_number(v->number, num);
		if (!n)
			return -EINVAL;
		return kx_buf_append(out, num, n);
	}
	case KX_JSON_STRING:
		return write_string(out, v->str.ptr, v->str.len);
	case KX_JSON_ARRAY:
		if ((r = kx_buf_putc(out, '[')) < 0)
			return r;
		for (size_t i = 0; i < v->arr.len; i++) {
			if (i && (r = kx_buf_putc(out, ',')) < 0)
				return r;
			if (pretty >= 0 && (r = indent(out, pretty + 1)) < 0)
				return r;
			if ((r = write_value(v->arr.v[i], out, pretty >= 0 ? pretty + 1 : -1)) < 0)
				return r;
		}
		if (pretty >= 0 && v->arr.len && (r = indent(out, pretty)) < 0)
			return r;
		return kx_buf_putc(out, ']');
	case KX_JSON_OBJECT: {
		const struct kx_json_member *local[32], **idx, **heap;
		if ((r = sorted_members(v, local, KX_ARRAY_SIZE(local), &idx, &heap)) < 0)
			return r;
		r = kx_buf_putc(out, '{');
		for (size_t i = 0; i < v->obj.len && r >= 0; i++) {
			if (i)
				r = kx_buf_putc(out, ',');
			if (r >= 0 && pretty >= 0)
				r = indent(out, pretty + 1);
			if (r >= 0)
				r = write_string(out, idx[i]->key, idx[i]->key_len);
			if (r >= 0)
				r = pretty >= 0 ? kx_buf_append(out, ": ", 2) : kx_buf_putc(out, ':');
			if (r >= 0)
				r = write_value(idx[i]->value, out, pretty >= 0 ? pretty + 1 : -1);
		}
		free(heap);
		if (r >= 0 && pretty >= 0 && v->obj.len)
			r = indent(out, pretty);
		if (r >= 0)
			r = kx_buf_putc(out, '}');
		return r;
	}
	}
	return -EINVAL;
}

int kx_jcs_write(const struct kx_json *v, struct kx_buf *out)
{
	return write_value(v, out, -1);
}

int kx_json_write_pretty(const struct kx_json *v, struct kx_buf *out)
{
	int r = write_value(v, out, 0);
	return r < 0 ? r : kx_buf_putc(out, '\n');
}

int canon_jcs_write_object(const struct kx_json *obj, struct kx_buf *out, canon_jcs_member_fn fn, void *ctx)
{
	if (!obj || obj->type != KX_JSON_OBJECT)
		return -EINVAL;
	const struct kx_json_member *local[32], **idx, **heap;
	int r = sorted_members(obj, local, KX_ARRAY_SIZE(local), &idx, &heap);
	if (r < 0)
		return r;
	size_t base = out->len;
	r = kx_buf_putc(out, '{');
	for (size_t i = 0; i < obj->obj.len && r >= 0; i++) {
		if (i)
			r = kx_buf_putc(out, ',');
		size_t start = out->len;
		if (r >= 0)
			r = write_string(out, idx[i]->key, idx[i]->key_len);
		if (r >= 0)
			r = kx_buf_putc(out, ':');
		if (r >= 0)
			r = write_value(idx[i]->value, out, -1);
		if (r >= 0)
			fn(ctx, idx[i]->key, idx[i]->key_len, start, out->len);
	}
	if (r >= 0)
		r = kx_buf_putc(out, '}');
	free(heap);
	if (r < 0)
		out->len = base;
	return r;
}
