#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Numbers a user gives are read strictly, by one parser (kx_parse_uint, kx_parse_decimal,
# kx_parse_size): no blank, sign, base prefix, exponent or trailing text, no wrap past 2^64, and
# within the option's range; a refusal is exit 2 naming the option, the value and the rule.
# And a file of the tree followed by '/' is not a directory: ENOTDIR, exit 1, not the file.
source "$(dirname "$0")/cli-lib.sh"
cd "$tmp"
export KINDEX_STORE=$tmp/store
expect 0 "$KINDEX" init
expect 0 "$KINDEX" -q import liger "$csv"
gen=$("$KINDEX" cat README | awk '$1 == "generation" { print $2 }')
[[ $gen =~ ^[0-9]+$ ]] || die "README gives no generation"

# kindex verify --since GEN: a store generation
for v in " -5" "-5" "+5" "5 " "0x10" "1e3" "5.0" ""; do
	expect 2 "$KINDEX" verify --since "$v"
	check "verify --since '$v': exit 2, not a store generation" \
		contains err "kindex: verify: --since '$v': not a store generation, a whole number (0 to 18446744073709551615)"
	check "verify --since '$v': nothing verified" not_contains out "no problems"
done
expect 2 "$KINDEX" verify --since 18446744073709551616
check "verify --since 2^64: out of range, not wrapped" \
	contains err "kindex: verify: --since '18446744073709551616': not a store generation, a whole number (0 to 18446744073709551615)"
for v in 99999999999999 $((gen + 1)); do
	expect 2 "$KINDEX" verify --since "$v"
	check "verify --since $v, past the store's generation $gen: exit 2, said so" \
		contains err "kindex: verify: --since $v: the store is at generation $gen (README's 'generation' line): give 0 to $gen"
	check "verify --since $v: no 'no problems'" not_contains out "no problems"
done
expect 0 "$KINDEX" verify --since "$gen"
check "verify --since the store's own generation: verified" contains out "no problems"
expect 0 "$KINDEX" verify --since 0
check "verify --since 0: the whole store" contains out "no problems"

# kindex watch --publish-interval SECONDS, --publish-keep K
for v in " 2" "2 " "-1" "1e-1" "inf" "0" "86401" "0.0001"; do
	expect 2 "$KINDEX" watch --publish "$tmp/pub" --publish-interval "$v" "$tmp/spool"
	check "watch --publish-interval '$v': exit 2, the rule" \
		contains err "kindex: watch: invalid --publish-interval '$v': give seconds from 0.001 to 86400"
done
for v in " 3" "+3" "3k" "1000001" "0"; do
	expect 2 "$KINDEX" watch --publish "$tmp/pub" --publish-keep "$v" "$tmp/spool"
	check "watch --publish-keep '$v': exit 2, the rule" \
		contains err "kindex: watch: invalid --publish-keep '$v': give a number of generations, 1 to 1000000"
done
check "no spool or publish directory was made by a refused watch" test ! -e "$tmp/spool" -a ! -e "$tmp/pub"

# kindex ingest --max-bytes SIZE
for v in " 4M" "-1" "4T" "0x100"; do
	expect 2 "$KINDEX" ingest --max-bytes "$v" "$data"
	check "ingest --max-bytes '$v': exit 2, named" contains err "kindex: ingest: invalid --max-bytes '$v'"
done

