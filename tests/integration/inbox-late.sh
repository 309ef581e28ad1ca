#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A late document through a read-write mount (docs/architecture.md, "Late documents"): a run that
# names its workload by digest only, then the workload document in another run's manifest, on
# another GPU (so no run is added to the first run's group). The first run's manifest.json,
# summary.txt, index.html and SHA256SUMS change then, in both its places (runs/'s index.html and
# SHA256SUMS are files of their own); like every file that changes they are versions
# (docs/mount.md): a reader holding one open reads the old bytes whole at the old size, a new open
# gets another inode with the new bytes at their exact size, and workload.json appears.
. "$(dirname "$0")/mount-lib.sh"
. "$(dirname "$0")/inbox-lib.sh"

store="$work/store"
mnt="$work/mnt"
in="$mnt/inbox"
"$KINDEX" -q --store "$store" init >/dev/null || die "kindex init failed"
gen 1 "$work/m" --seed 11
python3 - "$work/m/m-0000000.json" "$work/early.json" "$work/late.json" <<'PY' || die "cannot write the manifests"
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["KX_SOURCE_ROOT"], "tests", "integration"))
import kxjcs
m = json.load(open(sys.argv[1]))
early = json.loads(json.dumps(m))
del early["workload"]                                  # named by its digest only
json.dump(early, open(sys.argv[2], "w"), indent=2)
late = json.loads(json.dumps(m))                       # another run, on another GPU, with the workload
late["environment"]["spec"]["hardware"] = {"vendor": "nvidia", "product": "NVIDIA Late 9000"}
late["run"]["spec"]["environmentDigest"] = kxjcs.digest(late["environment"])
late["run"]["spec"]["observedAt"] = "2025-06-01T00:00:00.000Z"
json.dump(late, open(sys.argv[3], "w"), indent=2)
PY
# nopush: every read of a file held open is answered by the daemon, not by a push that came first
mount_fg "$store" "$mnt" -o rw,nopush

cp "$work/early.json" "$in/" || die "cp early.json into the inbox failed"
check "the run naming its workload by digest is accepted" accepted "$mnt" early.json 1
path=$(awk '$1 == "added" { print $3 }' "$in/.accepted/early.json")
id=$(awk '$1 == "added" { print $2 }' "$in/.accepted/early.json") # runs/<shortid>
check "it has no workload.json yet" [ ! -e "$mnt/$path/workload.json" ]

python3 - "$mnt" "$path" "$id" "$work/late.json" "$in/" >"$work/late" 2>&1 <<'PY'
import os, shutil, sys
mnt, path, rid, src, inbox = sys.argv[1:]
names = ["manifest.json", "summary.txt", "index.html", "SHA256SUMS"]
paths = {f"{d}/{n}": os.path.join(mnt, d, n) for d in (path, rid) for n in names}
held = {k: open(p, "rb") for k, p in paths.items()}   # opened, nothing read: no page cached
st = {k: os.fstat(f.fileno()) for k, f in held.items()}
shutil.copy(src, inbox)                                # close() returns once the tree shows it
old = {k: f.read() for k, f in held.items()}
new = {k: open(p, "rb").read() for k, p in paths.items()}
def say(ok, what):
    print("%s %s" % ("ok" if ok else "FAILED", what))
for k in paths:
    say(len(old[k]) == st[k].st_size == os.fstat(held[k].fileno()).st_size,
        "%s: the open file reads whole at its size (%d bytes read, size %d)" % (k, len(old[k]), st[k].st_size))
    s = os.stat(paths[k])
    say(old[k] != new[k] and s.st_ino != st[k].st_ino,
        "%s: a new open is a new version (inode %d -> %d)" % (k, st[k].st_ino, s.st_ino))
    say(s.st_size == len(new[k]), "%s: its size is exact (%d)" % (k, s.st_size))
say(b'"workload"' not in old[path + "/manifest.json"] and b'"workload"' in new[path + "/manifest.json"],
    "manifest.json: without the workload document open, with it after")
say(b"workload.json" in new[path + "/SHA256SUMS"] and b"workload.json" not in old[path + "/SHA256SUMS"],
    "SHA256SUMS: lists workload.json after, not before")
for d in (path, rid):
    say(b'href="workload.json"' in new[d + "/index.html"] and b'href="workload.json"' not in old[d + "/index.html"],
        "%s/index.html: links workload.json after, not before" % d)
PY
verdicts "$work/late" "late document under open files" 28
check "the late run is accepted" accepted "$mnt" late.json 1
check "workload.json is there now" test -f "$mnt/$path/workload.json"
check "sha256sum -c passes in the run directory" bash -c "cd '$mnt/$path' && sha256sum -c --quiet SHA256SUMS"
check "and in $id" bash -c "cd '$mnt/$id' && sha256sum -c --quiet SHA256SUMS"
unmount "$mnt" "$daemon" || fail "the daemon did not exit cleanly"
check "the daemon wrote nothing to stderr" [ ! -s "$mnt.err" ]
"$KINDEX" --store "$store" verify >"$work/verify" 2>&1
rc=$?
check "kindex verify is clean ($(tail -1 "$work/verify"))" [ $rc = 0 ]
finish
