#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Sizes a manifest may have only within its documents' stated limits (docs/manifest.md, rule
# length), through a read-write mount and its -o spool: a valid 71 KB manifest whose workload's
# name text passes 64 KiB is refused like any invalid file — cp fails at close with EINVAL, the
# bytes are kept in .rejected/ with an .error naming the JSON pointer and the rule — not failed
# with EIO and left in the inbox; dropped into the spool it is filed in rejected/, not retried.
# And a stored document of 4 MB costs later decisions that name it no read of it.
. "$(dirname "$0")/mount-lib.sh"
. "$(dirname "$0")/inbox-lib.sh"

store="$work/store"
mnt="$work/mnt"
in="$mnt/inbox"
sp="$work/spool"
"$KINDEX" -q --store "$store" init >/dev/null || die "kindex init failed"
gen 2 "$work/m"
long="$KX_SOURCE_ROOT/tests/integration/long-workload.py"
python3 "$long" "$work/m/m-0000000.json" "$work/long.json" || die "long-workload.py failed"
python3 "$long" "$work/m/m-0000001.json" "$work/long2.json" || die "long-workload.py failed"
mount_fg "$store" "$mnt" -o rw,spool="$sp"

if cp "$work/long.json" "$in/" 2>"$work/err"; then
	fail "cp of a manifest with a 70,000-byte workload dtype succeeded"
else
	check "cp of it fails at close with EINVAL ($(head -1 "$work/err"))" grep -q "Invalid argument" "$work/err"
fi
check "it is kept byte for byte as .rejected/long.json with its .error" rejected "$mnt" long.json "$work/long.json"
check ".error: one problem, the dtype's pointer and rule length" bash -c "
	e='$in/.rejected/long.json.error'
	head -1 \"\$e\" | grep -q ': 1 problem; nothing was added' &&
	grep -qE '^long\.json:[0-9]+:[0-9]+: /workload/spec/dtype: length: .*over the limit of 65536' \"\$e\""
check "nothing was added" [ "$(runs_count "$mnt")" = 0 ]

cp "$work/long2.json" "$sp/tmp/long2.json" && mv "$sp/tmp/long2.json" "$sp/new/long2.json"
deadline=$((SECONDS + 20))
until [ -e "$sp/rejected/long2.json.error" ]; do
	[ $SECONDS -lt $deadline ] || break
	sleep 0.05
done
check "-o spool: it is filed in rejected/ byte for byte" cmp -s "$sp/rejected/long2.json" "$work/long2.json"
check "… with the pointer and rule in its .error" \
	grep -qE '^long2\.json:[0-9]+:[0-9]+: /workload/spec/dtype: length: ' "$sp/rejected/long2.json.error"
check "… and new/ is empty" [ -z "$(ls -A "$sp/new")" ]

unmount "$mnt" "$daemon" || fail "the daemon did not exit cleanly"
check "the daemon wrote nothing to stderr" [ ! -s "$mnt.err" ]

# A 4 MB workload document, stored, and 10 runs that name it by digest only, dropped one by one:
# what each decision costs the notifier must not depend on the size of a document it only links
# (the document's file gains two links a run). `kindexfs -d` logs the documents read in each
# round; nobody else reads the tree meanwhile, so those are the round's own.
gen 12 "$work/g" --seed 3 --prefix g
python3 "$KX_SOURCE_ROOT/tests/integration/big-document.py" "$work/g/g-0000000.json" "$work/big.json" \
	"$work/byref" "$work"/g/g-00000{01..10}.json || die "big-document.py failed"
check "the big manifest is 4 MB or more ($(stat -c %s "$work/big.json") bytes)" [ "$(stat -c %s "$work/big.json")" -ge 4000000 ]
"$KINDEX" -q --store "$store" ingest "$work/big.json" >/dev/null || die "kindex ingest of the big manifest failed"
mount_fg "$store" "$mnt" -o rw -d
for f in "$work"/byref/*.json; do
	cp "$f" "$in/" || fail "cp $(basename "$f") into the inbox failed"
done
check "the 10 runs naming it by digest are accepted" [ "$(ls "$in/.accepted" | grep -c '^g-')" = 10 ]
unmount "$mnt" "$daemon" || fail "the daemon (-d) did not exit cleanly"
rounds=$(grep -c 'kindexfs: generation [0-9]* -> [0-9]*:.*documents read' "$mnt.err")
reads=$(sed -n 's/^kindexfs: generation [0-9]* -> [0-9]*:.*; \([0-9]*\) documents read$/\1/p' "$mnt.err" | awk '{ n += $1 } END { print n + 0 }')
check "the notifier ran a round for each ($rounds rounds)" [ "$rounds" -ge 10 ]
# the count covers what a concurrent operation read during a round too (a receipt, a push): the
# rounds' own reads are none, and before they were ten a round or more
check "and its rounds read no document, bar a stray concurrent read ($reads read)" [ "$reads" -lt "$rounds" ]
finish
