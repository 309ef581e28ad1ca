#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Crash safety of the inbox: two writers drop 10,000 manifests (every 25th with a note about its
# run: an attestation, SPEC §8) — one with cp, one
# file per cp (each decided at its close), the other as rsync does, cp to a temporary name and mv to
# the final one (each queued by the rename and decided after it returns) — while the daemon is
# killed with SIGKILL at random moments, 20 times, and mounted again each time (the dead mount is
# detached lazily); a last round finishes the drop. The kills are
# spread over the whole drop: round r waits (polling the writers' progress, with a deadline) until
# about r/21 of the files were started, then kills after a further random 0-300 ms — except the
# first, which kills while one cp is half way through its file (its source is a FIFO the test feeds,
# so that moment, which a random kill may miss, is always tried: the cp fails, its file stays in the
# inbox, undecided). Then:
#   - every file whose cp (or mv) exited 0 is in the index: `kindex ingest` of all of them adds
#     nothing — a rename answered before the kill is decided at the next mount;
#   - every file that has an accepted receipt is in the index too, and no run is partial:
#     `kindex verify` is clean;
#   - every other file is still in the inbox or was decided (a receipt in .accepted/ or
#     .rejected/) — none vanished; and since every manifest was valid, none was rejected: a file
#     cut short by a crash stays in the inbox, undecided, for its writer to deal with.
# Last, a kill while a 128 MiB artifact's bytes are being stored (SPEC §9): all or nothing.
#
# Environment: KX_CRASH_FILES (default 10000), KX_CRASH_KILLS (default 20).
. "$(dirname "$0")/mount-lib.sh"
. "$(dirname "$0")/inbox-lib.sh"

files=${KX_CRASH_FILES:-10000}
kills=${KX_CRASH_KILLS:-20}
writers=2
store="$work/store"
mnt="$work/mnt"
in="$mnt/inbox"
m="$work/m"
"$KINDEX" -q --store "$store" init || die "kindex init failed"
gen "$files" "$m"
# every 25th file also carries a note about its own run (SPEC §8): JSON Lines of the manifest and
# the attestation, decided together like any file
python3 - "$m" "$work/attested" <<'PY' || die "cannot write the attested files"
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["KX_SOURCE_ROOT"], "tests", "integration"))
import kxjcs
d, out = sys.argv[1:]
names = sorted(os.listdir(d))[::25]
for n in names:
    m = json.load(open(os.path.join(d, n)))
    att = {"apiVersion": "kindexfs.dev/v1alpha1", "kind": "Attestation",
           "spec": {"subject": kxjcs.digest(m["run"]), "type": "note", "text": "noted before the crash",
                    "author": "inbox-crash", "createdAt": "2026-11-01T00:00:00Z"}}
    with open(os.path.join(d, n), "w") as f:
        f.write(json.dumps(m) + "\n" + json.dumps(att) + "\n")
open(out, "w").write("".join(n + "\n" for n in names))
PY
ls "$m" >"$work/all"
for ((w = 0; w < writers; w++)); do
	awk -v w=$w -v n=$writers 'NR % n == w' "$work/all" >"$work/list.$w"
	echo 0 >"$work/pos.$w"
	: >"$work/ok.$w"
	: >"$work/failed.$w"
	: >"$work/unborn.$w"
done
# the file round 1 cuts half way: writer 0 copies it from a FIFO, reached about when the kill is due
held=$(sed -n "$((files / (kills + 1) / 2 + 1))p" "$work/list.0")
half=$(($(stat -c %s "$m/$held") / 2))
fifo="$work/fifo"
mkfifo "$fifo"

# drop ID NAME: writer 0 copies the file in; writer 1 copies it to a temporary name and renames it
drop() {
	if [ "$1" = 0 ]; then
		if [ "$2" = "$held" ]; then cp "$fifo" "$in/$2"; else cp "$m/$2" "$in/$2"; fi
	else
		cp "$m/$2" "$in/.$2.part" && mv "$in/.$2.part" "$in/$2"
	fi
}

# writer ID: drops its share from where it stopped, one file at a time; stops at the first failure
# (the daemon is gone), leaving that file to whatever the crash made of it
writer() {
	local id=$1 i name
	local -a names
	mapfile -t names <"$work/list.$id"
	i=$(cat "$work/pos.$id")
	while [ "$i" -lt "${#names[@]}" ]; do
		name=${names[$i]}
		i=$((i + 1))
		echo "$i" >"$work/pos.$id"
		if drop "$id" "$name" 2>"$work/err.$id"; then
			echo "$name" >>"$work/ok.$id"
		else
			echo "$name" >>"$work/failed.$id"
			# cp that could not even stat the inbox or create the file never dropped anything (an
			# mv that could not stat its temporary file had it: cut between the copy and the rename)
			if grep -q "^cp: .*\(cannot stat\|cannot create\)" "$work/err.$id"; then
				echo "$name" >>"$work/unborn.$id"
			fi
			return 1
		fi
	done
}

