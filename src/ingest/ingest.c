// SPDX-License-Identifier: MIT
/*
 * The ingest pipeline. Validation (src/manifest) has already produced canonical documents with
 * their digests; here each manifest is checked against the store — same run (idempotent), same
 * observation with another digest (conflict) — placed (src/rank) and written with its documents
 * into one transaction. The transaction reads its own writes, so two manifests of one file that
 * conflict with each other are caught like a conflict with the store.
 */
#include "private.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kx_ingest_result_release(struct kx_ingest_result *r)
{
	if (!r)
		return;
	free(r->items);
	memset(r, 0, sizeof(*r));
}

/*
 * The names placement takes from a stored workload (its slug) or implementation (its name's slug),
 * by document digest: a document never changes, and one named by digest only by run after run
 * would be read and parsed for each — a stored document may be megabytes. Shared by every thread
 * (the daemon decides files on several), under a lock held for a copy; a few dozen documents are
 * what a batch of runs names.
 */
#define NAMES_MEMO 64

struct names_memo {
	struct kx_digest d; /* zero: unused (no document hashes to it) */
	bool cut;
	char name[KX_NAME_MAX];
};

static struct names_memo names_memo[NAMES_MEMO];
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

static struct names_memo *memo_slot(const struct kx_digest *d)
{
	uint64_t h;
	memcpy(&h, d->b, sizeof(h));
	return &names_memo[h % NAMES_MEMO];
}

/* Document d's names into *ret; false when the memo does not have them. */
static bool memo_get(const struct kx_digest *d, struct names_memo *ret)
{
	pthread_mutex_lock(&names_lock);
	const struct names_memo *e = memo_slot(d);
	bool hit = kx_digest_equal(&e->d, d);
	if (hit)
		*ret = *e;
	pthread_mutex_unlock(&names_lock);
	return hit;
}

static void memo_put(const struct kx_digest *d, const char *name, bool cut)
{
	pthread_mutex_lock(&names_lock);
	struct names_memo *e = memo_slot(d);
	e->d = *d;
	e->cut = cut;
	snprintf(e->name, sizeof(e->name), "%s", name);
	pthread_mutex_unlock(&names_lock);
}

/* The stored document `d`, parsed into `a`, or NULL when not stored. */
static struct kx_json *stored_doc(struct kx_txn *t, struct kx_arena *a, const struct kx_digest *d,
				  struct kx_buf *scratch)
{
	if (kx_txn_get_doc(t, d, scratch) < 0)
		return NULL;
	struct kx_json *v = NULL;
	struct kx_json_error e;
	if (kx_json_parse(a, scratch->ptr, scratch->len, 0, &v, NULL, &e) < 0)
		return NULL;
	return v;
}

/*
 * What can be computed without the store, per manifest, beyond validation (which already holds
 * each document's canonical bytes): where the run goes, when the manifest includes its workload
 * and implementation documents.
 */
struct prep {
	bool placed;
	struct kx_group_rec g;
	struct kx_run_rec x;
};

struct kx_prepared {
	struct kx_manifest_file *f;
	struct prep *v;
	struct verify_job sigs;
};

void kx_prepared_free(struct kx_prepared *p)
{
	if (!p)
		return;
	ingest_verify_cancel(&p->sigs);
	free(p->v);
	kx_manifest_file_free(p->f);
	free(p);
}

