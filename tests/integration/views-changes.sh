#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# changes.tsv (docs/views.md, "changes.tsv — steps"; SPEC §6, issue 44): every step between
# consecutive runs of an implementation in a group, on a mount of both bundled Liger CSVs. Every
# row of /changes.tsv and of each group's changes.tsv is the one tests/tools/liger_views.py
# computes from the CSVs alone (medians, change %, move, separated, versions, dates, intervals;
# the rows in tree order, names in numeric order), and the count is the CSV's. The issue's example
# reads as published: kto_loss forward on the H100, liger 0.5.3 -> 0.5.4, 10.1 ms -> 4.0 ms
# (-60 %). The groups' files concatenate to the root's rows; pandas reads them with its defaults,
# numbers as numbers; kindex cat and the export give the mount's bytes. Then a drop into the inbox
# adds a run to that series: /changes.tsv has one row more (the rest unchanged, so the build that
# copies untouched groups' rows is right), the group's changes.tsv too, stat says the new size and
# a reader who had the file open reads the old version whole.
. "$(dirname "$0")/mount-lib.sh"

store="$work/store"
mnt="$work/mnt"
oracle="$KX_SOURCE_ROOT/tests/tools/liger_views.py"
make_history_store "$store" "$work/export"
mount_fg "$store" "$mnt" -o rw

check "/changes.tsv is at the root, beside regressions.tsv" bash -c "ls '$mnt' | grep -qx changes.tsv"

# every row against the oracle, the root file and each group's; the count is the CSV's
python3 "$oracle" "$LIGER_CSV" "$HISTORY_CSV" check "$mnt" changes >"$work/check" 2>&1
check "every row of /changes.tsv and of each group's changes.tsv is the oracle's ($(tail -1 "$work/check"))" \
	grep -q '^liger-views: OK ' "$work/check"
grep -v '^liger-views: ' "$work/check" | head -20
python3 "$oracle" "$LIGER_CSV" "$HISTORY_CSV" changes 2>/dev/null | tail -n +2 | wc -l >"$work/want"
# (the history CSV holds every row of the newest: its superseded runs are the CSV's steps)
python3 "$oracle" "$HISTORY_CSV" ranking 2>/dev/null | awk -F'\t' '$8 == "superseded"' | wc -l >"$work/superseded"
rows=$(($(wc -l <"$mnt/changes.tsv") - 1))
check "$rows steps: the oracle's $(cat "$work/want"), one per superseded run of the CSV ($(cat "$work/superseded"))" \
	[ "$rows" = "$(cat "$work/want")" -a "$rows" = "$(cat "$work/superseded")" -a "$rows" -gt 0 ]

# the issue's example: kto_loss forward, H100, liger 0.5.3 -> 0.5.4
kto=benchmarks/kto_loss/forward/nvidia-h100-80gb-hbm3/batch2-beta0.1-biastrue-hidden1024-ignore_index42-seq512-vocab128256-bf16
got=$(awk -F'\t' -v g="$kto" '$23 == g && $6 == "liger" && $14 == "0.5.4" { print $7, $8, $9, $10, $11, $12, $13, $14 }' "$mnt/changes.tsv")
check "kto_loss liger H100 forward at batch 2: 10.1 ms -> 4.0 ms, -60.49 %, an improvement, bands apart ($got)" \
	[ "$got" = "10111264 3995168 ns -60.49 improvement yes 0.5.3 0.5.4" ]
check "every kto_loss liger H100 forward workload moves about -60 % from 0.5.3 to 0.5.4" \
	bash -c "[ \"\$(awk -F'\t' '\$1 == \"kto_loss\" && \$2 == \"forward\" && \$4 == \"nvidia-h100-80gb-hbm3\" && \$6 == \"liger\" &&
		\$14 == \"0.5.4\" && \$10 < -60 && \$10 > -62 && \$11 == \"improvement\"' '$mnt/changes.tsv' | wc -l)\" = 5 ]"

# the groups' files: the same header, and together the root's rows
(cd "$mnt" && find benchmarks -mindepth 5 -maxdepth 5 -name changes.tsv | sort) >"$work/files"
(cd "$mnt" && find benchmarks -mindepth 4 -maxdepth 4 -type d | sort) >"$work/groups"
check "a changes.tsv in every group ($(wc -l <"$work/files") of $(wc -l <"$work/groups"))" \
	[ "$(wc -l <"$work/files")" = "$(wc -l <"$work/groups")" ]
