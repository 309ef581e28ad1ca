// SPDX-License-Identifier: MIT
/*
 * Content: the stamp, bytes and size of every file of the tree. Bytes are rendered (src/render)
 * from the views of run.c and kept in the content cache; a SHA256SUMS is made of the other files'
 * bytes, taken from that cache, so reading a file and hashing it for SHA256SUMS recurse within
 * this file.
 */
#include "private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- content ---------------------------------------------------------------------------------- */

static int read_stamped(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t stamp,
			const struct kx_content **ret);

/*
 * SHA256SUMS, written or only sized by one walk, so that its size is its rendered length. Each
 * line is 64 hex digits, two spaces, the name and a newline, whatever it hashes
 * (kx_sha256sums_line_len): a listing that hands out sizes (`ls -l`, `grep -r`, rsync) renders and
 * hashes nothing for a SHA256SUMS. The bytes come from the content cache: a run's files are
 * rendered once whether its directory or its group's SHA256SUMS asks, and hashed once for both.
 */
struct sums {
	struct kx_tree *t;
	struct kx_view *v;
	struct kx_buf *out; /* NULL: the size only */
	uint64_t size;
	int64_t stamp;      /* the group's: that of its files and its runs' rank-dependent ones */
	const char *dir;    /* in a group's SHA256SUMS, the rank directory of the run's files; NULL in a run's */
};

static int sums_add(void *ctx, const char *name, const struct kx_node *n)
{
	struct sums *s = ctx;
	bool run_file = n->type == KX_NODE_RUN_FILE || n->type == KX_NODE_RUNS_FILE;
	if (run_file && n->file == KX_RF_SHA256SUMS && !s->dir)
		return 0; /* a run's SHA256SUMS does not list itself */
	s->size += kx_sha256sums_line_len((s->dir ? strlen(s->dir) + 1 : 0) + strlen(name));
	if (!s->out)
		return 0;
	char path[2 * KX_NAME_MAX];
	if (s->dir) {
		snprintf(path, sizeof(path), "%s/%s", s->dir, name);
		name = path;
	}
	bool stamped = n->type == KX_NODE_GROUP_FILE || (run_file && tree_rank_dependent(n->file));
	int64_t stamp = stamped ? s->stamp : 0;
	const struct kx_content *c;
	int r = run_file && n->file == KX_RF_MANIFEST ? kx_tree_stamp(s->t, s->v, n, &stamp) : 0;
	if (r == 0)
		r = read_stamped(s->t, s->v, n, stamp, &c);
	if (r < 0)
		return r == -ENOENT ? -EIO : r; /* listed, so it must be there */
	r = tree_sums_line(s->out, name, c);
	kx_content_put(c);
	return r;
}

/* An attestation's file (SPEC §8), listed as attestations/<name>. */
static int sums_add_attestation(void *ctx, const char *name, const struct kx_node *n)
{
	char path[TREE_ATT_NAME_MAX + sizeof(TREE_ATTESTATIONS_DIR) + 1];
	snprintf(path, sizeof(path), "%s/%s", TREE_ATTESTATIONS_DIR, name);
	return sums_add(ctx, path, n);
}

/* An artifact's bytes (SPEC §9), listed as artifacts/<name> by the digest they are stored under:
 * nothing is read. */
static int sums_add_artifact(void *ctx, const char *name, const struct kx_node *n)
{
	struct sums *s = ctx;
	char path[2 * KX_NAME_MAX + KX_ARTIFACT_NAME_MAX + sizeof(TREE_ARTIFACTS_DIR) + 2];
	snprintf(path, sizeof(path), "%s%s%s/%s", s->dir ? s->dir : "", s->dir ? "/" : "", TREE_ARTIFACTS_DIR, name);
	s->size += kx_sha256sums_line_len(strlen(path));
	return s->out ? kx_render_sha256sums_line(s->out, path, n->id.b) : 0;
}

/* Every file of run x's directory of type dir_type, its attestations' and artifacts' included,
 * into s. */
static int sums_run(struct sums *s, uint8_t dir_type, const struct kx_run_rec *x)
{
	int r = tree_run_files_of(s->t, s->v, dir_type, x, sums_add, s);
	if (r == 0)
		r = tree_run_attestations_of(s->t, s->v, &x->run, sums_add_attestation, s);
	return r ? r : tree_run_artifacts_of(s->t, s->v, &x->run, sums_add_artifact, s);
}