int kx_ingest_prepare(const char *bytes, size_t len, const struct kx_manifest_limits *limits,
		      struct kx_verify_pool *pool, struct kx_prepared **ret, struct kx_problems *problems)
{
	struct kx_prepared *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	struct kx_manifest_limits lim = limits ? *limits : (struct kx_manifest_limits){ 0 };
	if (pool) {
		p->sigs.pool = pool;
		lim.on_deferred = ingest_verify_add;
		lim.deferred_ctx = &p->sigs;
	}
	int r = kx_manifest_parse(bytes, len, &lim, &p->f, problems);
	if (r < 0) {
		ingest_verify_cancel(&p->sigs);
		free(p);
		return r;
	}
	ingest_verify_seal(&p->sigs);
	p->v = calloc(p->f->len ? p->f->len : 1, sizeof(*p->v));
	if (!p->v) {
		kx_prepared_free(p);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->f->len; i++) {
		const struct kx_manifest *m = &p->f->v[i];
		struct prep *q = &p->v[i];
		if (m->doc[KX_DOC_WORKLOAD] && m->doc[KX_DOC_IMPLEMENTATION])
			q->placed = kx_rank_place(m, m->doc[KX_DOC_WORKLOAD], m->doc[KX_DOC_IMPLEMENTATION], &q->g, &q->x) == 0;
	}
	*ret = p;
	return 0;
}

