#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The pages of compare/ against its files, for the tests that check them: compare_pages.py DIR

DIR is a tree's compare/ (a mount's or an export's). Each pair directory's index.html must show its
summary.tsv as a table — the same header and, row by row, the same cells — and link every file the
directory holds; each summary.tsv's totals (the lines with an empty kernel and pass: one per gpu and
metric) must add up its other lines of that gpu and metric (groups, wins, losses, noise, ties,
mixed_groups), the geometric mean that of the ratios of its <gpu>.tsv's rows of that metric (to the
4 significant digits the files write); compare/index.html must show, pair by pair, those totals
(pair, gpu, metric, then the counts and the mean, as summary.tsv writes them) and link every pair.
Prints "compare-pages: OK pairs=N rows=M totals=T", or each difference and exits 1."""
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
    want_table = [["pair", "gpu", "metric", "groups", "geomean_ratio", "wins", "losses", "noise", "ties", "mixed_groups"]]
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
        hdr = summary[0]
        col = {c: i for i, c in enumerate(hdr)}
        totals = [r for r in summary[1:] if r[col["kernel"]] == "" and r[col["pass"]] == ""]
        lines = [r for r in summary[1:] if r[col["kernel"]] != ""]
        counts = ("groups", "wins", "losses", "noise", "ties", "mixed_groups")
        for t in totals:
            gpu, metric = t[col["gpu"]], t[col["metric"]]
            mine = [r for r in lines if (r[col["gpu"]], r[col["metric"]]) == (gpu, metric)]
            sums = [sum(int(r[col[c]]) for r in mine) for c in counts]
            if [int(t[col[c]]) for c in counts] != sums:
                bad.append("%s/summary.tsv: the total of %s %s is %s, its lines add up to %s" %
                           (pair, gpu, metric, [t[col[c]] for c in counts], sums))
            g = tsv(os.path.join(d, gpu + ".tsv")) if os.path.exists(os.path.join(d, gpu + ".tsv")) else [[]]
            gc = {c: i for i, c in enumerate(g[0])}
            logs = [math.log(float(r[gc["ratio"]])) for r in g[1:] if r[gc["metric"]] == metric and r[gc["ratio"]] != ""]
            geo = math.exp(sum(logs) / len(logs)) if logs else None
            got = t[col["geomean_ratio"]]
            if (geo is None) != (got == "") or (geo is not None and abs(float(got) / geo - 1) > 1e-3):
                bad.append("%s/summary.tsv: the geometric mean of %s %s is %s, its <gpu>.tsv's ratios give %s" %
                           (pair, gpu, metric, got, geo))
            want_table.append([pair, gpu, metric] + [t[col[c]] for c in hdr[4:]])
        if not totals:
            bad.append("%s/summary.tsv: no totals" % pair)
    p = page(os.path.join(top, "index.html"))
    links = [h for h in p.links if h != "../index.html"]
    want_links = [r[0] + "/" for r in want_table[1:]] + [x + "/" for x in pairs] + ["index.html"]
    if links != want_links:  # the table's, then every entry
        bad.append("index.html: links %s" % links[:8])
    table = p.tables[0] if p.tables else []
    if table[:1] != want_table[:1]:
        bad.append("index.html: its table's header is %s" % table[:1])
    for i, (w, g) in enumerate(zip(want_table[1:], table[1:])):
        if w != g:
            bad.append("index.html: row %d is %s, the pair's summary.tsv says %s" % (i + 1, g, w))
    if len(table) != len(want_table):
        bad.append("index.html: %d rows, the summaries have %d totals" % (len(table) - 1, len(want_table) - 1))
    for b in bad[:20]:
        print("# " + b)
    if bad:
        return 1
    print("compare-pages: OK pairs=%d rows=%d totals=%d" % (len(pairs), rows, len(want_table) - 1))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
