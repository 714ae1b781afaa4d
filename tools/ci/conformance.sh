#!/usr/bin/env bash
# CI step (issue 15): jitx against JAX on the jnp/lax/nn/linalg surface, `tools/conformance.py --ci` (every op on
# the edge-value set: float32 with all input sets, float64/float16/int32/bool with the edge values as a vector and
# as a matrix; eager and jit, cpu and interpreter), after the normal build into build/. Uses the virtualenv
# JITX_JAX_VENV names (jax 0.10.2), else creates a throw-away one with pip's jax (network needed). Builds the
# jitx_conformance driver if the build did not. Fails on any disagreement outside the documented tolerances.
# The full run: python3 tools/conformance.py (all 12 dtypes) or --quick (5 dtypes, all input sets).
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
cmake --build build -j"$(nproc)" --target jitx_conformance
venv_args=()
if [[ -n "${JITX_JAX_VENV:-}" ]]; then venv_args=(--venv "$JITX_JAX_VENV"); fi
python3 tools/conformance.py --build build --ci --max-rows 100 "${venv_args[@]}"
echo "conformance: $(($(date +%s) - start)) s"
