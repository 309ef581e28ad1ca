// SPDX-License-Identifier: MIT
/* `kindex init` and `kindex verify`: create a store; check every digest and index of one. */
#include "cli.h"

#include <errno.h>
#include <string.h>

int cmd_init(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "Creates the store directory (RocksDB) if it does not exist; an existing store is left as it is.\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	if (i < argc) {
		cli_error("init: unexpected argument '%s'", argv[i]);
		return EXIT_USAGE;
	}
	struct kx_store *s;
	int r = cli_open(cli, KX_STORE_CREATE, &s);
	if (r < 0)
		return -r;
	struct kx_store_stats st;
	kx_store_stats(s, NULL, &st);
	if (!cli->quiet)
		printf("store %s: %llu runs, %llu documents\n", cli->store, (unsigned long long)st.runs,
		       (unsigned long long)st.documents);
	kx_store_close(s);
	return EXIT_OK;
}

int cmd_verify(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "Recomputes the digest of every stored document and checks every run against its\n"
			    "documents, group, rank index, path index and source index. Exit 1 on any mismatch.\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	if (i < argc) {
		cli_error("verify: unexpected argument '%s'", argv[i]);
		return EXIT_USAGE;
	}
	struct kx_store *s;
	int r = cli_open(cli, KX_STORE_READONLY, &s);
	if (r < 0)
		return -r;
	struct kx_problems p;
	kx_problems_init(&p);
	uint64_t checked = 0;
	r = kx_store_verify(s, &p, &checked);
	kx_store_close(s);
	if (r < 0) {
		cli_error("verify failed: %s", strerror(-r));
		kx_problems_release(&p);
		return EXIT_IO;
	}
	if (p.len) {
		cli_error("store %s is damaged: %zu problem%s in %llu records", cli->store, p.len, p.len == 1 ? "" : "s",
			  (unsigned long long)checked);
		for (size_t k = 0; k < p.len; k++)
			fprintf(stderr, "  %s: %s: %s\n", p.v[k].pointer, p.v[k].rule, p.v[k].message);
		kx_problems_release(&p);
		return EXIT_REFUSED;
	}
	if (!cli->quiet)
		printf("store %s: %llu records verified, no problems\n", cli->store, (unsigned long long)checked);
	kx_problems_release(&p);
	return EXIT_OK;
}
