// SPDX-License-Identifier: MIT
/*
 * The strict JSON parser and the tree builder (see include/kx/json.h for why not cJSON).
 *
 * The parser is recursive descent over a byte range. Lines are counted while skipping whitespace
 * (a raw newline can appear nowhere else in JSON), so every node carries its line and column for
 * error messages at no extra pass. Children are collected on one scratch stack shared by all
 * levels and copied into exact-size arena arrays when their container closes.
 */
#include "kx/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parser {
	struct kx_arena *a;
	const unsigned char *p, *end, *start;
	const unsigned char *line_start;
	unsigned line;
	unsigned depth, max_depth;
	struct kx_json_error *err;
	/* scratch stack of pending children: values for arrays, members for objects */
	struct kx_json_member *stack;
	size_t sp, scap;
	struct kx_buf sbuf; /* unescaped string scratch */
};

static int fail(struct parser *ps, const unsigned char *at, const char *rule, const char *fmt, ...)
	KX_PRINTF(4, 5);

static int fail(struct parser *ps, const unsigned char *at, const char *rule, const char *fmt, ...)
{
	struct kx_json_error *e = ps->err;
	if (!e)
		return -EINVAL;
	/* at may be past newlines we have not counted (inside a string nothing is a newline) */
	unsigned line = ps->line;
	const unsigned char *ls = ps->line_start;
	for (const unsigned char *q = ls; q < at; q++)
		if (*q == '\n') {
			line++;
			ls = q + 1;
		}
	e->line = line;
	e->col = (unsigned)(at - ls) + 1;
	e->offset = (size_t)(at - ps->start);
	e->rule = rule;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const char *describe(const struct parser *ps, const unsigned char *at, char buf[24])
{
	if (at >= ps->end)
		return "end of input";
	unsigned c = *at;
	if (c >= 0x20 && c < 0x7f)
		snprintf(buf, 24, "'%c'", (char)c);
	else
		snprintf(buf, 24, "byte 0x%02x", c);
	return buf;
}

static void skip_ws(struct parser *ps)
{
	const unsigned char *p = ps->p;
	while (p < ps->end) {
		unsigned char c = *p;
		if (c == ' ' || c == '\t' || c == '\r') {
			p++;
		} else if (c == '\n') {
			p++;
			ps->line++;
			ps->line_start = p;
			/* indentation: pretty-printed manifests are mostly spaces after newlines */
			while (ps->end - p >= 8 && memcmp(p, "        ", 8) == 0)
				p += 8;
		} else {
			break;
		}
	}
	ps->p = p;
}

static struct kx_json *node(struct parser *ps, enum kx_json_type t, const unsigned char *at)
{
	struct kx_json *v = kx_arena_alloc(ps->a, sizeof(*v));
	if (!v)
		return NULL;
	memset(v, 0, sizeof(*v));
	v->type = t;
	v->line = ps->line;
	v->col = (uint32_t)(at - ps->line_start) + 1;
	return v;
}

static int push(struct parser *ps, const char *key, size_t key_len, struct kx_json *val)
{
	if (ps->sp == ps->scap) {
		size_t n = ps->scap ? ps->scap * 2 : 64;
		void *s = realloc(ps->stack, n * sizeof(*ps->stack));
		if (!s)
			return -ENOMEM;
		ps->stack = s;
		ps->scap = n;
	}
	ps->stack[ps->sp++] = (struct kx_json_member){ key, key_len, val };
	return 0;
}

/*
 * Length of the valid UTF-8 sequence at p (1..4), or 0 when it is not one: overlong forms,
 * surrogates (U+D800..U+DFFF) and code points past U+10FFFF are refused (RFC 3629).
 */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	if (c < 0x80)
		return 1;
	size_t n = (size_t)(end - p);
	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if (c == 0xe0 && p[1] < 0xa0)
			return 0; /* overlong */
		if (c == 0xed && p[1] >= 0xa0)
			return 0; /* surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
			return 0;
		if (c == 0xf0 && p[1] < 0x90)
			return 0;
		if (c == 0xf4 && p[1] >= 0x90)
			return 0;
		return 4;
	}
	return 0;
}

static int hex4(const unsigned char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		unsigned c = p[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

static int put_utf8(struct kx_buf *b, unsigned cp)
{
	char u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return kx_buf_append(b, u, n);
}

/*
 * Bytes a string can hold as they are, eight at a time: stops at '"', '\\', a control byte or a
 * non-ASCII byte (SWAR: "has a byte less than n" and "has a zero byte" bit tricks).
 */
static const unsigned char *plain_run(const unsigned char *p, const unsigned char *end)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	while (end - p >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		uint64_t quote = w ^ (ones * '"'), bslash = w ^ (ones * '\\');
		uint64_t stop = ((w - ones * 0x20) | ((quote - ones) & ~quote) | ((bslash - ones) & ~bslash) | w) & highs;
		if (stop)
			break;
		p += 8;
	}
	while (p < end && *p != '"' && *p != '\\' && *p >= 0x20 && *p < 0x80)
		p++;
	return p;
}

