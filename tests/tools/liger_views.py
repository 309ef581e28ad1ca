#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# An independent oracle of the views across groups (docs/views.md, SPEC §2, §5, §6), computed from
# Liger-Kernel CSV files alone: Python's standard library, none of the project's code. The tests
# of the views (tests/integration/views-*.sh) compare the tree's files with what it prints.
"""Expected rows of kindex's views, from Liger-Kernel benchmark CSV files.

usage: liger_views.py CSV... VIEW [ARGS]
       liger_views.py CSV... check TREE VIEW...

VIEW is one of
  ranking                    every group: its current runs in rank order, then superseded runs
  index                      the rows of /index.tsv (without shortid and path, which need digests;
                             a column 'key' names each row: kernel/pass/gpu/workload/implementation/observed_at)
  sweep KERNEL PASS GPU      the rows of benchmarks/KERNEL/PASS/GPU/sweep.tsv
  gpus KERNEL PASS           the rows of benchmarks/KERNEL/PASS/gpus.tsv
  compare CAND BASE [--gpu GPU]  compare/CAND..BASE/summary.tsv, or its GPU.tsv
  pairs                      the names /compare/ lists
  stats                      counts: groups, current and superseded runs, within-noise pairs, ...
  mixed                      counts of the mixed rows of compare/, gpus.tsv and sweep.tsv, and of
                             the current runs the first CSV has no run of (group and implementation)
  changes                    the rows of /changes.tsv: every step (two consecutive runs of one
                             implementation in a group), groups in tree order (names in numeric
                             order), then implementation, then time; before_shortid and
                             after_shortid are left empty (they need digests)

It prints TSV with a header line, the names of docs/views.md's vocabulary; numbers at full
precision (vs_best to 4 significant digits, as the views), an empty field where a value is
missing or does not apply. Workloads are named by their base
slug: the `~<8 hex>` suffix needs the workload digest, so groups are identified by kernel, pass,
gpu and parameters, and a line '# same base slug: ...' on standard error says where two workloads
share one. Runs that tie on median and observedAt are ordered by digest in the tree; the oracle
cannot, and says so on standard error ('# undecidable ...'); 'check' takes the tree's order there.

'check TREE VIEW...' reads an exported or mounted tree (TREE/index.tsv, TREE/benchmarks/.../
ranking.tsv, sweep.tsv, gpus.tsv, TREE/compare/...) and compares it with the oracle: text exactly,
numbers with a relative tolerance of 1e-9; VIEW is ranking, index, sweep, gpus, compare or pairs
(all the tree's files of that view), or changes (/changes.tsv and every group's changes.tsv; the
short ids are checked to name a run directory of the row's group). One line per difference, then 'liger-views: OK ...' or
'liger-views: FAIL n problems' (exit 1). A file the tree lacks is reported as missing.
"""
import collections, csv, datetime, functools, json, math, os, re, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'integration'))
from kxjcs import num as jcs_number  # noqa: E402 — the tests' own RFC 8785, not src/canon

RENAMES = {'B': 'batch', 'T': 'seq', 'BT': 'tokens', 'H': 'hidden', 'V': 'vocab'}
DTYPES = {'torch.bfloat16': 'bf16', 'torch.float32': 'fp32', 'torch.float16': 'fp16'}
TOL = 1e-9

def slug(s):
    return re.sub(r'[^a-z0-9._-]+', '-', str(s).lower()).strip('-')

def text_value(v):
    """A parameter's value as the slug and index.tsv write it."""
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, (int, float)):
        return jcs_number(v)
    return str(v)

def is_number(s):
    try:
        float(s)
        return s not in ('-', '') and s.lower() not in ('nan', 'inf', '-inf', 'infinity')
    except ValueError:
        return False

def num(s):
    """The value of a TSV number field; ints stay ints (so repr prints them as the tree does)."""
    return int(s) if re.fullmatch(r'-?[0-9]+', s) else float(s)

def fmt(v):
    if v is None:
        return ''
    if isinstance(v, float):
        return repr(v)
    return str(v)

def name_cmp(a, b):
    """Names in the order people read them (docs/views.md): a run of digits compares as the number
    it writes (leading zeros aside), anything else byte by byte; names equal that way by their bytes."""
    x, y = a.encode(), b.encode()
    i = j = 0
    while i < len(x) and j < len(y):
        if chr(x[i]).isdigit() and chr(y[j]).isdigit():
            i2, j2 = i, j
            while i2 < len(x) and chr(x[i2]).isdigit():
                i2 += 1
            while j2 < len(y) and chr(y[j2]).isdigit():
                j2 += 1
            p, q = x[i:i2].lstrip(b'0'), y[j:j2].lstrip(b'0')
            if (len(p), p) != (len(q), q):
                return -1 if (len(p), p) < (len(q), q) else 1
            i, j = i2, j2
        else:
            if x[i] != y[j]:
                return -1 if x[i] < y[j] else 1
            i += 1
            j += 1
    if i < len(x) or j < len(y):        # one is a prefix of the other, that way
        return -1 if i == len(x) else 1
    return (x > y) - (x < y)

name_key = functools.cmp_to_key(name_cmp)

MIXED_DAYS = 90

def when(observed):
    return datetime.datetime.strptime(observed, '%Y-%m-%dT%H:%M:%S.000Z')

def mixed_runs(runs, versions=True):
    """'yes' when runs set side by side are mixed (docs/views.md): two of their known versions differ
    (versions=True: runs of one implementation) or they lie more than 90 days apart."""
    vs = {r.version for r in runs if r.version not in ('-', '')}
    ts = [when(r.observed) for r in runs]
    span = max(ts) - min(ts)
    return 'yes' if (versions and len(vs) > 1) or span > datetime.timedelta(days=MIXED_DAYS) else 'no'