# started: sets $started_n, the number of files the writers have started (their positions: a
# position file being rewritten is empty for a moment, so read it again then)
started() {
	local w n tries
	started_n=0
	for ((w = 0; w < writers; w++)); do
		for ((tries = 0; tries < 100; tries++)); do
			n=
			read -r n <"$work/pos.$w" 2>/dev/null
			[ -z "$n" ] || break
		done
		started_n=$((started_n + ${n:-0}))
	done
}

writers_running() {
	local p
	for p in "${wpids[@]}"; do
		kill -0 "$p" 2>/dev/null && return 0
	done
	return 1
}

# held_open: some process (the cp of $held) has that file open in the inbox
held_open() {
	find /proc/[0-9]*/fd -lname "$in/$held" 2>/dev/null | grep -q .
}

target_started() {
	started
	[ "$started_n" -ge "$target" ]
}

# round_waits WHAT COMMAND: until COMMAND succeeds, every 50 ms; the writers stop only when the
# daemon dies, so their stopping first, or $deadline passing, counts in $stalled (and kills at once)
round_waits() {
	local what=$1
	shift
	until "$@"; do
		if ! writers_running || [ $SECONDS -ge $deadline ]; then
			started
			echo "# round $round: the writers stopped or stalled waiting for $what ($started_n started)"
			stalled=$((stalled + 1))
			return 1
		fi
		sleep 0.05
	done
}

remaining() {
	local w left=0
	for ((w = 0; w < writers; w++)); do
		left=$((left + $(wc -l <"$work/list.$w") - $(cat "$work/pos.$w")))
	done
	echo $left
}

# mount_and_write: mount the store read-write and start every writer where it stopped (pids in wpids)
mount_and_write() {
	local w
	mount_fg "$store" "$mnt" -o rw
	wpids=()
	for ((w = 0; w < writers; w++)); do
		writer $w &
		wpids+=($!)
	done
}

t0=$SECONDS
stuck=0
killed=0
stalled=0
last=0
for ((round = 1; round <= kills; round++)); do
	[ "$(remaining)" -gt 0 ] || break
	mount_and_write
	# until round/(kills+1) of the files were started, within 120 s
	target=$((files * round / (kills + 1)))
	deadline=$((SECONDS + 120))
	if [ "$round" = 1 ]; then
		# until writer 0's cp has $held open, fed half of it (the FIFO is opened read-write, so
		# without blocking, and after the writers started, so that none of them inherits it)
		exec {hold}<>"$fifo"
		head -c "$half" "$m/$held" >&"$hold"
		when="while its cp of $held was half way"
		round_waits "the cp of $held to open it" held_open || when="when that wait failed"
	else
		round_waits "$target files to be started" target_started
		ms=$((RANDOM % 301))
		sleep "0.$(printf %03d $ms)"
		when="$ms ms after file $target"
	fi
	started
	kill -KILL "$daemon"
	if ! exits "$daemon" 10; then
		# A thread of the daemon was telling the kernel to forget a name — a FUSE notification
		# takes the directory's lock — while a writer's request, which the dead daemon will never
		# answer, held that lock: the kernel keeps the daemon until its connection is aborted,
		# which `umount -f` does (what an operator would run; docs/mount.md, "Unmounting").
		stuck=$((stuck + 1))
		umount -f "$mnt" 2>/dev/null
	fi
	wait "$daemon" 2>/dev/null
	if [ "$round" = 1 ]; then
		# the rest of $held, for its cp to write to the dead mount
		tail -c +$((half + 1)) "$m/$held" >&"$hold"
		exec {hold}>&-
	fi
	killed=$((killed + 1))
	last=$started_n
	fusermount3 -u -z "$mnt" 2>/dev/null || umount -l "$mnt"
	wait "${wpids[@]}" 2>/dev/null
	echo "# round $round: killed $when, at file $last; $(remaining) files to go"
done
check "the daemon was killed $killed times during the drop ($stuck of them stuck in the kernel until umount -f)" \
	[ "$killed" = "$kills" ]
check "the kills were spread over the whole drop (the last at file $last of $files; $stalled waits failed)" \
	[ "$stalled" = 0 -a "$last" -ge $((files * kills / (kills + 1))) ]
