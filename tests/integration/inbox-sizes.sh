#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Sizes a manifest may have only within its documents' stated limits (docs/manifest.md, rule
# length), through a read-write mount and its -o spool: a valid 71 KB manifest whose workload's
# name text passes 64 KiB is refused like any invalid file — cp fails at close with EINVAL, the
# bytes are kept in .rejected/ with an .error naming the JSON pointer and the rule — not failed
# with EIO and left in the inbox; dropped into the spool it is filed in rejected/, not retried.
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
	fail "cp of a manifest with a 70,000-byte workload parameter succeeded"
else
	check "cp of it fails at close with EINVAL ($(head -1 "$work/err"))" grep -q "Invalid argument" "$work/err"
fi
check "it is kept byte for byte as .rejected/long.json with its .error" rejected "$mnt" long.json "$work/long.json"
check ".error: one problem, the parameter's pointer and rule length" bash -c "
	e='$in/.rejected/long.json.error'
	head -1 \"\$e\" | grep -q ': 1 problem; nothing was added' &&
	grep -qE '^long\.json:[0-9]+:[0-9]+: /workload/spec/parameters/label: length: .*over the limit of 65536' \"\$e\""
check "nothing was added" [ "$(runs_count "$mnt")" = 0 ]

cp "$work/long2.json" "$sp/tmp/long2.json" && mv "$sp/tmp/long2.json" "$sp/new/long2.json"
deadline=$((SECONDS + 20))
until [ -e "$sp/rejected/long2.json.error" ]; do
	[ $SECONDS -lt $deadline ] || break
	sleep 0.05
done
check "-o spool: it is filed in rejected/ byte for byte" cmp -s "$sp/rejected/long2.json" "$work/long2.json"
check "… with the pointer and rule in its .error" \
	grep -qE '^long2\.json:[0-9]+:[0-9]+: /workload/spec/parameters/label: length: ' "$sp/rejected/long2.json.error"
check "… and new/ is empty" [ -z "$(ls -A "$sp/new")" ]

unmount "$mnt" "$daemon" || fail "the daemon did not exit cleanly"
check "the daemon wrote nothing to stderr" [ ! -s "$mnt.err" ]
finish
