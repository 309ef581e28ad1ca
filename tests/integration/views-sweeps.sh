#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# sweep.tsv (every gpu directory) and gpus.tsv (every pass directory) of the bundled Liger import,
# on a mount (docs/views.md): each file's stat size is the bytes read, two reads give the same
# bytes, the export's files are the mount's, the mtime is its directory's; every value — medians,
# versions, dates and the `mixed` marks — is what tests/tools/liger_views.py computes from the CSV
# on its own (the newest CSV, and both CSVs imported together, whose implementations have several
# runs each: the 372 current runs only the history CSV has make gpus.tsv rows mixed, as many as the
# oracle counts); a known sweep checked by hand (FLCE forward on the A100, over tokens: 4096 < 8192
# < 16384 < 32768, not in byte order) and layer_norm forward across GPUs (liger 0.2.1 on the A100
# in 2024-09 against 0.6.0 on the H100 in 2025-07: mixed); and a run dropped into the inbox changes
# sweep.tsv and gpus.tsv for a reader who read them before, while a reader who has the old one open
# reads it whole.
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
check "FLCE forward A100 sweep.tsv: its header, the vocabulary's (docs/views.md)" \
	[ "$(head -1 "$flce/sweep.tsv")" = "$(printf 'axis\taxis_value\tfixed\tworkload\timplementation\tmedian\tp20\tp80\tunit\tversion\tobserved_at\tmixed')" ]
order=$(awk -F'\t' '$1 == "tokens" { print $2 }' "$flce/sweep.tsv" | uniq | tr '\n' ' ')
check "a sweep over tokens in numeric order: $order" [ "$order" = "4096 8192 16384 32768 " ]
check "fixed: hidden=4096,vocab=128256 (and dtype=bf16), every row of it" \
	bash -c "[ \"\$(awk -F'\t' '\$1 == \"tokens\" { print \$3 }' '$flce/sweep.tsv' | sort -u)\" = 'dtype=bf16,hidden=4096,vocab=128256' ]"
# CSV line 184: 274.07342529296875 ms, 2024-11-22 17:44:03, liger 0.4.2; the sweep's other liger
# runs are of the same version and day: not mixed
row=$(awk -F'\t' '$1 == "tokens" && $2 == 16384 && $5 == "liger"' "$flce/sweep.tsv")
check "liger at 16384 tokens: 274073425 ns, 0.4.2, 2024-11-22, in hidden4096-tokens16384-vocab128256-bf16 ($row)" \
	[ "$row" = "$(printf 'tokens\t16384\tdtype=bf16,hidden=4096,vocab=128256\thidden4096-tokens16384-vocab128256-bf16\tliger\t274073425\t274073425\t274073425\tns\t0.4.2\t2024-11-22T17:44:03.000Z\tno')" ]
check "the same median as the group's ranking.tsv" \
	grep -q "$(printf '\tliger\t274073425\tns\t')" "$flce/hidden4096-tokens16384-vocab128256-bf16/ranking.tsv"
# by hand: layer_norm forward on two GPUs, liger at m4096-n1024 (CSV line 254: 0.030272 ms on the
# A100, 2024-09-03 15:39:14, 0.2.1; line 1346: 0.018848 ms on the H100, 2025-07-17 18:18:11, 0.6.0)
ln="$mnt/benchmarks/layer_norm/forward/gpus.tsv"
check "layer_norm forward gpus.tsv: mixed, then median, version and observed_at of each GPU" \
	[ "$(head -1 "$ln")" = "$(printf 'workload\timplementation\tunit\tmixed\tmedian.nvidia-a100-sxm4-80gb\tmedian.nvidia-h100-80gb-hbm3\tversion.nvidia-a100-sxm4-80gb\tversion.nvidia-h100-80gb-hbm3\tobserved_at.nvidia-a100-sxm4-80gb\tobserved_at.nvidia-h100-80gb-hbm3')" ]
check "liger at m4096-n1024: 30272 ns (0.2.1, 2024-09) on the A100, 18848 ns (0.6.0, 2025-07) on the H100: mixed" \
	grep -qx "$(printf 'm4096-n1024-eps0.000001-fp32\tliger\tns\tyes\t30272\t18848\t0.2.1\t0.6.0\t2024-09-03T15:39:14.000Z\t2025-07-17T18:18:11.000Z')" "$ln"
check "workloads in numeric order: n1024 n2048 n4096 n8192 n16384" \
	[ "$(awk -F'\t' '$2 == "liger" { sub(/^m4096-/, "", $1); sub(/-eps.*/, "", $1); print $1 }' "$ln" | tr '\n' ' ')" = "n1024 n2048 n4096 n8192 n16384 " ]

