#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# kindex-bench --list, --help and --version work on any machine (no GPU, no CUDA build needed),
# and name every workload with the Liger benchmark names and every implementation; a command
# line without a mode is a usage error.
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"

expect 0 "$KINDEX_BENCH" --list
for w in cross_entropy/forward fused_linear_cross_entropy/forward rms_norm/forward \
	swiglu/forward matmul/forward; do
	grep -q "^$w " "$tmp/stdout" || die "--list does not name $w"
done
for i in kindex-online kindex-two-pass kindex-materialized kindex-chunked kindex-chunked-serial \
	kindex-rowwise kindex-cublas kindex-cpu-online kindex-cpu-two-pass; do
	grep -q "^  $i " "$tmp/stdout" || die "--list does not name implementation $i"
done
grep -q "hidden=4096 tokens=16384 vocab=128256  dtype=bf16" "$tmp/stdout" ||
	die "--list does not show the FLCE defaults"
grep -q "^this build: " "$tmp/stdout" || die "--list does not say what this build has"

expect 0 "$KINDEX_BENCH" --help
grep -q "^usage: kindex-bench --list" "$tmp/stdout" || die "--help prints no usage"
expect 0 "$KINDEX_BENCH" --version
grep -qx "kindex-bench [0-9.]*" "$tmp/stdout" || die "--version: $(cat "$tmp/stdout")"

expect 2 "$KINDEX_BENCH"
grep -q "^kindex-bench: nothing to do" "$tmp/stderr" || die "no mode: $(cat "$tmp/stderr")"
expect 2 "$KINDEX_BENCH" --list --selftest
grep -q "^kindex-bench: choose one of" "$tmp/stderr" || die "two modes: $(cat "$tmp/stderr")"
# an option getopt refuses: named by kindex-bench itself (not by the path it was run as), with
# where to look
expect 2 "$KINDEX_BENCH" --list --frob
grep -qx "kindex-bench: unknown option '--frob' (see --help)" "$tmp/stderr" || die "unknown option: $(cat "$tmp/stderr")"
expect 2 "$KINDEX_BENCH" --list -z
grep -qx "kindex-bench: unknown option '-z' (see --help)" "$tmp/stderr" || die "unknown option: $(cat "$tmp/stderr")"
expect 2 "$KINDEX_BENCH" --list=x
grep -qx "kindex-bench: option '--list' takes no value (see --help)" "$tmp/stderr" || die "--list=x: $(cat "$tmp/stderr")"
expect 2 "$KINDEX_BENCH" --run
grep -qx "kindex-bench: option '--run' needs a value (see --help)" "$tmp/stderr" || die "--run: $(cat "$tmp/stderr")"
expect 2 "$KINDEX_BENCH" --list -o
grep -qx "kindex-bench: option '-o' needs a value (see --help)" "$tmp/stderr" || die "-o: $(cat "$tmp/stderr")"
echo "ok - list, help, version, usage errors"
