#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A spool's artifacts/ (SPEC §9, docs/inbox.md) through `kindex watch --once`: bytes renamed into
# DIR/artifacts/ are stored by their SHA-256 before the manifests of DIR/new/ are read, and filed
# like a manifest — in accepted/ with a receipt naming the digest, or in rejected/ with an .error
# naming both digests when the name claims another. What a user checks: the receipts, where the
# files went, and `kindex cat runs/<id>/artifacts/<name>` against the bytes dropped — for bytes
# dropped beside their manifest, for bytes that come a round after it, and for what
# `kindex-bench --record --spool` writes.
source "$(dirname "$0")/cli-lib.sh"
cd "$tmp"
export KINDEX_STORE=$tmp/store
expect 0 "$KINDEX" -q init
sp=$tmp/spool

# drop SRC DIR NAME: what a producer does — write tmp/NAME, rename it into DIR/
drop() {
	cp "$1" "$sp/tmp/$3" && mv "$sp/tmp/$3" "$sp/$2/$3" || die "cannot drop $2/$3"
}
# announcing OUT TAG NAME FILE: the fixture's run, its own observation (TAG), announcing FILE's
# bytes as artifact NAME
announcing() {
	python3 - "$data/fixtures/flce-forward-a100.manifest.json" "$@" <<'PY' || die "cannot write $1"
import hashlib, json, os, sys
fixture, out, tag, name, path = sys.argv[1:]
doc = json.load(open(fixture))
spec = doc["run"]["spec"]
spec["sourceNative"]["externalId"] += "/" + tag
data = open(path, "rb").read()
spec["artifacts"] = [{"name": name, "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
                      "size": len(data), "mediaType": "application/octet-stream"}]
with open(out, "w") as f:
    json.dump(doc, f)
PY
}
hex() { sha256sum "$1" | cut -c1-64; }
# run_of RECEIPT: the id of the run an acceptance receipt added
run_of() { awk '$1 == "added" { sub("runs/", "", $2); print $2; exit }' "$1"; }
# served ID NAME FILE: the run serves artifacts/NAME, and its bytes are FILE's
served() {
	"$KINDEX" cat "runs/$1/artifacts/$2" >"$tmp/served" 2>"$tmp/served.err" ||
		{ echo "# kindex cat runs/$1/artifacts/$2: $(cat "$tmp/served.err")"; return 1; }
	cmp -s "$tmp/served" "$3" || { echo "# runs/$1/artifacts/$2 differs from $3"; return 1; }
}

expect 0 "$KINDEX" watch --once "$sp"
check "--once makes DIR/artifacts too" test -d "$sp/artifacts"

# ---- bytes and their manifest in one round: the bytes are decided first -----------------------
head -c 200000 /dev/urandom >a.bin
ha=$(hex a.bin)
announcing m1.json one trace.bin a.bin
drop a.bin artifacts "$ha-trace.bin"
drop m1.json new m1.json
expect 0 "$KINDEX" watch --once "$sp"
r=$sp/accepted/$ha-trace.bin.receipt
check "the bytes are moved to accepted/, byte for byte" cmp -s "$sp/accepted/$ha-trace.bin" a.bin
check "artifacts/ is empty" test -z "$(ls -A "$sp/artifacts")"
check "the receipt names the digest and the size" \
	grep -qE "^accepted $ha-trace\.bin at [0-9T:.-]+Z: artifact sha256:$ha \(200000 bytes\), stored$" "$r"
check "… and that no run announced them yet (they came first)" grep -q "^announced by no stored run yet" "$r"
check "the manifest is accepted after them" test -f "$sp/accepted/m1.json.receipt"
check "stdout: one line for the bytes, then one for the manifest" \
	test "$(cut -d: -f1 out | tr '\n' ' ')" = "accepted $ha-trace.bin accepted m1.json "
check "stdout names the digest" contains out "accepted $ha-trace.bin: artifact sha256:$ha, 200000 bytes, stored"
check "stderr counts the artifact" contains err "1 accepted, 0 rejected; 1 artifact accepted"
id1=$(run_of "$sp/accepted/m1.json.receipt")
check "kindex cat runs/$id1/artifacts/trace.bin is the bytes dropped" served "$id1" trace.bin a.bin

