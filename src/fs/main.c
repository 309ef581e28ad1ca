// SPDX-License-Identifier: MIT
/*
 * `kindexfs STORE MOUNTPOINT [-f] [-d] [-s] [-o OPTIONS]`: mount a kindex store as the live,
 * read-only tree of SPEC §3 (docs/mount.md, kindexfs(1)), with the inbox of SPEC §4 on -o rw
 * mounts (docs/inbox.md) and a spool directory watched with -o spool=DIR.
 *
 * Start-up order matters and differs from libfuse's examples (which mount, then fuse_daemonize):
 * RocksDB starts threads when the store opens, and threads do not survive fork(). So the daemon
 * forks first, and the parent waits on a pipe until the child has opened the store, claimed it and
 * mounted — then exits 0, or with the child's failure (printed by the child on the same terminal).
 * That is also what mount.fuse3, /etc/fstab and systemd mount units expect of a helper: when it
 * returns, the mount exists. Arguments arrive in mount.fuse3's order, `STORE MOUNTPOINT -o opts`.
 *
 * Shutdown: SIGTERM, SIGINT, SIGHUP and `fusermount3 -u` end the session loop; then the spool
 * thread finishes the file it is on and stops, the notifier stops, the mount goes, the store is closed (the WAL synced, the claim removed) and the exit
 * status is 0. Signals are blocked in every thread: the loop (loop.c) takes them from a signalfd
 * (with -s, libfuse's single-threaded loop, the thread that runs it unblocks them).
 */
#include "inbox.h"

#include "kx/manifest.h"
#include "kx/replica.h"

#include <fuse_lowlevel.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_STORE = 3 };

enum {
	KEY_ALLOW_OTHER, KEY_DEFAULT_PERMISSIONS, KEY_FSNAME, KEY_SUBTYPE, KEY_RW, KEY_RO, KEY_NOPUSH, KEY_FOLLOW,
	KEY_MAX_THREADS,
};

struct cfg {
	char *store;
	const char *mountpoint; /* the second operand, as given (libfuse resolves it) */
	char *cache;
	char *timeout;
	char *spool;
	char *max_manifest;
	char *max_artifact;
	char *spin;
	char *publish, *publish_interval, *publish_keep;
	char *follow_path; /* -o follow=PATH */
	char *stale_after; /* -o stale_after=N */
	char *max_threads; /* -o max_threads=N as given (the last one), checked: libfuse reads it with sscanf */
	bool allow_other, default_permissions, fsname, subtype, rw_given, rw, nopush, follow;
	int positional;
};

static const struct fuse_opt cfg_spec[] = {
	{ "cache=%s", offsetof(struct cfg, cache), 0 },
	{ "timeout=%s", offsetof(struct cfg, timeout), 0 },
	{ "spool=%s", offsetof(struct cfg, spool), 0 },
	{ "max_manifest=%s", offsetof(struct cfg, max_manifest), 0 },
	{ "max_artifact=%s", offsetof(struct cfg, max_artifact), 0 },
	{ "spin=%s", offsetof(struct cfg, spin), 0 },
	{ "publish=%s", offsetof(struct cfg, publish), 0 },
	{ "publish_interval=%s", offsetof(struct cfg, publish_interval), 0 },
	{ "publish_keep=%s", offsetof(struct cfg, publish_keep), 0 },
	{ "follow=%s", offsetof(struct cfg, follow_path), 0 },
	{ "stale_after=%s", offsetof(struct cfg, stale_after), 0 },
	FUSE_OPT_KEY("follow", KEY_FOLLOW),
	FUSE_OPT_KEY("allow_other", KEY_ALLOW_OTHER),
	FUSE_OPT_KEY("default_permissions", KEY_DEFAULT_PERMISSIONS),
	FUSE_OPT_KEY("fsname=", KEY_FSNAME),
	FUSE_OPT_KEY("subtype=", KEY_SUBTYPE),
	FUSE_OPT_KEY("rw", KEY_RW),
	FUSE_OPT_KEY("ro", KEY_RO),
	FUSE_OPT_KEY("nopush", KEY_NOPUSH),
	FUSE_OPT_KEY("max_threads=", KEY_MAX_THREADS),
	FUSE_OPT_END,
};

