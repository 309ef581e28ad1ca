#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# sweep.tsv (every gpu directory) and gpus.tsv (every pass directory) of the bundled Liger import,
# on a mount (docs/views.md): each file's stat size is the bytes read, two reads give the same
# bytes, the export's files are the mount's, the mtime is its directory's; every value is what
# tests/tools/liger_views.py computes from the CSV on its own (the newest CSV and the history CSV,
# whose implementations have several runs each); a known sweep checked by hand (FLCE
# forward on the A100, over tokens: 4096 < 8192 < 16384 < 32768, not in byte order); and a run
# dropped into the inbox changes sweep.tsv and gpus.tsv for a reader who read them before, while a
# reader who has the old one open reads it whole.
. "$(dirname "$0")/mount-lib.sh"

store="$work/store"
export_dir="$work/export"
mnt="$work/mnt"
views="$KX_SOURCE_ROOT/tests/tools/liger_views.py"
make_liger_store "$store"
"$KINDEX" -q --store "$store" export "$export_dir" || die "kindex export failed"
mount_fg "$store" "$mnt" -o rw

(cd "$mnt" && find benchmarks -mindepth 3 -maxdepth 4 -type f -name '*.tsv' | sort) >"$work/files"
(cd "$mnt" && find benchmarks -mindepth 2 -maxdepth 3 -type d | sort) >"$work/dirs"
check "one sweep.tsv per gpu directory and one gpus.tsv per pass directory ($(wc -l <"$work/files") files)" \
	[ "$(sed 's|/[^/]*$||' "$work/files" | sort)" = "$(cat "$work/dirs")" ]
check "only those two names" bash -c "[ -z \"\$(grep -Ev '^benchmarks/[^/]+/[^/]+/(gpus.tsv|[^/]+/sweep.tsv)\$' '$work/files')\" ]"

# each file read by one process: st_size against the bytes read, a second read, the export's
# bytes, the mtime against its directory's (in the mount and the export)
python3 - "$mnt" "$export_dir" "$work/files" >"$work/per-file" <<'EOF'
import os, sys
mnt, exp = sys.argv[1:3]
bad = {"n": 0, "size": 0, "again": 0, "export": 0, "mtime": 0}
for rel in open(sys.argv[3]).read().split():
    bad["n"] += 1
    m, e = os.path.join(mnt, rel), os.path.join(exp, rel)
    data = open(m, "rb").read()
    bad["size"] += os.stat(m).st_size != len(data)
    bad["again"] += open(m, "rb").read() != data
    bad["export"] += open(e, "rb").read() != data
    ns = os.stat(m).st_mtime_ns
    bad["mtime"] += not (ns == os.stat(os.path.dirname(m)).st_mtime_ns == os.stat(e).st_mtime_ns)
print(" ".join(str(bad[k]) for k in ("n", "size", "again", "export", "mtime")))
EOF
read -r n_read bad_size bad_again bad_export bad_mtime <"$work/per-file"
check "stat's size is the bytes read, for every one of $n_read (${bad_size:-?} not)" \
	[ "$bad_size" = 0 -a "$n_read" = "$(wc -l <"$work/files")" ]
check "a second read gives the same bytes (${bad_again:-?} not)" [ "$bad_again" = 0 ]
check "kindex export wrote the same bytes (${bad_export:-?} not)" [ "$bad_export" = 0 ]
check "the mtime is its directory's, to the nanosecond, in the mount and the export (${bad_mtime:-?} not)" [ "$bad_mtime" = 0 ]
listing "$mnt/benchmarks" | grep -E ' \./[^/]+/[^/]+/(gpus\.tsv|[^/]+/sweep\.tsv)$' >"$work/mount.lst"
listing "$export_dir/benchmarks" | grep -E ' \./[^/]+/[^/]+/(gpus\.tsv|[^/]+/sweep\.tsv)$' >"$work/export.lst"
check "size, mtime, mode and links are the export's" cmp -s "$work/mount.lst" "$work/export.lst"

# by hand: the published FLCE forward A100 numbers (ranking.tsv's), a sweep over tokens
flce="$mnt/benchmarks/fused_linear_cross_entropy/forward/nvidia-a100-sxm4-80gb"
check "FLCE forward A100 sweep.tsv: its header" \
	[ "$(head -1 "$flce/sweep.tsv")" = "$(printf 'axis\tvalue\tfixed\tworkload\timpl\tmedian\tp20\tp80\tunit')" ]
order=$(awk -F'\t' '$1 == "tokens" { print $2 }' "$flce/sweep.tsv" | uniq | tr '\n' ' ')
check "a sweep over tokens in numeric order: $order" [ "$order" = "4096 8192 16384 32768 " ]
check "fixed: hidden=4096,vocab=128256 (and dtype=bf16), every row of it" \
	bash -c "[ \"\$(awk -F'\t' '\$1 == \"tokens\" { print \$3 }' '$flce/sweep.tsv' | sort -u)\" = 'dtype=bf16,hidden=4096,vocab=128256' ]"
row=$(awk -F'\t' '$1 == "tokens" && $2 == 16384 && $5 == "liger"' "$flce/sweep.tsv")
check "liger at 16384 tokens: 274073425 ns, in hidden4096-tokens16384-vocab128256-bf16 ($row)" \
	[ "$row" = "$(printf 'tokens\t16384\tdtype=bf16,hidden=4096,vocab=128256\thidden4096-tokens16384-vocab128256-bf16\tliger\t274073425\t274073425\t274073425\tns')" ]
