// SPDX-License-Identifier: MIT
/*
 * `kindex ingest PATH...` and `kindex import liger FILE...`: the offline entrances of the ingest
 * pipeline. Each file is one decision, as in the inbox; a refused file is reported with every
 * problem and the others go on. Directories are walked (hidden entries skipped); "-" is stdin;
 * anything else that is not a regular file is refused unread (rule `type`), never waited on.
 */
#include "cli.h"

#include "kx/liger.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

struct paths {
	char **v;
	size_t len, cap;
};

static int add_path(struct paths *p, const char *s)
{
	if (KX_GROW(p->v, p->cap, p->len, 64) < 0)
		return -ENOMEM;
	if (!(p->v[p->len] = strdup(s)))
		return -ENOMEM;
	p->len++;
	return 0;
}

static void paths_free(struct paths *p)
{
	for (size_t i = 0; i < p->len; i++)
		free(p->v[i]);
	free(p->v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether path's last component is "artifacts": the files under such a directory are artifacts'
 * bytes (SPEC §9), not manifests. */
static bool artifacts_dir(const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	size_t b = n;
	while (b && path[b - 1] != '/')
		b--;
	return n - b == 9 && memcmp(path + b, "artifacts", 9) == 0;
}

/* Regular files under dir, sorted, hidden entries skipped: into arts under a directory named
 * artifacts (and below it), else into p. */
static int walk(struct paths *p, struct paths *arts, const char *dir, bool in_artifacts)
{
	in_artifacts |= artifacts_dir(dir);
	DIR *d = opendir(dir);
	if (!d) {
		cli_error("cannot read directory %s: %s", quoted(dir), strerror(errno));
		return -errno;
	}
	struct paths here = { 0 };
	struct dirent *e;
	int r = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *path;
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0) {
			r = -ENOMEM;
			break;
		}
		r = add_path(&here, path);
		free(path);
		if (r < 0)
			break;
	}
	closedir(d);
	qsort(here.v, here.len, sizeof(*here.v), cmp_str);
	for (size_t i = 0; i < here.len; i++) {
		/* like find without -L: a symlink to a directory is not followed (no loops), one to a
		 * file is ingested */
		struct stat st;
		bool known = r == 0 && lstat(here.v[i], &st) == 0;
		if (known && S_ISDIR(st.st_mode))
			r = walk(p, arts, here.v[i], in_artifacts);
		else if (known && S_ISLNK(st.st_mode) && stat(here.v[i], &st) == 0 && S_ISDIR(st.st_mode))
			fprintf(stderr, "kindex: skipped %s: a symbolic link to a directory\n", quoted(here.v[i]));
		else if (r == 0)
			r = add_path(in_artifacts ? arts : p, here.v[i]); /* unreadable ones are reported when read */
	}
	paths_free(&here);
	return r;
}

static int read_fd(int fd, size_t limit, struct kx_buf *b)
{
	kx_buf_reset(b);
	char chunk[65536];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : 0;
		if (limit && b->len + (size_t)n > limit)
			return -EFBIG;
		if (kx_buf_append(b, chunk, (size_t)n) < 0)
			return -ENOMEM;
	}
}

/*
 * A named input must be a regular file (or a symbolic link to one): a FIFO or a character device
 * would block the reader until some writer came, a socket cannot be opened. stat() first, so
 * that nothing but a regular file is ever opened (opening a device can act on it), then fstat()
 * of what was opened, without blocking, in case the name changed in between. -ENOTSUP: not a
 * regular file.
 */
static int read_input(const char *path, size_t limit, struct kx_buf *b)
{
	if (strcmp(path, "-") == 0)
		return read_fd(STDIN_FILENO, limit, b);
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOTSUP;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	int r = fstat(fd, &st) < 0 ? -errno : !S_ISREG(st.st_mode) ? -ENOTSUP : 0;
	if (r == 0)
		r = read_fd(fd, limit, b);
	close(fd);
	return r;
}

/*
 * Reading and validating files is half the work of an ingest and needs no store: a reader thread
 * does it READAHEAD files ahead of the thread that writes to the store, in file order.
 */
