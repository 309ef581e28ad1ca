// SPDX-License-Identifier: MIT
/*
 * bench/backup-engine.c — one step of the weighing in bench/backup-engine: RocksDB's own
 * BackupEngine (the C API of Debian's librocksdb) next to the checkpoints kindex publishes.
 * Each call does one thing to a store that no other process has open and prints its wall time:
 *
 *   backup-engine-step checkpoint STORE DIR   a checkpoint into DIR (as kindex watch --publish:
 *                                             the memtable flushed first), hard links where it can
 *   backup-engine-step backup STORE BACKUPS   a new backup in BACKUPS (flushed first; table files
 *                                             shared between backups, copied the first time)
 *   backup-engine-step verify BACKUPS         verify the latest backup (file sizes and checksums)
 *   backup-engine-step restore BACKUPS DIR    restore the latest backup into DIR
 *
 * Output: "STEP SECONDS" and, for backup, the backup's id, size and file count.
 */
#include <rocksdb/c.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void check(char *err, const char *what)
{
	if (err) {
		fprintf(stderr, "backup-engine-step: %s: %s\n", what, err);
		exit(1);
	}
}

static rocksdb_t *open_store(const char *path, rocksdb_options_t **ret_opts)
{
	rocksdb_options_t *o = rocksdb_options_create();
	rocksdb_options_set_compression(o, rocksdb_lz4_compression);
	char *err = NULL;
	rocksdb_t *db = rocksdb_open(o, path, &err);
	check(err, path);
	*ret_opts = o;
	return db;
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "verify") != 0 && argc < 4)) {
		fprintf(stderr, "usage: backup-engine-step checkpoint|backup STORE DIR | verify BACKUPS | restore BACKUPS DIR\n");
		return 2;
	}
	const char *step = argv[1];
	char *err = NULL;
	rocksdb_options_t *o = NULL;
	double t0 = now();
	if (strcmp(step, "checkpoint") == 0) {
		rocksdb_t *db = open_store(argv[2], &o);
		t0 = now();
		rocksdb_checkpoint_t *cp = rocksdb_checkpoint_object_create(db, &err);
		check(err, "checkpoint");
		rocksdb_checkpoint_create(cp, argv[3], 0 /* flush the memtable first */, &err);
		check(err, argv[3]);
		printf("checkpoint %.4f\n", now() - t0);
		rocksdb_checkpoint_object_destroy(cp);
		rocksdb_close(db);
	} else if (strcmp(step, "backup") == 0) {
		rocksdb_t *db = open_store(argv[2], &o);
		t0 = now();
		rocksdb_backup_engine_t *be = rocksdb_backup_engine_open(o, argv[3], &err);
		check(err, argv[3]);
		rocksdb_backup_engine_create_new_backup_flush(be, db, 1, &err);
		check(err, "backup");
		double t = now() - t0;
		const rocksdb_backup_engine_info_t *info = rocksdb_backup_engine_get_backup_info(be);
		int last = rocksdb_backup_engine_info_count(info) - 1;
		printf("backup %.4f id %u size %llu files %u\n", t, rocksdb_backup_engine_info_backup_id(info, last),
		       (unsigned long long)rocksdb_backup_engine_info_size(info, last),
		       rocksdb_backup_engine_info_number_files(info, last));
		rocksdb_backup_engine_info_destroy(info);
		rocksdb_backup_engine_close(be);
		rocksdb_close(db);
	} else if (strcmp(step, "verify") == 0 || strcmp(step, "restore") == 0) {
		o = rocksdb_options_create();
		rocksdb_backup_engine_t *be = rocksdb_backup_engine_open(o, argv[2], &err);
		check(err, argv[2]);
		const rocksdb_backup_engine_info_t *info = rocksdb_backup_engine_get_backup_info(be);
		uint32_t id = rocksdb_backup_engine_info_backup_id(info, rocksdb_backup_engine_info_count(info) - 1);
		rocksdb_backup_engine_info_destroy(info);
		t0 = now();
		if (strcmp(step, "verify") == 0) {
			rocksdb_backup_engine_verify_backup(be, id, &err);
			check(err, "verify");
		} else {
			rocksdb_restore_options_t *ro = rocksdb_restore_options_create();
			rocksdb_backup_engine_restore_db_from_latest_backup(be, argv[3], argv[3], ro, &err);
			check(err, "restore");
			rocksdb_restore_options_destroy(ro);
		}
		printf("%s %.4f\n", step, now() - t0);
		rocksdb_backup_engine_close(be);
	} else {
		fprintf(stderr, "backup-engine-step: unknown step '%s'\n", step);
		return 2;
	}
	rocksdb_options_destroy(o);
	return 0;
}
