// SPDX-License-Identifier: MIT
/*
 * `kindexfs -o follow=DST/current`: a read-only mount of a replica (SPEC §7, docs/replicas.md)
 * that moves to each new generation `kindex pull` makes current. A thread of its own
 * (kx-follower) watches DST with inotify (current is replaced by a rename into DST) and looks at
 * the link every second regardless; when it names another generation, the store switches to it
 * (kx_store_follow: opened read-only, share-locked, its schema checked) and the notifier is told
 * (fs_changed, without a list of runs: the round finds what changed from the two
 * generations), which swaps the shared view between requests and tells the kernel what to
 * forget, exactly as after an inbox commit. Operations that began on the old generation finish
 * on it; the old generation is closed, and its lock let go, once its last view is released.
 *
 * Nothing under DST is written: a generation is opened with rocksdb_open_for_read_only, and its
 * lock is a flock, which changes no byte. Each generation carries a note for /README — the
 * replica's generation, when the writer published it, and the lag from then to this mount
 * serving it — fixed at the switch, so README reads the same until the next one. While pulls
 * into DST fail (DST/PULL-FAILED, kx_replica_pull_failing), README says so, with the last reason:
 * the replica is not advancing, and a mount that serves it must not look as if it were current.
 * So it does once no pull has brought a newer round of the writer's for stale_after of its
 * intervals (DST/LAST-PUBLISHED's mtime, kx_replica_stale): the writer or the pulls stopped.
 */
#include "fs.h"

#include "kx/manifest.h"
#include "kx/replica.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#define LOOK_MS 1000

struct fs_follower {
	struct fs *fs;
	char *current;            /* DST/current, absolute */
	char target[NAME_MAX + 1]; /* the generation directory served (its name) */
	int inotify, stop[2];
	pthread_t thread;
	char failed[NAME_MAX + 1]; /* the target whose switch failed last: logged once */
	char *dst;                 /* DST, whose PULL-FAILED and LAST-PUBLISHED are read at each look */
	char *health;              /* what README says of the pulls now (NULL: nothing) */
	unsigned stale_after;      /* -o stale_after: the writer's intervals without news */
	struct kx_heard heard;     /* DST/LAST-PUBLISHED as last seen */
};

/* README's lines on failing pulls and on a replica that stopped advancing, set when they change. */
static void look_at_pulls(struct fs_follower *f)
{
	char *failing = NULL, *stale = NULL, *now = NULL;
	if (kx_replica_pull_failing(f->dst, &failing) <= 0)
		failing = NULL;
	if (kx_replica_stale(f->dst, f->stale_after, kx_now_ns(), &f->heard, &stale) <= 0)
		stale = NULL;
	if ((failing || stale) && asprintf(&now, "%s%s", stale ? stale : "", failing ? failing : "") < 0)
		now = NULL;
	free(failing);
	free(stale);
	if ((now == NULL) != (f->health == NULL) || (now && strcmp(now, f->health) != 0)) {
		fs_set_health(f->fs, now);
		free(f->health);
		f->health = now;
	} else {
		free(now);
	}
}

int fs_follow_note(const struct kx_published *p, int64_t now_ns, char **ret)
{
	char published[40], served[40];
	kx_time_format(p->time_ns, published);
	kx_time_format(now_ns, served);
	double lag = (double)(now_ns - p->time_ns) / 1e9;
	if (asprintf(ret,
		     "replica     generation %llu of the writer's (store generation %llu), published %s\n"
		     "lag         %.3f s from its publication to this mount serving it (since %s)\n",
		     (unsigned long long)p->generation, (unsigned long long)p->store_generation, published,
		     lag < 0 ? 0 : lag, served) < 0)
		return -ENOMEM;
	return 0;
}

int fs_follow_open(const char *current, int *ret_fd, char **ret_note, char *ret_name, char **ret_err)
{
	int fd = open(current, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int r = -errno;
		if (asprintf(ret_err, "cannot follow '%s': %s (make it with: kindex pull SRC DST)", current,
			     strerror(-r)) < 0)
			*ret_err = NULL;
		return r;
	}
	struct kx_published p;
	char *why = NULL;
	int r = kx_published_read(fd, "PUBLISHED", &p, &why);
	if (r == 0)
		r = fs_follow_note(&p, kx_now_ns(), ret_note);
	if (r < 0) {
		if (asprintf(ret_err, "cannot follow '%s': %s/PUBLISHED: %s", current, current, why ? why : strerror(-r)) <
		    0)
			*ret_err = NULL;
		free(why);
		close(fd);
		return r;
	}
	char link[64], real[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, real, sizeof(real) - 1);
	real[n > 0 ? n : 0] = '\0';
	const char *base = strrchr(real, '/');
	base = base ? base + 1 : real;
	kx_copyn(ret_name, NAME_MAX + 1, base, strlen(base));
	*ret_fd = fd;
	return 0;
}

