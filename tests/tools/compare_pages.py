#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The pages of compare/ against its files, for the tests that check them: compare_pages.py DIR

DIR is a tree's compare/ (a mount's or an export's). Each pair directory's index.html must show its
summary.tsv as a table — the same header and, row by row, the same cells — and link every file the
directory holds; compare/index.html must link every pair and give each its number of gpu files and
its totals: groups, wins, losses, noise and ties the sums of its summary.tsv's columns, the geometric
mean that of every speedup of its <gpu>.tsv files (relative tolerance 1e-12). Prints
"compare-pages: OK pairs=N rows=M", or each difference and exits 1."""
import html.parser
import math
import os
import sys


class Page(html.parser.HTMLParser):
    """Every table's rows (the cells' text) and every link of a page."""

    def __init__(self):
        super().__init__()
        self.tables, self.links, self.cell = [], [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = ""
        elif tag == "a":
            self.links.append(dict(attrs)["href"])

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def page(path):
    p = Page()
    p.feed(open(path, encoding="utf-8").read())
    p.close()
    return p


def tsv(path):
    return [line.split("\t") for line in open(path, encoding="utf-8").read().splitlines()]


def main(top):
    bad = []
    pairs = sorted((x for x in os.listdir(top) if os.path.isdir(os.path.join(top, x))), key=lambda s: s.encode())
    rows = 0
    want = {}
    for pair in pairs:
        d = os.path.join(top, pair)
        p = page(os.path.join(d, "index.html"))
        summary = tsv(os.path.join(d, "summary.tsv"))
        rows += len(summary) - 1
        if p.tables != [summary]:
            bad.append("%s/index.html: its table is not summary.tsv's" % pair)
        files = sorted(os.listdir(d))
        if sorted(h for h in p.links if "/" not in h) != files:
            bad.append("%s/index.html: links %s, the directory holds %s" % (pair, p.links, files))
        gpus = [f for f in files if f.endswith(".tsv") and f != "summary.tsv"]
        logs = [math.log(float(r[6])) for g in gpus for r in tsv(os.path.join(d, g))[1:] if r[6] != "-"]
        sums = [sum(int(r[i]) for r in summary[1:]) for i in (3, 5, 6, 7, 8)]
        want[pair] = (len(gpus), sums, math.exp(sum(logs) / len(logs)) if logs else None)
    p = page(os.path.join(top, "index.html"))
    links = [h for h in p.links if h != "../index.html"]
    if links != [x + "/" for x in pairs] * 2 + ["index.html"]:  # the table's, then every entry
        bad.append("index.html: links %s" % links)
    table = p.tables[0] if p.tables else []
    if table[:1] != [["pair", "gpus", "groups", "geomean_speedup", "wins", "losses", "noise", "ties"]]:
        bad.append("index.html: its table's header is %s" % table[:1])
    if [r[0] for r in table[1:]] != pairs:
        bad.append("index.html: its table's pairs are not the directories")
    for r in table[1:]:
        if r[0] not in want:
            continue
        gpus, sums, geo = want[r[0]]
        got = [int(r[i]) for i in (2, 4, 5, 6, 7)]
        if int(r[1]) != gpus or got != sums:
            bad.append("index.html: %s: gpus, groups, wins, losses, noise, ties %s, not %s" % (r[0], [int(r[1])] + got, [gpus] + sums))
        if (geo is None) != (r[3] == "-") or (geo is not None and abs(float(r[3]) / geo - 1) > 1e-12):
            bad.append("index.html: %s: geometric mean %s, not %s" % (r[0], r[3], geo))
    for b in bad[:20]:
        print("# " + b)
    if bad:
        return 1
    print("compare-pages: OK pairs=%d rows=%d" % (len(pairs), rows))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
