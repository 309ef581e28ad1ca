// SPDX-License-Identifier: MIT
/*
 * kx_problems: the list of {JSON pointer, rule, message} every validation stage appends to, so a
 * rejected file is answered with everything that is wrong with it at once.
 */
#include "kx/common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kx_problems_init(struct kx_problems *p)
{
	memset(p, 0, sizeof(*p));
}

void kx_problems_release(struct kx_problems *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->len; i++) {
		free(p->v[i].pointer);
		free(p->v[i].rule);
		free(p->v[i].message);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

static int grow(struct kx_problems *p)
{
	return KX_GROW(p->v, p->cap, p->len, 8);
}

int kx_problems_add(struct kx_problems *p, unsigned line, unsigned col, const char *pointer,
		    const char *rule, const char *fmt, ...)
{
	if (grow(p) < 0)
		return -ENOMEM;
	struct kx_problem *q = &p->v[p->len];
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&q->message, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	q->pointer = strdup(pointer ? pointer : "");
	q->rule = strdup(rule);
	if (!q->pointer || !q->rule) {
		free(q->pointer);
		free(q->rule);
		free(q->message);
		return -ENOMEM;
	}
	q->line = line;
	q->col = col;
	p->len++;
	return 0;
}

int kx_problems_splice(struct kx_problems *to, struct kx_problems *from, const char *prefix)
{
	for (size_t i = 0; i < from->len; i++) {
		if (grow(to) < 0)
			return -ENOMEM;
		struct kx_problem q = from->v[i];
		if (prefix && *prefix) {
			char *np;
			if (asprintf(&np, "%s%s", prefix, q.pointer) < 0)
				return -ENOMEM;
			free(q.pointer);
			q.pointer = np;
		}
		to->v[to->len++] = q;
	}
	free(from->v);
	memset(from, 0, sizeof(*from));
	return 0;
}

int kx_problems_format(const struct kx_problems *p, const char *file, struct kx_buf *out)
{
	int r = 0;
	for (size_t i = 0; i < p->len && r >= 0; i++) {
		const struct kx_problem *q = &p->v[i];
		if (file)
			r = kx_buf_printf(out, "%s:", file);
		if (r >= 0 && q->line)
			r = kx_buf_printf(out, q->col ? "%u:%u:" : "%u:", q->line, q->col);
		if (r >= 0 && (file || q->line))
			r = kx_buf_putc(out, ' ');
		if (r >= 0)
			r = kx_buf_printf(out, "%s: %s: %s\n", *q->pointer ? q->pointer : "(file)",
					  q->rule, q->message);
	}
	return r;
}
