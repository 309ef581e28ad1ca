// SPDX-License-Identifier: MIT
/*
 * The sentences about a run that its two pages for people say alike, summary.txt (render.c) and
 * index.html (runpage.c): its value as people read it, its rank, how far it is from #1, its
 * evidence, its controlled rerun and its hardware. One wording, so the two pages never disagree.
 * Pure: nothing here reads the store or the clock.
 */
#include "private.h"

#include "kx/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void render_value_text(double v, const char *unit, char *out, size_t cap)
{
	char human[64], n[KX_JCS_NUMBER_MAX], raw[KX_JCS_NUMBER_MAX + 80];
	kx_render_value(v, unit, human, sizeof(human));
	render_number(v, n);
	snprintf(raw, sizeof(raw), "%s %s", n, unit ? unit : "");
	if (strcmp(human, raw) == 0)
		snprintf(out, cap, "%s", human);
	else
		snprintf(out, cap, "%s  (%s)", human, raw);
}

bool render_cross_protocol(const struct kx_run_rec *run, const struct kx_run_rec *best)
{
	return best && strcmp(run->family, best->family) != 0;
}

/* "2.0x slower than #1", "… more memory than #1": the word for "worse" in this metric */
static const char *worse_word(const char *metric, int order)
{
	if (strcmp(metric, "latency") == 0)
		return "slower";
	if (strcmp(metric, "memory") == 0)
		return "more memory";
	return order == KX_ORDER_DESCENDING ? "lower" : "higher";
}

int render_rank_text(const struct kx_run_view *v, struct kx_buf *out)
{
	const struct kx_run_rec *x = v->run;
	const char *stat = render_str_at(v->doc[KX_DOC_RUN], "/spec/timing/primaryStatistic");
	if (x->alias)
		return kx_buf_printf(out,
				     "not ranked: an alias of runs/%s (%s), the same observation published "
				     "again with equal measurements",
				     v->alias_of_id, v->alias_of_path);
	if (v->rank)
		return kx_buf_printf(out, "%u of %u  (%s %s, %s)", v->rank, v->ranked, stat ? stat : "primary",
				     v->group->metric,
				     x->order == KX_ORDER_DESCENDING ? "higher is better" : "lower is better");
	if (v->current)
		return kx_buf_printf(out, "not ranked: superseded by %s, the newest run of %s", v->current_dirname,
				     x->impl);
	return kx_buf_printf(out, "not ranked: status %s", x->passed ? "passed (no value)" : "failed");
}

void render_vs_best_text(const struct kx_run_view *v, char *out, size_t cap)
{
	if (v->rank == 1)
		snprintf(out, cap, "this is #1");
	else
		snprintf(out, cap, "%.3fx %s than #1", render_vs_best(v->run, v->best),
			 worse_word(v->group->metric, v->run->order));
}

int render_evidence_text(const struct kx_run_view *v, struct kx_buf *out)
{
	const struct kx_run_rec *x = v->run;
	const struct kx_json *rs = v->doc[KX_DOC_RUN];
	const char *src = render_str_at(rs, "/spec/sourceNative/source");
	const char *ext = render_str_at(rs, "/spec/sourceNative/externalId");
	if (src)
		return kx_buf_printf(out, "%s (%s: %s)", kx_evidence_name((enum kx_evidence)x->evidence), src,
				     ext ? ext : "");
	if (x->unbacked) /* SPEC §10 */
		return kx_buf_puts(out,
				   "submitted (it claims kindex-bench's measured evidence, but no key this "
				   "store trusts signed it: SIGNATURES)");
	return kx_buf_printf(out, "%s%s", kx_evidence_name((enum kx_evidence)x->evidence),
			     x->evidence == KX_EVIDENCE_MEASURED ? " (signed by a key this store trusts: SIGNATURES)"
								 : "");
}

/* y's value against run x's, as render_ratio writes it: empty where either has none */
static void ratio_to(const struct kx_run_rec *x, const struct kx_run_rec *y, char out[KX_JCS_NUMBER_MAX])
{
	render_ratio(x->has_value && y->has_value && x->base_value != 0 ? y->base_value / x->base_value : NAN, out);
}

