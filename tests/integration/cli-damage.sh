#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Damage named, and replica generations left alone (issue 42): bytes flipped in a table's data
# block, or in its footer or index, make `kindex verify` (and --since, and a pull of such a copy)
# name the table file, its key range and what lives there, go on past it, and exit 1 — never "in
# use", never 3 or 4; `kindex recover` writes nothing to a store that opens as it is, and refuses a
# replica generation, as every command that writes does; verify of a generation checks its store
# against its PUBLISHED.
source "$(dirname "$0")/cli-lib.sh"
cd "$tmp"
: "${KX_CORRUPT:?KX_CORRUPT must name the cli-corrupt helper}"
command -v python3 >/dev/null || { echo "# SKIP: flipping bytes needs python3"; exit 77; }

# flip FILE OFFSET COUNT: invert COUNT bytes of FILE from OFFSET (negative: from its end)
flip() {
	python3 - "$@" <<'EOF' || die "cannot flip $1"
import os, sys
path, off, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if off < 0:
    off += os.path.getsize(path)
with open(path, 'r+b') as f:
    f.seek(off)
    b = f.read(n)
    f.seek(off)
    f.write(bytes(x ^ 0xff for x in b))
EOF
}
# listing DIR: every file's name, size and mtime (ns), to see that nothing was written
listing() { (cd "$1" && find . -printf '%P %s %T@\n' | sort); }
# refused STATUS CMD...: CMD exits STATUS (not 0) and says the directory is a replica generation
refused() {
	local want=$1 got=0
	shift
	"$@" >"$tmp/out" 2>"$tmp/err" || got=$?
	[[ $got == "$want" ]] && grep -qF "is a replica generation (it holds PUBLISHED), which is read-only" "$tmp/err" || {
		echo "  exit $got (wanted $want): $(head -c 500 "$tmp/err")" >&2
		return 1
	}
}

