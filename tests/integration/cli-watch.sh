#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `kindex watch DIR`, the spool entrance of SPEC §4 (docs/inbox.md), driven the way a producer
# drives it: write DIR/tmp/NAME, rename it to DIR/new/NAME, look in DIR/accepted or DIR/rejected.
# With --once: a good manifest ends in accepted/ with a receipt naming each run's path (and the run
# is really in the store at that path), a bad one in rejected/ byte for byte with every problem
# listed — the very lines `kindex ingest` prints for the same file —, a JSON Lines file is one
# decision either way, taken names get a suffix and nothing is overwritten (not even a receipt
# whose file was removed), exit status 0 / 1 / 4 (a file that cannot be filed away stays in new/).
# What is not a drop: a hidden name is left alone, a symbolic link is rejected, not followed; a
# 250-byte name is filed under a cut name. Then as a long-running watcher: started in the
# background, files dropped at different times are all decided (each round lists new/ afresh),
# and SIGTERM stops it with status 0.
source "$(dirname "$0")/cli-lib.sh"
manifest_store

expect 0 "$KINDEX" init
python3 "$gen" 12 m >/dev/null || die "gen-manifests failed"
f() { printf '%s/m/m-%07d.json' "$tmp" "$1"; }
sp=$tmp/spool

# drop SRC NAME: what a producer does — write tmp/NAME, rename it into new/
drop() {
	cp "$1" "$sp/tmp/$2" && mv "$sp/tmp/$2" "$sp/new/$2" || die "cannot drop $2"
}
runs() {
	"$KINDEX" ls runs | wc -l
}
# in_store RECEIPT [N]: every "added"/"present" line of RECEIPT names a run that `kindex show`
# finds, at the path the receipt gives, and that path lists the run's files (N lines, when given)
in_store() {
	local receipt=$1 want=${2:-} n=0 kind id path
	while read -r kind id path; do
		case $kind in added | present) ;; *) continue ;; esac
		n=$((n + 1))
		"$KINDEX" show "$id" >"$tmp/show" 2>&1 || { echo "# kindex show $id fails: $(head -1 "$tmp/show")"; return 1; }
		grep -qx "  path             $path" "$tmp/show" || { echo "# $id is not at $path"; return 1; }
		"$KINDEX" ls "$path" 2>/dev/null | grep -qx manifest.json || { echo "# kindex ls $path: no manifest.json"; return 1; }
	done < <(tail -n +2 "$receipt")
	[ "$n" -gt 0 ] && { [ -z "$want" ] || [ "$n" = "$want" ]; } || { echo "# $receipt names $n runs"; return 1; }
}
# empty DIR: nothing in it (hidden names included)
empty() {
	[ -z "$(ls -A "$1")" ] || { echo "# $1 holds: $(ls -A "$1" | tr '\n' ' ')"; return 1; }
}

# ---- --once on a spool that does not exist yet ------------------------------------------------
expect 0 "$KINDEX" watch --once "$sp"
check "--once makes DIR/{tmp,new,accepted,rejected}" test -d "$sp/tmp" -a -d "$sp/new" -a -d "$sp/accepted" -a -d "$sp/rejected"
check "--once with nothing to do: exit 0, '0 accepted, 0 rejected'" contains err "0 accepted, 0 rejected"

# ---- a good manifest ---------------------------------------------------------------------------
drop "$(f 0)" good.json
expect 0 "$KINDEX" watch --once "$sp"
r=$sp/accepted/good.json.receipt
check "accepted: the file is moved to accepted/good.json, byte for byte" cmp -s "$sp/accepted/good.json" "$(f 0)"
check "new/ is empty" empty "$sp/new"
check "the receipt's first line says accepted, 1 run, 1 added" \
	grep -qE '^accepted good\.json at [0-9T:.-]+Z: 1 run \(1 added, 0 already present\)$' "$r"
