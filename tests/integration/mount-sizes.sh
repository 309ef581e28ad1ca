#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Sizes known before anyone asks (docs/store.md, 'Z'; issue "a million runs"): the writer keeps
# the size of every run file and group file it touched, so that a mount that stats every file —
# `ls -lR`, `find -printf %s`, rsync — renders none of them, and every size it hands out is the
# length of the bytes `cat` then reads. Checked after `kindex ingest`, after a second ingest into
# the same gpu directories (whose runs' rank-dependent files all change), after drops into a
# read-write mount's inbox (the daemon's own pass) and after `kindex watch --once` of a spool;
# each time on a fresh read-only mount (-d: it says at exit how many sizes it took from the store
# and how many it rendered).
#
# /index.tsv likewise (docs/store.md, 'L'): the writer keeps every group's rows, so that the mount
# reads the file from them, rendering no group — after each of those writes, and after `kindex
# import liger`, whose workloads bring new columns. What the mount read at the end is what a mount
# of a store made of the same inputs at once reads; and after a commit that keeps nothing there
# (`kindex attest`), what that mount builds from the rows still kept, in its own order, and the
# group it renders.
. "$(dirname "$0")/mount-lib.sh"
. "$(dirname "$0")/inbox-lib.sh"

store="$work/store"
mnt="$work/mnt"
"$KINDEX" -q --store "$store" init >/dev/null || die "kindex init failed"
gen 120 "$work/a"
gen 60 "$work/b" --seed 7 --prefix b
gen 20 "$work/c" --seed 11 --prefix c
gen 10 "$work/d" --seed 13 --prefix d

# sizes_of MOUNTPOINT: "size path" of every file below benchmarks/ and runs/, as stat sees them
sizes_of() {
	(cd "$1" && find benchmarks runs -type f -printf '%s %p\n' | sort -k2)
}

# lengths_of MOUNTPOINT: "length path" of the same files, from their bytes
lengths_of() {
	(cd "$1" && find benchmarks runs -type f -print0 | sort -z | xargs -0 wc -c | grep -v ' total$' |
		awk '{ print $1, $2 }' | sort -k2)
}

# look N LABEL: a fresh read-only mount stats every file, then reads every one
look() {
	local n=$1
	shift
	mount_fg "$store" "$mnt" -o ro -d
	sizes_of "$mnt" >"$work/sizes.$n"
	lengths_of "$mnt" >"$work/lengths.$n"
	cat "$mnt/index.tsv" >"$work/index.$n" || fail "$1: cat index.tsv failed"
	index_size=$(stat -c %s "$mnt/index.tsv")
	index_ranges "$mnt/index.tsv" >"$work/ranges.$n"
	unmount "$mnt" "$daemon" || fail "$1: the read-only daemon did not exit cleanly"
	local line
	line=$(grep -a 'sizes of run and group files:' "$mnt.err" | tail -1)
	stored=$(sed -n 's/.*: \([0-9]*\) from the store.*/\1/p' <<<"$line")
	rendered=$(sed -n 's/.* \([0-9]*\) rendered$/\1/p' <<<"$line")
	files=$(wc -l <"$work/sizes.$n")
	check "$1: the mount said where its sizes came from ($line)" [ -n "$stored" ] && [ -n "$rendered" ]
	check "$1: stat of $files files rendered no run or group file ($rendered rendered)" [ "${rendered:-1}" = 0 ]
	check "$1: and took sizes from the store ($stored)" [ "${stored:-0}" -gt 100 ]
	check "$1: every size is the length of what cat reads" diff "$work/sizes.$n" "$work/lengths.$n"
	index_from "$1" kept
	check "$1: index.tsv's size is the length of what cat reads ($index_size)" \
		[ "$index_size" = "$(wc -c <"$work/index.$n")" ]
	check "$1: index.tsv read from the middle, a range at a time, is the file's bytes there" \
		cmp "$work/ranges.$n" <(index_ranges "$work/index.$n")
	local rows runs
	rows=$(($(wc -l <"$work/index.$n") - 1))
	runs=$(grep -c ' benchmarks/.*/manifest\.json$' "$work/sizes.$n")
	check "$1: index.tsv has a row for each of the $runs run directories ($rows)" [ "$rows" = "$runs" ]
}

# index_ranges FILE: 4,000 bytes from each of a few offsets of FILE, read from there (tail -c +N
# seeks), and what lies past its end
index_ranges() {
	local size o
	size=$(stat -c %s "$1")
	for o in 0 1 100 $((size / 3)) $((size / 2 + 7)) $((size - 10)) $((size + 5)); do
		[ "$o" -ge 0 ] && tail -c +$((o + 1)) "$1" | head -c 4000
		echo " <- $o"
	done
}