/* Switch to the generation current names now, if it is another one. */
static void look(struct fs_follower *f)
{
	char target[NAME_MAX + 1];
	ssize_t n = readlink(f->current, target, sizeof(target) - 1);
	if (n <= 0)
		return; /* gone for a moment (it is replaced by a rename, never removed): keep serving */
	target[n] = '\0';
	const char *base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strcmp(base, f->target) == 0)
		return;
	int fd = -1;
	char *note = NULL, *err = NULL, name[NAME_MAX + 1];
	int r = fs_follow_open(f->current, &fd, &note, name, &err);
	bool other = r == 0 && strcmp(name, f->target) != 0; /* the link may name the served one another way */
	if (other) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		r = kx_store_follow(f->fs->store, path, note, &err);
	}
	if (fd >= 0)
		close(fd);
	if (other && r == 0) {
		fs_log_debug(f->fs, "following %s: %s -> %s", f->current, f->target, name);
		snprintf(f->target, sizeof(f->target), "%s", name);
		f->failed[0] = '\0';
		fs_changed(f->fs, NULL, 0, 0);
	} else if (r < 0 && strcmp(f->failed, base) != 0) {
		/* the generation served goes on serving; tried again at the next look */
		fs_log_error("cannot switch to %s: %s", base, err ? err : strerror(-r));
		snprintf(f->failed, sizeof(f->failed), "%s", base);
	}
	free(note);
	free(err);
}

static void *follower_main(void *arg)
{
	pthread_setname_np(pthread_self(), "kx-follower"); /* for top -H, perf */
	struct fs_follower *f = arg;
	for (;;) {
		struct pollfd p[2] = { { .fd = f->inotify, .events = POLLIN }, { .fd = f->stop[0], .events = POLLIN } };
		if (poll(p, 2, LOOK_MS) < 0 && errno != EINTR) {
			fs_log_error("follow %s: poll: %s", f->current, strerror(errno));
			break;
		}
		if (p[1].revents)
			break;
		if (p[0].revents) {
			char buf[4096];
			while (read(f->inotify, buf, sizeof(buf)) > 0)
				;
		}
		look(f);
		look_at_pulls(f);
	}
	return NULL;
}

int fs_follower_start(struct fs *fs, const char *current, const char *served, unsigned stale_after,
		      char **ret_err)
{
	struct fs_follower *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->fs = fs;
	f->stale_after = stale_after;
	f->stop[0] = f->stop[1] = -1;
	snprintf(f->target, sizeof(f->target), "%s", served);
	int r = 0;
	char *dir = NULL;
	if (!(f->current = strdup(current)) || !(dir = strdup(current))) {
		r = -ENOMEM;
		goto fail;
	}
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (!(f->dst = strdup(*dir ? dir : "/"))) {
		r = -ENOMEM;
		goto fail;
	}
	f->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (f->inotify < 0 || inotify_add_watch(f->inotify, *dir ? dir : "/", IN_MOVED_TO | IN_CREATE | IN_DELETE) < 0 ||
	    pipe2(f->stop, O_CLOEXEC) < 0) {
		r = -errno;
		if (asprintf(ret_err, "cannot watch '%s' for new generations: %s", dir, strerror(-r)) < 0)
			*ret_err = NULL;
		goto fail;
	}
	if ((r = -pthread_create(&f->thread, NULL, follower_main, f)) < 0)
		goto fail;
	free(dir);
	fs->follower = f;
	return 0;
fail:
	free(dir);
	if (f->inotify >= 0)
		close(f->inotify);
	if (f->stop[0] >= 0) {
		close(f->stop[0]);
		close(f->stop[1]);
	}
	free(f->current);
	free(f->dst);
	free(f);
	return r;
}

void fs_follower_stop(struct fs *fs)
{
	struct fs_follower *f = fs->follower;
	if (!f)
		return;
	if (write(f->stop[1], "x", 1) < 0)
		fs_log_error("cannot stop the follower: %s", strerror(errno));
	pthread_join(f->thread, NULL);
	close(f->inotify);
	close(f->stop[0]);
	close(f->stop[1]);
	free(f->current);
	free(f->dst);
	free(f->health);
	free(f);
	fs->follower = NULL;
}
