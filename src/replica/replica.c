// SPDX-License-Identifier: MIT
/*
 * What the writer's and the reader's sides share: the PUBLISHED file (its one format, parsed
 * strictly: a file that does not say exactly which generation is complete is refused, never
 * guessed at), generation names, and removing a generation directory.
 */
#include "private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int kx_published_format(const struct kx_published *p, struct kx_buf *out)
{
	char when[40];
	kx_time_format(p->time_ns, when);
	int r = kx_buf_printf(out, "generation %llu\nsequence %llu\nstore-generation %llu\ntime %s\ntime-ns %lld\n",
			      (unsigned long long)p->generation, (unsigned long long)p->sequence,
			      (unsigned long long)p->store_generation, when, (long long)p->time_ns);
	if (r == 0 && p->store_id[0])
		r = kx_buf_printf(out, "store-id %s\npublication %s\n", p->store_id, p->publication);
	if (r == 0 && p->store_id[0] && p->interval_ns > 0)
		r = kx_buf_printf(out, "interval-ns %lld\n", (long long)p->interval_ns);
	return r;
}

bool kx_published_same_lineage(const struct kx_published *a, const struct kx_published *b)
{
	return a->publication[0] && strcmp(a->publication, b->publication) == 0 &&
	       strcmp(a->store_id, b->store_id) == 0;
}

int kx_published_check(const struct kx_published *p, struct kx_store *s, char **ret_why)
{
	struct kx_store_stats st;
	kx_store_stats(s, NULL, &st);
	uint64_t seq = kx_store_sequence(s);
	int n = 0;
	if (p->store_id[0] && strcmp(st.id, p->store_id) != 0)
		n = asprintf(ret_why, "generation %llu was published from store '%s'; this is store '%s'",
			     (unsigned long long)p->generation, p->store_id, st.id[0] ? st.id : "(no id)");
	else if (seq != p->sequence || st.generation != p->store_generation)
		n = asprintf(ret_why,
			     "generation %llu was published at sequence %llu, store generation %llu; the store holds "
			     "sequence %llu, store generation %llu: a file of the generation is missing or cut short",
			     (unsigned long long)p->generation, (unsigned long long)p->sequence,
			     (unsigned long long)p->store_generation, (unsigned long long)seq,
			     (unsigned long long)st.generation);
	else
		return 0;
	if (n < 0)
		*ret_why = NULL;
	return -EUCLEAN;
}

/* 32 lowercase hex digits */
static bool is_id(const char *v)
{
	size_t n = strspn(v, "0123456789abcdef");
	return n == 32 && v[n] == '\0';
}

static int bad(char **ret_err, const char *name, unsigned line, const char *fmt, const char *what)
{
	if (ret_err) {
		char *m = NULL;
		if (asprintf(&m, fmt, what) < 0)
			m = NULL;
		if (asprintf(ret_err, "%s:%u: %s (PUBLISHED is 'generation N', 'sequence N', 'store-generation N', "
				      "'time T', 'time-ns N', then 'store-id ID', 'publication ID', 'interval-ns N' lines: "
				      "docs/replicas.md)",
			     name, line, m ? m : "malformed") < 0)
			*ret_err = NULL;
		free(m);
	}
	return -EINVAL;
}

