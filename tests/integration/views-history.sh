#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# history.tsv (docs/views.md, docs/history.md): in every group of the bundled Liger import with its
# history CSV, on a mount and in the export. Every file is a header and rows (no '#' line: the
# rule is in history.json and docs/history.md, every line of it); the series with more than one
# observation are the ones the CSV has (counted independently by tests/tools/liger_views.py:
# the (group, implementation) pairs with a superseded run — 90); the issue's example (liger's FLCE
# forward on the A100 at 16,384 tokens: 264.12 ms in 0.2.1, 274.07 ms in 0.4.2) reads as published.
# Then a drop of generated series into the inbox: 10 results at 100 ms and 5 at 110 ms (±0.3 %)
# gives a change point at the 11th, a regression of +10 %; the mirror image an improvement; a flat
# series none — and a reader who had read history.tsv before reads the new one. /regressions.tsv
# lists them worst first (+25 %, +10 %, then the improvement), as `kindex regressions` does,
# /regressions.json the same rows with the rule, and history.json says what history.tsv says.
. "$(dirname "$0")/mount-lib.sh"

store="$work/store"
mnt="$work/mnt"
make_history_store "$store" "$work/export"
mount_fg "$store" "$mnt" -o rw

(cd "$mnt" && find benchmarks -mindepth 4 -maxdepth 4 -type d | sort) >"$work/groups"
(cd "$mnt" && find benchmarks -name history.tsv | sed 's|/history.tsv$||' | sort) >"$work/histories"
check "a history.tsv in every group ($(wc -l <"$work/histories") of $(wc -l <"$work/groups"))" cmp -s "$work/groups" "$work/histories"
"$KINDEX" --store "$store" cat benchmarks/fused_linear_cross_entropy/forward/nvidia-a100-sxm4-80gb/hidden4096-tokens16384-vocab128256-bf16/history.json |
	python3 -c 'import json, sys; print("\n".join(json.load(sys.stdin)["rule"]))' >"$work/rule"
check "history.json states the rule: the parameters of SPEC §6 ($(wc -l <"$work/rule") lines)" \
	bash -c "grep -q 'the 5 runs' '$work/rule' && grep -q 'p < 0.01' '$work/rule' && grep -q 'at least 3 %' '$work/rule' && grep -q 'up to 20 before' '$work/rule'"
check "docs/history.md quotes every line of the rule" \
	bash -c "while IFS= read -r l; do grep -qF -- \"\$l\" '$KX_SOURCE_ROOT/docs/history.md' || { echo \"# not in the docs: \$l\"; exit 1; }; done <'$work/rule'"

# the series with history, from the tree and from the CSV alone
python3 - "$mnt" "$work/histories" >"$work/series" <<'EOF'
import os, sys
mnt = sys.argv[1]
bad = series = head = 0
for g in open(sys.argv[2]).read().split():
    lines = open(os.path.join(mnt, g, "history.tsv")).read().split("\n")[:-1]
    rows = [l.split("\t") for l in lines]
    head += rows[0][:3] == ["implementation", "n", "observed_at"] and not any(l.startswith("#") for l in lines)
    n = {}
    for r in rows[1:]:
        n[r[0]] = max(n.get(r[0], 0), int(r[1]))
        bad += r[11] != ""  # the Liger series are 2-3 results: never a change point
    series += sum(1 for k in n.values() if k >= 2)
print(series, head, bad)
EOF
read -r series heads changes <"$work/series"
# (the history CSV alone: it holds every row of the newest one, which the oracle would count twice)
python3 "$KX_SOURCE_ROOT/tests/tools/liger_views.py" "$HISTORY_CSV" ranking 2>/dev/null |
	awk -F'\t' '$8 == "superseded" { print $1 "/" $2 "/" $3 "/" $4 "/" $6 }' | sort -u | wc -l >"$work/want"
