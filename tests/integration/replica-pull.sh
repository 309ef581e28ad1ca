#!/bin/bash
# SPDX-License-Identifier: MIT
# kindex pull (docs/replicas.md): the newest generation a writer publishes is copied, verified and
# made DST/current; every run the writer accepted is on the replica, a signed one with its signature
# and the trust of its key (SPEC §10) and a note about it (§8); a second pull is a no-op;
# table files are hard-linked from the previous copy. Faults: a pull killed with SIGKILL (and its
# rsync) mid-copy leaves current naming a complete generation that verifies, and the next pull
# completes; a full disk on the replica (a small tmpfs) fails with "No space left on device",
# exit 4, current unchanged and nothing partial left; a generation a mount holds (its shared
# flock) is kept until it is let go. SRC as host:path goes through the remote shell. Bad input
# is refused with a message naming it.
. "$(dirname "$0")/mount-lib.sh"
. "$(dirname "$0")/inbox-lib.sh"
. "$(dirname "$0")/replica-lib.sh"

command -v rsync >/dev/null || { echo "1..0 # SKIP rsync is missing"; exit 77; }
store=$work/store pub=$work/pub spool=$work/spool dst=$work/dst
"$KINDEX" -q --store "$store" init >/dev/null || die "kindex init failed"
gen 10 "$work/m"
# a signed run and the key the store trusts (SPEC §10): a replica carries both
"$KINDEX" -q keygen "$work/lab" >/dev/null || die "kindex keygen failed"
first=$(ls "$work"/m/*.json | head -1)
"$KINDEX" -q sign --key "$work/lab.key" -o "$work/signed.jsonl" "$first" || die "kindex sign failed"
"$KINDEX" -q --store "$store" ingest "$work/signed.jsonl" || die "ingest of the signed run failed"
"$KINDEX" -q --store "$store" trust add "$work/lab.pub" --name lab >/dev/null || die "kindex trust add failed"
signed=$("$KINDEX" --store "$store" ls runs | head -1 | tr -d /)
# and a note about it (SPEC §8): a replica carries that too
"$KINDEX" -q --store "$store" attest "$signed" --note "carried to every replica" --author lab ||
	die "kindex attest failed"

# and an artifact's bytes (SPEC §9), 20 MiB: more than a memtable, so RocksDB writes them out to
# its blob files, which a replica carries and links like tables
head -c 20971520 /dev/urandom >"$work/artifact.bin"
art=$(sha256sum "$work/artifact.bin" | cut -c1-64)
"$KINDEX" -q --store "$store" ingest --artifact "$work/artifact.bin" || die "ingest of the artifact failed"

# start_writer STORE PUB: kindex watch --publish in the background; sets $writer
start_writer() {
	"$KINDEX" -q --store "$1" watch --publish "$2" --publish-interval 0.1 "$spool" >/dev/null 2>>"$work/writer.err" &
	writer=$!
	pids+=("$writer")
}
stop_writer() {
	kill -TERM "$writer" && wait "$writer"
}
# drop FILE...: into the spool, as a harness host's rsync would (tmp/, then a rename into new/)
drop() {
	local f
	for f in "$@"; do
		cp "$f" "$spool/tmp/${f##*/}" && mv "$spool/tmp/${f##*/}" "$spool/new/${f##*/}" || return 1
	done
}
# same_runs STORE REPLICA: every run of the writer's store is on the replica, and no other
same_runs() {
	diff <(runs_of "$1") <(runs_of "$2") >"$work/diff" || { sed 's/^/# /' "$work/diff"; return 1; }
}

