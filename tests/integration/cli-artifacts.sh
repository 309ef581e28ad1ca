#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Artifacts (SPEC §9) through the CLI: a directory holding a manifest and artifacts/ is ingested
# by `kindex ingest`; the bytes are stored once by their SHA-256 and served as the run's
# artifacts/<name> and digests/sha256/<hex> — one file, linked — with exact sizes, covered by the
# run's SHA256SUMS without being read; an announced artifact whose bytes never came is listed as
# announced, not received, never as a file. Bytes named for another digest, a size that disagrees
# with stored bytes, and announcements that break a rule are refused by rule, naming what is wrong.
source "$(dirname "$0")/cli-lib.sh"
cd "$tmp"
export KINDEX_STORE=$tmp/store
expect 0 "$KINDEX" -q init

mkdir -p drop/artifacts
# 300,001 bytes: two whole 128 KiB chunks and a part of a third
head -c 300001 /dev/urandom >samples.bin
printf '__global__ void k() {}\n' >kernel.cu
hs=$(sha256sum samples.bin | cut -c1-64) hk=$(sha256sum kernel.cu | cut -c1-64)
cp samples.bin "drop/artifacts/$hs-samples.tsv" # kindex-bench's name: <hex>-<name>
manifest() { # FILE ARTIFACTS-JSON: the fixture's run with spec.artifacts set
	python3 - "$data/fixtures/flce-forward-a100.manifest.json" "$1" "$2" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["run"]["spec"]["artifacts"] = json.loads(sys.argv[3])
# each manifest its own observation (sourceNative's externalId names one)
m["run"]["spec"]["sourceNative"]["externalId"] += "-" + str(abs(hash(sys.argv[3])))
json.dump(m, open(sys.argv[2], "w"))
PY
}
manifest drop/m.json "[{\"name\": \"samples.tsv\", \"digest\": \"sha256:$hs\", \"size\": 300001, \"mediaType\": \"text/tab-separated-values\"},
 {\"name\": \"kernel.cu\", \"digest\": \"sha256:$hk\", \"size\": $(stat -c %s kernel.cu), \"mediaType\": \"text/x-cuda\"}]"
expect 0 "$KINDEX" ingest drop
check "ingest counts the artifact" contains err "1 artifact: 1 stored, 0 already present, 0 refused"
id=$("$KINDEX" ls runs | head -1) id=${id%/}
[[ -n $id ]] || die "no run stored"

expect 0 "$KINDEX" ls "runs/$id/artifacts"
check "artifacts/ lists the received one only" test "$(cat out)" = samples.tsv
"$KINDEX" cat "runs/$id/artifacts/samples.tsv" >got.bin || die "kindex cat of an artifact failed"
check "kindex cat streams the bytes" cmp -s got.bin samples.bin
expect 0 "$KINDEX" cat "runs/$id/summary.txt"
check "summary: received" contains out "received: artifacts/samples.tsv"
check "summary: announced, not received" grep -qE '^  kernel\.cu +[0-9]+ bytes +text/x-cuda +announced, not received$' out
expect 0 "$KINDEX" cat "runs/$id/index.html"
check "the page links the received one" contains out '<a href="artifacts/samples.tsv">samples.tsv</a>'
check "the page says which is missing" contains out "announced, not received"

expect 0 "$KINDEX" export tree
r=(tree/runs/"$id")
rank=$(find tree/benchmarks -type d -name "*-$id")
[[ -n $rank ]] || die "no rank directory for $id"
check "the export holds the bytes" cmp -s "$r/artifacts/samples.tsv" samples.bin
check "exact size" test "$(stat -c %s "$r/artifacts/samples.tsv")" = 300001
check "no file for bytes never received" test ! -e "$r/artifacts/kernel.cu"
check "digests/sha256/<hex> is the same file" test "$(stat -c %i "tree/digests/sha256/$hs")" = "$(stat -c %i "$r/artifacts/samples.tsv")"
check "linked from both places of the run and digests/" test "$(stat -c %h "$rank/artifacts/samples.tsv")" = 3
check "the run's SHA256SUMS covers it" contains "$r/SHA256SUMS" "$hs  artifacts/samples.tsv"
(cd "$r" && sha256sum --quiet -c SHA256SUMS) >/dev/null 2>&1 || { echo "FAIL: sha256sum -c in $r" >&2; fails=$((fails + 1)); }
(cd "$rank/.." && sha256sum --quiet -c SHA256SUMS) >/dev/null 2>&1 || { echo "FAIL: sha256sum -c of the group" >&2; fails=$((fails + 1)); }

# the missing bytes arrive later, by --artifact: the run now serves both
expect 0 "$KINDEX" ingest --artifact kernel.cu
expect 0 "$KINDEX" ls "runs/$id/artifacts"
check "a late artifact joins its run" test "$(tr '\n' ' ' <out)" = "samples.tsv kernel.cu "
# the same bytes again: stored once
expect 0 "$KINDEX" ingest --artifact samples.bin
check "the same bytes twice are stored once" contains err "0 stored, 1 already present"

# refusals, by rule
printf 'not the bytes' >"drop/artifacts/$hk-kernel.cu"
rm -f "drop/artifacts/$hs-samples.tsv" drop/m.json
expect 1 "$KINDEX" ingest drop
check "bytes named for another digest: both named" contains err "named for sha256:$hk, but its bytes hash to sha256:$(printf 'not the bytes' | sha256sum | cut -c1-64)"
check "... by rule digest" contains err ": digest: "
rm -rf drop/artifacts
manifest drop/m.json "[{\"name\": \"samples.tsv\", \"digest\": \"sha256:$hs\", \"size\": 5, \"mediaType\": \"text/plain\"}]"
expect 1 "$KINDEX" ingest drop/m.json
check "a size that disagrees with stored bytes" contains err "announced as 5 bytes, but the stored bytes of sha256:$hs are 300001"
manifest drop/m.json "[{\"name\": \"../x\", \"digest\": \"sha256:$hs\", \"size\": 1, \"mediaType\": \"text\", \"extra\": 1},
 {\"name\": \"a\", \"digest\": \"sha256:XYZ\", \"size\": 1.5, \"mediaType\": \"text/plain\"},
 {\"name\": \"a\", \"digest\": \"sha256:$hs\", \"size\": 300001, \"mediaType\": \"text/plain\"}]"
expect 1 "$KINDEX" ingest drop/m.json
for rule in "/run/spec/artifacts/0/name: name:" "/run/spec/artifacts/0/mediaType: media-type:" \
	"/run/spec/artifacts/0/extra: unknown-member:" "/run/spec/artifacts/1/digest: digest-format:" \
	"/run/spec/artifacts/1/size: size:" "/run/spec/artifacts/2/name: duplicate:"; do
	check "refused: $rule" contains err "$rule"
done
expect 0 "$KINDEX" ls runs
check "nothing of a refused file is stored" test "$(wc -l <out)" = 1
expect 1 "$KINDEX" ingest --max-artifact 1K --artifact samples.bin
check "over --max-artifact: refused by rule size" contains err "size: over the limit of 1024 bytes for an artifact"

# kindex-bench's samples.tsv: kindex samples prints it, and the run's median, p20 and p80 are its
# quantiles (linear interpolation at q(n-1), rounded half away from zero to the ns, as
# docs/harness.md says), recomputed here without any of our code; 300 samples, so the median
# falls between two
python3 -c 'import random; random.seed(7); print("\n".join(str(random.randint(20000000, 26000000)) for _ in range(300)))' >lat.txt
mkdir bench
"$KINDEX_BENCH" --record fused_linear_cross_entropy --impl pytorch --environment cpu --samples lat.txt \
	-o bench/m.json 2>bench.err || die "kindex-bench --record: $(cat bench.err)"
expect 0 "$KINDEX" ingest bench
check "kindex-bench's directory: its samples stored" contains err "1 artifact: 1 stored"
bid=$("$KINDEX" ls runs | grep -v "^$id/" | head -1) bid=${bid%/}
"$KINDEX" samples "$bid" >samples.out || die "kindex samples $bid failed"
check "kindex samples prints the samples as measured" cmp -s samples.out <(grep -v '^$' lat.txt)
python3 - bench/m.json samples.out <<'PY' || { echo "FAIL: the run's figures are not its samples' quantiles" >&2; fails=$((fails + 1)); }
import json, sys
m = json.load(open(sys.argv[1]))
xs = sorted(int(l) for l in open(sys.argv[2]) if l.strip())
def q(p):
    h = (len(xs) - 1) * p
    lo = int(h)
    return xs[lo] + (h - lo) * (xs[min(lo + 1, len(xs) - 1)] - xs[lo])
lat = m["run"]["spec"]["timing"]["latencyNs"]
import math
want = {k: math.floor(q(p) + 0.5) for k, p in (("median", 0.5), ("p20", 0.2), ("p80", 0.8))}
bad = [k for k in want if lat[k] != want[k]]
print("ok - median %s p20 %s p80 %s recomputed from %d samples" % (lat["median"], lat["p20"], lat["p80"], len(xs)))
sys.exit(1 if bad else 0)
PY
expect 1 "$KINDEX" samples "$id" --name profile.ncu-rep
check "an artifact the run does not announce: said so" contains err "announces no artifact 'profile.ncu-rep'"

# kindex gc: bytes no run announces go once the grace period is over; announced ones never
head -c 20971520 /dev/urandom >orphan.bin # past a memtable: in blob files of its own
ho=$(sha256sum orphan.bin | cut -c1-64)
expect 0 "$KINDEX" ingest --artifact orphan.bin
check "an orphan is reported" contains err "1 announced by no stored run"
size1=$(du -sb "$KINDEX_STORE" | cut -f1)
cp orphan.bin orphan-again.bin
expect 0 "$KINDEX" ingest --artifact orphan-again.bin --artifact orphan.bin
size2=$(du -sb "$KINDEX_STORE" | cut -f1)
check "the same bytes twice in one command: one orphan" contains err "2 artifacts: 0 stored, 2 already present, 0 refused; 1 announced by no stored run"
check "the same 20 MiB again takes no disk: $size1 then $size2 bytes" test $((size2 - size1)) -lt 1048576
expect 0 "$KINDEX" gc --dry-run
check "within the grace period: kept" contains err "would remove 0 artifacts"
expect 0 "$KINDEX" gc --dry-run --grace 0
check "--dry-run names what would go" contains out "would remove artifact sha256:$ho: 20971520 bytes received"
check "and only that" test "$(wc -l <out)" = 1
expect 0 "$KINDEX" ls digests/sha256
check "--dry-run removed nothing" contains out "$ho"
expect 0 "$KINDEX" gc --grace 0
check "gc removes it" contains out "removed artifact sha256:$ho"
freed=$(sed -n "s/^gc: the store's files took \([0-9]*\) bytes, now \([0-9]*\)$/\1 - \2/p" err)
check "and gives the disk back: ${freed:-?} bytes freed" test "$((${freed:-0}))" -ge 20000000
expect 0 "$KINDEX" ls digests/sha256
check "digests/ no longer lists it" not_contains out "$ho"
check "announced bytes stay" contains out "$hs"
expect 0 "$KINDEX" verify

# a damaged chunk: one byte flipped in the blob file that holds it fails the read, never hands back
# other bytes under the digest's name, and kindex verify names the artifact
head -c 20971520 /dev/urandom >big.bin # past a memtable: written out to blob files at close
hb=$(sha256sum big.bin | cut -c1-64)
expect 0 "$KINDEX" ingest --artifact big.bin
python3 - "$KINDEX_STORE" big.bin <<'PY' || die "the artifact's bytes are in no blob file"
import glob, sys
want = open(sys.argv[2], "rb").read()[10485760:10485760 + 64]
for f in glob.glob(sys.argv[1] + "/*.blob"):
    b = bytearray(open(f, "rb").read())
    at = b.find(want)
    if at >= 0:
        b[at + 7] ^= 0x20
        open(f, "wb").write(bytes(b))
        sys.exit(0)
sys.exit(1)
PY
expect 4 "$KINDEX" cat "digests/sha256/$hb"
check "a damaged chunk: the read fails" contains err "Input/output error"
check "no byte after the damaged chunk is handed out" test "$(wc -c <out)" -le 10485760
expect 1 "$KINDEX" verify
check "verify names the damaged artifact" contains err "artifact sha256:$hb: store-artifact: its bytes cannot be read back past byte 10485760"
finish
