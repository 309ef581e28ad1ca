# SPDX-License-Identifier: MIT
"""RFC 8785 (JCS) and KernelIndex document digests in Python, independent of src/canon: the
integration tests re-derive the digests kindex and kindexfs print with it (bench-lib.sh's
check_manifests, inbox-stress.py's readers)."""
import decimal, hashlib, json


def num(v):
    if isinstance(v, bool):
        raise TypeError
    if isinstance(v, int):
        return str(v)
    if v != v or v in (float('inf'), float('-inf')):
        raise ValueError('non-finite number')
    if v == 0:
        return '0'
    t = decimal.Decimal(repr(abs(v))).as_tuple()
    digits = ''.join(map(str, t.digits))
    stripped = digits.rstrip('0')
    exp = t.exponent + len(digits) - len(stripped)
    digits = stripped.lstrip('0')
    k = len(digits)
    n = k + exp  # ECMAScript Number::toString: value = 0.digits * 10^n
    if k <= n <= 21:
        s = digits + '0' * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + '.' + digits[n:]
    elif -6 < n <= 0:
        s = '0.' + '0' * -n + digits
    else:
        e = n - 1
        s = digits[0] + ('.' + digits[1:] if k > 1 else '') + 'e' + ('+' if e > 0 else '-') + str(abs(e))
    return ('-' if v < 0 else '') + s

def jcs(v):
    if v is None: return 'null'
    if v is True: return 'true'
    if v is False: return 'false'
    if isinstance(v, (int, float)): return num(v)
    if isinstance(v, str): return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list): return '[' + ','.join(jcs(x) for x in v) + ']'
    keys = sorted(v, key=lambda s: s.encode('utf-16-be'))
    return '{' + ','.join(json.dumps(k, ensure_ascii=False) + ':' + jcs(v[k]) for k in keys) + '}'

def digest(doc):
    """'sha256:<hex>' of a document's apiVersion, kind and spec in JCS form."""
    hashed = {k: doc[k] for k in ('apiVersion', 'kind', 'spec') if k in doc}
    return 'sha256:' + hashlib.sha256(jcs(hashed).encode()).hexdigest()

def series_run(base, name, i, external_id, observed_at, ns):
    """A copy of manifest base as run i of a series: implementation name at version 1.i, its
    externalId and observedAt, and a latency of ns (median, p20 and p80 alike), its digests
    re-derived. The tests that draw series (views-history.sh, views-axes.sh) share it."""
    m = json.loads(json.dumps(base))
    m["implementation"]["spec"] = {"name": name, "version": "1.%d" % i}
    m["implementation"]["metadata"] = {"name": "%s-1.%d" % (name, i)}
    spec = m["run"]["spec"]
    spec["workloadDigest"] = digest(m["workload"])
    spec["implementationDigest"] = digest(m["implementation"])
    spec["sourceNative"]["externalId"] = external_id
    spec["observedAt"] = observed_at
    spec["timing"]["latencyNs"]["median"] = ns
    for x in spec["measurements"]:
        x["value"] = ns
    spec["sourceNative"]["metrics"] = {"ms_20": ns / 1e6, "ms_50": ns / 1e6, "ms_80": ns / 1e6}
    return m
