// SPDX-License-Identifier: MIT
/*
 * kindex attest: an attestation of a stored run (SPEC §8) — a note about it, or another stored run
 * that reproduces it — written as the document the user never has to write by hand, then stored
 * through the one ingest pipeline (so it is checked exactly as a dropped file is), or printed for
 * the inbox of a mounted store with -o.
 */
#include "cli.h"

#include "kx/ingest.h"
#include "kx/tree.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char attest_help[] =
	"Attests a stored run (SPEC section 8): a note about it, or another stored run that reproduces it.\n"
	"Attestations never change a run's evidence; its summary.txt and attestations/ show them.\n"
	"RUN and RUN2 are short ids (or unique prefixes of at least 4 hex digits), 'sha256:' digests or\n"
	"paths in the tree.\n"
	"  --note TEXT        a note (at most 4096 bytes; line feeds and tabs allowed)\n"
	"  --reproduces RUN2  RUN2, a run of the same benchmark and metric, reproduces RUN\n"
	"  --text TEXT        a reproduction's optional text\n"
	"  --author NAME      who attests (default: the login name)\n"
	"  --at TIME          its createdAt, RFC 3339 (default: now)\n"
	"  -o FILE            write the attestation to FILE ('-': standard output) instead of storing it:\n"
	"                     drop it into a mounted store's inbox, or 'kindex ingest' it later\n";

struct attest_args {
	const char *run, *note, *reproduces, *text, *author, *at, *out;
};

static int parse_args(struct cli *cli, int argc, char **argv, struct attest_args *a)
{
	int i = cli_options(cli, argc, argv, attest_help);
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	static const char *const opts[] = { "--note", "--reproduces", "--text", "--author", "--at", "-o" };
	const char **slots[] = { &a->note, &a->reproduces, &a->text, &a->author, &a->at, &a->out };
	for (; i < argc; i++) {
		size_t k = 0;
		while (k < KX_ARRAY_SIZE(opts) && strcmp(argv[i], opts[k]) != 0)
			k++;
		if (k < KX_ARRAY_SIZE(opts)) {
			if (i + 1 == argc) {
				cli_error("attest: %s needs a value", opts[k]);
				return EXIT_USAGE;
			}
			*slots[k] = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("attest: unknown option %s ('kindex attest --help')", quoted(argv[i]));
			return EXIT_USAGE;
		} else if (a->run) {
			cli_error("attest: give one RUN (%s and %s)", quoted(a->run), quoted(argv[i]));
			return EXIT_USAGE;
		} else {
			a->run = argv[i];
		}
	}
	if (!a->run || !a->note == !a->reproduces) {
		cli_error("attest: give a RUN and one of --note TEXT or --reproduces RUN2");
		return EXIT_USAGE;
	}
	if (a->note && a->text) {
		cli_error("attest: --text goes with --reproduces; a note's text is --note's");
		return EXIT_USAGE;
	}
	return -1;
}

/* A run argument's digest, the error printed. */
static int run_digest(struct kx_store *s, struct kx_tree *t, struct kx_view *v, const char *arg,
		      struct kx_digest *ret)
{
	struct kx_node n;
	int r = cli_resolve_run(s, t, v, arg, &n);
	if (r < 0) {
		cli_error("attest: %s: %s", quoted(arg), cli_run_error(r));
		return r == -EIO ? EXIT_IO : EXIT_REFUSED;
	}
	*ret = n.id;
	return EXIT_OK;
}

