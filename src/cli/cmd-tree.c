// SPDX-License-Identifier: MIT
/*
 * `kindex export`, `kindex ls`, `kindex show`: the tree of SPEC §3 without a mount, through the
 * same src/tree code the daemon serves — so an export is byte-for-byte what a mount shows, with
 * the same modes (0444 files, 0555 directories) and mtimes. All three read one snapshot of the
 * store and work while it is mounted.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

/* The store, read-only, a tree over it and a view of its latest state: what every command that
 * reads the tree works on. */
struct reader {
	struct kx_store *s;
	struct kx_tree *t;
	struct kx_view *v;
};

/* 0, or cli_open's negated exit status. */
static int reader_open(struct cli *cli, struct reader *rd)
{
	int r = cli_open(cli, KX_STORE_READONLY, &rd->s);
	if (r < 0)
		return r;
	rd->t = kx_tree_new(rd->s, 0);
	rd->v = kx_store_view(rd->s);
	return 0;
}

static void reader_close(struct reader *rd)
{
	kx_view_release(rd->v);
	kx_tree_free(rd->t);
	kx_store_close(rd->s);
}

struct exporter {
	struct kx_tree *t;
	struct kx_view *v;
	int dirfd;
	struct progress pg;
	uint64_t files, bytes;
	unsigned messages; /* failures printed: each is printed once, where it happened */
	const char *root;
	char path[4096];
	/* files with more than one link (documents' files in every run naming them): the path each
	 * was first written at, by inode number, so the others are hard links to it, as mounted */
	struct linked {
		uint64_t ino;
		char *path;
	} *linked;
	size_t nlinked, caplinked; /* caplinked a power of two, at most half full */
};

static struct linked *linked_slot(struct linked *v, size_t cap, uint64_t ino)
{
	size_t i = (size_t)(ino * UINT64_C(0x9e3779b97f4a7c15) >> 32) & (cap - 1);
	while (v[i].path && v[i].ino != ino)
		i = (i + 1) & (cap - 1);
	return &v[i];
}

/* The slot of file `ino`: its path once one of its names is written (NULL before), the file
 * later names link to. NULL without memory: each name is then written as a copy. */
static struct linked *linked_first(struct exporter *e, uint64_t ino)
{
	if (2 * (e->nlinked + 1) > e->caplinked) {
		size_t cap = e->caplinked ? 2 * e->caplinked : 1024;
		struct linked *v = calloc(cap, sizeof(*v));
		if (!v)
			return NULL;
		for (size_t i = 0; i < e->caplinked; i++)
			if (e->linked[i].path)
				*linked_slot(v, cap, e->linked[i].ino) = e->linked[i];
		free(e->linked);
		e->linked = v;
		e->caplinked = cap;
	}
	return linked_slot(e->linked, e->caplinked, ino);
}

/* Name `path` the file later names of `ino` link to (its first copy, or a newer one). */
static void linked_set(struct exporter *e, struct linked *l, uint64_t ino, const char *path)
{
	char *p = strdup(path);
	if (!p)
		return; /* the old copy stays the target: more refused links, more copies */
	e->nlinked += !l->path;
	free(l->path);
	l->path = p;
	l->ino = ino;
}

/* "export: cannot WHAT DIR/PATH: error" for the entry at e->path */
static int fail(struct exporter *e, const char *what, int err)
{
	cli_error("export: cannot %s %s%s: %s", what, e->root, e->path, strerror(-err));
	e->messages++;
	return err;
}

