#!/usr/bin/env bash
# The data-parallel training step on 1 and 2 CPU devices, jitx against JAX (2 host devices) in the same run, and
# the time jitx's partitions spend in collectives: writes benchmarks/results/SPMD_BENCH.md.
#   benchmarks/spmd_bench.sh            (BENCH_VENV: an existing virtualenv with jax; otherwise one is made)
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${BENCH_VENV:-benchmarks/.venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q jax matplotlib
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 --target spmd_bench >/dev/null
out=benchmarks/results/SPMD_BENCH.md
tmp=$(mktemp)
for size in "512 512" "2048 1024"; do
  set -- $size
  ./build/benchmarks/spmd_bench --batch "$1" --hidden "$2" >>"$tmp"
  "$venv/bin/python" benchmarks/spmd_jax_bench.py --batch "$1" --hidden "$2" >>"$tmp"
done
"$venv/bin/python" - "$tmp" "$out" <<'PY'
import json, sys, datetime
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
by = {(r["system"], r["size"], r["devices"], r.get("async", True)): r for r in rows}
lines = ["# Data-parallel training step on 1 and 2 CPU devices: jitx against JAX", "",
         f"Command: `benchmarks/spmd_bench.sh`, {datetime.date.today()}. An MLP (256 -> H -> H -> 64, tanh) trained by "
         "SGD on a global batch B split over a `data` mesh, parameters replicated; median step time with "
         "block_until_ready, compile time apart. JAX runs with 2 host devices "
         "(`--xla_force_host_platform_device_count=2`). This machine has 2 cores: one device already uses both "
         "for its matmuls, so 2 devices divide the batch, not the hardware. `collectives` is the time jitx's "
         "partitions spent in collectives per step (per partition, waits included; `jitx/profiler.h`); `exposed` "
         "the part of it the step waited for: with asynchronous collectives (`async` yes, the default) the time "
         "partitions waited at an all-reduce-done, the rest ran while the partition computed; without "
         "(`JITX_ASYNC_COLLECTIVES=0`) all of it.", "",
         "| B x H | devices | async | jitx ms | JAX ms | JAX/jitx | jitx compile ms | JAX compile ms "
         "| jitx collectives ms/step | exposed ms/step |",
         "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
for (sysname, size, n, asy), r in sorted(by.items(), key=lambda kv: (kv[0][1], kv[0][2], not kv[0][3])):
    if sysname != "jitx":
        continue
    j = by.get(("jax", size, n, True))
    jm = f"{j['median_ms']:.3f}" if j else "-"
    ratio = f"{j['median_ms'] / r['median_ms']:.2f}" if j else "-"
    jc = f"{j['compile_ms']:.0f}" if j else "-"
    coll = f"{r['collective_ms_per_step']:.3f} ({r['collectives_per_step']:.0f} calls)" if n > 1 else "-"
    exp = f"{r['exposed_ms_per_step']:.3f}" if n > 1 else "-"
    lines.append(f"| {size} | {n} | {'yes' if asy else 'no'} | {r['median_ms']:.3f} | {jm} | {ratio} "
                 f"| {r['compile_ms']:.0f} | {jc} | {coll} | {exp} |")
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
rm -f "$tmp"
