// SPDX-License-Identifier: MIT
/*
 * `kindex watch DIR`: the spool entrance for hosts that produce results but do not mount. Files
 * renamed into DIR/new are ingested and moved to DIR/accepted or DIR/rejected with a receipt
 * (include/kx/spool.h). Runs until SIGINT/SIGTERM, or once with --once.
 */
#include "cli.h"

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

int cmd_watch(struct cli *cli, int argc, char **argv)
{
	int i = cli_options(cli, argc, argv,
			    "Maildir-style spool: write DIR/tmp/NAME, then rename it to DIR/new/NAME (names starting\n"
			    "with '.' are skipped). Each file is one decision, in name order: ingested (the store's log\n"
			    "synced) and moved to DIR/accepted/NAME with NAME.receipt listing each run's path, or to\n"
			    "DIR/rejected/NAME with NAME.error listing every problem; a taken NAME gets .1, .2 ...\n"
			    "DIR and its four subdirectories are made when missing. One line per file on stdout.\n"
			    "\n"
			    "options:\n"
			    "  --once   decide the files now in new/ and exit: status 0, 1 if any was rejected,\n"
			    "           4 if any could not be decided (left in new/)\n"
			    "Without --once it runs until SIGINT or SIGTERM, then exits 0.\n");
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_USAGE;
	bool once = false;
	const char *dir = NULL;
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--once") == 0)
			once = true;
		else if (!dir && argv[i][0] != '-')
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
	struct kx_tree *t = kx_tree_new(s, 0);
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct kx_spool_counts c = { 0 };
	int status = EXIT_OK;
	if (!cli->quiet && !once)
		fprintf(stderr, "watching %s/new (write to %s/tmp, then rename into new/)\n", dir, dir);
	while (!stop) {
		r = kx_spool_process(sp, s, t, NULL, &c, cli->quiet ? NULL : stdout);
		fflush(stdout);
		if (r < 0) {
			cli_error("watch: cannot read %s/new: %s", dir, strerror(-r));
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
	if (!cli->quiet && once)
		fprintf(stderr, "%zu accepted, %zu rejected%s\n", c.accepted, c.rejected, c.failed ? ", some left in new/" : "");
	kx_tree_free(t);
	kx_spool_close(sp);
	kx_store_close(s);
	return status;
}
