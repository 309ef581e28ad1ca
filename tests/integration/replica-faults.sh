#!/bin/bash
# SPDX-License-Identifier: MIT
# Replicas against a hostile operator (docs/replicas.md, "Faults"; issue 42): a store re-created
# under the same publish directory, and a publish directory wiped, are new lineages that a pull
# copies whole, never calls "up to date", and never mixes with the old files; a pull removes only
# what it made; a source generation that is a symbolic link to nested directories fails cleanly
# and leaves nothing that fails the next pull; a writer publishing every 10 ms does not starve a
# pull loop; a writer whose publish directory is full backs off, goes on accepting drops, and its
# mount's README says publishing fails; a follow mount's README says when pulls fail, and when
# its replica stops advancing.
. "$(dirname "$0")/mount-lib.sh"
. "$(dirname "$0")/inbox-lib.sh"
. "$(dirname "$0")/replica-lib.sh"

command -v rsync >/dev/null || { echo "1..0 # SKIP rsync is missing"; exit 77; }
spool=$work/spool
mkdir -p "$spool"
gen 20 "$work/m"
gen 5 "$work/m2" --seed 7 --prefix second

# publish STORE PUB: one generation of what STORE holds now (kindex watch --once)
publish() {
	"$KINDEX" -q --store "$1" watch --once --publish "$2" "$spool" >/dev/null 2>>"$work/writer.err"
}
# pull SRC DST: kindex pull, its output in $work/out, its exit status in $rc
pull() {
	"$KINDEX" pull "$1" "$2" >"$work/out" 2>&1
	rc=$?
}
said() { grep -q -- "$1" "$work/out"; }
# same_runs STORE REPLICA: the replica holds exactly the store's runs
same_runs() {
	diff <(runs_of "$1") <(runs_of "$2") >"$work/diff" || { sed 's/^/# /' "$work/diff" | head -5; return 1; }
}
tables() { find "$1" -maxdepth 1 -name '*.sst' | wc -l; }
# readme_says MNT PATTERN: the mount's README has a line matching PATTERN within 10 s
readme_says() {
	local deadline=$((SECONDS + 10))
	until grep -q -- "$2" "$1/README" 2>/dev/null; do
		[ $SECONDS -lt $deadline ] || { sed 's/^/# /' "$1/README" | sed -n '1,12p'; return 1; }
		sleep 0.1
	done
}

# kindex watch --once --publish stops its publisher at once: the last round still publishes (its
# thread used to miss it when told to stop before its first look: about half of the runs)
"$KINDEX" -q --store "$work/s0" init && "$KINDEX" -q --store "$work/s0" import liger "$LIGER_CSV" >/dev/null ||
	die "the store failed"
missed=0
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	rm -rf "$work/pub0"
	publish "$work/s0" "$work/pub0"
	[ -f "$work/pub0/PUBLISHED" ] || missed=$((missed + 1))
done
check "watch --once --publish publishes every time ($missed of 20 did not)" [ "$missed" = 0 ]

# 1. the writer's store re-created (a re-import) under the same publish directory
s1=$work/s1 pub=$work/pub dst=$work/dst
"$KINDEX" -q --store "$s1" init && "$KINDEX" -q --store "$s1" import liger "$LIGER_CSV" >/dev/null ||
	die "the first store failed"
publish "$s1" "$pub"
pull "$pub" "$dst"
check "the first store's generation is pulled ($rc: $(cat "$work/out"))" [ "$rc" = 0 ]
check "it has table files to share" [ "$(tables "$dst/current/")" -gt 0 ]
rm -rf "$s1"
"$KINDEX" -q --store "$s1" init && "$KINDEX" -q --store "$s1" import liger "$LIGER_CSV" >/dev/null &&
	"$KINDEX" -q --store "$s1" ingest "$work/m" >/dev/null || die "the re-created store failed"
publish "$s1" "$pub"
pull "$pub" "$dst"
check "the re-created store is a new publication, copied whole ($rc: $(cat "$work/out"))" \
	bash -c "[ $rc = 0 ] && grep -q 'a new publication.*copied whole' '$work/out'"
