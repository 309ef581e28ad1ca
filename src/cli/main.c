// SPDX-License-Identifier: MIT
/*
 * `kindex`: the command line of kindexfs. This file dispatches to one file per subcommand and
 * holds what they share: option handling, opening the store, messages and progress.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const struct command kx_commands[] = {
	{ "init", "create an empty store", "", cmd_init },
	{ "import", "import published results (liger CSV)", "liger FILE...", cmd_import },
	{ "ingest", "validate and add manifests (files, directories, JSON Lines, - for stdin)", "PATH...", cmd_ingest },
	{ "watch", "ingest a maildir-style spool directory (tmp/ -> new/)", "[--once] [--publish DIR] DIR", cmd_watch },
	{ "pull", "copy the newest published generation into a replica directory", "[--no-verify] SRC DST", cmd_pull },
	{ "verify", "recompute every digest and index entry; check the receipts", "[--receipts DIR]...", cmd_verify },
	{ "recover", "open a store whose write-ahead log is damaged, recording the loss", "", cmd_recover },
	{ "export", "write the tree the mount serves into a directory", "DIR", cmd_export },
	{ "ls", "list a directory of the tree", "[-l] [PATH]", cmd_ls },
	{ "show", "print a run's page (short id, digest or tree path)", "RUN", cmd_show },
	{ "cat", "print files of the tree, as the mount serves them", "PATH...", cmd_cat },
	{ "history", "print a run's series over time, or a group's history.tsv", "RUN|PATH", cmd_history },
	{ "regressions", "print every series' open change point, regressions first", "[--check]", cmd_regressions },
	{ "compare", "print how one implementation fares against another", "CANDIDATE BASELINE [--gpu GPU]",
	  cmd_compare },
	{ "canon", "print the JCS (RFC 8785) form of JSON", "[FILE]", cmd_canon },
	{ "digest", "print the digest of each document of a manifest", "FILE", cmd_digest },
	{ NULL, NULL, NULL, NULL },
};

void cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("kindex: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: kindex [--store DIR] COMMAND [ARGS]\n"
		"\n"
		"An index of GPU kernel benchmark results (KernelIndex kernelindex.dev/v1alpha1).\n"
		"The store is --store DIR or $KINDEX_STORE.\n"
		"\n"
		"commands:\n");
	for (const struct command *c = kx_commands; c->name; c++)
		fprintf(out, "  %-8s %s\n", c->name, c->summary);
	fprintf(out,
		"\n"
		"options:\n"
		"  --store DIR   the store directory\n"
		"  -q, --quiet   no progress or summaries\n"
		"  -h, --help    this help; 'kindex help COMMAND' (or 'kindex COMMAND --help') for a command\n"
		"  -V, --version print the version\n"
		"\n"
		"exit status: 0 ok, 1 input refused or store damaged, 2 usage, 3 store unavailable, 4 i/o error\n"
		"See kindex(1).\n");
}

int cli_exit_for(int err)
{
	switch (err) {
	case 0: return EXIT_OK;
	case -EINVAL: return EXIT_REFUSED;
	case -ENOENT:
	case -ENOTDIR:
	case -EBUSY:
	case -EPROTO:
	case -EROFS: /* a replica's generation: read-only to every command that writes */
	case -EUCLEAN: return EXIT_STORE;
	default: return EXIT_IO;
	}
}

const struct command *cli_command(const char *name)
{
	for (const struct command *c = kx_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

int cli_bad_number(const char *cmd, const char *opt, const char *value, const char *what, uint64_t min, uint64_t max)
{
	cli_error("%s: %s %s: not %s, a whole number (%llu to %llu)", cmd, opt, quoted(value), what,
		  (unsigned long long)min, (unsigned long long)max);
	return EXIT_USAGE;
}

int cli_options(struct cli *cli, int argc, char **argv, const char *extra_help)
{
	const struct command *cmd = cli_command(argv[0]);
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--store") == 0 && i + 1 < argc) {
			cli->store = argv[++i];
		} else if (strncmp(a, "--store=", 8) == 0) {
			cli->store = a + 8;
		} else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			cli->quiet = true;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			printf("usage: kindex [--store DIR] %s %s\n\n%s.\n", cmd->name, cmd->usage, cmd->summary);
			if (extra_help)
				printf("\n%s", extra_help);
			return -1;
		} else if (strcmp(a, "--store") == 0) {
			cli_error("%s: --store needs a directory", cmd->name);
			return -2;
		} else {
			break; /* the subcommand's own flags and operands */
		}
	}
	return i;
}

