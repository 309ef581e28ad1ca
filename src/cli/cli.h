/* SPDX-License-Identifier: MIT */
/*
 * Private to src/cli: what every `kindex` subcommand shares — option parsing of --store, opening
 * the store with a message that says what to do, error printing, progress on a terminal, and the
 * documented exit codes.
 */
#ifndef KX_CLI_H
#define KX_CLI_H

#include "kx/ingest.h"
#include "kx/store.h"
#include "kx/tree.h"

#include <stdio.h>

/* Exit codes (docs/kindex.1): */
enum {
	EXIT_OK = 0,
	EXIT_REFUSED = 1, /* input refused, conflicts, verify found damage */
	EXIT_USAGE = 2,
	EXIT_STORE = 3,   /* no store, store busy (mounted), wrong schema */
	EXIT_IO = 4,      /* other system errors */
};

struct cli {
	const char *store;   /* --store or $KINDEX_STORE */
	bool quiet;
	const char *prog;    /* "kindex" */
	const struct command *cmd; /* the subcommand main.c dispatched to, for its --help */
};

struct command {
	const char *name;
	const char *summary;
	const char *usage; /* after "kindex [--store DIR] <name> " */
	int (*run)(struct cli *cli, int argc, char **argv);
};

void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A user's value for a message, 'quoted' and cut at KX_QUOTE_CHARS characters (kx_quote); the
 * buffer lives until the end of the enclosing block, so several may appear in one call. */
#define quoted(s) kx_quote((char[KX_QUOTE_SIZE]){ 0 }, (s), strlen(s))
/* "s" unless n is 1: "%llu run%s" says "1 run", "2 runs", "0 runs" */
static inline const char *plural(unsigned long long n)
{
	return n == 1 ? "" : "s";
}
/* Handle --help/-h and --store in a subcommand's arguments; returns the index of the first
 * operand, or -1 after printing help (exit 0) / -2 on a usage error (exit 2). */
int cli_options(struct cli *cli, int argc, char **argv, const char *extra_help);
/* A whole-number option that kx_parse_uint refused: "CMD: OPT 'VALUE': not WHAT, a whole number
 * (MIN to MAX)"; returns EXIT_USAGE. */
int cli_bad_number(const char *cmd, const char *opt, const char *value, const char *what, uint64_t min, uint64_t max);
/* Open the store; on failure print why and return the exit code (as a negative number). */
int cli_open(struct cli *cli, unsigned flags, struct kx_store **ret);
/* All of a file's bytes (path NULL or "-": standard input). */
int cli_read_all(const char *path, struct kx_buf *b);
/* Each JSON text in the input (one, or one per line), in order, linted; errors printed with
 * name:line:col, -EINVAL. */
typedef int (*cli_json_fn)(void *ctx, struct kx_json *v, unsigned line);
int cli_each_json(const char *name, const char *bytes, size_t len, cli_json_fn fn, void *ctx);
int cli_exit_for(int err);

/* Progress on a terminal: "\r<what>: n/total, rate/s, ETA". No-op when stderr is not a tty. */
struct progress {
	const char *what;
	uint64_t total;
	double start, last;
	bool tty;
};
void cli_progress_init(struct progress *p, const char *what, uint64_t total, bool quiet);
void cli_progress_update(struct progress *p, uint64_t done);
void cli_progress_done(struct progress *p, uint64_t done);

/*
 * After a command's commits: the sizes of what they touched kept for mounts (kx_tree_keep_sizes),
 * `before` a view taken before the first commit. With progress on a terminal, and where `say`
 * (not for kindex watch's rounds) a line saying what it took, unless --quiet. A failure is said
 * on stderr and otherwise changes nothing: a mount renders what has no size kept.
 */
void cli_keep_sizes(struct cli *cli, struct kx_store *s, struct kx_view *before, bool say);

/*
 * After a command's unsynced commits: the store's log synced, EXIT_OK; or the failure said (the
 * runs are committed, but a power loss may take them) and EXIT_IO. kx_store_close syncs too, but
 * cannot tell anyone it failed.
 */
int cli_sync(struct kx_store *s);

int cli_cmd_init(struct cli *cli, int argc, char **argv);
int cli_cmd_import(struct cli *cli, int argc, char **argv);
int cli_cmd_ingest(struct cli *cli, int argc, char **argv);
int cli_cmd_verify(struct cli *cli, int argc, char **argv);
int cli_cmd_recover(struct cli *cli, int argc, char **argv);
int cli_cmd_export(struct cli *cli, int argc, char **argv);
int cli_cmd_ls(struct cli *cli, int argc, char **argv);
int cli_cmd_cat(struct cli *cli, int argc, char **argv);
int cli_cmd_history(struct cli *cli, int argc, char **argv);
int cli_cmd_regressions(struct cli *cli, int argc, char **argv);
int cli_cmd_compare(struct cli *cli, int argc, char **argv);
int cli_cmd_show(struct cli *cli, int argc, char **argv);
int cli_cmd_canon(struct cli *cli, int argc, char **argv);
int cli_cmd_digest(struct cli *cli, int argc, char **argv);
int cli_cmd_keygen(struct cli *cli, int argc, char **argv);
int cli_cmd_trust(struct cli *cli, int argc, char **argv);
int cli_cmd_sign(struct cli *cli, int argc, char **argv);
int cli_cmd_watch(struct cli *cli, int argc, char **argv);
int cli_cmd_pull(struct cli *cli, int argc, char **argv);

/* Print an ingest refusal: "kindex: refused FILE: N problems" and each problem. */
/* b written to OUT (OUT.tmp, synced, then renamed), or to standard output when OUT is NULL or "-":
 * an exit status, the error printed as cmd's. */
int cli_write_out(const char *cmd, const char *out, const struct kx_buf *b);
/*
 * RUN as `show`, `history` and `attest` take it: a short id or unique hex prefix, a 'sha256:'
 * digest, or a path in the tree to a run directory or one of its files. 0 and *ret a run
 * directory's node; -ENOTUNIQ, -ENOTDIR (a path that is no run's), -ENOENT, or what the store says.
 */
int cli_resolve_run(struct kx_store *s, struct kx_tree *t, struct kx_view *v, const char *arg, struct kx_node *ret);
/* Why RUN could not be resolved (cli_resolve_run's error), for "<cmd>: 'RUN': <why>". */
const char *cli_run_error(int err);
int cli_cmd_attest(struct cli *cli, int argc, char **argv);
int cli_cmd_samples(struct cli *cli, int argc, char **argv);
/* An artifact's `size` bytes (SPEC §9, node n) to fd, a piece at a time, as `kindex cat`, `export`
 * and `samples` give them; *ret_copied how many; *ret_wrote: the failure, if any, was the write's
 * (else the store's read). */
struct kx_tree;
struct kx_view;
struct kx_node;
int cli_copy_artifact(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, uint64_t size, int fd,
		      uint64_t *ret_copied, bool *ret_wrote);
int cli_cmd_gc(struct cli *cli, int argc, char **argv);
void cli_print_problems(const char *file, const struct kx_problems *p);

#endif