expect 0 "$KINDEX" --store good init
expect 0 "$KINDEX" --store good import liger "$csv"
cp -a good logged # a store whose log holds every write: what recover used to flush
# small tables of disjoint key ranges; each line: file level smallest-key largest-key (hex)
expect 0 "$KX_CORRUPT" good tables
cp out tables
# the documents' tables ('D' = 44): the third, to damage, and a document of the sixth, to tamper
mapfile -t doc_tables < <(awk 'substr($3, 1, 2) == "44" && substr($4, 1, 2) == "44"' tables)
((${#doc_tables[@]} >= 6)) || die "too few tables of documents: $(wc -l <tables)"
read -r table _ lo hi <<<"${doc_tables[2]}"
read -r _ _ later _ <<<"${doc_tables[5]}"
expect 0 "$KINDEX" --store good verify

# ---- row 4: 16 bytes flipped in a data block ----
cp -a good d4
expect 0 "$KX_CORRUPT" d4 "doc=${later:2:64}" # a second damage, in a table after the first
flip "d4/$table" 100 16
expect 1 "$KINDEX" --store d4 verify
check "a damaged data block: the store is damaged" contains err "store d4 is damaged"
check "... the table is named, with its key range and what lives there" \
	contains err "table $table: store-table: cannot be read, so what it holds is not checked: documents, from document sha256:${lo:2:64} to document sha256:${hi:2:64} (level "
check "... with RocksDB's words" contains err "Corruption: block checksum mismatch"
check "... and verify went on past it: a tampered document after it is named" \
	contains err "document sha256:${later:2:64}: digest-mismatch"
check "... damage is not 'in use'" not_contains err "in use"
expect 1 "$KINDEX" --store d4 verify --since 1
check "verify --since names the table too" contains err "table $table: store-table: cannot be read"

# ---- row 4, what verify lists: a damaged table of group records ('G', 47) or rank-index
# entries ('I', 49) ----
# a scan can end silently at it, so what verify lists from there (the groups whose current-run
# entries it counts, a group's runs) is short: the table is named, and no entry or count is called
# wrong for what verify could not read
for family in 47:group-records 49:rank-index-entries; do
	mapfile -t family_tables < <(awk -v f="${family%%:*}" 'substr($3, 1, 2) == f && substr($4, 1, 2) == f' tables)
	((${#family_tables[@]} >= 2)) || die "too few tables of ${family#*:} in $(wc -l <tables)"
	read -r ftable _ <<<"${family_tables[1]}"
	what=${family#*:} what=${what//-/ }
	rm -rf d4f && cp -a good d4f
	flip "d4f/$ftable" 100 16
	expect 1 "$KINDEX" --store d4f verify
	check "a damaged table of $what: named" contains err "table $ftable: store-table: cannot be read"
	check "... and no current-run entry or count called wrong for it" not_contains err "current-run index"
done

# ---- row 5: a flipped footer (magic number, block handles) or index block ----
# the first table holds the store's own keys ("\0schema"...): the open cannot read the schema
read -r first _ <tables
cp -a good d5
flip "d5/$first" -8 4
expect 1 "$KINDEX" --store d5 verify
check "a damaged footer: verify exits 1 and names the table" \
	contains err "table $first: store-table: cannot be read, so what it holds is not checked: the store's schema and counters"
check "... with RocksDB's words" contains err "Bad table magic number"
check "... not 'in use'" not_contains err "in use"
expect 1 "$KINDEX" --store d5 verify --since 1
check "verify --since 1 of it names the table too, not the generation it cannot read" \
	contains err "table $first: store-table: cannot be read"
expect 3 "$KINDEX" --store d5 ls
check "kindex ls of it: the store is damaged, verify names the table" \
	contains err "store 'd5' is damaged: the table that holds its schema cannot be read ('kindex --store d5 verify' names it)"

# ---- a replica generation: kindex watch --publish ----
mkdir spool
expect 0 "$KINDEX" -q --store logged watch --once --publish pub spool
[[ -f pub/gen-1/PUBLISHED ]] || die "no generation published: $(ls pub)"
expect 0 "$KINDEX" --store pub/gen-1 verify
check "a generation as published verifies clean" contains out "no problems"
# its tables are level 0, which RocksDB opens at the open: a damaged footer or index refused it
gtable=$(cd pub/gen-1 && ls -S -- *.sst | head -1)
for where in -8 -52 -300; do
	rm -rf g5 && cp -a pub/gen-1 g5 && rm g5/PUBLISHED
	flip "g5/$gtable" "$where" 4
	expect 1 "$KINDEX" --store g5 verify
	check "a level-0 table damaged at $where: verify exits 1 and names it" \
		contains err "table $gtable: store-table: cannot be read, so what it holds is not checked: the store's schema and counters, "
	check "... not 'in use'" not_contains err "in use"
	expect 3 "$KINDEX" --store g5 ls
	check "... kindex ls: the store is damaged" contains err "store 'g5' is damaged: Corruption: "
done

# a pull of a damaged generation: "does not verify", exit 1, the table named (in the middle of the
# table: its first block holds the store's generation, which the pull compares with PUBLISHED's)
for where in middle -8; do
	rm -rf bad dst && mkdir bad && cp -a pub/gen-1 bad/ && cp pub/PUBLISHED bad/
	[[ $where == middle ]] && where=$(($(stat -c %s "bad/gen-1/$gtable") / 2))
	flip "bad/gen-1/$gtable" "$where" 16
	expect 1 "$KINDEX" pull bad dst
	check "a pull of a generation damaged at $where: exit 1, the table named" contains err "$gtable"
	check "... not 'in use'" not_contains err "in use"
done

# a pull that verifies only what the writer added (linked from the generation it verified before)
# still reads every table it copied: one damaged there is refused, the table named; VERIFIED
# vouches for the tables up to the highest number, which the next pull reads no more
rm -rf dst && expect 0 "$KINDEX" pull pub dst
last1=$(cd dst/gen-1 && ls -- *.sst | sort -n | tail -1)
check "VERIFIED names the store generation, its creation and the highest table, ${last1%.sst}" \
	grep -qx "kindexfs-verified [0-9]* [0-9]* $((10#${last1%.sst}))" dst/gen-1/VERIFIED
# 500 runs: a log past what a publication copies rather than flushes (1 MiB, publish.c), so that
# gen-2 has a table of its own whatever RocksDB compacted before
python3 "$KX_SOURCE_ROOT/bench/gen-manifests" 500 more --seed 7 >/dev/null || die "gen-manifests failed"
mkdir -p spool/new && mv more/*.json spool/new/
# every generation kept: gen-1 serves the rows below
expect 0 "$KINDEX" -q --store logged watch --once --publish pub --publish-keep 100 spool
# the newest: the watcher may publish more than once while it ingests, and then its sizes
g2=$(awk '$1 == "generation" { print $2 }' pub/PUBLISHED)
[[ -n $g2 && $g2 -gt 1 && -f pub/gen-$g2/PUBLISHED ]] || die "no second generation published: $(ls pub)"
new=$(cd pub/gen-$g2 && for t in *.sst; do ((10#${t%.sst} > 10#${last1%.sst})) && echo "$t"; done | head -1)
[[ -n $new ]] || die "the second generation has no table after $last1: $(ls pub/gen-$g2)"
rm -rf bad && mkdir bad && cp -a pub/gen-$g2 bad/ && cp pub/PUBLISHED bad/
flip "bad/gen-$g2/$new" $(($(stat -c %s "bad/gen-$g2/$new") / 2)) 16
expect 1 "$KINDEX" pull bad dst
check "an incremental pull whose new table $new is damaged: exit 1, the table named" contains err "$new"
check "... the damage named as such" contains err "does not verify"
check "... current still names gen-1" [ "$(readlink dst/current)" = gen-1 ]
# ... and a document of a new run tampered with (its bytes no longer hash to its key): refused, named
python3 "$KX_SOURCE_ROOT/bench/gen-manifests" 500 more2 --seed 7 >/dev/null || die "gen-manifests failed"
rundoc=$("$KINDEX" digest "more2/$(ls more2 | head -1)" | awk '$1 == "run" { print substr($2, 8) }')
rm -rf bad && mkdir bad && cp -a pub/gen-$g2 bad/ && cp pub/PUBLISHED bad/ && mv bad/gen-$g2/PUBLISHED bad/PUBLISHED.gen
expect 0 "$KX_CORRUPT" bad/gen-$g2 "doc=$rundoc"
mv bad/PUBLISHED.gen bad/gen-$g2/PUBLISHED
expect 1 "$KINDEX" pull bad dst
check "an incremental pull whose new run's document was tampered with: exit 1, the document named" \
	contains err "sha256:$rundoc"
check "... current still names gen-1" [ "$(readlink dst/current)" = gen-1 ]
expect 0 "$KINDEX" pull pub dst
check "the same pull from a good source links from gen-1 and verifies what was added" \
	contains out "linked from gen-1, verified what was added after store generation"

# ---- row 9: recover writes nothing to a store that opens, nor to a generation ----
listing logged >before
expect 0 "$KINDEX" --store logged recover
check "recover of a healthy store: nothing to recover" contains out "store 'logged' opens as it is: nothing to recover"
listing logged >after
check "... and not a file of it written" diff before after
cp -a pub/gen-1 gen
listing gen >before
check "recover of a replica generation is refused, exit 3" refused 3 "$KINDEX" --store gen recover
check "... naming the path" contains err "'gen' is a replica generation"
check "... and saying what to recover instead" contains err "recover the writer's store it was published from instead"
check "kindex init of a generation is refused" refused 3 "$KINDEX" --store gen init
check "kindex import into a generation is refused" refused 3 "$KINDEX" --store gen import liger "$csv"
check "kindex ingest into a generation is refused" \
	refused 3 "$KINDEX" --store gen ingest "$KX_SOURCE_ROOT/tests/data/fixtures/run-a.json"
listing gen >after
check "... and not a file of the generation written" diff before after

# ---- row 11: a generation whose store is not the one its PUBLISHED names ----
cp -a pub/gen-1 g11
seq=$(awk '$1 == "sequence" { print $2 }' g11/PUBLISHED)
sgen=$(awk '$1 == "store-generation" { print $2 }' g11/PUBLISHED)
sed -i "s/^sequence .*/sequence $((seq + 600))/" g11/PUBLISHED
expect 1 "$KINDEX" --store g11 verify
check "a generation short of its PUBLISHED's sequence: damaged, both numbers named" \
	contains err "PUBLISHED: replica-published: generation 1 was published at sequence $((seq + 600)), store generation $sgen; the store holds sequence $seq, store generation $sgen"

finish