int kx_published_parse(const char *bytes, size_t len, const char *name, struct kx_published *ret, char **ret_err)
{
	static const char *const keys[] = { "generation", "sequence", "store-generation", "time", "time-ns",
					    "store-id", "publication", "interval-ns" };
	struct kx_published p = { 0 };
	unsigned line = 0, seen = 0;
	const char *at = bytes, *end = bytes + len;
	if (len > 4096)
		return bad(ret_err, name, 0, "%s", "longer than 4096 bytes");
	while (at < end) {
		const char *nl = memchr(at, '\n', (size_t)(end - at));
		if (!nl)
			return bad(ret_err, name, line + 1, "%s", "the last line has no newline (a file cut short?)");
		line++;
		char buf[256];
		size_t n = (size_t)(nl - at);
		if (n >= sizeof(buf))
			return bad(ret_err, name, line, "%s", "line too long");
		memcpy(buf, at, n);
		buf[n] = '\0';
		at = nl + 1;
		char *sp = strchr(buf, ' ');
		if (!sp)
			return bad(ret_err, name, line, "'%s' is not 'key value'", buf);
		*sp = '\0';
		const char *val = sp + 1;
		if (line > KX_ARRAY_SIZE(keys) || strcmp(buf, keys[line - 1]) != 0)
			return bad(ret_err, name, line, "unexpected key '%s'", buf);
		seen++;
		if (line == 4)
			continue; /* the time as text, for people: time-ns is the one read */
		if (line >= 6 && line <= 7) {
			if (!is_id(val))
				return bad(ret_err, name, line, "'%s' is not an id (32 hex digits)", val);
			memcpy(line == 6 ? p.store_id : p.publication, val, 33);
			continue;
		}
		uint64_t v;
		if (kx_parse_size(val, false, line == 1 || line == 8 ? 1 : 0, line == 5 || line == 8 ? INT64_MAX : UINT64_MAX,
				  &v) < 0)
			return bad(ret_err, name, line, "'%s' is not a number (a generation or an interval: 1 or more)", val);
		if (line == 1)
			p.generation = v;
		else if (line == 2)
			p.sequence = v;
		else if (line == 3)
			p.store_generation = v;
		else if (line == 5)
			p.time_ns = (int64_t)v;
		else
			p.interval_ns = (int64_t)v;
	}
	/* the lineage's two lines are both there, or (a kindex before lineages) neither; the interval
	 * follows them, from a writer that publishes every interval */
	if (seen != KX_ARRAY_SIZE(keys) && seen != KX_ARRAY_SIZE(keys) - 1 && seen != 5)
		return bad(ret_err, name, line, "'%s' is missing", keys[seen]);
	*ret = p;
	return 0;
}

int replica_read_published(int dirfd, const char *name, const char *shown, struct kx_published *ret, char **ret_err)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int r = -errno;
		if (ret_err && asprintf(ret_err, "cannot read '%s': %s", shown, strerror(-r)) < 0)
			*ret_err = NULL;
		return r;
	}
	char buf[4097];
	size_t len = 0;
	ssize_t n;
	while (len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) != 0) {
		if (n < 0) {
			int r = -errno;
			close(fd);
			if (ret_err && asprintf(ret_err, "cannot read '%s': %s", shown, strerror(-r)) < 0)
				*ret_err = NULL;
			return r;
		}
		len += (size_t)n;
	}
	close(fd);
	return kx_published_parse(buf, len, shown, ret, ret_err);
}

int kx_published_read(int dirfd, const char *name, struct kx_published *ret, char **ret_err)
{
	return replica_read_published(dirfd, name, name, ret, ret_err);
}

uint64_t kx_replica_gen_number(const char *name)
{
	if (strncmp(name, "gen-", 4) != 0 || name[4] < '1' || name[4] > '9')
		return 0;
	uint64_t v;
	return kx_parse_size(name + 4, false, 1, UINT64_MAX, &v) == 0 ? v : 0;
}

int replica_remove_dir(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOTDIR || errno == ELOOP) /* not a directory: the name alone goes */
			return unlinkat(dirfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
		return errno == ENOENT ? 0 : -errno;
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	int r = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || strcmp(e->d_name, REPLICA_MARK) == 0)
			continue;
		int q = 0;
		if (unlinkat(fd, e->d_name, 0) < 0 && errno != ENOENT)
			q = errno == EISDIR ? replica_remove_dir(fd, e->d_name) : -errno; /* removes it, too */
		r = r ? r : q;
	}
	if (r == 0 && unlinkat(fd, REPLICA_MARK, 0) < 0 && errno != ENOENT)
		r = -errno;
	closedir(d);
	if (r == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

int replica_write_file(int dirfd, const char *name, const char *bytes, size_t len)
{
	char tmp[300];
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	int r = 0;
	for (size_t off = 0; off < len && r == 0;) {
		ssize_t n = write(fd, bytes + off, len - off);
		if (n < 0 && errno != EINTR)
			r = -errno;
		else if (n > 0)
			off += (size_t)n;
	}
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r == 0 && fsync(dirfd) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(dirfd, tmp, 0);
	return r;
}
