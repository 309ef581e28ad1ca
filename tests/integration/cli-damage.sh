#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# (being written: issue 42)
source "$(dirname "$0")/cli-lib.sh"
cd "$tmp"
finish
