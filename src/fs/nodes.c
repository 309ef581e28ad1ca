// SPDX-License-Identifier: MIT
/*
 * Node resolution: the node of the tree an inode number names, and the inode number a listing
 * shows for a node. Tree inode numbers decode by themselves (kx_tree_node), the runs/<id>/ ones
 * from the cached runs/ listing where there is one (dircache.c); a versioned file's number is
 * looked up in the table of held versions (versions.c), whose view may answer in the current
 * one's stead. Used by the operations (ops.c) and the pusher (pusher.c) alike.
 */
#include "fs.h"

#include <errno.h>

int fs_node_of(struct fs *fs, struct fs_view *fv, uint64_t ino, struct kx_node *ret)
{
	/*
	 * A runs/<id>/ directory or file: from the runs/ listing if it is cached. `find` lists every
	 * entry of runs/ before it enters the first, by when the tree's table of recent inodes has
	 * forgotten them, and decoding one from the store is a prefix seek.
	 */
	char name[KX_SHORTID_LEN + 1];
	struct kx_node runs = { .type = KX_NODE_RUNS }, run;
	if (kx_tree_ino_runs_name(ino, name) &&
	    fs_dircache_lookup(fs->dirs, kx_tree_ino(&runs), fv->generation, name, &run) == 0 &&
	    kx_tree_ino_of_run(ino, &run, ret))
		return 0;
	int r = kx_tree_node(fs->tree, fv->v, ino, ret);
	/* an inode the kernel still holds but the tree cannot decode: it is stale, not missing */
	return r == -ENOENT ? -ESTALE : r;
}

/*
 * The node an inode number names, and the view to answer in: *fv (the current view, referenced
 * by the caller) unless `ino` is a version of a file that has changed since — then the view that
 * version was handed out in, which replaces *fv (the caller puts whichever it ends with).
 */
int fs_resolve(struct fs *fs, struct fs_view **fv, uint64_t ino, struct kx_node *ret)
{
	if (!fs_ino_versioned(ino))
		return fs_node_of(fs, *fv, ino, ret);
	uint64_t plain;
	int64_t stamp, now;
	struct fs_view *held;
	int r = fs_versions_find(fs, ino, &plain, &stamp, &held);
	if (r < 0)
		return r;
	if ((r = fs_node_of(fs, held, plain, ret)) == 0 && kx_tree_stamp(fs->tree, (*fv)->v, ret, &now) == 0 &&
	    now == stamp) {
		fs_view_put(fs, held); /* still the current version */
		return 0;
	}
	fs_view_put(fs, *fv);
	*fv = held;
	return r;
}

/* The inode number a listing shows for a node (a versioned file's current version). */
uint64_t fs_listed_ino(struct fs *fs, struct fs_view *fv, const struct kx_node *n)
{
	int64_t stamp;
	uint64_t ino = kx_tree_ino(n);
	if (kx_node_versioned(n) && kx_tree_stamp(fs->tree, fv->v, n, &stamp) == 0)
		ino = fs_version_ino(ino, stamp);
	return ino;
}
