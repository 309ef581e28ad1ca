#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The inbox of a read-write mount driven by real tools (SPEC §4, docs/inbox.md): cp, cp -p,
# install, mv from another file system, cat >, tee, dd, echo >, rsync -a (temporary name + rename;
# a second run is "already present"), Python, a JSON Lines file of 1,000 manifests — each checked
# the way a user would: the tool exits 0, the receipt in inbox/.accepted names each run, the file
# left the inbox, and every run is in benchmarks/ at that path, in ranking.tsv, with contiguous
# ranks and `sha256sum -c` passing. Then the refusals: a bad file (close() fails with EINVAL; kept
# byte-exact with every problem listed), a bad JSON Lines file (refused whole), a changed copy of
# a stored observation (conflict, naming the run), a file over the cap (EFBIG as it is written),
# RENAME_NOREPLACE, RENAME_EXCHANGE and cross-directory renames, writes outside the inbox
# (EROFS), hostile names. The live tree: a run that shifts ranks shows at once in a listing the
# kernel had cached, without stale names. Last, a remount: a file left in the inbox stays until
# touched, -o max_manifest, -o spool=DIR, and a read-only mount has no inbox.
. "$(dirname "$0")/mount-lib.sh"
. "$(dirname "$0")/inbox-lib.sh"

store="$work/store"
mnt="$work/mnt"
in="$mnt/inbox"
m="$work/m"
make_liger_store "$store"
gen 40 "$m"
f() { printf '%s/m-%07d.json' "$m" "$1"; }
mount_fg "$store" "$mnt" -o rw

# ---- the inbox itself ------------------------------------------------------------------------
check "the root of a -o rw mount lists inbox/" bash -c "ls '$mnt' | grep -qx inbox"
check "inbox/ is mode 755 with .accepted/ and .rejected/" \
	bash -c "[ \"\$(stat -c %a '$in' '$in/.accepted' '$in/.rejected' | sort -u)\" = 755 ]"
check "and is empty otherwise" bash -c "[ \"\$(ls -A '$in' | tr '\n' ' ')\" = '.accepted .rejected artifacts ' ]"
check "files of the tree still read on a -o rw mount (FLUSH answers at once)" bash -c "cat '$mnt/README' >/dev/null"

# ---- tools -----------------------------------------------------------------------------------
# drop DESCRIPTION NAME COMMAND...: the command succeeds and NAME is accepted into the tree
drop() {
	local what=$1 name=$2
	shift 2
	if "$@" 2>"$work/err"; then
		pass "$what: exits 0"
	else
		fail "$what: exits $? ($(head -1 "$work/err"))"
	fi
	check "$what: accepted, the run in benchmarks/" accepted "$mnt" "$name" 1
}
runs0=$(runs_count "$mnt")
drop "cp" m-0000000.json cp "$(f 0)" "$in/"
drop "cp -p" m-0000001.json cp -p "$(f 1)" "$in/"
drop "install -m 644 (chmod by name after close)" m-0000002.json install -m 644 "$(f 2)" "$in/"
cp "$(f 3)" "$work/moved.json"
drop "mv from another file system" moved.json mv "$work/moved.json" "$in/"
check "mv removed its source" [ ! -e "$work/moved.json" ]
drop "cat > f" cat.json bash -c "cat '$(f 4)' > '$in/cat.json'"
drop "tee" tee.json bash -c "tee '$in/tee.json' < '$(f 5)' > /dev/null"
drop "dd" dd.json dd if="$(f 6)" of="$in/dd.json" bs=1k status=none
drop "bash echo > f" echo.json bash -c "echo \"\$(cat '$(f 7)')\" > '$in/echo.json'"
drop "Python open/write/close" py.json python3 -c "
with open('$in/py.json', 'w') as out:
    out.write(open('$(f 8)').read())"
# one process writing one name twice in a row: the second is a new file, decided on its own
if python3 -c "
for i in (9, 10):
    with open('$in/twice.json', 'w') as out:
        out.write(open('$m/m-%07d.json' % i).read())" 2>"$work/err"; then
	pass "Python writing one name twice: exits 0"
else
	fail "Python writing one name twice: $(tail -1 "$work/err")"
fi
check "both were accepted (twice.json, twice.json.1)" \
	bash -c "grep -q '^added' '$in/.accepted/twice.json' && grep -q '^added' '$in/.accepted/twice.json.1'"
