#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# What a failing disk does to what the inbox acknowledged (docs/inbox.md, "Durability"):
#
#   - a damaged write-ahead log: 200 files dropped with cp, the daemon killed with SIGKILL (so the
#     runs are in the log only), 16 bytes flipped at 10 % of the newest log. The store must not
#     open as if nothing happened: the mount and `kindex verify` refuse it, naming the damaged log
#     and `kindex recover`; recover keeps the log byte for byte in lost+found/, opens the store
#     without what followed the damage, and verify then names every run a receipt promised that
#     the store lacks — exactly the runs missing — and the mount's README says writes were lost;
#   - a log torn at its end (a crash mid-append, inside the last drop's commit) opens, and verify
#     names the run it lost;
#   - damaged records (cli-corrupt): each damaged run answers EIO, nothing else is hidden;
#   - a disk whose syncs of the log fail (LD_PRELOAD, tests/integration/log-sync.c): a drop's
#     close() fails with EIO and the file stays, with no receipt; dropped again on a sound disk,
#     it is accepted;
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

# sane WHAT: the last daemon's stderr has no sanitizer report (the daemon suite runs this against
# an AddressSanitizer + UBSan build); what it says of the disk is expected
sane() {
	check "$1: no sanitizer report on the daemon's stderr" \
		bash -c "! grep -qE 'Sanitizer|runtime error' '$mnt.err'"
}

# newest_log STORE: the write-ahead log RocksDB writes now
newest_log() {
	ls "$1"/[0-9]*.log | sort | tail -n 1
}

# ---- a damaged log ---------------------------------------------------------------------------

store="$work/store"
mnt="$work/mnt"
"$KINDEX" -q --store "$store" init || die "kindex init failed"
mount_fg "$store" "$mnt" -o rw
for i in $(seq -f %07g 0 199); do
	cp "$m/m-$i.json" "$mnt/inbox/" || die "cp m-$i.json into the inbox failed"
done
check "200 drops accepted" test "$(ls "$mnt/inbox/.accepted" | wc -l)" = 200
kill -KILL "$daemon"
wait "$daemon" 2>/dev/null
fusermount3 -uz "$mnt" 2>/dev/null
cp -a "$store" "$work/store.undamaged"
log=$(newest_log "$store")
flip "$log" $(($(stat -c %s "$log") / 10))
cp "$log" "$work/damaged.log"

"$KINDEX" --store "$store" verify >"$work/out" 2>"$work/err"
check "verify of the damaged store exits 3 (the store cannot be opened)" test $? = 3
check "... naming the damaged log and the way out" \
	grep -q "its write-ahead log is damaged (Corruption: .*'kindex --store $store recover'" "$work/err"
env --default-signal "$KINDEXFS" "$store" "$mnt" -f -o rw 2>"$work/mount.err" &
refused=$!
pids+=("$refused")
check "the mount refuses the damaged store" exits "$refused" 20
check "... with the same words" grep -q "its write-ahead log is damaged" "$work/mount.err"
check "... and mounts nothing" bash -c "! mountpoint -q '$mnt'"

