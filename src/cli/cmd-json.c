// SPDX-License-Identifier: MIT
/*
 * `kindex canon` and `kindex digest`: the canonical form and the digests of JSON the user holds,
 * without a store — to see why a manifest is refused with a digest mismatch, or to compute the
 * digests to put in a run before submitting it.
 */
#include "cli.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static int print_canon(void *ctx, struct kx_json *v, unsigned line)
{
	struct kx_buf b = { 0 };
	int r = kx_jcs_write(v, &b);
	if (r == 0) {
		fwrite(b.ptr, 1, b.len, stdout);
		putchar('\n');
	}
	kx_buf_release(&b);
	return r;
}

int cli_cmd_canon(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "Prints the JSON Canonicalization Scheme (RFC 8785) form of each JSON text in FILE (or\n"
			    "stdin), one per line. Digests are SHA-256 of these bytes (for documents: of\n"
			    "{apiVersion, kind, spec} only). Duplicate keys and non-finite numbers are errors.\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	if (argc - i > 1) {
		cli_error("canon: give at most one FILE");
		return EXIT_USAGE;
	}
	const char *path = i < argc ? argv[i] : NULL;
	struct kx_buf b = { 0 };
	int r = cli_read_all(path, &b);
	if (r < 0) {
		cli_error("canon: cannot read %s: %s", path ? quoted(path) : "(stdin)", strerror(-r));
		return EXIT_IO;
	}
	r = cli_each_json(path ? path : "(stdin)", b.ptr ? b.ptr : "", b.len, print_canon, NULL);
	kx_buf_release(&b);
	return r < 0 ? EXIT_REFUSED : EXIT_OK;
}

static int print_digests(void *ctx, struct kx_json *v, unsigned line)
{
	const char *name = ctx;
	char s[KX_DIGEST_STR_MAX];
	struct kx_digest d;
	if (v->type != KX_JSON_OBJECT) {
		cli_error("%s:%u: a manifest or document must be a JSON object", name, line);
		return -EINVAL;
	}
	const char *kind = kx_json_get_string(v, "kind");
	if (kind) { /* a single document */
		int k = kx_doc_from_kind(kind);
		if (kx_digest_document(v, &d) < 0)
			return -EINVAL;
		kx_digest_format(&d, s);
		printf("%s %s\n", k >= 0 ? kx_doc_member((enum kx_doc)k) : kind, s);
		return 0;
	}
	int found = 0;
	for (int k = 0; k < KX_DOC__COUNT; k++) {
		struct kx_json *doc = kx_json_get(v, kx_doc_member((enum kx_doc)k));
		if (!doc)
			continue;
		if (doc->type != KX_JSON_OBJECT || kx_digest_document(doc, &d) < 0) {
			cli_error("%s:%u: /%s: not a document object", name, line, kx_doc_member((enum kx_doc)k));
			return -EINVAL;
		}
		kx_digest_format(&d, s);
		printf("%s %s\n", kx_doc_member((enum kx_doc)k), s);
		found++;
	}
	if (!found) {
		cli_error("%s:%u: neither a manifest (run, protocol, environment …) nor a document (kind)", name, line);
		return -EINVAL;
	}
	return 0;
}

int cli_cmd_digest(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "Prints '<member> sha256:<hex>' for each document of the manifest(s) in FILE (one\n"
			    "manifest, JSON Lines of many, or a single document), computed as SPEC §1 says:\n"
			    "SHA-256 of the JCS form of {apiVersion, kind, spec}.\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	if (argc - i != 1) {
		cli_error("digest: give one FILE (- for stdin)");
		return EXIT_USAGE;
	}
	struct kx_buf b = { 0 };
	int r = cli_read_all(argv[i], &b);
	if (r < 0) {
		cli_error("digest: cannot read %s: %s", quoted(argv[i]), strerror(-r));
		return EXIT_IO;
	}
	r = cli_each_json(argv[i], b.ptr ? b.ptr : "", b.len, print_digests, argv[i]);
	kx_buf_release(&b);
	return r < 0 ? EXIT_REFUSED : EXIT_OK;
}
