#!/bin/bash
# SPDX-License-Identifier: MIT
# kindexfs -o ro opens the store truly read-only (SPEC §7, docs/replicas.md): every file under the
# store — names, sizes, mtimes, bytes — is the same before the mount, after a full find and cat of
# it, and after the unmount; no claim is written; two -o ro mounts of one store run side by side;
# the tree is the one `kindex export` writes. A mount without -o ro still claims the store.
. "$(dirname "$0")/mount-lib.sh"

store=$work/store
make_liger_store "$store"
"$KINDEX" -q --store "$store" export "$work/export" || die "kindex export failed"

# sums DIR: every entry under DIR with its type, size, mtime to the nanosecond, and its bytes' digest
sums() {
	(cd "$1" && find . -mindepth 1 -printf '%y %s %T@ %p\n' | sort -k4 &&
		find . -type f -print0 | sort -z | xargs -0 sha256sum)
}
sums "$store" >"$work/before"
check "the store has a write-ahead log with writes in it (what a read-write open would replay)" \
	bash -c "find '$store' -name '*.log' -size +0 | grep -q ."

mnt=$work/mnt
mount_fg "$store" "$mnt" -o ro
check "no claim is written" [ ! -e "$store/kindexfs.lock" ]
first=$daemon
mount_fg "$store" "$work/mnt2" -o ro
second=$daemon
check "a second -o ro mount of the store runs beside the first" test -s "$work/mnt2/README"
unmount "$work/mnt2" "$second"
sums "$store" >"$work/mounted"
check "mounting changed nothing under the store" diff -q "$work/before" "$work/mounted"
find "$mnt" -type f -exec cat {} + >/dev/null 2>"$work/cat.err"
check "a full find and cat of the mount reads without errors" [ ! -s "$work/cat.err" ]
check "the -o ro tree is the export's" diff -r -q "$mnt" "$work/export"
sums "$store" >"$work/read"
check "reading all of it changed nothing under the store" diff -q "$work/before" "$work/read"
unmount "$mnt" "$first"
sums "$store" >"$work/after"
check "after the unmount nothing under the store has changed" diff "$work/before" "$work/after"

mount_fg "$store" "$mnt"
check "without -o ro the mount still claims the store" grep -q "$mnt" "$store/kindexfs.lock"
unmount "$mnt" "$daemon"

mkdir -p "$work/spool"
"$KINDEXFS" "$store" "$mnt" -f -o ro,spool="$work/spool" 2>"$work/e"
rc=$?
check "-o ro with a spool (which writes the store) is refused, exit 2 ($rc: $(head -1 "$work/e"))" \
	bash -c "[ $rc = 2 ] && grep -q 'cannot go with -o ro' '$work/e'"
finish