check "the runs count grew by 11 ($runs0 -> $(runs_count "$mnt"))" [ "$(runs_count "$mnt")" = $((runs0 + 11)) ]

# rsync -a: .NAME.XXXXXX written, closed (not decided), renamed to NAME (decided)
mkdir -p "$work/rs"
for i in 11 12 13 14; do cp "$(f $i)" "$work/rs/"; done
touch -d '2024-01-02 03:04:05' "$work/rs"
rsync -a "$work/rs/" "$in/" 2>"$work/err"
check "rsync -a dir/ mnt/inbox/ exits 0 ($(head -1 "$work/err"))" [ ! -s "$work/err" ]
for i in 11 12 13 14; do
	check "rsync: m-00000$i.json accepted" accepted "$mnt" "m-00000$i.json" 1
done
check "rsync left no temporary file behind" bash -c "[ \"\$(ls -A '$in' | tr '\n' ' ')\" = '.accepted .rejected artifacts ' ]"
check "rsync -a set the inbox's mtime (SETATTR on the directory)" \
	[ "$(stat -c %Y "$in")" = "$(stat -c %Y "$work/rs")" ]
rsync -a "$work/rs/" "$in/" 2>"$work/err"
check "a second rsync -a exits 0 (the files left, so it sends them again)" [ ! -s "$work/err" ]
check "and each is accepted as already present" \
	bash -c "for i in 11 12 13 14; do head -1 '$in/.accepted/m-00000'\$i.json.1 | grep -q '(0 added, 1 already present)' || exit 1; done"

# each renamed file is decided after its rename returned, by a thread of the daemon; rsync's last
# step, a stat of the inbox (and setting its times where they differ), waits for those decisions:
# when rsync exits, its runs show — even those of a JSON Lines file of 1,000 manifests renamed
# last, whose decision takes a while
mkdir -p "$work/rsl"
gen 1000 "$work/rsl" --jsonl --seed 11
mv "$work/rsl/manifests.jsonl" "$work/rsl/zz-last.jsonl"
for i in 30 31 32; do cp "$(f $i)" "$work/rsl/"; done
runs1=$(runs_count "$mnt")
rsync -a "$work/rsl/" "$in/" 2>"$work/err"
n=$(runs_count "$mnt") # first thing: nothing in the inbox looked at yet
check "rsync -a of 3 manifests and a JSON Lines file exits 0 ($(head -1 "$work/err"))" [ ! -s "$work/err" ]
check "when rsync exits, its 1,003 runs are in the tree ($runs1 -> $n)" [ "$n" = $((runs1 + 1003)) ]
check "and the inbox is empty again" bash -c "[ \"\$(ls -A '$in' | tr '\n' ' ')\" = '.accepted .rejected artifacts ' ]"

# JSON Lines: 1,000 manifests, one decision
mkdir -p "$work/jl"
gen 1000 "$work/jl" --jsonl --seed 7
runs1=$(runs_count "$mnt")
t0=$SECONDS
cp "$work/jl/manifests.jsonl" "$in/batch.jsonl" 2>"$work/err"
check "cp of a JSON Lines file of 1,000 manifests exits 0 ($((SECONDS - t0)) s)" [ ! -s "$work/err" ]
check "one receipt for all of them: 1000 runs, 1000 added" \
	bash -c "head -1 '$in/.accepted/batch.jsonl' | grep -q ': 1000 runs (1000 added, 0 already present)'"
check "1,000 more runs in the tree" [ "$(runs_count "$mnt")" = $((runs1 + 1000)) ]
check "the first and the last of them in benchmarks/" bash -c "
	. '$KX_SOURCE_ROOT/tests/integration/inbox-lib.sh'
	sed -n '2p;\$p' '$in/.accepted/batch.jsonl' | while read -r kind id path; do in_tree '$mnt' \"\$path\" || exit 1; done"

# ---- refusals --------------------------------------------------------------------------------
# a manifest with three problems: all three listed, with pointer and rule
python3 "$KX_SOURCE_ROOT/tests/integration/bad-manifest.py" "$(f 20)" "$work/bad.json" || die "bad-manifest.py failed"
runs2=$(runs_count "$mnt")
if cp "$work/bad.json" "$in/" 2>"$work/err"; then
	fail "cp of a bad manifest succeeded"
else
	check "cp of a bad manifest fails at close with EINVAL ($(head -1 "$work/err"))" grep -q "Invalid argument" "$work/err"
