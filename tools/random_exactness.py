#!/usr/bin/env python3
"""Writes jax.random draws (JAX 0.10.2, x64, CPU) as bit patterns to a text file for the hidden Catch2 case
"random: bit-exact against a JAX reference file" (tests/random_exact_test.cpp), which counts mismatching draws.

  JAX_ENABLE_X64=1 /work/venv-jax/bin/python tools/random_exactness.py /tmp/random_refs.txt [--n 100000]
  JITX_RANDOM_REFS=/tmp/random_refs.txt ./build/tests/jitx_tests "[.random_exact_file]"
  JITX_PLATFORM=interpreter JITX_RANDOM_REFS=/tmp/random_refs.txt ./build/tests/jitx_tests "[.random_exact_file]"

One line per draw set: `dist dtype seed a b shape... : hex...` (a, b: minval/maxval or lower/upper as hex of
their float64 bits; shape as dims or `-` for a 0-d array; each value as the hex of its bits in its dtype).
"""
import argparse
import numpy as np
import jax
import jax.numpy as jnp
from jax import random

jax.config.update("jax_enable_x64", True)
p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--n", type=int, default=100000)
args = p.parse_args()

DT = {"float16": jnp.float16, "bfloat16": jnp.bfloat16, "float32": jnp.float32, "float64": jnp.float64}
UI = {"float16": np.uint16, "bfloat16": np.uint16, "float32": np.uint32, "float64": np.uint64}


def hexd(v):
    return np.float64(v).view(np.uint64).item().to_bytes(8, "big").hex()


lines = []
for seed in (0, 1, 42):
    key = random.PRNGKey(seed)
    for dt in DT:
        for shape in ((args.n,), (3, 7), ()):
            draws = [("normal", 0.0, 0.0, lambda: random.normal(key, shape, DT[dt])),
                     ("gumbel", 0.0, 0.0, lambda: random.gumbel(key, shape, DT[dt])),
                     ("uniform", 0.0, 1.0, lambda: random.uniform(key, shape, DT[dt])),
                     ("uniform", 2.0, 5.0, lambda: random.uniform(key, shape, DT[dt], 2.0, 5.0)),
                     ("uniform", -3.5, 0.1, lambda: random.uniform(key, shape, DT[dt], -3.5, 0.1)),
                     ("truncated_normal", -1.0, 2.0, lambda: random.truncated_normal(key, -1.0, 2.0, shape, DT[dt])),
                     ("truncated_normal", -4.0, -1.5,
                      lambda: random.truncated_normal(key, -4.0, -1.5, shape, DT[dt]))]
            for name, a, b, fn in draws:
                v = np.asarray(fn())
                bits = v.view(UI[dt]).reshape(-1)
                w = v.dtype.itemsize * 2
                sh = " ".join(str(s) for s in shape) if shape else "-"
                lines.append(f"{name} {dt} {seed} {hexd(a)} {hexd(b)} {sh} : "
                             + " ".join(format(int(x), f"0{w}x") for x in bits))
with open(args.out, "w") as f:
    f.write("\n".join(lines) + "\n")
print(f"wrote {len(lines)} draw sets to {args.out}")
