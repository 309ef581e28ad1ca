// SPDX-License-Identifier: MIT
/*
 * The spool directory and receipts (see include/kx/spool.h). Files are decided in name order, one
 * ingest (one synced WriteBatch) each; the move to accepted/ or rejected/ comes after the commit,
 * so a crash can only leave a file to be decided again, never lose it.
 */
#include "kx/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- receipts ---------------------------------------------------------------------------------- */

int kx_receipt_accepted(struct kx_tree *t, const char *name, const struct kx_ingest_result *res,
			struct kx_buf *out)
{
	char when[40];
	kx_time_format(kx_now_ns(), when);
	char also[64] = "";
	if (res->aliases)
		snprintf(also, sizeof(also), ", %zu alias%s", res->aliases, res->aliases == 1 ? "" : "es");
	char sigs[64] = "";
	if (res->signatures) /* SPEC §10 */
		snprintf(sigs, sizeof(sigs), "; %zu signature%s stored", res->signatures, res->signatures == 1 ? "" : "s");
	char atts[96] = "";
	if (res->attestations) /* SPEC §8 */
		snprintf(atts, sizeof(atts), "; %zu attestation%s (%zu added)", res->attestations,
			 res->attestations == 1 ? "" : "s", res->attestations_added);
	size_t runs = res->len - res->attestations;
	int r = kx_buf_printf(out, "accepted %s at %s: %zu run%s (%zu added%s, %zu already present%s)%s\n", name, when,
			      runs, runs == 1 ? "" : "s", res->added, also, res->present, sigs, atts);
	struct kx_view *v = kx_store_view(kx_tree_store(t));
	for (size_t i = 0; i < res->len && r >= 0; i++) {
		char hex[KX_DIGEST_HEX + 1], path[8 * KX_NAME_MAX];
		kx_digest_hex(&res->items[i].run, hex);
		const enum kx_ingest_outcome o = res->items[i].outcome;
		const char *what = o == KX_INGEST_ADDED ? "added" : o == KX_INGEST_ALIAS ? "alias" : "present";
		if (res->items[i].attestation) { /* "attestation added <id> of runs/<id> <path>" */
			char of[KX_DIGEST_HEX + 1];
			kx_digest_hex(&res->items[i].subject, of);
			if (kx_tree_run_path(t, v, &res->items[i].subject, path, sizeof(path)) < 0)
				snprintf(path, sizeof(path), "(path unavailable)");
			r = kx_buf_printf(out, "attestation %s %.12s of runs/%.12s %s\n", what, hex, of, path);
			continue;
		}
		if (kx_tree_run_path(t, v, &res->items[i].run, path, sizeof(path)) < 0)
			snprintf(path, sizeof(path), "(path unavailable)");
		r = kx_buf_printf(out, "%s runs/%.12s %s\n", what, hex, path);
	}
	kx_view_release(v);
	return r;
}

/* A walk of a receipt's lines: the caller's callback and context, and what it named. */
struct receipt_walk {
	void *fn;
	void *ctx;
	int n;
};

/* The lines of an acceptance receipt after its first, each line(w, the line, its length): what
 * they named (w->n), 0 for text that is not one, or line's non-zero return. */
static int receipt_lines(const char *text, size_t len, int (*line)(struct receipt_walk *w, const char *l, size_t n),
			 struct receipt_walk *w)
{
	const char *end = text + len, *nl = memchr(text, '\n', len);
	if (len < 9 || memcmp(text, "accepted ", 9) != 0 || !nl)
		return 0;
	for (const char *l = nl + 1; l < end; l = nl + 1) {
		if (!(nl = memchr(l, '\n', (size_t)(end - l))))
			nl = end;
		int r = line(w, l, (size_t)(nl - l));
		if (r)
			return r;
	}
	return w->n;
}

/* "<12 hex digits> " at p, copied into id */
static bool receipt_id(const char *p, char id[13])
{
	if (strspn(p, "0123456789abcdef") < 12 || p[12] != ' ')
		return false;
	memcpy(id, p, 12);
	id[12] = '\0';
	return true;
}

