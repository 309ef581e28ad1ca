#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --selftest runs the whole host pipeline on the CPU — protocol, sampling, statistics,
# correctness, environment, manifest — and its manifests are honest: the environment is this
# CPU, the protocol is the CPU family, every digest re-derives, the samples file hashes to
# samples.sha256. Output goes to a file, an inbox or a spool, atomically.
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"

fast=(--warmup 0.02 --min-time 0.05 --timeout 1)

mkdir "$tmp/samples"
expect 0 "$KINDEX_BENCH" --selftest -o "$tmp/selftest.jsonl" --samples-dir "$tmp/samples" "${fast[@]}"
[[ $(wc -l <"$tmp/selftest.jsonl") == 2 ]] || die "two implementations, two lines expected"
grep -q "kindex-cpu-online: median .*correctness passed" "$tmp/stderr" || die "no summary: $(cat "$tmp/stderr")"
export KX_PRODUCT=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n1)
check_manifests "$tmp/selftest.jsonl" \
	"run['status'] == 'passed' and run['correctness']['status'] == 'passed'" \
	"run['benchmark'] == 'cross_entropy/forward'" \
	"m['workload']['spec'] == {'parameters': {'batch': 1, 'seq': 256, 'vocab': 4096}}" \
	"m['protocol']['spec']['comparability']['family'] == 'kindex_bench_cpu'" \
	"m['protocol']['spec']['measurement']['timer'] == 'clock_monotonic'" \
	"m['implementation']['spec']['name'] in ('kindex-cpu-online', 'kindex-cpu-two-pass')" \
	"m['implementation']['spec']['provider'] == 'kindex-bench'" \
	"m['environment']['spec']['hardware']['architecture'] == '$(uname -m)'" \
	"__import__('os').environ['KX_PRODUCT'].strip() in ('', m['environment']['spec']['hardware']['product'])" \
	"run['samples']['count'] >= 10" \
	"run['timing']['latencyNs']['p20'] <= run['timing']['latencyNs']['median'] <= run['timing']['latencyNs']['p80']" \
	"any(e['metric'] == 'memory' and e['statistic'] == 'peak' and e['unit'] == 'B' for e in run['measurements'])"

# the samples files reproduce samples.sha256 and samples.count
n=0
for f in "$tmp"/samples/*.samples; do
	sum=$(sha256sum "$f" | cut -d' ' -f1)
	grep -q "\"sha256\":\"$sum\"" "$tmp/selftest.jsonl" || die "$f does not hash to a samples.sha256"
	grep -q "\"count\":$(wc -l <"$f")," "$tmp/selftest.jsonl" || die "$f: count differs"
	n=$((n + 1))
done
[[ $n == 2 ]] || die "expected two samples files, found $n"

# a parameter changes the workload; one implementation to stdout is one pretty manifest
expect 0 "$KINDEX_BENCH" --selftest --impl kindex-cpu-two-pass --param vocab=1000 -q "${fast[@]}"
check_manifests "$tmp/stdout" "m['workload']['spec']['parameters']['vocab'] == 1000" \
	"m['implementation']['spec']['name'] == 'kindex-cpu-two-pass'"
head -c2 "$tmp/stdout" | grep -q '^{$' || die "a single manifest is written pretty"

# inbox: DIR/.NAME.tmp renamed to DIR/NAME; spool: tmp/ then new/
mkdir "$tmp/inbox" "$tmp/spool"
expect 0 "$KINDEX_BENCH" --selftest --inbox "$tmp/inbox" "${fast[@]}"
[[ $(find "$tmp/inbox" -type f -name 'cross_entropy-forward-kindex-cpu-*.json' | wc -l) == 2 ]] ||
	die "inbox: $(ls -a "$tmp/inbox")"
[[ -z $(find "$tmp/inbox" -name '.*' -type f) ]] || die "inbox: a temporary file was left"
grep -q "^wrote $tmp/inbox/" "$tmp/stderr" || die "inbox: no 'wrote' line"
for f in "$tmp"/inbox/*.json; do check_manifests "$f"; done
expect 0 "$KINDEX_BENCH" --selftest --spool "$tmp/spool" --impl kindex-cpu-online -q "${fast[@]}"
[[ $(ls "$tmp/spool/new" | wc -l) == 1 && -z $(ls "$tmp/spool/tmp") ]] || die "spool: $(ls -R "$tmp/spool")"

# do_bench over the CPU timer is its own protocol document
expect 0 "$KINDEX_BENCH" --selftest --impl kindex-cpu-online --protocol do_bench -q -o "$tmp/db.json"
check_manifests "$tmp/db.json" "m['protocol']['spec']['comparability']['family'] == 'triton_do_bench'" \
	"run['samples']['stoppedBy'] == 'do-bench-repeat'" \
	"run['sampling']['doBench']['repeatCalls'] == run['samples']['count']"

# failures: an output that cannot be created, an inbox that is not there
expect 4 "$KINDEX_BENCH" --selftest -o "$tmp/missing/out.json" -q "${fast[@]}"
grep -q "^kindex-bench: cannot create '$tmp/missing/out.json.tmp" "$tmp/stderr" || die "$(cat "$tmp/stderr")"
expect 4 "$KINDEX_BENCH" --selftest --inbox "$tmp/nope" -q "${fast[@]}"
grep -q "^kindex-bench: cannot use '$tmp/nope' as an inbox" "$tmp/stderr" || die "$(cat "$tmp/stderr")"
echo "ok - selftest manifests, samples files, inbox, spool, do_bench"