check "the same median as the group's ranking.tsv" \
	grep -q "$(printf '\tliger\t274073425\tns\t')" "$flce/hidden4096-tokens16384-vocab128256-bf16/ranking.tsv"
# by hand: layer_norm forward on two GPUs, liger at m4096-n1024 (CSV: 0.030272 ms on the A100,
# 0.018848 ms on the H100)
ln="$mnt/benchmarks/layer_norm/forward/gpus.tsv"
check "layer_norm forward gpus.tsv: a column per GPU" \
	[ "$(head -1 "$ln")" = "$(printf 'workload\timpl\tunit\tnvidia-a100-sxm4-80gb\tnvidia-h100-80gb-hbm3')" ]
check "liger at m4096-n1024: 30272 ns on the A100, 18848 ns on the H100" \
	grep -qx "$(printf 'm4096-n1024-eps0.000001-fp32\tliger\tns\t30272\t18848')" "$ln"

# independently from the CSV: every gpu directory's sweep.tsv and every pass directory's gpus.tsv,
# on the mount; and of the history CSV (several runs per implementation: current runs only)
out=$(python3 "$views" "$LIGER_CSV" check "$mnt" sweep gpus 2>&1)
rc=$?
check "liger_views.py check of the mount: $(tail -1 <<<"$out")" [ $rc = 0 ]
[ $rc = 0 ] || head -20 <<<"$out" | sed 's/^/# /'
history="$KX_SOURCE_ROOT/examples/liger-history/all_benchmark_data.history.csv"
"$KINDEX" -q --store "$work/hstore" init && "$KINDEX" -q --store "$work/hstore" import liger "$history" ||
	die "cannot import the history CSV"
main_daemon=$daemon
mount_fg "$work/hstore" "$work/hmnt"
out=$(python3 "$views" "$history" check "$work/hmnt" sweep gpus 2>&1)
rc=$?
check "and of the history CSV, on a mount of its own: $(tail -1 <<<"$out")" [ $rc = 0 ]
[ $rc = 0 ] || head -20 <<<"$out" | sed 's/^/# /'
unmount "$work/hmnt" "$daemon" || fail "the history mount's daemon exits 0"
daemon=$main_daemon

# a drop: a new implementation of FLCE forward A100 at 8192 tokens
exec 3<"$flce/sweep.tsv"
before_sweep=$(cat "$flce/sweep.tsv")
before_gpus=$(cat "$flce/../gpus.tsv")
size_before=$(stat -c %s "$flce/sweep.tsv")
python3 - "$flce/hidden4096-tokens8192-vocab128256-bf16" "$work/drop.json" <<'EOF' || die "cannot make the manifest"
import glob, json, os, sys
sys.path.insert(0, os.path.join(os.environ["KX_SOURCE_ROOT"], "tests", "integration"))
import kxjcs
m = json.load(open(glob.glob(os.path.join(sys.argv[1], "[0-9]*-liger-*", "manifest.json"))[0]))
m["implementation"]["spec"] = {"name": "sweeptest", "version": "1.0"}
m["implementation"]["metadata"] = {"name": "sweeptest"}
spec = m["run"]["spec"]
spec["implementationDigest"] = kxjcs.digest(m["implementation"])
spec["sourceNative"]["externalId"] = spec["sourceNative"]["externalId"].replace("/liger/", "/sweeptest/")
spec["timing"]["latencyNs"]["median"] = 123456789
for x in spec["measurements"]:
    x["value"] = 123456789
spec["sourceNative"]["metrics"] = {"ms_20": 123.456789, "ms_50": 123.456789, "ms_80": 123.456789}
json.dump(m, open(sys.argv[2], "w"), indent=2)
EOF
cp "$work/drop.json" "$mnt/inbox/sweeptest.json" || fail "the drop is accepted (cp exits $?)"
check "the drop's receipt says accepted" grep -q '^accepted ' "$mnt/inbox/.accepted/sweeptest.json"
want=$(printf 'tokens\t8192\tdtype=bf16,hidden=4096,vocab=128256\thidden4096-tokens8192-vocab128256-bf16\tsweeptest\t123456789\t123456789\t123456789\tns')
check "sweep.tsv, read before, now has the new run's row" grep -qxF "$want" "$flce/sweep.tsv"
check "and nothing else of it changed" \
	bash -c "[ \"\$(grep -vxF '$want' '$flce/sweep.tsv')\" = \"\$1\" ]" - "$before_sweep"
check "gpus.tsv, read before, has its row" \
	grep -qx "$(printf 'hidden4096-tokens8192-vocab128256-bf16\tsweeptest\tns\t123456789')" "$flce/../gpus.tsv"
check "gpus.tsv otherwise unchanged" \
	bash -c "[ \"\$(grep -v sweeptest '$flce/../gpus.tsv')\" = \"\$1\" ]" - "$before_gpus"
check "the new sweep.tsv's size is its bytes'" [ "$(stat -c %s "$flce/sweep.tsv")" = "$(wc -c <"$flce/sweep.tsv")" ]
after_sweep=$(cat "$flce/sweep.tsv")
old=$(cat <&3)
exec 3<&-
check "a reader who had it open reads the old version whole ($size_before bytes)" \
	[ "$old" = "$before_sweep" -a "$(printf '%s\n' "$old" | wc -c)" = "$size_before" ]
unmount "$mnt" "$daemon" || fail "the daemon exits 0"
check "kindex cat from the store gives what the mount gave" \
	bash -c "[ \"\$('$KINDEX' --store '$store' cat benchmarks/fused_linear_cross_entropy/forward/nvidia-a100-sxm4-80gb/sweep.tsv)\" = \"\$1\" ]" - "$after_sweep"
finish