# ---- the manifest first, its bytes a round later --------------------------------------------------
head -c 70000 /dev/urandom >b.bin
hb=$(hex b.bin)
announcing m2.json two late.bin b.bin
drop m2.json new m2.json
expect 0 "$KINDEX" watch --once "$sp"
id2=$(run_of "$sp/accepted/m2.json.receipt")
expect 0 "$KINDEX" cat "runs/$id2/summary.txt"
check "its summary: late.bin announced, not received" grep -qE '^  late\.bin .* announced, not received$' out
drop b.bin artifacts "$hb-late.bin"
expect 0 "$KINDEX" watch --once "$sp"
check "the late bytes are accepted" test -f "$sp/accepted/$hb-late.bin"
check "… their receipt says the stored run announces them" \
	grep -qx "announced by 1 stored run" "$sp/accepted/$hb-late.bin.receipt"
check "kindex cat runs/$id2/artifacts/late.bin is the bytes dropped" served "$id2" late.bin b.bin

# ---- the same bytes again, under the name taken: stored once, filed under NAME.1 -----------------
drop a.bin artifacts "$ha-trace.bin"
expect 0 "$KINDEX" watch --once "$sp"
check "the second copy is accepted/$ha-trace.bin.1" cmp -s "$sp/accepted/$ha-trace.bin.1" a.bin
check "… its receipt: already stored, announced by 1 stored run" bash -c \
	"grep -q 'artifact sha256:$ha (200000 bytes), already stored\$' '$sp/accepted/$ha-trace.bin.1.receipt' &&
	 grep -qx 'announced by 1 stored run' '$sp/accepted/$ha-trace.bin.1.receipt'"

# ---- refusals: bytes named for another digest, a directory; a hidden name is left alone ---------
printf 'not what the name says\n' >c.bin
wrong=$(printf 'something else' | sha256sum | cut -c1-64)
drop c.bin artifacts "$wrong-x"
mkdir "$sp/artifacts/dir"
printf 'in progress' >"$sp/artifacts/.partial"
expect 1 "$KINDEX" watch --once "$sp"
e=$sp/rejected/$wrong-x.error
check "wrong bytes: moved to rejected/, byte for byte" cmp -s "$sp/rejected/$wrong-x" c.bin
check "… the .error's first line" grep -qE "^rejected $wrong-x at [0-9T:.-]+Z: 1 problem; nothing was added$" "$e"
check "… names both digests, by rule digest" \
	grep -q ": digest: named for sha256:$wrong, but its bytes hash to sha256:$(hex c.bin)" "$e"
check "a directory: rejected by rule type" grep -q ": type: not a regular file" "$sp/rejected/dir.error"
check "… and moved" test -d "$sp/rejected/dir"
check "the hidden name is left in artifacts/, untouched" test "$(ls -A "$sp/artifacts")" = .partial
check "stderr: '0 accepted, 2 rejected'" contains err "0 accepted, 2 rejected"
rm "$sp/artifacts/.partial"

# ---- kindex-bench --record --spool as the producer -------------------------------------------------
seq 25000000 1000 25009000 >samples.txt
expect 0 "$KINDEX_BENCH" --record fused_linear_cross_entropy --impl pytorch --environment cpu \
	--samples samples.txt --spool "$sp"
st=$(ls "$sp/artifacts")
[[ $st == *-samples.tsv ]] || die "kindex-bench left in artifacts/: $(ls -A "$sp/artifacts")"
cp "$sp/artifacts/$st" samples.tsv
expect 0 "$KINDEX" watch --once "$sp"
check "kindex-bench's samples.tsv is accepted" cmp -s "$sp/accepted/$st" samples.tsv
check "… with a receipt naming its digest" grep -q "artifact sha256:${st%%-*} " "$sp/accepted/$st.receipt"
m=$(sed -n 's/^accepted \(.*\): 1 added, .*/\1/p' out)
id3=$(run_of "$sp/accepted/$m.receipt")
check "its run ($m) serves samples.tsv, equal to the spool's file" served "$id3" samples.tsv samples.tsv
check "nothing left in new/ or artifacts/" test -z "$(ls -A "$sp/new")$(ls -A "$sp/artifacts")"

# ---- --max-artifact -------------------------------------------------------------------------------
head -c 2048 /dev/urandom >big.bin
drop big.bin artifacts big.bin
expect 1 "$KINDEX" watch --once --max-artifact 1K "$sp"
check "past --max-artifact: rejected by rule size" grep -q ": size: over the limit of 1024 bytes" "$sp/rejected/big.bin.error"

expect 0 "$KINDEX" verify
check "kindex verify is clean afterwards" contains out "no problems"
finish