# independently from the CSV: every gpu directory's sweep.tsv and every pass directory's gpus.tsv,
# on the mount; and of the history CSV (several runs per implementation: current runs only)
out=$(python3 "$views" "$LIGER_CSV" check "$mnt" sweep gpus 2>&1)
rc=$?
check "liger_views.py check of the mount: $(tail -1 <<<"$out")" [ $rc = 0 ]
[ $rc = 0 ] || head -20 <<<"$out" | sed 's/^/# /'
# mixed rows, counted over every file against the oracle's counts from the CSV alone
mixed_rows() { # MNT: gpus.tsv's mixed rows, sweep.tsv's
	(cd "$1/benchmarks" && find . -maxdepth 3 -name gpus.tsv -exec awk -F'\t' 'FNR > 1 && $4 == "yes"' {} + | wc -l &&
		find . -maxdepth 4 -name sweep.tsv -exec awk -F'\t' 'FNR > 1 && $12 == "yes"' {} + | wc -l) | paste -sd' '
}
python3 "$views" "$LIGER_CSV" mixed >"$work/newest.mixed" || die "liger_views.py mixed failed"
want=$(awk -F'\t' '$1 == "gpus_rows_mixed" { g = $2 } $1 == "sweep_rows_mixed" { s = $2 } END { print g, s }' "$work/newest.mixed")
check "gpus.tsv and sweep.tsv have as many mixed rows as the CSV's versions and dates make ($want)" \
	[ "$(mixed_rows "$mnt")" = "$want" ]
# both CSVs imported together: the history CSV's runs the newest CSV no longer has
"$KINDEX" -q --store "$work/hstore" init && "$KINDEX" -q --store "$work/hstore" import liger "$LIGER_CSV" "$HISTORY_CSV" >/dev/null ||
	die "cannot import both CSVs"
main_daemon=$daemon
mount_fg "$work/hstore" "$work/hmnt"
out=$(python3 "$views" "$LIGER_CSV" "$HISTORY_CSV" check "$work/hmnt" sweep gpus 2>&1)
rc=$?
check "and of both CSVs, on a mount of its own: $(tail -1 <<<"$out")" [ $rc = 0 ]
[ $rc = 0 ] || head -20 <<<"$out" | sed 's/^/# /'
python3 "$views" "$LIGER_CSV" "$HISTORY_CSV" mixed >"$work/both.mixed" || die "liger_views.py mixed failed"
stat_of() { awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$work/both.mixed"; }
check "the oracle finds the 372 current runs only the history CSV has ($(stat_of first_csv_lacks_current))" \
	[ "$(stat_of first_csv_lacks_current)" = 372 ]
want="$(stat_of gpus_rows_mixed) $(stat_of sweep_rows_mixed)"
check "gpus.tsv and sweep.tsv: mixed rows as the oracle counts them ($want; $(stat_of gpus_rows_mixed_with_first_csv_lacking) of gpus.tsv's hold such a run)" \
	[ "$(mixed_rows "$work/hmnt")" = "$want" -a "$(stat_of gpus_rows_mixed)" -gt "$(awk -F'\t' '$1 == "gpus_rows_mixed" { print $2 }' "$work/newest.mixed")" ]
ln="$work/hmnt/benchmarks/layer_norm/forward/gpus.tsv"
check "layer_norm forward: liger 0.3.1 on the A100 40GB (history only, 2024-11), 0.2.1 and 0.6.0 beside it: mixed" \
	grep -qx "$(printf 'm4096-n1024-eps0.000001-fp32\tliger\tns\tyes\t35840\t30272\t18848\t0.3.1\t0.2.1\t0.6.0\t2024-11-05T19:27:51.000Z\t2024-09-03T15:39:14.000Z\t2025-07-17T18:18:11.000Z')" "$ln"
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
when=$(awk -F'\t' '$1 == "tokens" && $2 == 8192 && $5 == "liger" { print $11 }' "$flce/sweep.tsv")
want=$(printf 'tokens\t8192\tdtype=bf16,hidden=4096,vocab=128256\thidden4096-tokens8192-vocab128256-bf16\tsweeptest\t123456789\t123456789\t123456789\tns\t1.0\t%s\tno' "$when")
check "sweep.tsv, read before, now has the new run's row" grep -qxF "$want" "$flce/sweep.tsv"
check "and nothing else of it changed" \
	bash -c "[ \"\$(grep -vxF '$want' '$flce/sweep.tsv')\" = \"\$1\" ]" - "$before_sweep"
check "gpus.tsv, read before, has its row: its median, version and date" \
	[ "$(awk -F'\t' '$2 == "sweeptest" { o = ""; for (i = 1; i <= NF; i++) if ($i != "") o = o (o == "" ? "" : " ") $i; print o }' \
	"$flce/../gpus.tsv")" = "hidden4096-tokens8192-vocab128256-bf16 sweeptest ns no 123456789 1.0 $when" ]
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
