# SPDX-License-Identifier: MIT
# Shared by the bench-*.sh integration tests (sourced, not run): the program under test, a
# temporary directory removed on exit, and check_manifests, which re-derives every digest of a
# manifest file with its own JCS implementation (kxjcs.py: Python, independent of src/canon) and checks
# the fields docs/manifest.md requires. Without python3 the digest check is skipped, loudly.

: "${KINDEX_BENCH:?KINDEX_BENCH must name the kindex-bench binary}"
[[ -x $KINDEX_BENCH ]] || { echo "kindex-bench not built: $KINDEX_BENCH" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kindex-bench-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

die() {
	echo "FAIL: $*" >&2
	exit 1
}

# expect STATUS CMD...: run CMD, keep stdout in $tmp/stdout and stderr in $tmp/stderr
expect() {
	local want=$1 got=0
	shift
	"$@" >"$tmp/stdout" 2>"$tmp/stderr" || got=$?
	if [[ $got != "$want" ]]; then
		cat "$tmp/stderr" >&2
		die "exit status $got, expected $want: $*"
	fi
}

# check_manifests FILE [PYTHON-EXPRESSION-ASSERTIONS...]: every manifest in FILE (one pretty
# manifest, or JSON Lines) is well formed and its digests link up; each extra argument is a
# Python expression over `m` (the manifest) and `run` (run.spec) that must hold for all of them.
check_manifests() {
	if ! command -v python3 >/dev/null; then
		echo "# python3 not found: manifest digests not re-derived" >&2
		return 0
	fi
	KX_JCS_DIR=$(dirname "${BASH_SOURCE[0]}") python3 - "$@" <<'PY'
import json, os, re, sys
sys.path.insert(0, os.environ['KX_JCS_DIR'])
from kxjcs import digest, jcs


UNITS = {'latency': {'ns', 'us', 'ms', 's'}, 'memory': {'B', 'KB', 'MB', 'GB', 'KiB', 'MiB', 'GiB'},
         'throughput': {'FLOP/s', 'GFLOP/s', 'TFLOP/s', 'B/s', 'GB/s'}}
KINDS = {'run': 'BenchmarkRun', 'protocol': 'BenchmarkProtocol', 'environment': 'ExecutionEnvironment',
         'workload': 'Workload', 'implementation': 'Implementation'}

path, asserts = sys.argv[1], sys.argv[2:]
text = open(path, encoding='utf-8').read()
try:
    manifests, lines = [json.loads(text)], None
except json.JSONDecodeError:
    lines = [l for l in text.split('\n') if l]
    manifests = [json.loads(l) for l in lines]
if lines:
    for l, m in zip(lines, manifests):
        assert jcs(m) == l, 'a JSON Lines manifest is not in JCS form'
for m in manifests:
    assert set(m) == set(KINDS), f'members {sorted(m)}'
    for key, kind in KINDS.items():
        d = m[key]
        assert d['apiVersion'] == 'kernelindex.dev/v1alpha1' and d['kind'] == kind, key
        assert isinstance(d['metadata']['name'], str) and isinstance(d['spec'], dict), key
    run = m['run']['spec']
    for key in ('protocol', 'environment', 'workload', 'implementation'):
        assert run[key + 'Digest'] == digest(m[key]), f'{key}Digest does not match the {key} document'
    assert run['status'] in ('passed', 'failed')
    assert re.fullmatch(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z', run['observedAt']), run['observedAt']
    assert re.fullmatch(r'[a-z0-9._-]+/[a-z0-9._-]+', run['benchmark']), run['benchmark']
    proto = m['protocol']['spec']
    assert run['timing']['primaryStatistic'] == proto['measurement']['primaryStatistic']
    assert isinstance(proto['comparability']['family'], str)
    hw = m['environment']['spec']['hardware']
    assert hw['vendor'] and hw['product']
    assert isinstance(m['workload']['spec']['parameters'], dict) and m['implementation']['spec']['name']
    if run['status'] == 'passed':
        assert run['timing']['latencyNs']['median'] >= 0
    else:
        assert run['message'] and 'latencyNs' not in run['timing']
    for e in run['measurements']:
        assert e['unit'] in UNITS.get(e['metric'], {'count', 'ratio', '%', 'W', 'MHz', 'C'}), e
    for a in asserts:
        assert eval(a, {'m': m, 'run': run}), f'does not hold: {a}'
print(f'# {len(manifests)} manifest(s) in {path}: digests re-derived, fields checked')
PY
}
