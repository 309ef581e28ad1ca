#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The index accepts what kindex-bench emits: the selftest's manifests (JSON Lines) and a recorded
# run are ingested by `kindex ingest` into a fresh store. Skipped (77) until the kindex CLI is
# built (KINDEX names build/src/cli/kindex).
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"

if [[ ! -x ${KINDEX:-} ]]; then
	echo "# kindex CLI not built (${KINDEX:-KINDEX unset}): nothing to ingest into"
	exit 77
fi

expect 0 "$KINDEX_BENCH" --selftest -q -o "$tmp/selftest.jsonl" --warmup 0.02 --min-time 0.05 --timeout 1
seq 25000000 1000 25009000 >"$tmp/samples.txt"
expect 0 "$KINDEX_BENCH" --record fused_linear_cross_entropy --impl pytorch --impl-project pytorch \
	--impl-version 2.5.1 --environment cpu --protocol do_bench --samples "$tmp/samples.txt" -o "$tmp/rec.json"

expect 0 "$KINDEX" --store "$tmp/store" init
expect 0 "$KINDEX" --store "$tmp/store" ingest "$tmp/selftest.jsonl"
expect 0 "$KINDEX" --store "$tmp/store" ingest "$tmp/rec.json"
echo "ok - kindex ingest accepts kindex-bench's manifests"