def version_of(r):
    return '' if r.version == '-' else r.version

def ratio_text_ok(want, got):
    """A ratio as the TSV views write it: 4 significant digits, a plain decimal."""
    if not re.fullmatch(r'-?[0-9]+(\.[0-9]+)?', got):
        return False
    digits = got.lstrip('-').replace('.', '').lstrip('0')
    return len(digits.rstrip('0')) <= 4 and abs(float(got) - want) <= 5e-4 * abs(want) * (1 + 1e-9)

# ---- the model: runs and groups from the CSV ----

Run = collections.namedtuple('Run', 'kernel pass_ metric gpu params impl version observed '
                                    'median p20 p80 unit file line')

def csv_value(s):
    return json.loads(s) if re.fullmatch(r'-?[0-9]+', s) else s

def half_away(x):
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))

def load(paths):
    runs = []
    for p in paths:
        with open(p, newline='') as f:
            for i, r in enumerate(csv.DictReader(f), start=2):
                cfg = json.loads(r['extra_benchmark_config_str'] or '{}')
                cfg.pop('mode', None)
                cfg[r['x_name']] = csv_value(r['x_value'])
                params = {}
                for k, v in cfg.items():
                    if v is None:
                        continue
                    if k == 'dtype':
                        v = DTYPES.get(v, v)
                    params[RENAMES.get(k, k)] = v
                mode = r['kernel_operation_mode']
                if r['metric_name'] == 'memory':
                    pass_, metric, unit = mode + '.memory', 'memory', 'MB'
                    conv = float
                elif r['metric_name'] == 'speed':
                    pass_, metric, unit = mode, 'latency', 'ns'
                    conv = lambda s: half_away(float(s) * 1e6)
                else:
                    raise SystemExit('%s:%d: unknown metric_name %r' % (p, i, r['metric_name']))
                impl = slug(r['kernel_provider'])
                version = r['liger_version'] if impl.startswith('liger') and r['liger_version'] else ''
                ts = datetime.datetime.strptime(r['timestamp'], '%Y-%m-%d %H:%M:%S')
                observed = ts.strftime('%Y-%m-%dT%H:%M:%S.000Z')
                ptuple = tuple(sorted((k, text_value(v)) for k, v in params.items()))
                runs.append(Run(r['kernel_name'], pass_, metric, slug(r['gpu_name']), ptuple, impl,
                                version, observed, conv(r['y_value_50']), conv(r['y_value_20']),
                                conv(r['y_value_80']), unit, p, i))
    return runs

def name_key(s):
    """Names in the order people read them (docs/views.md): each run of digits as the number it
    writes (n2048 < n16384), any other byte as itself; then the bytes, so n08 and n8 differ."""
    b = s.encode()
    key, i = [], 0
    while i < len(b):
        if 0x30 <= b[i] <= 0x39:
            j = i
            while j < len(b) and 0x30 <= b[j] <= 0x39:
                j += 1
            key.append((0x30, int(b[i:j])))
            i = j
        else:
            key.append((b[i],))
            i += 1
    return (key, b)

def vs_best(r, best):
    """How many times worse than #1 (>= 1): latency and memory are lower-is-better."""
    if r.median == best.median:
        return 1.0
    return float('inf') if best.median == 0 else r.median / best.median

def four_digits(x):
    """A ratio as the TSV views write it: 4 significant digits, a plain decimal."""
    if x == 0 or math.isinf(x) or math.isnan(x):
        return {0: '0'}.get(x, '' if math.isnan(x) else ('inf' if x > 0 else '-inf'))
    d = 3 - math.floor(math.log10(abs(x)))
    s = '%.*f' % (max(d, 0), round(x, d))
    if d > 0 and abs(float(s)) >= 10 ** (4 - d):   # 9.9996 rounds to 10.000: one decimal fewer
        s = '%.*f' % (d - 1, x)
    return s

def workload_slug(params):
    parts = [k + v for k, v in params if k != 'dtype']
    parts += [v for k, v in params if k == 'dtype']
    return slug('-'.join(parts))

def overlap(a, b):
    return a.p20 <= b.p80 and b.p20 <= a.p80

class Group:
    def __init__(self, key, runs):
        self.kernel, self.pass_, self.gpu, self.params = key
        self.metric = runs[0].metric
        self.unit = runs[0].unit
        self.slug = workload_slug(self.params)
        self.ambiguous = []     # what the oracle cannot decide without digests
        by_impl = collections.defaultdict(list)
        for r in runs:
            by_impl[r.impl].append(r)
        current, superseded = [], []
        for impl, rs in by_impl.items():
            rs.sort(key=lambda r: r.observed)
            if len(rs) > 1 and rs[-1].observed == rs[-2].observed:
                self.ambiguous.append('%s: two runs observed at %s' % (impl, rs[-1].observed))
            current.append(rs[-1])
            superseded += rs[:-1]
        order = lambda r: (r.median, r.observed)
        current.sort(key=order)
        superseded.sort(key=order)
        for a, b in zip(current, current[1:]):
            if order(a) == order(b):
                self.ambiguous.append('%s and %s tie on median and observedAt' % (a.impl, b.impl))
        self.current, self.superseded = current, superseded

    def tiebreak(self, impls):
        """Order runs that tie on median and observedAt (the tree breaks the tie by run digest,
        which the oracle cannot compute) as the tree's list of implementations does."""
        pos = {x: i for i, x in reversed(list(enumerate(impls)))}
        self.current.sort(key=lambda r: (r.median, r.observed, pos.get(r.impl, -1)))

    def key(self):
        return (self.kernel, self.pass_, self.gpu, self.params)

    def listing(self):
        """(rank, status, within_noise, run) in listing order."""
        out = []
        for i, r in enumerate(self.current):
            wn = '' if i == 0 else ('yes' if overlap(r, self.current[i - 1]) else 'no')
            out.append((i + 1, 'passed', wn, r))
        out += [('', 'superseded', '', r) for r in self.superseded]
        return out

