#!/usr/bin/env bash
# Installs jitx's build dependencies from Debian 12's packages (skipped when already present).
set -euo pipefail
pkgs=(build-essential python3 python3-venv cmake ccache lld llvm-19-dev libeigen3-dev libfmt-dev catch2 libxxhash-dev
      libzstd-dev pkg-config libzip-dev nlohmann-json3-dev libcli11-dev
      libopenmpi-dev openmpi-bin  # multi-process runs (jitx::distributed, the MPI tests)
      clang-19 libclang-rt-19-dev)  # the last two: tools/sanitize.sh (sanitizers, libFuzzer)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