mount_and_write
wait "${wpids[@]}"
check "the last round finished the drop ($(remaining) left)" [ "$(remaining)" = 0 ]
unmount "$mnt" "$daemon" || fail "the daemon did not exit cleanly"
echo "# $files files, $kills kills: $((SECONDS - t0)) s"

cat "$work"/ok.* | sort >"$work/ok"
cat "$work"/failed.* | sort >"$work/failed"
cat "$work"/unborn.* | sort >"$work/unborn"
ok=$(wc -l <"$work/ok")
failed=$(wc -l <"$work/failed")
unborn=$(wc -l <"$work/unborn")
check "every file was tried: $ok copies succeeded, $failed failed with the daemon" [ $((ok + failed)) = "$files" ]
echo "# $((failed - unborn)) copies were cut after their file was created, $unborn before"
check "and only by a kill: at most one per writer and kill" [ "$failed" -le $((kills * writers)) ]

"$KINDEX" --store "$store" verify >"$work/verify" 2>&1
rc=$? # (read before the check's arguments: a command substitution there resets $?)
check "kindex verify is clean ($(tail -1 "$work/verify"))" [ $rc = 0 ]

# every copy that succeeded is in the index: ingesting them all again adds nothing ("1 file:" for one)
mkdir "$work/okfiles"
(cd "$m" && xargs -a "$work/ok" ln -t "$work/okfiles")
"$KINDEX" --store "$store" ingest "$work/okfiles" >"$work/again" 2>&1
notes=$(sort "$work/ok" | comm -12 - <(sort "$work/attested") | wc -l)
also="; 0 attestations stored, $notes already present"
[ "$notes" -gt 0 ] || also=
check "every file whose cp succeeded is in the index, its note too ($(tail -1 "$work/again"))" \
	grep -q "^$ok files\?: $ok accepted (0 runs added, $ok already present$also), 0 refused" "$work/again"