static int run_line(struct receipt_walk *w, const char *l, size_t len)
{
	/* an alias is stored like a run added: "alias runs/<id> runs/<id> (of …)" */
	bool alias = len > 6 && memcmp(l, "alias ", 6) == 0;
	bool added = alias || (len > 6 && memcmp(l, "added ", 6) == 0);
	size_t skip = added ? 6 : len > 8 && memcmp(l, "present ", 8) == 0 ? 8 : 0;
	/* "runs/" + 12 hex digits + " " + path */
	if (!skip || len < skip + 19 || memcmp(l + skip, "runs/", 5) != 0 || l[skip + 17] != ' ')
		return 0;
	char id[13], path[4096];
	memcpy(id, l + skip + 5, 12);
	id[12] = '\0';
	size_t pn = len - (skip + 18);
	if (pn >= sizeof(path))
		pn = sizeof(path) - 1;
	memcpy(path, l + skip + 18, pn);
	path[pn] = '\0';
	w->n++;
	return ((kx_receipt_run_fn)w->fn)(w->ctx, added, id, path);
}

int kx_receipt_runs(const char *text, size_t len, kx_receipt_run_fn fn, void *ctx)
{
	struct receipt_walk w = { (void *)fn, ctx, 0 };
	return receipt_lines(text, len, run_line, &w);
}

/* "attestation added|present <id> of runs/<id> <path>" */
static int attestation_line(struct receipt_walk *w, const char *l, size_t len)
{
	char line[160], id[13], run[13];
	snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) - 1 ? len : sizeof(line) - 1), l);
	bool added = strncmp(line, "attestation added ", 18) == 0;
	size_t at = added ? 18 : strncmp(line, "attestation present ", 20) == 0 ? 20 : 0;
	if (!at || !receipt_id(line + at, id) || strncmp(line + at + 13, "of runs/", 8) != 0 ||
	    !receipt_id(line + at + 21, run))
		return 0;
	w->n++;
	return ((kx_receipt_attestation_fn)w->fn)(w->ctx, added, id, run);
}

int kx_receipt_attestations(const char *text, size_t len, kx_receipt_attestation_fn fn, void *ctx)
{
	struct receipt_walk w = { (void *)fn, ctx, 0 };
	return receipt_lines(text, len, attestation_line, &w);
}

int kx_receipt_rejected(const char *name, const struct kx_problems *p, struct kx_buf *out)
{
	char when[40];
	kx_time_format(kx_now_ns(), when);
	int r = kx_buf_printf(out, "rejected %s at %s: %zu problem%s; nothing was added\n", name, when, p->len,
			      p->len == 1 ? "" : "s");
	return r < 0 ? r : kx_problems_format(p, name, out);
}

int kx_receipt_artifact(const char *name, const struct kx_artifact_result *res, struct kx_buf *out)
{
	char when[40], d[KX_DIGEST_STR_MAX];
	kx_time_format(kx_now_ns(), when);
	kx_digest_format(&res->digest, d);
	int r = kx_buf_printf(out, "accepted %s at %s: artifact %s (%" PRIu64 " byte%s), %s\n", name, when, d, res->size,
			      res->size == 1 ? "" : "s", res->added ? "stored" : "already stored");
	if (r >= 0 && res->announced_by)
		r = kx_buf_printf(out, "announced by %zu stored run%s\n", res->announced_by, res->announced_by == 1 ? "" : "s");
	else if (r >= 0)
		r = kx_buf_puts(out, "announced by no stored run yet: kept a day for the run that announces it "
				     "(which may be on its way), then kindex gc may remove it\n");
	return r;
}

/* ---- the spool --------------------------------------------------------------------------------- */

struct kx_spool {
	char *dir;
	int dfd[5]; /* tmp new accepted rejected artifacts */
	int ino;    /* inotify */
	kx_spool_fn fn; /* not NULL: requests, not manifests (kx_spool_set_handler) */
	void *fn_ctx;
};

void kx_spool_set_handler(struct kx_spool *sp, kx_spool_fn fn, void *ctx)
{
	sp->fn = fn;
	sp->fn_ctx = ctx;
}

enum { D_TMP, D_NEW, D_ACCEPTED, D_REJECTED, D_ARTIFACTS, D_COUNT };
static const char *const subdirs[] = { "tmp", "new", "accepted", "rejected", "artifacts" };

void kx_spool_close(struct kx_spool *sp)
{
	if (!sp)
		return;
	for (int i = 0; i < D_COUNT; i++)
		if (sp->dfd[i] >= 0)
			close(sp->dfd[i]);
	if (sp->ino >= 0)
		close(sp->ino);
	free(sp->dir);
	free(sp);
}

