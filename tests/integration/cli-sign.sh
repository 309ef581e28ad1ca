#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Evidence that cannot be claimed (SPEC §10). `kindex keygen` makes a pair the openssl command
# line reads and checks signatures with, named by an id anyone can recompute, never overwritten.
# A manifest that claims kindex-bench's protocol and a correctness check is *submitted* unless a
# key the store trusts signed it; signed and trusted it is *measured*; revoked, submitted again.
# Bad signatures are refused with rule `signature`; bad key files with a message naming them.
source "$(dirname "$0")/cli-lib.sh"
cd "$tmp"
bench=${KINDEX_BENCH:?KINDEX_BENCH must name kindex-bench}

# ---- keys ----
mkdir keys
expect 0 "$KINDEX" keygen keys/lab-a
check "keygen makes keys/lab-a.key with mode 0600 and keys/lab-a.pub" \
	bash -c '[ "$(stat -c %a keys/lab-a.key)" = 600 ] && [ -s keys/lab-a.pub ]'
id=$(awk '/^key id / { print $3 }' out)
# the id, recomputed by openssl: sha256 of the key's 32 raw bytes (the DER SubjectPublicKeyInfo ends with them)
want=sha256:$(openssl pkey -pubin -in keys/lab-a.pub -outform DER | tail -c 32 | sha256sum | cut -d' ' -f1)
check "the key id is sha256: of the public key's raw bytes, as openssl derives them ($id)" [ "$id" = "$want" ]
check "openssl reads the private key as an ED25519 key" \
	bash -c 'openssl pkey -in keys/lab-a.key -noout -text 2>/dev/null | grep -q "ED25519 Private-Key"'
printf %s "sha256:272e401936bf0000000000000000000000000000000000000000000000000000" >msg
openssl pkeyutl -sign -inkey keys/lab-a.key -rawin -in msg -out sig 2>/dev/null
check "a signature made with the private key verifies with the public key (openssl pkeyutl)" \
	bash -c 'openssl pkeyutl -verify -pubin -inkey keys/lab-a.pub -rawin -in msg -sigfile sig >/dev/null'

cp keys/lab-a.key before.key
expect 1 "$KINDEX" keygen keys/lab-a
check "a second keygen of the same name is refused, naming the file" contains err "keys/lab-a.key: File exists"
check "and the key is left as it was" cmp -s keys/lab-a.key before.key
expect 2 "$KINDEX" keygen
check "keygen without a NAME: usage" contains err "give one NAME"
expect 4 "$KINDEX" keygen no/such/dir/k
check "keygen into a missing directory says which file" contains err "cannot create no/such/dir/k.key"
check "and leaves nothing" bash -c '! ls no 2>/dev/null'

# ---- runs signed by kindex-bench; a forged claim ----
"$bench" --selftest -q --key keys/lab-a.key -o signed.json || die "kindex-bench --selftest --key failed"
"$bench" --selftest -q -o forged.json || die "kindex-bench --selftest failed"
check "kindex-bench --key: each of its two manifests carries one ed25519 signature by keys/lab-a" \
	python3 -c 'import json, sys
ms = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(not (len(ms) == 2 and all(len(m["signatures"]) == 1 and m["signatures"][0]["keyId"] == sys.argv[2]
                                   and m["signatures"][0]["algorithm"] == "ed25519" for m in ms)))' signed.json "$id"
check "without --key: no signatures, yet each claims kindex-bench's harness and a passed correctness check" \
	python3 -c 'import json, sys
ms = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(not (len(ms) == 2 and not any("signatures" in m for m in ms) and
              all(m["protocol"]["spec"]["harness"]["name"] == "kindex-bench" and
                  m["run"]["spec"]["correctness"]["status"] == "passed" for m in ms)))' forged.json

