#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The readers and the final check of tests/integration/inbox-stress.sh (which states the
consistency model they test). Not run on its own.

  inbox-stress.py reader MNT ID DEADLINE QUIET_GROUPS WRITTEN_KERNELS BIG_GROUP OUT
      walks the mounted tree until DEADLINE (epoch seconds) with real tools (find, ls -lR, cat,
      sha256sum -c) and its own reads; every file read is checked on its own (never torn: a
      benchmark directory's sweep.tsv and gpus.tsv and the files of compare/ too, read whole at
      the size fstat gives);
      writes its counts as JSON to OUT, and every failure to stderr as "# reader ID: ...".
  inbox-stress.py final MNT
      with the tree quiet: every group named by a receipt in inbox/.accepted/ has contiguous
      ranks, a ranking.tsv and ranking.json that list exactly its directories, and a SHA256SUMS
      that lists every file below it with the right digest. Prints counts; exits 1 on a failure.
"""
import hashlib, json, os, random, re, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kxjcs  # noqa: E402 — this directory's JCS, shared with bench-lib.sh
from collections import Counter
import xml.etree.ElementTree as ET

TSV_HEADER = ("rank\tdir\timplementation\tmedian\tunit\tvs_best\tobserved_at\tevidence\tfamily\tcross_protocol\tstatus\trun"
              "\tversion\tp20\tp80\tdisplay\twithin_noise\trerun\trerun_ratio\trerun_within_noise")
RANKDIR = re.compile(r"^(\d+)-(.+)-([0-9a-f]{12})$")       # 07-torch-0123456789ab: moves with its rank
UNRANKED = re.compile(r"^([a-z]+)-(.+)-([0-9a-f]{12})$")   # failed-torch-0123456789ab: never moves
SUMLINE = re.compile(r"^([0-9a-f]{64})  (\S+)$")
GROUP_FILES = {"GROUP.json", "SHA256SUMS", "ranking.json", "ranking.tsv", "history.tsv", "history.json", "ranking.svg",
               "history.svg", "changes.tsv", "index.html"}
# of every benchmark directory, a pass directory, a gpu directory (docs/views.md)
BENCH_FILES = {"index.html", "gpus.tsv", "sweep.tsv", "sweep.svg"}
SWEEP_HEADER = "axis\taxis_value\tfixed\tworkload\timplementation\tmedian\tp20\tp80\tunit\tversion\tobserved_at\tmixed"
MISSING = "No such file or directory"
COMPARE_HEADER = ("kernel\tpass\tmetric\tworkload\tunit\tcandidate_median\tbaseline_median\tratio\tresult\tmixed"
                  "\tcandidate_version\tbaseline_version\tcandidate_observed_at\tbaseline_observed_at")
SUMMARY_HEADER = "kernel\tpass\tmetric\tgpu\tgroups\tgeomean_ratio\twins\tlosses\tnoise\tties\tmixed_groups"
NUMBER = re.compile(r"^-?[0-9.e+-]+$")


class Torn(Exception):
    pass


def digest(doc):
    return kxjcs.digest(doc)[len("sha256:"):]


def need(cond, what):
    if not cond:
        raise Torn(what)


def ranks_of(names):
    """The rank directories among NAMES must be 1..k, each once; returns k."""
    ranks = sorted(int(m.group(1)) for m in map(RANKDIR.match, names) if m)
    need(ranks == list(range(1, len(ranks) + 1)), "rank directories are not 1..k: %s" % ranks[:20])
    return len(ranks)


def check_tsv(data):
    need(data.endswith(b"\n"), "ranking.tsv does not end with a newline")
    lines = data.decode().split("\n")[:-1]
    need(lines and lines[0] == TSV_HEADER, "ranking.tsv header: %r" % (lines[:1],))
    ranks, dirs, rows = [], [], []
    for line in lines[1:]:
        f = line.split("\t")
        need(len(f) == 20, "ranking.tsv line of %d fields: %r" % (len(f), line[:80]))
        need(re.fullmatch(r"sha256:[0-9a-f]{64}", f[11]) is not None, "ranking.tsv run %r" % f[11])
        m = RANKDIR.match(f[1]) if f[0] != "" else UNRANKED.match(f[1])
        need(m is not None and m.group(3) == f[11][7:19], "ranking.tsv dir %r for run %s" % (f[1], f[11]))
        if f[0] != "":
            need(int(m.group(1)) == int(f[0]), "ranking.tsv: rank %s in directory %s" % (f[0], f[1]))
            ranks.append(int(f[0]))
        dirs.append(f[1])
        rows.append(f)
    need(ranks == list(range(1, len(ranks) + 1)), "ranking.tsv ranks are not 1..k: %s" % ranks[:20])
    # one current run per implementation is ranked (SPEC §2); its older ones are superseded
    current = {f[2]: f for f in rows if f[0] != ""}
    need(len(current) == len(ranks), "ranking.tsv ranks an implementation twice")
    for f in rows:
        if f[10] == "superseded":
            c = current.get(f[2])
            need(c is not None and (c[6], c[11]) > (f[6], f[11]),
                 "ranking.tsv: %s is superseded by no newer ranked run" % f[1])
            need(f[1].startswith("superseded-"), "ranking.tsv: superseded run in %s" % f[1])
    return dirs


def check_view_tsv(data, header, fields=None):
    """A view across groups: one header, then rows of as many fields as it has; returns the rows."""
    need(data.endswith(b"\n"), "does not end with a newline")
    lines = data.decode().split("\n")[:-1]
    need(lines and lines[0].startswith(header), "header %r" % (lines[:1],))
    n = len(lines[0].split("\t"))
    rows = [l.split("\t") for l in lines[1:]]
    for r in rows:
        need(len(r) == n, "a row of %d fields, not %d: %r" % (len(r), n, "\t".join(r)[:80]))
        need(fields is None or fields(r), "row %r" % "\t".join(r)[:80])
    return rows


def check_svg(data):
    """A picture read whole: one SVG document, well-formed (two versions torn together are not)."""
    root = ET.fromstring(data)
    need(root.tag == "{http://www.w3.org/2000/svg}svg", "not an SVG document")
    return root


def check_history(data):
    """history.tsv read whole: the header, rows of 17 fields, each series numbered 1.. in order."""
    lines = data.decode().split("\n")
    need(lines[-1] == "", "no final newline")
    body = lines[:-1]
    need(body and body[0].startswith("implementation\tn\t"), "no header")
    last = {}
    for l in body[1:]:
        r = l.split("\t")
        need(len(r) == 17, "a row of %d fields" % len(r))
        need(int(r[1]) == last.get(r[0], 0) + 1, "series %s out of order" % r[0])
        last[r[0]] = int(r[1])
    return body


def check_index(data):
    """/index.tsv read whole: its header, then rows of as many fields, each naming a run directory."""
    lines = data.decode().split("\n")
    need(lines[-1] == "", "no final newline")
    head = lines[0].split("\t")
    need(head[:5] == ["kernel", "pass", "metric", "gpu", "workload"] and
         head[-8:] == ["shortid", "path", "within_noise", "vs_best", "display", "rerun", "rerun_ratio",
                       "rerun_within_noise"], "index.tsv: not its header")
    for l in lines[1:-1]:
        r = l.split("\t")
        need(len(r) == len(head), "index.tsv: a row of %d fields, the header has %d" % (len(r), len(head)))
        need(r[-7].startswith("benchmarks/") and r[-7].endswith(r[-8]), "index.tsv: a row's path %r" % r[-7])
    return lines[1:-1]


def check_regressions(data):
    """/regressions.tsv read whole: the header, rows of 16 fields."""
    lines = data.decode().split("\n")
    need(lines[-1] == "", "no final newline")
    body = lines[:-1]
    need(body and body[0].startswith("move\tchange_pct\tp\t"), "regressions.tsv: no header")
    need(all(len(l.split("\t")) == 16 for l in body), "regressions.tsv: a row not of 16 fields")
    return body


def check_changes(data):
    """/changes.tsv read whole: its header, then rows of its 23 fields, each naming its group."""
    lines = data.decode().split("\n")
    need(lines[-1] == "", "no final newline")
    head = lines[0].split("\t")
    need(len(head) == 23 and head[:6] == ["kernel", "pass", "metric", "gpu", "workload", "implementation"] and
         head[-1] == "group", "changes.tsv: not its header")
    for l in lines[1:-1]:
        r = l.split("\t")
        need(len(r) == len(head), "changes.tsv: a row of %d fields, the header has %d" % (len(r), len(head)))
        need(r[-1] == "/".join(["benchmarks"] + r[0:2] + r[3:5]), "changes.tsv: a row's group %r" % r[-1])
        need(r[10] in ("regression", "improvement", "") and r[11] in ("yes", "no", ""),
             "changes.tsv: a row's move %r or separated %r" % (r[10], r[11]))
    return lines[1:-1]


def check_html(data):
    """A page read whole: one document, well-formed, ending where it should (not torn)."""
    root = ET.fromstring(data.split(b"\n", 1)[1])  # after <!DOCTYPE html>
    need(root.tag == "html" and data.endswith(b"</html>\n"), "not a whole page")
    return root


def check_compare_page(data):
    """compare/'s page or a pair's, read whole: a page with its table, each row whole — for a pair
    summary.tsv's eleven columns, for compare/ the pairs' ten — results that add up."""
    root = check_html(data)
    rows = [[(c.text or "") + "".join(x.text or "" for x in c) for c in tr] for tr in root.iter("tr")]
    need(rows and rows[0][-7:] == ["groups", "geomean_ratio", "wins", "losses", "noise", "ties", "mixed_groups"],
         "no table")
    for r in rows[1:]:
        n = [int(x) for x in [r[-7]] + r[-5:]]
        need(len(r) == len(rows[0]) and n[0] >= 1 and sum(n[1:-1]) <= n[0] and n[-1] <= n[0] and
             (NUMBER.match(r[-6]) or r[-6] == ""), "a row that does not add up: %s" % r)


def check_sweep(data):
    # median p20 p80 of a current run: numbers (p20, p80 empty when unknown), never a failed run's
    rows = check_view_tsv(data, SWEEP_HEADER, lambda r: NUMBER.match(r[5]) and all(NUMBER.match(x) or x == "" for x in r[6:8])
                          and r[11] in ("yes", "no"))
    # one sweep's rows: each axis value at least twice over the sweep (two values or more)
    values = {}
    for r in rows:
        values.setdefault((r[0], r[2]), set()).add(r[1])
    need(all(len(v) >= 2 for v in values.values()), "a sweep with one value")


def check_gpus(data):
    # a median on one GPU at least: the columns after mixed are median.<gpu>…, version.<gpu>…, observed_at.<gpu>…
    check_view_tsv(data, "workload\timplementation\tunit\tmixed",
                   lambda r: r[3] in ("yes", "no") and any(NUMBER.match(x) for x in r[4:4 + (len(r) - 4) // 3]))


def check_compare_gpu(data):
    """compare/A..B/<gpu>.tsv: a row per group they share there, at least one."""
    rows = check_view_tsv(data, COMPARE_HEADER, lambda r: NUMBER.match(r[5]) and NUMBER.match(r[6]) and
                          (NUMBER.match(r[7]) or r[7] == "") and r[8] in ("win", "loss", "noise", "tie", "") and
                          r[9] in ("yes", "no"))
    need(rows, "no row")


def check_compare_summary(data):
    """compare/A..B/summary.tsv: per gpu and metric, then per kernel/pass/gpu, at least one group,
    results that add up."""
    def row(r):
        n = [int(x) for x in [r[4]] + r[6:]]
        return n[0] >= 1 and sum(n[1:-1]) <= n[0] and n[-1] <= n[0] and (NUMBER.match(r[5]) or r[5] == "")
    need(check_view_tsv(data, SUMMARY_HEADER, row), "no row")


def check_ranking_json(data):
    o = json.loads(data)
    ranked = [r for r in o["runs"] if r["rank"] is not None]
    need([r["rank"] for r in ranked] == list(range(1, len(ranked) + 1)), "ranking.json ranks are not 1..k")
    need(o["ranked"] == len(ranked), "ranking.json: ranked %s, %d ranks" % (o["ranked"], len(ranked)))
    for r in o["runs"]:
        m = (RANKDIR if r["rank"] is not None else UNRANKED).match(r["dir"])
        need(m is not None and m.group(3) == r["run"][7:19], "ranking.json dir %r" % r["dir"])
        if r["rank"] is not None:
            need(int(m.group(1)) == r["rank"], "ranking.json: rank %s in %s" % (r["rank"], r["dir"]))
    return [r["dir"] for r in o["runs"]]


def check_sums(data, group):
    need(data.endswith(b"\n"), "SHA256SUMS does not end with a newline")
    names = []
    for line in data.decode().split("\n")[:-1]:
        m = SUMLINE.match(line)
        need(m is not None, "SHA256SUMS line %r" % line[:100])
        names.append(m.group(2))
    if group:
        ranks_of({n.split("/")[0] for n in names if "/" in n})
    return names


def check_summary(data):
    need(data.endswith(b"\n"), "summary.txt does not end with a newline")
    t = data.decode()
    need("\nidentity\n" in t and t.split("\n")[-2].startswith("files: manifest.json"), "summary.txt is cut")
    m = re.search(r"^  rank +(?:(\d+) of (\d+)|not ranked)", t, re.M)
    need(m is not None, "summary.txt has no rank line")
    if m.group(1):
        need(1 <= int(m.group(1)) <= int(m.group(2)), "summary.txt: rank %s of %s" % m.groups())


def check_manifest(data, shortid):
    o = json.loads(data)
    need(digest(o["run"]).startswith(shortid), "manifest.json: run digest is not %s" % shortid)
    spec = o["run"]["spec"]
    for k in ("protocol", "environment", "workload", "implementation"):
        if k + "Digest" in spec or k in o:
            need(spec[k + "Digest"] == "sha256:" + digest(o[k]), "manifest.json: %sDigest" % k)


class Reader:
    def __init__(self, mnt, rid, deadline, quiet_file, wk_file, big, out):
        self.mnt, self.rid, self.deadline, self.big, self.out = mnt, int(rid), float(deadline), big, out
        self.rnd = random.Random(1000 + self.rid)
        self.quiet = [l.strip() for l in open(quiet_file) if l.strip()]
        self.wkernels = {l.strip() for l in open(wk_file) if l.strip()}
        self.stats = Counter()
        self.errors = 0
        self.digests = []

    def fail(self, what):
        self.errors += 1
        print("# reader %d: %s" % (self.rid, what), file=sys.stderr, flush=True)

    def p(self, *parts):
        return os.path.join(self.mnt, *parts)

    def moves(self, path):
        """A rank directory of a group writers add to, or a path below one: renamed when ranks shift."""
        rel = os.path.relpath(path, self.mnt).split("/")
        return len(rel) >= 6 and rel[0] == "benchmarks" and rel[1] in self.wkernels and RANKDIR.match(rel[5])

    def tool(self, argv, cwd=None, written=False):
        """Runs a real tool; stderr must be empty, but for names a writer's new run renamed meanwhile."""
        r = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        bad = []
        for line in r.stderr.decode(errors="replace").splitlines():
            m = re.search(r"'([^']*)'.*: " + MISSING + "$", line)
            if written and m and self.moves(m.group(1)):
                self.stats["renamed under a walk"] += 1
            else:
                bad.append(line)
        if bad or (r.returncode != 0 and not r.stderr):
            self.fail("%s exits %d: %s" % (" ".join(argv), r.returncode, " | ".join(bad[:3])))
        return r

    def read(self, path, moving=False):
        """One file's bytes (one open, read to the end); None if a moving name vanished."""
        try:
            with open(path, "rb") as f:
                return f.read()
        except FileNotFoundError:
            if moving and self.moves(path):
                self.stats["renamed under a read"] += 1
                return None
            raise

    # ---- choosing ----------------------------------------------------------------------------
    def written_group(self):
        if self.rnd.random() < 0.4:
            return self.p(self.big)
        kernels = [k for k in os.listdir(self.p("benchmarks")) if k in self.wkernels]
        path = self.p("benchmarks", self.rnd.choice(kernels))
        for _ in range(3):
            path = os.path.join(path, self.rnd.choice([n for n in os.listdir(path) if n not in BENCH_FILES]))
        return path

    def quiet_group(self):
        return self.p(self.quiet[self.rnd.randrange(len(self.quiet))])

    def run_dirs(self, group):
        return [n for n in os.listdir(group) if RANKDIR.match(n) or UNRANKED.match(n)]

    # ---- actions -----------------------------------------------------------------------------
    def find_quiet(self):
        self.tool(["find", os.path.dirname(os.path.dirname(self.quiet_group()))])
        self.stats["find"] += 1

    def find_written(self):
        g = self.written_group()
        self.tool(["find", os.path.dirname(g)], written=True)
        self.stats["find"] += 1

    def lsr_quiet(self):
        self.tool(["ls", "-lR", self.quiet_group()])
        self.stats["ls -lR"] += 1

    def lsr_written(self):
        self.tool(["ls", "-lR", self.written_group()], written=True)
        self.stats["ls -lR"] += 1

    def listing(self):
        """A listing is one generation: the rank directories of `ls -f` are 1..k."""
        g = self.written_group()
        names = self.tool(["ls", "-f", g]).stdout.decode().split("\n")[:-1]
        need(GROUP_FILES <= set(names), "%s: listing without the group files" % g)
        ranks_of(names)
        self.stats["listings checked"] += 1

    def checked(self, path, data, check):
        """check(data), naming the file, what was read and its size now when it fails."""
        try:
            check(data)
        except (Torn, ValueError) as e:
            raise Torn("%s: %s (%d bytes read, %d bytes now)" %
                       (os.path.relpath(path, self.mnt), e, len(data), os.stat(path).st_size))
        self.stats["files read"] += 1

    def group_files(self):
        """A group's own files while runs are added to it: each read whole, one version (every
        version of a file that follows the ranks is an inode of its own, docs/mount.md)."""
        g = self.written_group()
        p = os.path.join(g, "ranking.tsv")
        self.checked(p, self.tool(["cat", p]).stdout, check_tsv)
        p = os.path.join(g, "ranking.json")
        self.checked(p, self.read(p), check_ranking_json)
        p = os.path.join(g, "SHA256SUMS")
        self.checked(p, self.read(p), lambda b: check_sums(b, True))
        p = os.path.join(g, "GROUP.json")
        self.checked(p, self.read(p), json.loads)
        p = os.path.join(g, "ranking.svg")
        self.checked(p, self.read(p), check_svg)
        p = os.path.join(g, "index.html")
        self.checked(p, self.read(p), check_html)
        p = os.path.join(g, "history.tsv")
        self.checked(p, self.read(p), check_history)
        p = os.path.join(g, "history.json")
        self.checked(p, self.read(p), json.loads)
        p = os.path.join(g, "history.svg")
        self.checked(p, self.read(p), check_svg)
        self.stats["group files of a written group read whole"] += 9

    def group_files_quiet(self):
        """The same files of a group no one writes to."""
        g = self.quiet_group()
        for name, check in (("ranking.tsv", check_tsv), ("ranking.json", check_ranking_json),
                            ("SHA256SUMS", lambda b: check_sums(b, True)), ("GROUP.json", json.loads),
                            ("ranking.svg", check_svg), ("index.html", check_html)):
            p = os.path.join(g, name)
            self.checked(p, self.read(p), check)

    def read_whole(self, path):
        """One file's bytes and the size fstat gives the open file: one version, the same."""
        with open(path, "rb") as f:
            data = f.read()
            size = os.fstat(f.fileno()).st_size
        need(len(data) == size, "%d bytes read, fstat says %d" % (len(data), size))
        return data

    def bench_files(self):
        """The sweep.tsv, sweep.svg and gpus.tsv above a group being written to: whole, one version each."""
        gpu = os.path.dirname(self.written_group())
        for p, check in ((os.path.join(gpu, "sweep.tsv"), check_sweep), (os.path.join(gpu, "sweep.svg"), check_svg),
                         (os.path.join(os.path.dirname(gpu), "gpus.tsv"), check_gpus)):
            self.checked(p, self.read_whole(p), check)
        self.stats["sweep.tsv, sweep.svg and gpus.tsv of a written directory read whole"] += 3

    def top_files(self):
        """/index.tsv, /regressions.tsv and /changes.tsv, made of every group, while drops change them:
        whole, one version each."""
        for name, check in (("index.tsv", check_index), ("regressions.tsv", check_regressions),
                            ("changes.tsv", check_changes)):
            p = self.p(name)
            self.checked(p, self.read_whole(p), check)
        self.stats["/index.tsv, /regressions.tsv and /changes.tsv read whole"] += 3

    def compare_files(self):
        """A pair's summary.tsv, one of its gpu files and its page, and compare/'s page: whole, one
        version each, while drops change them (every run a writer adds is of an implementation of
        some pair)."""
        if not getattr(self, "pairs", None) or self.rnd.random() < 0.05:
            self.pairs = [n for n in os.listdir(self.p("compare")) if n != "index.html"]
            self.stats["listings of compare/"] += 1
        pair = self.p("compare", self.rnd.choice(self.pairs))
        names = os.listdir(pair)
        gpus = [n for n in names if n.endswith(".tsv") and n != "summary.tsv"]
        need(gpus and "summary.tsv" in names and "index.html" in names,
             "%s: no gpu file, summary.tsv or index.html" % pair)
        for p, check in ((os.path.join(pair, "summary.tsv"), check_compare_summary),
                         (os.path.join(pair, self.rnd.choice(gpus)), check_compare_gpu),
                         (os.path.join(pair, "index.html"), check_compare_page),
                         (self.p("compare", "index.html"), check_compare_page)):
            self.checked(p, self.read_whole(p), check)
        self.stats["files of compare/ read whole"] += 4

    def run_files(self):
        g = self.written_group()
        dirs = self.run_dirs(g)
        for d in self.rnd.sample(dirs, min(3, len(dirs))):
            sid = (RANKDIR.match(d) or UNRANKED.match(d)).group(3)
            for name, check in (("manifest.json", lambda b: check_manifest(b, sid)), ("summary.txt", check_summary),
                                ("SHA256SUMS", lambda b: check_sums(b, False))):
                p = self.p("runs", sid, name)
                self.checked(p, self.read(p), check)
            for name, check in (("manifest.json", lambda b: check_manifest(b, sid)), ("summary.txt", check_summary)):
                p = os.path.join(g, d, name)
                b = self.read(p, moving=True)
                if b is not None:
                    self.checked(p, b, check)

    def sums_quiet_group(self):
        g = self.quiet_group()
        self.tool(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=g)
        self.stats["sha256sum -c in a group"] += 1

    def sums_quiet_run(self):
        g = self.quiet_group()
        d = self.rnd.choice(self.run_dirs(g))
        sid = (RANKDIR.match(d) or UNRANKED.match(d)).group(3)
        for where in (os.path.join(g, d), self.p("runs", sid)):
            self.tool(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=where)
            self.stats["sha256sum -c in a run directory"] += 1
        p = self.p("runs", sid, "manifest.json")
        self.checked(p, self.read(p), lambda b: check_manifest(b, sid))

    def sums_written_run(self):
        """runs/<id> of a run whose group is being written: its path never moves, but summary.txt
        and index.html (rank, vs #1) and so SHA256SUMS change with the ranks. Counted, not failed;
        any other file that does not match is a failure."""
        g = self.written_group()
        d = self.rnd.choice(self.run_dirs(g))
        sid = (RANKDIR.match(d) or UNRANKED.match(d)).group(3)
        r = subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=self.p("runs", sid),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.stats["sha256sum -c in runs/<id> of a written group"] += 1
        if r.returncode == 0:
            return
        bad = [l for l in r.stdout.decode().splitlines() if l.endswith(": FAILED")]
        other = [l for l in r.stdout.decode().splitlines() if l not in bad]
        err = [l for l in r.stderr.decode().splitlines() if "did NOT match" not in l]
        if bad and all(l in ("summary.txt: FAILED", "index.html: FAILED") for l in bad) and not other and not err:
            self.stats["... of which summary.txt or index.html changed in between"] += 1
        else:
            self.fail("runs/%s: sha256sum -c: %s %s" % (sid, " | ".join(bad + other), " | ".join(err)))

    def documents(self):
        if not self.digests or self.rnd.random() < 0.05:
            self.digests = os.listdir(self.p("digests", "sha256"))
            self.stats["listings of digests/sha256"] += 1
        for name in self.rnd.sample(self.digests, min(10, len(self.digests))):
            b = self.read(self.p("digests", "sha256", name))
            need(hashlib.sha256(b).hexdigest() + ".json" == name, "digests/sha256/%s hashes otherwise" % name)
            self.stats["files read"] += 1

    ACTIONS = [(find_quiet, 1), (find_written, 1), (lsr_quiet, 2), (lsr_written, 2), (listing, 4),
               (group_files, 6), (group_files_quiet, 2), (run_files, 4), (sums_quiet_group, 3), (sums_quiet_run, 3),
               (sums_written_run, 3), (documents, 1), (bench_files, 3), (compare_files, 3),
               (top_files, 1)]

    def run(self):
        funcs = [f for f, w in self.ACTIONS for _ in range(w)]
        while time.time() < self.deadline:
            f = self.rnd.choice(funcs)
            try:
                f(self)
            except Torn as e:
                self.fail("%s: %s" % (f.__name__, e))
            except Exception as e:  # noqa: BLE001 — any other error is a failure too, named
                self.fail("%s: %s: %s" % (f.__name__, type(e).__name__, e))
        with open(self.out, "w") as f:
            json.dump({"errors": self.errors, "stats": self.stats}, f)


