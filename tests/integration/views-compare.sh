#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# compare/ (docs/views.md) on mounts of the bundled Liger data and of the history CSV: compare/
# lists the pairs the independent oracle (tests/tools/liger_views.py, from the CSV alone) finds,
# every summary.tsv and <gpu>.tsv holds its rows — their ratios, versions, dates and mixed marks,
# the totals of each GPU and metric —, a row worked out by hand from the CSV is there, every page
# shows its directory's files (tests/tools/compare_pages.py: a pair's table is its summary.tsv, its
# totals add up, compare/'s table is every pair's totals per GPU and metric), `kindex compare`
# prints the mount's bytes and the export is the mount; then, on a writable mount, a drop changes a
# compare file and the pages for a reader who read them before (a liger run of 2025 against
# huggingface's of 2024: a mixed row), and a new implementation makes new pair directories where a
# lookup had failed.
. "$(dirname "$0")/mount-lib.sh"

# the export goes to tmpfs where there is one: 30,000 small files take 10-30 s on a loaded disk
export_dir=$(mktemp -d /dev/shm/kindexfs-views-compare.XXXXXX 2>/dev/null || mktemp -d "$work/export.XXXXXX")
trap 'chmod -R u+w "$export_dir" 2>/dev/null; rm -rf "$export_dir"; cleanup' EXIT
oracle=$KX_SOURCE_ROOT/tests/tools/liger_views.py
pages=$KX_SOURCE_ROOT/tests/tools/compare_pages.py
history=$KX_SOURCE_ROOT/examples/liger-history/all_benchmark_data.history.csv
tab=$'\t'

# same_bytes A B: two files' bytes are equal (cmp says where they are not)
same_bytes() { cmp "$1" "$2" >&2; }

