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

/* A key's name: 1 to KX_KEY_NAME_MAX - 1 bytes of printable text (it is shown in SIGNATURES). */
static bool good_key_name(const char *s)
{
	size_t n = strlen(s);
	if (!n || n >= KX_KEY_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

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
			    "the runs themselves never change. The store must not be mounted (docs/signatures.md).\n");
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
	if (add && !good_key_name(name)) {
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
