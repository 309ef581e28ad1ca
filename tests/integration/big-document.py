#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""big-document.py SRC BIG OUTDIR NAMES...: BIG is manifest SRC with a workload document of about
4 MB (200,000 numbers in spec.samples: valid, and hard to compress), benchmark bigdoc/forward;
OUTDIR/NAME is each manifest NAMES with its workload left out and named by BIG's workload digest
only, as a published record that carries just the digest does. The inbox-sizes test checks that
deciding those costs the daemon no read of the big document."""
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kxjcs

src, big, out, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
m = json.load(open(src))
rnd = random.Random(1)
m["workload"]["spec"]["samples"] = [rnd.random() for _ in range(200000)]
m["run"]["spec"]["benchmark"] = "bigdoc/forward"
d = kxjcs.digest(m["workload"])
m["run"]["spec"]["workloadDigest"] = d
json.dump(m, open(big, "w"))
os.makedirs(out, exist_ok=True)
for n in names:
    x = json.load(open(n))
    del x["workload"]
    x["run"]["spec"]["workloadDigest"] = d
    json.dump(x, open(os.path.join(out, os.path.basename(n)), "w"))
