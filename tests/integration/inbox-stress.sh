#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The inbox under load: 8 writers drop manifests into a -o rw mount with real
# tools while 8 readers walk the tree, for KX_STRESS_SECONDS (default 60). The store is seeded
# first with the bundled Liger import and 2,090 synthetic runs; the writers add synthetic runs
# (bench/gen-manifests, one seed, so they also land in groups the seed filled, and in one big
# group that they take from 90 runs to 300: every rank directory of it is renamed over and over,
# and once from two digits to three).
#
# The consistency model tested here (docs/inbox.md):
#
#   - Every file read is from one store generation: it is never torn. ranking.json always parses
#     and its ranks are 1..k; ranking.tsv is complete, its ranks 1..k contiguous, each directory
#     named for its rank; SHA256SUMS is whole and its rank directories 1..k; summary.txt is whole;
#     a manifest's documents hash to the digests it names and to its run's short id;
#     digests/sha256/<hex>.json hashes to <hex>.
#     That holds for the files that follow a group's ranks too (its ranking.tsv, ranking.json,
#     GROUP.json, SHA256SUMS, and its runs' summary.txt and SHA256SUMS), read while runs are added
#     to that very group: each version of them is an inode of its own (docs/mount.md).
#   - Every listing (readdir) is from one generation: the rank directories of a group are 1..k.
#   - Different files agree with each other only where nothing changes while they are read: two
#     reads are two moments, and a run added between them shifts ranks. So `sha256sum -c
#     SHA256SUMS` (one read of SHA256SUMS, then one of each file) is guaranteed in a group no one
#     adds to meanwhile and in the run directories of such a group (here: the Liger groups, whose
#     kernels the writers never use). In a group being written it may fail, and so may a walk
#     (find, ls -lR) that meets a rank directory renamed under it (ENOENT).
#   - A run directory's path runs/<id>/ never moves, and its documents (manifest.json, run.json,
#     protocol.json, environment.json, workload.json, implementation.json, DIGESTS) never change;
#     but summary.txt and index.html show the run's rank and its ratio to #1, so they, and the
#     SHA256SUMS that lists them, change when a run added to the group shifts ranks. `sha256sum -c`
#     in runs/<id>/ of a group being written can fail on those two, and only there (counted below,
#     not failed).
#   - close() (or rename) of a dropped file returns once it is decided: an accepted file's receipt
#     is in inbox/.accepted/ and every run it names is in the tree (runs/<id>/ exists); a rejected
#     file's close() fails with EINVAL and .rejected/NAME holds its bytes, .rejected/NAME.error why.
#
# Checked: every drop's tool exit status and receipt as above; no reader error (beyond the
# renames the model allows, counted); at the end, with the tree quiet, every group a receipt
# names has contiguous ranks, ranking files that list exactly its directories and a SHA256SUMS
# that verifies every file; the sweep.tsv and gpus.tsv of the written kernels and the files of
# two pairs of compare/ the writers change, read before the writers began, read otherwise now
# (some of each) and as `kindex cat` reads them from the store; the inbox is empty; the runs
# count is the seed plus the runs added;
# the daemon exits 0 with nothing on stderr; `kindex verify` is clean; and `kindex ingest` of every
# accepted original into the same store adds nothing.
#
# Environment: KX_STRESS_SECONDS (default 60), KX_STRESS_POOL (manifests per writer besides its
# share of the big group's, default 1500; a writer that runs out drops its files again under new
# names: "already present"),
# KX_STRESS_WRITERS and KX_STRESS_READERS (default 8 each).
. "$(dirname "$0")/mount-lib.sh"
. "$(dirname "$0")/inbox-lib.sh"

seconds=${KX_STRESS_SECONDS:-60}
pool=${KX_STRESS_POOL:-1500}
writers=${KX_STRESS_WRITERS:-8}
readers=${KX_STRESS_READERS:-8}
big=300     # runs in the big group: the first $bigseed seeded, the rest dropped
bigseed=90
seedn=2000  # further synthetic runs seeded
store="$work/store"
mnt="$work/mnt"
in="$mnt/inbox"
py="$KX_SOURCE_ROOT/tests/integration/inbox-stress.py"
python=$(python3 -c 'import sys; print(sys.executable)') # the interpreter itself: a shim (pyenv) costs 0.3 s a start

# ---- the seed and the writers' manifests ------------------------------------------------------
make_liger_store "$store"
total=$((bigseed + seedn + writers * pool))
gen "$total" "$work/m" --seed 11 --big-group "$big"
mkdir "$work/seed"
(cd "$work/m" && ls) >"$work/all"
awk -v b=$bigseed -v big=$big -v s=$seedn '{ i = NR - 1 } i < b || (i >= big && i < big + s)' "$work/all" \
	>"$work/seedlist"
