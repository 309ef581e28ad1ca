# SPDX-License-Identifier: MIT
#
# bench/lib.sh — what the benches share (sourced, not run): mounting and unmounting a kindexfs
# daemon, timing a command, and the median and the ratio every figure is made of, each defined
# once so that two benches' figures mean the same thing.
#
#   mount_fs ARGS...  "$kindexfs" ARGS -f in the background, its pid in $pid, its stderr appended
#                     to $log; waits for $mnt to be a mount point, at most $mount_deadline seconds
#                     (default 30), and exits the bench if the daemon dies or the deadline passes
#   unmount           reads the daemon's peak resident set (VmHWM of /proc/$pid/status) into
#                     $peak_kb if it is the largest yet, then fusermount3 -u $mnt and waits for the
#                     daemon to exit; one that exits with a failure is reported with $log and sets
#                     daemon_failed=1; does nothing when nothing is mounted ($pid empty)
#   timed CMD...      the seconds CMD takes (bash's own clock, $EPOCHREALTIME: no date(1) forked
#                     inside the interval), to the microsecond; CMD's output is discarded and its
#                     exit status is not checked
#   median X...       the middle value; of an even count the mean of the two in the middle (the
#                     usual definition), to 0.001
#   ratio A B         A / B to 0.001 (0 when B is 0); a table prints it to the precision it wants
#
# A bench sets, before it mounts: bench (its name, for messages: bench/read), kindexfs (the daemon),
# mnt (the mount point) and log (where the daemon's stderr goes). peak_kb starts at 0 and
# daemon_failed at 0 here.
#
# Sourced by read, replica, inbox, top, site, big-document, ingest, attest and artifacts. The others
# need none of it: pictures times its runs inside one Python process, fuzz times libFuzzer runs
# whose exit status it keeps, gpu-check runs steps under timeout(1), and gen-manifests is Python.

pid=
peak_kb=0
daemon_failed=0

mount_fs() {
	"$kindexfs" "$@" -f 2>>"$log" &
	pid=$!
	local deadline=$((SECONDS + ${mount_deadline:-30}))
	until mountpoint -q "$mnt"; do
		kill -0 "$pid" 2>/dev/null || { echo "$bench: kindexfs exited:" >&2; cat "$log" >&2; exit 1; }
		[ $SECONDS -lt $deadline ] || { echo "$bench: mount timed out" >&2; exit 1; }
		sleep 0.05
	done
}

unmount() {
	[ -n "$pid" ] || return 0
	local kb
	# before fusermount3: the status file goes with the process
	kb=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
	[ "${kb:-0}" -le "$peak_kb" ] || peak_kb=$kb
	fusermount3 -u "$mnt" 2>/dev/null || true
	wait "$pid" || { echo "$bench: kindexfs exited with $?" >&2; cat "$log" >&2; daemon_failed=1; }
	pid=
}

timed() {
	local t0=$EPOCHREALTIME
	"$@" >/dev/null
	awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.6f", b - a }'
}

median() {
	printf '%s\n' "$@" | sort -g |
		awk '{ v[NR] = $1 } END { printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'
}