mkdir -p "$spool"
start_writer "$store" "$pub"
deadline=$((SECONDS + 20))
until [ -d "$spool/new" ] || [ $SECONDS -ge $deadline ]; do sleep 0.05; done
drop "$work"/m/*.json || die "cannot drop into the spool"
check "the writer publishes the drops" wait_runs "$pub" 10
check "... and the sizes it keeps after them, and stops publishing" wait_settled "$pub"
"$KINDEX" pull "$pub" "$dst" >"$work/out" 2>&1
check "the first pull succeeds ($(cat "$work/out"))" grep -q "^pulled generation [0-9]* from .*the first copy, verified" "$work/out"
g1=$(published_field "$pub" generation)
check "current names gen-$g1" [ "$(readlink "$dst/current")" = "gen-$g1" ]
check "the replica verifies" verifies "$dst/current"
stop_writer
check "every run the writer accepted is on the replica" same_runs "$store" "$dst/current"
check "the replica has the signature and the key's trust: SIGNATURES says lab, valid, trusted" \
	bash -c "'$KINDEX' --store '$dst/current' cat runs/$signed/SIGNATURES | sed -n 2p | cut -f2,4,5 | grep -qx 'lab	yes	yes'"
check "the replica has the run's note, listed and shown as the writer's" \
	bash -c "[ \"\$('$KINDEX' --store '$dst/current' ls runs/$signed/attestations)\" = \"\$('$KINDEX' --store '$store' ls runs/$signed/attestations)\" ] &&
		'$KINDEX' --store '$dst/current' cat runs/$signed/summary.txt | grep -q '^  01 note  .* by lab: carried to every replica$'"
check "and its manifest.json carries the signature as the writer's does" \
	bash -c "cmp -s <('$KINDEX' --store '$dst/current' cat runs/$signed/manifest.json) \
		<('$KINDEX' --store '$store' cat runs/$signed/manifest.json) &&
		'$KINDEX' --store '$store' cat runs/$signed/manifest.json | grep -q '\"signatures\"'"
check "the replica serves the artifact byte for byte" \
	bash -c "'$KINDEX' --store '$dst/current' cat digests/sha256/$art | cmp -s - '$work/artifact.bin'"
blob=$(cd "$dst/current" && ls -- *.blob 2>/dev/null | head -1)
check "in blob files ($blob)" test -n "$blob"
blob_ino=$(stat -c %i "$dst/current/$blob" 2>/dev/null)
mkdir -p "$work/mnt"
env --default-signal "$KINDEXFS" "$work/mnt" -f -o follow="$dst/current" 2>"$work/mnt.err" &
follower=$!
pids+=("$follower")
mounts+=("$work/mnt")
wait_mounted "$work/mnt" "$follower" || die "kindexfs -o follow did not mount"
check "a follow mount serves the artifact byte for byte" cmp -s "$work/mnt/digests/sha256/$art" "$work/artifact.bin"
unmount "$work/mnt" "$follower" || fail "the follow mount did not unmount cleanly"
"$KINDEX" pull "$pub" "$dst" >"$work/out" 2>&1
check "a second pull copies nothing ($(cat "$work/out"))" grep -q "is up to date: generation $g1" "$work/out"

# a bigger generation: the Liger import (a 3 MB table file), copied slowly and killed mid-copy
"$KINDEX" -q --store "$store" import liger "$LIGER_CSV" >/dev/null || die "kindex import liger failed"
start_writer "$store" "$pub"
check "the writer publishes the import" wait_generation "$pub" $((g1 + 1))
wait_settled "$pub" >/dev/null || fail "the writer still publishes: $(published_field "$pub" generation)"
g2=$(published_field "$pub" generation)
cat >"$work/slow-rsync" <<'SH'
#!/bin/sh
exec rsync --bwlimit=200 "$@"
SH
chmod +x "$work/slow-rsync"
KINDEX_RSYNC=$work/slow-rsync "$KINDEX" pull "$pub" "$dst" >/dev/null 2>&1 &
puller=$!
pids+=("$puller")
copying() { # a table file on its way into the partial copy
	find "$dst/gen-$g2.partial" -name '.*.sst.*' 2>/dev/null | grep -q .
}
deadline=$((SECONDS + 20))
until copying || [ $SECONDS -ge $deadline ]; do sleep 0.05; done
check "the slow pull is copying a table file" copying
children=$(pgrep -P "$puller")
kill -KILL "$puller"
wait "$puller" 2>/dev/null
gone() { # PID...: each has exited within 10 s (a zombie of a dead parent is reaped by init)
	local p
	for p in "$@"; do
		exits "$p" 10 && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null || return 1
	done
}
check "its rsync ($children) dies with it" gone $children
check "current still names gen-$g1" [ "$(readlink "$dst/current")" = "gen-$g1" ]
check "which still verifies" verifies "$dst/current"
"$KINDEX" pull "$pub" "$dst" >"$work/out" 2>&1
check "the next pull completes ($(cat "$work/out"))" grep -q "^pulled generation $g2 .*linked from gen-$g1, verified" "$work/out"
# gen-$g1 was verified whole and says so (VERIFIED): gen-$g2 only for what the writer added after it
s1=$("$KINDEX" --store "$dst/gen-$g2" cat README 2>/dev/null | awk '$1 == "generation" { print $2 }')
check "... what was added after gen-$g1's store generation only" \
	grep -q "verified what was added after store generation [0-9]*)" "$work/out"
last=$(cd "$dst/gen-$g2" && ls -- *.sst | sort -n | tail -1)
check "gen-$g2 has its VERIFIED too: store generation $s1, the store's creation, its highest table" \
	grep -qx "kindexfs-verified $s1 [0-9]* $((10#${last%.sst}))" "$dst/gen-$g2/VERIFIED"
check "and removes the partial copy" bash -c "! ls -d '$dst'/*.partial 2>/dev/null | grep -q ."
check "current names gen-$g2" [ "$(readlink "$dst/current")" = "gen-$g2" ]
check "gen-$g2 verifies" verifies "$dst/current"
check "its blob file $blob is gen-$g1's, linked" test "$(stat -c %i "$dst/gen-$g2/$blob")" = "$blob_ino"
stop_writer
check "every run the writer accepted is on the replica, the import's too" same_runs "$store" "$dst/current"
check "the older generation, unused, is removed" [ ! -e "$dst/gen-$g1" ]

# a generation a mount holds is kept until it lets go (a follow mount's shared flock, here flock -s)
start_writer "$store" "$pub"
python3 "$KX_SOURCE_ROOT/bench/gen-manifests" 1 "$work/one" --seed 11 >/dev/null || die "gen-manifests failed"
drop "$work/one/m-0000000.json" || die "cannot drop into the spool"
check "the writer publishes one more run" wait_generation "$pub" $((g2 + 1))
wait_settled "$pub" >/dev/null || fail "the writer still publishes: $(published_field "$pub" generation)"
g3=$(published_field "$pub" generation)
flock -s "$dst/gen-$g2" sleep 600 &
holder=$!
pids+=("$holder")
deadline=$((SECONDS + 10))
until [ -n "$(pgrep -P "$holder")" ] || [ $SECONDS -ge $deadline ]; do sleep 0.05; done
"$KINDEX" pull "$pub" "$dst" >"$work/out" 2>&1
check "a pull keeps the generation in use ($(cat "$work/out"))" grep -q "0 older generations removed, 1 kept" "$work/out"
check "gen-$g2 is still there" test -f "$dst/gen-$g2/CURRENT"
kill "$(pgrep -P "$holder")" "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
"$KINDEX" pull "$pub" "$dst" >"$work/out" 2>&1
check "once let go, the next pull removes it ($(cat "$work/out"))" bash -c "[ ! -e '$dst/gen-$g2' ] && grep -q '1 older generation removed' '$work/out'"

# SRC as host:path: rsync through the remote shell ($RSYNC_RSH), here one that runs it locally
cat >"$work/fake-ssh" <<'SH'
#!/bin/sh
shift # the host
exec sh -c "$*"
SH
chmod +x "$work/fake-ssh"
RSYNC_RSH=$work/fake-ssh "$KINDEX" pull "somehost:$pub" "$work/remote" >"$work/out" 2>&1
check "kindex pull host:path copies through the remote shell ($(cat "$work/out"))" \
	grep -q "^pulled generation $g3 from somehost:" "$work/out"
check "that copy verifies" verifies "$work/remote/current"
# --verify-all verifies all of the copy, whatever VERIFIED says; --no-verify leaves no VERIFIED
python3 "$KX_SOURCE_ROOT/bench/gen-manifests" 1 "$work/two" --seed 13 --prefix two >/dev/null || die "gen-manifests failed"
drop "$work/two/two-0000000.json" || die "cannot drop into the spool"
check "the writer publishes one more run" wait_generation "$pub" $((g3 + 1))
wait_settled "$pub" >/dev/null || fail "the writer still publishes: $(published_field "$pub" generation)"
"$KINDEX" pull --verify-all "$pub" "$dst" >"$work/out" 2>&1
check "kindex pull --verify-all verifies the whole copy ($(cat "$work/out"))" \
	bash -c "grep -q 'linked from gen-$g3, verified)' '$work/out' && ! grep -q 'added after' '$work/out'"
"$KINDEX" pull --verify-all --no-verify "$pub" "$dst" >"$work/out" 2>&1
rc=$?
check "--verify-all with --no-verify is refused: exit 2 ($(cat "$work/out"))" [ "$rc" -eq 2 ]
RSYNC_RSH=$work/fake-ssh "$KINDEX" pull --no-verify "somehost:$pub" "$work/remote" >"$work/out" 2>&1
check "a copy pulled with --no-verify has no VERIFIED ($(cat "$work/out"))" test ! -e "$work/remote/current/VERIFIED"
stop_writer

# a JSON Lines drop appears all or nothing: sent by rsync, published every 20 ms, every generation kept, and
# pulled as fast as pull goes while the 1,000 runs are ingested — each holds none of them or all
python3 "$KX_SOURCE_ROOT/bench/gen-manifests" 1000 "$work/many" --seed 12 >/dev/null || die "gen-manifests failed"
python3 -c 'import json, sys
for p in sys.argv[1:]:
    print(json.dumps(json.load(open(p))))' "$work"/many/*.json >"$work/many.jsonl" || die "cannot write JSON Lines"
before=$(runs_of "$store" | wc -l)
"$KINDEX" -q --store "$store" watch --publish "$pub" --publish-interval 0.02 --publish-keep 1000 "$spool" \
	>/dev/null 2>>"$work/writer.err" &
writer=$!
pids+=("$writer")
# as a harness host sends it (docs/replicas.md): rsync straight into new/, through the remote shell
RSYNC_RSH=$work/fake-ssh rsync -a "$work/many.jsonl" "somehost:$spool/new/" || die "cannot rsync into the spool"
counts=
deadline=$((SECONDS + 30))
while [ $SECONDS -lt $deadline ]; do
	"$KINDEX" -q pull --no-verify "$pub" "$dst" >/dev/null 2>>"$work/pull.err" || break
	n=$(runs_of "$dst/current" | wc -l)
	counts+=" $n"
	[ "$n" -gt "$before" ] && break
done
stop_writer
all_or_nothing() { # N...: every count is $before or $before + 1000, the last the latter
	local n last=
	for n; do
		[ "$n" = "$before" ] || [ "$n" = $((before + 1000)) ] || { echo "# a copy holds $n runs"; return 1; }
		last=$n
	done
	[ "$last" = $((before + 1000)) ]
}
check "every pull during the ingest holds $before or $((before + 1000)) runs (${counts# })" all_or_nothing $counts
check "and no pull failed" [ ! -s "$work/pull.err" ]
check "the file rsync wrote into new/ was accepted whole, once" \
	bash -c "grep -q ': 1000 runs (1000 added, 0 already present)' '$spool/accepted/many.jsonl.receipt'"
counts= gens=0
for g in "$pub"/gen-*; do
	[ "${g##*/gen-}" -gt "$g3" ] || continue # published before the drop
	counts+=" $(runs_of "$g" | wc -l)"
	gens=$((gens + 1))
