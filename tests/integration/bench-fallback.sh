#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/gpu-check's build without meson (its fallback when meson or ninja is missing on a GPU
# machine) compiles and links kindex-bench from the sources it derives from the meson.build
# files, and the program runs: --help, and --list naming the CUDA architectures built. One
# architecture only, to keep it short; no GPU needed. Skipped (77) without nvcc.
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)

export PATH=/usr/local/cuda/bin:$PATH
command -v nvcc >/dev/null || { echo "# nvcc not found: the fallback build needs it"; exit 77; }

timeout 900 "$top/bench/gpu-check" --fallback-build-only "$tmp/fb" --archs 80 \
	>"$tmp/build.out" 2>&1 || { tail -n 30 "$tmp/build.out" >&2; die "the fallback build failed"; }
bin=$tmp/fb/src/bench/kindex-bench
[[ -x $bin ]] || die "no $bin: $(tail -n 5 "$tmp/build.out")"
for lib in common canon manifest rank bench; do
	grep -q "sources: .*\b$lib\b" "$tmp/build.out" || die "src/$lib not built: $(tail -n 3 "$tmp/build.out")"
done
expect 0 "$bin" --help
grep -q "^usage: kindex-bench --list" "$tmp/stdout" || die "--help: $(head -n 3 "$tmp/stdout")"
expect 0 "$bin" --list
grep -q "CUDA kernels for sm_80" "$tmp/stdout" || die "--list: $(tail -n 2 "$tmp/stdout")"
echo "ok - gpu-check's fallback build links and runs ($(tail -n1 "$tmp/stdout"))"
