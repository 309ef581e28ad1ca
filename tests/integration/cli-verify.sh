#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `kindex verify` on a store damaged on purpose (tests/integration/cli-corrupt.c writes to the
# RocksDB directory behind kindex's back): a document that no longer hashes to its key, a missing
# rank-index entry or one whose copy of the run record differs, a missing source-index entry, a
# missing waiting-index entry. Each must be caught: exit 1 and a line that
# names the record and the problem. The undamaged store verifies clean.
source "$(dirname "$0")/cli-lib.sh"
cd "$tmp"
: "${KX_CORRUPT:?KX_CORRUPT must name the cli-corrupt helper}"

expect 0 "$KINDEX" --store good init
expect 0 "$KINDEX" --store good import liger "$csv"
expect 0 "$KINDEX" --store good verify
check "the imported store verifies clean" contains out "no problems"
records=$(grep -oE '[0-9]+ records' out | cut -d' ' -f1)

for damage in doc index index-copy index-nocopy source current current-drop; do
	cp -a good "$damage"
	expect 0 "$KX_CORRUPT" "$damage" "$damage"
	key=$(cat out)
	[[ -n $key ]] || die "cli-corrupt changed nothing ($damage)"
	expect 1 "$KINDEX" --store "$damage" verify
	check "$damage damage: verify says the store is damaged" contains err "is damaged"
	case $damage in
	doc)
		# key = 'D' (44) + the document digest
		check "a tampered document: digest-mismatch, naming the document" \
			contains err "document sha256:${key:2}: digest-mismatch"
		;;
	index)
		# key = 'I' (49) + group[32] + class + value + observed + run[32]
		run=${key: -64}
		group=${key:2:64}
		check "a missing rank-index entry: named for its run" contains err "run sha256:$run: store-index: the rank index has no entry for it"
		check "... and the group's counts disagree" contains err "group sha256:$group: store-count"
		;;
	index-copy)
		check "a rank-index entry whose copy of the record differs: named for its run" \
			contains err "run sha256:${key: -64}: store-index: holds a copy of the run record that differs"
		;;
	index-nocopy)
		check "a rank-index entry without its copy of the record: named for its run" \
			contains err "run sha256:${key: -64}: store-index: holds no copy of the run record"
		;;
	source)
		check "a missing source-index entry: named" contains err "store-index: the source index has no entry for liger-kernel-bench"
		;;
	current | current-drop)
		# key = 'C' (43) + group[32] + the implementation's name
		impl=$(python3 -c 'import sys; print(bytes.fromhex(sys.argv[1]).decode())' "${key:66}")
		want="names another run than $impl's newest ranked one"
		[[ $damage == current ]] || want="has no entry for $impl"
		check "$damage: the current-run entry of $impl is named for its group" \
			contains err "current-run index of group sha256:${key:2:64}: store-index: $want"
		;;
	esac
	check "$damage damage: every problem line names a record and a rule" \
		bash -c '! grep -E "^  " "$1" | grep -vE "^  [a-z -]+( sha256:[0-9a-f]{64})?: [a-z-]+: "' _ "$tmp/err"
done
# Run records that no longer decode: each one is named, with what it should hold, and the walk
# goes on past them to the checks after (the count of records does not shrink).
cp -a good runs3
expect 0 "$KX_CORRUPT" runs3 runs3
mapfile -t cut < out
expect 1 "$KINDEX" --store runs3 verify
for k in "${cut[@]}"; do
	check "an undecodable run record is named by its key (${k:2:12}…)" \
		contains err "run sha256:${k:2}: store-record: its record (5 bytes) does not decode"
done
check "... three of them, each reported once" test "$(grep -c ': store-record: its record' err)" = 3
check "... and verify went on: it checked as many records as in the clean store" \
	contains err "problems in $records records"

expect 0 "$KINDEX" --store good verify
check "the original is still clean, with the same record count" contains out "$records records verified, no problems"

# A store written before the rank index held a copy of each run's record: read as it is, each
# record from the run's own key, the same tree; given the copies when opened to write.
cp -a good bare
expect 0 "$KX_CORRUPT" bare bare-index
check "the rank index had entries to empty ($(cat out))" grep -qE '^[1-9][0-9]*$' out
expect 0 "$KINDEX" --store bare verify
check "a store whose rank index holds no records verifies clean" contains out "no problems"
expect 0 "$KINDEX" -q --store good export good.tree
expect 0 "$KINDEX" -q --store bare export bare.tree
check "... and exports the same tree, byte for byte (but the README, which names the store)" \
	diff -r -x README good.tree bare.tree
