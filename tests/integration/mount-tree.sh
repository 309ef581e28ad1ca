#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The mounted tree is the export, byte for byte and attribute for attribute: the bundled Liger
# import mounted with kindexfs against `kindex export` of the same store (diff -r, find counts,
# size/mtime/mode/link count of every entry, st_blocks), a run's index.html in its two places
# (stat, sha256sum -c, not linked), a comparison group of 700 runs listed in
# full with stable inode numbers, the known ranking, xattrs and statfs.
. "$(dirname "$0")/mount-lib.sh"

store="$work/store"
export_dir="$work/export"
mnt="$work/mnt"
make_liger_store "$store"
"$KINDEX" -q --store "$store" export "$export_dir" || die "kindex export failed"
mount_fg "$store" "$mnt"

# a run's page (SPEC §8) in its two places, asked before anything is read: each place's own bytes
# (its links are relative), its size in stat its length, covered by its directory's SHA256SUMS and
# the rank directory's by its group's; in the export, two files, not one linked
rank_dir=$(find "$mnt/benchmarks" -mindepth 5 -maxdepth 5 -type d -name '02-*' | head -1)
id=$(getfattr --only-values -n user.kindex.digest "$rank_dir" | cut -c8-19)
for d in "$rank_dir" "$mnt/runs/$id"; do
	size=$(stat -c %s "$d/index.html")
	check "${d#"$mnt"/}/index.html: stat's size is its length ($size)" \
		[ "${size:-0}" -gt 0 -a "$size" = "$(wc -c <"$d/index.html")" ]
	check "sha256sum -c passes there, index.html included" \
		bash -c "cd '$d' && grep -q '  index.html\$' SHA256SUMS && sha256sum --quiet --strict -c SHA256SUMS"
done
check "and in its group: its SHA256SUMS covers the rank directories' pages" \
	bash -c "cd '$rank_dir/..' && grep -q '/index.html\$' SHA256SUMS && sha256sum --quiet --strict -c SHA256SUMS"
check "the two places' pages differ, and neither is a link of the other" \
	bash -c "! cmp -s '$rank_dir/index.html' '$mnt/runs/$id/index.html' &&
		[ \$(stat -c %h%i '$rank_dir/index.html') != \$(stat -c %h%i '$mnt/runs/$id/index.html') ] &&
		[ \$(stat -c %h '$export_dir/runs/$id/index.html') = 1 ]"
check "diff -r finds no difference between the mount and the export" diff -r "$mnt" "$export_dir"
for t in f d; do
	m=$(find "$mnt" -type $t | wc -l)
	e=$(find "$export_dir" -type $t | wc -l)
	check "find -type $t counts the same entries ($m)" [ "$m" = "$e" ]
done
listing "$mnt" >"$work/mount.lst"
listing "$export_dir" >"$work/export.lst"
check "every entry has the export's type, size, mtime, mode and link count" cmp -s "$work/mount.lst" "$work/export.lst"
cmp -s "$work/mount.lst" "$work/export.lst" || diff "$work/mount.lst" "$work/export.lst" | head -5 >&2
# a document's file is one inode, hard-linked into every run that names it
env_file="$mnt/runs/$(ls "$mnt/runs" | head -1)/environment.json"
links=$(stat -c %h "$env_file")
same=$(find "$mnt" -samefile "$env_file" | wc -l)
check "an environment.json is one file in every run naming it: $links links, find -samefile finds $same" \
	[ "$links" -gt 2 -a "$links" = "$same" ]
(cd "$mnt" && find . -type f -links +1 -printf '%f\n' | sort -u | tr '\n' ' ') >"$work/linked"
check "only documents' files are linked ($(cat "$work/linked"))" \
	[ "$(cat "$work/linked")" = "environment.json implementation.json protocol.json workload.json " ]
bad_blocks=$(find "$mnt" -type f -printf '%s %b\n' | awk '$2 != int(($1 + 511) / 512)' | wc -l)
check "st_blocks is ceil(size / 512) for every file" [ "$bad_blocks" = 0 ]
zero=$(find "$mnt" -type f -size 0 | wc -l)
check "no generated file is empty" [ "$zero" = 0 ]