/* The document, pretty-printed into out (validated at ingest like any dropped file). */
static int build(const struct attest_args *a, const struct kx_digest *subject, const struct kx_digest *by,
		 struct kx_buf *out)
{
	struct kx_arena *ar = kx_arena_new();
	if (!ar)
		return -ENOMEM;
	char when[40], sd[KX_DIGEST_STR_MAX], bd[KX_DIGEST_STR_MAX];
	kx_time_format(kx_now_ns(), when);
	kx_digest_format(subject, sd);
	const char *author = a->author;
	const struct passwd *pw = author ? NULL : getpwuid(getuid());
	if (!author)
		author = getenv("USER") && *getenv("USER") ? getenv("USER") : pw ? pw->pw_name : "unknown";
	struct kx_json *doc = kx_json_new(ar, KX_JSON_OBJECT), *spec = kx_json_new(ar, KX_JSON_OBJECT);
	int r = doc && spec ? 0 : -ENOMEM;
	if (r == 0)
		r = kx_json_set_string(ar, doc, "apiVersion", KX_ATTESTATION_API);
	if (r == 0)
		r = kx_json_set_string(ar, doc, "kind", KX_ATTESTATION_KIND);
	if (r == 0)
		r = kx_json_set(ar, doc, "spec", spec);
	if (r == 0)
		r = kx_json_set_string(ar, spec, "subject", sd);
	if (r == 0)
		r = kx_json_set_string(ar, spec, "type", a->note ? "note" : "reproduction");
	if (r == 0 && a->reproduces) {
		kx_digest_format(by, bd);
		r = kx_json_set_string(ar, spec, "run", bd);
	}
	if (r == 0 && (a->note || a->text))
		r = kx_json_set_string(ar, spec, "text", a->note ? a->note : a->text);
	if (r == 0)
		r = kx_json_set_string(ar, spec, "author", author);
	if (r == 0)
		r = kx_json_set_string(ar, spec, "createdAt", a->at ? a->at : when);
	if (r == 0 && (r = kx_json_write_pretty(doc, out)) >= 0)
		r = kx_buf_putc(out, '\n');
	kx_arena_free(ar);
	return r < 0 ? r : 0;
}

int cli_cmd_attest(struct cli *cli, int argc, char **argv)
{
	struct attest_args a = { 0 };
	int status = parse_args(cli, argc, argv, &a);
	if (status >= 0)
		return status;
	struct kx_store *s;
	int r = cli_open(cli, a.out ? KX_STORE_READONLY : 0, &s);
	if (r < 0)
		return -r;
	struct kx_tree *t = kx_tree_new(s, 0);
	struct kx_view *v = kx_store_view(s);
	struct kx_digest subject, by = { 0 };
	struct kx_buf doc = { 0 };
	status = !t || !v ? EXIT_IO : run_digest(s, t, v, a.run, &subject);
	if (status == EXIT_OK && a.reproduces)
		status = run_digest(s, t, v, a.reproduces, &by);
	if (status == EXIT_OK && (r = build(&a, &subject, &by, &doc)) < 0) {
		cli_error("attest: cannot make the attestation: %s", strerror(-r));
		status = EXIT_IO;
	}
	kx_view_release(v);
	kx_tree_free(t);
	if (status == EXIT_OK && a.out) {
		status = cli_write_out("attest", a.out, &doc);
	} else if (status == EXIT_OK) {
		struct kx_problems p;
		kx_problems_init(&p);
		struct kx_ingest_result res = { 0 };
		struct kx_ingest_opts o = { .sync = true };
		r = kx_ingest_bytes(s, doc.ptr, doc.len, &o, &res, &p);
		if (r == -EINVAL) {
			cli_print_problems("the attestation", &p);
			status = EXIT_REFUSED;
		} else if (r < 0) {
			cli_error("attest: cannot store the attestation: %s", strerror(-r));
			status = EXIT_IO;
		} else if (!cli->quiet) {
			char d[KX_DIGEST_STR_MAX], hex[KX_DIGEST_HEX + 1];
			kx_digest_format(&res.items[0].run, d);
			kx_digest_hex(&subject, hex);
			fprintf(stderr, "%s attestation %s of runs/%.12s (its attestations/ lists it)\n",
				res.attestations_added ? "stored" : "already stored:", d, hex);
		}
		kx_ingest_result_release(&res);
		kx_problems_release(&p);
	}
	kx_buf_release(&doc);
	kx_store_close(s);
	return status;
}
