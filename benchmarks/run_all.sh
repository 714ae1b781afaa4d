#!/usr/bin/env bash
# The full benchmark run: builds jitx_bench, makes a virtualenv with JAX (CPU) and matplotlib, runs jitx,
# Eigen, the probes and JAX in one go, and writes benchmarks/results/RESULTS.md plus PNG plots.
#   benchmarks/run_all.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
venv=benchmarks/.venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q jax matplotlib
fi
"$venv/bin/python" -c "import jax; print('JAX', jax.__version__)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 --target jitx_bench
mkdir -p benchmarks/results
./build/benchmarks/jitx_bench $mode | tee benchmarks/results/jitx.jsonl
"$venv/bin/python" benchmarks/jax_bench.py $mode | tee benchmarks/results/jax.jsonl
"$venv/bin/python" benchmarks/report.py benchmarks/results
