#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The pictures, as a user looks at them (docs/views.md): ranking.svg in every group and sweep.svg
# in every gpu directory of the bundled Liger import (the newest CSV and the history CSV), on a
# mount and in the export. Every picture parses (xmllint), has no script and no external
# reference, and draws what the CSV says — computed by tests/tools/liger_views.py from the CSV
# alone: a ranking's bars one per current run in rank order, each bar's length in proportion to
# its median on a linear axis (in order on a log one), the within-noise runs marked; a sweep
# picture's panels the sweeps of sweep.tsv in order, a dot per point. A few render to PNG
# (rsvg-convert) that are not blank and show their colours; the mount's bytes are the export's
# and stat's size is the bytes read.
. "$(dirname "$0")/mount-lib.sh"

for tool in xmllint rsvg-convert; do
	command -v $tool >/dev/null || { echo "1..0 # SKIP $tool is not installed (scripts/deps.sh --test)"; exit 77; }
done
store="$work/store"
export_dir="$work/export"
mnt="$work/mnt"
make_history_store "$store" "$export_dir"
mount_fg "$store" "$mnt"

# well_formed NAME DIRS: the picture NAME in each directory of the list DIRS parses, and has no
# script and no external reference
well_formed() {
	(cd "$export_dir" && sed "s|\$|/$1|" "$2" | xargs xmllint --noout) 2>"$work/xmllint.err"
	check "every $1 is well-formed XML ($(wc -l <"$work/xmllint.err") lines of complaints)" [ ! -s "$work/xmllint.err" ]
	local bad
	bad=$(cd "$export_dir" && sed "s|\$|/$1|" "$2" |
		xargs grep -lE '<script|<image|<foreignObject|href=|url\(|@import' | wc -l)
	check "no $1 has a script or an external reference ($bad do)" [ "$bad" = 0 ]
	check "each $1 is SVG 1.1" \
		bash -c "! (cd '$export_dir' && sed 's|\$|/$1|' '$2' | xargs grep -L 'version=\"1.1\"' | grep -q .)"
}

(cd "$export_dir" && find benchmarks -mindepth 4 -maxdepth 4 -type d | sort) >"$work/groups"
(cd "$export_dir" && find benchmarks -name ranking.svg | sed 's|/ranking.svg$||' | sort) >"$work/svgs"
check "a ranking.svg in every group ($(wc -l <"$work/svgs") of $(wc -l <"$work/groups"))" cmp -s "$work/groups" "$work/svgs"

well_formed ranking.svg "$work/svgs"

# What each picture draws, against the oracle's ranking of the CSV.
# the oracle reads the history CSV alone: it holds every row of the newest one
python3 "$KX_SOURCE_ROOT/tests/tools/liger_views.py" "$HISTORY_CSV" ranking >"$work/oracle.tsv" 2>/dev/null ||
	die "liger_views.py ranking failed"
python3 - "$export_dir" "$work/oracle.tsv" "$work/svgs" >"$work/drawn" <<'EOF'
import collections, re, sys, xml.etree.ElementTree as ET
root, oracle = sys.argv[1:3]
NS = "{http://www.w3.org/2000/svg}"
want = collections.defaultdict(list)
with open(oracle) as f:
    hdr = f.readline().rstrip("\n").split("\t")
    for line in f:
        r = dict(zip(hdr, line.rstrip("\n").split("\t")))
        if r["rank"] != "":
            want["/".join((r["kernel"], r["pass"], r["gpu"], r["workload"]))].append(r)
bad = collections.Counter()
checked = 0
for group in open(sys.argv[3]).read().split():
    key = group.split("/", 1)[1]
    if "~" in key.rsplit("/", 1)[1]:
        continue  # a shared base slug: the oracle cannot tell its groups apart
    svg = ET.parse("%s/%s/ranking.svg" % (root, group)).getroot()
    texts = [t.text or "" for t in svg.iter(NS + "text")]
    bars = [float(r.get("width")) for r in svg.iter(NS + "rect") if r.get("height") == "14.0"]
    rows = sorted(want.get(key, []), key=lambda r: int(r["rank"]))
    checked += 1
    labels = [t for t in texts if re.match(r"^\d+  ", t)]
    names = [re.match(r"^(\d+)  (\S+)", t).groups() for t in labels]
    # in rank order: runs that tie on their median (and observedAt) are ordered by digest, which
    # the oracle cannot know, so positions holding one median must hold the same implementations
    ties = lambda seq: [(m, sorted(i for mm, i in seq if mm == m)) for m in sorted({m for m, _ in seq})]
    if [n[0] for n in names] != [r["rank"] for r in rows] or \
            ties([(r["median"], n[1]) for r, n in zip(rows, names)]) != ties([(r["median"], r["implementation"]) for r in rows]):
        bad["labels"] += 1
        continue
    if len(bars) != len(rows):
        bad["bars"] += 1
        continue
    noise = sum(re.search(r"  ≈ #\d+$", t) is not None for t in texts)
    bad["noise"] += noise != sum(r["within_noise"] == "yes" for r in rows)
    med = [float(r["median"]) for r in rows]
    if any("log scale" in t for t in texts):
        # a log axis: longer bars for larger medians
        bad["log_order"] += any((a < b) != (wa < wb) for a, b, wa, wb in zip(med, med[1:], bars, bars[1:]) if a != b)
    else:
        # a linear axis from zero: length / median is one constant, to the rounding of 0.1 px
        k = bars[0] / med[0]
        bad["lengths"] += any(abs(w - k * m) > 0.15 + 1e-3 * w for w, m in zip(bars, med))
