#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# kindex export onto a file system that refuses links: past its limit of links to one file (ext4's
# 65,000, reached by a protocol shared by 32,500 runs) or with none at all. The limit is made small
# by tests/integration/link-limit.c (LD_PRELOAD): the export completes, every file has the bytes of
# an export without a limit, no file passes the limit, and the run directories' SHA256SUMS verify.
source "$(dirname "$0")/cli-lib.sh"
cd "$tmp"
shim=${KX_LINK_LIMIT:?KX_LINK_LIMIT must name the link-limit shim}
# a sanitized kindex wants its runtime first; the shim only wraps linkat
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

export KINDEX_STORE=$tmp/store
expect 0 "$KINDEX" -q init
expect 0 "$KINDEX" -q import liger "$csv"
expect 0 "$KINDEX" -q export plain
most=$(find plain -type f -printf '%n\n' | sort -n | tail -1)
check "without a limit, one document's file has many names ($most)" [ "$most" -gt 100 ]

KX_TEST_LINK_MAX=50 LD_PRELOAD=$shim "$KINDEX" -q export limited >out 2>err
check "with at most 50 links to a file, the export completes ($(head -c 300 err))" [ ! -s err ]
check "the same files with the same bytes as without the limit" diff -r plain limited
most=$(find limited -type f -printf '%n\n' | sort -n | tail -1)
check "no file has more than 50 names ($most)" [ "$most" -le 50 ]
check "a run directory's SHA256SUMS verifies" \
	bash -c "cd limited/runs/\$(ls limited/runs | head -1) && sha256sum --quiet -c SHA256SUMS"

KX_TEST_LINK_MAX=1 LD_PRELOAD=$shim "$KINDEX" -q export nolinks >out 2>err
check "on a file system with no links at all, the export completes ($(head -c 300 err))" [ ! -s err ]
check "every file written whole" [ -z "$(find nolinks -type f -links +1 | head -1)" ]
check "and the same bytes again" diff -r plain nolinks
finish
