/* SPDX-License-Identifier: MIT */
/*
 * Replicas (SPEC §7, docs/replicas.md): the writer publishes numbered generations of its store —
 * RocksDB checkpoints taken by the writer itself — and `kindex pull` copies the newest one to a
 * reader host, where `kindexfs -o follow=DST/current` serves it.
 *
 * A publish directory DIR holds:
 *     gen-N/            a checkpoint (a store that opens read-only), with gen-N/PUBLISHED
 *     PUBLISHED         the newest complete generation: written (tmp + rename) after gen-N is whole
 * A replica directory DST holds:
 *     gen-N/            a generation copied and verified
 *     current           a symbolic link to the generation served, replaced with rename(2)
 *
 * PUBLISHED is text, one "key value" line each, in this order:
 *     generation 12
 *     sequence 40213              RocksDB's last sequence number in the generation
 *     store-generation 811        the store's own generation (its commit count)
 *     time 2026-12-04T01:02:03.456Z
 *     time-ns 1796346123456000000 the same instant, nanoseconds since the epoch
 *     store-id 5f0c…              the store's id (kx_store_stats), 32 hex digits
 *     publication 9a41…           the lineage: made when a writer starts publishing a store into
 *                                 a directory that held none of it (32 hex digits)
 * The last two are absent in what a kindex before lineages wrote: such a publication shares no
 * lineage with any other, and is copied whole.
 *
 * Library code: nothing here prints; failures come back as a negative errno and a malloc'd
 * message in *ret_err naming the file and what is wrong with it.
 */
#ifndef KX_REPLICA_H
#define KX_REPLICA_H

#include "kx/common.h"
#include "kx/store.h"

#include <stdbool.h>
#include <stdint.h>

struct kx_published {
	uint64_t generation, sequence, store_generation;
	int64_t time_ns;
	char store_id[33], publication[33]; /* "" when not given */
	int64_t interval_ns;                /* the writer's publish interval; 0 when not given */
};

/*
 * Whether b continues a's lineage: the same publication of the same store, neither unnamed. Table
 * files are shared (linked, or skipped by name) only within one lineage.
 */
bool kx_published_same_lineage(const struct kx_published *a, const struct kx_published *b);

/* PUBLISHED's bytes for p, appended to out. */
int kx_published_format(const struct kx_published *p, struct kx_buf *out);
/* Parse PUBLISHED's bytes (`name` is used in messages); -EINVAL with *ret_err on a bad file. */
int kx_published_parse(const char *bytes, size_t len, const char *name, struct kx_published *ret, char **ret_err);
/* Read and parse the file `name` relative to directory fd `dirfd` (AT_FDCWD: a path). -ENOENT. */
int kx_published_read(int dirfd, const char *name, struct kx_published *ret, char **ret_err);

/*
 * Whether store `s` is the one `p` says was published: its id (where p names one), its RocksDB
 * sequence and its store generation. 0, or -EUCLEAN with what differs in *ret_why (malloc'd): a
 * generation opened from a copy cut short, or with a file missing, is an older store that verifies
 * clean on its own.
 */
int kx_published_check(const struct kx_published *p, struct kx_store *s, char **ret_why);

/* "gen-12" → 12; 0 for any other name. */
uint64_t kx_replica_gen_number(const char *name);

/* ---- the writer's side -------------------------------------------------------------------------- */

struct kx_publisher;

/*
 * Publish `s` (open read-write) into `dir`, made when missing (its parent must exist), keeping the
 * newest `keep` generations (1 or more). Takes DIR/.lock (flock): one writer per directory,
 * -EBUSY otherwise. What a writer killed while publishing left is cleaned up: RocksDB's
 * unfinished gen-N.tmp, and a gen-N newer than PUBLISHED names (never announced).
 */
int kx_publisher_open(struct kx_store *s, const char *dir, unsigned keep, struct kx_publisher **ret,
		      char **ret_err);
/*
 * One round: if the store changed since the last generation (its sequence number moved), take a
 * checkpoint into DIR/gen-N, write its PUBLISHED, then DIR/PUBLISHED, then remove generations past
 * `keep`. 1 when a generation was published (*ret, if given, describes it), 0 when nothing
 * changed, or a negative errno with *ret_err. Not thread-safe against itself.
 */
int kx_publisher_run(struct kx_publisher *p, struct kx_published *ret, char **ret_err);
/* Stop the thread (kx_publisher_start) after a last round, and close. NULL is a no-op. */
void kx_publisher_close(struct kx_publisher *p);

/*
 * Run kx_publisher_run every `interval_ms` on a thread of its own ("kx-publisher"), and once more
 * when closed. `log` receives each failure's message (and, with `verbose`, each generation's);
 * it is called from that thread.
 */