check "the receipt names the run and its path" grep -qE '^added runs/[0-9a-f]{12} benchmarks/[^ ]+/01-[^ ]+$' "$r"
check "the run is in the store at that path (kindex show, kindex ls)" in_store "$r" 1
id=$(awk '$1 == "added" { print $2 }' "$r")
want=$("$KINDEX" digest "$(f 0)" | awk '$1 == "run" { print $2 }')
check "it is the run that was dropped (digest $want)" bash -c "'$KINDEX' show '$id' | grep -qx '  run              $want'"
check "stdout: 'accepted good.json: 1 added, 0 already present'" contains out "accepted good.json: 1 added, 0 already present"
check "stderr: '1 accepted, 0 rejected'" contains err "1 accepted, 0 rejected"
check "one run in the store" test "$(runs)" = 1

# ---- a bad manifest: three problems ------------------------------------------------------------
python3 "$KX_SOURCE_ROOT/tests/integration/bad-manifest.py" "$(f 1)" "$tmp/bad.json" || die "bad-manifest.py failed"
drop "$tmp/bad.json" bad.json
expect 1 "$KINDEX" watch --once "$sp"
e=$sp/rejected/bad.json.error
check "rejected: kept byte for byte as rejected/bad.json" cmp -s "$sp/rejected/bad.json" "$tmp/bad.json"
check "new/ is empty" empty "$sp/new"
check "bad.json.error: 'rejected bad.json at …: 3 problems; nothing was added'" \
	grep -qE '^rejected bad\.json at [0-9T:.-]+Z: 3 problems; nothing was added$' "$e"
check "… /run/spec/status: enum, with file:line:col" grep -qE '^bad\.json:[0-9]+:[0-9]+: /run/spec/status: enum: ' "$e"
check "… /run/spec/observedAt: timestamp" grep -qE '^bad\.json:[0-9]+:[0-9]+: /run/spec/observedAt: timestamp: ' "$e"
check "… /extra: unknown-member" grep -qE '^bad\.json:[0-9]+:[0-9]+: /extra: unknown-member: ' "$e"
check "… and nothing else (4 lines)" test "$(wc -l <"$e")" = 4
check "stdout: 'rejected bad.json: 3 problems (rejected/bad.json.error)'" contains out "rejected bad.json: 3 problems (rejected/bad.json.error)"
check "stderr: '0 accepted, 1 rejected'" contains err "0 accepted, 1 rejected"
check "nothing was added" test "$(runs)" = 1
mkdir same && cp "$tmp/bad.json" same/
st=0
(cd same && "$KINDEX" ingest bad.json >/dev/null 2>"$tmp/ingest.err") || st=$?
check "kindex ingest of the same file refuses it (exit 1) [$st]" test "$st" = 1
check "… and prints the same problems, word for word, as bad.json.error" \
	diff <(tail -n +2 "$e") <(sed -n 's/^  //p' "$tmp/ingest.err")

# ---- a workload name over 64 KiB: rejected with its rule, not left in new/ as unreadable ---------
python3 "$KX_SOURCE_ROOT/tests/integration/long-workload.py" "$(f 2)" "$tmp/long.json" || die "long-workload.py failed"
drop "$tmp/long.json" long.json
expect 1 "$KINDEX" watch --once "$sp"
check "a 64 KiB workload name: rejected/long.json, byte for byte" cmp -s "$sp/rejected/long.json" "$tmp/long.json"
check "… its .error names the dtype and rule length" \
	grep -qE '^long\.json:[0-9]+:[0-9]+: /workload/spec/dtype: length: ' "$sp/rejected/long.json.error"
check "new/ is empty" empty "$sp/new"

# ---- JSON Lines: one decision ------------------------------------------------------------------
python3 "$gen" 5 jl --jsonl --seed 7 --prefix j >/dev/null || die "gen-manifests --jsonl failed"
drop jl/manifests.jsonl five.jsonl
expect 0 "$KINDEX" watch --once "$sp"
check "a JSON Lines file of 5: one receipt, 5 runs, 5 added" \
	grep -qE '^accepted five\.jsonl at .*: 5 runs \(5 added, 0 already present\)$' "$sp/accepted/five.jsonl.receipt"