static int cfg_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct cfg *c = data;
	switch (key) {
	case KEY_ALLOW_OTHER:
		c->allow_other = true;
		return 1;
	case KEY_DEFAULT_PERMISSIONS:
		c->default_permissions = true;
		return 1;
	case KEY_FSNAME:
		c->fsname = true;
		return 1;
	case KEY_SUBTYPE:
		c->subtype = true;
		return 1;
	case KEY_RW:
	case KEY_RO:
		/* the last one given wins, as for mount(8); both are passed on to the kernel */
		c->rw_given = true;
		c->rw = key == KEY_RW;
		return 1;
	case KEY_NOPUSH:
		c->nopush = true;
		return 0; /* ours alone */
	case KEY_FOLLOW:
		c->follow = true;
		return 0;
	case KEY_MAX_THREADS:
		free(c->max_threads);
		c->max_threads = strdup(arg + strlen("max_threads="));
		return c->max_threads ? 1 : -1; /* 1: libfuse's too */
	case FUSE_OPT_KEY_NONOPT:
		/* the first operand is the store; the second (the mountpoint) is libfuse's */
		if (c->positional++ == 0) {
			c->store = strdup(arg);
			return 0;
		}
		if (c->positional == 2)
			c->mountpoint = arg;
		return 1;
	default:
		return 1;
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kindexfs STORE MOUNTPOINT [-f] [-d] [-s] [-o OPTION[,OPTION...]]\n"
		"       kindexfs MOUNTPOINT -o follow=DST/current [...]   (a replica: docs/replicas.md)\n"
		"\n"
		"Mounts the kindex store STORE at MOUNTPOINT as the read-only tree of benchmarks, runs and\n"
		"digests that `kindex export` writes (see kindexfs(1) and docs/mount.md); with -o rw, also\n"
		"/inbox, where a manifest written and closed is added (docs/inbox.md). Unmount with\n"
		"`fusermount3 -u MOUNTPOINT` or SIGTERM.\n"
		"\n"
		"kindexfs options:\n"
		"    -o cache=SIZE          bound of each daemon cache: rendered files, group listings,\n"
		"                           directory listings (K, M, G suffixes; default 8M)\n"
		"    -o timeout=SECONDS     how long the kernel may trust names and attributes before asking\n"
		"                           again (default 3600; changes are pushed to it anyway)\n"
		"    -o allow_other         let other users see the mount; needs default_permissions (and\n"
		"                           user_allow_other in /etc/fuse.conf when not run as root)\n"
		"    -o default_permissions let the kernel check the modes (0444 files, 0555 directories;\n"
		"                           /inbox has the owner and mode of STORE/inbox)\n"
		"    -o ro                  mount read-only (the kernel's side is read-only by default) and\n"
		"                           open the store read-only: nothing under STORE is written, no\n"
		"                           claim is taken, the tree is the store as it was at the mount\n"
		"                           (replicas, docs/replicas.md). Without -o ro or rw the mount\n"
		"                           claims the store and a writer is refused while it is mounted\n"
		"    -o rw                  mount read-write: /inbox takes manifests (docs/inbox.md); the\n"
		"                           tree answers EROFS. Costs one FLUSH round trip per close()\n"
		"    -o max_manifest=SIZE   the size cap per file of the inbox (a write past it: EFBIG) and\n"
		"                           of the spool; K, M, G suffixes, 1 to 1G (default 4M)\n"
		"    -o max_artifact=SIZE   the size cap of an artifact's bytes (SPEC §9) in /inbox/artifacts\n"
		"                           and the spool's artifacts/; 1 byte to 1T (default 1G)\n"
		"    -o spool=DIR           also ingest maildir-style drops: DIR/tmp/NAME renamed to\n"
		"                           DIR/new/NAME, moved to DIR/accepted or DIR/rejected with a receipt\n"
		"                           (as `kindex watch DIR`; read-only mounts too)\n"
		"    -o follow=DST/current  serve the replica `kindex pull SRC DST` keeps (docs/replicas.md),\n"
		"                           read-only, nothing under DST written, switching to each new\n"
		"                           generation between requests; /README shows the generation and\n"
		"                           its lag. `kindexfs DST/current MNT -o follow` is the same\n"
		"    -o stale_after=N       with follow: README says the replica is NOT ADVANCING once no pull\n"
		"                           has brought a newer round of the writer's for N of its publish\n"
		"                           intervals (default 30; 0: never)\n"
		"    -o publish=DIR         publish generations of the store for replicas (docs/replicas.md):\n"
		"                           DIR/gen-N (a checkpoint) and DIR/PUBLISHED naming the newest,\n"
		"                           every publish_interval when the store changed; not with -o ro\n"
		"    -o publish_interval=SECONDS  how often (default 2; a decimal fraction allowed: 0.5)\n"
		"    -o publish_keep=K      generations kept in DIR, the newest K (default 3, at least 1)\n"
		"    -o nopush              do not put files into the page cache ahead of their readers\n"
		"                           (files looked up by name, directories grep -r or tar walk)\n"
		"    -o spin=USEC           after each answer, poll for the next request this long before\n"
		"                           sleeping: a process that asks again at once (find, grep -r)\n"
		"                           finds the daemon awake; 0 to 1000000 (default 100; 0: never)\n"
		"    -o max_threads=N       at most N threads answering requests, 1 to 10000 (default 10)\n"
		"\n");
}

