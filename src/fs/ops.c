// SPDX-License-Identifier: MIT
/*
 * The FUSE low-level operations of kindexfs (struct fuse_lowlevel_ops): each request on the tree
 * is answered from src/tree over the current store view — 0/-errno from the tree goes back to the
 * kernel unchanged — and each on /inbox is handed to inbox.c. Around the tree's answers, the
 * operations count the inode numbers they hand out and the kernel forgets (versions.c), tell the
 * reader table (readers.c) what each process asked for, and from what it says decide which
 * listings carry files' attributes and which files the pusher stores ahead of their reader
 * (pusher.c).
 *
 * Inode numbers are the tree's (computed from content identity and decoded back by kx_tree_node),
 * so LOOKUP/FORGET need no inode table and a remount gives every path the same inode number — but
 * for the files whose bytes change (kx_node_versioned), whose every version is an inode of its
 * own, counted in versions.c's table (fs_resolve, nodes.c).
 *
 * What keeps a warm tree as cheap as a local disk (docs/mount.md, "Caching and consistency"):
 *  - long entry/attr timeouts, negative entries included: the notifier invalidates whatever a
 *    store change touches, so nothing has to expire to become right;
 *  - OPEN and OPENDIR answer ENOSYS once, which the kernel remembers for the connection
 *    (FUSE_NO_OPEN_SUPPORT / FUSE_NO_OPENDIR_SUPPORT): files then open with keep_cache and
 *    directories with cache_readdir implied, and a warm `cat` or `ls` sends nothing at all;
 *  - FLUSH is left unimplemented on read-only mounts for the same reason (ENOSYS once, then no
 *    FLUSH on close): the one round trip a no-open file would still cost — in effect `noflush`
 *    for every file. A read-write mount registers it, because the inbox fails close() on a
 *    refused manifest; see the note at fs_ops();
 *  - READDIRPLUS for every batch: a listing comes with its subdirectories' attributes, and with
 *    its files' when the reading process wants attributes (see "who reads attributes");
 *  - a LOOKUP in a directory whose listing is cached is answered from the listing;
 *  - only the "user." xattr namespace exists: other namespaces answer EOPNOTSUPP, which `ls -l`
 *    caches per file system, instead of a round trip per file for security.selinux.
 *
 * Writes: every operation that would change the tree answers EROFS (SPEC §3), whether or not the
 * mount is read-only. O_TRUNC reaches us as SETATTR (atomic_o_trunc is off for that reason).
 * On a read-write mount, /inbox and everything below it is inbox.c's: every operation whose inode
 * (or parent) is the inbox's (fs_ino_in_inbox) goes there.
 */
#include "inbox.h"

#include <fuse_lowlevel.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

/* ---- helpers ---------------------------------------------------------------------------------- */

static struct fs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static void fill_stat(const struct fs *fs, const struct kx_attr *a, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = a->ino;
	st->st_mode = a->dir ? S_IFDIR | 0555 : S_IFREG | 0444;
	st->st_nlink = a->nlink + (a->ino == 1 && fs->inbox); /* the root's subdirectories: + inbox */
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_size = (off_t)a->size;
	st->st_blksize = 4096;
	st->st_blocks = (blkcnt_t)((a->size + 511) / 512);
	struct timespec ts = kx_timespec_from_ns(a->mtime_ns); /* observedAt may be before 1970 */
	st->st_atim = st->st_mtim = st->st_ctim = ts;
}

/*
 * Entry parameters of a node, handed to the kernel: its inode number carries a lookup reference
 * (a versioned file's in the versions table, any other in the held counts), which the caller gives
 * back (unref_entry) when its reply does not arrive. 0 or -errno.
 */
static int fill_entry(struct fs *fs, struct fs_view *fv, const struct kx_node *n, struct fuse_entry_param *e)
{
	struct kx_attr a;
	int r = kx_tree_getattr(fs->tree, fv->v, n, &a);
	if (r < 0)
		return r;
	if (kx_node_versioned(n))
		a.ino = fs_versions_ref(fs, fv, n, a.stamp);
	if (!fs_ino_versioned(a.ino))
		fs_held_ref(fs, a.ino);
	memset(e, 0, sizeof(*e));
	e->ino = a.ino;
	e->generation = 1; /* inode numbers are never reused, so one generation is all there is */
	e->attr_timeout = fs->timeout;
	e->entry_timeout = fs->timeout;
	fill_stat(fs, &a, &e->attr);
	return 0;
}

