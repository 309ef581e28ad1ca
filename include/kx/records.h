/* SPDX-License-Identifier: MIT */
/*
 * The records the store keeps and the pure modules compute with: a run's facts (struct kx_run_rec)
 * and a comparison group's (struct kx_group_rec), as kx/store.h reads and writes them, and the
 * store's counts (struct kx_store_stats). Plain data, no calls: `rank` and `render` include this,
 * not kx/store.h.
 */
#ifndef KX_RECORDS_H
#define KX_RECORDS_H

#include "kx/canon.h"

#include <stdbool.h>
#include <stdint.h>

#define KX_NAME_MAX 136 /* slugs and names stored in records, NUL included */
#define KX_VERSION_MAX 64 /* an implementation's version, NUL included (longer ones are cut) */

struct kx_run_rec {
	struct kx_digest run;
	struct kx_digest group;
	struct kx_digest protocol, environment, workload, implementation;
	bool passed;
	bool has_value;
	uint8_t evidence;    /* enum kx_evidence (kx/rank.h) */
	bool unbacked;       /* not stored: it claims measured evidence no trusted key's signature backs (SPEC §10) */
	uint8_t order;       /* enum kx_order */
	double value;        /* primary value in `unit` */
	double base_value;   /* in the metric's base unit: the ranked value */
	bool has_spread;     /* base_p20/base_p80 are known (records of store version 1 lack them) */
	double base_p20, base_p80; /* the p20–p80 noise interval, in the base unit */
	int64_t observed_ns;
	int64_t ingested_ns;
	uint64_t generation; /* store generation that added it */
	char unit[16];
	char impl[KX_NAME_MAX];   /* implementation slug for directory names */
	char family[KX_NAME_MAX]; /* protocol comparability family */
	char version[KX_VERSION_MAX]; /* the implementation's spec.version when known, else "" */
	/* an alias (SPEC §2): the same observation as run alias_of, published again with equal
	 * measurements; stored and served under runs/, never ranked or counted (its group, impl and
	 * values are alias_of's) */
	bool alias;
	struct kx_digest alias_of;
};

/*
 * A group's current run of one implementation: its newest ranked run (kx_run_newer), with what a
 * comparison of implementations needs — as the store keeps it for passes over every group
 * (kx_store_each_current).
 */
struct kx_current_rec {
	struct kx_digest run;
	int64_t observed_ns;
	uint8_t order;             /* enum kx_order */
	bool has_spread;
	double value;              /* primary value in `unit` */
	double base_value;         /* in the metric's base unit: the ranked value */
	double base_p20, base_p80; /* the p20–p80 noise interval, in the base unit */
	char unit[16];
	char impl[KX_NAME_MAX];
};

struct kx_group_rec {
	struct kx_digest key;      /* comparison key: sha256 of JCS(inputs) */
	struct kx_digest workload; /* workload digest (an input) */
	char benchmark[2 * KX_NAME_MAX];
	char metric[KX_NAME_MAX];
	char kernel[KX_NAME_MAX];
	char pass[KX_NAME_MAX];     /* path component: "forward", or "full.memory" for non-latency */
	char gpu[KX_NAME_MAX];
	char workload_slug[KX_NAME_MAX]; /* base slug, before any ~suffix */
	bool workload_cut;          /* the base slug was cut: always suffixed */
	uint8_t order;              /* enum kx_order */
	uint32_t ranked, unranked;  /* run counts */
	int64_t changed_ns;         /* last time a run was added (directory mtime) */
};

struct kx_store_stats {
	uint64_t runs, documents, groups, generation;
	/* the last commit that changed what runs stored before it show, adding no run: a signature,
	 * a key trusted or revoked (SPEC §10); 0 for none */
	uint64_t evidence_generation;
	int64_t changed_ns; /* last commit */
	int64_t created_ns; /* kindex init */
	char id[33];        /* the store's id, 32 hex digits, kept by every checkpoint; "" for none yet */
};

#endif