done
check "so does every generation the writer published after gen-$g3 ($gens)" all_or_nothing $counts

# an artifact stored after the replica's last verified copy: the next pull, which verifies only what
# was added since, hashes its bytes too — damaged in the publication, the pull is refused
# (a run more, published and pulled: the copies above were --no-verify, this one is verified whole)
python3 "$KX_SOURCE_ROOT/bench/gen-manifests" 1 "$work/three" --seed 14 --prefix three >/dev/null || die "gen-manifests failed"
"$KINDEX" -q --store "$store" ingest "$work/three" || die "ingest failed"
"$KINDEX" -q --store "$store" watch --once --publish "$pub" "$spool" >/dev/null 2>>"$work/writer.err"
"$KINDEX" pull "$pub" "$dst" >"$work/out" 2>&1
grep -q "(the first copy, verified)\|, verified)" "$work/out" || die "a verified pull failed: $(cat "$work/out")"
head -c 20971520 /dev/urandom >"$work/late.bin" # past a memtable: a blob file of its own
late=$(sha256sum "$work/late.bin" | cut -c1-64)
"$KINDEX" -q --store "$store" ingest --artifact "$work/late.bin" || die "ingest of the artifact failed"
"$KINDEX" -q --store "$store" watch --once --publish "$pub" "$spool" >/dev/null 2>>"$work/writer.err"
gl=$(published_field "$pub" generation)
python3 - "$pub/gen-$gl" "$work/late.bin" <<'PY' || die "the artifact's bytes are in no published blob file"
import glob, os, sys
want = open(sys.argv[2], "rb").read()[10485760:10485760 + 64]
for f in glob.glob(sys.argv[1] + "/*.blob"):
    b = bytearray(open(f, "rb").read())
    at = b.find(want)
    if at >= 0:  # a damaged copy in its place (the writer's store keeps its own link)
        b[at + 7] ^= 0x20
        open(f + ".tmp", "wb").write(bytes(b))
        os.rename(f + ".tmp", f)
        sys.exit(0)
