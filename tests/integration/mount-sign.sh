#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Signatures and trust through a mounted store (SPEC §10, docs/signatures.md): runs signed by
# kindex-bench dropped into the inbox are submitted; `kindex trust add` while the store is mounted
# (its daemon applies the request) makes them measured on the mount at once, without a remount;
# `kindex trust revoke` makes them submitted again. ranking.tsv, SIGNATURES, summary.txt and
# index.tsv follow, and the group's SHA256SUMS verifies after each change (nothing stale is served).
. "$(dirname "$0")/mount-lib.sh"

: "${KINDEX_BENCH:?KINDEX_BENCH must name kindex-bench}"
store="$work/store"
mnt="$work/mnt"
"$KINDEX" -q --store "$store" init >/dev/null || die "kindex init failed"
"$KINDEX" -q keygen "$work/lab" || die "kindex keygen failed"
"$KINDEX_BENCH" --selftest -q --key "$work/lab.key" -o "$work/signed.json" || die "kindex-bench --key failed"
mount_fg "$store" "$mnt" -o rw,nopush

cp "$work/signed.json" "$mnt/inbox/" || die "cp signed.json into the inbox failed"
check "the signed runs are accepted, their signatures stored" \
	grep -q '^accepted signed.json .*(2 added, 0 already present; 2 signatures stored)$' "$mnt/inbox/.accepted/signed.json"
path=$(awk '$1 == "added" { print $3; exit }' "$mnt/inbox/.accepted/signed.json")
id=$(awk '$1 == "added" { print $2; exit }' "$mnt/inbox/.accepted/signed.json") # runs/<shortid>: a path that never moves
group=$mnt/$(dirname "$path")
run=$(basename "$path")
evidence() { awk -F'\t' 'NR > 1 { print $8 }' "$group/ranking.tsv" | sort -u | xargs; }
sums() { (cd "$group" && sha256sum -c --quiet SHA256SUMS 2>&1); }
check "before trust: submitted ($(evidence))" [ "$(evidence)" = submitted ]
check "summary.txt says why" grep -q "submitted (it claims kindex-bench's measured evidence" "$group/$run/summary.txt"
check "SIGNATURES: valid, not trusted" bash -c "sed -n 2p '$group/$run/SIGNATURES' | cut -f2,4,5 | grep -qx '	yes	no'"

"$KINDEX" --store "$store" trust add "$work/lab.pub" --name lab >"$work/out" 2>&1
check "kindex trust add on the mounted store: the daemon applies it ($(cat "$work/out"))" grep -q '^trusted sha256:.* lab$' "$work/out"
check "on the mount at once: measured ($(evidence))" [ "$(evidence)" = measured ]
check "SIGNATURES: lab, valid, trusted" bash -c "sed -n 2p '$group/$run/SIGNATURES' | cut -f2,4,5 | grep -qx 'lab	yes	yes'"
check "summary.txt: measured" grep -q "measured (signed by a key this store trusts" "$group/$run/summary.txt"
check "index.tsv: both runs measured" [ "$(grep -c $'\tmeasured\t' "$mnt/index.tsv")" = 2 ]
check "the group's SHA256SUMS verifies ($(sums))" [ -z "$(sums)" ]
check "STORE/trust is the owner's alone (mode 700)" [ "$(stat -c %a "$store/trust")" = 700 ]

# a request dropped by hand is held to kindex trust's rules: here a name with an escape sequence
python3 -c 'import base64, json, subprocess, sys
der = subprocess.run(["openssl", "pkey", "-pubin", "-in", sys.argv[1], "-outform", "DER"],
                     capture_output=True, check=True).stdout
json.dump({"trust": "add", "publicKey": base64.b64encode(der[-32:]).decode(), "name": "lab\x1b[2J"},
          open(sys.argv[2], "w"))' "$work/lab.pub" "$store/trust/tmp/by-hand.json" || die "writing the request failed"
mv "$store/trust/tmp/by-hand.json" "$store/trust/new/by-hand.json"
answer=$store/trust/rejected/by-hand.json.error
deadline=$((SECONDS + 20))
until [ -e "$answer" ] || [ $SECONDS -ge $deadline ]; do sleep 0.05; done
check "refused with rule name ($(head -c 300 "$answer" 2>/dev/null))" grep -q "name.*printable text" "$answer"
check "the key keeps its name, lab" bash -c "'$KINDEX' --store '$store' trust list 2>/dev/null | grep -q \$'\tlab\ttrusted\t'"

