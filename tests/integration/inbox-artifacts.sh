#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Artifacts (SPEC §9) through a read-write mount's inbox/artifacts/. A run announcing a 1 GiB
# artifact arrives first: summary.txt lists it as announced, not received, and no file stands in
# for it. Then its bytes are copied into inbox/artifacts/ under any name: the daemon stores them
# a chunk at a time — its peak RSS stays under 128 MiB — and files a receipt naming their digest;
# the run's artifacts/ then serves them byte for byte (whole, and a range with dd), exact in stat,
# in SHA256SUMS, as one file with digests/sha256/<hex>. Bytes arriving before the run that
# announces them are served once it comes; bytes named for another digest are refused with both
# digests named. The same bytes go through the daemon's spool and through `kindex ingest` (its own
# peak RSS under 128 MiB too). KX_ARTIFACT_TEST_BYTES changes the size of the large one (1 GiB).
. "$(dirname "$0")/mount-lib.sh"

size=${KX_ARTIFACT_TEST_BYTES:-1073741824}
store="$work/store"
mnt="$work/mnt"
in="$mnt/inbox"
fixture="$KX_SOURCE_ROOT/tests/data/fixtures/flce-forward-a100.manifest.json"
"$KINDEX" --store "$store" -q init || die "kindex init failed"
spool="$work/spool"
mkdir -p "$spool"
mount_fg "$store" "$mnt" -o rw,spool="$spool"

# manifest OUT ID NAME FILE: the fixture's run, its own observation ID, announcing FILE as NAME
manifest() {
	python3 - "$fixture" "$1" "$2" "$3" "$4" <<'PY' || die "cannot write a manifest"
import hashlib, json, os, sys
fixture, out, ident, name, path = sys.argv[1:]
m = json.load(open(fixture))
h = hashlib.sha256()
with open(path, "rb") as f:
    for piece in iter(lambda: f.read(1 << 20), b""):
        h.update(piece)
m["run"]["spec"]["sourceNative"]["externalId"] += "-" + ident
m["run"]["spec"]["artifacts"] = [{"name": name, "digest": "sha256:" + h.hexdigest(),
                                  "size": os.path.getsize(path), "mediaType": "application/octet-stream"}]
json.dump(m, open(out, "w"))
PY
}
run_of() { # the run a receipt names
	sed -n 's/^added runs\/\([0-9a-f]\{12\}\) .*/\1/p' "$in/.accepted/$1"
}

head -c "$size" /dev/urandom >"$work/big.bin" || die "cannot make $size random bytes"
hex=$(sha256sum "$work/big.bin" | cut -c1-64)
manifest "$work/big.json" big profile.bin "$work/big.bin"
cp "$work/big.json" "$in/" || die "cp big.json into the inbox failed"
id=$(run_of big.json)
[ -n "$id" ] || die "no run in the receipt: $(cat "$in/.accepted/big.json")"
check "announced, not received: said in summary.txt" grep -qE '^  profile\.bin +[0-9]+ bytes .* announced, not received$' "$mnt/runs/$id/summary.txt"
check "and no file stands in for it" bash -c "! stat '$mnt/runs/$id/artifacts' 2>/dev/null"

before=$(awk '/^VmHWM/ { print $2 }' "/proc/$daemon/status")
cp "$work/big.bin" "$in/artifacts/anything.bin" || die "cp of the artifact into inbox/artifacts failed"
peak=$(awk '/^VmHWM/ { print $2 }' "/proc/$daemon/status")
echo "# daemon peak RSS: ${before} KiB before the artifact, ${peak} KiB after ($size bytes)"
check "the daemon never held the artifact: peak RSS ${peak} KiB <= 128 MiB" test "$peak" -le 131072
r="$in/.accepted/anything.bin"
check "the receipt names the digest" grep -q "^accepted anything.bin at .*: artifact sha256:$hex ($size bytes), stored$" "$r"
check "and the run announcing it" grep -qx "announced by 1 stored run" "$r"
check "the file left the inbox" test ! -e "$in/artifacts/anything.bin"
f="$mnt/runs/$id/artifacts/profile.bin"
check "its stat is its size" test "$(stat -c %s "$f")" = "$size"
check "its bytes are the artifact's" cmp -s "$f" "$work/big.bin"
off=$((size / 4096 / 3))
check "a range read with dd" cmp -s <(dd if="$f" bs=4096 skip=$off count=3 2>/dev/null) \
	<(dd if="$work/big.bin" bs=4096 skip=$off count=3 2>/dev/null)
check "digests/sha256/<hex> is the same file" test "$(stat -c %i "$mnt/digests/sha256/$hex")" = "$(stat -c %i "$f")"
check "SHA256SUMS lists it by its digest" grep -qx "$hex  artifacts/profile.bin" "$mnt/runs/$id/SHA256SUMS"
check "summary.txt: received" grep -qE '^  profile\.bin .* received: artifacts/profile\.bin$' "$mnt/runs/$id/summary.txt"
check "summary.txt's stat is its bytes" test "$(stat -c %s "$mnt/runs/$id/summary.txt")" = "$(wc -c <"$mnt/runs/$id/summary.txt")"

