// SPDX-License-Identifier: MIT
/*
 * The reader table: what the daemon remembers of the last READERS processes that read the tree,
 * one slot per pid, the least recently used slot reused. The operations (ops.c) tell it what each
 * request shows of its process and ask it what that process will do next; no other file of src/fs
 * is called from here, and no FUSE type is used.
 *
 * Who reads attributes. READDIRPLUS may answer a name with or without its attributes (an entry
 * with inode 0 is just a name, and the kernel LOOKUPs it if it needs more). For directories
 * attributes are cheap and always given; for a file they mean rendering it (its size is its
 * rendered length). `find` never wants them, `ls -l`, rsync, tar and grep want every one. The
 * kernel asks READDIRPLUS either way (READDIRPLUS_AUTO uses it for the first batch of every
 * directory), so the daemon remembers, per process, whether it has asked for a file's attributes
 * lately: those get attributes in their listings, one LOOKUP each of their first directory later;
 * the others get names, and nothing is rendered for them.
 *
 * Who walks what it lists. The same slots say which process reads the files of the directories it
 * lists, or opens what it looks up, for the pusher (pusher.c): see fs_reader_walks and
 * fs_reader_ends.
 *
 * Correctness never depends on this table — only the number of round trips. Thread-safe: one
 * mutex guards every slot.
 */
#include "fs.h"

#include <pthread.h>
#include <string.h>

#define READERS 64

static struct {
	pthread_mutex_t lock;
	struct {
		pid_t pid;
		uint64_t used;   /* readers.clock when last seen: the least recently used slot is reused */
		bool files;      /* it asked for a file's attributes or bytes: give it attributes */
		uint64_t listed; /* the directory it last began to list (pusher.c) */
		uint64_t dir;    /* the directory of its last file read from the start */
		unsigned reads;  /* how many in a row it read there */
		bool walker;     /* it read files of a directory it had listed: it reads what it lists */
		uint64_t pushed; /* the directory whose files were pushed as its listing was answered */
		uint64_t looked_up; /* the file it last looked up */
		bool opens;      /* it read the file it had just looked up: it opens what it looks up */
	} v[READERS];
	uint64_t clock;
} readers = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The slot of pid, or -1 (readers.lock held). */
static int reader_find(pid_t pid)
{
	for (int i = 0; i < READERS; i++)
		if (readers.v[i].pid == pid && readers.v[i].used)
			return i;
	return -1;
}

/* The slot of pid, made from the least recently used one if pid has none; marked used now. */
static int reader_slot(pid_t pid)
{
	int slot = reader_find(pid);
	if (slot < 0) {
		slot = 0;
		for (int i = 1; i < READERS; i++)
			if (readers.v[i].used < readers.v[slot].used)
				slot = i;
		memset(&readers.v[slot], 0, sizeof(readers.v[slot]));
		readers.v[slot].pid = pid;
	}
	readers.v[slot].used = ++readers.clock;
	return slot;
}

void fs_reader_saw_file(pid_t pid)
{
	pthread_mutex_lock(&readers.lock);
	readers.v[reader_slot(pid)].files = true;
	pthread_mutex_unlock(&readers.lock);
}

bool fs_reader_looks_up(pid_t pid, uint64_t ino)
{
	pthread_mutex_lock(&readers.lock);
	int slot = reader_slot(pid);
	readers.v[slot].files = true;
	readers.v[slot].looked_up = ino;
	bool opens = readers.v[slot].opens;
	pthread_mutex_unlock(&readers.lock);
	return !opens;
}

bool fs_reader_lists(pid_t pid, uint64_t dir)
{
	pthread_mutex_lock(&readers.lock);
	int slot = dir ? reader_slot(pid) : reader_find(pid);
	if (dir)
		readers.v[slot].listed = dir;
	bool yes = slot >= 0 && readers.v[slot].files;
	pthread_mutex_unlock(&readers.lock);
	return yes;
}

bool fs_reader_walks(pid_t pid, uint64_t dir, uint64_t ino)
{
	pthread_mutex_lock(&readers.lock);
	int slot = reader_slot(pid);
	readers.v[slot].files = true;
	readers.v[slot].opens = readers.v[slot].looked_up == ino; /* fs_reader_looks_up */
	if (readers.v[slot].dir != dir) {
		readers.v[slot].dir = dir;
		readers.v[slot].reads = 0;
	}
	unsigned n = ++readers.v[slot].reads;
	bool listed = readers.v[slot].listed == dir;
	readers.v[slot].walker |= listed;
	pthread_mutex_unlock(&readers.lock);
	return n >= (listed ? 1u : 2u);
}

bool fs_reader_ends(pid_t pid, uint64_t dir)
{
	pthread_mutex_lock(&readers.lock);
	int slot = reader_find(pid);
	bool yes = slot >= 0 && readers.v[slot].walker && readers.v[slot].listed == dir;
	pthread_mutex_unlock(&readers.lock);
	return yes;
}

void fs_reader_set_pushed(pid_t pid, uint64_t dir, bool all)
{
	pthread_mutex_lock(&readers.lock);
	int slot = reader_find(pid);
	if (slot >= 0)
		readers.v[slot].pushed = all ? dir : 0;
	pthread_mutex_unlock(&readers.lock);
}

bool fs_reader_pushed(pid_t pid, uint64_t dir)
{
	pthread_mutex_lock(&readers.lock);
	int slot = reader_find(pid);
	bool yes = slot >= 0 && readers.v[slot].pushed == dir;
	if (yes)
		readers.v[slot].pushed = 0;
	pthread_mutex_unlock(&readers.lock);
	return yes;
}
