#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/gpu-check on a machine without a GPU (nvidia-smi answering nothing, no CUDA device
# visible) does every CPU step and exits 77: the toolkit and driver check, the architectures
# filtered by nvcc, the build without meson (its fallback, which must compile and link
# src/common, canon, manifest, rank and bench with the CUDA kernels), the CPU selftest, the
# no-device answer of --run, the ingest of what it wrote, and the summary table. A build that
# outlasts its share of the budget (a C compiler that never finishes) is stopped by its step's
# timeout, and the script fails rather than hangs. One architecture only, to keep it short.
# Skipped (77) without nvcc.
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)

export PATH=/usr/local/cuda/bin:$PATH
command -v nvcc >/dev/null || { echo "# nvcc not found: gpu-check cannot build the kernels"; exit 77; }
export NVIDIA_SMI=false CUDA_VISIBLE_DEVICES=

start=$SECONDS
expect 77 timeout 600 "$top/bench/gpu-check" --direct-build --archs 80 --build-dir "$tmp/b" --out "$tmp/out"
took=$((SECONDS - start))
log=$tmp/stdout
for want in "^== 0. toolkit and driver" "^nvcc: 1[2-9]\." "^archs: 80$" "^driver: " \
	"^GPU: none (false -L fails)" "^direct build: linked .*(sources of bench rank manifest canon common; archs 80)" \
	"^this build: CUDA kernels for sm_80$" "^selftest: passed (2 manifests)" \
	"^no device: --run says so, exit 3 (kindex-bench: no CUDA device: " \
	"^| cross_entropy/forward | kindex-cpu-online | kindex_bench_cpu | passed | " \
	"^gpu-check: no NVIDIA GPU here: every CPU step passed, the GPU steps were not run (exit 77)"; do
	grep -q "$want" "$log" || die "gpu-check: no '$want' in its output: $(cat "$log" "$tmp/stderr")"
done
grep -q "^== 3\." "$log" && die "a GPU step ran without a GPU: $(cat "$log")"
if [[ -x ${KINDEX:-} ]]; then
	grep -q "^ingest: 1 manifest files accepted" "$log" || die "no ingest: $(cat "$log")"
fi
grep -q "^| benchmark | implementation | protocol | status | median |" "$tmp/out/summary.md" ||
	die "no summary table in summary.md: $(cat "$tmp/out/summary.md")"
check_manifests "$tmp/out/manifests/selftest.jsonl" "run['status'] == 'passed'"
echo "ok - gpu-check without a GPU: every CPU step in ${took}s, then exit 77"

# the binary the fallback linked runs
bin=$tmp/b/src/bench/kindex-bench
expect 0 "$bin" --help
grep -q "^usage: kindex-bench --list" "$tmp/stdout" || die "--help: $(head -n 3 "$tmp/stdout")"
expect 0 "$bin" --list
grep -q "CUDA kernels for sm_80" "$tmp/stdout" || die "--list: $(tail -n 2 "$tmp/stdout")"
echo "ok - the fallback build links and runs ($(tail -n1 "$tmp/stdout"))"

# a build that cannot end within its share of the budget, on any machine: cc, which the direct
# build runs for every C source, never finishes. --budget 45 leaves the build step 25 s less
# what the checks before it took; the step's timeout stops the build and the script fails
# (within the outer deadline, rather than hanging).
mkdir -p "$tmp/hang"
cat >"$tmp/hang/cc" <<HANG
#!/usr/bin/env bash
# a C compiler that never finishes: note that it started, then block until the step's timeout
: >"$tmp/hang/started"
exec sleep infinity
HANG
chmod +x "$tmp/hang/cc"
expect 1 env PATH="$tmp/hang:$PATH" timeout 120 "$top/bench/gpu-check" --direct-build --archs 80 --budget 45 \
	--build-dir "$tmp/short" --out "$tmp/short-out"
[[ -e $tmp/hang/started ]] || die "the build was not started: $(cat "$tmp/stdout" "$tmp/stderr")"
grep -q "^gpu-check: the build failed" "$tmp/stderr" || die "no word of the build: $(cat "$tmp/stdout" "$tmp/stderr")"
[[ ! -e $tmp/short/src/bench/kindex-bench ]] || die "a build whose compiler never finished linked a program"
echo "ok - a step past its share of the budget is stopped, and the script fails"