sys.exit(1)
PY
was=$(readlink "$dst/current")
"$KINDEX" pull "$pub" "$dst" >"$work/out" 2>&1
rc=$?
check "a pull of damaged artifact bytes added since its last copy: exit 1 ($rc)" [ "$rc" = 1 ]
check "naming the artifact ($(grep -m1 sha256:$late "$work/out"))" grep -q "artifact sha256:$late: store-artifact: " "$work/out"
check "current still names $was" [ "$(readlink "$dst/current")" = "$was" ]
python3 "$KX_SOURCE_ROOT/bench/gen-manifests" 1 "$work/four" --seed 15 --prefix four >/dev/null || die "gen-manifests failed"
"$KINDEX" -q --store "$store" ingest "$work/four" || die "ingest failed"
"$KINDEX" -q --store "$store" watch --once --publish "$pub" "$spool" >/dev/null 2>>"$work/writer.err"
"$KINDEX" pull "$pub" "$dst" >"$work/out" 2>&1
check "the next publication, undamaged, is pulled ($(cat "$work/out"))" \
	grep -q "^pulled generation $((gl + 1)) .*verified what was added after" "$work/out"
check "its replica serves the artifact byte for byte" \
	bash -c "'$KINDEX' --store '$dst/current' cat digests/sha256/$late | cmp -s - '$work/late.bin'"