head -1 "$mnt/changes.tsv" >"$work/header"
check "every group's changes.tsv has the root's header" \
	bash -c "cd '$mnt' && while read -r f; do head -1 \"\$f\" | cmp -s - '$work/header' || exit 1; done <'$work/files'"
(cd "$mnt" && while read -r f; do tail -n +2 "$f"; done <"$work/files") | sort >"$work/concat"
tail -n +2 "$mnt/changes.tsv" | sort >"$work/root"
check "the groups' rows concatenated are the root's rows ($(wc -l <"$work/concat") lines)" cmp -s "$work/concat" "$work/root"
check "a group's changes.tsv is in its SHA256SUMS, which verifies" \
	bash -c "grep -q '  changes.tsv\$' '$mnt/$kto/SHA256SUMS' && cd '$mnt/$kto' && sha256sum -c --quiet SHA256SUMS"

# what tools read: pandas with its defaults, stat, the export, kindex cat
py=python3
python3 -c 'import pandas' 2>/dev/null || py=/usr/bin/python3
"$py" - "$mnt/changes.tsv" "$mnt/$kto/changes.tsv" >"$work/pandas" 2>&1 <<'EOF'
import sys
import pandas
numeric = ["before_median", "after_median", "change_pct", "before_p20", "before_p80", "after_p20", "after_p80"]
for f in sys.argv[1:]:
    d = pandas.read_csv(f, sep="\t")
    lines = open(f).read().split("\n")[:-1]
    bad = [c for c in numeric if not pandas.api.types.is_numeric_dtype(d[c])]
    print(("ok" if not bad else "FAILED") + " %s: %d rows, numeric %s" % (f.split("/")[-1], len(d), bad or "all"))
    # no NaN where the file has a value: every empty field, and only those, is NaN
    empty = sum(1 for l in lines[1:] for x in l.split("\t") if x == "")
    nan = int(d.isna().sum().sum())
    print(("ok" if len(d) == len(lines) - 1 and nan == empty else "FAILED") +
          " %s: %d NaN where %d fields are empty" % (f.split("/")[-1], nan, empty))
    s = d["separated"].dropna()
    print(("ok" if set(s) <= {"yes", "no"} and len(s) == len(d) else "FAILED") +
          " %s: separated is yes or no on every row (the CSV has every p20 and p80)" % f.split("/")[-1])
EOF
verdicts "$work/pandas" "pandas.read_csv(f, sep='\\t')" 6
check "/changes.tsv's stat size is its bytes'" [ "$(stat -c %s "$mnt/changes.tsv")" = "$(wc -c <"$mnt/changes.tsv")" ]
check "a group's changes.tsv's stat size is its bytes'" [ "$(stat -c %s "$mnt/$kto/changes.tsv")" = "$(wc -c <"$mnt/$kto/changes.tsv")" ]
check "/changes.tsv's mtime is the store's last change, as regressions.tsv's" \
	[ "$(stat -c %Y.%y "$mnt/changes.tsv")" = "$(stat -c %Y.%y "$mnt/regressions.tsv")" ]
check "the export writes /changes.tsv and the groups' files, byte for byte" \
	bash -c "cmp -s '$mnt/changes.tsv' '$work/export/changes.tsv' && cmp -s '$mnt/$kto/changes.tsv' '$work/export/$kto/changes.tsv'"
check "kindex cat changes.tsv prints the mount's bytes" \
	bash -c "'$KINDEX' --store '$store' cat /changes.tsv | cmp -s - '$mnt/changes.tsv'"
cp "$mnt/changes.tsv" "$work/changes.before"
cp "$mnt/$kto/changes.tsv" "$work/group.before"
size_before=$(stat -c %s "$mnt/changes.tsv")