static void unref_ino(struct fs *fs, uint64_t ino)
{
	if (fs_ino_versioned(ino))
		fs_versions_unref(fs, ino, 1);
	else
		fs_held_unref(fs, ino, 1);
}

static void unref_entry(struct fs *fs, const struct fuse_entry_param *e)
{
	unref_ino(fs, e->ino);
}

/* Internal failures are logged once here; ENOENT & co are answers, not failures. */
static void reply_error(struct fs *fs, fuse_req_t req, const char *op, fuse_ino_t ino, int r)
{
	if (r == -EIO || r == -ENOMEM)
		fs_log_error("%s of inode %#llx failed: %s", op, (unsigned long long)ino, strerror(-r));
	fuse_reply_err(req, -r);
}

/* ---- lifecycle -------------------------------------------------------------------------------- */

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fs *fs = userdata;
	/*
	 * Capability negotiation in the manner of libfuse's example/passthrough_hp.cc: ask for what
	 * the kernel offers and the tree can honour, drop what would be wrong for a read-only tree.
	 */
	if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
		conn->want |= FUSE_CAP_PARALLEL_DIROPS; /* the tree is thread-safe */
	/*
	 * READDIRPLUS for every batch, not only the first (READDIRPLUS_AUTO): `find` reads a whole
	 * directory before it descends, so with AUTO every subdirectory past the first batch costs a
	 * LOOKUP. Directories come with attributes, files only where the reader wants them (readers.c).
	 */
	if (conn->capable & FUSE_CAP_READDIRPLUS) {
		conn->want |= FUSE_CAP_READDIRPLUS;
		conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
	}
	if (conn->capable & FUSE_CAP_ASYNC_READ)
		conn->want |= FUSE_CAP_ASYNC_READ;
	/* O_TRUNC must reach SETATTR (and fail with EROFS), not vanish into an OPEN we never see */
	conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
	conn->want &= ~(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_POSIX_ACL | FUSE_CAP_HANDLE_KILLPRIV);
	/*
	 * Content changes only through the notifier, which invalidates page caches explicitly; an mtime
	 * or size the kernel refreshes is then already consistent with them.
	 */
	conn->want |= FUSE_CAP_AUTO_INVAL_DATA & conn->capable;
	conn->time_gran = 1;
	fs_log_debug(fs, "kernel protocol %u.%u, capable %#x, want %#x", conn->proto_major, conn->proto_minor,
		     conn->capable, conn->want);
}

/* ---- reading ---------------------------------------------------------------------------------- */

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fs_of(req);
	if (fs_ino_in_inbox(parent)) {
		fs_inbox_lookup(req, parent, name);
		return;
	}
	if (parent == 1 && fs->inbox && strcmp(name, "inbox") == 0) {
		struct fuse_entry_param e;
		fs_inbox_root_entry(fs, &e);
		fuse_reply_entry(req, &e);
		return;
	}
	struct fs_view *fv = fs_view_get(fs);
	struct kx_node dir, n;
	struct fuse_entry_param e;
	/* a directory just listed answers from its listing, without the store */
	int r = fs_dircache_lookup(fs->dirs, parent, fv->generation, name, &n);
	if (r == -EAGAIN && (r = fs_node_of(fs, fv, parent, &dir)) == 0)
		r = kx_tree_lookup(fs->tree, fv->v, &dir, name, &n);
	if (r == -ENOENT) {
		/* a negative entry, cached as long as a positive one: new names are invalidated */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = fs->timeout;
		fuse_reply_entry(req, &e);
	} else if (r == 0 && (r = fill_entry(fs, fv, &n, &e)) == 0) {
		bool push = !kx_node_is_dir(&n) && fs_reader_looks_up(fuse_req_ctx(req)->pid, e.ino);
		if (fuse_reply_entry(req, &e) != 0) {
			unref_entry(fs, &e);
		} else if (!kx_node_is_dir(&n)) {
			if (push)
				fs_push_one(fs, e.ino); /* a file looked up by name is about to be opened */
			fs_looked_up_in(fs, parent, e.ino); /* by a reader of a bare listing? */
		}
	} else {
		reply_error(fs, req, "lookup", parent, r);
	}
	fs_view_put(fs, fv);
}

