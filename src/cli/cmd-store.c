// SPDX-License-Identifier: MIT
/* `kindex init`, `verify` and `recover`: create a store; check every digest, index and receipt of
 * one; open one whose log is damaged. */
#include "cli.h"

#include "kx/replica.h"
#include "kx/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cli_cmd_init(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "Creates the store directory (RocksDB) if it does not exist; an existing store is left as it is.\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	if (i < argc) {
		cli_error("init: unexpected argument %s", quoted(argv[i]));
		return EXIT_USAGE;
	}
	struct kx_store *s;
	int r = cli_open(cli, KX_STORE_CREATE, &s);
	if (r < 0)
		return -r;
	struct kx_store_stats st;
	kx_store_stats(s, NULL, &st);
	if (!cli->quiet)
		printf("store %s: %llu run%s, %llu document%s\n", cli->store, (unsigned long long)st.runs,
		       plural(st.runs), (unsigned long long)st.documents, plural(st.documents));
	kx_store_close(s);
	return EXIT_OK;
}

/* ---- verify: the store, and the receipts that promised runs ------------------------------------- */

struct receipts {
	struct kx_store *s;
	struct kx_problems *p;
	const char *file; /* the receipt being read, as the user would name it */
	uint64_t runs;
};

static int receipt_run(void *ctx, bool added, const char *id, const char *path)
{
	struct receipts *rc = ctx;
	struct kx_digest d;
	rc->runs++;
	int r = kx_store_find_run_prefix(rc->s, NULL, id, &d);
	if (r == -ENOENT)
		kx_problems_add(rc->p, 0, 0, rc->file, "receipt-run",
				"the receipt says runs/%s was %s (at %s), but the store has no such run", id,
				added ? "added" : "already present", path);
	/* -EUCLEAN: the run is in a damaged table, which verify names */
	return r == -ENOENT || r == -ENOTUNIQ || r == -EUCLEAN ? 0 : r;
}

struct att_seek {
	const char *id;
	bool found;
};

static int att_seek_one(void *ctx, const struct kx_attestation_ref *a)
{
	struct att_seek *x = ctx;
	char hex[KX_DIGEST_HEX + 1];
	kx_digest_hex(&a->digest, hex);
	x->found |= strncmp(hex, x->id, 12) == 0;
	return 0;
}

/* An attestation a receipt names (SPEC §8): stored, in the list of the run it is about. */
static int receipt_attestation(void *ctx, bool added, const char *id, const char *run)
{
	struct receipts *rc = ctx;
	struct kx_digest d;
	struct att_seek x = { id, false };
	rc->runs++;
	int r = kx_store_find_run_prefix(rc->s, NULL, run, &d);
	if (r == 0)
		r = kx_store_each_attestation(rc->s, NULL, &d, att_seek_one, &x);
	if ((r == 0 && !x.found) || r == -ENOENT)
		kx_problems_add(rc->p, 0, 0, rc->file, "receipt-attestation",
				"the receipt says attestation %s of runs/%s was %s, but the store has no such %s", id,
				run, added ? "added" : "already present", r == 0 ? "attestation of it" : "run");
	return r == -ENOENT || r == -ENOTUNIQ || r == -EUCLEAN ? 0 : r;
}

/*
 * A replica generation (a directory holding PUBLISHED, include/kx/replica.h): the store must be the
 * one PUBLISHED says was published, its sequence and store generation; a log or table lost or cut
 * short leaves a store that verifies clean on its own, only older.
 */
static void check_published(struct kx_store *s, const char *dir, struct kx_problems *p)
{
	char path[PATH_MAX];
	struct kx_published pub;
	char *why = NULL;
	snprintf(path, sizeof(path), "%s/PUBLISHED", dir);
	int r = kx_published_read(AT_FDCWD, path, &pub, &why);
	if (r == -ENOENT || (r == 0 && kx_published_check(&pub, s, &why) == 0)) {
		free(why);
		return; /* not a generation, or the store it names */
	}
	kx_problems_add(p, 0, 0, "PUBLISHED", "replica-published", "%s%s", why ? why : strerror(-r),
			r == 0 ? " (pull it again)" : "");
	free(why);
}

/* Every acceptance receipt in `dir` (the inbox's .accepted/, a spool's accepted/): each run and
 * attestation it names must be in the store. A missing `dir` is nothing to check unless `required`. */
static int check_receipts(struct receipts *rc, const char *dir, bool required)
{
	DIR *d = opendir(dir);
	if (!d) {
		if (errno == ENOENT && !required)
			return 0;
		cli_error("verify: cannot read receipts in '%s': %s", dir, strerror(errno));
		return -errno;
	}
	int r = 0;
	for (struct dirent *e; r == 0 && (e = readdir(d));) {
		if (e->d_name[0] == '.') /* spares, receipts being written */
			continue;
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		struct stat st;
		struct kx_buf text = { 0 };
		/* a receipt is a few lines a run: what is bigger, or not a file, is not one */
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && kx_read_file(path, 16u << 20, &text) == 0) {
			rc->file = path;
			r = kx_receipt_runs(text.ptr ? text.ptr : "", text.len, receipt_run, rc);
			if (r >= 0)
				r = kx_receipt_attestations(text.ptr ? text.ptr : "", text.len, receipt_attestation, rc);
			r = r > 0 ? 0 : r;
		}
		kx_buf_release(&text);
	}
	closedir(d);
	if (r < 0)
		cli_error("verify: cannot check receipts in '%s': %s", dir, strerror(-r));
	return r;
}