/* Parse a string starting at the opening quote; on success ps->p is past the closing quote. */
static int parse_string(struct parser *ps, const char **ret, size_t *ret_len)
{
	const unsigned char *p = ps->p + 1, *begin = p;
	char d[24];
	/* fast path: plain ASCII without escapes is copied in one go */
	p = plain_run(p, ps->end);
	if (p < ps->end && *p == '"') {
		char *s = kx_arena_strndup(ps->a, (const char *)begin, (size_t)(p - begin));
		if (!s)
			return -ENOMEM;
		*ret = s;
		*ret_len = (size_t)(p - begin);
		ps->p = p + 1;
		return 0;
	}
	struct kx_buf *b = &ps->sbuf;
	kx_buf_reset(b);
	if (kx_buf_append(b, begin, (size_t)(p - begin)) < 0)
		return -ENOMEM;
	for (;;) {
		if (p >= ps->end)
			return fail(ps, p, "json-syntax", "unterminated string (started at column %u)",
				    (unsigned)(ps->p - ps->line_start) + 1);
		unsigned c = *p;
		if (c == '"')
			break;
		if (c < 0x20)
			return fail(ps, p, "json-syntax",
				    "control character 0x%02x in a string must be escaped", c);
		if (c == '\\') {
			if (p + 1 >= ps->end)
				return fail(ps, p, "json-syntax", "unterminated escape");
			unsigned e = p[1];
			char out;
			switch (e) {
			case '"': out = '"'; break;
			case '\\': out = '\\'; break;
			case '/': out = '/'; break;
			case 'b': out = '\b'; break;
			case 'f': out = '\f'; break;
			case 'n': out = '\n'; break;
			case 'r': out = '\r'; break;
			case 't': out = '\t'; break;
			case 'u': {
				unsigned cp;
				if (ps->end - p < 6 || hex4(p + 2, &cp) < 0)
					return fail(ps, p, "json-syntax", "\\u must be followed by 4 hex digits");
				const unsigned char *esc = p;
				p += 6;
				if (cp >= 0xd800 && cp <= 0xdbff) {
					unsigned lo;
					if (ps->end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, &lo) < 0 ||
					    lo < 0xdc00 || lo > 0xdfff)
						return fail(ps, esc, "utf8",
							    "unpaired surrogate \\u%04X: a string must be valid Unicode", cp);
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					p += 6;
				} else if (cp >= 0xdc00 && cp <= 0xdfff) {
					return fail(ps, esc, "utf8",
						    "unpaired surrogate \\u%04X: a string must be valid Unicode", cp);
				}
				if (put_utf8(b, cp) < 0)
					return -ENOMEM;
				continue;
			}
			default:
				return fail(ps, p, "json-syntax", "invalid escape %s",
					    describe(ps, p + 1, d));
			}
			if (kx_buf_putc(b, out) < 0)
				return -ENOMEM;
			p += 2;
			continue;
		}
		size_t n = c < 0x80 ? 1 : utf8_len(p, ps->end);
		if (!n)
			return fail(ps, p, "utf8", "invalid UTF-8 sequence (byte 0x%02x)", c);
		if (kx_buf_append(b, p, n) < 0)
			return -ENOMEM;
		p += n;
	}
	char *s = kx_arena_strndup(ps->a, b->ptr, b->len);
	if (!s)
		return -ENOMEM;
	*ret = s;
	*ret_len = b->len;
	ps->p = p + 1;
	return 0;
}

