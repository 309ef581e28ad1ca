#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""names-property.py: the naming rule of SPEC §2 (src/rank/rank.c, kx_rank_component) as a
property over a hostile alphabet of names — non-ASCII (ライガー, カーネル, café), case variants,
'/', '.', '..', 'a..b', leading dots, every reserved name, 255-byte names, names sharing a 64-byte
prefix, spaces, tabs — for implementations, GPU products and form factors, workload parameter
names and string values, kernels and passes (within [a-z0-9._-]).

Each round builds ~80 runs from fixed cases and a seeded random choice of those names, ingests the
same manifests in two random orders into two fresh stores, exports both, mounts one read-only, and
checks:

  - both exports succeed, and are the same tree (diff -r; the top-level README, which names the
    store and the time, excepted);
  - the mount is its export byte for byte (diff -r, README excepted), with the same types, sizes,
    mtimes, modes and link counts;
  - no directory lists a name twice, and every name is portable ([A-Za-z0-9._~-], not . or ..);
  - identity is the exact name: each distinct implementation name of a group has its own rank
    directory, numbered by the medians chosen here (01 is the fastest); each group has its own
    directory; kernel, pass, implementation and GPU directories are named as SPEC §2 says;
  - compare/ has a directory for each ordered pair of implementations sharing a group, and in it
    a <gpu>.tsv for each GPU they share groups on; every .tsv file is a table;
  - `kindex ls PATH` lists what os.listdir lists in the mount, for a sample of directories, and
    `kindex cat PATH` prints the mount's bytes, for a sample of files;

and the regression cases of the naming issue: (a) ライガー 50 ns and カーネル 100 ns in one group;
(b) implementations 'a', 'b..c', 'a..b', 'c' sharing groups: compare/ is unique and listable,
`kindex compare a b..c` works; (c) a kernel 'index.html', a GPU 'gpus.tsv', a workload
{"sweep": ".tsv"}: sweep.tsv stays a file; (d) observedAt in 2262 is refused (rule future);
(e) a GPU named 'Summary' keeps its compare/<pair>/<gpu>.tsv apart from the pair's summary.tsv.
Before the rounds, names past their bounds (257 bytes, 65 parameters, 101-byte kernels, a kernel
with upper case or non-ASCII) are refused, naming the member.

Environment: KINDEX, KINDEXFS (set by meson), KX_NAMES_SEED (default 20261201, printed),
KX_NAMES_ROUNDS (default 1: each further round uses the next seed), TMPDIR. Output: TAP lines,
then the plan; exit 1 when a check failed. Without /dev/fuse the mount checks are skipped (the
store and export checks still run), and so they are where kindexfs is not built (KINDEXFS unset).
"""
import hashlib
import json
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kxjcs  # noqa: E402 — this directory's JCS, independent of src/canon

KINDEX = os.environ.get("KINDEX") or sys.exit("set KINDEX to the kindex binary")
KINDEXFS = os.environ.get("KINDEXFS")  # unset in a build without FUSE: the mount checks are skipped
SEED = int(os.environ.get("KX_NAMES_SEED", "20261201"))
ROUNDS = int(os.environ.get("KX_NAMES_ROUNDS", "1"))
API = "kernelindex.dev/v1alpha1"
NO_MOUNT = ("kindexfs is not built (KINDEXFS unset)" if not KINDEXFS
            else "/dev/fuse is missing" if not os.path.exists("/dev/fuse")
            else "fusermount3 is missing" if not shutil.which("fusermount3") else None)
os.environ["LC_ALL"] = "C"
os.environ["TZ"] = "UTC"

# ---- TAP ----------------------------------------------------------------------------------------

checks = 0
failures = []


def check(ok, what, detail=None):
    global checks
    checks += 1
    if ok:
        print(f"ok {checks} - {what}", flush=True)
    else:
        failures.append(what)
        print(f"not ok {checks} - {what}", flush=True)
        if detail:
            for line in str(detail).rstrip("\n").split("\n")[:40]:
                print("#   " + line, flush=True)
    return ok


def skip(what, why):
    global checks
    checks += 1
    print(f"ok {checks} - {what} # SKIP {why}", flush=True)


def note(text):
    for line in str(text).split("\n"):
        print("# " + line, flush=True)


def run(args, **kw):
    """A command's exit status, stdout and stderr (text, undecodable bytes escaped)."""
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, **kw)
    return p.returncode, p.stdout.decode(errors="backslashreplace"), p.stderr.decode(errors="backslashreplace")


def kindex(store, *args):
    return run([KINDEX, "--store", store, *args])

# ---- the naming rule (SPEC §2), written from its text -------------------------------------------

SLUG_CHARS = set(b"abcdefghijklmnopqrstuvwxyz0123456789._-")
RESERVED = {"benchmarks", "compare", "digests", "runs", "inbox", "sha256", "attestations", "artifacts",
            "signatures", "summary"}
RESERVED_TYPES = (".tsv", ".json", ".svg", ".html", ".txt", ".cff", ".csv")
PLAIN_MAX = 64


def slug(name):
    """lower-case, each run of other bytes one '-', no '-' at either end; only dots: 'unnamed'"""
    out, dash = [], False
    for c in name.encode() if isinstance(name, str) else name:
        if 65 <= c <= 90:
            c += 32
        if c not in SLUG_CHARS:
            dash = bool(out)
            continue
        if dash:
            out.append(ord("-"))
            dash = False
        out.append(c)
    s = bytes(out).decode().strip("-")
    return "unnamed" if set(s) <= {"."} else s


def reserved(s):
    return s in RESERVED or s.endswith(RESERVED_TYPES)


def plain(s):
    b = s.encode()
    return (0 < len(b) <= PLAIN_MAX and s[0] not in ".-" and s[-1] not in ".-" and set(b) <= SLUG_CHARS
            and ".." not in s and not reserved(s))


def readable(sl):
    out = ""
    for c in sl:
        if len(out) >= PLAIN_MAX - 9:
            break
        if c in ".-" and (not out or (c == "." and out[-1] == ".")):
            continue
        out += c
    return out.rstrip(".-") or "unnamed"