fi
check "it is kept byte for byte as .rejected/bad.json with its .error" rejected "$mnt" bad.json "$work/bad.json"
check ".error lists every problem with pointer and rule" bash -c "
	e='$in/.rejected/bad.json.error'
	head -1 \"\$e\" | grep -q ': 3 problems; nothing was added' &&
	grep -q '/run/spec/status: enum: ' \"\$e\" && grep -q '/run/spec/observedAt: timestamp: ' \"\$e\" &&
	grep -q '/extra: unknown-member: ' \"\$e\""
check "nothing was added" [ "$(runs_count "$mnt")" = "$runs2" ]
python3 -c "
import errno
try:
    with open('$in/pybad.json', 'w') as out:
        out.write('{\"run\": 1}')
except OSError as e:
    raise SystemExit(0 if e.errno == errno.EINVAL else 1)
raise SystemExit(1)"
check "Python's close() raises OSError(EINVAL) for a bad file" [ $? = 0 ]
check "bash's echo > f cannot see the refusal (exit 0): the receipt is the record" \
	bash -c "echo '{}' > '$in/echobad.json' && grep -q 'required' '$in/.rejected/echobad.json.error'"

# JSON Lines with two bad lines out of 1,000 new manifests: refused whole, both lines named
mkdir -p "$work/jl2"
gen 1000 "$work/jl2" --jsonl --seed 8
python3 - "$work/jl2/manifests.jsonl" "$work/bad.jsonl" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().split("\n")
m = json.loads(lines[16])
m["run"]["spec"]["status"] = "maybe"
lines[16] = json.dumps(m)
lines[502] = lines[502][:100]
open(sys.argv[2], "w").write("\n".join(lines))
EOF
cp "$work/bad.jsonl" "$in/" 2>"$work/err"
check "cp of JSON Lines with 2 bad lines of 1,000 fails ($(head -1 "$work/err"))" grep -q "Invalid argument" "$work/err"
check "refused whole: kept byte for byte, nothing added" \
	bash -c ". '$KX_SOURCE_ROOT/tests/integration/inbox-lib.sh'; rejected '$mnt' bad.jsonl '$work/bad.jsonl' && [ \$(ls '$mnt/runs' | wc -l) = $runs2 ]"
check "its .error names line 17 and line 503" \
	bash -c "grep -q '^bad.jsonl:17:' '$in/.rejected/bad.jsonl.error' && grep -q '^bad.jsonl:503:' '$in/.rejected/bad.jsonl.error'"

# a changed copy of a stored observation: a conflict naming the stored run
simpo="benchmarks/fused_linear_simpo_loss/forward/nvidia-a100-sxm4-80gb/batch4-hidden4096-seq1024-vocab128256-bf16"
hf=$(cd "$mnt/$simpo" && ls -d 01-huggingface-*)
python3 - "$mnt/$simpo/$hf/manifest.json" "$work/changed.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
m["run"]["spec"]["timing"]["latencyNs"]["median"] += 1
json.dump(m, open(sys.argv[2], "w"))
EOF
cp "$work/changed.json" "$in/" 2>"$work/err"
check "cp of a changed copy of a stored run fails" grep -q "Invalid argument" "$work/err"
check "its .error says conflict and names the stored run (runs/${hf##*-})" \
	bash -c "grep -q 'conflict' '$in/.rejected/changed.json.error' && grep -q 'runs/${hf##*-}' '$in/.rejected/changed.json.error'"
cp "$mnt/$simpo/$hf/manifest.json" "$work/same.json"
cp "$work/same.json" "$in/"
check "the same run again is accepted as already present" \
	bash -c "head -1 '$in/.accepted/same.json' | grep -q '(0 added, 1 already present)'"

# over the cap (4 MiB by default): EFBIG while writing, then refused with rule size
head -c $((5 << 20)) /dev/zero | tr '\0' ' ' >"$work/big.json"
cp "$work/big.json" "$in/" 2>"$work/err"
check "cp of a 5 MiB file fails with EFBIG ($(head -1 "$work/err"))" grep -q "File too large" "$work/err"
check "what arrived is refused with rule size, and is at most 4 MiB" \
	bash -c "grep -q ': size: ' '$in/.rejected/big.json.error' && [ \$(stat -c %s '$in/.rejected/big.json') -le $((4 << 20)) ]"