(cd "$work/m" && xargs -a "$work/seedlist" ln -t "$work/seed")
"$KINDEX" -q --store "$store" ingest "$work/seed" || die "seeding the store failed"
seedruns=$(($(wc -l <"$work/seedlist") + 2448)) # the Liger import: 2,448 runs
# the rest, dealt to the writers: the big group's runs as every fourth drop (so that its ranks
# shift all the time), the others shuffled
"$python" - "$work/all" "$work/m" "$work/pool" $writers $bigseed $big $seedn <<'EOF'
import random, sys
names = open(sys.argv[1]).read().split()
m, out, (writers, bigseed, big, seedn) = sys.argv[2], sys.argv[3], map(int, sys.argv[4:])
bigs, rest = names[bigseed:big], names[big + seedn:]
random.Random(1).shuffle(rest)
order = []
while bigs or rest:
    order += [bigs.pop(0)] if bigs else []
    order += [rest.pop() for _ in range(3) if rest]
for w in range(writers):
    open("%s.%d" % (out, w), "w").write("".join("%s/%s\n" % (m, n) for n in order[w::writers]))
EOF
for ((w = 0; w < writers; w++)); do
	"$python" - "$(head -1 "$work/pool.$w")" "$work/bad.$w.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
m["run"]["spec"]["status"] = "maybe"
json.dump(m, open(sys.argv[2], "w"), indent=2)
EOF
done

# the kernels writers add to: bench/gen-manifests' (the Liger groups of other kernels are quiet)
"$python" -c "
import ast, re, sys
print('\n'.join(ast.literal_eval(re.search(r'KERNELS = (\[.*?\])', open(sys.argv[1]).read(), re.S).group(1))))" \
	"$GEN" >"$work/wkernels"

