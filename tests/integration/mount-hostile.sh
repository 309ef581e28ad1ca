#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The mount and its tools against unusual but valid input and hostile requests: a run observed
# before 1970, which the mount and `kindex export` must show with the same mtime; an
# implementation's name and a title of quotes, markup, bidirectional and combining characters,
# which a run's index.html shows escaped and exact, in both its places; renames onto and
# of the inbox's receipt directories and a name shared by two writers, answered as docs/inbox.md
# says; -o values that are not sizes or numbers.
. "$(dirname "$0")/mount-lib.sh"
. "$(dirname "$0")/inbox-lib.sh"
export TZ=UTC

store="$work/store"
gen 2 "$work/gen"
"$KINDEX" -q --store "$store" init >/dev/null || die "kindex init failed"
# observedAt 1960-01-01T00:00:00.5Z: -315619199.5 s, a timespec of { -315619200, 500000000 }
sed -E 's/"observedAt": "[^"]*"/"observedAt": "1960-01-01T00:00:00.5Z"/' "$work/gen/m-0000000.json" >"$work/old.json"
# a name and a title a page must escape: the implementation document changed, so its digest too
python3 - "$work/gen/m-0000001.json" "$work/hostile.json" "$work/hostile.txt" <<'PY'
import hashlib, json, sys
m = json.load(open(sys.argv[1]))
name = '<script>alert("x")</script> \'q\' &amp; \u202eRTL\u202c e\u0301\u0301 \u05e9\u05dc\u05d5\u05dd'
m["implementation"]["spec"]["name"] = name
m["run"]["metadata"]["title"] = "title " + name
impl = {k: m["implementation"][k] for k in ("apiVersion", "kind", "spec")}
jcs = json.dumps(impl, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
m["run"]["spec"]["implementationDigest"] = "sha256:" + hashlib.sha256(jcs).hexdigest()
json.dump(m, open(sys.argv[2], "w"))
open(sys.argv[3], "w", encoding="utf-8").write(name)
PY
"$KINDEX" -q --store "$store" ingest "$work/old.json" "$work/gen/m-0000001.json" "$work/hostile.json" ||
	die "kindex ingest failed"
"$KINDEX" -q --store "$store" export "$work/export" 2>"$work/export.err"
check "export of a run observed in 1960: exit 0 ($?), nothing on stderr" [ $? = 0 -a ! -s "$work/export.err" ]
cat "$work/export.err" >&2
mnt="$work/mnt"
mount_fg "$store" "$mnt"
id=$(ls "$mnt/runs" | while read -r r; do grep -q '1960-01-01' "$mnt/runs/$r/manifest.json" && echo "$r"; done)
check "the mount shows the 1960 run's manifest.json with its observedAt as mtime" \
	[ "$(stat -c %y "$mnt/runs/$id/manifest.json")" = "1960-01-01 00:00:00.500000000 +0000" ]
check "the export has that mtime too" \
	[ "$(stat -c %y "$work/export/runs/$id/manifest.json" 2>&1)" = "1960-01-01 00:00:00.500000000 +0000" ]
listing "$mnt" >"$work/mount.lst"
listing "$work/export" >"$work/export.lst"
check "every entry of the export has the mount's type, size, mtime, mode and link count" \
	cmp -s "$work/mount.lst" "$work/export.lst"
cmp -s "$work/mount.lst" "$work/export.lst" || diff "$work/mount.lst" "$work/export.lst" | head -5 >&2
check "the roots' mtimes agree" [ "$(stat -c %y "$mnt")" = "$(stat -c %y "$work/export")" ]
check "diff -r finds no difference" diff -r "$mnt" "$work/export"
hostile=$(ls "$mnt/runs" | while read -r r; do grep -q '<script>' "$mnt/runs/$r/implementation.json" && echo "$r"; done)
rank_dir=$(grep -o 'benchmarks/[^ ]*' "$mnt/runs/$hostile/summary.txt" | head -1)
for page in "$mnt/$rank_dir/index.html" "$mnt/runs/$hostile/index.html"; do
	check "${page#"$mnt"/}: well-formed, the hostile name and title exact, no markup of theirs" \
		python3 - "$page" "$work/hostile.txt" <<'PY'
import html.parser, sys, xml.dom.minidom
text, name = open(sys.argv[1], encoding="utf-8").read(), open(sys.argv[2], encoding="utf-8").read()
xml.dom.minidom.parseString(text.encode())  # well-formed, or an exception
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.cells, self.data = [], [], None
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag in ("td", "p"):
            self.data = ""
    def handle_endtag(self, tag):
        if tag in ("td", "p") and self.data is not None:
            self.cells.append(self.data)
            self.data = None
    def handle_data(self, data):
        if self.data is not None:
            self.data += data
p = Page()
p.feed(text)
ok = "script" not in p.tags and "b" not in p.tags and "title " + name in p.cells and name + " 1.0 by liger" in p.cells
print("# tags", sorted(set(p.tags)), "found" if ok else "name not found exact")
sys.exit(not ok)
PY
done
unmount "$mnt" "$daemon" || fail "the daemon did not stop cleanly"

# renames onto and of the receipt directories, and a name shared by two writers: the answers
# docs/inbox.md's table gives
rw="$work/mnt-rw"
mount_fg "$store" "$rw" -o rw
cp "$work/gen/m-0000001.json" "$rw/inbox/r.tmp"
python3 - "$rw/inbox" "$work/gen/m-0000000.json" >"$work/answers" 2>&1 <<'PY'
import errno, os, sys
inbox, manifest = sys.argv[1], open(sys.argv[2], 'rb').read()
def answer(what, f):
    try:
        f()
        print(what, 'ok')
    except OSError as e:
        print(what, errno.errorcode[e.errno])
for d in ('.accepted', '.rejected'):
    answer('file onto ' + d, lambda: os.rename(inbox + '/r.tmp', inbox + '/' + d))
    answer(d + ' renamed', lambda: os.rename(inbox + '/' + d, inbox + '/x'))
answer('.accepted onto .rejected', lambda: os.rename(inbox + '/.accepted', inbox + '/.rejected'))
a = os.open(inbox + '/shared.json', os.O_WRONLY | os.O_CREAT, 0o644)
b = os.open(inbox + '/shared.json', os.O_WRONLY)
os.write(b, manifest[:1])  # b's offset is 1 now; a writes the whole manifest over it
os.write(a, manifest)
os.close(a)
answer('write after the other writer closed', lambda: os.write(b, b'\n'))
answer('close after the other writer closed', lambda: os.close(b))
PY
cat "$work/answers" | sed "s/^/# /"
for want in "file onto .accepted EISDIR" "file onto .rejected EISDIR" ".accepted renamed EPERM" \
	".rejected renamed EPERM" ".accepted onto .rejected EPERM" "write after the other writer closed ESTALE" \
	"close after the other writer closed ok"; do
	check "$want" grep -qxF "$want" "$work/answers"
done
check "the file renamed onto a receipt directory stays in the inbox" cmp -s "$rw/inbox/r.tmp" "$work/gen/m-0000001.json"
check "the shared name was decided by the first close" accepted "$rw" shared.json 1
unmount "$rw" "$daemon" || fail "the read-write daemon did not stop cleanly"

# -o values that are not numbers or sizes: refused before mounting, naming the option (an
# accepted one would mount in the foreground: timeout(1) ends it, and the check fails)
mkdir "$work/mnt-opts"
for o in cache=nan cache=64e3 cache=0x1000000 max_manifest=-1 max_manifest=12345678901234567890123 \
	timeout=nan timeout=inf timeout=1e3 timeout=-1 spin=+5 "spin= 5"; do
	timeout 10 "$KINDEXFS" "$store" "$work/mnt-opts" -f -o "$o" 2>"$work/opt.err"
	rc=$?
	check "-o $o: refused with exit status 2 ($rc)" [ $rc = 2 ]
	check "-o $o: the message names it" grep -qF -- "kindexfs: invalid -o $o:" "$work/opt.err"
	mountpoint -q "$work/mnt-opts" && fusermount3 -u "$work/mnt-opts"
done
finish