check "the series with more than one result: $series, as the CSV has ($(cat "$work/want"))" \
	[ "$series" = "$(cat "$work/want")" -a "$series" = 90 ]
check "every history.tsv is its header and rows, no '#' line ($heads of $(wc -l <"$work/histories"))" [ "$heads" = "$(wc -l <"$work/histories")" ]
check "no change point in series of 2-3 results ($changes)" [ "$changes" = 0 ]
flce="$mnt/benchmarks/fused_linear_cross_entropy/forward/nvidia-a100-sxm4-80gb/hidden4096-tokens16384-vocab128256-bf16"
check "liger's FLCE forward A100 at 16,384 tokens: 264.12 ms in 0.2.1, then 274.07 ms in 0.4.2" \
	bash -c "awk -F'\t' '\$1 == \"liger\" { print \$2, \$4, \$5, \$10 }' '$flce/history.tsv' | tr '\n' ';' |
		grep -qx '1 0.2.1 264119659 superseded;2 0.4.2 274073425 passed;'"
check "history.tsv is in the group's SHA256SUMS, which verifies" \
	bash -c "grep -q '  history.tsv\$' '$flce/SHA256SUMS' && cd '$flce' && sha256sum -c --quiet SHA256SUMS"
check "the mount's bytes are the export's" cmp -s "$flce/history.tsv" "$work/export/${flce#"$mnt/"}/history.tsv"
check "history.json is in SHA256SUMS too, and the export's" \
	bash -c "grep -q '  history.json\$' '$flce/SHA256SUMS' && cmp -s '$flce/history.json' '$work/export/${flce#"$mnt/"}/history.json'"
check "/regressions.tsv of the Liger data: the header alone, no row (series of 2-3 results)" \
	bash -c "[ \"\$(cut -f1-3 '$mnt/regressions.tsv' | tr '\t\n' ' ;')\" = 'move change_pct p;' ]"
check "/regressions.json of the Liger data: the rule, its parameters, no change point" python3 - "$mnt/regressions.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["change_points"] == [] and r["parameters"]["min_move"] == 0.03 and
         any("p < 0.01" in l for l in r["rule"]) else 1)
EOF
exec 4<"$mnt/regressions.tsv"
cat "$mnt/index.tsv" >"$work/index.before" # built now: the drop's build reuses its untouched groups' rows

# generated series dropped into the inbox: a step up, a step down, none
exec 3<"$flce/history.tsv"
before=$(cat "$flce/history.tsv")
python3 - "$flce" "$work/steps.jsonl" <<'EOF' || die "cannot make the manifests"
import glob, json, os, sys
sys.path.insert(0, os.path.join(os.environ["KX_SOURCE_ROOT"], "tests", "integration"))
import kxjcs
base = json.load(open(glob.glob(os.path.join(sys.argv[1], "[0-9]*-liger-*", "manifest.json"))[0]))
out = open(sys.argv[2], "w")
# the noise around each level; the 10th result sits on the first 9's median (100 ms), so the step
# shows at the 11th (one a hair above it would join the 5 that confirm the step, and the change
# point would be placed at the 10th: all 5 beyond the median)
wiggle = [0.000, 0.002, -0.003, 0.001, -0.001, 0.003, -0.002, 0.0005, -0.0005, 0.000]
for name, step in (("steptest", 1.10), ("gaintest", 0.90), ("flattest", 1.00), ("bigstep", 1.25)):
    for i in range(15):
        ns = round(100e6 * (step if i >= 10 else 1.0) * (1 + wiggle[i % 10]))
        m = kxjcs.series_run(base, name, i, "history-test/%s/%d" % (name, i), "2025-01-%02dT00:00:00.000Z" % (i + 1), ns)
        out.write(json.dumps(m, separators=(",", ":")) + "\n")
