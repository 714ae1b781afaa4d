"""JAX's side of benchmarks/spmd_bench.sh: the data-parallel training step of spmd_bench.cpp on 1 and 2 host CPU
devices (XLA_FLAGS=--xla_force_host_platform_device_count=2), one JSON line per configuration."""
import argparse
import json
import os
import time

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402


def loss_fn(p, x, y):
    h = jnp.tanh(x @ p["w1"] + p["b1"])
    h = jnp.tanh(h @ p["w2"] + p["b2"])
    d = h @ p["w3"] + p["b3"] - y
    return jnp.mean(d * d)


def step(p, x, y):
    loss, g = jax.value_and_grad(loss_fn)(p, x, y)
    return jax.tree_util.tree_map(lambda w, dw: w - 0.01 * dw, p, g), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--min-time", type=float, default=1.0)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    n_in, n_out, hid = 256, 64, a.hidden
    p0 = {"w1": rng.standard_normal((n_in, hid), np.float32) * 0.05, "b1": np.zeros(hid, np.float32),
          "w2": rng.standard_normal((hid, hid), np.float32) * 0.05, "b2": np.zeros(hid, np.float32),
          "w3": rng.standard_normal((hid, n_out), np.float32) * 0.05, "b3": np.zeros(n_out, np.float32)}
    x = rng.standard_normal((a.batch, n_in), np.float32)
    y = np.sin(x @ (rng.standard_normal((n_in, n_out), np.float32) * 0.1)).astype(np.float32)
    for n in (1, 2):
        mesh = Mesh(np.array(jax.devices()[:n]), ("data",))
        rows, rep = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
        p = jax.device_put(p0, rep)
        xs, ys = jax.device_put(x, rows), jax.device_put(y, rows)
        f = jax.jit(step)
        t0 = time.perf_counter()
        f(p, xs, ys)[1].block_until_ready()
        compile_ms = (time.perf_counter() - t0) * 1e3
        times = []
        start = time.perf_counter()
        for _ in range(2):  # warm-up
            p, loss = f(p, xs, ys)
            loss.block_until_ready()
        while len(times) < 5 or time.perf_counter() - start < a.min_time:
            t = time.perf_counter()
            p, loss = f(p, xs, ys)
            loss.block_until_ready()
            times.append((time.perf_counter() - t) * 1e3)
        times.sort()
        q = lambda f_: times[min(len(times) - 1, int(f_ * len(times)))]  # noqa: E731
        print(json.dumps(dict(workload="train_step_dp", system="jax", devices=n, size=f"{a.batch}x{hid}",
                              median_ms=q(0.5), p10_ms=q(0.1), p90_ms=q(0.9), reps=len(times),
                              compile_ms=compile_ms, note=f"jax {jax.__version__}")), flush=True)


if __name__ == "__main__":
    main()