check "the replica verifies" verifies "$dst/current"
check "it holds the re-created store's runs" same_runs "$s1" "$dst/current"
"$KINDEX" -q --store "$s1" ingest "$work/m2" >/dev/null || die "ingest failed"
publish "$s1" "$pub"
pull "$pub" "$dst"
check "the next pull shares table files within the new lineage ($rc: $(cat "$work/out"))" \
	bash -c "[ $rc = 0 ] && grep -q 'table files\? linked from' '$work/out'"
check "and holds every run" same_runs "$s1" "$dst/current"

# 3. the publish directory wiped, the writer started again; the reader was at generation 3
s3=$work/s3 pub3=$work/pub3 dst3=$work/dst3
"$KINDEX" -q --store "$s3" init || die "init failed"
for i in 0 1 2; do
	"$KINDEX" -q --store "$s3" ingest "$work/m/m-000000$i.json" >/dev/null && publish "$s3" "$pub3" ||
		die "publishing generation $((i + 1)) failed"
done
pull "$pub3" "$dst3"
check "the reader is at generation 3 ($(cat "$work/out"))" [ "$(readlink "$dst3/current")" = gen-3 ]
rm -rf "$pub3"
for i in 3 4 5; do
	"$KINDEX" -q --store "$s3" ingest "$work/m/m-000000$i.json" >/dev/null && publish "$s3" "$pub3" ||
		die "publishing anew failed"
done
check "the wiped directory numbers from 1 again" [ "$(published_field "$pub3" generation)" = 3 ]
pull "$pub3" "$dst3"
check "generation 3 of the new publication is not 'up to date' ($rc: $(cat "$work/out"))" \
	bash -c "[ $rc = 0 ] && ! grep -q 'up to date' '$work/out'"
check "it is copied under a name of its own" bash -c "readlink '$dst3/current' | grep -qx 'gen-3-[0-9a-f]\{16\}'"
check "the replica holds the writer's 6 runs" same_runs "$s3" "$dst3/current"
pull "$pub3" "$dst3"
check "then it is up to date ($(cat "$work/out"))" said "is up to date: generation 3"

# 2. a pull owns only what it made
dst2=$work/dst2
mkdir -p "$dst2/work.partial" "$dst2/.trash-notes" "$dst2/gen-7"
echo notes >"$dst2/work.partial/a" && echo notes >"$dst2/.trash-notes/b" && echo notes >"$dst2/gen-7/c"
pull "$pub3" "$dst2"
check "a pull into a directory holding others' files succeeds ($rc: $(cat "$work/out"))" [ "$rc" = 0 ]
check "work.partial/, .trash-notes/ and gen-7/ are left alone, with their files" \
	bash -c "[ -f '$dst2/work.partial/a' ] && [ -f '$dst2/.trash-notes/b' ] && [ -f '$dst2/gen-7/c' ]"
check "and the pull says so" said "left alone, not made by kindex pull: .*gen-7"
pull "$pub3" "$dst2"
check "a second pull leaves them too" bash -c "[ -f '$dst2/work.partial/a' ] && [ -f '$dst2/gen-7/c' ]"

# 6. a source gen-1 that is a symbolic link to nested directories
bad=$work/badpub
mkdir -p "$bad" "$work/nest/a/b/c"
echo x >"$work/nest/a/b/c/f"
echo y >"$work/nest/a/g"
ln -s "$work/nest" "$bad/gen-1"
sed 's/^generation .*/generation 1/' "$pub3/PUBLISHED" >"$bad/PUBLISHED"
dst6=$work/dst6
pull "$bad" "$dst6"
check "a generation that is not a checkpoint is refused ($rc: $(cat "$work/out"))" [ "$rc" = 1 ]
check "nothing partial is left" bash -c "! ls -d '$dst6'/*.partial 2>/dev/null | grep -q ."
pull "$pub3" "$dst6"
check "the next pull, from a good source, succeeds ($rc: $(cat "$work/out"))" [ "$rc" = 0 ]