/* The mount's mtime, as its getattr reports it (kx_timespec_from_ns): before 1970 too. */
static int set_mtime(struct exporter *e, int dirfd, const char *name, int64_t ns)
{
	struct timespec ts[2] = { kx_timespec_from_ns(ns), kx_timespec_from_ns(ns) };
	if (utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
		return fail(e, "set the mtime of", -errno);
	return 0;
}

#define COPY_PIECE (1u << 20) /* an artifact's bytes are copied this much at a time */

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int cli_copy_artifact(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, uint64_t size, int fd,
		      uint64_t *ret_copied, bool *ret_wrote)
{
	char *piece = malloc(COPY_PIECE);
	int r = piece ? 0 : -ENOMEM;
	*ret_wrote = false;
	*ret_copied = 0;
	for (uint64_t at = 0; r == 0 && at < size;) {
		size_t got;
		if ((r = kx_tree_read_artifact(t, v, n, at, piece, COPY_PIECE, &got)) < 0)
			break;
		if (!got) {
			r = -EIO; /* shorter than its record says */
			break;
		}
		if ((r = write_all(fd, piece, got)) < 0)
			*ret_wrote = true;
		at += got;
		*ret_copied += got;
	}
	free(piece);
	return r;
}

static int export_node(struct exporter *e, int dirfd, const char *name, const struct kx_node *n);

struct export_dir {
	struct exporter *e;
	int fd;
};

static int export_entry(void *ctx, const char *name, const struct kx_node *n)
{
	struct export_dir *d = ctx;
	return export_node(d->e, d->fd, name, n);
}

static int export_node(struct exporter *e, int dirfd, const char *name, const struct kx_node *n)
{
	struct kx_attr a;
	int r = kx_tree_getattr(e->t, e->v, n, &a);
	size_t plen = strlen(e->path);
	snprintf(e->path + plen, sizeof(e->path) - plen, "/%s", name);
	if (r < 0) {
		fail(e, "read the attributes of", r);
		goto out;
	}
	if (a.dir) {
		if (mkdirat(dirfd, name, 0755) < 0 && errno != EEXIST) {
			r = fail(e, "create", -errno);
			goto out;
		}
		int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			r = fail(e, "open", -errno);
			goto out;
		}
		struct export_dir d = { e, fd };
		unsigned before = e->messages;
		r = kx_tree_readdir(e->t, e->v, n, export_entry, &d);
		close(fd);
		if (r < 0 && e->messages == before) /* the listing failed, not an entry of it */
			fail(e, "list", r);
		if (r == 0 && fchmodat(dirfd, name, 0555, 0) < 0)
			r = fail(e, "set the mode of", -errno);
		if (r == 0)
			r = set_mtime(e, dirfd, name, a.mtime_ns);
		goto out;
	}
	struct linked *l = a.nlink > 1 ? linked_first(e, a.ino) : NULL;
	if (l && l->path && linkat(e->dirfd, l->path, dirfd, name, 0) == 0) {
		cli_progress_update(&e->pg, ++e->files);
		goto out;
	}
	/* No link: the first of its name, or a link the file system refused — EMLINK past its limit
	 * of links to one file (65,000 on ext4: a protocol shared by 32,500 runs), or none at all
	 * (EPERM, EXDEV …). The file is written again, and later names link to this copy. */
	const struct kx_content *c = NULL;
	bool artifact = kx_node_is_artifact(n); /* SPEC §9: copied in pieces, never read whole */
	if (!artifact && (r = kx_tree_read(e->t, e->v, n, &c)) < 0) {
		fail(e, "render", r);
		goto out;
	}
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (fd < 0) {
		r = fail(e, "create", -errno);
		kx_content_put(c);
		goto out;
	}
	const char *what = "write";
	if (artifact) {
		uint64_t copied = 0;
		bool wrote;
		r = cli_copy_artifact(e->t, e->v, n, a.size, fd, &copied, &wrote);
		what = r < 0 && !wrote ? "read" : "write";
		e->bytes += copied;
	} else {
		r = write_all(fd, c->data, c->len);
		e->bytes += c->len;
		kx_content_put(c);
	}
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r < 0) {
		fail(e, what, r);
		goto out;
	}
	r = set_mtime(e, dirfd, name, a.mtime_ns);
	cli_progress_update(&e->pg, ++e->files);
	if (r == 0 && l)
		linked_set(e, l, a.ino, e->path + 1);
out:
	e->path[plen] = '\0';
	return r;
}