# a run stored unsigned, then signed by a later copy: the signature alone arrives, and the mount shows it
"$KINDEX_BENCH" --selftest -q -o "$work/plain.json" || die "kindex-bench failed"
cp "$work/plain.json" "$mnt/inbox/" || die "cp plain.json into the inbox failed"
path2=$(awk '$1 == "added" { print $3; exit }' "$mnt/inbox/.accepted/plain.json")
ev2() { awk -F'\t' -v d="$(basename "$path2")" '$2 == d { print $8 }' "$mnt/$(dirname "$path2")/ranking.tsv"; }
check "an unsigned run: submitted ($(ev2))" [ "$(ev2)" = submitted ]
id2=$(awk '$1 == "added" { print $2; exit }' "$mnt/inbox/.accepted/plain.json")
# read once, so that the kernel holds its bytes and size when the signature comes
check "its manifest.json has no signatures member" bash -c "! grep -q '\"signatures\"' '$mnt/$path2/manifest.json' '$mnt/$id2/manifest.json'"
size_before=$(stat -c %s "$mnt/$path2/manifest.json")
"$KINDEX" -q sign --key "$work/lab.key" -o "$work/plain-signed.json" "$work/plain.json" || die "kindex sign failed"
cp "$work/plain-signed.json" "$mnt/inbox/" || die "cp plain-signed.json into the inbox failed"
check "the signed copy: present, its signatures stored" \
	grep -q '(0 added, 2 already present; 2 signatures stored)$' "$mnt/inbox/.accepted/plain-signed.json"
check "the same run on the mount: measured now ($(ev2))" [ "$(ev2)" = measured ]
check "its SIGNATURES lists lab's" bash -c "sed -n 2p '$mnt/$path2/SIGNATURES' | cut -f2,4,5 | grep -qx 'lab	yes	yes'"
# manifest.json follows without a remount: its bytes, its size, and the sums that list it
manifest_sig() {
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1])).get("signatures", [])
sys.exit(not (len(s) == 1 and s[0]["algorithm"] == "ed25519"))' "$1"
}
for f in "$mnt/$path2/manifest.json" "$mnt/$id2/manifest.json"; do
	check "cat ${f#"$mnt"/} shows the signature" manifest_sig "$f"
	check "and stat's size is what cat returns ($(stat -c %s "$f"), was $size_before)" \
		[ "$(stat -c %s "$f")" = "$(cat "$f" | wc -c)" ]
done
check "sha256sum -c in the run directory passes" bash -c "cd '$mnt/$path2' && sha256sum -c --quiet SHA256SUMS"
check "and in runs/$(basename "$id2")" bash -c "cd '$mnt/$id2' && sha256sum -c --quiet SHA256SUMS"

"$KINDEX" --store "$store" trust revoke lab >"$work/out" 2>&1
check "kindex trust revoke on the mounted store ($(cat "$work/out"))" grep -q '^revoked sha256:.* lab$' "$work/out"
check "on the mount at once: submitted again ($(evidence))" [ "$(evidence)" = submitted ]
check "the run signed later too ($(ev2))" [ "$(ev2)" = submitted ]
check "SIGNATURES: no longer trusted, with the revocation's time" \
	bash -c "sed -n 2p '$mnt/$id/SIGNATURES' | cut -f2,4,5,6 | grep -Eqx 'lab	yes	no	20[0-9-]+T[0-9:.]+Z'"
check "the group's SHA256SUMS verifies ($(sums))" [ -z "$(sums)" ]
"$KINDEX" --store "$store" trust add "$work/lab.pub" --name lab >"$work/out" 2>&1
check "the revoked key is not trusted again, through the mount too" grep -q 'was revoked' "$work/out"
unmount "$mnt" "$daemon" || fail "the daemon did not exit cleanly"
"$KINDEX" --store "$store" verify >"$work/out" 2>&1
check "the store verifies clean after the mount" grep -q 'no problems' "$work/out"
finish
