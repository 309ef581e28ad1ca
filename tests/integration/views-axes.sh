#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The axes of the pictures (docs/views.md, "Pictures"), read as a person reads them, through
# `kindex cat` and Python's XML parser:
#   - history.svg's time axis: generated series observed seconds apart, hours apart across a
#     midnight, and years apart each get at least three distinct labels in time order, written to
#     the step (HH:MM:SS, MM-DD HH:MM, YYYY), clear of each other, the first with its date beneath
#     where the labels leave it out — not one date six times over;
#   - sweep.svg's x axes, in every gpu directory of the bundled Liger import: logarithmic exactly
#     where the rule says (values above zero that span a decade or more, or three or more that are
#     the smallest times powers of two), each label placed in proportion to its value (or its log),
#     and no two labels touching (widths at 7 px a character, font size 12); FLCE forward on the
#     A100, tokens 4096 … 32768, evenly spaced on a log axis.
# Every expectation is computed here from the values the test made or from sweep.tsv.
. "$(dirname "$0")/cli-lib.sh"

command -v python3 >/dev/null || { echo "1..0 # SKIP python3 is missing"; exit 77; }
export KINDEX_STORE=$tmp/store
"$KINDEX" -q init >/dev/null || die "kindex init failed"
"$KINDEX" -q import liger "$csv" >/dev/null || die "kindex import liger failed"
flce=benchmarks/fused_linear_cross_entropy/forward/nvidia-a100-sxm4-80gb
base=$("$KINDEX" ls "$flce/hidden4096-tokens16384-vocab128256-bf16" | grep -m1 -E '^[0-9]+-')
"$KINDEX" cat "$flce/hidden4096-tokens16384-vocab128256-bf16/$base/manifest.json" >"$tmp/base.json" ||
	die "cannot read a manifest to start from"
"$KINDEX" -q export "$tmp/export" || die "kindex export failed" # the bundled data alone, for the sweeps

# three series, each in a workload of its own (tokens 111, 222, 333: groups of their own, after the
# export): 6 runs 5 s apart, 6 runs
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
        w = json.loads(json.dumps(base))
        w["workload"]["spec"]["parameters"]["tokens"] = tokens
        w["workload"]["metadata"]["name"] = "workload-axes-%d" % tokens
        when = start + i * step if start else datetime.datetime(2019 + i, 6, 1)
        m = kxjcs.series_run(w, name, i, "axes-test/%s/%d" % (name, i), when.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                             100_000_000 + 1_000_000 * i)
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

# sweep.svg's x axes in every gpu directory: each panel (in sweep.tsv's order) against its values
python3 - "$tmp/export" >"$tmp/sweeps" <<'EOF'
import collections, math, os, sys, xml.etree.ElementTree as ET
root = sys.argv[1]
NS = "{http://www.w3.org/2000/svg}"
def number(s):
    try:
        return float(s)
    except ValueError:
        return None
counts, bad = collections.Counter(), []
for dirpath, dirs, files in sorted(os.walk(os.path.join(root, "benchmarks"))):
    if "sweep.tsv" not in files:
        continue
    lines = [l.split("\t") for l in open(os.path.join(dirpath, "sweep.tsv")).read().splitlines()]
    head = lines[0]
    ia, iv, ifx = head.index("axis"), head.index("axis_value" if "axis_value" in head else "value"), head.index("fixed")
    sweeps = []  # (axis, values in order)
    for r in lines[1:]:
        if not sweeps or sweeps[-1][:2] != [r[ia], r[ifx]]:
            sweeps.append([r[ia], r[ifx], []])
        if r[iv] not in sweeps[-1][2]:
            sweeps[-1][2].append(r[iv])
    panels = [g for g in ET.parse(os.path.join(dirpath, "sweep.svg")).getroot().iter(NS + "g")]
    rel = os.path.relpath(dirpath, root)
    if len(panels) != len(sweeps):
        bad.append("%s: %d panels, %d sweeps" % (rel, len(panels), len(sweeps)))
        continue
    for (axis, _, values), g in zip(sweeps, panels):
        texts = list(g.iter(NS + "text"))
        title = [t.text for t in texts if t.text in (axis, axis + " (log scale)")]
        labels = [(float(t.get("x")), t.text) for t in texts
                  if t.get("text-anchor") == "middle" and t.get("fill") == "#57606a" and t.text in values]
        nums = [number(v) for v in values]
        numeric = all(x is not None for x in nums)
        lo = min(nums) if numeric else 0
        want_log = numeric and lo > 0 and (max(nums) / lo >= 10 or (
            len(nums) >= 3 and all(math.log2(x / lo) == int(math.log2(x / lo)) for x in nums)))
        counts["log" if want_log else "linear" if numeric else "categorical"] += 1
        where = "%s over %s" % (rel, axis)
        if title != [axis + (" (log scale)" if want_log else "")]:
            bad.append("%s: titled %s" % (where, title))
        if not labels or labels[-1][1] != values[-1]:
            bad.append("%s: the last value is not labelled" % where)
        for a, b in zip(labels, labels[1:]):
            if b[0] - a[0] < 7 * (len(a[1]) + len(b[1])) / 2:
                bad.append("%s: %s and %s touch" % (where, a[1], b[1]))
        if numeric and len(labels) >= 2:  # in proportion to the value, or its log
            f = (lambda v: math.log(v)) if want_log else (lambda v: v)
            (x0, v0), (x1, v1) = (labels[0][0], float(labels[0][1])), (labels[-1][0], float(labels[-1][1]))
            for x, v in labels:
                if abs(x0 + (f(float(v)) - f(v0)) / (f(v1) - f(v0)) * (x1 - x0) - x) > 0.15:
                    bad.append("%s: %s at %.1f" % (where, v, x))
print(" ".join("%s=%d" % kv for kv in sorted(counts.items())) + "\t%d" % len(bad))
for b in bad[:8]:
    print("# " + b)
EOF
IFS=$'\t' read -r sweep_counts sweep_bad <"$tmp/sweeps"
tail -n +2 "$tmp/sweeps"
check "every sweep panel's x axis: log where the rule says, labels in place and clear of each other ($sweep_counts; $sweep_bad wrong)" \
	[ "${sweep_bad:-1}" = 0 ]
grep -o '<text[^>]*text-anchor="middle" fill="#57606a">[0-9]*</text>' "$tmp/export/$flce/sweep.svg" | sed 's/.*x="\([0-9.]*\)".*>\([0-9]*\)<.*/\1 \2/' >"$tmp/flce-x"
check "FLCE forward A100 over tokens 4096 … 32768: a log axis, the four evenly spaced ($(tr '\n' ';' <"$tmp/flce-x"))" \
	bash -c "grep -q '>tokens (log scale)<' '$tmp/export/$flce/sweep.svg' &&
		awk 'NR > 1 { d = \$1 - x; if (NR > 2 && (d - last > 0.15 || last - d > 0.15)) bad = 1; last = d } { x = \$1 } END { exit bad || NR != 4 }' '$tmp/flce-x'"
finish