int cli_cmd_export(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "Writes the tree the mount serves (README, benchmarks/, compare/, runs/, digests/) into DIR,\n"
			    "which must be empty or not exist. Files are byte-identical to the mount's, with its modes,\n"
			    "mtimes and link counts (a document's file is written once, hard-linked into every run\n"
			    "naming it). Where DIR's file system refuses a link (ext4 allows 65,000 to one file; some\n"
			    "allow none), the file is written again and later names link to the new copy.\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	if (i + 1 != argc) {
		cli_error("export: give exactly one DIR");
		return EXIT_USAGE;
	}
	const char *dir = argv[i];
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		cli_error("export: cannot create %s: %s", quoted(dir), strerror(errno));
		return EXIT_IO;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		cli_error("export: cannot open %s: %s", quoted(dir), strerror(errno));
		return EXIT_IO;
	}
	/* refuse a non-empty directory: an export is the whole tree, not a merge */
	int dup_fd = dup(fd);
	DIR *d = fdopendir(dup_fd);
	struct dirent *de;
	bool empty = true;
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = false;
	if (d)
		closedir(d);
	if (!empty) {
		cli_error("export: %s is not empty; export into a new or empty directory", quoted(dir));
		close(fd);
		return EXIT_USAGE;
	}
	struct reader rd;
	int r = reader_open(cli, &rd);
	if (r < 0) {
		close(fd);
		return -r;
	}
	struct exporter e = { .t = rd.t, .v = rd.v, .dirfd = fd, .root = dir };
	struct kx_store_stats st;
	kx_store_stats(rd.s, e.v, &st);
	cli_progress_init(&e.pg, "export", 0, cli->quiet);
	struct kx_node root = { .type = KX_NODE_ROOT };
	struct export_dir top = { &e, fd };
	r = kx_tree_readdir(e.t, e.v, &root, export_entry, &top);
	if (r < 0 && !e.messages)
		fail(&e, "list", r);
	struct kx_attr a;
	if (r == 0 && (r = kx_tree_getattr(e.t, e.v, &root, &a)) < 0)
		fail(&e, "read the attributes of", r);
	if (r == 0) {
		struct timespec ts[2] = { kx_timespec_from_ns(a.mtime_ns), kx_timespec_from_ns(a.mtime_ns) };
		if (futimens(fd, ts) < 0)
			r = fail(&e, "set the mtime of", -errno);
	}
	cli_progress_done(&e.pg, e.files);
	for (size_t k = 0; k < e.caplinked; k++)
		free(e.linked[k].path);
	free(e.linked);
	reader_close(&rd);
	close(fd);
	if (r < 0)
		return EXIT_IO;
	if (!cli->quiet)
		fprintf(stderr, "exported %llu run%s as %llu file%s (%llu byte%s) into %s\n", (unsigned long long)st.runs,
			plural(st.runs), (unsigned long long)e.files, plural(e.files), (unsigned long long)e.bytes,
			plural(e.bytes), dir);
	return EXIT_OK;
}

/* A file's bytes on standard output, its reference put: EXIT_OK, or EXIT_IO once said why
 * ("CMD: cannot write WHAT to standard output: …"). */
static int print_content(const char *cmd, const char *what, const struct kx_content *c)
{
	bool written = fwrite(c->data, 1, c->len, stdout) == c->len;
	kx_content_put(c);
	if (written && fflush(stdout) == 0)
		return EXIT_OK;
	cli_error("%s: cannot write %s to standard output: %s", cmd, what, strerror(errno));
	return EXIT_IO;
}

struct lister {
	struct kx_tree *t;
	struct kx_view *v;
	bool long_form;
};

static int list_entry(void *ctx, const char *name, const struct kx_node *n)
{
	struct lister *l = ctx;
	bool dir = kx_node_is_dir(n);
	if (l->long_form) {
		struct kx_attr a;
		if (kx_tree_getattr(l->t, l->v, n, &a) < 0)
			return 0;
		char when[40];
		kx_time_format(a.mtime_ns, when);
		printf("%s %10llu %s %s%s\n", dir ? "dr-xr-xr-x" : "-r--r--r--", (unsigned long long)a.size, when, name,
		       dir ? "/" : "");
	} else {
		printf("%s%s\n", name, dir ? "/" : "");
	}
	return 0;
}

