// SPDX-License-Identifier: MIT
/*
 * `kindex pull [--no-verify | --verify-all] SRC DST`: copy the newest generation a writer
 * publishes (SRC, a path or host:path) into the replica directory DST and make it DST/current
 * (include/kx/replica.h, docs/replicas.md). Run it from a timer or a loop; a mount with
 * -o follow=DST/current switches to each new generation by itself.
 */
#include "cli.h"

#include "kx/replica.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cli_cmd_pull(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "SRC is a publish directory (kindexfs -o publish=DIR, kindex watch --publish DIR): a path,\n"
			    "or host:path copied with rsync over ssh ($RSYNC_RSH chooses the remote shell). DST is\n"
			    "the replica directory, made when missing. The newest generation SRC/PUBLISHED names is\n"
			    "copied into DST/gen-N — table files hard-linked from the current generation where they\n"
			    "are the same, every other file copied —, synced, opened read-only and verified, and\n"
			    "then DST/current, a symbolic link, names it (replaced with rename(2)). Where a pull\n"
			    "verified the current generation (its VERIFIED file), only what the writer added after\n"
			    "it is verified (kindex verify --since), every record still read. Another\n"
			    "publication (a re-created store, a wiped publish directory) is copied and verified\n"
			    "whole. Older generations are removed once no mount uses them. A pull removes only\n"
			    "what a pull made (it marks it: .kindex-pull) and names anything else it finds. A\n"
			    "failed or killed pull leaves DST/current as it was; failed pulls are counted in\n"
			    "DST/PULL-FAILED until one succeeds. Mount the replica with:\n"
			    "kindexfs MNT -o follow=DST/current\n"
			    "\n"
			    "options:\n"
			    "  --no-verify   only open the copy and check its sequence (not every record)\n"
			    "  --verify-all  verify all of the copy, whatever the current generation's VERIFIED says\n"
			    "\n"
			    "exit status: 0 pulled or up to date, 1 the copy does not verify, 2 usage, 3 no\n"
			    "PUBLISHED at SRC or another pull running, 4 the copy failed (rsync, a full disk)\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	struct kx_pull_opts o = { .verify = true };
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--no-verify") == 0) {
			o.verify = false;
		} else if (strcmp(argv[i], "--verify-all") == 0) {
			o.verify_all = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("pull: unknown option %s", quoted(argv[i]));
			return EXIT_USAGE;
		} else if (!o.src) {
			o.src = argv[i];
		} else if (!o.dst) {
			o.dst = argv[i];
		} else {
			cli_error("pull: unexpected argument %s (give SRC DST)", quoted(argv[i]));
			return EXIT_USAGE;
		}
	}
	if (!o.dst || !*o.src || !*o.dst) {
		cli_error("pull: give SRC (a publish directory, or host:path) and DST (the replica directory)");
		return EXIT_USAGE;
	}
	if (o.verify_all && !o.verify) {
		cli_error("pull: --verify-all and --no-verify ask for opposite things: give one");
		return EXIT_USAGE;
	}
	struct kx_pull_result res;
	char *err = NULL;
	int r = kx_replica_pull(&o, &res, &err);
	if (r < 0) {
		cli_error("pull: %s", err ? err : strerror(-r));
		free(err);
		if (r == -EUCLEAN)
			return EXIT_REFUSED;
		return r == -ENOENT || r == -EBUSY ? EXIT_STORE : EXIT_IO;
	}
	if (!cli->quiet) {
		char how[96];
		if (!o.verify)
			snprintf(how, sizeof(how), "opened, not verified");
		else if (res.verified_since)
			snprintf(how, sizeof(how), "verified what was added after store generation %llu",
				 (unsigned long long)res.verified_since);
		else
			snprintf(how, sizeof(how), "verified");
		if (res.up_to_date)
			printf("%s is up to date: generation %llu (%s)", o.dst, (unsigned long long)res.generation, res.name);
		else if (res.previous[0] && !res.new_lineage && !res.went_back)
			printf("pulled generation %llu from %s: %s/current -> %s (%u table file%s linked from %s, %s)",
			       (unsigned long long)res.generation, o.src, o.dst, res.name, res.linked, plural(res.linked),
			       res.previous, how);
		else
			printf("pulled generation %llu from %s: %s/current -> %s (%s, %s)", (unsigned long long)res.generation,
			       o.src, o.dst, res.name,
			       res.went_back     ? "the writer's store went back to before what the replica held: copied whole"
			       : res.new_lineage ? "a new publication, another store or a new publish directory: copied whole"
						 : "the first copy",
			       how);
		if (res.behind)
			printf("; fell behind: the writer removed %u generation%s while %s copied", res.behind,
			       plural(res.behind), res.behind == 1 ? "it was" : "they were");
		if (res.removed || res.kept)
			printf("; %u older generation%s removed, %u kept (in use by a mount)", res.removed,
			       plural(res.removed), res.kept);
		if (res.left_alone[0])
			printf("; left alone, not made by kindex pull: %s", res.left_alone);
		printf("\n");
	}
	return EXIT_OK;
}
