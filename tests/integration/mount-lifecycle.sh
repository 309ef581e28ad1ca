#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The daemon's life: usage errors, a store that is missing or busy, stat stable across a remount,
# EROFS for every kind of write (on the default read-only mount and on -o rw), `kindex` naming
# the mount when it cannot write the store, and every way to stop — fusermount3 -u, SIGTERM,
# SIGINT, a detached start and the mount(8) / fstab path through mount.fuse3 — ending with the
# mount gone, the daemon gone with status 0, the store's claim removed and nothing on stderr —
# and no empty write-ahead log left behind by any of them in the store.
. "$(dirname "$0")/mount-lib.sh"

store="$work/store"
mnt="$work/mnt"
make_liger_store "$store"

# ---- usage ------------------------------------------------------------------------------------
"$KINDEXFS" --help >"$work/help" 2>&1
check "kindexfs --help exits 0 and documents -o cache" grep -q "cache=SIZE" "$work/help"
check "kindexfs --version names the version" bash -c "'$KINDEXFS' --version | grep -q '^kindexfs '"
"$KINDEXFS" >/dev/null 2>"$work/e"
rc=$?
check "no operands: exit 2 with a message ($(tail -1 "$work/e"))" [ $rc = 2 ]
mkdir -p "$mnt"
# refuse ARGS…: kindexfs in the foreground, expected to refuse; its status in rc, its stderr in e
refuse() { "$KINDEXFS" "$@" -f 2>"$work/e"; rc=$?; }
# refused STATUS PATTERN…: it exited STATUS, and its stderr matches every PATTERN
refused() {
	[ "$rc" = "$1" ] || return 1
	shift
	local p
	for p; do grep -q -- "$p" "$work/e" || return 1; done
}
refuse "$work/nowhere" "$mnt"
check "a missing store: exit 3, the error names it ($(head -1 "$work/e"))" refused 3 nowhere
refuse "$store" "$mnt" -o allow_other
check "allow_other without default_permissions is refused (exit $rc)" refused 2 default_permissions
refuse "$store" "$mnt" -o cache=lots
check "a bad cache size is refused (exit $rc)" refused 2 'cache=lots'
refuse "$store" "$work/no-such-dir"
check "a missing mount point: exit 2, the error names it ($(tail -1 "$work/e"))" \
	refused 2 "^kindexfs: cannot mount at '$work/no-such-dir': No such file"
refuse "$store" "$mnt" -o no_such_option
check "an unknown option: exit 2, the option and the mount point named ($(tail -1 "$work/e"))" \
	refused 2 no_such_option "^kindexfs: cannot mount at '$(realpath "$mnt")'"
check "a refused mount leaves the store unclaimed" [ ! -e "$store/kindexfs.lock" ]
check "none of these left a mount" bash -c "! mountpoint -q '$mnt'"

# ---- stat across a remount --------------------------------------------------------------------
mount_fg "$store" "$mnt"
(cd "$mnt" && find . -printf '%i %s %T@ %y %p\n' | sort -k5) >"$work/stat.1"
check "the store is claimed for the mount" grep -q "$mnt" "$store/kindexfs.lock"
"$KINDEX" --store "$store" ingest "$KX_SOURCE_ROOT/examples/liger/all_benchmark_data.csv" >/dev/null 2>"$work/e"
check "kindex ingest on the mounted store names the mount ($(head -1 "$work/e"))" grep -q "mounted at $mnt" "$work/e"
"$KINDEX" -q --store "$store" export "$work/export" 2>"$work/e"
check "kindex export works while mounted" [ -f "$work/export/README" ]
unmount "$mnt" "$daemon"
rc=$?
check "fusermount3 -u: the daemon exits 0" [ $rc = 0 ]
check "the mount is gone" bash -c "! mountpoint -q '$mnt'"
check "the claim is removed" [ ! -e "$store/kindexfs.lock" ]
check "no error on stderr" [ ! -s "$mnt.err" ]
mount_fg "$store" "$mnt"
(cd "$mnt" && find . -printf '%i %s %T@ %y %p\n' | sort -k5) >"$work/stat.2"
check "inode, size and mtime of all $(wc -l <"$work/stat.1") entries are the same after a remount" \
	cmp -s "$work/stat.1" "$work/stat.2"
cat "$mnt/README" >/dev/null
(cd "$mnt" && find . -maxdepth 2 -printf '%T@ %p\n' | sort) >"$work/mtimes.1"
find "$mnt" -type f -name summary.txt -exec cat {} + >/dev/null
(cd "$mnt" && find . -maxdepth 2 -printf '%T@ %p\n' | sort) >"$work/mtimes.2"
check "reads change no mtime" cmp -s "$work/mtimes.1" "$work/mtimes.2"