/*
 * The inbox and versioned files keep tables of their own; every other inode number of the tree is
 * decoded from itself whenever it is used, and only counted for the notifier (fs_held_*).
 */
static void forget_one(struct fs *fs, uint64_t ino, uint64_t nlookup)
{
	if (fs_ino_in_inbox(ino))
		fs_inbox_forget(fs, ino, nlookup);
	else if (fs_ino_versioned(ino))
		fs_versions_unref(fs, ino, nlookup);
	else if (ino != 1)
		fs_held_unref(fs, ino, nlookup);
	fs_pushed_set(fs, ino, false); /* the kernel forgot it, and its pages */
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	forget_one(fs_of(req), ino, nlookup);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		forget_one(fs_of(req), forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (fs_ino_in_inbox(ino)) {
		fs_inbox_getattr(req, ino);
		return;
	}
	struct fs *fs = fs_of(req);
	struct fs_view *fv = fs_view_get(fs);
	struct kx_node n;
	struct kx_attr a;
	int r = fs_resolve(fs, &fv, ino, &n);
	if (r == 0)
		r = kx_tree_getattr(fs->tree, fv->v, &n, &a);
	if (r == 0 && !a.dir)
		fs_reader_saw_file(fuse_req_ctx(req)->pid);
	if (r == 0) {
		struct stat st;
		a.ino = ino;
		fill_stat(fs, &a, &st);
		fuse_reply_attr(req, &st, fs->timeout);
	} else {
		reply_error(fs, req, "getattr", ino, r);
	}
	fs_view_put(fs, fv);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	/*
	 * ENOSYS: the kernel stops sending OPEN (and RELEASE) for this connection and opens every
	 * file with keep_cache. Reads carry fh 0 and find their file by inode number.
	 */
	fuse_reply_err(req, ENOSYS);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	/* likewise for directories, which then open with cache_readdir: see dircache.c for offsets */
	fuse_reply_err(req, ENOSYS);
}

/*
 * The buffer a worker thread reads a range into, kept for its next READ: a READ's 128 KiB is
 * malloc's mmap threshold, and a buffer mapped and unmapped for each one cost a third of reading
 * index.tsv (its page faults). Freed with the thread.
 */
static pthread_key_t range_key;
static pthread_once_t range_once = PTHREAD_ONCE_INIT;

struct range_buf {
	size_t cap;
	char data[];
};

static void range_key_make(void)
{
	pthread_key_create(&range_key, free);
}

static char *range_buf(size_t size)
{
	pthread_once(&range_once, range_key_make);
	struct range_buf *b = pthread_getspecific(range_key);
	if (!b || b->cap < size) {
		free(b);
		pthread_setspecific(range_key, NULL);
		if (!(b = malloc(sizeof(*b) + (size ? size : 1))))
			return NULL;
		b->cap = size;
		pthread_setspecific(range_key, b);
	}
	return b->data;
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	if (fs_ino_in_inbox(ino)) {
		fs_inbox_read(req, ino, size, off);
		return;
	}
	struct fs *fs = fs_of(req);
	pid_t pid = fuse_req_ctx(req)->pid; /* req is gone once answered */
	struct fs_view *fv = fs_view_get(fs);
	struct kx_node n;
	const struct kx_content *c = NULL;
	int r = fs_resolve(fs, &fv, ino, &n);
	if (r == 0 && kx_node_read_in_ranges(&n)) {
		/* a range of stored bytes, not the whole file (-EAGAIN: not here, read whole below) */
		char *buf = range_buf(size);
		size_t got = 0;
		int rr = !buf ? -ENOMEM : off < 0 ? -EINVAL
				   : kx_tree_read_range(fs->tree, fv->v, &n, (uint64_t)off, buf, size, &got);
		if (rr == 0)
			fuse_reply_buf(req, buf, got);
		else if (rr != -EAGAIN)
			reply_error(fs, req, "read", ino, rr);
		if (rr != -EAGAIN) {
			fs_view_put(fs, fv);
			return;
		}
	}
	if (r == 0)
		r = kx_tree_read(fs->tree, fv->v, &n, &c);
	if (r == 0) {
		size_t len = off < 0 || (size_t)off >= c->len ? 0 : c->len - (size_t)off;
		fuse_reply_buf(req, len ? c->data + off : NULL, len < size ? len : size);
		kx_content_put(c);
	} else {
		reply_error(fs, req, "read", ino, r);
	}
	/* a reader walking a directory: push the files it will read next (pusher.c) */
	struct kx_node dir;
	if (r == 0 && off == 0 && fs->pusher && kx_tree_parent(fs->tree, fv->v, &n, &dir) == 0) {
		uint64_t dino = kx_tree_ino(&dir);
		if (fs_reader_walks(pid, dino, ino))
			fs_push(fs, dino, ino);
	}
	fs_view_put(fs, fv);
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus)
{
	if (fs_ino_in_inbox(ino)) {
		fs_inbox_readdir(req, ino, size, off, plus);
		return;
	}
	struct fs *fs = fs_of(req);
	struct fs_view *fv = fs_view_get(fs);
	struct kx_node dir;
	const struct fs_listing *l = NULL;
	size_t i = 0, used = 0, nrefs = 0;
	char *buf = NULL;
	uint64_t *refs = NULL; /* versioned inode numbers handed out in this batch */
	int r = fs_node_of(fs, fv, ino, &dir);
	if (r == 0 && !kx_node_is_dir(&dir))
		r = -ENOTDIR;
	if (r == 0 && (r = fs_dircache_get(fs->dirs, fs->tree, fv, ino, &dir, off, &l, &i)) == 1) {
		fs_view_put(fs, fv); /* a push holds no view while it stores */
		pid_t pid = fuse_req_ctx(req)->pid;
		if (plus && fs->pusher && fs_reader_ends(pid, ino) && !fs_reader_pushed(pid, ino))
			fs_push_now(fs, ino); /* before the answer: no race with the first READ */
		fuse_reply_buf(req, NULL, 0); /* the end */
		return;
	}
	/* a READDIRPLUS entry takes more than 128 bytes: the bound of what one reply can hand out */
	if (r == 0 && (!(buf = malloc(size)) || !(refs = malloc((size / 128 + 1) * sizeof(*refs)))))
		r = -ENOMEM;
	bool file_attrs = fs_reader_lists(fuse_req_ctx(req)->pid, off == 0 && fs->pusher ? ino : 0) && plus;
	bool bare = false; /* a file's entry left out (fs_listed_bare) */
	for (; r == 0 && i < l->len; i++) {
		const struct fs_dirent *d = &l->e[i];
		off_t next = fs_dircache_offset(l, i + 1);
		size_t need;
		if (plus) {
			need = fuse_add_direntry_plus(req, NULL, 0, d->name, NULL, 0);
			if (need > size - used)
				break;
			struct fuse_entry_param e;
			/* "." and ".." are named, never linked (the kernel ignores them); files see above */
			bool name_only = i < 2 || (!file_attrs && !kx_node_is_dir(&d->node));
			bare |= i >= 2 && name_only && d->node.type < KX_NODE__FS;
			if (d->node.type >= KX_NODE__FS) {
				fs_inbox_root_entry(fs, &e); /* /inbox: a fixed inode, no reference to count */
			} else if (name_only || fill_entry(fs, fv, &d->node, &e) < 0) {
				/* ino 0 means "no entry": the kernel looks the name up if it needs it */
				memset(&e, 0, sizeof(e));
				e.attr.st_ino = fs_listed_ino(fs, fv, &d->node);
				e.attr.st_mode = kx_node_is_dir(&d->node) ? S_IFDIR : S_IFREG;
			} else {
				refs[nrefs++] = e.ino;
			}
			fuse_add_direntry_plus(req, buf + used, size - used, d->name, &e, next);
		} else {
			struct stat st = { .st_ino = fs_listed_ino(fs, fv, &d->node),
					   .st_mode = kx_node_is_dir(&d->node) || d->node.type >= KX_NODE__FS ? S_IFDIR
													     : S_IFREG };
			need = fuse_add_direntry(req, buf + used, size - used, d->name, &st, next);
			if (need > size - used)
				break;
			bare |= i >= 2 && S_ISREG(st.st_mode);
		}
		used += need;
	}
	pid_t pid = fuse_req_ctx(req)->pid;
	/* the whole listing in this batch, to a reader that reads what it lists: push it right away */
	bool push = r == 0 && file_attrs && off == 0 && i == l->len && fs_reader_ends(pid, ino);
	if (r == 0 && fuse_reply_buf(req, buf, used) != 0) {
		while (nrefs)
			unref_ino(fs, refs[--nrefs]); /* the kernel never saw them */
		push = false;
	} else if (r == 0 && bare) {
		fs_listed_bare(fs, ino);
	}
	if (r != 0)
		reply_error(fs, req, plus ? "readdirplus" : "readdir", ino, r);
	free(refs);
	free(buf);
	fs_dircache_put(fs->dirs, l);
	fs_view_put(fs, fv);
	if (push) /* pid asks for the end next: push the files while it takes this answer in */
		fs_reader_set_pushed(pid, ino, fs_push_answered(fs, ino));
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, false);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, true);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	if (fs_ino_in_inbox(ino)) {
		fs_inbox_statfs(req, ino); /* the backing file system's space: cp and rsync may ask */
		return;
	}
	struct fs *fs = fs_of(req);
	struct fs_view *fv = fs_view_get(fs);
	struct kx_store_stats st;
	kx_store_stats(fs->store, fv->v, &st);
	fs_view_put(fs, fv);
	/* nothing is allocated, so no free space; file counts are what the store holds */
	struct statvfs sv = { .f_bsize = 4096, .f_frsize = 4096, .f_namemax = 255 };
	sv.f_files = st.runs * 20 + st.documents + st.groups * 5;
	fuse_reply_statfs(req, &sv);
}

