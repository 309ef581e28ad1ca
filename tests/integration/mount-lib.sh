# SPDX-License-Identifier: MIT
# Shared by the mount-*.sh integration tests (sourced, not run): a scratch directory, the Liger
# store and its export, mounting with a deadline, and a trap that unmounts and stops every
# daemon the test started, whatever happens. Each test exits 77 (skip) only where /dev/fuse is
# missing, as libfuse's own tests do.
#
# Environment (set by meson): KINDEXFS, KINDEX (the built binaries), KX_SOURCE_ROOT.

set -u

if [ ! -c /dev/fuse ]; then
	echo "1..0 # SKIP /dev/fuse is missing"
	exit 77
fi
KINDEXFS=${KINDEXFS:?set KINDEXFS to the kindexfs binary}
KINDEX=${KINDEX:?set KINDEX to the kindex binary}
KX_SOURCE_ROOT=${KX_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
LIGER_CSV="$KX_SOURCE_ROOT/examples/liger/all_benchmark_data.csv"
# every row Liger's CSV ever held (a superset of the newest: older runs of each implementation)
HISTORY_CSV="$KX_SOURCE_ROOT/examples/liger-history/all_benchmark_data.history.csv"
export LC_ALL=C

work=$(mktemp -d "${TMPDIR:-/tmp}/kindexfs-test.XXXXXX")
mounts=()
pids=()
failures=0
checks=0

cleanup() {
	local m p
	for m in "${mounts[@]}"; do
		if mountpoint -q "$m" 2>/dev/null; then
			fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
		fi
	done
	for p in "${pids[@]}"; do
		if kill -0 "$p" 2>/dev/null; then
			kill -TERM "$p" 2>/dev/null
			stopped "$p" 2>/dev/null
		fi
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ok CONDITION-EXIT-STATUS MESSAGE: TAP-ish lines, failures counted
pass() { checks=$((checks + 1)); echo "ok $checks - $*"; }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); echo "not ok $checks - $*"; }
check() {
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
# verdicts FILE LABEL N: FILE holds N lines "ok WHAT" or "FAILED WHAT" (a Python reader's), each a
# check named "LABEL: WHAT"; a traceback there fails line by line
verdicts() {
	local file=$1 label=$2 n=$3 verdict what
	check "$label: $n verdicts" [ "$(grep -c '^ok \|^FAILED ' "$file")" = "$n" ]
	while read -r verdict what; do
		if [ "$verdict" = ok ]; then pass "$label: $what"; else fail "$label: $verdict $what"; fi
	done <"$file"
}
finish() {
	echo "1..$checks"
	[ "$failures" -eq 0 ] || { echo "# $failures of $checks checks failed" >&2; exit 1; }
	exit 0
}
die() { echo "Bail out! $*"; exit 1; }

# make_liger_store DIR: init + import the bundled CSV
make_liger_store() {
	"$KINDEX" -q --store "$1" init >/dev/null || die "kindex init failed"
	"$KINDEX" -q --store "$1" import liger "$LIGER_CSV" >/dev/null || die "kindex import liger failed"
}

# make_history_store DIR EXPORT: init + import the newest CSV and the history CSV, then export it
make_history_store() {
	"$KINDEX" -q --store "$1" init >/dev/null || die "kindex init failed"
	"$KINDEX" -q --store "$1" import liger "$LIGER_CSV" "$HISTORY_CSV" >/dev/null || die "kindex import liger failed"
	"$KINDEX" -q --store "$1" export "$2" || die "kindex export failed"
}

# mount_fg STORE MOUNTPOINT [OPTIONS...]: start kindexfs in the foreground (in the background of
# this shell), stderr to MOUNTPOINT.err, wait for the mount with a deadline; sets $daemon.
# A non-interactive shell starts background jobs with SIGINT ignored (and libfuse, rightly, keeps
# an ignored signal ignored): env --default-signal gives the daemon the signals a terminal would.
mount_fg() {
	local store=$1 mnt=$2
	shift 2
	mkdir -p "$mnt"
	env --default-signal "$KINDEXFS" "$store" "$mnt" -f "$@" 2>"$mnt.err" &
	daemon=$!
	pids+=("$daemon")
	mounts+=("$mnt")
	wait_mounted "$mnt" "$daemon" || { cat "$mnt.err" >&2; die "kindexfs did not mount $mnt"; }
}

# wait_mounted MOUNTPOINT [PID]: up to 20 s
wait_mounted() {
	local deadline=$((SECONDS + 20))
	until mountpoint -q "$1"; do
		if [ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null; then
			return 1
		fi
		[ $SECONDS -lt $deadline ] || return 1
		sleep 0.05
	done
}

# exits PID SECONDS: the process is gone within SECONDS (it is not waited for)
exits() {
	local deadline=$((SECONDS + $2))
	while kill -0 "$1" 2>/dev/null; do
		[ $SECONDS -lt $deadline ] || return 1
		sleep 0.05
	done
}

# stopped PID: the daemon exits within 20 s; returns its exit status (KILLed and 124 if not)
stopped() {
	if ! exits "$1" 20; then
		kill -KILL "$1" 2>/dev/null
		wait "$1" 2>/dev/null
		return 124
	fi
	wait "$1"
}

# unmount MOUNTPOINT PID: fusermount3 -u, then the daemon must exit 0 within 20 s
unmount() {
	fusermount3 -u "$1" || return 1
	stopped "$2"
}

# listing DIR: every entry below DIR with what tools rely on — type, size (files: a directory's
# size is the file system's own business), mtime to the nanosecond, mode, link count
listing() {
	(cd "$1" && find . -mindepth 1 -type f -printf '%y %s %T@ %m %n %p\n' &&
		find . -mindepth 1 -type d -printf '%y - %T@ %m %n %p\n') | sort -k6
}