/* -o cache=, max_manifest=: kx_parse_size's sizes, within [min, max] */
static int parse_size(const char *s, size_t min, size_t max, size_t *ret)
{
	uint64_t v;
	int r = kx_parse_size(s, true, min, max, &v);
	if (r == 0)
		*ret = (size_t)v;
	return r;
}

/* Messages once detached: syslog, with libfuse's levels (they are syslog's). */
static void log_syslog(enum fuse_log_level level, const char *fmt, va_list ap)
{
	vsyslog((int)level, fmt, ap);
}

static void block_signals(bool block)
{
	sigset_t set;
	fs_loop_signals(&set);
	pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

/* The parent of a detaching start: wait for the child's verdict. */
static int wait_for_child(int fd)
{
	char status = EXIT_FAIL;
	ssize_t n;
	do
		n = read(fd, &status, 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	return n == 1 ? status : EXIT_FAIL; /* EOF: the child died before saying anything */
}

static void tell_parent(int *fd, int status)
{
	if (*fd < 0)
		return;
	char c = (char)status;
	if (write(*fd, &c, 1) < 0) {
		/* the parent is gone; nothing to tell */
	}
	close(*fd);
	*fd = -1;
}

static int detach_stdio(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dup2(fd, STDIN_FILENO);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	if (fd > STDERR_FILENO)
		close(fd);
	return 0;
}

/*
 * The daemon from its arguments to its exit, one step a function below; each step returns
 * CONTINUE or the exit status to end with, and stop() undoes what the steps before did.
 */
enum { CONTINUE = -1 };

struct daemon {
	struct fuse_args args;
	struct fuse_cmdline_opts opts;
	struct cfg cfg;
	struct fs fs;
	struct fuse_session *se;
	size_t cache, max_manifest, max_artifact;
	double publish_interval; /* seconds */
	unsigned publish_keep;
	unsigned stale_after; /* -o follow: README's NOT ADVANCING after this many writer's intervals */
	struct kx_publisher *publisher;
	unsigned spin_us; /* -o spin: see loop.c */
	char store_path[PATH_MAX], mnt_path[PATH_MAX], spool_path[PATH_MAX];
	char follow_target[NAME_MAX + 1]; /* -o follow: the generation served at the mount */
	int pipe_fd; /* to the parent that waits for the mount, until it is told (not -f) */
	bool mounted, handlers, views;
	bool readonly; /* the store is opened read-only (-o ro, a replica's): nothing writes it */
};

/* The command line and every -o option of kindexfs's own, checked. */
static int parse_options(struct daemon *d)
{
	struct cfg *cfg = &d->cfg;
	struct fuse_cmdline_opts *opts = &d->opts;
	bool parsed = fuse_opt_parse(&d->args, cfg, cfg_spec, cfg_proc) == 0;
	/* -o follow=PATH: the one operand is the mountpoint, which libfuse takes */
	if (parsed && cfg->follow_path && cfg->positional == 1) {
		parsed = fuse_opt_add_arg(&d->args, cfg->store) == 0;
		free(cfg->store);
		cfg->store = strdup(cfg->follow_path);
		cfg->follow = true;
	} else if (parsed && cfg->follow_path && cfg->positional >= 2) {
		fprintf(stderr, "kindexfs: -o follow=%s names the replica: give only a MOUNTPOINT with it, not a STORE too\n",
			cfg->follow_path);
		return EXIT_USAGE;
	}
	if (!parsed || fuse_parse_cmdline(&d->args, opts) != 0) {
		struct stat st;
		if (cfg->mountpoint && stat(cfg->mountpoint, &st) < 0) /* libfuse said "bad mount point" */
			fprintf(stderr, "kindexfs: cannot mount at '%s': %s\n", cfg->mountpoint, strerror(errno));
		else
			fprintf(stderr, "kindexfs: invalid arguments (see kindexfs --help)\n");
		return EXIT_USAGE;
	}
	if (opts->show_help) {
		usage(stdout);
		printf("FUSE options:\n");
		fflush(stdout);
		fuse_cmdline_help();
		fuse_lowlevel_help();
		return EXIT_OK;
	}
	if (opts->show_version) {
		printf("kindexfs %s (libfuse %s)\n", KX_VERSION, fuse_pkgversion());
		return EXIT_OK;
	}
	if (!cfg->store || !opts->mountpoint) {
		usage(stderr);
		fprintf(stderr, "kindexfs: give a STORE and a MOUNTPOINT\n");
		return EXIT_USAGE;
	}
	if (cfg->positional > 2) {
		fprintf(stderr, "kindexfs: too many operands (give STORE MOUNTPOINT)\n");
		return EXIT_USAGE;
	}
	if (cfg->cache && parse_size(cfg->cache, 1u << 20, SIZE_MAX / 2, &d->cache) < 0) {
		fprintf(stderr, "kindexfs: invalid -o cache=%s: give a size of at least 1M (digits and K, M or G), e.g. 64M\n", cfg->cache);
		return EXIT_USAGE;
	}
	if (cfg->max_manifest && parse_size(cfg->max_manifest, 1, 1u << 30, &d->max_manifest) < 0) {
		fprintf(stderr, "kindexfs: invalid -o max_manifest=%s: give a size from 1 byte to 1G (digits and K, M or G), e.g. 4M\n",
			cfg->max_manifest);
		return EXIT_USAGE;
	}
	if (cfg->max_artifact && parse_size(cfg->max_artifact, 1, (size_t)1 << 40, &d->max_artifact) < 0) {
		fprintf(stderr, "kindexfs: invalid -o max_artifact=%s: give a size from 1 byte to 1T (digits and K, M or G), e.g. 2G\n",
			cfg->max_artifact);
		return EXIT_USAGE;
	}
	if (cfg->follow_path && !*cfg->follow_path) {
		fprintf(stderr, "kindexfs: invalid -o follow=: give the replica's current link, DST/current\n");
		return EXIT_USAGE;
	}
	if (cfg->follow && (cfg->rw || cfg->spool || cfg->publish)) {
		fprintf(stderr, "kindexfs: -o follow serves a replica read-only: it cannot go with -o %s\n",
			cfg->rw ? "rw" : cfg->spool ? "spool=DIR" : "publish=DIR");
		return EXIT_USAGE;
	}
	if (cfg->stale_after && !cfg->follow) {
		fprintf(stderr, "kindexfs: -o stale_after=N goes with -o follow\n");
		return EXIT_USAGE;
	}
	if (cfg->stale_after) {
		uint64_t n;
		if (kx_parse_uint(cfg->stale_after, 0, 1000000, &n) < 0) {
			fprintf(stderr, "kindexfs: invalid -o stale_after=%s: give a number of the writer's publish intervals, "
					"0 (never) to 1000000\n",
				cfg->stale_after);
			return EXIT_USAGE;
		}
		d->stale_after = (unsigned)n;
	}
	if (cfg->spool && cfg->rw_given && !cfg->rw) {
		fprintf(stderr, "kindexfs: -o spool=DIR writes the store: it cannot go with -o ro\n");
		return EXIT_USAGE;
	}
	if ((cfg->publish_interval || cfg->publish_keep) && !cfg->publish) {
		fprintf(stderr, "kindexfs: -o publish_interval= and -o publish_keep= go with -o publish=DIR\n");
		return EXIT_USAGE;
	}
	if (cfg->publish && !*cfg->publish) {
		fprintf(stderr, "kindexfs: invalid -o publish=: give a directory\n");
		return EXIT_USAGE;
	}
	if (cfg->publish && cfg->rw_given && !cfg->rw) {
		fprintf(stderr, "kindexfs: -o publish=DIR takes checkpoints of the store as its writer: it cannot go "
				"with -o ro\n");
		return EXIT_USAGE;
	}
	if (cfg->publish_interval && kx_parse_decimal(cfg->publish_interval, 0.001, 86400, &d->publish_interval) < 0) {
		fprintf(stderr, "kindexfs: invalid -o publish_interval=%s: give seconds from 0.001 to 86400, e.g. 2 or 0.5\n",
			cfg->publish_interval);
		return EXIT_USAGE;
	}
	if (cfg->publish_keep) {
		uint64_t k;
		if (kx_parse_uint(cfg->publish_keep, 1, 1000000, &k) < 0) {
			fprintf(stderr, "kindexfs: invalid -o publish_keep=%s: give a number of generations, 1 to 1000000\n",
				cfg->publish_keep);
			return EXIT_USAGE;
		}
		d->publish_keep = (unsigned)k;
	}
	if (cfg->spool && !*cfg->spool) {
		fprintf(stderr, "kindexfs: invalid -o spool=: give a directory\n");
		return EXIT_USAGE;
	}
	if (cfg->spin) {
		uint64_t us;
		if (kx_parse_uint(cfg->spin, 0, 1000000, &us) < 0) {
			fprintf(stderr, "kindexfs: invalid -o spin=%s: give microseconds from 0 to 1000000, e.g. 100\n",
				cfg->spin);
			return EXIT_USAGE;
		}
		d->spin_us = (unsigned)us;
	}
	if (cfg->max_threads && kx_parse_uint(cfg->max_threads, 1, 10000, &(uint64_t){ 0 }) < 0) {
		fprintf(stderr, "kindexfs: invalid -o max_threads=%s: give a number of threads, 1 to 10000\n",
			cfg->max_threads);
		return EXIT_USAGE;
	}
#if FUSE_USE_VERSION >= 312
	bool fuse_loop_opts = opts->clone_fd || opts->max_idle_threads != UINT_MAX; /* UINT_MAX: not given */
#else
	bool fuse_loop_opts = opts->clone_fd;
#endif
	if (fuse_loop_opts)
		fprintf(stderr, "kindexfs: warning: -o clone_fd and -o max_idle_threads are settings of libfuse's own loop, "
				"which kindexfs does not use: ignored\n");
	if (cfg->timeout && kx_parse_decimal(cfg->timeout, 0, UINT32_MAX, &d->fs.timeout) < 0) {
		fprintf(stderr, "kindexfs: invalid -o timeout=%s: give seconds, 0 to 4294967295, e.g. 3600 or 0.5\n",
			cfg->timeout);
		return EXIT_USAGE;
	}
	if (cfg->allow_other && !cfg->default_permissions) {
		/* without it no one checks the modes for other users: refuse rather than guess */
		fprintf(stderr, "kindexfs: -o allow_other needs -o default_permissions as well\n");
		return EXIT_USAGE;
	}
	return CONTINUE;
}

/* The store, spool and mount point as absolute paths: the daemon moves to / when it detaches. */
static int resolve_paths(struct daemon *d)
{
	const struct cfg *cfg = &d->cfg;
	if (cfg->follow) {
		/* DST/current itself, not the generation it names now: it is shown as the source */
		char *dir = strdup(cfg->store), *slash = dir ? strrchr(dir, '/') : NULL;
		const char *base = slash ? slash + 1 : cfg->store;
		if (slash)
			*slash = '\0';
		bool ok = dir && realpath(slash ? (*dir ? dir : "/") : ".", d->store_path) &&
			  strlen(d->store_path) + strlen(base) + 2 < sizeof(d->store_path);
		if (ok)
			strcat(strcat(d->store_path, strcmp(d->store_path, "/") ? "/" : ""), base);
		free(dir);
		if (!ok) {
			fprintf(stderr, "kindexfs: cannot follow '%s': %s (make it with: kindex pull SRC DST)\n", cfg->store,
				strerror(errno ? errno : ENAMETOOLONG));
			return EXIT_STORE;
		}
	} else if (!realpath(cfg->store, d->store_path)) {
		if (errno == ENOENT)
			fprintf(stderr, "kindexfs: no store at '%s' (create one with: kindex --store %s init)\n",
				cfg->store, cfg->store);
		else
			fprintf(stderr, "kindexfs: cannot open store '%s': %s\n", cfg->store, strerror(errno));
		return EXIT_STORE;
	}
	if (cfg->spool && !realpath(cfg->spool, d->spool_path)) {
		/* made if missing (kx_spool_open), but its parent must be there */
		if (errno != ENOENT || strlen(cfg->spool) >= sizeof(d->spool_path) ||
		    (cfg->spool[0] != '/' && !getcwd(d->spool_path, sizeof(d->spool_path)))) {
			fprintf(stderr, "kindexfs: cannot use spool '%s': %s\n", cfg->spool, strerror(errno));
			return EXIT_FAIL;
		}
		if (cfg->spool[0] == '/')
			snprintf(d->spool_path, sizeof(d->spool_path), "%s", cfg->spool);
		else if (strlen(d->spool_path) + strlen(cfg->spool) + 2 < sizeof(d->spool_path))
			strcat(strcat(d->spool_path, "/"), cfg->spool);
	}
	if (!realpath(d->opts.mountpoint, d->mnt_path)) {
		fprintf(stderr, "kindexfs: cannot mount on '%s': %s\n", d->opts.mountpoint, strerror(errno));
		return EXIT_FAIL;
	}
	return CONTINUE;
}

/* The options kindexfs passes libfuse itself: its fsname and subtype, and ro unless rw. */
static int mount_options(struct daemon *d)
{
	const struct cfg *cfg = &d->cfg;
	if (!cfg->fsname) {
		/* `mount` and /proc/mounts then show the store as the source, as for a block device;
		 * commas and backslashes separate -o options, so they are escaped */
		char *opt = malloc(2 * strlen(d->store_path) + 16), *w = opt;
		if (!opt)
			return EXIT_FAIL;
		w += sprintf(w, "-ofsname=");
		for (const char *p = d->store_path; *p; p++) {
			if (*p == ',' || *p == '\\')
				*w++ = '\\';
			*w++ = *p;
		}
		*w = '\0';
		int r = fuse_opt_add_arg(&d->args, opt);
		free(opt);
		if (r < 0)
			return EXIT_FAIL;
	}
	/* libfuse names the type fuse.kindexfs only when no fsname was given: keep it either way */
	if (cfg->fsname && !cfg->subtype && fuse_opt_add_arg(&d->args, "-osubtype=kindexfs") < 0)
		return EXIT_FAIL;
	if (!cfg->rw_given && fuse_opt_add_arg(&d->args, "-oro") < 0)
		return EXIT_FAIL;
	return CONTINUE;
}

/*
 * Without -f: fork; the parent waits on a pipe for the child's word that it mounted (or why it
 * could not) and exits with it, the child goes on in a session of its own.
 */
static int daemonize(struct daemon *d)
{
	if (d->opts.foreground)
		return CONTINUE;
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		fprintf(stderr, "kindexfs: cannot start: pipe: %s\n", strerror(errno));
		return EXIT_FAIL;
	}
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "kindexfs: cannot start: fork: %s\n", strerror(errno));
		return EXIT_FAIL;
	}
	if (pid > 0) {
		close(p[1]);
		return wait_for_child(p[0]);
	}
	close(p[0]);
	d->pipe_fd = p[1];
	setsid();
	return CONTINUE;
}

