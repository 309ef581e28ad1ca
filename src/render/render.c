// SPDX-License-Identifier: MIT
/*
 * The files of a run directory and of a group directory, the names of both, SHA256SUMS lines and
 * the README: the top of src/render, which hands a group's history files to history.c and its
 * pictures to svg.c. Numbers are written in their JCS form (exact, locale-free) in
 * machine-readable files and rounded only in human pages (summary.txt, README), both through
 * format.c. Nothing here reads the store or the clock: the same view renders the same bytes, always.
 */
#include "private.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- formatting helpers ----------------------------------------------------------------------- */

static int pretty(const struct kx_json *v, struct kx_buf *out)
{
	return v ? kx_json_write_pretty(v, out) : -ENOENT;
}

/* ---- run files -------------------------------------------------------------------------------- */

/* One stored signature as a manifest carries it (docs/signatures.md): built in place, no arena. */
struct sig_json {
	struct kx_json obj, val[4];
	struct kx_json_member m[4];
	char key_id[KX_DIGEST_STR_MAX], pub[KX_BASE64_LEN(KX_ED25519_PUB_LEN) + 1],
		sig[KX_BASE64_LEN(KX_ED25519_SIG_LEN) + 1];
};

static void sig_json_init(struct sig_json *j, const struct kx_run_signature *x)
{
	kx_digest_format(&x->key_id, j->key_id);
	kx_base64_encode(x->pub, sizeof(x->pub), j->pub);
	kx_base64_encode(x->sig, sizeof(x->sig), j->sig);
	const char *const keys[4] = { "keyId", "algorithm", "publicKey", "value" };
	const char *const vals[4] = { j->key_id, "ed25519", j->pub, j->sig };
	j->obj = (struct kx_json){ .type = KX_JSON_OBJECT };
	j->obj.obj.v = j->m;
	j->obj.obj.len = j->obj.obj.cap = 4;
	for (int i = 0; i < 4; i++) {
		j->val[i] = (struct kx_json){ .type = KX_JSON_STRING };
		j->val[i].str.ptr = vals[i];
		j->val[i].str.len = strlen(vals[i]);
		j->m[i] = (struct kx_json_member){ keys[i], strlen(keys[i]), &j->val[i] };
	}
}

/*
 * The documents as one manifest, and the run's stored signatures beside them as the manifest that
 * brought them carried them, so that the file ingests again to the same run and signatures. No
 * signature, no member: the bytes of an unsigned run's manifest.json stay what was published.
 */
static int manifest(const struct kx_run_view *v, struct kx_buf *out)
{
	struct kx_json_member m[KX_DOC__COUNT + 1];
	struct kx_json root = { .type = KX_JSON_OBJECT };
	root.obj.v = m;
	for (int d = 0; d < KX_DOC__COUNT; d++)
		if (v->doc[d])
			m[root.obj.len++] = (struct kx_json_member){ kx_doc_member((enum kx_doc)d),
								      strlen(kx_doc_member((enum kx_doc)d)), v->doc[d] };
	struct kx_json sigs = { .type = KX_JSON_ARRAY };
	struct sig_json *js = NULL;
	if (v->n_signatures) {
		js = malloc(v->n_signatures * sizeof(*js));
		sigs.arr.v = malloc(v->n_signatures * sizeof(*sigs.arr.v));
		if (!js || !sigs.arr.v) {
			free(js);
			free(sigs.arr.v);
			return -ENOMEM;
		}
		for (size_t i = 0; i < v->n_signatures; i++) {
			sig_json_init(&js[i], &v->signatures[i]);
			sigs.arr.v[i] = &js[i].obj;
		}
		sigs.arr.len = sigs.arr.cap = v->n_signatures;
		m[root.obj.len++] = (struct kx_json_member){ "signatures", strlen("signatures"), &sigs };
	}
	root.obj.cap = root.obj.len;
	int r = kx_json_write_pretty(&root, out);
	free(js);
	free(sigs.arr.v);
	return r;
}

