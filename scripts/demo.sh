#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install, build, import the bundled Liger-Kernel results (the newest CSV and every row it ever
# published) into an embedded store and mount it.
# Usage: scripts/demo.sh [DIR]   (default: ./demo — the store is DIR/store, the mount DIR/mnt)
# Unmount with: fusermount3 -u DIR/mnt
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(realpath -m "${1:-demo}")
scripts/deps.sh
[[ -x /usr/local/cuda/bin/nvcc ]] && export PATH=/usr/local/cuda/bin:$PATH

if [[ -f build/build.ninja ]]; then meson setup --reconfigure build -Dbuildtype=release >/dev/null
else meson setup build -Dbuildtype=release >/dev/null; fi
meson compile -C build >/dev/null
kindex=build/src/cli/kindex
kindexfs=build/src/fs/kindexfs

store=$dir/store mnt=$dir/mnt
mkdir -p "$dir" "$mnt"
if mountpoint -q "$mnt"; then
	fusermount3 -u "$mnt"
	# the daemon closes the store after the unmount: wait for it to let go (10 s at most)
	for _ in $(seq 100); do [[ -e $store/kindexfs.lock ]] || break; sleep 0.1; done
fi
$kindex --store "$store" init
$kindex --store "$store" import liger examples/liger/all_benchmark_data.csv \
	examples/liger-history/all_benchmark_data.history.csv

if [[ -x $kindexfs && -c /dev/fuse ]]; then
	$kindexfs "$store" "$mnt"
	for _ in $(seq 100); do mountpoint -q "$mnt" && break; sleep 0.1; done
	mountpoint -q "$mnt" || { echo "demo: kindexfs did not mount $mnt" >&2; exit 1; }
	tree=$mnt
	echo "mounted $store at $mnt (unmount: fusermount3 -u $mnt)"
else
	rm -rf "$dir/export"
	$kindex --store "$store" export "$dir/export"
	tree=$dir/export
	echo "no FUSE here: exported the tree to $tree instead of mounting it"
fi

g=$tree/benchmarks/fused_linear_simpo_loss/forward/nvidia-a100-sxm4-80gb/batch4-hidden4096-seq1024-vocab128256-bf16
cat <<TXT

$ ls $tree
$(ls "$tree")
$ ls $tree/benchmarks | head -5
$(ls "$tree/benchmarks" | head -5)
$ ls $g
$(ls "$g")
$ cut -f1-5 $g/ranking.tsv
$(cut -f1-5 "$g/ranking.tsv")

Try:
  cat $g/02-*/summary.txt
  (cd $g && sha256sum -c SHA256SUMS)
  grep -rl 2024-11-22-17-44-03 $tree/runs | head
  $kindex --store $store show 272e401936bf
TXT