# an independent check of one signature: the run digest by kxjcs.py, the public key and the value
# from the manifest (the first of a JSON Lines file, or a whole pretty manifest.json), openssl
# pkeyutl. apart.py FILE TAG writes msgTAG, sigTAG and pubTAG.pem.
cat >apart.py <<'PY'
import base64, json, os, sys
sys.path.insert(0, os.path.join(os.environ["KX_SOURCE_ROOT"], "tests", "integration"))
import kxjcs
m, _ = json.JSONDecoder().raw_decode(open(sys.argv[1]).read())
s = m["signatures"][0]
t = sys.argv[2]
open("msg" + t, "w").write(kxjcs.digest(m["run"]))
open("sig" + t, "wb").write(base64.b64decode(s["value"]))
der = bytes.fromhex("302a300506032b6570032100") + base64.b64decode(s["publicKey"])
open("pub" + t + ".pem", "w").write("-----BEGIN PUBLIC KEY-----\n" + base64.b64encode(der).decode() + "\n-----END PUBLIC KEY-----\n")
PY
# verify_apart FILE TAG WHAT: both checks on the first signature of FILE
verify_apart() {
	python3 apart.py "$1" "$2" || die "cannot take the signature of $1 apart"
	check "openssl verifies $3 over the run digest with the manifest's public key" \
		openssl pkeyutl -verify -pubin -inkey "pub$2.pem" -rawin -in "msg$2" -sigfile "sig$2" -out /dev/null
	check "and that public key is keys/lab-a.pub" \
		cmp -s <(openssl pkey -pubin -in "pub$2.pem" -outform DER) <(openssl pkey -pubin -in keys/lab-a.pub -outform DER)
}
verify_apart signed.json 1 "kindex-bench's signature"

# ---- a store that trusts the key, and one that does not ----
for st in trusting plain fresh; do expect 0 "$KINDEX" --store "$st" init; done
expect 0 "$KINDEX" --store trusting ingest signed.json forged.json
check "ingest stores the two signatures with their runs" contains err "2 signatures stored"
expect 0 "$KINDEX" --store plain ingest signed.json
# the one group of the selftest's runs
grp=benchmarks/cross_entropy/forward
for _ in 1 2; do grp=$grp/$("$KINDEX" --store trusting ls "$grp" | grep '/$' | head -1 | tr -d /); done
# how many runs of the group show each evidence: "measured=2 submitted=2"
runs_ev() {
	"$KINDEX" --store "$1" cat "$grp/ranking.tsv" |
		awk -F'\t' 'NR > 1 { n[$8]++ } END { for (e in n) print e "=" n[e] }' | sort | xargs
}
check "before any key is trusted, signed or not, every run is submitted ($(runs_ev trusting))" \
	[ "$(runs_ev trusting)" = "submitted=4" ]
expect 0 "$KINDEX" --store trusting trust add keys/lab-a.pub --name lab-a
check "trust add prints the key id" contains out "trusted $id"
check "trusting keys/lab-a: its two runs are measured, the two forged ones stay submitted ($(runs_ev trusting))" \
	[ "$(runs_ev trusting)" = "measured=2 submitted=2" ]
check "a store that does not trust the key shows the same signed runs as submitted ($(runs_ev plain))" \
	[ "$(runs_ev plain)" = "submitted=2" ]
signed_dir=$("$KINDEX" --store trusting cat "$grp/ranking.tsv" | awk -F'\t' '$8 == "measured" { print $2; exit }')
expect 0 "$KINDEX" --store trusting cat "$grp/$signed_dir/SIGNATURES"
check "SIGNATURES: the key, its name, valid and trusted" \
	bash -c "sed -n 2p out | grep -q '^$id	lab-a	ed25519	yes	yes	\$'"
expect 0 "$KINDEX" --store trusting cat "$grp/$signed_dir/summary.txt"
check "summary.txt: measured, signed by a key the store trusts" contains out "measured (signed by a key this store trusts"
check "summary.txt names who signed it" contains out "  signatures       lab-a: valid, trusted"
expect 0 "$KINDEX" --store trusting trust list
check "trust list: lab-a, trusted" bash -c "grep -q '^$id	lab-a	trusted	' out"
expect 0 "$KINDEX" --store trusting trust revoke lab-a
check "after trust revoke every run is submitted again ($(runs_ev trusting))" [ "$(runs_ev trusting)" = "submitted=4" ]
expect 0 "$KINDEX" --store trusting cat "$grp/$signed_dir/summary.txt"
check "summary.txt: submitted, its claim not backed by a trusted key" contains out "submitted (it claims kindex-bench's measured"
check "summary.txt: the signature's key is revoked" contains out "  signatures       lab-a: valid, revoked"
expect 0 "$KINDEX" --store trusting cat "$grp/$signed_dir/SIGNATURES"
check "SIGNATURES: valid, no longer trusted, with the time of the revocation" \
	bash -c "sed -n 2p out | grep -Eq '^$id	lab-a	ed25519	yes	no	20[0-9-]+T[0-9:.]+Z\$'"
expect 1 "$KINDEX" --store trusting trust add keys/lab-a.pub --name again
check "a revoked key is not trusted again" contains err "was revoked"
expect 0 "$KINDEX" --store trusting verify
check "the store verifies clean, every signature checked again" contains out "no problems"