static int digests(const struct kx_run_view *v, struct kx_buf *out)
{
	const struct kx_run_rec *x = v->run;
	const struct {
		const char *name;
		const struct kx_digest *d;
	} rows[] = {
		{ "run", &x->run },
		{ "protocol", &x->protocol },
		{ "environment", &x->environment },
		{ "workload", &x->workload },
		{ "implementation", &x->implementation },
		{ "comparison-key", &x->group },
	};
	int r = 0;
	char s[KX_DIGEST_STR_MAX];
	for (size_t i = 0; i < KX_ARRAY_SIZE(rows) && r >= 0; i++) {
		kx_digest_format(rows[i].d, s);
		r = kx_buf_printf(out, "%s %s\n", rows[i].name, s);
	}
	/* SPEC §2: the same observation published as other records */
	if (r >= 0 && x->alias) {
		kx_digest_format(&x->alias_of, s);
		r = kx_buf_printf(out, "alias-of %s\n", s);
	}
	for (size_t i = 0; i < v->n_aliases && r >= 0; i++) {
		kx_digest_format(&v->aliases[i], s);
		r = kx_buf_printf(out, "also-published-as %s\n", s);
	}
	return r;
}

static int line(struct kx_buf *out, const char *label, const char *fmt, ...) KX_PRINTF(3, 4);

static int line(struct kx_buf *out, const char *label, const char *fmt, ...)
{
	int r = kx_buf_printf(out, "  %-16s ", label);
	va_list ap;
	va_start(ap, fmt);
	if (r >= 0)
		r = kx_buf_vprintf(out, fmt, ap);
	va_end(ap);
	return r < 0 ? r : kx_buf_putc(out, '\n');
}

/* "label   274.1 ms  (274073425 ns)" (render_value_text) */
static int value_line(struct kx_buf *out, const char *label, double v, const char *unit)
{
	char text[KX_JCS_NUMBER_MAX + 160];
	render_value_text(v, unit, text, sizeof(text));
	return line(out, label, "%s", text);
}

/* "label   text" of a sentence of runtext.c, written by fn */
static int text_line(struct kx_buf *out, const char *label, int (*fn)(const struct kx_run_view *v, struct kx_buf *out),
		     const struct kx_run_view *v)
{
	return render_sentence(out, label, fn, v, line);
}

/* "spread      58.52 ms – 59.10 ms  (p20–p80)" */
static int spread_line(struct kx_buf *out, const struct kx_run_rec *x)
{
	char text[160];
	return render_spread_text(x, text, sizeof(text)) ? line(out, "spread", "%s  (p20–p80)", text) : 0;
}

static int params_text(const struct kx_json *wl, struct kx_buf *out)
{
	const struct kx_json *p = wl ? kx_json_pointer(wl, "/spec/parameters") : NULL;
	int r = 0;
	struct kx_buf tmp = { 0 };
	for (size_t i = 0; p && p->type == KX_JSON_OBJECT && i < p->obj.len && r >= 0; i++) {
		kx_buf_reset(&tmp);
		const struct kx_json *val = p->obj.v[i].value;
		if (val->type == KX_JSON_STRING)
			r = kx_buf_append(&tmp, val->str.ptr, val->str.len);
		else
			r = kx_jcs_write(val, &tmp);
		if (r >= 0)
			r = kx_buf_printf(out, "%s%s=%s", i ? " " : "", p->obj.v[i].key, tmp.ptr ? tmp.ptr : "");
	}
	const char *dt = render_str_at(wl, "/spec/dtype");
	if (r >= 0 && dt)
		r = kx_buf_printf(out, " dtype=%s", dt);
	kx_buf_release(&tmp);
	return r;
}

/* Text that may hold line feeds, each later line indented under the first's value column. */
static int indented_text(struct kx_buf *out, const char *s)
{
	int r = 0;
	for (const char *nl; r >= 0 && (nl = strchr(s, '\n')); s = nl + 1)
		r = kx_buf_printf(out, "%.*s\n%19s", (int)(nl - s), s, "");
	return r < 0 ? r : kx_buf_puts(out, s);
}

struct art_lines {
	const struct kx_run_view *v;
	struct kx_buf *out;
};

static int artifact_line(void *ctx, const struct kx_run_artifact *a)
{
	struct art_lines *l = ctx;
	bool got = render_artifact_received(l->v, a->index);
	return kx_buf_printf(l->out, "  %-24s %12" PRIu64 " bytes  %-28s %s%s\n", a->name, a->size, a->media_type,
			     got ? "received: artifacts/" : "announced, not received", got ? a->name : "");
}

