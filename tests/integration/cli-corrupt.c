// SPDX-License-Identifier: MIT
/*
 * Test helper for cli-verify.sh: damages a store on purpose, the way a bad disk, a bug or a hand
 * edit would, by opening its RocksDB directory with RocksDB's C API directly (not through
 * src/store, which would never write such a thing). Key layout: src/store/keys.h.
 *
 * usage: cli-corrupt STORE doc      edit the spec of the first stored document ('D' + digest):
 *                                   still JSON, but no longer hashing to its key
 *        cli-corrupt STORE doc=HEX  the same to the document whose digest is HEX (64 hex digits)
 *        cli-corrupt STORE index    delete the first rank-index entry ('I' + group + … + run)
 *        cli-corrupt STORE index-copy  change a byte of the first rank-index entry's copy of its
 *                                   run record (the entry's value)
 *        cli-corrupt STORE bare-index  empty every rank-index entry's value and delete
 *                                   "\0index-copies", as in a store written before the index held
 *                                   the records (prints how many)
 *        cli-corrupt STORE index-nocopy  empty the first rank-index entry's value only
 *        cli-corrupt STORE source   delete the first source-index entry ('S' source \0 externalId)
 *        cli-corrupt STORE waiting  delete the first waiting-index entry ('W' document run)
 *        cli-corrupt STORE schema1  make it a store of schema 1: no 'W' entries at all, and
 *                                   "\0schema" = "kindexfs-store 1" (prints the entries removed)
 *        cli-corrupt STORE runs3    cut the records of the first three runs ('R' + digest) to 5
 *                                   bytes, which no longer decode (prints each key)
 *        cli-corrupt STORE doc-garbage  replace the first stored document with bytes that are not
 *                                   JSON
 *        cli-corrupt STORE index-garbage  cut the first rank-index entry's copy of its run record
 *                                   to 5 bytes, which no longer decode
 *        cli-corrupt STORE current  change a byte of the run digest in the first current-run entry
 *                                   ('C' + group + implementation)
 *        cli-corrupt STORE current-drop  delete the first current-run entry
 *        cli-corrupt STORE schema2  make it a store of schema 2: no 'C' entries at all, and
 *                                   "\0schema" = "kindexfs-store 2" (prints the entries removed)
 *        cli-corrupt STORE signature  flip a bit of the first stored signature ('Y' run key: the
 *                                   last byte of its value), which then no longer verifies
 *        cli-corrupt STORE tables   write the log to table files and compact them into tables of
 *                                   about 64 KiB, each holding its own key range (for cli-damage.sh,
 *                                   which flips bytes in one); prints a line per table: its file
 *                                   name, level, smallest and largest key (hex)
 * Prints the key it changed (hex) and exits 0; 1 when there was nothing to change; 2 on errors.
 */
#include <rocksdb/c.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hex(const char *k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%02x", (unsigned char)k[i]);
	printf("\n");
}

/* From the iterator on, delete each entry tagged `tag` or (`empty`) empty its value; how many. */
static unsigned long each_tagged(rocksdb_t *db, rocksdb_writeoptions_t *wo, rocksdb_iterator_t *it, char tag,
				 bool empty, char **err)
{
	unsigned long n = 0;
	for (; !*err && rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		size_t kn;
		const char *k = rocksdb_iter_key(it, &kn);
		if (kn == 0 || k[0] != tag)
			break;
		if (empty)
			rocksdb_put(db, wo, k, kn, "", 0, err);
		else
			rocksdb_delete(db, wo, k, kn, err);
		n++;
	}
	return n;
}