mount_fg "$store" "$mnt" -o rw
# the quiet groups: sha256sum -c there must always pass
(cd "$mnt" && find benchmarks -mindepth 4 -maxdepth 4 -type d) | sort >"$work/groups"
grep -v -F -f <(sed 's|.*|benchmarks/&/|' "$work/wkernels") "$work/groups" >"$work/quiet"
# the big group: bench/gen-manifests puts it in its first kernel and pass
bigdir=$(cd "$mnt" && for g in benchmarks/"$(head -1 "$work/wkernels")"/forward/*/*; do
	echo "$(ls "$g" | wc -l) $g"; done | sort -n | tail -1)
seeded="$(runs_count "$mnt") ${bigdir%% *}"
check "seeded: $(runs_count "$mnt") runs, $(wc -l <"$work/quiet") groups no writer adds to, the big one has ${bigdir%% *} entries" \
	[ "${seeded% *}" = "$seedruns" -a "${seeded#* }" -ge $((bigseed + 4)) ]
bigdir=${bigdir#* }
# the benchmark directories' files and two pairs of compare/ the writers will change
# (docs/views.md): read now, to be read again once the writers are done — through the same
# kernel, which must not answer from its cache
(cd "$mnt" && while read -r k; do ls -d benchmarks/"$k"/*/gpus.tsv benchmarks/"$k"/*/*/sweep.{tsv,svg} 2>/dev/null; done \
	<"$work/wkernels" && ls -d compare/liger..torch/* compare/triton..cutlass/* compare/index.html index.tsv) >"$work/views"
mkdir "$work/views.pre" "$work/views.post"
n=0
while read -r f; do n=$((n + 1)); cat "$mnt/$f" >"$work/views.pre/$n"; done <"$work/views"

# ---- writers ----------------------------------------------------------------------------------
# writer W: until the deadline, drops its pool one item at a time with a mix of tools, and checks
# each outcome at once. Writes W's counts to stat.W, failures to stderr as "# writer W: ..." and
# to wfail.W, and the originals of everything accepted to orig.W (with the runs each holds).
writer() {
	local w=$1 seq=0 i=0 n kind name f k src
	# one round of 20 drops: 10 cp, 3 cat >, 3 Python, 2 rsync -a (3 files each), 1 JSON Lines (3
	# manifests and a note about the first one's run: SPEC §8), 1 bad file; each writer starts at
	# another place in it
	local -a mix=(cp cat python rsync cp jsonl cp bad cat cp python cp rsync cp cat cp python cp cp cp)
	local -a pool
	local -A count=()
	mapfile -t pool <"$work/pool.$w"
	n=${#pool[@]}
	: >"$work/orig.$w"
	: >"$work/wfail.$w"
	next() { src=${pool[$((i % n))]}; i=$((i + 1)); }
	wfail() { echo "# writer $w: $*" | tee -a "$work/wfail.$w" >&2; }
	# outcome NAME RUNS: the receipt says accepted with RUNS runs, each in the tree, and NAME left;
	# an attestation it names is in its run's attestations/
	outcome() {
		local r="$in/.accepted/$1" first kind id path seen=0 att rest
		[ -f "$r" ] || { wfail "$1: no receipt in .accepted/ ($(ls "$in/.rejected/$1.error" 2>&1))"; return 1; }
		{
			read -r first
			case $first in
			"accepted $1 at "*": $2 run"*) ;;
			*) wfail "$1: receipt says: $first (expected $2 runs)" ;;
			esac
			while read -r kind id path; do
				if [ "$kind" = attestation ]; then # "attestation added <id> of runs/<id> <path>"
					read -r att _ rest _ <<<"$path"
					compgen -G "$mnt/$rest/attestations/*-$att.json" >/dev/null ||
						wfail "$1: attestation $att is not in $rest/attestations/"
					continue
				fi
				seen=$((seen + 1))
				[ -d "$mnt/$id" ] || wfail "$1: $id ($kind) is not in the tree"
			done
		} <"$r"
		[ "$seen" = "$2" ] || wfail "$1: the receipt lists $seen runs, not $2"
		[ ! -e "$in/$1" ] || wfail "$1 is still in the inbox"
	}
	# refused NAME ORIGINAL: kept byte for byte in .rejected/ with its .error
	refused() {
		cmp -s "$in/.rejected/$1" "$2" || wfail "$1: .rejected/$1 is not what was written"
		head -1 "$in/.rejected/$1.error" 2>/dev/null | grep -q "^rejected $1 " || wfail "$1: no .rejected/$1.error"
		[ ! -e "$in/$1" ] || wfail "$1 is still in the inbox"
	}
	while [ "$EPOCHSECONDS" -lt "$deadline" ]; do
		seq=$((seq + 1))
		name=$(printf 'w%d-%06d' "$w" "$seq")
		kind=${mix[$(((seq + 3 * w) % 20))]}
		count[$kind]=$((${count[$kind]:-0} + 1))
		case $kind in
		cp)
			next
			cp "$src" "$in/$name.json" 2>"$work/err.$w" || wfail "cp $name.json exits $?: $(head -1 "$work/err.$w")"
			outcome "$name.json" 1 && echo "$src 1" >>"$work/orig.$w"
			;;
		cat)
			next
			cat "$src" >"$in/$name.json" 2>"$work/err.$w" || wfail "cat > $name.json exits $?: $(head -1 "$work/err.$w")"
			outcome "$name.json" 1 && echo "$src 1" >>"$work/orig.$w"
			;;
		python)
			next
			"$python" -c "
import sys
with open(sys.argv[2], 'w') as out:
    out.write(open(sys.argv[1]).read())" "$src" "$in/$name.json" 2>"$work/err.$w" ||
				wfail "python $name.json exits $?: $(tail -1 "$work/err.$w")"
			outcome "$name.json" 1 && echo "$src 1" >>"$work/orig.$w"
			;;
		rsync) # a small directory: .NAME.XXXXXX written and closed, then renamed to NAME
			rm -rf "$work/rs.$w"
			mkdir "$work/rs.$w"
			for k in 1 2 3; do
				next
				ln "$src" "$work/rs.$w/$name-$k.json"
				echo "$src 1" >>"$work/rs.$w.orig"
			done
			rsync -a "$work/rs.$w/" "$in/" 2>"$work/err.$w" || wfail "rsync -a ($name-*) exits $?: $(head -1 "$work/err.$w")"
			[ ! -s "$work/err.$w" ] || wfail "rsync -a ($name-*): $(head -1 "$work/err.$w")"
			for k in 1 2 3; do outcome "$name-$k.json" 1; done
			cat "$work/rs.$w.orig" >>"$work/orig.$w"
			rm -f "$work/rs.$w.orig"
			;;
		jsonl) # three manifests in one file: one decision
			f="$work/jl/$name.jsonl"
			local -a three=()
			for k in 1 2 3; do
				next
				three+=("$src")
			done
			"$python" -c "
import json, os, sys
sys.path.insert(0, os.path.join(os.environ['KX_SOURCE_ROOT'], 'tests', 'integration'))
import kxjcs
ms = [json.load(open(p)) for p in sys.argv[3:]]
note = {'apiVersion': 'kindexfs.dev/v1alpha1', 'kind': 'Attestation',
        'spec': {'subject': kxjcs.digest(ms[0]['run']), 'type': 'note', 'text': 'dropped as ' + sys.argv[2],
                 'author': 'inbox-stress', 'createdAt': '2026-11-01T00:00:00Z'}}
open(sys.argv[1], 'w').write(''.join(json.dumps(m) + '\n' for m in ms + [note]))" "$f" "$name" "${three[@]}"
			cp "$f" "$in/" 2>"$work/err.$w" || wfail "cp $name.jsonl exits $?: $(head -1 "$work/err.$w")"
			outcome "$name.jsonl" 3 && echo "$f 3 1" >>"$work/orig.$w"
			;;
		bad) # refused: close() fails with EINVAL, and the receipt is the record
			if [ $((count[bad] % 2)) = 0 ]; then
				if cp "$work/bad.$w.json" "$in/$name.json" 2>"$work/err.$w"; then
					wfail "cp of a bad file $name.json exits 0"
				elif ! grep -q "Invalid argument" "$work/err.$w"; then
					wfail "cp of a bad file $name.json: $(head -1 "$work/err.$w")"
				fi
			else
				"$python" -c "
import errno, sys
try:
    with open(sys.argv[2], 'w') as out:
        out.write(open(sys.argv[1]).read())
except OSError as e:
    sys.exit(0 if e.errno == errno.EINVAL else 'OSError %s' % e)
sys.exit('close() did not fail')" "$work/bad.$w.json" "$in/$name.json" 2>"$work/err.$w" ||
					wfail "python, bad file $name.json: $(tail -1 "$work/err.$w")"
			fi
			refused "$name.json" "$work/bad.$w.json"
			;;
		esac
	done
	for kind in "${!count[@]}"; do echo "$kind ${count[$kind]}"; done >"$work/stat.$w"
	echo "cycled $((i / n))" >>"$work/stat.$w"
}

mkdir "$work/jl"
deadline=$((EPOCHSECONDS + seconds))
t0=$SECONDS
wpids=()
for ((w = 0; w < writers; w++)); do
	writer $w &
	wpids+=($!)
done
rpids=()
for ((r = 0; r < readers; r++)); do
	"$python" "$py" reader "$mnt" $r "$deadline" "$work/quiet" "$work/wkernels" "$bigdir" "$work/rstat.$r" &
	rpids+=($!)
done
wok=0
for p in "${wpids[@]}"; do wait "$p" && wok=$((wok + 1)); done
rok=0
for p in "${rpids[@]}"; do wait "$p" && rok=$((rok + 1)); done
echo "# writers and readers ran $((SECONDS - t0)) s (KX_STRESS_SECONDS=$seconds)"
check "all $writers writers and $readers readers finished" [ "$wok $rok" = "$writers $readers" ]
check "the daemon is still there" kill -0 "$daemon"

# ---- what the writers did ---------------------------------------------------------------------
cat "$work"/stat.* | awk '$1 != "cycled" { n[$1] += $2; t += $2 } $1 == "cycled" && $2 > c { c = $2 }
	END { printf "# writers: %d drops:", t; for (k in n) printf " %s %d", k, n[k]; printf "; pool cycled %d times\n", c }'
cat "$work"/wfail.* >"$work/wfail"
check "every drop had the expected outcome: exit status, receipt, runs in the tree ($(wc -l <"$work/wfail") failures)" \
	[ ! -s "$work/wfail" ]
bads=$(cat "$work"/stat.* | awk '$1 == "bad" { n += $2 } END { print n + 0 }')
accepted_files=$(cat "$work"/stat.* | awk '$1 == "rsync" { n += 3 * $2 } $1 ~ /^(cp|cat|python|jsonl)$/ { n += $2 } END { print n + 0 }')

# ---- what the readers did ---------------------------------------------------------------------
"$python" - "$work/rstat" "$readers" >"$work/rsum" <<'EOF'
import json, sys
from collections import Counter
total, errors = Counter(), 0
for r in range(int(sys.argv[2])):
    try:
        d = json.load(open("%s.%d" % (sys.argv[1], r)))
    except OSError:
        d = {"stats": {}, "errors": 1}  # the reader died
    total.update(d["stats"])
    errors += d["errors"]
print(errors)
for k, v in sorted(total.items()):
    print("# readers: %-48s %d" % (k, v))
EOF
tail -n +2 "$work/rsum"
check "no reader error ($(head -1 "$work/rsum") errors)" [ "$(head -1 "$work/rsum")" = 0 ]
check "the readers ran sha256sum -c" grep -q "sha256sum -c in a group .* [1-9]" "$work/rsum"

# ---- the tree, quiet ----------------------------------------------------------------------------
check "the inbox is empty but for its receipts" \
	bash -c "[ \"\$(ls -A '$in' | tr '\n' ' ')\" = '.accepted .rejected artifacts ' ]"
check "one receipt in .accepted/ per accepted file ($accepted_files)" [ "$(ls "$in/.accepted" | wc -l)" = "$accepted_files" ]
check "and two files in .rejected/ per bad one ($bads)" [ "$(ls "$in/.rejected" | wc -l)" = $((2 * bads)) ]
added=$(cat "$in"/.accepted/* | awk '$1 == "added" { print $2 }' | sort -u | wc -l)
check "the runs count is the seed's and the $added runs added" [ "$(runs_count "$mnt")" = $((seedruns + added)) ]
"$python" "$py" final "$mnt" >"$work/final"
rc=$?
check "every group written to: ranks contiguous, ranking files and SHA256SUMS right ($(tail -1 "$work/final"))" [ $rc = 0 ]
grep '^# ' "$work/final" | head -5
n=0 sweeps=0 pictures=0 passes=0 compares=0 index=0
while read -r f; do
	n=$((n + 1))
	cat "$mnt/$f" >"$work/views.post/$n"
	cmp -s "$work/views.pre/$n" "$work/views.post/$n" || case $f in
		compare/*) compares=$((compares + 1)) ;;
		index.tsv) index=1 ;;
		*/sweep.tsv) sweeps=$((sweeps + 1)) ;;
		*/sweep.svg) pictures=$((pictures + 1)) ;;
		*) passes=$((passes + 1)) ;;
		esac
