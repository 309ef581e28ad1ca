#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --record turns samples timed by another harness (bench/gpu-check's PyTorch baseline) into a
# manifest: statistics from the raw samples, the protocol it names, the workload document the
# Liger import uses for the same shape, the correctness report it was given.
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"

seq 25000000 1000 25019000 >"$tmp/samples.txt" # 20 samples, 25.000..25.019 ms
printf '{"status": "passed", "reference": "torch fp32 on 256 rows", "maxAbsError": 0.002}\n' >"$tmp/ok.json"
printf '{"status": "failed", "message": "loss differs by 0.7 at row 12"}\n' >"$tmp/bad.json"
rec=(--record fused_linear_cross_entropy --impl pytorch --impl-project pytorch --impl-version 2.5.1
	--environment cpu --protocol do_bench --samples "$tmp/samples.txt")

expect 0 "$KINDEX_BENCH" "${rec[@]}" --correctness "$tmp/ok.json" --memory 5421340000 -o "$tmp/rec.json"
check_manifests "$tmp/rec.json" \
	"run['status'] == 'passed' and run['samples']['count'] == 20" \
	"run['samples']['stoppedBy'] == 'recorded' and 'sampling' not in run" \
	"run['timing']['latencyNs']['median'] == 25009500 and run['timing']['latencyNs']['min'] == 25000000" \
	"run['correctness']['reference'] == 'torch fp32 on 256 rows'" \
	"m['protocol']['spec']['comparability']['family'] == 'triton_do_bench'" \
	"m['implementation']['spec'] == {'name': 'pytorch', 'provider': 'kindex-bench', 'project': 'pytorch', 'version': '2.5.1'}" \
	"run['workloadDigest'] == 'sha256:6b3a679c88ca1e6c77236a54611195e1ca9b1524aebdcdc2c25b2bccf43cbf7d'" \
	"{'metric': 'memory', 'statistic': 'peak', 'unit': 'B', 'value': 5421340000} in run['measurements']"
sum=$(sha256sum "$tmp/samples.txt" | cut -d' ' -f1)
grep -q "\"sha256\": \"$sum\"" "$tmp/rec.json" || die "samples.sha256 is not the samples file's"

expect 1 "$KINDEX_BENCH" "${rec[@]}" --correctness "$tmp/bad.json" -o "$tmp/failed.json"
check_manifests "$tmp/failed.json" "run['status'] == 'failed'" \
	"run['message'] == 'loss differs by 0.7 at row 12'" "'samples' not in run"

printf '25000000\nabc\n' >"$tmp/junk.txt"
expect 2 "$KINDEX_BENCH" --record rms_norm --impl x --samples "$tmp/junk.txt" --environment cpu
grep -q "^kindex-bench: cannot read '$tmp/junk.txt' line 2" "$tmp/stderr" || die "$(cat "$tmp/stderr")"
expect 2 "$KINDEX_BENCH" --record rms_norm --impl x
grep -q "^kindex-bench: --record needs" "$tmp/stderr" || die "$(cat "$tmp/stderr")"
if ! { command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; }; then
	expect 3 "$KINDEX_BENCH" --record rms_norm --impl x --samples "$tmp/samples.txt"
	grep -q "^kindex-bench: no CUDA device: " "$tmp/stderr" || die "$(cat "$tmp/stderr")"
fi
echo "ok - record: passed, failed, bad input"