typedef void (*kx_publish_log_fn)(void *ctx, bool failure, const char *msg);
int kx_publisher_start(struct kx_publisher *p, unsigned interval_ms, kx_publish_log_fn log, void *ctx);

/* ---- the reader's side: kindex pull ------------------------------------------------------------- */

struct kx_pull_opts {
	const char *src;   /* a publish directory: a path, or host:path (rsync over ssh, $RSYNC_RSH) */
	const char *dst;   /* the replica directory, made when missing (its parent must exist) */
	bool verify;       /* kx_store_verify the copy before it becomes current (else only opened): */
	bool verify_all;   /* all of it, even where the current generation was verified (below) */
	const char *rsync; /* the rsync program; NULL: $KINDEX_RSYNC, or "rsync" */
};
struct kx_pull_result {
	uint64_t generation; /* now current */
	char name[48];       /* its directory in DST: gen-N, or gen-N-T where gen-N is taken */
	char previous[48];   /* what current named before ("" if none) */
	bool up_to_date;     /* nothing copied: current already was the newest */
	bool new_lineage;    /* another publication than current's (copied whole, verified whole) */
	bool went_back;      /* the writer's store is behind what current holds (restored?) */
	unsigned behind;     /* generations the writer removed while this pull copied them */
	char left_alone[256]; /* what DST holds that kindex pull did not make, ", "-separated */
	unsigned linked;     /* table files hard-linked from the previous generation */
	uint64_t verified_since; /* verified what the store's commits after this generation added; 0: all */
	unsigned removed, kept; /* older generations removed, and kept because a mount uses them */
};
/*
 * Copy the newest generation SRC publishes into DST/gen-N and make it current (docs/replicas.md):
 * DST/.pull.lock (flock) keeps a second pull out (-EBUSY); leftovers of a pull killed before are
 * removed; the table files (*.sst, immutable, named once) are hard-linked from the current
 * generation and only new ones copied; every other file is copied whole whatever its time or
 * size (rsync --ignore-times: a stale 16-byte CURRENT with an equal mtime is not the same file);
 * the copy is synced, opened read-only — its sequence and store generation must be PUBLISHED's —
 * and verified (what was added after the current generation, where a pull verified that one and
 * left its VERIFIED; all of it otherwise, or with verify_all), renamed to gen-N, and DST/current,
 * a symbolic link, is replaced by rename(2).
 * Then each other generation is removed unless a mount holds it (KX_STORE_FOLLOW's shared flock).
 * On any failure DST/current is as it was and the partial copy is removed; *ret_err says what
 * failed (rsync's own last words included). -ENOENT: no PUBLISHED at SRC; -EUCLEAN: the copy does
 * not verify; -ENOSPC: no room in DST; -EIO: rsync failed otherwise.
 */
int kx_replica_pull(const struct kx_pull_opts *o, struct kx_pull_result *ret, char **ret_err);
/*
 * Whether pulls into `dst` are failing (DST/PULL-FAILED, which each failed pull rewrites and the
 * next good one removes): 1 with a README line in *ret (malloc'd): how many in a row, since
 * when, the last message; 0 when not; a negative errno.
 */
int kx_replica_pull_failing(const char *dst, char **ret);

/*
 * DST/LAST-PUBLISHED: the writer's PUBLISHED as the last pull that succeeded fetched it, with its
 * mtime — the writer's last round: a writer publishing every interval touches PUBLISHED in each
 * round that has nothing new. A follow mount reads it to tell a replica that has stopped
 * advancing (kx_replica_stale).
 */
#define KX_LAST_PUBLISHED "LAST-PUBLISHED"

/*
 * What a follow mount's README says of the writer: the replica is stale when DST/LAST-PUBLISHED
 * has not moved for `intervals` of the writer's publish intervals, by this host's clock.
 * `w` is the caller's state, zeroed before the first call; each call (about every second) looks
 * at DST/LAST-PUBLISHED again. 1 with a README line in *ret (malloc'd), 0 when fresh or when the
 * writer's interval is not known (no LAST-PUBLISHED yet, or a writer that does not say it).
 */
struct kx_heard {
	int64_t mtime_ns;    /* LAST-PUBLISHED's mtime as last seen (the writer's clock) */
	int64_t heard_ns;    /* when it was seen to move (this host's clock) */
	int64_t interval_ns; /* the writer's interval, from its bytes */
};
int kx_replica_stale(const char *dst, unsigned intervals, int64_t now_ns, struct kx_heard *w, char **ret);

/*
 * A test hook: with KINDEX_TEST_PUBLISH_KILL=N in the environment, the writer kills itself
 * (SIGKILL) in its Nth round that publishes, after the checkpoint is complete and before
 * PUBLISHED names it — the crash the ordering must survive (tests/integration/replica-publish.sh).
 */
#define KX_PUBLISH_TEST_KILL "KINDEX_TEST_PUBLISH_KILL"

#endif
