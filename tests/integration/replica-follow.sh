#!/bin/bash
# SPDX-License-Identifier: MIT
# kindexfs -o follow=DST/current (docs/replicas.md): a read-only mount of a replica that `kindex
# pull` keeps — nothing under DST changes (names, sizes, mtimes, sha256 of every generation's
# files, before and after a full read and after the unmount) —, that switches to each new
# generation: /README names the generation and its lag, and after the switch every file reads as
# `kindex export` of the new generation writes it, though the kernel had cached the old one (no
# stale bytes, sizes or names); a `find` running through the switches sees no error; and a
# generation deleted under the mount keeps serving. Bad options are refused by name.
. "$(dirname "$0")/mount-lib.sh"
. "$(dirname "$0")/inbox-lib.sh"
. "$(dirname "$0")/replica-lib.sh"

command -v rsync >/dev/null || { echo "1..0 # SKIP rsync is missing"; exit 77; }
store=$work/store pub=$work/pub spool=$work/spool dst=$work/dst mnt=$work/mnt
"$KINDEX" -q --store "$store" init >/dev/null || die "kindex init failed"
gen 30 "$work/m1" --seed 1 --big-group 4
gen 10 "$work/m2" --seed 2 --big-group 3
gen 10 "$work/m3" --seed 3 --big-group 3
"$KINDEX" -q --store "$store" ingest "$work/m1" >/dev/null || die "kindex ingest failed"
mkdir -p "$spool"
"$KINDEX" -q --store "$store" watch --publish "$pub" --publish-interval 0.1 "$spool" >/dev/null 2>"$work/writer.err" &
writer=$!
pids+=("$writer")
check "the writer publishes" wait_generation "$pub" 1
deadline=$((SECONDS + 20))
until [ -d "$spool/new" ] || [ $SECONDS -ge $deadline ]; do sleep 0.05; done