def hashed(exact, sl):
    return readable(sl) + "~" + hashlib.sha256(exact.encode()).hexdigest()[:8]


def component(name):
    """kernel, pass and implementation names: the exact name when it is a slug, else slug~hash"""
    return name if plain(name) else hashed(name, slug(name))


def gpu_key(product, form):
    text = f"{product}-{form}" if form else product
    s = slug(text)
    if text.isascii():
        return s if plain(s) else hashed(s, s)  # case/punctuation variants are one GPU
    return hashed(text, s)


PORTABLE = re.compile(r"^[A-Za-z0-9._~-]+$")
RANKDIR = re.compile(r"^(\d+|superseded|failed)-(.+)-([0-9a-f]{12,64})$")

# ---- the hostile alphabet -----------------------------------------------------------------------

RESERVED_WORDS = ["benchmarks", "compare", "digests", "runs", "inbox", "sha256", "attestations", "artifacts",
                  "signatures", "index.html", "index.tsv", "gpus.tsv", "sweep.tsv", "sweep.svg", "ranking.tsv",
                  "ranking.json", "ranking.svg", "history.tsv", "history.json", "history.svg", "summary.txt",
                  "summary.tsv", "regressions.tsv", "changes.tsv", "manifest.json", "run.json", "x.cff", "y.csv", "README",
                  "SHA256SUMS", "DIGESTS", "GROUP.json", "CITATION.cff"]
IMPL_NAMES = (["ライガー", "カーネル", "café", "Café", "CAFÉ", "cafe", "Liger", "liger", "LIGER", "liger-kernel",
               "Liger Kernel", "a/b", "a-b", "a_b", "/", ".", "..", "...", "a..b", "b..c", "a.b", "a", "c", ".hidden",
               "..hidden", "trailing.", "-lead", "trail-", "-", "_", "a b", " a", "a ", "  ", "tab\there",
               "unnamed", "unknown", "superseded", "failed", "01-liger", "liger~deadbeef", "n" * 255,
               "é" * 127 + "x", "p" * 64 + "1", "p" * 64 + "2", "p" * 64, "q" * 65, "Q" * 65, "ライ" * 42]
              + RESERVED_WORDS + [w.upper() for w in RESERVED_WORDS[:6]])
# kernels and passes: [a-z0-9._-], at most 100 bytes; a pass has no '.' (the random groups never use
# rms_norm, the kernel of the fixed cases, so that they hold exactly the runs put there)
KERNELS = ["index.html", "runs", "compare", "benchmarks", "digests", "sweep.tsv", "gpus.tsv", "a..b", ".hidden",
           "..x", "x..", "-k", "k-", "_", "k" * 100, "k" * 64 + "a", "k" * 64 + "b", "v1.0"]
PASSES = ["forward", "runs", "compare", "inbox", "-", "--", "_", "back-ward", "p" * 100, "p" * 64 + "x"]
GPUS = [("NVIDIA A100", "SXM4-80GB"), ("nvidia a100", "sxm4 80gb"), ("NVIDIA-A100-SXM4-80GB", ""),
        ("ライガー GPU", ""), ("café", "PCIe"), ("Café", "PCIe"), ("gpus.tsv", ""), ("sweep.svg", ""),
        ("compare", ""), ("..", ""), (".hidden", "x"), ("/", "/"), ("G" * 255, ""), ("g" * 64 + "1", "a b"),
        ("g" * 64 + "2", "a b"), ("RTX 4090", " "), ("index.html", "index.html"), ("summary", ""), ("Summary", ""),
        ("index", ""), ("README", "")]
PARAM_NAMES = ["hidden", "tokens", "Tokens", "TOKENS", "a\tb", "new\nline", "sweep", "..", ".", "/", "a..b", ".tsv",
               "index.html", "ranking.tsv", "ライガー", "café", "Café", "Hidden", "a b", "n" * 255, "p" * 64 + "1",
               "p" * 64 + "2", "dtype", "-", "~"]
PARAM_VALUES = [1, 4096, 0.5, "0.5", 1e-06, True, "true", False, "x\ty", "x\ny", ".tsv", "..", ".", "/", "カーネル", "café",
                "Café", "a b", "index.html", "x" * 256, "p" * 64 + "1", "p" * 64 + "2", "bf16", "", "~1"]


def pick_params(rnd):
    n = rnd.choice([1, 1, 2, 3])
    p = {}
    for _ in range(n):
        p[rnd.choice(PARAM_NAMES)] = rnd.choice(PARAM_VALUES)
    return p

# ---- documents ----------------------------------------------------------------------------------


def doc(kind, spec, name=None):
    d = {"apiVersion": API, "kind": kind, "metadata": {"name": name or kind.lower()}, "spec": spec}
    return d


PROTOCOL = doc("BenchmarkProtocol", {"harness": {"name": "names-property", "version": "1"},
                                     "measurement": {"timer": "cuda_events", "primaryStatistic": "median"},
                                     "comparability": {"family": "names-property"}})


def environment(product, form):
    hw = {"vendor": "nvidia", "product": product}
    if form:
        hw["formFactor"] = form
    return doc("ExecutionEnvironment", {"hardware": hw, "software": {"cuda": "12.8"}})


def workload(params, dtype=None):
    spec = {"parameters": params}
    if dtype is not None:
        spec["dtype"] = dtype
    return doc("Workload", spec)


def implementation(name, version="1.0"):
    return doc("Implementation", {"name": name, "version": version})


T0 = 1704067200  # 2024-01-01T00:00:00Z


def stamp(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t))


