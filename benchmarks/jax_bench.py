"""The JAX/XLA peer: the same workloads as jitx_bench.cpp, timed the same way (block_until_ready,
compile excluded and reported apart). Prints JSON lines like jitx_bench."""
import argparse
import json
import math
import time

import jax
import jax.numpy as jnp
import numpy as np


def measure(fn, min_time_s=0.3, min_reps=5, warmup=2):
    for _ in range(warmup):
        fn()
    t = []
    start = time.perf_counter()
    while len(t) < min_reps or time.perf_counter() - start < min_time_s:
        s = time.perf_counter()
        fn()
        t.append((time.perf_counter() - s) * 1e3)
        if len(t) > 100000:
            break
    t.sort()
    q = lambda f: t[min(len(t) - 1, int(f * len(t)))]
    return dict(median_ms=q(0.5), min_ms=t[0], p10_ms=q(0.1), p90_ms=q(0.9), reps=len(t))


def emit(workload, size, dtype, stats, bytes_=0, flops=0, compile_ms=-1, note=""):
    r = dict(workload=workload, size=size, dtype=dtype, system="jax", bytes=bytes_, flops=flops,
             compile_ms=compile_ms, note=note)
    r.update(stats)
    print(json.dumps(r), flush=True)


def block(x, w, b):
    h = jax.nn.gelu(x @ w + b)
    mu = h.mean(-1, keepdims=True)
    var = ((h - mu) ** 2).mean(-1, keepdims=True)
    return (h - mu) * jax.lax.rsqrt(var + 1e-5)


DT = {"f32": jnp.float32, "bf16": jnp.bfloat16}


def run(workload, size, dtype, f, args, bytes_, flops, min_time):
    t0 = time.perf_counter()
    compiled = jax.jit(f).lower(*args).compile()
    compile_ms = (time.perf_counter() - t0) * 1e3
    st = measure(lambda: compiled(*args).block_until_ready(), min_time)
    emit(workload, size, dtype, st, bytes_, flops, compile_ms)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    min_time = 0 if a.smoke else 0.3
    rng = np.random.default_rng(0)
    if a.smoke:
        mlp_sizes = [(8, 16, 16)]
        n_elem, rows = 256, (8, 32)
    elif a.quick:
        mlp_sizes = [(64, 128, 128)]
        n_elem, rows = 1 << 16, (64, 256)
    else:
        mlp_sizes = [(2048, 1024, 1024), (4096, 4096, 4096)]
        n_elem, rows = 1 << 24, (4096, 4096)
    for dn in (["f32"] if a.quick else ["f32", "bf16"]):
        dt = DT[dn]
        es = jnp.dtype(dt).itemsize
        for (m, k, n) in mlp_sizes:
            x = jnp.asarray(rng.standard_normal((m, k)), dt)
            w = jnp.asarray(rng.standard_normal((k, n)) / math.sqrt(k), dt)
            b = jnp.asarray(rng.standard_normal((n,)) * 0.1, dt)
            run("mlp_block", f"{m}x{k}x{n}", dn, block, (x, w, b), es * (m * k + k * n + n + m * n), 2.0 * m * n * k,
                min_time)
    x = jnp.asarray(rng.standard_normal((n_elem,)), jnp.float32)
    run("gelu_chain", str(n_elem), "f32", jax.nn.gelu, (x,), 8.0 * n_elem, 0, min_time)
    r, c = rows
    x = jnp.asarray(rng.standard_normal((r, c)), jnp.float32)
    size = f"{r}x{c}"
    run("softmax", size, "f32", lambda v: jax.nn.softmax(v, -1), (x,), 8.0 * r * c, 0, min_time)
    ln = lambda v: (v - v.mean(-1, keepdims=True)) * jax.lax.rsqrt(v.var(-1, keepdims=True) + 1e-5)
    run("layer_norm", size, "f32", ln, (x,), 8.0 * r * c, 0, min_time)
    run("column_sum", size, "f32", lambda v: v.sum(0), (x,), 4.0 * r * c + 4.0 * c, 0, min_time)
    # Dispatch overhead: a cached jitted call on three tiny arrays from Python.
    f = jax.jit(lambda p, q, s: p * q + s)
    t = [jnp.asarray([1.0, 2, 3]), jnp.asarray([4.0, 5, 6]), jnp.asarray([7.0, 8, 9])]
    f(*t).block_until_ready()
    emit("dispatch", "3x3", "f32", measure(lambda: f(*t).block_until_ready(), min_time, 100, 10), note="call + block_until_ready")
    emit("dispatch_enqueue", "3x3", "f32", measure(lambda: f(*t), min_time, 100, 10), note="enqueue only")
    print(json.dumps(dict(workload="_meta", system="jax", note=f"jax {jax.__version__}, devices {jax.devices()}")), flush=True)


if __name__ == "__main__":
    main()