int cli_open(struct cli *cli, unsigned flags, struct kx_store **ret)
{
	if (!cli->store) {
		cli_error("no store: give --store DIR or set KINDEX_STORE");
		return -EXIT_USAGE;
	}
	char *msg = NULL;
	int r = kx_store_open(cli->store, flags, ret, &msg);
	if (r < 0) {
		if (msg)
			cli_error("%s", msg);
		else
			cli_error("cannot open store %s: %s", quoted(cli->store), strerror(-r));
		free(msg);
		return -cli_exit_for(r);
	}
	return 0;
}

void cli_print_problems(const char *file, const struct kx_problems *p)
{
	cli_error("refused %s: %zu problem%s", file, p->len, plural(p->len));
	struct kx_buf b = { 0 };
	kx_problems_format(p, file, &b);
	/* indent each line under the refusal */
	const char *s = b.ptr ? b.ptr : "";
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		fprintf(stderr, "  %.*s\n", (int)n, s);
		s += n + (nl ? 1 : 0);
	}
	kx_buf_release(&b);
}

void progress_init(struct progress *p, const char *what, uint64_t total, bool quiet)
{
	p->what = what;
	p->total = total;
	p->start = p->last = kx_monotonic();
	p->tty = !quiet && isatty(STDERR_FILENO);
}

static void progress_print(struct progress *p, uint64_t done, bool final)
{
	double now = kx_monotonic(), el = now - p->start;
	double rate = el > 0 ? (double)done / el : 0;
	if (p->total && !final) {
		double eta = rate > 0 ? (double)(p->total - done) / rate : 0;
		fprintf(stderr, "\r\033[K%s: %llu/%llu, %.0f/s, ETA %.0fs", p->what, (unsigned long long)done,
			(unsigned long long)p->total, rate, eta);
	} else {
		fprintf(stderr, "\r\033[K%s: %llu, %.0f/s%s", p->what, (unsigned long long)done, rate, final ? "\n" : "");
	}
	fflush(stderr);
}

void progress_update(struct progress *p, uint64_t done)
{
	if (!p->tty)
		return;
	double now = kx_monotonic();
	if (now - p->last < 0.2)
		return;
	p->last = now;
	progress_print(p, done, false);
}

void progress_done(struct progress *p, uint64_t done)
{
	if (p->tty && kx_monotonic() - p->start > 0.5)
		progress_print(p, done, true);
	else if (p->tty)
		fprintf(stderr, "\r\033[K");
}

/* Optimal string alignment distance (Levenshtein plus adjacent transpositions) of two short
 * words; longer ones than a command name are cut at 31 bytes, which only makes them further. */
static size_t edit_distance(const char *a, const char *b)
{
	enum { N = 32 };
	size_t la = strnlen(a, N - 1), lb = strnlen(b, N - 1);
	size_t d[N][N];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

/* "unknown command 'X'", with the nearest command when a typo or two away from it: at most 2
 * edits, and fewer than the command has letters, so "sl" suggests ls but "x" nothing. */
static int unknown_command(const char *name)
{
	const struct command *near = NULL;
	size_t best = SIZE_MAX;
	for (const struct command *c = kx_commands; c->name; c++) {
		size_t d = edit_distance(name, c->name);
		if (d < best) {
			best = d;
			near = c;
		}
	}
	if (near && best <= 2 && best < strlen(near->name))
		cli_error("unknown command %s; did you mean '%s'? (see kindex --help)", quoted(name), near->name);
	else
		cli_error("unknown command %s (see kindex --help)", quoted(name));
	return EXIT_USAGE;
}

/* `kindex help [COMMAND]`: kindex's usage, or what `kindex COMMAND --help` prints. */
static int help(struct cli *cli, int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	const struct command *cmd = cli_command(argv[1]);
	if (!cmd)
		return unknown_command(argv[1]);
	char *args[] = { (char *)cmd->name, "--help", NULL };
	return cmd->run(cli, 2, args);
}

int main(int argc, char **argv)
{
	struct cli cli = { .store = getenv("KINDEX_STORE"), .prog = "kindex" };
	static const struct option opts[] = {
		{ "store", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+hqV", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			cli.store = optarg;
			break;
		case 'q':
			cli.quiet = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("kindex %s\n", KX_VERSION);
			return EXIT_OK;
		default:
			cli_error("unknown option %s (see kindex --help)", quoted(argv[optind - 1]));
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[optind];
	if (strcmp(name, "help") == 0)
		return help(&cli, argc - optind, argv + optind);
	const struct command *cmd = cli_command(name);
	if (!cmd)
		return unknown_command(name);
	return cmd->run(&cli, argc - optind, argv + optind);
}