check "each of the 5 is in the store at its path" in_store "$sp/accepted/five.jsonl.receipt" 5
check "6 runs in the store" test "$(runs)" = 6
python3 "$gen" 5 jl2 --jsonl --seed 8 --prefix k >/dev/null || die "gen-manifests --jsonl failed"
python3 - jl2/manifests.jsonl "$tmp/bad.jsonl" <<'EOF'
import sys
lines = open(sys.argv[1]).read().split("\n")
lines[3] = lines[3][:80]    # line 4 cut short
open(sys.argv[2], "w").write("\n".join(lines))
EOF
drop "$tmp/bad.jsonl" bad.jsonl
expect 1 "$KINDEX" watch --once "$sp"
check "JSON Lines with one bad line of 5: refused whole, kept byte for byte" cmp -s "$sp/rejected/bad.jsonl" "$tmp/bad.jsonl"
check "… its .error names line 4 (json-syntax) and no other line" \
	bash -c "grep -qE '^bad\.jsonl:4:[0-9]+: \(file\): json-syntax: ' '$sp/rejected/bad.jsonl.error' && [ \$(grep -c '^bad\.jsonl:' '$sp/rejected/bad.jsonl.error') = 1 ]"
check "… and the 4 good lines were not added either" test "$(runs)" = 6

# ---- names already taken: a suffix, nothing overwritten -----------------------------------------
hashes() { sha256sum "$@" | cut -d' ' -f1; }
before=$(hashes "$sp/accepted/good.json" "$sp/accepted/good.json.receipt" "$sp/rejected/bad.json" "$sp/rejected/bad.json.error")
drop "$(f 0)" good.json
drop "$tmp/bad.json" bad.json
expect 1 "$KINDEX" watch --once "$sp"
check "good.json again: accepted/good.json.1 with good.json.1.receipt" test -f "$sp/accepted/good.json.1" -a -f "$sp/accepted/good.json.1.receipt"
check "… which says already present, naming the same run" \
	bash -c "grep -q '(0 added, 1 already present)' '$sp/accepted/good.json.1.receipt' && grep -q '^present $id ' '$sp/accepted/good.json.1.receipt'"
check "bad.json again: rejected/bad.json.1 with bad.json.1.error" cmp -s "$sp/rejected/bad.json.1" "$tmp/bad.json"
check "… the .error lists the same problems" diff <(tail -n +2 "$e") <(tail -n +2 "$sp/rejected/bad.json.1.error")
check "the first files and receipts are untouched" test "$before" = "$(hashes "$sp/accepted/good.json" "$sp/accepted/good.json.receipt" "$sp/rejected/bad.json" "$sp/rejected/bad.json.error")"
check "a round with a good and a bad file: '1 accepted, 1 rejected', exit 1" contains err "1 accepted, 1 rejected"
# a receipt whose file was removed still holds its name
rm "$sp/accepted/good.json.1"
keep=$(hashes "$sp/accepted/good.json.1.receipt")
drop "$(f 0)" good.json
expect 0 "$KINDEX" watch --once "$sp"
check "a receipt left without its file keeps its name: the next one is good.json.2" \
	test -f "$sp/accepted/good.json.2" -a -f "$sp/accepted/good.json.2.receipt" -a "$keep" = "$(hashes "$sp/accepted/good.json.1.receipt")"

# ---- what is not a manifest drop ---------------------------------------------------------------
cp "$(f 2)" "$sp/new/.partial"
ln -s "$(f 3)" "$sp/new/link.json"
long=$(printf 'x%.0s' $(seq 245)).json # 250 bytes: NAME.receipt would pass NAME_MAX
drop "$(f 4)" "$long"
expect 1 "$KINDEX" watch --once "$sp"
check "a hidden name in new/ is skipped and left alone" cmp -s "$sp/new/.partial" "$(f 2)"
check "a symbolic link in new/ is rejected (rule type), not followed" \
	bash -c "test -L '$sp/rejected/link.json' && grep -q '^link.json: (file): type: ' '$sp/rejected/link.json.error'"
cut=$(cd "$sp/accepted" && ls | grep -E '^x{200,}~[0-9a-f]{8}$')
check "a 250-byte name is accepted, filed under a cut name with a hash ($(echo "$cut" | cut -c1-8)…~…)" \
	test -n "$cut" -a -f "$sp/accepted/$cut.receipt"