/* ---- extended attributes ---------------------------------------------------------------------- */

static bool user_namespace(const char *name)
{
	return strncmp(name, "user.", 5) == 0;
}

static void reply_bytes(fuse_req_t req, const struct kx_buf *b, size_t size)
{
	if (size == 0)
		fuse_reply_xattr(req, b->len);
	else if (b->len > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, b->ptr, b->len);
}

/* The value of extended attribute `name` of a node of the tree, or (name NULL) their list. */
static void tree_xattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct fs *fs = fs_of(req);
	struct fs_view *fv = fs_view_get(fs);
	struct kx_node n;
	struct kx_buf b = { 0 };
	int r = fs_resolve(fs, &fv, ino, &n);
	if (r == 0)
		r = name ? kx_tree_xattr_get(fs->tree, fv->v, &n, name, &b) : kx_tree_xattr_list(fs->tree, fv->v, &n, &b);
	if (r == 0)
		reply_bytes(req, &b, size);
	else
		reply_error(fs, req, name ? "getxattr" : "listxattr", ino, r);
	kx_buf_release(&b);
	fs_view_put(fs, fv);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	if (fs_ino_in_inbox(ino)) {
		/* inbox files carry no extended attributes (and take none, below) */
		fuse_reply_err(req, user_namespace(name) ? ENODATA : EOPNOTSUPP);
		return;
	}
	if (!user_namespace(name)) {
		/* security.*, system.*, trusted.*: not supported here at all — and `ls -l` remembers that */
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	tree_xattr(req, ino, name, size);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	if (fs_ino_in_inbox(ino)) {
		if (size == 0)
			fuse_reply_xattr(req, 0);
		else
			fuse_reply_buf(req, NULL, 0);
		return;
	}
	tree_xattr(req, ino, NULL, size);
}