/* The SHA256SUMS of run x's directory of type dir_type (its group's stamp `stamp`), which hashes
 * that directory's own files (index.html differs by place), into out, or its size alone (out NULL;
 * ret_size NULL when only the bytes are wanted). */
static int run_sums(struct kx_tree *t, struct kx_view *v, const struct kx_run_rec *x, uint8_t dir_type, int64_t stamp,
		    struct kx_buf *out, uint64_t *ret_size)
{
	struct sums s = { .t = t, .v = v, .out = out, .stamp = stamp };
	int r = sums_run(&s, dir_type, x);
	if (ret_size)
		*ret_size = s.size;
	return r;
}

/* Group g's SHA256SUMS — its own files, then every file of every run, SHA256SUMS last — likewise. */
static int group_sums(struct kx_tree *t, struct kx_view *v, const struct gctx *g, struct kx_buf *out,
		      uint64_t *ret_size)
{
	struct sums s = { .t = t, .v = v, .out = out, .stamp = g->stamp };
	int r = 0;
	for (int f = 0; f < KX_GF_SHA256SUMS && r == 0; f++) {
		struct kx_node n = { .type = KX_NODE_GROUP_FILE, .file = (uint8_t)f, .id = g->key };
		r = sums_add(&s, kx_group_file_name((enum kx_group_file)f), &n);
	}
	for (size_t i = 0; i < g->len && r == 0; i++) {
		s.dir = g->dirnames[i];
		r = sums_run(&s, KX_NODE_RUN, &g->runs[i]);
	}
	if (ret_size)
		*ret_size = s.size;
	return r;
}

static int render_group(struct kx_tree *t, struct kx_view *v, const struct gctx *g, enum kx_group_file f,
			struct kx_buf *out)
{
	if (f == KX_GF_SHA256SUMS)
		return group_sums(t, v, g, out, NULL);
	if (f == KX_GF_INDEX_HTML) {
		struct kx_node dir = { .type = KX_NODE_GROUP, .id = g->key };
		return tree_html(t, v, &dir, kx_tree_read, out);
	}
	struct kx_group_view gv;
	tree_group_view(g, &gv);
	return kx_render_group_file(&gv, f, out);
}

/*
 * The version of a run's manifest.json: which of its workload and implementation documents are
 * missing in v, and how many signatures it carries (0 and 0 for nearly every run: both documents
 * came with it, and nobody signed it). It changes when such a document is stored late, or a
 * signature is added (they are never removed: the count names the set), and only then.
 */
int tree_manifest_stamp(struct kx_tree *t, struct kx_view *v, const struct kx_run_rec *x, int64_t *ret)
{
	uint32_t sigs;
	int r = tree_signature_count(t, v, &x->run, &sigs);
	if (r < 0)
		return r;
	*ret = (tree_doc_in(t, v, &x->workload, &x->run) ? 0 : 1) |
	       (tree_doc_in(t, v, &x->implementation, &x->run) ? 0 : 2) | (int64_t)sigs << 2;
	return 0;
}

/*
 * An attestation's file (SPEC §8): its mtime is its createdAt, and it is linked under each path of
 * the run it is about — two, or one for an alias (in runs/ only).
 */
static int attestation_use(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, int64_t *ret_mtime,
			   uint32_t *ret_links)
{
	struct pdoc *p = tree_pdoc_get(t, v, d, NULL);
	const struct kx_json *spec = p ? kx_json_get(p->json, "spec") : NULL;
	const char *subject = kx_json_get_string(spec, "subject"), *at = kx_json_get_string(spec, "createdAt");
	struct kx_digest run;
	struct kx_run_rec x;
	int r = subject && at && kx_digest_parse(subject, strlen(subject), &run) == 0 &&
			kx_time_parse(at, ret_mtime) == 0
		? tree_get_run(t, v, &run, &x)
		: -EIO;
	tree_pdoc_put(p);
	if (r == 0)
		*ret_links = x.alias ? 1 : 2;
	return r == -ENOENT ? -EIO : r;
}

struct art_links {
	struct kx_tree *t;
	struct kx_view *v;
	uint32_t links;
};