int cli_cmd_ls(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv, "Lists a directory of the tree (the root when PATH is absent), like ls -1.\n"
					     "  -l   also show mode, size and mtime\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	struct lister l = { 0 };
	const char *path = "";
	for (; i < argc; i++) {
		if (strcmp(argv[i], "-l") == 0)
			l.long_form = true;
		else
			path = argv[i];
	}
	struct reader rd;
	int r = reader_open(cli, &rd);
	if (r < 0)
		return -r;
	l.t = rd.t;
	l.v = rd.v;
	struct kx_node n;
	r = kx_tree_resolve(l.t, l.v, path, &n);
	int status = EXIT_OK;
	if (r < 0) {
		cli_error("ls: %s: %s", quoted(path),
			  r == -ENOENT ? "no such file or directory in the tree"
			  : r == -ENOTDIR ? "not a directory (a file of the tree is followed by '/')" : strerror(-r));
		status = r == -ENOENT || r == -ENOTDIR ? EXIT_REFUSED : EXIT_IO;
	} else if (kx_node_is_dir(&n)) {
		r = kx_tree_readdir(l.t, l.v, &n, list_entry, &l);
		if (r < 0) {
			cli_error("ls: cannot list %s: %s", quoted(path), strerror(-r));
			status = EXIT_IO;
		}
	} else {
		list_entry(&l, path, &n);
	}
	reader_close(&rd);
	return status;
}

int cli_resolve_run(struct kx_store *s, struct kx_tree *t, struct kx_view *v, const char *arg, struct kx_node *ret)
{
	struct kx_node n = { 0 };
	int r;
	const char *hex = strncmp(arg, "sha256:", 7) == 0 ? arg + 7 : arg;
	bool is_hex = strlen(hex) >= 4 && strspn(hex, "0123456789abcdef") == strlen(hex);
	if (is_hex) {
		r = kx_store_find_run_prefix(s, v, hex, &n.id);
		n.type = KX_NODE_RUNS_RUN;
	} else {
		r = kx_tree_resolve(t, v, arg, &n);
		if (r == 0 && !kx_node_is_dir(&n)) {
			/* a file: the run directory holding it (a document's file has no one run of its own) */
			char dir[4096];
			const char *slash = strrchr(arg, '/');
			snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - arg) : 0, arg);
			r = kx_tree_resolve(t, v, dir, &n);
		}
		if (r == 0 && n.type != KX_NODE_RUN && n.type != KX_NODE_RUNS_RUN)
			r = -ENOTDIR;
	}
	if (r == 0)
		*ret = n;
	return r;
}

const char *cli_run_error(int err)
{
	return err == -ENOTUNIQ ? "more than one run starts with that; give more digits"
	       : err == -ENOTDIR ? "not a run directory ('kindex ls' lists what it holds)"
	       : err == -ENOENT	 ? "no such run"
				 : strerror(-err);
}