void kx_receipts_remove_dead(int dfd)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		int pid;
		size_t len = strlen(de->d_name);
		if (sscanf(de->d_name, ".kx-%d", &pid) == 1 && pid > 0 && len > 4 &&
		    strcmp(de->d_name + len - 4, ".tmp") == 0 && kill(pid, 0) < 0 && errno == ESRCH)
			unlinkat(dfd, de->d_name, 0);
	}
	closedir(d);
}

int kx_spool_open(const char *dir, struct kx_spool **ret, char **ret_err)
{
	struct kx_spool *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	for (int i = 0; i < D_COUNT; i++)
		sp->dfd[i] = -1;
	sp->ino = -1;
	sp->dir = strdup(dir);
	int r = 0;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		goto fail;
	}
	for (int i = 0; i < D_COUNT; i++) {
		char p[4096];
		snprintf(p, sizeof(p), "%s/%s", dir, subdirs[i]);
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			r = -errno;
			goto fail;
		}
		sp->dfd[i] = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sp->dfd[i] < 0) {
			r = -errno;
			goto fail;
		}
		if (i == D_ACCEPTED || i == D_REJECTED)
			kx_receipts_remove_dead(sp->dfd[i]);
	}
	sp->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (sp->ino < 0) {
		r = -errno;
		goto fail;
	}
	static const int watched[] = { D_NEW, D_ARTIFACTS };
	for (size_t k = 0; k < sizeof(watched) / sizeof(*watched); k++) {
		char p[4096];
		snprintf(p, sizeof(p), "%s/%s", dir, subdirs[watched[k]]);
		if (inotify_add_watch(sp->ino, p, IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
			r = -errno;
			goto fail;
		}
	}
	*ret = sp;
	return 0;
fail:
	if (ret_err && asprintf(ret_err, "cannot open spool '%s': %s", dir, strerror(-r)) < 0)
		*ret_err = NULL;
	kx_spool_close(sp);
	return r;
}