dd if="$work/big.json" of="$in/big-dd.json" bs=1M status=none 2>"$work/err"
check "dd reports it too ($(head -1 "$work/err"))" grep -q "File too large" "$work/err"
check "truncate -s 5M of an inbox file: EFBIG" bash -c "
	echo x > '$in/.t.tmp' && ! truncate -s 5M '$in/.t.tmp' 2>'$work/err' && grep -q 'File too large' '$work/err' && rm '$in/.t.tmp'"

# renames
renameat2() { # renameat2 OLD NEW FLAGS: prints the errno (0: renamed)
	python3 -c "
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
r = libc.renameat2(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(), int(sys.argv[3]))
print(0 if r == 0 else ctypes.get_errno())" "$@"
}
echo a >"$in/.a.tmp"
echo b >"$in/.b.tmp"
check "temporary names are held (closed, not decided)" test -f "$in/.a.tmp"
check "RENAME_NOREPLACE onto an existing name: EEXIST" [ "$(renameat2 "$in/.a.tmp" "$in/.b.tmp" 1)" = 17 ]
check "and both files are untouched" bash -c "[ \"\$(cat '$in/.a.tmp' '$in/.b.tmp')\" = \"\$(printf 'a\nb')\" ]"
check "RENAME_NOREPLACE onto a free name: done" [ "$(renameat2 "$in/.a.tmp" "$in/.c.tmp" 1)" = 0 ]
check "RENAME_EXCHANGE: EOPNOTSUPP, never EINVAL" [ "$(renameat2 "$in/.c.tmp" "$in/.b.tmp" 2)" = 95 ]
check "a rename out of the inbox's directory: EXDEV" [ "$(renameat2 "$in/.c.tmp" "$in/.rejected/c" 0)" = 18 ]
check "a rename to a name create would refuse: EILSEQ, never EINVAL" [ "$(renameat2 "$in/.c.tmp" "$in/$(printf 'c\001')" 0)" = 84 ]
cp "$(f 15)" "$in/.m15.json.part"
mv "$in/.m15.json.part" "$in/m15.json"
check "mv of a *.part file to its final name decides it" accepted "$mnt" m15.json 1
check "rm of temporary files" rm "$in/.b.tmp" "$in/.c.tmp"

# writes outside the inbox
erofs() {
	local what=$1
	shift
	if "$@" 2>"$work/err"; then fail "$what succeeded"; else check "$what: EROFS" grep -q "Read-only file system" "$work/err"; fi
}
erofs "cp into benchmarks/" cp "$(f 16)" "$mnt/benchmarks/"
erofs "touch in the root" touch "$mnt/new.json"
erofs "cp to inbox/../x (.. is the mount's root, not the store)" cp "$(f 16)" "$in/../x.json"
erofs "mv from the inbox into the tree" bash -c "echo x > '$in/.d.tmp' && mv '$in/.d.tmp' '$mnt/runs/'"
rm -f "$in/.d.tmp"

# hostile names
if cp "$(f 16)" "$in/$(printf 'a\nb.json')" 2>"$work/err"; then fail "a name with a newline was created"; else
	check "a name with a control byte: EINVAL at create" grep -q "Invalid argument" "$work/err"; fi
if cp "$(f 16)" "$in/$(printf 'caf\351.json')" 2>"$work/err"; then fail "a Latin-1 name was created"; else
	check "a name that is not UTF-8: EINVAL at create" grep -q "Invalid argument" "$work/err"; fi
check "neither exists" bash -c "[ \"\$(ls -A '$in' | tr '\n' ' ')\" = '.accepted .rejected artifacts ' ]"
long=$(printf 'x%.0s' $(seq 250)).json
drop "a 255-byte name" "$long" cp "$(f 17)" "$in/$long"
echo '{}' >"$work/$long"
cp "$work/$long" "$in/" 2>/dev/null
check "a refused 255-byte name: its receipts fit NAME_MAX (cut + hash)" bash -c "
	ls '$in/.rejected' | grep -q '^x\{200,\}~[0-9a-f]\{8\}\$' && ls '$in/.rejected' | grep -q '^x\{200,\}~[0-9a-f]\{8\}\.error\$'"
check "mkdir in the inbox: EPERM" bash -c "! mkdir '$in/d' 2>'$work/err' && grep -q 'Operation not permitted' '$work/err'"
check "ln -s in the inbox: EPERM" bash -c "! ln -s x '$in/l' 2>'$work/err' && grep -q 'Operation not permitted' '$work/err'"
check "rmdir .accepted: EPERM" bash -c "! rmdir '$in/.accepted' 2>/dev/null && test -d '$in/.accepted'"
check "writing into .accepted/ is refused" bash -c "! cp '$(f 16)' '$in/.accepted/' 2>/dev/null"
check "receipts can be removed" bash -c "rm '$in/.accepted/m-0000000.json' && ! ls '$in/.accepted' | grep -qx m-0000000.json"