int cli_cmd_show(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "RUN is a short id (or any unique prefix of at least 4 hex digits), a full 'sha256:' digest,\n"
			    "or a path in the tree (benchmarks/.../02-liger-e6eff4c05fb7, runs/e6eff4c05fb7).\n"
			    "Prints the run's page: primary measurement, rank, vs #1, identity, workload, protocol,\n"
			    "environment, evidence (the summary.txt of its directory).\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	if (i + 1 != argc) {
		cli_error("show: give exactly one RUN");
		return EXIT_USAGE;
	}
	const char *arg = argv[i];
	struct reader rd;
	int r = reader_open(cli, &rd);
	if (r < 0)
		return -r;
	struct kx_tree *t = rd.t;
	struct kx_view *v = rd.v;
	struct kx_node n = { 0 };
	r = cli_resolve_run(rd.s, rd.t, rd.v, arg, &n);
	int status = EXIT_OK;
	struct kx_node g = { 0 };
	size_t len = strlen(arg);
	while (len > 1 && arg[len - 1] == '/')
		len--;
	if (r == -ENOTDIR && kx_tree_resolve(t, v, arg, &g) == 0 && g.type == KX_NODE_GROUP_FILE && memrchr(arg, '/', len))
		len = (size_t)((const char *)memrchr(arg, '/', len) - arg); /* a group's file: the group */
	if (r == -ENOTDIR && (g.type == KX_NODE_GROUP || g.type == KX_NODE_GROUP_FILE)) {
		/* a group directory: where its runs are, and how to read them */
		cli_error("show: %s: a group directory, not a run: its runs in rank order are %.*s/ranking.tsv "
			  "('kindex cat %.*s/ranking.tsv'); 'kindex show' takes one of its rank directories "
			  "('kindex ls %.*s' lists them)",
			  quoted(arg), (int)len, arg, (int)len, arg, (int)len, arg);
		status = EXIT_REFUSED;
	} else if (r < 0) {
		cli_error("show: %s: %s", quoted(arg), cli_run_error(r));
		status = r == -EIO ? EXIT_IO : EXIT_REFUSED;
	} else {
		struct kx_node f = { .type = KX_NODE_RUNS_FILE, .file = KX_RF_SUMMARY, .id = n.id };
		const struct kx_content *c;
		r = kx_tree_read(t, v, &f, &c);
		if (r < 0) {
			cli_error("show: cannot render run: %s", strerror(-r));
			status = EXIT_IO;
		} else {
			status = print_content("show", "the run's page", c);
		}
	}
	reader_close(&rd);
	return status;
}

/* Strip what names the root ("/", "./"): a path as ls of the mount shows it works as it is. */
static const char *tree_path(const char *arg)
{
	while (*arg == '/' || (arg[0] == '.' && arg[1] == '/'))
		arg += *arg == '/' ? 1 : 2;
	return arg;
}

int cli_cmd_cat(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "Prints files of the tree, the bytes the mount serves (any file: index.tsv,\n"
			    "benchmarks/.../ranking.tsv, a run's manifest.json, compare/A..B/summary.tsv ...).\n"
			    "PATH is relative to the tree's root; a leading / is allowed.\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	if (i == argc) {
		cli_error("cat: give at least one PATH");
		return EXIT_USAGE;
	}
	struct reader rd;
	int r = reader_open(cli, &rd);
	if (r < 0)
		return -r;
	int status = EXIT_OK;
	for (; i < argc && status != EXIT_IO; i++) {
		const char *path = tree_path(argv[i]);
		struct kx_node n;
		const struct kx_content *c;
		r = kx_tree_resolve(rd.t, rd.v, path, &n);
		if (r == 0 && kx_node_is_dir(&n))
			r = -EISDIR;
		if (r == 0 && kx_node_is_artifact(&n)) { /* SPEC §9: streamed, never held whole */
			struct kx_attr a;
			uint64_t copied;
			bool wrote;
			if ((r = kx_tree_getattr(rd.t, rd.v, &n, &a)) == 0 &&
			    (r = cli_copy_artifact(rd.t, rd.v, &n, a.size, STDOUT_FILENO, &copied, &wrote)) < 0)
				cli_error("cat: cannot %s %s: %s", wrote ? "write" : "read", quoted(argv[i]), strerror(-r));
			if (r < 0)
				status = EXIT_IO;
			continue;
		}
		if (r == 0)
			r = kx_tree_read(rd.t, rd.v, &n, &c);
		if (r < 0) {
			cli_error("cat: %s: %s", quoted(argv[i]),
				  r == -ENOENT ? "no such file in the tree (kindex ls lists a directory)"
				  : r == -EISDIR ? "is a directory (kindex ls lists it)"
				  : r == -ENOTDIR ? "not a directory (a file of the tree is followed by '/')" : strerror(-r));
			status = r == -ENOENT || r == -EISDIR || r == -ENOTDIR ? EXIT_REFUSED : EXIT_IO;
			continue;
		}
		if (print_content("cat", quoted(argv[i]), c) != EXIT_OK)
			status = EXIT_IO;
	}
	reader_close(&rd);
	return status;
}