/* The store's log and tables compacted into small tables of disjoint key ranges; each listed. */
static int tables(const char *dir)
{
	char *err = NULL;
	rocksdb_options_t *opts = rocksdb_options_create();
	rocksdb_options_set_target_file_size_base(opts, 64u << 10);
	rocksdb_options_set_compression(opts, rocksdb_lz4_compression);
	rocksdb_t *db = rocksdb_open(opts, dir, &err);
	if (!err) {
		rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
		rocksdb_flushoptions_set_wait(fo, 1);
		rocksdb_flush(db, fo, &err);
		rocksdb_flushoptions_destroy(fo);
	}
	if (!err) {
		rocksdb_compactoptions_t *co = rocksdb_compactoptions_create();
		rocksdb_compactoptions_set_bottommost_level_compaction(co, 2 /* force */);
		rocksdb_compact_range_opt(db, co, NULL, 0, NULL, 0);
		rocksdb_compactoptions_destroy(co);
		const rocksdb_livefiles_t *lf = rocksdb_livefiles(db);
		for (int i = 0; i < rocksdb_livefiles_count(lf); i++) {
			size_t sn, ln;
			const char *sk = rocksdb_livefiles_smallestkey(lf, i, &sn);
			const char *lk = rocksdb_livefiles_largestkey(lf, i, &ln);
			printf("%s %d ", rocksdb_livefiles_name(lf, i) + 1, rocksdb_livefiles_level(lf, i));
			for (size_t k = 0; k < sn; k++)
				printf("%02x", (unsigned char)sk[k]);
			printf(" ");
			hex(lk, ln);
		}
		rocksdb_livefiles_destroy(lf);
	}
	if (err) {
		fprintf(stderr, "cli-corrupt: %s: %s\n", dir, err);
		rocksdb_free(err);
	}
	if (db)
		rocksdb_close(db);
	rocksdb_options_destroy(opts);
	return err ? 2 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: cli-corrupt STORE "
				"doc|doc=HEX|doc-garbage|index|index-copy|index-garbage|index-nocopy|bare-index|source|waiting|schema1|"
				"runs3|current|current-drop|schema2|signature|tables\n");
		return 2;
	}
	char tag, where[33] = { 'D' };
	size_t wn = 1; /* where the damage is looked for: the first key of the tag, or doc=HEX's */
	if (strncmp(argv[2], "doc=", 4) == 0) {
		const char *hx = argv[2] + 4;
		for (size_t i = 0; i < 32 && strlen(hx) == 64; i++, wn++)
			if (sscanf(hx + 2 * i, "%2hhx", (unsigned char *)&where[1 + i]) != 1)
				break;
		if (wn != 33) {
			fprintf(stderr, "cli-corrupt: doc=HEX wants the 64 hex digits of a digest\n");
			return 2;
		}
		argv[2] = "doc";
	}
	if (strcmp(argv[2], "doc") == 0 || strcmp(argv[2], "doc-garbage") == 0)
		tag = 'D';
	else if (strcmp(argv[2], "runs3") == 0)
		tag = 'R';
	else if (strcmp(argv[2], "index") == 0 || strcmp(argv[2], "index-copy") == 0 ||
		 strcmp(argv[2], "index-nocopy") == 0 || strcmp(argv[2], "bare-index") == 0 ||
		 strcmp(argv[2], "index-garbage") == 0)
		tag = 'I';
	else if (strcmp(argv[2], "source") == 0)
		tag = 'S';
	else if (strcmp(argv[2], "waiting") == 0 || strcmp(argv[2], "schema1") == 0)
		tag = 'W';
	else if (strcmp(argv[2], "current") == 0 || strcmp(argv[2], "current-drop") == 0 ||
		 strcmp(argv[2], "schema2") == 0)
		tag = 'C';
	else if (strcmp(argv[2], "signature") == 0)
		tag = 'Y';
	else if (strcmp(argv[2], "tables") == 0)
		return tables(argv[1]);
	else {
		fprintf(stderr, "cli-corrupt: unknown damage '%s'\n", argv[2]);
		return 2;
	}
	char *err = NULL;
	rocksdb_options_t *opts = rocksdb_options_create();
	rocksdb_t *db = rocksdb_open(opts, argv[1], &err);
	if (err) {
		fprintf(stderr, "cli-corrupt: cannot open %s: %s\n", argv[1], err);
		return 2;
	}
	rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
	rocksdb_writeoptions_t *wo = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(wo, 1);
	rocksdb_iterator_t *it = rocksdb_create_iterator(db, ro);
	where[0] = tag;
	rocksdb_iter_seek(it, where, wn);
	int status = 1;
	if (strcmp(argv[2], "schema1") == 0 || strcmp(argv[2], "schema2") == 0) {
		unsigned long removed = each_tagged(db, wo, it, tag, false, &err);
		static const char key[] = "\0schema";
		const char *old = tag == 'W' ? "kindexfs-store 1" : "kindexfs-store 2";
		if (!err)
			rocksdb_put(db, wo, key, sizeof(key) - 1, old, strlen(old), &err);
		if (!err)
			printf("%lu\n", removed);
		status = err ? 2 : 0;
	} else if (strcmp(argv[2], "bare-index") == 0) {
		unsigned long emptied = each_tagged(db, wo, it, 'I', true, &err);
		static const char copies_key[] = "\0index-copies";
		if (!err)
			rocksdb_delete(db, wo, copies_key, sizeof(copies_key) - 1, &err);
		if (!err)
			printf("%lu\n", emptied);
		status = err ? 2 : emptied ? 0 : 1;
	} else if (strcmp(argv[2], "runs3") == 0) {
		int cut = 0;
		for (; !err && cut < 3 && rocksdb_iter_valid(it); rocksdb_iter_next(it), cut++) {
			size_t kn, vn;
			const char *k = rocksdb_iter_key(it, &kn);
			rocksdb_iter_value(it, &vn);
			if (kn == 0 || k[0] != 'R' || vn < 5)
				break;
			rocksdb_put(db, wo, k, kn, "\x01\x02\x03\x04\x05", 5, &err);
			hex(k, kn);
		}
		status = err ? 2 : cut == 3 ? 0 : 1;
	} else if (strcmp(argv[2], "doc-garbage") == 0) {
		size_t kn;
		const char *k = rocksdb_iter_valid(it) ? rocksdb_iter_key(it, &kn) : NULL;
		if (k && kn > 0 && k[0] == 'D') {
			rocksdb_put(db, wo, k, kn, "\x7f not json", 11, &err);
			hex(k, kn);
			status = err ? 2 : 0;
		}
	} else if (rocksdb_iter_valid(it)) {
		size_t kn, vn;
		const char *k = rocksdb_iter_key(it, &kn);
		const char *v = rocksdb_iter_value(it, &vn);
		if (kn >= wn && memcmp(k, where, wn) == 0) {
			char *key = malloc(kn);
			memcpy(key, k, kn);
			if (tag == 'D') {
				/* insert a member into the spec: valid JSON, another digest */
				const char *spec = memmem(v, vn, "\"spec\":{", 8);
				if (spec) {
					size_t at = (size_t)(spec - v) + 8;
					static const char ins[] = "\"tampered\":true,";
					size_t nn = vn + sizeof(ins) - 1;
					char *nv = malloc(nn);
					memcpy(nv, v, at);
					memcpy(nv + at, ins, sizeof(ins) - 1);
					memcpy(nv + at + sizeof(ins) - 1, v + at, vn - at);
					rocksdb_put(db, wo, key, kn, nv, nn, &err);
					free(nv);
					status = err ? 2 : 0;
				}
			} else if (strcmp(argv[2], "index-garbage") == 0) {
				if (vn > 5) {
					rocksdb_put(db, wo, key, kn, "\x01\x02\x03\x04\x05", 5, &err);
					status = err ? 2 : 0;
				}
			} else if (strcmp(argv[2], "index-nocopy") == 0) {
				if (vn > 0) {
					rocksdb_put(db, wo, key, kn, "", 0, &err);
					status = err ? 2 : 0;
				}
			} else if (strcmp(argv[2], "current") == 0) {
				if (vn > 1) {
					/* byte 1: the first of the run's digest, after the record's version */
					char *nv = malloc(vn);
					memcpy(nv, v, vn);
					nv[1] ^= 1;
					rocksdb_put(db, wo, key, kn, nv, vn, &err);
					free(nv);
					status = err ? 2 : 0;
				}
			} else if (strcmp(argv[2], "index-copy") == 0 || strcmp(argv[2], "signature") == 0) {
				if (vn > 0) {
					/* the last byte: the end of the implementation's family name, or of the
					 * signature */
					char *nv = malloc(vn);
					memcpy(nv, v, vn);
					nv[vn - 1] ^= 1;
					rocksdb_put(db, wo, key, kn, nv, vn, &err);
					free(nv);
					status = err ? 2 : 0;
				}
			} else {
				rocksdb_delete(db, wo, key, kn, &err);
				status = err ? 2 : 0;
			}
			if (status == 0)
				hex(key, kn);
			free(key);
		}
	}
	if (err) {
		fprintf(stderr, "cli-corrupt: %s\n", err);
		rocksdb_free(err);
	}
	rocksdb_iter_destroy(it);
	rocksdb_readoptions_destroy(ro);
	rocksdb_writeoptions_destroy(wo);
	rocksdb_close(db);
	rocksdb_options_destroy(opts);
	return status;
}