enum { READAHEAD = 2048 };

struct parsed {
	struct kx_prepared *f;
	struct kx_problems problems;
	int err;
	bool read_failed;
	bool liger; /* a .csv, or bytes that open with Liger-Kernel's header: `kindex import liger` */
	size_t bytes;
};

struct reader {
	struct paths *paths;
	struct kx_manifest_limits limits;
	struct kx_verify_pool *pool; /* checks signatures while the store is written */
	size_t limit;
	struct kx_buf buf;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct parsed *ring[READAHEAD];
	size_t produced, consumed;
	bool stop;
};

static void parsed_free(struct parsed *p)
{
	if (!p)
		return;
	kx_prepared_free(p->f);
	kx_problems_release(&p->problems);
	free(p);
}

/* Liger-Kernel's CSV (src/ingest/liger.c) starts with this column; a manifest cannot. */
static bool looks_liger(const char *path, const struct kx_buf *b)
{
	static const char header[] = "kernel_name,";
	size_t n = strlen(path);
	if (n > 4 && strcasecmp(path + n - 4, ".csv") == 0)
		return true;
	const char *s = b->ptr ? b->ptr : "";
	if (b->len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) /* a UTF-8 byte order mark */
		s += 3;
	return strncmp(s, header, strlen(header)) == 0;
}

static struct parsed *reader_parse(struct reader *rd, size_t k)
{
	struct parsed *p = calloc(1, sizeof(*p));
	if (!p)
		abort(); /* nothing sensible to do without memory for a few bytes */
	kx_problems_init(&p->problems);
	const char *path = rd->paths->v[k];
	int r = read_input(path, rd->limit + 1, &rd->buf);
	p->liger = looks_liger(path, &rd->buf);
	if (r == -EFBIG || (r == 0 && rd->buf.len > rd->limit)) {
		kx_problems_add(&p->problems, 0, 0, "", "size", "file is over the limit of %zu byte%s (raise it with --max-bytes)",
				rd->limit, plural(rd->limit));
		p->err = -EINVAL;
	} else if (r == -ENOTSUP) {
		/* the spool's rule and words for the same input (src/spool) */
		kx_problems_add(&p->problems, 0, 0, "", "type", "not a regular file");
		p->err = -EINVAL;
	} else if (r < 0) {
		p->err = r;
		p->read_failed = true;
	} else {
		p->bytes = rd->buf.len;
		p->err = kx_ingest_prepare(rd->buf.ptr ? rd->buf.ptr : "", rd->buf.len, &rd->limits, rd->pool, &p->f,
					   &p->problems);
	}
	return p;
}

static void *reader_main(void *arg)
{
	struct reader *rd = arg;
	for (size_t k = 0; k < rd->paths->len; k++) {
		struct parsed *p = reader_parse(rd, k);
		pthread_mutex_lock(&rd->lock);
		while (!rd->stop && rd->produced - rd->consumed == READAHEAD)
			pthread_cond_wait(&rd->cond, &rd->lock);
		if (rd->stop) {
			pthread_mutex_unlock(&rd->lock);
			parsed_free(p);
			break;
		}
		rd->ring[rd->produced % READAHEAD] = p;
		rd->produced++;
		pthread_cond_broadcast(&rd->cond);
		pthread_mutex_unlock(&rd->lock);
	}
	kx_buf_release(&rd->buf);
	return NULL;
}

static struct parsed *reader_take(struct reader *rd, size_t k)
{
	pthread_mutex_lock(&rd->lock);
	while (rd->produced <= k)
		pthread_cond_wait(&rd->cond, &rd->lock);
	struct parsed *p = rd->ring[k % READAHEAD];
	rd->ring[k % READAHEAD] = NULL;
	rd->consumed++;
	pthread_cond_broadcast(&rd->cond);
	pthread_mutex_unlock(&rd->lock);
	return p;
}

/* What the artifacts of an ingest came to, and the digests of those stored. */
struct art_tally {
	size_t added, present, refused, failed;
	struct kx_digest *digests;
	size_t len, cap;
};