class Run:
    """one manifest: its group (kernel, pass, GPU key, workload digest), exact implementation name,
    median, observedAt and status"""

    def __init__(self, kernel, pass_, gpu, wl, impl, median, t, passed=True):
        self.kernel, self.pass_, self.gpu, self.wl, self.impl = kernel, pass_, gpu, wl, impl
        self.median, self.t, self.passed = median, t, passed
        env = environment(*gpu)
        im = implementation(impl)
        spec = {"status": "passed" if passed else "failed", "benchmark": f"{kernel}/{pass_}",
                "observedAt": stamp(t),
                "timing": {"primaryStatistic": "median",
                           "latencyNs": {"median": median, "p20": median * 0.99, "p80": median * 1.01}},
                "protocolDigest": kxjcs.digest(PROTOCOL), "environmentDigest": kxjcs.digest(env),
                "workloadDigest": kxjcs.digest(wl), "implementationDigest": kxjcs.digest(im)}
        if not passed:
            spec["message"] = "correctness check failed"
        rd = doc("BenchmarkRun", spec, "names-property")
        self.manifest = {"run": rd, "protocol": PROTOCOL, "environment": env, "workload": wl, "implementation": im}
        self.digest = kxjcs.digest(rd)[len("sha256:"):]
        self.group = (component(kernel), component(pass_), gpu_key(*gpu), kxjcs.digest(wl))

    def where(self):
        return (self.kernel, self.pass_, self.gpu, self.impl)


def build_runs(rnd):
    """~80 runs: the fixed regression cases, random groups of hostile names, older and failed runs"""
    runs, clock = [], [T0]

    def tick():
        clock[0] += 3600 + rnd.randrange(600)
        return clock[0]

    def group(kernel, pass_, gpu, wl, impls):
        meds = rnd.sample(range(1000, 10_000_000, 7), len(impls))
        for impl, med in zip(impls, meds):
            runs.append(Run(kernel, pass_, gpu, wl, impl, med, tick()))

    # (a) ライガー 50 ns, カーネル 100 ns in one group (added in an order where the slower comes first)
    wl_a = workload({"hidden": 4096}, "bf16")
    runs.append(Run("rms_norm", "forward", GPUS[0], wl_a, "カーネル", 100, tick()))
    runs.append(Run("rms_norm", "forward", GPUS[0], wl_a, "ライガー", 50, tick()))
    # (b) 'a', 'b..c', 'a..b', 'c' sharing two groups
    for wl in (workload({"tokens": 1024}, "fp16"), workload({"tokens": 2048}, "fp16")):
        group("rms_norm", "forward", GPUS[0], wl, ["a", "b..c", "a..b", "c"])
    # (c) a kernel 'index.html', a GPU 'gpus.tsv', a workload {"sweep": ".tsv"} without dtype (and
    # beside it another workload of that GPU, so that sweep.tsv has two points)
    wl_c = workload({"sweep": ".tsv"})
    group("index.html", "forward", ("gpus.tsv", ""), wl_c, ["liger", "Liger", "index.html"])
    group("index.html", "forward", ("gpus.tsv", ""), workload({"sweep": 2}), ["liger", "torch"])
    # (e) a GPU named 'Summary' (its key 'summary'): compare/<pair>/ has summary.tsv and the GPU's
    # summary.tsv, one of which is lost; liger and torch share groups on it and on 'gpus.tsv'
    group("index.html", "forward", ("Summary", ""), workload({"sweep": 2}), ["liger", "torch"])
    # a crowd of workloads of one slug in one GPU directory ('x1': shared, dotty, cut and not)
    for params in ({"x": 1}, {"X": 1}, {"x": "1"}, {"x1": ""}, {"x": "1 "}, {"x": "1."}, {".x": 1}, {"x": "1-b"},
                   {"x": "1.b"}, {"x": "1~"}, {"y": "z" * 200}, {"y": "z" * 201}, {"y": "z" * 119}, {"Y": "z" * 119}):
        group("rms_norm", "backward", GPUS[2], workload(params), [rnd.choice(["liger", "torch", "Liger"])])
    # every hard name at least once, at the limits: a 100-byte kernel and pass, a 255-byte GPU, a
    # workload of 64 parameters with 255-byte names and 256-byte values
    params = dict(zip(PARAM_NAMES, PARAM_VALUES))
    params.update({f"x{i}": "v" * 256 for i in range(64 - len(params))})
    group("k" * 100, "p" * 100, ("G" * 255, ""), workload(params, "bf16"),
          ["n" * 255, "m" * 256, "é" * 127 + "x", "p" * 64 + "1", "p" * 64 + "2", "p" * 64, "Liger", "liger",
           "LIGER", component("Liger"), "café", "Café", ".", "..", "a b", " a", "README", "index.html", "/",
           "tab\there"])
    # a case variant of GPU 0 and of workload (a)'s parameter: the same GPU directory, and two
    # workloads of one slug, each with its digest's suffix
    group("rms_norm", "forward", GPUS[1], workload({"Hidden": 4096}, "bf16"), ["liger", "torch", "ライガー"])
    # the random groups: names from the alphabet, several implementations each, from a few kernels,
    # passes and GPUs, so that groups share their directories (sweeps, gpus.tsv, workloads of one slug)
    kernels, passes, gpus = rnd.sample(KERNELS, 3), rnd.sample(PASSES, 2), rnd.sample(GPUS, 4)
    while len(runs) < 68:
        kernel, pass_ = rnd.choice(kernels), rnd.choice(passes)
        gpu = rnd.choice(gpus)
        wl = workload(pick_params(rnd), rnd.choice([None, "bf16", "fp32", "", "..", "Bf16"]))
        impls = rnd.sample(IMPL_NAMES, rnd.randrange(2, 6))
        spelled = component(rnd.choice(impls))
        if rnd.random() < 0.3 and spelled not in impls:  # a name spelled like another's component
            impls.append(spelled)
        group(kernel, pass_, gpu, wl, impls)
    # older runs (superseded) and failed runs of some of them
    for r in rnd.sample(runs[9:], 6):
        gpu = rnd.choice([g for g in GPUS if gpu_key(*g) == gpu_key(*r.gpu)])  # maybe another spelling
        older = Run(r.kernel, r.pass_, gpu, r.wl, r.impl, r.median * 3 + 1, r.t - 1800 - rnd.randrange(1000))
        runs.append(older)
    for r in rnd.sample(runs[9:], 3):
        runs.append(Run(r.kernel, r.pass_, r.gpu, r.wl, r.impl, 1, r.t + 60, passed=False))
    return runs


