#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `kindex` as a user meets it first: help for every command, the documented exit codes (0 ok,
# 1 refused, 2 usage, 3 store unavailable), and messages that say what to do.
source "$(dirname "$0")/cli-lib.sh"
cd "$tmp"
unset KINDEX_STORE

expect 0 "$KINDEX" --help
contains out "usage: kindex" || die "kindex --help prints no usage"
commands=$(awk '/^commands:/ { f = 1; next } /^$/ { f = 0 } f { print $1 }' out)
n=$(wc -w <<<"$commands")
((n >= 9)) || die "kindex --help lists $n commands"
for c in init import ingest verify export ls show canon digest; do
	grep -qx "$c" <<<"$commands" || die "kindex --help does not list '$c'"
done
for c in $commands; do
	for h in --help -h; do
		expect 0 timeout 10 "$KINDEX" "$c" "$h"
		check "kindex $c $h prints its usage" contains out "usage: kindex [--store DIR] $c"
		check "kindex $c $h prints to stdout only" test ! -s err
	done
done
expect 0 "$KINDEX" --version
check "--version names the program" grep -qE '^kindex [0-9]+\.[0-9]+' out
expect 0 "$KINDEX" -V
check "-V is --version" grep -qE '^kindex [0-9]+\.[0-9]+' out
for c in $commands; do
	expect 0 timeout 10 "$KINDEX" "$c" --help
	mv out help.want
	expect 0 timeout 10 "$KINDEX" help "$c"
	check "kindex help $c prints what kindex $c --help prints" cmp -s help.want out
done
expect 0 "$KINDEX" help
check "kindex help: kindex's usage on stdout" contains out "usage: kindex"
expect 2 "$KINDEX" help frobnicate
check "kindex help of an unknown command: exit 2, named" contains err "unknown command 'frobnicate'"

# usage errors: exit 2 and a message
expect 2 "$KINDEX"
check "no command: usage on stderr" contains err "usage: kindex"
expect 2 "$KINDEX" frobnicate
check "unknown command: exit 2, named" contains err "unknown command 'frobnicate'"
check "an unrelated name gets no suggestion" not_contains err "did you mean"
expect 2 "$KINDEX" verfy
check "a mistyped command: did you mean" contains err "unknown command 'verfy'; did you mean 'verify'?"
expect 2 "$KINDEX" --store s improt liger x.csv
check "a transposition is one typo" contains err "did you mean 'import'?"
expect 2 "$KINDEX" x
check "a one-letter name is too far from any command" not_contains err "did you mean"
expect 2 "$KINDEX" --bogus ls
check "unknown option: exit 2, named" contains err "--bogus"
expect 2 "$KINDEX" ls
check "no store given: says how to give one" contains err "--store"
expect 2 "$KINDEX" --store s ingest
check "ingest without a path: exit 2" contains err "ingest"
expect 2 "$KINDEX" --store s import csv x.csv
check "import of an unknown format: exit 2" contains err "liger"
expect 2 "$KINDEX" --store s ingest --max-bytes 0 x.json
expect 2 "$KINDEX" --store s ingest --frob x.json
expect 2 "$KINDEX" --store s show
expect 2 "$KINDEX" --store s export
expect 2 "$KINDEX" canon a b

# a store that is not there: exit 3 and how to make one, for every command that needs one
for cmd in "ls" "verify" "show abcd" "export $tmp/x" "ingest $tmp/nothing.json" "import liger $csv"; do
	# shellcheck disable=SC2086
	expect 3 "$KINDEX" --store "$tmp/missing" $cmd
	check "kindex --store missing $cmd: exit 3, says to run kindex init" contains err "kindex --store $tmp/missing init"
done
check "nothing was created by those commands" test ! -e "$tmp/missing"
# a regular file where the store should be: said so, not "no store" and `kindex init`
echo text >"$tmp/afile"
for cmd in ls init; do
	expect 3 "$KINDEX" --store "$tmp/afile" $cmd
	check "kindex --store FILE $cmd: exit 3, a file and not a store" contains err "'$tmp/afile' is a file, not a store directory"
	check "kindex --store FILE $cmd: no advice to init it" not_contains err "init)"
done
KINDEX_STORE=$tmp/missing expect 3 "$KINDEX" ls
check "\$KINDEX_STORE is the store when --store is absent" contains err "$tmp/missing"

