// SPDX-License-Identifier: MIT
/*
 * The daemon's table of versioned inodes (src/fs/versions.c) without FUSE: what LOOKUP,
 * READDIRPLUS and FORGET do to it, checked against a plain array of counts through a long random
 * sequence of references and forgets over 200,000 versions (the table's segments grow and shrink,
 * its probe runs are cut by erasures many times over); the inode number handed out is the file's
 * version number, a forgotten one is gone, the view is held while an entry holds it, and the
 * table's memory follows what the kernel holds, both ways.
 */
#include "tap.h"
#include "test-helpers.h"

#include "../../src/fs/fs.h"
#include "kx/store.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 200000
#define OPS 2000000
#define ENTRY_BYTES 24
#define EMPTY_BYTES (256 * 16 * ENTRY_BYTES) /* every segment at its smallest */

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct key {
	struct kx_node node;
	int64_t stamp;
	uint32_t count; /* lookups the model's kernel holds */
};

static struct key keys[N];

/* Half the keys are run manifests, a file each; the other half are second and third versions
 * (other stamps) of the files of the first half, as after drops. */
static void make_keys(void)
{
	for (size_t i = 0; i < N; i++) {
		struct key *k = &keys[i];
		size_t base = i < N / 2 ? i : (i - N / 2) / 2;
		k->node = (struct kx_node){ .type = KX_NODE_RUN_FILE, .file = KX_RF_MANIFEST };
		uint64_t z = (base + 1) * 0x9e3779b97f4a7c15ull;
		memcpy(k->node.id.b, &z, sizeof(z));
		k->stamp = 1000 + (i < N / 2 ? 0 : 1 + (int64_t)((i - N / 2) % 2));
	}
}

static uint64_t ino_of(const struct key *k)
{
	return fs_version_ino(kx_tree_ino(&k->node), k->stamp);
}

/* Whether the table answers for key k as the model says: held with its file and stamp, or stale. */
static bool agrees(struct fs *fs, const struct key *k)
{
	uint64_t plain = 0;
	int64_t stamp = 0;
	struct fs_view *fv = NULL;
	int r = fs_versions_find(fs, ino_of(k), &plain, &stamp, &fv);
	if (fv)
		fs_view_put(fs, fv);
	if (!k->count)
		return r == -ESTALE;
	return r == 0 && plain == kx_tree_ino(&k->node) && stamp == k->stamp && fv == fs->view;
}

int main(void)
{
	char *dir = scratch_dir("versions");
	char path[512];
	snprintf(path, sizeof(path), "%s/store", dir);
	struct fs fs = { 0 };
	char *err = NULL;
	if (kx_store_open(path, KX_STORE_CREATE, &fs.store, &err) < 0) {
		printf("Bail out! cannot open a store in %s: %s\n", path, err ? err : "?");
		return 2;
	}
	if (fs_view_init(&fs) < 0 || fs_versions_init(&fs) < 0) {
		printf("Bail out! out of memory\n");
		return 2;
	}
	make_keys();
	ok(kx_node_versioned(&keys[0].node), "a run's manifest.json is versioned");

	/* every version looked up once, as `ls -lR` does */
	struct fs_view *fv = fs_view_get(&fs);
	bool numbers = true;
	for (size_t i = 0; i < N; i++) {
		numbers &= fs_versions_ref(&fs, fv, &keys[i].node, keys[i].stamp) == ino_of(&keys[i]);
		keys[i].count = 1;
	}
	ok(numbers, "each version gets its own number, mixed from its file and stamp");
	ok(!fs_versions_plain_used(&fs), "no version is handed out under its plain number");
	size_t views = 0, bytes = 0;
	size_t held = fs_versions_count(&fs, &views, &bytes);
	ok(held == N && views == 1, "200,000 versions held, in one view (%zu, %zu)", held, views);
	ok(fs.view->held, "the view is held by them");
	/* 64–80 % full: the old table of 32-byte entries doubling at 80 % took 32 MiB here */
	ok(bytes * 64 <= (size_t)N * ENTRY_BYTES * 100 + EMPTY_BYTES * 64,
	   "the table is at least 64 %% full: %zu bytes for %d versions", bytes, N);
	bool all = true;
	for (size_t i = 0; i < N; i++)
		all &= agrees(&fs, &keys[i]);
	ok(all, "every version is found with its file and stamp");

	/* references and forgets at random, checked against the model as they go */
	bool same = true;
	size_t bad = 0;
	for (size_t op = 0; op < OPS; op++) {
		struct key *k = &keys[next() % N];
		uint64_t dice = next() % 8;
		if (dice < 3) {
			same &= fs_versions_ref(&fs, fv, &k->node, k->stamp) == ino_of(k);
			k->count++;
		} else if (dice < 6 && k->count) {
			uint32_t n = 1 + (uint32_t)(next() % k->count);
			fs_versions_unref(&fs, ino_of(k), n);
			k->count -= n;
		} else if (!agrees(&fs, k)) {
			bad++;
		}
	}
	size_t want = 0;
	for (size_t i = 0; i < N; i++) {
		want += keys[i].count > 0;
		if (!agrees(&fs, &keys[i]))
			bad++;
	}
	ok(same && bad == 0, "2,000,000 random references and forgets: the table agrees with the model (%zu wrong)",
	   bad);
	held = fs_versions_count(&fs, &views, &bytes);
	ok(held == want, "the count is what the model holds (%zu, %zu)", held, want);

	/* a FORGET of more than was looked up, and of a number never handed out, change nothing else */
	fs_versions_unref(&fs, 0x1234567ull, 1);
	ok(fs_versions_count(&fs, NULL, NULL) == want, "forgetting an unknown number changes nothing");

	/* the kernel forgets everything: the entries, the view's hold and the memory go */
	for (size_t i = 0; i < N; i++)
		if (keys[i].count) {
			fs_versions_unref(&fs, ino_of(&keys[i]), keys[i].count);
			keys[i].count = 0;
		}
	held = fs_versions_count(&fs, &views, &bytes);
	ok(held == 0 && views == 0, "all forgotten: no entry, no view held (%zu, %zu)", held, views);
	ok(!fs.view->held, "the view is no longer held");
	ok(bytes <= EMPTY_BYTES, "the table gives its memory back: %zu bytes", bytes);
	all = true;
	for (size_t i = 0; i < N; i += 97)
		all &= agrees(&fs, &keys[i]);
	ok(all, "a forgotten version is stale");

	fs_view_put(&fs, fv);
	fs_versions_free(&fs);
	fs_view_release(&fs);
	kx_store_close(fs.store);
	scratch_remove(dir);
	return tap_done();
}