/* SPEC §9, "artifacts": each file the run announces, its size and type, and whether its bytes are
 * stored (then served under artifacts/). */
static int artifacts(const struct kx_run_view *v, struct kx_buf *out)
{
	const struct kx_json *run = v->doc[KX_DOC_RUN];
	const struct kx_json *as = run ? kx_json_pointer(run, "/spec/artifacts") : NULL;
	int r = kx_buf_puts(out, "\nartifacts\n");
	if (r >= 0 && (!as || as->type != KX_JSON_ARRAY || !as->arr.len))
		return kx_buf_puts(out, "  none published with this run\n");
	struct art_lines l = { v, out };
	return r < 0 ? r : kx_run_artifacts(run, artifact_line, &l);
}

/*
 * SPEC §8, "replications and notes": a line per attestation, oldest first — its number (its
 * file's under attestations/), type, date and author, then a note's text, or a reproduction's run
 * with its GPU, median, ratio to this run and whether it is within noise.
 */
static int attestations(const struct kx_run_view *v, struct kx_buf *out)
{
	int r = kx_buf_puts(out, "\nreplications and notes\n");
	if (r >= 0 && !v->n_attestations)
		r = kx_buf_puts(out, "  none yet ('kindex attest' adds a reproduction or a note; they never change "
				     "a run's evidence, only a controlled rerun does)\n");
	for (size_t i = 0; i < v->n_attestations && r >= 0; i++) {
		const struct kx_run_attestation *a = &v->attestations[i];
		char label[32];
		snprintf(label, sizeof(label), "%.2s %s", a->name, kx_attestation_type_name(a->type));
		r = kx_buf_printf(out, "  %-16s %s by ", label, a->created_at);
		if (r >= 0)
			r = indented_text(out, a->author);
		if (r >= 0 && a->by) {
			struct render_reproduction c;
			render_reproduction(v, a, &c);
			r = kx_buf_printf(out, ": runs/%s on %s (%s GPU), median %s, %sx this run's, %s", a->by_id, a->by_gpu,
					  c.same_gpu ? "the same" : "another", c.median[0] ? c.median : "no value", c.ratio,
					  c.within_noise ? "within noise" : "outside the noise (p20-p80 apart)");
		}
		if (r >= 0 && a->text) {
			r = kx_buf_puts(out, a->by ? "; " : ": ");
			if (r >= 0)
				r = indented_text(out, a->text);
		}
		if (r >= 0)
			r = kx_buf_putc(out, '\n');
	}
	return r;
}