"$KINDEX" --store "$store" recover >"$work/out" 2>"$work/err"
check "recover exits 1: receipts promise runs the store no longer has" test $? = 1
check "recover says where the log went" grep -q "the log as it was is in $store/lost+found/" "$work/out"
kept=$(ls "$store"/lost+found/*/"$(basename "$log")" 2>/dev/null | head -n 1)
check "lost+found/ holds the damaged log, byte for byte" cmp -s "$kept" "$work/damaged.log"
"$KINDEX" --store "$store" ls runs 2>/dev/null | tr -d / >"$work/runs"
kept_runs=$(wc -l <"$work/runs")
missing=$(grep -c ": receipt-run: the receipt says runs/[0-9a-f]\{12\} was added" "$work/err")
check "some runs were lost ($((200 - kept_runs))) and some kept ($kept_runs)" \
	test "$kept_runs" -gt 0 -a "$kept_runs" -lt 200
check "verify names every lost run, by its receipt ($missing of $((200 - kept_runs)))" \
	test "$missing" = $((200 - kept_runs))
# the runs verify names are exactly those the undamaged copy has and the recovered store lacks
"$KINDEX" --store "$work/store.undamaged" ls runs 2>/dev/null | tr -d / >"$work/runs.all"
grep -o "runs/[0-9a-f]\{12\}" "$work/err" | cut -d/ -f2 | sort >"$work/named"
comm -23 <(sort "$work/runs.all") <(sort "$work/runs") >"$work/lost"
check "... and only those" cmp -s "$work/named" "$work/lost"
"$KINDEX" --store "$store" verify >"$work/out" 2>"$work/err"
check "verify goes on saying so (exit 1)" test $? = 1
check "... and names the recovery" grep -q "lost writes: .*the write-ahead log was damaged" "$work/out"
mount_fg "$store" "$mnt"
check "the recovered store mounts, and its README says writes were lost" grep -q "^LOST WRITES" "$mnt/README"
check "... naming the log kept in lost+found/" grep -q "lost+found/" "$mnt/README"
check "the README's size is exact" test "$(stat -c %s "$mnt/README")" = "$(cat "$mnt/README" | wc -c)"
unmount "$mnt" "$daemon" || fail "unmount of the recovered store"
sane "the recovered store"
"$KINDEX" --store "$store" recover >"$work/out" 2>&1
check "a second recover has nothing to do" grep -q "opens as it is: nothing to recover" "$work/out"

# ---- a log torn at its end --------------------------------------------------------------------

torn="$work/torn"
cp -a "$work/store.undamaged" "$torn"
log=$(newest_log "$torn")
# torn inside the last drop's commit: where the log first holds its run's digest (the sizes the
# daemon keeps after each commit, docs/store.md 'Z', come after it in the log, and go with it)
last=$("$KINDEX" digest "$m/m-0000199.json" | awk '$1 == "run" { print substr($2, 8) }')
python3 - "$log" "$last" <<'PY' || die "the last drop's run is not in the log"
import os, sys
path, digest = sys.argv[1], bytes.fromhex(sys.argv[2])
at = open(path, "rb").read().find(digest)
if at < 0:
    sys.exit(1)
os.truncate(path, at + 16)
PY
"$KINDEX" --store "$torn" verify >"$work/out" 2>"$work/err"
check "a log torn at its end opens; verify exits 1" test $? = 1
check "... naming the one run whose receipt promised it" \
	test "$(grep -c ": receipt-run: " "$work/err")" = 1
check "... which is the last one dropped" grep -q "m-0000199.json: receipt-run" "$work/err"
"$KINDEX" --store "$work/store.undamaged" verify >"$work/out" 2>&1
check "the undamaged copy verifies clean, with every receipted run" \
	grep -q "no problems; 200 runs named by receipts, all stored" "$work/out"

# ---- damaged records ----------------------------------------------------------------------------

# Three run records and the first document cut to bytes that do not decode, and one rank-index
# entry's copy of its run record: each damaged run answers EIO on the mount (not ENOENT) where it
# cannot be read — under runs/, which reads the run's record; under benchmarks/ a run is read from
# its rank-index entry's copy —, and nothing else is hidden: every other file of the tree reads,
# the digests/ listing is whole, and the group whose index copy is damaged lists as before (its run
# is read from the run's record).
: "${KX_CORRUPT:?KX_CORRUPT must name the cli-corrupt helper}"
store="$work/damaged"
make_liger_store "$store"
"$KINDEX" -q --store "$store" export "$work/damaged.tree" || die "kindex export failed"
"$KX_CORRUPT" "$store" runs3 >"$work/runs3" || die "cli-corrupt runs3 failed"
"$KX_CORRUPT" "$store" doc-garbage >"$work/doc" || die "cli-corrupt doc-garbage failed"
"$KX_CORRUPT" "$store" index-garbage >"$work/index" || die "cli-corrupt index-garbage failed"
bad=$(cut -c3-14 "$work/doc") # the first document is the first run's own document
mount_fg "$store" "$mnt"
ls "$mnt/runs/$bad" >/dev/null 2>"$work/err"
check "a run whose document is damaged answers EIO" grep -q "Input/output error" "$work/err"
ids="$bad"
for k in $(sed -n '2,3p' "$work/runs3"); do
	id=${k:2:12}
	ids="$ids|$id"
	ls "$mnt/runs/$id" >/dev/null 2>"$work/err"
	check "a run whose record is damaged answers EIO under runs/ ($id)" grep -q "Input/output error" "$work/err"
	d=$(cd "$work/damaged.tree" && find benchmarks -name "*-$id")
	check "... and reads under benchmarks/, from its rank-index entry's copy" \
		cmp -s "$mnt/$d/manifest.json" "$work/damaged.tree/$d/manifest.json"
done
grep -r -l no-such-string-xyz "$mnt/benchmarks" "$mnt/runs" >/dev/null 2>"$work/err"
others=$(grep -vE "$ids" "$work/err" | grep -vc "SHA256SUMS: Input/output error")
check "grep -r reads every file but the damaged runs' and the sums over them ($others other errors)" \
	test "$others" = 0
check "... and the damaged runs answer EIO" grep -q "runs/$bad: Input/output error" "$work/err"
ls -l "$mnt/digests/sha256" >"$work/list" 2>"$work/err"
check "ls -l digests/sha256 lists every document ($(($(wc -l <"$work/list") - 1)))" \
	test $(($(wc -l <"$work/list") - 1)) = "$(ls "$work/damaged.tree/digests/sha256" | wc -l)"
check "... and names the one damaged document only" test "$(grep -c "Input/output error" "$work/err")" = 1
k=$(cat "$work/index")
g=$(grep -rl "${k: -64:12}" "$work/damaged.tree/benchmarks" --include=ranking.tsv | head -n 1)
g=${g#"$work/damaged.tree/"}
check "the group whose index copy is damaged lists as before" \
	diff <(ls "$mnt/${g%/*}") <(ls "$work/damaged.tree/${g%/*}")
check "... and its sums verify" bash -c "cd '$mnt/${g%/*}' && sha256sum -c --quiet SHA256SUMS"
unmount "$mnt" "$daemon" || fail "unmount of the damaged store"
sane "the damaged records"

# ---- a disk whose log syncs fail ---------------------------------------------------------------

# tests/integration/log-sync.c (LD_PRELOAD) fails every sync of the store's log with EIO: a drop is
# committed but cannot be made durable, so it is not acknowledged — its close() fails and the file
# stays in the inbox, whole, with no receipt. Mounted again on a sound disk, the same file dropped
# again is accepted.
shim=${KX_LOG_SYNC:?KX_LOG_SYNC must name the log-sync shim}
store="$work/syncs"
"$KINDEX" -q --store "$store" init || die "kindex init failed"
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 KX_TEST_LOG_SYNC=EIO LD_PRELOAD=$shim \
	mount_fg "$store" "$mnt" -o rw
cp "$m/m-0000200.json" "$mnt/inbox/" 2>"$work/cp.err"
check "a drop whose commit cannot be synced fails its close() with EIO" grep -q "Input/output error" "$work/cp.err"
check "... and the daemon says why" \
	grep -q "cannot sync the store's log after accepting inbox/m-0000200.json: Input/output error" "$mnt.err"
check "... and the file is still in the inbox, whole" cmp -s "$mnt/inbox/m-0000200.json" "$m/m-0000200.json"
check "... with no receipt" test ! -e "$mnt/inbox/.accepted/m-0000200.json"
check "... and the daemon is alive" kill -0 "$daemon"
unmount "$mnt" "$daemon" || fail "unmount of the store whose log syncs fail"
sane "the failing syncs"
mount_fg "$store" "$mnt" -o rw
check "on a sound disk the file dropped again is accepted" cp "$m/m-0000200.json" "$mnt/inbox/"
check "... and is in the tree" accepted "$mnt" m-0000200.json 1
unmount "$mnt" "$daemon" || fail "unmount after the failing syncs"
"$KINDEX" --store "$store" verify >"$work/out" 2>"$work/err"
check "... and the store verifies clean" grep -q "no problems" "$work/out"

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
# the commit itself, or the sync after it when another writer (the mount's sizes pass) met the full
# disk in between: the run is then stored but not yet durable, and the file stays all the same
check "... because the store could not commit them" \
	grep -Eq "cannot (ingest|sync the store's log after accepting) inbox/${failed[0]}: No space left on device" "$mnt.err"
check "... and the daemon is alive" kill -0 "$daemon"
check "... and the files whose close failed are still in the inbox, whole" \
	cmp -s "$mnt/inbox/${failed[0]}" "$m/${failed[0]}"
rm -f "$disk/filler"
# retried until the store's error recovery has found the room (it checks every few seconds)
redrop() {
	local deadline=$((SECONDS + 60))
	while [ $SECONDS -lt $deadline ]; do
		cp "$1" "$mnt/inbox/$2" 2>/dev/null && return 0
		sleep 1
	done
	return 1
}
# first a file whose run is stored already: its decision writes nothing, so only the sync after it
# can tell that the store is writable again
cp "$m/m-0000200.json" "$work/again-200.json"
check "with room again, a file of runs already stored is accepted, before any new write" \
	redrop "$work/again-200.json" again-200.json
check "... and is in the tree" accepted "$mnt" again-200.json 1
ok=false
redrop "$m/${failed[0]}" "${failed[0]}" && ok=true
check "with room again, the file dropped again is accepted, without a remount" $ok
check "... and is in the tree" accepted "$mnt" "${failed[0]}" 1
check "... and so is a new one" cp "$m/m-0000240.json" "$mnt/inbox/"
unmount "$mnt" "$daemon"
check "the unmount after the full disk is clean (exit 0)" test $? = 0
check "... and leaves no lock" test ! -e "$store/kindexfs.lock"
sane "the full disk"
"$KINDEX" --store "$store" verify >"$work/out" 2>"$work/err"
check "the store verifies clean, every receipted run stored" grep -q "no problems; .* all stored" "$work/out"

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