/* history.tsv's lines for one implementation: the header and its rows */
static int print_series(const struct kx_content *c, const char *impl)
{
	size_t ilen = strlen(impl);
	for (const char *p = c->data, *end = c->data + c->len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		bool keep = p == c->data || (len > ilen && memcmp(p, impl, ilen) == 0 && p[ilen] == '\t');
		if (keep && fwrite(p, 1, len, stdout) != len)
			return -errno;
		p += len;
	}
	return 0;
}

int cli_cmd_history(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "RUN|PATH: a run (as kindex show takes it) prints its implementation's series in its\n"
			    "group: every passed run in time order with the change points (docs/history.md); a\n"
			    "group directory (benchmarks/<kernel>/<pass>/<gpu>/<workload>) prints its history.tsv.\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	if (i + 1 != argc) {
		cli_error("history: give exactly one RUN or group PATH");
		return EXIT_USAGE;
	}
	const char *arg = argv[i];
	struct reader rd;
	int r = reader_open(cli, &rd);
	if (r < 0)
		return -r;
	struct kx_node n = { 0 }, run;
	struct kx_run_rec x = { 0 };
	bool of_run = false;
	if (kx_tree_resolve(rd.t, rd.v, tree_path(arg), &n) == 0 && n.type == KX_NODE_GROUP) {
		r = 0;
	} else if ((r = cli_resolve_run(rd.s, rd.t, rd.v, arg, &run)) == 0 && (r = kx_store_get_run(rd.s, rd.v, &run.id, &x)) == 0) {
		n.id = x.group; /* a group's node is its comparison key */
		of_run = true;
	}
	struct kx_node f = { .type = KX_NODE_GROUP_FILE, .file = KX_GF_HISTORY_TSV, .id = n.id };
	const struct kx_content *c = NULL;
	if (r == 0)
		r = kx_tree_read(rd.t, rd.v, &f, &c);
	int status = EXIT_OK;
	if (r < 0) {
		cli_error("history: %s: %s", quoted(arg),
			  r == -ENOTUNIQ ? "more than one run starts with that; give more digits"
			  : r == -ENOTDIR || r == -ENOENT ? "neither a run nor a group directory of the tree"
							 : strerror(-r));
		status = r == -EIO ? EXIT_IO : EXIT_REFUSED;
	} else if (!of_run) {
		status = print_content("history", "the history", c);
	} else {
		r = print_series(c, x.impl);
		kx_content_put(c);
		if (r < 0 || fflush(stdout) != 0) {
			cli_error("history: cannot write to standard output: %s", strerror(r < 0 ? -r : errno));
			status = EXIT_IO;
		}
	}
	reader_close(&rd);
	return status;
}

int cli_cmd_regressions(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "Prints regressions.tsv: the open change point of every series of every group (its last:\n"
			    "the start of the segment its newest results are in), regressions first, the largest move\n"
			    "first, then improvements (docs/history.md).\n"
			    "  --check   exit 1 when a regression is open (for a nightly job), 0 when none is\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	bool check = false;
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--check") != 0) {
			cli_error("regressions: %s %s (see kindex regressions --help)",
				  argv[i][0] == '-' ? "unknown option" : "takes no argument", quoted(argv[i]));
			return EXIT_USAGE;
		}
		check = true;
	}
	struct reader rd;
	int r = reader_open(cli, &rd);
	if (r < 0)
		return -r;
	struct kx_node n = { .type = KX_NODE_REGRESSIONS };
	const struct kx_content *c;
	int status = EXIT_OK;
	if ((r = kx_tree_read(rd.t, rd.v, &n, &c)) < 0) {
		cli_error("regressions: cannot find the change points: %s", strerror(-r));
		status = EXIT_IO;
	} else {
		bool open = memmem(c->data, c->len, "\nregression\t", 12) != NULL; /* a row: the header comes first */
		status = print_content("regressions", "the regressions", c);
		if (status == EXIT_OK && check && open)
			status = EXIT_REFUSED;
	}
	reader_close(&rd);
	return status;
}

