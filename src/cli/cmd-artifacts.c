// SPDX-License-Identifier: MIT
/*
 * The artifacts' commands (SPEC §9, docs/artifacts.md): `kindex samples RUN` prints a run's raw
 * samples (its samples.tsv, as kindex-bench attached it); `kindex gc` removes the bytes no stored
 * run announces once their grace period is over, and what an interrupted upload left, saying what
 * it removes (or, with --dry-run, would).
 */
#include "cli.h"

#include "kx/tree.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- kindex samples ----------------------------------------------------------------------------- */

#define SAMPLES_NAME "samples.tsv"

struct find_name {
	const char *name;
	struct kx_digest d;
	bool found;
};

static int match_name(void *ctx, const char *name, const struct kx_digest *d)
{
	struct find_name *f = ctx;
	if (strcmp(name, f->name) != 0)
		return 0;
	f->d = *d;
	f->found = true;
	return 1;
}

static const char samples_help[] =
	"Prints a run's raw samples: the bytes of its samples.tsv artifact (SPEC section 9), which\n"
	"kindex-bench attaches to every timed run: one latency in ns per line, in measured order. The\n"
	"run's median, p20 and p80 are these samples' quantiles (linear interpolation). RUN is a short\n"
	"id, a unique hex prefix, a 'sha256:' digest or a path in the tree.\n"
	"  --name NAME   print another of the run's artifacts instead\n";

int cli_cmd_samples(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv, samples_help);
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	const char *arg = NULL, *name = SAMPLES_NAME;
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--name") == 0 && i + 1 < argc) {
			name = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("samples: unknown option %s ('kindex samples --help')", quoted(argv[i]));
			return EXIT_USAGE;
		} else if (arg) {
			cli_error("samples: give one RUN (%s and %s)", quoted(arg), quoted(argv[i]));
			return EXIT_USAGE;
		} else {
			arg = argv[i];
		}
	}
	if (!arg) {
		cli_error("samples: give a RUN ('kindex samples --help')");
		return EXIT_USAGE;
	}
	struct kx_store *s;
	int r = cli_open(cli, KX_STORE_READONLY, &s);
	if (r < 0)
		return -r;
	struct kx_tree *t = kx_tree_new(s, 0);
	struct kx_view *v = kx_store_view(s);
	int status = EXIT_OK;
	struct kx_node n;
	struct find_name f = { .name = name };
	char hex[KX_DIGEST_HEX + 1] = "", d[KX_DIGEST_STR_MAX];
	struct kx_artifact_rec a;
	if (!t || !v) {
		r = -ENOMEM;
	} else if ((r = cli_resolve_run(s, t, v, arg, &n)) < 0) {
		cli_error("samples: %s: %s", quoted(arg), cli_run_error(r));
		status = r == -EIO ? EXIT_IO : EXIT_REFUSED;
	} else if ((r = kx_store_run_artifacts(s, v, &n.id, match_name, &f)) < 0) {
		cli_error("samples: cannot read the artifacts of %s: %s", quoted(arg), strerror(-r));
		status = EXIT_IO;
	} else if (kx_digest_hex(&n.id, hex), !f.found) {
		cli_error("samples: runs/%.12s announces no artifact %s%s", hex, quoted(name),
			  strcmp(name, SAMPLES_NAME) == 0 ? " (kindex-bench attaches one to every timed run it measures)" : "");
		status = EXIT_REFUSED;
	} else if (kx_digest_format(&f.d, d), (r = kx_store_get_artifact(s, v, &f.d, &a)) == -ENOENT) {
		cli_error("samples: runs/%.12s announces %s (%s), but its bytes were never received", hex, quoted(name), d);
		status = EXIT_REFUSED;
	} else if (r < 0) {
		cli_error("samples: cannot read %s: %s", d, strerror(-r));
		status = EXIT_IO;
	}
	if (status == EXIT_OK) {
		struct kx_node art = { .type = KX_NODE_DOC_FILE, .file = KX_DOC_FILE_ARTIFACT, .id = f.d };
		uint64_t copied;
		bool wrote;
		fflush(stdout);
		if ((r = cli_copy_artifact(t, v, &art, a.size, STDOUT_FILENO, &copied, &wrote)) < 0) {
			cli_error("samples: cannot %s %s at byte %" PRIu64 ": %s", wrote ? "write" : "read", d, copied,
				  strerror(-r));
			status = EXIT_IO;
		}
	}
	kx_view_release(v);
	kx_tree_free(t);
	kx_store_close(s);
	return status;
}

