#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Liger-Kernel CSV end to end, checked the way a user would: import it, count the runs, find
# the published ranks and digests, import it again (nothing changes), import a doctored copy (a
# conflict, nothing written), export the tree and check it with sha256sum -c and the independent
# checker (tests/tools/check_liger_tree.py).
source "$(dirname "$0")/cli-lib.sh"
cd "$tmp"
export KINDEX_STORE=$tmp/store

SIMPO=benchmarks/fused_linear_simpo_loss/forward/nvidia-a100-sxm4-80gb/batch4-hidden4096-seq1024-vocab128256-bf16
FLCE=benchmarks/fused_linear_cross_entropy/forward/nvidia-a100-sxm4-80gb/hidden4096-tokens16384-vocab128256-bf16

expect 0 "$KINDEX" init
expect 0 "$KINDEX" import liger "$csv"
check "import reports 2448 runs added" contains out "imported 2448 runs: 2448 added, 0 already present"
expect 0 "$KINDEX" ls runs
check "kindex ls runs lists 2448 runs" test "$(wc -l <out)" = 2448
check "every run directory is a 12-hex short id" test "$(grep -cE '^[0-9a-f]{12}/$' out)" = 2448
expect 0 "$KINDEX" ls digests/sha256
ndocs=$(wc -l <out)
expect 0 "$KINDEX" ls -l
cp out root-before

# the published ranking of the SimPO group
expect 0 "$KINDEX" ls "$SIMPO"
grep -E '^[0-9]+-' out >simpo-runs
check "SimPO A100 batch 4 holds two ranked runs" test "$(wc -l <simpo-runs)" = 2
check "rank 1 is huggingface" grep -qE '^01-huggingface-[0-9a-f]{12}/$' simpo-runs
check "rank 2 is liger" grep -qE '^02-liger-[0-9a-f]{12}/$' simpo-runs
for f in ranking.tsv ranking.json GROUP.json SHA256SUMS; do
	check "the group lists $f" grep -qx "$f" out
done
expect 0 "$KINDEX" show "$SIMPO/$(sed -n 2p simpo-runs)"
check "show of rank 2: 58.81 ms" contains out "58.81 ms"
check "show of rank 2: rank 2 of 2" contains out "2 of 2"
check "show of rank 2: vs #1 huggingface 28.78 ms" contains out "huggingface, 28.78 ms"

# the published FLCE record
expect 0 "$KINDEX" ls "$FLCE"
flce=$(grep -E -- '-liger-[0-9a-f]{12}/$' out | tr -d /)
[[ -n $flce ]] || die "no liger run in $FLCE"
flce_id=${flce##*-}
expect 0 "$KINDEX" show "$flce_id"
check "show by short id: 274.1 ms" contains out "274.1 ms"
check "show: the externalId" contains out "fused_linear_cross_entropy/forward/liger/nvidia-a100-sxm4-80gb/hidden4096-tokens16384-vocab128256-bf16/2024-11-22-17-44-03"
check "show: source-native evidence" contains out "source-native"
expect 0 "$KINDEX" show "${flce_id:0:6}"
check "show by a 6-digit prefix" contains out "274.1 ms"

# importing again changes nothing
expect 0 "$KINDEX" import liger "$csv"
check "a re-import adds nothing" contains out "imported 2448 runs: 0 added, 2448 already present"
expect 0 "$KINDEX" ls -l
check "the store is unchanged after a re-import (README size and mtime)" cmp -s out root-before

# a doctored copy: the same observation with another median is a conflict, nothing is written
# (p20 and p80 move with it: in this row all three are equal, and quantiles must stay in order)
sed '184s/^\(fused_linear_cross_entropy,liger,forward,speed,ms,BT,B x T,16384\),274\.07342529296875,274\.07342529296875,274\.07342529296875,/\1,199.5,199.5,199.5,/' \
	"$csv" >doctored.csv
[[ $(sed -n 184p doctored.csv) == *",16384,199.5,"*"NVIDIA A100-SXM4-80GB"* ]] || die "line 184 of the CSV is not the FLCE A100 row"
expect 1 "$KINDEX" import liger doctored.csv
check "the changed copy is refused" contains err "refused"
check "... as a conflict" contains err "conflict"
check "... naming the stored run" contains err "runs/$flce_id"
check "... and the file and line of the row (doctored.csv:184)" contains err "doctored.csv:184"
expect 0 "$KINDEX" ls -l
check "nothing was written (README size and mtime unchanged)" cmp -s out root-before
expect 0 "$KINDEX" ls runs
check "still 2448 runs" test "$(wc -l <out)" = 2448

# a CSV with a bad row: refused with its line, nothing written
sed '10s/,speed,ms,/,speed,furlongs,/' "$csv" >badunit.csv
expect 1 "$KINDEX" import liger badunit.csv
check "a bad row is refused naming badunit.csv:10 and the column" contains err "badunit.csv:10: column metric_unit"

expect 0 "$KINDEX" verify
check "verify: no problems" contains out "no problems"

# the exported tree
expect 0 "$KINDEX" export ex
check "export reports the runs" contains err "exported 2448 runs"
check "README counts 2448 runs" grep -qE '^runs +2448$' ex/README
check "README names the store" contains ex/README "$KINDEX_STORE"
check "every run is under runs/" test "$(find ex/runs -mindepth 1 -maxdepth 1 -type d | wc -l)" = 2448
check "every document is under digests/sha256" test "$(find ex/digests/sha256 -name '*.json' | wc -l)" = "$ndocs"
check "the export is read-only, like the mount" test "$(stat -c %a ex/README)" = 444

tsv=ex/$SIMPO/ranking.tsv
check "ranking.tsv: rank 1 huggingface, 28780993 ns" grep -qP '^1\t01-huggingface-[0-9a-f]{12}\thuggingface\t28780993\tns\t1.000\t' "$tsv"
check "ranking.tsv: rank 2 liger, 58808769 ns" grep -qP '^2\t02-liger-[0-9a-f]{12}\tliger\t58808769\tns\t2.043\t' "$tsv"
check "ranking.tsv: header and two runs" test "$(wc -l <"$tsv")" = 3

run=ex/$FLCE/$flce
check "DIGESTS: protocol a79eaf4d…" contains "$run/DIGESTS" "protocol sha256:a79eaf4df66c97c6adc1fb2d09df78682155d1ea86652ae0b70199875bde7747"
check "DIGESTS: environment 90c9e276…" contains "$run/DIGESTS" "environment sha256:90c9e2764222f592477cfccf3373519add5a1b881563956ad058c4f99e41b6b9"
check "DIGESTS: run = the directory's short id" grep -q "^run sha256:$flce_id" "$run/DIGESTS"
if command -v python3 >/dev/null; then
	check "run.json: timing.latencyNs.median 274073425" \
		python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["spec"]["timing"]["latencyNs"]["median"] != 274073425)' "$run/run.json"
	check "manifest.json is a manifest with the run's documents" \
		python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); sys.exit(sorted(m) != ["environment","implementation","protocol","run","workload"])' "$run/manifest.json"