# index_from LABEL kept|rendered: the last mount's log says how it read index.tsv: a range at a
# time from the rows the writer kept, or rendered
index_from() {
	local line ranged whole rendered
	line=$(grep -a 'index.tsv: ' "$mnt.err" | tail -1)
	ranged=$(sed -n 's/.*index.tsv: \([0-9]*\) read a range at a time.*/\1/p' <<<"$line")
	whole=$(sed -n 's/.*, \([0-9]*\) built from them.*/\1/p' <<<"$line")
	rendered=$(sed -n 's/.*, \([0-9]*\) rendered$/\1/p' <<<"$line")
	if [ "$2" = kept ]; then
		check "$1: index.tsv was read from the rows the writer kept, never whole ($line)" \
			[ "${ranged:-0}" -ge 1 ] && [ "$whole" = 0 ] && [ "$rendered" = 0 ]
	else
		check "$1: index.tsv was rendered ($line)" [ "${ranged:-1}" = 0 ] && [ "${rendered:-0}" -ge 1 ]
	fi
}

"$KINDEX" -q --store "$store" ingest "$work/a" >/dev/null || die "kindex ingest of a/ failed"
look 1 "after kindex ingest"

"$KINDEX" -q --store "$store" ingest "$work/b" >/dev/null || die "kindex ingest of b/ failed"
look 2 "after a second kindex ingest into the same gpu directories"
changed=$(join -j 2 -o 1.1,2.1 "$work/sizes.1" "$work/sizes.2" | awk '$1 != $2' | wc -l)
check "the second ingest changed the sizes of files the first had ($changed)" [ "$changed" -gt 0 ]

mount_fg "$store" "$mnt" -o rw -d
cp "$work"/c/*.json "$mnt/inbox/" || fail "cp into the inbox failed"
deadline=$((SECONDS + 30))
until [ "$(ls "$mnt/inbox/.accepted" 2>/dev/null | grep -c '^c-')" = 20 ] || [ $SECONDS -ge $deadline ]; do
	sleep 0.05
done
check "the inbox accepted the 20 drops" [ "$(ls "$mnt/inbox/.accepted" | grep -c '^c-')" = 20 ]
# cp's close of each file returned once its commit was told (the notifier's round, in the log):
# the last round's generation is the store's, and the mount's own writer (the sizer) passes to it
gen=$(sed -n 's/.*generation [0-9]* -> \([0-9]*\):.*/\1/p' "$mnt.err" | tail -1)
until grep -aq "sizes kept from generation [0-9]* to $gen:" "$mnt.err" || [ $SECONDS -ge $deadline ]; do
	sleep 0.05
done
check "the mount's own pass kept the rows of generation $gen" \
	grep -aq "sizes kept from generation [0-9]* to $gen:" "$mnt.err"
# its view predates that pass; the rows it kept are of the same generation, so the same tree
cat "$mnt/index.tsv" >"$work/index.rw" || fail "cat index.tsv of the read-write mount failed"
unmount "$mnt" "$daemon" || fail "the read-write daemon did not exit cleanly"
index_from "a read-write mount after its own pass" kept
look 3 "after 20 drops into a read-write mount's inbox"
check "what it read is what a fresh mount reads" cmp "$work/index.rw" "$work/index.3"

mkdir -p "$work/spool/new"
cp "$work"/d/*.json "$work/spool/new/"
"$KINDEX" -q --store "$store" watch --once "$work/spool" >/dev/null || die "kindex watch --once failed"
check "kindex watch --once accepted the 10 files" [ "$(ls "$work/spool/accepted" | grep -c '^d-.*\.json$')" = 10 ]
look 4 "after kindex watch --once of a spool"
cols=$(head -1 "$work/index.4" | tr '\t' '\n' | wc -l)

"$KINDEX" -q --store "$store" import liger "$LIGER_CSV" >/dev/null || die "kindex import liger failed"
look 5 "after kindex import liger"
check "liger's workloads brought new columns to index.tsv ($cols before)" \
	[ "$(head -1 "$work/index.5" | tr '\t' '\n' | wc -l)" -gt "$cols" ]

# the same inputs into one store at once
ref="$work/ref"
"$KINDEX" -q --store "$ref" init >/dev/null || die "kindex init of the reference failed"
"$KINDEX" -q --store "$ref" ingest "$work/a" "$work/b" "$work/c" "$work/d" >/dev/null ||
	die "kindex ingest of the reference failed"
"$KINDEX" -q --store "$ref" import liger "$LIGER_CSV" >/dev/null || die "kindex import liger failed"
mount_fg "$ref" "$mnt" -o ro -d
cat "$mnt/index.tsv" >"$work/index.ref" || fail "cat index.tsv of the reference failed"
unmount "$mnt" "$daemon" || fail "the reference's daemon did not exit cleanly"
index_from "the reference" kept
check "index.tsv kept through five writes is the one kept by one" cmp "$work/index.5" "$work/index.ref"

# then a commit that keeps no rows
run=$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "shortid") c = i } NR == 2 { print $c }' \
	"$work/index.5")
"$KINDEX" -q --store "$ref" attest "$run" --note "no change to its rows" --author test >/dev/null ||
	die "kindex attest $run failed"
mount_fg "$ref" "$mnt" -o ro -d
cat "$mnt/index.tsv" >"$work/index.attest" || fail "cat index.tsv of the reference failed"
unmount "$mnt" "$daemon" || fail "the reference's daemon did not exit cleanly"
index_from "the reference, after kindex attest" rendered
check "index.tsv built from the rows kept and one group rendered is the same file" \
	cmp "$work/index.ref" "$work/index.attest"

finish
