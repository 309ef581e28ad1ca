#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Attestations (SPEC §8) through a read-write mount: a note dropped into the inbox, a reproduction
# through the daemon's spool, a bad one refused with its rule named. The mounted tree shows each at
# once and exactly — attestations/ appears in both places of the run (a name looked up before it
# existed included), each file's stat is its bytes, summary.txt grows its lines, sha256sum -c passes
# — and nothing else changes: the other runs' files and the group's ranking keep their bytes.
. "$(dirname "$0")/mount-lib.sh"
. "$(dirname "$0")/inbox-lib.sh"

store="$work/store"
mnt="$work/mnt"
in="$mnt/inbox"
spool="$work/spool"
make_liger_store "$store"
mkdir -p "$spool"
mount_fg "$store" "$mnt" -o rw,spool="$spool"

g=$(cd "$mnt" && ls -d benchmarks/tiled_geglu/backward.memory/nvidia-geforce-rtx-4090/*seq16384-bf16 | head -1)
subj=$(cd "$mnt/$g" && ls -d 03-*) first=$(cd "$mnt/$g" && ls -d 01-*)
sid=${subj##*-} fid=${first##*-}
[ -n "$sid" ] && [ -n "$fid" ] || die "no runs in $g"
cp "$mnt/$g/ranking.tsv" "$work/ranking.before"
cp "$mnt/$g/$first/summary.txt" "$work/other.before"
# names looked up before they exist: the kernel may keep the answer (a negative entry)
check "no attestations/ before any" bash -c "! stat '$mnt/runs/$sid/attestations' 2>/dev/null && ! stat '$mnt/$g/$subj/attestations' 2>/dev/null"
check "summary.txt says none yet" grep -q "none yet ('kindex attest'" "$mnt/runs/$sid/summary.txt"

# a note, written by kindex attest for the inbox (the store is the daemon's: -o)
"$KINDEX" --store "$store" attest "$sid" --note "seen it on our H100 too" --author ann \
	--at 2026-11-02T10:00:00Z -o "$work/note.json" 2>"$work/attest.err" || die "kindex attest -o: $(cat "$work/attest.err")"
cp "$work/note.json" "$in/" || die "cp note.json into the inbox failed"
r="$in/.accepted/note.json"
check "the receipt counts the attestation" grep -q "^accepted note.json at .*: 0 runs (0 added, 0 already present); 1 attestation (1 added)$" "$r"
check "and names it with its run's path" grep -q "^attestation added [0-9a-f]\{12\} of runs/$sid $g/$subj$" "$r"
name=$(ls "$mnt/runs/$sid/attestations" 2>/dev/null)
check "runs/$sid/attestations/ lists it ($name)" test "$(echo "$name" | grep -c '^01-note-[0-9a-f]\{12\}\.json$')" = 1
check "the rank directory too, though looked up before" test -f "$mnt/$g/$subj/attestations/$name"
check "both paths are one file" test "$(stat -c %i "$mnt/$g/$subj/attestations/$name")" = "$(stat -c %i "$mnt/runs/$sid/attestations/$name")"
check "its stat is its bytes" test "$(stat -c %s "$mnt/runs/$sid/attestations/$name")" = "$(wc -c <"$mnt/runs/$sid/attestations/$name")"
check "its bytes are the document" python3 -c '
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
sys.exit(a != b)' "$mnt/runs/$sid/attestations/$name" "$work/note.json"
s="$mnt/runs/$sid/summary.txt"
check "summary.txt shows the note" grep -q "^  01 note          2026-11-02T10:00:00Z by ann: seen it on our H100 too$" "$s"
check "summary.txt's stat is its bytes" test "$(stat -c %s "$s")" = "$(wc -c <"$s")"
check "the run directory counts attestations/ in its links" test "$(stat -c %h "$mnt/runs/$sid")" = 3
check "sha256sum -c passes in the run" bash -c "cd '$mnt/runs/$sid' && sha256sum -c --quiet SHA256SUMS"
check "and covers the attestation" grep -q "  attestations/$name$" "$mnt/runs/$sid/SHA256SUMS"
check "sha256sum -c passes in the group" bash -c "cd '$mnt/$g' && sha256sum -c --quiet SHA256SUMS"
check "the group's ranking keeps its bytes" cmp -s "$work/ranking.before" "$mnt/$g/ranking.tsv"
check "another run's summary.txt keeps its bytes" cmp -s "$work/other.before" "$mnt/$g/$first/summary.txt"

# a reproduction through the spool (tmp/, then new/), as a host without the mount drops one
"$KINDEX" --store "$store" attest "$sid" --reproduces "runs/$fid" --author bob --at 2026-11-03T10:00:00Z \
	-o "$spool/tmp/rep.json" 2>"$work/attest.err" || die "kindex attest -o: $(cat "$work/attest.err")"
mv "$spool/tmp/rep.json" "$spool/new/rep.json"
deadline=$((SECONDS + 20))
until [ -f "$spool/accepted/rep.json.receipt" ] || [ $SECONDS -ge $deadline ]; do sleep 0.05; done
check "the spool accepts the reproduction" grep -q "1 attestation (1 added)$" "$spool/accepted/rep.json.receipt"
# (the spool's receipt is written at its commit; the mount is told after it, docs/inbox.md)
second() { [ "$(ls "$mnt/runs/$sid/attestations" | sed -n 2p | cut -d- -f1-2)" = "02-reproduction" ]; }
deadline=$((SECONDS + 20))
until second || [ $SECONDS -ge $deadline ]; do sleep 0.05; done
check "attestations/ lists it second" second
check "summary.txt shows it" grep -q "^  02 reproduction  2026-11-03T10:00:00Z by bob: runs/$fid on nvidia-geforce-rtx-4090 (the same GPU), median " "$s"
check "summary.txt's stat is still its bytes" test "$(stat -c %s "$s")" = "$(wc -c <"$s")"

# refused: a note about no stored run; its bytes kept, the rule named, nothing shown
printf '{"apiVersion":"kindexfs.dev/v1alpha1","kind":"Attestation","spec":{"subject":"sha256:%s","type":"note","text":"x","author":"eve","createdAt":"2026-11-05T00:00:00Z"}}\n' \
	"$(printf '%064d' 7)" >"$work/bad.json"
cp "$work/bad.json" "$in/" 2>/dev/null && fail "close(2) of a refused file succeeded"
check "a note about no stored run is rejected" rejected "$mnt" bad.json "$work/bad.json"
check "with the rule named" grep -q "/spec/subject: subject: subject sha256:0*7 is no stored run" "$in/.rejected/bad.json.error"
check "and nothing new is listed" test "$(ls "$mnt/runs/$sid/attestations" | wc -l)" = 2

unmount "$mnt" "$daemon" || fail "the daemon did not exit cleanly"
check "the daemon wrote nothing to stderr" [ ! -s "$mnt.err" ]
"$KINDEX" --store "$store" verify --receipts "$spool/accepted" >"$work/verify" 2>&1
rc=$?
check "kindex verify is clean, receipts included ($(tail -1 "$work/verify"))" [ $rc = 0 ]
# a receipt naming an attestation the store does not hold: verify says so
mkdir -p "$work/forged"
sed 's/^attestation added [0-9a-f]\{12\}/attestation added 000000000000/' "$store/inbox/.accepted/note.json" >"$work/forged/note.json"
"$KINDEX" --store "$store" verify --receipts "$work/forged" >"$work/verify" 2>&1
rc=$?
check "kindex verify names an attestation a receipt promised and the store lacks" \
	bash -c "[ $rc = 1 ] && grep -q 'receipt-attestation: the receipt says attestation 000000000000 of runs/$sid was added' '$work/verify'"
finish
