// SPDX-License-Identifier: MIT
/*
 * Opening and closing a store on RocksDB's C API: the options, the refusal to write a replica
 * generation, the messages that say why an open failed (a damaged log, a holder), the schema check
 * and upgrade, the store's id; at close the flush of a large log. And the checkpoints a replica
 * is published from. Layout in keys.h / docs/store.md.
 *
 * RocksDB's memory is bounded explicitly (a 32 MiB block cache shared by readers, two 16 MiB
 * memtables) because the FUSE daemon that embeds it has a memory target of its own.
 */
#include "private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <rocksdb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The store's id: 16 random bytes, made once — with the store, or by the first writer of a store
 * made before ids — and kept by every checkpoint. A publication names it, so a replica tells a
 * re-created store from the one it copied (docs/replicas.md, "Lineage").
 */
static int give_id(struct kx_store *s)
{
	int r = store_get_raw(s, s->ro, KEYLIT(K_ID), NULL);
	if (r != -ENOENT)
		return r;
	unsigned char id[16];
	if (getrandom(id, sizeof(id), 0) != (ssize_t)sizeof(id))
		return -errno;
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	rocksdb_writebatch_put(wb, KEYLIT(K_ID), (const char *)id, sizeof(id));
	r = store_write(s, s->wo_sync, wb);
	rocksdb_writebatch_destroy(wb);
	return r;
}

static uint64_t get_u64_key(struct kx_store *s, const rocksdb_readoptions_t *ro, const char *k, size_t kn)
{
	return store_get_u64_in(s->db, ro, k, kn);
}

/* The number of a write-ahead log's file name ("000123.log"), or 0 for any other name. */
unsigned long long store_wal_number(const char *name)
{
	char *end;
	unsigned long long num = name[0] >= '0' && name[0] <= '9' ? strtoull(name, &end, 10) : 0;
	return num && strcmp(end, ".log") == 0 ? num : 0;
}

/*
 * RocksDB before 8.3 keeps an empty write-ahead log until a memtable flush moves its log number on
 * (facebook/rocksdb#11313, fixed in 8.3 by #11409; Debian 12 ships 7.8): every read-write open
 * that writes nothing, such as each mount of a tree nobody adds to, leaves a 0-byte NNNNNN.log,
 * and each is opened again at every later open. Called right after rocksdb_open, with its LOCK
 * held, so no other process can be writing to any of them: the empty logs older than the newest
 * (the one this open made, still in use) hold nothing, and RocksDB does not track logs in its
 * MANIFEST (track_and_verify_wals_in_manifest, off), so they are removed. Best effort: a log that
 * stays only costs a file.
 */
