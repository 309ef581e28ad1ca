#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `kindex` against hostile input: what is not a regular file among the paths of an ingest (a FIFO,
# a socket, a device), refused with rule `type` and never waited on; an export that fails; option values
# that are not sizes; counts in the singular; long values quoted short. Every command runs under
# timeout(1), so a hang fails the check instead of the suite.
source "$(dirname "$0")/cli-lib.sh"
manifest_store
expect 0 "$KINDEX" init
python3 "$gen" 2 gen >/dev/null || die "gen-manifests failed"

# a FIFO and a socket in a directory: refused, the regular file beside them accepted
mkdir d
cp gen/m-0000000.json d/a.json
mkfifo d/fifo
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' d/sock || die "no socket"
expect 1 timeout 20 "$KINDEX" ingest d
check "a directory with a FIFO and a socket: no hang, both refused, the file accepted" \
	grep -qE '^3 files: 1 accepted \(1 runs? added, 0 already present\), 2 refused$' err
check "... the FIFO with rule type, as the spool says it" contains err "d/fifo: (file): type: not a regular file"
check "... the socket too" contains err "d/sock: (file): type: not a regular file"

# named on the command line: a FIFO, a device; '-' still reads standard input
expect 1 timeout 20 "$KINDEX" ingest d/fifo
check "a FIFO named on the command line: refused, named" contains err "refused d/fifo: 1 problem"
expect 1 timeout 20 "$KINDEX" ingest /dev/zero
check "a device named on the command line: refused, not read" contains err "/dev/zero: (file): type: not a regular file"
expect 0 timeout 20 "$KINDEX" ingest - <gen/m-0000001.json
check "'-' still reads standard input" grep -qE '^1 file: 1 accepted \(1 runs? added' err

# counts say "1 run", "2 runs": every summary a user reads
rm -rf one && mkdir one && cp gen/m-0000000.json one/
expect 0 "$KINDEX" --store one-store init
expect 0 "$KINDEX" --store one-store ingest one
check "ingest of one run: '1 file: 1 accepted (1 run added'" contains err "1 file: 1 accepted (1 run added, 0 already present), 0 refused"
expect 0 "$KINDEX" --store one-store init
check "init of a store of one run: '1 run,'" grep -qE '^store one-store: 1 run, [0-9]+ documents$' out
expect 0 "$KINDEX" --store one-store export one-ex
check "export of one run: 'exported 1 run as'" grep -qE '^exported 1 run as [0-9]+ files \([0-9]+ bytes\)' err
expect 1 "$KINDEX" --store one-store ingest --max-bytes 1 one/m-0000000.json
check "a limit of 1: 'the limit of 1 byte'" contains err "file is over the limit of 1 byte"
check "... and no plural for one" bash -c '! grep -q "limit of 1 bytes" "$1"' _ "$tmp/err"

# --max-bytes takes a size or nothing: never a wrapped-around or overflowing "unlimited"
for v in -1 12345678901234567890123 0x10 " 5" 1.5M 4X ""; do
	expect 2 "$KINDEX" ingest --max-bytes "$v" gen/m-0000000.json
	check "--max-bytes '$v': a usage error naming the option and the value" contains err "invalid --max-bytes '$v'"
done
expect 2 "$KINDEX" ingest gen/m-0000000.json --max-bytes
check "--max-bytes without a value: a usage error naming the option" contains err "--max-bytes needs a size"
expect 1 "$KINDEX" ingest --max-bytes 1K gen/m-0000000.json
check "--max-bytes 1K: a 2.8 KB file is over it" contains err "file is over the limit of 1024 bytes"
check "the size cap says how to raise it" contains err "file is over the limit of 1024 bytes (raise it with --max-bytes)"
expect 0 "$KINDEX" ingest --max-bytes 4MiB gen/m-0000000.json

# a user's value is quoted with at most 80 characters of it, cut at a character boundary with
# "…" and the number of bytes left out; the JSON pointer and the rule stay whole
python3 - gen/m-0000000.json long.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m['k' * 5000] = {}                                   # an unknown member: its pointer is /kkk…
m['run']['spec']['status'] = 'é' * 100               # 200 bytes: 80 characters shown
m['run']['spec']['observedAt'] = 'line one\nline two'
json.dump(m, open(sys.argv[2], 'w'))
PY
expect 1 "$KINDEX" ingest long.json
k80=$(printf 'k%.0s' {1..80})
e80=$(printf 'é%.0s' {1..80})
check "an unknown member of 5000 bytes: its whole pointer, the rule, 80 characters quoted" \
	grep -qF -- ": /$(printf 'k%.0s' {1..5000}): unknown-member: unknown member '$k80…' (+4920 bytes): a manifest holds" err
check "a value of 100 two-byte characters: 80 shown, the 40 bytes left out counted" \
	contains err "/run/spec/status: enum: status must be 'passed' or 'failed', found '$e80…' (+40 bytes)"
check "a newline in a value is shown, not printed: the problem stays one line" \
	contains err "/run/spec/observedAt: timestamp: 'line one\x0aline two' is not an RFC 3339"
long=$(printf 'x%.0s' {1..200})
expect 2 "$KINDEX" ingest --max-bytes "$long" gen/m-0000000.json
check "an option's argument: 80 characters quoted, the rest counted" \
	contains err "invalid --max-bytes '$(printf 'x%.0s' {1..80})…' (+120 bytes):"
expect 1 "$KINDEX" ls "benchmarks/$long"
check "a path argument: 80 characters quoted" contains err "ls: 'benchmarks/$(printf 'x%.0s' {1..69})…' (+131 bytes): no such"

# an export that fails says which file and why (here: past a file size limit, EFBIG)
expect 4 bash -c 'trap "" XFSZ; ulimit -f 1; exec "$1" export "$2"' _ "$KINDEX" "$tmp/ex-small"
check "a failed export: exit 4, the file and the error named" grep -qE "^kindex: export: cannot write $tmp/ex-small/.+: File too large$" err
finish
