// SPDX-License-Identifier: MIT
/*
 * `kindex keygen`: an Ed25519 key pair for signing runs (SPEC §10, docs/signatures.md). The
 * private key signs what kindex-bench emits (`kindex-bench --key NAME.key`); the public key is
 * what a store is told to trust.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

struct by_name {
	const char *name;
	struct kx_digest id;
	int n;
};

static int match_name(void *ctx, const struct kx_key_rec *k)
{
	struct by_name *b = ctx;
	if (strcmp(k->name, b->name) == 0) {
		b->id = k->id;
		b->n++;
	}
	return 0;
}

/* The one key the store knows by name: -ENOENT none, -EEXIST several. */
static int key_by_name(struct kx_store *s, const char *name, struct kx_digest *ret)
{
	struct by_name b = { .name = name };
	int r = kx_store_each_key(s, NULL, match_name, &b);
	if (r < 0)
		return r;
	if (b.n != 1)
		return b.n ? -EEXIST : -ENOENT;
	*ret = b.id;
	return 0;
}

/* Apply a trust change in a transaction of its own: the store's groups move on as for a drop. */
static int trust_commit(struct kx_store *s, const uint8_t *pub, const char *name, const struct kx_digest *revoke,
			int *ret_outcome)
{
	struct kx_txn *t;
	int r = kx_store_txn_begin(s, &t);
	if (r < 0)
		return r;
	int64_t now = kx_now_ns();
	r = pub ? kx_txn_trust_key(t, pub, name, now) : kx_txn_revoke_key(t, revoke, now);
	*ret_outcome = r;
	if (r == 0)
		return kx_txn_commit_gen(t, true, NULL);
	kx_txn_abort(t);
	return r > 0 ? 0 : r;
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
	int r = cli_open(cli, list ? KX_STORE_READONLY : 0, &s);
	if (r < 0)
		return -r;
	int status = EXIT_OK;
	if (list) {
		printf("key_id\tname\tstate\tadded\trevoked\n");
		if ((r = kx_store_each_key(s, NULL, print_key, NULL)) < 0) {
			cli_error("trust list: cannot read the keys: %s", strerror(-r));
			status = EXIT_IO;
		}
		kx_store_close(s);
		return status;
	}
	struct kx_digest id;
	if (add)
		kx_key_id(pub, &id);
	else if (kx_digest_parse(arg, strlen(arg), &id) < 0 && (r = key_by_name(s, arg, &id)) < 0) {
		cli_error(r == -EEXIST ? "trust revoke: %s names more than one key: give its id (kindex trust list)"
				       : "trust revoke: %s is neither a key id (sha256:...) nor the name of a key the store knows",
			  quoted(arg));
		kx_store_close(s);
		return EXIT_REFUSED;
	}
	char ids[KX_DIGEST_STR_MAX];
	kx_digest_format(&id, ids);
	int outcome = 0;
	r = trust_commit(s, add ? pub : NULL, name, &id, &outcome);
	kx_store_close(s);
	if (r < 0 && r != -EPERM && r != -ENOENT) {
		cli_error("trust %s: cannot write to the store: %s", sub, strerror(-r));
		return EXIT_IO;
	}
	if (outcome == -EPERM) {
		cli_error("trust add: key %s was revoked: a revoked key is not trusted again (make a new one: kindex keygen)",
			  ids);
		return EXIT_REFUSED;
	}
	if (outcome == -ENOENT) {
		cli_error("trust revoke: the store knows no key %s (kindex trust list)", ids);
		return EXIT_REFUSED;
	}
	if (!cli->quiet)
		printf("%s %s%s\n", add ? "trusted" : "revoked", ids,
		       outcome == 1 ? add ? " (trusted already: its name is kept)" : " (revoked already)" : "");
	return EXIT_OK;
}