# and each has its receipt, and is gone from the inbox
inbox="$store/inbox"
# (a temporary .NAME.part counts as NAME: its copy or its rename was cut)
ls -A "$inbox" | grep -v '^\.accepted$\|^\.rejected$\|^artifacts$' | sed 's/^\.\(.*\)\.part$/\1/' | sort >"$work/left"
ls "$inbox/.accepted" | sed 's/\.[0-9]*$//' | sort -u >"$work/acc"
ls "$inbox/.rejected" | sort >"$work/rej"
check "every successful copy has its receipt in .accepted/" bash -c "[ -z \"\$(comm -23 '$work/ok' '$work/acc')\" ]"
check "and none of them is still in the inbox" bash -c "[ -z \"\$(comm -12 '$work/ok' '$work/left')\" ]"
# (one head for all of them: a head and a grep per receipt cost minutes; -q: no file names)
check "no receipt is partial (each starts 'accepted NAME')" bash -c "
	cd '$inbox/.accepted' && [ \"\$(ls | xargs -r head -qn1 | grep -c '^accepted ')\" = \"\$(ls | wc -l)\" ]"

# the others: still in the inbox, or decided — never vanished (a cp that failed to create its
# file may have created it or not: the daemon can die before or after the create)
comm -23 "$work/failed" "$work/acc" | comm -23 - "$work/left" | comm -23 - "$work/unborn" >"$work/vanished"
check "no file vanished: each failed copy is in the inbox or accepted ($(wc -l <"$work/left") left in the inbox)" \
	[ ! -s "$work/vanished" ]
head -5 "$work/vanished" | sed 's/^/# vanished: /'
check "no valid manifest was rejected (a cut file stays undecided)" [ ! -s "$work/rej" ]
check "the cp cut half way failed, and left its file in the inbox, undecided ($held)" bash -c "
	grep -qx '$held' '$work/failed' && ! grep -qx '$held' '$work/unborn' &&
	grep -qx '$held' '$work/left' && ! grep -qx '$held' '$work/acc'"
check "nothing in the inbox but files whose copy failed" bash -c "[ -z \"\$(comm -23 '$work/left' '$work/failed')\" ]"

# accepted without the writer knowing (killed between the commit and the reply): in the index too
comm -23 "$work/acc" "$work/ok" >"$work/acc-only"
if [ -s "$work/acc-only" ]; then
	mkdir "$work/acconly"
	(cd "$m" && xargs -a "$work/acc-only" ln -t "$work/acconly")
	n=$(wc -l <"$work/acc-only")
	"$KINDEX" --store "$store" ingest "$work/acconly" >"$work/again2" 2>&1
	check "the $n files accepted while their cp failed are in the index too" \
		grep -q "^$n files\?: $n accepted (0 runs added, $n already present[;)]" "$work/again2"
fi

# The moment between a rename's answer and its decision, made to last: what a daemon killed there
# leaves — a final name carrying the queued mark — and, beside it, a final name a writer left
# without closing or renaming it (no mark). The next mount decides the first, and only the first.
gen 2 "$work/late" --seed 7 --prefix late
cp "$work/late/late-0000000.json" "$inbox/renamed.json"
setfattr -n user.kindex.queued "$inbox/renamed.json"
cp "$work/late/late-0000001.json" "$inbox/written.json"
mount_fg "$store" "$mnt" -o rw
check "a file renamed before the daemon died is decided at the next mount" \
	grep -q "^accepted renamed.json " "$in/.accepted/renamed.json"
run=$(sed -n 's/^added \(runs\/[0-9a-f]*\) .*/\1/p' "$in/.accepted/renamed.json")
check "its run is in the tree (${run:-no run in the receipt})" [ -n "$run" -a -d "$mnt/$run" ]
check "a file written but never closed or renamed stays in the inbox, undecided" \
	[ -f "$in/written.json" -a ! -e "$in/.accepted/written.json" ]
check "the receipt keeps no mark" bash -c "! getfattr -n user.kindex.queued '$inbox/.accepted/renamed.json' 2>/dev/null"
unmount "$mnt" "$daemon" || fail "the daemon did not exit cleanly"
check "the daemon's stderr is empty" [ ! -s "$mnt.err" ]

# An artifact (SPEC §9) killed mid-store: the daemon is killed while it streams a 128 MiB file of
# inbox/artifacts/ into the store (its writer blocked in close()). A small artifact acknowledged
# before stays; the big one is either wholly stored or not at all — never served or listed in
# part — and stays in the inbox when not; what the cut upload wrote is found by kindex gc.
head -c 4096 /dev/urandom >"$work/small.bin"
head -c 134217728 /dev/urandom >"$work/big.bin"
small=$(sha256sum "$work/small.bin" | cut -c1-64) big=$(sha256sum "$work/big.bin" | cut -c1-64)
mount_fg "$store" "$mnt" -o rw
cp "$work/small.bin" "$in/artifacts/small.bin" || fail "cp of a small artifact failed"
cp "$work/big.bin" "$in/artifacts/big.bin" 2>/dev/null &
cpid=$!
storing() { # all of it written, its cp still waiting in close(): the daemon is storing it
	[ "$(stat -c %s "$inbox/artifacts/big.bin" 2>/dev/null)" = 134217728 ] && kill -0 "$cpid" 2>/dev/null
}
deadline=$((SECONDS + 60))
until storing || [ $SECONDS -ge $deadline ]; do sleep 0.01; done
check "the daemon was storing the big artifact when killed" storing
sleep 0.$((RANDOM % 3))
kill -KILL "$daemon"
exits "$daemon" 10 || umount -f "$mnt" 2>/dev/null
wait "$daemon" 2>/dev/null
fusermount3 -u -z "$mnt" 2>/dev/null || umount -l "$mnt"
wait "$cpid"
cp_rc=$?
mount_fg "$store" "$mnt" -o rw
check "the acknowledged small artifact is served" cmp -s "$mnt/digests/sha256/$small" "$work/small.bin"
if [ -e "$mnt/digests/sha256/$big" ]; then
	check "the big one, stored before the kill, is whole" cmp -s "$mnt/digests/sha256/$big" "$work/big.bin"
	echo "# the kill came after the big artifact's commit (cp exit $cp_rc)"
else
	check "the big one, not stored, is not listed either" bash -c "! ls '$mnt/digests/sha256' | grep -q '$big'"
	check "its cp failed" [ "$cp_rc" != 0 ]
	check "and it is still in the inbox, undecided" cmp -s "$inbox/artifacts/big.bin" "$work/big.bin"
	echo "# the kill cut the big artifact's store"
fi
unmount "$mnt" "$daemon" || fail "the daemon did not exit cleanly"
check "kindex verify is clean after the cut" "$KINDEX" --store "$store" -q verify
"$KINDEX" --store "$store" gc --grace 0 >"$work/gc" 2>&1 || fail "kindex gc failed: $(cat "$work/gc")"
check "kindex gc takes what a cut upload left, if any ($(tail -1 "$work/gc"))" \
	bash -c "[ \$(grep -c '^removed an interrupted upload' '$work/gc') -le 1 ] && ! grep -q 'removed artifact sha256:$big' '$work/gc'"
check "and verify is clean after gc" "$KINDEX" --store "$store" -q verify
finish