/* The store, claimed for this mount, and what serves it: the tree, the listings, the views. */
static int open_store(struct daemon *d)
{
	struct fs *fs = &d->fs;
	char *msg = NULL;
	/*
	 * An explicit -o ro (a replica, a store on read-only media) opens RocksDB read-only: no LOCK,
	 * no WAL replayed into a new table, no claim written, so nothing under the store changes
	 * (SPEC §7, docs/replicas.md). It reads the store as it was at the mount; a writer may open
	 * it meanwhile. Without -o ro or rw the mount claims the store, as before: one host, one
	 * store, and a writer refused while it is mounted.
	 */
	bool readonly = d->cfg.rw_given && !d->cfg.rw;
	int r;
	if (d->cfg.follow) {
		/* the generation current names now, held open while the store opens that very directory */
		int fd = -1;
		char *note = NULL, path[64];
		readonly = true;
		if ((r = fs_follow_open(d->store_path, &fd, &note, d->follow_target, &msg)) == 0) {
			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			r = kx_store_open(path, KX_STORE_LEAN | KX_STORE_FOLLOW, &fs->store, &msg);
			if (r == 0)
				r = kx_store_set_note(fs->store, note);
			close(fd);
		}
		free(note);
	} else {
		r = kx_store_open(d->store_path, KX_STORE_LEAN | (readonly ? KX_STORE_READONLY : 0), &fs->store, &msg);
	}
	if (r < 0) {
		if (msg)
			fprintf(stderr, "kindexfs: %s\n", msg);
		else
			fprintf(stderr, "kindexfs: cannot open store '%s': %s\n", d->store_path, strerror(-r));
		free(msg);
		return EXIT_STORE;
	}
	d->readonly = readonly;
	if (!readonly && (r = kx_store_claim(fs->store, d->mnt_path)) < 0) {
		fprintf(stderr, "kindexfs: cannot claim store '%s': %s\n", d->store_path, strerror(-r));
		return EXIT_STORE;
	}
	fs->tree = kx_tree_new(fs->store, d->cache);
	fs->dirs = fs_dircache_new(d->cache, fs->rw);
	if (!fs->tree || !fs->dirs || fs_view_init(fs) < 0) {
		fprintf(stderr, "kindexfs: cannot start: %s\n", strerror(ENOMEM));
		return EXIT_FAIL;
	}
	d->views = true;
	if (fs_versions_init(fs) < 0) {
		fprintf(stderr, "kindexfs: cannot start: %s\n", strerror(ENOMEM));
		return EXIT_FAIL;
	}
	msg = NULL;
	if (fs->rw && (r = fs_inbox_open(fs, d->store_path, &msg)) < 0) {
		fprintf(stderr, "kindexfs: %s\n", msg ? msg : strerror(-r));
		free(msg);
		return EXIT_FAIL;
	}
	return CONTINUE;
}