# 7. publish_interval=0.01, publish_keep=1, a drop every 20 ms, and a pull loop
s7=$work/s7 pub7=$work/pub7 dst7=$work/dst7
"$KINDEX" -q --store "$s7" init && "$KINDEX" -q --store "$s7" import liger "$LIGER_CSV" >/dev/null ||
	die "the store failed"
gen 150 "$work/m7" --seed 9 --prefix fast
mkdir -p "$work/spool7"
"$KINDEX" -q --store "$s7" watch --publish "$pub7" --publish-interval 0.01 --publish-keep 1 "$work/spool7" \
	>/dev/null 2>>"$work/writer7.err" &
writer=$!
pids+=("$writer")
check "the writer publishes" wait_generation "$pub7" 1
(
	for f in "$work"/m7/*.json; do
		cp "$f" "$work/spool7/tmp/" && mv "$work/spool7/tmp/${f##*/}" "$work/spool7/new/"
		sleep 0.02
	done
) &
dropper=$!
pids+=("$dropper")
ok=0 failed=0
while kill -0 "$dropper" 2>/dev/null; do
	if "$KINDEX" pull "$pub7" "$dst7" >>"$work/pulls7" 2>&1; then ok=$((ok + 1)); else failed=$((failed + 1)); fi
done
wait "$dropper"
echo "# $ok pulls succeeded, $failed failed; $(grep -c 'fell behind' "$work/pulls7") fell behind and went on"
grep -v '^pulled\|up to date' "$work/pulls7" | head -3 | sed 's/^/# /'
check "every pull of the loop succeeds ($ok ok, $failed failed)" [ "$failed" = 0 -a "$ok" -gt 0 ]
kill -TERM "$writer" && wait "$writer"
pull "$pub7" "$dst7"
check "the replica catches up: every run the writer accepted" same_runs "$s7" "$dst7/current"

# 8. the writer's publish directory on a full disk: drops accepted, rounds back off
disk=$work/disk
mkdir -p "$disk"
if mount -t tmpfs -o size=256k kindex-test-publish "$disk" 2>/dev/null; then
	mounts+=("$disk")
	s8=$work/s8
	"$KINDEX" -q --store "$s8" init && "$KINDEX" -q --store "$s8" import liger "$LIGER_CSV" >/dev/null ||
		die "the store failed"
	mkdir -p "$work/spool8"
	"$KINDEX" --store "$s8" watch --publish "$disk/pub" --publish-interval 0.1 "$work/spool8" \
		>/dev/null 2>"$work/writer8.err" &
	writer=$!
	pids+=("$writer")
	deadline=$((SECONDS + 10))
	until [ -d "$work/spool8/new" ] || [ $SECONDS -ge $deadline ]; do sleep 0.05; done
	cp "$work/m/m-0000001.json" "$work/spool8/new/" || die "cannot drop"
	deadline=$((SECONDS + 10))
	until [ -n "$(ls "$work/spool8/accepted" 2>/dev/null)" ] || [ $SECONDS -ge $deadline ]; do sleep 0.05; done
	check "a drop is accepted while publishing fails" bash -c "ls '$work/spool8/accepted' | grep -q ."
	sleep 4
	kill -TERM "$writer" && wait "$writer"
	n=$(grep -c 'publishing into .* failed' "$work/writer8.err")
	sed -n '1p;$p' "$work/writer8.err" | sed 's/^/# /'
	check "publishing fails, said with the reason" grep -q 'failed.*No space left on device' "$work/writer8.err"
	check "and backs off: $n failed rounds in 4 s at a 0.1 s interval (not 40)" [ "$n" -ge 2 -a "$n" -le 8 ]
	check "the log says when the next round is" grep -q 'the next in [0-9.]* s' "$work/writer8.err"
	# the same through a read-write mount: its README says publishing fails, and why
	"$KINDEX" -q --store "$s8" ingest "$work/m2" >/dev/null || die "ingest failed"
	mount_fg "$s8" "$work/mnt8" -o rw,publish="$disk/pub8",publish_interval=0.1
	check "a publishing mount's README says publishing is failing, and why" \
		readme_says "$work/mnt8" "^publishing  FAILING since .*No space left on device"
	unmount "$work/mnt8" "$daemon"