static int summary(const struct kx_run_view *v, struct kx_buf *out)
{
	const struct kx_run_rec *x = v->run;
	const struct kx_group_rec *g = v->group;
	char hex[KX_DIGEST_HEX + 1], ds[KX_DIGEST_STR_MAX], when[40], val[64];
	kx_digest_hex(&x->run, hex);
	const struct kx_json *rs = v->doc[KX_DOC_RUN];
	int r = kx_buf_printf(out, "%s · %s · %s\n", g->benchmark, x->impl, g->gpu);
	if (r >= 0)
		r = kx_buf_printf(out, "%s\n\n", render_str_at(rs, "/metadata/title") ? render_str_at(rs, "/metadata/title") : g->workload_slug);
	const char *stat = render_str_at(rs, "/spec/timing/primaryStatistic");
	if (r >= 0 && x->has_value) {
		char label[320];
		snprintf(label, sizeof(label), "%s %s", stat ? stat : "primary", g->metric);
		r = value_line(out, label, x->value, x->unit);
	} else if (r >= 0) {
		r = line(out, g->metric, "no value");
	}
	if (r >= 0)
		r = text_line(out, "rank", render_rank_text, v);
	if (r >= 0)
		r = spread_line(out, x); /* nothing where the interval is not known */
	if (r >= 0 && v->above && kx_rank_within_noise(x, v->above))
		r = line(out, "noise", "within noise of #%u (%s): the p20–p80 intervals overlap", v->rank - 1,
			 v->above_dirname);
	if (r >= 0 && v->rank && v->best) {
		char vs[160];
		render_vs_best_text(v, vs, sizeof(vs));
		kx_render_value(v->best->value, v->best->unit, val, sizeof(val));
		if (v->rank == 1)
			r = line(out, "vs #1", "%s", vs);
		else
			r = line(out, "vs #1", "%s (%s, %s, %s)", vs, v->best->impl, val, v->best_dirname);
		if (r >= 0 && render_cross_protocol(x, v->best))
			r = line(out, "comparability", "cross-protocol: measured under '%s', #1 under '%s'", x->family,
				 v->best->family);
	}
	if (r >= 0)
		r = line(out, "status", "%s", x->passed ? "passed" : "failed");
	const char *msg = render_str_at(rs, "/spec/message");
	if (r >= 0 && msg)
		r = line(out, "message", "%s", msg);
	if (r >= 0) {
		const char *obs = render_str_at(rs, "/spec/observedAt");
		kx_time_format(x->observed_ns, when);
		r = line(out, "observed", "%s", obs ? obs : when);
	}
	if (r >= 0)
		r = text_line(out, "evidence", render_evidence_text, v);
	if (r >= 0 && v->rerun) /* SPEC §10: a controlled rerun */
		r = text_line(out, "rerun", render_rerun_text, v);
	for (size_t i = 0; i < v->n_signatures && r >= 0; i++) { /* SPEC §10: who signed it, and so what */
		const struct kx_run_signature *s = &v->signatures[i];
		struct render_sig_cells c;
		render_sig_cells(s, &c);
		r = line(out, i ? "" : "signatures", "%s: %s, %s", s->known ? s->key_name : c.key_id,
			 s->valid ? "valid" : "does not verify", c.standing);
	}
	if (r >= 0)
		r = kx_buf_puts(out, "\nidentity\n");
	if (r >= 0) {
		kx_digest_format(&x->run, ds);
		r = line(out, "run", "%s", ds);
	}
	if (r >= 0)
		r = line(out, "short id", "%.12s", hex);
	if (r >= 0) {
		kx_digest_format(&x->group, ds);
		r = line(out, "comparison key", "%s", ds);
	}
	if (r >= 0)
		r = text_line(out, "path", render_path_text, v);
	if (r >= 0)
		r = line(out, "stable path", "runs/%.12s", hex);
	for (size_t i = 0; i < v->n_aliases && r >= 0; i++) {
		char ah[KX_DIGEST_HEX + 1];
		kx_digest_format(&v->aliases[i], ds);
		kx_digest_hex(&v->aliases[i], ah);
		r = line(out, "also published", "as %s (runs/%.12s)", ds, ah);
	}

	if (r >= 0)
		r = kx_buf_puts(out, "\nworkload\n");
	const struct kx_json *wl = v->doc[KX_DOC_WORKLOAD];
	if (r >= 0 && wl) {
		r = kx_buf_puts(out, "  ");
		if (r >= 0)
			r = params_text(wl, out);
		if (r >= 0)
			r = kx_buf_putc(out, '\n');
	} else if (r >= 0) {
		r = line(out, "slug", "%s (workload document not published)", g->workload_slug);
	}
	if (r >= 0) {
		kx_digest_format(&x->workload, ds);
		r = line(out, "digest", "%s", ds);
	}

	if (r >= 0)
		r = kx_buf_puts(out, "\nimplementation\n");
	const struct kx_json *im = v->doc[KX_DOC_IMPLEMENTATION];
	if (r >= 0) {
		const char *ver = render_str_at(im, "/spec/version"), *prov = render_str_at(im, "/spec/provider");
		r = line(out, "name", "%s%s%s%s%s", im ? render_str_at(im, "/spec/name") : x->impl, ver ? " " : "",
			 ver ? ver : "", prov ? " by " : "", prov ? prov : "");
	}
	if (r >= 0) {
		kx_digest_format(&x->implementation, ds);
		r = line(out, "digest", "%s%s", ds, im ? "" : " (document not published)");
	}

	if (r >= 0)
		r = kx_buf_puts(out, "\nprotocol\n");
	const struct kx_json *pr = v->doc[KX_DOC_PROTOCOL];
	if (r >= 0) {
		const char *title = render_str_at(pr, "/metadata/title"), *timer = render_str_at(pr, "/spec/measurement/timer");
		const char *harness = render_str_at(pr, "/spec/harness/name");
		if (title)
			r = line(out, "title", "%s", title);
		if (r >= 0 && harness)
			r = line(out, "harness", "%s", harness);
		if (r >= 0)
			r = line(out, "family", "%s", x->family);
		if (r >= 0 && timer)
			r = line(out, "timer", "%s", timer);
		const char *notes = render_str_at(pr, "/spec/comparability/notes");
		if (r >= 0 && notes)
			r = line(out, "notes", "%s", notes);
	}
	if (r >= 0) {
		kx_digest_format(&x->protocol, ds);
		r = line(out, "digest", "%s", ds);
	}

	if (r >= 0)
		r = kx_buf_puts(out, "\nenvironment\n");
	const struct kx_json *env = v->doc[KX_DOC_ENVIRONMENT];
	if (r >= 0)
		r = text_line(out, "hardware", render_hardware_text, v);
	const struct kx_json *sw = env ? kx_json_pointer(env, "/spec/software") : NULL;
	for (size_t i = 0; r >= 0 && sw && sw->type == KX_JSON_OBJECT && i < sw->obj.len; i++) {
		struct kx_buf t = { 0 };
		const struct kx_json *sv = sw->obj.v[i].value;
		r = sv->type == KX_JSON_STRING ? kx_buf_append(&t, sv->str.ptr, sv->str.len) : kx_jcs_write(sv, &t);
		if (r >= 0)
			r = line(out, sw->obj.v[i].key, "%s", t.ptr ? t.ptr : "");
		kx_buf_release(&t);
	}
	if (r >= 0) {
		kx_digest_format(&x->environment, ds);
		r = line(out, "digest", "%s", ds);
	}

	const struct kx_json *ms = render_measurements(v);
	struct render_measurement m;
	if (r >= 0 && ms)
		r = kx_buf_puts(out, "\nmeasurements\n");
	for (size_t i = 0; r >= 0 && ms && i < ms->arr.len; i++) {
		if (!render_measurement(ms->arr.v[i], &m))
			continue;
		char label[96];
		snprintf(label, sizeof(label), "%s %s", m.statistic, m.metric);
		r = value_line(out, label, m.value, m.unit);
	}
	if (r >= 0)
		r = artifacts(v, out);
	if (r >= 0)
		r = attestations(v, out);
	if (r >= 0)
		r = kx_buf_puts(out, "\nfiles: manifest.json (the whole record), run.json protocol.json environment.json"
				     " [workload.json implementation.json], DIGESTS, SHA256SUMS (sha256sum -c SHA256SUMS)\n");
	return r;
}