static int parse_number(struct parser *ps, struct kx_json *v)
{
	const unsigned char *p = ps->p, *begin = p;
	char d[24];
	if (p < ps->end && *p == '-')
		p++;
	if (p >= ps->end || *p < '0' || *p > '9')
		return fail(ps, p, "json-syntax", "expected a digit, found %s", describe(ps, p, d));
	if (*p == '0') {
		p++;
		if (p < ps->end && *p >= '0' && *p <= '9')
			return fail(ps, p, "json-syntax", "a number cannot have a leading zero");
	} else {
		while (p < ps->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < ps->end && *p == '.') {
		p++;
		if (p >= ps->end || *p < '0' || *p > '9')
			return fail(ps, p, "json-syntax", "expected a digit after '.', found %s",
				    describe(ps, p, d));
		while (p < ps->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < ps->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < ps->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= ps->end || *p < '0' || *p > '9')
			return fail(ps, p, "json-syntax", "expected a digit in the exponent, found %s",
				    describe(ps, p, d));
		while (p < ps->end && *p >= '0' && *p <= '9')
			p++;
	}
	size_t n = (size_t)(p - begin);
	char small[64], *txt = small;
	if (n >= sizeof(small)) {
		txt = kx_arena_alloc(ps->a, n + 1);
		if (!txt)
			return -ENOMEM;
	}
	memcpy(txt, begin, n);
	txt[n] = '\0';
	/* JSON number syntax is a subset of strtod's in every locale we run in ("C": we never call
	 * setlocale), and glibc's strtod rounds correctly */
	v->number = strtod(txt, NULL);
	if (!isfinite(v->number))
		v->nonfinite = true;
	ps->p = p;
	return 0;
}

static int parse_value(struct parser *ps, struct kx_json **ret);

static int parse_container(struct parser *ps, struct kx_json *v, bool is_obj)
{
	char d[24];
	if (++ps->depth > ps->max_depth)
		return fail(ps, ps->p, "depth", "nesting deeper than %u levels", ps->max_depth);
	size_t base = ps->sp;
	ps->p++; /* past '{' or '[' */
	skip_ws(ps);
	char close = is_obj ? '}' : ']';
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		goto done;
	}
	for (;;) {
		const char *key = NULL;
		size_t key_len = 0;
		int r;
		if (is_obj) {
			if (ps->p >= ps->end || *ps->p != '"')
				return fail(ps, ps->p, "json-syntax", "expected a member name in quotes, found %s",
					    describe(ps, ps->p, d));
			r = parse_string(ps, &key, &key_len);
			if (r < 0)
				return r;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':')
				return fail(ps, ps->p, "json-syntax", "expected ':' after a member name, found %s",
					    describe(ps, ps->p, d));
			ps->p++;
			skip_ws(ps);
		}
		struct kx_json *child;
		r = parse_value(ps, &child);
		if (r < 0)
			return r;
		if (push(ps, key, key_len, child) < 0)
			return -ENOMEM;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			skip_ws(ps);
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			break;
		}
		return fail(ps, ps->p, "json-syntax", "expected ',' or '%c', found %s", close,
			    describe(ps, ps->p, d));
	}
done:;
	size_t n = ps->sp - base;
	if (is_obj) {
		v->obj.len = v->obj.cap = n;
		if (n) {
			v->obj.v = kx_arena_alloc(ps->a, n * sizeof(*v->obj.v));
			if (!v->obj.v)
				return -ENOMEM;
			memcpy(v->obj.v, ps->stack + base, n * sizeof(*v->obj.v));
		}
	} else {
		v->arr.len = v->arr.cap = n;
		if (n) {
			v->arr.v = kx_arena_alloc(ps->a, n * sizeof(*v->arr.v));
			if (!v->arr.v)
				return -ENOMEM;
			for (size_t i = 0; i < n; i++)
				v->arr.v[i] = ps->stack[base + i].value;
		}
	}
	ps->sp = base;
	ps->depth--;
	return 0;
}

static int literal(struct parser *ps, const char *word, size_t n)
{
	char d[24];
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
		return fail(ps, ps->p, "json-syntax", "expected a JSON value, found %s",
			    describe(ps, ps->p, d));
	ps->p += n;
	return 0;
}

