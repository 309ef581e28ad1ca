#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `kindex canon` and `kindex digest`, the tools a user runs to see why a manifest's digest does not
# match: the RFC 8785 reference vectors byte for byte, the published fixture's three digests, and
# refusals that point at the line.
source "$(dirname "$0")/cli-lib.sh"
cd "$tmp"

# RFC 8785 vectors: canon prints each JSON text's JCS form, one per line
n=0
for in in "$data"/jcs/input/*.json; do
	name=$(basename "$in")
	{ cat "$data/jcs/output/$name"; printf '\n'; } >want
	expect 0 "$KINDEX" canon "$in"
	check "canon $name matches the RFC 8785 output byte for byte" cmp -s out want
	expect 0 "$KINDEX" canon - <"$in"
	check "canon - (stdin) of $name too" cmp -s out want
	n=$((n + 1))
done
((n >= 6)) || die "only $n JCS vectors found"

# numbers and strings a user writes by hand
printf '%s\n' '{"b": 1E3, "a": [1.0, -0, 0.1, 1e21, 1e-7, 100000000000000000000], "c": "\u00e9\ud83d\ude00\/"}' >in.json
expect 0 "$KINDEX" canon in.json
printf '%s\n' '{"a":[1,0,0.1,1e+21,1e-7,100000000000000000000],"b":1000,"c":"é😀/"}' >want
check "canon: ECMAScript numbers, sorted keys, minimal escapes" cmp -s out want
# JSON Lines in, one JCS line per text out
printf '{"z":1,"a":2}\n\n[3, 4]\n"x"\n' >lines.json
expect 0 "$KINDEX" canon lines.json
check "canon of JSON Lines: one line each" diff <(printf '{"a":2,"z":1}\n[3,4]\n"x"\n') out

# what canon refuses: exit 1, file:line:col
printf '{\n  "a": 1,\n  "a": 2\n}\n' >dup.json
expect 1 "$KINDEX" canon dup.json
check "canon refuses duplicate keys, at dup.json:3:8, naming /a" contains err "dup.json:3:8: /a: duplicate-key"
printf '{"n": 1e999}\n' >big.json
expect 1 "$KINDEX" canon big.json
check "canon refuses a non-finite number" contains err "non-finite"
printf '{"a":\n  [1,\n   2,,3]}\n' >syntax.json
expect 1 "$KINDEX" canon syntax.json
check "canon points at a syntax error (syntax.json:3:6)" contains err "syntax.json:3:6: json-syntax"
printf '{"a": "\xff"}\n' >latin1.json
expect 1 "$KINDEX" canon latin1.json
check "canon refuses bytes that are not UTF-8" contains err "utf8"

# digest: the published fixture's three documents
fx=$data/fixtures/flce-forward-a100.manifest.json
expect 0 "$KINDEX" digest "$fx"
check "digest: protocol" contains out "protocol sha256:a79eaf4df66c97c6adc1fb2d09df78682155d1ea86652ae0b70199875bde7747"
check "digest: environment" contains out "environment sha256:90c9e2764222f592477cfccf3373519add5a1b881563956ad058c4f99e41b6b9"
check "digest: run" contains out "run sha256:b3b20f4a454b2a9a71a2c91dea53d4cb06282e6d0ef2e64b450eb134df0002fe"
check "digest prints one line per included document (3)" test "$(wc -l <out)" = 3
# the digest is sha256 of the JCS of {apiVersion, kind, spec}: recompute it with the tools
# a user has (canon + sha256sum), independently of `digest`
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["protocol"]; print(json.dumps({k: d[k] for k in ("apiVersion","kind","spec")}))' "$fx" >proto.json ||
	die "python3 cannot extract the fixture's protocol"
expect 0 "$KINDEX" canon proto.json
h=$(head -c -1 out | sha256sum | cut -c1-64)
check "sha256 of canon {apiVersion, kind, spec} is the protocol digest" test "$h" = a79eaf4df66c97c6adc1fb2d09df78682155d1ea86652ae0b70199875bde7747
# metadata is not hashed: a renamed copy has the same digests
sed 's/"liger-bench-do-bench-forward"/"renamed"/' "$fx" >renamed.json
expect 0 "$KINDEX" digest renamed.json
check "metadata is not hashed" contains out "protocol sha256:a79eaf4df66c97c6adc1fb2d09df78682155d1ea86652ae0b70199875bde7747"
# a single document
python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["environment"]))' "$fx" >env.json ||
	die "python3 cannot extract the fixture's environment"
expect 0 "$KINDEX" digest env.json
check "digest of a single document" contains out "environment sha256:90c9e2764222f592477cfccf3373519add5a1b881563956ad058c4f99e41b6b9"
expect 0 "$KINDEX" digest - <"$fx"
check "digest - reads stdin" contains out "run sha256:b3b20f4a"
printf '[1,2]\n' >arr.json
expect 1 "$KINDEX" digest arr.json
check "digest of something that is not a document: exit 1" contains err "arr.json:1"
finish
