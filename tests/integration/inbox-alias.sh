#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# An alias through a read-write mount (docs/inbox.md, "Already present, and conflicts"): a run
# with a sourceNative source and externalId, then the same observation published again — its own
# title and implementation document, the same status, observedAt and measurements. The second is
# stored as an alias: runs/<its id>/ appears, the first run's DIGESTS and summary.txt name it —
# new versions, as every file that changes is (a reader holding one open reads the old bytes whole
# at the old size) — and nothing is ranked or counted twice. The alias's index.html links the page
# of the run it is an alias of. When the run moves (a faster one ranks first), the alias's
# summary.txt and index.html, read before, name the new place without a remount.
. "$(dirname "$0")/mount-lib.sh"
. "$(dirname "$0")/inbox-lib.sh"

store="$work/store"
mnt="$work/mnt"
in="$mnt/inbox"
"$KINDEX" -q --store "$store" init >/dev/null || die "kindex init failed"
gen 1 "$work/m" --seed 12
python3 - "$work/m/m-0000000.json" "$work/first.json" "$work/again.json" <<'PY' || die "cannot write the manifests"
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["KX_SOURCE_ROOT"], "tests", "integration"))
import kxjcs
m = json.load(open(sys.argv[1]))
m["run"]["spec"]["sourceNative"] = {"source": "alias-bench", "externalId": "k/p/impl/gpu/w/2025-01-01"}
m["run"]["spec"]["status"] = "passed"
m["run"]["spec"].pop("message", None)
json.dump(m, open(sys.argv[2], "w"), indent=2)
again = json.loads(json.dumps(m))                      # the same observation, published again
again["run"]["metadata"]["title"] = "published again, by another index"
again["implementation"]["spec"]["project"] = "another index's record of it"
again["run"]["spec"]["implementationDigest"] = kxjcs.digest(again["implementation"])
json.dump(again, open(sys.argv[3], "w"), indent=2)
PY
mount_fg "$store" "$mnt" -o rw,nopush

cp "$work/first.json" "$in/" || die "cp first.json into the inbox failed"
check "the first record is accepted" accepted "$mnt" first.json 1
path=$(awk '$1 == "added" { print $3 }' "$in/.accepted/first.json")
id=$(awk '$1 == "added" { print $2 }' "$in/.accepted/first.json") # runs/<shortid>
group=$(dirname "$path")

python3 - "$mnt" "$path" "$id" "$work/again.json" "$in/" >"$work/alias" 2>&1 <<'PY'
import os, shutil, sys
mnt, path, rid, src, inbox = sys.argv[1:]
names = ["DIGESTS", "summary.txt"]
paths = {f"{d}/{n}": os.path.join(mnt, d, n) for d in (path, rid) for n in names}
held = {k: open(p, "rb") for k, p in paths.items()}   # opened, nothing read: no page cached
st = {k: os.fstat(f.fileno()) for k, f in held.items()}
shutil.copy(src, inbox)                                # close() returns once the tree shows it
old = {k: f.read() for k, f in held.items()}
new = {k: open(p, "rb").read() for k, p in paths.items()}
def say(ok, what):
    print("%s %s" % ("ok" if ok else "FAILED", what))
for k in paths:
    say(len(old[k]) == st[k].st_size, "%s: the open file reads whole at its size (%d bytes)" % (k, len(old[k])))
    s = os.stat(paths[k])
    say(b"also" not in old[k] and b"also" in new[k] and s.st_ino != st[k].st_ino,
        "%s: a new open is a new version that names the alias (inode %d -> %d)" % (k, st[k].st_ino, s.st_ino))
    say(s.st_size == len(new[k]), "%s: its size is exact (%d)" % (k, s.st_size))
