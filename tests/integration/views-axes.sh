#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The axes of the pictures (docs/views.md, "Pictures"), read as a person reads them, through
# `kindex cat` and Python's XML parser:
#   - history.svg's time axis: generated series observed seconds apart, hours apart across a
#     midnight, and years apart each get at least three distinct labels in time order, written to
#     the step (HH:MM:SS, MM-DD HH:MM, YYYY), clear of each other, the first with its date beneath
#     where the labels leave it out — not one date six times over.
# Every expectation is computed here from the values the test made.
. "$(dirname "$0")/cli-lib.sh"

command -v python3 >/dev/null || { echo "1..0 # SKIP python3 is missing"; exit 77; }
export KINDEX_STORE=$tmp/store
"$KINDEX" -q init >/dev/null || die "kindex init failed"
"$KINDEX" -q import liger "$csv" >/dev/null || die "kindex import liger failed"
flce=benchmarks/fused_linear_cross_entropy/forward/nvidia-a100-sxm4-80gb
base=$("$KINDEX" ls "$flce/hidden4096-tokens16384-vocab128256-bf16" | grep -m1 -E '^[0-9]+-')
"$KINDEX" cat "$flce/hidden4096-tokens16384-vocab128256-bf16/$base/manifest.json" >"$tmp/base.json" ||
	die "cannot read a manifest to start from"

# three series, each in a workload of its own (tokens 111, 222, 333: groups of their own): 6 runs 5 s apart, 6 runs
# 2 h apart from 21:00 (across a midnight), 7 runs a year apart
python3 - "$tmp/base.json" "$tmp/series.jsonl" <<'EOF' || die "cannot make the manifests"
import datetime, json, os, sys
sys.path.insert(0, os.path.join(os.environ["KX_SOURCE_ROOT"], "tests", "integration"))
import kxjcs
base = json.load(open(sys.argv[1]))
out = open(sys.argv[2], "w")
series = {
    "seconds": (111, datetime.datetime(2026, 4, 7, 12, 0, 0), datetime.timedelta(seconds=5), 6),
    "hours": (222, datetime.datetime(2026, 4, 7, 21, 0, 0), datetime.timedelta(hours=2), 6),
    "years": (333, None, None, 7),
}
for name, (tokens, start, step, n) in series.items():
    for i in range(n):
        m = json.loads(json.dumps(base))
        m["workload"]["spec"]["parameters"]["tokens"] = tokens
        m["workload"]["metadata"]["name"] = "workload-axes-%d" % tokens
        m["implementation"]["spec"] = {"name": name, "version": "1.%d" % i}
        m["implementation"]["metadata"] = {"name": "%s-1.%d" % (name, i)}
        spec = m["run"]["spec"]
        spec["workloadDigest"] = kxjcs.digest(m["workload"])
        spec["implementationDigest"] = kxjcs.digest(m["implementation"])
        spec["sourceNative"]["externalId"] = "axes-test/%s/%d" % (name, i)
        when = start + i * step if start else datetime.datetime(2019 + i, 6, 1)
        spec["observedAt"] = when.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        ns = 100_000_000 + 1_000_000 * i
        spec["timing"]["latencyNs"]["median"] = ns
        for x in spec["measurements"]:
            x["value"] = ns
        spec["sourceNative"]["metrics"] = {"ms_20": ns / 1e6, "ms_50": ns / 1e6, "ms_80": ns / 1e6}
        out.write(json.dumps(m, separators=(",", ":")) + "\n")
EOF
expect 0 "$KINDEX" ingest "$tmp/series.jsonl"
for tokens in 111 222 333; do
	dir=$("$KINDEX" ls "$flce" | grep -m1 -- "-tokens$tokens-" | tr -d /)
	[ -n "$dir" ] || die "no group of tokens=$tokens in $flce"
	"$KINDEX" cat "$flce/$dir/history.svg" >"$tmp/history-$tokens.svg" || die "cannot read $flce/$dir/history.svg"
done

# time_labels SVG: the time axis's labels "x<TAB>label", then "context<TAB>text" for the line beneath
time_labels() {
	python3 - "$1" <<'EOF'
import sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
for t in ET.parse(sys.argv[1]).getroot().iter(NS + "text"):
    if t.get("text-anchor") == "middle" and t.get("fill") == "#57606a" and not t.get("transform"):
        print(("context\t" if t.get("font-size") == "11" else t.get("x") + "\t") + (t.text or ""))
EOF
}
# axis_ok FILE REGEX CONTEXT FIRST LAST: at least 3 labels, distinct, each matching REGEX, in time order
# (as strings of one format), the first no earlier than FIRST and the last no later than LAST (as
# strings), no two touching at 7 px a character; the line beneath the first is CONTEXT
axis_ok() {
	python3 - "$@" <<'EOF'
import re, sys
path, regex, context, first, last = sys.argv[1:6]
rows = [l.split("\t", 1) for l in open(path).read().splitlines()]
labels = [(float(x), s) for x, s in rows if x != "context"]
ctx = [s for x, s in rows if x == "context"]
texts = [s for _, s in labels]
ok = (len(texts) >= 3 and len(set(texts)) == len(texts) and all(re.fullmatch(regex, s) for s in texts)
      and texts == sorted(texts) and texts[0] >= first and texts[-1] <= last
      and all(b[0] - a[0] >= 7 * (len(a[1]) + len(b[1])) / 2 for a, b in zip(labels, labels[1:]))
      and ctx == ([context] if context else []))
print(" ".join(texts) + (" | " + ctx[0] if ctx else ""))
sys.exit(0 if ok else 1)
EOF
}
# axis CASE SVG REGEX CONTEXT FIRST LAST: one check of a history.svg's time axis (axis_ok)
axis() {
	local what=$1 got st=0
	shift
	time_labels "$1" >"$1.labels"
	got=$(axis_ok "$1.labels" "${@:2}") || st=$?
	check "$what ($got)" [ "$st" = 0 ]
}
axis "runs 5 s apart: distinct times of day, the date beneath the first" "$tmp/history-111.svg" \
	'[0-2][0-9]:[0-5][0-9]:[0-5][0-9]' 2026-04-07 11:59:59 12:00:26
axis "runs 2 h apart across a midnight: the date and time in each label, the year beneath the first" \
	"$tmp/history-222.svg" '04-0[78] [0-2][0-9]:[0-5][0-9]' 2026 '04-07 20:00' '04-08 08:00'
axis "runs a year apart: the years" "$tmp/history-333.svg" '20[0-9][0-9]' '' 2019 2025

finish