print(checked, ",".join("%s=%d" % kv for kv in sorted(bad.items()) if kv[1]) or "none")
EOF
read -r checked drawn_bad <"$work/drawn"
check "every picture draws the oracle's current runs in rank order, bars in proportion to the medians, within-noise runs marked ($checked checked; failures: $drawn_bad)" \
	[ "$drawn_bad" = none -a "${checked:-0}" -gt 1000 ]

# sweep.svg in every gpu directory: a panel per sweep of the oracle's sweep.tsv, in its order, a dot
# per point with a value.
(cd "$export_dir" && find benchmarks -mindepth 3 -maxdepth 3 -type d | sort) >"$work/gpudirs"
(cd "$export_dir" && find benchmarks -name sweep.svg | sed 's|/sweep.svg$||' | sort) >"$work/sweepsvgs"
check "a sweep.svg in every gpu directory ($(wc -l <"$work/sweepsvgs") of $(wc -l <"$work/gpudirs"))" \
	cmp -s "$work/gpudirs" "$work/sweepsvgs"
well_formed sweep.svg "$work/sweepsvgs"
PYTHONPATH="$KX_SOURCE_ROOT/tests/tools" python3 - "$export_dir" "$work/sweepsvgs" "$HISTORY_CSV" \
	>"$work/sweeps-drawn" <<'EOF'
import collections, sys, xml.etree.ElementTree as ET
import liger_views as lv
root, dirs, csvs = sys.argv[1], sys.argv[2], sys.argv[3:]
NS = "{http://www.w3.org/2000/svg}"
m = lv.Model(csvs)
bad, checked, panels = collections.Counter(), 0, 0
for d in open(dirs).read().split():
    _, kernel, pass_, gpu = d.split("/")
    hdr, rows = lv.view_sweep(m, kernel, pass_, gpu)
    want = []  # (axis, fixed, points with a value), in sweep.tsv's order
    for r in rows:
        key = [r[0], r[2]]
        if not want or want[-1][:2] != key:
            want.append([r[0], r[2], 0])
        want[-1][2] += r[5] != "-"
    svg = ET.parse("%s/%s/sweep.svg" % (root, d)).getroot()
    got = []
    for g in svg.iter(NS + "g"):
        texts = [t.text or "" for t in g.iter(NS + "text")]
        got.append([texts[0][len("over "):] if texts and texts[0].startswith("over ") else "?",
                    len(list(g.iter(NS + "circle")))])
    checked += 1
    panels += len(got)
    bad["panels"] += [w[0] for w in want] != [a for a, _ in got]
    bad["dots"] += [w[2] for w in want] != [n for _, n in got]
print(checked, panels, ",".join("%s=%d" % kv for kv in sorted(bad.items()) if kv[1]) or "none")
EOF
read -r checked panels drawn_bad <"$work/sweeps-drawn"
check "each sweep.svg draws the oracle's sweeps in order, a dot per point ($checked pictures, $panels panels; failures: $drawn_bad)" \
	[ "$drawn_bad" = none -a "${panels:-0}" -gt 100 ]

# history.svg in every group: a dot per passed run with a value (the oracle's rows of the group that
# are passed or superseded, with a median), the versions labelled
(cd "$export_dir" && find benchmarks -name history.svg | sed 's|/history.svg$||' | sort) >"$work/historysvgs"
check "a history.svg in every group ($(wc -l <"$work/historysvgs") of $(wc -l <"$work/groups"))" \
	cmp -s "$work/groups" "$work/historysvgs"