int cli_cmd_verify(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "Recomputes the digest of every stored document and checks every run against its\n"
			    "documents, group, rank index, path index and source index; then checks that every run\n"
			    "(and attestation) an acceptance receipt names is stored: the receipts of STORE/inbox/.accepted/ and of\n"
			    "each --receipts DIR (a spool's accepted/). Exit 1 on any problem. Losses recorded by\n"
			    "'kindex recover' are printed, each on a line of its own.\n"
			    "\n"
			    "  --receipts DIR   also check the receipts in DIR (repeatable)\n"
			    "  --since GEN      only what the commits after store generation GEN added (their runs,\n"
			    "                   the documents and groups of those, every record still read and\n"
			    "                   counted); for a store whose state at GEN verified\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	const char *extra[64];
	size_t nextra = 0;
	uint64_t since = 0;
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--receipts") == 0 && i + 1 < argc && nextra < KX_ARRAY_SIZE(extra)) {
			extra[nextra++] = argv[++i];
		} else if (strcmp(argv[i], "--since") == 0 && i + 1 < argc) {
			if (kx_parse_uint(argv[++i], 0, UINT64_MAX, &since) < 0)
				return cli_bad_number("verify", "--since", argv[i], "a store generation", 0, UINT64_MAX);
		} else {
			cli_error("verify: unexpected argument %s (see --help)", quoted(argv[i]));
			return EXIT_USAGE;
		}
	}
	struct kx_store *s;
	int r = cli_open(cli, KX_STORE_VERIFY, &s);
	if (r < 0)
		return -r;
	struct kx_store_stats now;
	if (since && kx_store_stats(s, NULL, &now) == 0 && since > now.generation) {
		cli_error("verify: --since %llu: the store is at generation %llu (README's 'generation' line): give 0 to %llu",
			  (unsigned long long)since, (unsigned long long)now.generation, (unsigned long long)now.generation);
		kx_store_close(s);
		return EXIT_USAGE;
	}
	struct kx_problems p;
	kx_problems_init(&p);
	uint64_t checked = 0;
	struct kx_buf losses = { 0 };
	r = kx_store_verify_since(s, since, 0, &p, &checked);
	if (r == 0)
		check_published(s, cli->store, &p);
	if (r == 0 && (r = kx_store_losses(s, NULL, &losses)) == -EUCLEAN && p.len)
		r = 0; /* in a damaged table, named among the problems */
	struct receipts rc = { .s = s, .p = &p };
	char inbox[PATH_MAX];
	snprintf(inbox, sizeof(inbox), "%s/inbox/.accepted", cli->store);
	if (r == 0 && (r = check_receipts(&rc, inbox, false)) == 0)
		for (size_t k = 0; k < nextra && r == 0; k++)
			r = check_receipts(&rc, extra[k], true);
	kx_store_close(s);
	int code = EXIT_OK;
	if (r < 0) {
		cli_error("verify failed: %s", strerror(-r));
		code = EXIT_IO;
	} else {
		for (const char *l = losses.ptr; l && *l;) {
			const char *nl = strchr(l, '\n');
			int n = nl ? (int)(nl - l) : (int)strlen(l);
			printf("store %s lost writes: %.*s\n", cli->store, n, l);
			l += n + (nl ? 1 : 0);
		}
		if (p.len) {
			char runs[64] = "";
			if (rc.runs)
				snprintf(runs, sizeof(runs), " and %llu receipted run%s", (unsigned long long)rc.runs,
					 plural(rc.runs));
			cli_error("store %s is damaged: %zu problem%s in %llu record%s%s", cli->store, p.len, plural(p.len),
				  (unsigned long long)checked, plural(checked), runs);
			for (size_t k = 0; k < p.len; k++)
				fprintf(stderr, "  %s: %s: %s\n", p.v[k].pointer, p.v[k].rule, p.v[k].message);
			code = EXIT_REFUSED;
		} else if (!cli->quiet) {
			printf("store %s: %llu record%s verified, no problems", cli->store, (unsigned long long)checked,
			       plural(checked));
			if (rc.runs)
				printf("; %llu run%s named by receipts, all stored", (unsigned long long)rc.runs,
				       plural(rc.runs));
			printf("\n");
		}
	}
	kx_buf_release(&losses);
	kx_problems_release(&p);
	return code;
}

int cli_cmd_recover(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "For a store that will not open because its write-ahead log is damaged: copies every log\n"
			    "as it is into STORE/lost+found/<time>/, opens the store as it stood before the damage\n"
			    "(the writes logged after it are dropped), records the loss — 'kindex verify' and the\n"
			    "mount's README name it — and verifies the store and its receipts, which name the runs\n"
			    "that were lost. A store that opens as it is is opened read-only and left as it is, not a\n"
			    "file written; a replica generation (a directory holding PUBLISHED) is refused: recover\n"
			    "the writer's store. docs/inbox.md, \"Durability\".\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	if (i < argc) {
		cli_error("recover: unexpected argument %s (see --help)", quoted(argv[i]));
		return EXIT_USAGE;
	}
	if (!cli->store) {
		cli_error("no store: give --store DIR or set KINDEX_STORE");
		return EXIT_USAGE;
	}
	char *report = NULL, *err = NULL;
	int r = kx_store_recover(cli->store, &report, &err);
	if (r < 0) {
		cli_error("cannot recover store '%s': %s", cli->store, err ? err : strerror(-r));
		free(err);
		return cli_exit_for(r);
	}
	if (!cli->quiet && report)
		printf("%s\n", report);
	free(report);
	char *vargs[] = { "verify", NULL };
	return cli_cmd_verify(cli, 1, vargs);
}
