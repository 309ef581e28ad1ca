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
}

"$KINDEX" -q --store "$store" ingest "$work/a" >/dev/null || die "kindex ingest of a/ failed"
look 1 "after kindex ingest"

"$KINDEX" -q --store "$store" ingest "$work/b" >/dev/null || die "kindex ingest of b/ failed"
look 2 "after a second kindex ingest into the same gpu directories"
changed=$(join -j 2 -o 1.1,2.1 "$work/sizes.1" "$work/sizes.2" | awk '$1 != $2' | wc -l)
check "the second ingest changed the sizes of files the first had ($changed)" [ "$changed" -gt 0 ]

mount_fg "$store" "$mnt" -o rw
cp "$work"/c/*.json "$mnt/inbox/" || fail "cp into the inbox failed"
deadline=$((SECONDS + 30))
until [ "$(ls "$mnt/inbox/.accepted" 2>/dev/null | grep -c '^c-')" = 20 ] || [ $SECONDS -ge $deadline ]; do
	sleep 0.05
done
check "the inbox accepted the 20 drops" [ "$(ls "$mnt/inbox/.accepted" | grep -c '^c-')" = 20 ]
unmount "$mnt" "$daemon" || fail "the read-write daemon did not exit cleanly"
look 3 "after 20 drops into a read-write mount's inbox"

mkdir -p "$work/spool/new"
cp "$work"/d/*.json "$work/spool/new/"
"$KINDEX" -q --store "$store" watch --once "$work/spool" >/dev/null || die "kindex watch --once failed"
check "kindex watch --once accepted the 10 files" [ "$(ls "$work/spool/accepted" | grep -c '^d-.*\.json$')" = 10 ]
look 4 "after kindex watch --once of a spool"

finish