well_formed history.svg "$work/historysvgs"
python3 - "$export_dir" "$work/oracle.tsv" "$work/historysvgs" >"$work/history-drawn" <<'EOF'
import collections, sys, xml.etree.ElementTree as ET
root, oracle = sys.argv[1:3]
NS = "{http://www.w3.org/2000/svg}"
want, versions = collections.Counter(), collections.defaultdict(set)
with open(oracle) as f:
    hdr = f.readline().rstrip("\n").split("\t")
    for line in f:
        r = dict(zip(hdr, line.rstrip("\n").split("\t")))
        key = "/".join((r["kernel"], r["pass"], r["gpu"], r["workload"]))
        if r["status"] in ("passed", "superseded") and r["median"] != "":
            want[key] += 1
            if r["version"] != "":
                versions[key].add(r["version"])
bad, checked = collections.Counter(), 0
for group in open(sys.argv[3]).read().split():
    key = group.split("/", 1)[1]
    if "~" in key.rsplit("/", 1)[1]:
        continue  # a shared base slug: the oracle cannot tell its groups apart
    svg = ET.parse("%s/%s/history.svg" % (root, group)).getroot()
    checked += 1
    bad["dots"] += len(list(svg.iter(NS + "circle"))) != want[key]
    bad["versions"] += not versions[key] <= {t.text for t in svg.iter(NS + "text")}
print(checked, ",".join("%s=%d" % kv for kv in sorted(bad.items()) if kv[1]) or "none")
EOF
read -r checked drawn_bad <"$work/history-drawn"
check "each history.svg draws a dot per passed run of the oracle's, its versions labelled ($checked checked; failures: $drawn_bad)" \
	[ "$drawn_bad" = none -a "${checked:-0}" -gt 1000 ]

# As a viewer sees them: five rendered to PNG, not blank, in their colours.
flce=benchmarks/fused_linear_cross_entropy/forward/nvidia-a100-sxm4-80gb/hidden4096-tokens16384-vocab128256-bf16
simpo=benchmarks/fused_linear_simpo_loss/forward/nvidia-a100-sxm4-80gb/batch4-hidden4096-seq1024-vocab128256-bf16
# (a group with a run within noise of the one above: within_noise, then the three empty rerun cells)
noisy=$(cd "$export_dir" && grep -l $'\tyes\t\t\t$' $(sed 's|$|/ranking.tsv|' "$work/svgs") | head -1 | sed 's|/ranking.tsv$||')
for f in "$flce/ranking.svg" "$simpo/ranking.svg" "$noisy/ranking.svg" "${flce%/*}/sweep.svg" "$flce/history.svg"; do
	rsvg-convert "$mnt/$f" -o "$work/shot.png" 2>"$work/rsvg.err"
	# the colour a reader must see: #1's bar in a ranking, the first implementation's line in a
	# sweep or a history
	[[ $f == */ranking.svg ]] && colours=1f6feb || colours=1f77b4
	seen=$(python3 "$KX_SOURCE_ROOT/tests/tools/png_colours.py" "$work/shot.png" $colours)
	check "$f renders to a PNG that is not blank and shows #$colours ($seen)" \
		bash -c "[[ '$seen' =~ ^([0-9]+)\ coloured ]] && (( \${BASH_REMATCH[1]} > 8 )) && [ ! -s '$work/rsvg.err' ]"
done

# The mount serves the export's bytes, sized exactly.
{ sed 's|$|/ranking.svg|' "$work/svgs"; sed 's|$|/sweep.svg|' "$work/sweepsvgs"
  sed 's|$|/history.svg|' "$work/historysvgs"; } >"$work/pictures"
python3 - "$mnt" "$export_dir" "$work/pictures" >"$work/per-file" <<'EOF'
import os, sys
mnt, exp = sys.argv[1:3]
size = export = n = 0
for f in open(sys.argv[3]).read().split():
    n += 1
    m = os.path.join(mnt, f)
    data = open(m, "rb").read()
    size += os.stat(m).st_size != len(data)
    export += open(os.path.join(exp, f), "rb").read() != data
print(n, size, export)
EOF
read -r n_read bad_size bad_export <"$work/per-file"
check "stat's size is the bytes read, for every one of $n_read pictures (${bad_size:-?} not)" \
	[ "$bad_size" = 0 -a "$n_read" = "$(wc -l <"$work/pictures")" ]
check "the mount's bytes are the export's (${bad_export:-?} differ)" [ "$bad_export" = 0 ]
check "ranking.svg is in its group's SHA256SUMS" grep -q '  ranking.svg$' "$mnt/$flce/SHA256SUMS"
check "and verifies there" bash -c "cd '$mnt/$flce' && sha256sum -c --quiet SHA256SUMS"
unmount "$mnt" "$daemon"
finish