# kindexfs -o NUMBER options: refused before the store is opened or anything mounted
kindexfs=$KX_BUILD_ROOT/src/fs/kindexfs
if [[ -x $kindexfs ]]; then
	mkdir "$tmp/mnt"
	for o in "max_threads=-1:a number of threads, 1 to 10000" "max_threads=5x:a number of threads, 1 to 10000" \
		"max_threads=0:a number of threads, 1 to 10000" "timeout=4294967295.5:give seconds, 0 to 4294967295" \
		"timeout= 5:give seconds" "spin=+5:give microseconds from 0 to 1000000" \
		"cache=-1M:give a size of at least 1M" "max_manifest=2G:give a size from 1 byte to 1G"; do
		opt=${o%%:*} rule=${o#*:}
		expect 2 "$kindexfs" "$tmp/no-store" "$tmp/mnt" -f -o "$opt"
		check "kindexfs -o '$opt': exit 2, the option and its rule" contains err "kindexfs: invalid -o $opt: "
		check "kindexfs -o '$opt': the range" contains err "$rule"
	done
	for o in "publish_interval=-1" "publish_interval=1e-3" "publish_keep=0x3"; do
		expect 2 "$kindexfs" "$tmp/no-store" "$tmp/mnt" -f -o "rw,publish=$tmp/pub,$o"
		check "kindexfs -o '$o': exit 2, named" contains err "kindexfs: invalid -o $o: "
	done
	check "nothing mounted or made by a refused kindexfs" test ! -e "$tmp/no-store" -a ! -e "$tmp/pub"
else
	echo "# kindexfs not built: its options not checked"
fi

# kindex-bench: every number option (checked before anything is run; --list does nothing else)
bench=$KX_BUILD_ROOT/src/bench/kindex-bench
if [[ -x $bench ]]; then
	for o in "--seed: -5" "--seed:0x10" "--seed:18446744073709551616" "--device: 1" "--device:1025" \
		"--device:1e2" "--min-samples:1e3" "--min-samples:0" "--max-samples:10.0" "--memory:-1" \
		"--memory:4K" "--warmup:-0.1" "--warmup:1e-3" "--min-time:inf" "--timeout:nan" \
		"--timeout:86401" "--noise:2" "--noise:.5x"; do
		opt=${o%%:*} v=${o#*:}
		expect 2 "$bench" --list "$opt" "$v"
		check "kindex-bench $opt '$v': exit 2, the option, the value and the range" \
			grep -qE "^kindex-bench: invalid $opt '$v': expected .*, a (whole number|decimal) from [0-9]+ to [0-9]+" err
	done
	expect 0 "$bench" --list --seed 18446744073709551615 --device 0 --min-samples 10 --max-samples 100000 \
		--warmup .1 --min-time 0.5 --noise 0.005 --timeout 15
	check "kindex-bench: valid numbers, each at its form, accepted" contains out "cross_entropy"
	printf '100\n 200 \n+300\n' >samples
	expect 2 "$bench" --record cross_entropy --impl x --samples samples --environment cpu
	check "kindex-bench --samples: '+300' is no latency" contains err "line 3: expected a latency in ns"
else
	echo "# kindex-bench not built: its options not checked"
fi

# a file of the tree followed by '/': not a directory (ENOTDIR), exit 1, never the file's bytes
run=$("$KINDEX" ls runs | head -n 1)
run=${run%/}
for p in README/ README/x README/. /README// index.tsv/ "runs/$run/manifest.json/" "runs/$run/manifest.json/x"; do
	expect 1 "$KINDEX" cat "$p"
	check "cat '$p': exit 1, not a directory" \
		contains err "kindex: cat: '$p': not a directory (a file of the tree is followed by '/')"
	check "cat '$p': prints nothing" test ! -s out
done
expect 1 "$KINDEX" ls README/
check "ls README/: exit 1, not a directory" \
	contains err "kindex: ls: 'README/': not a directory (a file of the tree is followed by '/')"
expect 1 "$KINDEX" cat README/ index.tsv
check "cat README/ index.tsv: the other operand still printed" contains out "benchmark"
expect 0 "$KINDEX" cat "runs/$run/manifest.json" "/README" "runs/$run/"manifest.json
check "cat of the same files without the '/' prints them" contains out "generation"
expect 1 "$KINDEX" show "runs/$run/manifest.json/"
check "show of a file followed by '/': not a run directory" contains err "not a run directory"
# show of a group directory, or of one of its files, says where its runs are and how to read them
group=benchmarks
for _ in 1 2 3 4; do group=$group/$("$KINDEX" ls "$group" | head -n 1); group=${group%/}; done
for p in "$group" "$group/" "$group/ranking.tsv"; do
	expect 1 "$KINDEX" show "$p"
	check "show '$p': a group directory, not a run" contains err "a group directory, not a run"
	check "... its ranking.tsv named, with the command that prints it" \
		contains err "'kindex cat $group/ranking.tsv'"
	check "... and what show takes" contains err "'kindex ls $group' lists them"
done
expect 0 "$KINDEX" cat "$group/ranking.tsv"
check "the command it names prints the group's ranking" contains out "vs_best"

finish