static int art_link(void *ctx, const struct kx_digest *run)
{
	struct art_links *l = ctx;
	struct kx_run_rec x;
	int r = tree_get_run(l->t, l->v, run, &x);
	if (r == 0)
		l->links += x.alias ? 1 : 2;
	return r == -ENOENT ? 0 : r;
}

int tree_artifact_use(struct kx_tree *t, struct kx_view *v, const struct kx_digest *d, uint64_t *ret_size,
		      int64_t *ret_mtime, uint32_t *ret_links)
{
	struct kx_artifact_rec a = { 0 };
	struct art_links l = { t, v, 1 };
	int r = kx_store_get_artifact(t->s, v, d, &a);
	if (r == 0)
		r = kx_store_each_announcer(t->s, v, d, art_link, &l);
	if (ret_size)
		*ret_size = a.size;
	*ret_mtime = a.received_ns;
	*ret_links = l.links;
	return r;
}

/*
 * The stamp under which a file's content is cached; and, where asked for (getattr), its mtime and
 * link count — reading the bytes needs neither, so neither the store's counters nor a document's
 * uses are looked up for it.
 */
int tree_stamp_of(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t *ret_stamp,
		  int64_t *ret_mtime, uint32_t *ret_nlink)
{
	struct kx_store_stats st;
	struct kx_run_rec x;
	int64_t mtime = 0;
	uint32_t runs = 0, links = 0;
	int r = 0;
	*ret_stamp = 0;
	switch (n->type) {
	case KX_NODE_README:
	case KX_NODE_INDEX:
	case KX_NODE_REGRESSIONS:
	case KX_NODE_CHANGES:
	case KX_NODE_HTML:
		if (n->file == KX_HTML_COMPARE) { /* compare/'s mtime, as its directory's (node.c) */
			r = tree_compare_attr(t, v, &(struct kx_node){ .type = KX_NODE_COMPARE }, ret_stamp, &runs);
			runs = 0;
			if (r == 0)
				mtime = tree_compare_mtime(t, v, *ret_stamp);
			break;
		}
		/* the root's and benchmarks/' pages: what README says may change with any drop, and
		 * README's health lines without one (the serial in the stamp's top bits) */
		kx_store_stats(t->s, v, &st);
		*ret_stamp = (int64_t)st.generation;
		if (n->type == KX_NODE_README) {
			pthread_mutex_lock(&t->health_lock);
			*ret_stamp ^= (int64_t)(t->health_serial << 44);
			pthread_mutex_unlock(&t->health_lock);
		}
		mtime = st.changed_ns;
		break;
	case KX_NODE_GROUP_FILE:
		r = tree_group_stamp(t, v, &n->id, ret_stamp);
		mtime = *ret_stamp;
		break;
	case KX_NODE_BENCH_FILE:
		r = tree_bench_file_stamp(t, v, n, ret_stamp);
		mtime = *ret_stamp;
		break;
	case KX_NODE_COMPARE_FILE:
		r = tree_compare_attr(t, v, n, ret_stamp, &runs);
		mtime = *ret_stamp;
		runs = 0;
		break;
	case KX_NODE_RUN_FILE:
	case KX_NODE_RUNS_FILE:
		if ((r = tree_get_run(t, v, &n->id, &x)) < 0)
			return r;
		if (tree_rank_dependent(n->file)) {
			r = tree_group_stamp(t, v, &x.group, ret_stamp);
			mtime = *ret_stamp;
		} else {
			/* manifest.json holds the workload and implementation documents once stored,
			 * and the signatures */
			if (n->file == KX_RF_MANIFEST)
				r = tree_manifest_stamp(t, v, &x, ret_stamp);
			mtime = x.observed_ns;
		}
		break;
	case KX_NODE_DOC:
		if (ret_mtime) {
			kx_store_stats(t->s, v, &st);
			mtime = st.created_ns;
		}
		break;
	case KX_NODE_DOC_FILE:
		if (n->file == KX_DOC_FILE_ATTESTATION && (ret_mtime || ret_nlink))
			r = attestation_use(t, v, &n->id, &mtime, &links);
		else if (n->file == KX_DOC_FILE_ARTIFACT)
			r = tree_artifact_use(t, v, &n->id, NULL, &mtime, &links);
		else if (ret_mtime || ret_nlink)
			r = tree_doc_use(t, v, &n->id, &runs, &mtime, &links);
		break;
	default:
		return -EISDIR;
	}
	if (r < 0)
		return r;
	if (ret_mtime)
		*ret_mtime = mtime;
	if (ret_nlink) /* a document's file: under benchmarks/ and runs/ of each run, runs/ of an alias */
		*ret_nlink = n->type == KX_NODE_DOC_FILE && links ? links : 1;
	return 0;
}

