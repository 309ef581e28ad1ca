// SPDX-License-Identifier: MIT
/*
 * `kindex keygen`: an Ed25519 key pair for signing runs (SPEC §10, docs/signatures.md). The
 * private key signs what kindex-bench emits (`kindex-bench --key NAME.key`); the public key is
 * what a store is told to trust.
 */
#include "cli.h"

#include "kx/spool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_cmd_keygen(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "Makes an Ed25519 key pair for signing runs: NAME.key, the private key (PKCS #8 PEM,\n"
			    "mode 0600: kindex-bench --key NAME.key signs every run it emits with it), and\n"
			    "NAME.pub, the public key (PEM) that a store trusts with 'kindex trust add NAME.pub'.\n"
			    "NAME may hold a directory (keys/lab-a). Neither file may exist. Prints the key id:\n"
			    "sha256: of the public key's 32 raw bytes.\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	if (argc - i != 1 || !argv[i][0]) {
		cli_error("keygen: give one NAME (the key files are NAME.key and NAME.pub)");
		return EXIT_USAGE;
	}
	size_t len = strlen(argv[i]);
	char *priv = malloc(len + 5), *pub = malloc(len + 5), err[512] = "";
	if (!priv || !pub) {
		free(priv);
		free(pub);
		cli_error("keygen: out of memory");
		return EXIT_IO;
	}
	snprintf(priv, len + 5, "%s.key", argv[i]);
	snprintf(pub, len + 5, "%s.pub", argv[i]);
	struct kx_digest id;
	int r = kx_key_generate(priv, pub, &id, err, sizeof(err));
	if (r < 0)
		cli_error("keygen: %s", err);
	else if (!cli->quiet) {
		char s[KX_DIGEST_STR_MAX];
		kx_digest_format(&id, s);
		printf("%s\tprivate key (mode 0600): sign with kindex-bench --key %s\n", priv, priv);
		printf("%s\tpublic key: trust it with kindex trust add %s --name NAME\n", pub, pub);
		printf("key id %s\n", s);
	}
	free(priv);
	free(pub);
	return r == 0 ? EXIT_OK : r == -EINVAL || r == -EEXIST ? EXIT_REFUSED : EXIT_IO;
}

/* ---- kindex trust ------------------------------------------------------------------------------ */

static int print_key(void *ctx, const struct kx_key_rec *k)
{
	char id[KX_DIGEST_STR_MAX], added[40], revoked[40] = "";
	kx_digest_format(&k->id, id);
	kx_time_format(k->added_ns, added);
	if (k->revoked_ns)
		kx_time_format(k->revoked_ns, revoked);
	printf("%s\t%s\t%s\t%s\t%s\n", id, k->name, k->revoked_ns ? "revoked" : "trusted", added, revoked);
	return 0;
}

/*
 * A request for a mounted store: dropped into STORE/trust/ (tmp/, then new/), where its daemon
 * applies it (kx_trust_apply, as below) and files the receipt; waited for, up to 30 s.
 */
static int trust_by_daemon(struct cli *cli, const struct kx_buf *req, struct kx_buf *answer, bool *ret_accepted)
{
	char *dir = NULL, *tmp = NULL, *dst = NULL, *ok = NULL, *bad = NULL, name[96];
	snprintf(name, sizeof(name), "trust-%d-%lld.json", (int)getpid(), (long long)kx_now_ns());
	int r = asprintf(&dir, "%s/trust", cli->store) < 0 || asprintf(&tmp, "%s/tmp/%s", dir, name) < 0 ||
			asprintf(&dst, "%s/new/%s", dir, name) < 0 || asprintf(&ok, "%s/accepted/%s.receipt", dir, name) < 0 ||
			asprintf(&bad, "%s/rejected/%s.error", dir, name) < 0
		? -ENOMEM
		: 0;
	struct stat st;
	if (r == 0 && stat(dir, &st) < 0)
		r = -errno; /* the daemon makes it when it mounts the store */
	if (r == 0) {
		FILE *f = fopen(tmp, "wx");
		if (!f || fwrite(req->ptr, 1, req->len, f) != req->len || fflush(f) != 0 || fsync(fileno(f)) != 0)
			r = -errno ? -errno : -EIO;
		if (f && fclose(f) != 0 && r == 0)
			r = -errno;
		if (r == 0 && rename(tmp, dst) < 0)
			r = -errno;
		if (r < 0)
			unlink(tmp);
	}
	r = r == 0 ? -ETIMEDOUT : r;
	for (int i = 0; i < 600 && r == -ETIMEDOUT; i++) { /* 30 s, every 50 ms */
		if (kx_read_file(ok, 1 << 16, answer) == 0) {
			*ret_accepted = true;
			r = 0;
		} else if (kx_read_file(bad, 1 << 16, answer) == 0) {
			*ret_accepted = false;
			r = 0;
		} else {
			usleep(50000);
		}
	}
	if (r == -ETIMEDOUT)
		unlink(dst); /* not taken: nothing changed, and nothing is left to change it later */
	free(dir), free(tmp), free(dst), free(ok), free(bad);
	return r;
}

