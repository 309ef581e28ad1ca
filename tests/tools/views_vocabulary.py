#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The views as a data user reads them (docs/views.md, "One vocabulary"; SPEC §6): every TSV view of
# a mount read by pandas with read_csv(f, sep="\t") and nothing else, and every header and JSON key
# checked against the vocabulary table of docs/views.md. Values are cross-checked against the
# Liger CSV rows themselves (Python's csv module), never against the project's code.
"""usage: views_vocabulary.py MOUNT VIEWS_MD CSV...

Prints one verdict per check, 'ok WHAT' or 'FAILED WHAT' (mount-lib.sh's `verdicts`), with '#'
lines before a failed one saying where. Always 8 verdicts."""
import collections, csv, datetime, json, math, os, re, sys

import pandas as pd
from pandas.api.types import is_numeric_dtype

# the vocabulary's numeric columns: they must come out of read_csv with a numeric dtype
NUMERIC = {"median", "p20", "p80", "vs_best", "rank", "n", "segment", "change_pct", "p", "before", "after",
           "results", "ratio", "groups", "wins", "losses", "noise", "ties", "mixed_groups", "geomean_ratio"}
# what a kind of TSV view is called in a message, by its path
KINDS = [("index.tsv", r"index\.tsv"), ("regressions.tsv", r"regressions\.tsv"), ("changes.tsv", r"changes\.tsv"),
         ("ranking.tsv", r"benchmarks/.*/ranking\.tsv"), ("history.tsv", r"benchmarks/.*/history\.tsv"),
         ("group changes.tsv", r"benchmarks/.*/changes\.tsv"), ("gpus.tsv", r"benchmarks/[^/]+/[^/]+/gpus\.tsv"),
         ("sweep.tsv", r"benchmarks/[^/]+/[^/]+/[^/]+/sweep\.tsv"), ("compare summary.tsv", r"compare/[^/]+/summary\.tsv"),
         ("compare <gpu>.tsv", r"compare/[^/]+/[^/]+\.tsv")]
# the kinds every mount of the bundled CSVs has (changes.tsv where the tree has it)
REQUIRED = ["index.tsv", "regressions.tsv", "ranking.tsv", "history.tsv", "gpus.tsv", "sweep.tsv",
            "compare summary.tsv", "compare <gpu>.tsv"]

verdicts = []


def verdict(ok, what, details=()):
    if not ok:
        for d in list(details)[:15]:
            print("# " + d)
        if len(details) > 15:
            print("# ... and %d more" % (len(details) - 15))
    verdicts.append(("ok " if ok else "FAILED ") + what)


def kind_of(rel):
    return next((k for k, rx in KINDS if re.fullmatch(rx, rel)), None)


# ---- the vocabulary table ----