def expected_groups(runs):
    """group -> {exact impl -> current run}, and per run its status ('rank', 'superseded', 'failed')"""
    groups, status = {}, {}
    for r in runs:
        g = groups.setdefault(r.group, {})
        if r.passed and (r.impl not in g or (g[r.impl].t, g[r.impl].digest) < (r.t, r.digest)):
            g[r.impl] = r
    for r in runs:
        status[r.digest] = ("rank" if groups[r.group].get(r.impl) is r else "superseded") if r.passed else "failed"
    return groups, status

# ---- trees --------------------------------------------------------------------------------------


def walk(root):
    """relative path -> (type, size, mtime_ns, mode, nlink) for every entry under root"""
    out = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            st = os.lstat(p)
            kind = "d" if stat.S_ISDIR(st.st_mode) else "f" if stat.S_ISREG(st.st_mode) else "?"
            out[os.path.relpath(p, root)] = (kind, st.st_size if kind == "f" else None, st.st_mtime_ns,
                                             stat.S_IMODE(st.st_mode), st.st_nlink)
    return out


def diff_r(a, b):
    """diff -r a b, the differences other than the top-level README"""
    rc, out, err = run(["diff", "-r", a, b])
    if rc > 1:
        return [f"diff -r failed ({rc}): {err.strip()}"]
    # a file that differs is named by its 'diff -r A/F B/F' line, before its hunks: keep the names
    # of all but README, and every 'Only in' and 'Binary files' line
    return [line for line in (out + err).splitlines()
            if not line.startswith(("< ", "> ", "---")) and not re.match(r"^\d+(,\d+)?[acd]\d+(,\d+)?$", line)
            and line != f"diff -r {a}/README {b}/README"]


def readme_only(a, b):
    """the files that differ between two trees, README aside, by content"""
    bad = []
    for d, dirs, files in os.walk(a):
        for n in files:
            pa = os.path.join(d, n)
            rel = os.path.relpath(pa, a)
            if rel == "README":
                continue
            pb = os.path.join(b, rel)
            try:
                if open(pa, "rb").read() != open(pb, "rb").read():
                    bad.append(rel)
            except OSError as e:
                bad.append(f"{rel}: {e}")
    return bad


def listing_problems(root):
    """directories listing a name twice, names that are not portable, entries that cannot be looked up"""
    bad = []
    for d, dirs, files in os.walk(root):
        names = os.listdir(d)
        if len(names) != len(set(names)):
            dup = sorted({n for n in names if names.count(n) > 1})
            bad.append(f"{os.path.relpath(d, root)}: listed twice: {dup}")
        if len(dirs) + len(files) != len(set(dirs) | set(files)):
            bad.append(f"{os.path.relpath(d, root)}: a name both file and directory: {sorted(set(dirs) & set(files))}")
        for n in names:
            if not PORTABLE.match(n) or n in (".", "..") or len(n.encode()) > 255:
                bad.append(f"{os.path.relpath(d, root)}: not a portable name: {n!r}")
            try:
                os.lstat(os.path.join(d, n))
            except OSError as e:
                bad.append(f"{os.path.relpath(d, root)}/{n}: listed but not found: {e}")
    return bad

# ---- the mount ----------------------------------------------------------------------------------


MOUNTS = []


class Mount:
    def __init__(self, store, mnt):
        self.store, self.mnt, self.proc = store, mnt, None

    def __enter__(self):
        MOUNTS.append(self.mnt)
        os.makedirs(self.mnt, exist_ok=True)
        self.err = open(self.mnt + ".err", "wb")
        self.proc = subprocess.Popen([KINDEXFS, self.store, self.mnt, "-f"], stderr=self.err,
                                     stdout=subprocess.DEVNULL, restore_signals=True)
        deadline = time.monotonic() + 20
        while not os.path.ismount(self.mnt):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.__exit__(None, None, None)
                raise RuntimeError("kindexfs did not mount: " + open(self.mnt + ".err", errors="replace").read())
            time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        self.status = None
        if os.path.ismount(self.mnt):
            if subprocess.run(["fusermount3", "-u", self.mnt], stderr=subprocess.DEVNULL).returncode != 0:
                subprocess.run(["fusermount3", "-uz", self.mnt], stderr=subprocess.DEVNULL)
        if self.proc:
            try:
                self.status = self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGKILL)
                self.proc.wait()
        self.err.close()
        return False

# ---- one round ----------------------------------------------------------------------------------


def ingest(store, paths):
    rc, out, err = kindex(store, "ingest", *paths)
    return rc, err


