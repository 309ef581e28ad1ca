#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The source tree needs nothing beside it: its files as git knows them (tracked ones with their
# working-tree content, plus untracked ones that are not ignored, so uncommitted work counts) are
# copied into an empty mktemp directory, configured and built there with meson, and the tests that
# read reference data (unit canon, ingest, liger, manifest; cli-json) run in the copy. It passes
# only if every one of them passes and none skips, in the copy or in any of its TAP lines. Exits
# 77 only where the source is not a git checkout (a release tarball: there is no file list).
#
# Environment (set by tests/meson.build): KX_SOURCE_ROOT, the source tree to copy.

set -u
src=${KX_SOURCE_ROOT:?KX_SOURCE_ROOT must name the source tree}
tests=(canon ingest liger manifest cli-json)

if ! git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "1..0 # SKIP $src is not a git checkout"
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kindex-selfcontained.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
die() {
	echo "FAIL: $*" >&2
	exit 1
}

# $tmp/tree is the only entry of $tmp: ../shared (or anything else) beside it is not there
mkdir "$tmp/tree"
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do [[ -e $f || -L $f ]] && printf '%s\0' "$f"; done |
	tar --null -T - -cf -) | tar -C "$tmp/tree" -xf - || die "cannot copy the tracked files of $src"
[[ $(ls -A "$tmp") == tree ]] || die "the scratch directory holds more than the copy: $(ls -A "$tmp")"
[[ -f $tmp/tree/meson.build ]] || die "the copy has no meson.build"
echo "# copied $(find "$tmp/tree" -type f | wc -l) files of $src"

cd "$tmp/tree"
# nothing from the outer test run may point the copy back at the source tree
unset KX_SOURCE_ROOT KINDEX KINDEXFS KX_CORRUPT KX_SHARED
meson setup build -Dbuildtype=debug -Dcuda=disabled -Dfuse=disabled >setup.log 2>&1 ||
	{ tail -30 setup.log >&2; die "meson setup of the copy failed"; }
meson test -C build "${tests[@]}" >test.out 2>&1
status=$?
cat test.out
((status == 0)) || { tail -60 build/meson-logs/testlog.txt >&2; die "meson test in the copy exited $status"; }

fails=0
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
check "all ${#tests[@]} tests passed in the copy" grep -qE "^Ok: +${#tests[@]} *\$" test.out
check "none skipped" grep -qE '^Skipped: +0 *$' test.out
check "no TAP line or script output says SKIP" bash -c '! grep -n "SKIP" build/meson-logs/testlog.txt >&2'
check "the copy's tests were given the copy as their source tree" grep -qF "KX_SOURCE_ROOT=$tmp/tree" build/meson-logs/testlog.txt
((fails == 0)) || die "$fails check(s) failed"
echo "all checks passed"