# init: creates, reports, and is idempotent
expect 0 "$KINDEX" --store s init
check "init reports an empty store" contains out "0 runs"
expect 0 "$KINDEX" --store s init
expect 0 "$KINDEX" --store=s ls
check "an empty store lists README benchmarks/ changes.tsv compare/ digests/ index.html index.tsv regressions.json regressions.tsv runs/" \
	diff <(printf 'README\nbenchmarks/\nchanges.tsv\ncompare/\ndigests/\nindex.html\nindex.tsv\nregressions.json\nregressions.tsv\nruns/\n') out
expect 0 "$KINDEX" --store=s cat index.tsv regressions.tsv
check "an empty store's index.tsv and regressions.tsv are their headers alone" \
	bash -c "[ \"\$(cut -f1,2 '$tmp/out' | tr '\t\n' ' ;')\" = 'kernel pass;move change_pct;' ]"
expect 0 "$KINDEX" --store=s cat regressions.json
check "an empty store's regressions.json: the rule, its parameters, no change point" \
	python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); sys.exit(not (j["change_points"] == [] and j["rule"] and j["parameters"]["confirm"] == 5))' "$tmp/out"
expect 0 "$KINDEX" -q --store s verify
check "-q: verify of an empty store prints nothing" test ! -s out
expect 0 "$KINDEX" --store s verify
check "verify of an empty store: no problems" contains out "no problems"

# a Liger CSV given to ingest: refused, with the command that imports it
expect 1 "$KINDEX" --store s ingest "$csv"
check "ingest of a .csv suggests kindex import liger" contains err "import it with: kindex import liger $csv"
head -3 "$csv" >liger-rows
expect 1 "$KINDEX" --store s ingest liger-rows
check "ingest of Liger rows under another name suggests kindex import liger" \
	contains err "import it with: kindex import liger liger-rows"
expect 1 "$KINDEX" --store s ingest - <liger-rows
check "ingest of Liger rows on stdin suggests kindex import liger FILE" contains err "kindex import liger FILE"
echo '{}' >not-liger.json
expect 1 "$KINDEX" --store s ingest not-liger.json
check "ingest of a bad manifest suggests nothing" not_contains err "import liger"

# lookups that find nothing: exit 1
expect 1 "$KINDEX" --store s ls benchmarks/nothing
check "ls of a missing path: exit 1, says so" contains err "no such file or directory"
expect 1 "$KINDEX" --store s show abcdef
check "show of an unknown run: exit 1" contains err "no such run"
mkdir full && touch full/x
expect 2 "$KINDEX" --store s export full
check "export into a non-empty directory is refused" contains err "not empty"
expect 4 "$KINDEX" --store s ingest "$tmp/no-such-file.json"
check "ingest of a file that is not there: exit 4, names it" contains err "no-such-file.json"

# a store held by another writer (here `kindex watch`; a mounted kindexfs holds it the same way):
# writers get exit 3 and a message, readers still work
mkdir spool
"$KINDEX" --store s watch spool 2>"$tmp/watch.err" &
watcher=$!
for ((i = 0; i < 100; i++)); do
	grep -q watching "$tmp/watch.err" 2>/dev/null && break
	kill -0 "$watcher" 2>/dev/null || break
	sleep 0.1
done
if grep -q watching "$tmp/watch.err"; then
	expect 3 "$KINDEX" --store s ingest /dev/null
	check "a second writer: exit 3, the store is in use" contains err "in use"
	expect 0 "$KINDEX" --store s ls
	check "readers work while a writer holds the store" contains out "README"
else
	check "kindex watch starts (for the busy-store check)" false
fi
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
# `meson install` installs a man page for every program it installs (KX_BUILD_ROOT: the build
# directory, set by tests/meson.build)
if [[ -n ${KX_BUILD_ROOT:-} ]]; then
	expect 0 meson install -C "$KX_BUILD_ROOT" --no-rebuild --destdir "$tmp/dest"
	check "meson install installs kindex and kindex-bench" \
		test -n "$(find "$tmp/dest" -path '*/bin/kindex' -type f)" -a -n "$(find "$tmp/dest" -path '*/bin/kindex-bench' -type f)"
	for prog in $(find "$tmp/dest" -path '*/bin/*' -type f -printf '%f\n'); do
		check "meson install installs the man page of $prog" test -n "$(find "$tmp/dest" -path "*/man1/$prog.1" -type f)"
	done
fi
finish