/* Names for a message: "a, b, c", at most NAMES_SHOWN of them, then how many in all. */
#define NAMES_SHOWN 20

struct name_list {
	struct kx_buf text;
	size_t n;
	const char *prefix, *suffix; /* kept: names with these around them, and without (NULL: any) */
	const char *const *known;    /* and only where the rest is one of these (NULL: any) */
	size_t nknown;
	const char *except;          /* a name not kept */
};

static int name_add(void *ctx, const char *name)
{
	struct name_list *l = ctx;
	char part[2 * KX_NAME_MAX + 8];
	size_t len = strlen(name), pl = l->prefix ? strlen(l->prefix) : 0, sl = l->suffix ? strlen(l->suffix) : 0;
	if ((l->except && strcmp(name, l->except) == 0) || len < pl + sl ||
	    strncmp(name, l->prefix ? l->prefix : "", pl) != 0 ||
	    strcmp(name + len - sl, l->suffix ? l->suffix : "") != 0 || len - pl - sl >= sizeof(part))
		return 0;
	snprintf(part, sizeof(part), "%.*s", (int)(len - pl - sl), name + pl);
	bool known = !l->known;
	for (size_t i = 0; i < l->nknown && !known; i++)
		known = strcmp(l->known[i], part) == 0;
	if (!known || !*part)
		return 0;
	if (l->n++ < NAMES_SHOWN)
		return kx_buf_printf(&l->text, "%s%s", l->n > 1 ? ", " : "", part) < 0 ? -ENOMEM : 0;
	return 0;
}

static int dirent_name(void *ctx, const char *name, const struct kx_node *n)
{
	return name_add(ctx, name);
}

/* "a, b, c" or "a, b, … (25 in all)" */
static const char *names_text(struct name_list *l)
{
	if (l->n > NAMES_SHOWN)
		kx_buf_printf(&l->text, ", ... (%zu in all)", l->n);
	return l->n ? l->text.ptr : "none";
}

/* Why compare/CAND..BASE[/GPU.tsv] is not in the tree, on standard error. */
static int compare_missing(struct kx_tree *t, struct kx_view *v, const char *cand, const char *base, const char *gpu)
{
	struct name_list impls = { .n = 0 };
	kx_buf_init(&impls.text, 0);
	int r = kx_tree_compare_impls(t, v, name_add, &impls);
	if (r < 0) {
		cli_error("compare: cannot list the implementations: %s", strerror(-r));
		kx_buf_release(&impls.text);
		return EXIT_IO;
	}
	struct name_list known = { .n = 0 };
	const char *names[2] = { cand, base };
	bool missing = false;
	for (int i = 0; i < 2; i++) {
		known.n = 0;
		known.known = &names[i];
		known.nknown = 1;
		kx_tree_compare_impls(t, v, name_add, &known);
		if (!known.n && !(i == 1 && strcmp(cand, base) == 0)) {
			cli_error("compare: no implementation %s has a current run; known implementations: %s", quoted(names[i]),
				  names_text(&impls));
			missing = true;
		}
	}
	kx_buf_release(&known.text);
	char path[3 * KX_NAME_MAX + 32];
	struct kx_node n;
	snprintf(path, sizeof(path), "compare/%s..%s", cand, base);
	if (!missing && kx_tree_resolve(t, v, path, &n) < 0) {
		/* the implementations cand is compared with: compare/CAND..X for an implementation X */
		char prefix[KX_NAME_MAX + 4];
		snprintf(prefix, sizeof(prefix), "%s..", cand);
		struct name_list with = { .prefix = prefix };
		kx_buf_init(&with.text, 0);
		struct kx_node dir = { .type = KX_NODE_COMPARE };
		kx_tree_readdir(t, v, &dir, dirent_name, &with);
		cli_error("compare: %s and %s share no group; %s is compared with: %s", quoted(cand), quoted(base),
			  quoted(cand), names_text(&with));
		kx_buf_release(&with.text);
	} else if (!missing) {
		struct name_list gpus = { .suffix = ".tsv", .except = "summary.tsv" };
		kx_buf_init(&gpus.text, 0);
		kx_tree_readdir(t, v, &n, dirent_name, &gpus);
		cli_error("compare: %s and %s share no group on GPU %s; they share groups on: %s", quoted(cand), quoted(base),
			  quoted(gpu), names_text(&gpus));
		kx_buf_release(&gpus.text);
	}
	kx_buf_release(&impls.text);
	return EXIT_REFUSED;
}

