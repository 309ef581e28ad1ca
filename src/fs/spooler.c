// SPDX-License-Identifier: MIT
/*
 * `kindexfs -o spool=DIR`: the spool entrance of SPEC §4 served by the daemon, for hosts that only
 * produce results and cannot write to the store while it is mounted (the daemon is its one
 * writer). A thread of its own watches DIR/new and DIR/artifacts (maildir-style: producers write
 * DIR/tmp/NAME and rename it to DIR/new/NAME, or an artifact's bytes to DIR/artifacts/NAME) with
 * the very code `kindex watch` runs — kx_spool_open, kx_spool_fd and kx_spool_process from
 * src/spool — over the daemon's store and tree, so both accept and refuse the same files with the
 * same receipts. After a round that accepted something it tells
 * the notifier (fs_changed), which updates the mounted tree like an inbox commit does.
 *
 * The thread polls the spool's inotify descriptor and a pipe that fs_spooler_stop writes to, and
 * looks at the spool every few seconds regardless (an event lost to an overflow costs a delay, not
 * a file). Stopping waits for the file being ingested, never interrupts it.
 *
 * A spool directory removed (or removed and made again) behind the daemon's back is opened afresh
 * at the next round — its inotify watch and descriptors would otherwise point at the removed
 * directory; a file that arrives meanwhile is seen by the listing or wakes the new watch. Each
 * round compares DIR/new and DIR/artifacts with those opened (device and inode number): two
 * stats, not a reopen.
 */
#include "fs.h"

#include "kx/spool.h"

#include <fuse_lowlevel.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RESCAN_MS 5000

struct fs_spooler {
	struct fs *fs;
	struct kx_spool *sp;
	bool trust; /* STORE/trust/: kindex trust's requests, not manifests (kx_spool_set_handler) */
	char *dir;
	int stop[2];
	pthread_t thread;
	dev_t dev[2]; /* DIR/new and DIR/artifacts as opened */
	ino_t ino[2];
};

/* Whether DIR/new and DIR/artifacts are still the directories opened; `remember`: make it so. */
static bool same_dirs(struct fs_spooler *s, bool remember)
{
	static const char *const names[2] = { "new", "artifacts" };
	bool same = true;
	for (int i = 0; i < 2; i++) {
		char p[4096];
		struct stat st;
		snprintf(p, sizeof(p), "%s/%s", s->dir, names[i]);
		if (stat(p, &st) < 0)
			return false;
		if (remember) {
			s->dev[i] = st.st_dev;
			s->ino[i] = st.st_ino;
		}
		same &= st.st_dev == s->dev[i] && st.st_ino == s->ino[i];
	}
	return same;
}

/* The log lines of a round (one per file) to the daemon's log: failures always, the rest with -d. */
static void forward(struct fs_spooler *s, char *lines)
{
	char *save = NULL;
	for (char *l = strtok_r(lines, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (strncmp(l, "cannot ", 7) == 0)
			fs_log_error("spool %s: %s", s->dir, l);
		else
			fs_log_debug(s->fs, "spool %s: %s", s->dir, l);
	}
}

/* A request of kindex trust (SPEC §10): applied, then the tree and the kernel told, before its
 * receipt is filed — `kindex trust` returns when it sees the receipt, and the mount shows the change
 * by then. */
static int trust_request(void *ctx, struct kx_store *st, const char *bytes, size_t len, struct kx_buf *receipt,
			 struct kx_problems *p, uint64_t *ret_generation)
{
	struct fs *fs = ctx;
	int r = kx_trust_apply(NULL, st, bytes, len, receipt, p, ret_generation);
	if (r == 0 && *ret_generation)
		fs_wait_round(fs, fs_changed(fs, NULL, 0, *ret_generation));
	return r;
}

static void *spooler_main(void *arg)
{
	pthread_setname_np(pthread_self(), "kx-spooler"); /* for top -H, perf */
	struct fs_spooler *s = arg;
	struct fs *fs = s->fs;
	struct kx_ingest_opts o = { .limits = { .max_bytes = fs->max_manifest }, .sync = true,
				    .max_artifact = fs->max_artifact };
	for (;;) {
		if (!same_dirs(s, false)) {
			struct kx_spool *fresh = NULL;
			char *err = NULL;
			if (kx_spool_open(s->dir, &fresh, &err) == 0) {
				if (s->trust)
					kx_spool_set_handler(fresh, trust_request, s->fs);
				kx_spool_close(s->sp);
				s->sp = fresh;
				same_dirs(s, true);
			} else {
				fs_log_error("%s", err ? err : "cannot open the spool again");
			}
			free(err);
		}
		struct kx_spool_counts c = { 0 };
		char *log = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&log, &len);
		int r = kx_spool_process(s->sp, fs->store, fs->tree, &o, &c, f);
		if (f)
			fclose(f);
		if (log)
			forward(s, log);
		free(log);
		if (r < 0)
			fs_log_error("cannot read spool %s: %s", s->dir, strerror(-r));
		if (c.accepted || c.artifacts) /* an artifact's bytes change what its runs show */
			fs_changed(fs, NULL, 0, 0); /* the spool does not say which runs: found from generations */
		struct pollfd p[2] = { { .fd = kx_spool_fd(s->sp), .events = POLLIN },
				       { .fd = s->stop[0], .events = POLLIN } };
		if (poll(p, 2, RESCAN_MS) < 0 && errno != EINTR) {
			fs_log_error("spool %s: poll: %s", s->dir, strerror(errno));
			break;
		}
		if (p[1].revents)
			break;
	}
	return NULL;
}

int fs_spooler_start(struct fs *fs, const char *dir, bool trust, struct fs_spooler **slot, char **ret_err)
{
	struct fs_spooler *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fs = fs;
	s->trust = trust;
	s->stop[0] = s->stop[1] = -1;
	int r = kx_spool_open(dir, &s->sp, ret_err);
	if (r == 0 && trust)
		kx_spool_set_handler(s->sp, trust_request, fs);
	if (r == 0 && !(s->dir = strdup(dir)))
		r = -ENOMEM;
	if (r == 0)
		same_dirs(s, true);
	if (r == 0 && pipe2(s->stop, O_CLOEXEC) < 0)
		r = -errno;
	if (r == 0 && (r = -pthread_create(&s->thread, NULL, spooler_main, s)) == 0) {
		*slot = s;
		return 0;
	}
	if (ret_err && !*ret_err && asprintf(ret_err, "cannot watch spool '%s': %s", dir, strerror(-r)) < 0)
		*ret_err = NULL;
	kx_spool_close(s->sp);
	if (s->stop[0] >= 0) {
		close(s->stop[0]);
		close(s->stop[1]);
	}
	free(s->dir);
	free(s);
	return r;
}

void fs_spooler_stop(struct fs_spooler **slot)
{
	struct fs_spooler *s = *slot;
	if (!s)
		return;
	if (write(s->stop[1], "x", 1) < 0)
		fs_log_error("cannot stop the spool thread: %s", strerror(errno));
	pthread_join(s->thread, NULL);
	kx_spool_close(s->sp);
	close(s->stop[0]);
	close(s->stop[1]);
	free(s->dir);
	free(s);
	*slot = NULL;
}