/* Store each artifact file (SPEC §9), one decision each; the exit status so far. */
static int store_artifacts(struct cli *cli, struct kx_store *s, const struct paths *arts,
			   const struct kx_ingest_opts *opts, uint64_t max, struct art_tally *at)
{
	int status = EXIT_OK;
	struct progress pg;
	if (arts->len)
		cli_progress_init(&pg, "artifacts", arts->len, cli->quiet);
	for (size_t k = 0; k < arts->len; k++) {
		const char *path = arts->v[k];
		const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		struct kx_problems pr;
		kx_problems_init(&pr);
		struct stat st;
		int fd = -1, r = stat(path, &st) < 0 ? -errno : !S_ISREG(st.st_mode) ? -ENOTSUP : 0;
		if (r == 0 && (fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0)
			r = -errno;
		if (r == 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)))
			r = -ENOTSUP;
		struct kx_artifact_result res;
		struct kx_artifact_opts o = { .max_bytes = max, .name = base, .sync = opts->sync, .now_ns = opts->now_ns };
		if (r == 0)
			r = kx_ingest_artifact_fd(s, fd, path, &o, &res, &pr);
		if (fd >= 0)
			close(fd);
		if (r == -ENOTSUP) {
			kx_problems_add(&pr, 0, 0, "", "type", "%s is not a regular file: an artifact's bytes are a file", path);
			r = -EINVAL;
		}
		if (r == 0) {
			res.added ? at->added++ : at->present++;
			if (KX_GROW(at->digests, at->cap, at->len, 64) == 0) /* (the same bytes twice: one, below) */
				at->digests[at->len++] = res.digest;
		} else if (r == -EINVAL) {
			cli_print_problems(path, &pr);
			at->refused++;
			if (status == EXIT_OK)
				status = EXIT_REFUSED;
		} else {
			cli_error("cannot store artifact %s: %s", quoted(path), strerror(-r));
			at->failed++;
			status = EXIT_IO;
		}
		kx_problems_release(&pr);
		cli_progress_update(&pg, k + 1);
	}
	if (arts->len)
		cli_progress_done(&pg, arts->len);
	return status;
}

static const char ingest_help[] =
	"Each FILE holds one manifest or JSON Lines of many and is one decision: all its runs are\n"
	"added in one atomic write, or none and every problem is printed. A run already stored is\n"
	"reported as already present; the same observation published again with equal measurements\n"
	"is stored as an alias (never ranked or counted); with other measurements it is refused.\n"
	"A FIFO, socket or device (named, or in a directory) is refused with rule 'type', unread.\n"
	"\n"
	"options:\n"
	"  --max-bytes N   refuse files larger than N bytes (default 4194304); K, M, G suffixes\n"
	"  --sync          fsync the store's log after every file (default: once at the end)\n"
	"  --max-artifact N  refuse artifacts larger than N bytes (default 1G)\n"
	"\n"
	"Files under a directory named artifacts/ (and those named with --artifact FILE) are the\n"
	"bytes of runs' artifacts (SPEC §9): each is stored once by its SHA-256, before the manifests,\n"
	"whatever its name; a name starting with 64 hex digits (kindex-bench's <hex>-<name>) must be\n"
	"the bytes' digest. Bytes no run announces are kept a day, then removed by kindex gc.\n";

/* What the files of an ingest came to (struct kx_ingest_result's counts), summed. */
struct tally {
	size_t added, present, aliases, signatures, attestations, attested;
};

static void tally_add(struct tally *to, const struct tally *x)
{
	to->added += x->added;
	to->present += x->present;
	to->aliases += x->aliases;
	to->signatures += x->signatures;
	to->attestations += x->attestations;
	to->attested += x->attested;
}