class Model:
    def __init__(self, paths):
        self.paths = paths
        parts = collections.defaultdict(list)
        for r in load(paths):
            parts[(r.kernel, r.pass_, r.gpu, r.params)].append(r)
        self.groups = [Group(k, v) for k, v in parts.items()]
        # tree order, names as people read them (n1024 < n2048 < n16384)
        self.groups.sort(key=lambda g: (name_key(g.kernel), name_key(g.pass_), name_key(g.gpu),
                                        name_key(g.slug), g.params))
        # base slugs shared by two workloads of one pass (the tree gives both a ~suffix)
        seen = collections.defaultdict(set)
        for g in self.groups:
            seen[(g.kernel, g.pass_, g.slug)].add(g.params)
        self.shared = {k: v for k, v in seen.items() if len(v) > 1}

    def notes(self):
        out = ['# same base slug: %s/%s %s: %d workloads (match on parameters)' % (k[0], k[1], k[2], len(v))
               for k, v in sorted(self.shared.items())]
        for g in self.groups:
            out += ['# undecidable without digests: %s/%s/%s/%s: %s' % (g.kernel, g.pass_, g.gpu, g.slug, a)
                    for a in g.ambiguous]
        return out

# ---- the views ----

def view_ranking(m):
    hdr = ['kernel', 'pass', 'gpu', 'workload', 'rank', 'implementation', 'version', 'status', 'median',
           'p20', 'p80', 'unit', 'within_noise', 'observed_at']
    rows = []
    for g in m.groups:
        for rank, status, wn, r in g.listing():
            rows.append([g.kernel, g.pass_, g.gpu, g.slug, rank, r.impl, r.version, status, r.median,
                         r.p20, r.p80, r.unit, wn, r.observed])
    return hdr, rows

def rank_cells(g, rank, r):
    """vs_best, as ranking.tsv and index.tsv write it: for ranked runs only."""
    return four_digits(vs_best(r, g.current[0])) if rank != '' else ''

def param_names(m):
    return sorted({k for g in m.groups for k, _ in g.params}, key=lambda s: s.encode())

def view_index(m):
    names = param_names(m)
    hdr = (['kernel', 'pass', 'metric', 'gpu', 'workload'] + ['p.' + n for n in names] +
           ['implementation', 'version', 'status', 'rank', 'current', 'median', 'p20', 'p80', 'unit',
            'evidence', 'observed_at', 'within_noise', 'vs_best', 'key'])
    rows = []
    for g in m.groups:
        p = dict(g.params)
        for rank, status, wn, r in g.listing():
            rows.append([g.kernel, g.pass_, g.metric, g.gpu, g.slug] + [p.get(n, '') for n in names] +
                        [r.impl, r.version, status, rank, 'yes' if status == 'passed' else 'no',
                         r.median, r.p20, r.p80, r.unit, 'source-native', r.observed, wn,
                         rank_cells(g, rank, r),
                         '/'.join([g.kernel, g.pass_, g.gpu, g.slug, r.impl, r.observed])])
    return hdr, rows

def sweeps(m, kernel, pass_, gpu):
    """[(axis, fixed params, [groups])] of one kernel/pass/gpu."""
    gs = [g for g in m.groups if (g.kernel, g.pass_, g.gpu) == (kernel, pass_, gpu)]
    out = []
    for axis in sorted({k for g in gs for k, _ in g.params}):
        parts = collections.defaultdict(list)
        for g in gs:
            p = dict(g.params)
            if axis in p and g.current:  # a group without a current run has no row
                parts[tuple(kv for kv in g.params if kv[0] != axis)].append(g)
        for fixed, members in parts.items():
            if len({dict(g.params)[axis] for g in members}) >= 2:
                out.append((axis, fixed, members))
    return out

def view_sweep(m, kernel, pass_, gpu):
    hdr = ['axis', 'axis_value', 'fixed', 'workload', 'implementation', 'median', 'p20', 'p80', 'unit',
           'version', 'observed_at', 'mixed']
    rows = []
    for axis, fixed, members in sweeps(m, kernel, pass_, gpu):
        fixed_s = ','.join('%s=%s' % kv for kv in fixed)
        values = [dict(g.params)[axis] for g in members]
        numeric = all(is_number(v) for v in values)
        # an implementation's runs along the axis: mixed in versions or dates, every row of it
        by_impl = collections.defaultdict(list)
        for g in members:
            for r in g.current:
                by_impl[r.impl].append(r)
        for g in members:
            v = dict(g.params)[axis]
            vkey = (float(v),) if numeric else (name_key(v),)
            for r in g.current:
                rows.append(((axis.encode(), name_key(fixed_s), vkey, r.impl.encode()),
                             [axis, v, fixed_s, g.slug, r.impl, r.median, r.p20, r.p80, r.unit,
                              version_of(r), r.observed, mixed_runs(by_impl[r.impl])]))
    rows.sort(key=lambda x: x[0])
    return hdr, [r for _, r in rows]

UNIT_FACTOR = {'ns': 1, 'us': 1e3, 'ms': 1e6, 's': 1e9, 'B': 1, 'KB': 1e3, 'MB': 1e6, 'GB': 1e9}

def in_unit(v, unit, to):
    return v if unit == to else v * UNIT_FACTOR[unit] / UNIT_FACTOR[to]

def gpus_of(m, kernel, pass_):
    return sorted({g.gpu for g in m.groups if (g.kernel, g.pass_) == (kernel, pass_)}, key=name_key)