def vocabulary(path):
    """The names of docs/views.md's table "| column | meaning |": plain names, and patterns
    (p.<name>, <family>.<gpu>, candidate_<name>, before_<name> ...)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    start = next(i for i, l in enumerate(lines) if re.match(r"^\| *column *\| *meaning *\|", l))
    names = []
    for l in lines[start + 2:]:
        if not l.startswith("|"):
            break
        names += re.findall(r"`([^`]+)`", l.split("|")[1])
    plain = {n for n in names if "<" not in n}
    patterns = [n for n in names if "<" in n]
    return plain, patterns


def in_vocabulary(name, plain, patterns):
    if name in plain:
        return True
    for p in patterns:
        if p.startswith("p.<"):                   # a workload parameter: any name
            if name.startswith("p.") and len(name) > 2:
                return True
            continue
        rx = "^" + re.escape(p).replace(re.escape("<gpu>"), "(?P<gpu>.+)")
        rx = rx.replace(re.escape("<name>"), "(?P<name>[^.]+)").replace(re.escape("<family>"), "(?P<name>[^.]+)") + "$"
        m = re.match(rx, name)
        if m and ("name" not in m.groupdict() or m.group("name") in plain):
            return True
    return False


def numeric_column(name):
    if name in NUMERIC:
        return True
    m = re.fullmatch(r"(?:candidate|baseline|before|after)_(.+)", name) or re.fullmatch(r"([^.]+)\.(.+)", name)
    return bool(m) and not name.startswith("p.") and m.group(1) in NUMERIC


# ---- the CSV rows ----

def slug(s):
    return re.sub(r"[^a-z0-9._-]+", "-", str(s).lower()).strip("-")


def csv_runs(paths):
    """(kernel, pass, gpu, implementation, observed_at) -> medians, as the CSV rows give them (a
    latency in ns, round half away from zero; a memory value in MB); and the distinct rows."""
    runs, seen = collections.defaultdict(list), set()
    for p in paths:
        with open(p, newline="") as f:
            for r in csv.DictReader(f):
                key = tuple(sorted(r.items()))
                if key in seen:
                    continue
                seen.add(key)
                memory = r["metric_name"] == "memory"
                ms = float(r["y_value_50"])
                value = ms if memory else math.floor(ms * 1e6 + 0.5)
                observed = datetime.datetime.strptime(r["timestamp"], "%Y-%m-%d %H:%M:%S").strftime(
                    "%Y-%m-%dT%H:%M:%S.000Z")
                pass_ = r["kernel_operation_mode"] + (".memory" if memory else "")
                runs[(r["kernel_name"], pass_, slug(r["gpu_name"]), slug(r["kernel_provider"]), observed)].append(value)
    return runs, len(seen)


# ---- the checks ----

def main(mnt, views_md, csvs):
    plain, patterns = vocabulary(views_md)
    tsvs, jsons = [], []
    for d, dirs, files in os.walk(mnt):
        rel_d = os.path.relpath(d, mnt)
        if rel_d.split(os.sep)[0] in ("digests", "runs", "inbox"):
            dirs[:] = []
            continue
        # a run's directory holds its documents, not views (RANK-IMPL-ID, superseded-, failed-)
        dirs[:] = [x for x in dirs if not re.fullmatch(r"([0-9]+|superseded|failed)-.+-[0-9a-f]{12}", x)]
        for f in files:
            rel = os.path.normpath(os.path.join(rel_d, f))
            if f.endswith(".tsv"):
                tsvs.append(rel)
            # JSON views: ranking.json, history.json, and the root's and compare/'s *.json;
            # GROUP.json is the group's comparison-key document (its inputs as hashed), not a view
            elif f.endswith(".json") and f != "GROUP.json":
                jsons.append(rel)
    tsvs.sort()
    jsons.sort()

    # (a) pandas reads every TSV view with its defaults
    frames, errors, counts = {}, [], collections.Counter()
    for rel in tsvs:
        counts[kind_of(rel) or "other"] += 1
        try:
            frames[rel] = pd.read_csv(os.path.join(mnt, rel), sep="\t")
        except Exception as e:  # noqa: BLE001 — any error is the finding
            errors.append("%s: %s: %s" % (rel, type(e).__name__, str(e).split("\n")[0]))
    verdict(not errors and tsvs, "pandas.read_csv(f, sep='\\t') reads all %d TSV views (%s)" % (
        len(tsvs), ", ".join("%s %d" % kv for kv in sorted(counts.items()))), errors)
    missing = [k for k in REQUIRED if not counts[k]]
    verdict(not missing, "every kind of TSV view is there: %s%s" % (", ".join(REQUIRED),
            ", changes.tsv" if counts["changes.tsv"] else " (no changes.tsv in this tree)"),
            ["no %s" % k for k in missing])

    # a header line and rows: no '#' line, every row as many fields as the header, no name twice
    bad = []
    for rel in tsvs:
        lines = open(os.path.join(mnt, rel), encoding="utf-8").read().split("\n")
        if lines[-1] != "":
            bad.append("%s: no final newline" % rel)
        lines = lines[:-1]
        head = lines[0].split("\t") if lines else []
        if any(l.startswith("#") for l in lines):
            bad.append("%s: a '#' line" % rel)
        if len(set(head)) != len(head):
            bad.append("%s: a column name twice" % rel)
        bad += ["%s:%d: %d fields, the header has %d" % (rel, i, len(l.split("\t")), len(head))
                for i, l in enumerate(lines[1:], start=2) if len(l.split("\t")) != len(head)][:1]
    verdict(not bad, "every TSV view is a header and rows: no '#' line, no column twice, no ragged row", bad)

    # numeric columns come out numeric (a table without rows has no dtype to speak of)
    bad = collections.OrderedDict()
    for rel, df in frames.items():
        if not len(df):
            continue
        for c in df.columns:
            if numeric_column(c) and not is_numeric_dtype(df[c]):
                odd = sorted({str(v) for v in df[c] if not re.fullmatch(r"-?[0-9.]+(e[-+]?[0-9]+)?|inf|-inf|nan", str(v))})
                bad.setdefault((kind_of(rel), c), "%s: column %s is %s (values such as %s)" % (
                    rel, c, df[c].dtype, odd[:3]))
    verdict(not bad, "numeric columns (median p20 p80 vs_best ratio change_pct ...) have a numeric dtype",
            list(bad.values()))

    # no NaN in median where the CSV has a value
    runs, ncsv = csv_runs(csvs)
    idx = frames.get("index.tsv")
    bad = []
    if idx is None or "median" not in idx or "status" not in idx:
        bad.append("index.tsv: no median or status column")
    else:
        valued = idx[idx["status"].isin(["passed", "superseded"])]
        if len(valued) != ncsv:
            bad.append("index.tsv: %d runs with a value, the CSVs have %d distinct rows" % (len(valued), ncsv))
        nan = valued[valued["median"].isna()]
        bad += ["index.tsv: %s/%s/%s %s: median NaN" % (r.kernel, r["pass"], r.gpu, r.implementation)
                for _, r in nan.head(5).iterrows()]
    for rel, df in frames.items():
        if kind_of(rel) in ("ranking.tsv", "history.tsv") and len(df) and "median" in df:
            rows = df[df["status"].isin(["passed", "superseded"])] if "status" in df else df
            if rows["median"].isna().any():
                bad.append("%s: a median NaN" % rel)
    verdict(not bad, "no NaN in median where the CSV has a value (index.tsv: every one of the %d CSV rows; "
            "every ranking.tsv and history.tsv)" % ncsv, bad)

    # a few runs, cross-checked: what pandas reads is what the CSV says
    bad, checked = [], 0
    if idx is not None and {"kernel", "pass", "gpu", "implementation", "observed_at", "median"} <= set(idx.columns):
        keys = sorted(runs)
        for key in keys[:: max(1, len(keys) // 25)]:
            k, p, g, impl, obs = key
            got = idx[(idx["kernel"] == k) & (idx["pass"] == p) & (idx["gpu"] == g) &
                      (idx["implementation"] == impl) & (idx["observed_at"] == obs)]["median"].tolist()
            checked += 1
            for want in runs[key]:
                if not any(isinstance(x, float) and abs(x - want) <= 1e-9 * abs(want) or x == want for x in got):
                    bad.append("%s: the CSV's median %r is not among index.tsv's %r" % ("/".join(key), want, got))
    verdict(checked >= 20 and not bad, "%d runs cross-checked: index.tsv's median, as pandas reads it, is the "
            "CSV's (ms x 1e6, rounded, in ns; MB as published)" % checked, bad)

    # (b) every header name is in the vocabulary
    bad = collections.OrderedDict()
    for rel in tsvs:
        with open(os.path.join(mnt, rel), encoding="utf-8") as f:
            head = f.readline().rstrip("\n").split("\t")
        for c in head:
            if not in_vocabulary(c, plain, patterns):
                bad.setdefault((kind_of(rel), c), "%s (%s): column %r is not in docs/views.md's vocabulary" % (
                    kind_of(rel), rel, c))
    verdict(not bad, "every TSV view's header names are in docs/views.md's vocabulary table (%d names, %d "
            "patterns)" % (len(plain), len(patterns)), list(bad.values()))

    # ... and every key of every JSON view
    bad = collections.OrderedDict()
    jkinds = collections.Counter()

    def keys(v, rel):
        if isinstance(v, dict):
            for k, x in v.items():
                if not in_vocabulary(k, plain, patterns):
                    bad.setdefault(k, "%s: key %r is not in docs/views.md's vocabulary" % (rel, k))
                keys(x, rel)
        elif isinstance(v, list):
            for x in v:
                keys(x, rel)
    for rel in jsons:
        jkinds[os.path.basename(rel)] += 1
        try:
            keys(json.load(open(os.path.join(mnt, rel), encoding="utf-8")), rel)
        except ValueError as e:
            bad.setdefault(rel, "%s: not JSON: %s" % (rel, e))
    have = all(jkinds[k] for k in ("ranking.json", "history.json", "regressions.json"))
    verdict(have and not bad, "every key of the JSON views is in the vocabulary (%s; GROUP.json and the runs' "
            "documents are not views)" % ", ".join("%s %d" % kv for kv in sorted(jkinds.items())),
            list(bad.values()) + ([] if have else ["ranking.json, history.json or regressions.json missing"]))


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
    for v in verdicts:
        print(v)