# ---- export, then ingest again: manifest.json carries the signatures (SPEC §10) ----
expect 0 "$KINDEX" --store plain export exported
rid=$(cut -c8-19 msg1) # runs/<short id> of signed.json's first run
check "the exported manifest.json carries the stored signature: keys/lab-a's, ed25519" \
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["signatures"]
sys.exit(not (len(s) == 1 and s[0]["keyId"] == sys.argv[2] and s[0]["algorithm"] == "ed25519"))' \
	"exported/runs/$rid/manifest.json" "$id"
check "sha256sum -c passes in the exported run directory" \
	bash -c "cd exported/runs/$rid && sha256sum -c --quiet SHA256SUMS"
check "and in its group directory" bash -c "cd exported/$grp && sha256sum -c --quiet SHA256SUMS"
verify_apart "exported/runs/$rid/manifest.json" 2 "the signature taken from the exported manifest.json"
expect 0 "$KINDEX" --store again init
expect 0 "$KINDEX" --store again ingest exported/runs/*/manifest.json
check "ingesting the export into a fresh store stores the signatures again" \
	contains err "(2 runs added, 0 already present; 2 signatures stored)"
"$KINDEX" --store plain ls runs | tr -d / >ids
check "both runs are there" [ "$(wc -l <ids)" = 2 ]
while read -r r; do
	check "runs/$r/SIGNATURES on the new store equal the old one's" \
		cmp -s <("$KINDEX" --store plain cat "runs/$r/SIGNATURES") <("$KINDEX" --store again cat "runs/$r/SIGNATURES")
	check "and so does runs/$r/manifest.json, byte for byte" \
		cmp -s <("$KINDEX" --store plain cat "runs/$r/manifest.json") <("$KINDEX" --store again cat "runs/$r/manifest.json")
done <ids
"$KINDEX" --store trusting cat "$grp/ranking.tsv" | awk -F'\t' 'NR > 1 { print $2 }' | while read -r d; do
	"$KINDEX" --store trusting cat "$grp/$d/manifest.json" | grep -c '"signatures"'; done | sort | uniq -c | xargs >counts
check "an unsigned run's manifest.json has no signatures member ($(cat counts))" [ "$(cat counts)" = "2 0 2 1" ]

# a stored signature damaged on disk: verify says so, SIGNATURES shows it invalid
cp -r trusting damaged
expect 0 "$KX_CORRUPT" damaged signature
expect 1 "$KINDEX" --store damaged verify
check "verify finds the damaged signature: rule signature, does not verify" contains err "signature does not verify"
"$KINDEX" --store damaged cat "$grp/ranking.tsv" | awk -F'\t' 'NR > 1 { print $2 }' | while read -r d; do
	"$KINDEX" --store damaged cat "$grp/$d/SIGNATURES" | sed 1d; done >all-sigs
check "and SIGNATURES of the run it belongs to says valid no" grep -q '	ed25519	no	no	' all-sigs

# ---- refused: a flipped bit, another run's digest, keys that cannot sign ----
cat >bad.py <<'PY'
import base64, json, sys
ms = [json.loads(l) for l in open(sys.argv[1])]
m = json.loads(json.dumps(ms[0]))
v = bytearray(base64.b64decode(m["signatures"][0]["value"]))
v[5] ^= 0x10
m["signatures"][0]["value"] = base64.b64encode(bytes(v)).decode()
json.dump(m, open("flipped.json", "w"))
m = json.loads(json.dumps(ms[0]))
m["signatures"] = ms[1]["signatures"]  # the other run's signature
json.dump(m, open("other.json", "w"))
PY
python3 bad.py signed.json || die "cannot make the bad manifests"
expect 1 "$KINDEX" --store fresh ingest flipped.json
check "a signature with one flipped bit is refused: rule signature at /signatures/0/value" \
	contains err "/signatures/0/value: signature"
expect 1 "$KINDEX" --store fresh ingest other.json
check "a signature of another run's digest is refused the same way" contains err "does not verify"
expect 0 "$KINDEX" --store fresh ls runs
check "nothing of either is stored" test ! -s out
chmod 644 keys/lab-a.key
expect 2 "$bench" --selftest -q --key keys/lab-a.key -o x.json
check "kindex-bench --key with a private key others may read: refused, naming the fix" contains err "chmod 600"
chmod 600 keys/lab-a.key
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out keys/ec.key 2>/dev/null
chmod 600 keys/ec.key
expect 2 "$bench" --selftest -q --key keys/ec.key -o x.json
check "kindex-bench --key with an EC key: refused, not Ed25519" contains err "not Ed25519"
expect 1 "$KINDEX" --store fresh trust add keys/lab-a.key --name x
check "trust add of a private key file: refused, not a public key" contains err "not a PEM public key"
finish