/*
 * SIGNATURES (SPEC §10, docs/signatures.md): a header and a row per stored signature of the run —
 * its key id, the key's name where the store knows it, the algorithm, whether it verifies over
 * the run's digest, whether the store trusts the key now, and when it revoked it. The run is
 * measured (if it claims to be) while one row says valid yes and trusted yes.
 */
static int signatures(const struct kx_run_view *v, struct kx_buf *out)
{
	int r = kx_buf_puts(out, "key_id\tkey_name\talgorithm\tvalid\ttrusted\trevoked_at\n");
	for (size_t i = 0; i < v->n_signatures && r >= 0; i++) {
		const struct kx_run_signature *x = &v->signatures[i];
		struct render_sig_cells c;
		render_sig_cells(x, &c);
		r = kx_buf_printf(out, "%s\t", c.key_id);
		if (r >= 0)
			r = render_tsv_text(out, x->known ? x->key_name : "");
		if (r >= 0)
			r = kx_buf_printf(out, "\ted25519\t%s\t%s\t%s\n", c.valid, c.trusted, c.revoked_at);
	}
	return r < 0 ? r : 0;
}

int kx_render_run_file(const struct kx_run_view *v, enum kx_run_file f, struct kx_buf *out)
{
	switch (f) {
	case KX_RF_MANIFEST:
		return manifest(v, out);
	case KX_RF_RUN:
		return pretty(v->doc[KX_DOC_RUN], out);
	case KX_RF_PROTOCOL:
		return pretty(v->doc[KX_DOC_PROTOCOL], out);
	case KX_RF_ENVIRONMENT:
		return pretty(v->doc[KX_DOC_ENVIRONMENT], out);
	case KX_RF_WORKLOAD:
		return pretty(v->doc[KX_DOC_WORKLOAD], out);
	case KX_RF_IMPLEMENTATION:
		return pretty(v->doc[KX_DOC_IMPLEMENTATION], out);
	case KX_RF_SUMMARY:
		return summary(v, out);
	case KX_RF_DIGESTS:
		return digests(v, out);
	case KX_RF_SIGNATURES:
		return signatures(v, out);
	case KX_RF_CITATION:
		return render_citation(v, out);
	case KX_RF_INDEX_HTML:
		return render_run_page(v, out);
	default:
		return -ENOENT;
	}
}