def view_gpus(m, kernel, pass_):
    gpus = gpus_of(m, kernel, pass_)
    cells = collections.defaultdict(dict)     # (params, impl) -> gpu -> run
    slugs = {}
    for g in m.groups:
        if (g.kernel, g.pass_) != (kernel, pass_):
            continue
        slugs[g.params] = g.slug
        for r in g.current:
            cells[(g.params, r.impl)][g.gpu] = r
    hdr = (['workload', 'implementation', 'unit', 'mixed'] + ['median.' + x for x in gpus] +
           ['version.' + x for x in gpus] + ['observed_at.' + x for x in gpus])
    rows = []
    for (params, impl), by_gpu in cells.items():
        first = next(by_gpu[x] for x in gpus if x in by_gpu)
        line = [slugs[params], impl, first.unit, mixed_runs(list(by_gpu.values()))]
        line += ['' if x not in by_gpu else in_unit(by_gpu[x].median, by_gpu[x].unit, first.unit) for x in gpus]
        line += ['' if x not in by_gpu else version_of(by_gpu[x]) for x in gpus]
        line += ['' if x not in by_gpu else by_gpu[x].observed for x in gpus]
        rows.append(((name_key(slugs[params]), impl.encode(), params), line))
    rows.sort(key=lambda x: x[0])
    return hdr, [r for _, r in rows]

def shared_groups(m, cand, base):
    """[(group, candidate run, baseline run)] where both have a current run."""
    out = []
    for g in m.groups:
        c = next((r for r in g.current if r.impl == cand), None)
        b = next((r for r in g.current if r.impl == base), None)
        if c and b:
            out.append((g, c, b))
    return out

def speedup(c, b):
    return b.median / c.median      # every Liger metric (latency, memory) is lower-is-better

def result(c, b):
    if overlap(c, b):
        return 'noise'
    s = speedup(c, b)
    return 'win' if s > 1 else 'loss' if s < 1 else 'tie'

def compare_mixed(c, b):
    """A candidate's and a baseline's run: two implementations, so their dates alone."""
    return mixed_runs([c, b], versions=False)

def view_compare(m, cand, base, gpu=None):
    sg = shared_groups(m, cand, base)
    if gpu is not None:
        hdr = ['kernel', 'pass', 'metric', 'workload', 'unit', 'candidate_median', 'baseline_median', 'ratio',
               'result', 'mixed', 'candidate_version', 'baseline_version', 'candidate_observed_at',
               'baseline_observed_at']
        rows = [((name_key(g.kernel), name_key(g.pass_), name_key(g.slug), g.params),
                 [g.kernel, g.pass_, g.metric, g.slug, c.unit, c.median, in_unit(b.median, b.unit, c.unit),
                  speedup(c, b), result(c, b), compare_mixed(c, b), version_of(c), version_of(b),
                  c.observed, b.observed]) for g, c, b in sg if g.gpu == gpu]
        rows.sort(key=lambda x: x[0])
        return hdr, [r for _, r in rows]
    hdr = ['kernel', 'pass', 'metric', 'gpu', 'groups', 'geomean_ratio', 'wins', 'losses', 'noise', 'ties',
           'mixed_groups']
    acc = collections.defaultdict(list)
    totals = collections.defaultdict(list)
    for g, c, b in sg:
        x = (speedup(c, b), result(c, b), compare_mixed(c, b))
        acc[(g.kernel, g.pass_, g.metric, g.gpu)].append(x)
        totals[('', '', g.metric, g.gpu)].append(x)
    def line(k, v):
        geo = math.exp(math.fsum(math.log(s) for s, _, _ in v) / len(v))
        n = collections.Counter(res for _, res, _ in v)
        return list(k) + [len(v), geo, n['win'], n['loss'], n['noise'], n['tie'],
                          sum(1 for _, _, mx in v if mx == 'yes')]
    # the totals of each gpu and metric first, then a line per kernel, pass and gpu
    rows = [line(k, totals[k]) for k in sorted(totals, key=lambda k: (name_key(k[3]), name_key(k[2])))]
    rows += [line(k, acc[k]) for k in sorted(acc, key=lambda k: (name_key(k[0]), name_key(k[1]), name_key(k[3])))]
    return hdr, rows

def pairs(m):
    ps = set()
    for g in m.groups:
        impls = [r.impl for r in g.current]
        ps.update((a, b) for a in impls for b in impls if a != b)
    return sorted(('%s..%s' % p for p in ps), key=lambda s: s.encode())

def view_pairs(m):
    return ['pair'], [[p] for p in pairs(m)]

def view_stats(m):
    cur = sum(len(g.current) for g in m.groups)
    sup = sum(len(g.superseded) for g in m.groups)
    first2 = [g for g in m.groups if len(g.current) >= 2]
    wn12 = sum(1 for g in first2 if overlap(g.current[0], g.current[1]))
    wn_all = sum(1 for g in m.groups for a, b in zip(g.current, g.current[1:]) if overlap(a, b))
    adj = sum(max(0, len(g.current) - 1) for g in m.groups)
    kpg = sorted({(g.kernel, g.pass_, g.gpu) for g in m.groups})
    nsweeps = sum(len(sweeps(m, *k)) for k in kpg)
    sweep_files = sum(1 for k in kpg if sweeps(m, *k))
    rows = [['groups', len(m.groups)], ['current_runs', cur], ['superseded_runs', sup],
            ['groups_with_2_ranked', len(first2)], ['within_noise_1v2', wn12],
            ['adjacent_ranked_pairs', adj], ['within_noise_adjacent', wn_all],
            ['kernel_pass_gpu', len(kpg)], ['sweeps', nsweeps], ['sweep_files_nonempty', sweep_files],
            ['pairs', len(pairs(m))], ['shared_base_slugs', len(m.shared)],
            ['undecidable', sum(len(g.ambiguous) for g in m.groups)]]
    return ['stat', 'value'], rows