def one_round(work, seed):
    rnd = random.Random(seed)
    note(f"round with seed {seed} (KX_NAMES_SEED={seed} to repeat)")
    runs = build_runs(rnd)
    groups, status = expected_groups(runs)
    by_digest = {r.digest: r for r in runs}
    note(f"{len(runs)} runs in {len(groups)} groups, {len({r.impl for r in runs})} implementation names")

    mdir = os.path.join(work, "manifests")
    os.makedirs(mdir)
    files = []
    for i, r in enumerate(runs):
        f = os.path.join(mdir, f"m-{i:04d}.json")
        with open(f, "w", encoding="utf-8") as fh:
            json.dump(r.manifest, fh, ensure_ascii=rnd.random() < 0.5, indent=1)
        files.append(f)

    # two stores, two orders: A file by file in three batches, B one directory named in its order
    order_a = files[:]
    rnd.shuffle(order_a)
    order_b = files[:]
    while order_b == order_a:
        rnd.shuffle(order_b)
    sa, sb = os.path.join(work, "store-a"), os.path.join(work, "store-b")
    for s in (sa, sb):
        rc, _, err = kindex(s, "init")
        if rc:
            raise RuntimeError(f"kindex init failed: {err}")
    ok, errs = True, []
    third = len(order_a) // 3
    for batch in (order_a[:third], order_a[third:2 * third], order_a[2 * third:]):
        rc, err = ingest(sa, batch)
        ok, errs = ok and rc == 0, errs + ([err] if rc else [])
    check(ok, f"store A: {len(runs)} manifests ingested in one random order, in three batches", "\n".join(errs))
    bdir = os.path.join(work, "order-b")
    os.makedirs(bdir)
    for i, f in enumerate(order_b):
        shutil.copy(f, os.path.join(bdir, f"{i:04d}-{os.path.basename(f)}"))
    rc, err = ingest(sb, [bdir])
    check(rc == 0, "store B: the same manifests in another order, as one directory", err)

    ea, eb = os.path.join(work, "export-a"), os.path.join(work, "export-b")
    rca, _, erra = kindex(sa, "export", ea)
    check(rca == 0, f"export of store A exits 0 ({rca})", erra)
    rcb, _, errb = kindex(sb, "export", eb)
    check(rcb == 0, f"export of store B exits 0 ({rcb})", errb)
    if rca or rcb:
        return
    d = diff_r(ea, eb)
    check(not d, "diff -r of the two exports: no difference but the top-level README", "\n".join(d[:20]))
    bad = readme_only(ea, eb)
    check(not bad, "every file of the two exports but README has the same bytes", "\n".join(bad[:20]))
    wa, wb = walk(ea), walk(eb)
    check(set(wa) == set(wb), "the two exports hold the same paths",
          "\n".join(sorted(set(wa) ^ set(wb))[:20]))
    kinds = [p for p in wa if p in wb and wa[p][:2] != wb[p][:2]]
    check(not kinds, "... of the same types and sizes", "\n".join(kinds[:20]))

    tree_checks(ea, runs, groups, status, by_digest, "export")
    regression_checks(sb, eb, runs)

    mnt = os.path.join(work, "mnt")
    if NO_MOUNT:
        for what in ("the mount is its export byte for byte", "listings of the mount",
                     "kindex ls agrees with the mount"):
            skip(what, NO_MOUNT)
        return
    with Mount(sa, mnt) as m:
        d = diff_r(mnt, ea)
        check(not d, "diff -r between the mount and its export: no difference but README", "\n".join(d[:20]))
        wm = walk(mnt)
        meta = sorted(p for p in set(wm) | set(wa) if p != "README" and wm.get(p) != wa.get(p))
        check(not meta, "every entry of the mount has the export's type, size, mtime, mode and link count",
              "\n".join(f"{p}: mount {wm.get(p)} export {wa.get(p)}" for p in meta[:20]))
        tree_checks(mnt, runs, groups, status, by_digest, "mount")
        ls_checks(sa, mnt, rnd)
        mount_regression_checks(mnt, runs)
    check(m.status == 0, f"the daemon exits 0 after fusermount3 -u ({m.status})",
          open(mnt + ".err", errors="replace").read()[-2000:])


