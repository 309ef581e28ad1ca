// SPDX-License-Identifier: MIT
/*
 * `kindex pull SRC DST`: the newest published generation, copied to a reader host (include/kx/
 * replica.h says what each step guarantees). Crash safety by ordering: everything is copied into
 * DST/gen-N.partial, synced (rsync --fsync), opened and verified, renamed to gen-N, and only then
 * does DST/current name it — a symbolic link made beside it and renamed over it, then the directory
 * synced. A pull killed at any point (kill -9, a full disk, a lost connection) leaves current
 * naming the complete generation it named before, and a gen-N.partial the next pull removes first.
 *
 * Why not rsync --link-dest for everything: it decides by size and mtime, which is whole seconds
 * on some file systems and sends nothing for a 16-byte CURRENT that changed within the same second
 * — a copy that does not open. Table files are immutable and RocksDB never reuses a number, so a
 * name is enough there; everything else (CURRENT, MANIFEST-*, OPTIONS-*, the log, PUBLISHED) is
 * small and copied every time.
 */
#include "private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int say(char **ret_err, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say(char **ret_err, int r, const char *fmt, ...)
{
	if (ret_err) {
		free(*ret_err);
		va_list ap;
		va_start(ap, fmt);
		if (vasprintf(ret_err, fmt, ap) < 0)
			*ret_err = NULL;
		va_end(ap);
	}
	return r;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/*
 * Run rsync with `args` (NULL-terminated, without the program); its standard error is kept (the
 * last 1 KiB) for the message. The child dies with this process (PR_SET_PDEATHSIG): a pull killed
 * mid-copy does not leave an rsync writing into a directory the next pull removes.
 */
static int run_rsync(const char *prog, const char *const *args, char **ret_err)
{
	const char *argv[24];
	size_t n = 0;
	argv[n++] = prog;
	for (; args[n - 1] && n < KX_ARRAY_SIZE(argv) - 1; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return say(ret_err, -errno, "cannot run %s: pipe: %s", prog, strerror(errno));
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return say(ret_err, -errno, "cannot run %s: fork: %s", prog, strerror(errno));
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		int null = open("/dev/null", O_RDWR);
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(p[1], STDERR_FILENO);
		execvp(prog, (char *const *)argv);
		dprintf(STDERR_FILENO, "cannot run %s: %s\n", prog, strerror(errno));
		_exit(127);
	}
	close(p[1]);
	char tail[1024];
	size_t len = 0;
	char buf[512];
	ssize_t got;
	while ((got = read(p[0], buf, sizeof(buf))) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (ssize_t i = 0; i < got; i++) {
			if (len == sizeof(tail) - 1) {
				memmove(tail, tail + 512, len - 512);
				len -= 512;
			}
			tail[len++] = buf[i];
		}
	}
	close(p[0]);
	tail[len] = '\0';
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	/* rsync's first line of its own says why ("rsync: [sender] link_stat ... failed: No such file
	 * or directory", "... write failed ...: No space left on device"); its summary comes last */
	while (len && tail[len - 1] == '\n')
		tail[--len] = '\0';
	char *last = strrchr(tail, '\n');
	last = last ? last + 1 : tail;
	for (char *l = tail; *l;) {
		char *nl = strchr(l, '\n');
		if (strncmp(l, "rsync: ", 7) == 0 || strncmp(l, "ssh: ", 5) == 0) {
			if (nl)
				*nl = '\0';
			last = l;
			break;
		}
		l = nl ? nl + 1 : l + strlen(l);
	}
	int r = strstr(tail, "No space left on device") || strstr(last, "No space left on device") ? -ENOSPC : -EIO;
	if (WIFEXITED(status))
		return say(ret_err, r, "%s exited with status %d: %s", prog, WEXITSTATUS(status), *last ? last : "(no message)");
	return say(ret_err, r, "%s was killed by signal %d", prog, WTERMSIG(status));
}

/*
 * What a pull makes carries MARK, made first and removed last: a pull removes only directories
 * that hold it (its partial copies, the generations it made, their trash), never what someone
 * else put in DST. A generation DST/current names is adopted (marked) too: a kindex before marks
 * made it.
 */
#define MARK REPLICA_MARK

static bool is_ours(int dstfd, const char *name)
{
	char path[NAME_MAX + sizeof(MARK) + 2];
	snprintf(path, sizeof(path), "%s/" MARK, name);
	return faccessat(dstfd, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

static int mark(int dstfd, const char *name)
{
	char path[NAME_MAX + sizeof(MARK) + 2];
	snprintf(path, sizeof(path), "%s/" MARK, name);
	int fd = openat(dstfd, path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/*
 * A generation's name in DST: "gen-N", or "gen-N-T" (T: its publication time-ns in hex) where
 * "gen-N" is taken by another publication's generation N (a re-created store, a wiped publish
 * directory) — a follow mount switches when current names another directory, so a name once
 * served is not reused for other bytes. N, or 0 for any other name.
 */
static uint64_t dst_gen_number(const char *name)
{
	if (strncmp(name, "gen-", 4) != 0)
		return 0;
	const char *digits = name + 4, *dash = strchr(digits, '-');
	size_t n = dash ? (size_t)(dash - digits) : strlen(digits);
	if (n == 0 || n > 20 || (dash && (strlen(dash + 1) != 16 || strspn(dash + 1, "0123456789abcdef") != 16)))
		return 0;
	char plain[32];
	snprintf(plain, sizeof(plain), "gen-%.*s", (int)n, digits);
	return kx_replica_gen_number(plain);
}

/* The directory DST/current names ("" if none, or not a generation's name). */
static void current_of(int dstfd, char ret[NAME_MAX + 1])
{
	ssize_t n = readlinkat(dstfd, "current", ret, NAME_MAX);
	ret[n > 0 ? n : 0] = '\0';
	if (!dst_gen_number(ret))
		ret[0] = '\0';
}

/* Hard-link every table (*.sst) and blob file (*.blob: artifacts' chunks, SPEC §9) of directory
 * `from` into `to` (both under dstfd) — RocksDB never changes either once written; the count in
 * *ret. */
static int link_tables(int dstfd, const char *from, const char *to, unsigned *ret)
{
	int ffd = openat(dstfd, from, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int tfd = openat(dstfd, to, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = ffd >= 0 ? fdopendir(ffd) : NULL;
	int r = 0;
	if (!d || tfd < 0)
		r = -errno;
	for (struct dirent *e; r == 0 && d && (e = readdir(d));)
		if (ends_with(e->d_name, ".sst") || ends_with(e->d_name, ".blob")) {
			if (linkat(ffd, e->d_name, tfd, e->d_name, 0) < 0)
				r = -errno;
			else
				(*ret)++;
		}
	if (d)
		closedir(d);
	else if (ffd >= 0)
		close(ffd);
	if (tfd >= 0)
		close(tfd);
	return r;
}

/*
 * VERIFIED, in a generation a pull verified: "kindexfs-verified <store generation> <created ns>
 * <table>" — the state of which store it vouches for, and the highest table file number whose
 * every block it read. The next pull verifies only what the commits after it added
 * (kx_store_verify_since) and reads only the tables numbered above <table>, provided each table
 * of the copy up to <table> is the same file, linked (a RocksDB table never changes, and a store
 * never numbers two tables alike). Without <table> (a VERIFIED an older pull wrote), every table.
 */
#define VERIFIED "VERIFIED"

struct verified {
	uint64_t store_generation;
	int64_t created_ns;
	uint64_t table;
};

/* The number of a table file, "000013.sst": 13; 0 for any other name. */
static uint64_t table_number(const char *name)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(name, &end, 10);
	return end != name && name[0] >= '0' && name[0] <= '9' && strcmp(end, ".sst") == 0 && !errno ? n : 0;
}

/*
 * The highest table number in generation `gen` of DST (*ret_last), and whether each of its tables
 * numbered up to `upto` is the very file of the same name in generation `from` (NULL: none).
 */
static int tables_of(int dstfd, const char *gen, const char *from, uint64_t upto, uint64_t *ret_last, bool *ret_linked)
{
	int gfd = openat(dstfd, gen, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ffd = from ? openat(dstfd, from, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	DIR *d = gfd >= 0 ? fdopendir(gfd) : NULL;
	int r = d ? 0 : -errno;
	*ret_last = 0;
	*ret_linked = ffd >= 0;
	for (struct dirent *e; r == 0 && d && (e = readdir(d));) {
		uint64_t n = table_number(e->d_name);
		if (n > *ret_last)
			*ret_last = n;
		struct stat a, b;
		if (n && n <= upto && *ret_linked)
			*ret_linked = fstatat(gfd, e->d_name, &a, AT_SYMLINK_NOFOLLOW) == 0 &&
				      fstatat(ffd, e->d_name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino &&
				      a.st_dev == b.st_dev;
	}
	if (d)
		closedir(d);
	else if (gfd >= 0)
		close(gfd);
	if (ffd >= 0)
		close(ffd);
	return r;
}

static bool verified_read(int dstfd, const char *gen, struct verified *ret)
{
	char path[64], buf[128];
	snprintf(path, sizeof(path), "%s/" VERIFIED, gen);
	int fd = openat(dstfd, path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	unsigned long long g, t = 0;
	long long c;
	if (sscanf(buf, "kindexfs-verified %llu %lld %llu", &g, &c, &t) < 2 || !g)
		return false;
	*ret = (struct verified){ g, c, t };
	return true;
}

static int verified_write(const char *part, const struct verified *v)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "kindexfs-verified %llu %lld %llu\n", (unsigned long long)v->store_generation,
			 (long long)v->created_ns, (unsigned long long)v->table);
	int dfd = open(part, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fd = dfd < 0 ? -1 : openat(dfd, VERIFIED, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (dfd >= 0)
		close(dfd);
	if (fd < 0)
		return -errno;
	errno = 0; /* a short write sets none: -EIO */
	int r = write(fd, line, (size_t)n) == n && fsync(fd) == 0 ? 0 : errno ? -errno : -EIO;
	close(fd);
	return r;
}

/*
 * The copy opens, is the generation PUBLISHED describes, and (with `verify`) verifies: all of it,
 * or — `since`, the previous generation's VERIFIED, of the same store and older — what was added
 * after it, reading the tables numbered above since->table. *ret_since says which (0: all); a
 * verified copy gets its VERIFIED, vouching for its tables up to `last_table`.
 */
static int check_copy(const char *path, const struct kx_published *want, bool verify, const struct verified *since,
		      uint64_t last_table, uint64_t *ret_since, char **ret_err)
{
	struct kx_published got;
	char *why = NULL;
	int pfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = pfd < 0 ? -errno : kx_published_read(pfd, "PUBLISHED", &got, &why);
	if (pfd >= 0)
		close(pfd);
	if (r < 0) {
		say(ret_err, -EUCLEAN, "the copy has no valid PUBLISHED: %s", why ? why : strerror(-r));
		free(why);
		return -EUCLEAN;
	}
	if (got.generation != want->generation || got.sequence != want->sequence || got.time_ns != want->time_ns ||
	    strcmp(got.publication, want->publication) != 0 || strcmp(got.store_id, want->store_id) != 0)
		return say(ret_err, -EUCLEAN,
			   "the copy's PUBLISHED says generation %llu sequence %llu of publication '%s', not %llu %llu of '%s'",
			   (unsigned long long)got.generation, (unsigned long long)got.sequence, got.publication,
			   (unsigned long long)want->generation, (unsigned long long)want->sequence, want->publication);
	struct kx_store *s;
	/* to verify: opened as verify opens, so a table that cannot be read is named, not a count */
	if ((r = kx_store_open(path, verify ? KX_STORE_VERIFY : KX_STORE_READONLY, &s, &why)) < 0) {
		say(ret_err, -EUCLEAN, "the copy does not open: %s", why ? why : strerror(-r));
		free(why);
		return -EUCLEAN;
	}
	struct kx_store_stats st;
	kx_store_stats(s, NULL, &st);
	/* the copy is not what PUBLISHED describes: said after verify's problems, which name the table
	 * where a damaged one hides the store's own counts */
	char *mismatch = NULL;
	if (kx_published_check(want, s, &mismatch) < 0 && !mismatch)
		mismatch = strdup("the copy is not the store PUBLISHED describes");
	if (verify) {
		struct kx_problems pr;
		kx_problems_init(&pr);
		uint64_t checked = 0;
		*ret_since = since && since->created_ns == st.created_ns && since->store_generation < st.generation
				     ? since->store_generation
				     : 0;
		r = kx_store_verify_since(s, *ret_since, *ret_since ? since->table : 0, &pr, &checked);
		if (r == 0 && pr.len) {
			struct kx_buf b = { 0 };
			kx_problems_format(&pr, NULL, &b);
			char *nl = b.ptr ? strchr(b.ptr, '\n') : NULL;
			if (nl)
				*nl = '\0';
			r = say(ret_err, -EUCLEAN, "the copy does not verify: %zu problem%s, the first: %s", pr.len,
				pr.len == 1 ? "" : "s", b.ptr ? b.ptr : "");
			kx_buf_release(&b);
		} else if (r < 0) {
			say(ret_err, r, "the copy cannot be verified: %s", strerror(-r));
		}
		kx_problems_release(&pr);
	}
	if (r == 0 && mismatch)
		r = say(ret_err, -EUCLEAN, "%s", mismatch);
	else if (r == 0 && verify && (r = verified_write(path, &(struct verified){ st.generation, st.created_ns, last_table })) < 0)
		say(ret_err, r, "cannot write '%s/" VERIFIED "': %s", path, strerror(-r));
	free(mismatch);
	kx_store_close(s);
	return r;
}

/* Whether a follow mount holds generation `name` (its shared flock): an exclusive one fails. */
static bool held(int dstfd, const char *name)
{
	int fd = openat(dstfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool r = flock(fd, LOCK_EX | LOCK_NB) < 0;
	close(fd); /* lets the lock go */
	return r;
}

static void note_left_alone(struct kx_pull_result *res, const char *name)
{
	size_t n = strlen(res->left_alone);
	if (n + strlen(name) + 3 < sizeof(res->left_alone))
		snprintf(res->left_alone + n, sizeof(res->left_alone) - n, "%s%s", n ? ", " : "", name);
	else if (n + 5 < sizeof(res->left_alone) && !ends_with(res->left_alone, "…"))
		snprintf(res->left_alone + n, sizeof(res->left_alone) - n, ", …");
}

/* Remove the generations other than `keep` that this pull's kind made and no mount holds. */
static void prune(int dstfd, const char *keep, struct kx_pull_result *ret)
{
	int fd = dup(dstfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d); /* the offset is dstfd's too */
	for (struct dirent *e; (e = readdir(d));) {
		if (!dst_gen_number(e->d_name) || strcmp(e->d_name, keep) == 0 || !is_ours(dstfd, e->d_name))
			continue;
		int gfd = openat(dstfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (gfd < 0)
			continue;
		if (flock(gfd, LOCK_EX | LOCK_NB) == 0) {
			/* no mount holds it, and none can start to: mounts open current, not this */
			char trash[NAME_MAX + 1];
			snprintf(trash, sizeof(trash), ".trash-%.200s", e->d_name);
			if (renameat(dstfd, e->d_name, dstfd, trash) == 0 && replica_remove_dir(dstfd, trash) == 0)
				ret->removed++;
		} else {
			ret->kept++;
		}
		close(gfd);
	}
	closedir(d);
}

/*
 * Leftovers of a pull killed before — partial copies, half-removed generations, a link not
 * renamed — go; what carries no mark is named in ret->left_alone and stays.
 */
static int clean(int dstfd, const char *current, struct kx_pull_result *ret)
{
	int fd = dup(dstfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	rewinddir(d); /* the offset is dstfd's too */
	int r = 0;
	for (struct dirent *e; r == 0 && (e = readdir(d));) {
		bool leftover = ends_with(e->d_name, ".partial") || strncmp(e->d_name, ".trash-", 7) == 0;
		if ((leftover || dst_gen_number(e->d_name)) && !is_ours(dstfd, e->d_name)) {
			if (strcmp(e->d_name, current) != 0)
				note_left_alone(ret, e->d_name);
		} else if (leftover) {
			r = replica_remove_dir(dstfd, e->d_name);
		} else if (strcmp(e->d_name, ".current.tmp") == 0 || strcmp(e->d_name, ".PUBLISHED.incoming") == 0) {
			unlinkat(dstfd, e->d_name, 0);
		}
	}
	closedir(d);
	return r;
}

/* SRC/PUBLISHED, fetched and parsed. -ENOENT (not a publish directory), -ENOSPC, -EUCLEAN. */
static int fetch_published(const char *rsync, const char *spub, int dstfd, const char *dpub, struct kx_published *ret,
			   char **ret_err)
{
	/* its mtime too: the writer's last round, alive or publishing (LAST_PUBLISHED) */
	const char *fetch[] = { "-q", "--ignore-times", "--times", spub, dpub, NULL };
	int r = run_rsync(rsync, fetch, ret_err);
	if (r < 0) {
		char *why = *ret_err;
		*ret_err = NULL;
		r = r == -ENOSPC ? r : -ENOENT;
		say(ret_err, r, "cannot read '%s' (is it a publish directory?): %s", spub, why ? why : strerror(-r));
		free(why);
		return r;
	}
	char *why = NULL;
	r = replica_read_published(dstfd, ".PUBLISHED.incoming", spub, ret, &why);
	if (r < 0) {
		say(ret_err, -EUCLEAN, "'%s' is not valid: %s", spub, why ? why : strerror(-r));
		r = -EUCLEAN;
	}
	free(why);
	return r;
}

/* Two PUBLISHED that name the same generation of the same publication (time-ns tells apart two
 * of a kindex before lineages). */
static bool same_publication(const struct kx_published *a, const struct kx_published *b)
{
	return a->generation == b->generation && a->sequence == b->sequence && a->time_ns == b->time_ns &&
	       strcmp(a->publication, b->publication) == 0 && strcmp(a->store_id, b->store_id) == 0;
}

/*
 * The name the copy of `pub` gets: "gen-N", or "gen-N-T" where gen-N is current, held by a mount
 * or not this pull's (a generation N of another publication, a directory someone made). An
 * unused gen-N of ours (a pull killed between its rename and the flip) is removed first.
 */
static int pick_name(int dstfd, const struct kx_published *pub, const char *current, char name[48])
{
	snprintf(name, 48, "gen-%llu", (unsigned long long)pub->generation);
	for (int i = 0; i < 2; i++) {
		struct stat st;
		if (fstatat(dstfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return errno == ENOENT ? 0 : -errno;
		if (is_ours(dstfd, name) && strcmp(name, current) != 0 && !held(dstfd, name))
			return replica_remove_dir(dstfd, name);
		snprintf(name, 48, "gen-%llu-%016llx", (unsigned long long)pub->generation, (unsigned long long)pub->time_ns);
	}
	return -EEXIST;
}

/* The copy's phases; *ret_vanished: the generation was removed at SRC while it was copied. */
static int copy_generation(const char *rsync, const char *sgen, const char *partslash, char **ret_err)
{
	/* phase 1: the table and blob files this host lacks or has otherwise (rsync's size and time
	 * check: those linked from the same lineage are the same files); those SRC no longer has go */
	const char *tables[] = { "-a", "--fsync", "--delete", "--include=*.sst", "--include=*.blob", "--exclude=*",
				 sgen, partslash, NULL };
	/* phase 2: every other file, copied whatever its time and size */
	const char *rest[] = { "-a", "--fsync", "--ignore-times", "--exclude=*.sst", "--exclude=*.blob", sgen, partslash,
			       NULL };
	int r = run_rsync(rsync, tables, ret_err);
	return r < 0 ? r : run_rsync(rsync, rest, ret_err);
}

/*
 * DST/PULL-FAILED, while pulls fail: how many in a row, since when, and the last one's message,
 * for the operator and for a follow mount's README (kx_replica_pull_failing). Removed by the
 * next pull that succeeds.
 */
#define PULL_FAILED "PULL-FAILED"

struct failed {
	unsigned n;       /* pulls failed in a row */
	int64_t since_ns; /* the first of them */
	char error[1024]; /* the last one's message, its first line */
};

/* PULL-FAILED under dirfd (`name`: it, or a path to it): 1 with *ret, 0 when there is none, or a
 * negative errno (-EINVAL: it does not say what it should). */
static int failed_read(int dirfd, const char *name, struct failed *ret)
{
	char buf[4096];
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	ssize_t got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got < 0)
		return -errno;
	buf[got] = '\0';
	long long since;
	const char *s = strstr(buf, "\nsince-ns "), *e = strstr(buf, "\nerror ");
	if (sscanf(buf, "failures %u", &ret->n) != 1 || !ret->n || !s || sscanf(s, "\nsince-ns %lld", &since) != 1 || !e)
		return -EINVAL;
	ret->since_ns = since;
	e += 7;
	kx_copyn(ret->error, sizeof(ret->error), e, strcspn(e, "\n"));
	return 1;
}

static void note_failure(int dstfd, const char *err)
{
	struct failed f;
	if (failed_read(dstfd, PULL_FAILED, &f) <= 0)
		f = (struct failed){ .since_ns = kx_now_ns() };
	char when[40], *text = NULL;
	kx_time_format(f.since_ns, when);
	int len = asprintf(&text, "failures %u\nsince %s\nsince-ns %lld\nerror %.*s\n", f.n + 1, when,
			   (long long)f.since_ns, (int)strcspn(err, "\n"), err);
	if (len > 0)
		replica_write_file(dstfd, PULL_FAILED, text, (size_t)len);
	free(text);
}

int kx_replica_pull_failing(const char *dst, char **ret)
{
	char path[PATH_MAX], when[40];
	snprintf(path, sizeof(path), "%s/" PULL_FAILED, dst);
	struct failed f;
	int r = failed_read(AT_FDCWD, path, &f);
	if (r <= 0)
		return r;
	kx_time_format(f.since_ns, when);
	return asprintf(ret, "pulls       failing: %u in a row since %s (%s); the last: %s\n", f.n, when, path,
			f.error) < 0
		       ? -ENOMEM
		       : 1;
}

int kx_replica_stale(const char *dst, unsigned intervals, int64_t now_ns, struct kx_heard *w, char **ret)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/" KX_LAST_PUBLISHED, dst);
	struct stat st;
	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	/* only the writer moves the mtime: a pull that finds nothing new copies the same one */
	int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (mtime != w->mtime_ns) {
		struct kx_published p;
		w->interval_ns = kx_published_read(AT_FDCWD, path, &p, NULL) == 0 ? p.interval_ns : 0;
		w->mtime_ns = mtime;
		w->heard_ns = now_ns;
	}
	if (!w->interval_ns || !intervals || now_ns - w->heard_ns <= (int64_t)intervals * w->interval_ns)
		return 0;
	char since[40];
	kx_time_format(w->heard_ns, since);
	return asprintf(ret,
			"replica     NOT ADVANCING since %s: no pull has brought a newer round of the writer's for "
			"%u of its %.3f s intervals (%s, the writer's PUBLISHED as the last good pull fetched it, "
			"has not moved): see that the writer runs and that pulls run and succeed\n",
			since, intervals, (double)w->interval_ns / 1e9, path) < 0
		       ? -ENOMEM
		       : 1;
}

#define PULL_TRIES 4 /* copies tried when the writer removes the generation being copied */

int kx_replica_pull(const struct kx_pull_opts *o, struct kx_pull_result *ret, char **ret_err)
{
	const char *rsync = o->rsync ? o->rsync : getenv("KINDEX_RSYNC");
	if (!rsync || !*rsync)
		rsync = "rsync";
	struct kx_pull_result res = { 0 };
	int dstfd = -1, lockfd = -1, r = 0;
	char *src = NULL, *spub = NULL, *dpub = NULL, *sgen = NULL, *partslash = NULL, *part = NULL;
	char cur[NAME_MAX + 1], pname[64] = "";
	if (mkdir(o->dst, 0755) < 0 && errno != EEXIST) {
		r = say(ret_err, -errno, "cannot make replica directory '%s': %s", o->dst, strerror(errno));
		goto out;
	}
	if ((dstfd = open(o->dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		r = say(ret_err, -errno, "cannot open replica directory '%s': %s", o->dst, strerror(errno));
		goto out;
	}
	if ((lockfd = openat(dstfd, ".pull.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0 ||
	    flock(lockfd, LOCK_EX | LOCK_NB) < 0) {
		r = errno == EWOULDBLOCK ? -EBUSY : -errno;
		say(ret_err, r, r == -EBUSY ? "another kindex pull is copying into '%s' (%s/.pull.lock is locked)"
					    : "cannot lock replica directory '%s' (%s/.pull.lock)",
		    o->dst, o->dst);
		goto out;
	}
	/* the generation served now: its own PUBLISHED says which publication it is */
	current_of(dstfd, cur);
	struct kx_published have;
	char cur_current[NAME_MAX + 16], cur_pub[NAME_MAX + 16];
	snprintf(cur_current, sizeof(cur_current), "%s/CURRENT", cur);
	snprintf(cur_pub, sizeof(cur_pub), "%s/PUBLISHED", cur);
	char *why = NULL;
	bool have_cur = cur[0] && faccessat(dstfd, cur_current, F_OK, 0) == 0 && /* not deleted by hand */
			replica_read_published(dstfd, cur_pub, cur_pub, &have, &why) == 0;
	free(why);
	if (have_cur && !is_ours(dstfd, cur) && (r = mark(dstfd, cur)) < 0) { /* made before marks */
		say(ret_err, r, "cannot mark '%s/%s' as made by kindex pull: %s", o->dst, cur, strerror(-r));
		goto out;
	}
	if ((r = clean(dstfd, cur, &res)) < 0) {
		say(ret_err, r, "cannot remove what an earlier pull left in '%s': %s", o->dst, strerror(-r));
		goto out;
	}
	/* a trailing '/' changes what rsync copies: one each, added below */
	size_t sl = strlen(o->src);
	while (sl > 1 && o->src[sl - 1] == '/')
		sl--;
	if (asprintf(&src, "%.*s", (int)sl, o->src) < 0 || asprintf(&spub, "%s/PUBLISHED", src) < 0 ||
	    asprintf(&dpub, "%s/.PUBLISHED.incoming", o->dst) < 0) {
		r = -ENOMEM;
		goto out;
	}
	struct kx_published pub;
	if ((r = fetch_published(rsync, spub, dstfd, dpub, &pub, ret_err)) < 0)
		goto out;
	for (unsigned tries = 1;; tries++) {
		res.generation = pub.generation;
		if (have_cur && same_publication(&have, &pub)) {
			res.up_to_date = true;
			snprintf(res.name, sizeof(res.name), "%s", cur);
			goto prune;
		}
		/* table files are shared only within a lineage, and only going forward */
		bool lineage = have_cur && kx_published_same_lineage(&have, &pub) && pub.generation > have.generation &&
			       pub.sequence >= have.sequence;
		res.new_lineage = have_cur && !kx_published_same_lineage(&have, &pub);
		res.went_back = have_cur && !lineage && strcmp(have.store_id, pub.store_id) == 0 && have.store_id[0] &&
				pub.sequence < have.sequence;
		char name[48], was[64];
		snprintf(was, sizeof(was), "%s", pname);
		if ((r = pick_name(dstfd, &pub, cur, name)) < 0) {
			say(ret_err, r, "cannot copy generation %llu into '%s': '%s/gen-%llu' and '%s/%s' are taken (in use "
					"by a mount, or not made by kindex pull)",
			    (unsigned long long)pub.generation, o->dst, o->dst, (unsigned long long)pub.generation, o->dst,
			    name);
			goto out;
		}
		snprintf(res.name, sizeof(res.name), "%s", name);
		snprintf(pname, sizeof(pname), "%s.partial", name);
		free(sgen);
		free(partslash);
		if (asprintf(&sgen, "%s/gen-%llu/", src, (unsigned long long)pub.generation) < 0 ||
		    asprintf(&partslash, "%s/%s/", o->dst, pname) < 0) {
			r = -ENOMEM;
			goto out;
		}
		if (was[0] && renameat(dstfd, was, dstfd, pname) == 0) {
			/* the copy of the generation the writer removed meanwhile: what it has is of this lineage */
		} else if (mkdirat(dstfd, pname, 0755) < 0 || (r = mark(dstfd, pname)) < 0) {
			r = say(ret_err, r < 0 ? r : -errno, "cannot make '%s/%s': %s", o->dst, pname,
				strerror(r < 0 ? -r : errno));
			goto out;
		} else if (lineage && (r = link_tables(dstfd, cur, pname, &res.linked)) < 0) {
			say(ret_err, r, "cannot link the table files of '%s/%s' into '%s/%s': %s", o->dst, cur, o->dst,
			    pname, strerror(-r));
			goto out;
		}
		if ((r = copy_generation(rsync, sgen, partslash, ret_err)) == 0)
			break;
		/* removed by the writer while copied (it publishes faster than this copies)? then the
		 * newer generation, from what the copy has */
		char *copy_err = *ret_err;
		*ret_err = NULL;
		struct kx_published next;
		bool newer = tries < PULL_TRIES && fetch_published(rsync, spub, dstfd, dpub, &next, ret_err) == 0 &&
			     next.generation > pub.generation && kx_published_same_lineage(&next, &pub);
		free(*ret_err);
		*ret_err = NULL;
		if (!newer) {
			say(ret_err, r, "cannot copy generation %llu from '%s' into '%s': %s%s",
			    (unsigned long long)pub.generation, src, o->dst, copy_err ? copy_err : strerror(-r),
			    res.behind ? " (each newer generation the writer published was removed before its copy "
					 "ended: publish less often, or keep more generations)"
				       : "");
			free(copy_err);
			goto out;
		}
		free(copy_err);
		res.behind++;
		pub = next;
	}
	int pfd = openat(dstfd, pname, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0 || fsync(pfd) < 0) {
		r = say(ret_err, -errno, "cannot sync '%s/%s': %s", o->dst, pname, strerror(errno));
		if (pfd >= 0)
			close(pfd);
		goto out;
	}
	close(pfd);
	struct verified since;
	if (asprintf(&part, "%s/%s", o->dst, pname) < 0) {
		r = -ENOMEM;
		goto out;
	}
	bool incremental = res.linked && !o->verify_all && verified_read(dstfd, cur, &since);
	uint64_t last_table;
	bool linked;
	if ((r = tables_of(dstfd, pname, incremental ? cur : NULL, incremental ? since.table : 0, &last_table,
			   &linked)) < 0) {
		say(ret_err, r, "cannot read '%s': %s", part, strerror(-r));
		goto out;
	}
	if (incremental && !linked)
		since.table = 0; /* a table of the verified generation's was copied again: read them all */
	if ((r = check_copy(part, &pub, o->verify, incremental ? &since : NULL, last_table, &res.verified_since,
			    ret_err)) < 0) {
		char *m = *ret_err;
		*ret_err = NULL;
		say(ret_err, r, "generation %llu copied from '%s' is refused: %s", (unsigned long long)pub.generation, src,
		    m ? m : strerror(-r));
		free(m);
		goto out;
	}
	if (renameat(dstfd, pname, dstfd, res.name) < 0) {
		r = say(ret_err, -errno, "cannot rename '%s' to '%s/%s': %s", part, o->dst, res.name, strerror(errno));
		goto out;
	}
	pname[0] = '\0';
	snprintf(res.previous, sizeof(res.previous), "%s", have_cur ? cur : "");
	unlinkat(dstfd, ".current.tmp", 0);
	if (symlinkat(res.name, dstfd, ".current.tmp") < 0 || renameat(dstfd, ".current.tmp", dstfd, "current") < 0 ||
	    fsync(dstfd) < 0) {
		r = say(ret_err, -errno, "cannot make '%s/current' name %s: %s", o->dst, res.name, strerror(errno));
		goto out;
	}
prune:
	prune(dstfd, res.name, &res);
	*ret = res;
out:
	if (r < 0 && dstfd >= 0) {
		if (pname[0])
			replica_remove_dir(dstfd, pname);
		unlinkat(dstfd, ".current.tmp", 0);
	}
	if (lockfd >= 0 && r != -EBUSY) { /* this pull held DST: it says how it went */
		if (r < 0) {
			note_failure(dstfd, *ret_err ? *ret_err : strerror(-r));
			unlinkat(dstfd, ".PUBLISHED.incoming", 0);
		} else {
			unlinkat(dstfd, PULL_FAILED, 0);
			renameat(dstfd, ".PUBLISHED.incoming", dstfd, KX_LAST_PUBLISHED);
		}
	}
	if (dstfd >= 0)
		close(dstfd);
	if (lockfd >= 0)
		close(lockfd);
	free(src);
	free(spub);
	free(dpub);
	free(sgen);
	free(partslash);
	free(part);
	return r;
}
