#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bad-manifest.py SRC DST: DST is manifest SRC with three problems a refusal must list, each with
its pointer and rule: /run/spec/status 'maybe' (enum), /run/spec/observedAt 'yesterday'
(timestamp), and an unknown member /extra (unknown-member). Shared by the cli-watch and
inbox-tools tests, which check the same three lines in their .error files."""
import json
import sys

m = json.load(open(sys.argv[1]))
m["run"]["spec"]["status"] = "maybe"
m["run"]["spec"]["observedAt"] = "yesterday"
m["extra"] = True
json.dump(m, open(sys.argv[2], "w"), indent=2)
