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


if __name__ == "__main__":
    main()
