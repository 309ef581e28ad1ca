#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# What a failing disk does to what the inbox acknowledged (docs/inbox.md, "Durability"):
#
#   - a full disk (a small tmpfs, as root): drops fail with "No space left on device", not EIO,
#     the daemon does not abort, and once there is room again drops are accepted without a
#     remount; the unmount is clean (exit 0, no lock left); `kindex ingest` into the full store
#     fails with the same words and exit 4, not an abort (134), and leaves a store that verifies.
. "$(dirname "$0")/mount-lib.sh"
. "$(dirname "$0")/inbox-lib.sh"

m="$work/m"
gen 241 "$m"

# flip FILE OFFSET: 16 bytes inverted
flip() {
	python3 - "$1" "$2" <<'PY'
import sys
p, o = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read())
for i in range(16):
    b[o + i] ^= 0xFF
open(p, "wb").write(b)
PY
}

# newest_log STORE: the write-ahead log RocksDB writes now
newest_log() {
	ls "$1"/[0-9]*.log | sort | tail -n 1
}

mnt="$work/mnt"

# ---- a full disk --------------------------------------------------------------------------------

# The store on a small tmpfs, and its inbox on a tmpfs of its own: the store's disk fills while
# the files written into the inbox still fit, so what meets the full disk is the store's own
# writes — the commit of each decision —, as it would on a disk where the manifests are small
# against what is already stored.
disk="$work/disk"
mkdir -p "$disk"
if ! mount -t tmpfs -o size=96m kindex-test "$disk" 2>/dev/null; then
	echo "# cannot mount a tmpfs (not root?): the full-disk checks are skipped"
	finish
fi
store="$disk/store"
"$KINDEX" -q --store "$store" init || die "kindex init on the tmpfs failed"
mkdir -p "$store/inbox"
mount -t tmpfs -o size=16m kindex-test-inbox "$store/inbox" || die "cannot mount a tmpfs on the inbox"
for i in $(seq -f %07g 200 204); do
	"$KINDEX" -q --store "$store" ingest "$m/m-$i.json" || die "kindex ingest m-$i.json failed"
done
# the disk fills before the mount's first commit: RocksDB reserves room for its log (fallocate)
# when it first appends to it, and past a full disk each append must find its pages as it goes
mount_fg "$store" "$mnt" -o rw
mounts+=("$store/inbox" "$disk") # unmounted after the FUSE mount, by the trap
avail=$(df -k --output=avail "$disk" | tail -n 1)
head -c $(((avail - 16) * 1024)) /dev/zero >"$disk/filler" 2>/dev/null
failed=() enospc=0 eio=0
for i in $(seq -f %07g 205 239); do
	if ! cp "$m/m-$i.json" "$mnt/inbox/" 2>"$work/cp.err"; then
		failed+=("m-$i.json")
		grep -q "No space left on device" "$work/cp.err" && enospc=$((enospc + 1))
		grep -q "Input/output error" "$work/cp.err" && eio=$((eio + 1))
		[ ${#failed[@]} -ge 3 ] && break
	fi
done
check "on the full disk drops fail (${#failed[@]})" test ${#failed[@]} = 3
check "... each close() with 'No space left on device' ($enospc of 3), never EIO ($eio)" \
	test "$enospc" = 3 -a "$eio" = 0
check "... because the store could not commit them" grep -q "cannot ingest inbox/${failed[0]}: No space left on device" "$mnt.err"
check "... and the daemon is alive" kill -0 "$daemon"
check "... and the files whose close failed are still in the inbox, whole" \
	cmp -s "$mnt/inbox/${failed[0]}" "$m/${failed[0]}"
rm -f "$disk/filler"
ok=false deadline=$((SECONDS + 60))
while [ $SECONDS -lt $deadline ]; do
	if cp "$m/${failed[0]}" "$mnt/inbox/" 2>/dev/null; then
		ok=true
		break
	fi
	sleep 1
done
check "with room again, the file dropped again is accepted, without a remount" $ok
check "... and is in the tree" accepted "$mnt" "${failed[0]}" 1
check "... and so is a new one" cp "$m/m-0000240.json" "$mnt/inbox/"
unmount "$mnt" "$daemon"
check "the unmount after the full disk is clean (exit 0)" test $? = 0
check "... and leaves no lock" test ! -e "$store/kindexfs.lock"
"$KINDEX" --store "$store" verify >"$work/out" 2>"$work/err"
check "the store verifies clean" grep -q "no problems" "$work/out"

avail=$(df -k --output=avail "$disk" | tail -n 1)
head -c $(((avail - 16) * 1024)) /dev/zero >"$disk/filler" 2>/dev/null
"$KINDEX" --store "$store" ingest "$m" >"$work/out" 2>"$work/err"
status=$?
check "kindex ingest into the full disk exits 4 (not an abort: $status)" test "$status" = 4
check "... saying 'No space left on device'" grep -q "No space left on device" "$work/err"
check "... and no assertion" bash -c "! grep -q Assertion '$work/err'"
rm -f "$disk/filler"
"$KINDEX" --store "$store" verify >"$work/out" 2>"$work/err"
check "with room again the store verifies clean" grep -q "no problems" "$work/out"
finish