int cli_cmd_trust(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "  add PUBKEY --name NAME   trust the Ed25519 public key in PUBKEY (PEM, from\n"
			    "                           'kindex keygen NAME'): runs signed by it that claim\n"
			    "                           kindex-bench's protocol and correctness check are shown\n"
			    "                           as measured\n"
			    "  list                     every key the store knows: id, name, trusted or revoked,\n"
			    "                           when added, when revoked (TSV)\n"
			    "  revoke KEYID             stop trusting a key (its id, sha256:..., or its name);\n"
			    "                           recorded, never deleted: a revoked key is not trusted again\n"
			    "\n"
			    "The runs the key signed show the change at once (their directories' times move on);\n"
			    "the runs themselves never change. On a mounted store, its daemon applies the change\n"
			    "(through STORE/trust/) before this returns (docs/signatures.md).\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	const char *sub = i < argc ? argv[i++] : NULL;
	if (!sub || (strcmp(sub, "add") != 0 && strcmp(sub, "list") != 0 && strcmp(sub, "revoke") != 0)) {
		cli_error("trust: give add PUBKEY --name NAME, list, or revoke KEYID%s%s", sub ? ", not " : "",
			  sub ? quoted(sub) : "");
		return EXIT_USAGE;
	}
	const char *arg = NULL, *name = NULL;
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--name") == 0 && i + 1 < argc)
			name = argv[++i];
		else if (strncmp(argv[i], "--name=", 7) == 0)
			name = argv[i] + 7;
		else if (!arg && argv[i][0] != '-')
			arg = argv[i];
		else {
			cli_error("trust %s: unexpected argument %s", sub, quoted(argv[i]));
			return EXIT_USAGE;
		}
	}
	bool add = strcmp(sub, "add") == 0, list = strcmp(sub, "list") == 0;
	if ((add && (!arg || !name)) || (!add && !list && !arg) || (list && arg) || (!add && name)) {
		cli_error(add ? "trust add: give PUBKEY and --name NAME" : list ? "trust list: no arguments"
								     : "trust revoke: give one KEYID");
		return EXIT_USAGE;
	}
	if (add && !kx_key_name_valid(name)) {
		cli_error("trust add: --name %s: 1 to %d bytes of printable text", quoted(name), KX_KEY_NAME_MAX - 1);
		return EXIT_USAGE;
	}
	uint8_t pub[KX_ED25519_PUB_LEN];
	char err[512];
	if (add && kx_pubkey_read(arg, pub, err, sizeof(err)) < 0) {
		cli_error("trust add: %s", err);
		return EXIT_REFUSED;
	}
	struct kx_store *s;
	int r;
	if (list) {
		if ((r = cli_open(cli, KX_STORE_READONLY, &s)) < 0)
			return -r;
		printf("key_id\tname\tstate\tadded\trevoked\n");
		int status = EXIT_OK;
		if ((r = kx_store_each_key(s, NULL, print_key, NULL)) < 0) {
			cli_error("trust list: cannot read the keys: %s", strerror(-r));
			status = EXIT_IO;
		}
		kx_store_close(s);
		return status;
	}
	struct kx_buf req = { 0 }, answer = { 0 };
	struct kx_problems p;
	kx_problems_init(&p);
	bool accepted = false, mounted = false;
	if ((r = kx_trust_request(add ? pub : NULL, name, arg, &req)) < 0) {
		cli_error("trust %s: out of memory", sub);
		return EXIT_IO;
	}
	char *msg = NULL;
	if (!cli->store) {
		cli_error("no store: give --store DIR or set KINDEX_STORE");
		kx_buf_release(&req);
		return EXIT_USAGE;
	}
	r = kx_store_open(cli->store, 0, &s, &msg);
	if (r == -EBUSY) { /* mounted: its daemon is the one writer */
		mounted = true;
		r = trust_by_daemon(cli, &req, &answer, &accepted);
		if (r < 0)
			cli_error("trust %s: the store is mounted, and its daemon did not take the request in %s/trust: %s",
				  sub, quoted(cli->store), r == -ETIMEDOUT ? "no answer in 30 s" : strerror(-r));
	} else if (r < 0) {
		cli_error("%s", msg ? msg : strerror(-r));
	} else {
		uint64_t gen;
		r = kx_trust_apply(NULL, s, req.ptr, req.len, &answer, &p, &gen);
		accepted = r == 0;
		if (r == -EINVAL) {
			kx_problems_format(&p, "trust", &answer);
			r = 0;
		}
		kx_store_close(s);
		if (r < 0)
			cli_error("trust %s: cannot write to the store: %s", sub, strerror(-r));
	}
	free(msg);
	int status = r < 0 ? (mounted ? EXIT_IO : cli_exit_for(r)) : accepted ? EXIT_OK : EXIT_REFUSED;
	if (r == 0 && accepted && !cli->quiet)
		fwrite(answer.ptr, 1, answer.len, stdout);
	else if (r == 0 && !accepted)
		cli_error("trust %s refused: %.*s", sub, (int)answer.len - (answer.len && answer.ptr[answer.len - 1] == '\n'),
			  answer.ptr ? answer.ptr : "");
	kx_buf_release(&req);
	kx_buf_release(&answer);
	kx_problems_release(&p);
	return status;
}

