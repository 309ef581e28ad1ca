// SPDX-License-Identifier: MIT
/*
 * What every `kindex` subcommand shares, below the subcommands and the dispatch in main.c:
 * messages on stderr, the exit code for an errno, the --store/--quiet/--help options, and
 * opening the store with a message that says what to do.
 */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("kindex: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
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

int cli_bad_number(const char *cmd, const char *opt, const char *value, const char *what, uint64_t min, uint64_t max)
{
	cli_error("%s: %s %s: not %s, a whole number (%llu to %llu)", cmd, opt, quoted(value), what,
		  (unsigned long long)min, (unsigned long long)max);
	return EXIT_USAGE;
}

int cli_options(struct cli *cli, int argc, char **argv, const char *extra_help)
{
	const struct command *cmd = cli->cmd;
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

struct sizes_progress {
	struct progress pg;
	bool quiet, begun;
};

static void sizes_progress(void *ctx, size_t done, size_t total)
{
	struct sizes_progress *p = ctx;
	if (!p->begun) {
		cli_progress_init(&p->pg, "sizes", total, p->quiet);
		p->begun = true;
	}
	cli_progress_update(&p->pg, done);
}

void cli_keep_sizes(struct cli *cli, struct kx_store *s, struct kx_view *before, bool say)
{
	struct kx_tree *t = kx_tree_new(s, 0);
	struct kx_view *after = kx_store_view(s);
	struct sizes_progress p = { .quiet = cli->quiet };
	size_t runs = 0;
	double start = kx_monotonic();
	int r = t && after ? kx_tree_keep_sizes(t, before, after, sizes_progress, &p, &runs) : -ENOMEM;
	if (p.begun)
		cli_progress_done(&p.pg, p.pg.total);
	if (r < 0)
		cli_error("cannot keep the sizes of the new files for mounts (they will be rendered when asked): %s",
			  strerror(-r));
	else if (say && !cli->quiet)
		fprintf(stderr, "kept for mounts the sizes of the files of %zu run%s and their groups in %.2f s\n",
			runs, plural(runs), kx_monotonic() - start);
	kx_view_release(after);
	kx_tree_free(t);
}

int cli_sync(struct kx_store *s)
{
	int r = kx_store_sync(s);
	if (r < 0)
		cli_error("cannot sync the store's log: %s (what was committed is in the store, but a power loss "
			  "may take it; run the command again once the disk is sound)", strerror(-r));
	return r < 0 ? EXIT_IO : EXIT_OK;
}

int cli_write_out(const char *cmd, const char *out, const struct kx_buf *b)
{
	const char *p = b->ptr ? b->ptr : "";
	if (!out || strcmp(out, "-") == 0) {
		if (fwrite(p, 1, b->len, stdout) != b->len || fflush(stdout) != 0) {
			cli_error("%s: cannot write to standard output: %s", cmd, strerror(errno));
			return EXIT_IO;
		}
		return EXIT_OK;
	}
	char *tmp = NULL;
	FILE *f = asprintf(&tmp, "%s.tmp", out) < 0 ? NULL : fopen(tmp, "w");
	bool ok = f && fwrite(p, 1, b->len, f) == b->len && fflush(f) == 0 && fsync(fileno(f)) == 0;
	if (f && fclose(f) != 0)
		ok = false;
	int status = EXIT_OK;
	if (!ok || rename(tmp, out) < 0) {
		cli_error("%s: cannot write %s: %s", cmd, quoted(out), strerror(errno));
		if (tmp)
			unlink(tmp);
		status = EXIT_IO;
	}
	free(tmp);
	return status;
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

int cli_read_all(const char *path, struct kx_buf *b)
{
	if (path && strcmp(path, "-") != 0)
		return kx_read_file(path, 0, b);
	char chunk[65536];
	ssize_t n;
	while ((n = read(STDIN_FILENO, chunk, sizeof(chunk))) > 0)
		if (kx_buf_append(b, chunk, (size_t)n) < 0)
			return -ENOMEM;
	return n < 0 ? -errno : 0;
}

int cli_each_json(const char *name, const char *bytes, size_t len, cli_json_fn fn, void *ctx)
{
	struct kx_arena *a = kx_arena_new();
	size_t pos = 0;
	unsigned line = 1;
	int r = 0;
	while (pos < len && r == 0) {
		struct kx_json *v = NULL;
		struct kx_json_error e;
		size_t end = 0;
		r = kx_json_parse(a, bytes + pos, len - pos, 0, &v, &end, &e);
		if (r < 0) {
			cli_error("%s:%u:%u: %s: %s", name, e.line + line - 1, e.col, e.rule, e.message);
			r = -EINVAL;
			break;
		}
		struct kx_problems p;
		kx_problems_init(&p);
		if (kx_json_lint(v, "", &p) > 0) {
			for (size_t i = 0; i < p.len; i++)
				cli_error("%s:%u:%u: %s: %s: %s", name, p.v[i].line + line - 1, p.v[i].col, p.v[i].pointer,
					  p.v[i].rule, p.v[i].message);
			kx_problems_release(&p);
			r = -EINVAL;
			break;
		}
		kx_problems_release(&p);
		r = fn(ctx, v, v->line + line - 1);
		for (size_t i = pos; i < pos + end; i++)
			line += bytes[i] == '\n';
		pos += end;
	}
	kx_arena_free(a);
	return r;
}