# ---- writes -----------------------------------------------------------------------------------
erofs() { # erofs DESCRIPTION COMMAND...: the command fails with "Read-only file system"
	local what=$1
	shift
	if "$@" 2>"$work/w"; then
		fail "$what succeeded"
	elif grep -q "Read-only file system" "$work/w"; then
		pass "$what: EROFS"
	else
		fail "$what: $(head -1 "$work/w")"
	fi
}
writes() {
	local m=$1 run
	run=$(ls "$m/runs" | head -1)
	erofs "[$2] echo > README" bash -c "echo x > '$m/README'"
	erofs "[$2] touch a new file" touch "$m/new"
	erofs "[$2] touch an existing one" touch "$m/README"
	erofs "[$2] truncate" truncate -s 0 "$m/runs/$run/manifest.json"
	erofs "[$2] chmod" chmod 644 "$m/README"
	erofs "[$2] mkdir" mkdir "$m/benchmarks/x"
	erofs "[$2] rm" rm -f "$m/runs/$run/summary.txt"
	erofs "[$2] rmdir" rmdir "$m/runs/$run"
	erofs "[$2] mv" mv "$m/runs/$run" "$m/runs/x"
	erofs "[$2] ln" ln "$m/README" "$m/README2"
	erofs "[$2] ln -s" ln -s README "$m/link"
	erofs "[$2] setfattr" setfattr -n user.x -v 1 "$m/README"
	erofs "[$2] cp into the tree" cp "$LIGER_CSV" "$m/benchmarks/"
}
writes "$mnt" ro
unmount "$mnt" "$daemon"
mount_fg "$store" "$mnt" -o rw
check "-o rw mounts read-write" bash -c "grep ' $mnt ' /proc/mounts | grep -q ' rw,'"
writes "$mnt" rw
erofs "[rw] write(2) on a file opened O_WRONLY" bash -c "exec 3<>'$mnt/README'; echo x >&3"
check "after all that the tree still equals the export (and /inbox is all that -o rw adds)" diff -r -q -x inbox "$mnt" "$work/export"
check "-o rw lists inbox/ in the root" test -d "$mnt/inbox/.accepted"

# ---- two mounts of one store ------------------------------------------------------------------
mkdir -p "$work/mnt2"
"$KINDEXFS" "$store" "$work/mnt2" -f 2>"$work/e"
check "a second mount of the store is refused, naming the first ($(head -1 "$work/e"))" \
	grep -q "mounted at $mnt" "$work/e"

# ---- stopping ---------------------------------------------------------------------------------
for sig in TERM INT; do
	kill -$sig "$daemon"
	stopped "$daemon"
	rc=$?
	check "SIG$sig: the daemon exits 0 (got $rc)" [ $rc = 0 ]
	check "SIG$sig: the mount is gone" bash -c "! mountpoint -q '$mnt'"
	check "SIG$sig: the claim is removed" [ ! -e "$store/kindexfs.lock" ]
	check "SIG$sig: nothing on stderr" [ ! -s "$mnt.err" ]
	mount_fg "$store" "$mnt"
done
unmount "$mnt" "$daemon"

# detached (no -f): returns once mounted; the claim names the daemon
"$KINDEXFS" "$store" "$mnt" 2>"$work/e"
rc=$?
mounts+=("$mnt")
check "a detached start returns 0 once mounted ($rc)" bash -c "[ $rc = 0 ] && mountpoint -q '$mnt'"
bgpid=$(awk '{print $1}' "$store/kindexfs.lock" 2>/dev/null)
check "the lock file names the daemon ($bgpid)" kill -0 "${bgpid:-0}"
check "it serves the tree" test -s "$mnt/README"
fusermount3 -u "$mnt"
deadline=$((SECONDS + 20))
while [ -n "$bgpid" ] && kill -0 "$bgpid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
check "fusermount3 -u stops the detached daemon" bash -c "! kill -0 ${bgpid:-0} 2>/dev/null"
check "and removes the claim" [ ! -e "$store/kindexfs.lock" ]

# mount(8), as /etc/fstab and systemd mount units do (root only). mount(8) runs mount.fuse3 with a
# standard PATH, where an installed kindexfs is found for type fuse.kindexfs; a build tree's is
# named in the source instead (type fuse, PROGRAM#STORE), which is the same helper path.
if [ "$(id -u)" = 0 ] && command -v mount.fuse3 >/dev/null; then
	mount -t fuse -o ro,cache=8M,noatime "$KINDEXFS#$store" "$mnt" 2>"$work/e"
	rc=$?
	mounts+=("$mnt")
	check "mount -t fuse PROGRAM#STORE MNT works ($rc $(head -1 "$work/e"))" bash -c "[ $rc = 0 ] && mountpoint -q '$mnt'"
	check "/proc/mounts shows the store as the source, type fuse.kindexfs" \
		bash -c "grep -q '^$store $mnt fuse.kindexfs ro,' /proc/mounts"
	# -o ro opens the store read-only and claims nothing (replica-ro.sh): the daemon is found by
	# its command line
	mpid=$(pgrep -n -f -- "$store $mnt" 2>/dev/null)
	check "it serves the tree" diff -q "$mnt/README" "$work/export/README"
	umount "$mnt"
	deadline=$((SECONDS + 20))
	while [ -n "$mpid" ] && kill -0 "$mpid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
	check "umount stops it" bash -c "! kill -0 ${mpid:-0} 2>/dev/null && ! mountpoint -q '$mnt'"
	check "and leaves no claim" [ ! -e "$store/kindexfs.lock" ]
else
	echo "# not root or no mount.fuse3: the mount(8) path is not tested here"
fi
left=$(pgrep -f "kindexfs $store " | wc -l)
check "no kindexfs of this test is left running ($left)" [ "$left" = 0 ]
# every mount above opened the store read-write and wrote nothing: RocksDB before 8.3 would keep
# an empty write-ahead log from each
logs=$(find "$store" -maxdepth 1 -name '*.log' | wc -l)
check "after all these mounts the store holds one write-ahead log ($logs)" [ "$logs" = 1 ]
finish