# a full disk on the replica: a generation that does not fit
disk=$work/disk
mkdir -p "$disk"
if mount -t tmpfs -o size=1m kindex-test-replica "$disk" 2>/dev/null; then
	mounts+=("$disk")
	small=$work/small pub2=$work/pub2
	"$KINDEX" -q --store "$small" init >/dev/null && "$KINDEX" -q --store "$small" ingest "$work/m" >/dev/null ||
		die "the small store failed"
	"$KINDEX" -q --store "$small" watch --once --publish "$pub2" "$spool" >/dev/null 2>&1
	"$KINDEX" pull "$pub2" "$disk/dst" >"$work/out" 2>&1
	check "a small generation fits ($(cat "$work/out"))" grep -q "^pulled generation 1" "$work/out"
	"$KINDEX" -q --store "$small" import liger "$LIGER_CSV" >/dev/null || die "kindex import liger failed"
	"$KINDEX" -q --store "$small" watch --once --publish "$pub2" "$spool" >/dev/null 2>&1
	"$KINDEX" pull "$pub2" "$disk/dst" >"$work/out" 2>"$work/err"
	rc=$?
	check "the Liger generation does not: exit 4 ($rc)" [ "$rc" = 4 ]
	check "with the reason ($(cat "$work/err"))" \
		grep -q "kindex: pull: cannot copy generation 2 from .*No space left on device" "$work/err"
	check "current still names gen-1" [ "$(readlink "$disk/dst/current")" = gen-1 ]
	check "which verifies" verifies "$disk/dst/current"
	check "and nothing partial is left" bash -c "! ls -d '$disk/dst'/*.partial 2>/dev/null | grep -q ."
	umount "$disk"