static int ingest(struct cli *cli, int argc, char **argv, struct paths *paths, struct paths *arts)
{
	uint64_t max_artifact = KX_ARTIFACT_MAX_DEFAULT;
	int i = cli_options(cli, argc, argv, ingest_help);
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	struct kx_ingest_opts opts = { 0 };
	int r = 0;
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--max-bytes") == 0) {
			uint64_t n;
			if (i + 1 == argc) {
				cli_error("ingest: --max-bytes needs a size (e.g. 4M)");
				return EXIT_USAGE;
			}
			r = kx_parse_size(argv[++i], true, 1, SIZE_MAX / 2, &n);
			if (r < 0) {
				cli_error("ingest: invalid --max-bytes %s: %s", quoted(argv[i]),
					  r == -ERANGE ? "give a size of at least 1 byte, at most 8E"
						       : "give a size in bytes: digits, with K, M or G for KiB, MiB, GiB (e.g. 4M)");
				return EXIT_USAGE;
			}
			opts.limits.max_bytes = (size_t)n;
		} else if (strcmp(argv[i], "--sync") == 0) {
			opts.sync = true;
		} else if (strcmp(argv[i], "--max-artifact") == 0) {
			if (i + 1 == argc || kx_parse_size(argv[i + 1], true, 1, UINT64_MAX / 2, &max_artifact) < 0) {
				cli_error("ingest: --max-artifact needs a size in bytes, with K, M or G (e.g. 2G)");
				return EXIT_USAGE;
			}
			i++;
		} else if (strcmp(argv[i], "--artifact") == 0) {
			if (i + 1 == argc) {
				cli_error("ingest: --artifact needs a FILE");
				return EXIT_USAGE;
			}
			if (add_path(arts, argv[++i]) < 0)
				return EXIT_IO;
		} else if (strcmp(argv[i], "-") != 0 && argv[i][0] == '-') {
			cli_error("ingest: unknown option %s", quoted(argv[i]));
			return EXIT_USAGE;
		} else {
			struct stat st;
			char *parent = strdup(argv[i]);
			char *slash = parent ? strrchr(parent, '/') : NULL;
			if (slash)
				*slash = '\0';
			if (strcmp(argv[i], "-") != 0 && stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
				r = walk(paths, arts, argv[i], false);
			else
				r = add_path(slash && artifacts_dir(parent) ? arts : paths, argv[i]);
			free(parent);
			if (r < 0)
				return EXIT_IO;
		}
	}
	if (!paths->len && !arts->len) {
		cli_error("ingest: no PATH given (see kindex ingest --help)");
		return EXIT_USAGE;
	}
	struct kx_store *s;
	if ((r = cli_open(cli, 0, &s)) < 0)
		return -r;
	struct kx_view *before = kx_store_view(s); /* what the sizes pass compares with */
	/* artifacts first: a run then appears with its bytes, and its sizes are checked against them */
	struct art_tally at = { 0 };
	int status = store_artifacts(cli, s, arts, &opts, max_artifact, &at);
	size_t limit = opts.limits.max_bytes ? opts.limits.max_bytes : KX_MANIFEST_MAX_BYTES_DEFAULT;
	struct reader rd = { .paths = paths, .limits = opts.limits, .limit = limit };
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	if ((r = kx_verify_pool_new(cores > 1 ? (unsigned)cores : 1, &rd.pool)) < 0) {
		cli_error("cannot start the threads that check signatures: %s", strerror(-r));
		kx_store_close(s);
		return EXIT_IO;
	}
	pthread_mutex_init(&rd.lock, NULL);
	pthread_cond_init(&rd.cond, NULL);
	pthread_t th;
	bool threaded = pthread_create(&th, NULL, reader_main, &rd) == 0;
	struct progress pg;
	cli_progress_init(&pg, "ingest", paths->len, cli->quiet);
	size_t refused = 0, failed = 0, staged_bytes = 0;
	struct tally total = { 0 }, staged = { 0 }; /* committed; staged in the open batch */
	/* files are staged into batches committed every BATCH_FILES files or BATCH_BYTES bytes:
	 * each file is still one decision, the commit is shared (--sync commits every file) */
	enum { BATCH_FILES = 2048, BATCH_BYTES = 32 << 20 };
	struct kx_ingest_batch *batch = NULL;
	for (size_t k = 0; k <= paths->len; k++) {
		bool flush = k == paths->len || (batch && (opts.sync || kx_ingest_batch_files(batch) >= BATCH_FILES ||
							   staged_bytes >= BATCH_BYTES));
		if (batch && flush) {
			size_t n = kx_ingest_batch_files(batch);
			r = kx_ingest_batch_commit(batch, NULL);
			batch = NULL;
			if (r < 0) {
				cli_error("cannot commit %zu file%s to the store: %s", n, plural(n), strerror(-r));
				failed += n;
				status = EXIT_IO;
			} else {
				tally_add(&total, &staged);
			}
			staged = (struct tally){ 0 };
			staged_bytes = 0;
		}
		if (k == paths->len)
			break;
		struct parsed *it = threaded ? reader_take(&rd, k) : reader_parse(&rd, k);
		if (!batch && (r = kx_ingest_batch_begin(s, &opts, &batch)) < 0) {
			cli_error("cannot write to the store: %s", strerror(-r));
			status = EXIT_IO;
			parsed_free(it);
			break;
		}
		const char *path = paths->v[k];
		const char *name = strcmp(path, "-") == 0 ? "(stdin)" : path;
		r = it->err;
		if (r == 0) {
			struct kx_ingest_result res = { 0 };
			r = kx_ingest_batch_add_prepared(batch, it->f, &res, &it->problems);
			tally_add(&staged, &(struct tally){ res.added, res.present, res.aliases, res.signatures,
							    res.attestations, res.attestations_added });
			staged_bytes += it->bytes;
			kx_ingest_result_release(&res);
		}
		if (r == -EINVAL) {
			cli_print_problems(name, &it->problems);
			if (it->liger)
				cli_error("%s looks like Liger-Kernel's CSV, not a manifest: import it with: "
					  "kindex import liger %s", quoted(name), strcmp(path, "-") == 0 ? "FILE" : path);
			refused++;
			if (status == EXIT_OK)
				status = EXIT_REFUSED;
		} else if (r < 0) {
			cli_error("cannot %s %s: %s", it->read_failed ? "read" : "ingest", quoted(name), strerror(-r));
			failed++;
			status = EXIT_IO;
		}
		parsed_free(it);
		cli_progress_update(&pg, k + 1);
	}
	kx_ingest_batch_abort(batch);
	if (threaded) {
		pthread_mutex_lock(&rd.lock);
		rd.stop = true;
		pthread_cond_broadcast(&rd.cond);
		pthread_mutex_unlock(&rd.lock);
		pthread_join(th, NULL);
	}
	for (size_t q = 0; q < READAHEAD; q++)
		parsed_free(rd.ring[q]);
	kx_verify_pool_free(rd.pool);
	kx_buf_release(&rd.buf);
	pthread_mutex_destroy(&rd.lock);
	pthread_cond_destroy(&rd.cond);
	cli_progress_done(&pg, paths->len);
	if (total.added || total.aliases || total.signatures || total.attestations || total.attested || at.added)
		cli_keep_sizes(cli, s, before, true);
	kx_view_release(before);
	if (!opts.sync && cli_sync(s) != EXIT_OK)
		status = EXIT_IO;
	size_t unannounced = 0;
	if (at.len)
		qsort(at.digests, at.len, sizeof(*at.digests), kx_digest_cmp);
	for (size_t q = 0; q < at.len; q++) {
		size_t by = 0;
		if ((!q || !kx_digest_equal(&at.digests[q - 1], &at.digests[q])) &&
		    kx_store_count_announcers(s, NULL, &at.digests[q], &by) == 0 && !by)
			unannounced++;
	}
	free(at.digests);
	kx_store_close(s);
	if (arts->len && !cli->quiet)
		fprintf(stderr, "%zu artifact%s: %zu stored, %zu already present, %zu refused%s", arts->len,
			plural(arts->len), at.added, at.present, at.refused, at.failed ? ", some unreadable" : "");
	if (arts->len && !cli->quiet)
		fprintf(stderr, unannounced ? "; %zu announced by no stored run (kept a day, then kindex gc removes them)\n"
					    : "\n", unannounced);
	if (!paths->len)
		return status;
	const struct tally *t = &total;
	char also[64] = "", sigs[64] = "", atts[96] = "";
	if (t->aliases) /* SPEC §2: the same observation published again */
		snprintf(also, sizeof(also), ", %zu alias%s", t->aliases, t->aliases == 1 ? "" : "es");
	if (t->signatures) /* SPEC §10 */
		snprintf(sigs, sizeof(sigs), "; %zu signature%s stored", t->signatures, plural(t->signatures));
	if (t->attestations) /* SPEC §8 */
		snprintf(atts, sizeof(atts), "; %zu attestation%s stored, %zu already present", t->attested,
			 plural(t->attested), t->attestations - t->attested);
	if (!cli->quiet)
		fprintf(stderr, "%zu file%s: %zu accepted (%zu run%s added%s, %zu already present%s%s), %zu refused%s\n",
			paths->len, plural(paths->len), paths->len - refused - failed, t->added, plural(t->added), also,
			t->present, sigs, atts, refused, failed ? ", some unreadable" : "");
	return status;
}