/* ---- kindex gc ---------------------------------------------------------------------------------- */

#define GRACE_DEFAULT_NS (INT64_C(86400) * 1000000000) /* a day */

/* "90", "90s", "30m", "24h", "7d": nanoseconds; -EINVAL. */
static int parse_duration(const char *s, int64_t *ret)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return -EINVAL;
	uint64_t unit = !*end || strcmp(end, "s") == 0 ? 1 : strcmp(end, "m") == 0 ? 60 : strcmp(end, "h") == 0 ? 3600
			: strcmp(end, "d") == 0 ? 86400 : 0;
	if (!unit || v > (uint64_t)INT64_MAX / 1000000000 / unit)
		return -EINVAL;
	*ret = (int64_t)(v * unit * 1000000000);
	return 0;
}

struct uploads {
	uint8_t (*v)[KX_UPLOAD_ID_LEN];
	size_t len, cap;
};

struct gc {
	struct kx_store *s;
	int64_t now, grace;
	bool dry, quiet;
	struct uploads named;   /* the uploads artifact records name: never left-overs */
	struct uploads removed; /* whose chunks are deleted: their range compacted at the end */
	size_t nremoved, kept, uploads;
	uint64_t removed_bytes, upload_bytes;
	int err;
};

static int64_t upload_began(const uint8_t id[KX_UPLOAD_ID_LEN])
{
	int64_t ns = 0;
	for (int i = 0; i < 8; i++)
		ns = (int64_t)((uint64_t)ns << 8 | id[i]);
	return ns;
}

static int note_removed(struct gc *g, const uint8_t id[KX_UPLOAD_ID_LEN])
{
	if (KX_GROW(g->removed.v, g->removed.cap, g->removed.len, 64) < 0)
		return -ENOMEM;
	memcpy(g->removed.v[g->removed.len++], id, KX_UPLOAD_ID_LEN);
	return 0;
}

/* The bytes of the files directly in directory `dir` (a store: no subdirectory holds its data). */
static uint64_t dir_bytes(const char *dir)
{
	uint64_t n = 0;
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));) {
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			n += (uint64_t)st.st_size;
	}
	if (d)
		closedir(d);
	return n;
}

static int gc_artifact(void *ctx, const struct kx_digest *d, const struct kx_artifact_rec *a)
{
	struct gc *g = ctx;
	if (KX_GROW(g->named.v, g->named.cap, g->named.len, 256) < 0)
		return -ENOMEM;
	memcpy(g->named.v[g->named.len++], a->upload, KX_UPLOAD_ID_LEN);
	size_t by = 0;
	int r = kx_store_count_announcers(g->s, NULL, d, &by);
	if (r < 0 || by)
		return r;
	char ds[KX_DIGEST_STR_MAX], when[40];
	kx_digest_format(d, ds);
	kx_time_format(a->received_ns, when);
	if (g->now - a->received_ns < g->grace) {
		g->kept++;
		return 0;
	}
	if (!g->dry && (r = kx_store_remove_upload(g->s, d, a->upload)) == 0 && (r = note_removed(g, a->upload)) < 0)
		return r;
	if (r < 0)
		return r;
	g->nremoved++;
	g->removed_bytes += a->size;
	if (!g->quiet)
		printf("%s artifact %s: %" PRIu64 " bytes received %s, announced by no stored run\n",
		       g->dry ? "would remove" : "removed", ds, a->size, when);
	return 0;
}

