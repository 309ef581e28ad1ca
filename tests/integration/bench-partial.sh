#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `-o FILE` keeps what was finished: when a later case fails with an error, FILE still holds the
# manifests of the cases completed before it (each one durable once written), stderr names the
# case that failed, and the exit status is 4. The failure is injected with the test-only
# KX_BENCH_TEST_FAIL_CASE=N (the CPU selftest has no input that fails its second case alone).
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"

fast=(--warmup 0.02 --min-time 0.05 --timeout 1)

# the selftest's two cases, the second failing: the first one's manifest survives
echo stale >"$tmp/out.jsonl"
KX_BENCH_TEST_FAIL_CASE=2 expect 4 "$KINDEX_BENCH" --selftest -o "$tmp/out.jsonl" "${fast[@]}"
grep -q "^kindex-bench: cannot prepare cross_entropy/forward kindex-cpu-two-pass: failure injected" \
	"$tmp/stderr" || die "the failed case is not named: $(cat "$tmp/stderr")"
grep -q "^kindex-bench: .*out.jsonl' holds the 1 manifest completed before cross_entropy/forward kindex-cpu-two-pass failed" \
	"$tmp/stderr" || die "no word on what was kept: $(cat "$tmp/stderr")"
[[ -f $tmp/out.jsonl ]] || die "the completed case's manifest was deleted"
[[ $(wc -l <"$tmp/out.jsonl") == 1 ]] || die "expected one line: $(cat "$tmp/out.jsonl")"
check_manifests "$tmp/out.jsonl" "m['implementation']['spec']['name'] == 'kindex-cpu-online'" \
	"run['status'] == 'passed'"
ls "$tmp" | grep -q '\.tmp\.' && die "a temporary file was left: $(ls "$tmp")"

# the first case failing: nothing completed, FILE is left as it was
echo stale >"$tmp/first.jsonl"
KX_BENCH_TEST_FAIL_CASE=1 expect 4 "$KINDEX_BENCH" --selftest -o "$tmp/first.jsonl" "${fast[@]}"
grep -q "^kindex-bench: cannot prepare cross_entropy/forward kindex-cpu-online: failure injected" \
	"$tmp/stderr" || die "the failed case is not named: $(cat "$tmp/stderr")"
[[ $(cat "$tmp/first.jsonl") == stale ]] || die "FILE changed although no case completed"
ls "$tmp" | grep -q '\.tmp\.' && die "a temporary file was left: $(ls "$tmp")"

# without a failure both cases are there
expect 0 "$KINDEX_BENCH" --selftest -o "$tmp/all.jsonl" "${fast[@]}"
[[ $(wc -l <"$tmp/all.jsonl") == 2 ]] || die "two implementations, two lines expected"
check_manifests "$tmp/all.jsonl"
echo "ok - -o FILE keeps the manifests completed before a failed case"
