# SPDX-License-Identifier: MIT
# The manifests of store/: names an older kindex (schema 3) keyed by their lossy slugs. Usage:
# make-manifests.py OUTDIR (one manifest a file); manifests.jsonl holds the same, one a line.
import json, hashlib, sys, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'integration'))
from kxjcs import jcs
def digest(d): return "sha256:" + hashlib.sha256(jcs({"apiVersion": d["apiVersion"], "kind": d["kind"], "spec": d["spec"]}).encode()).hexdigest()
def doc(kind, name, spec): return {"apiVersion": "kernelindex.dev/v1alpha1", "kind": kind, "metadata": {"name": name}, "spec": spec}
proto = doc("BenchmarkProtocol", "p", {"harness": {"name": "h", "version": "1"}, "measurement": {"timer": "cuda_events", "primaryStatistic": "median"}, "comparability": {"family": "f", "notes": "n"}})
def env(product, ff=None):
    hw = {"vendor": "nvidia", "product": product}
    if ff: hw["formFactor"] = ff
    return doc("ExecutionEnvironment", "e", {"hardware": hw, "software": {}})
def wl(params, dtype="bf16"):
    s = {"parameters": params}
    if dtype: s["dtype"] = dtype
    return doc("Workload", "w", s)
def impl(name): return doc("Implementation", "i", {"name": name, "version": "1"})
def manifest(bench, e, w, i, med, obs="2025-01-01T00:00:00.000Z", tag=""):
    spec = {"status": "passed", "benchmark": bench, "observedAt": obs,
            "timing": {"primaryStatistic": "median", "latencyNs": {"median": med, "p20": med, "p80": med}},
            "measurements": [{"metric": "latency", "statistic": "p20", "unit": "ns", "value": med}, {"metric": "latency", "statistic": "p80", "unit": "ns", "value": med}],
            "samples": {"count": 10, "note": tag},
            "protocolDigest": digest(proto), "environmentDigest": digest(e), "workloadDigest": digest(w), "implementationDigest": digest(i)}
    return {"run": doc("BenchmarkRun", "r", spec), "protocol": proto, "environment": e, "workload": w, "implementation": i}
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
E = env("NVIDIA H100", "SXM5"); W = wl({"hidden": 4096})
ms = [manifest("rms_norm/forward", E, W, impl("ライガー"), 50), manifest("rms_norm/forward", E, W, impl("カーネル"), 100),
      manifest("rms_norm/forward", E, W, impl("Liger"), 70), manifest("rms_norm/forward", E, W, impl("liger"), 80),
      manifest("index.html/forward", E, W, impl("liger"), 90),
      manifest("rms_norm/forward", E, W, impl("Liger"), 60, obs="2025-02-01T00:00:00.000Z"),
      manifest("rms_norm/backward", E, W, impl("a"), 10), manifest("rms_norm/backward", E, W, impl("b..c"), 20),
      manifest("rms_norm/backward", E, W, impl("a..b"), 30), manifest("rms_norm/backward", E, W, impl("c"), 40),
      manifest("rms_norm/forward", E, W, impl("a"), 11), manifest("rms_norm/forward", E, W, impl("b..c"), 21),
      manifest("rms_norm/forward", E, W, impl("a..b"), 31), manifest("rms_norm/forward", E, W, impl("c"), 41),
      # GPUs: two whose slugs drop their letters (one group before exact names), one named like a view
      manifest("rms_norm/full", env("NVIDIA \u00c4100"), W, impl("liger"), 100),
      manifest("rms_norm/full", env("NVIDIA \u00d6100"), W, impl("liger"), 200),
      manifest("rms_norm/full", env("Gpus.TSV"), W, impl("liger"), 300)]
for n, m in enumerate(ms):
    json.dump(m, open(f"{out}/m{n}.json", "w"))