def view_mixed(m):
    """Counts of the rows that set runs side by side and are mixed (docs/views.md), and of the current
    runs the first CSV has no run of (of that group and implementation): runs of an older CSV only."""
    first = {(r.kernel, r.pass_, r.gpu, r.params, r.impl) for r in load(m.paths[:1])}
    only = {(g.key(), r.impl) for g in m.groups for r in g.current if g.key() + (r.impl,) not in first}
    compare_rows = compare_mixed_rows = 0
    for p in pairs(m):
        c, b = p.split('..')
        for g, x, y in shared_groups(m, c, b):
            compare_rows += 1
            compare_mixed_rows += compare_mixed(x, y) == 'yes'
    gpus_rows = gpus_mixed = gpus_mixed_only = 0
    for k in sorted({(g.kernel, g.pass_) for g in m.groups}):
        cells = collections.defaultdict(list)
        for g in m.groups:
            if (g.kernel, g.pass_) == k:
                for r in g.current:
                    cells[(g.params, r.impl)].append((r, (g.key(), r.impl) in only))
        for rs in cells.values():
            gpus_rows += 1
            mx = mixed_runs([r for r, _ in rs]) == 'yes'
            gpus_mixed += mx
            gpus_mixed_only += mx and any(o for _, o in rs)
    sweep_rows = sweep_mixed = 0
    for k in sorted({(g.kernel, g.pass_, g.gpu) for g in m.groups}):
        _, rows = view_sweep(m, *k)
        sweep_rows += len(rows)
        sweep_mixed += sum(1 for r in rows if r[-1] == 'yes')
    rows = [['current_runs', sum(len(g.current) for g in m.groups)], ['first_csv_lacks_current', len(only)],
            ['compare_rows', compare_rows], ['compare_rows_mixed', compare_mixed_rows],
            ['gpus_rows', gpus_rows], ['gpus_rows_mixed', gpus_mixed],
            ['gpus_rows_mixed_with_first_csv_lacking', gpus_mixed_only],
            ['sweep_rows', sweep_rows], ['sweep_rows_mixed', sweep_mixed]]
    return ['stat', 'value'], rows

def print_tsv(hdr, rows, notes=()):
    out = sys.stdout
    for n in notes:                 # what the rows cannot show, on standard error
        print(n, file=sys.stderr)
    out.write('\t'.join(hdr) + '\n')
    for r in rows:
        out.write('\t'.join(fmt(v) for v in r) + '\n')

def name_cmp(a, b):
    """Names in the order people read them (docs/views.md): each run of digits compares as the
    number it writes, leading zeros ignored; the rest byte by byte; names equal that way compare
    bytewise. The tests' own implementation of the rule, from its documentation."""
    x, y = a.encode(), b.encode()
    i = j = 0
    digit = lambda c: 48 <= c <= 57
    while i < len(x) and j < len(y):
        if not (digit(x[i]) and digit(y[j])):
            if x[i] != y[j]:
                return -1 if x[i] < y[j] else 1
            i += 1
            j += 1
            continue
        ei, ej = i, j
        while ei < len(x) and digit(x[ei]):
            ei += 1
        while ej < len(y) and digit(y[ej]):
            ej += 1
        nx, ny = x[i:ei].lstrip(b'0'), y[j:ej].lstrip(b'0')
        if len(nx) != len(ny):
            return -1 if len(nx) < len(ny) else 1
        if nx != ny:
            return -1 if nx < ny else 1
        i, j = ei, ej
    if i < len(x) or j < len(y):
        return 1 if i < len(x) else -1
    return (x > y) - (x < y)

name_key = functools.cmp_to_key(name_cmp)

CHANGES_HEADER = ['kernel', 'pass', 'metric', 'gpu', 'workload', 'implementation', 'before_median',
                  'after_median', 'unit', 'change_pct', 'move', 'separated', 'before_version',
                  'after_version', 'before_observed_at', 'after_observed_at', 'before_p20', 'before_p80',
                  'after_p20', 'after_p80', 'before_shortid', 'after_shortid', 'group']

def series_of(g):
    """{impl: [run, ...] in time order}: every passed run of the group once (a row that both CSVs
    hold, or one CSV twice, is one observation: the tree keeps the second as an alias), and the
    ambiguities the oracle cannot order without digests."""
    by_impl, notes = collections.defaultdict(dict), []
    for r in g.current + g.superseded:
        by_impl[r.impl].setdefault((r.observed, r.median, r.p20, r.p80, r.version), r)
    out = {}
    for impl, rs in by_impl.items():
        rs = sorted(rs.values(), key=lambda r: r.observed)
        for a, b in zip(rs, rs[1:]):
            if a.observed == b.observed:
                notes.append('# undecidable without digests: %s/%s/%s/%s: %s: two runs observed at %s'
                             % (g.kernel, g.pass_, g.gpu, g.slug, impl, a.observed))
        out[impl] = rs
    return out, notes

def change_rows(g):
    """The steps of group g, as /changes.tsv writes them (short ids empty). Every Liger metric is
    lower-is-better (latency, memory): a larger median is a regression."""
    series, _ = series_of(g)
    rows = []
    for impl in sorted(series, key=name_key):
        rs = series[impl]
        for b, a in zip(rs, rs[1:]):
            pct = (a.median / b.median - 1) * 100 if b.median else (0.0 if a.median == 0 else math.inf)
            move = '' if a.median == b.median else 'regression' if a.median > b.median else 'improvement'
            sep = 'no' if overlap(a, b) else 'yes'
            rows.append([g.kernel, g.pass_, g.metric, g.gpu, g.slug, impl, b.median, a.median, a.unit, pct,
                         move, sep, '' if b.version == '-' else b.version, '' if a.version == '-' else a.version,
                         b.observed, a.observed, b.p20, b.p80, a.p20, a.p80, '', '',
                         '/'.join(['benchmarks', g.kernel, g.pass_, g.gpu, g.slug])])
    return rows