# sums DIR: every file under DIR with its size, mtime to the nanosecond and sha256
sums() {
	(cd "$1" && find . -mindepth 1 -printf '%y %s %T@ %p\n' | sort -k4 && find . -type f -print0 | sort -z | xargs -0 sha256sum)
}
# pull: kindex pull, then the sums of the new generation; sets $g
pull() {
	"$KINDEX" -q pull "$pub" "$dst" || die "kindex pull failed"
	g=$(readlink "$dst/current")
	g=${g#gen-}
	sums "$dst/gen-$g" >"$work/sums-$g"
	"$KINDEX" -q --store "$dst/gen-$g" export "$work/export-$g" || die "kindex export of gen-$g failed"
}
# switched N: the mount's README names replica generation N within 20 s
switched() {
	local deadline=$((SECONDS + 20))
	until grep -q "^replica     generation $1 of the writer's" "$mnt/README" 2>/dev/null; do
		[ $SECONDS -lt $deadline ] || { echo "# README: $(grep '^replica' "$mnt/README")"; return 1; }
		sleep 0.05
	done
}
# same_tree N: the mount reads as the export of generation N (README aside: it names the replica)
same_tree() {
	diff -r -x README "$mnt" "$work/export-$1" >"$work/diff" 2>&1 || { head -20 "$work/diff" | sed 's/^/# /'; return 1; }
}
# drop DIR: every manifest of DIR into the spool
drop() {
	local f
	for f in "$1"/*.json; do
		cp "$f" "$spool/tmp/${f##*/}" && mv "$spool/tmp/${f##*/}" "$spool/new/${f##*/}" || return 1
	done
}

pull
g1=$g
ls -A "$dst" >"$work/dst-names"
mount_fg "$dst/current" "$mnt" -o follow
check "README names the replica's generation" switched "$g1"
check "and its lag" grep -q "^lag         [0-9.]* s from its publication to this mount serving it" "$mnt/README"
find "$mnt" -type f -exec cat {} + >/dev/null 2>"$work/cat.err"
check "a full find and cat reads without errors" [ ! -s "$work/cat.err" ]
check "the tree is the export of gen-$g1" same_tree "$g1"
check "reading it changed nothing under gen-$g1" diff -q "$work/sums-$g1" <(sums "$dst/gen-$g1")
check "nor made anything in $dst" diff "$work/dst-names" <(ls -A "$dst")

drop "$work/m2" || die "cannot drop into the spool"
check "the writer publishes the drops" wait_runs "$pub" 40
pull
g2=$g
check "the mount switches to gen-$g2" switched "$g2"
check "after the switch every file reads as the export of gen-$g2 (no stale bytes or sizes)" same_tree "$g2"
check "runs/ lists the new runs" [ "$(ls "$mnt/runs" | wc -l)" = 40 ]

# a find running through a switch
rm -f "$work/stop"
(n=0; while [ ! -e "$work/stop" ]; do find "$mnt" >/dev/null 2>>"$work/find.err"; n=$((n + 1)); done; echo $n >"$work/finds") &
finder=$!
pids+=("$finder")
drop "$work/m3" || die "cannot drop into the spool"
check "the writer publishes the next drops" wait_runs "$pub" 50
pull
g3=$g
check "the mount switches to gen-$g3" switched "$g3"
touch "$work/stop"
wait "$finder"
check "$(cat "$work/finds") finds ran through the switch without an error" [ ! -s "$work/find.err" ]
check "the tree is the export of gen-$g3" same_tree "$g3"

# the generation served, deleted under the mount: its files stay open
rm -rf "$dst/gen-$g3"
find "$mnt" -type f -exec cat {} + >/dev/null 2>"$work/cat.err"
check "a generation deleted under the mount keeps serving" [ ! -s "$work/cat.err" ]
check "the same tree" same_tree "$g3"
unmount "$mnt" "$daemon"
check "the unmount is clean, the daemon's stderr empty" [ ! -s "$mnt.err" ]
for s in "$work"/sums-*; do
	n=${s##*-}
	[ -d "$dst/gen-$n" ] || continue
	check "nothing under gen-$n changed while mounted" diff -q "$s" <(sums "$dst/gen-$n")
done
kill -TERM "$writer" && wait "$writer"

# the -o follow=PATH form, and bad options
"$KINDEX" -q pull "$pub" "$dst" >/dev/null 2>&1
mkdir -p "$mnt"
env --default-signal "$KINDEXFS" "$mnt" -f -o follow="$dst/current" 2>"$mnt.err" &
daemon=$!
pids+=("$daemon")
mounts+=("$mnt")
wait_mounted "$mnt" "$daemon" || die "kindexfs -o follow=PATH did not mount"
check "kindexfs MNT -o follow=DST/current serves the replica" grep -q "^replica     generation $g3" "$mnt/README"
check "/proc/mounts shows DST/current as the source" grep -q "^$dst/current $mnt fuse.kindexfs ro," /proc/mounts
unmount "$mnt" "$daemon"
refused() { # WHAT WORDS COMMAND...
	local what=$1 words=$2
	shift 2
	"$@" >/dev/null 2>"$work/e"
	local rc=$?
	check "$what is refused ($rc: $(head -1 "$work/e"))" bash -c "[ $rc = ${want:-2} ] && grep -q -- \"$words\" '$work/e'"
}
refused "-o follow with -o rw" "serves a replica read-only: it cannot go with -o rw" \
	"$KINDEXFS" "$dst/current" "$mnt" -f -o follow,rw
refused "-o follow= with a STORE too" "give only a MOUNTPOINT with it" \
	"$KINDEXFS" "$store" "$mnt" -f -o follow="$dst/current"
want=3 refused "-o follow of a replica with no current" "cannot follow '$work/nodst/current': No such file or directory (make it with: kindex pull SRC DST)" \
	"$KINDEXFS" "$mnt" -f -o follow="$work/nodst/current"
finish