/* ---- kindex sign ------------------------------------------------------------------------------- */

struct signing {
	const struct kx_signer *key;
	struct kx_buf *out;
	const char *name;
	size_t n;
};

static int sign_one(void *ctx, struct kx_json *v, unsigned line)
{
	struct signing *s = ctx;
	struct kx_arena *a = kx_arena_new();
	int r = a ? kx_manifest_sign(a, v, s->key) : -ENOMEM;
	if (r == -EINVAL)
		cli_error("sign: %s:%u: not a manifest: it needs a run document (and 'signatures', if any, an array)",
			  s->name, line);
	if (r == 0)
		r = kx_jcs_write(v, s->out);
	if (r == 0)
		r = kx_buf_putc(s->out, '\n') < 0 ? -ENOMEM : 0;
	s->n += r == 0;
	kx_arena_free(a);
	return r;
}

int cli_cmd_sign(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "Signs the run of each manifest in FILE... (one manifest, or JSON Lines of many; - for\n"
			    "stdin) with the Ed25519 private key in KEY (from 'kindex keygen', mode 0600): its\n"
			    "signature of the run digest is added to the manifest's signatures array (one by the\n"
			    "same key is replaced); no document changes. Writes JSON Lines to standard output, or\n"
			    "atomically to -o OUT. For results a harness other than kindex-bench produced: a store\n"
			    "shows them as measured only if they claim kindex-bench's protocol and correctness check\n"
			    "and it trusts KEY (docs/signatures.md).\n"
			    "\n"
			    "  --key KEY    the private key\n"
			    "  -o OUT       write here (OUT.tmp, then renamed) instead of standard output\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	const char *key = NULL, *out = NULL;
	char **files = calloc((size_t)argc, sizeof(*files));
	size_t nfiles = 0;
	if (!files) {
		cli_error("sign: out of memory");
		return EXIT_IO;
	}
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--key") == 0 && i + 1 < argc)
			key = argv[++i];
		else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "-") == 0 || argv[i][0] != '-')
			files[nfiles++] = argv[i];
		else {
			cli_error("sign: unexpected argument %s", quoted(argv[i]));
			free(files);
			return EXIT_USAGE;
		}
	}
	if (!key || !nfiles) {
		cli_error("sign: give --key KEY and one FILE or more");
		free(files);
		return EXIT_USAGE;
	}
	char err[512];
	struct kx_signer *signer = NULL;
	if (kx_signer_open(key, &signer, err, sizeof(err)) < 0) {
		cli_error("sign: %s", err);
		free(files);
		return EXIT_REFUSED;
	}
	struct kx_buf text = { 0 }, b = { 0 };
	struct signing s = { .key = signer, .out = &text };
	int status = EXIT_OK;
	for (size_t k = 0; k < nfiles && status == EXIT_OK; k++) {
		kx_buf_reset(&b);
		int r = cli_read_all(files[k], &b);
		s.name = strcmp(files[k], "-") == 0 ? "(stdin)" : files[k];
		if (r < 0) {
			cli_error("sign: cannot read %s: %s", quoted(s.name), strerror(-r));
			status = EXIT_IO;
		} else if ((r = cli_each_json(s.name, b.ptr ? b.ptr : "", b.len, sign_one, &s)) < 0) {
			status = r == -EINVAL ? EXIT_REFUSED : EXIT_IO;
		}
	}
	if (status == EXIT_OK)
		status = cli_write_out("sign", out, &text);
	if (status == EXIT_OK && !cli->quiet && out)
		fprintf(stderr, "signed %zu manifest%s into %s\n", s.n, plural(s.n), out);
	kx_buf_release(&text);
	kx_buf_release(&b);
	kx_signer_free(signer);
	free(files);
	return status;
}