def tree_order(m):
    return sorted(m.groups, key=lambda g: (name_key(g.kernel), name_key(g.pass_), name_key(g.gpu),
                                           name_key(g.slug)))

def view_changes(m):
    rows = []
    for g in tree_order(m):
        rows += change_rows(g)
    return CHANGES_HEADER, rows

def changes_notes(m):
    return [n for g in m.groups for n in series_of(g)[1]]

def same_pct(want, got):
    """A relative change as the TSV writes it: the oracle's value to 4 significant digits."""
    if not is_number(got):
        return got == ('inf' if want == math.inf else None)
    g = float(got)
    if want == 0:
        return g == 0
    ulp = 10 ** (math.floor(math.log10(abs(want))) - 3)
    return abs(g - want) <= ulp / 2 * (1 + 1e-6)

# ---- check: compare a tree's files with the oracle ----

def strip_suffix(s):
    return re.sub(r'~[0-9a-f]{8}$', '', s)

def same(want, got):
    """Text exactly; numbers (the oracle's ints and floats) with relative tolerance TOL."""
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        if not is_number(got):
            return False
        g = float(got)
        return g == want or abs(g - want) <= TOL * max(abs(g), abs(want))
    return str(want) == got

def read_tsv(path):
    with open(path, newline='') as f:
        lines = f.read().split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    rows = [l.split('\t') for l in lines if not l.startswith('#')]
    return (rows[0], rows[1:]) if rows else ([], [])