/* ---- group files ------------------------------------------------------------------------------ */

static int ranking_tsv(const struct kx_group_view *g, struct kx_buf *out)
{
	int r = kx_buf_puts(out, "rank\tdir\timplementation\tmedian\tunit\tvs_best\tobserved_at\tevidence\tfamily"
			       "\tcross_protocol\tstatus\trun\tversion\tp20\tp80\tdisplay\twithin_noise\trerun\trerun_ratio"
			       "\trerun_within_noise\n");
	const struct kx_run_rec *best = g->ranked ? &g->runs[0] : NULL;
	for (size_t i = 0; i < g->len && r >= 0; i++) {
		const struct kx_run_rec *x = &g->runs[i];
		char ds[KX_DIGEST_STR_MAX];
		struct render_cells c;
		struct render_rank_cells rc;
		render_cells(x, &c);
		render_rank_cells(g, i, &rc);
		kx_digest_format(&x->run, ds);
		r = kx_buf_printf(out, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
				  rc.rank, g->dirnames[i], x->impl, c.value, c.unit, rc.vs_best, c.when,
				  kx_evidence_name((enum kx_evidence)x->evidence), x->family,
				  i < g->ranked && render_cross_protocol(x, best) ? "yes" : "no",
				  kx_rank_status(x, i < g->ranked ? (uint32_t)i + 1 : 0), ds, c.version, c.p20, c.p80, rc.display,
				  rc.within_noise, rc.rerun, rc.rerun_ratio, rc.rerun_within_noise);
	}
	return r;
}

/* ranking.json: ranking.tsv's columns as keys (the same names), numbers at full precision, null
 * where the TSV has an empty field, yes/no as true/false. */