static int render_node(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, struct kx_buf *out)
{
	int r;
	switch (n->type) {
	case KX_NODE_README: {
		struct kx_readme_info info = { .store_path = kx_store_dir(t->s, v), .replica = kx_store_note(t->s, v) };
		struct kx_buf losses = { 0 };
		kx_store_stats(t->s, v, &info.stats);
		pthread_mutex_lock(&t->health_lock);
		char *health = t->health ? strdup(t->health) : NULL;
		pthread_mutex_unlock(&t->health_lock);
		info.health = health;
		if ((r = kx_store_losses(t->s, v, &losses)) == 0) {
			info.losses = losses.ptr;
			r = kx_render_readme(&info, out);
		}
		kx_buf_release(&losses);
		free(health);
		return r;
	}
	case KX_NODE_GROUP_FILE: {
		struct gctx *g;
		if ((r = tree_gctx_get(t, v, &n->id, &g)) < 0)
			return r;
		r = render_group(t, v, g, (enum kx_group_file)n->file, out);
		tree_gctx_put(t, g);
		return r;
	}
	case KX_NODE_BENCH_FILE: {
		if (n->file != KX_BF_INDEX_HTML)
			return tree_bench_file_render(t, v, n, out);
		struct kx_node dir = *n;
		dir.type = KX_NODE_BENCH;
		dir.file = 0;
		return tree_html(t, v, &dir, kx_tree_read, out);
	}
	case KX_NODE_INDEX:
		return tree_top_index(t, v, out);
	case KX_NODE_REGRESSIONS:
		return n->file == KX_REG_JSON ? tree_top_regressions_json(t, v, out) : tree_top_regressions(t, v, out);
	case KX_NODE_CHANGES:
		return tree_top_changes(t, v, out);
	case KX_NODE_HTML:
	case KX_NODE_COMPARE_FILE: {
		struct kx_node dir;
		if (n->type == KX_NODE_COMPARE_FILE && n->file != KX_CF_INDEX_HTML)
			return tree_compare_render(t, v, n, out);
		if ((r = kx_tree_parent(t, v, n, &dir)) < 0)
			return r;
		return tree_html(t, v, &dir, kx_tree_read, out);
	}
	case KX_NODE_DOC: {
		struct kx_buf b = { 0 };
		if ((r = tree_get_doc(t, v, &n->id, &b)) < 0)
			return r;
		struct kx_arena *a = kx_arena_new();
		struct kx_json *doc = NULL;
		struct kx_json_error e;
		r = a ? kx_json_parse(a, b.ptr, b.len, 0, &doc, NULL, &e) : -ENOMEM;
		if (r == -EINVAL)
			r = -EIO;
		if (r == 0)
			r = kx_digest_document_bytes(doc, out);
		kx_arena_free(a);
		kx_buf_release(&b);
		return r;
	}
	case KX_NODE_DOC_FILE: {
		struct pdoc *p = tree_pdoc_get(t, v, &n->id, NULL);
		if (!p)
			return -ENOENT;
		r = kx_json_write_pretty(p->json, out);
		tree_pdoc_put(p);
		return r;
	}
	default:
		return -EISDIR;
	}
}

/* Content is cached by node, except that a run's files under runs/ share the rank directory's —
 * but for those that differ by place (tree_place_dependent). */
uint64_t tree_content_key(const struct kx_node *n)
{
	if (n->type != KX_NODE_RUNS_FILE || tree_place_dependent(n->file))
		return kx_tree_ino(n);
	struct kx_node k = *n;
	k.type = KX_NODE_RUN_FILE;
	return kx_tree_ino(&k);
}