done <"$work/views"
check "the drops changed sweep.tsv, sweep.svg and gpus.tsv for a reader who had read them ($sweeps of $(grep -c sweep.tsv "$work/views") sweep.tsv, $pictures sweep.svg, $passes gpus.tsv)" \
	[ "$sweeps" -gt 0 -a "$pictures" -gt 0 -a "$passes" -gt 0 ]
check "and compare/'s files ($compares of $(grep -c ^compare/ "$work/views"))" [ "$compares" -gt 0 ]
check "and /index.tsv, which has a row for every run ($(($(wc -l <"$mnt/index.tsv") - 1)) of $(runs_count "$mnt"))" \
	[ "$index" = 1 -a "$(($(wc -l <"$mnt/index.tsv") - 1))" = "$(runs_count "$mnt")" ]
bigruns=$(find "$mnt/$bigdir" -mindepth 1 -maxdepth 1 -type d | wc -l)
check "the big group ($bigdir): $bigruns runs, ranks 1..k" contiguous "$mnt/$bigdir"
unmount "$mnt" "$daemon"
rc=$?
check "the daemon exits 0 after the unmount" [ $rc = 0 ]
check "and said nothing on stderr" [ ! -s "$mnt.err" ]
head -5 "$mnt.err" | sed 's/^/# daemon: /'