PY
verdicts "$work/alias" "the alias under open files" 12
r="$in/.accepted/again.json"
check "the receipt says alias" grep -q '^accepted again.json at .*: 1 run (0 added, 1 alias, 0 already present)$' "$r"
alias=$(awk '$1 == "alias" { print $2 }' "$r")
check "runs/ lists it ($alias)" test -n "$alias" -a -d "$mnt/$alias"
check "its DIGESTS names the run it is an alias of" grep -q "^alias-of sha256:${id#runs/}" "$mnt/$alias/DIGESTS"
check "sha256sum -c passes in it" bash -c "cd '$mnt/$alias' && sha256sum -c --quiet SHA256SUMS"
check "and in the group" bash -c "cd '$mnt/$group' && sha256sum -c --quiet SHA256SUMS"
check "the group lists one run" [ "$(ls -d "$mnt/$group"/[0-9]*-* | wc -l)" = 1 ]
check "ranking.tsv has one row" [ "$(tail -n +2 "$mnt/$group/ranking.tsv" | wc -l)" = 1 ]
check "README counts one run" grep -q '^runs  *1$' "$mnt/README"
check "the protocol's file has 3 links: the run's two, the alias's one" \
	[ "$(stat -c %h "$mnt/$alias/protocol.json")" = 3 ]
check "its index.html (well-formed) links the page of the run it is an alias of, which is there" \
	bash -c "python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' '$mnt/$alias/index.html' &&
		grep -q 'href=\"../${id#runs/}/index.html\">$path</a>' '$mnt/$alias/index.html' && test -s '$mnt/$id/index.html'"

# the alias's summary.txt names where the run it is an alias of lives: a faster run of another
# implementation ranks first, the run moves to 02-…, and the alias's page, read before, follows
python3 - "$work/first.json" "$work/faster.json" <<'PY' || die "cannot write faster.json"
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["KX_SOURCE_ROOT"], "tests", "integration"))
import kxjcs
m = json.load(open(sys.argv[1]))
m["implementation"]["spec"]["name"] = "a-faster-one"
m["run"]["spec"]["implementationDigest"] = kxjcs.digest(m["implementation"])
m["run"]["spec"]["sourceNative"]["externalId"] += "-faster"
def halve(x):  # every number: the median, its quantiles, the measurements
    if isinstance(x, dict):
        return {k: halve(v) for k, v in x.items()}
    if isinstance(x, list):
        return [halve(v) for v in x]
    return x / 2 if isinstance(x, (int, float)) and not isinstance(x, bool) else x
m["run"]["spec"]["timing"] = halve(m["run"]["spec"]["timing"])
m["run"]["spec"]["measurements"] = halve(m["run"]["spec"]["measurements"])
json.dump(m, open(sys.argv[2], "w"), indent=2)
PY
grep -q "an alias of $id ($path)" "$mnt/$alias/summary.txt" || fail "the alias's summary.txt names $path"
cp "$work/faster.json" "$in/" || die "cp faster.json into the inbox failed"
check "the faster run is accepted" accepted "$mnt" faster.json 1
moved=$(ls -d "$mnt/$group"/02-* 2>/dev/null | head -1)
check "the first run is 02 now ($moved)" test -n "$moved"
check "the alias's summary.txt, read before, names its new place without a remount ($(grep -o 'an alias of [^)]*)' "$mnt/$alias/summary.txt"))" \
	grep -q "an alias of $id ($group/$(basename "$moved"))" "$mnt/$alias/summary.txt"
check "and its index.html too" grep -q "href=\"../${id#runs/}/index.html\">$group/$(basename "$moved")</a>" "$mnt/$alias/index.html"
check "and sha256sum -c still passes in it" bash -c "cd '$mnt/$alias' && sha256sum -c --quiet SHA256SUMS"
unmount "$mnt" "$daemon" || fail "the daemon did not exit cleanly"
check "the daemon wrote nothing to stderr" [ ! -s "$mnt.err" ]
"$KINDEX" --store "$store" verify >"$work/verify" 2>&1
rc=$?
check "kindex verify is clean ($(tail -1 "$work/verify"))" [ $rc = 0 ]
finish