class Checker:
    def __init__(self, tree, model):
        self.tree, self.m = tree, model
        self.problems = []
        self.files = 0
        self.rows = 0
        self.missing = 0

    def bad(self, msg):
        self.problems.append(msg)

    def present(self, rel, test):
        """TREE/rel when test says it is there (counted), else None (reported missing)."""
        path = os.path.join(self.tree, rel)
        if not test(path):
            self.missing += 1
            self.bad('%s: missing' % rel)
            return None
        self.files += 1
        return path

    RATIO_COLS = ('ratio', 'geomean_ratio')

    def compare_file(self, rel, hdr, rows, colmap=None, workload_cols=('workload',), required=None):
        """Compare TREE/rel with (hdr, rows). colmap: oracle column -> tree column name."""
        path = self.present(rel, os.path.isfile)
        if not path:
            return
        thdr, trows = read_tsv(path)
        colmap = colmap or {}
        idx = {}
        for c in hdr:
            tc = colmap.get(c, c)
            if tc in thdr:
                idx[c] = thdr.index(tc)
            elif required is None or c in required:
                self.bad('%s: no column %s' % (rel, tc))
        if required is None and [colmap.get(c, c) for c in hdr] != thdr[:len(hdr)]:
            self.bad('%s: header %r, expected %r' % (rel, thdr, [colmap.get(c, c) for c in hdr]))
        if len(trows) != len(rows):
            self.bad('%s: %d rows, expected %d' % (rel, len(trows), len(rows)))
        for n, (want, got) in enumerate(zip(rows, trows), start=2):
            self.rows += 1
            for c, i in idx.items():
                w = want[hdr.index(c)]
                g = got[i] if i < len(got) else '<none>'
                if c in workload_cols:
                    g = strip_suffix(g)
                if c in self.RATIO_COLS and isinstance(w, float):
                    if not ratio_text_ok(w, g):
                        self.bad('%s:%d: %s is %r, expected %r to 4 significant digits' % (rel, n, c, g, w))
                    continue
                if not same(w, g):
                    self.bad('%s:%d: %s is %r, expected %r' % (rel, n, colmap.get(c, c), g, fmt(w)))

    def ranking(self):
        # tree group dirs by (kernel, pass, gpu, base slug); two workloads sharing a base slug are
        # told apart by their runs (impl and observedAt)
        cols = {}
        for g in self.m.groups:
            gdir = os.path.join('benchmarks', g.kernel, g.pass_, g.gpu)
            cands = [g.slug]
            if (g.kernel, g.pass_, g.slug) in self.m.shared:
                try:
                    cands = sorted(d for d in os.listdir(os.path.join(self.tree, gdir))
                                   if strip_suffix(d) == g.slug)
                except OSError:
                    cands = []
                want = sorted((r.impl, r.observed) for r in g.current + g.superseded)
                for d in cands:
                    h, rs = read_tsv(os.path.join(self.tree, gdir, d, 'ranking.tsv'))
                    if ('implementation' in h and 'observed_at' in h and
                            sorted((x[h.index('implementation')], x[h.index('observed_at')]) for x in rs) == want):
                        cands = [d]
                        break
                else:
                    cands = [g.slug + '~?']
            if g.ambiguous:
                try:
                    h, rs = read_tsv(os.path.join(self.tree, gdir, cands[0], 'ranking.tsv'))
                    g.tiebreak([x[h.index('implementation')] for x in rs])
                except (OSError, ValueError):
                    pass
            hdr = ['rank', 'implementation', 'median', 'unit', 'observed_at', 'status', 'version', 'p20',
                   'p80', 'within_noise', 'vs_best']
            rows = [[rank, r.impl, r.median, r.unit, r.observed, status, r.version, r.p20, r.p80, wn,
                     rank_cells(g, rank, r)] for rank, status, wn, r in g.listing()]
            rel = os.path.join(gdir, cands[0], 'ranking.tsv')
            self.compare_file(rel, hdr, rows, cols, required=set(hdr))
            if os.path.isfile(os.path.join(self.tree, rel)):
                self.display(rel, rows)

    def display(self, rel, rows):
        """A ranking.tsv's display column says its median: the number, in the unit it names."""
        try:
            h, rs = read_tsv(os.path.join(self.tree, rel))
            i = h.index('display')
        except (OSError, ValueError):
            return self.bad('%s: no column display' % rel)
        scale = {'ns': 1, 'us': 1e3, 'ms': 1e6, 's': 1e9, 'MB': 1}
        for n, (want, got) in enumerate(zip(rows, rs), start=2):
            m = re.fullmatch(r'(-?[0-9.]+) (ns|us|ms|s|MB)', got[i] if i < len(got) else '')
            unit_scale = scale[want[3]] if want[3] in scale else None
            if not m or unit_scale is None or want[2] in ('', None):
                self.bad('%s:%d: display %r does not read as a value' % (rel, n, got[i] if i < len(got) else None))
                continue
            v = float(m.group(1)) * scale[m.group(2)] / unit_scale
            if abs(v - want[2]) > 6e-4 * abs(want[2]):
                self.bad('%s:%d: display %r, the median is %r %s' % (rel, n, got[i], want[2], want[3]))

    def index(self):
        hdr, rows = view_index(self.m)
        path = self.present('index.tsv', os.path.isfile)
        if not path:
            return
        thdr, trows = read_tsv(path)
        want_hdr = hdr[:-3] + ['shortid', 'path'] + hdr[-3:-1] + ['display', 'rerun', 'rerun_ratio',
                                                                    'rerun_within_noise']
        if thdr != want_hdr:
            self.bad('index.tsv: header %r, expected %r' % (thdr, want_hdr))
        # a CSV's runs are source-native, never measured: no run has a controlled rerun (SPEC §10)
        rerun_cols = [thdr.index(c) for c in ('rerun', 'rerun_ratio', 'rerun_within_noise') if c in thdr]
        for n, r in enumerate(trows, start=2):
            if any(i < len(r) and r[i] for i in rerun_cols):
                self.bad('index.tsv:%d: a rerun of a source-native run, but no run is measured' % n)
                break
        if len(trows) != len(rows):
            self.bad('index.tsv: %d rows, expected %d' % (len(trows), len(rows)))
        # rows are matched by key (the order is checked too: within a group it is listing order)
        ti = {c: i for i, c in enumerate(thdr)}
        if not all(c in ti for c in ('kernel', 'pass', 'gpu', 'workload', 'implementation', 'observed_at')):
            self.bad('index.tsv: cannot key its rows')
            return
        def tkey(r):
            return '/'.join([r[ti['kernel']], r[ti['pass']], r[ti['gpu']], strip_suffix(r[ti['workload']]),
                             r[ti['implementation']], r[ti['observed_at']]])
        got_keys = [tkey(r) for r in trows]
        for g in self.m.groups:
            if g.ambiguous:
                pre = '/'.join([g.kernel, g.pass_, g.gpu, g.slug]) + '/'
                g.tiebreak([k[len(pre):].split('/')[0] for k in got_keys if k.startswith(pre)])
        hdr, rows = view_index(self.m)
        want_keys = [r[-1] for r in rows]
        if got_keys != want_keys:
            diff = next((i for i, (a, b) in enumerate(zip(got_keys, want_keys)) if a != b),
                        min(len(got_keys), len(want_keys)))
            self.bad('index.tsv:%d: row order differs: %s, expected %s' % (
                diff + 2, got_keys[diff] if diff < len(got_keys) else '<end>',
                want_keys[diff] if diff < len(want_keys) else '<end>'))
        byk = {}
        for r in trows:
            byk.setdefault(tkey(r), r)
        for want in rows:
            got = byk.get(want[-1])
            self.rows += 1
            if got is None:
                self.bad('index.tsv: no row %s' % want[-1])
                continue
            for c, w in zip(hdr[:-1], want):
                if c not in ti:
                    continue
                g = got[ti[c]] if ti[c] < len(got) else '<none>'
                if c == 'workload':
                    g = strip_suffix(g)
                if not same(w, g):
                    self.bad('index.tsv: %s: %s is %r, expected %r' % (want[-1], c, g, fmt(w)))
            if 'shortid' in ti and not re.fullmatch(r'[0-9a-f]{12}', got[ti['shortid']]):
                self.bad('index.tsv: %s: shortid %r' % (want[-1], got[ti['shortid']]))
            if 'path' in ti:
                p = got[ti['path']]
                if not p.startswith('/'.join(['benchmarks'] + want[:2] + [want[3]]) + '/'):
                    self.bad('index.tsv: %s: path %r' % (want[-1], p))
                elif not os.path.isdir(os.path.join(self.tree, p)):
                    self.bad('index.tsv: %s: path %r is not a directory of the tree' % (want[-1], p))

    def sweep(self):
        for k in sorted({(g.kernel, g.pass_, g.gpu) for g in self.m.groups}):
            hdr, rows = view_sweep(self.m, *k)
            self.compare_file(os.path.join('benchmarks', *k, 'sweep.tsv'), hdr, rows)

    def gpus(self):
        for k in sorted({(g.kernel, g.pass_) for g in self.m.groups}):
            hdr, rows = view_gpus(self.m, *k)
            self.compare_file(os.path.join('benchmarks', *k, 'gpus.tsv'), hdr, rows)

    def compare(self):
        for p in pairs(self.m):
            c, b = p.split('..')
            hdr, rows = view_compare(self.m, c, b)
            self.compare_file(os.path.join('compare', p, 'summary.tsv'), hdr, rows, workload_cols=())
            for gpu in sorted({g.gpu for g, _, _ in shared_groups(self.m, c, b)}):
                hdr, rows = view_compare(self.m, c, b, gpu)
                self.compare_file(os.path.join('compare', p, gpu + '.tsv'), hdr, rows)

    def pairs(self):
        d = self.present('compare/', os.path.isdir)
        if not d:
            return
        got = sorted((x for x in os.listdir(d) if os.path.isdir(os.path.join(d, x))), key=lambda s: s.encode())
        want = pairs(self.m)
        for x in sorted(set(want) - set(got)):
            self.bad('compare/%s: missing' % x)
        for x in sorted(set(got) - set(want)):
            self.bad('compare/%s: not expected' % x)

