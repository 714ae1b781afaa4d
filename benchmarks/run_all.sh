#!/usr/bin/env bash
# The full benchmark run: builds jitx_bench, makes a virtualenv with JAX (CPU) and matplotlib, runs the probes,
# jitx (jit and eager), Eigen and JAX in one go, and writes benchmarks/results/RESULTS.md plus PNG plots (and,
# in full mode, the README's performance section).
#   benchmarks/run_all.sh [--quick]
# Each workload runs in its own process under a time limit, so one failure or hang costs that workload only;
# calls predicted to exceed MAX_CALL_S seconds (default 2) are reported as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
mode="${1:-}"
max_call_s="${MAX_CALL_S:-2}"
limit_s="${WORKLOAD_TIMEOUT_S:-600}"
venv="${BENCH_VENV:-benchmarks/.venv}"  # BENCH_VENV: an existing virtualenv with jax and matplotlib
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q jax matplotlib
fi
"$venv/bin/python" -c "import jax; print('JAX', jax.__version__)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 --target jitx_bench
out=benchmarks/results
mkdir -p "$out"
: >"$out/jitx.jsonl"
: >"$out/jax.jsonl"
workloads="probe_peak probe_triad probe_gemm matmul mlp_block gelu_chain rows bandwidth_bar dispatch train_step scan_layers transformer_step cnn_step transformer_infer"
for w in $workloads; do
  echo "== jitx: $w" >&2
  timeout "$limit_s" ./build/benchmarks/jitx_bench $mode --only "$w" --max-call-s "$max_call_s" | tee -a "$out/jitx.jsonl" ||
    echo "jitx_bench --only $w failed (exit $?); continuing" >&2
done
for w in $workloads; do
  case "$w" in probe_* | bandwidth_bar) continue ;; esac
  echo "== JAX: $w" >&2
  timeout "$limit_s" "$venv/bin/python" benchmarks/jax_bench.py $mode --only "$w" --max-call-s "$max_call_s" |
    grep -v '"_meta"' | tee -a "$out/jax.jsonl" || echo "jax_bench.py --only $w failed (exit $?); continuing" >&2
done
"$venv/bin/python" -c "import jax, json; print(json.dumps(dict(workload='_meta', system='jax', note=f'jax {jax.__version__}, devices {jax.devices()}')))" >>"$out/jax.jsonl"
cat >"$out/run.json" <<JSON
{"command": "benchmarks/run_all.sh${mode:+ $mode}", "mode": "${mode:-full}", "date": "$(date -u +%Y-%m-%d)",
 "duration_s": $(($(date +%s) - start)), "max_call_s": $max_call_s}
JSON
# Compile time against persistent-cache load time (issue 18): its own table, next to RESULTS.md.
{ echo "# MLP block: compile time against persistent-cache load time"; echo
  echo "Command: \`benchmarks/cache_load.sh 9\` (from benchmarks/run_all.sh), $(date -u +%Y-%m-%d)."; echo
  benchmarks/cache_load.sh 9; } >"$out/CACHE_LOAD.md" || echo "cache_load.sh failed (exit $?); continuing" >&2
# A full run also refreshes the README's performance section (between its benchmarks:begin/end markers).
readme=()
[ -z "$mode" ] && readme=(--readme README.md)
"$venv/bin/python" benchmarks/report.py "$out" "${readme[@]}"
echo "benchmarks/run_all.sh${mode:+ $mode}: $(($(date +%s) - start)) s" >&2
