#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Identity by exact name (SPEC §2), through `kindex`: names that an older kindex folded into one
# slug are two implementations with two ranks; compare/ pairs split at their only '..'; a name the
# tree uses itself never hides it; a schema-3 store is re-keyed when opened to write and then
# exports exactly what a new store of the same manifests does; `kindex verify` names two names
# that share a path; an observedAt in the future is refused.
source "$(dirname "$0")/cli-lib.sh"
cd "$tmp" || die "no scratch directory"
fixture=$data/store-schema3
group=benchmarks/rms_norm/forward/nvidia-h100-sxm5/hidden4096-bf16

# ---- a new store of the fixture's manifests ----
expect 0 "$KINDEX" --store new init
expect 0 "$KINDEX" --store new ingest "$fixture/manifests.jsonl"
check "17 runs added" contains err "17 runs added"
expect 0 "$KINDEX" --store new cat "$group/ranking.tsv"
cp out ranking.tsv
# one rank per exact name: ライガー 50, Liger 70 (its newer run, 60, is current), liger 80, a 11,
# b..c 21, a..b 31, c 41, カーネル 100
check "ranking.tsv ranks 8 implementations, one row each (ranked rows: $(awk -F'\t' 'NR > 1 && $1 != ""' ranking.tsv | wc -l))" \
	test "$(awk -F'\t' 'NR > 1 && $1 != ""' ranking.tsv | wc -l)" = 8
check "... no implementation twice among them" \
	test "$(awk -F'\t' 'NR > 1 && $1 != "" { print $3 }' ranking.tsv | sort | uniq -d | wc -l)" = 0
check "... 'a' (11 ns) ranks 1" awk -F'\t' 'NR == 2 && $3 == "a" && $4 == 11 { f = 1 } END { exit !f }' ranking.tsv
check "... 'ライガー' (50 ns) ranks 5, as unnamed~5d5d915a, and 'カーネル' (100 ns) ranks 8, as unnamed~3a596a69" \
	awk -F'\t' '$1 == 5 && $3 == "unnamed~5d5d915a" && $4 == 50 { a = 1 } $1 == 8 && $3 == "unnamed~3a596a69" && $4 == 100 { b = 1 } END { exit !(a && b) }' ranking.tsv
check "... 'Liger' (60 ns, newest) and 'liger' (80 ns) are two" \
	awk -F'\t' '$3 == "liger~7b02f2a0" && $1 != "" && $4 == 60 { a = 1 } $3 == "liger" && $4 == 80 { b = 1 } END { exit !(a && b) }' ranking.tsv
check "... Liger's older run (70 ns) is its history, not a rank" \
	awk -F'\t' '$1 == "" && $3 == "liger~7b02f2a0" && $4 == 70 { f = 1 } END { exit !f }' ranking.tsv

expect 0 "$KINDEX" --store new ls compare
check "compare/ lists every pair once ($(wc -l <out) pairs)" test "$(sort out | uniq -d | wc -l)" = 0
check "... 'a' against 'b..c' is a.b~5b1059de, split at the only '..'" contains out "a..b.c~5b1059de/"
while read -r pair; do
	"$KINDEX" --store new ls "compare/$pair" >/dev/null 2>"pair.err" || { cat pair.err >&2; echo "$pair" >>unlisted; }
done <out
check "... and every pair lists" test ! -s unlisted
expect 0 "$KINDEX" --store new compare a 'b..c'
check "kindex compare takes exact names: a against b..c" contains out "rms_norm"
expect 0 "$KINDEX" --store new compare a b.c~5b1059de
check "... or path components" contains out "rms_norm"

expect 0 "$KINDEX" --store new ls benchmarks
check "a kernel named index.html is index.html~0eb54730/, beside benchmarks/index.html" \
	bash -c 'grep -qx "index.html~0eb54730/" out && grep -qx index.html out && [ "$(sort out | uniq -d | wc -l)" = 0 ]'
expect 0 "$KINDEX" --store new verify
check "the new store verifies clean" contains out "no problems"
expect 0 "$KINDEX" -q --store new export new.tree
check "... and exports" test -d new.tree/benchmarks

