#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# An independent checker of the Liger import: it compares partitions and rank order computed from
# the CSV alone, without the project's code or slug rules. Copied unchanged (but for these lines)
# from the project's reference material (shared/tools/check_liger_tree.py beside the repository);
# tests/integration/cli-liger.sh runs it on an export and mount-tree.sh on a live mount.
"""Check a kindex tree (an export directory or a live mount) against Liger-Kernel CSV files.

Independent of the project's slug rules: it compares the *partition* of rows into comparison
groups and the rank order inside each group, not directory names.

usage: check_liger_tree.py TREE CSV [CSV ...]
Prints one line per problem and a last line 'liger-tree: OK n=..' or 'liger-tree: FAIL ...'.
"""
import collections, csv, json, os, re, sys

def slug(s):
    return re.sub(r'[^a-z0-9._-]+', '-', str(s).lower()).strip('-')

def ts_slug(ts):
    return ts.replace(' ', '-').replace(':', '-')

def ref_groups(csv_paths):
    """Reference partition: (kernel, mode, metric, gpu, workload params) -> list of row identities."""
    groups = collections.defaultdict(list)
    nrows = 0
    for p in csv_paths:
        for r in csv.DictReader(open(p)):
            nrows += 1
            cfg = json.loads(r['extra_benchmark_config_str'])
            cfg.pop('mode', None)
            cfg[r['x_name']] = r['x_value']
            params = tuple(sorted((k, str(v)) for k, v in cfg.items() if v is not None))
            metric = 'latency' if r['metric_name'] == 'speed' else r['metric_name']
            key = (r['kernel_name'], r['kernel_operation_mode'], metric, slug(r['gpu_name']), params)
            ident = (r['kernel_provider'], ts_slug(r['timestamp']), float(r['y_value_50']))
            groups[key].append(ident)
    return groups, nrows

def tree_groups(tree):
    bench = os.path.join(tree, 'benchmarks')
    groups = {}
    problems = []
    n = 0
    for root, dirs, files in os.walk(bench):
        rankdirs = [d for d in dirs if os.path.isfile(os.path.join(root, d, 'manifest.json'))]
        if not rankdirs:
            continue
        members = []
        for d in sorted(rankdirs):
            m = json.load(open(os.path.join(root, d, 'manifest.json')))
            n += 1
            spec = m['run']['spec']
            sn = spec.get('sourceNative', {})
            ext = sn.get('externalId', '')
            parts = ext.split('/')
            if len(parts) != 6:
                problems.append(f'{root}/{d}: externalId has {len(parts)} segments: {ext}')
                continue
            metrics = sn.get('metrics', {})
            y50 = next((v for k, v in metrics.items() if k.endswith('_50')), None)
            if y50 is None:
                problems.append(f'{root}/{d}: no *_50 in sourceNative.metrics')
                continue
            rank = d.split('-', 1)[0]
            obs = spec.get('observedAt', '')
            members.append((rank, float(y50), obs, parts[2], parts[5], d))
        ranked = [x for x in members if x[0].isdigit()]
        ranks = sorted(int(x[0]) for x in ranked)
        if ranks != list(range(1, len(ranked) + 1)):
            problems.append(f'{root}: ranks not contiguous: {ranks}')
        order = sorted(ranked, key=lambda x: int(x[0]))
        for a, b in zip(order, order[1:]):
            if (a[1], a[2]) > (b[1], b[2]):
                problems.append(f'{root}: {a[5]} ({a[1]}) ranked above {b[5]} ({b[1]})')
        groups[root] = [(p, ts, y) for _, y, _, p, ts, _ in members]
    return groups, n, problems

def main():
    tree, csvs = sys.argv[1], sys.argv[2:]
    ref, nrows = ref_groups(csvs)
    got, n, problems = tree_groups(tree)
    if n != nrows:
        problems.append(f'{n} manifests in the tree, {nrows} rows in the CSV files')
    refset = collections.Counter(tuple(sorted(v)) for v in ref.values())
    gotset = collections.Counter(tuple(sorted(v)) for v in got.values())
    missing = refset - gotset
    extra = gotset - refset
    if missing or extra:
        problems.append(f'partition differs: {sum(missing.values())} reference groups not found, '
                        f'{sum(extra.values())} tree groups not in the reference '
                        f'({len(ref)} reference groups, {len(got)} tree groups)')
        for g in list(missing)[:3]:
            problems.append(f'  e.g. missing group {g[:4]}')
    for p in problems[:30]:
        print(p)
    if problems:
        print(f'liger-tree: FAIL {len(problems)} problems; {n}/{nrows} runs, {len(got)}/{len(ref)} groups')
        return 1
    print(f'liger-tree: OK n={n} groups={len(got)}')
    return 0

if __name__ == '__main__':
    sys.exit(main())
