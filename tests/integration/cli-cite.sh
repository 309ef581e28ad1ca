#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How to cite a run (SPEC §8): every run directory holds CITATION.cff, in the Citation File Format
# 1.2.0 — checked against the schema's rules (tests/integration/cff.py) for every run of the bundled
# Liger data — naming the run by its digest (DIGESTS' run line) and by its permalink runs/<short
# id>/, with its source as author and its observation date. Its bytes never change: two exports
# agree, and SHA256SUMS covers it. A title a publisher wrote with quotes, backslashes, control and
# bidirectional characters comes back from a YAML parser exactly.
source "$(dirname "$0")/cli-lib.sh"
cd "$tmp"
python3 -c 'import yaml' 2>/dev/null || { echo "# SKIP: needs python3-yaml (scripts/deps.sh --test)"; exit 77; }

export KINDEX_STORE=$tmp/store
expect 0 "$KINDEX" -q init
expect 0 "$KINDEX" -q import liger "$csv"
expect 0 "$KINDEX" -q export x1
expect 0 "$KINDEX" -q export x2

cat >check.py <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["KX_SOURCE_ROOT"], "tests", "integration"))
import cff
root = sys.argv[1]
runs = sorted(os.listdir(os.path.join(root, "runs")))
bad, by_digest = [], {}
for r in runs:
    d = os.path.join(root, "runs", r, "")
    text = open(d + "CITATION.cff", encoding="utf-8").read()
    p = cff.problems(text)
    if p:
        bad.append(f"{d}: {p}")
        continue
    c = cff.load(text)
    digest = dict(l.split(" ", 1) for l in open(d + "DIGESTS").read().splitlines())["run"]
    by_digest[digest] = text
    run = json.load(open(d + "run.json"))
    ids = [i["value"] for i in c["identifiers"]]
    want = [digest, "runs/" + digest[len("sha256:"):][:12] + "/"]
    if ids != want:
        bad.append(f"{d}: identifiers {ids}, not {want}")
    elif want[1] != f"runs/{r}/":
        bad.append(f"{d}: the permalink {want[1]} is not this directory")
    if c["date-released"] != run["spec"]["observedAt"][:10]:
        bad.append(f"{d}: date-released {c['date-released']} is not the day of {run['spec']['observedAt']}")
    if c["authors"] != [{"name": run["spec"]["sourceNative"]["source"]}]:
        bad.append(f"{d}: authors {c['authors']}")
# the same run under benchmarks/: the same bytes
paths = 0
for r, _, fs in os.walk(os.path.join(root, "benchmarks")):
    if "CITATION.cff" in fs:
        paths += 1
        digest = dict(l.split(" ", 1) for l in open(os.path.join(r, "DIGESTS")).read().splitlines())["run"]
        if open(os.path.join(r, "CITATION.cff"), encoding="utf-8").read() != by_digest.get(digest):
            bad.append(f"{r}: not the bytes of its run's runs/ directory")
print(f"{len(runs)} runs' CITATION.cff checked, {paths} under benchmarks/ the same")
for b in bad[:10]:
    print("  " + b)
sys.exit(1 if bad or paths != len(runs) else 0)
PY
python3 check.py x1 >out 2>&1
check "every run's CITATION.cff is valid CFF 1.2.0 and names its run ($(head -3 out))" \
	grep -q "^2448 runs' CITATION.cff checked, 2448 under benchmarks/ the same$" out
check "two exports: the same CITATION.cff bytes" \
	bash -c 'diff <(cd x1 && find . -name CITATION.cff -exec sha256sum {} + | sort) \
		<(cd x2 && find . -name CITATION.cff -exec sha256sum {} + | sort) >/dev/null'
run=$(ls x1/runs | head -1)
check "a run's SHA256SUMS covers its CITATION.cff" \
	bash -c "cd x1/runs/$run && grep -q '  CITATION.cff$' SHA256SUMS && sha256sum --quiet -c SHA256SUMS"
check "kindex cat serves the bytes the export wrote" \
	bash -c "'$KINDEX' cat runs/$run/CITATION.cff | cmp -s - x1/runs/$run/CITATION.cff"

# a title with what YAML must escape, and what it must not mangle
export KINDEX_STORE=$tmp/hostile
expect 0 "$KINDEX" -q init
python3 - "$data/fixtures/flce-forward-a100.manifest.json" hostile.json title.txt <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
title = 'say "hi" \\ back\tslash \u0007 bell \u2028 sep \u202eRTL\u202c e\u0301 \u05e9\u05dc\u05d5\u05dd <b>&amp;'
m["run"]["metadata"]["title"] = title
json.dump(m, open(sys.argv[2], "w"))
open(sys.argv[3], "w", encoding="utf-8").write(title)
PY
expect 0 "$KINDEX" -q ingest hostile.json
id=$("$KINDEX" ls runs | head -1 | tr -d /)
"$KINDEX" cat "runs/$id/CITATION.cff" >hostile.cff
check "the hostile title's CITATION.cff is valid CFF 1.2.0" \
	python3 -c 'import os, sys; sys.path.insert(0, os.path.join(os.environ["KX_SOURCE_ROOT"], "tests", "integration"))
import cff; p = cff.problems(open(sys.argv[1], encoding="utf-8").read()); print(p); sys.exit(bool(p))' hostile.cff
check "a YAML parser reads the title back exactly" \
	python3 -c 'import sys, yaml
c = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
t = open(sys.argv[2], encoding="utf-8").read()
sys.exit(not c["title"].startswith(t + " on "))' hostile.cff title.txt
check "no raw control or line-separator character reaches the file" \
	python3 -c 'import sys
s = open(sys.argv[1], encoding="utf-8").read()
sys.exit(any(c in s for c in "\u0007\t\u2028\u0085"))' hostile.cff
finish