static int parse_value(struct parser *ps, struct kx_json **ret)
{
	char d[24];
	if (ps->p >= ps->end)
		return fail(ps, ps->p, "json-syntax", "expected a JSON value, found end of input");
	const unsigned char *at = ps->p;
	struct kx_json *v;
	int r;
	switch (*at) {
	case '{':
	case '[':
		v = node(ps, *at == '{' ? KX_JSON_OBJECT : KX_JSON_ARRAY, at);
		if (!v)
			return -ENOMEM;
		r = parse_container(ps, v, *at == '{');
		v->src = (const char *)at;
		v->src_len = (size_t)(ps->p - at);
		break;
	case '"':
		v = node(ps, KX_JSON_STRING, at);
		if (!v)
			return -ENOMEM;
		r = parse_string(ps, &v->str.ptr, &v->str.len);
		break;
	case 't':
		v = node(ps, KX_JSON_TRUE, at);
		r = v ? literal(ps, "true", 4) : -ENOMEM;
		break;
	case 'f':
		v = node(ps, KX_JSON_FALSE, at);
		r = v ? literal(ps, "false", 5) : -ENOMEM;
		break;
	case 'n':
		v = node(ps, KX_JSON_NULL, at);
		r = v ? literal(ps, "null", 4) : -ENOMEM;
		break;
	default:
		if (*at == '-' || (*at >= '0' && *at <= '9')) {
			v = node(ps, KX_JSON_NUMBER, at);
			r = v ? parse_number(ps, v) : -ENOMEM;
			break;
		}
		if (*at >= 0x80 && !utf8_len(at, ps->end))
			return fail(ps, at, "utf8", "invalid UTF-8 sequence (byte 0x%02x)", *at);
		return fail(ps, at, "json-syntax", "expected a JSON value, found %s", describe(ps, at, d));
	}
	if (r < 0)
		return r;
	*ret = v;
	return 0;
}

int kx_json_parse(struct kx_arena *a, const char *text, size_t len, unsigned max_depth,
		  struct kx_json **ret_value, size_t *ret_end, struct kx_json_error *err)
{
	struct parser ps = {
		.a = a,
		.p = (const unsigned char *)text,
		.start = (const unsigned char *)text,
		.end = (const unsigned char *)text + len,
		.line_start = (const unsigned char *)text,
		.line = 1,
		.max_depth = max_depth ? max_depth : KX_JSON_MAX_DEPTH_DEFAULT,
		.err = err,
	};
	kx_buf_init(&ps.sbuf, 0);
	/* a UTF-8 byte order mark is not JSON (RFC 8259 §8.1 lets parsers ignore it; we refuse it
	 * so the error is explicit rather than a mystery digest) */
	struct kx_json *v = NULL;
	int r;
	skip_ws(&ps);
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
		r = fail(&ps, ps.p, "json-syntax", "byte order mark at start of file: save as UTF-8 without BOM");
		goto out;
	}
	r = parse_value(&ps, &v);
	if (r < 0)
		goto out;
	skip_ws(&ps);
	if (ret_end)
		*ret_end = (size_t)(ps.p - ps.start);
	else if (ps.p < ps.end) {
		char d[24];
		r = fail(&ps, ps.p, "json-syntax", "unexpected %s after the JSON value",
			 describe(&ps, ps.p, d));
		goto out;
	}
	*ret_value = v;
out:
	free(ps.stack);
	kx_buf_release(&ps.sbuf);
	return r;
}

/* ---- lint ------------------------------------------------------------------------------------- */

/*
 * The path to the node being checked, as a chain on the stack. The JSON pointer is only spelled
 * out when a problem is found: linting runs on every manifest, problems are rare.
 */
struct seg {
	const struct seg *up;
	const char *key; /* NULL for an array index */
	size_t key_len;
	size_t index;
};

static int spell(const struct seg *s, struct kx_buf *out)
{
	if (!s)
		return 0;
	int r = spell(s->up, out);
	if (r < 0)
		return r;
	return s->key ? kx_json_pointer_append(out, s->key, s->key_len) : kx_buf_printf(out, "/%zu", s->index);
}

struct lint_ctx {
	struct kx_problems *pr;
	const char *prefix;
};

static int report(struct lint_ctx *c, const struct seg *at, const struct kx_json *v, const char *rule,
		  const char *msg, unsigned other_line)
{
	struct kx_buf ptr;
	kx_buf_init(&ptr, 0);
	int r = kx_buf_puts(&ptr, c->prefix);
	if (r >= 0)
		r = spell(at, &ptr);
	if (r >= 0)
		r = other_line ? kx_problems_add(c->pr, v->line, v->col, ptr.ptr, rule, msg, other_line)
			       : kx_problems_add(c->pr, v->line, v->col, ptr.ptr, rule, "%s", msg);
	kx_buf_release(&ptr);
	return r;
}

