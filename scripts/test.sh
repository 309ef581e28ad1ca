#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install, build and run every test of kindexfs: the unit, integration (real FUSE mounts) and fuzz
# (corpus replay) suites on a normal build, then the unit and fuzz suites, and the daemon's inbox
# and stress tests, again on an AddressSanitizer + UndefinedBehaviorSanitizer build.
# Ends with "N passed, N failed".
# Usage: scripts/test.sh [BUILD_DIR_PREFIX]   (default: build-test)
set -uo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-build-test}
scripts/deps.sh --test || { echo "test: installing dependencies failed" >&2; echo "0 passed, 1 failed"; exit 1; }
[[ -x /usr/local/cuda/bin/nvcc ]] && export PATH=/usr/local/cuda/bin:$PATH
jobs=$(nproc)
# The integration tests' scratch directories (${TMPDIR:-/tmp}) go in memory when /dev/shm is a
# tmpfs with room: they export, copy and remove a few hundred thousand small files, and on a disk
# mounted with `discard` every removal waits for the device — minutes, on a busy VM host.
if [[ -z ${TMPDIR:-} && $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]] &&
	(($(df -k --output=avail /dev/shm 2>/dev/null | tail -n 1) > 4 * 1024 * 1024)); then
	export TMPDIR=/dev/shm
fi

setup() { # dir, options...
	local dir=$1; shift
	if [[ -f $dir/build.ninja ]]; then meson setup --reconfigure "$dir" "$@" >/dev/null
	else meson setup "$dir" "$@" >/dev/null; fi
}

status=0
run_suites() { # dir, suites...
	local dir=$1; shift
	local args=()
	for s in "$@"; do args+=(--suite "$s"); done
	meson test -C "$dir" "${args[@]}" --print-errorlogs --num-processes "$jobs" || status=1
}

echo "== build ($prefix)"
if setup "$prefix" -Dbuildtype=debugoptimized && meson compile -C "$prefix"; then
	# the crash test with 5,000 files and 20 kills, the stress test for 40 s (their defaults,
	# 10,000 and 60 s, are for a run of their own): the whole command stays well under CI's 30 min
	KX_CRASH_FILES=5000 KX_STRESS_SECONDS=40 run_suites "$prefix" unit integration fuzz
else
	echo "test: build failed" >&2; status=1
fi
echo "== sanitizer build ($prefix-asan: address,undefined)"
if setup "$prefix-asan" -Dbuildtype=debug -Db_sanitize=address,undefined -Db_lundef=false -Dcuda=disabled \
	&& meson compile -C "$prefix-asan"; then
	# the daemon suite: the inbox tools, the 8-writer/8-reader stress (30 s) and the crash test
	# (1,000 files, 5 kills, then the recovery of a renamed file) against the sanitized daemon,
	# whose stderr the tests require empty — a report fails them; and the cli suite, every
	# `kindex` command and its error paths (a leak or undefined behaviour exits non-zero)
	KX_STRESS_SECONDS=30 KX_CRASH_FILES=1000 KX_CRASH_KILLS=5 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
		run_suites "$prefix-asan" unit fuzz daemon cli
else
	echo "test: sanitizer build failed" >&2; status=1
fi

python3 - "$prefix" "$prefix-asan" <<'PY'
import json, os, sys
passed = failed = skipped = 0
for d in sys.argv[1:]:
    log = os.path.join(d, "meson-logs", "testlog.json")
    if not os.path.exists(log):
        failed += 1
        continue
    for line in open(log):
        r = json.loads(line).get("result")
        if r in ("OK", "EXPECTEDFAIL"): passed += 1
        elif r == "SKIP": skipped += 1
        else: failed += 1
if skipped:
    print(f"({skipped} skipped)")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
summary=$?
exit $(( status || summary ))