# ---- the live tree: a run that shifts ranks, in a listing the kernel has cached ---------------
ls "$mnt/$simpo" >"$work/before"
readme_runs() { awk '$1 == "runs" { print $2 }' "$mnt/README"; }
before_runs=$(readme_runs)
python3 - "$mnt/$simpo/$hf/manifest.json" "$work/faster.json" <<'EOF'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["KX_SOURCE_ROOT"], "tests", "integration"))
import kxjcs
m = json.load(open(sys.argv[1]))
s = m["run"]["spec"]
# another implementation (a newer huggingface run would supersede the old one, not shift ranks)
m["implementation"]["spec"]["name"] = "handwritten"
m["implementation"]["metadata"]["name"] = "handwritten"
s["implementationDigest"] = kxjcs.digest(m["implementation"])
bench = s["sourceNative"]["benchmark"]
del s["sourceNative"]                 # a new observation, submitted by hand
s["benchmark"] = bench
s["observedAt"] = "2025-01-02T03:04:05.000Z"
s["timing"]["latencyNs"]["median"] = 1000
for x in s.get("measurements", []):  # p20 and p80 follow, in order (rule quantile-order)
    if x.get("metric") == "latency" and x.get("statistic") in ("p20", "p80") and x.get("unit") == "ns":
        x["value"] = 1000
json.dump(m, open(sys.argv[2], "w"))
EOF
liger_id=$(cd "$mnt/$simpo" && ls -d 02-liger-* | sed 's/.*-//')
# the new run names the same documents: their files (one inode each) gain two links, which the
# kernel, holding their attributes for an hour, hears of from the daemon
env_file="$mnt/runs/${hf##*-}/environment.json"
links_before=$(stat -c %h "$env_file")
# Files that follow the ranks, opened before the run arrives and read after: a reader that has
# one open keeps the version it opened, whole (as after rename(2) over a file on a local disk),
# while a new open sees the new version under another inode number (docs/mount.md).
python3 - "$mnt" "$simpo" "$liger_id" "$work/faster.json" "$in/" >"$work/versions" 2>&1 <<'EOF'
import os, re, shutil, sys
mnt, group, rid, src, inbox = sys.argv[1:]
paths = {"tsv": os.path.join(mnt, group, "ranking.tsv"), "sums": os.path.join(mnt, group, "SHA256SUMS"),
         "summary": os.path.join(mnt, "runs", rid, "summary.txt"), "readme": os.path.join(mnt, "README")}
held = {k: open(p, "rb") for k, p in paths.items()}   # opened, nothing read: no page is cached
ino = {k: os.fstat(f.fileno()).st_ino for k, f in held.items()}
shutil.copy(src, inbox)                                # close() returns once the tree shows the run
old = {k: f.read() for k, f in held.items()}
new = {k: open(p, "rb").read() for k, p in paths.items()}
def say(ok, what):
    print("%s %s" % ("ok" if ok else "FAILED", what))
for k in paths:
    say(len(old[k]) == os.fstat(held[k].fileno()).st_size, "%s: the open file reads whole at its size" % k)
    say(old[k] != new[k] and os.stat(paths[k]).st_ino != ino[k], "%s: a new open is a new version" % k)
say(old["tsv"].count(b"\n") == 3 and new["tsv"].count(b"\n") == 4, "ranking.tsv: 2 ranked runs open, 3 after")
say(re.search(rb"rank +2 of 2", old["summary"]) and re.search(rb"rank +3 of 3", new["summary"]),
    "summary.txt: rank 2 of 2 open, 3 of 3 after")
names = lambda b: [l.split(b"  ", 1)[1] for l in b.splitlines()]
say(any(n.startswith(b"02-liger-") for n in names(old["sums"])) and
    any(n.startswith(b"03-liger-") for n in names(new["sums"])), "SHA256SUMS: 02-liger open, 03-liger after")
EOF
check "versions: a run arriving under open rank-following files: 11 verdicts" [ "$(grep -c '^ok \|^FAILED ' "$work/versions")" = 11 ]
while read -r verdict what; do
	if [ "$verdict" = ok ]; then pass "versions: $what"; else fail "versions: $verdict $what"; fi