/*
 * The publisher's messages: failures always, each generation with -d. While rounds fail, README
 * says so with the last reason (a full disk, a lost directory): drops are still accepted, and the
 * replicas fall behind. Called from the publisher's thread only.
 */
static void publish_log(void *ctx, bool failure, const char *msg)
{
	static int64_t failing_since;
	struct fs *fs = ctx;
	if (failure) {
		fs_log_error("%s", msg);
		if (!failing_since)
			failing_since = kx_now_ns();
		char when[40], *lines = NULL;
		kx_time_format(failing_since, when);
		if (asprintf(&lines, "publishing  FAILING since %s: %s\n", when, msg) >= 0)
			fs_set_health(fs, lines);
		free(lines);
	} else {
		fs_log_debug(fs, "%s", msg);
		if (failing_since)
			fs_set_health(fs, NULL);
		failing_since = 0;
	}
}

/* The FUSE session, mounted, and the daemon's threads; then the parent is told. */
static int mount_and_start(struct daemon *d)
{
	struct fs *fs = &d->fs;
	size_t ops_size;
	const struct fuse_lowlevel_ops *ops = fs_ops(fs->rw, &ops_size);
	d->se = fuse_session_new(&d->args, ops, ops_size, fs);
	if (!d->se) {
		/* libfuse printed what it did not like (an unknown -o option, usually) */
		fprintf(stderr, "kindexfs: cannot mount at '%s': libfuse refused the options (see kindexfs --help)\n",
			d->mnt_path);
		return EXIT_USAGE;
	}
	if (fuse_set_signal_handlers(d->se) != 0) {
		fprintf(stderr, "kindexfs: cannot install signal handlers\n");
		return EXIT_FAIL;
	}
	d->handlers = true;
	if (fuse_session_mount(d->se, d->mnt_path) != 0)
		return EXIT_FAIL; /* libfuse printed the reason (fusermount3's, or the kernel's) */
	d->mounted = true;
	fs->se = d->se;
	int r;
	if ((r = fs_notifier_start(fs)) < 0) {
		fprintf(stderr, "kindexfs: cannot start the notifier: %s\n", strerror(-r));
		return EXIT_FAIL;
	}
	if (!d->readonly && (r = fs_sizer_start(fs)) < 0) {
		fprintf(stderr, "kindexfs: cannot start the sizes pass: %s\n", strerror(-r));
		return EXIT_FAIL;
	}
	if (!d->cfg.nopush && (r = fs_pusher_start(fs)) < 0) {
		fprintf(stderr, "kindexfs: cannot start the pusher: %s\n", strerror(-r));
		return EXIT_FAIL;
	}
	if ((r = fs_inbox_start(fs)) < 0) {
		fprintf(stderr, "kindexfs: cannot start the inbox's decider: %s\n", strerror(-r));
		return EXIT_FAIL;
	}
	char *msg = NULL;
	if (d->cfg.spool && (r = fs_spooler_start(fs, d->spool_path, false, &fs->spooler, &msg)) < 0) {
		fprintf(stderr, "kindexfs: %s\n", msg ? msg : strerror(-r));
		free(msg);
		return EXIT_FAIL;
	}
	/* a mount that holds the store is its one writer: it applies kindex trust's requests (SPEC §10) */
	char *trust_dir = NULL;
	if (!d->cfg.follow && !(d->cfg.rw_given && !d->cfg.rw)) {
		r = asprintf(&trust_dir, "%s/trust", d->store_path) < 0 ? -ENOMEM : 0;
		if (r == 0 && (r = fs_spooler_start(fs, trust_dir, true, &fs->trust, &msg)) == 0)
			chmod(trust_dir, 0700); /* the store's owner's: never an inbox writer's (docs/signatures.md) */
		free(trust_dir);
		if (r < 0) {
			fprintf(stderr, "kindexfs: %s\n", msg ? msg : strerror(-r));
			free(msg);
			return EXIT_FAIL;
		}
	}
	if (d->cfg.follow && (r = fs_follower_start(fs, d->store_path, d->follow_target, d->stale_after, &msg)) < 0) {
		fprintf(stderr, "kindexfs: %s\n", msg ? msg : strerror(-r));
		free(msg);
		return EXIT_FAIL;
	}
	if (d->cfg.publish) {
		if ((r = kx_publisher_open(fs->store, d->cfg.publish, d->publish_keep, &d->publisher, &msg)) < 0) {
			fprintf(stderr, "kindexfs: %s\n", msg ? msg : strerror(-r));
			free(msg);
			return EXIT_FAIL;
		}
		if ((r = kx_publisher_start(d->publisher, (unsigned)(d->publish_interval * 1000 + 0.5), publish_log,
					    fs)) < 0) {
			fprintf(stderr, "kindexfs: cannot start the publisher: %s\n", strerror(-r));
			return EXIT_FAIL;
		}
	}
	if (d->pipe_fd >= 0) {
		openlog("kindexfs", LOG_PID, LOG_DAEMON);
		fuse_set_log_func(log_syslog);
		if (chdir("/") < 0 || detach_stdio() < 0)
			fs_log_error("cannot detach from the terminal: %s", strerror(errno));
		tell_parent(&d->pipe_fd, EXIT_OK);
	}
	return CONTINUE;
}

