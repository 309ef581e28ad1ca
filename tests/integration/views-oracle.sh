#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The independent oracle of the views (tests/tools/liger_views.py) against values worked out by
# hand from the CSV rows, then against an export: its ranking view must agree with every group's
# ranking.tsv, and its checker must notice a doctored file and a file the tree lacks. The views'
# own tests (views-*.sh) then trust it for index.tsv, sweep.tsv, gpus.tsv and compare/.
source "$(dirname "$0")/cli-lib.sh"
cd "$tmp"
oracle=$KX_SOURCE_ROOT/tests/tools/liger_views.py
history=$KX_SOURCE_ROOT/examples/liger-history/all_benchmark_data.history.csv
tab=$'\t'

# row FILE KERNEL PASS GPU WORKLOAD IMPL STATUS: that run's line of a ranking view
row() {
	grep -F "$2$tab$3$tab$4$tab$5$tab" "$1" | awk -F'\t' -v i="$6" -v s="$7" '$6 == i && $8 == s'
}
# is FILE KERNEL PASS GPU WORKLOAD IMPL STATUS EXPECTED: that line is EXPECTED (columns 5.., tabs;
# two spaces in a row: an empty field, a value not known or that does not apply)
is() {
	local got want
	got=$(row "$1" "$2" "$3" "$4" "$5" "$6" "$7" | cut -f5-)
	want=$(tr ' ' '\t' <<<"$8")
	[[ $got == "$want" ]] || { echo "  got  $got" >&2; echo "  want $want" >&2; return 1; }
}

expect 0 python3 "$oracle" "$csv" ranking
mv out newest
expect 0 python3 "$oracle" "$history" ranking
mv out hist

# SPEC §5's known check: CSV lines 585 (huggingface, 28.78099250793457 ms, p20 28.72719383239746,
# p80 28.792186737060547) and 581 (liger 0.4.1, 58.80876922607422 ms thrice); round(ms × 1e6) ns
G="fused_linear_simpo_loss forward nvidia-a100-sxm4-80gb batch4-hidden4096-seq1024-vocab128256-bf16"
check "SimPO A100: huggingface 28.78 ms ranks 1" \
	is newest $G huggingface passed "1 huggingface  passed 28780993 28727194 28792187 ns  2024-11-15T14:27:56.000Z"
check "SimPO A100: liger 58.81 ms ranks 2, not within noise" \
	is newest $G liger passed "2 liger 0.4.1 passed 58808769 58808769 58808769 ns no 2024-11-15T14:27:26.000Z"
# within noise: CSV lines 55 (torch_compile 0.046528 ms, p80 0.047552), 39 (liger 0.046688, p20
# 0.0456: overlaps), 47 (huggingface, p20 0.143584: above liger's p80 0.048256)
G="embedding forward nvidia-a100-sxm4-80gb d768-batch32-seq512-vocab2048-fp32"
check "embedding A100: torch_compile ranks 1" \
	is newest $G torch_compile passed "1 torch_compile  passed 46528 45318 47552 ns  2024-09-03T15:32:01.000Z"
check "embedding A100: liger ranks 2, within noise of #1" \
	is newest $G liger passed "2 liger 0.2.1 passed 46688 45600 48256 ns yes 2024-09-03T15:31:53.000Z"
check "embedding A100: huggingface ranks 3, not within noise of #2" \
	is newest $G huggingface passed "3 huggingface  passed 144064 143584 144640 ns no 2024-09-03T15:31:56.000Z"
# history: FLCE A100 16384 tokens was published twice by each implementation; only the newest
# (2024-11-22) runs rank, the 2024-09-03 ones are superseded
G="fused_linear_cross_entropy forward nvidia-a100-sxm4-80gb hidden4096-tokens16384-vocab128256-bf16"
check "FLCE A100 history: huggingface of 2024-11-22 ranks 1" \
	is hist $G huggingface passed "1 huggingface  passed 76391426 76391426 76391426 ns  2024-11-22T17:44:34.000Z"
check "FLCE A100 history: liger 0.4.2 ranks 2" \
	is hist $G liger passed "2 liger 0.4.2 passed 274073425 274073425 274073425 ns no 2024-11-22T17:44:03.000Z"
check "FLCE A100 history: huggingface of 2024-09-03 is superseded" \
	is hist $G huggingface superseded " huggingface  superseded 76044067 76044067 76044067 ns  2024-09-03T15:35:45.000Z"
check "FLCE A100 history: liger 0.2.1 is superseded" \
	is hist $G liger superseded " liger 0.2.1 superseded 264119659 264119659 264119659 ns  2024-09-03T15:35:13.000Z"
check "the newest CSV: 2448 current runs, none superseded" \
	test "$(grep -c "${tab}passed$tab" newest) $(grep -c "${tab}superseded$tab" newest)" = "2448 0"
check "the history CSV: 2820 current runs, 120 superseded" \
	test "$(grep -c "${tab}passed$tab" hist) $(grep -c "${tab}superseded$tab" hist)" = "2820 120"

# the oracle against the tree: every ranking.tsv of an export of the history CSV (it holds every
# row of the newest one; one export, as writing 60,000 files takes seconds on a slow disk)
expect 0 "$KINDEX" --store store init
expect 0 "$KINDEX" -q --store store import liger "$history"
expect 0 "$KINDEX" -q --store store export tree
expect 0 python3 "$oracle" "$history" check tree ranking index
check "ranking.tsv of every group and /index.tsv agree with the oracle" contains out "liger-views: OK views=ranking,index files=1233 rows=5880"
# the checker notices: a doctored value and within_noise (a copy of one group), a file not there
G=benchmarks/fused_linear_cross_entropy/forward/nvidia-a100-sxm4-80gb/hidden4096-tokens16384-vocab128256-bf16
mkdir -p doctored/$G
sed 's/\t76391426\t/\t76391427\t/; s/\tno\t\t\t$/\tyes\t\t\t/' tree/$G/ranking.tsv >doctored/$G/ranking.tsv
expect 1 python3 "$oracle" "$history" check doctored ranking
check "check reports a changed median" contains out "ranking.tsv:2: median is '76391427', expected '76391426'"
check "check reports a changed within_noise" contains out "ranking.tsv:3: within_noise is 'yes', expected 'no'"
check "check reports the groups the tree lacks" contains out "nvidia-a100-sxm4-80gb/hidden4096-tokens4096-vocab128256-bf16/ranking.tsv: missing"
check "check fails with a count" grep -qE '^liger-views: FAIL [0-9]+ problems' out
expect 1 python3 "$oracle" "$history" check doctored index pairs
check "check reports a missing index.tsv" contains out "index.tsv: missing"
check "check reports a missing compare/" contains out "compare/: missing"
finish