# ---- the same store, written by kindex before exact names (schema 3) ----
cp -a "$fixture/store" old
chmod -R u+w old
expect 1 "$KINDEX" --store old verify
check "read as it is, verify names the runs kept under a slug" \
	contains err "store-name: its implementation is kept as unnamed, but its name's path component is unnamed~5d5d915a"
check "... and the kernel kept under a reserved name" \
	contains err "benchmark index.html/forward is kept under index.html/forward, but its path is index.html~0eb54730/forward"
check "... and the runs of two GPUs whose slugs dropped their letters, kept as one" \
	bash -c 'grep -c "store-name: its GPU is kept as nvidia-100, but the environment.s path component is nvidia-100~" err | grep -qx 2'
expect 0 "$KINDEX" --store old ingest "$fixture/manifests.jsonl"
check "opened to write (an ingest that adds nothing): 17 already present" contains err "17 already present"
expect 0 "$KINDEX" --store old verify
check "... re-keyed, it verifies clean" contains out "no problems"
expect 0 "$KINDEX" --store old ls benchmarks/rms_norm/full
check "... the two GPUs are two directories, and 'Gpus.TSV' is no longer beside gpus.tsv" \
	bash -c 'grep -qx "nvidia-100~b112c940/" out && grep -qx "nvidia-100~fa383bf9/" out && grep -qx "gpus.tsv~817a6c31/" out'
expect 0 "$KINDEX" -q --store old export old.tree
check "... and exports the new store's tree, byte for byte (but README, which names the store)" \
	diff -r -x README new.tree old.tree

# ---- two names that share a component ----
# collision/manifests.jsonl: two names that fold to one slug and whose SHA-256 share 8 hex digits
# (a birthday search over case variants, about a second in Python); collision/store: both, as
# kindex before exact names stored them (one series)
head -n 1 "$fixture/collision/manifests.jsonl" >first.jsonl
tail -n 1 "$fixture/collision/manifests.jsonl" >second.jsonl
expect 0 "$KINDEX" --store new ingest first.jsonl
expect 1 "$KINDEX" --store new ingest second.jsonl
check "the second name of one path component is refused (rule name-collision), naming the first" \
	bash -c 'grep -q "/implementation/spec/name: name-collision: implementation .coLliSIONseARcHcOllisionsearch. would have the path component collisionsearchcollisionsearch~40d53c54, which .colLisiONSEarcHCollisionsearch. already has" err'
expect 1 "$KINDEX" --store new ingest "$fixture/collision/manifests.jsonl"
check "... and so is a file that holds both, as a whole" contains err "0 accepted (0 runs added"
expect 0 "$KINDEX" --store fresh init
expect 1 "$KINDEX" --store fresh ingest "$fixture/collision/manifests.jsonl"
check "... also into a new store: the second line collides with the first" \
	contains err "manifests.jsonl:2: /implementation/spec/name: name-collision"
expect 0 "$KINDEX" --store new verify
check "... and nothing of the refused was stored" contains out "no problems"
cp -a "$fixture/collision/store" collided
chmod -R u+w collided
expect 1 "$KINDEX" --store collided verify
check "a store that holds both (an older kindex's): verify names the two (rule name-collision)" \
	contains err "names: name-collision: implementations 'coLliSIONseARcHcOllisionsearch' and 'colLisiONSEarcHCollisionsearch' share the path component collisionsearchcollisionsearch~40d53c54"

# ---- the same observation published twice: an alias ----
# KernelIndex's published record of a Liger row (tests/data/fixtures: its own title, workload and
# implementation documents by digest) beside this project's import of the same CSV row
fx=$data/fixtures/flce-forward-a100.manifest.json
flce=benchmarks/fused_linear_cross_entropy/forward/nvidia-a100-sxm4-80gb/hidden4096-tokens16384-vocab128256-bf16
expect 0 "$KINDEX" --store liger init
expect 0 "$KINDEX" --store liger import liger "$csv"
expect 0 "$KINDEX" --store liger cat README
grep -E '^(runs|groups) ' out >counts.before
expect 0 "$KINDEX" --store liger cat "$flce/ranking.tsv"
cp out ranking.before
expect 0 "$KINDEX" --store liger ingest "$fx"
check "KernelIndex's record of an imported row is accepted as an alias" contains err "(0 runs added, 1 alias, 0 already present)"
expect 0 "$KINDEX" --store liger cat "$flce/02-liger-272e401936bf/DIGESTS"
check "the imported run's DIGESTS names it: also-published-as" \
	contains out "also-published-as sha256:b3b20f4a454b2a9a71a2c91dea53d4cb06282e6d0ef2e64b450eb134df0002fe"