EOF
cp "$work/steps.jsonl" "$mnt/inbox/steps.jsonl" || fail "the drop is accepted (cp exits $?)"
check "the drop's receipt says accepted: 60 runs" grep -q '^accepted .*60 runs' "$mnt/inbox/.accepted/steps.jsonl"
rows() { awk -F'\t' -v impl="$1" '$1 == impl && $12 != "" { print $2, $12, $13 }' "$flce/history.tsv"; }
got=$(rows steptest)
check "a step of +10 % after 10 results: a regression at the 11th, change_pct 9.x-10.x ($got)" \
	bash -c "[[ '$got' =~ ^11\ regression\ (9\.[0-9]{3}|10\.[0-9]{2})$ ]]"
got=$(rows gaintest)
check "a step of -10 %: an improvement at the 11th ($got)" bash -c "[[ '$got' =~ ^11\ improvement\ -(9\.[0-9]{3}|10\.[0-9]{2})$ ]]"
check "a flat series: no change point" [ -z "$(rows flattest)" ]
check "each series in time order, 15 results" \
	bash -c "[ \"\$(awk -F'\t' '\$1 == \"steptest\" { print \$2 }' '$flce/history.tsv' | tr '\n' ' ')\" = '1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 ' ]"
old=$(cat <&3)
exec 3<&-
# history.svg: the change points drawn, with their moves
check "history.svg marks the change points: +25 %, +10 % and the -10 % improvement" \
	bash -c "grep -q '>regression +25.0 %<' '$flce/history.svg' && grep -q '>regression +10.0 %<' '$flce/history.svg' &&
		grep -q '>improvement -10.0 %<' '$flce/history.svg' && [ \"\$(grep -c 'stroke-dasharray=\"6 4\"' '$flce/history.svg')\" = 3 ]"
# history.json: the same series and change points as history.tsv
check "history.json: the series of history.tsv, its change points where history.tsv has them" python3 - "$flce" <<'EOF'
import json, sys
d = sys.argv[1]
h = json.load(open(d + "/history.json"))
tsv = [l.split("\t") for l in open(d + "/history.tsv").read().split("\n")[:-1]][1:]
rows = [(s["implementation"], r["n"], r["observed_at"], r["version"] or "", r["status"], r["segment"], r["dir"])
        for s in h["series"] for r in s["runs"]]
want = [(t[0], int(t[1]), t[2], t[3], t[9], int(t[10]), t[16]) for t in tsv]
changes = [(s["implementation"], c["n"], c["move"], round(c["change_pct"], 2)) for s in h["series"] for c in s["change_points"]]
want_changes = [(t[0], int(t[1]), t[11], round(float(t[12]), 2)) for t in tsv if t[11] != ""]
ok = (rows == want and changes == want_changes and h["parameters"]["confirm"] == 5 and h["parameters"]["alpha"] == 0.01
      and any("Mann-Whitney" in l for l in h["rule"]))
sys.exit(0 if ok and len(rows) == 64 and len(changes) == 3 else 1)
EOF
# /regressions.tsv: every open change point, worst first
awk -F'\t' 'NR > 1 && $13 == "forward" { print $1, $2, $7, $11 }' "$mnt/regressions.tsv" >"$work/regressions"
check "/regressions.tsv: bigstep +25 %, steptest +10 %, then gaintest's improvement ($(tr '\n' ';' <"$work/regressions"))" \
	bash -c "tr '\n' ';' <'$work/regressions' | grep -Eqx 'regression 2[45]\.[0-9]{2} bigstep 5;regression (9\.[0-9]{3}|10\.[0-9]{2}) steptest 5;improvement -(9\.[0-9]{3}|10\.[0-9]{2}) gaintest 5;'"
check "/regressions.tsv names each one's group" \
	bash -c "awk -F'\t' 'NR > 1 { print \$16 }' '$mnt/regressions.tsv' | sort -u | grep -qx '${flce#"$mnt/"}'"
check "/regressions.json: the rows of /regressions.tsv, in its order, by the same names, at full precision" \
	python3 - "$mnt/regressions.tsv" "$mnt/regressions.json" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().split("\n")[:-1]
head, rows = lines[0].split("\t"), [l.split("\t") for l in lines[1:]]
j = json.load(open(sys.argv[2]))
ok = len(j["change_points"]) == len(rows) == 3 and any("Mann-Whitney" in l for l in j["rule"])
for r, o in zip(rows, j["change_points"]):
    ok = ok and sorted(o) == sorted(head)
    for k, v in zip(head, r):
        w = o[k]
        if isinstance(w, (int, float)):
            ok = ok and abs(w - float(v)) <= 5e-4 * abs(w)
        else:
            ok = ok and (w or "") == v
sys.exit(0 if ok else 1)
EOF
old_regressions=$(cat <&4)
exec 4<&-
check "a reader who had /regressions.tsv open reads the old version whole" \
	bash -c "[ \"\$(wc -l <<<\"\$1\")\" = 1 ]" - "$old_regressions"
check "/regressions.tsv's stat size is its bytes'" [ "$(stat -c %s "$mnt/regressions.tsv")" = "$(wc -c <"$mnt/regressions.tsv")" ]
regressions=$(cat "$mnt/regressions.tsv")
cat "$mnt/index.tsv" >"$work/index.after"
check "a reader who had history.tsv open reads the old version whole" [ "$old" = "$before" ]
check "stat's size is the new bytes'" [ "$(stat -c %s "$flce/history.tsv")" = "$(wc -c <"$flce/history.tsv")" ]
after=$(cat "$flce/history.tsv")
unmount "$mnt" "$daemon" || fail "the daemon exits 0"
check "kindex cat from the store gives what the mount gave" \
	bash -c "[ \"\$('$KINDEX' --store '$store' cat '${flce#"$mnt/"}/history.tsv')\" = \"\$1\" ]" - "$after"
# the same without a mount: one series by a run, the whole file by its group
id=$(printf '%s\n' "$after" | awk -F'\t' '$1 == "steptest" && $2 == 15 { sub(/.*-/, "", $17); print $17 }')
"$KINDEX" --store "$store" history "$id" >"$work/series.out"
check "kindex history $id: the header and steptest's 15 results, the regression among them" \
	bash -c "[ \"\$(wc -l <'$work/series.out')\" = 16 ] && [ \"\$(tail -n +2 '$work/series.out' | cut -f1 | sort -u)\" = steptest ] &&
		head -1 '$work/series.out' | grep -q '^implementation' && grep -q \$'\tregression\t' '$work/series.out'"
check "kindex history GROUP prints its history.tsv" \
	bash -c "[ \"\$('$KINDEX' --store '$store' history '${flce#"$mnt/"}')\" = \"\$1\" ]" - "$after"
"$KINDEX" --store "$store" cat index.tsv >"$work/index.fresh"
check "/index.tsv after the drop: 60 more rows, the bytes a build from nothing gives" \
	bash -c "cmp -s '$work/index.after' '$work/index.fresh' &&
		[ \$((\$(wc -l <'$work/index.after') - \$(wc -l <'$work/index.before'))) = 60 ]"
"$KINDEX" --store "$store" regressions >"$work/regressions.out"
check "kindex regressions prints what the mount's /regressions.tsv held" bash -c "[ \"\$(cat '$work/regressions.out')\" = \"\$1\" ]" - "$regressions"
st=0; "$KINDEX" --store "$store" regressions --check >/dev/null || st=$?
check "kindex regressions --check exits 1 while a regression is open ($st)" [ "$st" = 1 ]
st=0; "$KINDEX" --store "$store" regressions --bogus >/dev/null 2>"$work/err" || st=$?
check "kindex regressions --bogus: a usage error naming it ($st)" \
	bash -c "[ $st = 2 ] && grep -qF \"regressions: unknown option '--bogus'\" '$work/err'"
finish
