// SPDX-License-Identifier: MIT
/*
 * `kindex`: the command line of kindexfs. This file is the top of src/cli: the table of
 * subcommands, the global options, `kindex help` and the dispatch to one file per subcommand
 * (cmd-*.c), which share util.c and progress.c below them.
 */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct command commands[] = {
	{ "init", "create an empty store", "", cli_cmd_init },
	{ "import", "import published results (liger CSV)", "liger FILE...", cli_cmd_import },
	{ "ingest", "validate and add manifests (files, directories, JSON Lines, - for stdin)", "PATH...",
	  cli_cmd_ingest },
	{ "watch", "ingest a maildir-style spool directory (tmp/ -> new/)", "[--once] [--publish DIR] DIR",
	  cli_cmd_watch },
	{ "pull", "copy the newest published generation into a replica directory", "[--no-verify] SRC DST",
	  cli_cmd_pull },
	{ "verify", "recompute every digest and index entry; check the receipts", "[--receipts DIR]...",
	  cli_cmd_verify },
	{ "recover", "open a store whose write-ahead log is damaged, recording the loss", "", cli_cmd_recover },
	{ "export", "write the tree the mount serves into a directory", "DIR", cli_cmd_export },
	{ "ls", "list a directory of the tree", "[-l] [PATH]", cli_cmd_ls },
	{ "show", "print a run's page (short id, digest or tree path)", "RUN", cli_cmd_show },
	{ "cat", "print files of the tree, as the mount serves them", "PATH...", cli_cmd_cat },
	{ "history", "print a run's series over time, or a group's history.tsv", "RUN|PATH", cli_cmd_history },
	{ "regressions", "print every series' open change point, regressions first", "[--check]", cli_cmd_regressions },
	{ "compare", "print how one implementation fares against another", "CANDIDATE BASELINE [--gpu GPU]",
	  cli_cmd_compare },
	{ "canon", "print the JCS (RFC 8785) form of JSON", "[FILE]", cli_cmd_canon },
	{ "digest", "print the digest of each document of a manifest", "FILE", cli_cmd_digest },
	{ "keygen", "make an Ed25519 key pair for signing runs (NAME.key, NAME.pub)", "NAME", cli_cmd_keygen },
	{ "sign", "sign the runs of manifests with an Ed25519 key (JSON Lines out)", "--key KEY [-o OUT] FILE...",
	  cli_cmd_sign },
	{ "attest", "attest a run: a note about it, or a run that reproduces it", "RUN --note TEXT | --reproduces RUN2",
	  cli_cmd_attest },
	{ "samples", "print a run's raw samples (its samples.tsv artifact)", "RUN [--name NAME]", cli_cmd_samples },
	{ "gc", "remove artifacts' bytes no run announces, past their grace period", "[--dry-run] [--grace TIME]",
	  cli_cmd_gc },
	{ "trust", "the keys whose signatures make runs measured", "add PUBKEY --name NAME | list | revoke KEYID",
	  cli_cmd_trust },
	{ NULL, NULL, NULL, NULL },
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: kindex [--store DIR] COMMAND [ARGS]\n"
		"\n"
		"An index of GPU kernel benchmark results (KernelIndex kernelindex.dev/v1alpha1).\n"
		"The store is --store DIR or $KINDEX_STORE.\n"
		"\n"
		"commands:\n");
	for (const struct command *c = commands; c->name; c++)
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

static const struct command *find_command(const char *name)
{
	for (const struct command *c = commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
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
	for (const struct command *c = commands; c->name; c++) {
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
	const struct command *cmd = find_command(argv[1]);
	if (!cmd)
		return unknown_command(argv[1]);
	char *args[] = { (char *)cmd->name, "--help", NULL };
	cli->cmd = cmd;
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
	const struct command *cmd = find_command(name);
	if (!cmd)
		return unknown_command(name);
	cli.cmd = cmd;
	return cmd->run(&cli, argc - optind, argv + optind);
}
