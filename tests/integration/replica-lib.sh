# SPDX-License-Identifier: MIT
# Shared by the replica-*.sh integration tests (sourced after mount-lib.sh and inbox-lib.sh):
# reading PUBLISHED, waiting for a generation with a deadline, and the checks a replica's user
# would make — a generation opens and verifies, and holds every run the writer accepted.

# published_field DIR KEY: KEY's value in DIR/PUBLISHED (empty when there is none)
published_field() {
	awk -v k="$2" '$1 == k { print $2 }' "$1/PUBLISHED" 2>/dev/null
}

# wait_generation DIR N [SECONDS]: DIR/PUBLISHED names generation N or later within SECONDS (20)
wait_generation() {
	local deadline=$((SECONDS + ${3:-20})) g
	while :; do
		g=$(published_field "$1" generation)
		[ -n "$g" ] && [ "$g" -ge "$2" ] && return 0
		[ $SECONDS -lt $deadline ] || { echo "# $1/PUBLISHED names generation '${g:-none}', not $2 or later"; return 1; }
		sleep 0.05
	done
}

# wait_runs DIR N [SECONDS]: the generation DIR/PUBLISHED names holds N runs within SECONDS (20)
wait_runs() {
	local deadline=$((SECONDS + ${3:-20})) g n
	while :; do
		g=$(published_field "$1" generation)
		n=$([ -n "$g" ] && "$KINDEX" --store "$1/gen-$g" ls runs 2>/dev/null | wc -l)
		[ "${n:-0}" -ge "$2" ] && return 0
		[ $SECONDS -lt $deadline ] || { echo "# generation ${g:-none} of $1 holds ${n:-0} runs, not $2"; return 1; }
		sleep 0.05
	done
}

# wait_settled DIR [SECONDS]: DIR/PUBLISHED names the same generation for a whole second, within
# SECONDS (20) — a writer that publishes every round publishes a round's commit, then the sizes it
# keeps after it (docs/store.md, 'Z') in a publication of their own
wait_settled() {
	local deadline=$((SECONDS + ${2:-20})) g was= since=$EPOCHREALTIME
	while :; do
		g=$(published_field "$1" generation)
		if [ "$g" != "$was" ]; then
			was=$g since=$EPOCHREALTIME
		elif awk -v a="$since" -v b="$EPOCHREALTIME" 'BEGIN { exit !(b - a >= 1) }'; then
			return 0
		fi
		[ $SECONDS -lt $deadline ] || { echo "# $1/PUBLISHED still moves (generation ${g:-none})"; return 1; }
		sleep 0.05
	done
}

# wait_kept DIR N [SECONDS]: DIR holds exactly N generations within SECONDS (10); a replaced
# generation stays a second before the writer removes it (docs/replicas.md)
wait_kept() {
	local deadline=$((SECONDS + ${3:-10})) n
	while :; do
		n=$(find "$1" -maxdepth 1 -name 'gen-*' ! -name '*.tmp' | wc -l)
		[ "$n" = "$2" ] && return 0
		[ $SECONDS -lt $deadline ] || { echo "# $1 holds $n generations, not $2"; return 1; }
		sleep 0.1
	done
}

# verifies STORE: `kindex verify` is clean
verifies() {
	"$KINDEX" --store "$1" verify >"$work/verify.out" 2>&1 || { sed 's/^/# /' "$work/verify.out"; return 1; }
}

# runs_of STORE: the run directories of runs/, sorted
runs_of() {
	"$KINDEX" --store "$1" ls runs | sort
}