# the independent checker of the Liger partition and ranking (tests/tools)
out=$(python3 "$KX_SOURCE_ROOT/tests/tools/check_liger_tree.py" "$mnt" "$LIGER_CSV" 2>&1 | tail -1)
check "check_liger_tree.py on the mount: $out" bash -c "[[ '$out' == 'liger-tree: OK'* ]]"

simpo="$mnt/benchmarks/fused_linear_simpo_loss/forward/nvidia-a100-sxm4-80gb/batch4-hidden4096-seq1024-vocab128256-bf16"
first=$(ls "$simpo" | grep -E '^[0-9]' | head -2 | tr '\n' ' ')
check "the published ranking holds: huggingface 1st, liger 2nd ($first)" \
	bash -c "[[ '$first' == 01-huggingface-*\ 02-liger-*\  ]]"
check "ranking.tsv is readable and names both" grep -q huggingface "$simpo/ranking.tsv"

run=$(ls "$mnt/runs" | head -1)
digest=$(getfattr --only-values -n user.kindex.digest "$mnt/runs/$run" 2>/dev/null)
check "user.kindex.digest of runs/$run is its digest" bash -c "[[ '$digest' == sha256:$run* ]]"
check "user.kindex.* are listed" bash -c "getfattr -d -m - '$mnt/runs/$run/manifest.json' 2>/dev/null | grep -q user.kindex.rank"
msg=$(getfattr -n user.kindex.nope "$mnt/README" 2>&1)
check "an unknown xattr is ENODATA ($msg)" bash -c "[[ '$msg' == *'No such attribute'* ]]"
check "statfs answers (df)" df "$mnt"
names_ok=$(cd "$mnt/digests/sha256" && sha256sum -- * | awk '$2 != $1 ".json"' | wc -l)
check "every digests/sha256 file hashes to its name" [ "$names_ok" = 0 ]

# a comparison group of 700 runs: a directory of 700 rank directories and the group's files
big="$work/big"
python3 "$KX_SOURCE_ROOT/bench/gen-manifests" 700 "$work/gen" --big-group 700 >/dev/null || die "gen-manifests failed"
"$KINDEX" -q --store "$big" init >/dev/null && "$KINDEX" -q --store "$big" ingest "$work/gen" >/dev/null ||
	die "cannot build the 700-run store"
mount_fg "$big" "$work/bigmnt"
group=$(find "$work/bigmnt/benchmarks" -mindepth 4 -maxdepth 4 -type d | while read -r d; do
	echo "$(ls "$d" | wc -l) $d"; done | sort -n | tail -1)
count=${group%% *}
group=${group#* }
files=$(find "$group" -mindepth 1 -maxdepth 1 -type f | wc -l)
dirs=$(find "$group" -mindepth 1 -maxdepth 1 -type d | wc -l)
check "the big group lists its 700 rank directories ($dirs) and its files ($files)" \
	[ "$dirs" = 700 -a "$count" = $((700 + files)) -a "$files" -ge 4 ]
ls -i "$group" >"$work/inodes.1"
ls -ia "$group" | grep -v ' \.\.\?$' >"$work/inodes.2"
check "its inode numbers are the same in a second listing" cmp -s "$work/inodes.1" "$work/inodes.2"
distinct=$(awk '{print $1}' "$work/inodes.1" | sort -u | wc -l)
check "and all distinct ($distinct)" [ "$distinct" = "$count" ]
check "ls -l of the big group" bash -c "ls -l '$group' >/dev/null"
unmount "$work/bigmnt" "$daemon"
mount_fg "$big" "$work/bigmnt"
ls -i "$group" >"$work/inodes.3"
check "and the same after a remount" cmp -s "$work/inodes.1" "$work/inodes.3"

for m in "$mnt" "$work/bigmnt"; do
	check "the daemon serving $(basename "$m") wrote nothing to stderr" [ ! -s "$m.err" ]
done
finish
