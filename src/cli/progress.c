// SPDX-License-Identifier: MIT
/*
 * Progress of a long `kindex` subcommand on a terminal: "\r<what>: n/total, rate/s, ETA" on
 * stderr, at most five times a second, and nothing when stderr is not a tty or with --quiet.
 */
#include "cli.h"

#include <unistd.h>

void cli_progress_init(struct progress *p, const char *what, uint64_t total, bool quiet)
{
	p->what = what;
	p->total = total;
	p->start = p->last = kx_monotonic();
	p->tty = !quiet && isatty(STDERR_FILENO);
}

static void progress_print(struct progress *p, uint64_t done, bool final)
{
	double now = kx_monotonic(), el = now - p->start;
	double rate = el > 0 ? (double)done / el : 0;
	if (p->total && !final) {
		double eta = rate > 0 ? (double)(p->total - done) / rate : 0;
		fprintf(stderr, "\r\033[K%s: %llu/%llu, %.0f/s, ETA %.0fs", p->what, (unsigned long long)done,
			(unsigned long long)p->total, rate, eta);
	} else {
		fprintf(stderr, "\r\033[K%s: %llu, %.0f/s%s", p->what, (unsigned long long)done, rate, final ? "\n" : "");
	}
	fflush(stderr);
}

void cli_progress_update(struct progress *p, uint64_t done)
{
	if (!p->tty)
		return;
	double now = kx_monotonic();
	if (now - p->last < 0.2)
		return;
	p->last = now;
	progress_print(p, done, false);
}

void cli_progress_done(struct progress *p, uint64_t done)
{
	if (p->tty && kx_monotonic() - p->start > 0.5)
		progress_print(p, done, true);
	else if (p->tty)
		fprintf(stderr, "\r\033[K");
}
