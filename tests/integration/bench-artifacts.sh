#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Artifacts (SPEC §9): every timed run announces samples.tsv, and --attach FILE adds a file to
# every run; their bytes land in artifacts/ beside the manifests (-o FILE, an inbox, a spool),
# named <sha256 hex>-<name>, before the manifest that announces them. What is checked is what a
# user checks: sha256sum and stat of the files against the manifest's spec.artifacts.
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"

command -v python3 >/dev/null || { echo "# python3 not found: cannot read the manifests"; exit 77; }

fast=(--warmup 0 --min-time 0 --min-samples 3 --timeout 0.2) # cheap: the bytes matter, not the figures
# blanks around the numbers and an empty line, as other harnesses write them
printf ' 25000000\n25001000 \r\n\n25002000\n\t25003000\n25004000\n' >"$tmp/samples.txt"
printf '%s\n' 25000000 25001000 25002000 25003000 25004000 >"$tmp/normalized.txt"
printf '__global__ void k(float *x) { x[threadIdx.x] = 0; }\n' >"$tmp/kernel.cu"
printf 'ncu report bytes\0\1\2' >"$tmp/prof.ncu-rep"
rec=(--record fused_linear_cross_entropy --impl pytorch --environment cpu --samples "$tmp/samples.txt")

# artifacts_of MANIFEST-FILE: "name<TAB>digest<TAB>size<TAB>mediaType" for each artifact of each run
artifacts_of() {
	python3 - "$1" <<'PY'
import json, sys
text = open(sys.argv[1], encoding='utf-8').read()
try:
    ms = [json.loads(text)]
except json.JSONDecodeError:
    ms = [json.loads(l) for l in text.split('\n') if l]
for m in ms:
    for a in m['run']['spec'].get('artifacts', []):
        assert sorted(a) == ['digest', 'mediaType', 'name', 'size'], a
        print(f"{a['name']}\t{a['digest']}\t{a['size']}\t{a['mediaType']}")
PY
}

