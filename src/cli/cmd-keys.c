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