else
	echo "# cannot mount a tmpfs (not root?): the full-disk checks are skipped"
fi

# a follow mount says when the pulls into its replica fail (the replica is not advancing)
mount_fg "$dst3/current" "$work/mnt9" -o follow
check "a follow mount's README says nothing of pulls while they succeed" bash -c "! grep -q '^pulls' '$work/mnt9/README'"
pull "$work/no-such-pub" "$dst3"
check "a pull from a publish directory that is gone fails ($rc)" [ "$rc" = 3 ]
check "DST/PULL-FAILED says so" grep -q "^failures 1" "$dst3/PULL-FAILED"
check "the follow mount's README says the pulls fail, and the reason" \
	readme_says "$work/mnt9" "^pulls       failing: 1 in a row since .*no-such-pub"
pull "$pub3" "$dst3"
check "a good pull removes PULL-FAILED" [ ! -e "$dst3/PULL-FAILED" ]
deadline=$((SECONDS + 10))
while grep -q '^pulls' "$work/mnt9/README" && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
check "and README no longer says it" bash -c "! grep -q '^pulls' '$work/mnt9/README'"
unmount "$work/mnt9" "$daemon"

# a follow mount says when its replica stops advancing: a writer publishing every 0.2 s touches
# PUBLISHED in rounds with nothing new; each pull keeps it as DST/LAST-PUBLISHED; 25 intervals
# (5 s) without it moving, README says NOT ADVANCING, and a pull that reaches the writer again
# takes it back
s10=$work/s10 pub10=$work/pub10 dst10=$work/dst10
"$KINDEX" -q --store "$s10" init && "$KINDEX" -q --store "$s10" import liger "$LIGER_CSV" >/dev/null ||
	die "the store failed"
mkdir -p "$work/spool10"
"$KINDEX" -q --store "$s10" watch --publish "$pub10" --publish-interval 0.2 "$work/spool10" \
	>/dev/null 2>"$work/writer10.err" &
writer=$!
pids+=("$writer")
deadline=$((SECONDS + 10))
until [ -f "$pub10/PUBLISHED" ] || [ $SECONDS -ge $deadline ]; do sleep 0.05; done
check "the writer's PUBLISHED names its interval" grep -qx "interval-ns 200000000" "$pub10/PUBLISHED"
m0=$(stat -c %.9Y "$pub10/PUBLISHED")
sleep 1
check "a writer with nothing new touches PUBLISHED every round" \
	[ "$(stat -c %.9Y "$pub10/PUBLISHED")" != "$m0" ]
pull "$pub10" "$dst10"
check "a pull keeps the writer's PUBLISHED, with its time, as DST/LAST-PUBLISHED ($rc)" \
	bash -c "[ $rc = 0 ] && cmp -s '$dst10/LAST-PUBLISHED' '$pub10/PUBLISHED'"
(while :; do "$KINDEX" -q pull --no-verify "$pub10" "$dst10" >/dev/null 2>&1; sleep 0.3; done) &
loop=$!
pids+=("$loop")
mount_fg "$dst10/current" "$work/mnt10" -o follow,stale_after=25
sleep 3
check "while pulls reach the writer, README says nothing of it" \
	bash -c "! grep -q 'NOT ADVANCING' '$work/mnt10/README'"
kill "$loop" 2>/dev/null
wait "$loop" 2>/dev/null
check "with the pulls stopped, README says the replica is not advancing, and since when" \
	readme_says "$work/mnt10" "^replica     NOT ADVANCING since .*25 of its 0.200 s intervals"
for _ in 1 2 3 4 5 6 7 8 9 10; do pull "$pub10" "$dst10"; [ "$rc" != 3 ] && break; sleep 0.5; done # (the loop's last)
check "a pull that reaches the writer again: README says it no more ($rc)" \
	bash -c "[ $rc = 0 ] && deadline=\$((SECONDS + 10)) && while grep -q 'NOT ADVANCING' '$work/mnt10/README'; do
		[ \$SECONDS -lt \$deadline ] || exit 1; sleep 0.1; done"
kill -TERM "$writer" && wait "$writer"
unmount "$work/mnt10" "$daemon"

finish