check "… its receipt names the file in full" bash -c "head -1 '$sp/accepted/$cut.receipt' | grep -q '^accepted $long at '"
check "… at the path the receipt gives" in_store "$sp/accepted/$cut.receipt" 1
check "new/ holds only the hidden file" test "$(ls -A "$sp/new")" = .partial
rm "$sp/new/.partial"

# a file that cannot be filed away (accepted/ not writable: chmod, or chattr +i for root)
frozen=
if [ "$(id -u)" != 0 ]; then
	chmod a-w "$sp/accepted" && frozen=chmod
elif chattr +i "$sp/accepted" 2>/dev/null; then
	frozen=chattr
	trap 'chattr -i "$sp/accepted"; cleanup' EXIT
fi
thaw() {
	case $frozen in
	chmod) chmod u+w "$sp/accepted" ;;
	chattr) chattr -i "$sp/accepted" && trap cleanup EXIT ;;
	esac
}
if [ -n "$frozen" ]; then
	drop "$(f 5)" stuck.json
	st=0
	"$KINDEX" watch --once "$sp" >"$tmp/out" 2>"$tmp/err" || st=$?
	thaw
	check "a file that cannot be filed away: exit 4 [$st]" test "$st" = 4
	check "… it stays in new/" test -f "$sp/new/stuck.json"
	check "… and stdout says so" contains out "cannot ingest $sp/new/stuck.json"
	check "… and stderr" contains err "0 accepted, 0 rejected, some left in new/"
	expect 0 "$KINDEX" watch --once "$sp"
	check "the next round files it (its run is already present: the commit came first)" \
		grep -q '(0 added, 1 already present)' "$sp/accepted/stuck.json.receipt"
else
	echo "ok - # SKIP exit 4: cannot make accepted/ unwritable here (root without chattr +i)"
fi

# ---- the long-running watcher --------------------------------------------------------------------
n0=$(runs)
"$KINDEX" watch "$sp" >"$tmp/w.out" 2>"$tmp/w.err" &
wpid=$!
stop_watcher() { kill -TERM "$wpid" 2>/dev/null; }
trap 'stop_watcher; cleanup' EXIT
# wait_for FILE TEXT SECONDS: until FILE holds TEXT (a deadline, never a bare sleep)
wait_for() {
	local deadline=$((SECONDS + $3))
	until grep -qF -- "$2" "$1" 2>/dev/null; do
		[ $SECONDS -lt $deadline ] || { echo "# no '$2' in $1 after $3 s"; return 1; }
		kill -0 "$wpid" 2>/dev/null || { echo "# the watcher died: $(cat "$tmp/w.err")"; return 1; }
		sleep 0.05
	done
}
check "the watcher says it is watching" wait_for "$tmp/w.err" "watching $sp/new" 10
drop "$(f 6)" live1.json
check "a drop while it waits is accepted" wait_for "$tmp/w.out" "accepted live1.json: 1 added" 10
check "… with its receipt, the run in the store at its path" in_store "$sp/accepted/live1.json.receipt" 1
# later drops, each in a round of its own: every listing of new/ must see them
drop "$tmp/bad.json" live2.json
check "a bad drop later is rejected" wait_for "$tmp/w.out" "rejected live2.json: 3 problems (rejected/live2.json.error)" 10
check "… byte for byte, with its .error" bash -c "cmp -s '$sp/rejected/live2.json' '$tmp/bad.json' && grep -q '^live2.json:.*/run/spec/status: enum: ' '$sp/rejected/live2.json.error'"
drop "$(f 7)" live3.json
check "a third drop is accepted too" wait_for "$tmp/w.out" "accepted live3.json: 1 added" 10
check "the store, read while the watcher holds it, has the 2 new runs" test "$(runs)" = $((n0 + 2))
check "new/ is empty" empty "$sp/new"
check "the watcher is still running" kill -0 "$wpid"
kill -TERM "$wpid"
status=0
wait "$wpid" || status=$?
trap cleanup EXIT
check "SIGTERM stops it with exit status 0 (a rejection is an outcome, not a failure) [$status]" test "$status" = 0
check "it wrote nothing else on stderr" test "$(grep -vc '^watching ' "$tmp/w.err")" = 0
expect 0 "$KINDEX" verify
check "kindex verify is clean afterwards" contains out "no problems"
finish
