#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `kindex ingest` with files a user has: a directory of generated manifests (bench/gen-manifests),
# JSON Lines, stdin, a big group (rank numbers widen to 3 digits and still sort), and refusals
# that print "refused FILE" with file:line:col, JSON pointer and rule — one file one decision,
# the other files of the same command still go in.
source "$(dirname "$0")/cli-lib.sh"
manifest_store

expect 0 "$KINDEX" init
python3 "$gen" 300 many >/dev/null || die "gen-manifests failed"
expect 0 "$KINDEX" ingest many
check "300 generated manifests: all accepted" contains err "300 files: 300 accepted (300 runs added, 0 already present), 0 refused"
expect 0 "$KINDEX" verify
check "verify after ingesting a directory: no problems" contains out "no problems"
expect 0 "$KINDEX" ls runs
check "ls runs: 300" test "$(wc -l <out)" = 300
expect 0 "$KINDEX" ingest many
check "the same directory again: all already present" contains err "300 files: 300 accepted (0 runs added, 300 already present), 0 refused"

# JSON Lines, stdin
python3 "$gen" 40 lines --jsonl --seed 7 --prefix j >/dev/null || die "gen-manifests --jsonl failed"
jl=$(ls lines/*.jsonl)
check "gen-manifests wrote one JSON Lines file of 40 lines" test "$(wc -l <"$jl")" = 40
expect 0 "$KINDEX" ingest - <"$jl"
check "JSON Lines on stdin: 40 runs added" contains err "1 file: 1 accepted (40 runs added, 0 already present)"

# a large JSON Lines file is one batch (all or nothing): ingested, it must be in the store's tables,
# not left in its write-ahead log, which every later open — each `kindex cat`, a mount — would
# replay into memory (100,000 runs: 161 MB of log, a 492 MiB peak per open)
python3 "$gen" 12000 biglines --jsonl --seed 11 --prefix b >/dev/null || die "gen-manifests --jsonl failed"
expect 0 "$KINDEX" --store jlstore init
expect 0 "$KINDEX" --store jlstore ingest --max-bytes 64M biglines/*.jsonl
check "12,000 runs in one JSON Lines file: accepted" contains err "1 file: 1 accepted (12000 runs added"
logged=$(cat jlstore/*.log | wc -c)
check "and written to the tables: the log holds $logged bytes (under 1 MiB)" test "$logged" -lt 1048576
expect 0 "$KINDEX" --store jlstore ls runs
check "ls runs after it: 12000" test "$(wc -l <out)" = 12000

# refusals
cp many/m-0000001.json good.json
printf '{\n  "run": {\n    "kind": 5\n  }\n}\n' >bad.json
expect 1 "$KINDEX" ingest bad.json
check "a bad file: 'refused bad.json'" contains err "refused bad.json"
check "... with file:line:col, pointer and rule" contains err "bad.json:3:13: /run/kind: type:"
check "... and a missing member at the file's start" contains err "bad.json:1:1: (file): required:"
check "... and the summary" contains err "1 file: 0 accepted (0 runs added, 0 already present), 1 refused"

# a directory with good, bad and hidden files: one decision per file
mkdir mixed
python3 "$gen" 3 mixed --seed 99 --prefix ok >/dev/null
cp bad.json mixed/zz-bad.json
printf '{"truncated": ' >mixed/.partial.tmp
head -c 200 many/m-0000002.json >mixed/zz-cut.json
expect 1 "$KINDEX" ingest mixed
check "mixed directory: 3 accepted, 2 refused, the hidden file skipped" contains err "5 files: 3 accepted (3 runs added, 0 already present), 2 refused"
check "the cut file is refused at its end" grep -qE 'zz-cut.json:[0-9]+:[0-9]+: \(file\): json-syntax' err
check "hidden files are not read" bash -c '! grep -q partial "$1"' _ "$tmp/err"
expect 0 "$KINDEX" ls runs
check "the accepted files were stored: 343 runs" test "$(wc -l <out)" = 343

# JSON Lines with bad lines 2 and 5: both reported, nothing stored
sed -n '1,6p' "$jl" >six.jsonl
python3 - six.jsonl <<'PY'
import sys
p = sys.argv[1]
lines = open(p).read().split('\n')
lines[1] = lines[1][:50]
lines[4] = lines[4].replace('"status":"passed"', '"status":"done"').replace('"status": "passed"', '"status": "done"')
open(p, 'w').write('\n'.join(lines))
PY
python3 "$gen" 6 fresh6 --jsonl --seed 1234 --prefix x >/dev/null
expect 1 "$KINDEX" ingest six.jsonl
check "JSON Lines: line 2 reported" grep -qE '^  six.jsonl:2:[0-9]+: \(file\): json-syntax' err
check "JSON Lines: line 5 reported" grep -qE '^  six.jsonl:5:[0-9]+: /run/spec/status: enum' err
check "JSON Lines: no other line" bash -c '! grep -E "^  six.jsonl:[1346]:" "$1"' _ "$tmp/err"

# a valid manifest of 71 KB whose workload's name text passes 64 KiB: refused with its rule, as
# any invalid manifest is, not failed as unreadable
python3 "$KX_SOURCE_ROOT/tests/integration/long-workload.py" many/m-0000003.json long.json || die "long-workload.py failed"
expect 1 "$KINDEX" ingest long.json
check "a 64 KiB workload name: 'refused long.json', exit 1" contains err "refused long.json: 1 problem"
check "... naming the dtype and rule length" \
	grep -qE '^  long\.json:[0-9]+:[0-9]+: /workload/spec/dtype: length: .*over the limit of 65536' err
python3 "$KX_SOURCE_ROOT/tests/integration/long-workload.py" many/m-0000003.json edge.json 65000 || die "long-workload.py failed"
expect 0 "$KINDEX" ingest edge.json
check "a workload name under the limit is accepted" contains err "1 file: 1 accepted (1 run added, 0 already present)"

# --max-bytes
expect 1 "$KINDEX" ingest --max-bytes 100 good.json
check "--max-bytes: the file is refused for its size" grep -qE 'good.json: \(file\): size' err

# a big group: three-digit ranks that ls sorts in rank order
python3 "$gen" 130 big --big-group 120 --seed 5 --prefix big >/dev/null
expect 0 "$KINDEX" --store bigstore init
expect 0 "$KINDEX" --store bigstore ingest big
expect 0 "$KINDEX" --store bigstore export bigex
tsv=$(grep -l -m1 . $(find bigex/benchmarks -name ranking.tsv) /dev/null | while read -r f; do
	echo "$(wc -l <"$f") $f"
done | sort -n | tail -1 | cut -d' ' -f2)
g=$(dirname "$tsv")
nruns=$(($(wc -l <"$tsv") - 1))
check "the big group holds 120 runs or more ($nruns)" test "$nruns" -ge 120
check "its ranks have three digits" test -d "$(ls -d "$g"/001-* | head -1)"
check "ls order is rank order" diff <(cd "$g" && ls -d [0-9]*-*) <(awk -F'\t' 'NR > 1 && $1 != "" { print $2 }' "$tsv")
check "unranked runs are the failed-<impl>-<id> directories" \
	diff <(cd "$g" && ls -d failed-* 2>/dev/null) <(awk -F'\t' 'NR > 1 && $1 == "" { print $2 }' "$tsv" | sort)
check "ranks in ranking.tsv are 1..n, values ascending" awk -F'\t' 'NR > 1 && $1 != "" { if ($1 != NR - 1 || (NR > 2 && $4 + 0 < prev)) exit 1; prev = $4 + 0 }' "$tsv"
expect 0 "$KINDEX" --store bigstore verify

# a disk whose syncs of the store's log fail (tests/integration/log-sync.c, LD_PRELOAD): the runs
# are committed but may not survive a power loss, and kindex says so rather than exit 0
shim=${KX_LOG_SYNC:?KX_LOG_SYNC must name the log-sync shim}
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 # the sanitizer's runtime first
python3 "$gen" 2 synced --seed 41 >/dev/null
expect 0 "$KINDEX" --store syncstore init
KX_TEST_LOG_SYNC=EIO LD_PRELOAD=$shim "$KINDEX" --store syncstore ingest synced/m-0000000.json >out 2>err
status=$?
check "ingest on a disk whose log syncs fail exits 4 ($status)" test "$status" = 4
check "... saying the log could not be synced, and why" contains err "cannot sync the store's log: Input/output error"
KX_TEST_LOG_SYNC=EIO LD_PRELOAD=$shim "$KINDEX" --store syncstore import liger "$csv" >out 2>err
status=$?
check "import liger on it exits 4 ($status)" test "$status" = 4
check "... saying so, and no 'imported' line" bash -c "grep -q \"cannot sync the store's log\" err && ! grep -q imported out"
expect 0 "$KINDEX" --store syncstore ingest synced
check "once the disk is sound, the same file again: already present, and the new one added" \
	contains err "2 files: 2 accepted (1 run added, 1 already present), 0 refused"
expect 0 "$KINDEX" --store syncstore verify
check "... and the store verifies clean" contains out "no problems"
finish