# check_delivered MANIFEST-FILE DIR: every announced artifact is DIR/<hex>-<name>, with the
# announced SHA-256 and size
check_delivered() {
	local name digest size type hex f n=0
	while IFS=$'\t' read -r name digest size type; do
		hex=${digest#sha256:}
		f=$2/$hex-$name
		[[ -f $f ]] || die "$name: $f not written ($(ls -a "$2" 2>&1))"
		[[ $(sha256sum "$f" | cut -d' ' -f1) == "$hex" ]] || die "$f does not hash to $digest"
		[[ $(stat -c %s "$f") == "$size" ]] || die "$f is not $size bytes"
		n=$((n + 1))
	done < <(artifacts_of "$1")
	((n > 0)) || die "$1 announces no artifact"
}

# ---- --record -o FILE --attach: OUT/artifacts/ ------------------------------------------------
mkdir "$tmp/out"
expect 0 "$KINDEX_BENCH" "${rec[@]}" -o "$tmp/out/m.json" --attach "$tmp/kernel.cu" \
	--attach "$tmp/prof.ncu-rep"
check_manifests "$tmp/out/m.json" "[a['name'] for a in run['artifacts']] == ['samples.tsv', 'kernel.cu', 'prof.ncu-rep']"
artifacts_of "$tmp/out/m.json" >"$tmp/list"
[[ $(cut -f1,4 "$tmp/list") == $'samples.tsv\ttext/tab-separated-values\nkernel.cu\ttext/x-cuda\nprof.ncu-rep\tapplication/octet-stream' ]] ||
	die "names and media types: $(cat "$tmp/list")"
check_delivered "$tmp/out/m.json" "$tmp/out/artifacts"
[[ $(ls -A "$tmp/out/artifacts" | wc -l) == 3 ]] || die "artifacts/ holds more: $(ls -A "$tmp/out/artifacts")"
ls -A "$tmp/out" | grep -q tmp && die "a temporary file was left: $(ls -A "$tmp/out")"

# samples.tsv is the --samples input as decimal lines, and hashes to samples.sha256
sum=$(sha256sum "$tmp/normalized.txt" | cut -d' ' -f1)
cmp -s "$tmp/normalized.txt" "$tmp/out/artifacts/$sum-samples.tsv" ||
	die "samples.tsv is not the samples, one decimal per line: $(ls "$tmp/out/artifacts")"
check_manifests "$tmp/out/m.json" "run['samples']['sha256'] == '$sum'" \
	"run['artifacts'][0]['digest'] == 'sha256:' + run['samples']['sha256']"
cmp -s "$tmp/kernel.cu" "$tmp/out/artifacts/$(sha256sum "$tmp/kernel.cu" | cut -d' ' -f1)-kernel.cu" ||
	die "kernel.cu is not copied byte for byte"

# the bytes are written before the manifest that announces them
python3 - "$tmp/out" <<'PY' || die "an artifact was written after its manifest"
import os, sys
d = sys.argv[1]
m = os.stat(os.path.join(d, 'm.json')).st_mtime_ns
assert all(os.stat(os.path.join(d, 'artifacts', f)).st_mtime_ns <= m for f in os.listdir(os.path.join(d, 'artifacts')))
PY

# a failed run is not timed: it announces what was attached, no samples.tsv
printf '{"status": "failed", "message": "loss differs"}\n' >"$tmp/bad.json"
expect 1 "$KINDEX_BENCH" "${rec[@]}" --correctness "$tmp/bad.json" -o "$tmp/out/failed.json" --attach "$tmp/kernel.cu"
check_manifests "$tmp/out/failed.json" "[a['name'] for a in run['artifacts']] == ['kernel.cu']"

# ---- --selftest: two runs, each with its samples, one copy of the attached file ---------------
mkdir "$tmp/self"
expect 0 "$KINDEX_BENCH" --selftest -q -o "$tmp/self/s.jsonl" --attach "$tmp/kernel.cu" "${fast[@]}"
check_manifests "$tmp/self/s.jsonl" "[a['name'] for a in run['artifacts']] == ['samples.tsv', 'kernel.cu']"
check_delivered "$tmp/self/s.jsonl" "$tmp/self/artifacts"
[[ $(ls "$tmp/self/artifacts" | wc -l) == 3 ]] || die "two samples.tsv and one kernel.cu: $(ls "$tmp/self/artifacts")"

# ---- --spool: SPOOL/tmp/ then SPOOL/artifacts/, nothing left in tmp/ --------------------------
mkdir "$tmp/spool"
expect 0 "$KINDEX_BENCH" --selftest --impl kindex-cpu-online -q --spool "$tmp/spool" \
	--attach "$tmp/kernel.cu" "${fast[@]}"
[[ $(ls "$tmp/spool/new" | wc -l) == 1 ]] || die "spool: $(ls -R "$tmp/spool")"
[[ -z $(ls -A "$tmp/spool/tmp") ]] || die "spool: tmp/ is not empty: $(ls -A "$tmp/spool/tmp")"
check_delivered "$tmp/spool/new"/*.json "$tmp/spool/artifacts"
[[ $(ls -A "$tmp/spool/artifacts" | wc -l) == 2 ]] || die "spool: $(ls -A "$tmp/spool/artifacts")"

# ---- --inbox: DIR/artifacts/, no dot file left ------------------------------------------------
mkdir "$tmp/inbox"
expect 0 "$KINDEX_BENCH" "${rec[@]}" -q --inbox "$tmp/inbox" --attach "$tmp/kernel.cu"
check_delivered "$tmp/inbox"/*.json "$tmp/inbox/artifacts"
[[ -z $(find "$tmp/inbox" -name '.*' -type f) ]] || die "inbox: a temporary file was left"

# ---- standard output: announced only, said once; --artifacts-dir gives them a place ------------
expect 0 "$KINDEX_BENCH" --selftest -q --attach "$tmp/kernel.cu" "${fast[@]}"
[[ $(grep -c "^kindex-bench: artifacts announced but not written (no --artifacts-dir with standard output)" \
	"$tmp/stderr") == 1 ]] || die "the note is not said once: $(cat "$tmp/stderr")"
check_manifests "$tmp/stdout" "[a['name'] for a in run['artifacts']] == ['samples.tsv', 'kernel.cu']"
expect 0 "$KINDEX_BENCH" "${rec[@]}" -q --attach "$tmp/kernel.cu" --artifacts-dir "$tmp/elsewhere"
cp "$tmp/stdout" "$tmp/stdout.json"
check_delivered "$tmp/stdout.json" "$tmp/elsewhere"
grep -q "announced but not written" "$tmp/stderr" && die "said although written: $(cat "$tmp/stderr")"
# and with -o it overrides artifacts/ beside FILE
expect 0 "$KINDEX_BENCH" "${rec[@]}" -o "$tmp/out/o.json" --artifacts-dir "$tmp/over"
check_delivered "$tmp/out/o.json" "$tmp/over"

# ---- usage errors: each names the file and the rule, exit status 2, nothing written -----------
mkdir "$tmp/err" "$tmp/err/sub"
cp "$tmp/kernel.cu" "$tmp/err/sub/kernel.cu"
printf '1\n' >"$tmp/err/samples.tsv"
printf 'x\n' >"$tmp/err/.hidden"
expect 2 "$KINDEX_BENCH" "${rec[@]}" -o "$tmp/err/m.json" --attach "$tmp/err/missing.cu"
grep -q "^kindex-bench: cannot attach '$tmp/err/missing.cu': cannot read it: No such file" "$tmp/stderr" ||
	die "missing file: $(cat "$tmp/stderr")"
expect 2 "$KINDEX_BENCH" "${rec[@]}" -o "$tmp/err/m.json" --attach "$tmp/err/sub"
grep -q "^kindex-bench: cannot attach '$tmp/err/sub': not a regular file (a directory)" "$tmp/stderr" ||
	die "directory: $(cat "$tmp/stderr")"
expect 2 "$KINDEX_BENCH" "${rec[@]}" -o "$tmp/err/m.json" --attach "$tmp/kernel.cu" --attach "$tmp/err/sub/kernel.cu"
grep -q "^kindex-bench: cannot attach '$tmp/err/sub/kernel.cu': two artifacts of a run cannot share a name, and '$tmp/kernel.cu' is attached already as 'kernel.cu'" \
	"$tmp/stderr" || die "duplicate: $(cat "$tmp/stderr")"
expect 2 "$KINDEX_BENCH" "${rec[@]}" -o "$tmp/err/m.json" --attach "$tmp/err/samples.tsv"
grep -q "^kindex-bench: cannot attach '$tmp/err/samples.tsv': two artifacts of a run cannot share a name, and 'samples.tsv' is the samples" \
	"$tmp/stderr" || die "samples.tsv: $(cat "$tmp/stderr")"
expect 2 "$KINDEX_BENCH" "${rec[@]}" -o "$tmp/err/m.json" --attach "$tmp/err/.hidden"
grep -q "^kindex-bench: cannot attach '$tmp/err/.hidden': .* '.hidden' starts with '.'" "$tmp/stderr" ||
	die "hidden name: $(cat "$tmp/stderr")"
expect 2 "$KINDEX_BENCH" "${rec[@]}" --spool "$tmp/spool" --artifacts-dir "$tmp/x"
grep -q "^kindex-bench: --artifacts-dir goes with -o or standard output" "$tmp/stderr" || die "$(cat "$tmp/stderr")"
[[ ! -e $tmp/err/m.json && ! -e $tmp/err/artifacts ]] || die "something was written: $(ls -A "$tmp/err")"
echo "ok - artifacts: samples.tsv and --attach, delivered beside -o, the spool, the inbox, --artifacts-dir"