def tree_checks(root, runs, groups, status, by_digest, what):
    bad = listing_problems(root)
    check(not bad, f"{what}: no directory lists a name twice; every name portable and found", "\n".join(bad[:20]))
    # every run once under benchmarks/, at the place SPEC §2 gives it
    found, problems = {}, []
    bench = os.path.join(root, "benchmarks")
    for d, dirs, _ in os.walk(bench):
        for n in dirs:
            m = RANKDIR.match(n)
            rel = os.path.relpath(os.path.join(d, n), bench).split(os.sep)
            if not m or len(rel) != 5:
                continue
            hits = [r for r in by_digest if r.startswith(m.group(3))]
            if len(hits) != 1:
                problems.append(f"{'/'.join(rel)}: no run of this test has id {m.group(3)}")
                continue
            found.setdefault(hits[0], []).append((rel, m.group(1), m.group(2)))
    missing = [r.where() for r in runs if r.digest not in found]
    twice = [found[k] for k in found if len(found[k]) > 1]
    check(not missing and not twice and not problems, f"{what}: every run has exactly one directory in benchmarks/",
          "\n".join([f"missing: {x!r}" for x in missing[:10]] + [f"twice: {x}" for x in twice[:10]] + problems[:10]))
    placed = {k: v[0] for k, v in found.items()}
    # kernel, pass, GPU, implementation components
    wrong = []
    for dg, (rel, _, impl_c) in placed.items():
        r = by_digest[dg]
        want = [component(r.kernel), component(r.pass_), gpu_key(*r.gpu)]
        if rel[:3] != want:
            wrong.append(f"{r.where()!r}: at {'/'.join(rel[:3])}, SPEC §2 says {'/'.join(want)}")
        if impl_c != component(r.impl):
            wrong.append(f"implementation {r.impl!r}: component {impl_c}, SPEC §2 says {component(r.impl)}")
    check(not wrong, f"{what}: kernel, pass, GPU and implementation directories are named by the exact-name rule",
          "\n".join(wrong[:20]))
    # each group one directory, distinct groups distinct directories
    gdir = {}
    for dg, (rel, _, _) in placed.items():
        gdir.setdefault(by_digest[dg].group, set()).add("/".join(rel[:4]))
    split = {g: d for g, d in gdir.items() if len(d) > 1}
    owners = {}
    for g, ds in gdir.items():
        for d in ds:
            owners.setdefault(d, set()).add(g)
    merged = {d: g for d, g in owners.items() if len(g) > 1}
    check(not split and not merged, f"{what}: each group (kernel, pass, GPU, workload) is one directory of its own",
          "\n".join([f"split over {sorted(d)}" for d in split.values()][:10] +
                    [f"{d} holds {len(g)} groups" for d, g in merged.items()][:10]))
    bad_wl = sorted({rel[3] for rel, _, _ in placed.values()
                     if rel[3].startswith(".") or ".." in rel[3] or (reserved(rel[3]) and "~" not in rel[3])})
    check(not bad_wl, f"{what}: no workload directory is dotty or reserved", "\n".join(bad_wl[:20]))
    # ranks: one rank directory per distinct exact implementation name, in the order of the medians
    rankbad = []
    for g, impls in groups.items():
        want = sorted(impls.values(), key=lambda r: r.median)
        got = sorted(((int(placed[r.digest][1]), r) for r in runs if r.group == g and r.digest in placed
                      and placed[r.digest][1].isdigit()), key=lambda x: x[0])
        if [r.digest for _, r in got] != [r.digest for r in want] or \
                [k for k, _ in got] != list(range(1, len(want) + 1)):
            rankbad.append(f"group {g[0]}/{g[1]}/{g[2]}: ranked "
                           f"{[(k, r.impl, r.median) for k, r in got]}, expected {[(r.impl, r.median) for r in want]}")
        if want:
            d = os.path.join(bench, *placed[want[0].digest][0][:4])
            ranked = [n for n in os.listdir(d) if re.match(r"^\d+-", n) and os.path.isdir(os.path.join(d, n))]
            if len(ranked) != len(impls):
                rankbad.append(f"{os.path.relpath(d, root)}: {len(ranked)} ranked directories for {len(impls)} "
                               f"implementation names {sorted(impls)!r}: {sorted(ranked)}")
            width = max(2, len(str(len(want))))
            if want and not placed[want[0].digest][1] == "1".zfill(width):
                rankbad.append(f"{os.path.relpath(d, root)}: the fastest is numbered {placed[want[0].digest][1]}")
    check(not rankbad, f"{what}: each distinct implementation name has its own ranked directory, 01 the fastest",
          "\n".join(rankbad[:20]))
    stbad = [f"{by_digest[dg].where()!r}: {lab}, expected {status[dg]}" for dg, (_, lab, _) in placed.items()
             if (lab.isdigit() and status[dg] != "rank") or (not lab.isdigit() and lab != status[dg])]
    check(not stbad, f"{what}: superseded and failed runs are listed as such", "\n".join(stbad[:20]))
    # compare/: a directory for each ordered pair of implementations sharing a group, and in it a
    # <gpu>.tsv with a row for each group on that GPU they share
    pairs = {}
    for g, impls in groups.items():
        for c in impls:
            for b in impls:
                if c != b:
                    key = (component(c), component(b))
                    pairs.setdefault(key, {}).setdefault(g[2], 0)
                    pairs[key][g[2]] += 1
    have = set(os.listdir(os.path.join(root, "compare"))) - {"index.html"}
    want = {f"{c}..{b}" for c, b in pairs}
    check(have == want, f"{what}: compare/ has one directory for each ordered pair sharing a group ({len(want)})",
          "only in the tree: " + " ".join(sorted(have - want)[:10]) +
          "\nmissing: " + " ".join(sorted(want - have)[:10]))
    cbad = []
    for (c, b), per_gpu in sorted(pairs.items()):
        d = os.path.join(root, "compare", f"{c}..{b}")
        for gk, n in sorted(per_gpu.items()):
            try:
                rows = ranking_rows(os.path.join(d, gk + ".tsv"))
            except OSError as e:
                cbad.append(f"compare/{c}..{b}/{gk}.tsv: {e}")
                continue
            if len(rows) != n or any(set(r) != set(rows[0]) or "workload" not in r for r in rows):
                cbad.append(f"compare/{c}..{b}/{gk}.tsv: {len(rows)} rows for {n} shared groups on GPU {gk}, "
                            f"columns {sorted(rows[0]) if rows else []}")
    check(not cbad, f"{what}: each pair's <gpu>.tsv has a row per group the pair shares on that GPU",
          "\n".join(cbad[:10]))
    # every .tsv file is a table: each line (but # comments) has the header's columns
    tbad = []
    for d, _, files in os.walk(root):
        for n in files:
            if n.endswith(".tsv"):
                p = os.path.join(d, n)
                lines = [x for x in open(p, encoding="utf-8", errors="replace").read().split("\n")[:-1]
                         if not x.startswith("#")]
                widths = {len(x.split("\t")) for x in lines}
                if len(widths) > 1:
                    tbad.append(f"{os.path.relpath(p, root)}: lines of {sorted(widths)} columns")
    check(not tbad, f"{what}: every .tsv file is a table (tabs and newlines of names never split a row)",
          "\n".join(tbad[:10]))
    # /runs: every run once
    names = os.listdir(os.path.join(root, "runs"))
    miss = [r.where() for r in runs if not any(r.digest.startswith(n) for n in names)]
    check(len(names) == len(runs) and not miss, f"{what}: runs/ has every run once ({len(names)} of {len(runs)})",
          "\n".join(repr(x) for x in miss[:10]))


def ranking_rows(path):
    lines = open(path, encoding="utf-8").read().splitlines()
    head = lines[0].split("\t")
    return [dict(zip(head, line.split("\t"))) for line in lines[1:] if line and not line.startswith("#")]


def group_dir(root, r):
    for d, dirs, _ in os.walk(os.path.join(root, "benchmarks")):
        for n in dirs:
            m = RANKDIR.match(n)
            if m and r.digest.startswith(m.group(3)):
                return d
    return None


