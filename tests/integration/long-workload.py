#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""long-workload.py SRC DST [BYTES]: DST is manifest SRC (with a workload document) whose workload's
dtype is a string of BYTES bytes (default 70000), and whose run references the changed workload by
its new digest: a valid manifest but for its size, whose workload's name text (docs/manifest.md,
rule length) passes 64 KiB. (The dtype: a parameter's value has a bound of its own, 256 bytes.)
Shared by the cli-ingest, cli-watch and inbox-sizes tests."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kxjcs

m = json.load(open(sys.argv[1]))
n = int(sys.argv[3]) if len(sys.argv) > 3 else 70000
m["workload"]["spec"]["dtype"] = "x" * n
m["run"]["spec"]["workloadDigest"] = kxjcs.digest(m["workload"])
json.dump(m, open(sys.argv[2], "w"), indent=2)
