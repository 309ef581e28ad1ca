#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Without a GPU (CI, most machines) `--run` exits 3 with "no CUDA device: <reason>" on stderr —
# with no driver cudaGetDeviceCount returns cudaErrorInsufficientDriver (35) — and usage errors
# are still reported first, with status 2. Skipped (77) where a GPU is present.
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"

if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
	echo "# a GPU is present: nothing to test here"
	exit 77
fi

for run in fused_linear_cross_entropy all cross_entropy,rms_norm; do
	expect 3 "$KINDEX_BENCH" --run "$run"
	head -n1 "$tmp/stderr" | grep -q "^kindex-bench: no CUDA device: ." ||
		die "--run $run: $(cat "$tmp/stderr")"
	[[ ! -s $tmp/stdout ]] || die "--run $run wrote to stdout without a device"
done
echo "# $(head -n1 "$tmp/stderr")"

expect 2 "$KINDEX_BENCH" --run nope
grep -q "^kindex-bench: unknown workload 'nope'" "$tmp/stderr" || die "$(cat "$tmp/stderr")"
expect 2 "$KINDEX_BENCH" --run rms_norm --param nope=1
grep -q "^kindex-bench: unknown parameter 'nope'" "$tmp/stderr" || die "$(cat "$tmp/stderr")"
expect 2 "$KINDEX_BENCH" --run rms_norm --param M=0
grep -q "^kindex-bench: invalid M '0'" "$tmp/stderr" || die "$(cat "$tmp/stderr")"
expect 2 "$KINDEX_BENCH" --run rms_norm --impl kindex-nope
grep -q "^kindex-bench: unknown implementation 'kindex-nope'" "$tmp/stderr" || die "$(cat "$tmp/stderr")"
expect 2 "$KINDEX_BENCH" --run rms_norm,cross_entropy --impl kindex-online
grep -q "^kindex-bench: no implementation of rms_norm/forward among 'kindex-online'" "$tmp/stderr" ||
	die "$(cat "$tmp/stderr")"
expect 2 "$KINDEX_BENCH" --run rms_norm --protocol fast
grep -q "^kindex-bench: unknown protocol 'fast'" "$tmp/stderr" || die "$(cat "$tmp/stderr")"
echo "ok - no CUDA device, usage errors first"