else
	echo "# cannot mount a tmpfs (not root?): the full-disk checks are skipped"
fi

# bad input
"$KINDEX" pull "$pub" >/dev/null 2>"$work/err"
rc=$?
check "one operand is a usage error ($rc: $(cat "$work/err"))" bash -c "[ $rc = 2 ] && grep -q 'give SRC' '$work/err'"
"$KINDEX" pull --fast "$pub" "$dst" >/dev/null 2>"$work/err"
rc=$?
check "an unknown option is named ($rc: $(cat "$work/err"))" bash -c "[ $rc = 2 ] && grep -q \"unknown option '--fast'\" '$work/err'"
"$KINDEX" pull "$work/m" "$dst" >/dev/null 2>"$work/err"
rc=$?
check "a SRC without PUBLISHED: exit 3 ($rc: $(cat "$work/err"))" \
	bash -c "[ $rc = 3 ] && grep -q \"cannot read '$work/m/PUBLISHED' (is it a publish directory?)\" '$work/err'"
mkdir -p "$work/badpub" && printf 'generation 1\nsequence x\n' >"$work/badpub/PUBLISHED"
"$KINDEX" pull "$work/badpub" "$dst" >/dev/null 2>"$work/err"
rc=$?
check "a damaged PUBLISHED: exit 1, file and line named ($rc: $(cat "$work/err"))" \
	bash -c "[ $rc = 1 ] && grep -q \"badpub/PUBLISHED' is not valid: .*badpub/PUBLISHED:2: 'x' is not a number\" '$work/err'"
flock "$dst/.pull.lock" sleep 600 &
holder=$!
pids+=("$holder")
deadline=$((SECONDS + 10))
until [ -n "$(pgrep -P "$holder")" ] || [ $SECONDS -ge $deadline ]; do sleep 0.05; done
"$KINDEX" pull "$pub" "$dst" >/dev/null 2>"$work/err"
rc=$?
check "a second pull at once: exit 3 ($rc: $(cat "$work/err"))" bash -c "[ $rc = 3 ] && grep -q 'another kindex pull is copying' '$work/err'"
kill "$(pgrep -P "$holder")" "$holder" 2>/dev/null
check "the writer said nothing on stderr" [ ! -s "$work/writer.err" ]
finish
