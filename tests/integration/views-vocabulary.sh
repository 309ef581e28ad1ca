#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# One vocabulary (SPEC §6, docs/views.md "One vocabulary"), as a data user meets it: on a mount of
# both bundled Liger CSVs, pandas reads every TSV view of the tree with read_csv(f, sep="\t") and
# nothing else — every file find(1) lists, none skipped — numeric columns come out numeric, and
# no median is NaN where the CSV has a value (every CSV row counted, some checked value by value
# against the CSV rows); every TSV header name and every JSON view's key is a name of the
# vocabulary table in docs/views.md (tests/tools/views_vocabulary.py, which reads the CSVs with
# Python's csv module, not with the project's code).
. "$(dirname "$0")/mount-lib.sh"

# Debian's python3-pandas (scripts/deps.sh --test), for whichever python3 has it
py=
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null && "$p" -c 'import pandas' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || die "no python3 with pandas: run scripts/deps.sh --test (python3-pandas)"

store="$work/store"
mnt="$work/mnt"
make_history_store "$store" "$work/export"
mount_fg "$store" "$mnt"

"$py" "$KX_SOURCE_ROOT/tests/tools/views_vocabulary.py" "$mnt" "$KX_SOURCE_ROOT/docs/views.md" \
	"$LIGER_CSV" "$HISTORY_CSV" >"$work/out" 2>&1
grep -v '^ok \|^FAILED ' "$work/out" # where a check failed, and any traceback
grep '^ok \|^FAILED ' "$work/out" >"$work/verdicts"
verdicts "$work/verdicts" "vocabulary" 8
# the export is the mount's bytes: a reader of an export (rsync, a tarball) reads the same tables
check "the export's index.tsv and regressions.json are the mount's" \
	bash -c "cmp -s '$mnt/index.tsv' '$work/export/index.tsv' && cmp -s '$mnt/regressions.json' '$work/export/regressions.json'"
unmount "$mnt" "$daemon" || fail "the daemon exits 0"
finish