else
	check "run.json: median 274073425" contains "$run/run.json" '"median": 274073425'
fi
check "the run's files have its observedAt as mtime" test "$(stat -c %Y "$run/run.json")" = 1732297443
# the same files and bytes, but for index.html (its links are its place's: SPEC §8) and the
# SHA256SUMS that hashes it, which list the same names
check "runs/<id>/ holds the same files as the rank directory" bash -c "
	diff -r -x index.html -x SHA256SUMS '$run' 'ex/runs/$flce_id' && diff <(ls '$run') <(ls 'ex/runs/$flce_id') &&
	diff <(cut -c67- '$run/SHA256SUMS') <(cut -c67- 'ex/runs/$flce_id/SHA256SUMS')"
expect 0 "$KINDEX" digest "$run/manifest.json"
check "kindex digest of the exported manifest.json agrees with DIGESTS" \
	bash -c 'grep -qF "$(grep ^protocol "$1")" "$2" && grep -qF "$(grep ^run "$1")" "$2"' _ "$run/DIGESTS" "$tmp/out"
# the exported manifest re-ingests as the same run, into this store and a fresh one
expect 0 "$KINDEX" ingest "$run/manifest.json"
check "re-ingesting an exported manifest: already present" contains err "0 runs added, 1 already present"
expect 0 "$KINDEX" --store fresh init
expect 0 "$KINDEX" --store fresh ingest "$run/manifest.json"
expect 0 "$KINDEX" --store fresh ls runs
check "... and into a fresh store as the same run id" test "$(cat out)" = "$flce_id/"

# sha256sum -c in group and run directories (these two, and a sample of the rest)
for d in "ex/$SIMPO" "ex/$FLCE" "$run" "ex/runs/$flce_id"; do
	check "sha256sum -c in ${d#ex/}" bash -c 'cd "$1" && sha256sum -c --strict --quiet SHA256SUMS' _ "$d"
done
find ex/benchmarks -name SHA256SUMS | awk 'NR % 53 == 0' >sample
bad=0
while read -r s; do
	(cd "$(dirname "$s")" && sha256sum -c --strict --quiet SHA256SUMS) || bad=$((bad + 1))
done <sample
check "sha256sum -c in $(wc -l <sample) sampled directories" test "$bad" = 0
check "SHA256SUMS covers every file of a run directory" \
	bash -c 'cd "$1" && diff <(ls | grep -vx SHA256SUMS) <(awk "{print \$2}" SHA256SUMS | sort)' _ "$run"
bad=0
for f in $(ls ex/digests/sha256 | awk 'NR % 97 == 1'); do
	[[ $(sha256sum <"ex/digests/sha256/$f" | cut -c1-64).json == "$f" ]] || bad=$((bad + 1))
done
check "digests/sha256/<hex>.json hash to their names" test "$bad" = 0

# kindex cat: any file, the bytes the export (and so the mount) has
expect 0 "$KINDEX" cat "$SIMPO/ranking.tsv" "/$FLCE/$flce/manifest.json" README
check "kindex cat prints the files one after another, as exported" \
	cmp out <(cat "ex/$SIMPO/ranking.tsv" "$run/manifest.json" ex/README)
check "... the SPEC's known check in the new columns: liger 58.81 ms, 2nd, its version" \
	awk -F'\t' '$1 == 2 && $3 == "liger" && $16 == "58.81 ms" && $13 != "" { n++ } END { exit n != 1 }' out
expect 1 "$KINDEX" cat "$SIMPO/no-such-file" "$SIMPO/GROUP.json"
check "kindex cat of a missing path: exit 1, naming it" contains err "kindex: cat: '${SIMPO:0:60}"
check "... and why" contains err ": no such file in the tree (kindex ls lists a directory)"
check "... and the other paths are still printed" cmp out "ex/$SIMPO/GROUP.json"
expect 1 "$KINDEX" cat benchmarks
check "kindex cat of a directory: exit 1, is a directory" contains err "'benchmarks': is a directory"

# the independent checker of the partition into groups and the order inside each
python3 "$KX_SOURCE_ROOT/tests/tools/check_liger_tree.py" ex "$csv" >checker.out 2>&1
check "check_liger_tree.py: OK" grep -q '^liger-tree: OK n=2448' checker.out
tail -5 checker.out
finish
