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
#   in_ms SECONDS     in milliseconds, to 0.1
#   progress TEXT...  on a terminal, one line on stderr ("# TEXT"), rewritten by the next;
#   progress_done     and cleared; nothing where stderr is not a terminal
#   drop_caches       sync, then the page cache, dentries and inodes dropped; fails where this user
#                     may not (not root, or root in a container that forbids it): try it once
#                     (`drop_caches 2>/dev/null`) to know whether a cold part can run
#   op_ls ROOT        `ls -lR ROOT`, and op_cat ROOT, `cat` of every ROOT/runs/*/manifest.json
#   op_cat ROOT       (xargs): two of the walks read, replica and scale time, defined once
#   libfuse_example NAME OUT LABEL
#                     libfuse's packaged example NAME.c (/usr/share/doc/libfuse3-dev/examples, never
#                     copied into this repository) compiled into OUT with `cc -O2` and pkg-config's
#                     flags for fuse3; where it cannot be, prints why ("# LABEL: skipped: …") and
#                     returns 1
#
# A bench sets, before it mounts: bench (its name, for messages: bench/read), kindexfs (the daemon),
# mnt (the mount point) and log (where the daemon's stderr goes). peak_kb starts at 0 and
# daemon_failed at 0 here.
#
# Sourced by read, replica, inbox, top, site, big-document, ingest, attest, artifacts and scale. The others
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

in_ms() { awk -v s="$1" 'BEGIN { printf "%.1f", s * 1000 }'; }

progress() { [ ! -t 2 ] || printf '\r\033[K# %s' "$*" >&2; }
progress_done() { [ ! -t 2 ] || printf '\r\033[K' >&2; }

drop_caches() { sync && echo 3 >/proc/sys/vm/drop_caches; }

op_ls() { ls -lR "$1" >/dev/null; }
op_cat() { (cd "$1/runs" && printf '%s\0' */manifest.json | xargs -0 cat >/dev/null); }

libfuse_example() {
	local src=/usr/share/doc/libfuse3-dev/examples/$1.c flags
	if [ ! -f "$src" ]; then
		echo "# $3: skipped: no $src (install libfuse3-dev)"
		return 1
	fi
	if ! flags=$(pkg-config --cflags --libs fuse3 2>/dev/null); then
		echo "# $3: skipped: pkg-config knows no fuse3"
		return 1
	fi
	read -r -a flags <<<"$flags"
	if ! cc -O2 -Wall -o "$2" "$src" "${flags[@]}" 2>"$2.log"; then
		echo "# $3: skipped: $src does not build:"
		sed 's/^/#   /' "$2.log"
		rm -f "$2.log"
		return 1
	fi
	rm -f "$2.log"
}