static void drop_empty_wals(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	unsigned long long newest = 0, num;
	for (struct dirent *e; (e = readdir(d));)
		if ((num = store_wal_number(e->d_name)) > newest)
			newest = num;
	rewinddir(d);
	for (struct dirent *e; (e = readdir(d));) {
		struct stat st;
		if ((num = store_wal_number(e->d_name)) && num < newest &&
		    fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
			unlinkat(fd, e->d_name, 0);
	}
	closedir(d);
}

/*
 * Whether `dir` is a replica generation: a checkpoint that holds the PUBLISHED file its publisher
 * wrote (include/kx/replica.h). Nothing writes one, not even RocksDB's own open to write (a new log,
 * MANIFEST, OPTIONS and LOCK, and a table for what the log held): a follow mount may be serving
 * it, and a pull hard-links its tables into the next generation.
 */
bool store_is_generation(const char *dir)
{
	char path[PATH_MAX];
	return snprintf(path, sizeof(path), "%s/PUBLISHED", dir) < (int)sizeof(path) && access(path, F_OK) == 0;
}

char *store_generation_refused(const char *dir, const char *what)
{
	char *msg;
	if (asprintf(&msg,
		     "'%s' is a replica generation (it holds PUBLISHED), which is read-only: %s the writer's store "
		     "it was published from instead",
		     dir, what) < 0)
		msg = NULL;
	return msg;
}

#define STORE_MIN_BLOB (64u << 10)
_Static_assert(KX_ARTIFACT_CHUNK > STORE_MIN_BLOB, "an artifact's whole chunks are blobs");

/*
 * After an open refused for corruption: whether the log is what is damaged, that is, whether the
 * store opens (read-only, so nothing is changed) when RocksDB may stop replaying the log at the
 * damage.
 */
static bool wal_damaged(rocksdb_options_t *opts, const char *dir)
{
	char *err = NULL;
	rocksdb_options_set_wal_recovery_mode(opts, 2 /* point in time */);
	rocksdb_t *db = rocksdb_open_for_read_only(opts, dir, 0, &err);
	rocksdb_options_set_wal_recovery_mode(opts, 0);
	if (db)
		rocksdb_close(db);
	rocksdb_free(err);
	return db != NULL;
}

int kx_store_open(const char *dir, unsigned flags, struct kx_store **ret, char **ret_err)
{
	char *msg = NULL;
	int r = 0;
	struct kx_store *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->writer, NULL);
	pthread_mutex_init(&s->follow, NULL);
	if (flags & (KX_STORE_FOLLOW | KX_STORE_VERIFY))
		flags |= KX_STORE_READONLY;
	/* a commit waits for the syncs in flight, not behind every sync that comes after it */
	pthread_rwlockattr_t wal_attr;
	pthread_rwlockattr_init(&wal_attr);
	pthread_rwlockattr_setkind_np(&wal_attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&s->wal, &wal_attr);
	pthread_rwlockattr_destroy(&wal_attr);
	s->flags = flags;
	/* the absolute path: it is shown in README, which must read the same from any directory */
	s->path = realpath(dir, NULL);
	if (!s->path)
		s->path = strdup(dir);
	struct stat st;
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
		r = -ENOTDIR;
		if (asprintf(&msg, "'%s' is %s, not a store directory", dir,
			     S_ISREG(st.st_mode) ? "a file" : "not a directory") < 0)
			msg = NULL;
		goto fail;
	}
	char current[4096];
	snprintf(current, sizeof(current), "%s/CURRENT", dir);
	if (!(flags & KX_STORE_CREATE) && access(current, F_OK) != 0) {
		r = -ENOENT;
		if (asprintf(&msg, "no store at '%s' (create one with: kindex --store %s init)", dir, dir) < 0)
			msg = NULL;
		goto fail;
	}
	if (!(flags & KX_STORE_READONLY) && store_is_generation(dir)) {
		r = -EROFS;
		msg = store_generation_refused(dir, "write to");
		goto fail;
	}
	if (flags & KX_STORE_CREATE) {
		mkdir(dir, 0755);
		char *abs = realpath(dir, NULL);
		if (abs) {
			free(s->path);
			s->path = abs;
		}
	}

	s->opts = rocksdb_options_create();
	rocksdb_options_set_create_if_missing(s->opts, (flags & KX_STORE_CREATE) ? 1 : 0);
	rocksdb_options_set_max_background_jobs(s->opts, 2);
	rocksdb_options_set_write_buffer_size(s->opts, STORE_WRITE_BUFFER);
	rocksdb_options_set_max_total_wal_size(s->opts, 64u << 20);
	rocksdb_options_set_max_open_files(s->opts, flags & KX_STORE_FOLLOW ? -1 : 512);
	rocksdb_options_set_keep_log_file_num(s->opts, 2);
	rocksdb_options_set_max_log_file_size(s->opts, 1u << 20);
	rocksdb_options_set_compression(s->opts, rocksdb_lz4_compression);
	/*
	 * Values of STORE_MIN_BLOB bytes and more — an artifact's chunks (SPEC §9), never a document
	 * or an index entry — go to RocksDB's blob files when a memtable is written out, so that
	 * compactions rewrite the small LSM tree without them; blob garbage collection reclaims the
	 * chunks kindex gc deletes.
	 */
	rocksdb_options_set_enable_blob_files(s->opts, 1);
	rocksdb_options_set_min_blob_size(s->opts, STORE_MIN_BLOB);
	rocksdb_options_set_enable_blob_gc(s->opts, 1);
	/* RocksDB advises POSIX_FADV_RANDOM on every file it opens, blob files included, which turns
	 * the kernel's readahead off: a cold artifact was then read a 128 KiB chunk at a time, one disk
	 * read waited for after another. With the normal advice, the chunks' sequential reads of a
	 * blob file are read ahead; small reads at random places are read as they are either way
	 * (docs/performance-log.md, "Artifacts") */
	rocksdb_options_set_advise_random_on_open(s->opts, 0);
	/* most point reads ask for keys that are not there (is this run new?): a memtable bloom
	 * filter answers those without walking the skiplist */
	rocksdb_options_set_memtable_prefix_bloom_size_ratio(s->opts, 0.05);
	rocksdb_options_set_memtable_whole_key_filtering(s->opts, 1);
	/*
	 * RocksDB's own log (LOG) records nothing below FATAL: on a full disk its writes fail too, and
	 * the next line it logs — ERROR and WARN lines come with every failed write — aborts in
	 * Debian's build (see store_write). What goes wrong reaches the caller as a status anyway.
	 */
	rocksdb_options_set_info_log_level(s->opts, 4 /* FATAL */);
	/*
	 * A log whose end is torn (a crash mid-append) is read up to the tear; a log damaged before its
	 * end refuses the open, where point-in-time recovery, RocksDB's default, would open the store
	 * without every write after the damage and say so only in LOG. kx_store_recover opens such a
	 * store that way on purpose, keeping the damaged logs and a record of the loss.
	 */
	rocksdb_options_set_wal_recovery_mode(s->opts, flags & STORE_SALVAGE ? 2 /* point in time */
									 : 0 /* tolerate a torn tail */);
	s->table = rocksdb_block_based_options_create();
	/*
	 * Blocks are cached uncompressed; the page cache holds them compressed as well. For the
	 * daemon, whose memory is bounded, 16 MiB: `ls -lR` of 100,000 runs (a 76 MB store) ran as
	 * fast with 16 MiB as with 32, in 18 MiB less RSS (docs/performance-log.md).
	 */
	s->cache = rocksdb_cache_create_lru((flags & KX_STORE_LEAN ? 16u : 32u) << 20);
	rocksdb_block_based_options_set_block_cache(s->table, s->cache);
	s->filter = rocksdb_filterpolicy_create_bloom(10);
	rocksdb_block_based_options_set_filter_policy(s->table, s->filter);
	rocksdb_options_set_block_based_table_factory(s->opts, s->table);

	char *err = NULL;
	if (flags & KX_STORE_FOLLOW) {
		if ((r = store_dbh_open(s, dir, &s->cur, &msg)) < 0)
			goto fail;
		s->db = s->cur->db;
	} else if (flags & KX_STORE_READONLY)
		s->db = rocksdb_open_for_read_only(s->opts, dir, 0, &err);
	else
		s->db = rocksdb_open(s->opts, dir, &err);
	if (err && (flags & KX_STORE_VERIFY) && store_errno(err) == -EUCLEAN && !wal_damaged(s->opts, dir)) {
		/*
		 * A table RocksDB reads at the open (its footer, index or properties block; it opens the
		 * first 16 tables, or all of them with max_open_files -1) is damaged, and the log is not:
		 * without paranoid checks the open goes on, each read of that table fails instead, and
		 * verify names it and reads the rest.
		 */
		rocksdb_options_set_paranoid_checks(s->opts, 0);
		s->damage = err;
		err = NULL;
		s->db = rocksdb_open_for_read_only(s->opts, dir, 0, &err);
	}
	if (err) {
		r = store_errno(err);
		char *holder = r == -EBUSY ? kx_store_holder(dir) : NULL;
		if (r == -EUCLEAN && !(flags & STORE_SALVAGE) && wal_damaged(s->opts, dir)) {
			if (asprintf(&msg,
				     "cannot open store '%s': its write-ahead log is damaged (%s), and opening it would "
				     "drop every write logged after the damage; 'kindex --store %s recover' opens it "
				     "without them, keeps the log in lost+found/ and records the loss (docs/inbox.md, "
				     "\"Durability\")",
				     dir, err, dir) < 0)
				msg = NULL;
		} else if (holder) {
			if (asprintf(&msg, "store '%s' is in use by %s; write through its inbox, or unmount it first", dir, holder) < 0)
				msg = NULL;
		} else if (r == -EBUSY) {
			if (asprintf(&msg, "store '%s' is in use by another process (%s)", dir, err) < 0)
				msg = NULL;
		} else if (asprintf(&msg, r == -EUCLEAN ? "store '%s' is damaged: %s" : "cannot open store '%s': %s", dir,
				    err) < 0) {
			msg = NULL;
		}
		free(holder);
		rocksdb_free(err);
		goto fail;
	}
	if (!(flags & KX_STORE_READONLY))
		drop_empty_wals(s->path);
	s->ro = rocksdb_readoptions_create();
	s->ro_bare = rocksdb_readoptions_create();
	rocksdb_readoptions_set_verify_checksums(s->ro_bare, 0);
	s->wo = rocksdb_writeoptions_create();
	s->wo_sync = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(s->wo_sync, 1);
	if (flags & KX_STORE_SYNC)
		rocksdb_writeoptions_set_sync(s->wo, 1);

	struct kx_buf schema = { 0 };
	char want[32];
	snprintf(want, sizeof(want), "kindexfs-store %d", KX_STORE_SCHEMA);
	r = store_get_raw(s, s->ro, KEYLIT(K_SCHEMA), &schema);
	s->waiting_index = s->index_copies = s->current_index = true; /* but for an older store read as it is */
	bool writable = !(flags & KX_STORE_READONLY);
	int from = r == 0 ? store_readable_schema(schema.ptr, want) : 0;
	if (r == -EUCLEAN && (flags & KX_STORE_VERIFY)) {
		r = 0; /* read as this kindex's: verify names the table that holds the schema */
		from = KX_STORE_SCHEMA;
	}
	if (r == -ENOENT && writable) {
		unsigned char created[8];
		store_put_u64(created, (uint64_t)kx_now_ns());
		rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
		rocksdb_writebatch_put(wb, KEYLIT(K_CREATED), (const char *)created, 8);
		rocksdb_writebatch_put(wb, KEYLIT(K_INDEX_COPIES), "", 0);
		rocksdb_writebatch_put(wb, KEYLIT(K_SCHEMA), want, strlen(want));
		r = store_write(s, s->wo_sync, wb);
		rocksdb_writebatch_destroy(wb);
		if (r < 0) {
			if (asprintf(&msg, "cannot initialise store '%s': %s", dir, strerror(-r)) < 0)
				msg = NULL;
			kx_buf_release(&schema);
			goto fail;
		}
	} else if (from) {
		/*
		 * What an older kindex wrote may lack something: schema 1 the 'W' index, which only writers
		 * use; a store without K_INDEX_COPIES the run's record in some rank-index entries, which a
		 * reader then reads by digest; schema 2 the 'C' index, which a reader then works out from
		 * the rank index. Read as it is; upgraded when opened to write.
		 */
		bool copies = store_get_raw(s, s->ro, KEYLIT(K_INDEX_COPIES), NULL) == 0;
		if (writable && (from < KX_STORE_SCHEMA || !copies) && (r = store_upgrade(s, from, want)) < 0 &&
		    asprintf(&msg, "cannot upgrade store '%s' to schema '%s': %s", dir, want, strerror(-r)) < 0)
			msg = NULL;
		s->waiting_index = from >= 2 || writable;
		s->index_copies = copies || writable;
		s->current_index = from == KX_STORE_SCHEMA || writable;
	} else if (r == 0) {
		r = -EPROTO;
		if (asprintf(&msg, "store '%s' has schema '%s'; this kindex reads '%s'", dir, schema.ptr, want) < 0)
			msg = NULL;
	} else if (r == -ENOENT) {
		r = 0; /* read-only view of an empty store */
	} else if (r == -EUCLEAN) {
		if (asprintf(&msg, "store '%s' is damaged: the table that holds its schema cannot be read "
				   "('kindex --store %s verify' names it)", dir, dir) < 0)
			msg = NULL;
	}
	kx_buf_release(&schema);
	if (r == 0 && writable && (r = give_id(s)) < 0 && asprintf(&msg, "cannot give store '%s' its id: %s", dir,
								       strerror(-r)) < 0)
		msg = NULL;
	if (r < 0)
		goto fail;
	if (!(flags & KX_STORE_READONLY)) {
		s->docs = store_wmap_new(0, 1u << 20);
		s->groups = store_wmap_new(sizeof(struct kx_group_rec), 1u << 16);
		s->mtimes = store_wmap_new(sizeof(int64_t), 1u << 16);
		s->currents = store_wmap_new(sizeof(struct current_mark), 1u << 17);
		s->names = store_wmap_new(32, 1u << 16);
		if (!s->docs || !s->groups || !s->mtimes || !s->currents || !s->names) {
			r = -ENOMEM;
			goto fail;
		}
	}
	s->gen = get_u64_key(s, s->ro, KEYLIT(K_GEN));
	s->n_runs = get_u64_key(s, s->ro, KEYLIT(K_COUNT_RUNS));
	s->n_docs = get_u64_key(s, s->ro, KEYLIT(K_COUNT_DOCS));
	s->n_groups = get_u64_key(s, s->ro, KEYLIT(K_COUNT_GROUPS));
	*ret = s;
	return 0;
