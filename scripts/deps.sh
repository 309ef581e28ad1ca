#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what kindexfs needs on Debian, idempotently: packages already present are not touched,
# and apt-get runs only when something is missing. Used by scripts/demo.sh and scripts/test.sh;
# `scripts/deps.sh --test` before bench/fuzz.
set -euo pipefail

pkgs=(gcc g++ meson ninja-build pkg-config libfuse3-dev fuse3 librocksdb-dev libssl-dev
      python3 rsync attr tar coreutils findutils procps)
# --test also: clang and libFuzzer, for the -Dfuzz=true build that bench/fuzz runs; fincore
[[ ${1:-} == --test ]] && pkgs+=(clang libclang-rt-14-dev util-linux-extra # util-linux-extra: fincore
	libxml2-utils librsvg2-bin tidy chromium-headless-shell wget python3-pandas python3-yaml) # the
# pictures parsed and drawn, the site checked and looked at in a browser (xmllint, rsvg-convert,
# tidy, chromium-headless-shell), crawled by bench/site (wget), every TSV view read as a data user
# reads it (python3-pandas: tests/integration/views-vocabulary.sh), and each CITATION.cff read as
# YAML (python3-yaml: tests/integration/cli-cite.sh)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
	sudo=""
	[[ $(id -u) -eq 0 ]] || sudo=sudo
	echo "deps: installing ${missing[*]}" >&2
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