/*
 * One file of a run. The documents and manifest.json need only the record and the parsed
 * documents (what `cat manifest.json` costs); summary.txt also the group listing (rank, names);
 * index.html everything summary.txt and SIGNATURES show, and the names under runs/ it links;
 * SHA256SUMS is made of the other files' bytes, taken from the cache rather than rendered again.
 * Sibling files rendered next share the parse (pdocs) and the listing (gctx).
 */
static int read_run(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t stamp,
		    const struct kx_content **ret)
{
	enum kx_run_file f = (enum kx_run_file)n->file;
	/* SHA256SUMS needs the record alone: its files' bytes come from read_stamped; manifest.json
	 * the signatures only where its stamp counts some (tree_manifest_stamp) */
	unsigned what = f == KX_RF_SHA256SUMS ? 0
			: f == KX_RF_SUMMARY ? RV_GROUP | RV_DOCS | RV_ALIASES | RV_ATTESTATIONS | RV_SIG_CHECKS | RV_ARTIFACTS
			: f == KX_RF_CITATION ? RV_GROUP | RV_DOCS
			: f == KX_RF_DIGESTS ? RV_ALIASES
			: f == KX_RF_SIGNATURES ? RV_SIGNATURES | RV_SIG_CHECKS
			: f == KX_RF_INDEX_HTML ? RV_GROUP | RV_DOCS | RV_ALIASES | RV_SIGNATURES | RV_SIG_CHECKS |
						  RV_NAMES | RV_ATTESTATIONS | RV_ARTIFACTS
			: f == KX_RF_MANIFEST && stamp >> 2 ? RV_DOCS | RV_SIGNATURES : RV_DOCS;
	struct runv rv;
	int r = tree_runv_load_with(t, v, &n->id, what, &rv);
	if (r < 0)
		return r;
	if (!kx_render_run_has(&rv.v, f)) {
		tree_runv_release(t, &rv);
		return -ENOENT;
	}
	struct kx_buf b;
	kx_buf_init(&b, 0);
	bool in_runs = n->type == KX_NODE_RUNS_FILE;
	rv.v.in_runs = in_runs;
	if (f != KX_RF_SHA256SUMS)
		r = kx_render_run_file(&rv.v, f, &b);
	else
		r = run_sums(t, v, &rv.run, in_runs ? KX_NODE_RUNS_RUN : KX_NODE_RUN, stamp, &b, NULL);
	tree_runv_release(t, &rv);
	const struct kx_content *c = NULL;
	if (r >= 0 && !(c = tree_cache_put(t, tree_content_key(n), stamp, &b)))
		r = -ENOMEM;
	kx_buf_release(&b);
	if (r < 0)
		return r;
	*ret = c;
	return 0;
}

/* kx_tree_read once the stamp is known */
static int read_stamped(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t stamp,
			const struct kx_content **ret)
{
	uint64_t key = tree_content_key(n);
	const struct kx_content *c = tree_cache_get(t, key, stamp);
	if (c) {
		*ret = c;
		return 0;
	}
	if (n->type == KX_NODE_RUN_FILE || n->type == KX_NODE_RUNS_FILE)
		return read_run(t, v, n, stamp, ret);
	int top = n->type == KX_NODE_INDEX ? TOP_INDEX
		  : n->type == KX_NODE_REGRESSIONS ? (n->file == KX_REG_JSON ? TOP_REGRESSIONS_JSON : TOP_REGRESSIONS)
		  : n->type == KX_NODE_CHANGES	   ? TOP_CHANGES
						   : -1;
	if (top >= 0) {
		/* one builder at a time; the others wait for what it keeps (struct top_slot) */
		pthread_mutex_lock(&t->top_lock);
		if ((c = tree_top_get(t, top, stamp))) {
			pthread_mutex_unlock(&t->top_lock);
			*ret = c;
			return 0;
		}
	}
	uint64_t mark = top >= 0 ? tree_top_mark(t) : 0;
	struct kx_buf b;
	kx_buf_init(&b, 0);
	int r = render_node(t, v, n, &b);
	if (r >= 0 && top >= 0)
		tree_top_drop(t, top); /* the version before, which the build read: not held through the copy */
	c = r < 0 ? NULL : tree_cache_put(t, key, stamp, &b);
	kx_buf_release(&b);
	if (c && top >= 0)
		tree_top_keep(t, top, stamp, c, mark);
	if (top >= 0)
		pthread_mutex_unlock(&t->top_lock);
	if (r < 0)
		return r;
	if (!c)
		return -ENOMEM;
	*ret = c;
	return 0;
}