/* The session loop, until unmounted or a signal; the exit status. */
static int serve(struct daemon *d)
{
	struct fs *fs = &d->fs;
	fs_log_debug(fs, "serving %s at %s (cache %zu bytes per cache, timeout %gs%s)", d->store_path, d->mnt_path,
		     d->cache, fs->timeout, fs->rw ? ", inbox" : "");
	int r;
	if (d->opts.singlethread) {
		block_signals(false);
		r = fuse_session_loop(d->se);
		block_signals(true);
	} else {
		unsigned max_threads = 10;
#if FUSE_USE_VERSION >= 312
		if (d->opts.max_threads && d->opts.max_threads != UINT_MAX) /* UINT_MAX: not given */
			max_threads = d->opts.max_threads;
#endif
		r = fs_loop_run(d->se, max_threads, d->spin_us);
	}
	/* 0: unmounted; a positive value is the signal that ended the loop — both a clean stop */
	if (r < 0)
		fs_log_error("session ended: %s", strerror(-r));
	if (fs->debug) {
		struct kx_tree_stats st;
		kx_tree_stats(fs->tree, &st);
		fs_log_debug(fs, "content cache %llu hits %llu misses (%zu bytes), groups %llu hits %llu misses",
			     (unsigned long long)st.content_hits, (unsigned long long)st.content_misses,
			     st.content_bytes, (unsigned long long)st.group_hits,
			     (unsigned long long)st.group_misses);
		fs_log_debug(fs, "sizes of run and group files: %llu from the store's records, %llu rendered",
			     (unsigned long long)st.sizes_stored, (unsigned long long)st.sizes_rendered);
		fs_log_debug(fs, "index.tsv: %llu read a range at a time from the rows the writer kept, "
			     "%llu built from them, %llu rendered",
			     (unsigned long long)st.index_streamed, (unsigned long long)st.index_kept,
			     (unsigned long long)st.index_rendered);
		malloc_stats(); /* the heap, to tell cache bytes from fragmentation */
	}
	return r < 0 ? EXIT_FAIL : EXIT_OK;
}