static int put_docs(struct kx_txn *t, const struct kx_manifest *m, const struct prep *q, struct kx_buf *scratch)
{
	for (int d = 0; d < KX_DOC__COUNT; d++) {
		if (!m->doc[d] || kx_txn_has_doc(t, &m->digest[d]))
			continue;
		int r;
		if (m->jcs[d]) {
			r = kx_txn_put_doc(t, &m->digest[d], m->jcs[d], m->jcs_len[d]);
		} else {
			kx_buf_reset(scratch);
			r = kx_jcs_write(m->doc[d], scratch);
			if (r >= 0)
				r = kx_txn_put_doc(t, &m->digest[d], scratch->ptr, scratch->len);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "metric\tstatistic\tunit\tvalue" of each measurement of a run spec — its timing's and its
 * measurements' — sorted: two runs measured the same when these are equal */
static int measured(const struct kx_json *spec, struct kx_buf *out)
{
	struct kx_buf line = { 0 };
	char **v = NULL;
	size_t n = 0, cap = 0;
	int r = 0;
	const struct kx_json *timing = kx_json_get(spec, "timing");
	for (size_t i = 0; timing && timing->type == KX_JSON_OBJECT && i < timing->obj.len && r >= 0; i++) {
		const struct kx_json_member *q = &timing->obj.v[i];
		for (size_t j = 0; q->value->type == KX_JSON_OBJECT && j < q->value->obj.len && r >= 0; j++) {
			kx_buf_reset(&line);
			const struct kx_json_member *st = &q->value->obj.v[j];
			if ((r = kx_buf_printf(&line, "timing.%s\t%s\t\t", q->key, st->key)) >= 0 &&
			    (r = kx_jcs_write(st->value, &line)) >= 0 && (r = KX_GROW(v, cap, n, 16)) >= 0)
				r = (v[n] = strndup(line.ptr, line.len)) ? (int)n++ : -ENOMEM;
		}
	}
	const struct kx_json *ms = kx_json_get(spec, "measurements");
	for (size_t i = 0; ms && ms->type == KX_JSON_ARRAY && i < ms->arr.len && r >= 0; i++) {
		const struct kx_json *e = ms->arr.v[i];
		const char *keys[] = { "metric", "statistic", "unit" };
		kx_buf_reset(&line);
		for (size_t k = 0; k < KX_ARRAY_SIZE(keys) && r >= 0; k++) {
			const char *t = kx_json_get_string(e, keys[k]);
			r = kx_buf_printf(&line, "%s\t", t ? t : "");
		}
		const struct kx_json *val = kx_json_get(e, "value");
		if (r >= 0 && val)
			r = kx_jcs_write(val, &line);
		if (r >= 0 && (r = KX_GROW(v, cap, n, 16)) >= 0)
			r = (v[n] = strndup(line.ptr, line.len)) ? (int)n++ : -ENOMEM;
	}
	if (r >= 0 && n)
		qsort(v, n, sizeof(*v), strp_cmp);
	for (size_t i = 0; i < n; i++) {
		if (r >= 0)
			r = kx_buf_printf(out, "%s\n", v[i]);
		free(v[i]);
	}
	free(v);
	kx_buf_release(&line);
	return r < 0 ? r : 0;
}

/*
 * SPEC §2: manifest m is the same observation as stored run `other` (same source and externalId)
 * published again — an alias — when status, observedAt and every measurement (metric,
 * statistic, unit, value) are equal. 1 when so, 0 when not (a conflict), or a negative errno.
 */
static int same_observation(struct kx_txn *t, struct kx_arena *a, const struct kx_manifest *m,
			    const struct kx_digest *other, struct kx_buf *scratch)
{
	struct kx_run_rec x;
	int r = kx_txn_get_run(t, other, &x);
	if (r < 0)
		return r;
	if (x.alias || x.passed != m->facts.passed || x.observed_ns != m->facts.observed_ns)
		return 0;
	struct kx_json *doc = NULL;
	struct kx_json_error e;
	kx_buf_reset(scratch);
	if ((r = kx_txn_get_doc(t, other, scratch)) < 0)
		return r;
	if (kx_json_parse(a, scratch->ptr, scratch->len, 0, &doc, NULL, &e) < 0)
		return -EIO;
	struct kx_buf mine = { 0 }, theirs = { 0 };
	const struct kx_json *spec = kx_json_get(m->doc[KX_DOC_RUN], "spec");
	if ((r = measured(spec, &mine)) == 0 && (r = measured(kx_json_get(doc, "spec"), &theirs)) == 0)
		r = mine.len == theirs.len && (!mine.len || memcmp(mine.ptr, theirs.ptr, mine.len) == 0);
	kx_buf_release(&mine);
	kx_buf_release(&theirs);
	return r;
}

/*
 * SPEC §2: each name of the run claims its path component — its implementation's (idoc's, or the
 * externalId's segment; skip_impl when the name is that of a document already stored), its GPU's,
 * its kernel's and its pass's. 0, 1 when another name holds one (a problem, rule name-collision),
 * or a negative errno.
 */
static int claim_names(struct kx_txn *t, const struct kx_manifest *m, const struct kx_json *idoc, bool skip_impl,
		       const struct kx_group_rec *g, const struct kx_run_rec *x, const char *label,
		       struct kx_problems *pr)
{
	char impl[KX_NAME_TEXT_MAX + 1] = "", gpu[2 * KX_NAME_TEXT_MAX + 2] = "", comp[KX_NAME_MAX],
	     kernel[sizeof(g->benchmark)], pass[sizeof(g->benchmark) + sizeof(g->metric) + 2];
	size_t len;
	const char *itext = kx_rank_impl_text(kx_rank_impl_name(idoc), m->facts.external_id, &len);
	if (itext)
		snprintf(impl, sizeof(impl), "%.*s", (int)len, itext);
	kx_rank_gpu_names(kx_json_get(m->doc[KX_DOC_ENVIRONMENT], "spec"), comp, gpu, sizeof(gpu));
	kx_rank_group_names(g, kernel, sizeof(kernel), pass, sizeof(pass));
	const struct {
		char level;
		const char *comp, *name, *what, *ptr;
	} claims[] = {
		{ 'i', x->impl, skip_impl ? "" : impl, "implementation", m->doc[KX_DOC_IMPLEMENTATION] ? "/implementation/spec/name" : "/run/spec/sourceNative/externalId" },
		{ 'g', g->gpu, gpu, "GPU", "/environment/spec/hardware/product" },
		{ 'k', g->kernel, kernel, "kernel", "/run/spec/benchmark" },
		{ 'p', g->pass, pass, "pass", "/run/spec/benchmark" },
	};
	struct kx_buf other = { 0 };
	int r = 0;
	for (size_t i = 0; i < KX_ARRAY_SIZE(claims) && r == 0; i++) {
		if (!*claims[i].name)
			continue;
		kx_buf_reset(&other);
		r = kx_txn_claim_name(t, claims[i].level, claims[i].comp, claims[i].name, &other);
		if (r == 1) {
			char ptr[300], qa[KX_QUOTE_SIZE], qb[KX_QUOTE_SIZE];
			snprintf(ptr, sizeof(ptr), "%s%s", label ? label : "", claims[i].ptr);
			kx_problems_add(pr, m->line, 0, ptr, "name-collision",
					"%s %s would have the path component %s, which %s already has: two names never share a path (SPEC §2); rename one",
					claims[i].what, kx_quote(qa, claims[i].name, strlen(claims[i].name)), claims[i].comp,
					other.len ? kx_quote(qb, other.ptr, other.len) : "another name of this batch");
		}
	}
	kx_buf_release(&other);
	return r;
}

/* A run's artifacts (SPEC §9): each announced size agrees with bytes stored under its digest,
 * then each is recorded as announced by the run. */
struct announce {
	struct kx_txn *t;
	const struct kx_manifest *m;
	const char *label;
	struct kx_problems *pr;
	const struct kx_digest *run;
	bool refused;
};

static int check_announced(void *ctx, const struct kx_run_artifact *x)
{
	struct announce *an = ctx;
	struct kx_artifact_rec a;
	int r = kx_txn_get_artifact(an->t, &x->digest, &a);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	if (a.size != x->size) {
		char ptr[300], d[KX_DIGEST_STR_MAX];
		kx_digest_format(&x->digest, d);
		snprintf(ptr, sizeof(ptr), "%s/run/spec/artifacts/%zu/size", an->label ? an->label : "", x->index);
		kx_problems_add(an->pr, an->m->line, 0, ptr, "size",
				"artifact '%s' is announced as %" PRIu64 " bytes, but the stored bytes of %s are %" PRIu64,
				x->name, x->size, d, a.size);
		an->refused = true;
	}
	return 0;
}

static int announce(void *ctx, const struct kx_run_artifact *x)
{
	struct announce *an = ctx;
	return kx_txn_announce_artifact(an->t, an->run, x->index, &x->digest, x->name);
}

static int place(struct kx_txn *t, struct kx_arena *a, const struct kx_manifest *m, const struct prep *q,
		 const char *label, int64_t now, struct kx_ingest_item *item, struct kx_problems *pr,
		 struct kx_buf *scratch)
{
	item->run = m->digest[KX_DOC_RUN];
	item->line = m->line;
	struct kx_run_rec existing;
	int r = kx_txn_get_run(t, &m->digest[KX_DOC_RUN], &existing);
	if (r == 0) {
		item->outcome = KX_INGEST_PRESENT;
		return 0;
	}
	if (r != -ENOENT)
		return r;
	const struct kx_run_facts *f = &m->facts;
	if (f->source && f->external_id) {
		struct kx_digest other;
		r = kx_txn_find_source(t, f->source, f->external_id, &other);
		if (r == 0 && (r = same_observation(t, a, m, &other, scratch)) != 0) {
			if (r < 0 || (r = put_docs(t, m, q, scratch)) < 0)
				return r;
			/* its own facts and documents; its group and implementation are the run's */
			struct kx_group_rec g;
			struct kx_run_rec x;
			if ((r = kx_rank_place(m, m->doc[KX_DOC_WORKLOAD], m->doc[KX_DOC_IMPLEMENTATION], &g, &x)) < 0)
				return r;
			x.alias_of = other;
			x.ingested_ns = now;
			if ((r = kx_txn_add_alias(t, &x)) < 0)
				return r;
			item->outcome = KX_INGEST_ALIAS;
			item->alias_of = other;
			return 0;
		}
		if (r == 0) {
			char od[KX_DIGEST_STR_MAX], nd[KX_DIGEST_STR_MAX], hex[KX_DIGEST_HEX + 1];
			kx_digest_format(&other, od);
			kx_digest_format(&m->digest[KX_DOC_RUN], nd);
			kx_digest_hex(&other, hex);
			char ptr[300];
			snprintf(ptr, sizeof(ptr), "%s/run/spec/sourceNative/externalId", label ? label : "");
			kx_problems_add(pr, m->line, 0, ptr, "conflict",
					"the same observation (source '%s', externalId '%s') is already stored as run %s (runs/%.12s) with different content; this copy hashes to %s. Same run twice is fine, a changed copy is not",
					f->source, f->external_id, od, hex, nd);
			return 1;
		}
		if (r != -ENOENT)
			return r;
	}
	if ((r = put_docs(t, m, q, scratch)) < 0)
		return r;
	struct kx_group_rec g;
	struct kx_run_rec x;
	const struct kx_json *named = m->doc[KX_DOC_IMPLEMENTATION]; /* the document the name is read from */
	bool name_known = false; /* the memo's: a stored document, whose name was claimed with it */
	if (q && q->placed) {
		g = q->g;
		x = q->x;
	} else {
		const struct kx_digest *wd = &m->digest[KX_DOC_WORKLOAD], *id = &m->digest[KX_DOC_IMPLEMENTATION];
		const struct kx_json *wdoc = m->doc[KX_DOC_WORKLOAD];
		const struct kx_json *idoc = m->doc[KX_DOC_IMPLEMENTATION];
		/* the memo knows documents, not stores: it answers for one this store holds (a cheap
		 * question to the writer's cache), never for one a rolled-back file only brought */
		struct names_memo wn, in;
		const struct names_memo *wm = !wdoc && memo_get(wd, &wn) && kx_txn_has_doc(t, wd) ? &wn : NULL;
		const struct names_memo *im = !idoc && memo_get(id, &in) && kx_txn_has_doc(t, id) ? &in : NULL;
		bool wstored = !wdoc && !wm && (wdoc = stored_doc(t, a, wd, scratch));
		bool istored = !idoc && !im && (idoc = stored_doc(t, a, id, scratch));
		if ((r = kx_rank_place(m, wdoc, idoc, &g, &x)) < 0)
			return r;
		/* what placing with the document gives (kx_rank_place prefers it to any other source) */
		if (wm) {
			snprintf(g.workload_slug, sizeof(g.workload_slug), "%s", wm->name);
			g.workload_cut = wm->cut;
		} else if (wstored) {
			memo_put(wd, g.workload_slug, g.workload_cut);
		}
		if (im)
			snprintf(x.impl, sizeof(x.impl), "%s", im->name);
		else if (istored)
			memo_put(id, x.impl, false);
		named = idoc;
		name_known = im != NULL;
	}
	x.ingested_ns = now;
	if ((r = claim_names(t, m, named, name_known, &g, &x, label, pr)) != 0)
		return r;
	struct kx_group_rec existing_group;
	if (kx_txn_get_group(t, &g.key, &existing_group) == 0 && existing_group.order != g.order) {
		kx_problems_add(pr, m->line, 0, label ? label : "", "group-order",
				"comparison group %s/%s ranks %s, this run's protocol ranks the other way",
				g.benchmark, g.metric, existing_group.order == KX_ORDER_ASCENDING ? "ascending" : "descending");
		return 1;
	}
	struct announce an = { t, m, label, pr, &m->digest[KX_DOC_RUN], false };
	if ((r = kx_run_artifacts(m->doc[KX_DOC_RUN], check_announced, &an)) < 0)
		return r;
	if (an.refused)
		return 1;
	r = kx_txn_add_run(t, &x, &g, f->source, f->external_id);
	if (r < 0 || (r = kx_run_artifacts(m->doc[KX_DOC_RUN], announce, &an)) < 0)
		return r;
	item->outcome = KX_INGEST_ADDED;
	return 0;
}

/* What stored digest d is, for a message: "a BenchmarkProtocol document", "an attestation". */
static void stored_kind(struct kx_txn *t, struct kx_arena *a, const struct kx_digest *d, struct kx_buf *scratch,
			char *out, size_t cap)
{
	kx_buf_reset(scratch);
	struct kx_json *doc = stored_doc(t, a, d, scratch);
	const char *kind = doc ? kx_json_get_string(doc, "kind") : NULL;
	if (kind && strcmp(kind, KX_ATTESTATION_KIND) == 0)
		snprintf(out, cap, "an attestation");
	else
		snprintf(out, cap, "a %s document", kind ? kind : "stored");
}

/*
 * SPEC §8: attestation m stored, about its subject — a stored run (or one of this file), never
 * another document — and, for a reproduction, by a stored run of the subject's benchmark and
 * metric. 1: refused (problems appended).
 */
static int attest(struct kx_txn *t, struct kx_arena *a, const struct kx_manifest *m, const char *label, int64_t now,
		  struct kx_ingest_item *item, struct kx_problems *pr, struct kx_buf *scratch)
{
	const struct kx_attestation *x = m->att;
	item->run = x->digest;
	item->subject = x->subject;
	item->line = m->line;
	item->attestation = true;
	char ptr[300], d[KX_DIGEST_STR_MAX], what[64];
	struct kx_run_rec subject, by;
	struct kx_group_rec gs, gb;
	int r = kx_txn_get_run(t, &x->subject, &subject);
	if (r == -ENOENT) {
		kx_digest_format(&x->subject, d);
		snprintf(ptr, sizeof(ptr), "%s/spec/subject", label ? label : "");
		if (kx_txn_has_doc(t, &x->subject)) {
			stored_kind(t, a, &x->subject, scratch, what, sizeof(what));
			kx_problems_add(pr, m->line, 0, ptr, "subject", "subject %s is %s, not a run: an attestation is about a run", d, what);
		} else {
			kx_problems_add(pr, m->line, 0, ptr, "subject", "subject %s is no stored run: ingest the run first (or in the same file, before it)", d);
		}
		return 1;
	}
	if (r == 0 && x->type == KX_ATTEST_REPRODUCTION) {
		kx_digest_format(&x->run, d);
		snprintf(ptr, sizeof(ptr), "%s/spec/run", label ? label : "");
		r = kx_txn_get_run(t, &x->run, &by);
		if (r == -ENOENT) {
			kx_problems_add(pr, m->line, 0, ptr, "reproduction", "run %s is no stored run: a reproduction is a run of its own, stored before it is named (or in the same file, before it)", d);
			return 1;
		}
		if (r == 0 && (r = kx_txn_get_group(t, &subject.group, &gs)) == 0 &&
		    (r = kx_txn_get_group(t, &by.group, &gb)) == 0 &&
		    (strcmp(gs.benchmark, gb.benchmark) != 0 || strcmp(gs.metric, gb.metric) != 0)) {
			kx_problems_add(pr, m->line, 0, ptr, "reproduction", "run %s measures %s %s, the subject %s %s: a reproduction measures what its subject does", d, gb.benchmark, gb.metric, gs.benchmark, gs.metric);
			return 1;
		}
	}
	if (r < 0)
		return r;
	struct kx_attestation_ref ref = { .digest = x->digest, .created_ns = x->created_ns, .type = x->type,
					  .by = x->run };
	if ((r = kx_txn_add_attestation(t, &ref, &x->subject, x->jcs, x->jcs_len, now)) < 0)
		return r;
	item->outcome = r == 1 ? KX_INGEST_PRESENT : KX_INGEST_ADDED;
	return 0;
}

/* A manifest's run placed (added, an alias, or present already), then its signatures stored: each
 * verified by the validator, each new one counted; or an attestation stored. 1: refused (problems
 * appended). */
static int one(struct kx_txn *t, struct kx_arena *a, const struct kx_manifest *m, const struct prep *q,
	       const char *label, int64_t now, struct kx_ingest_item *item, struct kx_problems *pr,
	       struct kx_buf *scratch)
{
	if (m->att)
		return attest(t, a, m, label, now, item, pr, scratch);
	int r = place(t, a, m, q, label, now, item, pr, scratch);
	for (size_t i = 0; r == 0 && i < m->nsigs; i++) {
		const struct kx_signature *x = &m->sigs[i];
		int added = kx_txn_add_signature(t, &m->digest[KX_DOC_RUN], &x->key_id, x->pub, x->sig, now);
		if (added < 0)
			r = added;
		else
			item->signatures += added == 0;
	}
	return r;
}

struct kx_ingest_batch {
	struct kx_store *s;
	struct kx_txn *t;
	struct kx_ingest_opts opts;
	int64_t now;
	size_t files, added;
	struct kx_buf scratch;
};

int kx_ingest_batch_begin(struct kx_store *s, const struct kx_ingest_opts *opts,
			  struct kx_ingest_batch **ret)
{
	struct kx_ingest_batch *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	int r = kx_store_txn_begin(s, &b->t);
	if (r < 0) {
		free(b);
		return r;
	}
	b->s = s;
	if (opts)
		b->opts = *opts;
	b->now = b->opts.now_ns ? b->opts.now_ns : kx_now_ns();
	kx_buf_init(&b->scratch, 0);
	*ret = b;
	return 0;
}

void kx_ingest_batch_abort(struct kx_ingest_batch *b)
{
	if (!b)
		return;
	kx_txn_abort(b->t);
	kx_buf_release(&b->scratch);
	free(b);
}

size_t kx_ingest_batch_files(const struct kx_ingest_batch *b)
{
	return b->files;
}

/* Stage validated manifests: all of them, or (rolled back) none. `sigs`: their deferred signature
 * checks, NULL when there are none; they are final before the file is decided. */
static int stage(struct kx_ingest_batch *b, struct kx_arena *a, const struct kx_manifest *v,
		 const struct prep *q, size_t n, const char *const *labels, struct verify_job *sigs,
		 struct kx_ingest_result *result, struct kx_problems *pr)
{
	struct kx_ingest_item *items = calloc(n ? n : 1, sizeof(*items));
	if (!items)
		return -ENOMEM;
	kx_txn_savepoint(b->t);
	size_t failed = 0, added = 0, aliases = 0, signatures = 0, attestations = 0, attested = 0;
	int r = 0;
	for (size_t i = 0; r >= 0 && i < n; i++) {
		r = one(b->t, a, &v[i], q ? &q[i] : NULL, labels ? labels[i] : NULL, b->now, &items[i], pr,
			&b->scratch);
		if (r > 0) {
			failed++;
			r = 0;
		} else if (r == 0 && items[i].attestation) {
			attestations++;
			attested += items[i].outcome == KX_INGEST_ADDED;
		} else if (r == 0) {
			added += items[i].outcome == KX_INGEST_ADDED;
			aliases += items[i].outcome == KX_INGEST_ALIAS;
			signatures += items[i].signatures;
		}
	}
	if (r >= 0 && sigs && sigs->pool) {
		ingest_verify_finish(sigs);
		for (const struct verify_block *bl = sigs->first; r >= 0 && bl; bl = bl->next)
			for (size_t k = 0; r >= 0 && k < bl->n; k++)
				if (bl->v[k].bad) {
					r = kx_signature_refuse(&v[bl->v[k].manifest], &bl->v[k].x, pr);
					failed++;
				}
	}
	if (r < 0 || failed) {
		kx_txn_rollback(b->t);
		free(items);
		return r < 0 ? r : -EINVAL;
	}
	b->files++;
	b->added += added + aliases + signatures + attested; /* what the commit writes */
	if (result) {
		result->items = items;
		result->len = n;
		result->added = added;
		result->aliases = aliases;
		result->signatures = signatures;
		result->attestations = attestations;
		result->attestations_added = attested;
		result->present = n - attestations - added - aliases;
	} else {
		free(items);
	}
	return 0;
}

int kx_ingest_batch_add_prepared(struct kx_ingest_batch *b, struct kx_prepared *p,
				 struct kx_ingest_result *result, struct kx_problems *problems)
{
	return stage(b, p->f->arena, p->f->v, p->v, p->f->len, NULL, &p->sigs, result, problems);
}

int kx_ingest_batch_add(struct kx_ingest_batch *b, const char *bytes, size_t len,
			struct kx_ingest_result *result, struct kx_problems *problems)
{
	struct kx_prepared *p;
	int r = kx_ingest_prepare(bytes, len, &b->opts.limits, NULL, &p, problems);
	if (r < 0)
		return r;
	r = kx_ingest_batch_add_prepared(b, p, result, problems);
	kx_prepared_free(p);
	return r;
}

int kx_ingest_batch_commit(struct kx_ingest_batch *b, uint64_t *ret_generation)
{
	int r = 0;
	uint64_t gen = 0;
	if (b->added)
		r = kx_txn_commit_gen(b->t, b->opts.sync, &gen);
	else
		kx_txn_abort(b->t); /* nothing new: no commit, no generation bump */
	if (r == 0 && ret_generation) {
		if (!gen) {
			struct kx_store_stats st;
			kx_store_stats(b->s, NULL, &st);
			gen = st.generation;
		}
		*ret_generation = gen; /* this commit's own, not a later writer's */
	}
	kx_buf_release(&b->scratch);
	free(b);
	return r;
}

/* Commit a batch holding one staged decision (staging returned `r`), handing its result over. */
static int commit_single(struct kx_ingest_batch *b, int r, struct kx_ingest_result *res,
			 struct kx_ingest_result *result)
{
	if (r < 0) {
		kx_ingest_batch_abort(b);
		return r;
	}
	r = kx_ingest_batch_commit(b, &res->generation);
	if (r < 0 || !result)
		kx_ingest_result_release(res);
	else
		*result = *res;
	return r;
}

/* One decision, one commit. */
static int ingest(struct kx_store *s, struct kx_arena *a, const struct kx_manifest *v, size_t n,
		  const char *const *labels, const struct kx_ingest_opts *opts,
		  struct kx_ingest_result *result, struct kx_problems *pr)
{
	struct kx_ingest_batch *b;
	int r = kx_ingest_batch_begin(s, opts, &b);
	if (r < 0)
		return r;
	struct kx_ingest_result res = { 0 };
	return commit_single(b, stage(b, a, v, NULL, n, labels, NULL, &res, pr), &res, result);
}

int kx_ingest_bytes(struct kx_store *s, const char *bytes, size_t len,
		    const struct kx_ingest_opts *opts, struct kx_ingest_result *result,
		    struct kx_problems *problems)
{
	struct kx_ingest_batch *b;
	int r = kx_ingest_batch_begin(s, opts, &b);
	if (r < 0)
		return r;
	struct kx_ingest_result res = { 0 };
	return commit_single(b, kx_ingest_batch_add(b, bytes, len, &res, problems), &res, result);
}

int kx_ingest_trees(struct kx_store *s, struct kx_arena *a, struct kx_json *const *roots, size_t n,
		    const char *const *labels, const struct kx_ingest_opts *opts,
		    struct kx_ingest_result *result, struct kx_problems *problems)
{
	struct kx_manifest *v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	int r = 0;
	size_t bad = 0;
	for (size_t i = 0; i < n; i++) {
		struct kx_problems p;
		kx_problems_init(&p);
		if (kx_json_lint(roots[i], "", &p) < 0)
			r = -ENOMEM;
		if (r == 0 && p.len == 0)
			r = kx_manifest_check(a, roots[i], &v[i], &p);
		if (r == -ENOMEM) {
			kx_problems_release(&p);
			break;
		}
		r = 0;
		if (p.len) {
			bad++;
			char prefix[64];
			snprintf(prefix, sizeof(prefix), "/%zu", i);
			kx_problems_splice(problems, &p, labels ? labels[i] : prefix);
		}
		kx_problems_release(&p);
	}
	if (r == 0 && bad)
		r = -EINVAL;
	if (r == 0)
		r = ingest(s, a, v, n, labels, opts, result, problems);
	free(v);
	return r;
}