def regression_checks(store, export, runs):
    # (a) ライガー 50 ns before カーネル 100 ns
    ra = next(r for r in runs if r.impl == "ライガー" and r.median == 50)
    d = group_dir(export, ra)
    ranked = sorted(n for n in os.listdir(d) if re.match(r"^\d+-", n)) if d else []
    check(len(ranked) == 2, f"(a) ライガー and カーネル in one group: two ranked directories {ranked}")
    rows = ranking_rows(os.path.join(d, "ranking.tsv")) if d else []
    first = rows[0] if rows else {}
    check(first.get("rank") == "1" and first.get("median") == "50" and first.get("run") == "sha256:" + ra.digest
          and ranked and ranked[0].startswith("01-") and ra.digest.startswith(ranked[0].rsplit("-", 1)[1]),
          "(a) ranking.tsv's first row and 01- are the 50 ns run (ライガー)", f"first row: {first}")
    # (b) 'a', 'b..c', 'a..b', 'c'
    rc, out, err = kindex(store, "ls", "compare")
    names = out.splitlines()
    check(rc == 0 and len(names) == len(set(names)), f"(b) kindex ls compare: exit 0 ({rc}), no name twice",
          err + "\n".join(sorted({n for n in names if names.count(n) > 1})))
    cmp_dir = os.path.join(export, "compare")
    lst = os.listdir(cmp_dir)
    bad = []
    for n in lst:
        p = os.path.join(cmp_dir, n)
        try:
            if os.path.isdir(p):
                for f in os.listdir(p):
                    open(os.path.join(p, f), "rb").read()
        except OSError as e:
            bad.append(f"{n}: {e}")
    check(len(lst) == len(set(lst)) and not bad,
          "(b) export: compare/ lists each pair once, each can be listed and read", "\n".join(bad[:10]))
    for cand, base in (("a", "b..c"), ("a..b", "c"), ("b..c", "a"), ("c", "a..b")):
        rc, out, err = kindex(store, "compare", cand, base)
        check(rc == 0 and out.startswith("kernel\t"), f"(b) kindex compare {cand} {base}: exit 0 ({rc}), a summary",
              err[-1000:])
    pairs = {component(c) + ".." + component(b) for c in ("a", "b..c", "a..b", "c") for b in ("a", "b..c", "a..b", "c")
             if c != b}
    check(pairs <= set(lst), "(b) compare/ has a directory for each of the 12 ordered pairs",
          "missing: " + " ".join(sorted(pairs - set(lst))))
    # (e) a GPU keyed 'summary': the pair's summary.tsv and that GPU's table are two files
    rc, out, err = kindex(store, "compare", "liger", "torch", "--gpu", "summary")
    check(rc == 0 and out.startswith("kernel\tpass\tmetric\tworkload\t"),
          "(e) kindex compare liger torch --gpu summary: the table of GPU 'summary', not the pair's summary",
          f"exit {rc}; first line: {out.splitlines()[0] if out else ''!r}; {err[-300:]}")
    # (c) kernel index.html, GPU gpus.tsv, workload {"sweep": ".tsv"}
    gdir = os.path.join(export, "benchmarks", component("index.html"), "forward", gpu_key("gpus.tsv", ""))
    ok = os.path.isdir(gdir)
    check(ok, f"(c) benchmarks/{component('index.html')}/forward/{gpu_key('gpus.tsv', '')} is a directory")
    if ok:
        st = os.lstat(os.path.join(gdir, "sweep.tsv"))
        check(stat.S_ISREG(st.st_mode) and open(os.path.join(gdir, "sweep.tsv"), "rb").read(),
              "(c) its sweep.tsv is a file, with rows")
        rc_ = next(r for r in runs if r.kernel == "index.html" and r.gpu == ("gpus.tsv", "")
                   and r.wl["spec"] == {"parameters": {"sweep": ".tsv"}})
        wd = os.path.basename(group_dir(export, rc_) or "")
        check(wd and not reserved(wd) and not wd.startswith(".") and ".." not in wd,
              f"(c) the workload {{sweep: .tsv}} is a directory of its own, neither reserved nor dotty: {wd}")


def mount_regression_checks(mnt, runs):
    cmp_dir = os.path.join(mnt, "compare")
    lst = os.listdir(cmp_dir)
    bad = []
    for n in lst:
        p = os.path.join(cmp_dir, n)
        try:
            if stat.S_ISDIR(os.lstat(p).st_mode):
                for f in os.listdir(p):
                    open(os.path.join(p, f), "rb").read()
            else:
                open(p, "rb").read()
        except OSError as e:
            bad.append(f"{n}: {e}")
    check(len(lst) == len(set(lst)) and not bad, f"(b) mount: ls compare/ has no name twice ({len(lst)} names), "
          "every entry can be listed and read", "\n".join(bad[:10]))
    p = os.path.join(mnt, "benchmarks", component("index.html"), "forward", gpu_key("gpus.tsv", ""), "sweep.tsv")
    try:
        st = os.lstat(p)
        data = open(p, "rb").read()
        check(stat.S_ISREG(st.st_mode) and len(data) == st.st_size and data,
              "(c) mount: cat MNT/benchmarks/<index.html>/forward/<gpus.tsv>/sweep.tsv reads a file of its size")
    except OSError as e:
        check(False, "(c) mount: cat MNT/benchmarks/<index.html>/forward/<gpus.tsv>/sweep.tsv", str(e))


def ls_checks(store, mnt, rnd):
    # each kindex command costs ~0.2 s under meson (MALLOC_PERTURB_): the directories of the fixed
    # cases, one of each level and a few more
    dirs = sorted(os.path.relpath(d, mnt) for d, _, _ in os.walk(mnt))
    fixed = [".", "benchmarks", "compare", "runs", os.path.join("benchmarks", component("index.html"), "forward"),
             os.path.join("benchmarks", component("index.html"), "forward", gpu_key("gpus.tsv", ""))]
    levels = {}
    for d in dirs:
        levels.setdefault(d.count(os.sep), []).append(d)
    sample = fixed + [rnd.choice(v) for _, v in sorted(levels.items())] + rnd.sample(dirs, min(4, len(dirs)))
    bad = []
    for rel in sample:
        args = ["ls"] + ([] if rel == "." else [rel])
        rc, out, err = kindex(store, *args)
        # like ls -1F: a directory's name ends in '/'
        want = sorted(n + "/" if os.path.isdir(os.path.join(mnt, rel, n)) else n
                      for n in os.listdir(os.path.join(mnt, rel)))
        got = sorted(out.splitlines())
        if rc or got != want:
            bad.append(f"kindex ls {rel}: exit {rc} {err.strip()[:200]}; "
                       f"only in ls: {sorted(set(got) - set(want))[:5]}, "
                       f"only in the mount: {sorted(set(want) - set(got))[:5]}")
    check(not bad, f"kindex ls PATH lists what the mount lists, for {len(sample)} directories", "\n".join(bad[:10]))
    files = sorted(os.path.relpath(os.path.join(d, n), mnt) for d, _, fs in os.walk(mnt) for n in fs)
    sample = rnd.sample(files, min(10, len(files)))
    bad = []
    for rel in sample:
        p = subprocess.run([KINDEX, "--store", store, "cat", rel], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60)
        if p.returncode or p.stdout != open(os.path.join(mnt, rel), "rb").read():
            bad.append(f"kindex cat {rel}: exit {p.returncode}, {len(p.stdout)} bytes; "
                       f"{p.stderr.decode(errors='replace').strip()[:200]}")
    check(not bad, f"kindex cat PATH prints the mount's bytes, for {len(sample)} files", "\n".join(bad[:10]))