fail:
	if (ret_err)
		*ret_err = msg;
	else
		free(msg);
	kx_store_close(s);
	return r;
}

/*
 * At close, write the memtables to a table file when this open logged more than a write buffer.
 * What is left in them is replayed from the write-ahead log at every later open, into memory, all
 * at once, and a read-only open (a `kindex cat`, a mount -o ro) replays it again each time: a JSON
 * Lines file is one batch (all or nothing), and after `kindex ingest` of 100,000 runs in one,
 * each later open peaked at 492 MiB replaying its 161 MB log. RocksDB did not flush the batch by
 * itself: its memtable counted 16.5 MB, under the write buffer. A smaller remainder stays in the
 * log, so that a command adding one manifest leaves no table file. A flush that fails (a full
 * disk) leaves the log as it was: nothing is lost, the next open pays.
 */
static void flush_if_logged(struct kx_store *s)
{
	if (s->logged <= STORE_WRITE_BUFFER)
		return;
	rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
	char *err = NULL;
	rocksdb_flushoptions_set_wait(fo, 1);
	rocksdb_flush(s->db, fo, &err);
	rocksdb_free(err);
	rocksdb_flushoptions_destroy(fo);
}

void kx_store_close(struct kx_store *s)
{
	if (!s)
		return;
	if (s->cur) {
		store_dbh_put(s, s->cur); /* s->db is its */
	} else if (s->db) {
		if (!(s->flags & KX_STORE_READONLY) && kx_store_sync(s) == 0) /* refused after a failed write */
			flush_if_logged(s);
		rocksdb_close(s->db);
	}
	if (s->lockfile) {
		unlink(s->lockfile);
		free(s->lockfile);
	}
	rocksdb_free(s->damage);
	if (s->ro)
		rocksdb_readoptions_destroy(s->ro);
	if (s->ro_bare)
		rocksdb_readoptions_destroy(s->ro_bare);
	if (s->wo)
		rocksdb_writeoptions_destroy(s->wo);
	if (s->wo_sync)
		rocksdb_writeoptions_destroy(s->wo_sync);
	if (s->opts)
		rocksdb_options_destroy(s->opts);
	if (s->table)
		rocksdb_block_based_options_destroy(s->table);
	else if (s->filter)
		rocksdb_filterpolicy_destroy(s->filter);
	if (s->cache)
		rocksdb_cache_destroy(s->cache);
	store_wmap_free(s->docs);
	store_wmap_free(s->groups);
	store_wmap_free(s->mtimes);
	store_wmap_free(s->currents);
	store_wmap_free(s->names);
	pthread_mutex_destroy(&s->writer);
	pthread_mutex_destroy(&s->follow);
	pthread_rwlock_destroy(&s->wal);
	free(s->path);
	free(s);
}

