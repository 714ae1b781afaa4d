"""The JAX peer of the CUDA backend's memory-bound benchmarks (tests/cuda_gpu_test.cpp, "[bench]"): GELU (tanh form),
softmax and layer norm over f32[4096,4096] (64 MiB) with jax.jit on the GPU, and a device copy, as GB/s of bytes read
plus written. Run by tools/gpu_check.sh on the GPU machine; prints a markdown table."""
import time

import jax
import jax.numpy as jnp


def bench(f, x, reps=20):
    f(x).block_until_ready()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f(x).block_until_ready()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2] * 1e3


def main():
    dev = jax.devices()[0]
    x = jax.random.normal(jax.random.PRNGKey(0), (4096, 4096), jnp.float32)
    x = jax.device_put(x, dev)
    nbytes = x.size * 4
    kernels = {
        "copy": jax.jit(lambda v: v + 0.0),
        "gelu": jax.jit(lambda v: jax.nn.gelu(v, approximate=True)),
        "softmax": jax.jit(lambda v: jax.nn.softmax(v, axis=-1)),
        "layer_norm": jax.jit(lambda v: (v - v.mean(-1, keepdims=True)) * jax.lax.rsqrt(v.var(-1, keepdims=True) + 1e-5)),
    }
    print(f"| jax {jax.__version__} on {dev.device_kind} | ms | GB/s |")
    for name, f in kernels.items():
        ms = bench(f, x)
        print(f"| jax {name} | {ms:.3f} | {2 * nbytes / ms / 1e6:.0f} |")
    # The MLP block in bf16 (tests/cuda_gpu_test.cpp's jit-level case) and dispatch on tiny arrays.
    m, k, n = 8192, 4096, 4096
    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    xb = jax.device_put(jax.random.normal(k1, (m, k), jnp.bfloat16), dev)
    wb = jax.device_put((jax.random.normal(k2, (k, n)) * 0.02).astype(jnp.bfloat16), dev)
    bb = jax.device_put(jnp.zeros((n,), jnp.bfloat16), dev)
    dot = jax.jit(lambda p, q: p @ q)
    block = jax.jit(lambda p, q, c: jax.nn.gelu(p @ q + c, approximate=True))
    dot_ms = bench(lambda v: dot(v, wb), xb, 10)
    block_ms = bench(lambda v: block(v, wb, bb), xb, 10)
    print(f"| jax dot bf16 8192x4096x4096 | {dot_ms:.3f} | {2 * m * n * k / dot_ms / 1e9:.0f} TFLOP/s |")
    print(f"| jax MLP block gelu(x @ w + b) bf16 | {block_ms:.3f} | |")
    t = jax.device_put(jnp.array([1.0, 2.0, 3.0], jnp.float32), dev)
    tiny = jax.jit(lambda p, q, r: p * q + r)
    round_ms = bench(lambda v: tiny(v, v, v), t, 200)
    tiny(t, t, t).block_until_ready()
    ts = []
    for _ in range(200):
        s = time.perf_counter()
        tiny(t, t, t)
        ts.append(time.perf_counter() - s)
    ts.sort()
    print(f"| jax dispatch: enqueue | {ts[len(ts) // 2] * 1e3:.4f} | |")
    print(f"| jax dispatch: round trip | {round_ms:.4f} | |")


if __name__ == "__main__":
    main()