static int ranking_json(struct kx_arena *a, const struct kx_group_view *g, struct kx_buf *out)
{
	const struct kx_group_rec *gr = g->group;
	struct kx_json *root = kx_json_new(a, KX_JSON_OBJECT), *runs = kx_json_new(a, KX_JSON_ARRAY);
	char ds[KX_DIGEST_STR_MAX], when[40];
	kx_digest_format(&gr->key, ds);
	kx_json_set_string(a, root, "comparison_key", ds);
	kx_json_set_string(a, root, "kernel", gr->kernel);
	kx_json_set_string(a, root, "pass", gr->pass);
	kx_json_set_string(a, root, "metric", gr->metric);
	kx_json_set_string(a, root, "gpu", gr->gpu);
	kx_json_set_string(a, root, "workload", g->workload_dir);
	kx_json_set_string(a, root, "group", g->path);
	kx_json_set_string(a, root, "order", gr->order == KX_ORDER_DESCENDING ? "descending" : "ascending");
	kx_json_set_number(a, root, "ranked", g->ranked);
	const struct kx_run_rec *best = g->ranked ? &g->runs[0] : NULL;
	for (size_t i = 0; i < g->len; i++) {
		const struct kx_run_rec *x = &g->runs[i];
		struct kx_json *o = kx_json_new(a, KX_JSON_OBJECT);
		bool ranked = i < g->ranked;
		kx_json_set(a, o, "rank", ranked ? kx_json_new_number(a, (double)(i + 1)) : kx_json_new(a, KX_JSON_NULL));
		kx_json_set_string(a, o, "dir", g->dirnames[i]);
		kx_json_set_string(a, o, "implementation", x->impl);
		kx_json_set(a, o, "median", x->has_value ? kx_json_new_number(a, x->value) : kx_json_new(a, KX_JSON_NULL));
		kx_json_set_string(a, o, "unit", x->unit);
		double q = ranked ? render_vs_best(x, best) : NAN;
		kx_json_set(a, o, "vs_best", isfinite(q) ? kx_json_new_number(a, q) : kx_json_new(a, KX_JSON_NULL));
		kx_time_format(x->observed_ns, when);
		kx_json_set_string(a, o, "observed_at", when);
		kx_json_set_string(a, o, "evidence", kx_evidence_name((enum kx_evidence)x->evidence));
		kx_json_set_string(a, o, "family", x->family);
		kx_json_set(a, o, "cross_protocol", kx_json_new_bool(a, ranked && render_cross_protocol(x, best)));
		kx_json_set_string(a, o, "status", kx_rank_status(x, ranked ? (uint32_t)i + 1 : 0));
		kx_digest_format(&x->run, ds);
		kx_json_set_string(a, o, "run", ds);
		kx_json_set(a, o, "version", x->version[0] ? kx_json_new_string(a, x->version) : kx_json_new(a, KX_JSON_NULL));
		double lo, hi;
		bool spread = render_spread_in_unit(x, &lo, &hi);
		kx_json_set(a, o, "p20", spread ? kx_json_new_number(a, lo) : kx_json_new(a, KX_JSON_NULL));
		kx_json_set(a, o, "p80", spread ? kx_json_new_number(a, hi) : kx_json_new(a, KX_JSON_NULL));
		struct render_rank_cells rc;
		render_rank_cells(g, i, &rc);
		kx_json_set(a, o, "display", rc.display[0] ? kx_json_new_string(a, rc.display) : kx_json_new(a, KX_JSON_NULL));
		kx_json_set(a, o, "within_noise", !rc.within_noise[0] ? kx_json_new(a, KX_JSON_NULL)
					: kx_json_new_bool(a, strcmp(rc.within_noise, "yes") == 0));
		kx_json_set(a, o, "rerun", rc.rerun[0] ? kx_json_new_string(a, rc.rerun) : kx_json_new(a, KX_JSON_NULL));
		kx_json_set(a, o, "rerun_ratio",
			    isfinite(rc.rerun_q) ? kx_json_new_number(a, rc.rerun_q) : kx_json_new(a, KX_JSON_NULL));
		kx_json_set(a, o, "rerun_within_noise", !rc.rerun_within_noise[0] ? kx_json_new(a, KX_JSON_NULL)
					: kx_json_new_bool(a, strcmp(rc.rerun_within_noise, "yes") == 0));
		kx_json_append(a, runs, o);
	}
	kx_json_set(a, root, "runs", runs);
	return kx_json_write_pretty(root, out);
}

static int group_json(struct kx_arena *a, const struct kx_group_view *g, struct kx_buf *out)
{
	const struct kx_group_rec *gr = g->group;
	struct kx_json *root = kx_json_new(a, KX_JSON_OBJECT);
	char ds[KX_DIGEST_STR_MAX];
	kx_digest_format(&gr->key, ds);
	kx_json_set_string(a, root, "comparisonKey", ds);
	kx_json_set(a, root, "inputs", kx_rank_group_inputs(a, gr));
	kx_json_set_string(a, root, "rule", "comparisonKey = sha256 of the JCS (RFC 8785) bytes of inputs");
	kx_json_set_string(a, root, "path", g->path);
	kx_json_set_string(a, root, "order", gr->order == KX_ORDER_DESCENDING ? "descending" : "ascending");
	struct kx_json *w = kx_json_new(a, KX_JSON_OBJECT);
	kx_json_set_string(a, w, "dir", g->workload_dir);
	if (g->workload_doc) {
		struct kx_json *spec = kx_json_get(g->workload_doc, "spec");
		struct kx_json *p = spec ? kx_json_get(spec, "parameters") : NULL;
		struct kx_json *dt = spec ? kx_json_get(spec, "dtype") : NULL;
		if (p)
			kx_json_set(a, w, "parameters", p);
		if (dt)
			kx_json_set(a, w, "dtype", dt);
	} else {
		kx_json_set_string(a, w, "note", "the workload document is not published; the directory name comes from the runs' externalId");
	}
	kx_json_set(a, root, "workload", w);
	return kx_json_write_pretty(root, out);
}