done <"$work/versions" # a Python traceback fails here, line by line
ls "$mnt/$simpo" >"$work/after"
links_after=$(stat -c %h "$env_file")
check "a shared environment.json has two more links ($links_before -> $links_after)" \
	[ "$links_after" = $((links_before + 2)) ]
check "before: 01-huggingface, 02-liger" bash -c "grep -q '^01-huggingface-' '$work/before' && grep -q '^02-liger-' '$work/before'"
check "at once after close(): the new run is 01, the others moved to 02 and 03" \
	bash -c "[ \$(grep -c '^0[1-3]-' '$work/after') = 3 ] && grep -q '^01-handwritten-' '$work/after' &&
		 grep -q '^02-huggingface-' '$work/after' && grep -q '^03-liger-' '$work/after'"
check "no stale name (02-liger) in the listing" bash -c "! grep -q '^02-liger-' '$work/after'"
check "ranks contiguous, ranking.tsv and SHA256SUMS agree" bash -c "
	. '$KX_SOURCE_ROOT/tests/integration/inbox-lib.sh'; contiguous '$mnt/$simpo' && cd '$mnt/$simpo' && sha256sum -c --quiet SHA256SUMS"
check "README counts the new run ($before_runs -> $(readme_runs))" [ "$(readme_runs)" = $((before_runs + 1)) ]
check "the receipt names its rank directory" grep -q "$simpo/01-handwritten-" "$in/.accepted/faster.json"

unmount "$mnt" "$daemon" || fail "the daemon did not exit cleanly"
check "the daemon wrote nothing to stderr" [ ! -s "$mnt.err" ]

# ---- a remount: leftovers, -o max_manifest, -o spool ------------------------------------------
cp "$(f 18)" "$store/inbox/left.json" # as if a crash had interrupted its decision
mount_fg "$store" "$mnt" -o rw,max_manifest=64K,spool="$work/spool"
check "a file left in the inbox is listed, not decided" test -f "$in/left.json"
check "reading it decides nothing" bash -c "cmp -s '$in/left.json' '$(f 18)' && test -f '$in/left.json'"
touch "$in/left.json"
check "touch (open, utimes, close) decides it" accepted "$mnt" left.json 1
head -c 100000 /dev/zero | tr '\0' ' ' >"$work/100k.json"
cp "$work/100k.json" "$in/" 2>"$work/err"
check "-o max_manifest=64K: a 100 KB file fails with EFBIG" grep -q "File too large" "$work/err"
check "spool/{tmp,new,accepted,rejected} were made" test -d "$work/spool/new" -a -d "$work/spool/accepted"
cp "$(f 21)" "$work/spool/tmp/s.json"
mv "$work/spool/tmp/s.json" "$work/spool/new/s.json"
echo '{}' >"$work/spool/tmp/sbad.json"
mv "$work/spool/tmp/sbad.json" "$work/spool/new/sbad.json"
deadline=$((SECONDS + 20))
until [ -e "$work/spool/accepted/s.json.receipt" ] && [ -e "$work/spool/rejected/sbad.json.error" ]; do
	[ $SECONDS -lt $deadline ] || break
	sleep 0.05
done
check "-o spool: a drop (tmp/ -> new/) is accepted with a receipt" test -e "$work/spool/accepted/s.json.receipt"
path=$(awk '$1 == "added" { print $3 }' "$work/spool/accepted/s.json.receipt" 2>/dev/null)
check "and its run is in the mounted tree ($path)" bash -c ". '$KX_SOURCE_ROOT/tests/integration/inbox-lib.sh'; [ -n '$path' ] && in_tree '$mnt' '$path'"
check "-o spool: a bad drop is rejected with its .error" grep -q "required" "$work/spool/rejected/sbad.json.error"
unmount "$mnt" "$daemon" || fail "the daemon (with a spool) did not exit cleanly"
check "nothing on stderr" [ ! -s "$mnt.err" ]

mount_fg "$store" "$mnt"
check "a read-only mount has no inbox" bash -c "! ls '$mnt' | grep -qx inbox && ! test -e '$mnt/inbox'"
unmount "$mnt" "$daemon" || fail "the read-only daemon did not exit cleanly"
"$KINDEX" --store "$store" verify >"$work/verify" 2>&1
rc=$? # saved first: the $(...) in the message would reset it
check "kindex verify is clean after all that ($(tail -1 "$work/verify"))" [ $rc = 0 ]
finish