/* ---- writes: the tree is read-only (SPEC §3); the inbox is inbox.c's ---------------------------- */

static void erofs(fuse_req_t req)
{
	fuse_reply_err(req, EROFS);
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{
	if (fs_ino_in_inbox(ino))
		fs_inbox_setattr(req, ino, attr, to_set);
	else
		erofs(req);
}

/* mknod, mkdir, symlink, link: the inbox holds files written through create only */
static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	fuse_reply_err(req, fs_ino_in_inbox(parent) ? EPERM : EROFS);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	fuse_reply_err(req, fs_ino_in_inbox(parent) ? EPERM : EROFS);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (fs_ino_in_inbox(parent))
		fs_inbox_unlink(req, parent, name);
	else
		erofs(req);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (fs_ino_in_inbox(parent))
		fs_inbox_rmdir(req, parent, name);
	else if (parent == 1 && fs_of(req)->inbox && strcmp(name, "inbox") == 0)
		fuse_reply_err(req, EBUSY);
	else
		erofs(req);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, fs_ino_in_inbox(parent) ? EPERM : EROFS);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	if (fs_ino_in_inbox(parent) && fs_ino_in_inbox(newparent))
		fs_inbox_rename(req, parent, name, newparent, newname, flags);
	else if (fs_ino_in_inbox(newparent))
		fuse_reply_err(req, EXDEV); /* from the tree into the inbox: mv copies (and fails to unlink) */
	else
		erofs(req);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	fuse_reply_err(req, fs_ino_in_inbox(newparent) ? EPERM : EROFS);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi)
{
	if (fs_ino_in_inbox(parent))
		fs_inbox_create(req, parent, name, mode, fi);
	else
		erofs(req);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	if (fs_ino_in_inbox(ino))
		fs_inbox_write(req, ino, buf, size, off);
	else
		erofs(req);
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
			int flags)
{
	/* the inbox: not supported, which mv and cp -a quietly accept (EROFS they would report) */
	fuse_reply_err(req, fs_ino_in_inbox(ino) ? EOPNOTSUPP : EROFS);
}