# a drop: liger 0.6.0 at batch 2, 5.0 ms, after 0.5.4's 4.0 ms — a step of +25.15 %
exec 3<"$mnt/changes.tsv"
python3 - "$mnt/$kto" "$work/drop.jsonl" <<'EOF' || die "cannot make the manifest"
import glob, json, os, sys
sys.path.insert(0, os.path.join(os.environ["KX_SOURCE_ROOT"], "tests", "integration"))
import kxjcs
m = json.load(open(glob.glob(os.path.join(sys.argv[1], "[0-9]*-liger-*", "manifest.json"))[0]))
m["implementation"]["spec"]["version"] = "0.6.0"
m["implementation"]["metadata"]["name"] = "liger-impl-liger-0.6.0"
spec = m["run"]["spec"]
spec["implementationDigest"] = kxjcs.digest(m["implementation"])
spec["observedAt"] = "2026-01-05T00:00:00.000Z"
spec["sourceNative"]["externalId"] += "/views-changes"
spec["timing"]["latencyNs"]["median"] = 5000000
for x in spec["measurements"]:
    x["value"] = {"p20": 4990000, "p80": 5010000}[x["statistic"]]
spec["sourceNative"]["metrics"] = {"ms_20": 4.99, "ms_50": 5.0, "ms_80": 5.01}
open(sys.argv[2], "w").write(json.dumps(m, separators=(",", ":")) + "\n")
EOF
cp "$work/drop.jsonl" "$mnt/inbox/drop.jsonl" || fail "the drop is accepted (cp exits $?)"
check "the drop's receipt says accepted: 1 run" grep -q '^accepted .*1 run' "$mnt/inbox/.accepted/drop.jsonl"
new=$(awk -F'\t' -v g="$kto" '$23 == g && $16 == "2026-01-05T00:00:00.000Z" { print $6, $7, $8, $10, $11, $12, $13, $14, $15, $16 }' "$mnt/changes.tsv")
check "/changes.tsv has the new step: liger 3995168 -> 5000000 ns, +25.15 %, a regression, apart ($new)" \
	[ "$new" = "liger 3995168 5000000 25.15 regression yes 0.5.4 0.6.0 2025-03-03T08:22:44.000Z 2026-01-05T00:00:00.000Z" ]
grep -v $'\t2026-01-05T00:00:00.000Z\t' "$mnt/changes.tsv" >"$work/changes.rest"
check "one row more, the others unchanged and in their places" \
	bash -c "[ \$(wc -l <'$mnt/changes.tsv') = \$((\$(wc -l <'$work/changes.before') + 1)) ] && cmp -s '$work/changes.rest' '$work/changes.before'"
check "the group's changes.tsv has it too, last of liger's rows" \
	bash -c "diff <(grep -v $'\t2026-01-05T00:00:00.000Z\t' '$mnt/$kto/changes.tsv') '$work/group.before' >/dev/null &&
		[ \"\$(awk -F'\t' '\$6 == \"liger\"' '$mnt/$kto/changes.tsv' | tail -1 | cut -f14)\" = 0.6.0 ]"
python3 "$oracle" "$LIGER_CSV" "$HISTORY_CSV" changes 2>/dev/null >"$work/oracle.tsv"
check "the row is where tree order puts it: after the same group's liger steps" \
	bash -c "[ \"\$(grep -n $'\t2026-01-05T00:00:00.000Z\t' '$mnt/changes.tsv' | cut -d: -f1)\" = \$((\$(awk -F'\t' -v g='$kto' '\$23 == g && \$6 == \"liger\" { n = NR } END { print n }' '$work/oracle.tsv') + 1)) ]"
check "stat's size is the new bytes', larger than before" \
	bash -c "[ \$(stat -c %s '$mnt/changes.tsv') = \$(wc -c <'$mnt/changes.tsv') ] && [ \$(stat -c %s '$mnt/changes.tsv') -gt $size_before ]"
old=$(cat <&3)
exec 3<&-
check "a reader who had /changes.tsv open reads the old version whole" [ "$old" = "$(cat "$work/changes.before")" ]
cp "$mnt/changes.tsv" "$work/changes.after"
unmount "$mnt" "$daemon" || fail "the daemon exits 0"
check "a build from nothing (kindex cat) gives the bytes the mount's build after the drop gave" \
	bash -c "'$KINDEX' --store '$store' cat changes.tsv | cmp -s - '$work/changes.after'"
finish