for data in newest history; do
	csv=$LIGER_CSV
	[ $data = newest ] || csv=$history
	store="$work/$data.store" mnt="$work/$data.mnt"
	"$KINDEX" -q --store "$store" init >/dev/null || die "kindex init failed"
	"$KINDEX" -q --store "$store" import liger "$csv" >/dev/null || die "kindex import liger $csv failed"
	mount_fg "$store" "$mnt"

	python3 "$oracle" "$csv" pairs | tail -n +2 >"$work/$data.pairs" || die "liger_views.py pairs failed"
	ls "$mnt/compare" >"$work/$data.ls"
	check "$data: compare/ lists the $(wc -l <"$work/$data.pairs") pairs the oracle finds, and its page" \
		diff <(sort "$work/$data.pairs" - <<<index.html) "$work/$data.ls"
	python3 "$oracle" "$csv" check "$mnt" compare pairs >"$work/$data.check"
	check "$data: every summary.tsv and <gpu>.tsv is the oracle's ($(tail -1 "$work/$data.check"))" \
		grep -q "^liger-views: OK views=compare,pairs" "$work/$data.check"
	grep -v '^liger-views' "$work/$data.check" | head -5 | sed 's/^/# /'
	python3 "$pages" "$mnt/compare" >"$work/$data.pages"
	check "$data: every pair's page shows its summary.tsv and links its files, compare/'s its pairs ($(tail -1 "$work/$data.pages"))" \
		grep -q "^compare-pages: OK" "$work/$data.pages"
	head -5 "$work/$data.pages" | grep '^#'
	# stat's size is what a read gives, for every page
	sizes=$(cd "$mnt/compare" && for f in index.html */index.html; do
		[ "$(stat -c %s "$f")" = "$(wc -c <"$f")" ] || echo "$f"; done)
	check "$data: each page's st_size is its bytes' (${sizes:-all})" [ -z "$sizes" ]

	# SPEC §5's known check, by hand from the CSV: fused_linear_simpo_loss forward on the A100,
	# batch4-hidden4096-seq1024-vocab128256-bf16: huggingface 28.78099250793457 ms (line 585,
	# 2024-11-15 14:27:56, no version: Liger's liger_version is its own), liger 58.80876922607422 ms
	# (line 581, 2024-11-15 14:27:26, 0.4.1), each round(ms × 1e6) ns; ratio 28780993 / 58808769
	a100=nvidia-a100-sxm4-80gb
	row() {
		awk -F'\t' -v w=batch4-hidden4096-seq1024-vocab128256-bf16 \
			'$1 == "fused_linear_simpo_loss" && $2 == "forward" && $4 == w' "$mnt/compare/$1/$a100.tsv"
	}
	check "$data: <gpu>.tsv's header is the vocabulary's (docs/views.md)" \
		[ "$(head -1 "$mnt/compare/liger..huggingface/$a100.tsv")" = "$(printf '%s\t' kernel pass metric workload unit \
		candidate_median baseline_median ratio result mixed candidate_version baseline_version \
		candidate_observed_at | sed 's/$/baseline_observed_at/')" ]
	check "$data: liger..huggingface, SimPO on the A100: 58808769 ns against 28780993 ns, ratio 0.4894, a loss" \
		[ "$(row liger..huggingface | cut -f3,5-10)" = "latency${tab}ns${tab}58808769${tab}28780993${tab}0.4894${tab}loss${tab}no" ]
	check "$data: each side's version and date, 30 s apart: not mixed" \
		[ "$(row liger..huggingface | cut -f11-)" = "0.4.1${tab}${tab}2024-11-15T14:27:26.000Z${tab}2024-11-15T14:27:56.000Z" ]
	check "$data: huggingface..liger: ratio 2.043, a win, the sides swapped" \
		[ "$(row huggingface..liger | cut -f8,9,11-)" = "2.043${tab}win${tab}${tab}0.4.1${tab}2024-11-15T14:27:56.000Z${tab}2024-11-15T14:27:26.000Z" ]
	check "$data: summary.tsv's header is the vocabulary's" \
		[ "$(head -1 "$mnt/compare/liger..huggingface/summary.tsv")" = "$(printf 'kernel\tpass\tmetric\tgpu\tgroups\tgeomean_ratio\twins\tlosses\tnoise\tties\tmixed_groups')" ]
	# its totals: one line per GPU and metric, latency and memory apart, before the other lines
	python3 "$oracle" "$csv" compare liger huggingface | awk -F'\t' 'NR > 1 && $1 == "" { print $4 "/" $3 }' >"$work/$data.totals"
	check "$data: liger..huggingface's summary.tsv begins with a total for each GPU and metric ($(paste -sd' ' "$work/$data.totals"))" \
		[ -s "$work/$data.totals" -a "$(awk -F'\t' 'NR > 1 && $1 == "" { print $4 "/" $3 }' "$mnt/compare/liger..huggingface/summary.tsv")" = "$(cat "$work/$data.totals")" \
		-a "$(sed -n "$(($(wc -l <"$work/$data.totals") + 2))p" "$mnt/compare/liger..huggingface/summary.tsv" | cut -f1)" != "" ]
	# mixed: the oracle's count of rows whose sides lie more than 90 days apart, over every file
	want_mixed=$(python3 "$oracle" "$csv" mixed | awk -F'\t' '$1 == "compare_rows_mixed" { print $2 }')
	got_mixed=$(find "$mnt/compare" -name '*.tsv' ! -name summary.tsv -exec cat {} + | awk -F'\t' '$10 == "yes"' | wc -l)
	check "$data: $got_mixed compare rows are mixed, as the CSV's dates say ($want_mixed)" [ -n "$want_mixed" -a "$got_mixed" = "$want_mixed" ]

	# kindex compare prints the mount's bytes
	for p in liger..huggingface huggingface..liger liger..torch_compile; do
		c=${p%%..*} b=${p#*..}
		"$KINDEX" --store "$store" compare "$c" "$b" >"$work/cli.summary" 2>"$work/cli.err"
		check "$data: kindex compare $c $b is $p/summary.tsv" same_bytes "$work/cli.summary" "$mnt/compare/$p/summary.tsv"
		gpu=$(ls "$mnt/compare/$p" | grep '\.tsv$' | grep -v '^summary.tsv$' | head -1)
		"$KINDEX" --store "$store" compare "$c" "$b" --gpu "${gpu%.tsv}" >"$work/cli.gpu" 2>"$work/cli.err"
		check "$data: kindex compare $c $b --gpu ${gpu%.tsv} is $p/$gpu" same_bytes "$work/cli.gpu" "$mnt/compare/$p/$gpu"
	done

	# the export is the mount: the same names, bytes, sizes, mtimes, modes and links (one export)
	if [ $data = newest ]; then
		"$KINDEX" -q --store "$store" export "$export_dir/$data" || die "kindex export failed"
		check "$data: the export's compare/ is the mount's, byte for byte" \
			diff -r "$export_dir/$data/compare" "$mnt/compare"
		check "$data: and in names, sizes, mtimes, modes and links" \
			diff <(listing "$export_dir/$data/compare") <(listing "$mnt/compare")
	fi
	unmount "$mnt" "$daemon" || fail "$data: the daemon did not exit 0"
done

# what the CLI says where there is nothing to print
store=$work/newest.store
"$KINDEX" --store "$store" compare liger nobody >"$work/out" 2>"$work/err"
check "kindex compare of an unknown implementation: exit 1" [ $? = 1 ]
check "it names it and the implementations there are" \
	grep -q "no implementation 'nobody' has a current run; known implementations: .*huggingface, liger" "$work/err"
"$KINDEX" --store "$store" compare megatron liger_rms_norm >"$work/out" 2>"$work/err"
check "two that share no group: exit 1, and whom the candidate is compared with" \
	[ $? = 1 -a -n "$(grep "'megatron' and 'liger_rms_norm' share no group; 'megatron' is compared with: liger" "$work/err")" ]
"$KINDEX" --store "$store" compare liger huggingface --gpu nvidia-h100 >"$work/out" 2>"$work/err"
check "a GPU they share no group on: exit 1, and the GPUs they do" \
	[ $? = 1 -a -n "$(grep "share no group on GPU 'nvidia-h100'; they share groups on: nvidia-a100-sxm4-80gb" "$work/err")" ]
check "and nothing on standard output" [ ! -s "$work/out" ]
"$KINDEX" --store "$store" compare liger liger >"$work/out" 2>"$work/err"
check "an implementation against itself: a usage error (2)" [ $? = 2 ]

# a drop, on a writable mount: a reader who read a compare file before reads the new one after
mnt=$work/rw.mnt
mount_fg "$store" "$mnt" -o rw
pair=$mnt/compare/liger..huggingface
file=$pair/nvidia-a100-sxm4-80gb.tsv
cp "$file" "$work/before.tsv"
cp "$pair/index.html" "$work/before.pair.html"
cp "$mnt/compare/index.html" "$work/before.compare.html"
stat -c '%s %Y %i' "$file" >"$work/before.stat"
ls "$mnt/compare/newimpl..liger" >/dev/null 2>&1 # a failed lookup: the kernel may keep that answer
g=benchmarks/fused_linear_simpo_loss/forward/nvidia-a100-sxm4-80gb/batch4-hidden4096-seq1024-vocab128256-bf16
src=$(ls -d "$mnt/$g"/*-liger-*)/manifest.json
# a newer liger run, 20 ms (faster than huggingface's 28.78), and a run of a new implementation:
# new spec values, so new run digests; the new implementation's document hashed again
python3 - "$src" "$work/drop-liger.json" "$work/drop-new.json" <<'EOF'
import copy, json, sys
sys.path.insert(0, __import__('os').environ['KX_SOURCE_ROOT'] + '/tests/integration')
import kxjcs
m = json.load(open(sys.argv[1]))
def newer(m, median, when):
    m = copy.deepcopy(m)
    s = m['run']['spec']
    s['benchmark'] = s.pop('sourceNative')['benchmark']
    s['observedAt'] = when
    s['timing']['latencyNs']['median'] = median
    for x in s['measurements']:
        x['value'] = median
    return m
json.dump(newer(m, 20000000, '2025-06-01T00:00:00.000Z'), open(sys.argv[2], 'w'))
n = newer(m, 30000000, '2025-06-01T00:00:01.000Z')
n['implementation']['spec']['name'] = 'newimpl'
n['implementation']['metadata']['name'] = 'newimpl'
n['run']['spec']['implementationDigest'] = kxjcs.digest(n['implementation'])
json.dump(n, open(sys.argv[3], 'w'))
EOF
cp "$work/drop-liger.json" "$work/drop-new.json" "$mnt/inbox/" || fail "cp into the inbox failed"
check "both drops are accepted" test -f "$mnt/inbox/.accepted/drop-liger.json" -a -f "$mnt/inbox/.accepted/drop-new.json"
row=$(awk -F'\t' '$1 == "fused_linear_simpo_loss" && $2 == "forward" && $4 == "batch4-hidden4096-seq1024-vocab128256-bf16"' "$file")
check "the reader reads the new row: liger's newest run, 20 ms against 28.78, a win" \
	[ "$(cut -f5-7,9 <<<"$row")" = "ns${tab}20000000${tab}28780993${tab}win" ]
check "observed 2025-06-01, 198 days after huggingface's: mixed, its date in the row" \
	[ "$(cut -f10,13,14 <<<"$row")" = "yes${tab}2025-06-01T00:00:00.000Z${tab}2024-11-15T14:27:56.000Z" ]
check "and the other rows as before" \
	diff <(grep -v batch4-hidden4096-seq1024-vocab128256-bf16 "$work/before.tsv") <(grep -v batch4-hidden4096-seq1024-vocab128256-bf16 "$file")
check "stat sees a new size or mtime, and a new inode (a version of its own)" \
	[ "$(stat -c '%s %Y %i' "$file")" != "$(cat "$work/before.stat")" -a \
	"$(stat -c %i "$file")" != "$(cut -d' ' -f3 "$work/before.stat")" ]
# wins and mixed_groups of a summary line: kernel pass (empty: the GPU's total) and metric, on the A100
wins_mixed() {
	awk -F'\t' -v k="$1" -v p="$2" -v m="$3" '$1 == k && $2 == p && $3 == m && $4 == "nvidia-a100-sxm4-80gb" { print $7, $11 }' "$4"
}
before=$export_dir/newest/compare/liger..huggingface/summary.tsv
check "summary.tsv follows: one win and one mixed group more for liger on fused_linear_simpo_loss forward" \
	[ "$(wins_mixed fused_linear_simpo_loss forward latency "$pair/summary.tsv")" = \
	"$(wins_mixed fused_linear_simpo_loss forward latency "$before" | awk '{ print $1 + 1, $2 + 1 }')" ]
check "and in the A100's latency total; its memory total as it was" \
	[ "$(wins_mixed "" "" latency "$pair/summary.tsv")" = "$(wins_mixed "" "" latency "$before" | awk '{ print $1 + 1, $2 + 1 }')" -a \
	"$(wins_mixed "" "" memory "$pair/summary.tsv")" = "$(wins_mixed "" "" memory "$before")" ]
check "the pages follow: liger..huggingface's and compare/'s changed for a reader who had read them" \
	bash -c "! cmp -s '$work/before.pair.html' '$pair/index.html' && ! cmp -s '$work/before.compare.html' '$mnt/compare/index.html'"
python3 "$pages" "$mnt/compare" >"$work/rw.pages"
check "and show the new summaries, newimpl's pairs among them ($(tail -1 "$work/rw.pages"))" \
	bash -c "grep -q '^compare-pages: OK' '$work/rw.pages' && grep -q 'href=\"newimpl..liger/\"' '$mnt/compare/index.html'"
check "the new implementation's pairs are there, where a lookup had failed" \
	test -f "$mnt/compare/newimpl..liger/nvidia-a100-sxm4-80gb.tsv" -a -d "$mnt/compare/huggingface..newimpl"
check "and listed" grep -qx 'newimpl\.\.liger' <(ls "$mnt/compare")
"$KINDEX" --store "$store" compare newimpl liger --gpu nvidia-a100-sxm4-80gb >"$work/cli.new" 2>&1
check "kindex compare reads the same from the store, while mounted" \
	same_bytes "$work/cli.new" "$mnt/compare/newimpl..liger/nvidia-a100-sxm4-80gb.tsv"
unmount "$mnt" "$daemon" || fail "the writable mount's daemon did not exit 0"
check "the daemons said nothing on stderr" [ ! -s "$work/newest.mnt.err" -a ! -s "$work/history.mnt.err" -a ! -s "$mnt.err" ]
finish
