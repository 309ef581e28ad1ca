/* SPDX-License-Identifier: MIT */
/*
 * The inbox of a read-write mount (SPEC §4, docs/inbox.md): the FUSE operations on /inbox, its
 * receipt directories .accepted/ and .rejected/ and their files, which ops.c hands over whenever
 * an inode number (or a parent's) is the inbox's. Private to src/fs, and with FUSE types: only
 * the .c files of src/fs include it.
 *
 * Inode numbers of the inbox are the daemon's own, type KX_NODE__FS in the tree's encoding:
 * KX_INO_INBOX | 0, 1, 2 for /inbox, /inbox/.accepted, /inbox/.rejected, and a counter from 16 up
 * for files — one number per file the daemon has seen under a name, never reused while mounted.
 */
#ifndef KX_FS_INBOX_H
#define KX_FS_INBOX_H

#include "fs.h"

#include <fuse_lowlevel.h>

#define KX_INO_INBOX ((uint64_t)KX_NODE__FS << KX_INO_TYPE_SHIFT)

static inline bool fs_ino_in_inbox(uint64_t ino)
{
	return kx_ino_type(ino) == KX_NODE__FS;
}

/*
 * Set up STORE/inbox (created 0755 with .accepted/ and .rejected/ when missing; leftovers of an
 * interrupted receipt removed) and the daemon's table of inbox files. 0 or -errno, with a message
 * in *ret_err (malloc'd).
 */
int fs_inbox_open(struct fs *fs, const char *store_path, char **ret_err);
void fs_inbox_close(struct fs *fs);
/*
 * Start the decider (once the notifier runs), first queueing the files a killed daemon left
 * renamed but undecided; 0 or -errno. fs_inbox_stop decides what is still queued and stops it
 * (before the notifier stops).
 */
int fs_inbox_start(struct fs *fs);
void fs_inbox_stop(struct fs *fs);

/* The entry of /inbox itself, for LOOKUP and READDIRPLUS of the root. */
void fs_inbox_root_entry(struct fs *fs, struct fuse_entry_param *e);

/* Operations; each replies to req. Inode arguments are the inbox's (fs_ino_in_inbox). */
void fs_inbox_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void fs_inbox_forget(struct fs *fs, fuse_ino_t ino, uint64_t nlookup);
void fs_inbox_getattr(fuse_req_t req, fuse_ino_t ino);
void fs_inbox_setattr(fuse_req_t req, fuse_ino_t ino, const struct stat *attr, int to_set);
void fs_inbox_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off);
void fs_inbox_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off);
void fs_inbox_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi);
void fs_inbox_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void fs_inbox_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void fs_inbox_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		     const char *newname, unsigned int flags);
void fs_inbox_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus);
void fs_inbox_flush(fuse_req_t req, fuse_ino_t ino);
void fs_inbox_fsync(fuse_req_t req, fuse_ino_t ino, int datasync);
void fs_inbox_release(fuse_req_t req, fuse_ino_t ino);
void fs_inbox_statfs(fuse_req_t req, fuse_ino_t ino);

#endif