static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	fuse_reply_err(req, fs_ino_in_inbox(ino) ? EOPNOTSUPP : EROFS);
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
			 struct fuse_file_info *fi)
{
	fuse_reply_err(req, fs_ino_in_inbox(ino) ? EOPNOTSUPP : EROFS);
}

static void op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in, struct fuse_file_info *fi_in,
			       fuse_ino_t ino_out, off_t off_out, struct fuse_file_info *fi_out, size_t len,
			       int flags)
{
	/* into the inbox: EOPNOTSUPP makes the kernel or cp fall back to read + write, which we see */
	fuse_reply_err(req, fs_ino_in_inbox(ino_out) ? EOPNOTSUPP : EROFS);
}

/* ---- read-write mounts only: close, sync and release reach the inbox -------------------------- */

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (fs_ino_in_inbox(ino))
		fs_inbox_flush(req, ino);
	else
		fuse_reply_err(req, 0); /* the tree: nothing to flush, answered at once */
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	if (fs_ino_in_inbox(ino))
		fs_inbox_fsync(req, ino, datasync);
	else
		fuse_reply_err(req, 0);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	/* only handles from CREATE (the inbox) are ever released: OPEN is off */
	if (fs_ino_in_inbox(ino))
		fs_inbox_release(req, ino);
	else
		fuse_reply_err(req, 0);
}

/*
 * Left out on purpose, so that the kernel's first ENOSYS turns them off for the connection:
 * access (no permission model beyond the modes; default_permissions checks those in the kernel),
 * flush, fsync and release on read-only mounts (see the file comment; nothing is ever dirty, and
 * RELEASE is never sent once OPEN is off), fsyncdir, releasedir (never sent once OPENDIR is off),
 * locks (local to the kernel).
 */
static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.open = op_open,
	.opendir = op_opendir,
	.read = op_read,
	.readdir = op_readdir,
	.readdirplus = op_readdirplus,
	.statfs = op_statfs,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
	.setattr = op_setattr,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.create = op_create,
	.write = op_write,
	.setxattr = op_setxattr,
	.removexattr = op_removexattr,
	.fallocate = op_fallocate,
	.copy_file_range = op_copy_file_range,
};

/*
 * The inbox: its files are created with CREATE (which returns a real file handle), and files
 * opened again without OPEN are found by inode number, so the no-open choice above does not stand
 * in its way. Rejecting a manifest at close() needs FLUSH: registering .flush turns FLUSH back on
 * for every file of the mount (one round trip per close outside /inbox, answered at once) — so
 * only -o rw mounts register it, and read-only mounts keep `noflush` for every file.
 */
static struct fuse_lowlevel_ops rw_ops;

const void *fs_ops(bool rw, size_t *ret_size)
{
	*ret_size = sizeof(ops);
	if (!rw)
		return &ops;
	rw_ops = ops;
	rw_ops.flush = op_flush;
	rw_ops.fsync = op_fsync;
	rw_ops.release = op_release;
	return &rw_ops;
}
