#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The daemon's spool (-o spool=DIR) takes artifacts' bytes (SPEC §9): a manifest dropped into
# DIR/new/ shows its run with the artifact announced, not received; its bytes renamed into
# DIR/artifacts/ later wake the spooler (sooner than its 5 s rescan), are filed in accepted/ with a
# receipt naming the digest, and the mounted run then serves them byte for byte. Bytes under a
# name that claims another digest end in rejected/ with an .error naming both; an artifacts/
# removed and made again behind the daemon's back is watched again.
source "$(dirname "$0")/mount-lib.sh"

command -v python3 >/dev/null || { echo "1..0 # SKIP python3 not found: cannot write the manifest"; exit 77; }
store=$work/store mnt=$work/mnt sp=$work/spool
"$KINDEX" -q --store "$store" init >/dev/null || die "kindex init failed"
mount_fg "$store" "$mnt" -o rw,spool="$sp"
check "the spool has artifacts/" test -d "$sp/artifacts"

# drop SRC DIR NAME: write tmp/NAME, rename it into DIR/
drop() {
	cp "$1" "$sp/tmp/$3" && mv "$sp/tmp/$3" "$sp/$2/$3" || die "cannot drop $2/$3"
}
# appears FILE SECONDS: FILE exists within SECONDS
appears() {
	local deadline=$((SECONDS + $2))
	until [ -e "$1" ]; do
		[ $SECONDS -lt $deadline ] || { echo "# $1 did not appear in $2 s: $(ls -A "${1%/*}")"; return 1; }
		sleep 0.05
	done
}
# same_within FILE WANT SECONDS: FILE (in the mount) reads as WANT within SECONDS
same_within() {
	local deadline=$((SECONDS + $3))
	until cmp -s "$1" "$2" 2>/dev/null; do
		[ $SECONDS -lt $deadline ] || { echo "# $1 does not read as $2 after $3 s"; return 1; }
		sleep 0.05
	done
}

head -c 150000 /dev/urandom >"$work/trace.bin"
hex=$(sha256sum "$work/trace.bin" | cut -c1-64)
python3 - "$KX_SOURCE_ROOT/tests/data/fixtures/flce-forward-a100.manifest.json" "$work/m.json" \
	"$work/trace.bin" <<'PY' || die "cannot write the manifest"
import hashlib, json, sys
doc = json.load(open(sys.argv[1]))
data = open(sys.argv[3], "rb").read()
doc["run"]["spec"]["artifacts"] = [{"name": "trace.bin", "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
                                    "size": len(data), "mediaType": "application/octet-stream"}]
json.dump(doc, open(sys.argv[2], "w"))
PY

drop "$work/m.json" new m.json
check "the manifest is accepted" appears "$sp/accepted/m.json.receipt" 10
id=$(awk '$1 == "added" { sub("runs/", "", $2); print $2 }' "$sp/accepted/m.json.receipt")
check "its run is mounted, its artifact announced, not received" \
	grep -qE '^  trace\.bin .* announced, not received$' "$mnt/runs/$id/summary.txt"
check "… and not served" test ! -e "$mnt/runs/$id/artifacts/trace.bin"

drop "$work/trace.bin" artifacts "$hex-trace.bin"
check "the bytes are accepted within 3 s (the spooler wakes for artifacts/)" \
	appears "$sp/accepted/$hex-trace.bin.receipt" 3
check "… moved byte for byte" cmp -s "$sp/accepted/$hex-trace.bin" "$work/trace.bin"
check "… the receipt names the digest and the run" bash -c \
	"grep -qE '^accepted $hex-trace\\.bin at [^ ]+: artifact sha256:$hex \\(150000 bytes\\), stored\$' \
	'$sp/accepted/$hex-trace.bin.receipt' && grep -qx 'announced by 1 stored run' '$sp/accepted/$hex-trace.bin.receipt'"
check "the mounted run serves artifacts/trace.bin, byte for byte" \
	same_within "$mnt/runs/$id/artifacts/trace.bin" "$work/trace.bin" 10

printf 'other bytes\n' >"$work/c.bin"
wrong=$(printf 'x' | sha256sum | cut -c1-64)
drop "$work/c.bin" artifacts "$wrong-x"
check "bytes named for another digest are rejected" appears "$sp/rejected/$wrong-x.error" 3
check "… naming both digests" grep -q ": digest: named for sha256:$wrong, but its bytes hash to sha256:$(sha256sum "$work/c.bin" | cut -c1-64)" \
	"$sp/rejected/$wrong-x.error"
check "artifacts/ is empty" test -z "$(ls -A "$sp/artifacts")"

# artifacts/ removed and made again behind the daemon's back: the next round opens it afresh
rmdir "$sp/artifacts" && mkdir "$sp/artifacts" || die "cannot make artifacts/ again"
printf 'after the new artifacts/\n' >"$work/d.bin"
drop "$work/d.bin" artifacts d.bin
check "bytes in a remade artifacts/ are accepted (within the 5 s rescan)" appears "$sp/accepted/d.bin.receipt" 10

unmount "$mnt" "$daemon" || fail "the daemon (with a spool) did not exit cleanly"
finish