int cli_cmd_compare(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "Prints compare/CANDIDATE..BASELINE/summary.tsv, or with --gpu GPU that pair's GPU.tsv: the\n"
			    "bytes the mount serves (docs/views.md). A ratio above 1 means CANDIDATE is better; mixed: the\n"
			    "two runs of a row lie more than 90 days apart.\n"
			    "  --gpu GPU   the groups on one GPU (its directory name, e.g. nvidia-a100-sxm4-80gb)\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	const char *names[2] = { NULL, NULL }, *gpu = NULL;
	size_t n = 0;
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--gpu") == 0 && i + 1 < argc) {
			gpu = argv[++i];
		} else if (strncmp(argv[i], "--gpu=", 6) == 0) {
			gpu = argv[i] + 6;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("compare: unknown option %s (see kindex compare --help)", quoted(argv[i]));
			return EXIT_USAGE;
		} else if (n < 2) {
			names[n++] = argv[i];
		} else {
			n++;
		}
	}
	if (n != 2 || (gpu && !*gpu)) {
		cli_error(gpu && !*gpu ? "compare: --gpu needs a GPU" : "compare: give a CANDIDATE and a BASELINE");
		return EXIT_USAGE;
	}
	if (strcmp(names[0], names[1]) == 0) {
		cli_error("compare: %s against itself: give two implementations", quoted(names[0]));
		return EXIT_USAGE;
	}
	struct reader rd;
	int r = reader_open(cli, &rd);
	if (r < 0)
		return -r;
	struct kx_tree *t = rd.t;
	struct kx_view *v = rd.v;
	/* an implementation is named as in compare/ (its path component) or by its exact name */
	char comp[2][KX_NAME_MAX];
	for (int k = 0; k < 2; k++) {
		struct name_list l = { .known = &names[k], .nknown = 1 };
		kx_buf_init(&l.text, 0);
		kx_tree_compare_impls(t, v, name_add, &l);
		kx_buf_release(&l.text);
		if (l.n)
			snprintf(comp[k], sizeof(comp[k]), "%s", names[k]);
		else
			kx_rank_component(names[k], strlen(names[k]), comp[k], sizeof(comp[k]));
		names[k] = comp[k];
	}
	char path[4 * KX_NAME_MAX + 32], gpu_comp[KX_NAME_MAX];
	struct kx_node probe;
	if (gpu) {
		/* a GPU by its directory's name, or by its own ("NVIDIA A100-SXM4-80GB"; a reserved name
		 * such as "summary" is never a directory's: summary.tsv is the pair's summary) */
		snprintf(path, sizeof(path), "compare/%s..%s/%s.tsv", names[0], names[1], gpu);
		if (kx_rank_reserved(gpu, strlen(gpu)) || kx_tree_resolve(t, v, path, &probe) < 0) {
			kx_rank_gpu_component(gpu, gpu_comp);
			gpu = gpu_comp;
		}
	}
	snprintf(path, sizeof(path), "compare/%s..%s/%s.tsv", names[0], names[1], gpu ? gpu : "summary");
	struct kx_node node;
	const struct kx_content *c = NULL;
	int status = EXIT_OK;
	r = gpu && strchr(gpu, '/') ? -ENOENT : kx_tree_resolve(t, v, path, &node);
	if (r == 0)
		r = kx_tree_read(t, v, &node, &c);
	if (r == -ENOENT) {
		status = compare_missing(t, v, names[0], names[1], gpu);
	} else if (r < 0) {
		cli_error("compare: cannot read %s: %s", path, strerror(-r));
		status = EXIT_IO;
	} else {
		status = print_content("compare", path, c);
	}
	reader_close(&rd);
	return status;
}
