// SPDX-License-Identifier: MIT
/*
 * The writer publishes generations (kindexfs -o publish=DIR, kindex watch --publish DIR): a
 * RocksDB checkpoint of its own store, taken by the process that writes it — a checkpoint taken
 * by another process raced the writer's compactions —, then the file that announces it.
 *
 * Crash safety by ordering: RocksDB builds the checkpoint in gen-N.tmp and renames it to gen-N
 * once every file is in place and synced; then gen-N/PUBLISHED is written (tmp, fsync, rename);
 * then DIR/PUBLISHED the same way. A writer killed at any point leaves PUBLISHED naming the last
 * complete generation, never a partial one, and the next open removes what it left: a gen-N.tmp,
 * or a gen-N that PUBLISHED does not name yet. Generations past `keep` are removed after
 * PUBLISHED has moved on, oldest first; a reader copying one of them (kindex pull) fails and
 * starts over from the new PUBLISHED.
 *
 * A publication has a lineage (PUBLISHED's store-id and publication): the store's id, and an id
 * made when this writer starts publishing a store into a directory that held no publication of
 * it — a new directory, a wiped one, another store's, or its own store gone back to a lower
 * sequence (restored). Within one lineage a table file's name is its content; across lineages it
 * is not (a re-created store numbers its files from 000001 again), so a reader copies a new
 * lineage whole. Generation numbers go on from the directory's last: a gen-N name is never
 * reused in one directory.
 *
 * A generation is removed only when it is past the newest `keep` and was replaced more than
 * KEEP_MIN_NS ago, so a reader that fetched PUBLISHED can copy what it names even when the writer
 * publishes many times a second; and a round that fails waits longer before the next (doubling
 * up to BACKOFF_MAX_MS): a full disk is not filled again at every interval.
 *
 * The checkpoint's write-ahead log: RocksDB copies the live log into it unless the log is larger
 * than log_size_for_flush, in which case it flushes the memtables to table files first. A
 * threshold at its maximum would ship the whole log with every generation, and 0 would flush at
 * every generation (a table file of a few runs each time, merged again by compactions); 1 MiB
 * keeps each generation's copied log under 1 MiB while table files — hard-linked here and by
 * `kindex pull` — carry the rest.
 */
#include "private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOG_SIZE_FOR_FLUSH (1u << 20)
#define KEEP_MIN_NS 1000000000LL /* a replaced generation stays at least this long */
#define BACKOFF_MAX_MS 30000u    /* the longest wait after failed rounds */

struct kx_publisher {
	struct kx_store *s;
	char *dir;
	int dirfd, lockfd;
	unsigned keep;
	struct kx_published last; /* generation 0: none yet */
	bool have_last;
	struct kx_published lineage; /* store_id and publication of what this writer publishes */
	bool fresh;                  /* a new lineage: publish at the first round whatever the sequence */
	unsigned failures;           /* rounds failed in a row (the backoff) */
	bool prune_due;              /* a generation past `keep` was kept for KEEP_MIN_NS: prune again */
	unsigned rounds_published; /* for the test hook */
	/* the thread */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool started, stop;
	unsigned interval_ms;
	kx_publish_log_fn log;
	void *log_ctx;
};