def _changes_file(ch, rel, rows, group_dirs):
    """Compare TREE/rel (a changes.tsv) with the oracle's rows, in order; the short ids must name
    run directories of the row's group (group_dirs: group path -> its entries)."""
    path = ch.present(rel, os.path.isfile)
    if not path:
        return None
    thdr, trows = read_tsv(path)
    if thdr != CHANGES_HEADER:
        ch.bad('%s: header %r, expected %r' % (rel, thdr, CHANGES_HEADER))
        return None
    if len(trows) != len(rows):
        ch.bad('%s: %d rows, expected %d' % (rel, len(trows), len(rows)))
    for n, (want, got) in enumerate(zip(rows, trows), start=2):
        ch.rows += 1
        if len(got) != len(CHANGES_HEADER):
            ch.bad('%s:%d: %d fields, expected %d' % (rel, n, len(got), len(CHANGES_HEADER)))
            continue
        for c, w, g in zip(CHANGES_HEADER, want, got):
            if c in ('workload', 'group'):
                g = strip_suffix(g)
            if c in ('before_shortid', 'after_shortid'):
                entries = group_dirs.get(got[-1])
                if entries is None:
                    try:
                        entries = group_dirs[got[-1]] = os.listdir(os.path.join(ch.tree, got[-1]))
                    except OSError:
                        entries = group_dirs[got[-1]] = []
                if not re.fullmatch(r'[0-9a-f]{12}', g) or not any(e.endswith('-' + g) for e in entries):
                    ch.bad('%s:%d: %s %r names no run directory of %s' % (rel, n, c, g, got[-1]))
                continue
            ok = same_pct(w, g) if c == 'change_pct' else same(w, g)
            if not ok:
                ch.bad('%s:%d: %s is %r, expected %r' % (rel, n, c, g, fmt(w)))
    return trows

def check_changes(ch):
    """/changes.tsv against the oracle, then every group's changes.tsv: the root's rows of that
    group, with the same header."""
    hdr, rows = view_changes(ch.m)
    group_dirs = {}
    _changes_file(ch, 'changes.tsv', rows, group_dirs)
    for g in tree_order(ch.m):
        rel = os.path.join('benchmarks', g.kernel, g.pass_, g.gpu, g.slug, 'changes.tsv')
        _changes_file(ch, rel, change_rows(g), group_dirs)

def check(model, tree, views):
    ch = Checker(tree, model)
    for v in views:
        if v not in ('ranking', 'index', 'sweep', 'gpus', 'compare', 'pairs', 'changes'):
            raise SystemExit('liger_views.py: check: unknown view %r' % v)
        if v == 'changes':
            check_changes(ch)
        else:
            getattr(ch, v)()
    for p in ch.problems[:200]:
        print(p)
    if len(ch.problems) > 200:
        print('... and %d more' % (len(ch.problems) - 200))
    summary = 'views=%s files=%d rows=%d groups=%d' % (','.join(views), ch.files, ch.rows, len(model.groups))
    if ch.problems:
        print('liger-views: FAIL %d problems (%d files missing); %s' % (len(ch.problems), ch.missing, summary))
        return 1
    print('liger-views: OK ' + summary)
    return 0

VIEWS = {'ranking': 0, 'index': 0, 'sweep': 3, 'gpus': 2, 'compare': 2, 'pairs': 0, 'stats': 0, 'mixed': 0,
         'changes': 0, 'check': -1}

def main(argv):
    if len(argv) < 2 or argv[0] in ('-h', '--help'):
        print(__doc__)
        return 0 if argv and argv[0] in ('-h', '--help') else 2
    at = next((i for i, a in enumerate(argv) if a in VIEWS and not os.path.isfile(a)), None)
    if not at:
        print('liger_views.py: no CSV or no view (see --help)', file=sys.stderr)
        return 2
    csvs, view, args = argv[:at], argv[at], argv[at + 1:]
    m = Model(csvs)
    if view == 'check':
        if len(args) < 2:
            print('liger_views.py: check TREE VIEW...', file=sys.stderr)
            return 2
        return check(m, args[0], args[1:])
    gpu = None
    if view == 'compare' and '--gpu' in args:
        i = args.index('--gpu')
        gpu = args[i + 1] if i + 1 < len(args) else None
        args = args[:i] + args[i + 2:]
    if len(args) != VIEWS[view] or (view == 'compare' and '--gpu' in argv and gpu is None):
        print('liger_views.py: %s takes %d arguments (see --help)' % (view, VIEWS[view]), file=sys.stderr)
        return 2
    fn = {'ranking': view_ranking, 'index': view_index, 'sweep': view_sweep, 'gpus': view_gpus,
          'pairs': view_pairs, 'stats': view_stats, 'mixed': view_mixed, 'changes': view_changes}.get(view)
    if view == 'compare':
        hdr, rows = view_compare(m, args[0], args[1], gpu)
    else:
        hdr, rows = fn(m, *args)
    notes = m.notes() if view in ('ranking', 'index', 'gpus', 'stats') else changes_notes(m) if view == 'changes' else ()
    print_tsv(hdr, rows, notes)
    return 0

if __name__ == '__main__':
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:
        sys.exit(0)
