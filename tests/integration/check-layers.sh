#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/check-layers on a tree of its own: two folders, objects compiled with cc into a meson-like
# build directory. It passes on a drawing that holds, and fails, naming the files and a symbol, on
# a circle of files, a folder using a later one, and a global named after neither kx_ nor its folder.
# Without BUILD_DIR it checks SOURCE/build, else the build directory there built last.
# Then on the real build: this tree's own drawing holds.
# usage: check-layers.sh SOURCE_ROOT BUILD_ROOT
set -uo pipefail
root=${1:?usage: check-layers.sh SOURCE_ROOT BUILD_ROOT}
build=${2:?usage: check-layers.sh SOURCE_ROOT BUILD_ROOT}
check=$root/scripts/check-layers
command -v cc >/dev/null && command -v nm >/dev/null || { echo "# SKIP: needs cc and nm"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$tmp/err" | head -20; }
# expect STATUS TEXT DESCRIPTION: check-layers on $tmp/t exits STATUS and its output holds TEXT
expect() {
	local got=0
	python3 "$check" --root "$tmp/t" "$tmp/t/build" >"$tmp/out" 2>"$tmp/err" || got=$?
	if [[ $got == "$1" ]] && grep -qF -- "$2" "$tmp/err" "$tmp/out"; then ok "$3"; else
		echo "# exit $got, wanted $1 with: $2" >"$tmp/err.head"; cat "$tmp/err.head" "$tmp/err" >"$tmp/err.all"
		mv "$tmp/err.all" "$tmp/err"; not_ok "$3"; fi
}
# src FOLDER FILE C-SOURCE: write it and compile it where meson puts objects
src() {
	mkdir -p "$tmp/t/src/$1" "$tmp/t/build/src/$1/lib$1.a.p"
	printf '%s\n' "$3" >"$tmp/t/src/$1/$2"
	cc -c -o "$tmp/t/build/src/$1/lib$1.a.p/$2.o" "$tmp/t/src/$1/$2" 2>"$tmp/err" || { not_ok "cc $1/$2"; exit 1; }
}
mkdir -p "$tmp/t/docs" "$tmp/t/include/kx"
printf '# Architecture\n\n    layers: lo hi\n' >"$tmp/t/docs/architecture.md"
printf 'int kx_lo_public(void);\n' >"$tmp/t/include/kx/lo.h"

src lo base.c 'int lo_base(void) { return 1; }'
src lo top.c 'int lo_base(void); int kx_lo_public(void) { return lo_base() + 1; }'
src hi user.c 'int kx_lo_public(void); static int helper(void) { return 2; } int hi_use(void) { return kx_lo_public() + helper(); }'
expect 0 "lo: base.c top.c" "a drawing that holds: exit 0, each folder's files lowest first"

src lo base.c 'int lo_top(void); int lo_base(void) { return lo_top(); }'
src lo top.c 'int lo_base(void); int lo_top(void) { return 0; } int kx_lo_public(void) { return lo_base() + 1; }'
expect 1 "a circle in src/lo/ among base.c, top.c: base.c -> top.c (lo_top), top.c -> base.c (lo_base)" \
	"a circle of two files: exit 1, both edges named with a symbol"
src lo base.c 'int lo_base(void) { return 1; }'

src lo down.c 'int hi_use(void); int lo_down(void) { return hi_use(); }'
expect 1 "src/lo/ uses src/hi/, which comes after it in docs/architecture.md's layers: lo/down.c needs hi_use from hi/user.c" \
	"a folder using a later one: exit 1, the file and symbol named"
rm "$tmp/t/src/lo/down.c" "$tmp/t/build/src/lo/liblo.a.p/down.c.o"

src hi user.c 'int kx_lo_public(void); int helper(void) { return 2; } int hi_use(void) { return kx_lo_public() + helper(); }'
expect 1 "src/hi/user.c defines helper: a global name is kx_... (declared in include/kx/) or hi_..." \
	"a global named after neither kx_ nor its folder: exit 1, named"
src hi user.c 'int kx_hi_secret(void) { return 3; }'
expect 1 "src/hi/user.c defines kx_hi_secret" "a kx_ name no include/kx/ header declares: exit 1"
rm "$tmp/t/src/hi/user.c" "$tmp/t/build/src/hi/libhi.a.p/user.c.o"
expect 0 "lo: base.c top.c" "the drawing holds again"

touch -d '+1 minute' "$tmp/t/src/lo/base.c"
expect 2 "src/lo/base.c is newer than its object): meson compile" "a build older than its sources: exit 2, refused"
src lo base.c 'int lo_base(void) { return 1; }'

src extra x.c 'int extra_x(void) { return 0; }'
expect 1 "src/extra/ is not in the layers line of docs/architecture.md" "a folder the layers line does not name: exit 1"

# no BUILD_DIR: SOURCE/build, else the meson build directory built last (scripts/test.sh's build-test)
rm -rf "$tmp/t/src/extra" "$tmp/t/build/src/extra"
mv "$tmp/t/build" "$tmp/t/build-test" && touch "$tmp/t/build-test/build.ninja"
# expect_default STATUS TEXT DESCRIPTION: as expect, without BUILD_DIR
expect_default() {
	local got=0
	python3 "$check" --root "$tmp/t" >"$tmp/out" 2>"$tmp/err" || got=$?
	if [[ $got == "$1" ]] && grep -qF -- "$2" "$tmp/err" "$tmp/out"; then ok "$3"; else
		echo "# exit $got, wanted $1 with: $2" >>"$tmp/err"; not_ok "$3"; fi
}
expect_default 0 "checking $tmp/t/build-test, the meson build directory here built last" \
	"no BUILD_DIR and no build/: the build directory here is checked, and named"
rm "$tmp/t/build-test/build.ninja" # (a directory without it is not a build directory)
expect_default 2 "no build directory in $tmp/t" "no build directory at all: exit 2, said so"

# this tree
python3 "$check" "$build" >"$tmp/out" 2>"$tmp/err"
rc=$?
[[ $rc == 0 ]] && ok "this tree's objects keep the drawing of docs/architecture.md" ||
	not_ok "this tree's objects keep the drawing of docs/architecture.md (exit $rc)"
echo "1..$n"
((failed == 0))