static int fail(char **ret_err, int r, const char *fmt, const char *a, const char *b)
{
	if (ret_err && asprintf(ret_err, fmt, a, b, strerror(-r)) < 0)
		*ret_err = NULL;
	return r;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The generations in DIR, sorted; removes the leftovers of a writer killed mid-publish. */
static int scan(struct kx_publisher *p, uint64_t **ret, size_t *ret_n)
{
	int fd = dup(p->dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	rewinddir(d);
	uint64_t *v = NULL;
	size_t n = 0, cap = 0;
	int r = 0;
	for (struct dirent *e; r == 0 && (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		uint64_t g = kx_replica_gen_number(e->d_name);
		if (strncmp(e->d_name, "gen-", 4) == 0 && len > 4 && strcmp(e->d_name + len - 4, ".tmp") == 0) {
			r = replica_remove_dir(p->dirfd, e->d_name); /* RocksDB's unfinished checkpoint */
		} else if (g && (!p->have_last || g > p->last.generation)) {
			r = replica_remove_dir(p->dirfd, e->d_name); /* complete, but never announced */
		} else if (g) {
			if ((r = KX_GROW(v, cap, n, 16)) == 0)
				v[n++] = g;
		}
	}
	closedir(d);
	if (r < 0) {
		free(v);
		return r;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_u64);
	*ret = v;
	*ret_n = n;
	return 0;
}

/* When generation g was published (its PUBLISHED's time), or 0 when it cannot be read. */
static int64_t published_ns(struct kx_publisher *p, uint64_t g)
{
	char name[48];
	snprintf(name, sizeof(name), "gen-%llu/PUBLISHED", (unsigned long long)g);
	struct kx_published x;
	char *why = NULL;
	int r = kx_published_read(p->dirfd, name, &x, &why);
	free(why);
	return r == 0 ? x.time_ns : 0;
}

/* Remove the generations past the newest `keep` whose successor was published KEEP_MIN_NS ago. */
static int prune(struct kx_publisher *p, char **ret_err)
{
	uint64_t *gens = NULL;
	size_t n = 0;
	int r = scan(p, &gens, &n);
	int64_t now = kx_now_ns();
	p->prune_due = false;
	for (size_t i = 0; r == 0 && n > p->keep && i < n - p->keep; i++) {
		if (now - published_ns(p, gens[i + 1]) < KEEP_MIN_NS) {
			p->prune_due = true; /* replaced a moment ago: a reader may be copying it */
			break;
		}
		char name[32];
		snprintf(name, sizeof(name), "gen-%llu", (unsigned long long)gens[i]);
		if ((r = replica_remove_dir(p->dirfd, name)) < 0)
			fail(ret_err, r, "cannot remove old generation '%s/%s': %s", p->dir, name);
	}
	free(gens);
	return r;
}

/* 16 random bytes as 32 hex digits. */
static int new_id(char ret[33])
{
	unsigned char b[16];
	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return -errno;
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(ret + 2 * i, 3, "%02x", b[i]);
	return 0;
}

/* The lineage this writer publishes: the directory's, when it is of this store and not ahead of it. */
static int choose_lineage(struct kx_publisher *p, char **ret_err)
{
	struct kx_store_stats st;
	kx_store_stats(p->s, NULL, &st);
	if (!st.id[0])
		return fail(ret_err, -EINVAL, "cannot publish '%s' into '%s': %s", kx_store_path(p->s), p->dir);
	memcpy(p->lineage.store_id, st.id, sizeof(st.id));
	if (p->have_last && p->last.publication[0] && strcmp(p->last.store_id, st.id) == 0 &&
	    kx_store_sequence(p->s) >= p->last.sequence) {
		memcpy(p->lineage.publication, p->last.publication, sizeof(p->lineage.publication));
		return 0;
	}
	p->fresh = true;
	int r = new_id(p->lineage.publication);
	return r < 0 ? fail(ret_err, r, "cannot make a publication id for '%s'%s: %s", p->dir, "") : 0;
}

int kx_publisher_open(struct kx_store *s, const char *dir, unsigned keep, struct kx_publisher **ret,
		      char **ret_err)
{
	if (keep < 1)
		return -EINVAL;
	struct kx_publisher *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->s = s;
	p->keep = keep;
	p->lockfd = -1;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* the interval counts on the monotonic clock */
	pthread_cond_init(&p->wake, &ca);
	pthread_condattr_destroy(&ca);
	int r = 0;
	if (!(p->dir = strdup(dir))) {
		r = -ENOMEM;
		goto out;
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		r = fail(ret_err, -errno, "cannot make publish directory '%s'%s: %s", dir, "");
		goto out;
	}
	char *abs = realpath(dir, NULL); /* checkpoints are made by path: the daemon moves to / */
	if (abs) {
		free(p->dir);
		p->dir = abs;
	}
	if ((p->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		r = fail(ret_err, -errno, "cannot open publish directory '%s'%s: %s", dir, "");
		goto out;
	}
	if ((p->lockfd = openat(p->dirfd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		r = fail(ret_err, -errno, "cannot lock publish directory '%s' (%s/.lock): %s", dir, dir);
		goto out;
	}
	if (flock(p->lockfd, LOCK_EX | LOCK_NB) < 0) {
		r = errno == EWOULDBLOCK ? -EBUSY : -errno;
		if (ret_err && asprintf(ret_err, "publish directory '%s' is in use by another writer (%s/.lock is locked)",
					dir, dir) < 0)
			*ret_err = NULL;
		goto out;
	}
	r = kx_published_read(p->dirfd, "PUBLISHED", &p->last, ret_err);
	if (r == -ENOENT) {
		free(*ret_err);
		*ret_err = NULL;
		r = 0;
	} else if (r == 0) {
		p->have_last = true;
	} else {
		char *why = *ret_err;
		if (asprintf(ret_err, "cannot publish into '%s': %s", dir, why ? why : strerror(-r)) < 0)
			*ret_err = NULL;
		free(why);
		goto out;
	}
	if ((r = choose_lineage(p, ret_err)) == 0)
		r = prune(p, ret_err);
out:
	if (r < 0) {
		kx_publisher_close(p);
		return r;
	}
	*ret = p;
	return 0;
}

int kx_publisher_run(struct kx_publisher *p, struct kx_published *ret, char **ret_err)
{
	uint64_t seq = kx_store_sequence(p->s);
	if (p->have_last && seq == p->last.sequence && !p->fresh) {
		/* nothing new: PUBLISHED's mtime says the writer is alive, for a replica's README */
		if (p->interval_ms && utimensat(p->dirfd, "PUBLISHED", NULL, 0) < 0)
			return fail(ret_err, -errno, "cannot touch '%s/%s': %s", p->dir, "PUBLISHED");
		int r = p->prune_due ? prune(p, ret_err) : 0; /* what KEEP_MIN_NS kept may go now */
		return r < 0 ? r : 0;
	}
	struct kx_published next = { .generation = p->have_last ? p->last.generation + 1 : 1,
				      .interval_ns = (int64_t)p->interval_ms * 1000000 };
	memcpy(next.store_id, p->lineage.store_id, sizeof(next.store_id));
	memcpy(next.publication, p->lineage.publication, sizeof(next.publication));
	char name[32], path[4200];
	snprintf(name, sizeof(name), "gen-%llu", (unsigned long long)next.generation);
	snprintf(path, sizeof(path), "%s/%s", p->dir, name);
	int r = replica_remove_dir(p->dirfd, name);
	char tmp[40];
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	if (r == 0)
		r = replica_remove_dir(p->dirfd, tmp);
	if (r < 0)
		return fail(ret_err, r, "cannot clear '%s/%s': %s", p->dir, name);
	struct kx_store_point pt;
	if ((r = kx_store_checkpoint(p->s, path, LOG_SIZE_FOR_FLUSH, &pt, ret_err)) < 0) {
		replica_remove_dir(p->dirfd, tmp);
		replica_remove_dir(p->dirfd, name);
		return r;
	}
	next.sequence = pt.sequence;
	next.store_generation = pt.generation;
	next.time_ns = kx_now_ns();
	struct kx_buf b = { 0 };
	int gfd = -1;
	if ((r = kx_published_format(&next, &b)) < 0)
		goto out;
	if ((gfd = openat(p->dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (r = replica_write_file(gfd, "PUBLISHED", b.ptr, b.len)) < 0) {
		r = r < 0 ? r : -errno;
		fail(ret_err, r, "cannot write '%s/%s/PUBLISHED': %s", p->dir, name);
		goto out;
	}
	p->rounds_published++;
	const char *kill_at = getenv(KX_PUBLISH_TEST_KILL);
	uint64_t kill_round;
	if (kill_at && kx_parse_uint(kill_at, 1, UINT_MAX, &kill_round) == 0 && kill_round == p->rounds_published)
		raise(SIGKILL);
	if ((r = replica_write_file(p->dirfd, "PUBLISHED", b.ptr, b.len)) < 0) {
		fail(ret_err, r, "cannot write '%s/%s': %s", p->dir, "PUBLISHED");
		goto out;
	}
	p->last = next;
	p->have_last = true;
	p->fresh = false;
	if (ret)
		*ret = next;
	r = prune(p, ret_err);
out:
	if (gfd >= 0)
		close(gfd);
	if (r < 0 && !(p->have_last && p->last.generation == next.generation))
		replica_remove_dir(p->dirfd, name); /* not announced: the next round starts it over */
	kx_buf_release(&b);
	return r < 0 ? r : 1;
}

/* The wait before the next round: the interval, doubled for each round failed in a row, at most
 * BACKOFF_MAX_MS (or the interval, when that is longer). */
static unsigned next_wait_ms(const struct kx_publisher *p)
{
	uint64_t ms = p->interval_ms;
	for (unsigned i = 0; i < p->failures && ms < BACKOFF_MAX_MS; i++)
		ms *= 2;
	return (unsigned)(ms > BACKOFF_MAX_MS && p->interval_ms < BACKOFF_MAX_MS ? BACKOFF_MAX_MS : ms);
}

static void round_logged(struct kx_publisher *p)
{
	char *err = NULL;
	struct kx_published g;
	int r = kx_publisher_run(p, &g, &err);
	p->failures = r < 0 ? p->failures + 1 : 0;
	if (r < 0 && p->log) {
		char *m = NULL;
		if (asprintf(&m, "publishing into '%s' failed (%u round%s in a row; the next in %.3f s): %s", p->dir,
			     p->failures, p->failures == 1 ? "" : "s", next_wait_ms(p) / 1000.0,
			     err ? err : strerror(-r)) >= 0) {
			p->log(p->log_ctx, true, m);
			free(m);
		}
	} else if (r > 0 && p->log) {
		char *m = NULL;
		if (asprintf(&m, "published generation %llu into '%s' (sequence %llu, store generation %llu)",
			     (unsigned long long)g.generation, p->dir, (unsigned long long)g.sequence,
			     (unsigned long long)g.store_generation) >= 0) {
			p->log(p->log_ctx, false, m);
			free(m);
		}
	}
	free(err);
}

static void *publisher_main(void *arg)
{
	pthread_setname_np(pthread_self(), "kx-publisher"); /* for top -H, perf */
	struct kx_publisher *p = arg;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct timespec until;
		unsigned wait_ms = next_wait_ms(p);
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += wait_ms / 1000;
		until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (!p->stop && pthread_cond_timedwait(&p->wake, &p->lock, &until) != ETIMEDOUT)
			;
		/* a round, and a last one once stopped, even when stopped before the first: what was
		 * committed is published */
		bool last = p->stop;
		pthread_mutex_unlock(&p->lock);
		round_logged(p);
		pthread_mutex_lock(&p->lock);
		if (last)
			break;
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int kx_publisher_start(struct kx_publisher *p, unsigned interval_ms, kx_publish_log_fn log, void *ctx)
{
	p->interval_ms = interval_ms ? interval_ms : 1;
	p->log = log;
	p->log_ctx = ctx;
	int r = pthread_create(&p->thread, NULL, publisher_main, p);
	if (r != 0)
		return -r;
	p->started = true;
	return 0;
}

void kx_publisher_close(struct kx_publisher *p)
{
	if (!p)
		return;
	if (p->started) {
		pthread_mutex_lock(&p->lock);
		p->stop = true;
		pthread_cond_signal(&p->wake);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
	}
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	if (p->dirfd > 0)
		close(p->dirfd);
	if (p->lockfd >= 0)
		close(p->lockfd);
	free(p->dir);
	free(p);
}