static int gc_upload(void *ctx, const uint8_t id[KX_UPLOAD_ID_LEN], uint64_t bytes)
{
	struct gc *g = ctx;
	for (size_t i = 0; i < g->named.len; i++)
		if (memcmp(g->named.v[i], id, KX_UPLOAD_ID_LEN) == 0)
			return 0;
	int64_t began = upload_began(id);
	if (g->now - began < g->grace)
		return 0; /* maybe still being written by a writer of this store */
	int r = g->dry ? 0 : kx_store_remove_upload(g->s, NULL, id);
	if (r == 0 && !g->dry)
		r = note_removed(g, id);
	if (r < 0)
		return r;
	char when[40], hex[2 * KX_UPLOAD_ID_LEN + 1];
	kx_time_format(began, when);
	for (size_t i = 0; i < KX_UPLOAD_ID_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	g->uploads++;
	g->upload_bytes += bytes;
	if (!g->quiet)
		printf("%s an interrupted upload %s: %" PRIu64 " bytes begun %s, never completed\n",
		       g->dry ? "would remove" : "removed", hex, bytes, when);
	return 0;
}

static const char gc_help[] =
	"Removes the artifacts' bytes (SPEC section 9) that no stored run announces and that were\n"
	"received longer ago than the grace period, and the chunks of uploads that never completed (a\n"
	"writer killed mid-file) begun longer ago than it. Bytes any run announces are never removed.\n"
	"Each removal is printed. Not while the store is mounted read-write (the daemon holds it).\n"
	"  --dry-run       print what would be removed, remove nothing\n"
	"  --grace TIME    the grace period: 90s, 30m, 24h, 7d (default 1d; 0: none)\n";

int cli_cmd_gc(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv, gc_help);
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	struct gc g = { .grace = GRACE_DEFAULT_NS, .quiet = cli->quiet };
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--dry-run") == 0) {
			g.dry = true;
		} else if (strcmp(argv[i], "--grace") == 0) {
			if (i + 1 == argc || parse_duration(argv[i + 1], &g.grace) < 0) {
				cli_error("gc: --grace needs a time: digits with s, m, h or d (e.g. 24h)");
				return EXIT_USAGE;
			}
			i++;
		} else {
			cli_error("gc: %s %s ('kindex gc --help')", argv[i][0] == '-' ? "unknown option" : "takes no argument",
				  quoted(argv[i]));
			return EXIT_USAGE;
		}
	}
	int r = cli_open(cli, g.dry ? KX_STORE_READONLY : 0, &g.s);
	if (r < 0)
		return -r;
	g.now = kx_now_ns();
	char *path = strdup(kx_store_path(g.s));
	uint64_t before = path ? dir_bytes(path) : 0;
	r = kx_store_each_artifact(g.s, NULL, gc_artifact, &g);
	if (r == 0)
		r = kx_store_each_upload(g.s, NULL, gc_upload, &g);
	for (size_t k = 0; r == 0 && k < g.removed.len; k++)
		r = kx_store_reclaim_upload(g.s, g.removed.v[k]);
	free(g.named.v);
	free(g.removed.v);
	kx_store_close(g.s);
	if (r < 0) {
		cli_error("gc: %s: %s", g.dry ? "cannot read the store" : "cannot remove from the store", strerror(-r));
		free(path);
		return EXIT_IO;
	}
	if (!cli->quiet)
		fprintf(stderr, "gc: %s %zu artifact%s (%" PRIu64 " bytes) and %zu interrupted upload%s (%" PRIu64
				" bytes); %zu announced by no run kept within the grace period\n",
			g.dry ? "would remove" : "removed", g.nremoved, plural(g.nremoved), g.removed_bytes, g.uploads,
			plural(g.uploads), g.upload_bytes, g.kept);
	if (!cli->quiet && !g.dry && g.removed.len && path) /* (RocksDB deletes what it no longer needs by its close) */
		fprintf(stderr, "gc: the store's files took %" PRIu64 " bytes, now %" PRIu64 "\n", before, dir_bytes(path));
	free(path);
	return EXIT_OK;
}