expect 0 "$KINDEX" --store liger cat runs/272e401936bf/summary.txt
check "... and its summary.txt" contains out "also published   as sha256:b3b20f4a454b2a9a71a2c91dea53d4cb06282e6d0ef2e64b450eb134df0002fe (runs/b3b20f4a454b)"
expect 0 "$KINDEX" --store liger cat runs/b3b20f4a454b/DIGESTS
check "runs/b3b20f4a454b/ serves the alias: its own digests, and the run it is an alias of" \
	bash -c 'grep -qx "run sha256:b3b20f4a454b2a9a71a2c91dea53d4cb06282e6d0ef2e64b450eb134df0002fe" out &&
		grep -qx "alias-of sha256:272e401936bfa841d98ef25c62215b150d5b3cfda1c394ae74fd87342d9d8e10" out'
expect 0 "$KINDEX" --store liger cat runs/b3b20f4a454b/manifest.json
check "... its manifest, the published run document byte for byte in its canonical form" \
	contains out '"title": "Fused linear + cross-entropy · liger · forward"'
expect 0 "$KINDEX" --store liger cat runs/b3b20f4a454b/summary.txt
check "... and a summary.txt that says it is not ranked" contains out "not ranked: an alias of runs/272e401936bf"
expect 0 "$KINDEX" --store liger cat digests/sha256/b3b20f4a454b2a9a71a2c91dea53d4cb06282e6d0ef2e64b450eb134df0002fe.json
check "/digests serves its run document" contains out '"externalId":"fused_linear_cross_entropy/forward/liger/'
expect 0 "$KINDEX" --store liger cat "$flce/ranking.tsv"
check "nothing is ranked twice: ranking.tsv is as before" cmp -s out ranking.before
expect 0 "$KINDEX" --store liger cat README
check "... nor counted twice: README's runs and groups are as before" diff counts.before <(grep -E '^(runs|groups) ' out)
expect 0 "$KINDEX" --store liger ls "$flce"
check "... and the group lists no directory of it" bash -c '! grep -q b3b20f4a454b out'
expect 0 "$KINDEX" --store liger verify
check "a store with an alias verifies clean" contains out "no problems"
expect 0 "$KINDEX" -q --store liger export liger.tree
check "... and exports it: runs/b3b20f4a454b/ beside runs/272e401936bf/" \
	test -f liger.tree/runs/b3b20f4a454b/summary.txt -a -f liger.tree/runs/272e401936bf/DIGESTS
(cd liger.tree/runs/b3b20f4a454b && sha256sum -c --quiet SHA256SUMS) >/dev/null 2>&1
check "... whose SHA256SUMS verifies" test $? = 0
python3 - "$fx" moved.json <<'PY' || die "cannot write moved.json"
import json, sys
m = json.load(open(sys.argv[1], encoding="utf-8"))
m["run"]["spec"]["measurements"][0]["value"] -= 1  # p20, one ns lower
json.dump(m, open(sys.argv[2], "w"))
PY
expect 1 "$KINDEX" --store liger ingest moved.json
check "the same observation with another measurement is still a conflict, naming the run" \
	contains err "conflict: the same observation (source 'liger-kernel-bench'"

# ---- time ----
python3 - "$fixture/manifests.jsonl" future.json <<'PY' || die "cannot write future.json"
import json, sys
m = json.loads(open(sys.argv[1], encoding="utf-8").readline())
m["run"]["spec"]["observedAt"] = "2262-01-01T00:00:00.000Z"
json.dump(m, open(sys.argv[2], "w"))
PY
expect 1 "$KINDEX" --store new ingest future.json
check "a run observed in 2262 is refused: rule future, at /run/spec/observedAt" \
	contains err "/run/spec/observedAt: future:"

finish