int kx_render_group_file(const struct kx_group_view *g, enum kx_group_file f, struct kx_buf *out)
{
	if (f == KX_GF_RANKING_TSV)
		return ranking_tsv(g, out);
	if (f == KX_GF_RANKING_SVG)
		return render_ranking_svg(g, out);
	if (f == KX_GF_HISTORY_TSV)
		return render_history_tsv(g, out);
	if (f == KX_GF_HISTORY_JSON)
		return render_history_json(g, out);
	if (f == KX_GF_HISTORY_SVG)
		return render_history_svg(g, out);
	if (f == KX_GF_CHANGES_TSV)
		return render_changes_tsv(g, out);
	if (f != KX_GF_RANKING_JSON && f != KX_GF_GROUP_JSON)
		return -ENOENT;
	struct kx_arena *a = kx_arena_new();
	if (!a)
		return -ENOMEM;
	int r = f == KX_GF_RANKING_JSON ? ranking_json(a, g, out) : group_json(a, g, out);
	kx_arena_free(a);
	return r;
}

int kx_render_sha256sums_line(struct kx_buf *out, const char *name, const uint8_t sha256[KX_DIGEST_LEN])
{
	char hex[KX_DIGEST_HEX + 1];
	kx_hex(sha256, KX_DIGEST_LEN, hex);
	return kx_buf_printf(out, "%s  %s\n", hex, name);
}

size_t kx_sha256sums_line_len(size_t name_len)
{
	return KX_DIGEST_HEX + 2 + name_len + 1;
}

int kx_render_readme(const struct kx_readme_info *info, struct kx_buf *out)
{
	char when[40];
	kx_time_format(info->stats.changed_ns, when);
	int r = kx_buf_printf(out,
		"kindexfs %s — an index of GPU kernel benchmark results (KernelIndex %s)\n"
		"\n"
		"store       %s\n"
		"runs        %llu\n"
		"groups      %llu\n"
		"documents   %llu\n"
		"generation  %llu (last change %s)\n"
		"%s%s"
		"\n"
		"benchmarks/<kernel>/<pass>/<gpu>/<workload>/   one comparison group, ranked\n"
		"    ranking.tsv ranking.json GROUP.json history.tsv history.json ranking.svg history.svg\n"
		"    changes.tsv index.html SHA256SUMS\n"
		"    <rank>-<implementation>-<short id>/      manifest.json run.json protocol.json environment.json\n"
		"                                             [workload.json implementation.json] summary.txt DIGESTS SHA256SUMS\n"
		"                                             SIGNATURES CITATION.cff index.html (the run's page)\n"
		"                                             [attestations/]: its reproductions and notes\n"
		"    superseded-<implementation>-<short id>/  an older run of an implementation (its newest is ranked)\n"
		"    failed-<implementation>-<short id>/      a failed run, never ranked\n"
		"benchmarks/<kernel>/<pass>.memory/          the memory metric of a pass, grouped and ranked the same way:\n"
		"                                            full.memory/ holds the memory runs of full\n"
		"benchmarks/<kernel>/<pass>/gpus.tsv         each workload's current medians across GPUs\n"
		"benchmarks/<kernel>/<pass>/<gpu>/sweep.tsv  the groups that differ in one parameter (sweep.svg: drawn)\n"
		"index.html                                  here and in every directory of benchmarks/: a static site,\n"
		"                                            served by any HTTP server over the mount\n"
		"index.tsv                                   every run, one row: a column per workload parameter\n"
		"regressions.tsv regressions.json            every series' open change point, regressions first\n"
		"changes.tsv                                 every step of every series: two consecutive runs, the change\n"
		"runs/<short id>/                            the same files at a path that never moves\n"
		"digests/sha256/<hex>.json                   every document by digest (sha256sum of the file = its name)\n"
		"inbox/                                      drop manifests here to add runs (when mounted read-write)\n"
		"\n"
		"Every directory verifies with: sha256sum -c SHA256SUMS\n",
		KX_VERSION, KX_API_VERSION, info->store_path, (unsigned long long)info->stats.runs,
		(unsigned long long)info->stats.groups, (unsigned long long)info->stats.documents,
		(unsigned long long)info->stats.generation, when, info->replica ? info->replica : "",
		info->health ? info->health : "");
	if (r < 0 || !info->losses || !*info->losses)
		return r;
	return kx_buf_printf(out,
			     "\n"
			     "LOST WRITES — this store was recovered from a damaged write-ahead log, and what was\n"
			     "logged after the damage is not here:\n"
			     "%s"
			     "The runs that receipts promised but the store lacks: kindex --store %s verify\n",
			     info->losses, info->store_path);
}