def final(mnt):
    groups, failures = set(), 0
    acc = os.path.join(mnt, "inbox", ".accepted")
    for name in os.listdir(acc):
        for line in open(os.path.join(acc, name)).read().split("\n")[1:]:
            f = line.split(" ")
            if len(f) == 3 and f[0] in ("added", "present"):
                groups.add(os.path.dirname(f[2]))
    files = 0
    for rel in sorted(groups):
        g = os.path.join(mnt, rel)
        try:
            names = os.listdir(g)
            ranks_of(names)
            runs = sorted(n for n in names if n not in GROUP_FILES)
            need(sorted(check_tsv(open(os.path.join(g, "ranking.tsv"), "rb").read())) == runs,
                 "ranking.tsv does not list the directories")
            need(sorted(check_ranking_json(open(os.path.join(g, "ranking.json"), "rb").read())) == runs,
                 "ranking.json does not list the directories")
            listed = check_sums(open(os.path.join(g, "SHA256SUMS"), "rb").read(), True)
            # a run's files, and those of its attestations/ where it has one (SPEC §8)
            present = sorted([n for n in GROUP_FILES if n != "SHA256SUMS"] +
                             [os.path.relpath(os.path.join(w, f), g) for d in runs
                              for w, _, fs in os.walk(os.path.join(g, d)) for f in fs])
            need(sorted(listed) == present, "SHA256SUMS does not list every file")
            for line in open(os.path.join(g, "SHA256SUMS")).read().split("\n")[:-1]:
                h, n = SUMLINE.match(line).groups()
                need(hashlib.sha256(open(os.path.join(g, n), "rb").read()).hexdigest() == h, "%s differs" % n)
                files += 1
        except Exception as e:  # noqa: BLE001
            failures += 1
            print("# %s: %s" % (rel, e))
    print("%d groups, %d files checked, %d failures" % (len(groups), files, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1] == "reader":
        Reader(*sys.argv[2:9]).run()
    elif sys.argv[1] == "final":
        sys.exit(final(sys.argv[2]))
    else:
        sys.exit("usage: inbox-stress.py reader|final ...")