# the same bytes through the daemon's spool (tmp/, then a rename into artifacts/): streamed too,
# found stored already
cp "$work/big.bin" "$spool/tmp/big.bin" && mv "$spool/tmp/big.bin" "$spool/artifacts/big.bin" || die "cannot drop into the spool"
deadline=$((SECONDS + 120))
until [ -e "$spool/accepted/big.bin.receipt" ] || [ $SECONDS -ge $deadline ]; do sleep 0.1; done
check "the spool's receipt: already stored" grep -q "^accepted big.bin at .*: artifact sha256:$hex ($size bytes), already stored$" "$spool/accepted/big.bin.receipt"
peak=$(awk '/^VmHWM/ { print $2 }' "/proc/$daemon/status")
check "the daemon's peak RSS stays under 128 MiB through the spool too: ${peak} KiB" test "$peak" -le 131072
# and through kindex ingest, into a store of its own: the process's peak RSS
"$KINDEX" --store "$work/store2" -q init || die "kindex init failed"
kpeak=$(python3 - "$KINDEX" "$work/store2" "$work/big.bin" <<'PY'
import resource, subprocess, sys
kindex, store, path = sys.argv[1:]
subprocess.run([kindex, "--store", store, "-q", "ingest", "--artifact", path], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
) || die "kindex ingest --artifact of $size bytes failed"
echo "# kindex ingest --artifact: peak RSS $kpeak KiB"
check "kindex ingest's peak RSS stays under 128 MiB: $kpeak KiB" test "$kpeak" -le 131072
check "and it serves the same bytes" bash -c "'$KINDEX' --store '$work/store2' cat digests/sha256/$hex | cmp -s - '$work/big.bin'"
rm -rf "$work/big.bin" "$work/store2"

# bytes first, the run after: order-free
head -c 200000 /dev/urandom >"$work/early.bin"
early=$(sha256sum "$work/early.bin" | cut -c1-64)
ls "$mnt/digests/sha256" >/dev/null # the kernel now holds the listing
cp "$work/early.bin" "$in/artifacts/early.bin" || die "cp early.bin failed"
check "bytes no run announces yet: kept, and said so" grep -q "^announced by no stored run yet" "$in/.accepted/early.bin"
check "listed in digests/sha256/ at once" bash -c "ls '$mnt/digests/sha256' | grep -qx '$early'"
check "one link: no run names it yet" test "$(stat -c %h "$mnt/digests/sha256/$early")" = 1
manifest "$work/early.json" early samples.tsv "$work/early.bin"
cp "$work/early.json" "$in/" || die "cp early.json failed"
id2=$(run_of early.json)
check "the run that comes later serves them" cmp -s "$mnt/runs/$id2/artifacts/samples.tsv" "$work/early.bin"
check "three links now" test "$(stat -c %h "$mnt/digests/sha256/$early")" = 3
# a second run announcing the same bytes: the file the kernel holds (its attributes cached) is told
stat "$mnt/runs/$id2/artifacts/samples.tsv" >/dev/null
manifest "$work/again.json" again copy.tsv "$work/early.bin"
cp "$work/again.json" "$in/" || die "cp again.json failed"
check "five links, seen through the path already looked up" test "$(stat -c %h "$mnt/runs/$id2/artifacts/samples.tsv")" = 5
check "sha256sum -c passes in that run" bash -c "cd '$mnt/runs/$id2' && sha256sum -c --quiet SHA256SUMS"

# bytes named for another digest: refused, both digests named, moved to .rejected/
wrong=$(printf 'other' | sha256sum | cut -c1-64)
printf 'these bytes' >"$work/x.bin"
if cp "$work/x.bin" "$in/artifacts/$wrong-x.bin" 2>/dev/null; then
	fail "close() of bytes named for another digest succeeded"
else
	pass "close() of bytes named for another digest fails"
fi
got=$(printf 'these bytes' | sha256sum | cut -c1-64)
check "the error names both digests" grep -q "digest: named for sha256:$wrong, but its bytes hash to sha256:$got" "$in/.rejected/$wrong-x.bin.error"
check "the bytes are kept in .rejected/" test "$(cat "$in/.rejected/$wrong-x.bin")" = "these bytes"
check "nothing was stored under either digest" bash -c "! stat '$mnt/digests/sha256/$got' 2>/dev/null && ! stat '$mnt/digests/sha256/$wrong' 2>/dev/null"
unmount "$mnt" "$daemon" || fail "unmount"
check "kindex verify re-hashes them" "$KINDEX" --store "$store" -q verify
finish