/* Undo whatever the steps did, in the order that keeps each part's users ahead of it. */
static void stop(struct daemon *d, int status)
{
	struct fs *fs = &d->fs;
	fs_pusher_stop(fs);  /* first: it reads the views and caches the others tear down */
	fs_spooler_stop(&fs->spooler); /* before the notifier: they report their commits there */
	fs_spooler_stop(&fs->trust);
	fs_follower_stop(fs); /* so does the follower its switches */
	fs_inbox_stop(fs);   /* so does the inbox's decider */
	fs_notifier_stop(fs);
	fs_sizer_stop(fs); /* after the notifier, which tells it */
	kx_publisher_close(d->publisher); /* after the writers: its last round publishes their last commits */
	if (d->mounted)
		fuse_session_unmount(d->se);
	if (d->handlers)
		fuse_remove_signal_handlers(d->se);
	if (d->se)
		fuse_session_destroy(d->se);
	fs_versions_free(fs); /* the held views first: the current one may be among them */
	if (d->views)
		fs_view_release(fs);
	fs_inbox_close(fs);
	fs_dircache_free(fs->dirs);
	kx_tree_free(fs->tree);
	kx_store_close(fs->store); /* syncs the WAL and removes the claim */
	tell_parent(&d->pipe_fd, status);
	free(d->cfg.store);
	free(d->cfg.cache);
	free(d->cfg.timeout);
	free(d->cfg.spool);
	free(d->cfg.max_manifest);
	free(d->cfg.max_artifact);
	free(d->cfg.spin);
	free(d->cfg.publish);
	free(d->cfg.publish_interval);
	free(d->cfg.publish_keep);
	free(d->cfg.follow_path);
	free(d->cfg.stale_after);
	free(d->cfg.max_threads);
	free(d->opts.mountpoint);
	fuse_opt_free_args(&d->args);
}