# ---- the store ------------------------------------------------------------------------------------
for ((i = 1; i <= n; i++)); do cat "$work/views.post/$i"; done >"$work/views.mount"
xargs -a "$work/views" "$KINDEX" --store "$store" cat >"$work/views.store"
check "each is what kindex cat reads from the store" cmp -s "$work/views.mount" "$work/views.store"
if ! cmp -s "$work/views.mount" "$work/views.store"; then
	i=0
	while read -r f; do
		i=$((i + 1))
		"$KINDEX" --store "$store" cat "$f" | cmp -s - "$work/views.post/$i" || echo "# not the store's: $f"
	done <"$work/views" | head -5
fi
"$KINDEX" --store "$store" verify >"$work/verify" 2>&1
rc=$?
check "kindex verify is clean ($(tail -1 "$work/verify"))" [ $rc = 0 ]
cat "$work"/orig.* | sort -u >"$work/orig"
mkdir "$work/again"
awk '{ print $1 }' "$work/orig" | xargs ln -t "$work/again"
nfiles=$(wc -l <"$work/orig")
nruns=$(awk '{ n += $2 } END { print n + 0 }' "$work/orig")
natts=$(awk '{ n += $3 } END { print n + 0 }' "$work/orig")
also="; 0 attestations stored, $natts already present"
[ "$natts" -gt 0 ] || also=
"$KINDEX" --store "$store" ingest "$work/again" >"$work/ingest" 2>&1
check "every accepted original is in the index, its notes too ($(tail -1 "$work/ingest"))" \
	grep -Eq "^$nfiles files?: $nfiles accepted \(0 runs added, $nruns already present$also\), 0 refused" "$work/ingest"
finish