int render_rerun_text(const struct kx_run_view *v, struct kx_buf *out)
{
	const struct kx_run_rec *x = v->run, *y = v->rerun;
	char q[KX_JCS_NUMBER_MAX];
	ratio_to(x, y, q);
	return kx_buf_printf(out, "measured by %s: %sx this run's median, %s", v->rerun_dirname, q,
			     kx_rank_within_noise(x, y) ? "within noise" : "outside the noise (p20-p80 apart)");
}

void render_reproduction(const struct kx_run_view *v, const struct kx_run_attestation *a,
			  struct render_reproduction *ret)
{
	const struct kx_run_rec *y = a->by;
	ret->median[0] = '\0';
	if (y->has_value)
		kx_render_value(y->value, y->unit, ret->median, sizeof(ret->median));
	ratio_to(v->run, y, ret->ratio);
	ret->same_gpu = strcmp(a->by_gpu, v->group->gpu) == 0;
	ret->within_noise = kx_rank_within_noise(v->run, y);
}

const struct kx_json *render_measurements(const struct kx_run_view *v)
{
	const struct kx_json *rs = v->doc[KX_DOC_RUN];
	const struct kx_json *ms = rs ? kx_json_pointer(rs, "/spec/measurements") : NULL;
	return ms && ms->type == KX_JSON_ARRAY && ms->arr.len ? ms : NULL;
}

bool render_measurement(const struct kx_json *m, struct render_measurement *ret)
{
	const struct kx_json *value = kx_json_get(m, "value");
	*ret = (struct render_measurement){ kx_json_get_string(m, "metric"), kx_json_get_string(m, "statistic"),
					    kx_json_get_string(m, "unit"), value ? value->number : 0 };
	return ret->metric && ret->statistic && ret->unit && value && value->type == KX_JSON_NUMBER;
}

void render_sig_cells(const struct kx_run_signature *x, struct render_sig_cells *c)
{
	kx_digest_format(&x->key_id, c->key_id);
	c->revoked_at[0] = '\0';
	if (x->revoked_ns)
		kx_time_format(x->revoked_ns, c->revoked_at);
	bool trusted = x->known && x->valid && !x->revoked_ns;
	c->valid = x->valid ? "yes" : "no";
	c->trusted = trusted ? "yes" : "no";
	c->standing = trusted ? "trusted" : !x->known ? "a key this store does not know" : !x->valid ? "not trusted"
										      : "revoked";
}

int render_path_text(const struct kx_run_view *v, struct kx_buf *out)
{
	if (v->run->alias)
		return kx_buf_puts(out, "none: an alias is listed under runs/ only");
	return kx_buf_printf(out, "%s/%s", v->group_path, v->dirname);
}

int render_sentence(struct kx_buf *out, const char *label,
		    int (*sentence)(const struct kx_run_view *v, struct kx_buf *out), const struct kx_run_view *v,
		    int (*put)(struct kx_buf *out, const char *label, const char *fmt, ...))
{
	struct kx_buf t;
	kx_buf_init(&t, 0);
	int r = sentence(v, &t);
	if (r >= 0)
		r = put(out, label, "%s", t.ptr ? t.ptr : "");
	kx_buf_release(&t);
	return r;
}

int render_hardware_text(const struct kx_run_view *v, struct kx_buf *out)
{
	const struct kx_json *env = v->doc[KX_DOC_ENVIRONMENT];
	const char *prod = render_str_at(env, "/spec/hardware/product"),
		   *ff = render_str_at(env, "/spec/hardware/formFactor");
	const char *arch = render_str_at(env, "/spec/hardware/architecture");
	return kx_buf_printf(out, "%s%s%s%s%s%s", prod ? prod : v->group->gpu, ff ? " " : "", ff ? ff : "",
			     arch ? " (" : "", arch ? arch : "", arch ? ")" : "");
}

bool render_artifact_received(const struct kx_run_view *v, size_t i)
{
	return i < v->n_artifacts && v->artifact_received[i];
}