int main(int argc, char **argv)
{
	static struct daemon d; /* large (three paths): not on the stack */
	d.args = (struct fuse_args)FUSE_ARGS_INIT(argc, argv);
	d.fs = (struct fs){ .timeout = 3600, .uid = getuid(), .gid = getgid() };
	d.cache = 8u << 20;
	d.max_manifest = KX_MANIFEST_MAX_BYTES_DEFAULT;
	d.max_artifact = KX_ARTIFACT_MAX_DEFAULT;
	d.spin_us = 100;
	d.publish_interval = 2;
	d.publish_keep = 3;
	d.stale_after = 30;
	d.pipe_fd = -1;

	/*
	 * Memory: the RSS target is 128 MiB at 100,000 runs, and the caches churn — rendered files of
	 * every size, listings of up to 100,000 entries. Few arenas (the worker threads share the
	 * caches; an arena per thread keeps each one's high-water mark resident), and a fixed mmap
	 * threshold so big listings go back to the system when freed instead of raising the threshold
	 * and fragmenting the heap. The notifier thread trims what is left (notify.c).
	 */
	mallopt(M_ARENA_MAX, 2);
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	mallopt(M_TRIM_THRESHOLD, 1024 * 1024);

	int status = parse_options(&d);
	if (status == CONTINUE)
		status = resolve_paths(&d);
	if (status == CONTINUE)
		status = mount_options(&d);
	if (status == CONTINUE) {
		d.fs.debug = d.opts.debug;
		d.fs.rw = d.cfg.rw;
		d.fs.max_manifest = d.max_manifest;
		d.fs.max_artifact = d.max_artifact;
		status = daemonize(&d);
	}
	if (status == CONTINUE) {
		block_signals(true); /* inherited by RocksDB's threads and the notifier */
		status = open_store(&d);
	}
	if (status == CONTINUE)
		status = mount_and_start(&d);
	if (status == CONTINUE)
		status = serve(&d);
	stop(&d, status);
	return status;
}