int kx_spool_fd(const struct kx_spool *sp)
{
	return sp->ino;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* FNV-1a, 32 bits: enough to tell apart names that share their first 200-odd bytes. */
static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

int kx_receipt_name(const char *name, unsigned k, size_t reserve, char out[NAME_MAX + 1])
{
	char kpart[16] = "";
	if (k)
		snprintf(kpart, sizeof(kpart), ".%u", k);
	size_t len = strlen(name), klen = strlen(kpart);
	if (len == 0 || reserve + klen + 10 > NAME_MAX)
		return -EINVAL;
	if (len + klen + reserve <= NAME_MAX) {
		snprintf(out, NAME_MAX + 1, "%s%s", name, kpart);
		return 0;
	}
	/* name~hhhhhhhh.k: cut at a character boundary, so a UTF-8 name stays UTF-8 */
	size_t cut = NAME_MAX - reserve - klen - 9;
	while (cut > 0 && ((unsigned char)name[cut] & 0xc0) == 0x80)
		cut--;
	snprintf(out, NAME_MAX + 1, "%.*s~%08x%s", (int)cut, name, (unsigned)fnv1a(name), kpart);
	return 0;
}

static bool taken(int dfd, const char *name)
{
	return faccessat(dfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT;
}

/* Move from/NAME (new/ or artifacts/) to dest/NAME (or NAME.1 …), its receipt NAME.receipt or
 * NAME.error beside it. */
static int file_away(struct kx_spool *sp, int from, int dest, const char *name, const char *suffix,
		     const struct kx_buf *receipt, char final[NAME_MAX + 1])
{
	char rname[NAME_MAX + 1], tmpname[64];
	int dfd = sp->dfd[dest], r;
	/* neither the file's name nor its receipt's may be taken: nothing is overwritten */
	for (unsigned k = 0;; k++) {
		if (k > 100000)
			return -EEXIST;
		if ((r = kx_receipt_name(name, k, strlen(suffix), final)) < 0)
			return r;
		snprintf(rname, sizeof(rname), "%s%s", final, suffix);
		if (!taken(dfd, final) && !taken(dfd, rname))
			break;
	}
	/* the receipt first, under a temporary name: its presence says the move is coming */
	snprintf(tmpname, sizeof(tmpname), ".kx-%d.tmp", (int)getpid());
	int fd = openat(dfd, tmpname, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	ssize_t w = write(fd, receipt->ptr ? receipt->ptr : "", receipt->len);
	r = w == (ssize_t)receipt->len ? 0 : -EIO;
	if (fsync(fd) < 0 && !r)
		r = -errno;
	close(fd);
	if (r == 0 && renameat(dfd, tmpname, dfd, rname) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(dfd, tmpname, 0);
	if (r == 0 && renameat(sp->dfd[from], name, dfd, final) < 0)
		r = -errno;
	if (r == 0)
		fsync(dfd);
	return r;
}

static void drain(struct kx_spool *sp)
{
	char buf[4096];
	while (read(sp->ino, buf, sizeof(buf)) > 0)
		;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The names now in directory `dfd`, hidden ones left out (a producer's work in progress), in name
 * order; malloc'd, each and all. */
static int list_names(int dfd, char ***ret, size_t *ret_n)
{
	/* a descriptor of its own: a dup() would share the offset, and every listing after the first
	 * would start where the last one ended — at the end, seeing nothing */
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		int r = -errno;
		if (fd >= 0)
			close(fd);
		return r;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	int r = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if ((r = KX_GROW(names, cap, n, 64)) < 0)
			break;
		if (!(names[n] = strdup(e->d_name))) {
			r = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (r < 0) {
		free_names(names, n);
		return r;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_name);
	*ret = names;
	*ret_n = n;
	return 0;
}

/* Open dfd/NAME to read: 0 with *ret_fd; -EISDIR for anything but a regular file. O_NONBLOCK: a
 * FIFO must not hang the watcher; O_NOFOLLOW: a symbolic link is refused (ELOOP) like anything
 * else that is not a regular file, not retried forever. */
static int open_regular(int dfd, const char *name, int *ret_fd)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	int r = fd < 0 ? -errno : fstat(fd, &st) < 0 ? -errno : 0;
	if (r == -ELOOP || (r == 0 && !S_ISREG(st.st_mode)))
		r = -EISDIR;
	if (r < 0 && fd >= 0)
		close(fd);
	if (r == 0)
		*ret_fd = fd;
	return r;
}

/* File a refused file of from/ in rejected/ with every problem; 0, or the move's error. */
static int reject(struct kx_spool *sp, int from, const char *name, const struct kx_problems *p,
		  struct kx_buf *receipt, struct kx_spool_counts *counts, FILE *log)
{
	char final[NAME_MAX + 1];
	kx_receipt_rejected(name, p, receipt);
	int r = file_away(sp, from, D_REJECTED, name, ".error", receipt, final);
	if (r == 0) {
		counts->rejected++;
		if (log)
			fprintf(log, "rejected %s: %zu problem%s (rejected/%s.error)\n", name, p->len,
				p->len == 1 ? "" : "s", final);
	}
	return r;
}

/* One file of artifacts/ (SPEC §9): its bytes stored by their SHA-256, streamed, never held whole. */
static void decide_artifact(struct kx_spool *sp, struct kx_store *s, const struct kx_ingest_opts *o,
			    const char *name, struct kx_buf *receipt, struct kx_spool_counts *counts, FILE *log)
{
	struct kx_problems p;
	kx_problems_init(&p);
	kx_buf_reset(receipt);
	struct kx_artifact_opts ao = { .max_bytes = o->max_artifact ? o->max_artifact : KX_ARTIFACT_MAX_DEFAULT,
				       .name = name, .sync = true, .now_ns = o->now_ns };
	struct kx_artifact_result res = { 0 };
	int fd, r = open_regular(sp->dfd[D_ARTIFACTS], name, &fd);
	if (r == 0) {
		r = kx_ingest_artifact_fd(s, fd, name, &ao, &res, &p);
		close(fd);
	} else if (r == -EISDIR) {
		kx_problems_add(&p, 0, 0, "", "type", "not a regular file: an artifact's bytes are a file");
		r = -EINVAL;
	}
	if (r == 0) {
		char final[NAME_MAX + 1], d[KX_DIGEST_STR_MAX];
		if ((r = kx_receipt_artifact(name, &res, receipt)) == 0)
			r = file_away(sp, D_ARTIFACTS, D_ACCEPTED, name, ".receipt", receipt, final);
		if (r == 0) {
			counts->artifacts++;
			counts->generation = res.generation ? res.generation : counts->generation;
			kx_digest_format(&res.digest, d);
			if (log)
				fprintf(log, "accepted %s: artifact %s, %" PRIu64 " byte%s, %s\n", name, d, res.size,
					res.size == 1 ? "" : "s", res.added ? "stored" : "already stored");
		}
	} else if (r == -EINVAL) {
		r = reject(sp, D_ARTIFACTS, name, &p, receipt, counts, log);
	}
	if (r < 0) {
		counts->failed++;
		if (log)
			fprintf(log, "cannot store artifact %s/artifacts/%s: %s (left in artifacts/)\n", sp->dir, name,
				strerror(-r));
	}
	kx_problems_release(&p);
}

/* One file of new/: its manifests ingested (or, with a handler, its request applied). */
static void decide_file(struct kx_spool *sp, struct kx_store *s, struct kx_tree *t, const struct kx_ingest_opts *o,
			const char *name, struct kx_buf *bytes, struct kx_buf *receipt, struct kx_spool_counts *counts,
			FILE *log)
{
	size_t limit = o->limits.max_bytes ? o->limits.max_bytes : KX_MANIFEST_MAX_BYTES_DEFAULT;
	struct kx_problems p;
	kx_problems_init(&p);
	kx_buf_reset(receipt);
	char final[NAME_MAX + 1];
	int fd, rr = open_regular(sp->dfd[D_NEW], name, &fd);
	if (rr == 0) {
		close(fd);
		char path[4096];
		snprintf(path, sizeof(path), "%s/new/%s", sp->dir, name);
		rr = kx_read_file(path, limit, bytes);
	}
	struct kx_ingest_result res = { 0 };
	if (rr == -EFBIG) {
		kx_problems_add(&p, 0, 0, "", "size", "file is over the limit of %zu byte%s", limit, limit == 1 ? "" : "s");
		rr = -EINVAL;
	} else if (rr == -EISDIR) {
		kx_problems_add(&p, 0, 0, "", "type", "not a regular file");
		rr = -EINVAL;
	} else if (rr == 0 && sp->fn) {
		rr = sp->fn(sp->fn_ctx, s, bytes->ptr ? bytes->ptr : "", bytes->len, receipt, &p, &res.generation);
	} else if (rr == 0) {
		rr = kx_ingest_bytes(s, bytes->ptr ? bytes->ptr : "", bytes->len, o, &res, &p);
	}
	if (rr == 0) {
		if (!sp->fn)
			kx_receipt_accepted(t, name, &res, receipt);
		rr = file_away(sp, D_NEW, D_ACCEPTED, name, ".receipt", receipt, final);
		if (rr == 0) {
			counts->accepted++;
			counts->generation = res.generation ? res.generation : counts->generation;
			if (log)
				fprintf(log, "accepted %s: %zu added, %zu already present, %zu attestation%s added\n", name,
					res.added, res.present, res.attestations_added, res.attestations_added == 1 ? "" : "s");
		}
	} else if (rr == -EINVAL) {
		rr = reject(sp, D_NEW, name, &p, receipt, counts, log);
	}
	if (rr < 0) {
		counts->failed++;
		if (log)
			fprintf(log, "cannot ingest %s/new/%s: %s (left in new/)\n", sp->dir, name, strerror(-rr));
	}
	kx_ingest_result_release(&res);
	kx_problems_release(&p);
}

int kx_spool_process(struct kx_spool *sp, struct kx_store *s, struct kx_tree *t,
		     const struct kx_ingest_opts *opts, struct kx_spool_counts *counts, FILE *log)
{
	drain(sp);
	struct kx_ingest_opts o = opts ? *opts : (struct kx_ingest_opts){ 0 };
	o.sync = true;
	struct kx_buf bytes = { 0 }, receipt = { 0 };
	char **names = NULL;
	size_t n = 0;
	int r = 0;
	/* artifacts first, as kindex ingest does: a run dropped beside its bytes shows them at once,
	 * and its announced sizes meet the stored bytes. A spool of requests has no artifacts. */
	if (!sp->fn) {
		if ((r = list_names(sp->dfd[D_ARTIFACTS], &names, &n)) == 0) {
			for (size_t i = 0; i < n; i++)
				decide_artifact(sp, s, &o, names[i], &receipt, counts, log);
			free_names(names, n);
		}
	}
	if (r == 0 && (r = list_names(sp->dfd[D_NEW], &names, &n)) == 0) {
		for (size_t i = 0; i < n; i++)
			decide_file(sp, s, t, &o, names[i], &bytes, &receipt, counts, log);
		free_names(names, n);
	}
	kx_buf_release(&bytes);
	kx_buf_release(&receipt);
	return r;
}