const char *kx_store_path(const struct kx_store *s)
{
	return s->path;
}

uint64_t kx_store_sequence(struct kx_store *s)
{
	return rocksdb_get_latest_sequence_number(s->db);
}

int kx_store_checkpoint(struct kx_store *s, const char *dir, uint64_t log_size_for_flush,
			struct kx_store_point *ret, char **ret_err)
{
	if (s->flags & KX_STORE_READONLY)
		return -EROFS;
	char *err = NULL;
	/* no write between the point read and the checkpoint — no commit, and none of what the writer
	 * keeps beside its commits (sizes, index.tsv's rows), which go through store_write without
	 * the writer's lock: the checkpoint is exactly that point */
	pthread_mutex_lock(&s->writer);
	pthread_rwlock_wrlock(&s->wal);
	struct kx_store_point pt = { .sequence = rocksdb_get_latest_sequence_number(s->db), .generation = s->gen };
	rocksdb_checkpoint_t *cp = rocksdb_checkpoint_object_create(s->db, &err);
	if (!err)
		rocksdb_checkpoint_create(cp, dir, log_size_for_flush, &err);
	pthread_rwlock_unlock(&s->wal);
	pthread_mutex_unlock(&s->writer);
	if (cp)
		rocksdb_checkpoint_object_destroy(cp);
	if (err) {
		int r = store_errno(err);
		if (strstr(err, "exists"))
			r = -EEXIST;
		if (ret_err && asprintf(ret_err, "cannot take a checkpoint of store '%s' into '%s': %s", s->path, dir,
					err) < 0)
			*ret_err = NULL;
		rocksdb_free(err);
		return r;
	}
	*ret = pt;
	return 0;
}
