# SPDX-License-Identifier: MIT
# Shared by the inbox-*.sh integration tests (sourced after mount-lib.sh): synthetic manifests,
# and the checks a user would make after dropping a file into a mounted inbox — the receipt says
# accepted, the file left the inbox, each run it names is in benchmarks/ at the receipt's path,
# listed in its group's ranking.tsv, with ranks 1..k contiguous and `sha256sum -c` passing.

GEN="$KX_SOURCE_ROOT/bench/gen-manifests"

# gen N DIR [ARGS...]: N synthetic manifests (one file each, ~2.8 KB) in DIR
gen() {
	local n=$1 dir=$2
	shift 2
	python3 "$GEN" "$n" "$dir" "$@" >/dev/null || die "bench/gen-manifests $n $dir failed"
}

# contiguous GROUP_DIR: rank directories 01..k without a gap or a duplicate, and ranking.tsv
# lists exactly those, in rank order (two reads: only for a group no one writes to meanwhile)
contiguous() {
	local g=$1 want=1 d n
	local dirs
	dirs=$(cd "$g" && ls -d [0-9]*-* 2>/dev/null | sort) || return 1
	for d in $dirs; do
		n=$((10#${d%%-*}))
		[ "$n" = "$want" ] || { echo "# $g: rank $n where $want was due ($d)"; return 1; }
		want=$((want + 1))
	done
	[ "$(awk -F'\t' 'NR > 1 && $1 ~ /^[0-9]+$/ { print $2 }' "$g/ranking.tsv")" = "$dirs" ] ||
		{ echo "# $g: ranking.tsv does not list the rank directories"; return 1; }
}

# in_tree MNT PATH: a run directory from a receipt is really there, and everything around it checks
in_tree() {
	local mnt=$1 path=$2
	local g=${path%/*} d=${path##*/}
	[ -d "$mnt/$path" ] || { echo "# $path is not in the tree"; return 1; }
	awk -F'\t' -v d="$d" 'NR > 1 && $2 == d { found = 1 } END { exit !found }' "$mnt/$g/ranking.tsv" ||
		{ echo "# $d is not in $g/ranking.tsv"; return 1; }
	(cd "$mnt/$g" && sha256sum -c --quiet SHA256SUMS) || { echo "# sha256sum -c fails in $g"; return 1; }
	(cd "$mnt/$path" && sha256sum -c --quiet SHA256SUMS) || { echo "# sha256sum -c fails in $path"; return 1; }
	case $d in
	[0-9]*) contiguous "$mnt/$g" ;;
	esac
}

# accepted MNT NAME [RUNS]: inbox/.accepted/NAME says "accepted", NAME left the inbox, and each run
# the receipt names (RUNS of them, when given) is in the tree
accepted() {
	local mnt=$1 name=$2 want=${3:-} r="$1/inbox/.accepted/$2" n=0 kind id path
	[ -f "$r" ] || { echo "# no receipt .accepted/$name"; ls -a "$mnt/inbox" "$mnt/inbox/.rejected" | sed 's/^/# /'; return 1; }
	head -1 "$r" | grep -q "^accepted " || { echo "# receipt: $(head -1 "$r")"; return 1; }
	[ ! -e "$mnt/inbox/$name" ] || { echo "# $name is still in the inbox"; return 1; }
	while read -r kind id path; do
		case $kind in
		added | present) ;;
		*) continue ;;
		esac
		n=$((n + 1))
		[ -d "$mnt/$id" ] || { echo "# $id is not in the tree"; return 1; }
		in_tree "$mnt" "$path" || return 1
	done < <(tail -n +2 "$r")
	[ "$n" -gt 0 ] && { [ -z "$want" ] || [ "$n" = "$want" ]; } || { echo "# receipt names $n runs"; return 1; }
}

# rejected MNT NAME ORIGINAL: .rejected/NAME holds the original bytes, .rejected/NAME.error says why
rejected() {
	local mnt=$1 name=$2 orig=$3
	cmp -s "$mnt/inbox/.rejected/$name" "$orig" || { echo "# .rejected/$name differs from what was written"; return 1; }
	head -1 "$mnt/inbox/.rejected/$name.error" | grep -q "^rejected " || { echo "# no .rejected/$name.error"; return 1; }
	[ ! -e "$mnt/inbox/$name" ] || { echo "# $name is still in the inbox"; return 1; }
}

# runs_count MNT: the number of runs the tree lists
runs_count() {
	ls "$1/runs" | wc -l
}
