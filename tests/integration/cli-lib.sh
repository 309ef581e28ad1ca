# SPDX-License-Identifier: MIT
# Shared by the cli-*.sh integration tests (sourced, not run): the programs under test, a scratch
# directory removed on exit (exports are read-only, so it is made writable first), and small
# assertions that say what was expected when they fail.
#
# Environment (set by tests/meson.build): KINDEX (the CLI), KX_SOURCE_ROOT (the source tree, for
# examples/, tests/data, tests/tools and bench/gen-manifests), KX_CORRUPT (tests/integration/cli-corrupt.c, built).

set -u
: "${KINDEX:?KINDEX must name the kindex binary}"
: "${KX_SOURCE_ROOT:?KX_SOURCE_ROOT must name the source tree}"
[[ -x $KINDEX ]] || { echo "kindex not built: $KINDEX" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kindex-cli-test.XXXXXX")
cleanup() {
	chmod -R u+w "$tmp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
csv=$KX_SOURCE_ROOT/examples/liger/all_benchmark_data.csv
data=$KX_SOURCE_ROOT/tests/data

fails=0
die() {
	echo "FAIL: $*" >&2
	exit 1
}
# check DESCRIPTION CMD...: run CMD (a test), report, keep going
check() {
	local what=$1
	shift
	if "$@"; then
		echo "ok - $what"
	else
		echo "FAIL: $what" >&2
		fails=$((fails + 1))
	fi
}
finish() {
	if ((fails)); then
		echo "$fails check(s) failed" >&2
		exit 1
	fi
	echo "all checks passed"
	exit 0
}

# expect STATUS CMD...: run CMD, keep stdout in $tmp/out and stderr in $tmp/err; die unless it
# exits with STATUS
expect() {
	local want=$1 got=0
	shift
	"$@" >"$tmp/out" 2>"$tmp/err" || got=$?
	if [[ $got != "$want" ]]; then
		echo "--- stdout" >&2
		head -c 4000 "$tmp/out" >&2
		echo "--- stderr" >&2
		head -c 4000 "$tmp/err" >&2
		die "exit status $got, expected $want: $*"
	fi
}

# contains FILE TEXT: FILE holds TEXT (fixed string)
contains() {
	grep -qF -- "$2" "$1" || {
		echo "  '$2' not in $1:" >&2
		head -c 2000 "$1" | sed 's/^/    /' >&2
		return 1
	}
}
# not_contains FILE TEXT: FILE does not hold TEXT (fixed string)
not_contains() {
	! grep -qF -- "$2" "$1" || {
		echo "  '$2' in $1:" >&2
		grep -F -- "$2" "$1" | head -c 2000 | sed 's/^/    /' >&2
		return 1
	}
}
# manifest_store: work in $tmp with KINDEX_STORE=$tmp/store and $gen naming bench/gen-manifests
# (synthetic manifests); exits 77 where python3, which it needs, is missing
manifest_store() {
	cd "$tmp" || die "cannot enter $tmp"
	export KINDEX_STORE=$tmp/store
	gen=$KX_SOURCE_ROOT/bench/gen-manifests
	command -v python3 >/dev/null || { echo "# SKIP: bench/gen-manifests needs python3"; exit 77; }
}
