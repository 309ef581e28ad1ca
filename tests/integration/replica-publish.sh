#!/bin/bash
# SPDX-License-Identifier: MIT
# The writer publishes generations (docs/replicas.md): a -o rw mount with -o publish=DIR writes
# DIR/gen-N, a checkpoint that opens and verifies, and DIR/PUBLISHED naming it, whenever runs
# arrive; it keeps the newest publish_keep; the last generation holds every run the writer
# accepted. `kindex watch --publish` does the same, and a writer killed (SIGKILL) after a
# checkpoint and before PUBLISHED leaves PUBLISHED naming the complete generation before it —
# never the one in progress —, which the next writer replaces. Bad options are refused by name.
. "$(dirname "$0")/mount-lib.sh"
. "$(dirname "$0")/inbox-lib.sh"
. "$(dirname "$0")/replica-lib.sh"

store=$work/store pub=$work/pub mnt=$work/mnt
"$KINDEX" -q --store "$store" init >/dev/null || die "kindex init failed"
gen 30 "$work/m"

mount_fg "$store" "$mnt" -o rw,publish="$pub",publish_interval=0.2,publish_keep=2
check "the first generation is published at the mount" wait_generation "$pub" 1
check "it verifies" verifies "$pub/gen-1"
check "its PUBLISHED is the directory's" cmp -s "$pub/PUBLISHED" "$pub/gen-1/PUBLISHED"
files=("$work"/m/*.json)
before=$(published_field "$pub" generation)
for batch in 0 1 2; do
	cp "${files[@]:$((batch * 10)):10}" "$mnt/inbox/" || die "cp into the inbox failed"
	check "the runs of batch $batch reach a generation" wait_runs "$pub" $(((batch + 1) * 10))
done
# the rounds' commits, then what the writer keeps after them (sizes, index.tsv's rows), each
# published in turn: the newest generation is the one PUBLISHED names once it stops moving
check "the writer stops publishing once it has kept what the drops need" wait_settled "$pub"
after=$(published_field "$pub" generation)
check "the drops made new generations ($before -> $after)" [ "$after" -gt "$before" ]
check "publish_keep=2 keeps two generations, once the older ones are a second old" wait_kept "$pub" 2
for g in "$pub"/gen-*; do
	check "${g##*/} verifies" verifies "$g"
done
check "they are the newest two" test -d "$pub/gen-$after" -a -d "$pub/gen-$((after - 1))"
check "no unfinished checkpoint is left" bash -c "! ls -d '$pub'/*.tmp 2>/dev/null | grep -q ."
ls "$mnt/runs" | sed 's|$|/|' | sort >"$work/writer-runs"
check "the newest generation holds every run the writer accepted" \
	diff "$work/writer-runs" <(runs_of "$pub/gen-$after")
seq=$(published_field "$pub" sequence)
check "PUBLISHED says which sequence and store generation ($seq)" \
	bash -c "[ '$seq' -gt 0 ] && [ '$(published_field "$pub" store-generation)' -gt 0 ] && grep -q '^time 20' '$pub/PUBLISHED'"
unmount "$mnt" "$daemon"
check "the daemon's stderr is empty" [ ! -s "$mnt.err" ]

# a writer killed between its checkpoint and PUBLISHED: kindex watch, with the test hook
spool=$work/spool pub2=$work/pub2
mkdir -p "$spool"
KINDEX_TEST_PUBLISH_KILL=2 "$KINDEX" -q --store "$store" watch --publish "$pub2" --publish-interval 0.1 "$spool" \
	>/dev/null 2>"$work/watch.err" &
watcher=$!
pids+=("$watcher")
check "kindex watch --publish publishes the store" wait_generation "$pub2" 1
python3 "$KX_SOURCE_ROOT/bench/gen-manifests" 1 "$work/late" --seed 7 >/dev/null || die "gen-manifests failed"
cp "$work/late/m-0000000.json" "$spool/tmp/late.json" && mv "$spool/tmp/late.json" "$spool/new/late.json"
check "the writer is killed in its second publishing round" exits "$watcher" 20
wait "$watcher"
rc=$?
check "... by SIGKILL (status $rc)" [ "$rc" = 137 ]
check "its second checkpoint was complete (gen-2 exists)" test -f "$pub2/gen-2/CURRENT"
check "PUBLISHED still names generation 1, the complete one before" [ "$(published_field "$pub2" generation)" = 1 ]
check "which verifies" verifies "$pub2/gen-1"
"$KINDEX" -q --store "$store" watch --publish "$pub2" --publish-interval 0.1 "$spool" >/dev/null 2>"$work/watch2.err" &
watcher=$!
pids+=("$watcher")
check "the next writer publishes generation 2 anew" wait_generation "$pub2" 2
check "with the run accepted before the kill" wait_runs "$pub2" 31
check "generation 2 verifies" verifies "$pub2/gen-2"
kill -TERM "$watcher"
wait "$watcher"
check "kindex watch --publish stops cleanly" [ $? = 0 ]
check "and said nothing on stderr" [ ! -s "$work/watch2.err" ]

# bad input: each refusal names the option and the rule
refused() { # WHAT WORDS COMMAND...
	local what=$1 words=$2
	shift 2
	"$@" >/dev/null 2>"$work/e"
	local rc=$?
	check "$what is refused, exit 2 ($rc: $(head -1 "$work/e"))" bash -c "[ $rc = 2 ] && grep -q -- '$words' '$work/e'"
}
refused "-o publish_keep=0" "invalid -o publish_keep=0: give a number of generations, 1" \
	"$KINDEXFS" "$store" "$mnt" -f -o rw,publish="$pub",publish_keep=0
refused "-o publish_interval=soon" "invalid -o publish_interval=soon: give seconds" \
	"$KINDEXFS" "$store" "$mnt" -f -o rw,publish="$pub",publish_interval=soon
refused "-o ro with -o publish" "cannot go with -o ro" "$KINDEXFS" "$store" "$mnt" -f -o ro,publish="$pub"
refused "-o publish_keep without publish" "go with -o publish=DIR" "$KINDEXFS" "$store" "$mnt" -f -o rw,publish_keep=2
refused "--publish-keep 0" "invalid --publish-keep .0.: give a number" "$KINDEX" --store "$store" watch --publish "$pub" --publish-keep 0 "$spool"
printf 'generation two\n' >"$pub2/PUBLISHED"
"$KINDEX" --store "$store" watch --once --publish "$pub2" "$spool" >/dev/null 2>"$work/e"
rc=$?
check "a damaged PUBLISHED is refused by name and line ($rc: $(head -1 "$work/e"))" \
	bash -c "[ $rc = 4 ] && grep -q 'PUBLISHED:1: .two. is not a number' '$work/e'"
finish