static int key_cmp_bytes(const void *x, const void *y)
{
	const struct kx_json_member *a = *(const struct kx_json_member *const *)x;
	const struct kx_json_member *b = *(const struct kx_json_member *const *)y;
	size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
	int c = memcmp(a->key, b->key, n);
	if (c)
		return c;
	if (a->key_len != b->key_len)
		return a->key_len < b->key_len ? -1 : 1;
	/* equal keys: keep source order so the second occurrence is reported */
	return a < b ? -1 : a > b;
}

static bool same_key(const struct kx_json_member *a, const struct kx_json_member *b)
{
	return a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0;
}

static int dup_problem(struct lint_ctx *c, const struct seg *at, const struct kx_json_member *first,
		       const struct kx_json_member *again)
{
	struct seg s = { at, again->key, again->key_len, 0 };
	int r = report(c, &s, again->value, "duplicate-key",
		       "member name appears more than once in this object (first on line %u)", first->value->line);
	return r < 0 ? r : 1;
}

/* Duplicate keys of one object: pairwise for small objects (no allocation), sorted otherwise. */
static int duplicates(struct lint_ctx *c, const struct seg *at, const struct kx_json *v)
{
	size_t n = v->obj.len;
	int count = 0, r;
	if (n <= 16) {
		for (size_t i = 1; i < n; i++)
			for (size_t j = 0; j < i; j++)
				if (same_key(&v->obj.v[j], &v->obj.v[i])) {
					if ((r = dup_problem(c, at, &v->obj.v[j], &v->obj.v[i])) < 0)
						return r;
					count++;
					break;
				}
		return count;
	}
	const struct kx_json_member **idx = malloc(n * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		idx[i] = &v->obj.v[i];
	qsort(idx, n, sizeof(*idx), key_cmp_bytes);
	for (size_t i = 1; i < n; i++) {
		if (!same_key(idx[i - 1], idx[i]))
			continue;
		size_t first = i - 1;
		while (first && same_key(idx[first - 1], idx[i]))
			first--;
		if ((r = dup_problem(c, at, idx[first], idx[i])) < 0) {
			free(idx);
			return r;
		}
		count++;
	}
	free(idx);
	return count;
}

static int lint(struct lint_ctx *c, const struct seg *at, const struct kx_json *v)
{
	int count = 0, r;
	switch (v->type) {
	case KX_JSON_NUMBER:
		if (!v->nonfinite)
			return 0;
		r = report(c, at, v, "non-finite", "number is out of the range of an IEEE-754 double", 0);
		return r < 0 ? r : 1;
	case KX_JSON_ARRAY:
		for (size_t i = 0; i < v->arr.len; i++) {
			struct seg s = { at, NULL, 0, i };
			if ((r = lint(c, &s, v->arr.v[i])) < 0)
				return r;
			count += r;
		}
		return count;
	case KX_JSON_OBJECT:
		if (v->obj.len > 1) {
			if ((r = duplicates(c, at, v)) < 0)
				return r;
			count += r;
		}
		for (size_t i = 0; i < v->obj.len; i++) {
			const struct kx_json *m = v->obj.v[i].value;
			if (m->type != KX_JSON_ARRAY && m->type != KX_JSON_OBJECT && !m->nonfinite)
				continue;
			struct seg s = { at, v->obj.v[i].key, v->obj.v[i].key_len, 0 };
			if ((r = lint(c, &s, m)) < 0)
				return r;
			count += r;
		}
		return count;
	default:
		return 0;
	}
}

int kx_json_lint(const struct kx_json *v, const char *prefix, struct kx_problems *problems)
{
	struct lint_ctx c = { problems, prefix ? prefix : "" };
	return lint(&c, NULL, v);
}

int kx_json_pointer_append(struct kx_buf *ptr, const char *key, size_t key_len)
{
	int r = kx_buf_putc(ptr, '/');
	for (size_t i = 0; i < key_len && r >= 0; i++) {
		if (key[i] == '~')
			r = kx_buf_append(ptr, "~0", 2);
		else if (key[i] == '/')
			r = kx_buf_append(ptr, "~1", 2);
		else
			r = kx_buf_putc(ptr, key[i]);
	}
	return r;
}

/* ---- building --------------------------------------------------------------------------------- */

struct kx_json *kx_json_new(struct kx_arena *a, enum kx_json_type type)
{
	struct kx_json *v = kx_arena_zalloc(a, sizeof(*v));
	if (v)
		v->type = type;
	return v;
}

struct kx_json *kx_json_new_number(struct kx_arena *a, double n)
{
	struct kx_json *v = kx_json_new(a, KX_JSON_NUMBER);
	if (v) {
		v->number = n;
		v->nonfinite = !isfinite(n);
	}
	return v;
}

struct kx_json *kx_json_new_stringn(struct kx_arena *a, const char *s, size_t len)
{
	struct kx_json *v = kx_json_new(a, KX_JSON_STRING);
	if (!v)
		return NULL;
	v->str.ptr = kx_arena_strndup(a, s, len);
	v->str.len = len;
	return v->str.ptr ? v : NULL;
}

struct kx_json *kx_json_new_string(struct kx_arena *a, const char *s)
{
	return kx_json_new_stringn(a, s, strlen(s));
}

struct kx_json *kx_json_new_bool(struct kx_arena *a, bool b)
{
	return kx_json_new(a, b ? KX_JSON_TRUE : KX_JSON_FALSE);
}

struct kx_json *kx_json_clone(struct kx_arena *a, const struct kx_json *v)
{
	struct kx_json *c = kx_arena_alloc(a, sizeof(*c));
	if (!c)
		return NULL;
	*c = *v;
	switch (v->type) {
	case KX_JSON_STRING:
		c->str.ptr = kx_arena_strndup(a, v->str.ptr, v->str.len);
		return c->str.ptr ? c : NULL;
	case KX_JSON_ARRAY:
		c->arr.v = NULL;
		c->arr.cap = c->arr.len;
		if (v->arr.len) {
			c->arr.v = kx_arena_alloc(a, v->arr.len * sizeof(*c->arr.v));
			if (!c->arr.v)
				return NULL;
			for (size_t i = 0; i < v->arr.len; i++)
				if (!(c->arr.v[i] = kx_json_clone(a, v->arr.v[i])))
					return NULL;
		}
		return c;
	case KX_JSON_OBJECT:
		c->obj.v = NULL;
		c->obj.cap = c->obj.len;
		if (v->obj.len) {
			c->obj.v = kx_arena_alloc(a, v->obj.len * sizeof(*c->obj.v));
			if (!c->obj.v)
				return NULL;
			for (size_t i = 0; i < v->obj.len; i++) {
				c->obj.v[i].key_len = v->obj.v[i].key_len;
				c->obj.v[i].key = kx_arena_strndup(a, v->obj.v[i].key, v->obj.v[i].key_len);
				c->obj.v[i].value = kx_json_clone(a, v->obj.v[i].value);
				if (!c->obj.v[i].key || !c->obj.v[i].value)
					return NULL;
			}
		}
		return c;
	default:
		return c;
	}
}

static struct kx_json_member *find(const struct kx_json *obj, const char *key, size_t n)
{
	if (!obj || obj->type != KX_JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < obj->obj.len; i++) {
		struct kx_json_member *m = &obj->obj.v[i];
		if (m->key_len == n && memcmp(m->key, key, n) == 0)
			return m;
	}
	return NULL;
}

int kx_json_set(struct kx_arena *a, struct kx_json *obj, const char *key, struct kx_json *value)
{
	if (!obj || obj->type != KX_JSON_OBJECT || !value)
		return -EINVAL;
	size_t n = strlen(key);
	obj->src = NULL;
	struct kx_json_member *m = find(obj, key, n);
	if (m) {
		m->value = value;
		return 0;
	}
	if (obj->obj.len == obj->obj.cap) {
		size_t cap = obj->obj.cap ? obj->obj.cap * 2 : 8;
		struct kx_json_member *v = kx_arena_alloc(a, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		if (obj->obj.len)
			memcpy(v, obj->obj.v, obj->obj.len * sizeof(*v));
		obj->obj.v = v;
		obj->obj.cap = cap;
	}
	char *k = kx_arena_strndup(a, key, n);
	if (!k)
		return -ENOMEM;
	obj->obj.v[obj->obj.len++] = (struct kx_json_member){ k, n, value };
	return 0;
}

int kx_json_set_string(struct kx_arena *a, struct kx_json *obj, const char *key, const char *s)
{
	struct kx_json *v = kx_json_new_string(a, s);
	return v ? kx_json_set(a, obj, key, v) : -ENOMEM;
}

int kx_json_set_number(struct kx_arena *a, struct kx_json *obj, const char *key, double n)
{
	struct kx_json *v = kx_json_new_number(a, n);
	return v ? kx_json_set(a, obj, key, v) : -ENOMEM;
}

int kx_json_append(struct kx_arena *a, struct kx_json *arr, struct kx_json *value)
{
	if (!arr || arr->type != KX_JSON_ARRAY || !value)
		return -EINVAL;
	arr->src = NULL;
	if (arr->arr.len == arr->arr.cap) {
		size_t cap = arr->arr.cap ? arr->arr.cap * 2 : 8;
		struct kx_json **v = kx_arena_alloc(a, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		if (arr->arr.len)
			memcpy(v, arr->arr.v, arr->arr.len * sizeof(*v));
		arr->arr.v = v;
		arr->arr.cap = cap;
	}
	arr->arr.v[arr->arr.len++] = value;
	return 0;
}

/* ---- reading ---------------------------------------------------------------------------------- */

struct kx_json *kx_json_get(const struct kx_json *obj, const char *key)
{
	struct kx_json_member *m = find(obj, key, strlen(key));
	return m ? m->value : NULL;
}

const char *kx_json_get_string(const struct kx_json *obj, const char *key)
{
	struct kx_json *v = kx_json_get(obj, key);
	if (!v || v->type != KX_JSON_STRING || strlen(v->str.ptr) != v->str.len)
		return NULL;
	return v->str.ptr;
}

struct kx_json *kx_json_pointer(const struct kx_json *root, const char *pointer)
{
	const struct kx_json *v = root;
	const char *p = pointer;
	char tok[256];
	while (v && *p) {
		if (*p != '/')
			return NULL;
		p++;
		size_t n = 0;
		while (*p && *p != '/') {
			char c = *p++;
			if (c == '~' && (*p == '0' || *p == '1'))
				c = *p++ == '0' ? '~' : '/';
			if (n + 1 >= sizeof(tok))
				return NULL;
			tok[n++] = c;
		}
		tok[n] = '\0';
		if (v->type == KX_JSON_OBJECT) {
			struct kx_json_member *m = find(v, tok, n);
			v = m ? m->value : NULL;
		} else if (v->type == KX_JSON_ARRAY) {
			char *end;
			unsigned long i = strtoul(tok, &end, 10);
			if (!n || *end || (n > 1 && tok[0] == '0') || i >= v->arr.len)
				return NULL;
			v = v->arr.v[i];
		} else {
			return NULL;
		}
	}
	return (struct kx_json *)v;
}

const char *kx_json_type_name(enum kx_json_type t)
{
	switch (t) {
	case KX_JSON_NULL: return "null";
	case KX_JSON_FALSE:
	case KX_JSON_TRUE: return "boolean";
	case KX_JSON_NUMBER: return "number";
	case KX_JSON_STRING: return "string";
	case KX_JSON_ARRAY: return "array";
	case KX_JSON_OBJECT: return "object";
	}
	return "?";
}

bool kx_json_equal(const struct kx_json *x, const struct kx_json *y)
{
	if (x->type != y->type)
		return false;
	switch (x->type) {
	case KX_JSON_NUMBER:
		return x->number == y->number;
	case KX_JSON_STRING:
		return x->str.len == y->str.len && memcmp(x->str.ptr, y->str.ptr, x->str.len) == 0;
	case KX_JSON_ARRAY:
		if (x->arr.len != y->arr.len)
			return false;
		for (size_t i = 0; i < x->arr.len; i++)
			if (!kx_json_equal(x->arr.v[i], y->arr.v[i]))
				return false;
		return true;
	case KX_JSON_OBJECT:
		if (x->obj.len != y->obj.len)
			return false;
		for (size_t i = 0; i < x->obj.len; i++) {
			struct kx_json_member *m = find(y, x->obj.v[i].key, x->obj.v[i].key_len);
			if (!m || !kx_json_equal(x->obj.v[i].value, m->value))
				return false;
		}
		return true;
	default:
		return true;
	}
}
