// SPDX-License-Identifier: MIT
/*
 * `kindex watch DIR`: the spool entrance for hosts that produce results but do not mount. Files
 * renamed into DIR/new are ingested, and those renamed into DIR/artifacts stored as artifacts'
 * bytes, and moved to DIR/accepted or DIR/rejected with a receipt (include/kx/spool.h). Runs until SIGINT/SIGTERM, or once with --once.
 */
#include "cli.h"

#include "kx/replica.h"
#include "kx/spool.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* The publisher's messages: failures on stderr; each generation too unless -q. */
static void publish_log(void *ctx, bool failure, const char *msg)
{
	const struct cli *cli = ctx;
	if (failure || !cli->quiet)
		fprintf(stderr, "kindex: %s\n", msg);
}

int cli_cmd_watch(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "Maildir-style spool: write DIR/tmp/NAME, then rename it to DIR/new/NAME (names starting\n"
			    "with '.' are skipped). Each file is one decision, in name order: ingested (the store's log\n"
			    "synced) and moved to DIR/accepted/NAME with NAME.receipt listing each run's path, or to\n"
			    "DIR/rejected/NAME with NAME.error listing every problem; a taken NAME gets .1, .2 ...\n"
			    "Files renamed into DIR/artifacts/ are the bytes of runs' artifacts (SPEC §9), decided\n"
			    "before new/ the same way: stored once by SHA-256 (a name starting with 64 hex digits must\n"
			    "be the bytes' digest; at most --max-artifact) and filed in accepted/ or rejected/ with a\n"
			    "receipt.\n"
			    "DIR and its five subdirectories are made when missing. One line per file on stdout.\n"
			    "\n"
			    "options:\n"
			    "  --once   decide the files now in artifacts/ and new/ and exit: status 0, 1 if any\n"
			    "           was rejected, 4 if any could not be decided (left where it was)\n"
			    "  --publish DIR   publish generations of the store for replicas (docs/replicas.md):\n"
			    "           DIR/gen-N, a checkpoint, and DIR/PUBLISHED naming the newest, every\n"
			    "           --publish-interval when the store changed, and once more at exit\n"
			    "  --publish-interval SECONDS   how often (default 2; a fraction allowed: 0.5)\n"
			    "  --publish-keep K   generations kept in DIR, the newest K (default 3, at least 1)\n"
			    "  --max-artifact SIZE   the cap of one artifact's bytes (default 1G; K, M, G suffixes)\n"
			    "Without --once it runs until SIGINT or SIGTERM, then exits 0.\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	bool once = false;
	const char *dir = NULL, *publish = NULL;
	double interval = 2;
	uint64_t keep = 3;
	struct kx_ingest_opts opts = { .max_artifact = KX_ARTIFACT_MAX_DEFAULT };
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--once") == 0) {
			once = true;
		} else if (strcmp(argv[i], "--max-artifact") == 0) {
			if (i + 1 == argc || kx_parse_size(argv[i + 1], true, 1, UINT64_MAX / 2, &opts.max_artifact) < 0) {
				cli_error("watch: --max-artifact needs a size in bytes, with K, M or G (e.g. 2G)");
				return EXIT_USAGE;
			}
			i++;
		} else if (strcmp(argv[i], "--publish") == 0 || strcmp(argv[i], "--publish-interval") == 0 ||
			   strcmp(argv[i], "--publish-keep") == 0) {
			const char *opt = argv[i];
			if (i + 1 >= argc || !argv[i + 1][0]) {
				cli_error("watch: %s needs a value", opt);
				return EXIT_USAGE;
			}
			const char *val = argv[++i];
			if (strcmp(opt, "--publish") == 0) {
				publish = val;
			} else if (strcmp(opt, "--publish-keep") == 0) {
				if (kx_parse_size(val, false, 1, 1000000, &keep) < 0) {
					cli_error("watch: invalid --publish-keep %s: give a number of generations, 1 to 1000000",
						  quoted(val));
					return EXIT_USAGE;
				}
			} else if (kx_parse_decimal(val, 0.001, 86400, &interval) < 0) {
				cli_error("watch: invalid --publish-interval %s: give seconds from 0.001 to 86400, e.g. 2 or 0.5",
					  quoted(val));
				return EXIT_USAGE;
			}
		} else if (!dir && argv[i][0] != '-')
			dir = argv[i];
		else {
			cli_error("watch: unexpected argument %s", quoted(argv[i]));
			return EXIT_USAGE;
		}
	}
	if (!dir) {
		cli_error("watch: no spool DIR given");
		return EXIT_USAGE;
	}
	bool publish_opts = false;
	for (int j = 1; j < argc; j++)
		publish_opts |= strcmp(argv[j], "--publish-interval") == 0 || strcmp(argv[j], "--publish-keep") == 0;
	if (publish_opts && !publish) {
		cli_error("watch: --publish-interval and --publish-keep go with --publish DIR");
		return EXIT_USAGE;
	}
	struct kx_store *s;
	int r = cli_open(cli, 0, &s);
	if (r < 0)
		return -r;
	struct kx_spool *sp;
	char *err = NULL;
	if ((r = kx_spool_open(dir, &sp, &err)) < 0) {
		cli_error("%s", err ? err : strerror(-r));
		free(err);
		kx_store_close(s);
		return EXIT_IO;
	}
	struct kx_publisher *pub = NULL;
	if (publish && ((r = kx_publisher_open(s, publish, (unsigned)keep, &pub, &err)) < 0 ||
			(r = kx_publisher_start(pub, (unsigned)(interval * 1000 + 0.5), publish_log, cli)) < 0)) {
		cli_error("watch: %s", err ? err : strerror(-r));
		free(err);
		kx_publisher_close(pub);
		kx_spool_close(sp);
		kx_store_close(s);
		return r == -EBUSY ? EXIT_STORE : EXIT_IO;
	}
	struct kx_tree *t = kx_tree_new(s, 0);
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct kx_spool_counts c = { 0 };
	int status = EXIT_OK;
	if (!cli->quiet && !once)
		fprintf(stderr, "watching %s/new and %s/artifacts (write to %s/tmp, then rename into new/ or artifacts/)\n",
			dir, dir, dir);
	while (!stop) {
		struct kx_view *before = kx_store_view(s);
		size_t had = c.accepted + c.artifacts;
		r = kx_spool_process(sp, s, t, &opts, &c, cli->quiet ? NULL : stdout);
		fflush(stdout);
		if (c.accepted + c.artifacts != had)
			cli_keep_sizes(cli, s, before, false);
		kx_view_release(before);
		if (r < 0) {
			cli_error("watch: cannot list %s/artifacts or %s/new: %s", dir, dir, strerror(-r));
			status = EXIT_IO;
			break;
		}
		if (once)
			break;
		struct pollfd pfd = { kx_spool_fd(sp), POLLIN, 0 };
		if (poll(&pfd, 1, 1000) < 0 && errno != EINTR) {
			status = EXIT_IO;
			break;
		}
	}
	/* --once reports on the files it decided; a watcher stopped by a signal stopped cleanly (a
	 * file it rejected is an outcome, recorded in rejected/, not a failure of the watcher) */
	if (once && status == EXIT_OK && (c.rejected || c.failed))
		status = c.failed ? EXIT_IO : EXIT_REFUSED;
	if (!cli->quiet && once) {
		char arts[64] = "";
		if (c.artifacts)
			snprintf(arts, sizeof(arts), "; %zu artifact%s accepted", c.artifacts, c.artifacts == 1 ? "" : "s");
		fprintf(stderr, "%zu accepted, %zu rejected%s%s\n", c.accepted, c.rejected,
			c.failed ? ", some left in new/ or artifacts/" : "", arts);
	}
	kx_tree_free(t);
	kx_publisher_close(pub); /* a last round: what was accepted is published */
	kx_spool_close(sp);
	kx_store_close(s);
	return status;
}