def future_check(work):
    """(d) a run observed in 2262 is refused with rule future"""
    s = os.path.join(work, "store-future")
    kindex(s, "init")
    r = Run("rms_norm", "forward", GPUS[0], workload({"hidden": 1}), "liger", 10, T0)
    r.manifest["run"]["spec"]["observedAt"] = "2262-01-01T00:00:00.000Z"
    f = os.path.join(work, "future.json")
    json.dump(r.manifest, open(f, "w"))
    rc, out, err = kindex(s, "ingest", f)
    check(rc != 0 and re.search(r"/run/spec/observedAt: future:", err),
          f"(d) observedAt 2262-01-01: refused ({rc}), with rule future", err[-1000:])
    rc, out, _ = kindex(s, "ls", "runs")
    check(rc == 0 and out.strip() == "", "(d) ... and nothing was stored")


def bounds_check(work):
    """the bounds of SPEC §2 names: refused past them, naming the member (accepted at them: the
    round's coverage group)"""
    s = os.path.join(work, "store-future")
    gpu, wl = GPUS[0], workload({"hidden": 1})
    cases = [
        ("a 257-byte implementation name", Run("k", "forward", gpu, wl, "i" * 257, 10, T0),
         "/implementation/spec/name"),
        ("a 257-byte GPU product", Run("k", "forward", ("G" * 257, ""), wl, "x", 10, T0),
         "/environment/spec/hardware/product"),
        ("a 257-byte form factor", Run("k", "forward", ("G", "F" * 257), wl, "x", 10, T0),
         "/environment/spec/hardware/formFactor"),
        ("a 257-byte parameter name", Run("k", "forward", gpu, workload({"n" * 257: 1}), "x", 10, T0),
         "/workload/spec/parameters/" + "n" * 257),
        ("a 257-byte string value", Run("k", "forward", gpu, workload({"label": "v" * 257}), "x", 10, T0),
         "/workload/spec/parameters/label"),
        ("65 parameters", Run("k", "forward", gpu, workload({f"p{i}": i for i in range(65)}), "x", 10, T0),
         "/workload/spec/parameters"),
        ("a 101-byte kernel", Run("k" * 101, "forward", gpu, wl, "x", 10, T0), "/run/spec/benchmark"),
        ("a 101-byte pass", Run("k", "p" * 101, gpu, wl, "x", 10, T0), "/run/spec/benchmark"),
        ("a kernel 'Index.html'", Run("Index.html", "forward", gpu, wl, "x", 10, T0), "/run/spec/benchmark"),
        ("a kernel 'ライガー'", Run("ライガー", "forward", gpu, wl, "x", 10, T0), "/run/spec/benchmark"),
        ("a kernel '..'", Run("..", "forward", gpu, wl, "x", 10, T0), "/run/spec/benchmark"),
        ("a pass with a '.'", Run("k", "a.b", gpu, wl, "x", 10, T0), "/run/spec/benchmark"),
    ]
    files = []
    for i, (what, r, ptr) in enumerate(cases):
        files.append(os.path.join(work, f"bound-{i}.json"))
        json.dump(r.manifest, open(files[-1], "w"))
    rc, _, err = kindex(s, "ingest", *files)  # each file is one decision, its problems named by it
    check(rc == 1, f"{len(files)} manifests past a bound: kindex ingest exits 1 ({rc})", err[-600:])
    for f, (what, r, ptr) in zip(files, cases):
        lines = [x.strip() for x in err.splitlines() if x.strip().startswith(f + ":")]
        check(any(f": {ptr}: " in x for x in lines), f"{what}: refused, the problem at {ptr[:60]}",
              "\n".join(lines) or err[-600:])
    rc, out, _ = kindex(s, "ls", "runs")
    check(rc == 0 and out.strip() == "", "... and nothing was stored")


def main():
    note(f"seed {SEED}, rounds {ROUNDS} (KX_NAMES_SEED, KX_NAMES_ROUNDS)")
    started = time.monotonic()
    # meson's timeout sends SIGTERM: unmount and clean up on the way out, as on SIGINT
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    work = tempfile.mkdtemp(prefix="kindex-names.")
    try:
        future_check(work)
        bounds_check(work)
        for i in range(ROUNDS):
            rw = os.path.join(work, f"round-{i}")
            os.makedirs(rw)
            one_round(rw, SEED + i)
            if ROUNDS > 1:
                subprocess.run(["chmod", "-R", "u+w", rw])
                shutil.rmtree(rw, ignore_errors=True)
    except (OSError, RuntimeError, subprocess.SubprocessError, StopIteration) as e:
        print(f"Bail out! {type(e).__name__}: {e} (seed {SEED})", flush=True)
        return 1
    finally:
        for d in MOUNTS:  # a mount left by an exception the Mount did not see
            if os.path.ismount(d):
                subprocess.run(["fusermount3", "-uz", d], stderr=subprocess.DEVNULL)
        subprocess.run(["chmod", "-R", "u+w", work], stderr=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)
    print(f"1..{checks}")
    note(f"{time.monotonic() - started:.1f} s")
    if failures:
        print(f"# {len(failures)} of {checks} checks failed (seed {SEED})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