expect 0 "$KINDEX" --store bare import liger "$csv"
expect 0 "$KINDEX" --store bare verify
check "opened to write (an import that adds nothing), it verifies clean" contains out "$records records verified, no problems"
expect 0 "$KX_CORRUPT" bare index-nocopy
expect 1 "$KINDEX" --store bare verify
check "... and says so: emptying one copy is now a problem" \
	contains err "store-index: holds no copy of the run record"

# A store of schema 2, before the current-run index: read as it is, its current runs worked out
# from the rank index (the same compare/ and views); given the index when opened to write.
cp -a good two
expect 0 "$KX_CORRUPT" two schema2
check "the store had current-run entries to remove ($(cat out))" grep -qE '^[1-9][0-9]*$' out
expect 0 "$KINDEX" --store two verify
check "a schema-2 store verifies clean read-only" contains out "no problems"
expect 0 "$KINDEX" -q --store two export two.tree
check "... and exports the same tree, compare/ included (but the README)" diff -r -x README good.tree two.tree
expect 0 "$KINDEX" --store two import liger "$csv"
expect 0 "$KINDEX" --store two verify
check "upgraded at its first write, it verifies clean" contains out "$records records verified, no problems"
expect 0 "$KX_CORRUPT" two current-drop
check "... and the upgrade wrote the current-run entries (cli-corrupt found one to delete)" test -s out

# verify --since GEN: what the commits after generation GEN added — their runs, the documents and
# groups of those — every record still read and counted; older runs' documents not hashed again.
cp -a good since
gen=$("$KINDEX" --store since cat README | awk '$1 == "generation" { print $2 }')
python3 "$KX_SOURCE_ROOT/bench/gen-manifests" 1 sincegen --seed 7 >/dev/null || die "bench/gen-manifests failed"
expect 0 "$KINDEX" --store since ingest sincegen/m-0000000.json
expect 0 "$KINDEX" --store since verify --since "$gen"
n=$(grep -oE '[0-9]+ records' out | cut -d' ' -f1)
check "verify --since $gen: no problems, in $n records of the whole store's $records" \
	bash -c '[ "$1" -gt 0 ] && [ "$1" -lt "$2" ]' _ "$n" "$records"
"$KINDEX" digest sincegen/m-0000000.json >digests || die "kindex digest failed"
wl=$(awk '$1 == "workload" { print substr($2, 8) }' digests)
cp -a since since-new
expect 0 "$KX_CORRUPT" since-new "doc=$wl"
expect 1 "$KINDEX" --store since-new verify --since "$gen"
check "a damaged document of the run added after $gen is found" \
	contains err "document sha256:$wl: digest-mismatch"
cp -a since since-old
expect 0 "$KX_CORRUPT" since-old doc
old=$(cut -c3- out)
grep -q "$old" digests && die "the first document is the new run's: choose another seed"
expect 0 "$KINDEX" --store since-old verify --since "$gen"
check "... one of an older run's is not hashed again by --since" contains out "no problems"
expect 1 "$KINDEX" --store since-old verify
check "... but by a whole verify" contains err "document sha256:$old: digest-mismatch"
expect 2 "$KINDEX" --store since verify --since 12x
check "--since takes a store generation" contains err "--since '12x': not a store generation"

# A run that names its workload by digest only (a published record may) waits for that document
# in the 'W' index, which is how a mount finds the runs a late document completes.
python3 "$KX_SOURCE_ROOT/bench/gen-manifests" 2 gen >/dev/null || die "bench/gen-manifests failed"
python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); del m["workload"]; json.dump(m, open(sys.argv[2], "w"))' \
	gen/m-0000000.json nowl.json
expect 0 "$KINDEX" --store wait init
expect 0 "$KINDEX" --store wait ingest nowl.json
expect 0 "$KINDEX" --store wait verify
check "a run without its workload document verifies clean" contains out "no problems"
cp -a wait waiting
expect 0 "$KX_CORRUPT" waiting waiting
expect 1 "$KINDEX" --store waiting verify
check "a missing waiting-index entry: named for its run" \
	contains err "store-index: its workload document is not stored, and the waiting index has no entry for it"

# A store of schema 1 (before the 'W' index) reads as it is and is upgraded when opened to write.
cp -a wait old
expect 0 "$KX_CORRUPT" old schema1
check "the schema-1 store had one waiting entry to lose" grep -qx 1 out
expect 0 "$KINDEX" --store old verify
check "a schema-1 store verifies clean read-only" contains out "no problems"
expect 0 "$KINDEX" --store old ingest gen/m-0000001.json
expect 0 "$KINDEX" --store old verify
check "upgraded at its first write, it verifies clean" contains out "no problems"
expect 0 "$KX_CORRUPT" old waiting
check "... and the upgrade rebuilt the waiting entry (cli-corrupt found one to delete)" test -s out
expect 1 "$KINDEX" --store old verify
finish
