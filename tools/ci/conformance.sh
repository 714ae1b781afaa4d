#!/usr/bin/env bash
# CI: jitx against JAX on the jnp/lax/nn surface (tools/conformance.py --quick), after the normal build into build/.
# Creates a throw-away virtualenv with pip's jax 0.10.2 (network needed) unless JITX_JAX_VENV names one.
# Builds the jitx_conformance driver if the build did not. Fails on any disagreement.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --build build -j"$(nproc)" --target jitx_conformance
venv_args=()
if [[ -n "${JITX_JAX_VENV:-}" ]]; then venv_args=(--venv "$JITX_JAX_VENV"); fi
python3 tools/conformance.py --build build --quick "${venv_args[@]}"