bool kx_node_is_artifact(const struct kx_node *n)
{
	return n->type == KX_NODE_DOC_FILE && n->file == KX_DOC_FILE_ARTIFACT;
}

int kx_tree_read_artifact(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, uint64_t off, void *buf,
			  size_t len, size_t *ret_n)
{
	struct kx_artifact_rec a;
	*ret_n = 0;
	if (!kx_node_is_artifact(n))
		return -EINVAL;
	int r = kx_store_get_artifact(t->s, v, &n->id, &a);
	return r < 0 ? r : kx_store_read_artifact(t->s, v, &a, off, buf, len, ret_n);
}

bool kx_node_read_in_ranges(const struct kx_node *n)
{
	return kx_node_is_artifact(n) || n->type == KX_NODE_INDEX;
}

int kx_tree_read_range(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, uint64_t off, void *buf,
		       size_t len, size_t *ret_n)
{
	*ret_n = 0;
	if (kx_node_is_artifact(n))
		return kx_tree_read_artifact(t, v, n, off, buf, len, ret_n);
	if (n->type == KX_NODE_INDEX)
		return tree_index_read(t, v, off, buf, len, ret_n);
	return -EAGAIN;
}

int kx_tree_read(struct kx_tree *t, struct kx_view *v, const struct kx_node *n,
		 const struct kx_content **ret)
{
	if (kx_node_is_artifact(n))
		return -EFBIG; /* never whole: kx_tree_read_artifact */
	int64_t stamp;
	int r = kx_tree_stamp(t, v, n, &stamp);
	if (r < 0)
		return r;
	return read_stamped(t, v, n, stamp, ret);
}

bool kx_node_versioned(const struct kx_node *n)
{
	return n->type == KX_NODE_README || n->type == KX_NODE_INDEX || n->type == KX_NODE_REGRESSIONS ||
	       n->type == KX_NODE_CHANGES ||
	       n->type == KX_NODE_HTML || n->type == KX_NODE_GROUP_FILE ||
	       n->type == KX_NODE_BENCH_FILE || n->type == KX_NODE_COMPARE_FILE ||
	       ((n->type == KX_NODE_RUN_FILE || n->type == KX_NODE_RUNS_FILE) &&
		(tree_rank_dependent(n->file) || n->file == KX_RF_MANIFEST));
}

int kx_tree_stamp(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t *ret)
{
	return tree_stamp_of(t, v, n, ret, NULL, NULL);
}

/*
 * The size of file n (of stamp `stamp`) that the sizes cache lacks, kept there: a SHA256SUMS's
 * from the names it lists (struct sums), any other file's by rendering it.
 */
int tree_size_of(struct kx_tree *t, struct kx_view *v, const struct kx_node *n, int64_t stamp, uint64_t *ret)
{
	int r;
	if (n->type == KX_NODE_GROUP_FILE && n->file == KX_GF_SHA256SUMS) {
		struct gctx *g;
		if ((r = tree_gctx_get(t, v, &n->id, &g)) < 0)
			return r;
		r = group_sums(t, v, g, NULL, ret);
		tree_gctx_put(t, g);
	} else if ((n->type == KX_NODE_RUN_FILE || n->type == KX_NODE_RUNS_FILE) && n->file == KX_RF_SHA256SUMS) {
		struct kx_run_rec x;
		if ((r = tree_get_run(t, v, &n->id, &x)) == 0) /* either place's: the same names */
			r = run_sums(t, v, &x, KX_NODE_RUN, stamp, NULL, ret);
	} else {
		const struct kx_content *c;
		if ((r = read_stamped(t, v, n, stamp, &c)) < 0)
			return r;
		*ret = c->len; /* and kept by tree_cache_put */
		kx_content_put(c);
		return 0;
	}
	if (r == 0) {
		pthread_mutex_lock(&t->lock);
		tree_size_put_locked(t, tree_content_key(n), stamp, *ret);
		pthread_mutex_unlock(&t->lock);
	}
	return r;
}