int cli_cmd_ingest(struct cli *cli, int argc, char **argv)
{
	struct paths paths = { 0 }, arts = { 0 };
	int status = ingest(cli, argc, argv, &paths, &arts);
	paths_free(&paths);
	paths_free(&arts);
	return status;
}

static const char import_help[] =
	"Imports Liger-Kernel's benchmark CSV (all_benchmark_data.csv, or any CSV with its columns)\n"
	"as source-native runs (SPEC §5). All files form one decision: a row that cannot be mapped\n"
	"is reported with its file and line and nothing is written. Importing again adds nothing.\n";

int cli_cmd_import(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv, import_help);
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	if (i >= argc || strcmp(argv[i], "liger") != 0) {
		cli_error("import: the only source format is 'liger' (kindex import liger FILE...)");
		return EXIT_USAGE;
	}
	if (++i >= argc) {
		cli_error("import: no FILE given");
		return EXIT_USAGE;
	}
	struct kx_store *s;
	int r = cli_open(cli, 0, &s);
	if (r < 0)
		return -r;
	struct kx_arena *a = kx_arena_new();
	struct kx_json **roots = NULL;
	const char **labels = NULL;
	size_t n = 0;
	struct kx_problems p;
	kx_problems_init(&p);
	int status = EXIT_OK;
	struct kx_buf b = { 0 };
	for (; i < argc && status == EXIT_OK; i++) {
		r = kx_read_file(argv[i], 0, &b);
		if (r < 0) {
			cli_error("cannot read %s: %s", quoted(argv[i]), strerror(-r));
			status = EXIT_IO;
			break;
		}
		r = kx_liger_build(a, argv[i], b.ptr ? b.ptr : "", b.len, &roots, &labels, &n, &p);
		if (r == -EINVAL) {
			cli_print_problems(argv[i], &p);
			status = EXIT_REFUSED;
		} else if (r < 0) {
			cli_error("cannot import %s: %s", quoted(argv[i]), strerror(-r));
			status = EXIT_IO;
		}
	}
	kx_buf_release(&b);
	if (status == EXIT_OK) {
		struct kx_ingest_result res = { 0 };
		struct progress pg;
		cli_progress_init(&pg, "import", n, cli->quiet);
		struct kx_view *before = kx_store_view(s);
		r = kx_ingest_trees(s, a, roots, n, labels, NULL, &res, &p);
		cli_progress_done(&pg, n);
		if (r == 0 && res.added)
			cli_keep_sizes(cli, s, before, true);
		kx_view_release(before);
		if (r == -EINVAL) {
			cli_print_problems("import", &p);
			status = EXIT_REFUSED;
		} else if (r < 0) {
			cli_error("import failed: %s", strerror(-r));
			status = EXIT_IO;
		} else if (cli_sync(s) != EXIT_OK) {
			status = EXIT_IO;
		} else if (!cli->quiet) {
			printf("imported %zu run%s: %zu added, %zu already present\n", n, plural(n), res.added, res.present);
		}
		kx_ingest_result_release(&res);
	}
	kx_problems_release(&p);
	free(roots);
	free(labels);
	kx_arena_free(a);
	kx_store_close(s);
	return status;
}
